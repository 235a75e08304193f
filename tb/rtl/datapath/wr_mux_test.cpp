// SPDX-License-Identifier: Apache-2.0
// rnic_axi_wr_mux: two random burst generators (place = s0, deliver = s1) and an AXI slave on m with
// random or adversarial ready patterns. Checked every cycle (rtl/rnic_axi_wr_mux.sv, AXI A3.3.1):
//  - scoreboard: m AWs in the order the ports' AWs were taken, m W bursts in that same order (W order =
//    AW order, one ID) with the port's data and strobes, awlen + 1 beats, WLAST on the last; every beat
//    from the right port; a source handshake exactly when the m handshake happens;
//  - channel independence: s*_awready does not change when any s*_wvalid flips (an AW is taken without
//    waiting for W), m_wvalid / s*_wready do not change when m_awready flips (W does not wait for
//    AWREADY), m_awvalid does not change when m_wready flips; no W beat before its AWVALID;
//  - VALID held with a stable payload until READY; aw_count_o / b_count_o; the bresp_err_o pulse;
//  - b_segs0_o: the s0 bursts flagged s0_awseglast_i (a segment's last burst) whose B has come, in B
//    order (one ID: B in AW order), s1's bursts and garbage on the flag while s0 is idle not counted;
//  - no AW taken while MaxWrites taken AWs await their B.
// Directed: a slave that waits for WVALID before AWREADY (and for the AW before WREADY), AWREADY or
// WREADY or BVALID held low for a long time, full rate without a bubble, round robin. DataWidth comes
// and MaxWrites come from the Verilated library (MUX_DW, MUX_MAX_WRITES); MaxBursts is the RTL
// default.
#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <iostream>

#include "Vrnic_axi_wr_mux.h"
#include "dp_harness.hpp"
#include "rnic/wire/bytes.hpp"

namespace {

constexpr std::size_t kBytes = MUX_DW / 8;
constexpr std::size_t kMaxBursts = 2;  // rnic_axi_wr_mux MaxBursts default
constexpr std::size_t kMaxWrites = MUX_MAX_WRITES;

struct Beat {
  std::vector<std::uint8_t> data;
  std::uint64_t strb = 0;
};

struct Burst {
  std::uint64_t addr = 0;  // master in bit 60, sequence number in bits 59:12
  unsigned len = 0;        // awlen: beats - 1
  bool seglast = false;    // s0 only: the last burst of a segment (s0_awseglast_i)
  std::vector<Beat> beats;
};

// A burst of `beats` beats at a random offset of its own 4 KiB page: like place and deliver, it never
// crosses a 4 KiB boundary (AXI A3.4.1; the mux asserts it, a_aw_4k).
std::uint64_t make_addr(unsigned master, std::size_t seq, std::uint64_t low, unsigned beats) {
  const std::uint64_t room = 4096U - std::uint64_t{beats} * kBytes;
  return (std::uint64_t{master} << 60) | (std::uint64_t{seq} << 12) | (low % (room + 1));
}

// The longest burst that fits a 4 KiB page: awlen 255 at 64 bits, 63 at 512.
constexpr unsigned kMaxLen4k = std::min(255U, static_cast<unsigned>(4096 / kBytes) - 1U);

enum class WMode {
  kEarly,    // W of a burst may be presented before (or with) its AW
  kAfterAw,  // W of a burst only once its AW handshake happened
};

struct GenKnobs {
  double p_aw = 1.0;  // chance to raise awvalid for a pending AW
  double p_w = 1.0;   // chance to raise wvalid for a pending W beat
  WMode mode = WMode::kEarly;
  std::size_t max_ahead = 6;  // AW at most this many bursts ahead of W
};

// One AXI write master: AW and W issued independently; wlast is driven as AXI requires.
class Gen {
 public:
  Gen(unsigned id, std::mt19937_64& rng) : id_(id), rng_(rng) {}

  // n bursts; fixed_len >= 0: every burst has that awlen, else mostly short ones up to max_len.
  void add_bursts(std::size_t n, unsigned max_len, int fixed_len = -1) {
    for (std::size_t i = 0; i < n; ++i) {
      Burst b;
      const auto r = rng_() % 100;
      b.len = fixed_len >= 0 ? static_cast<unsigned>(fixed_len)
              : r < 30       ? 0
              : r < 95       ? static_cast<unsigned>(rng_() % 16)
                             : static_cast<unsigned>(rng_() % (max_len + 1));
      b.len = std::min({b.len, max_len, kMaxLen4k});
      b.addr = make_addr(id_, bursts_.size(), rng_(), b.len + 1);
      b.seglast = id_ == 0 && (rng_() & 1U) != 0;
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
    const bool aw_pending = aw_idx_ < bursts_.size() && aw_idx_ <= w_idx_ + k.max_ahead;
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
  const std::vector<Burst>& bursts() const { return bursts_; }
  std::size_t seglast_bursts() const {
    return static_cast<std::size_t>(
        std::count_if(bursts_.begin(), bursts_.end(), [](const Burst& b) { return b.seglast; }));
  }
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
  double p_err = 0.0;       // chance a B response is not OKAY (EXOKAY, SLVERR or DECERR)
  bool aw_waits_w = false;  // AWREADY only once WVALID of that burst was seen (A3.3.1 allows it)
  bool w_waits_aw = false;  // WREADY only once that burst's AW was accepted
};

struct Stats {
  std::uint64_t taken = 0;     // AWs taken from the ports
  std::uint64_t b_segs0 = 0;   // Bs of s0 bursts flagged seglast
  std::size_t max_writes = 0;  // most AWs taken whose B had not come
  std::uint64_t aw = 0, w = 0, b = 0, berr = 0;
  std::uint64_t w_before_aw = 0;          // bursts whose first W beat went before their AW handshake
  std::uint64_t w_offered_before_aw = 0;  // bursts whose WVALID rose before their AW was accepted
  std::uint64_t aw_with_first_w = 0;      // bursts whose AW and first W beat went in one cycle
  std::uint64_t first_w_cycle = 0, last_w_cycle = 0;
  bool any_w = false;
  std::array<std::uint64_t, 2> grants{};
  std::uint64_t rr_violations = 0;  // both ports asked and the one taken last won again
  std::size_t max_lead = 0;         // most bursts taken whose W had not finished
};

class MuxBench {
 public:
  explicit MuxBench(std::uint64_t seed) : rng_(seed), gen_{Gen(0, rng_), Gen(1, rng_)} {
    set_inputs();
    sim_.reset();
  }

  Gen& gen(unsigned i) { return gen_[i]; }
  const Stats& stats() const { return st_; }
  std::uint64_t cycle() const { return sim_.cycle(); }
  std::size_t taken() const { return taken_.size(); }
  std::size_t m_aw() const { return m_aw_n_; }
  std::size_t w_done() const { return w_burst_; }

  GenKnobs k[2];
  SlaveKnobs sk;
  std::function<bool(std::uint64_t)> aw_block;  // AWREADY forced low in these cycles
  std::function<bool(std::uint64_t)> w_block;   // WREADY forced low in these cycles
  std::function<bool(std::uint64_t)> b_block;   // BVALID forced low in these cycles

  bool all_done() const {
    return gen_[0].done() && gen_[1].done() && st_.b == taken_.size() && w_burst_ == taken_.size();
  }

  // Runs until pred() or max_cycles; false on a test failure.
  template <class Pred>
  bool run_until(Pred pred, std::uint64_t max_cycles) {
    for (std::uint64_t i = 0; i < max_cycles && !pred(); ++i) {
      if (::testing::Test::HasFailure()) return false;
      step();
    }
    return !::testing::Test::HasFailure();
  }

  // Runs until every burst is written and acknowledged, then checks the last error pulse.
  void finish() {
    const std::uint64_t limit = 40 * (gen_[0].total_beats() + gen_[1].total_beats()) + 4000;
    run_until([&] { return all_done(); }, limit);
    EXPECT_TRUE(all_done()) << "bursts left over (deadlock?) at cycle " << sim_.cycle() << ": taken " << taken_.size()
                            << ", m AW " << m_aw_n_ << ", W bursts " << w_burst_ << ", B " << st_.b;
    // The error pulse of the last response comes one cycle later.
    for (int i = 0; i < 2; ++i) step();
    EXPECT_EQ(err_pulses_, st_.berr);
  }

 private:
  struct Taken {
    unsigned master;
    std::size_t seq;
  };

  void step() {
    gen_[0].decide(k[0]);
    gen_[1].decide(k[1]);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const std::uint64_t cyc = sim_.cycle();
    bool awready = u(rng_) < sk.p_awready;
    if (sk.aw_waits_w) awready = awready && w_seen_ > m_aw_n_;  // seen in an earlier cycle
    if (aw_block && aw_block(cyc)) awready = false;
    bool wready = u(rng_) < sk.p_wready;
    if (sk.w_waits_aw) wready = wready && w_burst_ < m_aw_n_;
    if (w_block && w_block(cyc)) wready = false;
    const std::size_t b_eligible = std::min(m_aw_n_, w_burst_);  // AW and last W both accepted
    const bool bvalid = st_.b < b_eligible && (b_hold_ || u(rng_) < sk.p_bvalid) && !(b_block && b_block(cyc));
    if (bvalid && !b_hold_) bresp_ = u(rng_) < sk.p_err ? static_cast<std::uint8_t>(1 + rng_() % 3) : 0;
    set_inputs();
    sim_->m_awready_i = awready;
    sim_->m_wready_i = wready;
    sim_->m_bvalid_i = bvalid;
    sim_->m_bresp_i = bvalid ? bresp_ : static_cast<std::uint8_t>(rng_() & 3U);
    sim_.eval();
    independence_checks();
    step_checks(awready, wready, bvalid);
    sim_.tick();
  }

  void set_inputs() {
    auto rnd_beat = [&]() {
      Beat b;
      b.data.resize(kBytes);
      for (auto& x : b.data) x = static_cast<std::uint8_t>(rng_());
      b.strb = rng_();
      return b;
    };
    {
      Gen& g = gen_[0];
      sim_->s0_awvalid_i = g.awvalid();
      sim_->s0_awaddr_i = g.awvalid() ? g.aw_burst().addr : rng_();
      sim_->s0_awlen_i = static_cast<std::uint8_t>(g.awvalid() ? g.aw_burst().len : rng_());
      sim_->s0_awseglast_i = g.awvalid() ? g.aw_burst().seglast : (rng_() & 1U) != 0;
      const Beat b = g.wvalid() ? g.w_beat() : rnd_beat();
      dp::set_bytes(sim_->s0_wdata_i, b.data.data(), kBytes);
      set_strb(sim_->s0_wstrb_i, b.strb);
      sim_->s0_wlast_i = g.wvalid() ? g.w_last() : (rng_() & 1U) != 0;
      sim_->s0_wvalid_i = g.wvalid();
    }
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
    rnic::wire::store_le64(b.data(), v);
    dp::set_bytes(sig, b.data(), 8);
  }

  // A3.3.1: flip the inputs a channel must not wait for and see that its outputs stay the same.
  void independence_checks() {
    auto& m = sim_.model();
    const std::uint8_t aw0 = m.s0_awready_o, aw1 = m.s1_awready_o, awv = m.m_awvalid_o;
    const std::uint8_t wv = m.m_wvalid_o, wr0 = m.s0_wready_o, wr1 = m.s1_wready_o;
    const std::uint8_t s0w = m.s0_wvalid_i, s1w = m.s1_wvalid_i, mar = m.m_awready_i, mwr = m.m_wready_i;
    for (int f = 1; f < 4; ++f) {
      m.s0_wvalid_i = static_cast<std::uint8_t>(s0w ^ (f & 1));
      m.s1_wvalid_i = static_cast<std::uint8_t>(s1w ^ ((f >> 1) & 1));
      m.m_wready_i = static_cast<std::uint8_t>(mwr ^ (f & 1));
      sim_.eval();
      EXPECT_EQ(m.s0_awready_o, aw0) << "s0_awready depends on wvalid/m_wready, cycle " << sim_.cycle();
      EXPECT_EQ(m.s1_awready_o, aw1) << "s1_awready depends on wvalid/m_wready, cycle " << sim_.cycle();
      EXPECT_EQ(m.m_awvalid_o, awv) << "m_awvalid depends on wvalid/m_wready, cycle " << sim_.cycle();
    }
    m.s0_wvalid_i = s0w;
    m.s1_wvalid_i = s1w;
    m.m_wready_i = mwr;
    m.m_awready_i = static_cast<std::uint8_t>(!mar);
    sim_.eval();
    EXPECT_EQ(m.m_wvalid_o, wv) << "m_wvalid waits on m_awready, cycle " << sim_.cycle();
    EXPECT_EQ(m.s0_wready_o, wr0) << "s0_wready waits on m_awready, cycle " << sim_.cycle();
    EXPECT_EQ(m.s1_wready_o, wr1) << "s1_wready waits on m_awready, cycle " << sim_.cycle();
    m.m_awready_i = mar;
    sim_.eval();
  }

  void step_checks(bool awready, bool wready, bool bvalid) {
    auto& m = sim_.model();
    const std::uint64_t cyc = sim_.cycle();
    SCOPED_TRACE(::testing::Message() << "cycle " << cyc);

    // Counters reflect every handshake of earlier cycles.
    EXPECT_EQ(m.aw_count_o, static_cast<std::uint32_t>(st_.taken));
    EXPECT_EQ(m.b_count_o, static_cast<std::uint32_t>(st_.b));
    EXPECT_EQ(m.b_segs0_o, static_cast<std::uint32_t>(st_.b_segs0));
    EXPECT_EQ(m.bresp_err_o != 0, prev_err_) << "bresp_err_o must pulse one cycle after an error B";
    if (m.bresp_err_o != 0) ++err_pulses_;

    // m side: a valid not taken holds its payload.
    const std::uint64_t awaddr = m.m_awaddr_o;
    const unsigned awlen = m.m_awlen_o;
    if (prev_awvalid_ && !prev_awready_) {
      EXPECT_TRUE(m.m_awvalid_o != 0) << "m_awvalid dropped";
      EXPECT_EQ(awaddr, prev_awaddr_);
      EXPECT_EQ(awlen, prev_awlen_);
    }
    const std::vector<std::uint8_t> wdata = dp::get_bytes(m.m_wdata_o, kBytes);
    const std::uint64_t wstrb = dp::bits(dp::get_bytes(m.m_wstrb_o, 8), 0, static_cast<unsigned>(kBytes));
    if (prev_wvalid_ && !prev_wready_) {
      EXPECT_TRUE(m.m_wvalid_o != 0) << "m_wvalid dropped";
      EXPECT_EQ(wdata, prev_wdata_);
      EXPECT_EQ(wstrb, prev_wstrb_);
      EXPECT_EQ(m.m_wlast_o != 0, prev_wlast_);
    }

    const bool aw_hs = m.m_awvalid_o != 0 && awready;
    const bool w_hs = m.m_wvalid_o != 0 && wready;
    const bool s0_aw = gen_[0].awvalid() && m.s0_awready_o != 0;
    const bool s1_aw = gen_[1].awvalid() && m.s1_awready_o != 0;
    const bool s0_w = gen_[0].wvalid() && m.s0_wready_o != 0;
    const bool s1_w = gen_[1].wvalid() && m.s1_wready_o != 0;
    EXPECT_LE(int{s0_aw} + int{s1_aw}, 1) << "two AWs taken in one cycle";
    EXPECT_EQ(int{s0_w} + int{s1_w}, int{w_hs}) << "W handshakes disagree";

    // AWs taken from the ports, in order: this is the order the m side must follow.
    if (s0_aw || s1_aw) {
      // B handshakes of earlier cycles free room; MaxWrites taken AWs awaiting B: none taken.
      EXPECT_LT(st_.taken - st_.b, kMaxWrites) << "AW taken with MaxWrites awaiting their B";
      const unsigned master = s0_aw ? 0U : 1U;
      const bool both = gen_[0].awvalid() && gen_[1].awvalid();
      if (both && st_.taken > 0 && master == last_master_) ++st_.rr_violations;
      last_master_ = master;
      ++st_.grants[master];
      taken_.push_back({master, next_seq_[master]++});
      ++st_.taken;
    }

    // m AW: presents the next taken burst that the slave has not accepted.
    // (A mux passing AW through would present a port's AW before taking it: then it is that AW.)
    if (m.m_awvalid_o != 0 && m_aw_n_ >= taken_.size()) {
      const bool port_aw = (gen_[0].awvalid() && gen_[0].aw_burst().addr == awaddr) ||
                           (gen_[1].awvalid() && gen_[1].aw_burst().addr == awaddr);
      EXPECT_TRUE(port_aw && !aw_hs) << "m_awvalid without a taken or presented AW";
    } else if (m.m_awvalid_o != 0) {
      const Taken& t = taken_[m_aw_n_];
      const Burst& b = gen_[t.master].bursts()[t.seq];
      EXPECT_EQ(awaddr, b.addr) << "AW out of order or corrupted (expected " << t.master << ":" << t.seq << ")";
      EXPECT_EQ(awlen, b.len);
    }

    // WVALID of the burst W is in has been seen (aw_waits_w slaves decide on it next cycle).
    if (m.m_wvalid_o != 0 && w_seen_ < w_burst_ + 1) {
      w_seen_ = w_burst_ + 1;
      if (w_burst_ >= m_aw_n_) ++st_.w_offered_before_aw;
    }

    // m W: the bursts in taken order, each from its port, never before its AWVALID.
    if (w_hs) {
      ASSERT_LT(w_burst_, taken_.size()) << "W beat of no taken burst";
      const Taken& t = taken_[w_burst_];
      EXPECT_TRUE(w_burst_ < m_aw_n_ || (w_burst_ == m_aw_n_ && m.m_awvalid_o != 0)) << "W beat before its AWVALID";
      if (w_beat_ == 0 && w_burst_ >= m_aw_n_ && !aw_hs) ++st_.w_before_aw;
      if (w_beat_ == 0 && w_burst_ == m_aw_n_ && aw_hs) ++st_.aw_with_first_w;
      const Burst& b = gen_[t.master].bursts()[t.seq];
      ASSERT_LE(w_beat_, b.len);
      const Beat& e = b.beats[w_beat_];
      EXPECT_EQ(wdata, e.data) << "burst " << t.master << ":" << t.seq << " beat " << w_beat_;
      EXPECT_EQ(wstrb, e.strb);
      EXPECT_EQ(m.m_wlast_o != 0, w_beat_ == b.len) << "WLAST on beat " << w_beat_ << " of " << b.len + 1;
      EXPECT_TRUE(t.master == 0 ? s0_w : s1_w) << "W came from the other source";
      if (!st_.any_w) st_.first_w_cycle = cyc;
      st_.any_w = true;
      st_.last_w_cycle = cyc;
      ++st_.w;
      if (w_beat_ == b.len) {
        ++w_burst_;
        w_beat_ = 0;
      } else {
        ++w_beat_;
      }
    }
    if (aw_hs) {
      ++m_aw_n_;
      ++st_.aw;
    }
    st_.max_lead = std::max(st_.max_lead, taken_.size() - w_burst_);
    st_.max_writes = std::max(st_.max_writes, taken_.size() - static_cast<std::size_t>(st_.b));

    // B channel (in order; only after the burst's AW and last W).
    const bool b_hs = bvalid && m.m_bready_o != 0;
    prev_err_ = b_hs && bresp_ != 0;
    if (b_hs) {
      EXPECT_LT(st_.b, taken_.size()) << "B of no taken AW";
      const Taken& t = taken_.at(st_.b);  // B in AW order (one ID)
      if (t.master == 0 && gen_[0].bursts()[t.seq].seglast) ++st_.b_segs0;
      ++st_.b;
      if (bresp_ != 0) ++st_.berr;
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
    prev_wdata_ = wdata;
    prev_wstrb_ = wstrb;
    prev_wlast_ = m.m_wlast_o != 0;
  }

  std::mt19937_64 rng_;
  std::array<Gen, 2> gen_;
  dp::Sim<Vrnic_axi_wr_mux> sim_;
  Stats st_;
  std::vector<Taken> taken_;
  std::array<std::size_t, 2> next_seq_{};
  std::size_t m_aw_n_ = 0;   // AWs accepted by the slave
  std::size_t w_burst_ = 0;  // W bursts finished (index of the burst W is in)
  unsigned w_beat_ = 0;
  std::size_t w_seen_ = 0;  // W bursts whose WVALID the slave has seen
  bool b_hold_ = false;
  std::uint8_t bresp_ = 0;
  bool prev_err_ = false;
  std::uint64_t err_pulses_ = 0;
  bool prev_awvalid_ = false, prev_awready_ = false, prev_wvalid_ = false, prev_wready_ = false;
  std::uint64_t prev_awaddr_ = 0;
  unsigned prev_awlen_ = 0;
  std::vector<std::uint8_t> prev_wdata_;
  std::uint64_t prev_wstrb_ = 0;
  bool prev_wlast_ = false;
  unsigned last_master_ = 0;
};

TEST(AxiWrMux, RandomBurstsBothMasters) {
  MuxBench tb(rnic::tb::random_test_seed());
  tb.gen(0).add_bursts(400, 255);
  tb.gen(1).add_bursts(400, 63);
  tb.k[0] = {0.5, 0.7, WMode::kEarly, 6};
  tb.k[1] = {0.3, 0.8, WMode::kAfterAw, 2};
  tb.sk = {0.6, 0.7, 0.5, 0.1, false, false};
  tb.finish();
  if (::testing::Test::HasFailure()) return;
  tb.gen(0).add_bursts(300, 255);
  tb.gen(1).add_bursts(300, 255);
  tb.k[0] = {0.9, 0.4, WMode::kAfterAw, 1};
  tb.k[1] = {0.9, 0.9, WMode::kEarly, 8};
  tb.sk = {0.9, 0.4, 0.9, 0.3, false, false};
  tb.finish();
  const Stats& s = tb.stats();
  EXPECT_EQ(s.grants[0], 700U);
  EXPECT_EQ(s.grants[1], 700U);
  EXPECT_EQ(s.aw, 1400U);
  EXPECT_GT(s.berr, 0U);
  EXPECT_EQ(s.max_lead, kMaxBursts) << "AW never ran MaxBursts ahead of W";
  EXPECT_EQ(s.b_segs0, tb.gen(0).seglast_bursts());
  EXPECT_GT(s.b_segs0, 0U);
}

// BVALID low for a long time with both ports always valid: AWs are taken (and their W written)
// until exactly MaxWrites await their B, then none; b_segs0_o stays put meanwhile; once the Bs come
// everything finishes and b_segs0_o counts every s0 segment-last burst, no s1 burst.
TEST(AxiWrMux, MaxWritesAwaitingB) {
  MuxBench tb(rnic::tb::random_test_seed());
  const std::size_t n = kMaxWrites + 100;                // per port
  const std::uint64_t end = 100 + 4 * kMaxWrites + 200;  // bursts of 1 or 2 beats: enough time
  tb.gen(0).add_bursts(n, 1);
  tb.gen(1).add_bursts(n, 1);
  tb.k[0] = {1.0, 1.0, WMode::kEarly, 8};
  tb.k[1] = {1.0, 1.0, WMode::kEarly, 8};
  tb.b_block = [end](std::uint64_t c) { return c >= 100 && c < end; };
  ASSERT_TRUE(tb.run_until([&] { return tb.cycle() >= end - 10; }, end));
  const std::uint64_t b0 = tb.stats().b;
  const std::uint64_t segs0 = tb.stats().b_segs0;
  EXPECT_EQ(tb.taken() - b0, kMaxWrites) << "AWs awaiting B";
  EXPECT_EQ(tb.m_aw(), tb.taken());
  EXPECT_EQ(tb.w_done(), tb.taken()) << "W of every taken AW written";
  EXPECT_EQ(tb.stats().max_writes, kMaxWrites);
  ASSERT_TRUE(tb.run_until([&] { return tb.cycle() >= end - 1; }, 100));
  EXPECT_EQ(tb.stats().b, b0);
  EXPECT_EQ(tb.stats().b_segs0, segs0);
  tb.finish();
  EXPECT_EQ(tb.stats().aw, 2 * n);
  EXPECT_EQ(tb.stats().b_segs0, tb.gen(0).seglast_bursts());
  EXPECT_EQ(tb.stats().max_writes, kMaxWrites);
}

// A3.3.1: a slave may wait for WVALID before asserting AWREADY. Every burst's first W beat must then
// be offered while its AW waits; the old mux (W gated by AWREADY) deadlocks here.
TEST(AxiWrMux, SlaveWaitsForWvalidBeforeAwready) {
  MuxBench tb(rnic::tb::random_test_seed());
  tb.gen(0).add_bursts(300, 31);
  tb.gen(1).add_bursts(300, 31);
  tb.k[0] = {0.8, 0.8, WMode::kEarly, 6};
  tb.k[1] = {0.8, 0.8, WMode::kAfterAw, 6};
  tb.sk = {0.7, 0.7, 0.7, 0.0, true, false};
  tb.finish();
  if (::testing::Test::HasFailure()) return;
  EXPECT_EQ(tb.stats().w_offered_before_aw, 600U) << "every burst's WVALID before its AWREADY";
  EXPECT_GT(tb.stats().w_before_aw, 0U);
  // Also waiting for the AW before WREADY (both waits together are legal and must not deadlock).
  tb.gen(0).add_bursts(200, 31);
  tb.gen(1).add_bursts(200, 31);
  tb.sk = {1.0, 1.0, 1.0, 0.0, true, true};
  tb.finish();
  EXPECT_EQ(tb.stats().aw, 1000U);
}

// AWREADY low for 500 cycles: the W of every burst already taken (issued, or presented by the AW
// register) still completes; then nothing more is taken and nothing deadlocks.
TEST(AxiWrMux, AwreadyLowForLong) {
  MuxBench tb(rnic::tb::random_test_seed());
  tb.gen(0).add_bursts(300, 15);
  tb.gen(1).add_bursts(300, 15);
  tb.k[0] = {1.0, 0.9, WMode::kEarly, 6};
  tb.k[1] = {1.0, 0.9, WMode::kAfterAw, 6};
  tb.aw_block = [](std::uint64_t c) { return c >= 200 && c < 700; };
  ASSERT_TRUE(tb.run_until([&] { return tb.cycle() >= 200; }, 1000));
  const std::size_t w0 = tb.w_done();
  ASSERT_TRUE(tb.run_until([&] { return tb.cycle() >= 700; }, 1000));
  EXPECT_GT(tb.w_done(), w0);
  EXPECT_EQ(tb.w_done(), tb.taken()) << "W of a taken burst waited for AWREADY";
  EXPECT_EQ(tb.taken(), tb.m_aw() + 1) << "one AW presented, the others accepted";
  tb.finish();
  EXPECT_EQ(tb.stats().aw, 600U);
}

// WREADY low for 500 cycles: AW keeps going until MaxBursts bursts are waiting for their W.
TEST(AxiWrMux, WreadyLowForLongAwRunsAhead) {
  MuxBench tb(rnic::tb::random_test_seed());
  tb.gen(0).add_bursts(300, 15);
  tb.gen(1).add_bursts(300, 15);
  tb.k[0] = {1.0, 1.0, WMode::kEarly, 8};
  tb.k[1] = {1.0, 1.0, WMode::kEarly, 8};
  tb.w_block = [](std::uint64_t c) { return c >= 200 && c < 700; };
  ASSERT_TRUE(tb.run_until([&] { return tb.cycle() >= 700; }, 1000));
  EXPECT_EQ(tb.taken() - tb.w_done(), kMaxBursts);
  EXPECT_EQ(tb.m_aw(), tb.taken()) << "every taken AW reached the slave without its W";
  tb.finish();
  EXPECT_EQ(tb.stats().aw, 600U);
}

TEST(AxiWrMux, RoundRobinNoStarvation) {
  MuxBench tb(rnic::tb::random_test_seed());
  tb.gen(0).add_bursts(300, 31);
  tb.gen(1).add_bursts(300, 31);
  tb.k[0] = {1.0, 1.0, WMode::kEarly, 6};
  tb.k[1] = {1.0, 1.0, WMode::kEarly, 6};
  tb.sk = {0.7, 0.7, 1.0, 0.0, false, false};
  tb.finish();
  EXPECT_EQ(tb.stats().rr_violations, 0U) << "a port was taken twice while the other waited";
  EXPECT_EQ(tb.stats().grants[0], 300U);
}

// Always-ready slave, both ports always valid: one W beat every cycle from the first to the last,
// across bursts and ports (AW runs ahead, so the next burst is queued before its first beat).
TEST(AxiWrMux, FullRateNoBubble) {
  for (int fixed : {-1, 0, 1}) {  // random lengths; all single-beat; all two-beat bursts
    SCOPED_TRACE(::testing::Message() << "awlen " << fixed);
    MuxBench tb(rnic::tb::random_test_seed());
    tb.gen(0).add_bursts(200, 15, fixed);
    tb.gen(1).add_bursts(200, 15, fixed);
    tb.finish();
    const Stats& s = tb.stats();
    EXPECT_EQ(s.last_w_cycle - s.first_w_cycle + 1, s.w) << "bubble in the W stream";
    EXPECT_EQ(s.aw, 400U);
    std::cout << "awlen " << fixed << ": " << s.w << " W beats in " << s.last_w_cycle - s.first_w_cycle + 1
              << " cycles, first beat at cycle " << s.first_w_cycle << ", AW lead up to " << s.max_lead << " bursts"
              << std::endl;
  }
}

// No added latency: a burst arriving on an idle mux (AW and first W presented together, slave ready)
// leaves with its AW and its first W beat in that same cycle.
TEST(AxiWrMux, IdleBurstGoesWithItsAw) {
  MuxBench tb(rnic::tb::random_test_seed());
  tb.gen(0).add_bursts(100, 0, 0);
  tb.gen(1).add_bursts(100, 0, 0);
  tb.k[0] = {0.1, 1.0, WMode::kEarly, 0};
  tb.k[1] = {0.1, 1.0, WMode::kEarly, 0};
  tb.finish();
  // (When both ports present in one cycle, the second one goes in the next, again on an idle mux.)
  EXPECT_EQ(tb.stats().aw_with_first_w, 200U);
  std::cout << "bursts with AW and first W in one cycle: " << tb.stats().aw_with_first_w << " of " << tb.stats().aw
            << std::endl;
}

TEST(AxiWrMux, SingleMasterEachSide) {
  MuxBench tb(rnic::tb::random_test_seed());
  tb.gen(1).add_bursts(200, 255);
  tb.k[1] = {0.8, 0.8, WMode::kEarly, 3};
  tb.sk = {0.8, 0.8, 0.5, 0.2, false, false};
  tb.finish();
  if (::testing::Test::HasFailure()) return;
  tb.gen(0).add_bursts(200, 255);
  tb.k[0] = {0.8, 0.8, WMode::kAfterAw, 3};
  tb.finish();
  EXPECT_EQ(tb.stats().aw, 400U);
}

// Every non-OKAY B (EXOKAY, SLVERR, DECERR) gives one bresp_err_o pulse, the cycle after; OKAY none.
TEST(AxiWrMux, ErrorResponsesPulse) {
  MuxBench tb(rnic::tb::random_test_seed());
  tb.gen(0).add_bursts(200, 7);
  tb.gen(1).add_bursts(200, 7);
  tb.sk = {0.8, 0.8, 0.6, 0.5, false, false};
  tb.finish();  // checks the pulse every cycle and the number of pulses
  EXPECT_GT(tb.stats().berr, 50U);
  EXPECT_LT(tb.stats().berr, tb.stats().b);
}

}  // namespace
