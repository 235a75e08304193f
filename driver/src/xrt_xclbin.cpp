#include "xrt_xclbin.hpp"

#include <experimental/xrt_xclbin.h>
#include <fmt/format.h>
#include <xrt/xclbin.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "rnic/driver/rnic.hpp"
#include "rnic/hw/hw.hpp"

namespace rnic::detail {
namespace {

// Real xclbins with a full bitstream are tens of MB; anything past this is not one.
constexpr std::uintmax_t kMaxXclbinBytes = std::uintmax_t{1} << 30;
// XRT 2.13 sizes a CU's argument list by the largest CONNECTIVITY arg_index (a corrupted index made
// it fill 20 GB); real kernels have a few dozen arguments.
constexpr std::int32_t kMaxKernelArgs = 1024;

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw Error(Errc::kNoDevice, fmt::format("xclbin '{}': {}", path, why));
}

std::vector<char> read_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec) bad(path, fmt::format("cannot open it: {}", ec.message()));
  if (!fs::is_regular_file(status)) bad(path, "not a regular file");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) bad(path, fmt::format("cannot read its size: {}", ec.message()));
  if (size > kMaxXclbinBytes) bad(path, fmt::format("{} bytes is too large for an xclbin", size));

  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, fmt::format("cannot open it: {}", std::strerror(errno)));
  std::vector<char> data(static_cast<std::size_t>(size));
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (static_cast<std::uintmax_t>(in.gcount()) != size) bad(path, "short read");
  return data;
}

// The entry count of a table section (int32 count, then fixed-size entries), checked against its size.
std::int64_t table_count(const std::string& path, const std::vector<char>& data, const axlf_section_header& h,
                         const char* what, std::size_t entries_at, std::size_t entry_bytes) {
  std::int32_t count = 0;
  if (h.m_sectionSize < sizeof count) bad(path, fmt::format("{} section is empty", what));
  std::memcpy(&count, data.data() + h.m_sectionOffset, sizeof count);
  if (count < 0 ||
      (count > 0 && entries_at + static_cast<std::uint64_t>(count) * entry_bytes > h.m_sectionSize))
    bad(path,
        fmt::format("{} section claims {} entries, its {} bytes hold fewer", what, count, h.m_sectionSize));
  return count;
}

// Every fixed-size name field of a table is NUL-terminated (XRT reads them as C strings).
void check_names(const std::string& path, const std::vector<char>& data, const axlf_section_header& h,
                 const char* what, std::int64_t count, std::size_t entries_at, std::size_t entry_bytes,
                 std::size_t name_at, std::size_t name_bytes) {
  for (std::int64_t i = 0; i < count; ++i) {
    const char* name =
        data.data() + h.m_sectionOffset + entries_at + static_cast<std::size_t>(i) * entry_bytes + name_at;
    if (std::memchr(name, '\0', name_bytes) == nullptr)
      bad(path, fmt::format("{} entry {} has an unterminated name", what, i));
  }
}

// XRT 2.13 trusts the container (an empty file crashes xrt::xclbin), so the layout is checked here:
// magic, length, and every section header inside the file.
void check_container(const std::string& path, const std::vector<char>& data) {
  if (data.size() < sizeof(axlf))
    bad(path, fmt::format("not an xclbin: {} bytes, shorter than the {}-byte axlf header", data.size(),
                          sizeof(axlf)));
  axlf top;
  std::memcpy(&top, data.data(), sizeof top);
  if (std::memcmp(top.m_magic, "xclbin2", 8) != 0) bad(path, "not an xclbin: no 'xclbin2' magic");
  if (top.m_header.m_length > data.size())
    bad(path, fmt::format("truncated: its header says {} bytes, the file has {}", top.m_header.m_length,
                          data.size()));
  const std::uint64_t sections = top.m_header.m_numSections;
  if (sections == 0) bad(path, "it has no sections");
  if (sections > XCLBIN_MAX_NUM_SECTION)
    bad(path, fmt::format("{} sections is more than an xclbin holds", sections));
  const std::uint64_t headers_end = offsetof(axlf, m_sections) + sections * sizeof(axlf_section_header);
  if (headers_end > data.size())
    bad(path, fmt::format("truncated: {} section headers do not fit in {} bytes", sections, data.size()));
  std::int64_t ips = -1, mems = -1, groups = -1;
  std::vector<axlf_section_header> connectivities;
  for (std::uint64_t i = 0; i < sections; ++i) {
    axlf_section_header h;
    std::memcpy(&h, data.data() + offsetof(axlf, m_sections) + i * sizeof h, sizeof h);
    if (h.m_sectionOffset > data.size() || h.m_sectionSize > data.size() - h.m_sectionOffset)
      bad(path, fmt::format("section {} (kind {}) lies outside the file ({} + {} > {} bytes)", i,
                            h.m_sectionKind, h.m_sectionOffset, h.m_sectionSize, data.size()));
    switch (h.m_sectionKind) {
      case IP_LAYOUT:
        ips = table_count(path, data, h, "IP_LAYOUT", offsetof(ip_layout, m_ip_data), sizeof(ip_data));
        check_names(path, data, h, "IP_LAYOUT", ips, offsetof(ip_layout, m_ip_data), sizeof(ip_data),
                    offsetof(ip_data, m_name), sizeof(ip_data::m_name));
        break;
      case MEM_TOPOLOGY:
        mems =
            table_count(path, data, h, "MEM_TOPOLOGY", offsetof(mem_topology, m_mem_data), sizeof(mem_data));
        check_names(path, data, h, "MEM_TOPOLOGY", mems, offsetof(mem_topology, m_mem_data), sizeof(mem_data),
                    offsetof(mem_data, m_tag), sizeof(mem_data::m_tag));
        break;
      case ASK_GROUP_TOPOLOGY:
        groups = table_count(path, data, h, "GROUP_TOPOLOGY", offsetof(mem_topology, m_mem_data),
                             sizeof(mem_data));
        check_names(path, data, h, "GROUP_TOPOLOGY", groups, offsetof(mem_topology, m_mem_data),
                    sizeof(mem_data), offsetof(mem_data, m_tag), sizeof(mem_data::m_tag));
        break;
      case CONNECTIVITY:
      case ASK_GROUP_CONNECTIVITY:
        connectivities.push_back(h);
        break;
      default:
        break;
    }
  }
  // XRT indexes IP_LAYOUT and the memory tables with these numbers unchecked.
  for (const auto& h : connectivities) {
    const bool group = h.m_sectionKind == ASK_GROUP_CONNECTIVITY;
    const char* what = group ? "GROUP_CONNECTIVITY" : "CONNECTIVITY";
    const std::int64_t n =
        table_count(path, data, h, what, offsetof(connectivity, m_connection), sizeof(connection));
    const std::int64_t mem_count = group && groups >= 0 ? groups : mems;
    for (std::int64_t i = 0; i < n; ++i) {
      connection c;
      std::memcpy(&c,
                  data.data() + h.m_sectionOffset + offsetof(connectivity, m_connection) +
                      static_cast<std::size_t>(i) * sizeof c,
                  sizeof c);
      if (c.arg_index < 0 || c.arg_index >= kMaxKernelArgs)
        bad(path, fmt::format("{} entry {} has argument index {}, outside 0..{}", what, i, c.arg_index,
                              kMaxKernelArgs - 1));
      if (c.m_ip_layout_index < 0 || c.m_ip_layout_index >= ips || c.mem_data_index < 0 ||
          c.mem_data_index >= mem_count)
        bad(path, fmt::format("{} entry {} (arg {}, ip {}, mem {}) points outside IP_LAYOUT ({} entries) "
                              "or the memory topology ({} entries)",
                              what, i, c.arg_index, c.m_ip_layout_index, c.mem_data_index,
                              std::max<std::int64_t>(ips, 0), std::max<std::int64_t>(mem_count, 0)));
    }
  }
}

bool equals_nocase(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool is_rnic_ip(const std::string& name) {
  const std::string kernel = kXrtKernelName;
  return name == kernel || name.rfind(kernel + ":", 0) == 0;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

[[noreturn]] void not_connected(const std::string& path, const std::string& ip) {
  bad(path, fmt::format("its CONNECTIVITY connects no memory to {}'s {} (link it with v++ "
                        "--connectivity.sp <cu>.{}:HOST[0] or a DDR/HBM bank)",
                        ip, kXrtGmemPort, kXrtGmemPort));
}

// The argument driving m_axi_gmem: by port name when the xclbin carries kernel metadata; without it
// XRT knows connections but not names, so a single connected argument is taken as the port.
xrt::xclbin::arg gmem_arg(const std::string& path, const xrt::xclbin::ip& ip) {
  const auto args = ip.get_args();
  for (const auto& arg : args)
    if (equals_nocase(arg.get_port(), kXrtGmemPort)) return arg;
  if (args.size() == 1 && args.front().get_port().empty()) return args.front();
  if (args.empty()) not_connected(path, ip.get_name());
  std::vector<std::string> ports;
  for (const auto& arg : args) ports.push_back(arg.get_port().empty() ? "(unnamed)" : arg.get_port());
  bad(path, fmt::format("{} has no connected {} port (connected ports: {})", ip.get_name(), kXrtGmemPort,
                        join(ports)));
}

XclbinMem usable_mem(const std::string& path, const std::string& ip, const xrt::xclbin::arg& arg) {
  const auto mems = arg.get_mems();
  if (mems.empty()) not_connected(path, ip);
  std::vector<std::string> seen;
  for (const auto& mem : mems) {
    const auto type = mem.get_type();
    const bool streaming = type == xrt::xclbin::mem::memory_type::streaming ||
                           type == xrt::xclbin::mem::memory_type::streaming_connection;
    if (mem.get_used() && !streaming && mem.get_index() >= 0) {
      XclbinMem out;
      out.index = mem.get_index();
      out.tag = mem.get_tag();
      out.type = static_cast<std::uint8_t>(type);
      out.host = type == xrt::xclbin::mem::memory_type::host;
      out.base = mem.get_base_address();
      out.size_kb = mem.get_size_kb();
      return out;
    }
    seen.push_back(mem.get_tag() + (mem.get_used() ? " (streaming)" : " (unused)"));
  }
  bad(path, fmt::format("{}'s {} is connected to no usable memory bank{}", ip, kXrtGmemPort,
                        seen.empty() ? std::string() : " (only " + join(seen) + ")"));
}

XclbinInfo describe(const std::string& path, const xrt::xclbin& xclbin) {
  XclbinInfo info;
  info.path = path;
  info.uuid = xclbin.get_uuid().to_string();
  info.platform = xclbin.get_xsa_name();

  std::vector<xrt::xclbin::ip> matches;
  for (const auto& ip : xclbin.get_ips()) {
    info.ips.push_back(ip.get_name());
    if (is_rnic_ip(ip.get_name())) matches.push_back(ip);
  }
  if (matches.empty())
    bad(path, fmt::format("no {} IP (it contains: {})", kXrtKernelName,
                          info.ips.empty() ? std::string("no IPs") : join(info.ips)));
  // Several CUs: the first by name drives this card (documented in docs/xrt-backend.md).
  std::sort(matches.begin(), matches.end(),
            [](const auto& a, const auto& b) { return a.get_name() < b.get_name(); });
  const auto& ip = matches.front();
  info.ip_name = ip.get_name();
  const auto colon = info.ip_name.find(':');
  info.ip_open_name = colon == std::string::npos
                          ? info.ip_name
                          : info.ip_name.substr(0, colon + 1) + "{" + info.ip_name.substr(colon + 1) + "}";
  info.base_address = ip.get_base_address();
  info.control_bytes = ip.get_size();
  info.free_running = ip.get_control_type() == xrt::xclbin::ip::control_type::none;
  if (info.control_bytes < hw::kMMIO_BYTES)
    bad(path, fmt::format("{} has {:#x} bytes of control space, the register map needs {:#x} (the "
                          "kernel metadata is missing or declares a smaller s_axi_control range)",
                          info.ip_name, info.control_bytes, hw::kMMIO_BYTES));

  const auto arg = gmem_arg(path, ip);
  info.gmem_arg = arg.get_name();
  info.gmem = usable_mem(path, info.ip_name, arg);
  return info;
}

}  // namespace

XclbinInfo inspect_xclbin(const std::string& path, xrt::xclbin* parsed) {
  if (path.empty()) throw Error(Errc::kInvalidArgument, "xrt needs an xclbin: --xclbin or RNIC_XCLBIN");
  const std::vector<char> data = read_file(path);
  check_container(path, data);
  xrt::xclbin xclbin;
  try {
    xclbin = xrt::xclbin(data);
  } catch (const std::exception& e) {
    bad(path, fmt::format("XRT cannot parse it: {}", e.what()));
  }
  XclbinInfo info;
  try {
    info = describe(path, xclbin);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    bad(path, fmt::format("XRT cannot read its metadata: {}", e.what()));
  }
  if (parsed != nullptr) *parsed = std::move(xclbin);
  return info;
}

XclbinInfo inspect_xclbin(const std::string& path) { return inspect_xclbin(path, nullptr); }

}  // namespace rnic::detail
