// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
// Formal harness, level 2 (issue 11, write safety): rnic_rx_place at DataWidth 64.
// Every AXI write beat the place stage issues, with the address the AXI slave gives it (its burst's
// AWADDR + 8 * beat index), writes with its nonzero strobe lanes only bytes inside
// [addr, addr + pay_bytes) of the PLACE verdict it belongs to; DROP, ERROR, TOKEN verdicts and
// zero-length PLACEs write nothing, and neither does a STALE untagged PLACE (MSN below its queue's
// expected MSN when place commits it: a message deliver already completed, RFC 5041 4.3 / 7.1 #5).
// Ghosts (harness only):
//   p0  a copy of place's input register: the verdict dispatches when place is ready again, and
//       reads the expected MSN (exp_rd_data_i, free) in that cycle;
//   gq  in-order queue of the dispatched PLACE verdicts with payload that are not stale (addr,
//       pay_bytes); the write beats belong to its head, in order, one per bus word the byte span
//       covers (the spec of an in-order INCR writer, not the RTL's formula).
// FV_BREAK_STALE (define): the spec forgets the stale rule, so the proof must fail.
//   awq the AXI slave's queue of accepted AW bursts; each W beat takes its address from the burst it
//       belongs to. The slave accepts W only once it holds the burst's AW (legal AXI slave behaviour).
// All other inputs are free: packet beats (any count, any TLAST), verdict fields, handshakes,
// the expected MSN deliver returns, dlv_ready. The verdict assumptions are what level 1 proves about
// validate's output: hdr_bytes is 14 (tagged) or 18 (untagged).
// Sizes: gq and awq hold GD entries; a BMC run of depth <= GD cannot overflow them (one push per
// cycle at most), which the harness also asserts. place's queues are instantiated small
// (SqDepth = AqDepth = CqDepth = 2, WqDepth = 4, the minimums; the defaults 32/32/32/64 only add
// pointer bits and entries): small queues fill, back-pressure and wrap within a few cycles.
// FV_INDUCT (define; scripts/formal.sh's induct mode): strengthening invariants for k-induction,
// below, with the slave holding at most GA AW bursts ahead of W. NOT PROVEN: with AW = 16 the base
// case holds and the k = 1 induction step did not finish in 10 minutes (Yosys sat / MiniSat, ~430k
// variables; ~940k on the gate netlist) after two counterexamples to induction were closed by
// invariants (flush => engine idle; p0's address within AW bits).
module place_fv #(
  parameter int GD = 8,       // ghost queue entries (power of two)
  parameter int GA = 4,       // AW bursts the slave holds ahead of W (at most GD)
  parameter int AW = 64,      // verdict address bits modelled (64: all; fewer only to debug faster)
  parameter int SqDepth = 2,  // place's queue depths (rnic_rx_place parameters; minimums 2/2/2/4)
  parameter int AqDepth = 2,
  parameter int CqDepth = 2,
  parameter int WqDepth = 4
) (
  input logic          clk_i,
  input logic          rst_ni,
  input rnic_verdict_t vd_in,
  input logic          vd_valid_i,
  input logic [63:0]   beat_data_in,
  input logic [7:0]    beat_keep_i,
  input logic          beat_last_i,
  input logic          beat_valid_i,
  input logic          awready_i,
  input logic          wready_i,
  input logic [31:0]   exp_rd_data_i,
  input logic          dlv_ready_i
);
  localparam int Gw = $clog2(GD);

  // Model reduction: fields that only flow into the completion entry (dlv_o) or the write data,
  // never into an address, strobe or handshake, are tied to zero so Yosys removes their storage
  // (32-entry completion queue of ~330-bit entries, 64-entry W queue of 64-bit data). Free: action,
  // kind, T, MSN (the stale rule), addr, pay_bytes, hdr_bytes (with the assumption below).
  rnic_verdict_t vd_i;
  logic [63:0]   beat_data_i;
  always_comb begin
    vd_i = '0;
    vd_i.action = vd_in.action;
    vd_i.kind = vd_in.kind;
    vd_i.seg.is_tagged = vd_in.seg.is_tagged;
    vd_i.seg.msn = vd_in.seg.msn;
    vd_i.addr = 64'(vd_in.addr[AW-1:0]);
    vd_i.pay_bytes = vd_in.pay_bytes;
    vd_i.hdr_bytes = vd_in.hdr_bytes;
  end
  assign beat_data_i = '0;

  logic        vd_ready, beat_ready, awvalid, wvalid, wlast, dlv_valid, bytes_ev, awseglast;
  logic [15:0] exp_rd_stream;
  logic [7:0]  exp_rd_qn;
  logic [31:0] commit_now;
  logic [63:0] awaddr, wdata;
  logic [7:0]  awlen, wstrb;
  logic [15:0] bytes;
  rnic_dlv_t   dlv;

  rnic_rx_place #(
    .DataWidth(64), .SqDepth(SqDepth), .AqDepth(AqDepth), .CqDepth(CqDepth), .WqDepth(WqDepth)
  ) dut (
    .clk_i, .rst_ni, .vd_i, .vd_valid_i, .vd_ready_o(vd_ready),
    .beat_data_i, .beat_keep_i, .beat_last_i, .beat_valid_i, .beat_ready_o(beat_ready),
    .awaddr_o(awaddr), .awlen_o(awlen), .awvalid_o(awvalid), .awready_i,
    .wdata_o(wdata), .wstrb_o(wstrb), .wlast_o(wlast), .wvalid_o(wvalid), .wready_i,
    .awseglast_o(awseglast), .exp_rd_stream_o(exp_rd_stream), .exp_rd_qn_o(exp_rd_qn),
    .exp_rd_data_i, .commit_now_o(commit_now),
    .dlv_o(dlv), .dlv_valid_o(dlv_valid), .dlv_ready_i,
    .bytes_event_o(bytes_ev), .bytes_o(bytes)
  );

  // ---- ghost verdict queue ----
  logic [AW-1:0] gq_addr [GD];
  logic [15:0] gq_pay [GD];
  logic [Gw:0] gq_wr, gq_rd;
  logic [31:0] commit_g;     // commit_now of the previous cycle
  logic [13:0] g_idx;        // bus beats of the head verdict written so far
  logic        vd_hs, g_push, w_hs, aw_hs;
  logic [63:0] h_addr;
  logic [15:0] h_pay;
  logic [16:0] h_span;
  logic [13:0] h_beats;
  // p0 copy: place takes a verdict when ready; the one it holds dispatches in a cycle it is ready.
  rnic_verdict_t p0;
  logic          p0_valid, p0_take, p0_stale;
  logic [31:0]   p0_expd;
  assign vd_hs = vd_valid_i && vd_ready;
  assign p0_take = p0_valid && vd_ready;
  assign p0_expd = p0.seg.msn - exp_rd_data_i;            // MSN - expected (mod 2^32, RFC 4.3)
`ifdef FV_BREAK_STALE
  assign p0_stale = 1'b0;                                 // deliberately wrong spec: must fail
`else
  assign p0_stale = !p0.seg.is_tagged && p0_expd[31];
`endif
  assign g_push = p0_take && p0.action == RNIC_ACT_PLACE && p0.pay_bytes != 16'd0 && !p0_stale;
  always_ff @(posedge clk_i) if (vd_hs) p0 <= vd_i;
  assign w_hs = wvalid && wready_i;
  assign aw_hs = awvalid && awready_i;
  assign h_addr = 64'(gq_addr[gq_rd[Gw-1:0]]);
  assign h_pay = gq_pay[gq_rd[Gw-1:0]];
  // Bus beats the byte span [addr, addr + pay) touches: (addr % 8 + pay + 7) / 8.
  assign h_span = {14'b0, h_addr[2:0]} + {1'b0, h_pay} + 17'd7;
  assign h_beats = h_span[16:3];

  always_ff @(posedge clk_i) begin
    if (g_push) begin
      gq_addr[gq_wr[Gw-1:0]] <= p0.addr[AW-1:0];
      gq_pay[gq_wr[Gw-1:0]] <= p0.pay_bytes;
    end
  end

  // ---- AXI slave: AW queue and the current burst ----
  logic [63:0] awq_addr [GD];
  logic [7:0]  awq_len [GD];
  logic [Gw:0] awq_wr, awq_rd;
  logic        b_act;         // a burst is being written
  logic [63:0] b_addr;        // its next beat's address
  logic [7:0]  b_left;        // beats after the next one
  logic        awq_empty;
  logic [63:0] w_addr;        // address of the W beat of this cycle
  logic [7:0]  w_left;
  assign awq_empty = awq_wr == awq_rd;
  always_comb begin
    if (b_act) begin
      w_addr = b_addr;
      w_left = b_left;
    end else if (!awq_empty) begin
      w_addr = awq_addr[awq_rd[Gw-1:0]];
      w_left = awq_len[awq_rd[Gw-1:0]];
    end else begin
      w_addr = awaddr;      // the AW handshaking in this cycle
      w_left = awlen;
    end
  end

  always_ff @(posedge clk_i) begin
    if (aw_hs && !(w_hs && !b_act && awq_empty)) begin
      awq_addr[awq_wr[Gw-1:0]] <= awaddr;
      awq_len[awq_wr[Gw-1:0]] <= awlen;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      p0_valid <= 1'b0;
      commit_g <= '0;
      gq_wr <= '0;
      gq_rd <= '0;
      g_idx <= '0;
      awq_wr <= '0;
      awq_rd <= '0;
      b_act <= 1'b0;
      b_addr <= '0;
      b_left <= '0;
    end else begin
      if (vd_ready) p0_valid <= vd_valid_i;
      commit_g <= commit_now;
      gq_wr <= gq_wr + (Gw + 1)'(g_push);
      if (w_hs) begin
        // the ghost: one bus beat of the head verdict
        if (g_idx + 14'd1 == h_beats) begin
          g_idx <= '0;
          gq_rd <= gq_rd + 1'b1;
        end else begin
          g_idx <= g_idx + 14'd1;
        end
      end
      // the slave
      if (aw_hs && !(w_hs && !b_act && awq_empty)) awq_wr <= awq_wr + 1'b1;
      if (w_hs) begin
        if (!b_act && !awq_empty) awq_rd <= awq_rd + 1'b1;
        b_act <= w_left != 8'd0;
        b_addr <= w_addr + 64'd8;
        b_left <= w_left - 8'd1;
      end
    end
  end

`ifdef FORMAL
  logic init = 1'b1;
  always_ff @(posedge clk_i) init <= 1'b0;
  always_comb if (init) assume (!rst_ni);

  // Environment: what validate delivers (level 1), a slave that takes W after the burst's AW.
  always_comb begin
    if (vd_valid_i && vd_i.action != RNIC_ACT_TOKEN)
      assume (vd_i.hdr_bytes == (vd_i.seg.is_tagged ? 5'd14 : 5'd18));
    if (wready_i) assume (b_act || !awq_empty || aw_hs);
`ifdef FV_INDUCT
    // the slave holds at most GA bursts ahead of W (AWREADY low while they wait, legal AXI)
    if (awready_i) assume (awq_wr - awq_rd < (Gw + 1)'(GA));
`endif
  end

  // Beat g_idx of the head verdict must be the bus word h_addr / 8 + g_idx; lane i of it is then
  // byte 8 * g_idx + i - h_addr % 8 of the verdict's span, which must lie in [0, pay_bytes).
  // (One address comparison per beat instead of a 64-bit subtraction per lane: same property.)
  logic [17:0] lane_off [8];
  logic [60:0] g_word;
  logic        g_empty;
  assign g_empty = gq_wr == gq_rd;
  assign g_word = h_addr[63:3] + {47'b0, g_idx};
  always_comb begin
    for (int i = 0; i < 8; i++) lane_off[i] = {1'b0, g_idx, 3'(i)} - {15'b0, h_addr[2:0]};
  end

  always_comb begin
    if (rst_ni && !init) begin
      // the ghost queues never overflow within the proof depth
      assert (gq_wr - gq_rd <= (Gw + 1)'(GD));
      assert (awq_wr - awq_rd <= (Gw + 1)'(GD));
      // place counts exactly the verdicts the ghost expects to be written (commit_now_o)
      assert (commit_now == commit_g + 32'(g_push));
      if (w_hs) begin
        // every write beat belongs to an accepted PLACE verdict with payload ...
        assert (!g_empty);
        // ... at the bus word it names (its burst's AWADDR + 8 * beat index) ...
        assert (w_addr[2:0] == 3'd0 && w_addr[63:3] == g_word);
        // ... and each strobe lane it writes is a byte of that verdict's [addr, addr + pay)
        for (int i = 0; i < 8; i++)
          if (wstrb[i]) assert (!lane_off[i][17] && lane_off[i] < {2'b0, h_pay});
      end
      // AXI: a presented AW holds until accepted (A3.2.1)
      if (!init && awv_q && !awr_q) assert (awvalid && awaddr == awaddr_q && awlen == awlen_q);
    end
  end
`ifdef FV_INDUCT
  // ---- Strengthening invariants (state relations, for k-induction) ----
  // Each is an assertion, so the induction proves it too. They say: the harness's ghosts and place's
  // queues describe the same stream of bus words, the word stream W of the ghost queue gq (verdict
  // s, word w < beats(s)) read from the next W beat P_W = (gq_rd, g_idx):
  //   - W queue entry i is word P_W + i, with the spec's strobe and burst-start flag for it;
  //   - the data engine's next word P_E = P_W + wq_cnt is where its state (flush, head progress)
  //     says it is, and the sq entries with writes are the following gq verdicts, with the spec's
  //     beat count, first lane, last lane and block index;
  //   - the slave's bursts (the one in progress, then awq) are the spec's bursts (each verdict's
  //     words split at 2 KiB blocks) from P_W on, and end where place's AW generator stands (P_A);
  //     its current burst and aq's entries are the spec's too;
  //   - counters: the input register, the commit count, aw_ahead (= slave's AW queue), occupancies.
  // Probes: place's internal state, wired to these harness signals by the runner after flattening
  // (scripts/formal.sh: each `fv-probe: LOCAL PATH` line becomes a Yosys `rename` + `connect`).
  // They name the entries of the small queues, so the invariants need SqDepth = AqDepth = 2,
  // WqDepth = 4 (CqDepth is free: the completion queue holds no address or strobe).
  localparam int SqPw = $clog2(SqDepth);
  localparam int AqPw = $clog2(AqDepth);
  localparam int CqPw = $clog2(CqDepth);
  localparam int WqPw = $clog2(WqDepth);
  localparam int SqW = 38, AqW = 85, WqW = 64 + 8 + 2 + CqPw + 1;
  initial if (SqDepth != 2 || AqDepth != 2 || WqDepth != 4 || GA + AqDepth + 2 > GD)
    $fatal(1, "place_fv: invariants written for SqDepth = AqDepth = 2, WqDepth = 4, GD >= GA + 4");
  logic          x_p0_valid;               // fv-probe: x_p0_valid dut.p0_valid_q
  rnic_verdict_t x_p0;                     // fv-probe: x_p0 dut.p0_q
  logic [31:0]   x_commit;                 // fv-probe: x_commit dut.commit_q
  logic [SqPw:0] x_sq_wr, x_sq_rd;         // fv-probe: x_sq_wr dut.sq_wr_q
                                           // fv-probe: x_sq_rd dut.sq_rd_q
  logic [AqPw:0] x_aq_wr, x_aq_rd;         // fv-probe: x_aq_wr dut.aq_wr_q
                                           // fv-probe: x_aq_rd dut.aq_rd_q
  logic [CqPw:0] x_cq_wr, x_cq_rd;         // fv-probe: x_cq_wr dut.cq_wr_q
                                           // fv-probe: x_cq_rd dut.cq_rd_q
  logic [WqPw-1:0] x_wq_wr, x_wq_rd;       // fv-probe: x_wq_wr dut.wq_wr_q
                                           // fv-probe: x_wq_rd dut.wq_rd_q
  logic [WqPw:0] x_wq_cnt;                 // fv-probe: x_wq_cnt dut.wq_cnt_q
  logic signed [15:0] x_aw_ahead;          // fv-probe: x_aw_ahead dut.aw_ahead_q
  logic          x_aw_valid;               // fv-probe: x_aw_valid dut.aw_valid_q
  logic [63:0]   x_aw_addr;                // fv-probe: x_aw_addr dut.aw_addr_q
  logic [7:0]    x_aw_len;                 // fv-probe: x_aw_len dut.aw_len_q
  logic [15:0]   x_aw_rem;                 // fv-probe: x_aw_rem dut.aw_rem_q
  logic          x_in_act, x_ofirst;       // fv-probe: x_in_act dut.in_act_q
                                           // fv-probe: x_ofirst dut.ofirst_q
  logic [15:0]   x_orem, x_fl_rem;         // fv-probe: x_orem dut.orem_q
                                           // fv-probe: x_fl_rem dut.fl_rem_q
  logic [7:0]    x_blk, x_fl_blk;          // fv-probe: x_blk dut.blk_q
                                           // fv-probe: x_fl_blk dut.fl_blk_q
  logic [2:0]    x_fl_ll;                  // fv-probe: x_fl_ll dut.fl_ll_q
  logic [2*SqW-1:0] x_sq;                    // fv-probe: x_sq0 dut.sq_mem[0]
                                           // fv-probe: x_sq1 dut.sq_mem[1]
  logic [2*AqW-1:0] x_aq;                    // fv-probe: x_aq0 dut.aq_mem[0]
                                           // fv-probe: x_aq1 dut.aq_mem[1]
  logic [4*WqW-1:0] x_wq;                    // fv-probe: x_wq0 dut.wq0_mem[0]
                                           // fv-probe: x_wq1 dut.wq1_mem[0]
                                           // fv-probe: x_wq2 dut.wq0_mem[1]
                                           // fv-probe: x_wq3 dut.wq1_mem[1]
  logic [SqW-1:0] x_sq0, x_sq1;
  logic [AqW-1:0] x_aq0, x_aq1;
  logic [WqW-1:0] x_wq0, x_wq1, x_wq2, x_wq3;
  assign x_sq = {x_sq1, x_sq0};
  assign x_aq = {x_aq1, x_aq0};
  assign x_wq = {x_wq3, x_wq2, x_wq1, x_wq0};   // ring position r: bank r[0], word r[1]

  // The spec of a verdict's bus words (64-bit bus, 2 KiB blocks = 256 beats).
  function automatic logic [13:0] f_beats(input logic [63:0] a, input logic [15:0] pay);
    logic [16:0] span;
    span = {14'b0, a[2:0]} + {1'b0, pay} + 17'd7;
    f_beats = span[16:3];
  endfunction
  function automatic logic [7:0] f_strb(input logic [63:0] a, input logic [15:0] pay,
                                        input logic [13:0] w);
    logic [17:0] off;
    for (int i = 0; i < 8; i++) begin
      off = {1'b0, w, 3'(i)} - {15'b0, a[2:0]};
      f_strb[i] = !off[17] && off < {2'b0, pay};
    end
  endfunction
  function automatic logic [60:0] f_word(input logic [63:0] a, input logic [13:0] w);
    f_word = a[63:3] + {47'b0, w};
  endfunction
  function automatic logic [7:0] f_wblk(input logic [63:0] a, input logic [13:0] w);
    logic [60:0] wd;
    wd = a[63:3] + {47'b0, w};
    f_wblk = wd[7:0];
  endfunction
  // beats of the burst that starts (or continues) at word w: to the verdict's end or the block end
  function automatic logic [13:0] f_blen(input logic [63:0] a, input logic [15:0] pay,
                                         input logic [13:0] w);
    logic [13:0] left, room;
    logic [60:0] wd;
    wd = f_word(a, w);
    left = f_beats(a, pay) - w;
    room = 14'd256 - {6'b0, wd[7:0]};
    f_blen = left < room ? left : room;
  endfunction

  logic [Gw:0]   awq_cnt, gq_cnt;
  logic [AqPw:0] aq_cnt;
  logic [SqPw:0] sq_cnt;
  assign awq_cnt = awq_wr - awq_rd;
  assign gq_cnt = gq_wr - gq_rd;
  assign aq_cnt = x_aq_wr - x_aq_rd;
  assign sq_cnt = x_sq_wr - x_sq_rd;

  // Word positions (s, w): s a gq index (wrapping pointer), w a word of verdict s. nx advances by
  // n words within s, to (s + 1, 0) at its end.
  function automatic logic [Gw+14:0] f_adv(input logic [Gw:0] s, input logic [13:0] w,
                                           input logic [13:0] n, input logic [13:0] beats);
    f_adv = (w + n == beats) ? {s + 1'b1, 14'd0} : {s, w + n};
  endfunction
  // W queue positions: P_W + i, i = 0..WqDepth (the last is the engine's P_E when the queue is full)
  logic [Gw:0]  pw_s [WqDepth+1];
  logic [13:0]  pw_w [WqDepth+1];
  logic [Gw:0]  pe_s;
  logic [13:0]  pe_w;
  // slave bursts: Q_0 after the burst in progress, Q_k after awq entry k-1; P_A = Q_awq_cnt
  logic [Gw:0]  q_s [GA+1];
  logic [13:0]  q_w [GA+1];
  logic [Gw:0]  pa_s;
  logic [13:0]  pa_w;
  logic [63:0]  ga [GD];
  logic [15:0]  gp [GD];
  always_comb for (int j = 0; j < GD; j++) begin
    ga[j] = 64'(gq_addr[j]);
    gp[j] = gq_pay[j];
  end
  always_comb begin
    pw_s[0] = gq_rd;
    pw_w[0] = g_idx;
    for (int i = 0; i < WqDepth; i++)
      {pw_s[i+1], pw_w[i+1]} = f_adv(pw_s[i], pw_w[i], 14'd1,
                                     f_beats(ga[pw_s[i][Gw-1:0]], gp[pw_s[i][Gw-1:0]]));
    pe_s = pw_s[0];
    pe_w = pw_w[0];
    for (int i = 1; i <= WqDepth; i++)
      if (x_wq_cnt == (WqPw + 1)'(i)) begin
        pe_s = pw_s[i];
        pe_w = pw_w[i];
      end
    if (b_act)
      {q_s[0], q_w[0]} = f_adv(gq_rd, g_idx, {6'b0, b_left} + 14'd1, h_beats);
    else
      {q_s[0], q_w[0]} = {gq_rd, g_idx};
    for (int k = 0; k < GA; k++)
      {q_s[k+1], q_w[k+1]} = f_adv(q_s[k], q_w[k], {6'b0, awq_len[(awq_rd + k) % GD]} + 14'd1,
                                   f_beats(ga[q_s[k][Gw-1:0]], gp[q_s[k][Gw-1:0]]));
    pa_s = q_s[0];
    pa_w = q_w[0];
    for (int k = 1; k <= GA; k++)
      if (awq_cnt == (Gw + 1)'(k)) begin
        pa_s = q_s[k];
        pa_w = q_w[k];
      end
  end

  // sq entries: {place, dlv, lead[2:0], shm1[2:0], nout[15:0], off[2:0], ll[2:0], blk[7:0]}
  logic        sq_pl [2];
  logic [15:0] sq_nout [2];
  logic [2:0]  sq_off [2], sq_ll [2];
  logic [7:0]  sq_blk [2];
  logic [Gw:0] sq_s [2];      // gq index of sq entry k (head first) when it writes
  logic        h_orem0;
  logic [SqW-1:0] sq_e;       // the head's words are all produced (more input beats may follow)
  always_comb begin
    for (int k = 0; k < 2; k++) begin
      sq_e = x_sq[((x_sq_rd + k) % 2) * SqW +: SqW];
      sq_pl[k] = sq_e[37];
      sq_nout[k] = sq_e[29:14];
      sq_off[k] = sq_e[13:11];
      sq_ll[k] = sq_e[10:8];
      sq_blk[k] = sq_e[7:0];
    end
    h_orem0 = sq_cnt != 0 && sq_pl[0] && x_in_act && x_orem == 16'd0;
    // the first writing sq entry is verdict P_E's (P_E - 1's when the head has produced all its
    // words; P_E + 1's when P_E is a flush word of a verdict that already left sq)
    sq_s[0] = (x_fl_rem != 0) ? pe_s + 1'b1 : h_orem0 ? pe_s - 1'b1 : pe_s;
    sq_s[1] = sq_pl[0] ? sq_s[0] + 1'b1 : sq_s[0];
  end

  logic [Gw:0] sa_s;          // gq index of the AW generator's verdict (current or next)
  assign sa_s = gq_wr - (Gw + 1)'(aq_cnt) - (Gw + 1)'(x_aw_valid);

  always_comb begin
    if (!init) begin
      // input register and counters
      assert (p0_valid == x_p0_valid);
      if (p0_valid) begin
        assert (p0.action == x_p0.action && p0.kind == x_p0.kind &&
                p0.seg.is_tagged == x_p0.seg.is_tagged && p0.seg.msn == x_p0.seg.msn &&
                p0.addr == x_p0.addr && p0.pay_bytes == x_p0.pay_bytes &&
                p0.hdr_bytes == x_p0.hdr_bytes);
        if (p0.action != RNIC_ACT_TOKEN)
          assert (p0.hdr_bytes == (p0.seg.is_tagged ? 5'd14 : 5'd18));
        assert (p0.addr == 64'(p0.addr[AW-1:0]));  // the modelled address bits
      end
      assert (commit_g == x_commit);
      assert (sq_cnt <= (SqPw + 1)'(SqDepth));
      assert (aq_cnt <= (AqPw + 1)'(AqDepth));
      assert ((x_cq_wr - x_cq_rd) <= (CqPw + 1)'(CqDepth));
      assert (x_wq_cnt <= (WqPw + 1)'(WqDepth));
      assert (x_wq_wr - x_wq_rd == x_wq_cnt[WqPw-1:0]);
      assert (x_aw_ahead == 16'(awq_cnt));
      assert (awq_cnt <= (Gw + 1)'(GA));
      assert (sq_cnt != 0 || !x_in_act);
      // the ghost queue: verdicts with payload, the W position inside the head
      for (int j = 0; j < GD; j++)
        if ((Gw + 1)'(j) < gq_cnt) assert (gp[(gq_rd + j) % GD] != 16'd0);
      if (g_empty) assert (g_idx == 14'd0 && !b_act);
      else assert (g_idx < h_beats);
      // W queue entry i: word P_W + i of a verdict in gq, the spec's strobe and burst start
      for (int i = 0; i < WqDepth; i++)
        if ((WqPw + 1)'(i) < x_wq_cnt) begin
          assert (pw_s[i] - gq_rd < gq_cnt);
          assert (x_wq[((x_wq_rd + i) % WqDepth) * WqW + WqW - 65 -: 8] ==
                  f_strb(ga[pw_s[i][Gw-1:0]], gp[pw_s[i][Gw-1:0]], pw_w[i]));
          assert (x_wq[((x_wq_rd + i) % WqDepth) * WqW + CqPw + 1] ==
                  (pw_w[i] == 14'd0 || f_wblk(ga[pw_s[i][Gw-1:0]], pw_w[i]) == 8'd0));
        end
      // the engine: P_E inside gq or at its end
      assert (pe_s - gq_rd <= gq_cnt);
      if (pe_s == gq_wr) assert (pe_w == 14'd0);
      if (x_fl_rem != 16'd0) begin
        assert (pe_s != gq_wr && pe_w != 14'd0 && !x_in_act);
        assert (x_fl_rem == 16'(f_beats(ga[pe_s[Gw-1:0]], gp[pe_s[Gw-1:0]]) - pe_w));
        assert (x_fl_ll == 3'(ga[pe_s[Gw-1:0]][2:0] + gp[pe_s[Gw-1:0]][2:0] - 3'd1));
        assert (x_fl_blk == f_wblk(ga[pe_s[Gw-1:0]], pe_w));
      end else if (sq_cnt != 0 && sq_pl[0] && x_in_act && !h_orem0) begin
        assert (pe_s != gq_wr);
        assert (x_orem == 16'(f_beats(ga[pe_s[Gw-1:0]], gp[pe_s[Gw-1:0]]) - pe_w));
        assert (x_ofirst == (pe_w == 14'd0));
        assert (x_blk == f_wblk(ga[pe_s[Gw-1:0]], pe_w));
      end else begin
        assert (pe_w == 14'd0);
      end
      // sq: its writing entries are the gq verdicts from sq_s[0] on, all of them to gq_wr
      for (int k = 0; k < 2; k++)
        if ((SqPw + 1)'(k) < sq_cnt && sq_pl[k] && !(k == 0 && h_orem0)) begin
          assert (sq_s[k] - gq_rd < gq_cnt);
          assert (sq_nout[k] == 16'(f_beats(ga[sq_s[k][Gw-1:0]], gp[sq_s[k][Gw-1:0]])));
          assert (sq_off[k] == ga[sq_s[k][Gw-1:0]][2:0]);
          assert (sq_ll[k] == 3'(ga[sq_s[k][Gw-1:0]][2:0] + gp[sq_s[k][Gw-1:0]][2:0] - 3'd1));
          assert (sq_blk[k] == ga[sq_s[k][Gw-1:0]][10:3]);
        end
      assert ((sq_cnt == 0 ? sq_s[0] : sq_cnt == 1 ? sq_s[1] :
               (sq_pl[1] ? sq_s[1] + 1'b1 : sq_s[1])) == gq_wr);
      // the slave: burst in progress at P_W, then awq's bursts, each the spec's burst at its word
      if (!b_act && !g_empty) assert (g_idx == 14'd0 || f_wblk(h_addr, g_idx) == 8'd0);
      if (b_act) begin
        assert (b_addr == {f_word(h_addr, g_idx), 3'b0});
        assert ({6'b0, b_left} + 14'd1 == f_blen(h_addr, h_pay, g_idx));
        assert (g_idx != 14'd0 && f_wblk(h_addr, g_idx) != 8'd0);
      end
      for (int k = 0; k < GA; k++)
        if ((Gw + 1)'(k) < awq_cnt) begin
          assert (q_s[k] - gq_rd < gq_cnt);
          assert (awq_addr[(awq_rd + k) % GD] ==
                  {f_word(ga[q_s[k][Gw-1:0]], q_w[k]), 3'b0});
          assert ({6'b0, awq_len[(awq_rd + k) % GD]} + 14'd1 ==
                  f_blen(ga[q_s[k][Gw-1:0]], gp[q_s[k][Gw-1:0]], q_w[k]));
        end
      // ... up to place's AW generator: its current burst, the rest of its verdict, then aq
      assert (sa_s - gq_rd <= gq_cnt);
      assert (pa_s == sa_s);
      if (x_aw_valid) begin
        assert (sa_s != gq_wr);
        assert (x_aw_addr == {f_word(ga[sa_s[Gw-1:0]], pa_w), 3'b0});
        assert ({6'b0, x_aw_len} + 14'd1 == f_blen(ga[sa_s[Gw-1:0]], gp[sa_s[Gw-1:0]], pa_w));
        assert (16'(pa_w) + {8'b0, x_aw_len} + 16'd1 + x_aw_rem ==
                16'(f_beats(ga[sa_s[Gw-1:0]], gp[sa_s[Gw-1:0]])));
      end else begin
        assert (pa_w == 14'd0);
      end
      for (int k = 0; k < 2; k++)
        if ((AqPw + 1)'(k) < aq_cnt) begin
          assert (x_aq[((x_aq_rd + k) % 2) * AqW +: AqW] ==
                  {ga[(sa_s + x_aw_valid + k) % GD][63:3],
                   8'(f_blen(ga[(sa_s + x_aw_valid + k) % GD], gp[(sa_s + x_aw_valid + k) % GD],
                             14'd0) - 14'd1),
                   16'(f_beats(ga[(sa_s + x_aw_valid + k) % GD], gp[(sa_s + x_aw_valid + k) % GD]) -
                       f_blen(ga[(sa_s + x_aw_valid + k) % GD], gp[(sa_s + x_aw_valid + k) % GD],
                              14'd0))});
        end
      assert (gq_cnt <= (Gw + 1)'(GD));
    end
  end
`endif  // FV_INDUCT

  logic awv_q, awr_q;
  logic [63:0] awaddr_q;
  logic [7:0]  awlen_q;
  always_ff @(posedge clk_i) begin
    awv_q <= rst_ni && awvalid;
    awr_q <= awready_i;
    awaddr_q <= awaddr;
    awlen_q <= awlen;
  end
`endif
endmodule
