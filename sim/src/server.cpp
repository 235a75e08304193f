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
#include <chrono>
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
constexpr std::uint64_t kCmdTimeoutCycles = 2'000'000;

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

// Offsets of the RNIC_REG rows of hw.def.
constexpr std::uint32_t kRegRows[] = {
#define RNIC_REG(name, offset, access, desc) offset,
#include "rnic/hw/hw.def"
};

}  // namespace

// The card of one implementation (Top: the Verilated rnic_kernel, or the SystemC model behind the same
// ports).
template <class Top>
class KernelServer final : public Server::Impl {
  // Bus width of the model (DATA_WIDTH / 8), checked against CAP_DATA_WIDTH at start.
  static constexpr unsigned kBusBytes =
      static_cast<unsigned>(sizeof(std::remove_reference_t<decltype(std::declval<Top&>().s_axis_rx_tdata)>));

 public:
  explicit KernelServer(const Options& o) : opt_(o), alloc_(mem_bytes(o)) {
    mem_ = std::make_unique<MemRegion>(kMemBase, mem_bytes(o));
    if (o.fst.empty()) {
      unsetenv("RNIC_FST");
    } else {
      setenv("RNIC_FST", o.fst.c_str(), 1);  // rnic::bus::Sim opens the FST dump from it
    }
    sim_ = std::make_unique<bus::Sim<Top>>();
    mmio_ = std::make_unique<bus::AxiLiteMaster<Top>>(*sim_);
    axis_ = std::make_unique<bus::AxisSource<Top>>(*sim_, kBusBytes, 1);
    slave_ = std::make_unique<AxiSlave<Top>>(*sim_, *mem_, kBusBytes);
    if (o.udp_port >= 0) {
      net_ = make_net_port<Top>(*sim_, *mem_, kBusBytes, o.udp_port, o.net_path);
      if (!net_) throw std::runtime_error("--udp-port needs --model rtl: the SystemC model has no network ports");
    }
    sim_->reset();
    const std::uint32_t width = mmio_->read32(hw::kRegCAP_DATA_WIDTH);
    streams_ = mmio_->read32(hw::kRegCAP_STREAMS);
    // Longer segments are cut and reported by the kernel, so the ingress takes up to this plus the
    // largest header.
    max_seg_bytes_ = mmio_->read32(hw::kRegCAP_MAX_SEG_BYTES);
    qns_ = mmio_->read32(hw::kRegCAP_QNS);
    if (mmio_->read32(hw::kRegID) != hw::kID_VALUE || width != 8 * kBusBytes) {
      throw std::runtime_error("the Verilated kernel does not identify as rnic_kernel");
    }
    // The kernel's network side (NET = 1): CAP_NET_ASSOCS reads 0 without it.
    net_side_ = mmio_->read32(hw::kRegCAP_NET_ASSOCS) != 0;
    if (net_ && !net_side_) {
      throw std::runtime_error("--udp-port: this kernel was built without its network side (NET = 0)");
    }
    // After reset the kernel clears its tables, one row per cycle: lookup the longest of the STag table,
    // the stream table and the queues (CAP_STAGS, CAP_STREAMS * CAP_QNS), deliver its stream words.
    // Commands and segments wait meanwhile; the simulator lets it finish before it serves.
    const std::uint32_t stags = mmio_->read32(hw::kRegCAP_STAGS);
    const std::uint64_t clear = std::max<std::uint64_t>(stags, std::uint64_t{streams_} * qns_) + 1024;
    for (std::uint64_t i = 0; i < clear; ++i) sim_->tick();
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
  }

  ~KernelServer() override {
    clients_.clear();
    listen_.reset();
    if (bound_) ::unlink(opt_.socket.c_str());
    if (pcap_) pcap_->close();
  }

  void run(int signal_fd) override {
    std::vector<pollfd> pf;
    std::vector<Client*> polled;
    for (;;) {
      // A quiet card releases what the network path holds back: a reordered datagram comes late, not never.
      if (net_ && net_->holding() && is_idle()) net_->flush();
      const bool idle = is_idle();
      pf.clear();
      polled.clear();
      pf.push_back(pollfd{signal_fd, POLLIN, 0});
      pf.push_back(pollfd{listen_.get(), POLLIN, 0});
      pf.push_back(pollfd{net_ ? net_->fd() : -1, POLLIN, 0});  // fd -1: poll ignores the entry
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
          log_speed();
          return;
        }
        if ((pf[1].revents & POLLIN) != 0) accept_clients();
        if ((pf[2].revents & POLLIN) != 0) net_->receive();
        for (std::size_t i = 0; i < polled.size(); ++i) {
          const short ev = pf[i + 3].revents;
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
        const auto t0 = std::chrono::steady_clock::now();
        for (unsigned i = 0; i < batch; ++i) sim_->tick();
        run_time_ += std::chrono::steady_clock::now() - t0;
        run_cycles_ += batch;
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

  std::uint64_t cycle() const { return sim_->cycle(); }

  // The simulation speed while the card runs (the batches of the main loop: traffic, and the quiet
  // tail after it; not the MMIO round trips' few cycles): scripts/bench.sh reads this line.
  void log_speed() {
    const double secs = std::chrono::duration<double>(run_time_).count();
    log("rnic-sim: ran {} of {} cycles in batches, {:.3f} s: {:.0f} cycles/s", run_cycles_, cycle(), secs,
        secs > 0 ? static_cast<double>(run_cycles_) / secs : 0.0);
  }
  std::uint64_t last_axi_activity() const {
    const std::uint64_t net = net_ ? net_->last_activity() : 0;
    return std::max({slave_->last_activity(), axis_->last_accept_cycle(), net});
  }
  bool inputs_quiet() const { return axis_->empty() && slave_->idle() && (!net_ || net_->idle()); }
  // Nothing queued, nothing waiting for the kernel, no AXI/stream/MMIO activity for --quiet-cycles.
  bool is_idle() const {
    if (!inputs_quiet()) return false;
    for (const auto& c : clients_) {
      if (c->sync) return false;
    }
    const std::uint64_t last = std::max(last_axi_activity(), last_mmio_);
    return cycle() - last >= opt_.quiet_cycles;
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
        if (!valid_register(r.offset)) return reply(c, h, Status::kBadAddress);
        const proto::MmioRep rep{mmio_read(r.offset), 0};
        return reply_with(c, h, Status::kOk, rep);
      }
      case Op::kWrite32: {
        proto::MmioReq r{};
        if (!parse(p, len, r)) return reply(c, h, Status::kBadLength);
        if (!owner(c)) return reply(c, h, Status::kNotOwner);
        if (!valid_register(r.offset)) return reply(c, h, Status::kBadAddress);
        if (r.offset == hw::kRegCMD) snoop_command(r.value);
        snoop_net(r.offset, r.value);
        mmio_write(r.offset, r.value);
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
        s.owner_pid = owner_ ? owner_->pid : 0;
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
        if (!owner(c)) return reply(c, h, Status::kNotOwner);
        if (!net_) return reply(c, h, Status::kNoNetwork);
        if (!net_->set_socket(r)) return reply(c, h, Status::kBadArgument);
        if (r.valid != 0) owner_sockets_.insert(r.index);
        return reply(c, h, Status::kOk);
      }
    }
    reply(c, h, Status::kBadOp);
  }

  void hello(Client& c, const proto::Header& h, const std::uint8_t* p, std::size_t len) {
    proto::HelloReq r{};
    if (!parse(p, len, r)) return reply(c, h, Status::kBadLength);
    if (c.hello) return reply(c, h, Status::kBadArgument);  // said HELLO already
    proto::HelloRep rep{proto::kVersion, 0, owner_ ? owner_->pid : 0, kMemBase, mem_->size(), cycle()};
    if (r.version != proto::kVersion) return reply_with(c, h, Status::kBadVersion, rep);
    if (r.role != proto::kRoleOwner && r.role != proto::kRoleObserver) return reply(c, h, Status::kBadArgument);
    if (r.role == proto::kRoleOwner && owner_ != nullptr) return reply_with(c, h, Status::kOwned, rep);
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

  // ---- MMIO ------------------------------------------------------------------------------------------
  // The register map: the RNIC_REG rows, every register of the RNIC_REG_ARRAY rows (CMD_ARG0..15,
  // NET_ASSOC_ARG0..6, NET_CNT0..9) and the per-error counters. A kernel without its
  // network side answers that window's rows SLVERR, read as 0, as any row it does not decode: the same
  // on every model, so a reader (rnicctl counters, regs) sees zeros, not an error.
  bool valid_register(std::uint32_t off) const {
    if (off % 4 != 0 || off >= hw::kMMIO_BYTES) return false;
    if (off >= hw::kRegNET_ASSOC_ARG0 && off < hw::reg_net_assoc_arg(hw::kNET_ASSOC_ARGS)) return true;
    if (off >= hw::kRegNET_CNT0 && off < hw::reg_net_counter(hw::kNET_COUNTERS)) return true;
    if (std::find(std::begin(kRegRows), std::end(kRegRows), off) != std::end(kRegRows)) return true;
    if (off >= hw::kRegCMD_ARG0 && off < hw::reg_cmd_arg(hw::kCMD_ARGS)) return true;
    const auto rows = static_cast<unsigned>(wire::kAllDdpErrors.size());
    return off >= hw::kRegCNT_ERROR0_LO && off < hw::reg_error_counter_lo(rows);
  }

  std::uint32_t mmio_read(std::uint32_t off) {
    const std::uint32_t v = mmio_->read32(off);
    last_mmio_ = cycle();
    return v;
  }
  void mmio_write(std::uint32_t off, std::uint32_t v) {
    mmio_->write32(off, v);
    last_mmio_ = cycle();
  }

  // What the owner programmed, for owner_gone(): every STag index it wrote and every stream it
  // enabled or configured, as the card sees them: the opcode is CMD[7:0] (the card ignores the upper
  // bits) and the index or stream argument is read back from the card's register. A command the card
  // ignores or refuses only adds an entry that is cleaned up needlessly.
  static_assert(hw::kArgSTREAM_ENABLE_STREAM.word == hw::kArgQUEUE_CONFIG_STREAM.word &&
                hw::kArgSTREAM_ENABLE_STREAM.mask() == hw::kArgQUEUE_CONFIG_STREAM.mask());
  void snoop_command(std::uint32_t v) {
    const std::uint32_t op = hw::cmd_opcode(v);
    if (op == hw::kCmdSTAG_WRITE) {
      owner_stags_.insert(arg_of(hw::kArgSTAG_WRITE_INDEX));
    } else if (op == hw::kCmdSTREAM_ENABLE || op == hw::kCmdQUEUE_CONFIG) {
      owner_streams_.insert(arg_of(hw::kArgSTREAM_ENABLE_STREAM));
    }
  }
  std::uint32_t arg_of(const hw::ArgField& f) { return f.get(mmio_read(hw::reg_cmd_arg(f.word))); }

  // What the owner set on the network side, for owner_gone(): association entries written and streams
  // made live (NET_ASSOC_CMD WRITE, NET_STREAM_LIVE LIVE).
  void snoop_net(std::uint32_t off, std::uint32_t v) {
    if (!net_side_) return;
    if (off == hw::kRegNET_ASSOC_CMD && hw::kNET_ASSOC_CMD_WRITE.get(v) != 0)
      owner_assocs_.insert(hw::kNET_ASSOC_CMD_INDEX.get(v));
    if (off == hw::kRegNET_STREAM_LIVE && hw::kNET_STREAM_LIVE_LIVE.get(v) != 0)
      owner_live_.insert(hw::kNET_STREAM_LIVE_STREAM.get(v));
  }

  // The network side's part of owner_gone(): both packet rings off (their memory is the owner's: free
  // only once no ring write or read is in flight, NET_RX_CTRL / NET_TX_CTRL bit 1), every stream it made
  // live cleared, every association entry it wrote cleared (fenced: NET_ASSOC_STATUS busy until the
  // packets that came before have left the front end), its sockets unset. False if anything stayed busy.
  bool net_owner_gone() {
    if (!net_side_) return true;
    bool clean = true;
    mmio_write(hw::kRegNET_RX_CTRL, 0);
    mmio_write(hw::kRegNET_TX_CTRL, 0);
    for (std::uint32_t stream : owner_live_) {
      mmio_write(hw::kRegNET_STREAM_LIVE, hw::kNET_STREAM_LIVE_STREAM.put(stream));  // LIVE 0
    }
    for (std::uint32_t idx : owner_assocs_) {
      clean = wait_clear(hw::kRegNET_ASSOC_STATUS, hw::kNET_ASSOC_STATUS_BUSY.mask()) && clean;
      mmio_write(hw::kRegNET_ASSOC_CMD, hw::kNET_ASSOC_CMD_INDEX.put(idx));  // WRITE 0: clear
    }
    clean = wait_clear(hw::kRegNET_ASSOC_STATUS, hw::kNET_ASSOC_STATUS_BUSY.mask()) && clean;
    for (std::uint32_t reg : {hw::kRegNET_RX_CTRL, hw::kRegNET_TX_CTRL}) {
      if (!wait_clear(reg, hw::kNET_RX_CTRL_BUSY.mask())) {
        fmt::print(stderr, "rnic-sim: packet ring (0x{:x}) still busy after {} cycles\n", reg, kCmdTimeoutCycles);
        clean = false;
      }
    }
    if (net_) {
      for (std::uint32_t i : owner_sockets_) net_->set_socket(proto::NetSocketReq{i, 0, 0, 0});
    }
    owner_assocs_.clear();
    owner_live_.clear();
    owner_sockets_.clear();
    return clean;
  }

  // Reads reg until (value & mask) == 0; false after kCmdTimeoutCycles.
  bool wait_clear(std::uint32_t reg, std::uint32_t mask) {
    const std::uint64_t t0 = cycle();
    while ((mmio_read(reg) & mask) != 0) {
      if (cycle() - t0 > kCmdTimeoutCycles) return false;
    }
    return true;
  }

  // Runs a command as a driver would (rnic/hw/command.hpp): wait for an earlier one, then its one
  // argument (arg: where it goes) and the opcode until CMD_STATUS is not busy. False when busy never
  // clears within kCmdTimeoutCycles.
  bool command(std::uint32_t op, const hw::ArgField& arg, std::uint32_t arg0) {
    const auto read = [this](std::uint32_t off) { return mmio_read(off); };
    std::uint64_t t0 = cycle();
    const auto again = [&] { return cycle() - t0 <= kCmdTimeoutCycles; };  // each read takes cycles
    if (!hw::wait_cmd_idle(read, again)) {
      fmt::print(stderr, "rnic-sim: an earlier command is still busy after {} cycles; {} ({}) not issued\n",
                 kCmdTimeoutCycles, op, arg0);
      return false;
    }
    t0 = cycle();
    const auto write = [this](std::uint32_t off, std::uint32_t v) { mmio_write(off, v); };
    const hw::CmdArgs args = hw::CmdArgs().set(arg, arg0);
    if (hw::run_command(read, write, again, op, args.data(), args.size())) return true;
    fmt::print(stderr, "rnic-sim: command {} ({}) still busy after {} cycles\n", op, arg0, kCmdTimeoutCycles);
    return false;
  }

  // RFC 5041 8.3.2: what a kernel driver does when the owning process exits (and, with a network
  // port, net_owner_gone() for the packet rings and the association table). The CQ goes off first:
  // nobody drains the ring any more, and with the CQ disabled the card discards completions, so the
  // fenced commands (STAG_INVALIDATE, STREAM_TEARDOWN: busy until every write and completion decided
  // before them is done) can finish; then CQ_CTRL.busy must read 0 (no completion write loaded before
  // the disable still in flight). When all of that finished, nothing the owner left can be written
  // and sweep() frees its memory; otherwise (false) the memory is quarantined.
  bool owner_gone() {
    log("rnic-sim: owner gone: disabling the CQ, invalidating {} STags, tearing down {} streams", owner_stags_.size(),
        owner_streams_.size());
    bool clean = true;
    try {
      mmio_write(hw::kRegCQ_CTRL, 0);
      for (std::uint32_t idx : owner_stags_)
        clean = command(hw::kCmdSTAG_INVALIDATE, hw::kArgSTAG_INVALIDATE_INDEX, idx) && clean;
      for (std::uint32_t s : owner_streams_)
        clean = command(hw::kCmdSTREAM_TEARDOWN, hw::kArgSTREAM_TEARDOWN_STREAM, s) && clean;
      // The ring is the owner's memory: free only once no completion write is in flight.
      if (!wait_clear(hw::kRegCQ_CTRL, hw::kCQ_CTRL_BUSY.mask())) {
        fmt::print(stderr, "rnic-sim: completion ring still busy after {} cycles\n", kCmdTimeoutCycles);
        clean = false;
      }
      clean = net_owner_gone() && clean;
    } catch (const std::exception& e) {
      fmt::print(stderr, "rnic-sim: owner cleanup: {}\n", e.what());
      clean = false;
    }
    owner_stags_.clear();
    owner_streams_.clear();
    owner_ = nullptr;
    published_.clear();  // the owner's tables are gone with it
    return clean;
  }

  Options opt_;
  std::unique_ptr<MemRegion> mem_;
  Allocator alloc_;
  std::unique_ptr<bus::Sim<Top>> sim_;
  std::unique_ptr<bus::AxiLiteMaster<Top>> mmio_;
  std::unique_ptr<bus::AxisSource<Top>> axis_;
  std::unique_ptr<AxiSlave<Top>> slave_;
  std::unique_ptr<NetPortBase> net_;
  bool net_side_ = false;  // the kernel has its network side (NET = 1): the window answers
  std::set<std::uint32_t> owner_assocs_, owner_live_, owner_sockets_;
  std::unique_ptr<capture::SctpCaptureWriter> pcap_;
  Fd listen_;
  bool bound_ = false;
  std::vector<std::unique_ptr<Client>> clients_;
  std::uint64_t next_id_ = 0;
  Client* owner_ = nullptr;
  std::uint32_t owner_arg0_ = 0;
  std::set<std::uint32_t> owner_stags_, owner_streams_;
  std::string published_;
  std::uint32_t streams_ = 0, qns_ = 0, max_seg_bytes_ = 0;
  std::uint64_t injected_ = 0, last_mmio_ = 0;
  std::uint64_t out_seen_ = 0, beats_at_out_ = 0;  // check_syncs: the last host-memory or send activity seen
  std::uint64_t interactive_until_ = 0;
  std::uint64_t run_cycles_ = 0;                    // cycles ticked by the main loop
  std::chrono::steady_clock::duration run_time_{};  // and the time they took
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
void Server::run(int signal_fd) { impl_->run(signal_fd); }

}  // namespace rnic::sim
