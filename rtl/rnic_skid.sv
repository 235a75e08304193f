// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
// A skid buffer: the valid/ready boundary between two stages with ready registered (issue 12: no
// combinational ready path runs through several stages). in_ready_o comes from a flip-flop, so the
// downstream stage's ready logic ends here instead of reaching into the upstream stage; valid and
// data pass through in the same cycle (no added latency) while the buffer is empty. An item offered
// while the downstream is not ready is taken into the buffer (in_ready_o was 1) and offered from
// there; the upstream waits (in_ready_o = 0) until the downstream takes it. One item per cycle at
// full rate: the buffer empties in the cycle the downstream takes it, and the next item passes
// through in the cycle after.
module rnic_skid #(
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
  logic             full_q;
  logic [Width-1:0] data_q;

  assign in_ready_o = !full_q;
  assign out_valid_o = full_q || in_valid_i;
  assign out_data_o = full_q ? data_q : in_data_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) full_q <= 1'b0;
    else if (full_q) full_q <= !out_ready_i;
    else full_q <= in_valid_i && !out_ready_i;
  end
  always_ff @(posedge clk_i) begin
    if (!full_q) data_q <= in_data_i;
  end

  // The upstream's item is never lost: offered while the buffer is full, it is held (AXI-Stream
  // 2.2.1 on the upstream's side); the output holds while valid and not ready.
  `RNIC_ASSERT_HOLD(a_out_hold, clk_i, rst_ni, out_valid_o, out_ready_i, out_data_o)
endmodule
