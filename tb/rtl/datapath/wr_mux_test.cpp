// rnic_axi_wr_mux: two random burst generators (place = s0, deliver = s1) with random valid/ready
// on every channel. Checks that every burst arrives intact and contiguous, in each master's order,
// AW before or with its first W beat, one burst at a time, no starvation, no bubble at full rate,
// the AW and B counters and the bresp error pulse. DataWidth comes from the Verilated library
// (MUX_DW).
#include <array>
#include <deque>

#include "Vrnic_axi_wr_mux.h"
#include "dp_harness.hpp"

namespace {

constexpr std::size_t kBytes = MUX_DW / 8;

struct Beat {
  std::vector<std::uint8_t> data;
  std::uint64_t strb = 0;
};

struct Burst {
  std::uint64_t addr = 0;  // master in bit 60, sequence number in bits 59:12
  unsigned len = 0;        // awlen: beats - 1
  std::vector<Beat> beats;
};

std::uint64_t make_addr(unsigned master, std::size_t seq, std::uint64_t low) {
  return (std::uint64_t{master} << 60) | (std::uint64_t{seq} << 12) | (low & 0xFFFU);
}

enum class WMode {
  kEarly,    // W of a burst may be presented before (or with) its AW
  kAfterAw,  // W of a burst only once its AW handshake happened
};

struct GenKnobs {
  double p_aw = 1.0;  // chance to raise awvalid for a pending AW
  double p_w = 1.0;   // chance to raise wvalid for a pending W beat
  WMode mode = WMode::kEarly;
};

// One AXI write master: AW and W issued independently, AW may run up to two bursts ahead of W.
class Gen {
 public:
  Gen(unsigned id, std::mt19937_64& rng) : id_(id), rng_(rng) {}

  void add_bursts(std::size_t n, unsigned max_len) {
    for (std::size_t i = 0; i < n; ++i) {
      Burst b;
      const auto r = rng_() % 100;
      b.len = r < 30   ? 0
              : r < 95 ? static_cast<unsigned>(rng_() % 16)
                       : static_cast<unsigned>(rng_() % (max_len + 1));
      b.addr = make_addr(id_, bursts_.size(), rng_());
      for (unsigned j = 0; j <= b.len; ++j) {
        Beat bt;
        bt.data.resize(kBytes);
        for (auto& x : bt.data) x = static_cast<std::uint8_t>(rng_());
        bt.strb = rng_();
        if constexpr (kBytes < 64) bt.strb &= (std::uint64_t{1} << kBytes) - 1;
        b.beats.push_back(std::move(bt));
      }
      bursts_.push_back(std::move(b));
    }
  }

  // Decide this cycle's valids (holding any valid not yet taken).
  void decide(const GenKnobs& k) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const bool aw_pending = aw_idx_ < bursts_.size() && aw_idx_ <= w_idx_ + 2;
    awvalid_ = aw_pending && (awvalid_ || u(rng_) < k.p_aw);
    const bool w_allowed = k.mode == WMode::kEarly ? w_idx_ <= aw_idx_ : w_idx_ < aw_idx_;
    const bool w_pending = w_idx_ < bursts_.size() && w_allowed;
    wvalid_ = w_pending && (wvalid_ || u(rng_) < k.p_w);
  }

  bool awvalid() const { return awvalid_; }
  bool wvalid() const { return wvalid_; }
  const Burst& aw_burst() const { return bursts_.at(aw_idx_); }
  const Beat& w_beat() const { return bursts_.at(w_idx_).beats.at(w_beat_); }
  bool w_last() const { return w_beat_ == bursts_.at(w_idx_).len; }
  std::size_t w_idx() const { return w_idx_; }

  void aw_taken() {
    ++aw_idx_;
    awvalid_ = false;
  }
  void w_taken() {
    if (w_last()) {
      ++w_idx_;
      w_beat_ = 0;
    } else {
      ++w_beat_;
    }
    wvalid_ = false;
  }

  bool done() const { return w_idx_ == bursts_.size() && aw_idx_ == bursts_.size(); }
  bool aw_left() const { return aw_idx_ < bursts_.size(); }
  const std::vector<Burst>& bursts() const { return bursts_; }
  std::size_t total_beats() const {
    std::size_t n = 0;
    for (const auto& b : bursts_) n += b.len + 1;
    return n;
  }

 private:
  unsigned id_;
  std::mt19937_64& rng_;
  std::vector<Burst> bursts_;
  std::size_t aw_idx_ = 0, w_idx_ = 0, w_beat_ = 0;
  bool awvalid_ = false, wvalid_ = false;
};

struct SlaveKnobs {
  double p_awready = 1.0;
  double p_wready = 1.0;
  double p_bvalid = 1.0;
  double p_err = 0.0;  // chance a B response is not OKAY (EXOKAY, SLVERR or DECERR)
};

struct Stats {
  std::uint64_t aw = 0, w = 0, b = 0, berr = 0;
  std::uint64_t aw_with_first_w = 0;  // AW and first W beat in the same cycle
  std::uint64_t first_w_cycle = 0, last_w_cycle = 0;
  bool any_w = false;
  std::array<std::uint64_t, 2> grants{};
  bool alternated = true;  // while both had bursts left, grants alternated
};

class MuxBench {
 public:
  explicit MuxBench(std::uint64_t seed) : rng_(seed), gen_{Gen(0, rng_), Gen(1, rng_)} {
    set_inputs();
    sim_.reset();
  }

  Gen& gen(unsigned i) { return gen_[i]; }
  const Stats& stats() const { return st_; }
  dp::Sim<Vrnic_axi_wr_mux>& sim() { return sim_; }

  void run(const GenKnobs& k0, const GenKnobs& k1, const SlaveKnobs& sk,
           bool check_alternate = false) {
    const std::uint64_t limit =
        sim_.cycle() + 40 * (gen_[0].total_beats() + gen_[1].total_beats()) + 2000;
    std::uniform_real_distribution<double> u(0.0, 1.0);
    while ((!gen_[0].done() || !gen_[1].done() || b_pending_ > 0 || !inflight_.empty()) &&
           sim_.cycle() < limit && !::testing::Test::HasFailure()) {
      gen_[0].decide(k0);
      gen_[1].decide(k1);
      const bool both_left = gen_[0].aw_left() && gen_[1].aw_left();
      const bool awready = u(rng_) < sk.p_awready;
      const bool wready = u(rng_) < sk.p_wready;
      const bool bvalid = b_pending_ > 0 && (b_hold_ || u(rng_) < sk.p_bvalid);
      if (bvalid && !b_hold_)
        bresp_ = u(rng_) < sk.p_err ? static_cast<std::uint8_t>(1 + rng_() % 3) : 0;
      set_inputs();
      sim_->m_awready_i = awready;
      sim_->m_wready_i = wready;
      sim_->m_bvalid_i = bvalid;
      sim_->m_bresp_i = bvalid ? bresp_ : static_cast<std::uint8_t>(rng_() & 3U);
      sim_.eval();
      step_checks(awready, wready, bvalid, both_left && check_alternate);
      sim_.tick();
    }
    EXPECT_TRUE(gen_[0].done() && gen_[1].done()) << "bursts left over (deadlock?)";
    EXPECT_TRUE(inflight_.empty());
    // The error pulse of the last response may come one cycle later.
    sim_->m_bvalid_i = 0;
    sim_->s0_awvalid_i = 0;
    sim_->s1_awvalid_i = 0;
    sim_->s0_wvalid_i = 0;
    sim_->s1_wvalid_i = 0;
    for (int i = 0; i < 2; ++i) {
      sim_.eval();
      check_err_pulse();
      prev_err_ = false;
      sim_.tick();
    }
    EXPECT_EQ(err_pulses_, st_.berr);
  }

 private:
  void set_inputs() {
    auto rnd_beat = [&]() {
      Beat b;
      b.data.resize(kBytes);
      for (auto& x : b.data) x = static_cast<std::uint8_t>(rng_());
      b.strb = rng_();
      return b;
    };
    // Source 0
    {
      Gen& g = gen_[0];
      sim_->s0_awvalid_i = g.awvalid();
      sim_->s0_awaddr_i = g.awvalid() ? g.aw_burst().addr : rng_();
      sim_->s0_awlen_i = static_cast<std::uint8_t>(g.awvalid() ? g.aw_burst().len : rng_());
      const Beat b = g.wvalid() ? g.w_beat() : rnd_beat();
      dp::set_bytes(sim_->s0_wdata_i, b.data.data(), kBytes);
      set_strb(sim_->s0_wstrb_i, b.strb);
      sim_->s0_wlast_i = g.wvalid() ? g.w_last() : (rng_() & 1U) != 0;
      sim_->s0_wvalid_i = g.wvalid();
    }
    // Source 1
    {
      Gen& g = gen_[1];
      sim_->s1_awvalid_i = g.awvalid();
      sim_->s1_awaddr_i = g.awvalid() ? g.aw_burst().addr : rng_();
      sim_->s1_awlen_i = static_cast<std::uint8_t>(g.awvalid() ? g.aw_burst().len : rng_());
      const Beat b = g.wvalid() ? g.w_beat() : rnd_beat();
      dp::set_bytes(sim_->s1_wdata_i, b.data.data(), kBytes);
      set_strb(sim_->s1_wstrb_i, b.strb);
      sim_->s1_wlast_i = g.wvalid() ? g.w_last() : (rng_() & 1U) != 0;
      sim_->s1_wvalid_i = g.wvalid();
    }
  }

  template <class T>
  static void set_strb(T& sig, std::uint64_t v) {
    std::array<std::uint8_t, 8> b{};
    for (std::size_t i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
    dp::set_bytes(sig, b.data(), 8);
  }

  void check_err_pulse() {
    EXPECT_EQ(sim_->bresp_err_o != 0, prev_err_)
        << "bresp_err_o must pulse one cycle after an error B, cycle " << sim_.cycle();
    if (sim_->bresp_err_o != 0) ++err_pulses_;
  }

  void step_checks(bool awready, bool wready, bool bvalid, bool check_alternate) {
    auto& m = *sim_.operator->();
    const std::uint64_t cyc = sim_.cycle();
    SCOPED_TRACE(::testing::Message() << "cycle " << cyc);

    // Counters reflect every handshake of earlier cycles.
    EXPECT_EQ(m.aw_count_o, static_cast<std::uint32_t>(st_.aw));
    EXPECT_EQ(m.b_count_o, static_cast<std::uint32_t>(st_.b));
    check_err_pulse();

    // Master side stability: a valid not taken holds its payload.
    const std::uint64_t awaddr = m.m_awaddr_o;
    const unsigned awlen = m.m_awlen_o;
    if (prev_awvalid_ && !prev_awready_) {
      EXPECT_TRUE(m.m_awvalid_o != 0) << "m_awvalid dropped";
      EXPECT_EQ(awaddr, prev_awaddr_);
      EXPECT_EQ(awlen, prev_awlen_);
    }
    if (prev_wvalid_ && !prev_wready_) {
      EXPECT_TRUE(m.m_wvalid_o != 0) << "m_wvalid dropped";
    }

    const bool aw_hs = m.m_awvalid_o != 0 && awready;
    const bool w_hs = m.m_wvalid_o != 0 && wready;
    const bool s0_aw = gen_[0].awvalid() && m.s0_awready_o != 0;
    const bool s1_aw = gen_[1].awvalid() && m.s1_awready_o != 0;
    const bool s0_w = gen_[0].wvalid() && m.s0_wready_o != 0;
    const bool s1_w = gen_[1].wvalid() && m.s1_wready_o != 0;
    // A source handshake exactly when a master handshake happens.
    EXPECT_EQ(int{s0_aw} + int{s1_aw}, int{aw_hs}) << "AW handshakes disagree";
    EXPECT_EQ(int{s0_w} + int{s1_w}, int{w_hs}) << "W handshakes disagree";

    if (aw_hs) {
      const unsigned master = static_cast<unsigned>(awaddr >> 60) & 1U;
      const std::size_t seq =
          static_cast<std::size_t>((awaddr >> 12) & ((std::uint64_t{1} << 48) - 1));
      EXPECT_EQ(seq, next_aw_seq_[master]) << "AW out of order for master " << master;
      ASSERT_LT(seq, gen_[master].bursts().size());
      const Burst& b = gen_[master].bursts()[seq];
      EXPECT_EQ(awaddr, b.addr);
      EXPECT_EQ(awlen, b.len);
      EXPECT_TRUE(master == 0 ? s0_aw : s1_aw) << "AW came from the other source";
      // One burst at a time: the previous burst's wlast is done (or goes in this cycle).
      const bool prev_finishing = inflight_.size() == 1 && w_hs && m.m_wlast_o != 0;
      EXPECT_TRUE(inflight_.empty() || prev_finishing) << "AW while an earlier burst is still open";
      if (check_alternate && st_.aw > 0 && master == last_master_) st_.alternated = false;
      last_master_ = master;
      ++st_.grants[master];
      ++next_aw_seq_[master];
      ++st_.aw;
      // Queue behind a finishing burst, whose W beat is checked first below.
      inflight_.push_back({master, seq, 0});
      aw_this_cycle_ = true;
    } else {
      aw_this_cycle_ = false;
    }

    if (w_hs) {
      ASSERT_FALSE(inflight_.empty()) << "W beat before its AW";
      Open& o = inflight_.front();
      const Burst& b = gen_[o.master].bursts()[o.seq];
      ASSERT_LE(o.beat, b.len);
      const Beat& e = b.beats[o.beat];
      EXPECT_EQ(dp::get_bytes(m.m_wdata_o, kBytes), e.data) << "burst " << o.master << ":" << o.seq;
      EXPECT_EQ(dp::bits(dp::get_bytes(m.m_wstrb_o, 8), 0, static_cast<unsigned>(kBytes)), e.strb);
      EXPECT_EQ(m.m_wlast_o != 0, o.beat == b.len);
      EXPECT_TRUE(o.master == 0 ? s0_w : s1_w) << "W came from the other source";
      if (o.beat == 0 && aw_this_cycle_ && inflight_.size() == 1) ++st_.aw_with_first_w;
      if (!st_.any_w) st_.first_w_cycle = cyc;
      st_.any_w = true;
      st_.last_w_cycle = cyc;
      ++st_.w;
      if (o.beat == b.len) {
        inflight_.pop_front();
        ++b_pending_;
      } else {
        ++o.beat;
      }
    }

    // B channel.
    const bool b_hs = bvalid && m.m_bready_o != 0;
    prev_err_ = b_hs && bresp_ != 0;
    if (b_hs) {
      ++st_.b;
      if (bresp_ != 0) ++st_.berr;
      --b_pending_;
    }
    b_hold_ = bvalid && !b_hs;

    if (s0_aw) gen_[0].aw_taken();
    if (s1_aw) gen_[1].aw_taken();
    if (s0_w) gen_[0].w_taken();
    if (s1_w) gen_[1].w_taken();

    prev_awvalid_ = m.m_awvalid_o != 0;
    prev_awready_ = awready;
    prev_awaddr_ = awaddr;
    prev_awlen_ = awlen;
    prev_wvalid_ = m.m_wvalid_o != 0;
    prev_wready_ = wready;
  }

  struct Open {
    unsigned master;
    std::size_t seq;
    unsigned beat;
  };

  std::mt19937_64 rng_;
  std::array<Gen, 2> gen_;
  dp::Sim<Vrnic_axi_wr_mux> sim_;
  Stats st_;
  std::deque<Open> inflight_;
  std::array<std::size_t, 2> next_aw_seq_{};
  std::size_t b_pending_ = 0;
  bool b_hold_ = false;
  std::uint8_t bresp_ = 0;
  bool prev_err_ = false;
  std::uint64_t err_pulses_ = 0;
  bool prev_awvalid_ = false, prev_awready_ = false, prev_wvalid_ = false, prev_wready_ = false;
  std::uint64_t prev_awaddr_ = 0;
  unsigned prev_awlen_ = 0;
  unsigned last_master_ = 0;
  bool aw_this_cycle_ = false;
};

TEST(RnicAxiWrMux, RandomBurstsBothMasters) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  MuxBench tb(seed);
  tb.gen(0).add_bursts(400, 255);
  tb.gen(1).add_bursts(400, 63);
  tb.run({0.5, 0.7, WMode::kEarly}, {0.3, 0.8, WMode::kAfterAw}, {0.6, 0.7, 0.5, 0.1});
  if (::testing::Test::HasFailure()) return;
  tb.gen(0).add_bursts(300, 255);
  tb.gen(1).add_bursts(300, 255);
  tb.run({0.9, 0.4, WMode::kAfterAw}, {0.9, 0.9, WMode::kEarly}, {0.9, 0.4, 0.9, 0.3});
  const Stats& s = tb.stats();
  EXPECT_EQ(s.grants[0], 700U);
  EXPECT_EQ(s.grants[1], 700U);
  EXPECT_GT(s.berr, 0U);
}

TEST(RnicAxiWrMux, RoundRobinNoStarvation) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  MuxBench tb(seed);
  tb.gen(0).add_bursts(300, 31);
  tb.gen(1).add_bursts(300, 31);
  // Both always requesting: grants must alternate.
  tb.run({1.0, 1.0, WMode::kEarly}, {1.0, 1.0, WMode::kEarly}, {0.7, 0.7, 1.0, 0.0}, true);
  EXPECT_TRUE(tb.stats().alternated) << "a master was granted twice while the other waited";
}

TEST(RnicAxiWrMux, FullRateNoBubble) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  MuxBench tb(seed);
  tb.gen(0).add_bursts(200, 15);
  tb.gen(1).add_bursts(200, 15);
  tb.run({1.0, 1.0, WMode::kEarly}, {1.0, 1.0, WMode::kEarly}, {1.0, 1.0, 1.0, 0.0});
  const Stats& s = tb.stats();
  // Every cycle from the first W beat to the last carries a W beat; every AW goes with its first W.
  EXPECT_EQ(s.last_w_cycle - s.first_w_cycle + 1, s.w);
  EXPECT_EQ(s.aw_with_first_w, s.aw);
  EXPECT_EQ(s.aw, 400U);
}

TEST(RnicAxiWrMux, SingleMasterEachSide) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  MuxBench tb(seed);
  tb.gen(1).add_bursts(200, 255);
  tb.run({}, {0.8, 0.8, WMode::kEarly}, {0.8, 0.8, 0.5, 0.2});
  if (::testing::Test::HasFailure()) return;
  tb.gen(0).add_bursts(200, 255);
  tb.run({0.8, 0.8, WMode::kAfterAw}, {}, {0.8, 0.8, 0.5, 0.2});
  EXPECT_EQ(tb.stats().aw, 400U);
}

}  // namespace
