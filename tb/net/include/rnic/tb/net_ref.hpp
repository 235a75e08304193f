// SPDX-License-Identifier: Apache-2.0
// Reference model of the card's receive front end (docs/network.md, issue 14): what the card does with one
// SCTP packet (the UDP payload, RFC 6951) that arrived on its network port. The RTL front end is checked
// against this model, so it states the rules as plainly as possible, one function per rule.
//
// The rules (RFC 9260 3.2 chunk layout and padding, 3.3.1 DATA; RFC 5043 5.2 PPIDs and DDP-SSN):
//   1. crc_ok false: the packet is dropped; nothing to the host, nothing to the pipeline (crc_errors).
//   2. Shorter than the 12-byte common header: to the host whole, flagged malformed, no lookup.
//   3. Association lookup: the first valid entry whose my_ip, their_ip, UDP ports, my_sctp_port (the
//      destination port, bytes 2..3), their_sctp_port (the source port, bytes 0..1) and my_vtag (the
//      verification tag, bytes 4..7) all match. A miss: to the host whole.
//   4. Chunk walk from byte 12 while at least 4 bytes remain: type, flags, length (big-endian). A length
//      < 4 or past the packet end is malformed: the walk stops and everything from that chunk on goes to
//      the host as received. A chunk whose padding (to 4 bytes) runs past the packet end is the last one.
//   5. DDP candidate: type 0 (DATA), flags & 0x07 == 0x07 (U, B, E; I ignored), length >= 16 + 2 + 1,
//      PPID (chunk bytes 12..15) == 16, SCTP stream (bytes 8..9) < stream_count and
//      live[stream_base + stream]. At most 32 candidates per packet go to the pipeline; later ones are
//      declined without going (counted as beyond_limit).
//   6. A candidate goes to the pipeline as a DDP segment: stream = stream_base + SCTP stream,
//      ssn = DDP-SSN (chunk bytes 16..17) - 1 mod 2^16, bytes = chunk bytes 18 .. length-1. Its host copy
//      keeps the 16-byte chunk header, the DDP-SSN and min(DDP header, rest of segment) bytes, the DDP
//      header being 14 bytes if T (bit 7 of the segment's first byte) is set, else 18; the copy's length
//      field says 18 + those bytes; zero padding to 4.
//   7. Every other chunk is copied to the host whole with its padding as received; so is the common
//      header, and so are the 1..3 bytes after the last chunk when fewer than 4 remain.
//   8. The pipeline answers each segment, in order: taken, duplicate or declined. A declined candidate
//      (and one beyond the 32) stays in the host copy, trimmed as in 6, with its type byte rewritten to
//      0x84 (PAD, RFC 4820) and its flags 0. Taken and duplicate candidates stay as they are.
//
// Two steps, as in the card: walk() decides everything that does not depend on the pipeline (the
// segments to send), host_copy() builds the host's packet once the fates are known.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "rnic/wire/bytes.hpp"

namespace rnic::tb::net {

inline constexpr std::size_t kCommonHeaderSize = 12;     // RFC 9260 3.1
inline constexpr std::size_t kChunkHeaderSize = 4;       // type, flags, length (RFC 9260 3.2)
inline constexpr std::size_t kDataChunkHeaderSize = 16;  // RFC 9260 3.3.1
inline constexpr std::size_t kDdpSsnSize = 2;            // RFC 5043 5.2.2
inline constexpr std::size_t kMinCandidateLength = 16 + 2 + 1;
inline constexpr std::size_t kTaggedDdpHeaderSize = 14;    // RFC 5041 4.2
inline constexpr std::size_t kUntaggedDdpHeaderSize = 18;  // RFC 5041 4.3
inline constexpr std::size_t kMaxSegmentsPerPacket = 32;
inline constexpr std::uint8_t kChunkTypeData = 0x00;
inline constexpr std::uint8_t kChunkTypePad = 0x84;   // RFC 4820
inline constexpr std::uint8_t kDataFlagsUbe = 0x07;   // U, B, E (RFC 9260 3.3.1)
inline constexpr std::uint32_t kPpidDdpSegment = 16;  // RFC 5043 5.2

// A chunk's length with its padding (RFC 9260 3.2).
inline std::size_t pad4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }
// The DDP header's size from its first byte: 14 if T (bit 7) is set, else 18 (RFC 5041 4.2, 4.3).
inline std::size_t ddp_header_size(std::uint8_t control) {
  return (control & 0x80) != 0 ? kTaggedDdpHeaderSize : kUntaggedDdpHeaderSize;
}

// Where the packet came from: the UDP/IPv4 layer's view (VNx tuser).
struct PacketMeta {
  std::uint32_t my_ip = 0, their_ip = 0;
  std::uint16_t my_udp_port = 0, their_udp_port = 0;
};

// One entry of the association table the driver programs (NET_ASSOC_WRITE).
struct AssocEntry {
  bool valid = false;
  std::uint32_t my_ip = 0, their_ip = 0;
  std::uint16_t my_udp_port = 0, their_udp_port = 0;
  std::uint16_t my_sctp_port = 0, their_sctp_port = 0;
  std::uint32_t my_vtag = 0;       // the tag packets to us carry
  std::uint16_t stream_base = 0;   // DDP stream of SCTP stream 0
  std::uint16_t stream_count = 0;  // SCTP streams that are DDP streams
  std::uint16_t vnx_socket = 0;    // the VNx socket of the peer (transmit side; not used on receive)
  std::uint32_t their_vtag = 0;    // the tag our packets carry (transmit side, tx_gather_ref.hpp)
};

// What the pipeline answers for a segment (validate with net = 1).
enum class Fate : std::uint8_t { kTaken, kDuplicate, kDeclined };
const char* fate_name(Fate f) noexcept;

// One DDP segment to rnic_kernel.s_axis_rx (tuser.net = 1).
struct Segment {
  std::uint16_t stream = 0;         // stream_base + SCTP stream
  std::uint16_t ssn = 0;            // DDP-SSN - 1 mod 2^16
  std::vector<std::uint8_t> bytes;  // the DDP segment: chunk bytes 18 .. length-1
};

// What the walk made of one chunk.
enum class ChunkKind : std::uint8_t {
  kWhole,        // rule 7: copied whole, padding as received
  kSegment,      // rules 5, 6: a candidate sent to the pipeline (segments[segment])
  kBeyondLimit,  // rule 5: a candidate beyond the 32nd, not sent; a PAD chunk in the host copy
};

struct ChunkInfo {
  std::size_t offset = 0;  // in the packet
  std::uint8_t type = 0, flags = 0;
  std::uint16_t length = 0;    // the chunk's length field
  std::size_t copy_bytes = 0;  // bytes of the packet it spans as received (padding to 4 or to the end)
  ChunkKind kind = ChunkKind::kWhole;
  std::size_t segment = 0;         // kSegment: index into Walk::segments
  std::size_t trimmed_length = 0;  // kSegment, kBeyondLimit: the host copy's length field (rule 6)
};

// Everything decided before the pipeline answers.
struct Walk {
  bool dropped = false;              // rule 1: bad CRC
  bool too_short = false;            // rule 2
  std::optional<std::size_t> assoc;  // rule 3: the entry's index; nullopt: a miss (or rules 1, 2)
  bool malformed = false;            // rule 2, or rule 4's stop
  std::size_t malformed_offset = 0;  // rule 4: where the walk stopped (the rest goes as received)
  std::size_t tail_offset = 0;       // where the bytes copied after the last chunk start (rule 4, 7)
  std::vector<ChunkInfo> chunks;     // the well-formed chunks walked, in order
  std::vector<Segment> segments;     // to the pipeline, in order
  std::size_t beyond_limit = 0;      // candidates past the 32nd
};

// The per-packet summary (the receive ring descriptor's contents, and more).
struct PacketSummary {
  bool dropped = false;              // rule 1: nothing went anywhere
  std::optional<std::size_t> assoc;  // nullopt: a miss, a short or a dropped packet
  bool malformed = false;
  std::size_t chunks = 0;      // well-formed chunks walked
  std::size_t candidates = 0;  // DDP candidates, beyond_limit included
  std::size_t segments = 0;    // sent to the pipeline
  std::size_t taken = 0, duplicate = 0;
  std::size_t declined = 0;  // declined by the pipeline + beyond_limit: PAD chunks in the host copy
  std::size_t beyond_limit = 0;
  std::size_t host_bytes = 0;  // the host copy's length (0 if dropped)
};

struct Counters {
  std::uint64_t packets = 0;
  std::uint64_t crc_errors = 0;     // rule 1
  std::uint64_t short_packets = 0;  // rule 2
  std::uint64_t misses = 0;         // rule 3 (a valid packet for no association)
  std::uint64_t malformed = 0;      // rule 4 (walk stopped)
  std::uint64_t chunks = 0;
  std::uint64_t segments = 0;                             // to the pipeline
  std::uint64_t taken = 0, duplicates = 0, declined = 0;  // the pipeline's fates
  std::uint64_t beyond_limit = 0;                         // candidates past 32 in a packet
  std::uint64_t host_packets = 0, host_bytes = 0;
};

// Rule 1..5 (and the segments of 6): a pure function of the packet, its metadata and the tables.
// `live` is indexed by DDP stream; an index past its end is not live.
Walk walk(wire::ConstBytes packet, const PacketMeta& meta, bool crc_ok, const std::vector<AssocEntry>& table,
          const std::vector<bool>& live);

// Rules 6..8: the host copy given one fate per segment, in order. Throws std::invalid_argument if the
// count of fates is not that of walk.segments. Empty for a dropped packet.
std::vector<std::uint8_t> host_copy(wire::ConstBytes packet, const Walk& walk, const std::vector<Fate>& fates);

// The summary of a packet once its fates are known.
PacketSummary summarize(const Walk& walk, const std::vector<Fate>& fates, std::size_t host_bytes);

// The front end with its tables and counters: receive() walks a packet, asks `pipeline` for the fates of
// its segments (one call, all segments in order; it must return one fate each) and builds the host copy.
class NetRef {
 public:
  using Pipeline = std::function<std::vector<Fate>(const std::vector<Segment>&)>;
  struct Result {
    std::vector<Segment> segments;
    std::vector<Fate> fates;
    std::optional<std::vector<std::uint8_t>> host;  // nullopt: dropped (rule 1)
    PacketSummary summary;
  };

  NetRef(std::vector<AssocEntry> table, std::vector<bool> live) : table_(std::move(table)), live_(std::move(live)) {}

  Result receive(wire::ConstBytes packet, const PacketMeta& meta, bool crc_ok, const Pipeline& pipeline);

  std::vector<AssocEntry>& table() { return table_; }
  std::vector<bool>& live() { return live_; }
  const Counters& counters() const { return counters_; }

 private:
  std::vector<AssocEntry> table_;
  std::vector<bool> live_;
  Counters counters_;
};

// The association table entry the driver writes (NET_ASSOC_WRITE) for packets sent to the endpoint
// that sent `packet`, if its first chunk is an INIT-ACK (RFC 9260 3.3.3): my ports are the INIT-ACK's
// source and destination ports, my verification tag its Initiate Tag (what the peer's packets carry).
// nullopt for any other packet.
std::optional<AssocEntry> assoc_from_init_ack(wire::ConstBytes packet, const PacketMeta& meta,
                                              std::uint16_t stream_base, std::uint16_t stream_count);

// A pipeline that takes every segment.
inline std::vector<Fate> take_all(const std::vector<Segment>& s) { return std::vector<Fate>(s.size(), Fate::kTaken); }

}  // namespace rnic::tb::net
