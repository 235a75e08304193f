// SPDX-License-Identifier: Apache-2.0
// A raw client of rnic-sim's protocol (driver/sim_protocol: rnic/sim_protocol/protocol.hpp) for system tests: any
// bytes as a message, each reply with its status and passed descriptor, bounded waits (10 s).
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rnic/sim_protocol/protocol.hpp"

namespace rnic::systest {

namespace proto = rnic::sim_protocol;

struct RawReply {
  bool closed = false;  // the simulator closed the connection instead of replying
  bool failed = false;  // no reply in time (or another receive error)
  proto::Header h{};
  std::vector<std::uint8_t> payload;
  int fd = -1;
  ~RawReply() {
    if (fd >= 0) ::close(fd);
  }
  proto::Status status() const { return static_cast<proto::Status>(h.status); }
};

class RawClient {
 public:
  explicit RawClient(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
      throw std::runtime_error("connect " + path + ": " + std::strerror(errno));
    }
    timeval tv{10, 0};  // a test must fail, not hang, if the simulator stops answering
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  int fd() const { return fd_; }

  void send_bytes(const std::vector<std::uint8_t>& b) {
    ASSERT_EQ(::send(fd_, b.data(), b.size(), MSG_NOSIGNAL), static_cast<ssize_t>(b.size())) << std::strerror(errno);
  }
  static std::vector<std::uint8_t> message(std::uint16_t op, const void* payload, std::size_t n, std::uint32_t seq = 7,
                                           std::uint32_t magic = proto::kMagic) {
    proto::Header h{magic, op, 0, seq, static_cast<std::uint32_t>(n)};
    std::vector<std::uint8_t> b(sizeof h + n);
    std::memcpy(b.data(), &h, sizeof h);
    if (n > 0) std::memcpy(b.data() + sizeof h, payload, n);
    return b;
  }
  std::unique_ptr<RawReply> receive() {
    auto r = std::make_unique<RawReply>();
    std::vector<std::uint8_t> buf(sizeof(proto::Header) + proto::kMaxPayload);
    iovec iov{buf.data(), buf.size()};
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    const ssize_t n = ::recvmsg(fd_, &m, MSG_CMSG_CLOEXEC);
    if (n <= 0) {
      (n == 0 ? r->closed : r->failed) = true;
      return r;
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
      if (c->cmsg_type == SCM_RIGHTS) std::memcpy(&r->fd, CMSG_DATA(c), sizeof(int));
    }
    if (static_cast<std::size_t>(n) >= sizeof r->h) std::memcpy(&r->h, buf.data(), sizeof r->h);
    r->payload.assign(buf.begin() + sizeof r->h, buf.begin() + n);
    return r;
  }
  std::unique_ptr<RawReply> call(proto::Op op, const void* payload, std::size_t n) {
    send_bytes(message(static_cast<std::uint16_t>(op), payload, n));
    return receive();
  }
  proto::Status hello(std::uint32_t role) {
    const proto::HelloReq req{proto::kVersion, 0, role, static_cast<std::uint32_t>(::getpid()), 0};
    return call(proto::Op::kHello, &req, sizeof req)->status();
  }
  std::unique_ptr<RawReply> read32(std::uint32_t off) {
    const proto::MmioReq req{off, 0};
    return call(proto::Op::kRead32, &req, sizeof req);
  }

  // STATUS of the simulator (fails the test and returns zeros when it does not answer kOk).
  proto::StatusRep status_rep() {
    proto::StatusRep s{};
    auto r = call(proto::Op::kStatus, nullptr, 0);
    EXPECT_EQ(r->status(), proto::Status::kOk);
    if (r->payload.size() == sizeof s) std::memcpy(&s, r->payload.data(), sizeof s);
    return s;
  }

 private:
  int fd_ = -1;
};

}  // namespace rnic::systest
