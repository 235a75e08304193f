// SPDX-License-Identifier: Apache-2.0
// rnic_kernel: the lookup stage's pipeline and receive-descriptor cache (docs/rtl-architecture.md,
// "Lookup pipeline"): the error state reaching segments already in the pipeline (RFC 5041 7.1), MSNs
// beyond the cache read directly (4.3, 5.3), no stale descriptor after a queue is configured again,
// and back-to-back untagged traffic against the model while buffers are posted under it.
#include <algorithm>
#include <numeric>

#include "kernel_test_util.hpp"

namespace rnic::tb::test {
namespace {

using namespace rnic::hw;

// RFC 5041 7.1: after an error every later segment of the stream is dropped, including the ones that
// arrive back to back behind the failing one (already in the lookup pipeline when validate fails it).
// Segments of another stream interleaved with them are unaffected.
TEST(KernelLookup, ErrorStateReachesBackToBackSegments) {
  Env env(test_config(401, /*random_timing=*/false));
  Std s(env);
  // Stream 0: a bad key at SSN 0, then six valid single-segment messages directly behind it.
  env.send_all(0, tagged_message((Std::kStagIndex << 8) | 0x43, Std::kBaseTo, 0, env.random_bytes(40), 2000));
  for (std::uint16_t i = 1; i <= 6; ++i) {
    env.send(0, i, tagged_message(Std::kStag, Std::kBaseTo + 0x100 * i, 0, env.random_bytes(40), 2000)[0]);
    env.send(1, static_cast<std::uint16_t>(i - 1),
             tagged_message(Std::kStag, Std::kBaseTo + 0x2000 + 0x100 * i, 0, env.random_bytes(40), 2000)[0]);
  }
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 7u);  // the error and stream 1's six messages
  EXPECT_EQ(env.counter(kRegCNT_DROPS_LO), 6u);
  for (std::uint64_t a = s.buf + 0x100; a < s.buf + 0x800; ++a) {
    if (env.mem().data()[a] != pattern_byte(a)) {
      ADD_FAILURE() << "a segment behind the error was placed at 0x" << std::hex << a;
      break;
    }
  }
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 4.3 / 5.3: untagged messages arriving in reverse order, up to 39 MSNs ahead of the next one
// to deliver: those beyond the descriptor cache are read directly, the near ones through the cache;
// every message lands in the buffer posted for its MSN and is delivered in order once SSN 0 arrives.
TEST(KernelLookup, UntaggedMsnsFarAheadOfTheCache) {
  Env env(test_config(402));
  Std s(env);
  constexpr unsigned kMsgs = 40;
  std::vector<std::uint64_t> bufs;
  for (unsigned m = 0; m < kMsgs; ++m) {
    bufs.push_back(env.alloc(128));
    env.post_recv(0, 0, bufs.back(), 128, true, 0);
  }
  env.run(64);
  std::vector<Bytes> payloads;
  for (unsigned m = 0; m < kMsgs; ++m) payloads.push_back(env.random_bytes(20 + m));
  for (unsigned i = kMsgs; i-- > 0;) {
    env.send(0, static_cast<std::uint16_t>(i), untagged_message(0, i + 1, i, payloads[i], 2000)[0]);
  }
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), kMsgs);
  for (unsigned m = 0; m < kMsgs; ++m) {
    EXPECT_EQ(env.cqes()[m].msn, m + 1);
    EXPECT_EQ(diff_bytes(env.host_bytes(bufs[m], payloads[m].size()), payloads[m]), "") << "MSN " << m + 1;
  }
  EXPECT_EQ(env.finish(), "");
}

// A queue configured again (after STREAM_ENABLE) starts empty: descriptors cached from its previous
// ring are never used for the new buffers of the same MSNs. Descriptor reads take 300 cycles, so the
// new descriptors cannot have replaced the cached ones when the segments arrive.
TEST(KernelLookup, ReconfiguredQueueUsesNoStaleDescriptor) {
  EnvConfig cfg = test_config(403);
  cfg.mem.r_latency_min = cfg.mem.r_latency_max = 300;
  Env env(cfg);
  Std s(env);
  for (unsigned i = 0; i < 8; ++i) env.post_recv(0, 0, env.alloc(256), 256);
  env.send_all(0, untagged_message(0, 1, 0, env.random_bytes(100), 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  env.run(2000);  // let the cache fill with the descriptors of MSN 2..8
  EXPECT_FALSE(env.stream_enable(0, 1));
  EXPECT_FALSE(env.queue_config(0, 0, 6));
  std::vector<std::uint64_t> fresh;
  for (unsigned i = 0; i < 4; ++i) {
    fresh.push_back(env.alloc(256));
    env.post_recv(0, 0, fresh.back(), 256, true, 0);
  }
  std::vector<Bytes> p;
  for (unsigned m = 1; m <= 4; ++m) {
    p.push_back(env.random_bytes(64 + m));
    env.send_all(0, untagged_message(0, m, m, p.back(), 2000));
  }
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 5u);
  for (unsigned m = 0; m < 4; ++m) {
    EXPECT_EQ(diff_bytes(env.host_bytes(fresh[m], p[m].size()), p[m]), "") << "MSN " << m + 1;
  }
  EXPECT_EQ(env.finish(), "");
}

// Back-to-back untagged traffic on four queues of two streams, single- and multi-segment messages,
// buffers posted in batches while earlier messages are still arriving; random memory timing. Every
// message against the model (placement, completions, counters, untouched memory).
TEST(KernelLookup, BackToBackUntaggedWhilePosting) {
  EnvConfig cfg = test_config(404);
  cfg.input_idle = 0.0;
  Env env(cfg);
  Std s(env);
  EXPECT_FALSE(env.queue_config(0, 1, 6));
  EXPECT_FALSE(env.queue_config(1, 1, 6));
  struct Q {
    std::uint16_t stream;
    std::uint32_t qn;
    std::uint32_t next_msn = 1;
  };
  std::vector<Q> qs = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  std::uint16_t ssn[2] = {0, 0};
  unsigned sent = 0;
  for (unsigned batch = 0; batch < 12; ++batch) {
    // Post 6 buffers on every queue, then send 6 messages per queue interleaved.
    for (Q& q : qs) {
      for (unsigned i = 0; i < 6; ++i) env.post_recv(q.stream, q.qn, env.alloc(512), 512, true, 0);
    }
    env.run(16);
    for (unsigned i = 0; i < 6; ++i) {
      for (Q& q : qs) {
        const std::size_t len = env.rng()() % 3 == 0 ? 300 + env.rng()() % 200 : env.rng()() % 48;
        const auto segs = untagged_message(q.qn, q.next_msn++, sent, env.random_bytes(len), 18 + 128);
        for (const auto& sg : segs) env.send(q.stream, ssn[q.stream]++, sg);
        ++sent;
      }
    }
  }
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), sent);
  for (const Cqe& c : env.cqes()) EXPECT_FALSE(c.error()) << c.str();
  EXPECT_EQ(env.finish(), "");
}

}  // namespace
}  // namespace rnic::tb::test
