// SPDX-License-Identifier: Apache-2.0
// The reference model against real SCTP: the packets a usrsctp sender emits (driver/sctp Endpoint, tagged
// and untagged DDP messages over RFC 5043) are trimmed by the model on their way and handed to a
// receiving usrsctp Endpoint, which must take every trimmed DATA chunk (its SACKs acknowledge every TSN,
// RFC 9260 6.2) and skip a chunk the pipeline declined (a PAD chunk, RFC 4820: not acknowledged, so the
// sender retransmits it, RFC 9260 6.3). The card would have checked the CRC32c of the packet as received
// (rule 1); the trimmed packet's checksum is left as it was, so the receiver runs with usrsctp's CRC32c
// offload (docs/network.md: the host leaves CRC32c to the card).
// And the transmit gather (tx_gather_ref.hpp, docs/transmit.md) the other way: every DDP chunk a usrsctp
// sender emits is turned into its slot form (a descriptor, the payload moved to registered memory), the
// gather must give back exactly the packet usrsctp made (a good CRC32c added), and a usrsctp receiver
// takes them all, a lost packet's retransmission gathered again.
#include <gtest/gtest.h>
#include <usrsctp.h>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "pair.hpp"
#include "rnic/tb/net_ref.hpp"
#include "rnic/tb/tx_gather_ref.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"

namespace rnic::tb::net {
namespace {

using sctp::test::Pair;
using Packet = std::vector<std::uint8_t>;
using wire::load_be16;
using wire::load_be32;

constexpr std::uint8_t kInitAck = 2, kSack = 3;  // RFC 9260 3.3.3, 3.3.4

// RFC 9260 1.6: serial number arithmetic on TSNs.
bool tsn_after(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) > 0; }

// The chunks of a packet (RFC 9260 3.2), for the test's own bookkeeping.
template <typename F>
void for_each_chunk(const Packet& p, F f) {
  std::size_t off = 12;
  while (p.size() - off >= 4) {
    const std::size_t len = load_be16(p.data() + off + 2);
    if (len < 4 || len > p.size() - off) return;
    f(p.data() + off, len);
    off += (len + 3) & ~std::size_t{3};
    if (off > p.size()) return;
  }
}

// usrsctp's CRC32c off while the test runs (process-global), on again after.
struct CrcOffload {
  CrcOffload() { usrsctp_enable_crc32c_offload(); }
  ~CrcOffload() { usrsctp_disable_crc32c_offload(); }
  CrcOffload(const CrcOffload&) = delete;
  CrcOffload& operator=(const CrcOffload&) = delete;
};

std::vector<std::uint8_t> message(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = static_cast<std::uint8_t>(seed + i * 7);
  return m;
}

TEST(NetRefUsrsctp, Rfc9260_6_2_TrimmedDataIsTakenAndAcknowledgedDeclinedIsRetransmitted) {
  Pair pair;  // a: the peer (sender), b: the host behind the card (receiver)
  CrcOffload offload;
  const PacketMeta meta{0x0A000002, 0x0A000001, 9899, 9899};
  constexpr std::uint16_t kStreamBase = 3;
  NetRef ref({}, std::vector<bool>(16, false));

  // The driver's table entry, written once b's Initiate Tag (its INIT-ACK) is known.
  std::set<std::uint32_t> tsns_sent;        // every DATA TSN a sent
  std::map<std::uint32_t, int> times_sent;  // TSN -> transmissions
  std::uint32_t cum_ack = 0;
  bool any_sack = false;
  pair.tap = [&](bool a_to_b, const Packet& p) {
    for_each_chunk(p, [&](const std::uint8_t* c, std::size_t len) {
      if (!a_to_b && c[0] == kInitAck && len >= 8) {
        // b's ports and Initiate Tag: what a's packets carry.
        if (auto e = assoc_from_init_ack(rnic::wire::ConstBytes(p), meta, kStreamBase, 4)) ref.table() = {*e};
      }
      if (!a_to_b && c[0] == kSack && len >= 16) {
        const std::uint32_t ack = load_be32(c + 4);
        if (!any_sack || tsn_after(ack, cum_ack)) cum_ack = ack;
        any_sack = true;
      }
      if (a_to_b && c[0] == 0 && len >= 16) {
        tsns_sent.insert(load_be32(c + 4));
        ++times_sent[load_be32(c + 4)];
      }
    });
  };

  // The pipeline: a DDP-SSN seen before is a duplicate; pipeline ssn 2 is declined the first time.
  std::set<std::pair<std::uint16_t, std::uint16_t>> seen;
  std::map<std::uint16_t, std::vector<std::uint8_t>> placed;  // ssn -> the segment taken
  bool declined_once = false;
  std::uint32_t declined_tsn = 0;
  const NetRef::Pipeline pipeline = [&](const std::vector<Segment>& segs) {
    std::vector<Fate> f;
    for (const Segment& s : segs) {
      if (s.ssn == 2 && !declined_once) {
        declined_once = true;
        f.push_back(Fate::kDeclined);
      } else if (!seen.insert({s.stream, s.ssn}).second) {
        f.push_back(Fate::kDuplicate);
      } else {
        placed[s.ssn] = s.bytes;
        f.push_back(Fate::kTaken);
      }
    }
    return f;
  };
  std::size_t packets_with_segments = 0, bundled = 0;
  pair.reorder = [&](std::deque<Packet>& to_b, std::deque<Packet>&) {
    for (Packet& p : to_b) {
      const bool decline_pending = !declined_once;
      const auto r = ref.receive(p, meta, true, pipeline);
      if (r.summary.segments > 0) ++packets_with_segments;
      if (r.summary.segments > 1) ++bundled;
      if (decline_pending && declined_once) {  // the TSN of the chunk made PAD
        for_each_chunk(*r.host, [&](const std::uint8_t* c, std::size_t len) {
          if (c[0] == kChunkTypePad && len >= 8) declined_tsn = load_be32(c + 4);
        });
      }
      p = *r.host;
    }
  };

  pair.connect();
  ASSERT_EQ(pair.a->state(), sctp::AssociationState::kReady);
  ASSERT_EQ(pair.b->state(), sctp::AssociationState::kReady);
  ASSERT_EQ(ref.table().size(), 1u) << "no INIT-ACK seen";

  // b accepts; the driver sets the live bit before the Accept goes (docs/network.md).
  pair.b->set_session_handler([&](const sctp::SessionNotice& n) {
    if (n.kind != sctp::NoticeKind::kInitiate) return;
    ref.live()[kStreamBase + n.stream] = true;
    pair.b->accept(n.stream);
  });
  std::vector<std::pair<std::uint16_t, std::vector<std::uint8_t>>> delivered;  // what b's Endpoint got
  pair.b->set_segment_sink([&](std::uint16_t stream, std::uint16_t ssn, wire::ConstBytes seg) {
    EXPECT_EQ(stream, 1u);
    delivered.emplace_back(ssn, seg.to_vector());
  });
  pair.a->initiate(1);
  ASSERT_TRUE(pair.run([&] { return pair.a->session_state(1) == sctp::SessionState::kEstablished; }));

  std::uint64_t sent = 0;
  sent += pair.a->send_tagged(1, 0x00000100, 0, 0, message(20000, 1));
  sent += pair.a->send_untagged(1, 0, 0, message(3000, 2));
  for (std::uint8_t i = 0; i < 20; ++i) sent += pair.a->send_untagged(1, 1, 0, message(40 + i, i));  // bundled
  sent += pair.a->send_tagged(1, 0x00000200, 64, 0, message(5, 3));
  ASSERT_TRUE(pair.run([&] { return delivered.size() == sent && pair.a->all_acknowledged(); }, 60))
      << delivered.size() << " of " << sent << " segments delivered";

  std::printf("[   INFO   ] %llu segments sent in %zu packets (%zu bundled), %zu TSNs, declined TSN %u sent %d times\n",
              static_cast<unsigned long long>(sent), packets_with_segments, bundled, tsns_sent.size(), declined_tsn,
              times_sent[declined_tsn]);
  // The model: every segment taken once, one declined (the retransmission taken).
  EXPECT_EQ(ref.counters().taken, sent);
  EXPECT_EQ(ref.counters().declined, 1u);
  EXPECT_EQ(placed.size(), sent);
  EXPECT_GT(bundled, 0u) << "no packet carried several segments";
  EXPECT_EQ(ref.counters().misses, 1u) << "only the INIT (verification tag 0) misses";
  // b's Endpoint: the trimmed segments, in DDP-SSN order, each the DDP header of the segment placed.
  for (std::size_t i = 0; i < delivered.size(); ++i) {
    const auto& [ssn, header] = delivered[i];
    ASSERT_EQ(ssn, i + 1) << "DDP-SSN order (RFC 5043 6.1; DDP-SSN 0 is the Initiate)";
    const auto& full = placed.at(static_cast<std::uint16_t>(ssn - 1));
    const std::size_t h = (full[0] & wire::kCtrlTagged) != 0 ? wire::kTaggedHeaderSize : wire::kUntaggedHeaderSize;
    EXPECT_EQ(header, std::vector<std::uint8_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(h)));
  }
  EXPECT_EQ(pair.b->counters().violations, 0u);
  EXPECT_EQ(pair.b->counters().malformed, 0u);
  // SCTP: every TSN acknowledged by b's SACKs; the declined chunk's TSN sent again (not acknowledged).
  ASSERT_TRUE(any_sack);
  for (const std::uint32_t t : tsns_sent) EXPECT_FALSE(tsn_after(t, cum_ack)) << "TSN " << t << " never acknowledged";
  ASSERT_TRUE(declined_once);
  EXPECT_GE(times_sent[declined_tsn], 2) << "the declined (PAD) chunk was acknowledged: TSN " << declined_tsn;
}

TEST(NetRefUsrsctp, Rfc5043_5_2_2_GatheredDescriptorChunksAreThePacketsUsrsctpMadeAndAreTaken) {
  Pair pair;  // a: the host behind the card (sender, its DDP chunks sent as descriptors), b: a receiver
  CrcOffload offload;
  // Registered memory: STag 0x105 (index 1, key 5) with local read over all of it, PD 7 for every stream.
  constexpr std::uint64_t kBaseTo = 0x40000, kAddr = 0x9000'0000;
  constexpr std::uint32_t kStag = 0x105;
  std::vector<std::uint8_t> mem(1 << 20);
  std::size_t next = 4090;  // the first payload crosses a 4 KiB boundary
  TxTables t;
  t.live.assign(8, true);
  t.stream_pd.assign(8, 7);
  t.stags.resize(2);
  t.stags[1] = TxStag{true, 5, true, 7, false, 0, kBaseTo, mem.size(), kAddr};
  const TxReadFn read = [&](std::uint64_t addr, std::uint8_t* out, std::size_t n) {
    if (addr < kAddr || addr + n > kAddr + mem.size()) return false;
    std::copy_n(mem.begin() + static_cast<std::ptrdiff_t>(addr - kAddr), n, out);
    return true;
  };
  std::map<std::uint32_t, int> gathered;                        // TSN -> times its descriptor was gathered
  std::map<std::uint16_t, std::vector<std::uint8_t>> segments;  // DDP-SSN -> the segment usrsctp sent
  std::size_t packets = 0, bursts = 0;
  bool dropped_one = false;
  std::uint32_t dropped_tsn = 0;
  pair.reorder = [&](std::deque<Packet>& to_b, std::deque<Packet>&) {
    for (auto it = to_b.begin(); it != to_b.end();) {
      Packet& p = *it;
      if (load_be32(p.data() + 4) == 0) {  // the INIT: not an association's packet yet
        ++it;
        continue;
      }
      if (t.assoc.empty()) {  // the driver's entry: our ports, the tag our packets carry, 4 streams
        AssocEntry e;
        e.valid = true;
        e.my_sctp_port = load_be16(p.data());
        e.their_sctp_port = load_be16(p.data() + 2);
        e.their_vtag = load_be32(p.data() + 4);
        e.stream_count = 4;
        t.assoc = {e};
      }
      // The host's output callback: each DDP chunk's payload to registered memory, a descriptor instead.
      Packet slot(p.begin(), p.begin() + 12);
      std::vector<std::uint32_t> tsns;
      for_each_chunk(p, [&](const std::uint8_t* c, std::size_t len) {
        const std::size_t h = len > 18 ? ddp_header_size(c[18]) : kUntaggedDdpHeaderSize;
        if (c[0] == kChunkTypeData && (c[1] & kDataFlagsUbe) == kDataFlagsUbe && load_be32(c + 12) == kPpidDdpSegment &&
            len >= 18 + h) {
          const std::size_t n = len - 18 - h;
          ASSERT_LE(next + n, mem.size());
          std::copy_n(c + 18 + h, n, mem.begin() + static_cast<std::ptrdiff_t>(next));
          const auto d =
              descriptor_chunk(rnic::wire::ConstBytes(c, 18 + h), kStag, kBaseTo + next, static_cast<std::uint32_t>(n));
          slot.insert(slot.end(), d.begin(), d.end());
          next += n;
          tsns.push_back(load_be32(c + 4));
          segments[load_be16(c + 16)].assign(c + 18, c + len);
        } else {
          const std::size_t at = static_cast<std::size_t>(c - p.data());
          slot.insert(slot.end(), c, c + std::min(pad4(len), p.size() - at));
        }
      });
      const TxGather g = gather(rnic::wire::ConstBytes(slot), 0, 0, t, read);
      ASSERT_EQ(g.drop, TxDrop::kNone) << tx_drop_name(g.drop);
      ASSERT_EQ(g.wire.size(), p.size());
      EXPECT_TRUE(std::equal(p.begin(), p.begin() + 8, g.wire.begin()));
      EXPECT_TRUE(std::equal(p.begin() + 12, p.end(), g.wire.begin() + 12)) << "not the packet usrsctp made";
      for (const TxRead& r : g.reads) EXPECT_LE(r.addr % kReadBoundary + r.bytes, kReadBoundary);
      bursts += g.reads.size();
      for (std::uint32_t tsn : tsns) ++gathered[tsn];
      ++packets;
      p = g.wire;
      // The third packet with descriptors is lost once: its retransmission is gathered again.
      if (!dropped_one && !tsns.empty() && gathered.size() >= 3) {
        dropped_one = true;
        dropped_tsn = tsns.front();
        it = to_b.erase(it);
        continue;
      }
      ++it;
    }
  };

  pair.connect();
  ASSERT_EQ(pair.a->state(), sctp::AssociationState::kReady);
  pair.b->set_session_handler([&](const sctp::SessionNotice& n) {
    if (n.kind == sctp::NoticeKind::kInitiate) pair.b->accept(n.stream);
  });
  std::vector<std::pair<std::uint16_t, std::vector<std::uint8_t>>> delivered;
  pair.b->set_segment_sink([&](std::uint16_t stream, std::uint16_t ssn, wire::ConstBytes seg) {
    EXPECT_EQ(stream, 2u);
    delivered.emplace_back(ssn, seg.to_vector());
  });
  pair.a->initiate(2);
  ASSERT_TRUE(pair.run([&] { return pair.a->session_state(2) == sctp::SessionState::kEstablished; }));
  std::uint64_t sent = 0;
  sent += pair.a->send_tagged(2, 0x00000100, 0, 0, message(20000, 1));
  for (std::uint8_t i = 0; i < 12; ++i) sent += pair.a->send_untagged(2, 1, 0, message(40 + i, i));  // bundled
  sent += pair.a->send_tagged(2, 0x00000200, 64, 0, message(5000, 3));
  ASSERT_TRUE(pair.run([&] { return delivered.size() == sent && pair.a->all_acknowledged(); }, 60))
      << delivered.size() << " of " << sent << " segments delivered";
  std::printf(
      "[   INFO   ] %llu segments in %zu packets gathered, %zu read bursts, TSN %u lost and gathered %d times\n",
      static_cast<unsigned long long>(sent), packets, bursts, dropped_tsn, gathered[dropped_tsn]);
  // b took every segment once, in DDP-SSN order, byte for byte what usrsctp was given.
  for (std::size_t i = 0; i < delivered.size(); ++i) {
    ASSERT_EQ(delivered[i].first, i + 1) << "DDP-SSN order (RFC 5043 6.1)";
    EXPECT_EQ(delivered[i].second, segments.at(delivered[i].first)) << "DDP-SSN " << delivered[i].first;
  }
  EXPECT_EQ(pair.b->counters().violations, 0u);
  EXPECT_EQ(pair.b->counters().malformed, 0u);
  ASSERT_TRUE(dropped_one);
  EXPECT_GE(gathered[dropped_tsn], 2) << "the lost packet's chunk was not sent again through the gather";
}

}  // namespace
}  // namespace rnic::tb::net
