// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
`include "rnic_assert.svh"
// Stage 1: accepts the AXI-Stream packets (one DDP segment each, RFC 5041 section 3), writes every
// beat to the data FIFO and emits the decoded header at tlast.
//
// One register stage on each output: a beat accepted in cycle t is presented on beat_* in t+1, and
// the descriptor of a packet is presented together with (never before) its last beat. The input is
// ready whenever both output registers are empty or being drained, so at full throughput one beat
// is accepted per cycle and a packet may start in the cycle after the previous tlast.
//
// Packet bytes 0..17 are gathered from the first ceil(18/Bytes) beats; tkeep is contiguous from bit
// 0 and only the last beat may be partial, so the byte count is (beats before the last) * Bytes
// plus the ones of the last tkeep. A packet longer than MaxSegBytes is cut: the first MaxBeats
// beats are forwarded, later beats are discarded, and at tlast one extra beat with last=1 closes
// the packet in the data FIFO (at most MaxBeats + 1 beats per packet); the descriptor is flagged
// oversize.
module rnic_rx_parse #(
  parameter int DataWidth   = 512,    // AXI-Stream data width in bits (64..512)
  parameter int MaxSegBytes = RNIC_MAX_SEG_BYTES  // longest packet kept; longer ones are cut, flagged oversize
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic [DataWidth-1:0]   s_axis_tdata_i,
  input  logic [DataWidth/8-1:0] s_axis_tkeep_i,
  input  logic                   s_axis_tlast_i,
  input  logic                   s_axis_tvalid_i,
  output logic                   s_axis_tready_o,
  input  logic [32:0]            s_axis_tuser_i,  // [15:0] stream, [31:16] DDP-SSN, [32] net (first beat)
  output logic [DataWidth-1:0]   beat_data_o,     // -> data FIFO
  output logic [DataWidth/8-1:0] beat_keep_o,
  output logic                   beat_last_o,
  output logic                   beat_valid_o,
  input  logic                   beat_ready_i,
  output rnic_seg_t              seg_o,           // -> segment FIFO
  output logic                   seg_valid_o,
  input  logic                   seg_ready_i,
  output logic                   seg_event_o      // one pulse per packet accepted (counter)
);
  localparam int Bytes = DataWidth / 8;
  localparam int ByteShift = $clog2(Bytes);
  localparam int MaxBeats = (MaxSegBytes + Bytes - 1) / Bytes;  // beats of a MaxSegBytes packet
  localparam int CntW = $clog2(MaxBeats + 1);                     // counts 0..MaxBeats
  localparam int TotW = 16;                                       // seg_bytes (mod 2^16)
  localparam int HdrBits = 8 * RNIC_UNTAGGED_HDR_BYTES;
  localparam logic [CntW-1:0] MaxBeatsC = CntW'(MaxBeats);
  localparam logic [CntW-1:0] MaxFullC = CntW'(MaxSegBytes / Bytes);
  localparam logic [ByteShift:0] MaxRestC = (ByteShift + 1)'(MaxSegBytes % Bytes);

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_rx_parse: DataWidth must be 64, 128, 256 or 512");
    if (MaxSegBytes < RNIC_UNTAGGED_HDR_BYTES || MaxSegBytes > 65535)
      $fatal(1, "rnic_rx_parse: MaxSegBytes must be 18..65535");
  end

  // ---- input side -------------------------------------------------------------------------------
  logic accept, first, cut, fwd;
  logic [CntW-1:0] cnt_d, cnt_q;           // beats accepted in this packet, saturates at MaxBeats
  logic [31:0] cnt32;
  logic [HdrBits-1:0] hdr_d, hdr_q;        // packet bytes 0..17 gathered so far, byte i at [8*i]
  logic [HdrBits-1:0] hdr_cur;             // ... including the current input beat
  logic [HdrBits-1:0] hdr_be;              // the same, byte 0 in the top bits (network order)
  logic [15:0] stream_d, stream_q, ssn_d, ssn_q;
  logic        net_d, net_q;
  logic [TotW-1:0] total;
  logic unused_ctrl_rsvd;                  // control field bits 5:2 (RFC 5041 4.1: Rsvd)

  logic beat_valid_d, beat_valid_q, beat_last_d, beat_last_q;
  logic [DataWidth-1:0] beat_data_d, beat_data_q;
  logic [Bytes-1:0] beat_keep_d, beat_keep_q;
  logic seg_valid_d, seg_valid_q;
  rnic_seg_t seg_d, seg_q;

  assign s_axis_tready_o = (!beat_valid_q || beat_ready_i) && (!seg_valid_q || seg_ready_i);
  assign accept = s_axis_tvalid_i && s_axis_tready_o;
  assign first = (cnt_q == '0);
  assign cut = (cnt_q == MaxBeatsC);       // MaxBeats full beats seen and the packet goes on
  assign fwd = !cut || s_axis_tlast_i;     // after the cut only the closing beat is written
  assign cnt32 = 32'(cnt_q);
  // Bytes so far: cnt_q full beats plus the ones of this tkeep (0..Bytes). Written so that the carry
  // chain is cnt_q + (all ones), not an 18-bit add after the population count (logic-depth budget).
  logic [ByteShift:0] keep_ones;
  assign keep_ones = (ByteShift + 1)'($countones(s_axis_tkeep_i));
  // total > MaxSegBytes without a compare after the population count: with MaxSegBytes =
  // MaxFullC * Bytes + MaxRestC (MaxRestC < Bytes) and 0 <= keep_ones <= Bytes, it holds exactly when
  // cnt_q > MaxFullC, or cnt_q == MaxFullC and keep_ones > MaxRestC.
  logic over_max;
  assign over_max = (cnt_q > MaxFullC) || (cnt_q == MaxFullC && keep_ones > MaxRestC);
  assign total = {(TotW - ByteShift)'(cnt_q) + (TotW - ByteShift)'(keep_ones[ByteShift]),
                  keep_ones[ByteShift-1:0]};
  assign unused_ctrl_rsvd = ^hdr_be[141:138];

  // Header bytes gathered with this beat: byte b lives in beat b / Bytes at lane b % Bytes.
  always_comb begin
    hdr_cur = first ? '0 : hdr_q;
    for (int b = 0; b < RNIC_UNTAGGED_HDR_BYTES; b++) begin
      if (cnt32 == 32'(b / Bytes)) begin
        hdr_cur[8*b +: 8] = s_axis_tkeep_i[b % Bytes] ? s_axis_tdata_i[8*(b % Bytes) +: 8] : 8'h00;
      end
    end
    for (int b = 0; b < RNIC_UNTAGGED_HDR_BYTES; b++) begin
      hdr_be[HdrBits-8-8*b +: 8] = hdr_cur[8*b +: 8];
    end
  end

  always_comb begin
    cnt_d    = cnt_q;
    hdr_d    = hdr_q;
    stream_d = stream_q;
    ssn_d    = ssn_q;
    net_d    = net_q;
    if (accept) begin
      hdr_d = hdr_cur;
      if (s_axis_tlast_i) begin
        cnt_d = '0;
      end else if (!cut) begin
        cnt_d = cnt_q + 1'b1;
      end
      if (first) begin
        stream_d = s_axis_tuser_i[15:0];
        ssn_d    = s_axis_tuser_i[31:16];
        net_d    = s_axis_tuser_i[32];
      end
    end
  end

  // ---- output registers -------------------------------------------------------------------------
  always_comb begin
    beat_valid_d = beat_valid_q && !beat_ready_i;
    beat_data_d  = beat_data_q;
    beat_keep_d  = beat_keep_q;
    beat_last_d  = beat_last_q;
    if (accept && fwd) begin
      beat_valid_d = 1'b1;
      beat_data_d  = s_axis_tdata_i;
      beat_keep_d  = s_axis_tkeep_i;
      beat_last_d  = s_axis_tlast_i;
    end
  end

  // Descriptor: every field decoded regardless of T; the consumer picks (RFC 5041 4.2, 4.3).
  always_comb begin
    seg_valid_d = seg_valid_q && !seg_ready_i;
    seg_d = seg_q;
    if (accept && s_axis_tlast_i) begin
      seg_valid_d       = 1'b1;
      seg_d.stream      = first ? s_axis_tuser_i[15:0] : stream_q;
      seg_d.ssn         = first ? s_axis_tuser_i[31:16] : ssn_q;
      seg_d.net         = first ? s_axis_tuser_i[32] : net_q;
      seg_d.seg_bytes   = total;
      seg_d.oversize    = cut || over_max;
      seg_d.is_tagged   = hdr_be[143];
      seg_d.last        = hdr_be[142];
      seg_d.dv          = hdr_be[137:136];
      seg_d.rsvd_ulp    = hdr_be[143] ? {32'h0, hdr_be[135:128]} : hdr_be[135:96];
      seg_d.stag        = hdr_be[127:96];  // bytes 2..5
      seg_d.to          = hdr_be[95:32];   // bytes 6..13
      seg_d.qn          = hdr_be[95:64];   // bytes 6..9
      seg_d.msn         = hdr_be[63:32];   // bytes 10..13
      seg_d.mo          = hdr_be[31:0];    // bytes 14..17
      seg_d.hdr_raw     = hdr_cur;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cnt_q        <= '0;
      beat_valid_q <= 1'b0;
      seg_valid_q  <= 1'b0;
    end else begin
      cnt_q        <= cnt_d;
      beat_valid_q <= beat_valid_d;
      seg_valid_q  <= seg_valid_d;
    end
  end

  // Data registers: meaningful only while the matching valid is set, no reset needed.
  always_ff @(posedge clk_i) begin
    hdr_q       <= hdr_d;
    stream_q    <= stream_d;
    ssn_q       <= ssn_d;
    net_q       <= net_d;
    beat_data_q <= beat_data_d;
    beat_keep_q <= beat_keep_d;
    beat_last_q <= beat_last_d;
    seg_q       <= seg_d;
  end

  assign beat_data_o  = beat_data_q;
  assign beat_keep_o  = beat_keep_q;
  assign beat_last_o  = beat_last_q;
  assign beat_valid_o = beat_valid_q;
  assign seg_o        = seg_q;
  assign seg_valid_o  = seg_valid_q;
  assign seg_event_o  = seg_valid_q && seg_ready_i;

  // ---- Assertions (rtl/rnic_assert.svh) -----------------------------------------------------------
  // Both outputs hold while their FIFO is not ready; a descriptor never comes before its last beat.
  `RNIC_ASSERT_HOLD(a_beat_hold, clk_i, rst_ni, beat_valid_o, beat_ready_i,
                    {beat_data_o, beat_keep_o, beat_last_o})
  `RNIC_ASSERT_HOLD(a_seg_hold, clk_i, rst_ni, seg_valid_o, seg_ready_i, seg_o)
endmodule
