// SPDX-License-Identifier: Apache-2.0
// Full-length descriptor chunks (rnic/wire/gather.hpp, docs/transmit.md): the user data the Data Source
// hands usrsctp (RFC 5043 5.2.2, RFC 5041 4.2 / 4.3, hw.def NGD) and the output callback's rewrite of a
// usrsctp packet into its transmit-slot form (RFC 9260 3.2 chunk walk, 3.3.1 DATA flags), against
// hand-built packets, hostile ones and seeded random ones. The cross-check with the card's reference
// model (the slot expanded back into the packet with its payload copied) is tb/net tx_gather_host_test.cpp.
//
// Seeded tests print RNIC_TEST_SEED; reproduce with
//   RNIC_TEST_SEED=<seed> build/default/tb/wire/wire_unit_tests --gtest_filter='RandomGather*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/gather.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "rnic/wire/segmentation.hpp"
#include "test_util.hpp"

namespace rnic::wire {
namespace {

using test::Bytes;

constexpr std::uint32_t kLocalStag = 0x105, kOtherStag = 0x203;
constexpr std::uint64_t kLocalTo = 0x1'0000'0000;
constexpr std::uint8_t kSack = 3, kHeartbeat = 4, kPad = 0x84;  // RFC 9260 3.3.4, 3.3.5; RFC 4820

::testing::AssertionResult FailsWith(const Result<GatherSlot>& r, Errc want) {
  if (r.ok()) return ::testing::AssertionFailure() << "expected " << errc_name(want) << ", got a value";
  if (r.error().code != want) {
    return ::testing::AssertionFailure() << "expected " << errc_name(want) << ", got " << r.error().message();
  }
  return ::testing::AssertionSuccess() << r.error().message();
}
::testing::AssertionResult Succeeds(const Result<GatherSlot>& r) {
  if (r.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "unexpected error: " << r.error().message();
}

std::size_t pad4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

Bytes common_header() {
  Bytes h;
  put_be16(h, 5002);
  put_be16(h, 5001);
  put_be32(h, 0x0BADCAFE);
  put_be32(h, 0xDEADBEEF);  // the CRC32c field: the card fills it in
  return h;
}

// A DATA chunk (RFC 9260 3.3.1) carrying `user`, padded to 4 unless told.
Bytes data_chunk(const Bytes& user, std::uint32_t tsn, std::uint16_t stream = 1, std::uint32_t ppid = kPpidDdpSegment,
                 std::uint8_t flags = kSctpDataFlagsUbe, bool pad = true) {
  Bytes c{kSctpChunkData, flags};
  put_be16(c, static_cast<std::uint16_t>(kSctpDataHeaderBytes + user.size()));
  put_be32(c, tsn);
  put_be16(c, stream);
  put_be16(c, static_cast<std::uint16_t>(tsn * 3));  // stream sequence number: anything (U = 1)
  put_be32(c, ppid);
  c.insert(c.end(), user.begin(), user.end());
  if (pad) c.resize(pad4(c.size()), 0);
  return c;
}

// Another chunk: type, flags and `body` pattern bytes, padded.
Bytes plain_chunk(std::uint8_t type, std::size_t body, std::uint8_t flags = 0) {
  Bytes c{type, flags};
  put_be16(c, static_cast<std::uint16_t>(kSctpChunkHeaderBytes + body));
  for (std::size_t i = 0; i < body; ++i) c.push_back(static_cast<std::uint8_t>(0x30 + i));
  c.resize(pad4(c.size()), 0);
  return c;
}

Bytes packet(std::initializer_list<Bytes> chunks) {
  Bytes p = common_header();
  for (const Bytes& c : chunks) p.insert(p.end(), c.begin(), c.end());
  return p;
}

SegmentPlan tagged_plan(std::uint32_t len, bool last = true) {
  TaggedHeader h;
  h.last = last;
  h.rsvd_ulp = 0x5A;
  h.stag = 0x00ABCD00;  // the peer's STag (RFC 5041 4.2), not the local one
  h.to = 0x2000;
  return SegmentPlan{h, 0, len};
}
SegmentPlan untagged_plan(std::uint32_t len, bool last = true) {
  UntaggedHeader h;
  h.last = last;
  h.rsvd_ulp = 0x0102030405;
  h.qn = 1;
  h.msn = 7;
  h.mo = 0x40;
  return SegmentPlan{h, 0, len};
}

Bytes pattern(std::size_t n, std::uint8_t seed = 1) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 13);
  return b;
}

// The user data of the copying path: DDP-SSN + header + the payload (RFC 5043 5.2.2).
Bytes copied_user_data(const SegmentPlan& plan, std::uint16_t ssn, const Bytes& payload) {
  auto seg = encode_segment(plan.header, payload);
  EXPECT_TRUE(seg.ok());
  return encode_segment_chunk(ssn, seg.value());
}

Bytes descriptor_user(const SegmentPlan& plan, std::uint16_t ssn, std::uint32_t stag = kLocalStag,
                      std::uint64_t to = kLocalTo) {
  auto u = descriptor_user_data(plan, ssn, stag, to);
  EXPECT_TRUE(u.ok()) << u.error().message();
  return u.value();
}

DescriptorFilter stags(std::set<std::uint32_t> ours) {
  return [ours](const GatherDescriptor& d) { return ours.count(d.stag) != 0; };
}

// The inverse of the rewrite: each descriptor chunk of a slot given its zeros back and flag G cleared,
// every other chunk as it is (as the card walks a slot: TxGatherRef rule 2). Empty when the slot is not
// well formed.
Bytes zeros_back(const Bytes& slot) {
  Bytes out(slot.begin(), slot.begin() + static_cast<std::ptrdiff_t>(kSctpCommonHeaderBytes));
  std::size_t off = kSctpCommonHeaderBytes;
  while (off < slot.size()) {
    if (slot.size() - off < kSctpChunkHeaderBytes) return {};
    const std::uint8_t* c = slot.data() + off;
    const std::size_t len = load_be16(c + 2);
    if (c[0] == kSctpChunkData && (c[1] & kDataFlagGather) != 0) {
      if (slot.size() - off < kSctpDataHeaderBytes + kDdpSsnSize + 1) return {};
      const std::size_t span = slot_descriptor_bytes(decode_control(c[kSctpDataHeaderBytes + kDdpSsnSize]).tagged);
      if (slot.size() - off < span || len < span - kNgdBytes) return {};
      const std::size_t at = out.size();
      out.insert(out.end(), c, c + span);
      out[at + 1] = static_cast<std::uint8_t>(c[1] & ~kDataFlagGather);
      if (len < span) {  // the short form (NGD LEN < 16): usrsctp's chunk is the record, no zeros
        store_be16(out.data() + at + 2, static_cast<std::uint16_t>(span));
      } else {
        out.resize(at + pad4(len), 0);
      }
      off += span;
    } else {
      if (len < kSctpChunkHeaderBytes || len > slot.size() - off) return {};
      const std::size_t span = std::min(pad4(len), slot.size() - off);
      out.insert(out.end(), c, c + span);
      off += span;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// descriptor_user_data: what usrsctp is given.
// ---------------------------------------------------------------------------------------------

TEST(GatherUserData, Rfc5043_5_2_2_SsnHeaderNgdThenZerosAtTheSegmentChunksLength) {
  for (const SegmentPlan& plan : {tagged_plan(1000), untagged_plan(1000), tagged_plan(17, false)}) {
    const std::size_t h = header_size(plan.header);
    const Bytes copied = copied_user_data(plan, 0x1234, pattern(plan.payload_length));
    const Bytes u = descriptor_user(plan, 0x1234, kLocalStag, kLocalTo + 77);
    ASSERT_EQ(u.size(), copied.size()) << "usrsctp must count the real size (RFC 9260 7.2)";
    ASSERT_EQ(u.size(), kDdpSsnSize + h + plan.payload_length);
    EXPECT_TRUE(std::equal(u.begin(), u.begin() + static_cast<std::ptrdiff_t>(kDdpSsnSize + h), copied.begin()))
        << "DDP-SSN and the DDP header as the copying path writes them";
    const std::uint8_t* ngd = u.data() + kDdpSsnSize + h;
    EXPECT_EQ(load_le32(ngd + hw::kNGD_STAG_OFFSET), kLocalStag);
    EXPECT_EQ(load_le32(ngd + hw::kNGD_LEN_OFFSET), plan.payload_length);
    EXPECT_EQ(load_le64(ngd + hw::kNGD_TO_OFFSET), kLocalTo + 77);
    EXPECT_EQ(ngd[0], kLocalStag & 0xFF) << "little-endian (hw.def)";
    EXPECT_TRUE(std::all_of(ngd + kNgdBytes, u.data() + u.size(), [](std::uint8_t b) { return b == 0; }));
  }
}

TEST(GatherUserData, PayloadOf16BytesIsExactlyTheRecord) {
  const Bytes u = descriptor_user(tagged_plan(kMinDescriptorPayload), 1);
  EXPECT_EQ(u.size(), kDdpSsnSize + kTaggedHeaderSize + kNgdBytes);
  EXPECT_EQ(kMinDescriptorPayload, 16u);
  EXPECT_EQ(kNgdBytes, 16u);
}

// RFC 5041 5.2 zero-length segments and payloads under the record: the short form, the record and no
// zeros; the rewrite puts the length on the wire (16 + 2 + H + LEN) in the slot's chunk header.
TEST(GatherUserData, PayloadUnder16BytesIsTheShortForm) {
  for (std::uint32_t len : {0u, 1u, 15u}) {
    for (const SegmentPlan& plan : {tagged_plan(len), untagged_plan(len)}) {
      const Bytes u = descriptor_user(plan, 1);
      const std::size_t h = header_size(plan.header);
      ASSERT_EQ(u.size(), kDdpSsnSize + h + kNgdBytes) << len;
      EXPECT_EQ(load_le32(u.data() + kDdpSsnSize + h + hw::kNGD_LEN_OFFSET), len);
      const Bytes in = packet({data_chunk(u, 77)});
      const auto r = rewrite_for_gather(in, stags({kLocalStag}));
      ASSERT_TRUE(Succeeds(r));
      ASSERT_EQ(r->descriptors.size(), 1u);
      EXPECT_EQ(r->descriptors[0].length, len);
      EXPECT_EQ(r->packet.size(), in.size()) << "the slot keeps the record";
      EXPECT_EQ(load_be16(r->packet.data() + 12 + 2), 16 + 2 + h + len) << "the chunk's length on the wire";
    }
  }
}

TEST(GatherUserData, Rfc9260_3_2_AChunkPast65535BytesIsRefused) {
  const std::uint32_t most = 65535 - kSctpDataHeaderBytes - kDdpSsnSize - kTaggedHeaderSize;
  EXPECT_TRUE(descriptor_user_data(tagged_plan(most), 1, kLocalStag, kLocalTo).ok());
  auto u = descriptor_user_data(tagged_plan(most + 1), 1, kLocalStag, kLocalTo);
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error().code, Errc::kFieldOutOfRange) << u.error().message();
  u = descriptor_user_data(untagged_plan(0xFFFFFFFF), 1, kLocalStag, kLocalTo);
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error().code, Errc::kFieldOutOfRange) << u.error().message();
}

TEST(GatherUserData, Rfc5041_4_1_AHeaderThatDoesNotEncodeIsRefused) {
  SegmentPlan plan = tagged_plan(100);
  std::get<TaggedHeader>(plan.header).dv = 4;  // 2 bits
  auto u = descriptor_user_data(plan, 1, kLocalStag, kLocalTo);
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error().code, Errc::kFieldOutOfRange) << u.error().message();
  EXPECT_THROW(static_cast<void>(u.value()), std::logic_error);
}

TEST(GatherUserData, Rfc9260_3_2_SlotDescriptorsAreWholeWords) {
  EXPECT_EQ(slot_descriptor_bytes(true), 48u);
  EXPECT_EQ(slot_descriptor_bytes(false), 52u);
  EXPECT_EQ(kDataFlagGather, hw::kNET_DATA_FLAG_GATHER);
}

// ---------------------------------------------------------------------------------------------
// rewrite_for_gather: the output callback.
// ---------------------------------------------------------------------------------------------

TEST(GatherRewrite, Rfc5043_5_2_2_ADescriptorChunkBecomesItsSlotForm) {
  for (const SegmentPlan& plan : {tagged_plan(1000), untagged_plan(999)}) {
    const Bytes in = packet({data_chunk(descriptor_user(plan, 42, kLocalStag, kLocalTo + 5), 9000, 2)});
    const auto r = rewrite_for_gather(in, stags({kLocalStag}));
    ASSERT_TRUE(Succeeds(r));
    const Bytes& out = r->packet;
    const bool tagged = is_tagged(plan.header);
    ASSERT_EQ(out.size(), kSctpCommonHeaderBytes + slot_descriptor_bytes(tagged));
    EXPECT_TRUE(r->gather);
    EXPECT_TRUE(std::equal(in.begin(), in.begin() + 12, out.begin())) << "common header as it is";
    EXPECT_EQ(out[13], kSctpDataFlagsUbe | kDataFlagGather) << "flag G set, U B E kept";
    EXPECT_EQ(load_be16(out.data() + 14), load_be16(in.data() + 14)) << "the length on the wire kept";
    EXPECT_TRUE(std::equal(out.begin() + 14, out.end(), in.begin() + 14)) << "header, DDP-SSN, DDP header, NGD";
    ASSERT_EQ(r->descriptors.size(), 1u);
    const GatherDescriptor& d = r->descriptors[0];
    EXPECT_EQ(d.chunk, 0u);
    EXPECT_EQ(d.tsn, 9000u);
    EXPECT_EQ(d.sctp_stream, 2u);
    EXPECT_EQ(d.stream_seq, static_cast<std::uint16_t>(9000 * 3));
    EXPECT_EQ(d.ddp_ssn, 42u);
    EXPECT_EQ(d.tagged, tagged);
    EXPECT_EQ(d.stag, kLocalStag);
    EXPECT_EQ(d.length, plan.payload_length);
    EXPECT_EQ(d.to, kLocalTo + 5);
    EXPECT_EQ(zeros_back(out), in) << "the rewrite loses nothing";
  }
}

TEST(GatherRewrite, Rfc9260_3_2_ABundleKeepsEveryOtherChunkAsItIs) {
  const Bytes sack = plain_chunk(kSack, 12);
  const Bytes small = data_chunk(copied_user_data(tagged_plan(7), 3, pattern(7)), 101);  // by copy (< 16)
  const Bytes empty = data_chunk(copied_user_data(untagged_plan(0), 4, {}), 102);        // RFC 5041 5.2
  const Bytes control = data_chunk({0, 5, 0, 1, 0xAA}, 103, 1, kPpidDdpSessionControl);  // RFC 5043 5.2.3
  const Bytes heartbeat = plain_chunk(kHeartbeat, 9);
  const Bytes d1 = data_chunk(descriptor_user(tagged_plan(16), 1), 100, 0);
  const Bytes d2 = data_chunk(descriptor_user(untagged_plan(1400), 2, kLocalStag, kLocalTo + 16), 104, 3);
  const Bytes in = packet({sack, d1, small, empty, control, d2, heartbeat});
  const auto r = rewrite_for_gather(in, stags({kLocalStag}));
  ASSERT_TRUE(Succeeds(r));
  EXPECT_TRUE(r->gather);
  const Bytes want = [&] {
    Bytes s1(d1.begin(), d1.begin() + 48), s2(d2.begin(), d2.begin() + 52);
    s1[1] |= kDataFlagGather;
    s2[1] |= kDataFlagGather;
    return packet({sack, s1, small, empty, control, s2, heartbeat});
  }();
  EXPECT_EQ(r->packet, want);
  ASSERT_EQ(r->descriptors.size(), 2u);
  EXPECT_EQ(r->descriptors[0].chunk, 1u);
  EXPECT_EQ(r->descriptors[0].length, 16u);
  EXPECT_EQ(r->descriptors[1].chunk, 5u);
  EXPECT_EQ(r->descriptors[1].tsn, 104u);
  EXPECT_EQ(r->descriptors[1].to, kLocalTo + 16);
  EXPECT_EQ(zeros_back(r->packet), in);
}

TEST(GatherRewrite, APacketWithoutDescriptorsIsCopiedAsItIs) {
  const Bytes in =
      packet({plain_chunk(kSack, 12), data_chunk(copied_user_data(tagged_plan(3000), 1, pattern(3000)), 7)});
  const auto r = rewrite_for_gather(in, stags({kLocalStag}));
  ASSERT_TRUE(Succeeds(r));
  EXPECT_FALSE(r->gather);
  EXPECT_TRUE(r->descriptors.empty());
  EXPECT_EQ(r->packet, in);
  const Bytes header_only = common_header();  // RFC 9260 3.1: a packet of no chunks walks to its end
  const auto e = rewrite_for_gather(header_only, stags({kLocalStag}));
  ASSERT_TRUE(Succeeds(e));
  EXPECT_EQ(e->packet, header_only);
}

TEST(GatherRewrite, Rfc9260_3_2_ALastChunkWithoutItsPaddingIsCopiedUnpadded) {
  // A copied segment of 5 payload bytes ends 2 bytes short of a word; the card pads it (TxGatherRef rule 2).
  const Bytes last =
      data_chunk(copied_user_data(tagged_plan(5), 2, pattern(5)), 11, 1, kPpidDdpSegment, kSctpDataFlagsUbe, false);
  const Bytes in = packet({data_chunk(descriptor_user(tagged_plan(64), 1), 10), last});
  ASSERT_NE(in.size() % 4, 0u);
  const auto r = rewrite_for_gather(in, stags({kLocalStag}));
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r->packet.size(), kSctpCommonHeaderBytes + 48 + last.size());
  EXPECT_TRUE(std::equal(last.begin(), last.end(), r->packet.end() - static_cast<std::ptrdiff_t>(last.size())));
}

TEST(GatherRewrite, ANonzeroByteAfterTheRecordIsNotADescriptor) {
  const Bytes good = descriptor_user(untagged_plan(200), 1);
  for (std::size_t at : {kDdpSsnSize + kUntaggedHeaderSize + kNgdBytes, good.size() - 1}) {
    Bytes user = good;
    user[at] = 1;
    const Bytes in = packet({data_chunk(user, 1)});
    const auto r = rewrite_for_gather(in, stags({kLocalStag}));
    ASSERT_TRUE(Succeeds(r));
    EXPECT_FALSE(r->gather) << "byte " << at;
    EXPECT_EQ(r->packet, in) << "copied as it is, never marked";
  }
}

TEST(GatherRewrite, AForeignStagIsNotADescriptor) {
  const Bytes in = packet({data_chunk(descriptor_user(tagged_plan(300), 1, kOtherStag), 1)});
  const auto r = rewrite_for_gather(in, stags({kLocalStag}));
  ASSERT_TRUE(Succeeds(r));
  EXPECT_FALSE(r->gather);
  EXPECT_EQ(r->packet, in);
  const auto none = rewrite_for_gather(in, nullptr);  // no registry: nothing is ours
  ASSERT_TRUE(Succeeds(none));
  EXPECT_FALSE(none->gather);
}

TEST(GatherRewrite, TheRegistrySeesTheWholeRecord) {
  // A registry keyed on (SCTP stream, DDP-SSN): a copied segment that looks like a descriptor of its own
  // STag stays a copy.
  const Bytes in = packet(
      {data_chunk(descriptor_user(tagged_plan(64), 9), 1, 2), data_chunk(descriptor_user(tagged_plan(64), 10), 2, 2)});
  const auto r =
      rewrite_for_gather(in, [](const GatherDescriptor& d) { return d.sctp_stream == 2 && d.ddp_ssn == 10; });
  ASSERT_TRUE(Succeeds(r));
  ASSERT_EQ(r->descriptors.size(), 1u);
  EXPECT_EQ(r->descriptors[0].chunk, 1u);
  EXPECT_EQ(r->packet.size(), in.size() - (16 + 2 + 14 + 64) + 48);
}

TEST(GatherRewrite, Rfc5041_4_4_ALengthThatLiesIsNotADescriptor) {
  const Bytes user = descriptor_user(tagged_plan(100), 1);
  for (int delta : {-4, -1, 1, 4}) {
    Bytes u = user;
    u.resize(static_cast<std::size_t>(static_cast<int>(u.size()) + delta), 0);
    const Bytes in = packet({data_chunk(u, 1)});
    const auto r = rewrite_for_gather(in, stags({kLocalStag}));
    ASSERT_TRUE(Succeeds(r));
    EXPECT_FALSE(r->gather) << "length off by " << delta;
    EXPECT_EQ(r->packet, in);
  }
  // An NGD that does not fit the chunk (LEN < 16 in a chunk of 2 + H + LEN bytes) is never one either.
  Bytes cut = user;
  cut.resize(kDdpSsnSize + kTaggedHeaderSize + 15);
  store_le32(cut.data() + kDdpSsnSize + kTaggedHeaderSize + hw::kNGD_LEN_OFFSET, 15);
  const auto r = rewrite_for_gather(packet({data_chunk(cut, 1)}), stags({kLocalStag}));
  ASSERT_TRUE(Succeeds(r));
  EXPECT_FALSE(r->gather);
}

TEST(GatherRewrite, Rfc9260_3_3_1_AFragmentedDescriptorIsRefused) {
  const Bytes user = descriptor_user(untagged_plan(2000), 1);
  // usrsctp cut the user data at 600 bytes: first fragment B (U kept), then middle and last fragments.
  const Bytes first(user.begin(), user.begin() + 600);
  const Bytes rest(user.begin() + 600, user.begin() + 1200);
  const auto r = rewrite_for_gather(packet({plain_chunk(kSack, 12), data_chunk(first, 5, 1, kPpidDdpSegment, 0x06)}),
                                    stags({kLocalStag}));
  ASSERT_TRUE(FailsWith(r, Errc::kFragmented));
  EXPECT_NE(r.error().detail.find("path MTU below the segment size"), std::string::npos) << r.error().detail;
  EXPECT_NE(r.error().detail.find("TSN 5"), std::string::npos) << r.error().detail;
  // A later fragment is zeros: nothing says whose; copied as it is, never marked (the first one aborted).
  for (std::uint8_t flags : {std::uint8_t{0x04}, std::uint8_t{0x05}}) {
    const Bytes in = packet({data_chunk(rest, 6, 1, kPpidDdpSegment, flags)});
    const auto m = rewrite_for_gather(in, stags({kLocalStag}));
    ASSERT_TRUE(Succeeds(m));
    EXPECT_FALSE(m->gather);
    EXPECT_EQ(m->packet, in);
  }
  // Whole but U clear (sent ordered), or B and E clear at full length: the card would drop it (kFragment).
  for (std::uint8_t flags : {std::uint8_t{0x03}, std::uint8_t{0x05}, std::uint8_t{0x06}, std::uint8_t{0x04}}) {
    const auto w = rewrite_for_gather(packet({data_chunk(user, 7, 1, kPpidDdpSegment, flags)}), stags({kLocalStag}));
    ASSERT_TRUE(FailsWith(w, Errc::kFragmented)) << "flags " << int{flags};
  }
  // A first fragment that is not ours (another STag) is any message's fragment: copied.
  const Bytes other = descriptor_user(untagged_plan(2000), 1, kOtherStag);
  const Bytes in = packet({data_chunk(Bytes(other.begin(), other.begin() + 600), 5, 1, kPpidDdpSegment, 0x06)});
  const auto o = rewrite_for_gather(in, stags({kLocalStag}));
  ASSERT_TRUE(Succeeds(o));
  EXPECT_EQ(o->packet, in);
}

TEST(GatherRewrite, Rfc9260_3_2_BrokenFramingIsRefused) {
  const Bytes good = packet({data_chunk(descriptor_user(tagged_plan(64), 1), 1)});
  EXPECT_TRUE(
      FailsWith(rewrite_for_gather(Bytes(good.begin(), good.begin() + 11), stags({kLocalStag})), Errc::kFraming))
      << "shorter than the common header";
  for (std::size_t extra : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {  // a chunk header past the end
    Bytes p = good;
    p.resize(p.size() + extra, 0);
    EXPECT_TRUE(FailsWith(rewrite_for_gather(p, stags({kLocalStag})), Errc::kFraming)) << extra;
  }
  for (std::uint16_t len : {std::uint16_t{0}, std::uint16_t{1}, std::uint16_t{3}}) {  // a length below 4
    Bytes p = packet({plain_chunk(kSack, 12)});
    store_be16(p.data() + 14, len);
    EXPECT_TRUE(FailsWith(rewrite_for_gather(p, stags({kLocalStag})), Errc::kFraming)) << len;
  }
  Bytes past = good;  // a length past the packet
  store_be16(past.data() + 14, static_cast<std::uint16_t>(load_be16(past.data() + 14) + 4));
  EXPECT_TRUE(FailsWith(rewrite_for_gather(past, stags({kLocalStag})), Errc::kFraming));
  Bytes truncated = good;  // the packet cut inside its chunk
  truncated.resize(truncated.size() - 8);
  EXPECT_TRUE(FailsWith(rewrite_for_gather(truncated, stags({kLocalStag})), Errc::kFraming));
}

TEST(GatherRewrite, Rfc9260_3_3_1_ReservedFlagBit7OnAnotherChunkOfAGatherPacketIsRefused) {
  const Bytes d = data_chunk(descriptor_user(tagged_plan(64), 1), 1);
  for (const Bytes& marked : {plain_chunk(kPad, 8, kDataFlagGather),
                              data_chunk(pattern(40), 2, 1, kPpidDdpSegment, kSctpDataFlagsUbe | kDataFlagGather)}) {
    EXPECT_TRUE(FailsWith(rewrite_for_gather(packet({d, marked}), stags({kLocalStag})), Errc::kStrayGatherFlag));
    EXPECT_TRUE(FailsWith(rewrite_for_gather(packet({marked, d}), stags({kLocalStag})), Errc::kStrayGatherFlag));
    const Bytes alone = packet({marked});  // not a gather packet: the card sends it as it is
    const auto r = rewrite_for_gather(alone, stags({kLocalStag}));
    ASSERT_TRUE(Succeeds(r));
    EXPECT_FALSE(r->gather);
    EXPECT_EQ(r->packet, alone);
  }
}

// ---------------------------------------------------------------------------------------------
// Seeded random packets.
// ---------------------------------------------------------------------------------------------

class RandomGather : public test::SeededTest {};

template <typename T>
T uniform(std::mt19937_64& rng, T lo, T hi) {
  return std::uniform_int_distribution<T>(lo, hi)(rng);
}

// A random bundle as usrsctp would make it: descriptor chunks, copied segments, other chunks; `count`
// receives the number of descriptors in it.
Bytes random_packet(std::mt19937_64& rng, std::size_t* count) {
  Bytes p = common_header();
  *count = 0;
  const std::size_t chunks = uniform<std::size_t>(rng, 0, 8);
  for (std::size_t i = 0; i < chunks; ++i) {
    const std::uint32_t len = uniform<std::uint32_t>(rng, 0, (rng() & 3) == 0 ? 3000 : 100);
    const SegmentPlan plan = (rng() & 1) ? tagged_plan(len, rng() & 1) : untagged_plan(len, rng() & 1);
    const auto ssn = static_cast<std::uint16_t>(rng());
    Bytes c;
    switch (rng() % 4) {
      case 0:
      case 1:  // a descriptor, the short form too (len < 16)
        c = data_chunk(descriptor_user(plan, ssn, kLocalStag, kLocalTo + rng() % 4096),
                       static_cast<std::uint32_t>(rng()), static_cast<std::uint16_t>(rng() % 4));
        ++*count;
        break;
      case 2:
        c = data_chunk(copied_user_data(plan, ssn, test::random_bytes(rng, len)), static_cast<std::uint32_t>(rng()));
        break;
      default:
        c = plain_chunk(rng() & 1 ? kSack : kHeartbeat, uniform<std::size_t>(rng, 0, 40));
        break;
    }
    p.insert(p.end(), c.begin(), c.end());
  }
  return p;
}

TEST_F(RandomGather, Rfc9260_3_2_RandomBundlesRewriteLosslesslyAndNeverGrow) {
  SCOPED_TRACE(seed_trace());
  std::mt19937_64& rng = engine();
  std::size_t descriptors = 0;
  for (int i = 0; i < 3000; ++i) {
    std::size_t count = 0;
    const Bytes in = random_packet(rng, &count);
    const auto r = rewrite_for_gather(in, stags({kLocalStag}));
    ASSERT_TRUE(Succeeds(r)) << "iteration " << i;
    ASSERT_EQ(r->descriptors.size(), count) << "iteration " << i;
    ASSERT_EQ(r->gather, count != 0) << "iteration " << i;
    ASSERT_LE(r->packet.size(), in.size()) << "iteration " << i;
    ASSERT_EQ(zeros_back(r->packet), in) << "iteration " << i;
    descriptors += count;
  }
  EXPECT_GT(descriptors, 1000u);
}

// Random bytes, and good packets with random bytes changed: a value or an error, never a crash (ASan: the
// input is an exactly sized heap block), never longer than the input; a value is a well-formed slot.
TEST_F(RandomGather, HostileInputsNeverCrashNorGrow) {
  SCOPED_TRACE(seed_trace());
  std::mt19937_64& rng = engine();
  std::size_t accepted = 0, gathered = 0;
  for (int i = 0; i < 20000; ++i) {
    Bytes in;
    if (rng() & 1) {
      in = test::random_bytes(rng, uniform<std::size_t>(rng, 0, 200));
    } else {
      std::size_t count = 0;
      in = random_packet(rng, &count);
      const std::size_t flips = uniform<std::size_t>(rng, 1, 4);
      for (std::size_t f = 0; f < flips && in.size() > 12; ++f) {
        in[uniform<std::size_t>(rng, 12, in.size() - 1)] = static_cast<std::uint8_t>(rng());
      }
      if (rng() % 4 == 0) in.resize(uniform<std::size_t>(rng, 0, in.size()));
    }
    std::unique_ptr<std::uint8_t[]> heap(new std::uint8_t[in.empty() ? 1 : in.size()]);
    std::copy(in.begin(), in.end(), heap.get());
    const auto r = rewrite_for_gather(ConstBytes(heap.get(), in.size()), stags({kLocalStag, kOtherStag}));
    if (!r.ok()) continue;
    ++accepted;
    if (r->gather) ++gathered;
    ASSERT_LE(r->packet.size(), in.size()) << "iteration " << i;
    if (r->gather) {
      ASSERT_FALSE(zeros_back(r->packet).empty()) << "iteration " << i << ": a slot the card cannot walk";
    }
  }
  std::printf("[   INFO   ] %zu of 20000 inputs accepted, %zu of them gather packets\n", accepted, gathered);
  EXPECT_GT(gathered, 100u);
}

}  // namespace
}  // namespace rnic::wire
