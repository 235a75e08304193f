// SPDX-License-Identifier: Apache-2.0
// rnic_assert.svh: the assertion macros of the RTL (docs/rtl-architecture.md, "Rules the RTL
// asserts"). Each module states its promises next to the logic that keeps them:
//   `RNIC_ASSERT(name, clk, rst_n, property)      a property of the values before each clk edge,
//                                                  checked on every edge outside reset
//   `RNIC_ASSERT_HOLD(name, clk, rst_n, valid, ready, payload)
//                                                  valid/ready handshake: once valid is up and ready
//                                                  is not, valid stays up and payload stays stable
//                                                  in the next cycle (AXI A3.3.1, AXI-Stream 2.2.1)
// Every Verilated model checks them (--assert: every rtl test and rnic-sim); a failure prints
// "rnic assertion failed" with the assertion's hierarchical name and stops the simulation.
// Synthesis and the proofs do not see them: the macros expand to nothing where SYNTHESIS is defined
// (synthesis, the netlist flow: no checker logic on the card) or FORMAL is (read_verilog -formal: the
// formal harnesses of tb/formal state their own properties).
`ifndef RNIC_ASSERT_SVH
`define RNIC_ASSERT_SVH

`ifdef SYNTHESIS
`define RNIC_ASSERT_OFF
`endif
`ifdef FORMAL
`define RNIC_ASSERT_OFF
`endif

`ifndef RNIC_ASSERT_OFF
// Both are immediate assertions in a clocked block named after the assertion, not concurrent SVA: an
// always_ff body reads every signal's value from before the edge, which is what a concurrent property
// samples, and Verilator then keeps no sampled copy of every signal a property names, which it
// refreshes on every eval() (issue 31: a fifth of the simulation time). A_HOLD keeps its own copy of
// the stall and the payload: the property "(valid && !ready) |=> (valid && $stable(payload))" with
// "disable iff (!rst_n)" at both cycles.
`define RNIC_ASSERT(name, clk, rst_n, prop) \
  always_ff @(posedge clk) begin : name \
    if (rst_n) begin \
      assert (prop) else $error("rnic assertion failed: %m"); \
    end \
  end
`define RNIC_ASSERT_HOLD(name, clk, rst_n, valid, ready, payload) \
  logic name``_stall_q; \
  logic [$bits(payload)-1:0] name``_payload_q; \
  always_ff @(posedge clk) begin : name \
    name``_stall_q <= (rst_n) && (valid) && !(ready); \
    name``_payload_q <= (payload); \
    if ((rst_n) && name``_stall_q) begin \
      assert ((valid) && (payload) == name``_payload_q) else $error("rnic assertion failed: %m"); \
    end \
  end
`else
`define RNIC_ASSERT(name, clk, rst_n, prop)
`define RNIC_ASSERT_HOLD(name, clk, rst_n, valid, ready, payload)
`endif

`endif  // RNIC_ASSERT_SVH
