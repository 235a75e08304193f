// SPDX-License-Identifier: Apache-2.0
// Checks an xclbin for the XRT backend before any card is touched: the container is well formed, it
// holds the rnic_kernel IP with the full MMIO range, and its m_axi_gmem port is connected to a memory
// bank the backend can allocate DMA memory in. Everything it finds is returned as plain data so the
// tests (and error messages) can look at it without XRT headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xrt {
class xclbin;
}

namespace rnic::detail {

inline constexpr const char* kXrtKernelName = "rnic_kernel";
inline constexpr const char* kXrtGmemPort = "m_axi_gmem";

// What inspect_xclbin reads and hands to XRT is bounded before XRT sees a byte:
// - the header's length claim (axlf_header::m_length), at most this (real xclbins with a full
//   bitstream are tens of MB); only the claimed bytes are read, never the file's size;
inline constexpr std::uint64_t kXclbinMaxBytes = std::uint64_t{1} << 30;
// - bytes after the claimed length (xclbinutil appends a signature there), at most this;
inline constexpr std::uint64_t kXclbinMaxTrailingBytes = std::uint64_t{1} << 20;
// - nesting of the XML (EMBEDDED_METADATA) and JSON (BUILD/KEYVALUE/SYSTEM/AIE_METADATA) sections:
//   XRT's parsers recurse once per level (100,000 levels overflow the stack); a v++ kernel.xml is
//   about 8 deep.
inline constexpr int kXclbinMaxMetadataDepth = 64;

struct XclbinMem {
  std::int32_t index = -1;  // index in MEM_TOPOLOGY: the xrt::bo memory group
  std::string tag;          // "HOST[0]", "bank0", "HBM[3]", ...
  std::uint8_t type = 0;    // MEM_TYPE (xclbin.h)
  bool host = false;        // MEM_HOST: host memory the card reaches over PCIe (host-only BOs)
  std::uint64_t base = 0;   // base address of the bank in the card's address space
  std::uint64_t size_kb = 0;
};

struct XclbinInfo {
  std::string path;
  std::string uuid;                 // XRT's text form
  std::string platform;             // VBNV the xclbin was linked for
  std::vector<std::string> ips;     // every IP_LAYOUT entry, in file order
  std::string ip_name;              // the rnic_kernel CU as IP_LAYOUT names it: "rnic_kernel:rnic_kernel_1"
  std::string ip_open_name;         // what xrt::ip is opened with: "rnic_kernel:{rnic_kernel_1}"
  std::uint64_t base_address = 0;   // of its AXI4-Lite control space
  std::uint64_t control_bytes = 0;  // its address range (kernel metadata), >= hw::kMMIO_BYTES
  bool free_running = false;        // IP_LAYOUT control type is ap_ctrl_none
  std::string gmem_arg;             // argument name of m_axi_gmem ("" without kernel metadata)
  XclbinMem gmem;                   // the bank m_axi_gmem is connected to
};

// Throws rnic::Error: kInvalidArgument for an empty path; kNoDevice for a file that cannot be read,
// is not a well-formed xclbin (including the bounds above), has no rnic_kernel IP (the message lists what it has),
// gives the kernel less than hw::kMMIO_BYTES of control space, or connects no usable memory to m_axi_gmem.
XclbinInfo inspect_xclbin(const std::string& path);
// The same, also handing out XRT's parse of the file (for device.load_xclbin); parsed != nullptr.
XclbinInfo inspect_xclbin(const std::string& path, xrt::xclbin* parsed);

}  // namespace rnic::detail
