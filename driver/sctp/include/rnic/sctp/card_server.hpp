// SPDX-License-Identifier: Apache-2.0
// The host side as a server (docs/network.md, "Serving several peers"): the card's receive ring read in
// one place and each packet handed to the CardEndpoint of the peer that sent it (NRXD SRC_IP and
// SRC_PORT: the datagram's sender), so several associations run at once, each with its own usrsctp
// endpoint, association table entry and network-layer socket towards its own peer.
//
// A slot is an association table entry and the socket of the same number (slots first_slot ..
// first_slot + slots - 1). A packet from a sender that has a slot goes to its endpoint. A packet from
// anyone else is answered only if it is an SCTP INIT (RFC 9260 3.3.2: chunk type 1, verification tag 0,
// alone in its packet), a slot is free and the rate of new senders allows it: then the factory makes a
// listening CardEndpoint for that sender (its socket set towards the sender) and the INIT goes to it.
// Everything else from unknown senders is dropped and counted: junk, stray chunks of associations
// that are gone (RFC 9260 8.4 lets a host discard them), INITs beyond the table or the rate. Nothing is
// ever sent to an address that did not send to the card first, and never to another peer's address.
//
// Replies to senders whose association is not up are bounded, so the card is no amplifier: new
// senders are admitted at new_peer_rate per second (new_peer_burst at once), and an endpoint still in
// its handshake takes its sender's packets at handshake_rate per second (handshake_burst at once; one
// sender's flood does not starve another's handshake). Over either, packets are dropped and counted
// (a real peer's SCTP sends again). An endpoint whose association is not up handshake_timeout after
// it was made is retired (its slot freed): a stranger's INIT holds a slot for that long at most. And
// when an INIT finds every slot taken, the oldest endpoint still in its handshake after evict_after
// is retired at once (that INIT is dropped; the sender's next one finds the slot): strangers that
// never finish a handshake cannot hold the table against a peer that does.
//
// A freed slot goes to another sender only once the transmit ring holds nothing more of its old
// endpoint's (NetPort::tx_pending() is 0: a packet's socket is looked up as it leaves) and reuse_delay
// has passed; the sender it served may have it back at once. Slots are reused least recently freed
// first.
//
// Not thread-safe; one thread calls poll() and steps the endpoints.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/sctp/card_endpoint.hpp"
#include "rnic/sctp/udp_link.hpp"

namespace rnic::sctp {

struct CardServerConfig {
  std::uint32_t first_slot = 0;  // the slots: association table entries and sockets first_slot ..
  std::uint32_t slots = 16;      //   first_slot + slots - 1 (at most the card's 16)
  double new_peer_rate = 20;     // new senders admitted per second
  std::uint32_t new_peer_burst = 8;
  double handshake_rate = 20;  // packets per second to an endpoint whose association is not up
  std::uint32_t handshake_burst = 8;
  std::chrono::milliseconds handshake_timeout{10000};
  std::chrono::milliseconds evict_after{1000};
  std::size_t rx_batch = 64;  // receive-ring packets taken per poll
  std::chrono::milliseconds reuse_delay{50};
  std::optional<Ipv4Endpoint> only;  // serve this sender only (before any rate is charged)
};

struct CardServerCounters {
  std::uint64_t packets_in = 0, delivered = 0;
  std::uint64_t new_peers = 0;             // endpoints made for a sender's INIT
  std::uint64_t most_active = 0;           // the most slots in use at once
  std::uint64_t handshakes_timed_out = 0;  // retired: not up within handshake_timeout
  std::uint64_t handshakes_evicted = 0;    // retired: in its handshake past evict_after, the table full
  std::uint64_t unknown_not_init = 0;      // dropped: an unknown sender's packet that is not an INIT
  std::uint64_t table_full = 0;            // dropped: an INIT with every slot taken
  std::uint64_t rate_limited = 0;          // dropped: over the new-peer or the handshake rate
  std::uint64_t refused = 0;               // dropped: not `only`, or the factory declined the sender
};

class CardServer {
 public:
  // Makes the listening CardEndpoint for a new sender on `slot` (config: peer = sender, socket and
  // assoc_entry = slot, shared_ring = true), or returns nullptr to decline it. The endpoint belongs to
  // the caller and stays valid until it calls release(slot) or the server calls retire(slot).
  using Factory = std::function<CardEndpoint*(const Ipv4Endpoint& sender, std::uint32_t slot)>;
  // The server gives the slot up (its handshake timed out): the caller destroys that endpoint now.
  using Retire = std::function<void(std::uint32_t slot)>;

  // Throws rnic::Error kInvalidArgument for slots beyond the card's 16 or a rate or burst of 0.
  CardServer(NetPort& net, CardServerConfig config, Factory factory, Retire retire);
  CardServer(const CardServer&) = delete;
  CardServer& operator=(const CardServer&) = delete;

  // Handshakes past their time retired (by the state their endpoints' last step left), then
  // receive-ring packets to their endpoints (up to rx_batch). Returns the packets taken from the ring.
  std::size_t poll();
  // The caller is done with the endpoint on `slot` (destroyed it): the slot is free for a new sender.
  void release(std::uint32_t slot);

  std::size_t active() const;  // slots in use
  std::optional<Ipv4Endpoint> peer(std::uint32_t slot) const;
  const CardServerCounters& counters() const { return counters_; }

  // RFC 9260 3.3.2: an INIT is the only chunk of its packet, which carries verification tag 0. Exposed
  // for tests.
  static bool is_init(const std::vector<std::uint8_t>& packet);

 private:
  // rate per second, burst at once.
  struct TokenBucket {
    double tokens = 0, rate = 0, burst = 0;
    std::chrono::steady_clock::time_point at;
    TokenBucket() = default;
    TokenBucket(double r, double b) : tokens(b), rate(r), burst(b), at(std::chrono::steady_clock::now()) {}
    bool take();
  };
  struct Slot {
    CardEndpoint* ep = nullptr;
    Ipv4Endpoint peer;
    std::chrono::steady_clock::time_point made;
    TokenBucket handshake;
    bool up = false;  // the association left its handshake: no longer rate-limited nor timed
    std::chrono::steady_clock::time_point freed;  // free slots: when (the epoch: never used)
  };
  static bool handshaking(Slot& s);
  Slot* free_slot(const Ipv4Endpoint& sender);
  void evict_oldest_handshake();
  void free(Slot& s);
  Slot* find(const Ipv4Endpoint& sender);
  void admit(const NetRxPacket& p, const Ipv4Endpoint& sender);

  NetPort& net_;
  CardServerConfig config_;
  Factory factory_;
  Retire retire_;
  std::vector<Slot> slots_;
  std::vector<NetRxPacket> rx_;
  TokenBucket new_peers_;
  CardServerCounters counters_;
};

}  // namespace rnic::sctp
