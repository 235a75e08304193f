// SPDX-License-Identifier: Apache-2.0
// rnic_lookup_stag at its interface (StagEntries 16): the read port answers the entry of STag[31:8]
// one cycle after the request; a clear makes the entry invalid at once; a set takes two cycles
// (wr_ready_o low in the second, wr_done_o with {index, key + 1} there) and the entry reads back;
// each set of an index issues the next key (mod 256), also across a reset; an index >= 16 never hits.
// Waveform with RNIC_FST=<file>.
#include "Vrnic_lookup_stag.h"
#include "rnic/tb/stage_sim.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

constexpr unsigned kEntries = 16;

struct Entry {
  bool rw = false, rr = false, bound = false;
  std::uint16_t pd = 0, stream = 0;
  std::uint64_t base = 0, len = 0, addr = 0;
};

class Stag : public ::testing::Test {
 protected:
  void SetUp() override {
    Idle();
    sim_.reset();
  }

  void Idle() {
    sim_->rd_valid_i = 0;
    sim_->rd_stag_i = 0;
    sim_->wr_valid_i = 0;
    sim_->wr_set_i = 0;
    sim_->wr_index_i = 0;
  }
  // The reset walk of rnic_rx_lookup: every entry cleared.
  void ClearAll() {
    for (unsigned i = 0; i < kEntries; ++i) Clear(i);
  }
  void Clear(unsigned index) {
    sim_->wr_valid_i = 1;
    sim_->wr_set_i = 0;
    sim_->wr_index_i = static_cast<std::uint8_t>(index);
    sim_.eval();
    EXPECT_EQ(sim_->wr_ready_o, 1U);
    sim_.tick();
    Idle();
    sim_.eval();
  }
  // STAG_WRITE: returns the STag of wr_done_o.
  // Drives a STAG_WRITE request of entry e at index (the first cycle; not clocked).
  void DriveSet(unsigned index, const Entry& e) {
    sim_->wr_valid_i = 1;
    sim_->wr_set_i = 1;
    sim_->wr_index_i = static_cast<std::uint8_t>(index);
    sim_->wr_remote_write_i = e.rw;
    sim_->wr_remote_read_i = e.rr;
    sim_->wr_bound_i = e.bound;
    sim_->wr_pd_i = e.pd;
    sim_->wr_stream_i = e.stream;
    sim_->wr_base_to_i = e.base;
    sim_->wr_length_i = e.len;
    sim_->wr_addr_i = e.addr;
  }
  std::uint32_t Set(unsigned index, const Entry& e) {
    DriveSet(index, e);
    sim_.eval();
    EXPECT_EQ(sim_->wr_ready_o, 1U);
    EXPECT_EQ(sim_->wr_done_o, 0U);
    sim_.tick();
    // Second cycle: the request is held by the unit; the inputs may change.
    Idle();
    sim_->wr_base_to_i = 0;
    sim_.eval();
    EXPECT_EQ(sim_->wr_ready_o, 0U);
    EXPECT_EQ(sim_->wr_done_o, 1U);
    const std::uint32_t stag = sim_->wr_stag_o;
    sim_.tick();
    sim_.eval();
    EXPECT_EQ(sim_->wr_done_o, 0U);
    EXPECT_EQ(sim_->wr_ready_o, 1U);
    return stag;
  }
  // Reads STag and checks the answer of the next cycle.
  void ExpectRead(std::uint32_t stag, bool hit, const Entry* e = nullptr, std::uint8_t key = 0) {
    sim_->rd_valid_i = 1;
    sim_->rd_stag_i = stag;
    sim_.eval();
    EXPECT_EQ(sim_->rd_ready_o, 1U);
    sim_.tick();
    sim_->rd_valid_i = 0;
    sim_->rd_stag_i = 0xFFFFFFFFU;  // the answer is registered: the next request does not change it
    sim_.eval();
    EXPECT_EQ(sim_->rsp_valid_o, 1U);
    EXPECT_EQ(sim_->rsp_hit_o, hit ? 1U : 0U) << "STag " << std::hex << stag;
    if (hit && e != nullptr) {
      EXPECT_EQ(sim_->rsp_key_o, key);
      EXPECT_EQ(sim_->rsp_pd_o, e->pd);
      EXPECT_EQ(sim_->rsp_stream_o, e->stream);
      EXPECT_EQ(sim_->rsp_bound_o, e->bound ? 1U : 0U);
      EXPECT_EQ(sim_->rsp_remote_write_o, e->rw ? 1U : 0U);
      EXPECT_EQ(sim_->rsp_remote_read_o, e->rr ? 1U : 0U);
      EXPECT_EQ(sim_->rsp_base_to_o, e->base);
      EXPECT_EQ(sim_->rsp_length_o, e->len);
      EXPECT_EQ(sim_->rsp_addr_o, e->addr);
    }
    sim_.tick();
    sim_.eval();
    EXPECT_EQ(sim_->rsp_valid_o, 0U);
  }

  rnic::tb::StageSim<Vrnic_lookup_stag> sim_;  // clock, reset, FST (RNIC_FST)
};

Entry Sample(unsigned i) {
  Entry e;
  e.rw = (i & 1U) != 0;
  e.rr = (i & 2U) != 0;
  e.bound = (i & 4U) != 0;
  e.pd = static_cast<std::uint16_t>(0x1000U + i);
  e.stream = static_cast<std::uint16_t>(0x20U + i);
  e.base = 0x1122334455660000ULL + i;
  e.len = 0x10000ULL * (i + 1);
  e.addr = 0xABCD000000000000ULL | (static_cast<std::uint64_t>(i) << 12);
  return e;
}

TEST_F(Stag, ClearedTableNeverHits) {
  ClearAll();
  for (unsigned i = 0; i < kEntries; ++i) ExpectRead((i << 8) | 0x5AU, false);
}

TEST_F(Stag, SetReadsBackWithItsKey) {
  ClearAll();
  const Entry e = Sample(5);
  const std::uint32_t stag = Set(5, e);
  EXPECT_EQ(stag >> 8, 5U);
  ExpectRead(stag, true, &e, static_cast<std::uint8_t>(stag & 0xFFU));
  // The key byte of the STag is not the table's business (validate compares it).
  ExpectRead((5U << 8) | ((stag + 1U) & 0xFFU), true, &e, static_cast<std::uint8_t>(stag & 0xFFU));
  // Other entries stay invalid.
  ExpectRead(4U << 8, false);
  ExpectRead(6U << 8, false);
}

TEST_F(Stag, OutOfRangeIndexNeverHits) {
  ClearAll();
  const Entry e = Sample(3);
  const std::uint32_t stag = Set(3, e);
  ExpectRead(stag, true, &e, static_cast<std::uint8_t>(stag & 0xFFU));
  // Index 16 + 3 and 0x10003 alias entry 3 in the RAM: the range check refuses them.
  ExpectRead(((16U + 3U) << 8) | (stag & 0xFFU), false);
  ExpectRead((0x10003U << 8) | (stag & 0xFFU), false);
}

TEST_F(Stag, ClearInvalidates) {
  ClearAll();
  const Entry e = Sample(9);
  const std::uint32_t stag = Set(9, e);
  ExpectRead(stag, true, &e, static_cast<std::uint8_t>(stag & 0xFFU));
  Clear(9);
  ExpectRead(stag, false);
}

TEST_F(Stag, KeysAdvanceAndSurviveReset) {
  ClearAll();
  const std::uint32_t s1 = Set(7, Sample(7));
  const std::uint32_t s2 = Set(7, Sample(8));
  EXPECT_EQ(s2 & 0xFFU, (s1 + 1U) & 0xFFU);
  const Entry e8 = Sample(8);
  ExpectRead(s2, true, &e8, static_cast<std::uint8_t>(s2 & 0xFFU));
  sim_.reset();
  ClearAll();
  ExpectRead(s2, false);
  const std::uint32_t s3 = Set(7, Sample(7));
  EXPECT_EQ(s3 & 0xFFU, (s2 + 1U) & 0xFFU) << "a reset must not reissue a key";
  // 256 sets wrap the key and never repeat it twice in a row.
  std::uint32_t prev = s3;
  for (int k = 0; k < 256; ++k) {
    const std::uint32_t s = Set(7, Sample(7));
    EXPECT_EQ(s & 0xFFU, (prev + 1U) & 0xFFU);
    prev = s;
  }
}

TEST_F(Stag, ReadEveryCycleWhileWriting) {
  ClearAll();
  const Entry e = Sample(2);
  // A read of the entry in the set's write cycle answers the entry before the write.
  DriveSet(2, e);
  sim_.tick();
  Idle();
  sim_->rd_valid_i = 1;
  sim_->rd_stag_i = 2U << 8;
  sim_.eval();
  ASSERT_EQ(sim_->wr_done_o, 1U);
  sim_.tick();
  sim_.eval();
  EXPECT_EQ(sim_->rsp_hit_o, 0U);
  sim_.tick();  // read again: the write is in now
  sim_.eval();
  EXPECT_EQ(sim_->rsp_hit_o, 1U);
  EXPECT_EQ(sim_->rsp_addr_o, e.addr);
}

}  // namespace
