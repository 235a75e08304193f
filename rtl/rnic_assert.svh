// SPDX-License-Identifier: Apache-2.0
// rnic_assert.svh: the assertion macros of the RTL (docs/rtl-architecture.md, "Rules the RTL
// asserts"). Each module states its promises next to the logic that keeps them:
//   `RNIC_ASSERT(name, clk, rst_n, property)      a concurrent property, checked on every clk edge
//                                                  outside reset
//   `RNIC_ASSERT_HOLD(name, clk, rst_n, valid, ready, payload)
//                                                  valid/ready handshake: once valid is up and ready
//                                                  is not, valid stays up and payload stays stable
//                                                  in the next cycle (AXI A3.3.1, AXI-Stream 2.2.1)
// Every Verilated model checks them (--assert: every rtl test and rnic-sim); a failure prints
// "rnic assertion failed" with the assertion's hierarchical name and stops the simulation.
// Synthesis ignores them: Yosys rejects concurrent SVA, so the macros expand to nothing where
// SYNTHESIS is defined (synthesis, the netlist flow) or FORMAL is (read_verilog -formal: the formal
// harnesses of tb/formal state their own properties).
`ifndef RNIC_ASSERT_SVH
`define RNIC_ASSERT_SVH

`ifdef SYNTHESIS
`define RNIC_ASSERT_OFF
`endif
`ifdef FORMAL
`define RNIC_ASSERT_OFF
`endif

`ifndef RNIC_ASSERT_OFF
`define RNIC_ASSERT(name, clk, rst_n, prop) \
  name: assert property (@(posedge clk) disable iff (!(rst_n)) (prop)) \
    else $error("rnic assertion failed: %m");
`define RNIC_ASSERT_HOLD(name, clk, rst_n, valid, ready, payload) \
  name: assert property (@(posedge clk) disable iff (!(rst_n)) \
      ((valid) && !(ready)) |=> ((valid) && $stable(payload))) \
    else $error("rnic assertion failed: %m");
`else
`define RNIC_ASSERT(name, clk, rst_n, prop)
`define RNIC_ASSERT_HOLD(name, clk, rst_n, valid, ready, payload)
`endif

`endif  // RNIC_ASSERT_SVH
