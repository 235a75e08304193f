// SPDX-License-Identifier: Apache-2.0
#include "server.hpp"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "Vrnic_kernel.h"
#include "card.hpp"
#include "host_memory.hpp"
#include "net_port.hpp"
#include "rnic/bus/axi_lite_master.hpp"
#include "rnic/bus/axis_source.hpp"
#include "rnic/bus/sc_kernel.hpp"
#include "rnic/bus/sim.hpp"
#include "rnic/capture/sctp_capture.hpp"
#include "rnic/hw/command.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/sim_protocol/protocol.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/ddp_errors.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "xrt_device.hpp"

namespace rnic::sim {
namespace {

namespace proto = rnic::sim_protocol;
using proto::Op;
using proto::Status;

constexpr std::size_t kIngressCapacity = 1024;  // segments waiting at the ingress (then kBusy)
constexpr std::size_t kMaxClients = 64;
constexpr unsigned kBatch = 64;                     // cycles between two looks at the sockets
constexpr unsigned kBatchInteractive = 4;           // the same while a client is talking to the card
constexpr std::uint64_t kInteractiveCycles = 1024;  // how long after a message that lasts

std::string errno_text(const char* what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct PendingSync {
  proto::Header req;
  std::uint64_t start, quiet, max;
};

struct Client {
  Fd fd;
  std::uint64_t id = 0;
  bool hello = false;
  bool dead = false;
  std::uint32_t role = proto::kRoleObserver;
  std::uint32_t pid = 0;
  std::set<std::uint64_t> allocs;  // memfd offsets
  std::optional<PendingSync> sync;
};

}  // namespace

// The card of one implementation (Top: the Verilated rnic_kernel, or the SystemC model behind the same
// ports). With --xrt, XRT's hardware-emulation shim owns it (xrt_device.hpp): its calls arrive on an
// XrtSession, the card's memory is DDR[0] (mem_) and XRT's host memory, and the simulator's own socket
// serves observers and the simulated wire (inject, sync, the network port's sockets).
template <class Top>
class KernelServer final : public Server::Impl, private XrtCard {
  static constexpr unsigned kBusBytes = Card<Top>::kBusBytes;

 public:
  explicit KernelServer(const Options& o)
      : opt_(o),
        mem_(std::make_unique<MemRegion>(kMemBase, mem_bytes(o))),
        xrt_(o.xrt ? std::make_unique<XrtSession>(o, *mem_) : nullptr),
        alloc_(mem_bytes(o)),
        card_(o, xrt_ ? xrt_->bus() : static_cast<BusMemory&>(*mem_)),
        streams_(card_.streams()),
        qns_(card_.qns()),
        max_seg_bytes_(card_.max_seg_bytes()) {
    if (!o.pcap.empty()) {
      pcap_ = std::make_unique<capture::SctpCaptureWriter>(o.pcap, capture::SctpEndpoint{0x0A000001, 5001},
                                                           capture::SctpEndpoint{0x0A000002, 5002}, hw::kID_VALUE);
      pcap_->write_init_with_adaptation(static_cast<std::uint16_t>(std::min<std::uint32_t>(streams_, 0xFFFF)),
                                        wire::kDdpAdaptationIndication);
    }
    listen_on(o.socket);
    rx_.resize(sizeof(proto::Header) + proto::kMaxPayload + 1);
    log("rnic-sim: listening on {} ({} MiB host memory at 0x{:x}, {} streams x {} QNs, {}-bit bus)", o.socket,
        o.mem_mib, kMemBase, streams_, qns_, 8 * kBusBytes);
    if (net_) log("rnic-sim: network port on UDP 127.0.0.1:{}", net_->port());
    if (xrt_) log("rnic-sim: owned by XRT (hw_emu) on {}; HOST[0] at 0x{:x}", xrt_->path(), kXrtHostBase);
  }

  ~KernelServer() override {
    clients_.clear();
    listen_.reset();
    if (bound_) ::unlink(opt_.socket.c_str());
    if (pcap_) pcap_->close();
  }

  int run(int signal_fd) override {
    std::vector<pollfd> pf;
    std::vector<Client*> polled;
    constexpr std::size_t kFirstClient = 4;
    for (;;) {
      // A quiet card releases what the network path holds back: a reordered datagram comes late, not never.
      if (net_ && net_->holding() && is_idle()) net_->flush();
      const bool idle = is_idle();
      pf.clear();
      polled.clear();
      pf.push_back(pollfd{signal_fd, POLLIN, 0});
      pf.push_back(pollfd{listen_.get(), POLLIN, 0});
      pf.push_back(pollfd{net_ ? net_->fd() : -1, POLLIN, 0});  // fd -1: poll ignores the entry
      pf.push_back(pollfd{xrt_ ? xrt_->fd() : -1, POLLIN, 0});
      for (auto& c : clients_) {
        // A client waiting for SYNC sends nothing more until it has the reply (hang-ups still show).
        pf.push_back(pollfd{c->fd.get(), static_cast<short>(c->sync ? 0 : POLLIN), 0});
        polled.push_back(c.get());
      }
      const int r = ::poll(pf.data(), pf.size(), idle ? -1 : 0);
      if (r < 0 && errno != EINTR) throw std::runtime_error(errno_text("poll"));
      if (r > 0) {
        if ((pf[0].revents & POLLIN) != 0) {
          signalfd_siginfo si{};
          if (::read(signal_fd, &si, sizeof si) > 0) log("rnic-sim: signal {}, stopping", si.ssi_signo);
          card_.log_speed();
          return 0;
        }
        if ((pf[1].revents & POLLIN) != 0) accept_clients();
        if ((pf[2].revents & POLLIN) != 0) net_->receive();
        if ((pf[3].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
          // XRT's call: the session ends with XRT's close (0) or without it (1); the device ends with it.
          const XrtSession::Next next = xrt_->serve(*this);
          interactive_until_ = cycle() + kInteractiveCycles;
          if (next != XrtSession::Next::kGoOn) {
            card_.log_speed();
            return next == XrtSession::Next::kClosed ? 0 : 1;
          }
        }
        for (std::size_t i = 0; i < polled.size(); ++i) {
          const short ev = pf[i + kFirstClient].revents;
          if ((ev & POLLIN) != 0) {
            serve(*polled[i]);
            interactive_until_ = cycle() + kInteractiveCycles;
          } else if ((ev & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
            polled[i]->dead = true;
          }
        }
        sweep();
      }
      if (!is_idle()) {
        // Short batches while a client is mid-conversation (MMIO round trips), long ones otherwise.
        const unsigned batch = cycle() < interactive_until_ ? kBatchInteractive : kBatch;
        card_.run(batch);
        check_syncs();
        sweep();
      }
    }
  }

 private:
  template <class... Args>
  void log(fmt::format_string<Args...> f, Args&&... args) {
    if (opt_.verbose) fmt::print(stderr, "{}\n", fmt::format(f, std::forward<Args>(args)...));
  }

  static std::size_t mem_bytes(const Options& o) {
    if (o.mem_mib == 0 || o.mem_mib > 64 * 1024) throw std::runtime_error("--mem-mib must be 1..65536");
    return static_cast<std::size_t>(o.mem_mib) << 20;
  }

  std::uint64_t last_axi_activity() const { return card_.last_axi_activity(); }
  bool inputs_quiet() const { return card_.inputs_quiet(); }
  // Nothing queued, nothing waiting for the kernel, no AXI/stream/MMIO activity for --quiet-cycles.
  bool is_idle() const {
    for (const auto& c : clients_) {
      if (c->sync) return false;
    }
    return card_.quiet_for(opt_.quiet_cycles);
  }

  // ---- socket ---------------------------------------------------------------------------------------
  void listen_on(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr.sun_path) {
      throw std::runtime_error(
          fmt::format("socket path '{}' is empty or longer than {} bytes", path, sizeof addr.sun_path - 1));
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const auto* sa = reinterpret_cast<const sockaddr*>(&addr);
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) throw std::runtime_error(fmt::format("{} exists and is not a socket", path));
      Fd probe(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
      if (probe.get() < 0) throw std::runtime_error(errno_text("socket"));
      if (::connect(probe.get(), sa, sizeof addr) == 0) {
        throw std::runtime_error(fmt::format("another rnic-sim listens on {}", path));
      }
      if (errno != ECONNREFUSED) throw std::runtime_error(errno_text(("connect to " + path).c_str()));
      ::unlink(path.c_str());  // stale: nobody listens
      log("rnic-sim: removed stale socket {}", path);
    }
    listen_ = Fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (listen_.get() < 0) throw std::runtime_error(errno_text("socket"));
    if (::bind(listen_.get(), sa, sizeof addr) != 0) throw std::runtime_error(errno_text(("bind " + path).c_str()));
    bound_ = true;
    if (::listen(listen_.get(), 16) != 0) throw std::runtime_error(errno_text("listen"));
  }

  void accept_clients() {
    for (;;) {
      Fd fd(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (fd.get() < 0) return;  // EAGAIN, or a connection that went away before accept
      if (clients_.size() >= kMaxClients) {
        log("rnic-sim: refusing a client (already {})", clients_.size());
        continue;
      }
      auto c = std::make_unique<Client>();
      c->fd = std::move(fd);
      c->id = ++next_id_;
      log("rnic-sim: client {} connected", c->id);
      clients_.push_back(std::move(c));
    }
  }

  void sweep() {
    for (std::size_t i = 0; i < clients_.size();) {
      if (!clients_[i]->dead) {
        ++i;
        continue;
      }
      std::unique_ptr<Client> c = std::move(clients_[i]);
      clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(i));
      log("rnic-sim: client {} gone", c->id);
      if (c.get() == owner_ && !owner_gone()) {
        // The card may still write the dead owner's memory: it is never handed out again.
        std::uint64_t bytes = 0;
        for (std::uint64_t off : c->allocs) bytes += alloc_.size_of(off);
        fmt::print(stderr,
                   "rnic-sim: owner cleanup did not finish: {} blocks ({} bytes) of client {} quarantined for "
                   "the simulator's lifetime\n",
                   c->allocs.size(), bytes, c->id);
        continue;
      }
      for (std::uint64_t off : c->allocs) alloc_.free(off);
    }
  }

  // ---- replies ---------------------------------------------------------------------------------------
  void reply(Client& c, const proto::Header& req, Status st, const void* payload = nullptr, std::size_t n = 0,
             int pass_fd = -1) {
    if (c.dead) return;
    const proto::Header h{proto::kMagic, req.op, static_cast<std::uint16_t>(st), req.seq,
                          static_cast<std::uint32_t>(n)};
    // Never block on a client that does not read its replies: it is dropped instead.
    if (proto::send_message(c.fd.get(), h, payload, n, pass_fd) < 0) {
      log("rnic-sim: client {}: {}", c.id, errno_text("send"));
      c.dead = true;
    }
    if (st != Status::kOk) log("rnic-sim: client {} op {} -> {}", c.id, req.op, proto::status_name(st));
  }

  template <class T>
  void reply_with(Client& c, const proto::Header& req, Status st, const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    reply(c, req, st, &v, sizeof v);
  }

  // ---- requests --------------------------------------------------------------------------------------
  void serve(Client& c) {
    msghdr m{};
    iovec iov{rx_.data(), rx_.size()};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    const ssize_t n = ::recvmsg(c.fd.get(), &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) c.dead = true;
      return;
    }
    proto::Header h{};
    if (n == 0) {
      // On SOCK_SEQPACKET, 0 is both a zero-byte datagram and the end of the connection. A hang-up
      // shows in poll(); a zero-byte datagram is a message shorter than the header (kBadLength).
      pollfd p{c.fd.get(), POLLRDHUP, 0};
      if (::poll(&p, 1, 0) != 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0) {
        c.dead = true;
      } else {
        reply(c, h, Status::kBadLength);
      }
      return;
    }
    const auto got = static_cast<std::size_t>(n);
    if (got < sizeof h) {
      reply(c, h, Status::kBadLength);
      return;
    }
    std::memcpy(&h, rx_.data(), sizeof h);
    if (h.magic != proto::kMagic) {
      reply(c, h, Status::kBadMagic);
      c.dead = true;  // the stream cannot be trusted any more
      return;
    }
    const std::size_t len = got - sizeof h;
    if ((m.msg_flags & MSG_TRUNC) != 0 || h.length > proto::kMaxPayload || h.length != len) {
      reply(c, h, Status::kBadLength);
      return;
    }
    if (h.op < static_cast<std::uint16_t>(Op::kHello) || h.op > static_cast<std::uint16_t>(proto::kLastOp)) {
      reply(c, h, Status::kBadOp);
      return;
    }
    const Op op = static_cast<Op>(h.op);
    if (!c.hello && op != Op::kHello) {
      reply(c, h, Status::kNoHello);
      return;
    }
    try {
      dispatch(c, h, op, rx_.data() + sizeof h, len);
    } catch (const std::exception& e) {
      // The kernel did not answer (AXI-Lite timeout) or the capture failed: the client learns, the
      // simulator carries on.
      fmt::print(stderr, "rnic-sim: client {} op {}: {}\n", c.id, h.op, e.what());
      reply(c, h, Status::kTimeout);
    }
  }

  template <class T>
  static bool parse(const std::uint8_t* p, std::size_t len, T& out) {
    if (len != sizeof(T)) return false;
    std::memcpy(&out, p, sizeof(T));
    return true;
  }

  bool owner(const Client& c) const { return &c == owner_; }

  void dispatch(Client& c, const proto::Header& h, Op op, const std::uint8_t* p, std::size_t len) {
    switch (op) {
      case Op::kHello:
        return hello(c, h, p, len);
      case Op::kRead32: {
        proto::MmioReq r{};
        if (!parse(p, len, r)) return reply(c, h, Status::kBadLength);
        if (!card_.valid_register(r.offset)) return reply(c, h, Status::kBadAddress);
        const proto::MmioRep rep{card_.mmio_read(r.offset), 0};
        return reply_with(c, h, Status::kOk, rep);
      }
      case Op::kWrite32: {
        proto::MmioReq r{};
        if (!parse(p, len, r)) return reply(c, h, Status::kBadLength);
        if (!owner(c)) return reply(c, h, Status::kNotOwner);
        if (!card_.valid_register(r.offset)) return reply(c, h, Status::kBadAddress);
        card_.owner_write(r.offset, r.value);
        return reply(c, h, Status::kOk);
      }
      case Op::kAlloc: {
        proto::AllocReq r{};
        if (!parse(p, len, r)) return reply(c, h, Status::kBadLength);
        if (!owner(c)) return reply(c, h, Status::kNotOwner);
        const std::uint64_t align = r.align == 0 ? 4096 : r.align;
        if (r.bytes == 0 || align < 64 || (align & (align - 1)) != 0) return reply(c, h, Status::kBadArgument);
        const auto off = alloc_.alloc(r.bytes, align);
        if (!off) return reply(c, h, Status::kNoMemory);
        std::memset(mem_->data() + *off, 0, static_cast<std::size_t>(r.bytes));
        c.allocs.insert(*off);
        return reply_with(c, h, Status::kOk, proto::AllocRep{kMemBase + *off});
      }
      case Op::kFree: {
        proto::FreeReq r{};
        if (!parse(p, len, r)) return reply(c, h, Status::kBadLength);
        if (!owner(c)) return reply(c, h, Status::kNotOwner);
        const std::uint64_t off = r.device_addr - kMemBase;
        if (r.device_addr < kMemBase || c.allocs.count(off) == 0) return reply(c, h, Status::kNotAllocated);
        c.allocs.erase(off);
        alloc_.free(off);
        return reply(c, h, Status::kOk);
      }
      case Op::kInject:
        return inject(c, h, p, len);
      case Op::kSync: {
        proto::SyncReq r{};
        if (!parse(p, len, r)) return reply(c, h, Status::kBadLength);
        c.sync = PendingSync{h, cycle(), r.quiet_cycles == 0 ? 64 : r.quiet_cycles,
                             r.max_cycles == 0 ? 10'000'000 : r.max_cycles};
        return;  // answered by check_syncs()
      }
      case Op::kStatus: {
        if (len != 0) return reply(c, h, Status::kBadLength);
        proto::StatusRep s{};
        s.cycles = cycle();
        s.injected = injected_;
        s.ingress_queued = axis_->pending();
        s.mem_base = kMemBase;
        s.mem_bytes = mem_->size();
        s.mem_used = alloc_.used();
        s.owner_pid = owner_pid();
        s.clients = static_cast<std::uint32_t>(clients_.size());
        s.axi_errors = slave_->errors() + (net_ ? net_->axi_errors() : 0);
        if (net_) {
          s.udp_port = net_->port();
          s.net_in = net_->stats().in;
          s.net_out = net_->stats().out;
          s.net_dropped = net_->stats().dropped;
          s.net_empty = net_->stats().empty;
        }
        return reply_with(c, h, Status::kOk, s);
      }
      case Op::kPublish: {
        if (!owner(c)) return reply(c, h, Status::kNotOwner);
        const auto* b = reinterpret_cast<const char*>(p);
        // Empty withdraws the document (the driver's close does that); anything else must be JSON.
        if (len != 0 && !nlohmann::json::accept(b, b + len)) return reply(c, h, Status::kBadArgument);
        published_.assign(b, len);
        return reply(c, h, Status::kOk);
      }
      case Op::kGetState: {
        if (len != 0) return reply(c, h, Status::kBadLength);
        return reply(c, h, Status::kOk, published_.data(), published_.size());
      }
      case Op::kNetSocket: {
        proto::NetSocketReq r{};
        if (!parse(p, len, r)) return reply(c, h, Status::kBadLength);
        // The simulated network layer's socket table is the wire's, not the card's: with XRT owning the
        // card, the simulator's clients (the harness) set it.
        if (!owner(c) && !xrt_) return reply(c, h, Status::kNotOwner);
        if (!net_) return reply(c, h, Status::kNoNetwork);
        if (!net_->set_socket(r)) return reply(c, h, Status::kBadArgument);
        if (r.valid != 0) card_.owner_socket(r.index);
        return reply(c, h, Status::kOk);
      }
    }
    reply(c, h, Status::kBadOp);
  }

  void hello(Client& c, const proto::Header& h, const std::uint8_t* p, std::size_t len) {
    proto::HelloReq r{};
    if (!parse(p, len, r)) return reply(c, h, Status::kBadLength);
    if (c.hello) return reply(c, h, Status::kBadArgument);  // said HELLO already
    proto::HelloRep rep{proto::kVersion, 0, owner_pid(), kMemBase, mem_->size(), cycle()};
    if (r.version != proto::kVersion) return reply_with(c, h, Status::kBadVersion, rep);
    if (r.role != proto::kRoleOwner && r.role != proto::kRoleObserver) return reply(c, h, Status::kBadArgument);
    if (r.role == proto::kRoleOwner && (owner_ != nullptr || xrt_)) return reply_with(c, h, Status::kOwned, rep);
    c.hello = true;
    c.role = r.role;
    c.pid = r.pid;
    if (r.role == proto::kRoleOwner) {
      owner_ = &c;
      rep.owner_pid = r.pid;
    }
    log("rnic-sim: client {} HELLO as {} (pid {})", c.id, r.role == proto::kRoleOwner ? "owner" : "observer", r.pid);
    // The owner alone writes host memory: an observer gets a descriptor opened read-only (its mmap
    // with PROT_WRITE fails with EACCES).
    reply(c, h, Status::kOk, &rep, sizeof rep, r.role == proto::kRoleOwner ? mem_->fd() : mem_->read_only_fd());
  }

  void inject(Client& c, const proto::Header& h, const std::uint8_t* p, std::size_t len) {
    proto::InjectReq r{};
    if (len < sizeof r) return reply(c, h, Status::kBadLength);
    std::memcpy(&r, p, sizeof r);
    if (len - sizeof r != r.bytes) return reply(c, h, Status::kBadLength);
    if (r.bytes == 0 || r.bytes > max_seg_bytes_ + wire::kUntaggedHeaderSize || r.stream >= streams_) {
      return reply(c, h, Status::kBadArgument);
    }
    if (axis_->pending() >= kIngressCapacity) return reply(c, h, Status::kBusy);
    bus::AxisPacket pkt;
    pkt.bytes.assign(p + sizeof r, p + len);
    pkt.stream = r.stream;
    pkt.ssn = r.ssn;
    if (pcap_) {
      pcap_->write_data(r.stream, wire::kPpidDdpSegment, wire::encode_segment_chunk(r.ssn, pkt.bytes));
    }
    axis_->push(std::move(pkt));
    ++injected_;
    reply(c, h, Status::kOk);
  }

  // A sync is answered once the card has been quiet for its quiet cycles, plus one cycle per input
  // beat accepted since the card last wrote host memory or sent: a segment the kernel drops or fails
  // (an oversize one, say) is discarded one beat per cycle without any bus activity before its error
  // completion is written, and the kernel's receive FIFO can hold many beats of it.
  void check_syncs() {
    const bool quiet_base = inputs_quiet();
    const std::uint64_t last = last_axi_activity();
    const std::uint64_t out = std::max(slave_->last_activity(), net_ ? net_->last_activity() : 0);
    if (out != out_seen_) {
      out_seen_ = out;
      beats_at_out_ = axis_->beats_accepted();
    }
    const std::uint64_t unanswered = axis_->beats_accepted() - beats_at_out_;
    for (auto& c : clients_) {
      if (!c->sync) continue;
      const PendingSync s = *c->sync;
      const proto::SyncRep rep{cycle()};
      if (quiet_base && cycle() - last >= s.quiet + unanswered) {
        c->sync.reset();
        reply_with(*c, s.req, Status::kOk, rep);
      } else if (cycle() - s.start >= s.max) {
        c->sync.reset();
        reply_with(*c, s.req, Status::kTimeout, rep);
      }
    }
  }

  // ---- XrtCard: XRT's calls -------------------------------------------------------------------------
  bool valid_register(std::uint32_t off) const override { return card_.valid_register(off); }
  std::uint32_t read_register(std::uint32_t off) override { return card_.mmio_read(off); }
  void write_register(std::uint32_t off, std::uint32_t v) override { card_.owner_write(off, v); }
  std::uint64_t cycle() const override { return card_.cycle(); }

  // The owner's process: a client's, or (--xrt) XRT's, the process that started the simulator.
  std::uint32_t owner_pid() const {
    if (owner_) return owner_->pid;
    return xrt_ ? static_cast<std::uint32_t>(::getppid()) : 0;
  }

  // The owner is gone: the card undoes what it programmed (Card::owner_gone), its tables go with it.
  bool owner_gone() override {
    const bool clean = card_.owner_gone();
    owner_ = nullptr;
    published_.clear();
    return clean;
  }

  Options opt_;
  std::unique_ptr<MemRegion> mem_;
  std::unique_ptr<XrtSession> xrt_;  // --xrt: XRT owns the card
  Allocator alloc_;
  Card<Top> card_;
  // The card's parts (owned by card_).
  bus::AxisSource<Top>* axis_ = &card_.axis();
  AxiSlave<Top>* slave_ = &card_.slave();
  NetPortBase* net_ = card_.net();
  std::unique_ptr<capture::SctpCaptureWriter> pcap_;
  Fd listen_;
  bool bound_ = false;
  std::vector<std::unique_ptr<Client>> clients_;
  std::uint64_t next_id_ = 0;
  Client* owner_ = nullptr;
  std::string published_;
  const std::uint32_t streams_, qns_, max_seg_bytes_;
  std::uint64_t injected_ = 0;
  std::uint64_t out_seen_ = 0, beats_at_out_ = 0;  // check_syncs: the last host-memory or send activity seen
  std::uint64_t interactive_until_ = 0;
  std::vector<std::uint8_t> rx_;
};

// The SystemC model at the Verilated model's default parameters (rnic_kernel's defaults).
using HlsDefault = rnic::hls::Config<>;

std::unique_ptr<Server::Impl> make_impl(const Options& o) {
  if (o.model == "rtl") return std::make_unique<KernelServer<Vrnic_kernel>>(o);
  if (o.model == "systemc" && !o.fst.empty())
    throw std::runtime_error("--fst writes the Verilated RTL's waveform: use it with --model rtl");
  if (o.model == "systemc") return std::make_unique<KernelServer<rnic::bus::ScKernel<HlsDefault>>>(o);
  throw std::runtime_error("--model must be rtl or systemc, not '" + o.model + "'");
}

Server::Server(const Options& o) : impl_(make_impl(o)) {}
Server::~Server() = default;
int Server::run(int signal_fd) { return impl_->run(signal_fd); }

}  // namespace rnic::sim
