// SPDX-License-Identifier: Apache-2.0
// rnic_lookup_prefetch at its interface (NumQueues 8, RqPrefetch 8). The testbench plays the queue
// table (rnic_lookup_rq's E port): a C++ model of every queue's cfg, ring (base, log2), prod, cons and
// req, answering rd_* one cycle after rd_queue_o with the queue as written up to and including the
// address's cycle (the engine's own req write of that cycle included: E's forwarding).
//
// A scoreboard follows the engine's visits from its ports alone (idle_o, iss_valid_o, req_we_o: a visit
// is S1, S2, then n issue handshakes; the next one may start in S2 or in the last handshake) and
// checks every cycle: each visit starts from the oldest hint taken and never in a cycle with hold_i;
// its n = min(posted, min(ring size, RqPrefetch)) - requested (0 when negative; a consumer ahead of
// req counts as 0 requested) from the snapshot it read; its reads are exactly MSN first.. (first =
// req + 1, or cons + 1 when req is behind cons) at base + 16 * ((MSN - 1) mod ring size), one per
// handshake, payload stable while not taken; the last handshake writes req = the last MSN.
//
// Directed tests: one visit's reads and req write; n limited by RqPrefetch (also for posted >= 512,
// the engine's 9-bit compares), by the ring size (log2 0..4) and by posted; nothing for an
// unconfigured queue or when everything is requested (also req far ahead); req behind cons; MSNs
// across 0xFFFFFFFF (RFC 5041 4.3: free-running 32-bit MSNs); random iss_ready_i backpressure; hold_i;
// idle_o; the next visit starting in a visit's last cycle (its last read, or S2 with nothing to
// request); the hint FIFO full (16 entries, plus the one taken into the visit register; hints offered
// while full are lost). A random run (doorbells, consumes up to what was requested, hints, holds,
// backpressure, re-configurations) checks the invariants every cycle: each issued MSN in (cons, prod]
// of the visit's read, never more than RqPrefetch requested ahead of cons, each queue's issued MSNs
// consecutive from its start; and after every phase, with hints repeated and no backpressure, every
// queue's requests reach min(posted, ring size, RqPrefetch) ahead of cons.
// Waveform with RNIC_FST=<file>.
#include "Vrnic_lookup_prefetch.h"
#include "rnic/tb/stage_sim.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "rnic/tb/seed.hpp"

namespace {

constexpr unsigned kQueues = PF_NUM_QUEUES;
constexpr unsigned kPrefetch = PF_PREFETCH;
constexpr unsigned kHintDepth = 16;  // the hint FIFO

// One queue as the table holds it (the E port's view: cons = head - 1).
struct Queue {
  bool cfg = false;
  std::uint64_t base = 0;
  unsigned log2 = 0;
  std::uint32_t prod = 0, cons = 0, req = 0;
};

struct Issue {
  std::uint64_t cycle = 0;
  unsigned queue = 0;
  std::uint32_t msn = 0;
  std::uint64_t addr = 0;
};

struct ReqWrite {
  std::uint64_t cycle = 0;
  unsigned queue = 0;
  std::uint32_t msn = 0;
};

struct VisitLog {
  std::uint64_t start = 0;  // the cycle the visit started (its read address)
  unsigned queue = 0;
  Queue snap;  // the answer it read
  std::size_t n = 0;
};

std::uint64_t RingSize(const Queue& q) { return std::uint64_t{1} << q.log2; }
std::uint64_t Lim(const Queue& q) { return std::min<std::uint64_t>(RingSize(q), kPrefetch); }
std::uint64_t SlotAddr(const Queue& q, std::uint32_t msn) {
  return q.base + std::uint64_t{16} * ((std::uint64_t{msn} - 1U) & (RingSize(q) - 1U));
}
// Signed distance a - b of free-running 32-bit MSNs.
std::int64_t Ahead(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t d = a - b;
  return d >= 0x80000000U ? static_cast<std::int64_t>(d) - 0x100000000LL : static_cast<std::int64_t>(d);
}

// The reference of one visit: the reads it issues for the snapshot it read.
std::vector<Issue> ExpectedVisit(unsigned queue, const Queue& s) {
  std::vector<Issue> out;
  if (!s.cfg) return out;
  const std::uint64_t posted = s.prod - s.cons;  // 32-bit modular distance
  const std::int64_t reqd_signed = Ahead(s.req, s.cons);
  const std::uint64_t reqd = reqd_signed < 0 ? 0U : static_cast<std::uint64_t>(reqd_signed);
  const std::uint64_t avail = std::min(posted, Lim(s));
  if (reqd >= avail) return out;
  const std::uint32_t first = (reqd_signed < 0 ? s.cons : s.req) + 1U;
  for (std::uint64_t i = 0; i < avail - reqd; ++i) {
    const std::uint32_t msn = first + static_cast<std::uint32_t>(i);
    out.push_back(Issue{0, queue, msn, SlotAddr(s, msn)});
  }
  return out;
}

enum class Phase { kIdle, kS1, kS2, kIssue };

class Prefetch : public ::testing::Test {
 protected:
  void SetUp() override { Reset(); }

  void Reset() {
    hint_valid_ = false;
    hold_ = false;
    iss_ready_ = true;
    ans_ = Queue{};
    DriveInputs();
    sim_.reset(2);  // rst_ni low for two edges, then high
    phase_ = Phase::kIdle;
    visit_.reset();
    accepted_.clear();
    prev_valid_ = prev_ready_ = prev_req_we_ = prev_hold_ = false;
  }

  void DriveInputs() {
    sim_->hint_valid_i = hint_valid_ ? 1 : 0;
    sim_->hint_queue_i = static_cast<std::uint8_t>(hint_queue_);
    sim_->hold_i = hold_ ? 1 : 0;
    sim_->iss_ready_i = iss_ready_ ? 1 : 0;
    sim_->rd_cfg_i = ans_.cfg ? 1 : 0;
    sim_->rd_base_i = ans_.base;
    sim_->rd_log2_i = static_cast<std::uint8_t>(ans_.log2);
    sim_->rd_prod_i = ans_.prod;
    sim_->rd_cons_i = ans_.cons;
    sim_->rd_req_i = ans_.req;
  }

  // One clock cycle with the inputs as set (hint_valid_/hint_queue_, hold_, iss_ready_; the table's
  // answer to the last cycle's rd_queue_o). Returns whether a hint was taken.
  bool Step() {
    DriveInputs();
    sim_.eval();
    const bool took = Sample();
    sim_.tick();
    ++cycle_;
    return took;
  }

  std::string At() const { return "cycle " + std::to_string(cycle_); }

  // The scoreboard: the settled outputs of this cycle, before its rising edge.
  bool Sample() {
    const bool idle = sim_->idle_o != 0;
    const bool valid = sim_->iss_valid_o != 0;
    const bool req_we = sim_->req_we_o != 0;
    const unsigned iss_queue = sim_->iss_queue_o;
    const std::uint32_t iss_msn = sim_->iss_msn_o;
    const std::uint64_t iss_addr = sim_->iss_addr_o;
    not_idle_cycles_ += idle ? 0U : 1U;

    // The phase of this cycle, from the last one and the outputs.
    Phase ph = Phase::kIdle;
    switch (phase_) {
      case Phase::kIdle:
        ph = idle ? Phase::kIdle : Phase::kS1;
        break;
      case Phase::kS1:
        ph = Phase::kS2;
        break;
      case Phase::kS2:
        ph = valid ? Phase::kIssue : (idle ? Phase::kIdle : Phase::kS1);
        break;
      case Phase::kIssue:
        ph = prev_req_we_ ? (idle ? Phase::kIdle : Phase::kS1) : Phase::kIssue;
        break;
    }
    EXPECT_EQ(idle, ph == Phase::kIdle) << At() << ": idle_o";
    EXPECT_EQ(valid, ph == Phase::kIssue) << At() << ": iss_valid_o";

    // A visit that ended in S2 (nothing to request) issued nothing.
    if (phase_ == Phase::kS2 && ph != Phase::kIssue && visit_.has_value()) {
      EXPECT_TRUE(visit_->expected.empty()) << At() << ": queue " << visit_->log.queue << " ended its visit with "
                                            << visit_->expected.size() << " reads to issue";
      EndVisit();
    }
    if (phase_ == Phase::kS2 && ph == Phase::kIssue && visit_.has_value()) {
      EXPECT_FALSE(visit_->expected.empty())
          << At() << ": queue " << visit_->log.queue << " issues with nothing to request";
    }
    if (ph == Phase::kS1) StartVisit();

    // Payload stable while valid and not taken.
    if (prev_valid_ && !prev_ready_) {
      EXPECT_TRUE(valid) << At() << ": iss_valid_o dropped before the handshake";
      EXPECT_EQ(iss_queue, prev_queue_) << At() << ": iss_queue_o changed while not taken";
      EXPECT_EQ(iss_msn, prev_msn_) << At() << ": iss_msn_o changed while not taken";
      EXPECT_EQ(iss_addr, prev_addr_) << At() << ": iss_addr_o changed while not taken";
      ++stall_checks_;
    }

    if (ph == Phase::kIssue && visit_.has_value()) {
      Visit& v = *visit_;
      if (v.done >= v.expected.size()) {
        ADD_FAILURE() << At() << ": queue " << v.log.queue << " issues read " << v.done + 1 << ", expected "
                      << v.expected.size();
      } else {
        const Issue& e = v.expected[v.done];
        EXPECT_EQ(iss_queue, e.queue) << At() << ": read " << v.done;
        EXPECT_EQ(iss_msn, e.msn) << At() << ": read " << v.done << " of queue " << e.queue;
        EXPECT_EQ(iss_addr, e.addr) << At() << ": read " << v.done << " of queue " << e.queue << " MSN " << e.msn;
      }
      if (iss_ready_) {
        TakeIssue(Issue{cycle_, iss_queue, iss_msn, iss_addr});
        ++v.done;
        const bool last = v.done == v.expected.size();
        EXPECT_EQ(req_we, last) << At() << ": req_we_o at read " << v.done << " of " << v.expected.size();
      } else {
        EXPECT_FALSE(req_we) << At() << ": req_we_o without the handshake";
      }
    } else {
      EXPECT_FALSE(req_we) << At() << ": req_we_o outside a read";
    }
    if (req_we) {
      const unsigned q = sim_->req_queue_o;
      const std::uint32_t msn = sim_->req_msn_o;
      EXPECT_EQ(q, iss_queue) << At() << ": req_queue_o";
      EXPECT_EQ(msn, iss_msn) << At() << ": req_msn_o is the last MSN issued";
      req_writes_.push_back(ReqWrite{cycle_, q, msn});
      if (q < kQueues) queues_[q].req = msn;
      if (visit_.has_value()) EndVisit();
    }
    if (check_invariants_) CheckQueueInvariants();

    // The hint of this cycle (taken at the edge; it cannot start a visit in this cycle).
    const bool took = hint_valid_ && sim_->hint_ready_o != 0;
    if (took) {
      accepted_.push_back(hint_queue_);
      ++hints_taken_;
    } else if (hint_valid_) {
      ++hints_dropped_;
    }

    phase_ = ph;
    prev_valid_ = valid;
    prev_ready_ = iss_ready_;
    prev_req_we_ = req_we;
    prev_hold_ = hold_;
    prev_queue_ = iss_queue;
    prev_msn_ = iss_msn;
    prev_addr_ = iss_addr;
    // The table's answer in the next cycle: the queue as written up to this cycle (req included).
    prev_rd_queue_ = sim_->rd_queue_o;
    ans_ = prev_rd_queue_ < kQueues ? queues_[prev_rd_queue_] : Queue{};
    return took;
  }

  // The visit started in the last cycle: its read address was that cycle's rd_queue_o and the table
  // answers it now (ans_).
  void StartVisit() {
    EXPECT_FALSE(visit_.has_value()) << At() << ": a visit starts while one is open";
    EXPECT_FALSE(prev_hold_) << At() << ": a visit started in a cycle with hold_i";
    if (accepted_.empty()) {
      ADD_FAILURE() << At() << ": a visit of queue " << prev_rd_queue_ << " without a hint";
    } else {
      EXPECT_EQ(prev_rd_queue_, accepted_.front()) << At() << ": visits follow the hints in order";
      accepted_.pop_front();
    }
    Visit v;
    v.log = VisitLog{cycle_ - 1U, prev_rd_queue_, ans_, 0};
    v.expected = ExpectedVisit(prev_rd_queue_, ans_);
    v.log.n = v.expected.size();
    visit_ = v;
  }
  void EndVisit() {
    visits_.push_back(visit_->log);
    visit_.reset();
  }

  // An issue handshake: the random run's invariants on it.
  void TakeIssue(const Issue& is) {
    issues_.push_back(is);
    if (!check_invariants_ || !visit_.has_value()) return;
    const Queue& s = visit_->log.snap;
    // In (cons, prod] of the visit's read.
    EXPECT_TRUE(Ahead(is.msn, s.cons) >= 1 && Ahead(is.msn, s.prod) <= 0)
        << At() << ": queue " << is.queue << " MSN " << is.msn << " outside (" << s.cons << ", " << s.prod << "]";
    EXPECT_LE(Ahead(is.msn, s.cons), static_cast<std::int64_t>(kPrefetch))
        << At() << ": queue " << is.queue << " MSN " << is.msn << " more than RqPrefetch ahead";
    // Consecutive from the queue's start: no gap, no duplicate.
    if (is.queue < kQueues) {
      EXPECT_EQ(is.msn, next_msn_[is.queue]) << At() << ": queue " << is.queue << " sequence";
      next_msn_[is.queue] = is.msn + 1U;
    }
  }
  void CheckQueueInvariants() {
    for (unsigned q = 0; q < kQueues; ++q) {
      const Queue& s = queues_[q];
      if (!s.cfg) continue;
      EXPECT_LE(Ahead(s.req, s.cons), static_cast<std::int64_t>(Lim(s)))
          << At() << ": queue " << q << " requested too far ahead (req " << s.req << ", cons " << s.cons << ")";
      EXPECT_LE(Ahead(s.req, s.prod), 0) << At() << ": queue " << q << " requested beyond prod";
    }
  }

  // ---- test actions ----------------------------------------------------------------------------
  // QUEUE_CONFIG: the queue starts empty at MSN start.
  void Configure(unsigned q, std::uint64_t base, unsigned log2, std::uint32_t start) {
    queues_[q] = Queue{true, base, log2, start - 1U, start - 1U, start - 1U};
    next_msn_[q] = start;
  }
  void Doorbell(unsigned q, std::uint32_t posted) { queues_[q].prod += posted; }
  void Consume(unsigned q, std::uint32_t n) { queues_[q].cons += n; }
  // Offers a hint for one cycle.
  bool Hint(unsigned q) {
    hint_valid_ = true;
    hint_queue_ = q;
    const bool took = Step();
    hint_valid_ = false;
    return took;
  }
  bool Quiet() const { return accepted_.empty() && phase_ == Phase::kIdle && !visit_.has_value(); }
  void Settle(unsigned max_cycles = 500) {
    for (unsigned i = 0; i < max_cycles && !HasFailure(); ++i) {
      if (Quiet()) return;
      Step();
    }
    if (!Quiet()) ADD_FAILURE() << At() << ": still busy after " << max_cycles << " cycles";
  }
  // Steps until pred() holds after a cycle (a failure after max_cycles).
  template <class Pred>
  void StepUntil(Pred pred, const char* what, unsigned max_cycles = 500) {
    for (unsigned i = 0; i < max_cycles && !HasFailure(); ++i) {
      Step();
      if (pred()) return;
    }
    if (!pred()) ADD_FAILURE() << At() << ": " << what << " not reached in " << max_cycles << " cycles";
  }
  // Hints q and runs until the engine is idle with nothing pending: the reads of the visit.
  std::vector<Issue> Visit1(unsigned q) {
    const std::size_t first = issues_.size();
    EXPECT_TRUE(Hint(q));
    Settle();
    return {issues_.begin() + static_cast<std::ptrdiff_t>(first), issues_.end()};
  }
  // Expects reads of MSNs first.. with the given slot addresses (written out by each test).
  void ExpectReads(const std::vector<Issue>& got, unsigned q, std::uint32_t first,
                   const std::vector<std::uint64_t>& addrs) {
    ASSERT_EQ(got.size(), addrs.size()) << "reads of queue " << q;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].queue, q) << "read " << i;
      EXPECT_EQ(got[i].msn, first + static_cast<std::uint32_t>(i)) << "read " << i;
      EXPECT_EQ(got[i].addr, addrs[i]) << "read " << i << " MSN " << got[i].msn;
    }
    if (!got.empty()) {
      ASSERT_FALSE(req_writes_.empty());
      EXPECT_EQ(req_writes_.back().queue, q);
      EXPECT_EQ(req_writes_.back().msn, got.back().msn);
      EXPECT_EQ(req_writes_.back().cycle, got.back().cycle) << "req written with the last read";
    }
  }
  // n reads of MSNs first.. in a ring of 2^log2 entries at base.
  static std::vector<std::uint64_t> Slots(std::uint64_t base, unsigned log2, std::uint32_t first, unsigned n) {
    std::vector<std::uint64_t> out;
    for (unsigned i = 0; i < n; ++i) {
      const std::uint32_t slot = (first + i - 1U) & ((1U << log2) - 1U);
      out.push_back(base + 16U * std::uint64_t{slot});
    }
    return out;
  }

  struct Visit {
    VisitLog log;
    std::vector<Issue> expected;
    std::size_t done = 0;
  };

  rnic::tb::StageSim<Vrnic_lookup_prefetch> sim_;  // clock, reset, FST (RNIC_FST)
  std::uint64_t cycle_ = 0;

  // Inputs.
  bool hint_valid_ = false;
  unsigned hint_queue_ = 0;
  bool hold_ = false;
  bool iss_ready_ = true;
  Queue ans_;  // the table's answer driven in this cycle

  // The table.
  std::array<Queue, kQueues> queues_{};
  std::array<std::uint32_t, kQueues> next_msn_{};  // the next MSN each queue must issue

  // Scoreboard.
  Phase phase_ = Phase::kIdle;
  std::optional<Visit> visit_;
  std::deque<unsigned> accepted_;  // hints taken, not yet visited
  bool prev_valid_ = false, prev_ready_ = false, prev_req_we_ = false, prev_hold_ = false;
  unsigned prev_queue_ = 0, prev_rd_queue_ = 0;
  std::uint32_t prev_msn_ = 0;
  std::uint64_t prev_addr_ = 0;
  bool check_invariants_ = false;

  // Logs and counters.
  std::vector<Issue> issues_;
  std::vector<ReqWrite> req_writes_;
  std::vector<VisitLog> visits_;
  std::uint64_t not_idle_cycles_ = 0, stall_checks_ = 0, hints_taken_ = 0, hints_dropped_ = 0;
};

constexpr std::uint64_t kBase = 0x0000123456789AB0ULL;

TEST_F(Prefetch, OneVisitIssuesTheExpectedReadsThenWritesReq) {
  Configure(2, kBase, 4, 1);  // 16 entries, first MSN 1
  Doorbell(2, 5);             // MSNs 1..5 posted
  auto got = Visit1(2);
  ExpectReads(got, 2, 1, {kBase, kBase + 0x10, kBase + 0x20, kBase + 0x30, kBase + 0x40});
  EXPECT_EQ(queues_[2].req, 5U);
  ASSERT_EQ(req_writes_.size(), 1U);
  // One read per cycle with iss_ready_i high.
  for (std::size_t i = 1; i < got.size(); ++i) EXPECT_EQ(got[i].cycle, got[i - 1].cycle + 1U);
  // Everything posted is requested: a second visit issues nothing and writes nothing.
  EXPECT_TRUE(Visit1(2).empty());
  EXPECT_EQ(req_writes_.size(), 1U);
  // More posted: up to RqPrefetch ahead of cons (0): MSNs 6..8.
  Doorbell(2, 10);
  got = Visit1(2);
  ExpectReads(got, 2, 6, {kBase + 0x50, kBase + 0x60, kBase + 0x70});
  EXPECT_EQ(queues_[2].req, 8U);
  // Three consumed: three more (9..11).
  Consume(2, 3);
  got = Visit1(2);
  ExpectReads(got, 2, 9, {kBase + 0x80, kBase + 0x90, kBase + 0xA0});
  EXPECT_EQ(queues_[2].req, 11U);
  ASSERT_EQ(visits_.size(), 4U);
  EXPECT_EQ(visits_[1].n, 0U);
  // Other queues were never touched.
  for (const Issue& is : issues_) EXPECT_EQ(is.queue, 2U);
}

TEST_F(Prefetch, LimitedByRqPrefetch) {
  // Rings of 2^16 entries; posted beyond RqPrefetch, also multiples of 512 (the engine keeps posted
  // as 9 low bits and a flag) and beyond the ring.
  const std::uint32_t posted[] = {9, 100, 512, 513, 1024, 0x10000, 0x7FFFFFFF};
  unsigned q = 0;
  for (const std::uint32_t p : posted) {
    const std::uint64_t base = kBase + (std::uint64_t{q} << 24);
    Configure(q % kQueues, base, 16, 1000);
    Doorbell(q % kQueues, p);
    const auto got = Visit1(q % kQueues);
    ExpectReads(got, q % kQueues, 1000, Slots(base, 16, 1000, kPrefetch));
    EXPECT_EQ(queues_[q % kQueues].req, 1000U + kPrefetch - 1U) << "posted " << p;
    // Consuming two gives two more (one when only 9 were posted).
    Consume(q % kQueues, 2);
    const auto more = Visit1(q % kQueues);
    EXPECT_EQ(more.size(), std::min<std::size_t>(p - 2U, kPrefetch) - (kPrefetch - 2U)) << "posted " << p;
    ++q;
  }
}

TEST_F(Prefetch, LimitedByRingSize) {
  // log2 0..4 with 20 posted: min(size, 8) reads, slots wrapping in the ring.
  for (unsigned log2 = 0; log2 <= 4; ++log2) {
    const std::uint64_t base = kBase + (std::uint64_t{log2} << 20);
    const std::uint32_t first = 7;  // MSN 7: slot 6 mod size
    Configure(log2, base, log2, first);
    Doorbell(log2, 20);
    const auto got = Visit1(log2);
    const unsigned n = std::min(1U << log2, kPrefetch);
    ExpectReads(got, log2, first, Slots(base, log2, first, n));
    EXPECT_EQ(queues_[log2].req, first + n - 1U) << "log2 " << log2;
  }
  // Written out: ring of 1 entry (every MSN in slot 0), of 2 (MSN 7 in slot 0, 8 in slot 1), of 4
  // (MSNs 7..10 in slots 2, 3, 0, 1).
  const std::uint64_t b0 = kBase, b1 = kBase + (1ULL << 20), b2 = kBase + (2ULL << 20);
  ASSERT_GE(issues_.size(), 7U);
  EXPECT_EQ(issues_[0].addr, b0);
  EXPECT_EQ(issues_[1].addr, b1);
  EXPECT_EQ(issues_[2].addr, b1 + 0x10);
  EXPECT_EQ(issues_[3].addr, b2 + 0x20);
  EXPECT_EQ(issues_[4].addr, b2 + 0x30);
  EXPECT_EQ(issues_[5].addr, b2);
  EXPECT_EQ(issues_[6].addr, b2 + 0x10);
  // The 1-entry ring: nothing more until its one buffer is consumed, then exactly one.
  EXPECT_TRUE(Visit1(0).empty());
  Consume(0, 1);
  ExpectReads(Visit1(0), 0, 8, {b0});
}

TEST_F(Prefetch, LimitedByPosted) {
  Configure(5, kBase, 6, 40);
  Doorbell(5, 3);
  ExpectReads(Visit1(5), 5, 40, Slots(kBase, 6, 40, 3));
  Doorbell(5, 1);
  ExpectReads(Visit1(5), 5, 43, Slots(kBase, 6, 43, 1));
  Consume(5, 4);  // all consumed: nothing posted
  EXPECT_TRUE(Visit1(5).empty());
  Doorbell(5, 2);
  ExpectReads(Visit1(5), 5, 44, Slots(kBase, 6, 44, 2));
  EXPECT_EQ(queues_[5].req, 45U);
}

TEST_F(Prefetch, NothingForAnUnconfiguredQueue) {
  // Never configured, with state that would ask for reads if it were.
  queues_[3] = Queue{false, kBase, 4, 20, 0, 0};
  const std::uint64_t busy0 = not_idle_cycles_;
  EXPECT_TRUE(Visit1(3).empty());
  EXPECT_TRUE(req_writes_.empty());
  EXPECT_EQ(not_idle_cycles_ - busy0, 2U) << "S1 and S2, then idle";
  // Configured, used, then unconfigured (the owner clears cfg): nothing more.
  Configure(3, kBase, 4, 1);
  Doorbell(3, 2);
  EXPECT_EQ(Visit1(3).size(), 2U);
  Doorbell(3, 5);
  queues_[3].cfg = false;
  EXPECT_TRUE(Visit1(3).empty());
  EXPECT_EQ(req_writes_.size(), 1U);
}

TEST_F(Prefetch, NothingWhenEverythingPostedIsRequested) {
  Configure(1, kBase, 8, 100);
  Doorbell(1, 4);
  EXPECT_EQ(Visit1(1).size(), 4U);
  const std::size_t writes = req_writes_.size();
  EXPECT_TRUE(Visit1(1).empty()) << "req == prod";
  // RqPrefetch requested, more posted.
  Doorbell(1, 20);
  EXPECT_EQ(Visit1(1).size(), 4U);
  EXPECT_TRUE(Visit1(1).empty()) << "RqPrefetch ahead of cons";
  // req far ahead of cons (512: the 9 low bits of the distance are 0) with much posted.
  queues_[1].req = queues_[1].cons + 512U;
  queues_[1].prod = queues_[1].cons + 600U;
  EXPECT_TRUE(Visit1(1).empty()) << "req 512 ahead";
  queues_[1].req = queues_[1].cons + 0x40000000U;
  queues_[1].prod = queues_[1].cons + 0x40000010U;
  EXPECT_TRUE(Visit1(1).empty()) << "req 2^30 ahead";
  EXPECT_EQ(req_writes_.size(), writes + 1U);
  // Nothing posted at all.
  Configure(4, kBase, 3, 9);
  EXPECT_TRUE(Visit1(4).empty());
}

TEST_F(Prefetch, ReqBehindConsStartsAfterCons) {
  // The consumer overtook the engine (segments consumed buffers whose descriptors were not
  // requested): requested counts as 0 and the reads start after cons.
  Configure(6, kBase, 4, 1);
  queues_[6].prod = 10;
  queues_[6].req = 2;
  queues_[6].cons = 5;
  ExpectReads(Visit1(6), 6, 6, Slots(kBase, 4, 6, 5));  // MSNs 6..10
  EXPECT_EQ(queues_[6].req, 10U);
  // Behind by a lot, with RqPrefetch limiting.
  queues_[6].cons = 30;
  queues_[6].prod = 100;
  ExpectReads(Visit1(6), 6, 31, Slots(kBase, 4, 31, kPrefetch));
  // Behind by 2^31 (the largest distance counted as negative).
  queues_[6].cons = 0x80000010U;
  queues_[6].req = 0x10U;
  queues_[6].prod = 0x80000013U;
  ExpectReads(Visit1(6), 6, 0x80000011U, Slots(kBase, 4, 0x80000011U, 3));
  // Behind across the wrap: req 0xFFFFFFFE, cons 3.
  queues_[6].req = 0xFFFFFFFEU;
  queues_[6].cons = 3;
  queues_[6].prod = 5;
  ExpectReads(Visit1(6), 6, 4, Slots(kBase, 4, 4, 2));
}

TEST_F(Prefetch, MsnWrapAcrossZero) {
  // First MSN 0xFFFFFFFD, ring of 8: MSNs FFFFFFFD, FFFFFFFE, FFFFFFFF, 0, 1, 2 in slots 4, 5, 6, 7,
  // 0, 1 (slot = (MSN - 1) mod 8).
  Configure(7, kBase, 3, 0xFFFFFFFDU);
  Doorbell(7, 6);
  EXPECT_EQ(queues_[7].prod, 2U);
  ExpectReads(Visit1(7), 7, 0xFFFFFFFDU, {kBase + 0x40, kBase + 0x50, kBase + 0x60, kBase + 0x70, kBase, kBase + 0x10});
  EXPECT_EQ(queues_[7].req, 2U);
  // Requested across the wrap: nothing more until more is posted.
  EXPECT_TRUE(Visit1(7).empty());
  Doorbell(7, 10);
  ExpectReads(Visit1(7), 7, 3, {kBase + 0x20, kBase + 0x30});  // 8 ahead of cons 0xFFFFFFFC
  Consume(7, 5);                                               // cons 1
  ExpectReads(Visit1(7), 7, 5, Slots(kBase, 3, 5, 5));
  // A queue whose first MSN is 0 (cons 0xFFFFFFFF) and one where req sits exactly on 0xFFFFFFFF.
  Configure(0, kBase, 4, 0);
  Doorbell(0, 3);
  ExpectReads(Visit1(0), 0, 0, {kBase + 0xF0, kBase, kBase + 0x10});
  Configure(1, kBase, 5, 0xFFFFFFF9U);
  Doorbell(1, 7);  // prod 0xFFFFFFFF
  EXPECT_EQ(Visit1(1).size(), 7U);
  EXPECT_EQ(queues_[1].req, 0xFFFFFFFFU);
  Doorbell(1, 4);  // prod 3
  ExpectReads(Visit1(1), 1, 0, {kBase + 0x1F0});
}

TEST_F(Prefetch, BackpressureLosesAndDuplicatesNothing) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  for (unsigned q = 0; q < kQueues; ++q) {
    Configure(q, kBase + (std::uint64_t{q} << 32), 2 + q % 4, 0xFFFFFFF0U + 3U * q);
    Doorbell(q, 3 + q);
  }
  // Every queue hinted twice, in random order; iss_ready_i low for random stretches (0..20 cycles).
  std::vector<unsigned> order;
  for (unsigned q = 0; q < kQueues; ++q) order.insert(order.end(), {q, q});
  std::shuffle(order.begin(), order.end(), rng);
  std::size_t next = 0;
  unsigned low_left = 0;
  for (int c = 0; c < 5000 && !HasFailure() && (next < order.size() || !Quiet()); ++c) {
    if (low_left == 0 && rng() % 3 == 0) low_left = static_cast<unsigned>(rng() % 21);
    iss_ready_ = low_left == 0;
    if (low_left > 0) --low_left;
    if (next < order.size()) {
      hint_valid_ = true;
      hint_queue_ = order[next];
      if (Step()) ++next;
      hint_valid_ = false;
    } else {
      Step();
    }
  }
  iss_ready_ = true;
  Settle();
  EXPECT_GT(stall_checks_, 20U) << "the run held iss_ready_i low on valid reads";
  // Per queue: exactly min(posted, ring, 8) reads, each MSN once, in order.
  for (unsigned q = 0; q < kQueues; ++q) {
    std::vector<std::uint32_t> msns;
    for (const Issue& is : issues_)
      if (is.queue == q) msns.push_back(is.msn);
    const unsigned n = std::min({3U + q, 1U << (2 + q % 4), kPrefetch});
    ASSERT_EQ(msns.size(), n) << "queue " << q;
    for (unsigned i = 0; i < n; ++i) EXPECT_EQ(msns[i], 0xFFFFFFF0U + 3U * q + i) << "queue " << q;
    EXPECT_EQ(queues_[q].req, 0xFFFFFFF0U + 3U * q + n - 1U) << "queue " << q;
  }
  EXPECT_EQ(visits_.size(), order.size());
}

TEST_F(Prefetch, HoldStopsVisitsFromStarting) {
  Configure(2, kBase, 4, 1);
  Doorbell(2, 6);
  Configure(3, kBase, 4, 1);
  Doorbell(3, 6);
  hold_ = true;
  EXPECT_TRUE(Hint(2));
  for (int i = 0; i < 100; ++i) {
    Step();
    ASSERT_EQ(sim_->idle_o, 1U) << "a visit started under hold_i";
  }
  EXPECT_TRUE(issues_.empty());
  // Released for one cycle: the visit starts; raised again in S1: the visit runs to its end.
  hold_ = false;
  Step();
  hold_ = true;
  Step();
  EXPECT_EQ(sim_->idle_o, 0U);
  EXPECT_TRUE(Hint(3));  // waits while the visit of 2 runs and ends
  for (int i = 0; i < 60; ++i) Step();
  EXPECT_EQ(issues_.size(), 6U);
  EXPECT_EQ(queues_[2].req, 6U);
  EXPECT_EQ(visits_.size(), 1U) << "the visit of 3 started under hold_i";
  EXPECT_EQ(sim_->idle_o, 1U);
  hold_ = false;
  Settle();
  EXPECT_EQ(queues_[3].req, 6U);
  // hold_i in the last read's cycle stops the back-to-back start (the scoreboard checks every
  // start against hold_i): two hints, hold high from the first read on.
  Doorbell(2, 2);
  Doorbell(3, 2);
  EXPECT_TRUE(Hint(2));
  EXPECT_TRUE(Hint(3));
  StepUntil([this] { return sim_->iss_valid_o != 0; }, "the first read");
  hold_ = true;
  for (int i = 0; i < 20; ++i) Step();
  EXPECT_EQ(visits_.size(), 3U);
  hold_ = false;
  Settle();
  EXPECT_EQ(visits_.size(), 4U);
  EXPECT_EQ(queues_[3].req, 8U);
}

TEST_F(Prefetch, IdleReflectsVisits) {
  for (int i = 0; i < 5; ++i) {
    Step();
    EXPECT_EQ(sim_->idle_o, 1U) << "after reset";
  }
  Configure(0, kBase, 4, 1);
  Configure(1, kBase, 4, 1);
  Doorbell(0, 3);
  // Idle low from the cycle after the start (S1, S2, 3 reads) then high.
  std::uint64_t busy0 = not_idle_cycles_;
  EXPECT_EQ(Visit1(0).size(), 3U);
  EXPECT_EQ(not_idle_cycles_ - busy0, 5U);
  EXPECT_EQ(sim_->idle_o, 1U);
  // Backpressure keeps it low: 3 reads with iss_ready_i low for 4 cycles at the second.
  Doorbell(0, 3);
  busy0 = not_idle_cycles_;
  EXPECT_TRUE(Hint(0));
  StepUntil([this] { return sim_->iss_valid_o != 0; }, "the first read");
  Step();  // the first read taken
  iss_ready_ = false;
  for (int i = 0; i < 4; ++i) {
    Step();
    EXPECT_EQ(sim_->idle_o, 0U);
  }
  iss_ready_ = true;
  Settle();
  EXPECT_EQ(not_idle_cycles_ - busy0, 5U + 4U);
  // A visit with nothing to do (unconfigured queue 5): S1 and S2 only.
  busy0 = not_idle_cycles_;
  EXPECT_TRUE(Visit1(5).empty());
  EXPECT_EQ(not_idle_cycles_ - busy0, 2U);
  // Back to back: a second hint pending when a visit ends starts the next in its last cycle; idle_o
  // stays low from the first visit's start to the second's end.
  Doorbell(0, 2);
  Doorbell(1, 2);
  busy0 = not_idle_cycles_;
  EXPECT_TRUE(Hint(0));
  EXPECT_TRUE(Hint(1));
  Settle();
  EXPECT_EQ(not_idle_cycles_ - busy0, 8U) << "two visits of 2 reads each, no idle cycle between";
}

// The next visit's read overlaps a visit's last cycle: a visit with reads is followed (hint pending)
// by one starting in its last read's cycle; a visit with nothing to request by one starting in its S2.
TEST_F(Prefetch, NextVisitStartsInTheLastCycleOfAVisit) {
  Configure(0, kBase, 4, 1);
  Configure(1, kBase + 0x1000, 4, 1);
  Doorbell(0, 3);
  Doorbell(1, 2);
  EXPECT_TRUE(Hint(0));
  EXPECT_TRUE(Hint(1));
  EXPECT_TRUE(Hint(5));  // unconfigured: nothing to request
  EXPECT_TRUE(Hint(6));
  EXPECT_TRUE(Hint(0));  // everything requested: nothing
  EXPECT_TRUE(Hint(1));
  Settle();
  ASSERT_EQ(visits_.size(), 6U);
  ASSERT_EQ(issues_.size(), 5U);
  // Visit 1 starts in visit 0's last read (and req write) cycle; visit 2 in visit 1's last read.
  EXPECT_EQ(visits_[1].start, issues_[2].cycle);
  EXPECT_EQ(req_writes_[0].cycle, issues_[2].cycle);
  EXPECT_EQ(visits_[2].start, issues_[4].cycle);
  // Visits 2..5 have nothing to request: each starts in the S2 of the one before (2 cycles apart).
  for (std::size_t i = 3; i < visits_.size(); ++i) {
    EXPECT_EQ(visits_[i].n, 0U);
    EXPECT_EQ(visits_[i].start, visits_[i - 1].start + 2U) << "visit " << i;
  }
  // Reads follow S1 and S2 directly: the first read 3 cycles after its visit's start.
  EXPECT_EQ(issues_[0].cycle, visits_[0].start + 3U);
  EXPECT_EQ(issues_[3].cycle, visits_[1].start + 3U);
}

TEST_F(Prefetch, HintFifoFullDropsHints) {
  for (unsigned q = 0; q < kQueues; ++q) {
    Configure(q, kBase + (std::uint64_t{q} << 16), 4, 1);
    Doorbell(q, 1);
  }
  // Under hold_i nothing is visited: 16 hints fill the FIFO behind the one taken into the visit
  // register; then hint_ready_o is low and hints are refused.
  hold_ = true;
  std::vector<unsigned> taken;
  for (unsigned i = 0; i < 40 && !HasFailure(); ++i) {
    const unsigned q = i % (kQueues - 1);  // queues 0..6 while there is room
    if (sim_->hint_ready_o == 0) break;
    ASSERT_TRUE(Hint(q));
    taken.push_back(q);
  }
  EXPECT_EQ(taken.size(), kHintDepth + 1U) << "16 in the FIFO and one in the visit register";
  EXPECT_EQ(sim_->hint_ready_o, 0U);
  // Hints for queue 7 while full: refused, lost.
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(Hint(7));
    EXPECT_EQ(sim_->hint_ready_o, 0U);
  }
  EXPECT_EQ(hints_dropped_, 5U);
  // Released: the 17 taken hints are visited in order (the scoreboard checks the order), queue 7
  // never.
  hold_ = false;
  Settle(2000);
  ASSERT_EQ(visits_.size(), taken.size());
  for (std::size_t i = 0; i < taken.size(); ++i) EXPECT_EQ(visits_[i].queue, taken[i]);
  for (const Issue& is : issues_) EXPECT_NE(is.queue, 7U);
  EXPECT_EQ(queues_[7].req, 0U);
  EXPECT_EQ(sim_->hint_ready_o, 1U);
  // The FIFO works again: queue 7 is visited now.
  EXPECT_EQ(Visit1(7).size(), 1U);
}

// The random run. Phases of random traffic, each followed by a drain (no doorbells, consumes,
// holds or backpressure; every queue hinted twice) after which every configured queue must have
// requested min(posted, ring, RqPrefetch) ahead of cons.
TEST_F(Prefetch, RandomInvariants) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  auto chance = [&rng](unsigned percent) { return rng() % 100 < percent; };
  auto pick = [&rng](std::uint64_t n) { return static_cast<unsigned>(rng() % n); };
  const unsigned log2s[] = {0, 1, 2, 3, 4, 5, 16};
  auto random_config = [&](unsigned q) {
    if (chance(15)) {  // unconfigured, with random state
      queues_[q] = Queue{false,
                         rng(),
                         pick(17),
                         static_cast<std::uint32_t>(rng()),
                         static_cast<std::uint32_t>(rng()),
                         static_cast<std::uint32_t>(rng())};
      return;
    }
    const std::uint32_t start = chance(50) ? 0xFFFFFFFFU - pick(40) : static_cast<std::uint32_t>(rng());
    Configure(q, rng() & ~std::uint64_t{0xF}, log2s[pick(std::size(log2s))], start);
  };
  check_invariants_ = true;
  for (unsigned q = 0; q < kQueues; ++q) random_config(q);

  std::uint64_t wraps = 0, reconfigs = 0, holds = 0, overfull = 0;
  std::uint32_t pending_reconfig = kQueues;  // a QUEUE_CONFIG waiting for idle_o under hold_i
  for (int phase = 0; phase < 24 && !HasFailure(); ++phase) {
    // Phase character: hint rate, ready rate, hold rate.
    const unsigned hint_pct = phase % 4 == 3 ? 90 : 30;
    const unsigned ready_pct = phase % 3 == 0 ? 100 : (phase % 3 == 1 ? 60 : 25);
    const unsigned hold_pct = phase % 4 == 3 ? 40 : 5;
    for (int c = 0; c < 4000 && !HasFailure(); ++c) {
      // Doorbells: up to the ring size (rarely beyond: a producer the engine must not believe).
      if (chance(12)) {
        const unsigned q = pick(kQueues);
        Queue& s = queues_[q];
        if (s.cfg) {
          const std::uint64_t posted = s.prod - s.cons;
          const std::uint64_t room = RingSize(s) - std::min(posted, RingSize(s));
          std::uint32_t add = 1U + pick(3);
          if (room < add && !chance(5)) add = static_cast<std::uint32_t>(room);
          if (posted + add > RingSize(s)) ++overfull;
          const std::uint32_t before = s.prod;
          s.prod += add;
          wraps += s.prod < before ? 1U : 0U;
          if (chance(50)) {  // lookup hints doorbells
            hint_valid_ = true;
            hint_queue_ = q;
          }
        }
      }
      // Consumes: up to what was requested.
      if (chance(12)) {
        const unsigned q = pick(kQueues);
        Queue& s = queues_[q];
        const std::int64_t reqd = Ahead(s.req, s.cons);
        if (s.cfg && reqd > 0) {
          s.cons += 1U + pick(static_cast<std::uint64_t>(reqd));
          if (chance(50)) {
            hint_valid_ = true;
            hint_queue_ = q;
          }
        }
      }
      if (!hint_valid_ && chance(hint_pct)) {
        hint_valid_ = true;
        hint_queue_ = pick(kQueues);
      }
      // QUEUE_CONFIG (and unconfiguring): hold_i until idle_o, then rewrite the queue.
      if (pending_reconfig == kQueues && chance(1) && chance(20)) pending_reconfig = pick(kQueues);
      const bool hold_now = pending_reconfig != kQueues || chance(hold_pct);
      if (pending_reconfig != kQueues && hold_ && sim_->idle_o != 0) {
        // hold_i was high in the last cycle and the engine is idle: no visit runs or starts.
        random_config(pending_reconfig);
        pending_reconfig = kQueues;
        ++reconfigs;
      }
      hold_ = hold_now;
      holds += hold_ ? 1U : 0U;
      iss_ready_ = chance(ready_pct);
      Step();
      hint_valid_ = false;
    }
    // Drain.
    if (pending_reconfig != kQueues && !HasFailure()) {
      hold_ = true;
      iss_ready_ = true;
      Step();
      StepUntil([this] { return sim_->idle_o != 0; }, "idle under hold_i");
      random_config(pending_reconfig);
      pending_reconfig = kQueues;
      ++reconfigs;
    }
    hold_ = false;
    iss_ready_ = true;
    for (int round = 0; round < 2 && !HasFailure(); ++round) {
      for (unsigned q = 0; q < kQueues && !HasFailure(); ++q) {
        for (int tries = 0; tries < 200 && !Hint(q); ++tries) {
        }
      }
      Settle(2000);
    }
    for (unsigned q = 0; q < kQueues && !HasFailure(); ++q) {
      const Queue& s = queues_[q];
      if (!s.cfg) continue;
      const std::uint64_t want = std::min<std::uint64_t>(s.prod - s.cons, Lim(s));
      EXPECT_EQ(Ahead(s.req, s.cons), static_cast<std::int64_t>(want))
          << "phase " << phase << " queue " << q << ": prod " << s.prod << " cons " << s.cons << " req " << s.req
          << " log2 " << s.log2;
    }
  }
  // The run covered what it claims to.
  std::size_t visits_with_reads = 0, visits_full = 0;
  for (const VisitLog& v : visits_) {
    visits_with_reads += v.n > 0 ? 1U : 0U;
    visits_full += v.n == kPrefetch ? 1U : 0U;
  }
  std::printf(
      "[ COVERAGE ] %zu visits (%zu with reads, %zu of RqPrefetch reads), %zu reads, %llu stalled "
      "cycles, %llu hints taken, %llu dropped, %llu prod wraps, %llu re-configurations, %llu "
      "cycles held, %llu doorbells beyond the ring\n",
      visits_.size(), visits_with_reads, visits_full, issues_.size(), static_cast<unsigned long long>(stall_checks_),
      static_cast<unsigned long long>(hints_taken_), static_cast<unsigned long long>(hints_dropped_),
      static_cast<unsigned long long>(wraps), static_cast<unsigned long long>(reconfigs),
      static_cast<unsigned long long>(holds), static_cast<unsigned long long>(overfull));
  EXPECT_GT(issues_.size(), 2000U);
  EXPECT_GT(visits_with_reads, 300U);
  EXPECT_GT(visits_.size() - visits_with_reads, 300U) << "visits with nothing to request";
  EXPECT_GT(visits_full, 5U) << "visits of RqPrefetch reads";
  EXPECT_GT(stall_checks_, 500U);
  EXPECT_GT(hints_dropped_, 0U) << "the hint FIFO never filled";
  EXPECT_GT(wraps, 0U) << "no MSN wrapped";
  EXPECT_GT(reconfigs, 0U);
  EXPECT_GT(holds, 1000U);
  EXPECT_GT(overfull, 0U);
}

}  // namespace
