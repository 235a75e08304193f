// SPDX-License-Identifier: Apache-2.0
// The handshake rule fires (RNIC_ASSERT_HOLD, rtl/rnic_assert.svh; AXI-Stream 2.2.1: once TVALID is up
// without TREADY, TVALID and the payload hold): rnic_slice with one deliberate defect, made at
// configure time from rtl/rnic_slice.sv (tb/rtl/datapath/CMakeLists.txt): its output register takes
// the next item although the downstream is not ready. The unbroken slice runs stalls in
// dp_slice_*_test with the same assertion compiled in (--assert) and never fires.
#include "Vrnic_slice.h"
#include "dp_harness.hpp"

namespace {

// Offers `items` distinct items to the broken slice while the downstream is never ready, then keeps
// offering the last one (the upstream holds it, as it must while not taken).
void offer_while_stalled(int items) {
  dp::verilator_reports_to_stderr();
  dp::Sim<Vrnic_slice> sim;
  sim->in_valid_i = 0;
  sim->out_ready_i = 0;
  sim->in_data_i = 0;
  sim.reset();
  for (int i = 0; i < items; ++i) {
    sim->in_data_i = static_cast<CData>(i + 1);
    sim->in_valid_i = 1;
    sim.eval();
    sim.tick();
  }
  sim.tick();
  sim.tick();
}

TEST(SliceAssertions, BrokenSliceHoldsWithOneItem) {
  // One item stalled at the output: the output is held (the next item has not come), nothing fires.
  EXPECT_EXIT(
      {
        offer_while_stalled(1);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(SliceAssertions, StallHoldFiresOnTheBrokenSlice) {
  // A second item replaces the stalled one: a_out_hold stops the simulation and names itself.
  EXPECT_DEATH(offer_while_stalled(2), "rnic assertion failed: .*a_out_hold");
}

}  // namespace
