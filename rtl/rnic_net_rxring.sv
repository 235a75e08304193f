// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
`include "rnic_hw.svh"
`include "rnic_structs.svh"
// The receive packet ring writer (issue 14, docs/network.md "Rings in host memory"): every SCTP packet
// of rnic_net_rx (its host copy, patch list and summary) goes to the next slot of a ring in host
// memory, slot i = prod mod 2^log2_slots at base + (i << slot_log2):
//   slot + 16 (NET_SLOT_DESC_BYTES)  the copy, the stream rotated by 16 bytes inside the bus beats;
//   slot + 16 + copy_offset          {0x84, 0x00} over the type and flags of every chunk whose fate is
//                                    DECLINED (a PAD chunk, RFC 4820; its type's top bits 10: skip it
//                                    and go on, RFC 9260 3.2);
//   slot + 0                         the 16-byte descriptor (hw.def NRXD), written once every B of
//                                    the copy and patch writes has come back; prod_o counts its B.
//
// Stages:
//   C  (copy)   takes the copy beats; at a packet's first beat the slot is reserved (a slot is free
//               when res - cons_i < 2^log2_slots, judged from registers: a packet starts one cycle
//               after the previous one ended) or the packet is discarded (ring full, enable_i low).
//               Beats within the slot go to the W FIFO (32 beats), and a burst's AW (<= 16 beats,
//               16-beat aligned from the slot) into the AW queue once its last beat is in the FIFO,
//               so W never waits on the input. Beats past the slot are not written (drop_size).
//               At its end the packet's record {slot index, tag, write, too big, bursts} goes to the
//               record FIFO; the next packet's copy streams while the tail finishes this one.
//   T  (tail)   per packet in order: its record and summary; one patch entry and one fate per
//               segment (the fate FIFO, FateDepth); a PAD write per DECLINED segment; then it waits
//               for every B of the packet's writes, and writes the descriptor (or drops the packet).
//   AW          one register: the tail's single-beat write first, else the AW queue's head. Every
//               AW's source goes to the order FIFO (the W side follows it) and its kind and packet tag
//               to the B FIFO (B comes in AW order).
// A packet's publication: the tail keeps pub (the next slot index to publish). A packet whose slot
// index is not pub (a packet before it was reserved and then not published: an error B) is dropped
// too (drop_size) and C restarts reserving at pub, so descriptors stay in slot order.
// enable_i low: C discards new packets; a packet C already writes is written to its end (every issued
// burst completes); the tail writes nothing more; prod, pub and the reservation go back to 0 (phase 1).
// Packets from before a disable (the epoch counts disables) are dropped as drop_full.
// Reset (rst_ni low, synchronous): everything in flight is forgotten.
module rnic_net_rxring #(
  parameter int DataWidth   = 512,  // 128..512, a power of two
  parameter int MaxSegments = 32,   // patch entries per packet at most
  parameter int FateDepth   = 64    // power of two
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   enable_i,
  input  logic [63:0]            base_i,
  input  logic [4:0]             log2_slots_i,
  input  logic [4:0]             slot_log2_i,
  input  logic [31:0]            cons_i,
  output logic [31:0]            prod_o,
  output logic                   busy_o,
  // from rnic_net_rx
  input  logic                   s_copy_tvalid_i,
  output logic                   s_copy_tready_o,
  input  logic [DataWidth-1:0]   s_copy_tdata_i,
  input  logic [DataWidth/8-1:0] s_copy_tkeep_i,
  input  logic                   s_copy_tlast_i,
  input  logic                   s_patch_valid_i,
  output logic                   s_patch_ready_o,
  input  logic [15:0]            s_patch_copy_offset_i,
  input  logic                   s_patch_last_i,
  input  logic                   s_sum_valid_i,
  output logic                   s_sum_ready_o,
  input  logic                   s_sum_hit_i,
  input  logic [3:0]             s_sum_assoc_index_i,
  input  logic                   s_sum_malformed_i,
  input  logic [15:0]            s_sum_segments_i,
  input  logic [15:0]            s_sum_length_i,
  input  logic [15:0]            s_sum_copy_length_i,
  input  logic [31:0]            s_sum_src_ip_i,      // the sender: NRXD SRC_IP, SRC_PORT
  input  logic [15:0]            s_sum_src_port_i,
  // fates from rnic_kernel.m_axis_fate (no ready)
  input  logic                   fate_valid_i,
  input  logic [1:0]             fate_i,
  output logic                   fate_pop_o,
  // AXI4 master (AR/R tied off)
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
  output logic                   drop_full_o,
  output logic                   drop_size_o,
  output logic                   bresp_err_o,
  output logic                   error_o            // sticky: fate FIFO overflow
);
  localparam int Bytes = DataWidth / 8;
  localparam int Lb = $clog2(Bytes);
  localparam int DescBytes = RNIC_NET_SLOT_DESC_BYTES;  // 16
  localparam int FirstK = DescBytes / Bytes;   // slot beat of the copy's first byte: 1 at 128 bits
  localparam int WfDepth = 32;                 // W FIFO, beats
  localparam int MaxOut = 32;                  // AWs issued whose B has not come back, at most
  localparam int OutW = $clog2(MaxOut + 1);
  localparam int RecDepth = 8;                 // packets between C and the tail
  localparam int TagW = 4;                     // packet tags: > RecDepth + 2 packets in flight
  localparam int SegW = $clog2(MaxSegments + 1);
  localparam int WfW = DataWidth + Bytes + 1;  // {last, strb, data}
  localparam int AwqW = TagW + 15 + 16 + 4;    // {tag, slot index, byte offset in slot, len}
  localparam int RecW = 32 + TagW + 16 + 2 + 2;  // {slot index (free-running), tag, bursts, epoch, write, big}
  localparam int SumW = 1 + 4 + 1 + SegW + 16 + 16 + 32 + 16;
  localparam logic [1:0] KindCopy = 2'd0, KindPatch = 2'd1, KindDesc = 2'd2;

  initial begin
    if (DataWidth < 128 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_net_rxring: DataWidth must be 128, 256 or 512");
    if (FateDepth < 2 || (FateDepth & (FateDepth - 1)) != 0)
      $fatal(1, "rnic_net_rxring: FateDepth must be a power of two");
    if (MaxSegments < 1 || MaxSegments > 255) $fatal(1, "rnic_net_rxring: MaxSegments must be 1..255");
  end

  assign m_axi_awsize_o = 3'(Lb);
  assign m_axi_awburst_o = 2'b01;  // INCR
  assign m_axi_araddr_o = '0;
  assign m_axi_arlen_o = '0;
  assign m_axi_arsize_o = 3'(Lb);
  assign m_axi_arburst_o = 2'b01;
  assign m_axi_arvalid_o = 1'b0;
  assign m_axi_rready_o = 1'b1;
  assign m_axi_bready_o = 1'b1;

  // ---- Configuration, registered (static while enable_i is low and nothing is in flight) ---------
  logic [14:0] nmask_q;    // 2^log2_slots - 1
  logic [31:0] nfree_q;    // ~(2^log2_slots - 1): bits a free distance must not have
  logic [15:0] lap_q;      // 1 << log2_slots: the lap bit of a slot index (the phase)
  logic [15:0] kmask_q;    // beats of a slot: k & kmask_q != 0 -> past the slot
  logic [16:0] bmask_q;    // bytes of a slot likewise
  logic        en_q;
  logic [1:0]  epoch_q;    // disables so far
  always_ff @(posedge clk_i) begin
    nmask_q <= 15'((32'd1 << log2_slots_i) - 1);
    nfree_q <= ~((32'd1 << log2_slots_i) - 1);
    lap_q <= 16'(32'd1 << log2_slots_i);
    kmask_q <= 16'(32'hFFFF_FFFF << (slot_log2_i - 5'(Lb)));
    bmask_q <= 17'(32'hFFFF_FFFF << slot_log2_i);
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      en_q <= 1'b0;
      epoch_q <= '0;
    end else begin
      en_q <= enable_i;
      if (en_q && !enable_i) epoch_q <= epoch_q + 1'b1;
    end
  end

  // ---- Shared state between C and the tail -------------------------------------------------------
  logic [31:0]       res_q, pub_q, res_next;
  logic              rewind_q, rewind_set;
  logic [TagW-1:0]   tag_q;                 // the next packet's tag
  logic [2**TagW-1:0] err_q;                 // per tag: a copy or patch write of the packet got an error B
  logic [15:0]       cburst_q, cburst_b_q;  // copy bursts queued / answered
  logic              pub_inc;
  assign res_next = rewind_q ? pub_q : res_q;

  // ---- C: the copy ------------------------------------------------------------------------------
  logic             ok_q, settle_q, inpkt_q, flush_q, cwrite_q, cbig_q;
  logic [31:0]      cj_q;
  logic [TagW-1:0]  ctag_q;
  logic [1:0]       cepoch_q;
  logic [15:0]      k_q;
  logic [3:0]       bs_q;
  logic             wf_ready, awq_ready, rec_ready;
  logic             take, first, c_write, c_last_in, need_flush, c_end, c_beat, c_push, c_inslot, c_wlast;
  logic             c_newburst, c_awq_push;
  logic [15:0]      c_k;
  logic [3:0]       c_bs;
  logic [31:0]      c_j;
  logic [DataWidth-1:0] rot_data, flush_data, c_data;
  logic [Bytes-1:0] rot_keep, flush_keep, c_keep;
  logic [127:0]     carry_q;
  logic [15:0]      carry_keep_q, carry_keep;

  // Between packets: ok_q must be judged on the current res and enable (settle_q: the cycle after a
  // packet's end; enable_i's rising edge: the cycle ok_q still says disabled).
  assign s_copy_tready_o = inpkt_q ? (!flush_q && wf_ready && rec_ready)
                                   : (!settle_q && !(enable_i && !en_q) && wf_ready && rec_ready);
  assign take = s_copy_tvalid_i && s_copy_tready_o;
  assign first = take && !inpkt_q;
  assign c_write = inpkt_q ? cwrite_q : ok_q;
  assign c_j = inpkt_q ? cj_q : res_next;
  assign carry_keep = inpkt_q ? carry_keep_q : 16'h0;

  if (Bytes > DescBytes) begin : g_rot
    assign rot_data = {s_copy_tdata_i[DataWidth-129:0], carry_q};
    assign rot_keep = {s_copy_tkeep_i[Bytes-17:0], carry_keep};
    assign flush_data = {{(DataWidth - 128){1'b0}}, carry_q};
    assign flush_keep = {{(Bytes - 16){1'b0}}, carry_keep_q};
    assign need_flush = s_copy_tkeep_i[Bytes-16];
    always_ff @(posedge clk_i) begin
      if (take) begin
        carry_q <= s_copy_tdata_i[DataWidth-1 -: 128];
        carry_keep_q <= s_copy_tkeep_i[Bytes-1 -: 16];
      end
    end
  end else begin : g_norot
    assign rot_data = s_copy_tdata_i;
    assign rot_keep = s_copy_tkeep_i;
    assign flush_data = '0;
    assign flush_keep = '0;
    assign need_flush = 1'b0;
    assign carry_q = '0;
    assign carry_keep_q = '0;
  end

  // The beat pushed this cycle: an input beat (rotated) or the flush beat (the last 16 bytes).
  assign c_last_in = take && s_copy_tlast_i && !need_flush;
  assign c_end = c_last_in || (flush_q && wf_ready);  // the packet's final beat
  assign c_beat = take || (flush_q && wf_ready);
  assign c_k = first ? 16'(FirstK) : k_q;
  // k_q's properties, registered with it: within the slot; the last beat of a 16-beat block.
  logic kin_q, k15_q;
  logic [15:0] k_next;
  assign k_next = k_q + 1'b1;
  assign c_inslot = first || kin_q;  // the copy's first beat is always within the slot (>= 4 KiB)
  assign c_push = c_beat && c_write && c_inslot;
  assign c_data = flush_q ? flush_data : rot_data;
  assign c_keep = flush_q ? flush_keep : rot_keep;
  assign c_newburst = first || c_k[3:0] == 4'd0;
  assign c_bs = c_newburst ? c_k[3:0] : bs_q;
  assign c_wlast = c_end || (!first && k15_q);
  assign c_awq_push = c_push && c_wlast;

  logic [AwqW-1:0] awq_in;
  logic [15:0]     c_off;
  assign c_off = 16'({c_k[15:4], c_bs} << Lb);
  logic [TagW-1:0] c_tag;
  assign c_tag = first ? tag_q : ctag_q;
  assign awq_in = {c_tag, 15'(c_j) & nmask_q, c_off, c_k[3:0] - c_bs};

  logic [RecW-1:0] rec_in;
  logic            c_big, c_epoch_ok;
  assign c_big = (first ? 1'b0 : cbig_q) || (c_beat && c_write && !c_inslot);
  assign c_epoch_ok = (first ? epoch_q : cepoch_q) == epoch_q;
  assign rec_in = {c_j, c_tag, cburst_q + 16'(c_awq_push), (first ? epoch_q : cepoch_q),
                   c_write, c_big};

  // Slot free: res - cons < 2^log2_slots, registered (a packet starts one cycle after the one before
  // it ended: settle_q), so its reservation is judged on the updated res.
  logic [31:0] free_dist;
  assign free_dist = res_next - cons_i;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ok_q <= 1'b0;
      settle_q <= 1'b1;
      inpkt_q <= 1'b0;
      flush_q <= 1'b0;
      res_q <= '0;
      rewind_q <= 1'b0;
      tag_q <= '0;
      cburst_q <= '0;
    end else begin
      ok_q <= enable_i && (free_dist & nfree_q) == '0;
      settle_q <= c_end;
      if (first) begin
        inpkt_q <= 1'b1;
        tag_q <= tag_q + 1'b1;
      end
      if (take && s_copy_tlast_i && need_flush) flush_q <= 1'b1;
      if (c_end) begin
        inpkt_q <= 1'b0;
        flush_q <= 1'b0;
      end
      if (c_awq_push) cburst_q <= cburst_q + 1'b1;
      // The reservation: materialised at a packet's start, advanced at its end when it is written
      // whole; back to pub after a packet the tail did not publish; 0 while disabled.
      if (first) begin
        res_q <= res_next;
        rewind_q <= 1'b0;
      end
      if (c_end && c_write && !c_big && c_epoch_ok) res_q <= c_j + 1'b1;
      if (rewind_set) rewind_q <= 1'b1;
      if (!enable_i) begin
        res_q <= '0;
        rewind_q <= 1'b0;
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (first) begin
      cwrite_q <= ok_q;
      cj_q <= res_next;
      ctag_q <= tag_q;
      cepoch_q <= epoch_q;
    end
    if (c_beat) begin
      k_q <= first ? 16'(FirstK + 1) : k_next;
      kin_q <= first || (k_next & kmask_q) == '0;
      k15_q <= !first && k_q[3:0] == 4'hE;
      bs_q <= c_bs;
      cbig_q <= c_big;
    end
  end

  // The W FIFO (copy beats), the AW queue (copy bursts), the record FIFO (packets).
  logic [WfW-1:0]  wf_out;
  logic            wf_valid, wf_pop, awq_valid, awq_pop, rec_valid, rec_pop;
  logic [AwqW-1:0] awq_out;
  logic [RecW-1:0] rec_out;
  logic [$clog2(WfDepth):0]   wf_count;
  logic [$clog2(MaxOut):0]    awq_count;
  logic [$clog2(RecDepth):0]  rec_count;
  rnic_fifo #(.Width(WfW), .Depth(WfDepth)) u_wf (
    .clk_i, .rst_ni,
    .in_data_i  ({c_wlast, c_keep, c_data}),
    .in_valid_i (c_push),
    .in_ready_o (wf_ready),
    .out_data_o (wf_out),
    .out_valid_o(wf_valid),
    .out_ready_i(wf_pop),
    .count_o    (wf_count)
  );
  rnic_fifo #(.Width(AwqW), .Depth(MaxOut)) u_awq (
    .clk_i, .rst_ni,
    .in_data_i  (awq_in),
    .in_valid_i (c_awq_push),
    .in_ready_o (awq_ready),
    .out_data_o (awq_out),
    .out_valid_o(awq_valid),
    .out_ready_i(awq_pop),
    .count_o    (awq_count)
  );
  rnic_fifo #(.Width(RecW), .Depth(RecDepth)) u_rec (
    .clk_i, .rst_ni,
    .in_data_i  (rec_in),
    .in_valid_i (c_end),
    .in_ready_o (rec_ready),
    .out_data_o (rec_out),
    .out_valid_o(rec_valid),
    .out_ready_i(rec_pop),
    .count_o    (rec_count)
  );

  // ---- Summaries, patches and fates -------------------------------------------------------------
  logic            sum_valid, sum_pop, patch_valid, patch_pop, fate_valid, fate_ready, fate_pop;
  logic [SumW-1:0] sum_out;
  logic [16:0]     patch_out;
  logic [1:0]      fate;
  logic [$clog2(16):0]        sum_count;
  logic [$clog2(64):0]        patch_count;
  logic [$clog2(FateDepth):0] fate_count;
  rnic_fifo #(.Width(SumW), .Depth(16)) u_sum (
    .clk_i, .rst_ni,
    .in_data_i  ({s_sum_hit_i, s_sum_assoc_index_i, s_sum_malformed_i, SegW'(s_sum_segments_i), s_sum_length_i,
                  s_sum_copy_length_i, s_sum_src_ip_i, s_sum_src_port_i}),
    .in_valid_i (s_sum_valid_i),
    .in_ready_o (s_sum_ready_o),
    .out_data_o (sum_out),
    .out_valid_o(sum_valid),
    .out_ready_i(sum_pop),
    .count_o    (sum_count)
  );
  rnic_fifo #(.Width(17), .Depth(64)) u_patch (
    .clk_i, .rst_ni,
    .in_data_i  ({s_patch_last_i, s_patch_copy_offset_i}),
    .in_valid_i (s_patch_valid_i),
    .in_ready_o (s_patch_ready_o),
    .out_data_o (patch_out),
    .out_valid_o(patch_valid),
    .out_ready_i(patch_pop),
    .count_o    (patch_count)
  );
  rnic_fifo #(.Width(2), .Depth(FateDepth)) u_fate (
    .clk_i, .rst_ni,
    .in_data_i  (fate_i),
    .in_valid_i (fate_valid_i),
    .in_ready_o (fate_ready),
    .out_data_o (fate),
    .out_valid_o(fate_valid),
    .out_ready_i(fate_pop),
    .count_o    (fate_count)
  );
  assign fate_pop_o = fate_pop;

  logic error_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) error_q <= 1'b0;
    else if (fate_valid_i && !fate_ready) error_q <= 1'b1;
  end
  assign error_o = error_q;

  // ---- T: the tail ------------------------------------------------------------------------------
  typedef enum logic [2:0] {TIdle, TSeg, TPad, TWaitB, TDesc} tstate_e;
  tstate_e          ts_q;
  logic             t_live_q, t_full_q, t_hit_q, t_mal_q;
  logic [15:0]      t_j_q;   // the slot index's low bits (slot, lap)
  logic [TagW-1:0]  t_tag_q;
  logic [15:0]      t_cend_q, t_len_q, t_clen_q, t_sport_q;
  logic [31:0]      t_sip_q;
  logic [3:0]       t_idx_q;
  logic [SegW-1:0]  t_left_q;
  logic [7:0]       t_taken_q, t_dup_q, t_decl_q;
  logic [OutW-1:0]  t_out_q;   // PAD writes whose B has not come back
  logic             tw_req_q, tw_wpend_q;  // the tail's write: AW not yet loaded; W not yet sent
  logic [1:0]       tw_kind_q;
  logic [14:0]      tw_slot_q;
  logic [15:0]      tw_off_q;
  logic [DataWidth-1:0] tw_data_q;
  logic [Bytes-1:0] tw_strb_q;
  logic             t_start, seg_go, t_pad, t_pad_go, t_bdone, t_publish, t_drop, tw_idle;
  logic             drop_full_q, drop_size_q;
  logic [16:0]      pad_byte;  // 16 + copy_offset
  logic             pad_inslot;

  // Record fields.
  logic [31:0]     r_j;
  logic [TagW-1:0] r_tag;
  logic [15:0]     r_cend;
  logic [1:0]      r_epoch;
  logic            r_write, r_big;
  assign {r_j, r_tag, r_cend, r_epoch, r_write, r_big} = rec_out;
  // Summary fields.
  logic            s_hit, s_mal;
  logic [3:0]      s_idx;
  logic [SegW-1:0] s_segs;
  logic [15:0]     s_len, s_clen, s_sport;
  logic [31:0]     s_sip;
  assign {s_hit, s_idx, s_mal, s_segs, s_len, s_clen, s_sip, s_sport} = sum_out;

  assign tw_idle = !tw_req_q && !tw_wpend_q;
  assign t_start = ts_q == TIdle && rec_valid && sum_valid;
  assign rec_pop = t_start;
  assign sum_pop = t_start;
  assign seg_go = ts_q == TSeg && patch_valid && fate_valid;
  assign patch_pop = seg_go;
  assign fate_pop = seg_go;
  assign pad_byte = 17'(DescBytes) + {1'b0, patch_out[15:0]};
  assign pad_inslot = (pad_byte & bmask_q) == '0;
  assign t_pad = fate == RNIC_FATE_DECLINED;
  assign t_pad_go = seg_go && t_pad && t_live_q && enable_i && pad_inslot;
  // Every copy burst of the packet answered (bursts are answered in order) and every PAD write.
  logic [15:0] cb_ahead;
  assign cb_ahead = cburst_b_q - t_cend_q;
  assign t_bdone = !cb_ahead[15] && t_out_q == '0;
  assign t_publish = ts_q == TWaitB && t_bdone && tw_idle && t_live_q && enable_i && !err_q[t_tag_q];
  assign t_drop = ts_q == TWaitB && t_bdone && tw_idle && !t_publish;
  assign rewind_set = t_drop && t_live_q && enable_i;  // reserved, written, not published: an error B
  assign pub_inc = t_publish;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ts_q <= TIdle;
      drop_full_q <= 1'b0;
      drop_size_q <= 1'b0;
      pub_q <= '0;
    end else begin
      drop_full_q <= 1'b0;
      drop_size_q <= 1'b0;
      unique case (ts_q)
        TIdle: if (t_start) ts_q <= s_segs == '0 ? TWaitB : TSeg;
        TSeg: if (seg_go) ts_q <= t_pad_go ? TPad : t_left_q == SegW'(1) ? TWaitB : TSeg;
        TPad: if (tw_idle) ts_q <= t_left_q == '0 ? TWaitB : TSeg;
        TWaitB: begin
          if (t_publish) ts_q <= TDesc;
          if (t_drop) begin
            ts_q <= TIdle;
            drop_full_q <= t_full_q || !enable_i;
            drop_size_q <= !t_full_q && enable_i;
          end
        end
        TDesc: if (tw_idle) ts_q <= TIdle;
        default: ts_q <= TIdle;
      endcase
      if (pub_inc) pub_q <= pub_q + 1'b1;
      if (!enable_i) pub_q <= '0;
    end
  end
  always_ff @(posedge clk_i) begin
    if (t_start) begin
      t_full_q <= !r_write || r_epoch != epoch_q || !enable_i;
      t_live_q <= r_write && r_epoch == epoch_q && enable_i && !r_big && r_j == pub_q;
      t_j_q <= r_j[15:0];
      t_tag_q <= r_tag;
      t_cend_q <= r_cend;
      t_hit_q <= s_hit;
      t_idx_q <= s_idx;
      t_mal_q <= s_mal;
      t_len_q <= s_len;
      t_clen_q <= s_clen;
      t_sip_q <= s_sip;
      t_sport_q <= s_sport;
      t_left_q <= s_segs;
      t_taken_q <= '0;
      t_dup_q <= '0;
      t_decl_q <= '0;
    end
    if (seg_go) begin
      t_left_q <= t_left_q - 1'b1;
      if (fate == RNIC_FATE_TAKEN) t_taken_q <= t_taken_q + 1'b1;
      if (fate == RNIC_FATE_DUP) t_dup_q <= t_dup_q + 1'b1;
      if (fate == RNIC_FATE_DECLINED) t_decl_q <= t_decl_q + 1'b1;
    end
    if (!enable_i) t_live_q <= 1'b0;
  end

  // The descriptor (hw.def NRXD, little-endian).
  logic [127:0] desc;
  logic [7:0]   assoc;
  assign assoc = t_hit_q ? {4'h0, t_idx_q} : 8'(RNIC_NET_ASSOC_MISS);
  always_comb begin
    desc = '0;
    desc[RNIC_NRXD_COPY_LEN_LSB +: RNIC_NRXD_COPY_LEN_BITS] = t_clen_q;
    desc[RNIC_NRXD_WIRE_LEN_LSB +: RNIC_NRXD_WIRE_LEN_BITS] = t_len_q;
    desc[RNIC_NRXD_ASSOC_LSB +: RNIC_NRXD_ASSOC_BITS] = assoc;
    desc[RNIC_NRXD_FLAGS_PHASE_LSB] = (t_j_q[15:0] & lap_q) == '0;
    desc[RNIC_NRXD_FLAGS_MALFORMED_LSB] = t_mal_q;
    desc[RNIC_NRXD_TAKEN_LSB +: RNIC_NRXD_TAKEN_BITS] = t_taken_q;
    desc[RNIC_NRXD_DUP_LSB +: RNIC_NRXD_DUP_BITS] = t_dup_q;
    desc[RNIC_NRXD_DECLINED_LSB +: RNIC_NRXD_DECLINED_BITS] = t_decl_q;
    desc[RNIC_NRXD_SRC_PORT_LSB +: RNIC_NRXD_SRC_PORT_BITS] = t_sport_q;
    desc[RNIC_NRXD_SRC_IP_LSB +: RNIC_NRXD_SRC_IP_BITS] = t_sip_q;
  end

  // The tail's write register: a PAD ({0x84, 0x00} at lane pad_byte mod Bytes) or the descriptor.
  logic aw_load_tail, w_tail_done;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      tw_req_q <= 1'b0;
      tw_wpend_q <= 1'b0;
    end else begin
      if (t_pad_go || t_publish) begin
        tw_req_q <= 1'b1;
        tw_wpend_q <= 1'b1;
      end
      if (aw_load_tail) tw_req_q <= 1'b0;
      if (w_tail_done) tw_wpend_q <= 1'b0;
    end
  end
  always_ff @(posedge clk_i) begin
    if (t_pad_go) begin
      tw_kind_q <= KindPatch;
      tw_slot_q <= 15'(t_j_q) & nmask_q;
      tw_off_q <= 16'({pad_byte[16:Lb], Lb'(0)});
      for (int b = 0; b < Bytes; b++) begin
        tw_data_q[8*b +: 8] <= pad_byte[Lb-1:0] == Lb'(b) ? 8'h84 : 8'h00;
        tw_strb_q[b] <= pad_byte[Lb-1:0] == Lb'(b) || (b > 0 && pad_byte[Lb-1:0] == Lb'(b - 1));
      end
    end else if (t_publish) begin
      tw_kind_q <= KindDesc;
      tw_slot_q <= 15'(t_j_q) & nmask_q;
      tw_off_q <= '0;
      tw_data_q <= DataWidth'(desc);
      tw_strb_q <= Bytes'(16'hFFFF);
    end
  end

  // ---- AW: one register, the tail's write first --------------------------------------------------
  logic             awvalid_q, aw_free, aw_load_copy, aw_hs, out_room_q;
  logic [OutW-1:0]  out_q;    // AWs loaded whose B has not come back
  logic [1:0]       aw_kind_q;
  logic [TagW-1:0]  aw_tag_q;
  logic [63:0]      awaddr_q;
  logic [3:0]       awlen_q;
  logic [14:0]      l_slot;
  logic [15:0]      l_off;
  logic [31:0]      l_soff;
  logic             b_hs, b_err;
  logic [1:0]       b_kind;
  logic [TagW-1:0]  b_tag;
  logic             bt_valid, bt_ready, ord_valid, ord_ready, ord_src, w_hs;
  logic [$clog2(MaxOut):0] bt_count, ord_count;

  assign aw_free = !awvalid_q || m_axi_awready_i;
  assign aw_load_tail = aw_free && out_room_q && tw_req_q;
  assign aw_load_copy = aw_free && out_room_q && !tw_req_q && awq_valid;
  assign awq_pop = aw_load_copy;
  assign aw_hs = awvalid_q && m_axi_awready_i;
  assign l_slot = tw_req_q ? tw_slot_q : awq_out[34:20];  // awq: {tag, slot, offset, len}
  assign l_off = tw_req_q ? tw_off_q : awq_out[19:4];
  assign l_soff = ({17'h0, l_slot} << slot_log2_i) | {16'h0, l_off};
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      awvalid_q <= 1'b0;
      out_q <= '0;
      out_room_q <= 1'b0;
    end else begin
      if (aw_load_tail || aw_load_copy) awvalid_q <= 1'b1;
      else if (aw_hs) awvalid_q <= 1'b0;
      out_q <= out_q + OutW'(aw_load_tail || aw_load_copy) - OutW'(b_hs);
      out_room_q <= out_q < OutW'(MaxOut - 2);
    end
  end
  always_ff @(posedge clk_i) begin
    if (aw_load_tail || aw_load_copy) begin
      awaddr_q <= {base_i[63:12] + 52'(l_soff[31:12]), l_soff[11:0]};
      awlen_q <= tw_req_q ? 4'd0 : awq_out[3:0];
      aw_kind_q <= tw_req_q ? tw_kind_q : KindCopy;
      aw_tag_q <= tw_req_q ? (tw_kind_q == KindDesc ? TagW'(epoch_q) : t_tag_q) : awq_out[AwqW-1 -: TagW];
    end
  end
  assign m_axi_awvalid_o = awvalid_q;
  assign m_axi_awaddr_o = awaddr_q;
  assign m_axi_awlen_o = {4'h0, awlen_q};

  // The order FIFO (each AW's source, for W) and the B FIFO (each AW's kind and tag, for B).
  rnic_fifo #(.Width(1), .Depth(MaxOut)) u_order (
    .clk_i, .rst_ni,
    .in_data_i  (aw_kind_q != KindCopy),
    .in_valid_i (aw_hs),
    .in_ready_o (ord_ready),
    .out_data_o (ord_src),
    .out_valid_o(ord_valid),
    .out_ready_i(w_hs && m_axi_wlast_o),
    .count_o    (ord_count)
  );
  rnic_fifo #(.Width(2 + TagW), .Depth(MaxOut)) u_btag (
    .clk_i, .rst_ni,
    .in_data_i  ({aw_kind_q, aw_tag_q}),
    .in_valid_i (aw_hs),
    .in_ready_o (bt_ready),
    .out_data_o ({b_kind, b_tag}),
    .out_valid_o(bt_valid),
    .out_ready_i(b_hs),
    .count_o    (bt_count)
  );

  // ---- W: the order FIFO's head source ----------------------------------------------------------
  assign m_axi_wvalid_o = ord_valid && (ord_src ? tw_wpend_q && !tw_req_q : wf_valid);
  assign m_axi_wdata_o = ord_src ? tw_data_q : wf_out[DataWidth-1:0];
  assign m_axi_wstrb_o = ord_src ? tw_strb_q : wf_out[DataWidth +: Bytes];
  assign m_axi_wlast_o = ord_src ? 1'b1 : wf_out[WfW-1];
  assign w_hs = m_axi_wvalid_o && m_axi_wready_i;
  assign wf_pop = w_hs && !ord_src;
  assign w_tail_done = w_hs && ord_src;

  // ---- B -----------------------------------------------------------------------------------------
  logic [31:0] prod_q;
  logic        bresp_err_q;
  assign b_hs = m_axi_bvalid_i;
  assign b_err = m_axi_bresp_i != 2'b00;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cburst_b_q <= '0;
      t_out_q <= '0;
      err_q <= '0;
      prod_q <= '0;
      bresp_err_q <= 1'b0;
    end else begin
      bresp_err_q <= b_hs && b_err;
      if (b_hs && b_kind == KindCopy) cburst_b_q <= cburst_b_q + 1'b1;
      t_out_q <= t_out_q + OutW'(t_pad_go) - OutW'(b_hs && b_kind == KindPatch);
      if (first) err_q[tag_q] <= 1'b0;
      if (b_hs && b_err && b_kind != KindDesc) err_q[b_tag] <= 1'b1;
      if (b_hs && b_kind == KindDesc && b_tag[1:0] == epoch_q && enable_i) prod_q <= prod_q + 1'b1;
      if (!enable_i) prod_q <= '0;
    end
  end
  assign prod_o = prod_q;
  assign busy_o = out_q != '0;
  assign bresp_err_o = bresp_err_q;
  assign drop_full_o = drop_full_q;
  assign drop_size_o = drop_size_q;

  logic unused;  // fill levels (monitoring), the patch's last flag (checked below), upper address bits;
                 // a writer: the read channel is tied off
  assign unused = ^{wf_count, awq_count, rec_count, sum_count, patch_count, fate_count, bt_count, ord_count,
                    patch_out[16], base_i[11:0], cb_ahead[14:0], carry_q, carry_keep, bt_ready, ord_ready, awq_ready,
                    m_axi_arready_i, m_axi_rdata_i, m_axi_rresp_i, m_axi_rlast_i, m_axi_rvalid_i};

  // ---- Assertions (rtl/rnic_assert.svh) -----------------------------------------------------------
  // The fate FIFO never overflows (the integrator's gate: at most FateDepth fates outstanding); the
  // AW queue, B and order FIFOs never overflow (at most MaxOut AWs outstanding, the AW queue holds
  // bursts whose beats are in the 32-beat W FIFO); a B always has its AW; a patch entry's last flag
  // matches the summary's segment count; the AXI handshakes hold (AXI A3.2.1).
  `RNIC_ASSERT(a_fate_room, clk_i, rst_ni, !fate_valid_i || fate_ready)
  `RNIC_ASSERT(a_awq_room, clk_i, rst_ni, !c_awq_push || awq_ready)
  `RNIC_ASSERT(a_b_room, clk_i, rst_ni, !aw_hs || (bt_ready && ord_ready))
  `RNIC_ASSERT(a_b_has_aw, clk_i, rst_ni, !m_axi_bvalid_i || bt_valid)
  `RNIC_ASSERT(a_segments, clk_i, rst_ni, !s_sum_valid_i || s_sum_segments_i <= 16'(MaxSegments))
  `RNIC_ASSERT(a_patch_last, clk_i, rst_ni, !seg_go || patch_out[16] == (t_left_q == SegW'(1)))
  `RNIC_ASSERT_HOLD(a_aw_hold, clk_i, rst_ni, m_axi_awvalid_o, m_axi_awready_i,
                    {m_axi_awaddr_o, m_axi_awlen_o})
  `RNIC_ASSERT_HOLD(a_w_hold, clk_i, rst_ni, m_axi_wvalid_o, m_axi_wready_i,
                    {m_axi_wdata_o, m_axi_wstrb_o, m_axi_wlast_o})
endmodule
