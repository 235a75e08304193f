// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
// rnic_rx_lookup's descriptor prefetch engine (issue 12: lookup split into units). It keeps up to
// RqPrefetch descriptors of posted buffers per queue read ahead of use, visiting the queues named in
// a hint FIFO (lookup hints doorbells, consumes and segments that find the cache low or missing).
// A visit:
//   read   the hint FIFO's head is taken into a register (e_next_q); the visit starts from there
//          (not held by hold_i) and reads the queue through rd_queue_o (rnic_lookup_rq's E port)
//   S1     from the answer (rd_*): posted = prod - cons, reqd = req - cons (32 bits; reqd < 0: the
//          consumer overtook the engine, counted as 0), kept as 9 low bits and a flag >= 2^9; lim =
//          min(ring size, RqPrefetch), a function of log2 (a producer beyond the ring is not
//          believed; the cache holds RqPrefetch); the 9-bit compares reqd >= posted, reqd >= lim
//   S2     n = min(posted, lim) - reqd, 0 when negative (from S1's compares); n = 0 or unconfigured
//          ends the visit
//   issue  n descriptor reads, one per iss_valid_o / iss_ready_i handshake (iss_addr_o: the ring
//          slot's address, iss_queue_o / iss_msn_o: whose descriptor); the last writes req (req_*)
// Two decision stages: the depth budget (issue 12). The next visit's read overlaps a visit's last
// cycle (S2 with nothing to request, or the last request, whose req write reaches the next S1 through
// the E port's forwarding). The stages work on the snapshot read: doorbells and consumes after it make
// the snapshot older, never wrong (fewer requests), and req is written only by the engine's own visit
// and QUEUE_CONFIG (which waits for idle_o).
// Hints: a hint is taken when hint_ready_o (16 deep); a dropped hint only delays a fetch.
module rnic_lookup_prefetch #(
  parameter int NumQueues  = 1024,  // 1..2^24
  parameter int RqPrefetch = 8,     // power of two, 2..256
  localparam int Qw = NumQueues > 1 ? $clog2(NumQueues) : 1
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic          hint_valid_i,
  input  logic [Qw-1:0] hint_queue_i,
  output logic          hint_ready_o,
  input  logic          hold_i,        // no visit starts in this cycle
  output logic [Qw-1:0] rd_queue_o,    // the queue read for the next visit
  input  logic          rd_cfg_i,      // its answer, one cycle after the address
  input  logic [63:0]   rd_base_i,
  input  logic [4:0]    rd_log2_i,
  input  logic [31:0]   rd_prod_i,
  input  logic [31:0]   rd_cons_i,
  input  logic [31:0]   rd_req_i,
  output logic          iss_valid_o,
  input  logic          iss_ready_i,
  output logic [63:0]   iss_addr_o,
  output logic [Qw-1:0] iss_queue_o,
  output logic [31:0]   iss_msn_o,
  output logic          req_we_o,
  output logic [Qw-1:0] req_queue_o,
  output logic [31:0]   req_msn_o,
  output logic          idle_o
);
  localparam int PfIw = $clog2(RqPrefetch);
  localparam int LimW = 9;  // lim <= RqPrefetch <= 256

  initial begin
    if (RqPrefetch < 2 || RqPrefetch > 256 || (RqPrefetch & (RqPrefetch - 1)) != 0)
      $fatal(1, "rnic_lookup_prefetch: RqPrefetch must be a power of two, 2..256");
  end

  typedef enum logic [1:0] {E_IDLE, E_S1, E_S2, E_ISSUE} eng_e;
  eng_e eng_q, eng_d;
  logic [Qw-1:0]   e_queue_q, e_queue_d;
  logic [31:0]     e_msn_q, e_msn_d;     // next MSN to request
  logic [31:0]     e_slot_q, e_slot_d;   // e_msn - 1 (its ring slot before the mask)
  logic [PfIw:0]   e_left_q, e_left_d;   // requests left in this visit
  logic [63:0]     e_base_q;             // the visited queue's ring (S1 on)
  logic [31:0]     e_mask_q;             //   its size - 1

  // ---- hints, and the next queue to visit taken into a register (the start of a visit does not
  // reach back into the FIFO: the depth budget)
  logic [Qw-1:0] hint_out;
  logic hint_out_valid, hint_pop, e_next_valid_q;
  logic [Qw-1:0] e_next_q;
  logic [$clog2(16):0] hint_count;
  rnic_fifo #(.Width(Qw), .Depth(16)) u_hints (
    .clk_i, .rst_ni,
    .in_data_i(hint_queue_i), .in_valid_i(hint_valid_i), .in_ready_o(hint_ready_o),
    .out_data_o(hint_out), .out_valid_o(hint_out_valid), .out_ready_i(hint_pop),
    .count_o(hint_count));
  assign hint_pop = hint_out_valid && !e_next_valid_q;
  assign rd_queue_o = e_next_q;

  // ---- S1: from the read's answer
  logic            e_cfg_q;
  logic [31:0]     e_cons_q, e_req_q;
  logic            e_rgep_q, e_rgel_q;   // reqd >= posted, reqd >= lim (low bits; S1 compares)
  logic [LimW-1:0] e_p_q, e_r_q;         // posted, reqd (0 when negative): their low bits
  logic            e_pbig_q, e_rbig_q;   //   and whether they are >= 2^9
  logic            e_rneg_q;             // reqd < 0
  logic [LimW-1:0] e_lim_q, e_lim_s1, e_p_s1, e_r_s1;
  logic [31:0]     e_posted_s1, e_reqd_s1;
  assign e_lim_s1 = rd_log2_i >= 5'(PfIw) ? LimW'(RqPrefetch) : LimW'(1) << rd_log2_i;
  assign e_posted_s1 = rd_prod_i - rd_cons_i;
  assign e_reqd_s1 = rd_req_i - rd_cons_i;  // requested ahead of the consumer
  assign e_p_s1 = e_posted_s1[LimW-1:0];
  assign e_r_s1 = e_reqd_s1[31] ? '0 : e_reqd_s1[LimW-1:0];
  always_ff @(posedge clk_i) begin
    if (eng_q == E_S1) begin
      e_cfg_q <= rd_cfg_i;
      e_base_q <= rd_base_i;
      e_mask_q <= (32'd1 << rd_log2_i) - 32'd1;
      e_lim_q <= e_lim_s1;
      e_cons_q <= rd_cons_i;
      e_req_q <= rd_req_i;
      e_p_q <= e_p_s1;
      e_rgep_q <= e_r_s1 >= e_p_s1;
      e_rgel_q <= e_r_s1 >= e_lim_s1;
      e_pbig_q <= e_posted_s1[31:LimW] != '0;
      e_r_q <= e_r_s1;
      e_rbig_q <= !e_reqd_s1[31] && e_reqd_s1[30:LimW] != '0;
      e_rneg_q <= e_reqd_s1[31];
    end
  end

  // ---- S2: how many
  logic [LimW-1:0] e_m, e_n;
  logic            e_zero;
  always_comb begin
    e_m = e_pbig_q || e_p_q > e_lim_q ? e_lim_q : e_p_q;
    e_n = e_m - e_r_q;
    // n = 0: reqd >= min(posted, lim), as two compares side by side
    e_zero = !e_cfg_q || e_rbig_q || (!e_pbig_q && e_rgep_q) || e_rgel_q;
  end
  logic unused_n;  // n <= lim <= RqPrefetch: PfIw + 1 bits
  assign unused_n = ^{e_n, hint_count};

  // ---- issue
  logic iss_take, e_free, e_start;
  assign iss_valid_o = eng_q == E_ISSUE;
  assign iss_take = iss_valid_o && iss_ready_i;
  assign iss_addr_o = e_base_q + {28'b0, e_slot_q & e_mask_q, 4'b0};
  assign iss_queue_o = e_queue_q;
  assign iss_msn_o = e_msn_q;
  assign req_queue_o = e_queue_q;
  assign req_msn_o = e_msn_q;                 // the last requested MSN
  assign idle_o = eng_q == E_IDLE;

  // A visit may start when idle or in the last cycle of the one before.
  assign e_free = eng_q == E_IDLE || (eng_q == E_S2 && e_zero) ||
                  (iss_take && e_left_q == (PfIw + 1)'(1));
  assign e_start = e_free && e_next_valid_q && !hold_i;

  always_comb begin
    eng_d = eng_q;
    e_queue_d = e_queue_q;
    e_msn_d = e_msn_q;
    e_slot_d = e_slot_q;
    e_left_d = e_left_q;
    req_we_o = 1'b0;
    unique case (eng_q)
      E_IDLE: ;
      E_S1: eng_d = E_S2;
      E_S2: begin
        // The first MSN to request: the one after the last requested, or after the consumer.
        e_msn_d = (e_rneg_q ? e_cons_q : e_req_q) + 32'd1;
        e_slot_d = e_rneg_q ? e_cons_q : e_req_q;
        e_left_d = (PfIw + 1)'(e_n);
        eng_d = e_zero ? E_IDLE : E_ISSUE;
      end
      E_ISSUE: if (iss_take) begin
        e_msn_d = e_msn_q + 32'd1;
        e_slot_d = e_slot_q + 32'd1;
        e_left_d = e_left_q - 1'b1;
        if (e_left_q == (PfIw + 1)'(1)) begin
          req_we_o = 1'b1;
          eng_d = E_IDLE;
        end
      end
      default: eng_d = E_IDLE;
    endcase
    if (e_start) begin
      e_queue_d = e_next_q;
      eng_d = E_S1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      eng_q <= E_IDLE;
      e_next_valid_q <= 1'b0;
    end else begin
      eng_q <= eng_d;
      if (hint_pop) e_next_valid_q <= 1'b1;
      else if (e_start) e_next_valid_q <= 1'b0;
    end
  end
  always_ff @(posedge clk_i) begin
    e_queue_q <= e_queue_d;
    e_msn_q <= e_msn_d;
    e_slot_q <= e_slot_d;
    e_left_q <= e_left_d;
    if (hint_pop) e_next_q <= hint_out;
  end
endmodule
