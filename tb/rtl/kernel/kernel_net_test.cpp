// SPDX-License-Identifier: Apache-2.0
// rnic_kernel: segments from the network front end (s_axis_rx tuser net = 1, docs/network.md). RFC 5043
// 10 lets a sender have up to 32767 chunks in flight on a stream, more than the card's reorder window:
// a segment at or beyond the window is declined (dropped, nothing changes; the front end cuts it from
// the host copy, so SCTP never acknowledges it and the peer sends it again), one behind the delivery
// point is a duplicate (a retransmission whose SACK was lost: dropped, SCTP acknowledges it again).
// Every net segment's fate comes out of m_axis_fate in order; the environment compares each with the
// reference model's (DataSink::receive_net), and the memory and completions as always.
#include <algorithm>

#include "kernel_test_util.hpp"

namespace rnic::tb::test {
namespace {

using namespace rnic::hw;
using Fate = Env::Fate;

// RFC 5043 10 / docs/network.md: a DDP-SSN at the window's end is declined, not an LLP error: no
// completion, no error counted, the stream stays normal, and the same segment sent again once the
// window has moved is taken and completes its message.
TEST(KernelNet, BeyondWindowIsDeclinedThenTakenWhenSentAgain) {
  Env env(test_config(1401));
  Std s(env);
  const Bytes payload = env.random_bytes(65 * 16);
  auto segs = tagged_message(Std::kStag, Std::kBaseTo, 0, payload, 14 + 16);
  ASSERT_EQ(segs.size(), 65u);
  const std::uint64_t llp0 = env.error_counter(DdpError::kLlpError);
  const std::uint64_t drops0 = env.counter(kRegCNT_DROPS_LO);
  env.send_net(0, 64, segs[64]);  // next is 0: 64 ahead, outside the 64-segment window
  for (std::uint16_t i = 1; i < 64; ++i) env.send_net(0, i, segs[i]);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.fates().size(), 64u);
  EXPECT_EQ(env.fates()[0], Fate::kDeclined);
  EXPECT_EQ(std::count(env.fates().begin(), env.fates().end(), Fate::kTaken), 63);
  EXPECT_EQ(env.cqes().size(), 0u) << "nothing delivered before DDP-SSN 0";
  env.send_net(0, 0, segs[0]);
  ASSERT_TRUE(env.drain()) << env.finish();
  env.send_net(0, 64, segs[64]);  // the peer's retransmission: the window moved, it fits now
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.fates().size(), 66u);
  EXPECT_EQ(env.fates()[64], Fate::kTaken);
  EXPECT_EQ(env.fates()[65], Fate::kTaken);
  ASSERT_EQ(env.cqes().size(), 1u);
  EXPECT_FALSE(env.cqes()[0].error()) << env.cqes()[0].str();
  EXPECT_EQ(env.cqes()[0].ssn, 64u);
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf, payload.size()), payload), "");
  EXPECT_EQ(env.error_counter(DdpError::kLlpError), llp0) << "declined is no LLP error";
  EXPECT_EQ(env.counter(kRegCNT_DROPS_LO), drops0) << "declined is not a CNT_DROPS drop";
  EXPECT_EQ(env.finish(), "");
}

// docs/network.md: a copy of a delivered segment (DDP-SSN behind the delivery point) is a duplicate:
// nothing is written, even with other bytes (a hostile copy), and no completion or error follows; the
// untagged one names a buffer already completed, which the card no longer owns (RFC 5041 8.3.1).
TEST(KernelNet, BehindIsDuplicateAndWritesNothing) {
  Env env(test_config(1402));
  Std s(env);
  const std::uint64_t rb = env.alloc(512);
  env.post_recv(0, 0, rb, 512);
  const Bytes p = env.random_bytes(200);
  auto t = tagged_message(Std::kStag, Std::kBaseTo, 0, p, 2000);       // DDP-SSN 0
  auto u = untagged_message(0, 1, 0x55, env.random_bytes(300), 2000);  // DDP-SSN 1
  env.send_net(0, 0, t[0]);
  env.send_net(0, 1, u[0]);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 2u);
  const Bytes tagged_before = env.host_bytes(s.buf, p.size());
  const Bytes buf_before = env.host_bytes(rb, 300);
  Bytes other = env.random_bytes(200);
  env.send_net(0, 0, tagged_message(Std::kStag, Std::kBaseTo, 0, other, 2000)[0]);
  env.send_net(0, 1, untagged_message(0, 1, 0x55, env.random_bytes(300), 2000)[0]);
  env.send_net(0, 0xC000, t[0]);  // far behind (distance >= 2^15)
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.fates().size(), 5u);
  for (std::size_t i = 2; i < 5; ++i) EXPECT_EQ(env.fates()[i], Fate::kDuplicate) << "fate " << i;
  EXPECT_EQ(env.cqes().size(), 2u) << "a duplicate completes nothing";
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf, p.size()), tagged_before), "");
  EXPECT_EQ(diff_bytes(env.host_bytes(rb, 300), buf_before), "") << "a completed buffer was written";
  EXPECT_EQ(env.finish(), "");
}

// The window check of a net segment comes first: a declined segment that would fail RFC 5041 7.1
// (here a wrong STag key) is not judged, since SCTP brings it again; inside the window the same
// segment is the RFC 5041 error, fate taken, and the stream's later net segments are dropped (taken).
TEST(KernelNet, Rfc5041ErrorInsideWindowOnly) {
  Env env(test_config(1403));
  Std s(env);
  const Bytes bad = tagged_message((Std::kStagIndex << 8) | 0x77, Std::kBaseTo, 0, env.random_bytes(64), 2000)[0];
  env.send_net(1, 200, bad);
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), 0u);
  env.send_net(1, 0, bad);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  EXPECT_TRUE(env.cqes()[0].error());
  EXPECT_EQ(env.cqes()[0].err_type, rnic::wire::error_type(DdpError::kTaggedInvalidStag));
  const std::uint64_t drops0 = env.counter(kRegCNT_DROPS_LO);
  env.send_net(1, 1, tagged_message(Std::kStag, Std::kBaseTo, 0, env.random_bytes(64), 2000)[0]);
  env.send_net(1, 900, tagged_message(Std::kStag, Std::kBaseTo, 0, env.random_bytes(64), 2000)[0]);
  ASSERT_TRUE(env.drain()) << env.finish();
  const std::vector<Fate> want = {Fate::kDeclined, Fate::kTaken, Fate::kTaken, Fate::kTaken};
  EXPECT_EQ(env.fates(), want) << "a stream in error drops everything, whatever its DDP-SSN";
  EXPECT_EQ(env.counter(kRegCNT_DROPS_LO), drops0 + 2);
  EXPECT_EQ(env.finish(), "");
}

// Segments without the net flag keep the LLP error of RFC 5043 10 (KernelError.LlpErrorSsnOutsideWindow)
// and produce no fate; a net segment on a stream never enabled is dropped: taken, whatever its DDP-SSN.
TEST(KernelNet, OnlyNetSegmentsHaveFates) {
  Env env(test_config(1404));
  Std s(env);
  env.send(0, 0, tagged_message(Std::kStag, Std::kBaseTo, 0, env.random_bytes(64), 2000)[0]);
  env.send(2, 64, tagged_message(Std::kStag, Std::kBaseTo, 0, env.random_bytes(64), 2000)[0]);
  env.send_net(3, 0, tagged_message(Std::kStag, Std::kBaseTo, 0, env.random_bytes(64), 2000)[0]);
  env.send_net(3, 300, tagged_message(Std::kStag, Std::kBaseTo, 0, env.random_bytes(64), 2000)[0]);
  ASSERT_TRUE(env.drain()) << env.finish();
  const std::vector<Fate> want = {Fate::kTaken, Fate::kTaken};
  EXPECT_EQ(env.fates(), want);
  ASSERT_EQ(env.cqes().size(), 2u);
  EXPECT_TRUE(env.cqes()[1].error());
  EXPECT_EQ(env.cqes()[1].err_type, rnic::wire::error_type(DdpError::kLlpError));
  EXPECT_EQ(env.finish(), "");
}

// What SCTP does to a stream under loss and a large window (RFC 5043 10: up to 32767 chunks in flight):
// every segment of many messages is sent in a shuffled order, many far ahead of the window; the
// declined ones are sent again in the next round until all are taken. Each round starts with copies of
// segments taken in earlier rounds (retransmissions whose SACK was lost): duplicates, or placed again
// while undelivered. Every message is delivered once, in order, with every byte right (the model
// checks memory, completions and counters).
TEST(KernelNet, RandomRetransmissionRounds) {
  Env env(test_config(1405));
  Std s(env);
  // Which segments are declined by the lagging delivery point, and which copies are placed again, is a
  // matter of timing: the RTL and the SystemC model (lockstep) differ there, legally. Completions are
  // still compared between the two, and both against the reference model.
  env.lockstep_timing_dependent(s.buf, Std::kLen);
  std::mt19937_64& rng = env.rng();
  std::vector<Bytes> segs;  // by DDP-SSN
  std::uint64_t off = 0;
  for (int m = 0; m < 64; ++m) {
    const Bytes p = env.random_bytes(1 + rng() % 900);
    for (auto& g : tagged_message(Std::kStag, Std::kBaseTo + off, 0, p, 14 + 64 + rng() % 200)) segs.push_back(g);
    off += p.size();
  }
  ASSERT_GT(segs.size(), 200u) << "more segments than the window";
  std::vector<std::uint16_t> pending(segs.size());
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = static_cast<std::uint16_t>(i);
  std::vector<bool> taken(segs.size(), false);
  for (int round = 0; !pending.empty(); ++round) {
    ASSERT_LT(round, 40) << "no progress";
    std::shuffle(pending.begin(), pending.end(), rng);
    std::vector<std::uint16_t> sent;
    // Copies first: the delivery point stands still while they pass (nothing new is placed).
    std::vector<std::uint16_t> old;
    for (std::size_t i = 0; i < segs.size(); ++i) {
      if (taken[i]) old.push_back(static_cast<std::uint16_t>(i));
    }
    for (std::size_t k = 0; k < old.size() / 8; ++k) {
      const std::uint16_t d = old[rng() % old.size()];
      env.send_net(0, d, segs[d]);
      sent.push_back(d);
    }
    for (std::uint16_t ssn : pending) {
      env.send_net(0, ssn, segs[ssn]);
      sent.push_back(ssn);
    }
    const std::size_t first = env.fates().size();
    ASSERT_TRUE(env.drain()) << env.finish();
    ASSERT_EQ(env.fates().size(), first + sent.size()) << env.finish();
    std::vector<std::uint16_t> next;
    for (std::size_t k = 0; k < sent.size(); ++k) {
      if (env.fates()[first + k] == Fate::kTaken) taken[sent[k]] = true;
    }
    for (std::uint16_t ssn : pending) {
      if (!taken[ssn]) next.push_back(ssn);
    }
    pending = std::move(next);
  }
  ASSERT_EQ(env.cqes().size(), 64u);
  const auto count = [&](Fate f) { return std::count(env.fates().begin(), env.fates().end(), f); };
  std::printf("[ NET      ] %zu segments: %ld taken, %ld duplicates, %ld declined (%llu by the lagging window)\n",
              segs.size(), static_cast<long>(count(Fate::kTaken)), static_cast<long>(count(Fate::kDuplicate)),
              static_cast<long>(count(Fate::kDeclined)), static_cast<unsigned long long>(env.lag_declines()));
  EXPECT_GT(count(Fate::kDuplicate), 0);
  EXPECT_GT(count(Fate::kDeclined), 0);
  for (const Cqe& c : env.cqes()) EXPECT_FALSE(c.error()) << c.str();
  EXPECT_EQ(env.finish(), "");
}

}  // namespace
}  // namespace rnic::tb::test
