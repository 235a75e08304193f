// SPDX-License-Identifier: Apache-2.0
// Issue 11: a hostile peer must not make the card write memory it does not own (RFC 5041 7.1, 8.1,
// 8.3.1 #3 and #6, 8.3.2). The four reproductions, through the public driver API against
// rnic-sim; each fails on the card/driver before the fix:
//  - MSN repeat/skip (RFC 5041 4.3, 5.3): MSN 3 completing before MSN 2 is an order error (2/0x03 with
//    FLAGS.order), the stream enters the error state, no buffer is consumed by it, and no byte of a
//    buffer changes after its completion (or flush) was seen;
//  - abortive teardown is fenced (8.3.1 #6): once teardown_stream returns and the buffer is freed, a
//    second client that is given the same memory never receives the first client's bytes;
//  - STag values are never issued twice across owners (8.3.1, 7.1 Invalid STag): a killed owner's
//    STags are Invalid STag (1/0x00) for the next owner and place nothing;
//  - an observer maps the host memory read-only.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "driver_test_util.hpp"
#include "rnic/hw/hw.hpp"

namespace rnic::systest {
namespace {

using wire::DdpError;

bool same_bytes(const Buffer& b, const std::vector<std::uint8_t>& snapshot) {
  return std::equal(snapshot.begin(), snapshot.end(), b.data);
}

// ---- MSN repeat (issue 11's first reproduction) ------------------------------------------------------

// Stream with QN 0, one 100-byte buffer per MSN 1..3, then single-segment untagged messages (control
// byte 0x41: L 1, DV 1): DDP-SSN 0 MSN 1, DDP-SSN 1 MSN 3, DDP-SSN 2 MSN 3 again with 0x77 bytes.
// RFC 5041 4.3 / 5.3: MSN 3 is not the next MSN of QN 0 when it is delivered (MSN 2 is), so the card
// reports 2/0x03 with FLAGS.order (QN 0, MSN 3) and the stream enters the error state (7.1): MSN 3's
// buffer is never completed and the repeat is never delivered.
TEST_F(DriverSystem, MsnRepeatAndSkipIsAnOrderErrorAndNothingCompletedChanges) {
  const PdId pd = client_->alloc_pd();
  const StreamId s = client_->create_stream(pd);
  client_->configure_queue(s, 0, 2);
  std::vector<Buffer> rx;
  for (std::uint32_t m = 1; m <= 3; ++m) {
    rx.push_back(filled_buffer(100, 0xA5));
    client_->post_recv(s, 0, rx.back().id, 0, 100, m);
  }
  const std::vector<std::uint8_t> ten(10, 0x11), threes(10, 0x33), sevens(10, 0x77);
  const auto seg1 = untagged_segment(0, 1, 0, ten);
  ASSERT_EQ(seg1[0], 0x41u) << "control byte: L 1, DV 1";
  dev_->require_sim().inject(s, 0, seg1);
  dev_->require_sim().inject(s, 1, untagged_segment(0, 3, 0, threes));
  dev_->require_sim().inject(s, 2, untagged_segment(0, 3, 0, sevens));

  // Each completion as it is seen, with the bytes of the buffer it names at that moment.
  std::map<std::uint64_t, std::vector<std::uint8_t>> seen;  // buffer id -> bytes when completed
  std::vector<Completion> got = drain(*dev_, *client_, 2);
  auto snapshot = [&](const std::vector<Completion>& cs) {
    for (const Completion& c : cs) {
      if (c.kind != Completion::Kind::kUntagged && c.kind != Completion::Kind::kFlushed) continue;
      for (const Buffer& b : rx) {
        if (b.id == c.buffer) seen[b.id].assign(b.data, b.data + b.size);
      }
    }
  };
  snapshot(got);
  ASSERT_EQ(got.size(), 2u) << (got.size() > 2 ? describe(got[2]) : "");
  EXPECT_EQ(got[0].kind, Completion::Kind::kUntagged) << describe(got[0]);
  EXPECT_EQ(got[0].msn, 1u);
  EXPECT_EQ(got[0].cookie, 1u);
  EXPECT_EQ(got[0].length, 10u);
  EXPECT_TRUE(std::equal(ten.begin(), ten.end(), rx[0].data));
  // The order error: 2/0x03 on DDP-SSN 1, naming QN 0 and MSN 3, with FLAGS.order.
  EXPECT_EQ(got[1].kind, Completion::Kind::kError) << describe(got[1]);
  EXPECT_EQ(got[1].err_type, wire::error_type(DdpError::kUntaggedMsnRange));
  EXPECT_EQ(got[1].err_code, wire::error_code(DdpError::kUntaggedMsnRange));
  EXPECT_TRUE(got[1].order);
  EXPECT_EQ(got[1].qn, 0u);
  EXPECT_EQ(got[1].msn, 3u);
  EXPECT_EQ(got[1].ssn, 1u);

  const StreamState st = client_->stream_state(s);
  EXPECT_EQ(st.state, StreamState::State::kError);
  ASSERT_TRUE(st.first_error.has_value());
  EXPECT_TRUE(st.first_error->order);
  EXPECT_EQ(st.first_error->err_code, 0x03u);
  EXPECT_EQ(st.first_error->msn, 3u);
  EXPECT_EQ(st.unmatched_completions, 0u);
  EXPECT_EQ(dev_->counters().unmatched_completions, 0u) << "every completion was matched";

  // MSN 2 and 3 were never consumed: they come back flushed at teardown.
  client_->teardown_stream(s, Teardown::kAbortive);
  got = drain(*dev_, *client_, 2);
  snapshot(got);
  ASSERT_EQ(got.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(got[i].kind, Completion::Kind::kFlushed) << describe(got[i]);
    EXPECT_EQ(got[i].msn, 2u + i);
  }
  // Later segments of every kind: dropped. No byte of a buffer changes after its completion was seen.
  dev_->require_sim().inject(s, 3, untagged_segment(0, 3, 0, sevens));
  dev_->require_sim().inject(s, 4, untagged_segment(0, 2, 0, sevens));
  dev_->require_sim().sync();
  for (const Buffer& b : rx) {
    ASSERT_EQ(seen.count(b.id), 1u);
    EXPECT_TRUE(same_bytes(b, seen[b.id])) << "buffer " << b.id << " changed after its completion";
  }
  EXPECT_EQ(dev_->counters().unmatched_completions, 0u);
}

// ---- abortive teardown fence (issue 11's second reproduction) ---------------------------------------

// Client B posts a 16000-byte buffer, a segment for it is injected, B tears the stream down abortively
// at once, destroys it and frees the buffer; client A allocates a buffer (the simulator's first-fit
// allocator hands out memory overlapping B's) and after sync holds none of B's bytes. Over 30 delays so the
// teardown lands before, during and after the placement.
TEST_F(DriverSystem, AbortiveTeardownIsFencedBeforeTheMemoryIsReused) {
  constexpr std::size_t kBytes = 16000;
  auto b_client = dev_->create_client();
  const PdId pd = b_client->alloc_pd();
  int reused = 0, completed = 0, flushed = 0;
  for (int round = 0; round < 30; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::uint8_t fill = static_cast<std::uint8_t>(0x80 + round);
    const StreamId s = b_client->create_stream(pd);
    b_client->configure_queue(s, 0, 0);
    const Buffer b = b_client->alloc_buffer(kBytes);
    b_client->post_recv(s, 0, b.id, 0, kBytes, 1);
    dev_->require_sim().inject(s, 0, untagged_segment(0, 1, 0, std::vector<std::uint8_t>(kBytes, fill)));
    if (round > 0) std::this_thread::sleep_for(std::chrono::microseconds(40 * round));
    b_client->teardown_stream(s, Teardown::kAbortive);
    std::vector<Completion> out;
    ASSERT_EQ(b_client->poll(out), 1u) << "the buffer comes back, delivered or flushed, at once";
    (out[0].kind == Completion::Kind::kUntagged ? completed : flushed) += 1;
    EXPECT_TRUE(out[0].kind == Completion::Kind::kUntagged || out[0].kind == Completion::Kind::kFlushed)
        << describe(out[0]);
    b_client->destroy_stream(s);
    const std::uint64_t addr = b.device_addr;
    b_client->free_buffer(b.id);

    const Buffer a = client_->alloc_buffer(kBytes);
    reused += a.device_addr < addr + kBytes && addr < a.device_addr + kBytes ? 1 : 0;  // overlaps B's memory
    dev_->require_sim().sync();
    std::size_t foreign = 0;
    for (std::size_t i = 0; i < kBytes; ++i) foreign += a.data[i] != 0 ? 1 : 0;
    EXPECT_EQ(foreign, 0u) << "client A holds " << foreign << " of client B's bytes";
    client_->free_buffer(a.id);
  }
  std::printf("abortive teardown: %d rounds delivered before the fence, %d flushed; memory reused %d times\n",
              completed, flushed, reused);
  EXPECT_GT(reused, 0) << "the allocator never handed B's memory to A: the test proves nothing";
  EXPECT_EQ(dev_->counters().unmatched_completions, 0u);
}

// ---- owner death (issue 11's third reproduction) ---------------------------------------------------

// The first owner registers 8 STags and is killed (SIGKILL: no cleanup at all); the next owner's 8
// STags never repeat a value, and each of the dead owner's STags, injected afterwards on a stream of
// the new owner, is Invalid STag (1/0x00) and places nothing.
TEST(DriverOwnership, KilledOwnersStagsAreNeverIssuedAgainAndPlaceNothing) {
  SimProcess sim;
  constexpr int kStags = 8;
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0) << std::strerror(errno);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0) << std::strerror(errno);
  if (child == 0) {
    ::close(pipefd[0]);
    std::array<Stag, kStags> stags{};
    try {
      auto dev = Device::open(sim.device_string());
      auto c = dev->create_client();
      const PdId pd = c->alloc_pd();
      const Buffer b = c->alloc_buffer(4096);
      for (auto& st : stags) {
        RegisterRequest r;
        r.pd = pd;
        r.buffer = b.id;
        r.length = 4096;
        st = c->register_memory(r).stag;
      }
      if (::write(pipefd[1], stags.data(), sizeof stags) != static_cast<ssize_t>(sizeof stags)) ::_exit(2);
      for (;;) ::pause();  // killed here, holding everything
    } catch (...) {
      ::_exit(1);
    }
  }
  ::close(pipefd[1]);
  std::array<Stag, kStags> dead{};
  const ssize_t n = ::read(pipefd[0], dead.data(), sizeof dead);
  ::close(pipefd[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof dead)) << "the first owner did not register its STags";

  // The simulator notices the hang-up and cleans up; until then the card is still owned.
  std::unique_ptr<Device> dev;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!dev) {
    try {
      dev = Device::open(sim.device_string());
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), Errc::kBusy) << e.what();
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the dead owner still owns the card";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  auto c = dev->create_client();
  const PdId pd = c->alloc_pd();
  std::vector<Buffer> bufs;
  std::set<Stag> old(dead.begin(), dead.end());
  ASSERT_EQ(old.size(), static_cast<std::size_t>(kStags));
  for (int i = 0; i < kStags; ++i) {
    bufs.push_back(c->alloc_buffer(4096));
    std::fill(bufs.back().data, bufs.back().data + 4096, std::uint8_t{0xC3});
    RegisterRequest r;
    r.pd = pd;
    r.buffer = bufs.back().id;
    r.length = 4096;
    const Stag st = c->register_memory(r).stag;
    EXPECT_EQ(old.count(st), 0u) << "STag 0x" << std::hex << st << " of the dead owner issued again";
  }
  // One stream per dead STag: a tagged error puts its stream into the error state (7.1).
  for (int i = 0; i < kStags; ++i) {
    const StreamId s = c->create_stream(pd);
    dev->require_sim().inject(
        s, 0, tagged_segment(dead[static_cast<std::size_t>(i)], 0, std::vector<std::uint8_t>(256, 0x5D)));
    const auto got = drain(*dev, *c, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].kind, Completion::Kind::kError) << describe(got[0]);
    EXPECT_EQ(got[0].err_type, wire::error_type(DdpError::kTaggedInvalidStag)) << describe(got[0]);
    EXPECT_EQ(got[0].err_code, wire::error_code(DdpError::kTaggedInvalidStag)) << describe(got[0]);
    EXPECT_EQ(c->stream_state(s).state, StreamState::State::kError);
  }
  for (const Buffer& b : bufs) {
    for (std::size_t i = 0; i < b.size; ++i) ASSERT_EQ(b.data[i], 0xC3) << "byte " << i << " of buffer " << b.id;
  }
}

// ---- observers map the host memory read-only (issue 11's fourth reproduction) ----------------------

// Mappings of the simulator's memfd in this process, by permissions ("rw-s", "r--s").
std::multiset<std::string> memfd_mappings() {
  std::ifstream maps("/proc/self/maps");
  std::multiset<std::string> perms;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("rnic-sim-host-memory") == std::string::npos) continue;
    std::istringstream in(line);
    std::string range, p;
    in >> range >> p;
    perms.insert(p);
  }
  return perms;
}

TEST_F(DriverSystem, ObserverMapsTheHostMemoryReadOnly) {
  if (needs_own_sim()) GTEST_SKIP() << "opens a second device (an observer) on the test's own simulator";
  const auto before = memfd_mappings();
  EXPECT_EQ(before.count("rw-s"), 1u) << "the owner maps it read-write";
  OpenOptions o;
  o.observer = true;
  auto obs = Device::open(own_sim().device_string(), o);
  const auto after = memfd_mappings();
  EXPECT_EQ(after.count("rw-s"), before.count("rw-s")) << "the observer added a writable mapping";
  EXPECT_EQ(after.count("r--s"), before.count("r--s") + 1) << "the observer's mapping is not read-only";
  EXPECT_EQ(obs->read_reg(hw::kRegID), hw::kID_VALUE);
}

}  // namespace
}  // namespace rnic::systest
