`include "rnic_defs.svh"
// Stage 2: owns the STag, stream and queue tables. One item at a time: a segment's table reads (plus the
// receive-buffer descriptor fetch for untagged segments), a table command from regs, a doorbell, or a
// consume from deliver. Tables are flat RAMs cleared by a walk after reset.
module rnic_rx_lookup #(
  parameter int DataWidth   = 512,   // AXI data width in bits (descriptor fetch)
  parameter int StagEntries = 4096,  // STag table entries (STag index = STag[31:8])
  parameter int NumStreams  = 256,   // stream table entries
  parameter int NumQns      = 4      // untagged queues per stream (power of two)
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
  output logic                   cmd_done_o,      // pulse: a non-fence command finished
  output logic                   cmd_refused_o,   // pulse (with cmd_done_o): bad opcode or index
  input  logic [15:0]            db_stream_i,     // doorbell: new producer index of (stream, qn)
  input  logic [7:0]             db_qn_i,
  input  logic [31:0]            db_prod_i,
  input  logic                   db_valid_i,
  output logic                   db_ready_o,
  input  logic [15:0]            cons_stream_i,   // from deliver: a message of (stream, qn) delivered,
  input  logic [7:0]             cons_qn_i,       //   or (cons_reset_i) STREAM_RESET reached deliver
  input  logic                   cons_reset_i,
  input  logic                   cons_valid_i,
  output logic                   cons_ready_o,
  output logic [15:0]            ssn_rd_stream_o, // read port into deliver's next_ssn,
  input  logic [15:0]            ssn_rd_next_i,   //   data one cycle after the address
  input  logic                   err_valid_i,     // from validate: stream enters the error state
  input  logic [15:0]            err_stream_i,
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
  input  logic                   lk_ready_i
);
  localparam int Bytes = DataWidth / 8;
  localparam int StagIw = $clog2(StagEntries);
  localparam int StreamIw = NumStreams > 1 ? $clog2(NumStreams) : 1;
  localparam int QnIw = NumQns > 1 ? $clog2(NumQns) : 1;
  localparam int NumQueues = NumStreams * NumQns;
  localparam int QueueIw = $clog2(NumQueues) > 0 ? $clog2(NumQueues) : 1;
  localparam int InitEntries = StagEntries > NumQueues ? StagEntries : NumQueues;
  localparam int InitIw = $clog2(InitEntries) + 1;
  localparam int DescBeats = Bytes >= 16 ? 1 : 16 / Bytes;

  initial begin
    if (DataWidth < 64 || DataWidth > 512) $fatal(1, "rnic_rx_lookup: DataWidth must be 64..512");
    if (StagEntries < 2 || StagEntries > 65536) $fatal(1, "rnic_rx_lookup: StagEntries must be 2..65536");
    if (NumStreams < 1 || NumStreams > 65536) $fatal(1, "rnic_rx_lookup: NumStreams must be 1..65536");
    if (NumQns < 1 || NumQns > 256 || (NumQns & (NumQns - 1)) != 0)
      $fatal(1, "rnic_rx_lookup: NumQns must be a power of two <= 256");
  end

  // ---- table layouts (flat words; Yosys miscompiles memories of structs) ------------------------
  // STag entry
  localparam int SeValid = 0, SeKey = 1, SePd = 9, SeBound = 25, SeStream = 26, SeRw = 42, SeRr = 43;
  localparam int SeBase = 44, SeLen = 108, SeAddr = 172, SeW = 236;
  // stream entry: state, PD
  localparam int StState = 0, StPd = 2, StW = 18;
  // queue entry: configured, ring base, log2 entries, producer, head MSN
  localparam int QeCfg = 0, QeBase = 1, QeLog2 = 65, QeProd = 70, QeHead = 102, QeW = 134;

  logic [SeW-1:0] stag_mem [StagEntries];
  logic [StW-1:0] strm_mem [NumStreams];
  logic [QeW-1:0] q_mem [NumQueues];

  logic [StagIw-1:0]   stag_raddr, stag_waddr;
  logic [SeW-1:0]      stag_rdata, stag_wdata;
  logic                stag_we;
  logic [StreamIw-1:0] strm_raddr, strm_waddr;
  logic [StW-1:0]      strm_rdata, strm_wdata;
  logic                strm_we;
  logic [QueueIw-1:0]  q_raddr, q_waddr;
  logic [QeW-1:0]      q_rdata, q_wdata;
  logic                q_we;

  always_ff @(posedge clk_i) begin
    if (stag_we) stag_mem[stag_waddr] <= stag_wdata;
    stag_rdata <= stag_mem[stag_raddr];
  end
  always_ff @(posedge clk_i) begin
    if (strm_we) strm_mem[strm_waddr] <= strm_wdata;
    strm_rdata <= strm_mem[strm_raddr];
  end
  always_ff @(posedge clk_i) begin
    if (q_we) q_mem[q_waddr] <= q_wdata;
    q_rdata <= q_mem[q_raddr];
  end

  // ---- control -------------------------------------------------------------------------------------
  typedef enum logic [3:0] {
    S_INIT, S_IDLE, S_SEG_RD, S_AR, S_R, S_EMIT, S_Q_RMW, S_ECHO_WAIT, S_QCLR
  } state_e;
  state_e state_q, state_d;

  logic [InitIw-1:0] init_q, init_d;
  rnic_seg_t seg_q, seg_d;
  rnic_lookup_t lk_q, lk_d;
  logic [127:0] desc_q, desc_d;
  logic [7:0] beat_q, beat_d;
  logic rerr_q, rerr_d;
  logic [63:0] desc_addr_q, desc_addr_d;
  logic [31:0] prod_q, prod_d;          // doorbell value being applied
  logic q_is_db_q, q_is_db_d;           // S_Q_RMW: doorbell (1) or consume (0)
  logic enable_q, enable_d;             // S_EMIT of a STREAM_RESET: wait for the echo afterwards
  logic ret_emit_q, ret_emit_d;         // S_Q_RMW entered from S_EMIT: the item is still offered
  logic [15:0] cmd_stream_q, cmd_stream_d;
  logic [15:0] cmd_pd_q, cmd_pd_d;

  // Command arguments CMD_ARG0..9.
  logic [31:0] a0, a1, a2, a3, a4, a5, a6, a7, a8, a9;
  assign {a9, a8, a7, a6, a5, a4, a3, a2, a1, a0} = cmd_args_i;

  logic seg_stream_ok, seg_qn_ok, seg_stag_ok;
  assign seg_stream_ok = {16'b0, seg_q.stream} < NumStreams;
  assign seg_qn_ok = seg_q.qn < NumQns;
  assign seg_stag_ok = {8'b0, seg_q.stag[31:8]} < StagEntries;

  // Queue word for the segment, decoded (valid in S_SEG_RD).
  logic        q_cfg;
  logic [63:0] q_base;
  logic [4:0]  q_log2;
  logic [31:0] q_prod, q_head, q_ahead, q_posted, q_size, q_slot;
  always_comb begin
    q_cfg = q_rdata[QeCfg];
    q_base = q_rdata[QeBase +: 64];
    q_log2 = q_rdata[QeLog2 +: 5];
    q_prod = q_rdata[QeProd +: 32];
    q_head = q_rdata[QeHead +: 32];
    q_size = 32'd1 << q_log2;
    q_ahead = seg_q.msn - q_head;                 // mod 2^32: MSNs wrap (RFC 5041 4.3)
    q_posted = q_prod - (q_head - 32'd1);         // producer - consumer
    if (q_posted > q_size) q_posted = q_size;     // a producer beyond the ring is not believed
    q_slot = (seg_q.msn - 32'd1) & (q_size - 32'd1);
  end

  // The descriptor's bytes within a bus-wide beat (buses of 128 bits and more).
  logic [127:0] rdata_shifted;
  assign rdata_shifted = 128'(512'(m_axi_rdata_i) >> (8 * (desc_addr_q[5:0] & 6'(Bytes - 1))));

  logic cmd_index_ok;
  always_comb begin
    unique case (cmd_op_i)
      RNIC_CMD_STAG_WRITE, RNIC_CMD_STAG_INVALIDATE: cmd_index_ok = a0 < StagEntries;
      RNIC_CMD_STREAM_ENABLE, RNIC_CMD_STREAM_TEARDOWN: cmd_index_ok = a0 < NumStreams;
      RNIC_CMD_QUEUE_CONFIG: cmd_index_ok = a0 < NumStreams && a1 < NumQns &&
                                            a4 <= 32'd16;
      RNIC_CMD_NOP: cmd_index_ok = 1'b1;
      default: cmd_index_ok = 1'b0;
    endcase
  end

  always_comb begin
    state_d = state_q;
    init_d = init_q;
    seg_d = seg_q;
    lk_d = lk_q;
    desc_d = desc_q;
    beat_d = beat_q;
    rerr_d = rerr_q;
    desc_addr_d = desc_addr_q;
    prod_d = prod_q;
    q_is_db_d = q_is_db_q;
    enable_d = enable_q;
    ret_emit_d = ret_emit_q;
    cmd_stream_d = cmd_stream_q;
    cmd_pd_d = cmd_pd_q;

    seg_ready_o = 1'b0;
    cmd_ready_o = 1'b0;
    cmd_done_o = 1'b0;
    cmd_refused_o = 1'b0;
    db_ready_o = 1'b0;
    cons_ready_o = 1'b0;
    m_axi_arvalid_o = 1'b0;
    m_axi_rready_o = 1'b0;

    stag_raddr = seg_i.stag[8 +: StagIw];
    strm_raddr = seg_i.stream[StreamIw-1:0];
    q_raddr = QueueIw'({seg_i.stream[StreamIw-1:0], seg_i.qn[QnIw-1:0]});
    ssn_rd_stream_o = seg_i.stream;
    stag_we = 1'b0;
    stag_waddr = a0[StagIw-1:0];
    stag_wdata = '0;
    strm_we = 1'b0;
    strm_waddr = a0[StreamIw-1:0];
    strm_wdata = '0;
    q_we = 1'b0;
    q_waddr = QueueIw'({a0[StreamIw-1:0], a1[QnIw-1:0]});
    q_wdata = '0;

    // Validate's error feedback: the failing stream enters the error state now (7.1).
    if (err_valid_i) begin
      strm_we = 1'b1;
      strm_waddr = err_stream_i[StreamIw-1:0];
      strm_wdata = strm_rdata;
      strm_wdata[StState +: 2] = 2'(RNIC_STREAM_ERROR);
      strm_wdata[StPd +: 16] = lk_q.stream_pd;
    end

    unique case (state_q)
      // Clear every table after reset: no STag valid, every stream torn down, no queue configured.
      S_INIT: begin
        stag_we = init_q < InitIw'(StagEntries);
        stag_waddr = init_q[StagIw-1:0];
        strm_we = init_q < InitIw'(NumStreams);
        strm_waddr = init_q[StreamIw-1:0];
        strm_wdata[StState +: 2] = 2'(RNIC_STREAM_TORN_DOWN);
        q_we = init_q < InitIw'(NumQueues);
        q_waddr = init_q[QueueIw-1:0];
        init_d = init_q + 1'b1;
        if (init_q == InitIw'(InitEntries - 1)) state_d = S_IDLE;
      end

      S_IDLE: begin
        if (cons_valid_i && !cons_reset_i) begin
          // A message was delivered: head MSN + 1 (read-modify-write).
          cons_ready_o = 1'b1;
          q_raddr = QueueIw'({cons_stream_i[StreamIw-1:0], cons_qn_i[QnIw-1:0]});
          q_is_db_d = 1'b0;
          seg_d.stream = cons_stream_i;
          seg_d.qn = {24'b0, cons_qn_i};
          state_d = S_Q_RMW;
        end else if (cons_valid_i) begin
          cons_ready_o = 1'b1;                         // a stray echo: nothing waits for it
        end else if (db_valid_i) begin
          db_ready_o = 1'b1;
          q_raddr = QueueIw'({db_stream_i[StreamIw-1:0], db_qn_i[QnIw-1:0]});
          q_is_db_d = 1'b1;
          prod_d = db_prod_i;
          seg_d.stream = db_stream_i;
          seg_d.qn = {24'b0, db_qn_i};
          state_d = {16'b0, db_stream_i} < NumStreams && {24'b0, db_qn_i} < NumQns ? S_Q_RMW : S_IDLE;
        end else if (cmd_valid_i) begin
          cmd_ready_o = 1'b1;
          if (!cmd_index_ok) begin
            cmd_done_o = 1'b1;
            cmd_refused_o = 1'b1;
          end else begin
            unique case (cmd_op_i)
              RNIC_CMD_STAG_WRITE: begin
                stag_we = 1'b1;
                stag_wdata[SeValid] = 1'b1;
                stag_wdata[SeKey +: 8] = a1[7:0];
                stag_wdata[SeRw] = a1[8];
                stag_wdata[SeRr] = a1[9];
                stag_wdata[SeBound] = a1[10];
                stag_wdata[SePd +: 16] = a2[15:0];
                stag_wdata[SeStream +: 16] = a3[15:0];
                stag_wdata[SeBase +: 64] = {a5, a4};
                stag_wdata[SeLen +: 64] = {a7, a6};
                stag_wdata[SeAddr +: 64] = {a9, a8};
                cmd_done_o = 1'b1;
              end
              RNIC_CMD_STAG_INVALIDATE: begin
                // No lookup after this cycle can hit the entry; the FENCE item completes the command
                // once every earlier placement write is acknowledged (RFC 5041 8.3.1 #6).
                stag_we = 1'b1;
                lk_d = '0;
                lk_d.kind = RNIC_ITEM_FENCE;
                lk_d.arg = a0[15:0];
                enable_d = 1'b0;
                state_d = S_EMIT;
              end
              RNIC_CMD_STREAM_ENABLE: begin
                // Deliver resets the stream's DDP-SSN state in order; the tables change on its echo.
                lk_d = '0;
                lk_d.kind = RNIC_ITEM_STREAM_RESET;
                lk_d.arg = a0[15:0];
                cmd_stream_d = a0[15:0];
                cmd_pd_d = a1[15:0];
                enable_d = 1'b1;
                state_d = S_EMIT;
              end
              RNIC_CMD_STREAM_TEARDOWN: begin
                strm_we = 1'b1;
                strm_wdata[StState +: 2] = 2'(RNIC_STREAM_TORN_DOWN);
                cmd_done_o = 1'b1;
              end
              RNIC_CMD_QUEUE_CONFIG: begin
                q_we = 1'b1;
                q_wdata[QeCfg] = 1'b1;
                q_wdata[QeBase +: 64] = {a3, a2};
                q_wdata[QeLog2 +: 5] = a4[4:0];
                // Empty: producer = consumer = head MSN - 1 (the doorbell carries the MSN of the
                // last posted buffer).
                q_wdata[QeHead +: 32] = a5 == 32'd0 ? 32'd1 : a5;
                q_wdata[QeProd +: 32] = (a5 == 32'd0 ? 32'd1 : a5) - 32'd1;
                cmd_done_o = 1'b1;
              end
              default: cmd_done_o = 1'b1;  // NOP
            endcase
          end
        end else if (seg_valid_i) begin
          // Table reads are addressed from seg_i this cycle; their data is there in S_SEG_RD.
          seg_ready_o = 1'b1;
          seg_d = seg_i;
          state_d = S_SEG_RD;
        end
      end

      S_SEG_RD: begin
        lk_d = '0;
        lk_d.kind = RNIC_ITEM_SEG;
        lk_d.seg = seg_q;
        lk_d.stream_state = seg_stream_ok ? strm_rdata[StState +: 2] : 2'(RNIC_STREAM_TORN_DOWN);
        lk_d.stream_pd = strm_rdata[StPd +: 16];
        lk_d.next_ssn = ssn_rd_next_i;
        lk_d.stag_valid = seg_stag_ok && stag_rdata[SeValid];
        lk_d.stag_key = stag_rdata[SeKey +: 8];
        lk_d.stag_pd = stag_rdata[SePd +: 16];
        lk_d.stag_bound = stag_rdata[SeBound];
        lk_d.stag_stream = stag_rdata[SeStream +: 16];
        lk_d.stag_remote_write = stag_rdata[SeRw];
        lk_d.stag_base_to = stag_rdata[SeBase +: 64];
        lk_d.stag_length = stag_rdata[SeLen +: 64];
        lk_d.stag_addr = stag_rdata[SeAddr +: 64];
        if (!seg_qn_ok || !q_cfg) lk_d.rq_status = RNIC_RQ_BAD_QN;
        else if (q_ahead[31]) lk_d.rq_status = RNIC_RQ_MSN_RANGE;  // before the first buffer
        else if (q_ahead >= q_posted) lk_d.rq_status = RNIC_RQ_NO_BUF;
        else lk_d.rq_status = RNIC_RQ_OK;
        desc_addr_d = q_base + {28'b0, q_slot, 4'b0};
        beat_d = '0;
        rerr_d = 1'b0;
        enable_d = 1'b0;
        // Fetch the descriptor only when the segment can be placed into it.
        if (!seg_q.is_tagged && seg_stream_ok && lk_d.stream_state == 2'(RNIC_STREAM_NORMAL) &&
            lk_d.rq_status == RNIC_RQ_OK) begin
          state_d = S_AR;
        end else begin
          state_d = S_EMIT;
        end
      end

      S_AR: begin
        m_axi_arvalid_o = 1'b1;
        if (m_axi_arready_i) state_d = S_R;
      end

      S_R: begin
        m_axi_rready_o = 1'b1;
        if (m_axi_rvalid_i) begin
          if (m_axi_rresp_i != 2'b00) rerr_d = 1'b1;
          if (DescBeats == 1) begin
            desc_d = rdata_shifted[127:0];
          end else begin
            desc_d[beat_q[0] * 64 +: 64] = m_axi_rdata_i[63:0];  // 64-bit bus: two beats
          end
          beat_d = beat_q + 8'd1;
          if (m_axi_rlast_i) begin
            lk_d.rq_addr = desc_d[RNIC_RQD_ADDR_LSB +: 64];
            lk_d.rq_length = desc_d[RNIC_RQD_LENGTH_LSB +: 32];
            lk_d.local_fault = rerr_d;
            state_d = S_EMIT;
          end
        end
      end

      S_EMIT: begin
        if (lk_ready_i) begin
          state_d = enable_q ? S_ECHO_WAIT : S_IDLE;
        end else if (cons_valid_i && !cons_reset_i) begin
          // Deliver may be waiting to hand over a consume while this item waits for validate, which
          // waits for place, which waits for deliver: serve the consume so that chain always drains.
          cons_ready_o = 1'b1;
          q_raddr = QueueIw'({cons_stream_i[StreamIw-1:0], cons_qn_i[QnIw-1:0]});
          q_is_db_d = 1'b0;
          seg_d.stream = cons_stream_i;
          seg_d.qn = {24'b0, cons_qn_i};
          ret_emit_d = 1'b1;
          state_d = S_Q_RMW;
        end
      end

      // STREAM_ENABLE: consumes of the old session drain first; the echo then resets the tables.
      S_ECHO_WAIT: begin
        if (cons_valid_i && !cons_reset_i) begin
          cons_ready_o = 1'b1;
          q_raddr = QueueIw'({cons_stream_i[StreamIw-1:0], cons_qn_i[QnIw-1:0]});
          q_is_db_d = 1'b0;
          seg_d.stream = cons_stream_i;
          seg_d.qn = {24'b0, cons_qn_i};
          enable_d = 1'b1;
          state_d = S_Q_RMW;
        end else if (cons_valid_i) begin
          cons_ready_o = 1'b1;
          strm_we = 1'b1;
          strm_waddr = cmd_stream_q[StreamIw-1:0];
          strm_wdata = '0;
          strm_wdata[StState +: 2] = 2'(RNIC_STREAM_NORMAL);
          strm_wdata[StPd +: 16] = cmd_pd_q;
          init_d = '0;
          state_d = S_QCLR;
        end
      end

      S_QCLR: begin  // the enabled stream's queues start unconfigured
        q_we = 1'b1;
        q_waddr = QueueIw'({cmd_stream_q[StreamIw-1:0], init_q[QnIw-1:0]});
        init_d = init_q + 1'b1;
        if (init_q == InitIw'(NumQns - 1)) begin
          cmd_done_o = 1'b1;
          enable_d = 1'b0;
          state_d = S_IDLE;
        end
      end

      // Doorbell (producer := value) or consume (head MSN + 1) on the queue read in the last cycle.
      S_Q_RMW: begin
        q_we = 1'b1;
        q_waddr = QueueIw'({seg_q.stream[StreamIw-1:0], seg_q.qn[QnIw-1:0]});
        q_wdata = q_rdata;
        if (q_is_db_q) q_wdata[QeProd +: 32] = prod_q;
        else q_wdata[QeHead +: 32] = q_rdata[QeHead +: 32] + 32'd1;
        ret_emit_d = 1'b0;
        if (ret_emit_q && !lk_ready_i) state_d = S_EMIT;      // still offering the item
        else if (enable_q) state_d = S_ECHO_WAIT;
        else state_d = S_IDLE;
      end

      default: state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= S_INIT;
      init_q <= '0;
      enable_q <= 1'b0;
      ret_emit_q <= 1'b0;
    end else begin
      state_q <= state_d;
      init_q <= init_d;
      enable_q <= enable_d;
      ret_emit_q <= ret_emit_d;
    end
  end

  always_ff @(posedge clk_i) begin
    seg_q <= seg_d;
    lk_q <= lk_d;
    desc_q <= desc_d;
    beat_q <= beat_d;
    rerr_q <= rerr_d;
    desc_addr_q <= desc_addr_d;
    prod_q <= prod_d;
    q_is_db_q <= q_is_db_d;
    cmd_stream_q <= cmd_stream_d;
    cmd_pd_q <= cmd_pd_d;
  end

  assign lk_o = lk_q;
  assign lk_valid_o = state_q == S_EMIT || (state_q == S_Q_RMW && ret_emit_q);

  // Descriptor fetch: one burst covering the 16-byte descriptor.
  localparam logic [63:0] BeatMask = 64'(Bytes) - 64'd1;
  assign m_axi_araddr_o = Bytes >= 16 ? (desc_addr_q & ~BeatMask) : desc_addr_q;
  assign m_axi_arlen_o = 8'(DescBeats - 1);

  // Stream indices wider than the table are refused before use; these bits only matter there.
  logic unused_err_stream;
  assign unused_err_stream = ^err_stream_i;
endmodule
