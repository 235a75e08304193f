// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
`include "rnic_assert.svh"
// Stage 5: in-order delivery (RFC 5041 5.3, 5.4) and the completion ring.
//
// Decide (one item per cycle in, one segment per cycle out of it) runs in three registered steps,
// each within the logic-depth budget (docs/synthesis.md):
// M takes the item and reads its stream's sequence word; D sequences it (DDP-SSN, the reorder
// slots); O checks the message order and decides what the host is told. Then the write stage puts
// completions into the ring.
// - S's tables: per stream one RAM word {next_ssn, filled[SsnWindow-1:0]} (plus a copy of next_ssn
//   for lookup's read port) and a payload RAM with one slot per (stream, DDP-SSN mod SsnWindow)
//   holding last, T, STag/QN, MSN, length and RsvdULP, or an error mark. Per stream a record of its
//   failing segment waiting at its DDP-SSN (T, type, code, segment length, header bytes).
//   Only the filled bits say what a slot holds,
//   so after reset only the per-stream words are cleared (NumStreams cycles, dlv_ready_o low
//   meanwhile), and STREAM_RESET is a single write.
// - M (classify): the word arrives from the RAM (with D's write of M's first cycle forwarded) and M
//   keeps it current with D's writes while it waits; in the cycle D takes the item, M computes D's
//   flags from it (in window, at next_ssn, slot filled, slot after it filled), taking D's write of
//   that very cycle into account as what it is (a fill keeps next_ssn, a release advances it, a
//   reset clears the word). So back-to-back items of one stream never stall, and D decides from
//   registers only.
// - D, PLACED: d = ssn - next_ssn (mod 2^16); d >= SsnWindow or a filled slot is a duplicate
//   (dup_event_o, nothing changes). d != 0: the segment fills its slot. d == 0: the segment is
//   released directly (never written to its slot), next_ssn advances; then, while slot next_ssn is
//   filled, it is released, its bit cleared and next_ssn advanced, one slot per cycle (D holds its
//   input meanwhile; the slot after each is read ahead, so no bubble). D hands O the released
//   segments and every other item, in order, one per cycle (O's input register; D waits while O's
//   is full and O cannot move).
// - O: per queue the expected MSN (set by QUEUE_SET, + 1 per completed untagged message, mod 2^32;
//   two RAM copies written together, one for place's read port) and per stream a word {error, set
//   bit per QN} (a queue whose bit is clear expects MSN 0: STREAM_RESET is one write). O reads them
//   for the item it takes, with its own write of the previous cycle forwarded.
// - Message order (RFC 5041 4.3, 5.3, 7.1 untagged #5): every untagged segment released in DDP-SSN
//   order must carry its queue's expected MSN. One that does not is an ORDER ERROR: an error
//   completion (2, 0x03) with the order flag, QN and MSN; the stream's error bit is set and lookup
//   is told (a FAIL event: the stream enters the error state). No buffer is consumed by it. From
//   then on until STREAM_RESET the stream is still sequenced in D (slots, next_ssn, duplicates) but
//   O delivers nothing of it: no completion, no consume, no count (its payload, if any, went to a
//   buffer the card still owned; it comes back flushed). This is what makes "a completion names the
//   buffer its MSN names, each buffer completes once" hold for any peer: completions consume
//   buffers strictly in MSN order.
// - A delivered last segment decides a completion and, for an untagged message, queues a consume
//   event and writes the expected MSN; msg_event_o pulses (a cycle later, registered) for every
//   delivered message (CNT_MESSAGES). Delivery entries: tagged carry the STag and RsvdULP[7:0];
//   untagged the QN, MSN, message length and RsvdULP[39:0]; both the SSN of the last segment.
// - Expected-MSN read port for place: data one cycle after the address, including this module's
//   write of the read cycle (so place, dispatching in the next cycle, sees every write before it).
// - ERROR: an error completion (flags: error, and tagged from the item's T bit; type, code, SSN,
//   segment length, the 18 header bytes); STag/QN, MSN and RsvdULP are zero. An error with
//   err_at_ssn (every 7.1 error) is sequenced in D like a segment: at next_ssn it goes to O at once
//   (and next_ssn advances); ahead of it, it fills its slot with an error mark (a segment already
//   there is replaced: the failing one is reported) and its record is written (validate takes a
//   later failing segment of the stream only before the one waiting, so the record always holds the
//   first in DDP-SSN order); behind next_ssn (a duplicate of a delivered position that lookup saw
//   in the window) it goes to O at once. Released from its slot, it goes to O with its record.
//   O reports an error only on a stream without one (O's error bit): then it sets the bit and tells
//   lookup (a FAIL event: ERROR from then on). So a stream reports one error, at its DDP-SSN
//   position: after every message before it, and nothing after it. An LLP error (no err_at_ssn)
//   goes to O at once.
// - STREAM_RESET: D's word becomes zero (next_ssn 0, no slot filled), O's too (no error, no queue
//   set); the echo (RNIC_CONS_RESET) is queued behind earlier consume events.
// - QUEUE_SET: the queue's expected MSN becomes the item's first MSN; the echo (RNIC_CONS_QSET) is
//   queued; a fence marker goes into the completion queue.
// - FENCE: a fence marker goes into the completion queue.
// - Items for a stream >= NumStreams: PLACED counts as a duplicate, STREAM_RESET only echoes.
// - O's pushes into the completion and consume queues are registered; O waits while either queue
//   has no room (counting the registered push).
// Completion queue: a 16-entry FIFO of decided entries (rnic_ce_t) in order, each with a data mark:
//   place's commit_now_i when O decided it (segments place has committed to write, those dispatched
//   in that very cycle included: place did not yet see this cycle's expected-MSN write).
// Write: u_cq (rnic_deliver_cq, the completion-ring writer) takes the queue's head and writes each
//   entry into the ring once every segment committed before it is acknowledged; its header says how
//   (ring room, the producer index, cq_reset_i, cq_enable_i, cq_busy_o, fence markers).
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
`ifdef FORMAL
  ,
  // Observation ports for the proofs (read_verilog -formal defines FORMAL; tb/formal/deliver_fv.sv):
  // the completion queue's push and pop with the record pushed, the consume queue's push, O's
  // decision (the item O holds is the one the events name) and the drain of a torn-down stream.
  output logic                   fv_ce_push,
  output logic                   fv_ce_pop,
  output logic                   fv_ce_marker,
  output logic                   fv_ce_err,
  output logic                   fv_ce_tagged,
  output logic                   fv_ce_order,
  output logic [15:0]            fv_ce_stream,
  output logic [15:0]            fv_ce_ssn,
  output logic [31:0]            fv_ce_stag_qn,
  output logic [31:0]            fv_ce_msn,
  output logic [3:0]             fv_ce_type,
  output logic [7:0]             fv_ce_code,
  output logic                   fv_co_push,
  output logic [1:0]             fv_co_kind,
  output logic [15:0]            fv_co_stream,
  output logic [7:0]             fv_co_qn,
  output logic                   fv_dlv_rel,
  output logic                   fv_rel_last,
  output logic                   fv_rel_tagged,
  output logic [31:0]            fv_rel_stag_qn,
  output logic [31:0]            fv_rel_msn,
  output rnic_dlv_t              fv_o_item,
  output logic                   fv_s_drain,
  output logic                   fv_ce_valid
`endif
);
  localparam int WinW = $clog2(SsnWindow);
  localparam int StreamW = (NumStreams > 1) ? $clog2(NumStreams) : 1;
  localparam int QnW = (NumQns > 1) ? $clog2(NumQns) : 1;
  localparam int RamQueues = (NumStreams > 1 ? NumStreams : 2) * (NumQns > 1 ? NumQns : 2);
  localparam int QueueW = StreamW + QnW;
  localparam int RamStreams = (NumStreams > 1) ? NumStreams : 2;  // RAM rows (address width >= 1)
  localparam int NumSlots = RamStreams * SsnWindow;
  localparam int SlotAw = StreamW + WinW;
  localparam logic [StreamW-1:0] LastStream = StreamW'(RamStreams - 1);
  localparam logic [16:0] NumStreams17 = 17'(NumStreams);
  localparam int DqDepth = 16;    // decided completions not yet written
  localparam int ConsDepth = 8;   // consume events not yet taken by lookup

  // S's per-stream word: filled bits in [SsnWindow-1:0], next_ssn above.
  localparam int SqW = SsnWindow + 16;
  localparam int OswW = NumQns + 1;  // O's per-stream word: {error, set bit per QN}

  // Slot payload (flat vector).
  localparam int PLast = 0;
  localparam int PTagged = 1;
  localparam int PStagQnLsb = 2;    // 32 bits
  localparam int PMsnLsb = 34;      // 32 bits
  localparam int PLenLsb = 66;      // 32 bits
  localparam int PRsvdLsb = 98;     // 40 bits
  localparam int PErr = 138;        // an error mark: the stream's error record, at this DDP-SSN
  localparam int PayW = 139;

  // Error record per stream (flat vector): the failing segment waiting at its DDP-SSN.
  localparam int RTagged = 0;
  localparam int RTypeLsb = 1;      // 4 bits
  localparam int RCodeLsb = 5;      // 8 bits
  localparam int RLenLsb = 13;      // 16 bits: segment bytes (rnic_seg_t.seg_bytes)
  localparam int RHdrLsb = 29;      // 144 bits
  localparam int RecW = 173;

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

  // ---- S: RAMs ----------------------------------------------------------------------------------
  logic [SqW-1:0] st_mem [RamStreams];
  logic [15:0] nssn_lk_mem [RamStreams];
  logic [PayW-1:0] slot_mem [NumSlots];

  logic st_we;
  logic [StreamW-1:0] st_waddr;
  logic [SqW-1:0] st_wdata, st_rdata_q;
  logic [15:0] nssn_lk_rdata_q;
  logic slot_we;
  logic [SlotAw-1:0] slot_waddr, slot_raddr;
  logic [PayW-1:0] slot_wdata, slot_rdata_q;

  // Read with the arriving item's stream in every cycle (M has the word when it took the item).
  always_ff @(posedge clk_i) begin
    if (st_we) st_mem[st_waddr] <= st_wdata;
    st_rdata_q <= st_mem[dlv_i.stream[StreamW-1:0]];
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

  // The error records, read with the slot (a release of an error mark takes its stream's record).
  (* ram_style = "block" *)  // as LUT RAM (4096 streams), Yosys 0.23 stops: "invalid OPTION_ABITS/WIDTH combination"
  logic [RecW-1:0] rec_mem [RamStreams];
  logic rec_we;
  logic [RecW-1:0] rec_wdata, rec_rdata_q;
  always_ff @(posedge clk_i) begin
    if (rec_we) rec_mem[slot_waddr[SlotAw-1 -: StreamW]] <= rec_wdata;
    rec_rdata_q <= rec_mem[slot_raddr[SlotAw-1 -: StreamW]];
  end

  // ---- O: RAMs ----------------------------------------------------------------------------------
  // Expected MSN per queue, two copies written together: place's read port (the write of the read
  // cycle forwarded) and O's. Neither reset nor STREAM_RESET clears them: a queue's entry means
  // something from its QUEUE_SET on, and lookup places nothing for a queue before that (not
  // configured: Invalid QN; a stream enable leaves its queues unconfigured).
  logic [31:0] exp_mem [RamQueues];
  logic [31:0] exp_o_mem [RamQueues];
  logic exp_we, exp_fw_q, exp_hit_q;  // the read's cycle wrote (exp_fw_q) its queue (exp_hit_q)
  logic [QueueW-1:0] exp_waddr, exp_raddr, o_raddr;
  logic [31:0] exp_wdata, exp_rdata_q, exp_fw_data_q, exp_o_rdata_q;
  assign exp_raddr = {exp_rd_stream_i[StreamW-1:0], exp_rd_qn_i[QnW-1:0]};
  always_ff @(posedge clk_i) begin
    if (exp_we) exp_mem[exp_waddr] <= exp_wdata;
    exp_rdata_q <= exp_mem[exp_raddr];
    exp_fw_q <= exp_we;                    // (two registers: the write's decision and the
    exp_hit_q <= exp_waddr == exp_raddr;   //  compare with place's address meet after them)
    exp_fw_data_q <= exp_wdata;
  end
  assign exp_rd_data_o = (exp_fw_q && exp_hit_q) ? exp_fw_data_q : exp_rdata_q;
  always_ff @(posedge clk_i) begin
    if (exp_we) exp_o_mem[exp_waddr] <= exp_wdata;
    exp_o_rdata_q <= exp_o_mem[o_raddr];
  end

  // O's word per stream: {error (an order error), set[NumQns-1:0] (the queue's expected MSN was
  // written since the last STREAM_RESET; until then it counts as 0)}: STREAM_RESET is one write.
  logic [OswW-1:0] osw_mem [RamStreams];
  logic osw_we;
  logic [OswW-1:0] osw_wdata, osw_rdata_q;
  logic [StreamW-1:0] osw_waddr;
  always_ff @(posedge clk_i) begin
    if (osw_we) osw_mem[osw_waddr] <= osw_wdata;
    osw_rdata_q <= osw_mem[o_raddr[QueueW-1 -: StreamW]];
  end

  // ---- state ------------------------------------------------------------------------------------
  logic init_d, init_q;                   // clearing the per-stream words after reset
  logic [StreamW-1:0] icnt_d, icnt_q;
  // M
  logic m_valid_d, m_valid_q;
  logic m_fresh_q;                        // st_rdata_q holds m_item_q's stream word (taken last cycle)
  logic m_fw_q;                           //   but S wrote that stream in that cycle: fw_word_q
  rnic_dlv_t m_item_d, m_item_q;
  logic [SqW-1:0] m_word_q, fw_word_q;
  // D
  logic bv_d, bv_q;                       // an item awaits its decision
  logic dr_d, dr_q;                       // releasing filled slots of item_q's stream
  rnic_dlv_t item_d, item_q;
  logic [SqW-1:0] word_d, word_q;         // item_q's stream word, current
  // O
  logic o_valid_d, o_valid_q;
  rnic_dlv_t o_d, o_item_q;
  logic o_efw_hit_q, o_efw_we_q, o_xfw_hit_q, o_xfw_we_q;
  logic [OswW-1:0] o_xfw_data_q;
  logic [31:0] o_efw_data_q;
  logic dup_q, msg_q, order_q, dup_q_d, msg_q_d, order_q_d;

  // ---- queues -----------------------------------------------------------------------------------
  logic ce_push, ce_ready;
  rnic_ce_t ce_wdata;
  logic co_push, co_ready;
  logic [CoW-1:0] co_wdata, co_rdata;
  logic [$clog2(DqDepth):0] ce_count;
  logic [$clog2(ConsDepth):0] co_count;

  // O's pushes are registered in front of the queues (logic-depth budget: O's decision ends at
  // these flops, not inside the FIFOs); the room O sees counts the registered push.
  logic ce_push_q, co_push_q, ce_in_ready, co_in_ready;
  rnic_ce_t ce_wdata_q, cq_q_data;
  logic [CoW-1:0] co_wdata_q;
  logic cq_q_valid, cq_q_ready;
  rnic_fifo #(.Width($bits(ce_wdata_q)), .Depth(DqDepth)) u_cq_fifo (
    .clk_i, .rst_ni,
    .in_data_i(ce_wdata_q), .in_valid_i(ce_push_q), .in_ready_o(ce_in_ready),
    .out_data_o(cq_q_data), .out_valid_o(cq_q_valid), .out_ready_i(cq_q_ready),
    .count_o(ce_count));
  // The completion-ring writer takes the queue's head.
  rnic_deliver_cq #(.DataWidth(DataWidth)) u_cq (
    .clk_i, .rst_ni,
    .ce_i(cq_q_data), .ce_valid_i(cq_q_valid), .ce_ready_o(cq_q_ready),
    .cq_base_i, .cq_log2_i, .cq_enable_i, .cq_reset_i, .cq_cons_i, .cq_prod_o, .cq_busy_o,
    .awaddr_o, .awlen_o, .awvalid_o, .awready_i, .wdata_o, .wstrb_o, .wlast_o, .wvalid_o, .wready_i,
    .b_segs_i, .aw_count_i, .b_count_i, .fence_done_o
`ifdef FORMAL
    , .fv_pop(fv_ce_pop), .fv_head_valid(fv_ce_valid)
`endif
  );

  rnic_fifo #(.Width(CoW), .Depth(ConsDepth)) u_cons_fifo (
    .clk_i, .rst_ni,
    .in_data_i(co_wdata_q), .in_valid_i(co_push_q), .in_ready_o(co_in_ready),
    .out_data_o(co_rdata), .out_valid_o(cons_valid_o), .out_ready_i(cons_ready_i),
    .count_o(co_count));

  assign ce_ready = ce_count < ($clog2(DqDepth) + 1)'(DqDepth - 1) ||
                    (ce_count == ($clog2(DqDepth) + 1)'(DqDepth - 1) && !ce_push_q);
  assign co_ready = co_count < ($clog2(ConsDepth) + 1)'(ConsDepth - 1) ||
                    (co_count == ($clog2(ConsDepth) + 1)'(ConsDepth - 1) && !co_push_q);
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ce_push_q <= 1'b0;
      co_push_q <= 1'b0;
    end else begin
      ce_push_q <= ce_push;
      co_push_q <= co_push;
    end
  end
  always_ff @(posedge clk_i) begin
    if (ce_push) ce_wdata_q <= ce_wdata;
    if (co_push) co_wdata_q <= co_wdata;
  end

  assign cons_qn_o = co_rdata[7:0];
  assign cons_stream_o = co_rdata[23:8];
  assign cons_kind_o = co_rdata[25:24];

  // ---- M ----------------------------------------------------------------------------------------
  logic free;                             // D takes M's item (if any) in this cycle
  logic m_ready, m_load;
  logic [StreamW-1:0] item_stream;
  logic [SqW-1:0] m_word, m_word_now;

  assign item_stream = item_q.stream[StreamW-1:0];
  assign m_ready = !init_q && (!m_valid_q || free);
  assign m_load = m_ready && dlv_valid_i;
  assign dlv_ready_o = m_ready;
  // m's stream word: the RAM's (read when M took the item) with S's write of that cycle, or the one
  // M keeps; and S's write of this cycle on top (D writes only item_q's stream).
  assign m_word = m_fresh_q ? (m_fw_q ? fw_word_q : st_rdata_q) : m_word_q;
  assign m_word_now = (st_we && !init_q && item_stream == m_item_q.stream[StreamW-1:0]) ? st_wdata
                                                                                       : m_word;

  // ---- D: flags ---------------------------------------------------------------------------------
  // D decides from registers: the flags of its item are classified in M (from M's word, or from
  // the word D writes in that cycle when it is the same stream: a fill keeps next_ssn, a release
  // advances it, a reset clears the word) and taken with the item.
  logic d_ok_q, d_in_win_q, d_direct_q, d_filled_q, d_more_q, dr_more_q, dr_more_d;
  logic m_ok, m_in_win, m_direct, m_filled, m_more;
  logic o_ready, o_push, more, w_fill_f, w_rel, w_rst;   // D's write: fill, release, reset
  logic [15:0] w_nssn, nssn1, nssn2;
  logic [SsnWindow-1:0] w_fill;
  logic [WinW-1:0] item_idx, m_idx, m_idx1;
  logic [SqW-1:0] rel_word;               // the word after releasing slot next_ssn
  logic [PayW-1:0] item_pay;

  assign w_nssn = word_q[SsnWindow +: 16];
  assign w_fill = word_q[SsnWindow-1:0];
  assign nssn1 = w_nssn + 16'd1;
  assign nssn2 = w_nssn + 16'd2;
  assign item_idx = item_q.ssn[WinW-1:0];
  assign rel_word = {nssn1, w_fill & ~(SsnWindow'(1) << w_nssn[WinW-1:0])};
  assign more = dr_q ? dr_more_q : d_more_q;

  assign m_idx = m_item_q.ssn[WinW-1:0];
  assign m_idx1 = m_idx + 1'b1;
  logic [15:0] a_m;                       // M's distance to its word's next_ssn (window check)
  always_comb begin
    logic [15:0] m_nssn, a_f, a_r;
    logic [SsnWindow-1:0] m_fill;
    logic hit;
    m_nssn = m_word[SsnWindow +: 16];
    m_fill = m_word[SsnWindow-1:0];
    hit = !init_q && item_stream == m_item_q.stream[StreamW-1:0];
    a_m = m_item_q.ssn - m_nssn;
    a_f = m_item_q.ssn - w_nssn;          // D fills: next_ssn stays
    a_r = m_item_q.ssn + ~w_nssn;         // D releases: next_ssn + 1
    m_ok = {1'b0, m_item_q.stream} < NumStreams17;
    if (hit && w_fill_f) begin
      m_in_win = a_f[15:WinW] == '0;
      m_direct = a_f == 16'd0;
      m_filled = w_fill[m_idx] || item_idx == m_idx;
      m_more = w_fill[m_idx1] || item_idx == m_idx1;
    end else if (hit && w_rel) begin
      m_in_win = a_r[15:WinW] == '0;
      m_direct = a_r == 16'd0;
      m_filled = w_fill[m_idx] && w_nssn[WinW-1:0] != m_idx;
      m_more = w_fill[m_idx1] && w_nssn[WinW-1:0] != m_idx1;
    end else if (hit && w_rst) begin
      m_in_win = m_item_q.ssn[15:WinW] == '0;
      m_direct = m_item_q.ssn == 16'd0;
      m_filled = 1'b0;
      m_more = 1'b0;
    end else begin
      m_in_win = a_m[15:WinW] == '0;
      m_direct = m_item_q.ssn == m_nssn;  // not a_m == 0: one carry chain less from the RAM
      m_filled = m_fill[m_idx];
      m_more = m_fill[m_idx1];
    end
  end

  always_comb begin
    item_pay = '0;
    item_pay[PErr] = item_q.kind == RNIC_DLV_ERROR;
    item_pay[PLast] = item_q.last;
    item_pay[PTagged] = item_q.is_tagged;
    item_pay[PStagQnLsb +: 32] = item_q.stag_qn;
    item_pay[PMsnLsb +: 32] = item_q.msn;
    item_pay[PLenLsb +: 32] = item_q.length;
    item_pay[PRsvdLsb +: 40] = item_q.rsvd_ulp;
  end

  // What S hands O: the item itself, or (releasing) the segment in slot next_ssn.
  always_comb begin
    o_d = item_q;
    if (dr_q) begin
      o_d.kind = RNIC_DLV_PLACED;
      o_d.ssn = w_nssn;
      o_d.last = slot_rdata_q[PLast];
      o_d.is_tagged = slot_rdata_q[PTagged];
      o_d.stag_qn = slot_rdata_q[PStagQnLsb +: 32];
      o_d.msn = slot_rdata_q[PMsnLsb +: 32];
      o_d.length = slot_rdata_q[PLenLsb +: 32];
      o_d.rsvd_ulp = slot_rdata_q[PRsvdLsb +: 40];
      if (slot_rdata_q[PErr]) begin
        o_d.kind = RNIC_DLV_ERROR;
        o_d.err_at_ssn = 1'b1;
        o_d.is_tagged = rec_rdata_q[RTagged];
        o_d.err_type = rec_rdata_q[RTypeLsb +: 4];
        o_d.err_code = rec_rdata_q[RCodeLsb +: 8];
        o_d.length = {16'd0, rec_rdata_q[RLenLsb +: 16]};
        o_d.hdr_raw = rec_rdata_q[RHdrLsb +: 144];
      end
    end
  end

  // ---- D: decision ------------------------------------------------------------------------------
  always_comb begin
    init_d = init_q;
    icnt_d = icnt_q;
    dr_d = dr_q;
    dr_more_d = dr_more_q;
    w_fill_f = 1'b0;
    w_rel = 1'b0;
    w_rst = 1'b0;
    slot_raddr = {item_stream, w_nssn[WinW-1:0]};  // a held release re-reads its slot
    o_push = 1'b0;
    free = 1'b0;
    dup_q_d = 1'b0;

    if (init_q) begin
      icnt_d = icnt_q + 1'b1;
      if (icnt_q == LastStream) init_d = 1'b0;
    end else if (dr_q) begin
      // Slot next_ssn is filled and in slot_rdata_q.
      if (o_ready) begin
        o_push = 1'b1;
        w_rel = 1'b1;
      end
    end else if (bv_q) begin
      free = 1'b1;
      unique case (item_q.kind)
        RNIC_DLV_PLACED: begin
          if (!d_ok_q || !d_in_win_q || d_filled_q) begin
            dup_q_d = 1'b1;
          end else if (!d_direct_q) begin
            w_fill_f = 1'b1;
          end else if (o_ready) begin
            o_push = 1'b1;
            w_rel = 1'b1;
          end else begin
            free = 1'b0;
          end
        end
        RNIC_DLV_STREAM_RESET: begin
          o_push = o_ready;
          w_rst = d_ok_q && o_ready;
          free = o_ready;
        end
        RNIC_DLV_ERROR: begin
          if (!(item_q.err_at_ssn && d_ok_q && d_in_win_q)) begin
            o_push = o_ready;                  // no position, or behind next_ssn: reported now
            free = o_ready;
          end else if (!d_direct_q) begin
            w_fill_f = 1'b1;                   // waits at its DDP-SSN (replacing a segment there)
          end else if (o_ready) begin
            o_push = 1'b1;                     // at next_ssn: reported, next_ssn advances
            w_rel = 1'b1;
          end else begin
            free = 1'b0;
          end
        end
        RNIC_DLV_FENCE, RNIC_DLV_QUEUE_SET: begin
          o_push = o_ready;
          free = o_ready;
        end
        default: ;  // unused code: ignored
      endcase
    end else begin
      free = 1'b1;
    end
    // A release: while the slot after it is filled, the next release follows (slot read ahead).
    if (w_rel) begin
      dr_more_d = SsnWindow > 2 && w_fill[nssn2[WinW-1:0]];
      if (more) begin
        slot_raddr = {item_stream, nssn1[WinW-1:0]};
        dr_d = 1'b1;
        free = 1'b0;
      end else begin
        dr_d = 1'b0;
        free = 1'b1;
      end
    end
  end

  assign st_we = init_q || w_fill_f || w_rel || w_rst;
  assign st_waddr = init_q ? icnt_q : item_stream;
  always_comb begin
    st_wdata = rel_word;
    if (init_q || w_rst) st_wdata = '0;
    else if (w_fill_f) st_wdata = word_q | {16'd0, SsnWindow'(1) << item_idx};
  end
  assign slot_we = w_fill_f;
  assign slot_waddr = {item_stream, item_idx};
  assign slot_wdata = item_pay;
  assign rec_we = w_fill_f && item_q.kind == RNIC_DLV_ERROR;
  always_comb begin
    rec_wdata = '0;
    rec_wdata[RTagged] = item_q.is_tagged;
    rec_wdata[RTypeLsb +: 4] = item_q.err_type;
    rec_wdata[RCodeLsb +: 8] = item_q.err_code;
    rec_wdata[RLenLsb +: 16] = item_q.length[15:0];
    rec_wdata[RHdrLsb +: 144] = item_q.hdr_raw;
  end

  // D takes M's item when free; an item held in D (or the stream being released) keeps bv_q only
  // while not free. D's word follows D's own writes; M's follows them when it is the same stream.
  assign bv_d = free ? m_valid_q : (bv_q && !dr_d);
  assign item_d = free ? m_item_q : item_q;
  assign word_d = free ? m_word_now : (st_we ? st_wdata : word_q);
  assign m_valid_d = m_load || (m_valid_q && !free);
  assign m_item_d = m_load ? dlv_i : m_item_q;

  // ---- O ----------------------------------------------------------------------------------------
  logic o_room, o_go, o_hold, o_stream_ok, o_untagged, o_bad, err_now, qset_now;
  logic [OswW-1:0] osw_now;
  logic [QnW-1:0] o_qn;
  rnic_ce_t ce_rel, ce_item_err, ce_marker;
  rnic_ce_dlv_t rel_dlv;

  assign o_room = ce_ready && co_ready;
  assign o_go = o_valid_q && o_room;
  assign o_hold = o_valid_q && !o_room;
  assign o_ready = !o_hold;
  // O's tables are read with the item O takes (or holds) in this cycle; O's write of this cycle is
  // forwarded into the next.
  assign o_raddr = o_hold ? {o_item_q.stream[StreamW-1:0], o_item_q.stag_qn[QnW-1:0]}
                          : {o_d.stream[StreamW-1:0], o_d.stag_qn[QnW-1:0]};
  assign osw_now = (o_xfw_hit_q && o_xfw_we_q) ? o_xfw_data_q : osw_rdata_q;
  assign err_now = osw_now[NumQns];
  assign o_stream_ok = {1'b0, o_item_q.stream} < NumStreams17;
  assign o_qn = o_item_q.stag_qn[QnW-1:0];
  assign o_untagged = !o_item_q.is_tagged;
  // The set bit of O's QN (none for a QN >= NumQns: its expected MSN stays 0).
  logic [NumQns-1:0] qn_bit;
  always_comb begin
    for (int i = 0; i < NumQns; i++) qn_bit[i] = o_qn == QnW'(i);
  end
  assign qset_now = |(osw_now[NumQns-1:0] & qn_bit);
  // RFC 5041 4.3 broken: order error. The MSN is compared with each source of the expected MSN
  // (RAM, forwarded write, 0 for a queue not set) in parallel and the result selected (depth).
  logic eq_ram, eq_fw, msn_zero;
  assign eq_ram = o_item_q.msn == exp_o_rdata_q;
  assign eq_fw = o_item_q.msn == o_efw_data_q;
  assign msn_zero = o_item_q.msn == 32'd0;
  assign o_bad = o_untagged &&
                 !(qset_now ? ((o_efw_hit_q && o_efw_we_q) ? eq_fw : eq_ram) : msn_zero);

  always_comb begin
    rel_dlv = '0;
    rel_dlv.stag_qn = o_item_q.stag_qn;
    rel_dlv.msn = o_item_q.msn;
    ce_rel = '0;
    ce_rel.is_tagged = o_item_q.is_tagged;
    ce_rel.stream = o_item_q.stream;
    ce_rel.ssn = o_item_q.ssn;
    ce_rel.mark = commit_now_i;
    if (o_bad) begin
      ce_rel.err = 1'b1;
      ce_rel.order = 1'b1;
      ce_rel.err_type = RNIC_ET_UntaggedMsnRange;
      ce_rel.err_code = RNIC_EC_UntaggedMsnRange;
    end else begin
      ce_rel.length = o_item_q.length;
      rel_dlv.rsvd_ulp = o_item_q.rsvd_ulp;
    end
    ce_rel.aux = 144'(rel_dlv);

    ce_item_err = '0;
    ce_item_err.err = 1'b1;
    ce_item_err.is_tagged = o_item_q.is_tagged;
    ce_item_err.stream = o_item_q.stream;
    ce_item_err.ssn = o_item_q.ssn;
    ce_item_err.length = o_item_q.length;
    ce_item_err.err_type = o_item_q.err_type;
    ce_item_err.err_code = o_item_q.err_code;
    ce_item_err.aux = o_item_q.hdr_raw;
    ce_item_err.mark = commit_now_i;

    ce_marker = '0;
    ce_marker.marker = 1'b1;
    ce_marker.mark = commit_now_i;
  end

  logic o_del;  // O delivers a segment in this cycle (probe for the formal harness)
  always_comb begin
    ce_push = 1'b0;
    ce_wdata = ce_rel;
    co_push = 1'b0;
    co_wdata = {RNIC_CONS_CONSUME, o_item_q.stream, 8'(o_qn)};
    exp_we = 1'b0;
    exp_waddr = {o_item_q.stream[StreamW-1:0], o_qn};
    exp_wdata = o_item_q.msn + 32'd1;
    osw_we = init_q;
    osw_waddr = init_q ? icnt_q : o_item_q.stream[StreamW-1:0];
    osw_wdata = init_q ? '0 : (osw_now | {1'b0, qn_bit});
    msg_q_d = 1'b0;
    order_q_d = 1'b0;
    o_del = 1'b0;
    if (o_go) begin
      unique case (o_item_q.kind)
        RNIC_DLV_PLACED: begin
          // S hands O only segments of streams < NumStreams; a stream that failed at delivery
          // delivers nothing more until STREAM_RESET (its payload, if any, went to a buffer the
          // card still owned; it comes back flushed).
          if (!err_now) begin
            o_del = 1'b1;
            if (o_bad) begin
              ce_push = 1'b1;
              co_wdata = {RNIC_CONS_FAIL, o_item_q.stream, 8'd0};
              co_push = 1'b1;
              osw_we = 1'b1;
              osw_wdata = osw_now | (OswW'(1) << NumQns);
              order_q_d = 1'b1;
            end else if (o_item_q.last) begin
              ce_push = 1'b1;
              msg_q_d = 1'b1;
              co_push = o_untagged;
              exp_we = o_untagged;
              osw_we = o_untagged;
            end
          end
        end
        RNIC_DLV_ERROR: begin
          // The stream's first error (in DDP-SSN order, or an LLP error): reported, the stream
          // delivers nothing more and lookup puts it in ERROR. A later one is not reported.
          if (!(o_stream_ok && err_now)) begin
            ce_wdata = ce_item_err;
            ce_push = 1'b1;
            co_wdata = {RNIC_CONS_FAIL, o_item_q.stream, 8'd0};
            co_push = o_stream_ok;             // (a stream past the table has no entry there)
            osw_we = o_stream_ok;
            osw_wdata = osw_now | (OswW'(1) << NumQns);
          end
        end
        RNIC_DLV_STREAM_RESET: begin
          osw_we = o_stream_ok;
          osw_wdata = '0;
          co_wdata = {RNIC_CONS_RESET, o_item_q.stream, 8'd0};
          co_push = 1'b1;
        end
        RNIC_DLV_FENCE: begin
          ce_wdata = ce_marker;
          ce_push = 1'b1;
        end
        RNIC_DLV_QUEUE_SET: begin
          exp_we = o_stream_ok;
          osw_we = o_stream_ok;
          exp_wdata = o_item_q.msn;
          co_wdata = {RNIC_CONS_QSET, o_item_q.stream, o_item_q.stag_qn[7:0]};
          co_push = 1'b1;
          ce_wdata = ce_marker;
          ce_push = 1'b1;
        end
        default: ;
      endcase
    end
  end

  assign o_valid_d = o_push || (o_valid_q && !o_go);
  assign msg_event_o = msg_q;
  assign dup_event_o = dup_q;
  assign order_err_event_o = order_q;

  // ---- flops ------------------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      init_q <= 1'b1;
      icnt_q <= '0;
      m_valid_q <= 1'b0;
      m_fresh_q <= 1'b0;
      bv_q <= 1'b0;
      dr_q <= 1'b0;
      dr_more_q <= 1'b0;
      o_valid_q <= 1'b0;
      o_efw_we_q <= 1'b0;
      o_xfw_we_q <= 1'b0;
      dup_q <= 1'b0;
      msg_q <= 1'b0;
      order_q <= 1'b0;
    end else begin
      init_q <= init_d;
      icnt_q <= icnt_d;
      m_valid_q <= m_valid_d;
      m_fresh_q <= m_load;
      bv_q <= bv_d;
      dr_q <= dr_d;
      dr_more_q <= dr_more_d;
      o_valid_q <= o_valid_d;
      o_efw_we_q <= exp_we;
      o_xfw_we_q <= osw_we;
      dup_q <= dup_q_d;
      msg_q <= msg_q_d;
      order_q <= order_q_d;
    end
  end

  always_ff @(posedge clk_i) begin
    m_item_q <= m_item_d;
    m_word_q <= m_word_now;
    m_fw_q <= st_we && st_waddr == dlv_i.stream[StreamW-1:0];
    fw_word_q <= st_wdata;
    item_q <= item_d;
    word_q <= word_d;
    if (free) begin
      d_ok_q <= m_ok;
      d_in_win_q <= m_in_win;
      d_direct_q <= m_direct;
      d_filled_q <= m_filled;
      d_more_q <= m_more;
    end
    if (o_push) o_item_q <= o_d;
    o_efw_hit_q <= exp_waddr == o_raddr;
    o_efw_data_q <= exp_wdata;
    o_xfw_hit_q <= osw_waddr == o_raddr[QueueW-1 -: StreamW];
    o_xfw_data_q <= osw_wdata;
  end

  // Address bits past NumStreams, O's queues' fill levels.
  logic unused_bits;
  assign unused_bits = ^{ssn_rd_stream_i, exp_rd_stream_i, exp_rd_qn_i, o_del, nssn2[15:WinW],
                         a_m[WinW-1:0], o_item_q.err_at_ssn};
  // The room O counted: a registered push always finds its queue ready.
  `RNIC_ASSERT(a_ce_room, clk_i, rst_ni, !ce_push_q || ce_in_ready)
  `RNIC_ASSERT(a_co_room, clk_i, rst_ni, !co_push_q || co_in_ready)
  // valid/ready at the boundary deliver drives itself: the consume events to lookup (u_cq checks
  // the completion writes').
  `RNIC_ASSERT_HOLD(a_cons_hold, clk_i, rst_ni, cons_valid_o, cons_ready_i,
                    {cons_stream_o, cons_qn_o, cons_kind_o})

`ifdef FORMAL
  assign fv_ce_push = ce_push;
  rnic_ce_dlv_t fv_ce_dlv;
  assign fv_ce_dlv = ce_wdata.aux[$bits(fv_ce_dlv)-1:0];
  assign fv_ce_marker = ce_wdata.marker;
  assign fv_ce_err = ce_wdata.err;
  assign fv_ce_tagged = ce_wdata.is_tagged;
  assign fv_ce_order = ce_wdata.order;
  assign fv_ce_stream = ce_wdata.stream;
  assign fv_ce_ssn = ce_wdata.ssn;
  assign fv_ce_stag_qn = fv_ce_dlv.stag_qn;
  assign fv_ce_msn = fv_ce_dlv.msn;
  assign fv_ce_type = ce_wdata.err_type;
  assign fv_ce_code = ce_wdata.err_code;
  assign fv_co_push = co_push;
  assign fv_co_kind = co_wdata[25:24];
  assign fv_co_stream = co_wdata[23:8];
  assign fv_co_qn = co_wdata[7:0];
  assign fv_dlv_rel = o_del;
  assign fv_rel_last = o_item_q.last;
  assign fv_rel_tagged = o_item_q.is_tagged;
  assign fv_rel_stag_qn = o_item_q.stag_qn;
  assign fv_rel_msn = o_item_q.msn;
  assign fv_o_item = o_item_q;
  assign fv_s_drain = dr_q && o_push && !o_d.is_tagged;
`endif
endmodule
