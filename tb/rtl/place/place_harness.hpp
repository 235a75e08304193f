// SPDX-License-Identifier: Apache-2.0
// Testbench pieces for rnic_rx_place (rnic_verdict_t in, rnic_dlv_t out: rnic/tb/rtl_structs.hpp,
// from structs.def), the verdict and beat sources, an AXI write slave with host
// memory, deliver's expected-MSN read port (a per-queue table the bench owns), and the checks. One
// Verilated parameter set per executable (PLACE_DW = DataWidth).
#pragma once

#include <verilated.h>

#include "rnic/tb/rtl_structs.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/stage_sim.hpp"

#include "Vrnic_rx_place.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace place {

constexpr unsigned kDW = PLACE_DW;
constexpr unsigned kB = kDW / 8;  // bytes per beat

// Seg, Verdict, Dlv and their enums (expanded from structs.def), pack/unpack, put_bytes/take_bytes:
// rnic/tb/rtl_structs.hpp.
using namespace rnic::tb;
static_assert(sizeof(Vrnic_rx_place::vd_i) == 4 * ((kVerdictBits + 31) / 32), "rnic_verdict_t");
static_assert(sizeof(Vrnic_rx_place::dlv_o) == 4 * ((kDlvBits + 31) / 32), "rnic_dlv_t");

// The rnic_dlv_t place must emit for a verdict (none for DROP). A stale untagged PLACE (nothing
// written) emits the same PLACED entry.
inline std::optional<Dlv> expected_dlv(const Verdict& v) {
  Dlv d;
  const Seg& s = v.seg;
  if (v.action == kPlace || v.action == kError) {
    d.stream = s.stream;
    d.ssn = s.ssn;
    d.last = s.last;
    d.is_tagged = s.is_tagged;
    d.stag_qn = s.is_tagged ? s.stag : s.qn;
    d.msn = s.msn;
    d.rsvd_ulp = s.rsvd_ulp;
    d.hdr_raw = s.hdr_raw;
    if (v.action == kPlace) {
      d.kind = kPlaced;
      d.length = v.msg_len;
    } else {
      d.kind = kDlvError;
      d.length = s.seg_bytes;
      d.err_type = v.err_type;
      d.err_code = v.err_code;
    }
    return d;
  }
  if (v.action == kToken && (v.kind == kStreamReset || v.kind == kFence)) {
    d.kind = v.kind == kFence ? kDlvFence : kDlvReset;
    d.stream = v.arg;
    return d;
  }
  if (v.action == kToken && v.kind == kQueueSet) {  // the queue and its first MSN
    d.kind = kDlvQueueSet;
    d.stream = s.stream;
    d.stag_qn = s.qn;
    d.msn = s.msn;
    return d;
  }
  return std::nullopt;
}

// One verdict and, for SEG verdicts, the packet behind it (beats in the data FIFO).
struct Item {
  Verdict v;
  std::vector<std::uint8_t> pkt;
};

// Write beats of a PLACE and the header-only input beats before its first write beat.
inline unsigned write_beats(const Verdict& v) {
  if (v.action != kPlace || v.pay_bytes == 0) return 0;
  return static_cast<unsigned>((v.addr % kB + v.pay_bytes + kB - 1) / kB);
}
inline unsigned lead_beats(const Verdict& v) {
  const int s = int{v.hdr_bytes} - static_cast<int>(v.addr % kB);
  return s <= 0 ? 0U : static_cast<unsigned>((s + static_cast<int>(kB) - 1) / static_cast<int>(kB));
}

// Beats of each AW burst of a PLACE (the first up to the block end, then whole blocks).
inline std::vector<unsigned> bursts_of(const Verdict& v) {
  std::vector<unsigned> r;
  const unsigned nout = write_beats(v);
  if (nout == 0) return r;
  const unsigned lb = static_cast<unsigned>(__builtin_ctz(kB));
  const unsigned blk_beats = 1U << (std::min(lb + 8, 12U) - lb);
  const unsigned blk = static_cast<unsigned>((v.addr >> lb) & (blk_beats - 1));
  unsigned left = nout;
  unsigned n = std::min(left, blk_beats - blk);
  while (left != 0) {
    r.push_back(n);
    left -= n;
    n = std::min(left, blk_beats);
  }
  return r;
}

// Key of deliver's expected-MSN table: the read port's address (stream, qn[7:0]).
inline std::uint32_t exp_key(std::uint16_t stream, std::uint32_t qn) {
  return (std::uint32_t{stream} << 8) | (qn & 0xFFU);
}
// RFC 5041 4.3 (MSN wraps mod 2^32): an untagged PLACE is stale when its MSN is below the queue's
// expected MSN, i.e. (msn - expected) mod 2^32 >= 2^31.
inline bool msn_before(std::uint32_t msn, std::uint32_t expected) { return ((msn - expected) & 0x80000000U) != 0; }

// ---- item generator
// --------------------------------------------------------------------------------

class Gen {
 public:
  explicit Gen(std::uint64_t seed) : rng_(seed) {}
  std::mt19937_64& rng() { return rng_; }
  std::uint64_t r64() { return rng_(); }
  unsigned uni(unsigned lo, unsigned hi) {  // inclusive
    return static_cast<unsigned>(std::uniform_int_distribution<unsigned>(lo, hi)(rng_));
  }
  bool coin(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }

  Seg random_seg(unsigned seg_bytes, bool tagged) {
    Seg s;
    s.stream = static_cast<std::uint16_t>(r64());
    s.ssn = static_cast<std::uint16_t>(r64());
    s.seg_bytes = static_cast<std::uint16_t>(seg_bytes);
    s.is_tagged = tagged;
    s.last = coin(0.5);
    s.dv = 1;
    s.rsvd_ulp = r64() & 0xFFFFFFFFFFULL;
    s.stag = static_cast<std::uint32_t>(r64());
    s.to = r64();
    s.qn = static_cast<std::uint32_t>(r64());
    // Below 2^31: never stale against the bench's default expected MSN (0).
    s.msn = static_cast<std::uint32_t>(r64()) & 0x7FFFFFFFU;
    s.mo = static_cast<std::uint32_t>(r64());
    return s;
  }

  static void fill_hdr_raw(Item& it) {
    for (unsigned i = 0; i < 18; ++i) it.v.seg.hdr_raw[i] = i < it.pkt.size() ? it.pkt[i] : 0;
  }

  std::vector<std::uint8_t> random_bytes(std::size_t n) {
    std::vector<std::uint8_t> b(n);
    for (auto& x : b) x = static_cast<std::uint8_t>(r64());
    return b;
  }

  // PLACE of pay bytes at addr; hdr 14 = tagged, 18 = untagged (other values: header of that size).
  Item place(std::uint64_t addr, unsigned pay, unsigned hdr) {
    Item it;
    it.v.action = kPlace;
    it.v.kind = kSeg;
    it.v.arg = static_cast<std::uint16_t>(r64());
    it.v.seg = random_seg(hdr + pay, hdr == 14 || (hdr != 18 && coin(0.5)));
    it.v.addr = addr;
    it.v.pay_bytes = static_cast<std::uint16_t>(pay);
    it.v.hdr_bytes = static_cast<std::uint8_t>(hdr);
    it.v.msg_len = static_cast<std::uint32_t>(r64());
    it.v.err_type = static_cast<std::uint8_t>(r64() & 0xF);  // must be ignored
    it.v.err_code = static_cast<std::uint8_t>(r64());
    it.pkt = random_bytes(std::max(1U, hdr + pay));  // a packet has at least one byte
    fill_hdr_raw(it);
    return it;
  }
  Item discard(Action a, unsigned pkt_bytes) {
    Item it;
    it.v.action = a;
    it.v.kind = kSeg;
    it.v.seg = random_seg(static_cast<unsigned>(r64() & 0xFFFF), coin(0.5));
    it.v.addr = r64();
    it.v.pay_bytes = static_cast<std::uint16_t>(r64());
    it.v.hdr_bytes = static_cast<std::uint8_t>(r64() & 31);
    it.v.msg_len = static_cast<std::uint32_t>(r64());
    it.v.err_type = static_cast<std::uint8_t>(r64() & 0xF);
    it.v.err_code = static_cast<std::uint8_t>(r64());
    it.v.err_idx = static_cast<std::uint8_t>(r64() & 31);
    it.pkt = random_bytes(std::max(1U, pkt_bytes));
    fill_hdr_raw(it);
    return it;
  }
  Item token(ItemKind k, std::uint16_t arg) {
    Item it;
    it.v.action = kToken;
    it.v.kind = k;
    it.v.arg = arg;
    it.v.seg = random_seg(static_cast<unsigned>(r64() & 0xFFFF), coin(0.5));
    it.v.addr = r64();
    it.v.pay_bytes = static_cast<std::uint16_t>(r64());
    if (k == kQueueSet) {  // as lookup sends it: stream, QN and first MSN, the rest zero
      const Seg rnd = it.v.seg;
      it.v = Verdict{};
      it.v.action = kToken;
      it.v.kind = k;
      it.v.hdr_bytes = 0;
      it.v.seg.dv = 0;
      it.v.seg.stream = rnd.stream;
      it.v.seg.qn = rnd.qn;
      it.v.seg.msn = static_cast<std::uint32_t>(r64());
    }
    return it;
  }

 private:
  std::mt19937_64 rng_;
};

// Hands out non-overlapping destination ranges: the next address with addr % kB == off.
class Alloc {
 public:
  explicit Alloc(std::uint64_t base) : cur_(base) {}
  std::uint64_t next(unsigned off, unsigned pay, unsigned gap) {
    std::uint64_t a = (cur_ + gap + kB - 1) / kB * kB + off;
    cur_ = a + pay;
    return a;
  }
  // An address with a % 4096 == page_off (>= the cursor).
  std::uint64_t at_page_offset(unsigned page_off, unsigned pay) {
    std::uint64_t a = (cur_ + 4096) / 4096 * 4096 + page_off;
    cur_ = a + pay;
    return a;
  }
  std::uint64_t cursor() const { return cur_; }

 private:
  std::uint64_t cur_;
};

// ---- the bench
// -----------------------------------------------------------------------------------

struct Config {
  double p_vd = 1.0;    // verdict presented when one is waiting
  double p_beat = 1.0;  // beat presented when one is waiting
  double p_aw = 1.0;    // awready
  double p_w = 1.0;     // wready
  double p_dlv = 1.0;   // dlv_ready
  bool mux = false;     // AW/W in lockstep like rnic_axi_wr_mux (AW the cycle after the last wlast)
  bool record = false;  // per-cycle trace for the throughput check
  std::uint64_t max_idle = 20000;
  // Deliver's expected-MSN table (exp_key -> MSN; queues not listed: 0). Each cycle, with p_step,
  // one of step_queues advances by one (a message completed); with p_step_addr, the step goes to
  // the queue whose address is on the read port in that cycle (the forwarded write).
  std::map<std::uint32_t, std::uint32_t> exp_init;
  std::vector<std::uint32_t> step_queues;
  double p_step = 0.0;
  double p_step_addr = 0.0;
};

struct CycleRec {
  bool vd = false;           // verdict handshake
  bool aw = false;           // AW handshake
  bool w = false;            // W handshake
  bool dlv = false;          // dlv handshake
  bool beat = false;         // beat popped
  int beat_item = -1;        // item of the popped beat
  unsigned beat_idx = 0;     // beat index in its packet
  std::size_t beat_seq = 0;  // position in the beat stream
};

struct Stats {
  std::uint64_t cycles = 0;
  std::uint64_t stale = 0;      // untagged PLACEs found stale at dispatch
  std::uint64_t stale_pay = 0;  // of those, with payload
  std::uint64_t fresh_untagged = 0;
  std::uint64_t w_beats = 0;
  std::uint64_t in_beats = 0;
  std::uint64_t bursts = 0;
  std::vector<CycleRec> trace;
};

inline std::uint8_t pattern(std::uint64_t a) { return static_cast<std::uint8_t>((a * 0x9E3779B97F4A7C15ULL) >> 56); }

// Host memory in 4 KiB pages, pre-filled with pattern(); each byte knows the payload byte expected
// there (owner = item index, -1: none) and whether it was written.
class HostMemory {
 public:
  struct Page {
    std::array<std::uint8_t, 4096> data;
    std::array<std::uint8_t, 4096> exp;
    std::array<std::int32_t, 4096> owner;
    std::array<std::uint8_t, 4096> written;
  };
  Page& page(std::uint64_t a) {
    auto it = pages_.find(a >> 12);
    if (it != pages_.end()) return *it->second;
    auto p = std::make_unique<Page>();
    const std::uint64_t base = a & ~std::uint64_t{4095};
    for (unsigned i = 0; i < 4096; ++i) {
      p->data[i] = pattern(base + i);
      p->exp[i] = p->data[i];
      p->owner[i] = -1;
      p->written[i] = 0;
    }
    Page& ref = *p;
    pages_.emplace(a >> 12, std::move(p));
    return ref;
  }
  std::size_t pages() const { return pages_.size(); }

 private:
  std::unordered_map<std::uint64_t, std::unique_ptr<Page>> pages_;
};

class Bench {
 public:
  Bench() {
    idle_inputs();
    reset();
  }

  Vrnic_rx_place& dut() { return *m_; }

  void idle_inputs() {
    m_->vd_valid_i = 0;
    m_->beat_valid_i = 0;
    m_->awready_i = 0;
    m_->wready_i = 0;
    m_->dlv_ready_i = 0;
  }

  void tick() {
    sim_.tick();
    cycle_ = sim_.cycle();
  }

  void reset() {
    idle_inputs();
    sim_.reset(3);
    cycle_ = sim_.cycle();
    // Right after reset nothing may be offered.
    EXPECT_EQ(m_->awvalid_o, 0);
    EXPECT_EQ(m_->wvalid_o, 0);
    EXPECT_EQ(m_->dlv_valid_o, 0);
    EXPECT_EQ(m_->bytes_event_o, 0);
    EXPECT_EQ(m_->commit_now_o, 0U);
    EXPECT_EQ(m_->vd_ready_o, 1);
    p0_item_ = -1;
    commit_ = 0;
    exp_data_ = 0;
    rd_key_ = 0;
  }

  // Runs items to completion under cfg, checking every rule. abort_at: stop (no end checks) after
  // that many cycles (reset tests).
  Stats run(const std::vector<Item>& items, const Config& cfg, std::uint64_t seed, std::uint64_t abort_at = 0);

 private:
  StageSim<Vrnic_rx_place> sim_;  // clock, reset, FST (RNIC_FST)
  Vrnic_rx_place* m_ = &sim_.model();
  std::uint64_t cycle_ = 0;
  // State that lives as long as the design's (cleared by reset()): the verdict in p0 (index into the
  // current run's items), segments committed with writes, the expected-MSN read port.
  long p0_item_ = -1;
  std::uint32_t commit_ = 0;
  std::uint32_t exp_data_ = 0;  // exp_rd_data_i of the next cycle
  std::uint32_t rd_key_ = 0;    // the address read in the previous cycle
};

}  // namespace place
