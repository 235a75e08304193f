// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
// rnic_rx_lookup's stream table (issue 12: lookup split into units): per DDP stream its state
// (RNIC_STREAM_*), protection domain and, PENDING, the DDP-SSN its error waits at. Two request/response ports:
//   read   one read per cycle, always taken: the entry of rd_stream_i is answered in the next cycle
//          (rsp_*) from the RAM's output register, with the writes the read missed forwarded: the
//          write of the read's own cycle and the write of the answer's cycle. So an answer always
//          holds the entry as written up to and including its own cycle. A stream index at or beyond
//          NumStreams answers RNIC_STREAM_TORN_DOWN (it would alias an entry of the RAM).
//   write  one write per cycle, always taken: the entry (state, PD, DDP-SSN) of wr_stream_i.
//   tx     (TxPort = 1) the transmit gather's read port (issue 35): the state and PD of tx_stream_i one cycle later,
//          from a second copy of the RAM that every write reaches one cycle after the table (a read
//          answers the writes up to two cycles before its own); a stream index at or beyond NumStreams
//          answers TORN_DOWN.
// Nothing is cleared by reset: the owner (lookup's reset walk) writes every entry.
module rnic_lookup_stream #(
  parameter int NumStreams = 256,  // 1..65536
  parameter int TxPort     = 0     // 1: the transmit read port and its RAM copy
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic [15:0] rd_stream_i,
  output logic [1:0]  rsp_state_o,
  output logic [15:0] rsp_pd_o,
  output logic [15:0] rsp_essn_o,
  input  logic        wr_valid_i,
  input  logic [15:0] wr_stream_i,
  input  logic [1:0]  wr_state_i,
  input  logic [15:0] wr_pd_i,
  input  logic [15:0] wr_essn_i,
  input  logic [15:0] tx_stream_i,
  output logic [1:0]  tx_state_o,
  output logic [15:0] tx_pd_o
);
  localparam int Iw = NumStreams > 1 ? $clog2(NumStreams) : 1;
  localparam int StState = 0, StPd = 2, StEssn = 18, StW = 34;  // entry word (flat: see toolchain notes)

  initial begin
    if (NumStreams < 1 || NumStreams > 65536) $fatal(1, "rnic_lookup_stream: NumStreams must be 1..65536");
  end

  logic [StW-1:0] mem [NumStreams];
  logic [StW-1:0] rdata, wdata, last_data_q, entry;
  logic [15:0]    rd_stream_q;
  logic [Iw-1:0]  raddr, waddr, last_addr_q;
  logic           last_q;

  assign raddr = rd_stream_i[Iw-1:0];
  assign waddr = wr_stream_i[Iw-1:0];
  always_comb begin
    wdata = '0;
    wdata[StState +: 2] = wr_state_i;
    wdata[StPd +: 16] = wr_pd_i;
    wdata[StEssn +: 16] = wr_essn_i;
  end

  always_ff @(posedge clk_i) begin
    if (wr_valid_i) mem[waddr] <= wdata;
    rdata <= mem[raddr];
  end
  always_ff @(posedge clk_i) begin
    rd_stream_q <= rd_stream_i;
    last_q <= rst_ni && wr_valid_i;  // the write of the read's cycle (the RAM read missed it)
    last_addr_q <= waddr;
    last_data_q <= wdata;
  end

  always_comb begin
    entry = rdata;
    if (last_q && last_addr_q == rd_stream_q[Iw-1:0]) entry = last_data_q;
    if (wr_valid_i && waddr == rd_stream_q[Iw-1:0]) entry = wdata;
  end
  assign rsp_state_o = {16'b0, rd_stream_q} < NumStreams ? entry[StState +: 2] : 2'(RNIC_STREAM_TORN_DOWN);
  assign rsp_pd_o = entry[StPd +: 16];
  assign rsp_essn_o = entry[StEssn +: 16];
  if (TxPort == 1) begin : g_tx
    logic [17:0] tx_mem [NumStreams];  // the transmit port's copy: state and PD
    logic [17:0] tx_rdata;
    logic [15:0] tx_stream_q;
    // The copy is written one cycle after the table, from registers (the write's address and enable
    // logic ends at flip-flops: the depth budget).
    logic          tw_q;
    logic [Iw-1:0] twa_q;
    logic [17:0]   twd_q;
    always_ff @(posedge clk_i) begin
      if (!rst_ni) tw_q <= 1'b0;
      else tw_q <= wr_valid_i;
    end
    always_ff @(posedge clk_i) begin
      twa_q <= waddr;
      twd_q <= wdata[17:0];
      if (tw_q) tx_mem[twa_q] <= twd_q;
      tx_rdata <= tx_mem[tx_stream_i[Iw-1:0]];
      tx_stream_q <= tx_stream_i;
    end
    assign tx_state_o = {16'b0, tx_stream_q} < NumStreams ? tx_rdata[StState +: 2] : 2'(RNIC_STREAM_TORN_DOWN);
    assign tx_pd_o = tx_rdata[StPd +: 16];
  end else begin : g_no_tx
    assign tx_state_o = 2'(RNIC_STREAM_TORN_DOWN);
    assign tx_pd_o = '0;
    logic unused_tx;
    assign unused_tx = ^tx_stream_i;
  end
  logic unused_hi;  // a write's index bits above the table's (the owner writes only indexes in range)
  assign unused_hi = ^wr_stream_i;
endmodule
