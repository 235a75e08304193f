// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
// rnic_rx_lookup's receive queues (issue 12: lookup split into units): per queue (stream, QN) its
// configuration and MSN state, and the descriptor cache. A queue is named by its index
// {stream, QN} (NumQueues = NumStreams * NumQns).
// Per queue (free-running 32-bit MSNs, RFC 5041 4.3):
//   cfg     configured, ring base, log2 of the ring's entries
//   prod    MSN of the last posted buffer (doorbells)
//   head    next MSN to deliver (cons = head - 1)
//   req     MSN of the last descriptor the prefetch engine requested
//   landed  MSN of the last descriptor written into the cache
//   cache   RqPrefetch descriptors, the one of MSN m in slot (m - 1) mod RqPrefetch: {MSN, buffer
//           address, length, read failed}
// Read ports, one read per cycle each, always taken, answered in the next cycle from the RAMs'
// output registers (a table read by several ports is kept in copies written together). An answer
// holds the tables as they were before the writes of the read's cycle, except where forwarding is
// named:
//   A  the segment pipeline: cfg, prod, cons, landed of a_queue_i and the cache slot a_slot_i
//   E  the prefetch engine: cfg, prod, cons, req of e_queue_i; req with the write of the read's cycle
//      forwarded (the engine's own last request, or a start)
//   C  consumes: c_valid_i with c_queue_i (the read address every cycle) consumes a message: head + 1,
//      read in the cycle taken, written in the next (c_busy_o), with the head write of the cycle
//      before forwarded
// Writes (one per table per cycle; the owner never asks two of the same table in a cycle except as
// the priorities say):
//   cfg    cfg_we_i: the queue's configuration word (cfg_set_i = 0 clears it: unconfigured)
//   start  start_i (with cfg_we_i, cfg_set_i = 1, QUEUE_CONFIG): the queue starts empty at MSN
//          start_msn_i: prod = req = landed = start - 1, head = start. It takes the write ports of
//          prod, head, req and landed: a doorbell, a consume's second cycle, a request or a landing
//          in its cycle, of any queue, would be lost (a landing's cache slot is still written), so
//          the owner asks none of them then (lookup's C_QWR)
//   db     db_we_i: prod = db_prod_i
//   req    req_we_i: req = req_msn_i (the engine's last requested MSN)
//   land   land_we_i: the descriptor of MSN land_msn_i into its cache slot, landed = land_msn_i
// Nothing is cleared by reset: the owner's reset walk clears every configuration; a queue's MSN
// state is written by start before the queue is used.
module rnic_lookup_rq #(
  parameter int NumQueues  = 1024,  // 1..2^24
  parameter int RqPrefetch = 8,     // descriptors cached per queue (power of two, 2..256)
  localparam int Qw = NumQueues > 1 ? $clog2(NumQueues) : 1,
  localparam int Pw = $clog2(RqPrefetch)
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  // A
  input  logic [Qw-1:0] a_queue_i,
  input  logic [Pw-1:0] a_slot_i,
  output logic          a_cfg_o,
  output logic [63:0]   a_base_o,
  output logic [4:0]    a_log2_o,
  output logic [31:0]   a_prod_o,
  output logic [31:0]   a_cons_o,
  output logic [31:0]   a_landed_o,
  output logic [31:0]   a_cd_msn_o,
  output logic [63:0]   a_cd_addr_o,
  output logic [31:0]   a_cd_len_o,
  output logic          a_cd_err_o,
  // E
  input  logic [Qw-1:0] e_queue_i,
  output logic          e_cfg_o,
  output logic [63:0]   e_base_o,
  output logic [4:0]    e_log2_o,
  output logic [31:0]   e_prod_o,
  output logic [31:0]   e_cons_o,
  output logic [31:0]   e_req_o,
  // C
  input  logic          c_valid_i,
  input  logic [Qw-1:0] c_queue_i,
  output logic          c_busy_o,
  output logic [Qw-1:0] c_busy_queue_o,
  // writes
  input  logic          cfg_we_i,
  input  logic [Qw-1:0] cfg_queue_i,
  input  logic          cfg_set_i,
  input  logic [63:0]   cfg_base_i,
  input  logic [4:0]    cfg_log2_i,
  input  logic          start_i,
  input  logic [31:0]   start_msn_i,
  input  logic          db_we_i,
  input  logic [Qw-1:0] db_queue_i,
  input  logic [31:0]   db_prod_i,
  input  logic          req_we_i,
  input  logic [Qw-1:0] req_queue_i,
  input  logic [31:0]   req_msn_i,
  input  logic          land_we_i,
  input  logic [Qw-1:0] land_queue_i,
  input  logic [31:0]   land_msn_i,
  input  logic [63:0]   land_addr_i,
  input  logic [31:0]   land_len_i,
  input  logic          land_err_i
);
  localparam int QcCfg = 0, QcBase = 1, QcLog2 = 65, QcW = 70;       // configuration word
  localparam int CdMsn = 0, CdAddr = 32, CdLen = 96, CdErr = 128, CdW = 129;  // cached descriptor

  initial begin
    if (NumQueues < 1 || NumQueues > (1 << 24)) $fatal(1, "rnic_lookup_rq: NumQueues must be 1..2^24");
    if (RqPrefetch < 2 || RqPrefetch > 256 || (RqPrefetch & (RqPrefetch - 1)) != 0)
      $fatal(1, "rnic_lookup_rq: RqPrefetch must be a power of two, 2..256");
  end

  logic [QcW-1:0] qc_a_mem [NumQueues];
  logic [QcW-1:0] qc_e_mem [NumQueues];
  logic [31:0]    prod_a_mem [NumQueues];
  logic [31:0]    prod_e_mem [NumQueues];
  logic [31:0]    cons_a_mem [NumQueues];  // the pipeline's copy holds cons = head - 1 too
  logic [31:0]    cons_e_mem [NumQueues];  // the engine's copy holds cons = head - 1
  logic [31:0]    head_c_mem [NumQueues];
  logic [31:0]    req_mem [NumQueues];
  logic [31:0]    landed_mem [NumQueues];
  logic [CdW-1:0] cache_mem [NumQueues * RqPrefetch];

  logic [QcW-1:0] qc_a_rdata, qc_e_rdata, qc_wdata;
  logic [31:0]    prod_a_rdata, prod_e_rdata, cons_a_rdata, cons_e_rdata, head_c_rdata;
  logic [31:0]    req_rdata, landed_rdata;
  logic [CdW-1:0] cache_rdata;

  // ---- write ports
  logic          prod_we, head_we, req_we, landed_we;
  logic [Qw-1:0] prod_waddr, head_waddr, req_waddr, landed_waddr;
  logic [31:0]   prod_wdata, head_wdata, cons_wdata, req_wdata, landed_wdata, start_prev;
  logic          c2_valid_q;               // consume: head read last cycle, written this cycle
  logic [Qw-1:0] c2_queue_q;
  logic          hw_last_q;                // the head write of the last cycle (forwarding)
  logic [Qw-1:0] hw_last_addr_q;
  logic [31:0]   hw_last_data_q;

  always_comb begin
    qc_wdata = '0;
    qc_wdata[QcCfg] = cfg_set_i;
    qc_wdata[QcBase +: 64] = cfg_base_i;
    qc_wdata[QcLog2 +: 5] = cfg_log2_i;
  end
  assign start_prev = start_msn_i - 32'd1;

  always_comb begin
    prod_we = db_we_i;
    prod_waddr = db_queue_i;
    prod_wdata = db_prod_i;
    // A consume, second cycle: head + 1 (forwarded from the last cycle's head write).
    head_we = c2_valid_q;
    head_waddr = c2_queue_q;
    cons_wdata = hw_last_q && hw_last_addr_q == c2_queue_q ? hw_last_data_q : head_c_rdata;
    head_wdata = cons_wdata + 32'd1;
    req_we = req_we_i;
    req_waddr = req_queue_i;
    req_wdata = req_msn_i;
    landed_we = land_we_i;
    landed_waddr = land_queue_i;
    landed_wdata = land_msn_i;
    if (start_i) begin
      prod_we = 1'b1;
      prod_waddr = cfg_queue_i;
      prod_wdata = start_prev;
      head_we = 1'b1;
      head_waddr = cfg_queue_i;
      head_wdata = start_msn_i;
      cons_wdata = start_prev;
      req_we = 1'b1;
      req_waddr = cfg_queue_i;
      req_wdata = start_prev;
      landed_we = 1'b1;
      landed_waddr = cfg_queue_i;
      landed_wdata = start_prev;
    end
  end

  // ---- the RAMs (registered reads)
  always_ff @(posedge clk_i) begin
    if (cfg_we_i) qc_a_mem[cfg_queue_i] <= qc_wdata;
    qc_a_rdata <= qc_a_mem[a_queue_i];
  end
  always_ff @(posedge clk_i) begin
    if (cfg_we_i) qc_e_mem[cfg_queue_i] <= qc_wdata;
    qc_e_rdata <= qc_e_mem[e_queue_i];
  end
  always_ff @(posedge clk_i) begin
    if (prod_we) prod_a_mem[prod_waddr] <= prod_wdata;
    prod_a_rdata <= prod_a_mem[a_queue_i];
  end
  always_ff @(posedge clk_i) begin
    if (prod_we) prod_e_mem[prod_waddr] <= prod_wdata;
    prod_e_rdata <= prod_e_mem[e_queue_i];
  end
  always_ff @(posedge clk_i) begin
    if (head_we) cons_a_mem[head_waddr] <= cons_wdata;
    cons_a_rdata <= cons_a_mem[a_queue_i];
  end
  always_ff @(posedge clk_i) begin
    if (head_we) cons_e_mem[head_waddr] <= cons_wdata;
    cons_e_rdata <= cons_e_mem[e_queue_i];
  end
  always_ff @(posedge clk_i) begin
    if (head_we) head_c_mem[head_waddr] <= head_wdata;
    head_c_rdata <= head_c_mem[c_queue_i];
  end
  always_ff @(posedge clk_i) begin
    if (req_we) req_mem[req_waddr] <= req_wdata;
    req_rdata <= req_mem[e_queue_i];
  end
  always_ff @(posedge clk_i) begin
    if (landed_we) landed_mem[landed_waddr] <= landed_wdata;
    landed_rdata <= landed_mem[a_queue_i];
  end
  always_ff @(posedge clk_i) begin
    if (land_we_i) cache_mem[{land_queue_i, Pw'(land_msn_i - 32'd1)}] <= {land_err_i, land_len_i, land_addr_i,
                                                                           land_msn_i};
    cache_rdata <= cache_mem[{a_queue_i, a_slot_i}];
  end

  // ---- registers: the consume's second cycle, forwarding
  logic          rq_fwd_q;                 // the E read's cycle wrote req (rq_hit_q: of its queue;
  logic          rq_hit_q;                 //   two registers, so the write enable's logic does not
  logic [31:0]   rq_last_data_q;           //   meet the address compare before a register)
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      c2_valid_q <= 1'b0;
      hw_last_q <= 1'b0;
    end else begin
      c2_valid_q <= c_valid_i;
      hw_last_q <= head_we;
    end
  end
  always_ff @(posedge clk_i) begin
    c2_queue_q <= c_queue_i;
    hw_last_addr_q <= head_waddr;
    hw_last_data_q <= head_wdata;
    rq_fwd_q <= req_we;
    rq_hit_q <= req_waddr == e_queue_i;
    rq_last_data_q <= req_wdata;
  end

  // ---- answers
  assign a_cfg_o = qc_a_rdata[QcCfg];
  assign a_base_o = qc_a_rdata[QcBase +: 64];
  assign a_log2_o = qc_a_rdata[QcLog2 +: 5];
  assign a_prod_o = prod_a_rdata;
  assign a_cons_o = cons_a_rdata;
  assign a_landed_o = landed_rdata;
  assign a_cd_msn_o = cache_rdata[CdMsn +: 32];
  assign a_cd_addr_o = cache_rdata[CdAddr +: 64];
  assign a_cd_len_o = cache_rdata[CdLen +: 32];
  assign a_cd_err_o = cache_rdata[CdErr];
  assign e_cfg_o = qc_e_rdata[QcCfg];
  assign e_base_o = qc_e_rdata[QcBase +: 64];
  assign e_log2_o = qc_e_rdata[QcLog2 +: 5];
  assign e_prod_o = prod_e_rdata;
  assign e_cons_o = cons_e_rdata;
  assign e_req_o = (rq_fwd_q && rq_hit_q) ? rq_last_data_q : req_rdata;
  assign c_busy_o = c2_valid_q;
  assign c_busy_queue_o = c2_queue_q;
endmodule
