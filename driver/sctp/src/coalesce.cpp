// SPDX-License-Identifier: Apache-2.0
#include "rnic/sctp/coalesce.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "rnic/driver/rnic.hpp"

namespace rnic::sctp {
namespace {

constexpr std::size_t kCommonHeader = 12;  // RFC 9260 3.1
constexpr std::size_t kPortsAndTag = 8;    // source port, destination port, verification tag
constexpr std::uint8_t kChunkData = 0x00;  // RFC 9260 3.3.1
constexpr std::uint8_t kChunkPad = 0x84;   // RFC 4820

std::size_t pad4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

}  // namespace

PacketCoalescer::PacketCoalescer(std::size_t max_packets, std::size_t max_bytes, Out out)
    : max_packets_(max_packets), max_bytes_(max_bytes), out_(std::move(out)) {
  if (max_packets_ == 0) throw rnic::Error(Errc::kInvalidArgument, "PacketCoalescer: max_packets must be >= 1");
  if (max_bytes_ < kCommonHeader)
    throw rnic::Error(Errc::kInvalidArgument, "PacketCoalescer: max_bytes must be >= 12 (the common header)");
  if (!out_) throw rnic::Error(Errc::kInvalidArgument, "PacketCoalescer: out is empty");
}

// A common header and whole chunks, every one DATA or PAD, each of length >= 4 and within the packet
// (its padding may be cut at the end).
bool PacketCoalescer::mergeable(wire::ConstBytes p) {
  if (p.size < kCommonHeader + 4) return false;
  std::size_t at = kCommonHeader;
  while (at < p.size) {
    if (p.size - at < 4) return false;
    const std::uint8_t type = p.data[at];
    const std::size_t len = wire::load_be16(p.data + at + 2);
    if ((type != kChunkData && type != kChunkPad) || len < 4 || len > p.size - at) return false;
    at += pad4(len);
  }
  return true;
}

void PacketCoalescer::add(std::optional<std::uint32_t> key, wire::ConstBytes p) {
  ++counters_.packets_in;
  if (!key || max_packets_ == 1 || !mergeable(p)) {
    flush();
    ++counters_.packets_out;
    out_(p);
    return;
  }
  const bool joins = pending_count_ != 0 && pending_key_ == key &&
                     std::memcmp(pending_.data(), p.data, kPortsAndTag) == 0 &&
                     pad4(pending_.size()) + (p.size - kCommonHeader) <= max_bytes_;
  if (!joins) {
    flush();
    if (p.size > max_bytes_) {  // too long to be merged with anything: alone
      ++counters_.packets_out;
      out_(p);
      return;
    }
    pending_.assign(p.data, p.data + p.size);
    pending_key_ = key;
    pending_count_ = 1;
  } else {
    pending_.resize(pad4(pending_.size()), 0);  // the previous packet's last chunk, padded
    pending_.insert(pending_.end(), p.data + kCommonHeader, p.data + p.size);
    ++pending_count_;
    ++counters_.merged;
  }
  if (pending_count_ >= max_packets_) flush();
}

void PacketCoalescer::flush() {
  if (pending_count_ == 0) return;
  ++counters_.packets_out;
  pending_count_ = 0;
  out_(wire::ConstBytes(pending_));
  pending_.clear();
}

}  // namespace rnic::sctp
