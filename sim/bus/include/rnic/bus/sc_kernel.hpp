// SPDX-License-Identifier: Apache-2.0
// ScKernel<C>: the SystemC-HLS model of rnic_kernel (rtl/hls) behind the port interface of the Verilated
// model: the same public port members (names and Verilator types), eval(), final() and the constructor
// Sim<Top> uses, so every bus model, testbench and rnic-sim built on Sim<Top> drives either
// implementation unchanged.
//
// eval() at a rising ap_clk edge copies the input ports into the model's signals and runs the SystemC
// kernel through the edge; the outputs are then copied back. The model's outputs are registered (written
// by clocked threads only), so nothing changes at the falling edge.
//
// SystemC elaborates once per process: the first ScKernel builds kInstances models (each with its own
// clock, so only the one being ticked runs) and later ones reuse a free one, power-on cleared (every memory
// to its configuration-time value) and held in reset until Sim::reset() releases it, so each ScKernel
// starts as a fresh card. Up to kInstances ScKernels of one configuration may exist at a time.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "rnic/hls/kernel.hpp"
#include "verilated.h"

class VerilatedFstC;

namespace rnic::bus {

// The Verilator type of an N-bit port.
template <int N>
using vl_port_t = std::conditional_t<
    (N <= 8), CData,
    std::conditional_t<
        (N <= 16), SData,
        std::conditional_t<(N <= 32), IData,
                           std::conditional_t<(N <= 64), QData, VlWide<static_cast<std::size_t>((N + 31) / 32)>>>>>;

template <int N>
inline void to_port(QData& p, const sc_dt::sc_biguint<N>& v) {
  p = v.to_uint64();
}
template <int N, std::size_t M>
inline void to_port(VlWide<M>& p, const sc_dt::sc_biguint<N>& v) {
  for (int i = 0; i < static_cast<int>(M); ++i)
    p.m_storage[static_cast<std::size_t>(i)] = v.range(32 * i + 31, 32 * i).to_uint();
}
template <int N>
inline void from_port(sc_dt::sc_biguint<N>& v, const QData& p) {
  v = p;
}
template <int N, std::size_t M>
inline void from_port(sc_dt::sc_biguint<N>& v, const VlWide<M>& p) {
  for (int i = 0; i < static_cast<int>(M); ++i) v.range(32 * i + 31, 32 * i) = p.m_storage[static_cast<std::size_t>(i)];
}

template <class C>
class ScKernel {
 public:
  static constexpr int W = C::DATA_WIDTH;
  using Model = rnic::hls::Kernel<C>;

  // The Verilated model's ports.
  CData ap_clk = 0;
  CData ap_rst_n = 0;
  SData s_axi_control_awaddr = 0;
  CData s_axi_control_awvalid = 0;
  CData s_axi_control_awready = 0;
  IData s_axi_control_wdata = 0;
  CData s_axi_control_wstrb = 0;
  CData s_axi_control_wvalid = 0;
  CData s_axi_control_wready = 0;
  CData s_axi_control_bresp = 0;
  CData s_axi_control_bvalid = 0;
  CData s_axi_control_bready = 0;
  SData s_axi_control_araddr = 0;
  CData s_axi_control_arvalid = 0;
  CData s_axi_control_arready = 0;
  IData s_axi_control_rdata = 0;
  CData s_axi_control_rresp = 0;
  CData s_axi_control_rvalid = 0;
  CData s_axi_control_rready = 0;
  QData m_axi_gmem_awaddr = 0;
  CData m_axi_gmem_awlen = 0;
  CData m_axi_gmem_awsize = 0;
  CData m_axi_gmem_awburst = 1;
  CData m_axi_gmem_awvalid = 0;
  CData m_axi_gmem_awready = 0;
  vl_port_t<W> m_axi_gmem_wdata{};
  vl_port_t<W / 8> m_axi_gmem_wstrb = 0;
  CData m_axi_gmem_wlast = 0;
  CData m_axi_gmem_wvalid = 0;
  CData m_axi_gmem_wready = 0;
  CData m_axi_gmem_bresp = 0;
  CData m_axi_gmem_bvalid = 0;
  CData m_axi_gmem_bready = 0;
  QData m_axi_gmem_araddr = 0;
  CData m_axi_gmem_arlen = 0;
  CData m_axi_gmem_arsize = 0;
  CData m_axi_gmem_arburst = 1;
  CData m_axi_gmem_arvalid = 0;
  CData m_axi_gmem_arready = 0;
  vl_port_t<W> m_axi_gmem_rdata{};
  CData m_axi_gmem_rresp = 0;
  CData m_axi_gmem_rlast = 0;
  CData m_axi_gmem_rvalid = 0;
  CData m_axi_gmem_rready = 0;
  vl_port_t<W> s_axis_rx_tdata{};
  vl_port_t<W / 8> s_axis_rx_tkeep = 0;
  CData s_axis_rx_tlast = 0;
  CData s_axis_rx_tvalid = 0;
  CData s_axis_rx_tready = 0;
  QData s_axis_rx_tuser = 0;
  CData m_axis_fate_tvalid = 0;
  CData m_axis_fate_tdata = 0;

  static constexpr int kInstances = 2;

  ScKernel(VerilatedContext* ctx = nullptr, const char* name = "tb");
  ~ScKernel() { s_->in_use = false; }
  ScKernel(const ScKernel&) = delete;
  ScKernel& operator=(const ScKernel&) = delete;

  void eval() {
    if (ap_clk != 0 && last_clk_ == 0) edge();
    last_clk_ = ap_clk;
  }
  void final() {}
  // Waveforms of the model are not written through Verilator's FST writer.
  void trace(VerilatedFstC*, int) {}

  // The SystemC model itself (the lockstep harness and the tests read its signals).
  Model& model() { return *m_; }
  std::uint64_t edges() const { return edges_; }

 private:
  struct Shared {
    std::unique_ptr<sc_core::sc_signal<bool>> clk, rst_n;
    std::unique_ptr<Model> model;
    bool in_use = false;
  };
  // Every instance is elaborated before the first sc_start().
  static Shared* shared();
  static constexpr unsigned log2_bytes() {
    unsigned l = 0;
    while ((1u << l) < static_cast<unsigned>(C::BYTES)) ++l;
    return l;
  }

  // One rising edge: inputs in, the clocked threads run, outputs out.
  void edge();

  Model* m_ = nullptr;
  Shared* s_ = nullptr;
  CData last_clk_ = 0;
  std::uint64_t edges_ = 0;
};

// The members that build and step the model are defined out of the class (not inline): a program that
// declares `extern template class ScKernel<C>;` compiles the model once, in the one file that instantiates
// ScKernel<C> (tb/rtl/kernel/kernel_model.cpp), instead of in every file that includes this header.
template <class C>
ScKernel<C>::ScKernel(VerilatedContext* /*ctx*/, const char* /*name*/) {
  Shared* pool = shared();
  Shared* free = nullptr;
  for (int i = 0; i < kInstances && free == nullptr; ++i)
    if (!pool[i].in_use) free = &pool[i];
  if (free == nullptr)
    throw std::logic_error("ScKernel: at most " + std::to_string(kInstances) +
                           " instances of one configuration at a time (SystemC elaborates once per process)");
  Shared& s = *free;
  s.in_use = true;
  m_ = s.model.get();
  s_ = &s;
  m_->power_on();
  const unsigned log2 = log2_bytes();
  m_axi_gmem_awsize = static_cast<CData>(log2);
  m_axi_gmem_arsize = static_cast<CData>(log2);
}

template <class C>
typename ScKernel<C>::Shared* ScKernel<C>::shared() {
  static Shared* pool = [] {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
    static Shared p[kInstances];
    for (int i = 0; i < kInstances; ++i) {
      const std::string n = "rnic_hls" + std::to_string(i);
      p[i].clk = std::make_unique<sc_core::sc_signal<bool>>((n + "_clk").c_str());
      p[i].rst_n = std::make_unique<sc_core::sc_signal<bool>>((n + "_rst_n").c_str());
      p[i].model = std::make_unique<Model>(n.c_str());
      p[i].model->clk(*p[i].clk);
      p[i].model->rst_n(*p[i].rst_n);
    }
    return p;
  }();
  return pool;
}

template <class C>
void ScKernel<C>::edge() {
  Model& m = *m_;
  s_->rst_n->write(ap_rst_n != 0);
  // AXI4-Lite.
  m.ctl_aw.vld.write(s_axi_control_awvalid != 0);
  m.ctl_aw.dat.write(rnic::hls::LiteAddr{s_axi_control_awaddr});
  m.ctl_w.vld.write(s_axi_control_wvalid != 0);
  m.ctl_w.dat.write(rnic::hls::LiteW{s_axi_control_wdata, s_axi_control_wstrb});
  m.ctl_b.rdy.write(s_axi_control_bready != 0);
  m.ctl_ar.vld.write(s_axi_control_arvalid != 0);
  m.ctl_ar.dat.write(rnic::hls::LiteAddr{s_axi_control_araddr});
  m.ctl_r.rdy.write(s_axi_control_rready != 0);
  // AXI-Stream in.
  m.rx.vld.write(s_axis_rx_tvalid != 0);
  if (s_axis_rx_tvalid != 0) {
    rnic::hls::AxisBeat<W> b;
    from_port(b.data, s_axis_rx_tdata);
    b.keep = s_axis_rx_tkeep;
    b.last = s_axis_rx_tlast != 0;
    b.user = s_axis_rx_tuser;
    m.rx.dat.write(b);
  }
  // AXI4 master.
  m.gmem_aw.rdy.write(m_axi_gmem_awready != 0);
  m.gmem_w.rdy.write(m_axi_gmem_wready != 0);
  m.gmem_b.vld.write(m_axi_gmem_bvalid != 0);
  m.gmem_b.dat.write(rnic::hls::AxiB{m_axi_gmem_bresp});
  m.gmem_ar.rdy.write(m_axi_gmem_arready != 0);
  m.gmem_r.vld.write(m_axi_gmem_rvalid != 0);
  if (m_axi_gmem_rvalid != 0) {
    rnic::hls::AxiR<W> r;
    from_port(r.data, m_axi_gmem_rdata);
    r.resp = m_axi_gmem_rresp;
    r.last = m_axi_gmem_rlast != 0;
    m.gmem_r.dat.write(r);
  }
  // The edge: the inputs and the clock update together; the threads run on the edge; their writes
  // update before the next time step.
  s_->clk->write(true);
  sc_core::sc_start(1, sc_core::SC_NS);
  s_->clk->write(false);
  sc_core::sc_start(1, sc_core::SC_NS);
  ++edges_;
  // Outputs.
  s_axi_control_awready = m.ctl_aw.rdy.read();
  s_axi_control_wready = m.ctl_w.rdy.read();
  s_axi_control_bvalid = m.ctl_b.vld.read();
  s_axi_control_bresp = static_cast<CData>(m.ctl_b.dat.read().resp.to_uint());
  s_axi_control_arready = m.ctl_ar.rdy.read();
  s_axi_control_rvalid = m.ctl_r.vld.read();
  const rnic::hls::LiteR r = m.ctl_r.dat.read();
  s_axi_control_rdata = r.data.to_uint();
  s_axi_control_rresp = static_cast<CData>(r.resp.to_uint());
  s_axis_rx_tready = m.rx.rdy.read();
  m_axi_gmem_awvalid = m.gmem_aw.vld.read();
  const rnic::hls::WrAw aw = m.gmem_aw.dat.read();
  m_axi_gmem_awaddr = aw.addr.to_uint64();
  m_axi_gmem_awlen = static_cast<CData>(aw.len.to_uint());
  m_axi_gmem_wvalid = m.gmem_w.vld.read();
  if (m_axi_gmem_wvalid != 0) {
    const rnic::hls::AxiW<W> w = m.gmem_w.dat.read();
    to_port(m_axi_gmem_wdata, w.data);
    m_axi_gmem_wstrb = static_cast<vl_port_t<W / 8>>(w.strb.to_uint64());
    m_axi_gmem_wlast = w.last;
  }
  m_axi_gmem_bready = m.gmem_b.rdy.read();
  m_axi_gmem_arvalid = m.gmem_ar.vld.read();
  const rnic::hls::AxiAr ar = m.gmem_ar.dat.read();
  m_axi_gmem_araddr = ar.addr.to_uint64();
  m_axi_gmem_arlen = static_cast<CData>(ar.len.to_uint());
  m_axi_gmem_rready = m.gmem_r.rdy.read();
  m_axis_fate_tvalid = m.fate_valid.read();
  m_axis_fate_tdata = static_cast<CData>(m.fate.read().to_uint());
}

}  // namespace rnic::bus
