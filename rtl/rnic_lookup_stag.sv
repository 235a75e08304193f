// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
// rnic_rx_lookup's STag table (issue 12: lookup split into units), with the key table.
// Two request/response ports:
//   read   rd_valid_i / rd_ready_o (always ready, one read per cycle): the STag's entry (index =
//          STag[31:8]) is answered one cycle later from the RAM's output register (rsp_*); rsp_hit_o
//          says the index is in range (StagEntries) and the entry valid. An out-of-range index never
//          hits (it would alias an entry of the RAM).
//   write  wr_valid_i / wr_ready_o: wr_set_i = 0 clears the entry (reset walk, STAG_INVALIDATE) in the
//          cycle it is taken; wr_set_i = 1 (STAG_WRITE) reads the index's key in the cycle it is
//          taken and, in the next, writes the entry (fields as taken) with key + 1 (mod 256) and
//          answers wr_done_o with the STag {index, key + 1} (wr_ready_o is 0 in that cycle).
// Keys: the key table holds each index's last key and is not cleared by reset, so an STag value is
// never issued twice in a row for an index, across owners, driver restarts and resets.
// A read in the cycle of a write to its entry answers the entry before the write.
// Transmit read port (issue 35, docs/transmit.md; TxPort = 1): tx_rd_i / tx_stag_i, always taken,
// answered one cycle later on tx_* from a second copy of the entry RAM that every write reaches one
// cycle after the table, with the local-read bit only it keeps (the gather's descriptor checks; a read
// answers the writes up to two cycles before its own). tx_hit_o as rsp_hit_o. With TxPort =
// 0 the port answers 0 (no entry valid) and the RAM is the receive side's alone.
module rnic_lookup_stag #(
  parameter int StagEntries = 4096,  // 2..65536
  parameter int TxPort      = 0      // 1: the transmit read port and its RAM copy (the network side)
) (
  input  logic                           clk_i,
  input  logic                           rst_ni,
  input  logic                           rd_valid_i,
  input  logic [31:0]                    rd_stag_i,
  output logic                           rd_ready_o,
  output logic                           rsp_valid_o,
  output logic                           rsp_hit_o,
  output logic [7:0]                     rsp_key_o,
  output logic [15:0]                    rsp_pd_o,
  output logic                           rsp_bound_o,
  output logic [15:0]                    rsp_stream_o,
  output logic                           rsp_remote_write_o,
  output logic                           rsp_remote_read_o,
  output logic [63:0]                    rsp_base_to_o,
  output logic [63:0]                    rsp_length_o,
  output logic [63:0]                    rsp_addr_o,
  input  logic                           wr_valid_i,
  input  logic                           wr_set_i,
  input  logic [$clog2(StagEntries)-1:0] wr_index_i,
  input  logic                           wr_remote_write_i,
  input  logic                           wr_remote_read_i,
  input  logic                           wr_local_read_i,
  input  logic                           wr_bound_i,
  input  logic [15:0]                    wr_pd_i,
  input  logic [15:0]                    wr_stream_i,
  input  logic [63:0]                    wr_base_to_i,
  input  logic [63:0]                    wr_length_i,
  input  logic [63:0]                    wr_addr_i,
  output logic                           wr_ready_o,
  output logic                           wr_done_o,
  output logic [31:0]                    wr_stag_o,
  input  logic                           tx_rd_i,
  input  logic [31:0]                    tx_stag_i,
  output logic                           tx_hit_o,
  output logic [7:0]                     tx_key_o,
  output logic                           tx_local_read_o,
  output logic [15:0]                    tx_pd_o,
  output logic                           tx_bound_o,
  output logic [15:0]                    tx_stream_o,
  output logic [63:0]                    tx_base_to_o,
  output logic [63:0]                    tx_length_o,
  output logic [63:0]                    tx_addr_o
);
  localparam int StagIw = $clog2(StagEntries);
  // Entry word (flat: Yosys miscompiles memories of structs).
  localparam int SeValid = 0, SeKey = 1, SePd = 9, SeBound = 25, SeStream = 26, SeRw = 42, SeRr = 43;
  localparam int SeBase = 44, SeLen = 108, SeAddr = 172, SeW = 236;

  initial begin
    if (StagEntries < 2 || StagEntries > 65536) $fatal(1, "rnic_lookup_stag: StagEntries must be 2..65536");
  end

  logic [SeW-1:0] stag_mem [StagEntries];
  (* ram_style = "block" *)  // as LUT RAM, Yosys 0.23 stops: "invalid OPTION_ABITS/WIDTH combination"
  logic [7:0]     key_mem [StagEntries];   // last key issued per index; reset leaves it alone

  // ---- read port
  logic [SeW-1:0] rdata;
  logic           rd_q;
  logic [23:0]    rd_index_q;               // the STag's index as read (range checked after the RAM)
  assign rd_ready_o = 1'b1;
  logic unused_low;  // the STag's key byte: the lookup compares it (validate), the table does not
  assign unused_low = ^rd_stag_i[7:0];
  always_ff @(posedge clk_i) begin
    if (rd_valid_i) begin
      rdata <= stag_mem[rd_stag_i[8 +: StagIw]];
      rd_index_q <= rd_stag_i[31:8];
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) rd_q <= 1'b0;
    else rd_q <= rd_valid_i;
  end
  assign rsp_valid_o = rd_q;
  assign rsp_hit_o = {8'b0, rd_index_q} < StagEntries && rdata[SeValid];
  assign rsp_key_o = rdata[SeKey +: 8];
  assign rsp_pd_o = rdata[SePd +: 16];
  assign rsp_bound_o = rdata[SeBound];
  assign rsp_stream_o = rdata[SeStream +: 16];
  assign rsp_remote_write_o = rdata[SeRw];
  assign rsp_remote_read_o = rdata[SeRr];
  assign rsp_base_to_o = rdata[SeBase +: 64];
  assign rsp_length_o = rdata[SeLen +: 64];
  assign rsp_addr_o = rdata[SeAddr +: 64];

  // ---- write port: a set holds its request for its second cycle
  logic              set_q;
  logic [StagIw-1:0] w_index_q;
  logic [SeW-1:0]    w_entry_q, entry_in;
  logic [7:0]        key_rdata, key_next;
  assign key_next = key_rdata + 8'd1;
  always_comb begin
    entry_in = '0;
    entry_in[SeValid] = 1'b1;
    entry_in[SeRw] = wr_remote_write_i;
    entry_in[SeRr] = wr_remote_read_i;
    entry_in[SeBound] = wr_bound_i;
    entry_in[SePd +: 16] = wr_pd_i;
    entry_in[SeStream +: 16] = wr_stream_i;
    entry_in[SeBase +: 64] = wr_base_to_i;
    entry_in[SeLen +: 64] = wr_length_i;
    entry_in[SeAddr +: 64] = wr_addr_i;
  end
  assign wr_ready_o = !set_q;

  logic              we;
  logic [StagIw-1:0] waddr;
  logic [SeW-1:0]    wdata;
  always_comb begin
    we = 1'b0;
    waddr = wr_index_i;
    wdata = '0;                             // a clear: the entry invalid
    if (set_q) begin
      we = 1'b1;
      waddr = w_index_q;
      wdata = w_entry_q;
      wdata[SeKey +: 8] = key_next;
    end else if (wr_valid_i && !wr_set_i) begin
      we = 1'b1;
    end
  end
  always_ff @(posedge clk_i) begin
    if (we) stag_mem[waddr] <= wdata;
  end
  always_ff @(posedge clk_i) begin
    if (set_q) key_mem[w_index_q] <= key_next;
    if (wr_valid_i && wr_ready_o && wr_set_i) key_rdata <= key_mem[wr_index_i];
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) set_q <= 1'b0;
    else set_q <= wr_valid_i && wr_ready_o && wr_set_i;
  end
  always_ff @(posedge clk_i) begin
    if (wr_valid_i && wr_ready_o && wr_set_i) begin
      w_index_q <= wr_index_i;
      w_entry_q <= entry_in;
    end
  end
  assign wr_done_o = set_q;
  assign wr_stag_o = {24'(w_index_q), key_next};
  // ---- transmit read port: a copy of the entry RAM with the local-read bit, written with every write
  if (TxPort == 1) begin : g_tx
    logic [SeW:0]   tx_mem [StagEntries];   // {local read, entry}
    logic [SeW:0]   tx_rdata;
    logic [23:0]    tx_index_q;
    logic           lr_q;                   // the set's local-read bit, for its second cycle
    always_ff @(posedge clk_i) begin
      if (wr_valid_i && wr_ready_o && wr_set_i) lr_q <= wr_local_read_i;
    end
    // The copy is written one cycle after the table, its enable from registered requests only (the
    // depth budget: the command logic before wr_valid_i ends at flip-flops): a clear taken in cycle T
    // (wr_valid_i, not wr_set_i, not set_q) in T + 1, a set's second cycle (set_q) one cycle later.
    logic              tv_q, ts_q, tset_q;
    logic [StagIw-1:0] twa_q;
    logic [SeW:0]      twd_q;
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        tv_q <= 1'b0;
        tset_q <= 1'b0;
      end else begin
        tv_q <= wr_valid_i;
        tset_q <= set_q;
      end
    end
    always_ff @(posedge clk_i) begin
      ts_q <= wr_set_i;
      twa_q <= waddr;
      twd_q <= {set_q && lr_q, wdata};
      if (tset_q || (tv_q && !ts_q)) tx_mem[twa_q] <= twd_q;
      if (tx_rd_i) begin
        tx_rdata <= tx_mem[tx_stag_i[8 +: StagIw]];
        tx_index_q <= tx_stag_i[31:8];
      end
    end
    logic unused_tx_low;
    assign unused_tx_low = ^tx_stag_i[7:0];
    assign tx_hit_o = {8'b0, tx_index_q} < StagEntries && tx_rdata[SeValid];
    assign tx_key_o = tx_rdata[SeKey +: 8];
    assign tx_local_read_o = tx_rdata[SeW];
    assign tx_pd_o = tx_rdata[SePd +: 16];
    assign tx_bound_o = tx_rdata[SeBound];
    assign tx_stream_o = tx_rdata[SeStream +: 16];
    assign tx_base_to_o = tx_rdata[SeBase +: 64];
    assign tx_length_o = tx_rdata[SeLen +: 64];
    assign tx_addr_o = tx_rdata[SeAddr +: 64];
  end else begin : g_no_tx
    assign tx_hit_o = 1'b0;
    assign tx_key_o = '0;
    assign tx_local_read_o = 1'b0;
    assign tx_pd_o = '0;
    assign tx_bound_o = 1'b0;
    assign tx_stream_o = '0;
    assign tx_base_to_o = '0;
    assign tx_length_o = '0;
    assign tx_addr_o = '0;
    logic unused_tx;
    assign unused_tx = ^{tx_rd_i, tx_stag_i, wr_local_read_i};
  end
endmodule
