// SPDX-License-Identifier: Apache-2.0
// rnic_deliver_cq, deliver's completion-ring writer, at its interface (DataWidth CQ_DW). The header of
// rtl/rnic_deliver_cq.sv is the specification; this testbench holds a C++ reference of its rules.
//
// Environment, one cycle at a time (inputs driven, clock low + eval, outputs sampled, rising edge):
// - a driver presents rnic_ce_t entries (completions, errors, order errors, fence markers) with random
//   gaps, valid held until ce_ready_o, each with a mark against the b_segs_i count (place's
//   commit_now when deliver decided it: never ahead of what place committed);
// - the write mux: place commits segments (their AWs a few cycles later, each segment's last burst
//   counted in b_segs_i when its B comes) and other writes take the AW channel in some cycles (the
//   mux takes one AW per cycle: awready_i is 0 for this port then); aw_count_i and b_count_i count
//   every AW and B handshake, visible the cycle after, as rnic_axi_wr_mux keeps them;
// - an AXI write slave: awready and wready random and independent, B in AW order with random latency
//   after the AW and the last beat; a completion write lands in host memory at its B;
// - rnic_regs: ring configuration (base, log2) taken only while the ring is disabled and cq_busy_o
//   (registered) was 0, CQ_CTRL.enable written at any time, writing 1 pulses cq_reset_i with the
//   consumer index 0; a host reads the ring below cq_prod_o and advances cq_cons_i.
// The reference follows the module's input register (one cycle, two entries: rnic_slice) and decides,
// every cycle, what the header says happens to the head entry: written (b_segs_i has reached its mark
// by a 32-bit wrapping compare, enabled, room: written - cons < 2^log2, fewer than AckDepth awaiting
// their B, no cq_reset_i, the previous write done or finishing), discarded (disabled) or a marker
// done (mark reached, nothing loaded unacknowledged, no write under way). It checks each cycle: the
// AW and W of every write (address base/64*64 + 64 * (index mod 2^log2), awlen, beats, wlast,
// strobes, the CQE bytes of hw.def with the phase of the lap), ce_ready_o, cq_prod_o (one step per
// entry, the cycle after b_count_i reaches the entry's AW position), cq_busy_o (from the load until
// the B of the last completion write), fence_done_o; and the host checks every entry it reads.
// Directed tests name one rule each; CqWriter.RandomSoak mixes everything (ring reconfiguration, reset
// mid-write, counter wrap-around) for a few thousand entries. Seed: RNIC_TEST_SEED=<n>; waveform:
// RNIC_FST=<file> (pick one test with --gtest_filter).
#include "Vrnic_deliver_cq.h"
#include "rnic/tb/rtl_structs.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/stage_sim.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/wire/bytes.hpp"

namespace {

namespace hw = rnic::hw;
namespace wire = rnic::wire;
namespace rtl = rnic::tb;

constexpr unsigned kDw = CQ_DW;
constexpr unsigned kBytes = kDw / 8;
constexpr unsigned kEntryBytes = hw::kCQE_BYTES;
constexpr unsigned kBeats = kEntryBytes / kBytes;
constexpr std::uint32_t kAckDepth = 32;  // rnic_deliver_cq's AckDepth: entries awaiting their B
constexpr unsigned kHeaderBytes = hw::kCQE_HEADER_BITS / 8;
constexpr std::uint64_t kRsvdTagged = 0xFFU;              // RsvdULP bits a tagged CQE keeps (hw.def)
constexpr std::uint64_t kRsvdUntagged = 0xFFFFFFFFFFULL;  // 40 bits, untagged

using Cqe = std::array<std::uint8_t, kEntryBytes>;

// ---- bytes ---------------------------------------------------------------------------------------

std::string hex(const Cqe& e) {
  std::string s;
  char buf[4];
  for (unsigned i = 0; i < e.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", e[i]);
    s += buf;
    s += (i % 16 == 15) ? "\n" : " ";
  }
  return s;
}

std::string hex64(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

// 32-bit free-running counters: `count` has reached `mark` (wrapping compare, as the header says).
bool reached(std::uint32_t count, std::uint32_t mark) { return ((count - mark) & 0x80000000U) == 0; }

// ---- entries -------------------------------------------------------------------------------------

// rnic_ce_t and rnic_ce_dlv_t (structs.def: rnic/tb/rtl_structs.hpp). A delivery's or an order
// error's aux holds an rnic_ce_dlv_t in its low bits.
constexpr unsigned kDlvBytes = (rtl::kBitsOf<rtl::CeDlv> + 7) / 8;

rtl::CeDlv dlv_of(const rtl::Ce& e) {
  const std::vector<std::uint8_t> b(e.aux.begin(), e.aux.begin() + kDlvBytes);
  return rtl::unpack<rtl::CeDlv>(b);
}

void set_dlv(rtl::Ce& e, const rtl::CeDlv& d) {
  const rtl::Bits b = rtl::pack(d);
  for (unsigned i = 0; i < kDlvBytes; ++i) e.aux.at(i) = b.bytes().at(i);
}

// The CQE of an entry (hw.def RNIC_RECORD(CQE)) written on a lap with that phase.
Cqe expected_cqe(const rtl::Ce& e, bool phase) {
  Cqe b{};
  wire::store_le(b.data() + hw::kCQE_STREAM_OFFSET, e.stream, hw::kCQE_STREAM_BITS / 8);
  const std::uint32_t flags = (phase ? hw::kCQE_FLAGS_PHASE.mask() : 0U) | (e.err ? hw::kCQE_FLAGS_ERROR.mask() : 0U) |
                              (e.is_tagged ? hw::kCQE_FLAGS_TAGGED.mask() : 0U) |
                              (e.order ? hw::kCQE_FLAGS_ORDER.mask() : 0U);
  wire::store_le(b.data() + hw::kCQE_FLAGS_OFFSET, flags, hw::kCQE_FLAGS_BITS / 8);
  wire::store_le(b.data() + hw::kCQE_SSN_OFFSET, e.ssn, hw::kCQE_SSN_BITS / 8);
  const rtl::CeDlv d = dlv_of(e);
  if (e.err) {
    wire::store_le(b.data() + hw::kCQE_ERR_TYPE_OFFSET, e.err_type, hw::kCQE_ERR_TYPE_BITS / 8);
    wire::store_le(b.data() + hw::kCQE_ERR_CODE_OFFSET, e.err_code, hw::kCQE_ERR_CODE_BITS / 8);
    wire::store_le(b.data() + hw::kCQE_LENGTH_OFFSET, e.length, hw::kCQE_LENGTH_BITS / 8);
    if (e.order) {  // an order error: QN and MSN, HEADER zero
      wire::store_le(b.data() + hw::kCQE_STAG_QN_OFFSET, d.stag_qn, hw::kCQE_STAG_QN_BITS / 8);
      wire::store_le(b.data() + hw::kCQE_MSN_OFFSET, d.msn, hw::kCQE_MSN_BITS / 8);
    } else {  // a 7.1 error: the 18 header bytes
      for (unsigned i = 0; i < kHeaderBytes; ++i) b.at(hw::kCQE_HEADER_OFFSET + i) = e.aux.at(i);
    }
  } else {
    wire::store_le(b.data() + hw::kCQE_STAG_QN_OFFSET, d.stag_qn, hw::kCQE_STAG_QN_BITS / 8);
    if (e.is_tagged) {
      wire::store_le(b.data() + hw::kCQE_RSVD_ULP_OFFSET, d.rsvd_ulp & kRsvdTagged, hw::kCQE_RSVD_ULP_BITS / 8);
    } else {
      wire::store_le(b.data() + hw::kCQE_MSN_OFFSET, d.msn, hw::kCQE_MSN_BITS / 8);
      wire::store_le(b.data() + hw::kCQE_LENGTH_OFFSET, e.length, hw::kCQE_LENGTH_BITS / 8);
      wire::store_le(b.data() + hw::kCQE_RSVD_ULP_OFFSET, d.rsvd_ulp & kRsvdUntagged, hw::kCQE_RSVD_ULP_BITS / 8);
    }
  }
  return b;
}

enum class Kind { kTagged, kUntagged, kError, kOrderError, kMarker };

// ---- testbench -----------------------------------------------------------------------------------

struct Knobs {
  double p_valid = 0.7;    // the driver presents its next entry in a cycle
  double p_awready = 0.7;  // (in a cycle no other port's AW takes the channel)
  double p_wready = 0.7;
  double p_b = 0.7;              // a due B is given in a cycle
  unsigned b_lat = 6;            // B from 1 + [0, b_lat] cycles after a write's AW and last beat
  double p_commit = 0.08;        // place commits a segment in a cycle (its AW later, its B in b_segs_i)
  double p_other = 0.04;         // another write (not a segment's last burst) asks for the AW channel
  unsigned aw_lat = 4;           // a committed segment's AW within this many cycles
  double p_consume = 0.5;        // the host reads an entry in a cycle
  bool consume = true;           // the host reads at all
  std::int64_t host_allow = -1;  // entries the host may still read (-1: any number)
  unsigned mark_back = 0;        // an entry's mark up to this many segments before the commit count
  std::int64_t b_allow = -1;     // Bs still allowed (-1: any number; 0: B held)
  bool auto_mark = true;         // the driver marks entries with the commit count
};

// What became of an entry handed over (in order).
struct Outcome {
  enum What { kPending, kWritten, kDiscarded, kMarkerDone } what = kPending;
  std::uint64_t cycle = 0;  // of its load, discard or marker pop
  std::uint32_t index = 0;  // written: producer index (entries loaded since the last cq reset)
  std::uint64_t addr = 0;
  bool phase = false;
};

class Tb {
 public:
  explicit Tb(std::uint64_t seed) : rng_(seed) { reset(); }

  // ---- set-up ----
  // rst_ni for two edges; the environment (mux counters, regs, host) starts over too.
  void reset() {
    clear();
    drive_idle();
    sim_.reset(2);
  }

  // Register writes through rnic_regs, one per cycle in order (CQ_BASE, CQ_LOG2_SIZE: taken only while
  // disabled and not busy; CQ_CTRL.enable).
  void write_base(std::uint64_t base) { regs_q_.push_back(RegWrite{RegWrite::kBase, base}); }
  void write_log2(unsigned log2) { regs_q_.push_back(RegWrite{RegWrite::kLog2, log2}); }
  void write_enable(bool on) { regs_q_.push_back(RegWrite{RegWrite::kEnable, on ? 1U : 0U}); }
  // Software's ring set-up: disable, wait for CQ_CTRL = 0, write base and size, enable.
  void setup_ring(std::uint64_t base, unsigned log2) {
    if (en_) write_enable(false);
    run_until([&] { return regs_q_.empty() && !en_ && !busy_q_; }, 5000, "ring idle before its configuration");
    write_base(base);
    write_log2(log2);
    write_enable(true);
    run_until([&] { return regs_q_.empty() && !reset_now_; }, 100, "ring configuration");
    ASSERT_EQ(base_, base) << "test bug: the base was not taken";
    ASSERT_EQ(log2_, log2) << "test bug: the size was not taken";
  }

  // ---- stimulus ----
  void send(const rtl::Ce& e) { in_q_.push_back(e); }
  // Entries from gen once the sent ones are out, until it returns false.
  void generate(std::function<bool(rtl::Ce&)> gen) {
    generator_ = std::move(gen);
    gen_done_ = false;
  }

  rtl::Ce random_entry(Kind k) {
    rtl::Ce e;
    e.stream = static_cast<std::uint16_t>(rnd(0, 0xFFFF));
    e.ssn = static_cast<std::uint16_t>(rnd(0, 0xFFFF));
    e.length = static_cast<std::uint32_t>(rnd(0, 0xFFFFFFFFU));
    // Members the CQE does not take for the kind: random, they must not leak into it.
    e.err_type = static_cast<std::uint8_t>(rnd(0, 15));
    e.err_code = static_cast<std::uint8_t>(rnd(0, 255));
    for (auto& b : e.aux) b = static_cast<std::uint8_t>(rnd(0, 255));
    rtl::CeDlv d;
    d.stag_qn = static_cast<std::uint32_t>(rnd(0, 0xFFFFFFFFU));
    d.msn = static_cast<std::uint32_t>(rnd(0, 0xFFFFFFFFU));
    d.rsvd_ulp = rnd(0, kRsvdUntagged);
    switch (k) {
      case Kind::kTagged:
        e.is_tagged = true;
        set_dlv(e, d);
        break;
      case Kind::kUntagged:
        set_dlv(e, d);
        break;
      case Kind::kError:
        e.err = true;
        e.is_tagged = chance(0.5);
        break;
      case Kind::kOrderError:
        e.err = true;
        e.order = true;
        e.err_type = hw::ddp_error::kType[hw::ddp_error::kUntaggedMsnRange];
        e.err_code = hw::ddp_error::kCode[hw::ddp_error::kUntaggedMsnRange];
        set_dlv(e, d);
        break;
      case Kind::kMarker:
        e.marker = true;
        break;
    }
    return e;
  }
  rtl::Ce random_entry() {
    const std::uint64_t r = rnd(0, 99);
    if (r < 3) return random_entry(Kind::kMarker);
    if (r < 10) return random_entry(Kind::kOrderError);
    if (r < 22) return random_entry(Kind::kError);
    return random_entry(r < 60 ? Kind::kTagged : Kind::kUntagged);
  }

  // place commits n segments now (commit count + n): each one's AW within knobs.aw_lat cycles, its
  // B counted in b_segs_i.
  void commit(unsigned n = 1) {
    for (unsigned i = 0; i < n; ++i) {
      ++committed_;
      other_q_.push_back(OtherAw{cycle_ + rnd(0, knobs.aw_lat), true});
    }
  }
  // Another port's write (not a segment's last burst): counts in aw_count_i and b_count_i only.
  void other_write() { other_q_.push_back(OtherAw{cycle_ + rnd(0, knobs.aw_lat), false}); }

  // Advances the mux's counters as if `writes` other writes (`segs` of them segments' last bursts)
  // had been taken and acknowledged while this module was idle: its state does not change over such a
  // stretch, so the jump stands for it. The test keeps the count within 2^31 of the module's last
  // completion AW unless it means to go beyond.
  void skip(std::uint32_t writes, std::uint32_t segs) {
    EXPECT_TRUE(quiescent()) << "test bug: skip() while not idle";
    aw_count_ += writes;
    b_count_ += writes;
    b_segs_ += segs;
    committed_ += segs;
    last_mark_ = committed_;
  }

  // ---- run ----
  void step() {
    drive();
    sim_.eval();
    sample();
    sim_.tick();
    ++cycle_;
  }
  void run(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n && !failed; ++i) step();
  }
  bool run_until(const std::function<bool()>& done, std::uint64_t max_cycles, const std::string& what) {
    for (std::uint64_t i = 0; i < max_cycles && !failed; ++i) {
      if (done()) return true;
      step();
    }
    if (done()) return true;
    fail("timeout waiting for " + what + " (" + state() + ")");
    return false;
  }
  // Until every entry is handed over and decided, every write acknowledged and read by the host.
  bool run_until_idle(std::uint64_t max_cycles) {
    std::uint64_t idle = 0;
    for (std::uint64_t i = 0; i < max_cycles && !failed; ++i) {
      step();
      idle = quiescent() ? idle + 1 : 0;
      if (idle >= 4) return true;
    }
    if (!failed) fail("timeout waiting for idle (" + state() + ")");
    return false;
  }
  std::string state() const {
    return std::to_string(in_q_.size() + pend_.size()) + " entries not decided, " + std::to_string(bus_.size()) +
           " writes awaiting B, producer " + std::to_string(prod_) + ", loaded " + std::to_string(widx_) + ", host " +
           std::to_string(host_cons_) + ", enable " + std::to_string(en_) + ", busy " + std::to_string(busy_q_) +
           ", log2 " + std::to_string(log2_) + ", b_segs " + std::to_string(b_segs_) + ", head mark " +
           (pend_.empty() ? std::string("-") : std::to_string(pend_.front().ce.mark)) + ", software " +
           std::to_string(sw.state) + ", register writes " + std::to_string(regs_q_.size());
  }
  bool quiescent() const {
    return in_q_.empty() && !gen_live() && !staged_ && !presenting_ && pend_.empty() && !cur_.active && !pred_load_ &&
           bus_.empty() && other_q_.empty() && regs_q_.empty() && !reset_now_ && prod_ == widx_ &&
           (!knobs.consume || knobs.host_allow == 0 || host_cons_ == prod_) && !busy_q_;
  }

  // ---- observations ----
  Knobs knobs;
  bool failed = false;
  std::vector<Outcome> outcomes;           // per entry handed over, in order
  std::vector<std::uint64_t> aw_cycles;    // this port's AW handshakes
  std::vector<std::uint64_t> my_b_cycles;  // Bs of this port's writes
  std::vector<std::uint64_t> prod_cycles;  // cycles cq_prod_o changed (to the new value)
  std::vector<std::uint64_t> fence_cycles;
  std::vector<bool> busy_trace;   // cq_busy_o per cycle
  std::vector<Cqe> read_entries;  // as the host read them, in order
  std::uint64_t cycle() const { return cycle_; }
  std::uint32_t prod() const { return prod_; }
  std::uint32_t widx() const { return widx_; }
  std::uint32_t b_segs() const { return b_segs_; }
  std::uint32_t committed() const { return committed_; }
  std::uint32_t aw_count() const { return aw_count_; }
  std::uint32_t b_count() const { return b_count_; }
  std::uint32_t host_cons() const { return host_cons_; }
  bool enabled() const { return en_; }
  bool busy() const { return busy_q_; }
  std::uint64_t base() const { return base_; }
  unsigned log2() const { return log2_; }
  std::size_t writes_awaiting_b() const { return bus_.size(); }
  std::uint64_t written = 0, discarded = 0, markers_done = 0, abandoned = 0, config_ignored = 0;
  std::uint64_t configs = 0;  // ring sizes taken by rnic_regs
  std::uint64_t dropped = 0;  // writes under way at a cq reset (finished, not counted)
  std::uint64_t full_stalls = 0, mark_stalls = 0, depth_stalls = 0;  // cycles a head entry waited, by reason
  Vrnic_deliver_cq& top() { return sim_.model(); }
  // Memory as the host sees it (completion writes landed at their B).
  const Cqe* mem(std::uint64_t addr) const {
    const auto it = mem_.find(addr);
    return it == mem_.end() ? nullptr : &it->second;
  }
  std::uint64_t slot_addr(std::uint32_t index) const {
    return (base_ & ~std::uint64_t{hw::kCQE_BYTES - 1}) + std::uint64_t{hw::kCQE_BYTES} * (index & size_mask());
  }

  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
  std::uint64_t rnd(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
  }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }

  void fail(const std::string& msg) {
    if (fail_msgs_++ < 10) ADD_FAILURE() << "cycle " << cycle_ << ": " << msg;
    failed = true;
  }

  // Software on the side (the random soak): reconfigures the ring now and then, re-arms it (enable
  // written while enabled: cq_reset_i whatever is under way) and disables it for a while.
  struct Software {
    double p_event = 0.0;  // per cycle, in normal running
    unsigned max_log2 = 6;
    enum State { kRun, kDisabled, kConfigured } state = kRun;
    std::uint64_t until = 0;
    bool reconfigure = false;
    bool rearm = false;  // CQ_CTRL.enable to be written 1 (while enabled) once a write is on the bus
  } sw;

 private:
  struct RegWrite {
    enum What { kBase, kLog2, kEnable } what;
    std::uint64_t value;
  };
  struct OtherAw {
    std::uint64_t due = 0;
    bool seg_last = false;
  };
  struct BusWrite {
    bool mine = false;
    bool seg_last = false;
    bool data_done = false;
    std::uint64_t ready = 0;  // B from this cycle
    std::uint64_t id = 0;
    std::uint64_t addr = 0;
    Cqe data{};
  };
  // This port's write under way (loaded, AW or W not finished).
  struct Write {
    bool active = false;
    bool aw_done = false;
    unsigned beats = 0;
    bool counted = true;  // no cq_reset_i since its load
    std::uint64_t id = 0;
    std::uint64_t addr = 0;
    Cqe bytes{};
  };
  struct Pend {
    rtl::Ce ce;
    std::uint64_t handover = 0;
    std::size_t n = 0;  // index in outcomes
  };
  struct Slot {
    std::uint64_t addr = 0;
    Cqe bytes{};
  };

  // The environment and the reference start over (the knobs stay).
  void clear() {
    failed = false;
    outcomes.clear();
    aw_cycles.clear();
    my_b_cycles.clear();
    prod_cycles.clear();
    fence_cycles.clear();
    busy_trace.clear();
    read_entries.clear();
    written = discarded = markers_done = abandoned = config_ignored = dropped = configs = 0;
    full_stalls = mark_stalls = depth_stalls = 0;
    sw = Software{};
    generator_ = nullptr;
    cycle_ = 0;
    in_q_.clear();
    gen_done_ = staged_ = presenting_ = false;
    cur_in_ = rtl::Ce{};
    last_mark_ = 0;
    pend_.clear();
    last_pop_ = -1;
    slice_n_ = 0;
    other_q_.clear();
    other_now_ = false;
    bus_.clear();
    cur_ = next_ = Write{};
    pred_load_ = pred_mk_ = false;
    next_id_ = 0;
    widx_ = prod_ = 0;
    ack_q_.clear();
    epoch_.clear();
    my_aws_ = my_bs_ = 0;
    aw_count_ = b_count_ = b_segs_ = committed_ = 0;
    base_ = 0;
    log2_ = 0;
    en_ = reset_now_ = busy_q_ = false;
    host_cons_ = 0;
    regs_q_.clear();
    mem_.clear();
    prev_prod_ = 0;
    awready_ = wready_ = ce_valid_ = false;
    aw_hold_ = 0;
  }

  std::uint64_t size_mask() const { return (std::uint64_t{1} << log2_) - 1; }
  bool gen_live() const { return generator_ && !gen_done_; }

  void drive_idle() {
    auto& t = sim_.model();
    t.ce_valid_i = 0;
    rtl::put(t.ce_i, rtl::Ce{});
    t.cq_base_i = base_;
    t.cq_log2_i = static_cast<std::uint8_t>(log2_);
    t.cq_enable_i = en_ ? 1 : 0;
    t.cq_reset_i = reset_now_ ? 1 : 0;
    t.cq_cons_i = host_cons_;
    t.awready_i = 0;
    t.wready_i = 0;
    t.b_segs_i = b_segs_;
    t.aw_count_i = aw_count_;
    t.b_count_i = b_count_;
    awready_ = wready_ = ce_valid_ = false;
  }

  void software() {
    Software& s = sw;
    if (s.p_event <= 0.0) return;
    switch (s.state) {
      case Software::kRun:
        if (s.rearm && regs_q_.empty() && sim_.model().awvalid_o != 0) {
          write_enable(true);  // re-arm while an AW waits, held (the mux busy): cq_reset_i mid-write
          aw_hold_ = 3;
          s.rearm = false;
        }
        if (!regs_q_.empty() || s.rearm || !chance(s.p_event)) return;
        if (chance(0.3)) {
          s.rearm = true;
        } else {
          write_enable(false);
          s.state = Software::kDisabled;
          s.reconfigure = chance(0.6);
          s.until = cycle_ + rnd(0, 60);
        }
        return;
      case Software::kDisabled:
        // Re-enabled before the last write is acknowledged sometimes (same ring: allowed); a new
        // configuration only once CQ_CTRL reads 0.
        if (cycle_ < s.until || !regs_q_.empty()) return;
        if (!s.reconfigure) {
          write_enable(true);
          s.state = Software::kRun;
        } else if (!busy_q_ && !en_) {
          write_base(rnd(0, 0x7FFFFFFFFFFFFFFFULL));
          write_log2(static_cast<unsigned>(rnd(1, s.max_log2)));
          s.state = Software::kConfigured;
          s.until = cycle_ + rnd(0, 20);
        }
        return;
      case Software::kConfigured:
        if (cycle_ < s.until || !regs_q_.empty()) return;
        write_enable(true);
        s.state = Software::kRun;
        return;
    }
  }

  void drive() {
    software();
    drive_idle();
    auto& t = sim_.model();
    // Driver: the next entry, presented after a random gap and held until taken.
    if (!presenting_ && !staged_) {
      if (!in_q_.empty()) {
        cur_in_ = in_q_.front();
        in_q_.pop_front();
        staged_ = true;
      } else if (gen_live()) {
        staged_ = generator_(cur_in_);
        gen_done_ = !staged_;
      }
    }
    if (staged_ && chance(knobs.p_valid)) {
      if (knobs.auto_mark) {
        // The commit count when deliver decided it, or a little before (never behind the last mark).
        std::uint32_t m = committed_ - static_cast<std::uint32_t>(rnd(0, knobs.mark_back));
        if (!reached(m, last_mark_)) m = last_mark_;
        cur_in_.mark = m;
      }
      last_mark_ = cur_in_.mark;
      staged_ = false;
      presenting_ = true;
    }
    if (presenting_) {
      t.ce_valid_i = 1;
      rtl::put(t.ce_i, cur_in_);
      ce_valid_ = true;
    }
    // Place commits segments; other writes.
    if (chance(knobs.p_commit)) commit();
    if (chance(knobs.p_other)) other_write();
    // The mux: a due AW of another port takes the channel in this cycle.
    other_now_ = !other_q_.empty() && other_q_.front().due <= cycle_;
    awready_ = !other_now_ && chance(knobs.p_awready) && aw_hold_ == 0;
    if (aw_hold_ > 0) --aw_hold_;
    wready_ = chance(knobs.p_wready);
    t.awready_i = awready_ ? 1 : 0;
    t.wready_i = wready_ ? 1 : 0;
  }

  void sample() {
    auto& t = sim_.model();
    const std::uint64_t c = cycle_;
    const bool aw_v = t.awvalid_o != 0;
    const bool w_v = t.wvalid_o != 0;
    const bool aw_hs = aw_v && awready_;
    const bool w_hs = w_v && wready_;

    // ---- the previous cycle's decisions, seen now ----
    if (pred_load_) cur_ = next_;
    if ((t.fence_done_o != 0) != pred_mk_) {
      fail(pred_mk_ ? "fence_done_o did not pulse the cycle after its marker left the head"
                    : "fence_done_o pulsed with no marker leaving the head");
    }
    if (t.fence_done_o != 0) fence_cycles.push_back(c);
    pred_mk_ = false;
    pred_load_ = false;
    if (t.cq_prod_o != prod_) {
      fail("cq_prod_o " + std::to_string(t.cq_prod_o) + ", expected " + std::to_string(prod_));
      prod_ = t.cq_prod_o;  // one message, not one per cycle
    }
    if (t.cq_prod_o != prev_prod_) prod_cycles.push_back(c);
    prev_prod_ = t.cq_prod_o;
    if (aw_v != (cur_.active && !cur_.aw_done)) {
      fail(aw_v ? "awvalid_o without a completion write loaded" : "awvalid_o low with the entry's AW not taken");
    }
    if (w_v != (cur_.active && cur_.beats < kBeats)) {
      fail(w_v ? "wvalid_o beyond the entry's beats" : "wvalid_o low with beats of the entry to go");
    }
    if (aw_v && cur_.active) {
      if (t.awaddr_o != cur_.addr) fail("awaddr_o " + hex64(t.awaddr_o) + ", expected " + hex64(cur_.addr));
      if (unsigned{t.awlen_o} != kBeats - 1) fail("awlen_o " + std::to_string(t.awlen_o));
    }
    if (w_v && cur_.active && cur_.beats < kBeats) {
      const std::vector<std::uint8_t> data = rtl::take_bytes(t.wdata_o, kBytes);
      const std::vector<std::uint8_t> strb = rtl::take_bytes(t.wstrb_o, kBytes / 8);
      for (const std::uint8_t s : strb) {
        if (s != 0xFF) fail("wstrb_o not all ones");
      }
      for (unsigned i = 0; i < kBytes; ++i) {
        if (data[i] != cur_.bytes.at(cur_.beats * kBytes + i)) {
          fail("W beat " + std::to_string(cur_.beats) + " byte " + std::to_string(i) + " is " +
               std::to_string(data[i]) + "; the entry should read\n" + hex(cur_.bytes));
          break;
        }
      }
      if ((t.wlast_o != 0) != (cur_.beats == kBeats - 1)) fail("wlast_o on beat " + std::to_string(cur_.beats));
    }
    if ((t.ce_ready_o != 0) != (slice_n_ < 2)) {
      fail("ce_ready_o " + std::to_string(t.ce_ready_o) + " with " + std::to_string(slice_n_) +
           " entries in the input register");
    }

    // ---- this cycle's decision about the head entry (the header's rules) ----
    const bool writing = cur_.active;
    const bool finishing =
        writing && (cur_.aw_done || awready_) && (cur_.beats == kBeats || (wready_ && cur_.beats + 1 == kBeats));
    const std::uint32_t infl = widx_ - prod_;
    bool load = false, discard = false, mk = false;
    if (!pend_.empty()) {
      const Pend& h = pend_.front();
      const std::int64_t arrive = std::max<std::int64_t>(last_pop_ + 1, static_cast<std::int64_t>(h.handover) + 1);
      if (static_cast<std::int64_t>(c) >= arrive) {
        const bool gate = reached(b_segs_, h.ce.mark);
        const bool room = std::uint64_t{widx_ - host_cons_} <= size_mask();
        if (h.ce.marker) {
          mk = gate && !writing && infl == 0 && !reset_now_;
        } else {
          load = gate && en_ && room && infl < kAckDepth && !reset_now_ && (!writing || finishing);
          discard = !en_ && !reset_now_;
          if (en_ && !reset_now_) {
            if (!gate) ++mark_stalls;
            if (gate && !room) ++full_stalls;
            if (gate && room && infl >= kAckDepth) ++depth_stalls;
          }
        }
      }
    }
    const bool busy = load || writing || my_aws_ != my_bs_;
    if ((t.cq_busy_o != 0) != busy) {
      fail(std::string("cq_busy_o ") + (busy ? "0" : "1") + " (load " + std::to_string(load) + ", write under way " +
           std::to_string(writing) + ", completion writes awaiting B " + std::to_string(my_aws_ - my_bs_) + ")");
    }
    busy_trace.push_back(t.cq_busy_o != 0);

    if (load || discard || mk) {
      const Pend h = pend_.front();
      pend_.pop_front();
      last_pop_ = static_cast<std::int64_t>(c);
      --slice_n_;
      Outcome& o = outcomes.at(h.n);
      o.cycle = c;
      if (load) {
        const bool phase = ((std::uint64_t{widx_} >> log2_) & 1U) == 0;
        next_ = Write{};
        next_.active = true;
        next_.id = ++next_id_;
        next_.addr = slot_addr(widx_);
        next_.bytes = expected_cqe(h.ce, phase);
        epoch_.push_back(Slot{next_.addr, next_.bytes});
        o.what = Outcome::kWritten;
        o.index = widx_;
        o.addr = next_.addr;
        o.phase = phase;
        ++widx_;
        ++written;
        pred_load_ = true;
      } else if (discard) {
        o.what = Outcome::kDiscarded;
        ++discarded;
      } else {
        o.what = Outcome::kMarkerDone;
        ++markers_done;
        pred_mk_ = true;
      }
    }

    // ---- handshakes of this cycle ----
    std::uint32_t aw_inc = 0, b_inc = 0, segs_inc = 0;
    if (ce_valid_ && t.ce_ready_o != 0) {
      outcomes.push_back(Outcome{});
      pend_.push_back(Pend{cur_in_, c, outcomes.size() - 1});
      ++slice_n_;
      presenting_ = false;
    }
    // The acknowledge queue: the oldest counted entry's AW position reached by b_count_i.
    if (!ack_q_.empty() && reached(b_count_, ack_q_.front()) && !reset_now_) {
      ack_q_.pop_front();
      ++prod_;
    }
    if (w_hs && cur_.active && cur_.beats < kBeats) {
      ++cur_.beats;
      if (cur_.beats == kBeats && cur_.aw_done) {
        for (auto& w : bus_) {
          if (w.mine && w.id == cur_.id) {
            w.data_done = true;
            w.ready = c + 1 + rnd(0, knobs.b_lat);
          }
        }
      }
    }
    if (aw_hs && cur_.active) {
      cur_.aw_done = true;
      BusWrite w;
      w.mine = true;
      w.id = cur_.id;
      w.addr = cur_.addr;
      w.data = cur_.bytes;
      w.data_done = cur_.beats == kBeats;
      w.ready = c + 1 + rnd(0, knobs.b_lat);
      bus_.push_back(w);
      ++my_aws_;
      ++aw_inc;
      aw_cycles.push_back(c);
      if (cur_.counted && !reset_now_) ack_q_.push_back(aw_count_ + 1U);
    }
    if (other_now_) {
      if (aw_hs) fail("testbench: two AWs in one cycle");
      BusWrite w;
      w.seg_last = other_q_.front().seg_last;
      w.data_done = true;
      w.ready = c + 1 + rnd(0, knobs.b_lat);
      other_q_.pop_front();
      bus_.push_back(w);
      ++aw_inc;
    }
    if (cur_.active && cur_.aw_done && cur_.beats == kBeats) cur_.active = false;
    // B, in AW order.
    if (!bus_.empty() && bus_.front().data_done && c >= bus_.front().ready && knobs.b_allow != 0 && chance(knobs.p_b)) {
      const BusWrite w = bus_.front();
      bus_.pop_front();
      if (knobs.b_allow > 0) --knobs.b_allow;
      ++b_inc;
      if (w.mine) {
        mem_[w.addr] = w.data;
        ++my_bs_;
        my_b_cycles.push_back(c);
      }
      if (w.seg_last) ++segs_inc;
    }

    // cq_reset_i: producer 0, nothing in flight counted; a write under way finishes uncounted.
    if (reset_now_) {
      if (cur_.active && cur_.counted) ++dropped;
      cur_.counted = false;
      widx_ = 0;
      prod_ = 0;
      ack_q_.clear();
      epoch_.clear();
    }

    // The host: reads the entry at its consumer index once the producer is past it.
    bool host_wrote = false;
    if (knobs.consume && knobs.host_allow != 0 && !reset_now_ && t.cq_prod_o != host_cons_ && regs_q_.empty() &&
        chance(knobs.p_consume)) {
      if (knobs.host_allow > 0) --knobs.host_allow;
      if (host_cons_ >= epoch_.size()) {
        fail("host: cq_prod_o " + std::to_string(t.cq_prod_o) + " past the entries written (" +
             std::to_string(epoch_.size()) + ")");
      } else {
        const Slot& s = epoch_.at(host_cons_);
        const Cqe* m = mem(s.addr);
        if (m == nullptr) {
          fail("host: nothing written at " + hex64(s.addr) + " for entry " + std::to_string(host_cons_));
        } else if (*m != s.bytes) {
          fail("host: entry " + std::to_string(host_cons_) + " at " + hex64(s.addr) + " reads\n" + hex(*m) +
               "expected\n" + hex(s.bytes));
        } else {
          read_entries.push_back(*m);
        }
        ++host_cons_;
        host_wrote = true;
      }
    }

    // rnic_regs: one register write per cycle (none while the host writes CQ_CONS); the values it
    // holds at this cycle (cq_en_q = en_, cq_busy_q = busy_q_) decide whether the ring configuration
    // is taken; the new values are seen from the next cycle.
    reset_now_ = false;
    if (!regs_q_.empty() && !host_wrote) {
      const RegWrite w = regs_q_.front();
      regs_q_.pop_front();
      const bool idle = !en_ && !busy_q_;
      switch (w.what) {
        case RegWrite::kBase:
          if (idle) {
            base_ = w.value;
          } else {
            ++config_ignored;
          }
          break;
        case RegWrite::kLog2:
          if (idle && w.value >= 1 && w.value <= hw::kCQ_LOG2_MAX) {
            log2_ = static_cast<unsigned>(w.value);
            ++configs;
          } else {
            ++config_ignored;
          }
          break;
        case RegWrite::kEnable:
          en_ = w.value != 0;
          if (en_) {
            reset_now_ = true;
            abandoned += epoch_.size() - std::min<std::size_t>(epoch_.size(), host_cons_);
            host_cons_ = 0;
          }
          break;
      }
    }
    busy_q_ = t.cq_busy_o != 0;
    aw_count_ += aw_inc;
    b_count_ += b_inc;
    b_segs_ += segs_inc;
  }

  rtl::StageSim<Vrnic_deliver_cq> sim_;
  std::mt19937_64 rng_;
  std::uint64_t cycle_ = 0;
  unsigned fail_msgs_ = 0;

  // driver
  std::deque<rtl::Ce> in_q_;
  std::function<bool(rtl::Ce&)> generator_;
  bool gen_done_ = false;
  bool staged_ = false;  // the next entry, not yet presented
  bool presenting_ = false;
  rtl::Ce cur_in_;
  std::uint32_t last_mark_ = 0;
  // the module's input register and head
  std::deque<Pend> pend_;  // handed over, not yet decided
  std::int64_t last_pop_ = -1;
  unsigned slice_n_ = 0;
  // the bus
  std::deque<OtherAw> other_q_;
  bool other_now_ = false;
  std::deque<BusWrite> bus_;  // AWs taken, awaiting B, in order
  Write cur_;                 // this port's write under way
  Write next_;                // loaded in this cycle: under way from the next
  bool pred_load_ = false, pred_mk_ = false;
  std::uint64_t next_id_ = 0;
  // the reference's producer side
  std::uint32_t widx_ = 0;  // entries loaded since the last cq reset
  std::uint32_t prod_ = 0;  // cq_prod_o expected
  std::deque<std::uint32_t> ack_q_;
  std::vector<Slot> epoch_;  // entries loaded since the last cq reset, by index
  std::uint64_t my_aws_ = 0, my_bs_ = 0;
  // the mux
  std::uint32_t aw_count_ = 0, b_count_ = 0, b_segs_ = 0, committed_ = 0;
  // regs and host
  std::uint64_t base_ = 0;
  unsigned log2_ = 0;
  bool en_ = false;
  bool reset_now_ = false;
  std::uint32_t host_cons_ = 0;
  bool busy_q_ = false;  // cq_busy_o of the last cycle (regs' register)
  std::deque<RegWrite> regs_q_;
  std::map<std::uint64_t, Cqe> mem_;
  std::uint32_t prev_prod_ = 0;
  bool awready_ = false, wready_ = false, ce_valid_ = false;
  unsigned aw_hold_ = 0;  // cycles awready_i stays 0
};

// ---- tests ---------------------------------------------------------------------------------------

constexpr std::uint64_t kBase = 0x00007F1234567800ULL;  // 64-byte aligned, high bits set

// The CQE fields of hw.def, read back one by one.
struct Fields {
  std::uint64_t stream, flags, err_type, err_code, ssn, stag_qn, msn, length, rsvd;
  std::array<std::uint8_t, kHeaderBytes> header;
};
Fields fields_of(const Cqe& e) {
  Fields f{};
  f.stream = wire::load_le(e.data() + hw::kCQE_STREAM_OFFSET, hw::kCQE_STREAM_BITS / 8);
  f.flags = wire::load_le(e.data() + hw::kCQE_FLAGS_OFFSET, hw::kCQE_FLAGS_BITS / 8);
  f.err_type = wire::load_le(e.data() + hw::kCQE_ERR_TYPE_OFFSET, hw::kCQE_ERR_TYPE_BITS / 8);
  f.err_code = wire::load_le(e.data() + hw::kCQE_ERR_CODE_OFFSET, hw::kCQE_ERR_CODE_BITS / 8);
  f.ssn = wire::load_le(e.data() + hw::kCQE_SSN_OFFSET, hw::kCQE_SSN_BITS / 8);
  f.stag_qn = wire::load_le(e.data() + hw::kCQE_STAG_QN_OFFSET, hw::kCQE_STAG_QN_BITS / 8);
  f.msn = wire::load_le(e.data() + hw::kCQE_MSN_OFFSET, hw::kCQE_MSN_BITS / 8);
  f.length = wire::load_le(e.data() + hw::kCQE_LENGTH_OFFSET, hw::kCQE_LENGTH_BITS / 8);
  f.rsvd = wire::load_le(e.data() + hw::kCQE_RSVD_ULP_OFFSET, hw::kCQE_RSVD_ULP_BITS / 8);
  for (unsigned i = 0; i < kHeaderBytes; ++i) f.header.at(i) = e.at(hw::kCQE_HEADER_OFFSET + i);
  return f;
}
// Bytes of the entry no hw.def field covers: zero.
bool gaps_zero(const Cqe& e) {
  std::array<bool, kEntryBytes> used{};
  const auto mark = [&used](unsigned off, unsigned bits) {
    for (unsigned i = 0; i < bits / 8; ++i) used.at(off + i) = true;
  };
  mark(hw::kCQE_STREAM_OFFSET, hw::kCQE_STREAM_BITS);
  mark(hw::kCQE_FLAGS_OFFSET, hw::kCQE_FLAGS_BITS);
  mark(hw::kCQE_ERR_TYPE_OFFSET, hw::kCQE_ERR_TYPE_BITS);
  mark(hw::kCQE_ERR_CODE_OFFSET, hw::kCQE_ERR_CODE_BITS);
  mark(hw::kCQE_SSN_OFFSET, hw::kCQE_SSN_BITS);
  mark(hw::kCQE_STAG_QN_OFFSET, hw::kCQE_STAG_QN_BITS);
  mark(hw::kCQE_MSN_OFFSET, hw::kCQE_MSN_BITS);
  mark(hw::kCQE_LENGTH_OFFSET, hw::kCQE_LENGTH_BITS);
  mark(hw::kCQE_RSVD_ULP_OFFSET, hw::kCQE_RSVD_ULP_BITS);
  mark(hw::kCQE_HEADER_OFFSET, hw::kCQE_HEADER_BITS);
  for (unsigned i = 0; i < kEntryBytes; ++i) {
    if (!used[i] && e[i] != 0) return false;
  }
  return true;
}
bool phase_of(const Cqe& e) { return (e.at(hw::kCQE_FLAGS_OFFSET) & hw::kCQE_FLAGS_PHASE.mask()) != 0; }

class CqWriter : public ::testing::Test {
 protected:
  // Directed tests replay one seed unless RNIC_TEST_SEED says otherwise; the soak takes a fresh one.
  void start(std::uint64_t fixed_seed) {
    seed_ = rnic::tb::random_test_seed(fixed_seed);
    tb_ = std::make_unique<Tb>(seed_);
  }
  void SetUp() override {
    if (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) != "RandomSoak") start(1);
  }
  Tb& tb() { return *tb_; }
  // No other traffic, every handshake at once: cycles are exact.
  void quiet_bus() {
    Knobs& k = tb().knobs;
    k.p_valid = k.p_awready = k.p_wready = k.p_b = 1.0;
    k.b_lat = 0;
    k.p_commit = k.p_other = 0.0;
    k.p_consume = 1.0;
  }
  void send_n(unsigned n, Kind kind = Kind::kUntagged) {
    for (unsigned i = 0; i < n; ++i) tb().send(tb().random_entry(kind));
  }
  void finish(std::uint64_t max_cycles = 100000) {
    tb().knobs.p_commit = tb().knobs.p_other = 0.0;  // background traffic ends so that the bus drains
    ASSERT_TRUE(tb().run_until_idle(max_cycles));
    for (std::size_t i = 0; i < tb().outcomes.size(); ++i) {
      EXPECT_NE(tb().outcomes[i].what, Outcome::kPending) << "entry " << i << " never left the head";
    }
    EXPECT_EQ(tb().top().cq_prod_o, tb().widx()) << "every entry loaded since the last cq reset is produced";
    EXPECT_EQ(tb().top().cq_busy_o, 0U);
    EXPECT_EQ(tb().top().awvalid_o, 0U);
    EXPECT_EQ(tb().top().wvalid_o, 0U);
  }
  std::uint64_t seed_ = 0;
  std::unique_ptr<Tb> tb_;
};

TEST_F(CqWriter, ResetLeavesItIdle) {
  Vrnic_deliver_cq& t = tb().top();
  for (int i = 0; i < 20; ++i) {
    tb().step();
    EXPECT_EQ(t.ce_ready_o, 1U);
    EXPECT_EQ(t.awvalid_o, 0U);
    EXPECT_EQ(t.wvalid_o, 0U);
    EXPECT_EQ(t.cq_prod_o, 0U);
    EXPECT_EQ(t.cq_busy_o, 0U);
    EXPECT_EQ(t.fence_done_o, 0U);
  }
  EXPECT_FALSE(tb().failed);
}

// Every field of hw.def's CQE for each kind of entry; members the kind does not use (junk here) do not
// leak: RsvdULP keeps 8 bits tagged and 40 untagged, no MSN or length for a tagged delivery, no header
// for an order error, type and code only for errors.
TEST_F(CqWriter, CqeFieldsPerContract) {
  quiet_bus();
  tb().setup_ring(kBase, 4);
  std::vector<rtl::Ce> in;
  rtl::Ce e = tb().random_entry(Kind::kTagged);
  e.stream = 0x1234;
  e.ssn = 0xBEEF;
  e.length = 0x77777777;
  e.err_type = 0x5;
  e.err_code = 0x66;
  rtl::CeDlv d;
  d.stag_qn = 0xA1B2C3D4;
  d.msn = 0x11111111;
  d.rsvd_ulp = 0xCAFEBABE5AULL;
  set_dlv(e, d);
  in.push_back(e);
  e = tb().random_entry(Kind::kUntagged);
  e.stream = 0x0007;
  e.ssn = 0x0001;
  e.length = 0x00012345;
  d.stag_qn = 0x3;
  d.msn = 0xFFFFFFFF;
  d.rsvd_ulp = 0xCAFEBABE5AULL;
  set_dlv(e, d);
  in.push_back(e);
  for (const bool tagged : {true, false}) {
    e = tb().random_entry(Kind::kError);
    e.is_tagged = tagged;
    e.err_type = tagged ? 0x1 : 0x2;
    e.err_code = tagged ? 0x02 : 0x01;
    e.length = 0x5DC;
    for (unsigned i = 0; i < kHeaderBytes; ++i)
      e.aux.at(i) = static_cast<std::uint8_t>(0x11 * (i + 1) + (tagged ? 1 : 0));
    in.push_back(e);
  }
  e = tb().random_entry(Kind::kOrderError);
  e.length = 0;
  d.stag_qn = 0x2;
  d.msn = 0x42;
  d.rsvd_ulp = 0;
  set_dlv(e, d);
  in.push_back(e);
  for (const auto& x : in) tb().send(x);
  finish();
  ASSERT_EQ(tb().read_entries.size(), in.size());
  const std::uint32_t phase = hw::kCQE_FLAGS_PHASE.mask();
  const std::uint32_t error = hw::kCQE_FLAGS_ERROR.mask();
  const std::uint32_t tagged = hw::kCQE_FLAGS_TAGGED.mask();
  const std::uint32_t order = hw::kCQE_FLAGS_ORDER.mask();
  const std::array<std::uint8_t, kHeaderBytes> no_header{};
  for (std::size_t i = 0; i < in.size(); ++i) {
    const Cqe& got = tb().read_entries[i];
    const Fields f = fields_of(got);
    SCOPED_TRACE("entry " + std::to_string(i) + ":\n" + hex(got));
    EXPECT_TRUE(gaps_zero(got));
    EXPECT_EQ(f.stream, in[i].stream);
    EXPECT_EQ(f.ssn, in[i].ssn);
  }
  Fields f = fields_of(tb().read_entries[0]);  // tagged delivery: STag, RsvdULP[7:0]
  EXPECT_EQ(f.flags, phase | tagged);
  EXPECT_EQ(f.stag_qn, 0xA1B2C3D4U);
  EXPECT_EQ(f.rsvd, 0x5AU);
  EXPECT_EQ(f.msn, 0U);
  EXPECT_EQ(f.length, 0U);
  EXPECT_EQ(f.err_type, 0U);
  EXPECT_EQ(f.err_code, 0U);
  EXPECT_EQ(f.header, no_header);
  f = fields_of(tb().read_entries[1]);  // untagged delivery: QN, MSN, length, RsvdULP[39:0]
  EXPECT_EQ(f.flags, phase);
  EXPECT_EQ(f.stag_qn, 0x3U);
  EXPECT_EQ(f.msn, 0xFFFFFFFFU);
  EXPECT_EQ(f.length, 0x12345U);
  EXPECT_EQ(f.rsvd, 0xCAFEBABE5AULL);
  EXPECT_EQ(f.err_type, 0U);
  EXPECT_EQ(f.header, no_header);
  for (unsigned k = 2; k < 4; ++k) {  // 7.1 errors: type, code, segment length, the 18 header bytes
    f = fields_of(tb().read_entries[k]);
    const bool t = k == 2;
    EXPECT_EQ(f.flags, phase | error | (t ? tagged : 0U));
    EXPECT_EQ(f.err_type, t ? 0x1U : 0x2U);
    EXPECT_EQ(f.err_code, t ? 0x02U : 0x01U);
    EXPECT_EQ(f.length, 0x5DCU);
    for (unsigned i = 0; i < kHeaderBytes; ++i) EXPECT_EQ(f.header.at(i), in[k].aux.at(i)) << "header byte " << i;
    EXPECT_EQ(f.stag_qn, 0U);
    EXPECT_EQ(f.msn, 0U);
    EXPECT_EQ(f.rsvd, 0U);
  }
  f = fields_of(tb().read_entries[4]);  // order error: QN and MSN, no header
  EXPECT_EQ(f.flags, phase | error | order);
  EXPECT_EQ(f.err_type, hw::ddp_error::kType[hw::ddp_error::kUntaggedMsnRange]);
  EXPECT_EQ(f.err_code, hw::ddp_error::kCode[hw::ddp_error::kUntaggedMsnRange]);
  EXPECT_EQ(f.stag_qn, 0x2U);
  EXPECT_EQ(f.msn, 0x42U);
  EXPECT_EQ(f.length, 0U);
  EXPECT_EQ(f.rsvd, 0U);
  EXPECT_EQ(f.header, no_header);
  // Each entry was also compared beat by beat on W and byte for byte by the host (the reference).
}

// An entry is written only once b_segs_i has reached its mark: every segment committed before it was
// decided is acknowledged. Earlier entries (marks reached) go without waiting.
TEST_F(CqWriter, EntryWaitsForItsMark) {
  quiet_bus();
  tb().setup_ring(kBase, 4);
  tb().knobs.auto_mark = false;
  tb().knobs.b_allow = 0;  // Bs held
  tb().commit(3);
  tb().run(10);
  ASSERT_EQ(tb().writes_awaiting_b(), 3U) << "test bug: the segments' AWs";
  rtl::Ce e = tb().random_entry(Kind::kUntagged);
  e.mark = tb().committed();  // 3
  tb().send(e);
  tb().run(40);
  EXPECT_TRUE(tb().aw_cycles.empty()) << "written with b_segs_i " << tb().b_segs() << " below its mark 3";
  for (std::uint32_t i = 1; i <= 3; ++i) {
    tb().knobs.b_allow = 1;
    ASSERT_TRUE(tb().run_until([&] { return tb().b_segs() == i; }, 50, "segment B"));
    const std::uint64_t seen = tb().cycle();  // the first cycle b_segs_i shows i
    tb().run(20);
    if (i < 3) {
      EXPECT_TRUE(tb().aw_cycles.empty()) << "written with b_segs_i " << i << " below its mark 3";
    } else {
      ASSERT_EQ(tb().outcomes.at(0).what, Outcome::kWritten);
      EXPECT_EQ(tb().outcomes.at(0).cycle, seen) << "loaded in the cycle b_segs_i reached its mark";
    }
  }
  // A mark already reached does not wait; a later mark waits again.
  tb().commit(1);
  tb().run(10);
  e = tb().random_entry(Kind::kTagged);
  e.mark = 2;
  tb().send(e);
  e = tb().random_entry(Kind::kTagged);
  e.mark = tb().committed();  // 4
  tb().send(e);
  tb().knobs.b_allow = 1;  // the first entry's B (its write was the fourth AW), not the new segment's
  tb().run(40);
  EXPECT_EQ(tb().outcomes.at(1).what, Outcome::kWritten);
  EXPECT_EQ(tb().outcomes.at(2).what, Outcome::kPending);
  tb().knobs.b_allow = -1;
  finish();
  EXPECT_EQ(tb().written, 3U);
}

// Marks, b_segs_i, aw_count_i and b_count_i are free-running 32-bit counts: a mark past 2^32 - 1 still
// waits for b_segs_i (the wrapping compare), and AW positions across the wrap still acknowledge in
// order.
TEST_F(CqWriter, MarksAndCountersWrapAround) {
  tb().setup_ring(kBase, 3);
  tb().knobs.p_commit = 0.2;
  tb().knobs.p_other = 0.2;
  tb().knobs.mark_back = 2;
  // Three jumps of about 2^32 / 3 (other ports' writes while this port is idle), entries between them.
  // The last jump leaves this port's writes alone on the bus, Bs lagging: consecutive completion AWs at
  // positions 2^32 - 1 and 0, both awaiting their B.
  for (const std::uint32_t target : {0x55555555U, 0xAAAAAAAAU, 0xFFFFFFF8U}) {
    const bool last = target == 0xFFFFFFF8U;
    tb().skip(target - tb().aw_count(), (last ? 0xFFFFFFF6U : target) - tb().b_segs());
    tb().knobs.p_commit = last ? 0.0 : 0.2;
    tb().knobs.p_other = last ? 0.0 : 0.2;
    tb().knobs.p_b = last ? 0.5 : 0.7;
    send_n(16);
    finish();
  }
  // The commit count wraps with the segments' Bs held: the entry's mark is past zero, b_segs_i is not.
  const std::uint32_t before = tb().b_segs();
  tb().knobs.p_commit = 0.0;
  tb().knobs.b_allow = 0;
  tb().commit(20);
  ASSERT_TRUE(tb().run_until([&] { return tb().writes_awaiting_b() == 20; }, 200, "segment AWs"));
  ASSERT_LT(tb().committed(), before) << "test bug: the commit count did not wrap";
  rtl::Ce e = tb().random_entry(Kind::kUntagged);
  tb().knobs.auto_mark = false;
  e.mark = tb().committed();
  tb().send(e);
  const std::size_t first = tb().outcomes.size();
  tb().run(50);
  EXPECT_EQ(tb().outcomes.at(first).what, Outcome::kPending)
      << "written with b_segs_i " << tb().b_segs() << " (unsigned above its mark " << e.mark << ")";
  tb().knobs.b_allow = -1;
  tb().knobs.auto_mark = true;
  send_n(40);
  finish();
  EXPECT_EQ(tb().outcomes.at(first).what, Outcome::kWritten);
  EXPECT_LT(tb().aw_count(), 0x1000U) << "aw_count_i wrapped with completion writes in flight";
  EXPECT_LT(tb().b_segs(), 0x1000U);
}

// Room counts entries written, acknowledged or not: full when written - cq_cons_i = 2^log2. The head
// waits for the consumer, then goes into the slot it freed.
TEST_F(CqWriter, FullRingWaitsForConsumer) {
  quiet_bus();
  tb().setup_ring(kBase, 2);  // 4 entries
  tb().knobs.b_allow = 0;     // nothing acknowledged: the producer stays 0
  send_n(10);
  tb().run(60);
  EXPECT_EQ(tb().aw_cycles.size(), 4U) << "a full ring of writes not yet acknowledged";
  tb().knobs.b_allow = -1;
  tb().knobs.host_allow = 0;  // the host reads nothing yet
  tb().run(60);
  EXPECT_EQ(tb().top().cq_prod_o, 4U);
  EXPECT_EQ(tb().aw_cycles.size(), 4U) << "written into a full ring";
  EXPECT_GT(tb().full_stalls, 50U);
  for (unsigned n = 5; n <= 10; ++n) {
    tb().knobs.host_allow = 1;  // one entry read, one slot free
    tb().run(30);
    EXPECT_EQ(tb().aw_cycles.size(), n);
    EXPECT_EQ(tb().outcomes.at(n - 1).addr, kBase + std::uint64_t{hw::kCQE_BYTES} * ((n - 1) % 4));
  }
  tb().knobs.host_allow = -1;
  finish();
  EXPECT_EQ(tb().read_entries.size(), 10U);
}

// With the ring disabled, entries and markers reaching the head leave it and nothing is written; on
// re-enabling, the ring starts again at index 0 with phase 1.
TEST_F(CqWriter, DisabledRingDiscards) {
  quiet_bus();
  tb().setup_ring(kBase, 3);
  send_n(3);
  finish();
  tb().write_enable(false);
  tb().run(3);
  send_n(5, Kind::kTagged);
  tb().send(tb().random_entry(Kind::kMarker));
  tb().send(tb().random_entry(Kind::kError));
  finish();
  EXPECT_EQ(tb().aw_cycles.size(), 3U) << "written while disabled";
  EXPECT_EQ(tb().discarded, 6U);
  EXPECT_EQ(tb().markers_done, 1U);
  EXPECT_EQ(tb().top().cq_prod_o, 3U) << "the producer stays while disabled";
  // Discarding does not wait for the mark: the marker behind the entry (its own mark reached) is done
  // while the entry's segments are still unacknowledged.
  tb().knobs.b_allow = 0;
  tb().knobs.auto_mark = false;
  const std::uint32_t reached_mark = tb().committed();
  tb().commit(2);
  rtl::Ce e = tb().random_entry(Kind::kUntagged);
  e.mark = tb().committed();
  tb().send(e);
  e = tb().random_entry(Kind::kMarker);
  e.mark = reached_mark;
  tb().send(e);
  tb().run(20);
  EXPECT_EQ(tb().outcomes.at(tb().outcomes.size() - 2).what, Outcome::kDiscarded);
  EXPECT_EQ(tb().fence_cycles.size(), 2U) << "the marker behind a discarded entry";
  tb().knobs.b_allow = -1;
  tb().knobs.auto_mark = true;
  finish();
  tb().write_enable(true);
  tb().run(3);
  send_n(2);
  finish();
  ASSERT_EQ(tb().aw_cycles.size(), 5U);
  const std::size_t n = tb().outcomes.size();
  EXPECT_EQ(tb().outcomes.at(n - 2).index, 0U);
  EXPECT_EQ(tb().outcomes.at(n - 2).addr, kBase);
  EXPECT_TRUE(tb().outcomes.at(n - 2).phase);
  EXPECT_EQ(tb().outcomes.at(n - 1).index, 1U);
  EXPECT_EQ(tb().top().cq_prod_o, 2U);
}

// An entry loaded before the disable is still written, to the ring it was loaded for, and CQ_CTRL.busy
// covers it until its B: rnic_regs takes no new ring configuration until then.
TEST_F(CqWriter, EntryLoadedBeforeDisableIsStillWritten) {
  quiet_bus();
  tb().setup_ring(kBase, 3);
  send_n(2);
  finish();
  tb().knobs.p_awready = 0.0;  // the AW waits
  send_n(1);
  ASSERT_TRUE(tb().run_until([&] { return tb().outcomes.size() == 3 && tb().outcomes[2].what == Outcome::kWritten; },
                             20, "the load"));
  tb().write_enable(false);
  tb().write_base(kBase + 0x100000);  // ignored: busy
  tb().run(20);
  EXPECT_TRUE(tb().busy());
  EXPECT_EQ(tb().config_ignored, 1U);
  EXPECT_EQ(tb().base(), kBase);
  tb().knobs.p_awready = 1.0;
  tb().run(20);
  ASSERT_EQ(tb().aw_cycles.size(), 3U);
  EXPECT_EQ(tb().outcomes[2].addr, kBase + 2 * std::uint64_t{hw::kCQE_BYTES});
  EXPECT_EQ(tb().top().cq_prod_o, 3U);
  EXPECT_FALSE(tb().busy());
  tb().write_base(kBase + 0x100000);  // taken now
  tb().run(3);
  EXPECT_EQ(tb().base(), kBase + 0x100000);
  finish();
}

// cq_reset_i (CQ_CTRL.enable written 1 while enabled) while a write is under way: the write finishes on
// the bus, at the address it was loaded for, but is not counted; the producer starts again at 0, phase 1.
TEST_F(CqWriter, ResetMidWriteIsNotCounted) {
  quiet_bus();
  tb().setup_ring(kBase, 3);
  send_n(2);
  finish();
  ASSERT_EQ(tb().top().cq_prod_o, 2U);
  // Reset before the AW is taken.
  tb().knobs.p_awready = 0.0;
  send_n(1);
  ASSERT_TRUE(tb().run_until([&] { return tb().written == 3; }, 20, "the load"));
  tb().write_enable(true);
  tb().run(10);
  EXPECT_EQ(tb().top().cq_prod_o, 0U);
  tb().knobs.p_awready = 1.0;
  tb().run(20);
  ASSERT_EQ(tb().aw_cycles.size(), 3U) << "the write under way finishes on the bus";
  ASSERT_EQ(tb().my_b_cycles.size(), 3U);
  EXPECT_EQ(tb().outcomes[2].addr, kBase + 2 * std::uint64_t{hw::kCQE_BYTES});
  EXPECT_EQ(tb().top().cq_prod_o, 0U) << "counted after the reset";
  EXPECT_EQ(tb().dropped, 1U);
  // Reset after the AW, before the B.
  send_n(1);
  tb().knobs.b_allow = 0;
  ASSERT_TRUE(tb().run_until([&] { return tb().aw_cycles.size() == 4; }, 20, "the AW"));
  tb().run(5);
  tb().write_enable(true);
  tb().run(5);
  tb().knobs.b_allow = -1;
  tb().run(20);
  EXPECT_EQ(tb().my_b_cycles.size(), 4U);
  EXPECT_EQ(tb().top().cq_prod_o, 0U) << "counted after the reset";
  // The next entry: index 0, phase 1.
  send_n(1);
  finish();
  const Outcome& o = tb().outcomes.back();
  EXPECT_EQ(o.index, 0U);
  EXPECT_EQ(o.addr, kBase);
  EXPECT_TRUE(o.phase);
  EXPECT_EQ(tb().top().cq_prod_o, 1U);
  // An entry whose mark is reached in the cq_reset_i cycle is loaded in the next one, at index 0.
  tb().knobs.b_allow = 0;
  tb().knobs.auto_mark = false;
  tb().commit(1);
  tb().run(10);
  rtl::Ce e = tb().random_entry(Kind::kTagged);
  e.mark = tb().committed();
  tb().send(e);
  tb().run(10);
  tb().knobs.b_allow = 1;   // the segment's B in this cycle: b_segs_i reaches the mark in the next
  tb().write_enable(true);  // taken in this cycle: cq_reset_i in the next
  tb().run(10);
  const Outcome& r = tb().outcomes.back();
  EXPECT_EQ(r.what, Outcome::kWritten);
  EXPECT_EQ(r.index, 0U);
  tb().knobs.b_allow = -1;
  finish();
  EXPECT_EQ(tb().top().cq_prod_o, 1U);
}

// cq_busy_o: 1 from the load cycle of a completion write until b_count_i shows the B of the last one
// issued (the cycle after that B), whatever other ports write.
TEST_F(CqWriter, BusyUntilLastB) {
  quiet_bus();
  tb().setup_ring(kBase, 4);
  tb().run(5);
  EXPECT_EQ(tb().top().cq_busy_o, 0U);
  tb().knobs.b_allow = 0;
  send_n(3);
  ASSERT_TRUE(tb().run_until([&] { return tb().aw_cycles.size() == 3; }, 40, "the AWs"));
  tb().other_write();
  tb().commit(1);
  tb().run(10);
  const std::uint64_t load = tb().outcomes.at(0).cycle;
  EXPECT_FALSE(tb().busy_trace.at(load - 1)) << "busy before the load";
  EXPECT_TRUE(tb().busy_trace.at(load)) << "busy in the load cycle";
  for (unsigned i = 0; i < 3; ++i) {
    tb().knobs.b_allow = 1;
    ASSERT_TRUE(tb().run_until([&] { return tb().my_b_cycles.size() == i + 1; }, 40, "a B"));
    tb().run(8);
    const std::uint64_t b = tb().my_b_cycles.back();
    for (std::uint64_t c = load; c <= b; ++c) EXPECT_TRUE(tb().busy_trace.at(c)) << "cycle " << c;
    EXPECT_EQ(tb().busy_trace.at(b + 1), i < 2) << "after B " << i;
  }
  tb().knobs.b_allow = -1;  // the other writes' Bs: busy stays 0
  tb().run(20);
  EXPECT_EQ(tb().top().cq_busy_o, 0U);
  finish();
}

// A fence marker leaves the head (fence_done_o, one pulse) only once every earlier completion is
// written and acknowledged and b_segs_i has reached its own mark; entries behind it wait for it.
TEST_F(CqWriter, FenceWaitsForAcks) {
  quiet_bus();
  tb().setup_ring(kBase, 4);
  tb().knobs.b_allow = 0;
  send_n(2);
  tb().send(tb().random_entry(Kind::kMarker));
  send_n(1);
  tb().run(40);
  EXPECT_EQ(tb().aw_cycles.size(), 2U) << "an entry behind the marker was written before it";
  EXPECT_TRUE(tb().fence_cycles.empty()) << "fence done with completions unacknowledged";
  tb().knobs.b_allow = 1;
  tb().run(40);
  EXPECT_TRUE(tb().fence_cycles.empty()) << "fence done with a completion unacknowledged";
  tb().knobs.b_allow = 1;
  ASSERT_TRUE(tb().run_until([&] { return tb().fence_cycles.size() == 1; }, 20, "fence_done_o"));
  const std::uint64_t last_b = tb().my_b_cycles.at(1);
  // B at t, b_count_i at t + 1, the producer at t + 2 (nothing in flight), the pulse after that cycle.
  EXPECT_EQ(tb().fence_cycles.at(0), last_b + 3);
  tb().knobs.b_allow = -1;
  tb().run(20);
  EXPECT_EQ(tb().aw_cycles.size(), 3U);
  // Its own mark: segments committed before it, Bs held.
  tb().knobs.b_allow = 0;
  tb().commit(2);
  tb().run(10);
  tb().send(tb().random_entry(Kind::kMarker));
  tb().run(40);
  EXPECT_EQ(tb().fence_cycles.size(), 1U) << "fence done before its segments were acknowledged";
  tb().knobs.b_allow = -1;
  tb().run(20);
  EXPECT_EQ(tb().fence_cycles.size(), 2U);
  // Back to back markers: one pulse each.
  for (int i = 0; i < 3; ++i) tb().send(tb().random_entry(Kind::kMarker));
  finish();
  EXPECT_EQ(tb().fence_cycles.size(), 5U);
  EXPECT_EQ(tb().markers_done, 5U);
}

// FLAGS.phase is 1 on the ring's first lap and flips each lap (also for a ring of one entry: the reset
// value of CQ_LOG2_SIZE); addresses run round the ring, the base's low six bits ignored.
TEST_F(CqWriter, PhaseFlipsEachLap) {
  quiet_bus();
  tb().write_base(kBase + 0x3F);
  tb().write_enable(true);
  tb().run(3);
  ASSERT_EQ(tb().log2(), 0U);
  send_n(4);
  finish();
  for (unsigned i = 0; i < 4; ++i) {
    EXPECT_EQ(phase_of(tb().read_entries.at(i)), i % 2 == 0) << "entry " << i << " of a ring of one";
    EXPECT_EQ(tb().outcomes.at(i).addr, kBase);
  }
  tb().setup_ring(kBase + 0x3F, 1);  // two entries
  send_n(9);
  finish();
  for (unsigned i = 0; i < 9; ++i) {
    EXPECT_EQ(phase_of(tb().read_entries.at(4 + i)), ((i / 2) % 2) == 0) << "entry " << i << " of a ring of two";
    EXPECT_EQ(tb().outcomes.at(4 + i).addr, kBase + std::uint64_t{hw::kCQE_BYTES} * (i % 2));
  }
}

// cq_prod_o advances by one per entry, in order, the cycle after b_count_i reaches the entry's own AW
// position; other ports' writes in between do not count.
TEST_F(CqWriter, ProducerAdvancesAfterEachOwnB) {
  quiet_bus();
  tb().setup_ring(kBase, 5);
  tb().knobs.p_other = 0.3;
  tb().knobs.p_commit = 0.1;
  tb().knobs.p_b = 0.4;
  tb().knobs.b_lat = 5;
  tb().knobs.p_awready = 0.6;
  send_n(40);
  ASSERT_TRUE(tb().run_until([&] { return tb().written == 40; }, 2000, "the writes"));
  finish();
  ASSERT_EQ(tb().my_b_cycles.size(), 40U);
  ASSERT_EQ(tb().prod_cycles.size(), 40U);
  // B at t, seen on b_count_i at t + 1 (acknowledge), cq_prod_o at t + 2: one per cycle at most.
  std::uint64_t prev = 0;
  for (std::size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(tb().prod_cycles[i], std::max(tb().my_b_cycles[i] + 2, prev + 1)) << "entry " << i;
    prev = tb().prod_cycles[i];
  }
}

// The next entry is loaded in the cycle of the previous one's last handshake: with every handshake at
// once, one entry per beat count, the input register taking one entry per cycle.
TEST_F(CqWriter, BackToBackEntriesFollowTheLastHandshake) {
  quiet_bus();
  tb().setup_ring(kBase, 6);
  send_n(24);
  finish();
  ASSERT_EQ(tb().aw_cycles.size(), 24U);
  for (std::size_t i = 1; i < 24; ++i) EXPECT_EQ(tb().aw_cycles[i] - tb().aw_cycles[i - 1], kBeats) << "entry " << i;
}

// At most AckDepth (32) entries await their B: the next waits for the oldest acknowledgement.
TEST_F(CqWriter, AckDepthLimitsEntriesAwaitingB) {
  quiet_bus();
  tb().setup_ring(kBase, 8);
  tb().knobs.b_allow = 0;
  send_n(kAckDepth + 4);
  tb().run(400);
  EXPECT_EQ(tb().aw_cycles.size(), kAckDepth);
  EXPECT_GT(tb().depth_stalls, 100U);
  tb().knobs.b_allow = 1;
  tb().run(40);
  EXPECT_EQ(tb().aw_cycles.size(), kAckDepth + 1);
  tb().knobs.b_allow = -1;
  finish();
}

// cq_busy_o once compared b_count_i with the AW position of the last completion write (last_aw_q) by a
// 32-bit wrapping difference, and last_aw_q moves only at this port's AWs: 2^31 writes of other ports
// after the last completion write (place's segments with the ring disabled or idle; at reset last_aw_q is
// 0, so also 2^31 writes before the first one) made cq_busy_o read 1 again with nothing in flight, for
// the next 2^31 writes or, traffic stopped, for ever: CQ_CTRL.busy stayed 1 and rnic_regs refused
// CQ_BASE / CQ_LOG2_SIZE. Busy is now a flag from the AW to its B.
TEST_F(CqWriter, BusyStaysLowAfterTwoToThe31OtherWrites) {
  quiet_bus();
  tb().setup_ring(kBase, 3);
  send_n(1);
  finish();
  tb().skip(0x80000000U, 0x80000000U);  // place's writes, all acknowledged, the ring idle
  tb().run(5);
  EXPECT_EQ(tb().top().cq_busy_o, 0U) << "busy with every completion write acknowledged";
  tb().write_enable(false);
  tb().write_base(kBase + 0x1000);
  tb().run(5);
  EXPECT_EQ(tb().base(), kBase + 0x1000) << "rnic_regs refused the ring configuration";
}

// Everything at once: random gaps and readiness, other writes, marks behind the commit count, ring
// reconfiguration, re-arming (cq_reset_i mid-write), disabled stretches, slow consumers, a few
// thousand entries across five phases, the counters jumping near and past 2^32 between phases.
TEST_F(CqWriter, RandomSoak) {
  start(0);
  Tb& t = tb();
  t.setup_ring(kBase + 0x40 * t.rnd(0, 1000), static_cast<unsigned>(t.rnd(1, 4)));
  t.sw.max_log2 = 6;
  std::uint64_t left = 0;
  // Where aw_count_i and b_count_i jump to before each phase (0: no jump); b_segs_i a little below.
  const std::array<std::uint32_t, 5> targets = {0, 0x55555555U, 0xAAAAAAAAU, 0xFFFFFE00U, 0};
  for (unsigned phase = 0; phase < 5 && !t.failed; ++phase) {
    if (targets[phase] != 0) {
      const std::uint32_t segs = targets[phase] + 0x1FFU - static_cast<std::uint32_t>(t.rnd(0, 0x40));
      t.skip(targets[phase] - t.aw_count(), segs - t.b_segs());
    }
    if (phase == 2) t.setup_ring(kBase, 6);  // slow Bs into a large ring: AckDepth entries in flight
    Knobs& k = t.knobs;
    k.p_valid = t.uniform(0.3, 1.0);
    k.p_awready = t.uniform(0.3, 1.0);
    k.p_wready = t.uniform(0.3, 1.0);
    k.p_b = t.uniform(0.4, 1.0);
    k.b_lat = static_cast<unsigned>(t.rnd(0, 12));
    k.p_commit = t.uniform(0.03, 0.15);
    k.p_other = t.uniform(0.0, 0.1);
    k.mark_back = static_cast<unsigned>(t.rnd(0, 4));
    k.p_consume = phase == 1 ? 0.05 : t.uniform(0.2, 1.0);
    t.sw.p_event = 0.004;
    if (phase == 2) {  // long B latency, everything else at full speed: AckDepth entries await their B
      k.p_valid = k.p_awready = k.p_wready = k.p_b = k.p_consume = 1.0;
      k.b_lat = 100 * kBeats;
      k.p_commit = k.p_other = 0.0;
      t.sw.p_event = 0.0;
    }
    left = 700;
    t.generate([&t, &left](rtl::Ce& e) {
      if (left == 0) return false;
      --left;
      e = t.random_entry();
      return true;
    });
    ASSERT_TRUE(t.run_until([&] { return left == 0; }, 200000, "the phase's entries"));
    // Software ends with the ring enabled, then everything drains.
    t.sw.p_event = 0.0;
    t.sw.rearm = false;
    if (t.sw.state != Tb::Software::kRun) {
      ASSERT_TRUE(t.run_until([&] { return !t.busy(); }, 20000, "busy 0"));
      t.write_enable(true);
      t.sw.state = Tb::Software::kRun;
    }
    finish(200000);
  }
  std::printf(
      "[   INFO   ] %zu entries: %llu written, %llu discarded, %llu markers, %llu dropped by a reset, %llu "
      "abandoned, %llu ring configurations; stalls: mark %llu, full %llu, depth %llu; %llu cycles\n",
      t.outcomes.size(), static_cast<unsigned long long>(t.written), static_cast<unsigned long long>(t.discarded),
      static_cast<unsigned long long>(t.markers_done), static_cast<unsigned long long>(t.dropped),
      static_cast<unsigned long long>(t.abandoned), static_cast<unsigned long long>(t.configs),
      static_cast<unsigned long long>(t.mark_stalls), static_cast<unsigned long long>(t.full_stalls),
      static_cast<unsigned long long>(t.depth_stalls), static_cast<unsigned long long>(t.cycle()));
  EXPECT_GE(t.outcomes.size(), 3500U);
  EXPECT_GT(t.written, 1500U);
  EXPECT_GT(t.discarded, 0U);
  EXPECT_GT(t.markers_done, 30U);
  EXPECT_GT(t.mark_stalls, 0U);
  EXPECT_GT(t.full_stalls, 0U);
  EXPECT_GT(t.depth_stalls, 0U);
  EXPECT_GT(t.dropped, 0U);
  EXPECT_GT(t.configs, 5U);
  EXPECT_LT(t.aw_count(), 0x10000000U) << "aw_count_i and b_count_i wrapped";
  EXPECT_LT(t.b_segs(), 0x10000000U) << "b_segs_i wrapped";
}

}  // namespace
