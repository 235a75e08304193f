// SPDX-License-Identifier: Apache-2.0
// Unit tests of the RFC 5043 pieces that need no SCTP stack: the session table (6) and the DDP-SSN
// reorder buffer (10).
#include <gtest/gtest.h>

#include "rnic/sctp/reorder.hpp"
#include "rnic/sctp/session.hpp"

namespace {

using namespace rnic::sctp;

// Every (state, event) pair has an entry; local events only send or refuse, remote events never do.
TEST(SessionTable, EveryPairDefinedLocalAndRemoteActionsSeparate) {
  for (std::size_t st = 0; st < kSessionStateCount; ++st) {
    for (std::size_t ev = 0; ev < kSessionEventCount; ++ev) {
      const auto e = static_cast<SessionEvent>(ev);
      const Transition& t = session_transition(static_cast<SessionState>(st), e);
      const bool local_action = t.action == SessionAction::kSend || t.action == SessionAction::kRefuse;
      EXPECT_EQ(local_action, is_local(e))
          << session_state_name(static_cast<SessionState>(st)) << " / " << session_event_name(e);
      if (t.action == SessionAction::kRefuse || t.action == SessionAction::kHold) {
        EXPECT_EQ(static_cast<std::size_t>(t.next), st) << "a refused or held event changes no state";
      }
      if (t.action == SessionAction::kViolation) {
        EXPECT_EQ(t.next, SessionState::kIdle);
      }
    }
  }
}

SessionState walk(std::initializer_list<SessionEvent> events) {
  SessionState s = SessionState::kIdle;
  for (auto e : events) {
    const Transition& t = session_transition(s, e);
    EXPECT_TRUE(t.action != SessionAction::kRefuse && t.action != SessionAction::kViolation &&
                t.action != SessionAction::kStale)
        << session_event_name(e) << " in " << session_state_name(s);
    s = t.next;
  }
  return s;
}

// RFC 5043 6.2-6.4, from both sides.
TEST(SessionTable, LegalSequences) {
  using E = SessionEvent;
  EXPECT_EQ(walk({E::kSendInitiate, E::kRecvAccept, E::kSendSegment, E::kRecvSegment, E::kSendTerminate}),
            SessionState::kIdle);  // 6.2 active
  EXPECT_EQ(walk({E::kRecvInitiate, E::kSendAccept, E::kRecvSegment, E::kSendSegment, E::kRecvTerminate}),
            SessionState::kIdle);                                               // 6.2 passive
  EXPECT_EQ(walk({E::kSendInitiate, E::kRecvReject}), SessionState::kIdle);     // 6.3
  EXPECT_EQ(walk({E::kRecvInitiate, E::kSendReject}), SessionState::kIdle);     // 6.3
  EXPECT_EQ(walk({E::kSendInitiate, E::kRecvTerminate}), SessionState::kIdle);  // 6.4
  EXPECT_EQ(walk({E::kRecvInitiate, E::kSendTerminate}), SessionState::kIdle);  // 6.4
}

TEST(SessionTable, IllegalSequencesAreViolationsOrRefusals) {
  using E = SessionEvent;
  using S = SessionState;
  EXPECT_EQ(session_transition(S::kInitiateSent, E::kRecvSegment).action, SessionAction::kViolation);
  EXPECT_EQ(session_transition(S::kInitiateSent, E::kRecvInitiate).action, SessionAction::kViolation);
  EXPECT_EQ(session_transition(S::kEstablished, E::kRecvAccept).action, SessionAction::kViolation);
  EXPECT_EQ(session_transition(S::kEstablished, E::kRecvReject).action, SessionAction::kViolation);
  EXPECT_EQ(session_transition(S::kInitiateReceived, E::kRecvAccept).action, SessionAction::kViolation);
  EXPECT_EQ(session_transition(S::kIdle, E::kRecvSegment).action, SessionAction::kStale);
  EXPECT_EQ(session_transition(S::kIdle, E::kSendSegment).action, SessionAction::kRefuse);
  EXPECT_EQ(session_transition(S::kInitiateSent, E::kSendSegment).action, SessionAction::kRefuse);  // 6.6
  EXPECT_EQ(session_transition(S::kEstablished, E::kSendReject).action, SessionAction::kRefuse);
  EXPECT_EQ(session_transition(S::kInitiateReceived, E::kRecvSegment).action, SessionAction::kHold);
}

ReceivedChunk chunk(std::uint8_t tag) { return ReceivedChunk{16, {0, 0, tag}}; }

// RFC 5043 10: submission order restored from the DDP-SSN.
TEST(SsnReorder, RestoresOrder) {
  SsnReorderBuffer b;
  for (std::uint16_t s : {std::uint16_t{3}, std::uint16_t{1}, std::uint16_t{2}, std::uint16_t{0}})
    ASSERT_EQ(b.insert(s, chunk(static_cast<std::uint8_t>(s))), SsnReorderBuffer::Insert::kAccepted);
  EXPECT_EQ(b.out_of_order(), 3u);
  for (std::uint8_t want = 0; want < 4; ++want) {
    ASSERT_TRUE(b.ready());
    EXPECT_EQ(b.pop().data[2], want);
  }
  EXPECT_FALSE(b.ready());
  EXPECT_EQ(b.next_ssn(), 4);
}

// RFC 5043 10: at most 32767 chunks in flight; a gap beyond that, a DDP-SSN behind the delivery point
// or a duplicate cannot be explained by unreceived chunks.
TEST(SsnReorder, PlausibilityWindowAndDuplicates) {
  SsnReorderBuffer b;
  EXPECT_EQ(b.insert(32766, chunk(1)), SsnReorderBuffer::Insert::kAccepted);
  EXPECT_EQ(b.insert(32767, chunk(1)), SsnReorderBuffer::Insert::kImplausible);
  EXPECT_EQ(b.insert(65535, chunk(1)), SsnReorderBuffer::Insert::kImplausible);  // behind 0
  EXPECT_EQ(b.insert(32766, chunk(2)), SsnReorderBuffer::Insert::kDuplicate);
  EXPECT_EQ(b.held(), 1u);
  b.reset();
  EXPECT_EQ(b.held(), 0u);
  EXPECT_EQ(b.next_ssn(), 0);
}

TEST(SsnReorder, WrapsAt65536) {
  SsnReorderBuffer b;
  for (std::uint32_t i = 0; i < 65536 + 10; ++i) {
    ASSERT_EQ(b.insert(static_cast<std::uint16_t>(i), chunk(0)), SsnReorderBuffer::Insert::kAccepted) << i;
    b.pop();
  }
  EXPECT_EQ(b.next_ssn(), 10);
  EXPECT_EQ(b.insert(9, chunk(0)), SsnReorderBuffer::Insert::kImplausible);
}

}  // namespace
