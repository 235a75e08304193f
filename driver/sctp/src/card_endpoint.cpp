// SPDX-License-Identifier: Apache-2.0
#include "rnic/sctp/card_endpoint.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace rnic::sctp {
namespace {

constexpr std::size_t kMaxQueuedOut = 4096;        // usrsctp's packets waiting for the transmit ring
constexpr std::size_t kMaxCoalescedBytes = 16384;  // one usrsctp input: well within what it takes
constexpr std::uint32_t kTableEntries = 16;        // the card's association table, the network layer's sockets

[[noreturn]] void fail(Errc code, const std::string& what) { throw rnic::Error(code, "CardEndpoint: " + what); }

EndpointConfig offloaded(EndpointConfig c) {
  c.crc32c_offload = true;
  return c;
}

}  // namespace

CardEndpoint::CardEndpoint(Device& device, Client& client, NetPort& net, CardEndpointConfig config)
    : device_(device),
      client_(client),
      net_(net),
      config_(std::move(config)),
      ep_(offloaded(config_.sctp), [this](wire::ConstBytes p) { out_.push_back(p.to_vector()); }),
      coalescer_(config_.coalesce, kMaxCoalescedBytes, [this](wire::ConstBytes p) { ep_.input(p); }) {
  if (config_.assoc_entry >= kTableEntries)
    fail(Errc::kInvalidArgument,
         fmt::format("assoc_entry {} out of range 0..{}", config_.assoc_entry, kTableEntries - 1));
  if (config_.socket >= kTableEntries)
    fail(Errc::kInvalidArgument, fmt::format("socket {} out of range 0..{}", config_.socket, kTableEntries - 1));
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

bool CardEndpoint::step() {
  const std::size_t n = net_.receive(rx_, config_.rx_batch);
  for (const auto& p : rx_) {
    ++counters_.packets_in;
    counters_.bytes_in_ring += p.bytes.size();
    counters_.bytes_on_wire += p.wire_length;
    if (!p.bytes.empty()) coalescer_.add(p.association, wire::ConstBytes(p.bytes));
  }
  coalescer_.flush();  // nothing of this batch waits for the next one
  counters_.usrsctp_inputs = coalescer_.counters().packets_out;
  counters_.packets_merged = coalescer_.counters().merged;
  bool moved = ep_.pump() || n != 0;
  if (timers_.advance()) moved = ep_.pump() || moved;
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
  if (streams_.empty()) {
    const std::uint32_t n = std::min<std::uint32_t>(ep_.ddp_streams(), device_.info().streams);
    if (n == 0) fail(Errc::kInvalidArgument, "the association has no DDP stream the card can hold");
    pd_ = client_.alloc_pd();
    for (std::uint32_t i = 0; i < n; ++i) {
      streams_.push_back(client_.create_stream(*pd_));
      if (streams_.back() != streams_.front() + i)
        fail(Errc::kBusy, fmt::format("the card's DDP streams for the association are not consecutive ({} after {}): "
                                      "the association table maps SCTP stream s to first + s",
                                      streams_.back(), streams_.front()));
    }
    live_.assign(n, false);
    torn_down_.assign(n, false);
  }
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
  client_.set_stream_live(streams_[stream], true);  // before the Accept leaves: the first segment may follow it
  live_[stream] = true;
  ep_.accept(stream, private_data);
}

// RFC 5043 6: a session that ended (Terminate received in DDP-SSN order, or one we sent for a violation)
// has its DDP stream torn down, fenced, live bit first, before the owner hears of it.
void CardEndpoint::on_notice(const SessionNotice& n) {
  const bool ended = n.kind == NoticeKind::kTerminated || n.kind == NoticeKind::kViolation;
  if (ended && n.stream < live_.size() && live_[n.stream] && !torn_down_[n.stream]) {
    client_.teardown_stream(streams_[n.stream], Teardown::kGraceful);
    live_[n.stream] = false;
    torn_down_[n.stream] = true;
    ++counters_.streams_torn_down;
  }
  if (handler_) handler_(n);
}

void CardEndpoint::flush_out() {
  while (!out_.empty()) {
    try {
      net_.send(out_.front(), config_.socket);
    } catch (const rnic::Error& e) {
      if (e.code() != Errc::kQueueFull) throw;
      ++counters_.tx_ring_full;
      break;
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
