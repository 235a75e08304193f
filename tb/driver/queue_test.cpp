// SPDX-License-Identifier: Apache-2.0
// Receive queues, doorbells, the completion ring (phase per lap, demux to clients, cookie mapping)
// and stream teardown (RFC 5041 6.2) with flushed buffers.
#include <gtest/gtest.h>
#include <algorithm>

#include <chrono>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "driver_test_util.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/wire/bytes.hpp"

namespace rnic::test {
namespace {

using namespace rnic::hw;

using wire::load_le;

FakeCqe untagged(StreamId s, std::uint32_t qn, std::uint32_t msn, std::uint32_t length) {
  FakeCqe c;
  c.stream = static_cast<std::uint16_t>(s);
  c.stag_qn = qn;
  c.msn = msn;
  c.length = length;
  return c;
}

FakeCqe tagged(StreamId s, Stag stag) {
  FakeCqe c;
  c.stream = static_cast<std::uint16_t>(s);
  c.tagged = true;
  c.stag_qn = stag;
  return c;
}

RegisterRequest first_bytes(PdId pd, const Buffer& b, std::uint64_t length) {
  RegisterRequest r;
  r.pd = pd;
  r.buffer = b.id;
  r.length = length;
  return r;
}

// ---- configure_queue --------------------------------------------------------------------------------

TEST_F(Driver, QueueConfigWordsAndRing) {
  const StreamId s = client->create_stream(pd);
  const std::size_t before = fake->regions.size();
  client->configure_queue(s, 1, 4);
  ASSERT_EQ(fake->regions.size(), before + 1);
  const auto qc = fake->commands_with(kCmdQUEUE_CONFIG);
  ASSERT_EQ(qc.size(), 1u);
  const auto& a = qc[0].args;
  const std::uint64_t ring = (std::uint64_t{a[3]} << 32) | a[2];
  ASSERT_EQ(fake->regions.count(ring), 1u);
  EXPECT_EQ(fake->regions.at(ring).size, std::size_t{kRQ_DESC_BYTES} << 4);
  EXPECT_EQ(ring % 16, 0u);
  EXPECT_EQ(a[0], s);
  EXPECT_EQ(a[1], 1u);
  EXPECT_EQ(a[4], 4u);
  EXPECT_EQ(a[5], 1u);  // MSNs start at 1 (RFC 5041 4.3)
}

TEST_F(Driver, QueueConfigRejectsBadArguments) {
  const StreamId s = client->create_stream(pd);
  EXPECT_ERRC(client->configure_queue(s, 2, 3), Errc::kInvalidArgument, "qn 2");
  EXPECT_ERRC(client->configure_queue(s, 0, 17), Errc::kInvalidArgument, "log2_entries 17");
  EXPECT_ERRC(client->configure_queue(7, 0, 3), Errc::kNotFound, "stream 7");
  client->configure_queue(s, 0, 0);  // one entry is a valid ring
  EXPECT_ERRC(client->configure_queue(s, 0, 3), Errc::kState, "already configured");
  client->teardown_stream(s, Teardown::kAbortive);
  EXPECT_ERRC(client->configure_queue(s, 1, 3), Errc::kState, "torn down");
}

// RFC 5041 4.3: the MSN is 32 bits and wraps. A queue configured to start at 0xFFFFFFFE: QUEUE_CONFIG
// carries the first MSN (ARG5), the posts get MSNs 0xFFFFFFFE, 0xFFFFFFFF, 0, 1 in ring slots
// (m - 1) mod 2^log2 with those doorbells, and completions in that order map back to their buffers.
TEST_F(Driver, FirstMsnIsProgrammedAndMsnsWrap) {
  const StreamId s = client->create_stream(pd);
  client->configure_queue(s, 0, 2, 0xFFFFFFFEu);
  const auto a = fake->commands_with(kCmdQUEUE_CONFIG).back().args;
  EXPECT_EQ(a[5], 0xFFFFFFFEu);
  const std::uint64_t ring = (std::uint64_t{a[3]} << 32) | a[2];
  const std::uint32_t msns[] = {0xFFFFFFFEu, 0xFFFFFFFFu, 0u, 1u};
  for (std::uint32_t i = 0; i < 4; ++i) {
    client->post_recv(s, 0, buf.id, 100 * i, 100, 0x500 + i);
    EXPECT_EQ(fake->doorbells.back().second, msns[i]);
    const std::uint8_t* d = fake->host(ring + kRQ_DESC_BYTES * ((msns[i] - 1u) % 4u), kRQ_DESC_BYTES);
    EXPECT_EQ(load_le(d + kRQD_ADDR_OFFSET, 8), buf.device_addr + 100 * i) << "MSN " << msns[i];
  }
  for (std::uint32_t m : msns) fake->push_cqe(untagged(s, 0, m, 10));
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 4u);
  for (std::uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i].kind, Completion::Kind::kUntagged);
    EXPECT_EQ(out[i].msn, msns[i]);
    EXPECT_EQ(out[i].cookie, 0x500u + i);
  }
  EXPECT_EQ(client->stream_state(s).unmatched_completions, 0u);
  client->post_recv(s, 0, buf.id, 0, 10);  // after the wrap: MSN 2
  EXPECT_EQ(fake->doorbells.back().second, 2u);
}

TEST_F(Driver, FirstMsnZeroIsRejected) {
  const StreamId s = client->create_stream(pd);
  const std::size_t commands = fake->commands.size();
  EXPECT_ERRC(client->configure_queue(s, 0, 2, 0), Errc::kInvalidArgument, "first_msn 0");
  EXPECT_EQ(fake->commands.size(), commands);  // nothing reached the card
  client->configure_queue(s, 0, 2, 0xFFFFFFFFu);
  EXPECT_EQ(fake->commands_with(kCmdQUEUE_CONFIG).back().args[5], 0xFFFFFFFFu);
  client->post_recv(s, 0, buf.id, 0, 10);
  EXPECT_EQ(fake->doorbells.back().second, 0xFFFFFFFFu);
}

TEST_F(Driver, RefusedQueueConfigFreesTheRing) {
  const StreamId s = client->create_stream(pd);
  const std::size_t before = fake->regions.size();
  fake->refuse.insert(kCmdQUEUE_CONFIG);
  EXPECT_ERRC(client->configure_queue(s, 0, 3), Errc::kBackend, "QUEUE_CONFIG");
  EXPECT_EQ(fake->regions.size(), before);
  fake->refuse.clear();
  client->configure_queue(s, 0, 3);  // not left half-configured
}

// ---- post_recv ------------------------------------------------------------------------------------

TEST_F(Driver, PostWritesDescriptorThenDoorbell) {
  const StreamId s0 = client->create_stream(pd);
  const StreamId s = client->create_stream(pd);
  (void)s0;
  client->configure_queue(s, 1, 2);
  const std::uint64_t ring = [&] {
    const auto a = fake->commands_with(kCmdQUEUE_CONFIG).back().args;
    return (std::uint64_t{a[3]} << 32) | a[2];
  }();
  for (std::uint32_t i = 0; i < 4; ++i) {
    client->post_recv(s, 1, buf.id, 1000 * i, 100 + i, 0xC0FFEE00 + i);
    const std::uint32_t msn = i + 1;
    // The buffer for MSN m is ring slot (m - 1) mod 2^log2.
    const std::uint8_t* d = fake->host(ring + kRQ_DESC_BYTES * ((msn - 1) % 4), kRQ_DESC_BYTES);
    EXPECT_EQ(load_le(d + kRQD_ADDR_OFFSET, 8), buf.device_addr + 1000 * i);
    EXPECT_EQ(load_le(d + kRQD_LENGTH_OFFSET, 4), 100u + i);
    // Made visible to the card before the doorbell.
    ASSERT_FALSE(fake->to_device_log.empty());
    EXPECT_EQ(fake->to_device_log.back(), std::make_pair(ring + kRQ_DESC_BYTES * ((msn - 1) % 4), std::size_t{16}));
    ASSERT_EQ(fake->doorbells.size(), i + 1);
    EXPECT_EQ(fake->doorbells.back().first, db_queue(s, 1));           // DB_QUEUE names (stream, QN)
    EXPECT_EQ(fake->doorbells.back().second, msn);                     // MSN of the last posted buffer
    EXPECT_EQ(fake->writes.back(), std::make_pair(kRegDB_PROD, msn));  // the doorbell is the last write
  }
  // DB_QUEUE is written once for the four doorbells of one queue, again when the queue changes.
  const auto db_queue_writes = [&] {
    return std::count_if(fake->writes.begin(), fake->writes.end(),
                         [](const auto& w) { return w.first == kRegDB_QUEUE; });
  };
  EXPECT_EQ(db_queue_writes(), 1);
  EXPECT_ERRC(client->post_recv(s, 1, buf.id, 0, 10), Errc::kQueueFull, "all 4 entries");
  // Completing one frees its slot: MSN 5 goes to slot 0.
  fake->push_cqe(untagged(s, 1, 1, 50));
  std::vector<Completion> out;
  EXPECT_EQ(client->poll(out), 1u);
  client->post_recv(s, 1, buf.id, 4000, 77);
  const std::uint8_t* d = fake->host(ring, kRQ_DESC_BYTES);
  EXPECT_EQ(load_le(d + kRQD_LENGTH_OFFSET, 4), 77u);
  EXPECT_EQ(fake->doorbells.back().second, 5u);
  EXPECT_EQ(db_queue_writes(), 1);
  client->configure_queue(s, 0, 2);
  client->post_recv(s, 0, buf.id, 0, 10);
  EXPECT_EQ(fake->doorbells.back(), std::make_pair(db_queue(s, 0), 1u));
  fake->push_cqe(untagged(s, 1, 2, 50));
  EXPECT_EQ(client->poll(out), 1u);
  client->post_recv(s, 1, buf.id, 0, 10);
  EXPECT_EQ(fake->doorbells.back(), std::make_pair(db_queue(s, 1), 6u));
  EXPECT_EQ(db_queue_writes(), 3);
}

TEST_F(Driver, PostRejectsBadArguments) {
  const StreamId s = stream_with_queue(3);
  const std::size_t writes = fake->writes.size();
  EXPECT_ERRC(client->post_recv(s, 0, buf.id, 0, 0), Errc::kInvalidArgument, "length must be > 0");
  EXPECT_ERRC(client->post_recv(s, 0, buf.id, 64 * 1024 - 5, 6), Errc::kInvalidArgument, "outside buffer");
  EXPECT_ERRC(client->post_recv(s, 0, buf.id, std::numeric_limits<std::uint64_t>::max(), 6), Errc::kInvalidArgument,
              "outside buffer");
  EXPECT_ERRC(client->post_recv(s, 0, 12345, 0, 6), Errc::kNotFound, "buffer 12345");
  EXPECT_ERRC(client->post_recv(s, 1, buf.id, 0, 6), Errc::kState, "not configured");
  EXPECT_ERRC(client->post_recv(s, 2, buf.id, 0, 6), Errc::kInvalidArgument, "qn 2");
  EXPECT_ERRC(client->post_recv(s + 1, 0, buf.id, 0, 6), Errc::kNotFound, "stream");
  EXPECT_EQ(fake->writes.size(), writes);  // nothing reached the card
  client->post_recv(s, 0, buf.id, 64 * 1024 - 5, 5);
  EXPECT_ERRC(client->free_buffer(buf.id), Errc::kBusy, "1 posted");
}

TEST_F(Driver, PostedQuota) {
  Limits l;
  l.max_posted = 3;
  auto c = dev->create_client(l);
  const PdId p = c->alloc_pd();
  const Buffer b = c->alloc_buffer(4096);
  const StreamId s = c->create_stream(p);
  c->configure_queue(s, 0, 4);
  for (int i = 0; i < 3; ++i) c->post_recv(s, 0, b.id, 0, 10);
  EXPECT_ERRC(c->post_recv(s, 0, b.id, 0, 10), Errc::kQuota, "max_posted");
}

// ---- completions ----------------------------------------------------------------------------------

TEST_F(Driver, UntaggedCompletionMapsBackToThePostedBuffer) {
  const StreamId s = stream_with_queue(3);
  client->post_recv(s, 0, buf.id, 100, 500, 0xAAA);
  client->post_recv(s, 0, buf.id, 600, 500, 0xBBB);
  FakeCqe c = untagged(s, 0, 2, 321);
  c.ssn = 9;
  c.rsvd_ulp = 0x12345;
  fake->push_cqe(untagged(s, 0, 1, 123));
  fake->push_cqe(c);
  const std::size_t syncs = fake->from_device_calls;
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 2u);
  EXPECT_EQ(out[0].kind, Completion::Kind::kUntagged);
  EXPECT_EQ(out[0].msn, 1u);
  EXPECT_EQ(out[0].buffer, buf.id);
  EXPECT_EQ(out[0].offset, 100u);
  EXPECT_EQ(out[0].cookie, 0xAAAu);
  EXPECT_EQ(out[0].length, 123u);
  EXPECT_EQ(out[1].msn, 2u);
  EXPECT_EQ(out[1].offset, 600u);
  EXPECT_EQ(out[1].cookie, 0xBBBu);
  EXPECT_EQ(out[1].length, 321u);
  EXPECT_EQ(out[1].ssn, 9u);
  EXPECT_EQ(out[1].rsvd_ulp, 0x12345u);
  EXPECT_EQ(out[1].stream, s);
  EXPECT_GT(fake->from_device_calls, syncs + 2);  // ring entries and the received bytes
  EXPECT_EQ(fake->reg(kRegCQ_CONS), 2u);
  // Completed buffers are no longer posted.
  client->free_buffer(buf.id);
  EXPECT_EQ(client->poll(out), 0u);
  EXPECT_TRUE(out.empty());
}

TEST_F(Driver, TaggedAndErrorCompletions) {
  const StreamId s = client->create_stream(pd);
  const Stag stag = client->register_memory(first_bytes(pd, buf, 1024)).stag;
  FakeCqe t = tagged(s, stag);
  t.ssn = 3;
  t.rsvd_ulp = 0x5A;
  fake->push_cqe(t);
  FakeCqe e;  // RFC 5041 7.2: Tagged Buffer Error, Invalid STag
  e.stream = static_cast<std::uint16_t>(s);
  e.error = true;
  e.tagged = true;
  e.err_type = 1;
  e.err_code = 0;
  e.ssn = 4;
  e.length = 77;
  for (std::uint8_t i = 0; i < 18; ++i) e.header[i] = static_cast<std::uint8_t>(0xA0 + i);
  fake->push_cqe(e);
  FakeCqe u = e;  // Untagged Buffer Error, Invalid MSN - no buffer available
  u.tagged = false;
  u.err_type = 2;
  u.err_code = 2;
  fake->push_cqe(u);
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 3u);
  EXPECT_EQ(out[0].kind, Completion::Kind::kTagged);
  EXPECT_EQ(out[0].stag, stag);
  EXPECT_EQ(out[0].ssn, 3u);
  EXPECT_EQ(out[0].rsvd_ulp, 0x5Au);
  EXPECT_EQ(out[1].kind, Completion::Kind::kError);
  EXPECT_EQ(out[1].err_type, 1u);
  EXPECT_EQ(out[1].err_code, 0u);
  EXPECT_EQ(out[1].ssn, 4u);
  EXPECT_EQ(out[1].length, 77u);
  ASSERT_EQ(out[1].header.size(), 14u);  // tagged header
  EXPECT_EQ(out[1].header[0], 0xA0u);
  EXPECT_EQ(out[1].header[13], 0xADu);
  EXPECT_EQ(out[2].kind, Completion::Kind::kError);
  EXPECT_EQ(out[2].err_type, 2u);
  EXPECT_EQ(out[2].err_code, 2u);
  ASSERT_EQ(out[2].header.size(), 18u);
  EXPECT_EQ(out[2].header[17], 0xB1u);
}

TEST_F(Driver, CompletionsGoToTheClientOwningTheStream) {
  auto other = dev->create_client();
  const PdId opd = other->alloc_pd();
  const Buffer obuf = other->alloc_buffer(4096);
  const StreamId os = other->create_stream(opd);
  other->configure_queue(os, 0, 2);
  other->post_recv(os, 0, obuf.id, 8, 64, 77);
  const StreamId s = stream_with_queue(2);
  client->post_recv(s, 0, buf.id, 16, 64, 88);
  fake->push_cqe(untagged(os, 0, 1, 10));
  fake->push_cqe(untagged(s, 0, 1, 20));
  fake->push_cqe(untagged(99, 0, 1, 20));  // no such stream: dropped
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 1u);  // reads the whole ring, keeps the other's entry for it
  EXPECT_EQ(out[0].stream, s);
  EXPECT_EQ(out[0].cookie, 88u);
  ASSERT_EQ(other->poll(out), 1u);
  EXPECT_EQ(out[0].stream, os);
  EXPECT_EQ(out[0].cookie, 77u);
  EXPECT_EQ(out[0].buffer, obuf.id);
  EXPECT_EQ(out[0].offset, 8u);
  EXPECT_EQ(client->poll(out), 0u);
  EXPECT_EQ(other->poll(out), 0u);
}

// Phase bit: 1 on the first lap, flipping per lap; stale entries of the previous lap are not new.
TEST_F(Driver, CompletionRingWrapsWithThePhaseBit) {
  // SetUp opened with the default 4096-entry ring: reopen with 4 entries.
  OpenOptions o;
  o.cq_log2_entries = 2;
  reopen(o);
  const StreamId s = stream_with_queue(4);

  std::mt19937_64 rng(tb::random_test_seed(1));
  std::uint32_t posted = 0, completed = 0;
  std::vector<Completion> out;
  while (completed < 40) {
    while (posted - completed < 16 && posted < 40) {
      client->post_recv(s, 0, buf.id, posted, 1, 1000 + posted);
      ++posted;
    }
    // The card writes at most a ring's worth before the driver consumes.
    const std::uint32_t n = 1 + static_cast<std::uint32_t>(rng() % 4);
    std::uint32_t wrote = 0;
    for (; wrote < n && completed + wrote < posted; ++wrote) fake->push_cqe(untagged(s, 0, completed + wrote + 1, 1));
    ASSERT_EQ(client->poll(out), wrote);
    for (std::uint32_t i = 0; i < wrote; ++i) {
      EXPECT_EQ(out[i].msn, completed + i + 1);
      EXPECT_EQ(out[i].cookie, 1000u + completed + i);
    }
    completed += wrote;
    EXPECT_EQ(fake->reg(kRegCQ_CONS), completed);
    ASSERT_EQ(client->poll(out), 0u);  // the old lap's entries are not read again
  }
}

TEST_F(Driver, PollReturnsAtMostMax) {
  const StreamId s = stream_with_queue(3);
  for (int i = 0; i < 5; ++i) client->post_recv(s, 0, buf.id, 0, 8, static_cast<std::uint64_t>(i));
  for (std::uint32_t m = 1; m <= 5; ++m) fake->push_cqe(untagged(s, 0, m, 8));
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out, 2), 2u);
  EXPECT_EQ(out[1].cookie, 1u);
  ASSERT_EQ(client->poll(out, 64), 3u);
  EXPECT_EQ(out[0].cookie, 2u);
}

TEST_F(Driver, WaitTimesOutWithZeroAndReturnsWhatArrives) {
  const StreamId s = stream_with_queue(3);
  std::vector<Completion> out;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(client->wait(out, 30), 0u);
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(30));
  EXPECT_LT(waited, std::chrono::seconds(2));
  // Idle waiting sleeps: a few hundred CQ_PROD reads at most, not a spin.
  EXPECT_LT(dev->stats().mmio_reads, 1000u);
  client->post_recv(s, 0, buf.id, 0, 8, 5);
  fake->push_cqe(untagged(s, 0, 1, 8));
  ASSERT_EQ(client->wait(out, 1000), 1u);
  EXPECT_EQ(out[0].cookie, 5u);
}

// ---- teardown (RFC 5041 6.2) ----------------------------------------------------------------------

TEST_F(Driver, AbortiveTeardownFlushesPostedBuffers) {
  const StreamId s = client->create_stream(pd);
  client->configure_queue(s, 0, 3);
  client->configure_queue(s, 1, 3);
  client->post_recv(s, 0, buf.id, 0, 10, 1);
  client->post_recv(s, 0, buf.id, 10, 20, 2);
  client->post_recv(s, 1, buf.id, 30, 30, 3);
  fake->push_cqe(untagged(s, 0, 1, 5));  // already written by the card: a real delivery
  const std::size_t syncs = fake->syncs;
  client->teardown_stream(s, Teardown::kAbortive);
  EXPECT_EQ(fake->syncs, syncs);  // abortive: no drain
  ASSERT_EQ(fake->commands_with(kCmdSTREAM_TEARDOWN).size(), 1u);
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 3u);
  EXPECT_EQ(out[0].kind, Completion::Kind::kUntagged);
  EXPECT_EQ(out[0].cookie, 1u);
  EXPECT_EQ(out[1].kind, Completion::Kind::kFlushed);
  EXPECT_EQ(out[1].cookie, 2u);
  EXPECT_EQ(out[1].qn, 0u);
  EXPECT_EQ(out[1].msn, 2u);
  EXPECT_EQ(out[1].offset, 10u);
  EXPECT_EQ(out[1].length, 20u);
  EXPECT_EQ(out[2].kind, Completion::Kind::kFlushed);
  EXPECT_EQ(out[2].cookie, 3u);
  EXPECT_EQ(out[2].qn, 1u);
  EXPECT_EQ(out[2].buffer, buf.id);
  // Use after teardown.
  EXPECT_ERRC(client->post_recv(s, 0, buf.id, 0, 10), Errc::kState, "torn down");
  // A late entry for a flushed buffer is not delivered twice.
  fake->push_cqe(untagged(s, 0, 2, 5));
  EXPECT_EQ(client->poll(out), 0u);
  client->free_buffer(buf.id);  // nothing posted any more
  const std::size_t regions = fake->regions.size();
  client->destroy_stream(s);
  EXPECT_EQ(fake->regions.size(), regions - 2);  // both rings
}

TEST_F(Driver, GracefulTeardownDrainsFirst) {
  const StreamId s = stream_with_queue(3);
  client->post_recv(s, 0, buf.id, 0, 10, 1);
  client->post_recv(s, 0, buf.id, 10, 10, 2);
  std::size_t cmds_at_sync = 0;
  fake->on_sync = [&] {
    // In-flight segments complete during the drain, before STREAM_TEARDOWN.
    cmds_at_sync = fake->commands_with(kCmdSTREAM_TEARDOWN).size();
    fake->push_cqe(untagged(s, 0, 1, 7));
  };
  client->teardown_stream(s, Teardown::kGraceful);
  EXPECT_EQ(fake->syncs, 1u);
  EXPECT_EQ(cmds_at_sync, 0u);
  EXPECT_EQ(fake->commands_with(kCmdSTREAM_TEARDOWN).size(), 1u);
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 2u);
  EXPECT_EQ(out[0].kind, Completion::Kind::kUntagged);
  EXPECT_EQ(out[0].cookie, 1u);
  EXPECT_EQ(out[0].length, 7u);
  EXPECT_EQ(out[1].kind, Completion::Kind::kFlushed);
  EXPECT_EQ(out[1].cookie, 2u);
}

TEST_F(Driver, FailedDrainLeavesTheStreamUsable) {
  const StreamId s = stream_with_queue(3);
  fake->on_sync = [] { throw Error(Errc::kTimeout, "fake: sync ran out"); };
  EXPECT_ERRC(client->teardown_stream(s, Teardown::kGraceful), Errc::kTimeout, "sync ran out");
  EXPECT_TRUE(fake->commands_with(kCmdSTREAM_TEARDOWN).empty());
  client->post_recv(s, 0, buf.id, 0, 10, 1);  // nothing half-done: still enabled
  fake->on_sync = nullptr;
  client->teardown_stream(s, Teardown::kGraceful);
}

// A teardown the card did not confirm: the card may still write the posted buffers, so they are not
// handed back (no flush; free_buffer refuses them) and the rings are never freed (RFC 5041 8.3.1 #6).
TEST_F(Driver, FailedTeardownKeepsBuffersPostedAndTheRings) {
  const StreamId s = stream_with_queue(3);
  client->post_recv(s, 0, buf.id, 0, 10, 1);
  fake->refuse.insert(kCmdSTREAM_TEARDOWN);
  EXPECT_ERRC(client->teardown_stream(s, Teardown::kAbortive), Errc::kBackend, "STREAM_TEARDOWN");
  std::vector<Completion> out;
  EXPECT_EQ(client->poll(out), 0u);
  EXPECT_ERRC(client->free_buffer(buf.id), Errc::kBusy, "1 posted");
  const std::size_t regions = fake->regions.size();
  client->destroy_stream(s);
  EXPECT_EQ(fake->regions.size(), regions);                           // the card may still read the ring: never freed
  EXPECT_ERRC(client->free_buffer(buf.id), Errc::kBusy, "1 posted");  // quarantined for good
  // ... and the stream number is not handed out again.
  fake->refuse.clear();
  for (int i = 0; i < 7; ++i) EXPECT_NE(client->create_stream(pd), s);
  EXPECT_ERRC(client->create_stream(pd), Errc::kExhausted, "streams");
}

// A client that goes away after its teardown or invalidation failed: the memory the card may still
// write is never freed (the next alloc could be handed it); everything else is.
TEST_F(Driver, ReleasedClientQuarantinesMemoryTheCardMayStillWrite) {
  auto other = dev->create_client();
  const PdId opd = other->alloc_pd();
  const Buffer posted = other->alloc_buffer(4096);
  const Buffer registered = other->alloc_buffer(4096);
  const Buffer idle = other->alloc_buffer(4096);
  const StreamId s = other->create_stream(opd);
  other->configure_queue(s, 0, 2);
  other->post_recv(s, 0, posted.id, 0, 64);
  other->register_memory(first_bytes(opd, registered, 64));
  fake->refuse.insert(kCmdSTREAM_TEARDOWN);
  fake->refuse.insert(kCmdSTAG_INVALIDATE);
  other.reset();
  EXPECT_EQ(fake->regions.count(posted.device_addr), 1u) << "posted to a stream the card did not tear down";
  EXPECT_EQ(fake->regions.count(registered.device_addr), 1u) << "registered to an STag the card did not invalidate";
  EXPECT_EQ(fake->regions.count(idle.device_addr), 0u) << "nothing of the card's: freed";
}

// ---- fences and completions the driver cannot match (issue 11) --------------------------------------

// STREAM_TEARDOWN is fenced: busy until every completion decided before it is in the ring. With a ring
// too small for them the command only finishes because the driver drains the ring while it waits;
// the completions come back as deliveries, the rest as flushed, in that order.
TEST_F(Driver, FencedTeardownDrainsAFullRingWhileItWaits) {
  OpenOptions o;
  o.cq_log2_entries = 2;  // 4 entries
  reopen(o);
  detail::core_of(*dev).command_limits().max_polls = 1000;
  const StreamId s = stream_with_queue(4);
  for (std::uint32_t i = 0; i < 9; ++i) client->post_recv(s, 0, buf.id, 100 * i, 100, 500 + i);
  for (std::uint32_t m = 1; m <= 7; ++m) fake->fenced_cqes.push_back(untagged(s, 0, m, m));
  client->teardown_stream(s, Teardown::kAbortive);
  EXPECT_TRUE(fake->fenced_cqes.empty());
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 9u);
  for (std::uint32_t i = 0; i < 7; ++i) {
    EXPECT_EQ(out[i].kind, Completion::Kind::kUntagged) << i;
    EXPECT_EQ(out[i].msn, i + 1);
    EXPECT_EQ(out[i].cookie, 500u + i);
  }
  EXPECT_EQ(out[7].kind, Completion::Kind::kFlushed);
  EXPECT_EQ(out[7].msn, 8u);
  EXPECT_EQ(out[8].kind, Completion::Kind::kFlushed);
  EXPECT_EQ(out[8].msn, 9u);
  EXPECT_EQ(dev->counters().unmatched_completions, 0u);
}

// The same for STAG_INVALIDATE: a tagged completion decided before it reaches the client (its STag is
// still known when the entry is read), and the command finishes although the ring was full.
TEST_F(Driver, FencedInvalidateDeliversTheCompletionsBeforeIt) {
  OpenOptions o;
  o.cq_log2_entries = 1;  // 2 entries
  reopen(o);
  detail::core_of(*dev).command_limits().max_polls = 1000;
  const StreamId s = client->create_stream(pd);
  const Stag stag = client->register_memory(first_bytes(pd, buf, 64)).stag;
  const FakeCqe t = tagged(s, stag);
  for (int i = 0; i < 5; ++i) fake->fenced_cqes.push_back(t);
  client->invalidate(stag);
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 5u);
  for (const auto& c : out) {
    EXPECT_EQ(c.kind, Completion::Kind::kTagged);
    EXPECT_EQ(c.stag, stag);
  }
  // After the fence the card takes no segment with a payload for the STag, so an entry naming it is a
  // zero-length tagged message, whose STag RFC 5041 5.2 forbids checking: delivered, not unmatched.
  fake->push_cqe(t);
  ASSERT_EQ(client->poll(out), 1u);
  EXPECT_EQ(out[0].kind, Completion::Kind::kTagged);
  EXPECT_EQ(out[0].stag, stag);
  EXPECT_EQ(out[0].length, 0u);
  EXPECT_EQ(client->stream_state(s).unmatched_completions, 0u);
  EXPECT_EQ(dev->counters().unmatched_completions, 0u);
}

// RFC 5041 5.2: a zero-length tagged message carries any STag (RDMAP's zero-length RDMA Write names one
// the receiver never advertised) and is delivered to the stream's owner all the same: an STag nobody
// registered, another client's, and 0, each with its RsvdULP and DDP-SSN, in order, nothing counted as
// unmatched. Before the change each was dropped as unmatched.
TEST_F(Driver, TaggedEntryWithAnStagTheClientDoesNotHoldIsDelivered) {
  const StreamId s = client->create_stream(pd);
  auto other = dev->create_client();
  const PdId opd = other->alloc_pd();
  const Buffer ob = other->alloc_buffer(4096);
  const Stag theirs = other->register_memory(first_bytes(opd, ob, 64)).stag;
  const Stag stags[] = {0x00ABCD01u, theirs, 0u};
  for (std::uint16_t i = 0; i < 3; ++i) {
    FakeCqe t = tagged(s, stags[i]);
    t.ssn = static_cast<std::uint16_t>(0xFFFE + i);  // across the 16-bit DDP-SSN wrap
    t.rsvd_ulp = 0x40u + i;
    fake->push_cqe(t);
  }
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 3u);
  for (std::uint16_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(out[i].kind, Completion::Kind::kTagged);
    EXPECT_EQ(out[i].stream, s);
    EXPECT_EQ(out[i].stag, stags[i]);
    EXPECT_EQ(out[i].ssn, static_cast<std::uint16_t>(0xFFFE + i));
    EXPECT_EQ(out[i].rsvd_ulp, 0x40u + i);
    EXPECT_EQ(out[i].length, 0u);
  }
  EXPECT_EQ(other->poll(out), 0u) << "the stream's owner gets them, not the STag's";
  EXPECT_EQ(client->stream_state(s).unmatched_completions, 0u);
  EXPECT_EQ(dev->counters().unmatched_completions, 0u);
}

// An untagged entry must name the oldest posted buffer of its queue (the card completes in MSN order):
// anything else (an MSN repeat after completion, a skip, a flushed buffer) consumes nothing and is
// counted on the stream and in total, never dropped silently.
TEST_F(Driver, UntaggedEntryNotAtTheQueueHeadIsUnmatched) {
  const StreamId s = stream_with_queue(3);
  for (std::uint32_t i = 0; i < 3; ++i) client->post_recv(s, 0, buf.id, 100 * i, 100, 10 + i);
  fake->push_cqe(untagged(s, 0, 1, 10));
  fake->push_cqe(untagged(s, 0, 3, 10));  // MSN 3 before MSN 2
  fake->push_cqe(untagged(s, 0, 1, 10));  // MSN 1 again
  fake->push_cqe(untagged(s, 1, 1, 10));  // queue 1 is not configured
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 1u);
  EXPECT_EQ(out[0].msn, 1u);
  EXPECT_EQ(out[0].cookie, 10u);
  const StreamState st = client->stream_state(s);
  EXPECT_EQ(st.unmatched_completions, 3u);
  EXPECT_EQ(st.state, StreamState::State::kNormal);
  EXPECT_EQ(dev->counters().unmatched_completions, 3u);
  // MSN 2 and 3 are still posted: the head completes normally, then the next.
  fake->push_cqe(untagged(s, 0, 2, 20));
  fake->push_cqe(untagged(s, 0, 3, 30));
  ASSERT_EQ(client->poll(out), 2u);
  EXPECT_EQ(out[0].cookie, 11u);
  EXPECT_EQ(out[1].cookie, 12u);
  dev->sim()->sync();
  const auto doc = nlohmann::json::parse(fake->published.back());
  EXPECT_EQ(doc["unmatched_completions"], 3);
  EXPECT_EQ(doc["clients"][0]["streams"][0]["unmatched_completions"], 3);
  // Entries for a stream nobody holds count in the total only.
  fake->push_cqe(untagged(7, 0, 1, 1));
  EXPECT_EQ(client->poll(out), 0u);
  EXPECT_EQ(dev->counters().unmatched_completions, 4u);
  EXPECT_EQ(client->stream_state(s).unmatched_completions, 3u);
}

// RFC 5041 7.1 / 7.2 and the FLAGS.order error (hw.def): the error completion reaches the client with
// the segment's QN and MSN, the stream enters the error state with its first error kept (through a
// later error and through teardown), and no posted buffer is consumed.
TEST_F(Driver, OrderErrorCompletionAndStreamState) {
  const StreamId s = stream_with_queue(3);
  EXPECT_EQ(client->stream_state(s).state, StreamState::State::kNormal);
  EXPECT_FALSE(client->stream_state(s).first_error.has_value());
  client->post_recv(s, 0, buf.id, 0, 100, 1);
  client->post_recv(s, 0, buf.id, 100, 100, 2);
  FakeCqe e;  // 2/0x03 Invalid MSN range, found in DDP-SSN order
  e.stream = static_cast<std::uint16_t>(s);
  e.error = true;
  e.order = true;
  e.err_type = 2;
  e.err_code = 3;
  e.ssn = 2;
  e.stag_qn = 0;
  e.msn = 3;
  fake->push_cqe(e);
  FakeCqe later = e;  // a second, different error: the first stays the first
  later.order = false;
  later.tagged = true;
  later.err_type = 1;
  later.err_code = 0;
  fake->push_cqe(later);
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 2u);
  EXPECT_EQ(out[0].kind, Completion::Kind::kError);
  EXPECT_TRUE(out[0].order);
  EXPECT_EQ(out[0].qn, 0u);
  EXPECT_EQ(out[0].msn, 3u);
  EXPECT_EQ(out[0].ssn, 2u);
  EXPECT_EQ(out[0].err_type, 2u);
  EXPECT_EQ(out[0].err_code, 3u);
  EXPECT_TRUE(out[0].header.empty());
  EXPECT_FALSE(out[1].order);
  EXPECT_EQ(out[1].header.size(), 14u);
  StreamState st = client->stream_state(s);
  EXPECT_EQ(st.state, StreamState::State::kError);
  ASSERT_TRUE(st.first_error.has_value());
  EXPECT_TRUE(st.first_error->order);
  EXPECT_EQ(st.first_error->err_type, 2u);
  EXPECT_EQ(st.first_error->err_code, 3u);
  EXPECT_EQ(st.first_error->msn, 3u);
  EXPECT_EQ(st.errors, 2u);
  EXPECT_EQ(st.unmatched_completions, 0u);
  dev->sim()->sync();
  auto doc = nlohmann::json::parse(fake->published.back());
  const auto& js = doc["clients"][0]["streams"][0];
  EXPECT_EQ(js["state"], "error");
  EXPECT_EQ(js["first_error"]["type"], 2);
  EXPECT_EQ(js["first_error"]["code"], 3);
  EXPECT_EQ(js["first_error"]["order"], true);
  EXPECT_EQ(js["first_error"]["msn"], 3);
  client->teardown_stream(s, Teardown::kAbortive);
  ASSERT_EQ(client->poll(out), 2u);  // both buffers come back flushed: none was consumed
  EXPECT_EQ(out[0].kind, Completion::Kind::kFlushed);
  EXPECT_EQ(out[1].kind, Completion::Kind::kFlushed);
  st = client->stream_state(s);
  EXPECT_EQ(st.state, StreamState::State::kTornDown);
  ASSERT_TRUE(st.first_error.has_value());
  EXPECT_EQ(st.first_error->err_code, 3u);
  EXPECT_STREQ(stream_state_name(st.state), "torn_down");
  EXPECT_ERRC(client->stream_state(99), Errc::kNotFound, "stream 99");
}

}  // namespace
}  // namespace rnic::test
