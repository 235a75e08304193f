// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
`include "rnic_assert.svh"
// AXI4-Lite register file (map: hw.def): identification, commands, the receive-queue doorbell,
// completion ring, counters.
//
// Behaviour the map leaves open:
// - 32-bit registers at word addresses; addr[1:0] are ignored. One write and one read are handled
//   at a time, independently of each other. AW and W are accepted in any order or cycle (each has
//   its own holding register); the write executes once both are held and the previous response
//   has been accepted.
// - Responses: OKAY, or SLVERR for an address outside the map (a read then returns 0). Writes to
//   RO/RC registers are ignored (OKAY); reads of the write-only CMD and DB_PROD return 0 (OKAY).
// - wstrb selects the bytes written to RW registers; CMD and DB_PROD writes take wdata as is.
//   CQ_LOG2_SIZE, CQ_CTRL and DB_QUEUE keep the bits of their fields (hw.def); their other bits read 0.
// - The completion ring's configuration (CQ_BASE_LO/HI, CQ_LOG2_SIZE) is taken only while the ring
//   is disabled and not busy (CQ_CTRL bit 1 = cq_busy_i: a completion write loaded before the
//   disable is still on the bus or awaits its B); a write at another time is ignored (OKAY), as is a
//   CQ_LOG2_SIZE value outside 1..16. So every completion write lies in the ring that was configured
//   when it was loaded, and software knows when the card is done with a ring: disable, then poll
//   busy = 0 before freeing or reusing its memory.
// - A CMD write while CMD_STATUS.busy is IGNORED (OKAY response): software polls busy first.
//   Otherwise the opcode and CMD_ARG0..9 are latched and offered on cmd_* until cmd_ready_i; busy
//   clears on cmd_done_i (refused = cmd_refused_i), except for the fenced commands: STAG_INVALIDATE
//   and STREAM_TEARDOWN clear on fence_done_i, QUEUE_CONFIG once both fence_done_i and cmd_done_i
//   have pulsed (its fence completes in deliver, its tables are written in lookup on deliver's
//   echo). A refused command (bad index: lookup pulses cmd_done_i with cmd_refused_i and sends no
//   item) completes on that pulse. Completion pulses while idle are ignored.
// - CMD_RESULT: cmd_result_i, latched on cmd_done_i (STAG_WRITE: the STag the card issued); 0 from
//   the start of every command.
// - The doorbell (interface 3): a DB_PROD write rings the queue DB_QUEUE names (a register pair
//   rather than an address per queue: 4096 streams x 4 QNs would fill the 64 KiB window alone). Its
//   response is held until db_ready_i accepts the doorbell; later writes wait. DB_QUEUE naming no
//   queue (stream >= NumStreams or QN >= NumQns): DB_PROD answers SLVERR and rings nothing.
// - A read's R comes two cycles after its AR handshake (decode, then select: the logic-depth
//   budget). Counter events are registered once before they are counted; a counter read returns
//   the events up to the cycle of its AR handshake. Reading a counter's _LO word latches its _HI word
//   (one latch per counter: reads of other counters in between do not disturb it). An
//   error_idx_i >= RNIC_NUM_ERRORS counts nowhere.
// - CNT_WRITE_ERRORS counts write_err_event_i pulses (one per non-OKAY B), CNT_READ_ERRORS
//   read_err_event_i pulses (one per non-OKAY R beat); like every counter, at most one per cycle.
// - The window [EXT_BASE, EXT_BASE + 0x100) (hw.def's NET_* rows: the network side, docs/network.md)
//   is decoded by another block on the ext_* port: a write in the window pulses ext_wr_o for one cycle
//   with the offset in the window, the data and the strobes, and answers OKAY if ext_whit_i (a function
//   of ext_waddr_o alone) else SLVERR; a read pulses ext_rd_o in its first read cycle with the offset,
//   and takes ext_rdata_i / ext_rhit_i (the block's registers, loaded on ext_rd_o) in its second.
//   With ext_whit_i and ext_rhit_i tied 0 the window answers SLVERR, as any address outside the map.
module rnic_regs #(
  parameter int          DataWidth   = 512,   // AXI data width in bits (CAP_DATA_WIDTH)
  parameter int          StagEntries = 4096,  // STag table entries (CAP_STAGS)
  parameter int          NumStreams  = 256,   // stream table entries (CAP_STREAMS)
  parameter int          NumQns      = 4,     // untagged queues per stream, power of two (CAP_QNS)
  parameter int          SsnWindow   = 64,    // DDP-SSN reorder window (CAP_SSN_WINDOW)
  parameter int          MaxSegBytes = RNIC_MAX_SEG_BYTES,  // longest segment kept (CAP_MAX_SEG_BYTES)
  parameter int          NetAssocs   = 0,     // network side's association entries, 0: none (CAP_NET_ASSOCS)
  parameter int          NetMaxPacket = 0,    // its longest packet, 0: no network side (CAP_NET_MAX_PACKET)
  parameter logic [31:0] BuildId     = 32'h0  // build identifier (BUILD_ID)
) (
  input  logic              clk_i,
  input  logic              rst_ni,
  input  logic [15:0]       s_axi_awaddr_i,
  input  logic              s_axi_awvalid_i,
  output logic              s_axi_awready_o,
  input  logic [31:0]       s_axi_wdata_i,
  input  logic [3:0]        s_axi_wstrb_i,
  input  logic              s_axi_wvalid_i,
  output logic              s_axi_wready_o,
  output logic [1:0]        s_axi_bresp_o,
  output logic              s_axi_bvalid_o,
  input  logic              s_axi_bready_i,
  input  logic [15:0]       s_axi_araddr_i,
  input  logic              s_axi_arvalid_i,
  output logic              s_axi_arready_o,
  output logic [31:0]       s_axi_rdata_o,
  output logic [1:0]        s_axi_rresp_o,
  output logic              s_axi_rvalid_o,
  input  logic              s_axi_rready_i,
  output logic [7:0]        cmd_op_o,
  output logic [32*10-1:0]  cmd_args_o,
  output logic              cmd_valid_o,
  input  logic              cmd_ready_i,
  input  logic              cmd_done_i,
  input  logic              cmd_refused_i,
  input  logic              fence_done_i,
  input  logic [31:0]       cmd_result_i,   // with cmd_done_i: the command's result (CMD_RESULT)
  output logic [15:0]       db_stream_o,
  output logic [7:0]        db_qn_o,
  output logic [31:0]       db_prod_o,
  output logic              db_valid_o,
  input  logic              db_ready_i,
  output logic [63:0]       cq_base_o,
  output logic [4:0]        cq_log2_o,
  output logic              cq_enable_o,
  output logic              cq_reset_o,
  output logic [31:0]       cq_cons_o,
  input  logic [31:0]       cq_prod_i,
  input  logic              cq_busy_i,      // deliver: a completion write is not finished
  input  logic              seg_event_i,
  input  logic              bytes_event_i,
  input  logic [15:0]       bytes_i,
  input  logic              msg_event_i,
  input  logic              drop_event_i,
  input  logic              access_event_i,
  input  logic              dup_event_i,
  input  logic              write_err_event_i,  // a host-memory write got a non-OKAY BRESP
  input  logic              read_err_event_i,   // a host-memory read beat got a non-OKAY RRESP
  input  logic              error_event_i,
  input  logic [4:0]        error_idx_i,
  input  logic              order_err_event_i,  // deliver: a message-order error (counts as MsnRange)
  // The network side's register window (see the header).
  output logic              ext_wr_o,
  output logic [7:0]        ext_waddr_o,
  output logic [31:0]       ext_wdata_o,
  output logic [3:0]        ext_wstrb_o,
  input  logic              ext_whit_i,
  output logic              ext_rd_o,
  output logic [7:0]        ext_raddr_o,
  input  logic [31:0]       ext_rdata_i,
  input  logic              ext_rhit_i
);

  // ---- derived constants ------------------------------------------------------------------------
  localparam int NUM_ARGS     = RNIC_CMD_ARGS;         // CMD_ARG staging words
  localparam int NUM_ARGS_OUT = 10;                    // words forwarded on cmd_args_o

  // Counter slots: the eight named counters, then one per error-table row.
  localparam int CNT_SEGMENTS     = 0;
  localparam int CNT_BYTES        = 1;
  localparam int CNT_MESSAGES     = 2;
  localparam int CNT_DROPS        = 3;
  localparam int CNT_ACCESS       = 4;
  localparam int CNT_DUPLICATES   = 5;
  localparam int CNT_WRITE_ERRORS = 6;
  localparam int CNT_READ_ERRORS  = 7;
  localparam int CNT_ERROR0       = 8;
  localparam int ORDER_SLOT       = CNT_ERROR0 + RNIC_ERR_IDX_UntaggedMsnRange;
  localparam int NUM_CNT          = CNT_ERROR0 + RNIC_NUM_ERRORS;

  localparam logic [15:0] ARG_SPAN     = 16'(4 * NUM_ARGS);         // bytes of CMD_ARG0..15
  localparam logic [15:0] ERR_CNT_SPAN = 16'(8 * RNIC_NUM_ERRORS);  // bytes of the error counters
  localparam logic [16:0] NUM_STREAMS_W = 17'(NumStreams);
  localparam logic [8:0]  NUM_QNS_W     = 9'(NumQns);

  localparam logic [15:0] EXT_BASE     = 16'h0400;                 // the network side's window
  localparam logic [1:0] RESP_OKAY   = 2'b00;
  localparam logic [1:0] RESP_SLVERR = 2'b10;

  initial begin
    if (DataWidth < 32 || StagEntries < 1 || SsnWindow < 1) begin
      $fatal(1, "rnic_regs: DataWidth >= 32, StagEntries >= 1 and SsnWindow >= 1 required");
    end
    if (NumStreams < 1 || NumStreams > 65536) begin
      $fatal(1, "rnic_regs: NumStreams must be in 1..65536 (16-bit db_stream_o)");
    end
    if (NumQns < 1 || NumQns > 256 || (NumQns & (NumQns - 1)) != 0) begin
      $fatal(1, "rnic_regs: NumQns must be a power of two in 1..256 (8-bit db_qn_o)");
    end
    if (NUM_ARGS < NUM_ARGS_OUT || NUM_ARGS > 16) begin
      $fatal(1, "rnic_regs: RNIC_CMD_ARGS must be in 10..16");
    end
    // Every other row (the counters are the highest) lies below the window.
    if (RNIC_REG_NET_ASSOC_ARG0 < EXT_BASE || RNIC_REG_NET_CNT0 >= EXT_BASE + 16'h0100 ||
        32'(RNIC_REG_CNT_ERROR0_LO) + 32'(ERR_CNT_SPAN) > 32'(EXT_BASE)) begin
      $fatal(1, "rnic_regs: the NET_* rows must lie in [EXT_BASE, EXT_BASE + 0x100), no other row there");
    end
    if (NUM_CNT > 32) begin
      $fatal(1, "rnic_regs: at most 24 error-table rows (5-bit error_idx_i, counter slot index)");
    end
  end

  // ---- address decode ---------------------------------------------------------------------------
  // Byte mask of a 4-bit write strobe.
  function automatic logic [31:0] strb_mask(logic [3:0] s);
    strb_mask = {{8{s[3]}}, {8{s[2]}}, {8{s[1]}}, {8{s[0]}}};
  endfunction

  // Old value with the strobed bytes of the new one.
  function automatic logic [31:0] merge(logic [31:0] old, logic [31:0] d, logic [3:0] s);
    merge = (old & ~strb_mask(s)) | (d & strb_mask(s));
  endfunction

  // Word address a is one of CMD_ARG0..15.
  function automatic logic arg_hit(logic [15:0] a);
    arg_hit = (a >= RNIC_REG_CMD_ARG0) && (16'(a - RNIC_REG_CMD_ARG0) < ARG_SPAN);
  endfunction

  // Index of the CMD_ARG word at a (valid when arg_hit).
  function automatic logic [3:0] arg_idx(logic [15:0] a);
    arg_idx = 4'((a - RNIC_REG_CMD_ARG0) >> 2);
  endfunction

  // Word address a is in the network side's window.
  function automatic logic ext_region(logic [15:8] a);
    ext_region = a == EXT_BASE[15:8];
  endfunction

  // Counter decode of a: {hit, hi word, slot}.
  function automatic logic [6:0] cnt_decode(logic [15:0] a);
    logic [15:0] off;
    off = a - RNIC_REG_CNT_ERROR0_LO;
    cnt_decode = '0;
    case (a)
      RNIC_REG_CNT_SEGMENTS_LO:     cnt_decode = {2'b10, 5'(CNT_SEGMENTS)};
      RNIC_REG_CNT_SEGMENTS_HI:     cnt_decode = {2'b11, 5'(CNT_SEGMENTS)};
      RNIC_REG_CNT_BYTES_LO:        cnt_decode = {2'b10, 5'(CNT_BYTES)};
      RNIC_REG_CNT_BYTES_HI:        cnt_decode = {2'b11, 5'(CNT_BYTES)};
      RNIC_REG_CNT_MESSAGES_LO:     cnt_decode = {2'b10, 5'(CNT_MESSAGES)};
      RNIC_REG_CNT_MESSAGES_HI:     cnt_decode = {2'b11, 5'(CNT_MESSAGES)};
      RNIC_REG_CNT_DROPS_LO:        cnt_decode = {2'b10, 5'(CNT_DROPS)};
      RNIC_REG_CNT_DROPS_HI:        cnt_decode = {2'b11, 5'(CNT_DROPS)};
      RNIC_REG_CNT_ACCESS_LO:       cnt_decode = {2'b10, 5'(CNT_ACCESS)};
      RNIC_REG_CNT_ACCESS_HI:       cnt_decode = {2'b11, 5'(CNT_ACCESS)};
      RNIC_REG_CNT_DUPLICATES_LO:   cnt_decode = {2'b10, 5'(CNT_DUPLICATES)};
      RNIC_REG_CNT_DUPLICATES_HI:   cnt_decode = {2'b11, 5'(CNT_DUPLICATES)};
      RNIC_REG_CNT_WRITE_ERRORS_LO: cnt_decode = {2'b10, 5'(CNT_WRITE_ERRORS)};
      RNIC_REG_CNT_WRITE_ERRORS_HI: cnt_decode = {2'b11, 5'(CNT_WRITE_ERRORS)};
      RNIC_REG_CNT_READ_ERRORS_LO:  cnt_decode = {2'b10, 5'(CNT_READ_ERRORS)};
      RNIC_REG_CNT_READ_ERRORS_HI:  cnt_decode = {2'b11, 5'(CNT_READ_ERRORS)};
      default: begin
        if (a >= RNIC_REG_CNT_ERROR0_LO && off < ERR_CNT_SPAN) begin
          cnt_decode = {1'b1, off[2], 5'(CNT_ERROR0) + off[7:3]};
        end
      end
    endcase
  endfunction

  // ---- write channel ----------------------------------------------------------------------------
  logic        aw_full_q, aw_full_d;
  logic [15:0] aw_addr_q, aw_addr_d;
  logic        aw_db_q, aw_db_d;  // the held write is a doorbell in range (decoded as it is taken)
  logic        aw_ext_q, aw_ext_d;  // the held write is in the network side's window
  logic        w_full_q, w_full_d;
  logic [31:0] w_data_q, w_data_d;
  logic [3:0]  w_strb_q, w_strb_d;
  logic        b_valid_q, b_valid_d;
  logic [1:0]  b_resp_q, b_resp_d;
  logic        db_valid_q, db_valid_d;
  logic [15:0] db_stream_q, db_stream_d;
  logic [7:0]  db_qn_q, db_qn_d;
  logic [31:0] db_prod_q, db_prod_d;

  logic [15:0] wa;        // word address of the held write
  logic        wr_go;     // the held write executes this cycle
  logic        wr_hit;    // its address is in the map
  logic        wr_db;     // it is DB_PROD and DB_QUEUE names a queue: it rings
  logic [31:0] wr_mask;   // byte mask of its strobes

  assign wa      = {aw_addr_q[15:2], 2'b00};
  // The fields of the held write (hw.def RNIC_BITS rows).
  logic [7:0]  w_op;    // CMD OP
  logic [4:0]  w_log2;  // CQ_LOG2_SIZE LOG2
  logic [31:0] w_dbq;   // DB_QUEUE after the write's strobes
  assign w_op   = w_data_q[RNIC_CMD_OP_LSB +: RNIC_CMD_OP_BITS];
  assign w_log2 = w_data_q[RNIC_CQ_LOG2_SIZE_LOG2_LSB +: RNIC_CQ_LOG2_SIZE_LOG2_BITS];
  always_comb begin
    w_dbq = '0;
    w_dbq[RNIC_DB_QUEUE_STREAM_LSB +: RNIC_DB_QUEUE_STREAM_BITS] = db_sel_stream_q;
    w_dbq[RNIC_DB_QUEUE_QN_LSB +: RNIC_DB_QUEUE_QN_BITS]         = db_sel_qn_q;
    w_dbq = merge(w_dbq, w_data_q, w_strb_q);
  end
  // DB_QUEUE after this write names a queue
  logic db_ok_w;
  assign db_ok_w = {1'b0, w_dbq[RNIC_DB_QUEUE_STREAM_LSB +: RNIC_DB_QUEUE_STREAM_BITS]} < NUM_STREAMS_W &&
                   {1'b0, w_dbq[RNIC_DB_QUEUE_QN_LSB +: RNIC_DB_QUEUE_QN_BITS]} < NUM_QNS_W;
  assign wr_go   = aw_full_q && w_full_q && !b_valid_q && !db_valid_q;
  assign wr_db   = aw_db_q && db_sel_ok_q;
  assign wr_mask = strb_mask(w_strb_q);

  // ---- read channel -----------------------------------------------------------------------------
  logic        ar_full_q, ar_full_d;
  logic [15:0] ar_addr_q, ar_addr_d;
  logic        r_valid_q, r_valid_d;
  logic [31:0] r_data_q, r_data_d;
  logic [1:0]  r_resp_q, r_resp_d;

  logic [15:0] ra;        // word address of the held read
  logic [31:0] rd_data;
  logic        rd_hit;
  logic [6:0]  rd_cnt;    // cnt_decode(ra)
  // A read takes two cycles after AR (logic-depth budget, docs/synthesis.md): the address is decoded
  // and every register but the counters selected in the first (ar_full_q), the counter word in the
  // second (rd2_q), from the registered decode.
  logic        rd2_q, rd2_d;
  logic        rd_ext_q, rd_ext_d;  // the read in its second cycle is in the network side's window
  logic [31:0] rd_pre_q, rd_pre_d;
  logic        rd_hit_q, rd_hit_d;
  logic [6:0]  rd_cnt_q, rd_cnt_d;

  assign ra = {ar_addr_q[15:2], 2'b00};

  // ---- register state ---------------------------------------------------------------------------
  logic [32*NUM_ARGS-1:0] args_q, args_d;
  logic [7:0]             cmd_op_q, cmd_op_d;
  logic [32*10-1:0]       cmd_args_q, cmd_args_d;
  logic                   cmd_valid_q, cmd_valid_d;
  logic                   busy_q, busy_d;
  logic                   fence_q, fence_d;      // the busy command still waits for fence_done_i
  logic                   done_q, done_d;        // the busy command still waits for cmd_done_i
  logic [31:0]            result_q, result_d;    // CMD_RESULT
  logic                   refused_q, refused_d;
  logic [63:0]            cq_base_q, cq_base_d;
  logic [4:0]             cq_log2_q, cq_log2_d;
  logic                   cq_en_q, cq_en_d;
  logic                   cq_reset_q, cq_reset_d;
  logic [31:0]            cq_cons_q, cq_cons_d;
  logic [15:0]            db_sel_stream_q, db_sel_stream_d;  // DB_QUEUE [15:0]
  logic [7:0]             db_sel_qn_q, db_sel_qn_d;          // DB_QUEUE [23:16]
  logic                   db_sel_ok_q;                       // DB_QUEUE names a queue
  logic                   cq_busy_q;             // cq_busy_i, registered (it comes from deliver)
  logic                   cq_idle;               // the ring configuration may be written
  assign cq_idle = !cq_en_q && !cq_busy_q;

  logic [NUM_CNT-1:0]     ev_q, ev_d;            // registered counter events, one bit per slot
  logic [15:0]            ev_bytes_q, ev_bytes_d;
  logic                   ev_order_q, ev_order_d;
  logic [64*NUM_CNT-1:0]  cnt_q, cnt_d;
  logic [32*NUM_CNT-1:0]  hi_q, hi_d;            // _HI words latched by _LO reads

  // ---- write decode and execution ---------------------------------------------------------------
  always_comb begin
    aw_full_d   = aw_full_q;
    aw_addr_d   = aw_addr_q;
    aw_db_d     = aw_db_q;
    aw_ext_d    = aw_ext_q;
    w_full_d    = w_full_q;
    w_data_d    = w_data_q;
    w_strb_d    = w_strb_q;
    b_valid_d   = b_valid_q;
    b_resp_d    = b_resp_q;
    db_valid_d  = db_valid_q;
    db_stream_d = db_stream_q;
    db_qn_d     = db_qn_q;
    db_prod_d   = db_prod_q;
    args_d      = args_q;
    cq_base_d   = cq_base_q;
    cq_log2_d   = cq_log2_q;
    cq_en_d     = cq_en_q;
    cq_reset_d  = 1'b0;
    cq_cons_d   = cq_cons_q;
    db_sel_stream_d = db_sel_stream_q;
    db_sel_qn_d     = db_sel_qn_q;
    cmd_op_d    = cmd_op_q;
    cmd_args_d  = cmd_args_q;
    cmd_valid_d = cmd_valid_q;
    busy_d      = busy_q;
    fence_d     = fence_q;
    done_d      = done_q;
    result_d    = result_q;
    refused_d   = refused_q;
    wr_hit      = 1'b1;

    if (s_axi_awvalid_i && !aw_full_q) begin
      aw_full_d = 1'b1;
      aw_addr_d = s_axi_awaddr_i;
      aw_db_d   = {s_axi_awaddr_i[15:2], 2'b00} == RNIC_REG_DB_PROD;
      aw_ext_d  = ext_region(s_axi_awaddr_i[15:8]);
    end
    if (s_axi_wvalid_i && !w_full_q) begin
      w_full_d = 1'b1;
      w_data_d = s_axi_wdata_i;
      w_strb_d = s_axi_wstrb_i;
    end
    if (b_valid_q && s_axi_bready_i) begin
      b_valid_d = 1'b0;
    end
    if (db_valid_q && db_ready_i) begin
      db_valid_d = 1'b0;
      b_valid_d  = 1'b1;
      b_resp_d   = RESP_OKAY;
    end

    // Command handshake and completion (a new command starts only while not busy).
    if (cmd_valid_q && cmd_ready_i) begin
      cmd_valid_d = 1'b0;
    end
    // A command completes once each pulse it waits for has come (fenced commands: fence_done_i;
    // QUEUE_CONFIG: both), or at once when lookup refuses it (bad index).
    if (busy_q) begin
      if (fence_done_i) fence_d = 1'b0;
      if (cmd_done_i) begin
        done_d   = 1'b0;
        result_d = cmd_refused_i ? 32'd0 : cmd_result_i;
      end
      if ((cmd_done_i && cmd_refused_i) || (!fence_d && !done_d)) begin
        busy_d      = 1'b0;
        cmd_valid_d = 1'b0;
        fence_d     = 1'b0;
        done_d      = 1'b0;
        refused_d   = cmd_done_i && cmd_refused_i;
      end
    end

    // Address map of the held write. A doorbell is decided from registers alone (its registered
    // address decode and DB_QUEUE's registered range check).
    if (wr_db) begin
      if (wr_go) begin
        db_valid_d  = 1'b1;
        db_stream_d = db_sel_stream_q;
        db_qn_d     = db_sel_qn_q;
        db_prod_d   = w_data_q;
      end
    end else begin
    unique case (wa)
      RNIC_REG_ID, RNIC_REG_VERSION, RNIC_REG_BUILD_ID, RNIC_REG_CAP_DATA_WIDTH, RNIC_REG_CAP_STAGS,
      RNIC_REG_CAP_STREAMS, RNIC_REG_CAP_QNS, RNIC_REG_CAP_SSN_WINDOW, RNIC_REG_CAP_MAX_SEG_BYTES,
      RNIC_REG_CAP_NET_ASSOCS, RNIC_REG_CAP_NET_MAX_PACKET, RNIC_REG_CMD_STATUS,
      RNIC_REG_CMD_RESULT, RNIC_REG_CQ_PROD: begin
        // read-only: ignored
      end
      RNIC_REG_CMD: begin
        if (wr_go && !busy_q) begin
          busy_d      = 1'b1;
          cmd_valid_d = 1'b1;
          refused_d   = 1'b0;
          cmd_op_d    = w_op;
          fence_d     = w_op == RNIC_CMD_STAG_INVALIDATE || w_op == RNIC_CMD_STREAM_TEARDOWN ||
                        w_op == RNIC_CMD_QUEUE_CONFIG;
          done_d      = w_op != RNIC_CMD_STAG_INVALIDATE && w_op != RNIC_CMD_STREAM_TEARDOWN;
          result_d    = '0;
          cmd_args_d  = args_q[32*NUM_ARGS_OUT-1:0];
        end
      end
      RNIC_REG_CQ_BASE_LO: begin
        if (wr_go && cq_idle) cq_base_d[31:0] = merge(cq_base_q[31:0], w_data_q, w_strb_q);
      end
      RNIC_REG_CQ_BASE_HI: begin
        if (wr_go && cq_idle) cq_base_d[63:32] = merge(cq_base_q[63:32], w_data_q, w_strb_q);
      end
      RNIC_REG_CQ_LOG2_SIZE: begin
        if (wr_go && cq_idle && w_strb_q[0] && w_log2 != 5'd0 && w_log2 <= 5'(RNIC_CQ_LOG2_MAX))
          cq_log2_d = w_log2;
      end
      RNIC_REG_CQ_CTRL: begin
        if (wr_go && w_strb_q[RNIC_CQ_CTRL_ENABLE_LSB / 8]) begin
          cq_en_d = w_data_q[RNIC_CQ_CTRL_ENABLE_LSB];
          if (w_data_q[RNIC_CQ_CTRL_ENABLE_LSB]) begin
            cq_reset_d = 1'b1;
            cq_cons_d  = '0;
          end
        end
      end
      RNIC_REG_CQ_CONS: begin
        if (wr_go) cq_cons_d = merge(cq_cons_q, w_data_q, w_strb_q);
      end
      RNIC_REG_DB_QUEUE: begin
        if (wr_go) begin
          db_sel_stream_d = w_dbq[RNIC_DB_QUEUE_STREAM_LSB +: RNIC_DB_QUEUE_STREAM_BITS];
          db_sel_qn_d     = w_dbq[RNIC_DB_QUEUE_QN_LSB +: RNIC_DB_QUEUE_QN_BITS];
        end
      end
      default: begin
        // DB_PROD lands here when DB_QUEUE names no queue (else wr_db): unmapped, SLVERR, nothing rung.
        if (arg_hit(wa)) begin
          for (int k = 0; k < NUM_ARGS; k++) begin
            if (wr_go && arg_idx(wa) == 4'(k)) begin
              args_d[32*k +: 32] = (args_q[32*k +: 32] & ~wr_mask) | (w_data_q & wr_mask);
            end
          end
        end else if (cnt_decode(wa) != 7'b0) begin
          // counters are read-only: ignored
        end else if (aw_ext_q) begin
          // The network side's window: executed by its block on ext_wr_o. Decided here, among the
          // unmapped addresses, so that with the window tied off (ext_whit_i = 0) the decode is the
          // one without it (logic-depth budget).
          wr_hit = ext_whit_i;
        end else begin
          wr_hit = 1'b0;
        end
      end
    endcase
    end

    if (wr_go) begin
      aw_full_d = 1'b0;
      w_full_d  = 1'b0;
      if (!wr_db) begin
        b_valid_d = 1'b1;
        b_resp_d  = wr_hit ? RESP_OKAY : RESP_SLVERR;
      end
    end
  end

  // ---- read decode ------------------------------------------------------------------------------
  always_comb begin
    rd_data = '0;
    rd_hit  = 1'b1;
    rd_cnt  = cnt_decode(ra);
    unique case (ra)
      RNIC_REG_ID:             rd_data = RNIC_ID_VALUE;
      RNIC_REG_VERSION:        rd_data = RNIC_VERSION_VALUE;
      RNIC_REG_BUILD_ID:       rd_data = BuildId;
      RNIC_REG_CAP_DATA_WIDTH: rd_data = DataWidth;
      RNIC_REG_CAP_STAGS:      rd_data = StagEntries;
      RNIC_REG_CAP_STREAMS:    rd_data = NumStreams;
      RNIC_REG_CAP_QNS:        rd_data = NumQns;
      RNIC_REG_CAP_SSN_WINDOW: rd_data = SsnWindow;
      RNIC_REG_CAP_MAX_SEG_BYTES:  rd_data = MaxSegBytes;
      RNIC_REG_CAP_NET_ASSOCS:     rd_data = NetAssocs;
      RNIC_REG_CAP_NET_MAX_PACKET: rd_data = NetMaxPacket;
      RNIC_REG_CMD:            rd_data = '0;
      RNIC_REG_CMD_STATUS: begin
        rd_data[RNIC_CMD_STATUS_BUSY_LSB]                            = busy_q;
        rd_data[RNIC_CMD_STATUS_REFUSED_LSB]                         = refused_q;
        rd_data[RNIC_CMD_STATUS_OP_LSB +: RNIC_CMD_STATUS_OP_BITS]   = cmd_op_q;
      end
      RNIC_REG_CMD_RESULT:     rd_data = result_q;
      RNIC_REG_CQ_BASE_LO:     rd_data = cq_base_q[31:0];
      RNIC_REG_CQ_BASE_HI:     rd_data = cq_base_q[63:32];
      RNIC_REG_CQ_LOG2_SIZE:   rd_data[RNIC_CQ_LOG2_SIZE_LOG2_LSB +: RNIC_CQ_LOG2_SIZE_LOG2_BITS] = cq_log2_q;
      RNIC_REG_CQ_CTRL: begin
        rd_data[RNIC_CQ_CTRL_ENABLE_LSB] = cq_en_q;
        rd_data[RNIC_CQ_CTRL_BUSY_LSB]   = cq_busy_q;
      end
      RNIC_REG_CQ_PROD:        rd_data = cq_prod_i;
      RNIC_REG_CQ_CONS:        rd_data = cq_cons_q;
      RNIC_REG_DB_QUEUE: begin
        rd_data[RNIC_DB_QUEUE_STREAM_LSB +: RNIC_DB_QUEUE_STREAM_BITS] = db_sel_stream_q;
        rd_data[RNIC_DB_QUEUE_QN_LSB +: RNIC_DB_QUEUE_QN_BITS]         = db_sel_qn_q;
      end
      RNIC_REG_DB_PROD:        rd_data = '0;
      default: begin
        if (arg_hit(ra)) begin
          for (int k = 0; k < NUM_ARGS; k++) begin
            if (arg_idx(ra) == 4'(k)) rd_data = args_q[32*k +: 32];
          end
        end else if (rd_cnt[6]) begin
          rd_data = '0;  // a counter: selected in the second read cycle
        end else begin
          rd_hit = 1'b0;
        end
      end
    endcase
  end

  always_comb begin
    ar_full_d = ar_full_q;
    ar_addr_d = ar_addr_q;
    r_valid_d = r_valid_q;
    r_data_d  = r_data_q;
    r_resp_d  = r_resp_q;
    hi_d      = hi_q;
    rd2_d     = rd2_q;
    rd_ext_d  = rd_ext_q;
    rd_pre_d  = rd_pre_q;
    rd_hit_d  = rd_hit_q;
    rd_cnt_d  = rd_cnt_q;
    if (s_axi_arvalid_i && s_axi_arready_o) begin
      ar_full_d = 1'b1;
      ar_addr_d = s_axi_araddr_i;
    end
    if (ar_full_q) begin
      ar_full_d = 1'b0;
      rd2_d     = 1'b1;
      rd_pre_d  = rd_data;
      rd_hit_d  = rd_hit;
      rd_cnt_d  = rd_cnt;
      rd_ext_d  = ext_region(ra[15:8]);
    end
    if (rd2_q) begin
      rd2_d     = 1'b0;
      r_valid_d = 1'b1;
      r_data_d  = rd_pre_q;
      r_resp_d  = rd_hit_q ? RESP_OKAY : RESP_SLVERR;
      if (rd_ext_q) begin
        r_data_d = ext_rdata_i;
        r_resp_d = ext_rhit_i ? RESP_OKAY : RESP_SLVERR;
      end
      if (rd_cnt_q[6]) begin
        for (int k = 0; k < NUM_CNT; k++) begin
          if (rd_cnt_q[4:0] == 5'(k)) r_data_d = rd_cnt_q[5] ? hi_q[32*k +: 32] : cnt_q[64*k +: 32];
        end
      end
      if (rd_cnt_q[6] && !rd_cnt_q[5]) begin
        for (int k = 0; k < NUM_CNT; k++) begin
          if (rd_cnt_q[4:0] == 5'(k)) hi_d[32*k +: 32] = cnt_q[64*k + 32 +: 32];
        end
      end
    end
    if (r_valid_q && s_axi_rready_i) begin
      r_valid_d = 1'b0;
    end
  end

  // ---- counters ---------------------------------------------------------------------------------
  always_comb begin
    ev_d                   = '0;
    ev_d[CNT_SEGMENTS]     = seg_event_i;
    ev_d[CNT_BYTES]        = bytes_event_i;
    ev_d[CNT_MESSAGES]     = msg_event_i;
    ev_d[CNT_DROPS]        = drop_event_i;
    ev_d[CNT_ACCESS]       = access_event_i;
    ev_d[CNT_DUPLICATES]   = dup_event_i;
    ev_d[CNT_WRITE_ERRORS] = write_err_event_i;
    ev_d[CNT_READ_ERRORS]  = read_err_event_i;
    for (int i = 0; i < RNIC_NUM_ERRORS; i++) begin
      ev_d[CNT_ERROR0 + i] = error_event_i && error_idx_i == 5'(i);
    end
    ev_bytes_d = bytes_i;
    ev_order_d = order_err_event_i;

    for (int k = 0; k < NUM_CNT; k++) begin
      cnt_d[64*k +: 64] = cnt_q[64*k +: 64] + 64'(ev_q[k]);
    end
    cnt_d[64*CNT_BYTES +: 64] = cnt_q[64*CNT_BYTES +: 64]
                              + (ev_q[CNT_BYTES] ? 64'(ev_bytes_q) : 64'd0);
    // Deliver's order errors are RFC 5041 7.2 (2, 0x03) too; they may coincide with validate's.
    cnt_d[64*ORDER_SLOT +: 64] = cnt_q[64*ORDER_SLOT +: 64] + 64'(ev_q[ORDER_SLOT])
                               + 64'(ev_order_q);
  end

  // ---- flops ------------------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      aw_full_q   <= 1'b0;
      aw_db_q     <= 1'b0;
      aw_ext_q    <= 1'b0;
      aw_addr_q   <= '0;
      w_full_q    <= 1'b0;
      w_data_q    <= '0;
      w_strb_q    <= '0;
      b_valid_q   <= 1'b0;
      b_resp_q    <= RESP_OKAY;
      db_valid_q  <= 1'b0;
      db_stream_q <= '0;
      db_qn_q     <= '0;
      db_prod_q   <= '0;
      ar_full_q   <= 1'b0;
      ar_addr_q   <= '0;
      rd2_q       <= 1'b0;
      rd_ext_q    <= 1'b0;
      rd_pre_q    <= '0;
      rd_hit_q    <= 1'b0;
      rd_cnt_q    <= '0;
      r_valid_q   <= 1'b0;
      r_data_q    <= '0;
      r_resp_q    <= RESP_OKAY;
      args_q      <= '0;
      cmd_op_q    <= '0;
      cmd_args_q  <= '0;
      cmd_valid_q <= 1'b0;
      busy_q      <= 1'b0;
      fence_q     <= 1'b0;
      done_q      <= 1'b0;
      result_q    <= '0;
      refused_q   <= 1'b0;
      cq_base_q   <= '0;
      cq_log2_q   <= '0;
      cq_en_q     <= 1'b0;
      cq_reset_q  <= 1'b0;
      cq_cons_q   <= '0;
      db_sel_stream_q <= '0;
      db_sel_qn_q     <= '0;
      db_sel_ok_q     <= 1'b1;              // queue (0, 0)
      cq_busy_q   <= 1'b0;
      ev_q        <= '0;
      ev_bytes_q  <= '0;
      ev_order_q  <= 1'b0;
      cnt_q       <= '0;
      hi_q        <= '0;
    end else begin
      aw_full_q   <= aw_full_d;
      aw_db_q     <= aw_db_d;
      aw_ext_q    <= aw_ext_d;
      aw_addr_q   <= aw_addr_d;
      w_full_q    <= w_full_d;
      w_data_q    <= w_data_d;
      w_strb_q    <= w_strb_d;
      b_valid_q   <= b_valid_d;
      b_resp_q    <= b_resp_d;
      db_valid_q  <= db_valid_d;
      db_stream_q <= db_stream_d;
      db_qn_q     <= db_qn_d;
      db_prod_q   <= db_prod_d;
      ar_full_q   <= ar_full_d;
      ar_addr_q   <= ar_addr_d;
      rd2_q       <= rd2_d;
      rd_ext_q    <= rd_ext_d;
      rd_pre_q    <= rd_pre_d;
      rd_hit_q    <= rd_hit_d;
      rd_cnt_q    <= rd_cnt_d;
      r_valid_q   <= r_valid_d;
      r_data_q    <= r_data_d;
      r_resp_q    <= r_resp_d;
      args_q      <= args_d;
      cmd_op_q    <= cmd_op_d;
      cmd_args_q  <= cmd_args_d;
      cmd_valid_q <= cmd_valid_d;
      busy_q      <= busy_d;
      fence_q     <= fence_d;
      done_q      <= done_d;
      result_q    <= result_d;
      refused_q   <= refused_d;
      cq_base_q   <= cq_base_d;
      cq_log2_q   <= cq_log2_d;
      cq_en_q     <= cq_en_d;
      cq_reset_q  <= cq_reset_d;
      cq_cons_q   <= cq_cons_d;
      db_sel_stream_q <= db_sel_stream_d;
      db_sel_qn_q     <= db_sel_qn_d;
      // Judged on the write's own data (not on the _d mux behind the address decode): fewer LUT levels.
      if (wr_go && wa == RNIC_REG_DB_QUEUE) db_sel_ok_q <= db_ok_w;
      cq_busy_q   <= cq_busy_i;
      ev_q        <= ev_d;
      ev_bytes_q  <= ev_bytes_d;
      ev_order_q <= ev_order_d;
      cnt_q       <= cnt_d;
      hi_q        <= hi_d;
    end
  end

  // ---- outputs ----------------------------------------------------------------------------------
  assign s_axi_awready_o = !aw_full_q;
  assign s_axi_wready_o  = !w_full_q;
  assign s_axi_bvalid_o  = b_valid_q;
  assign s_axi_bresp_o   = b_resp_q;
  assign s_axi_arready_o = !ar_full_q && !rd2_q && !r_valid_q;
  assign s_axi_rvalid_o  = r_valid_q;
  assign s_axi_rdata_o   = r_data_q;
  assign s_axi_rresp_o   = r_resp_q;

  assign cmd_op_o    = cmd_op_q;
  assign cmd_args_o  = cmd_args_q;
  assign cmd_valid_o = cmd_valid_q;

  assign db_stream_o = db_stream_q;
  assign db_qn_o     = db_qn_q;
  assign db_prod_o   = db_prod_q;
  assign db_valid_o  = db_valid_q;

  assign cq_base_o   = cq_base_q;
  assign cq_log2_o   = cq_log2_q;
  assign cq_enable_o = cq_en_q;
  assign cq_reset_o  = cq_reset_q;
  assign cq_cons_o   = cq_cons_q;

  assign ext_wr_o    = wr_go && aw_ext_q && !wr_db;
  assign ext_waddr_o = wa[7:0];
  assign ext_wdata_o = w_data_q;
  assign ext_wstrb_o = w_strb_q;
  assign ext_rd_o    = ar_full_q && ext_region(ra[15:8]);
  assign ext_raddr_o = ra[7:0];

  // Byte-address bits [1:0] select nothing in 32-bit registers.
  logic unused_addr_lsbs;
  assign unused_addr_lsbs = ^{aw_addr_q[1:0], ar_addr_q[1:0]};

  // ---- Assertions (rtl/rnic_assert.svh) -----------------------------------------------------------
  // AXI4-Lite A3.3.1 on the responses; the command and doorbell handshakes toward lookup hold too.
  `RNIC_ASSERT_HOLD(a_b_hold, clk_i, rst_ni, s_axi_bvalid_o, s_axi_bready_i, s_axi_bresp_o)
  `RNIC_ASSERT_HOLD(a_r_hold, clk_i, rst_ni, s_axi_rvalid_o, s_axi_rready_i,
                    {s_axi_rdata_o, s_axi_rresp_o})
  `RNIC_ASSERT_HOLD(a_cmd_hold, clk_i, rst_ni, cmd_valid_o, cmd_ready_i, {cmd_op_o, cmd_args_o})
  `RNIC_ASSERT_HOLD(a_db_hold, clk_i, rst_ni, db_valid_o, db_ready_i, {db_stream_o, db_qn_o, db_prod_o})
endmodule
