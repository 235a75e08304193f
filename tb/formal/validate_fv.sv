// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
// Formal harness, level 1 (issue 11, write safety): rnic_rx_validate for ALL lookup inputs.
// A PLACE verdict's bytes [addr, addr + pay_bytes) lie inside the region the lookup result names:
//   tagged   - the STag's host range [stag_addr, stag_addr + stag_length), and only when the STag
//              passed every RFC 5041 7.1 tagged check (entry valid, key, PD / stream association,
//              remote write, no TO wrap, base and bounds) on a stream in the normal state, DV 1;
//   untagged - the receive buffer [rq_addr, rq_addr + rq_length) of an RQ_OK lookup, at offset MO.
// Offsets are taken modulo 2^64 (addr - base), so a range that ends at 2^64 is handled as the host
// sees it. A zero-length PLACE has an empty range (level 2 proves it writes nothing).
// The harness keeps a copy (ghost) of the lookup item each verdict came from: validate is two register
// stages (V1: the item and its arithmetic, V2: the verdict), so the ghost is two deep, g1 for V1 and
// g for the verdict. It reads validate's observation ports (fv_v1_valid, fv_v1; `ifdef FORMAL in the
// RTL), where the RTL also asserts V1's invariants: each V1 register holds the value the RFC
// arithmetic gives for the item V1 holds (this also checks the carry-split forms V1 computes).
// FV_BREAK (define) checks a deliberately wrong property: the tagged range is one byte shorter, so the
// proof must fail (shows the check can fail).
module validate_fv (
  input logic         clk_i,
  input logic         rst_ni,
  input rnic_lookup_t lk_i,
  input logic         lk_valid_i,
  input logic         vd_ready_i
);
  logic          lk_ready;
  rnic_verdict_t vd;
  logic          vd_valid;
  logic          err_valid, drop_ev, error_ev, access_ev;
  logic [15:0]   err_stream;
  logic [4:0]    error_idx;

  logic          fv_v1_valid;
  rnic_lookup_t  fv_v1;

  rnic_rx_validate #(.SsnWindow(64)) dut (
    .clk_i, .rst_ni, .lk_i, .lk_valid_i, .lk_ready_o(lk_ready),
    .vd_o(vd), .vd_valid_o(vd_valid), .vd_ready_i,
    .err_valid_o(err_valid), .err_stream_o(err_stream), .drop_event_o(drop_ev),
    .error_event_o(error_ev), .error_idx_o(error_idx), .access_event_o(access_ev),
    .fv_v1_valid, .fv_v1
  );

  // Ghost: the lookup item in V1 (g1, valid gv1) and the one of the verdict at the output (g), moved
  // by the handshakes at the ports: V1 moves on when the verdict register is free or leaves.
  rnic_lookup_t g1, g;
  logic gv1, g_move;
  assign g_move = gv1 && (!vd_valid || vd_ready_i);
  always_ff @(posedge clk_i) begin
    if (!rst_ni) gv1 <= 1'b0;
    else if (lk_valid_i && lk_ready) gv1 <= 1'b1;
    else if (g_move) gv1 <= 1'b0;
    if (lk_valid_i && lk_ready) g1 <= lk_i;
    if (g_move) g <= g1;
  end

`ifdef FORMAL
  logic init = 1'b1;
  always_ff @(posedge clk_i) init <= 1'b0;
  always_comb if (init) assume (!rst_ni);

  // The spec side, written as the RFC states it (not as the RTL computes it):
  //   tagged:   host address = STag address + (TO - base TO); 0 <= TO - base; (TO - base) + len <= length
  //   untagged: host address = buffer address + MO; MO + len <= buffer length
  logic [4:0]  hdr;
  logic [15:0] pay;
  logic [63:0] t_off;
  logic [64:0] t_end, t_lim, to_end, u_end;
  always_comb begin
    hdr = g.seg.is_tagged ? 5'(RNIC_TAGGED_HDR_BYTES) : 5'(RNIC_UNTAGGED_HDR_BYTES);
    pay = vd.pay_bytes;
    t_off = g.seg.to - g.stag_base_to;
    t_end = {1'b0, t_off} + {49'b0, pay};
`ifdef FV_BREAK
    t_lim = {1'b0, g.stag_length} - 65'd1;                 // deliberately wrong: must fail
`else
    t_lim = {1'b0, g.stag_length};
`endif
    to_end = {1'b0, g.seg.to} + {49'b0, pay};              // 7.1 tagged #5: TO + len <= 2^64 - 1
    u_end = {33'b0, g.seg.mo} + {49'b0, pay};
  end

  // The ghost follows V1.
  always_comb begin
    if (rst_ni && !init) begin
      assert (fv_v1_valid == gv1);
      if (gv1) assert (fv_v1 == g1);
    end
  end

  always_comb begin
    if (rst_ni && !init && vd_valid && vd.action == RNIC_ACT_PLACE) begin
      // Every PLACE is a segment of a live stream (normal, or pending: before its failing segment),
      // not a short or oversize packet.
      assert (g.kind == RNIC_ITEM_SEG);
      assert (g.stream_state == 2'(RNIC_STREAM_NORMAL) || g.stream_state == 2'(RNIC_STREAM_PENDING));
      assert (!g.seg.oversize && !g.local_fault && g.seg.dv == 2'd1);
      assert (g.seg.seg_bytes == {11'b0, hdr} + pay);      // payload = packet - header
      if (g.seg.is_tagged) begin
        if (pay != 16'd0) begin
          // The 7.1 tagged checks all passed ...
          assert (g.stag_valid && g.stag_key == g.seg.stag[7:0]);
          assert (g.stag_pd == g.stream_pd);
          assert (!g.stag_bound || g.stag_stream == g.seg.stream);
          assert (g.stag_remote_write);
          assert (to_end <= 65'h0_FFFF_FFFF_FFFF_FFFF);
          assert (g.seg.to >= g.stag_base_to);
          // ... and the bytes lie in the STag's host range, at offset TO - base.
          assert (t_end <= t_lim);
          assert (vd.addr == g.stag_addr + t_off);
        end
      end else begin
        assert (g.rq_status == RNIC_RQ_OK);
        assert (vd.addr == g.rq_addr + {32'b0, g.seg.mo});  // at its own MO
        assert (u_end <= {33'b0, g.rq_length});
      end
    end
  end
`endif
endmodule
