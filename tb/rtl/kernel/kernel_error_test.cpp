// SPDX-License-Identifier: Apache-2.0
// rnic_kernel: every RFC 5041 7.2 error reachable from the wire. Each test sends one failing segment
// and checks the error completion (type, code, stream, DDP-SSN, segment length, header bytes), the
// error's counter, and RFC 5041 7.1's consequence: the stream is in error, so a later valid segment on
// it is dropped silently (drop counter, no completion, nothing written). The reference model checks
// the same traffic independently (finish()).
#include "kernel_test_util.hpp"

namespace rnic::tb::test {
namespace {

using namespace rnic::hw;

// Sends seg on stream with DDP-SSN ssn and checks it fails with e; then checks the stream drops.
void expect_error(Env& env, const Std& s, std::uint16_t stream, std::uint16_t ssn, const Bytes& seg, DdpError e,
                  bool check_length = true) {
  SCOPED_TRACE(std::string("expected ") + rnic::wire::error_name(e) + " on stream " + std::to_string(stream));
  const std::uint64_t count0 = env.error_counter(e);
  const std::uint64_t drops0 = env.counter(kRegCNT_DROPS_LO);
  const std::size_t n0 = env.cqes().size();
  env.send(stream, ssn, seg);
  ASSERT_TRUE(env.drain()) << env.finish();
  ASSERT_EQ(env.cqes().size(), n0 + 1) << "one error completion expected";
  const Cqe& c = env.cqes().back();
  EXPECT_TRUE(c.error()) << c.str();
  EXPECT_EQ(c.err_type, rnic::wire::error_type(e)) << c.str();
  EXPECT_EQ(c.err_code, rnic::wire::error_code(e)) << c.str();
  EXPECT_EQ(c.stream, stream);
  EXPECT_EQ(c.ssn, ssn);
  if (check_length) {
    EXPECT_EQ(c.length, seg.size());
  }
  const std::size_t hlen = std::min<std::size_t>(seg.size(), (seg[0] & rnic::wire::kCtrlTagged) ? 14 : 18);
  EXPECT_EQ(hexdump(c.header.data(), hlen), hexdump(seg.data(), hlen)) << "CQE header bytes";
  EXPECT_EQ(env.error_counter(e), count0 + 1) << "error counter row " << error_row(e);

  // 7.1: the stream is in error; a valid segment is dropped silently.
  const Bytes p = env.random_bytes(100);
  const std::uint64_t off = 0x8000 + 0x100 * std::uint64_t{stream};
  const Bytes before = env.host_bytes(s.buf + off, p.size());
  env.send_all(stream, tagged_message(Std::kStag, Std::kBaseTo + off, 0, p, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), n0 + 1) << "no completion for a segment on a stream in error";
  EXPECT_EQ(env.counter(kRegCNT_DROPS_LO), drops0 + 1);
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + off, p.size()), before), "") << "nothing placed on a stream in error";
}

Bytes tagged_seg(std::uint32_t stag, std::uint64_t to, std::size_t len, std::uint8_t dv = 1) {
  TaggedHeader h;
  h.stag = stag;
  h.to = to;
  h.last = true;
  h.dv = dv;
  h.rsvd_ulp = 0xC3;
  Bytes p(len);
  for (std::size_t i = 0; i < len; ++i) p[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return segment(h, p);
}
Bytes untagged_seg(std::uint32_t qn, std::uint32_t msn, std::uint32_t mo, std::size_t len, std::uint8_t dv = 1) {
  Bytes p(len);
  for (std::size_t i = 0; i < len; ++i) p[i] = static_cast<std::uint8_t>(i * 13 + 5);
  return untagged_segment(qn, msn, mo, true, p, dv, 0x1122334455ull);
}

// RFC 5041 7.1 tagged #1, 7.2 (1, 0x00): the STag's key differs from the entry's.
TEST(KernelError, TaggedInvalidStagBadKey) {
  Env env(test_config(101));
  Std s(env);
  expect_error(env, s, 0, 0, tagged_seg((Std::kStagIndex << 8) | 0x43, Std::kBaseTo, 64), DdpError::kTaggedInvalidStag);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 tagged #1: the entry was never written (invalid).
TEST(KernelError, TaggedInvalidStagInvalidEntry) {
  Env env(test_config(102));
  Std s(env);
  expect_error(env, s, 0, 0, tagged_seg((7u << 8) | Std::kKey, Std::kBaseTo, 64), DdpError::kTaggedInvalidStag);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 tagged #1: the STag index is beyond the table (STAG_ENTRIES = 256).
TEST(KernelError, TaggedInvalidStagIndexOutOfRange) {
  Env env(test_config(103));
  Std s(env);
  expect_error(env, s, 0, 0, tagged_seg((256u << 8) | Std::kKey, Std::kBaseTo, 64), DdpError::kTaggedInvalidStag);
  Env env2(test_config(1103));
  Std s2(env2);
  expect_error(env2, s2, 1, 0, tagged_seg(0xFFFFFF00u | Std::kKey, Std::kBaseTo, 64), DdpError::kTaggedInvalidStag);
  EXPECT_EQ(env.finish(), "");
  EXPECT_EQ(env2.finish(), "");
}

// 7.1 tagged #1 after STAG_INVALIDATE (RFC 5041 8.3.1): a valid STag that was invalidated.
TEST(KernelError, TaggedInvalidStagInvalidated) {
  Env env(test_config(104));
  Std s(env);
  const Bytes p = env.random_bytes(64);
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo, 0, p, 2000));
  EXPECT_FALSE(env.stag_invalidate(Std::kStagIndex));
  expect_error(env, s, 0, env.tx_ssn(0)++, tagged_seg(Std::kStag, Std::kBaseTo + 64, 64), DdpError::kTaggedInvalidStag);
  EXPECT_EQ(env.finish(), "");
}

// An STag without remote write access: no 7.2 code of its own, reported as Invalid STag (as Linux
// siw does) and counted in CNT_ACCESS.
TEST(KernelError, TaggedNoRemoteWriteIsInvalidStag) {
  Env env(test_config(105));
  Std s(env);
  StagArgs a;
  a.index = 9;
  a.pd = 1;
  a.remote_write = false;
  a.remote_read = true;
  a.base_to = 0;
  a.length = 4096;
  a.host_addr = env.alloc(4096);
  EXPECT_FALSE(env.stag_write(a));
  const std::uint64_t acc0 = env.counter(kRegCNT_ACCESS_LO);
  expect_error(env, s, 0, 0, tagged_seg((9u << 8) | a.key, 0, 64), DdpError::kTaggedInvalidStag);
  EXPECT_EQ(env.counter(kRegCNT_ACCESS_LO), acc0 + 1);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 tagged #3, 7.2 (1, 0x01): TO one below the base.
TEST(KernelError, TaggedBaseBoundsToBelowBase) {
  Env env(test_config(106));
  Std s(env);
  expect_error(env, s, 0, 0, tagged_seg(Std::kStag, Std::kBaseTo - 1, 64), DdpError::kTaggedBaseBounds);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 tagged #4: TO + len one past base + length.
TEST(KernelError, TaggedBaseBoundsEndPastBound) {
  Env env(test_config(107));
  Std s(env);
  expect_error(env, s, 0, 0, tagged_seg(Std::kStag, Std::kBaseTo + Std::kLen - 63, 64), DdpError::kTaggedBaseBounds);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 tagged #2, 8.2, 7.2 (1, 0x02): the stream's PD differs from the STag's.
TEST(KernelError, TaggedStagNotAssociatedPd) {
  Env env(test_config(108));
  Std s(env);
  expect_error(env, s, 2, 0, tagged_seg(Std::kStag, Std::kBaseTo, 64), DdpError::kTaggedStagNotAssociated);
  EXPECT_EQ(env.finish(), "");
}

// 8.2: an STag bound to stream 1 used on stream 0 (same PD).
TEST(KernelError, TaggedStagNotAssociatedStreamBinding) {
  Env env(test_config(109));
  Std s(env);
  StagArgs a;
  a.index = 10;
  a.pd = 1;
  a.bound_stream = 1;
  a.base_to = 0x1000;
  a.length = 4096;
  a.host_addr = env.alloc(4096);
  EXPECT_FALSE(env.stag_write(a));
  // On its own stream it places.
  const Bytes p = env.random_bytes(50);
  env.send_all(1, tagged_message((10u << 8) | a.key, 0x1000, 0, p, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(diff_bytes(env.host_bytes(a.host_addr, p.size()), p), "");
  expect_error(env, s, 0, 0, tagged_seg((10u << 8) | a.key, 0x1100, 64), DdpError::kTaggedStagNotAssociated);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 tagged #5, 7.2 (1, 0x03): TO + len wraps 64 bits (checked before the bounds).
TEST(KernelError, TaggedToWrap) {
  Env env(test_config(110));
  Std s(env);
  StagArgs a;
  a.index = 11;
  a.pd = 1;
  a.base_to = 0xFFFFFFFFFFFFF000ull;
  a.length = 0x1000;
  a.host_addr = env.alloc(0x1000);
  EXPECT_FALSE(env.stag_write(a));
  // The last bytes before the top pass.
  const Bytes p = env.random_bytes(16);
  env.send_all(0, tagged_message((11u << 8) | a.key, 0xFFFFFFFFFFFFFFE0ull, 0, p, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(diff_bytes(env.host_bytes(a.host_addr + 0xFE0, p.size()), p), "");
  expect_error(env, s, 0, 1, tagged_seg((11u << 8) | a.key, 0xFFFFFFFFFFFFFFF0ull, 32), DdpError::kTaggedToWrap);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 tagged (DV), 7.2 (1, 0x04): DV 0 and DV 2 on a tagged segment.
TEST(KernelError, TaggedInvalidVersion) {
  Env env(test_config(111));
  Std s(env);
  expect_error(env, s, 0, 0, tagged_seg(Std::kStag, Std::kBaseTo, 64, 0), DdpError::kTaggedInvalidVersion);
  expect_error(env, s, 1, 0, tagged_seg(Std::kStag, Std::kBaseTo, 64, 2), DdpError::kTaggedInvalidVersion);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 untagged (DV), 7.2 (2, 0x06).
TEST(KernelError, UntaggedInvalidVersion) {
  Env env(test_config(112));
  Std s(env);
  env.post_recv(0, 0, env.alloc(256), 256);
  expect_error(env, s, 0, 0, untagged_seg(0, 1, 0, 64, 0), DdpError::kUntaggedInvalidVersion);
  expect_error(env, s, 1, 0, untagged_seg(0, 1, 0, 64, 3), DdpError::kUntaggedInvalidVersion);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 untagged #1, 7.2 (2, 0x01): QN beyond CAP_QNS.
TEST(KernelError, UntaggedInvalidQn) {
  Env env(test_config(113));
  Std s(env);
  expect_error(env, s, 0, 0, untagged_seg(4, 1, 0, 64), DdpError::kUntaggedInvalidQn);
  expect_error(env, s, 1, 0, untagged_seg(0xFFFFFFFFu, 1, 0, 64), DdpError::kUntaggedInvalidQn);
  EXPECT_EQ(env.finish(), "");
}

// docs/rtl-architecture.md: a QN of a queue that is not configured is an invalid QN too (the model
// has no notion of configured queues, so this one runs without it).
TEST(KernelError, UntaggedInvalidQnUnconfiguredQueue) {
  EnvConfig cfg = test_config(114);
  cfg.use_model = false;
  Env env(cfg);
  Std s(env);
  expect_error(env, s, 0, 0, untagged_seg(1, 1, 0, 64), DdpError::kUntaggedInvalidQn);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 untagged #2, 7.2 (2, 0x02): no buffer posted for the MSN (none at all; one short).
TEST(KernelError, UntaggedNoBuffer) {
  Env env(test_config(115));
  Std s(env);
  expect_error(env, s, 0, 0, untagged_seg(0, 1, 0, 64), DdpError::kUntaggedNoBuffer);
  env.post_recv(1, 0, env.alloc(256), 256);
  expect_error(env, s, 1, 0, untagged_seg(0, 2, 0, 64), DdpError::kUntaggedNoBuffer);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 untagged #2, 7.2 (2, 0x03): an MSN already delivered (behind the first available buffer).
TEST(KernelError, UntaggedMsnRange) {
  Env env(test_config(116));
  Std s(env);
  env.post_recv(0, 0, env.alloc(256), 256);
  env.post_recv(0, 0, env.alloc(256), 256);
  env.send_all(0, untagged_message(0, 1, 0, env.random_bytes(100), 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  expect_error(env, s, 0, env.tx_ssn(0)++, untagged_seg(0, 1, 0, 64), DdpError::kUntaggedMsnRange);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 untagged #3, 7.2 (2, 0x04): MO at the end of the buffer with payload; MO past it, zero-length.
TEST(KernelError, UntaggedInvalidMo) {
  Env env(test_config(117));
  Std s(env);
  env.post_recv(0, 0, env.alloc(100), 100);
  env.post_recv(1, 0, env.alloc(100), 100);
  expect_error(env, s, 0, 0, untagged_seg(0, 1, 100, 10), DdpError::kUntaggedInvalidMo);
  expect_error(env, s, 1, 0, untagged_seg(0, 1, 101, 0), DdpError::kUntaggedInvalidMo);
  EXPECT_EQ(env.finish(), "");
}

// 7.1 untagged #4, 7.2 (2, 0x05): MO + len one past the buffer.
TEST(KernelError, UntaggedMessageTooLong) {
  Env env(test_config(118));
  Std s(env);
  env.post_recv(0, 0, env.alloc(100), 100);
  expect_error(env, s, 0, 0, untagged_seg(0, 1, 50, 51), DdpError::kUntaggedMessageTooLong);
  EXPECT_EQ(env.finish(), "");
}

// RFC 5043 10 (LLP error, 7.2 type 3): a DDP-SSN outside [next, next + SSN_WINDOW): one past the window
// ahead, and one behind.
TEST(KernelError, LlpErrorSsnOutsideWindow) {
  Env env(test_config(119));
  Std s(env);
  expect_error(env, s, 0, 64, tagged_seg(Std::kStag, Std::kBaseTo, 64), DdpError::kLlpError);
  expect_error(env, s, 1, 0xFFFF, tagged_seg(Std::kStag, Std::kBaseTo, 64), DdpError::kLlpError);
  EXPECT_EQ(env.finish(), "");
}

// 7.2 Local Catastrophic: a packet shorter than the header its T bit announces.
TEST(KernelError, LocalCatastrophicShortPacket) {
  Env env(test_config(120));
  Std s(env);
  const Bytes tagged = tagged_seg(Std::kStag, Std::kBaseTo, 0);
  const Bytes untagged = untagged_seg(0, 1, 0, 0);
  expect_error(env, s, 0, 0, Bytes(tagged.begin(), tagged.begin() + 13), DdpError::kLocalCatastrophic);
  expect_error(env, s, 1, 0, Bytes(untagged.begin(), untagged.begin() + 17), DdpError::kLocalCatastrophic);
  EXPECT_FALSE(env.stream_enable(3, 1));
  expect_error(env, s, 3, 0, Bytes{0x41}, DdpError::kLocalCatastrophic);
  EXPECT_EQ(env.finish(), "");
}

// docs/rtl-architecture.md: a packet longer than MAX_SEG_BYTES is cut and reported as Local
// Catastrophic; nothing of it is placed (the model has no size limit: runs without it).
TEST(KernelError, LocalCatastrophicOversize) {
  EnvConfig cfg = test_config(121);
  cfg.use_model = false;
  Env env(cfg);
  Std s(env);
  const Bytes big = tagged_seg(Std::kStag, Std::kBaseTo, 16384 + 100);
  expect_error(env, s, 0, 0, big, DdpError::kLocalCatastrophic, false);
  for (std::uint64_t a = s.buf; a < s.buf + 16484; ++a) {
    if (env.mem().data()[a] != pattern_byte(a)) {
      ADD_FAILURE() << "oversize packet placed bytes at 0x" << std::hex << a;
      break;
    }
  }
  // The stream after it still works once re-enabled.
  EXPECT_FALSE(env.stream_enable(0, 1));
  const Bytes p = env.random_bytes(64);
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + 0x100, 0, p, 2000));
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + 0x100, p.size()), p), "");
  EXPECT_EQ(env.finish(), "");
}

// ---- Errors in DDP-SSN order (RFC 5041 5.3, 7.1; RFC 5043 5; docs/rtl-architecture.md) ----------
// Over SCTP a stream's segments arrive in any order. A 7.1 error is reported at its DDP-SSN position:
// every message before it is delivered first, nothing at or after it, nothing of it is placed.

// Tagged messages of `sizes` bytes (segments of at most 100 payload bytes) at consecutive DDP-SSNs from
// `ssn` into the standard buffer at `off`: each segment with its DDP-SSN; the payloads in *payloads.
struct Seq {
  std::vector<std::pair<std::uint16_t, Bytes>> segs;
  std::vector<Bytes> payloads;
  std::vector<std::uint64_t> offs;
};
Seq tagged_messages(Env& env, std::uint16_t ssn, std::uint64_t off, const std::vector<std::size_t>& sizes) {
  Seq q;
  for (const std::size_t n : sizes) {
    q.payloads.push_back(env.random_bytes(n));
    q.offs.push_back(off);
    for (auto& seg : tagged_message(Std::kStag, Std::kBaseTo + off, 0x5A, q.payloads.back(), 100))
      q.segs.emplace_back(ssn++, std::move(seg));
    off += n;
  }
  return q;
}

// The completions after n0: `messages` deliveries (tagged, in order), then one error e at DDP-SSN ssn.
void expect_delivered_then_error(Env& env, std::size_t n0, std::size_t messages, DdpError e, std::uint16_t ssn) {
  ASSERT_EQ(env.cqes().size(), n0 + messages + 1) << messages << " deliveries and one error expected";
  for (std::size_t i = 0; i < messages; ++i) EXPECT_FALSE(env.cqes()[n0 + i].error()) << env.cqes()[n0 + i].str();
  const Cqe& c = env.cqes().back();
  EXPECT_TRUE(c.error()) << c.str();
  EXPECT_EQ(c.err_type, rnic::wire::error_type(e)) << c.str();
  EXPECT_EQ(c.err_code, rnic::wire::error_code(e)) << c.str();
  EXPECT_EQ(c.ssn, ssn) << c.str();
}

// The error arrives before every message that precedes it (sent in reverse DDP-SSN order): nothing is
// reported while they are missing; once the last one arrives they are delivered, then the error.
// A message after it that arrives after it is dropped, not placed.
TEST(KernelError, ErrorArrivingBeforeTheMessagesThatPrecedeItIsReportedAfterThem) {
  Env env(test_config(130));
  Std s(env);
  const Seq q = tagged_messages(env, 0, 0, {80, 250, 40});  // DDP-SSNs 0, 1..3, 4
  const std::uint16_t bad = static_cast<std::uint16_t>(q.segs.size());
  const Bytes after = env.random_bytes(60);
  const std::uint64_t after_off = 0x4000;
  const Bytes before_after = env.host_bytes(s.buf + after_off, after.size());
  const std::size_t n0 = env.cqes().size();
  const std::uint64_t drops0 = env.counter(kRegCNT_DROPS_LO);
  env.send(0, bad, tagged_seg(Std::kStag, Std::kBaseTo - 1, 64));  // 7.1 tagged #3
  env.send(0, bad + 1, tagged_message(Std::kStag, Std::kBaseTo + after_off, 0, after, 2000)[0]);
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), n0) << "nothing reported while the messages before the error are missing";
  for (auto it = q.segs.rbegin(); it != q.segs.rend(); ++it) env.send(0, it->first, it->second);
  ASSERT_TRUE(env.drain()) << env.finish();
  expect_delivered_then_error(env, n0, 3, DdpError::kTaggedBaseBounds, bad);
  for (std::size_t i = 0; i < q.payloads.size(); ++i)
    EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + q.offs[i], q.payloads[i].size()), q.payloads[i]), "")
        << "message " << i;
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + after_off, after.size()), before_after), "")
      << "a segment after the error that arrived after it is not placed";
  EXPECT_EQ(env.counter(kRegCNT_DROPS_LO), drops0 + 1);
  EXPECT_EQ(env.finish(), "");
}

// The error arrives in the middle of the segments before it (untagged: an MSN with no buffer posted):
// the messages before it are delivered in order, then the error.
TEST(KernelError, ErrorArrivingAmongTheMessagesThatPrecedeItIsReportedAfterThem) {
  Env env(test_config(131));
  Std s(env);
  const std::uint64_t b1 = env.alloc(300), b2 = env.alloc(300);
  EXPECT_EQ(env.post_recv(0, 0, b1, 300), 1u);
  EXPECT_EQ(env.post_recv(0, 0, b2, 300), 2u);
  const Bytes p1 = env.random_bytes(250), p2 = env.random_bytes(120);
  std::vector<std::pair<std::uint16_t, Bytes>> segs;
  std::uint16_t ssn = 0;
  for (auto& g : untagged_message(0, 1, 7, p1, 100)) segs.emplace_back(ssn++, std::move(g));
  for (auto& g : untagged_message(0, 2, 8, p2, 100)) segs.emplace_back(ssn++, std::move(g));
  ASSERT_GE(segs.size(), 5U);
  const std::size_t n0 = env.cqes().size();
  // The last segment, one in the middle, the error, then the rest but DDP-SSN 2.
  env.send(0, segs.back().first, segs.back().second);
  env.send(0, segs[1].first, segs[1].second);
  env.send(0, ssn, untagged_seg(0, 3, 0, 64));  // MSN 3: no buffer posted (7.1 untagged #2)
  for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
    if (i != 1 && i != 2) env.send(0, segs[i].first, segs[i].second);
  }
  ASSERT_TRUE(env.drain()) << env.finish();
  EXPECT_EQ(env.cqes().size(), n0) << "DDP-SSN 2 is missing";
  env.send(0, segs[2].first, segs[2].second);
  ASSERT_TRUE(env.drain()) << env.finish();
  expect_delivered_then_error(env, n0, 2, DdpError::kUntaggedNoBuffer, ssn);
  EXPECT_EQ(env.cqes()[n0].msn, 1u);
  EXPECT_EQ(env.cqes()[n0 + 1].msn, 2u);
  EXPECT_EQ(diff_bytes(env.host_bytes(b1, p1.size()), p1), "");
  EXPECT_EQ(diff_bytes(env.host_bytes(b2, p2.size()), p2), "");
  EXPECT_EQ(env.finish(), "");
}

// The error arrives after the messages before it (the order of an in-order LLP): as before, they are
// delivered, then the error. A segment after it that arrived before it was placed (it passed every
// check then) but its message is never delivered.
TEST(KernelError, ErrorArrivingAfterTheMessagesThatPrecedeItAndASegmentAfterItThatCameFirst) {
  Env env(test_config(132));
  Std s(env);
  const Seq q = tagged_messages(env, 0, 0, {150, 30});  // DDP-SSNs 0..1, 2
  const std::uint16_t bad = 3;
  const Seq later = tagged_messages(env, bad + 1, 0x2000, {90});
  const std::size_t n0 = env.cqes().size();
  for (const auto& g : later.segs) env.send(0, g.first, g.second);
  for (const auto& g : q.segs) env.send(0, g.first, g.second);
  env.send(0, bad, tagged_seg(Std::kStag, Std::kBaseTo, 64, 2));  // DV 2
  ASSERT_TRUE(env.drain()) << env.finish();
  expect_delivered_then_error(env, n0, 2, DdpError::kTaggedInvalidVersion, bad);
  EXPECT_EQ(diff_bytes(env.host_bytes(s.buf + 0x2000, later.payloads[0].size()), later.payloads[0]), "")
      << "placed before the error arrived (the reference model places it too)";
  EXPECT_EQ(env.finish(), "");
}

// Two failing segments, the later one (in DDP-SSN order) arriving first: only the first in DDP-SSN order
// is reported, after the message before it; both count in their error counters.
TEST(KernelError, OfTwoFailingSegmentsTheFirstInDdpSsnOrderIsReported) {
  Env env(test_config(133));
  Std s(env);
  const Seq q = tagged_messages(env, 0, 0, {120});  // DDP-SSNs 0..1
  const std::uint64_t bounds0 = env.error_counter(DdpError::kTaggedBaseBounds);
  const std::uint64_t stag0 = env.error_counter(DdpError::kTaggedInvalidStag);
  const std::size_t n0 = env.cqes().size();
  env.send(0, 5, tagged_seg(Std::kStag, Std::kBaseTo - 8, 16));                                // at 5
  env.send(0, 2, tagged_seg((Std::kStagIndex << 8) | 0x77, Std::kBaseTo, 16));                 // at 2
  env.send(0, 4, tagged_message(Std::kStag, Std::kBaseTo + 0x3000, 0, Bytes(8, 1), 2000)[0]);  // after 2: dropped
  for (const auto& g : q.segs) env.send(0, g.first, g.second);
  ASSERT_TRUE(env.drain()) << env.finish();
  expect_delivered_then_error(env, n0, 1, DdpError::kTaggedInvalidStag, 2);
  EXPECT_EQ(env.error_counter(DdpError::kTaggedBaseBounds), bounds0 + 1);
  EXPECT_EQ(env.error_counter(DdpError::kTaggedInvalidStag), stag0 + 1);
  EXPECT_EQ(env.finish(), "");
}

// A failing segment carrying the DDP-SSN of a segment already placed and waiting (a peer repeating a
// DDP-SSN) takes its place: the error is reported there, the waiting segment's message never is.
TEST(KernelError, FailingSegmentAtTheDdpSsnOfAWaitingSegmentIsReportedThere) {
  Env env(test_config(134));
  Std s(env);
  const Seq q = tagged_messages(env, 0, 0, {50, 50});  // DDP-SSNs 0, 1
  const std::size_t n0 = env.cqes().size();
  env.send(0, q.segs[1].first, q.segs[1].second);
  ASSERT_TRUE(env.drain()) << env.finish();
  env.send(0, 1, tagged_seg(Std::kStag, Std::kBaseTo + Std::kLen - 8, 16));  // past the end
  env.send(0, q.segs[0].first, q.segs[0].second);
  ASSERT_TRUE(env.drain()) << env.finish();
  expect_delivered_then_error(env, n0, 1, DdpError::kTaggedBaseBounds, 1);
  EXPECT_EQ(env.finish(), "");
}

// From the network front end (tuser net): the same ordering; a segment the PENDING stream drops is
// "taken" (SCTP may acknowledge it: the stream is failing), never declined or a duplicate.
TEST(KernelError, NetSegmentsAroundAWaitingErrorAreDeliveredBeforeItOrDroppedAsTaken) {
  Env env(test_config(135));
  Std s(env);
  const Seq q = tagged_messages(env, 0, 0, {70, 70});  // DDP-SSNs 0, 1
  const std::size_t n0 = env.cqes().size();
  env.send_net(0, 2, tagged_seg(Std::kStag, Std::kBaseTo - 1, 64));
  env.send_net(0, 3, tagged_message(Std::kStag, Std::kBaseTo + 0x1000, 0, Bytes(8, 2), 2000)[0]);    // after it
  env.send_net(0, 200, tagged_message(Std::kStag, Std::kBaseTo + 0x1000, 0, Bytes(8, 3), 2000)[0]);  // beyond
  env.send_net(0, q.segs[1].first, q.segs[1].second);
  env.send_net(0, q.segs[0].first, q.segs[0].second);
  ASSERT_TRUE(env.drain()) << env.finish();
  expect_delivered_then_error(env, n0, 2, DdpError::kTaggedBaseBounds, 2);
  ASSERT_EQ(env.fates().size(), 5u);
  for (const auto f : env.fates()) EXPECT_EQ(f, Env::Fate::kTaken);
  EXPECT_EQ(env.finish(), "");
}

}  // namespace
}  // namespace rnic::tb::test
