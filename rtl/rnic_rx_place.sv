`include "rnic_defs.svh"
// Stage 4: DMA placement. Pops each SEG verdict's packet beats; for PLACE writes the payload to the
// host address (realigned, byte strobes, bursts split at 4 KiB and 256 beats); executes FENCE.
//
// Structure (docs/rtl-architecture.md, rnic_rx_place):
//   dispatch  takes one verdict per cycle, precomputes the segment's shift, lead (header-only)
//             beats, write beats and first burst, and pushes it into small in-order queues: sq
//             (every SEG, drives the data engine), aq (PLACE with payload, drives the AW
//             generator), cq (every verdict that yields an rnic_dlv_t). FENCE holds it until done.
//   AW gen    one burst per cycle from aq: the first burst ends at the next block boundary (4 KiB,
//             or 256 beats when that is less), the others are whole blocks.
//   data      pops the sq head's beats. Write beat k = ({in[k+lead], in[k+lead-1]} >> 8*shift); the
//             one beat a segment may need after its last input beat (tail) comes from the held beat
//             alone and overlaps the next segment's lead beat. A one-beat ahead register banks the
//             input cycles a tail costs and spends them on a lead beat (two beats in one cycle).
//             W is one register stage.
//   dlv       the cq head leaves once the data engine and (PLACE) the AW generator have finished
//             its segment (in-order completion counters): all AWs and W beats of a PLACE go first.
// A burst's first W beat is held until its AW is issued or presented (AW never after W).
module rnic_rx_place #(
  parameter int DataWidth = 512  // bits (64..512)
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
  output logic [63:0]            awaddr_o,      // aligned down to DataWidth/8; INCR, full-width beats
  output logic [7:0]             awlen_o,
  output logic                   awvalid_o,
  input  logic                   awready_i,
  output logic [DataWidth-1:0]   wdata_o,
  output logic [DataWidth/8-1:0] wstrb_o,
  output logic                   wlast_o,
  output logic                   wvalid_o,
  input  logic                   wready_i,
  input  logic [31:0]            aw_count_i,    // from the write mux: AW and B handshakes so far
  input  logic [31:0]            b_count_i,
  output rnic_dlv_t              dlv_o,         // -> deliver, after every AW of the segment was issued
  output logic                   dlv_valid_o,
  input  logic                   dlv_ready_i,
  output logic                   fence_done_o,  // pulse: a FENCE found every earlier write acknowledged
  output logic                   bytes_event_o, // pulse per PLACE with its payload bytes (counter)
  output logic [15:0]            bytes_o
);
  localparam int Bytes = DataWidth / 8;
  localparam int Lb = $clog2(Bytes);
  // Bursts never cross a block: 4 KiB, or 256 beats when that is less (64-bit bus: 2 KiB).
  localparam int LogBnd = (Lb + 8 < 12) ? Lb + 8 : 12;
  localparam int BlkW = LogBnd - Lb;  // beat index within a block
  localparam int SqDepth = 4;         // segment queue (data engine)
  localparam int AqDepth = 4;         // AW queue
  localparam int CqDepth = 8;         // dlv queue: covers a verdict per cycle with dlv_ready high
  localparam int SqPw = $clog2(SqDepth);
  localparam int AqPw = $clog2(AqDepth);
  localparam int CqPw = $clog2(CqDepth);
  localparam int DlvW = $bits(dlv_o);
  // sq entry: place, dlv, lead[2:0], shm1, nout[15:0], off, ll, blk
  localparam int SqW = 2 + 3 + Lb + 16 + Lb + Lb + BlkW;
  // aq entry: aligned address / Bytes, first awlen, beats after the first burst
  localparam int AqW = (64 - Lb) + 8 + 16;
  // cq entry: need_aw, need_data, dlv
  localparam int CqW = 2 + DlvW;

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_rx_place: DataWidth must be 64, 128, 256 or 512");
  end

  typedef enum logic [1:0] {
    FenceIdle   = 2'd0,  // accepting verdicts
    FenceDrain  = 2'd1,  // waiting until every earlier AW is issued
    FenceSample = 2'd2,  // sampling aw_count (one cycle after the last AW: the count includes it)
    FenceWait   = 2'd3   // waiting until b_count reaches the sample
  } fence_e;

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
  assign sq_rdata = sq_mem[sq_rd_q[SqPw-1:0]];
  assign aq_rdata = aq_mem[aq_rd_q[AqPw-1:0]];
  assign cq_rdata = cq_mem[cq_rd_q[CqPw-1:0]];

  always_comb begin
    sq_wr_d = sq_wr_q + {{SqPw{1'b0}}, sq_push};
    sq_rd_d = sq_rd_q + {{SqPw{1'b0}}, sq_pop};
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
  fence_e fence_q, fence_d;
  logic [31:0] fence_aw_q, fence_aw_d;
  logic fence_done_q, fence_done_d;
  logic bytes_ev_q, bytes_ev_d;
  logic [15:0] bytes_q, bytes_d;
  logic aw_valid_q;

  logic vd_hs, v_seg, v_place, v_place_w, v_error, v_reset, v_fence, v_dlv;
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

  always_comb begin
    v_seg = vd_i.action != RNIC_ACT_TOKEN;
    v_place = vd_i.action == RNIC_ACT_PLACE;
    v_place_w = v_place && vd_i.pay_bytes != 16'd0;
    v_error = vd_i.action == RNIC_ACT_ERROR;
    v_reset = vd_i.action == RNIC_ACT_TOKEN && vd_i.kind == RNIC_ITEM_STREAM_RESET;
    v_fence = vd_i.action == RNIC_ACT_TOKEN && vd_i.kind == RNIC_ITEM_FENCE;
    v_dlv = v_place || v_error || v_reset;

    vd_ready_o = fence_q == FenceIdle && !sq_full && !aq_full && !cq_full;
    vd_hs = vd_valid_i && vd_ready_o;

    // Write beat k covers packet bytes k*Bytes + s .. with s = hdr - off; it is produced when input
    // beat k + lead arrives, from that beat and the one before, shifted by shm1 + 1 bytes.
    v_off = vd_i.addr[Lb-1:0];
    v_sm1 = {5'd0, vd_i.hdr_bytes} - {{(10 - Lb){1'b0}}, v_off} - 10'd1;
    v_shm1 = v_sm1[Lb-1:0];
    v_lead = v_sm1[9] ? 3'd0 : v_sm1[Lb+2:Lb] + 3'd1;
    v_end = {1'b0, vd_i.pay_bytes} + {{(17 - Lb){1'b0}}, v_off};
    v_end_up = v_end + 17'(Bytes - 1);
    v_end_m1 = v_end - 17'd1;
    v_nout = {{(Lb - 1){1'b0}}, v_end_up[16:Lb]};
    v_ll = v_end_m1[Lb-1:0];
    v_blk = vd_i.addr[LogBnd-1:Lb];
    v_room = {1'b1, {BlkW{1'b0}}} - {1'b0, v_blk};
    v_room16 = {{(15 - BlkW){1'b0}}, v_room};
    v_first = (v_nout < v_room16) ? v_nout : v_room16;
    v_first_m1 = v_first - 16'd1;
    v_rem = v_nout - v_first;

    sq_push = vd_hs && v_seg;
    sq_wdata = {v_place_w, v_dlv, v_lead, v_shm1, v_nout, v_off, v_ll, v_blk};
    aq_push = vd_hs && v_place_w;
    aq_wdata = {vd_i.addr[63:Lb], v_first_m1[7:0], v_rem};

    v_dlv_ent = '0;
    v_dlv_ent.stream = vd_i.seg.stream;
    v_dlv_ent.ssn = vd_i.seg.ssn;
    v_dlv_ent.last = vd_i.seg.last;
    v_dlv_ent.is_tagged = vd_i.seg.is_tagged;
    v_dlv_ent.stag_qn = vd_i.seg.is_tagged ? vd_i.seg.stag : vd_i.seg.qn;
    v_dlv_ent.msn = vd_i.seg.msn;
    v_dlv_ent.rsvd_ulp = vd_i.seg.rsvd_ulp;
    v_dlv_ent.hdr_raw = vd_i.seg.hdr_raw;
    if (v_place) begin
      v_dlv_ent.kind = RNIC_DLV_PLACED;
      v_dlv_ent.length = vd_i.msg_len;
    end else if (v_error) begin
      v_dlv_ent.kind = RNIC_DLV_ERROR;
      v_dlv_ent.length = {16'd0, vd_i.seg.seg_bytes};
      v_dlv_ent.err_type = vd_i.err_type;
      v_dlv_ent.err_code = vd_i.err_code;
    end else begin
      v_dlv_ent = '0;
      v_dlv_ent.kind = RNIC_DLV_STREAM_RESET;
      v_dlv_ent.stream = vd_i.arg;
    end
    cq_push = vd_hs && v_dlv;
    cq_wdata = {v_place_w, v_place || v_error, v_dlv_ent};

    bytes_ev_d = vd_hs && v_place;
    bytes_d = v_place ? vd_i.pay_bytes : bytes_q;

    // FENCE: every earlier AW issued -> sample aw_count a cycle later -> wait for b_count.
    fence_d = fence_q;
    fence_aw_d = fence_aw_q;
    fence_done_d = 1'b0;
    unique case (fence_q)
      FenceIdle: if (vd_hs && v_fence) fence_d = FenceDrain;
      FenceDrain: if (aq_empty && !aw_valid_q) fence_d = FenceSample;
      FenceSample: begin
        fence_aw_d = aw_count_i;
        fence_d = FenceWait;
      end
      FenceWait: begin
        if ($signed(b_count_i - fence_aw_q) >= 32'sd0) begin  // wrapping: b caught up
          fence_done_d = 1'b1;
          fence_d = FenceIdle;
        end
      end
      default: fence_d = FenceIdle;
    endcase
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
  // sq head
  logic h_place, h_dlv;
  logic [2:0] h_lead;
  logic [Lb-1:0] h_shm1, h_off, h_ll;
  logic [15:0] h_nout;
  logic [BlkW-1:0] h_blk;
  assign {h_place, h_dlv, h_lead, h_shm1, h_nout, h_off, h_ll, h_blk} = sq_rdata;

  // Progress in the head segment (valid while in_act_q; otherwise the head's start values apply).
  logic in_act_q, in_act_d;
  logic [2:0] lead_q, lead_d;
  logic [15:0] orem_q, orem_d;      // write beats still to produce
  logic ofirst_q, ofirst_d;         // no write beat produced yet
  logic [BlkW-1:0] blk_q, blk_d;    // block beat index of the next write beat
  logic [DataWidth-1:0] prev_q, prev_d;

  // Ahead register: one input beat taken from the FIFO while the engine could not use it (credit).
  // The engine can consume a segment's last header-only beat together with the next beat, so cycles
  // lost to tails are won back at a later segment whose first write beat needs two input beats.
  logic a_valid_q, a_valid_d, a_last_q, a_last_d;
  logic [DataWidth-1:0] a_data_q, a_data_d;

  // Tail: write beats left after the segment's last input beat (1 for a well-formed packet).
  logic [15:0] tail_rem_q, tail_rem_d;
  logic tail_first_q, tail_first_d;
  logic [Lb-1:0] tail_shm1_q, tail_shm1_d, tail_off_q, tail_off_d, tail_ll_q, tail_ll_d;
  logic [BlkW-1:0] tail_blk_q, tail_blk_d;

  // W register
  logic w_valid_q, w_valid_d, w_last_q, w_last_d, w_bfirst_q, w_bfirst_d, w_end_q, w_end_d;
  logic [DataWidth-1:0] w_data_q, w_data_d;
  logic [Bytes-1:0] w_strb_q, w_strb_d;
  logic signed [15:0] aw_ahead_q, aw_ahead_d;  // AW handshakes minus W bursts started
  logic aw_ok, w_hs, pipe_rdy;

  logic [2:0] lead_e;
  logic [15:0] orem_e, rem_after;
  logic ofirst_e;
  logic [BlkW-1:0] blk_e;
  logic tail_act, tail_fire, tail_fin, is_lead, is_out, pop_ok, eng_hs, out_fire, ev_pop;
  logic c_valid, c_last, dbl, x_last;
  logic [2:0] lead_x;
  logic [DataWidth-1:0] c_data, x_hi;
  logic [DataWidth-9:0] x_lo;  // bytes 1.. of the beat before x_hi (byte 0 is never selected)
  logic [Lb-1:0] o_shm1, o_off, o_ll;
  logic o_first, o_last;
  logic [BlkW-1:0] o_blk;
  logic [2*DataWidth-9:0] win;
  logic [2*DataWidth-9:0] win_sh;

  always_comb begin
    aw_ok = aw_ahead_q > 16'sd0 || (aw_ahead_q == 16'sd0 && aw_valid_q);
    wvalid_o = w_valid_q && (!w_bfirst_q || aw_ok);
    w_hs = wvalid_o && wready_i;
    pipe_rdy = !w_valid_q || w_hs;

    lead_e = in_act_q ? lead_q : h_lead;
    orem_e = in_act_q ? orem_q : h_nout;
    ofirst_e = in_act_q ? ofirst_q : 1'b1;
    blk_e = in_act_q ? blk_q : h_blk;

    tail_act = tail_rem_q != 16'd0;
    tail_fire = tail_act && pipe_rdy;
    tail_fin = tail_fire && tail_rem_q == 16'd1;

    // The engine's current input beat: the ahead register if it holds one, else the FIFO head.
    c_valid = a_valid_q || beat_valid_i;
    c_last = a_valid_q ? a_last_q : beat_last_i;
    c_data = a_valid_q ? a_data_q : beat_data_i;
    // Double step: the ahead register holds the segment's last header-only beat and the FIFO the
    // next one: consume both and produce the first write beat in this cycle.
    dbl = a_valid_q && !a_last_q && beat_valid_i && !sq_empty && h_place && lead_e == 3'd1 &&
          !tail_act && pipe_rdy;
    lead_x = dbl ? 3'd0 : lead_e;
    x_last = dbl ? beat_last_i : c_last;
    x_hi = dbl ? beat_data_i : c_data;
    x_lo = dbl ? a_data_q[DataWidth-1:8] : prev_q[DataWidth-1:8];

    is_lead = h_place && lead_x != 3'd0;
    is_out = h_place && lead_x == 3'd0 && orem_e != 16'd0;
    if (sq_empty) pop_ok = 1'b0;
    else if (is_lead) pop_ok = !tail_act || tail_fin;  // header only: overlaps the previous tail
    else pop_ok = !tail_act && pipe_rdy;
    eng_hs = pop_ok && c_valid;
    out_fire = eng_hs && is_out;
    sq_pop = eng_hs && x_last;
    ev_pop = sq_pop && h_dlv && !h_place;  // ERROR or zero-length PLACE finished

    // FIFO side: refill the ahead register when the engine takes its beat, fill it when the engine
    // cannot take the FIFO head.
    beat_ready_o = !a_valid_q || pop_ok;
    a_valid_d = a_valid_q;
    a_last_d = a_last_q;
    a_data_d = a_data_q;
    if (a_valid_q) begin
      if (dbl) begin
        a_valid_d = 1'b0;
      end else if (pop_ok) begin
        a_valid_d = beat_valid_i;
        a_last_d = beat_last_i;
        a_data_d = beat_data_i;
      end
    end else if (beat_valid_i && !pop_ok) begin
      a_valid_d = 1'b1;
      a_last_d = beat_last_i;
      a_data_d = beat_data_i;
    end

    // The write beat of this cycle: from the tail, or from the popped beat and the one before.
    o_shm1 = tail_act ? tail_shm1_q : h_shm1;
    o_off = tail_act ? tail_off_q : h_off;
    o_ll = tail_act ? tail_ll_q : h_ll;
    o_first = tail_act ? tail_first_q : ofirst_e;
    o_last = tail_act ? tail_rem_q == 16'd1 : orem_e == 16'd1;
    o_blk = tail_act ? tail_blk_q : blk_e;
    win = {x_hi, x_lo};
    win_sh = win >> {o_shm1, 3'b000};

    w_valid_d = w_valid_q && !w_hs;
    w_data_d = w_data_q;
    w_strb_d = w_strb_q;
    w_last_d = w_last_q;
    w_bfirst_d = w_bfirst_q;
    w_end_d = w_end_q;
    if (out_fire || tail_fire) begin
      w_valid_d = 1'b1;
      w_data_d = win_sh[DataWidth-1:0];
      w_strb_d = (o_first ? ({Bytes{1'b1}} << o_off) : {Bytes{1'b1}}) &
                 (o_last ? ({Bytes{1'b1}} >> (~o_ll)) : {Bytes{1'b1}});
      w_last_d = o_last || (&o_blk);
      w_bfirst_d = o_first || o_blk == '0;
      w_end_d = o_last;
    end

    aw_ahead_d = aw_ahead_q + (aw_hs ? 16'sd1 : 16'sd0) - ((w_hs && w_bfirst_q) ? 16'sd1 : 16'sd0);

    // Tail progress, then the head segment's progress.
    tail_rem_d = tail_rem_q;
    tail_first_d = tail_first_q;
    tail_shm1_d = tail_shm1_q;
    tail_off_d = tail_off_q;
    tail_ll_d = tail_ll_q;
    tail_blk_d = tail_blk_q;
    if (tail_fire) begin
      tail_rem_d = tail_rem_q - 16'd1;
      tail_first_d = 1'b0;
      tail_blk_d = tail_blk_q + 1'b1;
    end

    in_act_d = in_act_q;
    lead_d = lead_q;
    orem_d = orem_q;
    ofirst_d = ofirst_q;
    blk_d = blk_q;
    prev_d = prev_q;
    rem_after = orem_e - {15'd0, out_fire};
    if (eng_hs) begin
      prev_d = x_hi;
      if (x_last) begin
        in_act_d = 1'b0;
        if (h_place && rem_after != 16'd0) begin
          tail_rem_d = rem_after;
          tail_first_d = ofirst_e && !out_fire;
          tail_shm1_d = h_shm1;
          tail_off_d = h_off;
          tail_ll_d = h_ll;
          tail_blk_d = blk_e + {{(BlkW - 1){1'b0}}, out_fire};
        end
      end else begin
        in_act_d = 1'b1;
        lead_d = lead_x - {2'd0, is_lead};
        orem_d = rem_after;
        ofirst_d = ofirst_e && !out_fire;
        blk_d = blk_e + {{(BlkW - 1){1'b0}}, out_fire};
      end
    end
  end

  assign wdata_o = w_data_q;
  assign wstrb_o = w_strb_q;
  assign wlast_o = w_last_q;

  // ---------------------------------------------------------------------------------------------
  // dlv: in order, once the data engine (and for PLACE the AW generator) finished the segment
  // ---------------------------------------------------------------------------------------------
  logic [3:0] data_done_q, data_done_d;  // finished segments whose dlv is still queued
  logic [3:0] aw_done_q, aw_done_d;
  logic h_need_aw, h_need_data;

  always_comb begin
    h_need_aw = cq_rdata[CqW-1];
    h_need_data = cq_rdata[CqW-2];
    dlv_o = cq_rdata[DlvW-1:0];
    dlv_valid_o = !cq_empty && (!h_need_data || data_done_q != 4'd0) &&
                  (!h_need_aw || aw_done_q != 4'd0);
    cq_pop = dlv_valid_o && dlv_ready_i;
    data_done_d = data_done_q + {3'd0, w_hs && w_end_q} + {3'd0, ev_pop} -
                  {3'd0, cq_pop && h_need_data};
    aw_done_d = aw_done_q + {3'd0, aw_seg_done} - {3'd0, cq_pop && h_need_aw};
  end

  assign fence_done_o = fence_done_q;
  assign bytes_event_o = bytes_ev_q;
  assign bytes_o = bytes_q;

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
      fence_q <= FenceIdle;
      fence_aw_q <= '0;
      fence_done_q <= 1'b0;
      bytes_ev_q <= 1'b0;
      bytes_q <= '0;
      aw_valid_q <= 1'b0;
      aw_addr_q <= '0;
      aw_len_q <= '0;
      aw_rem_q <= '0;
      in_act_q <= 1'b0;
      lead_q <= '0;
      orem_q <= '0;
      ofirst_q <= 1'b0;
      blk_q <= '0;
      tail_rem_q <= '0;
      tail_first_q <= 1'b0;
      tail_shm1_q <= '0;
      tail_off_q <= '0;
      tail_ll_q <= '0;
      tail_blk_q <= '0;
      w_valid_q <= 1'b0;
      w_last_q <= 1'b0;
      w_bfirst_q <= 1'b0;
      w_end_q <= 1'b0;
      w_strb_q <= '0;
      a_valid_q <= 1'b0;
      a_last_q <= 1'b0;
      aw_ahead_q <= '0;
      data_done_q <= '0;
      aw_done_q <= '0;
    end else begin
      sq_wr_q <= sq_wr_d;
      sq_rd_q <= sq_rd_d;
      aq_wr_q <= aq_wr_d;
      aq_rd_q <= aq_rd_d;
      cq_wr_q <= cq_wr_d;
      cq_rd_q <= cq_rd_d;
      fence_q <= fence_d;
      fence_aw_q <= fence_aw_d;
      fence_done_q <= fence_done_d;
      bytes_ev_q <= bytes_ev_d;
      bytes_q <= bytes_d;
      aw_valid_q <= aw_valid_d;
      aw_addr_q <= aw_addr_d;
      aw_len_q <= aw_len_d;
      aw_rem_q <= aw_rem_d;
      in_act_q <= in_act_d;
      lead_q <= lead_d;
      orem_q <= orem_d;
      ofirst_q <= ofirst_d;
      blk_q <= blk_d;
      tail_rem_q <= tail_rem_d;
      tail_first_q <= tail_first_d;
      tail_shm1_q <= tail_shm1_d;
      tail_off_q <= tail_off_d;
      tail_ll_q <= tail_ll_d;
      tail_blk_q <= tail_blk_d;
      w_valid_q <= w_valid_d;
      w_last_q <= w_last_d;
      w_bfirst_q <= w_bfirst_d;
      w_end_q <= w_end_d;
      w_strb_q <= w_strb_d;
      a_valid_q <= a_valid_d;
      a_last_q <= a_last_d;
      aw_ahead_q <= aw_ahead_d;
      data_done_q <= data_done_d;
      aw_done_q <= aw_done_d;
    end
  end

  // Datapath registers: no reset needed (qualified by the control state above).
  always_ff @(posedge clk_i) begin
    prev_q <= prev_d;
    a_data_q <= a_data_d;
    w_data_q <= w_data_d;
  end

  // Unused inputs: keep (header bytes and lanes past the end are masked by the strobes), err_idx,
  // to/mo/dv/oversize (validate's business).
  logic unused_in;
  assign unused_in = ^{beat_keep_i, vd_i.err_idx, vd_i.seg.to, vd_i.seg.mo, vd_i.seg.dv,
                       vd_i.seg.oversize};
  // Intermediate bits not needed at this width.
  logic unused_bits;
  assign unused_bits = ^{v_sm1, v_end_up, v_end_m1, v_first_m1, aw_next_m1, win_sh};
endmodule
