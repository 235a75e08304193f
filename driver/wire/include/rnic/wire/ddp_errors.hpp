// SPDX-License-Identifier: Apache-2.0
// The RFC 5041 7.2 error table as one enum: value = (type << 8) | code.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace rnic::wire {

enum class DdpError : std::uint16_t {
#define RNIC_DDP_ERROR(name, type, code, desc) k##name = ((type) << 8) | (code),
#include "rnic/hw/ddp_errors.def"
#undef RNIC_DDP_ERROR
};

// Every row of the table, in RFC order.
inline constexpr std::array kAllDdpErrors{
#define RNIC_DDP_ERROR(name, type, code, desc) DdpError::k##name,
#include "rnic/hw/ddp_errors.def"
#undef RNIC_DDP_ERROR
};

// 4-bit Error Type and 8-bit Error Code of RFC 5041 7.2.
constexpr std::uint8_t error_type(DdpError e) { return static_cast<std::uint8_t>(static_cast<std::uint16_t>(e) >> 8); }
constexpr std::uint8_t error_code(DdpError e) {
  return static_cast<std::uint8_t>(static_cast<std::uint16_t>(e) & 0xFF);
}

// "TaggedInvalidStag"; "?" for a value outside the table.
const char* error_name(DdpError e) noexcept;
// The RFC's description, e.g. "Invalid STag".
const char* error_description(DdpError e) noexcept;
// The RFC's error-type heading: "Local Catastrophic", "Tagged Buffer Error", "Untagged Buffer Error", "LLP".
const char* error_type_name(std::uint8_t type) noexcept;
// Table lookup by (type, code); nullopt when the pair is not in 7.2.
std::optional<DdpError> ddp_error_from(std::uint8_t type, std::uint8_t code) noexcept;

}  // namespace rnic::wire
