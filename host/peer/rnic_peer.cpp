// SPDX-License-Identifier: Apache-2.0
// rnic-peer: the remote peer of the card. A separate process that talks real SCTP (usrsctp, through
// rnic::sctp::Endpoint) carried in UDP datagrams (RFC 6951) and RFC 5043 DDP to whatever listens at
// --connect: rnic-sim's network port, a card, or a software receiver.
//
//   rnic-peer [--connect IPV4:PORT] [--local-port P] [--seed N] [--messages N] [--max-message B]
//             [--streams N] [--timeout-ms T] [--json FILE] [--pcap FILE]
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
#include <vector>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/driver/rnic.hpp"
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
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// An Endpoint whose SCTP packets travel in UDP datagrams to one remote address (RFC 6951).
class Peer {
 public:
  Peer(const Options& o, Ipv4Endpoint remote)
      : link_(Ipv4Endpoint{rnic::sctp::parse_ipv4(o.local_ip), o.local_port}),
        remote_(remote),
        ep_(config(o), [this](ConstBytes p) { wire_out(p); }),
        deadline_(Clock::now() + std::chrono::milliseconds(o.timeout_ms)) {
    if (!o.pcap.empty()) capture_ = std::make_unique<rnic::capture::UdpCaptureWriter>(o.pcap);
    ep_.set_session_handler([this](const rnic::sctp::SessionNotice& n) { notices_.push_back(n); });
  }

  Endpoint& ep() { return ep_; }
  UdpLink& link() { return link_; }
  // A run that fails with the association up ABORTs it (RFC 9260 9.1): the receiver learns at once
  // instead of waiting out its timeout. Never throws (it runs while a failure unwinds).
  void abort_association() noexcept {
    try {
      ep_.abort();
      ep_.pump();
    } catch (const std::exception&) {  // usrsctp refused: the receiver's own timeout ends it
    }
  }
  std::vector<rnic::sctp::SessionNotice>& notices() { return notices_; }
  std::uint64_t send_errors() const { return send_errors_; }
  std::uint64_t foreign() const { return foreign_; }

  // Moves datagrams in, pumps the endpoint, advances usrsctp's timers by the wall clock.
  void step(int wait_ms) {
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
  // Steps until done() or the run's deadline (then Failure naming `what`).
  void run_until(const std::function<bool()>& done, const std::string& what) {
    while (!done()) {
      if (Clock::now() > deadline_) throw Failure(fmt::format("timed out waiting for {}", what));
      step(2);
    }
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
  Clock::time_point deadline_;
  rnic::sctp::WallClockTimers timers_;
  std::vector<rnic::sctp::SessionNotice> notices_;
  std::uint64_t send_errors_ = 0, foreign_ = 0;
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
  Peer peer(o, remote);
  Endpoint& ep = peer.ep();
  struct AbortOnFailure {  // disarmed once the run succeeded
    Peer& peer;
    bool armed = true;
    ~AbortOnFailure() {
      if (armed) peer.abort_association();
    }
  } abort_on_failure{peer};
  rep.j["local"] = rnic::sctp::to_string(peer.link().local());

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
    for (std::uint16_t s = 0; s < o.streams; ++s) ep.terminate(s);
    peer.step(0);
    throw Failure("the receiver's advertisement does not fit the run: " + plan.error().message());
  }

  // 3. The plan, message by message, at most ~4096 chunks queued ahead of usrsctp.
  const auto t_ready = Clock::now();
  std::uint64_t segments = 0;
  std::vector<std::uint8_t> bytes;
  for (const auto& m : plan->messages) {
    peer.run_until(
        [&] {
          check_notices();
          return ep.queued_chunks() < 4096;
        },
        "room in the send queue");
    bytes.resize(m.length);
    rnic::ulp::fill_message(o.seed, m.index, bytes.data(), bytes.size());
    segments += m.tagged
                    ? ep.send_tagged(m.stream, m.stag, m.to, static_cast<std::uint8_t>(m.rsvd_ulp), ConstBytes(bytes))
                    : ep.send_untagged(m.stream, m.qn, m.rsvd_ulp, ConstBytes(bytes));
    peer.step(0);
  }
  for (std::uint16_t s = 0; s < o.streams; ++s) ep.terminate(s);  // RFC 5043 6.2
  peer.run_until(
      [&] {
        check_notices();
        return ep.all_acknowledged();
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
  rep.j["udp"] = Json{{"datagrams_sent", peer.link().counters().sent},
                      {"datagrams_received", peer.link().counters().received},
                      {"send_errors", peer.send_errors()},
                      {"foreign_datagrams_dropped", peer.foreign()}};
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
  try {
    app.parse(argc, argv);
    rnic::sctp::parse_ipv4_endpoint(o.connect);
    rnic::sctp::parse_ipv4(o.local_ip);
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
        "rnic-peer: SCTP: {} DATA chunks, {} retransmitted ({} fast), {} T3 timeouts, {} duplicate TSNs received; "
        "UDP: {} datagrams out, {} in, {} send errors\n",
        s["data_chunks_sent"].get<std::uint64_t>(), s["retransmitted_chunks"].get<std::uint64_t>(),
        s["fast_retransmitted_chunks"].get<std::uint64_t>(), s["t3_timeouts"].get<std::uint64_t>(),
        s["duplicate_tsns_received"].get<std::uint64_t>(), j["udp"]["datagrams_sent"].get<std::uint64_t>(),
        j["udp"]["datagrams_received"].get<std::uint64_t>(), j["udp"]["send_errors"].get<std::uint64_t>());
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
