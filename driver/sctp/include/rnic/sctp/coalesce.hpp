// SPDX-License-Identifier: Apache-2.0
// The host side of the card's trimmed-header path (docs/network.md): usrsctp's cost is mostly per packet,
// and a packet whose DDP segments the card took is a few dozen bytes of chunk headers. PacketCoalescer
// merges the host copies of consecutive packets of one association into one SCTP packet for
// usrsctp_conninput, as a sender may bundle chunks (RFC 9260 6.10): the first packet's common header,
// then each packet's chunks in arrival order, each padded to 4 bytes.
//
// Only packets the card matched to the same association (the key: its table entry) whose chunks are all
// DATA (type 0) or PAD (0x84, RFC 4820: a DATA chunk the card declined) and whose common headers (ports,
// verification tag) are equal are merged. Anything else ends the run and goes alone, in order: control
// chunks (INIT, SACK, SHUTDOWN ... which RFC 9260 forbids bundling or usrsctp must see as sent), a packet
// with no key (the card did not match it), a malformed packet. A merged packet is never longer than
// max_bytes nor made of more than max_packets packets. So usrsctp sees the same chunks in the same order:
// only the packet boundaries between DATA of one association go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "rnic/wire/bytes.hpp"

namespace rnic::sctp {

struct CoalescerCounters {
  std::uint64_t packets_in = 0;   // packets given to add()
  std::uint64_t packets_out = 0;  // packets handed on (merged or alone)
  std::uint64_t merged = 0;       // packets that went into a merged packet after its first
};

class PacketCoalescer {
 public:
  using Out = std::function<void(wire::ConstBytes sctp_packet)>;
  // max_packets 1 turns merging off. Throws rnic::Error kInvalidArgument for max_packets 0, max_bytes
  // below 12 or an empty out.
  PacketCoalescer(std::size_t max_packets, std::size_t max_bytes, Out out);

  // One packet of the receive ring, in order; key: the card's association entry it matched, nullopt if
  // none. May hand packets to out (the earlier ones first).
  void add(std::optional<std::uint32_t> key, wire::ConstBytes packet);
  // Hands on the packet being merged, if any (at the end of a batch: nothing waits for the next one).
  void flush();

  const CoalescerCounters& counters() const { return counters_; }

 private:
  static bool mergeable(wire::ConstBytes packet);

  std::size_t max_packets_, max_bytes_;
  Out out_;
  std::vector<std::uint8_t> pending_;
  std::optional<std::uint32_t> pending_key_;
  std::size_t pending_count_ = 0;
  CoalescerCounters counters_;
};

}  // namespace rnic::sctp
