// SPDX-License-Identifier: Apache-2.0
// rnic-sink: the card's side of a run with rnic-peer (docs/network.md). The Data Sink is the card: its
// network side takes the peer's DDP segments off the wire and places them; this process is the host
// around it, with the driver and the host's SCTP stack.
//
//   rnic-sink [--peer IPV4:PORT] [--device DEV] [--my-ip IPV4] [--udp-port P] [--sctp-port P]
//             [--socket N] [--associations N] [--handshake-timeout-ms T] [--timeout-ms T] [--linger-ms T]
//             [--coalesce K] [--json FILE] [--once]
//
// A server: it serves associations side by side, up to --associations at once (each a run, checked as
// below, with a client of the driver and usrsctp's endpoint made fresh for it), until SIGTERM or SIGINT,
// or after the first with --once. A refused or failed association is reported and the others go on.
//
// - The driver owns the card (Device::open, RNIC_DEVICE or --device) and its network port (open_net:
//   the receive and transmit packet rings).
// - rnic::sctp::CardServer (driver/sctp) reads the receive ring and hands each packet to the run of
//   the peer that sent it (the descriptor's source address). A new sender's INIT gets a run on a free
//   slot (slot k: association table entry k and the network layer's socket k, set towards that sender:
//   rnic-sim's socket table; on a card VNx's, set by hand: docs/card-flow.md); with --peer only that
//   sender, on slot --socket. Anything else from unknown senders is dropped and counted, replies to
//   senders whose association is not up are rate-limited, and a handshake that does not finish within
//   --handshake-timeout-ms gives its slot back: the card never answers an address that did not write
//   to it, nor one sender on another's address.
// - rnic::sctp::CardEndpoint (driver/sctp) does the card's side of the association: the next three
//   points, the teardowns and the clear. What is left here is the demo ULP and the checks.
// - usrsctp runs over AF_CONN on the rings (rnic::sctp::Endpoint with crc32c_offload: the card checked
//   the CRC32c of every packet it hands the host and writes it into every packet it sends). It listens
//   on --sctp-port with the DDP Adaptation Layer Indication (RFC 5043 5.1). Consecutive DATA-only
//   packets of the association in one batch of the ring go to usrsctp as one packet (--coalesce K,
//   rnic::sctp::PacketCoalescer): usrsctp's cost is mostly per packet.
// - Once the association is up with the indication on both sides (11.1), the driver writes it into the
//   card's association table (addresses, UDP and SCTP ports, the verification tag usrsctp gave it, one
//   DDP stream per SCTP stream pair: RFC 5043 8). An association without it is never written: usrsctp
//   aborts it, and its packets reach the host whole.
// - On each Initiate (the demo ULP, host/ulp) it registers the tagged buffers (STags bound to the
//   stream, RFC 5041 8.2) and posts the untagged buffers the run needs, sets the stream live, and
//   answers Accept with the advertisement. From then on the card takes the stream's DDP segments: the
//   host sees each one's chunk header, DDP-SSN and DDP header only, which keep usrsctp's TSNs and the
//   session's DDP-SSN order; a whole segment on a live stream is a failure.
// - On the peer's Terminate (seen in DDP-SSN order, so after every earlier segment was taken) the
//   stream is torn down (fenced: live bit cleared first). When the peer shuts the association down the
//   entry is cleared (fenced) while usrsctp still holds the association.
// - Then every completion (RFC 5041 5.4) and every byte of every buffer (guard bytes included) is
//   checked against the run's plan, which both sides derive from the Initiate and the Accepts.
//
// Prints (and with --json writes) what was placed, what the host saw of the wire's bytes, the card's
// network counters and usrsctp's, per run (--json: the run's object with --once, else {"runs": [...],
// "server": {...}}, rewritten after every run; "server" holds CardServer's counters). The card's and
// usrsctp's figures of a run are those since it started: runs side by side share them. Exit status: 0 every run's bytes
// and completions as planned; 1 a run failed (stderr says what); 2 bad arguments.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>
#include <usrsctp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/sctp/card_endpoint.hpp"
#include "rnic/sctp/card_server.hpp"
#include "rnic/sctp/endpoint.hpp"
#include "rnic/sctp/udp_link.hpp"
#include "rnic/ulp/demo_ulp.hpp"
#include "rnic/wire/bytes.hpp"

namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;
using rnic::Completion;
using rnic::Errc;
using rnic::StreamId;
using rnic::sctp::AssociationState;
using rnic::sctp::Endpoint;
using rnic::sctp::Ipv4Endpoint;
using rnic::sctp::NoticeKind;
using rnic::sctp::SessionNotice;
using rnic::wire::ConstBytes;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// SIGTERM or SIGINT: the server stops (a run under way ends as a failure naming the signal).
std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) { g_signal.store(sig); }

struct Options {
  std::string device;  // "" = RNIC_DEVICE
  std::string peer;
  std::string my_ip = "127.0.0.1";
  std::uint16_t udp_port = rnic::sctp::kSctpUdpEncapsulationPort;
  std::uint16_t sctp_port = rnic::ulp::kReceiverSctpPort;
  std::uint16_t socket = 0;
  std::uint32_t timeout_ms = 120000;
  std::uint32_t linger_ms = 30000;
  std::uint32_t coalesce = 16;
  std::string json;
  bool once = false;
  std::uint32_t associations = 16;  // at once, without --peer
  std::uint32_t handshake_timeout_ms = 10000;
};

constexpr std::uint8_t kFill = 0xA5;  // every buffer byte the plan does not write
constexpr std::uint64_t kGuard = 64;  // untouched bytes around every buffer
constexpr std::uint32_t kQn = 1;      // the untagged queue of every stream
constexpr std::size_t kMaxTaggedPerStream = 3;

std::uint32_t log2_ceil(std::uint64_t n) {
  std::uint32_t k = 0;
  while ((std::uint64_t{1} << k) < n) ++k;
  return k;
}

class Sink {
 public:
  // One association's run on the open device and network port: a client of its own (its PDs, STags,
  // streams and buffers go with it) and a fresh usrsctp endpoint.
  // The CardServer's new sender `peer` on `slot` (its association table entry and socket); its INIT
  // comes next (CardServer delivers it).
  Sink(const Options& o, rnic::Device& dev, rnic::NetPort& net, const Ipv4Endpoint& peer, std::uint32_t slot,
       Clock::time_point deadline)
      : o_(o),
        dev_(dev),
        peer_(peer),
        slot_(slot),
        client_(dev_.create_client(limits())),
        card_(dev_, *client_, net, config(o, peer, slot)),
        deadline_(deadline),
        t0_(Clock::now()) {
    if (!card_.socket_programmed())
      fmt::print(
          "rnic-sink: the network layer's socket {} is not programmed by the driver on this device: it "
          "must already point at {} (docs/card-flow.md)\n",
          slot, rnic::sctp::to_string(peer));
    card_start_ = dev_.net()->counters();  // the card's counters run since it started: this run's are the difference
    usrsctp_get_stat(&sctp_start_);        // so do usrsctp's, process-wide
    card_.set_session_handler([this](const SessionNotice& n) { notices_.push_back(n); });
    card_.set_segment_sink([this](std::uint16_t s, std::uint16_t ssn, ConstBytes seg) { on_segment(s, ssn, seg); });
    card_.listen();
  }

  // One round of the run (its endpoint's step, notices, completions; the run's next phase when its
  // condition holds). Returns whether anything moved; throws Failure when the run failed.
  bool step();
  bool finished() const { return phase_ == Phase::kDone; }
  // A finished run's figures and checks (throws Failure when they do not match the plan).
  void report(Json& rep);
  // A failure while waiting: what it was waiting for.
  std::string waiting_for() const;
  bool up() const { return phase_ != Phase::kListening; }
  const Ipv4Endpoint& peer() const { return peer_; }
  std::uint32_t slot() const { return slot_; }
  rnic::sctp::CardEndpoint& card() { return card_; }
  // The counters, also for a failed run: the host's, the card's (this run's and since it started),
  // usrsctp's and the association's sessions, with how the association ended.
  void report_counters(Json& rep);

 private:
  static rnic::Limits limits() {
    rnic::Limits l;
    l.max_posted = 1u << 16;
    l.max_buffer_bytes = 1ull << 30;
    return l;
  }
  static rnic::sctp::CardEndpointConfig config(const Options& o, const Ipv4Endpoint& peer, std::uint32_t slot) {
    rnic::sctp::CardEndpointConfig c;
    c.sctp.port = o.sctp_port;
    c.my_ip = rnic::sctp::parse_ipv4(o.my_ip);
    c.my_udp_port = o.udp_port;
    c.peer = peer;
    c.socket = static_cast<std::uint16_t>(slot);
    c.assoc_entry = slot;
    c.coalesce = o.coalesce;
    c.shared_ring = true;  // the CardServer reads the ring and hands this run its peer's packets
    return c;
  }
  Endpoint& ep() { return card_.endpoint(); }
  const Endpoint& ep() const { return card_.endpoint(); }

  void next(Clock::time_point now);
  void handle_notices();
  void on_initiate(const SessionNotice& n);
  void layout(const rnic::ulp::Initiate& ini);
  void on_segment(std::uint16_t stream, std::uint16_t ssn, ConstBytes seg);
  std::vector<std::string> verify();
  std::string how_it_ended() const {
    if (!ep().loss_reason().empty()) return ep().loss_reason();
    return fmt::format("the association is {}", rnic::sctp::association_state_name(ep().state()));
  }
  // What the peer sent that was not DDP (RFC 5043 5.2: PPID 16 segments, 17 session control).
  std::string what_else_came() const {
    const auto& c = ep().counters();
    std::string s;
    if (c.other_ppid != 0)
      s += fmt::format(
          "; the peer sent {} DATA chunks ({} bytes) with a PPID other than DDP's 16 and 17 "
          "(RFC 5043 5.2): the host took them whole and dropped them",
          c.other_ppid, c.other_ppid_bytes);
    if (c.malformed != 0)
      s += fmt::format("; {} DDP chunks too short or on a stream beyond the association's", c.malformed);
    if (c.not_ddp_dropped != 0)
      s += fmt::format("; {} DATA chunks before DDP was agreed (RFC 5043 11.1)", c.not_ddp_dropped);
    return s;
  }
  bool done_terminating() const {
    if (!plan_) return false;
    for (std::uint16_t s = 0; s < plan_->initiate.streams; ++s)
      if (!card_.torn_down(s)) return false;
    return true;
  }

  // The run's phases, each waiting for its condition (next()).
  enum class Phase { kListening, kInitiates, kTerminates, kShutdown, kLinger, kDone };

  Options o_;
  rnic::Device& dev_;
  Ipv4Endpoint peer_;
  std::uint32_t slot_;
  std::unique_ptr<rnic::Client> client_;
  rnic::sctp::CardEndpoint card_;  // usrsctp over the card's rings, the card's tables in step with it
  Clock::time_point deadline_;     // --once: from the start; else from the association's start
  Clock::time_point t0_, t_ready_, t_done_, linger_end_;
  Phase phase_ = Phase::kListening;
  rnic::NetCounters card_start_;
  sctpstat sctp_start_{};
  std::vector<SessionNotice> notices_;
  std::vector<Completion> batch_, completions_;

  std::optional<rnic::ulp::Initiate> initiate_;
  std::vector<rnic::ulp::Advertisement> adverts_;
  std::vector<std::vector<rnic::Buffer>> tagged_buf_;  // per stream, per advertised buffer
  std::vector<rnic::Buffer> untagged_buf_;             // per stream (id 0: none)
  std::vector<std::uint32_t> untagged_size_;
  std::vector<bool> accepted_stream_;
  std::size_t accepted_ = 0;
  std::optional<rnic::ulp::Plan> plan_;
  std::vector<std::string> failures_;
  std::uint64_t headers_seen_ = 0, whole_on_live_ = 0;
  bool announced_ = false;
};

bool Sink::step() {
  const bool moved = card_.step();
  if (card_.association_written() && !announced_) {
    announced_ = true;
    const auto& st = card_.streams();
    fmt::print(
        "rnic-sink: association up with DDP on both sides (RFC 5043 11.1): entry written, tag 0x{:08x}, "
        "SCTP ports {} <- {}, DDP streams {}..{}\n",
        *ep().local_verification_tag(), o_.sctp_port, *ep().peer_port(), st.front(), st.back());
    std::fflush(stdout);
  }
  handle_notices();
  while (client_->poll(batch_, 256) != 0) completions_.insert(completions_.end(), batch_.begin(), batch_.end());
  const auto now = Clock::now();
  next(now);
  if (phase_ != Phase::kDone && phase_ != Phase::kLinger && now > deadline_)
    throw Failure(fmt::format("timed out waiting for {}", waiting_for()));
  return moved;
}

std::string Sink::waiting_for() const {
  switch (phase_) {
    case Phase::kListening:
      return "the peer's association";
    case Phase::kInitiates:
      return "the peer's Initiate on every stream";
    case Phase::kTerminates:
      return "the peer's messages and its Terminate on every stream";
    case Phase::kShutdown:
      return "the peer's SHUTDOWN";
    default:
      return "the SHUTDOWN COMPLETE";
  }
}

// The run's phases. usrsctp answers the SHUTDOWN and keeps the association until SHUTDOWN COMPLETE
// (retransmitting its SHUTDOWN ACK if it is lost): the run is served until then, at most --linger-ms.
void Sink::next(Clock::time_point now) {
  for (;;) {
    const Phase was = phase_;
    const auto state = ep().state();
    switch (phase_) {
      case Phase::kListening:
        if (state == AssociationState::kListening) break;
        if (state == AssociationState::kRefused)
          throw Failure(fmt::format("association refused: {}", ep().refusal_reason()));
        if (!o_.once) deadline_ = now + std::chrono::milliseconds(o_.timeout_ms);
        phase_ = Phase::kInitiates;
        break;
      case Phase::kInitiates:
        if (plan_) {
          t_ready_ = now;
          phase_ = Phase::kTerminates;
        } else if (state != AssociationState::kReady) {
          throw Failure(fmt::format("the association ended before every stream's Initiate: {}{}", how_it_ended(),
                                    what_else_came()));
        }
        break;
      case Phase::kTerminates:
        if (done_terminating()) {
          t_done_ = now;
          phase_ = Phase::kShutdown;
        } else if (state != AssociationState::kReady) {
          throw Failure(fmt::format("the association ended before every stream was terminated: {}{}", how_it_ended(),
                                    what_else_came()));
        }
        break;
      case Phase::kShutdown:
        // The peer shuts the association down once SCTP acknowledged everything: the CardEndpoint clears
        // the entry (fenced) in the round usrsctp reports it, then the shutdown finishes.
        if (state == AssociationState::kReady) break;
        if (card_.association_written()) throw Failure("the association entry is still in the card after the SHUTDOWN");
        linger_end_ = now + std::chrono::milliseconds(o_.linger_ms);
        phase_ = Phase::kLinger;
        break;
      case Phase::kLinger:
        if (!ep().association_held() || now >= linger_end_) phase_ = Phase::kDone;
        break;
      case Phase::kDone:
        break;
    }
    if (phase_ == was) return;
  }
}

void Sink::handle_notices() {
  std::vector<SessionNotice> ns;
  ns.swap(notices_);
  for (const auto& n : ns) {
    switch (n.kind) {
      case NoticeKind::kInitiate:
        on_initiate(n);
        break;
      case NoticeKind::kTerminated:
        break;  // the CardEndpoint tore the stream down (fenced) before telling us
      default:
        failures_.push_back(fmt::format("stream {}: {}{}", n.stream, rnic::sctp::notice_kind_name(n.kind),
                                        n.detail.empty() ? "" : ": " + n.detail));
    }
  }
}

void Sink::on_initiate(const SessionNotice& n) {
  // An Initiate read in the same round as the association's end (the peer's ABORT) has no one to
  // answer: the run fails on the association's end, which says how it ended.
  if (ep().state() != AssociationState::kReady) return;
  auto ini = rnic::ulp::decode_initiate(ConstBytes(n.private_data));
  if (!ini) {
    failures_.push_back("Initiate: " + ini.error().message());
    ep().reject(n.stream);
    return;
  }
  if (!initiate_) {
    if (ini->streams > card_.streams().size()) {
      failures_.push_back(fmt::format("the peer wants {} DDP streams, the card's association has {}", ini->streams,
                                      card_.streams().size()));
      ep().reject(n.stream);
      return;
    }
    layout(*ini);
  }
  if (!(*ini == *initiate_) || n.stream >= initiate_->streams || accepted_stream_[n.stream]) {
    failures_.push_back(fmt::format("stream {}: an Initiate that does not belong to the run", n.stream));
    ep().reject(n.stream);
    return;
  }
  auto pd = rnic::ulp::encode_accept(adverts_[n.stream]);
  if (!pd) throw Failure("Accept private data: " + pd.error().message());
  card_.accept(n.stream, ConstBytes(*pd));  // live on the card first, then the Accept
  accepted_stream_[n.stream] = true;
  if (++accepted_ == initiate_->streams) {
    auto plan = rnic::ulp::make_plan(*initiate_, adverts_);
    if (!plan) throw Failure("the plan of the run: " + plan.error().message());
    plan_ = std::move(plan).value();
  }
}

// What the run needs, from the Initiate alone (host/ulp stream_demand, tagged_buffer_sizes): per stream
// up to 3 tagged buffers (STags bound to the stream, TOs above 2^32) and the untagged queue's buffers,
// each with guard bytes around it.
void Sink::layout(const rnic::ulp::Initiate& ini) {
  initiate_ = ini;
  const auto demand = rnic::ulp::stream_demand(ini);
  adverts_.assign(ini.streams, {});
  tagged_buf_.assign(ini.streams, {});
  untagged_buf_.assign(ini.streams, {});
  untagged_size_.assign(ini.streams, 0);
  accepted_stream_.assign(ini.streams, false);
  for (std::uint16_t s = 0; s < ini.streams; ++s) {
    auto& a = adverts_[s];
    a.qn = kQn;
    std::uint64_t to = 0x0000123400000000ull + (std::uint64_t{s} << 36);
    for (std::uint64_t len : rnic::ulp::tagged_buffer_sizes(ini, s, kMaxTaggedPerStream)) {
      rnic::Buffer b = client_->alloc_buffer(len + 2 * kGuard);
      std::fill(b.data, b.data + b.size, kFill);
      rnic::RegisterRequest rq;
      rq.pd = *card_.pd();
      rq.buffer = b.id;
      rq.offset = kGuard;
      rq.length = len;
      rq.access = rnic::kRemoteWrite;
      rq.base_to = to;
      rq.bind_stream = card_.streams()[s];
      const rnic::Registration reg = client_->register_memory(rq);
      a.tagged.push_back(rnic::ulp::TaggedBuffer{reg.stag, to, len});
      tagged_buf_[s].push_back(b);
      to += len + 0x10000;
    }
    a.posted = demand[s].untagged_messages;
    a.buffer_size = std::max<std::uint32_t>(demand[s].untagged_max_length, 1);
    untagged_size_[s] = a.buffer_size;
    if (a.posted == 0) continue;
    if (a.posted >= (1u << 16))
      throw Failure(
          fmt::format("stream {}: {} untagged messages, more than one queue of 2^16 entries holds", s, a.posted));
    rnic::Buffer b = client_->alloc_buffer(kGuard + std::uint64_t{a.posted} * (a.buffer_size + kGuard));
    std::fill(b.data, b.data + b.size, kFill);
    client_->configure_queue(card_.streams()[s], kQn, std::clamp<std::uint32_t>(log2_ceil(a.posted + 1), 4, 16));
    for (std::uint32_t j = 0; j < a.posted; ++j)  // MSN j + 1 (RFC 5041 4.3)
      client_->post_recv(card_.streams()[s], kQn, b.id, kGuard + std::uint64_t{j} * (a.buffer_size + kGuard),
                         a.buffer_size, j + 1);
    untagged_buf_[s] = b;
  }
}

// A DDP segment the session delivered in DDP-SSN order. On a live stream the card took it: the host
// copy holds its DDP header only (RFC 5041 4.2: 14 bytes tagged, 4.3: 18 untagged).
void Sink::on_segment(std::uint16_t stream, std::uint16_t ssn, ConstBytes seg) {
  if (!card_.live(stream)) {
    failures_.push_back(fmt::format("stream {} DDP-SSN {}: a segment on a stream that is not live", stream, ssn));
    return;
  }
  const std::size_t header = (seg.size > 0 && (seg.data[0] & 0x80) != 0) ? 14 : 18;
  if (seg.size != header) {
    if (whole_on_live_++ == 0)
      failures_.push_back(
          fmt::format("stream {} DDP-SSN {}: a {}-byte DDP segment reached the host, not just its "
                      "{}-byte header: the card did not take it",
                      stream, ssn, seg.size, header));
    return;
  }
  ++headers_seen_;
}

// Every completion and every byte against the plan.
std::vector<std::string> Sink::verify() {
  std::vector<std::string> bad;
  const auto add = [&](std::string s) {
    if (bad.size() < 20) bad.push_back(std::move(s));
  };
  const auto& plan = *plan_;
  const std::size_t ns = plan.initiate.streams;
  std::vector<std::deque<Completion>> got(ns);
  for (const auto& c : completions_) {
    const auto& streams = card_.streams();
    const auto s = static_cast<std::size_t>(std::find(streams.begin(), streams.end(), c.stream) - streams.begin());
    if (s >= ns) {
      add(fmt::format("a completion on DDP stream {}, not one of the run's", c.stream));
      continue;
    }
    got[s].push_back(c);
  }
  std::vector<std::size_t> next(ns, 0);
  for (const auto& m : plan.messages) {
    auto& q = got[m.stream];
    const std::size_t k = next[m.stream]++;
    if (k >= q.size()) {
      add(fmt::format("message {} (stream {}): no completion", m.index, m.stream));
      continue;
    }
    const Completion& c = q[k];
    const auto ssn = static_cast<std::uint16_t>(m.last_ddp_ssn - 1);  // the card numbers the session's segments from 0
    bool ok = c.ssn == ssn && c.rsvd_ulp == m.rsvd_ulp;
    if (m.tagged) {
      ok = ok && c.kind == Completion::Kind::kTagged && c.stag == m.stag;
    } else {
      const std::uint64_t off = kGuard + std::uint64_t{m.msn - 1} * (untagged_size_[m.stream] + kGuard);
      ok = ok && c.kind == Completion::Kind::kUntagged && c.qn == m.qn && c.msn == m.msn && c.length == m.length &&
           c.buffer == untagged_buf_[m.stream].id && c.offset == off && c.cookie == m.msn;
    }
    if (!ok)
      add(fmt::format(
          "message {} (stream {}, {}): completion kind={} stag=0x{:x} qn={} msn={} len={} rsvd=0x{:x} "
          "ssn={} error={}/{}; want stag=0x{:x} qn={} msn={} len={} rsvd=0x{:x} ssn={}",
          m.index, m.stream, m.tagged ? "tagged" : "untagged", static_cast<int>(c.kind), c.stag, c.qn, c.msn, c.length,
          c.rsvd_ulp, c.ssn, c.err_type, c.err_code, m.stag, m.qn, m.msn, m.length, m.rsvd_ulp, ssn));
  }
  for (std::size_t s = 0; s < ns; ++s) {
    if (got[s].size() != next[s])
      add(fmt::format("stream {}: {} completions, the plan has {}", s, got[s].size(), next[s]));
  }
  // Memory: the fill everywhere, the plan's bytes where its messages go.
  std::vector<std::vector<std::vector<std::uint8_t>>> want_tagged(ns);
  std::vector<std::vector<std::uint8_t>> want_untagged(ns);
  for (std::size_t s = 0; s < ns; ++s) {
    for (const auto& b : tagged_buf_[s]) want_tagged[s].emplace_back(b.size, kFill);
    want_untagged[s].assign(untagged_buf_[s].size, kFill);
  }
  for (const auto& m : plan.messages) {
    std::uint8_t* at = m.tagged ? want_tagged[m.stream][m.buffer].data() + kGuard + m.offset_in_buffer
                                : want_untagged[m.stream].data() + kGuard +
                                      std::uint64_t{m.msn - 1} * (untagged_size_[m.stream] + kGuard);
    rnic::ulp::fill_message(plan.initiate.seed, m.index, at, m.length);
  }
  std::uint64_t wrong = 0, checked = 0;
  const auto compare = [&](const rnic::Buffer& b, const std::vector<std::uint8_t>& want, const std::string& what) {
    for (std::size_t i = 0; i < want.size(); ++i) {
      ++checked;
      if (b.data[i] == want[i]) continue;
      if (wrong++ == 0)
        add(fmt::format("{}: first wrong byte at offset {}: 0x{:02x}, want 0x{:02x}", what, i, b.data[i], want[i]));
    }
  };
  for (std::size_t s = 0; s < ns; ++s) {
    for (std::size_t i = 0; i < tagged_buf_[s].size(); ++i)
      compare(tagged_buf_[s][i], want_tagged[s][i], fmt::format("stream {} tagged buffer {}", s, i));
    if (untagged_buf_[s].size != 0) compare(untagged_buf_[s], want_untagged[s], fmt::format("stream {} untagged", s));
  }
  if (wrong != 0) add(fmt::format("memory: {} of {} bytes wrong", wrong, checked));
  for (const auto& f : failures_) add(f);
  return bad;
}

// usrsctp's counters since `start` (they are process-wide and run across the server's runs).
Json sctp_stats(const sctpstat& start) {
  sctpstat st{};
  usrsctp_get_stat(&st);
  return Json{{"sacks_sent", st.sctps_sendsacks - start.sctps_sendsacks},
              {"data_chunks_received", st.sctps_recvdata - start.sctps_recvdata},
              {"duplicate_tsns_received", st.sctps_recvdupdata - start.sctps_recvdupdata},
              {"packets_received", st.sctps_recvpackets - start.sctps_recvpackets},
              {"packets_sent", st.sctps_sendpackets - start.sctps_sendpackets}};
}

void Sink::report_counters(Json& rep) {
  const auto& cc = card_.counters();
  rep["host"] = Json{{"packets_in", cc.packets_in},
                     {"bytes_in_ring", cc.bytes_in_ring},
                     {"bytes_on_wire", cc.bytes_on_wire},
                     {"packets_out", cc.packets_out},
                     {"tx_ring_full", cc.tx_ring_full},
                     {"tx_dropped", cc.tx_dropped},
                     {"ddp_headers_seen", headers_seen_},
                     {"whole_segments_on_live_streams", whole_on_live_},
                     {"association_writes", cc.association_writes},
                     {"association_clears", cc.association_clears},
                     {"streams_torn_down", cc.streams_torn_down},
                     {"usrsctp_inputs", cc.usrsctp_inputs},
                     {"packets_merged", cc.packets_merged}};
  const rnic::NetCounters total = dev_.net()->counters();
  Json run = Json::object(), since_start = Json::object();
  for (const auto& r : total.since(card_start_).rows()) run[r.key] = r.value;
  for (const auto& r : total.rows()) since_start[r.key] = r.value;
  rep["card"] = run;                 // this run's
  rep["card_totals"] = since_start;  // since the card (rnic-sim) started; 32 bits, wrapping
  rep["sctp"] = sctp_stats(sctp_start_);
  const auto& ec = ep().counters();
  rep["sessions"] = Json{{"controls_received", ec.controls_received},
                         {"out_of_order", ec.out_of_order},
                         {"violations", ec.violations},
                         {"stale", ec.stale},
                         {"malformed", ec.malformed},
                         {"other_ppid_chunks", ec.other_ppid},
                         {"other_ppid_bytes", ec.other_ppid_bytes},
                         {"not_ddp_dropped", ec.not_ddp_dropped}};
  rep["association"] = Json{{"state", rnic::sctp::association_state_name(ep().state())},
                            {"ended", ep().loss_reason()},
                            {"refused", ep().refusal_reason()}};
}

void Sink::report(Json& rep) {
  const auto t0 = t0_, t_ready = t_ready_, t_done = t_done_;
  const auto& plan = *plan_;
  const double secs = std::chrono::duration<double>(t_done - t_ready).count();
  rep["status"] = "ok";
  rep["messages"] = plan.messages.size();
  rep["bytes"] = plan.total_bytes;
  rep["segments"] = plan.total_segments;
  rep["setup_s"] = std::chrono::duration<double>(t_ready - t0).count();
  rep["elapsed_s"] = secs;
  rep["messages_per_s"] = secs > 0 ? static_cast<double>(plan.messages.size()) / secs : 0.0;
  rep["bytes_per_s"] = secs > 0 ? static_cast<double>(plan.total_bytes) / secs : 0.0;
  report_counters(rep);
  const auto bad = verify();
  rep["completions"] = completions_.size();
  if (!bad.empty()) {
    std::string all;
    for (const auto& b : bad) all += "\n  " + b;
    throw Failure("the run does not match its plan:" + all);
  }
  if (headers_seen_ != plan.total_segments)
    throw Failure(fmt::format("the host saw {} DDP headers of taken segments, the plan has {} segments", headers_seen_,
                              plan.total_segments));
}

void print_pass(const Json& rep) {
  const Json& h = rep["host"];
  const Json& c = rep["card"];
  const std::string who = rep["peer"].get<std::string>();
  fmt::print(
      "rnic-sink: {}: PASS: {} messages, {} bytes in {} DDP segments placed by the card, every byte and "
      "completion as planned\n",
      who, rep["messages"].get<std::uint64_t>(), rep["bytes"].get<std::uint64_t>(),
      rep["segments"].get<std::uint64_t>());
  fmt::print("rnic-sink: {}: {:.3f} s: {:.0f} messages/s, {:.1f} Mbit/s\n", who, rep["elapsed_s"].get<double>(),
             rep["messages_per_s"].get<double>(), rep["bytes_per_s"].get<double>() * 8e-6);
  fmt::print(
      "rnic-sink: {}: the host: {} packets in ({} of their {} wire bytes; {} usrsctp inputs, {} packets merged), "
      "{} out; {} DDP headers seen\n",
      who, h["packets_in"].get<std::uint64_t>(), h["bytes_in_ring"].get<std::uint64_t>(),
      h["bytes_on_wire"].get<std::uint64_t>(), h["usrsctp_inputs"].get<std::uint64_t>(),
      h["packets_merged"].get<std::uint64_t>(), h["packets_out"].get<std::uint64_t>(),
      h["ddp_headers_seen"].get<std::uint64_t>());
  const Json& t = rep["card_totals"];
  fmt::print(
      "rnic-sink: {}: the card, this run: {} packets received, {} CRC32c drops, {} size drops, {} framing drops "
      "(since it started: {} received, {} CRC32c drops)\n",
      who, c["received"].get<std::uint64_t>(), c["crc_drops"].get<std::uint64_t>(),
      c["size_drops"].get<std::uint64_t>(), c["frame_drops"].get<std::uint64_t>(), t["received"].get<std::uint64_t>(),
      t["crc_drops"].get<std::uint64_t>());
  std::fflush(stdout);
}

Json server_json(const rnic::sctp::CardServer& server) {
  const auto& c = server.counters();
  return Json{{"packets_in", c.packets_in},
              {"delivered", c.delivered},
              {"new_peers", c.new_peers},
              {"most_active", c.most_active},
              {"handshakes_timed_out", c.handshakes_timed_out},
              {"handshakes_evicted", c.handshakes_evicted},
              {"dropped_unknown_not_init", c.unknown_not_init},
              {"dropped_table_full", c.table_full},
              {"dropped_rate_limited", c.rate_limited},
              {"dropped_refused", c.refused}};
}

// The server: a CardServer hands each sender's packets to its run (a Sink on the sender's slot); runs
// go on side by side, each reported when it ends. Returns the exit status.
int serve(const Options& o, rnic::Device& dev, rnic::NetPort& net) {
  int rc = 0;
  const auto write_json = [&](const Json& doc) {
    if (o.json.empty()) return;
    std::ofstream f(o.json);
    f << doc.dump(2) << "\n";
    if (!f) {
      fmt::print(stderr, "rnic-sink: cannot write the report to {}\n", o.json);
      rc = 1;
    }
  };
  std::optional<Ipv4Endpoint> only;  // --peer: nobody else is served
  if (!o.peer.empty()) only = rnic::sctp::parse_ipv4_endpoint(o.peer);
  const std::string whom = only ? o.peer : std::string("any peer");  // a run that had no sender yet
  const auto once_deadline = Clock::now() + std::chrono::milliseconds(o.timeout_ms);
  std::map<std::uint32_t, std::unique_ptr<Sink>> sinks;  // by slot
  Json runs = Json::array();
  unsigned served = 0, failed = 0;
  bool took = false;  // --once: the one association came
  std::unique_ptr<rnic::sctp::CardServer> server;

  const auto record = [&](Json rep) {
    ++served;
    if (rep["status"] != "ok") {
      ++failed;
      rc = 1;
    }
    if (o.once) {
      rep["server"] = server_json(*server);
      write_json(rep);
      return;
    }
    rep["run"] = served;
    runs.push_back(rep);
    write_json(Json{{"runs", runs}, {"server", server_json(*server)}});
    fmt::print("rnic-sink: run {} {}; {} of {} runs failed so far\n", served,
               rep["status"] == "ok" ? "passed" : "failed", failed, served);
    std::fflush(stdout);
  };
  // A failed run: its error and what the host, the card and usrsctp saw up to it.
  const auto failed_run = [&](Sink* sink, const std::string& peer, const std::string& error) {
    fmt::print(stderr, "rnic-sink: {}: {}\n", peer, error);
    Json rep{{"peer", peer}, {"status", "failed"}, {"error", error}};
    if (sink != nullptr) {
      rep["slot"] = sink->slot();
      try {
        sink->report_counters(rep);
      } catch (const std::exception& e) {
        fmt::print(stderr, "rnic-sink: the counters could not be read: {}\n", e.what());
      }
    }
    record(rep);
  };

  rnic::sctp::CardServerConfig sc;
  sc.first_slot = o.socket;
  sc.slots = o.once || only ? 1 : std::min<std::uint32_t>(o.associations, rnic::kNetEntries - o.socket);
  sc.handshake_timeout = std::chrono::milliseconds(o.handshake_timeout_ms);
  sc.only = only;
  server = std::make_unique<rnic::sctp::CardServer>(
      net, sc,
      [&](const Ipv4Endpoint& sender, std::uint32_t slot) -> rnic::sctp::CardEndpoint* {
        if (o.once && took) return nullptr;
        const std::string who = rnic::sctp::to_string(sender);
        try {
          auto sink =
              std::make_unique<Sink>(o, dev, net, sender, slot, o.once ? once_deadline : Clock::time_point::max());
          // Where the driver cannot point the socket at the sender (a card: VNx's table is set by hand),
          // only --peer's slot is known to lead to it: anyone else would be answered at another address.
          if (!only && !sink->card().socket_programmed())
            throw Failure(fmt::format(
                "the driver cannot set socket {} towards this sender on this device: serve one peer with --peer "
                "and set its socket by hand (docs/card-flow.md)",
                slot));
          fmt::print("rnic-sink: {}: a new association (INIT) on slot {}\n", who, slot);
          std::fflush(stdout);
          took = true;
          return &(sinks[slot] = std::move(sink))->card();
        } catch (const std::exception& e) {
          failed_run(nullptr, who, e.what());
          return nullptr;
        }
      },
      [&](std::uint32_t slot) {
        const auto it = sinks.find(slot);
        if (it == sinks.end()) return;
        fmt::print(
            "rnic-sink: {}: its handshake did not finish (timed out, or evicted for a new sender): slot {} freed\n",
            rnic::sctp::to_string(it->second->peer()), slot);
        std::fflush(stdout);
        sinks.erase(it);
        took = false;
      });

  fmt::print(
      "rnic-sink: listening on SCTP port {} over the card's network port (UDP {}:{}), {}; up to {} associations at "
      "once\n",
      o.sctp_port, o.my_ip, o.udp_port, only ? "peer " + o.peer : whom, sc.slots);
  std::fflush(stdout);  // a script or test waits for this line
  for (;;) {
    if (const int sig = g_signal.load(); sig != 0) {
      // A run under way fails; a handshake is no run yet, but for --once's one run.
      for (auto& [slot, sink] : sinks)
        if (sink->up() || o.once)
          failed_run(sink.get(), rnic::sctp::to_string(sink->peer()),
                     fmt::format("stopped by signal {} while waiting for {}", sig, sink->waiting_for()));
      if (o.once && sinks.empty())
        failed_run(nullptr, whom, fmt::format("stopped by signal {} while waiting for the peer's association", sig));
      sinks.clear();
      break;
    }
    bool moved = false;
    try {
      moved = server->poll() != 0;
    } catch (const std::exception& e) {  // the card or its ring broke: every run ends with it
      fmt::print(stderr, "rnic-sink: the receive ring: {}\n", e.what());
      for (auto& [slot, sink] : sinks)
        failed_run(sink.get(), rnic::sctp::to_string(sink->peer()), std::string("the receive ring: ") + e.what());
      if (o.once && sinks.empty()) failed_run(nullptr, whom, e.what());
      sinks.clear();
      rc = 1;
      break;
    }
    for (auto it = sinks.begin(); it != sinks.end();) {
      Sink& sink = *it->second;
      const std::string who = rnic::sctp::to_string(sink.peer());
      bool done = false;
      try {
        moved = sink.step() || moved;
        if (sink.finished()) {
          Json rep{{"peer", who}, {"slot", sink.slot()}};
          sink.report(rep);
          print_pass(rep);
          record(rep);
          done = true;
        }
      } catch (const std::exception& e) {
        failed_run(&sink, who, e.what());
        done = true;
      }
      if (!done) {
        ++it;
        continue;
      }
      const std::uint32_t slot = it->first;
      it = sinks.erase(it);  // the CardEndpoint clears its association entry (fenced)
      server->release(slot);
    }
    if (o.once && took && sinks.empty()) break;
    if (o.once && !took && Clock::now() > once_deadline) {
      failed_run(nullptr, whom, "timed out waiting for the peer's association");
      break;
    }
    if (!moved) ::usleep(200);
  }
  if (!o.once) {
    write_json(Json{{"runs", runs}, {"server", server_json(*server)}});
    fmt::print("rnic-sink: stopped{}: {} runs served, {} failed\n",
               g_signal.load() != 0 ? fmt::format(" by signal {}", g_signal.load()) : std::string(), served, failed);
  }
  const auto& c = server->counters();
  if (c.unknown_not_init + c.table_full + c.rate_limited + c.refused != 0)
    fmt::print(
        "rnic-sink: not answered: {} packets of unknown senders that were no INIT, {} INITs with every slot taken, {} "
        "over the handshake rate, {} from senders not served\n",
        c.unknown_not_init, c.table_full, c.rate_limited, c.refused);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "rnic-sink: the card's side of a run with rnic-peer: the driver, the card's network port and usrsctp "
      "over it; the card places the peer's DDP segments, every byte and completion is checked"};
  Options o;
  app.add_option("--peer", o.peer,
                 "serve only this peer, IPV4:PORT (rnic-peer --local-port), on slot --socket; default: any sender's "
                 "INIT");
  app.add_option("--device", o.device, "device (default: $RNIC_DEVICE), e.g. sim:/tmp/rnic.sock");
  app.add_option("--my-ip", o.my_ip, "the card's IPv4 address (rnic-sim: 127.0.0.1)")->capture_default_str();
  app.add_option("--udp-port", o.udp_port, "the card's UDP port (rnic-sim --udp-port; RFC 6951: 9899)")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app.add_option("--sctp-port", o.sctp_port, "SCTP port to listen on")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app.add_option("--socket", o.socket,
                 "the first slot: a peer's association table entry and the network layer's socket towards it")
      ->check(CLI::Range(0, 15))
      ->capture_default_str();
  app.add_option("--associations", o.associations,
                 "associations served at once without --peer (slots --socket.., at most the card's 16)")
      ->check(CLI::Range(1u, 16u))
      ->capture_default_str();
  app.add_option("--handshake-timeout-ms", o.handshake_timeout_ms,
                 "a new sender's association that is not up after this long gives its slot back")
      ->check(CLI::Range(1u, 600'000u))
      ->capture_default_str();
  app.add_option("--timeout-ms", o.timeout_ms,
                 "give up on a run after this long (--once: from the start; else from the association's start)")
      ->check(CLI::Range(1u, 3'600'000u))
      ->capture_default_str();
  app.add_option("--linger-ms", o.linger_ms,
                 "after the peer's SHUTDOWN, serve until the SHUTDOWN COMPLETE, at most this long")
      ->check(CLI::Range(0u, 60'000u))
      ->capture_default_str();
  app.add_option("--coalesce", o.coalesce,
                 "merge up to K consecutive DATA-only packets of the association into one usrsctp input (1: off)")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  app.add_option("--json", o.json,
                 "write the report as JSON to FILE (with --once the run's object, else {\"runs\": [...]}, rewritten "
                 "after every run)");
  app.add_flag("--once", o.once,
               "serve one association, then exit (without it: one after another until SIGTERM/SIGINT)");
  try {
    app.parse(argc, argv);
    if (!o.peer.empty()) rnic::sctp::parse_ipv4_endpoint(o.peer);
    rnic::sctp::parse_ipv4(o.my_ip);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const rnic::Error& e) {
    fmt::print(stderr, "rnic-sink: {}\n", e.what());
    return 2;
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);

  std::unique_ptr<rnic::Device> dev;
  rnic::NetPort* net = nullptr;
  try {
    dev = rnic::Device::open(o.device);
    net = &dev->open_net();
  } catch (const std::exception& e) {
    fmt::print(stderr, "rnic-sink: {}\n", e.what());
    if (!o.json.empty()) {
      std::ofstream f(o.json);
      f << Json{{"peer", o.peer}, {"status", "failed"}, {"error", e.what()}}.dump(2) << "\n";
    }
    return 1;
  }
  if (o.peer.empty() && dev->sim() == nullptr) {
    // Each sender's slot needs its socket pointed at it, which the driver does only on rnic-sim.
    fmt::print(stderr,
               "rnic-sink: on a card the network layer's sockets are set by hand (docs/card-flow.md): serve one "
               "peer with --peer and point socket --socket at it\n");
    return 2;
  }
  try {
    return serve(o, *dev, *net);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rnic-sink: {}\n", e.what());
    return 1;
  }
}
