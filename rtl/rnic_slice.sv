// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
// A register slice: the valid/ready boundary with both directions registered (issue 12). out_data_o
// and out_valid_o come from flip-flops (the downstream stage starts from a register, not from the
// upstream's RAM read and bypass mux), in_ready_o too (a second register takes the item offered while
// the downstream is not ready). One item per cycle at full rate; one cycle of latency.
module rnic_slice #(
  parameter int Width = 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic [Width-1:0] in_data_i,
  input  logic             in_valid_i,
  output logic             in_ready_o,
  output logic [Width-1:0] out_data_o,
  output logic             out_valid_o,
  input  logic             out_ready_i
);
  logic             v_q, s_q;      // the output register holds an item; the skid register does
  logic [Width-1:0] data_q, skid_q;
  logic             move;          // the output register takes a new item (or empties) this cycle

  assign in_ready_o = !s_q;
  assign out_valid_o = v_q;
  assign out_data_o = data_q;
  assign move = out_ready_i || !v_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      v_q <= 1'b0;
      s_q <= 1'b0;
    end else if (move) begin
      v_q <= s_q || in_valid_i;
      s_q <= 1'b0;
    end else begin
      s_q <= s_q || in_valid_i;
    end
  end
  always_ff @(posedge clk_i) begin
    if (move) data_q <= s_q ? skid_q : in_data_i;
    if (!move && !s_q) skid_q <= in_data_i;
  end

  // The upstream's item is never lost: offered while both registers are full, it is held (AXI-Stream
  // 2.2.1 on the upstream's side); the output holds while valid and not ready.
  `RNIC_ASSERT_HOLD(a_out_hold, clk_i, rst_ni, out_valid_o, out_ready_i, out_data_o)
endmodule
