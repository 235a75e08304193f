// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
`include "rnic_hw.svh"
// The hold FIFO of the network receive front end (issue 14, docs/network.md; interface: section 1 of
// the front end's unit interfaces): every SCTP packet (one AXI-Stream packet, the UDP payload, meta in
// tuser sampled on its first beat) is stored in a block RAM of DepthBeats beats and released on m_axis
// only after its verdict; a packet is dropped, nothing of it leaving, when
//   drop_frame_o  its framing is broken (a beat with tkeep 0, a non-last beat not all ones, tkeep not
//                 contiguous from bit 0),
//   drop_size_o   else it is longer than MaxPacketBytes,
//   drop_crc_o    else its CRC32c is bad or it is shorter than 12 bytes (rnic_sctp_crc, RFC 9260 6.8),
// one one-cycle pulse per dropped packet, in packet order. m_axis_tuser_o = {length_bytes, meta} on
// every beat of a packet. At most MaxBeats = ceil(MaxPacketBytes / Bytes) beats of a packet are stored:
// an oversize packet's further beats are taken and discarded.
//
// Stages:
//   W  (input beat)  rnic_sctp_crc taps every beat taken; the beat {tkeep, tdata} is written to the RAM
//                    (flat `logic [Bytes+DataWidth-1:0] mem [DepthBeats]`, block RAM); framing, beat
//                    count and the last beat's byte count are kept per packet.
//   P  (after last)  the packet's info {oversize, frame, end pointer, length, meta} into the info FIFO;
//                    its verdict comes Latency cycles after its last beat into the verdict FIFO (both
//                    rnic_fifo, PendDepth entries; verdicts come in packet order).
//   D  (decide)      the heads of both FIFOs: a bad packet is popped and counted (its beats are skipped:
//                    the read side never visits them); a good one goes to the "next" register.
//   C  (current)     the packet being read: its read pointer, one beat per cycle; on its last beat the
//                    next packet is loaded in the same cycle (no bubble between packets).
//   R  (read)        the RAM's registered read port, its beat's last and tuser.
//   O  (output)      rnic_slice: m_axis valid, data and the slice's ready from flip-flops.
// Throughput: one beat per cycle in and out for back-to-back packets of any length; D takes one packet
// per cycle, so dropped packets cost the read side one cycle each, not their beats.
// Backpressure: s_axis_tready_o (a flip-flop) is low only when, in the previous cycle, the RAM held
// DepthBeats - 1 beats or more or PendDepth - 1 packets waited for their verdict or their turn (the
// ready is registered from the previous cycle's pointers; the RAM fills up to all DepthBeats beats).
// Reset (rst_ni low, synchronous): everything stored and in flight is dropped, uncounted.
module rnic_net_hold #(
  parameter int DataWidth = 512,       // 64..512, a power of two
  parameter int DepthBeats = 512,      // the buffer, in beats; a power of two >= 2 * MaxBeats
  parameter int MaxPacketBytes = RNIC_NET_MAX_PACKET_BYTES  // longer packets are dropped (drop_size_o)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   s_axis_tvalid_i,
  output logic                   s_axis_tready_o,
  input  logic [DataWidth-1:0]   s_axis_tdata_i,
  input  logic [DataWidth/8-1:0] s_axis_tkeep_i,
  input  logic                   s_axis_tlast_i,
  input  logic [95:0]            s_axis_tuser_i,   // meta, sampled on a packet's first beat
  output logic                   m_axis_tvalid_o,
  input  logic                   m_axis_tready_i,
  output logic [DataWidth-1:0]   m_axis_tdata_o,
  output logic [DataWidth/8-1:0] m_axis_tkeep_o,
  output logic                   m_axis_tlast_o,
  output logic [111:0]           m_axis_tuser_o,   // {length_bytes[111:96], meta[95:0]}
  output logic                   drop_crc_o,
  output logic                   drop_size_o,
  output logic                   drop_frame_o
);
  localparam int Bytes = DataWidth / 8;
  localparam int Lb = $clog2(Bytes);
  localparam int AddrW = $clog2(DepthBeats);
  localparam int PtrW = AddrW + 1;                                  // pointers carry a wrap bit
  localparam int MaxBeats = (MaxPacketBytes + Bytes - 1) / Bytes;   // beats stored per packet at most
  localparam int LastMax = MaxPacketBytes - (MaxBeats - 1) * Bytes; // bytes allowed in beat MaxBeats
  localparam int BeatW = $clog2(MaxBeats + 1);
  localparam int CntW = $clog2(Bytes + 1);
  localparam int PendDepth = 32;                                    // packets between last beat and D
  localparam int PendW = $clog2(PendDepth + 1);
  localparam int MemW = Bytes + DataWidth;                          // {tkeep, tdata}
  localparam int InfoW = 2 + PtrW + 16 + 96;                        // {over, frame, end, length, meta}
  localparam int OutW = 112 + 1 + MemW;                             // {tuser, tlast, tkeep, tdata}

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_net_hold: DataWidth must be 64, 128, 256 or 512");
    if (MaxPacketBytes < 12 || MaxPacketBytes + 2 * Bytes > 65535)
      $fatal(1, "rnic_net_hold: MaxPacketBytes must be 12..65535 - 2 * DataWidth / 8");
    if ((DepthBeats & (DepthBeats - 1)) != 0 || DepthBeats < 2 * MaxBeats)
      $fatal(1, "rnic_net_hold: DepthBeats must be a power of two holding two maximum packets");
  end

  // ---- W: the input beat -------------------------------------------------------------------------
  logic             in_ready_q, take, first, sat, frame_q, beat_bad;
  logic [BeatW-1:0] beat_q;   // beats of the current packet before this one, saturating at MaxBeats
  logic [PtrW-1:0]  wr_q;     // the RAM slot the next stored beat goes to
  logic [95:0]      meta_q;   // the current packet's meta
  logic [Bytes-1:0] keep_edge, tap_keep;
  logic [CntW-1:0]  keep_cnt;

  assign s_axis_tready_o = in_ready_q;
  assign take = s_axis_tvalid_i && in_ready_q;
  assign first = beat_q == '0;
  assign sat = beat_q == BeatW'(MaxBeats);
  // Framing: tkeep a thermometer code with bit 0 set, all ones unless last.
  assign beat_bad = !s_axis_tkeep_i[0] || (|(s_axis_tkeep_i[Bytes-1:1] & ~s_axis_tkeep_i[Bytes-2:0]))
                    || (!s_axis_tlast_i && !s_axis_tkeep_i[Bytes-1]);
  // rnic_crc32c takes only well-framed beats (it asserts so): a broken beat is offered to it as a
  // well-framed one; its packet is dropped for the framing whatever its verdict.
  assign tap_keep = !s_axis_tlast_i ? '1 : beat_bad ? Bytes'(1) : s_axis_tkeep_i;
  // The last beat's byte count: the position of tkeep's 1 -> 0 edge (valid for a well-framed beat).
  assign keep_edge = s_axis_tkeep_i & ~{1'b0, s_axis_tkeep_i[Bytes-1:1]};
  always_comb begin
    keep_cnt = '0;
    for (int n = 1; n <= Bytes; n++) begin
      if (keep_edge[n-1]) keep_cnt = keep_cnt | CntW'(n);
    end
  end

  logic             p_valid_q;  // P: a packet's last beat was taken in the previous cycle
  logic [BeatW-1:0] p_beat_q;
  logic [CntW-1:0]  p_cnt_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      beat_q <= '0;
      wr_q <= '0;
      frame_q <= 1'b0;
      p_valid_q <= 1'b0;
    end else begin
      p_valid_q <= take && s_axis_tlast_i;
      if (take) begin
        beat_q <= s_axis_tlast_i ? '0 : sat ? beat_q : beat_q + 1'b1;
        if (!sat) wr_q <= wr_q + 1'b1;
        frame_q <= (frame_q && !first) || beat_bad;
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (take && first) meta_q <= s_axis_tuser_i;
    if (take && s_axis_tlast_i) begin
      p_beat_q <= beat_q;
      p_cnt_q <= keep_cnt;
    end
  end

  // The beat store: written by W, read by R (only beats of packets whose verdict is known: never the
  // slot being written).
  logic [MemW-1:0] mem [DepthBeats];
  always_ff @(posedge clk_i) begin
    if (take && !sat) mem[wr_q[AddrW-1:0]] <= {s_axis_tkeep_i, s_axis_tdata_i};
  end

  // The CRC32c tap.
  logic ver_in_valid, ver_in_ok;
  logic [31:0] ver_crc;
  rnic_sctp_crc #(.DataWidth(DataWidth)) u_crc (
    .clk_i,
    .rst_ni,
    .in_valid_i (take),
    .in_data_i  (s_axis_tdata_i),
    .in_keep_i  (tap_keep),
    .in_last_i  (s_axis_tlast_i),
    .out_valid_o(ver_in_valid),
    .out_ok_o   (ver_in_ok),
    .out_crc_o  (ver_crc)
  );

  // ---- P: the packet's info (wr_q, frame_q and meta_q still hold the packet's values here) ------
  logic [15:0]      p_len;
  logic             p_over;
  logic [InfoW-1:0] info_in;
  assign p_len = 16'({p_beat_q, Lb'(0)}) + 16'(p_cnt_q);
  assign p_over = p_beat_q == BeatW'(MaxBeats)
                  || (p_beat_q == BeatW'(MaxBeats - 1) && p_cnt_q > CntW'(LastMax));
  assign info_in = {p_over, frame_q, wr_q, p_len, meta_q};

  logic             info_valid, info_ready, info_pop, ver_valid, ver_ready, ver_ok;
  logic [InfoW-1:0] info;
  logic [$clog2(PendDepth):0] info_count, ver_count;
  rnic_fifo #(.Width(InfoW), .Depth(PendDepth)) u_info (
    .clk_i,
    .rst_ni,
    .in_data_i  (info_in),
    .in_valid_i (p_valid_q),
    .in_ready_o (info_ready),
    .out_data_o (info),
    .out_valid_o(info_valid),
    .out_ready_i(info_pop),
    .count_o    (info_count)
  );
  rnic_fifo #(.Width(1), .Depth(PendDepth)) u_verdict (
    .clk_i,
    .rst_ni,
    .in_data_i  (ver_in_ok),
    .in_valid_i (ver_in_valid),
    .in_ready_o (ver_ready),
    .out_data_o (ver_ok),
    .out_valid_o(ver_valid),
    .out_ready_i(info_pop),
    .count_o    (ver_count)
  );

  // ---- D: decide the head packet -----------------------------------------------------------------
  logic             h_over, h_frame, h_good;
  logic [PtrW-1:0]  h_end;
  logic [111:0]     h_user;
  assign h_over = info[InfoW-1];
  assign h_frame = info[InfoW-2];
  assign h_end = info[112 +: PtrW];
  assign h_user = info[111:0];
  assign h_good = !h_over && !h_frame && ver_ok;

  logic             next_v_q, next_single_q, cur_v_q, cur_at_last_q, cur_load, issue, advance;
  logic [PtrW-1:0]  done_q, next_start_q, next_last_q, cur_ptr_q, cur_last_q, free_q;
  logic [111:0]     next_user_q, cur_user_q;
  logic [PendW-1:0] pend_q;   // packets whose last beat was taken and that D has not popped yet
  logic             drop_crc_q, drop_size_q, drop_frame_q;

  assign cur_load = next_v_q && (!cur_v_q || (issue && cur_at_last_q));
  assign info_pop = info_valid && ver_valid && (!h_good || !next_v_q || cur_load);

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      done_q <= '0;
      next_v_q <= 1'b0;
      drop_crc_q <= 1'b0;
      drop_size_q <= 1'b0;
      drop_frame_q <= 1'b0;
    end else begin
      if (info_pop) done_q <= h_end;
      if (info_pop && h_good) next_v_q <= 1'b1;
      else if (cur_load) next_v_q <= 1'b0;
      drop_frame_q <= info_pop && h_frame;
      drop_size_q <= info_pop && !h_frame && h_over;
      drop_crc_q <= info_pop && !h_frame && !h_over && !ver_ok;
    end
  end
  always_ff @(posedge clk_i) begin
    if (info_pop && h_good) begin
      next_start_q <= done_q;          // a packet starts where the previous one (kept or not) ended
      next_last_q <= h_end - 1'b1;
      next_single_q <= h_end == done_q + 1'b1;
      next_user_q <= h_user;
    end
  end
  assign drop_crc_o = drop_crc_q;
  assign drop_size_o = drop_size_q;
  assign drop_frame_o = drop_frame_q;

  // ---- C: the packet being read ------------------------------------------------------------------
  logic r_valid_q, r_last_q, out_ready;
  assign advance = !r_valid_q || out_ready;
  assign issue = cur_v_q && advance;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) cur_v_q <= 1'b0;
    else if (cur_load) cur_v_q <= 1'b1;
    else if (issue && cur_at_last_q) cur_v_q <= 1'b0;
  end
  always_ff @(posedge clk_i) begin
    if (cur_load) begin
      cur_ptr_q <= next_start_q;
      cur_last_q <= next_last_q;
      cur_at_last_q <= next_single_q;
      cur_user_q <= next_user_q;
    end else if (issue) begin
      cur_ptr_q <= cur_ptr_q + 1'b1;
      cur_at_last_q <= cur_ptr_q + 1'b1 == cur_last_q;
    end
  end

  // ---- Space and pending accounting: the input's ready ------------------------------------------
  // free_q: every slot before it is read or dropped (one cycle late: conservative).
  logic [PtrW-1:0] used;
  assign used = wr_q - free_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      free_q <= '0;
      pend_q <= '0;
      in_ready_q <= 1'b0;
    end else begin
      free_q <= cur_v_q ? cur_ptr_q : next_v_q ? next_start_q : done_q;
      pend_q <= pend_q + PendW'(take && s_axis_tlast_i) - PendW'(info_pop);
      in_ready_q <= used < PtrW'(DepthBeats - 1) && pend_q < PendW'(PendDepth - 1);
    end
  end

  // ---- R: the RAM's registered read port ---------------------------------------------------------
  logic [MemW-1:0] r_mem_q;
  logic [111:0]    r_user_q;
  always_ff @(posedge clk_i) begin
    if (advance) r_mem_q <= mem[cur_ptr_q[AddrW-1:0]];
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) r_valid_q <= 1'b0;
    else if (advance) r_valid_q <= cur_v_q;
  end
  always_ff @(posedge clk_i) begin
    if (advance) begin
      r_last_q <= cur_at_last_q;
      r_user_q <= cur_user_q;
    end
  end

  // ---- O: the output register slice --------------------------------------------------------------
  logic [OutW-1:0] out_data;
  rnic_slice #(.Width(OutW)) u_out (
    .clk_i,
    .rst_ni,
    .in_data_i  ({r_user_q, r_last_q, r_mem_q}),
    .in_valid_i (r_valid_q),
    .in_ready_o (out_ready),
    .out_data_o (out_data),
    .out_valid_o(m_axis_tvalid_o),
    .out_ready_i(m_axis_tready_i)
  );
  assign m_axis_tuser_o = out_data[OutW-1 -: 112];
  assign m_axis_tlast_o = out_data[MemW];
  assign m_axis_tkeep_o = out_data[DataWidth +: Bytes];
  assign m_axis_tdata_o = out_data[DataWidth-1:0];

  logic unused;  // the CRC value itself and the FIFOs' fill levels (monitoring only)
  assign unused = ^{ver_crc, info_count, ver_count};

  // ---- Assertions (rtl/rnic_assert.svh) -----------------------------------------------------------
  // The pending count bounds both FIFOs (never pushed while full); the buffer never overruns the
  // oldest unread beat; a packet's verdict never comes before its info; the read side reads only
  // stored beats; the input's handshake is AXI-Stream's.
  `RNIC_ASSERT(a_info_room, clk_i, rst_ni, !p_valid_q || info_ready)
  `RNIC_ASSERT(a_verdict_room, clk_i, rst_ni, !ver_in_valid || ver_ready)
  `RNIC_ASSERT(a_pend_bound, clk_i, rst_ni, pend_q <= PendW'(PendDepth))
  `RNIC_ASSERT(a_no_overrun, clk_i, rst_ni, !(take && !sat) || used < PtrW'(DepthBeats))
  `RNIC_ASSERT(a_verdict_after_info, clk_i, rst_ni, !ver_valid || info_valid)
  `RNIC_ASSERT(a_read_stored, clk_i, rst_ni, !cur_v_q || PtrW'(wr_q - cur_ptr_q) - 1'b1 < PtrW'(DepthBeats))
endmodule
