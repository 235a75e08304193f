// SPDX-License-Identifier: Apache-2.0
// RFC 5043: DDP Segment Chunk (5.2.2), DDP Stream Session Control (5.2.3), PPIDs (5.2 / 12),
// Adaptation Layer Indication (5.1).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "rnic/wire/ddp.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "test_util.hpp"

namespace rnic::wire {
namespace {

using test::Bytes;
using test::FailsWith;
using test::Succeeds;

Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes pattern(std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return b;
}

// ---------------------------------------------------------------------------------------------
// RFC 5043 5.2 / 12: Payload Protocol Identifiers.
// ---------------------------------------------------------------------------------------------

TEST(Rfc5043Ppid, Sec5_2_PpidValues) {
  EXPECT_EQ(kPpidDdpSegment, 16u);         // "DDP Segment Chunk - 16"
  EXPECT_EQ(kPpidDdpSessionControl, 17u);  // "DDP Stream Session Control - 17"
}

// ---------------------------------------------------------------------------------------------
// RFC 5043 5.2.2: DDP Segment Chunk = DDP-SSN (16 bits, network order) + DDP Segment.
// ---------------------------------------------------------------------------------------------

TEST(Rfc5043SegmentChunk, Sec5_2_2_EncodeExactBytes) {
  const Bytes seg{0xC1, 0x00, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, 0, 0, 0, 5, 0xEE};
  const Bytes chunk = encode_segment_chunk(0xABCD, seg);
  EXPECT_EQ(chunk, concat(Bytes{0xAB, 0xCD}, seg));
  EXPECT_EQ(encode_segment_chunk(0x0001, Bytes{}), (Bytes{0x00, 0x01}));
  EXPECT_EQ(encode_segment_chunk(0xFF00, Bytes{0x7F}), (Bytes{0xFF, 0x00, 0x7F}));
  EXPECT_EQ(encode_segment_chunk(0, ConstBytes{}), (Bytes{0x00, 0x00}));
}

TEST(Rfc5043SegmentChunk, Sec5_2_2_DecodeViewsSegmentAfterSsn) {
  TaggedHeader h;
  h.last = true;
  h.stag = 0x01020304u;
  h.to = 0x0A0B0C0D0E0F1011ull;
  auto seg = encode_segment(h, Bytes{1, 2, 3, 4});
  ASSERT_TRUE(Succeeds(seg));
  const Bytes chunk = encode_segment_chunk(0x8001, *seg);
  ASSERT_EQ(chunk.size(), 2u + seg->size());

  auto view = decode_segment_chunk(chunk);
  ASSERT_TRUE(Succeeds(view));
  EXPECT_EQ(view->ddp_ssn, 0x8001u);
  EXPECT_EQ(view->ddp_segment.data, chunk.data() + 2);
  EXPECT_EQ(view->ddp_segment.size, seg->size());
  EXPECT_EQ(view->ddp_segment.to_vector(), *seg);

  auto dec = decode_segment(view->ddp_segment);
  ASSERT_TRUE(Succeeds(dec));
  EXPECT_EQ(std::get<TaggedHeader>(dec->header), h);
  EXPECT_EQ(dec->payload.to_vector(), (Bytes{1, 2, 3, 4}));
}

TEST(Rfc5043SegmentChunk, Sec5_2_2_ShorterThanSsnTruncated) {
  EXPECT_TRUE(FailsWith(decode_segment_chunk(ConstBytes{}), Errc::kTruncated));
  EXPECT_TRUE(FailsWith(decode_segment_chunk(Bytes{}), Errc::kTruncated));
  EXPECT_TRUE(FailsWith(decode_segment_chunk(Bytes{0x12}), Errc::kTruncated));
  auto two = decode_segment_chunk(Bytes{0x12, 0x34});
  ASSERT_TRUE(Succeeds(two));
  EXPECT_EQ(two->ddp_ssn, 0x1234u);
  EXPECT_EQ(two->ddp_segment.size, 0u);
  // The inner DDP segment is then empty, hence truncated.
  EXPECT_TRUE(FailsWith(decode_segment(two->ddp_segment), Errc::kTruncated));
}

// ---------------------------------------------------------------------------------------------
// RFC 5043 5.2.3: DDP Stream Session Control = DDP-SSN(16) + Function Code(16) + Private Data.
// ---------------------------------------------------------------------------------------------

TEST(Rfc5043SessionControl, Sec5_2_3_FunctionCodeValuesAndNames) {
  EXPECT_EQ(static_cast<std::uint16_t>(SessionFunction::kInitiate), 0x001u);
  EXPECT_EQ(static_cast<std::uint16_t>(SessionFunction::kAccept), 0x002u);
  EXPECT_EQ(static_cast<std::uint16_t>(SessionFunction::kReject), 0x003u);
  EXPECT_EQ(static_cast<std::uint16_t>(SessionFunction::kTerminate), 0x004u);
  EXPECT_STREQ(session_function_name(SessionFunction::kInitiate), "Initiate");
  EXPECT_STREQ(session_function_name(SessionFunction::kAccept), "Accept");
  EXPECT_STREQ(session_function_name(SessionFunction::kReject), "Reject");
  EXPECT_STREQ(session_function_name(SessionFunction::kTerminate), "Terminate");
  EXPECT_STREQ(session_function_name(static_cast<SessionFunction>(0)), "?");
  EXPECT_EQ(kMaxPrivateData, 512u);
  EXPECT_EQ(kSessionControlHeaderSize, 4u);
  EXPECT_EQ(kDdpSsnSize, 2u);
}

// Initiate / Accept / Reject with 0, 1 and 512 bytes of private data (the maximum, 5.2.3).
TEST(Rfc5043SessionControl, Sec5_2_3_RoundTripAllFunctionsPrivateData0_1_512) {
  for (SessionFunction f : {SessionFunction::kInitiate, SessionFunction::kAccept, SessionFunction::kReject}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{512}}) {
      SCOPED_TRACE(::testing::Message() << session_function_name(f) << " with " << n << " bytes");
      SessionControl m;
      m.ddp_ssn = 0x1357;
      m.function = f;
      m.private_data = pattern(n);
      auto enc = encode_session_control(m);
      ASSERT_TRUE(Succeeds(enc));
      const auto code = static_cast<std::uint8_t>(f);
      EXPECT_EQ(*enc, concat(Bytes{0x13, 0x57, 0x00, code}, m.private_data));
      auto dec = decode_session_control(*enc);
      ASSERT_TRUE(Succeeds(dec));
      EXPECT_EQ(*dec, m);
    }
  }
  // Terminate: header only.
  SessionControl t;
  t.ddp_ssn = 0xFEDC;
  t.function = SessionFunction::kTerminate;
  auto enc = encode_session_control(t);
  ASSERT_TRUE(Succeeds(enc));
  EXPECT_EQ(*enc, (Bytes{0xFE, 0xDC, 0x00, 0x04}));
  auto dec = decode_session_control(*enc);
  ASSERT_TRUE(Succeeds(dec));
  EXPECT_EQ(*dec, t);
}

// "Private Data length MUST NOT exceed 512 bytes in any message."
TEST(Rfc5043SessionControl, Sec5_2_3_PrivateData513Refused) {
  for (SessionFunction f : {SessionFunction::kInitiate, SessionFunction::kAccept, SessionFunction::kReject}) {
    SessionControl m;
    m.function = f;
    m.private_data = pattern(513);
    EXPECT_TRUE(FailsWith(encode_session_control(m), Errc::kPrivateDataTooLong)) << session_function_name(f);
    const Bytes wire = concat(Bytes{0x00, 0x01, 0x00, static_cast<std::uint8_t>(f)}, pattern(513));
    EXPECT_TRUE(FailsWith(decode_session_control(wire), Errc::kPrivateDataTooLong)) << session_function_name(f);
    const Bytes wire512(wire.begin(), wire.end() - 1);
    EXPECT_TRUE(Succeeds(decode_session_control(wire512)));
  }
}

// "Private Data MUST NOT be included in the DDP Stream Session Terminate message."
TEST(Rfc5043SessionControl, Sec5_2_3_PrivateDataOnTerminateRefused) {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{512}}) {
    SessionControl m;
    m.function = SessionFunction::kTerminate;
    m.private_data = pattern(n);
    EXPECT_TRUE(FailsWith(encode_session_control(m), Errc::kPrivateDataOnTerminate)) << n;
    const Bytes wire = concat(Bytes{0x00, 0x09, 0x00, 0x04}, pattern(n));
    EXPECT_TRUE(FailsWith(decode_session_control(wire), Errc::kPrivateDataOnTerminate)) << n;
  }
}

// Function codes other than 0x001..0x004 are not defined by 5.2.3.
TEST(Rfc5043SessionControl, Sec5_2_3_UnknownFunctionCodesRefused) {
  for (std::uint16_t code : {std::uint16_t{0}, std::uint16_t{5}, std::uint16_t{0x0100}, std::uint16_t{0x0101},
                             std::uint16_t{0x8001}, std::uint16_t{0xFFFF}}) {
    SessionControl m;
    m.function = static_cast<SessionFunction>(code);
    EXPECT_TRUE(FailsWith(encode_session_control(m), Errc::kUnknownFunctionCode)) << code;
    const Bytes wire{0x00, 0x01, static_cast<std::uint8_t>(code >> 8), static_cast<std::uint8_t>(code)};
    EXPECT_TRUE(FailsWith(decode_session_control(wire), Errc::kUnknownFunctionCode)) << code;
    EXPECT_TRUE(FailsWith(decode_session_control(concat(wire, Bytes{1, 2})), Errc::kUnknownFunctionCode)) << code;
  }
}

TEST(Rfc5043SessionControl, Sec5_2_3_ShorterThan4BytesTruncated) {
  const Bytes full{0x00, 0x01, 0x00, 0x01};
  for (std::size_t n = 0; n < 4; ++n) {
    const Bytes p(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_TRUE(FailsWith(decode_session_control(p), Errc::kTruncated)) << n;
  }
  EXPECT_TRUE(FailsWith(decode_session_control(ConstBytes{}), Errc::kTruncated));
  auto ok = decode_session_control(full);
  ASSERT_TRUE(Succeeds(ok));
  EXPECT_EQ(ok->ddp_ssn, 1u);
  EXPECT_EQ(ok->function, SessionFunction::kInitiate);
  EXPECT_TRUE(ok->private_data.empty());
}

// The decoded private data is a copy, not a view into the message buffer.
TEST(Rfc5043SessionControl, Sec5_2_3_DecodedPrivateDataIsOwned) {
  Bytes wire{0x00, 0x02, 0x00, 0x02, 0xAA, 0xBB};
  auto dec = decode_session_control(wire);
  ASSERT_TRUE(Succeeds(dec));
  wire.assign(wire.size(), 0);
  EXPECT_EQ(dec->private_data, (Bytes{0xAA, 0xBB}));
  EXPECT_EQ(dec->ddp_ssn, 2u);
  EXPECT_EQ(dec->function, SessionFunction::kAccept);
}

// ---------------------------------------------------------------------------------------------
// RFC 5043 5.1: Adaptation Layer Indication parameter, Type 0xC006, Length 8, indication 1.
// ---------------------------------------------------------------------------------------------

TEST(Rfc5043AdaptationIndication, Sec5_1_EncodeExactBytes) {
  EXPECT_EQ(kAdaptationIndicationParamType, 0xC006u);
  EXPECT_EQ(kDdpAdaptationIndication, 0x00000001u);
  const auto p = encode_adaptation_indication();
  const std::array<std::uint8_t, 8> want{0xC0, 0x06, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01};
  EXPECT_EQ(p, want);
  const std::array<std::uint8_t, 8> other{0xC0, 0x06, 0x00, 0x08, 0xDE, 0xAD, 0xBE, 0xEF};
  EXPECT_EQ(encode_adaptation_indication(0xDEADBEEFu), other);
}

TEST(Rfc5043AdaptationIndication, Sec5_1_Decode) {
  const Bytes wire{0xC0, 0x06, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01};
  auto v = decode_adaptation_indication(wire);
  ASSERT_TRUE(Succeeds(v));
  EXPECT_EQ(*v, 1u);
  EXPECT_TRUE(indicates_ddp(*v));
  auto o = decode_adaptation_indication(Bytes{0xC0, 0x06, 0x00, 0x08, 0x12, 0x34, 0x56, 0x78});
  ASSERT_TRUE(Succeeds(o));
  EXPECT_EQ(*o, 0x12345678u);
  EXPECT_FALSE(indicates_ddp(*o));
  EXPECT_FALSE(indicates_ddp(0));
  EXPECT_FALSE(indicates_ddp(0x01000000u));
  const auto enc = encode_adaptation_indication();
  auto rt = decode_adaptation_indication(ConstBytes(enc.data(), enc.size()));
  ASSERT_TRUE(Succeeds(rt));
  EXPECT_EQ(*rt, kDdpAdaptationIndication);
}

TEST(Rfc5043AdaptationIndication, Sec5_1_WrongTypeRefused) {
  for (std::uint16_t type : {std::uint16_t{0x0006}, std::uint16_t{0xC007}, std::uint16_t{0x06C0}, std::uint16_t{0x8006},
                             std::uint16_t{0x0000}}) {
    const Bytes wire{
        static_cast<std::uint8_t>(type >> 8), static_cast<std::uint8_t>(type), 0x00, 0x08, 0x00, 0x00, 0x00, 0x01};
    EXPECT_TRUE(FailsWith(decode_adaptation_indication(wire), Errc::kBadParameter)) << type;
  }
}

TEST(Rfc5043AdaptationIndication, Sec5_1_WrongLengthRefused) {
  for (std::uint16_t len : {std::uint16_t{0}, std::uint16_t{4}, std::uint16_t{7}, std::uint16_t{9}, std::uint16_t{12},
                            std::uint16_t{0x0800}, std::uint16_t{0xFFFF}}) {
    const Bytes wire{0xC0, 0x06, static_cast<std::uint8_t>(len >> 8), static_cast<std::uint8_t>(len), 0x00, 0x00,
                     0x00, 0x01};
    EXPECT_TRUE(FailsWith(decode_adaptation_indication(wire), Errc::kBadParameter)) << len;
  }
}

TEST(Rfc5043AdaptationIndication, Sec5_1_TruncatedRefused) {
  const Bytes full{0xC0, 0x06, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01};
  for (std::size_t n = 0; n < 8; ++n) {
    const Bytes p(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_TRUE(FailsWith(decode_adaptation_indication(p), Errc::kTruncated)) << n;
  }
  EXPECT_TRUE(FailsWith(decode_adaptation_indication(ConstBytes{}), Errc::kTruncated));
}

}  // namespace
}  // namespace rnic::wire
