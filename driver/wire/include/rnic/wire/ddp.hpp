// SPDX-License-Identifier: Apache-2.0
// RFC 5041 section 4: the DDP control field and the tagged / untagged headers.
// Encoders append in network byte order; decoders never read past the buffer they are given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp_errors.hpp"
#include "rnic/wire/result.hpp"

namespace rnic::wire {

inline constexpr std::uint8_t kDdpVersion = 1;                           // DV for RFC 5041 (4.1)
inline constexpr std::size_t kTaggedHeaderSize = hw::kTAGGED_HDR_BYTES;  // control + RsvdULP(8) + STag + TO (4.2)
inline constexpr std::size_t kUntaggedHeaderSize =
    hw::kUNTAGGED_HDR_BYTES;  // control + RsvdULP(40) + QN + MSN + MO (4.3)
inline constexpr std::uint64_t kUntaggedRsvdUlpMax = (std::uint64_t{1} << 40) - 1;

// Bits of the control byte, MSB first on the wire: T L Rsvd(4) DV(2).
inline constexpr std::uint8_t kCtrlTagged = 0x80;
inline constexpr std::uint8_t kCtrlLast = 0x40;
inline constexpr std::uint8_t kCtrlRsvdMask = 0x3C;
inline constexpr std::uint8_t kCtrlDvMask = 0x03;

struct ControlField {
  bool tagged = false;
  bool last = false;
  std::uint8_t dv = kDdpVersion;  // 2 bits
  bool operator==(const ControlField& o) const { return tagged == o.tagged && last == o.last && dv == o.dv; }
};

// Rsvd is written as zero on transmit and ignored on receive (4.1). Encoding fails if dv > 3.
Result<std::uint8_t> encode_control(const ControlField& c);
ControlField decode_control(std::uint8_t byte) noexcept;

struct TaggedHeader {
  bool last = false;
  std::uint8_t dv = kDdpVersion;
  std::uint8_t rsvd_ulp = 0;
  std::uint32_t stag = 0;
  std::uint64_t to = 0;
  bool operator==(const TaggedHeader& o) const {
    return last == o.last && dv == o.dv && rsvd_ulp == o.rsvd_ulp && stag == o.stag && to == o.to;
  }
};

struct UntaggedHeader {
  bool last = false;
  std::uint8_t dv = kDdpVersion;
  std::uint64_t rsvd_ulp = 0;  // 40 bits
  std::uint32_t qn = 0;
  std::uint32_t msn = 0;
  std::uint32_t mo = 0;
  bool operator==(const UntaggedHeader& o) const {
    return last == o.last && dv == o.dv && rsvd_ulp == o.rsvd_ulp && qn == o.qn && msn == o.msn && mo == o.mo;
  }
};

using DdpHeader = std::variant<TaggedHeader, UntaggedHeader>;

inline bool is_tagged(const DdpHeader& h) { return std::holds_alternative<TaggedHeader>(h); }
inline bool is_last(const DdpHeader& h) {
  return std::visit([](const auto& x) { return x.last; }, h);
}
inline std::size_t header_size(const DdpHeader& h) { return is_tagged(h) ? kTaggedHeaderSize : kUntaggedHeaderSize; }

// Appends the header to out. Fails (and appends nothing) if a field does not fit its width.
Status encode_header(const DdpHeader& h, std::vector<std::uint8_t>& out);
// Header followed by payload: one DDP segment (4.4).
Result<std::vector<std::uint8_t>> encode_segment(const DdpHeader& h, ConstBytes payload);

struct DecodedSegment {
  DdpHeader header;
  ConstBytes payload;  // a view into the decoded buffer
};

// Decodes one DDP segment occupying the whole buffer. kTruncated if the buffer is shorter than the
// header its T bit announces (an empty buffer included).
Result<DecodedSegment> decode_segment(ConstBytes segment);

// The 7.2 "Invalid DDP version" error for the header's model if DV != 1, else nullopt.
std::optional<DdpError> check_version(const DdpHeader& h) noexcept;

}  // namespace rnic::wire
