// SPDX-License-Identifier: Apache-2.0
#include "rnic/sctp/card_endpoint.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace rnic::sctp {
namespace {

constexpr std::size_t kMaxQueuedOut = 4096;        // usrsctp's packets waiting for the transmit ring
constexpr std::size_t kMaxCoalescedBytes = 16384;  // one usrsctp input: well within what it takes

[[noreturn]] void fail(Errc code, const std::string& what) { throw rnic::Error(code, "CardEndpoint: " + what); }

EndpointConfig offloaded(EndpointConfig c) {
  c.crc32c_offload = true;
  return c;
}

// usrsctp's timers are process-wide: one wall clock for every CardEndpoint of the process, so N of them
// do not run the timers N times too fast.
WallClockTimers& process_timers() {
  static WallClockTimers t;
  return t;
}

}  // namespace

CardEndpoint::CardEndpoint(Device& device, Client& client, NetPort& net, CardEndpointConfig config)
    : device_(device),
      client_(client),
      net_(net),
      config_(std::move(config)),
      ep_(offloaded(config_.sctp), [this](wire::ConstBytes p) { out_.push_back(p.to_vector()); }),
      coalescer_(config_.coalesce, kMaxCoalescedBytes, [this](wire::ConstBytes p) { ep_.input(p); }) {
  if (config_.assoc_entry >= kNetEntries)
    fail(Errc::kInvalidArgument,
         fmt::format("assoc_entry {} out of range 0..{}", config_.assoc_entry, kNetEntries - 1));
  if (config_.socket >= kNetEntries)
    fail(Errc::kInvalidArgument, fmt::format("socket {} out of range 0..{}", config_.socket, kNetEntries - 1));
  if (config_.peer.port == 0 || config_.my_udp_port == 0)
    fail(Errc::kInvalidArgument, "the peer's and the card's UDP ports must be nonzero");
  if (config_.rx_batch == 0) fail(Errc::kInvalidArgument, "rx_batch must be >= 1");
  try {
    net_.set_socket(config_.socket, config_.peer.addr, config_.peer.port);
    socket_programmed_ = true;
  } catch (const rnic::Error& e) {
    if (e.code() != Errc::kUnsupported) throw;
  }
  ep_.set_session_handler([this](const SessionNotice& n) { on_notice(n); });
}

CardEndpoint::~CardEndpoint() {
  try {
    clear_association();
  } catch (...) {  // the card is gone or broken: the driver's close clears its entries too
  }
}

void CardEndpoint::deliver(const NetRxPacket& p) {
  ++counters_.packets_in;
  counters_.bytes_in_ring += p.bytes.size();
  counters_.bytes_on_wire += p.wire_length;
  if (!p.bytes.empty()) coalescer_.add(p.association, wire::ConstBytes(p.bytes));
  delivered_ = true;
}

bool CardEndpoint::step() {
  if (!config_.shared_ring) {  // the ring is this endpoint's: only its peer's packets go to usrsctp
    net_.receive(rx_, config_.rx_batch);
    for (const auto& p : rx_) {
      if (p.source_ip == config_.peer.addr && p.source_port == config_.peer.port) {
        deliver(p);
      } else {
        ++counters_.not_from_peer;
      }
    }
  }
  const bool got = delivered_;
  delivered_ = false;
  coalescer_.flush();  // nothing of this batch waits for the next one
  counters_.usrsctp_inputs = coalescer_.counters().packets_out;
  counters_.packets_merged = coalescer_.counters().merged;
  bool moved = ep_.pump() || got;
  if (process_timers().advance()) moved = ep_.pump() || moved;
  program_association();
  const std::size_t queued = out_.size();
  flush_out();
  return moved || out_.size() != queued;
}

// RFC 5043 5.1, 11.1: written once the association is up with the indication on both sides; cleared
// (fenced) once usrsctp is done with it. A restart that changed the tag rewrites the entry.
void CardEndpoint::program_association() {
  if (ep_.state() != AssociationState::kReady) {
    if (written_vtag_) {
      clear_association();
      cleared_for_good_ = true;
    }
    return;
  }
  if (cleared_for_good_) return;
  const auto vtag = ep_.local_verification_tag();
  const auto their_port = ep_.peer_port();
  if (!vtag || !their_port) fail(Errc::kBackend, "the association is up but usrsctp's verification tag is not known");
  if (written_vtag_ == vtag) return;
  if (streams_.empty()) create_streams();
  NetAssociation a;
  a.my_ip = config_.my_ip;
  a.their_ip = config_.peer.addr;
  a.my_udp_port = config_.my_udp_port;
  a.their_udp_port = config_.peer.port;
  a.my_sctp_port = config_.sctp.port;
  a.their_sctp_port = *their_port;
  a.my_verification_tag = *vtag;
  a.first_stream = streams_.front();
  a.stream_count = static_cast<std::uint32_t>(streams_.size());
  a.socket = config_.socket;
  net_.set_association(config_.assoc_entry, a);
  written_vtag_ = vtag;
  ++counters_.association_writes;
}

// The association's DDP streams, all or none: SCTP stream s is DDP stream first + s in the card's table,
// so they must be consecutive; a failure part-way gives back what was created and throws.
void CardEndpoint::create_streams() {
  const std::uint32_t n = std::min<std::uint32_t>(ep_.ddp_streams(), device_.info().streams);
  if (n == 0) fail(Errc::kInvalidArgument, "the association has no DDP stream the card can hold");
  const PdId pd = client_.alloc_pd();
  std::vector<StreamId> made;
  try {
    for (std::uint32_t i = 0; i < n; ++i) {
      made.push_back(client_.create_stream(pd));
      if (made.back() != made.front() + i)
        fail(Errc::kBusy, fmt::format("the card's DDP streams for the association are not consecutive ({} after {}): "
                                      "the association table maps SCTP stream s to first + s",
                                      made.back(), made.front()));
    }
  } catch (...) {
    for (const StreamId s : made) {
      try {
        client_.teardown_stream(s, Teardown::kAbortive);
        client_.destroy_stream(s);
      } catch (...) {  // the client frees what it still holds when it goes
      }
    }
    try {
      client_.dealloc_pd(pd);
    } catch (...) {
    }
    throw;
  }
  pd_ = pd;
  streams_ = std::move(made);
  live_.assign(n, false);
  torn_down_.assign(n, false);
}

void CardEndpoint::clear_association() {
  if (!written_vtag_) return;
  net_.clear_association(config_.assoc_entry);  // fenced: nothing of the association is past the front end
  written_vtag_.reset();
  ++counters_.association_clears;
}

void CardEndpoint::accept(std::uint16_t stream, wire::ConstBytes private_data) {
  if (!written_vtag_) fail(Errc::kState, "accept: the association is not in the card's table (not up with DDP)");
  if (stream >= streams_.size())
    fail(Errc::kInvalidArgument,
         fmt::format("accept: stream {} beyond the association's {} DDP streams", stream, streams_.size()));
  if (torn_down_[stream])
    fail(Errc::kState, fmt::format("accept: stream {}'s session ended and its DDP stream is torn down", stream));
  if (ep_.session_state(stream) != SessionState::kInitiateReceived)
    fail(Errc::kState, fmt::format("accept: stream {} has no Initiate to answer (session {})", stream,
                                   session_state_name(ep_.session_state(stream))));
  client_.set_stream_live(streams_[stream], true);  // before the Accept leaves: the first segment may follow it
  live_[stream] = true;
  try {
    ep_.accept(stream, private_data);
  } catch (...) {  // no Accept left: the card must not take the stream's chunks
    client_.set_stream_live(streams_[stream], false);
    live_[stream] = false;
    throw;
  }
}

// RFC 5043 6.2: our Terminate. The card stops taking the stream's chunks first (teardown, fenced), so
// nothing is placed for a session we ended; then the Terminate leaves.
void CardEndpoint::terminate(std::uint16_t stream) {
  if (stream < live_.size() && live_[stream]) end_stream(stream);
  ep_.terminate(stream);
}

void CardEndpoint::end_stream(std::uint16_t stream) {
  live_[stream] = false;
  torn_down_[stream] = true;
  client_.teardown_stream(streams_[stream], Teardown::kGraceful);
  ++counters_.streams_torn_down;
}

// RFC 5043 6: a session that ended (Terminate received in DDP-SSN order, or one we sent for a violation)
// has its DDP stream torn down, fenced, live bit first, before the owner hears of it.
void CardEndpoint::on_notice(const SessionNotice& n) {
  const bool ended = n.kind == NoticeKind::kTerminated || n.kind == NoticeKind::kViolation;
  if (ended && n.stream < live_.size() && live_[n.stream]) end_stream(n.stream);
  // The active side: our Initiate was accepted, the peer's segments follow its Accept. Any that reach
  // the host before the live bit is set come whole, in DDP-SSN order, to the segment sink.
  if (n.kind == NoticeKind::kAccepted && n.stream < live_.size() && !live_[n.stream] && !torn_down_[n.stream]) {
    client_.set_stream_live(streams_[n.stream], true);
    live_[n.stream] = true;
  }
  if (handler_) handler_(n);
}

void CardEndpoint::flush_out() {
  while (!out_.empty()) {
    try {
      net_.send(out_.front(), config_.socket);
    } catch (const rnic::Error& e) {
      if (e.code() == Errc::kQueueFull) {
        ++counters_.tx_ring_full;
        break;
      }
      if (e.code() != Errc::kInvalidArgument) throw;
      ++counters_.tx_dropped;  // a packet the ring cannot carry (longer than a slot): lost, as on a wire
    }
    out_.pop_front();
    ++counters_.packets_out;
  }
  while (out_.size() > kMaxQueuedOut) {
    out_.pop_front();
    ++counters_.tx_dropped;
  }
}

}  // namespace rnic::sctp
