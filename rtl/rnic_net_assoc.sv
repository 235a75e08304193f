// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
// The association table of the network receive front end (issue 14, docs/network.md "Tables the
// driver programs") and the per-packet lookup: NetRef's rule 3 (tb/net net_ref.hpp), the lowest-index
// valid entry whose my_ip, their_ip, my and their UDP port (the packet's metadata, VNx tuser), my SCTP
// port (the destination port, bytes 2..3), their SCTP port (the source port, bytes 0..1) and my
// verification tag (bytes 4..7, RFC 9260 3.1: the tag packets to us carry) all match. A miss answers
// hit 0 with index, stream_base, stream_count and socket 0. Beside it the live bits of the DDP streams
// (NET_STREAM_LIVE), registered on live_o.
//
// Table write port: one-cycle commands, always taken (no ready). wr_i writes entry wr_index_i whole
// (wr_valid_i 0 clears it: it never matches again); live_wr_i sets live bit live_index_i to
// live_value_i, an index >= NumStreams is ignored. Reset clears every valid bit and every live bit.
//
// Lookup pipeline, one request per cycle sustained, responses in request order, latency 3 cycles
// (a request taken in cycle T is on resp_valid_o from cycle T+3 on):
//   A  the request register: the packet's 160-bit key (metadata, SCTP ports, tag; big-endian bytes
//      of req_hdr_i turned into numbers), loaded when the request is taken;
//   C  compare (cycle T+1): the key against every entry's key and valid bit -> 16 match bits
//      (the 160-bit equality as 54 kept 3-bit compares, one LUT each, and their AND: without the
//      keep, ABC maps it to twice the LUTs);
//   P  pick (cycle T+2): the lowest match's index (priority encoder) and its payload (stream_base,
//      stream_count, socket) by a 16:1 mux on that index, written into the response FIFO;
//   the response FIFO (rnic_fifo, Depth 4, registered valid and ready) with resp_ready_i.
// A and C, and C and P, never stall: a request is taken only when the FIFO has a slot reserved for
// it (a credit counter of free slots, in flight and queued items counted), so every item moves on
// every cycle and each table field is read a fixed number of cycles after its request was taken.
// req_ready_o is a flip-flop (the credit count's next value != 0).
//
// Writes while lookups are in flight: every lookup sees one whole table, never a mix. The key and
// valid bits (read by C, one cycle after the request is taken) are written at the end of the
// write's cycle; the payload (read by P, two cycles after) one cycle later, from a register of the
// write command. So a request taken in cycle T sees exactly the writes of cycles <= T: a request taken
// in the write's cycle or later sees the new entry (the driver's write is in effect for the next
// packet), one taken before sees the old entry, whatever the stalls (tests net.assoc.*WriteOrder*).
// Transmit read port (issue 35, docs/transmit.md): tx_index_i names an entry; two cycles later tx_*
// hold it (valid, socket, SCTP ports, their verification tag, stream base and count), every field
// registered. A table write reaches the port by the cycle after its payload write (three cycles).
module rnic_net_assoc #(
  parameter int Entries    = 16,  // association table entries, a power of two >= 2
  parameter int NumStreams = 256  // DDP streams with a live bit, 1..65536
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  // Table write command (the register block's NET_ASSOC_WRITE / NET_ASSOC_CLEAR).
  input  logic                       wr_i,
  input  logic [$clog2(Entries)-1:0] wr_index_i,
  input  logic                       wr_valid_i,
  input  logic [31:0]                wr_my_ip_i,
  input  logic [31:0]                wr_their_ip_i,
  input  logic [15:0]                wr_my_udp_port_i,
  input  logic [15:0]                wr_their_udp_port_i,
  input  logic [15:0]                wr_my_sctp_port_i,
  input  logic [15:0]                wr_their_sctp_port_i,
  input  logic [31:0]                wr_my_vtag_i,
  input  logic [15:0]                wr_stream_base_i,
  input  logic [15:0]                wr_stream_count_i,
  input  logic [15:0]                wr_socket_i,
  input  logic [31:0]                wr_their_vtag_i,
  // Live bits (NET_STREAM_LIVE).
  input  logic                       live_wr_i,
  input  logic [15:0]                live_index_i,
  input  logic                       live_value_i,
  output logic [NumStreams-1:0]      live_o,
  // Lookup request: one per packet.
  input  logic                       req_valid_i,
  output logic                       req_ready_o,
  input  logic [95:0]                req_meta_i,  // {their_udp_port, my_udp_port, their_ip, my_ip}
  input  logic [95:0]                req_hdr_i,   // packet bytes 0..11, byte i at [8*i +: 8]
  // Lookup response, in request order.
  output logic                       resp_valid_o,
  input  logic                       resp_ready_i,
  output logic                       resp_hit_o,
  output logic [$clog2(Entries)-1:0] resp_index_o,
  output logic [15:0]                resp_stream_base_o,
  output logic [15:0]                resp_stream_count_o,
  output logic [15:0]                resp_socket_o,
  // Transmit read port.
  input  logic [$clog2(Entries)-1:0] tx_index_i,
  output logic                       tx_valid_o,
  output logic [15:0]                tx_socket_o,
  output logic [15:0]                tx_my_sctp_port_o,
  output logic [15:0]                tx_their_sctp_port_o,
  output logic [31:0]                tx_their_vtag_o,
  output logic [15:0]                tx_stream_base_o,
  output logic [15:0]                tx_stream_count_o
);
  localparam int IdxW = $clog2(Entries);
  localparam int KeyW = 160;  // my_ip, their_ip, 2 UDP ports, 2 SCTP ports, my_vtag
  localparam int PayW = 48;   // stream_base, stream_count, socket
  localparam int RespW = 1 + IdxW + PayW;
  localparam int Groups = (KeyW + 2) / 3;  // 3-bit pieces of the key compare (one 6-input LUT each)
  localparam int FifoDepth = 4;  // >= the 3 cycles from a take to the credit's return: full rate
  localparam int CredW = $clog2(FifoDepth) + 1;

  initial begin
    if (Entries < 2 || (Entries & (Entries - 1)) != 0)
      $fatal(1, "rnic_net_assoc: Entries must be a power of two >= 2");
    if (NumStreams < 1 || NumStreams > 65536)
      $fatal(1, "rnic_net_assoc: NumStreams must be 1..65536");
  end

  // ---- The table: flat vectors, entry i at [i*W +: W] (toolchain notes: no arrays of structs) ----
  // Key layout {my_vtag, my_sctp_port, their_sctp_port, their_udp_port, my_udp_port, their_ip, my_ip}:
  // the metadata's bit order below it, so the packet's key is {tag, ports, req_meta_i}.
  logic [Entries-1:0]      valid_q;
  logic [Entries*KeyW-1:0] key_q;
  logic [Entries*PayW-1:0] pay_q;
  logic [Entries*32-1:0]   tv_q;     // their verification tag (the transmit side's field, not a key)
  logic [KeyW-1:0]         wr_key;

  // The write command, one cycle late, for the payload (see the header: read one cycle after the key).
  logic            pw_q;
  logic [IdxW-1:0] pw_index_q;
  logic [PayW-1:0] pw_pay_q;

  assign wr_key = {wr_my_vtag_i, wr_my_sctp_port_i, wr_their_sctp_port_i, wr_their_udp_port_i,
                   wr_my_udp_port_i, wr_their_ip_i, wr_my_ip_i};

  always_ff @(posedge clk_i) begin
    if (!rst_ni) pw_q <= 1'b0;
    else pw_q <= wr_i;
  end
  always_ff @(posedge clk_i) begin
    if (wr_i) begin
      pw_index_q <= wr_index_i;
      pw_pay_q   <= {wr_stream_base_i, wr_stream_count_i, wr_socket_i};
    end
  end

  for (genvar i = 0; i < Entries; i++) begin : g_entry
    always_ff @(posedge clk_i) begin
      if (!rst_ni) valid_q[i] <= 1'b0;
      else if (wr_i && wr_index_i == IdxW'(i)) valid_q[i] <= wr_valid_i;
    end
    always_ff @(posedge clk_i) begin
      if (wr_i && wr_index_i == IdxW'(i)) key_q[i*KeyW +: KeyW] <= wr_key;
      if (wr_i && wr_index_i == IdxW'(i)) tv_q[i*32 +: 32] <= wr_their_vtag_i;
      if (pw_q && pw_index_q == IdxW'(i)) pay_q[i*PayW +: PayW] <= pw_pay_q;
    end
  end

  // ---- Transmit read port: the index registered, then the entry's fields (an AND-OR mux of the
  // entries by a decoded index: a shallow tree, not a shifter) ----
  logic [IdxW-1:0] tx_idx_q;
  logic            tx_v;
  logic [15:0]     tx_my, tx_their;
  logic [31:0]     tx_tv;
  logic [PayW-1:0] tx_pay;
  always_comb begin
    tx_v = 1'b0;
    tx_my = '0;
    tx_their = '0;
    tx_tv = '0;
    tx_pay = '0;
    for (int i = 0; i < Entries; i++) begin
      if (tx_idx_q == IdxW'(i)) begin
        tx_v = tx_v | valid_q[i];
        // key layout {my_vtag, my_sctp_port, their_sctp_port, ...}: [127:112] mine, [111:96] theirs
        tx_my = tx_my | key_q[i*KeyW + 112 +: 16];
        tx_their = tx_their | key_q[i*KeyW + 96 +: 16];
        tx_tv = tx_tv | tv_q[i*32 +: 32];
        tx_pay = tx_pay | pay_q[i*PayW +: PayW];
      end
    end
  end
  always_ff @(posedge clk_i) begin
    tx_idx_q <= tx_index_i;
    if (!rst_ni) tx_valid_o <= 1'b0;
    else tx_valid_o <= tx_v;
    {tx_stream_base_o, tx_stream_count_o, tx_socket_o} <= tx_pay;
    tx_their_vtag_o <= tx_tv;
    tx_my_sctp_port_o <= tx_my;
    tx_their_sctp_port_o <= tx_their;
  end

  // ---- Live bits ----
  // One flip-flop per stream, written by bit index (no loop over the streams: thousands of them,
  // issue 33); the write's enable per bit is a decode of live_index_i, an index >= NumStreams
  // writes no bit.
  localparam int LiveBits = NumStreams > 1 ? $clog2(NumStreams) : 1;
  logic [NumStreams-1:0] live_q;
  logic                  live_in_range;
  assign live_in_range = {1'b0, live_index_i} < 17'(NumStreams);
  always_ff @(posedge clk_i) begin
    if (!rst_ni) live_q <= NumStreams'(0);
    else if (live_wr_i && live_in_range) live_q[live_index_i[LiveBits-1:0]] <= live_value_i;
  end
  if (LiveBits < 16) begin : g_live_unused
    logic unused_live_index;  // above LiveBits: judged by live_in_range
    assign unused_live_index = ^live_index_i[15:LiveBits];
  end
  assign live_o = live_q;

  // ---- Credits: free response FIFO slots not yet promised to a request in A, C or P ----
  logic             take, pop, ready_q;
  logic [CredW-1:0] credit_q, credit_d;
  assign req_ready_o = ready_q;
  assign take = req_valid_i && ready_q;
  assign pop = resp_valid_o && resp_ready_i;
  always_comb begin
    credit_d = credit_q;
    if (take && !pop) credit_d = credit_q - 1'b1;
    if (pop && !take) credit_d = credit_q + 1'b1;
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      credit_q <= CredW'(FifoDepth);
      ready_q  <= 1'b1;
    end else begin
      credit_q <= credit_d;
      ready_q  <= credit_d != '0;
    end
  end

  // ---- A: the request's key ----
  logic            a_valid_q;
  logic [KeyW-1:0] a_key_q;
  logic [15:0]     hdr_src_port, hdr_dst_port;
  logic [31:0]     hdr_vtag;
  // Big-endian in the packet: the byte at the lower offset is the most significant.
  assign hdr_src_port = {req_hdr_i[7:0], req_hdr_i[15:8]};
  assign hdr_dst_port = {req_hdr_i[23:16], req_hdr_i[31:24]};
  assign hdr_vtag = {req_hdr_i[39:32], req_hdr_i[47:40], req_hdr_i[55:48], req_hdr_i[63:56]};
  logic unused_hdr;  // bytes 8..11: the checksum, judged by rnic_net_hold
  assign unused_hdr = ^req_hdr_i[95:64];

  always_ff @(posedge clk_i) begin
    if (!rst_ni) a_valid_q <= 1'b0;
    else a_valid_q <= take;
  end
  always_ff @(posedge clk_i) begin
    if (take) a_key_q <= {hdr_vtag, hdr_dst_port, hdr_src_port, req_meta_i};
  end

  // ---- C: compare ----
  logic               c_valid_q;
  logic [Entries-1:0] match, c_match_q;
  logic [3*Groups-1:0] a_key_ext;
  assign a_key_ext = (3*Groups)'(a_key_q);
  for (genvar i = 0; i < Entries; i++) begin : g_cmp
    logic [3*Groups-1:0] key_ext;
    (* keep *) logic [Groups-1:0] eq3;
    assign key_ext = (3*Groups)'(key_q[i*KeyW +: KeyW]);
    for (genvar g = 0; g < Groups; g++) begin : g_grp
      assign eq3[g] = key_ext[3*g +: 3] == a_key_ext[3*g +: 3];
    end
    assign match[i] = valid_q[i] && &eq3;
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) c_valid_q <= 1'b0;
    else c_valid_q <= a_valid_q;
  end
  always_ff @(posedge clk_i) begin
    if (a_valid_q) c_match_q <= match;
  end

  // ---- P: the lowest match, its index and payload (all zero on a miss) ----
  logic            p_hit;
  logic [IdxW-1:0] p_index;
  logic [PayW-1:0] p_pay;
  assign p_hit = |c_match_q;
  always_comb begin
    p_index = '0;
    for (int i = Entries - 1; i >= 0; i--) begin
      if (c_match_q[i]) p_index = IdxW'(i);
    end
  end
  always_comb begin
    p_pay = '0;
    for (int i = 0; i < Entries; i++) begin
      if (p_hit && p_index == IdxW'(i)) p_pay = pay_q[i*PayW +: PayW];
    end
  end

  logic             fifo_in_ready;
  logic [RespW-1:0] resp;
  logic [CredW-1:0] fifo_count;
  rnic_fifo #(.Width(RespW), .Depth(FifoDepth)) u_resp_fifo (
    .clk_i,
    .rst_ni,
    .in_data_i  ({p_hit, p_index, p_pay}),
    .in_valid_i (c_valid_q),
    .in_ready_o (fifo_in_ready),
    .out_data_o (resp),
    .out_valid_o(resp_valid_o),
    .out_ready_i(resp_ready_i),
    .count_o    (fifo_count)
  );
  logic unused_fifo;  // never refuses (a_fifo_room); the count is the credits' business
  assign unused_fifo = fifo_in_ready ^ (^fifo_count);

  assign {resp_hit_o, resp_index_o, resp_stream_base_o, resp_stream_count_o, resp_socket_o} = resp;

  // ---- Assertions (rtl/rnic_assert.svh) ----
  // The credits: never more promised than the FIFO holds, so a P item always finds a slot; the
  // responses hold while not taken (AXI-Stream 2.2.1).
  `RNIC_ASSERT(a_fifo_room, clk_i, rst_ni, !c_valid_q || fifo_in_ready)
  `RNIC_ASSERT(a_credit_bound, clk_i, rst_ni, credit_q <= CredW'(FifoDepth))
  `RNIC_ASSERT(a_credit_count, clk_i, rst_ni,
               credit_q + CredW'(a_valid_q) + CredW'(c_valid_q) + fifo_count == CredW'(FifoDepth))
  `RNIC_ASSERT_HOLD(a_resp_hold, clk_i, rst_ni, resp_valid_o, resp_ready_i, resp)
endmodule
