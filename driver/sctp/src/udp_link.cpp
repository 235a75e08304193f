// SPDX-License-Identifier: Apache-2.0
#include "rnic/sctp/udp_link.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "rnic/driver/rnic.hpp"

namespace rnic::sctp {
namespace {

[[noreturn]] void fail(Errc code, const std::string& what) { throw rnic::Error(code, "udp: " + what); }

sockaddr_in to_sockaddr(const Ipv4Endpoint& e) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(e.port);
  a.sin_addr.s_addr = htonl(e.addr);
  return a;
}

// Parses a decimal number of at most max_digits digits with no sign or spaces; false otherwise.
bool parse_decimal(const std::string& s, std::size_t max_digits, std::uint32_t max, std::uint32_t& out) {
  if (s.empty() || s.size() > max_digits) return false;
  std::uint32_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (v > max) return false;
  out = v;
  return true;
}

}  // namespace

std::string to_string(const Ipv4Endpoint& e) {
  return fmt::format("{}.{}.{}.{}:{}", e.addr >> 24, (e.addr >> 16) & 0xFF, (e.addr >> 8) & 0xFF, e.addr & 0xFF,
                     e.port);
}

std::uint32_t parse_ipv4(const std::string& text) {
  std::uint32_t addr = 0;
  std::size_t start = 0;
  for (int i = 0; i < 4; ++i) {
    const std::size_t dot = text.find('.', start);
    const bool last = i == 3;
    if (last != (dot == std::string::npos))
      fail(Errc::kInvalidArgument, fmt::format("'{}' is not an IPv4 address (want a.b.c.d)", text));
    const std::string part = text.substr(start, last ? std::string::npos : dot - start);
    std::uint32_t v = 0;
    if (!parse_decimal(part, 3, 255, v))
      fail(Errc::kInvalidArgument, fmt::format("'{}' is not an IPv4 address: '{}' is not 0..255", text, part));
    addr = (addr << 8) | v;
    start = dot + 1;
  }
  return addr;
}

Ipv4Endpoint parse_ipv4_endpoint(const std::string& text, bool allow_port_zero) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos) fail(Errc::kInvalidArgument, fmt::format("'{}' is not IPV4:PORT (no ':')", text));
  Ipv4Endpoint e;
  e.addr = parse_ipv4(text.substr(0, colon));
  std::uint32_t port = 0;
  const std::string p = text.substr(colon + 1);
  if (!parse_decimal(p, 5, 65535, port) || (port == 0 && !allow_port_zero))
    fail(Errc::kInvalidArgument, fmt::format("'{}': port '{}' is not {}..65535", text, p, allow_port_zero ? 0 : 1));
  e.port = static_cast<std::uint16_t>(port);
  return e;
}

UdpLink::UdpLink(Ipv4Endpoint local, int buffer_bytes) : buf_(kMaxUdpPayload + 1) {
  if (buffer_bytes <= 0) fail(Errc::kInvalidArgument, fmt::format("buffer_bytes {} must be > 0", buffer_bytes));
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fail(Errc::kBackend, fmt::format("socket: {}", std::strerror(errno)));
  // Larger buffers: a burst of a full SCTP window must not be dropped by the kernel on loopback.
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
  const sockaddr_in a = to_sockaddr(local);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    const int e = errno;
    close_fd();
    const std::string what = fmt::format("bind {}: {}", to_string(local), std::strerror(e));
    if (e == EADDRINUSE) fail(Errc::kBusy, what);
    if (e == EADDRNOTAVAIL) fail(Errc::kInvalidArgument, what + " (not an address of this host)");
    fail(Errc::kBackend, what);
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    const int e = errno;
    close_fd();
    fail(Errc::kBackend, fmt::format("getsockname: {}", std::strerror(e)));
  }
  local_ = Ipv4Endpoint{ntohl(bound.sin_addr.s_addr), ntohs(bound.sin_port)};
}

UdpLink::~UdpLink() { close_fd(); }

UdpLink::UdpLink(UdpLink&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), local_(o.local_), counters_(o.counters_), buf_(std::move(o.buf_)) {}

UdpLink& UdpLink::operator=(UdpLink&& o) noexcept {
  if (this != &o) {
    close_fd();
    fd_ = std::exchange(o.fd_, -1);
    local_ = o.local_;
    counters_ = o.counters_;
    buf_ = std::move(o.buf_);
  }
  return *this;
}

void UdpLink::close_fd() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void UdpLink::send_to(const Ipv4Endpoint& to, wire::ConstBytes payload) {
  if (fd_ < 0) fail(Errc::kState, "send_to: the link is closed (moved from)");
  if (to.port == 0) fail(Errc::kInvalidArgument, fmt::format("send_to {}: destination port 0", to_string(to)));
  if (to.addr == 0) fail(Errc::kInvalidArgument, fmt::format("send_to {}: destination 0.0.0.0", to_string(to)));
  if (payload.size == 0 || payload.data == nullptr)
    fail(Errc::kInvalidArgument,
         fmt::format("send_to {}: empty payload (an SCTP packet is >= 12 bytes)", to_string(to)));
  if (payload.size > kMaxUdpPayload)
    fail(Errc::kInvalidArgument, fmt::format("send_to {}: payload of {} bytes is over the IPv4 UDP maximum {}",
                                             to_string(to), payload.size, kMaxUdpPayload));
  const sockaddr_in a = to_sockaddr(to);
  for (;;) {
    const ssize_t n = ::sendto(fd_, payload.data, payload.size, 0, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    if (n >= 0) break;
    const int e = errno;
    if (e == EINTR) continue;
    const std::string what = fmt::format("sendto {} ({} bytes): {}", to_string(to), payload.size, std::strerror(e));
    if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS) fail(Errc::kQueueFull, what);
    fail(Errc::kBackend, what);
  }
  ++counters_.sent;
  counters_.bytes_sent += payload.size;
}

std::optional<Datagram> UdpLink::receive(int timeout_ms) {
  if (fd_ < 0) fail(Errc::kState, "receive: the link is closed (moved from)");
  if (timeout_ms < 0) fail(Errc::kInvalidArgument, fmt::format("receive: timeout_ms {} must be >= 0", timeout_ms));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const ssize_t n = ::recvfrom(fd_, buf_.data(), buf_.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n >= 0) {
      ++counters_.received;
      counters_.bytes_received += static_cast<std::uint64_t>(n);
      Datagram d;
      d.from = Ipv4Endpoint{ntohl(from.sin_addr.s_addr), ntohs(from.sin_port)};
      d.bytes.assign(buf_.begin(), buf_.begin() + n);
      return d;
    }
    const int e = errno;
    if (e == EINTR) continue;
    if (e != EAGAIN && e != EWOULDBLOCK) fail(Errc::kBackend, fmt::format("recvfrom: {}", std::strerror(e)));
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno != EINTR) fail(Errc::kBackend, fmt::format("poll: {}", std::strerror(errno)));
    if (r == 0) return std::nullopt;
  }
}

}  // namespace rnic::sctp
