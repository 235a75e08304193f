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
// cycle at most), which the harness also asserts.
module place_fv #(
  parameter int GD = 8  // ghost queue entries (power of two)
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
    vd_i.addr = vd_in.addr;
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

  rnic_rx_place #(.DataWidth(64)) dut (
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
  logic [63:0] gq_addr [GD];
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
  assign h_addr = gq_addr[gq_rd[Gw-1:0]];
  assign h_pay = gq_pay[gq_rd[Gw-1:0]];
  // Bus beats the byte span [addr, addr + pay) touches: (addr % 8 + pay + 7) / 8.
  assign h_span = {14'b0, h_addr[2:0]} + {1'b0, h_pay} + 17'd7;
  assign h_beats = h_span[16:3];

  always_ff @(posedge clk_i) begin
    if (g_push) begin
      gq_addr[gq_wr[Gw-1:0]] <= p0.addr;
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
