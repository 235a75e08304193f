// SPDX-License-Identifier: Apache-2.0
#include "test_xclbin.hpp"

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace rnic::tb {

std::string rnic_metadata_xml(const std::string& instance) { return xclbin::rnic_kernel_metadata(instance, 0x1800000); }

TestXclbin rnic_test_xclbin(int gmem_mem) {
  TestXclbin spec;
  spec.ips = {{"rnic_kernel:rnic_kernel_1", 0x1800000}};
  spec.mems = {{"bank0", 1, 0x4000000000, 16u << 20}, {"HOST[0]", 10, 0x2000000000000, 16u << 20}};
  spec.connections = {{0, 0, gmem_mem}};
  spec.metadata_xml = rnic_metadata_xml();
  return spec;
}

std::vector<char> build_xclbin(const TestXclbin& spec) {
  xclbin::Spec s;
  s.ips = spec.ips;
  s.mems = spec.mems;
  s.connections = spec.connections;
  s.metadata_xml = spec.metadata_xml;
  for (std::size_t i = 0; i < s.uuid.size(); ++i) s.uuid[i] = static_cast<std::uint8_t>(spec.uuid_seed + i);
  s.extra_sections = spec.extra_sections;
  return xclbin::build(s);
}

std::string write_test_file(const std::string& dir, const std::string& name, const std::vector<char>& bytes) {
  const std::string path = dir + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
  return path;
}

std::string make_test_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/rnic-xrt-test.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern + " failed");
  return pattern;
}

void remove_test_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace rnic::tb
