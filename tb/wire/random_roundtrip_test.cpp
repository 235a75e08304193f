// SPDX-License-Identifier: Apache-2.0
// Seeded random tests: header round trips (RFC 5041 4.2 / 4.3 / 4.4, RFC 5043 5.2.2 / 5.2.3),
// a decoder fuzz loop (no input may crash; run under the asan preset for UB/over-reads), and a
// segmentation property test (RFC 5041 5.2).
//
// The seed comes from RNIC_TEST_SEED if set, else from the clock; every test prints it. Reproduce:
//   RNIC_TEST_SEED=<seed> build/default/tb/wire/wire_unit_tests --gtest_filter='Random*'
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <variant>
#include <vector>

#include "rnic/wire/ddp.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "rnic/wire/segmentation.hpp"
#include "test_util.hpp"

namespace rnic::wire {
namespace {

using test::Bytes;
using test::FailsWith;
using test::Succeeds;

class RandomRoundTrip : public test::SeededTest {};
class RandomFuzz : public test::SeededTest {};
class RandomSegmentation : public test::SeededTest {};

template <typename T>
T uniform(std::mt19937_64& rng, T lo, T hi) {
  return std::uniform_int_distribution<T>(lo, hi)(rng);
}

bool coin(std::mt19937_64& rng) { return (rng() & 1u) != 0; }

DdpHeader random_header(std::mt19937_64& rng) {
  if (coin(rng)) {
    TaggedHeader h;
    h.last = coin(rng);
    h.dv = static_cast<std::uint8_t>(rng() & 3u);
    h.rsvd_ulp = static_cast<std::uint8_t>(rng());
    h.stag = static_cast<std::uint32_t>(rng());
    h.to = rng();
    return h;
  }
  UntaggedHeader h;
  h.last = coin(rng);
  h.dv = static_cast<std::uint8_t>(rng() & 3u);
  h.rsvd_ulp = rng() & kUntaggedRsvdUlpMax;
  h.qn = static_cast<std::uint32_t>(rng());
  h.msn = static_cast<std::uint32_t>(rng());
  h.mo = static_cast<std::uint32_t>(rng());
  return h;
}

// RFC 5041 4.2/4.3/4.4 + RFC 5043 5.2.2: header + payload -> segment -> chunk -> decode == input.
TEST_F(RandomRoundTrip, Rfc5041Sec4_RandomHeadersEncodeDecode) {
  SCOPED_TRACE(seed_trace());
  std::mt19937_64& rng = engine();
  constexpr int kIterations = 20000;
  for (int i = 0; i < kIterations; ++i) {
    const DdpHeader h = random_header(rng);
    const Bytes payload = test::random_bytes(rng, uniform<std::size_t>(rng, 0, 64));
    auto seg = encode_segment(h, payload);
    ASSERT_TRUE(Succeeds(seg)) << "iteration " << i;
    ASSERT_EQ(seg->size(), header_size(h) + payload.size()) << "iteration " << i;
    ASSERT_EQ((*seg)[0] & kCtrlRsvdMask, 0) << "iteration " << i << ": Rsvd must be zero (4.1)";

    auto dec = decode_segment(*seg);
    ASSERT_TRUE(Succeeds(dec)) << "iteration " << i;
    ASSERT_EQ(dec->header, h) << "iteration " << i;
    ASSERT_EQ(dec->payload.to_vector(), payload) << "iteration " << i;

    const auto ssn = static_cast<std::uint16_t>(rng());
    const Bytes chunk = encode_segment_chunk(ssn, *seg);
    auto cv = decode_segment_chunk(chunk);
    ASSERT_TRUE(Succeeds(cv)) << "iteration " << i;
    ASSERT_EQ(cv->ddp_ssn, ssn) << "iteration " << i;
    auto dec2 = decode_segment(cv->ddp_segment);
    ASSERT_TRUE(Succeeds(dec2)) << "iteration " << i;
    ASSERT_EQ(dec2->header, h) << "iteration " << i;
    ASSERT_EQ(dec2->payload.to_vector(), payload) << "iteration " << i;
  }
}

// RFC 5043 5.2.3: random valid session control messages round-trip.
TEST_F(RandomRoundTrip, Rfc5043Sec5_2_3_RandomSessionControl) {
  SCOPED_TRACE(seed_trace());
  std::mt19937_64& rng = engine();
  for (int i = 0; i < 2000; ++i) {
    SessionControl m;
    m.ddp_ssn = static_cast<std::uint16_t>(rng());
    m.function = static_cast<SessionFunction>(uniform<std::uint16_t>(rng, 1, 4));
    if (m.function != SessionFunction::kTerminate) {
      m.private_data = test::random_bytes(rng, uniform<std::size_t>(rng, 0, kMaxPrivateData));
    }
    auto enc = encode_session_control(m);
    ASSERT_TRUE(Succeeds(enc)) << "iteration " << i;
    ASSERT_EQ(enc->size(), kSessionControlHeaderSize + m.private_data.size());
    auto dec = decode_session_control(*enc);
    ASSERT_TRUE(Succeeds(dec)) << "iteration " << i;
    ASSERT_EQ(*dec, m) << "iteration " << i;
  }
}

// Random-bytes fuzz: every decoder returns a value or an error on any input of 0..64 bytes, and
// what it accepts is consistent with the wire format. Buffers are exactly sized heap blocks so
// ASan reports any read past the end.
TEST_F(RandomFuzz, AllDecodersOnRandomBuffers) {
  SCOPED_TRACE(seed_trace());
  std::mt19937_64& rng = engine();
  constexpr int kIterations = 20000;
  for (int i = 0; i < kIterations; ++i) {
    const std::size_t n = uniform<std::size_t>(rng, 0, 64);
    std::unique_ptr<std::uint8_t[]> storage(new std::uint8_t[n == 0 ? 1 : n]);
    std::uint8_t* p = storage.get();
    for (std::size_t k = 0; k < n; ++k) p[k] = static_cast<std::uint8_t>(rng());
    // Bias some inputs towards the valid shapes so the accepting paths are fuzzed too.
    switch (rng() % 4) {
      case 0:
        if (n >= 4) {  // a plausible session control function code
          p[2] = 0;
          p[3] = static_cast<std::uint8_t>(rng() % 6);
        }
        break;
      case 1:
        if (n >= 4) {  // an adaptation indication parameter header
          p[0] = 0xC0;
          p[1] = 0x06;
          p[2] = 0x00;
          p[3] = (rng() & 1u) ? 0x08 : static_cast<std::uint8_t>(rng());
        }
        break;
      default:
        break;
    }
    const ConstBytes buf(n == 0 ? nullptr : p, n);
    SCOPED_TRACE(::testing::Message() << "iteration " << i << " bytes [" << test::hex(buf) << "]");

    // RFC 5041 4.4.
    auto seg = decode_segment(buf);
    if (n == 0) {
      ASSERT_TRUE(FailsWith(seg, Errc::kTruncated));
    } else {
      const std::size_t need = (p[0] & 0x80u) ? kTaggedHeaderSize : kUntaggedHeaderSize;
      if (n < need) {
        ASSERT_TRUE(FailsWith(seg, Errc::kTruncated));
      } else {
        ASSERT_TRUE(Succeeds(seg));
        ASSERT_EQ(header_size(seg->header), need);
        ASSERT_EQ(seg->payload.data, p + need);
        ASSERT_EQ(seg->payload.size, n - need);
        // Re-encoding gives the input back, Rsvd bits cleared (4.1).
        auto again = encode_segment(seg->header, seg->payload);
        ASSERT_TRUE(Succeeds(again));
        Bytes want(p, p + n);
        want[0] = static_cast<std::uint8_t>(want[0] & ~kCtrlRsvdMask);
        ASSERT_EQ(*again, want);
      }
    }

    // RFC 5043 5.2.2.
    auto chunk = decode_segment_chunk(buf);
    if (n < 2) {
      ASSERT_TRUE(FailsWith(chunk, Errc::kTruncated));
    } else {
      ASSERT_TRUE(Succeeds(chunk));
      ASSERT_EQ(chunk->ddp_ssn, (p[0] << 8) | p[1]);
      ASSERT_EQ(chunk->ddp_segment.data, p + 2);
      ASSERT_EQ(chunk->ddp_segment.size, n - 2);
      (void)decode_segment(chunk->ddp_segment);
    }

    // RFC 5043 5.2.3.
    auto sc = decode_session_control(buf);
    if (n < 4) {
      ASSERT_TRUE(FailsWith(sc, Errc::kTruncated));
    } else {
      const unsigned code = (unsigned{p[2]} << 8) | p[3];
      if (code < 1 || code > 4) {
        ASSERT_TRUE(FailsWith(sc, Errc::kUnknownFunctionCode));
      } else if (code == 4 && n > 4) {
        ASSERT_TRUE(FailsWith(sc, Errc::kPrivateDataOnTerminate));
      } else {
        ASSERT_TRUE(Succeeds(sc));
        auto enc = encode_session_control(*sc);
        ASSERT_TRUE(Succeeds(enc));
        ASSERT_EQ(*enc, Bytes(p, p + n));
      }
    }

    // RFC 5043 5.1.
    auto ai = decode_adaptation_indication(buf);
    if (n >= 8 && p[0] == 0xC0 && p[1] == 0x06 && p[2] == 0x00 && p[3] == 0x08) {
      ASSERT_TRUE(Succeeds(ai));
      ASSERT_EQ(*ai, load_be32(p + 4));
    } else {
      ASSERT_FALSE(ai.ok());
      ASSERT_TRUE(ai.error().code == Errc::kTruncated || ai.error().code == Errc::kBadParameter)
          << ai.error().message();
    }
  }
}

// The in-place big-endian stores (network byte order, RFC 9260 3) against the appending ones and the
// loads, at random offsets, touching nothing else.
TEST_F(RandomRoundTrip, StoreBeMatchesPutBeAndLoadBe) {
  SCOPED_TRACE(seed_trace());
  std::mt19937_64& rng = engine();
  for (int i = 0; i < 10000; ++i) {
    const auto v = static_cast<std::uint32_t>(rng());
    Bytes buf(12, 0xA5);
    const std::size_t at = rng() % 5;
    store_be32(buf.data() + at, v);
    Bytes want;
    put_be32(want, v);
    ASSERT_EQ(Bytes(buf.begin() + static_cast<std::ptrdiff_t>(at), buf.begin() + static_cast<std::ptrdiff_t>(at) + 4),
              want);
    ASSERT_EQ(load_be32(buf.data() + at), v);
    const std::size_t at16 = 8 + rng() % 3;
    store_be16(buf.data() + at16, static_cast<std::uint16_t>(v));
    ASSERT_EQ(load_be16(buf.data() + at16), static_cast<std::uint16_t>(v));
    for (std::size_t k = 0; k < buf.size(); ++k) {
      if ((k < at || k >= at + 4) && (k < at16 || k >= at16 + 2)) {
        ASSERT_EQ(buf[k], 0xA5) << k;
      }
    }
  }
}

// RFC 5041 5.2 property: for random lengths, MULPDUs and initial TOs the segments are contiguous,
// cover the message exactly, all but the last carry MULPDU - header bytes, L only on the last, and
// every encoded segment fits in MULPDU.
TEST_F(RandomSegmentation, Rfc5041Sec5_2_SegmentsTileTheMessage) {
  SCOPED_TRACE(seed_trace());
  std::mt19937_64& rng = engine();
  constexpr int kIterations = 400;
  for (int i = 0; i < kIterations; ++i) {
    const bool tagged_msg = coin(rng);
    const std::size_t hs = tagged_msg ? kTaggedHeaderSize : kUntaggedHeaderSize;
    const std::uint64_t len = uniform<std::uint64_t>(rng, 0, 100000);
    // Mostly uniform MULPDU, sometimes tiny (many segments), always >= header + 1.
    const std::size_t mulpdu =
        (rng() % 8 == 0) ? uniform<std::size_t>(rng, hs + 1, hs + 64) : uniform<std::size_t>(rng, hs + 1, 9000);
    std::uint64_t to = rng();
    // Near the top of the 64-bit TO space: TO + len lands on 2^64-2 .. 2^64+1 (the last two wrap).
    if (coin(rng)) to = std::numeric_limits<std::uint64_t>::max() - len + 2 - (rng() % 4);
    if (tagged_msg && len > std::numeric_limits<std::uint64_t>::max() - to) {
      ASSERT_TRUE(FailsWith(MessageSegmenter::tagged(1, to, 2, len, mulpdu), Errc::kTaggedOffsetWrap));
      to = std::numeric_limits<std::uint64_t>::max() - len;
    }
    const auto stag = static_cast<std::uint32_t>(rng());
    const auto rsvd8 = static_cast<std::uint8_t>(rng());
    const auto qn = static_cast<std::uint32_t>(rng());
    const auto msn = static_cast<std::uint32_t>(rng());
    const std::uint64_t rsvd40 = rng() & kUntaggedRsvdUlpMax;
    SCOPED_TRACE(::testing::Message() << "iteration " << i << (tagged_msg ? " tagged" : " untagged") << " len " << len
                                      << " MULPDU " << mulpdu << " TO " << to);

    auto s = tagged_msg ? MessageSegmenter::tagged(stag, to, rsvd8, len, mulpdu)
                        : MessageSegmenter::untagged(qn, msn, rsvd40, len, mulpdu);
    ASSERT_TRUE(Succeeds(s));
    const std::uint64_t chunk = mulpdu - hs;
    ASSERT_EQ(s->max_payload_per_segment(), chunk);
    ASSERT_EQ(s->message_length(), len);
    const std::uint64_t want_count = len == 0 ? 1 : (len + chunk - 1) / chunk;
    ASSERT_EQ(s->segment_count(), want_count);

    std::uint64_t next = 0;
    for (std::uint64_t k = 0; k < want_count; ++k) {
      const SegmentPlan p = s->segment(k);
      const bool last = k + 1 == want_count;
      ASSERT_EQ(p.message_offset, next) << "segment " << k << " not contiguous";
      if (!last) {
        ASSERT_EQ(p.payload_length, chunk) << "segment " << k;
      } else {
        ASSERT_LE(p.payload_length, chunk);
        ASSERT_TRUE(p.payload_length > 0 || len == 0) << "empty trailing segment";
      }
      ASSERT_LE(hs + p.payload_length, mulpdu) << "segment " << k;
      ASSERT_EQ(is_last(p.header), last) << "segment " << k;
      ASSERT_EQ(header_size(p.header), hs);
      if (tagged_msg) {
        const auto& h = std::get<TaggedHeader>(p.header);
        ASSERT_EQ(h.to, to + p.message_offset) << "segment " << k;
        ASSERT_EQ(h.stag, stag);
        ASSERT_EQ(h.rsvd_ulp, rsvd8);
        ASSERT_EQ(h.dv, kDdpVersion);
      } else {
        const auto& h = std::get<UntaggedHeader>(p.header);
        ASSERT_EQ(h.mo, p.message_offset) << "segment " << k;
        ASSERT_EQ(h.qn, qn);
        ASSERT_EQ(h.msn, msn);
        ASSERT_EQ(h.rsvd_ulp, rsvd40);
        ASSERT_EQ(h.dv, kDdpVersion);
      }
      next += p.payload_length;
    }
    ASSERT_EQ(next, len) << "segments must cover the message exactly";
    ASSERT_THROW((void)s->segment(want_count), std::out_of_range);
  }
}

}  // namespace
}  // namespace rnic::wire
