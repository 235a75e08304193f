// SPDX-License-Identifier: Apache-2.0
// AXI4 slave on rnic_kernel's m_axi_gmem: a flat host memory (byte addresses from 0) filled with a
// known pattern, with seeded random ready/latency, checks of the AXI rules the architecture promises
// (docs/rtl-architecture.md "AXI") and a record of every byte the kernel wrote.
//
// W and AW are independent (AXI A3.3.1): W beats may come before their AW handshake, but never
// before the burst's AWVALID (the kernel's write mux promises that much: W runs ahead of AW by at
// most the burst whose AW is presented). B comes after both the AW and the last W beat. Options: an
// AWREADY that waits until WVALID of that burst has been seen (legal slave behaviour that deadlocks
// a master whose W waits for AWREADY), and SLVERR for writes to / reads from an address range (an
// erroring write is not performed).
//
// A write becomes visible at a random cycle between its last W beat and its B response (a posted write
// may land early, and is only guaranteed to have landed once acknowledged; overlapping writes land in
// order), or at the W beat when commit_on_b is off. So a completion entry issued before the data it
// reports is acknowledged can become visible first, which the scoreboard detects.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rnic/bus/axi_ports.hpp"
#include "rnic/tb/sim.hpp"

namespace rnic::tb {

// The byte every untouched host-memory address holds.
inline std::uint8_t pattern_byte(std::uint64_t addr) {
  return static_cast<std::uint8_t>((addr * 0x9Du) ^ (addr >> 8) ^ (addr >> 16) ^ 0xA5u);
}

struct HostMemConfig {
  std::size_t size = std::size_t{8} << 20;
  double aw_ready = 1.0;       // probability AWREADY is high in a cycle
  double w_ready = 1.0;        // WREADY
  double ar_ready = 1.0;       // ARREADY
  double r_valid = 1.0;        // an R beat is offered in a cycle (once its latency has passed)
  unsigned b_latency_min = 2;  // cycles from the last W beat to BVALID
  unsigned b_latency_max = 2;
  unsigned r_latency_min = 8;  // cycles from AR to the first R beat
  unsigned r_latency_max = 8;
  bool commit_on_b = true;
  bool log_w = false;       // keep a log of every W beat (benchmarks)
  bool aw_waits_w = false;  // AWREADY only once WVALID of that burst has been seen
  // Bursts touching [lo, hi) get SLVERR (empty when lo >= hi): BRESP (the data is dropped), RRESP
  // on every beat (RDATA still from memory).
  std::uint64_t write_err_lo = 0, write_err_hi = 0;
  std::uint64_t read_err_lo = 0, read_err_hi = 0;
  std::uint64_t seed = 1;

  // Random ready/latency on every channel.
  static HostMemConfig random(std::uint64_t seed) {
    HostMemConfig c;
    c.aw_ready = 0.6;
    c.w_ready = 0.7;
    c.ar_ready = 0.5;
    c.r_valid = 0.7;
    c.b_latency_min = 1;
    c.b_latency_max = 40;
    c.r_latency_min = 2;
    c.r_latency_max = 60;
    c.seed = seed;
    return c;
  }
};

struct WBeatLog {
  std::uint64_t cycle;
  std::uint64_t addr;  // address of the beat (bus-aligned)
  unsigned strobes;    // bytes written
};

// Which AXI4 master of the top the memory serves (rnic/bus/axi_ports.hpp).
using bus::GmemPorts;
using bus::NetPorts;

template <class Top, class P = GmemPorts>
class AxiHostMemory : public Component<Top> {
 public:
  AxiHostMemory(Sim<Top>& sim, unsigned bus_bytes, const HostMemConfig& cfg, std::string name = "m_axi_gmem")
      : name_(std::move(name)),
        sim_(sim),
        bytes_(bus_bytes),
        cfg_(cfg),
        rng_(cfg.seed),
        mem_(cfg.size),
        kernel_written_(cfg.size, 0) {
    for (std::size_t a = 0; a < mem_.size(); ++a) mem_[a] = pattern_byte(a);
    unsigned l = 0;
    while ((1u << l) < bytes_) ++l;
    log2_bytes_ = l;
    sim.add(this);
  }

  // ---- the host's side --------------------------------------------------------------------------
  std::uint8_t* data() { return mem_.data(); }
  const std::uint8_t* data() const { return mem_.data(); }
  std::size_t size() const { return mem_.size(); }
  void host_write(std::uint64_t addr, const std::uint8_t* p, std::size_t n) {
    check_range(addr, n, "host write");
    std::copy(p, p + n, mem_.begin() + static_cast<std::ptrdiff_t>(addr));
  }
  // 1 where the kernel wrote the byte (strobe set), whatever it wrote.
  const std::vector<std::uint8_t>& kernel_written() const { return kernel_written_; }
  const std::vector<WBeatLog>& w_log() const { return w_log_; }
  void clear_w_log() { w_log_.clear(); }
  // Called for every kernel write as it lands in memory (the bytes of a burst whose strobes were
  // set, before they change memory), with the cycle. Checks against who owns memory go here: the
  // time a write lands is the time it is checked.
  using LandHook =
      std::function<void(const std::vector<std::pair<std::uint64_t, std::uint8_t>>& bytes, std::uint64_t cycle)>;
  void set_land_hook(LandHook h) { land_hook_ = std::move(h); }

  // ---- statistics -------------------------------------------------------------------------------
  std::uint64_t aw_count() const { return aw_count_; }
  std::uint64_t b_count() const { return b_count_; }
  std::uint64_t ar_count() const { return ar_count_; }
  std::uint64_t w_beats() const { return w_beats_; }
  std::uint64_t b_errors() const { return b_errors_; }            // B responses SLVERR
  std::uint64_t r_error_beats() const { return r_error_beats_; }  // R beats SLVERR
  std::uint64_t w_before_aw() const { return w_before_aw_; }      // bursts whose W began before their AW
  // Nothing accepted and not yet answered.
  bool idle() const { return bursts_.empty() && b_q_.empty() && reads_.empty(); }
  std::uint64_t last_activity() const { return last_activity_; }

  // ---- AXI ---------------------------------------------------------------------------------------
  void drive(Top& t, std::uint64_t cycle) override {
    awready_ = chance(cfg_.aw_ready) && (!cfg_.aw_waits_w || w_seen_ > aw_count_);
    wready_ = chance(cfg_.w_ready);
    arready_ = chance(cfg_.ar_ready);
    P::awready(t) = awready_;
    P::wready(t) = wready_;
    P::arready(t) = arready_;
    // B: held until accepted.
    bvalid_ = !b_q_.empty() && b_q_.front().ready_cycle <= cycle;
    P::bvalid(t) = bvalid_;
    P::bresp(t) = bvalid_ ? b_q_.front().resp : 0;
    // R: once offered, held until accepted.
    if (!rvalid_ && !reads_.empty() && reads_.front().ready_cycle <= cycle && chance(cfg_.r_valid)) {
      rvalid_ = true;
    }
    P::rvalid(t) = rvalid_;
    P::rresp(t) = rvalid_ ? reads_.front().resp : 0;
    if (rvalid_) {
      const Read& r = reads_.front();
      const std::uint64_t a = r.addr + std::uint64_t{r.beat} * bytes_;
      for (unsigned i = 0; i < bytes_; ++i) {
        set_byte(P::rdata(t), i, a + i < mem_.size() ? mem_[a + i] : 0);
      }
      P::rlast(t) = r.beat == r.len;
    } else {
      clear_all(P::rdata(t));
      P::rlast(t) = 0;
    }
  }

  void sample(const Top& t, std::uint64_t cycle) override {
    sample_aw(t, cycle);
    sample_w(t, cycle);
    if (cfg_.commit_on_b) commit_due(cycle);
    if (bvalid_ && P::bready(t)) {
      Pending& p = b_q_.front();
      if (cfg_.commit_on_b && !p.committed) commit(p, cycle);
      if (p.resp != 0) ++b_errors_;
      b_q_.pop_front();
      ++b_count_;
      last_activity_ = cycle;
    }
    sample_ar(t, cycle);
    if (rvalid_ && P::rready(t)) {
      Read& r = reads_.front();
      if (r.resp != 0) ++r_error_beats_;
      rvalid_ = false;
      last_activity_ = cycle;
      if (r.beat == r.len) {
        reads_.pop_front();
      } else {
        ++r.beat;
      }
    }
  }

 private:
  struct Burst {
    std::uint64_t addr;
    unsigned len;  // AWLEN: beats - 1
    unsigned beat;
    bool aw_done;  // AW handshake seen (else its W began while the AW was presented)
    bool w_done;   // last W beat seen
    std::vector<std::pair<std::uint64_t, std::uint8_t>> writes;
  };
  struct Pending {
    std::uint64_t ready_cycle;   // BVALID from this cycle
    std::uint64_t commit_cycle;  // lands in memory from this cycle (<= ready_cycle)
    std::uint64_t lo, hi;        // byte range of the burst
    bool committed;
    std::vector<std::pair<std::uint64_t, std::uint8_t>> writes;
    std::uint8_t resp;  // BRESP
  };
  void commit(Pending& p, std::uint64_t cycle) {
    if (land_hook_ && !p.writes.empty()) land_hook_(p.writes, cycle);
    for (const auto& w : p.writes) mem_[w.first] = w.second;
    p.committed = true;
  }
  // Early landing: any acknowledged-later write whose time has come and that overlaps no earlier
  // write still in flight.
  void commit_due(std::uint64_t cycle) {
    for (std::size_t i = 0; i < b_q_.size(); ++i) {
      Pending& p = b_q_[i];
      if (p.committed || p.commit_cycle > cycle) continue;
      bool blocked = false;
      for (std::size_t j = 0; j < i && !blocked; ++j) {
        blocked = !b_q_[j].committed && b_q_[j].lo < p.hi && p.lo < b_q_[j].hi;
      }
      if (!blocked) commit(p, cycle);
    }
  }
  struct Read {
    std::uint64_t addr;
    unsigned len;
    unsigned beat;
    std::uint64_t ready_cycle;
    std::uint8_t resp;  // RRESP of every beat
  };
  static constexpr std::uint8_t kSlvErr = 2;
  // [addr, addr + n) touches [lo, hi).
  static bool touches(std::uint64_t addr, std::uint64_t n, std::uint64_t lo, std::uint64_t hi) {
    return lo < hi && addr < hi && lo < addr + n;
  }

  void error(std::uint64_t cycle, const std::string& s) { sim_.errors().add(cycle, name_ + ": " + s); }

  void check_burst(std::uint64_t cycle, const char* ch, std::uint64_t addr, unsigned len, unsigned size,
                   unsigned burst) {
    const std::uint64_t n = std::uint64_t{len + 1} * bytes_;
    if (size != log2_bytes_) error(cycle, std::string(ch) + "SIZE " + std::to_string(size));
    if (burst != 1) error(cycle, std::string(ch) + "BURST " + std::to_string(burst) + " (INCR expected)");
    if (addr % bytes_ != 0) error(cycle, std::string(ch) + "ADDR 0x" + hex(addr) + " not bus-aligned");
    if ((addr & 0xFFF) + n > 0x1000) {
      error(cycle, std::string(ch) + " burst 0x" + hex(addr) + " + " + std::to_string(len + 1) +
                       " beats crosses a 4 KiB boundary");
    }
    if (addr >= mem_.size() || mem_.size() - addr < n) {
      error(cycle, std::string(ch) + " burst 0x" + hex(addr) + " outside host memory");
    }
  }

  void sample_aw(const Top& t, std::uint64_t cycle) {
    const bool v = P::awvalid(t);
    const std::uint64_t addr = P::awaddr(t);
    const unsigned len = P::awlen(t);
    if (aw_held_ && (!v || addr != aw_prev_addr_ || len != aw_prev_len_)) {
      error(cycle, "AWVALID dropped or AW changed before AWREADY");
    }
    aw_held_ = v && !awready_;
    aw_prev_addr_ = addr;
    aw_prev_len_ = len;
    if (!(v && awready_)) return;
    check_burst(cycle, "AW", addr, len, P::awsize(t), P::awburst(t));
    ++aw_count_;
    last_activity_ = cycle;
    // The burst whose W went ahead, if any, else a new one.
    auto it = std::find_if(bursts_.begin(), bursts_.end(), [](const Burst& b) { return !b.aw_done; });
    if (it != bursts_.end()) {
      if (it->addr != addr || it->len != len) error(cycle, "AW differs from the AW its W beats went with");
      it->aw_done = true;
      retire(cycle);
    } else {
      bursts_.push_back(Burst{addr, len, 0, true, false, {}});
    }
  }

  // Bursts with both AW and last W done, in order, wait for their B.
  void retire(std::uint64_t cycle) {
    while (!bursts_.empty() && bursts_.front().aw_done && bursts_.front().w_done) {
      Burst& b = bursts_.front();
      const unsigned lat = pick(cfg_.b_latency_min, cfg_.b_latency_max);
      const std::uint64_t lo = b.addr, hi = b.addr + std::uint64_t{b.len + 1} * bytes_;
      const bool err = touches(lo, hi - lo, cfg_.write_err_lo, cfg_.write_err_hi);
      if (err) b.writes.clear();  // the slave did not write
      b_q_.push_back(Pending{cycle + 1 + lat, cycle + 1 + pick(0, lat), lo, hi, false, std::move(b.writes),
                             static_cast<std::uint8_t>(err ? kSlvErr : 0)});
      bursts_.pop_front();
    }
  }

  void sample_w(const Top& t, std::uint64_t cycle) {
    const bool v = P::wvalid(t);
    if (w_held_) {
      bool same = v && P::wlast(t) == w_prev_last_;
      for (unsigned i = 0; same && i < bytes_; ++i) {
        same = get_bit(P::wstrb(t), i) == w_prev_strb_[i] &&
               (!w_prev_strb_[i] || get_byte(P::wdata(t), i) == w_prev_data_[i]);
      }
      if (!same) error(cycle, "WVALID dropped or W changed before WREADY");
    }
    w_held_ = v && !wready_;
    if (w_held_) {
      w_prev_last_ = P::wlast(t);
      w_prev_strb_.resize(bytes_);
      w_prev_data_.resize(bytes_);
      for (unsigned i = 0; i < bytes_; ++i) {
        w_prev_strb_[i] = get_bit(P::wstrb(t), i);
        w_prev_data_[i] = get_byte(P::wdata(t), i);
      }
    }
    if (v) w_seen_ = std::max(w_seen_, w_bursts_ + 1);
    if (!(v && wready_)) return;
    ++w_beats_;
    last_activity_ = cycle;
    auto it = std::find_if(bursts_.begin(), bursts_.end(), [](const Burst& x) { return !x.w_done; });
    if (it == bursts_.end()) {
      // W ahead of its AW handshake: allowed for the burst whose AW is presented now (and not
      // accepted in this cycle: that one is in bursts_ already), if no other W went ahead.
      const bool presented = P::awvalid(t) && !awready_;
      const bool other_ahead = std::any_of(bursts_.begin(), bursts_.end(), [](const Burst& x) { return !x.aw_done; });
      if (!presented || other_ahead) {
        error(cycle, "W beat without an outstanding AW");
        return;
      }
      bursts_.push_back(Burst{P::awaddr(t), P::awlen(t), 0, false, false, {}});
      ++w_before_aw_;
      it = std::prev(bursts_.end());
    }
    Burst& b = *it;
    const std::uint64_t base = b.addr + std::uint64_t{b.beat} * bytes_;
    const bool last = b.beat == b.len;
    if (static_cast<bool>(P::wlast(t)) != last) {
      error(cycle, "WLAST " + std::to_string(P::wlast(t)) + " on beat " + std::to_string(b.beat) + " of a " +
                       std::to_string(b.len + 1) + "-beat burst at 0x" + hex(b.addr));
    }
    unsigned strobes = 0;
    for (unsigned i = 0; i < bytes_; ++i) {
      if (!get_bit(P::wstrb(t), i)) continue;
      ++strobes;
      const std::uint64_t a = base + i;
      if (a >= mem_.size()) continue;  // reported at AW
      const std::uint8_t d = get_byte(P::wdata(t), i);
      kernel_written_[a] = 1;
      if (cfg_.commit_on_b) {
        b.writes.emplace_back(a, d);  // dropped at retire() if the burst gets SLVERR
      } else if (!touches(b.addr, std::uint64_t{b.len + 1} * bytes_, cfg_.write_err_lo, cfg_.write_err_hi)) {
        if (land_hook_) land_hook_({{a, d}}, cycle);
        mem_[a] = d;
      }
    }
    if (cfg_.log_w) w_log_.push_back(WBeatLog{cycle, base, strobes});
    if (last) {
      b.w_done = true;
      ++w_bursts_;
      retire(cycle);
    } else {
      ++b.beat;
    }
  }

  void sample_ar(const Top& t, std::uint64_t cycle) {
    const bool v = P::arvalid(t);
    const std::uint64_t addr = P::araddr(t);
    const unsigned len = P::arlen(t);
    if (ar_held_ && (!v || addr != ar_prev_addr_ || len != ar_prev_len_)) {
      error(cycle, "ARVALID dropped or AR changed before ARREADY");
    }
    ar_held_ = v && !arready_;
    ar_prev_addr_ = addr;
    ar_prev_len_ = len;
    if (!(v && arready_)) return;
    check_burst(cycle, "AR", addr, len, P::arsize(t), P::arburst(t));
    const unsigned lat = pick(cfg_.r_latency_min, cfg_.r_latency_max);
    const bool err = touches(addr, std::uint64_t{len + 1} * bytes_, cfg_.read_err_lo, cfg_.read_err_hi);
    reads_.push_back(Read{addr, len, 0, cycle + 1 + lat, static_cast<std::uint8_t>(err ? kSlvErr : 0)});
    ++ar_count_;
    last_activity_ = cycle;
  }

  void check_range(std::uint64_t addr, std::size_t n, const char* what) const {
    if (addr > mem_.size() || mem_.size() - addr < n) {
      throw std::out_of_range(std::string(what) + " at 0x" + hex(addr) + " outside host memory");
    }
  }
  bool chance(double p) {
    if (p >= 1.0) return true;
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p;
  }
  unsigned pick(unsigned lo, unsigned hi) {
    if (hi <= lo) return lo;
    return std::uniform_int_distribution<unsigned>(lo, hi)(rng_);
  }
  static std::string hex(std::uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v));
    return b;
  }

  std::string name_;  // the master, in error messages
  Sim<Top>& sim_;
  unsigned bytes_;
  unsigned log2_bytes_ = 0;
  HostMemConfig cfg_;
  std::mt19937_64 rng_;
  std::vector<std::uint8_t> mem_;
  std::vector<std::uint8_t> kernel_written_;
  std::vector<WBeatLog> w_log_;
  LandHook land_hook_;
  std::deque<Burst> bursts_;
  std::deque<Pending> b_q_;
  std::deque<Read> reads_;
  bool awready_ = false, wready_ = false, arready_ = false, bvalid_ = false, rvalid_ = false;
  bool aw_held_ = false, w_held_ = false, ar_held_ = false;
  std::uint64_t aw_prev_addr_ = 0, ar_prev_addr_ = 0;
  unsigned aw_prev_len_ = 0, ar_prev_len_ = 0;
  bool w_prev_last_ = false;
  std::vector<bool> w_prev_strb_;
  std::vector<std::uint8_t> w_prev_data_;
  std::uint64_t aw_count_ = 0, b_count_ = 0, ar_count_ = 0, w_beats_ = 0, last_activity_ = 0;
  std::uint64_t w_bursts_ = 0;  // W bursts whose last beat was seen
  std::uint64_t w_seen_ = 0;    // W bursts whose WVALID was seen (aw_waits_w)
  std::uint64_t b_errors_ = 0, r_error_beats_ = 0, w_before_aw_ = 0;
};

}  // namespace rnic::tb
