// SPDX-License-Identifier: Apache-2.0
// RFC 5043 6: DDP Stream Sessions as an explicit state machine, one per DDP stream.
//
// The table session_transition(state, event) is the whole protocol: every pair of (state, event) has one
// entry, so a chunk that fits no legal sequence of 6.2-6.4 is a table entry too (kViolation), never an
// unhandled case. Remote events are considered in DDP-SSN order (6.1), after the reorder buffer.
//
// Legal sequences (each direction numbers its chunks from DDP-SSN 0 per session, 6.1):
//   6.2  Initiate -> Accept -> segments both ways -> Terminate (either side, at least one)
//   6.3  Initiate -> Reject (only at the ULP's direction)
//   6.4  Initiate -> Terminate (passive side over its limit of Initiates pending a ULP decision)
// Local policy choices (documented in docs/sctp-adaptation.md):
//   - the session ends at the first Terminate sent or received; chunks of that session still in flight
//     are then stale and dropped (6: "never carried over to the next session");
//   - the active side sends segments only after the Accept arrived (6.6);
//   - a segment of the active side that arrives before the ULP accepted (legal after SCTP acked the
//     Initiate, 6.6) is held, not delivered, until the ULP decides.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rnic::sctp {

enum class SessionState : std::uint8_t {
  kIdle,              // no session on this DDP stream
  kInitiateSent,      // active side: Initiate sent, waiting for Accept / Reject / Terminate
  kInitiateReceived,  // passive side: Initiate reported to the ULP, waiting for its decision
  kEstablished,       // Accept exchanged: DDP segments flow both ways
};
inline constexpr std::size_t kSessionStateCount = 4;

enum class SessionEvent : std::uint8_t {
  kSendInitiate,
  kSendAccept,
  kSendReject,
  kSendTerminate,
  kSendSegment,
  kRecvInitiate,
  kRecvAccept,
  kRecvReject,
  kRecvTerminate,
  kRecvSegment,
};
inline constexpr std::size_t kSessionEventCount = 10;

enum class SessionAction : std::uint8_t {
  kSend,       // local: legal, transmit the chunk
  kRefuse,     // local: illegal in this state; nothing is sent, the call fails
  kDeliver,    // remote segment: hand it to the sink
  kReport,     // remote Accept / Reject / Terminate: report it to the ULP
  kAdmit,      // remote Initiate: report to the ULP if under the pending limit, else answer Terminate (6.4)
  kHold,       // remote segment before the ULP decided: keep it (in DDP-SSN order) until it does
  kViolation,  // remote chunk fitting no legal sequence: answer Terminate, the session ends (6.1)
  kStale,      // remote chunk with no session (left over from an ended one): dropped and counted
};

struct Transition {
  SessionState next;
  SessionAction action;
};

// The table. kAdmit's `next` is kInitiateReceived; over the pending limit the caller answers
// Terminate and stays kIdle instead.
const Transition& session_transition(SessionState state, SessionEvent event) noexcept;

const char* session_state_name(SessionState s) noexcept;
const char* session_event_name(SessionEvent e) noexcept;
inline bool is_local(SessionEvent e) { return e <= SessionEvent::kSendSegment; }

}  // namespace rnic::sctp
