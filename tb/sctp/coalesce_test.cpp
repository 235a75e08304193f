// SPDX-License-Identifier: Apache-2.0
// rnic::sctp::PacketCoalescer: consecutive DATA-only packets of one association become one SCTP packet
// (RFC 9260 6.10 bundling: the first common header, every chunk in order, each padded to 4 bytes);
// anything else goes alone and in order. Then a real usrsctp receiver takes the merged packets: every
// segment arrives once and in order, and every TSN is acknowledged.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "pair.hpp"
#include "rnic/driver/rnic.hpp"
#include "rnic/sctp/coalesce.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"

namespace {

using rnic::sctp::PacketCoalescer;
using Bytes = std::vector<std::uint8_t>;
using rnic::wire::ConstBytes;

Bytes header(std::uint32_t vtag = 0x11223344) {
  Bytes h{0x13, 0x89, 0x13, 0x8A};  // ports 5001 -> 5002
  for (int i = 3; i >= 0; --i) h.push_back(static_cast<std::uint8_t>(vtag >> (8 * i)));
  h.insert(h.end(), {0, 0, 0, 0});  // checksum (left to the card)
  return h;
}
// A chunk of `type` with `body` bytes after its 4-byte header, padded to 4 unless pad is false.
Bytes chunk(std::uint8_t type, std::size_t body, std::uint8_t fill, bool pad = true) {
  Bytes c{type, 0, static_cast<std::uint8_t>((4 + body) >> 8), static_cast<std::uint8_t>(4 + body)};
  c.insert(c.end(), body, fill);
  while (pad && c.size() % 4 != 0) c.push_back(0);
  return c;
}
Bytes packet(const std::vector<Bytes>& chunks, std::uint32_t vtag = 0x11223344) {
  Bytes p = header(vtag);
  for (const auto& c : chunks) p.insert(p.end(), c.begin(), c.end());
  return p;
}

struct Sink {
  std::vector<Bytes> got;
  PacketCoalescer::Out out() {
    return [this](ConstBytes p) { got.push_back(p.to_vector()); };
  }
};

// Three DATA packets (one with a PAD chunk, one whose last chunk's padding is cut) become one: the first
// header, then every chunk in order, each padded.
TEST(Coalescer, MergesDataPacketsOfOneAssociation) {
  Sink s;
  PacketCoalescer c(16, 9000, s.out());
  const Bytes d1 = chunk(0x00, 30, 1), pad = chunk(0x84, 30, 2), d2 = chunk(0x00, 29, 3),
              d3 = chunk(0x00, 29, 4, false);
  c.add(3, packet({d1}));
  c.add(3, packet({pad, d2}));
  c.add(3, packet({d3}));
  EXPECT_TRUE(s.got.empty());
  c.flush();
  ASSERT_EQ(s.got.size(), 1u);
  Bytes want = packet({d1, pad, d2, d3});
  EXPECT_EQ(s.got[0], want);
  EXPECT_EQ(c.counters().packets_in, 3u);
  EXPECT_EQ(c.counters().packets_out, 1u);
  EXPECT_EQ(c.counters().merged, 2u);
  c.flush();  // nothing pending: nothing more
  EXPECT_EQ(s.got.size(), 1u);
}

// A control chunk (SACK, type 3), a packet the card did not match (no key), another entry, another
// verification tag, a malformed chunk length: each ends the run and goes alone, in order.
TEST(Coalescer, AnythingElseGoesAloneInOrder) {
  Sink s;
  PacketCoalescer c(16, 9000, s.out());
  const Bytes a = packet({chunk(0x00, 20, 1)});
  const Bytes sack = packet({chunk(0x03, 12, 9)});
  const Bytes other_tag = packet({chunk(0x00, 20, 5)}, 0x55667788);
  Bytes bad = packet({chunk(0x00, 20, 6)});
  bad[12 + 3] = 200;  // chunk length past the packet end
  c.add(1, a);
  c.add(1, sack);  // flushes a, then alone
  c.add(1, a);
  c.add(std::nullopt, a);  // no key: alone
  c.add(1, a);
  c.add(2, a);  // another entry: a new run
  c.add(2, other_tag);
  c.add(2, bad);
  c.flush();
  const std::vector<Bytes> want{a, sack, a, a, a, a, other_tag, bad};
  EXPECT_EQ(s.got, want);
  EXPECT_EQ(c.counters().merged, 0u);
}

// At most max_packets packets and max_bytes bytes a merged packet; a packet longer than max_bytes alone.
TEST(Coalescer, LimitsOfAMergedPacket) {
  Sink s;
  PacketCoalescer c(3, 12 + 3 * 24, s.out());
  const Bytes a = packet({chunk(0x00, 20, 1)});  // 12 + 24 bytes
  for (int i = 0; i < 7; ++i) c.add(0, a);
  c.flush();
  ASSERT_EQ(s.got.size(), 3u);
  EXPECT_EQ(s.got[0].size(), 12u + 3 * 24);
  EXPECT_EQ(s.got[1].size(), 12u + 3 * 24);
  EXPECT_EQ(s.got[2].size(), 12u + 24);
  Sink t;
  PacketCoalescer small(16, 12 + 2 * 24, t.out());
  for (int i = 0; i < 3; ++i) small.add(0, a);
  small.add(0, packet({chunk(0x00, 100, 2)}));  // longer than max_bytes
  small.flush();
  ASSERT_EQ(t.got.size(), 3u);
  EXPECT_EQ(t.got[0].size(), 12u + 2 * 24);
  EXPECT_EQ(t.got[1].size(), 12u + 24);
  EXPECT_EQ(t.got[2].size(), 12u + 104);
  Sink u;
  PacketCoalescer off(1, 9000, u.out());
  off.add(0, a);
  off.add(0, a);
  EXPECT_EQ(u.got.size(), 2u);
  EXPECT_THROW(PacketCoalescer(0, 9000, u.out()), rnic::Error);
  EXPECT_THROW(PacketCoalescer(4, 11, u.out()), rnic::Error);
  EXPECT_THROW(PacketCoalescer(4, 9000, nullptr), rnic::Error);
}

// A real usrsctp receiver (CRC32c offloaded, as on the card's host) takes merged packets: 200 DDP
// segments sent one per packet arrive at the receiver merged up to 8 at a time, every one delivered once
// and in DDP-SSN order, and SCTP acknowledges everything.
TEST(Coalescer, UsrsctpTakesMergedPackets) {
  rnic::sctp::EndpointConfig offload;  // a merged packet has no CRC32c of its own: the card checked each part
  offload.crc32c_offload = true;
  rnic::sctp::test::Pair p(offload, offload);
  p.connect();
  ASSERT_EQ(p.a->state(), rnic::sctp::AssociationState::kReady);
  p.b->set_session_handler([&](const rnic::sctp::SessionNotice& n) {
    if (n.kind == rnic::sctp::NoticeKind::kInitiate) p.b->accept(n.stream);
  });
  std::vector<std::uint16_t> ssns;
  p.b->set_segment_sink([&](std::uint16_t, std::uint16_t ssn, ConstBytes) { ssns.push_back(ssn); });
  p.a->initiate(0);
  ASSERT_TRUE(p.run([&] { return p.a->session_state(0) == rnic::sctp::SessionState::kEstablished; }));
  PacketCoalescer c(8, 16384, [&](ConstBytes pkt) { p.b->input(pkt); });
  std::uint64_t merged_inputs = 0;
  p.reorder = [&](std::deque<rnic::sctp::test::Packet>& to_b, std::deque<rnic::sctp::test::Packet>&) {
    for (auto& pkt : to_b) c.add(0, ConstBytes(pkt));
    to_b.clear();
    const auto before = c.counters().packets_out;
    c.flush();
    merged_inputs += c.counters().packets_out - before;
  };
  rnic::wire::TaggedHeader h;
  h.last = true;
  const Bytes seg = rnic::wire::encode_segment(h, Bytes(100, 0x5A)).value();
  for (int i = 0; i < 200; ++i) p.a->send_segment(0, seg);
  ASSERT_TRUE(p.run([&] { return ssns.size() == 200 && p.a->all_acknowledged(); }));
  for (std::size_t i = 0; i < ssns.size(); ++i) EXPECT_EQ(ssns[i], i + 1) << "segment " << i;
  EXPECT_GT(c.counters().merged, 0u);
  EXPECT_LT(c.counters().packets_out, c.counters().packets_in);
}

}  // namespace
