`include "rnic_defs.svh"
// Stage 3: the RFC 5041 7.1 checks, in the order of docs/rtl-architecture.md, on one item per cycle.
// The verdict is registered; a failing segment tells lookup in the cycle it is accepted, so the next
// item lookup reads already sees the stream in the error state.
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
  output logic          err_valid_o,     // to lookup, in the cycle a failing segment is accepted
  output logic [15:0]   err_stream_o,
  output logic          drop_event_o,    // counter events
  output logic          error_event_o,
  output logic [4:0]    error_idx_o,
  output logic          access_event_o
);
  initial begin
    if (SsnWindow < 2 || SsnWindow > 32768) $fatal(1, "rnic_rx_validate: SsnWindow must be 2..32768");
  end

  rnic_verdict_t vd_d, vd_q;
  logic vd_valid_q;
  logic access_d;

  // Header length, payload length and the 64-bit quantities of the tagged checks.
  logic [4:0]  hdr_bytes;
  logic        short_seg;
  logic [15:0] pay;
  logic [63:0] pay64;
  logic [63:0] to_off;      // TO - base TO
  logic        to_wraps;    // TO + len > 2^64 - 1   (7.1 tagged #5)
  logic        below_base;  // TO < base             (#3)
  logic        past_end;    // TO + len > base + length (#4)
  logic [15:0] ssn_ahead;
  logic [32:0] mo_end;      // MO + len, 33 bits

  always_comb begin
    hdr_bytes = lk_i.seg.is_tagged ? 5'(RNIC_TAGGED_HDR_BYTES) : 5'(RNIC_HDR_BYTES);
    short_seg = lk_i.seg.seg_bytes < {11'b0, hdr_bytes};
    pay = short_seg ? 16'd0 : lk_i.seg.seg_bytes - {11'b0, hdr_bytes};
    pay64 = {48'b0, pay};
    to_off = lk_i.seg.to - lk_i.stag_base_to;
    to_wraps = lk_i.seg.to > (64'hFFFF_FFFF_FFFF_FFFF - pay64);
    below_base = lk_i.seg.to < lk_i.stag_base_to;
    past_end = (to_off > lk_i.stag_length) || ((lk_i.stag_length - to_off) < pay64);
    ssn_ahead = lk_i.seg.ssn - lk_i.next_ssn;
    mo_end = {1'b0, lk_i.seg.mo} + {17'b0, pay};
  end

  // Sets the verdict to an error of the 7.2 table.
`define RNIC_FAIL(NAME) \
    begin vd_d.action = RNIC_ACT_ERROR; vd_d.err_type = RNIC_ET_``NAME; \
          vd_d.err_code = RNIC_EC_``NAME; vd_d.err_idx = 5'(RNIC_ERR_IDX_``NAME); end

  always_comb begin
    vd_d = '0;
    vd_d.kind = lk_i.kind;
    vd_d.arg = lk_i.arg;
    vd_d.seg = lk_i.seg;
    vd_d.hdr_bytes = hdr_bytes;
    vd_d.pay_bytes = pay;
    vd_d.msg_len = mo_end[31:0];
    vd_d.action = RNIC_ACT_PLACE;
    access_d = 1'b0;
    if (lk_i.kind != RNIC_ITEM_SEG) begin
      vd_d.action = RNIC_ACT_TOKEN;
    end else if (lk_i.stream_state != 2'(RNIC_STREAM_NORMAL)) begin
      vd_d.action = RNIC_ACT_DROP;                         // 7.1: silently drop after an error
    end else if (lk_i.seg.oversize || short_seg || lk_i.local_fault) begin
      `RNIC_FAIL(LocalCatastrophic)
    end else if (ssn_ahead >= 16'(SsnWindow)) begin
      `RNIC_FAIL(LlpError)                                 // RFC 5043 10: outside the window
    end else if (lk_i.seg.is_tagged) begin
      if (lk_i.seg.dv != 2'd1) begin
        `RNIC_FAIL(TaggedInvalidVersion)
      end else if (pay != 16'd0) begin                     // 5.2: zero length is not checked
        if (!lk_i.stag_valid || lk_i.stag_key != lk_i.seg.stag[7:0]) begin
          `RNIC_FAIL(TaggedInvalidStag)
        end else if (lk_i.stag_pd != lk_i.stream_pd ||
                     (lk_i.stag_bound && lk_i.stag_stream != lk_i.seg.stream)) begin
          `RNIC_FAIL(TaggedStagNotAssociated)              // 8.2: both mechanisms
        end else if (!lk_i.stag_remote_write) begin
          `RNIC_FAIL(TaggedInvalidStag)                    // access rights: no 7.2 code (as siw)
          access_d = 1'b1;
        end else if (to_wraps) begin
          `RNIC_FAIL(TaggedToWrap)
        end else if (below_base || past_end) begin
          `RNIC_FAIL(TaggedBaseBounds)
        end
      end
      vd_d.addr = lk_i.stag_addr + to_off;
    end else begin
      if (lk_i.seg.dv != 2'd1) begin
        `RNIC_FAIL(UntaggedInvalidVersion)
      end else if (lk_i.rq_status == RNIC_RQ_BAD_QN) begin
        `RNIC_FAIL(UntaggedInvalidQn)
      end else if (lk_i.rq_status == RNIC_RQ_MSN_RANGE) begin
        `RNIC_FAIL(UntaggedMsnRange)
      end else if (lk_i.rq_status == RNIC_RQ_NO_BUF) begin
        `RNIC_FAIL(UntaggedNoBuffer)
      end else if (pay != 16'd0 ? lk_i.seg.mo >= lk_i.rq_length : lk_i.seg.mo > lk_i.rq_length) begin
        `RNIC_FAIL(UntaggedInvalidMo)
      end else if (mo_end > {1'b0, lk_i.rq_length}) begin
        `RNIC_FAIL(UntaggedMessageTooLong)
      end
      vd_d.addr = lk_i.rq_addr + {32'b0, lk_i.seg.mo};
    end
  end
`undef RNIC_FAIL

  logic accept;
  assign lk_ready_o = !vd_valid_q || vd_ready_i;
  assign accept = lk_valid_i && lk_ready_o;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      vd_valid_q <= 1'b0;
    end else if (accept) begin
      vd_valid_q <= 1'b1;
    end else if (vd_ready_i) begin
      vd_valid_q <= 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (accept) vd_q <= vd_d;
  end

  assign vd_o = vd_q;
  assign vd_valid_o = vd_valid_q;
  assign err_valid_o = accept && vd_d.action == RNIC_ACT_ERROR;
  assign err_stream_o = lk_i.seg.stream;
  assign drop_event_o = accept && vd_d.action == RNIC_ACT_DROP;
  assign error_event_o = err_valid_o;
  assign error_idx_o = vd_d.err_idx;
  assign access_event_o = accept && access_d;
endmodule
