// SPDX-License-Identifier: Apache-2.0
// The host side of the card's transmit gather (docs/transmit.md, issue 35): full-length descriptor chunks.
//
// The Data Source hands usrsctp each DDP segment at its real length, but with a gather descriptor (hw.def
// NGD: the local STag, LEN, TO) where the payload would be and zeros after it (descriptor_user_data), so
// that usrsctp's congestion control, the peer's window and bundling see the true sizes (RFC 9260 7.2,
// 6.1) while the host never reads a payload byte. The output callback then rewrites each packet usrsctp
// emits into its transmit-slot form (rewrite_for_gather): every descriptor chunk loses its zeros and gets
// flag G (NET_DATA_FLAG_GATHER), its length field still the length on the wire; the card reads the payload
// from registered memory and puts the packet usrsctp made back together (tb/net TxGatherRef states what
// the card does). Pure functions: no usrsctp, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/result.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "rnic/wire/segmentation.hpp"

namespace rnic::wire {

inline constexpr std::size_t kSctpCommonHeaderBytes = 12;  // RFC 9260 3.1
inline constexpr std::size_t kSctpChunkHeaderBytes = 4;    // type, flags, length (RFC 9260 3.2)
inline constexpr std::size_t kSctpDataHeaderBytes = 16;    // RFC 9260 3.3.1: + TSN, stream, SSN, PPID
inline constexpr std::uint8_t kSctpChunkData = 0;          // RFC 9260 3.3.1
inline constexpr std::uint8_t kSctpDataFlagsUbe = 0x07;    // U, B, E (RFC 9260 3.3.1)
// The NGD record (hw.def): STAG, LEN, TO, little-endian, right after the DDP header.
inline constexpr std::size_t kNgdBytes = hw::kNGD_TO_OFFSET + hw::kNGD_TO_BITS / 8;
// Flag G: bit 7 of a DATA chunk's flags, reserved in RFC 9260 3.3.1, set only in a transmit slot.
inline constexpr std::uint8_t kDataFlagGather = static_cast<std::uint8_t>(hw::kNET_DATA_FLAG_GATHER);
// The smallest payload a descriptor chunk can carry: its user data must hold the NGD record.
inline constexpr std::uint32_t kMinDescriptorPayload = kNgdBytes;
// A descriptor chunk in the slot: chunk header, DDP-SSN, DDP header, NGD (48 tagged, 52 untagged bytes).
inline constexpr std::size_t slot_descriptor_bytes(bool tagged) {
  return kSctpDataHeaderBytes + kDdpSsnSize + (tagged ? kTaggedHeaderSize : kUntaggedHeaderSize) + kNgdBytes;
}
// Every chunk in a slot starts on a 4-byte boundary (RFC 9260 3.2) without padding after a descriptor.
static_assert(slot_descriptor_bytes(true) % 4 == 0 && slot_descriptor_bytes(false) % 4 == 0);

// The user data the Data Source hands usrsctp_sendv (PPID 16, SCTP_UNORDERED: one DATA chunk with U = B = E
// = 1) for one DDP segment whose payload the card is to read: DDP-SSN (RFC 5043 5.2.2), the plan's DDP
// header (RFC 5041 4.2 / 4.3), the NGD record {local_stag, plan.payload_length, local_to} (little-endian
// at hw.def's offsets), then zeros, 2 + H + plan.payload_length bytes in all: exactly the user data of the
// segment chunk with its payload copied (encode_segment_chunk), so usrsctp counts the real size.
// A payload under kMinDescriptorPayload (16 bytes, zero-length segments included, RFC 5041 5.2) cannot
// hold the record: its user data is 2 + H + 16 bytes, the record and no zeros (the short form), so usrsctp
// counts up to 16 bytes more than go on the wire: never fewer, which keeps its congestion and flow
// control on the safe side (RFC 9260 7.2, 6.1). rewrite_for_gather writes the real length into the
// chunk header. Either way the host never reads a payload byte.
// Refuses kFieldOutOfRange: a header field does not fit its width (encode_header), or 16 + 2 + H + LEN >
// 65535 (RFC 9260 3.2: the chunk length is 16 bits).
Result<std::vector<std::uint8_t>> descriptor_user_data(const SegmentPlan& plan, std::uint16_t ddp_ssn,
                                                       std::uint32_t local_stag, std::uint64_t local_to);
// The same without its zeros: the DDP-SSN, the DDP header and the NGD record (2 + H + 16 bytes), for a
// sender that keeps a buffer of zeros and appends descriptor_zeros(plan) of them (the Endpoint does:
// no allocation or zeroing per segment). Refuses what descriptor_user_data refuses.
Result<std::vector<std::uint8_t>> descriptor_record(const SegmentPlan& plan, std::uint16_t ddp_ssn,
                                                    std::uint32_t local_stag, std::uint64_t local_to);
inline std::size_t descriptor_zeros(const SegmentPlan& plan) {
  return plan.payload_length > kNgdBytes ? plan.payload_length - kNgdBytes : 0;
}

// One descriptor chunk of a packet: where it goes (RFC 9260 3.3.1 fields) and what the card reads (NGD).
struct GatherDescriptor {
  std::size_t chunk = 0;          // its index among the packet's chunks
  std::uint32_t tsn = 0;          // RFC 9260 3.3.1 TSN: the SACK that acknowledges it completes it
  std::uint16_t sctp_stream = 0;  // Stream Identifier S
  std::uint16_t stream_seq = 0;   // Stream Sequence Number n (not used by the peer: U = 1)
  std::uint16_t ddp_ssn = 0;      // RFC 5043 5.2.2
  bool tagged = false;            // RFC 5041 4.2 (else 4.3)
  std::uint32_t stag = 0;         // NGD STAG: the local STag the card reads through
  std::uint32_t length = 0;       // NGD LEN: the payload bytes
  std::uint64_t to = 0;           // NGD TO: the tagged offset of the first payload byte
};

// The Data Source's registry: true when it issued this descriptor (the record's fields as read from the
// chunk; tsn and stream_seq are usrsctp's). Matching on (sctp_stream, ddp_ssn, stag, to, length) is the
// exact test; a registry that knows only its STags may test stag alone (a copied segment whose payload
// starts with that STag, LEN = its payload length and zeros from byte 16 on is then taken for a descriptor).
// It is asked before the zeros after the record are checked: a chunk it accepts may still be no descriptor.
using DescriptorFilter = std::function<bool(const GatherDescriptor&)>;

// A packet in its transmit-slot form.
struct GatherSlot {
  std::vector<std::uint8_t> packet;           // the slot's packet (never longer than usrsctp's)
  bool gather = false;                        // a descriptor chunk was rewritten: NTXD FLAGS GATHER
  std::vector<GatherDescriptor> descriptors;  // in chunk order
};

// Rewrites one SCTP packet as usrsctp's output callback gives it (common header, chunks; the CRC32c field
// is copied as it is, the card overwrites it) into the transmit slot's packet.
// The walk (RFC 9260 3.2): from byte 12, each chunk's length field >= 4 and within the packet; the next
// chunk at the length padded to 4; the last chunk may end at the packet's end without its padding (it is
// copied so: the card pads it). Anything else, a packet under 12 bytes or 1..3 bytes after the last chunk
// included, is kFraming (the card would drop the packet: TxGatherRef rule 2).
// A descriptor chunk is a DATA chunk (type 0) with PPID 16 (RFC 5043 5.2) whose user data is what
// descriptor_user_data makes: DDP-SSN, a DDP header of the size its T bit says (14 / 18, RFC 5041 4.2 /
// 4.3), an NGD record, zeros to the chunk's length field, which is 16 + 2 + H + NGD LEN (or, the short
// form, NGD LEN < 16 and no zeros: 16 + 2 + H + 16), and which `is_ours` accepts. Each is written as its
// first 16 + 2 + H + 16 bytes (a multiple of 4: no padding) with flag G set and its length field the
// length on the wire, 16 + 2 + H + NGD LEN, and recorded. If its flags do not have U, B and E all set
// (RFC 9260 3.3.1), or it is a first fragment (B without E) whose user data is a prefix of a descriptor's,
// the result is kFragmented: usrsctp fragmented it (path MTU below the segment size, docs/transmit.md) or
// it was sent ordered; the caller aborts the association (RFC 9260 9.1). Every other chunk is copied as it
// is with the padding it has: a segment chunk with its payload, a fragment after the first, a descriptor
// with a nonzero byte after its NGD, a length that lies or an STag `is_ours` refuses.
// kStrayGatherFlag: a chunk copied as it is has flag bit 7 set in a packet with a descriptor (the card
// would take it for a descriptor, or drop the packet). The result is never longer than the input.
Result<GatherSlot> rewrite_for_gather(ConstBytes packet, const DescriptorFilter& is_ours);

// What the sender's bookkeeping reads from an SCTP packet (docs/transmit.md, "When a send is complete").
inline constexpr std::uint8_t kSctpChunkSack = 3;  // RFC 9260 3.3.4
struct DataChunkSummary {
  std::uint32_t tsn = 0;
  std::uint16_t sctp_stream = 0;
  std::uint16_t ddp_ssn = 0;  // the user data's first two bytes (RFC 5043 5.2.2), PPID 16 only
  bool ddp_segment = false;   // PPID 16 with at least the DDP-SSN, and U, B, E all set (one whole segment)
};
struct PacketSummary {
  std::uint32_t verification_tag = 0;              // RFC 9260 3.1
  std::vector<DataChunkSummary> data;              // DATA chunks (RFC 9260 3.3.1), in order
  std::vector<std::uint32_t> cumulative_tsn_acks;  // of each SACK chunk (RFC 9260 3.3.4), in order
};
// The chunk walk of rewrite_for_gather (kFraming on the same packets); a DATA chunk under 16 bytes or a
// SACK under 16 is kFraming too.
Result<PacketSummary> summarize_packet(ConstBytes packet);

}  // namespace rnic::wire
