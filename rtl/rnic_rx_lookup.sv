// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
`include "rnic_assert.svh"
// Stage 2: the lookup. A pipeline that takes one segment per cycle:
//   A  the segment is accepted; every table is read at its address (registered-read RAMs)
//   B  the data is there: the item's fields and the queue arithmetic, as flags, into C's registers
//   C  the decision from registers: an untagged segment takes its receive-buffer descriptor from the
//      cache (C's flags), waits for it (re-reading its tables: a miss), or reads it directly
//   O  the output register to validate
// Each stage's logic is one carry chain at most (the depth budget, issue 12).
// The tables are units (issue 12), each with a request/response interface and its own testbench:
//   u_stag      rnic_lookup_stag      the STag table with its key table
//   u_stream    rnic_lookup_stream    the stream table (state, PD)
//   u_rq        rnic_lookup_rq        the receive queues (configuration, MSN state) and the
//                                     descriptor cache
//   u_prefetch  rnic_lookup_prefetch  the prefetch engine: per queue up to RqPrefetch descriptors of
//                                     posted buffers read ahead of use, visiting the queues hinted
//   u_fetch     rnic_lookup_fetch     the descriptor reads: C's direct reads and the engine's share
//                                     one AR register; the answers land in C or in the cache
// This module keeps the segment pipeline and the table commands, each part its own block by the state
// it drives: the table reads (A), B -> C -> O, the hints, the stream table's write port, the command
// state machine. A segment whose MSN is further ahead than the cache reaches reads its descriptor
// directly.
// Table commands run when the pipeline is empty; doorbells and consumes run alongside segments.
// STag keys: the card issues them (rnic_lookup_stag); STAG_WRITE returns the STag on cmd_result_o
// (decided in two cycles, C_RUN and C_SKEY; the command's end leaves from registers one cycle later),
// so an STag value is never issued twice in a row for an index.
// QUEUE_CONFIG of a configured queue is refused (configure again after STREAM_ENABLE).
// STAG_INVALIDATE and STREAM_TEARDOWN send a FENCE item, QUEUE_CONFIG a QUEUE_SET item; deliver
// completes them (fence_done) once everything before them is acknowledged. QUEUE_CONFIG writes the
// queue tables only when deliver echoes its QUEUE_SET, and no segment is looked up meanwhile, so
// every segment after it meets the new configuration in lookup, place and deliver alike.
module rnic_rx_lookup #(
  parameter int DataWidth   = 512,   // AXI data width in bits (descriptor fetch)
  parameter int StagEntries = 4096,  // STag table entries (STag index = STag[31:8])
  parameter int NumStreams  = 256,   // stream table entries
  parameter int NumQns      = 4,     // untagged queues per stream (power of two)
  parameter int RqPrefetch  = 8,     // descriptors cached per queue (power of two, 2..256)
  parameter int MaxReads    = 32,    // descriptor reads in flight (power of two, 2..256)
  parameter int TxPort      = 0      // 1: the transmit gather's table port (tx_*); 0: it answers 0
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  rnic_seg_t              seg_i,
  input  logic                   seg_valid_i,
  output logic                   seg_ready_o,
  input  logic [7:0]             cmd_op_i,        // from regs: RNIC_CMD_* and CMD_ARG0..9
  input  logic [32*10-1:0]       cmd_args_i,
  input  logic                   cmd_valid_i,
  output logic                   cmd_ready_o,
  output logic                   cmd_done_o,      // pulse: a command's lookup part finished
  output logic                   cmd_refused_o,   // pulse (with cmd_done_o): bad opcode or index
  output logic [31:0]            cmd_result_o,    // with cmd_done_o: STAG_WRITE's STag, else 0
  input  logic [15:0]            db_stream_i,     // doorbell: new producer index of (stream, qn)
  input  logic [7:0]             db_qn_i,
  input  logic [31:0]            db_prod_i,
  input  logic                   db_valid_i,
  output logic                   db_ready_o,
  input  logic [15:0]            cons_stream_i,   // from deliver (RNIC_CONS_*): a message of (stream,
  input  logic [7:0]             cons_qn_i,       //   qn) delivered, STREAM_RESET or QUEUE_SET reached
  input  logic [1:0]             cons_kind_i,     //   deliver, or the stream failed at delivery
  input  logic                   cons_valid_i,
  output logic                   cons_ready_o,
  output logic [15:0]            ssn_rd_stream_o, // read port into deliver's next_ssn,
  input  logic [15:0]            ssn_rd_next_i,   //   data one cycle after the address
  input  logic                   err_valid_i,     // from validate: a segment of the stream failed
  input  logic [15:0]            err_stream_i,
  input  logic [15:0]            err_pd_i,        //   its PD (the stream word is written whole),
  input  logic [1:0]             err_state_i,     //   the stream's new state (PENDING or ERROR)
  input  logic [15:0]            err_ssn_i,       //   and PENDING's DDP-SSN
  input  logic                   dn_busy_i,       // validate holds an item not yet decided: a
                                                  //   command waits for it (its err_valid_i)
  output logic [63:0]            m_axi_araddr_o,  // descriptor fetch (the kernel's only reads)
  output logic [7:0]             m_axi_arlen_o,
  output logic                   m_axi_arvalid_o,
  input  logic                   m_axi_arready_i,
  input  logic [DataWidth-1:0]   m_axi_rdata_i,
  input  logic [1:0]             m_axi_rresp_i,
  input  logic                   m_axi_rlast_i,
  input  logic                   m_axi_rvalid_i,
  output logic                   m_axi_rready_o,
  output rnic_lookup_t           lk_o,
  output logic                   lk_valid_o,
  input  logic                   lk_ready_i,
  // The transmit gather's table port (issue 35, docs/transmit.md; idle with the network side off):
  // tx_req_i asks for the STag entry of tx_stag_i's index and the state and PD of DDP stream
  // tx_stream_i; tx_rsp_o answers two cycles later, every field registered. One request per cycle may
  // be taken; the answer holds the tables with the writes up to two cycles before the request.
  input  logic                   tx_req_i,
  input  logic [31:0]            tx_stag_i,
  input  logic [15:0]            tx_stream_i,
  output logic                   tx_rsp_o,
  output logic                   tx_valid_o,        // the STag's index is in range and the entry valid
  output logic [7:0]             tx_key_o,
  output logic                   tx_local_read_o,
  output logic [15:0]            tx_pd_o,
  output logic                   tx_bound_o,
  output logic [15:0]            tx_bound_stream_o,
  output logic [63:0]            tx_base_to_o,
  output logic [63:0]            tx_length_o,
  output logic [63:0]            tx_addr_o,
  output logic [15:0]            tx_stream_pd_o,
  output logic                   tx_stream_live_o   // the stream's state is NORMAL or PENDING
`ifdef FORMAL
  ,
  // Observation ports for the proofs (read_verilog -formal defines FORMAL; tb/formal/lookup_fv.sv):
  // stage C takes an item's table data this cycle (the item moves in from B, or C's own re-read
  // answers), for the harness's snapshot; a command's end in the cycle it is decided (cmd_*_o are
  // their registered copies).
  output logic                   fv_c_load,
  output logic                   fv_cmd_done,
  output logic                   fv_cmd_refused,
  output logic [31:0]            fv_cmd_result
`endif
);
  localparam int StagIw = $clog2(StagEntries);
  localparam int StreamIw = NumStreams > 1 ? $clog2(NumStreams) : 1;
  localparam int QnIw = NumQns > 1 ? $clog2(NumQns) : 1;
  localparam int NumQueues = NumStreams * NumQns;
  localparam int QueueIw = $clog2(NumQueues) > 0 ? $clog2(NumQueues) : 1;
  localparam int PfIw = $clog2(RqPrefetch);
  localparam int InitEntries = StagEntries > NumQueues ? StagEntries : NumQueues;
  localparam int InitIw = $clog2(InitEntries) + 1;

  initial begin
    if (DataWidth < 64 || DataWidth > 512) $fatal(1, "rnic_rx_lookup: DataWidth must be 64..512");
    if (StagEntries < 2 || StagEntries > 65536) $fatal(1, "rnic_rx_lookup: StagEntries must be 2..65536");
    if (NumStreams < 1 || NumStreams > 65536) $fatal(1, "rnic_rx_lookup: NumStreams must be 1..65536");
    if (NumQns < 1 || NumQns > 256 || (NumQns & (NumQns - 1)) != 0)
      $fatal(1, "rnic_rx_lookup: NumQns must be a power of two <= 256");
    if (RqPrefetch < 2 || RqPrefetch > 256 || (RqPrefetch & (RqPrefetch - 1)) != 0)
      $fatal(1, "rnic_rx_lookup: RqPrefetch must be a power of two, 2..256");
    if (MaxReads < 2 || MaxReads > 256 || (MaxReads & (MaxReads - 1)) != 0)
      $fatal(1, "rnic_rx_lookup: MaxReads must be a power of two, 2..256");
  end

  // Read addresses: pipeline (A), consume (C); the engine reads through u_prefetch.
  logic [31:0]         stag_rd;          // the STag read (its index is STag[31:8])
  logic [15:0]         strm_rd;
  logic [QueueIw-1:0]  qa_raddr, qcons_raddr;
  logic [PfIw-1:0]     cache_rslot;

  // Write requests.
  logic                stag_wr, stag_set;  // the STag table's write requests (rnic_lookup_stag)
  logic [StagIw-1:0]   stag_windex;
  logic                strm_we;
  logic [15:0]         strm_waddr;
  logic [1:0]          strm_wstate;
  logic [15:0]         strm_wpd, strm_wessn;
  logic                qc_we, qc_set, q_start;
  logic [QueueIw-1:0]  qc_waddr;
  logic                prod_we;

  // ---- command decoding ---------------------------------------------------------------------------
  logic [31:0] a0, a1, a2, a3, a4, a5;  // the words the commands other than STAG_WRITE read
  assign {a5, a4, a3, a2, a1, a0} = cmd_args_i[32*6-1:0];
  // Argument NAME of a command (hw.def RNIC_ARG rows): its bits of cmd_args_i.
`define RNIC_LOOKUP_ARG(NAME) \
    cmd_args_i[32 * RNIC_ARG_``NAME``_WORD + RNIC_ARG_``NAME``_LSB +: RNIC_ARG_``NAME``_BITS]

  // ---- the STag table (with its key table): read by the segment pipeline, written by commands
  logic        stag_hit, stag_bound, stag_rw, stag_done;
  logic [7:0]  stag_key;
  logic [15:0] stag_pd, stag_stream;
  logic [63:0] stag_base, stag_len, stag_addr;
  logic [31:0] stag_result;
  logic        stag_unused, stag_rd_ready, stag_rsp_valid, stag_wr_ready;  // read every cycle;
  // the transmit port's answer (RAM outputs), registered below
  logic        tx_hit, tx_lr, tx_bound;
  logic [7:0]  tx_key;
  logic [15:0] tx_pd, tx_bstream;
  logic [63:0] tx_base, tx_len, tx_addr;
  // a write is asked for only when u_stag is ready (one command at a time)
  rnic_lookup_stag #(.StagEntries(StagEntries), .TxPort(TxPort)) u_stag (
    .clk_i, .rst_ni,
    .rd_valid_i(1'b1), .rd_stag_i(stag_rd), .rd_ready_o(stag_rd_ready),
    .rsp_valid_o(stag_rsp_valid), .rsp_hit_o(stag_hit), .rsp_key_o(stag_key), .rsp_pd_o(stag_pd),
    .rsp_bound_o(stag_bound), .rsp_stream_o(stag_stream), .rsp_remote_write_o(stag_rw),
    .rsp_remote_read_o(stag_unused), .rsp_base_to_o(stag_base), .rsp_length_o(stag_len),
    .rsp_addr_o(stag_addr),
    .tx_rd_i(tx_req_i), .tx_stag_i(tx_stag_i), .tx_hit_o(tx_hit), .tx_key_o(tx_key), .tx_local_read_o(tx_lr),
    .tx_pd_o(tx_pd), .tx_bound_o(tx_bound), .tx_stream_o(tx_bstream), .tx_base_to_o(tx_base),
    .tx_length_o(tx_len), .tx_addr_o(tx_addr),
    .wr_valid_i(stag_wr), .wr_set_i(stag_set), .wr_index_i(stag_windex),
    .wr_remote_write_i(`RNIC_LOOKUP_ARG(STAG_WRITE_REMOTE_WRITE)),
    .wr_remote_read_i(`RNIC_LOOKUP_ARG(STAG_WRITE_REMOTE_READ)),
    .wr_local_read_i(`RNIC_LOOKUP_ARG(STAG_WRITE_LOCAL_READ)), .wr_bound_i(`RNIC_LOOKUP_ARG(STAG_WRITE_BOUND)),
    .wr_pd_i(`RNIC_LOOKUP_ARG(STAG_WRITE_PD)), .wr_stream_i(`RNIC_LOOKUP_ARG(STAG_WRITE_STREAM)),
    .wr_base_to_i({`RNIC_LOOKUP_ARG(STAG_WRITE_BASE_TO_HI), `RNIC_LOOKUP_ARG(STAG_WRITE_BASE_TO_LO)}),
    .wr_length_i({`RNIC_LOOKUP_ARG(STAG_WRITE_LENGTH_HI), `RNIC_LOOKUP_ARG(STAG_WRITE_LENGTH_LO)}),
    .wr_addr_i({`RNIC_LOOKUP_ARG(STAG_WRITE_ADDR_HI), `RNIC_LOOKUP_ARG(STAG_WRITE_ADDR_LO)}), .wr_ready_o(stag_wr_ready), .wr_done_o(stag_done), .wr_stag_o(stag_result));

  logic cmd_index_ok;
  always_comb begin
    unique case (cmd_op_i)
      RNIC_CMD_STAG_WRITE, RNIC_CMD_STAG_INVALIDATE: cmd_index_ok = a0 < StagEntries;
      RNIC_CMD_STREAM_ENABLE, RNIC_CMD_STREAM_TEARDOWN: cmd_index_ok = a0 < NumStreams;
      RNIC_CMD_QUEUE_CONFIG: cmd_index_ok = a0 < NumStreams && a1 < NumQns && a4 <= RNIC_RQ_LOG2_MAX;
      RNIC_CMD_NOP: cmd_index_ok = 1'b1;
      default: cmd_index_ok = 1'b0;
    endcase
  end
  logic [31:0] cfg_first;  // QUEUE_CONFIG: first MSN (0 means 1)
  assign cfg_first = a5 == 32'd0 ? 32'd1 : a5;

  // ---- state ----------------------------------------------------------------------------------------
  // C_SKEY: STAG_WRITE's second cycle (the key table read is there); C_QCHK: QUEUE_CONFIG's second
  // cycle (the queue's configuration read is there); C_QECHO: QUEUE_CONFIG waits for deliver's echo
  // of its QUEUE_SET item; C_QWR: the cycle after the echo, QUEUE_CONFIG starts the queue (u_rq's
  // start): no doorbell, engine request or descriptor landing asks u_rq for a write in that cycle,
  // and no consume does (the echo took the consume channel in the cycle before).
  typedef enum logic [2:0] {C_INIT, C_RUN, C_ECHO, C_QCLR, C_SKEY, C_QCHK, C_QECHO, C_QWR} ctl_e;
  typedef enum logic [1:0] {D_NONE, D_WANT, D_WAIT, D_DONE} dir_e;  // B's direct descriptor read

  ctl_e ctl_q, ctl_d;
  logic [InitIw-1:0] init_q, init_d;
  // init_q < StagEntries / < NumStreams, kept in registers (the depth budget: the reset walk's write
  // enables start from flip-flops, not from a compare)
  logic              init_stag_q, init_strm_q;
  logic [15:0] cmd_stream_q, cmd_stream_d;
  logic [15:0] cmd_pd_q, cmd_pd_d;

  logic b_valid_q, b_valid_d;           // stage B holds a segment
  rnic_seg_t b_seg_q, b_seg_d;
  logic [31:0] b_msnm1_q;               //   its MSN - 1

  logic c_valid_q, c_valid_d;           // stage C holds a segment
  rnic_seg_t c_seg_q;
  logic [31:0] c_msnm1_q;
  rnic_lookup_t c_lk_q;                 //   its item (stream word kept current), but for the status
  logic c_qbad_q, c_neg_q, c_nobuf_q, c_near_q, c_hit_q, c_low_q;  // B's flags
  logic c_normal_q;                     //   its stream word says NORMAL or PENDING (kept with c_lk_q)
  logic [63:0] c_base_q;                //   the queue's ring
  logic [31:0] c_slot_q;                //   and the MSN's slot in it
  logic [63:0] c_dir_addr;              //   the MSN's descriptor in the host ring
  logic c_refresh_q;                    //   the table data of this cycle are C's (re-read on a miss),
                                        //   else B's
  dir_e c_dir_q, c_dir_d;               //   its direct descriptor read
  logic [63:0] c_daddr_q, c_daddr_d;   //   the directly read descriptor: address, length, fault
  logic [31:0] c_dlen_q, c_dlen_d;
  logic c_rerr_q, c_rerr_d;

  logic lk_valid_q, lk_valid_d;         // stage O
  rnic_lookup_t lk_q, lk_d;

  // Descriptor reads (u_fetch).
  logic f_dir_take, f_rsp_dir, f_land, f_rsp_err, f_busy;
  logic [QueueIw-1:0] f_land_queue;
  logic [31:0] f_land_msn, f_rsp_len;
  logic [63:0] f_rsp_addr;

  // Hints: queues the prefetch engine should visit.
  // A hint is decided here (hint_want, hint_in) and pushed from a register in the next cycle
  // (hint_v_q, hint_q_q: the depth budget); pushed only when the FIFO has room, else dropped.
  logic [QueueIw-1:0] hint_in, hint_q_q;
  logic hint_want, hint_v_q, hint_in_ready;
  logic [QueueIw-1:0] hint_last_q;

  // ---- the stream table
  logic [1:0]  strm_state;
  logic [15:0] strm_pd, strm_essn;
  logic [1:0]  tx_sstate;   // the transmit port's answer
  logic [15:0] tx_spd;
  rnic_lookup_stream #(.NumStreams(NumStreams), .TxPort(TxPort)) u_stream (
    .clk_i, .rst_ni, .rd_stream_i(strm_rd), .rsp_state_o(strm_state), .rsp_pd_o(strm_pd),
    .rsp_essn_o(strm_essn),
    .wr_valid_i(strm_we), .wr_stream_i(strm_waddr), .wr_state_i(strm_wstate), .wr_pd_i(strm_wpd),
    .wr_essn_i(strm_wessn),
    .tx_stream_i(tx_stream_i), .tx_state_o(tx_sstate), .tx_pd_o(tx_spd));

  // ---- the transmit table port: the RAM answers of the request's next cycle, registered
  logic        tx_q1;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      tx_q1 <= 1'b0;
      tx_rsp_o <= 1'b0;
    end else begin
      tx_q1 <= tx_req_i;
      tx_rsp_o <= tx_q1;
    end
  end
  always_ff @(posedge clk_i) begin
    if (tx_q1) begin
      tx_valid_o <= tx_hit;
      tx_key_o <= tx_key;
      tx_local_read_o <= tx_lr;
      tx_pd_o <= tx_pd;
      tx_bound_o <= tx_bound;
      tx_bound_stream_o <= tx_bstream;
      tx_base_to_o <= tx_base;
      tx_length_o <= tx_len;
      tx_addr_o <= tx_addr;
      tx_stream_pd_o <= tx_spd;
      tx_stream_live_o <= rnic_stream_live(tx_sstate);
    end
  end

  // ---- the receive queues and the descriptor cache
  logic               e_start_hold_q;   // (below: a command waits)
  logic [QueueIw-1:0] e_rd_queue, e_iss_queue, e_req_queue, c_busy_queue;
  logic               e_rd_cfg, e_req_we, e_iss_valid, e_iss_ready, e_idle, c_busy;
  logic [63:0]        e_rd_base, e_iss_addr;
  logic [4:0]         e_rd_log2;
  logic [31:0]        e_rd_prod, e_rd_cons, e_rd_req, e_iss_msn, e_req_msn;
  logic               bq_cfg, cd_err;
  logic [63:0]        bq_base, cd_addr;
  logic [4:0]         bq_log2;
  logic [31:0]        bq_prod, bq_cons, bq_landed, cd_msn, cd_len;
  rnic_lookup_rq #(.NumQueues(NumQueues), .RqPrefetch(RqPrefetch)) u_rq (
    .clk_i, .rst_ni,
    .a_queue_i(qa_raddr), .a_slot_i(cache_rslot), .a_cfg_o(bq_cfg), .a_base_o(bq_base),
    .a_log2_o(bq_log2), .a_prod_o(bq_prod), .a_cons_o(bq_cons), .a_landed_o(bq_landed),
    .a_cd_msn_o(cd_msn), .a_cd_addr_o(cd_addr), .a_cd_len_o(cd_len), .a_cd_err_o(cd_err),
    .e_queue_i(e_rd_queue), .e_cfg_o(e_rd_cfg), .e_base_o(e_rd_base), .e_log2_o(e_rd_log2),
    .e_prod_o(e_rd_prod), .e_cons_o(e_rd_cons), .e_req_o(e_rd_req),
    .c_valid_i(cons_valid_i && cons_ready_o && cons_kind_i == RNIC_CONS_CONSUME),
    .c_queue_i(qcons_raddr), .c_busy_o(c_busy), .c_busy_queue_o(c_busy_queue),
    .cfg_we_i(qc_we), .cfg_queue_i(qc_waddr), .cfg_set_i(qc_set), .cfg_base_i({a3, a2}),
    .cfg_log2_i(a4[4:0]), .start_i(q_start), .start_msn_i(cfg_first),
    .db_we_i(prod_we), .db_queue_i(QueueIw'({db_stream_i[StreamIw-1:0], db_qn_i[QnIw-1:0]})),
    .db_prod_i(db_prod_i),
    .req_we_i(e_req_we), .req_queue_i(e_req_queue), .req_msn_i(e_req_msn),
    .land_we_i(f_land), .land_queue_i(f_land_queue), .land_msn_i(f_land_msn),
    .land_addr_i(f_rsp_addr), .land_len_i(f_rsp_len), .land_err_i(f_rsp_err));

  // ---- the prefetch engine. No visit starts while a command waits with nothing in B that needs the
  // engine (e_start_hold_q: a registered copy, for the depth budget; a command that became pending
  // in the cycle before may see one more visit, which it waits for).
  rnic_lookup_prefetch #(.NumQueues(NumQueues), .RqPrefetch(RqPrefetch)) u_prefetch (
    .clk_i, .rst_ni,
    .hint_valid_i(hint_v_q), .hint_queue_i(hint_q_q), .hint_ready_o(hint_in_ready),
    .hold_i(e_start_hold_q), .rd_queue_o(e_rd_queue), .rd_cfg_i(e_rd_cfg), .rd_base_i(e_rd_base),
    .rd_log2_i(e_rd_log2), .rd_prod_i(e_rd_prod), .rd_cons_i(e_rd_cons), .rd_req_i(e_rd_req),
    .iss_valid_o(e_iss_valid), .iss_ready_i(e_iss_ready), .iss_addr_o(e_iss_addr),
    .iss_queue_o(e_iss_queue), .iss_msn_o(e_iss_msn),
    .req_we_o(e_req_we), .req_queue_o(e_req_queue), .req_msn_o(e_req_msn), .idle_o(e_idle));

  // ---- stage B: the table data are there; the lookup's arithmetic -----------------------------------
  // B computes, for the segment whose tables were read (B's own, or C's when C re-reads, c_refresh_q),
  // the lookup fields and the queue arithmetic as flags, each one carry chain from the RAM outputs
  // (the depth budget, issue 12), for C to decide on. Free-running 32-bit MSNs (RFC 5041 4.3); the
  // queue's cons = head - 1 (the last delivered MSN); ahead = msn - head = msn + ~cons (the message's
  // distance from the next to deliver); P = prod - cons (posted); cached = landed - cons; size =
  // 2^log2 (log2 <= 16 for a configured queue):
  //   neg    ahead < 0 (the MSN is before the first available buffer)
  //   nobuf  ahead >= min(P, size) (a producer beyond the ring is not believed): ahead >= size, or
  //          ahead >= P; for 0 <= ahead < 2^31 the latter is P < 2^31 and ahead - P = msn - prod - 1
  //          >= 0 as a signed number
  //   near   ahead < RqPrefetch
  //   hit    the cache holds the MSN's descriptor: cached >= 0, ahead < cached and the slot's MSN is
  //          the segment's; with near, ahead - cached = msn - landed - 1 = ~(landed - msn), so
  //          ahead < cached is (landed - msn) >= 0 as a signed number
  //   low    cached < 0 or cached - ahead = (landed - msn) + 1 <= RqPrefetch / 2: time to fetch more
  // Doorbells and consumes the read missed make the flags older, never wrong: the segment is simply
  // ordered before them.
  rnic_seg_t s_seg;                     // the segment the data are for
  logic [31:0] s_msnm1;                 //   its MSN - 1
  assign s_seg = c_refresh_q ? c_seg_q : b_seg_q;
  assign s_msnm1 = c_refresh_q ? c_msnm1_q : b_msnm1_q;
  logic [QueueIw-1:0] b_queue, c_queue;
  assign b_queue = QueueIw'({b_seg_q.stream[StreamIw-1:0], b_seg_q.qn[QnIw-1:0]});
  assign c_queue = QueueIw'({c_seg_q.stream[StreamIw-1:0], c_seg_q.qn[QnIw-1:0]});

  logic [31:0] s_himask, s_ahead, s_p, s_e, s_cached, s_z, s_slot;
  logic        s_qbad, s_neg, s_nobuf, s_near, s_hit, s_low;
  always_comb begin
    for (int i = 0; i < 32; i++) s_himask[i] = 32'(i) >= {27'b0, bq_log2};  // ~(size - 1), per bit
    s_ahead = s_seg.msn + ~bq_cons;
    s_p = bq_prod - bq_cons;
    s_e = s_seg.msn + ~bq_prod;
    s_cached = bq_landed - bq_cons;
    s_z = bq_landed - s_seg.msn;
    s_qbad = s_seg.qn >= NumQns || !bq_cfg;
    s_neg = s_ahead[31];
    s_nobuf = (s_ahead & s_himask) != '0 || (!s_p[31] && !s_e[31]);
    s_near = s_ahead[31:PfIw] == '0;
    s_hit = !s_cached[31] && !s_z[31] && cd_msn == s_seg.msn;
    s_low = s_cached[31] || &s_z || s_z[31:PfIw-1] == '0;
    s_slot = s_msnm1 & ~s_himask;
  end
  logic unused_s;                       // only their signs
  assign unused_s = ^{s_p[30:0], s_e[30:0], s_cached[30:0]};

  rnic_lookup_t s_lk;                   // the item to validate, but for the queue's status
  always_comb begin
    s_lk = '0;
    s_lk.kind = RNIC_ITEM_SEG;
    s_lk.seg = s_seg;
    s_lk.stream_state = strm_state;     // TORN_DOWN for a stream index out of range (u_stream)
    s_lk.stream_pd = strm_pd;
    s_lk.stream_essn = strm_essn;
    s_lk.next_ssn = ssn_rd_next_i;
    s_lk.stag_valid = stag_hit;         // the index in range (u_stag checks it) and the entry valid
    s_lk.stag_key = stag_key;
    s_lk.stag_pd = stag_pd;
    s_lk.stag_bound = stag_bound;
    s_lk.stag_stream = stag_stream;
    s_lk.stag_remote_write = stag_rw;
    s_lk.stag_base_to = stag_base;
    s_lk.stag_length = stag_len;
    s_lk.stag_addr = stag_addr;
    s_lk.rq_addr = cd_addr;
    s_lk.rq_length = cd_len;
    s_lk.local_fault = cd_err;
  end

  // ---- stage C: the decision (from registers) -----------------------------------------------------
  // The stream word is kept current in C: a stream write of C's cycle (validate's error feedback, a
  // delivery failure: a teardown's or an enable's write comes before any later segment reaches B)
  // updates it and reaches the output of that cycle. The decision reads the registered word: an older NORMAL only fetches a
  // descriptor that the item then does not use.
  rnic_lookup_t c_out;
  logic c_fwd;
  assign c_fwd = strm_we && strm_waddr == c_seg_q.stream;
  rnic_rq_status_e c_status;
  logic c_need;
  always_comb begin
    if (c_qbad_q) c_status = RNIC_RQ_BAD_QN;
    else if (c_neg_q) c_status = RNIC_RQ_MSN_RANGE;   // before the first buffer
    else if (c_nobuf_q) c_status = RNIC_RQ_NO_BUF;    // past the last posted buffer
    else c_status = RNIC_RQ_OK;
    // The descriptor is needed only when the segment can be placed into it.
    c_need = !c_seg_q.is_tagged && c_normal_q && !c_qbad_q && !c_neg_q && !c_nobuf_q;
    c_out = c_lk_q;
    c_out.seg = c_seg_q;
    c_out.rq_status = c_status;
    if (c_fwd) begin
      c_out.stream_state = strm_wstate;
      c_out.stream_pd = strm_wpd;
      c_out.stream_essn = strm_wessn;
    end
    if (c_dir_q == D_DONE) begin
      c_out.rq_addr = c_daddr_q;
      c_out.rq_length = c_dlen_q;
      c_out.local_fault = c_rerr_q;
    end
  end

  // C is finished when no descriptor is needed, the cache has it, or the direct read answered. A
  // miss re-reads C's tables (B's read waits: c_refresh_q) until the prefetch engine lands the
  // descriptor. A direct read once asked for is always waited for (its answer must not reach a later
  // segment).
  logic c_done, c_miss, c_want_dir, c_adv, b_move, out_free;
  always_comb begin
    c_done = 1'b0;
    c_miss = 1'b0;
    c_want_dir = 1'b0;
    if (c_valid_q) begin
      if (c_dir_q == D_DONE) c_done = 1'b1;
      else if (c_dir_q != D_NONE) c_done = 1'b0;
      else if (!c_need) c_done = 1'b1;
      else if (c_near_q && c_hit_q) c_done = 1'b1;
      else if (c_near_q) c_miss = 1'b1;
      else c_want_dir = 1'b1;
    end
  end
  assign c_dir_addr = c_base_q + {28'b0, c_slot_q, 4'b0};
  assign out_free = !lk_valid_q || lk_ready_i;
  assign c_adv = c_valid_q && c_done && out_free;
  assign b_move = b_valid_q && !c_refresh_q && (!c_valid_q || c_adv);

  // ---- top-level control: init walk, commands, stream-enable echo ----------------------------------
  // A command runs when nothing is in flight in lookup: no segment in B or O, no descriptor read, the
  // engine idle, no consume half done. While one waits, no new segment is accepted.
  logic drained, cmd_exec, cmd_pending, echo_seen;
  // A command's end (cmd_done, cmd_refused, cmd_result) reaches regs from registers, one cycle
  // after it is decided (the depth budget: the decision hangs on the pipeline being drained).
  logic cmd_done, cmd_refused;
  logic [31:0] cmd_result;
  always_ff @(posedge clk_i) begin
    cmd_done_o <= rst_ni && cmd_done;
    cmd_refused_o <= rst_ni && cmd_refused;
    cmd_result_o <= cmd_result;
  end
  logic fail_q;                         // a stream failure from deliver waits for the write port
  logic [15:0] fail_stream_q;
  // A command runs from its second cycle: its index check is a register (the arguments are held while
  // cmd_valid_i is, regs' a_cmd_hold), for the depth budget.
  logic cmd_seen_q, cmd_ok_q;
  always_ff @(posedge clk_i) begin
    cmd_seen_q <= rst_ni && cmd_pending && !cmd_exec;
    cmd_ok_q <= cmd_index_ok;
  end
  logic td_q;                           // STREAM_TEARDOWN ran in the cycle before: its table write
  logic [15:0] td_stream_q;
  logic en_wr_q;                        // STREAM_ENABLE's echo came in the cycle before
  always_ff @(posedge clk_i) begin
    td_q <= rst_ni && cmd_exec && cmd_ok_q && cmd_op_i == RNIC_CMD_STREAM_TEARDOWN;
    td_stream_q <= a0[15:0];
    en_wr_q <= rst_ni && echo_seen;
  end
  assign cmd_pending = ctl_q == C_RUN && cmd_valid_i;
  assign drained = !b_valid_q && !c_valid_q && !lk_valid_q && e_idle && !f_busy && !c_busy &&
                   !dn_busy_i && !fail_q;
  assign cmd_exec = cmd_pending && cmd_seen_q && drained;
  assign seg_ready_o = ctl_q == C_RUN && !cmd_pending && !c_miss && (!b_valid_q || b_move);

  // Consumes (head + 1, read-modify-write over two cycles with forwarding) and echoes are taken
  // within a cycle or two: deliver must never wait on lookup's pipeline for them, or lookup -> ... ->
  // deliver -> lookup deadlocks. A stream failure is taken into a register (fail_q) and written
  // from there to the stream table in a cycle validate's error feedback does not use its write port
  // (the depth budget: deliver's queue output reaches no table forwarding). While it waits, no other
  // item is taken (an echo after it could write the table in the same cycle) and no command runs.
  logic cons_fail, qecho_seen, fail_wr;
  assign cons_fail = cons_kind_i == RNIC_CONS_FAIL;
  assign cons_ready_o = ctl_q != C_INIT && !fail_q;
  assign fail_wr = fail_q && !err_valid_i && !td_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) fail_q <= 1'b0;
    else if (cons_valid_i && cons_ready_o && cons_fail) fail_q <= 1'b1;
    else if (fail_wr) fail_q <= 1'b0;
    if (cons_valid_i && cons_ready_o && cons_fail) fail_stream_q <= cons_stream_i;
  end
  assign echo_seen = cons_valid_i && cons_ready_o && cons_kind_i == RNIC_CONS_RESET && ctl_q == C_ECHO;
  assign qecho_seen = cons_valid_i && cons_ready_o && cons_kind_i == RNIC_CONS_QSET && ctl_q == C_QECHO;
  // Doorbells take the producer write port, which a command may use.
  assign db_ready_o = ctl_q != C_INIT && ctl_q != C_QWR && !cmd_exec;

  logic db_take, db_in_range;
  logic db_hint_q;                      // a doorbell was taken in the cycle before: its hint (a
  logic [QueueIw-1:0] db_hint_queue_q;  //   register: the depth budget)
  always_ff @(posedge clk_i) begin
    db_hint_q <= rst_ni && db_take && db_in_range;
    db_hint_queue_q <= QueueIw'({db_stream_i[StreamIw-1:0], db_qn_i[QnIw-1:0]});
  end
  assign db_take = db_valid_i && db_ready_o;
  assign db_in_range = {16'b0, db_stream_i} < NumStreams && {24'b0, db_qn_i} < NumQns;

  // The engine's hold and C_QWR, as registers (the depth budget).
  logic ctl_qwr_q;
  always_ff @(posedge clk_i) begin
    e_start_hold_q <= cmd_pending && !b_valid_q && !c_valid_q;
    ctl_qwr_q <= rst_ni && qecho_seen;              // ctl_q == C_QWR (C_QECHO's exit)
  end

  // ---- the descriptor reads: C's direct read first, then the engine's (not in QUEUE_CONFIG's start
  // cycle, whose last engine request writes req); R waits in that cycle (a landing writes landed).
  rnic_lookup_fetch #(.DataWidth(DataWidth), .NumQueues(NumQueues), .MaxReads(MaxReads)) u_fetch (
    .clk_i, .rst_ni,
    .dir_valid_i(c_dir_q == D_WANT), .dir_addr_i(c_dir_addr), .dir_queue_i(c_queue),
    .dir_msn_i(c_seg_q.msn), .dir_take_o(f_dir_take),
    .eng_valid_i(e_iss_valid), .eng_addr_i(e_iss_addr), .eng_queue_i(e_iss_queue),
    .eng_msn_i(e_iss_msn), .eng_hold_i(ctl_qwr_q), .eng_ready_o(e_iss_ready),
    .r_hold_i(ctl_q == C_QWR),
    .rsp_dir_o(f_rsp_dir), .land_o(f_land), .land_queue_o(f_land_queue), .land_msn_o(f_land_msn),
    .rsp_addr_o(f_rsp_addr), .rsp_len_o(f_rsp_len), .rsp_err_o(f_rsp_err), .busy_o(f_busy),
    .m_axi_araddr_o, .m_axi_arlen_o, .m_axi_arvalid_o, .m_axi_arready_i,
    .m_axi_rdata_i, .m_axi_rresp_i, .m_axi_rlast_i, .m_axi_rvalid_i, .m_axi_rready_o);

  // ---- the stream table's write port (its own block: the stream answer forwards the write of its
  // cycle into stage B, which the block below reads) ----------------------------------------------------
  // The writers, each from registers (the depth budget), never meet (a_one_strm_wr):
  // - validate's error feedback: the failing stream enters the error state (7.1);
  // - deliver found the stream breaking the message order (RFC 5041 4.3, 5.3): error state;
  // - STREAM_TEARDOWN, in the cycle after the command runs (td_q); a segment taken in that cycle
  //   reads the table then and meets the write forwarded (u_stream), so no lookup after the command
  //   places for the stream (the command ran with validate and the failure register empty);
  // - STREAM_ENABLE: the echo said every earlier item of the stream is through deliver; NORMAL from
  //   the cycle after it (en_wr_q, C_QCLR's first), before any segment is looked up again;
  // - after reset (C_INIT) every stream is torn down.
  // (Should two meet anyway, the later state wins: the clear, an enable, a teardown, then errors.)
  logic [50:0] strm_w;  // {we, stream, state, PD, PENDING's DDP-SSN}
  always_comb begin
    if (ctl_q == C_INIT)
      strm_w = {init_strm_q, 16'(init_q[StreamIw-1:0]), 2'(RNIC_STREAM_TORN_DOWN), 32'd0};
    else if (en_wr_q) strm_w = {1'b1, cmd_stream_q, 2'(RNIC_STREAM_NORMAL), cmd_pd_q, 16'd0};
    else if (td_q) strm_w = {1'b1, td_stream_q, 2'(RNIC_STREAM_TORN_DOWN), 32'd0};
    else if (fail_wr) strm_w = {1'b1, fail_stream_q, 2'(RNIC_STREAM_ERROR), 32'd0};
    else if (err_valid_i) strm_w = {1'b1, err_stream_i, err_state_i, err_pd_i, err_ssn_i};
    else strm_w = {1'b0, a0[15:0], 2'(RNIC_STREAM_TORN_DOWN), 32'd0};
  end
  assign {strm_we, strm_waddr, strm_wstate, strm_wpd, strm_wessn} = strm_w;

  // ---- A: the table reads ----------------------------------------------------------------------------
  // B's again while B stays (B re-reads while it waits, so it sees table changes), else the arriving
  // segment's (read whether or not it is taken: the select does not wait for the handshake). A waiting
  // command reads the queue it names once B is empty (no segment is taken meanwhile): QUEUE_CONFIG
  // checks it is not configured, from the read of the cycle it runs in. C's miss: C's tables again (the
  // cycle's read is C's; B reads in a later cycle). A consume reads its queue.
  always_comb begin
    if (!b_valid_q || b_move) begin
      stag_rd = seg_i.stag;
      strm_rd = seg_i.stream;
      qa_raddr = QueueIw'({seg_i.stream[StreamIw-1:0], seg_i.qn[QnIw-1:0]});
      ssn_rd_stream_o = seg_i.stream;
      cache_rslot = PfIw'(seg_i.msn - 32'd1);
    end else begin
      stag_rd = b_seg_q.stag;
      strm_rd = b_seg_q.stream;
      qa_raddr = b_queue;
      ssn_rd_stream_o = b_seg_q.stream;
      cache_rslot = PfIw'(b_msnm1_q);
    end
    if (cmd_pending && !b_valid_q) qa_raddr = QueueIw'({a0[StreamIw-1:0], a1[QnIw-1:0]});
    if (c_miss) begin
      stag_rd = c_seg_q.stag;
      strm_rd = c_seg_q.stream;
      qa_raddr = c_queue;
      ssn_rd_stream_o = c_seg_q.stream;
      cache_rslot = PfIw'(c_msnm1_q);
    end
  end
  assign qcons_raddr = QueueIw'({cons_stream_i[StreamIw-1:0], cons_qn_i[QnIw-1:0]});

  // Doorbell: the producer is the MSN of the last posted buffer.
  assign prod_we = db_take && db_in_range;

  // ---- B -> C -> O: the segment pipeline, and the items commands send (cmd_lk_valid, cmd_lk) --------
  logic cmd_lk_valid;
  rnic_lookup_t cmd_lk;
  always_comb begin
    b_valid_d = b_valid_q;
    b_seg_d = b_seg_q;
    c_valid_d = c_valid_q;
    c_dir_d = c_dir_q;
    c_daddr_d = c_daddr_q;
    c_dlen_d = c_dlen_q;
    c_rerr_d = c_rerr_q;
    lk_valid_d = lk_valid_q;
    lk_d = lk_q;

    // O
    if (c_adv) begin
      lk_d = c_out;
      lk_valid_d = 1'b1;
      c_dir_d = D_NONE;
    end else if (lk_valid_q && lk_ready_i) begin
      lk_valid_d = 1'b0;
    end
    if (cmd_lk_valid) begin  // (a command runs with the pipeline drained)
      lk_d = cmd_lk;
      lk_valid_d = 1'b1;
    end
    // C's direct read: wanted, issued, answered
    if (c_want_dir && c_dir_q == D_NONE) c_dir_d = D_WANT;
    if (f_dir_take) c_dir_d = D_WAIT;
    if (f_rsp_dir) begin
      c_daddr_d = f_rsp_addr;
      c_dlen_d = f_rsp_len;
      c_rerr_d = f_rsp_err;
      c_dir_d = D_DONE;
    end
    // C
    if (b_move) begin
      c_valid_d = 1'b1;
    end else if (c_adv) begin
      c_valid_d = 1'b0;
    end
    // B takes the arriving segment whenever it is free (whether or not the segment is taken: B is
    // then empty); it holds one when taken (written so that b_move appears once: the depth budget).
    if (!b_valid_q || b_move) b_seg_d = seg_i;
    b_valid_d = (b_valid_q && !b_move) ||
                (seg_valid_i && ctl_q == C_RUN && !cmd_pending && !c_miss);
  end

  // ---- hints (one per cycle; a dropped hint only delays a fetch: a waiting segment hints again) ------
  always_comb begin
    hint_want = 1'b0;
    hint_in = b_queue;
    if (c_miss) begin
      hint_want = 1'b1;
      hint_in = c_queue;
    end else if (db_hint_q) begin  // a doorbell of the cycle before
      hint_want = 1'b1;
      hint_in = db_hint_queue_q;
    end else if (c_busy) begin  // a consume's second cycle
      hint_want = 1'b1;
      hint_in = c_busy_queue;
    end else if (c_adv && c_need && c_near_q && c_low_q && c_queue != hint_last_q) begin
      hint_want = 1'b1;
      hint_in = c_queue;
    end
  end

  // ---- the command state machine: the STag table's and the queue configuration's write requests, the
  // command's end, the items it sends ------------------------------------------------------------------
  always_comb begin
    ctl_d = ctl_q;
    init_d = init_q;
    cmd_stream_d = cmd_stream_q;
    cmd_pd_d = cmd_pd_q;
    cmd_ready_o = 1'b0;
    cmd_done = 1'b0;
    cmd_refused = 1'b0;
    cmd_result = '0;
    cmd_lk_valid = 1'b0;
    cmd_lk = '0;
    cmd_lk.arg = a0[15:0];
    stag_wr = 1'b0;
    stag_set = 1'b0;
    stag_windex = a0[StagIw-1:0];
    qc_we = 1'b0;
    qc_set = 1'b0;
    q_start = 1'b0;
    qc_waddr = QueueIw'({a0[StreamIw-1:0], a1[QnIw-1:0]});

    unique case (ctl_q)
      // Clear every table after reset: no STag valid, every stream torn down, no queue configured.
      C_INIT: begin
        stag_wr = init_stag_q;                  // a clear
        stag_windex = init_q[StagIw-1:0];
        qc_we = init_q < InitIw'(NumQueues);   // unconfigured
        qc_waddr = init_q[QueueIw-1:0];
        init_d = init_q + 1'b1;
        if (init_q == InitIw'(InitEntries - 1)) ctl_d = C_RUN;
      end

      C_RUN: if (cmd_exec) begin
        cmd_ready_o = 1'b1;
        if (!cmd_ok_q) begin
          cmd_done = 1'b1;
          cmd_refused = 1'b1;
        end else begin
          unique case (cmd_op_i)
            RNIC_CMD_STAG_WRITE: begin  // u_stag reads the key table this cycle
              stag_wr = 1'b1;
              stag_set = 1'b1;
              ctl_d = C_SKEY;
            end
            RNIC_CMD_STAG_INVALIDATE: begin
              // No lookup after this cycle can hit the entry; the FENCE item completes the command
              // once every earlier placement write is acknowledged (RFC 5041 8.3.1 #6).
              stag_wr = 1'b1;           // a clear
              cmd_lk.kind = RNIC_ITEM_FENCE;
              cmd_lk_valid = 1'b1;
            end
            RNIC_CMD_STREAM_ENABLE: begin
              // Deliver resets the stream's DDP-SSN state in order; the tables change on its echo.
              cmd_lk.kind = RNIC_ITEM_STREAM_RESET;
              cmd_lk_valid = 1'b1;
              cmd_stream_d = a0[15:0];
              cmd_pd_d = a1[15:0];
              ctl_d = C_ECHO;
            end
            RNIC_CMD_STREAM_TEARDOWN: begin
              // No lookup after this cycle places for the stream; the FENCE completes the command
              // once every earlier write and completion is acknowledged.
              cmd_lk.kind = RNIC_ITEM_FENCE;
              cmd_lk_valid = 1'b1;
            end
            RNIC_CMD_QUEUE_CONFIG: ctl_d = C_QCHK;  // the queue's configuration is read this cycle
            default: cmd_done = 1'b1;  // NOP
          endcase
        end
      end

      // STAG_WRITE, second cycle: u_stag writes the entry with the index's next key and answers.
      C_SKEY: begin
        cmd_done = stag_done;
        cmd_result = stag_result;
        if (stag_done) ctl_d = C_RUN;
      end

      // QUEUE_CONFIG, second cycle: a configured queue is refused (a queue is configured again only
      // after STREAM_ENABLE, which clears the stream's delivery state: a message placed under one
      // configuration can never complete under another). Else deliver sets the queue's expected
      // MSN in order and echoes; the tables change then.
      C_QCHK: begin
        if (bq_cfg) begin
          cmd_done = 1'b1;
          cmd_refused = 1'b1;
          ctl_d = C_RUN;
        end else begin
          cmd_lk.kind = RNIC_ITEM_QUEUE_SET;
          cmd_lk.seg.stream = a0[15:0];
          cmd_lk.seg.qn = a1;
          cmd_lk.seg.msn = cfg_first;
          cmd_lk_valid = 1'b1;
          ctl_d = C_QECHO;
        end
      end

      // QUEUE_CONFIG: deliver has the QUEUE_SET; in the next cycle (C_QWR, u_rq's write ports free)
      // the queue is configured and starts empty at its first MSN: nothing posted, requested or
      // cached.
      C_QECHO: if (qecho_seen) ctl_d = C_QWR;
      C_QWR: begin
        qc_we = 1'b1;
        qc_set = 1'b1;
        q_start = 1'b1;
        cmd_done = 1'b1;
        ctl_d = C_RUN;
      end

      // STREAM_ENABLE: the echo says every earlier item of the stream is through deliver.
      C_ECHO: if (echo_seen) begin
        init_d = '0;
        ctl_d = C_QCLR;
      end

      C_QCLR: begin  // the enabled stream's queues start unconfigured
        qc_we = 1'b1;
        qc_waddr = QueueIw'({cmd_stream_q[StreamIw-1:0], init_q[QnIw-1:0]});
        init_d = init_q + 1'b1;
        if (init_q == InitIw'(NumQns - 1)) begin
          cmd_done = 1'b1;
          ctl_d = C_RUN;
        end
      end

      default: ctl_d = C_RUN;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ctl_q <= C_INIT;
      init_q <= '0;
      init_stag_q <= 1'b1;
      init_strm_q <= 1'b1;
      b_valid_q <= 1'b0;
      c_valid_q <= 1'b0;
      c_dir_q <= D_NONE;
      c_refresh_q <= 1'b0;
      lk_valid_q <= 1'b0;
    end else begin
      ctl_q <= ctl_d;
      init_q <= init_d;
      init_stag_q <= init_d < InitIw'(StagEntries);
      init_strm_q <= init_d < InitIw'(NumStreams);
      b_valid_q <= b_valid_d;
      c_valid_q <= c_valid_d;
      c_dir_q <= c_dir_d;
      c_refresh_q <= c_miss;
      lk_valid_q <= lk_valid_d;
    end
  end

  always_ff @(posedge clk_i) begin
    cmd_stream_q <= cmd_stream_d;
    cmd_pd_q <= cmd_pd_d;
    b_seg_q <= b_seg_d;
    if (!b_valid_q || b_move) b_msnm1_q <= seg_i.msn - 32'd1;
    c_daddr_q <= c_daddr_d;
    c_dlen_q <= c_dlen_d;
    c_rerr_q <= c_rerr_d;
    // C loads B's segment as it moves, or its own flags again from a re-read; else the stream word
    // follows the writes of its cycle.
    if (b_move || c_refresh_q) begin
      c_lk_q <= s_lk;
      c_normal_q <= rnic_stream_live(strm_state);
      c_qbad_q <= s_qbad;
      c_neg_q <= s_neg;
      c_nobuf_q <= s_nobuf;
      c_near_q <= s_near;
      c_hit_q <= s_hit;
      c_low_q <= s_low;
      c_base_q <= bq_base;
      c_slot_q <= s_slot;
    end else if (c_fwd) begin
      c_normal_q <= rnic_stream_live(strm_wstate);
      c_lk_q.stream_state <= strm_wstate;
      c_lk_q.stream_pd <= strm_wpd;
      c_lk_q.stream_essn <= strm_wessn;
    end
    if (b_move) begin
      c_seg_q <= b_seg_q;
      c_msnm1_q <= b_msnm1_q;
    end
    lk_q <= lk_d;
    if (hint_v_q && hint_in_ready) hint_last_q <= hint_q_q;  // the last hint pushed
    hint_q_q <= hint_in;
  end
  always_ff @(posedge clk_i) hint_v_q <= rst_ni && hint_want;

  assign lk_o = lk_q;
  assign lk_valid_o = lk_valid_q;

  // Monitoring only.
  logic unused;
  assign unused = ^{err_stream_i, cons_stream_i, cons_qn_i, stag_unused, stag_rd_ready,
                   stag_rsp_valid, stag_wr_ready};
  // valid/ready at the boundary lookup drives: the item to validate (u_fetch checks the reads').
  `RNIC_ASSERT_HOLD(a_lk_hold, clk_i, rst_ni, lk_valid_o, lk_ready_i, lk_o)
  // The reset walk's registered compares are init_q's.
  `RNIC_ASSERT(a_init_flags, clk_i, rst_ni,
               init_stag_q == (init_q < InitIw'(StagEntries)) && init_strm_q == (init_q < InitIw'(NumStreams)))
  // The stream table has one write port: its writers never meet (validate's error, a delivery
  // failure, a teardown, the clear after reset, STREAM_ENABLE's NORMAL).
  `RNIC_ASSERT(a_one_strm_wr, clk_i, rst_ni,
      $countones({err_valid_i, fail_wr, td_q, ctl_q == C_INIT, en_wr_q}) <= 1)

`ifdef FORMAL
  assign fv_c_load = b_move || c_refresh_q;
  assign fv_cmd_done = cmd_done;
  assign fv_cmd_refused = cmd_refused;
  assign fv_cmd_result = cmd_result;
`endif
endmodule
