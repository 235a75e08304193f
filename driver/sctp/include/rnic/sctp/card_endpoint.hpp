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
#include <optional>
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

struct CardEndpointCounters {
  std::uint64_t packets_in = 0, bytes_in_ring = 0, bytes_on_wire = 0;  // receive ring: the host copy, the wire
  std::uint64_t usrsctp_inputs = 0, packets_merged = 0;                // PacketCoalescer
  std::uint64_t packets_out = 0, tx_ring_full = 0, tx_dropped = 0;     // transmit ring
  std::uint64_t association_writes = 0, association_clears = 0, streams_torn_down = 0;
  std::uint64_t not_from_peer = 0;  // without shared_ring: receive-ring packets of other senders, dropped
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
  // the session. Then as Endpoint::terminate.
  void terminate(std::uint16_t stream);

  bool association_written() const { return written_vtag_.has_value(); }
  bool socket_programmed() const { return socket_programmed_; }
  const CardEndpointCounters& counters() const { return counters_; }

 private:
  void on_notice(const SessionNotice& n);
  void create_streams();
  void end_stream(std::uint16_t stream);
  void program_association();
  void clear_association();
  void flush_out();

  Device& device_;
  Client& client_;
  NetPort& net_;
  CardEndpointConfig config_;
  std::deque<std::vector<std::uint8_t>> out_;  // usrsctp's packets waiting for a transmit slot
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
  bool socket_programmed_ = false;
  CardEndpointCounters counters_;
};

}  // namespace rnic::sctp
