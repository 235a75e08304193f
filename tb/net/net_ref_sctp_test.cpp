// SPDX-License-Identifier: Apache-2.0
// The reference model against real SCTP: the packets a usrsctp sender emits (driver/sctp Endpoint, tagged
// and untagged DDP messages over RFC 5043) are trimmed by the model on their way and handed to a
// receiving usrsctp Endpoint, which must take every trimmed DATA chunk (its SACKs acknowledge every TSN,
// RFC 9260 6.2) and skip a chunk the pipeline declined (a PAD chunk, RFC 4820: not acknowledged, so the
// sender retransmits it, RFC 9260 6.3). The card would have checked the CRC32c of the packet as received
// (rule 1); the trimmed packet's checksum is left as it was, so the receiver runs with usrsctp's CRC32c
// offload (docs/network.md: the host leaves CRC32c to the card).
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

}  // namespace
}  // namespace rnic::tb::net
