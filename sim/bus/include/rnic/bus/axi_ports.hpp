// SPDX-License-Identifier: Apache-2.0
// Which AXI4 master of a Verilated top a memory model serves: P::awaddr(top) and the like name its
// signals. GmemPorts is rnic_kernel's m_axi_gmem (and every unit test top that names its master so),
// NetPorts its m_axi_net (the packet rings of the network side, docs/network.md), ModulePorts the master
// of a module below the top. rnic-sim's AxiSlave
// and the testbenches' AxiHostMemory take one as a template argument.
#pragma once

namespace rnic::bus {

// clang-format off
#define RNIC_AXI_PORT(prefix, sig) template <class T> static auto& sig(T& t) { return t.prefix##sig; }
#define RNIC_AXI_PORTS(Name, prefix)                                                                      \
  struct Name {                                                                                            \
    RNIC_AXI_PORT(prefix, awaddr) RNIC_AXI_PORT(prefix, awlen) RNIC_AXI_PORT(prefix, awsize)              \
    RNIC_AXI_PORT(prefix, awburst) RNIC_AXI_PORT(prefix, awvalid) RNIC_AXI_PORT(prefix, awready)          \
    RNIC_AXI_PORT(prefix, wdata) RNIC_AXI_PORT(prefix, wstrb) RNIC_AXI_PORT(prefix, wlast)                \
    RNIC_AXI_PORT(prefix, wvalid) RNIC_AXI_PORT(prefix, wready) RNIC_AXI_PORT(prefix, bresp)              \
    RNIC_AXI_PORT(prefix, bvalid) RNIC_AXI_PORT(prefix, bready) RNIC_AXI_PORT(prefix, araddr)             \
    RNIC_AXI_PORT(prefix, arlen) RNIC_AXI_PORT(prefix, arsize) RNIC_AXI_PORT(prefix, arburst)             \
    RNIC_AXI_PORT(prefix, arvalid) RNIC_AXI_PORT(prefix, arready) RNIC_AXI_PORT(prefix, rdata)            \
    RNIC_AXI_PORT(prefix, rresp) RNIC_AXI_PORT(prefix, rlast) RNIC_AXI_PORT(prefix, rvalid)               \
    RNIC_AXI_PORT(prefix, rready)                                                                          \
  }
// clang-format on
RNIC_AXI_PORTS(GmemPorts, m_axi_gmem_);
RNIC_AXI_PORTS(NetPorts, m_axi_net_);
#undef RNIC_AXI_PORTS
#undef RNIC_AXI_PORT

// The AXI4 master of a module below the top (docs/style.md): m_axi_<signal>_o for the master's outputs,
// m_axi_<signal>_i for its inputs (rnic_net_rxring, rnic_net_tx).
// clang-format off
#define RNIC_AXI_OUT(sig) template <class T> static auto& sig(T& t) { return t.m_axi_##sig##_o; }
#define RNIC_AXI_IN(sig) template <class T> static auto& sig(T& t) { return t.m_axi_##sig##_i; }
struct ModulePorts {
  RNIC_AXI_OUT(awaddr) RNIC_AXI_OUT(awlen) RNIC_AXI_OUT(awsize) RNIC_AXI_OUT(awburst) RNIC_AXI_OUT(awvalid)
  RNIC_AXI_IN(awready) RNIC_AXI_OUT(wdata) RNIC_AXI_OUT(wstrb) RNIC_AXI_OUT(wlast) RNIC_AXI_OUT(wvalid)
  RNIC_AXI_IN(wready) RNIC_AXI_IN(bresp) RNIC_AXI_IN(bvalid) RNIC_AXI_OUT(bready) RNIC_AXI_OUT(araddr)
  RNIC_AXI_OUT(arlen) RNIC_AXI_OUT(arsize) RNIC_AXI_OUT(arburst) RNIC_AXI_OUT(arvalid) RNIC_AXI_IN(arready)
  RNIC_AXI_IN(rdata) RNIC_AXI_IN(rresp) RNIC_AXI_IN(rlast) RNIC_AXI_IN(rvalid) RNIC_AXI_OUT(rready)
};
// clang-format on
#undef RNIC_AXI_OUT
#undef RNIC_AXI_IN

}  // namespace rnic::bus
