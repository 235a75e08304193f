// SPDX-License-Identifier: Apache-2.0
// The driver's client of rnic-sim (protocol: driver/sim_protocol, rnic/sim_protocol/protocol.hpp). One
// SOCK_SEQPACKET connection, one request and one reply at a time; the host memory is the simulator's
// memfd mapped MAP_SHARED, so the kernel's DMA and the driver see the same bytes. The owner maps it
// read-write; an observer gets a read-only descriptor and maps it PROT_READ (the owner alone writes).
//
// Every wait is bounded (a stopped or hung simulator is Errc::kTimeout naming the request, never a
// hang): connect, send and each reply by `timeout`. A SYNC legitimately takes as long as the
// simulated card needs to drain what was injected, which has no wall-clock bound worth guessing;
// so SYNC waits in intervals of `timeout` and, after each one without a reply, reads the simulated
// clock with STATUS over a second connection: it keeps waiting while the clock advances (the
// simulator's own SYNC limit, 10 M cycles, ends it) and gives up after an interval in which it did
// not (stopped: about 2 x timeout). After a timeout the request stays unanswered; a later call
// discards its late reply if it has come (the simulator was only slow, or got SIGCONT) and fails at
// once with kTimeout if not.
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>

#include "backend.hpp"
#include "rnic/sim_protocol/protocol.hpp"

namespace rnic::detail {
namespace {

namespace proto = rnic::sim_protocol;
using proto::Op;
using proto::Status;

const char* op_name(Op op) {
  switch (op) {
    case Op::kHello:
      return "HELLO";
    case Op::kRead32:
      return "READ32";
    case Op::kWrite32:
      return "WRITE32";
    case Op::kAlloc:
      return "ALLOC";
    case Op::kFree:
      return "FREE";
    case Op::kInject:
      return "INJECT";
    case Op::kSync:
      return "SYNC";
    case Op::kStatus:
      return "STATUS";
    case Op::kPublish:
      return "PUBLISH";
    case Op::kGetState:
      return "GETSTATE";
    case Op::kNetSocket:
      return "NETSOCKET";
  }
  return "?";
}

std::string sys_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

class UniqueFd {
 public:
  UniqueFd() : fd_(-1) {}
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = o.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

class Mapping {
 public:
  Mapping() = default;
  ~Mapping() {
    if (p_ != nullptr) ::munmap(p_, n_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  void map(int fd, std::size_t n, bool writable) {
    void* p = ::mmap(nullptr, n, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) throw Error(Errc::kBackend, sys_error("rnic-sim: mmap of the host memory"));
    p_ = static_cast<std::uint8_t*>(p);
    n_ = n;
  }
  std::uint8_t* data() const { return p_; }

 private:
  std::uint8_t* p_ = nullptr;
  std::size_t n_ = 0;
};

struct Reply {
  Status status = Status::kOk;
  std::vector<std::uint8_t> payload;
  int fd = -1;  // HELLO only; the caller owns it
};

using Clock = std::chrono::steady_clock;

std::string ms_text(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

// One SOCK_SEQPACKET connection to rnic-sim: requests numbered by seq, replies in order. A request
// whose reply did not come in time stays `unanswered`: its reply, when it comes, precedes every later
// one and is discarded then.
struct Conn {
  UniqueFd fd{};
  std::uint32_t seq = 0;
  bool unanswered = false;
  std::uint32_t unanswered_seq = 0;
  Op unanswered_op = Op::kHello;
  Clock::time_point unanswered_since{};
};

// Waits until fd is ready for `events` or the deadline passes (false). EINTR is retried.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd, events, 0};
    // Round up, so a deadline less than a millisecond away is still waited for.
    const int r =
        ::poll(&p, 1, left.count() <= 0 ? 0 : static_cast<int>(std::min<std::int64_t>(left.count() + 1, 60'000)));
    if (r > 0) return true;  // ready, or an error/hang-up the next call reports
    if (r < 0 && errno != EINTR) throw Error(Errc::kBackend, sys_error("rnic-sim: poll"));
    if (r == 0 && Clock::now() >= deadline) return false;
  }
}

class SimBackend final : public Backend, public SimPort {
 public:
  SimBackend(const std::string& path, bool observer, std::chrono::milliseconds timeout)
      : path_(path), timeout_(timeout) {
    if (timeout_.count() <= 0) throw Error(Errc::kInvalidArgument, "sim:" + path + ": timeout must be > 0 ms");
    main_.fd = UniqueFd(connect_to(path, timeout_));
    proto::HelloReq req{proto::kVersion, 0, observer ? proto::kRoleObserver : proto::kRoleOwner,
                        static_cast<std::uint32_t>(::getpid()), 0};
    Reply r = call(Op::kHello, &req, sizeof req, true);
    UniqueFd memfd(r.fd);
    proto::HelloRep rep{};
    if (r.payload.size() == sizeof rep) std::memcpy(&rep, r.payload.data(), sizeof rep);
    if (r.status == Status::kOwned) {
      throw Error(Errc::kBusy, "sim:" + path + " is owned by pid " + std::to_string(rep.owner_pid));
    }
    if (r.status != Status::kOk) fail(Op::kHello, r.status);
    if (r.payload.size() != sizeof rep || memfd.get() < 0 || rep.mem_bytes == 0) {
      throw Error(Errc::kBackend, "rnic-sim HELLO: malformed reply from sim:" + path);
    }
    mem_base_ = rep.mem_base;
    mem_bytes_ = static_cast<std::size_t>(rep.mem_bytes);
    map_.map(memfd.get(), mem_bytes_, !observer);
  }

  std::string name() const override { return "sim"; }
  SimPort* sim() override { return this; }

  std::uint32_t read32(std::uint32_t offset) override {
    const proto::MmioReq req{offset, 0};
    const auto rep = call_ok<proto::MmioRep>(Op::kRead32, &req, sizeof req);
    return rep.value;
  }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    const proto::MmioReq req{offset, value};
    check(Op::kWrite32, call(Op::kWrite32, &req, sizeof req));
  }

  DmaRegion alloc(std::size_t bytes, std::size_t align) override {
    if (bytes == 0) throw Error(Errc::kInvalidArgument, "sim alloc: bytes must be > 0");
    if (align < 64 || (align & (align - 1)) != 0) {
      throw Error(Errc::kInvalidArgument, "sim alloc: align " + std::to_string(align) + " is not a power of two >= 64");
    }
    const proto::AllocReq req{bytes, align};
    const auto rep = call_ok<proto::AllocRep>(Op::kAlloc, &req, sizeof req);
    if (rep.device_addr < mem_base_ || rep.device_addr - mem_base_ > mem_bytes_ ||
        mem_bytes_ - (rep.device_addr - mem_base_) < bytes) {
      throw Error(Errc::kBackend, "rnic-sim ALLOC: address outside the host memory");
    }
    DmaRegion d;
    d.host = map_.data() + (rep.device_addr - mem_base_);
    d.device_addr = rep.device_addr;
    d.size = bytes;
    d.handle = rep.device_addr;
    return d;
  }
  void free(const DmaRegion& region) override {
    const proto::FreeReq req{region.device_addr};
    check(Op::kFree, call(Op::kFree, &req, sizeof req));
  }
  // The memory is shared with the simulator: ordering is all that is needed.
  void to_device(const DmaRegion&, std::size_t, std::size_t) override {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  void from_device(const DmaRegion&, std::size_t, std::size_t) override {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }

  void inject(std::uint32_t stream, std::uint16_t ssn, const std::vector<std::uint8_t>& seg) override {
    if (stream > 0xFFFF)
      throw Error(Errc::kInvalidArgument, "sim inject: stream " + std::to_string(stream) + " > 65535");
    if (seg.empty() || seg.size() > proto::kMaxPayload - sizeof(proto::InjectReq)) {
      throw Error(Errc::kInvalidArgument, "sim inject: segment of " + std::to_string(seg.size()) + " bytes");
    }
    std::vector<std::uint8_t> msg(sizeof(proto::InjectReq) + seg.size());
    const proto::InjectReq req{static_cast<std::uint16_t>(stream), ssn, static_cast<std::uint32_t>(seg.size())};
    std::memcpy(msg.data(), &req, sizeof req);
    std::memcpy(msg.data() + sizeof req, seg.data(), seg.size());
    // Each request is bounded by timeout_; a full ingress (the simulator answers kBusy) drains as its
    // clock runs, so it is retried for a while longer.
    const auto limit = std::max<std::chrono::milliseconds>(kInjectBusyLimit, timeout_);
    const auto deadline = Clock::now() + limit;
    for (;;) {
      const Reply r = call(Op::kInject, msg.data(), msg.size());
      if (r.status != Status::kBusy) return check(Op::kInject, r);
      if (Clock::now() > deadline) {
        throw Error(Errc::kTimeout,
                    "rnic-sim INJECT (sim:" + path_ + "): ingress queue still full after " + ms_text(limit));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  void sync() override {
    const proto::SyncReq req{0, 0};
    call_ok<proto::SyncRep>(Op::kSync, &req, sizeof req);
  }
  std::uint64_t cycles() override { return call_ok<proto::StatusRep>(Op::kStatus, nullptr, 0).cycles; }
  SimNetPortStats net_port_stats() override {
    const auto st = call_ok<proto::StatusRep>(Op::kStatus, nullptr, 0);
    return SimNetPortStats{static_cast<std::uint16_t>(st.udp_port), st.net_in, st.net_out, st.net_dropped,
                           st.net_empty};
  }
  void net_socket(std::uint32_t index, std::uint32_t ip, std::uint16_t port, bool valid) override {
    if (index >= hw::kNET_SOCKETS) {
      throw Error(Errc::kInvalidArgument,
                  "sim net_socket: index " + std::to_string(index) + " >= " + std::to_string(hw::kNET_SOCKETS));
    }
    const proto::NetSocketReq req{index, ip, port, static_cast<std::uint16_t>(valid ? 1 : 0)};
    check(Op::kNetSocket, call(Op::kNetSocket, &req, sizeof req));
  }
  void publish(const std::string& json) override {
    if (json.size() > proto::kMaxPayload) {
      throw Error(Errc::kInvalidArgument, "sim publish: document of " + std::to_string(json.size()) + " bytes");
    }
    check(Op::kPublish, call(Op::kPublish, json.data(), json.size()));
  }
  std::string published_state() override {
    const Reply r = call(Op::kGetState, nullptr, 0);
    check(Op::kGetState, r);
    return std::string(r.payload.begin(), r.payload.end());
  }

 private:
  static constexpr std::chrono::milliseconds kInjectBusyLimit{30'000};

  // A connect to a listener whose backlog is full (a stopped simulator stops accepting) waits at
  // most `timeout` (SO_SNDTIMEO bounds an AF_UNIX connect).
  static int connect_to(const std::string& path, std::chrono::milliseconds timeout) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr.sun_path) {
      throw Error(Errc::kNoDevice, "sim:" + path + ": socket path empty or too long");
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) throw Error(Errc::kBackend, sys_error("rnic-sim: socket"));
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) {
      throw Error(Errc::kBackend, sys_error("rnic-sim: setsockopt(SO_SNDTIMEO)"));
    }
    int r;
    do {
      r = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    } while (r != 0 && errno == EINTR);
    if (r != 0) {
      if (errno == EAGAIN || errno == EINPROGRESS || errno == ETIMEDOUT) {
        throw Error(Errc::kTimeout, "sim:" + path + ": rnic-sim did not accept the connection within " +
                                        ms_text(timeout) + " (stopped or hung?)");
      }
      throw Error(Errc::kNoDevice, "sim:" + path + ": no rnic-sim listens there (" + std::strerror(errno) + ")");
    }
    return fd.release();
  }

  [[noreturn]] void fail(Op op, Status st) const {
    const std::string what = std::string("rnic-sim ") + op_name(op) + ": " + proto::status_name(st);
    switch (st) {
      case Status::kNotOwner:
        throw Error(Errc::kState, what + " (opened as observer)");
      case Status::kNoMemory:
        throw Error(Errc::kExhausted, what);
      case Status::kNotAllocated:
        throw Error(Errc::kNotFound, what);
      case Status::kBadAddress:
      case Status::kBadArgument:
        throw Error(Errc::kInvalidArgument, what);
      case Status::kTimeout:
        throw Error(Errc::kTimeout, what + (op == Op::kSync ? " (the card was not quiet within the simulator's cycle "
                                                              "limit)"
                                                            : ""));
      case Status::kBusy:
        throw Error(Errc::kQueueFull, what);
      case Status::kNoNetwork:
        throw Error(Errc::kUnsupported, what + " (start rnic-sim with --udp-port)");
      default:
        throw Error(Errc::kBackend, what);
    }
  }
  void check(Op op, const Reply& r) const {
    if (r.status != Status::kOk) fail(op, r.status);
  }
  template <class T>
  T call_ok(Op op, const void* payload, std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    const Reply r = call(op, payload, n);
    check(op, r);
    if (r.payload.size() != sizeof(T)) {
      throw Error(Errc::kBackend,
                  std::string("rnic-sim ") + op_name(op) + ": reply of " + std::to_string(r.payload.size()) + " bytes");
    }
    T v;
    std::memcpy(&v, r.payload.data(), sizeof v);
    return v;
  }

  // Sends one request; the socket is never left blocking (a simulator that does not read would hang
  // a blocking send once its queue is full).
  static void send_request(Conn& c, const std::string& where, Op op, std::uint32_t seq, const void* payload,
                           std::size_t n, Clock::time_point deadline, std::chrono::milliseconds timeout) {
    const proto::Header h{proto::kMagic, static_cast<std::uint16_t>(op), 0, seq, static_cast<std::uint32_t>(n)};
    for (;;) {
      const ssize_t s = proto::send_message(c.fd.get(), h, payload, n);
      if (s >= 0) return;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) throw Error(Errc::kBackend, where + ": " + sys_error("send"));
      if (!wait_fd(c.fd.get(), POLLOUT, deadline)) {
        throw Error(Errc::kTimeout,
                    where + ": the simulator took no request for " + ms_text(timeout) + " (stopped or hung?)");
      }
    }
  }

  // The reply to request `seq`, or nullopt when none came by the deadline. The late reply of an
  // earlier unanswered request is discarded on the way.
  std::optional<Reply> receive(Conn& c, const std::string& where, Op op, std::uint32_t seq, bool want_fd,
                               Clock::time_point deadline) {
    rx_.resize(sizeof(proto::Header) + proto::kMaxPayload);
    for (;;) {
      if (!wait_fd(c.fd.get(), POLLIN, deadline)) return std::nullopt;
      iovec in{rx_.data(), rx_.size()};
      alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
      msghdr r{};
      r.msg_iov = &in;
      r.msg_iovlen = 1;
      r.msg_control = ctl;
      r.msg_controllen = sizeof ctl;
      const ssize_t s = ::recvmsg(c.fd.get(), &r, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
      if (s < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (s < 0) throw Error(Errc::kBackend, where + ": " + sys_error("receive"));
      Reply rep;
      for (cmsghdr* cm = CMSG_FIRSTHDR(&r); cm != nullptr; cm = CMSG_NXTHDR(&r, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof(int))) {
          int fd = -1;
          std::memcpy(&fd, CMSG_DATA(cm), sizeof fd);
          if (want_fd && rep.fd < 0) {
            rep.fd = fd;
          } else {
            ::close(fd);
          }
        }
      }
      UniqueFd guard(rep.fd);  // closed on a malformed or stale reply below
      if (s == 0) throw Error(Errc::kBackend, where + ": the simulator closed the connection");
      const auto got = static_cast<std::size_t>(s);
      proto::Header rh{};
      if (got < sizeof rh || (r.msg_flags & MSG_TRUNC) != 0) {
        throw Error(Errc::kBackend, where + ": malformed reply of " + std::to_string(got) + " bytes");
      }
      std::memcpy(&rh, rx_.data(), sizeof rh);
      if (c.unanswered && rh.seq == c.unanswered_seq && rh.seq != seq && rh.magic == proto::kMagic &&
          rh.op == static_cast<std::uint16_t>(c.unanswered_op)) {
        c.unanswered = false;  // the late reply of a request that timed out: nobody waits for it now
        continue;
      }
      if (rh.magic != proto::kMagic || rh.op != static_cast<std::uint16_t>(op) || rh.seq != seq ||
          rh.length != got - sizeof rh) {
        throw Error(Errc::kBackend, where + ": reply does not match the request");
      }
      rep.status = static_cast<Status>(rh.status);
      rep.payload.assign(rx_.begin() + sizeof rh, rx_.begin() + static_cast<std::ptrdiff_t>(got));
      rep.fd = guard.release();
      return rep;
    }
  }

  // One request and its reply on `c`, each bounded by timeout_ (a SYNC: while the clock advances).
  Reply exchange(Conn& c, Op op, const void* payload, std::size_t n, bool want_fd, bool progress) {
    const std::string where = std::string("rnic-sim ") + op_name(op) + " (sim:" + path_ + ")";
    if (c.unanswered) {
      // Replies come in order: while an earlier reply is missing, no later one can come. A look
      // without waiting (the simulator may have answered since); otherwise fail at once, so a
      // stopped simulator costs one timeout, not one per call (Device teardown makes many).
      if (receive(c, where, c.unanswered_op, c.unanswered_seq, false, Clock::now())) c.unanswered = false;
      if (c.unanswered) {
        const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - c.unanswered_since);
        throw Error(Errc::kTimeout, where + ": not sent: the simulator has not answered the earlier " +
                                        op_name(c.unanswered_op) + " for " + ms_text(since) + " (stopped or hung?)");
      }
    }
    const std::uint32_t seq = ++c.seq;
    const auto sent = Clock::now();
    send_request(c, where, op, seq, payload, n, sent + timeout_, timeout_);
    auto deadline = sent + timeout_;
    std::optional<std::uint64_t> last_cycles;
    for (;;) {
      if (auto r = receive(c, where, op, seq, want_fd, deadline)) return std::move(*r);
      std::string why;
      if (progress && clock_advanced(last_cycles, why)) {
        deadline = Clock::now() + timeout_;
        continue;
      }
      c.unanswered = true;
      c.unanswered_seq = seq;
      c.unanswered_op = op;
      c.unanswered_since = sent;
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - sent);
      throw Error(Errc::kTimeout, where + ": no reply after " + ms_text(waited) +
                                      (progress ? " and " + why : std::string()) +
                                      " (the simulator is stopped or hung)");
    }
  }

  // SYNC progress: the simulated cycle count, read with STATUS over a second (observer) connection
  // while the first one waits for its SYNC reply. True when it advanced since the last look (the
  // first look reads it twice, 20 ms apart); else `why` says what was seen.
  bool clock_advanced(std::optional<std::uint64_t>& last, std::string& why) {
    auto look = [&]() -> std::optional<std::uint64_t> {
      try {
        if (probe_.fd.get() < 0) {
          probe_ = Conn{};
          probe_.fd = UniqueFd(connect_to(path_, timeout_));
          const proto::HelloReq req{proto::kVersion, 0, proto::kRoleObserver, static_cast<std::uint32_t>(::getpid()),
                                    0};
          const Reply h = exchange(probe_, Op::kHello, &req, sizeof req, true, false);
          UniqueFd memfd(h.fd);  // not mapped: only STATUS is asked
          check(Op::kHello, h);
        }
        const Reply r = exchange(probe_, Op::kStatus, nullptr, 0, false, false);
        check(Op::kStatus, r);
        proto::StatusRep st{};
        if (r.payload.size() != sizeof st) throw Error(Errc::kBackend, "rnic-sim STATUS: malformed reply");
        std::memcpy(&st, r.payload.data(), sizeof st);
        return st.cycles;
      } catch (const Error& e) {
        probe_ = Conn{};
        why = std::string("the simulator did not answer STATUS on a second connection either: ") + e.what();
        return std::nullopt;
      }
    };
    auto now = look();
    if (!now) return false;
    if (!last) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      last = now;
      now = look();
      if (!now) return false;
    }
    const bool advanced = *now > *last;
    if (!advanced) why = "the simulated clock stopped at cycle " + std::to_string(*now);
    last = now;
    return advanced;
  }

  // One request, one reply on the main connection.
  Reply call(Op op, const void* payload, std::size_t n, bool want_fd = false) {
    std::lock_guard<std::mutex> lock(mu_);
    const bool progress = op == Op::kSync;
    struct CloseProbe {
      Conn& c;
      bool on;
      ~CloseProbe() {
        if (on) c = Conn{};
      }
    } close_probe{probe_, progress};  // the second connection lives for one SYNC only
    return exchange(main_, op, payload, n, want_fd, progress);
  }

  std::string path_;
  std::chrono::milliseconds timeout_;
  Conn main_;
  Conn probe_;  // SYNC progress (clock_advanced)
  Mapping map_;
  std::uint64_t mem_base_ = 0;
  std::size_t mem_bytes_ = 0;
  std::mutex mu_;
  std::vector<std::uint8_t> rx_;
};

}  // namespace

std::unique_ptr<Backend> make_sim_backend(const std::string& socket_path, bool observer,
                                          std::chrono::milliseconds timeout) {
  return std::make_unique<SimBackend>(socket_path, observer, timeout);
}

}  // namespace rnic::detail
