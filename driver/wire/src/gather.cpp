// SPDX-License-Identifier: Apache-2.0
// Full-length descriptor chunks (gather.hpp states the rules; docs/transmit.md the design).
#include "rnic/wire/gather.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>

namespace rnic::wire {

namespace {

constexpr std::size_t kMaxChunkLength = std::numeric_limits<std::uint16_t>::max();  // RFC 9260 3.2
constexpr std::size_t kPpidAt = 12;                                                 // RFC 9260 3.3.1
constexpr std::size_t kDdpSsnAt = kSctpDataHeaderBytes;                             // RFC 5043 5.2.2
constexpr std::size_t kDdpHeaderAt = kDdpSsnAt + kDdpSsnSize;
constexpr std::uint8_t kFlagB = 0x02, kFlagE = 0x01;  // RFC 9260 3.3.1: (U, B, E) = bits 2, 1, 0

std::size_t pad4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

std::string num(std::uint64_t v) { return std::to_string(v); }

// Every byte of [p, end) is zero: memcmp against a block of zeros (the library compares a word at a time;
// the scan over a descriptor's zeros was most of the rewrite's cost, tb/net tx_host_path_bench.cpp).
bool all_zero(const std::uint8_t* p, const std::uint8_t* end) {
  static const std::array<std::uint8_t, 4096> zeros{};
  while (p < end) {
    const std::size_t n = std::min(zeros.size(), static_cast<std::size_t>(end - p));
    if (std::memcmp(p, zeros.data(), n) != 0) return false;
    p += n;
  }
  return true;
}

// What one DATA chunk is, for the rewrite.
enum class Kind { kOther, kDescriptor, kFragment };

// Classifies the DATA chunk at c (its length field `length` bytes are inside the packet) and fills *d.
Kind classify(const std::uint8_t* c, std::size_t length, std::size_t index, const DescriptorFilter& is_ours,
              GatherDescriptor* d) {
  if (c[0] != kSctpChunkData || length <= kDdpHeaderAt) return Kind::kOther;
  if (load_be32(c + kPpidAt) != kPpidDdpSegment) return Kind::kOther;
  const bool tagged = decode_control(c[kDdpHeaderAt]).tagged;
  const std::size_t ngd_at = kDdpHeaderAt + (tagged ? kTaggedHeaderSize : kUntaggedHeaderSize);
  if (length < ngd_at + kNgdBytes) return Kind::kOther;  // no room for the NGD record
  const std::uint8_t* ngd = c + ngd_at;
  const std::uint32_t len = load_le32(ngd + hw::kNGD_LEN_OFFSET);
  const std::uint64_t full = ngd_at + std::uint64_t{len};
  const std::uint8_t flags = c[1];
  const bool whole = (flags & kSctpDataFlagsUbe) == kSctpDataFlagsUbe;
  const bool first_fragment = (flags & kFlagB) != 0 && (flags & kFlagE) == 0;
  Kind kind = Kind::kOther;
  if (length == full || (len < kNgdBytes && length == ngd_at + kNgdBytes)) {  // the full or the short form
    kind = whole ? Kind::kDescriptor : Kind::kFragment;                       // B = E = 1 with U clear: sent ordered
  } else if (length < full && first_fragment) {
    kind = Kind::kFragment;  // the first piece of a descriptor's user data
  }
  if (kind == Kind::kOther) return kind;
  d->chunk = index;
  d->tsn = load_be32(c + 4);
  d->sctp_stream = load_be16(c + 8);
  d->stream_seq = load_be16(c + 10);
  d->ddp_ssn = load_be16(c + kDdpSsnAt);
  d->tagged = tagged;
  d->stag = load_le32(ngd + hw::kNGD_STAG_OFFSET);
  d->length = len;
  d->to = load_le64(ngd + hw::kNGD_TO_OFFSET);
  if (!is_ours || !is_ours(*d)) return Kind::kOther;
  // descriptor_user_data's zeros: every byte after the record, up to the length field (scanned last: the
  // only check that reads more than the headers).
  if (!all_zero(ngd + kNgdBytes, c + length)) return Kind::kOther;
  return kind;
}

}  // namespace

Result<std::vector<std::uint8_t>> descriptor_record(const SegmentPlan& plan, std::uint16_t ddp_ssn,
                                                    std::uint32_t local_stag, std::uint64_t local_to) {
  const std::size_t h = header_size(plan.header);
  // The short form: a payload under 16 bytes still gets the whole record (and no zeros).
  const std::uint64_t chunk =
      kSctpDataHeaderBytes + kDdpSsnSize + h + std::max<std::uint64_t>(plan.payload_length, kMinDescriptorPayload);
  if (chunk > kMaxChunkLength) {
    return make_error(Errc::kFieldOutOfRange, "a DATA chunk of " + num(chunk) + " bytes > " + num(kMaxChunkLength) +
                                                  " (RFC 9260 3.2: 16-bit chunk length)");
  }
  std::vector<std::uint8_t> out;
  out.reserve(kDdpSsnSize + h + kNgdBytes);
  put_be16(out, ddp_ssn);
  const Status header = encode_header(plan.header, out);
  if (!header) return make_error(Errc::kFieldOutOfRange, "DDP header: " + header.error().message());
  const std::size_t ngd_at = out.size();
  out.resize(ngd_at + kNgdBytes, 0);
  store_le32(out.data() + ngd_at + hw::kNGD_STAG_OFFSET, local_stag);
  store_le32(out.data() + ngd_at + hw::kNGD_LEN_OFFSET, plan.payload_length);
  store_le64(out.data() + ngd_at + hw::kNGD_TO_OFFSET, local_to);
  return out;
}

Result<std::vector<std::uint8_t>> descriptor_user_data(const SegmentPlan& plan, std::uint16_t ddp_ssn,
                                                       std::uint32_t local_stag, std::uint64_t local_to) {
  auto record = descriptor_record(plan, ddp_ssn, local_stag, local_to);
  if (!record.ok()) return record;
  std::vector<std::uint8_t> out = std::move(record).value();
  out.resize(out.size() + descriptor_zeros(plan), 0);
  return out;
}

Result<GatherSlot> rewrite_for_gather(ConstBytes packet, const DescriptorFilter& is_ours) {
  const std::uint8_t* p = packet.data;
  const std::size_t n = packet.size;
  if (n < kSctpCommonHeaderBytes) {
    return make_error(Errc::kFraming, "a packet of " + num(n) + " bytes < the 12-byte common header");
  }
  GatherSlot s;
  s.packet.reserve(n);
  s.packet.assign(p, p + kSctpCommonHeaderBytes);
  std::size_t stray = SIZE_MAX;  // the first copied chunk with flag bit 7
  std::size_t off = kSctpCommonHeaderBytes;
  for (std::size_t index = 0; off < n; ++index) {
    const auto where = [index, off] { return "chunk " + num(index) + " at byte " + num(off); };
    if (n - off < kSctpChunkHeaderBytes) {
      return make_error(Errc::kFraming, where() + ": " + num(n - off) + " bytes left, a chunk header needs 4");
    }
    const std::uint8_t* c = p + off;
    const std::size_t length = load_be16(c + 2);
    if (length < kSctpChunkHeaderBytes || length > n - off) {
      return make_error(Errc::kFraming, where() + ": length " + num(length) + " (at least 4, at most the " +
                                            num(n - off) + " bytes left)");
    }
    const std::size_t span = std::min(pad4(length), n - off);
    GatherDescriptor d;
    switch (classify(c, length, index, is_ours, &d)) {
      case Kind::kDescriptor: {
        const std::size_t at = s.packet.size();
        s.packet.insert(s.packet.end(), c, c + slot_descriptor_bytes(d.tagged));
        s.packet[at + 1] = static_cast<std::uint8_t>(c[1] | kDataFlagGather);
        // The length on the wire, 16 + 2 + H + LEN: what usrsctp made for the full form, less for the short.
        store_be16(s.packet.data() + at + 2,
                   static_cast<std::uint16_t>(slot_descriptor_bytes(d.tagged) - kNgdBytes + d.length));
        s.descriptors.push_back(d);
        break;
      }
      case Kind::kFragment:
        return make_error(Errc::kFragmented,
                          where() + " (TSN " + num(d.tsn) + ", SCTP stream " + num(d.sctp_stream) + ", DDP-SSN " +
                              num(d.ddp_ssn) + ", flags " + num(c[1]) +
                              ((c[1] & kSctpDataFlagsUbe) == (kFlagB | kFlagE)
                                   ? "): a descriptor chunk sent ordered (U clear)"
                                   : "): a descriptor chunk was fragmented: path MTU below the segment size"));
      case Kind::kOther:
        if ((c[1] & kDataFlagGather) != 0 && stray == SIZE_MAX) stray = index;
        s.packet.insert(s.packet.end(), c, c + span);
        break;
    }
    off += span;
  }
  s.gather = !s.descriptors.empty();
  if (s.gather && stray != SIZE_MAX) {
    return make_error(
        Errc::kStrayGatherFlag,
        "chunk " + num(stray) +
            " is no descriptor but has flag bit 7 (NET_DATA_FLAG_GATHER) set, in a packet with descriptors");
  }
  return s;
}

Result<PacketSummary> summarize_packet(ConstBytes packet) {
  const std::uint8_t* p = packet.data;
  const std::size_t n = packet.size;
  if (n < kSctpCommonHeaderBytes) {
    return make_error(Errc::kFraming, "a packet of " + num(n) + " bytes < the 12-byte common header");
  }
  PacketSummary s;
  s.verification_tag = load_be32(p + 4);
  for (std::size_t off = kSctpCommonHeaderBytes, index = 0; off < n; ++index) {
    const std::uint8_t* c = p + off;
    const std::size_t length = n - off < kSctpChunkHeaderBytes ? 0 : load_be16(c + 2);
    if (length < kSctpChunkHeaderBytes || length > n - off) {
      return make_error(Errc::kFraming, "chunk " + num(index) + " at byte " + num(off) + ": length " + num(length) +
                                            " with " + num(n - off) + " bytes left");
    }
    if (c[0] == kSctpChunkData || c[0] == kSctpChunkSack) {
      if (length < kSctpDataHeaderBytes) {
        return make_error(Errc::kFraming,
                          "chunk " + num(index) + " (type " + num(c[0]) + ") of " + num(length) + " bytes < 16");
      }
      if (c[0] == kSctpChunkSack) {
        s.cumulative_tsn_acks.push_back(load_be32(c + 4));
      } else {
        DataChunkSummary d;
        d.tsn = load_be32(c + 4);
        d.sctp_stream = load_be16(c + 8);
        d.ddp_segment = load_be32(c + kPpidAt) == kPpidDdpSegment && length >= kDdpHeaderAt &&
                        (c[1] & kSctpDataFlagsUbe) == kSctpDataFlagsUbe;
        if (d.ddp_segment) d.ddp_ssn = load_be16(c + kDdpSsnAt);
        s.data.push_back(d);
      }
    }
    off += std::min(pad4(length), n - off);
  }
  return s;
}

}  // namespace rnic::wire
