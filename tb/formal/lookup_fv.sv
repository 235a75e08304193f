// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
// Formal harness (issue 11, write safety): rnic_rx_lookup, the gate for (a) and (b)
// (docs/rtl-architecture.md "Write safety", point 1). validate is proven for ALL lookup items
// (validate_fv.sv), so kernel-level (a) and (b) rest on what lookup hands validate:
//   (a) CK_A: every tagged SEG item carries the STag entry the driver programmed: valid, key, PD,
//       bound, stream, remote write, base TO, length, address equal the ghost entry of its index
//       (STag[31:8]) as last set by accepted STAG_WRITE (args CMD_ARG0..9 as hw.def states them, key
//       as the card reported it on cmd_result_o) / STAG_INVALIDATE; no entry (index out of range,
//       invalidated, never written since reset): stag_valid 0. Also: STAG_WRITE returns
//       {index, key} and never the index's previous key; refusals are exactly the bad indexes.
//   (b) CK_WIN: every untagged SEG item with rq_status OK of a stream in range (in any state; an
//       out-of-range stream must read torn down, so validate drops it) names a configured queue
//       (stream, QN) and an MSN m posted and not completed: m in (cons, prod] in wrapping 32-bit MSN arithmetic (RFC 5041 4.3), where
//       head = next MSN to deliver and cons = head - 1 (hw.def / docs "Untagged buffers"), i.e.
//       m - head < prod - cons. Ghost prod := accepted doorbells; ghost head := QUEUE_CONFIG's
//       first MSN (0 means 1), + 1 per RNIC_CONS_CONSUME.
//       CK_DESC: such an item of a normal stream without local_fault (all validate PLACEs, level 1)
//       carries the descriptor (address, length) the host ring holds for m's slot:
//       ring base + 16 * ((m - 1) mod 2^log2) (docs: "the buffer for MSN m is ring slot (m - 1)").
//   CK_STAT (exactness, beyond write safety): rq_status is exactly the documented one: BAD_QN for
//       QN >= NumQns or an unconfigured queue; MSN_RANGE for m - head >= 2^31; NO_BUF for
//       m - head >= min(prod - cons, 2^log2) ("a producer beyond the ring is not believed");
//       else OK. An out-of-range stream reads torn down.
// Time of the lookup (the ghost snapshot): stage C decides on table data read in the cycle before
// C took them (the item moving in from B, or C's own re-read on a miss); lookup's observation port
// fv_c_load (`ifdef FORMAL in the RTL) says when C takes them, and an item that appears in
// O is checked against the ghost as it stood in that read's cycle (sc_*, held for the item). Doorbells and consumes after that read are ordered after the segment (RTL header:
// "the segment is simply ordered before them"); a consume overtaking the segment is place's
// stale check (place_fv.sv) and deliver's order check. A consume takes effect in lookup the cycle
// after its handshake (lookup's two-cycle read-modify-write of head); the ghost head follows that.
// Host memory (the driver's contract): one watched 16-byte host word at a free, fixed, 16-byte
// aligned address W with value D (free initial value). D may change in a cycle only while no
// configured queue has an MSN in its ghost window (cons, prod] whose slot is at W: the driver
// does not rewrite a descriptor while its buffer is posted and not completed (it writes the
// descriptor before the doorbell). An AXI R beat with OKAY for a read of W returns D; every other
// R beat is free. Since W is free, this covers every slot of every ring. Ring bases are 16-byte
// aligned (hw.def QUEUE_CONFIG ARG2/3).
// Other environment assumptions: regs holds the opcode and args while the command waits (its
// a_cmd_hold: lookup checks the index a cycle before it runs it) and from the command's handshake
// until lookup's cmd_done_o (rnic_regs: latched while busy); the consume channel names in-range
// (stream, QN) (deliver only consumes for its queues); AXI from the slave: an R beat only for an
// accepted AR, in order, RLAST on each (ARLEN 0 is asserted); a reset resets the slave too.
// Free: segments (stream, QN, MSN, STag, T; the other fields only pass through and are tied to 0),
// commands (any opcode and args), doorbells, consume-channel events of every kind, validate's error
// events, ssn read data (tied 0: passes through), lk_ready, arready, R data/resp.
// Also asserted: ARLEN 0 and ARADDR 16-byte aligned (one beat per descriptor at 128 bits),
// ARVALID/ARADDR held until ARREADY (AXI A3.2.1), at most MaxReads reads outstanding.
// Options (parameters): AS_DB_FWD assumes doorbells never move the producer backwards
// (prod - cons never shrinks); AS_CONS_POSTED that deliver consumes only a posted buffer of a
// configured queue; AS_NO_QRACE that no doorbell is accepted in, and no consume one cycle before,
// the cycle QUEUE_CONFIG's echo writes lookup's queue tables: that cycle's prod/head writes win
// over the doorbell's and the consume's (the finding in tb/formal/README.md).
// The ports (all free inputs): w_addr_i is the watched host word's address (taken at the first
// cycle), host_i its next value (when the host may change it).
`define LOOKUP_FV_PORTS \
  input logic          clk_i, \
  input logic          rst_ni, \
  input logic [15:0]   s_stream_i, \
  input logic [31:0]   s_qn_i, \
  input logic [31:0]   s_msn_i, \
  input logic [31:0]   s_stag_i, \
  input logic          s_tagged_i, \
  input logic          seg_valid_i, \
  input logic [7:0]    cmd_op_i, \
  input logic [319:0]  cmd_args_i, \
  input logic          cmd_valid_i, \
  input logic [15:0]   db_stream_i, \
  input logic [7:0]    db_qn_i, \
  input logic [31:0]   db_prod_i, \
  input logic          db_valid_i, \
  input logic [15:0]   cons_stream_i, \
  input logic [7:0]    cons_qn_i, \
  input logic [1:0]    cons_kind_i, \
  input logic          cons_valid_i, \
  input logic          err_valid_i, \
  input logic [15:0]   err_stream_i, \
  input logic [15:0]   err_pd_i, \
  input logic          err_pending_i, \
  input logic [15:0]   err_ssn_i, \
  input logic          dn_busy_i, \
  input logic          arready_i, \
  input logic [127:0]  rdata_i, \
  input logic [1:0]    rresp_i, \
  input logic          rlast_i, \
  input logic          rvalid_i, \
  input logic          lk_ready_i, \
  input logic [63:0]   w_addr_i, \
  input logic [127:0]  host_i

module lookup_fv #(
  parameter int NS = 1,          // NumStreams
  parameter int NQN = 2,         // NumQns
  parameter bit CK_A = 1,
  parameter bit CK_WIN = 1,
  parameter bit CK_DESC = 1,
  parameter bit CK_STAT = 1,
  parameter bit AS_DB_FWD = 0,
  parameter bit AS_NO_QRACE = 0,
  parameter bit AS_CONS_POSTED = 0,  // deliver consumes only a configured queue's posted buffer
  parameter int COVER = 0        // 1: a tagged item with a valid STag, 2: an untagged RQ OK item of a
                                 // normal stream reaches O (a deliberately false assertion: its
                                 // counterexample depth is the shortest such sequence)
) (
  `LOOKUP_FV_PORTS
);
  localparam int NQ = NS * NQN;
  localparam int SE = 2;             // StagEntries
  localparam int MR = 2;             // MaxReads

  rnic_seg_t    seg;
  logic         seg_ready, cmd_ready, cmd_done, cmd_refused, db_ready, cons_ready;
  logic [31:0]  cmd_result;
  // A command's end as lookup decides it (probe; the properties below use it) and as it leaves lookup
  // (cmd_*_o, one cycle later from registers: checked to be exactly that).
  logic         cmd_done_r, cmd_refused_r;
  logic [31:0]  cmd_result_r;
  logic [15:0]  ssn_rd_stream;
  logic [63:0]  araddr;
  logic [7:0]   arlen;
  logic         arvalid, rready, lk_valid;
  rnic_lookup_t lk;

  always_comb begin
    seg = '0;
    seg.stream = s_stream_i;
    seg.qn = s_qn_i;
    seg.msn = s_msn_i;
    seg.stag = s_stag_i;
    seg.is_tagged = s_tagged_i;
  end

  rnic_rx_lookup #(.DataWidth(128), .StagEntries(SE), .NumStreams(NS), .NumQns(NQN),
                   .RqPrefetch(2), .MaxReads(MR)) dut (
    .clk_i, .rst_ni, .seg_i(seg), .seg_valid_i, .seg_ready_o(seg_ready),
    .cmd_op_i, .cmd_args_i, .cmd_valid_i, .cmd_ready_o(cmd_ready), .cmd_done_o(cmd_done_r),
    .cmd_refused_o(cmd_refused_r), .cmd_result_o(cmd_result_r),
    .db_stream_i, .db_qn_i, .db_prod_i, .db_valid_i, .db_ready_o(db_ready),
    .cons_stream_i, .cons_qn_i, .cons_kind_i, .cons_valid_i, .cons_ready_o(cons_ready),
    .ssn_rd_stream_o(ssn_rd_stream), .ssn_rd_next_i(16'd0),
    .err_valid_i, .err_stream_i, .err_pd_i,
    .err_state_i(err_pending_i ? 2'(RNIC_STREAM_PENDING) : 2'(RNIC_STREAM_ERROR)), .err_ssn_i, .dn_busy_i,
    .m_axi_araddr_o(araddr), .m_axi_arlen_o(arlen), .m_axi_arvalid_o(arvalid),
    .m_axi_arready_i(arready_i), .m_axi_rdata_i(rdata_i), .m_axi_rresp_i(rresp_i),
    .m_axi_rlast_i(rlast_i), .m_axi_rvalid_i(rvalid_i), .m_axi_rready_o(rready),
    .lk_o(lk), .lk_valid_o(lk_valid), .lk_ready_i, .fv_c_load(c_load),
    .fv_cmd_done(cmd_done), .fv_cmd_refused(cmd_refused), .fv_cmd_result(cmd_result)
  );

  logic init = 1'b1;
  always_ff @(posedge clk_i) init <= 1'b0;

  // ---- command decoding (as hw.def states the commands) ----
  logic [31:0] a0, a1, a2, a3, a4, a5, a6, a7, a8, a9;
  assign {a9, a8, a7, a6, a5, a4, a3, a2, a1, a0} = cmd_args_i;
  logic [31:0] first;       // QUEUE_CONFIG ARG5: first MSN (0 means 1)
  assign first = a5 == 32'd0 ? 32'd1 : a5;
  logic [7:0] a0q;          // QUEUE_CONFIG's queue, STREAM_ENABLE's first queue
  assign a0q = 8'(a0 * NQN + a1);

  // The command whose lookup part runs (handshake .. cmd_done_o): regs holds op and args.
  logic         hc_busy;
  logic [7:0]   hc_op;
  logic [319:0] hc_args;
  logic         ex_sw, ex_inv, ex_qc, ex_en, dn_sw, dn_qc, dn_en;
  assign ex_sw  = cmd_ready && cmd_op_i == RNIC_CMD_STAG_WRITE;
  assign ex_inv = cmd_ready && cmd_op_i == RNIC_CMD_STAG_INVALIDATE;
  assign ex_qc  = cmd_ready && cmd_op_i == RNIC_CMD_QUEUE_CONFIG;
  assign ex_en  = cmd_ready && cmd_op_i == RNIC_CMD_STREAM_ENABLE;
  assign dn_sw = cmd_done && hc_busy && hc_op == RNIC_CMD_STAG_WRITE;
  assign dn_qc = cmd_done && hc_busy && hc_op == RNIC_CMD_QUEUE_CONFIG && !cmd_refused;
  assign dn_en = cmd_done && hc_busy && hc_op == RNIC_CMD_STREAM_ENABLE;

  // ---- ghost STag table ----
  logic [SE-1:0]    gs_known = '0;   // the index was written since the harness started (keys survive reset)
  logic [SE-1:0]    gs_valid, gs_bound, gs_rw;
  logic [8*SE-1:0]  gs_key;
  logic [16*SE-1:0] gs_pd, gs_stream;
  logic [64*SE-1:0] gs_base, gs_len, gs_addr;

  // ---- ghost queues: G (now), G1 (one cycle ago), G2 (two cycles ago) ----
  logic [NQ-1:0]    g_cfg, g1_cfg;
  logic [64*NQ-1:0] g_base, g1_base;
  logic [5*NQ-1:0]  g_log2, g1_log2;
  logic [32*NQ-1:0] g_head, g1_head, g_prod, g1_prod;
  // The ghost as stage C's item read it (taken when C loads its table data: the read was in the
  // cycle before, so the ghost of that cycle, g1), and the same one cycle later (the item that
  // leaves C in cycle x is in O from x + 1 on, when C may already hold the next item's).
  logic             c_load;
  logic [NQ-1:0]    sc_cfg, scd_cfg;
  logic [64*NQ-1:0] sc_base, scd_base;
  logic [5*NQ-1:0]  sc_log2, scd_log2;
  logic [32*NQ-1:0] sc_head, scd_head, sc_prod, scd_prod;
  logic [127:0]     sc_d, scd_d;
  logic             c2_pend;    // a consume was accepted last cycle: head + 1 now
  logic [7:0]       c2_q;

  logic db_take, db_ok, cons_take;
  logic [7:0] db_q, cons_q;
  assign db_take = db_valid_i && db_ready;
  assign db_ok = {16'b0, db_stream_i} < NS && {24'b0, db_qn_i} < NQN;
  assign db_q = 8'(db_stream_i * NQN + db_qn_i);
  assign cons_take = cons_valid_i && cons_ready;
  assign cons_q = 8'(cons_stream_i * NQN + cons_qn_i);

  // ---- the watched host word ----
  logic [63:0]  hw_addr;
  logic [127:0] hw_data;
  logic [NQ-1:0] fz;        // queue q has a posted, not completed MSN whose slot is at W
  logic         frozen;
  for (genvar q = 0; q < NQ; q++) begin : g_fz
    logic [63:0] diff;
    logic [31:0] size, cons, len, j0;
    assign diff = hw_addr - g_base[64*q +: 64];
    assign size = 32'd1 << g_log2[5*q +: 5];
    assign cons = g_head[32*q +: 32] - 32'd1;
    assign len = g_prod[32*q +: 32] - cons;
    assign j0 = (diff[35:4] - cons) & (size - 32'd1);   // first window offset at W's slot
    assign fz[q] = g_cfg[q] && diff[63:4] < {28'b0, size} && (len >= size || j0 < len);
  end
  assign frozen = |fz;

  always_ff @(posedge clk_i) begin
    if (init) hw_addr <= w_addr_i;
    if (init || !frozen) hw_data <= host_i;
  end

  // ---- AXI slave: the addresses of accepted ARs, in order ----
  logic [63:0] arq [4];
  logic [1:0]  arq_wp, arq_rp;
  logic [2:0]  arq_n;
  logic        ar_hs, r_end;
  assign ar_hs = arvalid && arready_i;
  assign r_end = rvalid_i && rlast_i;
  always_ff @(posedge clk_i) if (ar_hs) arq[arq_wp] <= araddr;

  // ---- ghost next state ----
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      hc_busy <= 1'b0;
      gs_valid <= '0;
      g_cfg <= '0;
      c2_pend <= 1'b0;
      arq_wp <= '0;
      arq_rp <= '0;
      arq_n <= '0;
    end else begin
      // commands
      if (cmd_ready && !cmd_done &&
          (cmd_op_i == RNIC_CMD_STAG_WRITE || cmd_op_i == RNIC_CMD_QUEUE_CONFIG ||
           cmd_op_i == RNIC_CMD_STREAM_ENABLE)) begin
        hc_busy <= 1'b1;
        hc_op <= cmd_op_i;
        hc_args <= cmd_args_i;
      end
      if (cmd_done) hc_busy <= 1'b0;
      if (ex_inv && a0 < SE) gs_valid[a0[0]] <= 1'b0;
      if (dn_sw) begin
        gs_valid[a0[0]] <= 1'b1;
        gs_known[a0[0]] <= 1'b1;
        gs_key[8*a0[0] +: 8] <= cmd_result[7:0];
        gs_rw[a0[0]] <= a1[8];
        gs_bound[a0[0]] <= a1[10];
        gs_pd[16*a0[0] +: 16] <= a2[15:0];
        gs_stream[16*a0[0] +: 16] <= a3[15:0];
        gs_base[64*a0[0] +: 64] <= {a5, a4};
        gs_len[64*a0[0] +: 64] <= {a7, a6};
        gs_addr[64*a0[0] +: 64] <= {a9, a8};
      end
      // queues: doorbell, consume (head write one cycle after the handshake), then the command
      if (db_take && db_ok) g_prod[32*db_q +: 32] <= db_prod_i;
      c2_pend <= cons_take && cons_kind_i == RNIC_CONS_CONSUME;
      c2_q <= cons_q;
      if (c2_pend) g_head[32*c2_q +: 32] <= g_head[32*c2_q +: 32] + 32'd1;
      if (dn_qc) begin
        g_cfg[a0q] <= 1'b1;
        g_base[64*a0q +: 64] <= {a3, a2};
        g_log2[5*a0q +: 5] <= a4[4:0];
        g_head[32*a0q +: 32] <= first;
        g_prod[32*a0q +: 32] <= first - 32'd1;
      end
      if (dn_en) for (int k = 0; k < NQN; k++) g_cfg[a0q + 8'(k)] <= 1'b0;
      // AXI slave
      if (ar_hs) arq_wp <= arq_wp + 2'd1;
      if (r_end) arq_rp <= arq_rp + 2'd1;
      arq_n <= arq_n + 3'(ar_hs) - 3'(r_end);
    end
    if (c_load) begin
      sc_cfg <= g1_cfg;
      sc_base <= g1_base;
      sc_log2 <= g1_log2;
      sc_head <= g1_head;
      sc_prod <= g1_prod;
      sc_d <= hw_data;
    end
    scd_cfg <= sc_cfg;   scd_base <= sc_base;   scd_log2 <= sc_log2;
    scd_head <= sc_head; scd_prod <= sc_prod;   scd_d <= sc_d;
    g1_cfg <= g_cfg;
    g1_base <= g_base;
    g1_log2 <= g_log2;
    g1_head <= g_head;
    g1_prod <= g_prod;
  end

  // ---- the item in O and its snapshot (the ghost as lookup read it) ----
  logic        lk_prev, rdy_prev, lk_new;
  logic [7:0]  it_q;
  logic        it_inrange;
  logic        sn_cfg, sn_cfg_q;
  logic [63:0] sn_base, sn_base_q;
  logic [4:0]  sn_log2, sn_log2_q;
  logic [31:0] sn_head, sn_head_q, sn_prod, sn_prod_q;
  logic [127:0] sn_d, sn_d_q;
  always_ff @(posedge clk_i) begin
    lk_prev <= lk_valid && rst_ni;
    rdy_prev <= lk_ready_i;
  end
  assign lk_new = lk_valid && (!lk_prev || rdy_prev);
  assign it_inrange = {16'b0, lk.seg.stream} < NS && lk.seg.qn < NQN;
  assign it_q = 8'(lk.seg.stream * NQN + lk.seg.qn);
  always_comb begin
    if (lk_new) begin
      sn_cfg = scd_cfg[it_q];
      sn_base = scd_base[64*it_q +: 64];
      sn_log2 = scd_log2[5*it_q +: 5];
      sn_head = scd_head[32*it_q +: 32];
      sn_prod = scd_prod[32*it_q +: 32];
      sn_d = scd_d;
    end else begin
      sn_cfg = sn_cfg_q;
      sn_base = sn_base_q;
      sn_log2 = sn_log2_q;
      sn_head = sn_head_q;
      sn_prod = sn_prod_q;
      sn_d = sn_d_q;
    end
  end
  always_ff @(posedge clk_i) begin
    sn_cfg_q <= sn_cfg;
    sn_base_q <= sn_base;
    sn_log2_q <= sn_log2;
    sn_head_q <= sn_head;
    sn_prod_q <= sn_prod;
    sn_d_q <= sn_d;
  end

  // The spec of the item's receive-queue status and buffer slot.
  logic [31:0] sp_ahead, sp_len, sp_size, sp_posted;
  logic [63:0] sp_slot_addr;
  rnic_rq_status_e sp_status;
  always_comb begin
    sp_size = 32'd1 << sn_log2;
    sp_ahead = lk.seg.msn - sn_head;
    sp_len = sn_prod - (sn_head - 32'd1);                 // prod - cons
    sp_posted = sp_len < sp_size ? sp_len : sp_size;
    sp_slot_addr = sn_base + {28'b0, (lk.seg.msn - 32'd1) & (sp_size - 32'd1), 4'b0};
    if (lk.seg.qn >= NQN || !sn_cfg) sp_status = RNIC_RQ_BAD_QN;
    else if (sp_ahead[31]) sp_status = RNIC_RQ_MSN_RANGE;
    else if (sp_ahead >= sp_posted) sp_status = RNIC_RQ_NO_BUF;
    else sp_status = RNIC_RQ_OK;
  end

  // The STag entry of a tagged item.
  logic       st_has;
  logic       st_i;
  assign st_i = lk.seg.stag[8];
  assign st_has = lk.seg.stag[31:8] < SE && gs_valid[st_i];

`ifdef FORMAL
  logic up;
  assign up = rst_ni && !init;
  always_comb if (init) assume (!rst_ni);

  // ---- environment ----
  logic [31:0] cp_head, cp_len;   // the consumed queue's head with a consume in flight, prod - cons
  assign cp_head = g_head[32*cons_q +: 32] + 32'(c2_pend && c2_q == cons_q);
  assign cp_len = g_prod[32*cons_q +: 32] - (cp_head - 32'd1);
  logic qrace;
  assign qrace = cmd_done && hc_busy && hc_op == RNIC_CMD_QUEUE_CONFIG &&
                 ((db_take && db_ok) || c2_pend);
  // regs holds a command's opcode and args while cmd_valid and not taken (rnic_regs a_cmd_hold).
  logic        cw_q;
  logic [7:0]  cw_op_q;
  logic [319:0] cw_args_q;
  always_ff @(posedge clk_i) begin
    cw_q <= rst_ni && cmd_valid_i && !cmd_ready;
    cw_op_q <= cmd_op_i;
    cw_args_q <= cmd_args_i;
  end
  always_comb begin
    if (cw_q) assume (cmd_valid_i && cmd_op_i == cw_op_q && cmd_args_i == cw_args_q);
    assume (hw_addr[3:0] == 4'd0);
    if (hc_busy) assume (cmd_op_i == hc_op && cmd_args_i == hc_args);
    if (cmd_valid_i && cmd_op_i == RNIC_CMD_QUEUE_CONFIG) assume (a2[3:0] == 4'd0);
    if (cons_valid_i) assume ({16'b0, cons_stream_i} < NS && {24'b0, cons_qn_i} < NQN);
    if (rvalid_i) assume (arq_n != 3'd0 && rlast_i);
    if (rvalid_i && rresp_i == 2'b00 && arq[arq_rp] == hw_addr) assume (rdata_i == hw_data);
    if (AS_DB_FWD && db_valid_i && db_ok)
      assume (db_prod_i - (g_head[32*db_q +: 32] - 32'd1) >=
              g_prod[32*db_q +: 32] - (g_head[32*db_q +: 32] - 32'd1));
    if (AS_NO_QRACE) assume (!qrace);
    if (AS_CONS_POSTED && cons_valid_i && cons_kind_i == RNIC_CONS_CONSUME)
      assume (g_cfg[cons_q] && cp_len != 32'd0 && !cp_len[31]);
  end

  // ---- AXI read channel (the master's side) ----
  logic        ar_wait;
  logic [63:0] ar_wait_addr;
  always_ff @(posedge clk_i) begin
    ar_wait <= rst_ni && arvalid && !arready_i;
    ar_wait_addr <= araddr;
  end
  always_comb if (up) begin
    if (arvalid) assert (arlen == 8'd0 && araddr[3:0] == 4'd0);
    if (ar_wait) assert (arvalid && araddr == ar_wait_addr);
    assert (arq_n <= MR);
  end

  // ---- commands (a) ----
  logic dn_past, rf_past;
  logic [31:0] rs_past;
  always_ff @(posedge clk_i) begin
    dn_past <= rst_ni && cmd_done;
    rf_past <= rst_ni && cmd_refused;
    rs_past <= cmd_result;
  end
  always_comb if (up && CK_A) begin
    assert (cmd_done_r == dn_past && cmd_refused_r == rf_past && (!dn_past || cmd_result_r == rs_past));
    if (ex_sw || ex_inv) assert (cmd_refused == !(a0 < SE));
    if (dn_sw) begin
      assert (!cmd_refused && cmd_result[31:8] == a0[23:0]);
      assert (!gs_known[a0[0]] || cmd_result[7:0] != gs_key[8*a0[0] +: 8]);
    end
  end
  always_comb if (up && CK_STAT) begin
    if (ex_qc && cmd_refused) assert (!(a0 < NS && a1 < NQN && a4 <= 32'd16));
    if (cmd_done && hc_busy && hc_op == RNIC_CMD_QUEUE_CONFIG)
      assert (cmd_refused == g_cfg[a0q]);
  end

  // ---- the items ----
  always_comb if (up && lk_valid && lk.kind == RNIC_ITEM_SEG) begin
    if (CK_A && lk.seg.is_tagged) begin
      if (st_has) begin
        assert (lk.stag_valid);
        assert (lk.stag_key == gs_key[8*st_i +: 8]);
        assert (lk.stag_pd == gs_pd[16*st_i +: 16]);
        assert (lk.stag_bound == gs_bound[st_i]);
        assert (lk.stag_stream == gs_stream[16*st_i +: 16]);
        assert (lk.stag_remote_write == gs_rw[st_i]);
        assert (lk.stag_base_to == gs_base[64*st_i +: 64]);
        assert (lk.stag_length == gs_len[64*st_i +: 64]);
        assert (lk.stag_addr == gs_addr[64*st_i +: 64]);
      end else begin
        assert (!lk.stag_valid);
      end
    end
    // (b), window: for every stream in range, whatever its state (the RTL decides rq_status
    // without the stream state; an out-of-range stream reads torn down, validate drops it).
    if (CK_WIN && !lk.seg.is_tagged && lk.rq_status == RNIC_RQ_OK &&
        ({16'b0, lk.seg.stream} < NS || lk.stream_state == 2'(RNIC_STREAM_NORMAL))) begin
      assert (it_inrange && sn_cfg);
      assert (sp_ahead < sp_len);                            // m in (cons, prod]
    end
    // (b), descriptor: what validate may PLACE into (level 1): RQ OK, a live stream (normal, or
    // pending: segments before its failing one are placed), no fault.
    if (CK_DESC && !lk.seg.is_tagged && lk.rq_status == RNIC_RQ_OK &&
        (lk.stream_state == 2'(RNIC_STREAM_NORMAL) || lk.stream_state == 2'(RNIC_STREAM_PENDING)) &&
        !lk.local_fault && sp_slot_addr == hw_addr)
      assert (lk.rq_addr == sn_d[63:0] && lk.rq_length == sn_d[95:64]);
    if (COVER == 1) assert (!(lk.seg.is_tagged && lk.stag_valid));
    if (COVER == 3) assert (!(!lk.seg.is_tagged && lk.rq_status == RNIC_RQ_OK));
    if (COVER == 2) assert (!(!lk.seg.is_tagged && lk.rq_status == RNIC_RQ_OK &&
                              lk.stream_state == 2'(RNIC_STREAM_NORMAL)));
    if (CK_STAT && !lk.seg.is_tagged) begin
      if ({16'b0, lk.seg.stream} < NS) assert (lk.rq_status == sp_status);
      else assert (lk.stream_state == 2'(RNIC_STREAM_TORN_DOWN));
    end
  end
`endif
endmodule

// Tops for scripts/formal.sh (`run NAME TOP ...`); StagEntries 2, RqPrefetch 2, MaxReads 2,
// DataWidth 128 throughout.
//   lookup_fv_a      (a), 1 stream x 1 QN
//   lookup_fv_bw     (b) window, 1 stream x 1 QN (no second queue, so no QUEUE_CONFIG race)
//   lookup_fv_b      (b) window + descriptor, 1 stream x 2 QNs, with AS_NO_QRACE
//   lookup_fv_race   (b) window, 1 stream x 2 QNs, a well-behaved driver and deliver (doorbells
//                    forward, consumes of posted buffers only), no AS_NO_QRACE: FAILS on the RTL
//                    of 2026-11-23 (a consume lost in QUEUE_CONFIG's echo cycle; README)
//   lookup_fv_cover_a / _w / _b  deliberately false: the shortest sequence that hands validate a
//                    valid STag / an RQ OK item / an RQ OK item of a normal stream
module lookup_fv_a (`LOOKUP_FV_PORTS);
  lookup_fv #(.NS(1), .NQN(1), .CK_A(1), .CK_WIN(0), .CK_DESC(0), .CK_STAT(0)) u (.*);
endmodule
module lookup_fv_bw (`LOOKUP_FV_PORTS);
  lookup_fv #(.NS(1), .NQN(1), .CK_A(0), .CK_WIN(1), .CK_DESC(0), .CK_STAT(0)) u (.*);
endmodule
module lookup_fv_b (`LOOKUP_FV_PORTS);
  lookup_fv #(.NS(1), .NQN(2), .CK_A(0), .CK_WIN(1), .CK_DESC(1), .CK_STAT(0)) u (.*);
endmodule
module lookup_fv_race (`LOOKUP_FV_PORTS);
  lookup_fv #(.NS(1), .NQN(2), .CK_A(0), .CK_WIN(1), .CK_DESC(0), .CK_STAT(0), .AS_DB_FWD(1),
              .AS_CONS_POSTED(1)) u (.*);
endmodule
module lookup_fv_cover_a (`LOOKUP_FV_PORTS);
  lookup_fv #(.NS(1), .NQN(1), .CK_A(0), .CK_WIN(0), .CK_DESC(0), .CK_STAT(0), .COVER(1)) u (.*);
endmodule
module lookup_fv_cover_w (`LOOKUP_FV_PORTS);
  lookup_fv #(.NS(1), .NQN(1), .CK_A(0), .CK_WIN(0), .CK_DESC(0), .CK_STAT(0), .COVER(3)) u (.*);
endmodule
module lookup_fv_cover_b (`LOOKUP_FV_PORTS);
  lookup_fv #(.NS(1), .NQN(1), .CK_A(0), .CK_WIN(0), .CK_DESC(0), .CK_STAT(0), .COVER(2)) u (.*);
endmodule
