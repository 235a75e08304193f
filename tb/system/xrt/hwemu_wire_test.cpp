// SPDX-License-Identifier: Apache-2.0
// The hardware-emulation wire format rnic-sim --xrt speaks with XRT 2.13 (sim/hwemu: rnic/hwemu/wire.hpp):
// the framing bytes XRT sends and expects (known answers captured from the real libxrt_hwemu), the
// protobuf subset in both directions, and a decoder that refuses every malformed message and never
// reads outside it (random bytes, seeded).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "rnic/hwemu/wire.hpp"
#include "rnic/tb/seed.hpp"

namespace rnic::hwemu {
namespace {

std::vector<std::uint8_t> bytes(std::initializer_list<int> v) {
  std::vector<std::uint8_t> out;
  for (int b : v) out.push_back(static_cast<std::uint8_t>(b));
  return out;
}

bool parses(const std::vector<std::uint8_t>& b) {
  Message m;
  return m.parse(b.data(), b.size());
}

// The header XRT 2.13 sent for ip.read_register(0x10) on a CU at 0x1800000: call 11
// (xclReadAddrKernelCtrl), an 11-byte body {2: 0x1800010, 3: 4, 5: 0, 6: 0}.
TEST(HwemuWire, CallHeaderIsXrtsFourteenBytes) {
  const std::uint8_t seen[kCallHeaderBytes] = {0x09, 0x0b, 0, 0, 0, 0, 0, 0, 0, 0x15, 0x0b, 0, 0, 0};
  const auto h = decode_call_header(seen);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->size, 11u);
  EXPECT_EQ(h->call, static_cast<std::uint32_t>(Call::kReadKernelCtrl));
  std::uint8_t mine[kCallHeaderBytes];
  encode_call_header(mine, 11, static_cast<std::uint32_t>(Call::kReadKernelCtrl));
  EXPECT_EQ(0, std::memcmp(mine, seen, sizeof seen));

  const auto body = Writer().varint(2, 0x1800010).varint(3, 4).varint(5, 0).varint(6, 0).data();
  EXPECT_EQ(body.size(), 11u);
  Message m;
  ASSERT_TRUE(m.parse(body.data(), body.size()));
  EXPECT_EQ(m.number(2), 0x1800010u);
  EXPECT_EQ(m.number(3), 4u);
}

TEST(HwemuWire, CallHeaderWithOtherTagsIsRefused) {
  std::uint8_t h[kCallHeaderBytes];
  encode_call_header(h, 1, 1);
  h[0] = 0x08;  // field 1 as a varint: not XRT's header
  EXPECT_FALSE(decode_call_header(h));
  encode_call_header(h, 1, 1);
  h[9] = 0x10;
  EXPECT_FALSE(decode_call_header(h));
}

// The device's reply header is field 1 alone (9 bytes): XRT reads exactly that many.
TEST(HwemuWire, ReplyHeaderIsNineBytes) {
  std::uint8_t h[kReplyHeaderBytes];
  encode_reply_header(h, 0x0102030405060708ull);
  EXPECT_EQ(bytes({0x09, 8, 7, 6, 5, 4, 3, 2, 1}), std::vector<std::uint8_t>(h, h + sizeof h));
}

TEST(HwemuWire, VarintsAndBytesRoundTrip) {
  const std::vector<std::uint64_t> values = {0, 1, 127, 128, 300, 0xFFFFFFFFu, 1ull << 63, ~0ull};
  const std::vector<std::uint8_t> blob(70000, 0x5A);
  Writer w;
  for (std::size_t i = 0; i < values.size(); ++i) w.varint(static_cast<std::uint32_t>(i + 1), values[i]);
  w.bytes(20, blob.data(), blob.size()).bytes(21, nullptr, 0);
  Message m;
  ASSERT_TRUE(m.parse(w.data().data(), w.data().size()));
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(m.number(static_cast<std::uint32_t>(i + 1)), values[i]);
  const auto b = m.bytes(20);
  ASSERT_TRUE(b);
  EXPECT_EQ(std::vector<std::uint8_t>(b->data, b->data + b->size), blob);
  ASSERT_TRUE(m.bytes(21));
  EXPECT_EQ(m.bytes(21)->size, 0u);
  EXPECT_FALSE(m.number(20)) << "a length-delimited field is not a number";
  EXPECT_FALSE(m.bytes(1)) << "a varint is not bytes";
  EXPECT_FALSE(m.number(99)) << "absent";
}

// proto2: the last occurrence of a non-repeated field wins; fixed32/fixed64 fields are read (XRT's
// headers use them) and unknown fields skipped.
TEST(HwemuWire, LastValueWinsAndFixedFieldsAreRead) {
  const auto b = bytes({0x08, 0x01, 0x08, 0x02, 0x15, 0x78, 0x56, 0x34, 0x12, 0x19, 1, 0, 0, 0, 0, 0, 0, 0x80});
  Message m;
  ASSERT_TRUE(m.parse(b.data(), b.size()));
  EXPECT_EQ(m.number(1), 2u);
  EXPECT_EQ(m.number(2), 0x12345678u);
  EXPECT_EQ(m.number(3), 0x8000000000000001ull);
}

TEST(HwemuWire, MalformedMessagesAreRefused) {
  EXPECT_TRUE(parses({}));
  EXPECT_FALSE(parses(bytes({0x08}))) << "a key without its value";
  EXPECT_FALSE(parses(bytes({0x08, 0x80}))) << "a truncated varint";
  EXPECT_FALSE(parses(bytes({0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})))
      << "a varint longer than 10 bytes";
  EXPECT_FALSE(parses(bytes({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02})))
      << "a varint over 64 bits";
  EXPECT_TRUE(parses(bytes({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}))) << "2^64 - 1";
  EXPECT_FALSE(parses(bytes({0x12, 0x05, 1, 2, 3}))) << "a length past the end";
  EXPECT_FALSE(parses(bytes({0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F}))) << "a huge length";
  EXPECT_FALSE(parses(bytes({0x15, 1, 2, 3}))) << "a truncated fixed32";
  EXPECT_FALSE(parses(bytes({0x11, 1, 2, 3, 4, 5, 6, 7}))) << "a truncated fixed64";
  EXPECT_FALSE(parses(bytes({0x0B}))) << "a group start";
  EXPECT_FALSE(parses(bytes({0x0C}))) << "a group end";
  EXPECT_FALSE(parses(bytes({0x0E, 0}))) << "wire type 6";
  EXPECT_FALSE(parses(bytes({0x00, 0}))) << "field 0";
  Message m;
  ASSERT_TRUE(m.parse(bytes({0x08, 0x07}).data(), 2));
  EXPECT_FALSE(m.parse(bytes({0x08}).data(), 1));
  EXPECT_FALSE(m.number(1)) << "a refused message keeps nothing of an earlier one";
}

// Random bytes: parsed or refused, and a parsed message's fields lie inside the input (ASan builds
// check every read).
TEST(HwemuWire, RandomBytesAreParsedOrRefusedInsideTheInput) {
  const std::uint64_t seed = tb::random_test_seed();
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> len(0, 64), byte(0, 255);
  std::size_t parsed = 0;
  for (int i = 0; i < 200000; ++i) {
    std::vector<std::uint8_t> b(static_cast<std::size_t>(len(rng)));
    for (auto& x : b) x = static_cast<std::uint8_t>(byte(rng));
    Message m;
    if (!m.parse(b.data(), b.size())) continue;
    ++parsed;
    for (std::uint32_t f = 1; f < 32; ++f) {
      if (const auto x = m.bytes(f)) {
        ASSERT_GE(x->data, b.data());
        ASSERT_LE(x->data + x->size, b.data() + b.size()) << "seed " << seed;
      }
    }
  }
  EXPECT_GT(parsed, 0u) << "seed " << seed;
}

}  // namespace
}  // namespace rnic::hwemu
