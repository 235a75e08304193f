// SPDX-License-Identifier: Apache-2.0
// rnic_fifo against a std::deque model: random push/pop with random stalls, full/empty, count,
// full throughput and reset. Parameters come from the Verilated library (FIFO_WIDTH, FIFO_DEPTH).
#include <deque>

#include "Vrnic_fifo.h"
#include "dp_harness.hpp"

namespace {

constexpr unsigned kWidth = FIFO_WIDTH;
constexpr std::size_t kDepth = FIFO_DEPTH;
constexpr std::size_t kBytes = (kWidth + 7) / 8;

using Entry = std::vector<std::uint8_t>;

struct Coverage {
  std::uint64_t full = 0;          // cycles with the FIFO full
  std::uint64_t empty = 0;         // cycles with the FIFO empty
  std::uint64_t both = 0;          // cycles with a push and a pop
  std::uint64_t push_empty = 0;    // push into an empty FIFO (bypass path)
  std::uint64_t push_pop_one = 0;  // push and pop with one entry held (bypass after pop)
  std::uint64_t push_full = 0;     // push attempted while full (refused)
};

class FifoBench {
 public:
  explicit FifoBench(std::uint64_t seed) : rng_(seed) {
    sim_->in_valid_i = 0;
    sim_->out_ready_i = 0;
    sim_.reset();
  }

  Entry random_entry() { return dp::random_bytes(rng_, kWidth); }

  // One clock cycle; checks every output against the model before the edge. Returns the handshakes.
  std::pair<bool, bool> cycle(bool in_valid, bool out_ready) {
    const Entry in = random_entry();  // fresh data every cycle, valid or not
    dp::set_bytes(sim_->in_data_i, in.data(), kBytes);
    sim_->in_valid_i = in_valid;
    sim_->out_ready_i = out_ready;
    sim_.eval();

    const std::size_t n = model_.size();
    EXPECT_EQ(sim_->count_o, n) << "cycle " << sim_.cycle();
    EXPECT_EQ(sim_->in_ready_o != 0, n < kDepth) << "cycle " << sim_.cycle();
    EXPECT_EQ(sim_->out_valid_o != 0, n > 0) << "cycle " << sim_.cycle();
    if (n > 0) {
      EXPECT_EQ(dp::get_bytes(sim_->out_data_o, kBytes), model_.front()) << "cycle " << sim_.cycle();
    }

    const bool push = in_valid && sim_->in_ready_o != 0;
    const bool pop = out_ready && sim_->out_valid_o != 0;
    if (n == kDepth) ++cov_.full;
    if (n == 0) ++cov_.empty;
    if (push && pop) ++cov_.both;
    if (push && n == 0) ++cov_.push_empty;
    if (push && pop && n == 1) ++cov_.push_pop_one;
    if (in_valid && n == kDepth) ++cov_.push_full;

    if (pop && !model_.empty()) model_.pop_front();
    if (push) model_.push_back(in);
    sim_.tick();
    return {push, pop};
  }

  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }

  dp::Sim<Vrnic_fifo>& sim() { return sim_; }
  std::deque<Entry>& model() { return model_; }
  const Coverage& cov() const { return cov_; }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  dp::Sim<Vrnic_fifo> sim_;
  std::deque<Entry> model_;
  Coverage cov_;
};

TEST(Fifo, RandomPushPopVsModel) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  FifoBench tb(seed);
  // Phases with different push/pop rates: filling, draining, balanced, bursty.
  const double rates[][2] = {{0.9, 0.2}, {0.2, 0.9}, {0.5, 0.5},  {1.0, 1.0}, {1.0, 0.0},
                             {0.0, 1.0}, {0.7, 0.7}, {0.95, 0.6}, {0.6, 0.95}};
  const int phase_len = static_cast<int>(std::max<std::size_t>(200, 4 * kDepth));
  for (int round = 0; round < 12 && !::testing::Test::HasFailure(); ++round) {
    for (const auto& r : rates) {
      for (int i = 0; i < phase_len && !::testing::Test::HasFailure(); ++i) {
        tb.cycle(tb.chance(r[0]), tb.chance(r[1]));
      }
    }
    // One phase with freshly drawn rates.
    const double pi = std::uniform_real_distribution<double>(0.0, 1.0)(tb.rng());
    const double po = std::uniform_real_distribution<double>(0.0, 1.0)(tb.rng());
    for (int i = 0; i < phase_len && !::testing::Test::HasFailure(); ++i) {
      tb.cycle(tb.chance(pi), tb.chance(po));
    }
  }
  const Coverage& c = tb.cov();
  EXPECT_GT(c.full, 0U);
  EXPECT_GT(c.empty, 0U);
  EXPECT_GT(c.both, 0U);
  EXPECT_GT(c.push_empty, 0U);
  EXPECT_GT(c.push_pop_one, 0U);
  EXPECT_GT(c.push_full, 0U);
}

TEST(Fifo, FillToFullThenDrainInOrder) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  FifoBench tb(seed);
  for (std::size_t i = 0; i < kDepth; ++i) {
    EXPECT_TRUE(tb.cycle(true, false).first) << "entry " << i << " refused before full";
  }
  EXPECT_EQ(tb.sim()->in_ready_o, 0);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(tb.cycle(true, false).first) << "push accepted while full";
  // Full and pushing while popping: the push is refused (in_ready = not full), the pop happens.
  const auto hs = tb.cycle(true, true);
  EXPECT_FALSE(hs.first);
  EXPECT_TRUE(hs.second);
  while (!tb.model().empty() && !::testing::Test::HasFailure()) tb.cycle(false, true);
  EXPECT_EQ(tb.sim()->count_o, 0U);
  tb.cycle(false, true);
  EXPECT_EQ(tb.sim()->out_valid_o, 0);
}

TEST(Fifo, FullThroughput) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  FifoBench tb(seed);
  // Entry fall-through: a push into an empty FIFO is visible (and poppable) the next cycle.
  EXPECT_TRUE(tb.cycle(true, true).first);
  EXPECT_EQ(tb.sim()->out_valid_o, 1);
  // Streaming at one entry per cycle from an almost empty FIFO, then from a half full one.
  for (int i = 0; i < 1000; ++i) {
    const auto hs = tb.cycle(true, true);
    ASSERT_TRUE(hs.first && hs.second) << "stall at streaming cycle " << i;
  }
  while (tb.model().size() < kDepth / 2) tb.cycle(true, false);
  for (int i = 0; i < 1000; ++i) {
    const auto hs = tb.cycle(true, true);
    ASSERT_TRUE(hs.first && hs.second) << "stall at half-full streaming cycle " << i;
  }
  // Drain at one entry per cycle.
  const std::size_t held = tb.model().size();
  for (std::size_t i = 0; i < held; ++i) ASSERT_TRUE(tb.cycle(false, true).second) << "drain " << i;
  EXPECT_TRUE(tb.model().empty());
}

TEST(Fifo, ResetEmpties) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  FifoBench tb(seed);
  for (std::size_t i = 0; i < kDepth / 2 + 1; ++i) tb.cycle(true, false);
  tb.sim()->in_valid_i = 0;
  tb.sim()->out_ready_i = 0;
  tb.sim().reset(1);
  tb.model().clear();
  EXPECT_EQ(tb.sim()->count_o, 0U);
  EXPECT_EQ(tb.sim()->out_valid_o, 0);
  EXPECT_EQ(tb.sim()->in_ready_o, 1);
  // Works normally afterwards; no stale entry comes out.
  for (int i = 0; i < 20 * static_cast<int>(kDepth) && !::testing::Test::HasFailure(); ++i) {
    tb.cycle(tb.chance(0.6), tb.chance(0.5));
  }
}

}  // namespace
