// SPDX-License-Identifier: Apache-2.0
// Testbench harness for rnic_regs: clock/reset, an AXI4-Lite master with random AW/W order and
// delays and random bready/rready, sinks for the command and doorbell interfaces, and protocol
// monitors (valid held until ready, payload stable while waiting, no response without a request).
//
// Seed: RNIC_TEST_SEED=<n> reproduces a run (every test prints its seed). Waveform: RNIC_FST=<file>
// dumps an FST of the test (one test per run: use --gtest_filter).
#pragma once

#include <gtest/gtest.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wcast-align"
#pragma GCC diagnostic ignored "-Woverloaded-virtual"
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <verilated.h>
#include <verilated_fst_c.h>

#include "Vrnic_regs.h"
#include "rnic/tb/sim.hpp"
#pragma GCC diagnostic pop

#include <array>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace rnic::tb::regs {

inline constexpr std::uint32_t kOkay = 0;
inline constexpr std::uint32_t kSlvErr = 2;
inline constexpr unsigned kArgsOut = 10;  // words on cmd_args_o

using Args = std::array<std::uint32_t, kArgsOut>;

// Timing knobs of the AXI4-Lite master.
struct AxiTiming {
  unsigned max_aw_delay = 3;  // cycles before AWVALID rises (uniform 0..max)
  unsigned max_w_delay = 3;   // cycles before WVALID rises, independently: either order
  unsigned max_ar_delay = 2;
  double bready_p = 0.7;  // probability BREADY is high in a cycle
  double rready_p = 0.7;
};

struct CmdSeen {
  std::uint8_t op;
  Args args;
  std::uint64_t cycle;
};

struct DbSeen {
  std::uint16_t stream;
  std::uint8_t qn;
  std::uint32_t prod;
  std::uint64_t cycle;
};

struct AxiResult {
  std::uint32_t data = 0;
  std::uint32_t resp = 0xFF;
  std::uint64_t req_cycle = 0;   // AW/W (last of the two) or AR handshake
  std::uint64_t resp_cycle = 0;  // B or R handshake
};

class Tb {
 public:
  explicit Tb(std::uint64_t seed) : rng_(seed) {
    // Per-test context: Verilated::traceEverOn(true) would act on the thread's last context, which
    // a previous test may have destroyed, so tracing is enabled on this one.
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->traceEverOn(true);
    rnic::tb::make_current(ctx_.get());
    dut_ = std::make_unique<Vrnic_regs>(ctx_.get());
    if (const char* f = std::getenv("RNIC_FST")) {
      fst_ = std::make_unique<VerilatedFstC>();
      dut_->trace(fst_.get(), 99);
      fst_->open(f);
    }
    clear_inputs();
    reset();
  }
  ~Tb() {
    if (fst_) fst_->close();
    rnic::tb::make_current(ctx_.get());
    dut_->final();
    dut_.reset();
  }
  Tb(const Tb&) = delete;
  Tb& operator=(const Tb&) = delete;

  Vrnic_regs& dut() { return *dut_; }
  std::mt19937_64& rng() { return rng_; }
  std::uint64_t cycle() const { return cycle_; }

  std::uint64_t uniform(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
  }
  std::uint32_t rand32() { return static_cast<std::uint32_t>(rng_()); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  // ---- environment knobs ------------------------------------------------------------------------
  AxiTiming timing;
  double cmd_ready_p = 1.0;  // cmd_ready_i probability per cycle
  double db_ready_p = 1.0;   // db_ready_i probability per cycle
  // Called every cycle before the design is evaluated; drives event inputs (and anything else).
  std::function<void(Vrnic_regs&, std::uint64_t cycle)> drive_hook;
  // Called every cycle after evaluation, before the clock edge (handshakes of this cycle visible).
  std::function<void(const Vrnic_regs&, std::uint64_t cycle)> sample_hook;

  // ---- recorded outputs ------------------------------------------------------------------------
  std::vector<CmdSeen> cmds;
  std::vector<DbSeen> dbs;
  std::vector<std::uint64_t> cq_reset_cycles;  // cycles with cq_reset_o high

  void clear_inputs() {
    Vrnic_regs& d = *dut_;
    d.clk_i = 0;
    d.rst_ni = 0;
    d.s_axi_awaddr_i = 0;
    d.s_axi_awvalid_i = 0;
    d.s_axi_wdata_i = 0;
    d.s_axi_wstrb_i = 0;
    d.s_axi_wvalid_i = 0;
    d.s_axi_bready_i = 0;
    d.s_axi_araddr_i = 0;
    d.s_axi_arvalid_i = 0;
    d.s_axi_rready_i = 0;
    d.cmd_ready_i = 0;
    d.cmd_done_i = 0;
    d.cmd_refused_i = 0;
    d.fence_done_i = 0;
    d.cmd_result_i = 0;
    d.db_ready_i = 0;
    d.cq_prod_i = 0;
    clear_events();
  }

  void clear_events() {
    Vrnic_regs& d = *dut_;
    d.seg_event_i = 0;
    d.bytes_event_i = 0;
    d.bytes_i = 0;
    d.msg_event_i = 0;
    d.drop_event_i = 0;
    d.access_event_i = 0;
    d.dup_event_i = 0;
    d.write_err_event_i = 0;
    d.read_err_event_i = 0;
    d.error_event_i = 0;
    d.error_idx_i = 0;
    d.order_err_event_i = 0;
  }

  void reset(unsigned cycles = 4) {
    dut_->rst_ni = 0;
    in_reset_ = true;
    step(cycles);
    dut_->rst_ni = 1;
    in_reset_ = false;
    step(1);
  }

  // One clock cycle: drive, evaluate, sample/check, rising edge.
  void step(unsigned n = 1) {
    for (unsigned i = 0; i < n; ++i) one_cycle();
  }

  // Drive a one-cycle pulse on an input (set, step, clear).
  void pulse(CData& sig) {
    sig = 1;
    step();
    sig = 0;
  }

  // ---- AXI4-Lite master ----------------------------------------------------------------------
  void start_write(std::uint16_t addr, std::uint32_t data, std::uint8_t strb = 0xF) {
    ASSERT_FALSE(wr_.active) << "write already in flight";
    wr_ = WrTxn{};
    wr_.active = true;
    wr_.addr = addr;
    wr_.data = data;
    wr_.strb = strb;
    wr_.aw_at = cycle_ + uniform(0, timing.max_aw_delay);
    wr_.w_at = cycle_ + uniform(0, timing.max_w_delay);
  }
  void start_read(std::uint16_t addr) {
    ASSERT_FALSE(rd_.active) << "read already in flight";
    rd_ = RdTxn{};
    rd_.active = true;
    rd_.addr = addr;
    rd_.ar_at = cycle_ + uniform(0, timing.max_ar_delay);
  }
  bool write_busy() const { return wr_.active; }
  bool read_busy() const { return rd_.active; }
  const AxiResult& write_result() const { return wr_.result; }
  const AxiResult& read_result() const { return rd_.result; }

  // Steps until the started write/read finished (fails the test on timeout).
  void wait_idle(unsigned max_cycles = 2000) {
    unsigned n = 0;
    while ((wr_.active || rd_.active) && n++ < max_cycles) step();
    EXPECT_FALSE(wr_.active || rd_.active) << "AXI-Lite transaction timed out at cycle " << cycle_;
  }

  AxiResult write(std::uint16_t addr, std::uint32_t data, std::uint8_t strb = 0xF) {
    start_write(addr, data, strb);
    wait_idle();
    return wr_.result;
  }
  AxiResult read(std::uint16_t addr) {
    start_read(addr);
    wait_idle();
    return rd_.result;
  }
  // Write expecting OKAY; read expecting OKAY and returning the data.
  void wr(std::uint16_t addr, std::uint32_t data, std::uint8_t strb = 0xF) {
    AxiResult r = write(addr, data, strb);
    EXPECT_EQ(r.resp, kOkay) << "write 0x" << std::hex << addr;
  }
  std::uint32_t rd(std::uint16_t addr) {
    AxiResult r = read(addr);
    EXPECT_EQ(r.resp, kOkay) << "read 0x" << std::hex << addr;
    return r.data;
  }

  static Args args_of(const Vrnic_regs& d) {
    Args a{};
    for (unsigned i = 0; i < kArgsOut; ++i) a[i] = d.cmd_args_o[i];
    return a;
  }

 private:
  struct WrTxn {
    bool active = false;
    std::uint16_t addr = 0;
    std::uint32_t data = 0;
    std::uint8_t strb = 0;
    std::uint64_t aw_at = 0, w_at = 0;
    bool aw_done = false, w_done = false;
    AxiResult result;
  };
  struct RdTxn {
    bool active = false;
    std::uint16_t addr = 0;
    std::uint64_t ar_at = 0;
    bool ar_done = false;
    AxiResult result;
  };

  void drive() {
    Vrnic_regs& d = *dut_;
    // Payload is garbage whenever valid is low: the design must not sample it then.
    const bool awv = wr_.active && !wr_.aw_done && cycle_ >= wr_.aw_at;
    const bool wv = wr_.active && !wr_.w_done && cycle_ >= wr_.w_at;
    const bool arv = rd_.active && !rd_.ar_done && cycle_ >= rd_.ar_at;
    d.s_axi_awvalid_i = awv;
    d.s_axi_awaddr_i = awv ? wr_.addr : static_cast<std::uint16_t>(rng_());
    d.s_axi_wvalid_i = wv;
    d.s_axi_wdata_i = wv ? wr_.data : rand32();
    d.s_axi_wstrb_i = wv ? wr_.strb : static_cast<std::uint8_t>(rng_() & 0xF);
    d.s_axi_arvalid_i = arv;
    d.s_axi_araddr_i = arv ? rd_.addr : static_cast<std::uint16_t>(rng_());
    d.s_axi_bready_i = chance(timing.bready_p);
    d.s_axi_rready_i = chance(timing.rready_p);
    d.cmd_ready_i = chance(cmd_ready_p);
    d.db_ready_i = chance(db_ready_p);
    if (drive_hook) drive_hook(d, cycle_);
  }

  void sample() {
    const Vrnic_regs& d = *dut_;
    if (in_reset_) {
      prev_ = Prev{};
      return;
    }
    // Protocol: a valid output held until its handshake, payload stable meanwhile.
    if (prev_.bvalid && !prev_.bready) {
      EXPECT_TRUE(d.s_axi_bvalid_o) << "BVALID dropped without BREADY at cycle " << cycle_;
      EXPECT_EQ(d.s_axi_bresp_o, prev_.bresp) << "BRESP changed while waiting, cycle " << cycle_;
    }
    if (prev_.rvalid && !prev_.rready) {
      EXPECT_TRUE(d.s_axi_rvalid_o) << "RVALID dropped without RREADY at cycle " << cycle_;
      EXPECT_EQ(d.s_axi_rdata_o, prev_.rdata) << "RDATA changed while waiting, cycle " << cycle_;
      EXPECT_EQ(d.s_axi_rresp_o, prev_.rresp) << "RRESP changed while waiting, cycle " << cycle_;
    }
    if (prev_.cmd_valid && !prev_.cmd_ready) {
      EXPECT_TRUE(d.cmd_valid_o) << "cmd_valid dropped without cmd_ready at cycle " << cycle_;
      EXPECT_EQ(d.cmd_op_o, prev_.cmd_op) << "cmd_op changed while waiting";
      EXPECT_EQ(args_of(d), prev_.cmd_args) << "cmd_args changed while waiting";
    }
    if (prev_.db_valid && !prev_.db_ready) {
      EXPECT_TRUE(d.db_valid_o) << "db_valid dropped without db_ready at cycle " << cycle_;
      EXPECT_EQ(d.db_stream_o, prev_.db_stream) << "db_stream changed while waiting";
      EXPECT_EQ(d.db_qn_o, prev_.db_qn) << "db_qn changed while waiting";
      EXPECT_EQ(d.db_prod_o, prev_.db_prod) << "db_prod changed while waiting";
    }

    // Write master.
    if (d.s_axi_awvalid_i && d.s_axi_awready_o) {
      wr_.aw_done = true;
      wr_.result.req_cycle = std::max(wr_.result.req_cycle, cycle_);
    }
    if (d.s_axi_wvalid_i && d.s_axi_wready_o) {
      wr_.w_done = true;
      wr_.result.req_cycle = std::max(wr_.result.req_cycle, cycle_);
    }
    if (d.s_axi_bvalid_o) {
      const bool requested = wr_.active && wr_.aw_done && wr_.w_done && wr_.result.req_cycle < cycle_;
      EXPECT_TRUE(requested) << "BVALID without a completed AW+W at cycle " << cycle_;
      if (d.s_axi_bready_i && wr_.active) {
        wr_.result.resp = d.s_axi_bresp_o;
        wr_.result.resp_cycle = cycle_;
        wr_.active = false;
      }
    }
    // Read master.
    if (d.s_axi_arvalid_i && d.s_axi_arready_o) {
      rd_.ar_done = true;
      rd_.result.req_cycle = cycle_;
    }
    if (d.s_axi_rvalid_o) {
      const bool requested = rd_.active && rd_.ar_done && rd_.result.req_cycle < cycle_;
      EXPECT_TRUE(requested) << "RVALID without an AR at cycle " << cycle_;
      if (d.s_axi_rready_i && rd_.active) {
        rd_.result.data = d.s_axi_rdata_o;
        rd_.result.resp = d.s_axi_rresp_o;
        rd_.result.resp_cycle = cycle_;
        rd_.active = false;
      }
    }

    // Sinks.
    if (d.cmd_valid_o && d.cmd_ready_i) cmds.push_back({d.cmd_op_o, args_of(d), cycle_});
    if (d.db_valid_o && d.db_ready_i) {
      dbs.push_back({d.db_stream_o, d.db_qn_o, d.db_prod_o, cycle_});
    }
    if (d.cq_reset_o) cq_reset_cycles.push_back(cycle_);

    if (sample_hook) sample_hook(d, cycle_);

    prev_.bvalid = d.s_axi_bvalid_o;
    prev_.bready = d.s_axi_bready_i;
    prev_.bresp = d.s_axi_bresp_o;
    prev_.rvalid = d.s_axi_rvalid_o;
    prev_.rready = d.s_axi_rready_i;
    prev_.rdata = d.s_axi_rdata_o;
    prev_.rresp = d.s_axi_rresp_o;
    prev_.cmd_valid = d.cmd_valid_o;
    prev_.cmd_ready = d.cmd_ready_i;
    prev_.cmd_op = d.cmd_op_o;
    prev_.cmd_args = args_of(d);
    prev_.db_valid = d.db_valid_o;
    prev_.db_ready = d.db_ready_i;
    prev_.db_stream = d.db_stream_o;
    prev_.db_qn = d.db_qn_o;
    prev_.db_prod = d.db_prod_o;
  }

  void one_cycle() {
    drive();
    dut_->clk_i = 0;
    dut_->eval();
    sample();
    if (fst_) fst_->dump(ctx_->time());
    ctx_->timeInc(1);
    dut_->clk_i = 1;
    dut_->eval();
    if (fst_) fst_->dump(ctx_->time());
    ctx_->timeInc(1);
    ++cycle_;
  }

  struct Prev {
    bool bvalid = false, bready = false, rvalid = false, rready = false;
    std::uint32_t bresp = 0, rdata = 0, rresp = 0;
    bool cmd_valid = false, cmd_ready = false;
    std::uint8_t cmd_op = 0;
    Args cmd_args{};
    bool db_valid = false, db_ready = false;
    std::uint16_t db_stream = 0;
    std::uint8_t db_qn = 0;
    std::uint32_t db_prod = 0;
  };

  std::mt19937_64 rng_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vrnic_regs> dut_;
  std::unique_ptr<VerilatedFstC> fst_;
  std::uint64_t cycle_ = 0;
  bool in_reset_ = false;
  WrTxn wr_;
  RdTxn rd_;
  Prev prev_;
};

}  // namespace rnic::tb::regs
