// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
`include "rnic_hw.svh"
// The network receive front end (issue 14, docs/network.md): one SCTP packet per AXI-Stream packet in
// (the UDP payload, RFC 6951; meta in tuser as VNx's networklayer gives it), DDP segments out to
// rnic_kernel.s_axis_rx (tuser.net = 1), and per packet the host copy, its patch list and its summary
// for the receive packet ring. The rules are those of the reference model tb/net NetRef.
//
//   s_axis_net --> rnic_net_hold --+--(first beat: meta, bytes 0..11)--> rnic_net_assoc --+
//                  (CRC32c verdict)|                                                      v
//                                  +--(beats)---------------------------------------> rnic_net_walk
//                                  |                                                      | items
//                                  +--(beats)--> beat FIFO --> rnic_net_split <-- desc FIFO
//                                  |                             |  |  |  +--> m_sum   (per packet) <--+
//                                  |                             |  |  +-----> m_patch (per SEGMENT)   |
//                                  |                             |  +--------> m_copy  (host copy)     |
//                                  |                             +-----------> m_seg   (DDP segments)  |
//                                  +--(first beat: their IP and UDP port)--> source FIFO ---------------+
//
// The fork: a held beat goes to the walker and the beat FIFO together (each one's valid waits for the
// other's ready; the FIFO's ready is a register). The association lookup of a packet is asked for from
// its first beat as it waits at the hold's output, before that beat moves, because the walker takes a
// packet's first beat only with its lookup result. The walker runs at most BeatFifoDepth beats ahead
// of the splitter; its items wait in the descriptor FIFO. The splitter needs a packet's items only for
// beats the walker has already taken, so neither waits for the other forever.
//
// The sender's address (tuser's their IP and UDP port) waits in the source FIFO from the packet's
// lookup request to its summary: every packet that is asked for gives exactly one summary, in order, so
// the FIFO's head is the summary's packet. A packet waits for its request while the FIFO is full.
//
// Table writes (association entries, live bits) go straight to rnic_net_assoc; see there which lookups
// see a write. The whole packet header sits in beat 0, so DataWidth >= 128.
module rnic_net_rx #(
  parameter int DataWidth      = 512,   // 128..512, a power of two
  parameter int NumStreams     = 256,   // DDP streams with a live bit
  parameter int Entries        = 16,    // association table entries (<= 16)
  parameter int HoldBeats      = 512,   // rnic_net_hold's buffer, beats
  parameter int MaxPacketBytes = RNIC_NET_MAX_PACKET_BYTES,  // longer packets are dropped
  parameter int MaxSegments    = 32,    // DDP segments per packet; later candidates become PAD
  parameter int BeatFifoDepth  = 16,    // how far the walker may run ahead of the splitter, beats
  parameter int DescFifoDepth  = 32,    // walker items waiting for the splitter
  parameter int SrcFifoDepth   = 32     // packets between their lookup request and their summary
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  // The network port (VNx M_AXIS_nl2sk)
  input  logic                       s_axis_net_tvalid_i,
  output logic                       s_axis_net_tready_o,
  input  logic [DataWidth-1:0]       s_axis_net_tdata_i,
  input  logic [DataWidth/8-1:0]     s_axis_net_tkeep_i,
  input  logic                       s_axis_net_tlast_i,
  input  logic [95:0]                s_axis_net_tuser_i,  // {their port, my port, their IP, my IP}
  // The association table and live bits (from the register block)
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
  input  logic                       live_wr_i,
  input  logic [15:0]                live_index_i,
  input  logic                       live_value_i,
  // The transmit gather's view of the tables (rnic_net_assoc's transmit read port; the live bits)
  input  logic [$clog2(Entries)-1:0] tx_index_i,
  output logic                       tx_valid_o,
  output logic [15:0]                tx_socket_o,
  output logic [15:0]                tx_my_sctp_port_o,
  output logic [15:0]                tx_their_sctp_port_o,
  output logic [31:0]                tx_their_vtag_o,
  output logic [15:0]                tx_stream_base_o,
  output logic [15:0]                tx_stream_count_o,
  output logic [NumStreams-1:0]      live_o,
  // DDP segments (to rnic_kernel.s_axis_rx)
  output logic                       m_seg_tvalid_o,
  input  logic                       m_seg_tready_i,
  output logic [DataWidth-1:0]       m_seg_tdata_o,
  output logic [DataWidth/8-1:0]     m_seg_tkeep_o,
  output logic                       m_seg_tlast_o,
  output logic [32:0]                m_seg_tuser_o,
  // The host copy of each packet, its patch list and its summary (to the receive packet ring)
  output logic                       m_copy_tvalid_o,
  input  logic                       m_copy_tready_i,
  output logic [DataWidth-1:0]       m_copy_tdata_o,
  output logic [DataWidth/8-1:0]     m_copy_tkeep_o,
  output logic                       m_copy_tlast_o,
  output logic                       m_patch_valid_o,
  input  logic                       m_patch_ready_i,
  output logic [15:0]                m_patch_copy_offset_o,
  output logic                       m_patch_last_o,
  output logic                       m_sum_valid_o,
  input  logic                       m_sum_ready_i,
  output logic                       m_sum_hit_o,
  output logic [3:0]                 m_sum_assoc_index_o,
  output logic                       m_sum_malformed_o,
  output logic [15:0]                m_sum_chunks_o,
  output logic [15:0]                m_sum_candidates_o,
  output logic [15:0]                m_sum_segments_o,
  output logic [15:0]                m_sum_beyond_o,
  output logic [15:0]                m_sum_length_o,
  output logic [15:0]                m_sum_copy_length_o,
  output logic [31:0]                m_sum_src_ip_o,      // the sender (tuser[63:32])
  output logic [15:0]                m_sum_src_port_o,    // its UDP port (tuser[95:80])
  // One-cycle pulses per dropped packet (counters)
  output logic                       drop_crc_o,
  output logic                       drop_size_o,
  output logic                       drop_frame_o
);
  localparam int Bytes = DataWidth / 8;
  localparam int BeatW = DataWidth + Bytes + 1 + 112;  // data, keep, last, {length, meta}

  initial begin
    if (DataWidth < 128 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_net_rx: DataWidth must be 128, 256 or 512 (the common header in beat 0)");
    if (Entries > 16) $fatal(1, "rnic_net_rx: at most 16 association entries (4-bit index)");
  end

  // ---- hold: CRC32c verdict, good packets only -------------------------------------------------------
  logic                 h_valid, h_ready, h_last;
  logic [DataWidth-1:0] h_data;
  logic [Bytes-1:0]     h_keep;
  logic [111:0]         h_user;
  rnic_net_hold #(.DataWidth(DataWidth), .DepthBeats(HoldBeats), .MaxPacketBytes(MaxPacketBytes)) u_hold (
    .clk_i, .rst_ni,
    .s_axis_tvalid_i(s_axis_net_tvalid_i), .s_axis_tready_o(s_axis_net_tready_o),
    .s_axis_tdata_i(s_axis_net_tdata_i), .s_axis_tkeep_i(s_axis_net_tkeep_i),
    .s_axis_tlast_i(s_axis_net_tlast_i), .s_axis_tuser_i(s_axis_net_tuser_i),
    .m_axis_tvalid_o(h_valid), .m_axis_tready_i(h_ready), .m_axis_tdata_o(h_data),
    .m_axis_tkeep_o(h_keep), .m_axis_tlast_o(h_last), .m_axis_tuser_o(h_user),
    .drop_crc_o, .drop_size_o, .drop_frame_o
  );

  // ---- the lookup request: from a packet's first beat while it waits ---------------------------------
  logic first_q, asked_q;  // the beat at the hold's output is a first beat; its lookup was asked for
  logic req_valid, req_ready, src_ready;
  assign req_valid = h_valid && first_q && !asked_q && src_ready;

  logic                       a_valid, a_ready, a_hit;
  logic [$clog2(Entries)-1:0] a_index;
  logic [15:0]                a_base, a_count, a_socket;
  logic [NumStreams-1:0]      live;
  rnic_net_assoc #(.Entries(Entries), .NumStreams(NumStreams)) u_assoc (
    .clk_i, .rst_ni,
    .wr_i, .wr_index_i, .wr_valid_i, .wr_my_ip_i, .wr_their_ip_i, .wr_my_udp_port_i, .wr_their_udp_port_i,
    .wr_my_sctp_port_i, .wr_their_sctp_port_i, .wr_my_vtag_i, .wr_stream_base_i, .wr_stream_count_i,
    .wr_socket_i, .wr_their_vtag_i, .live_wr_i, .live_index_i, .live_value_i, .live_o(live),
    .req_valid_i(req_valid), .req_ready_o(req_ready), .req_meta_i(h_user[95:0]), .req_hdr_i(h_data[95:0]),
    .resp_valid_o(a_valid), .resp_ready_i(a_ready), .resp_hit_o(a_hit), .resp_index_o(a_index),
    .resp_stream_base_o(a_base), .resp_stream_count_o(a_count), .resp_socket_o(a_socket),
    .tx_index_i, .tx_valid_o, .tx_socket_o, .tx_my_sctp_port_o, .tx_their_sctp_port_o, .tx_their_vtag_o,
    .tx_stream_base_o, .tx_stream_count_o
  );
  assign live_o = live;

  // ---- the fork: walker and beat FIFO take each beat together ----------------------------------------
  logic w_valid, w_ready, bf_in_valid, bf_in_ready, may_go;
  logic                 ws_valid, ws_ready, ws_last;
  logic [DataWidth-1:0] ws_data;
  logic [Bytes-1:0]     ws_keep;
  logic [111:0]         ws_user;
  assign may_go = !first_q || asked_q;  // a first beat moves only after its lookup was asked for
  assign w_valid = h_valid && may_go && bf_in_ready;
  assign bf_in_valid = h_valid && may_go && w_ready;
  assign h_ready = may_go && w_ready && bf_in_ready;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      first_q <= 1'b1;
      asked_q <= 1'b0;
    end else begin
      if (h_valid && h_ready) first_q <= h_last;
      if (h_valid && h_ready) asked_q <= 1'b0;
      else if (req_valid && req_ready) asked_q <= 1'b1;
    end
  end

  // Skid buffers end the walker's and the splitter's ready logic in a register at the fork and at the
  // beat FIFO (the logic-depth budget: neither reaches into the hold or the FIFO's RAM).
  rnic_skid #(.Width(BeatW)) u_walk_skid (
    .clk_i, .rst_ni,
    .in_data_i({h_user, h_last, h_keep, h_data}), .in_valid_i(w_valid), .in_ready_o(w_ready),
    .out_data_o({ws_user, ws_last, ws_keep, ws_data}), .out_valid_o(ws_valid), .out_ready_i(ws_ready)
  );

  logic                 bf_valid, bf_ready, bf_last;
  logic                 bs_valid, bs_ready, bs_last;
  logic [DataWidth-1:0] bs_data;
  logic [Bytes-1:0]     bs_keep;
  logic [111:0]         bs_user;
  logic [$clog2(BeatFifoDepth):0] bf_count;
  logic [DataWidth-1:0] bf_data;
  logic [Bytes-1:0]     bf_keep;
  logic [111:0]         bf_user;
  rnic_fifo #(.Width(BeatW), .Depth(BeatFifoDepth)) u_beats (
    .clk_i, .rst_ni,
    .in_data_i({h_user, h_last, h_keep, h_data}), .in_valid_i(bf_in_valid), .in_ready_o(bf_in_ready),
    .out_data_o({bf_user, bf_last, bf_keep, bf_data}), .out_valid_o(bf_valid), .out_ready_i(bf_ready),
    .count_o(bf_count)
  );
  rnic_skid #(.Width(BeatW)) u_split_skid (
    .clk_i, .rst_ni,
    .in_data_i({bf_user, bf_last, bf_keep, bf_data}), .in_valid_i(bf_valid), .in_ready_o(bf_ready),
    .out_data_o({bs_user, bs_last, bs_keep, bs_data}), .out_valid_o(bs_valid), .out_ready_i(bs_ready)
  );

  // ---- the walker: one item per chunk ----------------------------------------------------------------
  logic        d_valid, d_ready, d_last, d_hit, d_malformed;
  logic [2:0]  d_kind;
  logic [3:0]  d_index;
  logic [7:0]  d_type, d_flags;
  logic [15:0] d_offset, d_copy, d_clen, d_stream, d_ssn, d_trim, d_chunks, d_cands, d_segs, d_beyond, d_len;
  rnic_net_walk #(.DataWidth(DataWidth), .NumStreams(NumStreams), .MaxSegments(MaxSegments)) u_walk (
    .clk_i, .rst_ni,
    .s_pkt_tvalid_i(ws_valid), .s_pkt_tready_o(ws_ready), .s_pkt_tdata_i(ws_data), .s_pkt_tkeep_i(ws_keep),
    .s_pkt_tlast_i(ws_last), .s_pkt_tuser_i(ws_user),
    .s_assoc_valid_i(a_valid), .s_assoc_ready_o(a_ready), .s_assoc_hit_i(a_hit),
    .s_assoc_index_i(4'(a_index)), .s_assoc_stream_base_i(a_base), .s_assoc_stream_count_i(a_count),
    .live_i(live),
    .m_desc_valid_o(d_valid), .m_desc_ready_i(d_ready), .m_desc_kind_o(d_kind), .m_desc_offset_o(d_offset),
    .m_desc_copy_bytes_o(d_copy), .m_desc_chunk_length_o(d_clen), .m_desc_type_o(d_type),
    .m_desc_flags_o(d_flags), .m_desc_stream_o(d_stream), .m_desc_ssn_o(d_ssn),
    .m_desc_trimmed_length_o(d_trim), .m_desc_last_o(d_last), .m_desc_hit_o(d_hit),
    .m_desc_assoc_index_o(d_index), .m_desc_malformed_o(d_malformed), .m_desc_chunks_o(d_chunks),
    .m_desc_candidates_o(d_cands), .m_desc_segments_o(d_segs), .m_desc_beyond_o(d_beyond),
    .m_desc_length_o(d_len)
  );


  localparam int DescW = 3 + 16 * 11 + 8 * 2 + 1 + 1 + 4 + 1;
  logic        q_valid, q_ready, q_last, q_hit, q_malformed;
  logic [$clog2(DescFifoDepth):0] q_count;
  logic [2:0]  q_kind;
  logic [3:0]  q_index;
  logic [7:0]  q_type, q_flags;
  logic [15:0] q_offset, q_copy, q_clen, q_stream, q_ssn, q_trim, q_chunks, q_cands, q_segs, q_beyond, q_len;
  rnic_fifo #(.Width(DescW), .Depth(DescFifoDepth)) u_descs (
    .clk_i, .rst_ni,
    .in_data_i({d_kind, d_offset, d_copy, d_clen, d_type, d_flags, d_stream, d_ssn, d_trim, d_last, d_hit,
                d_index, d_malformed, d_chunks, d_cands, d_segs, d_beyond, d_len}),
    .in_valid_i(d_valid), .in_ready_o(d_ready),
    .out_data_o({q_kind, q_offset, q_copy, q_clen, q_type, q_flags, q_stream, q_ssn, q_trim, q_last, q_hit,
                 q_index, q_malformed, q_chunks, q_cands, q_segs, q_beyond, q_len}),
    .out_valid_o(q_valid), .out_ready_i(q_ready), .count_o(q_count)
  );

  // The peer's socket is for the transmit side; the FIFO levels are for monitoring only.
  logic unused;
  assign unused = ^{a_socket, bf_count, q_count, src_count};

  // ---- the source FIFO: each packet's sender, from its lookup request to its summary -----------------
  logic                          src_valid, sp_valid, sp_ready;
  logic [$clog2(SrcFifoDepth):0] src_count;
  rnic_fifo #(.Width(48), .Depth(SrcFifoDepth)) u_srcs (
    .clk_i, .rst_ni,
    .in_data_i({h_user[95:80], h_user[63:32]}), .in_valid_i(req_valid && req_ready), .in_ready_o(src_ready),
    .out_data_o({m_sum_src_port_o, m_sum_src_ip_o}), .out_valid_o(src_valid), .out_ready_i(m_sum_valid_o && m_sum_ready_i),
    .count_o(src_count)
  );
  // The head is there long before the summary (a packet's request precedes its END by the walk's
  // stages); the summary waits for it all the same.
  assign m_sum_valid_o = sp_valid && src_valid;
  assign sp_ready = m_sum_ready_i && src_valid;

  // ---- the splitter: segments, host copy, patches, summary -------------------------------------------
  rnic_net_split #(.DataWidth(DataWidth)) u_split (
    .clk_i, .rst_ni,
    .s_pkt_tvalid_i(bs_valid), .s_pkt_tready_o(bs_ready), .s_pkt_tdata_i(bs_data), .s_pkt_tkeep_i(bs_keep),
    .s_pkt_tlast_i(bs_last), .s_pkt_tuser_i(bs_user),
    .s_desc_valid_i(q_valid), .s_desc_ready_o(q_ready), .s_desc_kind_i(q_kind), .s_desc_offset_i(q_offset),
    .s_desc_copy_bytes_i(q_copy), .s_desc_chunk_length_i(q_clen), .s_desc_type_i(q_type),
    .s_desc_flags_i(q_flags), .s_desc_stream_i(q_stream), .s_desc_ssn_i(q_ssn),
    .s_desc_trimmed_length_i(q_trim), .s_desc_last_i(q_last), .s_desc_hit_i(q_hit),
    .s_desc_assoc_index_i(q_index), .s_desc_malformed_i(q_malformed), .s_desc_chunks_i(q_chunks),
    .s_desc_candidates_i(q_cands), .s_desc_segments_i(q_segs), .s_desc_beyond_i(q_beyond),
    .s_desc_length_i(q_len),
    .m_seg_tvalid_o, .m_seg_tready_i, .m_seg_tdata_o, .m_seg_tkeep_o, .m_seg_tlast_o, .m_seg_tuser_o,
    .m_copy_tvalid_o, .m_copy_tready_i, .m_copy_tdata_o, .m_copy_tkeep_o, .m_copy_tlast_o,
    .m_patch_valid_o, .m_patch_ready_i, .m_patch_copy_offset_o, .m_patch_last_o,
    .m_sum_valid_o(sp_valid), .m_sum_ready_i(sp_ready), .m_sum_hit_o, .m_sum_assoc_index_o, .m_sum_malformed_o, .m_sum_chunks_o,
    .m_sum_candidates_o, .m_sum_segments_o, .m_sum_beyond_o, .m_sum_length_o, .m_sum_copy_length_o
  );

  // The lookup request holds until taken (the first beat does not move before it is asked for).
  `RNIC_ASSERT_HOLD(a_req_hold, clk_i, rst_ni, req_valid, req_ready, {h_user[95:0], h_data[95:0]})
  // Every summary finds its packet's sender at the FIFO's head.
  `RNIC_ASSERT(a_src_there, clk_i, rst_ni, !sp_valid || src_valid)
endmodule
