// SPDX-License-Identifier: Apache-2.0
#include "rnic/wire/sctp_ddp.hpp"

#include <string>

namespace rnic::wire {

std::vector<std::uint8_t> encode_segment_chunk(std::uint16_t ddp_ssn, ConstBytes ddp_segment) {
  std::vector<std::uint8_t> out;
  out.reserve(kDdpSsnSize + ddp_segment.size);
  put_be16(out, ddp_ssn);
  out.insert(out.end(), ddp_segment.data, ddp_segment.data + ddp_segment.size);
  return out;
}

Result<SegmentChunkView> decode_segment_chunk(ConstBytes chunk) {
  if (chunk.size < kDdpSsnSize) {
    return make_error(Errc::kTruncated, "DDP Segment Chunk of " + std::to_string(chunk.size) + " bytes has no DDP-SSN");
  }
  return SegmentChunkView{load_be16(chunk.data), chunk.subview(kDdpSsnSize)};
}

const char* session_function_name(SessionFunction f) noexcept {
  switch (f) {
    case SessionFunction::kInitiate:
      return "Initiate";
    case SessionFunction::kAccept:
      return "Accept";
    case SessionFunction::kReject:
      return "Reject";
    case SessionFunction::kTerminate:
      return "Terminate";
  }
  return "?";
}

namespace {

Status check_session_control(std::uint16_t code, std::size_t private_len) {
  if (code < static_cast<std::uint16_t>(SessionFunction::kInitiate) ||
      code > static_cast<std::uint16_t>(SessionFunction::kTerminate)) {
    return make_error(Errc::kUnknownFunctionCode,
                      "function code " + std::to_string(code) + " is not Initiate/Accept/Reject/Terminate");
  }
  if (private_len > kMaxPrivateData) {
    return make_error(Errc::kPrivateDataTooLong,
                      std::to_string(private_len) + " bytes of private data; RFC 5043 5.2.3 allows 512");
  }
  if (code == static_cast<std::uint16_t>(SessionFunction::kTerminate) && private_len != 0) {
    return make_error(Errc::kPrivateDataOnTerminate,
                      "Terminate carries " + std::to_string(private_len) + " bytes of private data");
  }
  return Ok{};
}

}  // namespace

Result<std::vector<std::uint8_t>> encode_session_control(const SessionControl& m) {
  const auto code = static_cast<std::uint16_t>(m.function);
  if (auto st = check_session_control(code, m.private_data.size()); !st) return st.error();
  std::vector<std::uint8_t> out;
  out.reserve(kSessionControlHeaderSize + m.private_data.size());
  put_be16(out, m.ddp_ssn);
  put_be16(out, code);
  out.insert(out.end(), m.private_data.begin(), m.private_data.end());
  return out;
}

Result<SessionControl> decode_session_control(ConstBytes msg) {
  if (msg.size < kSessionControlHeaderSize) {
    return make_error(Errc::kTruncated, "Stream Session Control of " + std::to_string(msg.size) +
                                            " bytes; needs DDP-SSN and function code");
  }
  const std::uint16_t code = load_be16(msg.data + 2);
  const ConstBytes priv = msg.subview(kSessionControlHeaderSize);
  if (auto st = check_session_control(code, priv.size); !st) return st.error();
  SessionControl m;
  m.ddp_ssn = load_be16(msg.data);
  m.function = static_cast<SessionFunction>(code);
  m.private_data = priv.to_vector();
  return m;
}

std::array<std::uint8_t, kAdaptationIndicationParamLength> encode_adaptation_indication(std::uint32_t indication) {
  return {static_cast<std::uint8_t>(kAdaptationIndicationParamType >> 8),
          static_cast<std::uint8_t>(kAdaptationIndicationParamType & 0xFF),
          0,
          kAdaptationIndicationParamLength,
          static_cast<std::uint8_t>(indication >> 24),
          static_cast<std::uint8_t>(indication >> 16),
          static_cast<std::uint8_t>(indication >> 8),
          static_cast<std::uint8_t>(indication)};
}

Result<std::uint32_t> decode_adaptation_indication(ConstBytes param) {
  if (param.size < 4) return make_error(Errc::kTruncated, "SCTP parameter header needs 4 bytes");
  const std::uint16_t type = load_be16(param.data);
  const std::uint16_t length = load_be16(param.data + 2);
  if (type != kAdaptationIndicationParamType) {
    return make_error(Errc::kBadParameter,
                      "parameter type " + std::to_string(type) + " is not Adaptation Layer Indication (0xC006)");
  }
  if (length != kAdaptationIndicationParamLength) {
    return make_error(Errc::kBadParameter,
                      "Adaptation Layer Indication length " + std::to_string(length) + ", expected 8");
  }
  if (param.size < kAdaptationIndicationParamLength) {
    return make_error(Errc::kTruncated,
                      "Adaptation Layer Indication needs 8 bytes, buffer has " + std::to_string(param.size));
  }
  return load_be32(param.data + 4);
}

}  // namespace rnic::wire
