// SPDX-License-Identifier: Apache-2.0
// rnic_kernel against AXI slave behaviour the spec allows but the other tests do not exercise:
//  - AXI A3.3.1: a slave that waits for WVALID before it asserts AWREADY (a master whose W waits for
//    AWREADY deadlocks on it); the kernel's W must be offered first and traffic must pass;
//  - error responses: a write answered SLVERR counts in CNT_WRITE_ERRORS (the kernel carries on), a
//    receive-descriptor read answered SLVERR counts in CNT_READ_ERRORS and fails the segment as Local
//    Catastrophic (RFC 5041 7.2 type 0).
#include "kernel_random.hpp"
#include "kernel_test_util.hpp"

namespace rnic::tb::test {
namespace {

using namespace rnic::hw;

// Random mixed traffic (vs the reference model) with a slave whose AWREADY waits for WVALID, random
// ready/latency on every channel otherwise.
TEST(KernelAxi, AwreadyWaitsForWvalidRandomTraffic) {
  EnvConfig c = test_config(501);
  c.mem.aw_waits_w = true;
  Env env(c);
  RandomTrafficOptions o;
  o.segments = 800;
  const RandomStats st = random_traffic(env, o);
  EXPECT_GE(st.segments, o.segments);
  EXPECT_EQ(env.finish(), "");
  EXPECT_GT(env.mem().w_before_aw(), 0u);
  EXPECT_EQ(env.counter(kRegCNT_WRITE_ERRORS_LO), 0u);
  EXPECT_EQ(env.counter(kRegCNT_READ_ERRORS_LO), 0u);
  std::printf("AW %llu, bursts whose W began before their AW: %llu\n",
              static_cast<unsigned long long>(env.mem().aw_count()),
              static_cast<unsigned long long>(env.mem().w_before_aw()));
}

// The same slave with W always ready: every burst's first W beat is accepted before its AW, data
// writes and completion writes alike, and the pipeline still runs at full rate.
TEST(KernelAxi, AwreadyWaitsForWvalidEveryBurstWFirst) {
  EnvConfig c = test_config(502, false);
  c.mem.aw_waits_w = true;
  Env env(c);
  Std s(env);
  for (int m = 0; m < 20; ++m) {
    const Bytes p = env.random_bytes(200 + 97 * static_cast<std::size_t>(m));
    env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + 3000 * static_cast<std::uint64_t>(m), 0, p, 1450));
    const std::uint64_t rb = env.alloc(4096, 64, 13);
    env.post_recv(1, 0, rb, 4096);
    env.send_all(1, untagged_message(0, static_cast<std::uint32_t>(m + 1), 7, p, 1000));
  }
  EXPECT_EQ(env.finish(), "");
  EXPECT_EQ(env.cqes().size(), 40u);
  EXPECT_GT(env.mem().aw_count(), 40u);
  EXPECT_EQ(env.mem().w_before_aw(), env.mem().aw_count()) << "W offered first for every burst";
}

// A data write answered SLVERR: counted once per failing burst; the bytes of that burst are not
// written (the slave dropped them); everything else, the completion included, goes on as usual.
TEST(KernelAxi, WriteSlverrCountsWriteErrors) {
  EnvConfig c = test_config(503);
  c.use_model = false;  // the model knows nothing of bus errors; checked here instead
  // Std's tagged buffer is the first allocation (kDataBase, 64-byte aligned): one byte in it fails.
  const std::uint64_t bad = kDataBase + 1400;
  c.mem.write_err_lo = bad;
  c.mem.write_err_hi = bad + 1;
  Env env(c);
  Std s(env);
  ASSERT_EQ(s.buf, kDataBase);
  EXPECT_EQ(env.counter(kRegCNT_WRITE_ERRORS_LO), 0u);
  const Bytes p = env.random_bytes(3000);
  const auto segs = tagged_message(Std::kStag, Std::kBaseTo, 0x77, p, 1000);
  ASSERT_GE(segs.size(), 3u);
  const Bytes before = env.host_bytes(s.buf, p.size());
  env.send_all(0, segs);
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.mem().b_errors(), 1u) << "the segment covering byte 1400 is one burst";
  EXPECT_EQ(env.counter(kRegCNT_WRITE_ERRORS_LO), 1u);
  EXPECT_EQ(env.counter(kRegCNT_READ_ERRORS_LO), 0u);
  // The failing burst is the one of the segment whose payload covers byte 1400.
  const Bytes after = env.host_bytes(s.buf, p.size());
  std::size_t off = 0;
  for (const Bytes& seg : segs) {
    const std::size_t len = seg.size() - 14;
    const bool failed = off <= 1400 && 1400 < off + len;
    const Bytes got(after.begin() + static_cast<std::ptrdiff_t>(off),
                    after.begin() + static_cast<std::ptrdiff_t>(off + len));
    const Bytes want = failed ? Bytes(before.begin() + static_cast<std::ptrdiff_t>(off),
                                      before.begin() + static_cast<std::ptrdiff_t>(off + len))
                              : Bytes(p.begin() + static_cast<std::ptrdiff_t>(off),
                                      p.begin() + static_cast<std::ptrdiff_t>(off + len));
    EXPECT_EQ(diff_bytes(got, want), "") << "segment at offset " << off << (failed ? " (SLVERR)" : "");
    off += len;
  }
  ASSERT_EQ(off, p.size());
  // The kernel carried on: the message is delivered and the next one too.
  ASSERT_EQ(env.cqes().size(), 1u);
  EXPECT_FALSE(env.cqes()[0].error()) << env.cqes()[0].str();
  EXPECT_EQ(env.cqes()[0].stag_qn, Std::kStag);
  const Bytes q = env.random_bytes(500);
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + 8192, 0, q, 1000));
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), 2u);
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + 8192, q.size()), q), "");
  EXPECT_EQ(env.counter(kRegCNT_WRITE_ERRORS_LO), 1u);
  EXPECT_EQ(env.counter(kRegCNT_MESSAGES_LO), 2u);
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 7.2 type 0: the receive-buffer descriptor read of an untagged segment is answered SLVERR:
// CNT_READ_ERRORS counts the failed beats, the segment fails Local Catastrophic (error completion,
// its counter), nothing is placed, and the stream is in error (7.1) so a later segment is dropped.
TEST(KernelAxi, DescriptorReadSlverrIsLocalCatastrophic) {
  EnvConfig c = test_config(504);
  c.use_model = false;              // the model has no bus errors; checked here instead
  c.mem.read_err_lo = kRqRingBase;  // the ring of (stream 0, QN 0)
  c.mem.read_err_hi = kRqRingBase + 0x1000;
  Env env(c);
  Std s(env);
  ASSERT_EQ(env.rq_ring_addr(0, 0), kRqRingBase);
  const std::uint64_t rb = env.alloc(2048);
  env.post_recv(0, 0, rb, 2048);
  const std::uint64_t rb1 = env.alloc(2048);
  env.post_recv(1, 0, rb1, 2048);  // another stream's ring reads fine
  const Bytes p = env.random_bytes(700);
  const Bytes before = env.host_bytes(rb, p.size());
  const auto seg0 = untagged_message(0, 1, 0x1234, p, 2000);
  ASSERT_EQ(seg0.size(), 1u);
  env.send_all(0, seg0);
  env.send_all(1, untagged_message(0, 1, 0x99, p, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  const std::uint64_t beats = (16 + env.bus_bytes() - 1) / env.bus_bytes();  // one descriptor
  EXPECT_EQ(env.mem().r_error_beats(), beats);
  EXPECT_EQ(env.counter(kRegCNT_READ_ERRORS_LO), beats);
  EXPECT_EQ(env.counter(kRegCNT_WRITE_ERRORS_LO), 0u);
  EXPECT_EQ(env.error_counter(DdpError::kLocalCatastrophic), 1u);
  ASSERT_EQ(env.cqes().size(), 2u);
  for (const Cqe& e : env.cqes()) {
    if (e.stream == 0) {
      EXPECT_TRUE(e.error()) << e.str();
      EXPECT_EQ(e.err_type, rnic::wire::error_type(DdpError::kLocalCatastrophic)) << e.str();
      EXPECT_EQ(e.err_code, rnic::wire::error_code(DdpError::kLocalCatastrophic)) << e.str();
      EXPECT_EQ(e.ssn, 0u);
      EXPECT_EQ(e.length, seg0[0].size());
    } else {
      EXPECT_EQ(e.stream, 1u);
      EXPECT_FALSE(e.error()) << e.str();
      EXPECT_EQ(e.msn, 1u);
    }
  }
  EXPECT_EQ(diff_bytes(env.host_bytes(rb, p.size()), before), "") << "nothing placed";
  EXPECT_EQ(diff_bytes(env.host_bytes(rb1, p.size()), p), "");
  // 7.1: stream 0 is in error; its next segment is dropped without a completion or a read.
  const std::uint64_t drops0 = env.counter(kRegCNT_DROPS_LO);
  const std::uint64_t ar0 = env.mem().ar_count();
  env.send_all(0, untagged_message(0, 2, 0, p, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.counter(kRegCNT_DROPS_LO), drops0 + 1);
  EXPECT_EQ(env.cqes().size(), 2u);
  EXPECT_EQ(env.mem().ar_count(), ar0);
  EXPECT_EQ(env.finish(), "");
}

}  // namespace
}  // namespace rnic::tb::test
