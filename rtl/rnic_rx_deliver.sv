`include "rnic_defs.svh"
// Stage 5: in-order delivery (RFC 5041 5.3, 5.4) and the completion ring.
//
// One sequential FSM handles one item at a time, one read-modify-write per step:
// - State lives in block RAMs (flat vectors, registered reads): next_ssn per stream (two copies:
//   one for the FSM, one for lookup's read port) and one slot per (stream, DDP-SSN mod SsnWindow)
//   holding filled, last, T, STag/QN, MSN, length and RsvdULP. After reset the FSM clears every
//   slot and next_ssn (NumStreams * SsnWindow cycles, dlv_ready_o low meanwhile).
// - PLACED: d = ssn - next_ssn (mod 2^16); d >= SsnWindow or a filled slot is a duplicate
//   (dup_event_o, nothing changes). A segment at next_ssn is used directly (never written to its
//   slot), others fill their slot. Then, while slot next_ssn is filled: a last segment produces a
//   delivery completion (and a consume event for an untagged message), the slot is cleared and
//   next_ssn advances (written back every step: lookup's copy is at most one update stale).
//   msg_event_o pulses for every delivered message, tagged or untagged (CNT_MESSAGES).
//   Delivery entries: tagged carry the STag and RsvdULP[7:0]; untagged the QN, MSN, message length
//   and RsvdULP[39:0]; both the SSN of the last segment.
// - ERROR: an error completion (flags: error, and tagged from the item's T bit; type, code, SSN,
//   segment length, the 18 header bytes); STag/QN, MSN and RsvdULP are zero.
// - STREAM_RESET: clears the stream's SsnWindow slots and next_ssn, then echoes cons_reset_o.
// - Items for a stream >= NumStreams: PLACED counts as a duplicate, STREAM_RESET only echoes.
// - Completions: aw_count_i is sampled once the completion is decided; the entry is written only
//   when b_count_i has reached that sample (32-bit wrapping compare), cq_enable_i is 1 and the
//   ring has room (full: prod - cq_cons_i >= 2^cq_log2_i, unsigned). One AW burst of 64 bytes
//   (64/Bytes beats, all strobes) at {cq_base_i[63:6], 6'b0} + 64 * (prod mod 2^cq_log2_i); AW
//   and W are offered independently. aw_count_i is sampled again in the cycle after the burst
//   (it then includes this AW: the mux counts AW handshakes as they happen on this port) and
//   cq_prod_o advances once b_count_i reaches it. One completion write is outstanding at a time.
// - cq_reset_i: producer 0 (phase 1). An entry whose write is already under way is finished on
//   the bus but not counted.
module rnic_rx_deliver #(
  parameter int DataWidth  = 512,  // bits
  parameter int NumStreams = 256,  // streams
  parameter int SsnWindow  = 64    // DDP-SSN window in segments (power of two)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  rnic_dlv_t              dlv_i,
  input  logic                   dlv_valid_i,
  output logic                   dlv_ready_o,
  input  logic [15:0]            ssn_rd_stream_i,  // read port for lookup: next_ssn of a stream,
  output logic [15:0]            ssn_rd_next_o,    //   one cycle after the address
  output logic [15:0]            cons_stream_o,    // -> lookup: untagged message of (stream, qn)
  output logic [7:0]             cons_qn_o,        //   delivered, or STREAM_RESET done (cons_reset_o)
  output logic                   cons_reset_o,
  output logic                   cons_valid_o,
  input  logic                   cons_ready_i,
  input  logic [63:0]            cq_base_i,        // completion ring, from regs
  input  logic [4:0]             cq_log2_i,
  input  logic                   cq_enable_i,
  input  logic                   cq_reset_i,       // pulse: producer 0, phase 1
  input  logic [31:0]            cq_cons_i,
  output logic [31:0]            cq_prod_o,
  output logic [63:0]            awaddr_o,         // write master port 1 of the mux
  output logic [7:0]             awlen_o,
  output logic                   awvalid_o,
  input  logic                   awready_i,
  output logic [DataWidth-1:0]   wdata_o,
  output logic [DataWidth/8-1:0] wstrb_o,
  output logic                   wlast_o,
  output logic                   wvalid_o,
  input  logic                   wready_i,
  input  logic [31:0]            aw_count_i,
  input  logic [31:0]            b_count_i,
  output logic                   msg_event_o,      // counter events
  output logic                   dup_event_o
);
  localparam int Bytes = DataWidth / 8;
  localparam int Beats = 64 / Bytes;                             // beats per completion entry
  localparam int BeatW = (Beats > 1) ? $clog2(Beats) : 1;
  localparam int WinW = $clog2(SsnWindow);
  localparam int StreamW = (NumStreams > 1) ? $clog2(NumStreams) : 1;
  localparam int RamStreams = (NumStreams > 1) ? NumStreams : 2;  // RAM rows (address width >= 1)
  localparam int NumSlots = RamStreams * SsnWindow;
  localparam int SlotAw = StreamW + WinW;
  localparam logic [SlotAw-1:0] LastSlot = SlotAw'(NumSlots - 1);
  localparam logic [BeatW-1:0] LastBeat = BeatW'(Beats - 1);
  localparam logic [16:0] NumStreams17 = 17'(NumStreams);

  // Slot layout (flat vector).
  localparam int SlotFilled = 0;
  localparam int SlotLast = 1;
  localparam int SlotTagged = 2;
  localparam int SlotStagQnLsb = 3;    // 32 bits
  localparam int SlotMsnLsb = 35;      // 32 bits
  localparam int SlotLenLsb = 67;      // 32 bits
  localparam int SlotRsvdLsb = 99;     // 40 bits
  localparam int SlotW = 139;

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_rx_deliver: DataWidth must be 64, 128, 256 or 512");
    if (NumStreams < 1 || NumStreams > 65536)
      $fatal(1, "rnic_rx_deliver: NumStreams must be 1..65536");
    if (SsnWindow < 2 || SsnWindow > 4096 || (SsnWindow & (SsnWindow - 1)) != 0)
      $fatal(1, "rnic_rx_deliver: SsnWindow must be a power of two in 2..4096");
  end

  typedef enum logic [3:0] {
    StInit,       // clearing every slot and next_ssn after reset
    StIdle,       // accepting an item; reads its next_ssn and slot
    StCheck,      // PLACED: duplicate check, fill the slot or start delivering
    StAdv,        // clear slot next_ssn, next_ssn++, read the new slot next_ssn
    StLoad,       // slot next_ssn read: deliver on, or done
    StCqSample,   // completion decided: sample aw_count_i
    StCqWait,     // wait for b_count_i, enable, room in the ring, previous entry acknowledged
    StCqWrite,    // the entry's AW and W beats
    StCqPost,     // entry issued: track its acknowledgement
    StCons,       // untagged message delivered: consume event to lookup
    StReset,      // STREAM_RESET: clearing the stream's slots
    StResetCons   // STREAM_RESET done: echo to lookup
  } state_e;

  // ---- RAMs -------------------------------------------------------------------------------------
  logic [SlotW-1:0] slot_mem [NumSlots];
  logic [15:0] nssn_mem [RamStreams];
  logic [15:0] nssn_lk_mem [RamStreams];

  logic slot_we;
  logic [SlotAw-1:0] slot_waddr, slot_raddr;
  logic [SlotW-1:0] slot_wdata, slot_rdata_q;
  logic nssn_we;
  logic [StreamW-1:0] nssn_waddr, nssn_raddr;
  logic [15:0] nssn_wdata, nssn_rdata_q, nssn_lk_rdata_q;

  always_ff @(posedge clk_i) begin
    if (slot_we) slot_mem[slot_waddr] <= slot_wdata;
    slot_rdata_q <= slot_mem[slot_raddr];
  end

  always_ff @(posedge clk_i) begin
    if (nssn_we) nssn_mem[nssn_waddr] <= nssn_wdata;
    nssn_rdata_q <= nssn_mem[nssn_raddr];
  end

  always_ff @(posedge clk_i) begin
    if (nssn_we) nssn_lk_mem[nssn_waddr] <= nssn_wdata;
    nssn_lk_rdata_q <= nssn_lk_mem[ssn_rd_stream_i[StreamW-1:0]];
  end

  assign ssn_rd_next_o = nssn_lk_rdata_q;

  // ---- state ------------------------------------------------------------------------------------
  state_e state_d, state_q;
  logic [SlotAw-1:0] cnt_d, cnt_q;        // init / stream-reset loop
  logic [31:0] prod_d, prod_q;            // entries acknowledged
  logic [31:0] widx_d, widx_q;            // entries issued
  logic pend_valid_d, pend_valid_q;       // an issued entry awaits its B
  logic aw_done_d, aw_done_q;
  logic w_done_d, w_done_q;
  logic [BeatW-1:0] beat_d, beat_q;
  logic cq_drop_d, cq_drop_q;             // cq_reset_i during the entry's write: do not count it
  // datapath (no reset)
  rnic_dlv_t item_d, item_q;
  logic [15:0] nssn_d, nssn_q;            // next_ssn of item_q's stream while delivering
  logic [SlotW-1:0] cur_d, cur_q;         // slot next_ssn being delivered
  logic [31:0] aw_smp_d, aw_smp_q;        // aw_count_i when the completion was decided
  logic [31:0] pend_cnt_d, pend_cnt_q;    // aw_count_i after the outstanding entry's AW
  logic [63:0] cq_addr_d, cq_addr_q;
  logic cq_phase_d, cq_phase_q;

  // ---- helpers ----------------------------------------------------------------------------------
  logic stream_ok;
  logic [StreamW-1:0] item_stream;
  logic [15:0] ahead, nssn_inc;
  logic [SlotW-1:0] item_slot;
  logic [31:0] b_since_smp, b_since_pend, cq_size, cq_used, cq_index, cq_lap;
  logic smp_reached, pend_done, cq_full, cq_go;
  logic is_error;

  assign item_stream = item_q.stream[StreamW-1:0];
  assign stream_ok = {1'b0, item_q.stream} < NumStreams17;
  assign ahead = item_q.ssn - nssn_rdata_q;
  assign nssn_inc = nssn_q + 16'd1;
  assign is_error = item_q.kind == RNIC_DLV_ERROR;

  always_comb begin
    item_slot = '0;
    item_slot[SlotFilled] = 1'b1;
    item_slot[SlotLast] = item_q.last;
    item_slot[SlotTagged] = item_q.is_tagged;
    item_slot[SlotStagQnLsb +: 32] = item_q.stag_qn;
    item_slot[SlotMsnLsb +: 32] = item_q.msn;
    item_slot[SlotLenLsb +: 32] = item_q.length;
    item_slot[SlotRsvdLsb +: 40] = item_q.rsvd_ulp;
  end

  assign b_since_smp = b_count_i - aw_smp_q;
  assign smp_reached = ~b_since_smp[31];
  assign b_since_pend = b_count_i - pend_cnt_q;
  assign pend_done = pend_valid_q & ~b_since_pend[31];

  assign cq_size = 32'd1 << cq_log2_i;
  assign cq_used = widx_q - cq_cons_i;
  assign cq_full = cq_used >= cq_size;
  assign cq_index = widx_q & (cq_size - 32'd1);
  assign cq_lap = widx_q >> cq_log2_i;
  assign cq_go = smp_reached & cq_enable_i & ~cq_full & (~pend_valid_q | pend_done) & ~cq_reset_i;

  // ---- FSM --------------------------------------------------------------------------------------
  always_comb begin
    state_d = state_q;
    cnt_d = cnt_q;
    prod_d = prod_q;
    widx_d = widx_q;
    pend_valid_d = pend_valid_q;
    aw_done_d = aw_done_q;
    w_done_d = w_done_q;
    beat_d = beat_q;
    cq_drop_d = cq_drop_q;
    item_d = item_q;
    nssn_d = nssn_q;
    cur_d = cur_q;
    aw_smp_d = aw_smp_q;
    pend_cnt_d = pend_cnt_q;
    cq_addr_d = cq_addr_q;
    cq_phase_d = cq_phase_q;

    slot_we = 1'b0;
    slot_waddr = {item_stream, nssn_q[WinW-1:0]};
    slot_wdata = '0;
    slot_raddr = {dlv_i.stream[StreamW-1:0], dlv_i.ssn[WinW-1:0]};
    nssn_we = 1'b0;
    nssn_waddr = item_stream;
    nssn_wdata = '0;
    nssn_raddr = dlv_i.stream[StreamW-1:0];

    dlv_ready_o = 1'b0;
    cons_valid_o = 1'b0;
    cons_reset_o = 1'b0;
    msg_event_o = 1'b0;
    dup_event_o = 1'b0;

    // The outstanding entry is acknowledged.
    if (pend_done) begin
      prod_d = prod_q + 32'd1;
      pend_valid_d = 1'b0;
    end

    unique case (state_q)
      StInit: begin
        slot_we = 1'b1;
        slot_waddr = cnt_q;
        nssn_we = 1'b1;
        nssn_waddr = cnt_q[SlotAw-1:WinW];
        cnt_d = cnt_q + 1'b1;
        if (cnt_q == LastSlot) begin
          cnt_d = '0;
          state_d = StIdle;
        end
      end

      StIdle: begin
        dlv_ready_o = 1'b1;
        if (dlv_valid_i) begin
          item_d = dlv_i;
          cnt_d = '0;
          unique case (dlv_i.kind)
            RNIC_DLV_PLACED:       state_d = StCheck;
            RNIC_DLV_ERROR:        state_d = StCqSample;
            RNIC_DLV_STREAM_RESET: state_d = StReset;
            default:               state_d = StIdle;  // unused code: ignored
          endcase
        end
      end

      StCheck: begin
        nssn_d = nssn_rdata_q;
        if (!stream_ok || ahead[15:WinW] != '0 || slot_rdata_q[SlotFilled]) begin
          dup_event_o = 1'b1;
          state_d = StIdle;
        end else if (ahead != 16'd0) begin
          slot_we = 1'b1;
          slot_waddr = {item_stream, item_q.ssn[WinW-1:0]};
          slot_wdata = item_slot;
          state_d = StIdle;
        end else begin
          cur_d = item_slot;
          state_d = item_q.last ? StCqSample : StAdv;
        end
      end

      StAdv: begin
        slot_we = 1'b1;
        nssn_we = 1'b1;
        nssn_wdata = nssn_inc;
        nssn_d = nssn_inc;
        slot_raddr = {item_stream, nssn_inc[WinW-1:0]};
        state_d = StLoad;
      end

      StLoad: begin
        if (slot_rdata_q[SlotFilled]) begin
          cur_d = slot_rdata_q;
          state_d = slot_rdata_q[SlotLast] ? StCqSample : StAdv;
        end else begin
          state_d = StIdle;
        end
      end

      StCqSample: begin
        aw_smp_d = aw_count_i;
        state_d = StCqWait;
      end

      StCqWait: begin
        if (cq_go) begin
          cq_addr_d = {cq_base_i[63:6], 6'b0} + {26'b0, cq_index, 6'b0};
          cq_phase_d = ~cq_lap[0];  // 1 on the first lap
          aw_done_d = 1'b0;
          w_done_d = 1'b0;
          beat_d = '0;
          cq_drop_d = 1'b0;
          state_d = StCqWrite;
        end
      end

      StCqWrite: begin
        if (awvalid_o && awready_i) aw_done_d = 1'b1;
        if (wvalid_o && wready_i) begin
          beat_d = beat_q + 1'b1;
          if (beat_q == LastBeat) w_done_d = 1'b1;
        end
        if (cq_reset_i) cq_drop_d = 1'b1;
        if (aw_done_d && w_done_d) state_d = StCqPost;
      end

      StCqPost: begin
        if (!cq_drop_q && !cq_reset_i) begin
          widx_d = widx_q + 32'd1;
          pend_valid_d = 1'b1;
          pend_cnt_d = aw_count_i;
        end
        if (is_error) begin
          state_d = StIdle;
        end else begin
          msg_event_o = 1'b1;
          state_d = cur_q[SlotTagged] ? StAdv : StCons;
        end
      end

      StCons: begin
        cons_valid_o = 1'b1;
        if (cons_ready_i) state_d = StAdv;
      end

      StReset: begin
        slot_we = stream_ok;
        slot_waddr = {item_stream, cnt_q[WinW-1:0]};
        cnt_d = cnt_q + 1'b1;
        if (cnt_q[WinW-1:0] == '1) begin
          nssn_we = stream_ok;
          state_d = StResetCons;
        end
      end

      StResetCons: begin
        cons_valid_o = 1'b1;
        cons_reset_o = 1'b1;
        if (cons_ready_i) state_d = StIdle;
      end

      default: state_d = StIdle;
    endcase

    if (cq_reset_i) begin
      prod_d = '0;
      widx_d = '0;
      pend_valid_d = 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= StInit;
      cnt_q <= '0;
      prod_q <= '0;
      widx_q <= '0;
      pend_valid_q <= 1'b0;
      aw_done_q <= 1'b0;
      w_done_q <= 1'b0;
      beat_q <= '0;
      cq_drop_q <= 1'b0;
    end else begin
      state_q <= state_d;
      cnt_q <= cnt_d;
      prod_q <= prod_d;
      widx_q <= widx_d;
      pend_valid_q <= pend_valid_d;
      aw_done_q <= aw_done_d;
      w_done_q <= w_done_d;
      beat_q <= beat_d;
      cq_drop_q <= cq_drop_d;
    end
  end

  always_ff @(posedge clk_i) begin
    item_q <= item_d;
    nssn_q <= nssn_d;
    cur_q <= cur_d;
    aw_smp_q <= aw_smp_d;
    pend_cnt_q <= pend_cnt_d;
    cq_addr_q <= cq_addr_d;
    cq_phase_q <= cq_phase_d;
  end

  // ---- completion entry -------------------------------------------------------------------------
  logic [511:0] cqe;

  always_comb begin
    cqe = '0;
    cqe[RNIC_CQE_STREAM_LSB +: 16] = item_q.stream;
    if (is_error) begin
      cqe[RNIC_CQE_FLAGS_LSB +: 8] = {5'b0, item_q.is_tagged, 1'b1, cq_phase_q};
      cqe[RNIC_CQE_ERR_TYPE_LSB +: 8] = {4'b0, item_q.err_type};
      cqe[RNIC_CQE_ERR_CODE_LSB +: 8] = item_q.err_code;
      cqe[RNIC_CQE_SSN_LSB +: 16] = item_q.ssn;
      cqe[RNIC_CQE_LENGTH_LSB +: 32] = item_q.length;
      cqe[RNIC_CQE_HEADER_LSB +: 144] = item_q.hdr_raw;
    end else begin
      cqe[RNIC_CQE_FLAGS_LSB +: 8] = {5'b0, cur_q[SlotTagged], 1'b0, cq_phase_q};
      cqe[RNIC_CQE_SSN_LSB +: 16] = nssn_q;
      cqe[RNIC_CQE_STAG_QN_LSB +: 32] = cur_q[SlotStagQnLsb +: 32];
      if (cur_q[SlotTagged]) begin
        cqe[RNIC_CQE_RSVD_ULP_LSB +: 8] = cur_q[SlotRsvdLsb +: 8];
      end else begin
        cqe[RNIC_CQE_MSN_LSB +: 32] = cur_q[SlotMsnLsb +: 32];
        cqe[RNIC_CQE_LENGTH_LSB +: 32] = cur_q[SlotLenLsb +: 32];
        cqe[RNIC_CQE_RSVD_ULP_LSB +: 40] = cur_q[SlotRsvdLsb +: 40];
      end
    end
  end

  always_comb begin
    wdata_o = cqe[DataWidth-1:0];
    for (int i = 1; i < Beats; i++) begin
      if (beat_q == BeatW'(i)) wdata_o = cqe[i*DataWidth +: DataWidth];
    end
  end

  assign awaddr_o = cq_addr_q;
  assign awlen_o = 8'(Beats - 1);
  assign wstrb_o = '1;
  assign wlast_o = beat_q == LastBeat;
  assign cons_stream_o = item_q.stream;
  assign cons_qn_o = cur_q[SlotStagQnLsb +: 8];
  assign cq_prod_o = prod_q;

  // Address bits past NumStreams, the base's offset bits and the compare differences' low bits.
  logic unused_bits;
  assign unused_bits = ^{ssn_rd_stream_i, cq_base_i[5:0], b_since_smp, b_since_pend, cq_lap};
  // The write port's valids depend on state only (kept out of the FSM's always_comb, which also reads
  // dlv_valid_i, so no combinational path can even appear to run from ready back to valid).
  assign awvalid_o = state_q == StCqWrite && !aw_done_q;
  assign wvalid_o = state_q == StCqWrite && !w_done_q;
endmodule
