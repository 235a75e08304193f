// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
// Joins two AXI write masters (0: place, 1: deliver) onto one and counts AW and B handshakes so
// stages can wait for their writes to be acknowledged.
//
// AW and W are independent channels on every side (AXI A3.3.1):
// - AW: a round-robin arbiter (the only requester; with two, the one not taken last) takes one AW
//   per cycle from s0/s1 whenever the m_aw register is empty and the burst queue has room. The AW
//   taken is presented on m in the same cycle and held in the m_aw register unless the slave
//   accepts it at once. Taking an AW pushes {port, awlen} into the burst queue. s*_awready_o
//   depends on no W signal and not on m_awready_i.
// - W: beats pass from the port at the head of the burst queue (with register and queue empty:
//   from the port whose AW is taken in this cycle); m_wlast_o comes from the queued awlen and the
//   head is popped with its last beat, so W order = AW order. A burst's W is offered as soon as
//   its AW is taken, whether or not the slave has accepted that AW (then presented): a slave may
//   wait for WVALID before AWREADY. The head's {port, awlen} is kept in flip-flops, so s*_wready_o
//   is a few LUTs from registers (the ports' AWVALID, the head, the idle flags, m_wready_i).
// - AW runs ahead of W by up to MaxBursts bursts. W runs ahead of the slave's AW handshakes by at
//   most the one burst whose AW the m_aw register presents (W never comes before its AWVALID).
// - Toward s0/s1 the mux is a slave that takes a burst's AW before its W beats (allowed: WREADY
//   may wait for the AW); the ports must not make AWVALID wait for WREADY (place and deliver
//   don't).
// Throughput: one AW and one W beat per cycle; the beats of consecutive bursts, from either port,
// follow each other without a bubble when each burst's AW was taken at least one cycle before its
// first beat (AW runs ahead); on an idle mux a burst's AW and first W beat go in the same cycle.
// aw_count_o counts AWs taken from s0/s1 (the ports' handshakes): sampled the cycle after a port's
// AW handshake it includes that AW. Every counted AW gets exactly one B (B in AW order, one ID),
// so b_count_o reaching an earlier aw_count_o sample means every write counted then is
// acknowledged. b_segs0_o counts s0 segments acknowledged: each AW taken records whether it is an
// s0 segment's last burst (s0_awseglast_i) until its B (at most MaxWrites awaiting; no AW is taken
// beyond that); B in AW order, so the count covers every burst of those segments. s*_wlast_i are not needed: the queued awlen gives the last beat.
module rnic_axi_wr_mux #(
  parameter int DataWidth = 512,  // bits
  parameter int MaxBursts = 2,    // bursts taken whose W is not finished (power of two, >= 2)
  parameter int MaxWrites = 256   // AWs taken whose B has not come (power of two, >= 2)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic [63:0]            s0_awaddr_i,
  input  logic [7:0]             s0_awlen_i,
  input  logic                   s0_awseglast_i,  // with the AW: the last burst of a segment
  input  logic                   s0_awvalid_i,
  output logic                   s0_awready_o,
  input  logic [DataWidth-1:0]   s0_wdata_i,
  input  logic [DataWidth/8-1:0] s0_wstrb_i,
  input  logic                   s0_wlast_i,
  input  logic                   s0_wvalid_i,
  output logic                   s0_wready_o,
  input  logic [63:0]            s1_awaddr_i,
  input  logic [7:0]             s1_awlen_i,
  input  logic                   s1_awvalid_i,
  output logic                   s1_awready_o,
  input  logic [DataWidth-1:0]   s1_wdata_i,
  input  logic [DataWidth/8-1:0] s1_wstrb_i,
  input  logic                   s1_wlast_i,
  input  logic                   s1_wvalid_i,
  output logic                   s1_wready_o,
  output logic [63:0]            m_awaddr_o,
  output logic [7:0]             m_awlen_o,
  output logic                   m_awvalid_o,
  input  logic                   m_awready_i,
  output logic [DataWidth-1:0]   m_wdata_o,
  output logic [DataWidth/8-1:0] m_wstrb_o,
  output logic                   m_wlast_o,
  output logic                   m_wvalid_o,
  input  logic                   m_wready_i,
  input  logic [1:0]             m_bresp_i,
  input  logic                   m_bvalid_i,
  output logic                   m_bready_o,
  output logic [31:0]            aw_count_o,   // AWs taken from s0/s1 so far (wraps)
  output logic [31:0]            b_count_o,    // B handshakes so far (wraps)
  output logic                   bresp_err_o,  // pulse after a B response that is not OKAY
  output logic [31:0]            b_segs0_o     // s0 segments whose last burst's B has come (wraps)
);
  localparam int Pw = $clog2(MaxBursts);
  // Writes awaiting their B, in AW order (one ID): whether each is an s0 segment's last burst.
  localparam int Tw = $clog2(MaxWrites);
  logic [MaxWrites-1:0] t_bits;    // flip-flops (a 1-bit-wide LUT RAM does not map in Yosys 0.23)
  logic [Tw:0]   t_wr_q, t_rd_q;
  logic          t_full, t_head;
  logic [31:0]   b_segs0_q;

  initial begin
    if (DataWidth < 8 || (DataWidth % 8) != 0)
      $fatal(1, "rnic_axi_wr_mux: DataWidth must be a multiple of 8");
    if (MaxBursts < 2 || (MaxBursts & (MaxBursts - 1)) != 0)
      $fatal(1, "rnic_axi_wr_mux: MaxBursts must be a power of two >= 2");
    if (MaxWrites < 2 || (MaxWrites & (MaxWrites - 1)) != 0)
      $fatal(1, "rnic_axi_wr_mux: MaxWrites must be a power of two >= 2");
  end

  // ---- AW: arbiter and m_aw register --------------------------------------------------------
  logic        last_d, last_q;     // port taken last (round robin)
  logic        awv_d, awv_q;       // m_aw register holds an AW not yet accepted by the slave
  logic [63:0] awaddr_d, awaddr_q;
  logic [7:0]  awlen_d, awlen_q;
  logic        sel;                // port whose AW is taken when aw_take
  logic        aw_room, aw_take;
  logic [63:0] sel_awaddr;
  logic [7:0]  sel_awlen;
  logic        idle;               // AW register and burst queue empty: cut through

  // Burst queue: {port, awlen} of every burst taken whose last W beat has not passed.
  logic [8:0]  q_mem [MaxBursts];
  logic [Pw:0] q_wr_d, q_wr_q, q_rd_d, q_rd_q;
  logic        q_full, q_empty;
  logic [8:0]  q_head;

  always_comb begin
    if (s0_awvalid_i && s1_awvalid_i) begin
      sel = !last_q;
    end else begin
      sel = s1_awvalid_i;
    end
  end

  assign q_empty    = q_wr_q == q_rd_q;
  assign q_full     = q_wr_q == {~q_rd_q[Pw], q_rd_q[Pw-1:0]};
  // aw_room = !awv_q && !q_full && !t_full, from a register: its next value is computed from the
  // next state (the ports' AW ready then depends on no logic of this cycle; logic-depth budget).
  logic aw_room_q, aw_room_d, q_almost, t_almost, q_full_d, t_full_d;
  assign aw_room    = aw_room_q;
  assign q_almost   = (q_wr_q - q_rd_q) == (Pw + 1)'(MaxBursts - 1);
  assign t_almost   = (t_wr_q - t_rd_q) == (Tw + 1)'(MaxWrites - 1);
  assign aw_take    = aw_room && (s0_awvalid_i || s1_awvalid_i);
  assign sel_awaddr = sel ? s1_awaddr_i : s0_awaddr_i;
  assign sel_awlen  = sel ? s1_awlen_i : s0_awlen_i;

  assign s0_awready_o = aw_room && !sel;
  assign s1_awready_o = aw_room && sel;

  // The AW taken (register empty) is presented at once and registered unless the slave accepts it
  // in the same cycle. m_awvalid_o depends on no W signal, s*_awready_o not on m_awready_i.
  always_comb begin
    awv_d    = awv_q;
    awaddr_d = awaddr_q;
    awlen_d  = awlen_q;
    last_d   = last_q;
    if (m_awready_i) awv_d = 1'b0;
    if (aw_take) begin
      awv_d    = !m_awready_i;
      awaddr_d = sel_awaddr;
      awlen_d  = sel_awlen;
      last_d   = sel;
    end
  end

  assign m_awvalid_o = awv_q || aw_take;
  assign m_awaddr_o  = awv_q ? awaddr_q : sel_awaddr;
  assign m_awlen_o   = awv_q ? awlen_q : sel_awlen;

  // ---- W: beats of the queue head's port ----------------------------------------------------
  // When idle, the burst whose AW is taken (and presented) in this cycle is the head: its first
  // beat may go in the same cycle. Neither idle nor aw_take depends on m_awready_i.
  logic       w_act;               // there is a head burst
  logic       w_port;
  logic [7:0] w_len;
  logic [7:0] w_beat_d, w_beat_q;  // beat index within the head burst
  logic       w_hs, w_pop;

  // The head's {port, awlen} and "there is a head" are flip-flops (h_*_q: the ports' W queue pops
  // hang on s*_wready_o; the depth budget), loaded with the entry that is the head after this
  // cycle: the next entry after a pop, the entry taken in this cycle when it becomes the head.
  logic       h_v_q, h_v_d;
  logic [8:0] h_q, h_d, h_next;
  logic [Pw:0] q_rd_p1;
  assign q_head  = q_mem[q_rd_q[Pw-1:0]];
  assign q_rd_p1 = q_rd_q + (Pw + 1)'(1);
  assign h_next  = q_rd_p1 == q_wr_q ? {sel, sel_awlen} : q_mem[q_rd_p1[Pw-1:0]];
  assign idle   = !awv_q && !h_v_q;  // h_v_q == !q_empty (a_head)
  assign w_act  = h_v_q || (idle && aw_take);
  assign w_port = h_v_q ? h_q[8] : sel;
  assign w_len  = h_v_q ? h_q[7:0] : sel_awlen;

  assign m_wdata_o   = w_port ? s1_wdata_i : s0_wdata_i;
  assign m_wstrb_o   = w_port ? s1_wstrb_i : s0_wstrb_i;
  assign m_wlast_o   = w_beat_q == w_len;
  assign m_wvalid_o  = w_act && (w_port ? s1_wvalid_i : s0_wvalid_i);
  assign s0_wready_o = w_act && !w_port && m_wready_i;
  assign s1_wready_o = w_act && w_port && m_wready_i;
  assign w_hs        = m_wvalid_o && m_wready_i;
  assign w_pop       = w_hs && m_wlast_o;

  always_comb begin
    w_beat_d = w_beat_q;
    if (w_pop) begin
      w_beat_d = '0;
    end else if (w_hs) begin
      w_beat_d = w_beat_q + 8'd1;
    end
    q_wr_d = q_wr_q + {{Pw{1'b0}}, aw_take};
    q_rd_d = q_rd_q + {{Pw{1'b0}}, w_pop};
    // The head after this cycle: with a pop the entry after it (there when q_rd_q + 1 was written
    // before, or taken now); without one the head stays, or the entry taken now becomes it.
    if (!h_v_q) begin              // empty: the burst taken now, unless it passed all its W now
      h_v_d = aw_take && !w_pop;
      h_d = {sel, sel_awlen};
    end else if (w_pop) begin
      h_v_d = q_rd_p1 != q_wr_q || aw_take;
      h_d = h_next;
    end else begin
      h_v_d = 1'b1;
      h_d = h_q;
    end
    // full after this cycle: a take and a pop together leave it as it is; a take alone fills the
    // last entry; a pop alone never leaves it full (the same for the B tracker)
    q_full_d = aw_take ? (w_pop ? q_full : q_almost) : (!w_pop && q_full);
    t_full_d = aw_take ? (m_bvalid_i ? t_full : t_almost) : (!m_bvalid_i && t_full);
    aw_room_d = !awv_d && !q_full_d && !t_full_d;
  end

  always_ff @(posedge clk_i) begin
    if (aw_take) q_mem[q_wr_q[Pw-1:0]] <= {sel, sel_awlen};
    h_q <= h_d;
  end

  // ---- B: counters and the error pulse; every B response is accepted at once --------------
  // Writes awaiting their B (t_*, declared above): one bit each, in AW order.
  assign t_full = t_wr_q == {~t_rd_q[Tw], t_rd_q[Tw-1:0]};
  assign t_head = t_bits[t_rd_q[Tw-1:0]];
  always_ff @(posedge clk_i) begin
    if (aw_take) t_bits[t_wr_q[Tw-1:0]] <= !sel && s0_awseglast_i;
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      t_wr_q    <= '0;
      t_rd_q    <= '0;
      b_segs0_q <= '0;
    end else begin
      t_wr_q    <= t_wr_q + (Tw + 1)'(aw_take);
      t_rd_q    <= t_rd_q + (Tw + 1)'(m_bvalid_i);
      b_segs0_q <= b_segs0_q + 32'(m_bvalid_i && t_head);
    end
  end
  assign b_segs0_o = b_segs0_q;

  logic [31:0] aw_count_d, aw_count_q, b_count_d, b_count_q;
  logic        bresp_err_d, bresp_err_q;

  assign m_bready_o = 1'b1;

  always_comb begin
    aw_count_d  = aw_count_q + 32'(aw_take);
    b_count_d   = b_count_q + 32'(m_bvalid_i);
    bresp_err_d = m_bvalid_i && (m_bresp_i != 2'b00);
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      last_q      <= 1'b1;
      awv_q       <= 1'b0;
      aw_room_q   <= 1'b1;
      awaddr_q    <= '0;
      awlen_q     <= '0;
      q_wr_q      <= '0;
      q_rd_q      <= '0;
      h_v_q       <= 1'b0;
      w_beat_q    <= '0;
      aw_count_q  <= '0;
      b_count_q   <= '0;
      bresp_err_q <= 1'b0;
    end else begin
      last_q      <= last_d;
      awv_q       <= awv_d;
      aw_room_q   <= aw_room_d;
      awaddr_q    <= awaddr_d;
      awlen_q     <= awlen_d;
      q_wr_q      <= q_wr_d;
      q_rd_q      <= q_rd_d;
      h_v_q       <= h_v_d;
      w_beat_q    <= w_beat_d;
      aw_count_q  <= aw_count_d;
      b_count_q   <= b_count_d;
      bresp_err_q <= bresp_err_d;
    end
  end

  assign aw_count_o  = aw_count_q;
  assign b_count_o   = b_count_q;
  assign bresp_err_o = bresp_err_q;

  // The queued awlen marks the last beat; the ports' wlast is redundant.
  logic unused_wlast;
  assign unused_wlast = s0_wlast_i ^ s1_wlast_i;

  // ---- Assertions (rtl/rnic_assert.svh): the AXI4 write rules toward host memory ----------------
  // A3.3.1: AW and W hold address, length, data, strobes and WLAST while VALID waits for READY.
  `RNIC_ASSERT_HOLD(a_aw_hold, clk_i, rst_ni, m_awvalid_o, m_awready_i, {m_awaddr_o, m_awlen_o})
  `RNIC_ASSERT_HOLD(a_w_hold, clk_i, rst_ni, m_wvalid_o, m_wready_i, {m_wdata_o, m_wstrb_o, m_wlast_o})
  // A3.4.1: no burst crosses a 4 KiB boundary.
  `RNIC_ASSERT(a_aw_4k, clk_i, rst_ni, !m_awvalid_o ||
      ({8'd0, m_awaddr_o[11:0]} + ((20'(m_awlen_o) + 20'd1) << $clog2(DataWidth / 8)) <= 20'd4096))
  // One B per burst (the slave's side of A3.4.4, which the counters rely on): a B only for a burst
  // taken and not yet answered.
  `RNIC_ASSERT(a_aw_room, clk_i, rst_ni, aw_room_q == (!awv_q && !q_full && !t_full))
  `RNIC_ASSERT(a_head, clk_i, rst_ni, h_v_q == !q_empty && (q_empty || h_q == q_head))
  `RNIC_ASSERT(a_b_per_burst, clk_i, rst_ni, !m_bvalid_i || (t_wr_q != t_rd_q))
  // A3.4.1 WLAST: an independent count. Every W beat belongs to the oldest burst whose W is not done;
  // the beat that ends it (awlen + 1 beats) carries WLAST and no other does. Burst lengths are taken
  // from the slave-side AW handshakes; W may run one burst ahead of them, its AW then presented.
`ifndef SYNTHESIS
  logic [7:0] chk_len [256];
  logic [7:0] chk_aw_q, chk_w_q, chk_beat_q;
  logic [7:0] chk_len_now;
  assign chk_len_now = (chk_w_q == chk_aw_q) ? m_awlen_o : chk_len[chk_w_q];
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_aw_q   <= '0;
      chk_w_q    <= '0;
      chk_beat_q <= '0;
    end else begin
      if (m_awvalid_o && m_awready_i) begin
        chk_len[chk_aw_q] <= m_awlen_o;
        chk_aw_q <= chk_aw_q + 8'd1;
      end
      if (m_wvalid_o && m_wready_i) begin
        a_w_has_aw: assert ((chk_w_q != chk_aw_q) || m_awvalid_o)
          else $error("rnic assertion failed: %m (a W beat with no AW taken or presented)");
        a_wlast: assert (m_wlast_o == (chk_beat_q == chk_len_now))
          else $error("rnic assertion failed: %m (WLAST not on the burst's last beat)");
        chk_beat_q <= m_wlast_o ? 8'd0 : chk_beat_q + 8'd1;
        if (m_wlast_o) chk_w_q <= chk_w_q + 8'd1;
      end
    end
  end
`endif
endmodule
