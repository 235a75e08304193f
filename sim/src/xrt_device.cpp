// SPDX-License-Identifier: Apache-2.0
#include "xrt_device.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "host_memory.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/hwemu/wire.hpp"
#include "rnic/xclbin/writer.hpp"

namespace rnic::sim {
namespace {

using hwemu::Call;

// A call larger than this ends the session (XRT's own chunks are packet_size, 1 MiB in the xrt.ini
// the build writes; the largest message XRT 2.13 can send safely is its first one, see xrt.ini).
constexpr std::uint64_t kMaxCallBytes = 64ull << 20;
constexpr std::uint64_t kMaxCopyBytes = kMaxCallBytes - 4096;  // the data of one copy or register read
constexpr int kIoTimeoutMs = 30'000;                           // a call's body, a host-memory reply

std::string errno_text(const std::string& what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

// Reads exactly n bytes, waiting at most kIoTimeoutMs for each part. False on EOF, error or timeout
// (errno says which: 0 for EOF, ETIMEDOUT).
bool read_exact(int fd, void* p, std::size_t n, std::atomic<std::uint64_t>* progress = nullptr) {
  auto* b = static_cast<std::uint8_t*>(p);
  while (n > 0) {
    pollfd pf{fd, POLLIN, 0};
    const int r = ::poll(&pf, 1, kIoTimeoutMs);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) errno = ETIMEDOUT;
    if (r <= 0) return false;
    const ssize_t got = ::recv(fd, b, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) errno = 0;
    if (got <= 0) return false;
    if (progress != nullptr) *progress += static_cast<std::uint64_t>(got);
    b += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_exact(int fd, const void* p, std::size_t n, std::atomic<std::uint64_t>* progress = nullptr) {
  const auto* b = static_cast<const std::uint8_t*>(p);
  while (n > 0) {
    const ssize_t put = ::send(fd, b, n, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    if (progress != nullptr) *progress += static_cast<std::uint64_t>(put);
    b += put;
    n -= static_cast<std::size_t>(put);
  }
  return true;
}

// XRT's socket names (its common_em/unix_socket.cxx): /tmp/$USER/<id>, or /tmp/<id> without USER,
// where the main socket's id is $EMULATION_SOCKETID (xcl_sock when unset, or always without USER)
// and the host-memory socket's D2X_unix_sock_$EMULATION_SOCKETID.
std::string xrt_socket_path(bool host_memory) {
  const char* user = std::getenv("USER");
  const char* id_env = std::getenv("EMULATION_SOCKETID");
  const std::string id = id_env != nullptr ? id_env : "";
  if (user == nullptr) return host_memory ? "/tmp/D2X_unix_sock_" + id : "/tmp/xcl_sock";
  const std::string dir = fmt::format("/tmp/{}/", user);
  if (host_memory) return dir + "D2X_unix_sock_" + id;
  return dir + (id_env != nullptr ? id : "xcl_sock");
}

// Connects to the Unix stream socket XRT listens on (it binds only after starting the device, so the
// device retries until `deadline`).
int connect_to(const std::string& path, std::chrono::steady_clock::time_point deadline) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw std::runtime_error("XRT socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  for (;;) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(errno_text("socket"));
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return fd;
    const int e = errno;
    ::close(fd);
    if (e != ENOENT && e != ECONNREFUSED) {
      errno = e;
      throw std::runtime_error(errno_text("connect to XRT at " + path));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw std::runtime_error(
          fmt::format("XRT did not open {} in time (is this process started by XRT's "
                      "hw_emu shim, with EMULATION_SOCKETID and USER as it set them?)",
                      path));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// The reply XRT's shim accepts as a failure of `call` (it asserts that every required field is
// present, and copies a register read's requested 4 bytes out of any reply).
hwemu::Writer failure_reply(std::uint32_t call) {
  static constexpr std::uint8_t kZeros[4] = {};
  hwemu::Writer w;
  switch (static_cast<Call>(call)) {
    case Call::kReadKernelCtrl:
      w.varint(1, 0).bytes(2, kZeros, 4);
      break;
    case Call::kCopyDeviceToHost:
      w.varint(1, 0).bytes(2, kZeros, 0);
      break;
    case Call::kCopyHostToDevice:
    case Call::kGetDeviceTimestamp:
    case Call::kWriteKernelCtrl:
    case Call::kAllocDeviceBuffer:
    case Call::kFreeDeviceBuffer:
    case Call::kClose:
    case Call::kSetEnvironment:
      w.varint(1, 0);
      break;
    default:
      break;
  }
  return w;
}

// Where the device is in its conversation with XRT, in memory it shares with its guardian
// (XrtSession: the process XRT started, which outlives a device that dies).
// A message cut in two by the device's death is finished by the guardian from here: a call's header
// is read into `header` and its body counted, a reply or a host-memory request is written from
// `reply` / `request` (the longest ones XRT 2.13 can take fit: its message buffer is sized by its first
// message, 64 KiB and a little with scripts/xrt_emu.sh's xrt.ini; a host-memory request is one burst).
struct SessionState {
  enum : std::uint32_t { kIdle, kReading, kServing, kReplying, kBusy };
  static constexpr std::size_t kReplyMax = std::size_t{1} << 20;
  static constexpr std::size_t kRequestMax = std::size_t{64} << 10;
  // The main socket: kReading a call (`header_moved` bytes of its header and `body_moved` of its
  // body taken so far), kServing `call` (read whole, not answered), kReplying (`moved` of
  // `reply_bytes` of `reply` written); kBusy: a reply too long for `reply` is being written.
  std::atomic<std::uint32_t> main{kIdle};
  std::atomic<std::uint32_t> call{0};
  std::atomic<std::uint64_t> header_moved{0}, body_moved{0}, moved{0}, reply_bytes{0};
  std::uint8_t header[hwemu::kCallHeaderBytes]{};
  std::uint8_t reply[kReplyMax]{};
  // The host-memory socket: kReplying while `request` is written (`host_moved` of `host_bytes`);
  // kBusy: a request too long for `request` is.
  std::atomic<std::uint32_t> host{kIdle};
  std::atomic<std::uint64_t> host_moved{0}, host_bytes{0};
  std::uint8_t request[kRequestMax]{};
  std::atomic<bool> host_closed{false};  // the host-memory socket got its close call
  std::atomic<bool> ended{false};        // XRT closed the device, or is gone
};

// Host memory through XRT's host-memory ("D2X") socket: each access is a request XRT's thread answers
// from the host_only buffer that holds the address. A failed or refused access is false: the card's
// burst is answered SLVERR.
class XrtHostMemory {
 public:
  XrtHostMemory(int fd, SessionState& state) : fd_(fd), state_(state) {}
  // However the device ends, XRT's host-memory thread gets its close call first.
  ~XrtHostMemory() {
    close_session();
    ::close(fd_);
  }
  XrtHostMemory(const XrtHostMemory&) = delete;
  XrtHostMemory& operator=(const XrtHostMemory&) = delete;

  bool alive() const { return alive_; }

  bool read(std::uint64_t addr, std::uint8_t* out, std::size_t n) {
    hwemu::Writer w;
    w.varint(1, addr).varint(2, n);
    if (!call(Call::kHostReadMem, w)) return false;
    const auto data = reply_.bytes(2);
    if (!reply_.number(1).value_or(0) || !data || data->size != n) return refused("read", addr, n);
    std::memcpy(out, data->data, n);
    return true;
  }

  bool write(std::uint64_t addr, const std::uint8_t* data, std::size_t n) {
    hwemu::Writer w;
    w.varint(1, addr).varint(2, n).bytes(3, data, n);
    if (!call(Call::kHostWriteMem, w)) return false;
    if (!reply_.number(1).value_or(0)) return refused("write", addr, n);
    return true;
  }

  // The close call XRT's host-memory thread waits for: without it, XRT 2.13 spins on the closed
  // socket forever.
  void close_session() {
    if (!alive_) return;
    std::uint8_t h[hwemu::kCallHeaderBytes];
    hwemu::encode_call_header(h, 0, static_cast<std::uint32_t>(Call::kClose));
    write_exact(fd_, h, sizeof h);
    state_.host_closed = true;
    alive_ = false;
  }

 private:
  bool call(Call c, const hwemu::Writer& w) {
    if (!alive_) return false;
    std::uint8_t h[hwemu::kCallHeaderBytes];
    hwemu::encode_call_header(h, w.data().size(), static_cast<std::uint32_t>(c));
    std::uint8_t rh[hwemu::kCallHeaderBytes];
    const std::size_t total = sizeof h + w.data().size();
    bool sent = false;
    state_.host_moved = 0;
    if (total <= SessionState::kRequestMax) {  // written from where the guardian can finish it
      std::memcpy(state_.request, h, sizeof h);
      std::memcpy(state_.request + sizeof h, w.data().data(), w.data().size());
      state_.host_bytes = total;
      state_.host = SessionState::kReplying;
      sent = write_exact(fd_, state_.request, total, &state_.host_moved);
    } else {
      state_.host = SessionState::kBusy;
      sent = write_exact(fd_, h, sizeof h) && write_exact(fd_, w.data().data(), w.data().size());
    }
    state_.host = SessionState::kIdle;
    if (!sent || !read_exact(fd_, rh, sizeof rh)) return dead(errno == 0 ? "XRT closed it" : std::strerror(errno));
    const auto hdr = hwemu::decode_call_header(rh);
    if (!hdr || hdr->size > kMaxCallBytes) return dead("a malformed reply header");
    body_.resize(static_cast<std::size_t>(hdr->size));
    if (!read_exact(fd_, body_.data(), body_.size())) return dead("a truncated reply");
    if (!reply_.parse(body_.data(), body_.size())) return dead("a malformed reply");
    return true;
  }
  bool dead(const std::string& why) {
    fmt::print(stderr,
               "rnic-sim: XRT's host-memory socket failed ({}): the card's host-memory accesses fail "
               "from now on\n",
               why);
    alive_ = false;
    return false;
  }
  static bool refused(const char* what, std::uint64_t addr, std::size_t n) {
    fmt::print(stderr,
               "rnic-sim: XRT refused the card's host-memory {} of {} bytes at {:#x} (no host_only buffer "
               "holds it)\n",
               what, n, addr);
    return false;
  }

  int fd_;
  SessionState& state_;
  bool alive_ = true;
  std::vector<std::uint8_t> body_;
  hwemu::Message reply_;
};

// What the card's AXI masters reach: DDR[0] (the simulator's memory) and HOST[0] (XRT's host memory).
class XrtBusMemory final : public BusMemory {
 public:
  XrtBusMemory(MemRegion& ddr, XrtHostMemory& host) : ddr_(ddr), host_(host) {}

  bool contains(std::uint64_t addr, std::uint64_t n) const override {
    return ddr_.contains(addr, n) || in_host(addr, n);
  }
  bool read(std::uint64_t addr, std::uint8_t* out, std::size_t n) override {
    if (ddr_.contains(addr, n)) return ddr_.read(addr, out, n);
    return host_.read(addr, out, n);
  }
  // Host memory: each run of strobed bytes is one write, the runs after the first 8 bytes before the
  // runs inside them (BusMemory::write: the entry's first 8 bytes land last).
  bool write(std::uint64_t addr, const std::uint8_t* data, const std::uint8_t* strobe, std::size_t n) override {
    if (ddr_.contains(addr, n)) return ddr_.write(addr, data, strobe, n);
    const std::size_t head = n < 8 ? 0 : 8;
    return write_runs(addr, data, strobe, head, n) && write_runs(addr, data, strobe, 0, head);
  }

 private:
  static bool in_host(std::uint64_t addr, std::uint64_t n) {
    return addr >= kXrtHostBase && n <= kXrtHostBytes && addr - kXrtHostBase <= kXrtHostBytes - n;
  }
  bool write_runs(std::uint64_t addr, const std::uint8_t* data, const std::uint8_t* strobe, std::size_t from,
                  std::size_t to) {
    std::size_t i = from;
    while (i < to) {
      if (strobe[i] == 0) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < to && strobe[j] != 0) ++j;
      if (!host_.write(addr + i, data + i, j - i)) return false;
      i = j;
    }
    return true;
  }

  MemRegion& ddr_;
  XrtHostMemory& host_;
};

}  // namespace

// The process XRT started stays as the device's guardian: XRT waits for it at close, and XRT 2.13
// spins forever on a socket whose other end vanished. When the device (the child: the card) ends the
// session itself, the guardian exits with its status. When the device dies otherwise (killed,
// crashed) the guardian answers XRT from then on: the call in flight and every later one fail (XRT
// reports them as errors, so the driver does: never a hang), XRT's close is answered and the
// host-memory socket gets its close call.
[[noreturn]] void guard(int main_fd, int host_fd, SessionState& state, pid_t device) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);  // the guardian has no signalfd: a signal ends it
  int status = 0;
  while (::waitpid(device, &status, 0) < 0) {
    if (errno != EINTR) ::_exit(1);
  }
  if (state.ended) ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  fmt::print(stderr,
             "rnic-sim: the simulated card (pid {}) ended without XRT's close ({}): every further XRT call "
             "fails\n",
             device, WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit " + std::to_string(WEXITSTATUS(status)));
  const auto finish = [&](int code) {
    // A request cut in two is finished first (XRT's thread answers it, then reads the close call);
    // one that was too long to keep cannot be, and then XRT's thread is beyond help.
    if (state.host == SessionState::kReplying && state.host_moved < state.host_bytes) {
      const std::uint64_t at = state.host_moved;
      write_exact(host_fd, state.request + at, static_cast<std::size_t>(state.host_bytes - at));
    }
    if (!state.host_closed && state.host != SessionState::kBusy) {
      std::uint8_t h[hwemu::kCallHeaderBytes];
      hwemu::encode_call_header(h, 0, static_cast<std::uint32_t>(Call::kClose));
      write_exact(host_fd, h, sizeof h);
    }
    ::_exit(code);
  };
  const auto reply = [&](const hwemu::Writer& w) {
    std::uint8_t h[hwemu::kReplyHeaderBytes];
    hwemu::encode_reply_header(h, w.data().size());
    if (!write_exact(main_fd, h, sizeof h) || !write_exact(main_fd, w.data().data(), w.data().size())) finish(1);
  };
  // XRT's call in flight, if any, is answered: a cut call is read to its end first, a cut reply
  // written to its end; a call taken whole and not answered gets its failure (XRT's close its answer
  // and the end).
  const auto answer = [&](std::uint32_t call) {
    if (call == static_cast<std::uint32_t>(Call::kClose)) {
      reply(hwemu::Writer().varint(1, 1));
      finish(1);
    }
    reply(failure_reply(call));
  };
  std::vector<std::uint8_t> body;
  switch (state.main.load()) {
    case SessionState::kReading: {
      const std::uint64_t got = state.header_moved;
      if (got == 0) break;  // nothing of it taken: the loop below reads it
      if (got < sizeof state.header && !read_exact(main_fd, state.header + got, sizeof state.header - got)) finish(1);
      const auto hdr = hwemu::decode_call_header(state.header);
      if (!hdr || hdr->size > kMaxCallBytes) finish(1);
      body.resize(static_cast<std::size_t>(hdr->size - std::min<std::uint64_t>(hdr->size, state.body_moved)));
      if (!read_exact(main_fd, body.data(), body.size())) finish(1);
      answer(hdr->call);
      break;
    }
    case SessionState::kServing:
      answer(state.call);
      break;
    case SessionState::kReplying: {
      const std::uint64_t at = state.moved;
      if (at == 0) {
        answer(state.call);
      } else if (at < state.reply_bytes &&
                 !write_exact(main_fd, state.reply + at, static_cast<std::size_t>(state.reply_bytes - at))) {
        finish(1);
      }
      break;
    }
    case SessionState::kBusy:
      fmt::print(stderr, "rnic-sim: it died writing a reply too long to finish: XRT's socket cannot be answered\n");
      finish(1);
      break;
    default:
      break;
  }
  for (;;) {
    pollfd pf{main_fd, POLLIN, 0};
    if (::poll(&pf, 1, -1) < 0 && errno != EINTR) finish(1);
    std::uint8_t h[hwemu::kCallHeaderBytes];
    if (!read_exact(main_fd, h, sizeof h)) finish(1);  // XRT is gone
    const auto hdr = hwemu::decode_call_header(h);
    if (!hdr || hdr->size > kMaxCallBytes) finish(1);
    body.resize(static_cast<std::size_t>(hdr->size));
    if (!read_exact(main_fd, body.data(), body.size())) finish(1);
    if (hdr->call == static_cast<std::uint32_t>(Call::kClose)) {
      reply(hwemu::Writer().varint(1, 1));
      finish(1);
    }
    reply(failure_reply(hdr->call));
  }
}

struct XrtSession::Impl {
  using Next = XrtSession::Next;

  Impl(const Options& o, MemRegion& d, int main, int host_fd, SessionState& st)
      : opt(o), path(xrt_socket_path(false)), main_fd(main), state(st), host(host_fd, st), ddr(d), bus(d, host) {}
  ~Impl() { ::close(main_fd); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  template <class... Args>
  void log(fmt::format_string<Args...> f, Args&&... args) {
    if (opt.verbose) fmt::print(stderr, "{}\n", fmt::format(f, std::forward<Args>(args)...));
  }

  // XRT is gone without closing the device (killed, or its session broke): what a kernel driver does
  // when its owner dies (XrtCard::owner_gone), then the device ends.
  Next owner_gone(const std::string& why) {
    state.ended = true;
    fmt::print(stderr, "rnic-sim: XRT session ended without a close ({}): cleaning up after the owner\n", why);
    if (!card->owner_gone()) fmt::print(stderr, "rnic-sim: owner cleanup did not finish\n");
    host.close_session();
    return Next::kFailed;
  }

  Next serve() {
    state.header_moved = 0;
    state.body_moved = 0;
    state.main = SessionState::kReading;
    if (!read_exact(main_fd, state.header, sizeof state.header, &state.header_moved))
      return owner_gone(errno == 0 ? "XRT closed its socket" : std::strerror(errno));
    const auto hdr = hwemu::decode_call_header(state.header);
    if (!hdr) return owner_gone("a malformed call header: the stream cannot be trusted any more");
    if (hdr->size > kMaxCallBytes) {
      return owner_gone(
          fmt::format("call {} of {} bytes, above the {}-byte limit", hdr->call, hdr->size, kMaxCallBytes));
    }
    // XRT 2.13's shim keeps one message buffer, sized by its first message, and loses realloc's
    // result when a later message is larger: its heap is corrupt from then on.
    if (!xrt_buffer) {
      xrt_buffer = hdr->size;
    } else if (hdr->size > *xrt_buffer) {
      fmt::print(stderr,
                 "rnic-sim: XRT call {} of {} bytes is larger than XRT's first ({} bytes): XRT 2.13 has "
                 "overrun its message buffer (make the first message the largest: a [Debug] pad entry in "
                 "xrt.ini longer than packet_size, as scripts/xrt_emu.sh writes it)\n",
                 hdr->call, hdr->size, *xrt_buffer);
    }
    body.resize(static_cast<std::size_t>(hdr->size));
    if (!read_exact(main_fd, body.data(), body.size(), &state.body_moved)) {
      return owner_gone(fmt::format("call {} truncated after its header", hdr->call));
    }
    state.call = hdr->call;
    state.main = SessionState::kServing;
    hwemu::Message m;
    if (!m.parse(body.data(), body.size())) {
      fmt::print(stderr, "rnic-sim: XRT call {}: a malformed message of {} bytes, refused\n", hdr->call, hdr->size);
      return reply_failure(hdr->call);
    }
    return dispatch(hdr->call, m);
  }

  bool reply(const hwemu::Writer& w) {
    if (xrt_buffer && w.data().size() > *xrt_buffer) {
      // The reply would overrun XRT's message buffer (serve()): a failure instead, which fits.
      fmt::print(stderr,
                 "rnic-sim: a reply of {} bytes would overrun XRT 2.13's message buffer ({} bytes, the "
                 "size of its first message): refused; give xrt.ini a [Debug] pad entry longer than "
                 "packet_size (scripts/xrt_emu.sh does)\n",
                 w.data().size(), *xrt_buffer);
      return send_reply(hwemu::Writer().varint(1, 0).bytes(2, nullptr, 0));
    }
    return send_reply(w);
  }
  bool send_reply(const hwemu::Writer& w) {
    std::uint8_t h[hwemu::kReplyHeaderBytes];
    hwemu::encode_reply_header(h, w.data().size());
    const std::size_t total = sizeof h + w.data().size();
    bool sent = false;
    state.moved = 0;
    if (total <= SessionState::kReplyMax) {  // written from where the guardian can finish it
      std::memcpy(state.reply, h, sizeof h);
      std::memcpy(state.reply + sizeof h, w.data().data(), w.data().size());
      state.reply_bytes = total;
      state.main = SessionState::kReplying;
      sent = write_exact(main_fd, state.reply, total, &state.moved);
    } else {
      state.main = SessionState::kBusy;
      sent = write_exact(main_fd, h, sizeof h) && write_exact(main_fd, w.data().data(), w.data().size());
    }
    state.main = SessionState::kIdle;
    return sent;
  }
  Next answered(bool sent) { return sent ? Next::kGoOn : owner_gone(errno_text("reply to XRT")); }

  // The reply a call XRT's shim accepts as a failure (XRT asserts every required field is present).
  Next reply_failure(std::uint32_t call) { return answered(reply(failure_reply(call))); }

  // A register access: inside the compute unit's control space, one aligned 32-bit word, and a
  // register the kernel decodes (as the simulator's own socket checks, Card::valid_register).
  std::optional<std::uint32_t> register_offset(const hwemu::Message& m, std::uint32_t call) {
    const std::uint64_t addr = m.number(2).value_or(~0ull);
    const std::uint64_t size = m.number(3).value_or(0);
    if (addr < kXrtCuBase || addr - kXrtCuBase >= hw::kMMIO_BYTES || size != 4 ||
        !card->valid_register(static_cast<std::uint32_t>(addr - kXrtCuBase))) {
      fmt::print(stderr,
                 "rnic-sim: XRT call {}: {} bytes at {:#x} is not a register of rnic_kernel (CU at {:#x}, "
                 "{:#x} bytes of 32-bit registers)\n",
                 call, size, addr, kXrtCuBase, hw::kMMIO_BYTES);
      return std::nullopt;
    }
    return static_cast<std::uint32_t>(addr - kXrtCuBase);
  }

  // [addr, addr + n) of card memory (DDR[0]), or false with a message.
  bool in_ddr(std::uint64_t addr, std::uint64_t n, const char* what) {
    if (n <= kMaxCopyBytes && ddr.contains(addr, n)) return true;
    fmt::print(stderr, "rnic-sim: XRT {}: {} bytes at {:#x} are not inside {} ({:#x}, {} MiB)\n", what, n, addr,
               kXrtDdrTag, kMemBase, opt.mem_mib);
    return false;
  }

  Next dispatch(std::uint32_t call, const hwemu::Message& m) {
    hwemu::Writer w;
    switch (static_cast<Call>(call)) {
      case Call::kSetEnvironment:
        return answered(reply(w.varint(1, 1)));
      case Call::kReadKernelCtrl: {
        const auto off = register_offset(m, call);
        if (!off) return reply_failure(call);
        std::uint8_t v[4];
        hwemu::put_le(v, card->read_register(*off), 4);
        return answered(reply(w.varint(1, 1).bytes(2, v, 4)));
      }
      case Call::kWriteKernelCtrl: {
        const auto off = register_offset(m, call);
        const auto data = m.bytes(4);
        if (!off || !data || data->size != 4) return reply_failure(call);
        card->write_register(*off, static_cast<std::uint32_t>(hwemu::get_le(data->data, 4)));
        return answered(reply(w.varint(1, 1)));
      }
      case Call::kAllocDeviceBuffer: {
        // XRT chose the address in DDR[0] (its allocator, from the xclbin's MEM_TOPOLOGY); a fresh
        // buffer reads zeros.
        const std::uint64_t addr = m.number(1).value_or(0), size = m.number(2).value_or(0);
        if (!in_ddr(addr, size, "buffer allocation")) return reply_failure(call);
        std::memset(ddr.data() + (addr - kMemBase), 0, static_cast<std::size_t>(size));
        return answered(reply(w.varint(1, 1)));
      }
      case Call::kFreeDeviceBuffer:
        return answered(reply(w.varint(1, 1)));
      case Call::kCopyHostToDevice: {
        // XRT 2.13 sends each chunk's device address without the sync's offset and the offset as
        // `seek`: the bytes belong at dest + seek.
        const std::uint64_t addr = m.number(3).value_or(0) + m.number(6).value_or(0);
        const std::uint64_t size = m.number(5).value_or(0);
        const auto src = m.bytes(4);
        if (!src || src->size != size || !in_ddr(addr, size, "copy to the device")) return reply_failure(call);
        std::memcpy(ddr.data() + (addr - kMemBase), src->data, src->size);
        return answered(reply(w.varint(1, size)));
      }
      case Call::kCopyDeviceToHost: {
        const std::uint64_t addr = m.number(4).value_or(0) + m.number(6).value_or(0);
        const std::uint64_t size = m.number(5).value_or(0);
        if (!in_ddr(addr, size, "copy from the device")) return reply_failure(call);
        return answered(reply(w.varint(1, size).bytes(2, ddr.data() + (addr - kMemBase), size)));
      }
      case Call::kGetDeviceTimestamp:
        return answered(reply(w.varint(1, card->cycle())));
      case Call::kGetDebugMessages:
        return answered(reply(w));
      case Call::kClose: {
        // The driver has cleaned up already; the owner cleanup makes sure, then XRT's host-memory
        // thread gets its close call and the device ends (XRT waits for it to exit).
        state.ended = true;
        if (!card->owner_gone()) fmt::print(stderr, "rnic-sim: cleanup at XRT's close did not finish\n");
        const bool sent = reply(w.varint(1, 1));
        host.close_session();
        log("rnic-sim: XRT closed the device");
        return sent ? Next::kClosed : Next::kFailed;
      }
      default:
        fmt::print(stderr, "rnic-sim: XRT call {} ({} bytes) is not one rnic-sim answers: empty reply\n", call,
                   body.size());
        return answered(reply(w));
    }
  }

  Options opt;
  std::string path;
  int main_fd;
  SessionState& state;
  XrtHostMemory host;
  MemRegion& ddr;
  XrtBusMemory bus;
  XrtCard* card = nullptr;                  // the card being served (serve())
  std::optional<std::uint64_t> xrt_buffer;  // the size of XRT's message buffer: its first message's
  std::vector<std::uint8_t> body;
};

XrtSession::XrtSession(const Options& o, MemRegion& ddr) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.xrt_connect_seconds);
  const int main_fd = connect_to(xrt_socket_path(false), deadline);
  int host_fd = -1;
  try {
    host_fd = connect_to(xrt_socket_path(true), deadline);
  } catch (...) {
    ::close(main_fd);
    throw;
  }
  // The state the device and its guardian share: a page of its own, mapped before the fork.
  void* page = ::mmap(nullptr, sizeof(SessionState), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    ::close(main_fd);
    ::close(host_fd);
    throw std::runtime_error(errno_text("mmap of the session state"));
  }
  auto* state = new (page) SessionState;
  const pid_t device = ::fork();
  if (device < 0) throw std::runtime_error(errno_text("fork of the device"));
  if (device > 0) guard(main_fd, host_fd, *state, device);  // never returns
  impl_ = std::make_unique<Impl>(o, ddr, main_fd, host_fd, *state);
}

XrtSession::~XrtSession() = default;
int XrtSession::fd() const { return impl_->main_fd; }
const std::string& XrtSession::path() const { return impl_->path; }
BusMemory& XrtSession::bus() { return impl_->bus; }

XrtSession::Next XrtSession::serve(XrtCard& card) {
  impl_->card = &card;
  return impl_->serve();
}

void write_xrt_xclbin(const std::string& path, const Options& o, XrtBank bank) {
  xclbin::Spec spec;
  spec.ips = {{"rnic_kernel:rnic_kernel_1", kXrtCuBase, 2}};
  spec.mems = {{kXrtDdrTag, 1, kMemBase, o.mem_mib * 1024, true},
               {kXrtHostTag, 10, kXrtHostBase, kXrtHostBytes >> 10, true}};
  spec.connections = {{0, 0, bank == XrtBank::kHost ? 1 : 0}};
  spec.metadata_xml = xclbin::rnic_kernel_metadata("rnic_kernel_1", kXrtCuBase);
  // A fixed UUID per bank and memory size: the same build writes the same file.
  const std::string id = fmt::format("rnic-hwemu-{}-{}", bank == XrtBank::kHost ? "host" : "ddr", o.mem_mib);
  for (std::size_t i = 0; i < spec.uuid.size(); ++i)
    spec.uuid[i] = i < id.size() ? static_cast<std::uint8_t>(id[i]) : static_cast<std::uint8_t>(i);
  const std::vector<char> bytes = xclbin::build(spec);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace rnic::sim
