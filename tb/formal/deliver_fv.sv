// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
// Formal harness (issue 11, write safety (b) on the delivery side and (c)): rnic_rx_deliver at
// small parameters (NumStreams 2, NumQns 2, SsnWindow 4; DataWidth 512 = one beat per entry).
// What is checked (the rules of the module's header comment, written from the spec side):
// (c) completion ring
//   - every AW is offered for exactly one decided completion entry that left the head of the
//     decided queue with cq_enable_i = 1, at {cq_base[63:6], 6'b0} + 64 * k with k = (entries
//     written since the last cq_reset) mod 2^cq_log2 (so k < 2^cq_log2) for the ring as configured
//     when it left the head, with room in the ring (written - cq_cons < 2^cq_log2), awlen =
//     64/Bytes - 1; AW holds until accepted (AXI A3.2.1);
//   - W: only for an issued AW (W bursts never ahead of AWs, at most one burst outstanding), 64/Bytes
//     beats per burst, WLAST on the last, all strobes;
//   - an entry at the head while cq_enable_i = 0 (no cq_reset) is discarded in that cycle, so
//     nothing is ever written for it; nothing leaves the head during cq_reset_i;
//   - fence markers leave only with no completion write on the bus, and fence_done_o pulses for
//     exactly those;
//   - every AW deliver presents, whether the ring is enabled or not, lies in the ring configured
//     in that cycle (64-byte aligned, slot < 2^cq_log2 from cq_base), and so does the AW of every
//     W beat (the entry being written);
// (busy) cq_busy_o = 0 only when no entry deliver loaded (left the head to be written) still has
//   its AW, a W beat or its B to come; the B of an AW is the (aw_count + 1 - b_count)-th B after its
//   handshake (bus model below: B in AW order), counted here, not read from the RTL's last_aw_q.
// (gate) an entry leaves the head to be written (so its AW follows), and a fence marker leaves, only
//   when b_segs_i - mark >= 0 (32-bit wrapping), the mark being commit_now_i of the cycle it was
//   decided (captured here, not read from the RTL). A discard (ring disabled) writes nothing and
//   does not wait.
// (b) message order, with a ghost expected MSN per (stream, QN): 0 after reset and STREAM_RESET
//   (the stream word is cleared, as the RTL documents), the first MSN of a QUEUE_SET, + 1 per
//   CONSUME event:
//   - every untagged segment deliver delivers: MSN == ghost expected -> if last, an untagged
//     completion (stream, QN, MSN = that expected MSN) and a CONSUME(stream, QN) event, no other
//     event; MSN != ghost expected -> an order error completion (error + order flags, type 2 code
//     0x03, the segment's QN and MSN) and a FAIL event, no CONSUME;
//   - a CONSUME event is decided only in that case (so each MSN completes at most once between
//     QUEUE_SETs); QUEUE_SET / STREAM_RESET echoes name the item's stream (and QN);
//   - the consume channel hands lookup the decided events in order (ghost queue vs cons_*_o);
//   - the completion written to the ring carries those fields: at every W beat the CQE (hw.def
//     layout: stream, flags with the phase of its lap, SSN, STag/QN, MSN, type, code) equals the
//     one built here from the ghost queue of decided completions.
// Probes: "decided", "delivered" and "left the head" are internal events of deliver, which exposes
// them as observation ports under `ifdef FORMAL (fv_*: the completion queue's push with its fields and
// its pop, the consume queue's push, the delivered segment). The expected values (MSN, marks, ring
// slot, CQE) come from the ghosts, not from the RTL.
// Free inputs: every item field used (kind, stream 0..3 so out-of-range streams occur, SSN, L, T,
// QN/STag low byte, MSN), every handshake, cq_* inputs, commit_now_i, b_segs_i; the mux's aw/b
// counts are a bus model: equal after reset at any value, aw_count + 1 in each cycle with
// deliver's AW handshake or (free) another port's AW, b_count + 1 at a free B only while
// b_count != aw_count (one B per counted AW, in AW order).
// Assumptions: reset in the first cycle; an untagged PLACED or QUEUE_SET item names a QN < NumQns
// (lookup answers Invalid QN otherwise); cq_log2_i <= 16; cq_base_i / cq_log2_i change from cycle
// t to t + 1 only as rnic_regs allows: a reset in t, or cq_enable_i = 0 in t - 1 and t and
// cq_busy_o = 0 in t - 1 (regs registers busy; its cq_idle = !cq_en_q && !cq_busy_q, and two
// register writes are at least two cycles apart, so the enable did not fall in t).
// Model reduction: length, RsvdULP, error type/code, header bytes and STag/QN bits 31:8 are tied to
// zero (they only reach the CQE), so their queue storage folds away.
// FV_REACH=reach_<x> (define): assert that scenario x never occurs, so the run must FAIL (a
// reachability check by hand: order error written, untagged completion written, an untagged
// segment delivered from its reorder slot, discard, CONSUME at the output, second lap, busy back
// to 0 after a completion write, the ring reconfigured after one).
// FV_CFG_NO_GAP (define): drop "cq_enable_i = 0 in t - 1" from the configuration rule (regs' write
// spacing); the ring check then FAILS (see README): an entry loaded in the cycle the ring is
// disabled is not yet counted by regs' registered busy in the next cycle.
module deliver_fv #(
  parameter int DataWidth = 512,
  parameter int GD = 32          // ghost queue entries (>= the RTL's completion queue: 16 + the slice's 2)
) (
  input logic         clk_i,
  input logic         rst_ni,
  input rnic_dlv_t    dlv_in,
  input logic         dlv_valid_i,
  input logic [15:0]  ssn_rd_stream_i,
  input logic         cons_ready_i,
  input logic [63:0]  cq_base_i,
  input logic [4:0]   cq_log2_i,
  input logic         cq_enable_i,
  input logic         cq_reset_i,
  input logic [31:0]  cq_cons_i,
  input logic         awready_i,
  input logic         wready_i,
  input logic [15:0]  exp_rd_stream_i,
  input logic [7:0]   exp_rd_qn_i,
  input logic [31:0]  commit_now_i,
  input logic [31:0]  b_segs_i,
  input logic         aw_other_i,    // bus model: another port's AW is taken this cycle
  input logic         b_i,           // bus model: a B handshake this cycle
  input logic [31:0]  cnt0_i         // bus model: the counters' value after a reset (free)
);
  localparam int NumStreams = 2;
  localparam int NumQns = 2;
  localparam int Bytes = DataWidth / 8;
  localparam int Beats = 64 / Bytes;
  localparam int Gw = $clog2(GD);

  rnic_dlv_t dlv_i;
  always_comb begin
    dlv_i = '0;
    dlv_i.kind = dlv_in.kind;
    dlv_i.stream = {14'b0, dlv_in.stream[1:0]};
    dlv_i.ssn = dlv_in.ssn;
    dlv_i.last = dlv_in.last;
    dlv_i.is_tagged = dlv_in.is_tagged;
    dlv_i.stag_qn = {24'b0, dlv_in.stag_qn[7:0]};
    dlv_i.msn = dlv_in.msn;
  end

  logic                   dlv_ready, cons_valid, awvalid, wvalid, wlast, fence_done;
  logic                   msg_ev, dup_ev, order_ev;
  logic [15:0]            ssn_rd_next, cons_stream;
  logic [7:0]             cons_qn, awlen;
  logic [1:0]             cons_kind;
  logic [31:0]            cq_prod, exp_rd_data;
  logic [63:0]            awaddr;
  logic [DataWidth-1:0]   wdata;
  logic [Bytes-1:0]       wstrb;
  // probes
  logic        fv_ce_push, fv_ce_pop, fv_ce_marker, fv_ce_err, fv_ce_tagged, fv_ce_order;
  logic [15:0] fv_ce_stream, fv_ce_ssn;
  logic [31:0] fv_ce_stag_qn, fv_ce_msn;
  logic [3:0]  fv_ce_type;
  logic [7:0]  fv_ce_code;
  logic        fv_co_push;
  logic [1:0]  fv_co_kind;
  logic [15:0] fv_co_stream;
  logic [7:0]  fv_co_qn;
  logic        fv_dlv_rel, fv_rel_last, fv_rel_tagged, fv_s_drain, fv_ce_valid;
  logic [31:0] fv_rel_stag_qn, fv_rel_msn;
  rnic_dlv_t   fv_o_item;
  logic        cq_busy;
  logic [31:0] aw_count_i, b_count_i;  // the mux's counters, modelled below

  rnic_rx_deliver #(.DataWidth(DataWidth), .NumStreams(NumStreams), .NumQns(NumQns),
                    .SsnWindow(4)) dut (
    .clk_i, .rst_ni, .dlv_i, .dlv_valid_i, .dlv_ready_o(dlv_ready),
    .ssn_rd_stream_i, .ssn_rd_next_o(ssn_rd_next),
    .cons_stream_o(cons_stream), .cons_qn_o(cons_qn), .cons_kind_o(cons_kind),
    .cons_valid_o(cons_valid), .cons_ready_i,
    .cq_base_i, .cq_log2_i, .cq_enable_i, .cq_reset_i, .cq_cons_i, .cq_prod_o(cq_prod), .cq_busy_o(cq_busy),
    .awaddr_o(awaddr), .awlen_o(awlen), .awvalid_o(awvalid), .awready_i,
    .wdata_o(wdata), .wstrb_o(wstrb), .wlast_o(wlast), .wvalid_o(wvalid), .wready_i,
    .exp_rd_stream_i, .exp_rd_qn_i, .exp_rd_data_o(exp_rd_data),
    .commit_now_i, .b_segs_i, .aw_count_i, .b_count_i,
    .fence_done_o(fence_done), .msg_event_o(msg_ev), .dup_event_o(dup_ev),
    .order_err_event_o(order_ev),
    .fv_ce_push, .fv_ce_pop, .fv_ce_marker, .fv_ce_err, .fv_ce_tagged, .fv_ce_order,
    .fv_ce_stream, .fv_ce_ssn, .fv_ce_stag_qn, .fv_ce_msn, .fv_ce_type, .fv_ce_code,
    .fv_co_push, .fv_co_kind, .fv_co_stream, .fv_co_qn,
    .fv_dlv_rel, .fv_rel_last, .fv_rel_tagged, .fv_rel_stag_qn, .fv_rel_msn, .fv_o_item, .fv_s_drain, .fv_ce_valid
  );

  // ---- the item deliver's O stage decides on (probed: deliver sequences items in M and D first) ----
  rnic_dlv_t gi;
  assign gi = fv_o_item;

  // ---- ghost: expected MSN per (stream, QN), at the decisions ----
  logic [31:0] exp_g [NumStreams * NumQns];
  logic        rel_s;                 // stream of the delivered segment (gi's)
  logic        rel_q;
  logic [31:0] rel_exp;
  logic        rel_match;
  assign rel_s = gi.stream[0];
  assign rel_q = fv_rel_stag_qn[0];
  assign rel_exp = exp_g[{rel_s, rel_q}];
  assign rel_match = fv_rel_msn == rel_exp;

  // order_err_event_o pulses in the cycle after an order error is decided (registered), and only then
  logic ord_dec_q;
  always_ff @(posedge clk_i) ord_dec_q <= rst_ni && fv_dlv_rel && !fv_rel_tagged && !rel_match;

  // ---- ghost: decided completion queue (entries and fence markers) ----
  logic        gq_marker [GD];
  logic [3:0]  gq_flags [GD];          // {order, tagged, error, cmp_qm}
  logic [15:0] gq_stream [GD];
  logic [15:0] gq_ssn [GD];
  logic [31:0] gq_qn [GD];
  logic [31:0] gq_msn [GD];
  logic [31:0] gq_mark [GD];
  logic [Gw:0] gq_wr, gq_rd;
  logic        gq_empty;
  logic [Gw-1:0] hd;
  assign gq_empty = gq_wr == gq_rd;
  assign hd = gq_rd[Gw-1:0];

  // the decided entry's fields, spec side
  logic [31:0] d_qn, d_msn;
  logic        d_cmp;
  always_comb begin
    d_qn = fv_ce_stag_qn;
    d_msn = fv_ce_msn;
    d_cmp = 1'b0;
    if (fv_dlv_rel && !fv_rel_tagged && !rel_match) begin       // order error: the segment's QN, MSN
      d_qn = fv_rel_stag_qn;
      d_msn = fv_rel_msn;
      d_cmp = 1'b1;
    end else if (fv_dlv_rel && !fv_rel_tagged && fv_rel_last) begin  // untagged completion
      d_qn = {31'b0, rel_q};
      d_msn = rel_exp;
      d_cmp = 1'b1;
    end
  end

  // The decided entry enters deliver's queue in the next cycle (its pushes are registered): the
  // ghost queue takes it then too, so that its head is the RTL queue's head.
  logic        p_push, p_marker;
  logic [3:0]  p_flags;
  logic [15:0] p_stream, p_ssn;
  logic [31:0] p_qn, p_msn, p_mark;
  always_ff @(posedge clk_i) begin
    p_push <= rst_ni && fv_ce_push;
    p_marker <= fv_ce_marker;
    p_flags <= {fv_ce_order, fv_ce_tagged, fv_ce_err, d_cmp};
    p_stream <= fv_ce_stream;
    p_ssn <= fv_ce_ssn;
    p_qn <= d_qn;
    p_msn <= d_msn;
    p_mark <= commit_now_i;
  end
  always_ff @(posedge clk_i) begin
    if (p_push) begin
      gq_marker[gq_wr[Gw-1:0]] <= p_marker;
      gq_flags[gq_wr[Gw-1:0]] <= p_flags;
      gq_stream[gq_wr[Gw-1:0]] <= p_stream;
      gq_ssn[gq_wr[Gw-1:0]] <= p_ssn;
      gq_qn[gq_wr[Gw-1:0]] <= p_qn;
      gq_msn[gq_wr[Gw-1:0]] <= p_msn;
      gq_mark[gq_wr[Gw-1:0]] <= p_mark;
    end
  end

  // ---- ghost: consume channel (decided events, in order) ----
  logic [1:0]  cq_kind_g [GD];
  logic [1:0]  cq_stream_g [GD];
  logic [7:0]  cq_qn_g [GD];
  logic [Gw:0] cg_wr, cg_rd;
  always_ff @(posedge clk_i) begin
    if (fv_co_push) begin
      cq_kind_g[cg_wr[Gw-1:0]] <= fv_co_kind;
      cq_stream_g[cg_wr[Gw-1:0]] <= fv_co_stream[1:0];
      cq_qn_g[cg_wr[Gw-1:0]] <= fv_co_qn;
    end
  end

  // ---- ghost: the write side ----
  logic        hd_reached;            // b_segs_i has reached the head's mark (wrapping)
  logic [31:0] hd_wait;
  logic        pop_wr, pop_disc, pop_mk;
  logic [31:0] gw;                    // entries written since the last cq_reset
  logic [31:0] ring_size, ring_used;
  assign hd_wait = b_segs_i - gq_mark[hd];
  assign hd_reached = $signed(hd_wait) >= 0;
  assign pop_wr = fv_ce_pop && !gq_marker[hd] && cq_enable_i;
  assign pop_disc = fv_ce_pop && !gq_marker[hd] && !cq_enable_i;
  assign pop_mk = fv_ce_pop && gq_marker[hd];
  assign ring_size = 32'd1 << cq_log2_i;
  assign ring_used = gw - cq_cons_i;
  logic [31:0] gw_lap;                // the lap the next entry is written in
  assign gw_lap = gw >> cq_log2_i;

  // the entry being written (taken at its pop) and its ring slot
  logic [3:0]  wr_flags;
  logic [15:0] wr_stream, wr_ssn;
  logic [31:0] wr_qn, wr_msn;
  logic [63:0] wr_addr_exp;
  logic        wr_phase;
  logic        pop_wr_q, pop_mk_q;
  always_ff @(posedge clk_i) begin
    if (pop_wr) begin
      wr_flags <= gq_flags[hd];
      wr_stream <= gq_stream[hd];
      wr_ssn <= gq_ssn[hd];
      wr_qn <= gq_qn[hd];
      wr_msn <= gq_msn[hd];
      // {cq_base[63:6], 6'b0} + 64 * (gw mod 2^cq_log2); phase 1 on the first lap
      wr_addr_exp <= {cq_base_i[63:6], 6'b0} + ({32'b0, gw & (ring_size - 32'd1)} << 6);
      wr_phase <= !gw_lap[0];
    end
  end

  // AXI bookkeeping: AWs issued (new presentations), W bursts completed, the beat in the burst
  logic        awv_q, awr_q;
  logic [63:0] awaddr_q;
  logic [7:0]  awlen_q;
  logic        awnew;
  logic [7:0]  n_aw, n_wb;            // mod 256: only their difference matters
  logic [7:0]  gbeat;
  logic [7:0]  issued;
  assign awnew = awvalid && !(awv_q && !awr_q);
  assign issued = n_aw + 8'(awnew);

  // CQE expected for the entry being written (hw.def layout) and which bits are compared
  logic [511:0] cqe_exp, cqe_msk;
  always_comb begin
    cqe_exp = '0;
    cqe_msk = '0;
    cqe_exp[RNIC_CQE_STREAM_LSB +: 16] = wr_stream;
    cqe_msk[RNIC_CQE_STREAM_LSB +: 16] = '1;
    cqe_exp[RNIC_CQE_FLAGS_LSB +: 8] = {4'b0, wr_flags[3:1], wr_phase};
    cqe_msk[RNIC_CQE_FLAGS_LSB +: 8] = '1;
    cqe_exp[RNIC_CQE_SSN_LSB +: 16] = wr_ssn;
    cqe_msk[RNIC_CQE_SSN_LSB +: 16] = '1;
    if (wr_flags[0] || !wr_flags[1]) begin   // compared QN/MSN, or a delivery's STag/QN
      cqe_exp[RNIC_CQE_STAG_QN_LSB +: 32] = wr_qn;
      cqe_msk[RNIC_CQE_STAG_QN_LSB +: 32] = '1;
    end
    if (wr_flags[0]) begin
      cqe_exp[RNIC_CQE_MSN_LSB +: 32] = wr_msn;
      cqe_msk[RNIC_CQE_MSN_LSB +: 32] = '1;
    end
    if (wr_flags[3]) begin                    // order error: RFC 5041 7.2 type 2 code 0x03
      cqe_exp[RNIC_CQE_ERR_TYPE_LSB +: 8] = 8'd2;
      cqe_exp[RNIC_CQE_ERR_CODE_LSB +: 8] = 8'h03;
      cqe_msk[RNIC_CQE_ERR_TYPE_LSB +: 8] = '1;
      cqe_msk[RNIC_CQE_ERR_CODE_LSB +: 8] = '1;
    end
  end
  logic [DataWidth-1:0] w_exp, w_msk;
  always_comb begin
    w_exp = cqe_exp[DataWidth-1:0];
    w_msk = cqe_msk[DataWidth-1:0];
    for (int i = 1; i < Beats; i++) begin
      if (gbeat == 8'(i)) begin
        w_exp = cqe_exp[i*DataWidth +: DataWidth];
        w_msk = cqe_msk[i*DataWidth +: DataWidth];
      end
    end
  end

  logic        w_hs, aw_hs, c_hs;
  assign w_hs = wvalid && wready_i;
  assign aw_hs = awvalid && awready_i;
  assign c_hs = cons_valid && cons_ready_i;

  // ---- bus model: the write mux's counters (rnic_axi_wr_mux): aw_count counts the AWs taken from
  // its ports, at most one per cycle (deliver's handshakes and other ports' AWs), and includes an AW
  // from the cycle after its handshake; b_count counts B handshakes: one B per AW, in AW order, only
  // for an AW already counted (so b_count never passes aw_count). Both start equal at any value.
  logic [31:0] aw_cnt, b_cnt;
  logic        b_inc;
  assign aw_count_i = aw_cnt;
  assign b_count_i = b_cnt;
  assign b_inc = b_i && b_cnt != aw_cnt;

  // ---- ghost: deliver's completion writes not finished on the bus ----
  logic [7:0]  n_load, n_awhs;        // entries loaded to be written, deliver's AW handshakes
  logic [31:0] b_due;                 // B handshakes still to come until deliver's last AW has its B

  // the ring configured now: 64-byte slots [base, base + 64 * 2^cq_log2)
  logic aw_in_ring, w_in_ring;
  assign aw_in_ring = awaddr[5:0] == 6'd0 &&
                      ((awaddr - {cq_base_i[63:6], 6'b0}) >> 6) < {32'b0, ring_size};
  assign w_in_ring = wr_addr_exp[5:0] == 6'd0 &&
                     ((wr_addr_exp - {cq_base_i[63:6], 6'b0}) >> 6) < {32'b0, ring_size};

  // ghost state updates
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      for (int i = 0; i < NumStreams * NumQns; i++) exp_g[i] <= '0;
      gq_wr <= '0;
      gq_rd <= '0;
      cg_wr <= '0;
      cg_rd <= '0;
      gw <= '0;
      awv_q <= 1'b0;
      awr_q <= 1'b0;
      n_aw <= '0;
      n_wb <= '0;
      gbeat <= '0;
      pop_wr_q <= 1'b0;
      pop_mk_q <= 1'b0;
      aw_cnt <= cnt0_i;
      b_cnt <= cnt0_i;
      n_load <= '0;
      n_awhs <= '0;
      b_due <= '0;
    end else begin
      // expected MSN: QUEUE_SET, STREAM_RESET (cleared), + 1 per CONSUME (at the decision)
      if (fv_co_push && fv_co_kind == RNIC_CONS_QSET && !gi.stream[1])
        exp_g[{gi.stream[0], gi.stag_qn[0]}] <= gi.msn;
      if (fv_co_push && fv_co_kind == RNIC_CONS_RESET && !gi.stream[1])
        for (int q = 0; q < NumQns; q++) exp_g[{gi.stream[0], 1'(q)}] <= '0;
      if (fv_co_push && fv_co_kind == RNIC_CONS_CONSUME)
        exp_g[{rel_s, rel_q}] <= rel_exp + 32'd1;
      gq_wr <= gq_wr + (Gw + 1)'(p_push);
      gq_rd <= gq_rd + (Gw + 1)'(fv_ce_pop);
      cg_wr <= cg_wr + (Gw + 1)'(fv_co_push);
      cg_rd <= cg_rd + (Gw + 1)'(c_hs);
      if (cq_reset_i) gw <= '0;
      else if (pop_wr) gw <= gw + 32'd1;
      awv_q <= awvalid;
      awr_q <= awready_i;
      n_aw <= issued;
      if (w_hs) begin
        if (wlast) begin
          n_wb <= n_wb + 8'd1;
          gbeat <= '0;
        end else begin
          gbeat <= gbeat + 8'd1;
        end
      end
      pop_wr_q <= pop_wr;
      pop_mk_q <= pop_mk;
      aw_cnt <= aw_cnt + 32'(aw_hs || aw_other_i);
      b_cnt <= b_cnt + 32'(b_inc);
      n_load <= n_load + 8'(pop_wr);
      n_awhs <= n_awhs + 8'(aw_hs);
      // deliver's AW: every AW counted before it and not acknowledged, then itself
      if (aw_hs) b_due <= aw_cnt - b_cnt + 32'd1 - 32'(b_inc);
      else if (b_inc && b_due != 32'd0) b_due <= b_due - 32'd1;
    end
  end
  always_ff @(posedge clk_i) begin
    awaddr_q <= awaddr;
    awlen_q <= awlen;
  end

  // scenarios for FV_REACH (see the end)
  logic reach_order_wr, reach_untagged_wr, reach_drain, reach_disc, reach_consume_out, reach_lap2;
  assign reach_order_wr = wvalid && wr_flags[3];                 // an order error written
  assign reach_untagged_wr = wvalid && wr_flags[0] && !wr_flags[1];  // an untagged completion written
  assign reach_drain = fv_s_drain;                              // an untagged segment from its slot
  assign reach_disc = pop_disc;                                  // an entry discarded
  assign reach_consume_out = c_hs && cons_kind == RNIC_CONS_CONSUME;
  assign reach_lap2 = awnew && !wr_phase;                        // second lap of the ring

`ifdef FORMAL
  logic init = 1'b1;
  always_ff @(posedge clk_i) init <= 1'b0;
  always_comb if (init) assume (!rst_ni);

  // Environment.
  logic        en_q, en_qq, rstn_q, busy_r, busy_rq;
  logic [63:0] base_q;
  logic [4:0]  log2_q;
  always_ff @(posedge clk_i) begin
    en_q <= cq_enable_i;
    en_qq <= en_q;
    rstn_q <= rst_ni;
    busy_r <= rst_ni && cq_busy;       // rnic_regs' cq_busy_q
    busy_rq <= busy_r;
    base_q <= cq_base_i;
    log2_q <= cq_log2_i;
  end
  // rnic_regs takes CQ_BASE_LO/HI and CQ_LOG2_SIZE (1..16) only in a write cycle t with cq_en_q = 0
  // and cq_busy_q = 0 (cq_busy_o of t - 1); its writes are at least two cycles apart (b_valid_q or
  // db_valid_q blocks the next wr_go), so the enable did not change in t either (cq_en_q(t - 1) = 0).
  // A reset may load anything (the regs reset to 0 / 0, disabled).
  logic cfg_may_change;
`ifdef FV_CFG_NO_GAP
  assign cfg_may_change = !rstn_q || (!en_q && !busy_rq);
`else
  assign cfg_may_change = !rstn_q || (!en_q && !busy_rq && !en_qq);
`endif
  // scenarios for FV_REACH: busy back to 0 after a completion write; a new ring after one
  logic reach_busy_done, reach_reconfig;
  assign reach_busy_done = !cq_busy && n_load != 8'd0;
  assign reach_reconfig = rstn_q && n_load != 8'd0 && cq_base_i != base_q;
  always_comb begin
    // lookup sends untagged segments and QUEUE_SET only for a QN < NumQns (else Invalid QN)
    if (dlv_valid_i && ((dlv_i.kind == RNIC_DLV_PLACED && !dlv_i.is_tagged) ||
                        dlv_i.kind == RNIC_DLV_QUEUE_SET))
      assume (dlv_i.stag_qn < 32'(NumQns));
    // the ring configuration changes only as rnic_regs allows; 2^0..2^16 entries
    if (!init && !cfg_may_change) assume (cq_base_i == base_q && cq_log2_i == log2_q);
    assume (cq_log2_i <= 5'd16);
  end

  always_comb begin
    if (rst_ni && !init) begin
      // ghost queues never overflow (the RTL's queues hold 16 + 2 and 8)
      assert (gq_wr - gq_rd <= (Gw + 1)'(GD));
      assert (cg_wr - cg_rd <= (Gw + 1)'(GD));

      // (b) decisions: every delivered untagged segment against the ghost expected MSN
      if (fv_dlv_rel) assert (!gi.stream[1]);            // only streams < NumStreams deliver
      if (fv_dlv_rel && !fv_rel_tagged) begin
        if (!rel_match) begin
          // order error: entry with error + order flags, 7.2 type 2 code 0x03; FAIL; no CONSUME
          assert (fv_ce_push && !fv_ce_marker && fv_ce_err && fv_ce_order && !fv_ce_tagged);
          assert (fv_ce_type == 4'd2 && fv_ce_code == 8'h03);
          assert (fv_co_push && fv_co_kind == RNIC_CONS_FAIL && fv_co_stream == gi.stream);
        end else if (fv_rel_last) begin
          // completion of that MSN + CONSUME(stream, QN)
          assert (fv_ce_push && !fv_ce_marker && !fv_ce_err && !fv_ce_order && !fv_ce_tagged);
          assert (fv_co_push && fv_co_kind == RNIC_CONS_CONSUME && fv_co_stream == gi.stream &&
                  fv_co_qn == 8'(rel_q));
        end else begin
          assert (!fv_ce_push && !fv_co_push);
        end
      end
      assert (order_ev == ord_dec_q);
      // a CONSUME only for that case; an order entry only for an MSN mismatch
      if (fv_co_push && fv_co_kind == RNIC_CONS_CONSUME)
        assert (fv_dlv_rel && !fv_rel_tagged && fv_rel_last && rel_match);
      if (fv_ce_push && fv_ce_order) assert (fv_dlv_rel && !fv_rel_tagged && !rel_match);
      if (fv_ce_push && !fv_ce_marker && !fv_ce_err && !fv_ce_tagged)
        assert (fv_co_push && fv_co_kind == RNIC_CONS_CONSUME);
      // echoes name the item deliver holds
      if (fv_co_push && fv_co_kind == RNIC_CONS_QSET)
        assert (gi.kind == RNIC_DLV_QUEUE_SET && fv_co_stream == gi.stream &&
                fv_co_qn == gi.stag_qn[7:0]);
      if (fv_co_push && fv_co_kind == RNIC_CONS_RESET)
        assert (gi.kind == RNIC_DLV_STREAM_RESET && fv_co_stream == gi.stream);
      // the consume channel gives lookup the decided events, in order
      if (cons_valid) begin
        assert (cg_wr != cg_rd);
        assert (cons_kind == cq_kind_g[cg_rd[Gw-1:0]] && cons_stream[15:2] == 14'd0 &&
                cons_stream[1:0] == cq_stream_g[cg_rd[Gw-1:0]] &&
                cons_qn == cq_qn_g[cg_rd[Gw-1:0]]);
      end

      // (gate) and (c): what leaves the head of the decided queue, and when
      if (fv_ce_pop) assert (!gq_empty && !cq_reset_i);
      if (pop_wr || pop_mk) assert (hd_reached);          // b_segs_i reached its mark
      // an entry at the head of a disabled ring is discarded at once: never written later
      // (the RTL's head: its queue's register slice holds an entry; the ghost queue, filled at the
      // FIFO's push, may hold it a cycle or two before it reaches the slice)
      if (fv_ce_valid && !gq_empty && !gq_marker[hd] && !cq_enable_i && !cq_reset_i) assert (fv_ce_pop);
      if (fv_ce_valid) assert (!gq_empty);
      if (pop_wr) assert (ring_used < ring_size);         // the ring has room
      if (pop_mk) assert (!awvalid && !wvalid);           // no completion write on the bus
      assert (fence_done == pop_mk_q);
      // an AW is issued exactly for an entry written in the previous cycle, in its ring slot
      assert (awnew == pop_wr_q);
      if (awnew) assert (awaddr == wr_addr_exp);
      if (awvalid) assert (awlen == 8'(Beats - 1));
      if (awv_q && !awr_q) assert (awvalid && awaddr == awaddr_q && awlen == awlen_q);
      // W only for an issued AW, one burst of Beats beats, all strobes, the ghost's CQE
      assert (issued - n_wb <= 8'd1);
      if (wvalid) begin
        assert (n_wb != issued);
        assert (wstrb == '1);
        assert (wlast == (gbeat == 8'(Beats - 1)));
        assert (((wdata ^ w_exp) & w_msk) == '0);
      end
`ifdef FV_REACH
      // reachability by hand: -DFV_REACH=reach_<x> must FAIL (the scenario occurs within the depth)
      assert (!`FV_REACH);
`endif
      // every AW deliver presents, enabled or not, lies in the ring configured now; so does the
      // AW of every W beat (the entry being written)
      if (awvalid) assert (aw_in_ring);
      if (wvalid) assert (w_in_ring);
      // (busy) cq_busy_o = 0: no entry loaded whose AW, W beats or B (B in AW order) is to come
      if (!cq_busy) assert (n_awhs == n_load && n_wb == n_load && b_due == 32'd0);
    end
  end
`endif
endmodule

// regs_cq_fv: the lemma behind deliver_fv's configuration assumption, proven by k-induction on
// rnic_regs with every input free (formal.sh run regs-cq, top regs_cq_fv, this file): cq_base_o /
// cq_log2_o change from a non-reset cycle t to t + 1 only if t - 1 is no reset cycle either,
// cq_enable_o = 0 in t - 1 and t, and cq_busy_i = 0 in t - 1; cq_log2_o <= 16 always.
module regs_cq_fv (
  input logic clk_i, input logic rst_ni,
  input logic [15:0] s_axi_awaddr_i, input logic s_axi_awvalid_i, input logic [31:0] s_axi_wdata_i,
  input logic [3:0] s_axi_wstrb_i, input logic s_axi_wvalid_i, input logic s_axi_bready_i,
  input logic [15:0] s_axi_araddr_i, input logic s_axi_arvalid_i, input logic s_axi_rready_i,
  input logic cmd_ready_i, input logic cmd_done_i, input logic cmd_refused_i, input logic fence_done_i,
  input logic [31:0] cmd_result_i, input logic db_ready_i, input logic [31:0] cq_prod_i,
  input logic cq_busy_i, input logic seg_event_i, input logic bytes_event_i, input logic [15:0] bytes_i,
  input logic msg_event_i, input logic drop_event_i, input logic access_event_i, input logic dup_event_i,
  input logic write_err_event_i, input logic read_err_event_i, input logic error_event_i,
  input logic [4:0] error_idx_i, input logic order_err_event_i
);
  logic [63:0] cq_base;
  logic [4:0] cq_log2;
  logic cq_enable;
  rnic_regs #(.DataWidth(512), .StagEntries(16), .NumStreams(2), .NumQns(2), .SsnWindow(4)) dut (
    .clk_i, .rst_ni, .s_axi_awaddr_i, .s_axi_awvalid_i, .s_axi_awready_o(), .s_axi_wdata_i,
    .s_axi_wstrb_i, .s_axi_wvalid_i, .s_axi_wready_o(), .s_axi_bresp_o(), .s_axi_bvalid_o(),
    .s_axi_bready_i, .s_axi_araddr_i, .s_axi_arvalid_i, .s_axi_arready_o(), .s_axi_rdata_o(),
    .s_axi_rresp_o(), .s_axi_rvalid_o(), .s_axi_rready_i, .cmd_op_o(), .cmd_args_o(), .cmd_valid_o(),
    .cmd_ready_i, .cmd_done_i, .cmd_refused_i, .fence_done_i, .cmd_result_i, .db_stream_o(),
    .db_qn_o(), .db_prod_o(), .db_valid_o(), .db_ready_i, .cq_base_o(cq_base), .cq_log2_o(cq_log2),
    .cq_enable_o(cq_enable), .cq_reset_o(), .cq_cons_o(), .cq_prod_i, .cq_busy_i, .seg_event_i,
    .bytes_event_i, .bytes_i, .msg_event_i, .drop_event_i, .access_event_i, .dup_event_i,
    .write_err_event_i, .read_err_event_i, .error_event_i, .error_idx_i, .order_err_event_i,
    .ext_wr_o(), .ext_waddr_o(), .ext_wdata_o(), .ext_wstrb_o(), .ext_whit_i(1'b0), .ext_rd_o(),
    .ext_raddr_o(), .ext_rdata_i(32'b0), .ext_rhit_i(1'b0)
  );
`ifdef FORMAL
  logic init = 1'b1, init_q = 1'b1;
  logic rstn_q, rstn_qq, en_q, en_qq, busy_q, busy_qq;
  logic [63:0] base_q;
  logic [4:0] log2_q;
  always_ff @(posedge clk_i) begin
    init <= 1'b0;
    init_q <= init;
    rstn_q <= rst_ni;
    rstn_qq <= rstn_q;
    en_q <= cq_enable;
    en_qq <= en_q;
    busy_q <= cq_busy_i;
    busy_qq <= busy_q;
    base_q <= cq_base;
    log2_q <= cq_log2;
  end
  always_comb begin
    if (init) assume (!rst_ni);
    if (!init && !init_q && rstn_q && (cq_base != base_q || cq_log2 != log2_q))
      assert (rstn_qq && !en_qq && !en_q && !busy_qq);
    if (!init) assert (cq_log2 <= 5'd16);
  end
`endif
endmodule
