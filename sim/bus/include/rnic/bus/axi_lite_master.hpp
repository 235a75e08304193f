// SPDX-License-Identifier: Apache-2.0
// AXI4-Lite master on rnic_kernel's s_axi_control: blocking read32/write32 that tick the clock until
// the transaction is done and report a non-OKAY response (or a response without a request) as an error.
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "rnic/bus/sim.hpp"

namespace rnic::bus {

template <class Top>
class AxiLiteMaster : public Component<Top> {
 public:
  explicit AxiLiteMaster(Sim<Top>& sim) : sim_(sim) { sim.add(this); }

  void write32(std::uint32_t addr, std::uint32_t data) {
    if (write32_resp(addr, data) != 0) {
      sim_.errors().add(sim_.cycle(), "AXI-Lite write 0x" + hex(addr) + " BRESP " + std::to_string(resp_));
    }
  }
  // A write whose response the caller judges (a test expecting SLVERR): returned, not logged.
  unsigned write32_resp(std::uint32_t addr, std::uint32_t data) {
    addr_ = addr;
    wdata_ = data;
    aw_ = w_ = b_wait_ = true;
    wait([this] { return !b_wait_; }, "write", addr);
    return resp_;
  }

  std::uint32_t read32(std::uint32_t addr) {
    addr_ = addr;
    ar_ = r_wait_ = true;
    wait([this] { return !r_wait_; }, "read", addr);
    if (resp_ != 0) {
      sim_.errors().add(sim_.cycle(), "AXI-Lite read 0x" + hex(addr) + " RRESP " + std::to_string(resp_));
    }
    return rdata_;
  }

  // The response of the last read32/write32 (0 OKAY, 2 SLVERR).
  unsigned last_resp() const { return resp_; }

  // 64-bit counter: the _LO read latches the _HI word (hw.def access RC).
  std::uint64_t read64(std::uint32_t lo_addr) {
    const std::uint32_t lo = read32(lo_addr);
    const std::uint32_t hi = read32(lo_addr + 4);
    return (std::uint64_t{hi} << 32) | lo;
  }

  void drive(Top& t, std::uint64_t) override {
    t.s_axi_control_awvalid = aw_;
    t.s_axi_control_awaddr = static_cast<std::uint16_t>(addr_);
    t.s_axi_control_wvalid = w_;
    t.s_axi_control_wdata = wdata_;
    t.s_axi_control_wstrb = 0xF;
    t.s_axi_control_bready = b_wait_;
    t.s_axi_control_arvalid = ar_;
    t.s_axi_control_araddr = static_cast<std::uint16_t>(addr_);
    t.s_axi_control_rready = r_wait_;
  }

  void sample(const Top& t, std::uint64_t cycle) override {
    if (t.s_axi_control_bvalid && (!b_wait_ || aw_ || w_)) {
      sim_.errors().add(cycle, "AXI-Lite BVALID without a completed write request");
    }
    if (t.s_axi_control_rvalid && (!r_wait_ || ar_)) {
      sim_.errors().add(cycle, "AXI-Lite RVALID without a read request");
    }
    if (aw_ && t.s_axi_control_awready) aw_ = false;
    if (w_ && t.s_axi_control_wready) w_ = false;
    if (b_wait_ && !aw_ && !w_ && t.s_axi_control_bvalid) {
      b_wait_ = false;
      resp_ = t.s_axi_control_bresp;
    }
    if (ar_ && t.s_axi_control_arready) {
      ar_ = false;
    } else if (r_wait_ && !ar_ && t.s_axi_control_rvalid) {
      r_wait_ = false;
      resp_ = t.s_axi_control_rresp;
      rdata_ = t.s_axi_control_rdata;
    }
  }

 private:
  template <class Done>
  void wait(Done done, const char* what, std::uint32_t addr) {
    for (unsigned i = 0; !done(); ++i) {
      if (i >= kTimeout) {
        throw std::runtime_error(std::string("AXI-Lite ") + what + " of 0x" + hex(addr) + " did not complete in " +
                                 std::to_string(kTimeout) + " cycles");
      }
      sim_.tick();
    }
  }
  static std::string hex(std::uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "%04x", v);
    return b;
  }

  static constexpr unsigned kTimeout = 2000;
  Sim<Top>& sim_;
  std::uint32_t addr_ = 0, wdata_ = 0, rdata_ = 0;
  unsigned resp_ = 0;
  bool aw_ = false, w_ = false, b_wait_ = false, ar_ = false, r_wait_ = false;
};

}  // namespace rnic::bus
