// Joins two AXI write masters (0: place, 1: deliver) onto one, a whole burst at a time, and counts
// AW and B handshakes so stages can wait for their writes to be acknowledged.
//
// When idle the arbiter picks a master with awvalid in the same cycle (round robin when both ask),
// so a burst may start in the cycle after the previous wlast. The grant is held from the first
// cycle its AW is presented until its wlast handshake. W beats pass only once the burst's AW has
// been accepted or is accepted in the same cycle, so the first W beat never goes before its AW: for
// that the first beat's m_wvalid follows m_awready_i combinationally (the slave's awready must not
// wait for wvalid; true of AXI interconnects and memory controllers, which register awready). Since
// AW and the first W beat can go together, back-to-back bursts run without a bubble. The next AW is
// passed only after the previous wlast (B responses may still be outstanding; they are counted).
module rnic_axi_wr_mux #(
  parameter int DataWidth = 512  // bits
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic [63:0]            s0_awaddr_i,
  input  logic [7:0]             s0_awlen_i,
  input  logic                   s0_awvalid_i,
  output logic                   s0_awready_o,
  input  logic [DataWidth-1:0]   s0_wdata_i,
  input  logic [DataWidth/8-1:0] s0_wstrb_i,
  input  logic                   s0_wlast_i,
  input  logic                   s0_wvalid_i,
  output logic                   s0_wready_o,
  input  logic [63:0]            s1_awaddr_i,
  input  logic [7:0]             s1_awlen_i,
  input  logic                   s1_awvalid_i,
  output logic                   s1_awready_o,
  input  logic [DataWidth-1:0]   s1_wdata_i,
  input  logic [DataWidth/8-1:0] s1_wstrb_i,
  input  logic                   s1_wlast_i,
  input  logic                   s1_wvalid_i,
  output logic                   s1_wready_o,
  output logic [63:0]            m_awaddr_o,
  output logic [7:0]             m_awlen_o,
  output logic                   m_awvalid_o,
  input  logic                   m_awready_i,
  output logic [DataWidth-1:0]   m_wdata_o,
  output logic [DataWidth/8-1:0] m_wstrb_o,
  output logic                   m_wlast_o,
  output logic                   m_wvalid_o,
  input  logic                   m_wready_i,
  input  logic [1:0]             m_bresp_i,
  input  logic                   m_bvalid_i,
  output logic                   m_bready_o,
  output logic [31:0]            aw_count_o,   // AW handshakes so far (wraps)
  output logic [31:0]            b_count_o,    // B handshakes so far (wraps)
  output logic                   bresp_err_o   // pulse on a SLVERR/DECERR response
);
  initial begin
    if (DataWidth < 8 || (DataWidth % 8) != 0)
      $fatal(1, "rnic_axi_wr_mux: DataWidth must be a multiple of 8");
  end

  logic busy_d, busy_q;        // a burst is granted (its AW presented or accepted, wlast not yet)
  logic sel_d, sel_q;          // granted master while busy
  logic aw_done_d, aw_done_q;  // the granted burst's AW was accepted
  logic last_d, last_q;        // master granted last (round robin)
  logic sel, active, aw_hs, w_open, w_hs;
  logic sel_awvalid, sel_wvalid;
  logic [31:0] aw_count_d, aw_count_q, b_count_d, b_count_q;
  logic bresp_err_d, bresp_err_q;

  // Arbitration: held while busy; when idle, the only requester or, with two, the one not granted
  // last time.
  always_comb begin
    if (busy_q) begin
      sel = sel_q;
    end else if (s0_awvalid_i && s1_awvalid_i) begin
      sel = !last_q;
    end else begin
      sel = s1_awvalid_i;
    end
  end

  assign active      = busy_q || s0_awvalid_i || s1_awvalid_i;
  assign sel_awvalid = sel ? s1_awvalid_i : s0_awvalid_i;
  assign sel_wvalid  = sel ? s1_wvalid_i : s0_wvalid_i;

  assign m_awaddr_o  = sel ? s1_awaddr_i : s0_awaddr_i;
  assign m_awlen_o   = sel ? s1_awlen_i : s0_awlen_i;
  assign m_awvalid_o = active && !aw_done_q && sel_awvalid;
  assign aw_hs       = m_awvalid_o && m_awready_i;
  assign s0_awready_o = !sel && active && !aw_done_q && m_awready_i;
  assign s1_awready_o = sel && active && !aw_done_q && m_awready_i;

  assign w_open     = active && (aw_done_q || aw_hs);
  assign m_wdata_o  = sel ? s1_wdata_i : s0_wdata_i;
  assign m_wstrb_o  = sel ? s1_wstrb_i : s0_wstrb_i;
  assign m_wlast_o  = sel ? s1_wlast_i : s0_wlast_i;
  assign m_wvalid_o = w_open && sel_wvalid;
  assign w_hs       = m_wvalid_o && m_wready_i;
  assign s0_wready_o = !sel && w_open && m_wready_i;
  assign s1_wready_o = sel && w_open && m_wready_i;

  always_comb begin
    busy_d    = busy_q;
    sel_d     = sel_q;
    aw_done_d = aw_done_q;
    last_d    = last_q;
    if (aw_hs) last_d = sel;
    if (w_hs && m_wlast_o) begin
      busy_d    = 1'b0;
      aw_done_d = 1'b0;
    end else if (active) begin
      busy_d    = 1'b1;
      sel_d     = sel;
      aw_done_d = aw_done_q || aw_hs;
    end
  end

  // Counters and the error pulse; every B response is accepted at once.
  assign m_bready_o = 1'b1;

  always_comb begin
    aw_count_d  = aw_count_q + 32'(aw_hs);
    b_count_d   = b_count_q + 32'(m_bvalid_i);
    bresp_err_d = m_bvalid_i && (m_bresp_i != 2'b00);
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      busy_q      <= 1'b0;
      sel_q       <= 1'b0;
      aw_done_q   <= 1'b0;
      last_q      <= 1'b1;
      aw_count_q  <= '0;
      b_count_q   <= '0;
      bresp_err_q <= 1'b0;
    end else begin
      busy_q      <= busy_d;
      sel_q       <= sel_d;
      aw_done_q   <= aw_done_d;
      last_q      <= last_d;
      aw_count_q  <= aw_count_d;
      b_count_q   <= b_count_d;
      bresp_err_q <= bresp_err_d;
    end
  end

  assign aw_count_o  = aw_count_q;
  assign b_count_o   = b_count_q;
  assign bresp_err_o = bresp_err_q;
endmodule
