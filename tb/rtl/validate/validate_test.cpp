// SPDX-License-Identifier: Apache-2.0
// rnic_rx_validate at its own interface (SsnWindow 64): the RFC 5041 7.1 checks and the 7.2 error
// numbers, one rnic_lookup_t in, one rnic_verdict_t out, in order.
//
// The bench plays lookup (a source of rnic_lookup_t items with random valid gaps, valid held until
// accepted) and place (vd_ready_i random). It is latency-agnostic: nothing assumes in which cycle a
// verdict or an event appears, only the order. Checked:
// - each verdict against a reference written from RFC 5041 7.1 / 7.2 (and RFC 5043 10 for the
//   DDP-SSN window), in order, none lost or duplicated; kind, arg and the segment are passed on
//   unchanged; PLACE: addr, pay_bytes, hdr_bytes and (untagged) msg_len; ERROR: type, code and the
//   counter index (row of ddp_errors.def). Fields without meaning for the action are not compared;
// - vd_valid_o / vd_o hold while vd_ready_i is low (AXI-Stream 2.2.1), no verdict before an item;
// - err_valid_o pulses: one per ERROR verdict, in order, with its stream, no earlier than the
//   item's acceptance and no later than its verdict's first valid cycle; error_event_o /
//   error_idx_o the same per index; drop_event_o one per DROP, access_event_o one per access-rights
//   failure;
// - throughput: with lk_valid_i and vd_ready_i always high, N items take at most N + 4 cycles;
// - reset with items in flight: nothing of them comes out afterwards, the outputs are idle.
// The error state (RFC 5041 7.1; docs/rtl-architecture.md, Error state and "Errors in DDP-SSN
// order"): a failing segment in the window makes its stream PENDING at its DDP-SSN (err_at_ssn), one
// outside it makes it ERROR; a PENDING stream takes only the segments in the window before that
// DDP-SSN. The bench also plays lookup's part of it. When err_valid_o pulses, every item of that
// stream the bench has not yet put on lk_i gets the state, PD and DDP-SSN it names, as lookup's
// forwarded stream-table write gives them; the item on lk_i in that cycle (lookup's output
// register) and the ones already inside validate keep theirs, and validate must decide them by the
// new state itself. So the scoreboard is exact: a segment after an ERROR verdict of its stream is
// decided by the state that verdict sets; `forwarded` counts the DROPs validate decided without
// the state.
// Seed: RNIC_TEST_SEED=<n>; waveform: RNIC_FST=<file> (use --gtest_filter to pick one test).
#include "Vrnic_rx_validate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "rnic/tb/rtl_structs.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/stage_sim.hpp"
#include "rnic/wire/ddp_errors.hpp"

namespace {

using namespace rnic::tb;

constexpr unsigned kWindow = VALIDATE_SSN_WINDOW;  // rnic_rx_validate SsnWindow
// The struct widths of structs.def (rtl/rnic_structs.svh) match the model's ports (815 and 583 bits).
static_assert(sizeof(Vrnic_rx_validate::lk_i) == 4 * ((kLookupBits + 31) / 32), "rnic_lookup_t");
static_assert(sizeof(Vrnic_rx_validate::vd_o) == 4 * ((kVerdictBits + 31) / 32), "rnic_verdict_t");
using u128 = unsigned __int128;

// ---- the reference: RFC 5041 7.1 / 7.2 ----------------------------------------------------------

// A row of the 7.2 table (type, code); the counter index is the row's position in ddp_errors.def.
struct RfcError {
  std::uint8_t type;
  std::uint8_t code;
};
constexpr RfcError kLocalCatastrophic{0x0, 0x00};
constexpr RfcError kInvalidStag{0x1, 0x00};
constexpr RfcError kBaseBounds{0x1, 0x01};
constexpr RfcError kStagNotAssociated{0x1, 0x02};
constexpr RfcError kToWrap{0x1, 0x03};
constexpr RfcError kTaggedInvalidVersion{0x1, 0x04};
constexpr RfcError kInvalidQn{0x2, 0x01};
constexpr RfcError kNoBuffer{0x2, 0x02};
constexpr RfcError kMsnRange{0x2, 0x03};
constexpr RfcError kInvalidMo{0x2, 0x04};
constexpr RfcError kMessageTooLong{0x2, 0x05};
constexpr RfcError kUntaggedInvalidVersion{0x2, 0x06};
constexpr RfcError kLlp{0x3, 0x00};  // type 3 is the LLP's; the project's code 0 (RFC 5043 10)

unsigned counter_index(RfcError e) {
  const auto& rows = rnic::wire::kAllDdpErrors;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rnic::wire::error_type(rows[i]) == e.type && rnic::wire::error_code(rows[i]) == e.code) {
      return static_cast<unsigned>(i);
    }
  }
  ADD_FAILURE() << "error " << unsigned{e.type} << "/" << unsigned{e.code} << " not in ddp_errors.def";
  return 31;
}

struct Expect {
  Action action = kPlace;
  RfcError err{0, 0};
  bool access = false;  // an access-rights failure (no remote write): also counted apart
  std::uint64_t addr = 0;
  std::uint16_t pay = 0;
  std::uint8_t hdr = 0;
  std::optional<std::uint32_t> msg_len;  // untagged PLACE only
  bool at_ssn = false;                   // ERROR: reported at its DDP-SSN position (in the window)
};

Expect fail(RfcError e, bool access = false) {
  Expect x;
  x.action = kError;
  x.err = e;
  x.access = access;
  return x;
}

bool in_window(const Lookup& l) { return static_cast<std::uint16_t>(l.seg.ssn - l.next_ssn) < kWindow; }
// In the window and before DDP-SSN e (docs/rtl-architecture.md, "Errors in DDP-SSN order").
bool in_front(const Lookup& l, std::uint16_t e) {
  const auto d = static_cast<std::uint16_t>(e - l.seg.ssn);
  return in_window(l) && d != 0 && d < kWindow;
}

Expect reference_checks(const Lookup& l);
// What validate must decide for one item.
Expect reference(const Lookup& l) {
  Expect x = reference_checks(l);
  if (x.action == kError) x.at_ssn = in_window(l);  // an error outside the window has no position
  return x;
}
Expect reference_checks(const Lookup& l) {
  Expect x;
  if (l.kind != kSeg) {
    x.action = kToken;  // commands travel in-band: no checks
    return x;
  }
  if ((l.stream_state != kStreamNormal && l.stream_state != kStreamPending) ||
      (l.stream_state == kStreamPending && !in_front(l, l.stream_essn))) {
    x.action = kDrop;  // 7.1: after an error, silently drop every later segment
    return x;
  }
  const Seg& s = l.seg;
  const unsigned hdr = s.is_tagged ? 14U : 18U;  // 4.2 tagged header, 4.3 untagged header
  // Nothing to place from (the packet's payload was not kept, it is shorter than its own header, or
  // the receive descriptor could not be read): Local Catastrophic.
  if (s.oversize || s.seg_bytes < hdr || l.local_fault) return fail(kLocalCatastrophic);
  const auto pay = static_cast<std::uint16_t>(s.seg_bytes - hdr);
  // RFC 5043 10: a DDP-SSN at or past the reorder window is an LLP error.
  if (static_cast<std::uint16_t>(s.ssn - l.next_ssn) >= kWindow) return fail(kLlp);
  x.pay = pay;
  x.hdr = static_cast<std::uint8_t>(hdr);
  if (s.is_tagged) {
    if (s.dv != 1) return fail(kTaggedInvalidVersion);
    if (pay != 0) {  // 7.1 checks non-zero-length tagged segments only
      // #1 the STag is valid for this stream (the key byte is STag[7:0], the index the rest).
      if (!l.stag_valid || l.stag_key != (s.stag & 0xFFU)) return fail(kInvalidStag);
      // #1 / 8.2: protection domain, or a stream the STag is bound to.
      if (l.stag_pd != l.stream_pd || (l.stag_bound && l.stag_stream != s.stream)) {
        return fail(kStagNotAssociated);
      }
      // #2 the buffer allows placement: remote write access (no code of its own: Invalid STag).
      if (!l.stag_remote_write) return fail(kInvalidStag, true);
      const u128 end = u128{s.to} + pay;
      // #5 the 64-bit sum TO + length does not wrap.
      if (end > u128{~std::uint64_t{0}}) return fail(kToWrap);
      // #3, #4 TO and TO + length inside [base, base + length].
      if (s.to < l.stag_base_to || end > u128{l.stag_base_to} + l.stag_length) return fail(kBaseBounds);
    }
    x.addr = l.stag_addr + (s.to - l.stag_base_to);
  } else {
    if (s.dv != 1) return fail(kUntaggedInvalidVersion);
    if (l.rq_status == kRqBadQn) return fail(kInvalidQn);    // #1
    if (l.rq_status == kRqMsnRange) return fail(kMsnRange);  // #5
    if (l.rq_status == kRqNoBuf) return fail(kNoBuffer);     // #2
    // #3 MO is a legal offset (a zero-length segment may sit at the buffer's end).
    if (pay != 0 ? s.mo >= l.rq_length : s.mo > l.rq_length) return fail(kInvalidMo);
    // #4 MO + length inside the buffer.
    if (std::uint64_t{s.mo} + pay > l.rq_length) return fail(kMessageTooLong);
    x.addr = l.rq_addr + s.mo;
    x.msg_len = s.mo + pay;
  }
  return x;
}

// ---- the bench ----------------------------------------------------------------------------------

struct Config {
  double p_valid = 1.0;  // an item is offered in a cycle when one is waiting
  double p_ready = 1.0;  // vd_ready_i
  std::uint64_t max_idle = 1000;
};

struct Result {
  std::uint64_t cycles = 0;     // from the first cycle of the run to the last verdict taken
  std::uint64_t forwarded = 0;  // DROP verdicts accepted for their stream's earlier ERROR
  std::uint64_t accepted = 0;   // items taken (lk_valid_i && lk_ready_o)
  std::uint64_t outputs = 0;    // verdicts taken (vd_valid_o && vd_ready_i)
  std::uint64_t errors = 0, drops = 0, places = 0, tokens = 0, access = 0;
};

class Bench {
 public:
  Bench() { reset(); }

  Vrnic_rx_validate& dut() { return sim_.model(); }

  void idle() {
    sim_->lk_valid_i = 0;
    sim_->vd_ready_i = 0;
  }

  // The inputs of the cycle settle (the outputs before the edge can be sampled), then the edge.
  void settle() { sim_.eval(); }
  void edge() { sim_.tick(); }

  // Reset with idle inputs; afterwards nothing may be offered or pulsed.
  void reset(int cycles = 3) {
    idle();
    sim_.reset(cycles);
    expect_idle_outputs("after reset");
  }

  void expect_idle_outputs(const char* when) {
    EXPECT_EQ(sim_->vd_valid_o, 0U) << when;
    EXPECT_EQ(sim_->err_valid_o, 0U) << when;
    EXPECT_EQ(sim_->drop_event_o, 0U) << when;
    EXPECT_EQ(sim_->error_event_o, 0U) << when;
    EXPECT_EQ(sim_->access_event_o, 0U) << when;
    EXPECT_EQ(sim_->busy_o, 0U) << when << ": busy_o with nothing inside";
  }

  // Runs items through under cfg and checks every rule (see the file comment). abort_at != 0: stop
  // after that many cycles with items in flight (no end checks; the reset test).
  Result run(const std::vector<Lookup>& items, const Config& cfg, std::uint64_t seed, std::uint64_t abort_at = 0);

 private:
  StageSim<Vrnic_rx_validate> sim_;
};

struct Pulse {
  std::uint64_t cycle;
  unsigned value;   // err_stream_o or error_idx_o
  unsigned pd = 0;  // err_pd_o, err_state_o, err_ssn_o with err_valid_o
  unsigned state = 0;
  unsigned ssn = 0;
};

Result Bench::run(const std::vector<Lookup>& items, const Config& cfg, std::uint64_t seed, std::uint64_t abort_at) {
  std::mt19937_64 rng(seed ^ 0x5DEECE66DULL);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Result r;
  const std::size_t n = items.size();
  std::vector<std::uint64_t> accepted_at(n, 0), first_valid_at(n, 0);
  std::vector<Verdict> out;
  std::vector<Pulse> err_pulses, err_events;
  std::uint64_t drop_events = 0, access_events = 0;
  std::vector<Lookup> work(items);  // the items as lookup offers them (the error state written)
  std::size_t next = 0;             // next item to offer
  bool offering = false;            // lk_valid_i held high for items[next]
  bool stalled = false;             // vd_valid_o && !vd_ready_i in the previous cycle
  std::vector<std::uint8_t> held;
  const std::uint64_t start = sim_.cycle();
  std::uint64_t last_progress = sim_.cycle();

  while (out.size() < n) {
    if (abort_at != 0 && sim_.cycle() - start >= abort_at) {
      r.accepted = next;
      r.outputs = out.size();
      return r;
    }
    if (sim_.cycle() - last_progress > cfg.max_idle) {
      ADD_FAILURE() << "no progress for " << cfg.max_idle << " cycles: " << out.size() << " of " << n << " verdicts, "
                    << next << " items accepted";
      return r;
    }
    // Drive.
    if (!offering && next < n && u(rng) < cfg.p_valid) {
      offering = true;
      put(sim_->lk_i, work[next]);
    }
    sim_->lk_valid_i = offering ? 1 : 0;
    sim_->vd_ready_i = u(rng) < cfg.p_ready ? 1 : 0;
    settle();

    // Sample the settled signals: valid && ready is a handshake at this edge.
    const std::vector<std::uint8_t> vd = take_bytes(sim_->vd_o, (kVerdictBits + 7) / 8);
    if (stalled) {
      EXPECT_EQ(sim_->vd_valid_o, 1U) << "cycle " << sim_.cycle() << ": vd_valid_o dropped without vd_ready_i";
      if (vd != held) {
        ADD_FAILURE() << "cycle " << sim_.cycle() << ": vd_o changed while vd_valid_o && !vd_ready_i\n  was "
                      << unpack<Verdict>(held).str() << "\n  now " << unpack<Verdict>(vd).str();
      }
    }
    if (sim_->vd_valid_o != 0) {
      if (out.size() >= next) {
        ADD_FAILURE() << "cycle " << sim_.cycle() << ": a verdict with no item accepted for it";
        return r;
      }
      if (first_valid_at[out.size()] == 0) first_valid_at[out.size()] = sim_.cycle();
      if (sim_->vd_ready_i != 0) {
        out.push_back(unpack<Verdict>(vd));
        last_progress = sim_.cycle();
      }
    }
    stalled = sim_->vd_valid_o != 0 && sim_->vd_ready_i == 0;
    held = vd;
    // busy_o (lookup's commands wait on it) covers every cycle an error can still be decided in.
    if (sim_->err_valid_o != 0) {
      EXPECT_EQ(sim_->busy_o, 1U) << "err_valid_o without busy_o";
      err_pulses.push_back({sim_.cycle(), sim_->err_stream_o, sim_->err_pd_o, sim_->err_state_o, sim_->err_ssn_o});
      // Lookup's stream-table write: every item that leaves lookup after this cycle sees it.
      for (std::size_t k = offering ? next + 1 : next; k < n; ++k) {
        if (work[k].kind == kSeg && work[k].seg.stream == sim_->err_stream_o) {
          work[k].stream_state = static_cast<std::uint8_t>(sim_->err_state_o);
          work[k].stream_pd = static_cast<std::uint16_t>(sim_->err_pd_o);
          work[k].stream_essn = static_cast<std::uint16_t>(sim_->err_ssn_o);
        }
      }
    }
    if (sim_->error_event_o != 0) err_events.push_back({sim_.cycle(), sim_->error_idx_o});
    drop_events += sim_->drop_event_o;
    access_events += sim_->access_event_o;
    if (offering && sim_->lk_ready_o != 0) {
      accepted_at[next] = sim_.cycle();
      ++next;
      offering = false;
      last_progress = sim_.cycle();
    }
    edge();
  }
  r.cycles = sim_.cycle() - start;
  r.accepted = next;
  r.outputs = out.size();

  // The verdicts, in order, against the reference.
  std::vector<std::size_t> error_items;  // items whose verdict is ERROR, in order
  struct Failed {                        // the state the stream's last ERROR verdict set
    bool at_ssn;
    std::uint16_t ssn;
  };
  std::map<unsigned, Failed> failed;
  std::uint64_t exp_access = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Lookup& l = work[i];
    const Verdict& v = out[i];
    const Expect x = reference(l);
    SCOPED_TRACE("item " + std::to_string(i) + " (stream " + std::to_string(l.seg.stream) + ")");
    EXPECT_EQ(v.kind, l.kind);
    EXPECT_EQ(v.arg, l.arg);
    EXPECT_EQ(v.seg, l.seg) << "segment not passed on:\n  got  " << v.seg.str() << "\n  want " << l.seg.str();
    Action act = x.action;
    const auto f = l.kind == kSeg ? failed.find(l.seg.stream) : failed.end();
    if (f != failed.end() && act != kDrop && (!f->second.at_ssn || !in_front(l, f->second.ssn))) {
      act = kDrop;  // an earlier ERROR of the stream that lookup's write did not reach in time
      ++r.forwarded;
    }
    EXPECT_EQ(v.action, act) << "reference says " << x.action;
    if (v.action != act) continue;
    switch (act) {
      case kPlace:
        ++r.places;
        EXPECT_EQ(v.addr, x.addr);
        EXPECT_EQ(v.pay_bytes, x.pay);
        EXPECT_EQ(v.hdr_bytes, x.hdr);
        if (x.msg_len) {
          EXPECT_EQ(v.msg_len, *x.msg_len);
        }
        break;
      case kError:
        ++r.errors;
        EXPECT_EQ(v.err_type, x.err.type);
        EXPECT_EQ(v.err_code, x.err.code);
        EXPECT_EQ(v.err_idx, counter_index(x.err));
        EXPECT_EQ(v.err_at_ssn, x.at_ssn) << "err_at_ssn: reported at its DDP-SSN position";
        error_items.push_back(i);
        failed[l.seg.stream] = Failed{x.at_ssn, l.seg.ssn};
        if (x.access) ++exp_access;
        break;
      case kDrop:
        ++r.drops;
        break;
      case kToken:
        ++r.tokens;
        break;
    }
  }
  r.access = exp_access;

  // The events: one err_valid_o / error_event_o per ERROR verdict, in order, in a cycle between the
  // item's acceptance and its verdict's first valid cycle.
  EXPECT_EQ(err_pulses.size(), error_items.size()) << "err_valid_o pulses";
  EXPECT_EQ(err_events.size(), error_items.size()) << "error_event_o pulses";
  for (std::size_t k = 0; k < error_items.size(); ++k) {
    const std::size_t i = error_items[k];
    SCOPED_TRACE("error " + std::to_string(k) + " = item " + std::to_string(i));
    if (k < err_pulses.size()) {
      EXPECT_EQ(err_pulses[k].value, items[i].seg.stream) << "err_stream_o";
      EXPECT_EQ(err_pulses[k].pd, work[i].stream_pd) << "err_pd_o (lookup writes the stream word whole)";
      EXPECT_EQ(err_pulses[k].state, out[i].err_at_ssn ? unsigned{kStreamPending} : unsigned{kStreamError})
          << "err_state_o";
      if (out[i].err_at_ssn) {
        EXPECT_EQ(err_pulses[k].ssn, items[i].seg.ssn) << "err_ssn_o";
      }
      EXPECT_GE(err_pulses[k].cycle, accepted_at[i]);
      EXPECT_LE(err_pulses[k].cycle, first_valid_at[i]);
    }
    if (k < err_events.size()) {
      EXPECT_EQ(err_events[k].value, out[i].err_idx) << "error_idx_o";
      EXPECT_GE(err_events[k].cycle, accepted_at[i]);
      EXPECT_LE(err_events[k].cycle, first_valid_at[i]);
    }
  }
  EXPECT_EQ(drop_events, r.drops) << "drop_event_o pulses";
  EXPECT_EQ(access_events, exp_access) << "access_event_o pulses";

  // Drained: nothing more comes out.
  idle();
  for (int c = 0; c < 4; ++c) {
    settle();
    EXPECT_EQ(sim_->vd_valid_o, 0U) << "a verdict after the last item";
    EXPECT_EQ(sim_->err_valid_o, 0U);
    EXPECT_EQ(sim_->drop_event_o, 0U);
    EXPECT_EQ(sim_->error_event_o, 0U);
    EXPECT_EQ(sim_->access_event_o, 0U);
    edge();
  }
  return r;
}

// ---- items --------------------------------------------------------------------------------------

// A tagged segment every check passes: 64 payload bytes at TO base + 0x40 of a 4 KiB STag.
Lookup tagged_ok() {
  Lookup l;
  l.kind = kSeg;
  l.arg = 0x1234;
  Seg& s = l.seg;
  s.stream = 7;
  s.ssn = 100;
  s.seg_bytes = 14 + 64;
  s.is_tagged = true;
  s.last = true;
  s.dv = 1;
  s.rsvd_ulp = 0xA5;
  s.stag = (5U << 8) | 0x3CU;
  s.to = 0x10000040ULL;
  for (unsigned i = 0; i < 18; ++i) s.hdr_raw[i] = static_cast<std::uint8_t>(0x80 + i);
  l.stream_state = kStreamNormal;
  l.stream_pd = 0x55;
  l.next_ssn = 100;
  l.stag_valid = true;
  l.stag_key = 0x3C;
  l.stag_pd = 0x55;
  l.stag_bound = true;
  l.stag_stream = 7;
  l.stag_remote_write = true;
  l.stag_base_to = 0x10000000ULL;
  l.stag_length = 0x1000;
  l.stag_addr = 0xABC00000ULL;
  l.rq_status = kRqNoBuf;  // untagged only: must not matter here
  l.rq_length = 0;
  return l;
}

// An untagged segment every check passes: 100 payload bytes at MO 200 of a 4 KiB buffer.
Lookup untagged_ok() {
  Lookup l;
  l.kind = kSeg;
  Seg& s = l.seg;
  s.stream = 9;
  s.ssn = 0xFFF0;
  s.seg_bytes = 18 + 100;
  s.is_tagged = false;
  s.dv = 1;
  s.rsvd_ulp = 0x123456789AULL;
  s.qn = 1;
  s.msn = 5;
  s.mo = 200;
  s.stag = 0xFFFFFFFFU;  // tagged only: must not matter here
  for (unsigned i = 0; i < 18; ++i) s.hdr_raw[i] = static_cast<std::uint8_t>(0x40 + i);
  l.stream_state = kStreamNormal;
  l.next_ssn = 0xFFF0;
  l.rq_status = kRqOk;
  l.rq_addr = 0x77000000ULL;
  l.rq_length = 4096;
  return l;
}

Lookup token(ItemKind k, std::uint16_t arg) {
  Lookup l = untagged_ok();
  l.kind = k;
  l.arg = arg;
  l.stream_state = kStreamTornDown;  // not a segment: no check applies
  l.local_fault = true;
  return l;
}

Lookup with_payload(Lookup l, unsigned pay) {
  l.seg.seg_bytes = static_cast<std::uint16_t>((l.seg.is_tagged ? 14U : 18U) + pay);
  return l;
}

// ---- directed tests -----------------------------------------------------------------------------

class Validate : public ::testing::Test {
 protected:
  // Asserts the reference decides `l` as stated, then runs it through the DUT alone, and twice
  // between passing items of other streams under backpressure (3 items apart: no forwarding).
  void ExpectVerdict(const Lookup& l, Action a, std::optional<RfcError> e = std::nullopt, bool access = false) {
    const Expect x = reference(l);
    ASSERT_EQ(x.action, a) << "the reference disagrees with the test";
    if (e) {
      EXPECT_EQ(x.err.type, e->type);
      EXPECT_EQ(x.err.code, e->code);
    }
    EXPECT_EQ(x.access, access);
    Config cfg;
    bench_.run({l}, cfg, 1);
    Lookup before = tagged_ok();
    before.seg.stream = static_cast<std::uint16_t>(l.seg.stream + 1);
    before.stag_stream = before.seg.stream;
    Lookup after = untagged_ok();
    after.seg.stream = static_cast<std::uint16_t>(l.seg.stream + 2);
    cfg.p_valid = 0.6;
    cfg.p_ready = 0.5;
    const Result r = bench_.run({before, l, after, before, l, after}, cfg, 2);
    EXPECT_EQ(r.forwarded, 0U);
  }

  Bench bench_;
};

TEST_F(Validate, PassingSegmentsArePlaced) {
  ExpectVerdict(tagged_ok(), kPlace);
  ExpectVerdict(untagged_ok(), kPlace);
  const Expect t = reference(tagged_ok());
  EXPECT_EQ(t.addr, 0xABC00040ULL);  // STag address + (TO - base TO)
  EXPECT_EQ(t.pay, 64U);
  EXPECT_EQ(t.hdr, 14U);
  const Expect u = reference(untagged_ok());
  EXPECT_EQ(u.addr, 0x77000000ULL + 200);  // buffer address + MO
  EXPECT_EQ(u.hdr, 18U);
  EXPECT_EQ(u.msg_len, std::optional<std::uint32_t>(300U));  // 5.4: MO + length
}

TEST_F(Validate, CommandItemsAreTokens) {
  ExpectVerdict(token(kFence, 0xBEEF), kToken);
  ExpectVerdict(token(kStreamReset, 3), kToken);
  ExpectVerdict(token(kQueueSet, 4), kToken);
}

// 7.1 last paragraph: after an error, every later segment of the stream is dropped silently.
TEST_F(Validate, Rfc5041_7_1_StreamNotNormalDropsSilently) {
  for (std::uint8_t st : {std::uint8_t{kStreamError}, std::uint8_t{kStreamTornDown}}) {
    Lookup l = tagged_ok();
    l.stream_state = st;
    l.seg.dv = 2;  // a failing segment too: the state comes first
    ExpectVerdict(l, kDrop);
    Lookup u = untagged_ok();
    u.stream_state = st;
    u.local_fault = true;
    ExpectVerdict(u, kDrop);
  }
}

// docs/rtl-architecture.md, "Errors in DDP-SSN order" (RFC 5041 5.3, 7.1; RFC 5043 5): a PENDING
// stream (a failing segment waits at DDP-SSN e) checks the segments in the window before e as on a
// normal stream and drops every other: at e, after it, outside the window, before the window.
TEST_F(Validate, Rfc5041_7_1_PendingStreamTakesOnlySegmentsBeforeTheFailingOne) {
  Lookup l = tagged_ok();
  l.stream_state = kStreamPending;
  const std::uint16_t next = l.next_ssn;
  l.stream_essn = static_cast<std::uint16_t>(next + 5);
  for (unsigned d : {0U, 4U}) {  // in the window before e: checked (placed, or its own error there)
    l.seg.ssn = static_cast<std::uint16_t>(next + d);
    l.seg.dv = 1;
    ExpectVerdict(l, kPlace);
    l.seg.dv = 2;
    ExpectVerdict(l, kError, kTaggedInvalidVersion);
  }
  l.seg.dv = 1;
  for (unsigned d : {5U, 6U, kWindow - 1, kWindow, 0xFFFFU}) {  // at e, after it, outside the window
    l.seg.ssn = static_cast<std::uint16_t>(next + d);
    ExpectVerdict(l, kDrop);
  }
  // e at the window's last DDP-SSN, the window wrapping 2^16.
  l.next_ssn = 0xFFF0;
  l.stream_essn = static_cast<std::uint16_t>(0xFFF0 + kWindow - 1);
  l.seg.ssn = 0x0002;
  ExpectVerdict(l, kPlace);
  l.seg.ssn = l.stream_essn;
  ExpectVerdict(l, kDrop);
}

// An error in the window is reported at its DDP-SSN position (err_at_ssn); one outside it, at once.
TEST_F(Validate, ErrorsInTheWindowAreReportedAtTheirDdpSsn) {
  Lookup l = tagged_ok();
  l.seg.dv = 2;
  l.seg.ssn = static_cast<std::uint16_t>(l.next_ssn + kWindow - 1);
  ExpectVerdict(l, kError, kTaggedInvalidVersion);  // the bench compares err_at_ssn (1)
  l.seg.oversize = true;
  l.seg.ssn = static_cast<std::uint16_t>(l.next_ssn + kWindow);
  ExpectVerdict(l, kError, kLocalCatastrophic);  // outside the window: at once (0)
}

// 7.2 type 0 code 0x00 Local Catastrophic: payload not kept, packet shorter than its header,
// descriptor read failed.
TEST_F(Validate, Rfc5041_7_2_LocalCatastrophic) {
  Lookup l = tagged_ok();
  l.seg.oversize = true;
  ExpectVerdict(l, kError, kLocalCatastrophic);
  l = with_payload(tagged_ok(), 0);
  l.seg.seg_bytes = 13;  // one byte short of the tagged header
  ExpectVerdict(l, kError, kLocalCatastrophic);
  l = untagged_ok();
  l.seg.seg_bytes = 17;  // one byte short of the untagged header
  ExpectVerdict(l, kError, kLocalCatastrophic);
  l.seg.seg_bytes = 0;
  ExpectVerdict(l, kError, kLocalCatastrophic);
  l = untagged_ok();
  l.local_fault = true;
  ExpectVerdict(l, kError, kLocalCatastrophic);
  // Exactly a header: a zero-length segment, placed.
  ExpectVerdict(with_payload(tagged_ok(), 0), kPlace);
  ExpectVerdict(with_payload(untagged_ok(), 0), kPlace);
}

// RFC 5043 10 (7.2 type 3, the LLP's): DDP-SSN outside the reorder window, modulo 2^16.
TEST_F(Validate, Rfc5043_10_SsnWindow) {
  for (std::uint16_t next : {std::uint16_t{0}, std::uint16_t{100}, std::uint16_t{0xFFF0}}) {
    Lookup l = untagged_ok();
    l.next_ssn = next;
    l.seg.ssn = static_cast<std::uint16_t>(next + kWindow - 1);  // last in the window
    ExpectVerdict(l, kPlace);
    l.seg.ssn = static_cast<std::uint16_t>(next + kWindow);  // first outside
    ExpectVerdict(l, kError, kLlp);
    l.seg.ssn = static_cast<std::uint16_t>(next - 1);  // behind: a duplicate of 2^16 - 1 ahead
    ExpectVerdict(l, kError, kLlp);
    l.seg.ssn = next;
    ExpectVerdict(l, kPlace);
  }
  // Checked before the DV and the STag.
  Lookup t = tagged_ok();
  t.seg.ssn = static_cast<std::uint16_t>(t.next_ssn + kWindow);
  t.seg.dv = 0;
  t.stag_valid = false;
  ExpectVerdict(t, kError, kLlp);
}

// 7.2 type 1 code 0x04 / type 2 code 0x06: Invalid DDP version (DV != 1), zero length included.
TEST_F(Validate, Rfc5041_7_2_InvalidDdpVersion) {
  for (std::uint8_t dv : {std::uint8_t{0}, std::uint8_t{2}, std::uint8_t{3}}) {
    Lookup l = tagged_ok();
    l.seg.dv = dv;
    l.stag_valid = false;
    ExpectVerdict(l, kError, kTaggedInvalidVersion);
    ExpectVerdict(with_payload(l, 0), kError, kTaggedInvalidVersion);
    Lookup u = untagged_ok();
    u.seg.dv = dv;
    u.rq_status = kRqBadQn;
    ExpectVerdict(u, kError, kUntaggedInvalidVersion);
  }
}

// 7.1 tagged #1, 7.2 type 1 code 0x00 Invalid STag: no valid entry, or its key is not STag[7:0].
TEST_F(Validate, Rfc5041_7_1_Tagged1_InvalidStag) {
  Lookup l = tagged_ok();
  l.stag_valid = false;
  ExpectVerdict(l, kError, kInvalidStag);
  l = tagged_ok();
  l.stag_key = 0x3D;
  ExpectVerdict(l, kError, kInvalidStag);
  l.stag_pd = 0x66;  // before the PD check
  ExpectVerdict(l, kError, kInvalidStag);
}

// 7.1 tagged #1 / 8.2, 7.2 type 1 code 0x02 STag not associated with DDP Stream: another PD, or
// bound to another stream.
TEST_F(Validate, Rfc5041_7_1_Tagged1_StagNotAssociated) {
  Lookup l = tagged_ok();
  l.stag_pd = 0x56;
  ExpectVerdict(l, kError, kStagNotAssociated);
  l.stag_bound = false;  // the PD alone decides
  ExpectVerdict(l, kError, kStagNotAssociated);
  l = tagged_ok();
  l.stag_stream = 8;
  ExpectVerdict(l, kError, kStagNotAssociated);
  l.stag_bound = false;  // not bound: any stream of the PD
  ExpectVerdict(l, kPlace);
  l = tagged_ok();
  l.stag_stream = 8;
  l.stag_remote_write = false;  // before the access check
  ExpectVerdict(l, kError, kStagNotAssociated);
}

// 7.1 tagged #2: no remote write access. 7.2 has no code for it: Invalid STag, and the access
// counter.
TEST_F(Validate, Rfc5041_7_1_Tagged2_NoRemoteWriteIsInvalidStag) {
  Lookup l = tagged_ok();
  l.stag_remote_write = false;
  ExpectVerdict(l, kError, kInvalidStag, true);
  l.seg.to = ~std::uint64_t{0};  // before the wrap check
  ExpectVerdict(l, kError, kInvalidStag, true);
}

// 7.1 tagged #5, 7.2 type 1 code 0x03 TO wrap: TO + length > 2^64 - 1; checked before the bounds.
TEST_F(Validate, Rfc5041_7_1_Tagged5_ToWrap) {
  Lookup l = with_payload(tagged_ok(), 16);
  l.stag_base_to = 0xFFFFFFFFFFFFF000ULL;
  l.stag_length = 0x1000;
  l.seg.to = ~std::uint64_t{0} - 16;  // TO + 16 == 2^64 - 1: last byte at 2^64 - 2, inside
  ExpectVerdict(l, kPlace);
  l.seg.to = ~std::uint64_t{0} - 15;  // TO + 16 == 2^64: wraps
  ExpectVerdict(l, kError, kToWrap);
  l.seg.to = ~std::uint64_t{0};
  ExpectVerdict(l, kError, kToWrap);
  l.stag_length = 0;  // out of bounds as well: the wrap is reported
  ExpectVerdict(l, kError, kToWrap);
}

// 7.1 tagged #3 / #4, 7.2 type 1 code 0x01 Base or bounds violation.
TEST_F(Validate, Rfc5041_7_1_Tagged3_4_BaseBounds) {
  Lookup l = tagged_ok();
  l.seg.to = l.stag_base_to;  // exactly at the base
  ExpectVerdict(l, kPlace);
  l.seg.to = l.stag_base_to - 1;  // one byte below
  ExpectVerdict(l, kError, kBaseBounds);
  l.seg.to = l.stag_base_to + l.stag_length - 64;  // ends exactly at base + length
  ExpectVerdict(l, kPlace);
  l.seg.to += 1;  // one byte past
  ExpectVerdict(l, kError, kBaseBounds);
  l.seg.to = l.stag_base_to + l.stag_length;  // starts at the end
  ExpectVerdict(l, kError, kBaseBounds);
  l.seg.to = l.stag_base_to + (std::uint64_t{1} << 63);  // far past (TO - base > length)
  ExpectVerdict(l, kError, kBaseBounds);
  l.seg.to = 0;  // far below
  ExpectVerdict(l, kError, kBaseBounds);
  // A length 0 STag holds no byte.
  l = tagged_ok();
  l.stag_length = 0;
  l.seg.to = l.stag_base_to;
  ExpectVerdict(l, kError, kBaseBounds);
  ExpectVerdict(with_payload(l, 0), kPlace);
  // A whole 2^64 - 1 range at base 0: every TO inside, up to the wrap.
  l = with_payload(tagged_ok(), 1);
  l.stag_base_to = 0;
  l.stag_length = ~std::uint64_t{0};
  l.seg.to = ~std::uint64_t{0} - 1;
  ExpectVerdict(l, kPlace);
  // base + length past 2^64: the bound is base + length, not its 64-bit remainder.
  l = tagged_ok();
  l.stag_base_to = 0xFFFFFFFFFFFF0000ULL;
  l.stag_length = 0x20000;
  l.seg.to = 0xFFFFFFFFFFFF8000ULL;
  ExpectVerdict(l, kPlace);
  EXPECT_EQ(reference(l).addr, l.stag_addr + 0x8000);
}

// 5.2 / 7.1: a zero-length tagged segment is not checked against its STag (only the DV).
TEST_F(Validate, Rfc5041_7_1_ZeroLengthTaggedSkipsStagChecks) {
  Lookup l = with_payload(tagged_ok(), 0);
  l.stag_valid = false;
  l.stag_key = 0;
  l.stag_pd = 0x99;
  l.stag_stream = 1;
  l.stag_remote_write = false;
  l.stag_length = 0;
  l.seg.to = ~std::uint64_t{0};
  ExpectVerdict(l, kPlace);
}

// 7.1 untagged #1, 7.2 type 2 code 0x01 Invalid QN; #5 code 0x03 MSN range; #2 code 0x02 no buffer
// (in this order: lookup reports one status per segment).
TEST_F(Validate, Rfc5041_7_1_Untagged1_2_5_QueueAndMsn) {
  Lookup l = untagged_ok();
  l.rq_status = kRqBadQn;
  ExpectVerdict(l, kError, kInvalidQn);
  l.rq_status = kRqMsnRange;
  ExpectVerdict(l, kError, kMsnRange);
  l.rq_status = kRqNoBuf;
  ExpectVerdict(l, kError, kNoBuffer);
  ExpectVerdict(with_payload(l, 0), kError, kNoBuffer);  // a zero-length message needs its buffer
  l.seg.mo = 1U << 31;                                   // MO is not looked at without a buffer
  ExpectVerdict(l, kError, kNoBuffer);
}

// 7.1 untagged #3, 7.2 type 2 code 0x04 Invalid MO; #4 code 0x05 message too long.
TEST_F(Validate, Rfc5041_7_1_Untagged3_4_MoAndLength) {
  Lookup l = untagged_ok();  // 100 bytes, buffer 4096
  l.seg.mo = 4096 - 100;     // ends exactly at the buffer's end
  ExpectVerdict(l, kPlace);
  l.seg.mo += 1;
  ExpectVerdict(l, kError, kMessageTooLong);
  l.seg.mo = 4095;  // last legal offset, too long
  ExpectVerdict(l, kError, kMessageTooLong);
  l.seg.mo = 4096;  // MO == length with payload: no legal offset
  ExpectVerdict(l, kError, kInvalidMo);
  l.seg.mo = 0xFFFFFFFFU;  // MO + length past 2^32: still MO first
  ExpectVerdict(l, kError, kInvalidMo);
  l = with_payload(untagged_ok(), 0);
  l.seg.mo = 4096;  // MO == length with zero payload: allowed (an empty last segment)
  ExpectVerdict(l, kPlace);
  EXPECT_EQ(reference(l).msg_len, std::optional<std::uint32_t>(4096U));
  l.seg.mo = 4097;
  ExpectVerdict(l, kError, kInvalidMo);
  l = with_payload(untagged_ok(), 0);
  l.rq_length = 0;  // a zero-length buffer takes a zero-length message
  l.seg.mo = 0;
  ExpectVerdict(l, kPlace);
  ExpectVerdict(with_payload(l, 1), kError, kInvalidMo);
  // MO + length exactly 2^32 - 1 of a 2^32 - 1 buffer.
  l = with_payload(untagged_ok(), 1000);
  l.rq_length = 0xFFFFFFFFU;
  l.seg.mo = 0xFFFFFFFFU - 1000;
  ExpectVerdict(l, kPlace);
  l.seg.mo += 1;
  ExpectVerdict(l, kError, kMessageTooLong);
}

// The order of the checks: state, local, window, DV, then the table ones.
TEST_F(Validate, CheckOrder) {
  Lookup l = tagged_ok();
  l.seg.oversize = true;
  l.seg.ssn = static_cast<std::uint16_t>(l.next_ssn + kWindow);
  ExpectVerdict(l, kError, kLocalCatastrophic);
  l.stream_state = kStreamError;
  ExpectVerdict(l, kDrop);
  Lookup u = untagged_ok();
  u.seg.dv = 0;
  u.rq_status = kRqMsnRange;
  u.seg.mo = 0xFFFFFFFFU;
  ExpectVerdict(u, kError, kUntaggedInvalidVersion);
  u.seg.dv = 1;
  ExpectVerdict(u, kError, kMsnRange);
}

// 7.1: after a failing segment every later segment of its stream is DROPped, also the two that left
// lookup before its stream-table write (err_valid_o, the cycle after V2 decides): the one directly
// behind (in V1 then) and the one in lookup's output register. Back to back, exactly those two are
// validate's own (the third already meets the written state); a segment of another stream keeps its
// verdict. The scoreboard checks every verdict exactly.
TEST_F(Validate, ForwardedErrorState) {
  Lookup bad = tagged_ok();
  bad.stag_valid = false;
  Lookup good = tagged_ok();
  Lookup other = tagged_ok();
  other.seg.stream = 8;
  other.stag_stream = 8;
  Lookup bad_u = untagged_ok();
  bad_u.seg.stream = 7;
  bad_u.rq_status = kRqNoBuf;
  const std::vector<Lookup> items{bad, good, good, good, bad, other, good, bad, bad_u, good, other};
  for (const double p : {1.0, 0.5}) {
    Config cfg;
    cfg.p_valid = p;
    cfg.p_ready = p;
    const Result r = bench_.run(items, cfg, 3);
    if (p == 1.0) {
      EXPECT_EQ(r.forwarded, 2U) << "the two segments behind the first failure";
    }
    std::printf("[  INFO    ] p %.1f: %llu of the same-stream followers dropped by forwarding\n", p,
                static_cast<unsigned long long>(r.forwarded));
    // The segment of another stream behind a failing one keeps its verdict (checked exactly).
    EXPECT_EQ(r.outputs, items.size());
  }
}

// Full rate: lk_valid_i and vd_ready_i always high, one verdict per cycle once the pipeline is
// full.
TEST_F(Validate, Throughput) {
  std::vector<Lookup> items;
  for (unsigned i = 0; i < 1000; ++i) {
    Lookup l = (i % 3 == 0) ? untagged_ok() : tagged_ok();
    l.seg.stream = static_cast<std::uint16_t>(i);
    l.stag_stream = l.seg.stream;
    if (i % 7 == 0) l.seg.dv = 0;  // errors too: no bubble after one
    if (i % 11 == 0) l.stream_state = kStreamError;
    if (i % 13 == 0) l.kind = kFence;
    items.push_back(l);
  }
  Config cfg;
  const Result r = bench_.run(items, cfg, 4);
  std::printf("[  INFO    ] %zu items in %llu cycles\n", items.size(), static_cast<unsigned long long>(r.cycles));
  EXPECT_LE(r.cycles, items.size() + 4);
}

// ---- random -------------------------------------------------------------------------------------

class Gen {
 public:
  explicit Gen(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t r64() { return rng_(); }
  unsigned uni(unsigned lo, unsigned hi) { return std::uniform_int_distribution<unsigned>(lo, hi)(rng_); }
  bool coin(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }

  // A random item that passes most checks, with faults and boundaries sprinkled in so every verdict
  // and every row of the table occurs. Streams from a small pool: same-stream neighbours occur.
  Lookup item() {
    Lookup l;
    Seg& s = l.seg;
    l.kind = coin(0.05) ? static_cast<ItemKind>(uni(1, 3)) : kSeg;
    l.arg = static_cast<std::uint16_t>(r64());
    s.stream = static_cast<std::uint16_t>(uni(0, 5));
    s.is_tagged = coin(0.5);
    s.last = coin(0.5);
    s.dv = coin(0.04) ? static_cast<std::uint8_t>(uni(0, 3)) : 1;
    s.rsvd_ulp = r64() & 0xFFFFFFFFFFULL;
    s.stag = static_cast<std::uint32_t>(r64());
    s.qn = static_cast<std::uint32_t>(r64());
    s.msn = static_cast<std::uint32_t>(r64());
    for (auto& b : s.hdr_raw) b = static_cast<std::uint8_t>(r64());
    const unsigned hdr = s.is_tagged ? 14 : 18;
    unsigned pay = coin(0.1) ? 0 : uni(1, 2000);
    if (coin(0.02)) pay = 0xFFFFU - hdr;  // the largest segment
    s.seg_bytes = static_cast<std::uint16_t>(hdr + pay);
    if (coin(0.03)) s.seg_bytes = static_cast<std::uint16_t>(uni(0, hdr - 1));
    s.oversize = coin(0.02);
    l.local_fault = coin(0.02);
    l.stream_state = coin(0.06) ? static_cast<std::uint8_t>(uni(1, 3)) : std::uint8_t{kStreamNormal};
    l.next_ssn = static_cast<std::uint16_t>(r64());
    unsigned ahead = uni(0, kWindow - 1);
    if (coin(0.05)) ahead = coin(0.5) ? kWindow - 1 + uni(0, 1) : uni(kWindow, 0xFFFF);
    s.ssn = static_cast<std::uint16_t>(l.next_ssn + ahead);
    // STag: right unless a fault is drawn.
    l.stream_pd = static_cast<std::uint16_t>(r64());
    l.stag_valid = !coin(0.04);
    l.stag_key = static_cast<std::uint8_t>(coin(0.04) ? r64() : s.stag);
    l.stag_pd = coin(0.04) ? static_cast<std::uint16_t>(r64()) : l.stream_pd;
    l.stag_bound = coin(0.5);
    l.stag_stream = coin(0.06) ? static_cast<std::uint16_t>(uni(0, 5)) : s.stream;
    l.stag_remote_write = !coin(0.04);
    l.stag_addr = r64();
    const unsigned shape = uni(0, 9);
    if (shape == 0) {  // at the top of the 64-bit space
      l.stag_base_to = ~std::uint64_t{0} - uni(0, 5000);
      l.stag_length = uni(0, 6000);
      s.to = ~std::uint64_t{0} - pay + 1 - uni(0, 2);
    } else {
      l.stag_base_to = coin(0.5) ? r64() >> uni(0, 63) : 0;
      l.stag_length = coin(0.05) ? 0 : coin(0.1) ? uni(0, 8192) : pay + uni(0, 8192);
      if (coin(0.02)) l.stag_length = r64();
      std::uint64_t off = uni(0, 8192);
      if (coin(0.2)) {
        off = l.stag_length - pay + uni(0, 2) - 1;  // ends at base + length, one byte either side
      } else if (coin(0.1)) {
        off = -static_cast<std::uint64_t>(uni(1, 3));  // below the base
      } else if (l.stag_length >= pay) {
        off = uni(0, static_cast<unsigned>(std::min<std::uint64_t>(l.stag_length - pay, 1U << 20)));
      }
      s.to = l.stag_base_to + off;
    }
    // Untagged buffer.
    l.rq_status = coin(0.12) ? static_cast<RqStatus>(uni(1, 3)) : kRqOk;
    l.rq_addr = r64();
    l.rq_length = coin(0.05) ? 0 : coin(0.1) ? uni(0, 8192) : pay + uni(0, 8192);
    if (coin(0.03)) l.rq_length = static_cast<std::uint32_t>(r64());
    s.mo = uni(0, 8192);
    if (coin(0.2)) {
      s.mo = l.rq_length - pay + uni(0, 2) - 1;  // ends at the buffer's end, one byte either side
    } else if (l.rq_length >= pay) {
      s.mo = uni(0, std::min(l.rq_length - pay, 1U << 20));
    }
    if (coin(0.03)) s.mo = static_cast<std::uint32_t>(r64());
    return l;
  }

 private:
  std::mt19937_64 rng_;
};

TEST_F(Validate, RandomItemsWithBackpressure) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  Gen g(seed);
  constexpr unsigned kItems = 20000;
  std::vector<Lookup> items;
  items.reserve(kItems);
  for (unsigned i = 0; i < kItems; ++i) items.push_back(g.item());
  // Streams: after an error every later segment of a stream is DROPped (7.1), so a stream that fails
  // is retired from the pool of six (a fresh stream takes its place) and, one item in ten, a segment
  // of the last retired stream follows (it must come out DROP).
  {
    std::mt19937_64 srng(seed ^ 0x9E3779B97F4A7C15ULL);
    std::array<std::uint16_t, 6> live{0, 1, 2, 3, 4, 5};
    std::uint16_t fresh = 6;
    std::optional<std::uint16_t> retired;
    for (auto& l : items) {
      if (l.kind != kSeg) continue;
      const std::size_t slot = l.seg.stream;  // Gen draws 0..5
      const bool bound_here = l.stag_stream == l.seg.stream;
      const bool follower = retired && srng() % 10 == 0;
      l.seg.stream = follower ? *retired : live[slot];
      l.stag_stream = bound_here ? l.seg.stream : static_cast<std::uint16_t>(0xFFFF - slot);
      if (!follower && reference(l).action == kError) {
        retired = live[slot];
        live[slot] = fresh++;
      }
    }
  }
  // Every verdict and every row of the table is drawn.
  std::vector<unsigned> rows(rnic::wire::kAllDdpErrors.size(), 0);
  unsigned access = 0;
  for (const auto& l : items) {
    const Expect x = reference(l);
    if (x.action == kError) ++rows.at(counter_index(x.err));
    if (x.access) ++access;
  }
  std::printf("[  INFO    ] drawn per 7.2 row (ddp_errors.def order):");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::printf(" %u", rows[i]);
    EXPECT_GT(rows[i], 5U) << "row " << i << " seldom drawn";
  }
  std::printf("\n");
  EXPECT_GT(access, 5U);
  const auto t0 = std::chrono::steady_clock::now();
  Result total;
  // Four backpressure mixes, a quarter of the items each.
  const double mixes[4][2] = {{1.0, 1.0}, {0.5, 1.0}, {1.0, 0.3}, {0.7, 0.6}};
  for (unsigned m = 0; m < 4; ++m) {
    const std::vector<Lookup> part(items.begin() + m * kItems / 4, items.begin() + (m + 1) * kItems / 4);
    Config cfg;
    cfg.p_valid = mixes[m][0];
    cfg.p_ready = mixes[m][1];
    const Result r = bench_.run(part, cfg, seed + m);
    total.cycles += r.cycles;
    total.places += r.places;
    total.errors += r.errors;
    total.drops += r.drops;
    total.tokens += r.tokens;
    total.access += r.access;
    total.forwarded += r.forwarded;
    if (HasFailure()) break;
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "[  INFO    ] %u items, %llu cycles, %.0f ms: %llu place %llu error (%llu access) %llu drop "
      "(%llu forwarded) %llu token\n",
      kItems, static_cast<unsigned long long>(total.cycles), ms, static_cast<unsigned long long>(total.places),
      static_cast<unsigned long long>(total.errors), static_cast<unsigned long long>(total.access),
      static_cast<unsigned long long>(total.drops), static_cast<unsigned long long>(total.forwarded),
      static_cast<unsigned long long>(total.tokens));
}

// ---- reset --------------------------------------------------------------------------------------

// A reset with items in flight (a verdict held by backpressure, an item offered): none of them
// comes out afterwards, the outputs are idle, and the next items go through as if nothing happened.
TEST_F(Validate, ResetMidStream) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  Gen g(seed);
  for (const std::uint64_t abort_at : {1ULL, 2ULL, 3ULL, 7ULL, 20ULL}) {
    SCOPED_TRACE("reset after " + std::to_string(abort_at) + " cycles");
    std::vector<Lookup> in_flight;
    for (int i = 0; i < 30; ++i) {
      Lookup l = g.item();
      l.kind = kSeg;
      l.stream_state = kStreamNormal;
      l.seg.dv = 0;  // every one an ERROR: a leftover would pulse err_valid_o
      in_flight.push_back(l);
    }
    Config cfg;
    cfg.p_ready = 0.0;  // the first verdict is held, the pipeline fills behind it
    const Result r = bench_.run(in_flight, cfg, seed + abort_at, abort_at);
    EXPECT_GT(r.accepted, r.outputs) << "nothing in flight at the reset";
    bench_.reset();
    // Idle inputs for a few cycles: nothing is offered or pulsed.
    for (int c = 0; c < 4; ++c) {
      bench_.settle();
      bench_.expect_idle_outputs("idle after a reset");
      EXPECT_EQ(bench_.dut().lk_ready_o, 1U);
      bench_.edge();
    }
    std::vector<Lookup> fresh;
    for (int i = 0; i < 50; ++i) fresh.push_back(g.item());
    cfg.p_valid = 0.8;
    cfg.p_ready = 0.7;
    bench_.run(fresh, cfg, seed + 100 + abort_at);
  }
}

}  // namespace
