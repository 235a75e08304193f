// SPDX-License-Identifier: Apache-2.0
// rnic_kernel against a peer that breaks RFC 5041 4.3 (the MSN increases by one per message, every
// segment of a message carries it, the L bit ends it) and commands that end the card's right to a
// buffer while traffic is in flight (8.3.1 #6, 8.3.2). The invariant (docs/rtl-architecture.md,
// "Write safety"): completions consume receive buffers strictly in MSN order, each buffer completes
// at most once, and no buffer changes after the completion that hands it back or after the fenced
// command that takes it away. The reference model sees the same traffic (finish()).
//
// The sequences are deterministic: where a test needs a segment delivered out of DDP-SSN order it
// sends it first, so its outcome does not depend on timing.
#include "kernel_test_util.hpp"

namespace rnic::tb::test {
namespace {

using namespace rnic::hw;

// Three 100-byte buffers posted on (stream 0, QN 0) for MSNs 1, 2, 3.
struct ThreeBuffers {
  std::uint64_t buf[3] = {};
  explicit ThreeBuffers(Env& env) {
    for (unsigned i = 0; i < 3; ++i) {
      buf[i] = env.alloc(100);
      EXPECT_EQ(env.post_recv(0, 0, buf[i], 100), i + 1);
    }
  }
};

// The order error completion: 2/0x03 with the order flag, the segment's QN, MSN and DDP-SSN.
void expect_order_error(const Cqe& c, std::uint16_t stream, std::uint16_t ssn, std::uint32_t qn, std::uint32_t msn) {
  EXPECT_TRUE(c.error()) << c.str();
  EXPECT_TRUE((c.flags & kCQE_FLAGS_ORDER.mask()) != 0) << "FLAGS bit 3 (order) " << c.str();
  EXPECT_EQ(c.err_type, rnic::wire::error_type(DdpError::kUntaggedMsnRange)) << c.str();
  EXPECT_EQ(c.err_code, rnic::wire::error_code(DdpError::kUntaggedMsnRange)) << c.str();
  EXPECT_EQ(c.stream, stream);
  EXPECT_EQ(c.ssn, ssn);
  EXPECT_EQ(c.stag_qn, qn);
  EXPECT_EQ(c.msn, msn);
  EXPECT_EQ(c.length, 0u);
}

// The issue's reproduction (RFC 5041 4.3, 5.3, 7.1 untagged #5): MSN 1, then MSN 3 (MSN 2 skipped),
// then MSN 3 again with 0x77 bytes. MSN 1 completes; MSN 3 completing before MSN 2 is an order error,
// the stream fails and the third segment is dropped; no buffer is completed twice and MSN 3's buffer
// is never completed.
TEST(KernelOrder, IssueReproductionMsnSkipThenRepeat) {
  Env env(test_config(601));
  Std s(env);
  ThreeBuffers b(env);
  const std::uint64_t msn_errs0 = env.error_counter(DdpError::kUntaggedMsnRange);
  env.send(0, 0, untagged_segment(0, 1, 0, true, Bytes(10, 0x11)));
  ASSERT_TRUE(env.drain()) << env.finish();
  env.send(0, 1, untagged_segment(0, 3, 0, true, Bytes(10, 0x33)));
  ASSERT_TRUE(env.drain()) << env.finish();
  const std::uint64_t drops0 = env.counter(kRegCNT_DROPS_LO);
  env.send(0, 2, untagged_segment(0, 3, 0, true, Bytes(10, 0x77)));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 2u);
  EXPECT_FALSE(env.cqes()[0].error()) << env.cqes()[0].str();
  EXPECT_EQ(env.cqes()[0].msn, 1u);
  expect_order_error(env.cqes()[1], 0, 1, 0, 3);
  EXPECT_EQ(env.counter(kRegCNT_DROPS_LO), drops0 + 1) << "the stream is in error: SSN 2 dropped";
  EXPECT_EQ(env.error_counter(DdpError::kUntaggedMsnRange), msn_errs0 + 1);
  const Bytes b3 = env.host_bytes(b.buf[2], 10);
  EXPECT_EQ(std::count(b3.begin(), b3.end(), 0x77), 0) << "no 0x77 byte in MSN 3's buffer";
  EXPECT_EQ(env.finish(), "");
}

// A repeat of a completed MSN that reaches lookup after the completion: 7.1 untagged #5 at lookup
// (below the first available buffer), nothing placed, no order flag.
TEST(KernelOrder, RepeatAfterCompletionIsMsnRangeAtLookup) {
  Env env(test_config(602));
  Std s(env);
  ThreeBuffers b(env);
  env.send(0, 0, untagged_segment(0, 1, 0, true, Bytes(10, 0x11)));
  ASSERT_TRUE(env.drain()) << env.finish();
  const Bytes before = env.host_bytes(b.buf[0], 100);
  env.send(0, 1, untagged_segment(0, 1, 0, true, Bytes(10, 0x77)));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 2u);
  const Cqe& c = env.cqes()[1];
  EXPECT_TRUE(c.error()) << c.str();
  EXPECT_FALSE((c.flags & kCQE_FLAGS_ORDER.mask()) != 0) << c.str();
  EXPECT_EQ(c.err_type, rnic::wire::error_type(DdpError::kUntaggedMsnRange));
  EXPECT_EQ(c.err_code, rnic::wire::error_code(DdpError::kUntaggedMsnRange));
  EXPECT_EQ(diff_bytes(env.host_bytes(b.buf[0], 100), before), "") << "completed buffer changed";
  EXPECT_EQ(env.finish(), "");
}

// Early L (4.1, 4.3): two segments of MSN 1 both carry L. The second (SSN 1) arrives first and is
// placed into MSN 1's buffer while the card owns it; in DDP-SSN order SSN 0 completes MSN 1 and SSN 1
// then names a completed MSN: an order error. MSN 1 completes once, MSN 2's buffer is untouched.
TEST(KernelOrder, EarlyLastBitIsAnOrderError) {
  Env env(test_config(603));
  Std s(env);
  ThreeBuffers b(env);
  const Bytes b2 = env.host_bytes(b.buf[1], 100);
  env.send(0, 1, untagged_segment(0, 1, 10, true, Bytes(10, 0x22)));
  env.send(0, 0, untagged_segment(0, 1, 0, true, Bytes(10, 0x11)));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 2u);
  EXPECT_FALSE(env.cqes()[0].error());
  EXPECT_EQ(env.cqes()[0].msn, 1u);
  EXPECT_EQ(env.cqes()[0].length, 10u);
  expect_order_error(env.cqes()[1], 0, 1, 0, 1);
  EXPECT_EQ(diff_bytes(env.host_bytes(b.buf[1], 100), b2), "");
  EXPECT_EQ(env.finish(), "");
}

// Missing L / MSN change inside a message: SSN 0 carries MSN 1 without L, SSN 1 (sent first) MSN 2
// with L. MSN 2 cannot complete while MSN 1 is open: an order error at SSN 1; nothing completes.
TEST(KernelOrder, MsnChangeInsideAMessageIsAnOrderError) {
  Env env(test_config(604));
  Std s(env);
  ThreeBuffers b(env);
  env.send(0, 1, untagged_segment(0, 2, 0, true, Bytes(20, 0x22)));
  env.send(0, 0, untagged_segment(0, 1, 0, false, Bytes(20, 0x11)));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  expect_order_error(env.cqes()[0], 0, 1, 0, 2);
  EXPECT_EQ(env.finish(), "");
}

// After an order error the stream is in error until it is enabled again (7.1); STREAM_ENABLE clears
// the delivery state, and the queues start again from their configuration.
TEST(KernelOrder, ReenableAfterOrderError) {
  Env env(test_config(605));
  Std s(env);
  ThreeBuffers b(env);
  env.send(0, 0, untagged_segment(0, 2, 0, true, Bytes(10, 0x22)));  // MSN 1 expected
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  expect_order_error(env.cqes()[0], 0, 0, 0, 2);
  EXPECT_FALSE(env.stream_enable(0, 1));
  EXPECT_FALSE(env.queue_config(0, 0, 6, 0));
  const std::uint64_t nb = env.alloc(100);
  EXPECT_EQ(env.post_recv(0, 0, nb, 100), 1u);
  const Bytes p = env.random_bytes(40);
  env.send(0, 0, untagged_segment(0, 1, 0, true, p));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 2u);
  EXPECT_FALSE(env.cqes()[1].error()) << env.cqes()[1].str();
  EXPECT_EQ(diff_bytes(env.host_bytes(nb, p.size()), p), "");
  EXPECT_EQ(env.finish(), "");
}

// 4.3 MSN wrap with the order check: a queue starting at 0xFFFFFFFE takes 0xFFFFFFFE, 0xFFFFFFFF, 0
// in order; then MSN 2 (posted, but skipping 1) is an order error.
TEST(KernelOrder, ExpectedMsnWraps) {
  Env env(test_config(606));
  Std s(env);
  EXPECT_FALSE(env.queue_config(1, 1, 4, 0xFFFFFFFEu));
  std::uint64_t bufs[5];
  for (unsigned i = 0; i < 5; ++i) {
    bufs[i] = env.alloc(64);
    env.post_recv(1, 1, bufs[i], 64);
  }
  const std::uint32_t msns[4] = {0xFFFFFFFEu, 0xFFFFFFFFu, 0u, 2u};
  for (unsigned i = 0; i < 4; ++i)
    env.send(1, static_cast<std::uint16_t>(i),
             untagged_segment(1, msns[i], 0, true, Bytes(8, static_cast<std::uint8_t>(0x40 + i))));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 4u);
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_FALSE(env.cqes()[i].error()) << env.cqes()[i].str();
    EXPECT_EQ(env.cqes()[i].msn, msns[i]);
  }
  expect_order_error(env.cqes()[3], 1, 3, 1, 2);
  EXPECT_EQ(env.finish(), "");
}

// Snapshot of the bytes of every buffer in bufs.
std::vector<Bytes> snapshot(Env& env, const std::vector<std::uint64_t>& bufs, std::size_t len) {
  std::vector<Bytes> out;
  for (std::uint64_t a : bufs) out.push_back(env.host_bytes(a, len));
  return out;
}

// 8.3.1 #6 for streams: STREAM_TEARDOWN is fenced. With slow write acknowledgements and untagged
// segments in flight, no byte of the stream's buffers changes after the command completes (busy
// clear), and no completion for them arrives after it either.
TEST(KernelOrder, TeardownIsFenced) {
  EnvConfig cfg = test_config(607);
  cfg.mem.b_latency_min = 20;
  cfg.mem.b_latency_max = 120;
  Env env(cfg);
  Std s(env);
  std::vector<std::uint64_t> bufs;
  for (unsigned i = 0; i < 40; ++i) {
    bufs.push_back(env.alloc(2048));
    env.post_recv(0, 0, bufs.back(), 2048);
  }
  // 40 single-segment messages of 1500 bytes, back to back; the command goes in while they land.
  for (unsigned i = 0; i < 40; ++i) {
    env.send(0, static_cast<std::uint16_t>(i), untagged_segment(0, i + 1, 0, true, env.random_bytes(1500)));
  }
  env.run(200);
  const std::size_t n_before = env.cqes().size();
  ASSERT_FALSE(env.stream_teardown_abortive(0));
  const auto at_fence = snapshot(env, bufs, 2048);
  env.service();
  const std::size_t n_fence = env.cqes().size();
  ASSERT_TRUE(env.drain()) << env.finish();
  // Segments still arriving meet the torn-down stream: dropped.
  EXPECT_EQ(env.cqes().size(), n_fence) << "a completion arrived after the fenced command completed";
  const auto after = snapshot(env, bufs, 2048);
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    EXPECT_EQ(diff_bytes(after[i], at_fence[i]), "") << "buffer of MSN " << i + 1 << " changed after the fence";
  }
  EXPECT_LT(n_before, 40u) << "the command must meet traffic in flight";
  // The model saw every segment; the card stopped at the command: take the card's bytes and counters.
  for (std::uint64_t a : bufs) env.resync(a, 2048);
  env.resync_counters();
  EXPECT_EQ(env.finish(), "");
}

// hw.def QUEUE_CONFIG is fenced like STAG_INVALIDATE (write safety 2 in docs/rtl-architecture.md, RFC
// 5041 8.3.1 #6): when CMD_STATUS.busy clears, every completion decided before the command is in the ring.
// Ten tagged messages pass lookup; their writes wait 300-400 cycles for B; QUEUE_CONFIG of an unused
// queue then runs (no drain) and, once it returns, all ten completions must be there. (Found by the
// SystemC model's second reading: its regs once cleared busy on lookup's QUEUE_CONFIG echo, before the
// fence.)
TEST(KernelOrder, QueueConfigIsFenced) {
  EnvConfig cfg = test_config(609);
  cfg.mem.b_latency_min = 300;
  cfg.mem.b_latency_max = 400;
  Env env(cfg);
  Std s(env);
  for (unsigned i = 0; i < 10; ++i) {
    env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + 1500 * i, 0x30, env.random_bytes(1500), 2000));
  }
  for (unsigned i = 0; i < 5000 && !env.src().empty(); ++i) env.run(1);
  env.run(40);  // the last segment through parse and lookup
  const std::size_t n_before = env.cqes().size();
  ASSERT_LT(n_before, 10u) << "the command must meet completions waiting for their writes' B";
  ASSERT_FALSE(env.drv().queue_config(2, 1, env.rq_ring_addr(2, 1), 4, 0));
  env.service();
  EXPECT_EQ(env.cqes().size(), 10u) << "QUEUE_CONFIG completed before the completions decided before it";
  EXPECT_EQ(env.finish(), "");
}

// A queue is configured again only after STREAM_ENABLE: QUEUE_CONFIG of a configured queue, with
// traffic in flight, is refused (CMD_STATUS refused) and changes nothing: every message completes
// into the buffer posted for its MSN.
TEST(KernelOrder, QueueConfigOfAConfiguredQueueIsRefused) {
  Env env(test_config(608));
  Std s(env);
  std::vector<std::uint64_t> bufs;
  std::vector<Bytes> p;
  for (unsigned i = 0; i < 8; ++i) {
    bufs.push_back(env.alloc(2048));
    env.post_recv(0, 0, bufs.back(), 2048);
    p.push_back(env.random_bytes(1500));
  }
  for (unsigned i = 0; i < 4; ++i)
    env.send(0, static_cast<std::uint16_t>(i), untagged_segment(0, i + 1, 0, true, p[i]));
  env.run(100);
  EXPECT_TRUE(env.drv().queue_config(0, 0, env.rq_ring_addr(0, 0), 6, 0)) << "must be refused";
  EXPECT_EQ(env.mmio().read32(kRegCMD_STATUS) & 2u, 2u) << "CMD_STATUS refused bit";
  for (unsigned i = 4; i < 8; ++i)
    env.send(0, static_cast<std::uint16_t>(i), untagged_segment(0, i + 1, 0, true, p[i]));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 8u);
  for (unsigned i = 0; i < 8; ++i) {
    EXPECT_FALSE(env.cqes()[i].error()) << env.cqes()[i].str();
    EXPECT_EQ(env.cqes()[i].msn, i + 1);
    EXPECT_EQ(diff_bytes(env.host_bytes(bufs[i], p[i].size()), p[i]), "") << "MSN " << i + 1;
  }
  EXPECT_EQ(env.finish(), "");
}

// The completion ring is the driver's memory again only once the card says so (hw.def CQ_CTRL): a
// completion write loaded before CQ_CTRL = 0 still lands in the ring it was loaded for, CQ_CTRL.busy
// reads 1 until its B, and the ring cannot be moved meanwhile (CQ_BASE / CQ_LOG2_SIZE writes are
// ignored). Found by the deliver formal harness (tb/formal/deliver_fv.sv): the ring was made smaller
// under an entry on its way, which then landed past the new ring's end.
TEST(KernelOrder, CqDisableWaitsForTheCompletionWriteInFlight) {
  EnvConfig cfg = test_config(609, false);
  cfg.mem.b_latency_min = cfg.mem.b_latency_max = 400;  // a long window with the completion in flight
  Env env(cfg);
  Std s(env);
  const std::uint64_t buf = env.alloc(100);
  ASSERT_EQ(env.post_recv(0, 0, buf, 100), 1u);
  env.send(0, 0, untagged_segment(0, 1, 0, true, Bytes(10, 0x11)));
  // The completion is written once the data's B is in, and awaits its own B for 400 cycles.
  std::uint32_t ctrl = 0;
  for (int i = 0; i < 400 && (ctrl & 2u) == 0; ++i) ctrl = env.mmio().read32(kRegCQ_CTRL);
  ASSERT_EQ(ctrl, 3u) << "CQ_CTRL: enabled and busy while the completion write awaits its B";
  env.mmio().write32(kRegCQ_CTRL, 0);
  EXPECT_EQ(env.mmio().read32(kRegCQ_CTRL), 2u) << "disabled, still busy";
  env.mmio().write32(kRegCQ_BASE_LO, static_cast<std::uint32_t>(kCqBase + 0x40000));
  env.mmio().write32(kRegCQ_LOG2_SIZE, 1);
  EXPECT_EQ(env.mmio().read32(kRegCQ_BASE_LO), static_cast<std::uint32_t>(kCqBase)) << "ignored while busy";
  EXPECT_EQ(env.mmio().read32(kRegCQ_LOG2_SIZE), env.cfg().cq_log2) << "ignored while busy";
  ASSERT_TRUE(env.run_until([&] { return env.mmio().read32(kRegCQ_CTRL) == 0u; }, 2000));
  // It landed in the ring it was loaded for, and the scoreboard takes it from there.
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  EXPECT_FALSE(env.cqes()[0].error()) << env.cqes()[0].str();
  EXPECT_EQ(env.cqes()[0].msn, 1u);
  // Idle: a new configuration is taken (and the ring set up again the way a driver does it).
  env.mmio().write32(kRegCQ_LOG2_SIZE, 1);
  EXPECT_EQ(env.mmio().read32(kRegCQ_LOG2_SIZE), 1u);
  env.cq_setup(env.cfg().cq_log2);
  EXPECT_EQ(env.finish(), "");
}

}  // namespace
}  // namespace rnic::tb::test
