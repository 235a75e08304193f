// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
// The receive front end's splitter (issue 14, docs/network.md; the front end's unit interfaces, 4; NetRef
// rules 6..8 of tb/net): from the held packet's beats and the chunk walker's descriptor items it builds
//   m_seg_*   the DDP segments for rnic_kernel.s_axis_rx: packet bytes [offset + 18, offset +
//             chunk_length) of every SEGMENT item, realigned to byte 0 (tuser {net 1, ssn, stream});
//   m_copy_*  the host copy of every packet, one AXI-Stream packet: WHOLE and RAW ranges as received,
//             SEGMENT and BEYOND items trimmed to trimmed_length bytes with the length field (bytes
//             2..3) replaced, BEYOND's type/flags made 0x84/0 (PAD, RFC 4820), zero padding to 4;
//   m_patch_* the copy offset of each SEGMENT's type byte (last: the packet's last SEGMENT);
//   m_sum_*   the packet's summary (END's fields and the copy's length), valid only once the copy's
//             last beat has been taken.
// The beats stream through once: a window of two beats (w0 = beat wbeat of the packet, w1 = the next
// one). Two engines read the window at the same time, each at one output beat per cycle and stalling
// on its own output only:
//   copy engine  one piece (a descriptor's byte range) at a time; per cycle it moves
//                min(room in the output beat, rest of the piece) bytes from the window into the
//                assembly register at its fill level: a word rotation (copy ranges start at multiples
//                of 4, RFC 9260 3.2 padding) of the window's 2*Bytes bytes. A piece takes one cycle
//                per output beat it touches (a small one straddling two output beats: two).
//   segment engine  one output beat per cycle per segment: a half-word rotation (segment data starts
//                at 2 mod 4) of the window, tkeep/tlast from the bytes left.
// An engine steps only with its next byte in w0 and w1 present (or w0 the packet's last beat).
// w0 is released (the window moves on by a beat, and a new beat can be taken in the same cycle) when
// neither engine needs any of its bytes any more: their next read positions (or, idle, the start of the
// next item they may still get, bounded by the end of the last descriptor accepted) lie past it; a
// packet's last beat once both engines have finished the packet (copy: END processed; segments: END
// popped). Each engine loads the next packet's first item while it waits for that release.
// So the descriptors must come ahead of the beats they describe (the integrator buffers the beats
// between the walker's fork and s_pkt); s_pkt stalls while a needed descriptor has not come.
// Descriptor queues (4 each, then a register slice) decouple the engines; every output leaves through a
// register slice (registered ready: no output's ready reaches s_pkt_tready_o or s_desc_ready_o).
module rnic_net_split #(
  parameter int DataWidth = 512  // 64..512, a power of two
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // The held packet (rnic_net_hold's m_axis): tuser = {length_bytes[111:96], meta[95:0]}.
  input  logic                   s_pkt_tvalid_i,
  output logic                   s_pkt_tready_o,
  input  logic [DataWidth-1:0]   s_pkt_tdata_i,
  input  logic [DataWidth/8-1:0] s_pkt_tkeep_i,
  input  logic                   s_pkt_tlast_i,
  input  logic [111:0]           s_pkt_tuser_i,
  // The walker's descriptor items (section 3: kind 0 WHOLE, 1 SEGMENT, 2 BEYOND, 3 RAW, 4 END).
  input  logic                   s_desc_valid_i,
  output logic                   s_desc_ready_o,
  input  logic [2:0]             s_desc_kind_i,
  input  logic [15:0]            s_desc_offset_i,
  input  logic [15:0]            s_desc_copy_bytes_i,
  input  logic [15:0]            s_desc_chunk_length_i,
  input  logic [7:0]             s_desc_type_i,
  input  logic [7:0]             s_desc_flags_i,
  input  logic [15:0]            s_desc_stream_i,
  input  logic [15:0]            s_desc_ssn_i,
  input  logic [15:0]            s_desc_trimmed_length_i,
  input  logic                   s_desc_last_i,
  input  logic                   s_desc_hit_i,
  input  logic [3:0]             s_desc_assoc_index_i,
  input  logic                   s_desc_malformed_i,
  input  logic [15:0]            s_desc_chunks_i,
  input  logic [15:0]            s_desc_candidates_i,
  input  logic [15:0]            s_desc_segments_i,
  input  logic [15:0]            s_desc_beyond_i,
  input  logic [15:0]            s_desc_length_i,
  // DDP segments to rnic_kernel.s_axis_rx: tuser = {net = 1, ssn, stream}.
  output logic                   m_seg_tvalid_o,
  input  logic                   m_seg_tready_i,
  output logic [DataWidth-1:0]   m_seg_tdata_o,
  output logic [DataWidth/8-1:0] m_seg_tkeep_o,
  output logic                   m_seg_tlast_o,
  output logic [32:0]            m_seg_tuser_o,
  // The host copy, one AXI-Stream packet per packet.
  output logic                   m_copy_tvalid_o,
  input  logic                   m_copy_tready_i,
  output logic [DataWidth-1:0]   m_copy_tdata_o,
  output logic [DataWidth/8-1:0] m_copy_tkeep_o,
  output logic                   m_copy_tlast_o,
  // One entry per SEGMENT item: where its type byte sits in the host copy.
  output logic                   m_patch_valid_o,
  input  logic                   m_patch_ready_i,
  output logic [15:0]            m_patch_copy_offset_o,
  output logic                   m_patch_last_o,
  // One summary per packet, after its copy's last beat.
  output logic                   m_sum_valid_o,
  input  logic                   m_sum_ready_i,
  output logic                   m_sum_hit_o,
  output logic [3:0]             m_sum_assoc_index_o,
  output logic                   m_sum_malformed_o,
  output logic [15:0]            m_sum_chunks_o,
  output logic [15:0]            m_sum_candidates_o,
  output logic [15:0]            m_sum_segments_o,
  output logic [15:0]            m_sum_beyond_o,
  output logic [15:0]            m_sum_length_o,
  output logic [15:0]            m_sum_copy_length_o
);
  localparam int Bytes = DataWidth / 8;
  localparam int LB = $clog2(Bytes);  // bits of a byte position in a beat
  localparam int Words = Bytes / 4;
  localparam int LW2 = LB - 1;        // bits of a word index into the two-beat window
  localparam int LH2 = LB;            // bits of a half-word index into the two-beat window
  localparam int BeatW = 16 - LB;     // bits of a beat index in a packet

  localparam logic [2:0] KIND_WHOLE = 3'd0;
  localparam logic [2:0] KIND_SEGMENT = 3'd1;
  localparam logic [2:0] KIND_BEYOND = 3'd2;
  localparam logic [2:0] KIND_RAW = 3'd3;
  localparam logic [2:0] KIND_END = 3'd4;
  localparam logic [16:0] NEVER = 17'h10000;  // a read position past every packet (nothing needed)

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_net_split: DataWidth must be 64, 128, 256 or 512");
  end

  // Unused inputs: meta (the walker and the ring writer use it), type/flags (the copy keeps the
  // received bytes), tkeep (lengths come from the descriptors and the packet length), last (END is
  // kind 4).
  // (unused_inputs at the end of the module.)

  // ---- Descriptor queues ---------------------------------------------------------------------------
  // Copy queue: every item. Segment queue: SEGMENT and END items.
  localparam int CqW = 3 + 16 * 3 + 1 + 4 + 1 + 16 * 5;
  localparam int SqW = 2 + 16 * 4;
  logic           cq_in_ready, cq_valid, cq_pop, sq_in_ready, sq_valid, sq_pop, desc_take, sq_push;
  logic [CqW-1:0] cq_data, cqf_data;
  logic           cqf_valid, cqf_ready;
  logic [SqW-1:0] sq_data, sqf_data;
  logic           sqf_valid, sqf_ready;
  logic [2:0]     cq_kind;
  logic [15:0]    cq_off, cq_rem, cq_trim, desc_rem, desc_seg_rem;
  logic [85:0]    cq_sum;  // END: hit, assoc_index, malformed, chunks, candidates, segments, beyond, length
  logic           sq_end, sq_fin;
  logic [15:0]    sq_off, sq_rem, sq_stream, sq_ssn;
  logic [2:0]     cq_count, sq_count;  // unused (monitoring)

  assign s_desc_ready_o = cq_in_ready && sq_in_ready;
  assign desc_take = s_desc_valid_i && s_desc_ready_o;
  assign sq_push = desc_take && (s_desc_kind_i == KIND_SEGMENT || s_desc_kind_i == KIND_END);
  // The copy's bytes of an item (WHOLE: as received; SEGMENT/BEYOND: trimmed, padded to 4; RAW: set once
  // the packet's length is known), a segment's bytes and where they start.
  assign desc_rem = s_desc_kind_i == KIND_WHOLE ? s_desc_copy_bytes_i : (s_desc_trimmed_length_i + 16'd3) & ~16'd3;
  assign desc_seg_rem = s_desc_chunk_length_i - 16'd18;

  rnic_fifo #(.Width(CqW), .Depth(4)) u_copy_q (
    .clk_i,
    .rst_ni,
    .in_data_i  ({s_desc_kind_i, s_desc_offset_i, desc_rem, s_desc_trimmed_length_i,
                  s_desc_hit_i, s_desc_assoc_index_i, s_desc_malformed_i, s_desc_chunks_i,
                  s_desc_candidates_i, s_desc_segments_i, s_desc_beyond_i, s_desc_length_i}),
    .in_valid_i (desc_take),
    .in_ready_o (cq_in_ready),
    .out_data_o (cqf_data),
    .out_valid_o(cqf_valid),
    .out_ready_i(cqf_ready),
    .count_o    (cq_count)
  );
  // A register slice between the queue and the copy engine: the engine's load decision (late in the
  // cycle) ends at the slice instead of running on into the queue's read pointer and RAM address.
  rnic_slice #(.Width(CqW)) u_copy_q_slice (
    .clk_i,
    .rst_ni,
    .in_data_i  (cqf_data),
    .in_valid_i (cqf_valid),
    .in_ready_o (cqf_ready),
    .out_data_o (cq_data),
    .out_valid_o(cq_valid),
    .out_ready_i(cq_pop)
  );
  assign {cq_kind, cq_off, cq_rem, cq_trim, cq_sum} = cq_data;

  rnic_fifo #(.Width(SqW), .Depth(4)) u_seg_q (
    .clk_i,
    .rst_ni,
    .in_data_i  ({s_desc_kind_i == KIND_END, desc_seg_rem <= 16'(Bytes), s_desc_offset_i + 16'd18,
                  desc_seg_rem, s_desc_stream_i, s_desc_ssn_i}),
    .in_valid_i (sq_push),
    .in_ready_o (sq_in_ready),
    .out_data_o (sqf_data),
    .out_valid_o(sqf_valid),
    .out_ready_i(sqf_ready),
    .count_o    (sq_count)
  );
  rnic_slice #(.Width(SqW)) u_seg_q_slice (
    .clk_i,
    .rst_ni,
    .in_data_i  (sqf_data),
    .in_valid_i (sqf_valid),
    .in_ready_o (sqf_ready),
    .out_data_o (sq_data),
    .out_valid_o(sq_valid),
    .out_ready_i(sq_pop)
  );
  assign {sq_end, sq_fin, sq_off, sq_rem, sq_stream, sq_ssn} = sq_data;

  // Where the items accepted so far for the current packet end (every later item starts there or
  // later): an idle engine's bound on what it may still need.
  logic [16:0] front_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) front_q <= '0;
    else if (desc_take) begin
      unique case (s_desc_kind_i)
        KIND_WHOLE: front_q <= {1'b0, s_desc_offset_i} + {1'b0, s_desc_copy_bytes_i};
        KIND_SEGMENT, KIND_BEYOND: front_q <= {1'b0, s_desc_offset_i} + {1'b0, s_desc_chunk_length_i};
        KIND_RAW: front_q <= NEVER;
        default: front_q <= '0;  // END: the next packet starts
      endcase
    end
  end

  // ---- The window ----------------------------------------------------------------------------------
  logic [DataWidth-1:0] w0_q, w1_q;
  logic                 w0_valid_q, w1_valid_q, w0_last_q, w1_last_q;
  logic [15:0]          w0_len_q, w1_len_q;
  logic [BeatW-1:0]     wbeat_q;
  logic                 release_w0, pkt_take;
  logic [2*DataWidth-1:0] win;
  assign win = {w1_q, w0_q};
  assign s_pkt_tready_o = !w1_valid_q || release_w0;
  assign pkt_take = s_pkt_tvalid_i && s_pkt_tready_o;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      w0_valid_q <= 1'b0;
      w1_valid_q <= 1'b0;
      wbeat_q <= '0;
    end else begin
      if (release_w0) wbeat_q <= w0_last_q ? '0 : wbeat_q + 1'b1;
      if (release_w0) begin
        w0_valid_q <= w1_valid_q || pkt_take;
        w1_valid_q <= w1_valid_q && pkt_take;
      end else if (pkt_take) begin
        w0_valid_q <= 1'b1;
        w1_valid_q <= w0_valid_q;
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (release_w0 ? w1_valid_q : (pkt_take && !w0_valid_q)) begin
      w0_q <= release_w0 ? w1_q : s_pkt_tdata_i;
      w0_last_q <= release_w0 ? w1_last_q : s_pkt_tlast_i;
      w0_len_q <= release_w0 ? w1_len_q : s_pkt_tuser_i[111:96];
    end else if (release_w0 || !w0_valid_q) begin
      w0_q <= s_pkt_tdata_i;
      w0_last_q <= s_pkt_tlast_i;
      w0_len_q <= s_pkt_tuser_i[111:96];
    end
    if (pkt_take && (release_w0 ? w1_valid_q : w0_valid_q)) begin
      w1_q <= s_pkt_tdata_i;
      w1_last_q <= s_pkt_tlast_i;
      w1_len_q <= s_pkt_tuser_i[111:96];
    end
  end

  // ---- Output slices -------------------------------------------------------------------------------
  logic                 copy_push, copy_in_ready, copy_last, copy_out_valid, copy_out_last;
  logic [Bytes-1:0]     copy_keep;
  logic                 seg_push, seg_in_ready, seg_fin;
  logic [Bytes-1:0]     seg_keep;
  logic [DataWidth-1:0] seg_data;
  logic                 patch_push, patch_in_ready, patch_last;
  logic                 sum_push, sum_in_ready, sum_out_valid;
  logic [101:0]         sum_out;
  logic [15:0]          tot_q;    // bytes of the current packet's copy so far
  logic [DataWidth-1:0] acc_q;    // the copy beat being assembled
  logic [15:0]          patch_off_q;

  rnic_slice #(.Width(DataWidth + Bytes + 1)) u_copy_out (
    .clk_i,
    .rst_ni,
    .in_data_i  ({acc_q, copy_keep, copy_last}),
    .in_valid_i (copy_push),
    .in_ready_o (copy_in_ready),
    .out_data_o ({m_copy_tdata_o, m_copy_tkeep_o, copy_out_last}),
    .out_valid_o(copy_out_valid),
    .out_ready_i(m_copy_tready_i)
  );
  assign m_copy_tvalid_o = copy_out_valid;
  assign m_copy_tlast_o = copy_out_last;

  logic [31:0] seg_user;
  rnic_slice #(.Width(DataWidth + Bytes + 1 + 32)) u_seg_out (
    .clk_i,
    .rst_ni,
    .in_data_i  ({seg_data, seg_keep, seg_fin, seg_user}),
    .in_valid_i (seg_push),
    .in_ready_o (seg_in_ready),
    .out_data_o ({m_seg_tdata_o, m_seg_tkeep_o, m_seg_tlast_o, m_seg_tuser_o[31:0]}),
    .out_valid_o(m_seg_tvalid_o),
    .out_ready_i(m_seg_tready_i)
  );
  assign m_seg_tuser_o[32] = 1'b1;

  rnic_slice #(.Width(17)) u_patch_out (
    .clk_i,
    .rst_ni,
    .in_data_i  ({patch_off_q, patch_last}),
    .in_valid_i (patch_push),
    .in_ready_o (patch_in_ready),
    .out_data_o ({m_patch_copy_offset_o, m_patch_last_o}),
    .out_valid_o(m_patch_valid_o),
    .out_ready_i(m_patch_ready_i)
  );

  // The summary waits for its copy's last beat: lasts_q counts copy packets delivered whose summary
  // has not been taken.
  logic [2:0] lasts_q;
  logic       sum_ok, sum_take, copy_last_take;
  assign sum_ok = lasts_q != '0;
  rnic_slice #(.Width(102)) u_sum_out (
    .clk_i,
    .rst_ni,
    .in_data_i  ({cq_sum, tot_q}),
    .in_valid_i (sum_push),
    .in_ready_o (sum_in_ready),
    .out_data_o (sum_out),
    .out_valid_o(sum_out_valid),
    .out_ready_i(m_sum_ready_i && sum_ok)
  );
  assign m_sum_valid_o = sum_out_valid && sum_ok;
  assign {m_sum_hit_o, m_sum_assoc_index_o, m_sum_malformed_o, m_sum_chunks_o, m_sum_candidates_o,
          m_sum_segments_o, m_sum_beyond_o, m_sum_length_o, m_sum_copy_length_o} = sum_out;
  assign sum_take = m_sum_valid_o && m_sum_ready_i;
  assign copy_last_take = copy_out_valid && m_copy_tready_i && copy_out_last;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) lasts_q <= '0;
    else lasts_q <= lasts_q + 3'(copy_last_take) - 3'(sum_take);
  end

  // ---- Copy engine ---------------------------------------------------------------------------------
  // The piece: the current item's bytes still to copy (p_src_q on, p_rem_q of them, p_drem_q of those
  // data, the rest zero padding). end_q = fill_q + p_rem_q: where the piece ends counted from the start
  // of the beat being assembled (so "it ends in this beat" is one compare with a constant).
  logic            p_valid_q, p_raw_q, p_trim_q, p_beyond_q, p_seg_q, p_first_q;
  logic [15:0]     p_src_q, p_rem_q, p_drem_q, p_tlen_q;
  logic [16:0]     end_q, end_d;
  logic [LB-1:0]   fill_q, fill_d;  // bytes assembled in acc_q (acc_full_q: a whole beat, fill_q 0)
  logic            acc_full_q, acc_full_d, patch_pend_q, copy_done_q;
  logic            win_ok, c_beat_eq, c_fin, c_step, c_end, c_load, c_fix, c_head_free, copy_free;
  logic [LB:0]     room, c_n;
  logic [16:0]     c_fill_rem, c_fill_drem;
  logic [15:0]     raw_rem;
  logic [LB-3:0]   src_w, fill_w;
  logic [LW2-1:0]  c_rot;           // window word feeding output word 0
  logic [DataWidth-1:0] c_data;     // the window rotated to the output positions

  // The step's bytes all lie in w0 and w1 when w1 is there or w0 is the packet's last beat (a trimmed
  // chunk's padding may run past the packet's end: those bytes are zeroed).
  assign win_ok = w1_valid_q || w0_last_q;
  assign room = (LB + 1)'(Bytes) - {1'b0, fill_q};
  assign c_fin = end_q <= 17'(Bytes);
  assign c_n = c_fin ? p_rem_q[LB:0] : room;
  assign c_beat_eq = p_src_q[15:LB] == wbeat_q;
  assign c_fix = p_valid_q && p_raw_q && w0_valid_q && !copy_done_q;
  assign c_step = p_valid_q && !p_raw_q && !copy_done_q && w0_valid_q && c_beat_eq && win_ok && (!acc_full_q || copy_in_ready) &&
                  !(p_first_q && p_seg_q && patch_pend_q && !patch_in_ready);
  assign c_end = !p_valid_q && cq_valid && cq_kind == KIND_END && !copy_done_q && sum_in_ready &&
                 (!patch_pend_q || patch_in_ready) && (!(acc_full_q || fill_q != '0) || copy_in_ready);
  // Once the packet is done the next packet's first item may be loaded (not stepped) while w0 still
  // holds the packet's last beat: it steps in the cycle after that beat is released.
  assign c_load = (!p_valid_q || (c_step && c_fin)) && cq_valid && cq_kind != KIND_END;
  assign cq_pop = c_load || c_end;

  assign copy_push = (c_step && acc_full_q) || (c_end && (acc_full_q || fill_q != '0));
  assign copy_last = c_end;
  assign copy_keep = acc_full_q ? '1 : ~({Bytes{1'b1}} << fill_q);
  assign sum_push = c_end;
  assign patch_push = (c_step && p_first_q && p_seg_q && patch_pend_q) || (c_end && patch_pend_q);
  assign patch_last = c_end;

  // After a step the beat is full (acc_full) unless the piece ends short of it.
  always_comb begin
    fill_d = fill_q;
    acc_full_d = acc_full_q;
    if (c_step) begin
      fill_d = c_fin ? end_q[LB-1:0] : '0;
      acc_full_d = c_fin ? end_q[LB] : 1'b1;
    end
    if (c_end) begin
      fill_d = '0;
      acc_full_d = 1'b0;
    end
  end
  assign raw_rem = w0_len_q - p_src_q;
  always_comb begin
    end_d = end_q;
    if (c_load) end_d = 17'(fill_d) + {1'b0, cq_rem};
    else if (c_fix) end_d = 17'(fill_q) + {1'b0, raw_rem};
    else if (c_step) end_d = end_q - 17'(Bytes);
  end

  // The rotation: output word w takes window word w + src_w - fill_w (mod the window).
  assign src_w = p_src_q[LB-1:2];
  assign fill_w = fill_q[LB-1:2];
  assign c_rot = LW2'({1'b0, src_w} - {1'b0, fill_w});
  always_comb begin
    for (int w = 0; w < Words; w++) begin
      c_data[32*w +: 32] = win[32*LW2'(LW2'(w) + c_rot) +: 32];
    end
  end

  // Bytes written this step: [fill, fill + rem) within the beat; of those, [fill, fill + drem) are
  // data and the rest zero (padding of a trimmed chunk); the first word of a trimmed chunk gets its
  // length field (and for BEYOND type 0x84, flags 0).
  assign c_fill_rem = 17'(fill_q) + {1'b0, p_rem_q};
  assign c_fill_drem = 17'(fill_q) + {1'b0, p_drem_q};
  logic [DataWidth-1:0] acc_d;
  always_comb begin
    acc_d = acc_q;
    for (int j = 0; j < Bytes; j++) begin
      if (c_step && 17'(j) >= 17'(fill_q) && 17'(j) < c_fill_rem) begin
        if (17'(j) >= c_fill_drem) acc_d[8*j +: 8] = 8'h00;
        else if (p_first_q && p_trim_q && fill_w == (LB - 2)'(j / 4) && (j % 4) == 2)
          acc_d[8*j +: 8] = p_tlen_q[15:8];
        else if (p_first_q && p_trim_q && fill_w == (LB - 2)'(j / 4) && (j % 4) == 3)
          acc_d[8*j +: 8] = p_tlen_q[7:0];
        else if (p_first_q && p_beyond_q && fill_w == (LB - 2)'(j / 4) && (j % 4) == 0)
          acc_d[8*j +: 8] = 8'h84;
        else if (p_first_q && p_beyond_q && fill_w == (LB - 2)'(j / 4) && (j % 4) == 1)
          acc_d[8*j +: 8] = 8'h00;
        else acc_d[8*j +: 8] = c_data[8*j +: 8];
      end
    end
  end

  always_ff @(posedge clk_i) begin
    acc_q <= acc_d;
    end_q <= end_d;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      p_valid_q <= 1'b0;
      fill_q <= '0;
      acc_full_q <= 1'b0;
      patch_pend_q <= 1'b0;
      copy_done_q <= 1'b0;
      tot_q <= '0;
    end else begin
      fill_q <= fill_d;
      acc_full_q <= acc_full_d;
      if (c_step) begin
        tot_q <= tot_q + 16'(c_n);
        if (p_first_q && p_seg_q) begin
          patch_pend_q <= 1'b1;
          patch_off_q <= tot_q;
        end
      end
      if (c_end) begin
        tot_q <= '0;
        patch_pend_q <= 1'b0;
        copy_done_q <= 1'b1;
      end
      if (release_w0 && w0_last_q) copy_done_q <= 1'b0;
      if (c_load) p_valid_q <= 1'b1;
      else if (c_step && c_fin) p_valid_q <= 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (c_load) begin
      p_src_q <= cq_off;
      p_raw_q <= cq_kind == KIND_RAW;
      p_trim_q <= cq_kind == KIND_SEGMENT || cq_kind == KIND_BEYOND;
      p_beyond_q <= cq_kind == KIND_BEYOND;
      p_seg_q <= cq_kind == KIND_SEGMENT;
      p_first_q <= 1'b1;
      p_tlen_q <= cq_trim;
      p_rem_q <= cq_rem;
      p_drem_q <= cq_kind == KIND_WHOLE ? cq_rem : cq_trim;
    end else if (c_fix) begin
      // RAW: to the packet's end (its length comes with the beats).
      p_raw_q <= 1'b0;
      p_rem_q <= raw_rem;
      p_drem_q <= raw_rem;
    end else if (c_step) begin
      p_first_q <= 1'b0;
      p_src_q <= p_src_q + 16'(c_n);
      p_rem_q <= p_rem_q - 16'(c_n);
      p_drem_q <= p_drem_q > 16'(c_n) ? p_drem_q - 16'(c_n) : '0;
    end
  end

  // The copy engine reads w0 no more after this cycle: it has finished the packet, or its piece moves
  // (or already lies) past w0 (a step that does not end the piece moves to the next beat unless it
  // only filled the rest of the output beat from within w0), or the next item starts past it.
  // (An item on its way from the queue into the slice is in neither's output for a cycle: not free.)
  assign c_head_free = cq_valid ? (cq_kind == KIND_END || cq_off[15:LB] > wbeat_q) :
                       !cqf_valid && front_q[16:LB] > (17 - LB)'(wbeat_q);
  always_comb begin
    if (copy_done_q || c_end) copy_free = 1'b1;
    else if (p_valid_q && !(c_step && c_fin)) copy_free = c_step ? p_src_q[LB-1:0] >= fill_q : !c_beat_eq;
    else copy_free = c_head_free;
  end

  // ---- Segment engine ------------------------------------------------------------------------------
  logic            s_valid_q, s_fin_q, seg_done_q;
  logic [15:0]     s_src_q, s_rem_q, s_stream_q, s_ssn_q;
  logic            s_beat_eq, s_step, s_load, s_end, s_head_free, seg_free;
  logic [LH2-2:0]  s_rot;

  assign seg_fin = s_fin_q;  // s_rem_q <= Bytes
  assign s_beat_eq = s_src_q[15:LB] == wbeat_q;
  assign s_step = s_valid_q && !seg_done_q && w0_valid_q && s_beat_eq && win_ok && seg_in_ready;
  assign s_load = (!s_valid_q || (s_step && s_fin_q)) && sq_valid && !sq_end;  // also ahead, as c_load
  assign s_end = (!s_valid_q || (s_step && s_fin_q)) && sq_valid && sq_end && !seg_done_q;
  assign sq_pop = s_load || s_end;
  assign seg_push = s_step;
  assign seg_keep = s_fin_q ? ~({Bytes{1'b1}} << s_rem_q[LB:0]) : '1;
  assign seg_user = {s_ssn_q, s_stream_q};

  assign s_rot = s_src_q[LB-1:1];
  // Output half-word h can only come from window half-words h .. h + Bytes/2 - 1: a 32:1 mux at 512.
  logic [DataWidth-1:0] s_reach;
  always_comb begin
    for (int h = 0; h < Bytes / 2; h++) begin
      s_reach = win[16*h +: DataWidth];
      seg_data[16*h +: 16] = s_reach[16*s_rot +: 16];
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      s_valid_q <= 1'b0;
      seg_done_q <= 1'b0;
    end else begin
      if (s_load) s_valid_q <= 1'b1;
      else if (s_step && s_fin_q) s_valid_q <= 1'b0;
      if (s_end) seg_done_q <= 1'b1;
      if (release_w0 && w0_last_q) seg_done_q <= 1'b0;
    end
  end
  always_ff @(posedge clk_i) begin
    if (s_load) begin
      s_src_q <= sq_off;
      s_rem_q <= sq_rem;
      s_fin_q <= sq_fin;
      s_stream_q <= sq_stream;
      s_ssn_q <= sq_ssn;
    end else if (s_step) begin
      s_src_q <= s_src_q + 16'(Bytes);
      s_rem_q <= s_rem_q - 16'(Bytes);
      s_fin_q <= s_rem_q <= 16'(2 * Bytes);
    end
  end

  // Likewise for the segment engine: a step always moves it to the next beat.
  assign s_head_free = sq_valid ? (sq_end || sq_off[15:LB] > wbeat_q) :
                       !sqf_valid && front_q[16:LB] > (17 - LB)'(wbeat_q);
  always_comb begin
    if (seg_done_q || s_end) seg_free = 1'b1;
    else if (s_valid_q && !(s_step && s_fin_q)) seg_free = s_step || !s_beat_eq;
    else seg_free = s_head_free;
  end

  // ---- Window release -------------------------------------------------------------------------------
  // w0 goes once neither engine reads it again: for a packet's last beat, once both have finished it.
  logic done_both;
  assign done_both = (copy_done_q || c_end) && (seg_done_q || s_end);
  assign release_w0 = w0_valid_q && (w0_last_q ? done_both : copy_free && seg_free);

  logic unused_inputs;
  assign unused_inputs = ^{s_pkt_tkeep_i, s_pkt_tuser_i[95:0], s_desc_type_i, s_desc_flags_i, s_desc_last_i,
                          cq_count, sq_count, front_q[LB-1:0]};

  // ---- Assertions (rtl/rnic_assert.svh) ------------------------------------------------------------
  // A copy step reads within the packet's window; a segment never starts mid-output-beat; the engines
  // never read a beat the window has dropped.
  `RNIC_ASSERT(a_copy_src_kept, clk_i, rst_ni, !(p_valid_q && w0_valid_q && !copy_done_q) ||
               p_src_q[15:LB] >= wbeat_q)
  `RNIC_ASSERT(a_seg_src_kept, clk_i, rst_ni, !(s_valid_q && w0_valid_q && !seg_done_q) ||
               s_src_q[15:LB] >= wbeat_q)
  `RNIC_ASSERT(a_seg_len, clk_i, rst_ni, !s_load || sq_rem != '0)
  `RNIC_ASSERT(a_copy_hold, clk_i, rst_ni, !(c_step && p_first_q && p_trim_q) || c_n >= (LB + 1)'(4))
  `RNIC_ASSERT_HOLD(a_copy_out_hold, clk_i, rst_ni, m_copy_tvalid_o, m_copy_tready_i,
                    {m_copy_tdata_o, m_copy_tkeep_o, m_copy_tlast_o})
  `RNIC_ASSERT_HOLD(a_sum_out_hold, clk_i, rst_ni, m_sum_valid_o, m_sum_ready_i, sum_out)
endmodule
