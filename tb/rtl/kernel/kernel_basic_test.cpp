// SPDX-License-Identifier: Apache-2.0
// rnic_kernel: identification, commands, single-segment placement and delivery, the boundaries that
// must pass (RFC 5041 7.1) and zero-length messages (5.2).
#include "kernel_test_util.hpp"

namespace rnic::tb::test {
namespace {

using namespace rnic::hw;

// hw.def: ID / VERSION / BUILD_ID / capabilities; CMD_STATUS refused bit for a bad opcode and for
// out-of-range indices; CQ registers read back.
TEST(KernelBasic, IdCapsAndCommandStatus) {
  Env env(test_config(1, false));
  env.start(4);
  auto& m = env.mmio();
  EXPECT_EQ(m.read32(kRegID), kID_VALUE);
  EXPECT_EQ(m.read32(kRegVERSION), kVERSION_VALUE);
  EXPECT_EQ(m.read32(kRegBUILD_ID), 0u);
  EXPECT_EQ(m.read32(kRegCAP_DATA_WIDTH), unsigned{RNIC_TB_DATA_WIDTH});
  EXPECT_EQ(m.read32(kRegCAP_STAGS), 256u);
  EXPECT_EQ(m.read32(kRegCAP_STREAMS), 16u);
  EXPECT_EQ(m.read32(kRegCAP_QNS), 4u);
  EXPECT_EQ(m.read32(kRegCAP_SSN_WINDOW), 64u);
  EXPECT_EQ(m.read32(kRegCQ_BASE_LO), static_cast<std::uint32_t>(kCqBase));
  EXPECT_EQ(m.read32(kRegCQ_BASE_HI), 0u);
  EXPECT_EQ(m.read32(kRegCQ_LOG2_SIZE), 4u);
  EXPECT_EQ(m.read32(kRegCQ_CTRL) & 1u, 1u);
  EXPECT_EQ(m.read32(kRegCQ_PROD), 0u);
  EXPECT_EQ(m.read32(kRegCQ_CONS), 0u);
  EXPECT_EQ(m.read32(kRegCMD_STATUS) & 1u, 0u) << "busy after reset";
  // CMD_ARG words are RW.
  m.write32(reg_cmd_arg(15), 0xA5A5F00Du);
  EXPECT_EQ(m.read32(reg_cmd_arg(15)), 0xA5A5F00Du);

  auto& d = env.drv();
  EXPECT_FALSE(d.command(kCmdNOP, {}));
  EXPECT_TRUE(d.command(0x7F, {})) << "unknown opcode must be refused";
  StagArgs a;
  a.index = 256;  // == STAG_ENTRIES
  a.length = 64;
  EXPECT_TRUE(d.stag_write(a)) << "STag index out of range must be refused";
  EXPECT_TRUE(d.stream_enable(16, 1)) << "stream out of range must be refused";
  EXPECT_TRUE(d.stream_teardown(16));
  EXPECT_FALSE(d.stream_enable(3, 1));
  EXPECT_TRUE(d.queue_config(3, 4, kRqRingBase, 4, 0)) << "QN out of range must be refused";
  EXPECT_TRUE(d.queue_config(16, 0, kRqRingBase, 4, 0));
  EXPECT_FALSE(d.queue_config(3, 0, kRqRingBase, 4, 0));
  a.index = 255;
  EXPECT_FALSE(d.stag_write(a));
  EXPECT_FALSE(d.stag_invalidate(255));
  // Nothing was sent: every counter is zero.
  for (std::uint32_t r = kRegCNT_SEGMENTS_LO; r <= kRegCNT_DUPLICATES_LO; r += 8) {
    EXPECT_EQ(env.counter(r), 0u) << "counter at 0x" << std::hex << r;
  }
  // Last: a refused STAG_INVALIDATE must finish too (busy clears, refused set).
  EXPECT_TRUE(d.stag_invalidate(1000)) << "STag index out of range must be refused";
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 8.3.1, 8.3.2: the card issues STag keys. Every STAG_WRITE of an index advances its key
// by one (CMD_RESULT returns the STag), invalidation does not reset it, and neither does a kernel
// reset: an STag value a dead owner's peer holds is not issued again for the next owner. A refused
// STAG_WRITE returns 0 and advances nothing.
TEST(KernelBasic, StagKeysIssuedByTheCardSurviveReset) {
  Env env(test_config(7));
  env.start();
  auto& d = env.drv();
  StagArgs a;
  a.index = 17;
  a.pd = 1;
  a.length = 64;
  a.host_addr = env.alloc(64);
  std::vector<std::uint8_t> keys;
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(d.stag_write(a));
    keys.push_back(a.key);
    EXPECT_EQ(env.mmio().read32(kRegCMD_RESULT), (17u << 8) | a.key);
    ASSERT_FALSE(d.stag_invalidate(17));
    EXPECT_EQ(env.mmio().read32(kRegCMD_RESULT), 0u) << "CMD_RESULT is 0 for other commands";
  }
  EXPECT_EQ(keys, (std::vector<std::uint8_t>{1, 2, 3}));
  StagArgs bad = a;
  bad.index = 256;  // == STAG_ENTRIES: refused
  EXPECT_TRUE(d.stag_write(bad));
  EXPECT_EQ(env.mmio().read32(kRegCMD_RESULT), 0u);
  // A kernel reset (ap_rst_n) clears every table but not the keys.
  env.start();
  ASSERT_FALSE(d.stag_write(a));
  EXPECT_EQ(a.key, 4u) << "the key table must survive reset";
  // 256 writes later the 8-bit key wraps past 0.
  for (int i = 0; i < 252; ++i) ASSERT_FALSE(d.stag_write(a));
  EXPECT_EQ(a.key, 0u);
  ASSERT_FALSE(d.stag_write(a));
  EXPECT_EQ(a.key, 1u);
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 5.2, 5.4: one tagged segment placed at host_addr + (TO - base) and delivered with its STag
// and RsvdULP; the CQE carries the DDP-SSN and the tagged flag, phase 1.
TEST(KernelBasic, TaggedSingleSegment) {
  Env env(test_config(2));
  Std s(env);
  const Bytes payload = env.random_bytes(300);
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + 100, 0x5A, payload, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  const Cqe& c = env.cqes()[0];
  EXPECT_TRUE(c.phase());
  EXPECT_FALSE(c.error());
  EXPECT_TRUE(c.tagged());
  EXPECT_EQ(c.stream, 0u);
  EXPECT_EQ(c.stag_qn, Std::kStag);
  EXPECT_EQ(c.rsvd_ulp, 0x5Au);
  EXPECT_EQ(c.ssn, 0u);
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + 100, payload.size()), payload), "");
  EXPECT_EQ(env.counter(kRegCNT_BYTES_LO), 300u);
  EXPECT_EQ(env.counter(kRegCNT_MESSAGES_LO), 1u);
  EXPECT_EQ(env.mmio().read32(kRegCQ_PROD), 1u);
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 4.3, 5.4: an untagged message goes to the buffer posted for its MSN; the CQE carries QN,
// MSN, message length (MO + last segment length) and the 40-bit RsvdULP.
TEST(KernelBasic, UntaggedSingleSegment) {
  Env env(test_config(3));
  Std s(env);
  const std::uint64_t b1 = env.alloc(1000), b2 = env.alloc(1000);
  EXPECT_EQ(env.post_recv(1, 0, b1, 1000), 1u);
  EXPECT_EQ(env.post_recv(1, 0, b2, 1000), 2u);
  const Bytes p1 = env.random_bytes(777), p2 = env.random_bytes(1000);
  env.send_all(1, untagged_message(0, 1, 0x123456789Aull, p1, 2000));
  env.send_all(1, untagged_message(0, 2, 0xFFFFFFFFFFull, p2, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 2u);
  const Cqe& c = env.cqes()[0];
  EXPECT_FALSE(c.error());
  EXPECT_FALSE(c.tagged());
  EXPECT_EQ(c.stream, 1u);
  EXPECT_EQ(c.stag_qn, 0u);
  EXPECT_EQ(c.msn, 1u);
  EXPECT_EQ(c.length, 777u);
  EXPECT_EQ(c.rsvd_ulp, 0x123456789Aull);
  EXPECT_EQ(env.cqes()[1].msn, 2u);
  EXPECT_EQ(env.cqes()[1].length, 1000u);
  EXPECT_EQ(env.cqes()[1].ssn, 1u);
  EXPECT_EQ(env.cqes()[1].rsvd_ulp, 0xFFFFFFFFFFull);
  EXPECT_EQ(diff_bytes(env.host_bytes(b1, p1.size()), p1), "");
  EXPECT_EQ(diff_bytes(env.host_bytes(b2, p2.size()), p2), "");
  EXPECT_EQ(env.finish(), "");
}

// Interface 3's doorbell from a hostile or buggy client: DB_QUEUE naming no queue (a stream or QN one
// past the card's, chosen so that a card keeping only the low bits would ring stream 1's QN 0, and all
// ones), then DB_PROD: SLVERR, and nothing is rung. Stream 1's QN 0 then has no buffer for MSN 1, and
// its message fails as the model says (RFC 5041 7.2 untagged type 2, no buffer); a doorbell naming a
// queue rings it.
TEST(KernelBasic, DoorbellNamingNoQueueRingsNothing) {
  Env env(test_config(5));
  Std s(env);
  const std::uint32_t streams = env.cfg().params.num_streams, qns = env.cfg().params.num_qns;
  auto& m = env.mmio();
  for (const auto& [st, qn] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {streams + 1, 0}, {1, qns}, {streams + 1, qns}, {0xFFFF, 0xFF}}) {
    m.write32(kRegDB_QUEUE, db_queue(st, qn));
    EXPECT_EQ(m.last_resp(), 0u) << "DB_QUEUE " << st << "/" << qn;
    EXPECT_EQ(m.read32(kRegDB_QUEUE), db_queue(st, qn));
    EXPECT_EQ(m.write32_resp(kRegDB_PROD, 1), 2u) << "DB_PROD with DB_QUEUE " << st << "/" << qn << " (SLVERR)";
  }
  env.run(32);
  const Bytes p = env.random_bytes(100);
  env.send_all(1, untagged_message(0, 1, 0, p, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 1u);
  EXPECT_TRUE(env.cqes()[0].error()) << "a doorbell naming no queue rang stream 1's QN 0";
  const std::uint64_t b = env.alloc(1000);
  EXPECT_EQ(env.post_recv(2, 0, b, 1000), 1u);
  env.send_all(2, untagged_message(0, 1, 0, p, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 2u);
  EXPECT_FALSE(env.cqes()[1].error());
  EXPECT_EQ(env.cqes()[1].stream, 2u);
  EXPECT_EQ(diff_bytes(env.host_bytes(b, p.size()), p), "");
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 7.1 tagged #3/#4 and untagged #4/#5 at their limits, which must pass: TO == base,
// TO + len == base + length, MO + len == buffer length, MO == buffer length for a zero-length segment.
TEST(KernelBasic, BoundariesThatPass) {
  Env env(test_config(4));
  Std s(env);
  const Bytes a = env.random_bytes(200), b = env.random_bytes(333), c = env.random_bytes(500);
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo, 1, a, 4000));                         // TO == base
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + Std::kLen - b.size(), 2, b, 4000));  // end == end
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo, 3, Bytes(Std::kLen % 4096 + 4000, 7), 4000));
  const std::uint64_t rb = env.alloc(1000);
  env.post_recv(0, 0, rb, 1000);
  env.post_recv(0, 0, env.alloc(64), 64);
  UntaggedHeader h;
  h.qn = 0;
  h.msn = 1;
  h.mo = 500;
  h.last = true;
  env.send(0, env.tx_ssn(0)++, segment(h, c));  // MO + len == 1000 exactly
  h.msn = 2;
  h.mo = 64;  // zero-length, MO == buffer length
  env.send(0, env.tx_ssn(0)++, segment(h, {}));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 5u);
  for (const Cqe& q : env.cqes()) EXPECT_FALSE(q.error()) << q.str();
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf, 100), Bytes(100, 7)), "");
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + Std::kLen - b.size(), b.size()), b), "");
  EXPECT_EQ(diff_bytes(env.host_bytes(rb + 500, c.size()), c), "");
  EXPECT_EQ(env.cqes()[3].length, 1000u);
  EXPECT_EQ(env.cqes()[4].length, 64u);
  EXPECT_EQ(env.finish(), "");
}

// RFC 5041 5.2: a zero-length tagged segment is not checked against its STag or TO (here: an invalid
// STag and a TO far out of bounds) and delivers; a zero-length untagged message consumes a buffer.
TEST(KernelBasic, ZeroLengthMessages) {
  Env env(test_config(5));
  Std s(env);
  TaggedHeader t;
  t.stag = 0xDEAD00EE;  // index out of range, key wrong
  t.to = 0xFFFFFFFFFFFFFFFFull;
  t.rsvd_ulp = 9;
  t.last = true;
  env.send(0, env.tx_ssn(0)++, segment(t, {}));
  const std::uint64_t rb = env.alloc(128);
  env.post_recv(0, 0, rb, 128);
  env.send_all(0, untagged_message(0, 1, 0x77, {}, 2000));
  // The stream is still healthy afterwards.
  const Bytes p = env.random_bytes(64);
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + 64, 0, p, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), 3u);
  EXPECT_FALSE(env.cqes()[0].error());
  EXPECT_TRUE(env.cqes()[0].tagged());
  EXPECT_EQ(env.cqes()[0].stag_qn, 0xDEAD00EEu);
  EXPECT_FALSE(env.cqes()[1].error());
  EXPECT_EQ(env.cqes()[1].msn, 1u);
  EXPECT_EQ(env.cqes()[1].length, 0u);
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + 64, p.size()), p), "");
  EXPECT_EQ(env.counter(kRegCNT_BYTES_LO), 64u);
  EXPECT_EQ(env.finish(), "");
}

}  // namespace
}  // namespace rnic::tb::test
