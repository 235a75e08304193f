// SPDX-License-Identifier: Apache-2.0
// Reference model of a DDP Data Sink (RFC 5041 5.3, 5.4, 7.1; RFC 5043 DDP-SSN ordering).
// It is the executable statement of the semantics the RTL pipeline implements, used by the host demo
// as a software receiver and by testbenches as the scoreboard's model. Placement goes into a flat
// simulated host memory by address, exactly as the hardware's DMA would.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/ddp_errors.hpp"

namespace rnic::model {

// Flat host memory addressed from 0; writes outside it are a model bug and throw.
class HostMemory {
 public:
  explicit HostMemory(std::size_t size, std::uint8_t fill = 0) : bytes_(size, fill) {}
  void write(std::uint64_t addr, rnic::wire::ConstBytes data);
  rnic::wire::ConstBytes read(std::uint64_t addr, std::size_t len) const;
  std::size_t size() const { return bytes_.size(); }
  std::uint8_t* data() { return bytes_.data(); }

 private:
  std::vector<std::uint8_t> bytes_;
};

inline constexpr std::uint32_t stag_index(std::uint32_t stag) { return stag >> 8; }
inline constexpr std::uint8_t stag_key(std::uint32_t stag) { return static_cast<std::uint8_t>(stag); }
inline constexpr std::uint32_t make_stag(std::uint32_t index, std::uint8_t key) { return (index << 8) | key; }

struct StagEntry {
  std::uint8_t key = 0;
  std::uint32_t pd = 0;
  std::optional<std::uint32_t> bound_stream;  // 8.2: optional binding to one stream
  bool remote_write = true;
  std::uint64_t base_to = 0;
  std::uint64_t length = 0;
  std::uint64_t host_addr = 0;
};

enum class StreamState { kNormal, kError, kTornDown };

struct Completion {
  std::uint32_t stream = 0;
  bool is_error = false;
  // Delivery (5.4).
  bool tagged = false;
  std::uint32_t stag = 0;         // tagged
  std::uint32_t qn = 0;           // untagged
  std::uint32_t msn = 0;          // untagged
  std::uint32_t length = 0;       // untagged: MO + len of the last segment
  std::uint64_t rsvd_ulp = 0;     // 8 bits tagged, 40 bits untagged
  std::uint64_t buffer_addr = 0;  // untagged: the receive buffer consumed
  std::uint16_t ssn = 0;          // delivery: DDP-SSN of the last segment; error: of the failing segment
  // Error report (7.1): type/code, segment length, and the DDP header bytes.
  rnic::wire::DdpError error = rnic::wire::DdpError::kLocalCatastrophic;
  std::uint32_t segment_length = 0;
  std::vector<std::uint8_t> header_bytes;
  // Error found in DDP-SSN order at delivery (an untagged segment without its queue's expected MSN):
  // reported as UntaggedMsnRange with qn and msn of the segment, segment_length 0, no header bytes.
  bool order = false;
};

struct Counters {
  std::uint64_t segments = 0;
  std::uint64_t bytes_placed = 0;
  std::uint64_t messages_delivered = 0;
  std::uint64_t drops = 0;              // segments silently dropped on a stream in error / torn down
  std::uint64_t duplicates = 0;         // placed again, nothing else changed (5.3)
  std::uint64_t access_violations = 0;  // reported as TaggedInvalidStag, counted here too
  std::uint64_t net_duplicates = 0;     // receive_net: DDP-SSN behind the delivery point
  std::uint64_t net_declined = 0;       // receive_net: DDP-SSN at or beyond the window
  std::map<rnic::wire::DdpError, std::uint64_t> errors;
};

class DataSink {
 public:
  struct Config {
    std::uint32_t num_stags = 4096;
    std::uint32_t num_streams = 256;
    std::uint32_t num_qns = 4;
    std::uint16_t ssn_window = 64;  // segments of a stream accepted ahead of the delivery point
    // Longest segment (packet) the Data Sink takes; a longer one is LocalCatastrophic (7.2 type 0).
    // 0: no limit.
    std::uint32_t max_seg_bytes = 0;
    // true: a queue takes untagged segments only once configure_queue() has run for it since the
    // stream was enabled (else InvalidQn, as the card); false: every QN below num_qns starts at MSN 1.
    bool queues_need_config = false;
  };
  DataSink(HostMemory& mem, Config cfg);

  // Tables, as the driver programs them.
  void set_stag(std::uint32_t index, const StagEntry& e);
  void invalidate_stag(std::uint32_t index);
  void enable_stream(std::uint32_t stream, std::uint32_t pd);
  void reset_stream(std::uint32_t stream);  // back to normal, SSN/MSN state cleared
  void teardown_stream(std::uint32_t stream);
  // QUEUE_CONFIG: (stream, QN) starts empty with expected MSN first_msn (0 means 1, RFC 5041 4.3).
  void configure_queue(std::uint32_t stream, std::uint32_t qn, std::uint32_t first_msn);
  // Receive buffers for (stream, QN) take the queue's MSNs (first MSN, first MSN + 1, ...) in posting
  // order.
  void post_buffer(std::uint32_t stream, std::uint32_t qn, std::uint64_t host_addr, std::uint32_t length);

  // What became of a segment.
  enum class Outcome {
    kPlaced,   // passed every check and placed (a duplicate DDP-SSN too: placed again, 5.3)
    kDropped,  // silently dropped: stream not normal, or outside the window before its waiting error
    kFailed,   // failed a check: reported now or at its DDP-SSN position; nothing placed
  };
  // One DDP segment from the LLP with its stream and DDP-SSN (RFC 5043 5.2.1).
  Outcome receive(std::uint32_t stream, std::uint16_t ddp_ssn, rnic::wire::ConstBytes segment);

  // What became of a segment the card's network front end handed over (docs/network.md).
  enum class Fate {
    kTaken,      // checked like receive(): placed, dropped on a stream not normal, or an RFC 5041 error
    kDuplicate,  // DDP-SSN behind the delivery point: a copy of a segment taken before; nothing changes
    kDeclined,   // DDP-SSN at or beyond the window: nothing changes; SCTP brings it again (RFC 5043 10)
  };
  // As receive(), but outside the reorder window the segment is a duplicate (behind the delivery
  // point, distance >= 2^15) or declined (ahead), not an LLP error; that check comes right after the
  // stream's state, before any other.
  Fate receive_net(std::uint32_t stream, std::uint16_t ddp_ssn, rnic::wire::ConstBytes segment);
  // The fate receive_net would give a segment with this DDP-SSN now, changing nothing.
  Fate net_fate(std::uint32_t stream, std::uint16_t ddp_ssn) const;

  std::deque<Completion>& completions() { return completions_; }
  const Counters& counters() const { return counters_; }
  StreamState stream_state(std::uint32_t stream) const { return streams_.at(stream).state; }

 private:
  struct RecvBuffer {
    std::uint64_t addr;
    std::uint32_t length;
  };
  struct Pending {  // a placed, undelivered segment, or a failing one waiting at its DDP-SSN
    bool last;
    bool untagged;        // its QN and MSN are in delivery.qn / delivery.msn
    Completion delivery;  // the message's completion when last; the error report when error
    bool error = false;
  };
  struct Stream {
    bool enabled = false;
    std::uint32_t pd = 0;
    StreamState state = StreamState::kNormal;
    std::uint16_t next_ssn = 0;  // delivery point
    std::map<std::uint16_t, Pending> placed;
    // A segment failed a 7.1 check at this DDP-SSN and its error waits there (the card's PENDING):
    // only segments in the window before it are taken.
    std::optional<std::uint16_t> error_ssn;
    std::vector<std::deque<RecvBuffer>> queues;  // per QN
    // Per QN the expected MSN: the next message to complete, MSN of queues[qn].front() (4.3: first MSN
    // from the queue's configuration, + 1 per completed message, modulo 2^32).
    std::vector<std::uint32_t> head_msn;
    // Per QN, MSNs completed while the queue held no buffer (a message placed under an earlier
    // configuration of the queue and delivered after QUEUE_CONFIG): the next posts take them.
    std::vector<std::uint32_t> owed;
    std::vector<bool> configured;  // per QN (Config::queues_need_config)
  };

  std::optional<rnic::wire::DdpError> validate_tagged(const Stream& s, std::uint32_t stream,
                                                      const rnic::wire::TaggedHeader& h, std::uint64_t len,
                                                      std::uint64_t& addr);
  std::optional<rnic::wire::DdpError> validate_untagged(const Stream& s, const rnic::wire::UntaggedHeader& h,
                                                        std::uint64_t len, std::uint64_t& addr, RecvBuffer& buf);
  // A failing segment (7.1). In the window, its error is reported at its DDP-SSN position: after
  // every message before it, and nothing of the stream is delivered after it (docs/rtl-architecture.md,
  // "Errors in DDP-SSN order"). Outside the window (no position) it is reported at once.
  Outcome fail(Stream& s, std::uint32_t stream, std::uint16_t ssn, rnic::wire::DdpError e,
               rnic::wire::ConstBytes segment, std::size_t header_len);
  // Delivery in DDP-SSN order (5.3, 5.4); a failing segment reached reports its error and ends the
  // stream's delivery. Every released untagged segment must carry its queue's
  // expected MSN (4.3: + 1 per message; 7.1 untagged #5: the lower limit is what has been completed),
  // else an order error (UntaggedMsnRange, order flag): the stream enters the error state, nothing
  // more is delivered on it and no buffer is consumed. A completed untagged message consumes the
  // buffer its own MSN names (the queue's front).
  void deliver_in_order(Stream& s, std::uint32_t stream);

  HostMemory& mem_;
  Config cfg_;
  std::vector<std::optional<StagEntry>> stags_;
  std::vector<Stream> streams_;
  std::deque<Completion> completions_;
  Counters counters_;
};

}  // namespace rnic::model
