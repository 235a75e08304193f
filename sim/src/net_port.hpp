// SPDX-License-Identifier: Apache-2.0
// rnic-sim's network port (docs/network.md): the kernel's s_axis_net / m_axis_net on a UDP socket on
// 127.0.0.1 (RFC 6951: SCTP packets carried in UDP datagrams), playing the part VNx's network layer
// plays on a card, and m_axi_net (the packet rings) on the simulator's host memory.
//
// - In: every datagram that arrives goes through the seeded path (sim/simnet PathImpairment: loss,
//   duplication, reordering) and then to s_axis_net with tuser = {their UDP port, my UDP port, their
//   IPv4, my IPv4 (127.0.0.1)}. Unlike VNx, which delivers only datagrams of a socket in its table,
//   every datagram goes to the card: any bytes from anyone reach it, as on an open network. A
//   datagram that finds kQueueCapacity packets still waiting is dropped (counted), like a full FIFO.
// - Out: a packet the card sends with tdest = socket goes to that socket's address (the socket table,
//   set by the owner with NETSOCKET as a host sets VNx's), through its own seeded path; to a socket
//   that is not set it is dropped (counted).
// Held datagrams leave at flush(): the server calls it when the card has gone quiet, so a reordered
// datagram is late, never lost.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "host_memory.hpp"
#include "rnic/bus/axi_ports.hpp"
#include "rnic/bus/net_stream.hpp"
#include "rnic/bus/sim.hpp"
#include "rnic/capture/sctp_capture.hpp"
#include "rnic/sim_protocol/protocol.hpp"
#include "rnic/simnet/path_impairment.hpp"

namespace rnic::sim {

struct NetPortStats {
  std::uint64_t in = 0;       // datagrams handed to the card
  std::uint64_t out = 0;      // packets the card sent that left on the socket
  std::uint64_t dropped = 0;  // queue full, socket not set, or sendto failed
  std::uint64_t empty = 0;    // empty datagrams: no packet, nothing for the card
};

// What the server uses of a network port (one per simulator at most).
class NetPortBase {
 public:
  virtual ~NetPortBase() = default;
  virtual int fd() const = 0;
  virtual std::uint16_t port() const = 0;
  virtual const NetPortStats& stats() const = 0;
  virtual std::uint64_t axi_errors() const = 0;
  virtual bool idle() const = 0;
  virtual std::uint64_t last_activity() const = 0;
  virtual bool holding() const = 0;
  virtual void receive() = 0;
  virtual void flush() = 0;
  virtual bool set_socket(const sim_protocol::NetSocketReq& r) = 0;
};

template <class Top>
class NetPort final : public NetPortBase {
 public:
  static constexpr std::size_t kQueueCapacity = 1024;
  static constexpr std::size_t kMaxDatagram = 65535;
  static constexpr std::uint32_t kLoopback = 0x7F000001;

  // Binds 127.0.0.1:port (0: any free port). Throws std::runtime_error with the reason.
  // pcap (non-empty): every datagram the card takes from the path and every one it sends, as
  // Ethernet/IPv4/UDP frames (--net-pcap: what a tap on the card's port would see).
  NetPort(bus::Sim<Top>& sim, BusMemory& mem, unsigned bus_bytes, int port, const simnet::ImpairmentConfig& path,
          const std::string& pcap)
      : source_(sim, bus_bytes),
        sink_(sim, bus_bytes),
        slave_(sim, mem, bus_bytes),
        in_path_(path),
        out_path_(with_seed(path, path.seed ^ 0x6F7574ull)),
        buf_(kMaxDatagram) {
    if (port < 0 || port > 0xFFFF) throw std::runtime_error("--udp-port must be 0..65535");
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("UDP socket: ") + std::strerror(errno));
    sockaddr_in a = address(kLoopback, static_cast<std::uint16_t>(port));
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
      const std::string why = std::strerror(errno);
      ::close(fd_);
      throw std::runtime_error("UDP bind 127.0.0.1:" + std::to_string(port) + ": " + why);
    }
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    if (!pcap.empty()) capture_ = std::make_unique<capture::UdpCaptureWriter>(pcap);
    sink_.on_packet([this](typename bus::NetSink<Top>::Packet p) { send(std::move(p)); });
  }
  ~NetPort() { ::close(fd_); }
  NetPort(const NetPort&) = delete;
  NetPort& operator=(const NetPort&) = delete;

  int fd() const override { return fd_; }
  std::uint16_t port() const override { return port_; }
  const NetPortStats& stats() const override { return stats_; }
  std::uint64_t axi_errors() const override { return slave_.errors(); }
  bool idle() const override { return source_.empty() && slave_.idle(); }
  std::uint64_t last_activity() const override {
    return std::max({source_.last_accept_cycle(), sink_.last_activity(), slave_.last_activity()});
  }
  bool holding() const override { return in_path_.held() + out_path_.held() > 0; }

  // Every datagram waiting on the socket, through the path to the card.
  void receive() override {
    for (;;) {
      sockaddr_in from{};
      socklen_t len = sizeof from;
      const ssize_t n =
          ::recvfrom(fd_, buf_.data(), buf_.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len);
      if (n < 0) return;  // EAGAIN (or an ICMP error of an earlier send): nothing more now
      if (from.sin_family != AF_INET) continue;
      if (n == 0) {  // an empty datagram carries no packet: counted here, the card never sees it
        ++stats_.empty;
        continue;
      }
      // The path carries the sender's address in front of the bytes, so a held datagram keeps it.
      std::vector<std::uint8_t> d(6 + static_cast<std::size_t>(n));
      std::memcpy(d.data(), &from.sin_addr.s_addr, 4);
      std::memcpy(d.data() + 4, &from.sin_port, 2);
      std::memcpy(d.data() + 6, buf_.data(), static_cast<std::size_t>(n));
      in_path_.offer(std::move(d), [this](std::vector<std::uint8_t> x) { to_card(std::move(x)); });
    }
  }

  // Everything the paths hold leaves now.
  void flush() override {
    in_path_.flush([this](std::vector<std::uint8_t> x) { to_card(std::move(x)); });
    out_path_.flush([this](std::vector<std::uint8_t> x) { to_wire(std::move(x)); });
  }

  // NETSOCKET: false for an index outside the table.
  bool set_socket(const sim_protocol::NetSocketReq& r) override {
    if (r.index >= sockets_.size()) return false;
    sockets_[r.index] = Socket{r.valid != 0, r.ip, r.port};
    return true;
  }

 private:
  struct Socket {
    bool valid = false;
    std::uint32_t ip = 0;
    std::uint16_t port = 0;
  };

  static simnet::ImpairmentConfig with_seed(simnet::ImpairmentConfig c, std::uint64_t seed) {
    c.seed = seed;
    return c;
  }
  static sockaddr_in address(std::uint32_t ip, std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(ip);
    a.sin_port = htons(port);
    return a;
  }

  void to_card(std::vector<std::uint8_t> d) {
    if (source_.pending() >= kQueueCapacity) {
      ++stats_.dropped;
      return;
    }
    std::uint32_t ip_be = 0;
    std::uint16_t port_be = 0;
    std::memcpy(&ip_be, d.data(), 4);
    std::memcpy(&port_be, d.data() + 4, 2);
    bus::NetPacket p;
    p.bytes.assign(d.begin() + 6, d.end());
    p.meta = bus::NetMeta{kLoopback, ntohl(ip_be), port_, ntohs(port_be)};
    if (capture_) capture_->write({ntohl(ip_be), ntohs(port_be)}, {kLoopback, port_}, wire::ConstBytes(p.bytes));
    source_.push(std::move(p));
    ++stats_.in;
  }

  // A packet of the card: its socket's address in front, through the outbound path.
  void send(typename bus::NetSink<Top>::Packet p) {
    if (p.socket >= sockets_.size() || !sockets_[p.socket].valid || p.bytes.empty()) {
      ++stats_.dropped;
      return;
    }
    const Socket& s = sockets_[p.socket];
    std::vector<std::uint8_t> d(6 + p.bytes.size());
    std::memcpy(d.data(), &s.ip, 4);
    std::memcpy(d.data() + 4, &s.port, 2);
    std::memcpy(d.data() + 6, p.bytes.data(), p.bytes.size());
    out_path_.offer(std::move(d), [this](std::vector<std::uint8_t> x) { to_wire(std::move(x)); });
  }

  void to_wire(std::vector<std::uint8_t> d) {
    std::uint32_t ip = 0;
    std::uint16_t port = 0;
    std::memcpy(&ip, d.data(), 4);
    std::memcpy(&port, d.data() + 4, 2);
    const sockaddr_in a = address(ip, port);
    if (::sendto(fd_, d.data() + 6, d.size() - 6, MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0) {
      ++stats_.dropped;  // no listener yet, or the socket buffer is full: a lost datagram, as on a wire
      return;
    }
    ++stats_.out;
    if (capture_) {
      capture_->write({kLoopback, port_}, {ntohl(ip), ntohs(port)}, wire::ConstBytes(d.data() + 6, d.size() - 6));
    }
  }

  bus::NetSource<Top> source_;
  bus::NetSink<Top> sink_;
  AxiSlave<Top, bus::NetPorts> slave_;
  simnet::PathImpairment in_path_, out_path_;
  std::array<Socket, hw::kNET_SOCKETS> sockets_{};
  std::vector<std::uint8_t> buf_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  NetPortStats stats_;
  std::unique_ptr<capture::UdpCaptureWriter> capture_;
};

// Tops with the network ports (the Verilated rnic_kernel; the SystemC model has none).
template <class T, class = void>
struct HasNetPorts : std::false_type {};
template <class T>
struct HasNetPorts<T, std::void_t<decltype(std::declval<T&>().s_axis_net_tvalid)>> : std::true_type {};

// A network port on Top, or nullptr when Top has none.
template <class Top>
std::unique_ptr<NetPortBase> make_net_port(bus::Sim<Top>& sim, BusMemory& mem, unsigned bus_bytes, int port,
                                           const simnet::ImpairmentConfig& path, const std::string& pcap) {
  if constexpr (HasNetPorts<Top>::value) {
    return std::make_unique<NetPort<Top>>(sim, mem, bus_bytes, port, path, pcap);
  } else {
    (void)sim, (void)mem, (void)bus_bytes, (void)port, (void)path, (void)pcap;
    return nullptr;
  }
}

}  // namespace rnic::sim
