// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
// CRC32c of every packet of a stream (issue 14: the SCTP checksum, RFC 9260 6.8 and appendix A,
// RFC 3309): a tap beside the stream, no ready of its own: every beat with in_valid_i is taken in
// the cycle it is offered. One beat per cycle sustained for any packet length, packets back to back
// (the first beat of a packet in the cycle after the previous in_last_i) or with any gaps.
// Beats: in_keep_i contiguous from bit 0, all ones except on the last beat (at least one byte there);
// in_zero_i marks bytes of the beat taken as zero (SCTP's checksum field); in_user_i is sampled on the
// last beat and comes back with that packet's CRC.
// Output: out_valid_o for one cycle per packet, in packet order, exactly Latency = log2(DataWidth/8)
// + 3 cycles after the cycle of its last beat (9 at DataWidth 512, 6 at 64), with out_crc_o the standard
// CRC32c (init 0xFFFFFFFF, reflected, final xor 0xFFFFFFFF; "123456789" -> 0xE3069283): SCTP puts its
// bytes least significant first into its checksum field.
// Reset (rst_ni low, synchronous): every packet in flight, results included, is dropped; the next
// valid beat after it starts a packet.
// Pipeline: A registers the beat with its taken-as-zero and missing bytes zeroed; B multiplies it by
// the data matrix (its register contribution from 0, a 32 x DataWidth XOR matrix) and turns the last
// beat's tkeep into m = the number of missing bytes; C is the one loop, state = x^(8B) * state ^ B's
// term (a 32x32 matrix; init 0xFFFFFFFF at a packet's first beat), which treats every beat as full: a
// last beat of n bytes leaves the register as after n bytes and m = B - n zero bytes. U0..U(log2 B - 1)
// undo those zero bytes: stage u multiplies by x^(-8*2^u) mod P (a 32x32 matrix) when bit u of m is set.
// Matrices: rtl/rnic_crc32c_tables.svh, written and self-checked by scripts/gen_crc32c_tables.py
// (literal constants: Yosys 0.23 never evaluates a constant function here); crc.TablesUpToDate
// regenerates and compares.
module rnic_crc32c #(
  parameter int DataWidth = 512,  // 64..512, a power of two
  parameter int UserWidth = 1     // sideband carried from a packet's last beat to its CRC
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   in_valid_i,
  input  logic [DataWidth-1:0]   in_data_i,
  input  logic [DataWidth/8-1:0] in_keep_i,
  input  logic [DataWidth/8-1:0] in_zero_i,
  input  logic                   in_last_i,
  input  logic [UserWidth-1:0]   in_user_i,
  output logic                   out_valid_o,
  output logic [31:0]            out_crc_o,
  output logic [UserWidth-1:0]   out_user_o
);
  localparam int Bytes = DataWidth / 8;
  localparam int Lb = $clog2(Bytes);      // undo stages; bits of m

`include "rnic_crc32c_tables.svh"

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_crc32c: DataWidth must be 64, 128, 256 or 512");
    if (UserWidth < 1) $fatal(1, "rnic_crc32c: UserWidth must be >= 1");
  end

  // ---- A: the beat, bytes not taken zeroed
  logic                 a_valid_q, a_last_q;
  logic [DataWidth-1:0] a_data_q;
  logic [Bytes-1:0]     a_keep_q;
  logic [UserWidth-1:0] a_user_q;
  logic [DataWidth-1:0] in_mask;
  for (genvar k = 0; k < Bytes; k++) begin : g_mask
    assign in_mask[8*k +: 8] = {8{in_keep_i[k] & ~in_zero_i[k]}};
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) a_valid_q <= 1'b0;
    else a_valid_q <= in_valid_i;
  end
  always_ff @(posedge clk_i) begin
    if (in_valid_i) begin
      a_data_q <= in_data_i & in_mask;
      a_keep_q <= in_keep_i;
      a_last_q <= in_last_i;
      a_user_q <= in_user_i;
    end
  end

  // ---- B: the beat's term (register after the B bytes from 0); m of a last beat
  logic                 b_valid_q, b_last_q;
  logic [31:0]          b_term, b_term_q;
  logic [Lb-1:0]        b_m, b_m_q;
  logic [UserWidth-1:0] b_user_q;
  for (genvar i = 0; i < 32; i++) begin : g_data
    // Row i of the 64-byte matrix, its last Bytes bytes (see the tables' header).
    assign b_term[i] = ^(a_data_q & RNIC_CRC32C_DATA_ROWS[512*i + 8*(64-Bytes) +: DataWidth]);
  end
  // tkeep is a thermometer code: its one 1 -> 0 edge (or its top bit) gives n, m = Bytes - n.
  always_comb begin
    b_m = '0;
    for (int n = 1; n < Bytes; n++) begin
      if (a_keep_q[n-1] && !a_keep_q[n]) b_m = b_m | Lb'(Bytes - n);
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) b_valid_q <= 1'b0;
    else b_valid_q <= a_valid_q;
  end
  always_ff @(posedge clk_i) begin
    if (a_valid_q) begin
      b_term_q <= b_term;
      b_m_q <= a_last_q ? b_m : '0;
      b_last_q <= a_last_q;
      b_user_q <= a_user_q;
    end
  end

  // ---- C: the running register (the one loop)
  logic                 c_first_q;  // the next beat starts a packet
  logic                 c_valid_q;  // c_state_q is a packet's register after its last beat
  logic [31:0]          c_state_q, c_base, c_adv;
  logic [Lb-1:0]        c_m_q;
  logic [UserWidth-1:0] c_user_q;
  assign c_base = c_first_q ? 32'hFFFF_FFFF : c_state_q;
  for (genvar i = 0; i < 32; i++) begin : g_adv
    assign c_adv[i] = ^(c_base & RNIC_CRC32C_ADVANCE_ROWS[1024*(Lb-3) + 32*i +: 32]);
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      c_first_q <= 1'b1;
      c_valid_q <= 1'b0;
    end else begin
      c_valid_q <= b_valid_q && b_last_q;
      if (b_valid_q) c_first_q <= b_last_q;
    end
  end
  always_ff @(posedge clk_i) begin
    if (b_valid_q) c_state_q <= c_adv ^ b_term_q;
    if (b_valid_q && b_last_q) begin
      c_m_q <= b_m_q;
      c_user_q <= b_user_q;
    end
  end

  // ---- U0..U(Lb-1): undo the last beat's m zero bytes, bit u of m in stage u
  // Flat per-stage registers (stage u's input at index u; index Lb is the output).
  logic [Lb:0]              u_valid;
  logic [32*(Lb+1)-1:0]     u_crc;
  logic [Lb*(Lb+1)-1:0]     u_m;
  logic [UserWidth*(Lb+1)-1:0] u_user;
  assign u_valid[0] = c_valid_q;
  assign u_crc[31:0] = c_state_q;
  assign u_m[Lb-1:0] = c_m_q;
  assign u_user[UserWidth-1:0] = c_user_q;
  for (genvar u = 0; u < Lb; u++) begin : g_undo
    logic [31:0]          prod, crc_q;
    logic                 valid_q;
    logic [Lb-1:0]        m_q;
    logic [UserWidth-1:0] user_q;
    for (genvar i = 0; i < 32; i++) begin : g_row
      assign prod[i] = ^(u_crc[32*u +: 32] & RNIC_CRC32C_UNDO_ROWS[1024*u + 32*i +: 32]);
    end
    always_ff @(posedge clk_i) begin
      if (!rst_ni) valid_q <= 1'b0;
      else valid_q <= u_valid[u];
    end
    always_ff @(posedge clk_i) begin
      if (u_valid[u]) begin
        crc_q <= u_m[Lb*u + u] ? prod : u_crc[32*u +: 32];
        m_q <= u_m[Lb*u +: Lb];
        user_q <= u_user[UserWidth*u +: UserWidth];
      end
    end
    assign u_valid[u+1] = valid_q;
    assign u_crc[32*(u+1) +: 32] = crc_q;
    assign u_m[Lb*(u+1) +: Lb] = m_q;
    assign u_user[UserWidth*(u+1) +: UserWidth] = user_q;
  end

  assign out_valid_o = u_valid[Lb];
  assign out_crc_o = ~u_crc[32*Lb +: 32];
  assign out_user_o = u_user[UserWidth*Lb +: UserWidth];

  logic unused_m;  // the last stage's copy of m (every bit already used)
  assign unused_m = ^u_m[Lb*Lb +: Lb];

  // Beats as the header says: tkeep contiguous from bit 0, at least one byte, full unless last.
  `RNIC_ASSERT(a_keep_contiguous, clk_i, rst_ni,
               !in_valid_i || (in_keep_i != '0 && (in_keep_i & (in_keep_i + Bytes'(1))) == '0))
  `RNIC_ASSERT(a_keep_full_unless_last, clk_i, rst_ni, !in_valid_i || in_last_i || &in_keep_i)
endmodule
