// SPDX-License-Identifier: Apache-2.0
// rnic-sim --xrt against a hostile XRT: this test plays XRT's side of the hardware-emulation sockets
// (rnic/hwemu/wire.hpp) itself, without XRT's 10 s load, and sends what XRT 2.13 sends and what it
// never would: malformed, truncated and oversized calls, registers and copies out of range, unknown
// calls, a reply that would overrun XRT's message buffer, XRT gone without a close. Each time the
// device answers a failure XRT can parse or ends the session after its owner cleanup, never hangs,
// and always sends the host-memory socket its close call (without which XRT 2.13 spins forever).
// The real XRT runtime drives the device in the XrtEmu tests (CMakeLists.txt).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/hwemu/wire.hpp"
#include "rnic/systest/child_process.hpp"

namespace rnic::hwemu {
namespace {

// The emulated platform rnic-sim serves (sim/src/xrt_device.hpp).
constexpr std::uint64_t kCuBase = 0x180'0000;
constexpr std::uint64_t kDdrBase = 0x10'0000'0000ull;

int listen_at(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 1) != 0)
    throw std::runtime_error("listen at " + path + ": " + std::strerror(errno));
  return fd;
}

bool read_all(int fd, void* p, std::size_t n) {
  auto* b = static_cast<std::uint8_t*>(p);
  while (n > 0) {
    pollfd pf{fd, POLLIN, 0};
    if (::poll(&pf, 1, 20'000) <= 0) return false;
    const ssize_t got = ::recv(fd, b, n, 0);
    if (got <= 0) return false;
    b += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

void send_all(int fd, const void* p, std::size_t n) {
  if (::send(fd, p, n, MSG_NOSIGNAL) != static_cast<ssize_t>(n)) throw std::runtime_error("send to rnic-sim");
}

class FakeXrt : public ::testing::Test {
 protected:
  void SetUp() override {
    user_ = "rnic-xrt-test-" + std::to_string(::getpid());
    dir_ = "/tmp/" + user_;
    std::filesystem::create_directories(dir_);
    ::chmod(dir_.c_str(), 0700);
    const std::string id = "device0_0_test";
    main_listen_ = listen_at(dir_ + "/" + id);
    host_listen_ = listen_at(dir_ + "/D2X_unix_sock_" + id);
    ::setenv("USER", user_.c_str(), 1);  // the child's environment: XRT's socket names
    ::setenv("EMULATION_SOCKETID", id.c_str(), 1);
    sim_.emplace(RNIC_SIM_BINARY, std::vector<std::string>{"--xrt", "--socket", dir_ + "/wire.sock",
                                                           "--xrt-connect-seconds", "30", "--verbose"});
    main_ = accept_within(main_listen_);
    host_ = accept_within(host_listen_);
  }
  void TearDown() override {
    if (main_ >= 0) ::close(main_);
    if (host_ >= 0) ::close(host_);
    sim_.reset();
    ::close(main_listen_);
    ::close(host_listen_);
    std::filesystem::remove_all(dir_);
  }

  int accept_within(int listen_fd) {
    pollfd pf{listen_fd, POLLIN, 0};
    if (::poll(&pf, 1, 60'000) <= 0) throw std::runtime_error("rnic-sim --xrt did not connect: " + sim_->err());
    return ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  }

  void send_call(Call c, const std::vector<std::uint8_t>& body) { send_raw(static_cast<std::uint32_t>(c), body); }
  void send_raw(std::uint32_t call, const std::vector<std::uint8_t>& body, std::uint64_t claimed = ~0ull) {
    std::uint8_t h[kCallHeaderBytes];
    encode_call_header(h, claimed == ~0ull ? body.size() : claimed, call);
    send_all(main_, h, sizeof h);
    if (!body.empty()) send_all(main_, body.data(), body.size());
  }
  // The device's reply: a 9-byte header and its message (held in reply_).
  Message reply() {
    std::uint8_t h[kReplyHeaderBytes];
    EXPECT_TRUE(read_all(main_, h, sizeof h)) << "no reply; rnic-sim said: " << sim_->err();
    EXPECT_EQ(h[0], 0x09);
    reply_.resize(static_cast<std::size_t>(get_le(h + 1, 8)));
    EXPECT_TRUE(read_all(main_, reply_.data(), reply_.size()));
    Message m;
    EXPECT_TRUE(m.parse(reply_.data(), reply_.size()));
    return m;
  }
  Message call(Call c, const Writer& w) {
    send_call(c, w.data());
    return reply();
  }
  std::uint32_t read_register(std::uint32_t off, bool* valid = nullptr) {
    const Message m = call(Call::kReadKernelCtrl, Writer().varint(2, kCuBase + off).varint(3, 4).varint(5, 0));
    if (valid != nullptr) *valid = m.number(1).value_or(0) != 0;
    const auto d = m.bytes(2);
    EXPECT_TRUE(d && d->size == 4) << "XRT copies exactly the requested bytes out of the reply";
    return d && d->size == 4 ? static_cast<std::uint32_t>(get_le(d->data, 4)) : 0;
  }
  // The close call on the host-memory socket, which XRT's thread waits for.
  void expect_host_memory_close() {
    std::uint8_t h[kCallHeaderBytes];
    ASSERT_TRUE(read_all(host_, h, sizeof h)) << "no close call on the host-memory socket: " << sim_->err();
    const auto hdr = decode_call_header(h);
    ASSERT_TRUE(hdr);
    EXPECT_EQ(hdr->call, static_cast<std::uint32_t>(Call::kClose));
    EXPECT_EQ(hdr->size, 0u);
  }
  int exit_code() { return sim_->wait(std::chrono::seconds(30)); }
  // What XRT 2.13 sends first: xclSetEnvironment with its ini entries (here a pad of `pad` bytes,
  // which sizes XRT's message buffer).
  void set_environment(std::size_t pad) {
    const std::string name = "Debug.pad", value(pad, 'x');
    Writer entry;
    entry.bytes(1, name.data(), name.size()).bytes(2, value.data(), value.size());
    const Message m = call(Call::kSetEnvironment, Writer().bytes(3, entry.data().data(), entry.data().size()));
    EXPECT_EQ(m.number(1), 1u);
  }

  std::string user_, dir_;
  int main_listen_ = -1, host_listen_ = -1, main_ = -1, host_ = -1;
  std::optional<systest::ChildProcess> sim_;
  std::vector<std::uint8_t> reply_;
};

TEST_F(FakeXrt, RegistersAreReadAndWrittenAtTheComputeUnitsAddresses) {
  set_environment(65536);
  bool valid = false;
  EXPECT_EQ(read_register(hw::kRegID, &valid), hw::kID_VALUE);
  EXPECT_TRUE(valid);
  const Message w =
      call(Call::kWriteKernelCtrl, Writer().varint(2, kCuBase + hw::kRegCQ_CTRL).varint(3, 4).bytes(4, "\0\0\0\0", 4));
  EXPECT_EQ(w.number(1), 1u);
  // Outside the control range, not a register the kernel decodes, not 4 bytes: a failure XRT reports.
  for (const auto& [addr, size] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {kCuBase - 4, 4}, {kCuBase + hw::kMMIO_BYTES, 4}, {kCuBase + 0xFFFC, 4}, {kCuBase + hw::kRegID, 8}}) {
    const Message m = call(Call::kReadKernelCtrl, Writer().varint(2, addr).varint(3, size));
    EXPECT_EQ(m.number(1), 0u) << std::hex << addr << " size " << size;
    ASSERT_TRUE(m.bytes(2));
    EXPECT_EQ(m.bytes(2)->size, 4u) << "XRT copies its requested bytes out of any reply";
  }
  EXPECT_EQ(call(Call::kClose, Writer()).number(1), 1u);
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 0) << sim_->err();
}

// XRT 2.13 sends a sync's chunks at the buffer's address with the sync's offset apart (seek/skip).
TEST_F(FakeXrt, CardMemoryCopiesLandAtTheAddressPlusTheSyncOffset) {
  set_environment(65536);
  const std::uint64_t bo = kDdrBase + 0x10000;
  EXPECT_EQ(call(Call::kAllocDeviceBuffer, Writer().varint(1, bo).varint(2, 8192)).number(1), 1u);
  std::vector<std::uint8_t> data(100);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 1);
  EXPECT_EQ(call(Call::kCopyHostToDevice,
                 Writer().varint(3, bo).bytes(4, data.data(), data.size()).varint(5, data.size()).varint(6, 0x300))
                .number(1),
            data.size());
  const Message back = call(Call::kCopyDeviceToHost, Writer().varint(4, bo).varint(5, 0x400).varint(6, 0));
  ASSERT_EQ(back.number(1), 0x400u);
  ASSERT_TRUE(back.bytes(2));
  ASSERT_EQ(back.bytes(2)->size, 0x400u);
  const std::uint8_t* d = back.bytes(2)->data;
  EXPECT_EQ(std::vector<std::uint8_t>(d + 0x300, d + 0x300 + data.size()), data);
  EXPECT_EQ(d[0x2FF], 0) << "the bytes before the offset are the fresh buffer's zeros";
  // Outside DDR[0], or data shorter than the size claimed: refused, nothing copied.
  EXPECT_EQ(call(Call::kAllocDeviceBuffer, Writer().varint(1, kDdrBase - 4096).varint(2, 4096)).number(1), 0u);
  EXPECT_EQ(call(Call::kCopyHostToDevice, Writer().varint(3, bo).bytes(4, data.data(), 10).varint(5, 11)).number(1),
            0u);
  const Message far = call(Call::kCopyDeviceToHost, Writer().varint(4, kDdrBase + (256ull << 20)).varint(5, 64));
  EXPECT_EQ(far.number(1), 0u);
  EXPECT_EQ(call(Call::kClose, Writer()).number(1), 1u);
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 0) << sim_->err();
}

TEST_F(FakeXrt, MalformedMessagesAndUnknownCallsGetRepliesAndTheSessionGoesOn) {
  set_environment(65536);
  send_raw(static_cast<std::uint32_t>(Call::kReadKernelCtrl), {0x08});  // a key without its value
  EXPECT_EQ(reply().number(1), 0u);
  send_raw(3, {});  // xclLoadBitstream: XRT 2.13 never sends it
  reply();
  EXPECT_TRUE(reply_.empty());
  EXPECT_EQ(read_register(hw::kRegID), hw::kID_VALUE) << "the session goes on";
  EXPECT_NE(sim_->err().find("not one rnic-sim answers"), std::string::npos) << sim_->err();
  EXPECT_EQ(call(Call::kClose, Writer()).number(1), 1u);
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 0);
}

// XRT 2.13 sizes its message buffer by its first message and overruns it on a larger one: the
// device never sends a reply larger than that, and says how to fix the setup.
TEST_F(FakeXrt, ReplyLargerThanXrtsFirstMessageIsRefused) {
  set_environment(100);
  const Message m = call(Call::kCopyDeviceToHost, Writer().varint(4, kDdrBase).varint(5, 4096));
  EXPECT_EQ(m.number(1), 0u);
  EXPECT_LE(reply_.size(), 120u);
  EXPECT_NE(sim_->err().find("would overrun XRT 2.13's message buffer"), std::string::npos) << sim_->err();
  EXPECT_EQ(read_register(hw::kRegID), hw::kID_VALUE);
  EXPECT_EQ(call(Call::kClose, Writer()).number(1), 1u);
  expect_host_memory_close();
}

// A stream that is not XRT's framing cannot be trusted any more: the session ends, after the owner
// cleanup, with the host-memory socket closed properly.
TEST_F(FakeXrt, MalformedHeaderEndsTheSessionAfterTheOwnerCleanup) {
  set_environment(65536);
  const std::uint8_t junk[kCallHeaderBytes] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  send_all(main_, junk, sizeof junk);
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 1);
  EXPECT_NE(sim_->err().find("malformed call header"), std::string::npos) << sim_->err();
  EXPECT_NE(sim_->err().find("owner gone"), std::string::npos) << sim_->err();
}

TEST_F(FakeXrt, OversizedCallEndsTheSession) {
  set_environment(65536);
  send_raw(static_cast<std::uint32_t>(Call::kCopyHostToDevice), {}, 1ull << 40);
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 1);
  EXPECT_NE(sim_->err().find("above the"), std::string::npos) << sim_->err();
}

TEST_F(FakeXrt, TruncatedCallThenXrtGoneEndsTheSession) {
  set_environment(65536);
  send_raw(static_cast<std::uint32_t>(Call::kWriteKernelCtrl), {0x10, 0x01}, 100);
  ::shutdown(main_, SHUT_WR);
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 1);
  EXPECT_NE(sim_->err().find("truncated"), std::string::npos) << sim_->err();
}

// XRT killed mid-run: the owner cleanup of a sim: owner's death runs (RFC 5041 8.3.2), then the
// device ends.
TEST_F(FakeXrt, XrtGoneRunsTheOwnerCleanup) {
  set_environment(65536);
  EXPECT_EQ(read_register(hw::kRegID), hw::kID_VALUE);
  ::close(main_);
  main_ = -1;
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 1);
  EXPECT_NE(sim_->err().find("cleaning up after the owner"), std::string::npos) << sim_->err();
  EXPECT_NE(sim_->err().find("owner gone: disabling the CQ"), std::string::npos) << sim_->err();
}

// The process XRT started (the guardian) and the device under it (the card): kill the card mid-run and
// every later call fails instead of hanging XRT, the close is answered, the host-memory socket closed.
pid_t device_of(pid_t guardian) {
  const std::string children =
      systest::slurp("/proc/" + std::to_string(guardian) + "/task/" + std::to_string(guardian) + "/children");
  return static_cast<pid_t>(std::atoi(children.c_str()));
}

TEST_F(FakeXrt, CardKilledMidRunEveryCallFailsAndCloseIsAnswered) {
  set_environment(65536);
  EXPECT_EQ(read_register(hw::kRegID), hw::kID_VALUE);
  const pid_t card = device_of(sim_->pid());
  ASSERT_GT(card, 0) << "no device process under rnic-sim --xrt";
  ASSERT_EQ(::kill(card, SIGKILL), 0);
  bool valid = true;
  for (int i = 0; i < 3; ++i) {
    read_register(hw::kRegID, &valid);
    EXPECT_FALSE(valid) << "a call after the card died";
  }
  EXPECT_EQ(call(Call::kWriteKernelCtrl, Writer().varint(2, kCuBase).varint(3, 4).bytes(4, "abcd", 4)).number(1), 0u);
  EXPECT_EQ(call(Call::kClose, Writer()).number(1), 1u);
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 1);
  EXPECT_NE(sim_->err().find("ended without XRT's close"), std::string::npos) << sim_->err();
}

// The card dies holding a call it has not answered (stopped, handed the call, killed): the guardian,
// which relayed the call, answers it, so XRT, waiting for that answer, never hangs.
TEST_F(FakeXrt, CardKilledHoldingACallTheCallIsStillAnswered) {
  set_environment(65536);
  const pid_t card = device_of(sim_->pid());
  ASSERT_GT(card, 0);
  ASSERT_EQ(::kill(card, SIGSTOP), 0);
  send_call(Call::kReadKernelCtrl, Writer().varint(2, kCuBase + hw::kRegID).varint(3, 4).varint(5, 0).data());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the guardian hands it to the stopped card
  ASSERT_EQ(::kill(card, SIGKILL), 0);
  const Message m = reply();
  EXPECT_EQ(m.number(1), 0u) << "the call the card held fails";
  bool valid = true;
  read_register(hw::kRegID, &valid);
  EXPECT_FALSE(valid);
  EXPECT_EQ(call(Call::kClose, Writer()).number(1), 1u);
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 1);
  EXPECT_NE(sim_->err().find("ended without XRT's close"), std::string::npos) << sim_->err();
}

// The card alone ends (a TERM to it, not to the session): XRT is still there, so the guardian keeps
// answering it until its close.
TEST_F(FakeXrt, CardEndingOnItsOwnDoesNotEndTheSession) {
  set_environment(65536);
  const pid_t card = device_of(sim_->pid());
  ASSERT_GT(card, 0);
  ASSERT_EQ(::kill(card, SIGTERM), 0);
  bool valid = true;
  for (int i = 0; i < 50 && valid; ++i) {
    read_register(hw::kRegID, &valid);
    if (valid) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(valid) << "calls fail once the card has ended";
  EXPECT_EQ(call(Call::kClose, Writer()).number(1), 1u);
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 1);
}

// With XRT owning the card, the simulator's socket serves observers and the wire, never a second owner.
TEST_F(FakeXrt, NoSecondOwnerOnTheSimulatorsSocket) {
  set_environment(65536);
  try {
    auto dev = Device::open("sim:" + dir_ + "/wire.sock");
    ADD_FAILURE() << "a second owner was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kBusy) << e.what();
  }
  OpenOptions o;
  o.observer = true;
  auto obs = Device::open("sim:" + dir_ + "/wire.sock", o);
  EXPECT_EQ(obs->read_reg(hw::kRegID), hw::kID_VALUE);
  EXPECT_NE(obs->sim(), nullptr);
  obs.reset();
  EXPECT_EQ(call(Call::kClose, Writer()).number(1), 1u);
  expect_host_memory_close();
  EXPECT_EQ(exit_code(), 0);
}

}  // namespace
}  // namespace rnic::hwemu
