// SPDX-License-Identifier: Apache-2.0
// sim/simnet PathImpairment: the seeded lossy path of rnic-sim's network port (docs/network.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/simnet/path_impairment.hpp"
#include "rnic/tb/seed.hpp"

namespace rnic::simnet {
namespace {

using Datagram = std::vector<std::uint8_t>;

// Datagram n: its number (8 bytes, little-endian) then 1..64 bytes derived from it, so any change to a
// byte, a truncation or an extension is detected by check().
Datagram make(std::uint64_t n) {
  Datagram d(8 + 1 + n % 64);
  for (unsigned i = 0; i < 8; ++i) d[i] = static_cast<std::uint8_t>(n >> (8 * i));
  for (std::size_t i = 8; i < d.size(); ++i) d[i] = static_cast<std::uint8_t>(n * 31 + i * 7);
  return d;
}
std::uint64_t number(const Datagram& d) {
  std::uint64_t n = 0;
  for (unsigned i = 0; i < 8 && i < d.size(); ++i) n |= std::uint64_t{d[i]} << (8 * i);
  return n;
}

// For each datagram that left, how many copies of datagrams offered after it left before it
// (Fenwick tree over the datagram numbers).
std::vector<std::uint64_t> overtaken_by_later(const std::vector<std::uint64_t>& order, std::uint64_t count) {
  std::vector<std::uint64_t> tree(count + 1, 0), result;
  std::uint64_t seen = 0;
  for (const std::uint64_t n : order) {
    std::uint64_t not_later = 0;  // copies seen with number <= n
    for (std::uint64_t i = n + 1; i > 0; i -= i & (~i + 1)) not_later += tree[i];
    result.push_back(seen - not_later);
    for (std::uint64_t i = n + 1; i <= count; i += i & (~i + 1)) ++tree[i];
    ++seen;
  }
  return result;
}

// What left the path: each datagram and how many had been offered when it left.
struct Left {
  Datagram datagram;
  std::uint64_t offered_before;
  bool operator==(const Left& o) const { return datagram == o.datagram && offered_before == o.offered_before; }
};

std::vector<Left> run(const ImpairmentConfig& c, std::uint64_t count, ImpairmentStats* stats = nullptr) {
  PathImpairment path(c);
  std::vector<Left> out;
  std::uint64_t offered = 0;
  const PathImpairment::Out sink = [&](Datagram d) { out.push_back({std::move(d), offered}); };
  for (std::uint64_t n = 0; n < count; ++n) {
    ++offered;
    path.offer(make(n), sink);
  }
  path.flush(sink);
  EXPECT_EQ(path.held(), 0u);
  if (stats != nullptr) *stats = path.stats();
  return out;
}

void expect_refused(const ImpairmentConfig& c, const std::string& field) {
  try {
    PathImpairment p(c);
    ADD_FAILURE() << "accepted a config with a bad " << field;
  } catch (const rnic::Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("ImpairmentConfig." + field), std::string::npos) << e.what();
  }
}

TEST(PathImpairment, RefusesProbabilitiesOutsideZeroToOneNamingTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const double bad : {-0.1, 1.0, 1.5, nan}) {
    ImpairmentConfig c;
    c.loss = bad;
    expect_refused(c, "loss");
    c = {};
    c.duplicate = bad;
    expect_refused(c, "duplicate");
    c = {};
    c.reorder = bad;
    expect_refused(c, "reorder");
  }
}

TEST(PathImpairment, RefusesReorderDepthZeroOrOver64WhenReordering) {
  ImpairmentConfig c;
  c.reorder = 0.5;
  c.reorder_depth = 0;
  expect_refused(c, "reorder_depth");
  c.reorder_depth = 65;
  expect_refused(c, "reorder_depth");
  c.reorder_depth = 64;
  EXPECT_NO_THROW(PathImpairment{c});
  c.reorder = 0;  // the depth is not used
  c.reorder_depth = 0;
  EXPECT_NO_THROW(PathImpairment{c});
}

TEST(PathImpairment, NoImpairmentPassesEveryDatagramAtOnceInOrder) {
  ImpairmentStats st;
  const auto out = run(ImpairmentConfig{}, 1000, &st);
  ASSERT_EQ(out.size(), 1000u);
  for (std::uint64_t n = 0; n < out.size(); ++n) {
    EXPECT_EQ(out[n].datagram, make(n));
    EXPECT_EQ(out[n].offered_before, n + 1) << "datagram " << n << " did not leave during its own offer()";
  }
  EXPECT_EQ(st.offered, 1000u);
  EXPECT_EQ(st.delivered, 1000u);
  EXPECT_EQ(st.dropped + st.duplicated + st.reordered, 0u);
}

TEST(PathImpairment, SameSeedSameInputsSameOutputs) {
  ImpairmentConfig c{0.1, 0.1, 0.2, 5, 42};
  const auto a = run(c, 5000);
  const auto b = run(c, 5000);
  EXPECT_TRUE(a == b);
  c.seed = 43;
  const auto other = run(c, 5000);
  EXPECT_FALSE(a == other) << "the seed changes nothing";
}

// Fixed seeds: the rates are deterministic; the bounds are 5 standard deviations of a binomial draw.
void expect_rate(std::uint64_t events, std::uint64_t trials, double p, const char* what) {
  const double sd = std::sqrt(p * (1 - p) / static_cast<double>(trials));
  const double rate = static_cast<double>(events) / static_cast<double>(trials);
  EXPECT_NEAR(rate, p, 5 * sd) << what << ": " << events << " of " << trials;
}

TEST(PathImpairment, RatesFollowTheConfigWithFixedSeeds) {
  constexpr std::uint64_t kCount = 100000;
  for (const std::uint64_t seed : {1u, 7u, 12345u}) {
    ImpairmentStats st;
    run(ImpairmentConfig{0.05, 0.02, 0.1, 3, seed}, kCount, &st);
    expect_rate(st.dropped, st.offered, 0.05, "loss");
    expect_rate(st.duplicated, st.offered - st.dropped, 0.02, "duplicate");
    expect_rate(st.reordered, st.offered - st.dropped + st.duplicated, 0.1, "reorder");
    run(ImpairmentConfig{0.5, 0.3, 0.6, 64, seed}, kCount, &st);
    expect_rate(st.dropped, st.offered, 0.5, "loss");
    expect_rate(st.duplicated, st.offered - st.dropped, 0.3, "duplicate");
    expect_rate(st.reordered, st.offered - st.dropped + st.duplicated, 0.6, "reorder");
  }
}

// Every datagram that leaves is one offered, byte for byte; each leaves 0, 1 or 2 times, the counts
// matching dropped and duplicated; delivered = offered - dropped + duplicated once flushed; no datagram is
// overtaken by more than reorder_depth datagrams offered after it. Random configs, seeded.
TEST(PathImpairment, ConservationBytesAndReorderDepthUnderRandomConfigs) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> prob(0.0, 0.6);
  for (int round = 0; round < 40; ++round) {
    ImpairmentConfig c{prob(rng), prob(rng), prob(rng), static_cast<std::uint32_t>(1 + rng() % 64), rng()};
    SCOPED_TRACE(::testing::Message() << "round " << round << " loss " << c.loss << " duplicate " << c.duplicate
                                      << " reorder " << c.reorder << " depth " << c.reorder_depth);
    constexpr std::uint64_t kCount = 3000;
    PathImpairment path(c);
    std::vector<Datagram> out;
    const PathImpairment::Out sink = [&](Datagram d) { out.push_back(std::move(d)); };
    for (std::uint64_t n = 0; n < kCount; ++n) path.offer(make(n), sink);
    path.flush(sink);
    const ImpairmentStats& st = path.stats();
    EXPECT_EQ(st.offered, kCount);
    EXPECT_EQ(st.delivered, st.offered - st.dropped + st.duplicated);
    EXPECT_EQ(st.delivered, out.size());
    std::map<std::uint64_t, int> times;
    std::vector<std::uint64_t> order;
    for (const Datagram& d : out) {
      const std::uint64_t n = number(d);
      ASSERT_LT(n, kCount) << "a datagram nobody offered";
      ASSERT_EQ(d, make(n)) << "datagram " << n << " altered";
      ++times[n];
      order.push_back(n);
    }
    const auto overtaken = overtaken_by_later(order, kCount);
    for (std::size_t i = 0; i < order.size(); ++i)
      ASSERT_LE(overtaken[i], c.reorder_depth) << "datagram " << order[i] << " overtaken too often";
    std::uint64_t lost = kCount - times.size(), twice = 0;
    for (const auto& [n, t] : times) {
      ASSERT_LE(t, 2) << "datagram " << n;
      if (t == 2) ++twice;
    }
    EXPECT_EQ(lost, st.dropped);
    EXPECT_EQ(twice, st.duplicated);
  }
}

TEST(PathImpairment, HeldDatagramLeavesAfterOneToDepthLaterOnes) {
  // reorder only, depth 4: a held datagram is overtaken by 1..4 later ones (fewer only when those it
  // waited for were themselves released ones offered earlier); the whole range 1..4 is seen.
  constexpr std::uint64_t kCount = 20000;
  ImpairmentConfig c{0, 0, 0.3, 4, 99};
  PathImpairment path(c);
  std::vector<std::uint64_t> order;
  const PathImpairment::Out sink = [&](Datagram d) { order.push_back(number(d)); };
  for (std::uint64_t n = 0; n < kCount; ++n) path.offer(make(n), sink);
  path.flush(sink);
  ASSERT_EQ(order.size(), kCount);
  std::map<std::uint64_t, std::uint64_t> histogram;  // overtaken -> datagrams
  for (const std::uint64_t o : overtaken_by_later(order, kCount)) ++histogram[o];
  EXPECT_EQ(histogram.rbegin()->first, 4u) << "the depth is never reached, or is passed";
  for (std::uint64_t k = 1; k <= 4; ++k) EXPECT_GT(histogram[k], 0u) << k;
  EXPECT_LE(kCount - histogram[0], path.stats().reordered);
}

TEST(PathImpairment, FlushReleasesEverythingHeldInTheOrderHeld) {
  ImpairmentConfig c{0, 0, 0.9, 64, 5};
  PathImpairment path(c);
  std::vector<std::uint64_t> now, flushed;
  for (std::uint64_t n = 0; n < 20; ++n) path.offer(make(n), [&](Datagram d) { now.push_back(number(d)); });
  const std::size_t held = path.held();
  ASSERT_GT(held, 0u);
  path.flush([&](Datagram d) { flushed.push_back(number(d)); });
  EXPECT_EQ(flushed.size(), held);
  EXPECT_TRUE(std::is_sorted(flushed.begin(), flushed.end())) << "flush changed the order held";
  EXPECT_EQ(path.held(), 0u);
  EXPECT_EQ(now.size() + flushed.size(), 20u);
  path.flush([&](Datagram) { ADD_FAILURE() << "a second flush released something"; });
}

}  // namespace
}  // namespace rnic::simnet
