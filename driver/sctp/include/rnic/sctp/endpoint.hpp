// SPDX-License-Identifier: Apache-2.0
// RFC 5043 over usrsctp: one DDP-enabled SCTP endpoint with one association, in this process.
//
// usrsctp runs with no threads of its own (usrsctp_init_nothreads), over AF_CONN: every SCTP packet
// the stack emits goes to the WireOut callback, and every packet from the wire comes back through
// input(). Nothing happens unless the owner calls input(), pump() or advance_timers(): the caller
// decides when packets move, which lets tests delay, reorder or capture them. The usrsctp library is
// initialised by the first Endpoint and finished by the last one.
//
// Not thread-safe: one thread drives all Endpoints of a process.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/sctp/reorder.hpp"
#include "rnic/sctp/session.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "rnic/wire/segmentation.hpp"

struct socket;  // usrsctp

namespace rnic::sctp {

// Header sizes for the maximum DDP segment size (RFC 5043 9): the largest DDP segment whose DATA
// chunk fits one IPv4 packet of the path MTU.
inline constexpr std::size_t kIpv4HeaderSize = 20;
inline constexpr std::size_t kSctpCommonHeaderSize = 12;
inline constexpr std::size_t kDataChunkHeaderSize = 16;
inline constexpr std::size_t kMinMaxSegmentSize = 516;  // RFC 5043 9
inline constexpr std::uint16_t kDefaultStreams = 8;
// set_path_mtu's range: room for a 516-byte segment's DATA chunk in IPv4 (20 + 12 + 16 + 2 + 516), up to
// the card's longest SCTP packet in IPv4.
inline constexpr std::uint32_t kMinPathMtu = 576;
inline constexpr std::uint32_t kMaxPathMtu = hw::kNET_MAX_PACKET_BYTES + kIpv4HeaderSize;

struct EndpointConfig {
  std::uint16_t port = 5001;                // this endpoint's SCTP port, nonzero
  std::uint16_t streams = kDefaultStreams;  // inbound = outbound SCTP streams requested (RFC 5043 8)
  // Sent in INIT / INIT-ACK (5.1, 11.1). nullopt sends none: a plain SCTP endpoint, for tests.
  std::optional<std::uint32_t> adaptation_indication = wire::kDdpAdaptationIndication;
  std::size_t max_pending_initiates = 4;  // Initiates awaiting a ULP decision (6.4), >= 1
  std::size_t max_queued_chunks = 65536;  // chunks accepted but not yet taken by usrsctp
  // RFC 5043 10: never more than 32767 DATA chunks handed to SCTP and not yet acknowledged. Counted
  // over the association (SCTP_STATUS unacked + pending), so it bounds every stream. 1..32767.
  std::uint32_t max_chunks_in_flight = 32767;
  // The card's side of RFC 5043 offload (docs/network.md): the card verifies the CRC32c of every packet
  // it hands the host and writes it into every packet it sends, so usrsctp neither checks nor computes
  // it (usrsctp_enable_crc32c_offload). usrsctp's switch is process-wide: every Endpoint of a process
  // must ask for the same (else kInvalidArgument).
  bool crc32c_offload = false;
  // The path MTU of the association (0: usrsctp's default, 1280 over AF_CONN), kMinPathMtu..kMaxPathMtu:
  // set on the socket before the association exists, because usrsctp fixes an association's
  // fragmentation point when it creates it and afterwards only lowers it (so set_path_mtu cannot raise
  // it). The segment size follows (RFC 5043 9: max_segment_size() = MTU - 50).
  std::uint32_t path_mtu = 0;
};

enum class AssociationState {
  kClosed,      // neither listen() nor connect() yet
  kListening,   // passive, no association yet
  kConnecting,  // INIT sent / handshake running
  kReady,       // up, and both sides indicated DDP: DDP may be carried
  kRefused,     // up, but an Adaptation Layer Indication was missing or not DDP: aborted (11.1)
  kLost,        // the association went down (abort, shutdown, or could not start)
};
const char* association_state_name(AssociationState s) noexcept;

// What the session layer tells the ULP.
enum class NoticeKind {
  kInitiate,    // the peer asks for a session: answer with accept() / reject() / terminate()
  kAccepted,    // our Initiate was accepted: the session is established
  kRejected,    // our Initiate was rejected (6.3)
  kTerminated,  // the peer terminated the session (6.2, or 6.4 for a pending Initiate)
  kViolation,   // the peer broke the legal sequences (6.1) or sent an implausible DDP-SSN (10):
                // we answered Terminate; the session is over
  kOverLimit,   // an Initiate beyond max_pending_initiates: answered Terminate (6.4)
};
const char* notice_kind_name(NoticeKind k) noexcept;

struct SessionNotice {
  std::uint16_t stream = 0;
  NoticeKind kind = NoticeKind::kInitiate;
  std::vector<std::uint8_t> private_data;  // Initiate / Accept / Reject only
  std::string detail;                      // kViolation: what was wrong
};

// One DDP segment of a message whose payload the card reads (docs/transmit.md): what was handed to
// usrsctp for it.
struct DescribedSegment {
  std::uint16_t ddp_ssn = 0;  // RFC 5043 5.2.2: with the SCTP stream, names the segment's DATA chunk
  wire::SegmentPlan plan;     // its DDP header and payload (RFC 5041 5.2, 5.3)
};
struct DescribedMessage {
  std::uint32_t msn = 0;  // untagged: the MSN the Data Source gave it (RFC 5041 5.3); tagged: 0
  std::vector<DescribedSegment> segments;
};

struct EndpointCounters {
  std::uint64_t segments_sent = 0;
  std::uint64_t segments_delivered = 0;
  std::uint64_t controls_sent = 0;
  std::uint64_t controls_received = 0;
  std::uint64_t out_of_order = 0;        // chunks that arrived ahead of their DDP-SSN's turn
  std::uint64_t stale = 0;               // chunks of no session, dropped
  std::uint64_t violations = 0;          // sessions we terminated for a protocol violation
  std::uint64_t over_limit = 0;          // Initiates answered Terminate (6.4)
  std::uint64_t malformed = 0;           // chunks too short or on a stream beyond the count
  std::uint64_t other_ppid = 0;          // DATA whose PPID is not DDP's (RFC 5043 5.2: 16, 17), dropped
  std::uint64_t other_ppid_bytes = 0;    // their user data
  std::uint64_t not_ddp_dropped = 0;     // data on an association that is not (yet) DDP-enabled
  std::uint64_t described_segments = 0;  // segments handed to usrsctp as descriptor chunks
  std::uint64_t aborts_sent = 0;         // ABORTs handed to usrsctp (11.1 refusal, a second association)
  std::uint64_t abort_failures = 0;      // a second association's ABORT that usrsctp refused (not thrown)
};

class Endpoint {
 public:
  using WireOut = std::function<void(wire::ConstBytes sctp_packet)>;
  // One DDP segment, in DDP-SSN order, of an established session.
  using SegmentSink = std::function<void(std::uint16_t stream, std::uint16_t ddp_ssn, wire::ConstBytes ddp_segment)>;
  using SessionHandler = std::function<void(const SessionNotice&)>;

  // Throws rnic::Error kInvalidArgument for a bad config or an empty wire_out, kBackend if usrsctp
  // cannot create the socket.
  Endpoint(EndpointConfig config, WireOut wire_out);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // The AF_CONN address of this endpoint (what the peer's packets are addressed to).
  void* conn_handle() { return this; }
  void set_segment_sink(SegmentSink s) { sink_ = std::move(s); }
  void set_session_handler(SessionHandler h) { handler_ = std::move(h); }

  void listen();                          // passive
  void connect(std::uint16_t peer_port);  // active: sends INIT
  // One SCTP packet from the wire, addressed to this endpoint.
  void input(wire::ConstBytes sctp_packet);
  // Reads everything usrsctp has for us (notifications, data), runs the session machines and the
  // sinks, and hands queued chunks to usrsctp. Returns true if anything happened.
  bool pump();
  // usrsctp's timers (retransmission, delayed SACK) for all endpoints of the process.
  static void advance_timers(std::uint32_t elapsed_ms);

  AssociationState state() const { return state_; }
  const std::string& refusal_reason() const { return refusal_; }
  // kLost: how the association ended, as usrsctp reported it (the peer's SHUTDOWN, a SHUTDOWN
  // COMPLETE, an ABORT or the peer no longer answering, our abort()); empty before.
  const std::string& loss_reason() const { return loss_; }
  std::optional<std::uint32_t> peer_adaptation_indication() const { return peer_indication_; }
  // Usable DDP streams (same-numbered pairs): min of the negotiated inbound and outbound counts.
  std::uint16_t ddp_streams() const { return ddp_streams_; }
  // RFC 5043 9: the largest DDP segment that needs neither IP nor SCTP fragmentation, >= 516.
  std::size_t max_segment_size() const { return max_segment_; }
  std::uint32_t path_mtu() const { return path_mtu_; }
  // The path MTU is pinned when the association comes up (usrsctp's discovery is off: a segment sized
  // for the path always fits one DATA chunk). This lowers it, for an operator who knows the path
  // shrank: later messages are segmented at the new max_segment_size(); DATA already handed to usrsctp
  // at the old size may then be fragmented by usrsctp, which a CardEndpoint with sends in flight
  // answers by aborting the association (docs/transmit.md). kState unless kReady, kInvalidArgument
  // below kMinPathMtu or above the association's MTU (usrsctp never raises an association's
  // fragmentation point: EndpointConfig::path_mtu chooses it before the association exists).
  void set_path_mtu(std::uint32_t mtu);
  // What the card's association table needs (NetAssociation), learnt from usrsctp's own packets, never
  // from a peer's claim: the verification tag packets to us carry (RFC 9260 8.5) and the peer's SCTP
  // port. Active side: the Initiate Tag of our INIT. Passive side: the tag of the COOKIE ECHO usrsctp
  // answered with a COOKIE ACK (it checked the tag against its signed cookie), from the port usrsctp
  // names as this association's peer: never a second association's, which the Endpoint aborts. Set at
  // COMM_UP; a restart of the association (a new COOKIE ECHO answered) changes it. nullopt until known.
  std::optional<std::uint32_t> local_verification_tag() const { return local_vtag_; }
  std::optional<std::uint16_t> peer_port() const { return peer_port_; }

  // Stream Session Control (5.2.3, 6). Private data <= 512 bytes. Throw rnic::Error: kUnsupported if
  // the association is not DDP-enabled, kInvalidArgument for a bad stream or private data, kState if
  // the session table refuses the call in the current state.
  void initiate(std::uint16_t stream, wire::ConstBytes private_data = {});
  void accept(std::uint16_t stream, wire::ConstBytes private_data = {});
  void reject(std::uint16_t stream, wire::ConstBytes private_data = {});
  void terminate(std::uint16_t stream);
  SessionState session_state(std::uint16_t stream) const;
  std::size_t pending_initiates() const { return pending_initiates_; }

  // One DDP segment as one unordered DATA chunk, PPID 16, next DDP-SSN. kInvalidArgument if larger
  // than max_segment_size() (9) or empty; kState outside an established session; kQueueFull if
  // max_queued_chunks is reached.
  void send_segment(std::uint16_t stream, wire::ConstBytes ddp_segment);
  // One ULP message as DDP segments at MULPDU = max_segment_size(). Returns the segment count.
  // The whole message is checked and segmented before the first segment is queued.
  std::uint64_t send_tagged(std::uint16_t stream, std::uint32_t stag, std::uint64_t tagged_offset,
                            std::uint8_t rsvd_ulp, wire::ConstBytes message);
  std::uint64_t send_untagged(std::uint16_t stream, std::uint32_t qn, std::uint64_t rsvd_ulp, wire::ConstBytes message);

  // The same messages with the payload left in registered memory (docs/transmit.md): each segment goes
  // to usrsctp at its real length as a descriptor chunk naming local_stag and local_to + its message
  // offset (wire::descriptor_user_data; under 16 bytes, zero-length included, in the short form), for
  // the card to read: no payload byte passes through the host. Errors as send_tagged / send_untagged.
  // `queued` (if set) sees the message once its chunks are queued and before usrsctp has any of them: the
  // output callback must know the descriptors before usrsctp emits them.
  using DescribedQueued = std::function<void(const DescribedMessage&)>;
  DescribedMessage send_tagged_described(std::uint16_t stream, std::uint32_t stag, std::uint64_t tagged_offset,
                                         std::uint8_t rsvd_ulp, std::uint32_t length, std::uint32_t local_stag,
                                         std::uint64_t local_to, const DescribedQueued& queued = {});
  DescribedMessage send_untagged_described(std::uint16_t stream, std::uint32_t qn, std::uint64_t rsvd_ulp,
                                           std::uint32_t length, std::uint32_t local_stag, std::uint64_t local_to,
                                           const DescribedQueued& queued = {});

  // Conformance testing only: one unordered DATA chunk with any PPID and user data, bypassing the
  // session machine and the DDP-SSN numbering (to play a peer that breaks RFC 5043 6). Needs kReady.
  void send_raw(std::uint16_t stream, std::uint32_t ppid, wire::ConstBytes user_data);

  const EndpointCounters& counters() const { return counters_; }
  std::size_t queued_chunks() const { return outq_.size(); }
  // True when nothing is queued here and usrsctp holds no DATA the peer has not acknowledged
  // (SCTP_GET_SNDBUF_USE: bytes queued or sent and unacknowledged). False unless kReady.
  bool all_acknowledged() const;
  // Whether usrsctp still holds the association in any state: after the peer's SHUTDOWN (state kLost)
  // it answers with SHUTDOWN ACK and keeps the association, retransmitting, until SHUTDOWN COMPLETE
  // (RFC 9260 9.2). An owner that goes away earlier leaves the peer's shutdown unfinished.
  bool association_held() const;
  // Graceful SCTP shutdown (RFC 4960 9.2, SCTP_EOF): SHUTDOWN once all data is acknowledged; the state
  // becomes kLost at SHUTDOWN COMPLETE. kState unless kReady with nothing queued here.
  void shutdown();
  // ABORT (RFC 9260 9.1): for an owner that gives up on the association, so that the peer learns at
  // once instead of waiting out its own timeout. usrsctp sends it at once; the state becomes kLost.
  // Nothing happens unless the association is up (kReady). kBackend if usrsctp refuses.
  void abort();

  // Internal: called by the usrsctp output hook.
  void emit(wire::ConstBytes packet);

 private:
  struct Stream {
    SessionState state = SessionState::kIdle;
    std::uint16_t next_out_ssn = 0;
    SsnReorderBuffer in;
    std::optional<wire::DataSource> source;  // MSNs per QN; fresh per session
  };
  struct OutChunk {
    std::uint16_t stream;
    std::uint32_t ppid;
    std::vector<std::uint8_t> data;
    std::size_t zeros = 0;  // zero bytes after data in the user data (a descriptor chunk's)
  };

  void configure_socket();
  void require_ready(const char* what) const;
  Stream& stream_for(std::uint16_t stream, const char* what);
  void local_control(std::uint16_t stream, wire::SessionFunction f, wire::ConstBytes private_data, SessionEvent event,
                     const char* what);
  void queue_control(std::uint16_t stream, Stream& s, wire::SessionFunction f, wire::ConstBytes private_data);
  void queue_chunk(std::uint16_t stream, std::uint32_t ppid, std::vector<std::uint8_t> data);
  void end_session(Stream& s);
  std::uint64_t send_message(std::uint16_t stream, const wire::MessageSegmenter& m, wire::ConstBytes message);
  void send_described(std::uint16_t stream, const wire::MessageSegmenter& m, std::uint32_t local_stag,
                      std::uint64_t local_to, DescribedMessage& out, const DescribedQueued& queued);
  Stream& sending_stream(std::uint16_t stream, const char* what);
  bool flush();
  bool read_socket();
  void on_notification(const std::uint8_t* data, std::size_t len);
  void on_data(std::uint16_t sid, std::uint32_t ppid, std::vector<std::uint8_t> data);
  void drain(std::uint16_t stream);
  void violation(std::uint16_t stream, Stream& s, std::string detail);
  void notify(SessionNotice n);
  void decide_association();
  std::string refusal_reason_now() const;
  void lose_association();
  void compute_limits();
  void pin_path_mtu(std::uint32_t mtu);
  int send_abort(std::uint32_t assoc_id);
  void adopt_verification_tag();
  std::uint64_t sctp_held_bound();

  EndpointConfig config_;
  WireOut wire_out_;
  SegmentSink sink_;
  SessionHandler handler_;
  struct socket* sock_ = nullptr;
  AssociationState state_ = AssociationState::kClosed;
  std::string refusal_;
  std::string loss_;
  bool comm_up_ = false;
  std::uint32_t assoc_id_ = 0;
  std::uint16_t in_streams_ = 0, out_streams_ = 0, ddp_streams_ = 0;
  std::optional<std::uint32_t> peer_indication_;
  std::size_t max_segment_ = 0;
  std::uint32_t path_mtu_ = 0;
  std::array<std::uint8_t, 128> primary_{};  // SCTP_STATUS's primary path address (a sockaddr_storage)
  std::vector<Stream> streams_;
  std::deque<OutChunk> outq_;
  std::size_t pending_initiates_ = 0;
  std::vector<std::uint8_t> partial_;    // a message read in pieces (no MSG_EOR yet)
  std::vector<std::uint8_t> zeros_buf_;  // a descriptor chunk's user data is built here: zeros but the record
  std::vector<std::uint8_t> rx_buf_;     // usrsctp_recvv's buffer, allocated once, reused by every pump()
  // RFC 5043 10 bookkeeping (see flush()): chunks handed to usrsctp since it last held no DATA, and
  // the smallest of them (bytes of user data).
  std::uint64_t handed_since_empty_ = 0;
  std::size_t smallest_since_empty_ = 0;
  EndpointCounters counters_;
  // local_verification_tag(): the packet input() is handing usrsctp, the tag of our last INIT.
  wire::ConstBytes in_input_;
  std::optional<std::uint32_t> init_tag_;
  std::map<std::uint16_t, std::uint32_t> cookie_tags_;  // COOKIE ECHO tag by source port, not yet adopted
  std::optional<std::uint32_t> local_vtag_;
  std::optional<std::uint16_t> peer_port_;
};

}  // namespace rnic::sctp
