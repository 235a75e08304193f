// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
// Formal harness (issue 11, write safety (c)): rnic_deliver_cq, deliver's completion-ring writer, alone
// (DataWidth 512 = one beat per entry; cq_fv_128 below: 128 bits, four beats). The rules are the
// module's header comment; the expected values come from ghost state kept here, not from the RTL.
// Entries are free: every rnic_ce_t field (mark, marker, order, aux, err_code, err_type, length, ssn,
// stream, is_tagged, err), offered with any valid/ready behaviour of a legal source (valid held with
// stable data until ready).
// What is checked:
// (c) completion ring
//   - every AW is offered for exactly one entry that left the head with cq_enable_i = 1, in the cycle
//     after, at {cq_base[63:6], 6'b0} + 64 * k, k = (entries written since the last cq_reset) mod
//     2^cq_log2, the ring as configured when it left the head, with room (written - cq_cons <
//     2^cq_log2, unsigned) and fewer than 32 (AckDepth) entries loaded since the last cq_reset
//     awaiting their B; awlen = 64/Bytes - 1; AW held (address, length) until accepted;
//   - W: never ahead of AW (a beat only once its burst's AW is offered or accepted, at most one burst
//     outstanding), 64/Bytes beats per burst, WLAST on the last, all strobes, held until accepted;
//   - an entry at the head while cq_enable_i = 0 (no cq_reset) is discarded in that cycle (so nothing
//     is written for it); nothing leaves the head during cq_reset_i; what is accepted is at the head
//     from the next cycle (the slice: fv_head_valid = the ghost queue is not empty);
//   - every AW offered, and the AW of every W beat, lies in the ring configured IN THAT CYCLE
//     (64-byte aligned, (addr - base) / 64 < 2^cq_log2);
// (busy) cq_busy_o = 0 only when no entry loaded (left the head to be written, this cycle included)
//   still has its AW, a W beat or its B to come (the B of an AW: the (aw_count - b_count + 1)-th B
//   after its handshake in the bus model below, counted here);
// (gate) an entry leaves to be written, and a marker leaves, only when b_segs_i - mark >= 0 (32-bit
//   wrapping); fence_done_o pulses exactly in the cycle after a marker left; a marker leaves only with
//   no completion write on the bus (AW and every W beat of every loaded entry done) and no B to come
//   of one loaded since the last cq_reset (the header's exception: a write cq_reset dropped from the
//   count is not waited for; FV_FENCE_ALL_B asserts no B of ANY loaded entry to come, across cq_reset
//   too, and FAILS at cycle 4: tb/formal/README.md 3b);
// (prod) cq_prod_o = the number of entries loaded since the last cq_reset, AW accepted outside a
//   cq_reset cycle and after it, whose B had come by the previous cycle (b_count of the previous cycle
//   past the AW's position in the AW sequence): in order, never ahead, one cycle behind the B count;
// (content) at every W beat the beat's bytes of the CQE built here (hw.def RNIC_RECORD(CQE), every
//   field not named by the layout zero) from the ghost copy of the entry that left the head, with the
//   phase of its lap (1 on even laps: written / 2^cq_log2). Compared at one bit position k_i, a free
//   input held from the first cycle (so at every position; 6-10x faster than the 512-bit compare).
// Ghosts: the accepted entries in order (input queue, 2 entries: the slice's two registers; asserted
//   never to overflow), the entry being written (copied when it leaves the head) with its address and
//   phase, written-since-cq_reset, loads / AW handshakes / W bursts, the Bs due for the last AW, the
//   queue of AW positions awaiting their B (GP entries, asserted never to overflow: one AW a cycle at
//   most, so GP = 16 covers BMC to 17 cycles; an unbounded proof needs GP >= 32, the RTL's AckDepth).
// Bus model (as deliver_fv): the mux's aw_count_i / b_count_i are equal after reset at any value (so
//   32-bit wrap-around is covered); aw_count + 1 in every cycle with this port's AW handshake or
//   (free) another port's AW, counted from the cycle after; b_count + 1 at a free B only while
//   b_count != aw_count (one B per counted AW, in AW order).
// Assumptions: reset in the first cycle (free afterwards); the source holds valid and data until
//   ready; cq_log2_i <= 16; cq_base_i / cq_log2_i change from t to t + 1 only after a reset in t, or
//   with cq_enable_i = 0 in t - 1 and t and cq_busy_o = 0 in t - 1 (rnic_regs, README 3a). cq_enable_i,
//   cq_reset_i (in any combination), cq_cons_i, b_segs_i, awready_i, wready_i are free.
// FV_REACH=reach_<x> (define): assert that scenario x never occurs; the run must FAIL (reachability by
//   hand, README 3b). FV_REACH_ALL: every scenario as its own assertion r_<x> (bmc3 on each one's cone
//   gives its first cycle).
module cq_fv #(
  parameter int DataWidth = 512,
  parameter int GP = 16          // AW positions awaiting their B (ghost queue; power of two)
) (
  input logic         clk_i,
  input logic         rst_ni,
  input rnic_ce_t     ce_i,
  input logic         ce_valid_i,
  input logic [63:0]  cq_base_i,
  input logic [4:0]   cq_log2_i,
  input logic         cq_enable_i,
  input logic         cq_reset_i,
  input logic [31:0]  cq_cons_i,
  input logic         awready_i,
  input logic         wready_i,
  input logic [31:0]  b_segs_i,
  input logic         aw_other_i,    // bus model: another port's AW is taken this cycle
  input logic         b_i,           // bus model: a B handshake this cycle
  input logic [31:0]  cnt0_i,        // bus model: the counters' value after a reset
  input logic [8:0]   k_i            // the CQE bit compared (free, held from the first cycle)
);
  localparam int Bytes = DataWidth / 8;
  localparam int Beats = 64 / Bytes;
  localparam int GI = 2;             // ghost input queue: the slice's two registers
  localparam int Gpw = $clog2(GP);
  localparam int CeW = $bits(ce_i);  // rnic_ce_t (hw/include/rnic/hw/structs.def)

  logic                 ce_ready, cq_busy, awvalid, wvalid, wlast, fence_done, fv_pop, fv_head_valid;
  logic [31:0]          cq_prod;
  logic [63:0]          awaddr;
  logic [7:0]           awlen;
  logic [DataWidth-1:0] wdata;
  logic [Bytes-1:0]     wstrb;
  logic [31:0]          aw_count_i, b_count_i;   // the mux's counters, modelled below

  rnic_deliver_cq #(.DataWidth(DataWidth)) dut (
    .clk_i, .rst_ni, .ce_i, .ce_valid_i, .ce_ready_o(ce_ready),
    .cq_base_i, .cq_log2_i, .cq_enable_i, .cq_reset_i, .cq_cons_i, .cq_prod_o(cq_prod),
    .cq_busy_o(cq_busy), .awaddr_o(awaddr), .awlen_o(awlen), .awvalid_o(awvalid), .awready_i,
    .wdata_o(wdata), .wstrb_o(wstrb), .wlast_o(wlast), .wvalid_o(wvalid), .wready_i,
    .b_segs_i, .aw_count_i, .b_count_i, .fence_done_o(fence_done),
    .fv_pop, .fv_head_valid
  );

  logic in_hs, aw_hs, w_hs;
  assign in_hs = rst_ni && ce_valid_i && ce_ready;
  assign aw_hs = awvalid && awready_i;
  assign w_hs = wvalid && wready_i;

  // ---- ghost: the accepted entries, in order (flat vectors: Yosys 0.23 has no memories of structs) ----
  logic [CeW-1:0] gq [GI];
  logic [1:0]     gq_wr, gq_rd;
  logic           gq_empty;
  rnic_ce_t       hd;                 // the oldest accepted entry that has not left
  assign gq_empty = gq_wr == gq_rd;
  assign hd = gq[gq_rd[0]];
  always_ff @(posedge clk_i) begin
    if (in_hs) gq[gq_wr[0]] <= ce_i;
  end

  // ---- ghost: what leaves the head ----
  logic        pop_wr, pop_disc, pop_mk, hd_reached;
  logic [31:0] hd_wait;
  logic [31:0] gw;                    // entries written (left to be written) since the last cq_reset
  logic [31:0] ring_size, ring_used, gw_lap;
  assign pop_wr = fv_pop && !hd.marker && cq_enable_i;
  assign pop_disc = fv_pop && !hd.marker && !cq_enable_i;
  assign pop_mk = fv_pop && hd.marker;
  assign hd_wait = b_segs_i - hd.mark;
  assign hd_reached = $signed(hd_wait) >= 0;
  assign ring_size = 32'd1 << cq_log2_i;
  assign ring_used = gw - cq_cons_i;
  assign gw_lap = gw >> cq_log2_i;    // the lap the next entry is written in

  // the entry being written (copied when it leaves the head), its ring slot and phase
  rnic_ce_t    wr_e;
  logic [63:0] wr_addr_exp;
  logic        wr_phase;
  logic        wr_count;              // loaded since the last cq_reset, AW not yet accepted: its B counts
  always_ff @(posedge clk_i) begin
    if (pop_wr) begin
      wr_e <= hd;
      wr_addr_exp <= {cq_base_i[63:6], 6'b0} + ({32'b0, gw & (ring_size - 32'd1)} << 6);
      wr_phase <= !gw_lap[0];         // 1 on the first lap, flips per lap
    end
  end

  // ---- the CQE (hw.def RNIC_RECORD(CQE), docs/registers.md) of the entry being written ----
  // aux[103:0] of a delivery or an order error (structs.def), through plain vectors (no part-select
  // of a struct member: see ../shared/docs/toolchain-notes.md on what Yosys 0.23 gets wrong)
  logic [143:0] wr_aux;
  logic [39:0]  wr_rsvd;
  rnic_ce_dlv_t wr_dlv;
  assign wr_aux = wr_e.aux;
  assign wr_dlv = wr_aux[103:0];
  assign wr_rsvd = wr_dlv.rsvd_ulp;
  logic [511:0] cqe_exp;
  always_comb begin
    cqe_exp = '0;                     // every field not named below is zero
    cqe_exp[RNIC_CQE_STREAM_LSB +: 16] = wr_e.stream;
    cqe_exp[RNIC_CQE_FLAGS_PHASE_LSB] = wr_phase;
    cqe_exp[RNIC_CQE_FLAGS_ERROR_LSB] = wr_e.err;
    cqe_exp[RNIC_CQE_FLAGS_TAGGED_LSB] = wr_e.is_tagged;
    cqe_exp[RNIC_CQE_FLAGS_ORDER_LSB] = wr_e.order;
    cqe_exp[RNIC_CQE_SSN_LSB +: 16] = wr_e.ssn;
    if (wr_e.err) begin
      // an error: 7.2 type and code, the segment length; an order error names QN and MSN (HEADER
      // zero), any other error carries the header bytes
      cqe_exp[RNIC_CQE_ERR_TYPE_LSB +: 8] = {4'b0, wr_e.err_type};
      cqe_exp[RNIC_CQE_ERR_CODE_LSB +: 8] = wr_e.err_code;
      cqe_exp[RNIC_CQE_LENGTH_LSB +: 32] = wr_e.length;
      if (wr_e.order) begin
        cqe_exp[RNIC_CQE_STAG_QN_LSB +: 32] = wr_dlv.stag_qn;
        cqe_exp[RNIC_CQE_MSN_LSB +: 32] = wr_dlv.msn;
      end else begin
        cqe_exp[RNIC_CQE_HEADER_LSB +: 144] = wr_aux;
      end
    end else if (wr_e.is_tagged) begin
      // a tagged delivery: STag, RsvdULP 8 bits
      cqe_exp[RNIC_CQE_STAG_QN_LSB +: 32] = wr_dlv.stag_qn;
      cqe_exp[RNIC_CQE_RSVD_ULP_LSB +: 8] = wr_rsvd[7:0];
    end else begin
      // an untagged delivery: QN, MSN, message length, RsvdULP 40 bits
      cqe_exp[RNIC_CQE_STAG_QN_LSB +: 32] = wr_dlv.stag_qn;
      cqe_exp[RNIC_CQE_MSN_LSB +: 32] = wr_dlv.msn;
      cqe_exp[RNIC_CQE_LENGTH_LSB +: 32] = wr_e.length;
      cqe_exp[RNIC_CQE_RSVD_ULP_LSB +: 40] = wr_rsvd;
    end
  end

  // ---- AXI bookkeeping: AWs presented, bursts finished, the beat in the burst ----
  logic        awv_q, awr_q, wv_q, wr_q;
  logic [63:0] awaddr_q;
  logic [7:0]  awlen_q;
  logic        wbit_q, wlast_q;
  logic        awnew;                 // a new AW is presented (not the one held from the last cycle)
  logic [7:0]  n_aw, n_wb, issued;    // mod 256: only differences matter
  logic [7:0]  gbeat;
  logic [7:0]  n_load, n_awhs;        // entries loaded to be written, this port's AW handshakes
  logic        pop_wr_q, pop_mk_q;
  assign awnew = awvalid && !(awv_q && !awr_q);
  assign issued = n_aw + 8'(awnew);

  // The beat's part of the CQE. The data check compares one bit, at position k_i of the beat: k_i is
  // free and held from the first cycle, so every position is covered (a mismatch at position j fails
  // the run with k_i = j); one bit instead of the whole beat makes the check several times faster.
  logic [DataWidth-1:0] w_exp;
  logic                 wbit, wbit_exp;
  assign wbit = wdata[k_i[$clog2(DataWidth)-1:0]];
  assign wbit_exp = w_exp[k_i[$clog2(DataWidth)-1:0]];
  always_comb begin
    w_exp = cqe_exp[DataWidth-1:0];
    for (int i = 1; i < Beats; i++) begin
      if (gbeat == 8'(i)) w_exp = cqe_exp[i*DataWidth +: DataWidth];
    end
  end

  // ---- bus model: the write mux's counters ----
  logic [31:0] aw_cnt, b_cnt;
  logic        b_inc;
  assign aw_count_i = aw_cnt;
  assign b_count_i = b_cnt;
  assign b_inc = b_i && b_cnt != aw_cnt;

  // ---- ghost: Bs to come ----
  logic [31:0] b_due;                 // B handshakes still to come until this port's last AW has its B
  // AW positions (aw_count + 1 at the handshake) of the entries whose B counts for cq_prod, oldest
  // first, and the entries acknowledged since the last cq_reset
  logic [31:0]  pq [GP];
  logic [Gpw:0] pq_wr, pq_rd;
  logic [31:0]  pq_head_wait, g_acked;
  logic         pq_push, pq_pop;
  assign pq_push = aw_hs && wr_count && !cq_reset_i;
  assign pq_head_wait = b_cnt - pq[pq_rd[Gpw-1:0]];
  assign pq_pop = pq_wr != pq_rd && $signed(pq_head_wait) >= 0 && !cq_reset_i;
  always_ff @(posedge clk_i) begin
    if (pq_push) pq[pq_wr[Gpw-1:0]] <= aw_cnt + 32'd1;
  end

  // the ring configured now: 64-byte slots [base, base + 64 * 2^cq_log2)
  logic aw_in_ring, w_in_ring;
  assign aw_in_ring = awaddr[5:0] == 6'd0 &&
                      ((awaddr - {cq_base_i[63:6], 6'b0}) >> 6) < {32'b0, ring_size};
  assign w_in_ring = wr_addr_exp[5:0] == 6'd0 &&
                     ((wr_addr_exp - {cq_base_i[63:6], 6'b0}) >> 6) < {32'b0, ring_size};

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      gq_wr <= '0;
      gq_rd <= '0;
      gw <= '0;
      wr_count <= 1'b0;
      awv_q <= 1'b0;
      awr_q <= 1'b0;
      wv_q <= 1'b0;
      wr_q <= 1'b0;
      n_aw <= '0;
      n_wb <= '0;
      gbeat <= '0;
      n_load <= '0;
      n_awhs <= '0;
      pop_wr_q <= 1'b0;
      pop_mk_q <= 1'b0;
      aw_cnt <= cnt0_i;
      b_cnt <= cnt0_i;
      b_due <= '0;
      pq_wr <= '0;
      pq_rd <= '0;
      g_acked <= '0;
    end else begin
      gq_wr <= gq_wr + 2'(in_hs);
      gq_rd <= gq_rd + 2'(fv_pop);
      if (cq_reset_i) gw <= '0;
      else if (pop_wr) gw <= gw + 32'd1;
      if (cq_reset_i) wr_count <= 1'b0;
      else if (pop_wr) wr_count <= 1'b1;        // (the last entry's AW may be taken in this cycle)
      else if (aw_hs) wr_count <= 1'b0;
      awv_q <= awvalid;
      awr_q <= awready_i;
      wv_q <= wvalid;
      wr_q <= wready_i;
      n_aw <= issued;
      if (w_hs) begin
        if (wlast) begin
          n_wb <= n_wb + 8'd1;
          gbeat <= '0;
        end else begin
          gbeat <= gbeat + 8'd1;
        end
      end
      n_load <= n_load + 8'(pop_wr);
      n_awhs <= n_awhs + 8'(aw_hs);
      pop_wr_q <= pop_wr;
      pop_mk_q <= pop_mk;
      aw_cnt <= aw_cnt + 32'(aw_hs || aw_other_i);
      b_cnt <= b_cnt + 32'(b_inc);
      // this port's AW: every AW counted before it and not acknowledged, then itself
      if (aw_hs) b_due <= aw_cnt - b_cnt + 32'd1 - 32'(b_inc);
      else if (b_inc && b_due != 32'd0) b_due <= b_due - 32'd1;
      if (cq_reset_i) begin
        pq_wr <= '0;
        pq_rd <= '0;
        g_acked <= '0;
      end else begin
        pq_wr <= pq_wr + (Gpw + 1)'(pq_push);
        pq_rd <= pq_rd + (Gpw + 1)'(pq_pop);
        g_acked <= g_acked + 32'(pq_pop);
      end
    end
  end
  always_ff @(posedge clk_i) begin
    awaddr_q <= awaddr;
    awlen_q <= awlen;
    wbit_q <= wbit;
    wlast_q <= wlast;
  end

  // ---- scenarios for FV_REACH ----
  logic reach_write, reach_prod, reach_disc, reach_fence, reach_fence_after_b, reach_lap2,
        reach_full, reach_drop, reach_b_wait, reach_back2back, reach_order_wr, reach_hdr_wr,
        reach_tagged_wr, reach_untagged_wr, reach_cnt_wrap, reach_gate_wrap, reach_w_first;
  assign reach_write = w_hs && wlast;                           // a completion's last W beat taken
  assign reach_prod = cq_prod != 32'd0;                         // a completion acknowledged
  assign reach_disc = pop_disc;                                 // an entry discarded
  assign reach_fence = fence_done;                              // a fence marker done
  assign reach_fence_after_b = pop_mk && g_acked != 32'd0;      // ... after an acknowledged write
  assign reach_lap2 = w_hs && !wr_phase;                        // the ring's second lap written
  assign reach_full = !gq_empty && !hd.marker && cq_enable_i && !cq_reset_i && hd_reached &&
                      !awvalid && !wvalid && ring_used >= ring_size;  // waiting for room only
  assign reach_drop = aw_hs && !wr_count;                       // a write started before a cq_reset
  assign reach_b_wait = cq_busy && n_load != 8'd0 && n_awhs == n_load && n_wb == n_load &&
                        !pop_wr;                                // busy for a written entry's B only
  assign reach_back2back = pop_wr && (awvalid || wvalid);       // loaded in a last handshake's cycle
  assign reach_order_wr = w_hs && wr_e.err && wr_e.order;       // CQE kinds written
  assign reach_hdr_wr = w_hs && wr_e.err && !wr_e.order;
  assign reach_tagged_wr = w_hs && !wr_e.err && wr_e.is_tagged;
  assign reach_untagged_wr = w_hs && !wr_e.err && !wr_e.is_tagged;
  assign reach_cnt_wrap = aw_hs && aw_cnt < b_cnt;              // this port's AW across the wrap
  assign reach_gate_wrap = (pop_wr || pop_mk) && b_segs_i < hd.mark;  // the gate across the wrap
  assign reach_w_first = w_hs && wlast && awvalid;              // W finished before its AW

`ifdef FORMAL
  logic init = 1'b1;
  always_ff @(posedge clk_i) init <= 1'b0;

  // ---- environment ----
  logic           en_q, en_qq, rstn_q, busy_r, busy_rq, stall_q;
  logic [63:0]    base_q;
  logic [4:0]     log2_q;
  logic [CeW-1:0] ce_q;
  logic [8:0]     k_q;
  always_ff @(posedge clk_i) begin
    en_q <= cq_enable_i;
    en_qq <= en_q;
    rstn_q <= rst_ni;
    busy_r <= rst_ni && cq_busy;       // rnic_regs' cq_busy_q
    busy_rq <= busy_r;
    base_q <= cq_base_i;
    log2_q <= cq_log2_i;
    stall_q <= rst_ni && ce_valid_i && !ce_ready;
    ce_q <= ce_i;
    k_q <= k_i;
  end
  logic reach_reconfig, reach_busy_done;
  assign reach_reconfig = rstn_q && n_load != 8'd0 && cq_base_i != base_q;  // a new ring after a write
  assign reach_busy_done = !cq_busy && n_load != 8'd0;          // busy back to 0 after a write
  always_comb begin
    if (init) assume (!rst_ni);
    if (!init) assume (k_i == k_q);    // the compared CQE bit: any, fixed
    // a valid/ready source: valid held with stable data until ready (AXI-Stream 2.2.1)
    if (rst_ni && stall_q) assume (ce_valid_i && ce_i == ce_q);
    // rnic_regs (README 3a): the ring configuration changes only after a reset, or with the ring
    // disabled in this cycle and the one before and cq_busy_o = 0 in the one before; 2^0..2^16
    if (!init && rstn_q && !(!en_q && !en_qq && !busy_rq)) assume (cq_base_i == base_q && cq_log2_i == log2_q);
    assume (cq_log2_i <= 5'd16);
  end

  always_comb begin
    if (rst_ni && !init) begin
      // ghosts never overflow
      a_gq_room: assert (gq_wr - gq_rd <= 2'(GI));
      a_pq_room: assert (pq_wr - pq_rd <= (Gpw + 1)'(GP));
      // (c) the head: what is accepted is at the head from the next cycle; what leaves
      a_head_valid: assert (fv_head_valid == !gq_empty);
      if (fv_pop) a_pop_head: assert (!gq_empty && !cq_reset_i);
      if (!gq_empty && !hd.marker && !cq_enable_i && !cq_reset_i) a_discard: assert (fv_pop);
      // (gate) b_segs reached the mark of an entry leaving to be written and of a marker
      if (pop_wr || pop_mk) a_gate: assert (hd_reached);
      // (c) room in the ring; fewer than AckDepth = 32 loaded since the last cq_reset await their B
      if (pop_wr) a_room: assert (ring_used < ring_size);
      if (pop_wr) a_ack_room: assert (gw - g_acked < 32'd32);
      // (gate) a marker: no completion write on the bus, no B to come; fence_done_o for it
      if (pop_mk) a_fence_bus: assert (n_awhs == n_load && n_wb == n_load);
`ifdef FV_FENCE_ALL_B
      if (pop_mk) a_fence_b: assert (b_due == 32'd0);
`else
      if (pop_mk) a_fence_b: assert (pq_wr == pq_rd);
`endif
      a_fence_done: assert (fence_done == pop_mk_q);
      // (c) an AW is presented exactly in the cycle after an entry left to be written, at its slot
      a_aw_new: assert (awnew == pop_wr_q);
      if (awnew) a_aw_addr: assert (awaddr == wr_addr_exp);
      if (awvalid) a_aw_len: assert (awlen == 8'(Beats - 1));
      if (awv_q && !awr_q) a_aw_hold: assert (awvalid && awaddr == awaddr_q && awlen == awlen_q);
      // W: never ahead of AW, Beats beats with WLAST on the last, all strobes, held until taken
      a_w_ahead: assert (issued - n_wb <= 8'd1);
      if (wvalid) a_w_aw: assert (n_wb != issued);
      if (wvalid) a_w_strb: assert (wstrb == '1);
      if (wvalid) a_w_last: assert (wlast == (gbeat == 8'(Beats - 1)));
      if (wv_q && !wr_q) a_w_hold: assert (wvalid && wbit == wbit_q && wlast == wlast_q);
      // (content) the CQE of the entry that left the head, with its lap's phase
      if (wvalid) a_w_data: assert (wbit == wbit_exp);
      // (c, ring now) every AW presented, and the AW of every W beat, in the ring configured now
      if (awvalid) a_aw_ring: assert (aw_in_ring);
      if (wvalid) a_w_ring: assert (w_in_ring);
      // (busy) 0 only when no loaded entry (this cycle's included) has its AW, a W beat or B to come
      if (!cq_busy) a_busy: assert (n_awhs == n_load + 8'(pop_wr) && n_wb == n_load + 8'(pop_wr) &&
                                    b_due == 32'd0);
      // (prod) acknowledged entries since the last cq_reset, in order, by the previous cycle's B count
      a_prod: assert (cq_prod == g_acked);
`ifdef FV_REACH
      a_reach: assert (!`FV_REACH);
`endif
`ifdef FV_REACH_ALL
      // every scenario at once, one assertion each (bmc3 on each one's cone: its first frame)
      r_write: assert (!reach_write);
      r_prod: assert (!reach_prod);
      r_disc: assert (!reach_disc);
      r_fence: assert (!reach_fence);
      r_fence_after_b: assert (!reach_fence_after_b);
      r_lap2: assert (!reach_lap2);
      r_full: assert (!reach_full);
      r_drop: assert (!reach_drop);
      r_b_wait: assert (!reach_b_wait);
      r_back2back: assert (!reach_back2back);
      r_order_wr: assert (!reach_order_wr);
      r_hdr_wr: assert (!reach_hdr_wr);
      r_tagged_wr: assert (!reach_tagged_wr);
      r_untagged_wr: assert (!reach_untagged_wr);
      r_cnt_wrap: assert (!reach_cnt_wrap);
      r_gate_wrap: assert (!reach_gate_wrap);
      r_w_first: assert (!reach_w_first);
      r_reconfig: assert (!reach_reconfig);
      r_busy_done: assert (!reach_busy_done);
`endif
    end
  end
`endif
endmodule

// The writer at 128 bits: four beats per entry.
module cq_fv_128 (
  input logic clk_i, input logic rst_ni, input rnic_ce_t ce_i, input logic ce_valid_i,
  input logic [63:0] cq_base_i, input logic [4:0] cq_log2_i, input logic cq_enable_i,
  input logic cq_reset_i, input logic [31:0] cq_cons_i, input logic awready_i, input logic wready_i,
  input logic [31:0] b_segs_i, input logic aw_other_i, input logic b_i, input logic [31:0] cnt0_i,
  input logic [8:0] k_i
);
  cq_fv #(.DataWidth(128)) u (.*);
endmodule
