// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
// Synchronous first-word-fall-through FIFO. Depth is a power of two; the storage is a flat RAM
// (`logic [Width-1:0] mem [Depth]`) so synthesis maps deep FIFOs to block RAM.
//
// The RAM has a registered read port whose address is the read pointer of the NEXT cycle, so the
// oldest entry always sits in the read register (first word fall through) and a pop every cycle
// needs no extra latency. An entry written into the slot that is about to be read (FIFO empty after
// this cycle's pop) is not yet in the RAM when the read happens: a bypass register holds it
// instead.
module rnic_fifo #(
  parameter int Width = 8,   // bits per entry
  parameter int Depth = 16   // entries, a power of two >= 2
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic [Width-1:0]       in_data_i,
  input  logic                   in_valid_i,
  output logic                   in_ready_o,
  output logic [Width-1:0]       out_data_o,
  output logic                   out_valid_o,
  input  logic                   out_ready_i,
  output logic [$clog2(Depth):0] count_o     // entries held, for monitoring
);
  localparam int AddrW = $clog2(Depth);

  initial begin
    if (Depth < 2 || (Depth & (Depth - 1)) != 0)
      $fatal(1, "rnic_fifo: Depth must be a power of two >= 2");
    if (Width < 1) $fatal(1, "rnic_fifo: Width must be >= 1");
  end

  logic [Width-1:0] mem [Depth];

  logic [AddrW-1:0] wr_ptr_d, wr_ptr_q, rd_ptr_d, rd_ptr_q;
  logic [AddrW:0]   count_d, count_q;
  logic             bypass_d, bypass_q;
  logic             full_d, full_q, nempty_d, nempty_q;  // count_q == Depth, count_q != 0
  logic [Width-1:0] bypass_data_q, rd_data_q;
  logic             push, pop;

  // in_ready_o and out_valid_o are flip-flops (the depth budget: the stages on both sides start
  // their handshakes from registers); their next values come from compares of count_q, selected by
  // the push and the pop.
  assign in_ready_o  = !full_q;
  assign out_valid_o = nempty_q;
  assign out_data_o  = bypass_q ? bypass_data_q : rd_data_q;
  assign count_o     = count_q;

  assign push = in_valid_i && in_ready_o;
  assign pop  = out_valid_o && out_ready_i;

  always_comb begin
    wr_ptr_d = wr_ptr_q;
    rd_ptr_d = rd_ptr_q;
    count_d  = count_q;
    if (push) wr_ptr_d = wr_ptr_q + 1'b1;
    if (pop) rd_ptr_d = rd_ptr_q + 1'b1;
    if (push && !pop) count_d = count_q + 1'b1;
    if (pop && !push) count_d = count_q - 1'b1;
    full_d   = full_q;
    nempty_d = nempty_q;
    if (push && !pop) begin
      full_d   = count_q == (AddrW + 1)'(Depth - 1);
      nempty_d = 1'b1;
    end
    if (pop && !push) begin
      full_d   = 1'b0;
      nempty_d = count_q != (AddrW + 1)'(1);
    end
    // Writing the slot read next: only when the FIFO is empty after this cycle's pop (the write
    // pointer equals the next read pointer exactly then).
    bypass_d = push && (pop ? count_q == (AddrW + 1)'(1) : count_q == '0);
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      wr_ptr_q <= '0;
      rd_ptr_q <= '0;
      count_q  <= '0;
      bypass_q <= 1'b0;
      full_q   <= 1'b0;
      nempty_q <= 1'b0;
    end else begin
      wr_ptr_q <= wr_ptr_d;
      rd_ptr_q <= rd_ptr_d;
      count_q  <= count_d;
      bypass_q <= bypass_d;
      full_q   <= full_d;
      nempty_q <= nempty_d;
    end
  end

  // RAM write port.
  always_ff @(posedge clk_i) begin
    if (push) mem[wr_ptr_q] <= in_data_i;
  end

  // RAM registered read port (block RAM output register) and the bypass data; no reset needed.
  always_ff @(posedge clk_i) begin
    rd_data_q <= mem[rd_ptr_d];
  end

  always_ff @(posedge clk_i) begin
    if (push) bypass_data_q <= in_data_i;
  end

  // ---- Assertions (rtl/rnic_assert.svh) -----------------------------------------------------------
  // Never overflows nor underflows; the count is the pointers' distance; the head entry and its
  // valid hold while the reader is not ready (AXI-Stream 2.2.1).
  `RNIC_ASSERT(a_no_overflow, clk_i, rst_ni, !(push && !pop && count_q == Depth[AddrW:0]))
  `RNIC_ASSERT(a_no_underflow, clk_i, rst_ni, !(pop && count_q == '0))
  `RNIC_ASSERT(a_count_bound, clk_i, rst_ni, count_q <= Depth[AddrW:0])
  `RNIC_ASSERT(a_count_ptrs, clk_i, rst_ni, count_q[AddrW-1:0] == AddrW'(wr_ptr_q - rd_ptr_q))
  `RNIC_ASSERT(a_flags, clk_i, rst_ni, full_q == (count_q == Depth[AddrW:0]) && nempty_q == (count_q != '0))
  `RNIC_ASSERT_HOLD(a_out_hold, clk_i, rst_ni, out_valid_o, out_ready_i, out_data_o)
endmodule
