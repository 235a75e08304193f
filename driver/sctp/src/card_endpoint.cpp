// SPDX-License-Identifier: Apache-2.0
#include "rnic/sctp/card_endpoint.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "rnic/wire/gather.hpp"

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

// RFC 1982 serial arithmetic on 32-bit TSNs and transmit-ring sequence numbers.
bool serial_le(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(b - a) >= 0; }
bool serial_lt(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(b - a) > 0; }

constexpr std::uint8_t kChunkCookieEcho = 10, kChunkCookieAck = 11;  // RFC 9260 3.3.11, 3.3.12
// RFC 5043 10 bounds the DATA chunks in flight at 32767; the registry's key, (SCTP stream, DDP-SSN), is
// unique while fewer than 65536 of a stream's segments are outstanding.
constexpr std::size_t kMaxSegmentsOutstanding = 32768;

}  // namespace

const char* send_status_name(SendStatus s) noexcept {
  switch (s) {
    case SendStatus::kAcknowledged:
      return "acknowledged";
    case SendStatus::kAborted:
      return "aborted";
  }
  return "?";
}

CardEndpoint::CardEndpoint(Device& device, Client& client, NetPort& net, CardEndpointConfig config)
    : device_(device),
      client_(client),
      net_(net),
      config_(std::move(config)),
      ep_(offloaded(config_.sctp), [this](wire::ConstBytes p) { on_emit(p); }),
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
  if (!p.bytes.empty()) {
    on_peer_packet(wire::ConstBytes(p.bytes));
    coalescer_.add(p.association, wire::ConstBytes(p.bytes));
  }
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
  if (fragmented_ && ep_.state() == AssociationState::kReady) {  // on_emit cannot abort from inside usrsctp
    ++counters_.fragment_aborts;
    ep_.abort();
  }
  check_faults();
  program_association();
  if (ep_.state() != AssociationState::kReady) {
    for (auto& [id, s] : sends_) s.aborted = true;  // usrsctp dropped whatever it held of them
  }
  const std::size_t queued = out_.size();
  const std::size_t sends = sends_.size();
  flush_out();
  complete_sends();
  for (std::uint16_t s = 0; s < teardown_waiting_.size(); ++s) {
    if (teardown_waiting_[s] && live_[s]) end_stream(s);
  }
  return moved || out_.size() != queued || sends_.size() != sends;
}

// usrsctp's packet, as it leaves the stack: the TSNs of our segments, the peer's tag, the slot form.
void CardEndpoint::on_emit(wire::ConstBytes packet) {
  OutPacket o;
  if (auto sum = wire::summarize_packet(packet); sum.ok()) {
    for (const auto& d : sum->data) {
      if (!highest_tsn_sent_ || serial_lt(*highest_tsn_sent_, d.tsn)) highest_tsn_sent_ = d.tsn;
      if (!d.ddp_segment) continue;
      if (auto it = segments_.find({d.sctp_stream, d.ddp_ssn}); it != segments_.end() && !it->second.tsn)
        it->second.tsn = d.tsn;
    }
    // Packets with DATA or SACK or a COOKIE ECHO / ACK carry the peer's tag (RFC 9260 8.5): what the
    // card's gather checks ours against (NetAssociation::their_verification_tag).
    const std::uint8_t first = packet.size > wire::kSctpCommonHeaderBytes ? packet.data[12] : 0xFF;
    if (!sum->data.empty() || !sum->cumulative_tsn_acks.empty() || first == kChunkCookieEcho ||
        first == kChunkCookieAck)
      their_vtag_seen_ = sum->verification_tag;
  }
  if (!segments_.empty()) {
    auto slot = wire::rewrite_for_gather(packet, [this](const wire::GatherDescriptor& g) {
      const auto it = segments_.find({g.sctp_stream, g.ddp_ssn});
      return it != segments_.end() && it->second.stag == g.stag && it->second.to == g.to &&
             it->second.length == g.length;
    });
    if (!slot.ok() && slot.error().code == wire::Errc::kFragmented) {
      fragmented_ = true;  // docs/transmit.md: the path MTU went below a segment; the association is aborted
      return;
    }
    if (slot.ok() && slot->gather) {
      o.bytes = std::move(slot->packet);
      o.gather = true;
      for (const auto& d : slot->descriptors) {
        o.descriptors.emplace_back(d.sctp_stream, d.ddp_ssn);
        ++segments_.at({d.sctp_stream, d.ddp_ssn}).queued;
      }
    }
  }
  if (!o.gather) o.bytes = packet.to_vector();
  out_.push_back(std::move(o));
}

// A packet of the peer's, before usrsctp has it: the cumulative TSN acks of its SACKs (RFC 9260 3.3.4),
// when it carries our tag. Gap reports never count (6.2: a receiver may renege). A cumulative ack past
// the highest TSN usrsctp has sent is forged: it completes nothing (usrsctp aborts the association on it).
void CardEndpoint::on_peer_packet(wire::ConstBytes packet) {
  if (!written_vtag_ || sends_.empty()) return;
  auto sum = wire::summarize_packet(packet);
  if (!sum.ok() || sum->verification_tag != *written_vtag_) return;
  for (const std::uint32_t cum : sum->cumulative_tsn_acks) {
    if (!highest_tsn_sent_ || serial_lt(*highest_tsn_sent_, cum)) {
      ++counters_.sack_beyond_sent;
      continue;
    }
    if (!cumulative_ack_ || serial_lt(*cumulative_ack_, cum)) {
      cumulative_ack_ = cum;
      ++counters_.sack_acks;
    }
  }
}

// NET_TX_FAULT (docs/transmit.md): the card dropped a gather packet of this entry. The association is
// aborted (RFC 9260 9.1) and its sends fail with the card's reason.
void CardEndpoint::check_faults() {
  if (!gathered_) return;
  const NetTxFaults f = net_.tx_faults();
  const std::uint32_t bit = 1u << config_.assoc_entry;
  if ((f.associations & bit) == 0) return;
  net_.clear_tx_faults(bit);
  if (fault_reason_ == 0) fault_reason_ = f.association == config_.assoc_entry && f.reason != 0 ? f.reason : ~0u;
  if (ep_.state() == AssociationState::kReady) {
    ++counters_.fault_aborts;
    ep_.abort();
  }
}

SendTicket CardEndpoint::post_send(const SendRequest& r) {
  if (!written_vtag_ || !pd_)
    fail(Errc::kState, "post_send: the association is not in the card's table (not up with DDP)");
  if (r.stream >= streams_.size())
    fail(Errc::kInvalidArgument,
         fmt::format("post_send: stream {} beyond the association's {} DDP streams", r.stream, streams_.size()));
  if (torn_down_[r.stream] || teardown_waiting_[r.stream])
    fail(Errc::kState, fmt::format("post_send: stream {}'s session ended", r.stream));
  if (!live_[r.stream])
    fail(Errc::kState, fmt::format("post_send: stream {} is not live on the card (no session accepted)", r.stream));
  if (r.tagged && r.rsvd_ulp > 0xFF)
    fail(Errc::kInvalidArgument,
         fmt::format("post_send: rsvd_ulp {:#x} wider than a tagged header's 8 bits", r.rsvd_ulp));
  const std::size_t max_segment = ep_.max_segment_size();
  const std::size_t header = r.tagged ? wire::kTaggedHeaderSize : wire::kUntaggedHeaderSize;
  const std::uint64_t count = r.length == 0 ? 1 : (r.length + (max_segment - header) - 1) / (max_segment - header);
  if (segments_.size() + count > kMaxSegmentsOutstanding)
    fail(Errc::kQueueFull, fmt::format("post_send: {} segments beside {} outstanding, more than {}", count,
                                       segments_.size(), kMaxSegmentsOutstanding));
  std::optional<Stag> held;
  if (r.length > 0) {  // a zero-length message reads nothing: its STag is not looked at (the card's rule 4 too)
    client_.hold_local_read(r.local_stag, *pd_, r.local_to, r.length);
    held = r.local_stag;
  }
  const std::uint64_t id = next_send_;
  const auto register_segments = [&](const DescribedMessage& m) {
    Send s;
    s.completion = SendCompletion{r.cookie, SendStatus::kAcknowledged, r.stream, m.msn, r.length, 0};
    s.held = held;
    s.vtag = *written_vtag_;
    for (const DescribedSegment& d : m.segments) {
      SegmentState st;
      st.send = id;
      st.stag = r.local_stag;
      st.to = r.local_to + d.plan.message_offset;
      st.length = d.plan.payload_length;
      segments_[{r.stream, d.ddp_ssn}] = st;
      s.segments.emplace_back(r.stream, d.ddp_ssn);
    }
    sends_.emplace(id, std::move(s));
  };
  DescribedMessage m;
  try {
    m = r.tagged
            ? ep_.send_tagged_described(r.stream, r.remote_stag, r.remote_to, static_cast<std::uint8_t>(r.rsvd_ulp),
                                        r.length, r.local_stag, r.local_to, register_segments)
            : ep_.send_untagged_described(r.stream, r.qn, r.rsvd_ulp, r.length, r.local_stag, r.local_to,
                                          register_segments);
  } catch (...) {
    if (sends_.count(id) == 0 && held) client_.release_local_read(*held);
    throw;
  }
  ++next_send_;
  ++counters_.sends_posted;
  return SendTicket{m.msn, m.segments.size()};
}

std::size_t CardEndpoint::poll_sends(std::vector<SendCompletion>& out, std::size_t max) {
  out.clear();
  while (!done_.empty() && out.size() < max) {
    out.push_back(done_.front());
    done_.pop_front();
  }
  return out.size();
}

// docs/transmit.md, "When a send is complete": every chunk at or before the peer's cumulative TSN ack
// (or the association gone and cleared on the card), and the card past every slot that named one.
bool CardEndpoint::segment_done(const SegmentState& s, std::uint32_t consumed) const {
  if (s.queued != 0 || (s.last_slot && !serial_lt(*s.last_slot, consumed))) return false;
  const Send& send = sends_.at(s.send);
  if (send.aborted) return written_vtag_ != send.vtag;  // the entry cleared, or rewritten by a restart
  return s.tsn && cumulative_ack_ && serial_le(*s.tsn, *cumulative_ack_);
}

void CardEndpoint::complete_sends() {
  if (sends_.empty()) return;
  std::optional<std::uint32_t> consumed;  // read once per step, and only when a send may complete
  std::vector<std::uint64_t> finished;
  for (const auto& [id, send] : sends_) {
    bool done = true;
    for (const auto& key : send.segments) {
      const SegmentState& st = segments_.at(key);
      const bool reads = st.last_slot.has_value();
      if (reads && !consumed) consumed = net_.tx_consumed();
      if (!segment_done(st, consumed.value_or(0))) {
        done = false;
        break;
      }
    }
    if (done) finished.push_back(id);
  }
  for (const std::uint64_t id : finished) finish(id);
}

void CardEndpoint::finish(std::uint64_t id) {
  Send& s = sends_.at(id);
  for (const auto& key : s.segments) segments_.erase(key);
  if (s.held) {
    try {
      client_.release_local_read(*s.held);
    } catch (const rnic::Error&) {  // the STag went with its client
    }
  }
  SendCompletion c = s.completion;
  if (s.aborted) {
    c.status = SendStatus::kAborted;
    c.fault_reason = fault_reason_ == ~0u ? 0 : fault_reason_;
    ++counters_.sends_aborted;
  } else {
    ++counters_.sends_acknowledged;
  }
  done_.push_back(c);
  sends_.erase(id);
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
  if (written_vtag_ == vtag && their_vtag_written_ == their_vtag_seen_) return;
  if (written_vtag_ && written_vtag_ != vtag) {
    // A restart (RFC 9260 5.2.4): usrsctp dropped what it held of the old association and numbers TSNs
    // afresh, so no SACK of the new one may complete an old send. They fail once the entry no longer
    // holds the tag they were sent under (the write below) and the card has read their slots.
    for (auto& [id, s] : sends_) s.aborted = true;
    highest_tsn_sent_.reset();
    cumulative_ack_.reset();
  }
  if (streams_.empty()) create_streams();
  NetAssociation a;
  a.my_ip = config_.my_ip;
  a.their_ip = config_.peer.addr;
  a.my_udp_port = config_.my_udp_port;
  a.their_udp_port = config_.peer.port;
  a.my_sctp_port = config_.sctp.port;
  a.their_sctp_port = *their_port;
  a.my_verification_tag = *vtag;
  a.their_verification_tag = their_vtag_seen_.value_or(0);
  a.first_stream = streams_.front();
  a.stream_count = static_cast<std::uint32_t>(streams_.size());
  a.socket = config_.socket;
  net_.set_association(config_.assoc_entry, a);
  written_vtag_ = vtag;
  their_vtag_written_ = their_vtag_seen_;
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
  teardown_waiting_.assign(n, false);
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
// With sends in flight on the stream, the teardown waits until they complete: the card reads their
// retransmissions only from a live stream (docs/transmit.md). Meanwhile the card still places the
// peer's segments of the stream, into memory the ULP registered for it.
void CardEndpoint::terminate(std::uint16_t stream) {
  if (stream < live_.size() && live_[stream]) end_stream(stream);
  ep_.terminate(stream);
}

bool CardEndpoint::sending_on(std::uint16_t stream) const {
  return std::any_of(sends_.begin(), sends_.end(),
                     [stream](const auto& s) { return s.second.completion.stream == stream; });
}

void CardEndpoint::end_stream(std::uint16_t stream) {
  if (sending_on(stream)) {
    teardown_waiting_[stream] = true;
    return;
  }
  teardown_waiting_[stream] = false;
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
  const auto unqueue = [this](const OutPacket& o) {
    for (const auto& key : o.descriptors) --segments_.at(key).queued;
  };
  while (!out_.empty()) {
    OutPacket& o = out_.front();
    // The association is cleared on the card (its reads must not start), or the packet is of the old
    // association of a restart (the card would drop it for its tag and fault the new one).
    if (o.gather && (!written_vtag_ || their_vtag_written_ != wire::load_be32(o.bytes.data() + 4))) {
      unqueue(o);
      out_.pop_front();
      ++counters_.gather_after_loss;
      continue;
    }
    try {
      const std::uint32_t slot = o.gather ? net_.send_gather(o.bytes, config_.socket, config_.assoc_entry)
                                          : net_.send(o.bytes, config_.socket);
      if (o.gather) {
        gathered_ = true;
        ++counters_.gather_packets;
        counters_.descriptors_sent += o.descriptors.size();
        for (const auto& key : o.descriptors) segments_.at(key).last_slot = slot;
      }
    } catch (const rnic::Error& e) {
      if (e.code() == Errc::kQueueFull) {
        ++counters_.tx_ring_full;
        break;
      }
      if (e.code() != Errc::kInvalidArgument) throw;
      ++counters_.tx_dropped;  // a packet the ring cannot carry (longer than a slot): lost, as on a wire
    }
    unqueue(o);
    out_.pop_front();
    ++counters_.packets_out;
  }
  while (out_.size() > kMaxQueuedOut) {
    unqueue(out_.front());
    out_.pop_front();
    ++counters_.tx_dropped;
  }
}

}  // namespace rnic::sctp
