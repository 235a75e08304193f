// SPDX-License-Identifier: Apache-2.0
// RFC 5041 5.2 / 5.3: the Data Source splits a ULP message into DDP segments no larger than MULPDU.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/result.hpp"

namespace rnic::wire {

// ULP message length MUST be less than 2^32 (5.2).
inline constexpr std::uint64_t kMaxUlpMessageLength = 0xFFFFFFFFull;
// MSN of the first message on each QN (4.3).
inline constexpr std::uint32_t kInitialMsn = 1;

// One segment of a message: its header and which bytes of the ULP message it carries.
struct SegmentPlan {
  DdpHeader header;
  std::uint64_t message_offset = 0;  // first payload byte within the ULP message
  std::uint32_t payload_length = 0;
};

// Random-access segmentation of one message: segment(i) is computed, never stored, so a 4 GiB
// message at a tiny MULPDU costs no memory, and segments can be produced in any order.
// Every segment but the last carries exactly MULPDU - header bytes; only the last has L set;
// a zero-length message is exactly one segment with L set (5.2).
class MessageSegmenter {
 public:
  static Result<MessageSegmenter> tagged(std::uint32_t stag, std::uint64_t initial_to, std::uint8_t rsvd_ulp,
                                         std::uint64_t message_length, std::size_t mulpdu);
  static Result<MessageSegmenter> untagged(std::uint32_t qn, std::uint32_t msn, std::uint64_t rsvd_ulp,
                                           std::uint64_t message_length, std::size_t mulpdu);

  std::uint64_t segment_count() const { return count_; }
  std::uint64_t message_length() const { return length_; }
  std::uint32_t max_payload_per_segment() const { return chunk_; }
  // Throws std::out_of_range for index >= segment_count().
  SegmentPlan segment(std::uint64_t index) const;
  std::vector<SegmentPlan> all() const;

 private:
  MessageSegmenter(DdpHeader first, std::uint64_t length, std::uint32_t chunk);
  DdpHeader first_;  // header of segment 0 with L clear
  std::uint64_t length_;
  std::uint32_t chunk_;
  std::uint64_t count_;
};

// Header + the plan's slice of the message: the bytes of one DDP segment.
// Fails with kTruncated if the message buffer is shorter than the plan needs.
Result<std::vector<std::uint8_t>> encode_planned_segment(const SegmentPlan& plan, ConstBytes message);

// The Data Source side of one DDP stream: owns the per-QN MSN (starts at 1, wraps 0xFFFFFFFF -> 0)
// and segments each message at this stream's MULPDU. A refused message consumes no MSN.
class DataSource {
 public:
  explicit DataSource(std::size_t mulpdu) : mulpdu_(mulpdu) {}

  Result<MessageSegmenter> send_tagged(std::uint32_t stag, std::uint64_t initial_to, std::uint8_t rsvd_ulp,
                                       std::uint64_t message_length) const;
  Result<MessageSegmenter> send_untagged(std::uint32_t qn, std::uint64_t rsvd_ulp, std::uint64_t message_length);

  std::uint32_t next_msn(std::uint32_t qn) const;
  void set_next_msn(std::uint32_t qn, std::uint32_t msn) { next_msn_[qn] = msn; }
  std::size_t mulpdu() const { return mulpdu_; }
  // The LLP's MULPDU changed (RFC 5041 5.1): later messages are segmented at it.
  void set_mulpdu(std::size_t mulpdu) { mulpdu_ = mulpdu; }

 private:
  std::size_t mulpdu_;
  std::map<std::uint32_t, std::uint32_t> next_msn_;
};

}  // namespace rnic::wire
