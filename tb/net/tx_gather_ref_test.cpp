// SPDX-License-Identifier: Apache-2.0
// The reference model of the card's transmit gather (tb/net tx_gather_ref.hpp, docs/transmit.md):
// hand-built slot packets for every rule (RFC 9260 3.1, 3.2, 3.3.1; RFC 5043 5.2.2; RFC 5041 4.2, 4.3,
// 5.2, 8), seeded random slot packets against the read invariant, and a real usrsctp association whose
// DDP chunks go through the gather on their way (tx_gather_sctp_test.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/tx_gather_fixture.hpp"
#include "rnic/tb/tx_gather_ref.hpp"
#include "rnic/wire/bytes.hpp"

namespace rnic::tb::net {
namespace {

using namespace fixture;  // NOLINT: the shared slot builders and tables
using wire::put_be16;

constexpr std::uint64_t kMemBase = 0x7000'0000;  // host address of the test's memory
constexpr std::size_t kMemSize = 64 * 1024;

// The fixture's tables over the test's memory (another client's STags over the same range).
TxTables tables() {
  TxTables t = fixture::tables(kMemBase, kMemSize, kMemBase);
  t.stags[4].length = kMemSize;
  t.stags[4].addr = kMemBase;
  return t;
}

// The memory: byte i holds a pattern; reads outside it fail (and are counted).
struct Memory {
  Bytes bytes = Bytes(kMemSize);
  std::size_t outside = 0;
  Memory() {
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 13 + 1);
  }
  TxReadFn reader() {
    return [this](std::uint64_t addr, std::uint8_t* out, std::size_t n) {
      if (addr < kMemBase || addr - kMemBase > kMemSize || n > kMemSize - (addr - kMemBase)) {
        ++outside;
        return false;
      }
      std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(addr - kMemBase), n, out);
      return true;
    };
  }
  Bytes at_to(std::uint64_t to, std::size_t n) const {
    const auto b = bytes.begin() + static_cast<std::ptrdiff_t>(to - kBaseTo);
    return Bytes(b, b + static_cast<std::ptrdiff_t>(n));
  }
};

bool crc_good(const Bytes& p) {
  Bytes z = p;
  std::fill(z.begin() + 8, z.begin() + 12, std::uint8_t{0});
  return wire::load_le32(p.data() + 8) == capture::SctpPacket::checksum(z);
}

// Every burst inside the test's memory and not crossing 4 KiB.
void expect_bursts_ok(const TxGather& g) {
  for (const TxRead& r : g.reads) {
    EXPECT_GT(r.bytes, 0u);
    EXPECT_LE(r.addr % kReadBoundary + r.bytes, kReadBoundary) << "a burst crosses 4 KiB at " << r.addr;
    EXPECT_GE(r.addr, kMemBase);
    EXPECT_LE(r.addr + r.bytes, kMemBase + kMemSize);
  }
}

TEST(TxGather, Rfc5043_5_2_2_TaggedDescriptorBecomesTheSegment) {
  Memory m;
  const Bytes slot = packet({descriptor(true, 1, kStag, kBaseTo + 100, 1000)});
  const TxGather g = gather(slot, kSocket, 1, tables(), m.reader());
  ASSERT_EQ(g.drop, TxDrop::kNone) << tx_drop_name(g.drop);
  // On the wire: the common header, the chunk (G cleared, length 16 + 2 + 14 + 1000), payload, padding.
  Bytes want = common_header();
  Bytes head = chunk_head(true, 1, 1);
  wire::store_be16(head.data() + 2, static_cast<std::uint16_t>(head.size() + 1000));
  want.insert(want.end(), head.begin(), head.end());
  const Bytes payload = m.at_to(kBaseTo + 100, 1000);
  want.insert(want.end(), payload.begin(), payload.end());
  while (want.size() % 4 != 0) want.push_back(0);
  ASSERT_EQ(g.wire.size(), want.size());
  EXPECT_TRUE(std::equal(g.wire.begin() + 12, g.wire.end(), want.begin() + 12));
  EXPECT_TRUE(std::equal(g.wire.begin(), g.wire.begin() + 8, want.begin()));
  EXPECT_EQ(g.wire[13], 0x07) << "flag G left on the wire";
  EXPECT_TRUE(crc_good(g.wire)) << "RFC 9260 6.8";
  EXPECT_EQ(g.descriptors, 1u);
  EXPECT_EQ(g.payload_bytes, 1000u);
  expect_bursts_ok(g);
}

TEST(TxGather, Rfc5041_4_3_UntaggedDescriptorAndBundlesKeepEveryOtherChunk) {
  Memory m;
  const Bytes sack = plain_chunk(3, 0, 12);  // a SACK-shaped control chunk
  Bytes data17 = chunk_head(false, 0, 0, 999, 0x07, 17);
  wire::store_be16(data17.data() + 2, static_cast<std::uint16_t>(data17.size()));  // PPID 17, no G: as is
  const Bytes slot = packet({sack, descriptor(false, 0, kStag, kBaseTo, 3), data17,
                             descriptor(true, 1, kStag, kBaseTo + 8000, 517), plain_chunk(0x84, 0, 5)});
  const TxGather g = gather(slot, kSocket, 1, tables(), m.reader());
  ASSERT_EQ(g.drop, TxDrop::kNone) << tx_drop_name(g.drop);
  EXPECT_EQ(g.descriptors, 2u);
  std::size_t off = 12;
  std::vector<std::uint8_t> types;
  std::vector<std::size_t> lengths;
  while (off < g.wire.size()) {
    types.push_back(g.wire[off]);
    const std::size_t len = wire::load_be16(g.wire.data() + off + 2);
    lengths.push_back(len);
    EXPECT_EQ(g.wire[off + 1] & 0x80, 0) << "chunk at " << off;
    off += pad4(len);
  }
  EXPECT_EQ(off, g.wire.size());
  EXPECT_EQ(types, (std::vector<std::uint8_t>{3, 0, 0, 0, 0x84}));
  EXPECT_EQ(lengths, (std::vector<std::size_t>{16, 16 + 2 + 18 + 3, 16 + 2 + 18, 16 + 2 + 14 + 517, 9}));
  EXPECT_TRUE(std::equal(sack.begin(), sack.end(), g.wire.begin() + 12));
  EXPECT_TRUE(crc_good(g.wire));
}

TEST(TxGather, ReadsNeverCrossFourKiB) {
  Memory m;
  const Bytes slot = packet({descriptor(true, 0, kStag, kBaseTo + 4090, 9000)});
  const TxGather g = gather(slot, kSocket, 1, tables(), m.reader());
  ASSERT_EQ(g.drop, TxDrop::kNone);
  ASSERT_EQ(g.reads.size(), 4u);
  EXPECT_EQ(g.reads[0].bytes, 6u);
  EXPECT_EQ(g.reads[1].bytes, 4096u);
  EXPECT_EQ(g.reads[2].bytes, 4096u);
  EXPECT_EQ(g.reads[3].bytes, 802u);
  expect_bursts_ok(g);
  const Bytes payload = m.at_to(kBaseTo + 4090, 9000);
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), g.wire.begin() + 12 + 32));
}

TEST(TxGather, Rfc5041_5_2_ZeroLengthReadsNothingAndChecksNoStag) {
  Memory m;
  // STag 0xFFFFFF00: no such entry; TO past everything: neither is checked for a read of nothing.
  const Bytes slot = packet({descriptor(true, 1, 0xFFFFFF00, ~std::uint64_t{0}, 0)});
  const TxGather g = gather(slot, kSocket, 1, tables(), m.reader());
  ASSERT_EQ(g.drop, TxDrop::kNone) << tx_drop_name(g.drop);
  EXPECT_TRUE(g.reads.empty());
  EXPECT_EQ(g.wire.size(), 12u + 32u);
}

struct DropCase {
  const char* what;
  Bytes slot;
  std::uint16_t socket;
  std::size_t assoc;
  TxDrop drop;
};

// RFC 5041 8 (the card reads only what it may read), RFC 9260 3.2 (framing), RFC 5043 5.2, 9, 10.
TEST(TxGather, Rfc5041_8_EveryBadDescriptorDropsTheWholePacket) {
  const Bytes good = descriptor(true, 1, kStag, kBaseTo, 100);
  Bytes lie = good;
  wire::store_be16(lie.data() + 2, static_cast<std::uint16_t>(wire::load_be16(lie.data() + 2) + 1));
  Bytes cut = packet({good});
  cut.resize(cut.size() - 1);
  const std::vector<DropCase> cases = {
      {"no such entry", packet({good}), kSocket, 9, TxDrop::kAssociation},
      {"entry of another association", packet({good}), kSocket, 0, TxDrop::kAssociation},
      {"another socket", packet({good}), 2, 1, TxDrop::kAssociation},
      {"another source port", packet({good}, common_header(kMyPort + 1)), kSocket, 1, TxDrop::kAssociation},
      {"another destination port", packet({good}, common_header(kMyPort, 6000)), kSocket, 1, TxDrop::kAssociation},
      {"another verification tag", packet({good}, common_header(kMyPort, kTheirPort, 0x11111111)), kSocket, 1,
       TxDrop::kAssociation},
      {"shorter than the common header", Bytes{1, 2, 3}, kSocket, 1, TxDrop::kFraming},
      {"descriptor cut short", cut, kSocket, 1, TxDrop::kFraming},
      {"chunk length below 4", packet({good, Bytes{3, 0, 0, 2}}), kSocket, 1, TxDrop::kFraming},
      {"chunk past the end", packet({Bytes{3, 0, 0, 40, 0, 0, 0, 0}, good}), kSocket, 1, TxDrop::kFraming},
      {"three bytes after the last chunk", packet({good, Bytes{0, 0, 0}}), kSocket, 1, TxDrop::kFraming},
      {"the mark on a SACK", packet({plain_chunk(3, 0x80, 12), good}), kSocket, 1, TxDrop::kMarkOutsideData},
      {"the mark on I-DATA", packet({plain_chunk(64, 0x87, 40)}), kSocket, 1, TxDrop::kMarkOutsideData},
      {"a first fragment (E clear)", packet({descriptor_chunk(chunk_head(true, 1, 1, 1, 0x06), kStag, kBaseTo, 10)}),
       kSocket, 1, TxDrop::kFragment},
      {"ordered (U clear)", packet({descriptor_chunk(chunk_head(true, 1, 1, 1, 0x03), kStag, kBaseTo, 10)}), kSocket, 1,
       TxDrop::kFragment},
      {"PPID 17", packet({descriptor_chunk(chunk_head(true, 1, 1, 1, 0x07, 17), kStag, kBaseTo, 10)}), kSocket, 1,
       TxDrop::kPpid},
      {"SCTP stream past the association's", packet({descriptor(true, 3, kStag, kBaseTo, 10)}), kSocket, 1,
       TxDrop::kStream},
      {"stream not live", packet({descriptor(true, 2, kStag, kBaseTo, 10)}), kSocket, 1, TxDrop::kStream},
      {"length field lies", packet({lie}), kSocket, 1, TxDrop::kLength},
      {"no such STag index", packet({descriptor(true, 1, 0x905, kBaseTo, 10)}), kSocket, 1, TxDrop::kStag},
      {"invalid STag entry", packet({descriptor(true, 1, 0x000, kBaseTo, 10)}), kSocket, 1, TxDrop::kStag},
      {"wrong key", packet({descriptor(true, 1, 0x106, kBaseTo, 10)}), kSocket, 1, TxDrop::kStag},
      {"no local read", packet({descriptor(true, 1, kNoReadStag, kBaseTo, 10)}), kSocket, 1, TxDrop::kLocalRead},
      {"another PD (another client's STag)", packet({descriptor(true, 1, kForeignStag, kBaseTo, 10)}), kSocket, 1,
       TxDrop::kProtectionDomain},
      {"bound to another stream", packet({descriptor(true, 0, kBoundStag, kBaseTo, 10)}), kSocket, 1,
       TxDrop::kProtectionDomain},
      {"TO below the base", packet({descriptor(true, 1, kStag, kBaseTo - 1, 10)}), kSocket, 1, TxDrop::kBounds},
      {"past the end by one", packet({descriptor(true, 1, kStag, kBaseTo + kMemSize - 9, 10)}), kSocket, 1,
       TxDrop::kBounds},
      {"TO + LEN wraps", packet({descriptor(true, 1, kStag, ~std::uint64_t{0} - 3, 10)}), kSocket, 1, TxDrop::kBounds},
      {"chunk length 65535 (tagged)", packet({descriptor(true, 1, kStag, kBaseTo, 65503)}), kSocket, 1,
       TxDrop::kTooLong},
      {"chunk length 65535 (untagged)", packet({descriptor(false, 1, kStag, kBaseTo, 65499)}), kSocket, 1,
       TxDrop::kTooLong},
      {"too long on the wire",
       packet({descriptor(true, 1, kStag, kBaseTo, 4600), descriptor(true, 1, kStag, kBaseTo, 4600)}), kSocket, 1,
       TxDrop::kTooLong},
  };
  for (const DropCase& c : cases) {
    Memory m;
    const TxGather g = gather(c.slot, c.socket, c.assoc, tables(), m.reader());
    EXPECT_EQ(g.drop, c.drop) << c.what << ": " << tx_drop_name(g.drop);
    EXPECT_TRUE(g.wire.empty()) << c.what << ": something was sent";
    EXPECT_EQ(m.outside, 0u) << c.what;
    expect_bursts_ok(g);
  }
  // A bad descriptor after a good one: the good one was read, nothing is sent.
  Memory m;
  const TxGather g =
      gather(packet({good, descriptor(true, 1, kForeignStag, kBaseTo, 10)}), kSocket, 1, tables(), m.reader());
  EXPECT_EQ(g.drop, TxDrop::kProtectionDomain);
  EXPECT_EQ(g.drop_chunk, 1u);
  EXPECT_EQ(g.reads.size(), 1u);
  EXPECT_TRUE(g.wire.empty());
}

TEST(TxGather, ReadErrorDropsThePacket) {
  const TxReadFn failing = [](std::uint64_t, std::uint8_t*, std::size_t) { return false; };
  const TxGather g = gather(packet({descriptor(true, 1, kStag, kBaseTo, 10)}), kSocket, 1, tables(), failing);
  EXPECT_EQ(g.drop, TxDrop::kReadError);
  EXPECT_TRUE(g.wire.empty());
}

// The read invariant over seeded random slots: every burst lies in the range of an STag that passes
// every check for the chunk's stream; a sent packet has a good CRC32c, no G flag and fits the limit.
TEST(TxGather, RandomSlotsReadOnlyWhatTheyMay) {
  const std::uint64_t seed = random_test_seed();
  std::mt19937_64 rng(seed);
  // Another client's STag and the one without local read point outside the memory: a read through
  // either is counted as outside.
  TxTables t = tables();
  t.stags[2].addr = t.stags[3].addr = 0xDEAD'0000'0000;
  std::map<TxDrop, std::size_t> outcomes;
  for (int iter = 0; iter < 20000; ++iter) {
    Bytes slot = common_header();
    const int chunks = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < chunks; ++k) {
      const std::uint32_t stags[] = {kStag, kForeignStag, kNoReadStag, kBoundStag, 0x106, 0};
      if (rng() % 3 == 0) {
        const Bytes c = plain_chunk(static_cast<std::uint8_t>(rng() % 4 == 0 ? 0 : 3 + rng() % 10),
                                    static_cast<std::uint8_t>(rng() % 8 == 0 ? 0x80 : 0), rng() % 30);
        slot.insert(slot.end(), c.begin(), c.end());
      } else {
        const std::uint64_t to = kBaseTo + (rng() % 2 == 0 ? rng() % kMemSize : rng() % 64) - rng() % 8;
        const Bytes c = descriptor(rng() % 2 == 0, static_cast<std::uint16_t>(rng() % 4), stags[rng() % 6], to,
                                   static_cast<std::uint32_t>(rng() % 3000));
        slot.insert(slot.end(), c.begin(), c.end());
      }
    }
    if (rng() % 5 == 0) slot[12 + rng() % (slot.size() - 12)] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    if (rng() % 10 == 0) slot.resize(12 + rng() % (slot.size() - 12));
    Memory m;
    const TxGather g = gather(slot, kSocket, 1, t, m.reader());
    ++outcomes[g.drop];
    ASSERT_EQ(m.outside, 0u) << "seed " << seed << " iteration " << iter;
    for (const TxRead& r : g.reads) {
      // Only STag 0x105 (local read, PD 7, unbound) or 0x402 on stream 5 may pass; both span the memory.
      ASSERT_GE(r.addr, kMemBase) << "seed " << seed;
      ASSERT_LE(r.addr + r.bytes, kMemBase + kMemSize) << "seed " << seed;
      ASSERT_LE(r.addr % kReadBoundary + r.bytes, kReadBoundary) << "seed " << seed;
    }
    if (g.drop == TxDrop::kNone) {
      ASSERT_TRUE(crc_good(g.wire)) << "seed " << seed;
      ASSERT_LE(g.wire.size(), std::size_t{hw::kNET_MAX_PACKET_BYTES});
      ASSERT_EQ(g.wire.size() % 4, 0u) << "seed " << seed;
    } else {
      ASSERT_TRUE(g.wire.empty());
    }
  }
  std::printf("[   INFO   ] seed %llu:", static_cast<unsigned long long>(seed));
  for (const auto& [d, n] : outcomes) std::printf(" %s %zu,", tx_drop_name(d), n);
  std::printf("\n");
  EXPECT_GT(outcomes[TxDrop::kNone], 100u) << "too few packets sent to mean anything";
  EXPECT_GT(outcomes.size(), 8u) << "too few kinds of drop reached";
}

}  // namespace
}  // namespace rnic::tb::net
