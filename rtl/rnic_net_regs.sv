// SPDX-License-Identifier: Apache-2.0
`include "rnic_hw.svh"
`include "rnic_assert.svh"
// The network side's register window (issue 14, docs/network.md): hw.def's NET_* rows at
// 0x0400..0x04FF, reached through rnic_regs' ext_* port (offsets in the window, [7:0]).
//
// The port (rnic_regs drives it):
// - write: reg_wr_i for one cycle with reg_waddr_i, reg_wdata_i, reg_wstrb_i. reg_whit_o is a function
//   of reg_waddr_i alone: 1 for every word of a NET_* row (RO ones too: a write to them is ignored);
//   rnic_regs answers SLVERR when it is 0. RW registers take reg_wstrb_i per byte; NET_ASSOC_CMD and
//   NET_STREAM_LIVE take reg_wdata_i whole.
// - read: reg_rd_i for one cycle with reg_raddr_i; reg_rdata_o / reg_rhit_o are registers loaded in
//   that cycle (the state of that cycle) and held until the next reg_rd_i. Unused bits and WO rows
//   read 0; an offset that is no register reads 0 with hit 0.
//
// Association table (rnic_net_rx's wr_* port): NET_ASSOC_ARG0..7 are staging words; wr_* show them
// unpacked at all times. A NET_ASSOC_CMD write in cycle C (not busy, index [3:0] < Entries; else
// ignored) pulses wr_o in cycle W = C + 1 with wr_valid_o = bit 8. Busy (NET_ASSOC_STATUS bit 0,
// assoc_busy_o) reads 1 from W on:
// - a write (bit 8 = 1) is done after W (busy in W only);
// - a clear (bit 8 = 0) is fenced: the snapshot S counts every pkt_in_i pulse up to and including W;
//   "left" counts pkt_drop_i (0..3) + pkt_done_i per cycle. From cycle W + 2 on, in each cycle u the
//   left count of the pulses up to u - 2 is compared with S (32-bit counters, the difference's sign:
//   right across the wrap while fewer than 2^31 packets are in flight); once it reaches S, busy reads
//   0 from u + 1. So with nothing in flight busy lasts three cycles (W .. W + 2).
//   The transmit gather is fenced the same way (issue 35): gather packets that entered the gather
//   (g_in_i) up to W must have left it (g_out_i, every read of their descriptors finished).
// A NET_ASSOC_CMD while busy is ignored. Every packet that entered up to W has left before busy
// clears, and rnic_net_assoc's lookups (the gather's too) after W see the cleared entry.
//
// NET_TX_FAULT (issue 35): bit i is set by a g_drop_i pulse whose g_assoc_i is i (< Entries); a
// write clears the bits written 1 (in its bytes strobed); a set and a clear of one bit in one cycle
// leave it set. NET_TX_FAULT_REASON takes {g_assoc_i, g_reason_i} on a drop while NET_TX_FAULT is 0.
//
// NET_STREAM_LIVE (cycle C): live_wr_o in C + 1 with live_index_o = [15:0], live_value_o = bit 31;
// an index >= NumStreams is ignored (no pulse).
//
// Rings: CTRL reads {busy_i, enable}. BASE_LO/HI and SIZE are written only while CTRL reads 0 (in the
// write's cycle); a SIZE value (after the strobes; only its fields [4:0] and [12:8] count) outside
// log2 slots 0..15 / log2 slot bytes 12..16 is ignored whole. BASE_LO bits 11:0 read and drive 0. A
// CTRL write with byte 0 strobed sets enable to bit 0; bit 0 = 1 also sets NET_RX_CONS (rx) /
// NET_TX_PROD (tx) to 0 (the ring unit restarts its own index when enable rises). Reset: base 0,
// log2 slots 0, log2 slot bytes 12, disabled, index 0.
//
// Counters NET_CNT0..14: each event input is registered once, then counted (32 bits, wrapping); a
// read in cycle t returns the events of the cycles up to t - 2.
//
// CountInit: the reset value of every free-running counter (the ten NET_CNT words and the fence's two
// packet counts). 0 on the card; tests start them near 2^32 to see every wrap in a few cycles.
module rnic_net_regs #(
  parameter int          Entries    = 16,   // association table entries (2..16)
  parameter int          NumStreams = 256,  // DDP streams with a live bit (1..65536)
  parameter logic [31:0] CountInit  = '0    // reset value of the free-running counters (tests only)
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  // The register port (rnic_regs ext_*)
  input  logic                       reg_wr_i,
  input  logic [7:0]                 reg_waddr_i,
  input  logic [31:0]                reg_wdata_i,
  input  logic [3:0]                 reg_wstrb_i,
  output logic                       reg_whit_o,
  input  logic                       reg_rd_i,
  input  logic [7:0]                 reg_raddr_i,
  output logic [31:0]                reg_rdata_o,
  output logic                       reg_rhit_o,
  // The association table (rnic_net_rx wr_*)
  output logic                       wr_o,
  output logic [$clog2(Entries)-1:0] wr_index_o,
  output logic                       wr_valid_o,
  output logic [31:0]                wr_my_ip_o,
  output logic [31:0]                wr_their_ip_o,
  output logic [15:0]                wr_my_udp_port_o,
  output logic [15:0]                wr_their_udp_port_o,
  output logic [15:0]                wr_my_sctp_port_o,
  output logic [15:0]                wr_their_sctp_port_o,
  output logic [31:0]                wr_my_vtag_o,
  output logic [15:0]                wr_stream_base_o,
  output logic [15:0]                wr_stream_count_o,
  output logic [15:0]                wr_socket_o,
  // Live bits (rnic_net_rx live_*)
  output logic                       live_wr_o,
  output logic [15:0]                live_index_o,
  output logic                       live_value_o,
  // The clear's fence: packets into and out of the front end
  input  logic                       pkt_in_i,    // a packet entered
  input  logic [1:0]                 pkt_drop_i,  // packets dropped this cycle (0..3)
  input  logic                       pkt_done_i,  // a packet's summary was consumed by the ring writer
  output logic                       assoc_busy_o,
  // Receive packet ring
  output logic                       rx_enable_o,
  output logic [63:0]                rx_base_o,
  output logic [4:0]                 rx_log2_slots_o,
  output logic [4:0]                 rx_slot_log2_o,
  output logic [31:0]                rx_cons_o,
  input  logic [31:0]                rx_prod_i,
  input  logic                       rx_busy_i,
  // Transmit packet ring
  output logic                       tx_enable_o,
  output logic [63:0]                tx_base_o,
  output logic [4:0]                 tx_log2_slots_o,
  output logic [4:0]                 tx_slot_log2_o,
  output logic [31:0]                tx_prod_o,
  input  logic [31:0]                tx_cons_i,
  input  logic                       tx_busy_i,
  // Counter events (NET_CNT0..9), one-cycle pulses
  input  logic                       drop_crc_i,
  input  logic                       drop_size_i,
  input  logic                       drop_frame_i,
  input  logic                       rx_drop_full_i,
  input  logic                       rx_drop_size_i,
  input  logic                       rx_bresp_err_i,
  input  logic                       tx_sent_i,
  input  logic                       tx_bad_i,
  input  logic                       tx_rresp_err_i,
  // The transmit gather (rnic_net_tx g_*): its drops, sent packets, and packets in and out (the fence)
  input  logic                       g_drop_i,
  input  logic [3:0]                 g_reason_i,
  input  logic [7:0]                 g_assoc_i,
  input  logic                       g_sent_i,
  input  logic                       g_in_i,
  input  logic                       g_out_i,
  output logic [31:0]                wr_their_vtag_o
);
  localparam int IdxW    = $clog2(Entries);
  localparam int NumArgs = RNIC_NET_ASSOC_ARGS;  // NET_ASSOC_ARG0..7
  localparam int NumCnt  = RNIC_NET_COUNTERS;    // NET_CNT0..14
  // The bits each staging word keeps (ARG6: [15:0] the socket; the rest reads 0).
  localparam logic [32*NumArgs-1:0] ARG_MASK = {32'hFFFF_FFFF, 32'h0000_FFFF, {(NumArgs - 2){32'hFFFF_FFFF}}};
  if (NumArgs != 8) begin : g_args
    $fatal(1, "rnic_net_regs: ARG_MASK is written for NET_ASSOC_ARG0..7");
  end

  initial begin
    if (Entries < 2 || Entries > 16) $fatal(1, "rnic_net_regs: Entries must be 2..16 (4-bit index)");
    if (NumStreams < 1 || NumStreams > 65536) $fatal(1, "rnic_net_regs: NumStreams must be 1..65536");
  end

  // ---- word offsets in the window (hw.def rows; [1:0] of an offset are zero) -----------------------
  localparam logic [5:0] W_ARG0   = 6'(RNIC_REG_NET_ASSOC_ARG0 >> 2);
  localparam logic [5:0] W_CMD    = 6'(RNIC_REG_NET_ASSOC_CMD >> 2);
  localparam logic [5:0] W_STATUS = 6'(RNIC_REG_NET_ASSOC_STATUS >> 2);
  localparam logic [5:0] W_LIVE   = 6'(RNIC_REG_NET_STREAM_LIVE >> 2);
  localparam logic [5:0] W_RX_BLO = 6'(RNIC_REG_NET_RX_BASE_LO >> 2);
  localparam logic [5:0] W_RX_BHI = 6'(RNIC_REG_NET_RX_BASE_HI >> 2);
  localparam logic [5:0] W_RX_SZ  = 6'(RNIC_REG_NET_RX_SIZE >> 2);
  localparam logic [5:0] W_RX_CTL = 6'(RNIC_REG_NET_RX_CTRL >> 2);
  localparam logic [5:0] W_RX_PRD = 6'(RNIC_REG_NET_RX_PROD >> 2);
  localparam logic [5:0] W_RX_CON = 6'(RNIC_REG_NET_RX_CONS >> 2);
  localparam logic [5:0] W_TX_BLO = 6'(RNIC_REG_NET_TX_BASE_LO >> 2);
  localparam logic [5:0] W_TX_BHI = 6'(RNIC_REG_NET_TX_BASE_HI >> 2);
  localparam logic [5:0] W_TX_SZ  = 6'(RNIC_REG_NET_TX_SIZE >> 2);
  localparam logic [5:0] W_TX_CTL = 6'(RNIC_REG_NET_TX_CTRL >> 2);
  localparam logic [5:0] W_TX_PRD = 6'(RNIC_REG_NET_TX_PROD >> 2);
  localparam logic [5:0] W_TX_CON = 6'(RNIC_REG_NET_TX_CONS >> 2);
  localparam logic [5:0] W_CNT0   = 6'(RNIC_REG_NET_CNT0 >> 2);
  localparam logic [5:0] W_FAULT  = 6'(RNIC_REG_NET_TX_FAULT >> 2);
  localparam logic [5:0] W_FREASON = 6'(RNIC_REG_NET_TX_FAULT_REASON >> 2);

  logic [5:0] wa, ra;  // the word offsets of the write and of the read
  assign wa = reg_waddr_i[7:2];
  assign ra = reg_raddr_i[7:2];

  // Word a is NET_ASSOC_ARG<k> / NET_CNT<k>.
  function automatic logic is_arg(logic [5:0] a, logic [5:0] k);
    is_arg = a == W_ARG0 + k;
  endfunction
  function automatic logic is_cnt(logic [5:0] a, logic [5:0] k);
    is_cnt = a == W_CNT0 + k;
  endfunction

  // Word a is a register of the window.
  function automatic logic hit(logic [5:0] a);
    logic h;
    h = a == W_CMD || a == W_STATUS || a == W_LIVE ||
        a == W_RX_BLO || a == W_RX_BHI || a == W_RX_SZ || a == W_RX_CTL || a == W_RX_PRD || a == W_RX_CON ||
        a == W_TX_BLO || a == W_TX_BHI || a == W_TX_SZ || a == W_TX_CTL || a == W_TX_PRD || a == W_TX_CON ||
        a == W_FAULT || a == W_FREASON;
    for (int k = 0; k < NumArgs; k++) h = h || is_arg(a, 6'(k));
    for (int k = 0; k < NumCnt; k++) h = h || is_cnt(a, 6'(k));
    hit = h;
  endfunction

  function automatic logic [31:0] strb_mask(logic [3:0] s);
    strb_mask = {{8{s[3]}}, {8{s[2]}}, {8{s[1]}}, {8{s[0]}}};
  endfunction
  function automatic logic [31:0] merge(logic [31:0] old, logic [31:0] d, logic [3:0] s);
    merge = (old & ~strb_mask(s)) | (d & strb_mask(s));
  endfunction
  // The SIZE and CTRL words of a ring from their fields (hw.def: NET_RX_* and NET_TX_* have one layout).
  function automatic logic [31:0] size_word(logic [4:0] slots, logic [4:0] slot);
    size_word = '0;
    size_word[RNIC_NET_RX_SIZE_LOG2_SLOTS_LSB +: RNIC_NET_RX_SIZE_LOG2_SLOTS_BITS] = slots;
    size_word[RNIC_NET_RX_SIZE_LOG2_SLOT_BYTES_LSB +: RNIC_NET_RX_SIZE_LOG2_SLOT_BYTES_BITS] = slot;
  endfunction
  function automatic logic [31:0] ctrl_word(logic en, logic busy);
    ctrl_word = '0;
    ctrl_word[RNIC_NET_RX_CTRL_ENABLE_LSB] = en;
    ctrl_word[RNIC_NET_RX_CTRL_BUSY_LSB]   = busy;
  endfunction
  if (RNIC_NET_TX_SIZE_LOG2_SLOTS_LSB != RNIC_NET_RX_SIZE_LOG2_SLOTS_LSB ||
      RNIC_NET_TX_SIZE_LOG2_SLOT_BYTES_LSB != RNIC_NET_RX_SIZE_LOG2_SLOT_BYTES_LSB ||
      RNIC_NET_TX_CTRL_ENABLE_LSB != RNIC_NET_RX_CTRL_ENABLE_LSB ||
      RNIC_NET_TX_CTRL_BUSY_LSB != RNIC_NET_RX_CTRL_BUSY_LSB) begin : g_layout
    $fatal(1, "rnic_net_regs: NET_TX_SIZE / NET_TX_CTRL must have the layout of NET_RX_SIZE / NET_RX_CTRL");
  end
  // A SIZE value within the ring's limits (hw.def NET_LOG2_SLOTS_MAX, NET_LOG2_SLOT_MIN / _MAX).
  function automatic logic size_ok(logic [4:0] slots, logic [4:0] slot);
    size_ok = slots <= 5'(RNIC_NET_LOG2_SLOTS_MAX) && slot >= 5'(RNIC_NET_LOG2_SLOT_MIN) &&
              slot <= 5'(RNIC_NET_LOG2_SLOT_MAX);
  endfunction

  assign reg_whit_o = hit(wa);

  // A write to offset o in this cycle.
  function automatic logic wr_at(logic [5:0] w);
    wr_at = reg_wr_i && wa == w;
  endfunction

  // ---- association staging words and the command ---------------------------------------------------
  logic [32*NumArgs-1:0] args_q;
  logic                  wr_q, wr_valid_q;
  logic [IdxW-1:0]       wr_idx_q;
  logic                  busy_q;          // NET_ASSOC_STATUS bit 0
  logic                  clr1_q, clr2_q;  // a clear in its wr_o cycle W / in W + 1
  logic                  chk_q;           // the fence compares (from W + 2 on)
  logic [31:0]           snap_q;          // pkt_in_i pulses up to W
  logic                  in_ev_q;         // pkt_in_i, registered
  logic [2:0]            left_ev_q;       // pkt_drop_i + pkt_done_i, registered
  logic [31:0]           entered_q, left_q;
  logic [31:0]           entered_d, left_diff;
  logic                  cmd_go;
  // the gather's part of the fence: gather packets in (g_in_i) and out (g_out_i), as above
  logic                  gin_ev_q, gout_ev_q;
  logic [31:0]           gin_q, gout_q, gsnap_q, gin_d, gleft_diff;

  assign cmd_go    = wr_at(W_CMD) && !busy_q &&
                     32'(reg_wdata_i[RNIC_NET_ASSOC_CMD_INDEX_LSB +: RNIC_NET_ASSOC_CMD_INDEX_BITS]) < Entries;
  assign entered_d = entered_q + 32'(in_ev_q);
  assign left_diff = left_q - snap_q;  // >= 0 (as a signed number): every packet up to W has left
  assign gin_d      = gin_q + 32'(gin_ev_q);
  assign gleft_diff = gout_q - gsnap_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      args_q     <= '0;
      wr_q       <= 1'b0;
      wr_valid_q <= 1'b0;
      wr_idx_q   <= '0;
      busy_q     <= 1'b0;
      clr1_q     <= 1'b0;
      clr2_q     <= 1'b0;
      chk_q      <= 1'b0;
      snap_q     <= '0;
      in_ev_q    <= 1'b0;
      left_ev_q  <= '0;
      entered_q  <= CountInit;
      left_q     <= CountInit;
      gin_ev_q   <= 1'b0;
      gout_ev_q  <= 1'b0;
      gin_q      <= CountInit;
      gout_q     <= CountInit;
      gsnap_q    <= '0;
    end else begin
      gin_ev_q  <= g_in_i;
      gout_ev_q <= g_out_i;
      gin_q     <= gin_d;
      gout_q    <= gout_q + 32'(gout_ev_q);
      for (int k = 0; k < NumArgs; k++)
        if (reg_wr_i && is_arg(wa, 6'(k)))
          args_q[32*k +: 32] <= merge(args_q[32*k +: 32], reg_wdata_i, reg_wstrb_i) & ARG_MASK[32*k +: 32];
      in_ev_q   <= pkt_in_i;
      left_ev_q <= 3'(pkt_drop_i) + 3'(pkt_done_i);
      entered_q <= entered_d;
      left_q    <= left_q + 32'(left_ev_q);
      wr_q      <= cmd_go;
      clr1_q    <= cmd_go && !reg_wdata_i[RNIC_NET_ASSOC_CMD_WRITE_LSB];
      clr2_q    <= clr1_q;
      if (cmd_go) begin
        wr_valid_q <= reg_wdata_i[RNIC_NET_ASSOC_CMD_WRITE_LSB];
        wr_idx_q   <= IdxW'(reg_wdata_i[RNIC_NET_ASSOC_CMD_INDEX_LSB +: RNIC_NET_ASSOC_CMD_INDEX_BITS]);
        busy_q     <= 1'b1;
      end
      if (wr_q && wr_valid_q) busy_q <= 1'b0;  // a write: done in its wr_o cycle
      if (clr2_q) begin
        snap_q  <= entered_d;                   // the pulses up to W
        gsnap_q <= gin_d;
        chk_q   <= 1'b1;
      end
      if (chk_q && !left_diff[31] && !gleft_diff[31]) begin
        chk_q  <= 1'b0;
        busy_q <= 1'b0;
      end
    end
  end

  assign wr_o                 = wr_q;
  assign wr_index_o           = wr_idx_q;
  assign wr_valid_o           = wr_valid_q;
  assign wr_my_ip_o           = args_q[0*32 +: 32];
  assign wr_their_ip_o        = args_q[1*32 +: 32];
  assign wr_my_udp_port_o     = args_q[2*32 +: 16];
  assign wr_their_udp_port_o  = args_q[2*32 + 16 +: 16];
  assign wr_my_sctp_port_o    = args_q[3*32 +: 16];
  assign wr_their_sctp_port_o = args_q[3*32 + 16 +: 16];
  assign wr_my_vtag_o         = args_q[4*32 +: 32];
  assign wr_stream_base_o     = args_q[5*32 +: 16];
  assign wr_stream_count_o    = args_q[5*32 + 16 +: 16];
  assign wr_socket_o          = args_q[6*32 +: 16];
  assign wr_their_vtag_o      = args_q[7*32 +: 32];
  assign assoc_busy_o         = busy_q;

  // ---- live bits ------------------------------------------------------------------------------------
  logic        live_q, live_value_q;
  logic [15:0] live_index_q;
  logic [15:0] live_stream;  // NET_STREAM_LIVE STREAM of the write
  assign live_stream = reg_wdata_i[RNIC_NET_STREAM_LIVE_STREAM_LSB +: RNIC_NET_STREAM_LIVE_STREAM_BITS];
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      live_q       <= 1'b0;
      live_index_q <= '0;
      live_value_q <= 1'b0;
    end else begin
      live_q <= wr_at(W_LIVE) && 32'(live_stream) < NumStreams;
      if (wr_at(W_LIVE)) begin
        live_index_q <= live_stream;
        live_value_q <= reg_wdata_i[RNIC_NET_STREAM_LIVE_LIVE_LSB];
      end
    end
  end
  assign live_wr_o    = live_q;
  assign live_index_o = live_index_q;
  assign live_value_o = live_value_q;

  // ---- rings ----------------------------------------------------------------------------------------
  logic [63:12] rx_base_q, tx_base_q;
  logic [4:0]   rx_slots_q, rx_slot_q, tx_slots_q, tx_slot_q;
  logic         rx_en_q, tx_en_q;
  logic [31:0]  rx_cons_q, tx_prod_q;
  logic         rx_idle, tx_idle;  // CTRL reads 0: the configuration may be written
  logic [31:0]  rx_size_w, tx_size_w, rx_blo_w, tx_blo_w;
  assign rx_idle   = !rx_en_q && !rx_busy_i;
  assign tx_idle   = !tx_en_q && !tx_busy_i;
  assign rx_size_w = merge(size_word(rx_slots_q, rx_slot_q), reg_wdata_i, reg_wstrb_i);
  assign tx_size_w = merge(size_word(tx_slots_q, tx_slot_q), reg_wdata_i, reg_wstrb_i);
  assign rx_blo_w  = merge({rx_base_q[31:12], 12'b0}, reg_wdata_i, reg_wstrb_i);
  assign tx_blo_w  = merge({tx_base_q[31:12], 12'b0}, reg_wdata_i, reg_wstrb_i);
  logic [4:0] rx_w_slots, rx_w_slot, tx_w_slots, tx_w_slot;  // the SIZE fields a write would leave
  assign rx_w_slots = rx_size_w[RNIC_NET_RX_SIZE_LOG2_SLOTS_LSB +: RNIC_NET_RX_SIZE_LOG2_SLOTS_BITS];
  assign rx_w_slot  = rx_size_w[RNIC_NET_RX_SIZE_LOG2_SLOT_BYTES_LSB +: RNIC_NET_RX_SIZE_LOG2_SLOT_BYTES_BITS];
  assign tx_w_slots = tx_size_w[RNIC_NET_TX_SIZE_LOG2_SLOTS_LSB +: RNIC_NET_TX_SIZE_LOG2_SLOTS_BITS];
  assign tx_w_slot  = tx_size_w[RNIC_NET_TX_SIZE_LOG2_SLOT_BYTES_LSB +: RNIC_NET_TX_SIZE_LOG2_SLOT_BYTES_BITS];
  logic rx_w_en, tx_w_en;  // CTRL ENABLE of the write, when its byte is written
  logic rx_w_en_go, tx_w_en_go;
  assign rx_w_en    = reg_wdata_i[RNIC_NET_RX_CTRL_ENABLE_LSB];
  assign tx_w_en    = reg_wdata_i[RNIC_NET_TX_CTRL_ENABLE_LSB];
  assign rx_w_en_go = wr_at(W_RX_CTL) && reg_wstrb_i[RNIC_NET_RX_CTRL_ENABLE_LSB / 8];
  assign tx_w_en_go = wr_at(W_TX_CTL) && reg_wstrb_i[RNIC_NET_TX_CTRL_ENABLE_LSB / 8];

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rx_base_q  <= '0;
      rx_slots_q <= '0;
      rx_slot_q  <= 5'(RNIC_NET_RX_SIZE_LOG2_SLOT_BYTES_RESET);
      rx_en_q    <= 1'b0;
      rx_cons_q  <= '0;
      tx_base_q  <= '0;
      tx_slots_q <= '0;
      tx_slot_q  <= 5'(RNIC_NET_TX_SIZE_LOG2_SLOT_BYTES_RESET);
      tx_en_q    <= 1'b0;
      tx_prod_q  <= '0;
    end else begin
      if (wr_at(W_RX_BLO) && rx_idle) rx_base_q[31:12] <= rx_blo_w[31:12];
      if (wr_at(W_RX_BHI) && rx_idle) rx_base_q[63:32] <= merge(rx_base_q[63:32], reg_wdata_i, reg_wstrb_i);
      if (wr_at(W_RX_SZ) && rx_idle && size_ok(rx_w_slots, rx_w_slot)) begin
        rx_slots_q <= rx_w_slots;
        rx_slot_q  <= rx_w_slot;
      end
      if (wr_at(W_RX_CON)) rx_cons_q <= merge(rx_cons_q, reg_wdata_i, reg_wstrb_i);
      if (rx_w_en_go) begin
        rx_en_q <= rx_w_en;
        if (rx_w_en) rx_cons_q <= '0;
      end
      if (wr_at(W_TX_BLO) && tx_idle) tx_base_q[31:12] <= tx_blo_w[31:12];
      if (wr_at(W_TX_BHI) && tx_idle) tx_base_q[63:32] <= merge(tx_base_q[63:32], reg_wdata_i, reg_wstrb_i);
      if (wr_at(W_TX_SZ) && tx_idle && size_ok(tx_w_slots, tx_w_slot)) begin
        tx_slots_q <= tx_w_slots;
        tx_slot_q  <= tx_w_slot;
      end
      if (wr_at(W_TX_PRD)) tx_prod_q <= merge(tx_prod_q, reg_wdata_i, reg_wstrb_i);
      if (tx_w_en_go) begin
        tx_en_q <= tx_w_en;
        if (tx_w_en) tx_prod_q <= '0;
      end
    end
  end

  // Offsets are word aligned; of the fence's difference only the sign counts; BASE_LO [11:0] reads 0;
  // SIZE keeps its two fields.
  logic unused;
  assign unused = ^{reg_waddr_i[1:0], reg_raddr_i[1:0], left_diff[30:0], gleft_diff[30:0], rx_blo_w, tx_blo_w, rx_size_w,
                    tx_size_w};

  assign rx_enable_o     = rx_en_q;
  assign rx_base_o       = {rx_base_q, 12'b0};
  assign rx_log2_slots_o = rx_slots_q;
  assign rx_slot_log2_o  = rx_slot_q;
  assign rx_cons_o       = rx_cons_q;
  assign tx_enable_o     = tx_en_q;
  assign tx_base_o       = {tx_base_q, 12'b0};
  assign tx_log2_slots_o = tx_slots_q;
  assign tx_slot_log2_o  = tx_slot_q;
  assign tx_prod_o       = tx_prod_q;

  // ---- NET_TX_FAULT and its reason -----------------------------------------------------------------
  logic [Entries-1:0] fault_q, fault_set, fault_clr;
  logic [11:0]        freason_q;  // {assoc, reason}
  always_comb begin
    for (int i = 0; i < Entries; i++) begin
      fault_set[i] = g_drop_i && g_assoc_i == 8'(i);
      fault_clr[i] = wr_at(W_FAULT) && reg_wstrb_i[i / 8] && reg_wdata_i[i];
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      fault_q   <= '0;
      freason_q <= '0;
    end else begin
      fault_q <= (fault_q & ~fault_clr) | fault_set;
      if (g_drop_i && fault_q == '0) freason_q <= {g_assoc_i, g_reason_i};
    end
  end
  logic [31:0] freason_w;
  always_comb begin
    freason_w = '0;
    freason_w[RNIC_NET_TX_FAULT_REASON_REASON_LSB +: RNIC_NET_TX_FAULT_REASON_REASON_BITS] = freason_q[3:0];
    freason_w[RNIC_NET_TX_FAULT_REASON_ASSOC_LSB +: RNIC_NET_TX_FAULT_REASON_ASSOC_BITS] = freason_q[11:4];
  end

  // The drop classes of NET_CNT12 and NET_CNT13 (hw.def NET_TX_DROP_*).
  logic g_chunk_class, g_stag_class;
  assign g_chunk_class = (g_reason_i >= 4'(RNIC_NET_TX_DROP_FRAMING) && g_reason_i <= 4'(RNIC_NET_TX_DROP_LENGTH)) ||
                         g_reason_i == 4'(RNIC_NET_TX_DROP_TOO_LONG);
  assign g_stag_class = g_reason_i >= 4'(RNIC_NET_TX_DROP_STAG) && g_reason_i <= 4'(RNIC_NET_TX_DROP_BOUNDS);

  // ---- counters -------------------------------------------------------------------------------------
  logic [NumCnt-1:0]      ev_q;
  logic [32*NumCnt-1:0]   cnt_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ev_q  <= '0;
      cnt_q <= {NumCnt{CountInit}};
    end else begin
      ev_q <= {g_drop_i && g_reason_i == 4'(RNIC_NET_TX_DROP_READ_ERROR),
               g_drop_i && g_stag_class,
               g_drop_i && g_chunk_class,
               g_drop_i && g_reason_i == 4'(RNIC_NET_TX_DROP_ASSOC),
               g_sent_i,
               tx_rresp_err_i, tx_bad_i, tx_sent_i, rx_bresp_err_i, rx_drop_size_i, rx_drop_full_i,
               drop_frame_i, drop_size_i, drop_crc_i, pkt_in_i};
      for (int k = 0; k < NumCnt; k++) cnt_q[32*k +: 32] <= cnt_q[32*k +: 32] + 32'(ev_q[k]);
    end
  end

  // ---- read ---------------------------------------------------------------------------------------
  // An OR of the selected words (the selects are exclusive): a shallow AND-OR tree, no priority chain.
  logic [31:0] rd_data;
  function automatic logic [31:0] pick(logic sel, logic [31:0] v);
    pick = {32{sel}} & v;
  endfunction
  always_comb begin
    rd_data = '0;
    for (int k = 0; k < NumArgs; k++) rd_data |= pick(is_arg(ra, 6'(k)), args_q[32*k +: 32]);
    for (int k = 0; k < NumCnt; k++) rd_data |= pick(is_cnt(ra, 6'(k)), cnt_q[32*k +: 32]);
    rd_data |= pick(ra == W_STATUS, 32'(busy_q) << RNIC_NET_ASSOC_STATUS_BUSY_LSB);
    rd_data |= pick(ra == W_RX_BLO, {rx_base_q[31:12], 12'b0});
    rd_data |= pick(ra == W_RX_BHI, rx_base_q[63:32]);
    rd_data |= pick(ra == W_RX_SZ, size_word(rx_slots_q, rx_slot_q));
    rd_data |= pick(ra == W_RX_CTL, ctrl_word(rx_en_q, rx_busy_i));
    rd_data |= pick(ra == W_RX_PRD, rx_prod_i);
    rd_data |= pick(ra == W_RX_CON, rx_cons_q);
    rd_data |= pick(ra == W_TX_BLO, {tx_base_q[31:12], 12'b0});
    rd_data |= pick(ra == W_TX_BHI, tx_base_q[63:32]);
    rd_data |= pick(ra == W_TX_SZ, size_word(tx_slots_q, tx_slot_q));
    rd_data |= pick(ra == W_TX_CTL, ctrl_word(tx_en_q, tx_busy_i));
    rd_data |= pick(ra == W_TX_PRD, tx_prod_q);
    rd_data |= pick(ra == W_TX_CON, tx_cons_i);
    rd_data |= pick(ra == W_FAULT, 32'(fault_q));
    rd_data |= pick(ra == W_FREASON, freason_w);
  end

  logic [31:0] rdata_q;
  logic        rhit_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rdata_q <= '0;
      rhit_q  <= 1'b0;
    end else if (reg_rd_i) begin
      rdata_q <= rd_data;
      rhit_q  <= hit(ra);
    end
  end
  assign reg_rdata_o = rdata_q;
  assign reg_rhit_o  = rhit_q;

  // A clear's fence has its snapshot before it compares; wr_o is a one-cycle pulse per command.
  `RNIC_ASSERT(a_wr_busy, clk_i, rst_ni, !wr_q || busy_q)
  `RNIC_ASSERT(a_chk_busy, clk_i, rst_ni, !chk_q || busy_q)
endmodule
