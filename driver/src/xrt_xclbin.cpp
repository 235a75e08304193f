// SPDX-License-Identifier: Apache-2.0
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

// XRT 2.13 sizes a CU's argument list by the largest CONNECTIVITY arg_index (a corrupted index made
// it fill 20 GB); real kernels have a few dozen arguments.
constexpr std::int32_t kMaxKernelArgs = 1024;

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw Error(Errc::kNoDevice, fmt::format("xclbin '{}': {}", path, why));
}

// The bytes the header claims (axlf_header::m_length), and only those: the file's size is never what
// is read (a 1 GiB sparse file claiming 2 KB was read whole). The claim is bounded (kXclbinMaxBytes),
// the file must hold it, and may run past it by at most kXclbinMaxTrailingBytes (a signature).
std::vector<char> read_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec) bad(path, fmt::format("cannot open it: {}", ec.message()));
  if (!fs::is_regular_file(status)) bad(path, "not a regular file");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) bad(path, fmt::format("cannot read its size: {}", ec.message()));
  if (size < sizeof(axlf))
    bad(path, fmt::format("not an xclbin: {} bytes, shorter than the {}-byte axlf header", size, sizeof(axlf)));

  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, fmt::format("cannot open it: {}", std::strerror(errno)));
  std::vector<char> data(sizeof(axlf));
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (static_cast<std::size_t>(in.gcount()) != data.size()) bad(path, "short read of its header");
  axlf top;
  std::memcpy(&top, data.data(), sizeof top);
  if (std::memcmp(top.m_magic, "xclbin2", 8) != 0) bad(path, "not an xclbin: no 'xclbin2' magic");
  const std::uint64_t claim = top.m_header.m_length;
  if (claim > kXclbinMaxBytes)
    bad(path, fmt::format("its header says {} bytes, larger than an xclbin can be ({} bytes)", claim, kXclbinMaxBytes));
  if (claim < sizeof(axlf))
    bad(path, fmt::format("its header says {} bytes, shorter than the {}-byte axlf header", claim, sizeof(axlf)));
  if (claim > size) bad(path, fmt::format("truncated: its header says {} bytes, the file has {}", claim, size));
  if (size - claim > kXclbinMaxTrailingBytes)
    bad(path, fmt::format("the file has {} bytes, its header says {}: {} bytes after the xclbin, more than "
                          "the {} a signature may take (not an xclbin, or a corrupted length)",
                          size, claim, size - claim, kXclbinMaxTrailingBytes));
  data.resize(static_cast<std::size_t>(claim));
  in.read(data.data() + sizeof(axlf), static_cast<std::streamsize>(claim - sizeof(axlf)));
  if (static_cast<std::uint64_t>(in.gcount()) != claim - sizeof(axlf))
    bad(path, fmt::format("short read: the file ended before the {} bytes its header says", claim));
  return data;
}

// Nesting depth of an XML document, counted by a scan (no parser): an element opens a level, its end
// tag closes it; self-closing tags, comments, CDATA, processing instructions and declarations do not
// count, and '>' inside a quoted attribute value does not end a tag. Stops early past `limit`.
int xml_depth(const char* s, std::size_t n, int limit) {
  auto starts = [&](std::size_t i, const char* lit) {
    const std::size_t len = std::strlen(lit);
    return n - i >= len && std::memcmp(s + i, lit, len) == 0;
  };
  auto skip_past = [&](std::size_t i, const char* end) {  // index after the next `end`, or n
    const std::size_t len = std::strlen(end);
    for (; i + len <= n; ++i)
      if (std::memcmp(s + i, end, len) == 0) return i + len;
    return n;
  };
  int depth = 0, deepest = 0;
  std::size_t i = 0;
  while (i < n) {
    if (s[i] != '<') {
      ++i;
    } else if (starts(i, "<!--")) {
      i = skip_past(i + 4, "-->");
    } else if (starts(i, "<![CDATA[")) {
      i = skip_past(i + 9, "]]>");
    } else if (starts(i, "<?")) {
      i = skip_past(i + 2, "?>");
    } else if (starts(i, "</")) {
      if (depth > 0) --depth;
      i = skip_past(i + 2, ">");
    } else if (starts(i, "<!")) {
      i = skip_past(i + 2, ">");
    } else {  // a start tag: find its '>' outside quotes; "/>" closes it at once
      char quote = 0;
      bool closed = false, self = false;
      for (++i; i < n && !closed; ++i) {
        const char c = s[i];
        if (quote != 0) {
          if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
          quote = c;
        } else if (c == '>') {
          closed = true;
          self = s[i - 1] == '/';
        }
      }
      if (!self) {
        deepest = std::max(deepest, ++depth);
        if (deepest > limit) return deepest;
      }
    }
  }
  return deepest;
}

// Nesting depth of a JSON document ({ and [ outside strings). Stops early past `limit`.
int json_depth(const char* s, std::size_t n, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// The sections XRT (or a tool reading the xclbin) parses as XML or JSON, whose nesting is bounded
// before any parser sees them. JSON sections are scanned when they look like JSON (their first
// non-blank byte is '{' or '['); other contents are left to whatever reads them.
void check_metadata_depth(const std::string& path, const std::vector<char>& data, const axlf_section_header& h) {
  const char* what = nullptr;
  bool xml = false;
  switch (h.m_sectionKind) {
    case EMBEDDED_METADATA:
      what = "EMBEDDED_METADATA";
      xml = true;
      break;
    case BUILD_METADATA:
      what = "BUILD_METADATA";
      break;
    case KEYVALUE_METADATA:
      what = "KEYVALUE_METADATA";
      break;
    case SYSTEM_METADATA:
      what = "SYSTEM_METADATA";
      break;
    case AIE_METADATA:
      what = "AIE_METADATA";
      break;
    default:
      return;
  }
  const char* s = data.data() + h.m_sectionOffset;
  const auto n = static_cast<std::size_t>(h.m_sectionSize);
  int depth = 0;
  if (xml) {
    depth = xml_depth(s, n, kXclbinMaxMetadataDepth);
  } else {
    std::size_t first = 0;
    while (first < n && std::isspace(static_cast<unsigned char>(s[first]))) ++first;
    if (first == n || (s[first] != '{' && s[first] != '[')) return;
    depth = json_depth(s + first, n - first, kXclbinMaxMetadataDepth);
  }
  if (depth > kXclbinMaxMetadataDepth)
    bad(path, fmt::format("its {} section ({}) nests deeper than {} levels (refused before XRT's parser, "
                          "which recurses per level)",
                          what, xml ? "XML" : "JSON", kXclbinMaxMetadataDepth));
}

// The entry count of a table section (int32 count, then fixed-size entries), checked against its size.
std::int64_t table_count(const std::string& path, const std::vector<char>& data, const axlf_section_header& h,
                         const char* what, std::size_t entries_at, std::size_t entry_bytes) {
  std::int32_t count = 0;
  if (h.m_sectionSize < sizeof count) bad(path, fmt::format("{} section is empty", what));
  std::memcpy(&count, data.data() + h.m_sectionOffset, sizeof count);
  if (count < 0 || (count > 0 && entries_at + static_cast<std::uint64_t>(count) * entry_bytes > h.m_sectionSize))
    bad(path, fmt::format("{} section claims {} entries, its {} bytes hold fewer", what, count, h.m_sectionSize));
  return count;
}

// Every fixed-size name field of a table is NUL-terminated (XRT reads them as C strings).
void check_names(const std::string& path, const std::vector<char>& data, const axlf_section_header& h, const char* what,
                 std::int64_t count, std::size_t entries_at, std::size_t entry_bytes, std::size_t name_at,
                 std::size_t name_bytes) {
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
    bad(path, fmt::format("not an xclbin: {} bytes, shorter than the {}-byte axlf header", data.size(), sizeof(axlf)));
  axlf top;
  std::memcpy(&top, data.data(), sizeof top);
  if (std::memcmp(top.m_magic, "xclbin2", 8) != 0) bad(path, "not an xclbin: no 'xclbin2' magic");
  if (top.m_header.m_length != data.size())
    bad(path, fmt::format("its header says {} bytes, {} were read", top.m_header.m_length, data.size()));
  const std::uint64_t sections = top.m_header.m_numSections;
  if (sections == 0) bad(path, "it has no sections");
  if (sections > XCLBIN_MAX_NUM_SECTION) bad(path, fmt::format("{} sections is more than an xclbin holds", sections));
  const std::uint64_t headers_end = offsetof(axlf, m_sections) + sections * sizeof(axlf_section_header);
  if (headers_end > data.size())
    bad(path, fmt::format("truncated: {} section headers do not fit in {} bytes", sections, data.size()));
  std::int64_t ips = -1, mems = -1, groups = -1;
  std::vector<axlf_section_header> connectivities;
  for (std::uint64_t i = 0; i < sections; ++i) {
    axlf_section_header h;
    std::memcpy(&h, data.data() + offsetof(axlf, m_sections) + i * sizeof h, sizeof h);
    if (h.m_sectionOffset > data.size() || h.m_sectionSize > data.size() - h.m_sectionOffset)
      bad(path, fmt::format("section {} (kind {}) lies outside the file ({} + {} > {} bytes)", i, h.m_sectionKind,
                            h.m_sectionOffset, h.m_sectionSize, data.size()));
    check_metadata_depth(path, data, h);
    switch (h.m_sectionKind) {
      case IP_LAYOUT:
        ips = table_count(path, data, h, "IP_LAYOUT", offsetof(ip_layout, m_ip_data), sizeof(ip_data));
        check_names(path, data, h, "IP_LAYOUT", ips, offsetof(ip_layout, m_ip_data), sizeof(ip_data),
                    offsetof(ip_data, m_name), sizeof(ip_data::m_name));
        break;
      case MEM_TOPOLOGY:
        mems = table_count(path, data, h, "MEM_TOPOLOGY", offsetof(mem_topology, m_mem_data), sizeof(mem_data));
        check_names(path, data, h, "MEM_TOPOLOGY", mems, offsetof(mem_topology, m_mem_data), sizeof(mem_data),
                    offsetof(mem_data, m_tag), sizeof(mem_data::m_tag));
        break;
      case ASK_GROUP_TOPOLOGY:
        groups = table_count(path, data, h, "GROUP_TOPOLOGY", offsetof(mem_topology, m_mem_data), sizeof(mem_data));
        check_names(path, data, h, "GROUP_TOPOLOGY", groups, offsetof(mem_topology, m_mem_data), sizeof(mem_data),
                    offsetof(mem_data, m_tag), sizeof(mem_data::m_tag));
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
    const std::int64_t n = table_count(path, data, h, what, offsetof(connectivity, m_connection), sizeof(connection));
    const std::int64_t mem_count = group && groups >= 0 ? groups : mems;
    for (std::int64_t i = 0; i < n; ++i) {
      connection c;
      std::memcpy(&c,
                  data.data() + h.m_sectionOffset + offsetof(connectivity, m_connection) +
                      static_cast<std::size_t>(i) * sizeof c,
                  sizeof c);
      if (c.arg_index < 0 || c.arg_index >= kMaxKernelArgs)
        bad(path,
            fmt::format("{} entry {} has argument index {}, outside 0..{}", what, i, c.arg_index, kMaxKernelArgs - 1));
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
  bad(path, fmt::format("{} has no connected {} port (connected ports: {})", ip.get_name(), kXrtGmemPort, join(ports)));
}

XclbinMem usable_mem(const std::string& path, const std::string& ip, const xrt::xclbin::arg& arg) {
  const auto mems = arg.get_mems();
  if (mems.empty()) not_connected(path, ip);
  std::vector<std::string> seen;
  for (const auto& mem : mems) {
    const auto type = mem.get_type();
    const bool streaming =
        type == xrt::xclbin::mem::memory_type::streaming || type == xrt::xclbin::mem::memory_type::streaming_connection;
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
  std::sort(matches.begin(), matches.end(), [](const auto& a, const auto& b) { return a.get_name() < b.get_name(); });
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
