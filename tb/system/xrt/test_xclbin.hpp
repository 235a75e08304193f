// SPDX-License-Identifier: Apache-2.0
// Small xclbin (axlf) files for the XRT backend tests, written by the project's xclbin writer
// (sim/xclbin: Debian 12's xclbinutil cannot run).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rnic/xclbin/writer.hpp"

namespace rnic::tb {

using TestIp = xclbin::Ip;
using TestMem = xclbin::Mem;
using TestConnection = xclbin::Connection;

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
