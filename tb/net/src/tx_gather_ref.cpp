// SPDX-License-Identifier: Apache-2.0
// The transmit gather reference (tx_gather_ref.hpp states the rules; docs/transmit.md the design).
#include "rnic/tb/tx_gather_ref.hpp"

#include <algorithm>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/hw/hw.hpp"

namespace rnic::tb::net {

const char* tx_drop_name(TxDrop d) noexcept {
  switch (d) {
    case TxDrop::kNone:
      return "sent";
    case TxDrop::kAssociation:
      return "association";
    case TxDrop::kFraming:
      return "framing";
    case TxDrop::kMarkOutsideData:
      return "gather mark outside a DATA chunk";
    case TxDrop::kFragment:
      return "fragment";
    case TxDrop::kPpid:
      return "PPID";
    case TxDrop::kStream:
      return "stream";
    case TxDrop::kLength:
      return "length";
    case TxDrop::kStag:
      return "STag";
    case TxDrop::kLocalRead:
      return "local read";
    case TxDrop::kProtectionDomain:
      return "protection domain";
    case TxDrop::kBounds:
      return "bounds";
    case TxDrop::kReadError:
      return "read error";
    case TxDrop::kTooLong:
      return "too long";
  }
  return "?";
}

namespace {

constexpr std::uint8_t kGather = static_cast<std::uint8_t>(hw::kNET_DATA_FLAG_GATHER);
constexpr std::size_t kMaxWire = hw::kNET_MAX_PACKET_BYTES;

// Rule 4: the STag checks for a read of len > 0 bytes at `to` for DDP stream `stream`. On success,
// *addr is the host address of the first byte.
TxDrop check_stag(const TxTables& t, std::uint32_t stag, std::uint64_t to, std::uint64_t len, std::uint16_t stream,
                  std::uint64_t* addr) {
  const std::size_t index = stag >> 8;
  if (index >= t.stags.size()) return TxDrop::kStag;
  const TxStag& e = t.stags[index];
  if (!e.valid || e.key != (stag & 0xFF)) return TxDrop::kStag;
  if (!e.local_read) return TxDrop::kLocalRead;
  if (stream >= t.stream_pd.size() || e.pd != t.stream_pd[stream]) return TxDrop::kProtectionDomain;
  if (e.bound && e.stream != stream) return TxDrop::kProtectionDomain;
  std::uint64_t end = 0, reg_end = 0;
  if (to < e.base_to || __builtin_add_overflow(to, len, &end) ||
      __builtin_add_overflow(e.base_to, e.length, &reg_end) || end > reg_end) {
    return TxDrop::kBounds;
  }
  *addr = e.addr + (to - e.base_to);
  return TxDrop::kNone;
}

}  // namespace

TxGather gather(wire::ConstBytes packet, std::uint16_t socket, std::size_t assoc, const TxTables& t,
                const TxReadFn& read) {
  TxGather g;
  const std::uint8_t* p = packet.data;
  const std::size_t n = packet.size;
  auto fail = [&g](TxDrop d, std::size_t chunk) {
    g.drop = d;
    g.drop_chunk = chunk;
    g.wire.clear();
    return g;
  };
  // Rule 1.
  if (n < kCommonHeaderSize) return fail(TxDrop::kFraming, 0);
  if (assoc >= t.assoc.size()) return fail(TxDrop::kAssociation, 0);
  const AssocEntry& a = t.assoc[assoc];
  if (!a.valid || a.vnx_socket != socket || wire::load_be16(p) != a.my_sctp_port ||
      wire::load_be16(p + 2) != a.their_sctp_port || wire::load_be32(p + 4) != a.their_vtag) {
    return fail(TxDrop::kAssociation, 0);
  }
  g.wire.assign(p, p + kCommonHeaderSize);
  // Rule 2.
  std::size_t off = kCommonHeaderSize;
  for (std::size_t chunk = 0; off < n; ++chunk) {
    if (n - off < kChunkHeaderSize) return fail(TxDrop::kFraming, chunk);
    const std::uint8_t type = p[off], flags = p[off + 1];
    const std::size_t length = wire::load_be16(p + off + 2);
    if (type != kChunkTypeData || (flags & kGather) == 0) {
      if (length < kChunkHeaderSize || length > n - off) return fail(TxDrop::kFraming, chunk);
      if (type != kChunkTypeData && (flags & kGather) != 0) return fail(TxDrop::kMarkOutsideData, chunk);
      const std::size_t span = std::min(pad4(length), n - off);
      g.wire.insert(g.wire.end(), p + off, p + off + span);
      g.wire.resize(g.wire.size() + (pad4(length) - span), 0);
      if (g.wire.size() > kMaxWire) return fail(TxDrop::kTooLong, chunk);
      off += span;
      continue;
    }
    // A descriptor chunk: its slot span first (rule 2), then rule 3.
    const std::size_t hdr_at = off + kDataChunkHeaderSize + kDdpSsnSize;
    if (hdr_at >= n) return fail(TxDrop::kFraming, chunk);
    const std::size_t h = ddp_header_size(p[hdr_at]);
    const std::size_t ngd_at = hdr_at + h;
    if (ngd_at + kNgdSize > n) return fail(TxDrop::kFraming, chunk);
    if ((flags & kDataFlagsUbe) != kDataFlagsUbe) return fail(TxDrop::kFragment, chunk);
    if (wire::load_be32(p + off + 12) != kPpidDdpSegment) return fail(TxDrop::kPpid, chunk);
    const std::uint16_t s = wire::load_be16(p + off + 8);
    const std::size_t d = std::size_t{a.stream_base} + s;
    if (s >= a.stream_count) return fail(TxDrop::kStream, chunk);
    const std::uint32_t stag = wire::load_le32(p + ngd_at + hw::kNGD_STAG_OFFSET);
    const std::uint32_t len = wire::load_le32(p + ngd_at + hw::kNGD_LEN_OFFSET);
    const std::uint64_t to = wire::load_le64(p + ngd_at + hw::kNGD_TO_OFFSET);
    if (length != kDataChunkHeaderSize + kDdpSsnSize + h + std::uint64_t{len}) return fail(TxDrop::kLength, chunk);
    if (g.wire.size() + pad4(length) > kMaxWire) return fail(TxDrop::kTooLong, chunk);
    // The card's tables from here on (one lookup: the stream's live bit and PD, the STag entry).
    if (d >= t.live.size() || !t.live[d]) return fail(TxDrop::kStream, chunk);
    // Rule 4.
    std::uint64_t addr = 0;
    if (len != 0) {
      const TxDrop why = check_stag(t, stag, to, len, static_cast<std::uint16_t>(d), &addr);
      if (why != TxDrop::kNone) return fail(why, chunk);
    }
    // Rules 5, 6.
    const std::size_t at = g.wire.size();
    g.wire.insert(g.wire.end(), p + off, p + ngd_at);
    g.wire[at + 1] = static_cast<std::uint8_t>(flags & ~kGather);
    std::size_t done = 0;
    while (done < len) {
      const std::uint64_t a0 = addr + done;
      const std::size_t burst =
          static_cast<std::size_t>(std::min<std::uint64_t>(len - done, kReadBoundary - (a0 % kReadBoundary)));
      g.reads.push_back({a0, burst});
      const std::size_t w = g.wire.size();
      g.wire.resize(w + burst);
      if (!read(a0, g.wire.data() + w, burst)) return fail(TxDrop::kReadError, chunk);
      done += burst;
    }
    g.wire.resize(at + pad4(length), 0);
    g.payload_bytes += len;
    ++g.descriptors;
    off = ngd_at + kNgdSize;
  }
  // Rule 7 (the length was kept within the limit chunk by chunk).
  capture::SctpPacket::seal(g.wire);
  return g;
}

std::vector<std::uint8_t> descriptor_chunk(wire::ConstBytes head, std::uint32_t stag, std::uint64_t to,
                                           std::uint32_t len) {
  std::vector<std::uint8_t> c = head.to_vector();
  c[1] = static_cast<std::uint8_t>(c[1] | kGather);
  wire::store_be16(c.data() + 2, static_cast<std::uint16_t>(head.size + len));
  const std::size_t at = c.size();
  c.resize(at + kNgdSize, 0);
  wire::store_le32(c.data() + at + hw::kNGD_STAG_OFFSET, stag);
  wire::store_le32(c.data() + at + hw::kNGD_LEN_OFFSET, len);
  wire::store_le64(c.data() + at + hw::kNGD_TO_OFFSET, to);
  return c;
}

}  // namespace rnic::tb::net
