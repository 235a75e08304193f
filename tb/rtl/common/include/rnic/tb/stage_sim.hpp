// SPDX-License-Identifier: Apache-2.0
// The clock harness of the unit testbenches (datapath, validate): a Verilated block with clk_i and
// rst_ni. The whole kernel (ap_clk / ap_rst_n) has rnic/tb/sim.hpp.
#pragma once

#include <verilated.h>
#include <verilated_fst_c.h>

#include "rnic/tb/sim.hpp"

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace rnic::tb {

// Clock, reset and optional FST trace (RNIC_FST=<file>) around a Verilated model with clk_i/rst_ni.
// Per cycle: set the inputs, call eval() and look at the outputs (combinational view of the cycle
// before the edge), then tick().
template <class M>
class StageSim {
 public:
  StageSim() : ctx_(std::make_unique<VerilatedContext>()) {
    const char* fst = std::getenv("RNIC_FST");
    const bool trace = fst != nullptr && *fst != '\0';
    if (trace) {
      Verilated::traceEverOn(true);
      ctx_->traceEverOn(true);
    }
    make_current(ctx_.get());
    m_ = std::make_unique<M>(ctx_.get(), "top");
    if (trace) {
      tfp_ = std::make_unique<VerilatedFstC>();
      m_->trace(tfp_.get(), 99);
      tfp_->open(fst);
    }
    m_->clk_i = 0;
    m_->rst_ni = 0;
    m_->eval();
  }
  StageSim(const StageSim&) = delete;
  StageSim& operator=(const StageSim&) = delete;
  ~StageSim() {
    if (tfp_) tfp_->close();
    make_current(ctx_.get());
    m_->final();
    m_.reset();
  }

  M* operator->() { return m_.get(); }
  M& model() { return *m_; }
  std::uint64_t cycle() const { return cycle_; }

  void eval() { m_->eval(); }

  void tick() {
    m_->clk_i = 0;
    m_->eval();
    if (tfp_) tfp_->dump(time_);
    time_ += 5;
    m_->clk_i = 1;
    m_->eval();
    if (tfp_) tfp_->dump(time_);
    time_ += 5;
    m_->clk_i = 0;
    m_->eval();
    ++cycle_;
  }

  // Holds rst_ni low for `cycles` edges (other inputs as the caller left them), then releases it.
  void reset(int cycles = 2) {
    m_->rst_ni = 0;
    for (int i = 0; i < cycles; ++i) tick();
    m_->rst_ni = 1;
    m_->eval();
  }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<M> m_;
  std::unique_ptr<VerilatedFstC> tfp_;
  std::uint64_t time_ = 0;
  std::uint64_t cycle_ = 0;
};

}  // namespace rnic::tb
