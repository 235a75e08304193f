// SPDX-License-Identifier: Apache-2.0
// RFC 5043: DDP over SCTP. Payload formats (5.2), the Adaptation Layer Indication (5.1) and PPIDs.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "rnic/wire/bytes.hpp"
#include "rnic/wire/result.hpp"

namespace rnic::wire {

inline constexpr std::uint32_t kPpidDdpSegment = 16;                     // DDP Segment Chunk (5.2)
inline constexpr std::uint32_t kPpidDdpSessionControl = 17;              // DDP Stream Session Control (5.2)
inline constexpr std::uint16_t kAdaptationIndicationParamType = 0xC006;  // RFC 5061 parameter (5.1)
inline constexpr std::uint16_t kAdaptationIndicationParamLength = 8;
inline constexpr std::uint32_t kDdpAdaptationIndication = 0x00000001;
inline constexpr std::size_t kMaxPrivateData = 512;  // 5.2.3
inline constexpr std::size_t kDdpSsnSize = 2;
inline constexpr std::size_t kSessionControlHeaderSize = 4;  // DDP-SSN + function code

// 5.2.2: 16-bit DDP-SSN followed by one DDP segment.
std::vector<std::uint8_t> encode_segment_chunk(std::uint16_t ddp_ssn, ConstBytes ddp_segment);
struct SegmentChunkView {
  std::uint16_t ddp_ssn = 0;
  ConstBytes ddp_segment;  // view into the chunk; decode with decode_segment()
};
// kTruncated if the chunk is shorter than the DDP-SSN.
Result<SegmentChunkView> decode_segment_chunk(ConstBytes chunk);

// 5.2.3 function codes.
enum class SessionFunction : std::uint16_t {
  kInitiate = 0x001,
  kAccept = 0x002,
  kReject = 0x003,
  kTerminate = 0x004,
};
const char* session_function_name(SessionFunction f) noexcept;

struct SessionControl {
  std::uint16_t ddp_ssn = 0;
  SessionFunction function = SessionFunction::kInitiate;
  std::vector<std::uint8_t> private_data;  // <= 512 bytes; empty on Terminate
  bool operator==(const SessionControl& o) const {
    return ddp_ssn == o.ddp_ssn && function == o.function && private_data == o.private_data;
  }
};
// Refuses an unknown function code, private data over 512 bytes, or any private data on Terminate.
Result<std::vector<std::uint8_t>> encode_session_control(const SessionControl& m);
Result<SessionControl> decode_session_control(ConstBytes message);

// 5.1: the INIT / INIT-ACK parameter Type=0xC006, Length=8, Adaptation Indication.
std::array<std::uint8_t, kAdaptationIndicationParamLength> encode_adaptation_indication(
    std::uint32_t indication = kDdpAdaptationIndication);
// Returns the indication value; kBadParameter for another type or a length other than 8.
Result<std::uint32_t> decode_adaptation_indication(ConstBytes parameter);
inline bool indicates_ddp(std::uint32_t indication) { return indication == kDdpAdaptationIndication; }

}  // namespace rnic::wire
