// SPDX-License-Identifier: Apache-2.0
// The demo ULP over DDP/SCTP (RFC 5041, RFC 5043) that rnic-peer (the Data Source) and the card's side
// (the Data Sink) both run. Both call this code, so the receiver knows every byte and completion.
//
// Session set-up on each DDP stream (RFC 5043 6.2): the peer sends Initiate with the Initiate private
// data below; the receiver sizes what it registers and posts from it, and answers Accept with the
// advertisement below (the way RDMA ULPs advertise their buffers). Private data is at most 512 bytes
// (RFC 5043 5.2.3). All integers are big-endian (network order).
//
// Initiate private data (exactly 32 bytes):
//   off size field
//   0   4    RFC 6581 word (IRD/ORD/flags of Enhanced Connection Establishment): written 0 today,
//            decoded and carried uninterpreted (the step that answers RFC 6581 gives it meaning)
//   4   4    magic 0x524E5549 "RNUI"
//   8   2    version 1
//   10  2    streams: DDP streams the peer uses, 1..kMaxStreams (streams 0..n-1)
//   12  8    seed of the run
//   20  4    messages: ULP messages in the run, 0..kMaxMessages
//   24  4    max_message: longest message in bytes, 0..kMaxMessageSize
//   28  4    mulpdu: the peer's MULPDU (RFC 5043 9), kMinMulpdu..65535, so the receiver can predict
//            every message's segment count and the DDP-SSN of its last segment
//
// Accept private data (24 + 20 * n bytes, n = 0..kMaxTaggedBuffers, so at most 504 <= 512):
//   0   4    RFC 6581 word: written 0 today, carried uninterpreted
//   4   4    magic 0x524E5541 "RNUA"
//   8   2    version 1
//   10  2    n: tagged buffers advertised
//   12  4    qn: the untagged queue (RFC 5041 4.3 QN) this stream's untagged messages go to
//   16  4    posted: receive buffers posted on that queue (MSN 1..posted)
//   20  4    buffer_size: bytes of each posted buffer
//   24  20n  tagged buffers {stag 4, to 8, length 8}: STag (RFC 5041 4.2), the tagged offset of the
//            buffer's first byte, and its length (> 0; to + length must not wrap 64 bits; two buffers
//            with the same STag must not overlap)
//
// The plan (make_plan) from the Initiate and the Accept of every stream: message i (0..messages-1)
//   - stream, tagged or untagged, and length come from (seed, i) alone (message_shape), so the
//     receiver can size before it advertises (stream_demand, tagged_buffer_sizes);
//   - tagged: placed in the stream's advertised buffers in order, each message at the next free TO of
//     the current buffer, moving to the next buffer when it does not fit: ranges are disjoint;
//     RsvdULP = i & 0xFF;
//   - untagged: the stream's advertised QN, MSN 1, 2, ... per stream (one MSN per posted buffer), never
//     more messages than posted buffers nor longer than buffer_size; RsvdULP = i (40 bits);
//   - its bytes are message_bytes(seed, i, length).
// The peer sends the messages in index order (so per stream in index order), each one ULP message
// segmented at the peer's MULPDU; the first segment of a session has DDP-SSN 1 (the Initiate is 0).
// A plan that does not fit the advertisement is refused with an error naming the stream and message.
//
// Decoding is hostile-input safe: any bytes give a valid struct or a wire::Error naming the field and
// why (kTruncated, kBadParameter for magic / version / length, kFieldOutOfRange for values,
// kPrivateDataTooLong over 512 bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rnic/wire/bytes.hpp"
#include "rnic/wire/result.hpp"

namespace rnic::ulp {

inline constexpr std::uint32_t kInitiateMagic = 0x524E5549;  // "RNUI"
inline constexpr std::uint32_t kAcceptMagic = 0x524E5541;    // "RNUA"
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::size_t kInitiateSize = 32;
inline constexpr std::size_t kAcceptHeaderSize = 24;
inline constexpr std::size_t kTaggedBufferEntrySize = 20;
inline constexpr std::size_t kMaxPrivateData = 512;  // RFC 5043 5.2.3
inline constexpr std::size_t kMaxTaggedBuffers = (kMaxPrivateData - kAcceptHeaderSize) / kTaggedBufferEntrySize;
inline constexpr std::uint16_t kMaxStreams = 256;
inline constexpr std::uint32_t kMaxMessages = 1'000'000;
inline constexpr std::uint32_t kMaxMessageSize = 16u << 20;
inline constexpr std::uint32_t kMinMulpdu = 19;  // an untagged header (18, RFC 5041 4.3) + 1 payload byte
inline constexpr std::uint32_t kMaxPosted = 1u << 24;
// SCTP ports of a run (inside the RFC 6951 UDP datagrams): the receiver listens on kReceiverSctpPort.
inline constexpr std::uint16_t kReceiverSctpPort = 5002;
inline constexpr std::uint16_t kPeerSctpPort = 5001;

struct Initiate {
  std::uint32_t rfc6581 = 0;  // first 32 bits, reserved for RFC 6581 (0 today)
  std::uint16_t streams = 1;
  std::uint64_t seed = 0;
  std::uint32_t messages = 0;
  std::uint32_t max_message = 0;
  std::uint32_t mulpdu = 0;
  bool operator==(const Initiate& o) const {
    return rfc6581 == o.rfc6581 && streams == o.streams && seed == o.seed && messages == o.messages &&
           max_message == o.max_message && mulpdu == o.mulpdu;
  }
};

struct TaggedBuffer {
  std::uint32_t stag = 0;
  std::uint64_t to = 0;  // tagged offset of the first byte
  std::uint64_t length = 0;
  bool operator==(const TaggedBuffer& o) const { return stag == o.stag && to == o.to && length == o.length; }
};

// What the receiver advertises on one stream in its Accept.
struct Advertisement {
  std::uint32_t rfc6581 = 0;  // first 32 bits, reserved for RFC 6581 (0 today)
  std::uint32_t qn = 0;
  std::uint32_t posted = 0;
  std::uint32_t buffer_size = 0;
  std::vector<TaggedBuffer> tagged;
  bool operator==(const Advertisement& o) const {
    return rfc6581 == o.rfc6581 && qn == o.qn && posted == o.posted && buffer_size == o.buffer_size &&
           tagged == o.tagged;
  }
};

wire::Status validate(const Initiate& m);
wire::Status validate(const Advertisement& a);
// Encoders refuse what the decoders would refuse.
wire::Result<std::vector<std::uint8_t>> encode_initiate(const Initiate& m);
wire::Result<Initiate> decode_initiate(wire::ConstBytes private_data);
wire::Result<std::vector<std::uint8_t>> encode_accept(const Advertisement& a);
wire::Result<Advertisement> decode_accept(wire::ConstBytes private_data);

// ---- The plan ------------------------------------------------------------------------------------
struct MessageShape {
  std::uint16_t stream = 0;
  bool tagged = false;
  std::uint32_t length = 0;
};
// Message `index` of a run, from (seed, index) only. The Initiate must be valid.
MessageShape message_shape(const Initiate& m, std::uint32_t index);

// What one stream of a run needs from the receiver.
struct StreamDemand {
  std::uint32_t tagged_messages = 0;
  std::uint64_t tagged_bytes = 0;
  std::uint32_t untagged_messages = 0;
  std::uint32_t untagged_max_length = 0;
};
// One entry per stream. The Initiate must be valid.
std::vector<StreamDemand> stream_demand(const Initiate& m);
// Receiver helper: lengths of at most max_buffers (1..kMaxTaggedBuffers) tagged buffers that together
// take the stream's tagged messages under the plan's placement (the messages in order, split into
// contiguous groups of about equal bytes). Empty if the stream has no tagged message.
std::vector<std::uint64_t> tagged_buffer_sizes(const Initiate& m, std::uint16_t stream, std::size_t max_buffers);

struct PlannedMessage {
  std::uint32_t index = 0;
  std::uint16_t stream = 0;
  bool tagged = false;
  std::uint32_t length = 0;
  std::uint32_t buffer = 0;  // tagged: index into the stream's advertised buffers
  std::uint32_t stag = 0;    // tagged
  std::uint64_t to = 0;      // tagged: TO of the first byte
  std::uint32_t qn = 0;      // untagged
  std::uint32_t msn = 0;     // untagged, from 1 per stream (RFC 5041 4.3)
  std::uint64_t rsvd_ulp = 0;
  std::uint64_t segments = 0;          // DDP segments at the peer's MULPDU (RFC 5041 5.2)
  std::uint16_t last_ddp_ssn = 0;      // RFC 5043 DDP-SSN of its last segment (the Initiate is 0)
  std::uint64_t offset_in_buffer = 0;  // tagged: to - buffer TO
};

struct Plan {
  Initiate initiate;
  std::vector<Advertisement> advertisements;  // per stream
  std::vector<PlannedMessage> messages;       // in index (= send) order
  std::uint64_t total_bytes = 0;
  std::uint64_t total_segments = 0;
};
// Refuses an invalid Initiate or Advertisement, a count of advertisements other than streams, and an
// advertisement the run does not fit (naming the stream and the first message that does not fit).
wire::Result<Plan> make_plan(const Initiate& m, const std::vector<Advertisement>& per_stream);

// The bytes of message `index` of the run with `seed`.
void fill_message(std::uint64_t seed, std::uint32_t index, std::uint8_t* out, std::size_t length);
std::vector<std::uint8_t> message_bytes(std::uint64_t seed, std::uint32_t index, std::size_t length);

}  // namespace rnic::ulp
