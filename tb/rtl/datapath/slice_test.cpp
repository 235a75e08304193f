// SPDX-License-Identifier: Apache-2.0
// rnic_slice (the register slice between the data FIFO and place, issue 12) against a model: a
// two-entry queue whose head is the output register. A well-behaved upstream (an item stays offered,
// unchanged, until taken) and a downstream with random ready. Checks every cycle: out_valid_o and
// out_data_o are the queue's head (an item taken in cycle t is offered from t + 1: both from
// registers); in_ready_o is 1 exactly while the queue has room (a register: it never follows
// out_ready_i in the same cycle); items leave in order, none lost or repeated; the output holds while
// valid and not ready (AXI-Stream 2.2.1); one item per cycle at full rate, also right after a stall;
// reset empties it. Parameters from the Verilated library (SLICE_WIDTH).
#include <deque>
#include <optional>

#include "Vrnic_slice.h"
#include "dp_harness.hpp"

namespace {

constexpr unsigned kWidth = SLICE_WIDTH;
constexpr std::size_t kBytes = (kWidth + 7) / 8;
using Item = std::vector<std::uint8_t>;

class SliceBench {
 public:
  explicit SliceBench(std::uint64_t seed) : rng_(seed) {
    sim_->in_valid_i = 0;
    sim_->out_ready_i = 0;
    sim_.reset();
  }

  // One cycle. offer: the upstream offers an item (a new one when it has none pending; a pending one
  // stays offered regardless). Returns whether an item left.
  bool cycle(bool offer, bool ready) {
    if (offer && !pending_) pending_ = dp::random_bytes(rng_, kWidth);
    const bool valid = pending_.has_value();
    dp::set_bytes(sim_->in_data_i, valid ? pending_->data() : dp::random_bytes(rng_, kWidth).data(), kBytes);
    sim_->in_valid_i = valid;
    sim_->out_ready_i = ready;
    sim_.eval();

    const unsigned long long c = sim_.cycle();
    EXPECT_EQ(sim_->in_ready_o != 0, q_.size() < 2) << "cycle " << c;
    EXPECT_EQ(sim_->out_valid_o != 0, !q_.empty()) << "cycle " << c;
    if (!q_.empty()) {
      EXPECT_EQ(dp::get_bytes(sim_->out_data_o, kBytes), q_.front()) << "order, cycle " << c;
    }
    if (last_stalled_) {
      EXPECT_EQ(sim_->out_valid_o, 1) << "cycle " << c;
      EXPECT_EQ(dp::get_bytes(sim_->out_data_o, kBytes), last_out_) << "hold, cycle " << c;
    }
    const bool in_take = valid && sim_->in_ready_o != 0;
    const bool out_take = sim_->out_valid_o != 0 && ready;
    last_stalled_ = sim_->out_valid_o != 0 && !ready;
    if (sim_->out_valid_o != 0) last_out_ = dp::get_bytes(sim_->out_data_o, kBytes);
    if (out_take) {
      q_.pop_front();
      ++out_;
    }
    if (in_take) {
      q_.push_back(*pending_);
      pending_.reset();
    }
    if (q_.size() == 2) ++cov_full_;
    sim_.tick();
    return out_take;
  }

  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
  dp::Sim<Vrnic_slice>& sim() { return sim_; }
  std::uint64_t out() const { return out_; }
  std::size_t in_flight() const { return q_.size(); }
  void forget() {
    q_.clear();
    pending_.reset();
    last_stalled_ = false;
  }
  std::uint64_t cov_full() const { return cov_full_; }

 private:
  std::mt19937_64 rng_;
  dp::Sim<Vrnic_slice> sim_;
  std::optional<Item> pending_;  // offered by the upstream, not yet taken
  std::deque<Item> q_;           // in the slice (model): output register first
  Item last_out_;
  bool last_stalled_ = false;
  std::uint64_t out_ = 0, cov_full_ = 0;
};

TEST(Slice, RandomTrafficVsModel) {
  SliceBench tb(rnic::tb::random_test_seed());
  dp::run_rate_phases(tb);
  EXPECT_GT(tb.out(), 10000U);
  EXPECT_GT(tb.cov_full(), 100U);
}

TEST(Slice, FullRateAfterOneCycle) {
  SliceBench tb(rnic::tb::random_test_seed());
  EXPECT_FALSE(tb.cycle(true, true));  // registered: the first item leaves a cycle later
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(tb.cycle(true, true)) << "cycle " << i;
  EXPECT_EQ(tb.in_flight(), 1U);
}

TEST(Slice, StallFillsBothRegistersThenOnePerCycle) {
  SliceBench tb(rnic::tb::random_test_seed());
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(tb.cycle(true, false));
  EXPECT_EQ(tb.in_flight(), 2U);
  EXPECT_EQ(tb.sim()->in_ready_o, 0);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(tb.cycle(true, true)) << "after the stall, cycle " << i;
  // One stall in every four cycles costs one item per stall, not a rate.
  std::uint64_t out = 0;
  for (int i = 0; i < 400; ++i) out += tb.cycle(true, i % 4 != 3) ? 1U : 0U;
  EXPECT_EQ(out, 300U);
}

TEST(Slice, ResetEmpties) {
  SliceBench tb(rnic::tb::random_test_seed());
  tb.cycle(true, false);
  tb.cycle(true, false);  // both registers hold an item
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
