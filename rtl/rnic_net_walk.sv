// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
// The SCTP chunk walker of the network receive front end (issue 14, docs/network.md; NetRef's rules
// 2..6, tb/net net_ref.hpp; RFC 9260 3.2 chunk layout and padding, 3.3.1 DATA; RFC 5043 5.2 PPID 16
// and the DDP-SSN). Per held packet (s_pkt, rnic_net_hold's m_axis: tuser = {length, meta}) and its
// association lookup result (s_assoc, rnic_net_assoc's response, one per packet in packet order) it
// emits the packet's descriptor items on m_desc (/tmp/fe_interfaces.md section 3), in order:
//   WHOLE {offset 0, copy_bytes 12}                 the common header (every packet)
//   a miss: RAW {offset 12} if longer than 12 bytes
//   a hit: one item per chunk walked from offset 12 while 4 bytes remain: WHOLE (rule 7), SEGMENT
//     (rules 5, 6: the first MaxSegments candidates) or BEYOND (later candidates); then RAW {offset}
//     for a malformed rest (a chunk length < 4 or past the end: rule 4) or the 1..3-byte tail
//   END                                             the summary; m_desc_last_o = 1
// Field use: offset and copy_bytes on every item but END (RAW: copy_bytes = length - offset);
// chunk_length, type, flags on chunk items; stream, ssn, trimmed_length on SEGMENT/BEYOND; hit,
// assoc_index, malformed, chunks, candidates, segments, beyond, length on END. Unused fields are 0.
//
// Stages (one item per cycle at most; every stage advances together when the output skid buffer can
// take an item, so its registered ready is the only stall):
//   window  the current packet's beats in a ring of 4, filled one beat per cycle (a chunk's first 19
//           bytes, at a 4-byte aligned offset, lie in 2 beats at 512 bits, 3 at 64); a beat is popped
//           when the walk is past it, beside the walk (a long chunk's beats: one per cycle). After END
//           the rest of the packet is dropped as it comes (drain), the window cleared.
//   W       the walk: one chunk header per cycle, read at the offset's 4-byte position from the window
//           (a 152-bit window across beats, so neither a header straddling a beat boundary nor the step
//           into the next beat costs a cycle).
//           The remaining length is kept in 4-byte units (rem = 4 rq + rr, rr = length mod 4 fixed per
//           packet), so the next remainder, "last chunk" (padding reaches the end) and "fewer than 4
//           bytes left" are each one subtraction of the chunk length from a register.
//   P       the candidate tests of rule 5 (type, U/B/E, length >= 19, PPID 16, stream < stream_count),
//           stream_base + stream, DDP-SSN - 1, trimmed_length (rule 6).
//   L       the live bit live_i[stream_base + stream] (an index >= NumStreams is not live).
//   O       SEGMENT or BEYOND by the packet's candidate count, the packet's counts, END's summary.
// Malformed lengths (< 4, past the end, 0xFFFF) end the walk with RAW: no stall, no wrap.
// The walk reads the packet's length from tuser (tkeep is not read: rnic_net_hold's promise) and ends
// each packet's beats at tlast whatever the length says. live_i is sampled when a chunk passes L, three
// cycles after its header was walked. An item leaves W..O in 4 cycles, then the skid buffer. The
// walker consumes s_pkt itself (its own tready from a 4-beat ring: one beat per cycle unless a packet
// waits for its lookup result or the output stalls); the next packet's first beat is taken in the
// previous packet's END cycle.
// Throughput at 512 bits (walk_test's ThroughputFigures): a packet of one DATA chunk takes
// max(beats, 3 items) cycles back to back; bundles one chunk per cycle plus the header and END items.
module rnic_net_walk #(
  parameter int DataWidth   = 512,  // 64..512, a power of two
  parameter int NumStreams  = 256,  // DDP streams with a live bit
  parameter int MaxSegments = 32    // candidates per packet sent as SEGMENT; later ones are BEYOND
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // The held packets (rnic_net_hold m_axis).
  input  logic                   s_pkt_tvalid_i,
  output logic                   s_pkt_tready_o,
  input  logic [DataWidth-1:0]   s_pkt_tdata_i,
  input  logic [DataWidth/8-1:0] s_pkt_tkeep_i,
  input  logic                   s_pkt_tlast_i,
  input  logic [111:0]           s_pkt_tuser_i,   // {length_bytes[111:96], meta[95:0]}
  // The association lookup result of each packet (rnic_net_assoc resp).
  input  logic                   s_assoc_valid_i,
  output logic                   s_assoc_ready_o,
  input  logic                   s_assoc_hit_i,
  input  logic [3:0]             s_assoc_index_i,
  input  logic [15:0]            s_assoc_stream_base_i,
  input  logic [15:0]            s_assoc_stream_count_i,
  input  logic [NumStreams-1:0]  live_i,
  // Descriptor items.
  output logic                   m_desc_valid_o,
  input  logic                   m_desc_ready_i,
  output logic [2:0]             m_desc_kind_o,
  output logic [15:0]            m_desc_offset_o,
  output logic [15:0]            m_desc_copy_bytes_o,
  output logic [15:0]            m_desc_chunk_length_o,
  output logic [7:0]             m_desc_type_o,
  output logic [7:0]             m_desc_flags_o,
  output logic [15:0]            m_desc_stream_o,
  output logic [15:0]            m_desc_ssn_o,
  output logic [15:0]            m_desc_trimmed_length_o,
  output logic                   m_desc_last_o,
  output logic                   m_desc_hit_o,
  output logic [3:0]             m_desc_assoc_index_o,
  output logic                   m_desc_malformed_o,
  output logic [15:0]            m_desc_chunks_o,
  output logic [15:0]            m_desc_candidates_o,
  output logic [15:0]            m_desc_segments_o,
  output logic [15:0]            m_desc_beyond_o,
  output logic [15:0]            m_desc_length_o
);
  localparam int Bytes = DataWidth / 8;
  localparam int BeatBits = $clog2(Bytes);
  localparam int HdrBytes = 19;  // chunk bytes 0..18 hold every field the walk reads (T: bit 7 of 18)
  localparam int HdrSlots = (Bytes - 4 + HdrBytes + Bytes - 1) / Bytes;  // beats a header can span
  localparam int Ring = 4;  // window beats: a power of two > HdrSlots (2 at 512 bits, 3 at 64)
  localparam int PosBits = BeatBits - 2;  // 4-byte positions in a beat
  localparam int LiveBits = NumStreams > 1 ? $clog2(NumStreams) : 1;
  localparam int BeatIdxBits = 16 - BeatBits;

  localparam logic [2:0] KindWhole = 3'd0;
  localparam logic [2:0] KindSegment = 3'd1;
  localparam logic [2:0] KindBeyond = 3'd2;
  localparam logic [2:0] KindRaw = 3'd3;
  localparam logic [2:0] KindEnd = 3'd4;

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_net_walk: DataWidth must be a power of two in 64..512");
    if (NumStreams < 1 || NumStreams > 65536) $fatal(1, "rnic_net_walk: NumStreams must be 1..65536");
    if (MaxSegments < 1 || MaxSegments > 65535) $fatal(1, "rnic_net_walk: MaxSegments must be 1..65535");
  end

  // ---------------------------------------------------------------------------------------------
  // Stall: everything after the window moves when the output skid buffer can take an item.
  logic en;

  // ---------------------------------------------------------------------------------------------
  // Walk state.
  typedef enum logic [1:0] {
    SHdr,   // waiting for the next packet's lookup result and first beat
    SWalk,  // walking chunks (or, done_q, the tail/END)
    SEnd    // RAW was sent: END next
  } state_e;
  state_e state_q;
  logic [15:0] off_q;        // the next chunk's offset (a multiple of 4 while walking)
  logic [14:0] rq_q;         // bytes left from off_q, in 4-byte units (rem = 4 rq_q + rr_q), >= 0
  logic [14:0] cq_q;         // ceil(rem / 4) - 1 (signed: -1 when rem = 0)
  logic [14:0] c3q_q;        // rq_q - 1 = ceil((rem - 3) / 4) - 1
  logic [1:0]  rr_q;         // packet length mod 4
  logic        done_q;       // fewer than 4 bytes left (or a miss): the tail, then END
  logic [15:0] len_q;        // the packet's length (tuser, latched with its beats)
  logic        hit_q, malformed_q;
  logic [3:0]  idx_q;
  logic [15:0] base_q, count_q;

  // ---------------------------------------------------------------------------------------------
  // The window: a ring of Ring beats, beat k of the packet in slot k mod Ring; wcnt_q beats held, from
  // beat wbeat_q (the oldest) to rcv_q - 1 (the newest).
  logic [Ring*DataWidth-1:0] win_q;
  logic [2:0]                wcnt_q;
  logic                      wlast_q;  // the packet's last beat has been taken
  logic                      drain_q;  // the packet ended (END sent): drop its beats up to tlast
  logic [BeatIdxBits-1:0]    wbeat_q;
  // Beats taken of the packet, and that minus 1 and 2 (signed: the availability compares).
  logic signed [BeatIdxBits+1:0] rcv0_q, rcv1_q, rcv2_q;

  logic accept, store, pop, clear;
  // pop: the walk is past the oldest beat (its offset is in a later beat). Registered state only.
  assign pop = state_q == SWalk && !done_q && wcnt_q != 3'd0 && off_q[15:BeatBits] != wbeat_q;
  // The ready is registered state only (the logic-depth budget: neither the output's ready through END
  // nor the walk's offset through pop reaches the window's counters): a beat comes in while the ring has
  // a free slot (a slot freed by pop is filled in the next cycle, so a long chunk still moves at one beat
  // per cycle), and with the packet's last beat taken the next packet's first beat waits for the cycle
  // after END (one cycle per packet).
  assign s_pkt_tready_o = drain_q || (!wlast_q && wcnt_q != 3'(Ring));
  assign accept = s_pkt_tvalid_i && s_pkt_tready_o;
  assign store = accept && !drain_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      wcnt_q <= '0;
      wlast_q <= 1'b0;
      drain_q <= 1'b0;
      wbeat_q <= '0;
      rcv0_q <= '0;
      rcv1_q <= -(BeatIdxBits + 2)'(1);
      rcv2_q <= -(BeatIdxBits + 2)'(2);
    end else if (clear) begin
      // END: the window is emptied; the packet's beats not yet taken are dropped as they come. A beat
      // taken now after the packet's last one is the next packet's first.
      wcnt_q <= 3'(wlast_q && store);
      wlast_q <= wlast_q && store && s_pkt_tlast_i;
      drain_q <= !wlast_q && !(accept && s_pkt_tlast_i);
      wbeat_q <= '0;
      rcv0_q <= (BeatIdxBits + 2)'(wlast_q && store);
      rcv1_q <= (BeatIdxBits + 2)'(wlast_q && store) - (BeatIdxBits + 2)'(1);
      rcv2_q <= (BeatIdxBits + 2)'(wlast_q && store) - (BeatIdxBits + 2)'(2);
    end else begin
      wcnt_q <= wcnt_q - 3'(pop) + 3'(store);
      wlast_q <= wlast_q || (store && s_pkt_tlast_i);
      if (drain_q && accept && s_pkt_tlast_i) drain_q <= 1'b0;
      wbeat_q <= wbeat_q + BeatIdxBits'(pop);
      rcv0_q <= rcv0_q + (BeatIdxBits + 2)'(store);
      rcv1_q <= rcv1_q + (BeatIdxBits + 2)'(store);
      rcv2_q <= rcv2_q + (BeatIdxBits + 2)'(store);
    end
  end
  for (genvar i = 0; i < Ring; i++) begin : g_slot
    always_ff @(posedge clk_i) begin
      if (store && (clear ? i == 0 : rcv0_q[1:0] == 2'(i))) win_q[i*DataWidth +: DataWidth] <= s_pkt_tdata_i;
    end
  end
  always_ff @(posedge clk_i) begin
    if (store) len_q <= s_pkt_tuser_i[111:96];
  end

  // ---------------------------------------------------------------------------------------------
  // W: the chunk header at off_q: its bytes 0..18 from the HdrSlots beats from the offset's beat on
  // (a ring read), at the offset's 4-byte position.
  logic [(Ring+HdrSlots-1)*DataWidth-1:0] ring;
  logic [HdrSlots*DataWidth-1:0]          span;
  logic [8*HdrBytes-1:0]                  hdr;
  logic [1:0]                             first;
  logic [PosBits-1:0]                     pos;
  assign ring = {win_q[(HdrSlots-1)*DataWidth-1:0], win_q};
  assign first = off_q[BeatBits+1:BeatBits];
  assign span = ring[DataWidth*first +: HdrSlots*DataWidth];
  assign pos = off_q[BeatBits-1:2];
  assign hdr = span[32*pos +: 8*HdrBytes];

  logic [7:0]  c_type, c_flags;
  logic [15:0] c_len, c_stream, c_ssn;
  logic [31:0] c_ppid;
  logic        c_t;
  assign c_type = hdr[7:0];
  assign c_flags = hdr[15:8];
  assign c_len = {hdr[23:16], hdr[31:24]};
  assign c_stream = {hdr[71:64], hdr[79:72]};
  assign c_ppid = {hdr[103:96], hdr[111:104], hdr[119:112], hdr[127:120]};
  assign c_ssn = {hdr[135:128], hdr[143:136]};
  assign c_t = hdr[151];

  // The window has the header's bytes: the beat of byte off + 18 has been taken (or the packet's last
  // beat has: the chunk is shorter or malformed then). Older beats may still be held (popped one per
  // cycle beside the walk), so crossing into the next beat costs nothing.
  logic [BeatBits+1:0]           far;
  logic signed [BeatIdxBits+1:0] ob;
  logic                          avail, step;
  assign far = {2'b00, off_q[BeatBits-1:0]} + (BeatBits + 2)'(HdrBytes - 1);
  assign ob = {2'b00, off_q[15:BeatBits]};
  always_comb begin
    unique case (far[BeatBits+1:BeatBits])
      2'd0: avail = ob < rcv0_q;
      2'd1: avail = ob < rcv1_q;
      default: avail = ob < rcv2_q;
    endcase
    avail = avail || wlast_q;
  end
  assign step = state_q == SWalk && !done_q && avail;

  // Rule 4 in 4-byte units: with lq = ceil(length / 4), the next remainder rq - lq, "last" (the padding
  // reaches the end: 4 lq >= rem) and "fewer than 4 left after it" (4 lq > rem - 4) are each one
  // subtraction of the length from a register: X - ceil(L / 4) = floor((4 X - L) / 4).
  logic [16:0] d_r, d_c, d_c3;
  logic [14:0] rq_next;
  logic        c_short, c_past, c_bad, c_last, c_done;
  logic [15:0] c_off_next, rem;
  assign d_r = {rq_q, 2'b00} - {1'b0, c_len};
  assign d_c = {cq_q, 2'b00} - {1'b0, c_len};
  assign d_c3 = {c3q_q, 2'b00} - {1'b0, c_len};
  assign rq_next = d_r[16:2];
  assign rem = {rq_q[13:0], rr_q};
  assign c_short = c_len[15:2] == '0;
  assign c_past = c_len > rem;
  assign c_bad = c_short || c_past;
  assign c_last = d_c[16];
  assign c_done = d_c3[16];
  assign c_off_next = ({off_q[15:2], 2'b11} + c_len) & 16'hFFFC;  // off_q + c_pad (off_q 4-aligned)

  // The packet's remainder from offset 12 (hold guarantees >= 12 bytes; shorter: nothing to walk).
  logic [15:0] hdr_rem;
  logic        hdr_go;
  assign hdr_rem = len_q >= 16'd12 ? len_q - 16'd12 : 16'd0;
  assign hdr_go = state_q == SHdr && s_assoc_valid_i && !drain_q && wcnt_q != '0 && en;
  assign s_assoc_ready_o = hdr_go;

  // W register: the item and what P needs of the chunk.
  logic        w_valid_q, w_chunk_q, w_t_q, w_hit_q, w_malformed_q;
  logic [2:0]  w_kind_q;
  logic        w_last_q;  // the chunk's padding reaches the end: copy_bytes = w_rem_q, not w_copy_q
  logic [15:0] w_offset_q, w_copy_q, w_rem_q, w_len_q, w_stream_q, w_ssn_q, w_base_q, w_count_q, w_plen_q;
  logic [7:0]  w_type_q, w_flags_q;
  logic [31:0] w_ppid_q;
  logic [3:0]  w_idx_q;

  // The item the walk emits this cycle (one at most).
  logic        emit, e_chunk, e_end;
  logic [2:0]  e_kind;
  logic [15:0] e_offset, e_copy;
  always_comb begin
    emit = 1'b0;
    e_chunk = 1'b0;
    e_end = 1'b0;
    e_kind = KindWhole;
    e_offset = '0;
    e_copy = '0;
    clear = 1'b0;
    if (hdr_go) begin
      emit = 1'b1;
      e_copy = 16'd12;
    end else if (en && state_q == SEnd) begin
      emit = 1'b1;
      e_end = 1'b1;
    end else if (en && state_q == SWalk && done_q) begin
      emit = 1'b1;
      if (rem != '0) begin
        e_kind = KindRaw;
        e_offset = off_q;
        e_copy = rem;
      end else begin
        e_end = 1'b1;
      end
    end else if (en && step) begin
      emit = 1'b1;
      e_offset = off_q;
      if (c_bad) begin
        e_kind = KindRaw;
        e_copy = rem;
      end else begin
        e_chunk = 1'b1;
        e_copy = c_len;  // padded to 4 in P (the logic-depth budget: not behind the header mux)
      end
    end
    if (e_end) begin
      e_kind = KindEnd;
      clear = 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= SHdr;
      done_q <= 1'b1;
      malformed_q <= 1'b0;
    end else if (hdr_go) begin
      state_q <= SWalk;
      done_q <= !s_assoc_hit_i || hdr_rem < 16'd4;
      malformed_q <= 1'b0;
    end else if (emit) begin
      if (e_end) state_q <= SHdr;
      else if (e_kind == KindRaw) state_q <= SEnd;
      if (e_chunk) done_q <= c_last || c_done;
      if (step && c_bad) malformed_q <= 1'b1;
    end
  end
  always_ff @(posedge clk_i) begin
    if (hdr_go) begin
      off_q <= 16'd12;
      rq_q <= {1'b0, hdr_rem[15:2]};
      rr_q <= hdr_rem[1:0];
      cq_q <= {1'b0, hdr_rem[15:2]} - 15'(hdr_rem[1:0] == 2'd0);
      c3q_q <= {1'b0, hdr_rem[15:2]} - 15'd1;
      hit_q <= s_assoc_hit_i;
      idx_q <= s_assoc_index_i;
      base_q <= s_assoc_stream_base_i;
      count_q <= s_assoc_stream_count_i;
    end else if (emit && e_chunk) begin
      off_q <= c_off_next;
      rq_q <= c_last ? 15'd0 : rq_next;
      rr_q <= c_last ? 2'd0 : rr_q;
      cq_q <= d_c[16:2];
      c3q_q <= d_c3[16:2];
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) w_valid_q <= 1'b0;
    else if (en) w_valid_q <= emit;
  end
  always_ff @(posedge clk_i) begin
    if (en) begin
      w_kind_q <= e_kind;
      w_chunk_q <= e_chunk;
      w_offset_q <= e_offset;
      w_copy_q <= e_copy;
      w_last_q <= e_chunk && c_last;
      w_rem_q <= rem;
      w_len_q <= e_chunk ? c_len : '0;
      w_type_q <= e_chunk ? c_type : '0;
      w_flags_q <= e_chunk ? c_flags : '0;
      w_stream_q <= c_stream;
      w_ppid_q <= c_ppid;
      w_ssn_q <= c_ssn;
      w_t_q <= c_t;
      w_base_q <= base_q;
      w_count_q <= count_q;
      w_hit_q <= hit_q;
      w_idx_q <= idx_q;
      w_malformed_q <= malformed_q;
      w_plen_q <= len_q;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // P: rule 5's tests but the live bit; rule 6's stream, DDP-SSN - 1 and trimmed length
  // (18 + min(T ? 14 : 18, length - 18) = length below 32 / 36, else 32 / 36).
  logic        p_valid_q, p_chunk_q, p_pre_q, p_incount_q, p_hit_q, p_malformed_q;
  logic [2:0]  p_kind_q;
  logic [15:0] p_offset_q, p_copy_q, p_len_q, p_ssn_q, p_trim_q, p_plen_q;
  logic [16:0] p_ddp_q;
  logic [7:0]  p_type_q, p_flags_q;
  logic [3:0]  p_idx_q;
  logic [15:0] w_copy_pad;  // a chunk's length padded to 4 (RFC 9260 3.2)
  assign w_copy_pad = {w_copy_q[15:2] + 14'(w_copy_q[1:0] != 2'd0), 2'b00};
  always_ff @(posedge clk_i) begin
    if (!rst_ni) p_valid_q <= 1'b0;
    else if (en) p_valid_q <= w_valid_q;
  end
  always_ff @(posedge clk_i) begin
    if (en) begin
      p_kind_q <= w_kind_q;
      p_chunk_q <= w_chunk_q;
      p_offset_q <= w_offset_q;
      p_copy_q <= w_last_q ? w_rem_q : w_chunk_q ? w_copy_pad : w_copy_q;
      p_len_q <= w_len_q;
      p_type_q <= w_type_q;
      p_flags_q <= w_flags_q;
      p_pre_q <= w_chunk_q && w_type_q == 8'h00 && w_flags_q[2:0] == 3'b111 && w_len_q >= 16'd19 &&
                 w_ppid_q == 32'd16;
      p_incount_q <= w_stream_q < w_count_q;
      p_ddp_q <= {1'b0, w_base_q} + {1'b0, w_stream_q};
      p_ssn_q <= w_ssn_q - 16'd1;
      p_trim_q <= w_t_q ? (w_len_q < 16'd32 ? w_len_q : 16'd32) : (w_len_q < 16'd36 ? w_len_q : 16'd36);
      p_hit_q <= w_hit_q;
      p_idx_q <= w_idx_q;
      p_malformed_q <= w_malformed_q;
      p_plen_q <= w_plen_q;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // L: the live bit of the DDP stream.
  logic        l_valid_q, l_chunk_q, l_cand_q, l_hit_q, l_malformed_q;
  logic [2:0]  l_kind_q;
  logic [15:0] l_offset_q, l_copy_q, l_len_q, l_ssn_q, l_trim_q, l_plen_q, l_stream_q;
  logic [7:0]  l_type_q, l_flags_q;
  logic [3:0]  l_idx_q;
  logic        p_live;
  if (NumStreams > 1) begin : g_live
    logic [LiveBits-1:0] li;
    assign li = p_ddp_q[LiveBits-1:0];
    assign p_live = p_ddp_q < 17'(NumStreams) && live_i[li];
  end else begin : g_live1
    assign p_live = p_ddp_q == '0 && live_i[0];
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) l_valid_q <= 1'b0;
    else if (en) l_valid_q <= p_valid_q;
  end
  always_ff @(posedge clk_i) begin
    if (en) begin
      l_kind_q <= p_kind_q;
      l_chunk_q <= p_chunk_q;
      l_cand_q <= p_pre_q && p_incount_q && p_live;
      l_offset_q <= p_offset_q;
      l_copy_q <= p_copy_q;
      l_len_q <= p_len_q;
      l_type_q <= p_type_q;
      l_flags_q <= p_flags_q;
      l_stream_q <= p_ddp_q[15:0];
      l_ssn_q <= p_ssn_q;
      l_trim_q <= p_trim_q;
      l_hit_q <= p_hit_q;
      l_idx_q <= p_idx_q;
      l_malformed_q <= p_malformed_q;
      l_plen_q <= p_plen_q;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // O: the packet's counts, SEGMENT or BEYOND, END's summary; the output register.
  logic [15:0] n_chunks_q, n_cand_q, n_seg_q, n_bey_q;
  logic        o_valid_q;
  logic        seg_room;
  assign seg_room = n_seg_q < 16'(MaxSegments);

  typedef struct packed {
    logic [2:0]  kind;
    logic [15:0] offset;
    logic [15:0] copy_bytes;
    logic [15:0] chunk_length;
    logic [7:0]  typ;
    logic [7:0]  flags;
    logic [15:0] stream;
    logic [15:0] ssn;
    logic [15:0] trimmed_length;
    logic        last;
    logic        hit;
    logic [3:0]  assoc_index;
    logic        malformed;
    logic [15:0] chunks;
    logic [15:0] candidates;
    logic [15:0] segments;
    logic [15:0] beyond;
    logic [15:0] length;
  } desc_t;
  localparam int DescWidth = 3 + 3 * 16 + 2 * 8 + 3 * 16 + 1 + 1 + 4 + 1 + 5 * 16;
  desc_t o_q, out;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      o_valid_q <= 1'b0;
      n_chunks_q <= '0;
      n_cand_q <= '0;
      n_seg_q <= '0;
      n_bey_q <= '0;
    end else if (en) begin
      o_valid_q <= l_valid_q;
      if (l_valid_q && l_kind_q == KindEnd) begin
        n_chunks_q <= '0;
        n_cand_q <= '0;
        n_seg_q <= '0;
        n_bey_q <= '0;
      end else if (l_valid_q && l_chunk_q) begin
        n_chunks_q <= n_chunks_q + 16'd1;
        if (l_cand_q) begin
          n_cand_q <= n_cand_q + 16'd1;
          if (seg_room) n_seg_q <= n_seg_q + 16'd1;
          else n_bey_q <= n_bey_q + 16'd1;
        end
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (en) begin
      o_q.kind <= l_cand_q ? (seg_room ? KindSegment : KindBeyond) : l_kind_q;
      o_q.offset <= l_offset_q;
      o_q.copy_bytes <= l_copy_q;
      o_q.chunk_length <= l_len_q;
      o_q.typ <= l_type_q;
      o_q.flags <= l_flags_q;
      o_q.stream <= l_cand_q ? l_stream_q : '0;
      o_q.ssn <= l_cand_q ? l_ssn_q : '0;
      o_q.trimmed_length <= l_cand_q ? l_trim_q : '0;
      o_q.last <= l_kind_q == KindEnd;
      o_q.hit <= l_kind_q == KindEnd && l_hit_q;
      o_q.assoc_index <= l_kind_q == KindEnd ? l_idx_q : '0;
      o_q.malformed <= l_kind_q == KindEnd && l_malformed_q;
      o_q.chunks <= l_kind_q == KindEnd ? n_chunks_q : '0;
      o_q.candidates <= l_kind_q == KindEnd ? n_cand_q : '0;
      o_q.segments <= l_kind_q == KindEnd ? n_seg_q : '0;
      o_q.beyond <= l_kind_q == KindEnd ? n_bey_q : '0;
      o_q.length <= l_kind_q == KindEnd ? l_plen_q : '0;
    end
  end

  logic skid_ready;
  rnic_skid #(.Width(DescWidth)) u_out (
    .clk_i,
    .rst_ni,
    .in_data_i  (o_q),
    .in_valid_i (o_valid_q),
    .in_ready_o (skid_ready),
    .out_data_o (out),
    .out_valid_o(m_desc_valid_o),
    .out_ready_i(m_desc_ready_i)
  );
  assign en = skid_ready;

  assign m_desc_kind_o = out.kind;
  assign m_desc_offset_o = out.offset;
  assign m_desc_copy_bytes_o = out.copy_bytes;
  assign m_desc_chunk_length_o = out.chunk_length;
  assign m_desc_type_o = out.typ;
  assign m_desc_flags_o = out.flags;
  assign m_desc_stream_o = out.stream;
  assign m_desc_ssn_o = out.ssn;
  assign m_desc_trimmed_length_o = out.trimmed_length;
  assign m_desc_last_o = out.last;
  assign m_desc_hit_o = out.hit;
  assign m_desc_assoc_index_o = out.assoc_index;
  assign m_desc_malformed_o = out.malformed;
  assign m_desc_chunks_o = out.chunks;
  assign m_desc_candidates_o = out.candidates;
  assign m_desc_segments_o = out.segments;
  assign m_desc_beyond_o = out.beyond;
  assign m_desc_length_o = out.length;

  // The metadata and tkeep are rnic_net_hold's promise (length in tuser, tkeep all ones but on the
  // last beat); the walk reads the length only.
  logic unused_in;
  assign unused_in = ^{s_pkt_tuser_i[95:0], s_pkt_tkeep_i};
  // TSN (4..7), stream sequence number (10..11), the DDP control byte's other bits; the fractions of
  // the 4-byte-unit subtractions.
  logic unused_hdr;
  assign unused_hdr = ^{hdr[63:32], hdr[95:80], hdr[150:144], far[BeatBits-1:0], d_r[1:0], d_c[1:0], d_c3[1:0]};

  // Beats and the window: never more than Ring beats held, the oldest the walk's beat or behind it.
  `RNIC_ASSERT(a_window_bound, clk_i, rst_ni, wcnt_q <= 3'(Ring))
  `RNIC_ASSERT(a_walk_not_behind, clk_i, rst_ni,
               !(state_q == SWalk && !done_q) || off_q[15:BeatBits] >= wbeat_q)
  `RNIC_ASSERT(a_offset_aligned, clk_i, rst_ni, !(state_q == SWalk && !done_q) || off_q[1:0] == 2'b00)
  `RNIC_ASSERT_HOLD(a_desc_hold, clk_i, rst_ni, m_desc_valid_o, m_desc_ready_i,
                    {m_desc_kind_o, m_desc_offset_o, m_desc_copy_bytes_o, m_desc_length_o})
endmodule
