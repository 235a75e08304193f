// SPDX-License-Identifier: Apache-2.0
#include "rnic/wire/ddp.hpp"

#include <string>

namespace rnic::wire {

Result<std::uint8_t> encode_control(const ControlField& c) {
  if (c.dv > kCtrlDvMask) {
    return make_error(Errc::kFieldOutOfRange, "DV " + std::to_string(c.dv) + " does not fit 2 bits");
  }
  std::uint8_t b = c.dv;
  if (c.tagged) b |= kCtrlTagged;
  if (c.last) b |= kCtrlLast;
  return b;  // Rsvd bits stay zero (4.1)
}

ControlField decode_control(std::uint8_t byte) noexcept {
  ControlField c;
  c.tagged = (byte & kCtrlTagged) != 0;
  c.last = (byte & kCtrlLast) != 0;
  c.dv = byte & kCtrlDvMask;  // Rsvd is not checked on receive (4.1)
  return c;
}

namespace {

struct HeaderEncoder {
  std::vector<std::uint8_t>& out;

  Status operator()(const TaggedHeader& h) const {
    auto ctrl = encode_control({true, h.last, h.dv});
    if (!ctrl) return ctrl.error();
    out.push_back(*ctrl);
    out.push_back(h.rsvd_ulp);
    put_be32(out, h.stag);
    put_be64(out, h.to);
    return Ok{};
  }

  Status operator()(const UntaggedHeader& h) const {
    auto ctrl = encode_control({false, h.last, h.dv});
    if (!ctrl) return ctrl.error();
    if (h.rsvd_ulp > kUntaggedRsvdUlpMax) {
      return make_error(Errc::kFieldOutOfRange, "untagged RsvdULP does not fit 40 bits");
    }
    out.push_back(*ctrl);
    out.push_back(static_cast<std::uint8_t>(h.rsvd_ulp >> 32));
    put_be32(out, static_cast<std::uint32_t>(h.rsvd_ulp));
    put_be32(out, h.qn);
    put_be32(out, h.msn);
    put_be32(out, h.mo);
    return Ok{};
  }
};

}  // namespace

Status encode_header(const DdpHeader& h, std::vector<std::uint8_t>& out) { return std::visit(HeaderEncoder{out}, h); }

Result<std::vector<std::uint8_t>> encode_segment(const DdpHeader& h, ConstBytes payload) {
  std::vector<std::uint8_t> out;
  out.reserve(header_size(h) + payload.size);
  auto st = encode_header(h, out);
  if (!st) return st.error();
  out.insert(out.end(), payload.data, payload.data + payload.size);
  return out;
}

Result<DecodedSegment> decode_segment(ConstBytes seg) {
  if (seg.size == 0) return make_error(Errc::kTruncated, "empty buffer has no DDP control field");
  const std::uint8_t* p = seg.data;
  ControlField c = decode_control(p[0]);
  if (c.tagged) {
    if (seg.size < kTaggedHeaderSize) {
      return make_error(Errc::kTruncated, "tagged DDP header needs 14 bytes, buffer has " + std::to_string(seg.size));
    }
    TaggedHeader h;
    h.last = c.last;
    h.dv = c.dv;
    h.rsvd_ulp = p[1];
    h.stag = load_be32(p + 2);
    h.to = load_be64(p + 6);
    return DecodedSegment{h, seg.subview(kTaggedHeaderSize)};
  }
  if (seg.size < kUntaggedHeaderSize) {
    return make_error(Errc::kTruncated, "untagged DDP header needs 18 bytes, buffer has " + std::to_string(seg.size));
  }
  UntaggedHeader h;
  h.last = c.last;
  h.dv = c.dv;
  h.rsvd_ulp = (std::uint64_t{p[1]} << 32) | load_be32(p + 2);
  h.qn = load_be32(p + 6);
  h.msn = load_be32(p + 10);
  h.mo = load_be32(p + 14);
  return DecodedSegment{h, seg.subview(kUntaggedHeaderSize)};
}

std::optional<DdpError> check_version(const DdpHeader& h) noexcept {
  if (is_tagged(h)) {
    if (std::get<TaggedHeader>(h).dv != kDdpVersion) return DdpError::kTaggedInvalidVersion;
  } else if (std::get<UntaggedHeader>(h).dv != kDdpVersion) {
    return DdpError::kUntaggedInvalidVersion;
  }
  return std::nullopt;
}

}  // namespace rnic::wire
