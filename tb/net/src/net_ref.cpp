// SPDX-License-Identifier: Apache-2.0
#include "rnic/tb/net_ref.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace rnic::tb::net {
namespace {

using wire::ConstBytes;
using wire::load_be16;
using wire::load_be32;

// Rule 3: the first valid entry matching the addresses, ports and verification tag.
std::optional<std::size_t> lookup(ConstBytes p, const PacketMeta& m, const std::vector<AssocEntry>& table) {
  const std::uint16_t src_port = load_be16(p.data + 0);
  const std::uint16_t dst_port = load_be16(p.data + 2);
  const std::uint32_t vtag = load_be32(p.data + 4);
  for (std::size_t i = 0; i < table.size(); ++i) {
    const AssocEntry& e = table[i];
    if (e.valid && e.my_ip == m.my_ip && e.their_ip == m.their_ip && e.my_udp_port == m.my_udp_port &&
        e.their_udp_port == m.their_udp_port && e.my_sctp_port == dst_port && e.their_sctp_port == src_port &&
        e.my_vtag == vtag)
      return i;
  }
  return std::nullopt;
}

// Rule 5: a DATA chunk carrying a whole DDP segment (PPID 16) on a live DDP stream of the association.
// `c` is the chunk, length bytes long (at least 4, within the packet).
bool is_candidate(ConstBytes c, const AssocEntry& e, const std::vector<bool>& live) {
  if (c.data[0] != kChunkTypeData) return false;
  if ((c.data[1] & kDataFlagsUbe) != kDataFlagsUbe) return false;
  if (c.size < kMinCandidateLength) return false;
  if (load_be32(c.data + 12) != kPpidDdpSegment) return false;
  const std::uint16_t sctp_stream = load_be16(c.data + 8);
  if (sctp_stream >= e.stream_count) return false;
  const std::size_t ddp_stream = std::size_t{e.stream_base} + sctp_stream;
  return ddp_stream < live.size() && live[ddp_stream];
}

// Rule 6: the segment of a candidate chunk `c` (length bytes).
Segment segment_of(ConstBytes c, const AssocEntry& e) {
  Segment s;
  s.stream = static_cast<std::uint16_t>(e.stream_base + load_be16(c.data + 8));
  s.ssn = static_cast<std::uint16_t>(load_be16(c.data + kDataChunkHeaderSize) - 1);
  const ConstBytes seg = c.subview(kDataChunkHeaderSize + kDdpSsnSize);
  s.bytes = seg.to_vector();
  return s;
}

// Rule 6: the host copy's length field of a candidate chunk `c`: header, DDP-SSN and the DDP header (or
// what there is of the segment if it is shorter).
std::size_t trimmed_length(ConstBytes c) {
  const std::size_t segment = c.size - kDataChunkHeaderSize - kDdpSsnSize;  // >= 1 (rule 5)
  const std::size_t ddp_header = ddp_header_size(c.data[kDataChunkHeaderSize + kDdpSsnSize]);
  return kDataChunkHeaderSize + kDdpSsnSize + (segment < ddp_header ? segment : ddp_header);
}

}  // namespace

const char* fate_name(Fate f) noexcept {
  switch (f) {
    case Fate::kTaken:
      return "taken";
    case Fate::kDuplicate:
      return "duplicate";
    case Fate::kDeclined:
      return "declined";
  }
  return "?";
}

Walk walk(ConstBytes p, const PacketMeta& meta, bool crc_ok, const std::vector<AssocEntry>& table,
          const std::vector<bool>& live) {
  Walk w;
  if (!crc_ok) {  // rule 1
    w.dropped = true;
    return w;
  }
  if (p.size < kCommonHeaderSize) {  // rule 2
    w.too_short = true;
    w.malformed = true;
    return w;
  }
  w.assoc = lookup(p, meta, table);  // rule 3
  w.tail_offset = p.size;
  if (!w.assoc) return w;
  const AssocEntry& e = table[*w.assoc];

  std::size_t off = kCommonHeaderSize;  // rule 4
  while (p.size - off >= kChunkHeaderSize) {
    const std::uint16_t length = load_be16(p.data + off + 2);
    if (length < kChunkHeaderSize || length > p.size - off) {
      w.malformed = true;
      w.malformed_offset = off;
      return w;
    }
    ChunkInfo ci;
    ci.offset = off;
    ci.type = p.data[off];
    ci.flags = p.data[off + 1];
    ci.length = length;
    const std::size_t padded = pad4(length);
    const bool last = padded >= p.size - off;  // its padding reaches (or runs past) the end
    ci.copy_bytes = last ? p.size - off : padded;
    const ConstBytes chunk = p.subview(off, length);
    if (is_candidate(chunk, e, live)) {  // rule 5
      ci.trimmed_length = trimmed_length(chunk);
      if (w.segments.size() < kMaxSegmentsPerPacket) {
        ci.kind = ChunkKind::kSegment;
        ci.segment = w.segments.size();
        w.segments.push_back(segment_of(chunk, e));
      } else {
        ci.kind = ChunkKind::kBeyondLimit;
        ++w.beyond_limit;
      }
    }
    w.chunks.push_back(ci);
    off += ci.copy_bytes;
  }
  w.tail_offset = off;  // fewer than 4 bytes remain (rule 7: copied as received)
  return w;
}

std::vector<std::uint8_t> host_copy(ConstBytes p, const Walk& w, const std::vector<Fate>& fates) {
  if (fates.size() != w.segments.size())
    throw std::invalid_argument("host_copy: " + std::to_string(fates.size()) + " fates for " +
                                std::to_string(w.segments.size()) + " segments");
  std::vector<std::uint8_t> out;
  if (w.dropped) return out;                          // rule 1
  if (w.too_short || !w.assoc) return p.to_vector();  // rules 2, 3
  out.assign(p.data, p.data + kCommonHeaderSize);     // rule 7
  for (const ChunkInfo& c : w.chunks) {
    const std::uint8_t* chunk = p.data + c.offset;
    if (c.kind == ChunkKind::kWhole) {  // rule 7
      out.insert(out.end(), chunk, chunk + c.copy_bytes);
      continue;
    }
    const bool pad = c.kind == ChunkKind::kBeyondLimit || fates[c.segment] == Fate::kDeclined;  // rule 8
    const std::size_t start = out.size();
    out.insert(out.end(), chunk, chunk + c.trimmed_length);  // rule 6
    out[start + 2] = static_cast<std::uint8_t>(c.trimmed_length >> 8);
    out[start + 3] = static_cast<std::uint8_t>(c.trimmed_length);
    out.resize(start + pad4(c.trimmed_length), 0);
    if (pad) {
      out[start] = kChunkTypePad;
      out[start + 1] = 0;
    }
  }
  const std::size_t rest = w.malformed ? w.malformed_offset : w.tail_offset;  // rules 4, 7
  out.insert(out.end(), p.data + rest, p.data + p.size);
  return out;
}

PacketSummary summarize(const Walk& w, const std::vector<Fate>& fates, std::size_t host_bytes) {
  PacketSummary s;
  s.dropped = w.dropped;
  s.assoc = w.assoc;
  s.malformed = w.malformed;
  s.chunks = w.chunks.size();
  s.segments = w.segments.size();
  s.beyond_limit = w.beyond_limit;
  s.candidates = w.segments.size() + w.beyond_limit;
  for (const Fate f : fates) {
    if (f == Fate::kTaken) ++s.taken;
    if (f == Fate::kDuplicate) ++s.duplicate;
    if (f == Fate::kDeclined) ++s.declined;
  }
  s.declined += w.beyond_limit;
  s.host_bytes = host_bytes;
  return s;
}

NetRef::Result NetRef::receive(ConstBytes packet, const PacketMeta& meta, bool crc_ok, const Pipeline& pipeline) {
  Result r;
  const Walk w = walk(packet, meta, crc_ok, table_, live_);
  ++counters_.packets;
  if (w.dropped) {
    ++counters_.crc_errors;
    r.summary = summarize(w, {}, 0);
    return r;
  }
  if (w.too_short) ++counters_.short_packets;
  if (!w.too_short && !w.assoc) ++counters_.misses;
  if (w.malformed && !w.too_short) ++counters_.malformed;
  if (!w.segments.empty()) {
    r.fates = pipeline(w.segments);
    if (r.fates.size() != w.segments.size())
      throw std::invalid_argument("NetRef: the pipeline answered " + std::to_string(r.fates.size()) + " fates for " +
                                  std::to_string(w.segments.size()) + " segments");
  }
  r.host = host_copy(packet, w, r.fates);
  r.summary = summarize(w, r.fates, r.host->size());
  counters_.chunks += r.summary.chunks;
  counters_.segments += r.summary.segments;
  counters_.taken += r.summary.taken;
  counters_.duplicates += r.summary.duplicate;
  counters_.declined += r.summary.declined - r.summary.beyond_limit;
  counters_.beyond_limit += r.summary.beyond_limit;
  ++counters_.host_packets;
  counters_.host_bytes += r.host->size();
  r.segments = w.segments;
  return r;
}

std::optional<AssocEntry> assoc_from_init_ack(wire::ConstBytes packet, const PacketMeta& meta,
                                              std::uint16_t stream_base, std::uint16_t stream_count) {
  constexpr std::uint8_t kInitAck = 2;
  if (packet.size < kCommonHeaderSize + 8 || packet.data[kCommonHeaderSize] != kInitAck) return std::nullopt;
  AssocEntry e;
  e.valid = true;
  e.my_ip = meta.my_ip;
  e.their_ip = meta.their_ip;
  e.my_udp_port = meta.my_udp_port;
  e.their_udp_port = meta.their_udp_port;
  e.my_sctp_port = wire::load_be16(packet.data);
  e.their_sctp_port = wire::load_be16(packet.data + 2);
  e.my_vtag = wire::load_be32(packet.data + kCommonHeaderSize + 4);
  e.stream_base = stream_base;
  e.stream_count = stream_count;
  return e;
}

}  // namespace rnic::tb::net
