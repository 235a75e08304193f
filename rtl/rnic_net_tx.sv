// SPDX-License-Identifier: Apache-2.0
`include "rnic_assert.svh"
`include "rnic_hw.svh"
// The transmit packet ring reader (issue 14, docs/network.md "Rings in host memory"): the host writes
// SCTP packets into a ring of 2^log2_slots_i slots of 2^slot_log2_i bytes at base_i and rings prod_i;
// each slot opens with its NTXD descriptor (LEN, SOCKET; hw.def) and the packet follows at slot + 16
// (NET_SLOT_DESC_BYTES). Each packet leaves on m_axis_net (one SCTP packet per AXI-Stream packet, the
// UDP payload as VNx's S_AXIS_sk2nl takes it, tdest = SOCKET on every beat) with its CRC32c computed
// here over the packet with bytes 8..11 as zero and written there least significant byte first
// (RFC 9260 6.8 and appendix A), whatever the host left in the field.
//
//   AR issuer: per slot one single-beat read of the descriptor beat (D), then, once its LEN is known
//              and good, the rest of [slot, slot + 16 + LEN) rounded out to beats (B) in INCR bursts
//              of at most 16 beats that never cross a 16-beat boundary of the slot. D of the next
//              slot is issued as soon as the last B burst is, if the buffer has room for a maximum
//              packet and fewer than PendDepth packets wait. A LEN outside 12..MaxPacketBytes or
//              larger than the slot less 16 reads nothing past the descriptor beat: bad_o, cons on.
//   R0:        the R beat registered (rready is always 1: space is reserved before D is issued).
//   R side:    in order, the D beat (LEN check, counts) and the B beats: output beat k is slot bytes
//              16 + Bytes*k.. : the upper Bytes-16 bytes of slot beat k and the lower 16 of beat k+1
//              (a fixed 16-byte shift; at 128 bits the slot beat k+1 itself). When the packet ends in
//              the upper part of its last slot beat, one flush beat follows. cons_o advances at the
//              slot's last beat. An R beat with RRESP not OKAY marks the packet bad (rresp_err_o).
//   Slot FIFO: the slot packet's beats (BufBeats, space reserved before its D read) and, at its last
//              beat, its info {read error, GATHER, ASSOC, SOCKET, LEN} (NTXD).
//   Gather:    rnic_net_gather (issue 35, docs/transmit.md): a packet with NTXD GATHER has its
//              descriptor chunks checked and expanded from registered memory (its own AXI4 read port
//              g_*, the tables a_* / t_*); any other packet passes as it is. A packet it marks bad
//              (gather_bad_o, with the reason on g_reason_o) is skipped below.
//   W:         the gather's beats into the buffer (flat `logic [DataWidth-1:0] mem [BufBeats]`, block
//              RAM; a packet starts only with room for a maximum one) and into rnic_sctp_crc; at the last
//              beat the packet's info {bad, socket, length, beats} into the info FIFO; its CRC comes 10
//              cycles later (512 bits) into the CRC FIFO.
//   D/C/R/O:   the head packet with its CRC: a bad one is skipped (its beats never read), a good one
//              read from the RAM one beat per cycle (registered read port), the CRC put in beat 0, and
//              sent through an output register slice (rnic_slice; backpressure at any time).
// enable_i low: no new slot is started; a started slot is read to its end and its packet sent.
// enable_i low -> high: cons_o (and the issuer's slot index) restart at 0, once the reads of the slot
// started before are done. busy_o: a slot started and not all its AR issued, or R beats outstanding.
// Reset (rst_ni low, synchronous): back to idle, everything in flight forgotten (the memory's
// outstanding R beats, if any, are taken and ignored while in reset: rready stays 1).
module rnic_net_tx #(
  parameter int DataWidth      = 512,   // 128..512, a power of two
  parameter int MaxPacketBytes = RNIC_NET_MAX_PACKET_BYTES,
  parameter int BufBeats       = 512    // packet buffer, beats (power of two, >= two maximum packets)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   enable_i,
  input  logic [63:0]            base_i,        // 4 KiB aligned: bits 11:0 ignored
  input  logic [4:0]             log2_slots_i,
  input  logic [4:0]             slot_log2_i,
  input  logic [31:0]            prod_i,
  output logic [31:0]            cons_o,
  output logic                   busy_o,
  // AXI4 master (read only: AW/W tied off)
  output logic [63:0]            m_axi_awaddr_o,
  output logic [7:0]             m_axi_awlen_o,
  output logic [2:0]             m_axi_awsize_o,
  output logic [1:0]             m_axi_awburst_o,
  output logic                   m_axi_awvalid_o,
  input  logic                   m_axi_awready_i,
  output logic [DataWidth-1:0]   m_axi_wdata_o,
  output logic [DataWidth/8-1:0] m_axi_wstrb_o,
  output logic                   m_axi_wlast_o,
  output logic                   m_axi_wvalid_o,
  input  logic                   m_axi_wready_i,
  input  logic [1:0]             m_axi_bresp_i,
  input  logic                   m_axi_bvalid_i,
  output logic                   m_axi_bready_o,
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
  // The network port (VNx S_AXIS_sk2nl)
  output logic                   m_axis_net_tvalid_o,
  input  logic                   m_axis_net_tready_i,
  output logic [DataWidth-1:0]   m_axis_net_tdata_o,
  output logic [DataWidth/8-1:0] m_axis_net_tkeep_o,
  output logic                   m_axis_net_tlast_o,
  output logic [15:0]            m_axis_net_tdest_o,
  output logic                   bad_o,        // one-cycle pulse per slot skipped for its LEN
  output logic                   rresp_err_o,  // one-cycle pulse per R beat with RRESP not OKAY
  // The gather (rnic_net_gather): its association entry, tables and read port, and its verdicts
  output logic [3:0]             a_idx_o,
  input  logic                   a_valid_i,
  input  logic [15:0]            a_socket_i,
  input  logic [15:0]            a_my_port_i,
  input  logic [15:0]            a_their_port_i,
  input  logic [31:0]            a_their_vtag_i,
  input  logic [15:0]            a_first_i,
  input  logic [15:0]            a_count_i,
  output logic                   t_req_o,
  output logic [31:0]            t_stag_o,
  output logic [15:0]            t_stream_o,
  input  logic                   t_rsp_i,
  input  logic                   t_valid_i,
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
  output logic [63:0]            g_araddr_o,
  output logic [7:0]             g_arlen_o,
  output logic [2:0]             g_arsize_o,
  output logic [1:0]             g_arburst_o,
  output logic                   g_arvalid_o,
  input  logic                   g_arready_i,
  input  logic [DataWidth-1:0]   g_rdata_i,
  input  logic [1:0]             g_rresp_i,
  input  logic                   g_rlast_i,
  input  logic                   g_rvalid_i,
  output logic                   g_rready_o,
  output logic                   gather_bad_o,    // one-cycle pulse per packet skipped after its read: the
                                                  // gather's verdicts and slot read errors
  // The gather's packets, for NET_TX_FAULT, the counters and the fences (rnic_net_side):
  output logic                   g_drop_o,        // one-cycle pulse: a GATHER packet dropped whole
  output logic [3:0]             g_reason_o,      //   its reason (NET_TX_DROP_*); with gather_bad_o too
  output logic [7:0]             g_assoc_o,       //   its NTXD ASSOC
  output logic                   g_sent_o,        // one-cycle pulse: a GATHER packet passed the gather good
  output logic                   g_in_o,          // one-cycle pulse: a GATHER packet's last beat entered the gather
  output logic                   g_out_o          // one-cycle pulse: a GATHER packet's last beat left it (every
                                                  //   read of its descriptors finished)
);
  localparam int Bytes = DataWidth / 8;
  localparam int Lb = $clog2(Bytes);
  localparam int Desc = RNIC_NET_SLOT_DESC_BYTES;                  // 16
  localparam int MaxBeats = (MaxPacketBytes + Bytes - 1) / Bytes;   // output beats of a packet, at most
  localparam int BW = $clog2(MaxBeats + 2);                         // beat counts of a packet
  localparam int AddrW = $clog2(BufBeats);
  localparam int PtrW = AddrW + 1;
  localparam int PendDepth = 32;                                    // packets accepted, not yet sent
  localparam int PendW = $clog2(PendDepth + 1);
  localparam int InfoW = 1 + 16 + 16 + BW;                          // {bad, socket, len, beats}
  localparam int SlotInfoW = 42;                                    // {err, gather, assoc, socket, len}
  localparam int OutW = 16 + 1 + Bytes + DataWidth;                 // {tdest, tlast, tkeep, tdata}

  initial begin
    if (DataWidth < 128 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0)
      $fatal(1, "rnic_net_tx: DataWidth must be 128, 256 or 512");
    if (MaxPacketBytes < 12 || MaxPacketBytes + 2 * Bytes > 65535)
      $fatal(1, "rnic_net_tx: MaxPacketBytes must be 12..65535 - 2 * DataWidth / 8");
    if ((BufBeats & (BufBeats - 1)) != 0 || BufBeats < 2 * MaxBeats)
      $fatal(1, "rnic_net_tx: BufBeats must be a power of two holding two maximum packets");
  end

  // AW/W tied off: this unit only reads.
  assign m_axi_awaddr_o = '0;
  assign m_axi_awlen_o = '0;
  assign m_axi_awsize_o = 3'(Lb);
  assign m_axi_awburst_o = 2'b01;
  assign m_axi_awvalid_o = 1'b0;
  assign m_axi_wdata_o = '0;
  assign m_axi_wstrb_o = '0;
  assign m_axi_wlast_o = 1'b0;
  assign m_axi_wvalid_o = 1'b0;
  assign m_axi_bready_o = 1'b1;
  assign m_axi_arsize_o = 3'(Lb);
  assign m_axi_arburst_o = 2'b01;  // INCR
  assign m_axi_rready_o = 1'b1;

  // ---- configuration: the largest good LEN (slot bytes - 16, at most MaxPacketBytes) --------------
  logic [15:0] lim_q;
  always_ff @(posedge clk_i) begin
    if (slot_log2_i >= 5'd16) lim_q <= 16'(MaxPacketBytes);
    else if (slot_log2_i < 5'd5) lim_q <= 16'd0;
    else if ((17'd1 << slot_log2_i) - 17'(Desc) > 17'(MaxPacketBytes)) lim_q <= 16'(MaxPacketBytes);
    else lim_q <= 16'((17'd1 << slot_log2_i) - 17'(Desc));
  end

  // ---- the R side's events for the issuer (defined below) ------------------------------------------
  logic          ev_v_q, ev_good_q;
  logic [BW-1:0] ev_out_q, ev_slot_q;
  logic [PtrW-1:0] free_q;     // slot FIFO beats taken by the gather (free running)
  logic          pop;          // the gather takes a packet
  logic          r0_v_q, rs_body_q;

  // ---- AR issuer -----------------------------------------------------------------------------------
  localparam logic [1:0] AIdle = 2'd0, ADesc = 2'd1, AWait = 2'd2, ABody = 2'd3;
  logic [1:0]       a_state_q;
  logic [31:0]      idx_q;          // the next slot to start (free running)
  logic [31:0]      cons_q;
  logic [63:12]     slot_q;         // the started slot's address, 4 KiB units
  logic [63:Lb]     addr_q;         // the next body burst's address, beats
  logic [4:0]       len_q;          // its beats (1..16)
  logic [BW-1:0]    left_q;         // body beats not yet requested
  logic [PtrW-1:0]  resv_q;         // buffer beats reserved by accepted packets
  logic [PendW-1:0] pend_q;
  logic [7:0]       ar_out_q;       // bursts whose last beat has not come
  logic             en_q, restart_q;
  logic             start, ar_hs, space_ok, pend_ok, restart_now;
  logic [PtrW-1:0]  used;
  logic [15:0]      idx_mask, idx_m;
  logic [51:0]      slot_off;
  logic [BW-1:0]    left_next;

  assign used = resv_q - free_q;
  assign space_ok = used <= PtrW'(BufBeats - MaxBeats);
  assign pend_ok = pend_q < PendW'(PendDepth);
  // Not in the cycle enable_i rises (the restart is decided then).
  assign start = a_state_q == AIdle && enable_i && en_q && !restart_q && idx_q != prod_i && space_ok && pend_ok;
  assign idx_mask = ~(16'hFFFF << log2_slots_i);
  assign idx_m = idx_q[15:0] & idx_mask;
  assign slot_off = 52'(idx_m) << (slot_log2_i - 5'd12);
  assign ar_hs = m_axi_arvalid_o && m_axi_arready_i;
  // The restart after enable_i rose: once the slot started before is read to its end.
  assign restart_now = restart_q && a_state_q == AIdle && ar_out_q == '0 && !r0_v_q && !rs_body_q;
  assign left_next = left_q - BW'(len_q);

  assign m_axi_arvalid_o = a_state_q == ADesc || a_state_q == ABody;
  assign m_axi_araddr_o = a_state_q == ADesc ? {slot_q, 12'd0} : {addr_q, Lb'(0)};
  assign m_axi_arlen_o = a_state_q == ADesc ? 8'd0 : {3'd0, len_q - 5'd1};

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      a_state_q <= AIdle;
      idx_q <= '0;
      resv_q <= '0;
      pend_q <= '0;
      en_q <= 1'b0;
      restart_q <= 1'b0;
    end else begin
      en_q <= enable_i;
      pend_q <= pend_q + PendW'(a_state_q == AWait && ev_v_q && ev_good_q) - PendW'(pop);
      if (enable_i && !en_q) restart_q <= 1'b1;
      else if (restart_now) begin
        restart_q <= 1'b0;
        idx_q <= '0;
      end
      unique case (a_state_q)
        AIdle: if (start) a_state_q <= ADesc;
        ADesc: if (ar_hs) a_state_q <= AWait;
        AWait: begin
          if (ev_v_q) begin
            if (ev_good_q) resv_q <= resv_q + PtrW'(ev_out_q);
            if (!ev_good_q || ev_slot_q == BW'(1)) begin
              idx_q <= idx_q + 1'b1;
              a_state_q <= AIdle;
            end else begin
              a_state_q <= ABody;
            end
          end
        end
        default: begin  // ABody
          if (ar_hs && left_q == BW'(len_q)) begin
            idx_q <= idx_q + 1'b1;
            a_state_q <= AIdle;
          end
        end
      endcase
    end
  end
  always_ff @(posedge clk_i) begin
    if (start) slot_q <= base_i[63:12] + slot_off;
    if (a_state_q == AWait) begin
      addr_q <= {slot_q, (12 - Lb)'(0)} + 1'b1;                       // slot beat 1
      left_q <= ev_slot_q - 1'b1;
      len_q <= ev_slot_q - 1'b1 > BW'(15) ? 5'd15 : 5'(ev_slot_q - 1'b1);  // up to slot beat 15
    end else if (a_state_q == ABody && ar_hs) begin
      addr_q <= addr_q + (64 - Lb)'(len_q);
      left_q <= left_next;
      len_q <= left_next > BW'(16) ? 5'd16 : 5'(left_next);
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) ar_out_q <= '0;
    else ar_out_q <= ar_out_q + 8'(ar_hs) - 8'(m_axi_rvalid_i && m_axi_rlast_i);
  end
  assign busy_o = a_state_q != AIdle || ar_out_q != '0 || r0_v_q || rs_body_q;
  assign cons_o = cons_q;

  // ---- R0: the R beat registered -------------------------------------------------------------------
  logic [DataWidth-1:0] r0_data_q;
  logic                 r0_err_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) r0_v_q <= 1'b0;
    else r0_v_q <= m_axi_rvalid_i;
  end
  always_ff @(posedge clk_i) begin
    if (m_axi_rvalid_i) begin
      r0_data_q <= m_axi_rdata_i;
      r0_err_q <= m_axi_rresp_i != 2'b00;
    end
  end

  // ---- R side: descriptor and body beats, in order -------------------------------------------------
  logic [15:0]     d_len, d_sock;
  logic            d_ok, d_flush, d_one;
  logic [Lb-1:0]   d_rem;
  logic [BW-1:0]   d_out, d_slot;
  assign d_len = r0_data_q[RNIC_NTXD_LEN_LSB +: RNIC_NTXD_LEN_BITS];
  assign d_sock = r0_data_q[RNIC_NTXD_SOCKET_LSB +: RNIC_NTXD_SOCKET_BITS];
  logic       d_gather;
  logic [7:0] d_assoc;
  assign d_gather = r0_data_q[RNIC_NTXD_FLAGS_GATHER_LSB];
  assign d_assoc = r0_data_q[RNIC_NTXD_ASSOC_LSB +: RNIC_NTXD_ASSOC_BITS];
  assign d_ok = !r0_err_q && d_len >= 16'd12 && d_len <= lim_q;
  assign d_rem = d_len[Lb-1:0];
  assign d_out = BW'(d_len[15:Lb]) + BW'(d_rem != '0);
  // The packet ends in the upper Bytes-16 bytes of its last slot beat: no further slot beat.
  assign d_flush = Bytes > Desc && d_rem != '0 && 32'(d_rem) <= 32'(Bytes - Desc);
  assign d_slot = d_out + BW'(!d_flush);
  assign d_one = 32'(d_len) <= 32'(Bytes - Desc);  // the whole packet in the descriptor beat

  logic [BW-1:0]    rs_left_q;    // slot beats still to come, this one included
  logic             rs_last_q;    // the next body beat is the slot's last
  logic             pk_err_q, pk_flush_q, flush_q;
  logic [15:0]      pk_len_q, pk_sock_q;
  logic             pk_gather_q;
  logic [7:0]       pk_assoc_q;
  logic             bad_q, rerr_q;
  logic             desc_beat, body_beat;
  assign desc_beat = r0_v_q && !rs_body_q;
  assign body_beat = r0_v_q && rs_body_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rs_body_q <= 1'b0;
      flush_q <= 1'b0;
      ev_v_q <= 1'b0;
      bad_q <= 1'b0;
      rerr_q <= 1'b0;
      cons_q <= '0;
    end else begin
      ev_v_q <= desc_beat;
      bad_q <= desc_beat && !r0_err_q && !d_ok;
      rerr_q <= r0_v_q && r0_err_q;
      flush_q <= (desc_beat && d_ok && d_one) || (body_beat && rs_last_q && pk_flush_q);
      if (restart_now) cons_q <= '0;
      else if ((desc_beat && (!d_ok || d_one)) || (body_beat && rs_last_q)) cons_q <= cons_q + 1'b1;
      if (desc_beat && d_ok && !d_one) rs_body_q <= 1'b1;
      else if (body_beat && rs_last_q) rs_body_q <= 1'b0;
    end
  end
  always_ff @(posedge clk_i) begin
    if (desc_beat) begin
      ev_good_q <= d_ok;
      ev_out_q <= d_out;
      ev_slot_q <= d_slot;
      pk_err_q <= 1'b0;
      pk_flush_q <= d_flush;
      pk_len_q <= d_len;
      pk_sock_q <= d_sock;
      pk_gather_q <= d_gather;
      pk_assoc_q <= d_assoc;
      rs_left_q <= d_slot - 1'b1;
      rs_last_q <= d_slot == BW'(2);
    end else if (body_beat) begin
      pk_err_q <= pk_err_q || r0_err_q;
      rs_left_q <= rs_left_q - 1'b1;
      rs_last_q <= rs_left_q == BW'(2);
    end
  end
  assign bad_o = bad_q;
  assign rresp_err_o = rerr_q;

  // The output beat: the 16-byte shift.
  logic [DataWidth-1:0] body_data, flush_data;
  if (Bytes > Desc) begin : g_carry
    logic [DataWidth-1:8*Desc] carry_q;
    always_ff @(posedge clk_i) begin
      if (r0_v_q) carry_q <= r0_data_q[DataWidth-1:8*Desc];
    end
    assign body_data = {r0_data_q[8*Desc-1:0], carry_q};
    assign flush_data = {(8 * Desc)'(0), carry_q};
  end else begin : g_no_carry
    assign body_data = r0_data_q;
    assign flush_data = '0;
  end

  // ---- The slot FIFO: the slot packet's beats and its info --------------------------------------------
  logic                 wb_v_q, wb_last_q;
  logic [DataWidth-1:0] wb_data_q;
  logic [SlotInfoW-1:0] wb_info_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) wb_v_q <= 1'b0;
    else wb_v_q <= body_beat || flush_q;
  end
  always_ff @(posedge clk_i) begin
    wb_last_q <= flush_q || (rs_last_q && !pk_flush_q);
    wb_data_q <= flush_q ? flush_data : body_data;
    wb_info_q <= {pk_err_q || (body_beat && r0_err_q), pk_gather_q, pk_assoc_q, pk_sock_q, pk_len_q};
  end
  logic                 sl_valid, sl_ready_unused, si_valid, si_ready_unused, g_s_ready, g_take;
  logic [DataWidth:0]   sl_out;
  logic [SlotInfoW-1:0] si_out;
  logic [AddrW:0]       sl_count_unused;
  logic [$clog2(PendDepth):0] si_count_unused;
  rnic_fifo #(.Width(DataWidth + 1), .Depth(BufBeats)) u_slot (
    .clk_i, .rst_ni,
    .in_data_i({wb_last_q, wb_data_q}), .in_valid_i(wb_v_q), .in_ready_o(sl_ready_unused),
    .out_data_o(sl_out), .out_valid_o(sl_valid), .out_ready_i(g_take), .count_o(sl_count_unused)
  );
  rnic_fifo #(.Width(SlotInfoW), .Depth(PendDepth)) u_slot_info (
    .clk_i, .rst_ni,
    .in_data_i(wb_info_q), .in_valid_i(wb_v_q && wb_last_q), .in_ready_o(si_ready_unused),
    .out_data_o(si_out), .out_valid_o(si_valid), .out_ready_i(pop), .count_o(si_count_unused)
  );
  // A packet leaves the FIFO once it is whole there (its info is pushed with its last beat): a GATHER
  // packet into the gather, any other straight to W, in ring order: a direct packet waits while a
  // gather packet before it is still in the gather (g_cnt_q).
  logic                 head_gather, d_valid, d_ready, d_take, g_feed;
  logic [1:0]           g_cnt_q;           // gather packets fed whose last beat W has not taken
  logic [Bytes-1:0]     d_keep;
  assign head_gather = si_out[SlotInfoW-2];
  assign g_feed = sl_valid && si_valid && head_gather && g_s_ready && g_cnt_q != 2'd3;
  assign d_valid = sl_valid && si_valid && !head_gather && g_cnt_q == 2'd0;
  assign d_take = d_valid && d_ready;
  assign g_take = g_feed || d_take;
  assign pop = g_take && sl_out[DataWidth];
  always_comb begin
    for (int i = 0; i < Bytes; i++)
      d_keep[i] = !sl_out[DataWidth] || si_out[Lb-1:0] == '0 || Lb'(i) < si_out[Lb-1:0];
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) free_q <= '0;
    else if (g_take) free_q <= free_q + 1'b1;
  end

  // ---- The gather ------------------------------------------------------------------------------------
  logic                 gm_valid, gm_ready, gm_last;
  logic [DataWidth-1:0] gm_data;
  logic [Bytes-1:0]     gm_keep;
  logic [36:0]          gm_info;
  logic                 g_busy_unused;
  rnic_net_gather #(.DataWidth(DataWidth), .MaxPacketBytes(MaxPacketBytes)) u_gather (
    .clk_i, .rst_ni,
    .s_valid_i(sl_valid && si_valid && head_gather && g_cnt_q != 2'd3), .s_ready_o(g_s_ready),
    .s_data_i(sl_out[DataWidth-1:0]),
    .s_last_i(sl_out[DataWidth]), .s_info_i(si_out),
    .m_valid_o(gm_valid), .m_ready_i(gm_ready), .m_data_o(gm_data), .m_keep_o(gm_keep), .m_last_o(gm_last),
    .m_info_o(gm_info),
    .a_idx_o, .a_valid_i, .a_socket_i, .a_my_port_i, .a_their_port_i, .a_their_vtag_i, .a_first_i, .a_count_i,
    .t_req_o, .t_stag_o, .t_stream_o, .t_rsp_i, .t_valid_i, .t_key_i, .t_local_read_i, .t_pd_i, .t_bound_i,
    .t_bound_stream_i, .t_base_to_i, .t_length_i, .t_addr_i, .t_stream_pd_i, .t_live_i,
    .m_axi_araddr_o(g_araddr_o), .m_axi_arlen_o(g_arlen_o), .m_axi_arsize_o(g_arsize_o),
    .m_axi_arburst_o(g_arburst_o), .m_axi_arvalid_o(g_arvalid_o), .m_axi_arready_i(g_arready_i),
    .m_axi_rdata_i(g_rdata_i), .m_axi_rresp_i(g_rresp_i), .m_axi_rlast_i(g_rlast_i), .m_axi_rvalid_i(g_rvalid_i),
    .m_axi_rready_o(g_rready_o),
    .busy_o(g_busy_unused)
  );

  // ---- W: the gather's beats into the buffer and the CRC --------------------------------------------
  // A packet starts only when the buffer has room for a maximum packet and the info FIFO for its info.
  logic                 w_in_pkt_q, w_take;
  logic                 ww_v_q, ww_last_q;
  logic [DataWidth-1:0] ww_data_q;
  logic [Bytes-1:0]     ww_keep_q;
  logic [InfoW-1:0]     ww_info_q;
  logic [BW-1:0]        w_beats_q;
  logic [PtrW-1:0]      wr_q, sfree_q;    // the buffer's write pointer; every beat before sfree_q is free
  logic                 info_has_room;
  // (one beat and one info may still be in the W register: hence the 1 of margin)
  // W takes the gather's output while a gather packet is in it, else the direct packets.
  logic w_ready, w_valid, w_last, w_from_g;
  logic [DataWidth-1:0] w_data;
  logic [Bytes-1:0]     w_keep;
  logic [36:0]          w_info;
  assign w_ready = w_in_pkt_q || (PtrW'(wr_q - sfree_q) <= PtrW'(BufBeats - MaxBeats - 1) && info_has_room);
  assign w_from_g = g_cnt_q != 2'd0;
  assign gm_ready = w_from_g && w_ready;
  assign d_ready = !w_from_g && w_ready;
  assign w_valid = w_from_g ? gm_valid : d_valid;
  assign w_last = w_from_g ? gm_last : sl_out[DataWidth];
  assign w_data = w_from_g ? gm_data : sl_out[DataWidth-1:0];
  assign w_keep = w_from_g ? gm_keep : d_keep;
  // the direct packet's info as the gather gives it: {bad (a read error), reason 12, socket, length}
  assign w_info = w_from_g ? gm_info : {si_out[SlotInfoW-1], si_out[SlotInfoW-1] ? 4'(RNIC_NET_TX_DROP_READ_ERROR) : 4'd0, si_out[31:0]};
  assign w_take = w_valid && w_ready;
  logic [3:0] ww_reason_q;
  // The NTXD ASSOC of each packet in the gather, in order (at most 3: g_cnt_q).
  logic       ga_ready_unused, ga_valid_unused;
  logic [7:0] ga_out;
  logic [2:0] ga_count_unused;
  rnic_fifo #(.Width(8), .Depth(4)) u_gassoc (
    .clk_i, .rst_ni,
    .in_data_i(si_out[39:32]), .in_valid_i(g_feed && sl_out[DataWidth]), .in_ready_o(ga_ready_unused),
    .out_data_o(ga_out), .out_valid_o(ga_valid_unused), .out_ready_i(gm_valid && gm_ready && gm_last),
    .count_o(ga_count_unused));
  assign g_in_o = g_feed && sl_out[DataWidth];
  assign g_out_o = gm_valid && gm_ready && gm_last;
  logic       gw_q;   // the W register holds a gather packet's beat
  logic [7:0] gw_assoc_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) gw_q <= 1'b0;
    else if (w_take) gw_q <= w_from_g;
  end
  always_ff @(posedge clk_i) begin
    if (w_take && w_from_g && w_last) gw_assoc_q <= ga_out;
  end
  assign g_drop_o = gw_q && ww_v_q && ww_last_q && ww_info_q[InfoW-1];
  assign g_sent_o = gw_q && ww_v_q && ww_last_q && !ww_info_q[InfoW-1];
  assign g_reason_o = ww_reason_q;
  assign g_assoc_o = gw_assoc_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) g_cnt_q <= '0;
    else g_cnt_q <= g_cnt_q + 2'(g_feed && sl_out[DataWidth]) - 2'(gm_valid && gm_ready && gm_last);
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      w_in_pkt_q <= 1'b0;
      w_beats_q <= '0;
      ww_v_q <= 1'b0;
    end else begin
      ww_v_q <= w_take;
      if (w_take) begin
        w_in_pkt_q <= !w_last;
        w_beats_q <= w_last ? '0 : w_beats_q + 1'b1;
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (w_take) begin
      ww_last_q <= w_last;
      ww_data_q <= w_data;
      ww_keep_q <= w_keep;
      ww_info_q <= {w_info[36], w_info[31:16], w_info[15:0], w_beats_q + 1'b1};
    end
  end
  assign gather_bad_o = ww_v_q && ww_last_q && ww_info_q[InfoW-1];
  always_ff @(posedge clk_i) begin
    if (w_take) ww_reason_q <= w_info[35:32];
  end

  logic [DataWidth-1:0] mem [BufBeats];
  always_ff @(posedge clk_i) begin
    if (ww_v_q) mem[wr_q[AddrW-1:0]] <= ww_data_q;
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) wr_q <= '0;
    else if (ww_v_q) wr_q <= wr_q + 1'b1;
  end

  logic        crc_v, crc_ok_unused;
  logic [31:0] crc;
  rnic_sctp_crc #(.DataWidth(DataWidth)) u_crc (
    .clk_i,
    .rst_ni,
    .in_valid_i (ww_v_q),
    .in_data_i  (ww_data_q),
    .in_keep_i  (ww_keep_q),
    .in_last_i  (ww_last_q),
    .out_valid_o(crc_v),
    .out_ok_o   (crc_ok_unused),
    .out_crc_o  (crc)
  );

  logic             info_valid, info_ready, crcf_valid, crcf_ready;
  logic [InfoW-1:0] info;
  logic [31:0]      h_crc;
  logic [$clog2(PendDepth):0] info_count, crc_count;
  assign info_has_room = info_count < ($clog2(PendDepth)+1)'(PendDepth - 1);
  rnic_fifo #(.Width(InfoW), .Depth(PendDepth)) u_info (
    .clk_i,
    .rst_ni,
    .in_data_i  (ww_info_q),
    .in_valid_i (ww_v_q && ww_last_q),
    .in_ready_o (info_ready),
    .out_data_o (info),
    .out_valid_o(info_valid),
    .out_ready_i(hpop),
    .count_o    (info_count)
  );
  rnic_fifo #(.Width(32), .Depth(PendDepth)) u_crcf (
    .clk_i,
    .rst_ni,
    .in_data_i  (crc),
    .in_valid_i (crc_v),
    .in_ready_o (crcf_ready),
    .out_data_o (h_crc),
    .out_valid_o(crcf_valid),
    .out_ready_i(hpop),
    .count_o    (crc_count)
  );

  // ---- D: the head packet --------------------------------------------------------------------------
  logic             h_bad, load, issue, advance, cur_v_q, cur_at_last_q, cur_first_q, hpop;
  logic [15:0]      h_sock, h_len;
  logic [BW-1:0]    h_beats, cur_cnt_q;
  logic [PtrW-1:0]  rd_q, cur_ptr_q;
  logic [Bytes-1:0] h_keep, cur_keep_q;
  logic [15:0]      cur_sock_q;
  logic [31:0]      cur_crc_q;
  assign h_bad = info[InfoW-1];
  assign h_sock = info[BW+16 +: 16];
  assign h_len = info[BW +: 16];
  assign h_beats = info[BW-1:0];
  always_comb begin
    for (int i = 0; i < Bytes; i++) h_keep[i] = h_len[Lb-1:0] == '0 || Lb'(i) < h_len[Lb-1:0];
  end
  assign load = info_valid && crcf_valid && !h_bad && (!cur_v_q || (issue && cur_at_last_q));
  assign hpop = info_valid && crcf_valid && (h_bad || load);

  logic r_valid_q, out_ready;
  assign advance = !r_valid_q || out_ready;
  assign issue = cur_v_q && advance;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rd_q <= '0;
      cur_v_q <= 1'b0;
      sfree_q <= '0;
    end else begin
      if (hpop) rd_q <= rd_q + PtrW'(h_beats);
      if (load) cur_v_q <= 1'b1;
      else if (issue && cur_at_last_q) cur_v_q <= 1'b0;
      sfree_q <= cur_v_q ? cur_ptr_q : rd_q;
    end
  end
  always_ff @(posedge clk_i) begin
    if (load) begin
      cur_ptr_q <= rd_q;
      cur_cnt_q <= h_beats - 1'b1;
      cur_at_last_q <= h_beats == BW'(1);
      cur_first_q <= 1'b1;
      cur_keep_q <= h_keep;
      cur_sock_q <= h_sock;
      cur_crc_q <= h_crc;
    end else if (issue) begin
      cur_ptr_q <= cur_ptr_q + 1'b1;
      cur_cnt_q <= cur_cnt_q - 1'b1;
      cur_at_last_q <= cur_cnt_q == BW'(1);
      cur_first_q <= 1'b0;
    end
  end

  // ---- R: the RAM's registered read port -----------------------------------------------------------
  logic [DataWidth-1:0] r_mem_q;
  logic                 r_last_q, r_first_q;
  logic [Bytes-1:0]     r_keep_q;
  logic [15:0]          r_sock_q;
  logic [31:0]          r_crc_q;
  always_ff @(posedge clk_i) begin
    if (advance) r_mem_q <= mem[cur_ptr_q[AddrW-1:0]];
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) r_valid_q <= 1'b0;
    else if (advance) r_valid_q <= cur_v_q;
  end
  always_ff @(posedge clk_i) begin
    if (advance) begin
      r_last_q <= cur_at_last_q;
      r_first_q <= cur_first_q;
      r_keep_q <= cur_at_last_q ? cur_keep_q : '1;
      r_sock_q <= cur_sock_q;
      r_crc_q <= cur_crc_q;
    end
  end

  // ---- O: the CRC32c into bytes 8..11 of beat 0 (least significant byte first), the output slice ---
  logic [DataWidth-1:0] o_data;
  assign o_data = r_first_q ? {r_mem_q[DataWidth-1:96], r_crc_q, r_mem_q[63:0]} : r_mem_q;
  logic [OutW-1:0] out_data;
  rnic_slice #(.Width(OutW)) u_out (
    .clk_i,
    .rst_ni,
    .in_data_i  ({r_sock_q, r_last_q, r_keep_q, o_data}),
    .in_valid_i (r_valid_q),
    .in_ready_o (out_ready),
    .out_data_o (out_data),
    .out_valid_o(m_axis_net_tvalid_o),
    .out_ready_i(m_axis_net_tready_i)
  );
  assign m_axis_net_tdest_o = out_data[OutW-1 -: 16];
  assign m_axis_net_tlast_o = out_data[Bytes+DataWidth];
  assign m_axis_net_tkeep_o = out_data[DataWidth +: Bytes];
  assign m_axis_net_tdata_o = out_data[DataWidth-1:0];

  logic unused;  // the CRC check verdict (the host's field is overwritten), the FIFOs' fill levels,
                 // the head's length above its last beat's byte count
  assign unused = ^{crc_ok_unused, info_count, crc_count, h_len[15:Lb], sl_count_unused, si_count_unused, g_busy_unused,
                    // a reader: the write channel is tied off; the ring base's bits 11:0 are zero
                    m_axi_awready_i, m_axi_wready_i, m_axi_bresp_i, m_axi_bvalid_i, base_i[11:0]};

  // ---- Assertions (rtl/rnic_assert.svh) ------------------------------------------------------------
  // The pending count bounds both FIFOs; the buffer never overruns the oldest unsent beat; a CRC
  // never comes before its packet's info; the read side reads only written beats; the AR handshake
  // holds (AXI A3.2.1); a burst never crosses a 16-beat boundary.
  `RNIC_ASSERT(a_info_room, clk_i, rst_ni, !(ww_v_q && ww_last_q) || info_ready)
  // The gather never gives W a packet longer than the buffer's reservation.
  `RNIC_ASSERT(a_w_max, clk_i, rst_ni, !w_take || 32'(w_beats_q) < 32'(MaxBeats))
  `RNIC_ASSERT(a_slot_room, clk_i, rst_ni, !wb_v_q || sl_ready_unused)
  `RNIC_ASSERT(a_slot_info_room, clk_i, rst_ni, !(wb_v_q && wb_last_q) || si_ready_unused)
  `RNIC_ASSERT(a_crc_room, clk_i, rst_ni, !crc_v || crcf_ready)
  `RNIC_ASSERT(a_pend_bound, clk_i, rst_ni, pend_q <= PendW'(PendDepth))
  `RNIC_ASSERT(a_no_overrun, clk_i, rst_ni, !ww_v_q || PtrW'(wr_q - sfree_q) < PtrW'(BufBeats))
  `RNIC_ASSERT(a_crc_after_info, clk_i, rst_ni, !crcf_valid || info_valid)
  `RNIC_ASSERT(a_read_written, clk_i, rst_ni, !cur_v_q || PtrW'(wr_q - cur_ptr_q) - 1'b1 < PtrW'(BufBeats))
  `RNIC_ASSERT_HOLD(a_ar_hold, clk_i, rst_ni, m_axi_arvalid_o, m_axi_arready_i,
                    {m_axi_araddr_o, m_axi_arlen_o})
  `RNIC_ASSERT(a_ar_16, clk_i, rst_ni,
               !m_axi_arvalid_o || 32'(m_axi_araddr_o[Lb+3:Lb]) + 32'(m_axi_arlen_o) < 32'd16)
endmodule
