// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
// Two AXI4 read masters onto one read port (issue 35: m_axi_gmem carries lookup's receive-descriptor
// fetches, s0, and the transmit gather's payload reads, s1). AXI4 without IDs: the slave answers
// bursts in the order it took them, so a FIFO of the issuer of every burst taken routes the R beats
// (popped at RLAST).
//   AR   round robin between the two when both ask; the chosen AR is registered (m_ar* are flip-flops)
//        and held until ARREADY; a new one is loaded only into an empty register, so s*_arready are
//        functions of flip-flops and the other side's ARVALID (one AR per two cycles at most: bursts
//        are many beats). An AR is taken only with room in the route FIFO.
//   R    the FIFO's head names the issuer: RVALID goes to it, RREADY comes from it; the other sees
//        RVALID 0. An R beat with the FIFO empty (a slave that answers what it was never asked) is not
//        taken (RREADY 0) and raises error_o.
// Each master meets flip-flops only (the logic-depth budget: neither master's AR or R logic reaches
// through the arbiter into the other's): its AR goes through a skid buffer (rnic_skid: ARREADY
// registered, no latency), its R beats through a register slice (rnic_slice: RVALID, RDATA, RRESP,
// RLAST registered, one cycle of latency).
module rnic_axi_rd_mux #(
  parameter int DataWidth = 512,
  parameter int Depth     = 32  // bursts outstanding (power of two)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic [63:0]          s0_araddr_i,
  input  logic [7:0]           s0_arlen_i,
  input  logic                 s0_arvalid_i,
  output logic                 s0_arready_o,
  output logic [DataWidth-1:0] s0_rdata_o,
  output logic [1:0]           s0_rresp_o,
  output logic                 s0_rlast_o,
  output logic                 s0_rvalid_o,
  input  logic                 s0_rready_i,
  input  logic [63:0]          s1_araddr_i,
  input  logic [7:0]           s1_arlen_i,
  input  logic                 s1_arvalid_i,
  output logic                 s1_arready_o,
  output logic [DataWidth-1:0] s1_rdata_o,
  output logic [1:0]           s1_rresp_o,
  output logic                 s1_rlast_o,
  output logic                 s1_rvalid_o,
  input  logic                 s1_rready_i,
  output logic [63:0]          m_araddr_o,
  output logic [7:0]           m_arlen_o,
  output logic                 m_arvalid_o,
  input  logic                 m_arready_i,
  input  logic [DataWidth-1:0] m_rdata_i,
  input  logic [1:0]           m_rresp_i,
  input  logic                 m_rlast_i,
  input  logic                 m_rvalid_i,
  output logic                 m_rready_o,
  output logic                 error_o   // sticky: an R beat came with no burst outstanding
);
  localparam int Cw = $clog2(Depth) + 1;

  // ---- the masters' ARs through skid buffers ----------------------------------------------------
  logic        a0_valid, a1_valid, a0_ready, a1_ready;
  logic [63:0] a0_addr, a1_addr;
  logic [7:0]  a0_len, a1_len;
  rnic_skid #(.Width(72)) u_ar0 (
    .clk_i, .rst_ni,
    .in_data_i({s0_arlen_i, s0_araddr_i}), .in_valid_i(s0_arvalid_i), .in_ready_o(s0_arready_o),
    .out_data_o({a0_len, a0_addr}), .out_valid_o(a0_valid), .out_ready_i(a0_ready));
  rnic_skid #(.Width(72)) u_ar1 (
    .clk_i, .rst_ni,
    .in_data_i({s1_arlen_i, s1_araddr_i}), .in_valid_i(s1_arvalid_i), .in_ready_o(s1_arready_o),
    .out_data_o({a1_len, a1_addr}), .out_valid_o(a1_valid), .out_ready_i(a1_ready));

  // ---- AR ----------------------------------------------------------------------------------------
  logic        ar_v_q, last_q;  // last_q: the side the last AR came from (round robin)
  logic [63:0] ar_addr_q;
  logic [7:0]  ar_len_q;
  logic        room, pick1, load;
  logic        f_in_ready, f_out_valid, f_head, f_pop;
  logic [Cw-1:0] f_count;
  assign room  = f_count < Cw'(Depth);
  // s1 when it asks and s0 does not, or both ask and s0 had the last one
  assign pick1 = a1_valid && (!a0_valid || !last_q);
  assign load  = !ar_v_q && room && (a0_valid || a1_valid);
  assign a0_ready = !ar_v_q && room && !pick1;
  assign a1_ready = !ar_v_q && room && pick1;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ar_v_q <= 1'b0;
      last_q <= 1'b0;
    end else begin
      if (load) begin
        ar_v_q <= 1'b1;
        last_q <= pick1;
      end else if (m_arready_i) begin
        ar_v_q <= 1'b0;
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (load) begin
      ar_addr_q <= pick1 ? a1_addr : a0_addr;
      ar_len_q  <= pick1 ? a1_len : a0_len;
    end
  end
  assign m_araddr_o  = ar_addr_q;
  assign m_arlen_o   = ar_len_q;
  assign m_arvalid_o = ar_v_q;

  // ---- the route FIFO: pushed when a burst is loaded (the register's AR is counted from then on) ----
  rnic_fifo #(.Width(1), .Depth(Depth)) u_route (
    .clk_i, .rst_ni,
    .in_data_i(pick1), .in_valid_i(load), .in_ready_o(f_in_ready),
    .out_data_o(f_head), .out_valid_o(f_out_valid), .out_ready_i(f_pop),
    .count_o(f_count));

  // ---- R -----------------------------------------------------------------------------------------
  localparam int RW = DataWidth + 3;  // {last, resp, data}
  logic          r0_ready, r1_ready;
  logic [RW-1:0] r0_out, r1_out;
  rnic_slice #(.Width(RW)) u_r0 (
    .clk_i, .rst_ni,
    .in_data_i({m_rlast_i, m_rresp_i, m_rdata_i}), .in_valid_i(m_rvalid_i && f_out_valid && !f_head),
    .in_ready_o(r0_ready),
    .out_data_o(r0_out), .out_valid_o(s0_rvalid_o), .out_ready_i(s0_rready_i));
  rnic_slice #(.Width(RW)) u_r1 (
    .clk_i, .rst_ni,
    .in_data_i({m_rlast_i, m_rresp_i, m_rdata_i}), .in_valid_i(m_rvalid_i && f_out_valid && f_head),
    .in_ready_o(r1_ready),
    .out_data_o(r1_out), .out_valid_o(s1_rvalid_o), .out_ready_i(s1_rready_i));
  assign {s0_rlast_o, s0_rresp_o, s0_rdata_o} = r0_out;
  assign {s1_rlast_o, s1_rresp_o, s1_rdata_o} = r1_out;
  assign m_rready_o = f_out_valid && (f_head ? r1_ready : r0_ready);
  assign f_pop      = m_rvalid_i && m_rready_o && m_rlast_i;

  logic err_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) err_q <= 1'b0;
    else if (m_rvalid_i && !f_out_valid) err_q <= 1'b1;
  end
  assign error_o = err_q;

  logic unused;
  assign unused = f_in_ready;

  `RNIC_ASSERT(a_route_room, clk_i, rst_ni, !load || f_in_ready)
  `RNIC_ASSERT_HOLD(a_ar_hold, clk_i, rst_ni, m_arvalid_o, m_arready_i, {m_araddr_o, m_arlen_o})
endmodule
