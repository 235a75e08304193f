// SPDX-License-Identifier: Apache-2.0
#include "rnic/simnet/path_impairment.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "rnic/driver/rnic.hpp"

namespace rnic::simnet {
namespace {

void check_probability(double p, const char* field) {
  if (!(p >= 0.0 && p < 1.0))  // also refuses NaN
    throw rnic::Error(Errc::kInvalidArgument,
                      fmt::format("ImpairmentConfig.{} is {}: a probability must be in [0, 1)", field, p));
}

}  // namespace

PathImpairment::PathImpairment(ImpairmentConfig c) : config_(c), rng_(c.seed) {
  check_probability(c.loss, "loss");
  check_probability(c.duplicate, "duplicate");
  check_probability(c.reorder, "reorder");
  if (c.reorder > 0 && (c.reorder_depth == 0 || c.reorder_depth > kMaxReorderDepth))
    throw rnic::Error(Errc::kInvalidArgument,
                      fmt::format("ImpairmentConfig.reorder_depth is {}: must be 1..{} when reorder > 0",
                                  c.reorder_depth, kMaxReorderDepth));
}

// The top 53 bits of one 64-bit draw: std::uniform_real_distribution may differ between libraries.
double PathImpairment::draw() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

void PathImpairment::offer(std::vector<std::uint8_t> datagram, const Out& out) {
  ++stats_.offered;
  if (draw() < config_.loss) {
    ++stats_.dropped;
    return;
  }
  std::vector<std::vector<std::uint8_t>> copies;
  const bool twice = draw() < config_.duplicate;
  if (twice) {
    ++stats_.duplicated;
    copies.push_back(datagram);
  }
  copies.push_back(std::move(datagram));
  for (auto& copy : copies) {
    if (draw() < config_.reorder) {
      ++stats_.reordered;
      const auto countdown = static_cast<std::uint32_t>(1 + rng_() % config_.reorder_depth);
      held_.push_back(Held{std::move(copy), countdown});
    } else {
      leave(std::move(copy), out);
    }
  }
}

// `datagram` leaves, and every held copy counts it. Then, while any held copy is due, the first one
// held of those due leaves, counted in turn by the others. A due copy thus waits only for due copies held
// before it: no datagram offered after it passes it once it is due.
void PathImpairment::leave(std::vector<std::uint8_t> datagram, const Out& out) {
  for (;;) {
    ++stats_.delivered;
    out(std::move(datagram));
    for (auto& h : held_)
      if (h.countdown > 0) --h.countdown;
    auto due = std::find_if(held_.begin(), held_.end(), [](const Held& h) { return h.countdown == 0; });
    if (due == held_.end()) return;
    datagram = std::move(due->datagram);
    held_.erase(due);
  }
}

void PathImpairment::flush(const Out& out) {
  std::vector<Held> all;
  all.swap(held_);
  for (auto& h : all) {
    ++stats_.delivered;
    out(std::move(h.datagram));
  }
}

}  // namespace rnic::simnet
