// SPDX-License-Identifier: Apache-2.0
// The parts of the XRT backend that need no card: argument checks and the published-state file.
// Separate so the system tests can exercise them on a machine without an Alveo card.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace rnic::detail {

inline constexpr std::size_t kXrtPageBytes = 4096;  // xrt::bo allocations are page aligned

// kInvalidArgument unless offset is a 32-bit aligned register inside hw::kMMIO_BYTES; op names the call.
void check_xrt_mmio_offset(std::uint32_t offset, const char* op);
// kInvalidArgument unless bytes > 0 and align is a power of two in [64, kXrtPageBytes].
void check_xrt_alloc(std::size_t bytes, std::size_t align);

// Where the owner of xrt:<index> publishes its tables: $XDG_RUNTIME_DIR/rnic-xrt<index>.json, or
// /tmp/rnic-xrt<index>.json when XDG_RUNTIME_DIR is unset or empty.
std::string xrt_state_path(unsigned index);
// Replaces path with json atomically (temporary file in the same directory, then rename; mode 0600).
// kBackend naming the path on failure.
void write_state_file(const std::string& path, const std::string& json);
// The file's contents; "" when it does not exist; kBackend on any other failure.
std::string read_state_file(const std::string& path);

}  // namespace rnic::detail
