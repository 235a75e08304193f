// SPDX-License-Identifier: Apache-2.0
#include "rnic/sctp/session.hpp"

#include <array>

namespace rnic::sctp {
namespace {

using S = SessionState;
using A = SessionAction;

constexpr Transition T(S next, A action) { return Transition{next, action}; }

// Rows: state. Columns: SendInitiate SendAccept SendReject SendTerminate SendSegment
//                       RecvInitiate RecvAccept RecvReject RecvTerminate RecvSegment
constexpr std::array<std::array<Transition, kSessionEventCount>, kSessionStateCount> kTable{{
    // kIdle: only an Initiate (either side) starts a session; anything received is left over.
    {{T(S::kInitiateSent, A::kSend), T(S::kIdle, A::kRefuse), T(S::kIdle, A::kRefuse), T(S::kIdle, A::kRefuse),
      T(S::kIdle, A::kRefuse), T(S::kInitiateReceived, A::kAdmit), T(S::kIdle, A::kStale), T(S::kIdle, A::kStale),
      T(S::kIdle, A::kStale), T(S::kIdle, A::kStale)}},
    // kInitiateSent: the peer answers Accept (6.2), Reject (6.3) or Terminate (6.4); the local ULP may
    // abandon with Terminate; no segment before the answer (6.6).
    {{T(S::kInitiateSent, A::kRefuse), T(S::kInitiateSent, A::kRefuse), T(S::kInitiateSent, A::kRefuse),
      T(S::kIdle, A::kSend), T(S::kInitiateSent, A::kRefuse), T(S::kIdle, A::kViolation),
      T(S::kEstablished, A::kReport), T(S::kIdle, A::kReport), T(S::kIdle, A::kReport), T(S::kIdle, A::kViolation)}},
    // kInitiateReceived: only the ULP decides (Accept, Reject at its direction 6.3, or Terminate);
    // the active side may give up (Terminate); its early segments wait for the decision.
    {{T(S::kInitiateReceived, A::kRefuse), T(S::kEstablished, A::kSend), T(S::kIdle, A::kSend), T(S::kIdle, A::kSend),
      T(S::kInitiateReceived, A::kRefuse), T(S::kIdle, A::kViolation), T(S::kIdle, A::kViolation),
      T(S::kIdle, A::kViolation), T(S::kIdle, A::kReport), T(S::kInitiateReceived, A::kHold)}},
    // kEstablished: segments both ways until a Terminate (6.2); a second Initiate/Accept or a Reject
    // fits no legal sequence.
    {{T(S::kEstablished, A::kRefuse), T(S::kEstablished, A::kRefuse), T(S::kEstablished, A::kRefuse),
      T(S::kIdle, A::kSend), T(S::kEstablished, A::kSend), T(S::kIdle, A::kViolation), T(S::kIdle, A::kViolation),
      T(S::kIdle, A::kViolation), T(S::kIdle, A::kReport), T(S::kEstablished, A::kDeliver)}},
}};

}  // namespace

const Transition& session_transition(SessionState state, SessionEvent event) noexcept {
  return kTable[static_cast<std::size_t>(state)][static_cast<std::size_t>(event)];
}

const char* session_state_name(SessionState s) noexcept {
  switch (s) {
    case S::kIdle:
      return "Idle";
    case S::kInitiateSent:
      return "InitiateSent";
    case S::kInitiateReceived:
      return "InitiateReceived";
    case S::kEstablished:
      return "Established";
  }
  return "?";
}

const char* session_event_name(SessionEvent e) noexcept {
  switch (e) {
    case SessionEvent::kSendInitiate:
      return "send Initiate";
    case SessionEvent::kSendAccept:
      return "send Accept";
    case SessionEvent::kSendReject:
      return "send Reject";
    case SessionEvent::kSendTerminate:
      return "send Terminate";
    case SessionEvent::kSendSegment:
      return "send segment";
    case SessionEvent::kRecvInitiate:
      return "receive Initiate";
    case SessionEvent::kRecvAccept:
      return "receive Accept";
    case SessionEvent::kRecvReject:
      return "receive Reject";
    case SessionEvent::kRecvTerminate:
      return "receive Terminate";
    case SessionEvent::kRecvSegment:
      return "receive segment";
  }
  return "?";
}

}  // namespace rnic::sctp
