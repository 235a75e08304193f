`include "rnic_defs.svh"
`include "rnic_assert.svh"
// Stage 5: in-order delivery (RFC 5041 5.3, 5.4) and the completion ring.
//
// Three decoupled parts; one item per cycle in, one completion entry written per 64/Bytes cycles:
//
// Decide (accepts one item per cycle; a registered RAM read in the accept cycle, the decision in
// the next):
// - Per stream, one RAM word {error, expected MSN per QN, next_ssn, filled[SsnWindow-1:0]} (plus a
//   copy of next_ssn for lookup's read port, and a copy of the expected MSNs, one per queue, for
//   place's read port) and a payload RAM with one slot per (stream, DDP-SSN mod SsnWindow) holding
//   last, T, STag/QN, MSN, length and RsvdULP. Only the filled bits say what a slot holds, so after
//   reset only the per-stream words are cleared (NumStreams cycles, dlv_ready_o low meanwhile), and
//   STREAM_RESET is a single write. The word written in the previous cycle is forwarded, so
//   back-to-back items of one stream (consecutive DDP-SSNs in particular) see each other at once
//   (whether it is the item's stream is registered with the write, fw_hit_q: logic-depth budget).
// - PLACED: d = ssn - next_ssn (mod 2^16); d >= SsnWindow or a filled slot is a duplicate
//   (dup_event_o, nothing changes). d != 0: the segment fills its slot. d == 0: the segment is
//   delivered directly (never written to its slot), next_ssn advances; then, while slot next_ssn is
//   filled, it is delivered, its bit cleared and next_ssn advanced, one slot per cycle (input held
//   meanwhile; the slot after each is read ahead, so no bubble). A delivered last segment decides a
//   completion and, for an untagged message, queues a consume event; msg_event_o pulses for every
//   delivered message (CNT_MESSAGES). The per-stream word (and lookup's next_ssn copy) is written
//   in every cycle the stream's state changes.
// - Message order (RFC 5041 4.3, 5.3, 7.1 untagged #5): every untagged segment delivered in DDP-SSN
//   order must carry its queue's expected MSN (set by QUEUE_SET, + 1 per completed message, mod
//   2^32). One that does not is an ORDER ERROR: an error completion (2, 0x03) with the order flag,
//   QN and MSN; the stream's error bit is set (nothing more is delivered or filled for it until
//   STREAM_RESET) and lookup is told (a FAIL event: the stream enters the error state). No buffer
//   is consumed by it. This is what makes "a completion names the buffer its MSN names, each buffer
//   completes once" hold for any peer: completions consume buffers strictly in MSN order.
// - Expected-MSN read port for place: data one cycle after the address, including this module's
//   write of the read cycle (so place, dispatching in the next cycle, sees every write before it).
//   Delivery entries: tagged carry the STag and RsvdULP[7:0]; untagged the QN, MSN, message length
//   and RsvdULP[39:0]; both the SSN of the last segment.
// - ERROR: decides an error completion (flags: error, and tagged from the item's T bit; type, code,
//   SSN, segment length, the 18 header bytes); STag/QN, MSN and RsvdULP are zero.
// - STREAM_RESET: the stream's word becomes zero (next_ssn 0, no slot filled, no error); the echo
//   (RNIC_CONS_RESET) is queued behind earlier consume events.
// - QUEUE_SET: the queue's expected MSN becomes the item's first MSN (both copies); the echo
//   (RNIC_CONS_QSET) is queued; a fence marker goes into the completion queue.
// - FENCE: a fence marker goes into the completion queue.
// - Items for a stream >= NumStreams: PLACED counts as a duplicate, STREAM_RESET only echoes.
// - The decision stalls (dlv_ready_o low) only while the completion or consume queue it needs is
//   full.
// Completion queue: decided entries in order, each with a data mark: place's commit_now_i when it
//   was decided (segments place has committed to write, those dispatched in that very cycle
//   included: place did not yet see this cycle's expected-MSN write).
// Write: the head entry is written once b_segs_i has reached its mark (32-bit wrapping compare:
//   every segment committed before the decision is acknowledged, so no write into a buffer can
//   follow the completion that hands it back), cq_enable_i is 1, the ring has room counting
//   entries in flight (full: written - cq_cons_i >=
//   2^cq_log2_i, unsigned) and fewer than AckDepth entries await their B. One AW burst of 64 bytes
//   (64/Bytes beats, all strobes) at {cq_base_i[63:6], 6'b0} + 64 * (index mod 2^cq_log2_i); AW and
//   W are offered independently; the next entry follows in the cycle after the previous one's last
//   handshake. Earlier entries' B responses are not waited for.
// Acknowledge: at each entry's AW handshake its position in the AW sequence (aw_count_i + 1) is
//   queued; cq_prod_o advances by one when b_count_i reaches the oldest, so in order and only
//   after the entry's own write is acknowledged.
// - cq_reset_i: producer 0 (phase 1), nothing in flight counted any more. An entry whose write is
//   under way is finished on the bus but not counted; decided entries not yet started are written
//   to the new ring.
// - cq_enable_i = 0: entries reaching the head are discarded (nothing written). An entry already
//   loaded is still written, to the ring it was loaded for: cq_busy_o is 1 from its load until the B
//   of the last completion write issued has come (b_count_i reaching that AW's aw_count_i + 1, B in
//   AW order). Regs takes no new ring configuration while it is 1, and software does not free or
//   reuse the ring memory until it has read CQ_CTRL.busy = 0 after disabling.
// - Fence markers (FENCE, QUEUE_SET) leave the head once its mark is reached and every completion
//   before them is written and acknowledged; fence_done_o pulses (the command completes).
module rnic_rx_deliver #(
  parameter int DataWidth  = 512,  // bits
  parameter int NumStreams = 256,  // streams
  parameter int NumQns     = 4,    // untagged queues per stream (power of two)
  parameter int SsnWindow  = 64    // DDP-SSN window in segments (power of two)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  rnic_dlv_t              dlv_i,
  input  logic                   dlv_valid_i,
  output logic                   dlv_ready_o,
  input  logic [15:0]            ssn_rd_stream_i,  // read port for lookup: next_ssn of a stream,
  output logic [15:0]            ssn_rd_next_o,    //   one cycle after the address
  output logic [15:0]            cons_stream_o,    // -> lookup: RNIC_CONS_* events of (stream, qn)
  output logic [7:0]             cons_qn_o,
  output logic [1:0]             cons_kind_o,
  output logic                   cons_valid_o,
  input  logic                   cons_ready_i,
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
  input  logic [15:0]            exp_rd_stream_i,  // place's read port: expected MSN of a queue,
  input  logic [7:0]             exp_rd_qn_i,      //   one cycle after the address, this module's
  output logic [31:0]            exp_rd_data_o,    //   write of the address cycle included
  input  logic [31:0]            commit_now_i,     // place: segments committed to write (marks)
  input  logic [31:0]            b_segs_i,         // mux: place segments whose writes are acknowledged
  input  logic [31:0]            aw_count_i,
  input  logic [31:0]            b_count_i,
  output logic                   fence_done_o,     // pulse: a fence marker left the queue
  output logic                   msg_event_o,      // counter events
  output logic                   dup_event_o,
  output logic                   order_err_event_o // an order error completion was decided
);
  localparam int Bytes = DataWidth / 8;
  localparam int Beats = 64 / Bytes;                             // beats per completion entry
  localparam int BeatW = (Beats > 1) ? $clog2(Beats) : 1;
  localparam int WinW = $clog2(SsnWindow);
  localparam int StreamW = (NumStreams > 1) ? $clog2(NumStreams) : 1;
  localparam int QnW = (NumQns > 1) ? $clog2(NumQns) : 1;
  localparam int RamQueues = (NumStreams > 1 ? NumStreams : 2) * (NumQns > 1 ? NumQns : 2);
  localparam int QueueW = StreamW + QnW;
  localparam int RamStreams = (NumStreams > 1) ? NumStreams : 2;  // RAM rows (address width >= 1)
  localparam int NumSlots = RamStreams * SsnWindow;
  localparam int SlotAw = StreamW + WinW;
  localparam logic [StreamW-1:0] LastStream = StreamW'(RamStreams - 1);
  localparam logic [BeatW-1:0] LastBeat = BeatW'(Beats - 1);
  localparam logic [16:0] NumStreams17 = 17'(NumStreams);
  localparam int DqDepth = 16;    // decided completions not yet written
  localparam int ConsDepth = 8;   // consume events not yet taken by lookup
  localparam int AckDepth = 32;   // completion writes in flight (written, B not yet seen)
  localparam int AckAw = $clog2(AckDepth);

  // Per-stream word: filled bits in [SsnWindow-1:0], next_ssn above, then the expected MSN of each
  // QN (32 bits each), then the error bit.
  localparam int ExpLsb = SsnWindow + 16;
  localparam int ErrBit = ExpLsb + 32 * NumQns;
  localparam int StW = ErrBit + 1;

  // Slot payload (flat vector).
  localparam int PLast = 0;
  localparam int PTagged = 1;
  localparam int PStagQnLsb = 2;    // 32 bits
  localparam int PMsnLsb = 34;      // 32 bits
  localparam int PLenLsb = 66;      // 32 bits
  localparam int PRsvdLsb = 98;     // 40 bits
  localparam int PayW = 138;

  // Decided completion (flat vector). Aux: error: the header bytes; delivery: STag/QN in [31:0],
  // MSN in [63:32], RsvdULP in [103:64]. The mark is the MSB field (not kept by the write stage).
  localparam int CeErr = 0;
  localparam int CeTagged = 1;
  localparam int CeStreamLsb = 2;   // 16 bits
  localparam int CeSsnLsb = 18;     // 16 bits
  localparam int CeLenLsb = 34;     // 32 bits
  localparam int CeTypeLsb = 66;    // 4 bits
  localparam int CeCodeLsb = 70;    // 8 bits
  localparam int CeAuxLsb = 78;     // 144 bits
  localparam int CeOrder = 222;     // order error: aux holds QN and MSN, not the header
  localparam int CeMarker = 223;    // a fence marker, not an entry
  localparam int CeMarkLsb = 224;   // 32 bits
  localparam int CeW = 256;

  // Consume event (flat vector): kind, stream, QN.
  localparam int CoW = 26;

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_rx_deliver: DataWidth must be 64, 128, 256 or 512");
    if (NumStreams < 1 || NumStreams > 65536)
      $fatal(1, "rnic_rx_deliver: NumStreams must be 1..65536");
    if (SsnWindow < 2 || SsnWindow > 4096 || (SsnWindow & (SsnWindow - 1)) != 0)
      $fatal(1, "rnic_rx_deliver: SsnWindow must be a power of two in 2..4096");
    if (NumQns < 1 || NumQns > 256 || (NumQns & (NumQns - 1)) != 0)
      $fatal(1, "rnic_rx_deliver: NumQns must be a power of two <= 256");
  end

  // ---- RAMs -------------------------------------------------------------------------------------
  logic [StW-1:0] st_mem [RamStreams];
  logic [15:0] nssn_lk_mem [RamStreams];
  logic [PayW-1:0] slot_mem [NumSlots];

  logic st_we;
  logic [StreamW-1:0] st_waddr, st_raddr;
  logic [StW-1:0] st_wdata, st_rdata_q;
  logic [15:0] nssn_lk_rdata_q;
  logic slot_we;
  logic [SlotAw-1:0] slot_waddr, slot_raddr;
  logic [PayW-1:0] slot_wdata, slot_rdata_q;

  always_ff @(posedge clk_i) begin
    if (st_we) st_mem[st_waddr] <= st_wdata;
    st_rdata_q <= st_mem[st_raddr];
  end

  always_ff @(posedge clk_i) begin
    if (st_we) nssn_lk_mem[st_waddr] <= st_wdata[SsnWindow +: 16];
    nssn_lk_rdata_q <= nssn_lk_mem[ssn_rd_stream_i[StreamW-1:0]];
  end

  assign ssn_rd_next_o = nssn_lk_rdata_q;

  always_ff @(posedge clk_i) begin
    if (slot_we) slot_mem[slot_waddr] <= slot_wdata;
    slot_rdata_q <= slot_mem[slot_raddr];
  end

  // Expected MSN per queue, for place. The write of the read cycle is forwarded. Neither reset nor
  // STREAM_RESET clears it: a queue's entry means something from its QUEUE_SET on, and lookup
  // places nothing for a queue before that (not configured: Invalid QN).
  logic [31:0] exp_mem [RamQueues];
  logic exp_we, exp_fw_q;
  logic [QueueW-1:0] exp_waddr, exp_raddr;
  logic [31:0] exp_wdata, exp_rdata_q, exp_fw_data_q;
  assign exp_raddr = {exp_rd_stream_i[StreamW-1:0], exp_rd_qn_i[QnW-1:0]};
  always_ff @(posedge clk_i) begin
    if (exp_we) exp_mem[exp_waddr] <= exp_wdata;
    exp_rdata_q <= exp_mem[exp_raddr];
    exp_fw_q <= exp_we && exp_waddr == exp_raddr;
    exp_fw_data_q <= exp_wdata;
  end
  assign exp_rd_data_o = exp_fw_q ? exp_fw_data_q : exp_rdata_q;

  // ---- decide: state ----------------------------------------------------------------------------
  logic init_d, init_q;                   // clearing the per-stream words after reset
  logic [StreamW-1:0] icnt_d, icnt_q;
  logic bv_d, bv_q;                       // an item awaits its decision
  logic dr_d, dr_q;                       // delivering filled slots of item_q's stream
  logic [StW-1:0] dr_word_d, dr_word_q;   // while draining: the stream's word (next_ssn's slot is
                                          //   in slot_rdata_q)
  logic fw_hit_d, fw_hit_q;               // the per-stream word written in the previous cycle is
                                          //   item_q's stream's (compared a cycle early: budget)
  // datapath (no reset)
  rnic_dlv_t item_d, item_q;
  logic [StW-1:0] fw_word_d, fw_word_q;

  // ---- queues -----------------------------------------------------------------------------------
  logic ce_push, ce_ready, ce_valid, ce_pop;
  logic [CeW-1:0] ce_wdata, ce_rdata;
  logic co_push, co_ready;
  logic [CoW-1:0] co_wdata, co_rdata;
  logic [$clog2(DqDepth):0] ce_count;
  logic [$clog2(ConsDepth):0] co_count;

  rnic_fifo #(.Width(CeW), .Depth(DqDepth)) u_cq_fifo (
    .clk_i, .rst_ni,
    .in_data_i(ce_wdata), .in_valid_i(ce_push), .in_ready_o(ce_ready),
    .out_data_o(ce_rdata), .out_valid_o(ce_valid), .out_ready_i(ce_pop),
    .count_o(ce_count));

  rnic_fifo #(.Width(CoW), .Depth(ConsDepth)) u_cons_fifo (
    .clk_i, .rst_ni,
    .in_data_i(co_wdata), .in_valid_i(co_push), .in_ready_o(co_ready),
    .out_data_o(co_rdata), .out_valid_o(cons_valid_o), .out_ready_i(cons_ready_i),
    .count_o(co_count));

  assign cons_qn_o = co_rdata[7:0];
  assign cons_stream_o = co_rdata[23:8];
  assign cons_kind_o = co_rdata[25:24];

  // ---- decide: helpers --------------------------------------------------------------------------
  // The expected MSN of queue q in a stream word, and the word with it replaced.
  function automatic logic [31:0] word_exp(input logic [StW-1:0] w, input logic [QnW-1:0] q);
    word_exp = '0;
    for (int i = 0; i < NumQns; i++) begin
      if (q == QnW'(i)) word_exp = w[ExpLsb + 32 * i +: 32];
    end
  endfunction
  function automatic logic [StW-1:0] word_set_exp(input logic [StW-1:0] w, input logic [QnW-1:0] q,
                                                  input logic [31:0] v);
    word_set_exp = w;
    for (int i = 0; i < NumQns; i++) begin
      if (q == QnW'(i)) word_set_exp[ExpLsb + 32 * i +: 32] = v;
    end
  endfunction

  logic [StreamW-1:0] item_stream;
  logic stream_ok;
  logic [StW-1:0] word;                   // item_q's stream word (RAM or forwarded)
  logic [15:0] w_nssn, ahead, dr_nssn;
  logic [SsnWindow-1:0] w_fill;
  logic [WinW-1:0] item_idx;
  logic [PayW-1:0] item_pay;

  // The segment delivered in this cycle: the item itself (direct) or the drained slot.
  logic [PayW-1:0] rel;                   // its payload (slot layout)
  logic [15:0] rel_ssn;
  logic [StW-1:0] rel_word;               // the stream word before it (next_ssn = rel_ssn)
  logic [QnW-1:0] rel_qn;
  logic [31:0] rel_exp, rel_msn1;
  logic rel_bad, rel_last, rel_untagged, rel_ok;  // rel_ok: its completion/consume/error can be queued
  logic [StW-1:0] rel_next;               // the word after it (next_ssn + 1, filled bit clear)
  logic rel_more;                         // the slot after it is filled
  logic [SsnWindow-1:0] rel_fill;
  logic [CeW-1:0] ce_rel, ce_item_err, ce_marker;

  assign item_stream = item_q.stream[StreamW-1:0];
  assign stream_ok = {1'b0, item_q.stream} < NumStreams17;
  assign word = fw_hit_q ? fw_word_q : st_rdata_q;
  assign w_nssn = word[SsnWindow +: 16];
  assign w_fill = word[SsnWindow-1:0];
  assign ahead = item_q.ssn - w_nssn;
  assign item_idx = item_q.ssn[WinW-1:0];
  assign dr_nssn = dr_word_q[SsnWindow +: 16];

  always_comb begin
    item_pay = '0;
    item_pay[PLast] = item_q.last;
    item_pay[PTagged] = item_q.is_tagged;
    item_pay[PStagQnLsb +: 32] = item_q.stag_qn;
    item_pay[PMsnLsb +: 32] = item_q.msn;
    item_pay[PLenLsb +: 32] = item_q.length;
    item_pay[PRsvdLsb +: 40] = item_q.rsvd_ulp;
  end

  always_comb begin
    if (dr_q) begin
      rel = slot_rdata_q;
      rel_ssn = dr_nssn;
      rel_word = dr_word_q;
    end else begin
      rel = item_pay;
      rel_ssn = item_q.ssn;
      rel_word = word;
    end
    rel_qn = rel[PStagQnLsb +: QnW];
    rel_exp = word_exp(rel_word, rel_qn);
    rel_msn1 = rel[PMsnLsb +: 32] + 32'd1;
    rel_last = rel[PLast];
    rel_untagged = !rel[PTagged];
    rel_bad = rel_untagged && rel[PMsnLsb +: 32] != rel_exp;  // RFC 5041 4.3 broken: order error
    // What it queues: an order error (entry + FAIL), a completion (+ consume when untagged), or
    // nothing.
    rel_ok = rel_bad ? (ce_ready && co_ready)
                     : (!rel_last || (ce_ready && (!rel_untagged || co_ready)));
    rel_next = rel_word;
    rel_next[SsnWindow +: 16] = rel_ssn + 16'd1;
    rel_next[SsnWindow-1:0] = rel_word[SsnWindow-1:0] & ~(SsnWindow'(1) << rel_ssn[WinW-1:0]);
    if (rel_bad) rel_next[ErrBit] = 1'b1;
    else if (rel_last && rel_untagged) rel_next = word_set_exp(rel_next, rel_qn, rel_msn1);
    rel_fill = rel_next[SsnWindow-1:0];
    rel_more = rel_fill[rel_next[SsnWindow +: WinW]];

    ce_rel = '0;
    ce_rel[CeTagged] = !rel_untagged;
    ce_rel[CeStreamLsb +: 16] = item_q.stream;
    ce_rel[CeSsnLsb +: 16] = rel_ssn;
    ce_rel[CeAuxLsb +: 32] = rel[PStagQnLsb +: 32];
    ce_rel[CeAuxLsb + 32 +: 32] = rel[PMsnLsb +: 32];
    ce_rel[CeMarkLsb +: 32] = commit_now_i;
    if (rel_bad) begin
      ce_rel[CeErr] = 1'b1;
      ce_rel[CeOrder] = 1'b1;
      ce_rel[CeTypeLsb +: 4] = RNIC_ET_UntaggedMsnRange;
      ce_rel[CeCodeLsb +: 8] = RNIC_EC_UntaggedMsnRange;
    end else begin
      ce_rel[CeLenLsb +: 32] = rel[PLenLsb +: 32];
      ce_rel[CeAuxLsb + 64 +: 40] = rel[PRsvdLsb +: 40];
    end

    ce_item_err = '0;
    ce_item_err[CeErr] = 1'b1;
    ce_item_err[CeTagged] = item_q.is_tagged;
    ce_item_err[CeStreamLsb +: 16] = item_q.stream;
    ce_item_err[CeSsnLsb +: 16] = item_q.ssn;
    ce_item_err[CeLenLsb +: 32] = item_q.length;
    ce_item_err[CeTypeLsb +: 4] = item_q.err_type;
    ce_item_err[CeCodeLsb +: 8] = item_q.err_code;
    ce_item_err[CeAuxLsb +: 144] = item_q.hdr_raw;
    ce_item_err[CeMarkLsb +: 32] = commit_now_i;

    ce_marker = '0;
    ce_marker[CeMarker] = 1'b1;
    ce_marker[CeMarkLsb +: 32] = commit_now_i;
  end

  // ---- decide -----------------------------------------------------------------------------------
  logic free;  // the decide stage takes a new item in this cycle
  logic deliver_rel;  // the segment in rel is delivered in this cycle

  always_comb begin
    init_d = init_q;
    icnt_d = icnt_q;
    dr_d = dr_q;
    dr_word_d = dr_word_q;

    st_we = 1'b0;
    st_waddr = item_stream;
    st_wdata = '0;
    slot_we = 1'b0;
    slot_waddr = {item_stream, item_idx};
    slot_wdata = item_pay;
    slot_raddr = {item_stream, dr_nssn[WinW-1:0]};  // a held drain re-reads its slot
    exp_we = 1'b0;
    exp_waddr = {item_stream, rel_qn};
    exp_wdata = rel_msn1;

    ce_push = 1'b0;
    ce_wdata = ce_rel;
    co_push = 1'b0;
    co_wdata = {RNIC_CONS_CONSUME, item_q.stream, 8'(rel_qn)};
    msg_event_o = 1'b0;
    dup_event_o = 1'b0;
    order_err_event_o = 1'b0;
    free = 1'b0;
    deliver_rel = 1'b0;

    if (init_q) begin
      st_we = 1'b1;
      st_waddr = icnt_q;
      icnt_d = icnt_q + 1'b1;
      if (icnt_q == LastStream) init_d = 1'b0;
    end else if (dr_q) begin
      // Slot dr_nssn is filled and in slot_rdata_q.
      if (rel_ok) begin
        deliver_rel = 1'b1;
        dr_word_d = rel_next;
        if (!rel_bad && rel_more) begin
          slot_raddr = {item_stream, rel_next[SsnWindow +: WinW]};
        end else begin
          dr_d = 1'b0;
          free = 1'b1;
        end
      end
    end else if (bv_q) begin
      free = 1'b1;
      unique case (item_q.kind)
        RNIC_DLV_PLACED: begin
          if (stream_ok && word[ErrBit]) begin
            // The stream failed at delivery: nothing more is filled, delivered or counted (its
            // payload, if any, went to a buffer the card still owned; it comes back flushed).
          end else if (!stream_ok || ahead[15:WinW] != '0 || w_fill[item_idx]) begin
            dup_event_o = 1'b1;
          end else if (ahead != 16'd0) begin
            slot_we = 1'b1;
            st_we = 1'b1;
            st_wdata = word;
            st_wdata[SsnWindow-1:0] = w_fill | (SsnWindow'(1) << item_idx);
          end else if (rel_ok) begin
            deliver_rel = 1'b1;
            if (!rel_bad && rel_more) begin
              slot_raddr = {item_stream, rel_next[SsnWindow +: WinW]};
              dr_d = 1'b1;
              dr_word_d = rel_next;
              free = 1'b0;
            end
          end else begin
            free = 1'b0;  // no room for its completion or consume event
          end
        end
        RNIC_DLV_ERROR: begin
          ce_wdata = ce_item_err;
          ce_push = ce_ready;
          free = ce_ready;
        end
        RNIC_DLV_STREAM_RESET: begin
          st_we = stream_ok && co_ready;
          st_wdata = '0;
          co_wdata = {RNIC_CONS_RESET, item_q.stream, 8'd0};
          co_push = co_ready;
          free = co_ready;
        end
        RNIC_DLV_FENCE: begin
          ce_wdata = ce_marker;
          ce_push = ce_ready;
          free = ce_ready;
        end
        RNIC_DLV_QUEUE_SET: begin
          // The queue's expected MSN (both copies), the echo, and a fence marker.
          if (ce_ready && co_ready) begin
            st_we = stream_ok;
            st_wdata = word_set_exp(word, item_q.stag_qn[QnW-1:0], item_q.msn);
            exp_we = stream_ok;
            exp_waddr = {item_stream, item_q.stag_qn[QnW-1:0]};
            exp_wdata = item_q.msn;
            co_wdata = {RNIC_CONS_QSET, item_q.stream, item_q.stag_qn[7:0]};
            co_push = 1'b1;
            ce_wdata = ce_marker;
            ce_push = 1'b1;
          end else begin
            free = 1'b0;
          end
        end
        default: ;  // unused code: ignored
      endcase
    end else begin
      free = 1'b1;
    end

    // Delivering a segment: its word, and what it queues.
    if (deliver_rel) begin
      st_we = 1'b1;
      st_wdata = rel_next;
      if (rel_bad) begin
        ce_push = 1'b1;
        co_wdata = {RNIC_CONS_FAIL, item_q.stream, 8'd0};
        co_push = 1'b1;
        order_err_event_o = 1'b1;
      end else if (rel_last) begin
        ce_push = 1'b1;
        msg_event_o = 1'b1;
        co_push = rel_untagged;
        exp_we = rel_untagged;
      end
    end

    fw_word_d = st_wdata;
  end

  // Kept apart from the decision (which reads no dlv_i input), so no path from dlv_valid_i to
  // dlv_ready_o appears. An item held in the stage (or the stream being drained) keeps bv_q only
  // while not free; the stream word is read in the cycle an item is taken and again while held.
  assign dlv_ready_o = free;
  assign bv_d = free ? dlv_valid_i : (bv_q && !dr_d);
  assign item_d = (free && dlv_valid_i) ? dlv_i : item_q;
  assign st_raddr = free ? dlv_i.stream[StreamW-1:0] : item_stream;
  // Forwarding: the word written now (st_waddr: icnt_q while clearing, else item_stream) is the
  // next item's (item_d's stream). The address compares use flops and ports only; they are made
  // here rather than in the next cycle to keep the decision within the logic-depth budget.
  logic fw_eq_in, fw_eq_hold;
  assign fw_eq_in = (init_q ? icnt_q : item_stream) == dlv_i.stream[StreamW-1:0];
  assign fw_eq_hold = !init_q || icnt_q == item_stream;
  assign fw_hit_d = st_we && ((free && dlv_valid_i) ? fw_eq_in : fw_eq_hold);

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
  // datapath (no reset)
  logic [CeMarkLsb-1:0] wr_d, wr_q;
  logic [63:0] wr_addr_d, wr_addr_q;
  logic wr_phase_d, wr_phase_q;

  logic aw_hs, w_hs, aw_fin, w_fin, load, discard, mk_done, gate, ack_push, ack_pop, ack_any;
  logic fdone_q;
  logic [31:0] last_aw_q, last_b_wait;    // aw_count_i + 1 at this module's last AW handshake
  logic [31:0] cq_size, cq_used, cq_index, cq_lap, inflight, mark_wait, ack_head, ack_wait;

  assign aw_hs = awvalid_o && awready_i;
  assign w_hs = wvalid_o && wready_i;
  assign aw_fin = !aw_pend_q || awready_i;
  assign w_fin = !w_pend_q || (wready_i && beat_q == LastBeat);

  assign cq_size = 32'd1 << cq_log2_i;
  assign cq_used = widx_q - cq_cons_i;
  assign cq_index = widx_q & (cq_size - 32'd1);
  assign cq_lap = widx_q >> cq_log2_i;
  assign inflight = widx_q - prod_q;
  assign mark_wait = b_segs_i - ce_rdata[CeMarkLsb +: 32];
  assign gate = ce_valid && !mark_wait[31];  // every segment committed before it is acknowledged

  // An entry is written (enabled ring with room), or discarded (ring disabled); a fence marker
  // leaves once nothing before it is in flight.
  assign load = gate && !ce_rdata[CeMarker] && cq_enable_i && cq_used < cq_size &&
                inflight < 32'(AckDepth) && !cq_reset_i && (!wv_q || (aw_fin && w_fin));
  assign discard = ce_valid && !ce_rdata[CeMarker] && !cq_enable_i && !cq_reset_i;
  assign mk_done = gate && ce_rdata[CeMarker] && !wv_q && inflight == 32'd0 && !cq_reset_i;
  assign ce_pop = load || discard || mk_done;
  assign fence_done_o = fdone_q;

  // Busy: an entry loading now or loaded and not yet fully on the bus, or its B (and so every
  // earlier one) not in. The load cycle counts, so regs (which registers this) never takes a new
  // ring configuration in the cycle after a load, however close together its writes come.
  assign last_b_wait = b_count_i - last_aw_q;
  assign cq_busy_o = load || wv_q || last_b_wait[31];

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
      wr_d = ce_rdata[CeMarkLsb-1:0];
      wr_addr_d = {cq_base_i[63:6], 6'b0} + {26'b0, cq_index, 6'b0};
      wr_phase_d = ~cq_lap[0];  // 1 on the first lap
    end
    if (ack_push) ack_wp_d = ack_wp_q + 1'b1;
    if (ack_pop) begin
      ack_rp_d = ack_rp_q + 1'b1;
      prod_d = prod_q + 32'd1;
    end
    if (cq_reset_i) begin
      widx_d = '0;
      prod_d = '0;
      ack_rp_d = ack_wp_q;
    end
  end

  // ---- flops ------------------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      init_q <= 1'b1;
      icnt_q <= '0;
      bv_q <= 1'b0;
      dr_q <= 1'b0;
      fw_hit_q <= 1'b0;
      fdone_q <= 1'b0;
      wv_q <= 1'b0;
      aw_pend_q <= 1'b0;
      w_pend_q <= 1'b0;
      beat_q <= '0;
      drop_q <= 1'b0;
      widx_q <= '0;
      prod_q <= '0;
      ack_wp_q <= '0;
      ack_rp_q <= '0;
      last_aw_q <= '0;
    end else begin
      init_q <= init_d;
      icnt_q <= icnt_d;
      bv_q <= bv_d;
      dr_q <= dr_d;
      fw_hit_q <= fw_hit_d;
      fdone_q <= mk_done;
      wv_q <= wv_d;
      aw_pend_q <= aw_pend_d;
      w_pend_q <= w_pend_d;
      beat_q <= beat_d;
      drop_q <= drop_d;
      widx_q <= widx_d;
      prod_q <= prod_d;
      ack_wp_q <= ack_wp_d;
      ack_rp_q <= ack_rp_d;
      if (aw_hs) last_aw_q <= aw_count_i + 32'd1;
    end
  end

  always_ff @(posedge clk_i) begin
    item_q <= item_d;
    dr_word_q <= dr_word_d;
    fw_word_q <= fw_word_d;
    wr_q <= wr_d;
    wr_addr_q <= wr_addr_d;
    wr_phase_q <= wr_phase_d;
  end

  // ---- completion entry -------------------------------------------------------------------------
  logic [511:0] cqe;

  always_comb begin
    cqe = '0;
    cqe[RNIC_CQE_STREAM_LSB +: 16] = wr_q[CeStreamLsb +: 16];
    cqe[RNIC_CQE_FLAGS_LSB +: 8] = {4'b0, wr_q[CeOrder], wr_q[CeTagged], wr_q[CeErr], wr_phase_q};
    cqe[RNIC_CQE_SSN_LSB +: 16] = wr_q[CeSsnLsb +: 16];
    if (wr_q[CeErr]) begin
      cqe[RNIC_CQE_ERR_TYPE_LSB +: 8] = {4'b0, wr_q[CeTypeLsb +: 4]};
      cqe[RNIC_CQE_ERR_CODE_LSB +: 8] = wr_q[CeCodeLsb +: 8];
      cqe[RNIC_CQE_LENGTH_LSB +: 32] = wr_q[CeLenLsb +: 32];
      if (wr_q[CeOrder]) begin  // order error: QN and MSN, no header
        cqe[RNIC_CQE_STAG_QN_LSB +: 32] = wr_q[CeAuxLsb +: 32];
        cqe[RNIC_CQE_MSN_LSB +: 32] = wr_q[CeAuxLsb + 32 +: 32];
      end else begin
        cqe[RNIC_CQE_HEADER_LSB +: 144] = wr_q[CeAuxLsb +: 144];
      end
    end else begin
      cqe[RNIC_CQE_STAG_QN_LSB +: 32] = wr_q[CeAuxLsb +: 32];
      if (wr_q[CeTagged]) begin
        cqe[RNIC_CQE_RSVD_ULP_LSB +: 8] = wr_q[CeAuxLsb + 64 +: 8];
      end else begin
        cqe[RNIC_CQE_MSN_LSB +: 32] = wr_q[CeAuxLsb + 32 +: 32];
        cqe[RNIC_CQE_LENGTH_LSB +: 32] = wr_q[CeLenLsb +: 32];
        cqe[RNIC_CQE_RSVD_ULP_LSB +: 40] = wr_q[CeAuxLsb + 64 +: 40];
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
  assign awvalid_o = wv_q && aw_pend_q;
  assign wvalid_o = wv_q && w_pend_q;

  // Address bits past NumStreams, the base's offset bits, the compare differences' low bits, the
  // queues' fill levels.
  logic unused_bits;
  assign unused_bits = ^{ssn_rd_stream_i, exp_rd_stream_i, exp_rd_qn_i, cq_base_i[5:0], mark_wait[30:0], ack_wait[30:0], last_b_wait[30:0], cq_lap,
                         ce_count, co_count};
  // valid/ready at the boundaries deliver drives: AW and W of the completion writes (AXI A3.3.1),
  // the consume events to lookup.
  `RNIC_ASSERT_HOLD(a_aw_hold, clk_i, rst_ni, awvalid_o, awready_i, {awaddr_o, awlen_o})
  `RNIC_ASSERT_HOLD(a_w_hold, clk_i, rst_ni, wvalid_o, wready_i, {wdata_o, wstrb_o, wlast_o})
  `RNIC_ASSERT_HOLD(a_cons_hold, clk_i, rst_ni, cons_valid_o, cons_ready_i,
                    {cons_stream_o, cons_qn_o, cons_kind_o})
endmodule
