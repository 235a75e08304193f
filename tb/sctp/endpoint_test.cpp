// SPDX-License-Identifier: Apache-2.0
// Two usrsctp endpoints in one process (AF_CONN): RFC 5043 association set-up (5.1, 8, 11.1), DDP
// segments as unordered PPID-16 DATA chunks (5.2, 9, 10), the session sequences of 6.2-6.6, and
// reordering undone by the DDP-SSN. Received bytes are checked through the reference Data Sink.
//
// Seed: RNIC_TEST_SEED=<n> reproduces a random run; the seed is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "pair.hpp"
#include "rnic/driver/rnic.hpp"
#include "rnic/model/data_sink.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/wire/ddp.hpp"

namespace {

using namespace rnic::sctp;
using rnic::sctp::test::Packet;
using rnic::sctp::test::Pair;
using rnic::wire::ConstBytes;

template <typename F>
void expect_error(rnic::Errc code, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no rnic::Error thrown";
  } catch (const rnic::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
  }
}

struct Recorder {
  std::vector<SessionNotice> notices;
  std::vector<std::pair<std::uint16_t, std::uint16_t>> segments;  // (stream, DDP-SSN)
  void attach(Endpoint& e) {
    e.set_session_handler([this](const SessionNotice& n) { notices.push_back(n); });
    e.set_segment_sink([this](std::uint16_t s, std::uint16_t ssn, ConstBytes) { segments.emplace_back(s, ssn); });
  }
  bool has(NoticeKind k, std::uint16_t stream) const {
    return std::any_of(notices.begin(), notices.end(),
                       [&](const auto& n) { return n.kind == k && n.stream == stream; });
  }
};

// Brings up a session on `stream`: a active, b passive (6.2).
void establish(Pair& p, std::uint16_t stream) {
  p.a->initiate(stream);
  ASSERT_TRUE(p.run([&] { return p.b->session_state(stream) == SessionState::kInitiateReceived; }));
  p.b->accept(stream);
  ASSERT_TRUE(p.run([&] { return p.a->session_state(stream) == SessionState::kEstablished; }));
}

bool has_param(const Packet& pkt, std::uint16_t type, std::uint32_t value) {
  for (std::size_t i = 12; i + 8 <= pkt.size(); ++i) {
    if (((pkt[i] << 8) | pkt[i + 1]) == type && ((pkt[i + 2] << 8) | pkt[i + 3]) == 8 &&
        rnic::wire::load_be32(&pkt[i + 4]) == value)
      return true;
  }
  return false;
}

// RFC 5043 5.1, 11.1, 8: INIT and INIT-ACK carry the DDP indication; both sides see the peer's; equal
// stream counts; a maximum segment size per 9.
TEST(SctpEndpoint, AssociationWithAdaptationIndicationAndEqualStreams) {
  Pair p;
  std::map<std::uint8_t, bool> init_has_indication;  // chunk type (1 INIT, 2 INIT-ACK) -> seen with 0xC006
  p.tap = [&](bool, const Packet& pkt) {
    if (pkt.size() > 12 && (pkt[12] == 1 || pkt[12] == 2))
      init_has_indication[pkt[12]] = has_param(pkt, rnic::wire::kAdaptationIndicationParamType, 1);
  };
  p.connect();
  ASSERT_EQ(p.a->state(), AssociationState::kReady) << p.a->refusal_reason();
  ASSERT_EQ(p.b->state(), AssociationState::kReady) << p.b->refusal_reason();
  EXPECT_TRUE(init_has_indication[1]);
  EXPECT_TRUE(init_has_indication[2]);
  EXPECT_EQ(p.a->peer_adaptation_indication(), std::optional<std::uint32_t>(1));
  EXPECT_EQ(p.b->peer_adaptation_indication(), std::optional<std::uint32_t>(1));
  EXPECT_EQ(p.a->ddp_streams(), kDefaultStreams);
  EXPECT_EQ(p.b->ddp_streams(), kDefaultStreams);
  EXPECT_GE(p.a->max_segment_size(), kMinMaxSegmentSize);
  EXPECT_LE(p.a->max_segment_size() + 2 + kDataChunkHeaderSize + kSctpCommonHeaderSize + kIpv4HeaderSize,
            std::max<std::size_t>(p.a->path_mtu(), kMinMaxSegmentSize + 50));
}

// What the card's association table is written with (docs/network.md): each side's
// local_verification_tag() is the tag every packet the other side sends it carries (RFC 9260 8.5), and
// peer_port() the other side's SCTP port. Both learnt from usrsctp's own packets: the active side's INIT,
// the passive side's answered COOKIE ECHO. A break (the tag of the wrong packet, the wrong direction)
// fails it.
TEST(SctpEndpoint, LocalVerificationTagIsWhatThePeersPacketsCarry) {
  Pair p;
  EXPECT_FALSE(p.a->local_verification_tag().has_value());
  EXPECT_FALSE(p.b->local_verification_tag().has_value());
  std::set<std::uint32_t> to_a, to_b;  // tags of the packets after the handshake's INIT
  p.tap = [&](bool a_to_b, const Packet& pkt) {
    if (pkt.size() < 16 || pkt[12] == 1) return;  // an INIT carries tag 0 (RFC 9260 8.5.1)
    (a_to_b ? to_b : to_a).insert(rnic::wire::load_be32(&pkt[4]));
  };
  p.connect();
  ASSERT_EQ(p.a->state(), AssociationState::kReady);
  ASSERT_TRUE(p.a->local_verification_tag().has_value());
  ASSERT_TRUE(p.b->local_verification_tag().has_value());
  ASSERT_NE(*p.a->local_verification_tag(), *p.b->local_verification_tag());
  // Traffic both ways after the handshake, every packet checked.
  p.a->initiate(0);
  p.run([&] { return p.b->session_state(0) == SessionState::kInitiateReceived; });
  p.b->accept(0);
  p.run([&] { return p.a->session_state(0) == SessionState::kEstablished; });
  EXPECT_EQ(to_a, std::set<std::uint32_t>{*p.a->local_verification_tag()});
  EXPECT_EQ(to_b, std::set<std::uint32_t>{*p.b->local_verification_tag()});
  EXPECT_EQ(p.a->peer_port(), std::optional<std::uint16_t>(5002));
  EXPECT_EQ(p.b->peer_port(), std::optional<std::uint16_t>(5001));
}

// usrsctp's CRC32c offload is process-wide: an Endpoint asking for the other setting than the live
// ones is refused, naming why; once they are gone it is taken.
TEST(SctpEndpoint, CrcOffloadIsOneSettingPerProcess) {
  EndpointConfig off;
  off.port = 5101;
  EndpointConfig on = off;
  on.port = 5102;
  on.crc32c_offload = true;
  {
    Endpoint plain(off, [](rnic::wire::ConstBytes) {});
    expect_error(rnic::Errc::kInvalidArgument, [&] { Endpoint e(on, [](rnic::wire::ConstBytes) {}); });
  }
  Endpoint offloaded(on, [](rnic::wire::ConstBytes) {});
  expect_error(rnic::Errc::kInvalidArgument, [&] { Endpoint e(off, [](rnic::wire::ConstBytes) {}); });
}

// RFC 5043 8: fewer streams on one side: both use the same count of stream pairs.
TEST(SctpEndpoint, StreamPairsAreTheSmallerCount) {
  EndpointConfig cb;
  cb.streams = 3;
  Pair p({}, cb);
  p.connect();
  ASSERT_EQ(p.a->state(), AssociationState::kReady);
  EXPECT_EQ(p.a->ddp_streams(), 3);
  EXPECT_EQ(p.b->ddp_streams(), 3);
  expect_error(rnic::Errc::kInvalidArgument, [&] { p.a->initiate(3); });
}

// RFC 5043 11.1: a peer with no indication, or another one, never carries DDP.
TEST(SctpEndpoint, PeerWithoutDdpIndicationIsRefused) {
  for (std::optional<std::uint32_t> other : {std::optional<std::uint32_t>{}, std::optional<std::uint32_t>{2}}) {
    EndpointConfig cb;
    cb.adaptation_indication = other;
    Pair p({}, cb);
    p.connect();
    EXPECT_EQ(p.a->state(), AssociationState::kRefused);
    EXPECT_NE(p.a->refusal_reason().find("11.1"), std::string::npos) << p.a->refusal_reason();
    EXPECT_NE(p.b->state(), AssociationState::kReady);
    expect_error(rnic::Errc::kUnsupported, [&] { p.a->initiate(0); });
    expect_error(rnic::Errc::kUnsupported, [&] { p.a->send_untagged(0, 0, 0, {}); });
  }
}

// Chunk types (RFC 4960 3.2) of one SCTP packet, in order.
std::vector<std::uint8_t> chunk_types(const Packet& p) {
  std::vector<std::uint8_t> out;
  for (std::size_t off = 12; off + 4 <= p.size();) {
    const std::size_t len = (std::size_t{p[off + 2]} << 8) | p[off + 3];
    if (len < 4) break;
    out.push_back(p[off]);
    off += (len + 3) & ~std::size_t{3};
  }
  return out;
}
constexpr std::uint8_t kAbortChunk = 6;  // RFC 4960 3.3.7

// RFC 5043 11.1 and 7.1: the refusing side really ABORTs. b (no indication) is never pumped, so it never
// refuses on its own: only a's ABORT can take its association down (COMM_LOST: no ABORT of its own).
TEST(SctpEndpoint, RefusalAbortReachesPeerWithoutDdpIndication) {
  EndpointConfig cb;
  cb.adaptation_indication = std::nullopt;
  Pair p({}, cb);
  std::vector<bool> aborts;  // direction (a to b) of every packet with an ABORT chunk
  p.tap = [&](bool a_to_b, const Packet& pkt) {
    const auto t = chunk_types(pkt);
    if (std::find(t.begin(), t.end(), kAbortChunk) != t.end()) aborts.push_back(a_to_b);
  };
  p.b->listen();
  p.a->connect(5002);
  for (int i = 0; i < 50; ++i) {
    p.a->pump();  // b only takes packets in: usrsctp answers the handshake, b decides nothing
    if (!aborts.empty()) break;
    std::deque<Packet> to_b, to_a;
    to_b.swap(p.to_b);
    to_a.swap(p.to_a);
    for (const auto& pkt : to_b) p.b->input(ConstBytes(pkt));
    for (const auto& pkt : to_a) p.a->input(ConstBytes(pkt));
  }
  ASSERT_EQ(p.a->state(), AssociationState::kRefused);
  EXPECT_EQ(p.a->counters().aborts_sent, 1u);
  ASSERT_EQ(aborts, std::vector<bool>{true});  // one ABORT, a to b
  ASSERT_EQ(p.to_b.size(), 1u);
  p.b->input(ConstBytes(p.to_b.front()));
  p.to_b.clear();
  p.b->pump();  // reads COMM_UP then COMM_LOST: refused (it has no indication) but already down
  EXPECT_EQ(p.b->state(), AssociationState::kRefused);
  EXPECT_EQ(p.b->counters().aborts_sent, 0u);  // usrsctp had no association left for it to abort
  EXPECT_EQ(aborts.size(), 1u);                // b had nothing left to abort
}

// One association per endpoint: a second peer's association is ABORTed on the wire and goes down,
// the first stays Ready.
TEST(SctpEndpoint, SecondAssociationIsAborted) {
  Pair p;
  p.connect();
  ASSERT_EQ(p.b->state(), AssociationState::kReady);
  const auto tag = p.b->local_verification_tag();  // what the card's entry is written with
  ASSERT_TRUE(tag.has_value());
  std::deque<Packet> c_out;
  EndpointConfig cc;
  cc.port = 5003;
  Endpoint c(cc, [&](ConstBytes pkt) { c_out.push_back(pkt.to_vector()); });
  std::size_t aborts_to_c = 0;
  c.connect(5002);
  for (int i = 0; i < 50 && c.state() != AssociationState::kLost; ++i) {
    c.pump();
    p.b->pump();
    std::deque<Packet> from_c, from_b;
    from_c.swap(c_out);
    from_b.swap(p.to_a);
    for (const auto& pkt : from_c) p.b->input(ConstBytes(pkt));
    for (const auto& pkt : from_b) {
      const bool to_c = ((pkt[2] << 8) | pkt[3]) == 5003;  // destination port
      const auto t = chunk_types(pkt);
      if (to_c && std::find(t.begin(), t.end(), kAbortChunk) != t.end()) ++aborts_to_c;
      if (to_c) c.input(ConstBytes(pkt));
    }
  }
  EXPECT_EQ(aborts_to_c, 1u);
  EXPECT_EQ(c.state(), AssociationState::kLost);
  EXPECT_EQ(p.b->counters().aborts_sent, 1u);
  EXPECT_EQ(p.b->counters().abort_failures, 0u);
  EXPECT_EQ(p.b->state(), AssociationState::kReady);
  // usrsctp answered the second association's COOKIE ECHO before the Endpoint aborted it: the tag and
  // port the card's entry needs are still the first association's.
  EXPECT_EQ(p.b->local_verification_tag(), tag);
  EXPECT_EQ(p.b->peer_port(), std::optional<std::uint16_t>(5001));
  establish(p, 0);  // the first association still carries DDP
}

TEST(SctpEndpoint, BadConfigAndArguments) {
  EndpointConfig c;
  c.port = 0;
  expect_error(rnic::Errc::kInvalidArgument, [&] { Endpoint e(c, [](ConstBytes) {}); });
  c = {};
  c.max_pending_initiates = 0;
  expect_error(rnic::Errc::kInvalidArgument, [&] { Endpoint e(c, [](ConstBytes) {}); });
  expect_error(rnic::Errc::kInvalidArgument, [&] { Endpoint e(EndpointConfig{}, nullptr); });
  Pair p;
  expect_error(rnic::Errc::kState, [&] { p.a->initiate(0); });  // not connected
  p.connect();
  std::vector<std::uint8_t> big(rnic::wire::kMaxPrivateData + 1);
  expect_error(rnic::Errc::kInvalidArgument, [&] { p.a->initiate(0, ConstBytes(big)); });  // 5.2.3
  expect_error(rnic::Errc::kState, [&] { p.a->send_untagged(0, 0, 0, {}); });              // no session
  expect_error(rnic::Errc::kState, [&] { p.b->accept(0); });                               // nothing to accept
  p.a->initiate(0);
  expect_error(rnic::Errc::kState, [&] { p.a->send_untagged(0, 0, 0, {}); });  // 6.6: before the answer
  expect_error(rnic::Errc::kState, [&] { p.a->initiate(0); });
  ASSERT_TRUE(p.run([&] { return p.b->session_state(0) == SessionState::kInitiateReceived; }));
  p.b->accept(0);
  expect_error(rnic::Errc::kState, [&] { p.b->reject(0); });  // 6.3 only as the answer to Initiate
}

// RFC 5043 5.2.2, 9, 10: each segment one unordered DATA chunk, PPID 16, never fragmented; a
// maximum-size segment fits; one byte more is refused.
TEST(SctpEndpoint, MaxSegmentSizeNoFragmentationLargerRefused) {
  Pair p;
  std::vector<rnic::sctp::test::DataChunkInfo> chunks;
  std::size_t largest_packet = 0;
  p.tap = [&](bool a_to_b, const Packet& pkt) {
    if (!a_to_b) return;
    for (const auto& c : rnic::sctp::test::data_chunks(pkt)) chunks.push_back(c);
    largest_packet = std::max(largest_packet, pkt.size());
  };
  p.connect();
  establish(p, 2);
  const std::size_t max = p.a->max_segment_size();
  std::vector<std::uint8_t> seg(max, 0x5A);
  seg[0] = rnic::wire::kCtrlTagged | rnic::wire::kCtrlLast | rnic::wire::kDdpVersion;
  p.a->send_segment(2, ConstBytes(seg));
  seg.push_back(0);
  expect_error(rnic::Errc::kInvalidArgument, [&] { p.a->send_segment(2, ConstBytes(seg)); });
  Recorder r;
  r.attach(*p.b);
  ASSERT_TRUE(p.run([&] { return r.segments.size() == 1; }));
  ASSERT_EQ(chunks.size(), 2u);  // Initiate, segment
  EXPECT_EQ(chunks[0].ppid, 17u);
  EXPECT_EQ(chunks[1].ppid, 16u);
  for (const auto& c : chunks) {
    EXPECT_TRUE(c.unordered);       // 10
    EXPECT_TRUE(c.begin && c.end);  // 9: no SCTP fragmentation
    EXPECT_EQ(c.sid, 2);
  }
  EXPECT_EQ(chunks[1].user_data, max + 2);
  EXPECT_LE(largest_packet + kIpv4HeaderSize, std::max<std::size_t>(p.a->path_mtu(), 600));  // no IP fragmentation
}

// RFC 5043 10: the sending DDP never has more DATA chunks handed to SCTP and unacknowledged than its
// limit (32767; 5 here). Nothing is delivered to b at first (no SACK can come back): exactly 5 DDP
// segments reach the wire and 7 wait queued; once packets flow, all 12 arrive in DDP-SSN order.
TEST(SctpEndpoint, ChunksInFlightBounded) {
  EndpointConfig ca;
  ca.max_chunks_in_flight = 5;
  Pair p(ca);
  std::set<std::uint32_t> tsns_on_wire;
  bool counting = false;
  p.tap = [&](bool a_to_b, const Packet& pkt) {
    if (!a_to_b || !counting) return;
    for (const auto& c : rnic::sctp::test::data_chunks(pkt)) {
      if (c.ppid == 16) tsns_on_wire.insert(c.tsn);
    }
  };
  p.connect();
  establish(p, 1);
  Recorder r;
  r.attach(*p.b);
  counting = true;
  std::vector<std::uint8_t> seg(64, 0x11);
  seg[0] = rnic::wire::kCtrlTagged | rnic::wire::kCtrlLast | rnic::wire::kDdpVersion;
  for (int i = 0; i < 12; ++i) p.a->send_segment(1, ConstBytes(seg));
  for (int i = 0; i < 5; ++i) p.a->pump();  // a alone: nothing reaches b, no SACK returns
  EXPECT_EQ(tsns_on_wire.size(), 5u);
  EXPECT_EQ(p.a->queued_chunks(), 7u);
  ASSERT_TRUE(p.run([&] { return r.segments.size() == 12; }));
  EXPECT_EQ(p.a->queued_chunks(), 0u);
  EXPECT_EQ(tsns_on_wire.size(), 12u);
  for (std::size_t i = 0; i < r.segments.size(); ++i) EXPECT_EQ(r.segments[i].second, i + 1);

  // Chunks usrsctp holds untransmitted (congestion window full: nothing acknowledged, maximum-size
  // segments) count too: still only 5 handed, whatever SCTP_STATUS sstat_unackdata says.
  std::vector<std::uint8_t> big(p.a->max_segment_size(), 0x22);
  big[0] = seg[0];
  for (int i = 0; i < 12; ++i) p.a->send_segment(1, ConstBytes(big));
  for (int i = 0; i < 5; ++i) p.a->pump();
  EXPECT_EQ(p.a->queued_chunks(), 7u);
  EXPECT_LE(tsns_on_wire.size(), 17u);
  ASSERT_TRUE(p.run([&] { return r.segments.size() == 24; }));
  EXPECT_EQ(p.a->queued_chunks(), 0u);
  EXPECT_EQ(tsns_on_wire.size(), 24u);

  EndpointConfig bad;
  bad.max_chunks_in_flight = 32768;
  expect_error(rnic::Errc::kInvalidArgument, [&] { Endpoint e(bad, [](ConstBytes) {}); });
}

// Tagged and untagged ULP messages, segmented by the Data Source, through SCTP into the reference Data
// Sink, with the wire reordered. DDP-SSN 0 is the session's Initiate/Accept, so segments start at 1.
TEST(SctpEndpoint, MessagesReorderedOnTheWireArriveInSubmissionOrder) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  Pair p;
  p.reorder = [&](std::deque<Packet>& to_b, std::deque<Packet>&) {
    if (to_b.size() > 1) std::shuffle(to_b.begin(), to_b.end(), rng);
  };
  p.connect();
  establish(p, 1);

  rnic::model::HostMemory mem(1 << 20);
  rnic::model::DataSink sink(mem, rnic::model::DataSink::Config{});
  const std::uint32_t stag = rnic::model::make_stag(5, 0x17);
  sink.set_stag(5, rnic::model::StagEntry{0x17, 1, std::nullopt, true, 0x10000, 0x40000, 0x80000});
  sink.enable_stream(1, 1);
  std::vector<std::uint16_t> ssns;
  p.b->set_segment_sink([&](std::uint16_t s, std::uint16_t ssn, ConstBytes seg) {
    ssns.push_back(ssn);
    sink.receive(s, static_cast<std::uint16_t>(ssn - 1), seg);  // the model's SSN 0 = first segment
  });

  std::vector<std::vector<std::uint8_t>> untagged;
  std::uint64_t segments = 0;
  std::uint64_t tagged_to = 0x10000;
  std::vector<std::uint8_t> tagged_all;
  for (int i = 0; i < 12; ++i) {
    std::vector<std::uint8_t> msg(rng() % 5000);
    for (auto& b : msg) b = static_cast<std::uint8_t>(rng());
    if (i % 2 == 0) {
      sink.post_buffer(1, 0, 0x2000 * static_cast<std::uint64_t>(untagged.size()), 0x2000);
      segments += p.a->send_untagged(1, 0, 0x0102030405, ConstBytes(msg));
      untagged.push_back(msg);
    } else {
      segments += p.a->send_tagged(1, stag, tagged_to, 0x40, ConstBytes(msg));
      tagged_to += msg.size();
      tagged_all.insert(tagged_all.end(), msg.begin(), msg.end());
    }
  }
  ASSERT_TRUE(p.run([&] { return ssns.size() == segments; })) << "seed " << seed;
  for (std::size_t i = 0; i < ssns.size(); ++i) ASSERT_EQ(ssns[i], i + 1) << "seed " << seed;
  EXPECT_GT(p.b->counters().out_of_order, 0u) << "the shuffled wire should have reordered something";
  EXPECT_EQ(sink.counters().messages_delivered, 12u);
  EXPECT_TRUE(sink.counters().errors.empty());
  for (std::size_t i = 0; i < untagged.size(); ++i) {
    const ConstBytes got = mem.read(0x2000 * i, untagged[i].size());
    EXPECT_TRUE(std::equal(untagged[i].begin(), untagged[i].end(), got.data)) << "untagged " << i;
  }
  const ConstBytes got = mem.read(0x80000, tagged_all.size());
  EXPECT_TRUE(std::equal(tagged_all.begin(), tagged_all.end(), got.data));
}

// RFC 5043 6.2 and 6.1: Terminate from either side ends the session; the next one numbers from 0 again.
TEST(SctpEndpoint, AcceptedSessionTerminatedAndReused) {
  Pair p;
  Recorder ra, rb;
  ra.attach(*p.a);
  rb.attach(*p.b);
  p.connect();
  for (int round = 0; round < 2; ++round) {
    const std::vector<std::uint8_t> pd_i{1, 2, 3}, pd_a(512, 9);
    p.a->initiate(4, ConstBytes(pd_i));
    ASSERT_TRUE(p.run([&] { return rb.has(NoticeKind::kInitiate, 4); }));
    EXPECT_EQ(rb.notices.back().private_data, pd_i);
    EXPECT_EQ(p.b->pending_initiates(), 1u);
    p.b->accept(4, ConstBytes(pd_a));
    EXPECT_EQ(p.b->pending_initiates(), 0u);
    ASSERT_TRUE(p.run([&] { return ra.has(NoticeKind::kAccepted, 4); }));
    EXPECT_EQ(ra.notices.back().private_data, pd_a);
    p.a->send_untagged(4, 0, 0, {});
    p.b->send_tagged(4, 0x100, 0, 0, {});
    ASSERT_TRUE(p.run([&] { return ra.segments.size() == 1 && rb.segments.size() == 1; }));
    EXPECT_EQ(ra.segments[0], std::make_pair(std::uint16_t{4}, std::uint16_t{1}));
    EXPECT_EQ(rb.segments[0], std::make_pair(std::uint16_t{4}, std::uint16_t{1}));
    Endpoint& closer = round == 0 ? *p.a : *p.b;
    Recorder& other = round == 0 ? rb : ra;
    closer.terminate(4);
    EXPECT_EQ(closer.session_state(4), SessionState::kIdle);
    ASSERT_TRUE(p.run([&] { return other.has(NoticeKind::kTerminated, 4); }));
    EXPECT_EQ(p.a->session_state(4), SessionState::kIdle);
    EXPECT_EQ(p.b->session_state(4), SessionState::kIdle);
    ra = Recorder{};
    rb = Recorder{};
    ra.attach(*p.a);
    rb.attach(*p.b);
  }
  EXPECT_EQ(p.a->counters().violations + p.b->counters().violations, 0u);
}

// RFC 5043 6.3: Reject with private data, at the ULP's direction only.
TEST(SctpEndpoint, RejectedSession) {
  Pair p;
  Recorder ra, rb;
  ra.attach(*p.a);
  rb.attach(*p.b);
  p.connect();
  p.a->initiate(0);
  ASSERT_TRUE(p.run([&] { return rb.has(NoticeKind::kInitiate, 0); }));
  p.run();  // nothing happens until the ULP decides: no automatic Reject
  EXPECT_FALSE(ra.has(NoticeKind::kRejected, 0));
  EXPECT_EQ(p.a->session_state(0), SessionState::kInitiateSent);
  const std::vector<std::uint8_t> why{'n', 'o'};
  p.b->reject(0, ConstBytes(why));
  ASSERT_TRUE(p.run([&] { return ra.has(NoticeKind::kRejected, 0); }));
  EXPECT_EQ(ra.notices.back().private_data, why);
  EXPECT_EQ(p.a->session_state(0), SessionState::kIdle);
}

// RFC 5043 6.4: beyond the finite limit of Initiates pending a ULP decision, the answer is Terminate.
TEST(SctpEndpoint, InitiatesBeyondPendingLimitAnsweredTerminate) {
  EndpointConfig cb;
  cb.max_pending_initiates = 2;
  Pair p({}, cb);
  Recorder ra, rb;
  ra.attach(*p.a);
  rb.attach(*p.b);
  p.connect();
  for (std::uint16_t s = 0; s < 3; ++s) p.a->initiate(s);
  ASSERT_TRUE(p.run([&] { return ra.has(NoticeKind::kTerminated, 2); }));
  EXPECT_TRUE(rb.has(NoticeKind::kInitiate, 0));
  EXPECT_TRUE(rb.has(NoticeKind::kInitiate, 1));
  EXPECT_TRUE(rb.has(NoticeKind::kOverLimit, 2));
  EXPECT_EQ(p.b->pending_initiates(), 2u);
  EXPECT_EQ(p.b->counters().over_limit, 1u);
  EXPECT_EQ(p.a->session_state(2), SessionState::kIdle);
  p.b->terminate(0);  // the ULP answers one: room for another
  p.a->initiate(2);
  ASSERT_TRUE(p.run([&] { return rb.has(NoticeKind::kInitiate, 2); }));
}

// RFC 5043 6.6: a segment of the active side arriving before the ULP accepted is held, then delivered.
TEST(SctpEndpoint, EarlySegmentHeldUntilAccept) {
  Pair p;
  Recorder rb;
  rb.attach(*p.b);
  p.connect();
  p.a->initiate(0);
  ASSERT_TRUE(p.run([&] { return rb.has(NoticeKind::kInitiate, 0); }));
  const std::vector<std::uint8_t> seg{
      0, 1, rnic::wire::kCtrlTagged | rnic::wire::kCtrlLast | 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
      0, 0};  // DDP-SSN 1 + a 14-byte tagged header
  p.a->send_raw(0, 16, ConstBytes(seg));
  p.run();
  EXPECT_TRUE(rb.segments.empty());
  p.b->accept(0);
  ASSERT_TRUE(p.run([&] { return rb.segments.size() == 1; }));
  EXPECT_EQ(rb.segments[0].second, 1);
}

// RFC 5043 6.1: a chunk that fits no legal sequence terminates the session. Each case puts the passive
// side b in a state, then the active side a plays a broken peer with a raw chunk.
struct IllegalCase {
  const char* name;
  SessionState b_state;  // where b is when the chunk arrives
  std::uint32_t ppid;
  std::vector<std::uint8_t> chunk;
  bool expect_violation;  // else: dropped as stale
};

// gtest prints the case by its name (not as raw bytes) in failure messages.
void PrintTo(const IllegalCase& c, std::ostream* os) { *os << c.name; }

class SctpIllegal : public ::testing::TestWithParam<IllegalCase> {};

TEST_P(SctpIllegal, TerminatesTheSession) {
  const IllegalCase& c = GetParam();
  Pair p;
  Recorder ra, rb;
  ra.attach(*p.a);
  rb.attach(*p.b);
  p.connect();
  if (c.b_state == SessionState::kInitiateReceived) {
    p.a->initiate(0);
    ASSERT_TRUE(p.run([&] { return rb.has(NoticeKind::kInitiate, 0); }));
  } else if (c.b_state == SessionState::kEstablished) {
    p.b->initiate(0);  // b active this time
    ASSERT_TRUE(p.run([&] { return ra.has(NoticeKind::kInitiate, 0); }));
    p.a->accept(0);
    ASSERT_TRUE(p.run([&] { return rb.has(NoticeKind::kAccepted, 0); }));
  } else if (c.b_state == SessionState::kInitiateSent) {
    p.b->initiate(0);
    ASSERT_TRUE(p.run([&] { return ra.has(NoticeKind::kInitiate, 0); }));
  }
  ASSERT_EQ(p.b->session_state(0), c.b_state);
  p.a->send_raw(0, c.ppid, ConstBytes(c.chunk));
  if (c.expect_violation) {
    ASSERT_TRUE(p.run([&] { return rb.has(NoticeKind::kViolation, 0); })) << c.name;
    EXPECT_EQ(p.b->session_state(0), SessionState::kIdle);
    EXPECT_EQ(p.b->counters().violations, 1u);
    EXPECT_FALSE(rb.notices.back().detail.empty());
    // b answered Terminate: a sees the end of its session too (unless a had none).
    if (c.b_state != SessionState::kIdle) {
      ASSERT_TRUE(p.run([&] { return ra.has(NoticeKind::kTerminated, 0); }));
    }
  } else {
    ASSERT_TRUE(p.run([&] { return p.b->counters().stale == 1; })) << c.name;
    EXPECT_EQ(p.b->counters().violations, 0u);
  }
}

std::vector<std::uint8_t> ctl(std::uint16_t ssn, std::uint16_t fn, std::size_t pd = 0) {
  std::vector<std::uint8_t> v{static_cast<std::uint8_t>(ssn >> 8), static_cast<std::uint8_t>(ssn),
                              static_cast<std::uint8_t>(fn >> 8), static_cast<std::uint8_t>(fn)};
  v.resize(4 + pd, 0xEE);
  return v;
}
const std::vector<std::uint8_t> kSeg1{0, 1, 0xC1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
const std::vector<std::uint8_t> kSeg0{0, 0, 0xC1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};

INSTANTIATE_TEST_SUITE_P(
    Rfc5043Sec6_1, SctpIllegal,
    ::testing::Values(IllegalCase{"Accept with no session (stale)", SessionState::kIdle, 17, ctl(0, 2), false},
                      IllegalCase{"segment with no session (stale)", SessionState::kIdle, 16, kSeg1, false},
                      IllegalCase{"Initiate while InitiateSent", SessionState::kInitiateSent, 17, ctl(0, 1), true},
                      IllegalCase{"segment instead of the answer", SessionState::kInitiateSent, 16, kSeg0, true},
                      IllegalCase{"Accept from the active side", SessionState::kInitiateReceived, 17, ctl(1, 2), true},
                      IllegalCase{"second Initiate", SessionState::kInitiateReceived, 17, ctl(1, 1), true},
                      IllegalCase{"Initiate in a session", SessionState::kEstablished, 17, ctl(1, 1), true},
                      IllegalCase{"Accept in a session", SessionState::kEstablished, 17, ctl(1, 2), true},
                      IllegalCase{"Reject in a session", SessionState::kEstablished, 17, ctl(1, 3), true},
                      IllegalCase{"Terminate with private data", SessionState::kEstablished, 17, ctl(1, 4, 3), true},
                      IllegalCase{"unknown function code", SessionState::kEstablished, 17, ctl(1, 9), true},
                      IllegalCase{"private data over 512", SessionState::kInitiateSent, 17, ctl(0, 2, 513), true},
                      IllegalCase{"DDP-SSN duplicate of the Accept", SessionState::kEstablished, 17, ctl(0, 4), true},
                      IllegalCase{"DDP-SSN gap beyond 32767",
                                  SessionState::kEstablished,
                                  16,
                                  {0x80, 0x00, 0xC1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                  true}),
    [](const ::testing::TestParamInfo<IllegalCase>& param_info) {
      // "DDP-SSN gap beyond 32767" -> "DDPSSNGapBeyond32767": CamelCase words, nothing else.
      std::string n;
      bool word_start = true;
      for (const char* s = param_info.param.name; *s != 0; ++s) {
        const auto c = static_cast<unsigned char>(*s);
        if (std::isalnum(c) == 0) {
          word_start = true;
          continue;
        }
        n += word_start ? static_cast<char>(std::toupper(c)) : static_cast<char>(c);
        word_start = false;
      }
      return n;
    });

}  // namespace
