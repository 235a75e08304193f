// The driver's client of rnic-sim (protocol: sim/include/rnic/sim/protocol.hpp). One SOCK_SEQPACKET
// connection, one request and one reply at a time; the host memory is the simulator's memfd mapped
// MAP_SHARED, so the kernel's DMA and the driver see the same bytes. The owner maps it read-write; an
// observer gets a read-only descriptor and maps it PROT_READ (the owner alone writes).
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <type_traits>

#include "backend.hpp"
#include "rnic/sim/protocol.hpp"

namespace rnic::detail {
namespace {

namespace proto = rnic::sim::proto;
using proto::Op;
using proto::Status;

const char* op_name(Op op) {
  switch (op) {
    case Op::kHello: return "HELLO";
    case Op::kRead32: return "READ32";
    case Op::kWrite32: return "WRITE32";
    case Op::kAlloc: return "ALLOC";
    case Op::kFree: return "FREE";
    case Op::kInject: return "INJECT";
    case Op::kSync: return "SYNC";
    case Op::kStatus: return "STATUS";
    case Op::kPublish: return "PUBLISH";
    case Op::kGetState: return "GETSTATE";
  }
  return "?";
}

std::string sys_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
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

class SimBackend final : public Backend {
 public:
  SimBackend(const std::string& path, bool observer) : path_(path), fd_(connect_to(path)) {
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
    if (stream > 0xFFFF) throw Error(Errc::kInvalidArgument, "sim inject: stream " + std::to_string(stream) + " > 65535");
    if (seg.empty() || seg.size() > proto::kMaxPayload - sizeof(proto::InjectReq)) {
      throw Error(Errc::kInvalidArgument, "sim inject: segment of " + std::to_string(seg.size()) + " bytes");
    }
    std::vector<std::uint8_t> msg(sizeof(proto::InjectReq) + seg.size());
    const proto::InjectReq req{static_cast<std::uint16_t>(stream), ssn, static_cast<std::uint32_t>(seg.size())};
    std::memcpy(msg.data(), &req, sizeof req);
    std::memcpy(msg.data() + sizeof req, seg.data(), seg.size());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      const Reply r = call(Op::kInject, msg.data(), msg.size());
      if (r.status != Status::kBusy) return check(Op::kInject, r);
      if (std::chrono::steady_clock::now() > deadline) {
        throw Error(Errc::kTimeout, "rnic-sim INJECT: ingress queue still full after 30 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  void sync() override {
    const proto::SyncReq req{0, 0};
    call_ok<proto::SyncRep>(Op::kSync, &req, sizeof req);
  }
  std::uint64_t cycles() override { return call_ok<proto::StatusRep>(Op::kStatus, nullptr, 0).cycles; }
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
  static int connect_to(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr.sun_path) {
      throw Error(Errc::kNoDevice, "sim:" + path + ": socket path empty or too long");
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) throw Error(Errc::kBackend, sys_error("rnic-sim: socket"));
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw Error(Errc::kNoDevice, "sim:" + path + ": no rnic-sim listens there (" + why + ")");
    }
    return fd;
  }

  [[noreturn]] void fail(Op op, Status st) const {
    const std::string what = std::string("rnic-sim ") + op_name(op) + ": " + proto::status_name(st);
    switch (st) {
      case Status::kNotOwner: throw Error(Errc::kState, what + " (opened as observer)");
      case Status::kNoMemory: throw Error(Errc::kExhausted, what);
      case Status::kNotAllocated: throw Error(Errc::kNotFound, what);
      case Status::kBadAddress:
      case Status::kBadArgument: throw Error(Errc::kInvalidArgument, what);
      case Status::kTimeout: throw Error(Errc::kTimeout, what);
      case Status::kBusy: throw Error(Errc::kQueueFull, what);
      default: throw Error(Errc::kBackend, what);
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
      throw Error(Errc::kBackend, std::string("rnic-sim ") + op_name(op) + ": reply of " +
                                      std::to_string(r.payload.size()) + " bytes");
    }
    T v;
    std::memcpy(&v, r.payload.data(), sizeof v);
    return v;
  }

  // One request, one reply. Any transport failure is kBackend naming the op.
  Reply call(Op op, const void* payload, std::size_t n, bool want_fd = false) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string where = std::string("rnic-sim ") + op_name(op) + " (sim:" + path_ + ")";
    const std::uint32_t seq = ++seq_;
    proto::Header h{proto::kMagic, static_cast<std::uint16_t>(op), 0, seq, static_cast<std::uint32_t>(n)};
    iovec out[2] = {{&h, sizeof h}, {const_cast<void*>(payload), n}};
    msghdr m{};
    m.msg_iov = out;
    m.msg_iovlen = n > 0 ? 2 : 1;
    ssize_t s;
    do {
      s = ::sendmsg(fd_.get(), &m, MSG_NOSIGNAL);
    } while (s < 0 && errno == EINTR);
    if (s < 0) throw Error(Errc::kBackend, where + ": " + sys_error("send"));

    rx_.resize(sizeof(proto::Header) + proto::kMaxPayload);
    iovec in{rx_.data(), rx_.size()};
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    msghdr r{};
    r.msg_iov = &in;
    r.msg_iovlen = 1;
    r.msg_control = ctl;
    r.msg_controllen = sizeof ctl;
    do {
      s = ::recvmsg(fd_.get(), &r, MSG_CMSG_CLOEXEC);
    } while (s < 0 && errno == EINTR);
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
    UniqueFd guard(rep.fd);  // closed on a malformed reply below
    if (s == 0) throw Error(Errc::kBackend, where + ": the simulator closed the connection");
    const auto got = static_cast<std::size_t>(s);
    proto::Header rh{};
    if (got < sizeof rh || (r.msg_flags & MSG_TRUNC) != 0) {
      throw Error(Errc::kBackend, where + ": malformed reply of " + std::to_string(got) + " bytes");
    }
    std::memcpy(&rh, rx_.data(), sizeof rh);
    if (rh.magic != proto::kMagic || rh.op != h.op || rh.seq != seq || rh.length != got - sizeof rh) {
      throw Error(Errc::kBackend, where + ": reply does not match the request");
    }
    rep.status = static_cast<Status>(rh.status);
    rep.payload.assign(rx_.begin() + sizeof rh, rx_.begin() + static_cast<std::ptrdiff_t>(got));
    rep.fd = guard.release();
    return rep;
  }

  std::string path_;
  UniqueFd fd_;
  Mapping map_;
  std::uint64_t mem_base_ = 0;
  std::size_t mem_bytes_ = 0;
  std::mutex mu_;
  std::uint32_t seq_ = 0;
  std::vector<std::uint8_t> rx_;
};

}  // namespace

std::unique_ptr<Backend> make_sim_backend(const std::string& socket_path, bool observer) {
  return std::make_unique<SimBackend>(socket_path, observer);
}

}  // namespace rnic::detail
