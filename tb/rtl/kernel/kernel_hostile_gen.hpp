// SPDX-License-Identifier: Apache-2.0
// A hostile Data Source against rnic_kernel, interleaved with what a driver does, and an ownership
// shadow of host memory kept independently of the RTL (issue 11; RFC 5041 4.1, 4.3, 5.3, 5.4, 7.1, 8).
//
// The peer sends random sequences over every header field, including what a conforming peer never
// sends (MSN repeats, skips and wrap, QN/MSN/MO/T/RsvdULP changes inside a message, early and missing L,
// DV != 1, Rsvd bits, STags of other PDs, other streams, invalidated and re-registered entries, TO near
// 2^64, DDP-SSN duplicates, gaps and far-off values, truncated and oversize packets). Between its
// messages the driver posts receive buffers, registers and invalidates STags (memory freed and reused
// for another owner's registration or buffer), reconfigures queues (first MSN near 0xFFFFFFFF
// included), tears streams down gracefully (kernel quiet first) or abortively (segments in flight)
// and enables them again.
//
// Ownership shadow: per byte, whether the card may write it now: a valid STag's range, a posted and
// not yet completed receive buffer, the completion ring. It changes on the driver side exactly when
// ownership changes: a buffer is the card's from its post until the host sees its completion or a
// fenced command that ends the card's right returns (STAG_INVALIDATE, STREAM_TEARDOWN, QUEUE_CONFIG,
// after the ring has been polled). Every write as it lands in host memory is checked against it
// (AxiHostMemory's land hook): a byte not owned is a stray write. A released buffer is refilled with
// fresh canary bytes at once (the next owner's data); after every step every chunk the card does not
// own must still hold its canary bytes. Completions: an untagged delivery must name a posted, not yet
// completed buffer of its (stream, QN, MSN) and no longer than it (each buffer completes at most once);
// per stream, deliveries come in increasing DDP-SSN order (each message at most once) and none after an
// error completion (7.1).
//
// A 7.1 error in DDP-SSN order (issue 33, docs/rtl-architecture.md "Errors in DDP-SSN order"): on a quiet
// stream, 1-3 valid messages, a segment failing a 7.1 check at the DDP-SSN after them and maybe a valid
// segment after it, back to back, the failing one arriving before, among or after the messages before
// it. Its outcome does not depend on timing (the model comparison stays on): those messages delivered in
// order, then the error at its DDP-SSN, nothing after it (the later segment, placed when it came first,
// is never delivered; its buffer stays posted until the stream is recovered).
//
// Messages are sent either in lock step (one segment, then the kernel quiet: the kernel must equal the
// reference model exactly, and each message's outcome is recorded per way of breaking 4.1/4.3) or
// streamed back to back over several streams (shuffled in the DDP-SSN window). A streamed message that
// breaks the MSN/L rules, or an abortive teardown, may be decided at lookup or at delivery depending on
// timing: such a stream is declared diverged (KernelEnv::diverge) until it is enabled again, and only
// the shadow, canaries and completion checks apply to it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernel_test_util.hpp"

namespace rnic::tb::test {

// Ways a peer breaks (or stresses) RFC 5041 4.1 / 4.3 and the 7.1 checks.
#define RNIC_HOSTILE_BREAKS(X)                                       \
  X(MsnRepeat, "MSN repeat (a delivered or earlier MSN again)")      \
  X(MsnSkip, "MSN skip (a later MSN before the expected one)")       \
  X(MsnWrap, "MSN wrap 0xFFFFFFFF -> 0 (queue first MSN near 2^32)") \
  X(QnChangeMid, "QN change inside a message")                       \
  X(MsnChangeMid, "MSN change inside a message")                     \
  X(MoChangeMid, "MO gap / overlap inside a message")                \
  X(EarlyL, "L bit on a segment before the last")                    \
  X(MissingL, "no L bit on the last segment")                        \
  X(TChangeMid, "T change inside a message")                         \
  X(RsvdUlpChangeMid, "RsvdULP change inside a message")             \
  X(Dv, "DV != 1")                                                   \
  X(Rsvd, "Rsvd bits of the control field set")                      \
  X(StagOtherPd, "STag of another PD")                               \
  X(StagOtherStream, "STag bound to another stream")                 \
  X(StagInvalidated, "STag of an invalidated registration")          \
  X(StagOldKey, "STag index re-registered, earlier key")             \
  X(StagBadIndex, "STag index unregistered or past the table")       \
  X(StagNoWrite, "STag without remote write")                        \
  X(ToNearWrap, "TO near 2^64 (TO + length wraps)")                  \
  X(ToOutOfBounds, "TO below base or past the bound")                \
  X(SsnDuplicate, "DDP-SSN duplicate (same or another MSN)")         \
  X(SsnGap, "DDP-SSN gap (a hole never filled)")                     \
  X(SsnOutsideWindow, "DDP-SSN outside the window")                  \
  X(Truncated, "packet shorter than its header")                     \
  X(Oversize, "packet longer than the largest segment")              \
  X(QnInvalid, "QN past CAP_QNS")                                    \
  X(QnUnconfigured, "QN of an unconfigured queue")                   \
  X(MoBeyondBuffer, "MO past the buffer")                            \
  X(TooLong, "message longer than its buffer")                       \
  X(NoBuffer, "MSN past the last posted buffer")                     \
  X(ToDisabledStream, "segment to a torn-down stream")

// The ownership transitions (below) are listed the same way. Each list gives the enum and the names.
#define RNIC_HOSTILE_ENUM(n, d) k##n,
#define RNIC_HOSTILE_NAME(n, d) {#n, d},
struct BinName {
  const char* name;
  const char* what;
};

enum class Break : unsigned { RNIC_HOSTILE_BREAKS(RNIC_HOSTILE_ENUM) kCount };
inline constexpr unsigned kNumBreaks = static_cast<unsigned>(Break::kCount);
inline constexpr BinName kBreakNames[] = {RNIC_HOSTILE_BREAKS(RNIC_HOSTILE_NAME)};
inline const char* break_name(unsigned b) { return kBreakNames[b].name; }
// Breaks that may be decided at lookup or at delivery depending on timing (see the top of the file).
inline bool timing_dependent(unsigned b) {
  switch (static_cast<Break>(b)) {
    case Break::kMsnRepeat:
    case Break::kMsnSkip:
    case Break::kQnChangeMid:
    case Break::kMsnChangeMid:
    case Break::kEarlyL:
    case Break::kMissingL:
    case Break::kTChangeMid:
    case Break::kSsnDuplicate:
    case Break::kMoChangeMid:
      return true;
    default:
      return false;
  }
}

// Ownership transitions of host memory between driver and card.
#define RNIC_HOSTILE_TRANSITIONS(X)                                                         \
  X(Post, "receive buffer posted")                                                          \
  X(Complete, "buffer back by its completion")                                              \
  X(FlushGracefulTeardown, "buffer back by a graceful teardown (fenced)")                   \
  X(FlushAbortiveTeardown, "buffer back by an abortive teardown (fenced)")                  \
  X(ReconfigureRefused, "QUEUE_CONFIG of a configured queue refused (buffers stay posted)") \
  X(Register, "STag registered")                                                            \
  X(Invalidate, "STag range back by STAG_INVALIDATE (fenced)")                              \
  X(ReuseRegister, "memory of another owner's buffer / STag registered for a new PD")       \
  X(ReusePost, "memory of another owner's buffer / STag posted on another stream")          \
  X(ReEnable, "stream enabled again")

enum class Transition : unsigned { RNIC_HOSTILE_TRANSITIONS(RNIC_HOSTILE_ENUM) kCount };
inline constexpr unsigned kNumTransitions = static_cast<unsigned>(Transition::kCount);
inline constexpr BinName kTransitionNames[] = {RNIC_HOSTILE_TRANSITIONS(RNIC_HOSTILE_NAME)};
inline const char* transition_name(unsigned t) { return kTransitionNames[t].name; }

// A 7.1 error in DDP-SSN order (issue 33; docs/rtl-architecture.md "Errors in DDP-SSN order"): 1-3 valid
// messages at the next DDP-SSNs, a failing segment right after them and maybe a valid segment after it,
// sent back to back with the failing segment arriving before, among or after the messages that precede
// it. Each bin counts the steps generated and the steps whose outcome was seen: the messages before it
// delivered in order, then its error completion with its DDP-SSN, nothing more of the stream.
#define RNIC_HOSTILE_ERROR_ORDERS(X)                         \
  X(Before, "error before all the messages that precede it") \
  X(Among, "error among the messages that precede it")       \
  X(After, "error after the messages that precede it")       \
  X(LaterFirst, "a valid later segment arrived before the error (placed, never delivered)")

enum class ErrorOrder : unsigned { RNIC_HOSTILE_ERROR_ORDERS(RNIC_HOSTILE_ENUM) kCount };
inline constexpr unsigned kNumErrorOrders = static_cast<unsigned>(ErrorOrder::kCount);
inline constexpr BinName kErrorOrderNames[] = {RNIC_HOSTILE_ERROR_ORDERS(RNIC_HOSTILE_NAME)};

struct HostileOptions {
  std::uint64_t segments = 4000;        // stop once this many segments were sent
  std::uint64_t max_cycles = 40000000;  // watchdog
  double lockstep = 0.5;                // fraction of messages sent in lock step
  double hostile = 0.5;                 // fraction of messages with a break
  double error_order = 0.015;           // fraction of steps that send a 7.1 error in DDP-SSN order
  bool use_model = true;                // compare with the reference model (lock step, quiet streams)
  bool stop_at_first_violation = false;
  bool trace = false;           // print every step as it happens
  bool abortive = true;         // abortive teardowns with segments in flight
  bool reconfigure = true;      // QUEUE_CONFIG of live queues
  unsigned progress_every = 0;  // print a progress line every n steps (0: never)
};

struct HostileStats {
  std::uint64_t steps = 0, segments = 0, messages = 0, lockstep_messages = 0, cqes = 0;
  std::uint64_t landed_bursts = 0, landed_bytes = 0, canary_checks = 0, completion_checks = 0;
  std::uint64_t stray_writes = 0, canary_failures = 0, violations = 0, mismatches = 0;
  std::uint64_t first_violation_step = 0, first_violation_segments = 0;
  std::string first_violation;
  std::array<std::uint64_t, kNumBreaks> generated{};
  std::array<std::uint64_t, kNumBreaks> attributed{};
  std::array<std::map<std::string, std::uint64_t>, kNumBreaks> outcomes;
  std::array<std::uint64_t, kNumTransitions> transitions{};
  std::array<std::uint64_t, kNumErrorOrders> order_generated{}, order_seen{};
  std::map<std::string, std::uint64_t> codes;  // "t/0xcc name" (+ " order") of every error completion
};

class HostileRun {
 public:
  static constexpr unsigned kStreams = 4;  // streams 0..3: PDs 1, 1, 2, 3
  static constexpr unsigned kQns = 2;      // QN 0 and 1 configured, 2 and 3 never
  static constexpr unsigned kChunks = 48;  // host memory chunks buffers and STags are taken from
  static constexpr unsigned kChunkMax = 1536;
  static constexpr unsigned kTagSlots = 8;   // STag indices 40 .. 47
  static constexpr unsigned kMaxPosted = 6;  // per queue (ring of 16)
  static constexpr unsigned kRingLog2 = 4;

  HostileRun(Env& env, const HostileOptions& o) : env_(env), o_(o), rng_(env.rng()()) {}

  HostileStats run() {
    setup();
    while (st_.segments < o_.segments && !stop()) {
      ++st_.steps;
      const double r = real();
      if (chance(o_.error_order)) {
        error_in_order();
      } else if (r < 0.28) {
        driver_op();
      } else if (r < 0.28 + 0.72 * o_.lockstep) {
        lockstep_message();
      } else {
        streamed_batch();
      }
      env_.service();
      check_canaries();
      if (!env_.errors().empty() && !scoreboard_seen_) {  // the model comparison or an AXI rule
        scoreboard_seen_ = true;
        const std::string t = env_.errors().text();
        record_first("scoreboard: " + t.substr(0, t.find('\n')));
      }
      if (env_.cycle() > o_.max_cycles) {
        violation("watchdog: " + std::to_string(env_.cycle()) + " cycles after " + std::to_string(st_.steps) +
                  " steps (limit " + std::to_string(o_.max_cycles) + ")");
        break;
      }
      if (o_.progress_every != 0 && st_.steps % o_.progress_every == 0) {
        std::printf(
            "[ hostile  ] step %llu: %llu segments, %llu cycles, %llu stray writes, %llu violations, %llu "
            "mismatches, %llu scoreboard errors\n",
            ull(st_.steps), ull(st_.segments), ull(env_.cycle()), ull(st_.stray_writes), ull(st_.violations),
            ull(env_.mismatches()), ull(env_.errors().count()));
        std::fflush(stdout);
      }
    }
    if (!stop()) {
      env_.drain();
      env_.service();
      check_canaries();
    }
    st_.mismatches = env_.mismatches();
    return st_;
  }

  const HostileStats& stats() const { return st_; }

  // The coverage table; "" when every bin was hit, else the bins that were not.
  std::string coverage_table(bool require_all) const {
    std::string missing;
    std::printf("[ coverage ] RFC 5041 7.2 codes reported (error completions):\n");
    for (auto e : rnic::wire::kAllDdpErrors) {
      const std::string k = code_key(rnic::wire::error_type(e), rnic::wire::error_code(e), false);
      const auto it = st_.codes.find(k);
      const std::uint64_t n = it == st_.codes.end() ? 0 : it->second;
      std::printf("    %-52s %10llu\n", k.c_str(), ull(n));
      if (n == 0) missing += "code " + k + "; ";
    }
    {
      const std::string k = code_key(2, 3, true);
      const auto it = st_.codes.find(k);
      const std::uint64_t n = it == st_.codes.end() ? 0 : it->second;
      std::printf("    %-52s %10llu\n", k.c_str(), ull(n));
      if (n == 0) missing += "code " + k + "; ";
    }
    std::printf("[ coverage ] ways of breaking 4.1/4.3: generated, sent in lock step, what: outcomes (lock step)\n");
    for (unsigned b = 0; b < kNumBreaks; ++b) {
      std::string outs;
      for (const auto& kv : st_.outcomes[b]) outs += kv.first + " x" + std::to_string(kv.second) + ", ";
      if (!outs.empty()) outs.resize(outs.size() - 2);
      std::printf("    %-18s %9llu %8llu  %s: %s\n", break_name(b), ull(st_.generated[b]), ull(st_.attributed[b]),
                  kBreakNames[b].what, outs.c_str());
      if (st_.generated[b] == 0) missing += std::string("generated ") + break_name(b) + "; ";
      if (st_.attributed[b] == 0) missing += std::string("outcome ") + break_name(b) + "; ";
    }
    std::printf("[ coverage ] ownership transitions:\n");
    for (unsigned t = 0; t < kNumTransitions; ++t) {
      std::printf("    %-24s %10llu  %s\n", transition_name(t), ull(st_.transitions[t]), kTransitionNames[t].what);
      if (st_.transitions[t] == 0) missing += std::string("transition ") + transition_name(t) + "; ";
    }
    std::printf(
        "[ coverage ] 7.1 errors in DDP-SSN order: generated, outcome seen (the messages before the error "
        "delivered, then its error, nothing after)\n");
    for (unsigned k = 0; k < kNumErrorOrders; ++k) {
      std::printf("    %-12s %9llu %8llu  %s\n", kErrorOrderNames[k].name, ull(st_.order_generated[k]),
                  ull(st_.order_seen[k]), kErrorOrderNames[k].what);
      if (st_.order_generated[k] == 0)
        missing += std::string("generated error order ") + kErrorOrderNames[k].name + "; ";
      if (st_.order_seen[k] == 0) missing += std::string("outcome error order ") + kErrorOrderNames[k].name + "; ";
    }
    return require_all ? missing : "";
  }

  void print_summary() const {
    std::printf(
        "[ hostile  ] %llu steps, %llu segments (%llu messages, %llu in lock step), %llu completions, %llu "
        "cycles\n"
        "[ hostile  ] invariant checks: %llu landed writes (%llu bytes) against the ownership shadow, %llu "
        "canary chunk checks, %llu completion checks\n"
        "[ hostile  ] stray writes %llu, canary failures %llu, completion violations %llu, model mismatches "
        "%llu\n",
        ull(st_.steps), ull(st_.segments), ull(st_.messages), ull(st_.lockstep_messages), ull(st_.cqes),
        ull(env_.cycle()), ull(st_.landed_bursts), ull(st_.landed_bytes), ull(st_.canary_checks),
        ull(st_.completion_checks), ull(st_.stray_writes), ull(st_.canary_failures), ull(st_.violations),
        ull(st_.mismatches));
    if (!st_.first_violation.empty()) {
      std::printf("[ hostile  ] FIRST VIOLATION at step %llu after %llu segments: %s\n", ull(st_.first_violation_step),
                  ull(st_.first_violation_segments), st_.first_violation.c_str());
      std::printf("[ hostile  ] the steps before it:\n%s", trail_text().c_str());
    }
  }

 private:
  // ---- state -------------------------------------------------------------------------------------
  enum class Use { kFree, kPosted, kStag };
  struct Chunk {
    std::uint64_t addr = 0;
    std::uint32_t len = 0;
    Use use = Use::kFree;
    int owner = -1;                        // last owner: stream * 8 + qn for buffers, 100 + PD for STags
    std::uint64_t own_lo = 0, own_hi = 0;  // the range the card owns while in use
  };
  struct Posted {
    unsigned chunk;
    std::uint32_t len;
  };
  struct Queue {
    bool configured = false;
    std::uint32_t first = 1;
    std::uint32_t peer_msn = 1;              // the peer's next message
    std::vector<std::uint32_t> recent;       // MSNs the peer sent lately (skipped ones too)
    std::map<std::uint32_t, Posted> posted;  // by MSN: posted, not completed
  };
  struct Stream {
    bool enabled = false;
    bool errored = false;  // an error completion was seen
    bool delivered = false;
    // Since it was enabled, only conforming messages were sent to it (so with no error seen, every
    // segment sent has been delivered: its delivery point is its transmit DDP-SSN).
    bool clean = false;
    std::uint16_t last_ssn = 0;
    std::uint16_t pd = 1;
    Queue q[kQns];
    std::set<unsigned> touch;  // chunks a diverged stream may have written
  };
  void touch(unsigned s, unsigned ci) {
    streams_[s].touch.insert(ci);
    env_.excuse(chunks_[ci].addr, chunks_[ci].len);
  }
  struct Tag {
    bool valid = false;
    unsigned chunk = 0;
    std::uint32_t stag = 0;
    std::uint16_t pd = 1;
    std::optional<std::uint16_t> bound;
    bool remote_write = true;
    std::uint64_t base_to = 0, len = 0;
    std::uint8_t key = 0;
  };
  struct Seg {
    std::uint16_t stream, ssn;
    Bytes bytes;
  };

  static unsigned long long ull(std::uint64_t v) { return static_cast<unsigned long long>(v); }
  std::uint64_t uni(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
  }
  double real() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  bool chance(double p) { return real() < p; }
  bool stop() const { return o_.stop_at_first_violation && !st_.first_violation.empty(); }
  static std::string hex(std::uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", ull(v));
    return b;
  }
  static std::string code_key(unsigned type, unsigned code, bool order) {
    char b[96];
    const char* name = "?";
    for (auto e : rnic::wire::kAllDdpErrors) {
      if (rnic::wire::error_type(e) == type && rnic::wire::error_code(e) == code) name = rnic::wire::error_name(e);
    }
    std::snprintf(b, sizeof b, "%u/0x%02x %s%s", type, code, name, order ? " (order, at delivery)" : "");
    return b;
  }

  void log(const std::string& s) {
    if (o_.trace) std::printf("[ trace    ] step %llu cycle %llu: %s\n", ull(st_.steps), ull(env_.cycle()), s.c_str());
    trail_.push_back("step " + std::to_string(st_.steps) + " cycle " + std::to_string(env_.cycle()) + ": " + s);
    if (trail_.size() > 40) trail_.erase(trail_.begin());
  }
  std::string trail_text() const { return first_trail_; }
  std::string trail_now() const {
    std::string t;
    for (const auto& s : trail_) t += "      " + s + "\n";
    return t;
  }
  void violation(const std::string& what) {
    if (st_.violations++ < 20) std::printf("[ hostile  ] violation at step %llu: %s\n", ull(st_.steps), what.c_str());
    record_first(what);
  }
  void record_first(const std::string& what) {
    if (!st_.first_violation.empty()) return;
    st_.first_violation = what;
    st_.first_violation_step = st_.steps;
    st_.first_violation_segments = st_.segments;
    first_trail_ = trail_now();
    std::printf("[ hostile  ] VIOLATION (step %llu, %llu segments, cycle %llu): %s\n", ull(st_.steps),
                ull(st_.segments), ull(env_.cycle()), what.c_str());
    std::fflush(stdout);
  }
  void bump(Transition t) { ++st_.transitions[static_cast<unsigned>(t)]; }

  // ---- ownership shadow --------------------------------------------------------------------------
  void own(std::uint64_t lo, std::uint64_t hi, int d) {
    for (std::uint64_t a = lo; a < hi; ++a) own_[a] = static_cast<std::uint8_t>(own_[a] + d);
  }
  void on_land(const std::vector<std::pair<std::uint64_t, std::uint8_t>>& bytes, std::uint64_t cycle) {
    ++st_.landed_bursts;
    st_.landed_bytes += bytes.size();
    std::uint64_t bad = 0, first = 0;
    for (const auto& b : bytes) {
      if (own_[b.first] == 0) {
        if (bad++ == 0) first = b.first;
      }
    }
    if (bad == 0) return;
    ++st_.stray_writes;
    if (st_.stray_writes > 20 && !st_.first_violation.empty()) return;
    std::string who = "outside every chunk";
    for (unsigned i = 0; i < chunks_.size(); ++i) {
      const Chunk& c = chunks_[i];
      if (first >= c.addr && first < c.addr + c.len) {
        who = "chunk " + std::to_string(i) + " [" + hex(c.addr) + ", +" + std::to_string(c.len) + ") last owner " +
              owner_str(c.owner) + (c.use == Use::kFree ? " (released)" : " (in use, outside its owned range)");
      }
    }
    const std::string what = "stray write landed at cycle " + std::to_string(cycle) + ": " + std::to_string(bad) +
                             " byte(s) from " + hex(first) + " not owned by the card (" + who + ")";
    std::printf("[ hostile  ] %s\n", what.c_str());
    record_first(what);
  }
  static std::string owner_str(int o) {
    if (o < 0) return "none";
    if (o >= 100) return "STag of PD " + std::to_string(o - 100);
    return "stream " + std::to_string(o / 8) + " QN " + std::to_string(o % 8);
  }
  // A chunk leaves the card: fresh canary bytes (its next owner's data) in kernel and model memory.
  void release(unsigned ci) {
    Chunk& c = chunks_[ci];
    own(c.own_lo, c.own_hi, -1);
    c.use = Use::kFree;
    Bytes fresh(c.len);
    for (auto& b : fresh) b = static_cast<std::uint8_t>(rng_());
    env_.host_write(c.addr, fresh);
    std::memcpy(canary_.data() + c.addr, fresh.data(), fresh.size());
  }
  void take(unsigned ci, Use u, int owner, std::uint64_t lo, std::uint64_t hi) {
    Chunk& c = chunks_[ci];
    if (c.owner >= 0 && c.owner != owner) bump(u == Use::kStag ? Transition::kReuseRegister : Transition::kReusePost);
    c.use = u;
    c.owner = owner;
    c.own_lo = lo;
    c.own_hi = hi;
    own(lo, hi, +1);
  }
  void check_canaries() {
    const std::uint8_t* m = env_.mem().data();
    for (unsigned i = 0; i < chunks_.size(); ++i) {
      const Chunk& c = chunks_[i];
      ++st_.canary_checks;
      if (c.use != Use::kFree) continue;
      if (std::memcmp(m + c.addr, canary_.data() + c.addr, c.len) != 0) {
        ++st_.canary_failures;
        std::uint64_t a = c.addr;
        while (m[a] == canary_[a]) ++a;
        record_first("canary changed in released chunk " + std::to_string(i) + " at " + hex(a) + " (last owner " +
                     owner_str(c.owner) + ")");
        std::memcpy(canary_.data() + c.addr, m + c.addr, c.len);  // report each change once
      }
    }
  }
  int free_chunk() {
    std::vector<unsigned> f;
    for (unsigned i = 0; i < chunks_.size(); ++i) {
      if (chunks_[i].use == Use::kFree) f.push_back(i);
    }
    if (f.empty()) return -1;
    return static_cast<int>(f[uni(0, f.size() - 1)]);
  }

  // ---- completions (the driver's view) ------------------------------------------------------------
  void on_cqe(const Cqe& k) {
    ++st_.cqes;
    ++st_.completion_checks;
    window_.push_back(k);
    if (k.stream >= kStreams) {
      violation("completion for stream " + std::to_string(k.stream) + " that was never enabled: " + k.str());
      return;
    }
    Stream& s = streams_[k.stream];
    if (k.error()) {
      const bool order = (k.flags & hw::kCQE_FLAGS_ORDER.mask()) != 0;
      ++st_.codes[code_key(k.err_type, k.err_code, order)];
      s.errored = true;
      return;
    }
    if (s.errored) violation("delivery after an error completion on its stream (7.1): " + k.str());
    if (s.delivered) {
      const std::uint16_t d = static_cast<std::uint16_t>(k.ssn - s.last_ssn);
      if (d == 0 || d >= 0x8000)
        violation("delivery not after the previous one of its stream (message twice, 5.4): " + k.str());
    }
    s.delivered = true;
    s.last_ssn = k.ssn;
    if (k.tagged()) return;
    if (k.stag_qn >= kQns) {
      violation("untagged delivery for an unconfigured QN: " + k.str());
      return;
    }
    Queue& q = s.q[k.stag_qn];
    const auto it = q.posted.find(k.msn);
    if (it == q.posted.end()) {
      violation("untagged completion names no posted, uncompleted buffer (completed twice or never posted): " +
                k.str());
      return;
    }
    if (k.length > it->second.len) violation("completion longer than its buffer: " + k.str());
    const unsigned ci = it->second.chunk;
    q.posted.erase(it);
    release(ci);
    bump(Transition::kComplete);
  }

  // ---- driver ------------------------------------------------------------------------------------
  void setup() {
    env_.start(8);
    own_.assign(env_.mem().size(), 0);
    canary_.assign(env_.mem().data(), env_.mem().data() + env_.mem().size());
    own(kCqBase, kCqBase + (std::uint64_t{hw::kCQE_BYTES} << 8), +1);
    env_.mem().set_land_hook([this](const auto& b, std::uint64_t c) { on_land(b, c); });
    env_.set_cqe_hook([this](const Cqe& k) { on_cqe(k); });
    for (unsigned i = 0; i < kChunks; ++i) {
      Chunk c;
      c.len = static_cast<std::uint32_t>(uni(256, kChunkMax));
      c.addr = env_.alloc(c.len, 64, uni(0, 63));
      chunks_.push_back(c);
    }
    for (unsigned i = 0; i < kTagSlots; ++i) tags_[i].key = static_cast<std::uint8_t>(uni(0, 255));
    for (unsigned s = 0; s < kStreams; ++s) enable(s, false);
    for (unsigned i = 0; i < 5; ++i) register_tag();
  }
  static std::uint16_t pd_of(unsigned s) { return s < 2 ? 1 : static_cast<std::uint16_t>(s); }

  std::uint32_t pick_first_msn() {
    const double r = real();
    if (r < 0.3) return 1;
    if (r < 0.4) return 0;  // means 1
    if (r < 0.8) return 0xFFFFFFFFu - static_cast<std::uint32_t>(uni(0, 6));
    return static_cast<std::uint32_t>(uni(2, 0xFFFFFFFEull));
  }
  void configure(unsigned s, unsigned qn, std::optional<std::uint32_t> want = std::nullopt) {
    Queue& q = streams_[s].q[qn];
    const std::uint32_t first = want ? *want : pick_first_msn();
    const bool refused = env_.queue_config(static_cast<std::uint16_t>(s), qn, kRingLog2, first);
    if (q.configured) {
      // A queue is configured again only after STREAM_ENABLE (hw.def QUEUE_CONFIG): the card refuses
      // it and the queue, its posted buffers included, stays as it is.
      if (!refused) violation("QUEUE_CONFIG of a configured queue accepted");
      bump(Transition::kReconfigureRefused);
      log("QUEUE_CONFIG stream " + std::to_string(s) + " qn " + std::to_string(qn) + " refused (configured)");
      return;
    }
    if (refused) violation("QUEUE_CONFIG refused");
    env_.service();  // every completion decided before the fenced command has been written
    for (auto& p : q.posted) release(p.second.chunk);  // none expected: the queue was not configured
    q.posted.clear();
    q.configured = true;
    q.recent.clear();
    q.first = first == 0 ? 1 : first;
    q.peer_msn = q.first;
    log("QUEUE_CONFIG stream " + std::to_string(s) + " qn " + std::to_string(qn) + " first MSN " + hex(q.first));
  }
  void enable(unsigned s, bool again) {
    Stream& st = streams_[s];
    if (env_.stream_enable(static_cast<std::uint16_t>(s), pd_of(s))) violation("STREAM_ENABLE refused");
    if (again) bump(Transition::kReEnable);
    st.enabled = true;
    st.errored = false;
    st.delivered = false;
    st.clean = true;
    st.pd = pd_of(s);
    for (unsigned qn = 0; qn < kQns; ++qn) {
      st.q[qn].configured = false;
      configure(s, qn);
    }
    log("STREAM_ENABLE stream " + std::to_string(s));
  }
  // STREAM_TEARDOWN (fenced), then the ring polled, then every buffer still posted comes back flushed.
  void teardown(unsigned s, bool abortive) {
    Stream& st = streams_[s];
    const bool refused = abortive ? env_.stream_teardown_abortive(static_cast<std::uint16_t>(s))
                                  : env_.stream_teardown(static_cast<std::uint16_t>(s));
    if (refused) violation("STREAM_TEARDOWN refused");
    env_.service();
    for (auto& q : st.q) {
      for (auto& p : q.posted) {
        release(p.second.chunk);
        bump(abortive ? Transition::kFlushAbortiveTeardown : Transition::kFlushGracefulTeardown);
      }
      q.posted.clear();
    }
    st.enabled = false;
    log(std::string(abortive ? "abortive" : "graceful") + " STREAM_TEARDOWN stream " + std::to_string(s));
  }
  // A diverged or failed stream back in service: torn down, enabled, the model resynchronised.
  void recover(unsigned s) {
    Stream& st = streams_[s];
    const bool div = env_.diverged(static_cast<std::uint16_t>(s));
    if (st.enabled) teardown(s, false);
    enable(s, true);
    if (div) {
      env_.drain();
      for (unsigned ci : st.touch) env_.resync(chunks_[ci].addr, chunks_[ci].len);
      env_.resync_counters();
    }
    st.touch.clear();
  }
  bool post(unsigned s, unsigned qn) {
    Queue& q = streams_[s].q[qn];
    if (!streams_[s].enabled || !q.configured || q.posted.size() >= kMaxPosted) return false;
    const int ci = free_chunk();
    if (ci < 0) return false;
    Chunk& c = chunks_[static_cast<unsigned>(ci)];
    const std::uint32_t len = static_cast<std::uint32_t>(chance(0.1) ? 0 : uni(1, c.len));
    take(static_cast<unsigned>(ci), Use::kPosted, static_cast<int>(s * 8 + qn), c.addr, c.addr + len);
    const std::uint32_t msn = env_.post_recv(static_cast<std::uint16_t>(s), qn, c.addr, len);
    q.posted[msn] = Posted{static_cast<unsigned>(ci), len};
    if (env_.diverged(static_cast<std::uint16_t>(s))) touch(s, static_cast<unsigned>(ci));
    bump(Transition::kPost);
    log("post stream " + std::to_string(s) + " qn " + std::to_string(qn) + " msn " + hex(msn) + " chunk " +
        std::to_string(ci) + " len " + std::to_string(len));
    return true;
  }
  void register_tag() {
    std::vector<unsigned> freei;
    for (unsigned i = 0; i < kTagSlots; ++i) {
      if (!tags_[i].valid) freei.push_back(i);
    }
    const int ci = free_chunk();
    if (freei.empty() || ci < 0) return;
    const unsigned i = freei[uni(0, freei.size() - 1)];
    Tag& t = tags_[i];
    Chunk& c = chunks_[static_cast<unsigned>(ci)];
    StagArgs a;
    a.index = 40 + i;
    a.key = ++t.key;
    a.pd = static_cast<std::uint16_t>(uni(1, 3));
    if (chance(0.2)) a.bound_stream = static_cast<std::uint16_t>(uni(0, kStreams - 1));
    a.remote_write = !chance(0.1);
    a.length = uni(1, c.len);
    a.base_to = chance(0.25) ? ~std::uint64_t{0} - a.length - uni(0, 64) + 1 : uni(0, 1ull << 48);
    a.host_addr = c.addr;
    take(static_cast<unsigned>(ci), Use::kStag, 100 + a.pd, c.addr, c.addr + a.length);
    if (env_.stag_write(a)) violation("STAG_WRITE refused");
    t.valid = true;
    t.chunk = static_cast<unsigned>(ci);
    t.stag = (a.index << 8) | a.key;
    t.pd = a.pd;
    t.bound = a.bound_stream;
    t.remote_write = a.remote_write;
    t.base_to = a.base_to;
    t.len = a.length;
    for (unsigned s = 0; s < kStreams; ++s) {
      if (env_.diverged(static_cast<std::uint16_t>(s)) && streams_[s].pd == a.pd) touch(s, static_cast<unsigned>(ci));
    }
    bump(Transition::kRegister);
    log("STAG_WRITE " + hex(t.stag) + " pd " + std::to_string(a.pd) + " chunk " + std::to_string(ci) + " len " +
        std::to_string(a.length) + " base TO " + hex(a.base_to));
  }
  void invalidate_tag() {
    std::vector<unsigned> v;
    for (unsigned i = 0; i < kTagSlots; ++i) {
      if (tags_[i].valid) v.push_back(i);
    }
    if (v.empty()) return;
    Tag& t = tags_[v[uni(0, v.size() - 1)]];
    if (env_.stag_invalidate(t.stag >> 8)) violation("STAG_INVALIDATE refused");
    env_.service();
    t.valid = false;
    dead_stags_.push_back(t.stag);
    if (dead_stags_.size() > 16) dead_stags_.erase(dead_stags_.begin());
    release(t.chunk);
    bump(Transition::kInvalidate);
    log("STAG_INVALIDATE " + hex(t.stag));
  }

  void driver_op() {
    const unsigned s = static_cast<unsigned>(uni(0, kStreams - 1));
    const double r = real();
    if (r < 0.45) {
      for (unsigned n = static_cast<unsigned>(uni(1, 3)); n > 0; --n) post(s, static_cast<unsigned>(uni(0, kQns - 1)));
    } else if (r < 0.57) {
      register_tag();
    } else if (r < 0.69) {
      invalidate_tag();
    } else if (r < 0.77) {
      if (streams_[s].enabled && o_.reconfigure) configure(s, static_cast<unsigned>(uni(0, kQns - 1)));
    } else if (r < 0.87 || !o_.abortive) {
      recover(s);  // graceful teardown and enable
    } else {
      abortive(s);
    }
  }
  // A message in flight for the stream, then STREAM_TEARDOWN at once.
  void abortive(unsigned s) {
    if (!streams_[s].enabled) return recover(s);
    touch_all(s);
    std::vector<unsigned> brk;
    auto segs = message(s, brk);
    for (auto& g : segs) send(g);
    env_.run(uni(0, 60));
    teardown(s, true);
    env_.drain();
    recover(s);
  }
  void touch_all(unsigned s) {
    env_.diverge(static_cast<std::uint16_t>(s));
    Stream& st = streams_[s];
    for (auto& q : st.q) {
      for (auto& p : q.posted) touch(s, p.second.chunk);
    }
    for (const Tag& t : tags_) {
      if (t.valid && t.pd == st.pd) touch(s, t.chunk);
    }
  }

  // ---- the peer ----------------------------------------------------------------------------------
  unsigned pick_break() {
    // Half of the time the least generated break, so every bin fills early; else any.
    if (chance(0.5)) {
      unsigned best = 0;
      for (unsigned b = 1; b < kNumBreaks; ++b) {
        if (st_.attributed[b] < st_.attributed[best]) best = b;
      }
      return best;
    }
    return static_cast<unsigned>(uni(0, kNumBreaks - 1));
  }
  std::vector<std::size_t> mulpdu_split(std::size_t len, std::size_t mulpdu) {
    std::vector<std::size_t> v;
    if (len == 0) return {0};
    for (std::size_t o = 0; o < len; o += mulpdu) v.push_back(std::min(mulpdu, len - o));
    return v;
  }
  const Tag* valid_tag_for(unsigned s) {
    std::vector<const Tag*> v;
    for (const Tag& t : tags_) {
      if (t.valid && t.remote_write && t.pd == streams_[s].pd && (!t.bound || *t.bound == s) &&
          t.base_to <= ~std::uint64_t{0} - t.len)
        v.push_back(&t);
    }
    if (v.empty()) return nullptr;
    return v[uni(0, v.size() - 1)];
  }
  std::uint64_t rsvd_ulp40() { return uni(0, (1ull << 40) - 1); }

  // One message for stream s, broken in the ways listed in brk (empty: conforming; the peer picks).
  std::vector<Seg> message(unsigned s, std::vector<unsigned>& brk) {
    Stream& st = streams_[s];
    if (!brk.empty()) st.clean = false;
    msg_wraps_ = false;
    msg_timing_ = false;
    auto has = [&](Break b) { return std::find(brk.begin(), brk.end(), static_cast<unsigned>(b)) != brk.end(); };
    const std::size_t mulpdu = std::array<std::size_t, 4>{24, 64, 200, 512}[uni(0, 3)];
    std::vector<rnic::wire::DdpHeader> hs;
    std::vector<Bytes> pls;
    const bool tagged_breaks = has(Break::kStagOtherPd) || has(Break::kStagOtherStream) ||
                               has(Break::kStagInvalidated) || has(Break::kStagOldKey) || has(Break::kStagBadIndex) ||
                               has(Break::kStagNoWrite) || has(Break::kToNearWrap) || has(Break::kToOutOfBounds);
    const bool untagged_breaks = has(Break::kMsnRepeat) || has(Break::kMsnSkip) || has(Break::kMsnWrap) ||
                                 has(Break::kQnChangeMid) || has(Break::kMsnChangeMid) || has(Break::kMoChangeMid) ||
                                 has(Break::kQnInvalid) || has(Break::kQnUnconfigured) || has(Break::kMoBeyondBuffer) ||
                                 has(Break::kTooLong) || has(Break::kNoBuffer) || has(Break::kRsvdUlpChangeMid);
    const Tag* vt = valid_tag_for(s);
    const bool tagged = tagged_breaks || (!untagged_breaks && vt != nullptr && chance(0.4));
    if (tagged) {
      std::uint32_t stag = vt ? vt->stag : 0;
      std::uint64_t base = vt ? vt->base_to : 0, tlen = vt ? vt->len : 64;
      auto pick_tag = [&](auto pred) {
        std::vector<const Tag*> v;
        for (const Tag& t : tags_) {
          if (t.valid && pred(t)) v.push_back(&t);
        }
        if (v.empty()) return false;
        const Tag* t = v[uni(0, v.size() - 1)];
        stag = t->stag;
        base = t->base_to;
        tlen = t->len;
        return true;
      };
      if (has(Break::kStagOtherPd)) pick_tag([&](const Tag& t) { return t.pd != st.pd; });
      if (has(Break::kStagOtherStream)) pick_tag([&](const Tag& t) { return t.bound && *t.bound != s; });
      if (has(Break::kStagNoWrite)) pick_tag([&](const Tag& t) { return !t.remote_write; });
      if (has(Break::kToNearWrap)) pick_tag([&](const Tag& t) { return t.base_to > (~std::uint64_t{0} - 4096); });
      if (has(Break::kStagInvalidated) && !dead_stags_.empty()) stag = dead_stags_[uni(0, dead_stags_.size() - 1)];
      if (has(Break::kStagOldKey)) stag = (stag & ~0xFFu) | ((stag - 1) & 0xFFu);
      if (has(Break::kStagBadIndex)) {
        const std::uint64_t idx = chance(0.5) ? uni(256, 0xFFFFFF) : uni(0, 39);
        stag = static_cast<std::uint32_t>(idx << 8 | uni(0, 255));
      }
      std::uint64_t len = uni(0, std::min<std::uint64_t>(tlen, 1200));
      std::uint64_t to = base + uni(0, tlen - std::min(len, tlen));
      if (has(Break::kToNearWrap)) {
        to = ~std::uint64_t{0} - uni(0, 40);
        len = std::max<std::uint64_t>(len, 64);
      }
      if (has(Break::kToOutOfBounds)) to = chance(0.5) ? base - uni(1, 64) : base + tlen - len + uni(1, 64);
      const std::uint8_t rsvd = static_cast<std::uint8_t>(uni(0, 255));
      std::uint64_t off = 0;
      const auto split = mulpdu_split(len, mulpdu);
      for (std::size_t k = 0; k < split.size(); ++k) {
        const std::size_t n = split[k];
        rnic::wire::TaggedHeader h;
        h.stag = stag;
        h.to = to + off;
        h.rsvd_ulp = rsvd;
        h.last = k + 1 == split.size();
        hs.push_back(h);
        pls.push_back(env_.random_bytes(n));
        off += n;
      }
    } else {
      unsigned qn = static_cast<unsigned>(uni(0, kQns - 1));
      if (st.q[qn].posted.empty()) qn ^= 1u;
      Queue& q = st.q[qn];
      std::uint32_t msn = q.peer_msn;
      const auto it = q.posted.find(msn);
      std::uint32_t blen = it != q.posted.end() ? it->second.len : 600;
      if (has(Break::kMsnRepeat)) {  // one sent lately (a skipped one too), or one just below
        msn = !q.recent.empty() && chance(0.6) ? q.recent[uni(0, q.recent.size() - 1)]
                                               : q.peer_msn - static_cast<std::uint32_t>(uni(1, 3));
      }
      if (has(Break::kMsnSkip)) {
        msn = q.peer_msn + static_cast<std::uint32_t>(uni(1, 2));
      }
      if (has(Break::kNoBuffer)) {
        msn = q.peer_msn + static_cast<std::uint32_t>(q.posted.size() + uni(0, 4));
      }
      q.recent.push_back(msn);
      if (q.recent.size() > 4) q.recent.erase(q.recent.begin());
      msg_wraps_ = q.first >= 0xFFFFFFF0u && (msn == 0xFFFFFFFFu || msn == 0 || msn == 1);
      std::uint64_t len = uni(0, blen);
      if (has(Break::kTooLong)) len = blen + uni(1, 100);
      const std::uint64_t rsvd = rsvd_ulp40();
      const auto split = mulpdu_split(len, mulpdu);
      std::uint32_t mo = 0;
      for (std::size_t k = 0; k < split.size(); ++k) {
        rnic::wire::UntaggedHeader h;
        h.qn = qn;
        h.msn = msn;
        h.mo = mo;
        h.rsvd_ulp = rsvd;
        h.last = k + 1 == split.size();
        hs.push_back(h);
        pls.push_back(env_.random_bytes(split[k]));
        mo += static_cast<std::uint32_t>(split[k]);
      }
      auto& last = std::get<rnic::wire::UntaggedHeader>(hs.back());
      const std::size_t mid = hs.size() > 1 ? uni(1, hs.size() - 1) : 0;
      auto& um = std::get<rnic::wire::UntaggedHeader>(hs[mid]);
      if (has(Break::kQnChangeMid)) {
        um.qn = qn ^ 1u;
        um.msn = st.q[qn ^ 1u].peer_msn;
      }
      if (has(Break::kMsnChangeMid)) um.msn += 1;
      if (has(Break::kMoChangeMid)) {
        const auto d = static_cast<std::uint32_t>(uni(1, 16));
        um.mo = chance(0.5) ? um.mo + d : um.mo - std::min(um.mo, d);
      }
      if (has(Break::kRsvdUlpChangeMid)) um.rsvd_ulp ^= uni(1, 0xFF);
      if (has(Break::kEarlyL) && hs.size() > 1) std::get<rnic::wire::UntaggedHeader>(hs[0]).last = true;
      if (has(Break::kMissingL)) {
        last.last = false;
      }
      if (has(Break::kQnInvalid)) um.qn = chance(0.5) ? 4u + static_cast<std::uint32_t>(uni(0, 3)) : 0xFFFFFFFFu;
      if (has(Break::kQnUnconfigured)) um.qn = 2u + static_cast<std::uint32_t>(uni(0, 1));
      if (has(Break::kMoBeyondBuffer)) um.mo = blen + static_cast<std::uint32_t>(uni(0, 100));
      if (has(Break::kTChangeMid) && vt != nullptr) {
        rnic::wire::TaggedHeader th;
        th.stag = vt->stag;
        th.to = vt->base_to;
        th.last = std::get<rnic::wire::UntaggedHeader>(hs[mid]).last;
        pls[mid].resize(std::min<std::size_t>(pls[mid].size(), vt->len));
        hs[mid] = th;
      }
    }
    if (tagged && has(Break::kTChangeMid) && hs.size() > 0) {
      // an untagged segment inside a tagged message (MSN of no buffer in particular)
      const std::size_t mid = uni(0, hs.size() - 1);
      rnic::wire::UntaggedHeader uh;
      uh.qn = 0;
      uh.msn = st.q[0].peer_msn;
      uh.last = rnic::wire::is_last(hs[mid]);
      hs[mid] = uh;
      pls[mid].clear();
    }
    // The peer's own bookkeeping: an untagged segment with L completes its queue's next MSN if a buffer
    // is posted for it (the delivery rule, errors aside: a stream that fails is enabled again, which
    // restarts the peer's MSNs).
    for (const auto& h : hs) {
      const auto* u = std::get_if<rnic::wire::UntaggedHeader>(&h);
      if (u == nullptr || !u->last || u->qn >= kQns) continue;
      Queue& qq = st.q[u->qn];
      if (u->msn == qq.peer_msn && qq.posted.count(u->msn) != 0) ++qq.peer_msn;
    }
    std::vector<Seg> out;
    for (std::size_t k = 0; k < hs.size(); ++k) {
      if (has(Break::kDv) && k == 0) {
        std::visit([&](auto& h) { h.dv = static_cast<std::uint8_t>(std::array<int, 3>{0, 2, 3}[uni(0, 2)]); }, hs[k]);
      }
      Bytes g = segment(hs[k], pls[k]);
      if (has(Break::kRsvd)) g[0] = static_cast<std::uint8_t>(g[0] | (uni(1, 15) << 2));
      out.push_back(Seg{static_cast<std::uint16_t>(s), 0, std::move(g)});
    }
    if (has(Break::kOversize)) {
      Bytes& g = out[uni(0, out.size() - 1)].bytes;
      g.resize(env_.cfg().params.max_seg_bytes + uni(1, 3000), 0x5A);
    }
    if (has(Break::kTruncated)) {
      Bytes& g = out[uni(0, out.size() - 1)].bytes;
      g.resize(uni(1, (g[0] & 0x80) ? 13 : 17));
    }
    // DDP-SSNs.
    std::uint16_t& tx = env_.tx_ssn(static_cast<std::uint16_t>(s));
    if (has(Break::kSsnGap)) tx = static_cast<std::uint16_t>(tx + uni(1, 3));
    for (auto& g : out) g.ssn = tx++;
    if (has(Break::kSsnOutsideWindow)) {
      // Ahead of the window whatever has been delivered; or behind the sender's own DDP-SSN, which is
      // behind the delivery point, or a duplicate in the window, depending on what the kernel has
      // delivered when it arrives (timing: see timing_dependent()).
      Seg& g = out[uni(0, out.size() - 1)];
      const bool behind = chance(0.5);
      g.ssn = static_cast<std::uint16_t>(g.ssn + (behind ? 0x10000 - uni(1, 200) : uni(64, 3000)));
      msg_timing_ = msg_timing_ || behind;
    }
    if (has(Break::kSsnDuplicate)) {
      Seg d = out[uni(0, out.size() - 1)];
      if (d.bytes.size() >= 18 && !(d.bytes[0] & 0x80) && chance(0.5)) d.bytes[13] ^= 1;  // another MSN
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(uni(0, out.size())), std::move(d));
    }
    return out;
  }

  // ---- 7.1 errors in DDP-SSN order (issue 33) -----------------------------------------------------
  // 1..max_segs segments of one message of at most max_len bytes: the segment sizes.
  std::vector<std::size_t> split_segments(std::uint64_t max_len, unsigned max_segs) {
    const std::size_t mulpdu = std::array<std::size_t, 4>{24, 64, 200, 512}[uni(0, 3)];
    const std::uint64_t fit = max_len == 0 ? 1 : (max_len + mulpdu - 1) / mulpdu;
    const std::uint64_t n = std::min<std::uint64_t>(uni(1, max_segs), fit);
    const std::uint64_t lo = n == 1 ? 0 : (n - 1) * mulpdu + 1;
    return mulpdu_split(uni(lo, std::min<std::uint64_t>(max_len, n * mulpdu)), mulpdu);
  }
  // A queue of stream s with a buffer posted for the peer's next MSN (posted here when needed), or -1.
  int queue_with_buffer(unsigned s) {
    std::vector<unsigned> qs;
    for (unsigned qn = 0; qn < kQns; ++qn) {
      Queue& q = streams_[s].q[qn];
      if (q.posted.count(q.peer_msn) == 0) post(s, qn);
      if (q.posted.count(q.peer_msn) != 0) qs.push_back(qn);
    }
    return qs.empty() ? -1 : static_cast<int>(qs[uni(0, qs.size() - 1)]);
  }
  // A conforming message of stream s, 1-3 segments (at most max_segs): tagged into an STag the stream
  // may write, or untagged for a posted buffer; a zero-length tagged message (5.2: whatever STag it
  // names) when neither is possible. DDP-SSNs are set by the caller.
  std::vector<Seg> valid_message(unsigned s, unsigned max_segs) {
    const Tag* vt = valid_tag_for(s);
    const int qn = queue_with_buffer(s);
    std::vector<Bytes> segs;
    if (qn >= 0 && (vt == nullptr || chance(0.6))) {
      Queue& q = streams_[s].q[qn];
      const std::uint32_t msn = q.peer_msn++;
      q.recent.push_back(msn);
      if (q.recent.size() > 4) q.recent.erase(q.recent.begin());
      const auto split = split_segments(q.posted.at(msn).len, max_segs);
      const std::uint64_t rsvd = rsvd_ulp40();
      std::uint32_t mo = 0;
      for (std::size_t k = 0; k < split.size(); ++k) {
        rnic::wire::UntaggedHeader h;
        h.qn = static_cast<std::uint32_t>(qn);
        h.msn = msn;
        h.mo = mo;
        h.rsvd_ulp = rsvd;
        h.last = k + 1 == split.size();
        segs.push_back(segment(h, env_.random_bytes(split[k])));
        mo += static_cast<std::uint32_t>(split[k]);
      }
    } else {
      const std::uint64_t tlen = vt != nullptr ? std::min<std::uint64_t>(vt->len, 1200) : 0;
      const auto split = split_segments(tlen, max_segs);
      std::uint64_t len = 0;
      for (auto n : split) len += n;
      const std::uint64_t to = vt != nullptr ? vt->base_to + uni(0, vt->len - len) : rng_();
      const std::uint32_t stag = vt != nullptr ? vt->stag : static_cast<std::uint32_t>(rng_());
      const std::uint8_t rsvd = static_cast<std::uint8_t>(uni(0, 255));
      std::uint64_t off = 0;
      for (std::size_t k = 0; k < split.size(); ++k) {
        rnic::wire::TaggedHeader h;
        h.stag = stag;
        h.to = to + off;
        h.rsvd_ulp = rsvd;
        h.last = k + 1 == split.size();
        segs.push_back(segment(h, env_.random_bytes(split[k])));
        off += split[k];
      }
    }
    std::vector<Seg> out;
    for (auto& g : segs) out.push_back(Seg{static_cast<std::uint16_t>(s), 0, std::move(g)});
    return out;
  }
  // One segment of stream s that fails a 7.1 check decided by the segment alone (the same wherever it
  // arrives: nothing timing-dependent, no LLP error), the way of breaking in *b. head[qn] is the MSN of
  // the first buffer still posted on each queue (the peer's next MSN before this step's messages).
  Seg failing_segment(unsigned s, const std::array<std::uint32_t, kQns>& head, unsigned& b) {
    Stream& st = streams_[s];
    const Tag* vt = valid_tag_for(s);
    std::vector<const Tag*> other_pd, other_stream, no_write, any_tag;
    for (const Tag& t : tags_) {
      if (!t.valid) continue;
      any_tag.push_back(&t);
      if (t.pd != st.pd) other_pd.push_back(&t);
      if (t.bound && *t.bound != s) other_stream.push_back(&t);
      if (!t.remote_write) no_write.push_back(&t);
    }
    std::vector<std::uint32_t> dead;
    for (std::uint32_t d : dead_stags_) {
      if (std::none_of(tags_.begin(), tags_.end(), [&](const Tag& t) { return t.valid && t.stag == d; }))
        dead.push_back(d);
    }
    std::vector<Break> ways = {Break::kDv,       Break::kStagBadIndex, Break::kToNearWrap,     Break::kTruncated,
                               Break::kOversize, Break::kQnInvalid,    Break::kQnUnconfigured, Break::kMoBeyondBuffer,
                               Break::kTooLong,  Break::kNoBuffer,     Break::kToOutOfBounds};
    if (!other_pd.empty()) ways.push_back(Break::kStagOtherPd);
    if (!other_stream.empty()) ways.push_back(Break::kStagOtherStream);
    if (!no_write.empty()) ways.push_back(Break::kStagNoWrite);
    if (!any_tag.empty()) ways.push_back(Break::kStagOldKey);
    if (!dead.empty()) ways.push_back(Break::kStagInvalidated);
    const Break w = ways[uni(0, ways.size() - 1)];
    b = static_cast<unsigned>(w);
    // Tagged ones carry payload: a zero-length segment is not checked against its STag and TO (5.2).
    std::uint8_t dv = rnic::wire::kDdpVersion;
    if (w == Break::kDv) dv = static_cast<std::uint8_t>(std::array<int, 3>{0, 2, 3}[uni(0, 2)]);
    auto tagged = [&](std::uint32_t stag, std::uint64_t to, std::uint64_t len) {
      rnic::wire::TaggedHeader h;
      h.dv = dv;
      h.stag = stag;
      h.to = to;
      h.rsvd_ulp = static_cast<std::uint8_t>(uni(0, 255));
      h.last = chance(0.7);
      return Seg{static_cast<std::uint16_t>(s), 0, segment(h, env_.random_bytes(len))};
    };
    const unsigned qn = static_cast<unsigned>(uni(0, kQns - 1));
    Queue& q = st.q[qn];
    auto untagged = [&](std::uint32_t uqn, std::uint32_t msn, std::uint32_t mo, std::uint64_t len) {
      rnic::wire::UntaggedHeader h;
      h.dv = dv;
      h.qn = uqn;
      h.msn = msn;
      h.mo = mo;
      h.rsvd_ulp = rsvd_ulp40();
      h.last = chance(0.7);
      return Seg{static_cast<std::uint16_t>(s), 0, segment(h, env_.random_bytes(len))};
    };
    const auto it = q.posted.find(q.peer_msn);
    const std::uint32_t blen = it != q.posted.end() ? it->second.len : 600;  // none: UntaggedNoBuffer
    const auto some = [&](const std::vector<const Tag*>& v) {                // a tag of v, TO inside it
      const Tag* t = v[uni(0, v.size() - 1)];
      return tagged(t->stag, t->base_to, uni(1, 200));
    };
    switch (w) {
      case Break::kStagOtherPd:
        return some(other_pd);
      case Break::kStagOtherStream:
        return some(other_stream);
      case Break::kStagNoWrite:
        return some(no_write);
      case Break::kStagOldKey: {
        const Tag* t = any_tag[uni(0, any_tag.size() - 1)];
        return tagged((t->stag & ~0xFFu) | ((t->stag - 1) & 0xFFu), t->base_to, uni(1, 200));
      }
      case Break::kStagInvalidated:
        return tagged(dead[uni(0, dead.size() - 1)], uni(0, 1ull << 48), uni(1, 200));
      case Break::kStagBadIndex: {
        const std::uint64_t idx = chance(0.5) ? uni(256, 0xFFFFFF) : uni(0, 39);
        return tagged(static_cast<std::uint32_t>(idx << 8 | uni(0, 255)), uni(0, 1ull << 48), uni(1, 200));
      }
      case Break::kToNearWrap:  // TO + length wraps (or an earlier tagged check fails)
        return tagged(vt != nullptr ? vt->stag : static_cast<std::uint32_t>(rng_()), ~std::uint64_t{0} - uni(0, 40),
                      uni(64, 300));
      case Break::kToOutOfBounds: {
        if (vt == nullptr)
          return tagged(static_cast<std::uint32_t>(uni(0, 39) << 8 | uni(0, 255)), rng_(), uni(1, 200));
        const std::uint64_t len = uni(1, std::min<std::uint64_t>(vt->len, 1200));
        return tagged(vt->stag, chance(0.5) ? vt->base_to - uni(1, 64) : vt->base_to + vt->len - len + uni(1, 64), len);
      }
      case Break::kDv:
        return vt != nullptr && chance(0.5) ? tagged(vt->stag, vt->base_to, 0) : untagged(qn, q.peer_msn, 0, 0);
      case Break::kTruncated: {
        Seg g = chance(0.5) && vt != nullptr ? tagged(vt->stag, vt->base_to, 0) : untagged(qn, q.peer_msn, 0, 0);
        g.bytes.resize(uni(1, (g.bytes[0] & 0x80) ? 13 : 17));
        return g;
      }
      case Break::kOversize: {
        Seg g = untagged(qn, q.peer_msn, 0, 0);
        g.bytes.resize(env_.cfg().params.max_seg_bytes + uni(1, 3000), 0x5A);
        return g;
      }
      case Break::kQnInvalid:
        return untagged(chance(0.5) ? 4u + static_cast<std::uint32_t>(uni(0, 3)) : 0xFFFFFFFFu, q.peer_msn, 0,
                        uni(0, 100));
      case Break::kQnUnconfigured:
        return untagged(2u + static_cast<std::uint32_t>(uni(0, 1)), q.peer_msn, 0, uni(0, 100));
      case Break::kMoBeyondBuffer:
        return untagged(qn, q.peer_msn, blen + static_cast<std::uint32_t>(uni(0, 100)), uni(1, 100));
      case Break::kTooLong:
        return untagged(qn, q.peer_msn, 0, blen + uni(1, 100));
      default:  // kNoBuffer: past the last buffer posted
        return untagged(qn, head[qn] + static_cast<std::uint32_t>(q.posted.size() + uni(0, 4)), 0, uni(0, 100));
    }
  }
  unsigned pick_error_order() {
    if (chance(0.5)) {  // the least seen, so every bin fills early
      unsigned best = 0;
      for (unsigned k = 1; k < 3; ++k) {
        if (st_.order_seen[k] < st_.order_seen[best]) best = k;
      }
      return best;
    }
    return static_cast<unsigned>(uni(0, 2));
  }
  // On a quiet stream in service: 1-3 valid messages at the next DDP-SSNs, a failing segment at the
  // DDP-SSN after them and maybe a valid segment after it, back to back, the failing one before, among
  // or after the others. The card reports the error at its DDP-SSN: the messages before it are delivered
  // in order, then its error; nothing after it (a later segment that arrived first may have been placed,
  // into memory the card owns: its buffer stays posted until the recovery's teardown). The outcome does
  // not depend on timing, so the model comparison stays on (no diverge()).
  void error_in_order() {
    const unsigned s = static_cast<unsigned>(uni(0, kStreams - 1));
    Stream& st = streams_[s];
    if (!st.enabled || st.errored || !st.clean || env_.diverged(static_cast<std::uint16_t>(s)) ||
        env_.model().stream_state(static_cast<std::uint16_t>(s)) != rnic::model::StreamState::kNormal)
      recover(s);
    if (!o_.use_model) env_.diverge(static_cast<std::uint16_t>(s));
    st.clean = false;
    const unsigned ord = pick_error_order();
    std::array<std::uint32_t, kQns> head{};
    for (unsigned qn = 0; qn < kQns; ++qn) head[qn] = st.q[qn].peer_msn;
    std::uint16_t& tx = env_.tx_ssn(static_cast<std::uint16_t>(s));
    std::vector<Seg> before;
    std::vector<std::uint16_t> lasts;  // DDP-SSN of each message's last segment
    const unsigned msgs = static_cast<unsigned>(uni(1, 3));
    for (unsigned m = 0; m < msgs || (ord == 1 && before.size() < 2); ++m) {
      for (auto& g : valid_message(s, 3)) {
        g.ssn = tx++;
        before.push_back(std::move(g));
      }
      lasts.push_back(before.back().ssn);
    }
    // The later segment first: a buffer it posts is one the failing segment's MSN must be past.
    std::optional<Seg> later;
    if (chance(0.6)) later = std::move(valid_message(s, 1).front());
    unsigned way = 0;
    Seg bad = failing_segment(s, head, way);
    bad.ssn = tx++;
    if (later) later->ssn = tx++;
    ++st_.generated[way];
    std::vector<Seg> segs = before;
    if (chance(0.5)) std::shuffle(segs.begin(), segs.end(), rng_);
    std::size_t at = ord == 0 ? 0 : ord == 2 ? segs.size() : uni(1, segs.size() - 1);
    segs.insert(segs.begin() + static_cast<std::ptrdiff_t>(at), bad);
    bool later_first = false;
    if (later) {
      const std::size_t p = uni(0, segs.size());
      later_first = p <= at;
      if (later_first) ++at;
      segs.insert(segs.begin() + static_cast<std::ptrdiff_t>(p), *later);
    }
    ++st_.order_generated[ord];
    if (later_first) ++st_.order_generated[static_cast<unsigned>(ErrorOrder::kLaterFirst)];
    std::string desc = "error in DDP-SSN order stream " + std::to_string(s) + " (" + kErrorOrderNames[ord].name +
                       (later_first ? ", a later segment first" : "") + "): " + std::to_string(lasts.size()) +
                       " messages, failing segment (" + break_name(way) + ") " + seg_str(bad) + ", sent:";
    for (const auto& g : segs) desc += " " + seg_str(g);
    log(desc);
    window_.clear();
    for (const auto& g : segs) {
      send(g);
      if (env_.src().pending() > 48) env_.run_until([&] { return env_.src().pending() < 16; }, 2000000);
    }
    st_.messages += lasts.size();
    env_.drain();
    env_.service();
    // The outcome: the messages before the error delivered in order, then its error, nothing else.
    std::vector<const Cqe*> got;
    for (const Cqe& k : window_) {
      if (k.stream == s) got.push_back(&k);
    }
    std::string why;
    for (std::size_t i = 0; i < got.size() && why.empty(); ++i) {
      const Cqe& k = *got[i];
      if (i < lasts.size() && (k.error() || k.ssn != lasts[i]))
        why = "completion " + std::to_string(i) + " is not the delivery of the message ending at DDP-SSN " +
              std::to_string(lasts[i]) + ": " + k.str();
      if (i == lasts.size() && (!k.error() || k.ssn != bad.ssn || (k.flags & hw::kCQE_FLAGS_ORDER.mask()) != 0))
        why = "completion " + std::to_string(i) + " is not the error at DDP-SSN " + std::to_string(bad.ssn) + ": " +
              k.str();
      if (i > lasts.size()) why = "a completion after the error: " + k.str();
    }
    if (why.empty() && got.size() != lasts.size() + 1)
      why = std::to_string(got.size()) + " completions, expected " + std::to_string(lasts.size()) +
            " deliveries and the error at DDP-SSN " + std::to_string(bad.ssn);
    if (!why.empty()) {
      violation("7.1 error in DDP-SSN order (" + std::string(kErrorOrderNames[ord].name) + ") on stream " +
                std::to_string(s) + ": " + why);
    } else {
      ++st_.order_seen[ord];
      if (later_first) ++st_.order_seen[static_cast<unsigned>(ErrorOrder::kLaterFirst)];
    }
  }

  void send(const Seg& g) {
    env_.send(g.stream, g.ssn, g.bytes);
    ++st_.segments;
  }
  void top_up(unsigned s) {
    for (unsigned qn = 0; qn < kQns; ++qn) {
      while (streams_[s].q[qn].posted.size() < 2 && post(s, qn)) {
      }
    }
  }
  std::vector<unsigned> pick_breaks() {
    std::vector<unsigned> brk;
    if (chance(o_.hostile)) {
      brk.push_back(pick_break());
      if (chance(0.15)) brk.push_back(static_cast<unsigned>(uni(0, kNumBreaks - 1)));
    }
    return brk;
  }

  void lockstep_message() {
    unsigned s = static_cast<unsigned>(uni(0, kStreams - 1));
    std::vector<unsigned> brk = pick_breaks();
    const bool to_disabled =
        std::find(brk.begin(), brk.end(), static_cast<unsigned>(Break::kToDisabledStream)) != brk.end();
    if (to_disabled) {
      if (streams_[s].enabled) teardown(s, false);
    } else if (!streams_[s].enabled || streams_[s].errored ||
               env_.model().stream_state(static_cast<std::uint16_t>(s)) != rnic::model::StreamState::kNormal) {
      recover(s);
    }
    if (!to_disabled && std::find(brk.begin(), brk.end(), static_cast<unsigned>(Break::kMsnWrap)) != brk.end() &&
        !wraps(s)) {
      configure(s, static_cast<unsigned>(uni(0, kQns - 1)), 0xFFFFFFFFu - static_cast<std::uint32_t>(uni(0, 1)));
    }
    if (!to_disabled) top_up(s);
    auto segs = message(s, brk);
    if (msg_wraps_ && std::find(brk.begin(), brk.end(), static_cast<unsigned>(Break::kMsnWrap)) == brk.end())
      brk.push_back(static_cast<unsigned>(Break::kMsnWrap));
    if (!o_.use_model) env_.diverge(static_cast<std::uint16_t>(s));
    for (unsigned b : brk) ++st_.generated[b];
    std::string desc = "lock-step message stream " + std::to_string(s) + " breaks:";
    for (unsigned b : brk) desc += std::string(" ") + break_name(b);
    desc += " segments:";
    for (const auto& g : segs) desc += " " + seg_str(g);
    log(desc);
    window_.clear();
    for (const auto& g : segs) {
      send(g);
      env_.drain();
    }
    env_.service();
    ++st_.messages;
    ++st_.lockstep_messages;
    // Outcome: the completions of the stream seen meanwhile.
    std::set<std::string> outs;
    for (const Cqe& k : window_) {
      if (k.stream != s) continue;
      if (k.error()) {
        outs.insert(code_key(k.err_type, k.err_code, (k.flags & hw::kCQE_FLAGS_ORDER.mask()) != 0));
      } else {
        outs.insert("delivered");
      }
    }
    std::string o;
    for (const auto& x : outs) o += (o.empty() ? "" : " + ") + x;
    if (o.empty()) o = "no completion";
    for (unsigned b : brk) {
      ++st_.attributed[b];
      ++st_.outcomes[b][o];
    }
  }
  bool wraps(unsigned s) const {
    for (const Queue& q : streams_[s].q) {
      if (q.configured && q.first > 0xFFFFFFF0u && (q.peer_msn > 0xFFFFFFF0u || q.peer_msn < 8)) return true;
    }
    return false;
  }
  static std::string seg_str(const Seg& g) {
    const auto d = rnic::wire::decode_segment(rnic::wire::ConstBytes(g.bytes.data(), g.bytes.size()));
    char b[160];
    if (!d) {
      std::snprintf(b, sizeof b, "[ssn %u: %zu bytes, short]", g.ssn, g.bytes.size());
    } else if (const auto* t = std::get_if<rnic::wire::TaggedHeader>(&d->header)) {
      std::snprintf(b, sizeof b, "[ssn %u T ctrl 0x%02x stag 0x%x to 0x%llx len %zu]", g.ssn, g.bytes[0], t->stag,
                    ull(t->to), d->payload.size);
    } else {
      const auto& u = std::get<rnic::wire::UntaggedHeader>(d->header);
      std::snprintf(b, sizeof b, "[ssn %u U ctrl 0x%02x qn %u msn 0x%x mo %u len %zu]", g.ssn, g.bytes[0], u.qn, u.msn,
                    u.mo, d->payload.size);
    }
    return b;
  }

  void streamed_batch() {
    const unsigned n = static_cast<unsigned>(uni(1, kStreams));
    std::vector<unsigned> ss;
    for (unsigned s = 0; s < kStreams; ++s) ss.push_back(s);
    std::shuffle(ss.begin(), ss.end(), rng_);
    ss.resize(n);
    std::vector<std::vector<Seg>> per(kStreams);
    std::string desc = "streamed batch:";
    for (unsigned s : ss) {
      if (!streams_[s].enabled || streams_[s].errored ||
          env_.model().stream_state(static_cast<std::uint16_t>(s)) != rnic::model::StreamState::kNormal)
        recover(s);
      top_up(s);
    }
    env_.run(32);  // doorbells reach lookup
    for (unsigned s : ss) {
      std::vector<Seg> segs;
      const unsigned msgs = static_cast<unsigned>(uni(1, 4));
      for (unsigned m = 0; m < msgs && segs.size() < 40; ++m) {
        std::vector<unsigned> brk = chance(0.5) ? pick_breaks() : std::vector<unsigned>{};
        brk.erase(std::remove(brk.begin(), brk.end(), static_cast<unsigned>(Break::kToDisabledStream)), brk.end());
        bool div = !o_.use_model;
        for (unsigned b : brk) {
          ++st_.generated[b];
          div = div || timing_dependent(b);
        }
        if (div && !env_.diverged(static_cast<std::uint16_t>(s))) touch_all(s);
        auto msg = message(s, brk);
        if (msg_timing_ && !env_.diverged(static_cast<std::uint16_t>(s))) touch_all(s);
        desc += "\n        stream " + std::to_string(s) + " message breaks:";
        for (unsigned b : brk) desc += std::string(" ") + break_name(b);
        desc += " segments:";
        for (const auto& g : msg) desc += " " + seg_str(g);
        segs.insert(segs.end(), msg.begin(), msg.end());
        ++st_.messages;
      }
      // Shuffle in blocks of up to 8 (inside the DDP-SSN window).
      for (std::size_t i = 0; i < segs.size(); i += 8) {
        std::shuffle(segs.begin() + static_cast<std::ptrdiff_t>(i),
                     segs.begin() + static_cast<std::ptrdiff_t>(std::min(segs.size(), i + 8)), rng_);
      }
      desc += "\n        stream " + std::to_string(s) + " sent in the order (DDP-SSNs):";
      for (const auto& g : segs) desc += " " + std::to_string(g.ssn);
      per[s] = std::move(segs);
    }
    log(desc);
    std::vector<std::size_t> pos(kStreams, 0);
    const int abort_s = o_.abortive && chance(0.15) ? static_cast<int>(ss[uni(0, ss.size() - 1)]) : -1;
    std::uint64_t sent = 0;
    for (;;) {
      std::vector<unsigned> live;
      for (unsigned s : ss) {
        if (pos[s] < per[s].size()) live.push_back(s);
      }
      if (live.empty()) break;
      const unsigned s = live[uni(0, live.size() - 1)];
      send(per[s][pos[s]++]);
      ++sent;
      if (abort_s >= 0 && s == static_cast<unsigned>(abort_s) && pos[s] == per[s].size() / 2 + 1 &&
          streams_[s].enabled) {
        touch_all(s);
        teardown(s, true);
      }
      if (env_.src().pending() > 48) env_.run_until([&] { return env_.src().pending() < 16; }, 2000000);
    }
    env_.drain();
    env_.service();
    for (unsigned s : ss) {
      if (!streams_[s].enabled || streams_[s].errored || env_.diverged(static_cast<std::uint16_t>(s)) ||
          env_.model().stream_state(static_cast<std::uint16_t>(s)) != rnic::model::StreamState::kNormal)
        recover(s);
    }
  }

  Env& env_;
  HostileOptions o_;
  std::mt19937_64 rng_;
  HostileStats st_;
  std::vector<Chunk> chunks_;
  std::array<Stream, kStreams> streams_{};
  std::array<Tag, kTagSlots> tags_{};
  std::vector<std::uint32_t> dead_stags_;
  std::vector<std::uint8_t> own_, canary_;
  std::vector<Cqe> window_;
  std::vector<std::string> trail_;
  std::string first_trail_;
  bool msg_wraps_ = false;  // the last message() was untagged at an MSN of the 2^32 wrap
  bool scoreboard_seen_ = false;
  bool msg_timing_ = false;  // the last message()'s outcome may depend on timing when streamed
};

}  // namespace rnic::tb::test
