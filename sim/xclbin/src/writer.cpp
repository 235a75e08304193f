// SPDX-License-Identifier: Apache-2.0
#include "rnic/xclbin/writer.hpp"

#include <fmt/format.h>
#include <xrt/xclbin.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <tuple>

#include "rnic/hw/hw.hpp"

namespace rnic::xclbin {
namespace {

template <typename T>
void put(std::vector<char>& out, std::size_t at, const T& value) {
  std::memcpy(out.data() + at, &value, sizeof(T));
}

void copy_name(std::uint8_t* dst, std::size_t cap, const std::string& src) {
  std::memcpy(dst, src.data(), std::min(src.size(), cap - 1));
}

struct Section {
  axlf_section_kind kind;
  const char* name;
  std::vector<char> data;
};

std::vector<char> ip_layout_section(const std::vector<Ip>& ips) {
  std::vector<char> out(offsetof(ip_layout, m_ip_data) + ips.size() * sizeof(ip_data), 0);
  put(out, 0, static_cast<std::int32_t>(ips.size()));
  for (std::size_t i = 0; i < ips.size(); ++i) {
    ip_data d{};
    d.m_type = IP_KERNEL;
    d.properties = ips[i].control << IP_CONTROL_SHIFT;
    d.m_base_address = ips[i].base;
    copy_name(d.m_name, sizeof d.m_name, ips[i].name);
    put(out, offsetof(ip_layout, m_ip_data) + i * sizeof(ip_data), d);
  }
  return out;
}

std::vector<char> mem_topology_section(const std::vector<Mem>& mems) {
  std::vector<char> out(offsetof(mem_topology, m_mem_data) + mems.size() * sizeof(mem_data), 0);
  put(out, 0, static_cast<std::int32_t>(mems.size()));
  for (std::size_t i = 0; i < mems.size(); ++i) {
    mem_data d{};
    d.m_type = mems[i].type;
    d.m_used = mems[i].used ? 1 : 0;
    d.m_size = mems[i].size_kb;
    d.m_base_address = mems[i].base;
    copy_name(d.m_tag, sizeof d.m_tag, mems[i].tag);
    put(out, offsetof(mem_topology, m_mem_data) + i * sizeof(mem_data), d);
  }
  return out;
}

std::vector<char> connectivity_section(const std::vector<Connection>& conns) {
  std::vector<char> out(offsetof(connectivity, m_connection) + conns.size() * sizeof(connection), 0);
  put(out, 0, static_cast<std::int32_t>(conns.size()));
  for (std::size_t i = 0; i < conns.size(); ++i) {
    connection c{};
    c.arg_index = conns[i].arg;
    c.m_ip_layout_index = conns[i].ip;
    c.mem_data_index = conns[i].mem;
    put(out, offsetof(connectivity, m_connection) + i * sizeof(connection), c);
  }
  return out;
}

std::size_t align8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

}  // namespace

std::string rnic_kernel_metadata(const std::string& instance, std::uint64_t cu_base) {
  return fmt::format(R"(<?xml version="1.0" encoding="UTF-8"?>
<project name="rnic">
  <platform vendor="xilinx" boardid="u250" name="gen3x16_xdma_4_1" featureRomTime="0">
    <version major="202210" minor="1"/>
    <description/>
    <board name="xilinx.com:au250:1.3" vendor="xilinx.com" fpgaDevice="virtexuplus:xcu250:figd2104:-2L:e"/>
    <build_flow/>
    <host architecture="x86_64"/>
    <device name="fpga0" fpgaDevice="virtexuplus:xcu250:figd2104:-2L:e" addrWidth="0">
      <systemClocks/>
      <core name="OCL_REGION_0" target="hw" type="clc_region" clockFreq="0MHz" numComputeUnits="1">
        <kernel name="rnic_kernel" language="ip_c" vlnv="rnic:kernel:rnic_kernel:1.0" attributes="" hash="" preferredWorkGroupSizeMultiple="0" workGroupSize="1" debug="false" interrupt="false" hwControlProtocol="ap_ctrl_none">
          <port name="s_axi_control" mode="slave" range="{2:#x}" dataWidth="32" portType="addressable" base="0x0"/>
          <port name="m_axi_gmem" mode="master" range="0xFFFFFFFFFFFFFFFF" dataWidth="512" portType="addressable" base="0x0"/>
          <arg name="gmem" addressQualifier="1" id="0" port="m_axi_gmem" size="0x8" offset="0x10" hostOffset="0x0" hostSize="0x8" type="void*"/>
          <instance name="{0}">
            <addrRemap base="{1:#x}" range="{2:#x}" port="s_axi_control"/>
          </instance>
        </kernel>
      </core>
    </device>
  </platform>
</project>
)",
                     instance, cu_base, hw::kMMIO_BYTES);
}

std::vector<char> build(const Spec& spec) {
  std::vector<Section> sections;
  if (!spec.metadata_xml.empty())
    sections.push_back(
        {EMBEDDED_METADATA, "metadata", std::vector<char>(spec.metadata_xml.begin(), spec.metadata_xml.end())});
  for (const auto& [kind, text] : spec.extra_sections)
    sections.push_back({static_cast<axlf_section_kind>(kind), "extra", std::vector<char>(text.begin(), text.end())});
  sections.push_back({MEM_TOPOLOGY, "mem_topology", mem_topology_section(spec.mems)});
  sections.push_back({CONNECTIVITY, "connectivity", connectivity_section(spec.connections)});
  sections.push_back({IP_LAYOUT, "ip_layout", ip_layout_section(spec.ips)});

  const std::size_t header_bytes = sizeof(axlf) + (sections.size() - 1) * sizeof(axlf_section_header);
  std::size_t offset = align8(header_bytes);
  std::vector<axlf_section_header> headers;
  for (const auto& s : sections) {
    axlf_section_header h{};
    h.m_sectionKind = s.kind;
    std::strncpy(h.m_sectionName, s.name, sizeof h.m_sectionName - 1);
    h.m_sectionOffset = offset;
    h.m_sectionSize = s.data.size();
    headers.push_back(h);
    offset = align8(offset + s.data.size());
  }

  std::vector<char> out(offset, 0);
  axlf top{};
  std::memcpy(top.m_magic, "xclbin2", 8);
  top.m_signature_length = -1;
  std::memset(top.reserved, 0xff, sizeof top.reserved);
  top.m_header.m_length = offset;
  top.m_header.m_versionMajor = 2;
  top.m_header.m_versionMinor = 13;
  top.m_header.m_mode = XCLBIN_FLAT;
  copy_name(top.m_header.m_platformVBNV, sizeof top.m_header.m_platformVBNV, spec.platform);
  static_assert(sizeof top.m_header.uuid == std::tuple_size_v<decltype(spec.uuid)>);
  std::memcpy(top.m_header.uuid, spec.uuid.data(), spec.uuid.size());
  top.m_header.m_numSections = static_cast<std::uint32_t>(sections.size());
  std::memcpy(out.data(), &top, offsetof(axlf, m_sections));
  for (std::size_t i = 0; i < headers.size(); ++i)
    put(out, offsetof(axlf, m_sections) + i * sizeof(axlf_section_header), headers[i]);
  for (std::size_t i = 0; i < sections.size(); ++i)
    std::copy(sections[i].data.begin(), sections[i].data.end(),
              out.begin() + static_cast<std::ptrdiff_t>(headers[i].m_sectionOffset));
  return out;
}

}  // namespace rnic::xclbin
