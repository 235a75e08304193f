// SPDX-License-Identifier: Apache-2.0
// RFC 5043 with the card doing the per-byte work (docs/network.md, "The host side"): one association of
// usrsctp run over the card's packet rings, and the card's tables kept in step with it.
//
// CardEndpoint joins an rnic::sctp::Endpoint (usrsctp, CRC32c left to the card) to the driver's NetPort
// and Client and makes the driver calls at the moments RFC 5043 sets:
//   - RFC 5043 5.1 / 11.1: once usrsctp has the association up with the DDP Adaptation Layer Indication
//     on both sides (Endpoint kReady), it creates the association's DDP streams (one PD, one stream per
//     SCTP stream pair: RFC 5043 8, consecutive) and writes the card's association table entry with
//     usrsctp's own verification tag. Never for an association without the indication.
//   - RFC 5043 6.2: accept() sets the stream live on the card before the Accept leaves, so the card
//     takes the peer's first segment. On the active side (endpoint().initiate()), the stream goes live
//     when the peer's Accept is seen; segments that raced ahead of that reach the segment sink whole.
//   - RFC 5043 6: when a session ends (the peer's Terminate, seen in DDP-SSN order; a violation we
//     answered with Terminate; our terminate()), the stream is torn down, fenced, live bit first; then
//     the owner hears of it. A stream's one session per association: it is not made live again.
//   - When usrsctp reports the association gone or going (SHUTDOWN received: usrsctp still holds it
//     until SHUTDOWN COMPLETE; an ABORT: it is gone already), the entry is cleared, fenced, in that same
//     step, before usrsctp is given anything more. The destructor clears it too. Until then the card
//     may still place segments of the association's live streams: memory the ULP registered for them.
// usrsctp's timers run on one wall clock for every CardEndpoint of the process.
// Receive-ring packets go to usrsctp through a PacketCoalescer (config.coalesce), usrsctp's packets
// into the transmit ring (kept in order while the ring is full, the oldest dropped past 4096, as a
// congested wire would: SCTP sends it again).
//
// Not thread-safe; one thread drives step(). Errors of the driver calls propagate as rnic::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/sctp/coalesce.hpp"
#include "rnic/sctp/endpoint.hpp"
#include "rnic/sctp/udp_link.hpp"

namespace rnic::sctp {

struct CardEndpointConfig {
  EndpointConfig sctp;  // crc32c_offload is forced on: the card checks and computes every CRC32c
  // The association table entry: the card's IPv4 address and UDP port, the peer's (host byte order).
  std::uint32_t my_ip = kIpv4Loopback;
  std::uint16_t my_udp_port = kSctpUdpEncapsulationPort;
  Ipv4Endpoint peer;
  std::uint16_t socket = 0;       // the network layer's socket towards the peer (0..15)
  std::uint32_t assoc_entry = 0;  // the card's association table entry this endpoint owns (0..15)
  std::size_t coalesce = 16;      // packets merged into one usrsctp input at most (1: off)
  std::size_t rx_batch = 64;      // receive-ring packets taken per step
  // false: step() reads the receive ring itself (the endpoint has the card to itself); true: a
  // CardServer reads it and hands this endpoint its peer's packets with deliver().
  bool shared_ring = false;
};

// A send whose payload the card reads (docs/transmit.md): [local_to, local_to + length) through the
// client's local_stag (kLocalRead, on the association's PD), as one DDP message on SCTP stream `stream`.
struct SendRequest {
  std::uint16_t stream = 0;  // the association's SCTP stream = its DDP stream (RFC 5043 8)
  bool tagged = false;
  std::uint32_t remote_stag = 0;  // tagged (RFC 5041 4.2): the Data Sink's STag and TO
  std::uint64_t remote_to = 0;
  std::uint32_t qn = 0;        // untagged (RFC 5041 4.3): the queue; the MSN is the Data Source's next
  std::uint64_t rsvd_ulp = 0;  // tagged: 8 bits; untagged: 40 bits
  Stag local_stag = 0;
  std::uint64_t local_to = 0;
  std::uint32_t length = 0;
  std::uint64_t cookie = 0;  // returned in the completion
};

struct SendTicket {
  std::uint32_t msn = 0;     // untagged: the message's MSN; tagged: 0
  std::size_t segments = 0;  // DDP segments (DATA chunks) it went as
};

enum class SendStatus {
  kAcknowledged,  // every chunk acknowledged by the peer's cumulative TSN ack, the card done reading
  kAborted,       // the association ended (aborted, lost, shut down, a gather fault) before that
};
const char* send_status_name(SendStatus s) noexcept;

struct SendCompletion {
  std::uint64_t cookie = 0;
  SendStatus status = SendStatus::kAcknowledged;
  std::uint16_t stream = 0;
  std::uint32_t msn = 0;
  std::uint32_t length = 0;
  std::uint32_t fault_reason = 0;  // kAborted by a gather fault: hw::kNET_TX_DROP_* (else 0)
};

struct CardEndpointCounters {
  std::uint64_t packets_in = 0, bytes_in_ring = 0, bytes_on_wire = 0;  // receive ring: the host copy, the wire
  std::uint64_t usrsctp_inputs = 0, packets_merged = 0;                // PacketCoalescer
  std::uint64_t packets_out = 0, tx_ring_full = 0, tx_dropped = 0;     // transmit ring
  std::uint64_t association_writes = 0, association_clears = 0, streams_torn_down = 0;
  std::uint64_t not_from_peer = 0;  // without shared_ring: receive-ring packets of other senders, dropped
  // The transmit path (post_send).
  std::uint64_t sends_posted = 0, sends_acknowledged = 0, sends_aborted = 0;
  std::uint64_t gather_packets = 0, descriptors_sent = 0;  // into the ring with NTXD GATHER; their descriptors
  std::uint64_t sack_acks = 0;                             // cumulative TSN acks that moved forward
  std::uint64_t sack_beyond_sent = 0;   // cumulative TSN acks past the highest TSN sent: forged, ignored
  std::uint64_t fragment_aborts = 0;    // a descriptor chunk fragmented by usrsctp: association aborted
  std::uint64_t fault_aborts = 0;       // NET_TX_FAULT for the entry: association aborted
  std::uint64_t gather_after_loss = 0;  // gather packets dropped here: the association was cleared
};

class CardEndpoint {
 public:
  // Sets the network layer's socket towards config.peer where the driver can (socket_programmed());
  // on a card, VNx's socket table is set by hand (docs/card-flow.md). Throws rnic::Error: kInvalidArgument
  // for a bad config, anything the driver or Endpoint throws.
  CardEndpoint(Device& device, Client& client, NetPort& net, CardEndpointConfig config);
  ~CardEndpoint();  // clears the association entry if written (fenced); errors are swallowed
  CardEndpoint(const CardEndpoint&) = delete;
  CardEndpoint& operator=(const CardEndpoint&) = delete;

  Endpoint& endpoint() { return ep_; }
  const Endpoint& endpoint() const { return ep_; }
  // Notices of the Endpoint, after this class acted on them (a Terminated stream is already torn down).
  void set_session_handler(Endpoint::SessionHandler h) { handler_ = std::move(h); }
  // DDP segments in DDP-SSN order (Endpoint::set_segment_sink). On a live stream the card took them:
  // the host copy holds the DDP header only (RFC 5041 4.2: 14 bytes tagged, 4.3: 18 untagged).
  void set_segment_sink(Endpoint::SegmentSink s) { ep_.set_segment_sink(std::move(s)); }

  void listen() { ep_.listen(); }
  void connect(std::uint16_t peer_sctp_port) { ep_.connect(peer_sctp_port); }
  // One round: receive-ring packets into usrsctp (delivered ones with shared_ring), usrsctp's work and
  // timers, the card's tables, usrsctp's packets into the transmit ring. Returns whether anything moved.
  bool step();
  // shared_ring: one of the peer's receive-ring packets, for the next step().
  void deliver(const NetRxPacket& p);

  // The association's DDP streams, created when it came up (empty before): SCTP stream s is streams()[s].
  const std::vector<StreamId>& streams() const { return streams_; }
  std::optional<PdId> pd() const { return pd_; }
  bool live(std::uint16_t stream) const { return stream < live_.size() && live_[stream]; }
  bool torn_down(std::uint16_t stream) const { return stream < torn_down_.size() && torn_down_[stream]; }
  // RFC 5043 6.2: sets the stream live on the card, then Accepts with the private data (if the Accept
  // cannot be sent, the live bit is cleared again). kState if the association is not written into the
  // card yet, the stream has no Initiate to answer, or its session ended (torn down); else as
  // Endpoint::accept.
  void accept(std::uint16_t stream, wire::ConstBytes private_data = {});
  // RFC 5043 6.2: our Terminate. A live stream is torn down first (fenced): nothing more is placed for
  // the session. Then as Endpoint::terminate. With sends of the stream in flight (post_send) the teardown
  // waits for their completions: the card reads a retransmission's payload only for a live stream.
  void terminate(std::uint16_t stream);

  // Posts a send (docs/transmit.md): usrsctp gets its segments as descriptor chunks, the card reads the
  // payload as each packet leaves: the host never reads or writes a payload byte. The STag is held
  // (Client::hold_local_read) until the completion. Throws rnic::Error: kState if the association is not in the card's
  // table, the stream is not live (its session not accepted) or ended; kInvalidArgument for a stream beyond the
  // association's, an STag without kLocalRead, of another PD or a range outside it; kNotFound for an STag not the
  // client's; else as Endpoint::send_*_described. A zero-length message reads nothing: its local STag is not looked at
  // (RFC 5041 5.2 spirit).
  SendTicket post_send(const SendRequest& request);
  // Completions of sends, in the order they completed (at most max; `out` is replaced by them).
  std::size_t poll_sends(std::vector<SendCompletion>& out, std::size_t max = 64);
  std::size_t sends_in_flight() const { return sends_.size(); }

  bool association_written() const { return written_vtag_.has_value(); }
  bool socket_programmed() const { return socket_programmed_; }
  const CardEndpointCounters& counters() const { return counters_; }

 private:
  void on_notice(const SessionNotice& n);
  void create_streams();
  void end_stream(std::uint16_t stream);
  bool sending_on(std::uint16_t stream) const;
  void program_association();
  void clear_association();
  void flush_out();
  void on_emit(wire::ConstBytes packet);
  void on_peer_packet(wire::ConstBytes packet);
  void check_faults();
  void complete_sends();
  void finish(std::uint64_t id);
  struct OutPacket {
    std::vector<std::uint8_t> bytes;  // the slot form when gather
    bool gather = false;
    std::vector<std::pair<std::uint16_t, std::uint16_t>> descriptors;  // (SCTP stream, DDP-SSN)
  };
  struct SegmentState {
    std::uint64_t send = 0;  // the send's id
    std::uint32_t stag = 0, length = 0;
    std::uint64_t to = 0;
    std::optional<std::uint32_t> tsn;        // once usrsctp sent it
    std::optional<std::uint32_t> last_slot;  // the last transmit slot that named it
    std::uint32_t queued = 0;                // packets in out_ that name it
  };
  struct Send {
    SendCompletion completion;
    std::optional<Stag> held;
    std::vector<std::pair<std::uint16_t, std::uint16_t>> segments;  // (SCTP stream, DDP-SSN)
    std::uint32_t vtag = 0;  // the association's tag (the entry's MY_VTAG) it was posted under
    bool aborted = false;
  };
  bool segment_done(const SegmentState& s, std::uint32_t consumed) const;

  Device& device_;
  Client& client_;
  NetPort& net_;
  CardEndpointConfig config_;
  std::deque<OutPacket> out_;  // usrsctp's packets waiting for a transmit slot
  Endpoint ep_;
  PacketCoalescer coalescer_;
  Endpoint::SessionHandler handler_;
  std::vector<NetRxPacket> rx_;
  bool delivered_ = false;  // deliver() since the last step
  std::optional<std::uint32_t> written_vtag_;
  bool cleared_for_good_ = false;  // the association ended: never written again
  std::optional<PdId> pd_;
  std::vector<StreamId> streams_;
  std::vector<bool> live_, torn_down_;
  std::vector<bool> teardown_waiting_;  // the session ended; the teardown waits for the stream's sends
  bool socket_programmed_ = false;
  CardEndpointCounters counters_;
  // The transmit path's bookkeeping.
  std::map<std::uint64_t, Send> sends_;
  std::uint64_t next_send_ = 0;
  std::map<std::pair<std::uint16_t, std::uint16_t>, SegmentState> segments_;  // by (SCTP stream, DDP-SSN)
  std::optional<std::uint32_t> highest_tsn_sent_, cumulative_ack_;
  std::optional<std::uint32_t> their_vtag_seen_;     // the tag of usrsctp's packets (RFC 9260 8.5)
  std::optional<std::uint32_t> their_vtag_written_;  // NetAssociation::their_verification_tag as written
  bool fragmented_ = false;                          // a descriptor chunk fragmented: abort at the next step
  std::uint32_t fault_reason_ = 0;                   // the gather fault that aborted the association
  bool gathered_ = false;                            // a gather packet went into the ring: faults are read from then on
  std::deque<SendCompletion> done_;
};

}  // namespace rnic::sctp
