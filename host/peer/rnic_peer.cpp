// SPDX-License-Identifier: Apache-2.0
// rnic-peer: the remote peer of the card. A separate process that talks real SCTP (usrsctp, through
// rnic::sctp::Endpoint) carried in UDP datagrams (RFC 6951) and RFC 5043 DDP to whatever listens at
// --connect: rnic-sim's network port, a card, or a software receiver.
//
//   rnic-peer [--connect IPV4:PORT] [--local-port P] [--seed N] [--messages N] [--max-message B]
//             [--streams N] [--timeout-ms T] [--json FILE] [--pcap FILE] [--device DEV [--card-udp-port P]]
//
// With --device the peer is a card too (card to card, docs/transmit.md): usrsctp runs over that card's
// packet rings (rnic::sctp::CardEndpoint), the ULP writes the plan's messages once into a buffer
// registered with kLocalRead, and every segment goes to usrsctp as a descriptor chunk that the card's
// gather fills from that buffer as the packet leaves; a message counts as sent once its completion says
// the peer's cumulative TSN ack covers it. The report's card.segments_by_copy counts the segments whose
// payload went through the host (0: every one is a descriptor chunk, short ones and zero-length included).
//
// Steps: SCTP association (INIT carries the DDP Adaptation Layer Indication; the receiver must
// indicate DDP too, RFC 5043 5.1 / 11.1, else the run fails naming 11.1) -> Initiate on streams
// 0..N-1 with the demo ULP's Initiate private data (host/ulp) -> the receiver's Accept advertises its
// tagged buffers and untagged queue -> the plan of the run (host/ulp make_plan) is sent message by
// message, tagged and untagged, segmented at the association's MULPDU (RFC 5043 9) -> Terminate on
// every stream -> wait until SCTP has every chunk acknowledged -> graceful SCTP shutdown.
// Packets of the Endpoint go out as UDP datagrams to --connect; datagrams from that address go to the
// Endpoint; usrsctp's timers run on the wall clock.
//
// Prints (and with --json writes) messages, bytes, segments, elapsed seconds, messages/s, bytes/s and
// usrsctp's counters: retransmitted DATA chunks (fast and timeout), T3 timeouts, duplicate TSNs received.
// --pcap writes every datagram it sent and every one it took from the receiver as Ethernet/IPv4/UDP
// frames at wall-clock time (tshark decodes UDP port 9899 as SCTP).
// Exit status: 0 the run completed and every chunk was acknowledged; 1 failure (message on stderr:
// refused association, rejected session, timeout, plan that does not fit the advertisement ...);
// 2 bad arguments.
#include <fmt/format.h>
#include <usrsctp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/driver/rnic.hpp"
#include "rnic/sctp/card_endpoint.hpp"
#include "rnic/sctp/endpoint.hpp"
#include "rnic/sctp/udp_link.hpp"
#include "rnic/ulp/demo_ulp.hpp"

namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;
using rnic::sctp::AssociationState;
using rnic::sctp::Endpoint;
using rnic::sctp::Ipv4Endpoint;
using rnic::sctp::NoticeKind;
using rnic::sctp::UdpLink;
using rnic::wire::ConstBytes;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string connect = "127.0.0.1:9899";
  std::string local_ip = "127.0.0.1";
  std::uint16_t local_port = 0;
  std::uint16_t sctp_port = rnic::ulp::kPeerSctpPort;
  std::uint16_t peer_sctp_port = rnic::ulp::kReceiverSctpPort;
  std::uint64_t seed = 1;
  std::uint32_t messages = 1000;
  std::uint32_t max_message = 8192;
  std::uint16_t streams = 2;
  std::uint32_t timeout_ms = 30000;
  std::string json;
  std::string pcap;
  std::string device;               // --device: send from a card through its gather (docs/transmit.md)
  std::uint16_t card_udp_port = 0;  // the card's own UDP port (0: ask the simulator)
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// What the run needs of the side it sends from: usrsctp in UDP in this process (UdpPeer) or a card whose
// gather reads every payload byte from registered memory (CardPeer).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual Endpoint& ep() = 0;
  virtual std::vector<rnic::sctp::SessionNotice>& notices() = 0;
  virtual void step(int wait_ms) = 0;
  virtual void abort_association() noexcept = 0;
  virtual std::string local() const = 0;
  // Before the first message: every message of the plan where the sender keeps it.
  virtual void prepare(const rnic::ulp::Plan&, std::uint64_t /*seed*/) {}
  // True when one more message may be handed over now.
  virtual bool room() = 0;
  // One message of the plan; returns its DDP segments.
  virtual std::uint64_t send(const rnic::ulp::PlannedMessage& m, std::uint64_t seed) = 0;
  virtual void terminate(std::uint16_t stream) { ep().terminate(stream); }
  // Every message handed over is acknowledged by the peer.
  virtual bool all_acknowledged() { return ep().all_acknowledged(); }
  virtual void report(Json& j) = 0;

  // Steps until done() or the run's deadline (then Failure naming `what`).
  void run_until(const std::function<bool()>& done, const std::string& what) {
    while (!done()) {
      if (Clock::now() > deadline_) throw Failure(fmt::format("timed out waiting for {}", what));
      step(2);
    }
  }

 protected:
  explicit Transport(const Options& o) : deadline_(Clock::now() + std::chrono::milliseconds(o.timeout_ms)) {}
  Clock::time_point deadline_;
};

// An Endpoint whose SCTP packets travel in UDP datagrams to one remote address (RFC 6951).
class Peer : public Transport {
 public:
  Peer(const Options& o, Ipv4Endpoint remote)
      : Transport(o),
        link_(Ipv4Endpoint{rnic::sctp::parse_ipv4(o.local_ip), o.local_port}),
        remote_(remote),
        ep_(config(o), [this](ConstBytes p) { wire_out(p); }) {
    if (!o.pcap.empty()) capture_ = std::make_unique<rnic::capture::UdpCaptureWriter>(o.pcap);
    ep_.set_session_handler([this](const rnic::sctp::SessionNotice& n) { notices_.push_back(n); });
  }

  Endpoint& ep() override { return ep_; }
  UdpLink& link() { return link_; }
  std::string local() const override { return rnic::sctp::to_string(link_.local()); }
  bool room() override { return ep_.queued_chunks() < 4096; }
  std::uint64_t send(const rnic::ulp::PlannedMessage& m, std::uint64_t seed) override {
    bytes_.resize(m.length);
    rnic::ulp::fill_message(seed, m.index, bytes_.data(), bytes_.size());
    return m.tagged ? ep_.send_tagged(m.stream, m.stag, m.to, static_cast<std::uint8_t>(m.rsvd_ulp), ConstBytes(bytes_))
                    : ep_.send_untagged(m.stream, m.qn, m.rsvd_ulp, ConstBytes(bytes_));
  }
  void report(Json& j) override {
    j["udp"] = Json{{"datagrams_sent", link_.counters().sent},
                    {"datagrams_received", link_.counters().received},
                    {"send_errors", send_errors_},
                    {"foreign_datagrams_dropped", foreign_}};
  }
  // A run that fails with the association up ABORTs it (RFC 9260 9.1): the receiver learns at once
  // instead of waiting out its timeout. Never throws (it runs while a failure unwinds).
  void abort_association() noexcept override {
    try {
      ep_.abort();
      ep_.pump();
    } catch (const std::exception&) {  // usrsctp refused: the receiver's own timeout ends it
    }
  }
  std::vector<rnic::sctp::SessionNotice>& notices() override { return notices_; }
  std::uint64_t send_errors() const { return send_errors_; }
  std::uint64_t foreign() const { return foreign_; }

  // Moves datagrams in, pumps the endpoint, advances usrsctp's timers by the wall clock.
  void step(int wait_ms) override {
    for (int n = 0; n < 512; ++n) {
      auto d = link_.receive(n == 0 ? wait_ms : 0);
      if (!d) break;
      if (d->from != remote_) {  // only the receiver we connected to talks to us
        ++foreign_;
        continue;
      }
      if (capture_) capture_->write(at(remote_), at(link_.local()), ConstBytes(d->bytes));
      ep_.input(ConstBytes(d->bytes));
    }
    ep_.pump();
    if (timers_.advance()) ep_.pump();
  }

 private:
  static rnic::sctp::EndpointConfig config(const Options& o) {
    rnic::sctp::EndpointConfig c;
    c.port = o.sctp_port;
    c.streams = std::max<std::uint16_t>(o.streams, rnic::sctp::kDefaultStreams);
    return c;
  }
  // Called from inside usrsctp: never throws. A datagram the socket refuses is lost, as on a wire.
  void wire_out(ConstBytes p) {
    try {
      link_.send_to(remote_, p);
      if (capture_) capture_->write(at(link_.local()), at(remote_), p);
    } catch (const std::exception&) {  // the socket refused it (lost, as on a wire), or the capture failed
      ++send_errors_;
    }
  }
  static rnic::capture::SctpEndpoint at(const Ipv4Endpoint& e) { return {e.addr, e.port}; }

  std::unique_ptr<rnic::capture::UdpCaptureWriter> capture_;  // before ep_, like link_
  UdpLink link_;  // before ep_: the Endpoint's packets use it until the Endpoint is gone
  Ipv4Endpoint remote_;
  Endpoint ep_;
  std::vector<std::uint8_t> bytes_;
  rnic::sctp::WallClockTimers timers_;
  std::vector<rnic::sctp::SessionNotice> notices_;
  std::uint64_t send_errors_ = 0, foreign_ = 0;
};

// The peer as a card (--device): usrsctp over the card's rings (rnic::sctp::CardEndpoint), the plan's
// messages written once into a registered buffer (kLocalRead) by the ULP, and every segment sent as a
// descriptor chunk that the card's gather fills from that buffer: the host's transport never reads or
// writes a payload byte.
class CardPeer : public Transport {
 public:
  CardPeer(const Options& o, Ipv4Endpoint remote)
      : Transport(o), dev_(rnic::Device::open(o.device)), net_(dev_->open_net()), client_(dev_->create_client()) {
    rnic::sctp::CardEndpointConfig c;
    c.sctp.port = o.sctp_port;
    c.sctp.streams = std::max<std::uint16_t>(o.streams, rnic::sctp::kDefaultStreams);
    c.my_ip = rnic::sctp::parse_ipv4(o.local_ip);
    c.my_udp_port = o.card_udp_port != 0 ? o.card_udp_port : dev_->require_sim().net_port_stats().udp_port;
    c.peer = remote;
    local_ = Ipv4Endpoint{c.my_ip, c.my_udp_port};
    card_ = std::make_unique<rnic::sctp::CardEndpoint>(*dev_, *client_, net_, c);
    card_->set_session_handler([this](const rnic::sctp::SessionNotice& n) { notices_.push_back(n); });
  }
  ~CardPeer() override { card_.reset(); }  // clears the association entry before the client goes

  Endpoint& ep() override { return card_->endpoint(); }
  std::vector<rnic::sctp::SessionNotice>& notices() override { return notices_; }
  std::string local() const override { return rnic::sctp::to_string(local_); }
  void step(int wait_ms) override {
    if (!card_->step() && wait_ms > 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::vector<rnic::sctp::SendCompletion> done;
    while (card_->poll_sends(done) != 0) {
      for (const auto& c : done) {
        if (c.status != rnic::sctp::SendStatus::kAcknowledged)
          throw Failure(fmt::format("send {} {} (card reason {})", c.cookie, rnic::sctp::send_status_name(c.status),
                                    c.fault_reason));
        ++acknowledged_;
      }
    }
  }
  void abort_association() noexcept override {
    try {
      card_->endpoint().abort();
      card_->step();
    } catch (const std::exception&) {
    }
  }
  // The ULP writes each message once, at its own offset, and registers the whole for the card to read.
  void prepare(const rnic::ulp::Plan& plan, std::uint64_t seed) override {
    if (!card_->pd()) throw Failure("the card's association has no DDP streams");
    std::uint64_t at = 0;
    offsets_.clear();
    for (const auto& m : plan.messages) {
      offsets_.push_back(at);
      at += m.length;
    }
    source_ = client_->alloc_buffer(std::max<std::uint64_t>(at, 1));
    for (std::size_t i = 0; i < plan.messages.size(); ++i)
      rnic::ulp::fill_message(seed, plan.messages[i].index, source_.data + offsets_[i], plan.messages[i].length);
    client_->flush_buffer(source_.id, 0, source_.size);
    rnic::RegisterRequest rq;
    rq.pd = *card_->pd();
    rq.buffer = source_.id;
    rq.length = source_.size;
    rq.access = rnic::kLocalRead;
    stag_ = client_->register_memory(rq).stag;
  }
  bool room() override { return card_->sends_in_flight() < 1024 && card_->endpoint().queued_chunks() < 4096; }
  std::uint64_t send(const rnic::ulp::PlannedMessage& m, std::uint64_t) override {
    rnic::sctp::SendRequest r;
    r.stream = m.stream;
    r.tagged = m.tagged;
    r.remote_stag = m.stag;
    r.remote_to = m.to;
    r.qn = m.qn;
    r.rsvd_ulp = m.rsvd_ulp;
    r.local_stag = stag_;
    r.local_to = offsets_.at(sent_);
    r.length = m.length;
    r.cookie = m.index;
    const rnic::sctp::SendTicket t = card_->post_send(r);
    if (!m.tagged && t.msn != m.msn)
      throw Failure(fmt::format("message {}: the Data Source gave MSN {}, the plan has {}", m.index, t.msn, m.msn));
    ++sent_;
    return t.segments;
  }
  void terminate(std::uint16_t stream) override { card_->terminate(stream); }
  bool all_acknowledged() override { return acknowledged_ == sent_ && card_->endpoint().all_acknowledged(); }
  void report(Json& j) override {
    const auto& c = card_->counters();
    j["card"] = Json{{"device", dev_->info().device},
                     {"sends_acknowledged", c.sends_acknowledged},
                     {"gather_packets", c.gather_packets},
                     {"descriptors", c.descriptors_sent},
                     {"packets_out", c.packets_out},
                     {"packets_in", c.packets_in},
                     {"tx_ring_full", c.tx_ring_full},
                     {"segments_by_copy",
                      card_->endpoint().counters().segments_sent - card_->endpoint().counters().described_segments},
                     {"gather_sent", net_.counters().gather_sent}};
  }

 private:
  std::unique_ptr<rnic::Device> dev_;
  rnic::NetPort& net_;
  std::unique_ptr<rnic::Client> client_;
  std::unique_ptr<rnic::sctp::CardEndpoint> card_;
  Ipv4Endpoint local_;
  std::vector<rnic::sctp::SessionNotice> notices_;
  rnic::Buffer source_;
  rnic::Stag stag_ = 0;
  std::vector<std::uint64_t> offsets_;
  std::uint64_t sent_ = 0, acknowledged_ = 0;
};

struct Report {
  Json j;
  void write(const std::string& path) const {
    if (path.empty()) return;
    std::ofstream f(path);
    f << j.dump(2) << "\n";
    if (!f) throw Failure(fmt::format("cannot write the report to {}", path));
  }
};

Json sctp_stats() {
  sctpstat st{};
  usrsctp_get_stat(&st);
  Json s;
  s["data_chunks_sent"] = st.sctps_senddata;
  s["retransmitted_chunks"] = st.sctps_sendretransdata;  // fast and timeout retransmissions
  s["fast_retransmitted_chunks"] = st.sctps_sendfastretrans;
  s["t3_timeouts"] = st.sctps_timodata;
  s["duplicate_tsns_received"] = st.sctps_recvdupdata;
  s["sacks_received"] = st.sctps_recvsacks;
  return s;
}

void run(const Options& o, Report& rep) {
  const Ipv4Endpoint remote = rnic::sctp::parse_ipv4_endpoint(o.connect);
  const auto t0 = Clock::now();
  std::unique_ptr<Transport> transport;
  if (o.device.empty()) {
    transport = std::make_unique<Peer>(o, remote);
  } else {
    transport = std::make_unique<CardPeer>(o, remote);
  }
  Transport& peer = *transport;
  Endpoint& ep = peer.ep();
  struct AbortOnFailure {  // disarmed once the run succeeded
    Transport& peer;
    bool armed = true;
    ~AbortOnFailure() {
      if (armed) peer.abort_association();
    }
  } abort_on_failure{peer};
  rep.j["local"] = peer.local();

  // 1. Association: both sides must indicate DDP (RFC 5043 5.1, 11.1).
  ep.connect(o.peer_sctp_port);
  peer.run_until([&] { return ep.state() != AssociationState::kConnecting; },
                 fmt::format("the SCTP association with {} (is a receiver listening?)", o.connect));
  if (ep.state() == AssociationState::kRefused)
    throw Failure(fmt::format("association refused: {}", ep.refusal_reason()));
  if (ep.state() != AssociationState::kReady)
    throw Failure(fmt::format("association with {} could not be set up ({})", o.connect,
                              rnic::sctp::association_state_name(ep.state())));
  if (ep.ddp_streams() < o.streams)
    throw Failure(
        fmt::format("the receiver offers {} DDP streams, {} asked for (RFC 5043 8)", ep.ddp_streams(), o.streams));

  // 2. Sessions: Initiate with the ULP's private data on every stream, the Accepts carry the advertisement.
  rnic::ulp::Initiate ini;
  ini.streams = o.streams;
  ini.seed = o.seed;
  ini.messages = o.messages;
  ini.max_message = o.max_message;
  ini.mulpdu = static_cast<std::uint32_t>(ep.max_segment_size());
  auto pd = rnic::ulp::encode_initiate(ini);
  if (!pd) throw Failure("Initiate private data: " + pd.error().message());
  for (std::uint16_t s = 0; s < o.streams; ++s) ep.initiate(s, ConstBytes(*pd));
  std::vector<std::optional<rnic::ulp::Advertisement>> adverts(o.streams);
  std::size_t accepted = 0;
  const auto check_notices = [&] {
    for (const auto& n : peer.notices()) {
      if (n.kind == NoticeKind::kAccepted && n.stream < o.streams && !adverts[n.stream]) {
        auto a = rnic::ulp::decode_accept(ConstBytes(n.private_data));
        if (!a) throw Failure(fmt::format("Accept on stream {}: {}", n.stream, a.error().message()));
        adverts[n.stream] = *a;
        ++accepted;
      } else if (n.kind != NoticeKind::kAccepted) {
        throw Failure(fmt::format("stream {}: the receiver's {}{} (RFC 5043 6)", n.stream,
                                  rnic::sctp::notice_kind_name(n.kind), n.detail.empty() ? "" : ": " + n.detail));
      }
    }
    peer.notices().clear();
    if (ep.state() != AssociationState::kReady)
      throw Failure(fmt::format("association {}", rnic::sctp::association_state_name(ep.state())));
  };
  peer.run_until(
      [&] {
        check_notices();
        return accepted == o.streams;
      },
      "the receiver's Accept on every stream");
  std::vector<rnic::ulp::Advertisement> adv;
  for (auto& a : adverts) adv.push_back(*a);
  auto plan = rnic::ulp::make_plan(ini, adv);
  if (!plan) {
    for (std::uint16_t s = 0; s < o.streams; ++s) peer.terminate(s);
    peer.step(0);
    throw Failure("the receiver's advertisement does not fit the run: " + plan.error().message());
  }

  // 3. The plan, message by message, at most ~4096 chunks queued ahead of usrsctp.
  const auto t_ready = Clock::now();
  std::uint64_t segments = 0;
  peer.prepare(*plan, o.seed);
  for (const auto& m : plan->messages) {
    peer.run_until(
        [&] {
          check_notices();
          return peer.room();
        },
        "room in the send queue");
    segments += peer.send(m, o.seed);
    peer.step(0);
  }
  for (std::uint16_t s = 0; s < o.streams; ++s) peer.terminate(s);  // RFC 5043 6.2
  peer.run_until(
      [&] {
        check_notices();
        return peer.all_acknowledged();
      },
      "SCTP to acknowledge every chunk");
  const auto t_acked = Clock::now();
  Json sctp = sctp_stats();
  ep.shutdown();
  peer.run_until([&] { return ep.state() == AssociationState::kLost; }, "the SCTP shutdown to complete");
  const double transfer = seconds(t_acked - t_ready);
  rep.j["status"] = "ok";
  rep.j["mulpdu"] = ep.max_segment_size();
  rep.j["messages"] = plan->messages.size();
  rep.j["bytes"] = plan->total_bytes;
  rep.j["segments"] = segments;
  rep.j["setup_s"] = seconds(t_ready - t0);
  rep.j["elapsed_s"] = transfer;
  rep.j["messages_per_s"] = transfer > 0 ? static_cast<double>(plan->messages.size()) / transfer : 0.0;
  rep.j["bytes_per_s"] = transfer > 0 ? static_cast<double>(plan->total_bytes) / transfer : 0.0;
  rep.j["sctp"] = sctp;
  peer.report(rep.j);
  if (segments != plan->total_segments)
    throw Failure(fmt::format("sent {} segments, the plan has {}", segments, plan->total_segments));
  abort_on_failure.armed = false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "rnic-peer: the card's remote peer: SCTP (usrsctp) in UDP (RFC 6951) and RFC 5043 DDP, sending "
      "the demo ULP's tagged and untagged messages"};
  Options o;
  app.add_option("--connect", o.connect, "the receiver's UDP address IPV4:PORT (RFC 6951)")->capture_default_str();
  app.add_option("--local-ip", o.local_ip, "local IPv4 address to bind")->capture_default_str();
  app.add_option("--local-port", o.local_port, "local UDP port (0: ephemeral)")->capture_default_str();
  app.add_option("--sctp-port", o.sctp_port, "this peer's SCTP port")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app.add_option("--peer-sctp-port", o.peer_sctp_port, "the receiver's SCTP port")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the run (message kinds, lengths and bytes)")->capture_default_str();
  app.add_option("--messages", o.messages, "ULP messages")
      ->check(CLI::Range(0u, rnic::ulp::kMaxMessages))
      ->capture_default_str();
  app.add_option("--max-message", o.max_message, "longest message in bytes")
      ->check(CLI::Range(0u, rnic::ulp::kMaxMessageSize))
      ->capture_default_str();
  app.add_option("--streams", o.streams, "DDP streams (sessions) to use")
      ->check(CLI::Range(1, static_cast<int>(rnic::ulp::kMaxStreams)))
      ->capture_default_str();
  app.add_option("--timeout-ms", o.timeout_ms, "give up after this long")
      ->check(CLI::Range(1u, 3'600'000u))
      ->capture_default_str();
  app.add_option("--json", o.json, "write the report as JSON to FILE");
  app.add_option("--pcap", o.pcap, "write every datagram sent and received to FILE (Ethernet/IPv4/UDP)");
  app.add_option("--device", o.device,
                 "send from this card (sim:PATH or an XRT device) through its transmit gather: usrsctp over the "
                 "card's rings, every payload byte read by the card from registered memory (docs/transmit.md)");
  app.add_option("--card-udp-port", o.card_udp_port,
                 "with --device: the card's own UDP port (0: the simulator's, as it reports it)")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
    rnic::sctp::parse_ipv4_endpoint(o.connect);
    rnic::sctp::parse_ipv4(o.local_ip);
    if (!o.device.empty() && !o.pcap.empty())
      throw rnic::Error(rnic::Errc::kInvalidArgument, "--pcap captures the UDP peer's datagrams: not with --device");
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const rnic::Error& e) {
    fmt::print(stderr, "rnic-peer: {}\n", e.what());
    return 2;
  }

  Report rep;
  rep.j["connect"] = o.connect;
  rep.j["seed"] = o.seed;
  rep.j["streams"] = o.streams;
  int rc = 0;
  try {
    run(o, rep);
    const Json& j = rep.j;
    const Json& s = j["sctp"];
    fmt::print("rnic-peer: {} -> {}: {} messages, {} bytes, {} DDP segments (MULPDU {}) on {} streams\n",
               j["local"].get<std::string>(), o.connect, j["messages"].get<std::uint64_t>(),
               j["bytes"].get<std::uint64_t>(), j["segments"].get<std::uint64_t>(), j["mulpdu"].get<std::uint64_t>(),
               o.streams);
    fmt::print("rnic-peer: {:.3f} s (set-up {:.3f} s): {:.0f} messages/s, {:.0f} bytes/s ({:.1f} Mbit/s)\n",
               j["elapsed_s"].get<double>(), j["setup_s"].get<double>(), j["messages_per_s"].get<double>(),
               j["bytes_per_s"].get<double>(), j["bytes_per_s"].get<double>() * 8e-6);
    fmt::print(
        "rnic-peer: SCTP: {} DATA chunks, {} retransmitted ({} fast), {} T3 timeouts, {} duplicate TSNs received\n",
        s["data_chunks_sent"].get<std::uint64_t>(), s["retransmitted_chunks"].get<std::uint64_t>(),
        s["fast_retransmitted_chunks"].get<std::uint64_t>(), s["t3_timeouts"].get<std::uint64_t>(),
        s["duplicate_tsns_received"].get<std::uint64_t>());
    if (j.contains("udp")) {
      fmt::print("rnic-peer: UDP: {} datagrams out, {} in, {} send errors\n",
                 j["udp"]["datagrams_sent"].get<std::uint64_t>(), j["udp"]["datagrams_received"].get<std::uint64_t>(),
                 j["udp"]["send_errors"].get<std::uint64_t>());
    } else {
      const Json& c = j["card"];
      fmt::print(
          "rnic-peer: card: {} gather packets with {} descriptors, {} packets out, {} in; payload bytes the "
          "host handled: {}\n",
          c["gather_packets"].get<std::uint64_t>(), c["descriptors"].get<std::uint64_t>(),
          c["packets_out"].get<std::uint64_t>(), c["packets_in"].get<std::uint64_t>(),
          c["segments_by_copy"].get<std::uint64_t>());
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "rnic-peer: {}\n", e.what());
    rep.j["status"] = "failed";
    rep.j["error"] = e.what();
    rc = 1;
  }
  try {
    rep.write(o.json);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rnic-peer: {}\n", e.what());
    rc = 1;
  }
  return rc;
}
