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

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/sctp/card_endpoint.hpp"
#include "rnic/sim_protocol/protocol.hpp"
#include "rnic/systest/raw_client.hpp"
#include "rnic/systest/sim_process.hpp"
#include "rnic/tb/seed.hpp"
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
  explicit Card(std::vector<std::string> sim_args) : sim(std::move(sim_args)) {
    dev = rnic::Device::open("sim:" + sim.socket());
    RawClient c(sim.socket());
    EXPECT_EQ(c.hello(proto::kRoleObserver), proto::Status::kOk);
    udp_port = static_cast<std::uint16_t>(c.status_rep().udp_port);
    net = &dev->open_net();
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

class CardToCard : public ::testing::Test {
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

  void step() {
    a_->ep->step();
    b_->ep->step();
    std::vector<rnic::Completion> got;
    b_->client->poll(got);
    for (auto& c : got) sink_done_.push_back(c);
    std::vector<SendCompletion> sent;
    a_->ep->poll_sends(sent);
    for (auto& c : sent) send_done_.push_back(c);
  }

  template <class Pred>
  void run_until(Pred done, const char* what, std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto end = Clock::now() + limit;
    while (!done()) {
      ASSERT_LT(Clock::now(), end) << "timed out waiting for " << what;
      step();
    }
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
  EXPECT_EQ(a.endpoint().counters().copied_payload_bytes, 0u);
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

}  // namespace
