// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
`include "rnic_hw.svh"
// The network side of rnic_kernel (issue 14, docs/network.md "How the kernel top joins the parts"):
//
//   s_axis_net --> rnic_net_rx --m_seg--> [fate credit] --+
//                     |  |  |                              +--> packet arbiter --> slice --> m_seg_* (to parse)
//   s_axis_rx (tests, rnic-sim injection; net bit cleared) -+
//                     |  |  +--copy/patch/sum--> rnic_net_rxring <-- fate_* (validate's m_axis_fate)
//                     |  |                           | AW/W/B
//   m_axis_net <-- rnic_net_tx <-- AR/R -------- m_axi_net
//   reg_* (rnic_regs' window) <--> rnic_net_regs --> table writes, live bits, ring configuration
//
// - Fate credit: validate reports the fate of every segment with net = 1 on a stream without ready,
//   so at most FateDepth such segments may be between the arbiter and rnic_net_rxring's fate FIFO. The
//   count rises when a front-end segment's first beat passes the arbiter and falls on fate_pop; the
//   arbiter starts a front-end segment only while the count is below FateDepth.
// - External segments (s_axis_rx) have their net bit cleared: only the front end's segments have fates,
//   so the ring writer's fates stay aligned with its packets.
// - The arbiter switches only between packets (round robin when both wait); a packet once presented
//   keeps the output until its last beat passes. Valid and data go through in the same cycle, ready
//   comes from the output (parse) and the owner.
module rnic_net_side #(
  parameter int DataWidth  = 512,  // 128..512
  parameter int NumStreams = 256,
  parameter int FateDepth  = 64
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // the network (VNx networklayer's application side)
  input  logic                   s_axis_net_tvalid_i,
  output logic                   s_axis_net_tready_o,
  input  logic [DataWidth-1:0]   s_axis_net_tdata_i,
  input  logic [DataWidth/8-1:0] s_axis_net_tkeep_i,
  input  logic                   s_axis_net_tlast_i,
  input  logic [95:0]            s_axis_net_tuser_i,
  output logic                   m_axis_net_tvalid_o,
  input  logic                   m_axis_net_tready_i,
  output logic [DataWidth-1:0]   m_axis_net_tdata_o,
  output logic [DataWidth/8-1:0] m_axis_net_tkeep_o,
  output logic                   m_axis_net_tlast_o,
  output logic [15:0]            m_axis_net_tdest_o,
  // external DDP segments and the merged stream to parse
  input  logic                   s_rx_tvalid_i,
  output logic                   s_rx_tready_o,
  input  logic [DataWidth-1:0]   s_rx_tdata_i,
  input  logic [DataWidth/8-1:0] s_rx_tkeep_i,
  input  logic                   s_rx_tlast_i,
  input  logic [32:0]            s_rx_tuser_i,
  output logic                   m_seg_tvalid_o,
  input  logic                   m_seg_tready_i,
  output logic [DataWidth-1:0]   m_seg_tdata_o,
  output logic [DataWidth/8-1:0] m_seg_tkeep_o,
  output logic                   m_seg_tlast_o,
  output logic [32:0]            m_seg_tuser_o,
  // validate's fates (no ready)
  input  logic                   fate_valid_i,
  input  logic [1:0]             fate_i,
  // rnic_regs' window
  input  logic                   reg_wr_i,
  input  logic [7:0]             reg_waddr_i,
  input  logic [31:0]            reg_wdata_i,
  input  logic [3:0]             reg_wstrb_i,
  output logic                   reg_whit_o,
  input  logic                   reg_rd_i,
  input  logic [7:0]             reg_raddr_i,
  output logic [31:0]            reg_rdata_o,
  output logic                   reg_rhit_o,
  // m_axi_net: the two packet rings
  output logic [63:0]            m_axi_awaddr_o,
  output logic [7:0]             m_axi_awlen_o,
  output logic [2:0]             m_axi_awsize_o,
  output logic [1:0]             m_axi_awburst_o,
  output logic                   m_axi_awvalid_o,
  input  logic                   m_axi_awready_i,
  output logic [DataWidth-1:0]   m_axi_wdata_o,
  output logic [DataWidth/8-1:0] m_axi_wstrb_o,
  output logic                   m_axi_wlast_o,
  output logic                   m_axi_wvalid_o,
  input  logic                   m_axi_wready_i,
  input  logic [1:0]             m_axi_bresp_i,
  input  logic                   m_axi_bvalid_i,
  output logic                   m_axi_bready_o,
  output logic [63:0]            m_axi_araddr_o,
  output logic [7:0]             m_axi_arlen_o,
  output logic [2:0]             m_axi_arsize_o,
  output logic [1:0]             m_axi_arburst_o,
  output logic                   m_axi_arvalid_o,
  input  logic                   m_axi_arready_i,
  input  logic [DataWidth-1:0]   m_axi_rdata_i,
  input  logic [1:0]             m_axi_rresp_i,
  input  logic                   m_axi_rlast_i,
  input  logic                   m_axi_rvalid_i,
  output logic                   m_axi_rready_o,
  // The transmit gather's tables in rnic_rx_lookup (its tx_* port): the STag entry and the stream's
  // PD and state, answered two cycles after the request
  output logic                   tx_req_o,
  output logic [31:0]            tx_stag_o,
  output logic [15:0]            tx_stream_o,
  input  logic                   tx_rsp_i,
  input  logic                   tx_valid_i,
  input  logic [7:0]             tx_key_i,
  input  logic                   tx_local_read_i,
  input  logic [15:0]            tx_pd_i,
  input  logic                   tx_bound_i,
  input  logic [15:0]            tx_bound_stream_i,
  input  logic [63:0]            tx_base_to_i,
  input  logic [63:0]            tx_length_i,
  input  logic [63:0]            tx_addr_i,
  input  logic [15:0]            tx_stream_pd_i,
  input  logic                   tx_stream_live_i,
  // The gather's payload reads (to m_axi_gmem, the port of registered memory, beside lookup's)
  output logic [63:0]            m_axi_g_araddr_o,
  output logic [7:0]             m_axi_g_arlen_o,
  output logic                   m_axi_g_arvalid_o,
  input  logic                   m_axi_g_arready_i,
  input  logic [DataWidth-1:0]   m_axi_g_rdata_i,
  input  logic [1:0]             m_axi_g_rresp_i,
  input  logic                   m_axi_g_rlast_i,
  input  logic                   m_axi_g_rvalid_i,
  output logic                   m_axi_g_rready_o,
  // The fence of STAG_INVALIDATE, STREAM_TEARDOWN and QUEUE_CONFIG (deliver's fence_done): fence_o
  // follows fence_i once every gather packet that had entered the gather by fence_i has left it
  input  logic                   fence_i,
  output logic                   fence_o,
  output logic                   error_o  // sticky: the fate FIFO overflowed (a bug)
);
  localparam int Entries = RNIC_NET_ASSOC_ENTRIES;
  localparam int Cw = $clog2(FateDepth) + 1;

  initial begin
    if (DataWidth < 128) $fatal(1, "rnic_net_side: DataWidth >= 128 (the SCTP common header in beat 0)");
  end

  // ---- table writes, rings, counters: rnic_net_regs ----------------------------------------------
  logic                       t_wr, t_valid, live_wr, live_value;
  logic [$clog2(Entries)-1:0] t_index;
  logic [31:0]                t_my_ip, t_their_ip, t_vtag;
  logic [15:0]                t_my_udp, t_their_udp, t_my_sctp, t_their_sctp, t_base, t_count, t_socket;
  logic [31:0]                t_their_vtag;
  logic [NumStreams-1:0]      live_bits;
  // the gather's association entry and verdicts
  logic [3:0]                 g_aidx;
  logic                       ga_valid;
  logic [15:0]                ga_socket, ga_my_port, ga_their_port, ga_first, ga_count;
  logic [31:0]                ga_vtag;
  logic                       g_drop, g_sent, g_in, g_out;
  logic [3:0]                 g_reason;
  logic [7:0]                 g_assoc;
  logic [15:0]                live_index;
  logic                       rx_en, tx_en, rx_busy, tx_busy;
  logic [63:0]                rx_base, tx_base;
  logic [4:0]                 rx_log2, rx_slot, tx_log2, tx_slot;
  logic [31:0]                rx_cons, rx_prod, tx_prod, tx_cons;
  logic                       drop_crc, drop_size, drop_frame, r_full, r_size, r_berr, t_bad, t_rerr;
  logic                       pkt_in, pkt_done, tx_sent;
  logic                       assoc_busy;

  // ---- rnic_net_rx ------------------------------------------------------------------------------
  logic                   f_valid, f_ready, f_last;
  logic [DataWidth-1:0]   f_data;
  logic [DataWidth/8-1:0] f_keep;
  logic [32:0]            f_user;
  logic                   c_valid, c_ready, c_last;
  logic [DataWidth-1:0]   c_data;
  logic [DataWidth/8-1:0] c_keep;
  logic                   p_valid, p_ready, p_last;
  logic [15:0]            p_offset;
  logic                   s_valid, s_ready, s_hit, s_malformed;
  logic [3:0]             s_index;
  logic [15:0]            s_segments, s_length, s_copy_length, s_src_port;
  logic [31:0]            s_src_ip;
  logic [15:0]            u_chunks, u_cands, u_beyond;  // summary fields the ring does not need

  rnic_net_rx #(.DataWidth(DataWidth), .NumStreams(NumStreams), .Entries(Entries)) u_rx (
    .clk_i, .rst_ni,
    .s_axis_net_tvalid_i, .s_axis_net_tready_o, .s_axis_net_tdata_i, .s_axis_net_tkeep_i,
    .s_axis_net_tlast_i, .s_axis_net_tuser_i,
    .wr_i(t_wr), .wr_index_i(t_index), .wr_valid_i(t_valid), .wr_my_ip_i(t_my_ip),
    .wr_their_ip_i(t_their_ip), .wr_my_udp_port_i(t_my_udp), .wr_their_udp_port_i(t_their_udp),
    .wr_my_sctp_port_i(t_my_sctp), .wr_their_sctp_port_i(t_their_sctp), .wr_my_vtag_i(t_vtag),
    .wr_stream_base_i(t_base), .wr_stream_count_i(t_count), .wr_socket_i(t_socket),
    .wr_their_vtag_i(t_their_vtag),
    .tx_index_i(g_aidx[$clog2(Entries)-1:0]), .tx_valid_o(ga_valid), .tx_socket_o(ga_socket),
    .tx_my_sctp_port_o(ga_my_port), .tx_their_sctp_port_o(ga_their_port), .tx_their_vtag_o(ga_vtag),
    .tx_stream_base_o(ga_first), .tx_stream_count_o(ga_count), .live_o(live_bits),
    .live_wr_i(live_wr), .live_index_i(live_index), .live_value_i(live_value),
    .m_seg_tvalid_o(f_valid), .m_seg_tready_i(f_ready), .m_seg_tdata_o(f_data), .m_seg_tkeep_o(f_keep),
    .m_seg_tlast_o(f_last), .m_seg_tuser_o(f_user),
    .m_copy_tvalid_o(c_valid), .m_copy_tready_i(c_ready), .m_copy_tdata_o(c_data),
    .m_copy_tkeep_o(c_keep), .m_copy_tlast_o(c_last),
    .m_patch_valid_o(p_valid), .m_patch_ready_i(p_ready), .m_patch_copy_offset_o(p_offset),
    .m_patch_last_o(p_last),
    .m_sum_valid_o(s_valid), .m_sum_ready_i(s_ready), .m_sum_hit_o(s_hit),
    .m_sum_assoc_index_o(s_index), .m_sum_malformed_o(s_malformed), .m_sum_chunks_o(u_chunks),
    .m_sum_candidates_o(u_cands), .m_sum_segments_o(s_segments), .m_sum_beyond_o(u_beyond),
    .m_sum_length_o(s_length), .m_sum_copy_length_o(s_copy_length), .m_sum_src_ip_o(s_src_ip),
    .m_sum_src_port_o(s_src_port),
    .drop_crc_o(drop_crc), .drop_size_o(drop_size), .drop_frame_o(drop_frame));

  // ---- fate credit and the packet arbiter -------------------------------------------------------
  logic [Cw-1:0] credit_q;    // front-end segments past the arbiter whose fate is not popped
  logic          fate_pop;
  logic          locked_q;    // a packet is presented or in progress: its side is own_q
  logic          own_q;       // 1 the front end, 0 the external side
  logic          first_q;     // the next beat to pass is a packet's first
  logic          last_net_q;  // the front end had the last packet (round robin)
  logic          net_ok, pick_net, own, go, hs;
  // The arbiter's output, before the register slice that feeds parse (the kernel's budget: the credit
  // and arbiter decode must not reach into parse's header logic in one cycle).
  logic                   a_valid, a_ready, a_last;
  logic [DataWidth-1:0]   a_data;
  logic [DataWidth/8-1:0] a_keep;
  logic [32:0]            a_user;

  assign net_ok   = f_valid && credit_q < Cw'(FateDepth);
  // Between packets: the front end if it may go and (the external side waits not, or it is its turn).
  assign pick_net = net_ok && (!s_rx_tvalid_i || !last_net_q);
  assign own      = locked_q ? own_q : pick_net;
  assign go       = locked_q || pick_net || s_rx_tvalid_i;
  assign hs       = a_valid && a_ready;

  assign a_valid       = go && (own ? f_valid : s_rx_tvalid_i);
  assign a_data        = own ? f_data : s_rx_tdata_i;
  assign a_keep        = own ? f_keep : s_rx_tkeep_i;
  assign a_last        = own ? f_last : s_rx_tlast_i;
  assign a_user        = own ? f_user : {1'b0, s_rx_tuser_i[31:0]};
  assign f_ready       = go && own && a_ready;
  assign s_rx_tready_o = go && !own && a_ready;

  rnic_slice #(.Width(DataWidth + DataWidth / 8 + 1 + 33)) u_seg_slice (
    .clk_i(clk_i), .rst_ni(rst_ni),
    .in_data_i({a_user, a_last, a_keep, a_data}), .in_valid_i(a_valid), .in_ready_o(a_ready),
    .out_data_o({m_seg_tuser_o, m_seg_tlast_o, m_seg_tkeep_o, m_seg_tdata_o}), .out_valid_o(m_seg_tvalid_o),
    .out_ready_i(m_seg_tready_i));

  // A side's packet, once presented, keeps the output until its last beat passes (AXI-Stream: valid
  // and data held until the handshake).
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      credit_q   <= '0;
      locked_q   <= 1'b0;
      own_q      <= 1'b0;
      first_q    <= 1'b1;
      last_net_q <= 1'b0;
    end else begin
      if (a_valid && !locked_q) begin
        own_q      <= own;
        last_net_q <= own;
      end
      if (hs && a_last) locked_q <= 1'b0;
      else if (a_valid) locked_q <= 1'b1;
      if (hs) first_q <= a_last;
      credit_q <= credit_q + Cw'(hs && first_q && own) - Cw'(fate_pop);
    end
  end

  // ---- rnic_net_rxring and rnic_net_tx on m_axi_net ---------------------------------------------
  logic ring_error;
  // The read side of the ring writer and the write side of the transmit reader are tied off inside.
  logic [63:0]            u_araddr, u_awaddr;
  logic [7:0]             u_arlen, u_awlen;
  logic [2:0]             u_arsize, u_awsize;
  logic [1:0]             u_arburst, u_awburst;
  logic                   u_arvalid, u_rready, u_awvalid, u_wlast, u_wvalid, u_bready;
  logic [DataWidth-1:0]   u_wdata;
  logic [DataWidth/8-1:0] u_wstrb;

  rnic_net_rxring #(.DataWidth(DataWidth), .FateDepth(FateDepth)) u_rxring (
    .clk_i, .rst_ni, .enable_i(rx_en), .base_i(rx_base), .log2_slots_i(rx_log2), .slot_log2_i(rx_slot),
    .cons_i(rx_cons), .prod_o(rx_prod), .busy_o(rx_busy),
    .s_copy_tvalid_i(c_valid), .s_copy_tready_o(c_ready), .s_copy_tdata_i(c_data), .s_copy_tkeep_i(c_keep),
    .s_copy_tlast_i(c_last),
    .s_patch_valid_i(p_valid), .s_patch_ready_o(p_ready), .s_patch_copy_offset_i(p_offset),
    .s_patch_last_i(p_last),
    .s_sum_valid_i(s_valid), .s_sum_ready_o(s_ready), .s_sum_hit_i(s_hit), .s_sum_assoc_index_i(s_index),
    .s_sum_malformed_i(s_malformed), .s_sum_segments_i(s_segments), .s_sum_length_i(s_length),
    .s_sum_copy_length_i(s_copy_length), .s_sum_src_ip_i(s_src_ip), .s_sum_src_port_i(s_src_port),
    .fate_valid_i, .fate_i, .fate_pop_o(fate_pop),
    .m_axi_awaddr_o(m_axi_awaddr_o), .m_axi_awlen_o(m_axi_awlen_o), .m_axi_awsize_o(m_axi_awsize_o),
    .m_axi_awburst_o(m_axi_awburst_o), .m_axi_awvalid_o(m_axi_awvalid_o),
    .m_axi_awready_i(m_axi_awready_i), .m_axi_wdata_o(m_axi_wdata_o), .m_axi_wstrb_o(m_axi_wstrb_o),
    .m_axi_wlast_o(m_axi_wlast_o), .m_axi_wvalid_o(m_axi_wvalid_o), .m_axi_wready_i(m_axi_wready_i),
    .m_axi_bresp_i(m_axi_bresp_i), .m_axi_bvalid_i(m_axi_bvalid_i), .m_axi_bready_o(m_axi_bready_o),
    .m_axi_araddr_o(u_araddr), .m_axi_arlen_o(u_arlen), .m_axi_arsize_o(u_arsize),
    .m_axi_arburst_o(u_arburst), .m_axi_arvalid_o(u_arvalid), .m_axi_arready_i(1'b0), .m_axi_rdata_i('0), .m_axi_rresp_i(2'b00),
    .m_axi_rlast_i(1'b0), .m_axi_rvalid_i(1'b0), .m_axi_rready_o(u_rready),
    .drop_full_o(r_full), .drop_size_o(r_size), .bresp_err_o(r_berr), .error_o(ring_error));

  // The gather's live bit: live_bits[tx_stream_o] (an index >= NumStreams is not live), aligned with
  // lookup's answer two cycles after the request, and with the stream's state there.
  logic live1_q, live2_q;
  always_ff @(posedge clk_i) begin
    live1_q <= {16'b0, tx_stream_o} < 32'(NumStreams) && live_bits[tx_stream_o[$clog2(NumStreams > 1 ? NumStreams : 2)-1:0]];
    live2_q <= live1_q;
  end
  logic [2:0]  g_arsize_unused;
  logic [1:0]  g_arburst_unused;
  logic        g_bad_unused;      // gather_bad_o: g_drop below is its gather part
  rnic_net_tx #(.DataWidth(DataWidth)) u_tx (
    .clk_i, .rst_ni, .enable_i(tx_en), .base_i(tx_base), .log2_slots_i(tx_log2), .slot_log2_i(tx_slot),
    .prod_i(tx_prod), .cons_o(tx_cons), .busy_o(tx_busy),
    .m_axi_awaddr_o(u_awaddr), .m_axi_awlen_o(u_awlen), .m_axi_awsize_o(u_awsize),
    .m_axi_awburst_o(u_awburst), .m_axi_awvalid_o(u_awvalid), .m_axi_awready_i(1'b0),
    .m_axi_wdata_o(u_wdata), .m_axi_wstrb_o(u_wstrb), .m_axi_wlast_o(u_wlast),
    .m_axi_wvalid_o(u_wvalid), .m_axi_wready_i(1'b0), .m_axi_bresp_i(2'b00),
    .m_axi_bvalid_i(1'b0), .m_axi_bready_o(u_bready),
    .m_axi_araddr_o(m_axi_araddr_o), .m_axi_arlen_o(m_axi_arlen_o), .m_axi_arsize_o(m_axi_arsize_o),
    .m_axi_arburst_o(m_axi_arburst_o), .m_axi_arvalid_o(m_axi_arvalid_o),
    .m_axi_arready_i(m_axi_arready_i), .m_axi_rdata_i(m_axi_rdata_i), .m_axi_rresp_i(m_axi_rresp_i),
    .m_axi_rlast_i(m_axi_rlast_i), .m_axi_rvalid_i(m_axi_rvalid_i), .m_axi_rready_o(m_axi_rready_o),
    .m_axis_net_tvalid_o, .m_axis_net_tready_i, .m_axis_net_tdata_o, .m_axis_net_tkeep_o,
    .m_axis_net_tlast_o, .m_axis_net_tdest_o, .bad_o(t_bad), .rresp_err_o(t_rerr),
    // The gather (issue 35, docs/transmit.md): the association entry from rnic_net_assoc's transmit
    // port, the STag and stream tables from rnic_rx_lookup's, the live bits from here.
    .a_idx_o(g_aidx), .a_valid_i(ga_valid), .a_socket_i(ga_socket), .a_my_port_i(ga_my_port),
    .a_their_port_i(ga_their_port), .a_their_vtag_i(ga_vtag), .a_first_i(ga_first), .a_count_i(ga_count),
    .t_req_o(tx_req_o), .t_stag_o(tx_stag_o), .t_stream_o(tx_stream_o), .t_rsp_i(tx_rsp_i),
    .t_valid_i(tx_valid_i), .t_key_i(tx_key_i), .t_local_read_i(tx_local_read_i), .t_pd_i(tx_pd_i),
    .t_bound_i(tx_bound_i), .t_bound_stream_i(tx_bound_stream_i), .t_base_to_i(tx_base_to_i),
    .t_length_i(tx_length_i), .t_addr_i(tx_addr_i), .t_stream_pd_i(tx_stream_pd_i),
    .t_live_i(live2_q && tx_stream_live_i),
    .g_araddr_o(m_axi_g_araddr_o), .g_arlen_o(m_axi_g_arlen_o), .g_arsize_o(g_arsize_unused),
    .g_arburst_o(g_arburst_unused), .g_arvalid_o(m_axi_g_arvalid_o), .g_arready_i(m_axi_g_arready_i),
    .g_rdata_i(m_axi_g_rdata_i), .g_rresp_i(m_axi_g_rresp_i), .g_rlast_i(m_axi_g_rlast_i),
    .g_rvalid_i(m_axi_g_rvalid_i), .g_rready_o(m_axi_g_rready_o),
    .gather_bad_o(g_bad_unused),
    .g_drop_o(g_drop), .g_reason_o(g_reason), .g_assoc_o(g_assoc), .g_sent_o(g_sent), .g_in_o(g_in),
    .g_out_o(g_out));

  // ---- the fence of the kernel's table commands against the gather's reads ----------------------
  // fence_i snapshots the gather packets in (g_in); fence_o once as many have come out (g_out). The
  // counts are 8 bits: at most 3 packets are in the gather (rnic_net_tx g_cnt_q).
  // fence_o is a flip-flop (one cycle after the count is reached): rnic_regs' command logic starts
  // from a register.
  logic [7:0] gin_q, gout_q, fsnap_q;
  logic       fwait_q, fdone_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      gin_q   <= '0;
      gout_q  <= '0;
      fsnap_q <= '0;
      fwait_q <= 1'b0;
      fdone_q <= 1'b0;
    end else begin
      gin_q   <= gin_q + 8'(g_in);
      gout_q  <= gout_q + 8'(g_out);
      fdone_q <= 1'b0;
      if (fence_i) begin
        fwait_q <= 1'b1;
        fsnap_q <= gin_q + 8'(g_in);
      end else if (fwait_q && gout_q == fsnap_q) begin
        fwait_q <= 1'b0;
        fdone_q <= 1'b1;
      end
    end
  end
  assign fence_o = fdone_q;


  // ---- rnic_net_regs ----------------------------------------------------------------------------
  logic [1:0] pkt_drop;
  assign pkt_in   = s_axis_net_tvalid_i && s_axis_net_tready_o && s_axis_net_tlast_i;
  assign pkt_drop = 2'(drop_crc) + 2'(drop_size) + 2'(drop_frame);
  assign pkt_done = s_valid && s_ready;
  assign tx_sent  = m_axis_net_tvalid_o && m_axis_net_tready_i && m_axis_net_tlast_o;

  rnic_net_regs #(.Entries(Entries), .NumStreams(NumStreams)) u_regs (
    .clk_i, .rst_ni,
    .reg_wr_i, .reg_waddr_i, .reg_wdata_i, .reg_wstrb_i, .reg_whit_o, .reg_rd_i, .reg_raddr_i, .reg_rdata_o,
    .reg_rhit_o,
    .wr_o(t_wr), .wr_index_o(t_index), .wr_valid_o(t_valid), .wr_my_ip_o(t_my_ip), .wr_their_ip_o(t_their_ip),
    .wr_my_udp_port_o(t_my_udp), .wr_their_udp_port_o(t_their_udp), .wr_my_sctp_port_o(t_my_sctp),
    .wr_their_sctp_port_o(t_their_sctp), .wr_my_vtag_o(t_vtag), .wr_stream_base_o(t_base),
    .wr_stream_count_o(t_count), .wr_socket_o(t_socket),
    .live_wr_o(live_wr), .live_index_o(live_index), .live_value_o(live_value),
    .pkt_in_i(pkt_in), .pkt_drop_i(pkt_drop), .pkt_done_i(pkt_done), .assoc_busy_o(assoc_busy),
    .rx_enable_o(rx_en), .rx_base_o(rx_base), .rx_log2_slots_o(rx_log2), .rx_slot_log2_o(rx_slot),
    .rx_cons_o(rx_cons), .rx_prod_i(rx_prod), .rx_busy_i(rx_busy),
    .tx_enable_o(tx_en), .tx_base_o(tx_base), .tx_log2_slots_o(tx_log2), .tx_slot_log2_o(tx_slot),
    .tx_prod_o(tx_prod), .tx_cons_i(tx_cons), .tx_busy_i(tx_busy),
    .drop_crc_i(drop_crc), .drop_size_i(drop_size), .drop_frame_i(drop_frame), .rx_drop_full_i(r_full),
    .rx_drop_size_i(r_size), .rx_bresp_err_i(r_berr), .tx_sent_i(tx_sent), .tx_bad_i(t_bad),
    .tx_rresp_err_i(t_rerr),
    .g_drop_i(g_drop), .g_reason_i(g_reason), .g_assoc_i(g_assoc), .g_sent_i(g_sent), .g_in_i(g_in),
    .g_out_i(g_out), .wr_their_vtag_o(t_their_vtag));

  // Sticky: the fate FIFO overflowed (the credit makes that impossible) or the credit went negative.
  logic error_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) error_q <= 1'b0;
    else if (ring_error || (fate_pop && credit_q == '0)) error_q <= 1'b1;
  end
  assign error_o = error_q;

  logic unused;
  assign unused = ^{assoc_busy, s_rx_tuser_i[32], u_chunks, u_cands, u_beyond, u_araddr, u_arlen, u_arsize, u_arburst,
                    u_arvalid, u_rready, u_awaddr, u_awlen, u_awsize, u_awburst, u_awvalid, u_wdata, u_wstrb,
                    u_wlast, u_wvalid, u_bready, g_bad_unused, g_arsize_unused, g_arburst_unused};
endmodule
