// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
// The SCTP checksum check (issue 14; RFC 9260 6.8 and appendix A, RFC 3309) of every packet of a
// stream: one SCTP packet per AXI-Stream packet (the UDP payload), a tap beside the stream with no
// ready of its own, one beat per cycle for any length, packets back to back or with any gaps (beats
// as rnic_crc32c says: tkeep contiguous from bit 0, partial only on the last beat).
// It computes the CRC32c with packet bytes 8..11 (the checksum field; beat 0, or beat 1 at DataWidth
// 64) taken as zero, captures the field, and per packet, in packet order, pulses out_valid_o with
//   out_crc_o  the CRC32c (the value SCTP stores least significant byte first at bytes 8..11)
//   out_ok_o   1 when the field holds out_crc_o (bytes 8..11 read as a little-endian word)
// A packet shorter than 12 bytes (no whole common header) gets out_ok_o = 0 and out_crc_o = the CRC32c
// of its bytes with those of 8..11 it has taken as zero.
// Latency: log2(DataWidth/8) + 4 cycles from the cycle of a packet's last beat to its out_valid_o
// (10 at DataWidth 512, 7 at 64): rnic_crc32c's, then the compare register.
module rnic_sctp_crc #(
  parameter int DataWidth = 512  // 64..512, a power of two
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   in_valid_i,
  input  logic [DataWidth-1:0]   in_data_i,
  input  logic [DataWidth/8-1:0] in_keep_i,
  input  logic                   in_last_i,
  output logic                   out_valid_o,
  output logic                   out_ok_o,
  output logic [31:0]            out_crc_o
);
  localparam int Bytes = DataWidth / 8;
  localparam int FieldBeat = 8 / Bytes;  // the beat holding bytes 8..11 (both ends in the same beat)
  localparam int FieldPos = 8 % Bytes;   // their first byte's place in it

  // Beats of the current packet seen so far, saturating at 2 (FieldBeat is 0 or 1).
  logic [1:0]  beat_q;
  logic        at_field, before_field, is_short;
  logic [31:0] field_q, field_now;
  logic [Bytes-1:0] zero;
  assign at_field = beat_q == 2'(FieldBeat);
  assign before_field = FieldBeat == 1 && beat_q == 2'd0;
  // Only read on the last beat: the packet ends before byte 11.
  assign is_short = before_field || (at_field && !in_keep_i[FieldPos+3]);
  assign field_now = at_field ? in_data_i[8*FieldPos +: 32] : field_q;
  assign zero = at_field ? Bytes'(4'hF) << FieldPos : '0;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) beat_q <= 2'd0;
    else if (in_valid_i) beat_q <= in_last_i ? 2'd0 : (beat_q == 2'd2 ? 2'd2 : beat_q + 2'd1);
  end
  always_ff @(posedge clk_i) begin
    if (in_valid_i && at_field) field_q <= in_data_i[8*FieldPos +: 32];
  end

  logic        crc_valid, crc_short;
  logic [31:0] crc, crc_field;
  rnic_crc32c #(.DataWidth(DataWidth), .UserWidth(33)) u_engine (
    .clk_i,
    .rst_ni,
    .in_valid_i,
    .in_data_i,
    .in_keep_i,
    .in_zero_i  (zero),
    .in_last_i,
    .in_user_i  ({is_short, field_now}),
    .out_valid_o(crc_valid),
    .out_crc_o  (crc),
    .out_user_o ({crc_short, crc_field})
  );

  logic        out_valid_q, out_ok_q;
  logic [31:0] out_crc_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) out_valid_q <= 1'b0;
    else out_valid_q <= crc_valid;
  end
  always_ff @(posedge clk_i) begin
    if (crc_valid) begin
      out_ok_q <= !crc_short && crc_field == crc;
      out_crc_q <= crc;
    end
  end
  assign out_valid_o = out_valid_q;
  assign out_ok_o = out_ok_q;
  assign out_crc_o = out_crc_q;

  `RNIC_ASSERT(a_field_one_beat, clk_i, rst_ni, FieldPos + 4 <= Bytes)
endmodule
