// SPDX-License-Identifier: Apache-2.0
#include "rnic/sctp/card_server.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "rnic/wire/bytes.hpp"

namespace rnic::sctp {
namespace {

constexpr std::size_t kCommonHeader = 12;   // RFC 9260 3.1
constexpr std::uint8_t kChunkInit = 1;      // RFC 9260 3.3.2
constexpr std::size_t kInitMinLength = 20;  // chunk header and the INIT's fixed fields

[[noreturn]] void fail(const std::string& what) { throw rnic::Error(Errc::kInvalidArgument, "CardServer: " + what); }

}  // namespace

bool CardServer::is_init(const std::vector<std::uint8_t>& p) {
  if (p.size() < kCommonHeader + kInitMinLength) return false;
  if (wire::load_be32(p.data() + 4) != 0) return false;  // an INIT's packet carries tag 0
  if (p[kCommonHeader] != kChunkInit) return false;
  const std::size_t len = wire::load_be16(p.data() + kCommonHeader + 2);
  // Alone in its packet: its padded length reaches the end.
  return len >= kInitMinLength && kCommonHeader + (len + 3) / 4 * 4 >= p.size() && kCommonHeader + len <= p.size();
}

CardServer::CardServer(NetPort& net, CardServerConfig config, Factory factory, Retire retire)
    : net_(net),
      config_(config),
      factory_(std::move(factory)),
      retire_(std::move(retire)),
      new_peers_(config.new_peer_rate, config.new_peer_burst) {
  if (config_.slots == 0 || config_.first_slot >= kNetEntries || config_.slots > kNetEntries - config_.first_slot)
    fail(fmt::format("slots {}..{} beyond the card's {} association entries", config_.first_slot,
                     config_.first_slot + config_.slots - 1, kNetEntries));
  if (!(config_.handshake_rate > 0) || config_.handshake_burst == 0 || !(config_.new_peer_rate > 0) ||
      config_.new_peer_burst == 0)
    fail("the new-peer and handshake rates and bursts must be positive");
  if (config_.rx_batch == 0) fail("rx_batch must be >= 1");
  if (!factory_ || !retire_) fail("the factory and retire callbacks are required");
  slots_.resize(config_.slots);
}

bool CardServer::TokenBucket::take() {
  const auto now = std::chrono::steady_clock::now();
  tokens = std::min(burst, tokens + std::chrono::duration<double>(now - at).count() * rate);
  at = now;
  if (tokens < 1) return false;
  tokens -= 1;
  return true;
}

// A used slot whose association has not left its handshake (what its endpoint's last step left).
bool CardServer::handshaking(Slot& s) {
  if (s.ep != nullptr && !s.up) s.up = s.ep->endpoint().state() != AssociationState::kListening;
  return s.ep != nullptr && !s.up;
}

CardServer::Slot* CardServer::find(const Ipv4Endpoint& sender) {
  for (auto& s : slots_)
    if (s.ep != nullptr && s.peer == sender) return &s;
  return nullptr;
}

// A free slot for `sender`: the one it had, if free; else the least recently freed one whose old
// endpoint's packets have all left the transmit ring (a slot never used first).
CardServer::Slot* CardServer::free_slot(const Ipv4Endpoint& sender) {
  Slot* best = nullptr;
  for (auto& s : slots_) {
    if (s.ep != nullptr) continue;
    if (s.peer == sender && s.freed.time_since_epoch().count() != 0) return &s;
    if (best == nullptr || s.freed < best->freed) best = &s;
  }
  if (best == nullptr || best->freed.time_since_epoch().count() == 0) return best;
  if (std::chrono::steady_clock::now() - best->freed < config_.reuse_delay || net_.tx_pending() != 0) return nullptr;
  return best;
}

void CardServer::free(Slot& s) {
  s.ep = nullptr;
  s.up = false;
  s.freed = std::chrono::steady_clock::now();  // s.peer stays: that sender may have the slot back at once
}

void CardServer::admit(const NetRxPacket& p, const Ipv4Endpoint& sender) {
  if (!is_init(p.bytes)) {
    ++counters_.unknown_not_init;
    return;
  }
  if (config_.only && sender != *config_.only) {
    ++counters_.refused;
    return;
  }
  Slot* const slot = free_slot(sender);
  if (slot == nullptr) {
    ++counters_.table_full;
    evict_oldest_handshake();
    return;
  }
  if (!new_peers_.take()) {
    ++counters_.rate_limited;
    return;
  }
  CardEndpoint* ep = factory_(sender, config_.first_slot + static_cast<std::uint32_t>(slot - slots_.data()));
  if (ep == nullptr) {
    ++counters_.refused;
    return;
  }
  slot->ep = ep;
  slot->peer = sender;
  slot->made = std::chrono::steady_clock::now();
  slot->handshake = TokenBucket(config_.handshake_rate, config_.handshake_burst);
  slot->handshake.tokens -= 1;  // the INIT's
  slot->up = false;
  ++counters_.new_peers;
  counters_.most_active = std::max<std::uint64_t>(counters_.most_active, active());
  ep->deliver(p);
  ++counters_.delivered;
}

// Every slot taken: the oldest endpoint still in its handshake after evict_after gives its slot up.
void CardServer::evict_oldest_handshake() {
  const auto now = std::chrono::steady_clock::now();
  Slot* oldest = nullptr;
  for (auto& s : slots_) {
    if (handshaking(s) && now - s.made >= config_.evict_after && (oldest == nullptr || s.made < oldest->made))
      oldest = &s;
  }
  if (oldest == nullptr) return;
  free(*oldest);
  ++counters_.handshakes_evicted;
  retire_(config_.first_slot + static_cast<std::uint32_t>(oldest - slots_.data()));
}

std::size_t CardServer::poll() {
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (!handshaking(s) || now - s.made < config_.handshake_timeout) continue;
    free(s);
    ++counters_.handshakes_timed_out;
    retire_(config_.first_slot + static_cast<std::uint32_t>(i));
  }
  const std::size_t n = net_.receive(rx_, config_.rx_batch);
  for (const auto& p : rx_) {
    ++counters_.packets_in;
    const Ipv4Endpoint sender{p.source_ip, p.source_port};
    Slot* s = find(sender);
    if (s == nullptr) {
      admit(p, sender);
      continue;
    }
    if (handshaking(*s) && !s->handshake.take()) {  // replies to a sender in its handshake are bounded
      ++counters_.rate_limited;
      continue;
    }
    s->ep->deliver(p);
    ++counters_.delivered;
  }
  return n;
}

void CardServer::release(std::uint32_t slot) {
  if (slot < config_.first_slot || slot - config_.first_slot >= slots_.size())
    fail(fmt::format("release: slot {} is not one of the server's", slot));
  free(slots_[slot - config_.first_slot]);
}

std::size_t CardServer::active() const {
  return static_cast<std::size_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.ep; }));
}

std::optional<Ipv4Endpoint> CardServer::peer(std::uint32_t slot) const {
  if (slot < config_.first_slot || slot - config_.first_slot >= slots_.size()) return std::nullopt;
  const Slot& s = slots_[slot - config_.first_slot];
  if (s.ep == nullptr) return std::nullopt;
  return s.peer;
}

}  // namespace rnic::sctp
