// SPDX-License-Identifier: Apache-2.0
#include "xrt_device.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
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
bool read_exact(int fd, void* p, std::size_t n) {
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
    b += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_exact(int fd, const void* p, std::size_t n) {
  const auto* b = static_cast<const std::uint8_t*>(p);
  while (n > 0) {
    const ssize_t put = ::send(fd, b, n, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
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
// Host memory through XRT's host-memory ("D2X") socket: each access is a request XRT's thread answers
// from the host_only buffer that holds the address. A failed or refused access is false: the card's
// burst is answered SLVERR.
class XrtHostMemory {
 public:
  explicit XrtHostMemory(int fd) : fd_(fd) {}
  // However the device ends, XRT's host-memory thread gets its close call first.
  ~XrtHostMemory() {
    close_session();
    ::close(fd_);
  }
  XrtHostMemory(const XrtHostMemory&) = delete;
  XrtHostMemory& operator=(const XrtHostMemory&) = delete;

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
    alive_ = false;
  }

 private:
  bool call(Call c, const hwemu::Writer& w) {
    if (!alive_) return false;
    std::uint8_t h[hwemu::kCallHeaderBytes];
    hwemu::encode_call_header(h, w.data().size(), static_cast<std::uint32_t>(c));
    std::uint8_t rh[hwemu::kCallHeaderBytes];
    const bool sent = write_exact(fd_, h, sizeof h) && write_exact(fd_, w.data().data(), w.data().size());
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

// One direction of a relayed socket: the bytes read so far, cut into whole messages (a 14-byte call
// header or a 9-byte reply header, then the size it names).
class Framer {
 public:
  explicit Framer(std::size_t header) : header_(header) {}
  // Reads what the socket has (it is readable). False at its end or on an error.
  bool fill(int fd) {
    std::uint8_t tmp[65536];
    const ssize_t n = ::recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    if (n == 0) return false;
    buf_.insert(buf_.end(), tmp, tmp + n);
    return true;
  }
  // The next whole message, or nullopt. `bad` is set when the header is not XRT's framing or names
  // more than kMaxCallBytes: the stream cannot be cut any more.
  std::optional<std::vector<std::uint8_t>> next(bool* bad) {
    *bad = false;
    if (buf_.size() < header_) return std::nullopt;
    if (buf_[0] != 0x09 || (header_ == hwemu::kCallHeaderBytes && buf_[9] != 0x15)) {
      *bad = true;
      return std::nullopt;
    }
    const std::uint64_t size = hwemu::get_le(buf_.data() + 1, 8);
    if (size > kMaxCallBytes) {
      *bad = true;
      return std::nullopt;
    }
    if (buf_.size() - header_ < size) return std::nullopt;
    const auto end = buf_.begin() + static_cast<std::ptrdiff_t>(header_ + size);
    std::vector<std::uint8_t> msg(buf_.begin(), end);
    buf_.erase(buf_.begin(), end);
    return msg;
  }
  std::vector<std::uint8_t> take_rest() { return std::exchange(buf_, {}); }

 private:
  std::size_t header_;
  std::vector<std::uint8_t> buf_;
};

std::uint32_t call_of(const std::vector<std::uint8_t>& msg) {
  return static_cast<std::uint32_t>(hwemu::get_le(msg.data() + 10, 4));
}

// The process XRT started is the card's guardian: it owns XRT's two sockets and relays whole messages
// between them and the card (a child process, over two socket pairs, in the same framing). XRT waits
// for this process at close, and XRT 2.13 spins forever on a socket whose other end vanished or that
// stops mid-message; a relay that only ever passes whole messages and outlives the card keeps both
// from happening. When the card ends the session itself (XRT's close, or XRT gone), the guardian exits
// with its status. When the card dies otherwise (killed, crashed), the guardian answers XRT from then
// on: the call in flight and every later one fail (XRT reports them as errors, so the driver does:
// never a hang), XRT's close is answered and the host-memory socket gets its close call.
[[noreturn]] void relay(int xrt_main, int xrt_host, int card_main, int card_host, pid_t card) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);  // the guardian has no signalfd: a signal ends it
  signal(SIGCHLD, SIG_DFL);                 // waitpid must see the card's status, whatever was inherited
  Framer from_xrt(hwemu::kCallHeaderBytes), from_card(hwemu::kReplyHeaderBytes);
  Framer host_requests(hwemu::kCallHeaderBytes), host_replies(hwemu::kCallHeaderBytes);
  bool card_alive = true, xrt_open = true, host_open = true, host_closed = false;
  bool close_answered = false;  // the card answered XRT's close: the session ended as it should
  bool in_flight = false;       // the card has a call (in_flight_call) it has not answered
  std::uint32_t in_flight_call = 0;
  const auto close_host = [&] {
    if (host_closed || !host_open) return;
    std::uint8_t h[hwemu::kCallHeaderBytes];
    hwemu::encode_call_header(h, 0, static_cast<std::uint32_t>(Call::kClose));
    write_exact(xrt_host, h, sizeof h);
    host_closed = true;
  };
  const auto to_xrt = [&](const hwemu::Writer& w) {
    std::uint8_t h[hwemu::kReplyHeaderBytes];
    hwemu::encode_reply_header(h, w.data().size());
    if (!write_exact(xrt_main, h, sizeof h) || !write_exact(xrt_main, w.data().data(), w.data().size())) {
      close_host();
      ::_exit(1);
    }
  };
  // A call the card will never answer: a failure, or for XRT's close its answer and the end.
  const auto answer = [&](std::uint32_t call) {
    if (call == static_cast<std::uint32_t>(Call::kClose)) {
      to_xrt(hwemu::Writer().varint(1, 1));
      close_host();
      ::_exit(1);
    }
    to_xrt(failure_reply(call));
  };
  // XRT's host-memory side is gone (or unusable): the card's next read there ends at once instead of
  // waiting for a reply that cannot come (its accesses fail from then on).
  const auto lose_host = [&] {
    if (!host_open) return;
    host_open = false;
    ::shutdown(card_host, SHUT_WR);
  };
  // The card's host-memory requests go to XRT whole, XRT's replies back to the card.
  const auto pass_host_requests = [&] {
    bool bad = false;
    while (auto msg = host_requests.next(&bad)) {
      const bool close = call_of(*msg) == static_cast<std::uint32_t>(Call::kClose);
      if (host_closed || !host_open) continue;
      if (!write_exact(xrt_host, msg->data(), msg->size())) {
        lose_host();
        continue;
      }
      if (close) host_closed = true;
    }
    if (bad) lose_host();  // the card's framing cannot be cut: no more of it goes to XRT
  };
  // The card's replies go to XRT whole; its answer to XRT's close ends the session as it should.
  const auto pass_replies = [&] {
    bool bad = false;
    while (auto msg = from_card.next(&bad)) {
      if (xrt_open && !write_exact(xrt_main, msg->data(), msg->size())) xrt_open = false;
      if (in_flight && in_flight_call == static_cast<std::uint32_t>(Call::kClose)) close_answered = true;
      in_flight = false;
    }
  };
  const auto card_ended = [&] {
    card_alive = false;
    // What it sent before it ended still counts: both pairs are read to their end (it closes one
    // after the other as it exits; 5 s without a byte or the end means it hangs: what there is counts).
    for (int fd : {card_main, card_host}) {
      Framer& f = fd == card_main ? from_card : host_requests;
      for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 5000) <= 0 || !f.fill(fd)) break;
      }
    }
    pass_replies();
    pass_host_requests();
    // Its sockets are closed: it is exiting, or hangs with them closed (then it is ended here).
    int status = 0;
    for (int i = 0;; ++i) {
      const pid_t r = ::waitpid(card, &status, i < 500 ? WNOHANG : 0);
      if (r == card || (r < 0 && errno != EINTR)) break;
      if (i == 500) ::kill(card, SIGKILL);
      if (r == 0) ::usleep(10'000);
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (!xrt_open || close_answered) {  // the card ended the session itself
      close_host();
      ::_exit(code);
    }
    const std::string how = WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit " + std::to_string(code);
    fmt::print(stderr,
               "rnic-sim: the simulated card (pid {}) ended without XRT's close ({}): every further XRT "
               "call fails\n",
               card, how);
    close_host();
    if (in_flight) {
      in_flight = false;
      answer(in_flight_call);
    }
  };
  for (;;) {
    pollfd pf[4] = {{xrt_open ? xrt_main : -1, POLLIN, 0},
                    {card_alive ? card_main : -1, POLLIN, 0},
                    {card_alive ? card_host : -1, POLLIN, 0},
                    {host_open && card_alive ? xrt_host : -1, POLLIN, 0}};
    if (::poll(pf, 4, -1) < 0) {
      if (errno == EINTR) continue;
      ::_exit(1);
    }
    if ((pf[1].revents | pf[2].revents) != 0 && card_alive) {
      const bool main_ok = (pf[1].revents == 0) || from_card.fill(card_main);
      const bool host_ok = (pf[2].revents == 0) || host_requests.fill(card_host);
      pass_replies();
      pass_host_requests();
      if (!main_ok || !host_ok) card_ended();
    }
    if (pf[3].revents != 0 && card_alive) {
      const bool open = host_replies.fill(xrt_host);
      bool bad = false;
      while (auto msg = host_replies.next(&bad)) {
        if (host_open) write_exact(card_host, msg->data(), msg->size());
      }
      if (!open || bad) lose_host();
    }
    if (pf[0].revents != 0 && xrt_open) {
      const bool open = from_xrt.fill(xrt_main);
      bool bad = false;
      while (auto msg = from_xrt.next(&bad)) {
        if (card_alive) {
          write_exact(card_main, msg->data(), msg->size());
          in_flight = true;
          in_flight_call = call_of(*msg);
        } else {
          answer(call_of(*msg));
        }
      }
      if (!open || bad) {
        // XRT is gone, or sent what cannot be framed: the card gets what there is and the end of the
        // stream, and judges it (its message, its owner cleanup, its exit status).
        xrt_open = false;
        const auto rest = from_xrt.take_rest();
        if (card_alive) {
          write_exact(card_main, rest.data(), rest.size());
          ::shutdown(card_main, SHUT_WR);
        } else {
          close_host();
          ::_exit(1);
        }
      }
    }
  }
}

struct XrtSession::Impl {
  using Next = XrtSession::Next;

  Impl(const Options& o, MemRegion& d, int main, int host_fd)
      : opt(o), path(xrt_socket_path(false)), main_fd(main), host(host_fd), ddr(d), bus(d, host) {}
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
    fmt::print(stderr, "rnic-sim: XRT session ended without a close ({}): cleaning up after the owner\n", why);
    if (!card->owner_gone()) fmt::print(stderr, "rnic-sim: owner cleanup did not finish\n");
    host.close_session();
    return Next::kFailed;
  }

  Next serve() {
    std::uint8_t h[hwemu::kCallHeaderBytes];
    if (!read_exact(main_fd, h, sizeof h))
      return owner_gone(errno == 0 ? "XRT closed its socket" : std::strerror(errno));
    const auto hdr = hwemu::decode_call_header(h);
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
    if (!read_exact(main_fd, body.data(), body.size())) {
      return owner_gone(fmt::format("call {} truncated after its header", hdr->call));
    }
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
    const bool sent = write_exact(main_fd, h, sizeof h) && write_exact(main_fd, w.data().data(), w.data().size());
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
        std::uint64_t addr = 0;
        const std::uint64_t size = m.number(5).value_or(0);
        const auto src = m.bytes(4);
        if (__builtin_add_overflow(m.number(3).value_or(0), m.number(6).value_or(0), &addr) || !src ||
            src->size != size || !in_ddr(addr, size, "copy to the device"))
          return reply_failure(call);
        std::memcpy(ddr.data() + (addr - kMemBase), src->data, src->size);
        return answered(reply(w.varint(1, size)));
      }
      case Call::kCopyDeviceToHost: {
        std::uint64_t addr = 0;
        const std::uint64_t size = m.number(5).value_or(0);
        if (__builtin_add_overflow(m.number(4).value_or(0), m.number(6).value_or(0), &addr) ||
            !in_ddr(addr, size, "copy from the device"))
          return reply_failure(call);
        return answered(reply(w.varint(1, size).bytes(2, ddr.data() + (addr - kMemBase), size)));
      }
      case Call::kGetDeviceTimestamp:
        return answered(reply(w.varint(1, card->cycle())));
      case Call::kGetDebugMessages:
        return answered(reply(w));
      case Call::kClose: {
        // The driver has cleaned up already; the owner cleanup makes sure, then XRT's host-memory
        // thread gets its close call and the device ends (XRT waits for it to exit).
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
  // The process XRT started stays as the guardian (relay()); the card is its child and talks to it
  // over two socket pairs in XRT's own framing.
  int main_pair[2], host_pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, main_pair) != 0 ||
      ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, host_pair) != 0) {
    ::close(main_fd);
    ::close(host_fd);
    throw std::runtime_error(errno_text("socketpair"));
  }
  const pid_t card = ::fork();
  if (card < 0) throw std::runtime_error(errno_text("fork of the card"));
  if (card > 0) {
    ::close(main_pair[1]);
    ::close(host_pair[1]);
    relay(main_fd, host_fd, main_pair[0], host_pair[0], card);  // never returns
  }
  ::close(main_fd);
  ::close(host_fd);
  ::close(main_pair[0]);
  ::close(host_pair[0]);
  impl_ = std::make_unique<Impl>(o, ddr, main_pair[1], host_pair[1]);
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
