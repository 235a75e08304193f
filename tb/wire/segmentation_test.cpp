// SPDX-License-Identifier: Apache-2.0
// RFC 5041 5.2 segmentation at the Data Source, 4.3 MSN sequencing, 7.1 (tagged #5) TO wrap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <variant>
#include <vector>

#include "rnic/wire/ddp.hpp"
#include "rnic/wire/segmentation.hpp"
#include "test_util.hpp"

namespace rnic::wire {
namespace {

using test::Bytes;
using test::FailsWith;
using test::Succeeds;

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t k2Pow32 = std::uint64_t{1} << 32;

const TaggedHeader& tagged_of(const SegmentPlan& p) { return std::get<TaggedHeader>(p.header); }
const UntaggedHeader& untagged_of(const SegmentPlan& p) { return std::get<UntaggedHeader>(p.header); }

// ---------------------------------------------------------------------------------------------
// RFC 5041 5.2 worked examples.
// ---------------------------------------------------------------------------------------------

// "if the ULP Untagged Message was 2048 octets, and the MULPDU was 1500 octets, the Data Source
// would generate two DDP Segments, one with MO = 0, containing 1482 octets of ULP Payload, and a
// second with MO = 1482, containing 566 octets of ULP Payload."
TEST(Rfc5041Segmentation, Sec5_2_UntaggedExample2048At1500) {
  auto s = MessageSegmenter::untagged(/*qn=*/3, /*msn=*/9, /*rsvd_ulp=*/0x0102030405ull, 2048, 1500);
  ASSERT_TRUE(Succeeds(s));
  EXPECT_EQ(s->max_payload_per_segment(), 1482u);  // 1500 - 18
  EXPECT_EQ(s->message_length(), 2048u);
  ASSERT_EQ(s->segment_count(), 2u);

  const SegmentPlan a = s->segment(0);
  EXPECT_EQ(a.message_offset, 0u);
  EXPECT_EQ(a.payload_length, 1482u);
  EXPECT_EQ(untagged_of(a), (UntaggedHeader{false, 1, 0x0102030405ull, 3, 9, 0}));

  const SegmentPlan b = s->segment(1);
  EXPECT_EQ(b.message_offset, 1482u);
  EXPECT_EQ(b.payload_length, 566u);
  EXPECT_EQ(untagged_of(b), (UntaggedHeader{true, 1, 0x0102030405ull, 3, 9, 1482}));

  const Bytes msg(2048, 0x42);
  auto ea = encode_planned_segment(a, msg);
  auto eb = encode_planned_segment(b, msg);
  ASSERT_TRUE(Succeeds(ea));
  ASSERT_TRUE(Succeeds(eb));
  EXPECT_EQ(ea->size(), 1500u);
  EXPECT_EQ(eb->size(), 18u + 566u);
}

// "if the ULP Tagged Message was 2048 octets with an initial TO of 16384, and the MULPDU was 1500
// octets, the Data Source would generate two DDP Segments: one with TO = 16384, containing the
// first 1486 octets of ULP payload, and a second with TO = 17870, containing 562 octets"
TEST(Rfc5041Segmentation, Sec5_2_TaggedExample2048At1500To16384) {
  auto s = MessageSegmenter::tagged(/*stag=*/0xABCD0123u, /*initial_to=*/16384, /*rsvd_ulp=*/0x7E, 2048, 1500);
  ASSERT_TRUE(Succeeds(s));
  EXPECT_EQ(s->max_payload_per_segment(), 1486u);  // 1500 - 14
  ASSERT_EQ(s->segment_count(), 2u);

  const SegmentPlan a = s->segment(0);
  EXPECT_EQ(a.message_offset, 0u);
  EXPECT_EQ(a.payload_length, 1486u);
  EXPECT_EQ(tagged_of(a), (TaggedHeader{false, 1, 0x7E, 0xABCD0123u, 16384}));

  const SegmentPlan b = s->segment(1);
  EXPECT_EQ(b.message_offset, 1486u);
  EXPECT_EQ(b.payload_length, 562u);
  EXPECT_EQ(tagged_of(b), (TaggedHeader{true, 1, 0x7E, 0xABCD0123u, 17870}));

  const Bytes msg(2048, 0x24);
  auto ea = encode_planned_segment(a, msg);
  ASSERT_TRUE(Succeeds(ea));
  EXPECT_EQ(ea->size(), 1500u);
}

// ---------------------------------------------------------------------------------------------
// RFC 5041 5.2: zero-length messages, exact multiples, L only on the last, size <= MULPDU.
// ---------------------------------------------------------------------------------------------

// "A zero-length DDP Message is allowed and MUST consume exactly one DDP Segment."
TEST(Rfc5041Segmentation, Sec5_2_ZeroLengthUntaggedIsOneSegmentWithL) {
  auto s = MessageSegmenter::untagged(1, 1, 0, 0, 1500);
  ASSERT_TRUE(Succeeds(s));
  ASSERT_EQ(s->segment_count(), 1u);
  const SegmentPlan p = s->segment(0);
  EXPECT_EQ(p.payload_length, 0u);
  EXPECT_EQ(p.message_offset, 0u);
  EXPECT_TRUE(untagged_of(p).last);
  EXPECT_EQ(untagged_of(p).mo, 0u);
  EXPECT_EQ(s->all().size(), 1u);
  auto enc = encode_planned_segment(p, ConstBytes{});
  ASSERT_TRUE(Succeeds(enc));
  EXPECT_EQ(enc->size(), 18u);
}

TEST(Rfc5041Segmentation, Sec5_2_ZeroLengthTaggedIsOneSegmentWithL) {
  auto s = MessageSegmenter::tagged(5, 4096, 0, 0, 1500);
  ASSERT_TRUE(Succeeds(s));
  ASSERT_EQ(s->segment_count(), 1u);
  const SegmentPlan p = s->segment(0);
  EXPECT_EQ(p.payload_length, 0u);
  EXPECT_TRUE(tagged_of(p).last);
  EXPECT_EQ(tagged_of(p).to, 4096u);
  auto enc = encode_planned_segment(p, ConstBytes{});
  ASSERT_TRUE(Succeeds(enc));
  EXPECT_EQ(enc->size(), 14u);
}

// RFC 5041 5.2: "The STag and TO fields MUST NOT be checked for a zero-length Tagged DDP Message":
// a zero-length message at TO = 2^64-1 is no wrap.
TEST(Rfc5041Segmentation, Sec5_2_ZeroLengthTaggedAtMaxTo) {
  auto s = MessageSegmenter::tagged(0, kU64Max, 0, 0, 1500);
  ASSERT_TRUE(Succeeds(s));
  EXPECT_EQ(s->segment_count(), 1u);
  EXPECT_EQ(tagged_of(s->segment(0)).to, kU64Max);
}

// Exact multiples of the per-segment payload produce no empty trailing segment.
TEST(Rfc5041Segmentation, Sec5_2_ExactMultiplesHaveNoEmptyTrailingSegment) {
  for (std::uint64_t k : {1u, 2u, 3u, 7u}) {
    auto u = MessageSegmenter::untagged(0, 1, 0, 1482 * k, 1500);
    ASSERT_TRUE(Succeeds(u));
    EXPECT_EQ(u->segment_count(), k);
    const SegmentPlan last = u->segment(k - 1);
    EXPECT_EQ(last.payload_length, 1482u);
    EXPECT_TRUE(untagged_of(last).last);
    EXPECT_EQ(untagged_of(last).mo, 1482 * (k - 1));

    auto t = MessageSegmenter::tagged(0, 100, 0, 1486 * k, 1500);
    ASSERT_TRUE(Succeeds(t));
    EXPECT_EQ(t->segment_count(), k);
    EXPECT_EQ(t->segment(k - 1).payload_length, 1486u);
    EXPECT_TRUE(tagged_of(t->segment(k - 1)).last);
  }
  // One byte more needs one more segment carrying one byte.
  auto u = MessageSegmenter::untagged(0, 1, 0, 1482 * 2 + 1, 1500);
  ASSERT_TRUE(Succeeds(u));
  ASSERT_EQ(u->segment_count(), 3u);
  EXPECT_EQ(u->segment(2).payload_length, 1u);
  auto t = MessageSegmenter::tagged(0, 0, 0, 1486 - 1, 1500);
  ASSERT_TRUE(Succeeds(t));
  ASSERT_EQ(t->segment_count(), 1u);
  EXPECT_EQ(t->segment(0).payload_length, 1485u);
}

// RFC 5041 4.1 (L) + 5.2: L set on the last segment only; every segment no larger than MULPDU.
TEST(Rfc5041Segmentation, Sec5_2_LOnlyOnLastAndSizeWithinMulpdu) {
  const Bytes msg(10000, 0x11);
  for (std::size_t mulpdu :
       {std::size_t{19}, std::size_t{64}, std::size_t{576}, std::size_t{1500}, std::size_t{9000}, std::size_t{20000}}) {
    for (bool is_tagged_msg : {false, true}) {
      auto s = is_tagged_msg ? MessageSegmenter::tagged(1, 0, 0, msg.size(), mulpdu)
                             : MessageSegmenter::untagged(1, 1, 0, msg.size(), mulpdu);
      ASSERT_TRUE(Succeeds(s)) << mulpdu;
      const auto plans = s->all();
      ASSERT_EQ(plans.size(), s->segment_count());
      for (std::size_t i = 0; i < plans.size(); ++i) {
        EXPECT_EQ(is_last(plans[i].header), i + 1 == plans.size()) << "MULPDU " << mulpdu << " seg " << i;
        auto enc = encode_planned_segment(plans[i], msg);
        ASSERT_TRUE(Succeeds(enc));
        EXPECT_LE(enc->size(), mulpdu) << "MULPDU " << mulpdu << " seg " << i;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// MULPDU limits: header + 1 is the smallest usable MULPDU.
// ---------------------------------------------------------------------------------------------

TEST(Rfc5041Segmentation, Sec5_2_MulpduHeaderPlusOneCarriesOneBytePerSegment) {
  auto u = MessageSegmenter::untagged(2, 3, 0, 5, 18 + 1);
  ASSERT_TRUE(Succeeds(u));
  EXPECT_EQ(u->max_payload_per_segment(), 1u);
  ASSERT_EQ(u->segment_count(), 5u);
  for (std::uint32_t i = 0; i < 5; ++i) {
    const SegmentPlan p = u->segment(i);
    EXPECT_EQ(p.payload_length, 1u);
    EXPECT_EQ(p.message_offset, i);
    EXPECT_EQ(untagged_of(p).mo, i);
    EXPECT_EQ(untagged_of(p).last, i == 4);
  }
  auto t = MessageSegmenter::tagged(2, 1000, 0, 5, 14 + 1);
  ASSERT_TRUE(Succeeds(t));
  EXPECT_EQ(t->max_payload_per_segment(), 1u);
  ASSERT_EQ(t->segment_count(), 5u);
  for (std::uint32_t i = 0; i < 5; ++i) {
    const SegmentPlan p = t->segment(i);
    EXPECT_EQ(p.payload_length, 1u);
    EXPECT_EQ(tagged_of(p).to, 1000u + i);
    EXPECT_EQ(tagged_of(p).last, i == 4);
  }
}

TEST(Rfc5041Segmentation, Sec5_2_MulpduNotAboveHeaderRefused) {
  for (std::size_t m : {std::size_t{0}, std::size_t{1}, std::size_t{13}, std::size_t{14}}) {
    EXPECT_TRUE(FailsWith(MessageSegmenter::tagged(0, 0, 0, 10, m), Errc::kMulpduTooSmall)) << m;
    EXPECT_TRUE(FailsWith(MessageSegmenter::tagged(0, 0, 0, 0, m), Errc::kMulpduTooSmall)) << m;
  }
  for (std::size_t m : {std::size_t{0}, std::size_t{14}, std::size_t{17}, std::size_t{18}}) {
    EXPECT_TRUE(FailsWith(MessageSegmenter::untagged(0, 1, 0, 10, m), Errc::kMulpduTooSmall)) << m;
    EXPECT_TRUE(FailsWith(MessageSegmenter::untagged(0, 1, 0, 0, m), Errc::kMulpduTooSmall)) << m;
  }
  EXPECT_TRUE(Succeeds(MessageSegmenter::tagged(0, 0, 0, 10, 15)));
  EXPECT_TRUE(Succeeds(MessageSegmenter::untagged(0, 1, 0, 10, 19)));
}

// A MULPDU larger than any message still works (per-segment payload fits 32 bits).
TEST(Rfc5041Segmentation, Sec5_2_HugeMulpdu) {
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  auto u = MessageSegmenter::untagged(0, 1, 0, 0xFFFFFFFFull, huge);
  ASSERT_TRUE(Succeeds(u));
  EXPECT_EQ(u->segment_count(), 1u);
  EXPECT_EQ(u->segment(0).payload_length, 0xFFFFFFFFu);
  auto t = MessageSegmenter::tagged(0, 0, 0, 0xFFFFFFFFull, huge);
  ASSERT_TRUE(Succeeds(t));
  EXPECT_EQ(t->segment_count(), 1u);
}

// ---------------------------------------------------------------------------------------------
// RFC 5041 5.2: "The ULP Message Length MUST be less than 2^32."
// ---------------------------------------------------------------------------------------------

TEST(Rfc5041Segmentation, Sec5_2_MessageOf2Pow32Refused) {
  EXPECT_EQ(kMaxUlpMessageLength, 0xFFFFFFFFull);
  for (std::uint64_t len : {k2Pow32, k2Pow32 + 1, kU64Max}) {
    EXPECT_TRUE(FailsWith(MessageSegmenter::untagged(0, 1, 0, len, 1500), Errc::kMessageTooLong)) << len;
    EXPECT_TRUE(FailsWith(MessageSegmenter::tagged(0, 0, 0, len, 1500), Errc::kMessageTooLong)) << len;
  }
}

// 2^32-1 is accepted; segment_count/segment(last) are computed without materialising the plan.
TEST(Rfc5041Segmentation, Sec5_2_MessageOf2Pow32Minus1UntaggedAccepted) {
  const std::uint64_t len = k2Pow32 - 1;
  auto s = MessageSegmenter::untagged(4, 77, 0, len, 1500);
  ASSERT_TRUE(Succeeds(s));
  const std::uint64_t count = (len + 1481) / 1482;
  ASSERT_EQ(s->segment_count(), count);
  const SegmentPlan last = s->segment(count - 1);
  EXPECT_EQ(last.message_offset, (count - 1) * 1482);
  EXPECT_EQ(last.payload_length, len - (count - 1) * 1482);
  EXPECT_EQ(untagged_of(last).mo, (count - 1) * 1482);
  EXPECT_TRUE(untagged_of(last).last);
  EXPECT_EQ(untagged_of(last).msn, 77u);
  EXPECT_EQ(untagged_of(last).qn, 4u);
  const SegmentPlan prev = s->segment(count - 2);
  EXPECT_EQ(prev.payload_length, 1482u);
  EXPECT_FALSE(untagged_of(prev).last);

  // One byte per segment: 2^32-1 segments, the last at MO 2^32-2.
  auto tiny = MessageSegmenter::untagged(4, 77, 0, len, 19);
  ASSERT_TRUE(Succeeds(tiny));
  ASSERT_EQ(tiny->segment_count(), len);
  const SegmentPlan tl = tiny->segment(len - 1);
  EXPECT_EQ(untagged_of(tl).mo, 0xFFFFFFFEu);
  EXPECT_EQ(tl.payload_length, 1u);
  EXPECT_TRUE(untagged_of(tl).last);
}

TEST(Rfc5041Segmentation, Sec5_2_MessageOf2Pow32Minus1TaggedAccepted) {
  const std::uint64_t len = k2Pow32 - 1;
  const std::uint64_t to = 0x100000000000ull;
  auto s = MessageSegmenter::tagged(9, to, 0, len, 15);
  ASSERT_TRUE(Succeeds(s));
  ASSERT_EQ(s->segment_count(), len);
  const SegmentPlan last = s->segment(len - 1);
  EXPECT_EQ(tagged_of(last).to, to + len - 1);
  EXPECT_EQ(last.payload_length, 1u);
  EXPECT_TRUE(tagged_of(last).last);
}

// ---------------------------------------------------------------------------------------------
// RFC 5041 7.1 (tagged check 5): TO + length must not wrap 64 bits; the source never produces it.
// ---------------------------------------------------------------------------------------------

TEST(Rfc5041Segmentation, Sec7_1_TaggedOffsetWrapEdge) {
  for (std::uint64_t len : {std::uint64_t{1}, std::uint64_t{2048}, k2Pow32 - 1}) {
    SCOPED_TRACE(::testing::Message() << "length " << len);
    EXPECT_TRUE(FailsWith(MessageSegmenter::tagged(0, kU64Max - len + 1, 0, len, 1500), Errc::kTaggedOffsetWrap));
    EXPECT_TRUE(FailsWith(MessageSegmenter::tagged(0, kU64Max, 0, len, 1500), Errc::kTaggedOffsetWrap));
    auto ok = MessageSegmenter::tagged(0, kU64Max - len, 0, len, 1500);
    ASSERT_TRUE(Succeeds(ok));
    const SegmentPlan last = ok->segment(ok->segment_count() - 1);
    EXPECT_EQ(tagged_of(last).to + last.payload_length, kU64Max) << "last byte at TO 2^64-2";
  }
}

// ---------------------------------------------------------------------------------------------
// Random access API.
// ---------------------------------------------------------------------------------------------

TEST(Rfc5041Segmentation, SegmentIndexOutOfRangeThrows) {
  auto s = MessageSegmenter::untagged(0, 1, 0, 2048, 1500);
  ASSERT_TRUE(Succeeds(s));
  EXPECT_NO_THROW((void)s->segment(1));
  EXPECT_THROW((void)s->segment(2), std::out_of_range);
  EXPECT_THROW((void)s->segment(kU64Max), std::out_of_range);
  auto z = MessageSegmenter::tagged(0, 0, 0, 0, 1500);
  ASSERT_TRUE(Succeeds(z));
  EXPECT_THROW((void)z->segment(1), std::out_of_range);
}

TEST(Rfc5041Segmentation, AllMatchesSegment) {
  auto s = MessageSegmenter::tagged(0x55, 7, 1, 5000, 100);
  ASSERT_TRUE(Succeeds(s));
  const auto plans = s->all();
  ASSERT_EQ(plans.size(), s->segment_count());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const SegmentPlan p = s->segment(i);
    EXPECT_EQ(plans[i].header, p.header);
    EXPECT_EQ(plans[i].message_offset, p.message_offset);
    EXPECT_EQ(plans[i].payload_length, p.payload_length);
  }
}

// RFC 5041 5.2: reassembly by MO / TO reproduces the message, whatever order segments are encoded
// and decoded in.
class Rfc5041Reassembly : public test::SeededTest {};

TEST_F(Rfc5041Reassembly, Sec5_2_EncodePlannedSegmentsReassembleInRandomOrder) {
  SCOPED_TRACE(seed_trace());
  std::mt19937_64& rng = engine();
  const Bytes msg = test::random_bytes(rng, 10007);
  for (bool tagged_msg : {false, true}) {
    SCOPED_TRACE(tagged_msg ? "tagged" : "untagged");
    const std::uint64_t to0 = 0xFFFF000000000000ull;
    auto s = tagged_msg ? MessageSegmenter::tagged(0xBEEF, to0, 0x33, msg.size(), 1000)
                        : MessageSegmenter::untagged(6, 42, 0x33, msg.size(), 1000);
    ASSERT_TRUE(Succeeds(s));
    std::vector<std::uint64_t> order(s->segment_count());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);

    Bytes out(msg.size(), 0);
    std::vector<int> covered(msg.size(), 0);
    int lasts = 0;
    for (std::uint64_t i : order) {
      const SegmentPlan p = s->segment(i);
      auto wire = encode_planned_segment(p, msg);
      ASSERT_TRUE(Succeeds(wire));
      ASSERT_LE(wire->size(), 1000u);
      auto dec = decode_segment(*wire);
      ASSERT_TRUE(Succeeds(dec));
      EXPECT_EQ(dec->header, p.header);
      std::uint64_t off = 0;
      if (tagged_msg) {
        const auto& h = std::get<TaggedHeader>(dec->header);
        EXPECT_EQ(h.stag, 0xBEEFu);
        EXPECT_EQ(h.rsvd_ulp, 0x33u);
        off = h.to - to0;
      } else {
        const auto& h = std::get<UntaggedHeader>(dec->header);
        EXPECT_EQ(h.qn, 6u);
        EXPECT_EQ(h.msn, 42u);
        off = h.mo;
      }
      lasts += is_last(dec->header) ? 1 : 0;
      ASSERT_LE(off + dec->payload.size, out.size());
      for (std::size_t k = 0; k < dec->payload.size; ++k) {
        out[static_cast<std::size_t>(off) + k] = dec->payload.data[k];
        ++covered[static_cast<std::size_t>(off) + k];
      }
    }
    EXPECT_EQ(lasts, 1);
    EXPECT_EQ(out, msg);
    EXPECT_TRUE(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; }))
        << "every byte carried exactly once";
  }
}

TEST(Rfc5041Segmentation, EncodePlannedSegmentShortBufferTruncated) {
  const Bytes msg(2048, 0x5C);
  auto s = MessageSegmenter::untagged(0, 1, 0, msg.size(), 1500);
  ASSERT_TRUE(Succeeds(s));
  const Bytes short_msg(msg.begin(), msg.end() - 1);
  EXPECT_TRUE(Succeeds(encode_planned_segment(s->segment(0), short_msg)));
  EXPECT_TRUE(FailsWith(encode_planned_segment(s->segment(1), short_msg), Errc::kTruncated));
  EXPECT_TRUE(FailsWith(encode_planned_segment(s->segment(1), Bytes(1482)), Errc::kTruncated));
  EXPECT_TRUE(FailsWith(encode_planned_segment(s->segment(0), ConstBytes{}), Errc::kTruncated));
  // A plan whose offset lies past the end of the buffer.
  SegmentPlan p = s->segment(1);
  p.message_offset = kU64Max;
  p.payload_length = 1;
  EXPECT_TRUE(FailsWith(encode_planned_segment(p, msg), Errc::kTruncated));
  p.message_offset = msg.size();
  p.payload_length = 0;
  EXPECT_TRUE(Succeeds(encode_planned_segment(p, msg)));
}

// RsvdULP over 40 bits is refused by the untagged segmenter (4.3).
TEST(Rfc5041Segmentation, Sec4_3_UntaggedRsvdUlpAbove40BitsRefused) {
  EXPECT_TRUE(FailsWith(MessageSegmenter::untagged(0, 1, std::uint64_t{1} << 40, 10, 1500), Errc::kFieldOutOfRange));
  EXPECT_TRUE(Succeeds(MessageSegmenter::untagged(0, 1, kUntaggedRsvdUlpMax, 10, 1500)));
}

// ---------------------------------------------------------------------------------------------
// RFC 5041 4.3 MSN at the Data Source.
// ---------------------------------------------------------------------------------------------

std::uint32_t msn_of(const MessageSegmenter& s) { return untagged_of(s.segment(0)).msn; }

// "The initial value for MSN MUST be one." per QN, "increased by one ... with each DDP Message
// targeting the specific Queue Number".
TEST(Rfc5041DataSource, Sec4_3_MsnStartsAtOnePerQnAndIncrements) {
  DataSource src(1500);
  EXPECT_EQ(src.mulpdu(), 1500u);
  EXPECT_EQ(kInitialMsn, 1u);
  EXPECT_EQ(src.next_msn(0), 1u);
  EXPECT_EQ(src.next_msn(0xFFFFFFFFu), 1u);

  for (std::uint32_t i = 0; i < 100; ++i) {
    auto m = src.send_untagged(0, 0, 100);
    ASSERT_TRUE(Succeeds(m));
    EXPECT_EQ(msn_of(*m), 1u + i);
    EXPECT_EQ(src.next_msn(0), 2u + i);
  }
  // Another QN is independent and starts at 1.
  auto q5 = src.send_untagged(5, 0, 0);
  ASSERT_TRUE(Succeeds(q5));
  EXPECT_EQ(msn_of(*q5), 1u);
  EXPECT_EQ(untagged_of(q5->segment(0)).qn, 5u);
  EXPECT_EQ(src.next_msn(5), 2u);
  EXPECT_EQ(src.next_msn(0), 101u);
  auto q0 = src.send_untagged(0, 0, 0);
  ASSERT_TRUE(Succeeds(q0));
  EXPECT_EQ(msn_of(*q0), 101u);
  EXPECT_EQ(src.next_msn(5), 2u);
  EXPECT_EQ(src.next_msn(1), 1u);
}

// Every segment of one message carries the same QN, MSN and RsvdULP (4.3).
TEST(Rfc5041DataSource, Sec4_3_AllSegmentsOfAMessageShareMsn) {
  DataSource src(100);
  (void)src.send_untagged(2, 0, 1);
  auto m = src.send_untagged(2, 0xABCDEFull, 1000);
  ASSERT_TRUE(Succeeds(m));
  ASSERT_GT(m->segment_count(), 1u);
  for (std::uint64_t i = 0; i < m->segment_count(); ++i) {
    const UntaggedHeader h = untagged_of(m->segment(i));
    EXPECT_EQ(h.msn, 2u);
    EXPECT_EQ(h.qn, 2u);
    EXPECT_EQ(h.rsvd_ulp, 0xABCDEFull);
  }
  EXPECT_EQ(src.next_msn(2), 3u);
}

// "The MSN value MUST wrap to 0 after a value of 0xFFFFFFFF."
TEST(Rfc5041DataSource, Sec4_3_MsnWrapsToZero) {
  DataSource src(1500);
  src.set_next_msn(3, 0xFFFFFFFEu);
  auto a = src.send_untagged(3, 0, 10);
  ASSERT_TRUE(Succeeds(a));
  EXPECT_EQ(msn_of(*a), 0xFFFFFFFEu);
  auto b = src.send_untagged(3, 0, 10);
  ASSERT_TRUE(Succeeds(b));
  EXPECT_EQ(msn_of(*b), 0xFFFFFFFFu);
  EXPECT_EQ(src.next_msn(3), 0u);
  auto c = src.send_untagged(3, 0, 10);
  ASSERT_TRUE(Succeeds(c));
  EXPECT_EQ(msn_of(*c), 0u);
  auto d = src.send_untagged(3, 0, 10);
  ASSERT_TRUE(Succeeds(d));
  EXPECT_EQ(msn_of(*d), 1u);
  EXPECT_EQ(src.next_msn(4), 1u) << "set_next_msn on QN 3 must not affect QN 4";
}

// A refused message consumes no MSN.
TEST(Rfc5041DataSource, Sec4_3_RefusedMessageConsumesNoMsn) {
  DataSource src(1500);
  auto a = src.send_untagged(1, 0, 10);
  ASSERT_TRUE(Succeeds(a));
  EXPECT_EQ(msn_of(*a), 1u);
  EXPECT_TRUE(FailsWith(src.send_untagged(1, 0, k2Pow32), Errc::kMessageTooLong));
  EXPECT_EQ(src.next_msn(1), 2u);
  EXPECT_TRUE(FailsWith(src.send_untagged(1, std::uint64_t{1} << 40, 10), Errc::kFieldOutOfRange));
  EXPECT_EQ(src.next_msn(1), 2u);
  // Refused on a never-used QN: it still starts at 1 afterwards.
  EXPECT_TRUE(FailsWith(src.send_untagged(9, 0, kU64Max), Errc::kMessageTooLong));
  EXPECT_EQ(src.next_msn(9), 1u);
  auto b = src.send_untagged(1, 0, 10);
  ASSERT_TRUE(Succeeds(b));
  EXPECT_EQ(msn_of(*b), 2u);

  DataSource tiny(18);  // MULPDU too small for an untagged header + 1 byte
  EXPECT_TRUE(FailsWith(tiny.send_untagged(0, 0, 1), Errc::kMulpduTooSmall));
  EXPECT_EQ(tiny.next_msn(0), 1u);
}

// Tagged messages use no MSN and follow the stream's MULPDU.
TEST(Rfc5041DataSource, Sec5_2_TaggedUsesStreamMulpduAndNoMsn) {
  DataSource src(1500);
  auto t = src.send_tagged(0x1234, 16384, 0, 2048);
  ASSERT_TRUE(Succeeds(t));
  ASSERT_EQ(t->segment_count(), 2u);
  EXPECT_EQ(tagged_of(t->segment(1)).to, 17870u);
  EXPECT_EQ(src.next_msn(0), 1u);
  EXPECT_TRUE(FailsWith(src.send_tagged(0, kU64Max, 0, 1), Errc::kTaggedOffsetWrap));
  EXPECT_TRUE(FailsWith(DataSource(14).send_tagged(0, 0, 0, 1), Errc::kMulpduTooSmall));
}

}  // namespace
}  // namespace rnic::wire
