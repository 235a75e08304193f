// SPDX-License-Identifier: Apache-2.0
// Card to card (issue 35, docs/transmit.md): two rnic-sim cards (NET = 1), each with its own driver and
// CardEndpoint (usrsctp over the card's rings) in this process, one association over UDP between their
// network ports. Card A is the Data Source: CardEndpoint::post_send hands usrsctp descriptor chunks and the
// card reads every payload byte from A's registered memory (kLocalRead). Card B is the Data Sink: it
// places every segment (tagged into an advertised STag, untagged into posted receive buffers). Checked:
// every byte in B's memory, every completion on both sides (B's in DDP-SSN order, A's only once the peer's
// cumulative TSN ack covers every chunk, RFC 9260 6.2), and that neither host handled a payload byte
// (A: the gather carried every descriptor and usrsctp got zeros only; B: the ring held headers only).
//
// Seeded (RNIC_TEST_SEED=<n> replays; the seed is printed): the messages and rnic-sim's path impairment.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <usrsctp.h>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/driver/rnic.hpp"
#include "rnic/sctp/card_endpoint.hpp"
#include "rnic/sctp/udp_link.hpp"
#include "rnic/sim_protocol/protocol.hpp"
#include "rnic/systest/raw_client.hpp"
#include "rnic/systest/sim_process.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/gather.hpp"

namespace {

namespace proto = rnic::sim_protocol;
using rnic::sctp::AssociationState;
using rnic::sctp::CardEndpoint;
using rnic::sctp::NoticeKind;
using rnic::sctp::SendCompletion;
using rnic::sctp::SendRequest;
using rnic::sctp::SendStatus;
using rnic::systest::RawClient;
using rnic::systest::SimProcess;
using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kStreams = 2;
constexpr std::uint32_t kQn = 0;
constexpr std::size_t kSourceBytes = 1 << 20;   // A's registered source
constexpr std::size_t kSinkBytes = 1 << 20;     // B's tagged sink
constexpr std::uint32_t kRecvBytes = 16 << 10;  // each of B's untagged receive buffers
constexpr std::uint32_t kRecvBuffers = 64;      // per stream
constexpr std::uint64_t kSinkBaseTo = 0x7000'0000'0000ull;

// One card: rnic-sim with its UDP port, the driver, a client.
struct Card {
  explicit Card(std::vector<std::string> sim_args, const rnic::NetOptions& net_options = {})
      : sim(std::move(sim_args)) {
    dev = rnic::Device::open("sim:" + sim.socket());
    RawClient c(sim.socket());
    EXPECT_EQ(c.hello(proto::kRoleObserver), proto::Status::kOk);
    udp_port = static_cast<std::uint16_t>(c.status_rep().udp_port);
    net = &dev->open_net(net_options);
    client = dev->create_client();
  }
  rnic::sctp::CardEndpointConfig config(std::uint16_t peer_udp, std::uint16_t sctp_port) const {
    rnic::sctp::CardEndpointConfig c;
    c.sctp.port = sctp_port;
    c.sctp.streams = kStreams;
    c.my_udp_port = udp_port;
    c.peer = {rnic::sctp::kIpv4Loopback, peer_udp};
    return c;
  }
  SimProcess sim;
  std::unique_ptr<rnic::Device> dev;
  std::uint16_t udp_port = 0;
  rnic::NetPort* net = nullptr;
  std::unique_ptr<rnic::Client> client;
  std::unique_ptr<CardEndpoint> ep;
};

struct Message {
  bool tagged = false;
  std::uint16_t stream = 0;
  std::uint64_t source_off = 0;  // in A's source
  std::uint32_t length = 0;
  std::uint64_t sink_off = 0;  // tagged: in B's sink
  std::uint32_t msn = 0;       // untagged: the MSN post_send gave it
};

// Both fixtures move their sides one step at a time until what a test waits for holds.
class Stepping : public ::testing::Test {
 protected:
  virtual void step() = 0;
  template <class Pred>
  void run_until(Pred done, const char* what, std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto end = Clock::now() + limit;
    while (!done()) {
      ASSERT_LT(Clock::now(), end) << "timed out waiting for " << what;
      step();
    }
  }
  // The send completions the CardEndpoint has, appended to `into`.
  static void take_sends(CardEndpoint& ep, std::vector<SendCompletion>& into) {
    std::vector<SendCompletion> sent;
    ep.poll_sends(sent);
    into.insert(into.end(), sent.begin(), sent.end());
  }
};

class CardToCard : public Stepping {
 protected:
  // Both cards with `impair` on their paths, the association up with DDP, sessions accepted on every
  // stream, A's source and B's sink and receive buffers registered.
  void start(const std::vector<std::string>& impair) {
    std::vector<std::string> args{"--udp-port", "0"};
    args.insert(args.end(), impair.begin(), impair.end());
    a_ = std::make_unique<Card>(args);
    b_ = std::make_unique<Card>(args);
    a_->ep = std::make_unique<CardEndpoint>(*a_->dev, *a_->client, *a_->net, a_->config(b_->udp_port, 5001));
    b_->ep = std::make_unique<CardEndpoint>(*b_->dev, *b_->client, *b_->net, b_->config(a_->udp_port, 5002));
    b_->ep->set_session_handler([this](const rnic::sctp::SessionNotice& n) {
      if (n.kind == NoticeKind::kInitiate) b_->ep->accept(n.stream);
    });
    a_->ep->set_session_handler([this](const rnic::sctp::SessionNotice& n) {
      if (n.kind == NoticeKind::kAccepted) ++accepted_;
    });
    b_->ep->listen();
    a_->ep->connect(5002);
    run_until([&] { return a_->ep->association_written() && b_->ep->association_written(); }, "the association");
    ASSERT_GE(a_->ep->endpoint().ddp_streams(), kStreams);
    for (std::uint16_t s = 0; s < kStreams; ++s) a_->ep->endpoint().initiate(s);
    run_until([&] { return accepted_ == kStreams && a_->ep->live(kStreams - 1); }, "the sessions");

    source_ = a_->client->alloc_buffer(kSourceBytes);
    rnic::RegisterRequest rq;
    rq.pd = *a_->ep->pd();
    rq.buffer = source_.id;
    rq.length = kSourceBytes;
    rq.access = rnic::kLocalRead;
    rq.base_to = 0x1000;
    source_stag_ = a_->client->register_memory(rq).stag;

    sink_ = b_->client->alloc_buffer(kSinkBytes);
    rq.pd = *b_->ep->pd();
    rq.buffer = sink_.id;
    rq.length = kSinkBytes;
    rq.access = rnic::kRemoteWrite;
    rq.base_to = kSinkBaseTo;
    sink_stag_ = b_->client->register_memory(rq).stag;
    for (std::uint16_t s = 0; s < kStreams; ++s) {
      const rnic::StreamId id = b_->ep->streams()[s];
      b_->client->configure_queue(id, kQn, 8);
      recv_[s] = b_->client->alloc_buffer(std::size_t{kRecvBytes} * kRecvBuffers);
      for (std::uint32_t j = 0; j < kRecvBuffers; ++j)
        b_->client->post_recv(id, kQn, recv_[s].id, std::uint64_t{j} * kRecvBytes, kRecvBytes, j);
    }
  }

  void step() override {
    a_->ep->step();
    b_->ep->step();
    std::vector<rnic::Completion> got;
    b_->client->poll(got);
    for (auto& c : got) sink_done_.push_back(c);
    take_sends(*a_->ep, send_done_);
  }

  // `n` messages of the seeded plan: lengths 16..max (a few zero-length), tagged into consecutive sink
  // ranges and untagged into the receive buffers, on both streams; A's source filled with the seed's bytes.
  std::vector<Message> plan(std::uint64_t seed, std::size_t n, std::uint32_t max) {
    std::mt19937_64 rng(seed);
    for (std::size_t i = 0; i < kSourceBytes; ++i) source_.data[i] = static_cast<std::uint8_t>(rng());
    a_->client->flush_buffer(source_.id, 0, kSourceBytes);
    std::vector<Message> v;
    std::uint64_t sink_at = 0;
    std::uint32_t untagged[kStreams] = {};
    for (std::size_t i = 0; i < n; ++i) {
      Message m;
      m.stream = static_cast<std::uint16_t>(rng() % kStreams);
      m.tagged = rng() % 2 == 0;
      m.length = rng() % 16 == 0 ? 0 : static_cast<std::uint32_t>(16 + rng() % (max - 15));
      if (!m.tagged && untagged[m.stream] == kRecvBuffers) m.tagged = true;
      if (m.tagged && sink_at + m.length > kSinkBytes) break;
      m.source_off = rng() % (kSourceBytes - m.length + 1);
      if (m.tagged) {
        m.sink_off = sink_at;
        sink_at += m.length;
      } else {
        ++untagged[m.stream];
      }
      v.push_back(m);
    }
    return v;
  }

  SendRequest request(const Message& m, std::uint64_t cookie) const {
    SendRequest r;
    r.stream = m.stream;
    r.tagged = m.tagged;
    r.remote_stag = sink_stag_;
    r.remote_to = kSinkBaseTo + m.sink_off;
    r.qn = kQn;
    r.rsvd_ulp = m.tagged ? cookie & 0xFF : cookie;
    r.local_stag = source_stag_;
    r.local_to = 0x1000 + m.source_off;
    r.length = m.length;
    r.cookie = cookie;
    return r;
  }

  // Posts every message (as the ring and usrsctp take them), then waits for every completion on both
  // sides and checks them and every byte.
  void send_and_check(std::vector<Message>& msgs) {
    std::size_t next = 0;
    run_until(
        [&] {
          while (next < msgs.size() && a_->ep->sends_in_flight() < 256) {
            msgs[next].msn = a_->ep->post_send(request(msgs[next], next)).msn;
            ++next;
          }
          return next == msgs.size() && send_done_.size() == msgs.size() && sink_done_.size() == msgs.size();
        },
        "every completion", std::chrono::seconds(120));
    // A: every send acknowledged, in posting order per stream.
    std::uint64_t expect_next[kStreams] = {};
    std::vector<std::size_t> order[kStreams];
    for (std::size_t i = 0; i < msgs.size(); ++i) order[msgs[i].stream].push_back(i);
    for (const SendCompletion& c : send_done_) {
      ASSERT_EQ(c.status, SendStatus::kAcknowledged) << "cookie " << c.cookie;
      ASSERT_LT(c.cookie, msgs.size());
      const Message& m = msgs[c.cookie];
      EXPECT_EQ(c.stream, m.stream);
      EXPECT_EQ(c.length, m.length);
      ASSERT_LT(expect_next[m.stream], order[m.stream].size());
      EXPECT_EQ(order[m.stream][expect_next[m.stream]++], c.cookie) << "sends of a stream complete in order";
    }
    // B: RFC 5041 5.4, each stream's messages delivered in order, every byte where the plan put it.
    std::size_t got[kStreams] = {};
    for (const rnic::Completion& c : sink_done_) {
      ASSERT_NE(c.kind, rnic::Completion::Kind::kError) << int(c.err_type) << "/" << int(c.err_code);
      const std::uint16_t s = static_cast<std::uint16_t>(c.stream - b_->ep->streams()[0]);
      ASSERT_LT(s, kStreams);
      ASSERT_LT(got[s], order[s].size());
      const std::size_t index = order[s][got[s]++];
      const Message& m = msgs[index];
      const std::uint8_t* want = source_.data + m.source_off;
      if (m.tagged) {
        ASSERT_EQ(c.kind, rnic::Completion::Kind::kTagged) << "message " << index;
        EXPECT_EQ(c.stag, sink_stag_);
        EXPECT_EQ(c.rsvd_ulp, index & 0xFF);
        EXPECT_EQ(0, std::memcmp(sink_.data + m.sink_off, want, m.length)) << "message " << index;
      } else {
        ASSERT_EQ(c.kind, rnic::Completion::Kind::kUntagged) << "message " << index;
        EXPECT_EQ(c.msn, m.msn);
        EXPECT_EQ(c.length, m.length);
        EXPECT_EQ(c.rsvd_ulp, index);
        EXPECT_EQ(0, std::memcmp(recv_[s].data + c.offset, want, m.length)) << "message " << index;
      }
    }
  }

  std::unique_ptr<Card> a_, b_;
  std::size_t accepted_ = 0;
  rnic::Buffer source_, sink_, recv_[kStreams];
  rnic::Stag source_stag_ = 0, sink_stag_ = 0;
  std::vector<rnic::Completion> sink_done_;
  std::vector<SendCompletion> send_done_;
};

// What every clean run shows besides the bytes: no payload byte handled by either host.
void expect_no_host_payload(const CardEndpoint& a, const CardEndpoint& b) {
  // Every segment went to usrsctp as a descriptor chunk: no payload byte through A's host.
  EXPECT_EQ(a.endpoint().counters().described_segments, a.endpoint().counters().segments_sent);
  EXPECT_EQ(a.counters().descriptors_sent, a.counters().descriptors_sent);
  EXPECT_GT(a.counters().gather_packets, 0u);
  EXPECT_EQ(a.counters().fault_aborts, 0u);
  EXPECT_EQ(a.counters().fragment_aborts, 0u);
  // B's ring: each DATA chunk the card took is cut to its header, DDP-SSN and DDP header.
  EXPECT_LT(b.counters().bytes_in_ring * 8, b.counters().bytes_on_wire);
  std::printf(
      "A: %llu sends acknowledged, %llu gather packets, %llu descriptors, %llu SACK acks; "
      "B: %llu packets in, %llu bytes in the ring of %llu on the wire\n",
      static_cast<unsigned long long>(a.counters().sends_acknowledged),
      static_cast<unsigned long long>(a.counters().gather_packets),
      static_cast<unsigned long long>(a.counters().descriptors_sent),
      static_cast<unsigned long long>(a.counters().sack_acks), static_cast<unsigned long long>(b.counters().packets_in),
      static_cast<unsigned long long>(b.counters().bytes_in_ring),
      static_cast<unsigned long long>(b.counters().bytes_on_wire));
}

TEST_F(CardToCard, TaggedAndUntaggedMessagesGoCardToCard) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  ASSERT_NO_FATAL_FAILURE(start({}));
  auto msgs = plan(seed, 120, 9000);
  ASSERT_NO_FATAL_FAILURE(send_and_check(msgs));
  expect_no_host_payload(*a_->ep, *b_->ep);
  EXPECT_EQ(a_->ep->sends_in_flight(), 0u);
  EXPECT_EQ(a_->net->tx_faults().associations, 0u);
  EXPECT_EQ(a_->net->counters().gather_sent, a_->ep->counters().gather_packets);
}

TEST_F(CardToCard, LossDuplicationAndReorderingOnThePath) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  ASSERT_NO_FATAL_FAILURE(
      start({"--net-loss", "0.03", "--net-dup", "0.03", "--net-reorder", "0.05", "--net-seed", std::to_string(seed)}));
  auto msgs = plan(seed, 80, 6000);
  ASSERT_NO_FATAL_FAILURE(send_and_check(msgs));
  expect_no_host_payload(*a_->ep, *b_->ep);
}

// ---- card A against a software receiver (usrsctp over UDP in this process) ----------------------------
//
// The peer's packets pass through the test on their way to the card, so it can hold, drop or forge them
// (the SACKs above all). usrsctp's CRC32c switch is process-wide and the CardEndpoint turns it off, so
// the test seals each of the peer's packets itself (the card checks it); the card's are sealed by the card.

struct SoftPeer {
  explicit SoftPeer(std::uint16_t card_port, std::uint16_t local_port = 0)
      : link(rnic::sctp::Ipv4Endpoint{rnic::sctp::kIpv4Loopback, local_port}),
        card{rnic::sctp::kIpv4Loopback, card_port},
        ep(config(), [this](rnic::wire::ConstBytes p) { to_card.push_back(p.to_vector()); }) {}
  static rnic::sctp::EndpointConfig config() {
    rnic::sctp::EndpointConfig c;
    c.port = 5002;
    c.streams = kStreams;
    c.crc32c_offload = true;
    return c;
  }
  // The card's datagrams into usrsctp (their DATA TSNs noted), usrsctp's work, its packets to the card
  // through `pass` (false: dropped).
  void step() {
    while (auto d = link.receive(0)) {
      if (auto sum = rnic::wire::summarize_packet(rnic::wire::ConstBytes(d->bytes)); sum.ok()) {
        for (const auto& c : sum->data) {
          ++data_chunks_in;
          if (!highest_tsn || static_cast<std::int32_t>(c.tsn - *highest_tsn) > 0) highest_tsn = c.tsn;
        }
      }
      ep.input(rnic::wire::ConstBytes(d->bytes));
    }
    if (reading) ep.pump();  // not reading: usrsctp keeps what it received, its window closes
    while (!to_card.empty()) {
      std::vector<std::uint8_t> p = std::move(to_card.front());
      to_card.pop_front();
      if (pass && !pass(p)) {
        ++held_back;
        continue;
      }
      send(p);
    }
  }
  void send(std::vector<std::uint8_t> p) {
    rnic::capture::SctpPacket::seal(p);
    link.send_to(card, rnic::wire::ConstBytes(p));
  }
  rnic::sctp::UdpLink link;
  rnic::sctp::Ipv4Endpoint card;
  std::deque<std::vector<std::uint8_t>> to_card;
  rnic::sctp::Endpoint ep;
  std::function<bool(const std::vector<std::uint8_t>&)> pass;
  bool reading = true;
  std::optional<std::uint32_t> highest_tsn;
  std::uint64_t data_chunks_in = 0, held_back = 0;
};

class CardSend : public Stepping {
 protected:
  void start(const rnic::NetOptions& net = {}) {
    seed_ = rnic::tb::random_test_seed();  // the messages' lengths, offsets and streams
    a_ = std::make_unique<Card>(std::vector<std::string>{"--udp-port", "0"}, net);
    source_ = a_->client->alloc_buffer(kSourceBytes);
    std::mt19937_64 rng(7);
    for (std::size_t i = 0; i < kSourceBytes; ++i) source_.data[i] = static_cast<std::uint8_t>(rng());
    ASSERT_NO_FATAL_FAILURE(connect());
  }
  // A new association (a new peer, the same card and entry): its streams on a new PD, the source
  // registered there.
  void connect() {
    a_->ep.reset();  // clears the entry (fenced)
    peer_ = std::make_unique<SoftPeer>(a_->udp_port);
    accepted_ = 0;
    untagged_at_.clear();
    a_->ep =
        std::make_unique<CardEndpoint>(*a_->dev, *a_->client, *a_->net, a_->config(peer_->link.local().port, 5001));
    a_->ep->set_session_handler([this](const rnic::sctp::SessionNotice& n) {
      if (n.kind == NoticeKind::kAccepted) ++accepted_;
    });
    peer_->ep.set_session_handler([this](const rnic::sctp::SessionNotice& n) {
      if (n.kind == NoticeKind::kInitiate) peer_->ep.accept(n.stream);
    });
    peer_->ep.set_segment_sink(
        [this](std::uint16_t s, std::uint16_t, rnic::wire::ConstBytes seg) { on_segment(s, seg); });
    peer_->ep.listen();
    a_->ep->connect(5002);
    run_until([&] { return a_->ep->association_written(); }, "the association");
    for (std::uint16_t s = 0; s < kStreams; ++s) a_->ep->endpoint().initiate(s);
    run_until([&] { return accepted_ == kStreams && a_->ep->live(kStreams - 1); }, "the sessions");
    source_stag_ = register_source(rnic::kLocalRead);
  }
  rnic::Stag register_source(std::uint32_t access, std::optional<rnic::PdId> pd = std::nullopt) {
    rnic::RegisterRequest rq;
    rq.pd = pd.value_or(*a_->ep->pd());
    rq.buffer = source_.id;
    rq.length = kSourceBytes;
    rq.access = access;
    rq.base_to = kSourceBaseTo;
    return a_->client->register_memory(rq).stag;
  }

  // Each segment's payload must be the source's bytes the message names (tagged: by TO; untagged: by
  // (stream, MSN) and MO).
  void on_segment(std::uint16_t stream, rnic::wire::ConstBytes seg) {
    auto d = rnic::wire::decode_segment(seg);
    ASSERT_TRUE(d.ok());
    std::uint64_t at = 0;
    if (const auto* t = std::get_if<rnic::wire::TaggedHeader>(&d->header)) {
      at = t->to - kSinkBaseTo;  // the tests send tagged message i's bytes to TO kSinkBaseTo + source offset
      ASSERT_EQ(t->stag, kRemoteStag);
    } else {
      const auto& u = std::get<rnic::wire::UntaggedHeader>(d->header);
      const auto it = untagged_at_.find({stream, u.msn});
      ASSERT_NE(it, untagged_at_.end()) << "stream " << stream << " MSN " << u.msn;
      at = it->second + u.mo;
    }
    ASSERT_LE(at + d->payload.size, kSourceBytes);
    EXPECT_EQ(0, std::memcmp(source_.data + at, d->payload.data, d->payload.size)) << "at " << at;
    payload_bytes_ += d->payload.size;
    ++segments_;
  }

  void step() override {
    a_->ep->step();
    peer_->step();
    take_sends(*a_->ep, done_);
  }
  void run_for(std::chrono::milliseconds t) {
    const auto end = Clock::now() + t;
    while (Clock::now() < end) step();
  }

  SendRequest request(bool tagged, std::uint16_t stream, std::uint64_t off, std::uint32_t length,
                      std::uint64_t cookie) {
    SendRequest r;
    r.stream = stream;
    r.tagged = tagged;
    r.remote_stag = kRemoteStag;
    r.remote_to = kSinkBaseTo + off;
    r.qn = kQn;
    r.local_stag = source_stag_;
    r.local_to = kSourceBaseTo + off;
    r.length = length;
    r.cookie = cookie;
    return r;
  }
  rnic::sctp::SendTicket post(const SendRequest& r) {
    const rnic::sctp::SendTicket t = a_->ep->post_send(r);
    if (!r.tagged) untagged_at_[{r.stream, t.msn}] = r.local_to - kSourceBaseTo;
    sent_bytes_ += r.length;
    posted_segments_ += t.segments;
    return t;
  }
  // `n` messages of 16..max bytes from random places of the source, alternating tagged and untagged.
  void post_random(std::uint64_t seed, std::size_t n, std::uint32_t max) {
    std::mt19937_64 rng(seed);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t len = static_cast<std::uint32_t>(16 + rng() % (max - 15));
      post(request(i % 2 == 0, static_cast<std::uint16_t>(rng() % kStreams), rng() % (kSourceBytes - len), len,
                   next_cookie_++));
    }
  }
  std::size_t acknowledged() const {
    return static_cast<std::size_t>(std::count_if(
        done_.begin(), done_.end(), [](const SendCompletion& c) { return c.status == SendStatus::kAcknowledged; }));
  }
  // A SACK chunk from the peer (RFC 9260 3.3.4), no gap reports, the peer's ports and `vtag`.
  std::vector<std::uint8_t> sack(std::uint32_t vtag, std::uint32_t cum) const {
    std::vector<std::uint8_t> p{0x13, 0x8A, 0x13, 0x89};  // source 5002, destination 5001
    const auto be32 = [&p](std::uint32_t v) {
      for (int i = 3; i >= 0; --i) p.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    };
    be32(vtag);
    be32(0);
    p.insert(p.end(), {3, 0, 0, 16});
    be32(cum);
    be32(1 << 20);  // a_rwnd
    be32(0);        // no gap blocks, no duplicate TSNs
    return p;
  }

  static constexpr std::uint64_t kSourceBaseTo = 0x1000;
  static constexpr std::uint32_t kRemoteStag = 0xABCD01;
  std::unique_ptr<Card> a_;
  std::unique_ptr<SoftPeer> peer_;
  std::size_t accepted_ = 0;
  rnic::Buffer source_;
  rnic::Stag source_stag_ = 0;
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::uint64_t> untagged_at_;
  std::uint64_t payload_bytes_ = 0, sent_bytes_ = 0, segments_ = 0, next_cookie_ = 0, posted_segments_ = 0;
  std::uint64_t seed_ = 0;
  std::vector<SendCompletion> done_;
};

// Against a software receiver the peer's window is in real bytes (usrsctp's a_rwnd): the descriptor
// chunks' full lengths keep usrsctp's congestion control and flow control true. Every byte the peer got
// is the source's, every send acknowledged.
TEST_F(CardSend, ASoftwareReceiverGetsEveryByteFromTheGather) {
  ASSERT_NO_FATAL_FAILURE(start());
  post_random(seed_, 60, 9000);
  run_until([&] { return done_.size() == 60; }, "every send completion");
  EXPECT_EQ(acknowledged(), 60u);
  EXPECT_EQ(payload_bytes_, sent_bytes_);
  EXPECT_EQ(a_->ep->endpoint().counters().described_segments, a_->ep->endpoint().counters().segments_sent);
  EXPECT_EQ(a_->ep->counters().descriptors_sent, segments_);
}

// The reason for full-length descriptor chunks (docs/transmit.md): usrsctp sizes the peer's receive
// window from the bytes of the chunks it holds (RFC 9260 6.2.1). A receiver that stops reading closes its
// window; the card's sender must stop at it and not overrun it (usrsctp counts DATA it dropped for the
// window: none), then finish once the receiver reads again.
TEST_F(CardSend, TheReceiversWindowIsCountedInRealBytes) {
  ASSERT_NO_FATAL_FAILURE(start());
  sctpstat st{};
  usrsctp_get_stat(&st);
  const std::uint32_t dropped_before = st.sctps_datadroprwnd;
  peer_->reading = false;
  post_random(seed_ + 17, 200, 9000);  // about 1 MB, more than usrsctp's receive buffer
  std::uint64_t out = 0;
  const auto end = Clock::now() + std::chrono::seconds(3);
  for (auto quiet = Clock::now(); Clock::now() < end;) {  // until the sender has been stopped for 300 ms
    step();
    if (a_->ep->counters().packets_out != out) {
      out = a_->ep->counters().packets_out;
      quiet = Clock::now();
    } else if (Clock::now() - quiet > std::chrono::milliseconds(300)) {
      break;
    }
  }
  EXPECT_LT(acknowledged(), 200u) << "nothing was read, yet the peer's window let everything through";
  peer_->reading = true;
  run_until([&] { return done_.size() == 200; }, "every send completion", std::chrono::seconds(60));
  EXPECT_EQ(acknowledged(), 200u);
  EXPECT_EQ(payload_bytes_, sent_bytes_);
  usrsctp_get_stat(&st);
  EXPECT_EQ(st.sctps_datadroprwnd, dropped_before) << "DATA dropped by the receiver for its window";
}

// docs/transmit.md, "When a send is complete" (RFC 9260 6.2, 3.3.4): with every packet of the peer held
// back, nothing completes and the card reads the buffer again for each T3 retransmission (RFC 9260 6.3.3);
// a SACK with the wrong tag (RFC 9260 8.5) or a cumulative TSN ack past what was sent completes nothing;
// the peer's SACKs let through complete every send.
TEST_F(CardSend, OnlyTheCumulativeTsnAckOfThisAssociationCompletesASend) {
  ASSERT_NO_FATAL_FAILURE(start());
  bool hold = true;
  peer_->pass = [&hold](const std::vector<std::uint8_t>&) { return !hold; };
  post_random(seed_ + 11, 3, 300);  // one packet: the T3 retransmission (RFC 9260 6.3.3 E3) bundles them all
  run_until([&] { return peer_->data_chunks_in >= posted_segments_; }, "the first transmission of every chunk",
            std::chrono::seconds(20));
  const std::uint64_t first = a_->ep->counters().gather_packets;
  const std::uint64_t first_descriptors = a_->ep->counters().descriptors_sent;
  const std::uint32_t my_tag = *a_->ep->endpoint().local_verification_tag();
  peer_->send(sack(my_tag ^ 1, *peer_->highest_tsn));  // another association's tag
  run_until([&] { return a_->ep->counters().gather_packets > first; }, "a T3 retransmission", std::chrono::seconds(20));
  EXPECT_TRUE(done_.empty()) << "a SACK with the wrong tag completed a send";
  // The T3 retransmission bundles the outstanding descriptor chunks (RFC 9260 6.3.3 E3): the card reads
  // each buffer again, several in one packet.
  run_until([&] { return a_->ep->counters().descriptors_sent >= first_descriptors + 3; }, "the retransmission",
            std::chrono::seconds(20));
  EXPECT_GT(a_->ep->counters().descriptors_sent - first_descriptors, a_->ep->counters().gather_packets - first)
      << "no retransmitted packet carried two descriptor chunks";
  EXPECT_EQ(a_->ep->counters().sack_acks, 0u);
  EXPECT_EQ(a_->ep->sends_in_flight(), 3u);
  hold = false;
  run_until([&] { return done_.size() == 3; }, "every send completion");
  EXPECT_EQ(acknowledged(), 3u);
  EXPECT_GT(peer_->held_back, 0u);
  EXPECT_EQ(payload_bytes_, sent_bytes_);
}

TEST_F(CardSend, ACumulativeAckPastTheHighestTsnSentIsForged) {
  ASSERT_NO_FATAL_FAILURE(start());
  peer_->pass = [](const std::vector<std::uint8_t>&) { return false; };
  post_random(seed_ + 12, 4, 3000);
  run_until([&] { return peer_->data_chunks_in >= a_->ep->counters().descriptors_sent && peer_->highest_tsn; },
            "the first transmission");
  peer_->send(sack(*a_->ep->endpoint().local_verification_tag(), *peer_->highest_tsn + 1000));
  run_until([&] { return a_->ep->counters().sack_beyond_sent > 0; }, "the forged SACK");
  run_for(std::chrono::milliseconds(200));
  EXPECT_EQ(acknowledged(), 0u) << "a forged cumulative ack completed a send";
}

// Abort with sends in flight (RFC 9260 9.1): every send completes kAborted once the entry is cleared and
// the card has read their slots; the STag is free again. Then a new association on the same entry.
TEST_F(CardSend, AbortWithSendsInFlightFailsThemAndReleasesTheStag) {
  ASSERT_NO_FATAL_FAILURE(start());
  peer_->pass = [](const std::vector<std::uint8_t>&) { return false; };
  post_random(seed_ + 13, 5, 6000);
  run_until([&] { return peer_->data_chunks_in > 0; }, "the first transmission");
  try {
    a_->client->invalidate(source_stag_);
    ADD_FAILURE() << "invalidate succeeded with sends in flight";
  } catch (const rnic::Error& e) {
    EXPECT_EQ(e.code(), rnic::Errc::kBusy) << e.what();
    EXPECT_NE(std::string(e.what()).find("not yet acknowledged"), std::string::npos) << e.what();
  }
  a_->ep->endpoint().abort();
  run_until([&] { return done_.size() == 5; }, "the aborted sends");
  for (const auto& c : done_) EXPECT_EQ(c.status, SendStatus::kAborted);
  EXPECT_EQ(a_->ep->sends_in_flight(), 0u);
  EXPECT_NO_THROW(a_->client->invalidate(source_stag_));

  // Restart: a new association on the same card and entry carries sends again.
  ASSERT_NO_FATAL_FAILURE(connect());
  const std::uint64_t bytes_before = payload_bytes_;
  sent_bytes_ = 0;
  post_random(seed_ + 18, 10, 6000);
  run_until([&] { return done_.size() == 15; }, "the new association's sends");
  EXPECT_EQ(acknowledged(), 10u);
  EXPECT_EQ(payload_bytes_ - bytes_before, sent_bytes_);
}

// A hostile client that gives the hold back and invalidates its STag while a send is in flight: the
// card refuses the retransmission's descriptor (NET_TX_DROP_STAG_*), nothing of that packet leaves, the
// CardEndpoint aborts the association and fails the sends with the card's reason.
TEST_F(CardSend, AnStagInvalidatedUnderASendAbortsTheAssociation) {
  ASSERT_NO_FATAL_FAILURE(start());
  peer_->pass = [](const std::vector<std::uint8_t>&) { return false; };
  post_random(seed_ + 14, 3, 2000);
  run_until([&] { return peer_->data_chunks_in >= a_->ep->counters().descriptors_sent; }, "the first transmission");
  const std::uint64_t chunks = peer_->data_chunks_in;
  for (int i = 0; i < 3; ++i) a_->client->release_local_read(source_stag_);
  a_->client->invalidate(source_stag_);
  a_->client->free_buffer(source_.id);  // the retransmissions name memory the client no longer has
  run_until([&] { return done_.size() == 3; }, "the aborted sends", std::chrono::seconds(30));
  EXPECT_EQ(peer_->data_chunks_in, chunks) << "a packet with an invalid STag left the card";
  EXPECT_EQ(a_->ep->counters().fault_aborts, 1u);
  EXPECT_EQ(a_->ep->endpoint().state(), AssociationState::kLost);
  for (const auto& c : done_) {
    EXPECT_EQ(c.status, SendStatus::kAborted);
    EXPECT_EQ(c.fault_reason, rnic::hw::kNET_TX_DROP_STAG) << c.fault_reason;
  }
  EXPECT_GE(a_->net->counters().gather_drops_stag, 1u);
}

// The path MTU is pinned at association set-up; lowering it (an operator who knows the path shrank) makes
// later messages go at the new MULPDU, all acknowledged. Lowered again while segments sized for the old
// one wait in usrsctp, those are fragmented (RFC 9260 6.9): the CardEndpoint drops that packet (no part
// of a descriptor chunk leaves) and aborts the association; the sends fail.
TEST_F(CardSend, ThePathMtuLoweredMidAssociation) {
  ASSERT_NO_FATAL_FAILURE(start());
  EXPECT_THROW(a_->ep->endpoint().set_path_mtu(500), rnic::Error);
  EXPECT_THROW(a_->ep->endpoint().set_path_mtu(a_->ep->endpoint().path_mtu() + 1), rnic::Error)
      << "usrsctp never raises an association's fragmentation point (EndpointConfig::path_mtu does, before)";
  const std::size_t before = a_->ep->endpoint().max_segment_size();
  a_->ep->endpoint().set_path_mtu(1000);
  EXPECT_LT(a_->ep->endpoint().max_segment_size(), before);
  EXPECT_EQ(a_->ep->endpoint().path_mtu(), 1000u);
  post(request(true, 0, 0, 9000, 1));
  post(request(false, 1, 9000, 9000, 2));
  run_until([&] { return done_.size() == 2; }, "the sends at the new MULPDU");
  EXPECT_EQ(acknowledged(), 2u);
  EXPECT_EQ(payload_bytes_, sent_bytes_);

  peer_->pass = [](const std::vector<std::uint8_t>&) { return false; };
  post_random(seed_ + 16, 8, 4000);  // more than the congestion window: most wait in usrsctp, sized for MTU 1000
  run_until([&] { return peer_->data_chunks_in > 0; }, "the first transmission");
  a_->ep->endpoint().set_path_mtu(700);
  peer_->pass = nullptr;
  run_until([&] { return done_.size() == 10; }, "the aborted sends", std::chrono::seconds(30));
  EXPECT_EQ(a_->ep->counters().fragment_aborts, 1u);
  EXPECT_EQ(a_->ep->endpoint().state(), AssociationState::kLost);
  EXPECT_LT(acknowledged(), 10u);
}

// The peer restarts the association (RFC 9260 5.2.4: it lost its state and sends a new INIT from the same
// address and port): usrsctp drops what it held of the old association and numbers TSNs afresh, so the
// new association's SACKs must not complete the old sends. They fail (kAborted); the card's entry holds
// the new tags.
TEST_F(CardSend, APeerRestartFailsTheSendsOfTheOldAssociation) {
  ASSERT_NO_FATAL_FAILURE(start());
  peer_->pass = [](const std::vector<std::uint8_t>&) { return false; };
  post_random(seed_ + 19, 3, 1000);
  run_until([&] { return peer_->data_chunks_in >= posted_segments_; }, "the first transmission",
            std::chrono::seconds(20));
  const std::uint32_t old_tag = *a_->ep->endpoint().local_verification_tag();
  const std::uint16_t port = peer_->link.local().port;
  peer_.reset();  // gone without a word: its ABORT never left
  peer_ = std::make_unique<SoftPeer>(a_->udp_port, port);
  peer_->ep.connect(5001);
  run_until([&] { return done_.size() == 3; }, "the old sends to fail", std::chrono::seconds(30));
  for (const auto& c : done_) EXPECT_EQ(c.status, SendStatus::kAborted) << "cookie " << c.cookie;
  EXPECT_TRUE(a_->ep->association_written());
  EXPECT_NE(*a_->ep->endpoint().local_verification_tag(), old_tag);
}

// A transmit ring of two slots: usrsctp's packets wait for the card in order, none is lost.
TEST_F(CardSend, AFullTransmitRingLosesNothing) {
  rnic::NetOptions o;
  o.tx_log2_slots = 1;
  ASSERT_NO_FATAL_FAILURE(start(o));
  post_random(seed_ + 15, 40, 9000);
  run_until([&] { return done_.size() == 40; }, "every send completion");
  EXPECT_EQ(acknowledged(), 40u);
  EXPECT_EQ(payload_bytes_, sent_bytes_);
  EXPECT_GT(a_->ep->counters().tx_ring_full, 0u);
}

// post_send's errors, each specific; a zero-length message's local STag is not looked at (RFC 5041 5.2);
// a message under 16 bytes is a descriptor in the short form.
TEST_F(CardSend, PostSendRefusesWhatTheCardWouldDrop) {
  ASSERT_NO_FATAL_FAILURE(start());
  const auto code = [&](const SendRequest& r) {
    try {
      a_->ep->post_send(r);
    } catch (const rnic::Error& e) {
      return e.code();
    }
    return rnic::Errc::kBackend;  // no error: not what any case expects
  };
  SendRequest r = request(true, 0, 0, 100, 1);
  r.stream = kStreams + 5;
  EXPECT_EQ(code(r), rnic::Errc::kInvalidArgument);
  r = request(true, 0, 0, 100, 1);
  r.local_stag = register_source(rnic::kRemoteWrite);
  EXPECT_EQ(code(r), rnic::Errc::kInvalidArgument) << "an STag without kLocalRead";
  r = request(true, 0, 0, 100, 1);
  r.local_stag = register_source(rnic::kLocalRead, a_->client->alloc_pd());
  EXPECT_EQ(code(r), rnic::Errc::kInvalidArgument) << "an STag of another PD";
  r = request(true, 0, kSourceBytes - 50, 100, 1);
  EXPECT_EQ(code(r), rnic::Errc::kInvalidArgument) << "past the registration's end";
  r = request(true, 0, 0, 100, 1);
  r.local_to = kSourceBaseTo - 1;
  EXPECT_EQ(code(r), rnic::Errc::kInvalidArgument) << "before its start";
  r = request(true, 0, 0, 100, 1);
  r.local_stag ^= 0x01;  // another key: not this client's STag
  EXPECT_EQ(code(r), rnic::Errc::kNotFound);
  r = request(true, 0, 0, 100, 1);
  r.rsvd_ulp = 0x100;
  EXPECT_EQ(code(r), rnic::Errc::kInvalidArgument) << "RsvdULP past a tagged header's 8 bits";
  EXPECT_EQ(a_->ep->sends_in_flight(), 0u);
  EXPECT_NO_THROW(a_->client->invalidate(r.local_stag)) << "a refused send holds nothing";
  source_stag_ = register_source(rnic::kLocalRead);

  r = request(false, 1, 0, 0, 2);
  r.local_stag = 0xDEADBEEF;  // zero length: never read, never checked
  post(r);
  post(request(true, 0, 100, 7, 3));  // under 16 bytes: the short form, still read by the card
  post(request(false, 0, 200, 16, 4));
  run_until([&] { return done_.size() == 3; }, "the sends");
  EXPECT_EQ(acknowledged(), 3u);
  EXPECT_EQ(payload_bytes_, sent_bytes_);
  EXPECT_EQ(a_->ep->endpoint().counters().described_segments, 3u);
  EXPECT_EQ(a_->ep->counters().descriptors_sent, 3u);
}

}  // namespace
