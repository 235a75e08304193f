// SPDX-License-Identifier: Apache-2.0
// rnic_lookup_stream at its interface (NumStreams 8): a read of rd_stream_i is answered (rsp_state_o,
// rsp_pd_o) in the next cycle and only from the address of the cycle before (a new address does not
// change the answer); the answer holds the entry as written up to and including its own cycle: the
// write of the read's cycle and the write of the answer's cycle are forwarded, the later one winning;
// a write to another index is never forwarded (every pair of indexes, in either cycle); an index >= 8
// answers TORN_DOWN even when the entry it aliases in the RAM (index mod 8) is NORMAL and being
// written; entries survive a reset; and a random run (a read and a write every cycle, 200000 cycles)
// against a reference model of the table. Waveform with RNIC_FST=<file>.
#include "Vrnic_lookup_stream.h"
#include "rnic/tb/stage_sim.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <random>

#include "rnic/hw/hw.hpp"
#include "rnic/tb/seed.hpp"

namespace {

constexpr unsigned kStreams = STREAM_ENTRIES;
constexpr std::uint8_t kNormal = static_cast<std::uint8_t>(rnic::hw::kSTREAM_NORMAL);
constexpr std::uint8_t kError = static_cast<std::uint8_t>(rnic::hw::kSTREAM_ERROR);
constexpr std::uint8_t kTornDown = static_cast<std::uint8_t>(rnic::hw::kSTREAM_TORN_DOWN);

struct Entry {
  std::uint8_t state = 0;
  std::uint16_t pd = 0;
};

struct Write {
  unsigned stream = 0;
  Entry e;
};

class Stream : public ::testing::Test {
 protected:
  void SetUp() override {
    Drive(0, std::nullopt);
    sim_.reset();
  }

  // The inputs of one cycle: the read address and at most one write. Settles the outputs (the answer
  // of the cycle before's read, with this cycle's write forwarded).
  void Drive(unsigned rd_stream, const std::optional<Write>& wr) {
    sim_->rd_stream_i = static_cast<std::uint16_t>(rd_stream);
    sim_->wr_valid_i = wr.has_value() ? 1 : 0;
    sim_->wr_stream_i = static_cast<std::uint16_t>(wr.has_value() ? wr->stream : 0U);
    sim_->wr_state_i = wr.has_value() ? wr->e.state : 0;
    sim_->wr_pd_i = wr.has_value() ? wr->e.pd : 0;
    sim_.eval();
  }
  // The reset walk of rnic_rx_lookup: every entry written (here: a distinct entry each).
  void WriteAll() {
    for (unsigned i = 0; i < kStreams; ++i) WriteOne(i, Initial(i));
    Drive(0, std::nullopt);
  }
  void WriteOne(unsigned stream, const Entry& e) {
    Drive(0, Write{stream, e});
    sim_.tick();
    Drive(0, std::nullopt);
  }
  static Entry Initial(unsigned i) {
    return Entry{(i % 2 == 0) ? kNormal : kError, static_cast<std::uint16_t>(0x1100U + i)};
  }
  // The answer settled now (after Drive of the answer's cycle).
  void ExpectAnswer(const Entry& e, const char* what) {
    EXPECT_EQ(sim_->rsp_state_o, e.state) << what;
    EXPECT_EQ(sim_->rsp_pd_o, e.pd) << what;
  }
  // A read with no writes around it: answered the next cycle.
  void ExpectRead(unsigned stream, const Entry& e) {
    Drive(stream, std::nullopt);
    sim_.tick();
    Drive(0, std::nullopt);
    EXPECT_EQ(sim_->rsp_state_o, e.state) << "stream " << stream;
    EXPECT_EQ(sim_->rsp_pd_o, e.pd) << "stream " << stream;
  }

  rnic::tb::StageSim<Vrnic_lookup_stream> sim_;  // clock, reset, FST (RNIC_FST)
};

TEST_F(Stream, ReadIsAnsweredNextCycle) {
  WriteAll();
  for (unsigned i = 0; i < kStreams; ++i) ExpectRead(i, Initial(i));
  // One read per cycle, every cycle: each answer is the read of the cycle before, and a new read
  // address in the answer's cycle does not change the answer.
  Drive(5, std::nullopt);
  sim_.tick();
  Drive(2, std::nullopt);
  ExpectAnswer(Initial(5), "read 5, answered in the next cycle");
  sim_.tick();
  Drive(7, std::nullopt);
  ExpectAnswer(Initial(2), "read 2 back to back");
  Drive(1, std::nullopt);
  ExpectAnswer(Initial(2), "a changed read address does not change this cycle's answer");
  sim_.tick();
  Drive(1, std::nullopt);
  ExpectAnswer(Initial(1), "read 1");
  sim_.tick();
  Drive(1, std::nullopt);
  ExpectAnswer(Initial(1), "read 1 again");
}

TEST_F(Stream, WriteBeforeTheReadIsInTheRam) {
  WriteAll();
  const Entry e{kTornDown, 0xBEEF};
  WriteOne(3, e);  // the cycle before the read
  ExpectRead(3, e);
  ExpectRead(2, Initial(2));
  ExpectRead(4, Initial(4));
}

TEST_F(Stream, WriteInTheReadsCycleIsForwarded) {
  WriteAll();
  const Entry e{kTornDown, 0xA5A5};
  Drive(3, Write{3, e});  // the RAM's read of this cycle misses this write
  sim_.tick();
  Drive(0, std::nullopt);
  ExpectAnswer(e, "the write of the read's cycle");
  sim_.tick();
  Drive(0, std::nullopt);
  ExpectRead(3, e);  // and it is in the RAM
}

TEST_F(Stream, WriteInTheAnswersCycleIsForwarded) {
  WriteAll();
  const Entry e{kError, 0x5A5A};
  Drive(6, std::nullopt);
  sim_.tick();
  Drive(0, Write{6, e});
  ExpectAnswer(e, "the write of the answer's cycle");
  sim_.tick();
  Drive(0, std::nullopt);
  ExpectRead(6, e);
}

TEST_F(Stream, BothWritesForwardedTheLaterWins) {
  WriteAll();
  const Entry first{kError, 0x1111};
  const Entry second{kTornDown, 0x2222};
  Drive(4, Write{4, first});
  sim_.tick();
  Drive(0, Write{4, second});
  ExpectAnswer(second, "the write of the answer's cycle wins over the one of the read's cycle");
  sim_.tick();
  Drive(0, std::nullopt);
  ExpectRead(4, second);
  // The same with the states swapped (each field from the later write, not a merge).
  const Entry third{kNormal, 0x3333};
  Drive(4, Write{4, Entry{kTornDown, 0xFFFF}});
  sim_.tick();
  Drive(0, Write{4, third});
  ExpectAnswer(third, "later write (NORMAL)");
  sim_.tick();
  Drive(0, std::nullopt);
  ExpectRead(4, third);
  // Three writes around a read pipelined every cycle: each answer has the latest of its two windows.
  Drive(1, Write{1, Entry{kError, 0x0101}});
  sim_.tick();
  Drive(1, Write{1, Entry{kNormal, 0x0102}});
  ExpectAnswer(Entry{kNormal, 0x0102}, "read 1 #1");
  sim_.tick();
  Drive(1, Write{1, Entry{kTornDown, 0x0103}});
  ExpectAnswer(Entry{kTornDown, 0x0103}, "read 1 #2");
  sim_.tick();
  Drive(0, std::nullopt);
  ExpectAnswer(Entry{kTornDown, 0x0103}, "read 1 #3");
}

TEST_F(Stream, WriteToAnotherIndexIsNotForwarded) {
  WriteAll();
  std::array<Entry, kStreams> ref{};
  for (unsigned i = 0; i < kStreams; ++i) ref[i] = Initial(i);
  std::uint16_t pd = 0x7000;
  // Every pair (read r, write w != r), the write in the read's cycle, then in the answer's cycle.
  for (unsigned r = 0; r < kStreams; ++r) {
    for (unsigned w = 0; w < kStreams; ++w) {
      if (w == r) continue;
      const Entry a{kTornDown, pd++};
      Drive(r, Write{w, a});
      ref[w] = a;
      sim_.tick();
      Drive(0, std::nullopt);
      EXPECT_EQ(sim_->rsp_state_o, ref[r].state) << "read " << r << ", write " << w << " in its cycle";
      EXPECT_EQ(sim_->rsp_pd_o, ref[r].pd) << "read " << r << ", write " << w << " in its cycle";
      sim_.tick();
      const Entry b{kError, pd++};
      Drive(r, std::nullopt);
      sim_.tick();
      Drive(0, Write{w, b});
      ref[w] = b;
      EXPECT_EQ(sim_->rsp_state_o, ref[r].state) << "read " << r << ", write " << w << " in the answer's";
      EXPECT_EQ(sim_->rsp_pd_o, ref[r].pd) << "read " << r << ", write " << w << " in the answer's";
      sim_.tick();
      Drive(0, std::nullopt);
    }
  }
  // The writes did land where they were meant to.
  for (unsigned i = 0; i < kStreams; ++i) ExpectRead(i, ref[i]);
  // The write of the read's cycle to the index of the next read (not the read's own): read 0 then
  // read 6 with a write to 6 in the first cycle: the answer of 0 is 0's entry, then 6's new one.
  Drive(0, Write{6, Entry{kNormal, 0x0606}});
  sim_.tick();
  Drive(6, std::nullopt);
  ExpectAnswer(ref[0], "write to the next read's index");
  sim_.tick();
  Drive(0, std::nullopt);
  ExpectAnswer(Entry{kNormal, 0x0606}, "the next read");
}

TEST_F(Stream, OutOfRangeIndexAnswersTornDown) {
  WriteAll();
  WriteOne(3, Entry{kNormal, 0x0333});
  WriteOne(0, Entry{kNormal, 0x0300});
  WriteOne(7, Entry{kNormal, 0x0377});
  ExpectRead(3, Entry{kNormal, 0x0333});
  // Indexes that alias entries 3, 0 and 7 (NORMAL) in the RAM. The PD of an out-of-range answer is
  // not specified: only the state is checked.
  for (const unsigned idx : {kStreams + 3U, kStreams, 0x8003U, 0x0103U, 0xFFF8U, 0xFFFFU, 2 * kStreams - 1}) {
    Drive(idx, std::nullopt);
    sim_.tick();
    Drive(3, std::nullopt);  // the next read is in range: the check is on the answered index
    EXPECT_EQ(sim_->rsp_state_o, kTornDown) << "index " << idx;
    sim_.tick();
    Drive(0, std::nullopt);
    EXPECT_EQ(sim_->rsp_state_o, kNormal) << "in-range read after index " << idx;
  }
  // Forwarded NORMAL writes to the aliased entry, in both cycles, do not make it NORMAL.
  Drive(kStreams + 3U, Write{3, Entry{kNormal, 0x0444}});
  sim_.tick();
  Drive(0, std::nullopt);
  EXPECT_EQ(sim_->rsp_state_o, kTornDown) << "write of the read's cycle to the aliased entry";
  Drive(kStreams + 3U, std::nullopt);
  sim_.tick();
  Drive(0, Write{3, Entry{kNormal, 0x0555}});
  EXPECT_EQ(sim_->rsp_state_o, kTornDown) << "write of the answer's cycle to the aliased entry";
  Drive(kStreams + 3U, Write{3, Entry{kNormal, 0x0666}});
  sim_.tick();
  Drive(0, Write{3, Entry{kNormal, 0x0777}});
  EXPECT_EQ(sim_->rsp_state_o, kTornDown) << "both writes to the aliased entry";
  sim_.tick();
  Drive(0, std::nullopt);
  ExpectRead(3, Entry{kNormal, 0x0777});
}

TEST_F(Stream, EntriesSurviveReset) {
  WriteAll();
  sim_.reset();
  for (unsigned i = 0; i < kStreams; ++i) ExpectRead(i, Initial(i));
  // A write and a read in the cycle after reset: forwarded as usual.
  const Entry e{kTornDown, 0x0F0F};
  Drive(2, Write{2, e});
  sim_.tick();
  Drive(0, std::nullopt);
  ExpectAnswer(e, "write of the read's cycle right after reset");
}

// The reference: the table as written up to and including the current cycle. Every cycle a random
// read (mostly in range, some beyond, biased towards the indexes being written) and most cycles a
// write; each answer is checked against the reference after the answer cycle's write is applied.
TEST_F(Stream, RandomAgainstReferenceModel) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  std::array<Entry, kStreams> ref{};
  WriteAll();
  for (unsigned i = 0; i < kStreams; ++i) ref[i] = Initial(i);

  auto chance = [&rng](unsigned percent) { return rng() % 100 < percent; };
  auto random_entry = [&rng]() {
    return Entry{static_cast<std::uint8_t>(rng() % 3), static_cast<std::uint16_t>(rng())};
  };

  constexpr int kCycles = 200000;
  unsigned prev_read = 0;
  bool prev_valid = false;
  std::optional<Write> prev_write;
  unsigned fwd_read_cycle = 0, fwd_answer_cycle = 0, fwd_both = 0, out_of_range = 0;
  for (int cycle = 0; cycle < kCycles && !HasFailure(); ++cycle) {
    std::optional<Write> wr;
    if (chance(70)) {
      const unsigned idx = chance(40) ? prev_read % kStreams : static_cast<unsigned>(rng() % kStreams);
      wr = Write{idx, random_entry()};
    }
    unsigned rd = 0;
    if (chance(5)) {
      rd = kStreams + static_cast<unsigned>(rng() % (0x10000U - kStreams));
    } else if (wr.has_value() && chance(30)) {
      rd = wr->stream;
    } else {
      rd = static_cast<unsigned>(rng() % kStreams);
    }
    Drive(rd, wr);
    if (wr.has_value()) ref[wr->stream] = wr->e;  // the table as written up to this cycle
    if (prev_valid) {
      const unsigned idx = prev_read;
      if (idx >= kStreams) {
        ++out_of_range;
        ASSERT_EQ(sim_->rsp_state_o, kTornDown) << "cycle " << cycle << " index " << idx;
      } else {
        const bool a = prev_write.has_value() && prev_write->stream == idx;
        const bool b = wr.has_value() && wr->stream == idx;
        fwd_read_cycle += a ? 1U : 0U;
        fwd_answer_cycle += b ? 1U : 0U;
        fwd_both += (a && b) ? 1U : 0U;
        ASSERT_EQ(sim_->rsp_state_o, ref[idx].state) << "cycle " << cycle << " index " << idx;
        ASSERT_EQ(sim_->rsp_pd_o, ref[idx].pd) << "cycle " << cycle << " index " << idx;
      }
    }
    sim_.tick();
    prev_read = rd;
    prev_valid = true;
    prev_write = wr;
  }
  // The run covered the forwarding paths and the range check.
  EXPECT_GT(fwd_read_cycle, 5000U);
  EXPECT_GT(fwd_answer_cycle, 5000U);
  EXPECT_GT(fwd_both, 1000U);
  EXPECT_GT(out_of_range, 2000U);
}

}  // namespace
