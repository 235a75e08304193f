// SPDX-License-Identifier: Apache-2.0
// rnic_skid (the registered-ready boundary between two stages, issue 12) against a model: a
// well-behaved upstream (an item stays offered, unchanged, until taken) and a downstream with random
// ready. Checks every cycle: in_ready_o is 1 exactly when the buffer is empty (a register: it never
// follows out_ready_i in the same cycle); items leave in order, none lost or repeated; an item passes
// through in the cycle it arrives when the buffer is empty and the downstream is ready; the output
// holds while valid and not ready (AXI-Stream 2.2.1); one item per cycle at full rate, also right
// after a stall; reset empties it. Parameters from the Verilated library (SKID_WIDTH).
#include <optional>

#include "Vrnic_skid.h"
#include "dp_harness.hpp"

namespace {

constexpr unsigned kWidth = SKID_WIDTH;
constexpr std::size_t kBytes = (kWidth + 7) / 8;
using Item = std::vector<std::uint8_t>;

class SkidBench {
 public:
  explicit SkidBench(std::uint64_t seed) : rng_(seed) {
    sim_->in_valid_i = 0;
    sim_->out_ready_i = 0;
    sim_.reset();
  }

  Item random_item() { return dp::random_bytes(rng_, kWidth); }

  // One cycle. offer: the upstream wants to offer an item (a new one when it has none pending;
  // a pending one stays offered regardless: the upstream's own rule). Returns whether an item left.
  bool cycle(bool offer, bool ready) {
    if (offer && !pending_) pending_ = random_item();
    const bool valid = pending_.has_value();
    dp::set_bytes(sim_->in_data_i, valid ? pending_->data() : random_item().data(), kBytes);
    sim_->in_valid_i = valid;
    sim_->out_ready_i = ready;
    sim_.eval();

    const unsigned long long c = sim_.cycle();
    EXPECT_EQ(sim_->in_ready_o != 0, !held_.has_value()) << "cycle " << c;
    const bool expect_valid = held_.has_value() || valid;
    EXPECT_EQ(sim_->out_valid_o != 0, expect_valid) << "cycle " << c;
    if (expect_valid) {
      const Item& front = held_ ? *held_ : *pending_;
      EXPECT_EQ(dp::get_bytes(sim_->out_data_o, kBytes), front) << "order, cycle " << c;
    }
    if (last_stalled_) {  // valid and not ready last cycle: the same item again
      EXPECT_EQ(sim_->out_valid_o, 1) << "cycle " << c;
      EXPECT_EQ(dp::get_bytes(sim_->out_data_o, kBytes), last_out_) << "hold, cycle " << c;
    }

    const bool in_take = valid && sim_->in_ready_o != 0;
    const bool out_take = sim_->out_valid_o != 0 && ready;
    last_stalled_ = sim_->out_valid_o != 0 && !ready;
    if (sim_->out_valid_o != 0) last_out_ = dp::get_bytes(sim_->out_data_o, kBytes);
    if (out_take) {
      if (held_) {
        held_.reset();
      } else {
        EXPECT_TRUE(in_take) << "cycle " << c;  // passed through
      }
      ++out_;
    }
    if (in_take && !out_take) held_ = pending_;
    if (in_take) pending_.reset();
    if (held_) ++cov_held_;
    if (in_take && out_take && !held_) ++cov_through_;
    sim_.tick();
    return out_take;
  }

  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
  dp::Sim<Vrnic_skid>& sim() { return sim_; }
  std::uint64_t out() const { return out_; }
  std::size_t in_flight() const { return held_ ? 1U : 0U; }
  bool pending() const { return pending_.has_value(); }
  void forget() {
    held_.reset();
    pending_.reset();
    last_stalled_ = false;
  }
  std::uint64_t cov_held() const { return cov_held_; }
  std::uint64_t cov_through() const { return cov_through_; }

 private:
  std::mt19937_64 rng_;
  dp::Sim<Vrnic_skid> sim_;
  std::optional<Item> pending_;  // offered by the upstream, not yet taken
  std::optional<Item> held_;     // in the buffer (model)
  Item last_out_;
  bool last_stalled_ = false;
  std::uint64_t out_ = 0, cov_held_ = 0, cov_through_ = 0;
};

TEST(Skid, RandomTrafficVsModel) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  SkidBench tb(seed);
  dp::run_rate_phases(tb);
  EXPECT_GT(tb.out(), 10000U);
  EXPECT_GT(tb.cov_held(), 100U);
  EXPECT_GT(tb.cov_through(), 100U);
}

TEST(Skid, PassesThroughInTheSameCycleAtFullRate) {
  SkidBench tb(rnic::tb::random_test_seed());
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(tb.cycle(true, true)) << "cycle " << i;
  EXPECT_EQ(tb.in_flight(), 0U);
}

TEST(Skid, OneStallCostsOneCycleNotARate) {
  SkidBench tb(rnic::tb::random_test_seed());
  // Upstream always offering; the downstream stalls one cycle in every four: three items leave in
  // every four cycles, and the buffer takes the stalled item (in_ready_o low in the cycle after).
  std::uint64_t out = 0;
  for (int i = 0; i < 400; ++i) out += tb.cycle(true, i % 4 != 3) ? 1U : 0U;
  EXPECT_EQ(out, 300U);
  // Long stall: one item held, the upstream waits with its next; release: one per cycle at once.
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(tb.cycle(true, false));
  EXPECT_EQ(tb.sim()->in_ready_o, 0);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(tb.cycle(true, true)) << "after the stall, cycle " << i;
}

TEST(Skid, ResetEmpties) {
  SkidBench tb(rnic::tb::random_test_seed());
  tb.cycle(true, false);  // one item into the buffer
  EXPECT_EQ(tb.sim()->in_ready_o, 0);
  tb.sim()->in_valid_i = 0;
  tb.sim()->out_ready_i = 0;
  tb.sim().reset(1);
  tb.forget();
  tb.sim()->eval();
  EXPECT_EQ(tb.sim()->in_ready_o, 1);
  EXPECT_EQ(tb.sim()->out_valid_o, 0);
  for (int i = 0; i < 2000 && !::testing::Test::HasFailure(); ++i) tb.cycle(tb.chance(0.7), tb.chance(0.6));
}

}  // namespace
