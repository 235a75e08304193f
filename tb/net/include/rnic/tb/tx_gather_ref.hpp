// SPDX-License-Identifier: Apache-2.0
// Reference model of the card's transmit gather (docs/transmit.md, issue 35): what the card puts on the
// wire for one transmit slot whose NTXD has GATHER set. The RTL gather stage is to be checked against
// this model, so it states the rules as plainly as possible, in the order the card applies them.
//
// The rules (RFC 9260 3.1 common header, 3.2 chunk layout and padding, 3.3.1 DATA; RFC 5043 5.2.2 the
// DDP Segment Chunk; RFC 5041 4.2 / 4.3 DDP headers, 8 security; hw.def NGD, NET_DATA_FLAG_GATHER):
//   1. Association: entry `assoc` exists and is valid, its vnx_socket is the slot's socket, and the
//      packet's common header carries source port = my_sctp_port, destination port = their_sctp_port
//      and verification tag = their_vtag. Else kAssociation.
//   2. Walk from byte 12 while bytes remain: a chunk header needs 4 bytes (fewer: kFraming). In the slot,
//      a descriptor chunk (type 0, flag G) spans 16 + 2 + H + 16 bytes (H = 14 if T, bit 7 of the DDP
//      header's first byte, is set, else 18); every other chunk its length field rounded up to 4 (the
//      last one may end at the packet's end without its padding), length >= 4. A chunk past the end:
//      kFraming. A chunk that is not DATA with flag bit 7 set: kMarkOutsideData.
//   3. A descriptor chunk: flags & 0x07 == 0x07 (U, B, E) else kFragment; PPID 16 else kPpid; SCTP
//      stream s < stream_count else kStream; its length field == 16 + 2 + H + NGD LEN else kLength; the
//      packet with it still within rule 7's limit else kTooLong; then (from the card's tables)
//      live[stream_base + s] else kStream.
//   4. NGD LEN == 0: nothing read, no STag checked (RFC 5041 5.2's rule for a zero-length segment, and a
//      read of nothing needs no right). Otherwise the STag table entry at index STag >> 8: valid and
//      key == STag & 0xFF (else kStag), local read (else kLocalRead), pd == the PD of stream
//      stream_base + s and, if bound, bound to that stream (else kProtectionDomain), base_to <= TO and
//      TO + LEN <= base_to + length with no wrap of either sum (else kBounds).
//   5. The read: [addr + TO - base_to, + LEN) through `read`, in bursts that never cross 4 KiB (the
//      model records each burst); a read that fails (an RRESP other than OKAY): kReadError.
//   6. On the wire: the common header, then each chunk in order: a descriptor chunk as its chunk header
//      with G cleared, DDP-SSN, DDP header, the LEN bytes read, zeros to a multiple of 4 (RFC 9260 3.2: a
//      sender pads every chunk, the last one too); every other chunk as in the slot.
//   7. The packet on the wire is at most NET_MAX_PACKET_BYTES, else kTooLong (checked as each chunk is
//      added, before a descriptor's read); its CRC32c is computed over it (RFC 9260 6.8) and stored at
//      bytes 8..11.
// Any failure drops the whole packet: nothing of it is sent (the reads already made are reported).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/tb/net_ref.hpp"
#include "rnic/wire/bytes.hpp"

namespace rnic::tb::net {

// Why a gather packet was dropped (kNone: sent).
enum class TxDrop : std::uint8_t {
  kNone = 0,
  kAssociation = hw::kNET_TX_DROP_ASSOC,     // rule 1
  kFraming = hw::kNET_TX_DROP_FRAMING,       // rule 2
  kMarkOutsideData = hw::kNET_TX_DROP_MARK,  // rule 2: flag bit 7 on a chunk that is not DATA
  kFragment = hw::kNET_TX_DROP_FRAGMENT,     // rule 3: U, B or E clear
  kPpid = hw::kNET_TX_DROP_PPID,             // rule 3
  kStream = hw::kNET_TX_DROP_STREAM,         // rule 3: not the association's, or not live
  kLength = hw::kNET_TX_DROP_LENGTH,         // rule 3: the length field lies
  kStag = hw::kNET_TX_DROP_STAG,             // rule 4: invalid, or the key differs
  kLocalRead = hw::kNET_TX_DROP_LOCAL_READ,  // rule 4
  kProtectionDomain = hw::kNET_TX_DROP_PD,   // rule 4: another PD, or bound to another stream
  kBounds = hw::kNET_TX_DROP_BOUNDS,         // rule 4
  kReadError = hw::kNET_TX_DROP_READ_ERROR,  // rule 5
  kTooLong = hw::kNET_TX_DROP_TOO_LONG,      // rule 7
};
const char* tx_drop_name(TxDrop d) noexcept;

// The fields of an STag table entry the gather checks (STAG_WRITE's arguments and the key).
struct TxStag {
  bool valid = false;
  std::uint8_t key = 0;
  bool local_read = false;
  std::uint16_t pd = 0;
  bool bound = false;
  std::uint16_t stream = 0;
  std::uint64_t base_to = 0, length = 0, addr = 0;
};

// The card's state a gather reads: the association table (their_vtag is the transmit side's field),
// the live bits and PDs per DDP stream, the STag table by index.
struct TxTables {
  std::vector<AssocEntry> assoc;
  std::vector<bool> live;
  std::vector<std::uint16_t> stream_pd;
  std::vector<TxStag> stags;
};

// One read burst on the card's memory port.
struct TxRead {
  std::uint64_t addr = 0;
  std::size_t bytes = 0;
};

// Reads `n` bytes at `addr` into `out`; false: the memory answered with an error.
using TxReadFn = std::function<bool(std::uint64_t addr, std::uint8_t* out, std::size_t n)>;

struct TxGather {
  TxDrop drop = TxDrop::kNone;
  std::size_t drop_chunk = 0;      // the chunk (0-based) a chunk rule failed at
  std::vector<std::uint8_t> wire;  // the packet sent (empty when dropped)
  std::size_t descriptors = 0;     // descriptor chunks expanded
  std::size_t payload_bytes = 0;   // bytes read into the packet
  std::vector<TxRead> reads;       // every burst issued, in order (also for a dropped packet)
};

inline constexpr std::size_t kNgdSize = 16;  // hw.def NGD: STAG, LEN, TO
inline constexpr std::size_t kReadBoundary = 4096;

// Rules 1..7 for one slot packet (`packet`: the NTXD LEN bytes at slot + 16) sent on `socket` for
// association table entry `assoc`.
TxGather gather(wire::ConstBytes packet, std::uint16_t socket, std::size_t assoc, const TxTables& tables,
                const TxReadFn& read);

// The slot form of a DDP Segment Chunk whose payload the card is to read, as the host's output callback
// writes it: `head` is the chunk as usrsctp made it up to the end of the DDP header (chunk header,
// DDP-SSN, DDP header: 16 + 2 + 14 or 18 bytes); the result has flag G set, the length field 16 + 2 + H +
// len, and the NGD record {stag, len, to} after the DDP header.
std::vector<std::uint8_t> descriptor_chunk(wire::ConstBytes head, std::uint32_t stag, std::uint64_t to,
                                           std::uint32_t len);

}  // namespace rnic::tb::net
