// SPDX-License-Identifier: Apache-2.0
// rnic_axi_rd_mux: two random AXI4 read masters (s0: receive descriptor fetch, s1: transmit gather) and a
// random in-order AXI slave on m (no IDs: bursts answered in the order taken). Checked every cycle
// (rtl/rnic_axi_rd_mux.sv, AXI A3.3.1):
//  - AR: every m AR is the next AR its master issued, (address, len) intact (each master's in its own
//    order, any interleaving); m_arvalid and its payload hold until ARREADY; at the end the slave has
//    seen exactly the ARs issued;
//  - R: a scoreboard per master: its beats, in its own order, data and RRESP (functions of the burst's
//    address and the beat's number, so every beat names its burst) and RLAST on beat len; no beat for a
//    master that has none in the mux; each master's RVALID and payload hold until its RREADY; at most two
//    beats of a master between m and it (its register slice);
//  - never more than Depth bursts loaded (in the AR register or taken by the slave) and not finished;
//    m_rready only with a burst loaded; error_o 0 in legal traffic.
// Directed: the Depth limit with R stalled, ARREADY low for long, round robin with both masters always
// asking, one master idle, stray R beats (not taken, error_o rises and stays), throughput.
// Built with RD_MUX_BUG != 0 (dp_broken_model, tb/rtl/datapath/CMakeLists.txt), the binary checks instead
// that the bench catches the bug planted in its model. DataWidth and Depth come from the Verilated
// library (RD_MUX_DW, RD_MUX_DEPTH).
#include <gtest/gtest-spi.h>

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <iomanip>
#include <iostream>
#include <string>
#include <utility>

#include "Vrnic_axi_rd_mux.h"
#include "dp_harness.hpp"
#include "rnic/wire/bytes.hpp"

#ifndef RD_MUX_BUG
#define RD_MUX_BUG 0
#endif

namespace {

constexpr std::size_t kBytes = RD_MUX_DW / 8;
constexpr std::size_t kDepth = RD_MUX_DEPTH;
constexpr std::uint8_t kSlvErr = 2;
constexpr std::uint8_t kDecErr = 3;

// Failures caught by a broken-model test (failures_of below): the bench stops on them as on its own.
const ::testing::TestPartResultArray* g_captured = nullptr;
bool failed() { return ::testing::Test::HasFailure() || (g_captured != nullptr && g_captured->size() > 0); }

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The slave's answer to beat `beat` of the burst at `addr`.
std::vector<std::uint8_t> beat_data(std::uint64_t addr, unsigned beat) {
  std::vector<std::uint8_t> d(kBytes);
  for (std::size_t w = 0; w < kBytes / 8; ++w) {
    rnic::wire::store_le64(d.data() + 8 * w, mix(addr ^ mix((std::uint64_t{beat} << 8) | w)));
  }
  return d;
}
// One burst in eight SLVERR on every beat, one in sixteen SLVERR or DECERR on some beats, the rest OKAY.
std::uint8_t beat_resp(std::uint64_t addr, unsigned beat) {
  const std::uint64_t kind = mix(addr ^ 0x5e5) % 16;
  if (kind < 2) return kSlvErr;
  if (kind == 2) {
    const std::uint64_t b = mix(addr + beat) % 4;
    return b == 0 ? kSlvErr : b == 1 ? kDecErr : 0;
  }
  return 0;
}

struct Burst {
  std::uint64_t addr = 0;  // master in bit 63, its sequence number in bits 62:24, random below
  unsigned len = 0;        // arlen: beats - 1
};

struct MasterKnobs {
  double p_ar = 1.0;      // chance to raise arvalid for a pending AR (held until ARREADY)
  double p_rready = 1.0;  // chance of RREADY in a cycle
};

struct SlaveKnobs {
  double p_arready = 1.0;  // chance of ARREADY in a cycle (whether ARVALID is up or not)
  double p_rvalid = 1.0;   // chance to raise RVALID for a beat that is due (held until RREADY)
  unsigned max_lat = 0;    // a burst's first beat is due 1 + [0, max_lat] cycles after its AR
};

struct Stats {
  std::array<std::uint64_t, 2> issued{};     // ARs taken from each master
  std::array<std::uint64_t, 2> grants{};     // m ARs of each master
  std::array<std::uint64_t, 2> delivered{};  // R beats each master took
  std::uint64_t r_beats = 0;                 // R beats taken at m
  std::uint64_t err_beats = 0;               // beats delivered with RRESP != OKAY
  std::size_t max_outstanding = 0;           // most bursts the slave had taken and not finished
  std::uint64_t alternations = 0;            // m ARs whose master differs from the previous one's
  std::uint64_t rr_violations = 0;           // strict_rr: the same master twice while the other waited
  std::uint64_t first_r = 0, last_r = 0, first_ar = 0, last_ar = 0;
};

using RData = std::remove_reference_t<decltype(std::declval<Vrnic_axi_rd_mux&>().s0_rdata_o)>;

class RdMuxBench {
 public:
  explicit RdMuxBench(std::uint64_t seed) : rng_(seed) {
    auto& m = sim_.model();
    port_[0] = {&m.s0_araddr_i, &m.s0_arlen_i, &m.s0_arvalid_i, &m.s0_arready_o, &m.s0_rdata_o,
                &m.s0_rresp_o,  &m.s0_rlast_o, &m.s0_rvalid_o,  &m.s0_rready_i};
    port_[1] = {&m.s1_araddr_i, &m.s1_arlen_i, &m.s1_arvalid_i, &m.s1_arready_o, &m.s1_rdata_o,
                &m.s1_rresp_o,  &m.s1_rlast_o, &m.s1_rvalid_o,  &m.s1_rready_i};
    drive();
    sim_.reset();
  }

  MasterKnobs mk[2];
  SlaveKnobs sk;
  std::function<bool(std::uint64_t)> ar_block;                // ARREADY forced low in these cycles
  std::function<bool(std::uint64_t)> r_block;                 // no RVALID raised in these cycles
  std::function<bool(unsigned, std::uint64_t)> rready_block;  // master's RREADY forced low
  bool strict_rr = false;  // both masters always ask: the m ARs must alternate while both have some left

  const Stats& stats() const { return st_; }
  std::uint64_t cycle() const { return sim_.cycle(); }
  std::uint64_t accepted() const { return accepted_; }
  std::uint64_t outstanding() const { return accepted_ - completed_; }
  std::uint64_t issued() const { return st_.issued[0] + st_.issued[1]; }
  bool m_arvalid() { return sim_->m_arvalid_o != 0; }

  // n bursts for master i; fixed_len >= 0: every burst has that arlen, else mostly short ones up to
  // max_len.
  void add_bursts(unsigned i, std::size_t n, unsigned max_len, int fixed_len = -1) {
    Master& g = m_[i];
    for (std::size_t k = 0; k < n; ++k) {
      const auto r = rng_() % 100;
      Burst b;
      b.len = fixed_len >= 0 ? static_cast<unsigned>(fixed_len)
              : r < 30       ? 0
              : r < 95       ? static_cast<unsigned>(rng_() % 16)
                             : static_cast<unsigned>(rng_() % (max_len + 1));
      b.len = std::min(b.len, max_len);
      const std::uint64_t seq = g.bursts.size();
      b.addr = (std::uint64_t{i} << 63) | ((seq & 0x7fffffffffULL) << 24) | (rng_() & 0xffffffU);
      g.bursts.push_back(b);
      g.total_beats += b.len + 1;
    }
  }

  bool all_done() const {
    for (const Master& g : m_) {
      if (g.ar_idx < g.bursts.size() || !g.r_exp.empty()) return false;
    }
    return sq_.empty();
  }

  // Runs until pred() or max_cycles; false on a test failure.
  template <class Pred>
  bool run_until(Pred pred, std::uint64_t max_cycles) {
    for (std::uint64_t i = 0; i < max_cycles && !pred(); ++i) {
      if (failed()) return false;
      step();
    }
    return !failed();
  }

  // Runs until every burst is issued, answered and delivered.
  void finish() {
    const std::uint64_t limit = 60 * (m_[0].total_beats + m_[1].total_beats) + 4000;
    run_until([&] { return all_done(); }, limit);
    if (failed()) return;
    EXPECT_TRUE(all_done()) << "[r] bursts left over (deadlock?) at cycle " << sim_.cycle() << ": issued " << issued()
                            << ", m AR " << accepted_ << ", finished " << completed_;
    for (unsigned i = 0; i < 2; ++i) {
      EXPECT_EQ(st_.issued[i], m_[i].bursts.size());
      EXPECT_EQ(st_.grants[i], m_[i].bursts.size()) << "[ar] the slave saw another number of s" << i << " ARs";
      EXPECT_EQ(st_.delivered[i], m_[i].total_beats) << "[r] s" << i << " beats";
    }
  }

  // Directed: with nothing outstanding, the slave offers an R beat for `n` cycles. It must not be taken
  // (m_rready 0), reach neither master, and error_o must rise the cycle after and stay.
  void stray_beats(int n) {
    ASSERT_TRUE(all_done()) << "stray beats only with nothing outstanding";
    auto& m = sim_.model();
    for (int k = 0; k < n; ++k) {
      SCOPED_TRACE(::testing::Message() << "stray beat, cycle " << sim_.cycle());
      for (unsigned i = 0; i < 2; ++i) m_[i].rready = chance(0.5);
      arready_ = chance(0.5);
      rvalid_ = false;
      drive();
      m.m_rvalid_i = 1;
      m.m_rlast_i = static_cast<CData>(rng_() & 1U);
      sim_.eval();
      EXPECT_EQ(m.m_rready_o, 0) << "[error] a stray R beat (no burst outstanding) was taken";
      EXPECT_EQ(m.s0_rvalid_o, 0) << "[error] a stray R beat reached s0";
      EXPECT_EQ(m.s1_rvalid_o, 0) << "[error] a stray R beat reached s1";
      EXPECT_EQ(m.error_o != 0, error_expected_ || k > 0) << "[error] error_o the cycle after a stray beat";
      sim_.tick();
    }
    error_expected_ = true;
    EXPECT_EQ(m.error_o, 1) << "[error] error_o after a stray beat";
    for (int k = 0; k < 5; ++k) step();  // quiet: nothing reaches the masters, error_o stays up
  }

 private:
  struct Port {
    QData* araddr;
    CData* arlen;
    CData* arvalid;
    CData* arready;
    RData* rdata;
    CData* rresp;
    CData* rlast;
    CData* rvalid;
    CData* rready;
  };
  struct Master {
    std::vector<Burst> bursts;
    std::size_t total_beats = 0;
    std::size_t ar_idx = 0;  // the next AR to issue
    bool arvalid = false;
    bool rready = false;
    std::deque<Burst> at_m;   // issued, not yet taken by the slave
    std::deque<Burst> r_exp;  // issued, not all beats delivered
    unsigned r_beat = 0;      // the next beat of r_exp.front()
    std::size_t in_mux = 0;   // beats taken at m for it, not yet delivered
    bool prev_rvalid = false, prev_rready = false;
    std::vector<std::uint8_t> prev_rdata;
    unsigned prev_rresp = 0, prev_rlast = 0;
  };
  struct Answer {  // a burst the slave took, answered in order
    Burst b;
    unsigned master;
    std::uint64_t due;  // cycle of its first beat at the earliest
  };

  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }

  void step() {
    const std::uint64_t cyc = sim_.cycle();
    for (unsigned i = 0; i < 2; ++i) {
      Master& g = m_[i];
      g.arvalid = g.ar_idx < g.bursts.size() && (g.arvalid || chance(mk[i].p_ar));
      g.rready = chance(mk[i].p_rready) && !(rready_block && rready_block(i, cyc));
    }
    arready_ = chance(sk.p_arready) && !(ar_block && ar_block(cyc));
    if (!rvalid_ && !sq_.empty() && cyc >= sq_.front().due && chance(sk.p_rvalid) && !(r_block && r_block(cyc))) {
      rvalid_ = true;
    }
    drive();
    sim_.eval();
    check();
    sim_.tick();
  }

  // Every input from the bench's state; random values where the valid is low.
  void drive() {
    auto& m = sim_.model();
    for (unsigned i = 0; i < 2; ++i) {
      const Master& g = m_[i];
      const Port& p = port_[i];
      *p.arvalid = g.arvalid;
      *p.araddr = g.arvalid ? g.bursts[g.ar_idx].addr : rng_();
      *p.arlen = static_cast<CData>(g.arvalid ? g.bursts[g.ar_idx].len : rng_());
      *p.rready = g.rready;
    }
    m.m_arready_i = arready_;
    m.m_rvalid_i = rvalid_;
    if (rvalid_) {
      const Answer& a = sq_.front();
      const std::vector<std::uint8_t> d = beat_data(a.b.addr, s_beat_);
      dp::set_bytes(m.m_rdata_i, d.data(), kBytes);
      m.m_rresp_i = beat_resp(a.b.addr, s_beat_);
      m.m_rlast_i = s_beat_ == a.b.len;
    } else {
      const std::vector<std::uint8_t> d = dp::random_bytes(rng_, RD_MUX_DW);
      dp::set_bytes(m.m_rdata_i, d.data(), kBytes);
      m.m_rresp_i = static_cast<CData>(rng_() & 3U);
      m.m_rlast_i = static_cast<CData>(rng_() & 1U);
    }
  }

  void check() {
    auto& m = sim_.model();
    const std::uint64_t cyc = sim_.cycle();
    SCOPED_TRACE(::testing::Message() << "cycle " << cyc);
    EXPECT_EQ(m.error_o != 0, error_expected_) << "[error] error_o in legal traffic";

    // ---- m AR: held until ARREADY; the next AR of the master named in its address.
    const bool arv = m.m_arvalid_o != 0;
    const std::uint64_t addr = m.m_araddr_o;
    const unsigned len = m.m_arlen_o;
    if (prev_arvalid_ && !prev_arready_) {
      EXPECT_TRUE(arv) << "[hold] m_arvalid dropped before ARREADY";
      EXPECT_EQ(addr, prev_araddr_) << "[hold] m_araddr changed before ARREADY";
      EXPECT_EQ(len, prev_arlen_) << "[hold] m_arlen changed before ARREADY";
    }
    const unsigned who = static_cast<unsigned>(addr >> 63);
    if (arv) {
      const Master& g = m_[who];
      if (g.at_m.empty()) {
        ADD_FAILURE() << "[ar] m AR 0x" << std::hex << addr << std::dec << " that s" << who << " did not issue";
      } else {
        EXPECT_EQ(addr, g.at_m.front().addr) << "[ar] m AR out of s" << who << "'s order or corrupted";
        EXPECT_EQ(len, g.at_m.front().len) << "[ar] m_arlen of s" << who << "'s AR";
      }
    }
    // The route FIFO: the register's AR and the slave's unfinished bursts, at most Depth.
    const std::uint64_t loaded = accepted_ - completed_ + (arv ? 1 : 0);
    EXPECT_LE(loaded, kDepth) << "[depth] more than Depth bursts loaded";
    const bool m_rready = m.m_rready_o != 0;
    if (m_rready) {
      EXPECT_GT(loaded, 0U) << "[error] m_rready with no burst loaded";
    }

    // ---- the masters' R (the beats taken at m in earlier cycles).
    for (unsigned i = 0; i < 2; ++i) check_master_r(i);

    // ---- m R
    if (rvalid_ && m_rready) {
      Answer& a = sq_.front();
      ++m_[a.master].in_mux;
      if (st_.r_beats == 0) st_.first_r = cyc;
      st_.last_r = cyc;
      ++st_.r_beats;
      if (s_beat_ == a.b.len) {
        sq_.pop_front();
        s_beat_ = 0;
        ++completed_;
      } else {
        ++s_beat_;
      }
      rvalid_ = false;
    }
    for (unsigned i = 0; i < 2; ++i) {
      EXPECT_LE(m_[i].in_mux, 2U) << "[r] more than two beats for s" << i << " between m and it";
    }

    // ---- m AR handshake: the slave takes the burst.
    if (arv && arready_) {
      Master& g = m_[who];
      if (!g.at_m.empty()) {
        sq_.push_back({g.at_m.front(), who, cyc + 1 + rng_() % (sk.max_lat + 1)});
        g.at_m.pop_front();
      }
      if (accepted_ > 0 && who != last_who_) ++st_.alternations;
      if (strict_rr && accepted_ > 0 && who == last_who_ && st_.grants[1 - who] < m_[1 - who].bursts.size()) {
        ++st_.rr_violations;
        ADD_FAILURE() << "[rr] s" << who << " got two ARs in a row while s" << 1 - who << " was asking";
      }
      if (accepted_ == 0) st_.first_ar = cyc;
      st_.last_ar = cyc;
      last_who_ = who;
      ++st_.grants[who];
      ++accepted_;
    }
    EXPECT_LE(outstanding(), kDepth) << "[depth] more than Depth bursts outstanding at the slave";
    st_.max_outstanding = std::max<std::size_t>(st_.max_outstanding, outstanding());

    // ---- the masters' AR handshakes
    for (unsigned i = 0; i < 2; ++i) {
      Master& g = m_[i];
      if (g.arvalid && *port_[i].arready != 0) {
        const Burst& b = g.bursts[g.ar_idx++];
        g.at_m.push_back(b);
        g.r_exp.push_back(b);
        g.arvalid = false;
        ++st_.issued[i];
      }
    }

    prev_arvalid_ = arv;
    prev_arready_ = arready_;
    prev_araddr_ = addr;
    prev_arlen_ = len;
  }

  void check_master_r(unsigned i) {
    Master& g = m_[i];
    const Port& p = port_[i];
    const bool v = *p.rvalid != 0;
    const std::vector<std::uint8_t> data = dp::get_bytes(*p.rdata, kBytes);
    const unsigned resp = *p.rresp;
    const unsigned last = *p.rlast;
    if (g.prev_rvalid && !g.prev_rready) {
      EXPECT_TRUE(v) << "[hold] s" << i << " RVALID dropped before RREADY";
      EXPECT_EQ(data, g.prev_rdata) << "[hold] s" << i << " RDATA changed before RREADY";
      EXPECT_EQ(resp, g.prev_rresp) << "[hold] s" << i << " RRESP changed before RREADY";
      EXPECT_EQ(last, g.prev_rlast) << "[hold] s" << i << " RLAST changed before RREADY";
    }
    if (v) {
      EXPECT_GT(g.in_mux, 0U) << "[r] s" << i << " RVALID with none of its beats in the mux";
    }
    if (v && g.rready) {
      if (g.r_exp.empty()) {
        ADD_FAILURE() << "[r] s" << i << " got a beat with no burst of its own outstanding";
      } else {
        const Burst& b = g.r_exp.front();
        EXPECT_EQ(data, beat_data(b.addr, g.r_beat))
            << "[r] s" << i << " burst 0x" << std::hex << b.addr << std::dec << " beat " << g.r_beat
            << ": wrong data (another burst's beat, or a beat lost or doubled)";
        EXPECT_EQ(resp, beat_resp(b.addr, g.r_beat)) << "[r] s" << i << " RRESP of beat " << g.r_beat;
        EXPECT_EQ(last != 0, g.r_beat == b.len) << "[r] s" << i << " RLAST on beat " << g.r_beat << " of " << b.len + 1;
        if (resp != 0) ++st_.err_beats;
        if (g.r_beat == b.len) {
          g.r_exp.pop_front();
          g.r_beat = 0;
        } else {
          ++g.r_beat;
        }
      }
      if (g.in_mux > 0) --g.in_mux;
      ++st_.delivered[i];
    }
    g.prev_rvalid = v;
    g.prev_rready = g.rready;
    g.prev_rdata = data;
    g.prev_rresp = resp;
    g.prev_rlast = last;
  }

  std::mt19937_64 rng_;
  dp::Sim<Vrnic_axi_rd_mux> sim_;
  std::array<Port, 2> port_{};
  std::array<Master, 2> m_;
  Stats st_;
  bool arready_ = false;
  bool rvalid_ = false;    // the slave offers beat s_beat_ of sq_.front()
  std::deque<Answer> sq_;  // bursts the slave took and has not finished
  unsigned s_beat_ = 0;
  std::uint64_t accepted_ = 0, completed_ = 0;  // bursts the slave took; finished (RLAST taken)
  unsigned last_who_ = 0;
  bool error_expected_ = false;
  bool prev_arvalid_ = false, prev_arready_ = false;
  std::uint64_t prev_araddr_ = 0;
  unsigned prev_arlen_ = 0;
};

// ---- scenarios (the tests below; the broken-model tests run some of them on a model with a bug) ---

// Random masters and slave in four phases, three rounds: both slow; s1 slow to take R; a slow slave with
// long latency; s0 not taking R for 500 cycles (R is in order: s1 waits behind s0's burst).
[[maybe_unused]] void scenario_random(RdMuxBench& tb) {
  for (int round = 0; round < 3; ++round) {
    tb.rready_block = nullptr;
    tb.add_bursts(0, 250, 63);
    tb.add_bursts(1, 250, 63);
    tb.mk[0] = {0.5, 0.7};
    tb.mk[1] = {0.3, 0.5};
    tb.sk = {0.6, 0.7, 20};
    tb.finish();
    if (failed()) return;
    tb.add_bursts(0, 250, 15);
    tb.add_bursts(1, 250, 15);
    tb.mk[0] = {0.9, 0.9};
    tb.mk[1] = {0.9, 0.2};
    tb.sk = {0.9, 0.4, 4};
    tb.finish();
    if (failed()) return;
    tb.add_bursts(0, 200, 63);
    tb.add_bursts(1, 200, 63);
    tb.mk[0] = {1.0, 0.3};
    tb.mk[1] = {0.6, 0.95};
    tb.sk = {0.3, 0.95, 40};
    tb.finish();
    if (failed()) return;
    tb.add_bursts(0, 200, 15);
    tb.add_bursts(1, 200, 15);
    tb.mk[0] = {0.8, 1.0};
    tb.mk[1] = {0.8, 1.0};
    tb.sk = {1.0, 1.0, 0};
    const std::uint64_t c0 = tb.cycle();
    tb.rready_block = [c0](unsigned i, std::uint64_t c) { return i == 0 && c >= c0 + 100 && c < c0 + 600; };
    tb.finish();
    if (failed()) return;
  }
  const Stats& s = tb.stats();
  EXPECT_EQ(s.grants[0], 2700U);
  EXPECT_EQ(s.grants[1], 2700U);
  EXPECT_GT(s.err_beats, 0U) << "no error response was delivered";
  EXPECT_LT(s.err_beats, s.delivered[0] + s.delivered[1]);
  EXPECT_GE(s.max_outstanding, std::min<std::size_t>(kDepth, 4U));
  std::cout << "random: " << s.delivered[0] << " + " << s.delivered[1] << " beats (" << s.err_beats << " not OKAY) in "
            << tb.cycle() << " cycles, up to " << s.max_outstanding << " of " << kDepth << " bursts outstanding"
            << std::endl;
}

// Both masters always asking: the m ARs alternate from first to last, also while the slave's
// ARREADY is random and the Depth limit stalls the ARs.
[[maybe_unused]] void scenario_round_robin(RdMuxBench& tb) {
  constexpr std::size_t n = 200;
  tb.add_bursts(0, n, 7);
  tb.add_bursts(1, n, 7);
  tb.mk[0] = {1.0, 0.8};
  tb.mk[1] = {1.0, 0.8};
  tb.sk = {0.5, 0.8, 6};
  tb.strict_rr = true;
  tb.finish();
  EXPECT_EQ(tb.stats().rr_violations, 0U) << "[rr]";
  EXPECT_EQ(tb.stats().alternations, 2 * n - 1) << "[rr] the m ARs did not alternate";
}

// The slave takes every AR but sends no R for 400 cycles: ARs are taken until exactly Depth bursts are
// outstanding, then the AR register stays empty and each master has one AR waiting in its skid buffer.
[[maybe_unused]] void scenario_depth_limit(RdMuxBench& tb) {
  const std::size_t n = kDepth + 40;
  tb.add_bursts(0, n, 3);
  tb.add_bursts(1, n, 3);
  tb.r_block = [](std::uint64_t c) { return c >= 50 && c < 450; };
  ASSERT_TRUE(tb.run_until([&] { return tb.cycle() >= 440; }, 1000));
  EXPECT_EQ(tb.outstanding(), kDepth) << "[depth] bursts outstanding with R stalled";
  EXPECT_FALSE(tb.m_arvalid()) << "[depth] an AR loaded with Depth bursts outstanding";
  EXPECT_EQ(tb.issued() - tb.accepted(), 2U) << "one AR per master waiting in its skid buffer";
  tb.finish();
  EXPECT_EQ(tb.stats().max_outstanding, kDepth) << "[depth]";
}

// ARREADY low for 900 cycles: m_arvalid and its payload hold (checked every cycle), three ARs wait
// (the AR register and one per skid buffer), the R of the bursts taken before still flows.
[[maybe_unused]] void scenario_arready_low(RdMuxBench& tb) {
  tb.add_bursts(0, 150, 15);
  tb.add_bursts(1, 150, 15);
  tb.mk[0] = {1.0, 0.9};
  tb.mk[1] = {1.0, 0.9};
  tb.ar_block = [](std::uint64_t c) { return c >= 100 && c < 1000; };
  ASSERT_TRUE(tb.run_until([&] { return tb.cycle() >= 990; }, 1000));
  EXPECT_EQ(tb.outstanding(), 0U) << "R of the bursts taken before the stall";
  EXPECT_TRUE(tb.m_arvalid());
  EXPECT_EQ(tb.issued() - tb.accepted(), 3U) << "ARs waiting: the register and one per skid buffer";
  tb.finish();
}

// One master idle: the other gets every AR. Single-beat bursts, all ready: one AR every other cycle (the
// AR register loads only when empty); returns its ARs per cycle.
[[maybe_unused]] double scenario_one_master(RdMuxBench& tb, unsigned active) {
  tb.add_bursts(active, 200, 0, 0);
  tb.mk[active] = {1.0, 1.0};
  tb.finish();
  const Stats& s = tb.stats();
  EXPECT_EQ(s.grants[active], 200U);
  EXPECT_EQ(s.grants[1 - active], 0U);
  return 199.0 / static_cast<double>(s.last_ar - s.first_ar);
}

// Both masters streaming, slave and masters always ready: R beats per cycle at m from the first beat to
// the last.
[[maybe_unused]] double scenario_throughput(RdMuxBench& tb, int fixed_len) {
  tb.add_bursts(0, 200, 15, fixed_len);
  tb.add_bursts(1, 200, 15, fixed_len);
  tb.finish();
  const Stats& s = tb.stats();
  return static_cast<double>(s.r_beats) / static_cast<double>(s.last_r - s.first_r + 1);
}

#if RD_MUX_BUG == 0

TEST(AxiRdMux, RandomBothMasters) {
  RdMuxBench tb(rnic::tb::random_test_seed());
  scenario_random(tb);
}

TEST(AxiRdMux, RoundRobinBothAsking) {
  RdMuxBench tb(rnic::tb::random_test_seed());
  scenario_round_robin(tb);
}

TEST(AxiRdMux, OneMasterIdleOtherGetsEveryAr) {
  for (unsigned active : {0U, 1U}) {
    SCOPED_TRACE(::testing::Message() << "s" << active << " alone");
    RdMuxBench tb(rnic::tb::random_test_seed());
    const double rate = scenario_one_master(tb, active);
    std::cout << "s" << active << " alone: " << std::fixed << std::setprecision(3) << rate << " ARs per cycle"
              << std::endl;
    EXPECT_GT(rate, 0.4);
  }
}

TEST(AxiRdMux, DepthLimitWithRStalled) {
  RdMuxBench tb(rnic::tb::random_test_seed());
  scenario_depth_limit(tb);
}

TEST(AxiRdMux, ArreadyLowForLong) {
  RdMuxBench tb(rnic::tb::random_test_seed());
  scenario_arready_low(tb);
}

// A slave answering what it was never asked: right after reset, and again after traffic; the traffic in
// between (error_o up all along) is routed as ever.
TEST(AxiRdMux, StrayBeatNotTakenRaisesError) {
  RdMuxBench tb(rnic::tb::random_test_seed());
  tb.stray_beats(3);
  if (failed()) return;
  tb.add_bursts(0, 50, 15);
  tb.add_bursts(1, 50, 15);
  tb.mk[0] = {0.7, 0.7};
  tb.mk[1] = {0.7, 0.7};
  tb.sk = {0.7, 0.7, 5};
  tb.finish();
  if (failed()) return;
  tb.stray_beats(1);
}

TEST(AxiRdMux, Throughput) {
  for (int fixed : {15, -1, 0}) {  // 16-beat bursts; random lengths (mostly short); single beats
    SCOPED_TRACE(::testing::Message() << "arlen " << fixed);
    RdMuxBench tb(rnic::tb::random_test_seed());
    const double rate = scenario_throughput(tb, fixed);
    std::cout << "arlen " << (fixed < 0 ? std::string("random") : std::to_string(fixed)) << ": " << std::fixed
              << std::setprecision(3) << rate << " R beats per cycle" << std::endl;
    // One AR per two cycles at most: single-beat bursts cannot go faster than 0.5.
    EXPECT_GT(rate, fixed == 15 ? 0.9 : 0.4);
    EXPECT_LE(rate, 1.0);
  }
}

#else

// The failures a scenario reports on the broken model (caught here, so the test passes when it fails).
std::vector<std::string> failures_of(const std::function<void(RdMuxBench&)>& scenario) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    g_captured = &results;
    RdMuxBench tb(rnic::tb::random_test_seed());
    scenario(tb);
    g_captured = nullptr;
  }
  std::vector<std::string> msgs;
  for (int i = 0; i < results.size(); ++i) msgs.emplace_back(results.GetTestPartResult(i).message());
  return msgs;
}

// The planted bug is caught by a check tagged with one of `tags`.
void expect_caught(const std::function<void(RdMuxBench&)>& scenario, const std::vector<std::string>& tags) {
  const std::vector<std::string> msgs = failures_of(scenario);
  ASSERT_FALSE(msgs.empty()) << "the planted bug went unnoticed";
  const bool tagged = std::any_of(msgs.begin(), msgs.end(), [&](const std::string& m) {
    return std::any_of(tags.begin(), tags.end(), [&](const std::string& t) { return m.find(t) != std::string::npos; });
  });
  EXPECT_TRUE(tagged) << "not caught by the expected check; the first failure: " << msgs.front();
  std::cout << "caught (" << msgs.size() << " failures), the first: " << msgs.front().substr(0, 300) << std::endl;
}

#if RD_MUX_BUG == 1
// The route FIFO records the other master as the issuer: R beats go to the wrong master.
TEST(AxiRdMuxBroken, RouteInvertedIsCaught) { expect_caught(scenario_random, {"[r]"}); }
#elif RD_MUX_BUG == 2
// m_rready follows the other master's slice: a beat is taken while its master's slice is full (lost).
TEST(AxiRdMuxBroken, RreadyOfTheOtherMasterIsCaught) { expect_caught(scenario_random, {"[r]"}); }
#elif RD_MUX_BUG == 3
// The arbiter ignores last_q (s0 always first): no round robin.
TEST(AxiRdMuxBroken, FixedPriorityIsCaught) { expect_caught(scenario_round_robin, {"[rr]"}); }
#elif RD_MUX_BUG == 4
// The route FIFO pops on every beat instead of RLAST: the next beats go to the next burst's master, and
// bursts are loaded beyond Depth, beats come with the route FIFO empty (error_o).
TEST(AxiRdMuxBroken, PopWithoutRlastIsCaught) { expect_caught(scenario_random, {"[r]", "[depth]", "[error]"}); }
#endif

#endif

}  // namespace
