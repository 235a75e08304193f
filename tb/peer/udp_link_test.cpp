// SPDX-License-Identifier: Apache-2.0
// UdpLink: the UDP socket that carries SCTP packets as whole datagram payloads (RFC 6951 5.1), and two
// rnic::sctp::Endpoints setting up a DDP association and moving a message through real UDP sockets.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/sctp/endpoint.hpp"
#include "rnic/sctp/udp_link.hpp"

namespace {

using namespace rnic::sctp;
using rnic::Errc;
using rnic::wire::ConstBytes;

template <typename F>
void expect_error(Errc code, const std::string& needle, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no rnic::Error thrown";
  } catch (const rnic::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(UdpLink, BindsAnEphemeralPortOnLoopback) {
  UdpLink a;
  EXPECT_EQ(a.local().addr, kIpv4Loopback);
  EXPECT_NE(a.local().port, 0);
  UdpLink b;
  EXPECT_NE(a.local().port, b.local().port);
  EXPECT_GE(a.fd(), 0);
}

// RFC 6951 5.1: the SCTP packet is the datagram's whole payload; the source address comes back with it.
TEST(UdpLink, DatagramRoundTripWithSourceAddress) {
  UdpLink a, b;
  std::vector<std::uint8_t> pkt(1452);
  for (std::size_t i = 0; i < pkt.size(); ++i) pkt[i] = static_cast<std::uint8_t>(i * 7);
  a.send_to(b.local(), ConstBytes(pkt));
  auto d = b.receive(1000);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->bytes, pkt);
  EXPECT_EQ(d->from, a.local());
  EXPECT_EQ(a.counters().sent, 1u);
  EXPECT_EQ(b.counters().bytes_received, pkt.size());
  // The largest IPv4 UDP payload passes whole.
  std::vector<std::uint8_t> big(kMaxUdpPayload, 0x5A);
  b.send_to(a.local(), ConstBytes(big));
  d = a.receive(1000);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->bytes.size(), kMaxUdpPayload);
  EXPECT_EQ(d->from, b.local());
}

TEST(UdpLink, ReceiveTimesOut) {
  UdpLink a;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(a.receive(50).has_value());
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(ms, 45);
  EXPECT_LT(ms, 1000);
  EXPECT_FALSE(a.receive(0).has_value());
}

TEST(UdpLink, SendToAClosedPortIsNotAnError) {
  // Nothing listens there: the datagram is lost, as on a wire; the unconnected socket reports nothing.
  UdpLink a;
  std::uint16_t closed = 0;
  {
    UdpLink gone;
    closed = gone.local().port;
  }
  const std::vector<std::uint8_t> pkt(64, 1);
  a.send_to(Ipv4Endpoint{kIpv4Loopback, closed}, ConstBytes(pkt));
  EXPECT_FALSE(a.receive(20).has_value());
}

TEST(UdpLink, BadArgumentsAreRefused) {
  UdpLink a;
  const std::vector<std::uint8_t> pkt(16, 0);
  expect_error(Errc::kInvalidArgument, "port 0", [&] { a.send_to(Ipv4Endpoint{kIpv4Loopback, 0}, ConstBytes(pkt)); });
  expect_error(Errc::kInvalidArgument, "0.0.0.0", [&] { a.send_to(Ipv4Endpoint{0, 9}, ConstBytes(pkt)); });
  expect_error(Errc::kInvalidArgument, "empty", [&] { a.send_to(a.local(), ConstBytes()); });
  const std::vector<std::uint8_t> big(kMaxUdpPayload + 1, 0);
  expect_error(Errc::kInvalidArgument, "65507", [&] { a.send_to(a.local(), ConstBytes(big)); });
  expect_error(Errc::kInvalidArgument, "timeout_ms", [&] { a.receive(-1); });
  expect_error(Errc::kInvalidArgument, "buffer_bytes", [&] { UdpLink bad(Ipv4Endpoint{kIpv4Loopback, 0}, 0); });
  UdpLink moved = std::move(a);
  expect_error(Errc::kState, "closed",
               [&] { a.send_to(moved.local(), ConstBytes(pkt)); });  // NOLINT(bugprone-use-after-move)
  expect_error(Errc::kState, "closed", [&] { a.receive(0); });       // NOLINT(bugprone-use-after-move)
}

TEST(UdpLink, BindErrors) {
  UdpLink a;
  expect_error(Errc::kBusy, "bind 127.0.0.1:", [&] { UdpLink b(a.local()); });
  // 192.0.2.1 (TEST-NET-1, RFC 5737) is not an address of this host.
  expect_error(Errc::kInvalidArgument, "not an address of this host", [] { UdpLink b(Ipv4Endpoint{0xC0000201, 0}); });
}

TEST(UdpLink, ParsesIpv4Endpoints) {
  EXPECT_EQ(parse_ipv4_endpoint("127.0.0.1:9899"), (Ipv4Endpoint{kIpv4Loopback, 9899}));
  EXPECT_EQ(parse_ipv4_endpoint("10.1.2.255:1"), (Ipv4Endpoint{0x0A0102FF, 1}));
  EXPECT_EQ(parse_ipv4_endpoint("0.0.0.0:0", true), (Ipv4Endpoint{0, 0}));
  EXPECT_EQ(to_string(Ipv4Endpoint{0x0A0102FF, 65535}), "10.1.2.255:65535");
  for (const char* bad :
       {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0:1", "127.0.0.1.1:1",
        "256.0.0.1:1", "a.b.c.d:1", "127.0.0.1:12x", " 127.0.0.1:1", "127..0.1:1", "1270.0.0.1:1", "127.0.0.1:+80"}) {
    expect_error(Errc::kInvalidArgument, "", [&] { parse_ipv4_endpoint(bad); });
  }
  expect_error(Errc::kInvalidArgument, "'x.0.0.1' is not an IPv4 address", [] { parse_ipv4("x.0.0.1"); });
}

// Two Endpoints, each over its own UdpLink: INIT with the DDP indication, a session and a message all
// travel as UDP datagrams on loopback (RFC 6951).
TEST(UdpLink, EndpointsAssociateOverUdp) {
  UdpLink la, lb;
  EndpointConfig ca, cb;
  ca.port = 5001;
  cb.port = 5002;
  Endpoint a(ca, [&](ConstBytes p) { la.send_to(lb.local(), p); });
  Endpoint b(cb, [&](ConstBytes p) { lb.send_to(la.local(), p); });
  std::vector<std::uint8_t> got;
  b.set_segment_sink([&](std::uint16_t, std::uint16_t, ConstBytes seg) { got = seg.to_vector(); });
  b.set_session_handler([&](const SessionNotice& n) {
    if (n.kind == NoticeKind::kInitiate) b.accept(n.stream);
  });
  const auto run = [&](auto done) {
    for (int i = 0; i < 2000 && !done(); ++i) {
      for (UdpLink* l : {&la, &lb}) {
        while (auto d = l->receive(0)) {
          EXPECT_EQ(d->from, l == &la ? lb.local() : la.local());
          (l == &la ? a : b).input(ConstBytes(d->bytes));
        }
      }
      a.pump();
      b.pump();
      Endpoint::advance_timers(1);
    }
    return done();
  };
  b.listen();
  a.connect(5002);
  ASSERT_TRUE(run([&] { return a.state() == AssociationState::kReady && b.state() == AssociationState::kReady; }));
  EXPECT_GT(la.counters().sent, 0u);
  EXPECT_GT(lb.counters().sent, 0u);
  a.initiate(0);
  ASSERT_TRUE(run([&] { return a.session_state(0) == SessionState::kEstablished; }));
  const std::vector<std::uint8_t> msg{1, 2, 3, 4};
  a.send_untagged(0, 0, 0, ConstBytes(msg));
  ASSERT_TRUE(run([&] { return !got.empty(); }));
  EXPECT_EQ(got.size(), rnic::wire::kUntaggedHeaderSize + msg.size());
  ASSERT_TRUE(run([&] { return a.all_acknowledged(); }));
  a.shutdown();
  ASSERT_TRUE(run([&] { return a.state() == AssociationState::kLost && b.state() == AssociationState::kLost; }));
}

}  // namespace

namespace {

// RFC 5043 11.1 decided before data: the passive side reads COMM_UP, the peer's indication and the
// peer's first DATA (its Initiate) in one pump when the COOKIE ECHO and that DATA arrive before it
// pumps. The Initiate must reach the session layer, not be dropped as "not DDP".
TEST(UdpLink, FirstDataReadWithCommUpIsNotDropped) {
  UdpLink la, lb;
  EndpointConfig ca, cb;
  ca.port = 5001;
  cb.port = 5002;
  Endpoint a(ca, [&](ConstBytes p) { la.send_to(lb.local(), p); });
  Endpoint b(cb, [&](ConstBytes p) { lb.send_to(la.local(), p); });
  std::vector<SessionNotice> notices;
  b.set_session_handler([&](const SessionNotice& n) { notices.push_back(n); });
  const auto deliver = [](UdpLink& l, Endpoint& to) {
    for (auto d = l.receive(20); d; d = l.receive(0)) to.input(ConstBytes(d->bytes));
  };
  b.listen();
  a.connect(5002);
  // INIT, INIT-ACK, COOKIE ECHO, COOKIE ACK: usrsctp answers inside input(); b is never pumped.
  for (int i = 0; i < 20 && a.state() != AssociationState::kReady; ++i) {
    deliver(lb, b);
    deliver(la, a);
    a.pump();
  }
  ASSERT_EQ(a.state(), AssociationState::kReady) << a.refusal_reason();
  EXPECT_EQ(b.state(), AssociationState::kListening);  // COMM_UP not read yet
  a.initiate(0);
  deliver(lb, b);
  b.pump();
  EXPECT_EQ(b.state(), AssociationState::kReady);
  EXPECT_EQ(b.counters().not_ddp_dropped, 0u);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].kind, NoticeKind::kInitiate);
}

}  // namespace

namespace {

// The peer's last segment and its SHUTDOWN read in one pump: the segment is still delivered (the
// association going down does not strand what SCTP already acknowledged in the reorder buffer).
TEST(UdpLink, LastSegmentReadWithShutdownIsDelivered) {
  UdpLink la, lb;
  EndpointConfig ca, cb;
  ca.port = 5001;
  cb.port = 5002;
  Endpoint a(ca, [&](ConstBytes p) { la.send_to(lb.local(), p); });
  Endpoint b(cb, [&](ConstBytes p) { lb.send_to(la.local(), p); });
  std::vector<std::uint16_t> ssns;
  std::vector<NoticeKind> notices;
  b.set_segment_sink([&](std::uint16_t, std::uint16_t ssn, ConstBytes) { ssns.push_back(ssn); });
  b.set_session_handler([&](const SessionNotice& n) {
    notices.push_back(n.kind);
    if (n.kind == NoticeKind::kInitiate) b.accept(n.stream);
  });
  const auto deliver = [](UdpLink& l, Endpoint& to) {
    bool any = false;
    for (auto d = l.receive(5); d; d = l.receive(0)) {
      to.input(ConstBytes(d->bytes));
      any = true;
    }
    return any;
  };
  const auto run = [&](bool pump_b, auto done) {
    for (int i = 0; i < 400 && !done(); ++i) {
      deliver(lb, b);
      deliver(la, a);
      a.pump();
      if (pump_b) b.pump();
      Endpoint::advance_timers(50);  // b's delayed SACK fires even when b is not pumped
    }
    return done();
  };
  b.listen();
  a.connect(5002);
  ASSERT_TRUE(
      run(true, [&] { return a.state() == AssociationState::kReady && b.state() == AssociationState::kReady; }));
  a.initiate(0);
  ASSERT_TRUE(run(true, [&] { return a.session_state(0) == SessionState::kEstablished; }));
  // From here b is not pumped: the segment and the Terminate wait in b's socket, acknowledged.
  const std::vector<std::uint8_t> msg(100, 7);
  a.send_untagged(0, 0, 0, ConstBytes(msg));
  a.terminate(0);
  ASSERT_TRUE(run(false, [&] { return a.all_acknowledged(); }));
  a.shutdown();
  ASSERT_TRUE(run(false, [&] { return a.state() == AssociationState::kLost; }));
  EXPECT_TRUE(ssns.empty());
  b.pump();  // data, Terminate and the shutdown, all in one read
  EXPECT_EQ(b.state(), AssociationState::kLost);
  EXPECT_EQ(ssns, std::vector<std::uint16_t>{1});
  EXPECT_EQ(notices, (std::vector<NoticeKind>{NoticeKind::kInitiate, NoticeKind::kTerminated}));
}

}  // namespace
