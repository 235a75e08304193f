// SPDX-License-Identifier: Apache-2.0
// RFC 5041 section 4: the DDP control field (4.1), tagged header (4.2), untagged header (4.3),
// segment format (4.4), DV checking (7.2 "Invalid DDP version"), and truncated inputs.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

#include "rnic/wire/ddp.hpp"
#include "test_util.hpp"

namespace rnic::wire {
namespace {

using test::Bytes;
using test::FailsWith;
using test::Succeeds;

Bytes encode_ok(const DdpHeader& h) {
  Bytes out;
  auto st = encode_header(h, out);
  EXPECT_TRUE(Succeeds(st));
  return out;
}

// ---------------------------------------------------------------------------------------------
// RFC 5041 4.1: DDP Control Field  |T|L| Rsvd(4) |DV(2)|
// ---------------------------------------------------------------------------------------------

TEST(Rfc5041ControlField, Sec4_1_BitConstantsMatchFigure3) {
  EXPECT_EQ(kCtrlTagged, 0x80u);
  EXPECT_EQ(kCtrlLast, 0x40u);
  EXPECT_EQ(kCtrlRsvdMask, 0x3Cu);
  EXPECT_EQ(kCtrlDvMask, 0x03u);
  EXPECT_EQ(kDdpVersion, 1u);  // "This field MUST be set to one"
}

// RFC 5041 4.1: every T, L, DV combination encodes to the exact byte and decodes back.
TEST(Rfc5041ControlField, Sec4_1_EveryTLDVCombinationExactByte) {
  for (int t = 0; t < 2; ++t) {
    for (int l = 0; l < 2; ++l) {
      for (std::uint8_t dv = 0; dv < 4; ++dv) {
        SCOPED_TRACE(::testing::Message() << "T=" << t << " L=" << l << " DV=" << int{dv});
        const ControlField c{t != 0, l != 0, dv};
        const auto expected = static_cast<std::uint8_t>((t ? 0x80 : 0) | (l ? 0x40 : 0) | dv);
        auto enc = encode_control(c);
        ASSERT_TRUE(Succeeds(enc));
        EXPECT_EQ(*enc, expected);
        EXPECT_EQ(*enc & kCtrlRsvdMask, 0) << "Rsvd MUST be set to zero on transmit";
        EXPECT_EQ(decode_control(expected), c);
      }
    }
  }
}

// RFC 5041 4.1: Rsvd "not checked on receive": any Rsvd value decodes to the same field.
TEST(Rfc5041ControlField, Sec4_1_RsvdIgnoredOnDecode_AllBytes) {
  for (unsigned b = 0; b < 256; ++b) {
    const auto byte = static_cast<std::uint8_t>(b);
    const ControlField c = decode_control(byte);
    EXPECT_EQ(c.tagged, (b & 0x80u) != 0) << "byte " << b;
    EXPECT_EQ(c.last, (b & 0x40u) != 0) << "byte " << b;
    EXPECT_EQ(c.dv, b & 0x03u) << "byte " << b;
    const auto no_rsvd = static_cast<std::uint8_t>(b & ~0x3Cu);
    EXPECT_EQ(c, decode_control(no_rsvd)) << "byte " << b;
  }
}

// RFC 5041 4.1: DV is 2 bits; DV > 3 does not fit and is refused.
TEST(Rfc5041ControlField, Sec4_1_DvAbove3Refused) {
  for (unsigned dv = 4; dv < 256; ++dv) {
    for (bool t : {false, true}) {
      EXPECT_TRUE(FailsWith(encode_control({t, true, static_cast<std::uint8_t>(dv)}), Errc::kFieldOutOfRange))
          << "DV " << dv;
    }
  }
}

// RFC 5041 4.1/4.2/4.3: a header with DV > 3 is refused and nothing is appended.
TEST(Rfc5041ControlField, Sec4_1_HeaderWithDvAbove3RefusedAppendsNothing) {
  Bytes out{0xEE};
  TaggedHeader t;
  t.dv = 4;
  EXPECT_TRUE(FailsWith(encode_header(t, out), Errc::kFieldOutOfRange));
  UntaggedHeader u;
  u.dv = 0xFF;
  EXPECT_TRUE(FailsWith(encode_header(u, out), Errc::kFieldOutOfRange));
  EXPECT_EQ(out, Bytes{0xEE});
  EXPECT_TRUE(FailsWith(encode_segment(t, Bytes{1, 2, 3}), Errc::kFieldOutOfRange));
  EXPECT_TRUE(FailsWith(encode_segment(u, Bytes{}), Errc::kFieldOutOfRange));
}

// ---------------------------------------------------------------------------------------------
// RFC 5041 4.2: tagged header, 14 bytes: ctrl, RsvdULP(8), STag(32), TO(64), network byte order.
// ---------------------------------------------------------------------------------------------

TEST(Rfc5041TaggedHeader, Sec4_2_HeaderSizeIs14) {
  EXPECT_EQ(kTaggedHeaderSize, 14u);
  EXPECT_EQ(header_size(DdpHeader{TaggedHeader{}}), 14u);
  EXPECT_TRUE(is_tagged(DdpHeader{TaggedHeader{}}));
  EXPECT_EQ(encode_ok(TaggedHeader{}).size(), 14u);
}

struct TaggedCase {
  const char* what;
  TaggedHeader h;
  std::array<std::uint8_t, 14> wire;
};

TaggedHeader tagged(bool last, std::uint8_t dv, std::uint8_t rsvd_ulp, std::uint32_t stag, std::uint64_t to) {
  TaggedHeader h;
  h.last = last;
  h.dv = dv;
  h.rsvd_ulp = rsvd_ulp;
  h.stag = stag;
  h.to = to;
  return h;
}

// RFC 5041 4.2 (Figure 4): each field independently, then all together, against hand-written bytes.
TEST(Rfc5041TaggedHeader, Sec4_2_ExactByteLayout) {
  const TaggedCase cases[] = {
      {"all zero, DV 0",
       tagged(false, 0, 0, 0, 0),
       {0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"DV 1",
       tagged(false, 1, 0, 0, 0),
       {0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"DV 3",
       tagged(false, 3, 0, 0, 0),
       {0x83, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"L only",
       tagged(true, 0, 0, 0, 0),
       {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"RsvdULP only",
       tagged(false, 0, 0xA5, 0, 0),
       {0x80, 0xA5, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"STag only",
       tagged(false, 0, 0, 0x01234567u, 0),
       {0x80, 0x00, 0x01, 0x23, 0x45, 0x67, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"TO only",
       tagged(false, 0, 0, 0, 0x0102030405060708ull),
       {0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}},
      {"TO high bit",
       tagged(false, 0, 0, 0, 0x8000000000000000ull),
       {0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"TO low bit",
       tagged(false, 0, 0, 0, 1),
       {0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}},
      {"all fields",
       tagged(true, 1, 0x5A, 0xDEADBEEFu, 0x89ABCDEF01234567ull),
       {0xC1, 0x5A, 0xDE, 0xAD, 0xBE, 0xEF, 0x89, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67}},
      {"all ones",
       tagged(true, 3, 0xFF, 0xFFFFFFFFu, 0xFFFFFFFFFFFFFFFFull),
       {0xC3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const Bytes want(c.wire.begin(), c.wire.end());
    const Bytes got = encode_ok(c.h);
    EXPECT_EQ(got, want) << "got  " << test::hex(got) << "\nwant " << test::hex(want);
    auto dec = decode_segment(want);
    ASSERT_TRUE(Succeeds(dec));
    ASSERT_TRUE(is_tagged(dec->header));
    EXPECT_EQ(std::get<TaggedHeader>(dec->header), c.h);
    EXPECT_EQ(dec->payload.size, 0u);
  }
}

// RFC 5041 4.2 + 4.1: Rsvd bits set in a received tagged header are ignored.
TEST(Rfc5041TaggedHeader, Sec4_1_RsvdBitsIgnoredInTaggedHeader) {
  const TaggedHeader h = tagged(true, 1, 0x12, 0x34567890u, 0x1122334455667788ull);
  Bytes wire = encode_ok(h);
  for (unsigned rsvd = 0; rsvd < 16; ++rsvd) {
    Bytes w = wire;
    w[0] = static_cast<std::uint8_t>(w[0] | (rsvd << 2));
    auto dec = decode_segment(w);
    ASSERT_TRUE(Succeeds(dec));
    EXPECT_EQ(std::get<TaggedHeader>(dec->header), h) << "rsvd " << rsvd;
  }
}

// ---------------------------------------------------------------------------------------------
// RFC 5041 4.3: untagged header, 18 bytes: ctrl, RsvdULP(40), QN(32), MSN(32), MO(32).
// ---------------------------------------------------------------------------------------------

TEST(Rfc5041UntaggedHeader, Sec4_3_HeaderSizeIs18) {
  EXPECT_EQ(kUntaggedHeaderSize, 18u);
  EXPECT_EQ(header_size(DdpHeader{UntaggedHeader{}}), 18u);
  EXPECT_FALSE(is_tagged(DdpHeader{UntaggedHeader{}}));
  EXPECT_EQ(encode_ok(UntaggedHeader{}).size(), 18u);
  EXPECT_EQ(kUntaggedRsvdUlpMax, 0xFFFFFFFFFFull);
}

UntaggedHeader untagged(bool last, std::uint8_t dv, std::uint64_t rsvd_ulp, std::uint32_t qn, std::uint32_t msn,
                        std::uint32_t mo) {
  UntaggedHeader h;
  h.last = last;
  h.dv = dv;
  h.rsvd_ulp = rsvd_ulp;
  h.qn = qn;
  h.msn = msn;
  h.mo = mo;
  return h;
}

struct UntaggedCase {
  const char* what;
  UntaggedHeader h;
  std::array<std::uint8_t, 18> wire;
};

// RFC 5041 4.3 (Figure 5): each field independently, then all together, against hand-written bytes.
TEST(Rfc5041UntaggedHeader, Sec4_3_ExactByteLayout) {
  const UntaggedCase cases[] = {
      {"all zero, DV 0",
       untagged(false, 0, 0, 0, 0, 0),
       {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"DV 1",
       untagged(false, 1, 0, 0, 0, 0),
       {0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"DV 2",
       untagged(false, 2, 0, 0, 0, 0),
       {0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"L only",
       untagged(true, 0, 0, 0, 0, 0),
       {0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"RsvdULP only",
       untagged(false, 0, 0x0102030405ull, 0, 0, 0),
       {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"RsvdULP[0:7] only (MSB)",
       untagged(false, 0, 0x8000000000ull, 0, 0, 0),
       {0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"RsvdULP LSB",
       untagged(false, 0, 1, 0, 0, 0),
       {0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"QN only",
       untagged(false, 0, 0, 0x0A0B0C0Du, 0, 0),
       {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0A, 0x0B, 0x0C, 0x0D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
      {"MSN only",
       untagged(false, 0, 0, 0, 0x11121314u, 0),
       {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x12, 0x13, 0x14, 0x00, 0x00, 0x00, 0x00}},
      {"MO only",
       untagged(false, 0, 0, 0, 0, 0x21222324u),
       {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21, 0x22, 0x23, 0x24}},
      {"all fields",
       untagged(true, 1, 0xA1A2A3A4A5ull, 0xB1B2B3B4u, 0xC1C2C3C4u, 0xD1D2D3D4u),
       {0x41, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xB1, 0xB2, 0xB3, 0xB4, 0xC1, 0xC2, 0xC3, 0xC4, 0xD1, 0xD2, 0xD3, 0xD4}},
      {"all ones",
       untagged(true, 3, 0xFFFFFFFFFFull, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu),
       {0x43, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const Bytes want(c.wire.begin(), c.wire.end());
    const Bytes got = encode_ok(c.h);
    EXPECT_EQ(got, want) << "got  " << test::hex(got) << "\nwant " << test::hex(want);
    auto dec = decode_segment(want);
    ASSERT_TRUE(Succeeds(dec));
    ASSERT_FALSE(is_tagged(dec->header));
    EXPECT_EQ(std::get<UntaggedHeader>(dec->header), c.h);
    EXPECT_EQ(dec->payload.size, 0u);
  }
}

// RFC 5041 4.3: RsvdULP is 40 bits; a wider value is refused and nothing is appended.
TEST(Rfc5041UntaggedHeader, Sec4_3_RsvdUlpAbove40BitsRefused) {
  for (std::uint64_t v : {std::uint64_t{1} << 40, (std::uint64_t{1} << 40) + 1, std::uint64_t{1} << 63,
                          std::numeric_limits<std::uint64_t>::max()}) {
    Bytes out{0x77, 0x66};
    EXPECT_TRUE(FailsWith(encode_header(untagged(false, 1, v, 1, 2, 3), out), Errc::kFieldOutOfRange))
        << "RsvdULP 0x" << std::hex << v;
    EXPECT_EQ(out, (Bytes{0x77, 0x66})) << "a refused header must append nothing";
    EXPECT_TRUE(FailsWith(encode_segment(untagged(true, 1, v, 0, 0, 0), Bytes{9}), Errc::kFieldOutOfRange));
  }
  EXPECT_TRUE(Succeeds(encode_segment(untagged(true, 1, kUntaggedRsvdUlpMax, 0, 0, 0), Bytes{})));
}

// RFC 5041 4.3 + 4.1: Rsvd bits set in a received untagged header are ignored.
TEST(Rfc5041UntaggedHeader, Sec4_1_RsvdBitsIgnoredInUntaggedHeader) {
  const UntaggedHeader h = untagged(false, 1, 0x123456789Aull, 7, 8, 9);
  const Bytes wire = encode_ok(h);
  for (unsigned rsvd = 0; rsvd < 16; ++rsvd) {
    Bytes w = wire;
    w[0] = static_cast<std::uint8_t>(w[0] | (rsvd << 2));
    auto dec = decode_segment(w);
    ASSERT_TRUE(Succeeds(dec));
    EXPECT_EQ(std::get<UntaggedHeader>(dec->header), h) << "rsvd " << rsvd;
  }
}

// ---------------------------------------------------------------------------------------------
// RFC 5041 4.4: a segment is the header followed by the ULP payload (if any).
// ---------------------------------------------------------------------------------------------

TEST(Rfc5041SegmentFormat, Sec4_4_PayloadFollowsTaggedHeader) {
  const Bytes payload{0x10, 0x20, 0x30, 0x40, 0x50};
  const TaggedHeader h = tagged(true, 1, 3, 0xCAFEF00Du, 42);
  auto seg = encode_segment(h, payload);
  ASSERT_TRUE(Succeeds(seg));
  ASSERT_EQ(seg->size(), 14u + payload.size());
  EXPECT_EQ(Bytes(seg->begin(), seg->begin() + 14), encode_ok(h));
  EXPECT_EQ(Bytes(seg->begin() + 14, seg->end()), payload);

  auto dec = decode_segment(*seg);
  ASSERT_TRUE(Succeeds(dec));
  EXPECT_EQ(std::get<TaggedHeader>(dec->header), h);
  EXPECT_EQ(dec->payload.data, seg->data() + 14) << "payload must be a view after the header";
  EXPECT_EQ(dec->payload.size, payload.size());
  EXPECT_EQ(dec->payload.to_vector(), payload);
  EXPECT_TRUE(is_last(dec->header));
}

TEST(Rfc5041SegmentFormat, Sec4_4_PayloadFollowsUntaggedHeader) {
  const Bytes payload{0xAA, 0xBB, 0xCC};
  const UntaggedHeader h = untagged(false, 1, 5, 6, 7, 8);
  auto seg = encode_segment(h, payload);
  ASSERT_TRUE(Succeeds(seg));
  ASSERT_EQ(seg->size(), 18u + payload.size());
  EXPECT_EQ(Bytes(seg->begin(), seg->begin() + 18), encode_ok(h));
  EXPECT_EQ(Bytes(seg->begin() + 18, seg->end()), payload);

  auto dec = decode_segment(*seg);
  ASSERT_TRUE(Succeeds(dec));
  EXPECT_EQ(std::get<UntaggedHeader>(dec->header), h);
  EXPECT_EQ(dec->payload.data, seg->data() + 18);
  EXPECT_EQ(dec->payload.to_vector(), payload);
  EXPECT_FALSE(is_last(dec->header));
}

// RFC 5041 4.4/5.2: a header-only segment (zero-length payload) decodes with an empty payload.
TEST(Rfc5041SegmentFormat, Sec4_4_HeaderOnlySegments) {
  auto t = encode_segment(tagged(true, 1, 0, 1, 2), ConstBytes{});
  ASSERT_TRUE(Succeeds(t));
  EXPECT_EQ(t->size(), 14u);
  auto u = encode_segment(untagged(true, 1, 0, 1, 2, 3), ConstBytes{});
  ASSERT_TRUE(Succeeds(u));
  EXPECT_EQ(u->size(), 18u);
  auto dt = decode_segment(*t);
  ASSERT_TRUE(Succeeds(dt));
  EXPECT_EQ(dt->payload.size, 0u);
  auto du = decode_segment(*u);
  ASSERT_TRUE(Succeeds(du));
  EXPECT_EQ(du->payload.size, 0u);
}

// RFC 5041 4.1 T bit selects the header length: a 14..17 byte buffer is a complete tagged
// segment but a truncated untagged one.
TEST(Rfc5041SegmentFormat, Sec4_1_TBitSelectsHeaderLength) {
  for (std::size_t n = 14; n < 18; ++n) {
    Bytes tb(n, 0x00);
    tb[0] = 0x81;
    auto dt = decode_segment(tb);
    ASSERT_TRUE(Succeeds(dt)) << n;
    EXPECT_TRUE(is_tagged(dt->header));
    EXPECT_EQ(dt->payload.size, n - 14);
    Bytes ub(n, 0x00);
    ub[0] = 0x01;
    EXPECT_TRUE(FailsWith(decode_segment(ub), Errc::kTruncated)) << n;
  }
}

// ---------------------------------------------------------------------------------------------
// RFC 5041 4.1 DV + 7.2: DV != 1 is "Invalid DDP version" for the header's buffer model.
// ---------------------------------------------------------------------------------------------

TEST(Rfc5041Version, Sec7_2_CheckVersionTagged) {
  for (std::uint8_t dv = 0; dv < 4; ++dv) {
    const auto r = check_version(tagged(false, dv, 0, 0, 0));
    if (dv == 1) {
      EXPECT_EQ(r, std::nullopt);
    } else {
      EXPECT_EQ(r, DdpError::kTaggedInvalidVersion) << "DV " << int{dv};
    }
  }
}

TEST(Rfc5041Version, Sec7_2_CheckVersionUntagged) {
  for (std::uint8_t dv = 0; dv < 4; ++dv) {
    const auto r = check_version(untagged(true, dv, 0, 0, 0, 0));
    if (dv == 1) {
      EXPECT_EQ(r, std::nullopt);
    } else {
      EXPECT_EQ(r, DdpError::kUntaggedInvalidVersion) << "DV " << int{dv};
    }
  }
}

// RFC 5041 4.1 + 7.2: DV read off the wire drives check_version.
TEST(Rfc5041Version, Sec7_2_CheckVersionFromWire) {
  for (unsigned b = 0; b < 256; ++b) {
    Bytes w(18, 0x5A);
    w[0] = static_cast<std::uint8_t>(b);
    auto dec = decode_segment(w);
    ASSERT_TRUE(Succeeds(dec));
    const auto r = check_version(dec->header);
    if ((b & 3u) == 1u) {
      EXPECT_EQ(r, std::nullopt) << "byte " << b;
    } else if (b & 0x80u) {
      EXPECT_EQ(r, DdpError::kTaggedInvalidVersion) << "byte " << b;
    } else {
      EXPECT_EQ(r, DdpError::kUntaggedInvalidVersion) << "byte " << b;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Truncated / malformed inputs (4.2, 4.3): never read past the buffer, always kTruncated.
// ---------------------------------------------------------------------------------------------

// Copy of the first n bytes in an exactly-sized heap block, so ASan sees any over-read.
Bytes prefix(const Bytes& b, std::size_t n) { return Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n)); }

TEST(Rfc5041Truncated, Sec4_2_EveryPrefixOfTaggedHeader) {
  const Bytes full = encode_ok(tagged(true, 1, 0xAB, 0x01020304u, 0x0506070809101112ull));
  ASSERT_EQ(full.size(), 14u);
  for (std::size_t n = 0; n < full.size(); ++n) {
    EXPECT_TRUE(FailsWith(decode_segment(prefix(full, n)), Errc::kTruncated)) << "prefix " << n;
  }
  EXPECT_TRUE(Succeeds(decode_segment(full)));
}

TEST(Rfc5041Truncated, Sec4_3_EveryPrefixOfUntaggedHeader) {
  const Bytes full = encode_ok(untagged(true, 1, 0xABCDEF0123ull, 1, 2, 3));
  ASSERT_EQ(full.size(), 18u);
  for (std::size_t n = 0; n < full.size(); ++n) {
    EXPECT_TRUE(FailsWith(decode_segment(prefix(full, n)), Errc::kTruncated)) << "prefix " << n;
  }
  EXPECT_TRUE(Succeeds(decode_segment(full)));
}

TEST(Rfc5041Truncated, Sec4_4_EmptyBufferAndNullView) {
  EXPECT_TRUE(FailsWith(decode_segment(ConstBytes{}), Errc::kTruncated));
  EXPECT_TRUE(FailsWith(decode_segment(Bytes{}), Errc::kTruncated));
}

// Every possible first byte, with every short length: kTruncated below the header size the T bit
// announces, a header equal to decode_control() at exactly that size.
TEST(Rfc5041Truncated, Sec4_1_EveryFirstByteWithShortBuffers) {
  for (unsigned b = 0; b < 256; ++b) {
    const auto byte = static_cast<std::uint8_t>(b);
    const std::size_t need = (b & 0x80u) ? 14 : 18;
    for (std::size_t n = 1; n <= need; ++n) {
      Bytes w(n, 0xFF);
      w[0] = byte;
      auto dec = decode_segment(w);
      if (n < need) {
        EXPECT_TRUE(FailsWith(dec, Errc::kTruncated)) << "first byte " << b << " length " << n;
        continue;
      }
      ASSERT_TRUE(Succeeds(dec)) << "first byte " << b;
      const ControlField c = decode_control(byte);
      EXPECT_EQ(is_tagged(dec->header), c.tagged);
      EXPECT_EQ(is_last(dec->header), c.last);
      EXPECT_EQ(std::visit([](const auto& h) { return h.dv; }, dec->header), c.dv);
      EXPECT_EQ(dec->payload.size, 0u);
    }
  }
}

}  // namespace
}  // namespace rnic::wire
