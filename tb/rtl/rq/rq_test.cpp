// SPDX-License-Identifier: Apache-2.0
// rnic_lookup_rq at its interface (NumQueues 8, RqPrefetch 4): the receive-queue tables of lookup.
// Checks that every read port (A, E, C) answers one cycle after its address and holds the answer
// until the next clock, for every table field; that every write port (cfg, start, db, req, land,
// consume) writes its own queue only; that the ports read different queues in the same cycle;
// QUEUE_CONFIG's start (prod = req = landed = start - 1, head = start, modulo 2^32) and its
// priority over a doorbell, a consume's head write, a request and a landing of its queue in its
// cycle; consumes over two cycles (c_busy_o in the second) with the head write of the cycle before
// forwarded, so back-to-back and interleaved consumes all count, across the MSN wrap (RFC 5041
// 4.3); A's and E's cons copies (head - 1) and E's req forwarding of the read's own cycle; the descriptor
// cache slot (msn - 1) mod RqPrefetch; and a random mix of every write and read on every port,
// every cycle, against a C++ model of the tables.
//
// Reads other than E's req do not see a write of their own cycle (the RAMs' registered reads
// answer the table as it was before the cycle's writes: "older, never wrong" for the owner); the
// model assumes this. Not asserted (undocumented or outside the owner's use): the cache slot of a
// landing in a start's cycle, and writes to another queue in a start's cycle (the RTL loses the
// doorbell, request, landed and consume head writes of any queue in a start's cycle; its owner,
// rnic_rx_lookup, starts a queue only in C_QWR, where none of them is asked).
//
// Waveform with RNIC_FST=<file>.
#include "Vrnic_lookup_rq.h"
#include "rnic/tb/stage_sim.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "rnic/tb/seed.hpp"

namespace {

constexpr unsigned kQueues = RQ_NUM_QUEUES;
constexpr unsigned kPrefetch = RQ_PREFETCH;
static_assert((kPrefetch & (kPrefetch - 1)) == 0, "RqPrefetch is a power of two");

struct Cfg {
  bool set = false;
  std::uint64_t base = 0;
  std::uint8_t log2 = 0;
};

struct Desc {
  std::uint32_t msn = 0;
  std::uint64_t addr = 0;
  std::uint32_t len = 0;
  bool err = false;
};

// One queue's tables.
struct QueueState {
  Cfg cfg;
  std::uint32_t prod = 0, head = 0, req = 0, landed = 0;
  std::array<Desc, kPrefetch> cache{};
};

struct AAnswer {
  Cfg cfg;
  std::uint32_t prod = 0, head = 0, landed = 0;
  Desc cd;
};

struct EAnswer {
  Cfg cfg;
  std::uint32_t prod = 0, cons = 0, req = 0;
};

// One cycle's inputs. start is always given with cfg_we and cfg.set (QUEUE_CONFIG).
struct Inputs {
  unsigned a_queue = 0, a_slot = 0, e_queue = 0, c_queue = 0;
  bool c_valid = false;
  bool cfg_we = false;
  unsigned cfg_queue = 0;
  Cfg cfg;
  bool start = false;
  std::uint32_t start_msn = 0;
  bool db_we = false;
  unsigned db_queue = 0;
  std::uint32_t db_prod = 0;
  bool req_we = false;
  unsigned req_queue = 0;
  std::uint32_t req_msn = 0;
  bool land_we = false;
  unsigned land_queue = 0;
  Desc land;
};

unsigned SlotOf(std::uint32_t msn) { return (msn - 1U) & (kPrefetch - 1U); }

// The start of a queue: QUEUE_CONFIG's configuration word and first MSN.
void SetStart(Inputs& in, unsigned q, std::uint32_t msn, const Cfg& cfg) {
  in.cfg_we = true;
  in.cfg_queue = q;
  in.cfg = cfg;
  in.cfg.set = true;
  in.start = true;
  in.start_msn = msn;
}
void SetDb(Inputs& in, unsigned q, std::uint32_t prod) {
  in.db_we = true;
  in.db_queue = q;
  in.db_prod = prod;
}
void SetReq(Inputs& in, unsigned q, std::uint32_t msn) {
  in.req_we = true;
  in.req_queue = q;
  in.req_msn = msn;
}
void SetLand(Inputs& in, unsigned q, const Desc& d) {
  in.land_we = true;
  in.land_queue = q;
  in.land = d;
}

// Distinct contents per queue, field and MSN.
Cfg CfgOf(unsigned q) {
  Cfg c;
  c.set = true;
  c.base = 0xA5A5000000000000ULL | (std::uint64_t{q} << 32) | 0x1000U;
  c.log2 = static_cast<std::uint8_t>(q + 2U);
  return c;
}
Desc DescOf(unsigned q, std::uint32_t msn, bool err = false) {
  Desc d;
  d.msn = msn;
  d.addr = 0x00C0FFEE00000000ULL | (std::uint64_t{q} << 24) | msn;
  d.len = 0x1000U * (q + 1U) + (msn & 0xFFFU);
  d.err = err;
  return d;
}
std::uint32_t FirstMsnOf(unsigned q) { return 0x01000000U * (q + 1U) + 0x100U; }

std::string Hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// The tables of rnic_lookup_rq, cycle by cycle: step() answers the cycle's reads (before its
// writes, E's req with the cycle's req write forwarded) and applies its writes (start first).
class RefModel {
 public:
  struct Expect {
    AAnswer a;
    bool a_cd_known = true;
    EAnswer e;
    bool c_busy = false;
    unsigned c_busy_queue = 0;
  };

  Expect step(const Inputs& in) {
    Expect x;
    const QueueState& qa = q_[in.a_queue];
    x.a.cfg = qa.cfg;
    x.a.prod = qa.prod;
    x.a.head = qa.head;
    x.a.landed = qa.landed;
    x.a.cd = qa.cache[in.a_slot];
    x.a_cd_known = known_[in.a_queue][in.a_slot];
    const QueueState& qe = q_[in.e_queue];
    x.e.cfg = qe.cfg;
    x.e.prod = qe.prod;
    x.e.cons = qe.head - 1U;
    x.e.req = qe.req;
    const unsigned req_q = in.start ? in.cfg_queue : in.req_queue;
    if ((in.start || in.req_we) && req_q == in.e_queue) {
      x.e.req = in.start ? in.start_msn - 1U : in.req_msn;
    }
    x.c_busy = in.c_valid;
    x.c_busy_queue = in.c_queue;

    if (in.cfg_we) q_[in.cfg_queue].cfg = in.cfg;
    if (in.land_we) {
      const unsigned slot = SlotOf(in.land.msn);
      q_[in.land_queue].cache[slot] = in.land;
      known_[in.land_queue][slot] = !in.start;  // a landing in a start's cycle: not specified
    }
    if (in.start) {
      QueueState& s = q_[in.cfg_queue];
      s.prod = s.req = s.landed = in.start_msn - 1U;
      s.head = in.start_msn;
    } else {
      if (in.db_we) q_[in.db_queue].prod = in.db_prod;
      if (c2_valid_) q_[c2_queue_].head += 1U;  // the head as written up to the cycle before
      if (in.req_we) q_[in.req_queue].req = in.req_msn;
      if (in.land_we) q_[in.land_queue].landed = in.land.msn;
    }
    c2_valid_ = in.c_valid;
    c2_queue_ = in.c_queue;
    return x;
  }

  const QueueState& queue(unsigned q) const { return q_[q]; }
  bool consume_pending() const { return c2_valid_; }
  unsigned consume_queue() const { return c2_queue_; }

 private:
  std::array<QueueState, kQueues> q_{};
  std::array<std::array<bool, kPrefetch>, kQueues> known_{};
  bool c2_valid_ = false;
  unsigned c2_queue_ = 0;
};

class Rq : public ::testing::Test {
 protected:
  void SetUp() override {
    Drive(Inputs{});
    sim_.reset();
  }

  static std::uint8_t Q(unsigned q) { return static_cast<std::uint8_t>(q); }

  void Drive(const Inputs& in) {
    sim_->a_queue_i = Q(in.a_queue);
    sim_->a_slot_i = static_cast<std::uint8_t>(in.a_slot);
    sim_->e_queue_i = Q(in.e_queue);
    sim_->c_valid_i = in.c_valid ? 1U : 0U;
    sim_->c_queue_i = Q(in.c_queue);
    sim_->cfg_we_i = in.cfg_we ? 1U : 0U;
    sim_->cfg_queue_i = Q(in.cfg_queue);
    sim_->cfg_set_i = in.cfg.set ? 1U : 0U;
    sim_->cfg_base_i = in.cfg.base;
    sim_->cfg_log2_i = in.cfg.log2;
    sim_->start_i = in.start ? 1U : 0U;
    sim_->start_msn_i = in.start_msn;
    sim_->db_we_i = in.db_we ? 1U : 0U;
    sim_->db_queue_i = Q(in.db_queue);
    sim_->db_prod_i = in.db_prod;
    sim_->req_we_i = in.req_we ? 1U : 0U;
    sim_->req_queue_i = Q(in.req_queue);
    sim_->req_msn_i = in.req_msn;
    sim_->land_we_i = in.land_we ? 1U : 0U;
    sim_->land_queue_i = Q(in.land_queue);
    sim_->land_msn_i = in.land.msn;
    sim_->land_addr_i = in.land.addr;
    sim_->land_len_i = in.land.len;
    sim_->land_err_i = in.land.err ? 1U : 0U;
  }
  // One clock cycle with inputs `in`: afterwards the outputs answer its reads.
  void Cycle(const Inputs& in) {
    Drive(in);
    sim_.tick();
  }
  void Idle(unsigned n = 1) {
    for (unsigned i = 0; i < n; ++i) Cycle(Inputs{});
  }

  AAnswer A() {
    AAnswer a;
    a.cfg.set = sim_->a_cfg_o != 0U;
    a.cfg.base = sim_->a_base_o;
    a.cfg.log2 = sim_->a_log2_o;
    a.prod = sim_->a_prod_o;
    a.head = sim_->a_cons_o + 1U;  // A answers cons = head - 1
    a.landed = sim_->a_landed_o;
    a.cd.msn = sim_->a_cd_msn_o;
    a.cd.addr = sim_->a_cd_addr_o;
    a.cd.len = sim_->a_cd_len_o;
    a.cd.err = sim_->a_cd_err_o != 0U;
    return a;
  }
  EAnswer E() {
    EAnswer e;
    e.cfg.set = sim_->e_cfg_o != 0U;
    e.cfg.base = sim_->e_base_o;
    e.cfg.log2 = sim_->e_log2_o;
    e.prod = sim_->e_prod_o;
    e.cons = sim_->e_cons_o;
    e.req = sim_->e_req_o;
    return e;
  }

  // Single writes, each one cycle.
  void Start(unsigned q, std::uint32_t msn, const Cfg& cfg) {
    Inputs in;
    SetStart(in, q, msn, cfg);
    Cycle(in);
  }
  void Start(unsigned q, std::uint32_t msn) { Start(q, msn, CfgOf(q)); }
  void WriteCfg(unsigned q, const Cfg& cfg) {
    Inputs in;
    in.cfg_we = true;
    in.cfg_queue = q;
    in.cfg = cfg;
    Cycle(in);
  }
  void Db(unsigned q, std::uint32_t prod) {
    Inputs in;
    SetDb(in, q, prod);
    Cycle(in);
  }
  void Req(unsigned q, std::uint32_t msn) {
    Inputs in;
    SetReq(in, q, msn);
    Cycle(in);
  }
  void Land(unsigned q, const Desc& d) {
    Inputs in;
    SetLand(in, q, d);
    Cycle(in);
  }
  // Back-to-back consumes (one per cycle), then the last one's write cycle.
  void Consumes(const std::vector<unsigned>& queues) {
    for (unsigned q : queues) {
      Inputs in;
      in.c_valid = true;
      in.c_queue = q;
      Cycle(in);
    }
    Idle();
  }
  AAnswer ReadA(unsigned q, unsigned slot = 0) {
    Inputs in;
    in.a_queue = q;
    in.a_slot = slot;
    Cycle(in);
    return A();
  }
  EAnswer ReadE(unsigned q) {
    Inputs in;
    in.e_queue = q;
    Cycle(in);
    return E();
  }

  // Every queue configured and started, with distinct values in every field and every cache slot:
  // prod = first + 40, head = first, req = first + 20, landed = first + kPrefetch - 1.
  std::array<QueueState, kQueues> Fill() {
    std::array<QueueState, kQueues> s{};
    for (unsigned q = 0; q < kQueues; ++q) {
      const std::uint32_t first = FirstMsnOf(q);
      Cfg c = CfgOf(q);
      Start(q, first, c);
      if (q % 3U == 0U) {  // some queues unconfigured again (their words still written)
        c.set = false;
        WriteCfg(q, c);
      }
      Db(q, first + 40U);
      Req(q, first + 20U);
      s[q].cfg = c;
      s[q].prod = first + 40U;
      s[q].head = first;
      s[q].req = first + 20U;
      for (unsigned k = 0; k < kPrefetch; ++k) {
        const Desc d = DescOf(q, first + k, (k & 1U) != 0U);
        Land(q, d);
        s[q].cache[SlotOf(d.msn)] = d;
        s[q].landed = d.msn;
      }
    }
    return s;
  }

  static void ExpectCfg(const Cfg& got, const Cfg& want, const std::string& what) {
    EXPECT_EQ(got.set, want.set) << what;
    if (want.set) {
      EXPECT_EQ(got.base, want.base) << what;
      EXPECT_EQ(got.log2, want.log2) << what;
    }
  }
  static void ExpectDesc(const Desc& got, const Desc& want, const std::string& what) {
    EXPECT_EQ(got.msn, want.msn) << what;
    EXPECT_EQ(got.addr, want.addr) << what;
    EXPECT_EQ(got.len, want.len) << what;
    EXPECT_EQ(got.err, want.err) << what;
  }
  static void ExpectA(const AAnswer& a, const QueueState& s, unsigned slot, const std::string& what) {
    ExpectCfg(a.cfg, s.cfg, what + " A cfg");
    EXPECT_EQ(a.prod, s.prod) << what << " A prod";
    EXPECT_EQ(a.head, s.head) << what << " A head";
    EXPECT_EQ(a.landed, s.landed) << what << " A landed";
    ExpectDesc(a.cd, s.cache[slot], what + " A cache slot " + std::to_string(slot));
  }
  static void ExpectE(const EAnswer& e, const QueueState& s, const std::string& what) {
    ExpectCfg(e.cfg, s.cfg, what + " E cfg");
    EXPECT_EQ(e.prod, s.prod) << what << " E prod";
    EXPECT_EQ(e.cons, s.head - 1U) << what << " E cons";
    EXPECT_EQ(e.req, s.req) << what << " E req";
  }
  // Reads queue q on A (every cache slot) and E and checks every field.
  void ExpectQueue(unsigned q, const QueueState& s, const std::string& what = "") {
    const std::string w = what + " queue " + std::to_string(q);
    for (unsigned slot = 0; slot < kPrefetch; ++slot) {
      Inputs in;
      in.a_queue = q;
      in.a_slot = slot;
      in.e_queue = q;
      Cycle(in);
      ExpectA(A(), s, slot, w);
      ExpectE(E(), s, w);
    }
  }
  void ExpectAll(const std::array<QueueState, kQueues>& s, const std::string& what = "") {
    for (unsigned q = 0; q < kQueues; ++q) ExpectQueue(q, s[q], what);
  }
  // MSN state only (A and E in one cycle).
  void ExpectMsn(unsigned q, std::uint32_t prod, std::uint32_t head, std::uint32_t req, std::uint32_t landed,
                 const std::string& what = "") {
    Inputs in;
    in.a_queue = q;
    in.e_queue = q;
    Cycle(in);
    const AAnswer a = A();
    const EAnswer e = E();
    const std::string w = what + " queue " + std::to_string(q);
    EXPECT_EQ(a.prod, prod) << w << " A prod";
    EXPECT_EQ(a.head, head) << w << " A head";
    EXPECT_EQ(a.landed, landed) << w << " A landed";
    EXPECT_EQ(e.prod, prod) << w << " E prod";
    EXPECT_EQ(e.cons, head - 1U) << w << " E cons";
    EXPECT_EQ(e.req, req) << w << " E req";
  }
  void ExpectHead(unsigned q, std::uint32_t head, const std::string& what = "") {
    Inputs in;
    in.a_queue = q;
    in.e_queue = q;
    Cycle(in);
    EXPECT_EQ(sim_->a_cons_o, head - 1U) << what << " queue " << q << " A cons";
    EXPECT_EQ(sim_->e_cons_o, head - 1U) << what << " queue " << q << " E cons";
  }

  rnic::tb::StageSim<Vrnic_lookup_rq> sim_;  // clock, reset, FST (RNIC_FST)
};

// ---- 1. reads and writes ------------------------------------------------------------------------

// A and E each answer the address of the cycle before, for every field, with a different queue
// (and slot) each cycle, and hold the answer while the next address waits for the clock.
TEST_F(Rq, ReadsAnswerOneCycleAfterTheAddressOnAAndE) {
  const std::array<QueueState, kQueues> s = Fill();
  unsigned prev_a = 0, prev_slot = 0, prev_e = 0;
  for (unsigned i = 0; i < 4U * kQueues * kPrefetch; ++i) {
    Inputs in;
    in.a_queue = (i * 3U + 1U) % kQueues;
    in.a_slot = (i + i / kQueues) % kPrefetch;
    in.e_queue = (i * 5U + 2U) % kQueues;
    in.c_queue = (i * 7U + 3U) % kQueues;  // C reads too (no consume)
    Drive(in);
    sim_.eval();
    if (i > 0) {  // still the last cycle's answers: the reads are registered
      const std::string w = "held, cycle " + std::to_string(i);
      ExpectA(A(), s[prev_a], prev_slot, w);
      ExpectE(E(), s[prev_e], w);
    }
    sim_.tick();
    const std::string w = "cycle " + std::to_string(i);
    ExpectA(A(), s[in.a_queue], in.a_slot, w);
    ExpectE(E(), s[in.e_queue], w);
    prev_a = in.a_queue;
    prev_slot = in.a_slot;
    prev_e = in.e_queue;
  }
  // The C port's head copy answers too: a consume of every queue reads its own head.
  for (unsigned q = 0; q < kQueues; ++q) Consumes({q});
  for (unsigned q = 0; q < kQueues; ++q) ExpectHead(q, s[q].head + 1U, "after a consume");
}

// Each write port writes its own queue and field and nothing else; both copies of a table (A and E)
// follow.
TEST_F(Rq, EveryWritePortWritesItsQueueOnly) {
  std::array<QueueState, kQueues> s = Fill();
  ExpectAll(s, "filled");

  Cfg c;
  c.set = true;
  c.base = 0x0123456789ABCDEFULL;
  c.log2 = 31;
  WriteCfg(5, c);
  s[5].cfg = c;
  ExpectAll(s, "cfg set");
  c.set = false;
  WriteCfg(5, c);
  s[5].cfg.set = false;
  ExpectAll(s, "cfg cleared");

  Db(2, 0xDEADBEEFU);
  s[2].prod = 0xDEADBEEFU;
  ExpectAll(s, "db");

  Req(6, 0x13572468U);
  s[6].req = 0x13572468U;
  ExpectAll(s, "req");

  const Desc d = DescOf(1, 0x55555555U, true);
  Land(1, d);
  s[1].cache[SlotOf(d.msn)] = d;
  s[1].landed = d.msn;
  ExpectAll(s, "land");

  Consumes({7});
  s[7].head += 1U;
  ExpectAll(s, "consume");

  Start(4, 0x0BADF00DU, CfgOf(3));
  s[4].cfg = CfgOf(3);
  s[4].prod = s[4].req = s[4].landed = 0x0BADF00CU;
  s[4].head = 0x0BADF00DU;
  ExpectAll(s, "start");  // the cache is not the start's business
}

// A, E and C read three different queues in one cycle; each answers (or consumes) its own.
TEST_F(Rq, PortsReadDifferentQueuesInTheSameCycle) {
  const std::array<QueueState, kQueues> s = Fill();
  std::array<std::uint32_t, kQueues> head{};
  for (unsigned q = 0; q < kQueues; ++q) head[q] = s[q].head;
  bool pending = false;
  unsigned pending_q = 0;
  for (unsigned i = 0; i < 3U * kQueues; ++i) {
    Inputs in;
    in.c_valid = true;
    in.c_queue = i % kQueues;
    in.a_queue = (i + 3U) % kQueues;
    in.a_slot = i % kPrefetch;
    in.e_queue = (i + 5U) % kQueues;
    Cycle(in);
    QueueState sa = s[in.a_queue];
    sa.head = head[in.a_queue];
    QueueState se = s[in.e_queue];
    se.head = head[in.e_queue];
    const std::string w = "cycle " + std::to_string(i);
    ExpectA(A(), sa, in.a_slot, w);
    ExpectE(E(), se, w);
    EXPECT_EQ(sim_->c_busy_o, 1U) << w;
    EXPECT_EQ(sim_->c_busy_queue_o, in.c_queue) << w;
    if (pending) head[pending_q] += 1U;  // the last cycle's consume writes in this one
    pending = true;
    pending_q = in.c_queue;
  }
  Idle();
  for (unsigned q = 0; q < kQueues; ++q) ExpectHead(q, s[q].head + 3U);
}

// ---- 2. start (QUEUE_CONFIG) --------------------------------------------------------------------

// The queue starts empty at its first MSN (RFC 5041 4.3: the initial MSN is one): nothing posted,
// requested or landed; head = the first MSN; the configuration word written with it.
TEST_F(Rq, StartSetsEveryMsnFieldAndTheConfiguration) {
  std::array<QueueState, kQueues> s = Fill();
  Start(3, 1U, CfgOf(6));
  s[3].cfg = CfgOf(6);
  s[3].prod = s[3].req = s[3].landed = 0U;
  s[3].head = 1U;
  ExpectAll(s, "start at 1");
  // A restart of a used queue puts every MSN field back.
  Consumes({3, 3});
  Db(3, 9U);
  Req(3, 5U);
  Land(3, DescOf(3, 4U));
  Start(3, 0x00010000U);
  ExpectMsn(3, 0x0000FFFFU, 0x00010000U, 0x0000FFFFU, 0x0000FFFFU, "restart");
}

// start - 1 and head wrap modulo 2^32 (RFC 5041 4.3: the MSN wraps to 0 after 0xFFFFFFFF).
TEST_F(Rq, Rfc5041_4_3_StartMsnWrapsModulo2To32) {
  Fill();
  for (const std::uint32_t first : {0U, 0xFFFFFFFFU, 0x80000000U, 0x7FFFFFFFU, 1U}) {
    const std::string w = "start " + Hex(first);
    Start(2, first);
    ExpectMsn(2, first - 1U, first, first - 1U, first - 1U, w);
    Consumes({2});
    ExpectMsn(2, first - 1U, first + 1U, first - 1U, first - 1U, w + " + consume");
  }
  // start 0: prod = req = landed = cons = 0xFFFFFFFF, head = 0.
  Start(0, 0U);
  ExpectMsn(0, 0xFFFFFFFFU, 0U, 0xFFFFFFFFU, 0xFFFFFFFFU, "start 0");
}

// start overrides a doorbell, a consume's head write, a request and a landing of its queue in its
// cycle (each alone and all together); E's req read in the start's cycle gets the start's req.
TEST_F(Rq, StartOverridesSameCycleWritesToItsQueue) {
  constexpr unsigned q = 5;
  constexpr std::uint32_t first = 0x40000000U;
  for (unsigned which = 0; which < 5; ++which) {
    const std::string w = "case " + std::to_string(which);
    Fill();
    const bool db = which == 0 || which == 4;
    const bool req = which == 1 || which == 4;
    const bool land = which == 2 || which == 4;
    const bool cons = which == 3 || which == 4;
    if (cons) {  // the consume's first cycle: its head write is in the start's cycle
      Inputs c;
      c.c_valid = true;
      c.c_queue = q;
      Cycle(c);
      EXPECT_EQ(sim_->c_busy_o, 1U) << w << ": the start's cycle is the consume's second";
    }
    Inputs in;
    SetStart(in, q, first, CfgOf(q));
    if (db) SetDb(in, q, 0x11111111U);
    if (req) SetReq(in, q, 0x22222222U);
    if (land) SetLand(in, q, DescOf(q, 0x33333333U));
    in.e_queue = q;
    Cycle(in);
    EXPECT_EQ(sim_->e_req_o, first - 1U) << w << ": E req in the start's cycle";
    ExpectMsn(q, first - 1U, first, first - 1U, first - 1U, w);
    const AAnswer a = ReadA(q);
    EXPECT_TRUE(a.cfg.set) << w;
    EXPECT_EQ(a.cfg.base, CfgOf(q).base) << w;
  }
}

// The start's head write is forwarded to a consume of the queue read in the start's cycle, and read
// by one in the cycle after.
TEST_F(Rq, StartHeadIsSeenByTheNextConsumes) {
  constexpr std::uint32_t first = 0x00ABCDEFU;
  for (unsigned gap = 0; gap < 3; ++gap) {
    for (unsigned n = 1; n <= 3; ++n) {
      const std::string w = "gap " + std::to_string(gap) + ", " + std::to_string(n) + " consumes";
      Fill();
      Inputs in;
      SetStart(in, 1, first, CfgOf(1));
      for (unsigned k = 0; k < gap; ++k) {
        Cycle(in);
        in = Inputs{};
      }
      for (unsigned k = 0; k < n; ++k) {  // the first consume in the start's cycle (gap 0)
        in.c_valid = true;
        in.c_queue = 1;
        Cycle(in);
        in = Inputs{};
      }
      Idle();
      ExpectMsn(1, first - 1U, first + n, first - 1U, first - 1U, w);
    }
  }
}

// ---- 3. consumes --------------------------------------------------------------------------------

TEST_F(Rq, SingleConsumeAdvancesHeadAndCons) {
  std::array<QueueState, kQueues> s = Fill();
  Consumes({4});
  s[4].head += 1U;
  ExpectAll(s, "one consume");
}

// Back-to-back consumes of one queue: each reads the head the cycle before wrote (forwarded), so N
// consumes give head + N.
TEST_F(Rq, BackToBackConsumesOfOneQueueCountEach) {
  for (unsigned n = 1; n <= 2U * kPrefetch + 1U; ++n) {
    Start(6, 100U);
    Consumes(std::vector<unsigned>(n, 6U));
    ExpectMsn(6, 99U, 100U + n, 99U, 99U, std::to_string(n) + " consumes");
  }
}

// Interleaved queues: the forwarding is by queue (a write of another queue is not forwarded).
TEST_F(Rq, ConsumesOfAlternatingQueuesCountEach) {
  const std::vector<std::vector<unsigned>> patterns = {
      {1, 2, 1, 2, 1, 2},
      {1, 1, 2},
      {1, 2, 1},
      {1, 2, 2, 1},
      {2, 1, 1, 1, 2, 2, 1, 2},
      {0, 1, 2, 3, 4, 5, 6, 7, 0, 1},
      {3, 7, 3, 7, 7, 3, 3},
  };
  for (const std::vector<unsigned>& p : patterns) {
    std::string w = "pattern";
    for (unsigned q : p) w += " " + std::to_string(q);
    const std::array<QueueState, kQueues> s = Fill();
    Consumes(p);
    for (unsigned q = 0; q < kQueues; ++q) {
      std::uint32_t n = 0;
      for (unsigned c : p) n += c == q ? 1U : 0U;
      ExpectHead(q, s[q].head + n, w);
    }
  }
}

// The head wraps from 0xFFFFFFFF to 0 (RFC 5041 4.3), alone and back-to-back.
TEST_F(Rq, Rfc5041_4_3_ConsumeWrapsHeadFromAllOnesToZero) {
  Start(3, 0xFFFFFFFFU);
  ExpectHead(3, 0xFFFFFFFFU);
  EXPECT_EQ(sim_->e_cons_o, 0xFFFFFFFEU);
  Consumes({3});
  ExpectMsn(3, 0xFFFFFFFEU, 0U, 0xFFFFFFFEU, 0xFFFFFFFEU, "one consume");
  EXPECT_EQ(sim_->e_cons_o, 0xFFFFFFFFU);

  Start(3, 0xFFFFFFFEU);
  Consumes({3, 3, 3});
  ExpectMsn(3, 0xFFFFFFFDU, 1U, 0xFFFFFFFDU, 0xFFFFFFFDU, "three consumes");
  EXPECT_EQ(sim_->e_cons_o, 0U);
}

// c_busy_o and c_busy_queue_o mark each consume's second cycle; the new head reads back from the
// cycle after it.
TEST_F(Rq, CBusyMarksEachConsumesSecondCycle) {
  EXPECT_EQ(sim_->c_busy_o, 0U) << "after reset";
  Start(2, 50U);
  Start(5, 500U);
  Idle();
  EXPECT_EQ(sim_->c_busy_o, 0U);
  Inputs in;
  in.c_valid = true;
  in.c_queue = 2;
  Cycle(in);
  // The second cycle, with its own inputs (no consume, another address): busy with queue 2.
  in = Inputs{};
  in.c_queue = 5;
  in.a_queue = 2;
  Drive(in);
  sim_.eval();
  EXPECT_EQ(sim_->c_busy_o, 1U);
  EXPECT_EQ(sim_->c_busy_queue_o, 2U);
  sim_.tick();
  EXPECT_EQ(sim_->c_busy_o, 0U);
  ExpectHead(2, 51U, "written in the busy cycle");

  const std::vector<unsigned> seq = {5, 2, 5, 5};
  for (std::size_t k = 0; k <= seq.size(); ++k) {
    in = Inputs{};
    in.c_valid = k < seq.size();
    in.c_queue = k < seq.size() ? seq[k] : 0U;
    Drive(in);
    sim_.eval();
    EXPECT_EQ(sim_->c_busy_o, k > 0 ? 1U : 0U) << "consume " << k;
    if (k > 0) {
      EXPECT_EQ(sim_->c_busy_queue_o, seq[k - 1]) << "consume " << k;
    }
    sim_.tick();
  }
  EXPECT_EQ(sim_->c_busy_o, 0U);
  ExpectHead(2, 52U);
  ExpectHead(5, 503U);
}

// ---- 4. E's req forwarding ----------------------------------------------------------------------

TEST_F(Rq, EReqForwardsTheWriteOfTheReadsCycle) {
  const std::array<QueueState, kQueues> s = Fill();
  for (unsigned q = 0; q < kQueues; ++q) {
    const std::uint32_t v = 0x70000000U + q;
    Inputs in;
    SetReq(in, q, v);
    in.e_queue = q;
    Cycle(in);
    EXPECT_EQ(sim_->e_req_o, v) << "queue " << q;
    EXPECT_EQ(sim_->e_prod_o, s[q].prod) << "queue " << q;
    EXPECT_EQ(ReadE(q).req, v) << "queue " << q << " written";
  }
}

TEST_F(Rq, EReqDoesNotForwardAnotherQueuesWrite) {
  const std::array<QueueState, kQueues> s = Fill();
  for (unsigned q = 0; q < kQueues; ++q) {
    const unsigned other = (q + 1U) % kQueues;
    const std::uint32_t v = 0x60000000U + q;
    Inputs in;
    SetReq(in, other, v);
    in.e_queue = q;
    Cycle(in);
    EXPECT_EQ(sim_->e_req_o, s[q].req) << "queue " << q;
    // The forwarding is of the read's own cycle only.
    in = Inputs{};
    in.e_queue = other;
    Cycle(in);
    EXPECT_EQ(sim_->e_req_o, v) << "queue " << other << " written";
    Req(other, s[other].req);
  }
}

// ---- 5. the descriptor cache --------------------------------------------------------------------

// A landing writes {msn, addr, len, err} into slot (msn - 1) mod RqPrefetch of its queue and
// landed = msn; A reads the slot back; nothing else changes.
TEST_F(Rq, LandWritesSlotMsnMinusOneModPrefetch) {
  std::array<QueueState, kQueues> s = Fill();
  for (std::uint32_t msn = 1; msn <= kPrefetch; ++msn) {
    for (const bool err : {false, true}) {
      const Desc d = DescOf(7, msn * 0x1000U + msn, err);
      ASSERT_EQ(SlotOf(d.msn), msn - 1U);
      Land(7, d);
      s[7].cache[msn - 1U] = d;
      s[7].landed = d.msn;
      ExpectAll(s, "msn " + Hex(d.msn));
    }
  }
}

// A later MSN of the same slot overwrites the descriptor.
TEST_F(Rq, LaterMsnOverwritesItsSlot) {
  std::array<QueueState, kQueues> s = Fill();
  const std::uint32_t m = 0x200U;
  for (std::uint32_t k = 0; k < 3; ++k) {
    const Desc d = DescOf(2, m + k * kPrefetch, k == 1);
    Land(2, d);
    const AAnswer a = ReadA(2, SlotOf(m));
    ExpectDesc(a.cd, d, "msn " + Hex(d.msn));
    EXPECT_EQ(a.landed, d.msn);
    s[2].cache[SlotOf(m)] = d;
    s[2].landed = d.msn;
  }
  ExpectAll(s, "overwritten");
}

// The slots follow the MSN across its wrap (RFC 5041 4.3): 0xFFFFFFFE, 0xFFFFFFFF, 0, 1 take
// consecutive slots, 0 the last one.
TEST_F(Rq, Rfc5041_4_3_CacheSlotsFollowTheMsnAcrossTheWrap) {
  std::array<QueueState, kQueues> s = Fill();
  const std::array<std::uint32_t, 4> msns = {0xFFFFFFFEU, 0xFFFFFFFFU, 0U, 1U};
  const std::array<unsigned, 4> slots = {(kPrefetch - 3U) % kPrefetch, kPrefetch - 2U, kPrefetch - 1U, 0U};
  for (unsigned i = 0; i < msns.size(); ++i) {
    const Desc d = DescOf(0, msns[i]);
    Land(0, d);
    s[0].cache[slots[i]] = d;
    s[0].landed = d.msn;
    ExpectDesc(ReadA(0, slots[i]).cd, d, "msn " + Hex(d.msn));
  }
  ExpectAll(s, "across the wrap");
}

// ---- 6. random ----------------------------------------------------------------------------------

// Every cycle a random mix of every write (cfg, start, db, req, land, consume) and reads on A, E
// and C of random queues; every answer compared with RefModel. Owner rules kept: start comes with
// cfg_we and cfg_set; in a start's cycle the doorbell, request, landing and consume write (if any)
// are of the started queue. MSNs near the queue's head, starts near the wrap.
TEST_F(Rq, RandomMixMatchesTheTableModel) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  auto uni = [&rng](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  auto coin = [&rng](double p) { return std::bernoulli_distribution(p)(rng); };
  auto queue = [&]() { return static_cast<unsigned>(uni(0, kQueues - 1U)); };
  RefModel model;
  auto near = [&](unsigned q) { return model.queue(q).head + static_cast<std::uint32_t>(uni(0, 24)) - 8U; };
  auto random_cfg = [&]() {
    Cfg c;
    c.set = coin(0.7);
    c.base = uni(0, ~std::uint64_t{0});
    c.log2 = static_cast<std::uint8_t>(uni(0, 31));
    return c;
  };
  auto first_msn = [&]() -> std::uint32_t {
    static constexpr std::array<std::uint32_t, 6> kEdges = {0U, 1U, 2U, 0xFFFFFFFFU, 0xFFFFFFFEU, 0xFFFFFFFDU};
    if (coin(0.6)) return kEdges[uni(0, kEdges.size() - 1U)];
    return static_cast<std::uint32_t>(uni(0, 0xFFFFFFFFU));
  };

  // Each cycle's answers are compared while the next cycle's inputs are applied (the answers are
  // registered: they must not follow the new addresses).
  unsigned checked = 0;
  bool compare = false;
  RefModel::Expect x;
  unsigned x_slot = 0;
  auto step = [&](const Inputs& in, bool check, unsigned n) {
    Drive(in);
    sim_.eval();
    if (compare) {
      const std::string w = "answers of cycle " + std::to_string(n - 1U);
      const AAnswer a = A();
      QueueState sa;
      sa.cfg = x.a.cfg;
      sa.prod = x.a.prod;
      sa.head = x.a.head;
      sa.landed = x.a.landed;
      sa.cache[x_slot] = x.a_cd_known ? x.a.cd : a.cd;
      ExpectA(a, sa, x_slot, w);
      QueueState se;
      se.cfg = x.e.cfg;
      se.prod = x.e.prod;
      se.head = x.e.cons + 1U;
      se.req = x.e.req;
      ExpectE(E(), se, w);
      EXPECT_EQ(sim_->c_busy_o, x.c_busy ? 1U : 0U) << w;
      if (x.c_busy) {
        EXPECT_EQ(sim_->c_busy_queue_o, x.c_busy_queue) << w;
      }
      ++checked;
    }
    x = model.step(in);
    x_slot = in.a_slot;
    compare = check;
    sim_.tick();
    return !::testing::Test::HasFailure();
  };

  // Every queue configured, started and its cache filled (the RAMs are not reset).
  unsigned cycle = 0;
  for (unsigned q = 0; q < kQueues; ++q) {
    Inputs in;
    SetStart(in, q, first_msn(), random_cfg());
    step(in, false, cycle++);
    for (unsigned k = 0; k < kPrefetch; ++k) {
      in = Inputs{};
      SetLand(in, q, DescOf(q, model.queue(q).head + k));
      step(in, false, cycle++);
    }
  }

  constexpr unsigned kCycles = 100000;
  for (unsigned i = 0; i < kCycles; ++i) {
    Inputs in;
    in.a_queue = queue();
    in.a_slot = static_cast<unsigned>(uni(0, kPrefetch - 1U));
    in.e_queue = queue();
    in.c_queue = queue();
    in.c_valid = coin(0.4);
    if (coin(0.3)) SetDb(in, queue(), 0);
    if (coin(0.3)) SetReq(in, queue(), 0);
    if (coin(0.3)) SetLand(in, queue(), Desc{});
    if (coin(0.03)) {
      // A consume's head write in this cycle must be of the started queue.
      const unsigned q = model.consume_pending() ? model.consume_queue() : queue();
      SetStart(in, q, first_msn(), random_cfg());
      in.db_queue = in.req_queue = in.land_queue = q;
    } else if (coin(0.05)) {
      in.cfg_we = true;
      in.cfg_queue = queue();
      in.cfg = random_cfg();
    }
    // Reads often of the written queues.
    if (coin(0.3)) in.a_queue = in.land_we ? in.land_queue : in.db_queue;
    if (coin(0.3)) in.e_queue = in.req_we ? in.req_queue : in.db_queue;
    in.db_prod = near(in.db_queue);
    in.req_msn = near(in.req_queue);
    const bool err = coin(0.2);
    in.land = DescOf(in.land_queue, near(in.land_queue), err);
    in.land.addr ^= uni(0, 0xFFFFFFU) << 20;
    in.land.len = static_cast<std::uint32_t>(uni(0, 0xFFFFFFFFU));
    if (!step(in, true, cycle++)) {
      ADD_FAILURE() << "stopped at random cycle " << i << " (replay: RNIC_TEST_SEED=" << seed << ")";
      return;
    }
  }
  step(Inputs{}, false, cycle++);  // the last cycle's answers
  EXPECT_EQ(checked, kCycles);
}

}  // namespace
