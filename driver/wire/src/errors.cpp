// SPDX-License-Identifier: Apache-2.0
#include "rnic/wire/ddp_errors.hpp"
#include "rnic/wire/result.hpp"

namespace rnic::wire {

const char* errc_name(Errc e) noexcept {
  switch (e) {
    case Errc::kTruncated:
      return "truncated";
    case Errc::kFieldOutOfRange:
      return "field out of range";
    case Errc::kMessageTooLong:
      return "message too long";
    case Errc::kMulpduTooSmall:
      return "MULPDU too small";
    case Errc::kTaggedOffsetWrap:
      return "tagged offset wraps";
    case Errc::kPrivateDataTooLong:
      return "private data too long";
    case Errc::kPrivateDataOnTerminate:
      return "private data on Terminate";
    case Errc::kUnknownFunctionCode:
      return "unknown function code";
    case Errc::kBadParameter:
      return "bad parameter";
    case Errc::kFraming:
      return "framing";
    case Errc::kFragmented:
      return "descriptor chunk fragmented";
    case Errc::kStrayGatherFlag:
      return "stray gather flag";
  }
  return "unknown error";
}

const char* error_name(DdpError e) noexcept {
  switch (e) {
#define RNIC_DDP_ERROR(name, type, code, desc) \
  case DdpError::k##name:                      \
    return #name;
#include "rnic/hw/ddp_errors.def"
#undef RNIC_DDP_ERROR
  }
  return "?";
}

const char* error_description(DdpError e) noexcept {
  switch (e) {
#define RNIC_DDP_ERROR(name, type, code, desc) \
  case DdpError::k##name:                      \
    return desc;
#include "rnic/hw/ddp_errors.def"
#undef RNIC_DDP_ERROR
  }
  return "?";
}

const char* error_type_name(std::uint8_t type) noexcept {
  switch (type) {
    case 0x0:
      return "Local Catastrophic";
    case 0x1:
      return "Tagged Buffer Error";
    case 0x2:
      return "Untagged Buffer Error";
    case 0x3:
      return "LLP";
    default:
      return "?";
  }
}

std::optional<DdpError> ddp_error_from(std::uint8_t type, std::uint8_t code) noexcept {
  for (DdpError e : kAllDdpErrors) {
    if (error_type(e) == type && error_code(e) == code) return e;
  }
  return std::nullopt;
}

}  // namespace rnic::wire
