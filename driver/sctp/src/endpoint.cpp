// SPDX-License-Identifier: Apache-2.0
#include "rnic/sctp/endpoint.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <usrsctp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "rnic/driver/rnic.hpp"
#include "rnic/wire/gather.hpp"

namespace rnic::sctp {
namespace {

using wire::ConstBytes;

constexpr std::size_t kReceiveBufferSize = 65536;  // one usrsctp_recvv; larger messages arrive in pieces

// usrsctp is process-global: the first Endpoint initialises it, the last one finishes it. The
// registry lets the output hook refuse a packet for an Endpoint that is being destroyed.
struct Runtime {
  std::size_t users = 0;
  bool initialised = false;
  bool crc32c_offload = false;  // usrsctp's switch, the same for every Endpoint of the process
  std::set<Endpoint*> endpoints;
};
Runtime& runtime() {
  static Runtime r;
  return r;
}

int conn_output(void* addr, void* buffer, std::size_t length, std::uint8_t /*tos*/, std::uint8_t /*set_df*/) {
  auto* ep = static_cast<Endpoint*>(addr);
  if (runtime().endpoints.count(ep) == 0) return 0;  // going away: the packet is lost, as on a wire
  try {
    ep->emit(ConstBytes(static_cast<const std::uint8_t*>(buffer), length));
  } catch (...) {  // nothing may unwind through usrsctp (C): the packet is lost, as on a wire
  }
  return 0;
}

void runtime_acquire(Endpoint* ep, bool crc32c_offload) {
  Runtime& r = runtime();
  if (r.users != 0 && r.crc32c_offload != crc32c_offload)
    throw rnic::Error(Errc::kInvalidArgument,
                      fmt::format("sctp: EndpointConfig.crc32c_offload {} but this process's Endpoints use {}: "
                                  "usrsctp's CRC32c offload is process-wide",
                                  crc32c_offload, r.crc32c_offload));
  if (!r.initialised) {
    usrsctp_init_nothreads(0, conn_output, nullptr);  // no UDP encapsulation port, no debug output
    usrsctp_sysctl_set_sctp_ecn_enable(0);
    r.initialised = true;
  }
  if (r.users == 0) {
    if (crc32c_offload) {
      usrsctp_enable_crc32c_offload();
    } else {
      usrsctp_disable_crc32c_offload();
    }
    r.crc32c_offload = crc32c_offload;
  }
  ++r.users;
  r.endpoints.insert(ep);
  usrsctp_register_address(ep);
}

void runtime_release(Endpoint* ep) {
  Runtime& r = runtime();
  usrsctp_deregister_address(ep);
  r.endpoints.erase(ep);
  if (--r.users != 0) return;
  // Closed sockets whose associations still linger keep usrsctp busy: give its timers a few rounds,
  // and if it still refuses, stay initialised (the next Endpoint reuses it).
  for (int i = 0; i < 50; ++i) {
    if (usrsctp_finish() == 0) {
      r.initialised = false;
      return;
    }
    usrsctp_handle_timers(100);
  }
}

[[noreturn]] void fail(Errc code, const std::string& what) { throw rnic::Error(code, "sctp: " + what); }

template <typename T>
void set_opt(struct socket* s, int level, int name, const T& value, const char* what) {
  if (usrsctp_setsockopt(s, level, name, &value, static_cast<socklen_t>(sizeof value)) != 0)
    fail(Errc::kBackend, fmt::format("setsockopt {}: {}", what, std::strerror(errno)));
}

sockaddr_conn conn_addr(void* handle, std::uint16_t port) {
  sockaddr_conn a{};
  a.sconn_family = AF_CONN;
  a.sconn_port = htons(port);
  a.sconn_addr = handle;
  return a;
}

SessionEvent recv_event(wire::SessionFunction f) {
  switch (f) {
    case wire::SessionFunction::kInitiate:
      return SessionEvent::kRecvInitiate;
    case wire::SessionFunction::kAccept:
      return SessionEvent::kRecvAccept;
    case wire::SessionFunction::kReject:
      return SessionEvent::kRecvReject;
    case wire::SessionFunction::kTerminate:
      break;
  }
  return SessionEvent::kRecvTerminate;
}

}  // namespace

const char* association_state_name(AssociationState s) noexcept {
  switch (s) {
    case AssociationState::kClosed:
      return "Closed";
    case AssociationState::kListening:
      return "Listening";
    case AssociationState::kConnecting:
      return "Connecting";
    case AssociationState::kReady:
      return "Ready";
    case AssociationState::kRefused:
      return "Refused";
    case AssociationState::kLost:
      return "Lost";
  }
  return "?";
}

const char* notice_kind_name(NoticeKind k) noexcept {
  switch (k) {
    case NoticeKind::kInitiate:
      return "Initiate";
    case NoticeKind::kAccepted:
      return "Accepted";
    case NoticeKind::kRejected:
      return "Rejected";
    case NoticeKind::kTerminated:
      return "Terminated";
    case NoticeKind::kViolation:
      return "Violation";
    case NoticeKind::kOverLimit:
      return "OverLimit";
  }
  return "?";
}

Endpoint::Endpoint(EndpointConfig config, WireOut wire_out)
    : config_(config), wire_out_(std::move(wire_out)), rx_buf_(kReceiveBufferSize) {
  if (!wire_out_) fail(Errc::kInvalidArgument, "Endpoint: wire_out is empty");
  if (config_.port == 0) fail(Errc::kInvalidArgument, "EndpointConfig.port must be nonzero");
  if (config_.streams == 0) fail(Errc::kInvalidArgument, "EndpointConfig.streams must be >= 1");
  if (config_.max_pending_initiates == 0)
    fail(Errc::kInvalidArgument, "EndpointConfig.max_pending_initiates must be >= 1 (RFC 5043 6.4)");
  if (config_.max_queued_chunks == 0) fail(Errc::kInvalidArgument, "EndpointConfig.max_queued_chunks must be >= 1");
  if (config_.max_chunks_in_flight == 0 || config_.max_chunks_in_flight > 32767)
    fail(Errc::kInvalidArgument, "EndpointConfig.max_chunks_in_flight must be 1..32767 (RFC 5043 10)");
  if (config_.path_mtu != 0 && (config_.path_mtu < kMinPathMtu || config_.path_mtu > kMaxPathMtu))
    fail(Errc::kInvalidArgument,
         fmt::format("EndpointConfig.path_mtu {} must be 0 or {}..{}", config_.path_mtu, kMinPathMtu, kMaxPathMtu));
  runtime_acquire(this, config_.crc32c_offload);
  sock_ = usrsctp_socket(AF_CONN, SOCK_SEQPACKET, IPPROTO_SCTP, nullptr, nullptr, 0, nullptr);
  if (sock_ == nullptr) {
    const int e = errno;
    runtime_release(this);
    fail(Errc::kBackend, fmt::format("usrsctp_socket: {}", std::strerror(e)));
  }
  try {
    configure_socket();
  } catch (...) {
    usrsctp_close(sock_);
    runtime_release(this);
    throw;
  }
}

Endpoint::~Endpoint() {
  // Abort rather than shut down: nobody will pump the graceful shutdown to its end.
  linger l{1, 0};
  usrsctp_setsockopt(sock_, SOL_SOCKET, SO_LINGER, &l, static_cast<socklen_t>(sizeof l));
  runtime().endpoints.erase(this);  // the ABORT is not delivered anywhere
  usrsctp_close(sock_);
  runtime_release(this);
}

void Endpoint::configure_socket() {
  if (usrsctp_set_non_blocking(sock_, 1) != 0) fail(Errc::kBackend, "usrsctp_set_non_blocking failed");
  sctp_initmsg init{};
  init.sinit_num_ostreams = config_.streams;  // RFC 5043 8: equal inbound and outbound counts
  init.sinit_max_instreams = config_.streams;
  set_opt(sock_, IPPROTO_SCTP, SCTP_INITMSG, init, "SCTP_INITMSG");
  if (config_.adaptation_indication) {
    sctp_setadaptation ad{};
    ad.ssb_adaptation_ind = *config_.adaptation_indication;
    set_opt(sock_, IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, ad, "SCTP_ADAPTATION_LAYER");
  }
  const int on = 1;
  set_opt(sock_, IPPROTO_SCTP, SCTP_NODELAY, on, "SCTP_NODELAY");  // 11.2: untagged not delayed
  set_opt(sock_, IPPROTO_SCTP, SCTP_RECVRCVINFO, on, "SCTP_RECVRCVINFO");
  for (std::uint16_t type : {std::uint16_t{SCTP_ASSOC_CHANGE}, std::uint16_t{SCTP_ADAPTATION_INDICATION},
                             std::uint16_t{SCTP_SHUTDOWN_EVENT}}) {
    sctp_event ev{};
    ev.se_assoc_id = SCTP_ALL_ASSOC;
    ev.se_type = type;
    ev.se_on = 1;
    set_opt(sock_, IPPROTO_SCTP, SCTP_EVENT, ev, "SCTP_EVENT");
  }
  if (config_.path_mtu != 0) {  // the associations' MTU, fixed when usrsctp creates them (endpoint.hpp)
    sctp_paddrparams p{};
    p.spp_assoc_id = SCTP_FUTURE_ASSOC;
    p.spp_flags = SPP_PMTUD_DISABLE;
    p.spp_pathmtu = config_.path_mtu;
    set_opt(sock_, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, p, "SCTP_PEER_ADDR_PARAMS");
  }
  sockaddr_conn local = conn_addr(this, config_.port);
  if (usrsctp_bind(sock_, reinterpret_cast<sockaddr*>(&local), static_cast<socklen_t>(sizeof local)) != 0)
    fail(Errc::kBackend, fmt::format("usrsctp_bind port {}: {}", config_.port, std::strerror(errno)));
}

void Endpoint::listen() {
  if (state_ != AssociationState::kClosed)
    fail(Errc::kState, fmt::format("listen: association is {}", association_state_name(state_)));
  if (usrsctp_listen(sock_, 1) != 0) fail(Errc::kBackend, fmt::format("usrsctp_listen: {}", std::strerror(errno)));
  state_ = AssociationState::kListening;
}

void Endpoint::connect(std::uint16_t peer_port) {
  if (peer_port == 0) fail(Errc::kInvalidArgument, "connect: peer_port must be nonzero");
  if (state_ != AssociationState::kClosed)
    fail(Errc::kState, fmt::format("connect: association is {}", association_state_name(state_)));
  // AF_CONN: the destination handle is our own (the output hook names the sender), the port the peer's.
  sockaddr_conn peer = conn_addr(this, peer_port);
  if (usrsctp_connect(sock_, reinterpret_cast<sockaddr*>(&peer), static_cast<socklen_t>(sizeof peer)) != 0 &&
      errno != EINPROGRESS)
    fail(Errc::kBackend, fmt::format("usrsctp_connect port {}: {}", peer_port, std::strerror(errno)));
  state_ = AssociationState::kConnecting;
}

void Endpoint::input(ConstBytes packet) {
  if (packet.data == nullptr || packet.size == 0) fail(Errc::kInvalidArgument, "input: empty packet");
  in_input_ = packet;  // usrsctp answers a COOKIE ECHO from inside usrsctp_conninput (emit, below)
  usrsctp_conninput(this, packet.data, packet.size, 0);
  in_input_ = ConstBytes{};
}

// Every packet usrsctp sends. Besides handing it to the wire, notes what local_verification_tag()
// reports: the Initiate Tag of our INIT (RFC 9260 3.3.2: the tag the peer's packets will carry), and
// for a COOKIE ACK (type 11, RFC 9260 3.3.12, first in its packet) sent in answer to the packet being
// input, that packet's tag, keyed by its source port: usrsctp accepted its COOKIE ECHO, so the tag is the
// one its cookie holds. Which of these is ours is decided at COMM_UP / RESTART of our association
// (adopt_verification_tag): a listening socket also answers a second association's COOKIE ECHO before
// the Endpoint aborts it.
void Endpoint::emit(ConstBytes packet) {
  constexpr std::uint8_t kInit = 1, kCookieAck = 11;
  constexpr std::size_t kMaxCookieTags = 64;  // a peer can start many associations: keep a bounded few
  if (packet.size >= kSctpCommonHeaderSize + 4) {
    const std::uint8_t type = packet.data[kSctpCommonHeaderSize];
    if (type == kInit && packet.size >= kSctpCommonHeaderSize + 8) {
      init_tag_ = wire::load_be32(packet.data + kSctpCommonHeaderSize + 4);
    } else if (type == kCookieAck && in_input_.size >= kSctpCommonHeaderSize) {
      if (cookie_tags_.size() >= kMaxCookieTags) cookie_tags_.clear();
      cookie_tags_[wire::load_be16(in_input_.data)] = wire::load_be32(in_input_.data + 4);
    }
  }
  wire_out_(packet);
}

// COMM_UP or RESTART of the association this Endpoint keeps: its peer's SCTP port from usrsctp, and the
// tag packets to us carry: our INIT's (active side) or the one usrsctp took from that port's COOKIE
// ECHO (passive side; a restart brings a new one).
void Endpoint::adopt_verification_tag() {
  sockaddr* addrs = nullptr;
  const int n = usrsctp_getpaddrs(sock_, assoc_id_, &addrs);
  std::optional<std::uint16_t> port;
  if (n > 0 && addrs != nullptr && addrs[0].sa_family == AF_CONN) {
    sockaddr_conn c{};
    std::memcpy(&c, addrs, sizeof c);
    port = ntohs(c.sconn_port);
  }
  if (addrs != nullptr) usrsctp_freepaddrs(addrs);
  if (!port) return;  // usrsctp no longer has it: nothing to adopt
  peer_port_ = port;
  if (const auto it = cookie_tags_.find(*port); it != cookie_tags_.end()) {
    local_vtag_ = it->second;
  } else if (init_tag_) {
    local_vtag_ = init_tag_;
  }
  cookie_tags_.clear();  // the others belong to associations this Endpoint does not keep
}

void Endpoint::advance_timers(std::uint32_t elapsed_ms) {
  if (runtime().initialised) usrsctp_handle_timers(elapsed_ms);
}

bool Endpoint::pump() {
  bool any = read_socket();
  decide_association();
  if (state_ == AssociationState::kReady) {
    for (std::uint16_t i = 0; i < ddp_streams_; ++i) drain(i);
  }
  any = flush() || any;
  return any;
}

bool Endpoint::read_socket() {
  bool any = false;
  std::vector<std::uint8_t>& buf = rx_buf_;  // one buffer for the endpoint's life: nothing allocated per pump
  for (;;) {
    sctp_rcvinfo rcv{};
    socklen_t infolen = static_cast<socklen_t>(sizeof rcv);
    unsigned int infotype = 0;
    int flags = 0;
    sockaddr_conn from{};
    socklen_t fromlen = static_cast<socklen_t>(sizeof from);
    const ssize_t n = usrsctp_recvv(sock_, buf.data(), buf.size(), reinterpret_cast<sockaddr*>(&from), &fromlen, &rcv,
                                    &infolen, &infotype, &flags);
    if (n < 0) {
      if (errno == EWOULDBLOCK || errno == EAGAIN || errno == ENOTCONN) break;
      fail(Errc::kBackend, fmt::format("usrsctp_recvv: {}", std::strerror(errno)));
    }
    if (n == 0 && (flags & MSG_NOTIFICATION) == 0 && (flags & MSG_EOR) == 0) break;
    any = true;
    partial_.insert(partial_.end(), buf.begin(), buf.begin() + n);
    if ((flags & MSG_EOR) == 0) continue;  // more of this message follows
    std::vector<std::uint8_t> msg;
    msg.swap(partial_);
    if ((flags & MSG_NOTIFICATION) != 0) {
      on_notification(msg.data(), msg.size());
    } else if (infotype == SCTP_RECVV_RCVINFO) {
      on_data(rcv.rcv_sid, ntohl(rcv.rcv_ppid), std::move(msg));
    } else {
      ++counters_.malformed;
    }
  }
  return any;
}

void Endpoint::on_notification(const std::uint8_t* data, std::size_t len) {
  sctp_notification n{};
  std::memcpy(&n, data, std::min(len, sizeof n));
  switch (n.sn_header.sn_type) {
    case SCTP_ASSOC_CHANGE: {
      const auto& ac = n.sn_assoc_change;
      if (ac.sac_state == SCTP_COMM_UP || ac.sac_state == SCTP_RESTART) {
        if (comm_up_ && ac.sac_assoc_id != assoc_id_) {  // one association per endpoint
          // Counted, not thrown: this runs inside read_socket() for a stranger's association; a throw
          // would fail the owner's pump() for its working association and it could do nothing about it.
          if (send_abort(ac.sac_assoc_id) != 0) ++counters_.abort_failures;
          return;
        }
        comm_up_ = true;
        assoc_id_ = ac.sac_assoc_id;
        adopt_verification_tag();
        in_streams_ = ac.sac_inbound_streams;
        out_streams_ = ac.sac_outbound_streams;
      } else if (ac.sac_assoc_id == assoc_id_ || !comm_up_) {
        if (loss_.empty()) {
          switch (ac.sac_state) {
            case SCTP_SHUTDOWN_COMP:
              loss_ = "shut down (SHUTDOWN COMPLETE)";
              break;
            case SCTP_CANT_STR_ASSOC:
              loss_ = "could not be set up (the peer did not answer)";
              break;
            default:
              loss_ = "lost (an ABORT from the peer, or it stopped answering: COMM_LOST)";
          }
        }
        lose_association();
      }
      break;
    }
    case SCTP_ADAPTATION_INDICATION:
      peer_indication_ = n.sn_adaptation_event.sai_adaptation_ind;
      break;
    case SCTP_SHUTDOWN_EVENT:
      if (loss_.empty()) loss_ = "shut down by the peer (SHUTDOWN)";
      lose_association();
      break;
    default:
      break;
  }
}

// The association went down (abort, shutdown). What SCTP delivered before the event (read earlier in
// the same read_socket()) still goes through the session machines first, in DDP-SSN order: the peer's
// last segments and its Terminate often arrive right before its SHUTDOWN.
void Endpoint::lose_association() {
  if (state_ == AssociationState::kRefused) return;
  // Up and down in one read, undecided: a peer without the DDP indication ABORTs at once (11.1). Its
  // refusal is the reason, not a lost association; there is nothing left to abort.
  if (comm_up_ && (state_ == AssociationState::kConnecting || state_ == AssociationState::kListening)) {
    refusal_ = refusal_reason_now();
    if (!refusal_.empty()) {
      state_ = AssociationState::kRefused;
      return;
    }
  }
  if (state_ == AssociationState::kReady) {
    for (std::uint16_t i = 0; i < ddp_streams_; ++i) drain(i);
  }
  state_ = AssociationState::kLost;
}

// RFC 5043 11.1: after INIT / INIT-ACK, DDP is carried only if both sides indicated DDP. usrsctp queues
// the adaptation notification right after COMM_UP, so both have been read when this runs.
std::string Endpoint::refusal_reason_now() const {
  std::string refusal;
  if (!config_.adaptation_indication || !wire::indicates_ddp(*config_.adaptation_indication)) {
    refusal = "this endpoint does not indicate the DDP adaptation layer (RFC 5043 11.1)";
  } else if (!peer_indication_) {
    refusal = "peer sent no Adaptation Layer Indication: DDP must not be performed (RFC 5043 11.1)";
  } else if (!wire::indicates_ddp(*peer_indication_)) {
    refusal = fmt::format("peer's Adaptation Layer Indication is 0x{:08x}, not DDP 0x{:08x} (RFC 5043 11.1)",
                          *peer_indication_, wire::kDdpAdaptationIndication);
  } else if (std::min(in_streams_, out_streams_) == 0) {
    refusal = "association has no stream pairs";
  }
  return refusal;
}

void Endpoint::decide_association() {
  if (!comm_up_ || (state_ != AssociationState::kConnecting && state_ != AssociationState::kListening)) return;
  refusal_ = refusal_reason_now();
  if (!refusal_.empty()) {
    state_ = AssociationState::kRefused;
    // 7.1: terminate an association with a different indication. Thrown (kBackend) when usrsctp refuses:
    // the association is ours and stays up without the ABORT, which the owner must hear of. The state is
    // already kRefused, so it is thrown once and every DDP call keeps failing with kUnsupported.
    if (const int e = send_abort(assoc_id_); e != 0)
      fail(Errc::kBackend,
           fmt::format("ABORT of the refused association (RFC 5043 11.1): usrsctp_sendv: {}", std::strerror(e)));
    return;
  }
  ddp_streams_ = std::min(in_streams_, out_streams_);
  compute_limits();
  pin_path_mtu(path_mtu_);
  streams_.assign(ddp_streams_, Stream{});
  state_ = AssociationState::kReady;
}

// SCTP_ABORT on one association. Returns 0, or the errno of usrsctp_sendv.
int Endpoint::send_abort(std::uint32_t assoc_id) {
  sctp_sndinfo si{};
  si.snd_flags = SCTP_ABORT;
  si.snd_assoc_id = assoc_id;
  const std::uint8_t none = 0;  // usrsctp_sendv refuses a null buffer (EFAULT) even for 0 bytes
  if (usrsctp_sendv(sock_, &none, 0, nullptr, 0, &si, static_cast<socklen_t>(sizeof si), SCTP_SENDV_SNDINFO, 0) < 0)
    return errno;
  ++counters_.aborts_sent;
  return 0;
}

// RFC 5043 9: path MTU minus IPv4, SCTP common, DATA chunk headers and the DDP-SSN, no larger than the
// stack's own fragmentation point (so SCTP never fragments), and at least 516.
static_assert(sizeof(sockaddr_storage) == 128, "Endpoint::primary_ holds a sockaddr_storage");

void Endpoint::compute_limits() {
  sctp_status st{};
  socklen_t len = static_cast<socklen_t>(sizeof st);
  st.sstat_assoc_id = assoc_id_;
  if (usrsctp_getsockopt(sock_, IPPROTO_SCTP, SCTP_STATUS, &st, &len) != 0)
    fail(Errc::kBackend, fmt::format("getsockopt SCTP_STATUS: {}", std::strerror(errno)));
  path_mtu_ = st.sstat_primary.spinfo_mtu;
  std::memcpy(primary_.data(), &st.sstat_primary.spinfo_address, primary_.size());
  std::size_t user_data = 0;
  const std::size_t headers = kIpv4HeaderSize + kSctpCommonHeaderSize + kDataChunkHeaderSize;
  if (path_mtu_ > headers) user_data = path_mtu_ - headers;
  if (st.sstat_fragmentation_point != 0) user_data = std::min<std::size_t>(user_data, st.sstat_fragmentation_point);
  const std::size_t segment = user_data > wire::kDdpSsnSize ? user_data - wire::kDdpSsnSize : 0;
  max_segment_ = std::max(segment, kMinMaxSegmentSize);
}

// The path MTU pinned (SPP_PMTUD_DISABLE on every path of the association): usrsctp's discovery never
// changes it under the segments already sized for it, so a DDP segment always fits one DATA chunk
// (RFC 5043 9; the card's gather needs whole descriptor chunks, docs/transmit.md).
void Endpoint::pin_path_mtu(std::uint32_t mtu) {
  sctp_paddrparams p{};
  p.spp_assoc_id = assoc_id_;
  std::memcpy(&p.spp_address, primary_.data(), primary_.size());  // the association's one path (AF_CONN)
  p.spp_flags = SPP_PMTUD_DISABLE;
  p.spp_pathmtu = mtu;
  if (usrsctp_setsockopt(sock_, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &p, static_cast<socklen_t>(sizeof p)) != 0)
    fail(Errc::kBackend, fmt::format("setsockopt SCTP_PEER_ADDR_PARAMS (path MTU {}): {}", mtu, std::strerror(errno)));
}

void Endpoint::set_path_mtu(std::uint32_t mtu) {
  require_ready("set_path_mtu");
  if (mtu < kMinPathMtu || mtu > path_mtu_)
    fail(Errc::kInvalidArgument,
         fmt::format("set_path_mtu: {} outside {}..{} (RFC 5043 9: MULPDU >= 516; usrsctp never raises an "
                     "association's fragmentation point: EndpointConfig::path_mtu sets it before)",
                     mtu, kMinPathMtu, path_mtu_));
  pin_path_mtu(mtu);
  compute_limits();
  for (Stream& s : streams_) {
    if (s.source) s.source->set_mulpdu(max_segment_);  // RFC 5041 5.1: the most recent MULPDU
  }
}

void Endpoint::require_ready(const char* what) const {
  if (state_ == AssociationState::kReady) return;
  if (state_ == AssociationState::kRefused)
    fail(Errc::kUnsupported, fmt::format("{}: association carries no DDP: {}", what, refusal_));
  fail(Errc::kState, fmt::format("{}: association is {}, not Ready", what, association_state_name(state_)));
}

Endpoint::Stream& Endpoint::stream_for(std::uint16_t stream, const char* what) {
  require_ready(what);
  if (stream >= ddp_streams_)
    fail(Errc::kInvalidArgument,
         fmt::format("{}: stream {} >= the association's {} DDP streams", what, stream, ddp_streams_));
  return streams_[stream];
}

SessionState Endpoint::session_state(std::uint16_t stream) const {
  if (stream >= streams_.size())
    fail(Errc::kInvalidArgument, fmt::format("session_state: stream {} >= {} DDP streams", stream, streams_.size()));
  return streams_[stream].state;
}

void Endpoint::initiate(std::uint16_t stream, ConstBytes pd) {
  local_control(stream, wire::SessionFunction::kInitiate, pd, SessionEvent::kSendInitiate, "initiate");
}
void Endpoint::accept(std::uint16_t stream, ConstBytes pd) {
  local_control(stream, wire::SessionFunction::kAccept, pd, SessionEvent::kSendAccept, "accept");
}
void Endpoint::reject(std::uint16_t stream, ConstBytes pd) {
  local_control(stream, wire::SessionFunction::kReject, pd, SessionEvent::kSendReject, "reject");
}
void Endpoint::terminate(std::uint16_t stream) {
  local_control(stream, wire::SessionFunction::kTerminate, {}, SessionEvent::kSendTerminate, "terminate");
}

void Endpoint::local_control(std::uint16_t stream, wire::SessionFunction f, ConstBytes pd, SessionEvent event,
                             const char* what) {
  Stream& s = stream_for(stream, what);
  if (pd.size > wire::kMaxPrivateData)
    fail(Errc::kInvalidArgument, fmt::format("{}: private_data is {} bytes, more than {} (RFC 5043 5.2.3)", what,
                                             pd.size, wire::kMaxPrivateData));
  if (pd.size != 0 && pd.data == nullptr) fail(Errc::kInvalidArgument, fmt::format("{}: private_data is null", what));
  const Transition& t = session_transition(s.state, event);
  if (t.action != SessionAction::kSend)
    fail(Errc::kState, fmt::format("{}: not legal on stream {} in session state {} (RFC 5043 6)", what, stream,
                                   session_state_name(s.state)));
  if (outq_.size() >= config_.max_queued_chunks)
    fail(Errc::kQueueFull, fmt::format("{}: {} chunks already queued", what, outq_.size()));
  const SessionState before = s.state;
  queue_control(stream, s, f, pd);
  if (before == SessionState::kInitiateReceived) --pending_initiates_;
  if (t.next == SessionState::kIdle) {
    end_session(s);
  } else {
    s.state = t.next;
    if (before == SessionState::kIdle) s.source.emplace(max_segment_);  // a new session: MSNs from 1
  }
  flush();
}

void Endpoint::queue_control(std::uint16_t stream, Stream& s, wire::SessionFunction f, ConstBytes pd) {
  wire::SessionControl m{s.next_out_ssn, f, pd.to_vector()};
  auto enc = wire::encode_session_control(m);
  if (!enc.ok()) fail(Errc::kInvalidArgument, "session control: " + enc.error().message());
  s.next_out_ssn = static_cast<std::uint16_t>(s.next_out_ssn + 1);
  ++counters_.controls_sent;
  queue_chunk(stream, wire::kPpidDdpSessionControl, std::move(enc).value());
}

void Endpoint::queue_chunk(std::uint16_t stream, std::uint32_t ppid, std::vector<std::uint8_t> data) {
  outq_.push_back(OutChunk{stream, ppid, std::move(data)});
}

void Endpoint::end_session(Stream& s) {
  s.state = SessionState::kIdle;
  s.next_out_ssn = 0;  // 6.1: the next session numbers from 0
  s.in.reset();        // chunks of the ended session are never carried over (6)
  s.source.reset();
}

void Endpoint::send_segment(std::uint16_t stream, ConstBytes seg) {
  Stream& s = stream_for(stream, "send_segment");
  if (seg.size == 0 || seg.data == nullptr) fail(Errc::kInvalidArgument, "send_segment: ddp_segment is empty");
  if (seg.size > max_segment_)
    fail(Errc::kInvalidArgument, fmt::format("send_segment: ddp_segment is {} bytes, more than the maximum {} "
                                             "(RFC 5043 9)",
                                             seg.size, max_segment_));
  if (session_transition(s.state, SessionEvent::kSendSegment).action != SessionAction::kSend)
    fail(Errc::kState, fmt::format("send_segment: stream {} session is {}, not Established (RFC 5043 6.2, 6.6)", stream,
                                   session_state_name(s.state)));
  if (outq_.size() >= config_.max_queued_chunks)
    fail(Errc::kQueueFull, fmt::format("send_segment: {} chunks already queued", outq_.size()));
  queue_chunk(stream, wire::kPpidDdpSegment, wire::encode_segment_chunk(s.next_out_ssn, seg));
  s.next_out_ssn = static_cast<std::uint16_t>(s.next_out_ssn + 1);
  ++counters_.segments_sent;
  flush();
}

std::uint64_t Endpoint::send_message(std::uint16_t stream, const wire::MessageSegmenter& m, ConstBytes message) {
  Stream& s = streams_[stream];
  if (outq_.size() + m.segment_count() > config_.max_queued_chunks)
    fail(Errc::kQueueFull, fmt::format("send: {} segments do not fit beside {} queued chunks (max {})",
                                       m.segment_count(), outq_.size(), config_.max_queued_chunks));
  std::vector<std::vector<std::uint8_t>> chunks;
  chunks.reserve(static_cast<std::size_t>(m.segment_count()));
  for (std::uint64_t i = 0; i < m.segment_count(); ++i) {
    auto seg = wire::encode_planned_segment(m.segment(i), message);
    if (!seg.ok()) fail(Errc::kInvalidArgument, "send: " + seg.error().message());
    chunks.push_back(wire::encode_segment_chunk(static_cast<std::uint16_t>(s.next_out_ssn + i), ConstBytes(*seg)));
  }
  for (auto& c : chunks) {
    queue_chunk(stream, wire::kPpidDdpSegment, std::move(c));
    s.next_out_ssn = static_cast<std::uint16_t>(s.next_out_ssn + 1);
    ++counters_.segments_sent;
  }
  flush();
  return m.segment_count();
}

std::uint64_t Endpoint::send_tagged(std::uint16_t stream, std::uint32_t stag, std::uint64_t to, std::uint8_t rsvd_ulp,
                                    ConstBytes message) {
  Stream& s = sending_stream(stream, "send_tagged");
  if (message.size != 0 && message.data == nullptr) fail(Errc::kInvalidArgument, "send_tagged: message is null");
  auto m = s.source->send_tagged(stag, to, rsvd_ulp, message.size);
  if (!m.ok()) fail(Errc::kInvalidArgument, "send_tagged: " + m.error().message());
  return send_message(stream, *m, message);
}

std::uint64_t Endpoint::send_untagged(std::uint16_t stream, std::uint32_t qn, std::uint64_t rsvd_ulp,
                                      ConstBytes message) {
  Stream& s = sending_stream(stream, "send_untagged");
  if (message.size != 0 && message.data == nullptr) fail(Errc::kInvalidArgument, "send_untagged: message is null");
  const std::uint32_t msn = s.source->next_msn(qn);
  auto m = s.source->send_untagged(qn, rsvd_ulp, message.size);
  if (!m.ok()) fail(Errc::kInvalidArgument, "send_untagged: " + m.error().message());
  try {
    return send_message(stream, *m, message);
  } catch (...) {
    s.source->set_next_msn(qn, msn);  // a refused message consumes no MSN
    throw;
  }
}

Endpoint::Stream& Endpoint::sending_stream(std::uint16_t stream, const char* what) {
  Stream& s = stream_for(stream, what);
  if (session_transition(s.state, SessionEvent::kSendSegment).action != SessionAction::kSend)
    fail(Errc::kState,
         fmt::format("{}: stream {} session is {}, not Established", what, stream, session_state_name(s.state)));
  return s;
}

void Endpoint::send_described(std::uint16_t stream, const wire::MessageSegmenter& m, std::uint32_t local_stag,
                              std::uint64_t local_to, DescribedMessage& out, const DescribedQueued& queued) {
  Stream& s = streams_[stream];
  if (local_to > UINT64_MAX - m.message_length())
    fail(Errc::kInvalidArgument, fmt::format("send: local_to {:#x} + {} bytes wraps", local_to, m.message_length()));
  if (outq_.size() + m.segment_count() > config_.max_queued_chunks)
    fail(Errc::kQueueFull, fmt::format("send: {} segments do not fit beside {} queued chunks (max {})",
                                       m.segment_count(), outq_.size(), config_.max_queued_chunks));
  std::vector<DescribedSegment>& segs = out.segments;
  std::vector<std::vector<std::uint8_t>> chunks;
  std::vector<std::size_t> zeros;
  for (std::uint64_t i = 0; i < m.segment_count(); ++i) {
    const wire::SegmentPlan plan = m.segment(i);
    DescribedSegment d{static_cast<std::uint16_t>(s.next_out_ssn + i), plan};
    auto data = wire::descriptor_record(plan, d.ddp_ssn, local_stag, local_to + plan.message_offset);
    if (!data.ok()) fail(Errc::kInvalidArgument, "send: " + data.error().message());
    chunks.push_back(std::move(data).value());
    zeros.push_back(wire::descriptor_zeros(plan));
    segs.push_back(std::move(d));
  }
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    outq_.push_back(OutChunk{stream, wire::kPpidDdpSegment, std::move(chunks[i]), zeros[i]});
    s.next_out_ssn = static_cast<std::uint16_t>(s.next_out_ssn + 1);
    ++counters_.segments_sent;
    ++counters_.described_segments;
  }
  if (queued) queued(out);
  flush();
}

DescribedMessage Endpoint::send_tagged_described(std::uint16_t stream, std::uint32_t stag, std::uint64_t to,
                                                 std::uint8_t rsvd_ulp, std::uint32_t length, std::uint32_t local_stag,
                                                 std::uint64_t local_to, const DescribedQueued& queued) {
  Stream& s = sending_stream(stream, "send_tagged");
  auto m = s.source->send_tagged(stag, to, rsvd_ulp, length);
  if (!m.ok()) fail(Errc::kInvalidArgument, "send_tagged: " + m.error().message());
  DescribedMessage out;
  send_described(stream, *m, local_stag, local_to, out, queued);
  return out;
}

DescribedMessage Endpoint::send_untagged_described(std::uint16_t stream, std::uint32_t qn, std::uint64_t rsvd_ulp,
                                                   std::uint32_t length, std::uint32_t local_stag,
                                                   std::uint64_t local_to, const DescribedQueued& queued) {
  Stream& s = sending_stream(stream, "send_untagged");
  const std::uint32_t msn = s.source->next_msn(qn);
  auto m = s.source->send_untagged(qn, rsvd_ulp, length);
  if (!m.ok()) fail(Errc::kInvalidArgument, "send_untagged: " + m.error().message());
  DescribedMessage out;
  out.msn = msn;
  try {
    send_described(stream, *m, local_stag, local_to, out, queued);
    return out;
  } catch (...) {
    s.source->set_next_msn(qn, msn);  // a refused message consumes no MSN
    throw;
  }
}

void Endpoint::send_raw(std::uint16_t stream, std::uint32_t ppid, ConstBytes data) {
  require_ready("send_raw");
  if (stream >= ddp_streams_) fail(Errc::kInvalidArgument, fmt::format("send_raw: stream {} out of range", stream));
  if (data.size == 0 || data.data == nullptr) fail(Errc::kInvalidArgument, "send_raw: user_data is empty");
  queue_chunk(stream, ppid, data.to_vector());
  flush();
}

// usrsctp's read-only SCTP_GET_SNDBUF_USE (netinet/sctp.h, sctp_uio.h; not in the installed usrsctp.h):
// ss_total_sndbuf is the association's total_output_queue_size, bytes queued or sent and unacknowledged.
namespace {
constexpr int kSctpGetSndbufUse = 0x00001101;
struct SctpSockstat {
  sctp_assoc_t ss_assoc_id;
  std::uint32_t ss_total_sndbuf;
  std::uint32_t ss_total_recv_buf;
};
}  // namespace

bool Endpoint::all_acknowledged() const {
  if (state_ != AssociationState::kReady || !outq_.empty()) return false;
  SctpSockstat ss{};
  socklen_t len = static_cast<socklen_t>(sizeof ss);
  ss.ss_assoc_id = assoc_id_;
  if (usrsctp_getsockopt(sock_, IPPROTO_SCTP, kSctpGetSndbufUse, &ss, &len) != 0)
    fail(Errc::kBackend, fmt::format("getsockopt SCTP_GET_SNDBUF_USE: {}", std::strerror(errno)));
  return ss.ss_total_sndbuf == 0;
}

bool Endpoint::association_held() const {
  if (!comm_up_) return false;
  sctp_status st{};
  socklen_t len = static_cast<socklen_t>(sizeof st);
  st.sstat_assoc_id = assoc_id_;
  return usrsctp_getsockopt(sock_, IPPROTO_SCTP, SCTP_STATUS, &st, &len) == 0;
}

void Endpoint::abort() {
  if (state_ != AssociationState::kReady) return;
  if (const int e = send_abort(assoc_id_); e != 0) fail(Errc::kBackend, fmt::format("abort: {}", std::strerror(e)));
  loss_ = "aborted here (ABORT sent)";
  lose_association();
}

void Endpoint::shutdown() {
  if (state_ != AssociationState::kReady)
    fail(Errc::kState, fmt::format("shutdown: association is {}, not Ready", association_state_name(state_)));
  if (!outq_.empty()) fail(Errc::kState, fmt::format("shutdown: {} chunks still queued", outq_.size()));
  sctp_sndinfo si{};
  si.snd_flags = SCTP_EOF;
  si.snd_assoc_id = assoc_id_;
  const std::uint8_t none = 0;  // usrsctp_sendv refuses a null buffer (EFAULT) even for 0 bytes
  if (usrsctp_sendv(sock_, &none, 0, nullptr, 0, &si, static_cast<socklen_t>(sizeof si), SCTP_SENDV_SNDINFO, 0) < 0)
    fail(Errc::kBackend, fmt::format("shutdown (SCTP_EOF): {}", std::strerror(errno)));
}

// An upper bound on the DATA chunks handed to usrsctp and not yet acknowledged (RFC 5043 10). usrsctp
// exposes no such count: SCTP_STATUS sstat_unackdata is only its sent queue (transmitted, not yet
// acknowledged), and sstat_penddata counts *received* chunks awaiting reassembly or delivery to us
// (cnt_on_reasm_queue + cnt_on_all_streams, sctp_usrreq.c), nothing of ours. Chunks still in its stream
// and send queues (not yet transmitted: congestion window) are in neither. What usrsctp does expose is
// SCTP_GET_SNDBUF_USE's total_output_queue_size: the user-data bytes of every chunk it holds, queued or
// sent and unacknowledged (plus 16 bytes per chunk already built), back to 0 once all are acknowledged.
// So every chunk it holds was handed since that sum was last 0, and each is at least the smallest of
// those: held <= min(handed since empty, bytes / smallest). Exact at 0; for DDP segments the byte
// bound is a few hundred at most (256 KiB of send buffer); for a stream of tiny chunks the count bound
// can make flush() wait for usrsctp to drain. Never an undercount.
std::uint64_t Endpoint::sctp_held_bound() {
  SctpSockstat ss{};
  socklen_t len = static_cast<socklen_t>(sizeof ss);
  ss.ss_assoc_id = assoc_id_;
  if (usrsctp_getsockopt(sock_, IPPROTO_SCTP, kSctpGetSndbufUse, &ss, &len) != 0)
    fail(Errc::kBackend, fmt::format("getsockopt SCTP_GET_SNDBUF_USE: {}", std::strerror(errno)));
  if (ss.ss_total_sndbuf == 0) {
    handed_since_empty_ = 0;
    smallest_since_empty_ = 0;
    return 0;
  }
  if (handed_since_empty_ == 0) return 0;  // cannot be: every chunk it holds went through here
  return std::min<std::uint64_t>(handed_since_empty_, ss.ss_total_sndbuf / smallest_since_empty_);
}

// Hands queued chunks to usrsctp, each as one unordered DATA chunk (RFC 5043 10) with its PPID.
bool Endpoint::flush() {
  if (state_ != AssociationState::kReady) return false;
  bool any = false;
  if (outq_.empty()) return false;
  // RFC 5043 10: chunks handed to SCTP and not yet acknowledged count against the limit; the rest wait
  // in outq_ until SACKs come back.
  const std::uint64_t held = sctp_held_bound();
  std::uint64_t budget = held >= config_.max_chunks_in_flight ? 0 : config_.max_chunks_in_flight - held;
  while (!outq_.empty() && budget > 0) {
    const OutChunk& c = outq_.front();
    sctp_sndinfo si{};
    si.snd_sid = c.stream;
    si.snd_flags = SCTP_UNORDERED;
    si.snd_ppid = htonl(c.ppid);
    si.snd_assoc_id = assoc_id_;
    const std::uint8_t* user = c.data.data();
    const std::size_t size = c.data.size() + c.zeros;
    if (c.zeros != 0) {  // the record in front of zeros kept for it: no allocation, no zeroing per chunk
      if (zeros_buf_.size() < size) zeros_buf_.resize(size, 0);
      std::memcpy(zeros_buf_.data(), c.data.data(), c.data.size());
      user = zeros_buf_.data();
    }
    const ssize_t n =
        usrsctp_sendv(sock_, user, size, nullptr, 0, &si, static_cast<socklen_t>(sizeof si), SCTP_SENDV_SNDINFO, 0);
    if (c.zeros != 0) std::memset(zeros_buf_.data(), 0, c.data.size());
    if (n < 0) {
      if (errno == EWOULDBLOCK || errno == EAGAIN) break;  // send buffer full: retry on the next pump
      fail(Errc::kBackend, fmt::format("usrsctp_sendv: {}", std::strerror(errno)));
    }
    ++handed_since_empty_;
    if (smallest_since_empty_ == 0 || size < smallest_since_empty_) smallest_since_empty_ = size;
    outq_.pop_front();
    --budget;
    any = true;
  }
  return any;
}

void Endpoint::on_data(std::uint16_t sid, std::uint32_t ppid, std::vector<std::uint8_t> data) {
  // COMM_UP, the peer's indication and its first DATA can all come in one read_socket() (the DATA in
  // the same input batch as the COOKIE ECHO, or bundled with it): decide 11.1 before the data, which
  // usrsctp only delivers after both notifications.
  decide_association();
  if (state_ != AssociationState::kReady) {  // 11.1: nothing is DDP on an association that is not
    ++counters_.not_ddp_dropped;
    return;
  }
  if (ppid != wire::kPpidDdpSegment && ppid != wire::kPpidDdpSessionControl) {
    ++counters_.other_ppid;
    counters_.other_ppid_bytes += data.size();
    return;
  }
  if (sid >= ddp_streams_ || data.size() < wire::kDdpSsnSize) {
    ++counters_.malformed;
    return;
  }
  Stream& s = streams_[sid];
  const std::uint16_t ssn = wire::load_be16(data.data());
  // With no session, only DDP-SSN 0 can start one; anything else is left over from an ended session.
  if (s.state == SessionState::kIdle && ssn != 0) {
    ++counters_.stale;
    return;
  }
  const bool early = ssn != s.in.next_ssn();
  switch (s.in.insert(ssn, ReceivedChunk{ppid, std::move(data)})) {
    case SsnReorderBuffer::Insert::kAccepted:
      if (early) ++counters_.out_of_order;
      break;
    case SsnReorderBuffer::Insert::kDuplicate:
      violation(sid, s, fmt::format("DDP-SSN {} received twice (RFC 5043 10)", ssn));
      break;
    case SsnReorderBuffer::Insert::kImplausible:
      violation(sid, s,
                fmt::format("DDP-SSN {} is not within {} of the expected {} (RFC 5043 10)", ssn,
                            SsnReorderBuffer::kMaxInFlight, s.in.next_ssn()));
      break;
  }
}

// Considers the chunks of one stream in DDP-SSN order (6.1) through the session table.
void Endpoint::drain(std::uint16_t stream) {
  Stream& s = streams_[stream];
  while (s.in.ready()) {
    const ReceivedChunk& front = s.in.front();
    const std::uint16_t ssn = s.in.next_ssn();
    SessionEvent ev = SessionEvent::kRecvSegment;
    wire::SessionControl ctl;
    if (front.ppid == wire::kPpidDdpSessionControl) {
      auto dec = wire::decode_session_control(ConstBytes(front.data));
      if (!dec.ok()) {
        s.in.pop();
        violation(stream, s, "bad session control message: " + dec.error().message());
        continue;
      }
      ctl = std::move(dec).value();
      ev = recv_event(ctl.function);
    }
    const Transition t = session_transition(s.state, ev);
    if (t.action == SessionAction::kHold) return;
    ReceivedChunk c = s.in.pop();
    if (ev != SessionEvent::kRecvSegment) ++counters_.controls_received;
    switch (t.action) {
      case SessionAction::kDeliver:
        ++counters_.segments_delivered;
        if (sink_) sink_(stream, ssn, ConstBytes(c.data).subview(wire::kDdpSsnSize));
        break;
      case SessionAction::kReport: {
        const SessionState before = s.state;
        SessionNotice n{stream, NoticeKind::kTerminated, {}, {}};
        if (ev == SessionEvent::kRecvAccept) n.kind = NoticeKind::kAccepted;
        if (ev == SessionEvent::kRecvReject) n.kind = NoticeKind::kRejected;
        n.private_data = std::move(ctl.private_data);
        if (before == SessionState::kInitiateReceived) --pending_initiates_;
        if (t.next == SessionState::kIdle) {
          end_session(s);
        } else {
          s.state = t.next;
        }
        notify(std::move(n));
        break;
      }
      case SessionAction::kAdmit:
        if (pending_initiates_ >= config_.max_pending_initiates) {  // 6.4: answer Terminate
          ++counters_.over_limit;
          queue_control(stream, s, wire::SessionFunction::kTerminate, {});
          end_session(s);
          notify(SessionNotice{stream, NoticeKind::kOverLimit, std::move(ctl.private_data), {}});
        } else {
          ++pending_initiates_;
          s.state = t.next;
          s.source.emplace(max_segment_);
          notify(SessionNotice{stream, NoticeKind::kInitiate, std::move(ctl.private_data), {}});
        }
        break;
      case SessionAction::kViolation:
        violation(stream, s,
                  fmt::format("{} at DDP-SSN {} in session state {} fits no legal sequence (RFC 5043 6.1)",
                              session_event_name(ev), ssn, session_state_name(s.state)));
        break;
      case SessionAction::kStale:
        ++counters_.stale;
        break;
      case SessionAction::kSend:
      case SessionAction::kRefuse:
      case SessionAction::kHold:
        break;  // not remote actions
    }
  }
}

// The session is terminated: Terminate to the peer, state cleared, the ULP told.
void Endpoint::violation(std::uint16_t stream, Stream& s, std::string detail) {
  ++counters_.violations;
  if (s.state == SessionState::kInitiateReceived) --pending_initiates_;
  queue_control(stream, s, wire::SessionFunction::kTerminate, {});
  end_session(s);
  notify(SessionNotice{stream, NoticeKind::kViolation, {}, std::move(detail)});
}

void Endpoint::notify(SessionNotice n) {
  if (handler_) handler_(n);
}

}  // namespace rnic::sctp
