// SPDX-License-Identifier: Apache-2.0
// The host's half of the transmit gather (rnic/wire/gather.hpp) against the card's half (TxGatherRef,
// docs/transmit.md): the same DDP segments sent two ways, as the software Data Source does today (payload
// copied into each DATA chunk) and as full-length descriptor chunks (descriptor_user_data), bundled the
// same way with other chunks; the descriptor packet rewritten by the output callback (rewrite_for_gather)
// and expanded by the card's model from registered memory must be the software packet byte for byte, its
// CRC32c computed the same way (RFC 9260 6.8). RFC 5043 5.2.2 segment chunks, RFC 5041 4.2 / 4.3 headers
// and 5.2 segmentation, RFC 9260 3.2 bundling and padding.
//
// The seeded test prints RNIC_TEST_SEED; reproduce with
//   RNIC_TEST_SEED=<seed> build/default/tb/net/tx_gather_host_tests --gtest_filter='RandomTxGatherHost*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/tx_gather_fixture.hpp"
#include "rnic/tb/tx_gather_ref.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/gather.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "rnic/wire/segmentation.hpp"

namespace rnic::tb::net {
namespace {

using fixture::Bytes;
using fixture::kSocket;
using fixture::kStag;
using wire::GatherDescriptor;
using wire::SegmentPlan;

constexpr std::uint64_t kMemBase = 0x7000'0000;  // host address of the registered memory
constexpr std::size_t kMemSize = 256 * 1024;
constexpr std::size_t kAssoc = 1;                  // the fixture's entry of our association
constexpr std::uint8_t kSack = 3, kHeartbeat = 4;  // RFC 9260 3.3.4, 3.3.5

// Registered memory under STag kStag (TO fixture::kBaseTo at its first byte).
struct Memory {
  Bytes bytes = Bytes(kMemSize);
  explicit Memory(std::uint64_t seed = 1) {
    std::mt19937_64 rng(seed);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  }
  TxTables tables() const { return fixture::tables(kMemBase, kMemSize, kMemBase); }
  TxReadFn reader() const {
    return [this](std::uint64_t addr, std::uint8_t* out, std::size_t n) {
      if (addr < kMemBase || addr - kMemBase > kMemSize || n > kMemSize - (addr - kMemBase)) return false;
      std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(addr - kMemBase), n, out);
      return true;
    };
  }
  wire::ConstBytes at_to(std::uint64_t to, std::size_t n) const {
    return wire::ConstBytes(bytes.data() + (to - fixture::kBaseTo), n);
  }
};

// One DDP segment to send: its plan, where its payload is (local TO) and its SCTP / RFC 5043 fields.
struct Seg {
  SegmentPlan plan;
  std::uint64_t to = 0;
  std::uint16_t sctp_stream = 0;
  std::uint16_t ddp_ssn = 0;
};

// An item of a packet: a segment, or any other chunk (already padded).
struct Item {
  std::optional<Seg> seg;
  Bytes other;
};

// A DATA chunk as usrsctp makes it (RFC 9260 3.3.1: U, B, E for one unordered message), padded unless told.
Bytes data_chunk(const Bytes& user, std::uint32_t tsn, std::uint16_t stream, std::uint32_t ppid, bool pad = true) {
  Bytes c{wire::kSctpChunkData, wire::kSctpDataFlagsUbe};
  wire::put_be16(c, static_cast<std::uint16_t>(wire::kSctpDataHeaderBytes + user.size()));
  wire::put_be32(c, tsn);
  wire::put_be16(c, stream);
  wire::put_be16(c, static_cast<std::uint16_t>(tsn ^ 0x5555));
  wire::put_be32(c, ppid);
  c.insert(c.end(), user.begin(), user.end());
  if (pad) c.resize(pad4(c.size()), 0);
  return c;
}

Bytes plain_chunk(std::uint8_t type, std::size_t body) {
  Bytes c{type, 0};
  wire::put_be16(c, static_cast<std::uint16_t>(wire::kSctpChunkHeaderBytes + body));
  for (std::size_t i = 0; i < body; ++i) c.push_back(static_cast<std::uint8_t>(0x61 + i));
  c.resize(pad4(c.size()), 0);
  return c;
}

// RFC 5043 5.2.3: a Stream Session Control message (PPID 17), never a descriptor.
Bytes session_control(std::uint32_t tsn, std::uint16_t ssn) {
  wire::SessionControl m;
  m.ddp_ssn = ssn;
  m.function = wire::SessionFunction::kAccept;
  m.private_data = {1, 2, 3};
  return data_chunk(wire::encode_session_control(m).value(), tsn, 0, wire::kPpidDdpSessionControl);
}

// The same items two ways (usrsctp gives them the same TSNs either way).
struct TwoWays {
  Bytes software;    // payload copied (the software Data Source)
  Bytes descriptor;  // full-length descriptor chunks where the payload is >= 16 bytes
  std::size_t descriptors = 0;
  std::uint64_t payload_bytes = 0;  // read by the card
};

TwoWays build(const std::vector<Item>& items, const Memory& m, std::uint32_t* tsn, bool pad_last = true) {
  TwoWays w;
  w.software = w.descriptor = fixture::common_header();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const bool pad = pad_last || i + 1 < items.size();
    if (!items[i].seg) {
      w.software.insert(w.software.end(), items[i].other.begin(), items[i].other.end());
      w.descriptor.insert(w.descriptor.end(), items[i].other.begin(), items[i].other.end());
      continue;
    }
    const Seg& s = *items[i].seg;
    const auto segment = wire::encode_segment(s.plan.header, m.at_to(s.to, s.plan.payload_length));
    const Bytes copied = wire::encode_segment_chunk(s.ddp_ssn, segment.value());
    auto d = wire::descriptor_user_data(s.plan, s.ddp_ssn, kStag, s.to);
    EXPECT_TRUE(d.ok()) << d.error().message();
    ++w.descriptors;
    w.payload_bytes += s.plan.payload_length;
    const Bytes c1 = data_chunk(copied, *tsn, s.sctp_stream, kPpidDdpSegment, pad);
    const Bytes c2 = data_chunk(d.value(), *tsn, s.sctp_stream, kPpidDdpSegment, pad);
    if (s.plan.payload_length >= wire::kMinDescriptorPayload) {
      EXPECT_EQ(c1.size(), c2.size()) << "usrsctp sees the same sizes both ways";
    } else {  // the short form: usrsctp counts the whole NGD record, at least what the wire carries
      EXPECT_GE(c2.size(), c1.size());
    }
    w.software.insert(w.software.end(), c1.begin(), c1.end());
    w.descriptor.insert(w.descriptor.end(), c2.begin(), c2.end());
    ++*tsn;
  }
  return w;
}

// The segments of one message (RFC 5041 5.2) whose payload is at local TO `to`; DDP-SSNs from *ssn.
std::vector<Item> message(const wire::Result<wire::MessageSegmenter>& ms, std::uint64_t to, std::uint16_t stream,
                          std::uint16_t* ssn) {
  EXPECT_TRUE(ms.ok());
  std::vector<Item> items;
  for (const SegmentPlan& p : ms->all()) items.push_back(Item{Seg{p, to + p.message_offset, stream, (*ssn)++}, {}});
  return items;
}

// The registry of a Data Source that knows each descriptor it issued: (SCTP stream, DDP-SSN).
wire::DescriptorFilter issued(const std::vector<Item>& items) {
  std::set<std::pair<std::uint16_t, std::uint16_t>> keys;
  for (const Item& i : items) {
    if (i.seg) keys.insert({i.seg->sctp_stream, i.seg->ddp_ssn});
  }
  return [keys](const GatherDescriptor& d) { return d.stag == kStag && keys.count({d.sctp_stream, d.ddp_ssn}) != 0; };
}

// The descriptor packet through the output callback and the card; the result must be the software packet
// as the card sends it (the last chunk padded, RFC 9260 3.2; the CRC32c filled in, RFC 9260 6.8).
void expect_same_on_the_wire(const TwoWays& w, const Memory& m, const wire::DescriptorFilter& ours,
                             std::size_t* bursts = nullptr) {
  const auto slot = wire::rewrite_for_gather(w.descriptor, ours);
  ASSERT_TRUE(slot.ok()) << slot.error().message();
  ASSERT_LE(slot->packet.size(), w.descriptor.size());
  ASSERT_EQ(slot->descriptors.size(), w.descriptors);
  ASSERT_EQ(slot->gather, w.descriptors != 0);
  Bytes want = w.software;
  Bytes sent = slot->packet;  // a packet without GATHER leaves as it is, the CRC32c filled in
  if (slot->gather) {
    want.resize(pad4(want.size()), 0);
    const TxGather g = gather(slot->packet, kSocket, kAssoc, m.tables(), m.reader());
    ASSERT_EQ(g.drop, TxDrop::kNone) << tx_drop_name(g.drop) << " at chunk " << g.drop_chunk;
    EXPECT_EQ(g.descriptors, w.descriptors);
    EXPECT_EQ(g.payload_bytes, w.payload_bytes);
    if (bursts != nullptr) *bursts += g.reads.size();
    sent = g.wire;
  } else {
    EXPECT_EQ(slot->packet, w.descriptor);
    capture::SctpPacket::seal(sent);
  }
  capture::SctpPacket::seal(want);
  ASSERT_EQ(sent.size(), want.size());
  EXPECT_EQ(sent, want) << "not the packet of the software path";
}

wire::TaggedHeader tagged_header(std::uint32_t stag, std::uint64_t to, bool last) {
  wire::TaggedHeader h;
  h.last = last;
  h.stag = stag;
  h.to = to;
  return h;
}

TEST(TxGatherHost, Rfc5043_5_2_2_TaggedMessageSegmentsComeBackByteForByte) {
  const Memory m;
  std::uint16_t ssn = 1;
  // 20000 bytes at MULPDU 1400: 14 segments of 1386 payload bytes and a last one of 596 (RFC 5041 5.2).
  const auto items =
      message(wire::MessageSegmenter::tagged(0x00AB1200, 0x40, 0, 20000, 1400), fixture::kBaseTo + 4000, 0, &ssn);
  std::uint32_t tsn = 1000;
  for (const Item& i : items) {
    const TwoWays w = build({i}, m, &tsn);
    ASSERT_EQ(w.descriptors, 1u);
    expect_same_on_the_wire(w, m, issued(items));
  }
}

TEST(TxGatherHost, Rfc5041_4_3_UntaggedMessageWithAShortLastSegmentComesBack) {
  const Memory m;
  std::uint16_t ssn = 7;
  // 3 * (1000 - 18) + 9: the last segment of 9 bytes goes by copy, in the same packet as a descriptor.
  const auto items =
      message(wire::MessageSegmenter::untagged(1, 5, 0x0102030405, 3 * 982 + 9, 1000), fixture::kBaseTo + 100, 1, &ssn);
  ASSERT_EQ(items.size(), 4u);
  ASSERT_EQ(items[3].seg->plan.payload_length, 9u);
  std::uint32_t tsn = 1;
  expect_same_on_the_wire(build({items[0], items[1]}, m, &tsn), m, issued(items));
  expect_same_on_the_wire(build({items[2], items[3]}, m, &tsn), m, issued(items));
}

// RFC 5041 5.2: a zero-length segment, and payloads under the NGD record's 16 bytes, are descriptors in
// the short form (the record, no zeros; the chunk length rewritten to what the wire carries).
TEST(TxGatherHost, Rfc5041_5_2_ZeroLengthAndShortMessagesTakeTheShortForm) {
  const Memory m;
  std::uint16_t ssn = 1;
  std::vector<Item> items = message(wire::MessageSegmenter::tagged(0x300, 0, 0, 0, 1000), fixture::kBaseTo, 0, &ssn);
  for (std::uint64_t n : {1u, 15u, 16u, 17u}) {
    const auto more = message(wire::MessageSegmenter::untagged(0, 1, 0, n, 1000), fixture::kBaseTo + 64 * n, 0, &ssn);
    items.insert(items.end(), more.begin(), more.end());
  }
  std::uint32_t tsn = 50;
  const TwoWays w = build(items, m, &tsn);
  EXPECT_EQ(w.descriptors, 5u);
  expect_same_on_the_wire(w, m, issued(items));
  // Short ones only: still a gather packet, smaller on the wire than in usrsctp's hands.
  const TwoWays shorts = build({items[0], items[1], items[2]}, m, &tsn);
  EXPECT_EQ(shorts.descriptors, 3u);
  expect_same_on_the_wire(shorts, m, issued(items));
}

TEST(TxGatherHost, Rfc9260_3_2_BundlesWithControlChunksAndAnUnpaddedLastChunk) {
  const Memory m;
  const auto seg = [](wire::DdpHeader h, std::uint32_t len, std::uint64_t to, std::uint16_t stream, std::uint16_t ssn) {
    return Item{Seg{SegmentPlan{h, 0, len}, fixture::kBaseTo + to, stream, ssn}, {}};
  };
  wire::UntaggedHeader u;
  u.qn = 2;
  u.msn = 9;
  const std::vector<Item> items = {
      Item{std::nullopt, plain_chunk(kSack, 12)},
      seg(tagged_header(0x1100, 0, false), 517, 3, 0, 1),
      seg(u, 3, 900, 1, 1),
      Item{std::nullopt, session_control(77, 0)},
      seg(tagged_header(0x1100, 517, true), 16, 4090, 0, 2),  // 16 bytes across a 4 KiB page
      Item{std::nullopt, plain_chunk(kHeartbeat, 9)},
      seg(u, 4095, 8000, 1, 2),
      seg(tagged_header(0x2200, 0, true), 5, 20, 0, 3),  // the last chunk: 16 + 2 + 14 + 5 bytes
  };
  std::uint32_t tsn = 0xFFFFFFFE;  // TSNs wrap (RFC 9260 1.6): nothing here cares
  const TwoWays padded = build(items, m, &tsn);
  EXPECT_EQ(padded.descriptors, 5u);
  expect_same_on_the_wire(padded, m, issued(items));
  tsn = 0xFFFFFFFE;
  const TwoWays unpadded = build(items, m, &tsn, false);
  ASSERT_NE(unpadded.software.size() % 4, 0u) << "the copying path's last chunk without its padding";
  expect_same_on_the_wire(unpadded, m, issued(items));
}

TEST(TxGatherHost, ALargeSegmentIsReadInPagesAndComesBack) {
  const Memory m;
  // One packet at the card's limit (NET_MAX_PACKET_BYTES): 12 + 16 + 2 + 14 + 9172 = 9216.
  const std::uint32_t len = hw::kNET_MAX_PACKET_BYTES - 12 - 16 - 2 - 14;
  const std::vector<Item> items = {
      Item{Seg{SegmentPlan{tagged_header(0x500, 0, true), 0, len}, fixture::kBaseTo + 4095, 0, 1}, {}}};
  std::uint32_t tsn = 1;
  const TwoWays w = build(items, m, &tsn);
  ASSERT_EQ(w.descriptor.size(), hw::kNET_MAX_PACKET_BYTES);
  std::size_t bursts = 0;
  expect_same_on_the_wire(w, m, issued(items), &bursts);
  EXPECT_EQ(bursts, 4u) << "1 + 4096 + 4096 + the rest (TxGatherRef rule 5)";
}

// The card backs the host's registry: a descriptor the registry should not have let through (an STag of
// another client, an STag with no entry, a range past the registration) is dropped on the card (RFC 5041 8).
TEST(TxGatherHost, Rfc5041_8_ADescriptorTheRegistryWronglyLetThroughIsDroppedByTheCard) {
  const Memory m;
  const auto everything = [](const GatherDescriptor&) { return true; };
  const SegmentPlan plan{tagged_header(0x500, 0, true), 0, 100};
  const struct {
    std::uint32_t stag;
    std::uint64_t to;
    TxDrop drop;
  } cases[] = {{fixture::kForeignStag, fixture::kBaseTo, TxDrop::kProtectionDomain},
               {0x0707, fixture::kBaseTo, TxDrop::kStag},
               {kStag, fixture::kBaseTo + kMemSize - 99, TxDrop::kBounds}};
  for (const auto& c : cases) {
    Bytes p = fixture::common_header();
    const Bytes chunk = data_chunk(wire::descriptor_user_data(plan, 1, c.stag, c.to).value(), 1, 0, kPpidDdpSegment);
    p.insert(p.end(), chunk.begin(), chunk.end());
    const auto slot = wire::rewrite_for_gather(p, everything);
    ASSERT_TRUE(slot.ok()) << slot.error().message();
    ASSERT_TRUE(slot->gather);
    const TxGather g = gather(slot->packet, kSocket, kAssoc, m.tables(), m.reader());
    EXPECT_EQ(g.drop, c.drop) << tx_drop_name(g.drop);
    EXPECT_TRUE(g.wire.empty());
  }
}

// Seeded: random messages on two SCTP streams, tagged and untagged, at a random MULPDU, bundled with
// control chunks into packets up to a random path MTU, sometimes the last chunk unpadded.
class RandomTxGatherHost : public ::testing::Test {};

TEST_F(RandomTxGatherHost, Rfc5043_5_2_2_RandomBundlesComeBackByteForByte) {
  const std::uint64_t seed = random_test_seed();
  std::mt19937_64 rng(seed);
  const Memory m(seed);
  const auto uniform = [&rng](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  std::size_t packets = 0, gathered = 0, descriptors = 0, shorts = 0, bursts = 0;
  std::uint32_t tsn = static_cast<std::uint32_t>(rng());
  for (int round = 0; round < 60; ++round) {
    SCOPED_TRACE("RNIC_TEST_SEED=" + std::to_string(seed) + " round " + std::to_string(round));
    const std::size_t mtu = uniform(600, hw::kNET_MAX_PACKET_BYTES);  // the packet's limit, the common header in
    const std::size_t mulpdu = uniform(wire::kUntaggedHeaderSize + 1, mtu - 12 - 16 - 2);
    std::uint16_t ssn[2] = {static_cast<std::uint16_t>(rng()), static_cast<std::uint16_t>(rng())};
    std::vector<Item> items;
    const int messages = static_cast<int>(uniform(1, 6));
    for (int i = 0; i < messages; ++i) {
      const std::uint64_t len = uniform(0, 4) == 0 ? uniform(0, 20) : uniform(0, 30000);
      const std::uint64_t to = fixture::kBaseTo + uniform(0, kMemSize - len);
      const auto stream = static_cast<std::uint16_t>(uniform(0, 1));
      const auto ms =
          (rng() & 1) ? wire::MessageSegmenter::tagged(static_cast<std::uint32_t>(rng()), rng() >> 20, 0, len, mulpdu)
                      : wire::MessageSegmenter::untagged(static_cast<std::uint32_t>(uniform(0, 3)),
                                                         static_cast<std::uint32_t>(rng()), 0, len, mulpdu);
      const auto more = message(ms, to, stream, &ssn[stream]);
      items.insert(items.end(), more.begin(), more.end());
      for (int c = static_cast<int>(uniform(0, 2)); c > 0; --c) {  // control chunks between messages
        const auto at = static_cast<std::ptrdiff_t>(uniform(0, items.size()));
        items.insert(items.begin() + at,
                     Item{std::nullopt, uniform(0, 2) == 0   ? plain_chunk(kSack, uniform(12, 40))
                                        : uniform(0, 1) == 0 ? plain_chunk(kHeartbeat, uniform(4, 60))
                                                             : session_control(tsn ^ 1u, 0)});
      }
    }
    const wire::DescriptorFilter ours = issued(items);
    // Bundle in order up to the MTU, as usrsctp does (RFC 9260 6.10).
    std::vector<Item> bundle;
    std::size_t size = 12;
    const auto flush = [&] {
      if (bundle.empty()) return;
      const TwoWays w = build(bundle, m, &tsn, uniform(0, 3) != 0);
      expect_same_on_the_wire(w, m, ours, &bursts);
      ++packets;
      gathered += w.descriptors != 0 ? 1u : 0u;
      descriptors += w.descriptors;
      for (const Item& i : bundle)
        shorts += i.seg && i.seg->plan.payload_length < wire::kMinDescriptorPayload ? 1u : 0u;
      bundle.clear();
      size = 12;
    };
    for (const Item& i : items) {  // usrsctp's sizes: a short-form descriptor counts its whole NGD record
      const std::size_t n = i.seg ? pad4(16 + 2 + wire::header_size(i.seg->plan.header) +
                                         std::max<std::size_t>(i.seg->plan.payload_length, wire::kNgdBytes))
                                  : i.other.size();
      if (size + n > mtu) flush();
      bundle.push_back(i);
      size += n;
    }
    flush();
    if (HasFatalFailure() || HasFailure()) return;
  }
  std::printf("[   INFO   ] %zu packets (%zu gather), %zu descriptors (%zu in the short form), %zu read bursts\n",
              packets, gathered, descriptors, shorts, bursts);
  EXPECT_GT(gathered, 60u);
  EXPECT_GT(shorts, 0u);
}

// Seeded: good descriptor packets with random bytes changed or cut. Whatever the output callback accepts
// as a gather packet, the card finds well formed: never a framing, mark, fragment, PPID or length drop
// (TxGatherRef rules 2, 3); what it sends is the input's length padded to 4, less what short-form
// descriptors do not carry.
TEST_F(RandomTxGatherHost, HostileInputsNeverMakeASlotTheCardCannotWalk) {
  const std::uint64_t seed = random_test_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("RNIC_TEST_SEED=" + std::to_string(seed));
  const Memory m(seed);
  const TxTables tables = m.tables();
  const auto uniform = [&rng](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  const auto ours = [](const GatherDescriptor& d) { return d.stag == kStag; };
  std::size_t slots = 0, sent = 0, refused = 0;
  for (int i = 0; i < 5000; ++i) {
    std::vector<Item> items;
    for (int k = static_cast<int>(uniform(1, 5)); k > 0; --k) {
      if (uniform(0, 3) == 0) {
        items.push_back(Item{std::nullopt, plain_chunk(kSack, uniform(12, 30))});
        continue;
      }
      const auto len = static_cast<std::uint32_t>(uniform(0, 1500));
      const wire::DdpHeader h =
          (rng() & 1) ? wire::DdpHeader{tagged_header(0x900, 0, true)} : wire::DdpHeader{wire::UntaggedHeader{}};
      items.push_back(Item{Seg{SegmentPlan{h, 0, len}, fixture::kBaseTo + uniform(0, kMemSize - len),
                               static_cast<std::uint16_t>(uniform(0, 1)), static_cast<std::uint16_t>(rng())},
                           {}});
    }
    std::uint32_t tsn = static_cast<std::uint32_t>(rng());
    Bytes in = build(items, m, &tsn, (rng() & 1) != 0).descriptor;
    for (int f = static_cast<int>(uniform(0, 3)); f > 0; --f) {
      in[uniform(12, in.size() - 1)] = static_cast<std::uint8_t>(rng());
    }
    if (uniform(0, 3) == 0) in.resize(uniform(0, in.size()));
    const auto slot = wire::rewrite_for_gather(in, ours);
    if (!slot.ok()) {
      ++refused;
      continue;
    }
    ASSERT_LE(slot->packet.size(), in.size()) << "iteration " << i;
    if (!slot->gather) continue;
    ++slots;
    const TxGather g = gather(slot->packet, kSocket, kAssoc, tables, m.reader());
    for (TxDrop never : {TxDrop::kAssociation, TxDrop::kFraming, TxDrop::kMarkOutsideData, TxDrop::kFragment,
                         TxDrop::kPpid, TxDrop::kLength, TxDrop::kTooLong}) {
      ASSERT_NE(g.drop, never) << "iteration " << i << ": " << tx_drop_name(g.drop) << " at chunk " << g.drop_chunk;
    }
    if (g.drop == TxDrop::kNone) {
      ++sent;
      // Short-form descriptors (NGD LEN < 16) are shorter on the wire than in usrsctp's packet.
      std::size_t shorter = 0;
      for (const GatherDescriptor& d : slot->descriptors) {
        if (d.length >= wire::kNgdBytes) continue;
        shorter += wire::slot_descriptor_bytes(d.tagged) -
                   pad4(wire::slot_descriptor_bytes(d.tagged) - wire::kNgdBytes + d.length);
      }
      ASSERT_EQ(g.wire.size(), pad4(in.size()) - shorter) << "iteration " << i;
    }
  }
  std::printf("[   INFO   ] 5000 inputs: %zu refused, %zu gather slots, %zu of them sent\n", refused, slots, sent);
  EXPECT_GT(slots, 1000u);
  EXPECT_GT(sent, 500u);
}

}  // namespace
}  // namespace rnic::tb::net
