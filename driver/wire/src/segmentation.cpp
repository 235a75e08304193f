// SPDX-License-Identifier: Apache-2.0
#include "rnic/wire/segmentation.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace rnic::wire {

namespace {

// Payload bytes a segment can carry, or an error when MULPDU cannot hold header + 1 byte.
Result<std::uint32_t> payload_per_segment(std::size_t mulpdu, std::size_t header) {
  if (mulpdu < header + 1) {
    return make_error(Errc::kMulpduTooSmall, "MULPDU " + std::to_string(mulpdu) + " cannot hold a " +
                                                 std::to_string(header) + "-byte DDP header plus one payload byte");
  }
  std::size_t chunk = mulpdu - header;
  // A segment never needs more than the largest message; keep the chunk in 32 bits.
  if (chunk > kMaxUlpMessageLength) chunk = kMaxUlpMessageLength;
  return static_cast<std::uint32_t>(chunk);
}

Status check_length(std::uint64_t message_length) {
  if (message_length > kMaxUlpMessageLength) {
    return make_error(Errc::kMessageTooLong,
                      "ULP message of " + std::to_string(message_length) + " bytes; RFC 5041 5.2 requires < 2^32");
  }
  return Ok{};
}

}  // namespace

MessageSegmenter::MessageSegmenter(DdpHeader first, std::uint64_t length, std::uint32_t chunk)
    : first_(first), length_(length), chunk_(chunk), count_(length == 0 ? 1 : (length + chunk - 1) / chunk) {}

Result<MessageSegmenter> MessageSegmenter::tagged(std::uint32_t stag, std::uint64_t initial_to, std::uint8_t rsvd_ulp,
                                                  std::uint64_t message_length, std::size_t mulpdu) {
  if (auto st = check_length(message_length); !st) return st.error();
  auto chunk = payload_per_segment(mulpdu, kTaggedHeaderSize);
  if (!chunk) return chunk.error();
  // The sink refuses a TO + length that wraps (7.1 tagged #5); never produce one.
  if (message_length > std::numeric_limits<std::uint64_t>::max() - initial_to) {
    return make_error(Errc::kTaggedOffsetWrap, "initial TO " + std::to_string(initial_to) + " + " +
                                                   std::to_string(message_length) + " bytes wraps 64 bits");
  }
  TaggedHeader h;
  h.rsvd_ulp = rsvd_ulp;
  h.stag = stag;
  h.to = initial_to;
  return MessageSegmenter(h, message_length, *chunk);
}

Result<MessageSegmenter> MessageSegmenter::untagged(std::uint32_t qn, std::uint32_t msn, std::uint64_t rsvd_ulp,
                                                    std::uint64_t message_length, std::size_t mulpdu) {
  if (auto st = check_length(message_length); !st) return st.error();
  auto chunk = payload_per_segment(mulpdu, kUntaggedHeaderSize);
  if (!chunk) return chunk.error();
  if (rsvd_ulp > kUntaggedRsvdUlpMax) {
    return make_error(Errc::kFieldOutOfRange, "untagged RsvdULP does not fit 40 bits");
  }
  UntaggedHeader h;
  h.rsvd_ulp = rsvd_ulp;
  h.qn = qn;
  h.msn = msn;
  h.mo = 0;
  return MessageSegmenter(h, message_length, *chunk);
}

SegmentPlan MessageSegmenter::segment(std::uint64_t index) const {
  if (index >= count_) {
    throw std::out_of_range("segment " + std::to_string(index) + " of a " + std::to_string(count_) +
                            "-segment message");
  }
  SegmentPlan p;
  p.message_offset = index * chunk_;
  std::uint64_t left = length_ - p.message_offset;
  p.payload_length = static_cast<std::uint32_t>(left < chunk_ ? left : chunk_);
  const bool last = index + 1 == count_;
  DdpHeader h = first_;
  if (auto* t = std::get_if<TaggedHeader>(&h)) {
    t->last = last;
    t->to += p.message_offset;  // cannot wrap: checked at construction
  } else {
    auto& u = std::get<UntaggedHeader>(h);
    u.last = last;
    u.mo = static_cast<std::uint32_t>(p.message_offset);  // < 2^32 by the length check
  }
  p.header = h;
  return p;
}

std::vector<SegmentPlan> MessageSegmenter::all() const {
  std::vector<SegmentPlan> v;
  v.reserve(static_cast<std::size_t>(count_));
  for (std::uint64_t i = 0; i < count_; ++i) v.push_back(segment(i));
  return v;
}

Result<std::vector<std::uint8_t>> encode_planned_segment(const SegmentPlan& plan, ConstBytes message) {
  if (plan.message_offset > message.size || message.size - plan.message_offset < plan.payload_length) {
    return make_error(Errc::kTruncated,
                      "message buffer of " + std::to_string(message.size) + " bytes does not hold the planned slice");
  }
  return encode_segment(plan.header,
                        message.subview(static_cast<std::size_t>(plan.message_offset), plan.payload_length));
}

Result<MessageSegmenter> DataSource::send_tagged(std::uint32_t stag, std::uint64_t initial_to, std::uint8_t rsvd_ulp,
                                                 std::uint64_t message_length) const {
  return MessageSegmenter::tagged(stag, initial_to, rsvd_ulp, message_length, mulpdu_);
}

Result<MessageSegmenter> DataSource::send_untagged(std::uint32_t qn, std::uint64_t rsvd_ulp,
                                                   std::uint64_t message_length) {
  const std::uint32_t msn = next_msn(qn);
  auto seg = MessageSegmenter::untagged(qn, msn, rsvd_ulp, message_length, mulpdu_);
  if (seg) next_msn_[qn] = msn + 1;  // unsigned: 0xFFFFFFFF wraps to 0 (4.3)
  return seg;
}

std::uint32_t DataSource::next_msn(std::uint32_t qn) const {
  auto it = next_msn_.find(qn);
  return it == next_msn_.end() ? kInitialMsn : it->second;
}

}  // namespace rnic::wire
