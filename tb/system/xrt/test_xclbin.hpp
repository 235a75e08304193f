// SPDX-License-Identifier: Apache-2.0
// Builds small xclbin (axlf) files for the XRT backend tests. Debian 12's xclbinutil cannot run (its
// wrapper calls /usr/bin/unwrapped/xclbinutil, which libxrt-utils 2.13 does not ship), so the tests
// write the container themselves from the structs in <xrt/xclbin.h>: header, section headers and the
// IP_LAYOUT, MEM_TOPOLOGY, CONNECTIVITY and (optional) EMBEDDED_METADATA sections the way v++ emits them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rnic::tb {

struct TestIp {
  std::string name;           // "kernel:instance", e.g. "rnic_kernel:rnic_kernel_1"
  std::uint64_t base = 0;     // base address of its AXI4-Lite control space
  std::uint32_t control = 2;  // IP_CONTROL: 2 = AP_CTRL_NONE (free-running)
};

struct TestMem {
  std::string tag;        // "bank0", "HOST[0]", ...
  std::uint8_t type = 1;  // MEM_TYPE: 1 = MEM_DDR4, 10 = MEM_HOST
  std::uint64_t base = 0;
  std::uint64_t size_kb = 0;
  bool used = true;
};

struct TestConnection {
  int arg = 0;  // argument index
  int ip = 0;   // index into ips
  int mem = 0;  // index into mems
};

struct TestXclbin {
  std::vector<TestIp> ips;
  std::vector<TestMem> mems;
  std::vector<TestConnection> connections;
  std::string metadata_xml;    // EMBEDDED_METADATA; empty: no such section
  std::uint8_t uuid_seed = 1;  // the xclbin's UUID is 16 bytes of seed, seed+1, ...
  // More sections, placed before the tables: {axlf_section_kind, contents}, e.g. BUILD_METADATA JSON.
  std::vector<std::pair<std::uint32_t, std::string>> extra_sections;
};

// The rnic_kernel as v++ would link it: one free-running CU at 0x1800000 whose argument 0 (port
// m_axi_gmem) is connected to memory `gmem_mem` of two banks (bank0 DDR, HOST[0]).
TestXclbin rnic_test_xclbin(int gmem_mem = 1);
// The kernel.xml fragment for rnic_kernel (kernel, ports, the gmem argument, one instance).
std::string rnic_metadata_xml(const std::string& instance = "rnic_kernel_1");

std::vector<char> build_xclbin(const TestXclbin& spec);
// Writes bytes to dir/name and returns the path.
std::string write_test_file(const std::string& dir, const std::string& name, const std::vector<char>& bytes);
// A fresh directory under $TMPDIR (or /tmp), removed by remove_test_dir.
std::string make_test_dir();
void remove_test_dir(const std::string& dir);

}  // namespace rnic::tb
