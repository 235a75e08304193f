// SPDX-License-Identifier: Apache-2.0
// rnic_net_rxring (issue 14, docs/network.md "Rings in host memory") at one DataWidth (RNIC_RXRING_DW;
// rxring.cmake builds it at 512 and 128), against AxiHostMemory (random ready and latency) and a host that
// consumes the ring as the driver will: it polls the phase bit of its next slot (hw.def NRXD FLAGS bit 0,
// 1 on the first lap), checks the descriptor and the copy byte for byte against the packet offered, then
// writes cons_i (sometimes slowly: the ring fills).
// Stimulus as rnic_net_split and the pipeline give it: per packet the copy (one AXI-Stream packet), one
// patch entry per DDP segment (offset of the chunk's type byte, a multiple of 4) from the packet's start
// on, the summary after the copy's last beat; the fates (TAKEN / DUP / DECLINED, structs.def rnic_fate_e)
// in segment order some random cycles after each segment is handed to the pipeline, never more than
// FateDepth handed and not popped (the integrator's gate on fate_pop_o). Random valid gaps everywhere.
// Every packet is either published (its descriptor appears, in packet order, the copy exact with every
// DECLINED segment's chunk type and flags rewritten to {0x84, 0x00}: a PAD chunk, RFC 4820, whose type's
// top bits 10 make SCTP skip it, RFC 9260 3.2) or dropped with one pulse (drop_full: ring full or
// disabled; drop_size: the copy does not fit the slot, or an error B). The guard (RFC 5041 8: the card
// writes only memory it owns): every byte the unit writes lands, when it lands, inside the ring and in a
// slot the unit owns, one the host has released and the unit not yet published:
// (slot - prod) mod 2^n < 2^n - (prod - cons).
// Seed: random tests print theirs; RNIC_TEST_SEED=<n> replays. Waveform with RNIC_FST=<file>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/tb/host_memory.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/sim.hpp"

#define RNIC_CAT2(a, b) a##b
#define RNIC_CAT(a, b) RNIC_CAT2(a, b)
#include RNIC_RXRING_HDR  // the model's header and class, the suite's suffix: rxring.cmake

#define RXRING_SUITE RNIC_CAT(NetRxRing, RNIC_RXRING_NAME)

namespace {

using Model = RNIC_RXRING_CLASS;
using Bytes = std::vector<std::uint8_t>;
using rnic::tb::AxiHostMemory;
using rnic::tb::HostMemConfig;

constexpr unsigned kBeat = RNIC_RXRING_DW / 8;
constexpr unsigned kFateDepth = 64;  // the module's default
constexpr unsigned kMaxSegments = 32;
constexpr unsigned kDescBytes = rnic::hw::kNET_SLOT_DESC_BYTES;
constexpr std::uint8_t kAssocMiss = rnic::hw::kNET_ASSOC_MISS;
constexpr std::uint8_t kTaken = 0, kDup = 1, kDeclined = 2;  // structs.def rnic_fate_e

// The Verilated unit under Sim<> (which drives ap_clk / ap_rst_n): the clock and reset ports renamed.
struct Top : Model {
  CData ap_clk = 0;
  CData ap_rst_n = 0;
  Top(VerilatedContext* ctx, const char* name) : Model(ctx, name) {}
  void eval() {
    clk_i = ap_clk;
    rst_ni = ap_rst_n;
    Model::eval();
  }
};

struct Pkt {
  Bytes copy;
  std::vector<std::uint16_t> offs;  // chunk type byte of each segment, increasing, multiples of 4
  std::vector<std::uint8_t> fates;  // one per segment
  bool hit = false;
  std::uint8_t idx = 0;
  bool mal = false;
  std::uint16_t wire = 0;
  std::uint32_t src_ip = 0;  // the sender (NRXD SRC_IP, SRC_PORT)
  std::uint16_t src_port = 0;
};

Pkt random_pkt(std::mt19937_64& rng, std::size_t len, unsigned max_segs = kMaxSegments) {
  Pkt p;
  p.copy.resize(len);
  for (auto& b : p.copy) b = static_cast<std::uint8_t>(rng());
  const std::size_t slots = len >= 4 ? (len - 4) / 4 + 1 : 0;  // offsets 0, 4, .. <= len - 4
  std::size_t n = std::min<std::size_t>({slots, max_segs, rng() % 3 == 0 ? 0 : rng() % (max_segs + 1)});
  if (n > 0) {
    while (p.offs.size() < n) {
      const auto o = static_cast<std::uint16_t>(4 * (rng() % slots));
      if (std::find(p.offs.begin(), p.offs.end(), o) == p.offs.end()) p.offs.push_back(o);
    }
    std::sort(p.offs.begin(), p.offs.end());
  }
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned r = static_cast<unsigned>(rng() % 10);
    p.fates.push_back(r < 5 ? kTaken : r < 7 ? kDup : kDeclined);
  }
  p.hit = rng() % 4 != 0;
  p.idx = static_cast<std::uint8_t>(rng() % 16);
  p.mal = rng() % 8 == 0;
  p.wire = static_cast<std::uint16_t>(std::min<std::size_t>(65535, len + rng() % 2000));
  p.src_ip = static_cast<std::uint32_t>(rng());
  p.src_port = static_cast<std::uint16_t>(rng());
  return p;
}

// The copy as the host must find it: every DECLINED segment's chunk type and flags -> {0x84, 0x00}.
Bytes expected_copy(const Pkt& p) {
  Bytes b = p.copy;
  for (std::size_t i = 0; i < p.offs.size(); ++i) {
    if (p.fates[i] != kDeclined) continue;
    b[p.offs[i]] = 0x84;
    b[p.offs[i] + 1] = 0x00;
  }
  return b;
}

struct RingCfg {
  std::uint64_t base = 0x100000;
  unsigned log2_slots = 3;
  unsigned slot_log2 = 14;
};

// Gaps: mostly none, some short, a few long.
unsigned random_gap(std::mt19937_64& rng, unsigned pct) {
  if (rng() % 100 >= pct) return 0;
  const unsigned r = static_cast<unsigned>(rng() % 10);
  return r < 8 ? 1 + static_cast<unsigned>(rng() % 3) : 4 + static_cast<unsigned>(rng() % 30);
}

class Bench : public rnic::bus::Component<Top> {
 public:
  Bench(std::uint64_t seed, const RingCfg& ring, const HostMemConfig& mc)
      : rng_(seed), ring_(ring), mem_(sim_, kBeat, mc) {
    sim_.add(this);
    zero_ring();
    mem_.set_land_hook([this](const std::vector<std::pair<std::uint64_t, std::uint8_t>>& bytes, std::uint64_t cyc) {
      for (const auto& w : bytes) guard(w.first, cyc);
      desc_area(bytes, cyc);
    });
    sim_.reset(4);
  }
  ~Bench() override {
    EXPECT_TRUE(sim_.errors().empty()) << sim_.errors().text();
    EXPECT_EQ(errors_, 0U) << "mismatches (first 10 reported above)";
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // ---- knobs --------------------------------------------------------------------------------------
  unsigned in_gap_pct = 20;      // chance of a gap before a copy beat, patch entry, summary, hand
  unsigned fate_lat_max = 60;    // cycles from a segment handed to its fate, at most
  unsigned cons_delay_max = 20;  // cycles the host takes to release a consumed slot
  unsigned slow_cons_pct = 0;    // chance the host takes 500..3000 cycles instead
  bool allow_full = false;       // drop_full allowed (ring full, disabled)
  bool allow_error = false;      // unpublished packets besides too big (error B)
  bool enable = true;
  bool consume = true;                            // the host polls and consumes
  std::size_t copy_stop_after = ~std::size_t{0};  // beats of a packet offered at most (then the copy stalls)

  void offer(Pkt p) { pkts_.push_back(std::move(p)); }
  std::size_t offered() const { return pkts_.size() - base_pkt_; }
  bool too_big(const Pkt& p) const { return p.copy.size() + kDescBytes > (std::size_t{1} << ring_.slot_log2); }

  // Cycles until every packet is accounted for (published and consumed, or dropped), at most limit.
  bool run(std::uint64_t limit = 3'000'000) {
    for (std::uint64_t i = 0; i < limit && !done(); ++i) sim_.tick();
    for (int i = 0; i < 50; ++i) sim_.tick();
    EXPECT_TRUE(done()) << "not done: " << published_ << " published, " << drops() << " dropped of " << pkts_.size()
                        << " (copy at " << copy_pkt_ << ", sums " << sum_pkt_ << ")";
    return done();
  }
  void cycles(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) sim_.tick();
  }
  bool done() const { return copy_pkt_ == pkts_.size() && published_ + drops() == offered() && cons_q_.empty(); }
  std::uint64_t drops() const { return drop_full_ + drop_size_; }

  // Reset in the middle of whatever goes on (the host memory must be quiet: it cannot be reset): the
  // stimulus forgets the packets not yet published, the ring restarts at slot 0.
  void reset_now(int n = 3) {
    sim_.top().ap_rst_n = 0;
    for (int i = 0; i < n; ++i) sim_.tick();
    sim_.top().ap_rst_n = 1;
    restart_stimulus();
  }
  // enable_i low; the host keeps its state.
  void restart_ring() {
    restart_stimulus();
    zero_ring();
  }

  // The host's consumer index, now (pending releases forgotten); the next slot it polls.
  void force_cons(std::uint32_t v) {
    cons_ = v;
    cons_q_.clear();
  }
  std::uint32_t host_next() const { return static_cast<std::uint32_t>(host_next_); }
  Top& top() { return sim_.top(); }
  AxiHostMemory<Top, rnic::bus::ModulePorts>& mem() { return mem_; }
  std::uint64_t now() const { return sim_.cycle(); }
  std::uint64_t published() const { return published_; }
  // Packets never published: skipped by the host's matching, and those after the last published one.
  std::uint64_t skipped() const { return skipped_ + (pkts_.size() - match_); }
  std::uint64_t drop_full() const { return drop_full_; }
  std::uint64_t drop_size() const { return drop_size_; }
  std::uint64_t bresp_errs() const { return bresp_errs_; }
  std::uint64_t pops() const { return pops_; }
  std::uint64_t segs_total() const {
    std::uint64_t n = 0;
    for (std::size_t i = base_pkt_; i < pkts_.size(); ++i) n += pkts_[i].offs.size();
    return n;
  }
  std::uint64_t first_beat() const { return first_beat_; }
  std::uint64_t last_beat() const { return last_beat_; }
  std::uint64_t last_publish() const { return last_publish_; }
  std::uint64_t copy_done() const { return copy_pkt_; }
  bool copy_mid_packet() const { return copy_beat_ > 0; }
  void fail(const std::string& what) {
    if (++errors_ <= 10) ADD_FAILURE() << "cycle " << sim_.cycle() << ": " << what;
  }

  // ---- Component ----------------------------------------------------------------------------------
  void drive(Top& t, std::uint64_t cycle) override {
    t.enable_i = enable;
    t.base_i = ring_.base;
    t.log2_slots_i = static_cast<CData>(ring_.log2_slots);
    t.slot_log2_i = static_cast<CData>(ring_.slot_log2);
    while (!cons_q_.empty() && cons_q_.front().first <= cycle) {
      cons_ = cons_q_.front().second;
      cons_q_.pop_front();
    }
    t.cons_i = cons_;
    // Copy.
    t.s_copy_tvalid_i = 0;
    if (copy_gap_ > 0) {
      --copy_gap_;
    } else if (copy_pkt_ < pkts_.size() && copy_beat_ < copy_stop_after) {
      const Bytes& c = pkts_[copy_pkt_].copy;
      const std::size_t at = copy_beat_ * kBeat;
      const std::size_t here = std::min<std::size_t>(kBeat, c.size() - at);
      for (unsigned i = 0; i < kBeat; ++i) {
        rnic::tb::set_byte(t.s_copy_tdata_i, i, i < here ? c[at + i] : static_cast<std::uint8_t>(rng_()));
        rnic::tb::set_bit(t.s_copy_tkeep_i, i, i < here);
      }
      t.s_copy_tlast_i = at + here == c.size();
      t.s_copy_tvalid_i = 1;
      started_ = std::max(started_, copy_pkt_ + 1);
    }
    // Patch entries: from the packet's start on.
    while (patch_pkt_ < started_ && patch_idx_ == pkts_[patch_pkt_].offs.size()) {
      ++patch_pkt_;
      patch_idx_ = 0;
    }
    t.s_patch_valid_i = 0;
    if (patch_gap_ > 0) {
      --patch_gap_;
    } else if (patch_pkt_ < started_) {
      const Pkt& p = pkts_[patch_pkt_];
      t.s_patch_copy_offset_i = p.offs[patch_idx_];
      t.s_patch_last_i = patch_idx_ + 1 == p.offs.size();
      t.s_patch_valid_i = 1;
    } else {
      t.s_patch_copy_offset_i = static_cast<std::uint16_t>(rng_());
    }
    // Summaries: after the copy's last beat.
    t.s_sum_valid_i = 0;
    if (sum_gap_ > 0) {
      --sum_gap_;
    } else if (sum_pkt_ < copy_pkt_) {
      const Pkt& p = pkts_[sum_pkt_];
      t.s_sum_hit_i = p.hit;
      t.s_sum_assoc_index_i = p.idx;
      t.s_sum_malformed_i = p.mal;
      t.s_sum_segments_i = static_cast<std::uint16_t>(p.offs.size());
      t.s_sum_length_i = p.wire;
      t.s_sum_copy_length_i = static_cast<std::uint16_t>(p.copy.size());
      t.s_sum_src_ip_i = p.src_ip;
      t.s_sum_src_port_i = p.src_port;
      t.s_sum_valid_i = 1;
    }
    // Segments handed to the pipeline (packets up to one ahead of the copy), gated as the integrator
    // does; their fates in order, some cycles later.
    if (hand_gap_ > 0) {
      --hand_gap_;
    } else {
      while (hand_pkt_ < pkts_.size() && hand_pkt_ <= started_ && hand_idx_ == pkts_[hand_pkt_].offs.size()) {
        ++hand_pkt_;
        hand_idx_ = 0;
      }
      if (hand_pkt_ < pkts_.size() && hand_pkt_ <= started_ && handed_ - pops_ < kFateDepth) {
        const std::uint64_t lat = 1 + rng_() % fate_lat_max;
        last_fate_at_ = std::max(last_fate_at_ + 1, cycle + lat);
        fates_.push_back({last_fate_at_, pkts_[hand_pkt_].fates[hand_idx_]});
        ++hand_idx_;
        ++handed_;
        hand_gap_ = random_gap(rng_, in_gap_pct);
      }
    }
    t.fate_valid_i = 0;
    t.fate_i = static_cast<std::uint8_t>(rng_() & 3);
    if (!fates_.empty() && fates_.front().first <= cycle) {
      t.fate_valid_i = 1;
      t.fate_i = fates_.front().second;
      fates_.pop_front();
    }
  }

  void sample(const Top& t, std::uint64_t cycle) override {
    if (t.s_copy_tvalid_i && t.s_copy_tready_o) {
      if (first_beat_ == 0) first_beat_ = cycle;
      last_beat_ = cycle;
      if (t.s_copy_tlast_i) {
        ++copy_pkt_;
        copy_beat_ = 0;
      } else {
        ++copy_beat_;
      }
      copy_gap_ = random_gap(rng_, in_gap_pct);
    }
    if (t.s_patch_valid_i && t.s_patch_ready_o) {
      ++patch_idx_;
      patch_gap_ = random_gap(rng_, in_gap_pct);
    }
    if (t.s_sum_valid_i && t.s_sum_ready_o) {
      ++sum_pkt_;
      sum_gap_ = random_gap(rng_, in_gap_pct);
    }
    if (t.fate_pop_o) ++pops_;
    if (t.drop_full_o) {
      ++drop_full_;
      if (!allow_full) fail("drop_full_o pulsed");
    }
    if (t.drop_size_o) ++drop_size_;
    if (t.drop_full_o && t.drop_size_o) fail("drop_full_o and drop_size_o in one cycle");
    if (t.bresp_err_o) {
      ++bresp_errs_;
      if (!allow_error) fail("bresp_err_o pulsed");
    }
    if (t.error_o) fail("error_o (fate FIFO overflow)");
    if (consume) poll(cycle);
  }

 private:
  std::uint64_t slot_addr(std::uint64_t i) const {
    return ring_.base + ((i & ((std::uint64_t{1} << ring_.log2_slots) - 1)) << ring_.slot_log2);
  }
  void zero_ring() {
    const Bytes z(kDescBytes, 0);
    for (std::uint64_t i = 0; i < (std::uint64_t{1} << ring_.log2_slots); ++i)
      mem_.host_write(slot_addr(i), z.data(), z.size());
  }
  void restart_stimulus() {
    // Packets not fully offered are forgotten; so are fates not delivered. Accounting starts over.
    pkts_.resize(copy_pkt_);
    copy_beat_ = 0;
    copy_stop_after = ~std::size_t{0};
    base_pkt_ = pkts_.size();
    copy_pkt_ = patch_pkt_ = sum_pkt_ = hand_pkt_ = started_ = match_ = pkts_.size();
    patch_idx_ = hand_idx_ = 0;
    fates_.clear();
    handed_ = pops_ = 0;
    published_ = drop_full_ = drop_size_ = skipped_ = 0;
    copy_gap_ = patch_gap_ = sum_gap_ = hand_gap_ = 0;
    host_next_ = 0;
    cons_ = 0;
    cons_q_.clear();
  }

  // The owner check of every landed byte.
  void guard(std::uint64_t a, std::uint64_t cycle) {
    const std::uint64_t n = std::uint64_t{1} << ring_.log2_slots;
    if (a < ring_.base || a >= ring_.base + (n << ring_.slot_log2)) {
      fail("write at 0x" + hex(a) + " outside the ring (cycle " + std::to_string(cycle) + ")");
      return;
    }
    if (!enable || !sim_.top().enable_i) return;  // disabled: the numbering restarts (checked by the drain)
    const std::uint64_t k = (a - ring_.base) >> ring_.slot_log2;
    const std::uint32_t prod = sim_.top().prod_o;
    const std::uint32_t used = prod - cons_;          // published, not yet released
    if (static_cast<std::int32_t>(used) < 0) return;  // the host saw a descriptor before its B: all released
    if (used > n) {
      fail("prod " + std::to_string(prod) + " more than the ring ahead of cons " + std::to_string(cons_));
      return;
    }
    if (((k - prod) & (n - 1)) >= n - used) {
      fail("write at 0x" + hex(a) + " (slot " + std::to_string(k) + ") the host owns: prod " + std::to_string(prod) +
           " cons " + std::to_string(cons_));
    }
  }

  // Bytes 0..15 of a slot are written only by its descriptor: one beat of exactly those 16 bytes (the
  // copy starts at slot + 16, its first beat's strobes exclude the descriptor).
  void desc_area(const std::vector<std::pair<std::uint64_t, std::uint8_t>>& bytes, std::uint64_t cycle) {
    std::size_t in_desc = 0;
    std::uint64_t slot = ~std::uint64_t{0};
    for (const auto& w : bytes) {
      if (w.first < ring_.base || ((w.first - ring_.base) & ((std::uint64_t{1} << ring_.slot_log2) - 1)) >= kDescBytes)
        continue;
      ++in_desc;
      slot = (w.first - ring_.base) >> ring_.slot_log2;
    }
    if (in_desc != 0 && (in_desc != kDescBytes || bytes.size() != kDescBytes)) {
      fail("a write of " + std::to_string(bytes.size()) + " bytes lands on " + std::to_string(in_desc) +
           " descriptor bytes of slot " + std::to_string(slot) + " (cycle " + std::to_string(cycle) + ")");
    }
  }

  // The host: the next slot's phase bit says a descriptor is there.
  void poll(std::uint64_t cycle) {
    const std::uint64_t a = slot_addr(host_next_);
    const std::uint8_t* d = mem_.data() + a;
    const bool phase = ((host_next_ >> ring_.log2_slots) & 1) == 0;
    if (((d[5] & 1) != 0) != phase) return;
    // (A descriptor may be seen before prod_o counts it: it lands before its B.)
    const std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(d[0] | (d[1] << 8)),
                                                  (std::size_t{1} << ring_.slot_log2) - kDescBytes);
    // The packet: the next offered one whose copy this is (the ones before it were dropped).
    std::size_t j = match_;
    const Bytes got(mem_.data() + a + kDescBytes, mem_.data() + a + kDescBytes + len);
    for (; j < copy_pkt_; ++j) {
      if (pkts_[j].copy.size() == len && expected_copy(pkts_[j]) == got) break;
    }
    if (j >= copy_pkt_) {
      fail("descriptor in slot " + std::to_string(host_next_) + " (copy " + std::to_string(len) +
           " bytes) matches no packet from " + std::to_string(match_));
      ++host_next_;
      return;
    }
    const Pkt& p = pkts_[j];
    const std::string at = "packet " + std::to_string(j) + " in slot " + std::to_string(host_next_);
    if (too_big(p)) fail(at + ": published, though its copy does not fit the slot");
    if (j != match_ && !allow_full && !allow_error) {
      // Only packets too big may be skipped.
      for (std::size_t s = match_; s < j; ++s)
        if (!too_big(pkts_[s])) fail("packet " + std::to_string(s) + " never published");
    }
    skipped_ += j - match_;
    // Descriptor fields (hw.def NRXD, little-endian).
    unsigned taken = 0, dup = 0, decl = 0;
    for (auto f : p.fates) (f == kTaken ? taken : f == kDup ? dup : decl)++;
    std::uint8_t want[kDescBytes] = {};
    const auto put = [&](unsigned offset, unsigned bits, std::uint64_t v) {
      for (unsigned i = 0; i < bits / 8; ++i) want[offset + i] = static_cast<std::uint8_t>(v >> (8 * i));
    };
    using namespace rnic::hw;
    put(kNRXD_COPY_LEN_OFFSET, kNRXD_COPY_LEN_BITS, len);
    put(kNRXD_WIRE_LEN_OFFSET, kNRXD_WIRE_LEN_BITS, p.wire);
    put(kNRXD_ASSOC_OFFSET, kNRXD_ASSOC_BITS, p.hit ? p.idx : kAssocMiss);
    put(kNRXD_FLAGS_OFFSET, kNRXD_FLAGS_BITS, (phase ? 1 : 0) | (p.mal ? 2 : 0));
    put(kNRXD_TAKEN_OFFSET, kNRXD_TAKEN_BITS, taken);
    put(kNRXD_DUP_OFFSET, kNRXD_DUP_BITS, dup);
    put(kNRXD_DECLINED_OFFSET, kNRXD_DECLINED_BITS, decl);
    put(kNRXD_SRC_PORT_OFFSET, kNRXD_SRC_PORT_BITS, p.src_port);
    put(kNRXD_SRC_IP_OFFSET, kNRXD_SRC_IP_BITS, p.src_ip);
    for (unsigned i = 0; i < kDescBytes; ++i) {
      if (d[i] != want[i]) {
        fail(at + ": descriptor byte " + std::to_string(i) + " is " + std::to_string(d[i]) + ", want " +
             std::to_string(want[i]));
        break;
      }
    }
    match_ = j + 1;
    ++published_;
    last_publish_ = cycle;
    ++host_next_;
    const unsigned delay = rng_() % 100 < slow_cons_pct ? 500 + static_cast<unsigned>(rng_() % 2500)
                                                        : static_cast<unsigned>(rng_() % (cons_delay_max + 1));
    const std::uint64_t when = std::max(cons_q_.empty() ? cycle + 1 : cons_q_.back().first, cycle + 1 + delay);
    cons_q_.push_back({when, static_cast<std::uint32_t>(host_next_)});
  }

  static std::string hex(std::uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v));
    return b;
  }

  rnic::bus::Sim<Top> sim_;
  std::mt19937_64 rng_;
  RingCfg ring_;
  AxiHostMemory<Top, rnic::bus::ModulePorts> mem_;
  std::vector<Pkt> pkts_;
  std::size_t base_pkt_ = 0;
  std::size_t copy_pkt_ = 0, copy_beat_ = 0, started_ = 0;
  std::size_t patch_pkt_ = 0, patch_idx_ = 0, sum_pkt_ = 0, hand_pkt_ = 0, hand_idx_ = 0;
  unsigned copy_gap_ = 0, patch_gap_ = 0, sum_gap_ = 0, hand_gap_ = 0;
  std::deque<std::pair<std::uint64_t, std::uint8_t>> fates_;
  std::uint64_t last_fate_at_ = 0, handed_ = 0, pops_ = 0;
  std::uint64_t drop_full_ = 0, drop_size_ = 0, bresp_errs_ = 0, published_ = 0, skipped_ = 0;
  std::uint64_t host_next_ = 0;
  std::size_t match_ = 0;
  std::uint32_t cons_ = 0;
  std::deque<std::pair<std::uint64_t, std::uint32_t>> cons_q_;
  std::uint64_t errors_ = 0;
  std::uint64_t first_beat_ = 0, last_beat_ = 0, last_publish_ = 0;
};

std::size_t random_len(std::mt19937_64& rng, std::size_t max = 9216) {
  const unsigned k = static_cast<unsigned>(rng() % 4);
  if (k == 0) return 12 + rng() % 100;
  if (k == 1) return 12 + rng() % 1600;
  return 12 + rng() % (max - 11);
}

// Everything fits and the host is prompt: every packet published in order, byte-exact, the phase bit
// flipping per lap (64 slots, 600 packets: 9 laps; the unit reserves a slot per packet up to ten packets
// ahead of the descriptor it writes, so a ring much smaller than that fills with small packets); every fate popped;
// nothing written the unit does not own. Random ready and latency on every AXI channel, random gaps on every input.
TEST(RXRING_SUITE, RandomTrafficPublishedInOrder) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x52C10001);
  std::mt19937_64 rng(seed);
  Bench bench(seed, RingCfg{0x100000, 6, 14}, HostMemConfig::random(seed));
  for (int i = 0; i < 600; ++i) bench.offer(random_pkt(rng, random_len(rng)));
  bench.run();
  EXPECT_EQ(bench.published(), bench.offered());
  EXPECT_EQ(bench.drops(), 0U);
  EXPECT_EQ(bench.pops(), bench.segs_total()) << "every fate consumed";
  EXPECT_EQ(bench.top().prod_o, bench.offered());
}

// 2^0 = 1 slot and 2 slots, a prompt host: still every packet, in order.
TEST(RXRING_SUITE, OneAndTwoSlots) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x52C10002);
  std::mt19937_64 rng(seed);
  for (unsigned l = 0; l < 2; ++l) {
    Bench bench(seed + l, RingCfg{0x200000, l, 14}, HostMemConfig::random(seed + l));
    for (int i = 0; i < 150; ++i) bench.offer(random_pkt(rng, random_len(rng)));
    bench.allow_full = true;  // the host may not have released the one slot yet
    bench.run();
    EXPECT_EQ(bench.published() + bench.drop_full(), bench.offered()) << "log2_slots " << l;
    EXPECT_EQ(bench.drop_size(), 0U);
    EXPECT_EQ(bench.skipped(), bench.drop_full());
    EXPECT_EQ(bench.pops(), bench.segs_total());
    EXPECT_GT(bench.published(), 0U);
  }
}

// A slow host (ring full): copies dropped whole, one drop_full_o per packet, their fates still consumed
// (later packets stay aligned: byte-exact descriptors and PAD rewrites), nothing written into a slot the
// host has not released.
TEST(RXRING_SUITE, RingFullDropsAndStaysAligned) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x52C10003);
  std::mt19937_64 rng(seed);
  Bench bench(seed, RingCfg{0x100000, 2, 13}, HostMemConfig::random(seed));
  bench.allow_full = true;
  bench.slow_cons_pct = 30;
  for (int i = 0; i < 400; ++i) bench.offer(random_pkt(rng, random_len(rng, 8000)));
  bench.run(6'000'000);
  EXPECT_GT(bench.drop_full(), 0U) << "the ring never filled";
  EXPECT_GT(bench.published(), 0U);
  EXPECT_EQ(bench.drop_size(), 0U);
  EXPECT_EQ(bench.skipped(), bench.drop_full());
  EXPECT_EQ(bench.published() + bench.drop_full(), bench.offered());
  EXPECT_EQ(bench.pops(), bench.segs_total());
  std::printf("[   INFO   ] %llu published, %llu dropped (ring full)\n",
              static_cast<unsigned long long>(bench.published()), static_cast<unsigned long long>(bench.drop_full()));
}

// 4 KiB slots (slot_log2 12) and copies up to 9216 bytes: a copy longer than 4080 is not published
// (drop_size_o once), nothing of it lands outside its slot (one slot: past it is outside the ring), the
// slot is reused by the next packet.
TEST(RXRING_SUITE, SlotTooSmall) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x52C10004);
  std::mt19937_64 rng(seed);
  for (unsigned l : {0U, 5U}) {
    Bench bench(seed + l, RingCfg{0x300000, l, 12}, HostMemConfig::random(seed + l));
    bench.allow_full = l == 0;
    std::uint64_t big = 0;
    for (int i = 0; i < 200; ++i) {
      const std::size_t len = rng() % 2 == 0 ? 4070 + rng() % 20 : random_len(rng);
      Pkt p = random_pkt(rng, len);
      if (bench.too_big(p)) ++big;
      bench.offer(std::move(p));
    }
    bench.run();
    if (l == 0) {
      EXPECT_LE(bench.drop_size(), big);  // one slot: some dropped as full before their size is known
    } else {
      EXPECT_EQ(bench.drop_size(), big) << "log2_slots " << l;
    }
    EXPECT_EQ(bench.published() + bench.drops(), bench.offered());
    EXPECT_EQ(bench.skipped(), bench.drops());
    EXPECT_EQ(bench.pops(), bench.segs_total());
    EXPECT_GT(big, 0U);
  }
}

// SLVERR on part of one slot (from its byte 3000 on): packets whose copy or PAD reaches it are not published
// (drop_size_o), bresp_err_o pulses per bad B; the packets after stay in order and exact.
TEST(RXRING_SUITE, SlvErrNotPublished) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x52C10005);
  std::mt19937_64 rng(seed);
  const RingCfg ring{0x100000, 5, 13};
  HostMemConfig mc = HostMemConfig::random(seed);
  mc.write_err_lo = ring.base + (std::uint64_t{2} << ring.slot_log2) + 3000;
  mc.write_err_hi = ring.base + (std::uint64_t{3} << ring.slot_log2);
  Bench bench(seed, ring, mc);
  bench.allow_error = true;
  for (int i = 0; i < 300; ++i) bench.offer(random_pkt(rng, random_len(rng, 8000)));
  bench.run();
  EXPECT_GT(bench.bresp_errs(), 0U);
  EXPECT_EQ(bench.bresp_errs(), bench.mem().b_errors());
  EXPECT_GT(bench.drop_size(), 0U);
  // Per bad packet, at most the packets in flight behind it (reserved past its slot) go with it.
  EXPECT_LE(bench.drop_size(), 12 * bench.bresp_errs());
  EXPECT_GT(bench.published(), bench.offered() / 2);
  EXPECT_EQ(bench.drop_full(), 0U);
  EXPECT_EQ(bench.published() + bench.drops(), bench.offered());
  EXPECT_EQ(bench.skipped(), bench.drops());
  EXPECT_EQ(bench.pops(), bench.segs_total());
  std::printf("[   INFO   ] %llu published, %llu not (drop_size), %llu error B\n",
              static_cast<unsigned long long>(bench.published()), static_cast<unsigned long long>(bench.drop_size()),
              static_cast<unsigned long long>(bench.bresp_errs()));
}

// enable_i low in the middle of traffic: every issued burst completes, then nothing more is written
// while traffic goes on (dropped as drop_full); enable_i high again: prod_o restarts at 0 and the ring
// from slot 0 with phase 1, every later packet published.
TEST(RXRING_SUITE, EnableLowThenHigh) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x52C10006);
  std::mt19937_64 rng(seed);
  Bench bench(seed, RingCfg{0x100000, 5, 14}, HostMemConfig::random(seed));
  bench.allow_full = true;
  for (int i = 0; i < 400; ++i) bench.offer(random_pkt(rng, random_len(rng)));
  bench.cycles(2000 + rng() % 2000);
  bench.enable = false;
  // The packet in progress may be written to its end; then every burst completes.
  const std::size_t at = bench.copy_done();
  for (int i = 0; i < 100000 && bench.copy_done() == at && bench.copy_mid_packet(); ++i) bench.cycles(1);
  for (int i = 0; i < 4000 && (bench.top().busy_o || !bench.mem().idle()); ++i) bench.cycles(1);
  bench.cycles(100);
  EXPECT_EQ(bench.top().busy_o, 0);
  EXPECT_EQ(bench.top().prod_o, 0U) << "prod restarts";
  const std::uint64_t beats = bench.mem().w_beats(), aws = bench.mem().aw_count();
  const std::size_t copies = bench.copy_done();
  // Traffic goes on, disabled, and cons_i says every slot is free (0, as prod_o): still nothing written.
  bench.consume = false;
  bench.force_cons(0);
  bench.cycles(5000);
  EXPECT_GT(bench.copy_done(), copies) << "no traffic while disabled";
  bench.force_cons(bench.host_next());
  bench.consume = true;
  EXPECT_EQ(bench.mem().w_beats(), beats) << "written after the drain";
  EXPECT_EQ(bench.mem().aw_count(), aws) << "AW after the drain";
  // Every offered packet through (dropped), then the host restarts the ring.
  bench.run();
  EXPECT_EQ(bench.mem().aw_count(), aws);
  bench.restart_ring();
  bench.enable = true;
  bench.allow_full = false;
  for (int i = 0; i < 200; ++i) bench.offer(random_pkt(rng, random_len(rng)));
  bench.run();
  EXPECT_EQ(bench.published(), 200U);
  EXPECT_EQ(bench.top().prod_o, 200U);
  EXPECT_EQ(bench.pops(), bench.segs_total());
}

// Reset in the middle of a packet (copy beats, patch entries and fates of it taken; the host memory
// quiet: no burst of the unit is in flight, its first burst not complete), then nothing written, then
// clean traffic from slot 0.
TEST(RXRING_SUITE, ResetMidPacket) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x52C10007);
  std::mt19937_64 rng(seed);
  Bench bench(seed, RingCfg{0x100000, 5, 14}, HostMemConfig::random(seed));
  for (int i = 0; i < 50; ++i) bench.offer(random_pkt(rng, random_len(rng)));
  bench.run();
  // A long packet whose copy stops after 5 beats (less than one burst: no AW yet).
  bench.copy_stop_after = 5;
  bench.offer(random_pkt(rng, 9000));
  bench.cycles(300);
  ASSERT_TRUE(bench.copy_mid_packet());
  EXPECT_EQ(bench.top().busy_o, 0);
  ASSERT_TRUE(bench.mem().idle());
  const std::uint64_t aws = bench.mem().aw_count();
  bench.reset_now();
  bench.restart_ring();
  bench.in_gap_pct = 20;
  bench.cycles(2000);
  EXPECT_EQ(bench.mem().aw_count(), aws) << "written after the reset with no input";
  EXPECT_EQ(bench.top().prod_o, 0U);
  for (int i = 0; i < 200; ++i) bench.offer(random_pkt(rng, random_len(rng)));
  bench.run();
  EXPECT_EQ(bench.published(), 200U);
  EXPECT_EQ(bench.pops(), bench.segs_total());
}

// Throughput: 100 back-to-back packets of 44, 1500 and 9000 bytes, one segment each (TAKEN, its fate one
// cycle after it is handed), every ready high: cycles per packet on the input (first beat to last) and to
// the last descriptor. Printed; only a generous bound is asserted.
TEST(RXRING_SUITE, ThroughputFigures) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x52C10008);
  std::mt19937_64 rng(seed);
  for (const std::size_t len : {std::size_t{44}, std::size_t{1500}, std::size_t{9000}}) {
    HostMemConfig mc;
    mc.seed = seed;
    Bench bench(seed, RingCfg{0x100000, 4, 14}, mc);
    bench.in_gap_pct = 0;
    bench.fate_lat_max = 1;
    bench.cons_delay_max = 0;
    for (int i = 0; i < 100; ++i) {
      Pkt p = random_pkt(rng, len, 1);
      p.offs = {0};
      p.fates = {kTaken};
      bench.offer(std::move(p));
    }
    bench.run();
    EXPECT_EQ(bench.published(), 100U);
    const std::size_t beats = (len + kBeat - 1) / kBeat;
    const double in = static_cast<double>(bench.last_beat() - bench.first_beat() + 1) / 100.0;
    const double all = static_cast<double>(bench.last_publish() - bench.first_beat() + 1) / 100.0;
    std::printf(
        "[   INFO   ] DataWidth %u, %zu-byte copies (%zu beats): %.2f cycles per packet on the input, "
        "%.2f to the last descriptor\n",
        RNIC_RXRING_DW, len, beats, in, all);
    EXPECT_LT(in, 2.0 * static_cast<double>(beats) + 20.0) << len;
  }
}

}  // namespace
