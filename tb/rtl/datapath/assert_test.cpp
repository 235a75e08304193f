// SPDX-License-Identifier: Apache-2.0
// The RTL's assertions fire (issue 12): rnic_fifo with one deliberate defect, made at configure time
// from rtl/rnic_fifo.sv (tb/rtl/datapath/CMakeLists.txt): in_ready_o ignores a full FIFO. Pushing into
// the full FIFO must stop the simulation with a_no_overflow, the rule "the FIFO never overflows"
// (docs/rtl-architecture.md, "Rules the RTL asserts"). The unbroken FIFO runs the same kind of
// traffic in dp_fifo_*_test with the same assertions compiled in (--assert) and never fires.
#include "Vrnic_fifo.h"
#include "dp_harness.hpp"

namespace {

constexpr int kDepth = FIFO_DEPTH;

// Fills the broken FIFO without popping; `pushes` beyond its depth overflow it.
void push_without_pop(int pushes) {
  dp::verilator_reports_to_stderr();
  dp::Sim<Vrnic_fifo> sim;
  sim->in_valid_i = 0;
  sim->out_ready_i = 0;
  sim->in_data_i = 0;
  sim.reset();
  for (int i = 0; i < pushes; ++i) {
    sim->in_data_i = static_cast<CData>(i + 1);
    sim->in_valid_i = 1;
    sim.eval();
    sim.tick();
  }
  sim->in_valid_i = 0;
  sim.tick();
}

TEST(FifoAssertions, BrokenFifoHoldsWhileNotFull) {
  // Up to its depth the defect is invisible: no assertion fires, the head entry is the first push.
  EXPECT_EXIT(
      {
        push_without_pop(kDepth);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(FifoAssertions, OverflowFiresOnTheBrokenFifo) {
  // One push into the full FIFO: a_no_overflow stops the simulation and names itself.
  EXPECT_DEATH(push_without_pop(kDepth + 1), "rnic assertion failed: .*a_no_overflow");
}

}  // namespace
