// SPDX-License-Identifier: Apache-2.0
// The testbench's own checks must be able to fail: the AXI4 host-memory slave against a scripted
// master (a stand-in for the Verilated top with the same m_axi_gmem port names).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "rnic/tb/host_memory.hpp"
#include "rnic/tb/sim.hpp"

namespace rnic::tb {
namespace {

// The ports AxiHostMemory and Sim touch, as a 512-bit kernel has them.
struct FakeTop {
  FakeTop(VerilatedContext*, const char*) {}
  void eval() {}
  void final() {}
  void trace(VerilatedFstC*, int) {}
  CData ap_clk = 0, ap_rst_n = 0;
  QData m_axi_gmem_awaddr = 0, m_axi_gmem_araddr = 0, m_axi_gmem_wstrb = 0;
  CData m_axi_gmem_awlen = 0, m_axi_gmem_awsize = 6, m_axi_gmem_awburst = 1, m_axi_gmem_awvalid = 0;
  CData m_axi_gmem_awready = 0, m_axi_gmem_wlast = 0, m_axi_gmem_wvalid = 0, m_axi_gmem_wready = 0;
  CData m_axi_gmem_bresp = 0, m_axi_gmem_bvalid = 0, m_axi_gmem_bready = 1;
  CData m_axi_gmem_arlen = 0, m_axi_gmem_arsize = 6, m_axi_gmem_arburst = 1, m_axi_gmem_arvalid = 0;
  CData m_axi_gmem_arready = 0, m_axi_gmem_rresp = 0, m_axi_gmem_rlast = 0, m_axi_gmem_rvalid = 0;
  CData m_axi_gmem_rready = 1;
  VlWide<16> m_axi_gmem_wdata{}, m_axi_gmem_rdata{};
};

struct Bench {
  Sim<FakeTop> sim;
  AxiHostMemory<FakeTop> mem;
  explicit Bench(HostMemConfig c = HostMemConfig{}) : mem(sim, 64, c) {}
  FakeTop& t() { return sim.top(); }
  void aw(std::uint64_t addr, unsigned len) {
    t().m_axi_gmem_awaddr = addr;
    t().m_axi_gmem_awlen = static_cast<CData>(len);
    t().m_axi_gmem_awvalid = 1;
    sim.tick();
    t().m_axi_gmem_awvalid = 0;
  }
  void w(bool last, std::uint64_t strb = ~std::uint64_t{0}, std::uint8_t fill = 0xEE) {
    for (unsigned i = 0; i < 64; ++i) set_byte(t().m_axi_gmem_wdata, i, fill);
    t().m_axi_gmem_wstrb = strb;
    t().m_axi_gmem_wlast = last;
    t().m_axi_gmem_wvalid = 1;
    sim.tick();
    t().m_axi_gmem_wvalid = 0;
  }
  std::string errors() { return sim.errors().text(); }
};

TEST(KernelHarness, CleanBurstLandsByItsB) {
  HostMemConfig c;
  c.b_latency_min = c.b_latency_max = 10;
  Bench b(c);
  b.aw(0x1000, 1);
  b.w(false);
  b.w(true, 0x3);  // two bytes of the second beat
  EXPECT_EQ(b.mem.kernel_written()[0x1000], 1);
  EXPECT_EQ(b.mem.kernel_written()[0x1041], 1);
  EXPECT_EQ(b.mem.kernel_written()[0x1042], 0);
  for (int i = 0; i < 20; ++i) b.sim.tick();
  EXPECT_EQ(b.mem.b_count(), 1u);
  EXPECT_EQ(b.mem.data()[0x1000], 0xEE);
  EXPECT_EQ(b.mem.data()[0x1041], 0xEE);
  EXPECT_EQ(b.mem.data()[0x1042], pattern_byte(0x1042));
  EXPECT_TRUE(b.sim.errors().empty()) << b.errors();
}

TEST(KernelHarness, Detects4KiBCrossing) {
  Bench b;
  b.aw(0x1FC0, 1);  // 2 beats from 0x1FC0 end at 0x2040
  b.w(false);
  b.w(true);
  EXPECT_NE(b.errors().find("crosses a 4 KiB boundary"), std::string::npos) << b.errors();
}

TEST(KernelHarness, DetectsUnalignedAndWrongSize) {
  Bench b;
  b.t().m_axi_gmem_awsize = 3;
  b.aw(0x1008, 0);
  b.w(true);
  EXPECT_NE(b.errors().find("AWSIZE 3"), std::string::npos) << b.errors();
  EXPECT_NE(b.errors().find("not bus-aligned"), std::string::npos) << b.errors();
}

TEST(KernelHarness, DetectsWWithoutAw) {
  Bench b;
  b.w(true);
  EXPECT_NE(b.errors().find("W beat without an outstanding AW"), std::string::npos) << b.errors();
}

TEST(KernelHarness, DetectsMisplacedWlast) {
  Bench b;
  b.aw(0x2000, 2);
  b.w(true);  // first of three beats
  EXPECT_NE(b.errors().find("WLAST 1 on beat 0"), std::string::npos) << b.errors();
}

TEST(KernelHarness, DetectsAwChangedBeforeReady) {
  HostMemConfig c;
  c.aw_ready = 0.0;
  Bench b(c);
  b.t().m_axi_gmem_awaddr = 0x3000;
  b.t().m_axi_gmem_awvalid = 1;
  b.sim.tick();
  b.t().m_axi_gmem_awaddr = 0x3040;
  b.sim.tick();
  EXPECT_NE(b.errors().find("AW changed before AWREADY"), std::string::npos) << b.errors();
}

TEST(KernelHarness, ReadReturnsMemory) {
  HostMemConfig c;
  c.r_latency_min = c.r_latency_max = 3;
  Bench b(c);
  b.t().m_axi_gmem_araddr = 0x4000;
  b.t().m_axi_gmem_arlen = 1;
  b.t().m_axi_gmem_arvalid = 1;
  b.sim.tick();
  b.t().m_axi_gmem_arvalid = 0;
  unsigned beats = 0;
  for (int i = 0; i < 20 && beats < 2; ++i) {
    b.sim.tick();
    if (b.t().m_axi_gmem_rvalid) {  // what was presented in the cycle just ticked
      EXPECT_EQ(get_byte(b.t().m_axi_gmem_rdata, 5), pattern_byte(0x4000 + 64 * beats + 5));
      EXPECT_EQ(b.t().m_axi_gmem_rlast, beats == 1);
      ++beats;
    }
  }
  EXPECT_EQ(beats, 2u);
  EXPECT_TRUE(b.sim.errors().empty()) << b.errors();
}

}  // namespace
}  // namespace rnic::tb
