// SPDX-License-Identifier: Apache-2.0
// Writes xclbin (axlf) containers from the structures in <xrt/xclbin.h>: the header, the section
// headers and the IP_LAYOUT, MEM_TOPOLOGY, CONNECTIVITY and (optional) EMBEDDED_METADATA sections the
// way v++ emits them. Debian 12's xclbinutil cannot run (its wrapper calls /usr/bin/unwrapped/xclbinutil,
// which libxrt-utils 2.13 does not ship), so the project writes the two kinds it needs itself: the
// hardware-emulation xclbin rnic-sim serves as an XRT device (docs/xrt-backend.md), and the XRT
// backend tests' files (tb/system/xrt).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rnic::xclbin {

struct Ip {
  std::string name;           // "kernel:instance", e.g. "rnic_kernel:rnic_kernel_1"
  std::uint64_t base = 0;     // base address of its AXI4-Lite control space
  std::uint32_t control = 2;  // IP_CONTROL: 2 = AP_CTRL_NONE (free-running)
};

struct Mem {
  std::string tag;        // "bank0", "HOST[0]", ...
  std::uint8_t type = 1;  // MEM_TYPE: 1 = MEM_DDR4, 10 = MEM_HOST
  std::uint64_t base = 0;
  std::uint64_t size_kb = 0;
  bool used = true;
};

struct Connection {
  int arg = 0;  // argument index
  int ip = 0;   // index into ips
  int mem = 0;  // index into mems
};

struct Spec {
  std::vector<Ip> ips;
  std::vector<Mem> mems;
  std::vector<Connection> connections;
  std::string metadata_xml;  // EMBEDDED_METADATA; empty: no such section
  std::array<std::uint8_t, 16> uuid{};
  std::string platform = "xilinx_u250_gen3x16_xdma_4_1_202210_1";  // m_platformVBNV
  // More sections, placed before the tables: {axlf_section_kind, contents}, e.g. BUILD_METADATA JSON.
  std::vector<std::pair<std::uint32_t, std::string>> extra_sections;
};

// The container's bytes.
std::vector<char> build(const Spec& spec);

// kernel.xml for rnic_kernel as the IP packager describes it (docs/card-flow.md): one free-running
// kernel, s_axi_control of hw::kMMIO_BYTES, m_axi_gmem (512 bits) as argument 0 "gmem", one instance
// `instance` whose control space starts at `cu_base`.
std::string rnic_kernel_metadata(const std::string& instance, std::uint64_t cu_base);

}  // namespace rnic::xclbin
