// SPDX-License-Identifier: Apache-2.0
// A seeded lossy path for the datagrams of rnic-sim's UDP network port (docs/network.md): each datagram
// offered is dropped, duplicated, or held back and released later, by draws from one seeded generator.
// Same seed and same datagrams offered in the same order: the same datagrams leave in the same order.
//
// For each datagram offered, in this order:
//   1. lost with probability `loss`: nothing leaves;
//   2. else duplicated with probability `duplicate`: two copies go on, the first then the second;
//   3. each copy is held back with probability `reorder`, and is due once 1..reorder_depth (uniform)
//      later datagrams have left (every datagram that leaves counts, held ones released included), or
//      at flush(); a copy not held leaves now.
// A due copy leaves at once, after only the due copies held before it: so no datagram offered after a
// copy passes it more than reorder_depth times. Datagrams leave through the `out` callback of the
// offer() or flush() call that lets them go; their bytes are never altered.
//
// Not thread-safe: one thread drives a path, and `out` must not call back into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace rnic::simnet {

struct ImpairmentConfig {
  double loss = 0;                  // probability a datagram is lost, [0, 1)
  double duplicate = 0;             // probability a datagram that is not lost leaves twice, [0, 1)
  double reorder = 0;               // probability a copy is held back, [0, 1)
  std::uint32_t reorder_depth = 3;  // a held copy leaves after 1..reorder_depth later datagrams; 1..64 if reorder > 0
  std::uint64_t seed = 1;
};

struct ImpairmentStats {
  std::uint64_t offered = 0;     // datagrams given to offer()
  std::uint64_t delivered = 0;   // datagrams that left (copies counted)
  std::uint64_t dropped = 0;     // datagrams lost
  std::uint64_t duplicated = 0;  // extra copies made
  std::uint64_t reordered = 0;   // copies held back
};

class PathImpairment {
 public:
  using Out = std::function<void(std::vector<std::uint8_t>)>;
  static constexpr std::uint32_t kMaxReorderDepth = 64;

  // Throws rnic::Error kInvalidArgument naming the field for a probability outside [0, 1) (or NaN), or
  // reorder > 0 with reorder_depth 0 or > 64.
  explicit PathImpairment(ImpairmentConfig c);

  // One datagram onto the path: zero or more datagrams leave now, in order, through `out`.
  void offer(std::vector<std::uint8_t> datagram, const Out& out);
  // Everything held leaves, in the order it was held (call when the path goes idle).
  void flush(const Out& out);

  const ImpairmentStats& stats() const { return stats_; }
  const ImpairmentConfig& config() const { return config_; }
  std::size_t held() const { return held_.size(); }

 private:
  struct Held {
    std::vector<std::uint8_t> datagram;
    std::uint32_t countdown;  // datagrams still to leave before this one does
  };

  double draw();  // uniform in [0, 1), the same on every platform for a seed
  void leave(std::vector<std::uint8_t> datagram, const Out& out);

  ImpairmentConfig config_;
  std::mt19937_64 rng_;
  std::vector<Held> held_;  // in the order held
  ImpairmentStats stats_;
};

}  // namespace rnic::simnet
