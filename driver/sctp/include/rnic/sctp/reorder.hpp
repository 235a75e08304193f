// SPDX-License-Identifier: Apache-2.0
// RFC 5043 10: restoring submission order from the DDP-SSN of unordered DATA chunks, per SCTP stream.
//
// The receiver accepts a DDP-SSN only if the gap to the next expected one can be accounted for by
// unreceived chunks: at most kMaxInFlight - 1 ahead of the delivery point (so never more than 32767
// chunks held), not already held, not behind the delivery point. Nothing is allocated for an
// implausible DDP-SSN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace rnic::sctp {

struct ReceivedChunk {
  std::uint32_t ppid = 0;
  std::vector<std::uint8_t> data;  // the whole chunk user data, DDP-SSN included
};

class SsnReorderBuffer {
 public:
  static constexpr std::uint16_t kMaxInFlight = 32767;  // RFC 5043 10

  enum class Insert {
    kAccepted,
    kDuplicate,    // this DDP-SSN is already held
    kImplausible,  // behind the delivery point, or too far ahead to be explained by chunks in flight
  };

  Insert insert(std::uint16_t ssn, ReceivedChunk chunk);
  // The chunk at the delivery point is present.
  bool ready() const { return held_.count(next_) != 0; }
  std::uint16_t next_ssn() const { return next_; }
  // The chunk at the delivery point; only when ready().
  const ReceivedChunk& front() const { return held_.at(next_); }
  // Removes the chunk at the delivery point and advances it (DDP-SSN wraps 65535 -> 0).
  ReceivedChunk pop();
  // A new session: delivery point back to 0, everything held dropped.
  void reset();
  std::size_t held() const { return held_.size(); }
  // Chunks that arrived with a DDP-SSN other than the delivery point: reordering observed.
  std::uint64_t out_of_order() const { return out_of_order_; }

 private:
  std::uint16_t next_ = 0;
  std::unordered_map<std::uint16_t, ReceivedChunk> held_;
  std::uint64_t out_of_order_ = 0;
};

}  // namespace rnic::sctp
