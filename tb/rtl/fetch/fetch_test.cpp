// SPDX-License-Identifier: Apache-2.0
// rnic_lookup_fetch at its interface (DataWidth FT_DW, MaxReads FT_READS, NumQueues FT_QUEUES).
//
// The environment: stage C's direct requester (dir_valid_i held until dir_take_o, then no new request
// until its rsp_dir_o), the prefetch engine (eng_valid_i with address, queue and MSN, held until
// eng_ready_o), eng_hold_i and r_hold_i, and an AXI read slave over host memory (sparse: the bytes a
// test wrote, every other byte a hash of its address, so a descriptor read at the wrong offset reads
// something else): random ARREADY, one burst per AR in AR order, its first beat a random number of
// cycles after the AR handshake, random gaps between beats, RVALID and the beat held until RREADY,
// RRESP != OKAY on planned or random beats.
//
// The reference runs beside the RTL and checks every cycle, from the inputs of the cycle and its own
// state (the AR register, the in-order record of reads from their take to their last beat):
//   dir_take_o   = a direct read waits, the AR register is free (empty or accepted in this cycle) and
//                  the record holds fewer than MaxReads reads (a read answered in this cycle still
//                  counts: the record is a FIFO whose ready is a register)
//   eng_ready_o  = the same for the engine, when no direct read waits and eng_hold_i is 0
//   ARVALID while a read is in the AR register, ARADDR the descriptor's address rounded down to the beat
//   (128 bits and more, ARLEN 0) or the address itself (64 bits, ARLEN 1), stable until accepted
//   RREADY       = !r_hold_i
//   at each burst's last beat: rsp_dir_o (a direct read) or land_o (an engine read, with its queue and
//   MSN), rsp_addr_o / rsp_len_o the descriptor as host memory holds it (hw.def RNIC_RECORD(RQD)),
//   rsp_err_o when any beat of that burst was not OKAY; no pulse in any other cycle
//   busy_o       = a read is in the AR register or in the record.
// The direct requester also checks that its answer is its own descriptor.
//
// Directed tests: the priority (Fetch.DirectReadGoesFirst), the record's limit
// (Fetch.RecordFullStopsReads), answers in order to their consumer (Fetch.AnswersInOrderToTheirConsumer),
// faults (Fetch.SlaveErrorFaultsOnlyThatDescriptor), eng_hold_i and r_hold_i (Fetch.HoldStopsEngineAndR),
// the descriptor's place in its beat (Fetch.DescriptorAtItsByteOffset), the AR register
// (Fetch.AddressHeldUntilAccepted), busy_o (Fetch.BusyWhileReadInArOrInFlight); a random run
// (Fetch.RandomTrafficMatchesReference, RNIC_TEST_SEED) through phases of rates, latencies, holds and
// faults, with coverage counters required. Waveform with RNIC_FST=<file>.
#include "Vrnic_lookup_fetch.h"
#include "rnic/tb/stage_sim.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/tb/seed.hpp"

namespace {

namespace hw = rnic::hw;

constexpr unsigned kDataWidth = FT_DW;
constexpr unsigned kMaxReads = FT_READS;
constexpr unsigned kQueues = FT_QUEUES;
constexpr unsigned kBytes = kDataWidth / 8;  // bytes per beat
constexpr unsigned kDescBytes = hw::kRQ_DESC_BYTES;
constexpr unsigned kBeats = kBytes >= kDescBytes ? 1U : kDescBytes / kBytes;  // beats per descriptor
constexpr std::uint64_t kBeatMask = kBytes - 1U;
constexpr unsigned kMaxBeatBytes = 64;  // the widest bus
static_assert(kBytes <= kMaxBeatBytes);

// RRESP (AXI A3.4.4).
constexpr std::uint8_t kOkay = 0, kExOkay = 1, kSlvErr = 2, kDecErr = 3;

// The burst the RTL issues for the descriptor at desc.
std::uint64_t ExpectedAraddr(std::uint64_t desc) { return kBytes >= kDescBytes ? desc & ~kBeatMask : desc; }

std::uint64_t Mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A receive descriptor (hw.def RNIC_RECORD(RQD)).
struct Desc {
  std::uint64_t addr = 0;
  std::uint32_t len = 0;
  std::uint32_t cookie = 0;
};

// Host memory: the bytes written, every other byte a hash of its address.
class HostMemory {
 public:
  void set_salt(std::uint64_t salt) {
    salt_ = salt;
    bytes_.clear();
  }
  std::uint8_t byte(std::uint64_t a) const {
    const auto it = bytes_.find(a);
    return it != bytes_.end() ? it->second : static_cast<std::uint8_t>(Mix(a ^ salt_));
  }
  void put(std::uint64_t a, std::uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) bytes_[a + i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  std::uint64_t get(std::uint64_t a, unsigned n) const {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= std::uint64_t{byte(a + i)} << (8 * i);
    return v;
  }
  void put_desc(std::uint64_t at, const Desc& d) {
    put(at + hw::kRQD_ADDR_OFFSET, d.addr, hw::kRQD_ADDR_BITS / 8);
    put(at + hw::kRQD_LENGTH_OFFSET, d.len, hw::kRQD_LENGTH_BITS / 8);
    put(at + hw::kRQD_COOKIE_OFFSET, d.cookie, hw::kRQD_COOKIE_BITS / 8);
  }
  Desc get_desc(std::uint64_t at) const {
    Desc d;
    d.addr = get(at + hw::kRQD_ADDR_OFFSET, hw::kRQD_ADDR_BITS / 8);
    d.len = static_cast<std::uint32_t>(get(at + hw::kRQD_LENGTH_OFFSET, hw::kRQD_LENGTH_BITS / 8));
    d.cookie = static_cast<std::uint32_t>(get(at + hw::kRQD_COOKIE_OFFSET, hw::kRQD_COOKIE_BITS / 8));
    return d;
  }

 private:
  std::uint64_t salt_ = 0;
  std::unordered_map<std::uint64_t, std::uint8_t> bytes_;
};

// A read request: whose, for which queue and MSN, the descriptor's address.
struct Read {
  bool dir = false;
  unsigned queue = 0;
  std::uint32_t msn = 0;
  std::uint64_t desc = 0;
  std::uint64_t cycle = 0;  // taken (logs)
};

// An answer as the RTL gave it.
struct Answer {
  std::uint64_t cycle = 0;
  bool dir = false;  // rsp_dir_o (else land_o)
  unsigned queue = 0;
  std::uint32_t msn = 0;
  std::uint64_t addr = 0;
  std::uint32_t len = 0;
  bool err = false;
};

struct ArLog {
  std::uint64_t cycle = 0;
  std::uint64_t addr = 0;
  unsigned len = 0;
};

// One burst of the slave.
struct Burst {
  std::uint64_t addr = 0;
  unsigned beats = 0;
  std::uint64_t ready = 0;  // the first cycle its first beat may be presented
  std::vector<std::uint8_t> resp;
  unsigned next = 0;  // the next beat to present
};

// The outputs of one cycle.
struct Out {
  bool dir_take = false, eng_ready = false, rsp_dir = false, land = false, rsp_err = false, busy = false;
  bool arvalid = false, rready = false;
  unsigned land_queue = 0, arlen = 0;
  std::uint32_t land_msn = 0, rsp_len = 0;
  std::uint64_t rsp_addr = 0, araddr = 0;
};

// The environment's rates (percent per cycle) and latencies.
struct Knobs {
  unsigned dir_pct = 0;  // an idle direct requester asks for a random descriptor
  unsigned eng_pct = 0;  // an idle engine offers a random read
  unsigned eng_hold_pct = 0;
  unsigned r_hold_pct = 0;
  unsigned arready_pct = 100;
  unsigned lat_min = 0, lat_max = 0;  // cycles from the AR handshake's next cycle to the first beat
  unsigned gap_pct = 0;               // no beat presented although one could be
  unsigned err_pct = 0;               // a beat's RRESP is not OKAY
  bool r_pause = false;               // no new beat presented (one already presented stays)
};

template <class T>
void SetBeat(T& port, const std::array<std::uint8_t, kMaxBeatBytes>& b) {
  if constexpr (std::is_integral_v<T>) {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < kBytes; ++i) v |= std::uint64_t{b[i]} << (8 * i);
    port = static_cast<T>(v);
  } else {
    for (unsigned w = 0; w < kBytes / 4; ++w) {
      port[w] = std::uint32_t{b[4 * w]} | std::uint32_t{b[4 * w + 1]} << 8 | std::uint32_t{b[4 * w + 2]} << 16 |
                std::uint32_t{b[4 * w + 3]} << 24;
    }
  }
}

constexpr std::uint64_t kDirectedSeed = 0x0F37C4ULL;  // the directed tests' environment (no seed printed)

class Fetch : public ::testing::Test {
 protected:
  enum class DirState { kIdle, kWant, kWait };

  void SetUp() override { Start(kDirectedSeed); }

  // Resets the RTL, the environment and the reference; host memory holds a pool of random descriptors
  // (the random requests' addresses).
  void Start(std::uint64_t seed) {
    rng_.seed(seed);
    mem_.set_salt(rng_());
    pool_.clear();
    slots_.clear();
    for (int i = 0; i < 48; ++i) pool_.push_back(NewDescriptor(RandomSlot()));
    dir_state_ = DirState::kIdle;
    eng_valid_ = eng_hold_ = r_hold_ = arready_ = r_valid_ = false;
    Drive();
    sim_.reset(2);
    cycle_ = 0;
  }

  // ---- host memory ------------------------------------------------------------------------------
  // A 16-byte aligned address not used yet.
  std::uint64_t RandomSlot() {
    for (;;) {
      const std::uint64_t at = rng_() & ~std::uint64_t{kDescBytes - 1U};
      if (slots_.insert(at).second) return at;
    }
  }
  // A random descriptor written at `at`; returns `at`.
  std::uint64_t NewDescriptor(std::uint64_t at) {
    slots_.insert(at);
    mem_.put_desc(at, Desc{rng_(), static_cast<std::uint32_t>(rng_()), static_cast<std::uint32_t>(rng_())});
    return at;
  }
  // A read of a new descriptor (directed tests).
  Read NewRead(bool dir, unsigned queue, std::uint32_t msn) {
    return Read{dir, queue % kQueues, msn, NewDescriptor(RandomSlot()), 0};
  }
  Read RandomRead(bool dir) {
    return Read{dir, static_cast<unsigned>(rng_() % kQueues), static_cast<std::uint32_t>(rng_()),
                pool_[rng_() % pool_.size()], 0};
  }
  bool Chance(unsigned pct) { return pct >= 100 || (pct > 0 && rng_() % 100 < pct); }

  // ---- one cycle ----------------------------------------------------------------------------------
  void Step() {
    Choose();
    Drive();
    sim_.eval();
    Observe();
    sim_.tick();
    ++cycle_;
  }
  std::string At() const { return "cycle " + std::to_string(cycle_); }

  // This cycle's inputs, from the environment's state and the knobs.
  void Choose() {
    arready_ = Chance(k_.arready_pct);
    eng_hold_ = Chance(k_.eng_hold_pct);
    r_hold_ = Chance(k_.r_hold_pct);
    if (dir_state_ == DirState::kIdle) {
      if (!dir_plan_.empty()) {
        dir_req_ = dir_plan_.front();
        dir_plan_.pop_front();
        dir_state_ = DirState::kWant;
      } else if (Chance(k_.dir_pct)) {
        dir_req_ = RandomRead(true);
        dir_state_ = DirState::kWant;
      }
    }
    if (!eng_valid_) {
      if (!eng_plan_.empty()) {
        eng_req_ = eng_plan_.front();
        eng_plan_.pop_front();
        eng_valid_ = true;
      } else if (Chance(k_.eng_pct)) {
        eng_req_ = RandomRead(false);
        eng_valid_ = true;
      }
    }
    if (!r_valid_ && !bursts_.empty() && !k_.r_pause && cycle_ >= bursts_.front().ready && !Chance(k_.gap_pct)) {
      const Burst& b = bursts_.front();
      r_valid_ = true;
      r_last_ = b.next + 1U == b.beats;
      r_resp_ = b.resp[b.next];
      for (unsigned i = 0; i < kBytes; ++i) r_data_[i] = mem_.byte(b.addr + std::uint64_t{b.next} * kBytes + i);
    }
  }

  void Drive() {
    auto& m = sim_.model();
    const bool dv = dir_state_ == DirState::kWant;
    // Payloads not valid are garbage.
    m.dir_valid_i = dv ? 1 : 0;
    m.dir_addr_i = dv ? dir_req_.desc : rng_();
    m.dir_queue_i = static_cast<std::uint8_t>((dv ? dir_req_.queue : rng_()) % kQueues);
    m.dir_msn_i = dv ? dir_req_.msn : static_cast<std::uint32_t>(rng_());
    m.eng_valid_i = eng_valid_ ? 1 : 0;
    m.eng_addr_i = eng_valid_ ? eng_req_.desc : rng_();
    m.eng_queue_i = static_cast<std::uint8_t>((eng_valid_ ? eng_req_.queue : rng_()) % kQueues);
    m.eng_msn_i = eng_valid_ ? eng_req_.msn : static_cast<std::uint32_t>(rng_());
    m.eng_hold_i = eng_hold_ ? 1 : 0;
    m.r_hold_i = r_hold_ ? 1 : 0;
    m.m_axi_arready_i = arready_ ? 1 : 0;
    m.m_axi_rvalid_i = r_valid_ ? 1 : 0;
    m.m_axi_rlast_i = r_valid_ ? (r_last_ ? 1 : 0) : static_cast<std::uint8_t>(rng_() & 1U);
    m.m_axi_rresp_i = r_valid_ ? r_resp_ : static_cast<std::uint8_t>(rng_() & 3U);
    std::array<std::uint8_t, kMaxBeatBytes> garbage{};
    if (!r_valid_) {
      for (auto& b : garbage) b = static_cast<std::uint8_t>(rng_());
    }
    SetBeat(m.m_axi_rdata_i, r_valid_ ? r_data_ : garbage);
  }

  // The settled outputs of this cycle: the reference's checks, then the environment's and the
  // reference's updates at the edge.
  void Observe() {
    auto& m = sim_.model();
    Out o;
    o.dir_take = m.dir_take_o != 0;
    o.eng_ready = m.eng_ready_o != 0;
    o.rsp_dir = m.rsp_dir_o != 0;
    o.land = m.land_o != 0;
    o.land_queue = m.land_queue_o;
    o.land_msn = m.land_msn_o;
    o.rsp_addr = m.rsp_addr_o;
    o.rsp_len = m.rsp_len_o;
    o.rsp_err = m.rsp_err_o != 0;
    o.busy = m.busy_o != 0;
    o.araddr = m.m_axi_araddr_o;
    o.arlen = m.m_axi_arlen_o;
    o.arvalid = m.m_axi_arvalid_o != 0;
    o.rready = m.m_axi_rready_o != 0;
    out_ = o;
    const bool check = !HasFailure();  // the first failing cycle's mismatches, not one per later cycle
    const bool dir_valid = dir_state_ == DirState::kWant;

    // ---- the reference
    const bool ar_free = !ref_ar_valid_ || arready_;
    const bool room = record_.size() < kMaxReads;
    const bool exp_dir = dir_valid && ar_free && room;
    const bool exp_eng = !dir_valid && eng_valid_ && ar_free && room && !eng_hold_;
    const bool exp_r_take = r_valid_ && !r_hold_;
    const bool exp_done = exp_r_take && r_last_;
    if (check) {
      EXPECT_EQ(o.dir_take, exp_dir) << At() << ": dir_take_o (direct read waiting " << dir_valid << ", AR free "
                                     << ar_free << ", record " << record_.size() << " of " << kMaxReads << ")";
      EXPECT_EQ(o.eng_ready, exp_eng) << At() << ": eng_ready_o (engine valid " << eng_valid_ << ", direct waiting "
                                      << dir_valid << ", eng_hold_i " << eng_hold_ << ", AR free " << ar_free
                                      << ", record " << record_.size() << " of " << kMaxReads << ")";
      EXPECT_EQ(o.arvalid, ref_ar_valid_) << At() << ": ARVALID";
      if (o.arvalid && ref_ar_valid_) {
        EXPECT_EQ(o.araddr, ExpectedAraddr(ref_ar_.desc))
            << At() << ": ARADDR for the descriptor at 0x" << std::hex << ref_ar_.desc;
        EXPECT_EQ(o.arlen, kBeats - 1U) << At() << ": ARLEN";
      }
      EXPECT_EQ(o.rready, !r_hold_) << At() << ": RREADY with r_hold_i " << r_hold_;
      EXPECT_EQ(o.busy, ref_ar_valid_ || !record_.empty())
          << At() << ": busy_o (AR register " << ref_ar_valid_ << ", record " << record_.size() << ")";
      if (exp_done && !record_.empty()) {
        const Read& r = record_.front();
        const Desc d = mem_.get_desc(r.desc);
        const bool err = r_err_ || r_resp_ != kOkay;
        EXPECT_EQ(o.rsp_dir, r.dir) << At() << ": rsp_dir_o for the read of 0x" << std::hex << r.desc;
        EXPECT_EQ(o.land, !r.dir) << At() << ": land_o for the read of 0x" << std::hex << r.desc;
        EXPECT_EQ(o.rsp_addr, d.addr) << At() << ": rsp_addr_o of the descriptor at 0x" << std::hex << r.desc;
        EXPECT_EQ(o.rsp_len, d.len) << At() << ": rsp_len_o of the descriptor at 0x" << std::hex << r.desc;
        EXPECT_EQ(o.rsp_err, err) << At() << ": rsp_err_o of the descriptor at 0x" << std::hex << r.desc;
        if (!r.dir) {
          EXPECT_EQ(o.land_queue, r.queue) << At() << ": land_queue_o";
          EXPECT_EQ(o.land_msn, r.msn) << At() << ": land_msn_o";
        }
      } else {
        EXPECT_FALSE(o.rsp_dir) << At() << ": rsp_dir_o without a last beat taken";
        EXPECT_FALSE(o.land) << At() << ": land_o without a last beat taken";
      }
    }
    // ---- statistics
    if (record_.size() >= kMaxReads && (dir_valid || eng_valid_)) ++full_waits_;
    if (dir_valid && eng_valid_) ++collisions_;
    if (eng_hold_ && eng_valid_ && !dir_valid && ar_free && room) ++hold_blocks_;
    if (r_hold_ && r_valid_) ++r_hold_stalls_;
    if (ref_ar_valid_ && !arready_) ++ar_stalls_;

    // Reference updates.
    if (exp_dir || exp_eng) {
      Read r = exp_dir ? dir_req_ : eng_req_;
      r.cycle = cycle_;
      ref_ar_valid_ = true;
      ref_ar_ = r;
      record_.push_back(r);
    } else if (arready_) {
      ref_ar_valid_ = false;
    }
    if (exp_r_take) r_err_ = r_err_ || r_resp_ != kOkay;
    if (exp_done) {
      if (!record_.empty()) record_.pop_front();
      r_err_ = false;
    }

    // ---- the environment, from the RTL's outputs
    if (o.rsp_dir || o.land) {
      answers_.push_back(Answer{cycle_, o.rsp_dir, o.land_queue, o.land_msn, o.rsp_addr, o.rsp_len, o.rsp_err});
      err_answers_ += o.rsp_err ? 1U : 0U;
    }
    if (o.rsp_dir) {
      if (dir_state_ != DirState::kWait) {
        if (check) ADD_FAILURE() << At() << ": rsp_dir_o while the direct requester waits for nothing";
      } else {
        const Desc d = mem_.get_desc(dir_req_.desc);
        if (check) {
          EXPECT_EQ(o.rsp_addr, d.addr) << At() << ": the direct read's own descriptor";
          EXPECT_EQ(o.rsp_len, d.len) << At() << ": the direct read's own descriptor";
        }
        dir_state_ = DirState::kIdle;
      }
    }
    if (dir_valid && o.dir_take) {
      dir_state_ = DirState::kWait;
      Read r = dir_req_;
      r.cycle = cycle_;
      takes_.push_back(r);
    }
    if (eng_valid_ && o.eng_ready) {
      eng_valid_ = false;
      Read r = eng_req_;
      r.cycle = cycle_;
      takes_.push_back(r);
    }
    max_outstanding_ = std::max<std::uint64_t>(max_outstanding_, takes_.size() - answers_.size());
    // The slave: AR, then R.
    if (o.arvalid && arready_) {
      Burst b;
      b.addr = o.araddr;
      b.beats = o.arlen + 1U;
      const unsigned span = k_.lat_max > k_.lat_min ? k_.lat_max - k_.lat_min + 1U : 1U;
      b.ready = cycle_ + 1U + k_.lat_min + static_cast<unsigned>(rng_() % span);
      const auto plan = resp_plan_.find(ars_.size());
      for (unsigned i = 0; i < b.beats; ++i) {
        std::uint8_t resp = kOkay;
        if (plan != resp_plan_.end()) {
          resp = i < plan->second.size() ? plan->second[i] : kOkay;
        } else if (Chance(k_.err_pct)) {
          resp = static_cast<std::uint8_t>(1U + rng_() % 3U);
        }
        b.resp.push_back(resp);
      }
      bursts_.push_back(b);
      ars_.push_back(ArLog{cycle_, o.araddr, o.arlen});
    }
    if (r_valid_ && o.rready) {
      ++beats_taken_;
      r_valid_ = false;
      if (!bursts_.empty()) {
        Burst& b = bursts_.front();
        if (++b.next == b.beats) bursts_.pop_front();
      }
    }
  }

  // ---- helpers of the tests ------------------------------------------------------------------------
  bool Quiet() const {
    return dir_state_ == DirState::kIdle && !eng_valid_ && dir_plan_.empty() && eng_plan_.empty() && !ref_ar_valid_ &&
           record_.empty() && bursts_.empty() && !r_valid_;
  }
  // No new random request; R flows; runs until every read is answered and busy_o is low.
  void Drain(unsigned max_cycles = 5000) {
    k_.dir_pct = k_.eng_pct = 0;
    k_.r_pause = false;
    if (k_.r_hold_pct >= 100) k_.r_hold_pct = 0;
    if (k_.arready_pct == 0) k_.arready_pct = 100;
    for (unsigned i = 0; i < max_cycles && !HasFailure() && !Quiet(); ++i) Step();
    if (HasFailure()) return;
    EXPECT_TRUE(Quiet()) << At() << ": reads still open after " << max_cycles << " cycles";
    EXPECT_EQ(answers_.size(), takes_.size()) << At() << ": every read taken is answered once";
    sim_.eval();
    EXPECT_EQ(sim_->busy_o, 0) << At() << ": busy_o with nothing in flight";
  }
  template <class Pred>
  void StepUntil(Pred pred, const char* what, unsigned max_cycles = 2000) {
    for (unsigned i = 0; i < max_cycles && !HasFailure(); ++i) {
      Step();
      if (pred()) return;
    }
    if (!HasFailure()) ADD_FAILURE() << At() << ": " << what << " not reached in " << max_cycles << " cycles";
  }
  // Every answer against the read taken at the same position (answers come in take order).
  void ExpectAnswersMatchTakes() {
    ASSERT_EQ(answers_.size(), takes_.size());
    for (std::size_t i = 0; i < answers_.size(); ++i) {
      const Answer& a = answers_[i];
      const Read& t = takes_[i];
      const Desc d = mem_.get_desc(t.desc);
      EXPECT_EQ(a.dir, t.dir) << "answer " << i << " goes to the consumer that asked";
      EXPECT_EQ(a.addr, d.addr) << "answer " << i << ": the descriptor at 0x" << std::hex << t.desc;
      EXPECT_EQ(a.len, d.len) << "answer " << i << ": the descriptor at 0x" << std::hex << t.desc;
      if (!t.dir) {
        EXPECT_EQ(a.queue, t.queue) << "answer " << i;
        EXPECT_EQ(a.msn, t.msn) << "answer " << i;
      }
      EXPECT_GT(a.cycle, t.cycle) << "answer " << i << " after its take";
    }
  }

  rnic::tb::StageSim<Vrnic_lookup_fetch> sim_;  // clock, reset, FST (RNIC_FST)
  std::uint64_t cycle_ = 0;
  std::mt19937_64 rng_{kDirectedSeed};
  Knobs k_;
  HostMemory mem_;
  std::vector<std::uint64_t> pool_;  // descriptors of the random requests
  std::set<std::uint64_t> slots_;    // 16-byte slots in use

  // The requesters and the slave.
  DirState dir_state_ = DirState::kIdle;
  Read dir_req_, eng_req_;
  bool eng_valid_ = false, eng_hold_ = false, r_hold_ = false, arready_ = false;
  std::deque<Read> dir_plan_, eng_plan_;                        // requests made before random ones
  std::map<std::size_t, std::vector<std::uint8_t>> resp_plan_;  // RRESP per beat of the n-th AR
  std::deque<Burst> bursts_;
  bool r_valid_ = false, r_last_ = false;
  std::uint8_t r_resp_ = kOkay;
  std::array<std::uint8_t, kMaxBeatBytes> r_data_{};

  // The reference.
  bool ref_ar_valid_ = false;
  Read ref_ar_;
  std::deque<Read> record_;
  bool r_err_ = false;

  // Logs and counters.
  Out out_;
  std::vector<Read> takes_;
  std::vector<Answer> answers_;
  std::vector<ArLog> ars_;
  std::uint64_t max_outstanding_ = 0, full_waits_ = 0, collisions_ = 0, hold_blocks_ = 0, r_hold_stalls_ = 0,
                ar_stalls_ = 0, err_answers_ = 0, beats_taken_ = 0;
};

TEST_F(Fetch, DirectReadGoesFirst) {
  // Both ask in the same cycle: the direct read is taken, the engine's in the next cycle.
  dir_plan_.push_back(NewRead(true, 1, 100));
  eng_plan_.push_back(NewRead(false, 2, 200));
  Step();
  ASSERT_EQ(takes_.size(), 1U);
  EXPECT_TRUE(takes_[0].dir) << "the direct read first";
  EXPECT_FALSE(out_.eng_ready) << "no engine read while a direct read waits";
  Step();
  ASSERT_EQ(takes_.size(), 2U);
  EXPECT_FALSE(takes_[1].dir);
  EXPECT_EQ(takes_[1].cycle, takes_[0].cycle + 1U) << "the engine's read right after";
  Drain();
  ExpectAnswersMatchTakes();

  // The engine waits in front of a busy AR register; a direct read that comes later still goes first,
  // and the engine is not taken while the direct read waits, although the direct read cannot go.
  k_.arready_pct = 0;
  eng_plan_.push_back(NewRead(false, 3, 300));
  eng_plan_.push_back(NewRead(false, 4, 301));
  Step();
  ASSERT_EQ(takes_.size(), 3U);  // the first engine read fills the AR register
  for (int i = 0; i < 3; ++i) Step();
  dir_plan_.push_back(NewRead(true, 5, 400));
  for (int i = 0; i < 4; ++i) {
    Step();
    EXPECT_FALSE(out_.eng_ready) << At();
    EXPECT_FALSE(out_.dir_take) << At();
  }
  EXPECT_EQ(takes_.size(), 3U);
  k_.arready_pct = 100;
  Step();
  ASSERT_EQ(takes_.size(), 4U);
  EXPECT_TRUE(takes_[3].dir) << "the direct read goes before the engine's older one";
  EXPECT_EQ(takes_[3].msn, 400U);
  StepUntil([this] { return takes_.size() == 5U; }, "the engine's read after the direct one");
  ASSERT_EQ(takes_.size(), 5U);
  EXPECT_EQ(takes_[4].msn, 301U);
  Drain();
  ExpectAnswersMatchTakes();
}

TEST_F(Fetch, RecordFullStopsReads) {
  // R stops: MaxReads reads are taken and issued, then none while both requesters wait.
  k_.r_pause = true;
  k_.eng_pct = 100;
  k_.dir_pct = 100;
  for (int i = 0; i < 40 && !HasFailure(); ++i) Step();
  EXPECT_EQ(takes_.size(), kMaxReads);
  EXPECT_EQ(ars_.size(), kMaxReads) << "every read taken is issued (ARREADY high)";
  EXPECT_TRUE(out_.busy);
  EXPECT_FALSE(out_.arvalid);
  EXPECT_TRUE(eng_valid_) << "the engine still waits";
  EXPECT_GT(full_waits_, 30U);
  // R flows again: the first answer frees the record from the next cycle.
  k_.r_pause = false;
  StepUntil([this] { return !answers_.empty(); }, "the first answer");
  Step();
  ASSERT_FALSE(answers_.empty());
  ASSERT_GT(takes_.size(), kMaxReads);
  EXPECT_EQ(takes_[kMaxReads].cycle, answers_[0].cycle + 1U) << "a new read in the cycle after the first answer";
  for (int i = 0; i < 200 && !HasFailure(); ++i) Step();
  Drain();
  EXPECT_EQ(max_outstanding_, kMaxReads) << "never more than MaxReads reads between take and answer";
  ExpectAnswersMatchTakes();
}

TEST_F(Fetch, AnswersInOrderToTheirConsumer) {
  // Direct and engine reads interleaved, slow and uneven memory: each answer in take order, each to the
  // consumer that asked, with its queue, MSN and descriptor.
  k_.arready_pct = 60;
  k_.lat_min = 2;
  k_.lat_max = 14;
  k_.gap_pct = 30;
  for (unsigned i = 0; i < 24; ++i) eng_plan_.push_back(NewRead(false, i, 1000U + i));
  for (unsigned i = 0; i < 6; ++i) dir_plan_.push_back(NewRead(true, i, 2000U + i));
  Drain();
  ExpectAnswersMatchTakes();
  std::size_t dirs = 0;
  std::uint32_t next_eng = 1000;
  for (const Answer& a : answers_) {
    if (a.dir) {
      ++dirs;
    } else {
      EXPECT_EQ(a.msn, next_eng) << "the engine's answers in the order it asked";
      ++next_eng;
    }
  }
  EXPECT_EQ(dirs, 6U);
  EXPECT_EQ(next_eng, 1024U);
  // Engine reads were answered while a direct read was in flight (interleaved, not one after another).
  bool interleaved = false;
  for (std::size_t i = 1; i + 1 < answers_.size(); ++i) {
    interleaved = interleaved || (!answers_[i - 1].dir && answers_[i].dir && !answers_[i + 1].dir);
  }
  EXPECT_TRUE(interleaved);
}

TEST_F(Fetch, SlaveErrorFaultsOnlyThatDescriptor) {
  // Faulted bursts (by their AR's position): 1 (first beat SLVERR), 3 (last beat DECERR), 5 (EXOKAY,
  // not OKAY on a normal read), 8 (every beat); 6 and 7 are back to back with 5 and clean. With two
  // beats per descriptor (64-bit bus) burst 1's fault is on the beat before the last.
  const std::vector<std::uint8_t> first(1, kSlvErr);
  std::vector<std::uint8_t> last(kBeats, kOkay);
  last.back() = kDecErr;
  resp_plan_[1] = first;
  resp_plan_[3] = last;
  resp_plan_[5] = {kExOkay};
  resp_plan_[8] = std::vector<std::uint8_t>(kBeats, kSlvErr);
  const std::set<std::size_t> faulted = {1, 3, 5, 8};
  for (unsigned i = 0; i < 8; ++i) eng_plan_.push_back(NewRead(false, i, 10U + i));
  dir_plan_.push_back(NewRead(true, 7, 50));
  dir_plan_.push_back(NewRead(true, 7, 51));
  Drain();
  ExpectAnswersMatchTakes();
  ASSERT_EQ(answers_.size(), 10U);
  ASSERT_EQ(ars_.size(), 10U);
  for (std::size_t i = 0; i < answers_.size(); ++i) {
    EXPECT_EQ(answers_[i].err, faulted.count(i) != 0) << "answer " << i << (answers_[i].dir ? " (direct)" : "");
  }
  // Back to back: the clean burst right after a faulted one was answered in consecutive beats.
  EXPECT_LE(answers_[6].cycle - answers_[5].cycle, kBeats + 1U);
}

TEST_F(Fetch, HoldStopsEngineAndR) {
  // eng_hold_i: the engine is not taken, a direct read is.
  k_.eng_hold_pct = 100;
  eng_plan_.push_back(NewRead(false, 1, 10));
  for (int i = 0; i < 6; ++i) {
    Step();
    EXPECT_FALSE(out_.eng_ready) << At() << ": engine taken under eng_hold_i";
  }
  EXPECT_TRUE(takes_.empty());
  dir_plan_.push_back(NewRead(true, 2, 20));
  Step();
  ASSERT_EQ(takes_.size(), 1U);
  EXPECT_TRUE(takes_[0].dir) << "a direct read is taken under eng_hold_i";
  Step();
  EXPECT_EQ(takes_.size(), 1U);
  k_.eng_hold_pct = 0;
  Step();
  ASSERT_EQ(takes_.size(), 2U);
  EXPECT_FALSE(takes_[1].dir);

  // r_hold_i: RREADY low, no answer while a beat waits; answers after it drops.
  k_.r_hold_pct = 100;
  for (unsigned i = 0; i < 3; ++i) eng_plan_.push_back(NewRead(false, 3, 30U + i));
  const std::size_t answered = answers_.size();
  const std::uint64_t beats = beats_taken_;
  for (int i = 0; i < 30; ++i) {
    Step();
    EXPECT_FALSE(out_.rready) << At() << ": RREADY under r_hold_i";
  }
  EXPECT_EQ(answers_.size(), answered) << "no answer under r_hold_i";
  EXPECT_EQ(beats_taken_, beats) << "no beat taken under r_hold_i";
  EXPECT_GT(r_hold_stalls_, 20U) << "a beat waited under the hold";
  k_.r_hold_pct = 0;
  Step();
  EXPECT_TRUE(out_.rready);
  // Both holds at random.
  k_.r_hold_pct = 50;
  k_.eng_hold_pct = 50;
  for (unsigned i = 0; i < 16; ++i) eng_plan_.push_back(NewRead(false, i, 40U + i));
  for (unsigned i = 0; i < 4; ++i) dir_plan_.push_back(NewRead(true, i, 80U + i));
  Drain();
  ExpectAnswersMatchTakes();
  EXPECT_GT(hold_blocks_, 0U);
}

TEST_F(Fetch, DescriptorAtItsByteOffset) {
  // Four descriptors filling each 64-byte line (a wrong offset reads a neighbour), lines across the
  // address space, and lone descriptors at each offset between garbage; direct and engine reads.
  const std::uint64_t lines[] = {0x0000000000001000ULL, 0x8000123456789AC0ULL, 0xFFFFFFFFFFFFFFC0ULL};
  unsigned n = 0;
  for (const std::uint64_t line : lines) {
    for (std::uint64_t off = 0; off < 64; off += kDescBytes) {
      const Read r{n % 2 == 0, n % kQueues, 500U + n, NewDescriptor(line + off), 0};
      (r.dir ? dir_plan_ : eng_plan_).push_back(r);
      ++n;
    }
  }
  for (std::uint64_t off = 0; off < 64; off += kDescBytes) {
    eng_plan_.push_back(Read{false, 1, 600U + n, NewDescriptor(0x0000004000000000ULL + 0x1000U * off + off), 0});
    ++n;
  }
  Drain();
  ExpectAnswersMatchTakes();
  ASSERT_EQ(ars_.size(), takes_.size());
  for (std::size_t i = 0; i < ars_.size(); ++i) {
    const std::uint64_t desc = takes_[i].desc;
    const std::uint64_t want = kBytes >= kDescBytes ? desc & ~kBeatMask : desc;
    EXPECT_EQ(ars_[i].addr, want) << "ARADDR for the descriptor at 0x" << std::hex << desc;
    EXPECT_EQ(ars_[i].len, kBeats - 1U) << "ARLEN: " << kBeats << " beats of " << kBytes << " bytes";
  }
}

TEST_F(Fetch, AddressHeldUntilAccepted) {
  // ARREADY low: the read stays in the AR register, ARADDR stable, no other read taken; the next read
  // enters in the cycle the AR is accepted.
  k_.arready_pct = 0;
  eng_plan_.push_back(NewRead(false, 1, 7));
  eng_plan_.push_back(NewRead(false, 2, 8));
  Step();
  ASSERT_EQ(takes_.size(), 1U);
  const std::uint64_t want = ExpectedAraddr(takes_[0].desc);
  for (int i = 0; i < 20; ++i) {
    Step();
    EXPECT_TRUE(out_.arvalid) << At();
    EXPECT_EQ(out_.araddr, want) << At();
    EXPECT_EQ(out_.arlen, kBeats - 1U) << At();
  }
  EXPECT_EQ(takes_.size(), 1U);
  EXPECT_TRUE(ars_.empty());
  EXPECT_GT(ar_stalls_, 19U);
  k_.arready_pct = 100;
  Step();
  ASSERT_EQ(ars_.size(), 1U);
  ASSERT_EQ(takes_.size(), 2U);
  EXPECT_EQ(takes_[1].cycle, ars_[0].cycle) << "the AR register refilled in the cycle it is accepted";
  Step();
  ASSERT_EQ(ars_.size(), 2U);
  EXPECT_EQ(ars_[1].addr, ExpectedAraddr(takes_[1].desc));
  // Random ARREADY.
  k_.arready_pct = 30;
  for (unsigned i = 0; i < 12; ++i) eng_plan_.push_back(NewRead(false, i, 20U + i));
  for (unsigned i = 0; i < 4; ++i) dir_plan_.push_back(NewRead(true, i, 40U + i));
  Drain();
  ExpectAnswersMatchTakes();
  ASSERT_EQ(ars_.size(), takes_.size());
  for (std::size_t i = 0; i < ars_.size(); ++i) EXPECT_EQ(ars_[i].addr, ExpectedAraddr(takes_[i].desc)) << i;
}

TEST_F(Fetch, BusyWhileReadInArOrInFlight) {
  for (int i = 0; i < 3; ++i) {
    Step();
    EXPECT_FALSE(out_.busy) << At() << ": busy_o after reset";
  }
  k_.arready_pct = 0;
  k_.lat_min = k_.lat_max = 6;
  eng_plan_.push_back(NewRead(false, 1, 1));
  Step();
  ASSERT_EQ(takes_.size(), 1U);
  EXPECT_FALSE(out_.busy) << "busy_o from the cycle after the take";
  for (int i = 0; i < 4; ++i) {
    Step();
    EXPECT_TRUE(out_.busy) << At() << ": the read waits in the AR register";
  }
  k_.arready_pct = 100;
  StepUntil([this] { return !answers_.empty(); }, "the answer");
  ASSERT_FALSE(answers_.empty());
  ASSERT_FALSE(ars_.empty());
  EXPECT_TRUE(out_.busy) << "busy_o in the answer's cycle";
  EXPECT_GE(answers_[0].cycle, ars_[0].cycle + 7U);
  Step();
  EXPECT_FALSE(out_.busy) << "busy_o low after the answer";
}

TEST_F(Fetch, RandomTrafficMatchesReference) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  Start(seed);
  struct Phase {
    Knobs k;
    unsigned cycles;
  };
  // dir, eng, eng_hold, r_hold, arready, lat_min, lat_max, gap, err, pause
  const Phase phases[] = {
      {{30, 60, 0, 0, 100, 0, 0, 0, 0, false}, 6000},    {{5, 100, 5, 5, 100, 0, 3, 10, 5, false}, 6000},
      {{80, 30, 10, 10, 50, 0, 8, 30, 10, false}, 6000}, {{50, 100, 30, 30, 20, 2, 30, 50, 30, false}, 6000},
      {{40, 90, 0, 0, 100, 10, 40, 0, 2, false}, 6000},  {{90, 90, 50, 0, 80, 0, 2, 60, 50, false}, 6000},
      {{20, 70, 5, 60, 70, 0, 6, 20, 5, false}, 6000},   {{60, 60, 5, 5, 100, 0, 0, 0, 5, true}, 300},
      {{60, 60, 5, 5, 100, 0, 1, 5, 5, false}, 6000},
  };
  std::uint64_t drains = 0;
  for (int round = 0; round < 5 && !HasFailure(); ++round) {
    for (const Phase& p : phases) {
      k_ = p.k;
      for (unsigned c = 0; c < p.cycles && !HasFailure(); ++c) Step();
      if (rng_() % 3 == 0 && !HasFailure()) {
        Drain();
        ++drains;
      }
    }
  }
  Drain();
  ExpectAnswersMatchTakes();
  if (HasFailure()) return;
  std::size_t dirs = 0;
  for (const Answer& a : answers_) dirs += a.dir ? 1U : 0U;
  std::printf(
      "[   INFO   ] %llu cycles: %zu reads (%zu direct), %llu faulted, %llu cycles with the record full, %llu "
      "with both requesters, %llu engine reads held, %llu beats held, %llu AR stalls, %llu drains, at most %llu "
      "in flight\n",
      static_cast<unsigned long long>(cycle_), answers_.size(), dirs, static_cast<unsigned long long>(err_answers_),
      static_cast<unsigned long long>(full_waits_), static_cast<unsigned long long>(collisions_),
      static_cast<unsigned long long>(hold_blocks_), static_cast<unsigned long long>(r_hold_stalls_),
      static_cast<unsigned long long>(ar_stalls_), static_cast<unsigned long long>(drains),
      static_cast<unsigned long long>(max_outstanding_));
  // Coverage: every situation the reference rules on happened.
  EXPECT_GT(dirs, 500U);
  EXPECT_GT(answers_.size() - dirs, 2000U);
  EXPECT_GT(err_answers_, 100U);
  EXPECT_GT(full_waits_, 1000U);
  EXPECT_GT(collisions_, 1000U);
  EXPECT_GT(hold_blocks_, 100U);
  EXPECT_GT(r_hold_stalls_, 100U);
  EXPECT_GT(ar_stalls_, 1000U);
  EXPECT_EQ(max_outstanding_, kMaxReads);
}

}  // namespace
