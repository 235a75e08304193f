// SPDX-License-Identifier: Apache-2.0
// RFC 6951 UDP encapsulation of SCTP: one SCTP packet is the whole payload of one UDP datagram
// (6951 5.1: no header of its own; IANA port 9899, "sctp-tunneling", is the default destination).
//
// UdpLink is the datagram socket under an rnic::sctp::Endpoint that talks to another process or to
// the card: a non-blocking IPv4 UDP socket bound to one address and port, send_to() and a receive
// with a timeout. It neither looks into nor changes the bytes it carries: the Endpoint's WireOut
// hands each SCTP packet to send_to(), and each received datagram goes to Endpoint::input().
//
// Every failure throws rnic::Error with the operation, the address and the OS error:
//   kInvalidArgument  bad address/port/length/timeout, or an address that is not local (bind)
//   kBusy             the address and port are in use (bind)
//   kQueueFull        the socket's send buffer is full (the datagram was not sent: treat as lost)
//   kBackend          any other socket error
// Not thread-safe; one owner.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rnic/sctp/endpoint.hpp"
#include "rnic/wire/bytes.hpp"

namespace rnic::sctp {

// usrsctp's timers run on the wall clock for an Endpoint that talks to another process: advance() hands
// Endpoint::advance_timers the whole milliseconds passed since the last call (the rest carries over) and
// returns true if any did, so the owner knows to pump() again.
class WallClockTimers {
 public:
  bool advance() {
    const auto now = std::chrono::steady_clock::now();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_).count();
    if (ms <= 0) return false;
    Endpoint::advance_timers(static_cast<std::uint32_t>(ms));
    last_ += std::chrono::milliseconds(ms);
    return true;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

inline constexpr std::uint16_t kSctpUdpEncapsulationPort = 9899;  // RFC 6951 5.1 / IANA sctp-tunneling
inline constexpr std::uint32_t kIpv4Loopback = 0x7F000001;        // 127.0.0.1
// Largest UDP payload in one IPv4 datagram: 65535 - IPv4 header 20 - UDP header 8.
inline constexpr std::size_t kMaxUdpPayload = 65507;

// An IPv4 address and UDP port, both in host byte order.
struct Ipv4Endpoint {
  std::uint32_t addr = kIpv4Loopback;
  std::uint16_t port = 0;
  bool operator==(const Ipv4Endpoint& o) const { return addr == o.addr && port == o.port; }
  bool operator!=(const Ipv4Endpoint& o) const { return !(*this == o); }
};
std::string to_string(const Ipv4Endpoint& e);  // "a.b.c.d:port"
// "a.b.c.d:port" (dotted quad, port 1..65535) or, with allow_port_zero, port 0. Throws rnic::Error
// kInvalidArgument naming the text and what is wrong with it.
Ipv4Endpoint parse_ipv4_endpoint(const std::string& text, bool allow_port_zero = false);
// "a.b.c.d" only. Throws rnic::Error kInvalidArgument.
std::uint32_t parse_ipv4(const std::string& text);

struct Datagram {
  Ipv4Endpoint from;
  std::vector<std::uint8_t> bytes;  // one SCTP packet (RFC 6951)
};

struct UdpLinkCounters {
  std::uint64_t sent = 0, received = 0;
  std::uint64_t bytes_sent = 0, bytes_received = 0;
};

class UdpLink {
 public:
  // Binds local (port 0: an ephemeral port, see local()). The socket is non-blocking; its send and
  // receive buffers are asked for buffer_bytes each (the kernel may cap them).
  explicit UdpLink(Ipv4Endpoint local = Ipv4Endpoint{kIpv4Loopback, 0}, int buffer_bytes = 4 << 20);
  ~UdpLink();
  UdpLink(UdpLink&& o) noexcept;
  UdpLink& operator=(UdpLink&& o) noexcept;
  UdpLink(const UdpLink&) = delete;
  UdpLink& operator=(const UdpLink&) = delete;

  // The bound address and port (the port the kernel chose when 0 was asked for).
  Ipv4Endpoint local() const { return local_; }
  int fd() const { return fd_; }

  // One datagram whose payload is `payload` (an SCTP packet). Port 0, address 0.0.0.0, an empty or a
  // too-long (> kMaxUdpPayload) payload: kInvalidArgument. Never blocks: kQueueFull if the socket
  // cannot take it now.
  void send_to(const Ipv4Endpoint& to, wire::ConstBytes payload);
  // The next datagram, waiting up to timeout_ms (0: only what is already there); nullopt if none came.
  // timeout_ms < 0: kInvalidArgument.
  std::optional<Datagram> receive(int timeout_ms);

  const UdpLinkCounters& counters() const { return counters_; }

 private:
  void close_fd() noexcept;
  int fd_ = -1;
  Ipv4Endpoint local_;
  UdpLinkCounters counters_;
  std::vector<std::uint8_t> buf_;
};

}  // namespace rnic::sctp
