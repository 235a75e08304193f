// SPDX-License-Identifier: Apache-2.0
// Which AXI4 master of a Verilated top a memory model serves: P::awaddr(top) and the like name its
// signals. GmemPorts is rnic_kernel's m_axi_gmem (and every unit test top that names its master so),
// NetPorts its m_axi_net (the packet rings of the network side, docs/network.md). rnic-sim's AxiSlave
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

}  // namespace rnic::bus
