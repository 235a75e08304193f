// SPDX-License-Identifier: Apache-2.0
// Device: device strings, identification and version check, completion-ring setup, observers,
// register reads, counters, statistics and teardown of the device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "driver_test_util.hpp"
#include "rnic/wire/ddp_errors.hpp"

namespace rnic::test {
namespace {

using namespace rnic::hw;

TEST(DeviceString, AcceptedForms) {
  auto sim = detail::parse_device("sim:/tmp/x.sock");
  EXPECT_EQ(sim.kind, "sim");
  EXPECT_EQ(sim.path, "/tmp/x.sock");
  auto xrt = detail::parse_device("xrt:3");
  EXPECT_EQ(xrt.kind, "xrt");
  EXPECT_EQ(xrt.index, 3u);
}

TEST(DeviceString, RejectedFormsNameTheAcceptedOnes) {
  for (const char* bad : {"", "sim", "sim:", "xrt:", "xrt:a", "xrt:-1", "xrt:1x", "xrt:99999999999", "pcie:0", ":0"}) {
    SCOPED_TRACE(bad);
    EXPECT_ERRC(detail::parse_device(bad), Errc::kInvalidArgument, "sim:<socket path> or xrt:<index>");
  }
  EXPECT_ERRC(Device::open("bogus"), Errc::kInvalidArgument, "bogus");
}

TEST(DeviceString, EmptyMeansEnvironmentThenDefault) {
  const char* old = std::getenv("RNIC_DEVICE");
  const std::string saved = old != nullptr ? old : "";
  ::unsetenv("RNIC_DEVICE");
  EXPECT_EQ(detail::resolve_device(""), "sim:rnic-sim.sock");
  ::setenv("RNIC_DEVICE", "xrt:1", 1);
  EXPECT_EQ(detail::resolve_device(""), "xrt:1");
  EXPECT_EQ(detail::resolve_device("sim:a"), "sim:a");
  ::setenv("RNIC_DEVICE", "nonsense", 1);
  EXPECT_ERRC(Device::open(""), Errc::kInvalidArgument, "nonsense");
  if (old != nullptr) {
    ::setenv("RNIC_DEVICE", saved.c_str(), 1);
  } else {
    ::unsetenv("RNIC_DEVICE");
  }
}

TEST(DeviceString, SimPathReachesTheBackendFactory) {
  // Whatever the sim backend answers for a socket nobody listens on, it is not a parse error.
  try {
    Device::open("sim:/nonexistent/rnic-test.sock");
    ADD_FAILURE() << "opened a device on a missing socket";
  } catch (const Error& e) {
    EXPECT_NE(e.code(), Errc::kInvalidArgument) << e.what();
  }
}

TEST(ErrcName, EveryCodeHasItsOwnName) {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(Errc::kBackend); ++i) {
    const std::string n = errc_name(static_cast<Errc>(i));
    EXPECT_NE(n, "?");
    names.insert(n);
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(Errc::kBackend) + 1);
  EXPECT_STREQ(errc_name(Errc::kQueueFull), "QueueFull");
}

TEST(DeviceOpen, ReadsIdentificationAndCapabilities) {
  auto fake = std::make_shared<FakeState>();
  fake->version = (kVERSION_VALUE & 0xFFFF0000u) | 0x7;  // another minor is accepted
  auto dev = open_fake(fake);
  const DeviceInfo& i = dev->info();
  EXPECT_EQ(i.device, "fake:0");
  EXPECT_EQ(i.backend, "fake");
  EXPECT_EQ(i.id, kID_VALUE);
  EXPECT_EQ(i.version, fake->version);
  EXPECT_EQ(i.build_id, 0x1234u);
  EXPECT_EQ(i.data_width, 128u);
  EXPECT_EQ(i.stags, 16u);
  EXPECT_EQ(i.streams, 8u);
  EXPECT_EQ(i.qns, 2u);
  EXPECT_EQ(i.ssn_window, 32u);
}

TEST(DeviceOpen, WrongIdIsMismatch) {
  auto fake = std::make_shared<FakeState>();
  fake->id = 0xDEADBEEF;
  EXPECT_ERRC(open_fake(fake), Errc::kMismatch, "0xdeadbeef");
  EXPECT_ERRC(open_fake(fake), Errc::kMismatch, "expected 0x52444450");
}

TEST(DeviceOpen, OtherVersionMajorIsMismatch) {
  auto fake = std::make_shared<FakeState>();
  fake->version = 0x00010001;  // interface 1: the driver kept the STag keys itself
  EXPECT_ERRC(open_fake(fake), Errc::kMismatch, "version 1.1");
  EXPECT_ERRC(open_fake(fake), Errc::kMismatch, "needs major 3");
  EXPECT_TRUE(fake->regions.empty());  // nothing allocated for a refused card
}

// Interface 3 rings doorbells through DB_QUEUE and DB_PROD; a 2.2 card (a doorbell address per queue
// from 0x8000) would take this driver's doorbells as writes to nowhere: refused before anything is
// allocated or written.
TEST(DeviceOpen, Interface2CardIsMismatch) {
  auto fake = std::make_shared<FakeState>();
  fake->version = 0x00020002;
  EXPECT_ERRC(open_fake(fake), Errc::kMismatch, "version 2.2");
  EXPECT_TRUE(fake->regions.empty());
  EXPECT_TRUE(fake->writes.empty());
}

TEST(DeviceOpen, ImpossibleCapabilitiesAreMismatch) {
  auto fake = std::make_shared<FakeState>();
  fake->stags = 0;
  EXPECT_ERRC(open_fake(fake), Errc::kMismatch, "CAP_STAGS");
}

TEST(DeviceOpen, OwnerProgramsTheCompletionRing) {
  auto fake = std::make_shared<FakeState>();
  OpenOptions o;
  o.cq_log2_entries = 5;
  auto dev = open_fake(fake, o);
  ASSERT_EQ(fake->regions.size(), 1u);
  const auto& [addr, region] = *fake->regions.begin();
  EXPECT_EQ(region.size, std::size_t{kCQE_BYTES} << 5);
  EXPECT_EQ(addr % 64, 0u);
  EXPECT_EQ(fake->reg(kRegCQ_BASE_LO), static_cast<std::uint32_t>(addr));
  EXPECT_EQ(fake->reg(kRegCQ_BASE_HI), static_cast<std::uint32_t>(addr >> 32));
  EXPECT_EQ(fake->reg(kRegCQ_LOG2_SIZE), 5u);
  EXPECT_EQ(fake->reg(kRegCQ_CTRL), 1u);
  // Enable comes after base and size.
  ASSERT_FALSE(fake->writes.empty());
  EXPECT_EQ(fake->writes.back(), std::make_pair(kRegCQ_CTRL, 1u));
  EXPECT_FALSE(fake->published.empty());
}

// hw.def CQ_CTRL: the card takes a ring configuration only while disabled and not busy. A card
// whose previous ring still has a completion write in flight: the driver waits, then programs.
TEST(DeviceOpen, WaitsForTheCardToFinishWithTheOldRing) {
  auto fake = std::make_shared<FakeState>();
  fake->cq_busy_reads = 3;
  auto dev = open_fake(fake);
  EXPECT_EQ(fake->cq_busy_reads, 0u);
  EXPECT_EQ(fake->cq_config_writes_ignored, 0u);
  ASSERT_EQ(fake->regions.size(), 1u);
  EXPECT_EQ(fake->cq_base(), fake->regions.begin()->first);
  EXPECT_EQ(fake->reg(kRegCQ_CTRL), 1u);
}

TEST(DeviceOpen, CqSizeOutOfRange) {
  for (std::uint32_t log2 : {0u, 17u}) {
    auto fake = std::make_shared<FakeState>();
    OpenOptions o;
    o.cq_log2_entries = log2;
    EXPECT_ERRC(open_fake(fake, o), Errc::kInvalidArgument, "cq_log2_entries " + std::to_string(log2));
  }
}

// The ring is the card's until CQ_CTRL.busy reads 0 after the disable: a card that stays busy
// keeps it (the memory is leaked, never handed to anyone), one that finishes gets it freed.
TEST(DeviceClose, RingIsFreedOnlyOnceTheCardIsNotBusy) {
  for (const std::uint64_t busy : {std::uint64_t{5}, UINT64_MAX}) {
    auto fake = std::make_shared<FakeState>();
    auto dev = open_fake(fake);
    detail::core_of(*dev).command_limits().max_polls = 50;
    fake->cq_busy_reads = busy;
    dev.reset();
    EXPECT_EQ(fake->reg(kRegCQ_CTRL), 0u);
    if (busy == UINT64_MAX) {
      EXPECT_EQ(fake->regions.size(), 1u) << "the ring of a card that stays busy is not freed";
      EXPECT_EQ(fake->frees, 0u);
    } else {
      EXPECT_TRUE(fake->regions.empty());
      EXPECT_EQ(fake->cq_busy_reads, 0u);
    }
  }
}

TEST(DeviceClose, DeviceDisablesTheRingAndFreesEverything) {
  auto fake = std::make_shared<FakeState>();
  auto dev = open_fake(fake);
  auto c = dev->create_client();
  const PdId pd = c->alloc_pd();
  const Buffer b = c->alloc_buffer(4096);
  RegisterRequest r;
  r.pd = pd;
  r.buffer = b.id;
  r.length = 4096;
  const Stag stag = c->register_memory(r).stag;
  const StreamId s = c->create_stream(pd);
  c->configure_queue(s, 0, 2);
  c->post_recv(s, 0, b.id, 0, 100);
  dev.reset();  // the client is still alive
  EXPECT_TRUE(fake->regions.empty());
  EXPECT_EQ(fake->reg(kRegCQ_CTRL), 0u);
  ASSERT_EQ(fake->commands_with(kCmdSTREAM_TEARDOWN).size(), 1u);
  EXPECT_EQ(fake->commands_with(kCmdSTREAM_TEARDOWN)[0].args[0], s);
  ASSERT_EQ(fake->commands_with(kCmdSTAG_INVALIDATE).size(), 1u);
  EXPECT_EQ(fake->commands_with(kCmdSTAG_INVALIDATE)[0].args[0], stag >> 8);
  // The client outlived its device: every call says so, nothing crashes.
  EXPECT_ERRC(c->alloc_pd(), Errc::kState, "closed");
  std::vector<Completion> out;
  EXPECT_ERRC(c->poll(out), Errc::kState, "closed");
  c.reset();
}

TEST(DeviceObserver, ReadsButCannotCreateClients) {
  auto fake = std::make_shared<FakeState>();
  OpenOptions o;
  o.observer = true;
  auto dev = open_fake(fake, o);
  EXPECT_ERRC(dev->create_client(), Errc::kState, "observer cannot create clients");
  EXPECT_EQ(dev->read_reg(kRegID), kID_VALUE);
  fake->published.push_back("{\"owner\":1}");
  EXPECT_EQ(dev->published_state(), "{\"owner\":1}");
  EXPECT_NO_THROW(dev->counters());
  dev->sim()->inject(1, 7, {1, 2, 3});
  EXPECT_EQ(fake->injected.size(), 1u);
  dev.reset();
  EXPECT_TRUE(fake->writes.empty());  // an observer never writes the card
  EXPECT_TRUE(fake->regions.empty());
  EXPECT_EQ(fake->published.size(), 1u);
}

TEST(Device, ReadRegChecksTheOffset) {
  auto fake = std::make_shared<FakeState>();
  auto dev = open_fake(fake);
  EXPECT_EQ(dev->read_reg(kRegCAP_STREAMS), 8u);
  EXPECT_ERRC(dev->read_reg(2), Errc::kInvalidArgument, "offset 2");
  EXPECT_ERRC(dev->read_reg(kMMIO_BYTES), Errc::kInvalidArgument, "offset");
}

TEST(Device, InjectChecksItsArguments) {
  auto fake = std::make_shared<FakeState>();
  auto dev = open_fake(fake);
  EXPECT_ERRC(dev->sim()->inject(8, 0, {1}), Errc::kInvalidArgument, "stream 8");
  EXPECT_ERRC(dev->sim()->inject(0, 0, {}), Errc::kInvalidArgument, "empty");
  dev->sim()->sync();
  EXPECT_EQ(fake->syncs, 1u);
  EXPECT_EQ(dev->sim()->cycles(), 42u);
}

TEST(Device, CountersReadLowThenHighWord) {
  auto fake = std::make_shared<FakeState>();
  fake->counters[kRegCNT_SEGMENTS_LO] = 0x100000002ull;
  fake->counters[kRegCNT_BYTES_LO] = 3;
  fake->counters[kRegCNT_MESSAGES_LO] = 4;
  fake->counters[kRegCNT_DROPS_LO] = 5;
  fake->counters[kRegCNT_ACCESS_LO] = 6;
  fake->counters[kRegCNT_DUPLICATES_LO] = 7;
  fake->counters[kRegCNT_WRITE_ERRORS_LO] = 8;
  fake->counters[kRegCNT_READ_ERRORS_LO] = 9;
  const unsigned rows = static_cast<unsigned>(wire::kAllDdpErrors.size());
  for (unsigned r = 0; r < rows; ++r) fake->counters[reg_error_counter_lo(r)] = (std::uint64_t{r} << 32) | (100 + r);
  auto dev = open_fake(fake);
  fake->reads.clear();
  const Counters c = dev->counters();
  EXPECT_EQ(c.segments, 0x100000002ull);
  EXPECT_EQ(c.bytes, 3u);
  EXPECT_EQ(c.messages, 4u);
  EXPECT_EQ(c.drops, 5u);
  EXPECT_EQ(c.access, 6u);
  EXPECT_EQ(c.duplicates, 7u);
  EXPECT_EQ(c.write_errors, 8u);
  EXPECT_EQ(c.read_errors, 9u);
  ASSERT_EQ(c.errors.size(), rows);  // one per row of ddp_errors.def
  for (unsigned r = 0; r < rows; ++r) EXPECT_EQ(c.errors[r], (std::uint64_t{r} << 32) | (100 + r));
  // Reading LO latches HI (hw.def RC): every HI read directly follows its LO read. (The network side's
  // NET_CNT words are 32 bits: read alone.)
  std::vector<std::uint32_t> wide;
  for (const auto r : fake->reads)
    if (r < kRegNET_CNT0 || r >= reg_net_counter(kNET_COUNTERS)) wide.push_back(r);
  ASSERT_EQ(wide.size() % 2, 0u);
  for (std::size_t i = 0; i < wide.size(); i += 2) EXPECT_EQ(wide[i + 1], wide[i] + 4);
}

TEST(Device, StatsCountMmioAndCommands) {
  auto fake = std::make_shared<FakeState>();
  auto dev = open_fake(fake);
  const DriverStats s0 = dev->stats();
  EXPECT_EQ(s0.mmio_reads, fake->reads.size());
  EXPECT_EQ(s0.mmio_writes, fake->writes.size());
  EXPECT_EQ(s0.commands, 0u);
  auto c = dev->create_client();
  const PdId pd = c->alloc_pd();
  c->create_stream(pd);
  const DriverStats s1 = dev->stats();
  EXPECT_EQ(s1.commands, 1u);
  EXPECT_EQ(s1.mmio_reads, fake->reads.size());
  EXPECT_EQ(s1.mmio_writes, fake->writes.size());
}

// DeviceInfo::max_segment_bytes and the network side's capabilities are what the card reports
// (CAP_MAX_SEG_BYTES, CAP_NET_ASSOCS, CAP_NET_MAX_PACKET; tb/system/driver checks the first against what
// the simulated card takes).
TEST(DeviceOpen, ReportsTheLargestSegmentTheCardTakes) {
  auto fake = std::make_shared<FakeState>();
  auto dev = open_fake(fake);
  EXPECT_EQ(dev->info().max_segment_bytes, 4000u);
  EXPECT_EQ(dev->info().net_assocs, 0u);
  fake->net_assocs = rnic::hw::kNET_ASSOC_ENTRIES;
  fake->net_max_packet = rnic::hw::kNET_MAX_PACKET_BYTES;
  fake->max_seg_bytes = 18;  // the shortest that holds an untagged header
  auto dev2 = open_fake(fake);
  EXPECT_EQ(dev2->info().max_segment_bytes, 18u);
  EXPECT_EQ(dev2->info().net_assocs, rnic::hw::kNET_ASSOC_ENTRIES);
  EXPECT_EQ(dev2->info().net_max_packet, rnic::hw::kNET_MAX_PACKET_BYTES);
}

// Capabilities the driver cannot work with are a mismatch at open, before anything is written.
TEST(DeviceOpen, CapabilitiesOutOfContractAreMismatch) {
  for (const std::uint32_t bytes : {17u, 0x10000u}) {  // no room for an untagged header; not a 16-bit length
    auto fake = std::make_shared<FakeState>();
    fake->max_seg_bytes = bytes;
    EXPECT_ERRC(open_fake(fake), Errc::kMismatch, "CAP_MAX_SEG_BYTES");
    EXPECT_TRUE(fake->writes.empty());
  }
  auto fake = std::make_shared<FakeState>();
  fake->net_assocs = rnic::hw::kNET_ASSOC_ENTRIES * 2;  // a network side of another contract
  fake->net_max_packet = rnic::hw::kNET_MAX_PACKET_BYTES;
  EXPECT_ERRC(open_fake(fake), Errc::kMismatch, "CAP_NET_ASSOCS");
  EXPECT_TRUE(fake->writes.empty());
}

// inject/sync/cycles are the simulator's: a card has no SimControl, and require_sim says why.
TEST(SimControl, NoneOnACard) {
  auto fake = std::make_shared<FakeState>();
  fake->card = true;
  auto dev = open_fake(fake);
  EXPECT_EQ(dev->sim(), nullptr);
  EXPECT_ERRC(dev->require_sim(), Errc::kUnsupported, "fake:0 is a card");
  EXPECT_ERRC(dev->require_sim(), Errc::kUnsupported, "sim:<socket>");
  // Graceful teardown (RFC 5041 6.2) on a card: no simulator sync, the card drains on its own clock.
  auto c = dev->create_client();
  const StreamId s = c->create_stream(c->alloc_pd());
  c->teardown_stream(s, Teardown::kGraceful);
  EXPECT_EQ(fake->syncs, 0u);
  EXPECT_EQ(fake->commands_with(kCmdSTREAM_TEARDOWN).size(), 1u);
}

TEST(SimControl, OneForTheDevicesLifetimeOnTheSimulator) {
  auto fake = std::make_shared<FakeState>();
  auto dev = open_fake(fake);
  ASSERT_NE(dev->sim(), nullptr);
  EXPECT_EQ(dev->sim(), &dev->require_sim());
  auto c = dev->create_client();
  const StreamId s = c->create_stream(c->alloc_pd());
  c->teardown_stream(s, Teardown::kGraceful);
  EXPECT_EQ(fake->syncs, 1u);  // graceful teardown lets the simulator drain first
}

}  // namespace
}  // namespace rnic::test
