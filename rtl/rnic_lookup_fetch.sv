// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
`include "rnic_assert.svh"
// rnic_rx_lookup's descriptor fetch: the kernel's only host-memory reads. Two requesters share one AR
// register:
//   dir  stage C's direct read (a segment whose MSN is further ahead than the cache reaches): taken
//        first, as soon as the AR register is free and the record of reads has room
//   eng  the prefetch engine's reads (rnic_lookup_prefetch's issue port), when no direct read waits
//        and eng_hold_i is 0 (QUEUE_CONFIG's start cycle: the engine's last request writes req)
// Each read is one burst covering the 16-byte receive descriptor (hw.def RNIC_RECORD(RQD)):
// ARADDR is the descriptor's address rounded down to the beat (buses of 128 bits and more: one beat,
// ARLEN 0) or the address itself (64 bits: two beats). Reads carry one ID, so their answers return
// in order: an in-order record of the reads in flight (up to MaxReads: {direct, queue, MSN, byte
// offset in the beat}) says whose each answer is. R: the descriptor is assembled from the beats; any
// beat with RRESP != OKAY marks it faulted (a local fault for the segment that uses it). At the last
// beat it is handed over in that cycle: a direct read's to stage C (rsp_dir_o), an engine read's to
// the descriptor cache (land_o: rnic_lookup_rq's land port), with its queue and MSN.
// R is held (RREADY 0) while r_hold_i is 1 (QUEUE_CONFIG's start cycle: a landing writes landed).
module rnic_lookup_fetch #(
  parameter int DataWidth = 512,   // AXI data width in bits (64, 128, 256 or 512)
  parameter int NumQueues = 1024,  // receive queues (stream x QN)
  parameter int MaxReads  = 32,    // descriptor reads in flight (power of two, 2..256)
  localparam int Qw = NumQueues > 1 ? $clog2(NumQueues) : 1
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 dir_valid_i,     // stage C wants its descriptor read
  input  logic [63:0]          dir_addr_i,
  input  logic [Qw-1:0]        dir_queue_i,
  input  logic [31:0]          dir_msn_i,
  output logic                 dir_take_o,      // the read is issued into the AR register
  input  logic                 eng_valid_i,     // the prefetch engine's next read
  input  logic [63:0]          eng_addr_i,
  input  logic [Qw-1:0]        eng_queue_i,
  input  logic [31:0]          eng_msn_i,
  input  logic                 eng_hold_i,
  output logic                 eng_ready_o,
  input  logic                 r_hold_i,
  output logic                 rsp_dir_o,       // pulse: stage C's descriptor is rsp_*_o
  output logic                 land_o,          // pulse: an engine read's descriptor is rsp_*_o
  output logic [Qw-1:0]        land_queue_o,    //   for this queue and MSN
  output logic [31:0]          land_msn_o,
  output logic [63:0]          rsp_addr_o,      // the descriptor (valid with rsp_dir_o or land_o)
  output logic [31:0]          rsp_len_o,
  output logic                 rsp_err_o,       //   an R beat was not OKAY
  output logic                 busy_o,          // a read is in the AR register or in flight
  output logic [63:0]          m_axi_araddr_o,
  output logic [7:0]           m_axi_arlen_o,
  output logic                 m_axi_arvalid_o,
  input  logic                 m_axi_arready_i,
  input  logic [DataWidth-1:0] m_axi_rdata_i,
  input  logic [1:0]           m_axi_rresp_i,
  input  logic                 m_axi_rlast_i,
  input  logic                 m_axi_rvalid_i,
  output logic                 m_axi_rready_o
);
  localparam int Bytes = DataWidth / 8;
  localparam int DescBeats = Bytes >= 16 ? 1 : 16 / Bytes;

  initial begin
    if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_lookup_fetch: DataWidth must be 64, 128, 256 or 512");
    if (MaxReads < 2 || MaxReads > 256 || (MaxReads & (MaxReads - 1)) != 0)
      $fatal(1, "rnic_lookup_fetch: MaxReads must be a power of two, 2..256");
  end

  // ---- AR: the direct read first, then the engine ---------------------------------------------------
  localparam int RdW = 1 + Qw + 32 + 6;   // {direct, queue, MSN, byte offset in the beat}
  logic ar_valid_q, ar_valid_d;
  logic [63:0] ar_addr_q, ar_addr_d;
  logic [RdW-1:0] rd_in, rd_out;
  logic rd_push, rd_in_ready, rd_out_valid, rd_pop;
  logic [$clog2(MaxReads):0] rd_count;
  logic ar_load, ar_free;

  assign ar_free = !ar_valid_q || m_axi_arready_i;
  assign dir_take_o = dir_valid_i && ar_free && rd_in_ready;
  assign eng_ready_o = !dir_valid_i && eng_valid_i && ar_free && rd_in_ready && !eng_hold_i;
  assign ar_load = dir_take_o || eng_ready_o;
  assign rd_push = ar_load;
  always_comb begin
    if (dir_take_o) rd_in = {1'b1, dir_queue_i, dir_msn_i, dir_addr_i[5:0]};
    else rd_in = {1'b0, eng_queue_i, eng_msn_i, eng_addr_i[5:0]};
  end
  always_comb begin
    ar_valid_d = ar_valid_q;
    ar_addr_d = ar_addr_q;
    if (ar_load) begin
      ar_valid_d = 1'b1;
      ar_addr_d = dir_take_o ? dir_addr_i : eng_addr_i;
    end else if (m_axi_arready_i) begin
      ar_valid_d = 1'b0;
    end
  end

  rnic_fifo #(.Width(RdW), .Depth(MaxReads)) u_reads (
    .clk_i, .rst_ni,
    .in_data_i(rd_in), .in_valid_i(rd_push), .in_ready_o(rd_in_ready),
    .out_data_o(rd_out), .out_valid_o(rd_out_valid), .out_ready_i(rd_pop), .count_o(rd_count));

  // ---- R: assemble the descriptor -------------------------------------------------------------------
  logic rd_dir;
  logic [Qw-1:0] rd_queue;
  logic [31:0] rd_msn;
  logic [5:0] rd_off;
  assign {rd_dir, rd_queue, rd_msn, rd_off} = rd_out;

  logic [127:0] r_desc_q, r_desc_d, r_desc_now, r_shifted;
  logic [7:0] r_beat_q, r_beat_d;
  logic r_err_q, r_err_d, r_err_now, r_take, r_done;
  assign r_shifted = 128'(512'(m_axi_rdata_i) >> (8 * (rd_off & 6'(Bytes - 1))));
  assign m_axi_rready_o = !r_hold_i;
  assign r_take = m_axi_rvalid_i && m_axi_rready_o;
  assign r_done = r_take && m_axi_rlast_i;
  assign rd_pop = r_done;
  always_comb begin
    r_desc_now = r_desc_q;
    if (DescBeats == 1) r_desc_now = r_shifted;
    else r_desc_now[r_beat_q[0] * 64 +: 64] = m_axi_rdata_i[63:0];  // 64-bit bus: two beats
    r_err_now = r_err_q || m_axi_rresp_i != 2'b00;
  end
  always_comb begin
    r_desc_d = r_desc_q;
    r_beat_d = r_beat_q;
    r_err_d = r_err_q;
    if (r_take) begin
      r_desc_d = r_desc_now;
      r_err_d = r_err_now;
      r_beat_d = r_beat_q + 8'd1;
      if (r_done) begin
        r_beat_d = '0;
        r_err_d = 1'b0;
      end
    end
  end

  assign rsp_dir_o = r_done && rd_dir;
  assign land_o = r_done && !rd_dir;
  assign land_queue_o = rd_queue;
  assign land_msn_o = rd_msn;
  assign rsp_addr_o = r_desc_now[RNIC_RQD_ADDR_LSB +: RNIC_RQD_ADDR_BITS];
  assign rsp_len_o = r_desc_now[RNIC_RQD_LENGTH_LSB +: RNIC_RQD_LENGTH_BITS];
  assign rsp_err_o = r_err_now;
  assign busy_o = ar_valid_q || rd_out_valid;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ar_valid_q <= 1'b0;
      r_beat_q <= '0;
      r_err_q <= 1'b0;
    end else begin
      ar_valid_q <= ar_valid_d;
      r_beat_q <= r_beat_d;
      r_err_q <= r_err_d;
    end
  end
  always_ff @(posedge clk_i) begin
    ar_addr_q <= ar_addr_d;
    r_desc_q <= r_desc_d;
  end

  // Descriptor reads: one burst covering the 16-byte descriptor.
  localparam logic [63:0] BeatMask = 64'(Bytes) - 64'd1;
  assign m_axi_araddr_o = Bytes >= 16 ? (ar_addr_q & ~BeatMask) : ar_addr_q;
  assign m_axi_arlen_o = 8'(DescBeats - 1);
  assign m_axi_arvalid_o = ar_valid_q;

  // The record's fill level (monitoring only); the cookie is the driver's own.
  logic unused;
  assign unused = ^{rd_count, r_desc_now[RNIC_RQD_COOKIE_LSB +: RNIC_RQD_COOKIE_BITS]};
  `RNIC_ASSERT_HOLD(a_ar_hold, clk_i, rst_ni, m_axi_arvalid_o, m_axi_arready_i,
                    {m_axi_araddr_o, m_axi_arlen_o})
endmodule
