// SPDX-License-Identifier: Apache-2.0
// The demo ULP (host/ulp): Initiate / Accept private data (RFC 5043 5.2.3: at most 512 bytes; the first
// 32 bits reserved for RFC 6581), hostile-input-safe decoding, and the deterministic plan both sides run.
//
// Seed: RNIC_TEST_SEED=<n> reproduces the random inputs; the seed is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rnic/tb/seed.hpp"
#include "rnic/ulp/demo_ulp.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "rnic/wire/segmentation.hpp"

namespace {

using namespace rnic::ulp;
using rnic::wire::ConstBytes;
using rnic::wire::Errc;

Initiate sample_initiate() {
  Initiate m;
  m.streams = 3;
  m.seed = 0x0123456789ABCDEFull;
  m.messages = 500;
  m.max_message = 6000;
  m.mulpdu = 1432;
  return m;
}

// What a receiver advertises for `m`, sized as the plan needs (the receiver's recipe).
std::vector<Advertisement> sized_advertisements(const Initiate& m, std::size_t max_buffers = 3) {
  const auto demand = stream_demand(m);
  std::vector<Advertisement> out;
  for (std::uint16_t s = 0; s < m.streams; ++s) {
    Advertisement a;
    a.qn = 1;
    a.posted = demand[s].untagged_messages;
    a.buffer_size = demand[s].untagged_max_length;
    std::uint64_t to = 0xFEDC000000000000ull + (std::uint64_t{s} << 40);
    std::uint32_t idx = 10u + 8u * s;
    for (std::uint64_t len : tagged_buffer_sizes(m, s, max_buffers)) {
      a.tagged.push_back(TaggedBuffer{(idx++ << 8) | 0x5C, to, len});
      to += len + 0x1000;
    }
    out.push_back(a);
  }
  return out;
}

template <typename T>
void expect_refused(const rnic::wire::Result<T>& r, Errc code, const std::string& needle) {
  ASSERT_FALSE(r.ok()) << "accepted, expected " << needle;
  EXPECT_EQ(r.error().code, code) << r.error().message();
  EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
}

// The byte layout of the header comment, field by field.
TEST(DemoUlp, InitiateLayoutAndRoundTrip) {
  const Initiate m = sample_initiate();
  const auto enc = encode_initiate(m);
  ASSERT_TRUE(enc.ok()) << enc.error().message();
  const std::vector<std::uint8_t> want{0,    0,    0,    0,    'R',  'N',  'U',  'I',  0,    1,   0,
                                       3,    0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0,   0,
                                       0x01, 0xF4, 0,    0,    0x17, 0x70, 0,    0,    0x05, 0x98};
  EXPECT_EQ(*enc, want);
  const auto dec = decode_initiate(ConstBytes(*enc));
  ASSERT_TRUE(dec.ok()) << dec.error().message();
  EXPECT_EQ(*dec, m);
}

// RFC 5043 5.2.3: 24 tagged buffers make 504 bytes, the most that fits 512; the RFC 6581 word leads.
TEST(DemoUlp, AcceptLayoutAndTheLimitOf512Bytes) {
  Advertisement a;
  a.qn = 2;
  a.posted = 7;
  a.buffer_size = 4096;
  for (std::uint32_t i = 0; i < kMaxTaggedBuffers; ++i)
    a.tagged.push_back(TaggedBuffer{(i << 8) | 1, 0x8000000000000000ull + i * 0x10000ull, 0x10000});
  const auto enc = encode_accept(a);
  ASSERT_TRUE(enc.ok()) << enc.error().message();
  EXPECT_EQ(kMaxTaggedBuffers, 24u);
  EXPECT_EQ(enc->size(), 504u);
  EXPECT_LE(enc->size(), rnic::wire::kMaxPrivateData);
  EXPECT_EQ(std::vector<std::uint8_t>(enc->begin(), enc->begin() + 12),
            (std::vector<std::uint8_t>{0, 0, 0, 0, 'R', 'N', 'U', 'A', 0, 1, 0, 24}));
  // The first buffer: STag 0x00000001, TO 0x8000000000000000, length 0x10000.
  EXPECT_EQ(std::vector<std::uint8_t>(enc->begin() + 24, enc->begin() + 44),
            (std::vector<std::uint8_t>{0, 0, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}));
  const auto dec = decode_accept(ConstBytes(*enc));
  ASSERT_TRUE(dec.ok()) << dec.error().message();
  EXPECT_EQ(*dec, a);
  a.tagged.push_back(TaggedBuffer{0xFF01, 0, 1});  // 25: 524 bytes, over 512
  expect_refused(encode_accept(a), Errc::kFieldOutOfRange, "Accept.n: 25 tagged buffers");
}

TEST(DemoUlp, RFC6581WordIsCarriedUninterpreted) {
  Initiate m = sample_initiate();
  m.rfc6581 = 0xC0FFEE01;
  auto dec = decode_initiate(ConstBytes(*encode_initiate(m)));
  ASSERT_TRUE(dec.ok());
  EXPECT_EQ(dec->rfc6581, 0xC0FFEE01u);
  EXPECT_EQ(sample_initiate().rfc6581, 0u);  // written 0 today
}

TEST(DemoUlp, MalformedInitiateIsRefusedNamingTheField) {
  const auto good = *encode_initiate(sample_initiate());
  for (std::size_t n = 0; n < good.size(); ++n) {  // every truncation
    const auto r = decode_initiate(ConstBytes(good.data(), n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.error().code, Errc::kTruncated) << n << ": " << r.error().message();
  }
  auto longer = good;
  longer.push_back(0);
  expect_refused(decode_initiate(ConstBytes(longer)), Errc::kBadParameter, "exactly 32");
  std::vector<std::uint8_t> huge(513, 0);
  expect_refused(decode_initiate(ConstBytes(huge)), Errc::kPrivateDataTooLong, "513 bytes, over 512");
  const auto patched = [&](std::size_t off, std::vector<std::uint8_t> bytes) {
    auto v = good;
    std::copy(bytes.begin(), bytes.end(), v.begin() + static_cast<std::ptrdiff_t>(off));
    return decode_initiate(ConstBytes(v));
  };
  expect_refused(patched(4, {'R', 'N', 'U', 'A'}), Errc::kBadParameter, "Initiate.magic: 0x524e5541");
  expect_refused(patched(8, {0, 2}), Errc::kBadParameter, "Initiate.version: 2");
  expect_refused(patched(10, {0, 0}), Errc::kFieldOutOfRange, "Initiate.streams: 0");
  expect_refused(patched(10, {1, 1}), Errc::kFieldOutOfRange, "Initiate.streams: 257");
  expect_refused(patched(20, {0xFF, 0xFF, 0xFF, 0xFF}), Errc::kFieldOutOfRange, "Initiate.messages");
  expect_refused(patched(24, {0x01, 0, 0, 1}), Errc::kFieldOutOfRange, "Initiate.max_message");
  expect_refused(patched(28, {0, 0, 0, 18}), Errc::kFieldOutOfRange, "Initiate.mulpdu: 18");
  expect_refused(patched(28, {0, 1, 0, 0}), Errc::kFieldOutOfRange, "Initiate.mulpdu: 65536");
  Initiate bad = sample_initiate();
  bad.streams = 0;
  expect_refused(encode_initiate(bad), Errc::kFieldOutOfRange, "Initiate.streams");
}

TEST(DemoUlp, MalformedAcceptIsRefusedNamingTheField) {
  Advertisement a;
  a.qn = 1;
  a.posted = 2;
  a.buffer_size = 100;
  a.tagged = {TaggedBuffer{0x100, 0x1000, 0x100}, TaggedBuffer{0x200, 0x1000, 0x100}};
  const auto good = *encode_accept(a);
  ASSERT_EQ(good.size(), 64u);
  for (std::size_t n = 0; n < good.size(); ++n) {
    const auto r = decode_accept(ConstBytes(good.data(), n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.error().code, Errc::kTruncated) << n << ": " << r.error().message();
  }
  auto longer = good;
  longer.push_back(0);
  expect_refused(decode_accept(ConstBytes(longer)), Errc::kBadParameter, "n = 2 tagged buffers needs exactly 64");
  const auto patched = [&](std::size_t off, std::vector<std::uint8_t> bytes) {
    auto v = good;
    std::copy(bytes.begin(), bytes.end(), v.begin() + static_cast<std::ptrdiff_t>(off));
    return decode_accept(ConstBytes(v));
  };
  expect_refused(patched(4, {'R', 'N', 'U', 'I'}), Errc::kBadParameter, "Accept.magic");
  expect_refused(patched(8, {0, 0}), Errc::kBadParameter, "Accept.version: 0");
  expect_refused(patched(10, {0, 25}), Errc::kFieldOutOfRange, "Accept.n: 25");
  expect_refused(patched(10, {0, 3}), Errc::kTruncated, "needs exactly 84");
  expect_refused(patched(16, {0xFF, 0, 0, 0}), Errc::kFieldOutOfRange, "Accept.posted");
  expect_refused(patched(20, {0xFF, 0, 0, 0}), Errc::kFieldOutOfRange, "Accept.buffer_size");
  // tagged[1] at 44: length 0; TO + length wrapping; the same STag overlapping tagged[0].
  expect_refused(patched(44 + 12, {0, 0, 0, 0, 0, 0, 0, 0}), Errc::kFieldOutOfRange, "Accept.tagged[1]: length 0");
  expect_refused(patched(44 + 4, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0}), Errc::kFieldOutOfRange,
                 "Accept.tagged[1]: TO 0xfffffffffffffff0 + length 256 wraps");
  expect_refused(patched(44, {0, 0, 1, 0}), Errc::kFieldOutOfRange, "overlaps tagged[0]");
  // The same STag with disjoint ranges is fine.
  auto v = good;
  v[44 + 2] = 1;
  v[44 + 3] = 0;
  v[44 + 4 + 6] = 0x11;  // TO 0x1100: right after tagged[0]
  EXPECT_TRUE(decode_accept(ConstBytes(v)).ok());
  std::vector<std::uint8_t> huge(600, 0);
  expect_refused(decode_accept(ConstBytes(huge)), Errc::kPrivateDataTooLong, "600 bytes, over 512");
}

// Hostile input: any bytes decode to a valid struct or an error, never a crash; a valid one is canonical.
TEST(DemoUlp, RandomBytesNeverCrashTheDecoders) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  const auto good_i = *encode_initiate(sample_initiate());
  const auto good_a = *encode_accept(sized_advertisements(sample_initiate())[0]);
  int accepted = 0;
  for (int i = 0; i < 200000; ++i) {
    std::vector<std::uint8_t> v;
    switch (i % 3) {
      case 0:  // pure noise of any length up to 600
        v.resize(rng() % 601);
        for (auto& b : v) b = static_cast<std::uint8_t>(rng());
        break;
      default: {  // a valid message with a few bytes flipped, maybe cut or extended
        v = (i % 3 == 1) ? good_i : good_a;
        for (int k = 0, n = static_cast<int>(rng() % 4); k < n; ++k)
          v[rng() % v.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        if (rng() % 8 == 0) v.resize(rng() % (v.size() + 20));
      }
    }
    const auto ri = decode_initiate(ConstBytes(v));
    const auto ra = decode_accept(ConstBytes(v));
    if (ri.ok()) {
      ++accepted;
      ASSERT_EQ(*encode_initiate(*ri), v) << "seed " << seed;
    } else {
      ASSERT_FALSE(ri.error().detail.empty());
    }
    if (ra.ok()) {
      ++accepted;
      ASSERT_EQ(*encode_accept(*ra), v) << "seed " << seed;
    } else {
      ASSERT_FALSE(ra.error().detail.empty());
    }
  }
  EXPECT_GT(accepted, 0);
}

// Both sides compute the same plan; tagged ranges are disjoint and inside their buffers; untagged MSNs
// run 1, 2, ... per stream within the posted buffers; segment counts are RFC 5041 5.2's at the MULPDU.
TEST(DemoUlp, PlanFitsTheSizedAdvertisementForManySeeds) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  for (int run = 0; run < 200; ++run) {
    Initiate m;
    m.seed = rng();
    m.streams = static_cast<std::uint16_t>(1 + rng() % 5);
    m.messages = static_cast<std::uint32_t>(rng() % 300);
    m.max_message = static_cast<std::uint32_t>(rng() % 3 == 0 ? rng() % 4 : rng() % 20000);
    m.mulpdu = static_cast<std::uint32_t>(kMinMulpdu + rng() % 9000);
    const auto adv = sized_advertisements(m, 1 + rng() % kMaxTaggedBuffers);
    const auto plan = make_plan(m, adv);
    ASSERT_TRUE(plan.ok()) << "seed " << seed << " run " << run << ": " << plan.error().message();
    const auto again = make_plan(m, adv);
    ASSERT_EQ(plan->messages.size(), m.messages);
    std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> ranges;  // STag -> [to, end)
    std::vector<std::uint32_t> msn(m.streams, 0);
    std::vector<std::uint16_t> ssn(m.streams, 0);
    for (std::size_t i = 0; i < plan->messages.size(); ++i) {
      const PlannedMessage& p = plan->messages[i];
      const MessageShape s = message_shape(m, p.index);
      ASSERT_EQ(p.index, i);
      ASSERT_EQ(p.stream, s.stream);
      ASSERT_EQ(p.tagged, s.tagged);
      ASSERT_EQ(p.length, s.length);
      ASSERT_LE(p.length, m.max_message);
      ASSERT_EQ(again->messages[i].to, p.to);
      const Advertisement& a = adv[p.stream];
      const auto seg = p.tagged ? rnic::wire::MessageSegmenter::tagged(p.stag, p.to, 0, p.length, m.mulpdu)
                                : rnic::wire::MessageSegmenter::untagged(p.qn, p.msn, 0, p.length, m.mulpdu);
      ASSERT_TRUE(seg.ok());
      ASSERT_EQ(p.segments, seg->segment_count());
      ssn[p.stream] = static_cast<std::uint16_t>(ssn[p.stream] + p.segments);
      ASSERT_EQ(p.last_ddp_ssn, ssn[p.stream]);  // the Initiate is DDP-SSN 0, so the n-th segment is n
      if (p.tagged) {
        ASSERT_LT(p.buffer, a.tagged.size());
        const TaggedBuffer& b = a.tagged[p.buffer];
        ASSERT_EQ(p.stag, b.stag);
        ASSERT_EQ(p.rsvd_ulp, p.index & 0xFF);
        ASSERT_GE(p.to, b.to);
        ASSERT_LE(p.to + p.length, b.to + b.length);
        if (p.length > 0) ranges[p.stag].emplace_back(p.to, p.to + p.length);
      } else {
        ASSERT_EQ(p.qn, a.qn);
        ASSERT_EQ(p.msn, ++msn[p.stream]);
        ASSERT_LE(p.msn, a.posted);
        ASSERT_LE(p.length, a.buffer_size);
        ASSERT_EQ(p.rsvd_ulp, p.index);
      }
    }
    for (auto& [stag, r] : ranges) {
      std::sort(r.begin(), r.end());
      for (std::size_t k = 1; k < r.size(); ++k) ASSERT_LE(r[k - 1].second, r[k].first) << "overlap, seed " << seed;
    }
  }
}

// A receiver that advertises less than the run needs: the plan is refused naming stream and message.
TEST(DemoUlp, PlanRefusesAnAdvertisementThatIsTooSmall) {
  const Initiate m = sample_initiate();
  const auto adv = sized_advertisements(m);
  ASSERT_TRUE(make_plan(m, adv).ok());
  std::size_t s = 0;  // a stream with tagged and untagged messages
  while (adv[s].tagged.empty() || adv[s].posted == 0) ++s;
  auto less = adv;
  less[s].tagged.back().length -= 1;
  expect_refused(make_plan(m, less), Errc::kFieldOutOfRange, "stream " + std::to_string(s) + " message");
  less = adv;
  less[s].posted -= 1;
  expect_refused(make_plan(m, less), Errc::kFieldOutOfRange, "buffers are posted on QN 1");
  less = adv;
  less[s].buffer_size -= 1;
  expect_refused(make_plan(m, less), Errc::kFieldOutOfRange, "longer than the posted buffers");
  less = adv;
  less[s].tagged.clear();
  expect_refused(make_plan(m, less), Errc::kFieldOutOfRange, "does not fit the 0 advertised tagged buffers");
  less = adv;
  less.pop_back();
  expect_refused(make_plan(m, less), Errc::kBadParameter, "2 advertisements for 3 streams");
  less = adv;
  less[1].tagged.push_back(less[1].tagged.front());  // overlaps itself
  expect_refused(make_plan(m, less), Errc::kFieldOutOfRange, "stream 1: Accept.tagged");
}

TEST(DemoUlp, MessageBytesAreAFunctionOfSeedAndIndex) {
  const auto a = message_bytes(7, 3, 1000);
  EXPECT_EQ(a, message_bytes(7, 3, 1000));
  EXPECT_NE(a, message_bytes(7, 4, 1000));
  EXPECT_NE(a, message_bytes(8, 3, 1000));
  const auto prefix = message_bytes(7, 3, 13);
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), a.begin()));
  std::set<std::uint8_t> values(a.begin(), a.end());
  EXPECT_GT(values.size(), 200u);  // not a constant fill
  EXPECT_TRUE(message_bytes(7, 3, 0).empty());
}

TEST(DemoUlp, ShapesCoverBothKindsEveryStreamAndTheEdges) {
  Initiate m = sample_initiate();
  m.messages = 2000;
  std::set<std::uint16_t> streams;
  int tagged = 0, zero = 0, max = 0;
  for (std::uint32_t i = 0; i < m.messages; ++i) {
    const MessageShape s = message_shape(m, i);
    streams.insert(s.stream);
    tagged += s.tagged;
    zero += s.length == 0;
    max += s.length == m.max_message;
  }
  EXPECT_EQ(streams.size(), m.streams);
  EXPECT_GT(tagged, 800);
  EXPECT_LT(tagged, 1200);
  m.max_message = 3;
  for (std::uint32_t i = 0; i < m.messages; ++i) {
    zero += message_shape(m, i).length == 0;
    max += message_shape(m, i).length == 3;
  }
  EXPECT_GT(zero, 0);
  EXPECT_GT(max, 0);
}

}  // namespace
