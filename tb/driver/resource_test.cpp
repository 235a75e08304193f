// SPDX-License-Identifier: Apache-2.0
// The resource manager (RFC 5041 8.3.2): PDs, buffers, STags, streams; isolation between clients,
// per-client limits, key advance on reuse, the command interface (STAG_WRITE words, refusal, busy,
// timeout) and the invalidate fence (8.3.1 #6).
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "driver_test_util.hpp"

namespace rnic::test {
namespace {

using namespace rnic::hw;

RegisterRequest req_for(PdId pd, const Buffer& b, std::uint64_t offset = 0, std::uint64_t length = 4096) {
  RegisterRequest r;
  r.pd = pd;
  r.buffer = b.id;
  r.offset = offset;
  r.length = length;
  return r;
}

// ---- protection domains ---------------------------------------------------------------------------

TEST_F(Driver, PdDoubleFreeAndUseAfterFreeAreNotFound) {
  const PdId p = client->alloc_pd();
  EXPECT_NE(p, pd);
  EXPECT_NE(p, 0u);
  client->dealloc_pd(p);
  EXPECT_ERRC(client->dealloc_pd(p), Errc::kNotFound, "pd " + std::to_string(p));
  EXPECT_ERRC(client->create_stream(p), Errc::kNotFound, "pd " + std::to_string(p));
  EXPECT_ERRC(client->register_memory(req_for(p, buf)), Errc::kNotFound, "pd");
}

TEST_F(Driver, PdBusyWhileUsed) {
  const Stag stag = client->register_memory(req_for(pd, buf)).stag;
  EXPECT_ERRC(client->dealloc_pd(pd), Errc::kBusy, "1 STags");
  client->invalidate(stag);
  const StreamId s = client->create_stream(pd);
  EXPECT_ERRC(client->dealloc_pd(pd), Errc::kBusy, "1 streams");
  client->teardown_stream(s, Teardown::kAbortive);
  EXPECT_ERRC(client->dealloc_pd(pd), Errc::kBusy, "1 streams");  // until destroyed
  client->destroy_stream(s);
  client->dealloc_pd(pd);
}

TEST_F(Driver, PdQuota) {
  Limits l;
  l.max_pds = 2;
  auto c = dev->create_client(l);
  c->alloc_pd();
  c->alloc_pd();
  EXPECT_ERRC(c->alloc_pd(), Errc::kQuota, "max_pds");
}

// ---- buffers --------------------------------------------------------------------------------------

TEST_F(Driver, BufferIsZeroedAlignedAndChecked) {
  const Buffer b = client->alloc_buffer(100);
  EXPECT_EQ(b.size, 100u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data) % 64, 0u);
  EXPECT_EQ(b.device_addr % 64, 0u);
  for (std::size_t i = 0; i < b.size; ++i) EXPECT_EQ(b.data[i], 0u);
  EXPECT_ERRC(client->alloc_buffer(0), Errc::kInvalidArgument, "bytes");
  client->free_buffer(b.id);
  EXPECT_ERRC(client->free_buffer(b.id), Errc::kNotFound, "buffer " + std::to_string(b.id));
  EXPECT_ERRC(client->register_memory(req_for(pd, b, 0, 10)), Errc::kNotFound, "buffer");
}

TEST_F(Driver, BufferQuota) {
  Limits l;
  l.max_buffer_bytes = 10000;
  auto c = dev->create_client(l);
  const Buffer a = c->alloc_buffer(6000);
  EXPECT_ERRC(c->alloc_buffer(4001), Errc::kQuota, "max_buffer_bytes");
  EXPECT_ERRC(c->alloc_buffer(std::numeric_limits<std::size_t>::max()), Errc::kQuota, "max_buffer_bytes");
  c->alloc_buffer(4000);
  c->free_buffer(a.id);
  c->alloc_buffer(6000);
}

TEST_F(Driver, BufferBusyWhileRegistered) {
  const Stag stag = client->register_memory(req_for(pd, buf)).stag;
  EXPECT_ERRC(client->free_buffer(buf.id), Errc::kBusy, "1 registrations");
  client->invalidate(stag);
  client->free_buffer(buf.id);
}

// ---- registration (RFC 5041 8.3.2) ------------------------------------------------------------------

TEST_F(Driver, StagWriteWordsMatchHwDef) {
  const StreamId s = client->create_stream(pd);
  RegisterRequest r = req_for(pd, buf, 256, 1000);
  r.access = kRemoteWrite | kRemoteRead;
  r.base_to = 0x123456789ABCull;
  r.bind_stream = s;
  const Registration reg = client->register_memory(r);
  EXPECT_EQ(reg.base_to, r.base_to);
  EXPECT_EQ(reg.length, 1000u);
  const auto cmds = fake->commands_with(kCmdSTAG_WRITE);
  ASSERT_EQ(cmds.size(), 1u);
  const auto& a = cmds[0].args;
  // ARG0 index; ARG1 [7:0] ignored (0) [8] remote write [9] remote read [10] bound; ARG2 PD; ARG3
  // bound stream; ARG4/5 base TO; ARG6/7 length; ARG8/9 host address. The STag is CMD_RESULT.
  EXPECT_EQ(a[0], reg.stag >> 8);
  EXPECT_EQ(reg.stag, (a[0] << 8) | fake->stag_keys.at(a[0]));
  EXPECT_EQ(a[1], (1u << 8) | (1u << 9) | (1u << 10));
  EXPECT_EQ(a[2], pd);
  EXPECT_EQ(a[3], s);
  EXPECT_EQ(a[4], 0x56789ABCu);
  EXPECT_EQ(a[5], 0x1234u);
  EXPECT_EQ(a[6], 1000u);
  EXPECT_EQ(a[7], 0u);
  const std::uint64_t host = buf.device_addr + 256;
  EXPECT_EQ(a[8], static_cast<std::uint32_t>(host));
  EXPECT_EQ(a[9], static_cast<std::uint32_t>(host >> 32));

  // Unbound, write only: bits 9 and 10 clear, ARG3 0.
  const Registration r2 = client->register_memory(req_for(pd, buf));
  const auto a2 = fake->commands_with(kCmdSTAG_WRITE).back().args;
  EXPECT_EQ(a2[1], 1u << 8);
  EXPECT_EQ(r2.stag, fake->cmd_result);
  EXPECT_EQ(a2[3], 0u);
  EXPECT_NE(r2.stag >> 8, reg.stag >> 8);
}

TEST_F(Driver, RegisterRejectsBadArguments) {
  const std::size_t cmds = fake->commands.size();
  auto r = req_for(pd, buf, 0, 0);
  EXPECT_ERRC(client->register_memory(r), Errc::kInvalidArgument, "length must be > 0");
  r = req_for(pd, buf, 64 * 1024 - 10, 11);
  EXPECT_ERRC(client->register_memory(r), Errc::kInvalidArgument, "outside buffer");
  r = req_for(pd, buf, 64 * 1024 + 1, 1);
  EXPECT_ERRC(client->register_memory(r), Errc::kInvalidArgument, "outside buffer");
  r = req_for(pd, buf, std::numeric_limits<std::uint64_t>::max(), 2);  // offset + length overflows
  EXPECT_ERRC(client->register_memory(r), Errc::kInvalidArgument, "outside buffer");
  r = req_for(pd, buf, 8, std::numeric_limits<std::uint64_t>::max());
  EXPECT_ERRC(client->register_memory(r), Errc::kInvalidArgument, "outside buffer");
  r = req_for(pd, buf);
  r.access = 0;
  EXPECT_ERRC(client->register_memory(r), Errc::kInvalidArgument, "access");
  r.access = 1u << 3;
  EXPECT_ERRC(client->register_memory(r), Errc::kInvalidArgument, "access 0x8");
  r.access = kRemoteWrite | (1u << 5);
  EXPECT_ERRC(client->register_memory(r), Errc::kInvalidArgument, "access");
  r = req_for(pd, buf);
  r.base_to = std::numeric_limits<std::uint64_t>::max() - 100;  // RFC 5041 7.1: TO wrap
  EXPECT_ERRC(client->register_memory(r), Errc::kInvalidArgument, "wraps");
  r = req_for(pd + 100, buf);
  EXPECT_ERRC(client->register_memory(r), Errc::kNotFound, "pd");
  r = req_for(pd, buf);
  r.buffer = 999;
  EXPECT_ERRC(client->register_memory(r), Errc::kNotFound, "buffer 999");
  r = req_for(pd, buf);
  r.bind_stream = 5;
  EXPECT_ERRC(client->register_memory(r), Errc::kNotFound, "bind_stream");
  // Nothing half-done: no command reached the card.
  EXPECT_EQ(fake->commands.size(), cmds);
  // The whole buffer is fine.
  client->register_memory(req_for(pd, buf, 0, 64 * 1024));
}

TEST_F(Driver, BindStreamMustShareThePd) {  // RFC 5041 8.2
  const PdId other = client->alloc_pd();
  const StreamId s = client->create_stream(other);
  auto r = req_for(pd, buf);
  r.bind_stream = s;
  EXPECT_ERRC(client->register_memory(r), Errc::kInvalidArgument, "is on pd " + std::to_string(other));
  client->teardown_stream(s, Teardown::kAbortive);
  r.pd = other;
  EXPECT_ERRC(client->register_memory(r), Errc::kState, "torn down");
}

TEST_F(Driver, StagQuotas) {
  Limits l;
  l.max_stags = 3;
  l.max_stags_per_pd = 2;
  auto c = dev->create_client(l);
  const PdId p1 = c->alloc_pd(), p2 = c->alloc_pd();
  const Buffer b = c->alloc_buffer(4096);
  c->register_memory(req_for(p1, b));
  c->register_memory(req_for(p1, b));
  EXPECT_ERRC(c->register_memory(req_for(p1, b)), Errc::kQuota, "max_stags_per_pd");
  c->register_memory(req_for(p2, b));
  EXPECT_ERRC(c->register_memory(req_for(p2, b)), Errc::kQuota, "max_stags ");
}

TEST_F(Driver, StagTableExhausted) {
  // The fake card has 16 STags.
  for (int i = 0; i < 16; ++i) client->register_memory(req_for(pd, buf));
  EXPECT_ERRC(client->register_memory(req_for(pd, buf)), Errc::kExhausted, "all 16 STags");
}

// RFC 5041 8.3.1 / 7.1 Invalid STag: after an index is reused its key differs, so the old STag is
// no longer valid anywhere. The card issues the keys; the driver hands out what CMD_RESULT says.
TEST_F(Driver, KeyAdvancesOnEveryReuseOfAnIndex) {
  std::map<std::uint32_t, std::vector<std::uint8_t>> keys;  // index -> keys handed out
  std::vector<Stag> old;
  for (int round = 0; round < 40; ++round) {
    const Stag s = client->register_memory(req_for(pd, buf)).stag;
    keys[s >> 8].push_back(static_cast<std::uint8_t>(s & 0xFF));
    client->invalidate(s);
    old.push_back(s);
  }
  for (const auto& [index, ks] : keys) {
    EXPECT_LT(index, 16u);
    for (std::size_t i = 1; i < ks.size(); ++i) EXPECT_EQ(ks[i], static_cast<std::uint8_t>(ks[i - 1] + 1));
  }
  EXPECT_GT(keys.begin()->second.size(), 1u);  // indices were reused
  for (Stag s : old) EXPECT_ERRC(client->invalidate(s), Errc::kNotFound, "STag");
}

// The key comes from the card, whatever it is (here it continues a table an earlier owner left).
TEST_F(Driver, StagIsWhatTheCardReturns) {
  for (std::uint32_t i = 0; i < 16; ++i) fake->stag_keys[i] = static_cast<std::uint8_t>(0x40 + i);
  const Stag s = client->register_memory(req_for(pd, buf)).stag;
  const std::uint32_t index = s >> 8;
  EXPECT_EQ(s & 0xFFu, 0x41u + index);
  EXPECT_EQ(fake->commands_with(kCmdSTAG_WRITE).back().args[0], index);
  client->invalidate(s);
}

// A CMD_RESULT naming another index than the one written: the card and the driver disagree. A clear
// error, the index is invalidated and never handed out again.
TEST_F(Driver, CmdResultForAnotherIndexIsMismatch) {
  fake->result_xor = 1u << 8;
  EXPECT_ERRC(client->register_memory(req_for(pd, buf)), Errc::kMismatch, "CMD_RESULT");
  const std::uint32_t index = fake->commands_with(kCmdSTAG_WRITE).back().args[0];
  const auto inv = fake->commands_with(kCmdSTAG_INVALIDATE);
  ASSERT_EQ(inv.size(), 1u);
  EXPECT_EQ(inv[0].args[0], index);
  client->free_buffer(buf.id);  // not left registered
  buf = client->alloc_buffer(4096);
  fake->result_xor = 0;
  for (int i = 0; i < 15; ++i) EXPECT_NE(client->register_memory(req_for(pd, buf)).stag >> 8, index);
  EXPECT_ERRC(client->register_memory(req_for(pd, buf)), Errc::kExhausted, "STags");
}

// RFC 5041 8.3.1 / 8.3.2 (issue 11): a second owner of the same card, after the first closed or died
// without cleanup, never gets an STag value the first had for an index it reuses (the keys are the
// card's, not the driver's).
TEST(StagOwners, SecondOwnerNeverReusesAnStagValue) {
  for (const bool abandoned : {false, true}) {
    SCOPED_TRACE(abandoned ? "first owner abandoned" : "first owner closed");
    auto fake = std::make_shared<FakeState>();
    std::set<Stag> had;  // every STag value the first owner was given
    auto dev1 = open_fake(fake);
    auto c1 = dev1->create_client();
    const PdId p1 = c1->alloc_pd();
    const Buffer b1 = c1->alloc_buffer(4096);
    std::vector<Stag> live;
    for (int i = 0; i < 16; ++i) live.push_back(c1->register_memory(req_for(p1, b1)).stag);
    for (std::size_t i = 0; i < 8; ++i) {  // reuse half of the indices once
      had.insert(live[i]);
      c1->invalidate(live[i]);
      live[i] = c1->register_memory(req_for(p1, b1)).stag;
    }
    had.insert(live.begin(), live.end());
    ASSERT_EQ(had.size(), 24u);
    if (abandoned) {
      // The process dies: nothing of its device and client reaches the card any more (their
      // destructors at the end of this scope find the transport gone), and the card keeps its tables.
      fake->cut_off();
    } else {
      c1.reset();
      dev1.reset();
    }
    auto dev2 = open_fake(fake);
    auto c2 = dev2->create_client();
    const PdId p2 = c2->alloc_pd();
    const Buffer b2 = c2->alloc_buffer(4096);
    for (int round = 0; round < 3; ++round) {  // every index, three times
      std::vector<Stag> mine;
      for (int i = 0; i < 16; ++i) {
        const Stag s = c2->register_memory(req_for(p2, b2)).stag;
        EXPECT_EQ(had.count(s), 0u) << "STag 0x" << std::hex << s << " issued again to the second owner";
        mine.push_back(s);
      }
      for (Stag s : mine) c2->invalidate(s);
    }
  }
}

TEST_F(Driver, InvalidateTwiceIsNotFound) {
  const Stag s = client->register_memory(req_for(pd, buf)).stag;
  client->invalidate(s);
  EXPECT_ERRC(client->invalidate(s), Errc::kNotFound, "unknown STag");
  EXPECT_ERRC(client->invalidate(0xFFFFFF00u), Errc::kNotFound, "unknown STag");
}

// RFC 5041 8.3.1 #6: invalidate returns only after the card's fence (busy) clears; the index is not
// handed out before that.
TEST_F(Driver, InvalidateWaitsForTheFence) {
  const Stag s = client->register_memory(req_for(pd, buf)).stag;
  fake->busy_reads_for[kCmdSTAG_INVALIDATE] = 25;
  client->invalidate(s);
  EXPECT_EQ(fake->busy_left, 0u);
  EXPECT_EQ(fake->status_reads - fake->status_reads_at_last_command, 26u);
  const auto inv = fake->commands_with(kCmdSTAG_INVALIDATE);
  ASSERT_EQ(inv.size(), 1u);
  EXPECT_EQ(inv[0].args[0], s >> 8);
}

TEST_F(Driver, RefusedCommandIsBackendErrorAndNothingChanges) {
  fake->refuse.insert(kCmdSTAG_WRITE);
  EXPECT_ERRC(client->register_memory(req_for(pd, buf)), Errc::kBackend, "STAG_WRITE refused");
  client->free_buffer(buf.id);  // not left registered
  fake->refuse.clear();
  fake->refuse.insert(kCmdSTREAM_ENABLE);
  EXPECT_ERRC(client->create_stream(pd), Errc::kBackend, "STREAM_ENABLE");
  client->dealloc_pd(pd);  // no stream left on it
}

TEST_F(Driver, CommandTimeout) {
  detail::core_of(*dev).command_limits().max_polls = 50;
  fake->busy_forever = true;
  EXPECT_ERRC(client->create_stream(pd), Errc::kTimeout, "STREAM_ENABLE still busy after 50");
  // The next command first waits for the stuck one (and gives up again while it stays busy) ...
  const std::size_t cmds = fake->commands.size();
  EXPECT_ERRC(client->create_stream(pd), Errc::kTimeout, "still busy");
  EXPECT_EQ(fake->commands.size(), cmds);  // its arguments were not written over the stuck command
  // ... and proceeds once the card recovers; the stream number of the timed-out enable is not reused.
  fake->busy_forever = false;
  const StreamId s = client->create_stream(pd);
  EXPECT_NE(s, fake->commands_with(kCmdSTREAM_ENABLE).front().args[0]);
}

TEST_F(Driver, CommandTimeoutByTime) {
  auto& lim = detail::core_of(*dev).command_limits();
  lim.timeout = std::chrono::milliseconds(30);
  fake->busy_forever = true;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_ERRC(client->register_memory(req_for(pd, buf)), Errc::kTimeout, "STAG_WRITE");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

// ---- streams --------------------------------------------------------------------------------------

TEST_F(Driver, StreamEnableWordsAndReuse) {
  const StreamId s = client->create_stream(pd);
  auto en = fake->commands_with(kCmdSTREAM_ENABLE);
  ASSERT_EQ(en.size(), 1u);
  EXPECT_EQ(en[0].args[0], s);
  EXPECT_EQ(en[0].args[1], pd);
  EXPECT_ERRC(client->destroy_stream(s), Errc::kState, "not torn down");
  client->teardown_stream(s, Teardown::kAbortive);
  EXPECT_ERRC(client->teardown_stream(s, Teardown::kAbortive), Errc::kState, "already torn down");
  auto td = fake->commands_with(kCmdSTREAM_TEARDOWN);
  ASSERT_EQ(td.size(), 1u);
  EXPECT_EQ(td[0].args[0], s);
  client->destroy_stream(s);
  EXPECT_ERRC(client->destroy_stream(s), Errc::kNotFound, "stream " + std::to_string(s));
  EXPECT_ERRC(client->teardown_stream(s, Teardown::kGraceful), Errc::kNotFound, "stream");
  EXPECT_ERRC(client->configure_queue(s, 0, 2), Errc::kNotFound, "stream");
  // All 8 numbers can be taken again.
  for (int i = 0; i < 8; ++i) client->create_stream(pd);
  EXPECT_ERRC(client->create_stream(pd), Errc::kExhausted, "all 8 streams");
}

TEST_F(Driver, StreamQuota) {
  Limits l;
  l.max_streams = 1;
  auto c = dev->create_client(l);
  const PdId p = c->alloc_pd();
  c->create_stream(p);
  EXPECT_ERRC(c->create_stream(p), Errc::kQuota, "max_streams");
}

TEST_F(Driver, DestroyStreamBusyWhileStagsAreBoundToIt) {
  const StreamId s = client->create_stream(pd);
  auto r = req_for(pd, buf);
  r.bind_stream = s;
  const Stag stag = client->register_memory(r).stag;
  client->teardown_stream(s, Teardown::kAbortive);
  EXPECT_ERRC(client->destroy_stream(s), Errc::kBusy, "bound");
  client->invalidate(stag);
  client->destroy_stream(s);
}

// ---- isolation between clients (RFC 5041 8.3.2) -----------------------------------------------------

TEST_F(Driver, ClientsAreIsolated) {
  auto other = dev->create_client();
  const PdId opd = other->alloc_pd();
  const Buffer obuf = other->alloc_buffer(4096);
  const Stag ostag = other->register_memory(req_for(opd, obuf)).stag;
  const StreamId os = other->create_stream(opd);
  other->configure_queue(os, 0, 2);

  // Every handle of the other client is unknown here.
  EXPECT_ERRC(client->dealloc_pd(opd), Errc::kNotFound, "pd");
  EXPECT_ERRC(client->create_stream(opd), Errc::kNotFound, "pd");
  EXPECT_ERRC(client->register_memory(req_for(opd, buf)), Errc::kNotFound, "pd");
  EXPECT_ERRC(client->register_memory(req_for(pd, obuf)), Errc::kNotFound, "buffer");
  EXPECT_ERRC(client->free_buffer(obuf.id), Errc::kNotFound, "buffer");
  EXPECT_ERRC(client->invalidate(ostag), Errc::kNotFound, "STag");
  EXPECT_ERRC(client->configure_queue(os, 1, 2), Errc::kNotFound, "stream");
  EXPECT_ERRC(client->post_recv(os, 0, buf.id, 0, 10), Errc::kNotFound, "stream");
  EXPECT_ERRC(client->teardown_stream(os, Teardown::kAbortive), Errc::kNotFound, "stream");
  EXPECT_ERRC(client->destroy_stream(os), Errc::kNotFound, "stream");
  auto r = req_for(pd, buf);
  r.bind_stream = os;
  EXPECT_ERRC(client->register_memory(r), Errc::kNotFound, "bind_stream");
  // ... and a stream of mine cannot take the other's buffer.
  const StreamId s = stream_with_queue();
  EXPECT_ERRC(client->post_recv(s, 0, obuf.id, 0, 10), Errc::kNotFound, "buffer");
  // PDs are device-wide numbers: never shared between clients.
  EXPECT_NE(opd, pd);
  // The other's resources are intact.
  other->invalidate(ostag);
  other->post_recv(os, 0, obuf.id, 0, 10);
}

TEST_F(Driver, ClientDestructorReleasesEverything) {
  auto other = dev->create_client();
  const PdId opd = other->alloc_pd();
  const Buffer obuf = other->alloc_buffer(4096);
  const Stag ostag = other->register_memory(req_for(opd, obuf)).stag;
  const StreamId os = other->create_stream(opd);
  other->configure_queue(os, 0, 2);
  other->post_recv(os, 0, obuf.id, 0, 10);
  const std::size_t regions = fake->regions.size();
  other.reset();
  EXPECT_EQ(fake->regions.size(), regions - 2);  // buffer and ring
  auto td = fake->commands_with(kCmdSTREAM_TEARDOWN);
  ASSERT_EQ(td.size(), 1u);
  EXPECT_EQ(td[0].args[0], os);
  auto inv = fake->commands_with(kCmdSTAG_INVALIDATE);
  ASSERT_EQ(inv.size(), 1u);
  EXPECT_EQ(inv[0].args[0], ostag >> 8);
  // The remaining client is unaffected and the table space is back.
  for (int i = 0; i < 16; ++i) client->register_memory(req_for(pd, buf));
  for (int i = 0; i < 8; ++i) client->create_stream(pd);
}

TEST_F(Driver, PublishedTablesDescribeTheClient) {
  const StreamId s = stream_with_queue(2);
  auto r = req_for(pd, buf, 128, 512);
  r.base_to = 4096;
  r.access = kRemoteWrite | kRemoteRead;
  r.bind_stream = s;
  const Stag stag = client->register_memory(r).stag;
  client->post_recv(s, 0, buf.id, 0, 64);
  dev->sim()->sync();  // changes are published at most every 20 ms, and at once by sync()
  const auto doc = nlohmann::json::parse(fake->published.back());
  EXPECT_EQ(doc, nlohmann::json::parse(dev->published_state()));
  ASSERT_EQ(doc["clients"].size(), 1u);
  const auto& c = doc["clients"][0];
  ASSERT_EQ(c["pds"].size(), 1u);
  EXPECT_EQ(c["pds"][0]["pd"], pd);
  ASSERT_EQ(c["stags"].size(), 1u);
  const auto& st = c["stags"][0];
  EXPECT_EQ(st["stag"], stag);
  EXPECT_EQ(st["base_to"], 4096);
  EXPECT_EQ(st["length"], 512);
  EXPECT_EQ(st["access"], nlohmann::json({"remote_write", "remote_read"}));
  EXPECT_EQ(st["bound_stream"], s);
  ASSERT_EQ(c["streams"].size(), 1u);
  EXPECT_EQ(c["streams"][0]["state"], "normal");
  EXPECT_TRUE(c["streams"][0]["first_error"].is_null());
  EXPECT_EQ(c["streams"][0]["unmatched_completions"], 0);
  EXPECT_EQ(c["streams"][0]["queues"][0]["posted"], 1);
  EXPECT_EQ(c["streams"][0]["queues"][0]["entries"], 4);
  client->teardown_stream(s, Teardown::kAbortive);
  dev->sim()->sync();
  const auto doc2 = nlohmann::json::parse(fake->published.back());
  EXPECT_EQ(doc2["clients"][0]["streams"][0]["state"], "torn_down");
  EXPECT_EQ(doc2["clients"][0]["streams"][0]["queues"][0]["posted"], 0);
}

TEST_F(Driver, ConcurrentClientsAreSerialized) {
  auto other = dev->create_client();
  auto work = [](Client& c) {
    const PdId p = c.alloc_pd();
    for (int i = 0; i < 200; ++i) {
      const Buffer b = c.alloc_buffer(256);
      RegisterRequest r;
      r.pd = p;
      r.buffer = b.id;
      r.length = 256;
      c.invalidate(c.register_memory(r).stag);
      c.free_buffer(b.id);
    }
    c.dealloc_pd(p);
  };
  std::thread t([&] { work(*other); });
  work(*client);
  t.join();
  EXPECT_EQ(fake->commands_with(kCmdSTAG_WRITE).size(), 400u);
}

// Tables larger than the backend takes (the simulator's message limit) are published as counts, so
// rnicctl never shows a stale document; changes are batched (at most one document per 20 ms) and
// sync() publishes at once.
// The published tables (rnicctl reads them from another process) follow completions: a receive
// buffer the card consumed is shown consumed after SimControl::sync (it reads the completion ring),
// and after poll once the publish interval has passed, never as still posted.
TEST_F(Driver, PublishedTablesFollowCompletions) {
  const StreamId s = stream_with_queue(2);
  auto first_client = [&] { return nlohmann::json::parse(fake->published.back())["clients"][0]; };
  auto cqe = [&](std::uint32_t msn) {
    FakeCqe c;
    c.stream = static_cast<std::uint16_t>(s);
    c.stag_qn = 0;
    c.msn = msn;
    c.length = 10;
    return c;
  };
  client->post_recv(s, 0, buf.id, 0, 64, 7);
  dev->sim()->sync();
  EXPECT_EQ(first_client()["streams"][0]["queues"][0]["posted"], 1);
  EXPECT_EQ(first_client()["buffers"][0]["posted"], 1);
  // The card completes MSN 1 while the simulator runs (during the sync).
  fake->on_sync = [&] { fake->push_cqe(cqe(1)); };
  dev->sim()->sync();
  fake->on_sync = nullptr;
  auto c = first_client();
  EXPECT_EQ(c["streams"][0]["queues"][0]["posted"], 0);
  EXPECT_EQ(c["buffers"][0]["posted"], 0);
  EXPECT_EQ(c["posted"], 0);
  EXPECT_EQ(c["pending_completions"], 1);
  std::vector<Completion> out;
  ASSERT_EQ(client->poll(out), 1u);
  EXPECT_EQ(out[0].cookie, 7u);

  // Through poll: MSN 2 posted and published, completed, polled; a later call publishes it.
  client->post_recv(s, 0, buf.id, 64, 64, 8);
  dev->sim()->sync();
  EXPECT_EQ(first_client()["streams"][0]["queues"][0]["posted"], 1);
  fake->push_cqe(cqe(2));
  ASSERT_EQ(client->poll(out), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(25));  // the publish interval is 20 ms
  EXPECT_EQ(client->poll(out), 0u);
  c = first_client();
  EXPECT_EQ(c["streams"][0]["queues"][0]["posted"], 0);
  EXPECT_EQ(c["streams"][0]["queues"][0]["next_msn"], 3);
  EXPECT_EQ(c["buffers"][0]["posted"], 0);
  EXPECT_EQ(c["pending_completions"], 0);
}

TEST_F(Driver, PublishedTablesTooLargeBecomeCounts) {
  dev->sim()->sync();
  const std::size_t before = fake->published.size();
  fake->publish_limit = 2000;
  for (int i = 0; i < 12; ++i) client->register_memory(req_for(pd, buf));
  EXPECT_LE(fake->published.size(), before + 1);  // 12 changes, at most one document in between
  dev->sim()->sync();
  const auto doc = nlohmann::json::parse(fake->published.back());
  EXPECT_EQ(doc["truncated"], true);
  EXPECT_EQ(doc["clients"][0]["stag_count"], 12);
  EXPECT_FALSE(doc["clients"][0].contains("stags"));
}

}  // namespace
}  // namespace rnic::test
