// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
`include "rnic_hw.svh"
// The transmit gather (issue 35, docs/transmit.md; the rules are tb/net tx_gather_ref.hpp's, in that
// order): one SCTP packet of a transmit slot in, the packet as it leaves out. A packet whose info says
// GATHER has its descriptor chunks (DATA with flag NET_DATA_FLAG_GATHER) expanded: the payload an NGD
// record names is read from registered memory on the AXI read port and spliced in place of the record,
// after every check of the chunk and of its STag passed; any failure marks the packet bad (nothing of
// it may leave: the sender after this unit skips it) and names the reason (tx_gather_ref.hpp TxDrop).
// Every other packet passes unchanged.
//
//   In:      the slot packet's beats (packet byte 0 at byte 0 of the first beat) into two copies of a
//            packet RAM (one for the walker, one for the packer); one packet at a time.
//   Walker:  reads the bytes it needs through a window of WinBeats beats at any byte offset, asks the
//            association entry (a_*) and, per descriptor, the tables (t_*: the STag entry, the stream's
//            PD and live bit), checks one step per cycle (every 64-bit sum in a cycle of its own) and
//            pushes runs: SLOT (bytes of the packet RAM), MEM (bytes of memory: also to the AR issuer),
//            ZERO (padding), END (bad, reason, wire length).
//   AR:      each MEM run in INCR bursts of whole beats that never cross 4 KiB, issued only when the
//            read FIFO has room for every beat (rready is always 1).
//   Packer:  P0 turns runs into pieces (a beat and its byte range [s, e)), P1 moves a piece's bytes to
//            the output position (a 2-beat shift) and masks them, P2 merges them into the accumulator
//            and emits whole beats; the last beat's tkeep and tlast and the packet's info come with it.
//            An R beat answered with an error marks the packet bad (reason READ_ERROR).
// Reset (rst_ni low, synchronous) forgets everything in flight; as for rnic_net_tx, the memory's
// outstanding R beats must be answered before reset ends (the read FIFO takes any R beat).
module rnic_net_gather #(
  parameter int DataWidth      = 512,   // 128..512, a power of two
  parameter int MaxPacketBytes = RNIC_NET_MAX_PACKET_BYTES,
  parameter int ReadDepth      = 65536 / DataWidth  // read FIFO beats: 8 KiB (power of two, >= one 4 KiB burst)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // the slot packet; s_info_i is taken with its first beat: {err, gather, assoc[7:0], socket[15:0], len[15:0]}
  // (err: the slot's read was answered with an error: the packet goes through marked bad, READ_ERROR)
  input  logic                   s_valid_i,
  output logic                   s_ready_o,
  input  logic [DataWidth-1:0]   s_data_i,
  input  logic                   s_last_i,
  input  logic [41:0]            s_info_i,
  // the packet out; m_info_o with the last beat: {bad, reason[3:0], socket[15:0], len[15:0]}
  output logic                   m_valid_o,
  input  logic                   m_ready_i,
  output logic [DataWidth-1:0]   m_data_o,
  output logic [DataWidth/8-1:0] m_keep_o,
  output logic                   m_last_o,
  output logic [36:0]            m_info_o,
  // the association entry a_idx_o names, valid two cycles after a_idx_o is set
  output logic [3:0]             a_idx_o,
  input  logic                   a_valid_i,
  input  logic [15:0]            a_socket_i,
  input  logic [15:0]            a_my_port_i,
  input  logic [15:0]            a_their_port_i,
  input  logic [31:0]            a_their_vtag_i,
  input  logic [15:0]            a_first_i,
  input  logic [15:0]            a_count_i,
  // the tables: t_req_o asks for the STag entry of t_stag_o's index and DDP stream t_stream_o's PD and
  // live bit; t_rsp_i answers (one request at a time)
  output logic                   t_req_o,
  output logic [31:0]            t_stag_o,
  output logic [15:0]            t_stream_o,
  input  logic                   t_rsp_i,
  input  logic                   t_valid_i,       // the STag entry is valid
  input  logic [7:0]             t_key_i,
  input  logic                   t_local_read_i,
  input  logic [15:0]            t_pd_i,
  input  logic                   t_bound_i,
  input  logic [15:0]            t_bound_stream_i,
  input  logic [63:0]            t_base_to_i,
  input  logic [63:0]            t_length_i,
  input  logic [63:0]            t_addr_i,
  input  logic [15:0]            t_stream_pd_i,
  input  logic                   t_live_i,
  // AXI4 read address and data channels (registered memory; the unit never writes)
  output logic [63:0]            m_axi_araddr_o,
  output logic [7:0]             m_axi_arlen_o,
  output logic [2:0]             m_axi_arsize_o,
  output logic [1:0]             m_axi_arburst_o,
  output logic                   m_axi_arvalid_o,
  input  logic                   m_axi_arready_i,
  input  logic [DataWidth-1:0]   m_axi_rdata_i,
  input  logic [1:0]             m_axi_rresp_i,
  input  logic                   m_axi_rlast_i,
  input  logic                   m_axi_rvalid_i,
  output logic                   m_axi_rready_o,
  output logic                   busy_o          // a packet is in the unit
);
  localparam int Bytes = DataWidth / 8;
  localparam int Lb = $clog2(Bytes);
  localparam int MaxBeats = (MaxPacketBytes + Bytes - 1) / Bytes;
  localparam int RamBeats = 1 << $clog2(MaxBeats);
  localparam int RamW = $clog2(RamBeats);
  localparam int HeadMax = 16 + 2 + 18 + 16;                    // the longest descriptor chunk in a slot
  localparam int WinBeats = (Bytes - 1 + HeadMax + Bytes - 1) / Bytes;
  localparam int WinBytes = WinBeats * Bytes;
  localparam int RdW = $clog2(ReadDepth);

  initial begin
    if (DataWidth < 128 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_net_gather: DataWidth must be 128, 256 or 512");
    if (MaxPacketBytes < 12 || MaxPacketBytes + 2 * Bytes > 65535)
      $fatal(1, "rnic_net_gather: MaxPacketBytes must be 12..65535 - 2 * DataWidth / 8 (16-bit offsets)");
    if ((ReadDepth & (ReadDepth - 1)) != 0 || ReadDepth * Bytes < 4096)
      $fatal(1, "rnic_net_gather: ReadDepth must be a power of two holding a 4 KiB burst");
  end

  // Drop reasons: hw.def NET_TX_DROP_* (tx_gather_ref.hpp TxDrop has the same values).
  localparam logic [3:0] RAssoc = 4'(RNIC_NET_TX_DROP_ASSOC), RFraming = 4'(RNIC_NET_TX_DROP_FRAMING),
                         RMark = 4'(RNIC_NET_TX_DROP_MARK), RFragment = 4'(RNIC_NET_TX_DROP_FRAGMENT),
                         RPpid = 4'(RNIC_NET_TX_DROP_PPID), RStream = 4'(RNIC_NET_TX_DROP_STREAM),
                         RLength = 4'(RNIC_NET_TX_DROP_LENGTH), RStag = 4'(RNIC_NET_TX_DROP_STAG),
                         RLocalRead = 4'(RNIC_NET_TX_DROP_LOCAL_READ), RPd = 4'(RNIC_NET_TX_DROP_PD),
                         RBounds = 4'(RNIC_NET_TX_DROP_BOUNDS), RReadError = 4'(RNIC_NET_TX_DROP_READ_ERROR),
                         RTooLong = 4'(RNIC_NET_TX_DROP_TOO_LONG);
  localparam logic [7:0] Gather = 8'(RNIC_NET_DATA_FLAG_GATHER);

  // ---- In: the packet RAMs ---------------------------------------------------------------------------
  logic [DataWidth-1:0] wram [RamBeats];   // the walker's copy
  logic [DataWidth-1:0] pram [RamBeats];   // the packer's copy
  logic                 full_q, free;      // a whole packet is in the RAMs; the packer is done with it
  logic [RamW:0]        in_idx_q;
  logic [41:0]          info_q;
  logic                 in_first_q;
  assign s_ready_o = !full_q;
  always_ff @(posedge clk_i) begin
    if (s_valid_i && s_ready_o) begin
      wram[in_idx_q[RamW-1:0]] <= s_data_i;
      pram[in_idx_q[RamW-1:0]] <= s_data_i;
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      full_q <= 1'b0;
      in_idx_q <= '0;
      in_first_q <= 1'b1;
    end else begin
      if (s_valid_i && s_ready_o) begin
        in_idx_q <= s_last_i ? '0 : in_idx_q + 1'b1;
        in_first_q <= s_last_i;
        if (s_last_i) full_q <= 1'b1;
      end else if (free) begin
        full_q <= 1'b0;
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (s_valid_i && s_ready_o && in_first_q) info_q <= s_info_i;
  end
  logic        i_gather, i_err;
  logic [7:0]  i_assoc;
  logic [15:0] i_socket, i_len;
  assign {i_err, i_gather, i_assoc, i_socket, i_len} = info_q;
  assign a_idx_o = i_assoc[3:0];

  // ---- Runs: walker -> packer, and MEM runs -> AR issuer --------------------------------------------
  localparam logic [1:0] KSlot = 2'd0, KMem = 2'd1, KZero = 2'd2, KEnd = 2'd3;
  // {kind, start[63:0], len[15:0], gclr, bad, reason[3:0]}; END: start[15:0] = the wire length, len =
  // the socket
  localparam int RunW = 2 + 64 + 16 + 1 + 1 + 4;
  logic            run_push, run_ready, run_valid, run_pop, mem_push, mem_ready;
  logic [RunW-1:0] run_in, run_out;
  logic [79:0]     mem_out;
  logic            mem_valid, mem_pop;
  logic [$clog2(8):0] run_count_unused, mem_count_unused;
  rnic_fifo #(.Width(RunW), .Depth(8)) u_runs (
    .clk_i, .rst_ni,
    .in_data_i(run_in), .in_valid_i(run_push), .in_ready_o(run_ready),
    .out_data_o(run_out), .out_valid_o(run_valid), .out_ready_i(run_pop), .count_o(run_count_unused)
  );
  rnic_fifo #(.Width(80), .Depth(8)) u_mems (
    .clk_i, .rst_ni,
    .in_data_i(run_in[RunW-3 -: 80]), .in_valid_i(mem_push), .in_ready_o(mem_ready),
    .out_data_o(mem_out), .out_valid_o(mem_valid), .out_ready_i(mem_pop), .count_o(mem_count_unused)
  );

  // ---- Walker ---------------------------------------------------------------------------------------
  // One chunk: WWin/WWait load the window at o_q, WHdr extracts the bytes there, WChunk/WChunk2/
  // WChunk3 check them (registered compares, then their verdict), then either WPlain/WPlainPad push a
  // chunk as it is, or WTab asks the tables and WChk1..4 check the STag range before WHead/WMem/WPad
  // push the descriptor's expansion.
  localparam logic [4:0] WIdle = 5'd0, WWin = 5'd1, WWait = 5'd2, WHdr = 5'd3, WCommon = 5'd4,
                         WChunk = 5'd5, WChunk2 = 5'd6, WTab = 5'd7, WChk1 = 5'd8, WChk2 = 5'd9,
                         WChk3 = 5'd10, WChk4 = 5'd11, WHead = 5'd12, WMem = 5'd13, WPad = 5'd14,
                         WEnd = 5'd15, WDone = 5'd16, WAssoc = 5'd17, WPlain = 5'd18, WPlainPad = 5'd19,
                         WChunk3 = 5'd20, WNext = 5'd21, WTab2 = 5'd22;
  localparam int WiW = $clog2(WinBeats + 1);
  logic [4:0]            w_state_q, w_after_q;   // w_after_q: where WHdr goes
  logic [15:0]           o_q;                    // the chunk's offset in the packet
  logic [15:0]           rem_q;                  // i_len - o_q
  logic [15:0]           wlen_q;                 // the wire length so far
  logic [WiW-1:0]        wi_q, wr_q;             // window beats asked, received
  logic [8*WinBytes-1:0] win_q;
  logic [8*HeadMax-1:0]  hb_q;                   // the bytes at o_q (hb_q[7:0] is byte o_q)
  logic [3:0]            reason_q;
  logic                  bad_q;
  logic [RamW-1:0]       wra;
  logic                  wrd_v_q;
  logic [DataWidth-1:0]  wrd_q;
  // the chunk's fields (hb_q holds them from WHdr to the next WHdr)
  logic [7:0]  c_type, c_flags;
  logic [15:0] c_len, c_s;
  logic [31:0] c_ppid, d_stag, d_len;
  logic [63:0] d_to;
  logic        c_t;
  function automatic logic [7:0] hbyte(input logic [8*HeadMax-1:0] v, input int i);
    hbyte = v[8*i +: 8];
  endfunction
  assign c_type = hbyte(hb_q, 0);
  assign c_flags = hbyte(hb_q, 1);
  assign c_len = {hbyte(hb_q, 2), hbyte(hb_q, 3)};
  assign c_s = {hbyte(hb_q, 8), hbyte(hb_q, 9)};
  assign c_ppid = {hbyte(hb_q, 12), hbyte(hb_q, 13), hbyte(hb_q, 14), hbyte(hb_q, 15)};
  assign c_t = hb_q[8*18 + 7];
  // NGD after the DDP header: at 32 (tagged) or 36 (untagged), little-endian
  assign d_stag = c_t ? hb_q[8*32 +: 32] : hb_q[8*36 +: 32];
  assign d_len = c_t ? hb_q[8*36 +: 32] : hb_q[8*40 +: 32];
  assign d_to = c_t ? hb_q[8*40 +: 64] : hb_q[8*44 +: 64];

  // WChunk: each condition registered on its own
  logic        k_desc_q, k_rem_lt4_q, k_rem_lt19_q, k_tail_q, k_frag_q, k_ppid_q, k_count_q, k_clen_lt4_q,
               k_clen_gt_rem_q, k_mark_q;
  logic [32:0] k_lhs_q;                          // the chunk length less 16 + 2 + H (the NGD LEN it implies)
  logic [16:0] pad_to_q;                         // the chunk length rounded up to 4
  logic [1:0]  pad_q;                            // its padding
  // WChunk2
  logic        k_len_ne_q;
  logic [16:0] wnext_q, span_q;
  logic [15:0] dnext_o_q;                        // the next chunk after a descriptor
  // WChunk3, WNext
  logic        k_long_q;
  logic [16:0] next_o_q;
  logic        at_end_q;
  logic [1:0]  zpad_q;                           // zeros after a chunk whose padding the slot lacks

  // the descriptor
  logic [15:0] d_stream_q;
  logic        d_stream_ovf_q;
  logic [31:0] dlen_q;
  logic [5:0]  dh_q;
  logic [63:0] dto_q, tbase_q, tlen_q, taddr_q;
  logic [32:0] sum_lo_q, reg_lo_q, off_lo_q, addr_lo_q;   // low halves with their carry (borrow)
  logic [32:0] sum_hi_q, reg_hi_q;                         // high halves with the carry out
  logic [31:0] off_hi_q;
  logic [63:0] addr_q;
  logic        to_lt_hi_q, to_eq_hi_q, to_lt_lo_q, end_lt_hi_q, end_eq_hi_q, end_lt_lo_q, to_lt_q;
  // WTab: the tables' answer judged, one registered verdict per check
  logic        t_dead_q, t_stag_bad_q, t_noread_q, t_pd_bad_q;
  logic        dlen_nz_q, zpad_nz_q, pad_nz_q;

  assign wra = RamW'((o_q >> Lb) + 16'(wi_q));
  always_ff @(posedge clk_i) begin
    wrd_q <= wram[wra];
  end

  logic [RunW-1:0] w_run;
  logic            w_push_run, w_push_mem;
  always_comb begin
    w_run = '0;
    w_push_run = 1'b0;
    w_push_mem = 1'b0;
    unique case (w_state_q)
      WCommon: begin  // the common header; the whole packet when it is not a gather packet
        w_run = {KSlot, 64'd0, i_gather && !i_err ? 16'd12 : i_len, 1'b0, 1'b0, 4'd0};
        w_push_run = 1'b1;
      end
      WPlain: begin
        w_run = {KSlot, 48'd0, o_q, 16'(span_q), 1'b0, 1'b0, 4'd0};
        w_push_run = 1'b1;
      end
      WPlainPad: begin
        w_run = {KZero, 64'd0, 16'(zpad_q), 1'b0, 1'b0, 4'd0};
        w_push_run = zpad_nz_q;
      end
      WHead: begin
        w_run = {KSlot, 48'd0, o_q, 16'd18 + 16'(dh_q), 1'b1, 1'b0, 4'd0};
        w_push_run = 1'b1;
      end
      WMem: begin
        w_run = {KMem, addr_q, dlen_q[15:0], 1'b0, 1'b0, 4'd0};
        w_push_run = dlen_nz_q;
        w_push_mem = dlen_nz_q;
      end
      WPad: begin
        w_run = {KZero, 64'd0, 16'(pad_q), 1'b0, 1'b0, 4'd0};
        w_push_run = pad_nz_q;
      end
      WEnd: begin
        w_run = {KEnd, 48'd0, wlen_q, i_socket, 1'b0, bad_q, reason_q};
        w_push_run = 1'b1;
      end
      default: ;
    endcase
  end
  logic w_go;   // the runs of this state can be pushed
  assign w_go = (!w_push_run || run_ready) && (!w_push_mem || mem_ready);
  assign run_push = w_push_run && w_go;
  assign mem_push = w_push_mem && w_go;
  assign run_in = w_run;

  // fail: the packet is bad for `why` (tx_gather_ref.hpp's order); the END run says so
  logic       fail;
  logic [3:0] why;   // 0: no failure
  assign fail = why != 4'd0;
  always_comb begin
    why = '0;
    unique case (w_state_q)
      WAssoc: begin
        if (i_len < 16'd12) why = RFraming;
        else if (i_assoc[7:4] != 4'd0 || !a_valid_i || a_socket_i != i_socket ||
                 {hbyte(hb_q, 0), hbyte(hb_q, 1)} != a_my_port_i ||
                 {hbyte(hb_q, 2), hbyte(hb_q, 3)} != a_their_port_i ||
                 {hbyte(hb_q, 4), hbyte(hb_q, 5), hbyte(hb_q, 6), hbyte(hb_q, 7)} != a_their_vtag_i) why = RAssoc;
      end
      WChunk3: begin
        if (k_rem_lt4_q) why = RFraming;
        else if (k_desc_q) begin
          if (k_rem_lt19_q || k_tail_q) why = RFraming;
          else if (k_frag_q) why = RFragment;
          else if (k_ppid_q) why = RPpid;
          else if (k_count_q) why = RStream;
          else if (k_len_ne_q) why = RLength;
          else if (k_long_q) why = RTooLong;
        end else begin
          if (k_clen_lt4_q || k_clen_gt_rem_q) why = RFraming;
          else if (k_mark_q) why = RMark;
          else if (k_long_q) why = RTooLong;
        end
      end
      WTab2: begin
        if (t_dead_q || d_stream_ovf_q) why = RStream;
        else if (dlen_nz_q && t_stag_bad_q) why = RStag;
        else if (dlen_nz_q && t_noread_q) why = RLocalRead;
        else if (dlen_nz_q && t_pd_bad_q) why = RPd;
      end
      WChk4: begin
        if (dlen_nz_q && (to_lt_q || sum_hi_q[32] || reg_hi_q[32] || end_lt_hi_q || (end_eq_hi_q && end_lt_lo_q)))
          why = RBounds;
      end
      default: ;
    endcase
  end

  // the table request
  logic        treq_q;
  logic [31:0] tstag_q;
  assign t_req_o = treq_q;
  assign t_stag_o = tstag_q;
  assign t_stream_o = d_stream_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      w_state_q <= WIdle;
      treq_q <= 1'b0;
      wrd_v_q <= 1'b0;
    end else begin
      treq_q <= 1'b0;
      wrd_v_q <= w_state_q == WWin;
      if (fail) begin
        w_state_q <= WEnd;
      end else begin
        unique case (w_state_q)
          WIdle: if (full_q) w_state_q <= i_gather && !i_err ? WWin : WCommon;
          WWin: if (wi_q == WiW'(WinBeats - 1)) w_state_q <= WWait;
          WWait: if (wr_q == WiW'(WinBeats)) w_state_q <= WHdr;
          WHdr: w_state_q <= w_after_q;
          WCommon: if (w_go) w_state_q <= i_gather && !i_err ? WAssoc : WEnd;
          WAssoc: w_state_q <= 16'd12 < i_len ? WWin : WEnd;
          WChunk: w_state_q <= WChunk2;
          WChunk2: w_state_q <= WChunk3;
          WChunk3: begin
            if (k_desc_q) begin
              w_state_q <= WTab;
              treq_q <= 1'b1;
            end else begin
              w_state_q <= WPlain;
            end
          end
          WPlain: if (w_go) w_state_q <= WPlainPad;
          WPlainPad: if (w_go) w_state_q <= WNext;
          WTab: if (t_rsp_i) w_state_q <= WTab2;
          WTab2: w_state_q <= WChk1;
          WChk1: w_state_q <= WChk2;
          WChk2: w_state_q <= WChk3;
          WChk3: w_state_q <= WChk4;
          WChk4: w_state_q <= WHead;
          WHead: if (w_go) w_state_q <= WMem;
          WMem: if (w_go) w_state_q <= WPad;
          WPad: if (w_go) w_state_q <= WNext;
          WNext: w_state_q <= at_end_q ? WEnd : WWin;
          WEnd: if (w_go) w_state_q <= WDone;
          WDone: if (free) w_state_q <= WIdle;
          default: w_state_q <= WIdle;
        endcase
      end
    end
  end

  always_ff @(posedge clk_i) begin
    unique case (w_state_q)
      WIdle: begin
        o_q <= '0;
        wlen_q <= i_gather && !i_err ? 16'd12 : i_len;
        bad_q <= i_err;
        reason_q <= i_err ? RReadError : 4'd0;
        wi_q <= '0;
        w_after_q <= WCommon;
      end
      WWin: wi_q <= wi_q + 1'b1;
      WAssoc: begin
        o_q <= 16'd12;
        wi_q <= '0;
        w_after_q <= WChunk;
      end
      WNext: begin
        o_q <= 16'(next_o_q);
        wi_q <= '0;
      end
      default: ;
    endcase
    if (w_state_q == WWin && wi_q == '0) wr_q <= '0;
    else if (wrd_v_q) wr_q <= wr_q + 1'b1;
    for (int k = 0; k < WinBeats; k++) begin
      if (wrd_v_q && wr_q == WiW'(k)) win_q[8*Bytes*k +: 8*Bytes] <= wrd_q;
    end
    if (w_state_q == WHdr) hb_q <= (8*HeadMax)'(win_q >> {o_q[Lb-1:0], 3'b000});
    rem_q <= i_len - o_q;
    if (fail) begin
      bad_q <= 1'b1;
      reason_q <= why;
    end
    if (w_state_q == WChunk) begin
      k_desc_q <= c_type == 8'd0 && (c_flags & Gather) != 8'd0;
      k_rem_lt4_q <= rem_q < 16'd4;
      k_rem_lt19_q <= rem_q < 16'd19;
      k_tail_q <= rem_q < (c_t ? 16'd48 : 16'd52);
      k_frag_q <= c_flags[2:0] != 3'b111;
      k_ppid_q <= c_ppid != 32'd16;
      k_count_q <= c_s >= a_count_i;
      k_clen_lt4_q <= c_len < 16'd4;
      k_clen_gt_rem_q <= c_len > rem_q;
      k_mark_q <= c_type != 8'd0 && (c_flags & Gather) != 8'd0;
      k_lhs_q <= 33'(c_len) - (c_t ? 33'd32 : 33'd36);
      pad_to_q <= (17'(c_len) + 17'd3) & ~17'd3;  // 17 bits: 65533..65535 round to 65536
      pad_q <= 2'(-c_len[1:0]);
      d_stream_q <= a_first_i + c_s;
      d_stream_ovf_q <= 17'(a_first_i) + 17'(c_s) > 17'hFFFF;  // past every DDP stream: not live
      tstag_q <= d_stag;
      dlen_q <= d_len;
      dh_q <= c_t ? 6'd14 : 6'd18;
      dto_q <= d_to;
      pad_nz_q <= c_len[1:0] != 2'd0;
    end
    if (w_state_q == WChunk2) begin
      k_len_ne_q <= k_lhs_q != {1'b0, dlen_q};
      dlen_nz_q <= dlen_q != '0;
      wnext_q <= 17'(wlen_q) + pad_to_q;
      span_q <= pad_to_q > 17'(rem_q) ? 17'(rem_q) : pad_to_q;
      dnext_o_q <= o_q + 16'd34 + 16'(dh_q);
    end
    if (w_state_q == WChunk3) begin
      next_o_q <= k_desc_q ? 17'(dnext_o_q) : 17'(o_q) + span_q;
      zpad_q <= 2'(pad_to_q - span_q);
      zpad_nz_q <= pad_to_q != span_q;
      if (!fail) wlen_q <= 16'(wnext_q);
    end
    if (w_state_q == WChunk2) k_long_q <= 17'(wlen_q) + pad_to_q > 17'(MaxPacketBytes);
    if (w_state_q == WPlain || w_state_q == WPad) at_end_q <= next_o_q >= 17'(i_len);
  end

  // the 64-bit steps, 32 bits a cycle: WChk1 the low halves of TO + LEN, base + length, TO - base and
  // the halves of TO < base; WChk2 their high halves; WChk3 the halves of base + length < TO + LEN and
  // the address's low half; WChk4 its high half (and the verdict)
  always_ff @(posedge clk_i) begin
    if (w_state_q == WTab && t_rsp_i) begin
      tbase_q <= t_base_to_i;
      tlen_q <= t_length_i;
      taddr_q <= t_addr_i;
      t_dead_q <= !t_live_i;
      t_stag_bad_q <= !t_valid_i || t_key_i != t_stag_o[7:0];
      t_noread_q <= !t_local_read_i;
      t_pd_bad_q <= t_pd_i != t_stream_pd_i || (t_bound_i && t_bound_stream_i != d_stream_q);
    end
    if (w_state_q == WChk1) begin
      sum_lo_q <= 33'(dto_q[31:0]) + 33'(dlen_q);
      reg_lo_q <= 33'(tbase_q[31:0]) + 33'(tlen_q[31:0]);
      off_lo_q <= 33'(dto_q[31:0]) - 33'(tbase_q[31:0]);
      to_lt_hi_q <= dto_q[63:32] < tbase_q[63:32];
      to_eq_hi_q <= dto_q[63:32] == tbase_q[63:32];
      to_lt_lo_q <= dto_q[31:0] < tbase_q[31:0];
    end
    if (w_state_q == WChk2) begin
      sum_hi_q <= 33'(dto_q[63:32]) + 33'(sum_lo_q[32]);
      reg_hi_q <= 33'(tbase_q[63:32]) + 33'(tlen_q[63:32]) + 33'(reg_lo_q[32]);
      off_hi_q <= dto_q[63:32] - tbase_q[63:32] - 32'(off_lo_q[32]);
      to_lt_q <= to_lt_hi_q || (to_eq_hi_q && to_lt_lo_q);
    end
    if (w_state_q == WChk3) begin
      end_lt_hi_q <= reg_hi_q[31:0] < sum_hi_q[31:0];
      end_eq_hi_q <= reg_hi_q[31:0] == sum_hi_q[31:0];
      end_lt_lo_q <= reg_lo_q[31:0] < sum_lo_q[31:0];
      addr_lo_q <= 33'(taddr_q[31:0]) + 33'(off_lo_q[31:0]);
    end
    if (w_state_q == WChk4) addr_q <= {taddr_q[63:32] + off_hi_q + 32'(addr_lo_q[32]), addr_lo_q[31:0]};
  end

  // ---- AR issuer --------------------------------------------------------------------------------------
  // A run's beats in bursts within a 4 KiB page: ACalc the beats to the page's end, ANb the burst, AChk
  // waits until the read FIFO has room for it (room only grows meanwhile), AGo issues it.
  localparam int PageBeats = 4096 / Bytes;
  localparam int PbW = $clog2(PageBeats);
  localparam logic [2:0] AIdle = 3'd0, ACalc = 3'd1, ANb = 3'd2, AChk = 3'd3, AGo = 3'd4;
  logic [2:0]     a_state_q;
  logic [63:12]   page_q;
  logic [PbW-1:0] bip_q;                // the next burst's first beat in its page
  logic [15:0]    ar_left_q, to_end_q, nb_q;
  logic           nb_last_q, nb_end_q;  // the burst is the run's last; it ends its page
  logic [RdW:0]   room_q;               // read FIFO beats not reserved
  logic           ar_hs, rd_pop;
  logic [16:0]    run_beats;
  assign run_beats = (17'(mem_out[16 +: Lb]) + 17'(mem_out[15:0]) + 17'(Bytes - 1)) >> Lb;
  assign m_axi_arvalid_o = a_state_q == AGo;
  assign m_axi_araddr_o = {page_q, bip_q, Lb'(0)};
  assign m_axi_arlen_o = 8'(nb_q - 16'd1);
  assign m_axi_arsize_o = 3'(Lb);
  assign m_axi_arburst_o = 2'b01;
  assign ar_hs = m_axi_arvalid_o && m_axi_arready_i;
  assign mem_pop = a_state_q == AIdle && mem_valid;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      a_state_q <= AIdle;
      room_q <= (RdW+1)'(ReadDepth);
    end else begin
      room_q <= room_q - (ar_hs ? (RdW+1)'(nb_q) : '0) + (RdW+1)'(rd_pop);
      unique case (a_state_q)
        AIdle: if (mem_pop) a_state_q <= ACalc;
        ACalc: a_state_q <= ANb;
        ANb: a_state_q <= AChk;
        AChk: if (32'(nb_q) <= 32'(room_q)) a_state_q <= AGo;
        default: if (ar_hs) a_state_q <= nb_last_q ? AIdle : ACalc;  // AGo
      endcase
    end
  end
  always_ff @(posedge clk_i) begin
    if (mem_pop) begin
      page_q <= mem_out[79:28];
      bip_q <= mem_out[16+11:16+Lb];
      ar_left_q <= 16'(run_beats);
    end
    if (a_state_q == ACalc) to_end_q <= 16'(PageBeats) - 16'(bip_q);
    if (a_state_q == ANb) begin
      nb_q <= to_end_q < ar_left_q ? to_end_q : ar_left_q;
      nb_last_q <= to_end_q >= ar_left_q;
      nb_end_q <= to_end_q <= ar_left_q;
    end
    if (ar_hs) begin
      ar_left_q <= ar_left_q - nb_q;
      if (nb_end_q) begin
        page_q <= page_q + 1'b1;
        bip_q <= '0;
      end else begin
        bip_q <= bip_q + PbW'(nb_q);
      end
    end
  end

  // the read FIFO: {error, data}
  logic                 rd_valid, rd_in_ready;
  logic [DataWidth:0]   rd_out;
  logic [RdW:0]         rd_count_unused;
  assign m_axi_rready_o = 1'b1;
  rnic_fifo #(.Width(DataWidth + 1), .Depth(ReadDepth)) u_rd (
    .clk_i, .rst_ni,
    .in_data_i({m_axi_rresp_i != 2'b00, m_axi_rdata_i}), .in_valid_i(m_axi_rvalid_i), .in_ready_o(rd_in_ready),
    .out_data_o(rd_out), .out_valid_o(rd_valid), .out_ready_i(rd_pop), .count_o(rd_count_unused)
  );

  // ---- Packer -----------------------------------------------------------------------------------------
  logic adv;                           // the whole packer pipeline moves
  // Q: the run taken from the FIFO, its first byte's place in its beat and s0 + len
  logic          q_v_q;
  logic [1:0]    q_kind_q;
  logic [Lb-1:0] q_s0_q;
  logic [16:0]   q_sum_q;
  logic [15:0]   q_off_q, q_len_q;
  logic          q_gclr_q, q_bad_q;
  logic [3:0]    q_reason_q;
  logic          q_take;               // P0 takes Q's run
  assign run_pop = adv && run_valid && (!q_v_q || q_take);
  always_ff @(posedge clk_i) begin
    if (!rst_ni) q_v_q <= 1'b0;
    else if (adv) q_v_q <= run_pop || (q_v_q && !q_take);
  end
  always_ff @(posedge clk_i) begin
    if (run_pop) begin
      q_kind_q <= run_out[RunW-1 -: 2];
      q_s0_q <= run_out[RunW-1 -: 2] == KZero ? Lb'(0) : run_out[22 +: Lb];
      q_sum_q <= (run_out[RunW-1 -: 2] == KZero ? 17'd0 : 17'(run_out[22 +: Lb])) + 17'(run_out[21:6]);
      q_off_q <= run_out[37:22];
      q_len_q <= run_out[21:6];
      q_gclr_q <= run_out[5];
      q_bad_q <= run_out[4];
      q_reason_q <= run_out[3:0];
    end
  end

  // P0: the run being cut into pieces (one per beat it spans)
  logic             p0_busy_q, p0_first_q, p0_second_q, p0_end_q;
  logic [1:0]       p0_kind_q;
  logic [16:0]      p0_left_q;          // pieces left
  logic [Lb-1:0]    p0_s0_q;            // the first piece's first byte
  logic [Lb:0]      p0_elast_q;         // the last piece's end
  logic [RamW-1:0]  p0_beat_q;          // SLOT: the packet RAM beat
  logic             p0_gfirst_q;        // the flags byte to clear is in the first piece, else the second
  logic [Lb-1:0]    p0_gpos_q;
  logic             p0_gclr_q, p0_bad_q;
  logic [3:0]       p0_reason_q;
  logic [15:0]      p0_len_q, p0_sock_q;
  logic [Lb-1:0]    f_q;                // bytes in the accumulator after the pieces issued so far
  logic [Lb:0]      pc_s, pc_e, pc_n;   // this piece: [s, e) of its beat, n = e - s
  logic             pc_v, pc_last, pc_mem;
  logic [Lb:0]      f_sum;
  always_comb begin
    pc_last = p0_left_q == 17'd1;
    pc_s = p0_first_q ? (Lb+1)'(p0_s0_q) : '0;
    pc_e = pc_last ? p0_elast_q : (Lb+1)'(Bytes);
    pc_n = pc_e - pc_s;
    pc_mem = p0_kind_q == KMem;
    pc_v = p0_busy_q && (p0_end_q || !pc_mem || rd_valid);
    f_sum = (Lb+1)'(f_q) + pc_n;
  end
  assign q_take = q_v_q && (!p0_busy_q || (pc_v && pc_last));
  assign rd_pop = adv && pc_v && pc_mem && !p0_end_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      p0_busy_q <= 1'b0;
      f_q <= '0;
    end else if (adv) begin
      if (pc_v) f_q <= p0_end_q ? '0 : f_sum[Lb-1:0];
      if (q_take) p0_busy_q <= 1'b1;
      else if (pc_v && pc_last) p0_busy_q <= 1'b0;
    end
  end
  always_ff @(posedge clk_i) begin
    if (adv) begin
      if (q_take) begin
        p0_kind_q <= q_kind_q;
        p0_end_q <= q_kind_q == KEnd;
        p0_first_q <= 1'b1;
        p0_second_q <= 1'b0;
        p0_left_q <= q_kind_q == KEnd ? 17'd1 : 17'(q_sum_q[16:Lb]) + 17'(q_sum_q[Lb-1:0] != '0);
        p0_s0_q <= q_s0_q;
        p0_elast_q <= q_sum_q[Lb-1:0] == '0 ? (Lb+1)'(Bytes) : (Lb+1)'(q_sum_q[Lb-1:0]);
        p0_beat_q <= RamW'(q_off_q[15:Lb]);
        p0_gfirst_q <= q_s0_q != Lb'(Bytes - 1);
        p0_gpos_q <= q_s0_q + 1'b1;
        p0_gclr_q <= q_gclr_q;
        p0_bad_q <= q_bad_q;
        p0_reason_q <= q_reason_q;
        p0_len_q <= q_off_q;
        p0_sock_q <= q_len_q;
      end else if (pc_v) begin
        p0_first_q <= 1'b0;
        p0_second_q <= p0_first_q;
        p0_left_q <= p0_left_q - 1'b1;
        p0_beat_q <= p0_beat_q + 1'b1;
      end
    end
  end

  // P1: the piece with its data
  logic                 p1_v_q, p1_end_q, p1_emit_q, p1_slot_q, p1_zero_q, p1_right_q;
  logic [Lb-1:0]        p1_mag_q;
  logic [Lb:0]          p1_f_q, p1_fn_q;   // the piece's bytes go to [f, f + n) of the 2-beat window
  logic [Bytes-1:0]     p1_gmask_q;        // the byte whose bit 7 (flag G) is cleared
  logic [DataWidth-1:0] p1_ram_q, p1_mem_q;
  logic                 p1_err_q, p1_bad_q;
  logic [3:0]           p1_reason_q;
  logic [15:0]          p1_len_q, p1_sock_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) p1_v_q <= 1'b0;
    else if (adv) p1_v_q <= pc_v;
  end
  always_ff @(posedge clk_i) begin
    if (adv) begin
      p1_end_q <= p0_end_q;
      p1_bad_q <= p0_bad_q;
      p1_reason_q <= p0_reason_q;
      p1_len_q <= p0_len_q;
      p1_sock_q <= p0_sock_q;
      p1_f_q <= (Lb+1)'(f_q);
      p1_fn_q <= f_sum;
      p1_emit_q <= !p0_end_q && f_sum[Lb];
      p1_right_q <= pc_s > (Lb+1)'(f_q);
      p1_mag_q <= Lb'(pc_s > (Lb+1)'(f_q) ? pc_s - (Lb+1)'(f_q) : (Lb+1)'(f_q) - pc_s);
      p1_slot_q <= p0_kind_q == KSlot;
      p1_zero_q <= p0_kind_q == KZero;
      for (int i = 0; i < Bytes; i++)
        p1_gmask_q[i] <= p0_gclr_q && (p0_gfirst_q ? p0_first_q : p0_second_q) && p0_gpos_q == Lb'(i);
      p1_ram_q <= pram[p0_beat_q];
      p1_mem_q <= rd_out[DataWidth-1:0];
      p1_err_q <= pc_mem && !p0_end_q && rd_out[DataWidth];
    end
  end

  // P2: the piece's bytes at their place in a 2-beat window, masked
  logic                   p2_v_q, p2_end_q, p2_emit_q, p2_bad_q, p2_err_q;
  logic [3:0]             p2_reason_q;
  logic [15:0]            p2_len_q, p2_sock_q;
  logic [Lb:0]            p2_fend_q;
  logic [2*DataWidth-1:0] p2_ins_q;
  logic [DataWidth-1:0]   p1_data;
  logic [2*DataWidth-1:0] p1_wide, p1_shift;
  logic [2*Bytes-1:0]     p1_mask;
  always_comb begin
    p1_data = p1_zero_q ? '0 : (p1_slot_q ? p1_ram_q : p1_mem_q);
    for (int i = 0; i < Bytes; i++) p1_data[8*i + 7] = p1_data[8*i + 7] && !p1_gmask_q[i];
    p1_wide = {DataWidth'(0), p1_data};
    p1_shift = p1_right_q ? p1_wide >> {p1_mag_q, 3'b000} : p1_wide << {p1_mag_q, 3'b000};
    for (int i = 0; i < 2 * Bytes; i++)
      p1_mask[i] = (Lb+2)'(i) >= (Lb+2)'(p1_f_q) && (Lb+2)'(i) < (Lb+2)'(p1_fn_q);
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) p2_v_q <= 1'b0;
    else if (adv) p2_v_q <= p1_v_q;
  end
  always_ff @(posedge clk_i) begin
    if (adv) begin
      for (int i = 0; i < 2 * Bytes; i++) p2_ins_q[8*i +: 8] <= p1_mask[i] && !p1_end_q ? p1_shift[8*i +: 8] : 8'd0;
      p2_end_q <= p1_end_q;
      p2_emit_q <= p1_emit_q;
      p2_bad_q <= p1_bad_q;
      p2_err_q <= p1_v_q && p1_err_q;
      p2_reason_q <= p1_reason_q;
      p2_len_q <= p1_len_q;
      p2_sock_q <= p1_sock_q;
      p2_fend_q <= p1_f_q;
    end
  end

  // P3: the accumulator; H: the beat emitted, held until the next one or the packet's end
  logic [2*DataWidth-1:0] acc_q, merged;
  logic                   rerr_q;         // a read of this packet was answered with an error
  logic                   h_v_q, h_last_q;
  logic [DataWidth-1:0]   h_data_q;
  logic [Bytes-1:0]       h_keep_q;
  logic [36:0]            h_info_q;
  logic                   out_ready, new_beat, push;
  logic [DataWidth-1:0]   nb_data;
  logic [Bytes-1:0]       nb_keep, fend_keep;
  logic                   nb_last;
  assign merged = acc_q | p2_ins_q;
  always_comb begin
    for (int i = 0; i < Bytes; i++) fend_keep[i] = (Lb+1)'(i) < p2_fend_q;
  end
  // a beat comes out of P3: a full one, or the END's partial last one
  assign new_beat = adv && p2_v_q && (p2_end_q ? p2_fend_q != '0 : p2_emit_q);
  assign nb_data = merged[DataWidth-1:0];
  assign nb_last = p2_end_q;
  assign nb_keep = p2_end_q ? fend_keep : '1;
  // H goes out when a beat follows it, or at its packet's end
  logic       end_now, need_send, h_send, end_whole;
  logic       p_bad;
  logic [3:0] p_reason;
  logic [36:0] p_info;
  assign end_now = adv && p2_v_q && p2_end_q;
  assign end_whole = end_now && p2_fend_q == '0;   // the packet ended on a whole beat: H is its last
  assign need_send = h_v_q && (h_last_q || (p2_v_q && (p2_end_q || p2_emit_q)));
  assign adv = !need_send || out_ready;
  assign h_send = h_v_q && (h_last_q || new_beat || end_now);
  assign push = h_send && out_ready;
  assign p_bad = p2_bad_q || rerr_q || p2_err_q;
  // A read error comes first: its chunk passed every check and lies before any chunk the walker failed.
  assign p_reason = (rerr_q || p2_err_q) ? RReadError : p2_reason_q;
  assign p_info = {p_bad, p_bad ? p_reason : 4'd0, p2_sock_q, p2_len_q};
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      acc_q <= '0;
      rerr_q <= 1'b0;
      h_v_q <= 1'b0;
    end else begin
      if (adv && p2_v_q) begin
        if (p2_end_q) begin
          acc_q <= '0;
          rerr_q <= 1'b0;
        end else begin
          acc_q <= p2_emit_q ? {DataWidth'(0), merged[2*DataWidth-1:DataWidth]} : merged;
          rerr_q <= rerr_q || p2_err_q;
        end
      end
      if (new_beat) h_v_q <= 1'b1;
      else if (push) h_v_q <= 1'b0;
    end
  end
  always_ff @(posedge clk_i) begin
    if (new_beat) begin
      h_data_q <= nb_data;
      h_keep_q <= nb_keep;
      h_last_q <= nb_last;
    end
    if (end_now) h_info_q <= p_info;
  end
  // The packet RAMs are free once P0 takes the packet's END: every read of them has been made.
  assign free = adv && q_take && q_kind_q == KEnd;

  localparam int OutW = 37 + 1 + Bytes + DataWidth;
  logic [OutW-1:0] out_data;
  rnic_slice #(.Width(OutW)) u_out (
    .clk_i, .rst_ni,
    .in_data_i({end_whole ? p_info : h_info_q, h_last_q || end_whole, h_keep_q, h_data_q}),
    .in_valid_i(h_send), .in_ready_o(out_ready),
    .out_data_o(out_data), .out_valid_o(m_valid_o), .out_ready_i(m_ready_i)
  );
  assign m_info_o = out_data[OutW-1 -: 37];
  assign m_last_o = out_data[Bytes+DataWidth];
  assign m_keep_o = out_data[DataWidth +: Bytes];
  assign m_data_o = out_data[DataWidth-1:0];
  assign busy_o = full_q || q_v_q || p0_busy_q || p1_v_q || p2_v_q || h_v_q || a_state_q != AIdle;

  logic unused;
  assign unused = ^{run_count_unused, mem_count_unused, rd_count_unused, m_axi_rlast_i, push,
                    run_beats[16], wnext_q[16], run_out[85:38]};

  // ---- Assertions --------------------------------------------------------------------------------------
  `RNIC_ASSERT(a_rd_room, clk_i, rst_ni, !m_axi_rvalid_i || rd_in_ready)
  // The input contract: a packet of at least the common header (rnic_net_tx skips shorter LENs).
  `RNIC_ASSERT(a_len_min, clk_i, rst_ni, !full_q || i_len >= 16'd12)
  // What leaves is never longer than MaxPacketBytes.
  `RNIC_ASSERT(a_wire_max, clk_i, rst_ni, !(m_valid_o && m_last_o) || 32'(m_info_o[15:0]) <= 32'(MaxPacketBytes))
  `RNIC_ASSERT(a_ar_4k, clk_i, rst_ni,
               !m_axi_arvalid_o || 32'(m_axi_araddr_o[11:0]) + (32'(m_axi_arlen_o) + 32'd1) * 32'(Bytes) <= 32'd4096)
  `RNIC_ASSERT_HOLD(a_ar_hold, clk_i, rst_ni, m_axi_arvalid_o, m_axi_arready_i, {m_axi_araddr_o, m_axi_arlen_o})
endmodule
