// SPDX-License-Identifier: Apache-2.0
`include "rnic_defs.svh"
// rnic_kernel: the DDP (RFC 5041) receive pipeline as a Vitis free-running RTL kernel.
//   parse -> lookup -> validate -> place -> deliver   (docs/rtl-architecture.md)
// This module only wires the stages together. Its parameter defaults are the card's default build,
// hw.def's DEFAULT_* and MAX_SEG_BYTES rows, written here as literals (IP packagers read top-level
// parameters as text); Magic.ContractConstantsHaveOneHome checks that the two agree.
module rnic_kernel #(
  parameter int          DATA_WIDTH    = 512,    // AXI-Stream and AXI data width: 64..512 bits
  parameter int          STAG_ENTRIES  = 4096,   // STag table entries (<= 65536)
  parameter int          NUM_STREAMS   = 4096,   // stream table entries (<= 65536)
  parameter int          NUM_QNS       = 4,      // untagged queues per stream (power of two)
  parameter int          SSN_WINDOW    = 64,     // DDP-SSN reorder window (power of two)
  parameter int          MAX_SEG_BYTES = 16384,  // longest DDP segment kept (header + payload)
  parameter int          RQ_PREFETCH   = 32,     // receive descriptors cached per queue (power of two)
  parameter logic [31:0] BUILD_ID      = 32'h0,  // reported in REG_BUILD_ID
  parameter int          NET           = 0       // 1: the network side (docs/network.md), DATA_WIDTH >= 128
) (
  input  logic                    ap_clk,
  input  logic                    ap_rst_n,
  // AXI4-Lite control (MMIO)
  input  logic [15:0]             s_axi_control_awaddr,
  input  logic                    s_axi_control_awvalid,
  output logic                    s_axi_control_awready,
  input  logic [31:0]             s_axi_control_wdata,
  input  logic [3:0]              s_axi_control_wstrb,
  input  logic                    s_axi_control_wvalid,
  output logic                    s_axi_control_wready,
  output logic [1:0]              s_axi_control_bresp,
  output logic                    s_axi_control_bvalid,
  input  logic                    s_axi_control_bready,
  input  logic [15:0]             s_axi_control_araddr,
  input  logic                    s_axi_control_arvalid,
  output logic                    s_axi_control_arready,
  output logic [31:0]             s_axi_control_rdata,
  output logic [1:0]              s_axi_control_rresp,
  output logic                    s_axi_control_rvalid,
  input  logic                    s_axi_control_rready,
  // AXI4 master to host memory
  output logic [63:0]             m_axi_gmem_awaddr,
  output logic [7:0]              m_axi_gmem_awlen,
  output logic [2:0]              m_axi_gmem_awsize,
  output logic [1:0]              m_axi_gmem_awburst,
  output logic                    m_axi_gmem_awvalid,
  input  logic                    m_axi_gmem_awready,
  output logic [DATA_WIDTH-1:0]   m_axi_gmem_wdata,
  output logic [DATA_WIDTH/8-1:0] m_axi_gmem_wstrb,
  output logic                    m_axi_gmem_wlast,
  output logic                    m_axi_gmem_wvalid,
  input  logic                    m_axi_gmem_wready,
  input  logic [1:0]              m_axi_gmem_bresp,
  input  logic                    m_axi_gmem_bvalid,
  output logic                    m_axi_gmem_bready,
  output logic [63:0]             m_axi_gmem_araddr,
  output logic [7:0]              m_axi_gmem_arlen,
  output logic [2:0]              m_axi_gmem_arsize,
  output logic [1:0]              m_axi_gmem_arburst,
  output logic                    m_axi_gmem_arvalid,
  input  logic                    m_axi_gmem_arready,
  input  logic [DATA_WIDTH-1:0]   m_axi_gmem_rdata,
  input  logic [1:0]              m_axi_gmem_rresp,
  input  logic                    m_axi_gmem_rlast,
  input  logic                    m_axi_gmem_rvalid,
  output logic                    m_axi_gmem_rready,
  // AXI-Stream DDP segment ingress: one DDP segment per packet; tuser = {net, DDP-SSN, stream}
  // (net = 1: from the network front end, docs/network.md)
  input  logic [DATA_WIDTH-1:0]   s_axis_rx_tdata,
  input  logic [DATA_WIDTH/8-1:0] s_axis_rx_tkeep,
  input  logic                    s_axis_rx_tlast,
  input  logic                    s_axis_rx_tvalid,
  output logic                    s_axis_rx_tready,
  input  logic [32:0]             s_axis_rx_tuser,
  // AXI-Stream (no tready: always taken) to the network front end: the fate of every segment with
  // net = 1, in order, tdata = rnic_fate_e (taken / duplicate / declined)
  output logic                    m_axis_fate_tvalid,
  output logic [7:0]              m_axis_fate_tdata,
  // The network side (NET = 1; with NET = 0 these are idle: tready 0, tvalid 0, no AXI request).
  // s_axis_net: one SCTP packet per AXI-Stream packet, tuser = {their UDP port, my UDP port, their IPv4,
  // my IPv4} (VNx networklayer M_AXIS_nl2sk); tdest is not used.
  input  logic [DATA_WIDTH-1:0]   s_axis_net_tdata,
  input  logic [DATA_WIDTH/8-1:0] s_axis_net_tkeep,
  input  logic                    s_axis_net_tlast,
  input  logic                    s_axis_net_tvalid,
  output logic                    s_axis_net_tready,
  input  logic [95:0]             s_axis_net_tuser,
  input  logic [15:0]             s_axis_net_tdest,
  // m_axis_net: SCTP packets from the transmit ring, tdest = the VNx socket (S_AXIS_sk2nl)
  output logic [DATA_WIDTH-1:0]   m_axis_net_tdata,
  output logic [DATA_WIDTH/8-1:0] m_axis_net_tkeep,
  output logic                    m_axis_net_tlast,
  output logic                    m_axis_net_tvalid,
  input  logic                    m_axis_net_tready,
  output logic [15:0]             m_axis_net_tdest,
  // m_axi_net: the receive and transmit packet rings in host memory
  output logic [63:0]             m_axi_net_awaddr,
  output logic [7:0]              m_axi_net_awlen,
  output logic [2:0]              m_axi_net_awsize,
  output logic [1:0]              m_axi_net_awburst,
  output logic                    m_axi_net_awvalid,
  input  logic                    m_axi_net_awready,
  output logic [DATA_WIDTH-1:0]   m_axi_net_wdata,
  output logic [DATA_WIDTH/8-1:0] m_axi_net_wstrb,
  output logic                    m_axi_net_wlast,
  output logic                    m_axi_net_wvalid,
  input  logic                    m_axi_net_wready,
  input  logic [1:0]              m_axi_net_bresp,
  input  logic                    m_axi_net_bvalid,
  output logic                    m_axi_net_bready,
  output logic [63:0]             m_axi_net_araddr,
  output logic [7:0]              m_axi_net_arlen,
  output logic [2:0]              m_axi_net_arsize,
  output logic [1:0]              m_axi_net_arburst,
  output logic                    m_axi_net_arvalid,
  input  logic                    m_axi_net_arready,
  input  logic [DATA_WIDTH-1:0]   m_axi_net_rdata,
  input  logic [1:0]              m_axi_net_rresp,
  input  logic                    m_axi_net_rlast,
  input  logic                    m_axi_net_rvalid,
  output logic                    m_axi_net_rready
);
  localparam int Bytes = DATA_WIDTH / 8;
  localparam int RxFifoBeats = 2 ** $clog2(2 * ((MAX_SEG_BYTES + Bytes - 1) / Bytes + 1));

  initial begin
    if (DATA_WIDTH < 64 || DATA_WIDTH > 512 || (DATA_WIDTH & (DATA_WIDTH - 1)) != 0)
      $fatal(1, "rnic_kernel: DATA_WIDTH must be 64, 128, 256 or 512");
    if (STAG_ENTRIES < 2 || STAG_ENTRIES > 65536) $fatal(1, "rnic_kernel: STAG_ENTRIES must be 2..65536");
    if (NUM_STREAMS < 1 || NUM_STREAMS > 65536) $fatal(1, "rnic_kernel: NUM_STREAMS must be 1..65536");
    if (NUM_QNS < 1 || NUM_QNS > 256 || (NUM_QNS & (NUM_QNS - 1)) != 0)
      $fatal(1, "rnic_kernel: NUM_QNS must be a power of two in 1..256");
    if (SSN_WINDOW < 2 || SSN_WINDOW > 4096 || (SSN_WINDOW & (SSN_WINDOW - 1)) != 0)
      $fatal(1, "rnic_kernel: SSN_WINDOW must be a power of two in 2..4096");
    if (MAX_SEG_BYTES < 64 || MAX_SEG_BYTES > 65535) $fatal(1, "rnic_kernel: MAX_SEG_BYTES must be 64..65535");
    if (NET != 0 && NET != 1) $fatal(1, "rnic_kernel: NET must be 0 or 1");
    if (NET == 1 && DATA_WIDTH < 128) $fatal(1, "rnic_kernel: NET = 1 needs DATA_WIDTH >= 128");
  end

  logic clk, rst_n;
  assign clk = ap_clk;
  assign rst_n = ap_rst_n;

  assign m_axi_gmem_awsize = 3'($clog2(Bytes));
  assign m_axi_gmem_awburst = 2'b01;  // INCR
  assign m_axi_gmem_arsize = 3'($clog2(Bytes));
  assign m_axi_gmem_arburst = 2'b01;

  // ---- segments in: s_axis_rx, and with NET = 1 the network side's (rnic_net_side) -----------------
  logic [DATA_WIDTH-1:0] in_data;
  logic [Bytes-1:0] in_keep;
  logic in_last, in_valid, in_ready;
  logic [32:0] in_user;
  logic ext_wr, ext_rd, ext_whit, ext_rhit;
  logic [7:0] ext_waddr, ext_raddr;
  logic [31:0] ext_wdata, ext_rdata;
  logic [3:0] ext_wstrb;
  logic fate_valid;
  rnic_fate_e fate;
  // the transmit gather (NET = 1): lookup's table port, the read port beside lookup's, the fence
  logic tx_req, tx_rsp, tx_valid, tx_local_read, tx_bound, tx_stream_live;
  logic [31:0] tx_stag;
  logic [15:0] tx_stream, tx_pd, tx_bound_stream, tx_stream_pd;
  logic [7:0] tx_key;
  logic [63:0] tx_base_to, tx_length, tx_addr;
  logic [63:0] l_araddr;
  logic [7:0] l_arlen;
  logic l_arvalid, l_arready, l_rlast, l_rvalid, l_rready;
  logic [DATA_WIDTH-1:0] l_rdata;
  logic [1:0] l_rresp;
  logic dlv_fence_done, fence_done;

  if (NET == 1) begin : g_net
    logic net_error;  // the fate FIFO overflowed: impossible by construction (waveforms)
    logic [63:0] g_araddr;  // the gather's reads
    logic [7:0] g_arlen;
    logic g_arvalid, g_arready, g_rlast, g_rvalid, g_rready;
    logic [DATA_WIDTH-1:0] g_rdata;
    logic [1:0] g_rresp;
    rnic_net_side #(.DataWidth(DATA_WIDTH), .NumStreams(NUM_STREAMS)) u_net (
      .clk_i(clk), .rst_ni(rst_n),
      .s_axis_net_tvalid_i(s_axis_net_tvalid), .s_axis_net_tready_o(s_axis_net_tready),
      .s_axis_net_tdata_i(s_axis_net_tdata), .s_axis_net_tkeep_i(s_axis_net_tkeep),
      .s_axis_net_tlast_i(s_axis_net_tlast), .s_axis_net_tuser_i(s_axis_net_tuser),
      .m_axis_net_tvalid_o(m_axis_net_tvalid), .m_axis_net_tready_i(m_axis_net_tready),
      .m_axis_net_tdata_o(m_axis_net_tdata), .m_axis_net_tkeep_o(m_axis_net_tkeep),
      .m_axis_net_tlast_o(m_axis_net_tlast), .m_axis_net_tdest_o(m_axis_net_tdest),
      .s_rx_tvalid_i(s_axis_rx_tvalid), .s_rx_tready_o(s_axis_rx_tready), .s_rx_tdata_i(s_axis_rx_tdata),
      .s_rx_tkeep_i(s_axis_rx_tkeep), .s_rx_tlast_i(s_axis_rx_tlast), .s_rx_tuser_i(s_axis_rx_tuser),
      .m_seg_tvalid_o(in_valid), .m_seg_tready_i(in_ready), .m_seg_tdata_o(in_data), .m_seg_tkeep_o(in_keep),
      .m_seg_tlast_o(in_last), .m_seg_tuser_o(in_user),
      .fate_valid_i(fate_valid), .fate_i(fate),
      .tx_req_o(tx_req), .tx_stag_o(tx_stag), .tx_stream_o(tx_stream), .tx_rsp_i(tx_rsp), .tx_valid_i(tx_valid),
      .tx_key_i(tx_key), .tx_local_read_i(tx_local_read), .tx_pd_i(tx_pd), .tx_bound_i(tx_bound),
      .tx_bound_stream_i(tx_bound_stream), .tx_base_to_i(tx_base_to), .tx_length_i(tx_length),
      .tx_addr_i(tx_addr), .tx_stream_pd_i(tx_stream_pd), .tx_stream_live_i(tx_stream_live),
      .m_axi_g_araddr_o(g_araddr), .m_axi_g_arlen_o(g_arlen), .m_axi_g_arvalid_o(g_arvalid),
      .m_axi_g_arready_i(g_arready), .m_axi_g_rdata_i(g_rdata), .m_axi_g_rresp_i(g_rresp),
      .m_axi_g_rlast_i(g_rlast), .m_axi_g_rvalid_i(g_rvalid), .m_axi_g_rready_o(g_rready),
      .fence_i(dlv_fence_done), .fence_o(fence_done),
      .reg_wr_i(ext_wr), .reg_waddr_i(ext_waddr), .reg_wdata_i(ext_wdata), .reg_wstrb_i(ext_wstrb),
      .reg_whit_o(ext_whit), .reg_rd_i(ext_rd), .reg_raddr_i(ext_raddr), .reg_rdata_o(ext_rdata),
      .reg_rhit_o(ext_rhit),
      .m_axi_awaddr_o(m_axi_net_awaddr), .m_axi_awlen_o(m_axi_net_awlen), .m_axi_awsize_o(m_axi_net_awsize),
      .m_axi_awburst_o(m_axi_net_awburst), .m_axi_awvalid_o(m_axi_net_awvalid),
      .m_axi_awready_i(m_axi_net_awready), .m_axi_wdata_o(m_axi_net_wdata), .m_axi_wstrb_o(m_axi_net_wstrb),
      .m_axi_wlast_o(m_axi_net_wlast), .m_axi_wvalid_o(m_axi_net_wvalid), .m_axi_wready_i(m_axi_net_wready),
      .m_axi_bresp_i(m_axi_net_bresp), .m_axi_bvalid_i(m_axi_net_bvalid), .m_axi_bready_o(m_axi_net_bready),
      .m_axi_araddr_o(m_axi_net_araddr), .m_axi_arlen_o(m_axi_net_arlen), .m_axi_arsize_o(m_axi_net_arsize),
      .m_axi_arburst_o(m_axi_net_arburst), .m_axi_arvalid_o(m_axi_net_arvalid),
      .m_axi_arready_i(m_axi_net_arready), .m_axi_rdata_i(m_axi_net_rdata), .m_axi_rresp_i(m_axi_net_rresp),
      .m_axi_rlast_i(m_axi_net_rlast), .m_axi_rvalid_i(m_axi_net_rvalid), .m_axi_rready_o(m_axi_net_rready),
      .error_o(net_error));
    // m_axi_gmem's reads: lookup's descriptor fetches and the gather's payload reads (rnic_axi_rd_mux)
    logic rd_error;  // an R beat with no burst outstanding: a slave bug (waveforms)
    rnic_axi_rd_mux #(.DataWidth(DATA_WIDTH)) u_rd_mux (
      .clk_i(clk), .rst_ni(rst_n),
      .s0_araddr_i(l_araddr), .s0_arlen_i(l_arlen), .s0_arvalid_i(l_arvalid), .s0_arready_o(l_arready),
      .s0_rdata_o(l_rdata), .s0_rresp_o(l_rresp), .s0_rlast_o(l_rlast), .s0_rvalid_o(l_rvalid),
      .s0_rready_i(l_rready),
      .s1_araddr_i(g_araddr), .s1_arlen_i(g_arlen), .s1_arvalid_i(g_arvalid), .s1_arready_o(g_arready),
      .s1_rdata_o(g_rdata), .s1_rresp_o(g_rresp), .s1_rlast_o(g_rlast), .s1_rvalid_o(g_rvalid),
      .s1_rready_i(g_rready),
      .m_araddr_o(m_axi_gmem_araddr), .m_arlen_o(m_axi_gmem_arlen), .m_arvalid_o(m_axi_gmem_arvalid),
      .m_arready_i(m_axi_gmem_arready), .m_rdata_i(m_axi_gmem_rdata), .m_rresp_i(m_axi_gmem_rresp),
      .m_rlast_i(m_axi_gmem_rlast), .m_rvalid_i(m_axi_gmem_rvalid), .m_rready_o(m_axi_gmem_rready),
      .error_o(rd_error));
    logic unused_net;
    assign unused_net = ^{net_error, s_axis_net_tdest, rd_error};
  end else begin : g_no_net
    // No gather: lookup owns m_axi_gmem's reads, deliver's fence goes straight to regs.
    assign m_axi_gmem_araddr = l_araddr;
    assign m_axi_gmem_arlen = l_arlen;
    assign m_axi_gmem_arvalid = l_arvalid;
    assign l_arready = m_axi_gmem_arready;
    assign l_rdata = m_axi_gmem_rdata;
    assign l_rresp = m_axi_gmem_rresp;
    assign l_rlast = m_axi_gmem_rlast;
    assign l_rvalid = m_axi_gmem_rvalid;
    assign m_axi_gmem_rready = l_rready;
    assign fence_done = dlv_fence_done;
    assign tx_req = 1'b0;
    assign tx_stag = '0;
    assign tx_stream = '0;
    logic unused_tx;
    assign unused_tx = ^{tx_rsp, tx_valid, tx_key, tx_local_read, tx_pd, tx_bound, tx_bound_stream, tx_base_to,
                         tx_length, tx_addr, tx_stream_pd, tx_stream_live};
    // The DDP pipeline alone: s_axis_rx straight to parse, the network ports idle, the register
    // window answers SLVERR.
    assign in_data = s_axis_rx_tdata;
    assign in_keep = s_axis_rx_tkeep;
    assign in_last = s_axis_rx_tlast;
    assign in_valid = s_axis_rx_tvalid;
    assign s_axis_rx_tready = in_ready;
    assign in_user = s_axis_rx_tuser;
    assign ext_whit = 1'b0;
    assign ext_rhit = 1'b0;
    assign ext_rdata = '0;
    assign s_axis_net_tready = 1'b0;
    assign m_axis_net_tdata = '0;
    assign m_axis_net_tkeep = '0;
    assign m_axis_net_tlast = 1'b0;
    assign m_axis_net_tvalid = 1'b0;
    assign m_axis_net_tdest = '0;
    assign m_axi_net_awaddr = '0;
    assign m_axi_net_awlen = '0;
    assign m_axi_net_awsize = 3'($clog2(Bytes));
    assign m_axi_net_awburst = 2'b01;
    assign m_axi_net_awvalid = 1'b0;
    assign m_axi_net_wdata = '0;
    assign m_axi_net_wstrb = '0;
    assign m_axi_net_wlast = 1'b0;
    assign m_axi_net_wvalid = 1'b0;
    assign m_axi_net_bready = 1'b1;
    assign m_axi_net_araddr = '0;
    assign m_axi_net_arlen = '0;
    assign m_axi_net_arsize = 3'($clog2(Bytes));
    assign m_axi_net_arburst = 2'b01;
    assign m_axi_net_arvalid = 1'b0;
    assign m_axi_net_rready = 1'b1;
    logic unused_net;
    assign unused_net = ^{s_axis_net_tdata, s_axis_net_tkeep, s_axis_net_tlast, s_axis_net_tvalid,
                          s_axis_net_tuser, s_axis_net_tdest, m_axis_net_tready, m_axi_net_awready,
                          m_axi_net_wready, m_axi_net_bresp, m_axi_net_bvalid, m_axi_net_arready,
                          m_axi_net_rdata, m_axi_net_rresp, m_axi_net_rlast, m_axi_net_rvalid, ext_wr, ext_rd,
                          ext_waddr, ext_raddr, ext_wdata, ext_wstrb};
  end

  // ---- parse -> data FIFO / segment FIFO ----------------------------------------------------------
  // The wires name where they are: pb_ parse's payload beats, fq_ the data FIFO's output, fb_ the beats
  // place takes (after the slice); ps_ parse's segments, fs_ the segment FIFO's output, ks_ the segments
  // lookup takes (after the skid).
  logic [DATA_WIDTH-1:0] pb_data, fq_data, fb_data;
  logic [Bytes-1:0] pb_keep, fq_keep, fb_keep;
  logic pb_last, pb_valid, pb_ready, fq_last, fq_valid, fq_ready, fb_last, fb_valid, fb_ready;
  rnic_seg_t ps_seg, fs_seg, ks_seg;
  logic ps_valid, ps_ready, fs_valid, fs_ready, ks_valid, ks_ready;
  logic ev_seg;
  localparam int SegBits = $bits(ps_seg);  // Yosys 0.23 rejects $bits of a type
  logic [$clog2(RxFifoBeats):0] data_fifo_count;
  logic [5:0] seg_fifo_count;

  rnic_rx_parse #(.DataWidth(DATA_WIDTH), .MaxSegBytes(MAX_SEG_BYTES)) u_parse (
    .clk_i(clk), .rst_ni(rst_n),
    .s_axis_tdata_i(in_data), .s_axis_tkeep_i(in_keep), .s_axis_tlast_i(in_last),
    .s_axis_tvalid_i(in_valid), .s_axis_tready_o(in_ready), .s_axis_tuser_i(in_user),
    .beat_data_o(pb_data), .beat_keep_o(pb_keep), .beat_last_o(pb_last), .beat_valid_o(pb_valid),
    .beat_ready_i(pb_ready),
    .seg_o(ps_seg), .seg_valid_o(ps_valid), .seg_ready_i(ps_ready), .seg_event_o(ev_seg));

  rnic_fifo #(.Width(DATA_WIDTH + Bytes + 1), .Depth(RxFifoBeats)) u_data_fifo (
    .clk_i(clk), .rst_ni(rst_n),
    .in_data_i({pb_last, pb_keep, pb_data}), .in_valid_i(pb_valid), .in_ready_o(pb_ready),
    .out_data_o({fq_last, fq_keep, fq_data}), .out_valid_o(fq_valid), .out_ready_i(fq_ready),
    .count_o(data_fifo_count));

  // Place starts from registers, not from the data FIFO's RAM read and bypass mux (logic-depth budget).
  rnic_slice #(.Width(DATA_WIDTH + Bytes + 1)) u_data_slice (
    .clk_i(clk), .rst_ni(rst_n),
    .in_data_i({fq_last, fq_keep, fq_data}), .in_valid_i(fq_valid), .in_ready_o(fq_ready),
    .out_data_o({fb_last, fb_keep, fb_data}), .out_valid_o(fb_valid), .out_ready_i(fb_ready));

  rnic_fifo #(.Width(SegBits), .Depth(32)) u_seg_fifo (
    .clk_i(clk), .rst_ni(rst_n),
    .in_data_i(ps_seg), .in_valid_i(ps_valid), .in_ready_o(ps_ready),
    .out_data_o(fs_seg), .out_valid_o(fs_valid), .out_ready_i(fs_ready),
    .count_o(seg_fifo_count));

  // Skid buffers (rnic_skid) where a stage's ready would otherwise reach into the stage before it:
  // segment FIFO -> lookup, validate -> place, place -> deliver. Ready is registered there; valid
  // and data pass in the same cycle (no latency added).
  rnic_skid #(.Width(SegBits)) u_seg_skid (
    .clk_i(clk), .rst_ni(rst_n),
    .in_data_i(fs_seg), .in_valid_i(fs_valid), .in_ready_o(fs_ready),
    .out_data_o(ks_seg), .out_valid_o(ks_valid), .out_ready_i(ks_ready));

  // ---- regs ---------------------------------------------------------------------------------------
  logic [7:0] cmd_op;
  logic [32*10-1:0] cmd_args;
  logic cmd_valid, cmd_ready, cmd_done, cmd_refused;
  logic [31:0] cmd_result;
  logic [15:0] db_stream;
  logic [7:0] db_qn;
  logic [31:0] db_prod;
  logic db_valid, db_ready;
  logic [63:0] cq_base;
  logic [4:0] cq_log2;
  logic cq_enable, cq_reset;
  logic [31:0] cq_cons, cq_prod;
  logic cq_busy;
  logic ev_bytes, ev_msg, ev_drop, ev_access, ev_dup, ev_error, ev_wr_err, ev_rd_err, ev_order;
  logic [15:0] ev_bytes_n;
  logic [4:0] ev_error_idx;

  rnic_regs #(.DataWidth(DATA_WIDTH), .StagEntries(STAG_ENTRIES), .NumStreams(NUM_STREAMS),
              .NumQns(NUM_QNS), .SsnWindow(SSN_WINDOW), .MaxSegBytes(MAX_SEG_BYTES),
              .NetAssocs(NET == 1 ? RNIC_NET_ASSOC_ENTRIES : 0),
              .NetMaxPacket(NET == 1 ? RNIC_NET_MAX_PACKET_BYTES : 0), .BuildId(BUILD_ID)) u_regs (
    .clk_i(clk), .rst_ni(rst_n),
    .s_axi_awaddr_i(s_axi_control_awaddr), .s_axi_awvalid_i(s_axi_control_awvalid),
    .s_axi_awready_o(s_axi_control_awready), .s_axi_wdata_i(s_axi_control_wdata),
    .s_axi_wstrb_i(s_axi_control_wstrb), .s_axi_wvalid_i(s_axi_control_wvalid),
    .s_axi_wready_o(s_axi_control_wready), .s_axi_bresp_o(s_axi_control_bresp),
    .s_axi_bvalid_o(s_axi_control_bvalid), .s_axi_bready_i(s_axi_control_bready),
    .s_axi_araddr_i(s_axi_control_araddr), .s_axi_arvalid_i(s_axi_control_arvalid),
    .s_axi_arready_o(s_axi_control_arready), .s_axi_rdata_o(s_axi_control_rdata),
    .s_axi_rresp_o(s_axi_control_rresp), .s_axi_rvalid_o(s_axi_control_rvalid),
    .s_axi_rready_i(s_axi_control_rready),
    .cmd_op_o(cmd_op), .cmd_args_o(cmd_args), .cmd_valid_o(cmd_valid), .cmd_ready_i(cmd_ready),
    .cmd_done_i(cmd_done), .cmd_refused_i(cmd_refused), .fence_done_i(fence_done),
    .cmd_result_i(cmd_result),
    .db_stream_o(db_stream), .db_qn_o(db_qn), .db_prod_o(db_prod), .db_valid_o(db_valid),
    .db_ready_i(db_ready),
    .cq_base_o(cq_base), .cq_log2_o(cq_log2), .cq_enable_o(cq_enable), .cq_reset_o(cq_reset),
    .cq_cons_o(cq_cons), .cq_prod_i(cq_prod), .cq_busy_i(cq_busy),
    .seg_event_i(ev_seg), .bytes_event_i(ev_bytes), .bytes_i(ev_bytes_n), .msg_event_i(ev_msg),
    .drop_event_i(ev_drop), .access_event_i(ev_access), .dup_event_i(ev_dup),
    .write_err_event_i(ev_wr_err), .read_err_event_i(ev_rd_err),
    .error_event_i(ev_error), .error_idx_i(ev_error_idx), .order_err_event_i(ev_order),
    // The network side's register window (rnic_net_regs in rnic_net_side; SLVERR with NET = 0).
    .ext_wr_o(ext_wr), .ext_waddr_o(ext_waddr), .ext_wdata_o(ext_wdata), .ext_wstrb_o(ext_wstrb),
    .ext_whit_i(ext_whit), .ext_rd_o(ext_rd), .ext_raddr_o(ext_raddr), .ext_rdata_i(ext_rdata),
    .ext_rhit_i(ext_rhit));

  // Descriptor reads (lookup's) answered with an error: counted, besides the LocalCatastrophic
  // completion lookup reports for them. (The gather's read errors are NET_CNT14.)
  assign ev_rd_err = l_rvalid && l_rready && (l_rresp != 2'b00);

  // ---- lookup -> validate -> place -> deliver -----------------------------------------------------
  rnic_lookup_t lk;
  logic lk_valid, lk_ready;
  rnic_verdict_t vd, kv;
  logic vd_valid, vd_ready, kv_valid, kv_ready;
  rnic_dlv_t dlv, kd;
  logic dlv_valid, dlv_ready, kd_valid, kd_ready;
  localparam int VdBits = $bits(vd), DlvBits = $bits(dlv);
  logic err_valid;
  logic [15:0] err_stream, err_pd, err_ssn;
  logic [1:0]  err_state;
  logic vd_busy;
  logic [15:0] cons_stream;
  logic [7:0] cons_qn;
  logic [1:0] cons_kind;
  logic cons_valid, cons_ready;
  logic [15:0] exp_rd_stream;
  logic [7:0] exp_rd_qn;
  logic [31:0] exp_rd_data, commit_now, b_segs;
  logic p_awseglast;
  logic [15:0] ssn_rd_stream, ssn_rd_next;

  rnic_rx_lookup #(.DataWidth(DATA_WIDTH), .StagEntries(STAG_ENTRIES), .NumStreams(NUM_STREAMS),
                   .NumQns(NUM_QNS), .RqPrefetch(RQ_PREFETCH), .TxPort(NET)) u_lookup (
    .clk_i(clk), .rst_ni(rst_n),
    .seg_i(ks_seg), .seg_valid_i(ks_valid), .seg_ready_o(ks_ready),
    .cmd_op_i(cmd_op), .cmd_args_i(cmd_args), .cmd_valid_i(cmd_valid), .cmd_ready_o(cmd_ready),
    .cmd_done_o(cmd_done), .cmd_refused_o(cmd_refused), .cmd_result_o(cmd_result),
    .db_stream_i(db_stream), .db_qn_i(db_qn), .db_prod_i(db_prod), .db_valid_i(db_valid),
    .db_ready_o(db_ready),
    .cons_stream_i(cons_stream), .cons_qn_i(cons_qn), .cons_kind_i(cons_kind),
    .cons_valid_i(cons_valid), .cons_ready_o(cons_ready),
    .ssn_rd_stream_o(ssn_rd_stream), .ssn_rd_next_i(ssn_rd_next),
    .err_valid_i(err_valid), .err_stream_i(err_stream), .err_pd_i(err_pd),
    .err_state_i(err_state), .err_ssn_i(err_ssn), .dn_busy_i(vd_busy),
    .m_axi_araddr_o(l_araddr), .m_axi_arlen_o(l_arlen), .m_axi_arvalid_o(l_arvalid), .m_axi_arready_i(l_arready),
    .m_axi_rdata_i(l_rdata), .m_axi_rresp_i(l_rresp), .m_axi_rlast_i(l_rlast), .m_axi_rvalid_i(l_rvalid),
    .m_axi_rready_o(l_rready),
    .lk_o(lk), .lk_valid_o(lk_valid), .lk_ready_i(lk_ready),
    .tx_req_i(tx_req), .tx_stag_i(tx_stag), .tx_stream_i(tx_stream), .tx_rsp_o(tx_rsp), .tx_valid_o(tx_valid),
    .tx_key_o(tx_key), .tx_local_read_o(tx_local_read), .tx_pd_o(tx_pd), .tx_bound_o(tx_bound),
    .tx_bound_stream_o(tx_bound_stream), .tx_base_to_o(tx_base_to), .tx_length_o(tx_length), .tx_addr_o(tx_addr),
    .tx_stream_pd_o(tx_stream_pd), .tx_stream_live_o(tx_stream_live));

  rnic_rx_validate #(.SsnWindow(SSN_WINDOW)) u_validate (
    .clk_i(clk), .rst_ni(rst_n),
    .lk_i(lk), .lk_valid_i(lk_valid), .lk_ready_o(lk_ready),
    .vd_o(vd), .vd_valid_o(vd_valid), .vd_ready_i(vd_ready),
    .err_valid_o(err_valid), .err_stream_o(err_stream), .err_pd_o(err_pd),
    .err_state_o(err_state), .err_ssn_o(err_ssn), .busy_o(vd_busy),
    .fate_valid_o(fate_valid), .fate_o(fate),
    .drop_event_o(ev_drop), .error_event_o(ev_error), .error_idx_o(ev_error_idx),
    .access_event_o(ev_access));
  assign m_axis_fate_tvalid = fate_valid;
  assign m_axis_fate_tdata = {6'b0, fate};

  rnic_skid #(.Width(VdBits)) u_vd_skid (
    .clk_i(clk), .rst_ni(rst_n),
    .in_data_i(vd), .in_valid_i(vd_valid), .in_ready_o(vd_ready),
    .out_data_o(kv), .out_valid_o(kv_valid), .out_ready_i(kv_ready));

  logic [63:0] p_awaddr, d_awaddr;
  logic [7:0] p_awlen, d_awlen;
  logic p_awvalid, p_awready, d_awvalid, d_awready;
  logic [DATA_WIDTH-1:0] p_wdata, d_wdata;
  logic [Bytes-1:0] p_wstrb, d_wstrb;
  logic p_wlast, p_wvalid, p_wready, d_wlast, d_wvalid, d_wready;
  logic [31:0] aw_count, b_count;

  rnic_rx_place #(.DataWidth(DATA_WIDTH)) u_place (
    .clk_i(clk), .rst_ni(rst_n),
    .vd_i(kv), .vd_valid_i(kv_valid), .vd_ready_o(kv_ready),
    .beat_data_i(fb_data), .beat_keep_i(fb_keep), .beat_last_i(fb_last), .beat_valid_i(fb_valid),
    .beat_ready_o(fb_ready),
    .awaddr_o(p_awaddr), .awlen_o(p_awlen), .awvalid_o(p_awvalid), .awready_i(p_awready),
    .wdata_o(p_wdata), .wstrb_o(p_wstrb), .wlast_o(p_wlast), .wvalid_o(p_wvalid), .wready_i(p_wready),
    .awseglast_o(p_awseglast),
    .exp_rd_stream_o(exp_rd_stream), .exp_rd_qn_o(exp_rd_qn), .exp_rd_data_i(exp_rd_data),
    .commit_now_o(commit_now),
    .dlv_o(dlv), .dlv_valid_o(dlv_valid), .dlv_ready_i(dlv_ready),
    .bytes_event_o(ev_bytes), .bytes_o(ev_bytes_n));

  rnic_skid #(.Width(DlvBits)) u_dlv_skid (
    .clk_i(clk), .rst_ni(rst_n),
    .in_data_i(dlv), .in_valid_i(dlv_valid), .in_ready_o(dlv_ready),
    .out_data_o(kd), .out_valid_o(kd_valid), .out_ready_i(kd_ready));

  rnic_rx_deliver #(.DataWidth(DATA_WIDTH), .NumStreams(NUM_STREAMS), .NumQns(NUM_QNS),
                    .SsnWindow(SSN_WINDOW)) u_deliver (
    .clk_i(clk), .rst_ni(rst_n),
    .dlv_i(kd), .dlv_valid_i(kd_valid), .dlv_ready_o(kd_ready),
    .ssn_rd_stream_i(ssn_rd_stream), .ssn_rd_next_o(ssn_rd_next),
    .cons_stream_o(cons_stream), .cons_qn_o(cons_qn), .cons_kind_o(cons_kind),
    .cons_valid_o(cons_valid), .cons_ready_i(cons_ready),
    .cq_base_i(cq_base), .cq_log2_i(cq_log2), .cq_enable_i(cq_enable), .cq_reset_i(cq_reset),
    .cq_cons_i(cq_cons), .cq_prod_o(cq_prod), .cq_busy_o(cq_busy),
    .awaddr_o(d_awaddr), .awlen_o(d_awlen), .awvalid_o(d_awvalid), .awready_i(d_awready),
    .wdata_o(d_wdata), .wstrb_o(d_wstrb), .wlast_o(d_wlast), .wvalid_o(d_wvalid), .wready_i(d_wready),
    .exp_rd_stream_i(exp_rd_stream), .exp_rd_qn_i(exp_rd_qn), .exp_rd_data_o(exp_rd_data),
    .commit_now_i(commit_now), .b_segs_i(b_segs),
    .aw_count_i(aw_count), .b_count_i(b_count), .fence_done_o(dlv_fence_done),
    .msg_event_o(ev_msg), .dup_event_o(ev_dup), .order_err_event_o(ev_order));

  rnic_axi_wr_mux #(.DataWidth(DATA_WIDTH)) u_wr_mux (
    .clk_i(clk), .rst_ni(rst_n),
    .s0_awaddr_i(p_awaddr), .s0_awlen_i(p_awlen), .s0_awseglast_i(p_awseglast),
    .s0_awvalid_i(p_awvalid), .s0_awready_o(p_awready),
    .s0_wdata_i(p_wdata), .s0_wstrb_i(p_wstrb), .s0_wlast_i(p_wlast), .s0_wvalid_i(p_wvalid),
    .s0_wready_o(p_wready),
    .s1_awaddr_i(d_awaddr), .s1_awlen_i(d_awlen), .s1_awvalid_i(d_awvalid), .s1_awready_o(d_awready),
    .s1_wdata_i(d_wdata), .s1_wstrb_i(d_wstrb), .s1_wlast_i(d_wlast), .s1_wvalid_i(d_wvalid),
    .s1_wready_o(d_wready),
    .m_awaddr_o(m_axi_gmem_awaddr), .m_awlen_o(m_axi_gmem_awlen), .m_awvalid_o(m_axi_gmem_awvalid),
    .m_awready_i(m_axi_gmem_awready), .m_wdata_o(m_axi_gmem_wdata), .m_wstrb_o(m_axi_gmem_wstrb),
    .m_wlast_o(m_axi_gmem_wlast), .m_wvalid_o(m_axi_gmem_wvalid), .m_wready_i(m_axi_gmem_wready),
    .m_bresp_i(m_axi_gmem_bresp), .m_bvalid_i(m_axi_gmem_bvalid), .m_bready_o(m_axi_gmem_bready),
    .aw_count_o(aw_count), .b_count_o(b_count), .bresp_err_o(ev_wr_err), .b_segs0_o(b_segs));

  // Fill levels are for waveforms.
  logic unused_monitor;
  assign unused_monitor = ^{data_fifo_count, seg_fifo_count};
endmodule
