// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
`include "rnic_assert.svh"
// Stage 3: the RFC 5041 7.1 checks, in the order of docs/rtl-architecture.md, one item per cycle in
// two register stages (logic-depth budget: no path holds two 64-bit carry chains):
//   V1  the item and its arithmetic: header and payload length, TO - base, length - payload, the TO
//       wrap, the DDP-SSN window, MO against the buffer length, MO + payload, the STag key and
//       association compares; each one carry chain at most, registered.
//   V2  the last compare (TO - base against length - payload: #4 bounds), the host address, and the
//       checks in their order: the registered verdict.
// Where an error is reported (docs/rtl-architecture.md, "Errors in DDP-SSN order"): a segment that
// fails a 7.1 check (every error but the LLP error) is reported at its DDP-SSN position: its ERROR
// verdict carries err_at_ssn and the stream becomes PENDING with that DDP-SSN (stream_essn). A
// PENDING stream still takes the segments before that position in the window (checked as on a
// NORMAL stream; one of them failing moves the position back to it) and drops every other; deliver
// reports the error once everything before it is delivered, and the stream is in ERROR from then.
// An error of a segment outside the window (the LLP error, or a Local Catastrophic one found before
// the window check) has no position: reported at once, the stream in ERROR.
// A failing segment tells lookup in the cycle after V2 decides it (err_valid_o, a register: the
// depth budget; it reaches lookup's consume handshake and stream table). Lookup forwards the write
// into every item it still holds in B and C and the one it moves to its output in that cycle, so
// those see the stream's new state. Two items left lookup before: the one that entered V1
// with the failing item's decision carries "same stream as the item ahead" (v1_same_q) and V2
// applies the item ahead's failure to it (err_last_q); the one in lookup's output register in the
// cycle of err_valid_o is compared with the failing stream when V1 takes it (err_pend_q lasts until
// lookup's output register is taken or empty). Both are decided exactly as with the new state.
// Lookup executes a table command only while V1 is empty and no error is on its way (busy_o): no
// verdict decided after a command can change the stream table it set.
module rnic_rx_validate #(
  parameter int SsnWindow = 64  // DDP-SSN reorder window in segments
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  rnic_lookup_t  lk_i,
  input  logic          lk_valid_i,
  output logic          lk_ready_o,
  output rnic_verdict_t vd_o,
  output logic          vd_valid_o,
  input  logic          vd_ready_i,
  output logic          err_valid_o,     // to lookup, the cycle after V2 decides a failing segment
  output logic [15:0]   err_stream_o,
  output logic [15:0]   err_pd_o,        //   its stream's PD (lookup writes the stream word whole)
  output logic [1:0]    err_state_o,     //   PENDING (reported at its DDP-SSN) or ERROR (at once)
  output logic [15:0]   err_ssn_o,       //   PENDING: the failing segment's DDP-SSN
  output logic          busy_o,          // V1 holds an item not yet decided, or err_valid_o is up
                                         //   (lookup's commands wait)
  output logic          fate_valid_o,    // one per segment with seg.net = 1, in order, the cycle
  output rnic_fate_e    fate_o,          //   after V2 decides it (a register): taken / dup / declined
  output logic          drop_event_o,    // counter events (not for net duplicates and declines)
  output logic          error_event_o,
  output logic [4:0]    error_idx_o,
  output logic          access_event_o
`ifdef FORMAL
  ,
  // Observation ports for the proofs (read_verilog -formal defines FORMAL; tb/formal/validate_fv.sv):
  // the item V1 holds. V1's invariants are asserted below, for the k-induction.
  output logic          fv_v1_valid,
  output rnic_lookup_t  fv_v1
`endif
);
  initial begin
    if (SsnWindow < 2 || SsnWindow > 32768) $fatal(1, "rnic_rx_validate: SsnWindow must be 2..32768");
  end

  // "Before" a failing segment's DDP-SSN e: 1 <= e - ssn < SsnWindow (mod 2^16; both lie in the
  // window, so this is their order there).
  function automatic logic ssn_before(input logic [15:0] e, input logic [15:0] ssn);
    logic [15:0] d;
    d = e - ssn;
    ssn_before = d != 16'd0 && d < 16'(SsnWindow);
  endfunction

  // ---- V1: arithmetic of the item lookup offers
  logic [4:0]  hdr_bytes;
  logic        short_seg;
  logic [15:0] pay;
  logic [63:0] to_off;      // TO - base TO
  logic        below_base;  // TO < base                           (7.1 tagged #3)
  logic [16:0] room_lo;     // length[15:0] - payload; bit 16: borrow
  logic [47:0] len_hi_m1;   // length[63:16] - 1
  logic [63:0] room;        // length - payload (when it does not borrow)
  logic        room_neg;    // payload > length
  logic        to_wraps;    // TO + len > 2^64 - 1                 (#5)
  logic [15:0] ssn_dist;    // DDP-SSN - next DDP-SSN (mod 2^16)
  logic        ssn_out;     // DDP-SSN outside the window          (RFC 5043 10)
  logic        mo_bad;      // MO at or past the buffer end
  logic [32:0] mo_end;      // MO + len, 33 bits
  logic        stag_bad;    // entry invalid or key mismatch
  logic        assoc_bad;   // PD or stream association            (8.2)
  logic        in_front;    // in the window and before the PENDING stream's failing segment
  logic        before_ahead;// in the window and before the segment ahead (if that one failed)
  logic        pend_drop;   // at or after the position of the error err_valid_o names

  always_comb begin
    hdr_bytes = lk_i.seg.is_tagged ? 5'(RNIC_TAGGED_HDR_BYTES) : 5'(RNIC_UNTAGGED_HDR_BYTES);
    short_seg = lk_i.seg.seg_bytes < {11'b0, hdr_bytes};
    pay = short_seg ? 16'd0 : lk_i.seg.seg_bytes - {11'b0, hdr_bytes};
    to_off = lk_i.seg.to - lk_i.stag_base_to;
    below_base = lk_i.seg.to < lk_i.stag_base_to;
    // length - payload with the payload's carry chain kept short: the low 16 bits subtract, the
    // high 48 bits are length[63:16] or that minus one (computed beside it), chosen by the borrow.
    room_lo = {1'b0, lk_i.stag_length[15:0]} - {1'b0, pay};
    len_hi_m1 = lk_i.stag_length[63:16] - 48'd1;
    room = {room_lo[16] ? len_hi_m1 : lk_i.stag_length[63:16], room_lo[15:0]};
    room_neg = room_lo[16] && lk_i.stag_length[63:16] == 48'd0;
    // TO + payload > 2^64 - 1: TO[63:16] all ones and TO[15:0] + payload carries out.
    to_wraps = (&lk_i.seg.to[63:16]) && ({1'b0, lk_i.seg.to[15:0]} + {1'b0, pay} > 17'h0FFFF);
    ssn_dist = lk_i.seg.ssn - lk_i.next_ssn;
    ssn_out = ssn_dist >= 16'(SsnWindow);
    mo_bad = pay != 16'd0 ? lk_i.seg.mo >= lk_i.rq_length : lk_i.seg.mo > lk_i.rq_length;
    mo_end = {1'b0, lk_i.seg.mo} + {17'b0, pay};
    stag_bad = !lk_i.stag_valid || lk_i.stag_key != lk_i.seg.stag[7:0];
    assoc_bad = lk_i.stag_pd != lk_i.stream_pd ||
                (lk_i.stag_bound && lk_i.stag_stream != lk_i.seg.stream);
    in_front = !ssn_out && ssn_before(lk_i.stream_essn, lk_i.seg.ssn);
    before_ahead = !ssn_out && ssn_before(v1_q.seg.ssn, lk_i.seg.ssn);
    pend_drop = err_imm_q || ssn_out || !ssn_before(err_ssn_q, lk_i.seg.ssn);
  end

  rnic_lookup_t v1_q;
  logic        v1_valid_q;
  logic [4:0]  v1_hdr_q;
  logic        v1_short_q;
  logic [15:0] v1_pay_q;
  logic [63:0] v1_to_off_q;
  logic        v1_below_q;
  logic [63:0] v1_room_q;
  logic        v1_room_neg_q;
  logic        v1_wraps_q, v1_ssn_out_q, v1_mo_bad_q, v1_stag_bad_q, v1_assoc_bad_q;
  logic        v1_ssn_behind_q;  // DDP-SSN behind the next one (distance >= 2^15): a duplicate
  logic [32:0] v1_mo_end_q;
  logic        v1_same_q;   // a segment of the stream of the segment ahead of it
  logic        v1_ahead_ok_q; //   and in the window before it
  logic        v1_front_q;  // in the window before the failing segment of its PENDING stream
  logic        v1_pend_q;   // a segment of the stream err_valid_o named while it waited in lookup,
                            //   that this error drops
  logic        err_last_q;  // the last verdict V2 decided was an ERROR
  logic        err_imm_q;   // the last ERROR decided has no DDP-SSN position (the stream in ERROR);
                            //   with err_last_q, that of the item ahead
  logic        err_q;       // err_valid_o: V2 decided an ERROR in the cycle before
  logic        err_pend_q;  // lookup's output register may hold an item that left before the write
  logic        busy_q;      // busy_o = v1_valid_q || err_q, as its own flip-flop (the depth budget:
                            //   lookup's command start and regs hang on it)
  logic [15:0] err_stream_q, err_pd_q, err_ssn_q;

  // ---- V2: the verdict
  rnic_verdict_t vd_d, vd_q;
  logic vd_valid_q;
  logic access_d;
  rnic_fate_e fate_d;       // a net segment's fate
  logic netdrop_d;          // a net segment dropped as duplicate or declined (not a CNT_DROPS drop)
  logic fate_valid_q;
  rnic_fate_e fate_q;
  logic past_end;           // TO - base + len > length             (#4)
  logic mo_long;            // MO + len > buffer length

  always_comb begin
    past_end = v1_room_neg_q || (v1_to_off_q > v1_room_q);
    mo_long = v1_mo_end_q > {1'b0, v1_q.rq_length};
  end

  // Sets the verdict to an error of the 7.2 table.
`define RNIC_FAIL(NAME) \
    begin vd_d.action = RNIC_ACT_ERROR; vd_d.err_type = RNIC_ET_``NAME; \
          vd_d.err_code = RNIC_EC_``NAME; vd_d.err_idx = 5'(RNIC_ERR_IDX_``NAME); \
          vd_d.err_at_ssn = !v1_ssn_out_q; end

  always_comb begin
    vd_d = '0;
    vd_d.kind = v1_q.kind;
    vd_d.arg = v1_q.arg;
    vd_d.seg = v1_q.seg;
    vd_d.hdr_bytes = v1_hdr_q;
    vd_d.pay_bytes = v1_pay_q;
    vd_d.msg_len = v1_mo_end_q[31:0];
    vd_d.action = RNIC_ACT_PLACE;
    access_d = 1'b0;
    fate_d = RNIC_FATE_TAKEN;
    netdrop_d = 1'b0;
    if (v1_q.kind != RNIC_ITEM_SEG) begin
      vd_d.action = RNIC_ACT_TOKEN;
    end else if (!rnic_stream_live(v1_q.stream_state) ||
                 (v1_q.stream_state == 2'(RNIC_STREAM_PENDING) && !v1_front_q) ||
                 (v1_same_q && err_last_q && (err_imm_q || !v1_ahead_ok_q)) || v1_pend_q) begin
      vd_d.action = RNIC_ACT_DROP;                         // 7.1: silently drop after an error
    end else if (v1_q.seg.net && v1_ssn_out_q) begin
      // From the network (docs/network.md): behind the window a retransmission already taken,
      // ahead of it a segment SCTP will bring again once the front end cut it from the host copy.
      // Neither is checked further nor changes the stream (RFC 5043 10: a pause, not an error).
      vd_d.action = RNIC_ACT_DROP;
      fate_d = v1_ssn_behind_q ? RNIC_FATE_DUP : RNIC_FATE_DECLINED;
      netdrop_d = 1'b1;
    end else if (v1_q.seg.oversize || v1_short_q || v1_q.local_fault) begin
      `RNIC_FAIL(LocalCatastrophic)
    end else if (v1_ssn_out_q) begin
      `RNIC_FAIL(LlpError)                                 // RFC 5043 10: outside the window
    end else if (v1_q.seg.is_tagged) begin
      if (v1_q.seg.dv != 2'd1) begin
        `RNIC_FAIL(TaggedInvalidVersion)
      end else if (v1_pay_q != 16'd0) begin                // 5.2: zero length is not checked
        if (v1_stag_bad_q) begin
          `RNIC_FAIL(TaggedInvalidStag)
        end else if (v1_assoc_bad_q) begin
          `RNIC_FAIL(TaggedStagNotAssociated)              // 8.2: both mechanisms
        end else if (!v1_q.stag_remote_write) begin
          `RNIC_FAIL(TaggedInvalidStag)                    // access rights: no 7.2 code (as siw)
          access_d = 1'b1;
        end else if (v1_wraps_q) begin
          `RNIC_FAIL(TaggedToWrap)
        end else if (v1_below_q || past_end) begin
          `RNIC_FAIL(TaggedBaseBounds)
        end
      end
      vd_d.addr = v1_q.stag_addr + v1_to_off_q;
    end else begin
      if (v1_q.seg.dv != 2'd1) begin
        `RNIC_FAIL(UntaggedInvalidVersion)
      end else if (v1_q.rq_status == RNIC_RQ_BAD_QN) begin
        `RNIC_FAIL(UntaggedInvalidQn)
      end else if (v1_q.rq_status == RNIC_RQ_MSN_RANGE) begin
        `RNIC_FAIL(UntaggedMsnRange)
      end else if (v1_q.rq_status == RNIC_RQ_NO_BUF) begin
        `RNIC_FAIL(UntaggedNoBuffer)
      end else if (v1_mo_bad_q) begin
        `RNIC_FAIL(UntaggedInvalidMo)
      end else if (mo_long) begin
        `RNIC_FAIL(UntaggedMessageTooLong)
      end
      vd_d.addr = v1_q.rq_addr + {32'b0, v1_q.seg.mo};
    end
  end
`undef RNIC_FAIL

  // ---- handshakes: V2 takes V1's item when the verdict register is free or leaves; V1 takes
  // lookup's item when it is empty or its item moves on.
  logic v2_accept, v1_accept;
  assign v2_accept = v1_valid_q && (!vd_valid_q || vd_ready_i);
  assign lk_ready_o = !v1_valid_q || !vd_valid_q || vd_ready_i;
  assign v1_accept = lk_valid_i && lk_ready_o;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      v1_valid_q <= 1'b0;
      vd_valid_q <= 1'b0;
      err_last_q <= 1'b0;
      err_q <= 1'b0;
      err_pend_q <= 1'b0;
      busy_q <= 1'b0;
      fate_valid_q <= 1'b0;
    end else begin
      fate_valid_q <= v2_accept && v1_q.kind == RNIC_ITEM_SEG && v1_q.seg.net;
      if (v1_accept) v1_valid_q <= 1'b1;
      else if (v2_accept) v1_valid_q <= 1'b0;
      if (v2_accept) vd_valid_q <= 1'b1;
      else if (vd_ready_i) vd_valid_q <= 1'b0;
      if (v2_accept) err_last_q <= vd_d.action == RNIC_ACT_ERROR;
      err_q <= v2_accept && vd_d.action == RNIC_ACT_ERROR;
      busy_q <= v1_accept || (v1_valid_q && !v2_accept) || (v2_accept && vd_d.action == RNIC_ACT_ERROR);
      // Set with err_q; then held while lookup's output register waits for V1 (a new error is
      // decided only in a cycle V1 takes that register, or it is empty).
      err_pend_q <= (v2_accept && vd_d.action == RNIC_ACT_ERROR) || (err_pend_q && lk_valid_i && !lk_ready_o);
    end
  end

  always_ff @(posedge clk_i) begin
    if (v1_accept) begin
      v1_q <= lk_i;
      v1_hdr_q <= hdr_bytes;
      v1_short_q <= short_seg;
      v1_pay_q <= pay;
      v1_to_off_q <= to_off;
      v1_below_q <= below_base;
      v1_room_q <= room;
      v1_room_neg_q <= room_neg;
      v1_wraps_q <= to_wraps;
      v1_ssn_out_q <= ssn_out;
      v1_ssn_behind_q <= ssn_dist[15];
      v1_mo_bad_q <= mo_bad;
      v1_mo_end_q <= mo_end;
      v1_stag_bad_q <= stag_bad;
      v1_assoc_bad_q <= assoc_bad;
      // The item ahead (in V1 now) moves to V2 in this cycle, decided there: a failure of it reaches
      // lookup too late for this item.
      v1_same_q <= v1_valid_q && v1_q.kind == RNIC_ITEM_SEG && lk_i.kind == RNIC_ITEM_SEG &&
                   lk_i.seg.stream == v1_q.seg.stream;
      v1_ahead_ok_q <= before_ahead;
      v1_front_q <= in_front;
      // It waited in lookup's output register while lookup wrote the stream's new state.
      v1_pend_q <= err_pend_q && lk_i.kind == RNIC_ITEM_SEG && lk_i.seg.stream == err_stream_q && pend_drop;
    end
    if (v2_accept) vd_q <= vd_d;
    fate_q <= fate_d;
    if (v2_accept && vd_d.action == RNIC_ACT_ERROR) begin
      err_stream_q <= v1_q.seg.stream;
      err_pd_q <= v1_q.stream_pd;
      err_ssn_q <= v1_q.seg.ssn;
      err_imm_q <= !vd_d.err_at_ssn;
    end
  end

  assign vd_o = vd_q;
  assign vd_valid_o = vd_valid_q;
  assign err_valid_o = err_q;
  assign err_stream_o = err_stream_q;
  assign err_pd_o = err_pd_q;
  assign err_state_o = err_imm_q ? 2'(RNIC_STREAM_ERROR) : 2'(RNIC_STREAM_PENDING);
  assign err_ssn_o = err_ssn_q;
  assign busy_o = busy_q;
  assign drop_event_o = v2_accept && vd_d.action == RNIC_ACT_DROP && !netdrop_d;
  assign fate_valid_o = fate_valid_q;
  assign fate_o = fate_q;
  assign error_event_o = v2_accept && vd_d.action == RNIC_ACT_ERROR;
  assign error_idx_o = vd_d.err_idx;
  assign access_event_o = v2_accept && access_d;

  // V2 reads these lookup fields from the V1 compares, not from the item.
  logic unused;
  assign unused = ^{v1_q.next_ssn, v1_q.stream_essn, v1_q.stag_valid, v1_q.stag_key, v1_q.stag_pd,
                    v1_q.stag_bound, v1_q.stag_stream, v1_q.stag_base_to, v1_q.stag_length};

  // valid/ready at both boundaries: a verdict waiting for ready holds; V1 never loses an item.
  `RNIC_ASSERT_HOLD(a_vd_hold, clk_i, rst_ni, vd_valid_q, vd_ready_i, vd_q)
  `RNIC_ASSERT(a_v1_moves, clk_i, rst_ni, !(v1_accept && v1_valid_q) || v2_accept)
  `RNIC_ASSERT(a_busy, clk_i, rst_ni, busy_q == (v1_valid_q || err_q))

`ifdef FORMAL
  // V1's invariants, for the proof's k-induction: every V1 register is the RFC arithmetic of the item V1
  // holds (SsnWindow 64, as tb/formal/validate_fv.sv instantiates this module).
  assign fv_v1_valid = v1_valid_q;
  assign fv_v1 = v1_q;
  logic [4:0] fv_hdr;
  logic [15:0] fv_pay;
  always_comb begin
    fv_hdr = v1_q.seg.is_tagged ? 5'(RNIC_TAGGED_HDR_BYTES) : 5'(RNIC_UNTAGGED_HDR_BYTES);
    fv_pay = v1_q.seg.seg_bytes < {11'b0, fv_hdr} ? 16'd0 : v1_q.seg.seg_bytes - {11'b0, fv_hdr};
    if (rst_ni && v1_valid_q) begin
      assert (v1_hdr_q == fv_hdr);
      assert (v1_short_q == (v1_q.seg.seg_bytes < {11'b0, fv_hdr}));
      assert (v1_pay_q == fv_pay);
      assert (v1_to_off_q == v1_q.seg.to - v1_q.stag_base_to);
      assert (v1_below_q == (v1_q.seg.to < v1_q.stag_base_to));
      assert (v1_room_neg_q == ({48'b0, fv_pay} > v1_q.stag_length));
      if (!v1_room_neg_q) assert (v1_room_q == v1_q.stag_length - {48'b0, fv_pay});
      assert (v1_wraps_q == (({1'b0, v1_q.seg.to} + {49'b0, fv_pay}) > 65'h0_FFFF_FFFF_FFFF_FFFF));
      assert (v1_ssn_out_q == ((v1_q.seg.ssn - v1_q.next_ssn) >= 16'd64));
      assert (v1_mo_bad_q == (fv_pay != 16'd0 ? v1_q.seg.mo >= v1_q.rq_length
                                              : v1_q.seg.mo > v1_q.rq_length));
      assert (v1_mo_end_q == {1'b0, v1_q.seg.mo} + {17'b0, fv_pay});
      assert (v1_stag_bad_q == (!v1_q.stag_valid || v1_q.stag_key != v1_q.seg.stag[7:0]));
      assert (v1_assoc_bad_q == (v1_q.stag_pd != v1_q.stream_pd ||
                                 (v1_q.stag_bound && v1_q.stag_stream != v1_q.seg.stream)));
    end
  end
`endif
endmodule
