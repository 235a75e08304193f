// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
`include "rnic_assert.svh"
// Deliver's completion-ring writer: takes the decided completions and fence markers (rnic_ce_t) in
// the order deliver decided them and writes the completions into the host's completion ring.
// - Input: a register slice (the load decision below, with the ring room, the b_segs gate and the
//   bus, ends at the slice instead of reaching into deliver's completion queue: the depth budget).
// - Write: the head entry is written once b_segs_i has reached its mark (32-bit wrapping compare:
//   every segment committed before the decision is acknowledged, so no write into a buffer can
//   follow the completion that hands it back), cq_enable_i is 1, the ring has room counting
//   entries in flight (full: written - cq_cons_i >= 2^cq_log2_i, unsigned) and fewer than AckDepth
//   entries await their B. One AW burst of 64 bytes (64/Bytes beats, all strobes) at
//   {cq_base_i[63:6], 6'b0} + 64 * (index mod 2^cq_log2_i); AW and W are offered independently;
//   the next entry follows in the cycle after the previous one's last handshake. Earlier entries'
//   B responses are not waited for. The CQE (hw.def RNIC_RECORD(CQE)) is built from the entry:
//   flags with the phase of the ring's lap (1 on the first), a delivery's STag/QN, MSN, length and
//   RsvdULP as T says, an error's type, code and length with the header (or, for an order error,
//   QN and MSN).
// - Acknowledge: at each entry's AW handshake its position in the AW sequence (aw_count_i + 1) is
//   queued; cq_prod_o advances by one when b_count_i reaches the oldest, so in order and only after
//   the entry's own write is acknowledged.
// - cq_reset_i: producer 0 (phase 1), nothing in flight counted any more. An entry whose write is
//   under way is finished on the bus but not counted; entries not yet started are written to the new
//   ring.
// - cq_enable_i = 0: entries reaching the head are discarded (nothing written). An entry already
//   loaded is still written, to the ring it was loaded for: cq_busy_o is 1 from its load until the B
//   of the last completion write issued has come (b_count_i reaching that AW's aw_count_i + 1, B in
//   AW order). Regs takes no new ring configuration while it is 1, and software does not free or
//   reuse the ring memory until it has read CQ_CTRL.busy = 0 after disabling.
// - Fence markers (FENCE, QUEUE_SET) leave the head once its mark is reached and every completion
//   before them is written and acknowledged; fence_done_o pulses (the command completes). A write
//   cq_reset_i dropped from the count is not waited for: its ring was reset (cq_busy_o still covers
//   it).
module rnic_deliver_cq #(
  parameter int DataWidth = 512  // bits
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  rnic_ce_t               ce_i,             // from deliver's completion queue, in order
  input  logic                   ce_valid_i,
  output logic                   ce_ready_o,
  input  logic [63:0]            cq_base_i,        // completion ring, from regs
  input  logic [4:0]             cq_log2_i,
  input  logic                   cq_enable_i,
  input  logic                   cq_reset_i,       // pulse: producer 0, phase 1
  input  logic [31:0]            cq_cons_i,
  output logic [31:0]            cq_prod_o,
  output logic                   cq_busy_o,        // a completion write is on the bus or awaits its B
  output logic [63:0]            awaddr_o,         // write master port 1 of the mux
  output logic [7:0]             awlen_o,
  output logic                   awvalid_o,
  input  logic                   awready_i,
  output logic [DataWidth-1:0]   wdata_o,
  output logic [DataWidth/8-1:0] wstrb_o,
  output logic                   wlast_o,
  output logic                   wvalid_o,
  input  logic                   wready_i,
  input  logic [31:0]            b_segs_i,         // mux: place segments whose writes are acknowledged
  input  logic [31:0]            aw_count_i,       // mux: AWs taken (all ports), B responses seen
  input  logic [31:0]            b_count_i,
  output logic                   fence_done_o      // pulse: a fence marker left the head
`ifdef FORMAL
  ,
  // Observation ports for the proofs (tb/formal/deliver_fv.sv, tb/formal/cq_fv.sv): the head entry
  // leaves (written, discarded or a marker done) and whether the slice holds one.
  output logic                   fv_pop,
  output logic                   fv_head_valid
`endif
);
  localparam int Bytes = DataWidth / 8;
  localparam int Beats = 64 / Bytes;                             // beats per completion entry
  localparam int BeatW = (Beats > 1) ? $clog2(Beats) : 1;
  localparam logic [BeatW-1:0] LastBeat = BeatW'(Beats - 1);
  localparam int AckDepth = 32;   // completion writes in flight (written, B not yet seen)
  localparam int AckAw = $clog2(AckDepth);

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_deliver_cq: DataWidth must be 64, 128, 256 or 512");
  end

  // ---- the head entry -----------------------------------------------------------------------------
  rnic_ce_t head;
  logic head_valid, pop;
  rnic_slice #(.Width($bits(ce_i))) u_slice (
    .clk_i, .rst_ni,
    .in_data_i(ce_i), .in_valid_i(ce_valid_i), .in_ready_o(ce_ready_o),
    .out_data_o(head), .out_valid_o(head_valid), .out_ready_i(pop));

  // ---- write ------------------------------------------------------------------------------------
  logic wv_d, wv_q;                       // an entry is being written
  logic aw_pend_d, aw_pend_q;
  logic w_pend_d, w_pend_q;
  logic [BeatW-1:0] beat_d, beat_q;
  logic drop_d, drop_q;                   // cq_reset_i while it was written: do not count it
  logic [31:0] widx_d, widx_q;            // entries started since the last cq reset
  logic [31:0] prod_d, prod_q;            // entries acknowledged
  logic [AckAw:0] ack_wp_d, ack_wp_q, ack_rp_d, ack_rp_q;
  logic [31:0] ack_mem [AckDepth];
  // datapath (no reset): the entry being written, without its mark (the MSB member)
  // (The mark is the MSB member and counts what b_segs_i counts. Yosys 0.23 rejects $bits of a
  // type and returns the whole struct's width for $bits of a member.)
  localparam int EntryW = $bits(ce_i) - $bits(b_segs_i);
  logic [EntryW-1:0] wr_d, wr_q;
  rnic_ce_t wr;
  logic [63:0] wr_addr_d, wr_addr_q;
  logic wr_phase_d, wr_phase_q;

  logic aw_hs, w_hs, aw_fin, w_fin, load, discard, mk_done, gate, ack_push, ack_pop, ack_any;
  logic fdone_q;
  logic [31:0] last_aw_q;                // aw_count_i + 1 at this module's last AW handshake
  logic b_wait_q, b_wait;                 // its B has not come yet
  logic [31:0] cq_size, cq_used, cq_index, cq_lap, mark_wait, ack_head, ack_wait;
  logic [AckAw:0] infl_d, infl_q;         // entries started and not yet acknowledged (widx - prod)

  assign aw_hs = awvalid_o && awready_i;
  assign w_hs = wvalid_o && wready_i;
  assign aw_fin = !aw_pend_q || awready_i;
  assign w_fin = !w_pend_q || (wready_i && beat_q == LastBeat);

  assign cq_size = 32'd1 << cq_log2_i;
  assign cq_used = widx_q - cq_cons_i;
  assign cq_index = widx_q & (cq_size - 32'd1);
  assign cq_lap = widx_q >> cq_log2_i;
  assign mark_wait = b_segs_i - head.mark;
  assign gate = head_valid && !mark_wait[31];  // every segment committed before it is acknowledged

  // An entry is written (enabled ring with room), or discarded (ring disabled); a fence marker
  // leaves once nothing before it is in flight.
  assign load = gate && !head.marker && cq_enable_i && cq_used < cq_size &&
                !infl_q[AckAw] && !cq_reset_i && (!wv_q || (aw_fin && w_fin));
  assign discard = head_valid && !head.marker && !cq_enable_i && !cq_reset_i;
  assign mk_done = gate && head.marker && !wv_q && infl_q == '0 && !cq_reset_i;
  assign pop = load || discard || mk_done;
  assign fence_done_o = fdone_q;

  // Busy: an entry loading now or loaded and not yet fully on the bus, or its B (and so every
  // earlier one) not in. The load cycle counts, so regs (which registers this) never takes a new
  // ring configuration in the cycle after a load, however close together its writes come.
  // The last AW's B: waited for from its handshake until b_count_i reaches last_aw_q (b_count_i
  // moves by one at most per cycle and never passes aw_count_i, so it cannot step over it). A flag,
  // not a wrapping compare: other ports' writes (2^31 of them and more) never make it wait again.
  assign b_wait = b_wait_q && b_count_i != last_aw_q;
  assign cq_busy_o = load || wv_q || b_wait;

  assign ack_any = ack_wp_q != ack_rp_q;
  assign ack_head = ack_mem[ack_rp_q[AckAw-1:0]];
  assign ack_wait = b_count_i - ack_head;
  assign ack_push = aw_hs && !drop_q && !cq_reset_i;
  assign ack_pop = ack_any && !ack_wait[31] && !cq_reset_i;

  always_ff @(posedge clk_i) begin
    if (ack_push) ack_mem[ack_wp_q[AckAw-1:0]] <= aw_count_i + 32'd1;
  end

  always_comb begin
    wv_d = wv_q;
    aw_pend_d = aw_pend_q;
    w_pend_d = w_pend_q;
    beat_d = beat_q;
    drop_d = drop_q;
    widx_d = widx_q;
    prod_d = prod_q;
    ack_wp_d = ack_wp_q;
    ack_rp_d = ack_rp_q;
    wr_d = wr_q;
    wr_addr_d = wr_addr_q;
    wr_phase_d = wr_phase_q;

    if (aw_hs) aw_pend_d = 1'b0;
    if (w_hs) begin
      beat_d = beat_q + 1'b1;
      if (beat_q == LastBeat) w_pend_d = 1'b0;
    end
    if (wv_q && aw_fin && w_fin) wv_d = 1'b0;
    if (cq_reset_i) drop_d = 1'b1;
    if (load) begin
      wv_d = 1'b1;
      aw_pend_d = 1'b1;
      w_pend_d = 1'b1;
      beat_d = '0;
      drop_d = 1'b0;
      widx_d = widx_q + 32'd1;
      wr_d = head[EntryW-1:0];
      wr_addr_d = {cq_base_i[63:6], 6'b0} + {26'b0, cq_index, 6'b0};
      wr_phase_d = ~cq_lap[0];  // 1 on the first lap
    end
    if (ack_push) ack_wp_d = ack_wp_q + 1'b1;
    if (ack_pop) begin
      ack_rp_d = ack_rp_q + 1'b1;
      prod_d = prod_q + 32'd1;
    end
    infl_d = infl_q + (AckAw + 1)'(load) - (AckAw + 1)'(ack_pop);
    if (cq_reset_i) begin
      infl_d = '0;
      widx_d = '0;
      prod_d = '0;
      ack_rp_d = ack_wp_q;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      fdone_q <= 1'b0;
      wv_q <= 1'b0;
      aw_pend_q <= 1'b0;
      w_pend_q <= 1'b0;
      beat_q <= '0;
      drop_q <= 1'b0;
      widx_q <= '0;
      prod_q <= '0;
      infl_q <= '0;
      ack_wp_q <= '0;
      ack_rp_q <= '0;
      last_aw_q <= '0;
      b_wait_q <= 1'b0;
    end else begin
      fdone_q <= mk_done;
      wv_q <= wv_d;
      aw_pend_q <= aw_pend_d;
      w_pend_q <= w_pend_d;
      beat_q <= beat_d;
      drop_q <= drop_d;
      widx_q <= widx_d;
      prod_q <= prod_d;
      infl_q <= infl_d;
      ack_wp_q <= ack_wp_d;
      ack_rp_q <= ack_rp_d;
      if (aw_hs) last_aw_q <= aw_count_i + 32'd1;
      b_wait_q <= aw_hs || b_wait;
    end
  end

  always_ff @(posedge clk_i) begin
    wr_q <= wr_d;
    wr_addr_q <= wr_addr_d;
    wr_phase_q <= wr_phase_d;
  end

  // ---- completion entry (hw.def RNIC_RECORD(CQE)) ----------------------------------------------
  logic [511:0] cqe;
  rnic_ce_dlv_t wr_dlv;                   // a delivery's or an order error's aux
  always_comb begin
    wr = '0;
    wr[EntryW-1:0] = wr_q;
  end
  assign wr_dlv = wr.aux[$bits(wr_dlv)-1:0];

  always_comb begin
    cqe = '0;
    cqe[RNIC_CQE_STREAM_LSB +: RNIC_CQE_STREAM_BITS] = wr.stream;
    cqe[RNIC_CQE_FLAGS_PHASE_LSB]  = wr_phase_q;
    cqe[RNIC_CQE_FLAGS_ERROR_LSB]  = wr.err;
    cqe[RNIC_CQE_FLAGS_TAGGED_LSB] = wr.is_tagged;
    cqe[RNIC_CQE_FLAGS_ORDER_LSB]  = wr.order;
    cqe[RNIC_CQE_SSN_LSB +: RNIC_CQE_SSN_BITS] = wr.ssn;
    if (wr.err) begin
      cqe[RNIC_CQE_ERR_TYPE_LSB +: 4] = wr.err_type;
      cqe[RNIC_CQE_ERR_CODE_LSB +: RNIC_CQE_ERR_CODE_BITS] = wr.err_code;
      cqe[RNIC_CQE_LENGTH_LSB +: 32] = wr.length;
      if (wr.order) begin  // order error: QN and MSN, no header
        cqe[RNIC_CQE_STAG_QN_LSB +: 32] = wr_dlv.stag_qn;
        cqe[RNIC_CQE_MSN_LSB +: 32] = wr_dlv.msn;
      end else begin
        cqe[RNIC_CQE_HEADER_LSB +: 144] = wr.aux;
      end
    end else begin
      cqe[RNIC_CQE_STAG_QN_LSB +: 32] = wr_dlv.stag_qn;
      if (wr.is_tagged) begin
        cqe[RNIC_CQE_RSVD_ULP_LSB +: 8] = wr_dlv.rsvd_ulp[7:0];
      end else begin
        cqe[RNIC_CQE_MSN_LSB +: 32] = wr_dlv.msn;
        cqe[RNIC_CQE_LENGTH_LSB +: 32] = wr.length;
        cqe[RNIC_CQE_RSVD_ULP_LSB +: 40] = wr_dlv.rsvd_ulp;
      end
    end
  end

  always_comb begin
    wdata_o = cqe[DataWidth-1:0];
    for (int i = 1; i < Beats; i++) begin
      if (beat_q == BeatW'(i)) wdata_o = cqe[i*DataWidth +: DataWidth];
    end
  end

  assign awaddr_o = wr_addr_q;
  assign awlen_o = 8'(Beats - 1);
  assign wstrb_o = '1;
  assign wlast_o = beat_q == LastBeat;
  assign cq_prod_o = prod_q;
  // The write port's valids depend on flops only.
  // aw_pend_q and w_pend_q are set only with wv_q, and wv_q clears only once both are done
  // (a_pend_in_wv): awvalid_o is a flip-flop (the depth budget: the mux's arbiter hangs on it).
  assign awvalid_o = aw_pend_q;
  assign wvalid_o = w_pend_q;
  `RNIC_ASSERT(a_pend_in_wv, clk_i, rst_ni, wv_q || (!aw_pend_q && !w_pend_q))

  // The base's offset bits, the compare differences' low bits, the lap's upper bits; the mark and
  // the marker flag of the entry being written (not kept: the gate used the head's; never a marker).
  logic unused_bits;
  assign unused_bits = ^{cq_base_i[5:0], mark_wait[30:0], ack_wait[30:0], cq_lap,
                         wr.mark, wr.marker};
  // valid/ready at the boundaries: AW and W of the completion writes (AXI A3.3.1).
  `RNIC_ASSERT_HOLD(a_aw_hold, clk_i, rst_ni, awvalid_o, awready_i, {awaddr_o, awlen_o})
  `RNIC_ASSERT_HOLD(a_w_hold, clk_i, rst_ni, wvalid_o, wready_i, {wdata_o, wstrb_o, wlast_o})

`ifdef FORMAL
  assign fv_pop = pop;
  assign fv_head_valid = head_valid;
`endif
endmodule
