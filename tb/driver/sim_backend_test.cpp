// SPDX-License-Identifier: Apache-2.0
// The sim backend's bounded waits against a scripted rnic-sim (a socket in this process that
// answers, holds or ignores requests as the test says): every blocking call ends in Errc::kTimeout
// naming what it waited for, a SYNC waits as long as the simulated clock advances, a late reply is
// discarded, and a timed-out connection fails fast instead of costing a timeout per call.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "driver_test_util.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/sim_protocol/protocol.hpp"

namespace rnic::test {
namespace {

namespace proto = rnic::sim_protocol;
using proto::Op;
using proto::Status;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kTimeout{300};
// Scheduling slack on a loaded 2-core machine: a bound is checked as [timeout, limit + kSlack].
constexpr milliseconds kSlack{1500};

milliseconds since(Clock::time_point t0) { return std::chrono::duration_cast<milliseconds>(Clock::now() - t0); }

// The scripted simulator. Connection 0 is the backend's main connection, later ones its SYNC
// progress probes.
class FakeSim {
 public:
  // accept = false: listen only (a connect lands in the backlog and nobody ever reads it).
  explicit FakeSim(bool accept = true, int backlog = 16) : accept_(accept) {
    char tmpl[] = "/tmp/rnic-fakesim.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    path_ = dir_ + "/sim.sock";
    listen_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path_.c_str(), sizeof a.sun_path - 1);
    if (::bind(listen_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_, backlog) != 0) {
      throw std::runtime_error(std::string("fake sim: bind/listen: ") + std::strerror(errno));
    }
    memfd_ = ::memfd_create("rnic-fakesim", MFD_CLOEXEC);
    if (memfd_ < 0 || ::ftruncate(memfd_, kMemBytes) != 0) throw std::runtime_error("fake sim: memfd");
    thread_ = std::thread([this] { run(); });
  }
  ~FakeSim() {
    stop_ = true;
    thread_.join();
    for (int fd : conns_) ::close(fd);
    ::close(listen_);
    ::close(memfd_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  FakeSim(const FakeSim&) = delete;
  FakeSim& operator=(const FakeSim&) = delete;

  const std::string& path() const { return path_; }

  std::atomic<bool> mute{false};          // every request is read and none answered
  std::atomic<bool> silent{false};        // READ32 is read but its reply held
  std::atomic<bool> release{false};       // send the held replies now
  std::atomic<bool> answer_probes{true};  // connections after the first answer at all
  std::atomic<int> sync_hold_ms{0};       // SYNC is answered this long after it came; < 0: never
  std::atomic<bool> clock_runs{true};     // STATUS cycles advance
  std::atomic<unsigned> statuses{0};      // STATUS requests answered
  std::atomic<unsigned> connections{0};

 private:
  static constexpr std::size_t kMemBytes = 1 << 20;

  struct Held {
    int fd;
    proto::Header h;
    std::vector<std::uint8_t> payload;
    Clock::time_point due;
  };

  void send_reply(int fd, const proto::Header& req, const void* p, std::size_t n, int pass_fd = -1) {
    const proto::Header h{proto::kMagic, req.op, 0, req.seq, static_cast<std::uint32_t>(n)};
    proto::send_message(fd, h, p, n, pass_fd);
  }

  void serve(std::size_t index, int fd) {
    std::vector<std::uint8_t> buf(sizeof(proto::Header) + proto::kMaxPayload);
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < static_cast<ssize_t>(sizeof(proto::Header))) return;
    proto::Header h{};
    std::memcpy(&h, buf.data(), sizeof h);
    if (mute || (index > 0 && !answer_probes)) return;
    switch (static_cast<Op>(h.op)) {
      case Op::kHello: {
        const proto::HelloRep rep{proto::kVersion, 0, 0, 0x1000000000ull, kMemBytes, cycles_};
        return send_reply(fd, h, &rep, sizeof rep, memfd_);
      }
      case Op::kRead32: {
        proto::MmioReq req{};
        std::memcpy(&req, buf.data() + sizeof h, sizeof req);
        const proto::MmioRep rep{req.offset == hw::kRegID ? hw::kID_VALUE : 0u, 0};
        if (silent) {
          held_.push_back(Held{fd, h,
                               std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(&rep),
                                                         reinterpret_cast<const std::uint8_t*>(&rep) + sizeof rep),
                               Clock::time_point::max()});
          return;
        }
        return send_reply(fd, h, &rep, sizeof rep);
      }
      case Op::kSync: {
        const int hold = sync_hold_ms;
        if (hold < 0) return;
        const proto::SyncRep rep{cycles_};
        held_.push_back(Held{fd, h,
                             std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(&rep),
                                                       reinterpret_cast<const std::uint8_t*>(&rep) + sizeof rep),
                             Clock::now() + milliseconds(hold)});
        return;
      }
      case Op::kStatus: {
        proto::StatusRep rep{};
        rep.cycles = cycles_;
        ++statuses;
        return send_reply(fd, h, &rep, sizeof rep);
      }
      default:
        return send_reply(fd, h, nullptr, 0);
    }
  }

  void run() {
    while (!stop_) {
      std::vector<pollfd> pf{{listen_, static_cast<short>(accept_ ? POLLIN : 0), 0}};
      for (int fd : conns_) pf.push_back({fd, POLLIN, 0});
      ::poll(pf.data(), pf.size(), 2);
      if (clock_runs) cycles_ += 100;
      if ((pf[0].revents & POLLIN) != 0) {
        const int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          conns_.push_back(fd);
          ++connections;
        }
      }
      for (std::size_t i = 1; i < pf.size(); ++i) {
        if ((pf[i].revents & POLLIN) != 0) serve(i - 1, pf[i].fd);
      }
      const bool all = release.exchange(false);
      for (auto it = held_.begin(); it != held_.end();) {
        if (all || Clock::now() >= it->due) {
          send_reply(it->fd, it->h, it->payload.data(), it->payload.size());
          it = held_.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  bool accept_;
  std::string dir_, path_;
  int listen_ = -1, memfd_ = -1;
  std::vector<int> conns_;
  std::vector<Held> held_;
  std::uint64_t cycles_ = 1000;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Runs f, expects rnic::Error kTimeout whose message holds every one of `texts`; returns how long
// it took.
template <class F>
milliseconds expect_timeout(F f, std::initializer_list<const char*> texts) {
  const auto t0 = Clock::now();
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kTimeout) << errc_name(e.code()) << ": " << e.what();
    for (const char* t : texts)
      EXPECT_NE(std::string(e.what()).find(t), std::string::npos) << e.what() << " lacks " << t;
  }
  return since(t0);
}

OpenOptions observer(milliseconds timeout) {
  OpenOptions o;
  o.observer = true;  // what rnicctl opens
  o.sim_timeout_ms = static_cast<std::uint32_t>(timeout.count());
  return o;
}

// `rnicctl info` against a simulator that takes the connection and never answers: kTimeout naming
// HELLO after the timeout, not a hang.
TEST(SimBackendTimeout, PeerThatAcceptsAndNeverAnswers) {
  FakeSim sim;
  sim.mute = true;
  const auto took = expect_timeout([&] { Device::open("sim:" + sim.path(), observer(kTimeout)); },
                                   {"HELLO", "no reply after", "stopped or hung"});
  EXPECT_GE(took, kTimeout);
  EXPECT_LE(took, kTimeout + kSlack);
  EXPECT_EQ(sim.connections, 1u) << "the connection was accepted";
}

// A listener that never accepts: the connection waits in its backlog, HELLO is never read.
TEST(SimBackendTimeout, ListenerThatNeverAccepts) {
  FakeSim sim(/*accept=*/false);
  const auto took =
      expect_timeout([&] { Device::open("sim:" + sim.path(), observer(kTimeout)); }, {"HELLO", sim.path().c_str()});
  EXPECT_GE(took, kTimeout);
  EXPECT_LE(took, kTimeout + kSlack);
}

// A listener whose backlog is full (a stopped simulator stops accepting): connect itself is bounded.
TEST(SimBackendTimeout, ConnectToAFullBacklog) {
  FakeSim sim(/*accept=*/false, /*backlog=*/0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, sim.path().c_str(), sizeof a.sun_path - 1);
  std::vector<int> fill;
  // Fill the backlog with non-blocking connects until one is refused with EAGAIN.
  for (int i = 0; i < 8; ++i) {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    const int r = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    fill.push_back(fd);
    if (r != 0 && errno == EAGAIN) break;
  }
  const auto took = expect_timeout([&] { Device::open("sim:" + sim.path(), observer(kTimeout)); },
                                   {"did not accept the connection", "stopped or hung"});
  EXPECT_GE(took, kTimeout - milliseconds(50));
  EXPECT_LE(took, kTimeout + kSlack);
  for (int fd : fill) ::close(fd);
}

// A simulator that stops answering after HELLO: the request times out once; later calls fail at
// once (one timeout, not one per call); once the late reply comes it is discarded and calls work.
TEST(SimBackendTimeout, StalledRequestFailsFastThenRecovers) {
  FakeSim sim;
  auto b = detail::make_sim_backend(sim.path(), false, kTimeout);
  EXPECT_EQ(b->read32(hw::kRegID), hw::kID_VALUE);
  sim.silent = true;
  auto took = expect_timeout([&] { b->read32(hw::kRegID); }, {"READ32", "no reply after"});
  EXPECT_GE(took, kTimeout);
  EXPECT_LE(took, kTimeout + kSlack);
  took = expect_timeout([&] { b->read32(hw::kRegVERSION); }, {"not sent", "earlier READ32"});
  EXPECT_LT(took, milliseconds(200)) << "a second call must not wait another timeout";
  sim.silent = false;
  sim.release = true;  // the late reply of the first READ32 arrives
  for (int i = 0; i < 500 && sim.release; ++i) std::this_thread::sleep_for(milliseconds(2));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(b->read32(hw::kRegID), hw::kID_VALUE) << "the late reply is not taken for this one";
  EXPECT_EQ(b->read32(hw::kRegVERSION), 0u);
}

// A SYNC may legitimately take many timeouts (a big injection): while the simulated clock advances
// it is waited for.
TEST(SimBackendTimeout, SyncThatProgressesIsWaitedFor) {
  FakeSim sim;
  auto b = detail::make_sim_backend(sim.path(), false, kTimeout);
  ASSERT_NE(b->sim(), nullptr);
  sim.sync_hold_ms = static_cast<int>(4 * kTimeout.count());
  const auto t0 = Clock::now();
  EXPECT_NO_THROW(b->sim()->sync());
  EXPECT_GE(since(t0), 4 * kTimeout);
  EXPECT_GE(sim.statuses, 2u) << "the clock was looked at while waiting";
  // The probe connection is closed after the SYNC; the main one still works.
  EXPECT_EQ(b->read32(hw::kRegID), hw::kID_VALUE);
}

// No reply and a clock that does not advance: kTimeout after about two intervals.
TEST(SimBackendTimeout, SyncWithAStoppedClockTimesOut) {
  FakeSim sim;
  auto b = detail::make_sim_backend(sim.path(), false, kTimeout);
  sim.sync_hold_ms = -1;
  sim.clock_runs = false;
  const auto took = expect_timeout([&] { b->sim()->sync(); }, {"SYNC", "clock stopped"});
  EXPECT_GE(took, kTimeout);
  EXPECT_LE(took, 2 * kTimeout + kSlack);
}

// No reply, and the second connection is not answered either (a simulator stopped with SIGSTOP).
TEST(SimBackendTimeout, SyncWhenTheSimulatorAnswersNobody) {
  FakeSim sim;
  auto b = detail::make_sim_backend(sim.path(), false, kTimeout);
  sim.sync_hold_ms = -1;
  sim.answer_probes = false;
  const auto took = expect_timeout([&] { b->sim()->sync(); }, {"SYNC", "did not answer STATUS"});
  EXPECT_GE(took, kTimeout);
  EXPECT_LE(took, 2 * kTimeout + kSlack);
}

}  // namespace
}  // namespace rnic::test
