// SPDX-License-Identifier: Apache-2.0
// rnic_regs tests (label rtl): register map against hw.hpp, AXI4-Lite protocol with random AW/W
// order and delays and random bready/rready, commands (busy, args, done/refused, CMD_RESULT, the
// fenced commands STAG_INVALIDATE / STREAM_TEARDOWN (fence_done) and QUEUE_CONFIG (fence_done and
// cmd_done in any order)), doorbells (decode of every queue, backpressure), CQ registers, 64-bit
// counters against a C++ model (simultaneous events, carry into the high word, LO/HI latch),
// including the AXI error counters CNT_WRITE_ERRORS / CNT_READ_ERRORS and deliver's order errors
// (RFC 5041 7.2 type 2 code 3, counted in the UntaggedMsnRange row with validate's).
//
// Compiled once per parameter set (REGS_* defines, see CMakeLists.txt). Random tests print their
// seed; RNIC_TEST_SEED=<n> reproduces, RNIC_FST=<file> dumps a waveform (run one test at a time).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "regs_tb.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#include "Vrnic_regs___024root.h"  // internal state (built with --public-flat-rw)
#pragma GCC diagnostic pop
#include "rnic/hw/hw.hpp"
#include "rnic/wire/ddp_errors.hpp"

namespace rnic::tb::regs {
namespace {

namespace hw = rnic::hw;

constexpr std::uint32_t kDataWidth = REGS_DATA_WIDTH;
constexpr std::uint32_t kStagEntries = REGS_STAG_ENTRIES;
constexpr std::uint32_t kNumStreams = REGS_NUM_STREAMS;
constexpr std::uint32_t kNumQns = REGS_NUM_QNS;
constexpr std::uint32_t kSsnWindow = REGS_SSN_WINDOW;
constexpr std::uint32_t kBuildId = REGS_BUILD_ID;
constexpr std::uint32_t kMaxSegBytes = REGS_MAX_SEG_BYTES;
constexpr std::uint32_t kNetAssocs = REGS_NET_ASSOCS;
constexpr std::uint32_t kNetMaxPacket = REGS_NET_MAX_PACKET;
constexpr std::uint32_t kNumDb = kNumStreams * kNumQns;
constexpr unsigned kNumErrors = static_cast<unsigned>(rnic::wire::kAllDdpErrors.size());
constexpr unsigned kNumNamed = 8;  // named counters before the error-table rows
constexpr unsigned kNumCounters = kNumNamed + kNumErrors;

constexpr std::uint16_t A(std::uint32_t addr) { return static_cast<std::uint16_t>(addr); }
constexpr std::uint16_t arg_reg(unsigned i) { return A(hw::reg_cmd_arg(i)); }
// DB_QUEUE's value for doorbell index q (queue q of the test model: stream q / CAP_QNS, QN q % CAP_QNS).
constexpr std::uint32_t db_sel(std::uint32_t q) { return hw::db_queue(q / kNumQns, q % kNumQns); }

// Counter i of the test model: the eight named ones, then one per error-table row.
std::uint16_t cnt_lo(unsigned i) {
  static const std::array<std::uint32_t, kNumNamed> named = {
      hw::kRegCNT_SEGMENTS_LO, hw::kRegCNT_BYTES_LO,      hw::kRegCNT_MESSAGES_LO,     hw::kRegCNT_DROPS_LO,
      hw::kRegCNT_ACCESS_LO,   hw::kRegCNT_DUPLICATES_LO, hw::kRegCNT_WRITE_ERRORS_LO, hw::kRegCNT_READ_ERRORS_LO};
  return A(i < kNumNamed ? named[i] : hw::reg_error_counter_lo(i - kNumNamed));
}
std::uint16_t cnt_hi(unsigned i) {
  static const std::array<std::uint32_t, kNumNamed> named = {
      hw::kRegCNT_SEGMENTS_HI, hw::kRegCNT_BYTES_HI,      hw::kRegCNT_MESSAGES_HI,     hw::kRegCNT_DROPS_HI,
      hw::kRegCNT_ACCESS_HI,   hw::kRegCNT_DUPLICATES_HI, hw::kRegCNT_WRITE_ERRORS_HI, hw::kRegCNT_READ_ERRORS_HI};
  return A(i < kNumNamed ? named[i] : hw::reg_error_counter_lo(i - kNumNamed) + 4);
}
constexpr unsigned kCntSegments = 0, kCntBytes = 1, kCntMessages = 2, kCntDrops = 3, kCntAccess = 4, kCntDuplicates = 5,
                   kCntWriteErrors = 6, kCntReadErrors = 7, kCntError0 = kNumNamed;

// The error-table row of RFC 5041 7.2 (2, 0x03) "Invalid MSN - MSN range is not valid": where
// deliver's order errors (order_err_event_i) count.
constexpr unsigned msn_range_row() {
  unsigned i = 0;
  while (i < kNumErrors && rnic::wire::kAllDdpErrors[i] != rnic::wire::DdpError::kUntaggedMsnRange) ++i;
  return i;
}
constexpr unsigned kMsnRangeRow = msn_range_row();
static_assert(kMsnRangeRow < kNumErrors);
constexpr unsigned kCntMsnRange = kCntError0 + kMsnRangeRow;

// What a command waits for before busy clears (a refused command completes on cmd_done at once).
enum class Wait { kDone, kFence, kBoth };
Wait wait_of(std::uint8_t op) {
  if (op == hw::kCmdSTAG_INVALIDATE || op == hw::kCmdSTREAM_TEARDOWN) return Wait::kFence;
  if (op == hw::kCmdQUEUE_CONFIG) return Wait::kBoth;
  return Wait::kDone;
}

// RW registers and the bits they keep.
struct RwReg {
  std::uint16_t addr;
  std::uint32_t mask;
};
std::vector<RwReg> rw_regs() {
  std::vector<RwReg> v;
  for (unsigned i = 0; i < hw::kCMD_ARGS; ++i) v.push_back({arg_reg(i), 0xFFFFFFFFu});
  v.push_back({A(hw::kRegCQ_BASE_LO), 0xFFFFFFFFu});
  v.push_back({A(hw::kRegCQ_BASE_HI), 0xFFFFFFFFu});
  v.push_back({A(hw::kRegCQ_LOG2_SIZE), hw::kCQ_LOG2_SIZE_LOG2.mask()});
  v.push_back({A(hw::kRegCQ_CTRL), hw::kCQ_CTRL_ENABLE.mask()});
  v.push_back({A(hw::kRegCQ_CONS), 0xFFFFFFFFu});
  v.push_back({A(hw::kRegDB_QUEUE), hw::kDbQueueBits});
  return v;
}

enum class Kind { kUnmapped, kConst, kCmd, kCmdStatus, kCmdResult, kRw, kCqProd, kCounter, kDoorbell };

// What the map says about word address a.
Kind classify(std::uint32_t a) {
  const std::array<std::uint32_t, 11> consts = {hw::kRegID,
                                                hw::kRegVERSION,
                                                hw::kRegBUILD_ID,
                                                hw::kRegCAP_DATA_WIDTH,
                                                hw::kRegCAP_STAGS,
                                                hw::kRegCAP_STREAMS,
                                                hw::kRegCAP_QNS,
                                                hw::kRegCAP_SSN_WINDOW,
                                                hw::kRegCAP_MAX_SEG_BYTES,
                                                hw::kRegCAP_NET_ASSOCS,
                                                hw::kRegCAP_NET_MAX_PACKET};
  if (std::find(consts.begin(), consts.end(), a) != consts.end()) return Kind::kConst;
  if (a == hw::kRegCMD) return Kind::kCmd;
  if (a == hw::kRegCMD_STATUS) return Kind::kCmdStatus;
  if (a == hw::kRegCMD_RESULT) return Kind::kCmdResult;
  if (a == hw::kRegCQ_PROD) return Kind::kCqProd;
  for (const RwReg& r : rw_regs()) {
    if (r.addr == a) return Kind::kRw;
  }
  for (unsigned i = 0; i < kNumCounters; ++i) {
    if (a == cnt_lo(i) || a == cnt_hi(i)) return Kind::kCounter;
  }
  if (a == hw::kRegDB_PROD) return Kind::kDoorbell;
  return Kind::kUnmapped;
}

std::uint32_t const_value(std::uint32_t a) {
  switch (a) {
    case hw::kRegID:
      return hw::kID_VALUE;
    case hw::kRegVERSION:
      return hw::kVERSION_VALUE;
    case hw::kRegBUILD_ID:
      return kBuildId;
    case hw::kRegCAP_DATA_WIDTH:
      return kDataWidth;
    case hw::kRegCAP_STAGS:
      return kStagEntries;
    case hw::kRegCAP_STREAMS:
      return kNumStreams;
    case hw::kRegCAP_QNS:
      return kNumQns;
    case hw::kRegCAP_SSN_WINDOW:
      return kSsnWindow;
    case hw::kRegCAP_MAX_SEG_BYTES:
      return kMaxSegBytes;
    case hw::kRegCAP_NET_ASSOCS:
      return kNetAssocs;
    case hw::kRegCAP_NET_MAX_PACKET:
      return kNetMaxPacket;
    default:
      return 0xDEADBEEF;
  }
}

std::uint32_t strb_mask(std::uint8_t strb) {
  std::uint32_t m = 0;
  for (unsigned b = 0; b < 4; ++b) {
    if ((strb >> b) & 1u) m |= 0xFFu << (8 * b);
  }
  return m;
}

struct Status {
  bool busy;
  bool refused;
  std::uint8_t op;
};
Status decode_status(std::uint32_t v) {
  return {hw::kCMD_STATUS_BUSY.get(v) != 0, hw::kCMD_STATUS_REFUSED.get(v) != 0,
          static_cast<std::uint8_t>(hw::kCMD_STATUS_OP.get(v))};
}

class Regs : public ::testing::Test {
 protected:
  std::uint64_t seed_ = random_test_seed();
  Tb tb_{seed_};

  Status status() { return decode_status(tb_.rd(A(hw::kRegCMD_STATUS))); }
  std::uint32_t cmd_result() { return tb_.rd(A(hw::kRegCMD_RESULT)); }

  // Randomizes the master's timing (both AW-first and W-first orders, stalls on B and R).
  void random_timing() {
    tb_.timing.max_aw_delay = static_cast<unsigned>(tb_.uniform(0, 4));
    tb_.timing.max_w_delay = static_cast<unsigned>(tb_.uniform(0, 4));
    tb_.timing.max_ar_delay = static_cast<unsigned>(tb_.uniform(0, 3));
    tb_.timing.bready_p = 0.2 + 0.8 * static_cast<double>(tb_.uniform(0, 100)) / 100.0;
    tb_.timing.rready_p = 0.2 + 0.8 * static_cast<double>(tb_.uniform(0, 100)) / 100.0;
  }
  void fast_timing() { tb_.timing = AxiTiming{0, 0, 0, 1.0, 1.0}; }

  void wait_cmds(std::size_t n, unsigned max_cycles = 500) {
    unsigned k = 0;
    while (tb_.cmds.size() < n && k++ < max_cycles) tb_.step();
    ASSERT_EQ(tb_.cmds.size(), n) << "command handshake missing";
  }
};

// ---- identification ---------------------------------------------------------------------------

TEST_F(Regs, IdentificationAndCapabilities) {
  random_timing();
  EXPECT_EQ(tb_.rd(A(hw::kRegID)), hw::kID_VALUE);
  EXPECT_EQ(tb_.rd(A(hw::kRegVERSION)), hw::kVERSION_VALUE);
  EXPECT_EQ(tb_.rd(A(hw::kRegBUILD_ID)), kBuildId);
  EXPECT_EQ(tb_.rd(A(hw::kRegCAP_DATA_WIDTH)), kDataWidth);
  EXPECT_EQ(tb_.rd(A(hw::kRegCAP_STAGS)), kStagEntries);
  EXPECT_EQ(tb_.rd(A(hw::kRegCAP_STREAMS)), kNumStreams);
  EXPECT_EQ(tb_.rd(A(hw::kRegCAP_QNS)), kNumQns);
  EXPECT_EQ(tb_.rd(A(hw::kRegCAP_SSN_WINDOW)), kSsnWindow);
  EXPECT_EQ(tb_.rd(A(hw::kRegCAP_MAX_SEG_BYTES)), kMaxSegBytes);
  EXPECT_EQ(tb_.rd(A(hw::kRegCAP_NET_ASSOCS)), kNetAssocs);
  EXPECT_EQ(tb_.rd(A(hw::kRegCAP_NET_MAX_PACKET)), kNetMaxPacket);
  // addr[1:0] do not select anything: every byte address of a word reads the word.
  for (std::uint16_t lsb = 1; lsb < 4; ++lsb) {
    EXPECT_EQ(tb_.rd(static_cast<std::uint16_t>(hw::kRegID + lsb)), hw::kID_VALUE);
    EXPECT_EQ(tb_.rd(static_cast<std::uint16_t>(hw::kRegCAP_QNS + lsb)), kNumQns);
  }
}

// Every field of hw.def (RNIC_BITS rows) of this block's registers reads its reset value after reset,
// a write-only one 0; the bits no field names read 0 (docs/registers.md). Registers are found by name
// among the RNIC_REG / RNIC_REG_ARRAY rows; the network side's window is rnic_net_regs' (netregs_test).
TEST_F(Regs, FieldsReadTheirResetValues) {
  random_timing();
  std::map<std::string, std::uint32_t> offset;
#define RNIC_REG(name, off, access, desc) offset[#name] = off;
#define RNIC_REG_ARRAY(name, off, access, count, desc) \
  for (unsigned i = 0; i < hw::k##count; ++i) offset[#name + std::to_string(i)] = (off) + 4 * i;
#include "rnic/hw/hw.def"
  struct Row {
    const char* reg;
    const char* name;
    hw::Field f;
    std::string access;
  };
  const Row rows[] = {
#define RNIC_BITS(reg, name, lsb, bits, access, reset, desc) {#reg, #name, {lsb, bits, reset}, #access},
#include "rnic/hw/hw.def"
  };
  std::map<std::uint32_t, std::uint32_t> named;  // register -> the bits its fields name
  unsigned checked = 0;
  for (const Row& r : rows) {
    ASSERT_TRUE(offset.count(r.reg)) << r.reg;
    const std::uint32_t a = offset[r.reg];
    if (a >= hw::kRegNET_ASSOC_ARG0 && a < hw::kRegNET_ASSOC_ARG0 + 0x100) continue;
    named[a] |= r.f.mask();
    const std::uint32_t v = tb_.rd(A(a));
    EXPECT_EQ(r.f.get(v), r.access == "WO" ? 0u : r.f.reset) << r.reg << "." << r.name << " read 0x" << std::hex << v;
    ++checked;
  }
  for (const auto& [a, mask] : named) EXPECT_EQ(tb_.rd(A(a)) & ~mask, 0u) << "unnamed bits of 0x" << std::hex << a;
  EXPECT_GE(checked, 10u);
}

// ---- RW registers, wstrb, concurrent reads and writes -------------------------------------------

TEST_F(Regs, RwRegistersHonourWstrbUnderRandomTiming) {
  const std::vector<RwReg> regs = rw_regs();
  std::vector<std::uint32_t> model(regs.size(), 0);
  auto idx_of = [&](std::uint16_t a) {
    for (std::size_t i = 0; i < regs.size(); ++i) {
      if (regs[i].addr == a) return i;
    }
    return regs.size();
  };
  const std::size_t i_ctrl = idx_of(A(hw::kRegCQ_CTRL));
  const std::size_t i_cons = idx_of(A(hw::kRegCQ_CONS));
  const std::size_t i_log2 = idx_of(A(hw::kRegCQ_LOG2_SIZE));
  const std::size_t i_base_lo = idx_of(A(hw::kRegCQ_BASE_LO));
  const std::size_t i_base_hi = idx_of(A(hw::kRegCQ_BASE_HI));
  std::size_t expected_resets = 0;

  for (const RwReg& r : regs) EXPECT_EQ(tb_.rd(r.addr), 0u) << std::hex << r.addr;

  for (int it = 0; it < 3000; ++it) {
    if (it % 100 == 0) random_timing();
    const std::size_t wi = static_cast<std::size_t>(tb_.uniform(0, regs.size() - 1));
    const std::uint32_t data = tb_.rand32();
    const std::uint8_t strb = static_cast<std::uint8_t>(tb_.uniform(0, 15));
    tb_.start_write(regs[wi].addr, data, strb);
    // A concurrent read of a register this write does not change.
    std::size_t ri = regs.size();
    if (tb_.chance(0.7)) {
      ri = static_cast<std::size_t>(tb_.uniform(0, regs.size() - 1));
      if (ri == wi || (wi == i_ctrl && ri == i_cons)) ri = regs.size();
    }
    if (ri < regs.size()) tb_.start_read(regs[ri].addr);
    tb_.wait_idle();
    EXPECT_EQ(tb_.write_result().resp, kOkay);
    if (ri < regs.size()) {
      EXPECT_EQ(tb_.read_result().resp, kOkay);
      EXPECT_EQ(tb_.read_result().data, model[ri]) << "reg 0x" << std::hex << regs[ri].addr;
    }
    const std::uint32_t m = strb_mask(strb) & regs[wi].mask;
    if (wi == i_log2) {
      // Taken only while the ring is disabled, and only 1..16 (hw.def CQ_LOG2_SIZE).
      const std::uint32_t v = data & 0x1Fu;
      if ((strb & 1u) && model[i_ctrl] == 0 && v >= 1 && v <= 16) model[wi] = v;
    } else if ((wi != i_base_lo && wi != i_base_hi) || model[i_ctrl] == 0) {
      model[wi] = (model[wi] & ~m) | (data & m);
    }
    if (wi == i_ctrl && (strb & 1u) && (data & 1u)) {
      model[i_cons] = 0;
      ++expected_resets;
    }
    const Vrnic_regs& d = tb_.dut();
    EXPECT_EQ(d.cq_base_o,
              (std::uint64_t{model[idx_of(A(hw::kRegCQ_BASE_HI))]} << 32) | model[idx_of(A(hw::kRegCQ_BASE_LO))]);
    EXPECT_EQ(d.cq_log2_o, model[idx_of(A(hw::kRegCQ_LOG2_SIZE))]);
    EXPECT_EQ(d.cq_enable_o, model[i_ctrl]);
    EXPECT_EQ(d.cq_cons_o, model[i_cons]);
    if (::testing::Test::HasFailure()) break;
  }
  for (std::size_t i = 0; i < regs.size(); ++i) {
    EXPECT_EQ(tb_.rd(regs[i].addr), model[i]) << "reg 0x" << std::hex << regs[i].addr;
  }
  // One single-cycle cq_reset pulse per CQ_CTRL write with bit 0 set.
  EXPECT_EQ(tb_.cq_reset_cycles.size(), expected_resets);
  EXPECT_TRUE(tb_.cmds.empty());
  EXPECT_TRUE(tb_.dbs.empty());
}

TEST_F(Regs, ReadOnlyAndCounterRegistersIgnoreWrites) {
  random_timing();
  tb_.dut().cq_prod_i = 0x13572468u;
  std::vector<std::uint16_t> ro = {
      A(hw::kRegID),         A(hw::kRegVERSION),     A(hw::kRegBUILD_ID), A(hw::kRegCAP_DATA_WIDTH),
      A(hw::kRegCAP_STAGS),  A(hw::kRegCAP_STREAMS), A(hw::kRegCAP_QNS),  A(hw::kRegCAP_SSN_WINDOW),
      A(hw::kRegCMD_STATUS), A(hw::kRegCMD_RESULT),  A(hw::kRegCQ_PROD)};
  for (unsigned i = 0; i < kNumCounters; ++i) {
    ro.push_back(cnt_lo(i));
    ro.push_back(cnt_hi(i));
  }
  for (std::uint16_t a : ro) {
    const std::uint32_t before = tb_.rd(a);
    EXPECT_EQ(tb_.write(a, 0xFFFFFFFFu).resp, kOkay) << std::hex << a;
    EXPECT_EQ(tb_.rd(a), before) << std::hex << a;
  }
  EXPECT_EQ(tb_.rd(A(hw::kRegCQ_PROD)), 0x13572468u);
  EXPECT_EQ(tb_.rd(A(hw::kRegCMD)), 0u);  // write-only
  EXPECT_TRUE(tb_.cmds.empty());
}

// ---- address map sweep -------------------------------------------------------------------------

TEST_F(Regs, EveryWordAddressDecodesAndUnmappedGivesSlverr) {
  fast_timing();
  // Random contents in every RW register, so a stray write shows.
  std::vector<RwReg> regs = rw_regs();
  std::vector<std::uint32_t> model;
  for (const RwReg& r : regs) {
    std::uint32_t v = r.addr == hw::kRegCQ_CTRL ? 0u : tb_.rand32();
    if (r.addr == hw::kRegCQ_LOG2_SIZE) v = static_cast<std::uint32_t>(tb_.uniform(1, 16));  // others ignored
    tb_.wr(r.addr, v);
    model.push_back(v & r.mask);
  }
  unsigned unmapped = 0;
  for (std::uint32_t a = 0; a < hw::kMMIO_BYTES; a += 4) {
    const Kind k = classify(a);
    const AxiResult r = tb_.read(A(a));
    if (k == Kind::kUnmapped) {
      ++unmapped;
      EXPECT_EQ(r.resp, kSlvErr) << "read 0x" << std::hex << a;
      EXPECT_EQ(r.data, 0u) << "read 0x" << std::hex << a;
    } else {
      EXPECT_EQ(r.resp, kOkay) << "read 0x" << std::hex << a;
      if (k == Kind::kConst) {
        EXPECT_EQ(r.data, const_value(a)) << std::hex << a;
      }
      if (k == Kind::kCmd || k == Kind::kDoorbell || k == Kind::kCmdResult) {
        EXPECT_EQ(r.data, 0u) << std::hex << a;
      }
    }
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(unmapped, 0u);
  // Writes to unmapped words: SLVERR and no effect anywhere.
  tb_.timing = AxiTiming{};
  for (std::uint32_t a = 0; a < hw::kMMIO_BYTES; a += 4) {
    if (classify(a) != Kind::kUnmapped) continue;
    const bool tail = a >= 0x1000u && a + 64 < hw::kMMIO_BYTES;
    if (tail && !tb_.chance(0.05)) continue;  // sample the long tail above every register
    const std::uint8_t strb = static_cast<std::uint8_t>(tb_.uniform(0, 15));
    EXPECT_EQ(tb_.write(A(a), 0xFFFFFFFFu, strb).resp, kSlvErr) << "write 0x" << std::hex << a;
    if (::testing::Test::HasFailure()) return;
  }
  for (std::size_t i = 0; i < regs.size(); ++i) {
    EXPECT_EQ(tb_.rd(regs[i].addr), model[i]) << "reg 0x" << std::hex << regs[i].addr;
  }
  EXPECT_TRUE(tb_.cmds.empty());
  EXPECT_TRUE(tb_.dbs.empty());
  EXPECT_TRUE(tb_.cq_reset_cycles.empty());
  EXPECT_FALSE(status().busy);
}

// ---- commands ----------------------------------------------------------------------------------

TEST_F(Regs, CommandBusyArgsDoneRefused) {
  random_timing();
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  std::array<std::uint32_t, 16> args{};
  for (unsigned i = 0; i < 16; ++i) {
    args[i] = tb.rand32();
    tb.wr(arg_reg(i), args[i]);
  }
  for (unsigned i = 0; i < 16; ++i) EXPECT_EQ(tb.rd(arg_reg(i)), args[i]);
  EXPECT_FALSE(status().busy);

  tb.cmd_ready_p = 0.0;
  tb.wr(A(hw::kRegCMD), 0xFFFFFF00u | hw::kCmdSTAG_WRITE);  // only wdata[7:0] is the opcode
  tb.step(3);
  EXPECT_TRUE(d.cmd_valid_o);
  EXPECT_EQ(d.cmd_op_o, hw::kCmdSTAG_WRITE);
  for (unsigned i = 0; i < kArgsOut; ++i) EXPECT_EQ(d.cmd_args_o[i], args[i]) << "arg " << i;
  Status s = status();
  EXPECT_TRUE(s.busy);
  EXPECT_FALSE(s.refused);
  EXPECT_EQ(s.op, hw::kCmdSTAG_WRITE);

  // Staging registers may change while busy: the latched arguments do not.
  tb.wr(arg_reg(0), ~args[0]);
  tb.wr(arg_reg(9), ~args[9]);
  EXPECT_EQ(d.cmd_args_o[0], args[0]);
  EXPECT_EQ(d.cmd_args_o[9], args[9]);
  // A CMD write while busy is ignored (OKAY).
  tb.wr(A(hw::kRegCMD), hw::kCmdQUEUE_CONFIG);
  EXPECT_EQ(d.cmd_op_o, hw::kCmdSTAG_WRITE);
  EXPECT_EQ(status().op, hw::kCmdSTAG_WRITE);
  tb.step(20);
  EXPECT_TRUE(d.cmd_valid_o);
  EXPECT_TRUE(tb.cmds.empty());

  tb.cmd_ready_p = 0.5;
  wait_cmds(1);
  EXPECT_EQ(tb.cmds[0].op, hw::kCmdSTAG_WRITE);
  for (unsigned i = 0; i < kArgsOut; ++i) EXPECT_EQ(tb.cmds[0].args[i], args[i]) << "arg " << i;
  tb.step(2);
  EXPECT_FALSE(d.cmd_valid_o);
  EXPECT_TRUE(status().busy);  // accepted, not done
  tb.pulse(d.fence_done_i);    // not a fence: ignored
  EXPECT_TRUE(status().busy);
  EXPECT_EQ(tb.cmds.size(), 1u);

  EXPECT_EQ(cmd_result(), 0u);  // 0 from the start of the command
  d.cmd_done_i = 1;
  d.cmd_refused_i = 1;
  d.cmd_result_i = 0x00012345u;  // refused: CMD_RESULT stays 0
  tb.step();
  d.cmd_done_i = 0;
  d.cmd_refused_i = 0;
  s = status();
  EXPECT_FALSE(s.busy);
  EXPECT_TRUE(s.refused);
  EXPECT_EQ(s.op, hw::kCmdSTAG_WRITE);
  EXPECT_EQ(cmd_result(), 0u);

  // Completion pulses while idle change nothing.
  tb.pulse(d.cmd_done_i);
  tb.pulse(d.fence_done_i);
  s = status();
  EXPECT_FALSE(s.busy);
  EXPECT_TRUE(s.refused);
  EXPECT_EQ(cmd_result(), 0u);
  d.cmd_result_i = 0;

  // The next command clears "refused"; its arguments are the staging words at its CMD write.
  tb.cmd_ready_p = 1.0;
  tb.wr(A(hw::kRegCMD), hw::kCmdNOP);
  wait_cmds(2);
  EXPECT_EQ(tb.cmds[1].op, hw::kCmdNOP);
  EXPECT_EQ(tb.cmds[1].args[0], ~args[0]);
  EXPECT_EQ(tb.cmds[1].args[9], ~args[9]);
  s = status();
  EXPECT_TRUE(s.busy);
  EXPECT_FALSE(s.refused);
  EXPECT_EQ(s.op, hw::kCmdNOP);
  tb.pulse(d.cmd_done_i);
  s = status();
  EXPECT_FALSE(s.busy);
  EXPECT_FALSE(s.refused);
  EXPECT_EQ(cmd_result(), 0u);

  // Unknown opcodes are forwarded (lookup refuses them).
  tb.wr(A(hw::kRegCMD), 0xABu);
  wait_cmds(3);
  EXPECT_EQ(tb.cmds[2].op, 0xABu);
  d.cmd_done_i = 1;
  d.cmd_refused_i = 1;
  tb.step();
  d.cmd_done_i = 0;
  d.cmd_refused_i = 0;
  s = status();
  EXPECT_FALSE(s.busy);
  EXPECT_TRUE(s.refused);
  EXPECT_EQ(s.op, 0xABu);
}

// CMD_RESULT: latched from cmd_result_i on cmd_done_i (STAG_WRITE: the STag the card issued), 0 when
// refused and from the start of every command, unchanged by pulses while idle.
TEST_F(Regs, CmdResultLatchedOnDone) {
  random_timing();
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  EXPECT_EQ(cmd_result(), 0u);
  tb.wr(A(hw::kRegCMD), hw::kCmdSTAG_WRITE);
  wait_cmds(1);
  tb.step(3);
  EXPECT_TRUE(status().busy);
  EXPECT_EQ(cmd_result(), 0u);
  d.cmd_result_i = 0x00ABCD07u;
  tb.pulse(d.cmd_done_i);
  d.cmd_result_i = 0xFFFFFFFFu;  // after the pulse: not latched
  tb.step(2);
  EXPECT_FALSE(status().busy);
  EXPECT_EQ(cmd_result(), 0x00ABCD07u);
  // Idle pulses do not latch.
  tb.pulse(d.cmd_done_i);
  EXPECT_EQ(cmd_result(), 0x00ABCD07u);

  // The next command clears it at its start, before any completion.
  tb.cmd_ready_p = 0.0;
  tb.wr(A(hw::kRegCMD), hw::kCmdSTAG_WRITE);
  EXPECT_EQ(cmd_result(), 0u);
  tb.cmd_ready_p = 1.0;
  wait_cmds(2);
  d.cmd_result_i = 0x00000102u;
  tb.pulse(d.cmd_done_i);
  EXPECT_EQ(cmd_result(), 0x00000102u);
  // A refused command: 0.
  tb.wr(A(hw::kRegCMD), hw::kCmdSTAG_WRITE);
  wait_cmds(3);
  d.cmd_refused_i = 1;
  d.cmd_result_i = 0x00000203u;
  tb.pulse(d.cmd_done_i);
  d.cmd_refused_i = 0;
  const Status s = status();
  EXPECT_FALSE(s.busy);
  EXPECT_TRUE(s.refused);
  EXPECT_EQ(cmd_result(), 0u);
}

// STAG_INVALIDATE and STREAM_TEARDOWN are fenced: busy clears on fence_done_i only (deliver's
// fence: every earlier write and completion acknowledged); cmd_done_i without cmd_refused_i does not
// complete them; a refused one (bad index: cmd_done_i with cmd_refused_i, no FENCE) completes at once.
TEST_F(Regs, FencedCommandsCompleteOnlyOnFenceDone) {
  random_timing();
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  std::size_t ncmd = 0;
  for (const std::uint8_t op :
       {static_cast<std::uint8_t>(hw::kCmdSTAG_INVALIDATE), static_cast<std::uint8_t>(hw::kCmdSTREAM_TEARDOWN)}) {
    SCOPED_TRACE(static_cast<int>(op));
    tb.wr(arg_reg(0), 0x42u + op);
    tb.cmd_ready_p = 0.3;
    tb.wr(A(hw::kRegCMD), op);
    wait_cmds(++ncmd);
    EXPECT_EQ(tb.cmds.back().op, op);
    EXPECT_EQ(tb.cmds.back().args[0], 0x42u + op);
    // cmd_done (not refused) does not complete a fenced command.
    tb.pulse(d.cmd_done_i);
    tb.step(50);
    Status s = status();
    EXPECT_TRUE(s.busy);
    EXPECT_FALSE(s.refused);
    EXPECT_EQ(s.op, op);
    EXPECT_FALSE(d.cmd_valid_o);
    tb.wr(A(hw::kRegCMD), hw::kCmdNOP);  // ignored while busy
    EXPECT_TRUE(status().busy);
    EXPECT_EQ(tb.cmds.size(), ncmd);

    tb.pulse(d.fence_done_i);
    s = status();
    EXPECT_FALSE(s.busy);
    EXPECT_FALSE(s.refused);
    EXPECT_EQ(s.op, op);
    tb.step(10);
    EXPECT_EQ(tb.cmds.size(), ncmd);

    // Refused (bad index): lookup pulses cmd_done with cmd_refused in the handshake cycle and sends
    // no FENCE; the command completes, refused.
    tb.cmd_ready_p = 0.5;
    tb.drive_hook = [&](Vrnic_regs& dd, std::uint64_t) {
      dd.cmd_done_i = dd.cmd_valid_o && dd.cmd_ready_i;
      dd.cmd_refused_i = dd.cmd_done_i;
    };
    tb.wr(A(hw::kRegCMD), op);
    wait_cmds(++ncmd);
    tb.drive_hook = nullptr;
    d.cmd_done_i = d.cmd_refused_i = 0;
    s = status();
    EXPECT_FALSE(s.busy);
    EXPECT_TRUE(s.refused);
    EXPECT_EQ(s.op, op);
  }
}

// QUEUE_CONFIG waits for both deliver's fence (fence_done_i) and lookup's table write (cmd_done_i),
// in either order or in the same cycle; refused at the handshake it completes at once.
TEST_F(Regs, QueueConfigNeedsFenceDoneAndCmdDone) {
  random_timing();
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  std::size_t ncmd = 0;
  enum class Order { kDoneFirst, kFenceFirst, kSameCycle };
  for (const Order order : {Order::kDoneFirst, Order::kFenceFirst, Order::kSameCycle}) {
    SCOPED_TRACE(static_cast<int>(order));
    tb.cmd_ready_p = 0.5;
    tb.wr(A(hw::kRegCMD), hw::kCmdQUEUE_CONFIG);
    wait_cmds(++ncmd);
    EXPECT_EQ(tb.cmds.back().op, hw::kCmdQUEUE_CONFIG);
    tb.step(static_cast<unsigned>(tb.uniform(0, 5)));
    if (order == Order::kSameCycle) {
      d.cmd_done_i = 1;
      d.fence_done_i = 1;
      tb.step();
      d.cmd_done_i = d.fence_done_i = 0;
    } else {
      CData& first = order == Order::kDoneFirst ? d.cmd_done_i : d.fence_done_i;
      CData& second = order == Order::kDoneFirst ? d.fence_done_i : d.cmd_done_i;
      tb.pulse(first);
      tb.step(static_cast<unsigned>(tb.uniform(0, 20)));
      tb.pulse(first);  // a repeat changes nothing
      Status s = status();
      EXPECT_TRUE(s.busy) << "QUEUE_CONFIG completed on one of its two pulses";
      EXPECT_EQ(s.op, hw::kCmdQUEUE_CONFIG);
      tb.wr(A(hw::kRegCMD), hw::kCmdNOP);  // ignored while busy
      EXPECT_EQ(tb.cmds.size(), ncmd);
      tb.pulse(second);
    }
    const Status s = status();
    EXPECT_FALSE(s.busy);
    EXPECT_FALSE(s.refused);
    EXPECT_EQ(s.op, hw::kCmdQUEUE_CONFIG);
  }
  // Refused in the handshake cycle (bad index, no QUEUE_SET sent): completes at once.
  tb.drive_hook = [&](Vrnic_regs& dd, std::uint64_t) {
    dd.cmd_done_i = dd.cmd_valid_o && dd.cmd_ready_i;
    dd.cmd_refused_i = dd.cmd_done_i;
  };
  tb.wr(A(hw::kRegCMD), hw::kCmdQUEUE_CONFIG);
  wait_cmds(++ncmd);
  tb.drive_hook = nullptr;
  d.cmd_done_i = d.cmd_refused_i = 0;
  const Status s = status();
  EXPECT_FALSE(s.busy);
  EXPECT_TRUE(s.refused);
}

// Many commands with random ready, completion latency, wrong-kind and partial completion pulses,
// completion in the handshake cycle and CMD writes while busy; CMD_RESULT against a model (the value
// of the last cmd_done_i while busy, 0 when refused and at the start).
TEST_F(Regs, CommandRandomStress) {
  Tb& tb = tb_;
  std::array<std::uint32_t, 16> staged{};
  struct Pulses {
    bool done = false, refused = false, fence = false;
  } next;
  bool done_at_handshake = false;  // cmd_done in the handshake cycle
  bool refuse_at_handshake = false;
  std::uint32_t want_result = 0;
  tb.drive_hook = [&](Vrnic_regs& d, std::uint64_t) {
    const bool hs = done_at_handshake && d.cmd_valid_o && d.cmd_ready_i;
    d.cmd_done_i = next.done || hs;
    d.cmd_refused_i = next.refused || (hs && refuse_at_handshake);
    d.fence_done_i = next.fence;
    d.cmd_result_i = tb.rand32();
    // Every pulse of this test comes while the command is busy.
    if (d.cmd_done_i) want_result = d.cmd_refused_i ? 0u : d.cmd_result_i;
    next = Pulses{};
  };
  for (int n = 0; n < 300; ++n) {
    random_timing();
    tb.cmd_ready_p = 0.1 + 0.9 * static_cast<double>(tb.uniform(0, 10)) / 10.0;
    const unsigned writes = static_cast<unsigned>(tb.uniform(0, 4));
    for (unsigned k = 0; k < writes; ++k) {
      const unsigned i = static_cast<unsigned>(tb.uniform(0, 15));
      const std::uint32_t v = tb.rand32();
      const std::uint8_t strb = static_cast<std::uint8_t>(tb.uniform(0, 15));
      tb.wr(arg_reg(i), v, strb);
      staged[i] = (staged[i] & ~strb_mask(strb)) | (v & strb_mask(strb));
    }
    const std::uint8_t op = tb.chance(0.2)    ? static_cast<std::uint8_t>(hw::kCmdSTAG_INVALIDATE)
                            : tb.chance(0.15) ? static_cast<std::uint8_t>(hw::kCmdSTREAM_TEARDOWN)
                            : tb.chance(0.2)  ? static_cast<std::uint8_t>(hw::kCmdQUEUE_CONFIG)
                            : tb.chance(0.1)  ? static_cast<std::uint8_t>(tb.uniform(6, 255))
                                              : static_cast<std::uint8_t>(tb.uniform(0, 5));
    const Wait w = wait_of(op);
    // Sometimes cmd_done in the handshake cycle: refused (any command) or a plain done (not for the
    // fence-only commands, whose lookup part sends no cmd_done).
    done_at_handshake = tb.chance(0.3);
    refuse_at_handshake = w == Wait::kFence || tb.chance(0.5);
    want_result = 0;
    const std::size_t before = tb.cmds.size();
    tb.wr(A(hw::kRegCMD), op);
    wait_cmds(before + 1);
    if (::testing::Test::HasFailure()) return;
    const CmdSeen& c = tb.cmds.back();
    EXPECT_EQ(c.op, op);
    for (unsigned i = 0; i < kArgsOut; ++i) EXPECT_EQ(c.args[i], staged[i]) << "arg " << i;

    bool refused = done_at_handshake && refuse_at_handshake;
    bool need_done = w != Wait::kFence && !done_at_handshake;
    bool need_fence = w != Wait::kDone;
    if (!refused && (need_done || need_fence)) {
      // Pulses that must not complete it: the wrong kind, or one of QUEUE_CONFIG's two (repeated);
      // CMD writes while busy.
      const bool fence_first = tb.chance(0.5);
      for (unsigned k = static_cast<unsigned>(tb.uniform(0, 3)); k > 0; --k) {
        tb.step(static_cast<unsigned>(tb.uniform(0, 5)));
        if (w == Wait::kFence) {
          next.done = true;  // not refused: a fence ignores it (CMD_RESULT takes its value)
        } else if (w == Wait::kDone) {
          next.fence = true;
        } else {
          // QUEUE_CONFIG: one of its two pulses (again, once one has come).
          const bool fence = !need_fence || (need_done && fence_first);
          (fence ? next.fence : next.done) = true;
          (fence ? need_fence : need_done) = false;
        }
        tb.step();
      }
      if (tb.chance(0.3)) tb.wr(A(hw::kRegCMD), hw::kCmdNOP);
      const Status s = status();
      EXPECT_TRUE(s.busy) << "command " << n << " completed by a wrong-kind or partial pulse";
      EXPECT_EQ(s.op, op);
      EXPECT_EQ(cmd_result(), want_result) << "command " << n << " while busy";
      // The completion, sometimes together with the wrong kind.
      tb.step(static_cast<unsigned>(tb.uniform(0, 10)));
      if (w == Wait::kFence) {
        next.fence = true;
        next.done = tb.chance(0.3);
      } else if (w == Wait::kDone) {
        refused = tb.chance(0.5);
        next.done = true;
        next.refused = refused;
        next.fence = tb.chance(0.3);
      } else {
        next.fence = need_fence || tb.chance(0.3);
        next.done = need_done || tb.chance(0.3);
        refused = need_done && tb.chance(0.2);  // lookup refusing after a fence: completes too
        next.refused = refused;
      }
      tb.step();
    }
    const Status s = status();
    EXPECT_FALSE(s.busy) << "command " << n;
    EXPECT_EQ(s.refused, refused) << "command " << n;
    EXPECT_EQ(s.op, op);
    EXPECT_EQ(cmd_result(), want_result) << "command " << n;
    EXPECT_EQ(tb.cmds.size(), before + 1) << "a command started twice or while busy";
    if (::testing::Test::HasFailure()) return;
  }
}

// ---- doorbells ---------------------------------------------------------------------------------

TEST_F(Regs, DoorbellDecodeEveryQueue) {
  for (std::uint32_t q = 0; q < kNumDb; ++q) {
    if (q % 64 == 0) random_timing();
    tb_.db_ready_p = 0.1 + 0.9 * static_cast<double>(tb_.uniform(0, 10)) / 10.0;
    const std::uint32_t prod = tb_.rand32();
    EXPECT_EQ(tb_.write(A(hw::kRegDB_QUEUE), db_sel(q)).resp, kOkay);
    EXPECT_EQ(tb_.dbs.size(), q) << "DB_QUEUE rang a doorbell";
    const AxiResult r = tb_.write(A(hw::kRegDB_PROD), prod);
    EXPECT_EQ(r.resp, kOkay) << "doorbell " << q;
    ASSERT_EQ(tb_.dbs.size(), q + 1) << "doorbell " << q << " lost or duplicated";
    const DbSeen& db = tb_.dbs.back();
    EXPECT_EQ(db.stream, q / kNumQns) << "doorbell " << q;
    EXPECT_EQ(db.qn, q % kNumQns) << "doorbell " << q;
    EXPECT_EQ(db.prod, prod) << "doorbell " << q;
    EXPECT_GT(r.resp_cycle, db.cycle) << "write response before the doorbell was accepted";
    if (::testing::Test::HasFailure()) return;
  }
  // The same queue rung again needs no DB_QUEUE write.
  fast_timing();
  tb_.db_ready_p = 1.0;
  EXPECT_EQ(tb_.write(A(hw::kRegDB_PROD), 7).resp, kOkay);
  ASSERT_EQ(tb_.dbs.size(), kNumDb + 1);
  EXPECT_EQ(tb_.dbs.back().stream, (kNumDb - 1) / kNumQns);
  EXPECT_EQ(tb_.dbs.back().qn, (kNumDb - 1) % kNumQns);
  EXPECT_EQ(tb_.dbs.back().prod, 7u);
  // DB_QUEUE naming no queue (stream = CAP_STREAMS, QN = CAP_QNS, both, the largest values): DB_PROD
  // answers SLVERR and rings nothing; DB_QUEUE keeps bits [23:0] as written.
  for (std::uint32_t v :
       {hw::db_queue(kNumStreams, 0), hw::db_queue(0, kNumQns), hw::db_queue(kNumStreams, kNumQns), 0xFFFFFFFFu}) {
    if (kNumStreams == 0x10000u && (v & 0xFFFFu) == 0 && (v >> 16) == 0) continue;  // stream 65536 wraps to 0
    EXPECT_EQ(tb_.write(A(hw::kRegDB_QUEUE), v).resp, kOkay);
    EXPECT_EQ(tb_.rd(A(hw::kRegDB_QUEUE)), v & hw::kDbQueueBits);
    EXPECT_EQ(tb_.write(A(hw::kRegDB_PROD), 1).resp, kSlvErr) << "DB_QUEUE 0x" << std::hex << v;
  }
  // Byte strobes: only the strobed bytes of DB_QUEUE change.
  EXPECT_EQ(tb_.write(A(hw::kRegDB_QUEUE), 0).resp, kOkay);
  EXPECT_EQ(tb_.write(A(hw::kRegDB_QUEUE), 0x00FFFFFFu, 0x4).resp, kOkay);  // QN byte only
  EXPECT_EQ(tb_.rd(A(hw::kRegDB_QUEUE)), 0x00FF0000u);
  EXPECT_EQ(tb_.write(A(hw::kRegDB_QUEUE), db_sel(0) | 0xFF000000u, 0x4).resp, kOkay);
  EXPECT_EQ(tb_.rd(A(hw::kRegDB_QUEUE)), db_sel(0) & 0x00FF0000u);
  EXPECT_EQ(tb_.write(A(hw::kRegDB_PROD), 5).resp, kOkay);  // queue (0, 0) again
  EXPECT_EQ(tb_.rd(A(hw::kRegDB_PROD)), 0u);                // write-only
  tb_.step(5);
  ASSERT_EQ(tb_.dbs.size(), kNumDb + 2);
  EXPECT_EQ(tb_.dbs.back().stream, 0u);
  EXPECT_EQ(tb_.dbs.back().qn, 0u);
  EXPECT_EQ(tb_.dbs.back().prod, 5u);
  // The old per-queue doorbell addresses (interface 2: 0x8000 + 4 * queue) are unmapped.
  EXPECT_EQ(tb_.write(A(0x8000), 1).resp, kSlvErr);
  EXPECT_EQ(tb_.write(A(hw::kMMIO_BYTES - 4), 1).resp, kSlvErr);
  tb_.step(5);
  EXPECT_EQ(tb_.dbs.size(), kNumDb + 2);
}

TEST_F(Regs, DoorbellBackpressureHoldsResponse) {
  Tb& tb = tb_;
  tb.timing.bready_p = 1.0;
  unsigned bvalid_cycles = 0;
  tb.sample_hook = [&](const Vrnic_regs& d, std::uint64_t) { bvalid_cycles += d.s_axi_bvalid_o; };
  const std::uint32_t q = kNumDb - 1;
  EXPECT_EQ(tb.write(A(hw::kRegDB_QUEUE), db_sel(q)).resp, kOkay);
  bvalid_cycles = 0;
  tb.db_ready_p = 0.0;
  tb.start_write(A(hw::kRegDB_PROD), 0xA5A5F00Du);
  tb.step(200);
  EXPECT_TRUE(tb.write_busy()) << "response given before the doorbell was accepted";
  EXPECT_EQ(bvalid_cycles, 0u);
  EXPECT_TRUE(tb.dut().db_valid_o);
  EXPECT_TRUE(tb.dbs.empty());
  // The read channel is independent of the stalled write.
  tb.start_read(A(hw::kRegID));
  while (tb.read_busy()) tb.step();
  EXPECT_EQ(tb.read_result().data, hw::kID_VALUE);
  tb.db_ready_p = 1.0;
  tb.wait_idle();
  EXPECT_EQ(tb.write_result().resp, kOkay);
  ASSERT_EQ(tb.dbs.size(), 1u);
  EXPECT_EQ(tb.dbs[0].stream, q / kNumQns);
  EXPECT_EQ(tb.dbs[0].qn, q % kNumQns);
  EXPECT_EQ(tb.dbs[0].prod, 0xA5A5F00Du);
  EXPECT_GT(tb.write_result().resp_cycle, tb.dbs[0].cycle);
  tb.step(10);
  EXPECT_EQ(tb.dbs.size(), 1u);

  // A burst under random backpressure (a DB_QUEUE write before each doorbell, written while the
  // previous doorbell may still wait): all arrive, in order, once, each to the queue named before it.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sent;
  for (int n = 0; n < 300; ++n) {
    if (n % 30 == 0) {
      random_timing();
      tb.db_ready_p = static_cast<double>(tb.uniform(1, 10)) / 10.0;
    }
    const std::uint32_t qq = static_cast<std::uint32_t>(tb.uniform(0, kNumDb - 1));
    const std::uint32_t prod = tb.rand32();
    sent.emplace_back(qq, prod);
    EXPECT_EQ(tb.write(A(hw::kRegDB_QUEUE), db_sel(qq)).resp, kOkay);
    EXPECT_EQ(tb.write(A(hw::kRegDB_PROD), prod).resp, kOkay);
  }
  tb.step(10);
  ASSERT_EQ(tb.dbs.size(), sent.size() + 1);
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(tb.dbs[i + 1].stream, sent[i].first / kNumQns) << i;
    EXPECT_EQ(tb.dbs[i + 1].qn, sent[i].first % kNumQns) << i;
    EXPECT_EQ(tb.dbs[i + 1].prod, sent[i].second) << i;
  }
}

// ---- completion ring registers ---------------------------------------------------------------

TEST_F(Regs, CqRegistersAndResetPulse) {
  random_timing();
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  tb.wr(A(hw::kRegCQ_BASE_LO), 0x12345640u);
  tb.wr(A(hw::kRegCQ_BASE_HI), 0x89ABCDEFu);
  EXPECT_EQ(d.cq_base_o, 0x89ABCDEF12345640ull);
  tb.wr(A(hw::kRegCQ_LOG2_SIZE), 0xFFFFFFE3u);
  EXPECT_EQ(d.cq_log2_o, 3u);
  EXPECT_EQ(tb.rd(A(hw::kRegCQ_LOG2_SIZE)), 3u);
  tb.wr(A(hw::kRegCQ_CONS), 0x00000777u);
  EXPECT_EQ(d.cq_cons_o, 0x777u);
  EXPECT_FALSE(d.cq_enable_o);

  // CQ_CTRL = 1: enable, one-cycle reset pulse, consumer back to 0.
  std::vector<std::uint32_t> cons_at_reset;
  tb.sample_hook = [&](const Vrnic_regs& dd, std::uint64_t) {
    if (dd.cq_reset_o) cons_at_reset.push_back(dd.cq_cons_o);
  };
  tb.wr(A(hw::kRegCQ_CTRL), 1u);
  EXPECT_TRUE(d.cq_enable_o);
  ASSERT_EQ(tb.cq_reset_cycles.size(), 1u);
  EXPECT_EQ(cons_at_reset, std::vector<std::uint32_t>{0u});
  EXPECT_EQ(d.cq_cons_o, 0u);
  EXPECT_EQ(tb.rd(A(hw::kRegCQ_CONS)), 0u);
  EXPECT_EQ(tb.rd(A(hw::kRegCQ_CTRL)), 1u);

  // Consumer updates, byte-wise.
  tb.wr(A(hw::kRegCQ_CONS), 0x11223344u);
  tb.wr(A(hw::kRegCQ_CONS), 0xAABBCCDDu, 0x6);
  EXPECT_EQ(tb.rd(A(hw::kRegCQ_CONS)), 0x11BBCC44u);
  EXPECT_EQ(d.cq_cons_o, 0x11BBCC44u);

  // Bit 0 not strobed: nothing. Writing 0: disable, no pulse, consumer kept.
  tb.wr(A(hw::kRegCQ_CTRL), 0u, 0xE);
  EXPECT_TRUE(d.cq_enable_o);
  tb.wr(A(hw::kRegCQ_CTRL), 1u, 0xE);
  EXPECT_EQ(tb.cq_reset_cycles.size(), 1u);
  tb.wr(A(hw::kRegCQ_CTRL), 0xFFFFFFFEu);
  EXPECT_FALSE(d.cq_enable_o);
  EXPECT_EQ(tb.rd(A(hw::kRegCQ_CTRL)), 0u);
  EXPECT_EQ(tb.cq_reset_cycles.size(), 1u);
  EXPECT_EQ(d.cq_cons_o, 0x11BBCC44u);
  // Writing 1 while enabled resets again.
  tb.wr(A(hw::kRegCQ_CTRL), 1u);
  tb.wr(A(hw::kRegCQ_CTRL), 0xFFFFFFFFu);
  EXPECT_EQ(tb.cq_reset_cycles.size(), 3u);
  EXPECT_EQ(d.cq_cons_o, 0u);
  for (std::size_t i = 1; i < tb.cq_reset_cycles.size(); ++i) {
    EXPECT_GT(tb.cq_reset_cycles[i], tb.cq_reset_cycles[i - 1] + 1) << "pulse longer than a cycle";
  }

  // CQ_PROD follows cq_prod_i.
  for (int n = 0; n < 20; ++n) {
    d.cq_prod_i = tb.rand32();
    EXPECT_EQ(tb.rd(A(hw::kRegCQ_PROD)), d.cq_prod_i);
  }
}

// The ring configuration is taken only while CQ_CTRL reads 0: disabled, and no completion write
// loaded before the disable still in flight (cq_busy_i, CQ_CTRL bit 1). Otherwise a write of
// CQ_BASE / CQ_LOG2_SIZE could move the ring under a completion write already on its way (found by
// the deliver formal harness: an entry loaded for a 16-entry ring written at base + 0x40 after the
// ring had been made 1 entry long). CQ_LOG2_SIZE takes 1..16 only (hw.def).
TEST_F(Regs, CqConfigurationOnlyWhileDisabledAndNotBusy) {
  random_timing();
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  tb.wr(A(hw::kRegCQ_BASE_LO), 0x1000u);
  tb.wr(A(hw::kRegCQ_LOG2_SIZE), 4u);
  EXPECT_EQ(d.cq_log2_o, 4u);
  // Out of range: ignored.
  for (std::uint32_t v : {0u, 17u, 31u}) {
    tb.wr(A(hw::kRegCQ_LOG2_SIZE), v);
    EXPECT_EQ(tb.rd(A(hw::kRegCQ_LOG2_SIZE)), 4u) << v;
  }
  tb.wr(A(hw::kRegCQ_LOG2_SIZE), 16u);
  EXPECT_EQ(d.cq_log2_o, 16u);
  tb.wr(A(hw::kRegCQ_LOG2_SIZE), 1u);
  EXPECT_EQ(d.cq_log2_o, 1u);
  tb.wr(A(hw::kRegCQ_LOG2_SIZE), 4u);

  // Enabled: ignored.
  tb.wr(A(hw::kRegCQ_CTRL), 1u);
  tb.wr(A(hw::kRegCQ_BASE_LO), 0x2000u);
  tb.wr(A(hw::kRegCQ_BASE_HI), 0x5u);
  tb.wr(A(hw::kRegCQ_LOG2_SIZE), 2u);
  EXPECT_EQ(d.cq_base_o, 0x1000u);
  EXPECT_EQ(d.cq_log2_o, 4u);
  EXPECT_EQ(tb.rd(A(hw::kRegCQ_CTRL)), 1u);

  // Disabled but busy: CQ_CTRL reads 2, still ignored.
  d.cq_busy_i = 1;
  tb.wr(A(hw::kRegCQ_CTRL), 0u);
  EXPECT_EQ(tb.rd(A(hw::kRegCQ_CTRL)), 2u);
  tb.wr(A(hw::kRegCQ_BASE_LO), 0x2000u);
  tb.wr(A(hw::kRegCQ_LOG2_SIZE), 2u);
  EXPECT_EQ(d.cq_base_o, 0x1000u);
  EXPECT_EQ(d.cq_log2_o, 4u);

  // Idle: taken.
  d.cq_busy_i = 0;
  EXPECT_EQ(tb.rd(A(hw::kRegCQ_CTRL)), 0u);
  tb.wr(A(hw::kRegCQ_BASE_LO), 0x2000u);
  tb.wr(A(hw::kRegCQ_BASE_HI), 0x5u);
  tb.wr(A(hw::kRegCQ_LOG2_SIZE), 2u);
  EXPECT_EQ(d.cq_base_o, 0x500002000ull);
  EXPECT_EQ(d.cq_log2_o, 2u);
  // Busy while enabled reads 3.
  tb.wr(A(hw::kRegCQ_CTRL), 1u);
  d.cq_busy_i = 1;
  EXPECT_EQ(tb.rd(A(hw::kRegCQ_CTRL)), 3u);
  d.cq_busy_i = 0;
}

// ---- counters ----------------------------------------------------------------------------------

// Drives random counter events and keeps the expected counts, per cycle.
class CounterModel {
 public:
  static constexpr std::size_t kHistory = 4096;

  std::array<std::uint64_t, kNumCounters> value{};
  double p_event = 0.5;  // probability of each non-byte event per cycle
  double p_bytes = 0.9;  // probability of a bytes event per cycle
  std::uint32_t bytes_min = 32768;
  bool enabled = true;

  // Drive the inputs of this cycle and account for them.
  void drive(Tb& tb, Vrnic_regs& d, std::uint64_t cycle) {
    d.bytes_i = static_cast<std::uint16_t>(tb.rng()());
    d.error_idx_i = static_cast<std::uint8_t>(tb.rng()() & 31u);
    d.seg_event_i = enabled && tb.chance(p_event);
    d.bytes_event_i = enabled && tb.chance(p_bytes);
    d.msg_event_i = enabled && tb.chance(p_event);
    d.drop_event_i = enabled && tb.chance(p_event);
    d.access_event_i = enabled && tb.chance(p_event);
    d.dup_event_i = enabled && tb.chance(p_event);
    d.write_err_event_i = enabled && tb.chance(p_event);
    d.read_err_event_i = enabled && tb.chance(p_event);
    d.error_event_i = enabled && tb.chance(p_event);
    d.order_err_event_i = enabled && tb.chance(p_event);
    if (d.bytes_event_i) d.bytes_i = static_cast<std::uint16_t>(tb.uniform(bytes_min, 0xFFFF));
    value[kCntSegments] += d.seg_event_i;
    value[kCntBytes] += d.bytes_event_i ? d.bytes_i : 0u;
    value[kCntMessages] += d.msg_event_i;
    value[kCntDrops] += d.drop_event_i;
    value[kCntAccess] += d.access_event_i;
    value[kCntDuplicates] += d.dup_event_i;
    value[kCntWriteErrors] += d.write_err_event_i;
    value[kCntReadErrors] += d.read_err_event_i;
    if (d.error_event_i && d.error_idx_i < kNumErrors) ++value[kCntError0 + d.error_idx_i];
    value[kCntMsnRange] += d.order_err_event_i;
    history_[cycle % kHistory] = value;
    last_cycle_ = cycle;
  }

  // Counts including the events of cycle c (c must be recent).
  std::uint64_t at(unsigned counter, std::uint64_t c) const {
    EXPECT_LT(last_cycle_ - c, kHistory);
    return history_[c % kHistory][counter];
  }

 private:
  std::array<std::array<std::uint64_t, kNumCounters>, kHistory> history_{};
  std::uint64_t last_cycle_ = 0;
};

// A read selects its counter two cycles after its AR handshake (decode, then select: rnic_regs.sv)
// and sees events up to two cycles before that: those of the handshake cycle.
constexpr std::uint64_t kCountLag = 0;

TEST_F(Regs, CountersRandomSimultaneousEventsWithCarry) {
  Tb& tb = tb_;
  auto model = std::make_unique<CounterModel>();
  tb.drive_hook = [&](Vrnic_regs& d, std::uint64_t c) { model->drive(tb, d, c); };
  // Run until the bytes counter has crossed 2^32 twice, reading counters all along: LO then,
  // after a random gap, HI, which must be the high word latched by the LO read.
  unsigned reads = 0;
  while (model->value[kCntBytes] < (std::uint64_t{1} << 33) + 300000u) {
    if (reads % 50 == 0) {
      random_timing();
      const std::array<double, 5> ps = {0.0, 0.05, 0.5, 0.9, 1.0};
      model->p_event = ps[tb.uniform(0, ps.size() - 1)];
    }
    const unsigned k = tb.chance(0.5) ? kCntBytes : static_cast<unsigned>(tb.uniform(0, kNumCounters - 1));
    const AxiResult lo = tb.read(cnt_lo(k));
    EXPECT_EQ(lo.resp, kOkay);
    const std::uint64_t expect = model->at(k, lo.req_cycle - kCountLag);
    EXPECT_EQ(lo.data, static_cast<std::uint32_t>(expect)) << "counter " << k << " LO";
    tb.step(static_cast<unsigned>(tb.uniform(0, 400)));
    if (tb.chance(0.2)) {
      const unsigned other = static_cast<unsigned>(tb.uniform(0, kNumCounters - 1));
      if (other != k) tb.read(cnt_lo(other));  // latches only its own high word
    }
    const AxiResult hi = tb.read(cnt_hi(k));
    EXPECT_EQ(hi.resp, kOkay);
    EXPECT_EQ(hi.data, static_cast<std::uint32_t>(expect >> 32)) << "counter " << k << " HI latch";
    ++reads;
    if (::testing::Test::HasFailure()) return;
  }
  // Quiesce and compare every counter exactly.
  model->enabled = false;
  tb.step(4);
  for (unsigned k = 0; k < kNumCounters; ++k) {
    const std::uint32_t lo = tb.rd(cnt_lo(k));
    const std::uint32_t hi = tb.rd(cnt_hi(k));
    EXPECT_EQ((std::uint64_t{hi} << 32) | lo, model->value[k]) << "counter " << k;
  }
  EXPECT_GE(model->value[kCntBytes] >> 32, 2u);
  std::cout << "counter reads: " << reads << ", cycles: " << tb.cycle() << std::endl;
}

TEST_F(Regs, CounterLoReadLatchesHiWord) {
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  fast_timing();
  std::uint64_t bytes = 0;
  std::uint64_t segs = 0;
  auto inject = [&](std::uint64_t target) {  // 0xFFFF-byte events (and segments) up to target
    while (bytes + 0xFFFF <= target) {
      d.bytes_event_i = 1;
      d.bytes_i = 0xFFFF;
      d.seg_event_i = 1;
      tb.step();
      bytes += 0xFFFF;
      ++segs;
    }
    tb.clear_events();
    tb.step(3);
  };
  inject((std::uint64_t{1} << 32) - 5 * 0xFFFF);
  EXPECT_EQ(tb.rd(cnt_lo(kCntBytes)), static_cast<std::uint32_t>(bytes));
  inject((std::uint64_t{1} << 32) + 10 * 0xFFFF);  // the live high word is now 1
  ASSERT_EQ(bytes >> 32, 1u);
  EXPECT_EQ(tb.rd(cnt_hi(kCntBytes)), 0u) << "HI must be the word latched by the LO read";
  EXPECT_EQ(tb.rd(cnt_hi(kCntBytes)), 0u) << "reading HI must not re-latch";
  EXPECT_EQ(tb.rd(cnt_lo(kCntSegments)), static_cast<std::uint32_t>(segs));
  EXPECT_EQ(tb.rd(cnt_hi(kCntBytes)), 0u) << "another counter's LO read must not latch this one";
  EXPECT_EQ(tb.rd(cnt_lo(kCntBytes)), static_cast<std::uint32_t>(bytes));
  EXPECT_EQ(tb.rd(cnt_hi(kCntBytes)), 1u);
  EXPECT_EQ(tb.rd(cnt_hi(kCntSegments)), 0u);

  // Reset clears counters and latches.
  tb.reset();
  EXPECT_EQ(tb.rd(cnt_hi(kCntBytes)), 0u);
  EXPECT_EQ(tb.rd(cnt_lo(kCntBytes)), 0u);
  EXPECT_EQ(tb.rd(cnt_lo(kCntSegments)), 0u);
}

// Error events count only in their own row; indexes past the table count nowhere.
TEST_F(Regs, ErrorCounterRows) {
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  random_timing();
  std::array<std::uint64_t, 32> n{};
  for (int c = 0; c < 5000; ++c) {
    d.error_event_i = tb.chance(0.8);
    d.error_idx_i = static_cast<std::uint8_t>(tb.uniform(0, 31));
    if (d.error_event_i) ++n[d.error_idx_i];
    tb.step();
  }
  tb.clear_events();
  tb.step(3);
  for (unsigned i = 0; i < kNumErrors; ++i) {
    EXPECT_EQ(tb.rd(cnt_lo(kCntError0 + i)), n[i]) << "error row " << i;
    EXPECT_EQ(tb.rd(cnt_hi(kCntError0 + i)), 0u) << "error row " << i;
  }
  for (unsigned k = 0; k < kCntError0; ++k) EXPECT_EQ(tb.rd(cnt_lo(k)), 0u) << "counter " << k;
}

// White box (the model is built with --public-flat-rw): counter slot k of the RTL is the test's
// counter k. Presets a counter near 2^32, as 4 G events would take too long to simulate.
void preset_counter(Vrnic_regs& d, unsigned k, std::uint64_t v) {
  d.rootp->rnic_regs__DOT__cnt_q[2 * k] = static_cast<std::uint32_t>(v);
  d.rootp->rnic_regs__DOT__cnt_q[2 * k + 1] = static_cast<std::uint32_t>(v >> 32);
}

// Deliver's order errors (order_err_event_i, RFC 5041 7.2 type 2 code 3 found in DDP-SSN order) count
// in the UntaggedMsnRange row and nowhere else; in a cycle with validate's event for the same row
// both count (two in one cycle).
TEST_F(Regs, OrderErrorEventCountsAsMsnRange) {
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  random_timing();
  std::array<std::uint64_t, 32> n{};
  std::uint64_t coincide = 0;
  for (int c = 0; c < 4000; ++c) {
    // Phases: order errors alone, together with a MsnRange error each cycle, random mixes.
    const bool both = c >= 1000 && c < 1300;
    d.order_err_event_i = c < 300 || both || tb.chance(0.5);
    d.error_event_i = both || (c >= 300 && tb.chance(0.5));
    d.error_idx_i = both ? static_cast<std::uint8_t>(kMsnRangeRow) : static_cast<std::uint8_t>(tb.uniform(0, 31));
    if (d.error_event_i) ++n[d.error_idx_i];
    n[kMsnRangeRow] += d.order_err_event_i;
    coincide += d.order_err_event_i && d.error_event_i && d.error_idx_i == kMsnRangeRow;
    tb.step();
  }
  tb.clear_events();
  tb.step(3);
  EXPECT_GE(coincide, 300u);
  for (unsigned i = 0; i < kNumErrors; ++i) {
    EXPECT_EQ(tb.rd(cnt_lo(kCntError0 + i)), n[i]) << "error row " << i;
    EXPECT_EQ(tb.rd(cnt_hi(kCntError0 + i)), 0u) << "error row " << i;
  }
  for (unsigned k = 0; k < kCntError0; ++k) EXPECT_EQ(tb.rd(cnt_lo(k)), 0u) << "counter " << k;
  // Carry into the high word with both events in one cycle.
  preset_counter(d, kCntMsnRange, 0xFFFFFFFFull);
  d.order_err_event_i = 1;
  d.error_event_i = 1;
  d.error_idx_i = static_cast<std::uint8_t>(kMsnRangeRow);
  tb.step();
  tb.clear_events();
  tb.step(3);
  EXPECT_EQ(tb.rd(cnt_lo(kCntMsnRange)), 1u);
  EXPECT_EQ(tb.rd(cnt_hi(kCntMsnRange)), 1u);
}

// CNT_WRITE_ERRORS / CNT_READ_ERRORS: one count per cycle with the event high, each only in its own
// register, together with every other event in the same cycles.
TEST_F(Regs, WriteAndReadErrorCounters) {
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  random_timing();
  std::uint64_t nw = 0, nr = 0, nseg = 0;
  for (int c = 0; c < 3000; ++c) {
    const bool both_long = c >= 1000 && c < 1200;  // held high for 200 cycles: 200 counts
    d.write_err_event_i = both_long || tb.chance(0.3);
    d.read_err_event_i = both_long || tb.chance(0.6);
    d.seg_event_i = tb.chance(0.5);
    d.dup_event_i = d.write_err_event_i;
    nw += d.write_err_event_i;
    nr += d.read_err_event_i;
    nseg += d.seg_event_i;
    tb.step();
  }
  tb.clear_events();
  tb.step(3);
  EXPECT_EQ(tb.rd(cnt_lo(kCntWriteErrors)), nw);
  EXPECT_EQ(tb.rd(cnt_hi(kCntWriteErrors)), 0u);
  EXPECT_EQ(tb.rd(cnt_lo(kCntReadErrors)), nr);
  EXPECT_EQ(tb.rd(cnt_hi(kCntReadErrors)), 0u);
  EXPECT_EQ(tb.rd(cnt_lo(kCntSegments)), nseg);
  EXPECT_EQ(tb.rd(cnt_lo(kCntDuplicates)), nw);
  for (unsigned k = 0; k < kNumCounters; ++k) {
    if (k == kCntWriteErrors || k == kCntReadErrors || k == kCntSegments || k == kCntDuplicates) continue;
    EXPECT_EQ(tb.rd(cnt_lo(k)), 0u) << "counter " << k;
  }
}

// The error counters are 64 bits wide: carry into the high word, and the _LO read latches _HI.
TEST_F(Regs, ErrorCountersCarryAndHiLatch) {
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  fast_timing();
  auto pulses = [&](unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
      d.write_err_event_i = 1;
      d.read_err_event_i = 1;
      tb.step();
    }
    tb.clear_events();
    tb.step(3);
  };
  const std::uint64_t base = (std::uint64_t{1} << 32) - 3;
  preset_counter(d, kCntWriteErrors, base);
  preset_counter(d, kCntReadErrors, base + 1);
  ASSERT_EQ(tb.rd(cnt_lo(kCntWriteErrors)), static_cast<std::uint32_t>(base)) << "preset failed";
  pulses(5);
  for (unsigned k : {kCntWriteErrors, kCntReadErrors}) {
    const std::uint64_t want = (k == kCntWriteErrors ? base : base + 1) + 5;
    EXPECT_EQ(tb.rd(cnt_lo(k)), static_cast<std::uint32_t>(want)) << "counter " << k;
    EXPECT_EQ(tb.rd(cnt_hi(k)), static_cast<std::uint32_t>(want >> 32)) << "counter " << k;
  }
  // Snapshot: HI is the word latched by the last LO read of the same counter.
  preset_counter(d, kCntWriteErrors, 0x1FFFFFFFEull);
  preset_counter(d, kCntReadErrors, 0x1FFFFFFFEull);
  EXPECT_EQ(tb.rd(cnt_lo(kCntWriteErrors)), 0xFFFFFFFEu);
  pulses(4);  // both now 0x2_0000_0002
  EXPECT_EQ(tb.rd(cnt_lo(kCntReadErrors)), 2u);
  EXPECT_EQ(tb.rd(cnt_hi(kCntWriteErrors)), 1u) << "HI must be the word latched by its LO read";
  EXPECT_EQ(tb.rd(cnt_hi(kCntReadErrors)), 2u);
  EXPECT_EQ(tb.rd(cnt_lo(kCntWriteErrors)), 2u);
  EXPECT_EQ(tb.rd(cnt_hi(kCntWriteErrors)), 2u);
}

// ---- reset -------------------------------------------------------------------------------------

// The network side's window [0x400, 0x500) (hw.def NET_* rows) is decoded by another block on the
// ext_* port: each write there pulses ext_wr_o once with its offset, data and strobes and is answered
// from ext_whit_i; each read pulses ext_rd_o once in its first cycle and returns ext_rdata_i /
// ext_rhit_i of the next. A model block here answers for a pattern of hit and missed offsets.
TEST_F(Regs, NetWindowGoesToTheExtPort) {
  constexpr std::uint32_t kBase = 0x400;
  const auto hit = [](unsigned off) { return off % 12 != 4; };
  std::array<std::uint32_t, 64> mem{};
  struct ExtWr {
    unsigned off;
    std::uint32_t data;
    unsigned strb;
  };
  std::vector<ExtWr> writes;
  std::vector<unsigned> reads;
  unsigned last_raddr = 0;
  tb_.drive_hook = [&](Vrnic_regs& d, std::uint64_t) {
    d.ext_whit_i = hit(d.ext_waddr_o);
    d.ext_rhit_i = hit(last_raddr);
    d.ext_rdata_i = hit(last_raddr) ? mem[last_raddr / 4] : 0;
  };
  tb_.sample_hook = [&](const Vrnic_regs& d, std::uint64_t) {
    if (d.ext_wr_o) {
      writes.push_back({d.ext_waddr_o, d.ext_wdata_o, d.ext_wstrb_o});
      if (hit(d.ext_waddr_o)) {
        std::uint32_t m = 0;
        for (unsigned b = 0; b < 4; ++b)
          if ((d.ext_wstrb_o >> b) & 1u) m |= 0xFFu << (8 * b);
        mem[d.ext_waddr_o / 4] = (mem[d.ext_waddr_o / 4] & ~m) | (d.ext_wdata_o & m);
      }
    }
    if (d.ext_rd_o) {
      reads.push_back(d.ext_raddr_o);
      last_raddr = d.ext_raddr_o;
    }
  };
  for (unsigned off = 0; off < 0x100; off += 4) {
    const std::uint32_t v = tb_.rand32();
    const auto strb = static_cast<std::uint8_t>(tb_.uniform(1, 15));
    writes.clear();
    const AxiResult w = tb_.write(A(kBase + off + static_cast<std::uint32_t>(tb_.uniform(0, 3))), v, strb);
    EXPECT_EQ(w.resp, hit(off) ? kOkay : kSlvErr) << "write 0x" << std::hex << kBase + off;
    ASSERT_EQ(writes.size(), 1u) << "write 0x" << std::hex << kBase + off;
    EXPECT_EQ(writes[0].off, off);
    EXPECT_EQ(writes[0].data, v);
    EXPECT_EQ(writes[0].strb, strb);
    reads.clear();
    const AxiResult r = tb_.read(A(kBase + off));
    ASSERT_EQ(reads.size(), 1u) << "read 0x" << std::hex << kBase + off;
    EXPECT_EQ(reads[0], off);
    EXPECT_EQ(r.resp, hit(off) ? kOkay : kSlvErr) << "read 0x" << std::hex << kBase + off;
    EXPECT_EQ(r.data, hit(off) ? mem[off / 4] : 0u) << "read 0x" << std::hex << kBase + off;
    if (::testing::Test::HasFailure()) return;
  }
  // Next to the window: not forwarded, SLVERR as before.
  writes.clear();
  reads.clear();
  for (std::uint32_t a : {kBase - 4, kBase + 0x100}) {
    EXPECT_EQ(tb_.write(A(a), 1).resp, kSlvErr) << std::hex << a;
    EXPECT_EQ(tb_.read(A(a)).resp, kSlvErr) << std::hex << a;
  }
  EXPECT_TRUE(writes.empty());
  EXPECT_TRUE(reads.empty());
  EXPECT_TRUE(tb_.cmds.empty());
  EXPECT_TRUE(tb_.dbs.empty());
}

TEST_F(Regs, ResetClearsState) {
  Tb& tb = tb_;
  Vrnic_regs& d = tb.dut();
  random_timing();
  tb.wr(A(hw::kRegCMD), hw::kCmdSTAG_WRITE);
  wait_cmds(1);
  d.cmd_result_i = 0x00000155u;
  tb.pulse(d.cmd_done_i);
  d.cmd_result_i = 0;
  EXPECT_EQ(tb.rd(A(hw::kRegCMD_RESULT)), 0x155u);
  for (const RwReg& r : rw_regs()) tb.wr(r.addr, 0xFFFFFFFFu);
  tb.cmd_ready_p = 0.0;
  tb.wr(A(hw::kRegCMD), hw::kCmdSTREAM_ENABLE);
  d.seg_event_i = 1;
  tb.step(10);
  tb.clear_events();
  EXPECT_TRUE(d.cmd_valid_o);
  tb.reset();
  EXPECT_FALSE(d.cmd_valid_o);
  EXPECT_FALSE(d.db_valid_o);
  EXPECT_FALSE(d.cq_enable_o);
  EXPECT_FALSE(d.cq_reset_o);
  EXPECT_EQ(d.cq_base_o, 0u);
  EXPECT_EQ(d.cq_cons_o, 0u);
  EXPECT_EQ(d.cq_log2_o, 0u);
  for (const RwReg& r : rw_regs()) EXPECT_EQ(tb.rd(r.addr), 0u) << std::hex << r.addr;
  EXPECT_EQ(tb.rd(A(hw::kRegCMD_STATUS)), 0u);
  EXPECT_EQ(tb.rd(A(hw::kRegCMD_RESULT)), 0u);
  for (unsigned k = 0; k < kNumCounters; ++k) EXPECT_EQ(tb.rd(cnt_lo(k)), 0u) << "counter " << k;
}

}  // namespace
}  // namespace rnic::tb::regs
