// SPDX-License-Identifier: Apache-2.0
// rnic_kernel: placement and in-order delivery (RFC 5041 5.3, 5.4), duplicates, MSN wrap (4.3),
// STag invalidation under traffic (8.3.1 #6), teardown, and a full completion ring.
#include <algorithm>
#include <numeric>
#include <set>

#include "kernel_test_util.hpp"

namespace rnic::tb::test {
namespace {

using namespace rnic::hw;

// RFC 5041 5.3: segments of a tagged message placed as they arrive, in any order within the window;
// 5.4: the message is delivered once, when every segment is placed, with the SSN of its last segment.
TEST(KernelDelivery, MultiSegmentTaggedOutOfOrder) {
  Env env(test_config(201));
  Std s(env);
  const Bytes payload = env.random_bytes(8 * 200 - 37);
  auto segs = tagged_message(Std::kStag, Std::kBaseTo + 13, 0x11, payload, 14 + 200);
  ASSERT_EQ(segs.size(), 8u);
  const std::vector<unsigned> order = {5, 1, 7, 3, 2, 6, 4};  // all but segment 0
  for (unsigned i : order) env.send(0, static_cast<std::uint16_t>(i), segs[i]);
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), 0u) << "no delivery before segment 0 is placed";
  // 5.3: placed already.
  EXPECT_EQ(
      diff_bytes(env.host_bytes(s.buf + 13 + 200, payload.size() - 200), Bytes(payload.begin() + 200, payload.end())),
      "");
  env.send(0, 0, segs[0]);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  EXPECT_EQ(env.cqes()[0].ssn, 7u);
  EXPECT_EQ(env.cqes()[0].stag_qn, Std::kStag);
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + 13, payload.size()), payload), "");
  EXPECT_EQ(env.counter(kRegCNT_MESSAGES_LO), 1u);
  EXPECT_EQ(env.finish(), "");
}

// 5.3 / 5.4 for untagged: the segments' MOs land in the MSN's buffer in any order; the completion
// reports the message length.
TEST(KernelDelivery, MultiSegmentUntaggedOutOfOrder) {
  Env env(test_config(202));
  Std s(env);
  const std::uint64_t b = env.alloc(4096, 64, 5);
  env.post_recv(0, 0, b, 4096);
  const Bytes payload = env.random_bytes(3000);
  auto segs = untagged_message(0, 1, 0xABCDE, payload, 18 + 512);
  ASSERT_EQ(segs.size(), 6u);
  for (unsigned i : {3u, 5u, 0u, 4u, 1u}) env.send(0, static_cast<std::uint16_t>(i), segs[i]);
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), 0u);
  env.send(0, 2, segs[2]);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  EXPECT_EQ(env.cqes()[0].msn, 1u);
  EXPECT_EQ(env.cqes()[0].length, 3000u);
  EXPECT_EQ(env.cqes()[0].ssn, 5u);
  EXPECT_EQ(diff_bytes(env.host_bytes(b, payload.size()), payload), "");
  EXPECT_EQ(env.finish(), "");
}

// RFC 5043 10 / architecture: the last DDP-SSN inside the window (next + SSN_WINDOW - 1) is accepted.
TEST(KernelDelivery, WindowEdgeAccepted) {
  Env env(test_config(203));
  Std s(env);
  const Bytes payload = env.random_bytes(64 * 16);
  auto segs = tagged_message(Std::kStag, Std::kBaseTo, 0, payload, 14 + 16);
  ASSERT_EQ(segs.size(), 64u);
  env.send(0, 63, segs[63]);
  for (std::uint16_t i = 0; i < 63; ++i) env.send(0, i, segs[i]);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  EXPECT_FALSE(env.cqes()[0].error());
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf, payload.size()), payload), "");
  EXPECT_EQ(env.finish(), "");
}

// 5.4: a later message whose segments all arrive first is delivered after the earlier one.
TEST(KernelDelivery, LaterMessageWaitsForEarlier) {
  Env env(test_config(204));
  Std s(env);
  env.post_recv(0, 0, env.alloc(1024), 1024);
  env.post_recv(0, 0, env.alloc(1024), 1024);
  auto a = untagged_message(0, 1, 1, env.random_bytes(700), 18 + 200);                // SSN 0..3
  auto b = untagged_message(0, 2, 2, env.random_bytes(300), 18 + 200);                // SSN 4..5
  auto t = tagged_message(Std::kStag, Std::kBaseTo, 3, env.random_bytes(100), 2000);  // SSN 6
  env.send(0, 6, t[0]);
  env.send(0, 5, b[1]);
  env.send(0, 4, b[0]);
  env.send(0, 3, a[3]);
  env.send(0, 1, a[1]);
  env.send(0, 2, a[2]);
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), 0u);
  env.send(0, 0, a[0]);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 3u);
  EXPECT_EQ(env.cqes()[0].msn, 1u);
  EXPECT_EQ(env.cqes()[1].msn, 2u);
  EXPECT_TRUE(env.cqes()[2].tagged());
  EXPECT_EQ(env.finish(), "");
}

// 5.4 across streams: messages of four streams interleaved segment by segment, each stream's segments
// shuffled within the window; completions of each stream come in its own message order.
TEST(KernelDelivery, InterleavedStreamsInOrder) {
  Env env(test_config(205));
  Std s(env);
  EXPECT_FALSE(env.stream_enable(3, 1));
  EXPECT_FALSE(env.queue_config(3, 2, 6));
  struct Tx {
    std::uint16_t stream, ssn;
    Bytes seg;
  };
  std::vector<std::vector<Tx>> per(4);
  const std::uint16_t streams[4] = {0, 1, 2, 3};
  std::uint64_t to = Std::kBaseTo;
  for (unsigned si = 0; si < 4; ++si) {
    const std::uint16_t st = streams[si];
    const std::uint32_t qn = st == 3 ? 2 : 0;
    std::uint16_t ssn = 0;
    for (unsigned m = 0; m < 5; ++m) {
      std::vector<Bytes> segs;
      const std::size_t len = 100 + 211 * m + 17 * si;
      if (m % 2 == 0 && st != 2) {  // stream 2 has PD 2: untagged only
        segs = tagged_message(Std::kStag, to, static_cast<std::uint8_t>(m), env.random_bytes(len), 14 + 256);
        to += len;
      } else {
        const std::uint64_t b = env.alloc(len, 16, si);
        const std::uint32_t msn = env.post_recv(st, qn, b, static_cast<std::uint32_t>(len), true, 0);
        segs = untagged_message(qn, msn, m, env.random_bytes(len), 18 + 256);
      }
      for (auto& g : segs) per[si].push_back(Tx{st, ssn++, std::move(g)});
    }
    // Shuffle within blocks of 8 (inside the 64 window).
    for (std::size_t i = 0; i < per[si].size(); i += 8) {
      auto e = std::min(per[si].size(), i + 8);
      std::shuffle(per[si].begin() + static_cast<std::ptrdiff_t>(i), per[si].begin() + static_cast<std::ptrdiff_t>(e),
                   env.rng());
    }
  }
  env.run(64);
  std::vector<std::size_t> pos(4, 0);
  for (;;) {
    std::vector<unsigned> live;
    for (unsigned si = 0; si < 4; ++si) {
      if (pos[si] < per[si].size()) live.push_back(si);
    }
    if (live.empty()) break;
    const unsigned si = live[env.rng()() % live.size()];
    const Tx& t = per[si][pos[si]++];
    env.send(t.stream, t.ssn, t.seg);
  }
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), 20u);
  for (const Cqe& c : env.cqes()) EXPECT_FALSE(c.error()) << c.str();
  EXPECT_EQ(env.finish(), "");  // per-stream order and contents against the model
}

// 5.3: a duplicate of a placed, undelivered segment is placed again and counted; the message is
// delivered once.
TEST(KernelDelivery, DuplicateSegment) {
  Env env(test_config(206));
  Std s(env);
  const Bytes payload = env.random_bytes(4 * 100);
  auto segs = tagged_message(Std::kStag, Std::kBaseTo + 1000, 0, payload, 14 + 100);
  env.send(0, 1, segs[1]);
  env.send(0, 2, segs[2]);
  env.send(0, 2, segs[2]);
  env.send(0, 3, segs[3]);
  env.send(0, 1, segs[1]);
  env.send(0, 0, segs[0]);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  EXPECT_EQ(env.counter(kRegCNT_DUPLICATES_LO), 2u);
  EXPECT_EQ(env.counter(kRegCNT_BYTES_LO), 600u);
  EXPECT_EQ(env.counter(kRegCNT_MESSAGES_LO), 1u);
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + 1000, payload.size()), payload), "");
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 4.3: MSN wraps 0xFFFFFFFF -> 0. QUEUE_CONFIG with first MSN 0xFFFFFFFE; four messages
// (MSNs 0xFFFFFFFE, 0xFFFFFFFF, 0, 1) land in the four posted buffers in order; the fifth MSN has no
// buffer. (The model's queues start at MSN 1: checked directly.)
TEST(KernelDelivery, MsnWrap) {
  EnvConfig cfg = test_config(207);
  cfg.use_model = false;
  Env env(cfg);
  Std s(env);
  ASSERT_FALSE(env.queue_config(1, 1, 2, 0xFFFFFFFEu));  // 4-entry ring
  std::vector<std::uint64_t> bufs;
  const std::uint32_t msns[4] = {0xFFFFFFFEu, 0xFFFFFFFFu, 0u, 1u};
  for (unsigned i = 0; i < 4; ++i) {
    bufs.push_back(env.alloc(2048));
    EXPECT_EQ(env.post_recv(1, 1, bufs[i], 2048), msns[i]);
  }
  EXPECT_EQ(env.drv().rq_prod(1, 1), 1u);
  std::vector<Bytes> payloads;
  for (unsigned i = 0; i < 4; ++i) {
    payloads.push_back(env.random_bytes(500 + 400 * i));
    env.send_all(1, untagged_message(1, msns[i], 0x100 + i, payloads[i], 18 + 512));
  }
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 4u);
  for (unsigned i = 0; i < 4; ++i) {
    const Cqe& c = env.cqes()[i];
    EXPECT_FALSE(c.error()) << c.str();
    EXPECT_EQ(c.stream, 1u);
    EXPECT_EQ(c.stag_qn, 1u);
    EXPECT_EQ(c.msn, msns[i]);
    EXPECT_EQ(c.length, payloads[i].size());
    EXPECT_EQ(c.rsvd_ulp, 0x100u + i);
    EXPECT_EQ(diff_bytes(env.host_bytes(bufs[i], payloads[i].size()), payloads[i]), "") << "buffer " << i;
  }
  // MSN 2: nothing posted for it.
  const auto extra = untagged_message(1, 2, 0, env.random_bytes(10), 2000);
  env.send_all(1, extra);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 5u);
  EXPECT_TRUE(env.cqes()[4].error());
  EXPECT_EQ(env.cqes()[4].err_type, rnic::wire::error_type(DdpError::kUntaggedNoBuffer));
  EXPECT_EQ(env.cqes()[4].err_code, rnic::wire::error_code(DdpError::kUntaggedNoBuffer));
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 7.1 untagged #2 with a first MSN other than 1: before the driver posts anything, no MSN
// has a buffer (the queue must not start with phantom buffers between producer 0 and head MSN - 1).
TEST(KernelDelivery, FirstMsnQueueStartsEmpty) {
  EnvConfig cfg = test_config(208);
  cfg.use_model = false;
  Env env(cfg);
  Std s(env);
  ASSERT_FALSE(env.queue_config(1, 1, 2, 0xFFFFFFFEu));
  env.send_all(1, untagged_message(1, 0xFFFFFFFEu, 0, env.random_bytes(64), 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  EXPECT_TRUE(env.cqes()[0].error()) << env.cqes()[0].str();
  EXPECT_EQ(env.cqes()[0].err_code, rnic::wire::error_code(DdpError::kUntaggedNoBuffer)) << env.cqes()[0].str();
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 8.3.1 #6: once STAG_INVALIDATE has completed (CMD_STATUS not busy), no placement through
// the STag is in flight and none can start: the buffer never changes again, and later segments to it
// fail with Invalid STag. Traffic to the STag runs on four streams while the command executes.
TEST(KernelDelivery, InvalidateDuringTraffic) {
  EnvConfig cfg = test_config(209);
  cfg.use_model = false;
  cfg.mem.b_latency_min = 20;  // slow acknowledgements: writes are in flight when the command runs
  cfg.mem.b_latency_max = 120;
  Env env(cfg);
  Std s(env);
  EXPECT_FALSE(env.stream_enable(3, 1));
  StagArgs a;
  a.index = 20;
  a.pd = 1;
  a.base_to = 0;
  a.length = 0x20000;
  a.host_addr = env.alloc(a.length);
  EXPECT_FALSE(env.stag_write(a));
  const std::uint32_t stag = (20u << 8) | a.key;
  const std::uint16_t streams[4] = {0, 1, 3, 0};
  unsigned n = 0;
  auto send_one = [&] {
    const std::uint16_t st = streams[n % 3];
    env.send_all(st, tagged_message(stag, 0x400 * std::uint64_t{n}, 0, env.random_bytes(1000), 2000));
    ++n;
  };
  for (unsigned i = 0; i < 30; ++i) send_one();
  env.run(40);
  EXPECT_FALSE(env.drv().stag_invalidate(20));
  const Bytes snapshot = env.host_bytes(a.host_addr, a.length);
  const std::uint64_t cq_at_done = env.cqes().size();
  for (unsigned i = 0; i < 30; ++i) send_one();
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(diff_bytes(env.host_bytes(a.host_addr, a.length), snapshot), "")
      << "buffer changed after STAG_INVALIDATE completed";
  // Every stream: deliveries, then at most one Invalid STag error; every segment sent after the
  // command completed is refused or dropped.
  unsigned errors = 0;
  std::set<std::uint16_t> failed;
  for (const Cqe& c : env.cqes()) {
    if (c.error()) {
      ++errors;
      EXPECT_EQ(c.err_type, 1u) << c.str();
      EXPECT_EQ(c.err_code, 0u) << c.str();
      EXPECT_TRUE(failed.insert(c.stream).second) << "two errors on one stream: " << c.str();
    } else {
      EXPECT_EQ(failed.count(c.stream), 0u) << "delivery after the stream's error: " << c.str();
    }
  }
  EXPECT_EQ(errors, 3u) << "each stream hits the invalidated STag once";
  EXPECT_GE(env.cqes().size(), cq_at_done);
  EXPECT_EQ(env.finish(), "");
}

// Teardown: a torn-down stream and a never-enabled stream drop every segment silently (counted);
// STREAM_ENABLE brings a stream back with DDP-SSN 0.
TEST(KernelDelivery, TeardownDropsAndReenable) {
  Env env(test_config(210));
  Std s(env);
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo, 0, env.random_bytes(100), 2000));
  EXPECT_FALSE(env.stream_teardown(0));
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + 0x1000, 0, env.random_bytes(100), 2000));
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + 0x2000, 0, env.random_bytes(3000), 14 + 1000));
  env.send_all(5, tagged_message(Std::kStag, Std::kBaseTo + 0x3000, 0, env.random_bytes(100), 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), 1u);
  EXPECT_EQ(env.counter(kRegCNT_DROPS_LO), 5u);
  for (std::uint64_t a = s.buf + 0x1000; a < s.buf + 0x4000; ++a) {
    if (env.mem().data()[a] != pattern_byte(a)) {
      ADD_FAILURE() << "dropped segment placed at 0x" << std::hex << a;
      break;
    }
  }
  EXPECT_FALSE(env.stream_enable(0, 1));
  const Bytes p = env.random_bytes(200);
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + 0x5000, 7, p, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 2u);
  EXPECT_EQ(env.cqes()[1].ssn, 0u);
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + 0x5000, p.size()), p), "");
  EXPECT_EQ(env.finish(), "");
}

// A stream index beyond CAP_STREAMS is torn down: its segments are dropped (no model: it has no such
// stream).
TEST(KernelDelivery, StreamOutOfRangeDropped) {
  EnvConfig cfg = test_config(211);
  cfg.use_model = false;
  Env env(cfg);
  Std s(env);
  env.send(16, 0, tagged_message(Std::kStag, Std::kBaseTo, 0, env.random_bytes(100), 2000)[0]);
  env.send(0xFFFF, 0, tagged_message(Std::kStag, Std::kBaseTo, 0, env.random_bytes(100), 2000)[0]);
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), 0u);
  EXPECT_EQ(env.counter(kRegCNT_SEGMENTS_LO), 2u);
  EXPECT_EQ(env.counter(kRegCNT_DROPS_LO), 2u);
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 7.1: after an error the stream drops everything until STREAM_ENABLE resets it.
TEST(KernelDelivery, ReenableAfterError) {
  Env env(test_config(212));
  Std s(env);
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo - 1, 0, env.random_bytes(10), 2000));  // BaseBounds
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo, 0, env.random_bytes(10), 2000));      // dropped
  EXPECT_FALSE(env.stream_enable(0, 1));
  EXPECT_FALSE(env.queue_config(0, 0, 6));
  env.post_recv(0, 0, env.alloc(100), 100);
  env.send_all(0, untagged_message(0, 1, 0, env.random_bytes(100), 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 2u);
  EXPECT_TRUE(env.cqes()[0].error());
  EXPECT_FALSE(env.cqes()[1].error());
  EXPECT_EQ(env.cqes()[1].ssn, 0u);
  EXPECT_EQ(env.finish(), "");
}

// Completion ring full (4 entries, driver not consuming): the kernel stops writing completions,
// backs up to its input and loses nothing; once the driver consumes, everything arrives in order
// (the phase bit flips every lap).
TEST(KernelDelivery, CompletionRingFull) {
  Env env(test_config(213));
  Std s(env);
  env.cq_setup(2);
  env.set_consume(false);
  const unsigned kMsgs = 200;
  for (unsigned i = 0; i < kMsgs; ++i) {
    env.send_all(static_cast<std::uint16_t>(i % 2),
                 tagged_message(Std::kStag, Std::kBaseTo + 64 * std::uint64_t{i}, static_cast<std::uint8_t>(i),
                                env.random_bytes(32), 2000));
  }
  env.run(6000);
  EXPECT_EQ(env.mmio().read32(kRegCQ_PROD), 4u) << "ring of 4 entries full";
  EXPECT_GT(env.src().pending(), 0u) << "the kernel must back up to its input while the ring is full";
  EXPECT_GT(env.src().backpressure_cycles(), 0u);
  for (unsigned i = 0; i < 4; ++i) {
    const Cqe c = decode_cqe(env.mem().data() + kCqBase + 64 * i);
    EXPECT_TRUE(c.phase()) << i;
    EXPECT_EQ(c.rsvd_ulp, i) << "entry " << i << " overwritten? " << c.str();
  }
  env.set_consume(true);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), kMsgs);
  for (unsigned i = 0; i < kMsgs; ++i) EXPECT_EQ(env.cqes()[i].rsvd_ulp, i);
  EXPECT_EQ(env.mmio().read32(kRegCQ_PROD), kMsgs);
  EXPECT_EQ(env.finish(), "");
}

}  // namespace
}  // namespace rnic::tb::test
