// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
`include "rnic_assert.svh"
// Stage 4: DMA placement. Pops each SEG verdict's packet beats; for PLACE writes the payload to the
// host address (realigned, byte strobes, bursts split at 4 KiB and 256 beats).
//
// Structure (docs/rtl-architecture.md, rnic_rx_place):
//   input     a register (p0) holding the next verdict; while it waits there the expected MSN of
//             its queue is read from deliver (exp_rd_*), one cycle ahead of dispatch.
//   dispatch  takes one verdict per cycle from p0, precomputes the segment's shift, lead
//             (header-only) beats, write beats and first burst, and pushes it into in-order queues:
//             sq (every SEG, drives the data engine), aq (PLACE with payload, drives the AW
//             generator), cq (every verdict that yields an rnic_dlv_t, tokens included). Dispatch
//             is where writes are committed: once in sq/aq a segment's writes finish without
//             deliver. An untagged PLACE whose MSN is below its queue's expected MSN (a message
//             deliver has completed since lookup: RFC 5041 4.3 broken by the peer) is STALE: it is
//             dispatched like a DROP (beats discarded, nothing written) and still goes to deliver,
//             which reports the order error. commit_now_o counts the segments committed with
//             writes (this cycle's included); with the mux's b_segs count deliver orders every
//             completion after the writes committed before it was decided.
//   AW gen    one burst per cycle from aq: the first burst ends at the next block boundary (4 KiB,
//             or 256 beats when that is less), the others are whole blocks.
//   data      the sq head is loaded into current-segment registers (c_*, with its progress and
//             precomputed flags: lead == 0, write beats left == 0/1/2) the cycle after it was pushed
//             at the earliest, and when the previous segment takes its last beat (no gap). Added
//             for the logic-depth budget (issue 12): the per-beat decision reads only registers,
//             never the sq RAM's read data; it costs one cycle of latency, not of rate.
//             Takes one FIFO beat per cycle for the current segment. Write beat k of a segment is
//             (in[k+lead-1] >> sh) | (in[k+lead] << (Bytes - sh)) with sh = hdr - off (mod Bytes,
//             1..Bytes) bytes. An input beat completes the write beat it ends and, when it is the
//             segment's last, also the tail write beat that needs no later input: 0, 1 or 2 write
//             beats, pushed into the W queue. A beat is taken whenever the W queue has room for
//             what it produces, so header-only and discarded beats cost no W cycle and a tail
//             costs no input cycle while the queue can bank it. The room test uses registered
//             flags (room for >= 1, >= 2 beats) that the occupancy update precomputes.
//   W queue   WqDepth write beats (two distributed RAMs, even and odd entries); its head is W.
//   dlv       the cq head leaves once its segment's last write beat left the W queue (ERROR and
//             zero-length PLACE: its last beat was popped) and, for a PLACE, its last AW was
//             issued: all AWs and W beats of a PLACE go first.
// A burst's first W beat is held until its AW is issued or presented (AW never after W).
// Full rate (docs/rtl-architecture.md, performance model): a verdict, an input beat, an AW and a
// W beat per cycle, limited only by the queue depths below.
module rnic_rx_place #(
  parameter int DataWidth = 512,  // bits (64..512)
  // Queue depths (powers of two): distributed RAM is 32 entries deep, so 32 (per W queue bank) costs
  // what 4 would. Smaller values are for formal proofs (tb/formal/place_fv.sv).
  parameter int SqDepth = 32,  // segments accepted ahead of the data engine (2..256)
  parameter int AqDepth = 32,  // PLACE segments accepted ahead of the AW generator (2..256)
  parameter int CqDepth = 32,  // dlv entries waiting for their writes (2..256)
  parameter int WqDepth = 64   // write beats produced ahead of W, two banks of WqDepth/2 (4..1024)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  rnic_verdict_t          vd_i,
  input  logic                   vd_valid_i,
  output logic                   vd_ready_o,
  input  logic [DataWidth-1:0]   beat_data_i,   // packet beats from the data FIFO
  input  logic [DataWidth/8-1:0] beat_keep_i,
  input  logic                   beat_last_i,
  input  logic                   beat_valid_i,
  output logic                   beat_ready_o,
  output logic [63:0]            awaddr_o,      // aligned to DataWidth/8; INCR, full-width beats
  output logic [7:0]             awlen_o,
  output logic                   awvalid_o,
  input  logic                   awready_i,
  output logic [DataWidth-1:0]   wdata_o,
  output logic [DataWidth/8-1:0] wstrb_o,
  output logic                   wlast_o,
  output logic                   wvalid_o,
  input  logic                   wready_i,
  output logic                   awseglast_o,   // with awvalid_o: the segment's last burst
  output logic [15:0]            exp_rd_stream_o, // expected-MSN read port into deliver: the queue
  output logic [7:0]             exp_rd_qn_o,     //   of the verdict dispatching next cycle;
  input  logic [31:0]            exp_rd_data_i,   //   its expected MSN one cycle later
  output logic [31:0]            commit_now_o,  // segments committed with writes, this cycle's included
  output rnic_dlv_t              dlv_o,         // -> deliver, after the segment's AWs and W beats
  output logic                   dlv_valid_o,
  input  logic                   dlv_ready_i,
  output logic                   bytes_event_o, // pulse per PLACE with its payload bytes (counter)
  output logic [15:0]            bytes_o
);
  localparam int Bytes = DataWidth / 8;
  localparam int Lb = $clog2(Bytes);
  // Bursts never cross a block: 4 KiB, or 256 beats when that is less (64-bit bus: 2 KiB).
  localparam int LogBnd = (Lb + 8 < 12) ? Lb + 8 : 12;
  localparam int BlkW = LogBnd - Lb;  // beat index within a block
  localparam int SqPw = $clog2(SqDepth);
  localparam int AqPw = $clog2(AqDepth);
  localparam int CqPw = $clog2(CqDepth);
  localparam int WqPw = $clog2(WqDepth);
  localparam int SeqW = CqPw + 1;     // counts of segments in flight (at most CqDepth)
  localparam int DlvW = $bits(dlv_o);
  // sq entry: place, dlv, lead[2:0], lead == 0, shm1, nout[15:0], nout == 0, 1, 2, off, ll, blk
  localparam int SqW = 2 + 3 + 1 + Lb + 16 + 3 + Lb + Lb + BlkW;
  // aq entry: aligned address / Bytes, first awlen, beats after the first burst
  localparam int AqW = (64 - Lb) + 8 + 16;
  // cq entry: need_aw, need_data, dlv
  localparam int CqW = 2 + DlvW;

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_rx_place: DataWidth must be 64, 128, 256 or 512");
    // Pointers carry a wrap bit over $clog2(depth) index bits (>= 1; the W queue's bank index is
    // one bit narrower); aw_ahead_q (16 bits signed) counts AW bursts issued ahead of W, at most
    // about 33 per aq entry.
    if (SqDepth < 2 || SqDepth > 256 || (SqDepth & (SqDepth - 1)) != 0)
      $fatal(1, "rnic_rx_place: SqDepth must be a power of two in 2..256");
    if (AqDepth < 2 || AqDepth > 256 || (AqDepth & (AqDepth - 1)) != 0)
      $fatal(1, "rnic_rx_place: AqDepth must be a power of two in 2..256");
    if (CqDepth < 2 || CqDepth > 256 || (CqDepth & (CqDepth - 1)) != 0)
      $fatal(1, "rnic_rx_place: CqDepth must be a power of two in 2..256");
    if (WqDepth < 4 || WqDepth > 1024 || (WqDepth & (WqDepth - 1)) != 0)
      $fatal(1, "rnic_rx_place: WqDepth must be a power of two in 4..1024");
  end


  // ---------------------------------------------------------------------------------------------
  // Queues (flat RAMs, in-order)
  // ---------------------------------------------------------------------------------------------
  logic [SqW-1:0] sq_mem [SqDepth];
  logic [AqW-1:0] aq_mem [AqDepth];
  logic [CqW-1:0] cq_mem [CqDepth];
  logic [SqPw:0] sq_wr_q, sq_wr_d, sq_rd_q, sq_rd_d;
  logic [AqPw:0] aq_wr_q, aq_wr_d, aq_rd_q, aq_rd_d;
  logic [CqPw:0] cq_wr_q, cq_wr_d, cq_rd_q, cq_rd_d;
  logic sq_push, sq_pop, aq_push, aq_pop, cq_push, cq_pop;
  logic sq_empty, sq_full, aq_empty, aq_full, cq_empty, cq_full;
  logic [SqW-1:0] sq_wdata, sq_rdata;
  logic [AqW-1:0] aq_wdata, aq_rdata;
  logic [CqW-1:0] cq_wdata, cq_rdata;

  assign sq_empty = sq_wr_q == sq_rd_q;
  assign aq_empty = aq_wr_q == aq_rd_q;
  assign cq_empty = cq_wr_q == cq_rd_q;
  assign sq_full = (sq_wr_q[SqPw] != sq_rd_q[SqPw]) && (sq_wr_q[SqPw-1:0] == sq_rd_q[SqPw-1:0]);
  assign aq_full = (aq_wr_q[AqPw] != aq_rd_q[AqPw]) && (aq_wr_q[AqPw-1:0] == aq_rd_q[AqPw-1:0]);
  assign cq_full = (cq_wr_q[CqPw] != cq_rd_q[CqPw]) && (cq_wr_q[CqPw-1:0] == cq_rd_q[CqPw-1:0]);
  // Room for p0's pushes as registers (the depth budget: vd_ready_o and the expected-MSN read port
  // start from registers, not from pointer compares): the occupancy after this cycle's push and pop
  // is below the depth; its compares are against this cycle's count, selected by the push and pop.
  logic sq_room_q, aq_room_q, cq_room_q;
  logic [SqPw:0] sq_cnt;
  logic [AqPw:0] aq_cnt;
  logic [CqPw:0] cq_cnt;
  assign sq_cnt = sq_wr_q - sq_rd_q;
  assign aq_cnt = aq_wr_q - aq_rd_q;
  assign cq_cnt = cq_wr_q - cq_rd_q;
  assign sq_rdata = sq_mem[sq_rd_q[SqPw-1:0]];
  assign aq_rdata = aq_mem[aq_rd_q[AqPw-1:0]];
  assign cq_rdata = cq_mem[cq_rd_q[CqPw-1:0]];

  always_comb begin
    sq_wr_d = sq_wr_q + {{SqPw{1'b0}}, sq_push};
    sq_rd_d = c_ld ? sq_rd_q + (SqPw + 1)'(1) : sq_rd_q;  // the head moves into the c_* registers
    aq_wr_d = aq_wr_q + {{AqPw{1'b0}}, aq_push};
    aq_rd_d = aq_rd_q + {{AqPw{1'b0}}, aq_pop};
    cq_wr_d = cq_wr_q + {{CqPw{1'b0}}, cq_push};
    cq_rd_d = cq_rd_q + {{CqPw{1'b0}}, cq_pop};
  end

  always_ff @(posedge clk_i) begin
    if (sq_push) sq_mem[sq_wr_q[SqPw-1:0]] <= sq_wdata;
  end
  always_ff @(posedge clk_i) begin
    if (aq_push) aq_mem[aq_wr_q[AqPw-1:0]] <= aq_wdata;
  end
  always_ff @(posedge clk_i) begin
    if (cq_push) cq_mem[cq_wr_q[CqPw-1:0]] <= cq_wdata;
  end

  // ---------------------------------------------------------------------------------------------
  // Dispatch: one verdict per cycle
  // ---------------------------------------------------------------------------------------------
  logic p0_valid_q;                 // the input register
  rnic_verdict_t p0_q;
  logic p0_take;                    // p0 dispatches this cycle
  logic v_stale;
  logic [31:0] v_expd;              // MSN - expected MSN
  logic [31:0] commit_q, commit_d;
  logic bytes_ev_q, bytes_ev_d;
  logic [15:0] bytes_q, bytes_d;
  logic aw_valid_q;

  logic v_seg, v_place, v_place_w, v_error, v_reset, v_fence, v_qset, v_dlv;
  logic [Lb-1:0] v_off, v_shm1, v_ll;
  logic [9:0] v_sm1;       // hdr_bytes - off - 1 (two's complement)
  logic [2:0] v_lead;      // header-only input beats before the first write beat
  logic [16:0] v_end;      // off + pay_bytes
  logic [16:0] v_end_up;   // off + pay_bytes + Bytes - 1
  logic [16:0] v_end_m1;   // off + pay_bytes - 1
  logic [15:0] v_nout;     // write beats
  logic [BlkW-1:0] v_blk;  // beat index of the first write beat within its block
  logic [BlkW:0] v_room;   // beats from the first write beat to the block end
  logic [15:0] v_room16, v_first, v_first_m1, v_rem;
  rnic_dlv_t v_dlv_ent;

  // The expected-MSN read for the verdict that dispatches next cycle: p0's own while it stays,
  // else the one entering p0.
  always_comb begin
    if (p0_valid_q && !p0_take) begin
      exp_rd_stream_o = p0_q.seg.stream;
      exp_rd_qn_o = p0_q.seg.qn[7:0];
    end else begin
      exp_rd_stream_o = vd_i.seg.stream;
      exp_rd_qn_o = vd_i.seg.qn[7:0];
    end
  end
  assign commit_now_o = commit_d;

  always_comb begin
    // Stale: MSN - expected < 0 (mod 2^32, RFC 5041 4.3 wrap).
    v_expd = p0_q.seg.msn - exp_rd_data_i;
    v_stale = p0_q.action == RNIC_ACT_PLACE && !p0_q.seg.is_tagged && v_expd[31];
    v_seg = p0_q.action != RNIC_ACT_TOKEN;
    v_place = p0_q.action == RNIC_ACT_PLACE;
    v_place_w = v_place && !v_stale && p0_q.pay_bytes != 16'd0;
    v_error = p0_q.action == RNIC_ACT_ERROR;
    v_reset = p0_q.action == RNIC_ACT_TOKEN && p0_q.kind == RNIC_ITEM_STREAM_RESET;
    v_fence = p0_q.action == RNIC_ACT_TOKEN && p0_q.kind == RNIC_ITEM_FENCE;
    v_qset = p0_q.action == RNIC_ACT_TOKEN && p0_q.kind == RNIC_ITEM_QUEUE_SET;
    v_dlv = v_place || v_error || v_reset || v_fence || v_qset;

    p0_take = p0_valid_q && sq_room_q && aq_room_q && cq_room_q;
    vd_ready_o = !p0_valid_q || p0_take;
    commit_d = commit_q + 32'(p0_take && v_place_w);

    // Write beat k covers packet bytes k*Bytes + s .. with s = hdr - off; it is produced when input
    // beat k + lead arrives, from that beat and the one before, shifted by shm1 + 1 bytes.
    v_off = p0_q.addr[Lb-1:0];
    v_sm1 = {5'd0, p0_q.hdr_bytes} - {{(10 - Lb){1'b0}}, v_off} - 10'd1;
    v_shm1 = v_sm1[Lb-1:0];
    v_lead = v_sm1[9] ? 3'd0 : v_sm1[Lb+2:Lb] + 3'd1;
    v_end = {1'b0, p0_q.pay_bytes} + {{(17 - Lb){1'b0}}, v_off};
    v_end_up = v_end + 17'(Bytes - 1);
    v_end_m1 = v_end - 17'd1;
    v_nout = {{(Lb - 1){1'b0}}, v_end_up[16:Lb]};
    v_ll = v_end_m1[Lb-1:0];
    v_blk = p0_q.addr[LogBnd-1:Lb];
    v_room = {1'b1, {BlkW{1'b0}}} - {1'b0, v_blk};
    v_room16 = {{(15 - BlkW){1'b0}}, v_room};
    v_first = (v_nout < v_room16) ? v_nout : v_room16;
    v_first_m1 = v_first - 16'd1;
    v_rem = v_nout - v_first;

    sq_push = p0_take && v_seg;
    sq_wdata = {v_place_w, v_dlv, v_lead, v_lead == 3'd0, v_shm1, v_nout, v_nout == 16'd0,
                v_nout == 16'd1, v_nout == 16'd2, v_off, v_ll, v_blk};
    aq_push = p0_take && v_place_w;
    aq_wdata = {p0_q.addr[63:Lb], v_first_m1[7:0], v_rem};

    v_dlv_ent = '0;
    v_dlv_ent.stream = p0_q.seg.stream;
    v_dlv_ent.ssn = p0_q.seg.ssn;
    v_dlv_ent.last = p0_q.seg.last;
    v_dlv_ent.is_tagged = p0_q.seg.is_tagged;
    v_dlv_ent.stag_qn = p0_q.seg.is_tagged ? p0_q.seg.stag : p0_q.seg.qn;
    v_dlv_ent.msn = p0_q.seg.msn;
    v_dlv_ent.rsvd_ulp = p0_q.seg.rsvd_ulp;
    v_dlv_ent.hdr_raw = p0_q.seg.hdr_raw;
    if (v_place) begin
      v_dlv_ent.kind = RNIC_DLV_PLACED;
      v_dlv_ent.length = p0_q.msg_len;
    end else if (v_error) begin
      v_dlv_ent.kind = RNIC_DLV_ERROR;
      v_dlv_ent.length = {16'd0, p0_q.seg.seg_bytes};
      v_dlv_ent.err_type = p0_q.err_type;
      v_dlv_ent.err_code = p0_q.err_code;
      v_dlv_ent.err_at_ssn = p0_q.err_at_ssn;
    end else if (v_qset) begin
      v_dlv_ent.kind = RNIC_DLV_QUEUE_SET;
      v_dlv_ent.stag_qn = p0_q.seg.qn;
      v_dlv_ent.rsvd_ulp = '0;
      v_dlv_ent.hdr_raw = '0;
    end else begin
      v_dlv_ent = '0;
      v_dlv_ent.kind = v_fence ? RNIC_DLV_FENCE : RNIC_DLV_STREAM_RESET;
      v_dlv_ent.stream = p0_q.arg;
    end
    cq_push = p0_take && v_dlv;
    cq_wdata = {v_place_w, v_place || v_error, v_dlv_ent};

    bytes_ev_d = p0_take && v_place && !v_stale;
    bytes_d = v_place ? p0_q.pay_bytes : bytes_q;

  end

  // ---------------------------------------------------------------------------------------------
  // AW generator
  // ---------------------------------------------------------------------------------------------
  logic [63:0] aw_addr_q, aw_addr_d;
  logic [7:0] aw_len_q, aw_len_d;
  logic [15:0] aw_rem_q, aw_rem_d;  // beats of the segment after the current burst
  logic aw_valid_d, aw_hs, aw_seg_done;
  logic [15:0] aw_next;             // beats of the next whole-block burst
  logic [15:0] aw_next_m1;

  localparam logic [15:0] BlkBeats = 16'(2 ** BlkW);

  always_comb begin
    aw_hs = aw_valid_q && awready_i;
    aw_seg_done = aw_hs && aw_rem_q == 16'd0;
    aw_next = (aw_rem_q > BlkBeats) ? BlkBeats : aw_rem_q;
    aw_next_m1 = aw_next - 16'd1;
    aw_addr_d = aw_addr_q;
    aw_len_d = aw_len_q;
    aw_rem_d = aw_rem_q;
    aw_valid_d = aw_valid_q;
    aq_pop = 1'b0;
    if (!aw_valid_q || aw_hs) begin
      if (aw_valid_q && aw_rem_q != 16'd0) begin
        aw_addr_d = {aw_addr_q[63:LogBnd] + {{(63 - LogBnd){1'b0}}, 1'b1}, {LogBnd{1'b0}}};
        aw_len_d = aw_next_m1[7:0];
        aw_rem_d = aw_rem_q - aw_next;
        aw_valid_d = 1'b1;
      end else if (!aq_empty) begin
        aw_addr_d = {aq_rdata[AqW-1:24], {Lb{1'b0}}};
        aw_len_d = aq_rdata[23:16];
        aw_rem_d = aq_rdata[15:0];
        aw_valid_d = 1'b1;
        aq_pop = 1'b1;
      end else begin
        aw_valid_d = 1'b0;
      end
    end
  end

  assign awaddr_o = aw_addr_q;
  assign awlen_o = aw_len_q;
  assign awvalid_o = aw_valid_q;

  // ---------------------------------------------------------------------------------------------
  // Data engine
  // ---------------------------------------------------------------------------------------------
  // sq head as read from the RAM: loaded into the current-segment registers below (issue 12: the
  // RAM read data only feeds a register, never the per-beat decision logic).
  logic h_place, h_dlv, h_lead_z, h_nz, h_n1, h_n2;
  logic [2:0] h_lead;
  logic [Lb-1:0] h_shm1, h_off, h_ll;
  logic [15:0] h_nout;
  logic [BlkW-1:0] h_blk;
  assign {h_place, h_dlv, h_lead, h_lead_z, h_shm1, h_nout, h_nz, h_n1, h_n2, h_off, h_ll, h_blk} =
      sq_rdata;

  // The current segment (c_v_q: loaded; its fields and progress). The per-beat decision only reads
  // registers: flags that the next state precomputes (lead == 0, write beats left == 0 / 1 / 2,
  // W queue room >= 1 / >= 2) instead of comparing counters (issue 12).
  logic c_v_q, c_v_d, c_ld;
  logic c_place_q, c_dlv_q;
  logic [Lb-1:0] c_shm1_q, c_off_q, c_ll_q;
  logic in_act_q, in_act_d;         // an input beat of the segment was taken
  logic [2:0] lead_q, lead_d;       // lead (header-only) beats still to come
  logic lead_z_q, lead_z_d;         // lead_q == 0
  logic [15:0] orem_q, orem_d;      // write beats still to produce
  logic oz_q, oz_d, o1_q, o1_d, o2_q, o2_d;  // orem_q == 0, 1, 2
  logic ofirst_q, ofirst_d;         // no write beat produced yet
  logic [BlkW-1:0] blk_q, blk_d;    // block beat index of the next write beat
  logic [DataWidth-1:0] rprev_q, rprev_d;  // the previous input beat shifted down by sh bytes

  // Flush: write beats a malformed PLACE still owes after its last input beat (never more than
  // two per input beat when the packet holds hdr_bytes + pay_bytes; kept so AW and W always agree).
  logic [15:0] fl_rem_q, fl_rem_d;
  logic fl_act_q, fl_act_d;         // fl_rem_q != 0
  logic fl_1_q, fl_1_d;             // fl_rem_q == 1
  logic [Lb-1:0] fl_ll_q, fl_ll_d;
  logic [BlkW-1:0] fl_blk_q, fl_blk_d;

  // W queue: write beats produced, leaving one per cycle. Entry: data, strb, wlast, first beat of a
  // burst, cons_seq when it was produced (see dlv).
  localparam int WqW = DataWidth + Bytes + 2 + SeqW;
  // Two flat RAMs (even and odd positions): the two write beats of a cycle always go to different
  // banks, so each bank has one write port and maps to distributed RAM.
  logic [WqW-1:0] wq0_mem [WqDepth/2];
  logic [WqW-1:0] wq1_mem [WqDepth/2];
  logic wq0_we, wq1_we, a_to1, sel0_a, sel1_a;
  logic [WqPw-2:0] wq0_wa, wq1_wa;
  logic [WqW-1:0] wq0_wd, wq1_wd;
  logic [WqPw-1:0] wq_wr_q, wq_wr_d, wq_rd_q, wq_rd_d;
  logic [WqPw:0] wq_cnt_q, wq_cnt_d;
  logic wq_nz_q, wq_nz_d;           // wq_cnt_q != 0
  logic wq_f1_q, wq_f1_d;           // room for one more write beat: wq_cnt_q <= WqDepth - 1
  logic wq_f2_q, wq_f2_d;           // room for two: wq_cnt_q <= WqDepth - 2
  logic [WqW-1:0] wq_head, wq_a, wq_b;
  // W output register: the oldest write beat, taken from the W queue head, with a second register
  // behind it (a register slice): wvalid_o depends on registers only, the queue RAM read ends at a
  // register, and wready_i reaches only these two registers (logic-depth budget).
  logic [WqW-1:0] wo_q;
  logic wo_v_q, wo_v_d, wq_pop, wo_move;
  logic [WqW-1:0] ws_q;             // the second register of the output pair (a beat popped while
  logic ws_v_q, ws_v_d;             //   the output register waits for wready_i)
  logic w_bfirst;
  logic [SeqW-1:0] w_seq;   // cons_seq of the W queue head
  logic signed [15:0] aw_ahead_q, aw_ahead_d;  // AW handshakes minus W bursts started
  logic ah_pos_q, ah_pos_d, ah_zero_q, ah_zero_d;  // aw_ahead_q > 0, == 0
  logic ah_gt1, ah_eq1, ah_eqm1, ah_inc, ah_dec;
  assign ah_gt1 = aw_ahead_q > 16'sd1;
  assign ah_eq1 = aw_ahead_q == 16'sd1;
  assign ah_eqm1 = aw_ahead_q == -16'sd1;
  logic aw_ok, w_hs;

  logic [15:0] rem_a, orem_m1, orem_m2;
  logic [BlkW-1:0] blk_p1;
  logic is_e, is_t, wq_room, take, eng_hs, push_a, push_b, fl_fire, ev_pop, last_b_e, rem_a2;
  logic [1:0] n_push;
  logic [DataWidth-1:0] r_cur, l_cur, data_a, data_b;
  logic [Bytes-1:0] strb_a, strb_b;
  logic last_a, last_b, first_b, bend_b, bzero_b;
  logic [Lb-1:0] ll_b;
  logic [WqPw:0] le1, le2, le3, le4;  // unused width helpers below
  logic c_le1, c_le2, c_le3, c_le4, c_ge2;

  always_comb begin
    // Write beat k takes packet bytes from input beats k + lead - 1 and k + lead:
    // (beat[k+lead-1] >> sh) | (beat[k+lead] << (Bytes - sh)), sh = shm1 + 1 bytes. Each input beat
    // is shifted both ways once: r_cur is kept for the next write beat, l_cur completes this one.
    r_cur = {8'h00, beat_data_i[DataWidth-1:8]} >> {c_shm1_q, 3'b000};
    l_cur = beat_data_i << {~c_shm1_q, 3'b000};

    // The input beat makes write beat k = (beat index - lead) ready (is_e) and, when it is the last
    // one, the tail write beat that needs no later input (is_t): 0, 1 or 2 write beats.
    is_e = c_place_q && lead_z_q && !oz_q;
    // rem_a = orem - is_e (write beats left after A) != 0
    is_t = c_place_q && beat_last_i && !oz_q && (!lead_z_q || !o1_q);
    orem_m1 = orem_q - 16'd1;
    orem_m2 = orem_q - 16'd2;
    rem_a = is_e ? orem_m1 : orem_q;
    last_b_e = is_e ? o2_q : o1_q;                    // rem_a == 1
    rem_a2 = is_e ? (orem_q == 16'd3) : o2_q;         // rem_a == 2

    // One input beat per cycle, whenever the W queue has room for what it produces (occupancy as
    // registered: the W handshake of this cycle does not count, so wready never reaches the FIFO).
    wq_room = !(is_e || is_t) || wq_f2_q || (wq_f1_q && !(is_e && is_t));
    take = c_v_q && !fl_act_q && wq_room;
    beat_ready_o = take;
    eng_hs = take && beat_valid_i;
    sq_pop = eng_hs && beat_last_i;
    ev_pop = sq_pop && c_dlv_q && !c_place_q;  // ERROR or zero-length PLACE finished
    fl_fire = fl_act_q && wq_f1_q;
    // The next sq entry becomes the current segment when the current one took its last beat.
    c_ld = !sq_empty && (!c_v_q || sq_pop);
    c_v_d = c_ld || (c_v_q && !sq_pop);

    // Write beat A: the one this input beat completes.
    data_a = (in_act_q ? rprev_q : '0) | l_cur;  // first input beat: nothing before it counts
    last_a = o1_q;
    strb_a = (ofirst_q ? ({Bytes{1'b1}} << c_off_q) : {Bytes{1'b1}}) &
             (last_a ? ({Bytes{1'b1}} >> (~c_ll_q)) : {Bytes{1'b1}});
    wq_a = {data_a, strb_a, last_a || (&blk_q), ofirst_q || blk_q == '0, cons_seq_q};

    // Write beat B: the tail of the current segment, or a flush beat.
    blk_p1 = blk_q + 1'b1;
    data_b = fl_act_q ? rprev_q : r_cur;
    first_b = !fl_act_q && ofirst_q && !is_e;
    last_b = fl_act_q ? fl_1_q : last_b_e;
    // block index of B: fl_blk_q, or blk_q + is_e; its end (all ones) and start (zero)
    bend_b = fl_act_q ? (&fl_blk_q) : (is_e ? (&blk_p1) : (&blk_q));
    bzero_b = fl_act_q ? (fl_blk_q == '0) : (is_e ? (&blk_q) : (blk_q == '0));
    ll_b = fl_act_q ? fl_ll_q : c_ll_q;
    strb_b = (first_b ? ({Bytes{1'b1}} << c_off_q) : {Bytes{1'b1}}) &
             (last_b ? ({Bytes{1'b1}} >> (~ll_b)) : {Bytes{1'b1}});
    wq_b = {data_b, strb_b, last_b || bend_b, first_b || bzero_b, cons_seq_q};

    push_a = eng_hs && is_e;
    push_b = (eng_hs && is_t) || fl_fire;
    n_push = {1'b0, push_a} + {1'b0, push_b};

    // W queue
    wq_head = wq_rd_q[0] ? wq1_mem[wq_rd_q[WqPw-1:1]] : wq0_mem[wq_rd_q[WqPw-1:1]];
    w_seq = wq_head[SeqW-1:0];
    w_bfirst = wo_q[SeqW];
    aw_ok = ah_pos_q || (ah_zero_q && aw_valid_q);
    wvalid_o = wo_v_q && (!w_bfirst || aw_ok);
    w_hs = wvalid_o && wready_i;
    // The W queue pops into the output pair while its second register is empty (a register: the
    // pop and the queue's read address do not hang on wready_i; the depth budget).
    wq_pop = wq_nz_q && !ws_v_q;
    wo_move = w_hs || !wo_v_q;               // the output register takes the next beat or empties
    wo_v_d = wo_move ? (ws_v_q || wq_pop) : 1'b1;
    ws_v_d = wo_move ? 1'b0 : (ws_v_q || wq_pop);
    // A goes to wq_wr_q, B right after it (or to wq_wr_q without A). The bank addresses follow from
    // wq_wr_q alone; which beat a bank takes from is_e (registers), not from the handshake.
    a_to1 = wq_wr_q[0];
    sel0_a = !a_to1 && is_e && !fl_act_q;
    sel1_a = a_to1 && is_e && !fl_act_q;
    wq0_we = (push_a && !a_to1) || (push_b && (a_to1 == push_a));
    wq1_we = (push_a && a_to1) || (push_b && (a_to1 != push_a));
    wq0_wd = sel0_a ? wq_a : wq_b;
    wq1_wd = sel1_a ? wq_a : wq_b;
    wq0_wa = wq_wr_q[WqPw-1:1] + {{(WqPw - 2){1'b0}}, a_to1};
    wq1_wa = wq_wr_q[WqPw-1:1];
    case (n_push)
      2'd0: wq_wr_d = wq_wr_q;
      2'd1: wq_wr_d = wq_wr_q + WqPw'(1);
      default: wq_wr_d = wq_wr_q + WqPw'(2);
    endcase
    wq_rd_d = wq_rd_q + {{(WqPw - 1){1'b0}}, wq_pop};
    // Occupancy and its flags for the next cycle: the comparisons are against this cycle's count,
    // selected by the change (n_push - wq_pop, -1..2).
    le1 = (WqPw + 1)'(WqDepth - 1);
    le2 = (WqPw + 1)'(WqDepth - 2);
    le3 = (WqPw + 1)'(WqDepth - 3);
    le4 = (WqPw + 1)'(WqDepth - 4);
    c_le1 = wq_cnt_q <= le1;
    c_le2 = wq_cnt_q <= le2;
    c_le3 = wq_cnt_q <= le3;
    c_le4 = wq_cnt_q <= le4;
    c_ge2 = wq_cnt_q >= (WqPw + 1)'(2);
    wq_cnt_d = wq_cnt_q;
    wq_nz_d = wq_nz_q;
    wq_f1_d = wq_f1_q;
    wq_f2_d = wq_f2_q;
    case ({n_push, wq_pop})
      3'b001: begin  // -1
        wq_cnt_d = wq_cnt_q - (WqPw + 1)'(1);
        wq_nz_d = c_ge2;
        wq_f1_d = 1'b1;
        wq_f2_d = c_le1;
      end
      3'b011: begin  // +1 -1
      end
      3'b010, 3'b101: begin  // +1
        wq_cnt_d = wq_cnt_q + (WqPw + 1)'(1);
        wq_nz_d = 1'b1;
        wq_f1_d = c_le2;
        wq_f2_d = c_le3;
      end
      3'b100, 3'b110, 3'b111: begin  // +2
        wq_cnt_d = wq_cnt_q + (WqPw + 1)'(2);
        wq_nz_d = 1'b1;
        wq_f1_d = c_le3;
        wq_f2_d = c_le4;
      end
      default: ;  // 0
    endcase

    aw_ahead_d = aw_ahead_q + (aw_hs ? 16'sd1 : 16'sd0) - ((w_hs && w_bfirst) ? 16'sd1 : 16'sd0);
    // aw_ahead_d > 0 and == 0 as registers for aw_ok (so wvalid_o, which the mux's W pop depends
    // on, is two LUTs from registers): from aw_ahead_q's compares and the step (+1, 0, -1).
    ah_inc = aw_hs && !(w_hs && w_bfirst);
    ah_dec = (w_hs && w_bfirst) && !aw_hs;
    ah_pos_d = ah_gt1 || (ah_eq1 && !ah_dec) || (ah_zero_q && ah_inc);
    ah_zero_d = (ah_zero_q && !ah_inc && !ah_dec) || (ah_eq1 && ah_dec) || (ah_eqm1 && ah_inc);

    // Current segment progress.
    in_act_d = in_act_q;
    lead_d = lead_q;
    lead_z_d = lead_z_q;
    orem_d = orem_q;
    oz_d = oz_q;
    o1_d = o1_q;
    o2_d = o2_q;
    ofirst_d = ofirst_q;
    blk_d = blk_q;
    rprev_d = rprev_q;
    fl_rem_d = fl_rem_q;
    fl_act_d = fl_act_q;
    fl_1_d = fl_1_q;
    fl_ll_d = fl_ll_q;
    fl_blk_d = fl_blk_q;
    if (fl_fire) begin
      fl_rem_d = fl_rem_q - 16'd1;
      fl_act_d = !fl_1_q;
      fl_1_d = fl_rem_q == 16'd2;
      fl_blk_d = fl_blk_q + 1'b1;
    end
    if (eng_hs) begin
      rprev_d = r_cur;
      if (beat_last_i) begin
        if (is_t && !last_b_e) begin
          fl_rem_d = is_e ? orem_m2 : orem_m1;  // rem_a - 1
          fl_act_d = 1'b1;
          fl_1_d = rem_a2;
          fl_ll_d = c_ll_q;
          fl_blk_d = (is_e ? blk_p1 : blk_q) + 1'b1;
        end
      end else begin
        in_act_d = 1'b1;
        lead_d = lead_q - {2'd0, c_place_q && !lead_z_q};
        lead_z_d = lead_z_q || (c_place_q && lead_q == 3'd1);
        orem_d = rem_a;
        oz_d = is_e ? o1_q : oz_q;
        o1_d = is_e ? o2_q : o1_q;
        o2_d = rem_a2;
        ofirst_d = ofirst_q && !is_e;
        blk_d = is_e ? blk_p1 : blk_q;
      end
    end
    if (c_ld) begin
      in_act_d = 1'b0;
      lead_d = h_lead;
      lead_z_d = h_lead_z;
      orem_d = h_nout;
      oz_d = h_nz;
      o1_d = h_n1;
      o2_d = h_n2;
      ofirst_d = 1'b1;
      blk_d = h_blk;
    end
  end

  always_ff @(posedge clk_i) begin
    if (wq0_we) wq0_mem[wq0_wa] <= wq0_wd;
  end
  always_ff @(posedge clk_i) begin
    if (wq1_we) wq1_mem[wq1_wa] <= wq1_wd;
  end

  always_ff @(posedge clk_i) begin
    if (wo_move) wo_q <= ws_v_q ? ws_q : wq_head;
    if (!wo_move && !ws_v_q) ws_q <= wq_head;
  end

  assign wdata_o = wo_q[WqW-1 -: DataWidth];
  assign wstrb_o = wo_q[SeqW+2 +: Bytes];
  assign wlast_o = wo_q[SeqW+1];

  // ---------------------------------------------------------------------------------------------
  // dlv: in order, once the data engine (and for PLACE the AW generator) finished the segment
  // ---------------------------------------------------------------------------------------------
  // Segments that need their data finished (PLACE, ERROR) complete in order: cons_seq counts those
  // consumed to the end (a PLACE when its last write beat enters the W queue), every W queue entry
  // carries the count of its time, so the segments before the W queue head are the finished ones.
  // The oldest beat not yet sent is the W output register's, else the W queue head's. head_seq_q is
  // its count as of the cycle before (registered, so the W queue RAM read does not reach the dlv
  // handshake): it only grows, so it never claims a segment finished too early, and dlv_seq_q never
  // passes it (a dlv pop needs head_seq_q - dlv_seq_q >= 1). With the W path empty the count is
  // cons_seq_q itself, which head_seq_q catches up with in the next cycle.
  logic [SeqW-1:0] cons_seq_q, cons_seq_d, dlv_seq_q, dlv_seq_d, head_seq_q;
  logic data_done;  // the segment at the dlv queue head has its data finished
  logic [CqPw:0] aw_done_q, aw_done_d;  // segments whose AWs are all issued, dlv still queued
  logic h_need_aw, h_need_data;

  always_comb begin
    h_need_aw = cq_rdata[CqW-1];
    h_need_data = cq_rdata[CqW-2];
    dlv_o = cq_rdata[DlvW-1:0];
    // W path empty: every consumed segment is finished (registers only, no RAM read): no delay for
    // segments without write beats (zero-length PLACE, ERROR) behind an idle W path.
    // (count - dlv_seq_q != 0, i.e. the counts differ: compares without a carry chain.)
    data_done = wo_v_q || wq_nz_q ? head_seq_q != dlv_seq_q : cons_seq_q != dlv_seq_q;
    dlv_valid_o = !cq_empty && (!h_need_data || data_done) &&
                  (!h_need_aw || aw_done_q != '0);
    cq_pop = dlv_valid_o && dlv_ready_i;
    cons_seq_d = cons_seq_q + SeqW'((push_a && last_a) || (push_b && last_b) || ev_pop);
    dlv_seq_d = dlv_seq_q + SeqW'(cq_pop && h_need_data);
    aw_done_d = aw_done_q + (CqPw + 1)'(aw_seg_done) - (CqPw + 1)'(cq_pop && h_need_aw);
  end

  assign awseglast_o = aw_rem_q == 16'd0;
  assign bytes_event_o = bytes_ev_q;
  assign bytes_o = bytes_q;

  // The queues' room registers (declared with the queues above).
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      sq_room_q <= 1'b1;
      aq_room_q <= 1'b1;
      cq_room_q <= 1'b1;
    end else begin
      sq_room_q <= c_ld ? (sq_push ? sq_cnt < (SqPw + 1)'(SqDepth) : 1'b1)
                           : (sq_push ? sq_cnt < (SqPw + 1)'(SqDepth - 1) : sq_cnt < (SqPw + 1)'(SqDepth));
      aq_room_q <= aq_pop ? (aq_push ? aq_cnt < (AqPw + 1)'(AqDepth) : 1'b1)
                           : (aq_push ? aq_cnt < (AqPw + 1)'(AqDepth - 1) : aq_cnt < (AqPw + 1)'(AqDepth));
      cq_room_q <= cq_pop ? (cq_push ? cq_cnt < (CqPw + 1)'(CqDepth) : 1'b1)
                           : (cq_push ? cq_cnt < (CqPw + 1)'(CqDepth - 1) : cq_cnt < (CqPw + 1)'(CqDepth));
    end
  end
  `RNIC_ASSERT(a_room, clk_i, rst_ni,
      sq_room_q == !sq_full && aq_room_q == !aq_full && cq_room_q == !cq_full)

  // ---------------------------------------------------------------------------------------------
  // Flops
  // ---------------------------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      sq_wr_q <= '0;
      sq_rd_q <= '0;
      aq_wr_q <= '0;
      aq_rd_q <= '0;
      cq_wr_q <= '0;
      cq_rd_q <= '0;
      p0_valid_q <= 1'b0;
      commit_q <= '0;
      bytes_ev_q <= 1'b0;
      bytes_q <= '0;
      aw_valid_q <= 1'b0;
      aw_addr_q <= '0;
      aw_len_q <= '0;
      aw_rem_q <= '0;
      c_v_q <= 1'b0;
      in_act_q <= 1'b0;
      lead_q <= '0;
      lead_z_q <= 1'b1;
      orem_q <= '0;
      oz_q <= 1'b1;
      o1_q <= 1'b0;
      o2_q <= 1'b0;
      ofirst_q <= 1'b0;
      blk_q <= '0;
      fl_rem_q <= '0;
      fl_act_q <= 1'b0;
      fl_1_q <= 1'b0;
      fl_ll_q <= '0;
      fl_blk_q <= '0;
      wq_wr_q <= '0;
      wq_rd_q <= '0;
      wq_cnt_q <= '0;
      wq_nz_q <= 1'b0;
      wq_f1_q <= 1'b1;
      wq_f2_q <= 1'b1;
      aw_ahead_q <= '0;
      ah_pos_q <= 1'b0;
      ah_zero_q <= 1'b1;
      cons_seq_q <= '0;
      head_seq_q <= '0;
      wo_v_q <= 1'b0;
      ws_v_q <= 1'b0;
      dlv_seq_q <= '0;
      aw_done_q <= '0;
    end else begin
      sq_wr_q <= sq_wr_d;
      sq_rd_q <= sq_rd_d;
      aq_wr_q <= aq_wr_d;
      aq_rd_q <= aq_rd_d;
      cq_wr_q <= cq_wr_d;
      cq_rd_q <= cq_rd_d;
      if (vd_ready_o) p0_valid_q <= vd_valid_i;
      commit_q <= commit_d;
      bytes_ev_q <= bytes_ev_d;
      bytes_q <= bytes_d;
      aw_valid_q <= aw_valid_d;
      aw_addr_q <= aw_addr_d;
      aw_len_q <= aw_len_d;
      aw_rem_q <= aw_rem_d;
      c_v_q <= c_v_d;
      in_act_q <= in_act_d;
      lead_q <= lead_d;
      lead_z_q <= lead_z_d;
      orem_q <= orem_d;
      oz_q <= oz_d;
      o1_q <= o1_d;
      o2_q <= o2_d;
      ofirst_q <= ofirst_d;
      blk_q <= blk_d;
      fl_rem_q <= fl_rem_d;
      fl_act_q <= fl_act_d;
      fl_1_q <= fl_1_d;
      fl_ll_q <= fl_ll_d;
      fl_blk_q <= fl_blk_d;
      wq_wr_q <= wq_wr_d;
      wq_rd_q <= wq_rd_d;
      wq_cnt_q <= wq_cnt_d;
      wq_nz_q <= wq_nz_d;
      wq_f1_q <= wq_f1_d;
      wq_f2_q <= wq_f2_d;
      aw_ahead_q <= aw_ahead_d;
      ah_pos_q <= ah_pos_d;
      ah_zero_q <= ah_zero_d;
      cons_seq_q <= cons_seq_d;
      head_seq_q <= wo_v_q ? wo_q[SeqW-1:0] : (wq_nz_q ? w_seq : cons_seq_q);
      wo_v_q <= wo_v_d;
      ws_v_q <= ws_v_d;
      dlv_seq_q <= dlv_seq_d;
      aw_done_q <= aw_done_d;
    end
  end

  // Datapath registers: no reset needed (qualified by the control state above).
  always_ff @(posedge clk_i) begin
    rprev_q <= rprev_d;
    if (c_ld) begin
      c_place_q <= h_place;
      c_dlv_q <= h_dlv;
      c_shm1_q <= h_shm1;
      c_off_q <= h_off;
      c_ll_q <= h_ll;
    end
    if (vd_ready_o && vd_valid_i) p0_q <= vd_i;
  end

  // Unused inputs: keep (header bytes and lanes past the end are masked by the strobes), err_idx,
  // to/mo/dv/oversize (validate's business).
  logic unused_in;
  assign unused_in = ^{beat_keep_i, p0_q.err_idx, p0_q.seg.to, p0_q.seg.mo, p0_q.seg.dv,
                       p0_q.seg.oversize, vd_i};
  // Intermediate bits not needed at this width.
  logic unused_bits;
  assign unused_bits = ^{v_sm1, v_end_up, v_end_m1, v_first_m1, aw_next_m1, v_expd[30:0]};
  // valid/ready at the boundaries place drives: AW and W to the mux (AXI A3.3.1), dlv to deliver.
  `RNIC_ASSERT(a_ah_flags, clk_i, rst_ni,
               ah_pos_q == (aw_ahead_q > 16'sd0) && ah_zero_q == (aw_ahead_q == 16'sd0))
  `RNIC_ASSERT_HOLD(a_aw_hold, clk_i, rst_ni, awvalid_o, awready_i, {awaddr_o, awlen_o, awseglast_o})
  `RNIC_ASSERT_HOLD(a_w_hold, clk_i, rst_ni, wvalid_o, wready_i, {wdata_o, wstrb_o, wlast_o})
  `RNIC_ASSERT_HOLD(a_dlv_hold, clk_i, rst_ni, dlv_valid_o, dlv_ready_i, dlv_o)
endmodule
