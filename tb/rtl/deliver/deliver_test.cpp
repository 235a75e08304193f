// SPDX-License-Identifier: Apache-2.0
// rnic_rx_deliver: in-order delivery (RFC 5041 5.3, 5.4; RFC 5043 DDP-SSN), message order (RFC 5041
// 4.3, 7.1 untagged #5: order errors), fences and the completion ring.
//
// Environment, one cycle at a time (inputs driven, clock low + eval, handshakes sampled, rising edge):
// - a driver presents rnic_dlv_t items with random gaps (valid held until accepted); an item may be
//   preceded by "place" segments: committed (commit_now_i counts them in their cycle), their AW a
//   few cycles later on the shared write channel, their B later still (b_segs_i, like the mux's
//   b_segs0_o, visible the cycle after);
// - an AXI write slave: random awready/wready, B in order with random latency, aw_count/b_count as
//   the write mux keeps them (AW handshakes and B handshakes, visible the cycle after); the data of
//   a completion write lands in host memory when its B is given;
// - a consume sink with random ready; a host that reads entries below cq_prod_o and returns them
//   through cq_cons_i; place's expected-MSN read port (a random or fixed queue each cycle);
// - a C++ reference of the delivery rules (per stream next_ssn, a window of slots, an expected MSN
//   per queue and the error bit) run at each item handover, which predicts every completion entry
//   (byte for byte, phase aside; order errors included), every fence marker, every consume event
//   (CONSUME, RESET, QSET, FAIL) and the dup/msg/order event counts.
// Checked continuously: each completion AW (length, address = entry prod mod 2^log2, ring not full
// and enable set when it was decided, b_segs_i at or past the commit count of its decision: no
// write into a buffer can follow the completion that hands it back; earlier completion writes need
// not be acknowledged), W beats (count, wlast, all strobes), cq_prod_o never ahead of the
// acknowledged entries, every entry read by the host equal to the prediction with the phase of its
// lap, every consume event, fence_done_o only for the next marker with every entry decided before
// it written and acknowledged.
// ThroughputBackToBack measures (and bounds) cycles with an always-ready slave and fixed B latency;
// BackToBackHazards sends dependent items of one stream in consecutive cycles.
// Seed: RNIC_TEST_SEED=<n>; waveform: RNIC_FST=<file> (use --gtest_filter to pick one test).
#include <verilated.h>

#include <verilated_fst_c.h>
#include "rnic/tb/rtl_structs.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/sim.hpp"

#include "Vrnic_rx_deliver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/wire/bytes.hpp"

namespace {

namespace hw = rnic::hw;
namespace wire = rnic::wire;

constexpr unsigned kDw = DLV_DW;
constexpr unsigned kBytes = kDw / 8;
constexpr unsigned kBeats = 64 / kBytes;
constexpr unsigned kStreams = DLV_STREAMS;
constexpr unsigned kWin = DLV_WINDOW;
constexpr unsigned kQns = DLV_QNS;

using Entry = std::array<std::uint8_t, 64>;

// ---- Verilator port access -----------------------------------------------------------------------

template <class T>
std::uint8_t get_byte(const T& sig, unsigned i) {
  if constexpr (std::is_integral_v<T>) {
    if (i >= sizeof(T)) return 0;
    return static_cast<std::uint8_t>(static_cast<std::uint64_t>(sig) >> (8 * i));
  } else {
    return static_cast<std::uint8_t>(sig.m_storage[i / 4] >> (8 * (i % 4)));
  }
}

std::string hex(const Entry& e) {
  std::ostringstream s;
  char buf[4];
  for (unsigned i = 0; i < e.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", e[i]);
    s << buf << ((i % 16 == 15) ? "\n" : " ");
  }
  return s.str();
}

// ---- items ---------------------------------------------------------------------------------------

// rnic_dlv_t, its kinds (rnic_dlv_kind_e) and the consume-channel kinds (RNIC_CONS_*): structs.def, the
// rows rtl/rnic_structs.svh is generated from (rnic/tb/rtl_structs.hpp).
namespace rtl = rnic::tb;
enum Kind : std::uint32_t {
  kPlaced = rtl::kPlaced,
  kError = rtl::kDlvError,
  kStreamReset = rtl::kDlvReset,
  kFence = rtl::kDlvFence,
  kQueueSet = rtl::kDlvQueueSet
};
using rtl::kConsConsume;
using rtl::kConsFail;
using rtl::kConsQset;
using rtl::kConsReset;

// QN bits deliver uses to select a queue (rnic_rx_deliver QnW); lookup only passes QN < NumQns.
constexpr unsigned log2_ceil(unsigned n) {
  unsigned l = 0;
  while ((1U << l) < n) ++l;
  return l;
}
constexpr unsigned kQnW = kQns > 1 ? log2_ceil(kQns) : 1;
constexpr unsigned qn_idx(std::uint32_t qn) { return qn & ((1U << kQnW) - 1); }

struct Item {
  Kind kind = kPlaced;
  std::uint16_t stream = 0;
  std::uint16_t ssn = 0;
  bool last = false;
  bool tagged = false;
  std::uint32_t stag_qn = 0;
  std::uint32_t msn = 0;
  std::uint32_t length = 0;
  std::uint64_t rsvd = 0;  // 40 bits
  std::uint8_t err_type = 0;
  std::uint8_t err_code = 0;
  std::array<std::uint8_t, 18> hdr{};
  bool at_ssn = false;  // ERROR: reported at its DDP-SSN position (rnic_dlv_t.err_at_ssn)
  // Testbench only: place segments committed (commit_now_i) right before the item, and their B
  // latency.
  unsigned pre_writes = 0;
  unsigned pre_lat = 0;
};

// The item as rnic_dlv_t on dlv_i (packed by rtl::put from structs.def's members).
template <class W>
void pack_item(W& w, const Item& it) {
  rtl::Dlv d;
  d.kind = static_cast<rtl::DlvKind>(it.kind);
  d.stream = it.stream;
  d.ssn = it.ssn;
  d.last = it.last;
  d.is_tagged = it.tagged;
  d.stag_qn = it.stag_qn;
  d.msn = it.msn;
  d.length = it.length;
  d.rsvd_ulp = it.rsvd;
  d.err_type = it.err_type;
  d.err_code = it.err_code;
  d.hdr_raw = it.hdr;
  d.err_at_ssn = it.at_ssn;
  rtl::put(w, d);
}

// ---- reference -----------------------------------------------------------------------------------

struct ExpEntry {
  Entry bytes{};           // phase bit clear
  std::uint32_t mark = 0;  // commit_now_i at the handover that decided it (a lower bound of the
                           // mark at the decision): b_segs_i must have reached it before the write
};

// A fence marker (FENCE, QUEUE_SET): fence_done_o once every earlier written entry is acknowledged.
struct ExpMarker {
  std::size_t entries_before = 0;
  std::uint32_t mark = 0;
};

struct ExpCons {
  std::uint16_t stream = 0;
  std::uint8_t qn = 0;
  unsigned kind = kConsConsume;
};

Entry delivery_entry(const Item& it, std::uint16_t ssn) {
  Entry e{};
  wire::store_le(e.data() + hw::kCQE_STREAM_OFFSET, it.stream, hw::kCQE_STREAM_BITS / 8);
  wire::store_le(e.data() + hw::kCQE_FLAGS_OFFSET, it.tagged ? hw::kCQE_FLAGS_TAGGED.mask() : 0, 1);
  wire::store_le(e.data() + hw::kCQE_SSN_OFFSET, ssn, hw::kCQE_SSN_BITS / 8);
  wire::store_le(e.data() + hw::kCQE_STAG_QN_OFFSET, it.stag_qn, hw::kCQE_STAG_QN_BITS / 8);
  if (it.tagged) {
    wire::store_le(e.data() + hw::kCQE_RSVD_ULP_OFFSET, it.rsvd & 0xFF, hw::kCQE_RSVD_ULP_BITS / 8);
  } else {
    wire::store_le(e.data() + hw::kCQE_MSN_OFFSET, it.msn, hw::kCQE_MSN_BITS / 8);
    wire::store_le(e.data() + hw::kCQE_LENGTH_OFFSET, it.length, hw::kCQE_LENGTH_BITS / 8);
    wire::store_le(e.data() + hw::kCQE_RSVD_ULP_OFFSET, it.rsvd & 0xFFFFFFFFFFULL, hw::kCQE_RSVD_ULP_BITS / 8);
  }
  return e;
}

Entry error_entry(const Item& it) {
  Entry e{};
  wire::store_le(e.data() + hw::kCQE_STREAM_OFFSET, it.stream, hw::kCQE_STREAM_BITS / 8);
  wire::store_le(e.data() + hw::kCQE_FLAGS_OFFSET,
                 hw::kCQE_FLAGS_ERROR.mask() | (it.tagged ? hw::kCQE_FLAGS_TAGGED.mask() : 0), 1);
  wire::store_le(e.data() + hw::kCQE_ERR_TYPE_OFFSET, it.err_type & 0xFU, 1);
  wire::store_le(e.data() + hw::kCQE_ERR_CODE_OFFSET, it.err_code, 1);
  wire::store_le(e.data() + hw::kCQE_SSN_OFFSET, it.ssn, hw::kCQE_SSN_BITS / 8);
  wire::store_le(e.data() + hw::kCQE_LENGTH_OFFSET, it.length, hw::kCQE_LENGTH_BITS / 8);
  for (unsigned i = 0; i < 18; ++i) e.at(hw::kCQE_HEADER_OFFSET + i) = it.hdr[i];
  return e;
}

// An order error found at delivery (RFC 5041 4.3, 5.3, 7.1 untagged #5; 7.2 type 2 code 3): FLAGS
// error and order, STAG_QN = QN, MSN, LENGTH 0, no header.
Entry order_entry(const Item& it, std::uint16_t ssn) {
  Entry e{};
  wire::store_le(e.data() + hw::kCQE_STREAM_OFFSET, it.stream, hw::kCQE_STREAM_BITS / 8);
  wire::store_le(e.data() + hw::kCQE_FLAGS_OFFSET, hw::kCQE_FLAGS_ERROR.mask() | hw::kCQE_FLAGS_ORDER.mask(), 1);
  wire::store_le(e.data() + hw::kCQE_ERR_TYPE_OFFSET, 0x2, 1);
  wire::store_le(e.data() + hw::kCQE_ERR_CODE_OFFSET, 0x03, 1);
  wire::store_le(e.data() + hw::kCQE_SSN_OFFSET, ssn, hw::kCQE_SSN_BITS / 8);
  wire::store_le(e.data() + hw::kCQE_STAG_QN_OFFSET, it.stag_qn, hw::kCQE_STAG_QN_BITS / 8);
  wire::store_le(e.data() + hw::kCQE_MSN_OFFSET, it.msn, hw::kCQE_MSN_BITS / 8);
  return e;
}

// The delivery rules, applied when an item is handed over.
class RefDeliver {
 public:
  RefDeliver() : st_(kStreams) {}

  void process(const Item& it, std::uint32_t mark) {
    switch (it.kind) {
      case kPlaced: {
        if (it.stream >= kStreams) {
          ++dups;
          return;
        }
        Stream& st = st_[it.stream];
        // A stream that failed at delivery is still sequenced (slots, next_ssn, duplicates) but
        // delivers nothing until STREAM_RESET (7.1).
        const auto d = static_cast<std::uint16_t>(it.ssn - st.next);
        if (d >= kWin || st.slots[it.ssn % kWin].filled) {
          ++dups;
          return;
        }
        st.slots[it.ssn % kWin] = Slot{true, it};
        release(it.stream, mark);
        return;
      }
      case kError: {
        // docs/rtl-architecture.md, "Errors in DDP-SSN order": with err_at_ssn the error is
        // sequenced like a segment (ahead of next: it waits in its slot, replacing a segment there;
        // its record keeps 16 bits of length, the segment's size); else, or behind next, at once.
        const unsigned d = it.stream < kStreams ? static_cast<std::uint16_t>(it.ssn - st_[it.stream].next) : 0U;
        if (!it.at_ssn || it.stream >= kStreams || d >= kWin) {
          report_error(it, mark);
        } else if (d == 0) {
          report_error(it, mark);
          ++st_[it.stream].next;
          release(it.stream, mark);
        } else {
          Item w = it;
          w.length &= 0xFFFFU;
          st_[it.stream].slots[it.ssn % kWin] = Slot{true, w};
        }
        return;
      }
      case kStreamReset:
        if (it.stream < kStreams) {
          Stream& st = st_[it.stream];
          const auto port = st.port;
          st = Stream{};
          // The expected-MSN copy on place's read port is not cleared by STREAM_RESET (only
          // QUEUE_SET and completions write it): unknown until the queue is set again.
          st.port = port;
          for (auto& p : st.port) p.known = false;
        }
        cons.push_back(ExpCons{it.stream, 0, kConsReset});
        return;
      case kFence:
        markers.push_back(ExpMarker{entries.size(), mark});
        return;
      case kQueueSet:
        if (it.stream < kStreams) {
          Stream& st = st_[it.stream];
          const unsigned q = qn_idx(it.stag_qn);
          if (q < kQns) st.exp[q] = it.msn;
          st.port[q] = Port{true, it.msn};
        }
        cons.push_back(ExpCons{it.stream, static_cast<std::uint8_t>(it.stag_qn), kConsQset});
        markers.push_back(ExpMarker{entries.size(), mark});
        return;
    }
  }

  // While slot next is filled: release it (a stream that failed is still sequenced but delivers
  // nothing until STREAM_RESET, 7.1); an error mark reports the stream's error.
  void release(std::uint16_t stream, std::uint32_t mark) {
    Stream& st = st_[stream];
    while (st.slots[st.next % kWin].filled) {
      Slot& sl = st.slots[st.next % kWin];
      const Item r = sl.it;
      const std::uint16_t ssn = st.next;
      sl.filled = false;
      ++st.next;
      if (st.err) continue;
      if (r.kind == kError) {
        report_error(r, mark);
        continue;
      }
      const unsigned q = qn_idx(r.stag_qn);
      if (!r.tagged && r.msn != (q < kQns ? st.exp[q] : 0U)) {
        add_entry(order_entry(r, ssn), mark);
        cons.push_back(ExpCons{stream, 0, kConsFail});
        ++order_errs;
        st.err = true;
        continue;
      }
      if (r.last) {
        add_entry(delivery_entry(r, ssn), mark);
        ++msgs;
        if (!r.tagged) {
          cons.push_back(ExpCons{stream, static_cast<std::uint8_t>(q), kConsConsume});
          if (q < kQns) st.exp[q] = r.msn + 1;  // mod 2^32 (RFC 5041 4.3)
          st.port[q] = Port{true, r.msn + 1};
        }
      }
    }
  }

  // The stream's first error (O's error bit): an error completion and a FAIL event; a later one
  // is not reported.
  void report_error(const Item& it, std::uint32_t mark) {
    if (it.stream < kStreams && st_[it.stream].err) return;
    add_entry(error_entry(it), mark);
    if (it.stream >= kStreams) return;  // no FAIL for a stream past the table
    cons.push_back(ExpCons{it.stream, 0, kConsFail});
    st_[it.stream].err = true;
  }

  unsigned next(unsigned s) const { return st_.at(s).next; }
  // The distance from next of the stream's error waiting in its slot (kWin: none).
  unsigned waiting_error(unsigned s) const {
    const Stream& st = st_.at(s);
    for (unsigned d = 0; d < kWin; ++d) {
      const Slot& sl = st.slots[(st.next + d) % kWin];
      if (sl.filled && sl.it.kind == kError) return d;
    }
    return kWin;
  }
  bool filled(unsigned s, std::uint16_t ssn) const { return st_.at(s).slots[ssn % kWin].filled; }
  bool failed(unsigned s) const { return st_.at(s).err; }
  std::uint32_t expected_msn(unsigned s, unsigned q) const { return st_.at(s).exp.at(q); }
  // What place's read port must show for (stream, QN bits); false: unknown (see kStreamReset).
  bool port(unsigned s, unsigned q, std::uint32_t& v) const {
    v = st_.at(s).port.at(q).value;
    return st_.at(s).port.at(q).known;
  }

  bool discard = false;           // the CQ is disabled: decided entries are dropped, not written
  std::vector<ExpEntry> entries;  // every completion written, in order
  std::vector<ExpMarker> markers;
  std::deque<ExpCons> cons;  // consume events not yet seen
  std::uint64_t dups = 0;
  std::uint64_t msgs = 0;
  std::uint64_t order_errs = 0;
  std::uint64_t discarded = 0;

 private:
  struct Slot {
    bool filled = false;
    Item it;
  };
  // place's copy of the expected MSNs is a RAM that reset does not clear (nor STREAM_RESET): known
  // once QUEUE_SET or a completion writes it.
  struct Port {
    bool known = false;
    std::uint32_t value = 0;
  };
  struct Stream {
    std::uint16_t next = 0;
    bool err = false;
    std::vector<Slot> slots = std::vector<Slot>(kWin);
    std::vector<std::uint32_t> exp = std::vector<std::uint32_t>(kQns, 0);
    std::vector<Port> port = std::vector<Port>(1U << kQnW);
  };
  void add_entry(const Entry& e, std::uint32_t mark) {
    if (discard) {
      ++discarded;
    } else {
      entries.push_back(ExpEntry{e, mark});
    }
  }
  std::vector<Stream> st_;
};

// Expected MSNs of the queues as a test sending messages in DDP-SSN order sees them: the MSN of the
// next message of (stream, QN), advanced by each message's last segment.
class MsnBook {
 public:
  std::uint32_t take(unsigned stream, std::uint32_t qn, bool last) {
    EXPECT_LT(qn_idx(qn), kQns) << "test bug: a QN lookup would refuse";
    std::uint32_t& v = exp_[{stream, qn_idx(qn)}];
    const std::uint32_t r = v;
    if (last) ++v;
    return r;
  }
  void set(unsigned stream, std::uint32_t qn, std::uint32_t msn) { exp_[{stream, qn_idx(qn)}] = msn; }
  void reset(unsigned stream) {
    for (auto it = exp_.begin(); it != exp_.end();) {
      it = it->first.first == stream ? exp_.erase(it) : std::next(it);
    }
  }

 private:
  std::map<std::pair<unsigned, unsigned>, std::uint32_t> exp_;
};

// ---- testbench -----------------------------------------------------------------------------------

struct Knobs {
  double p_valid = 0.7;  // driver presents the next item in a cycle
  double p_awready = 0.7;
  double p_wready = 0.7;
  double p_cons_ready = 0.7;
  double p_b = 0.8;      // a due B is given in a cycle
  unsigned b_lat = 8;    // B latency 1 + [0, b_lat] cycles after AW and data
  double p_fake = 0.05;  // background place segment committed in a cycle
  unsigned fake_lat = 20;
  double p_consume = 0.5;      // host reads one entry in a cycle
  bool consume = true;         // host reads at all
  unsigned b_min = 0;          // minimum B latency added (fixed latency: b_lat 0, b_min L)
  unsigned commit_aw_lat = 3;  // a committed place segment's AW comes 0..this cycles later
};

class Tb {
 public:
  explicit Tb(std::uint64_t seed) : rng_(seed), ctx_(std::make_unique<VerilatedContext>()) {
    const char* fst = std::getenv("RNIC_FST");
    const bool trace = fst != nullptr && *fst != '\0';
    if (trace) {
      Verilated::traceEverOn(true);
      ctx_->traceEverOn(true);
    }
    rnic::tb::make_current(ctx_.get());
    top_ = std::make_unique<Vrnic_rx_deliver>(ctx_.get(), "top");
    if (trace) {
      tfp_ = std::make_unique<VerilatedFstC>();
      top_->trace(tfp_.get(), 99);
      tfp_->open(fst);
    }
    reset();
  }
  Tb(const Tb&) = delete;
  Tb& operator=(const Tb&) = delete;
  ~Tb() {
    if (tfp_) tfp_->close();
    rnic::tb::make_current(ctx_.get());
    top_->final();
    top_.reset();
  }

  // Reset the module (and the environment: the write mux, place and host start over too), then wait
  // until the per-stream words are cleared (dlv_ready_o).
  void reset() {
    clear_env();
    drive_idle();
    top_->rst_ni = 0;
    for (int i = 0; i < 4; ++i) edge();
    top_->rst_ni = 1;
    std::uint64_t n = 0;
    for (;;) {
      drive_idle();
      top_->clk_i = 0;
      top_->eval();
      if (top_->dlv_ready_o) break;
      edge();
      if (++n > 2ULL * kStreams * kWin + 16) {
        fail("dlv_ready_o never rose after reset");
        break;
      }
    }
    init_cycles = n;
  }

  void clear_env() {
    const bool discard = ref.discard;
    ref = RefDeliver{};
    ref.discard = discard;
    handovers = dup_events = msg_events = order_events = fences_done = 0;
    aw_seq = 0;
    aw_total = consumed_total = acked_total = 0;
    entries_read.clear();
    cq_aw_cycles.clear();
    b_cycles.clear();
    handover_cycles.clear();
    prod_change_cycles.clear();
    fence_cycles.clear();
    port_log.clear();
    aw_count = b_count = 0;
    commit_total = b_segs = 0;
    host_cons = 0;
    queue_.clear();
    generator = nullptr;
    gen_done_ = false;
    staged_ = presenting_ = false;
    fake_pending_ = 0;
    commit_now_ = fake_aw_now_ = false;
    aw_wait_.clear();
    sched_commits_.clear();
    commit_after_handover.clear();
    stale_aw_ = false;
    outstanding_.clear();
    w_done_.clear();
    w_beat_ = 0;
    mem_.clear();
    acked_since_reset_ = 0;
    prev_prod_ = 0;
    prev_awvalid_ = false;
    prev_aw_hs_ = false;
  }

  // ---- stimulus ----
  void send(const Item& it) { queue_.push_back(it); }
  std::function<bool(Item&)> generator;  // called when the queue is empty; false: no more items

  // ---- run ----
  void step() {
    drive();
    top_->clk_i = 0;
    top_->eval();
    sample();
    edge();
    ++cycle;
  }
  void run(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n && !failed; ++i) step();
  }
  // Until every item is handed over and every effect of it is seen; false on timeout.
  bool run_until_idle(std::uint64_t max_cycles) {
    std::uint64_t idle = 0;
    for (std::uint64_t i = 0; i < max_cycles && !failed; ++i) {
      step();
      if (quiescent()) {
        if (++idle >= 4) return true;
      } else {
        idle = 0;
      }
    }
    if (!failed) {
      fail("timeout: queue " + std::to_string(queue_.size()) + ", entries " + std::to_string(consumed_total) + "/" +
           std::to_string(ref.entries.size()) + ", fences " + std::to_string(fences_done) + "/" +
           std::to_string(ref.markers.size()) + ", cons pending " + std::to_string(ref.cons.size()) +
           ", writes outstanding " + std::to_string(outstanding_.size()));
    }
    return false;
  }

  // Final checks at quiescence: event counts, producer index, every stream's next_ssn on the read
  // port, the expected MSNs on place's read port.
  void check_final() {
    EXPECT_EQ(dup_events, ref.dups) << "dup_event_o pulses";
    EXPECT_EQ(msg_events, ref.msgs) << "msg_event_o pulses";
    EXPECT_EQ(order_events, ref.order_errs) << "order_err_event_o pulses";
    EXPECT_EQ(consumed_total, ref.entries.size()) << "entries read by the host";
    EXPECT_EQ(fences_done, ref.markers.size()) << "fence_done_o pulses";
    EXPECT_EQ(top_->cq_prod_o, aw_seq) << "cq_prod_o";
    EXPECT_EQ(acked_total, aw_total) << "completion writes acknowledged";
    EXPECT_TRUE(ref.cons.empty()) << "consume events missing";
    check_read_port();
    check_exp_port();
  }

  void check_read_port() {
    const unsigned n = std::min<unsigned>(kStreams, 64);
    for (unsigned k = 0; k < n && !failed; ++k) {
      // All streams when few; else the first 48 and 16 spread over the rest.
      const unsigned s = (kStreams <= 64 || k < 48) ? k : 48 + (k - 48) * (kStreams - 48) / 16;
      probe_ = static_cast<std::uint16_t>(s);
      step();
      top_->clk_i = 0;
      top_->eval();
      EXPECT_EQ(unsigned{top_->ssn_rd_next_o}, ref.next(s)) << "ssn_rd_next_o of stream " << s;
    }
  }

  // The expected MSN of every queue of the first streams on place's read port (one cycle after the
  // address), where the reference knows it.
  void check_exp_port() {
    const unsigned n = std::min<unsigned>(kStreams, 8);
    for (unsigned s = 0; s < n && !failed; ++s) {
      for (unsigned q = 0; q < std::min(kQns, 1U << kQnW) && !failed; ++q) {
        exp_probe_ = {static_cast<std::uint16_t>(s), static_cast<std::uint8_t>(q)};
        exp_probe_fixed = true;
        step();
        top_->clk_i = 0;
        top_->eval();
        std::uint32_t want = 0;
        if (ref.port(s, q, want)) {
          EXPECT_EQ(top_->exp_rd_data_o, want) << "exp_rd_data_o of stream " << s << " qn " << q;
        }
      }
    }
    exp_probe_fixed = false;
  }

  // cq_reset_i pulse (with the regs' side effect: the consumer index is 0 again). A completion AW
  // offered then belongs to an entry already under way: it keeps its old address, is not counted.
  void cq_reset() {
    stale_aw_ = top_->awvalid_o;
    cq_reset_pulse_ = true;
    step();
    host_cons = 0;
    aw_seq = 0;
    acked_since_reset_ = 0;
    prev_prod_ = 0;
  }

  // Place segments not tied to an item, with their B latency.
  void fake_writes(unsigned n, unsigned lat) {
    fake_pending_ += n;
    fake_pending_lat_ = lat;
  }
  // Commits one place segment in the next cycle with that B latency (directed tests).
  void commit_next(unsigned lat) { fake_writes(1, lat); }

  // ---- configuration and observations ----
  Knobs knobs;
  std::uint64_t cq_base = 0x0000123456789A40ULL - 0x40ULL * 7;  // 64-byte aligned, high bits set
  unsigned cq_log2 = 3;
  bool cq_enable = true;
  std::uint32_t host_cons = 0;  // driven on cq_cons_i
  RefDeliver ref;
  std::mt19937_64 rng_;
  bool failed = false;
  std::uint64_t cycle = 0;
  std::uint64_t init_cycles = 0;
  std::uint64_t handovers = 0;
  std::uint64_t dup_events = 0;
  std::uint64_t msg_events = 0;
  std::uint64_t order_events = 0;
  std::uint64_t fences_done = 0;
  std::uint32_t aw_seq = 0;    // completion AWs since the last cq reset
  std::uint64_t aw_total = 0;  // completion AWs in all
  std::uint64_t consumed_total = 0;
  std::vector<Entry> entries_read;          // as read by the host, in order
  std::vector<std::uint64_t> cq_aw_cycles;  // cycle of each completion AW handshake
  std::vector<std::uint64_t> b_cycles;      // cycle of each B (any write), index = b_count before
  std::vector<std::uint64_t> handover_cycles;
  std::vector<std::uint64_t> prod_change_cycles;
  std::vector<std::uint64_t> fence_cycles;                        // cycles of fence_done_o
  std::vector<std::pair<std::uint64_t, std::uint32_t>> port_log;  // (cycle, exp_rd_data_o) while
                                                                  // exp_probe_fixed
  // Place segments to commit relative to the next handover: (cycles after it, B latency).
  std::vector<std::pair<unsigned, unsigned>> commit_after_handover;
  std::uint32_t aw_count = 0;
  std::uint32_t b_count = 0;
  std::uint32_t commit_total = 0;  // place segments committed before this cycle
  std::uint32_t b_segs = 0;        // place segments whose B has come (visible the cycle after)
  std::uint64_t acked_total = 0;   // completion entries acknowledged
  bool exp_probe_fixed = false;    // exp_rd_* hold exp_probe_ (else a random queue each cycle)

  void probe_exp(unsigned stream, unsigned qn) {
    exp_probe_ = {static_cast<std::uint16_t>(stream), static_cast<std::uint8_t>(qn)};
    exp_probe_fixed = true;
  }

  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
  std::uint64_t rnd(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
  }
  Vrnic_rx_deliver& top() { return *top_; }

  void fail(const std::string& msg) {
    if (fail_msgs_++ < 10) ADD_FAILURE() << "cycle " << cycle << ": " << msg;
    failed = true;
  }

 private:
  struct Write {
    bool fake = false;  // a place segment's write (its B counts in b_segs)
    bool data_done = false;
    std::uint64_t addr = 0;
    Entry data{};
    std::uint64_t ready = 0;  // cycle from which B may be given
  };
  struct AwWait {
    std::uint64_t due = 0;  // cycle from which its AW may go
    unsigned lat = 0;
  };

  std::uint32_t cq_size() const { return 1U << cq_log2; }

  bool quiescent() const {
    return queue_.empty() && !staged_ && !presenting_ && !gen_live() && fake_pending_ == 0 && aw_wait_.empty() &&
           sched_commits_.empty() && consumed_total == ref.entries.size() && fences_done == ref.markers.size() &&
           ref.cons.empty() && outstanding_.empty() && top_->dlv_ready_o && !top_->awvalid_o && !top_->wvalid_o &&
           !top_->cons_valid_o;
  }
  bool gen_live() const { return generator && !gen_done_; }

  void edge() {
    top_->clk_i = 0;
    top_->eval();
    if (tfp_) tfp_->dump(time_);
    time_ += 5;
    top_->clk_i = 1;
    top_->eval();
    if (tfp_) tfp_->dump(time_);
    time_ += 5;
  }

  void drive_idle() {
    top_->dlv_valid_i = 0;
    top_->awready_i = 0;
    top_->wready_i = 0;
    top_->cons_ready_i = 0;
    top_->cq_base_i = cq_base;
    top_->cq_log2_i = static_cast<std::uint8_t>(cq_log2);
    top_->cq_enable_i = cq_enable;
    top_->cq_reset_i = 0;
    top_->cq_cons_i = host_cons;
    top_->aw_count_i = aw_count;
    top_->b_count_i = b_count;
    top_->commit_now_i = commit_total;
    top_->b_segs_i = b_segs;
    top_->ssn_rd_stream_i = probe_;
    top_->exp_rd_stream_i = exp_probe_.first;
    top_->exp_rd_qn_i = exp_probe_.second;
  }

  void drive() {
    // place's expected-MSN read: a fixed queue, or a random one of the first streams.
    if (!exp_probe_fixed) {
      exp_probe_ = {static_cast<std::uint16_t>(rnd(0, std::min(kStreams, 8U) - 1)),
                    static_cast<std::uint8_t>(rnd(0, (1U << kQnW) - 1))};
    }
    drive_idle();
    // Driver: pick the next item; its place segments are committed first, then it is presented
    // until accepted (their AWs and Bs may come later).
    if (!presenting_ && !staged_) {
      Item it;
      bool have = false;
      if (!queue_.empty()) {
        it = queue_.front();
        queue_.pop_front();
        have = true;
      } else if (gen_live()) {
        have = generator(it);
        if (!have) gen_done_ = true;
      }
      if (have) {
        staged_ = true;
        cur_ = it;
        fake_pending_ += it.pre_writes;
        if (it.pre_writes > 0) fake_pending_lat_ = it.pre_lat;
      }
    }
    // place commits a segment (commit_now_i counts it in this very cycle); its AW goes later.
    commit_now_ = false;
    sched_now_ = false;
    unsigned lat = 0;
    const auto sched =
        std::find_if(sched_commits_.begin(), sched_commits_.end(), [&](const AwWait& w) { return w.due == cycle; });
    if (sched != sched_commits_.end()) {
      commit_now_ = true;
      sched_now_ = true;
      lat = sched->lat;
      sched_commits_.erase(sched);
    } else if (fake_pending_ > 0) {
      commit_now_ = true;
      lat = fake_pending_lat_;
    } else if (chance(knobs.p_fake)) {
      commit_now_ = true;
      lat = static_cast<unsigned>(rnd(0, knobs.fake_lat));
    }
    if (commit_now_) {
      top_->commit_now_i = commit_total + 1;
      aw_wait_.push_back(AwWait{cycle + rnd(0, knobs.commit_aw_lat), lat});
    }
    fake_aw_now_ = !aw_wait_.empty() && aw_wait_.front().due <= cycle;
    if (staged_ && fake_pending_ == 0 && !presenting_ && chance(knobs.p_valid)) presenting_ = true;
    if (presenting_) {
      top_->dlv_valid_i = 1;
      pack_item(top_->dlv_i, cur_);
    }
    // The mux gives the AW channel to place in a cycle with a place AW.
    top_->awready_i = !fake_aw_now_ && chance(knobs.p_awready);
    top_->wready_i = chance(knobs.p_wready);
    top_->cons_ready_i = chance(knobs.p_cons_ready);
    if (cq_reset_pulse_) {
      top_->cq_reset_i = 1;
      cq_reset_pulse_ = false;
    }
  }

  void sample() {
    auto& t = *top_;
    const std::uint32_t aw_next = aw_count;
    std::uint32_t aw_inc = 0;
    std::uint32_t b_inc = 0;
    std::uint32_t segs_inc = 0;
    const std::uint32_t commit_now = t.commit_now_i;

    // dlv handover: the reference sees the item with the segments committed up to this cycle.
    if (t.dlv_valid_i && t.dlv_ready_o) {
      ref.process(cur_, commit_now);
      handover_cycles.push_back(cycle);
      for (const auto& [after, lat] : commit_after_handover) sched_commits_.push_back({cycle + after, lat});
      commit_after_handover.clear();
      ++handovers;
      presenting_ = false;
      staged_ = false;
    }
    if (t.msg_event_o) ++msg_events;
    if (t.dup_event_o) ++dup_events;
    if (t.order_err_event_o) ++order_events;
    if (exp_probe_fixed) port_log.emplace_back(cycle, t.exp_rd_data_o);

    // fence_done_o (registered): the next marker, once every entry decided before it is written
    // and acknowledged and every segment committed before it acknowledged.
    if (t.fence_done_o) {
      fence_cycles.push_back(cycle);
      if (fences_done >= ref.markers.size()) {
        fail("fence_done_o without a fence pending");
      } else {
        const ExpMarker& m = ref.markers[fences_done];
        if (aw_total < m.entries_before || acked_total < m.entries_before) {
          fail("fence " + std::to_string(fences_done) + " done with " + std::to_string(acked_total) +
               " entries acknowledged, " + std::to_string(m.entries_before) + " decided before it");
        }
        if (static_cast<std::int32_t>(b_segs - m.mark) < 0) {
          fail("fence " + std::to_string(fences_done) + " done with b_segs " + std::to_string(b_segs) +
               " below its mark " + std::to_string(m.mark));
        }
        ++fences_done;
      }
    }

    // A completion AW first presented (entries follow back to back): decided in an earlier cycle,
    // so check the conditions it was decided under.
    if (t.awvalid_o && (!prev_awvalid_ || prev_aw_hs_)) {
      if (!prev_enable_) fail("completion write started while cq_enable_i was 0");
      if (static_cast<std::uint32_t>(aw_seq - prev_cons_) >= cq_size()) {
        fail("completion write started with the ring full");
      }
    }
    if (t.awvalid_o && t.awready_i) {
      if (unsigned{t.awlen_o} != kBeats - 1) fail("awlen " + std::to_string(t.awlen_o));
      const std::uint64_t want = cq_base + 64ULL * (aw_seq & (cq_size() - 1));
      if (stale_aw_) {
        stale_aw_ = false;
        --aw_seq;  // not an entry of the new ring
      } else {
        if (t.awaddr_o != want) fail("awaddr " + std::to_string(t.awaddr_o) + " want " + std::to_string(want));
        if (static_cast<std::uint32_t>(aw_seq - host_cons) >= cq_size()) fail("entry written into a full ring");
      }
      if (aw_total >= ref.entries.size()) {
        fail("completion write with no completion expected");
      } else {
        const std::uint32_t mark = ref.entries[aw_total].mark;
        if (static_cast<std::int32_t>(b_segs - mark) < 0) {
          fail("completion " + std::to_string(aw_total) + " written with b_segs " + std::to_string(b_segs) +
               " before the segments committed ahead of it (" + std::to_string(mark) + ") were acknowledged");
        }
      }
      Write w;
      w.addr = t.awaddr_o;
      if (!w_done_.empty()) {
        w.data = w_done_.front();
        w_done_.pop_front();
        w.data_done = true;
        w.ready = cycle + 1 + knobs.b_min + rnd(0, knobs.b_lat);
      }
      outstanding_.push_back(w);
      cq_aw_cycles.push_back(cycle);
      ++aw_seq;
      ++aw_total;
      ++aw_inc;
    } else if (fake_aw_now_) {
      Write w;
      w.fake = true;
      w.data_done = true;
      w.ready = cycle + 1 + aw_wait_.front().lat;
      aw_wait_.pop_front();
      outstanding_.push_back(w);
      ++aw_inc;
    }
    if (fake_aw_now_ && t.awvalid_o && t.awready_i) fail("testbench: two AWs in one cycle");
    if (commit_now_) {
      ++commit_total;
      if (fake_pending_ > 0 && !sched_now_) --fake_pending_;
    }

    // W beats of a completion.
    if (t.wvalid_o && t.wready_i) {
      for (unsigned i = 0; i < kBytes / 8; ++i) {
        if (get_byte(t.wstrb_o, i) != 0xFF) fail("wstrb not all ones");
      }
      for (unsigned i = 0; i < kBytes; ++i) w_buf_.at(w_beat_ * kBytes + i) = get_byte(t.wdata_o, i);
      const bool want_last = w_beat_ == kBeats - 1;
      if (static_cast<bool>(t.wlast_o) != want_last) fail("wlast on beat " + std::to_string(w_beat_));
      if (++w_beat_ == kBeats) {
        w_beat_ = 0;
        bool matched = false;
        for (auto& w : outstanding_) {
          if (!w.fake && !w.data_done) {
            w.data = w_buf_;
            w.data_done = true;
            w.ready = cycle + 1 + knobs.b_min + rnd(0, knobs.b_lat);
            matched = true;
            break;
          }
        }
        if (!matched) w_done_.push_back(w_buf_);
      }
    }

    // B, in order.
    if (!outstanding_.empty() && outstanding_.front().data_done && cycle >= outstanding_.front().ready &&
        chance(knobs.p_b)) {
      const Write w = outstanding_.front();
      outstanding_.pop_front();
      if (!w.fake) {
        mem_[w.addr] = w.data;
        ++acked_since_reset_;
        ++acked_total;
      } else {
        ++segs_inc;
      }
      b_cycles.push_back(cycle);
      ++b_inc;
    }

    // Consume events.
    if (t.cons_valid_o && t.cons_ready_i) {
      if (ref.cons.empty()) {
        fail("unexpected consume event (stream " + std::to_string(t.cons_stream_o) + ")");
      } else {
        const ExpCons e = ref.cons.front();
        ref.cons.pop_front();
        if (t.cons_stream_o != e.stream || unsigned{t.cons_kind_o} != e.kind || t.cons_qn_o != e.qn) {
          fail("consume event stream " + std::to_string(t.cons_stream_o) + " qn " + std::to_string(t.cons_qn_o) +
               " kind " + std::to_string(t.cons_kind_o) + ", want stream " + std::to_string(e.stream) + " qn " +
               std::to_string(e.qn) + " kind " + std::to_string(e.kind));
        }
      }
    }

    // Producer index: advances by one, only over acknowledged entries.
    const std::uint32_t prod = t.cq_prod_o;
    if (prod != prev_prod_) {
      if (prod != prev_prod_ + 1) fail("cq_prod_o jumped from " + std::to_string(prev_prod_));
      prod_change_cycles.push_back(cycle);
    }
    if (static_cast<std::int32_t>(prod - acked_since_reset_) > 0) {
      fail("cq_prod_o " + std::to_string(prod) + " ahead of acknowledged entries " +
           std::to_string(acked_since_reset_));
    }
    prev_prod_ = prod;

    // Host: read the entry at cq_cons when the producer is past it.
    if (knobs.consume && host_cons != prod && chance(knobs.p_consume)) {
      const std::uint64_t addr = cq_base + 64ULL * (host_cons & (cq_size() - 1));
      auto it = mem_.find(addr);
      if (it == mem_.end() || consumed_total >= ref.entries.size()) {
        fail("host: no entry at index " + std::to_string(host_cons));
      } else {
        Entry want = ref.entries[consumed_total].bytes;
        const bool phase = ((host_cons >> cq_log2) & 1U) == 0;
        want[hw::kCQE_FLAGS_OFFSET] = static_cast<std::uint8_t>(want[hw::kCQE_FLAGS_OFFSET] | (phase ? 1 : 0));
        if (it->second != want) {
          fail("entry " + std::to_string(consumed_total) + " (index " + std::to_string(host_cons) + "):\n" +
               hex(it->second) + "want\n" + hex(want));
        }
        entries_read.push_back(it->second);
        ++consumed_total;
        ++host_cons;
      }
    }

    prev_awvalid_ = t.awvalid_o;
    prev_aw_hs_ = t.awvalid_o && t.awready_i;
    prev_enable_ = t.cq_enable_i;
    prev_cons_ = t.cq_cons_i;
    aw_count = aw_next + aw_inc;
    b_count += b_inc;
    b_segs += segs_inc;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vrnic_rx_deliver> top_;
  std::unique_ptr<VerilatedFstC> tfp_;
  std::uint64_t time_ = 0;
  unsigned fail_msgs_ = 0;

  std::deque<Item> queue_;
  bool gen_done_ = false;
  Item cur_;
  bool staged_ = false;
  bool presenting_ = false;
  unsigned fake_pending_ = 0;
  unsigned fake_pending_lat_ = 0;
  bool commit_now_ = false;
  bool sched_now_ = false;  // this cycle's commit is a scheduled one
  bool fake_aw_now_ = false;
  std::vector<AwWait> sched_commits_;  // commits at fixed cycles (due) with their B latency
  std::deque<AwWait> aw_wait_;         // committed place segments whose AW has not gone
  bool cq_reset_pulse_ = false;
  bool stale_aw_ = false;  // the next completion AW was under way at cq_reset()
  std::uint16_t probe_ = 0;
  std::pair<std::uint16_t, std::uint8_t> exp_probe_{0, 0};

  std::deque<Write> outstanding_;
  std::deque<Entry> w_done_;  // W bursts complete before their AW
  Entry w_buf_{};
  unsigned w_beat_ = 0;
  std::map<std::uint64_t, Entry> mem_;
  std::uint32_t acked_since_reset_ = 0;
  std::uint32_t prev_prod_ = 0;
  bool prev_awvalid_ = false;
  bool prev_aw_hs_ = false;
  bool prev_enable_ = true;
  std::uint32_t prev_cons_ = 0;
};

// ---- random traffic --------------------------------------------------------------------------------

// Messages of consecutive DDP-SSNs per stream, sent in random order within the window, mixed with
// duplicates (in-window filled slots, behind the delivery point, past the window), errors, fences
// and stream resets (each followed by a QUEUE_SET of every queue, first MSNs near the 2^32 wrap
// too). Untagged messages carry the MSNs of their queue in DDP-SSN order (RFC 5041 4.3); with
// p_order_err a message breaks that (MSN repeat, skip, an early L, an MSN change inside the message).
class Traffic {
 public:
  struct Mix {
    unsigned streams = 4;   // active streams 0..streams-1
    unsigned max_segs = 4;  // segments per message
    double p_error = 0.03;
    double p_reset = 0.01;
    double p_dup = 0.08;
    double p_out_of_range = 0.0;  // PLACED / STREAM_RESET to a stream >= NumStreams
    double p_pre_writes = 0.2;    // place segments committed right before an item
    unsigned pre_lat = 40;
    std::uint64_t items = 2000;
    double p_in_order = 0.0;  // send the stream's lowest pending DDP-SSN (else a random one)
    double p_fence = 0.0;
    double p_order_err = 0.0;  // an untagged message breaking the MSN order
  };

  Traffic(Tb& tb, Mix mix) : tb_(tb), mix_(mix), gen_(kStreams) {}

  bool next(Item& it) {
    if (!forced_.empty()) {
      it = forced_.front();
      forced_.pop_front();
      return true;
    }
    if (sent_ >= mix_.items) return false;
    ++sent_;
    const double r = std::uniform_real_distribution<double>(0.0, 1.0)(tb_.rng_);
    const auto s = static_cast<std::uint16_t>(tb_.rnd(0, mix_.streams - 1));
    double c = mix_.p_error;
    if (r < c) {
      it = random_fields(s, static_cast<std::uint16_t>(tb_.rnd(0, 0xFFFF)));
      it.kind = kError;
      it.stream = tb_.chance(0.1) ? static_cast<std::uint16_t>(tb_.rnd(0, 0xFFFF)) : s;
      // Half of them at their DDP-SSN position, mostly in the window (segment-sized lengths). As
      // validate sends them: a stream's next one is before the one waiting (if any).
      if (tb_.chance(0.5)) {
        it.at_ssn = true;
        it.length &= 0xFFFFU;
        if (it.stream < kStreams) {
          const unsigned wait = tb_.ref.waiting_error(it.stream);
          if (wait < kWin) {
            it.ssn = static_cast<std::uint16_t>(tb_.ref.next(it.stream) + tb_.rnd(0, wait - 1));
          } else if (tb_.chance(0.8)) {
            it.ssn = static_cast<std::uint16_t>(tb_.ref.next(it.stream) + tb_.rnd(0, kWin - 1));
          }
        }
      }
    } else if (r < (c += mix_.p_reset) || (tb_.ref.failed(s) && tb_.chance(0.2))) {
      it = reset_stream(s);  // a failed stream is re-enabled sooner or later
    } else if (r < (c += mix_.p_out_of_range)) {
      it = random_fields(static_cast<std::uint16_t>(tb_.rnd(kStreams, 0xFFFF)),
                         static_cast<std::uint16_t>(tb_.rnd(0, 0xFFFF)));
      const unsigned k = static_cast<unsigned>(tb_.rnd(0, 9));
      if (k < 3) it.kind = kStreamReset;
      if (k == 3) it.kind = kQueueSet;
    } else if (r < (c += mix_.p_fence)) {
      it = Item{};
      it.kind = kFence;
      it.stream = static_cast<std::uint16_t>(tb_.rnd(0, 0xFFFF));
    } else if (r < (c += mix_.p_dup)) {
      it = duplicate(s);
    } else {
      it = segment(s);
    }
    if (tb_.chance(mix_.p_pre_writes)) {
      it.pre_writes = static_cast<unsigned>(tb_.rnd(1, 3));
      it.pre_lat = static_cast<unsigned>(tb_.rnd(0, mix_.pre_lat));
    }
    return true;
  }

  // Start stream s's new messages at ssn (the reference must be there too).
  void set_next_new(unsigned s, std::uint16_t ssn) { gen_[s].next_new = ssn; }

 private:
  struct Gen {
    std::uint16_t next_new = 0;
    std::vector<Item> pending;                                             // generated, not sent
    std::vector<std::uint32_t> msn = std::vector<std::uint32_t>(kQns, 0);  // next message's MSN
  };

  // STREAM_RESET (STREAM_ENABLE), then a QUEUE_SET (QUEUE_CONFIG) of every queue of the stream.
  Item reset_stream(std::uint16_t s) {
    Item it;
    it.kind = kStreamReset;
    it.stream = s;
    gen_[s] = Gen{};
    for (unsigned q = 0; q < kQns; ++q) {
      Item qs;
      qs.kind = kQueueSet;
      qs.stream = s;
      qs.stag_qn = q;
      qs.msn = tb_.chance(0.3) ? static_cast<std::uint32_t>(0xFFFFFFFFULL - tb_.rnd(0, 3))
                               : static_cast<std::uint32_t>(tb_.rnd(0, 0xFFFFFFFF));
      gen_[s].msn[q] = qs.msn;
      forced_.push_back(qs);
    }
    return it;
  }

  Item random_fields(std::uint16_t s, std::uint16_t ssn) {
    Item it;
    it.stream = s;
    it.ssn = ssn;
    it.last = tb_.chance(0.5);
    it.tagged = tb_.chance(0.5);
    it.stag_qn = static_cast<std::uint32_t>(tb_.rnd(0, 0xFFFFFFFF));
    it.msn = static_cast<std::uint32_t>(tb_.rnd(0, 0xFFFFFFFF));
    it.length = static_cast<std::uint32_t>(tb_.rnd(0, 0xFFFFFFFF));
    it.rsvd = tb_.rnd(0, 0xFFFFFFFFFFULL);
    it.err_type = static_cast<std::uint8_t>(tb_.rnd(0, 15));
    it.err_code = static_cast<std::uint8_t>(tb_.rnd(0, 255));
    for (auto& b : it.hdr) b = static_cast<std::uint8_t>(tb_.rnd(0, 255));
    return it;
  }

  void new_message(unsigned s) {
    Gen& g = gen_[s];
    const unsigned n = static_cast<unsigned>(tb_.rnd(1, mix_.max_segs));
    const bool tagged = tb_.chance(0.5);
    const auto q = static_cast<unsigned>(tb_.rnd(0, kQns - 1));
    std::uint32_t msn = g.msn[q];
    // Broken order (RFC 5041 4.3): 0 repeat, 1 skip, 2 early L, 3 MSN change inside the message.
    const int bad = !tagged && tb_.chance(mix_.p_order_err) ? static_cast<int>(tb_.rnd(0, 3)) : -1;
    if (bad == 0) msn -= static_cast<std::uint32_t>(tb_.rnd(1, 3));
    if (bad == 1) msn += static_cast<std::uint32_t>(tb_.rnd(1, 3));
    const unsigned cut = static_cast<unsigned>(tb_.rnd(0, n - 1));
    for (unsigned i = 0; i < n; ++i) {
      Item it = random_fields(static_cast<std::uint16_t>(s), g.next_new++);
      it.kind = kPlaced;
      it.tagged = tagged;
      it.last = i + 1 == n || (bad == 2 && i == cut);
      if (!tagged) {
        it.stag_qn = q;
        it.msn = msn + (bad == 3 && i > cut ? 1U : 0U);
      }
      g.pending.push_back(it);
    }
    if (!tagged && bad != 0 && bad != 1) ++g.msn[q];
    if (!tagged && bad == 1) g.msn[q] = msn + 1;
  }

  Item segment(std::uint16_t s) {
    Gen& g = gen_[s];
    const auto nx = static_cast<std::uint16_t>(tb_.ref.next(s));
    // Keep about a window's worth generated ahead of the delivery point.
    while (g.pending.empty() || static_cast<std::uint16_t>(g.next_new - nx) < kWin) {
      if (!g.pending.empty() && tb_.chance(0.5)) break;
      new_message(s);
    }
    std::vector<std::size_t> cand;
    for (std::size_t i = 0; i < g.pending.size(); ++i) {
      if (static_cast<std::uint16_t>(g.pending[i].ssn - nx) < kWin) cand.push_back(i);
    }
    if (cand.empty()) {
      // A failed stream does not advance: the driver enables it again.
      if (tb_.ref.failed(s)) return reset_stream(s);
      ADD_FAILURE() << "traffic: nothing in the window of stream " << s;
      return duplicate(s);
    }
    std::size_t k = cand[tb_.rnd(0, cand.size() - 1)];
    if (tb_.chance(mix_.p_in_order)) {
      for (const std::size_t i : cand) {
        if (static_cast<std::uint16_t>(g.pending[i].ssn - nx) < static_cast<std::uint16_t>(g.pending[k].ssn - nx)) {
          k = i;
        }
      }
    }
    Item it = g.pending[k];
    g.pending.erase(g.pending.begin() + static_cast<std::ptrdiff_t>(k));
    return it;
  }

  Item duplicate(std::uint16_t s) {
    const auto nx = static_cast<std::uint16_t>(tb_.ref.next(s));
    Item it = random_fields(s, 0);
    it.kind = kPlaced;
    const unsigned how = static_cast<unsigned>(tb_.rnd(0, 2));
    std::vector<std::uint16_t> filled;
    for (unsigned d = 0; d < kWin; ++d) {
      const auto ssn = static_cast<std::uint16_t>(nx + d);
      if (tb_.ref.filled(s, ssn)) filled.push_back(ssn);
    }
    if (how == 0 && !filled.empty()) {
      it.ssn = filled[tb_.rnd(0, filled.size() - 1)];  // placed again
    } else if (how <= 1) {
      it.ssn = static_cast<std::uint16_t>(nx - 1 - tb_.rnd(0, 2 * kWin));  // already delivered
    } else {
      it.ssn = static_cast<std::uint16_t>(nx + kWin + tb_.rnd(0, 2 * kWin));  // past the window
    }
    return it;
  }

  Tb& tb_;
  Mix mix_;
  std::vector<Gen> gen_;
  std::deque<Item> forced_;  // QUEUE_SETs after a reset
  std::uint64_t sent_ = 0;
};

Item placed(unsigned stream, unsigned ssn, bool last, bool tagged, std::uint32_t stag_qn = 0, std::uint32_t msn = 0,
            std::uint32_t length = 0, std::uint64_t rsvd = 0) {
  Item it;
  it.kind = kPlaced;
  it.stream = static_cast<std::uint16_t>(stream);
  it.ssn = static_cast<std::uint16_t>(ssn);
  it.last = last;
  it.tagged = tagged;
  it.stag_qn = stag_qn;
  it.msn = msn;
  it.length = length;
  it.rsvd = rsvd;
  return it;
}

unsigned entry_ssn(const Entry& e) { return static_cast<unsigned>(wire::load_le(e.data() + 6, 2)); }

class Deliver : public ::testing::Test {
 protected:
  // A PLACED segment of a message sent in DDP-SSN order: untagged ones carry their queue's MSN.
  Item msg(unsigned stream, unsigned ssn, bool last, bool tagged, std::uint32_t stag_qn, std::uint32_t length = 0,
           std::uint64_t rsvd = 0) {
    const std::uint32_t msn = tagged ? 0x5A5A5A5AU : book_.take(stream, stag_qn, last);
    return placed(stream, ssn, last, tagged, stag_qn, msn, length, rsvd);
  }
  static Item queue_set(unsigned stream, std::uint32_t qn, std::uint32_t first_msn) {
    Item it;
    it.kind = kQueueSet;
    it.stream = static_cast<std::uint16_t>(stream);
    it.stag_qn = qn;
    it.msn = first_msn;
    return it;
  }
  static Item stream_reset(unsigned stream) {
    Item it;
    it.kind = kStreamReset;
    it.stream = static_cast<std::uint16_t>(stream);
    return it;
  }
  static Item fence(std::uint16_t tag) {
    Item it;
    it.kind = kFence;
    it.stream = tag;
    return it;
  }
  MsnBook book_;
  void SetUp() override {
    seed_ = rnic::tb::random_test_seed();
    tb_ = std::make_unique<Tb>(seed_);
    ASSERT_FALSE(tb_->failed);
  }
  Tb& tb() { return *tb_; }
  void finish(std::uint64_t max_cycles) {
    ASSERT_TRUE(tb().run_until_idle(max_cycles));
    tb().check_final();
  }
  std::uint64_t seed_ = 0;
  std::unique_ptr<Tb> tb_;
};

// ---- tests ---------------------------------------------------------------------------------------

TEST_F(Deliver, ResetClearsStateAndReadPort) {
  // Scribble over the state, reset the module again: every slot empty and next_ssn 0.
  Traffic tr(tb(), Traffic::Mix{std::min(kStreams, 4U), 3, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 200});
  tb().generator = [&tr](Item& it) { return tr.next(it); };
  tb().run(1500);
  ASSERT_FALSE(tb().failed);
  // Reset in the middle of traffic (slots filled, next_ssn advanced): the module and the reference
  // start over.
  tb().reset();
  // One write per stream clears it (next_ssn and every filled bit), not one per slot.
  EXPECT_GE(tb().init_cycles, std::uint64_t{kStreams});
  EXPECT_LE(tb().init_cycles, std::uint64_t{kStreams} + 4);
  std::printf("[   INFO   ] %llu cycles from reset to dlv_ready_o\n",
              static_cast<unsigned long long>(tb().init_cycles));
  tb().check_read_port();
  // Every SSN of the window is new again (a stale filled slot would be a duplicate).
  for (unsigned s = 0; s < std::min(kStreams, 4U); ++s) {
    for (unsigned ssn = kWin; ssn-- > 1;) tb().send(placed(s, ssn, ssn == kWin - 1, true, ssn));
  }
  ASSERT_TRUE(tb().run_until_idle(20000));
  EXPECT_EQ(tb().dup_events, 0U);
  EXPECT_EQ(tb().entries_read.size(), 0U);
  for (unsigned s = 0; s < std::min(kStreams, 4U); ++s) tb().send(placed(s, 0, false, true));
  finish(20000);
  EXPECT_EQ(tb().dup_events, 0U);
  EXPECT_EQ(tb().entries_read.size(), std::min(kStreams, 4U));
}

TEST_F(Deliver, EntryLayoutBytes) {
  // Byte offsets written out by hand from hw.def (not through hw.hpp).
  tb().cq_log2 = 4;
  const unsigned s = kStreams - 1;
  tb().send(queue_set(s, 0xA1B2C3D4, 0x11223344));  // the queue's expected MSN
  tb().send(placed(s, 0, true, false, 0xA1B2C3D4, 0x11223344, 0x55667788, 0xF0E1D2C3B4ULL));
  tb().send(placed(s, 1, true, true, 0x0BADF00D, 0x99999999, 0x77777777, 0xAABBCCDDEEULL));
  Item err;
  err.kind = kError;
  err.stream = static_cast<std::uint16_t>(s);
  err.ssn = 0xBEEF;
  err.tagged = true;
  err.err_type = 0x3;
  err.err_code = 0x05;
  err.length = 0xCAFEBABE;
  err.stag_qn = 0x12345678;
  err.msn = 0x9ABCDEF0;
  err.rsvd = 0x1122334455ULL;
  for (unsigned i = 0; i < 18; ++i) err.hdr[i] = static_cast<std::uint8_t>(0x40 + i);
  tb().send(err);
  tb().send(stream_reset(static_cast<std::uint16_t>(s)));  // a stream reports one error
  err.tagged = false;
  err.ssn = 0x0102;
  tb().send(err);
  finish(5000);
  ASSERT_EQ(tb().entries_read.size(), 4U);
  const auto& u = tb().entries_read[0];
  const std::array<std::uint8_t, 32> want_u = {static_cast<std::uint8_t>(s),
                                               static_cast<std::uint8_t>(s >> 8),
                                               0x01,
                                               0,
                                               0,
                                               0,
                                               0x00,
                                               0x00,
                                               0xD4,
                                               0xC3,
                                               0xB2,
                                               0xA1,
                                               0x44,
                                               0x33,
                                               0x22,
                                               0x11,
                                               0x88,
                                               0x77,
                                               0x66,
                                               0x55,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0xB4,
                                               0xC3,
                                               0xD2,
                                               0xE1,
                                               0xF0,
                                               0,
                                               0,
                                               0};
  for (unsigned i = 0; i < 64; ++i) EXPECT_EQ(u[i], i < 32 ? want_u[i] : 0) << "untagged byte " << i;
  const auto& t = tb().entries_read[1];
  const std::array<std::uint8_t, 32> want_t = {static_cast<std::uint8_t>(s),
                                               static_cast<std::uint8_t>(s >> 8),
                                               0x05,
                                               0,
                                               0,
                                               0,
                                               0x01,
                                               0x00,
                                               0x0D,
                                               0xF0,
                                               0xAD,
                                               0x0B,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0xEE,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0,
                                               0};
  for (unsigned i = 0; i < 64; ++i) EXPECT_EQ(t[i], i < 32 ? want_t[i] : 0) << "tagged byte " << i;
  for (unsigned k = 2; k < 4; ++k) {
    const auto& e = tb().entries_read[k];
    std::array<std::uint8_t, 64> want{};
    want[0] = static_cast<std::uint8_t>(s);
    want[1] = static_cast<std::uint8_t>(s >> 8);
    want[2] = k == 2 ? 0x07 : 0x03;
    want[3] = 0x03;
    want[4] = 0x05;
    want[6] = k == 2 ? 0xEF : 0x02;
    want[7] = k == 2 ? 0xBE : 0x01;
    want[16] = 0xBE;
    want[17] = 0xBA;
    want[18] = 0xFE;
    want[19] = 0xCA;
    for (unsigned i = 0; i < 18; ++i) want[32 + i] = static_cast<std::uint8_t>(0x40 + i);
    for (unsigned i = 0; i < 64; ++i) EXPECT_EQ(e[i], want[i]) << "error entry " << k << " byte " << i;
  }
}

TEST_F(Deliver, InOrderMultiSegmentMessages) {
  tb().knobs.p_fake = 0.0;
  const unsigned streams = std::min(kStreams, 2U);
  std::uint16_t ssn[2] = {0, 0};
  for (unsigned m = 0; m < 20; ++m) {
    const unsigned s = m % streams;
    const unsigned n = 1 + m % 5;
    for (unsigned i = 0; i < n; ++i) {
      tb().send(msg(s, ssn[s]++, i + 1 == n, (m & 2) != 0, (100 + m) % kQns, 10 * m, m));
    }
  }
  finish(20000);
  ASSERT_EQ(tb().entries_read.size(), 20U);
  EXPECT_EQ(tb().ref.dups, 0U);
}

TEST_F(Deliver, WindowEdge) {
  // Stream 0 at next_ssn 0: d = W-1 is accepted, d = W is a duplicate.
  tb().send(placed(0, kWin - 1, true, true, 0xAAAA));
  tb().send(placed(0, kWin, true, true, 0xBBBB));  // d = W: dup
  for (unsigned ssn = kWin - 1; ssn-- > 0;) tb().send(placed(0, ssn, false, false));
  ASSERT_TRUE(tb().run_until_idle(20000));
  ASSERT_EQ(tb().entries_read.size(), 1U);
  EXPECT_EQ(entry_ssn(tb().entries_read[0]), kWin - 1);
  EXPECT_EQ(tb().dup_events, 1U);
  // Now next_ssn = W: the same SSN W is accepted and delivered; W-1 is behind (dup).
  tb().send(placed(0, kWin, true, true, 0xBBBB));
  tb().send(placed(0, kWin - 1, true, true, 0xCCCC));
  tb().send(placed(0, 2 * kWin, true, true, 0xDDDD));      // d = W-1 again: accepted, waits
  tb().send(placed(0, 2 * kWin + 1, true, true, 0xEEEE));  // d = W: dup
  finish(20000);
  ASSERT_EQ(tb().entries_read.size(), 2U);
  EXPECT_EQ(entry_ssn(tb().entries_read[1]), kWin);
  EXPECT_EQ(tb().dup_events, 3U);
  EXPECT_EQ(tb().ref.next(0), kWin + 1);
}

TEST_F(Deliver, DuplicatesAreNotDeliveredTwice) {
  const unsigned s = kStreams > 1 ? 1 : 0;
  // Out of order, each segment sent twice (the second time in its filled slot or after delivery);
  // the copies differ in their length field. Messages MSN 0 and 1 of QN 0.
  tb().send(placed(s, 1, true, false, 0, 1, 30));
  tb().send(placed(s, 1, true, false, 0, 1, 31));  // filled: dup
  tb().send(placed(s, 0, true, false, 0, 0, 32));  // delivers 0 and 1
  tb().send(placed(s, 0, true, false, 0, 0, 33));  // behind: dup
  tb().send(placed(s, 1, true, false, 0, 1, 34));  // behind: dup
  finish(10000);
  ASSERT_EQ(tb().entries_read.size(), 2U);
  EXPECT_EQ(tb().dup_events, 3U);
  EXPECT_EQ(wire::load_le(tb().entries_read[0].data() + hw::kCQE_LENGTH_OFFSET, 4), 32U);  // the first copy's fields
  EXPECT_EQ(wire::load_le(tb().entries_read[1].data() + hw::kCQE_LENGTH_OFFSET, 4), 30U);
}

TEST_F(Deliver, SsnWrap) {
  // One stream through 0xFFFF -> 0: in order up to 0xFFF0 (a message every 4096 segments), then
  // random order, duplicates and messages across the wrap.
  tb().knobs = Knobs{1.0, 1.0, 1.0, 1.0, 1.0, 2, 0.0, 0, 1.0, true};
  const unsigned stop = 0xFFF0;
  for (unsigned ssn = 0; ssn < stop; ++ssn) {
    tb().send(placed(0, ssn, (ssn % 4096) == 4095, true, ssn));
  }
  ASSERT_TRUE(tb().run_until_idle(20ULL * stop));
  ASSERT_EQ(tb().ref.next(0), stop);
  tb().knobs = Knobs{};
  Traffic::Mix mix;
  mix.streams = 1;
  mix.max_segs = 5;
  mix.p_reset = 0.0;
  mix.p_error = 0.0;  // an error ends the stream's session (it reports one): no wrap then
  mix.items = 400;
  Traffic tr(tb(), mix);
  tr.set_next_new(0, static_cast<std::uint16_t>(stop));
  tb().generator = [&tr](Item& it) { return tr.next(it); };
  finish(200000);
  EXPECT_LT(tb().ref.next(0), 0x8000U) << "did not wrap";
  // Some delivery crossed the wrap point.
  bool before = false;
  bool after = false;
  for (const auto& e : tb().entries_read) {
    if ((wire::load_le(e.data() + 2, 1) & 2) != 0) continue;
    before = before || entry_ssn(e) >= stop;
    after = after || entry_ssn(e) < 0x100;
  }
  EXPECT_TRUE(before && after);
}

TEST_F(Deliver, ErrorCompletionsInterleaved) {
  tb().cq_log2 = 2;
  Item e;
  e.kind = kError;
  for (unsigned i = 0; i < 12; ++i) {
    e.stream = static_cast<std::uint16_t>(kStreams + i);  // no stream of the table: each one reported
    e.ssn = static_cast<std::uint16_t>(0xFFFF - i);
    e.tagged = (i & 1) != 0;
    e.err_type = static_cast<std::uint8_t>(i & 3);
    e.err_code = static_cast<std::uint8_t>(i);
    e.length = 1000 + i;
    for (unsigned b = 0; b < 18; ++b) e.hdr[b] = static_cast<std::uint8_t>(i * 18 + b);
    tb().send(e);
    tb().send(placed(0, i, true, false, 0, i, 7 * i));  // QN 0, MSN i
  }
  finish(50000);
  ASSERT_EQ(tb().entries_read.size(), 24U);
  for (unsigned i = 0; i < 12; ++i) {
    const auto& r = tb().entries_read[2 * i];
    const bool phase = (((2 * i) >> 2) & 1U) == 0;
    EXPECT_EQ(r[2], (phase ? 1 : 0) | 2 | ((i & 1) != 0 ? 4 : 0)) << i;
    for (unsigned b = 0; b < 18; ++b) EXPECT_EQ(r[32 + b], static_cast<std::uint8_t>(i * 18 + b));
  }
}

TEST_F(Deliver, StreamResetClearsSlots) {
  const unsigned s = kStreams > 2 ? 2 : 0;
  // Fill every slot but next_ssn (0), some of them last.
  for (unsigned ssn = 1; ssn < kWin; ++ssn) tb().send(placed(s, ssn, ssn % 2 == 0, true, 0xDEAD0000 + ssn));
  Item r;
  r.kind = kStreamReset;
  r.stream = static_cast<std::uint16_t>(s);
  tb().send(r);
  ASSERT_TRUE(tb().run_until_idle(20000));
  EXPECT_EQ(tb().entries_read.size(), 0U);
  tb().check_read_port();
  // After the reset: SSN 0 delivers only itself, and SSNs 1..W-1 are new (not duplicates).
  tb().send(placed(s, 0, true, false, 0x42, 0, 99));  // MSN 0: the reset's expected MSN
  ASSERT_TRUE(tb().run_until_idle(20000));
  ASSERT_EQ(tb().entries_read.size(), 1U);
  EXPECT_EQ(wire::load_le(tb().entries_read[0].data() + 8, 4), 0x42U);
  for (unsigned ssn = kWin; ssn-- > 1;) tb().send(placed(s, ssn, true, true, 0xBEEF0000 + ssn));
  // A reset of a stream with advanced next_ssn.
  tb().send(r);
  tb().send(placed(s, 0, true, true, 0x77));
  finish(50000);
  EXPECT_EQ(tb().dup_events, 0U);
  ASSERT_EQ(tb().entries_read.size(), 1 + (kWin - 1) + 1U);
  EXPECT_EQ(wire::load_le(tb().entries_read.back().data() + 8, 4), 0x77U);
  EXPECT_EQ(entry_ssn(tb().entries_read.back()), 0U);
}

TEST_F(Deliver, RingFullStallsAndResumes) {
  // More completions than the ring and deliver's queue of decided completions hold together.
  tb().cq_log2 = 2;
  tb().knobs.consume = false;
  const unsigned n = 48;
  for (unsigned i = 0; i < n; ++i) tb().send(msg(0, i, true, (i & 1) != 0, i, i));
  tb().run(3000);
  ASSERT_FALSE(tb().failed);
  EXPECT_EQ(tb().aw_total, 4U) << "wrote past a full ring";
  EXPECT_EQ(tb().top().cq_prod_o, 4U);
  const std::uint64_t held = tb().handovers;
  EXPECT_LT(held, n) << "items kept flowing while the ring was full";
  tb().run(500);
  EXPECT_EQ(tb().handovers, held) << "items kept flowing while the ring was full";
  EXPECT_FALSE(tb().top().dlv_ready_o);
  std::printf("[   INFO   ] %llu items taken with the ring full\n", static_cast<unsigned long long>(held));
  // Free one entry by hand: exactly one more is written.
  tb().knobs.consume = true;
  tb().knobs.p_consume = 1.0;
  while (tb().consumed_total < 1 && !tb().failed) tb().step();
  tb().knobs.consume = false;
  tb().run(2000);
  EXPECT_EQ(tb().aw_total, 5U);
  EXPECT_EQ(tb().top().cq_prod_o, 5U);
  // Then drain at random speed: nothing lost, phase flips each lap.
  tb().knobs.consume = true;
  tb().knobs.p_consume = 0.3;
  finish(50000);
  ASSERT_EQ(tb().entries_read.size(), n);
  for (unsigned i = 0; i < n; ++i) {
    EXPECT_EQ(tb().entries_read[i][2] & 1, ((i >> 2) & 1U) == 0 ? 1 : 0) << "phase of entry " << i;
    EXPECT_EQ(wire::load_le(tb().entries_read[i].data() + 8, 4), i);
  }
}

TEST_F(Deliver, ProducerAdvancesOnlyAfterB) {
  tb().knobs = Knobs{1.0, 1.0, 1.0, 1.0, 1.0, 0, 0.0, 0, 1.0, true};
  tb().knobs.b_lat = 0;
  tb().knobs.p_b = 0.0;  // hold every B
  tb().send(placed(0, 0, true, true, 1));
  tb().run(300);
  ASSERT_EQ(tb().aw_total, 1U);
  EXPECT_EQ(tb().top().cq_prod_o, 0U) << "producer advanced before B";
  tb().knobs.p_b = 1.0;
  finish(1000);
  ASSERT_EQ(tb().b_cycles.size(), 1U);
  ASSERT_EQ(tb().prod_change_cycles.size(), 1U);
  EXPECT_GT(tb().prod_change_cycles[0], tb().b_cycles[0]);
}

TEST_F(Deliver, CompletionWaitsForEarlierWrites) {
  // Place writes with a long B latency just before the item completing a message: the entry may
  // only be written once they are acknowledged.
  tb().knobs = Knobs{1.0, 1.0, 1.0, 1.0, 1.0, 0, 0.0, 0, 1.0, true};
  Item a = placed(0, 1, true, false, 0, 0, 3);  // MSN 0 of QN 0, with b
  tb().send(a);
  Item b = placed(0, 0, false, false);
  b.pre_writes = 3;
  b.pre_lat = 300;
  tb().send(b);
  Item e;
  e.kind = kError;
  e.pre_writes = 1;
  e.pre_lat = 200;
  tb().send(e);
  finish(5000);
  ASSERT_EQ(tb().cq_aw_cycles.size(), 2U);
  ASSERT_GE(tb().b_cycles.size(), 4U);
  ASSERT_GE(tb().handover_cycles.size(), 2U);
  EXPECT_GT(tb().cq_aw_cycles[0], tb().b_cycles[2]);
  EXPECT_GT(tb().cq_aw_cycles[0], tb().handover_cycles[1] + 290);
}

// CQ_CTRL enable = 0 (issue 11): completions reaching the head of the queue are discarded (nothing
// written, the input keeps flowing), fences still complete, consume events still go out; enabled
// again, the next completions are written from the producer index where it stood.
TEST_F(Deliver, CqDisabledDiscards) {
  tb().cq_log2 = 2;
  unsigned ssn = 0;
  for (; ssn < 3; ++ssn) tb().send(msg(0, ssn, true, true, ssn));
  ASSERT_TRUE(tb().run_until_idle(20000));
  ASSERT_EQ(tb().aw_total, 3U);
  tb().cq_enable = false;
  tb().ref.discard = true;
  const unsigned n = 48;  // more than deliver's queue of decided completions and the ring
  for (unsigned i = 0; i < n; ++i, ++ssn) {
    tb().send(msg(0, ssn, true, (i & 1) != 0, (i & 1) != 0 ? 0x300 + i : i % kQns));
    if (i % 16 == 5) tb().send(fence(static_cast<std::uint16_t>(i)));
  }
  Item err;
  err.kind = kError;
  err.stream = static_cast<std::uint16_t>(kStreams);  // not stream 0's error: it delivers again below
  tb().send(err);
  tb().send(fence(99));
  ASSERT_TRUE(tb().run_until_idle(20000)) << "the input backed up with the CQ disabled";
  EXPECT_EQ(tb().aw_total, 3U) << "completion written while the CQ was disabled";
  EXPECT_EQ(tb().ref.discarded, n + 1);
  EXPECT_EQ(tb().fences_done, 4U);
  EXPECT_EQ(tb().top().cq_prod_o, 3U);
  tb().cq_enable = true;
  tb().ref.discard = false;
  for (unsigned i = 0; i < 5; ++i, ++ssn) tb().send(msg(0, ssn, true, true, 0x900 + i));
  finish(20000);
  ASSERT_EQ(tb().entries_read.size(), 8U);
  for (unsigned i = 0; i < 5; ++i) EXPECT_EQ(wire::load_le(tb().entries_read[3 + i].data() + 8, 4), 0x900U + i);
}

// RFC 5041 4.3, 5.3, 7.1 untagged #5, 7.2 (2, 0x03): an untagged segment released in DDP-SSN order
// carrying another MSN than its queue's expected one is an order error: one error completion with
// FLAGS error + order (bit 3), type 2 code 3, the segment's QN and MSN, LENGTH 0 and no header; a
// FAIL event for the stream (lookup: error state); order_err_event_o; nothing of the stream is
// delivered afterwards (the error bit), until STREAM_RESET clears it.
TEST_F(Deliver, OrderErrorEntryBytes) {
  tb().cq_log2 = 4;
  const unsigned s = kStreams - 1;
  const std::uint32_t qn = kQns - 1;
  tb().send(queue_set(s, qn, 0x10000005));
  tb().send(placed(s, 0, true, false, qn, 0x10000005, 100, 0x11));  // completes; next 0x10000006
  tb().send(placed(s, 1, true, false, qn, 0x10000005, 200, 0x22));  // MSN repeat: order error
  tb().send(placed(s, 2, true, false, qn, 0x10000006, 300, 0x33));  // in order, but the stream failed
  tb().send(placed(s, 3, true, true, 0x1234, 0, 0));                // tagged: also ignored
  finish(5000);
  ASSERT_EQ(tb().entries_read.size(), 2U);
  const Entry& e = tb().entries_read[1];
  std::array<std::uint8_t, 64> want{};
  want[0] = static_cast<std::uint8_t>(s);
  want[1] = static_cast<std::uint8_t>(s >> 8);
  want[2] = 0x0B;  // phase 1, error, order
  want[3] = 0x02;  // type: untagged buffer error
  want[4] = 0x03;  // code: invalid MSN, range not valid
  want[6] = 0x01;  // DDP-SSN 1
  want[8] = static_cast<std::uint8_t>(qn);
  want[12] = 0x05;
  want[15] = 0x10;  // MSN 0x10000005; LENGTH, RSVD, HEADER zero
  for (unsigned i = 0; i < 64; ++i) EXPECT_EQ(e[i], want[i]) << "order error entry byte " << i;
  EXPECT_EQ(tb().order_events, 1U);
  EXPECT_EQ(tb().msg_events, 1U);
  EXPECT_EQ(tb().dup_events, 0U) << "items after the error are not duplicates";
  EXPECT_EQ(tb().ref.next(s), 4U) << "the failed stream is still sequenced";
  // STREAM_RESET clears the error bit (and the expected MSNs); QUEUE_SET configures the queue again.
  tb().send(stream_reset(s));
  tb().send(queue_set(s, qn, 7));
  tb().send(placed(s, 0, true, false, qn, 7, 1));
  finish(5000);
  ASSERT_EQ(tb().entries_read.size(), 3U);
  EXPECT_EQ(tb().entries_read[2][2] & 0xE, 0) << "a normal completion again";
  EXPECT_EQ(wire::load_le(tb().entries_read[2].data() + hw::kCQE_MSN_OFFSET, 4), 7U);
}

// The order-error cases of RFC 5041 4.3 (MSN + 1 per message, every segment of a message carries its
// MSN), each found in DDP-SSN order (5.3) whatever the arrival order: MSN repeat, MSN skip, an early
// L (a second L for one MSN), a late segment of a completed message, an MSN change inside a message,
// and a bad segment arriving first and released after good ones. Each case on a freshly reset
// stream whose queue starts at a random MSN (near the 2^32 wrap for some); the in-window segments
// after the bad one are never delivered.
TEST_F(Deliver, OrderErrorsInSsnOrder) {
  struct Seg {
    unsigned ssn;
    bool last;
    int dmsn;  // MSN - the queue's first MSN
  };
  struct Case {
    const char* name;
    std::vector<Seg> segs;  // in arrival order
    unsigned completions;   // before the error
    unsigned bad_ssn;
    int bad_dmsn;
  };
  const std::vector<Case> cases = {
      {"MSN repeat", {{0, true, 0}, {1, true, 0}}, 1, 1, 0},
      {"MSN skip", {{0, true, 1}, {1, true, 2}}, 0, 0, 1},
      {"early L", {{0, true, 0}, {1, false, 0}}, 1, 1, 0},
      {"late segment of a completed message", {{0, false, 0}, {1, true, 0}, {2, false, 0}}, 1, 2, 0},
      {"MSN change inside a message", {{0, false, 0}, {1, true, 1}}, 0, 1, 1},
      {"bad one first, released after good ones", {{2, true, 0}, {3, true, 1}, {1, true, 0}, {0, false, 0}}, 1, 2, 0},
  };
  const unsigned s = kStreams > 1 ? 1 : 0;
  const std::uint32_t qn = kQns > 1 ? 1 : 0;
  unsigned entries = 0;
  unsigned errors = 0;
  for (const Case& c : cases) {
    bool fits = true;
    for (const Seg& g : c.segs) fits = fits && g.ssn < kWin;
    if (!fits) continue;
    SCOPED_TRACE(c.name);
    const std::uint32_t first = tb().chance(0.5) ? 0xFFFFFFFFU - static_cast<std::uint32_t>(tb().rnd(0, 1))
                                                 : static_cast<std::uint32_t>(tb().rnd(0, 0xFFFFFFFF));
    tb().send(stream_reset(s));
    tb().send(queue_set(s, qn, first));
    for (const Seg& g : c.segs) {
      tb().send(placed(s, g.ssn, g.last, false, qn, first + static_cast<std::uint32_t>(g.dmsn), 100 + g.ssn));
    }
    // In-window segments after the error, in order for the queue: ignored.
    const unsigned more = std::min(kWin, 6U);
    for (unsigned k = 0; k < more; ++k) {
      const unsigned ssn = c.bad_ssn + 1 + k;
      bool sent = false;
      for (const Seg& g : c.segs) sent = sent || g.ssn == ssn;
      if (!sent && ssn < kWin) tb().send(placed(s, ssn, true, false, qn, first + 1 + k, 7));
    }
    finish(20000);
    if (::testing::Test::HasFailure()) return;
    entries += c.completions + 1;
    ++errors;
    ASSERT_EQ(tb().entries_read.size(), entries);
    const Entry& e = tb().entries_read.back();
    EXPECT_EQ(e[2] & 0xE, 0x0A) << "FLAGS error + order";
    EXPECT_EQ(e[3], 0x02);
    EXPECT_EQ(e[4], 0x03);
    EXPECT_EQ(entry_ssn(e), c.bad_ssn);
    EXPECT_EQ(wire::load_le(e.data() + hw::kCQE_STAG_QN_OFFSET, 4), qn);
    EXPECT_EQ(wire::load_le(e.data() + hw::kCQE_MSN_OFFSET, 4), first + static_cast<std::uint32_t>(c.bad_dmsn));
    EXPECT_EQ(wire::load_le(e.data() + hw::kCQE_LENGTH_OFFSET, 4), 0U);
    EXPECT_EQ(tb().order_events, errors);
    EXPECT_TRUE(tb().ref.failed(s));
  }
  EXPECT_EQ(tb().dup_events, 0U);
}

// QUEUE_SET sets a queue's expected MSN (RFC 5041 4.3: the first MSN of the queue) in DDP-SSN order
// with the segments, independently per queue; the expected MSN wraps 0xFFFFFFFF -> 0.
TEST_F(Deliver, QueueSetAndMsnWrap) {
  const unsigned s = 0;
  const std::uint32_t q0 = 0;
  const std::uint32_t q1 = kQns - 1;
  tb().send(queue_set(s, q0, 0xFFFFFFFEU));
  if (q1 != q0) tb().send(queue_set(s, q1, 0x00ABCDEFU));
  unsigned ssn = 0;
  tb().send(placed(s, ssn++, false, false, q0, 0xFFFFFFFEU, 10));
  tb().send(placed(s, ssn++, true, false, q0, 0xFFFFFFFEU, 11));
  if (q1 != q0) tb().send(placed(s, ssn++, true, false, q1, 0x00ABCDEFU, 12));
  tb().send(placed(s, ssn++, true, false, q0, 0xFFFFFFFFU, 13));
  tb().send(placed(s, ssn++, true, false, q0, 0U, 14));  // wrapped
  tb().send(placed(s, ssn++, true, false, q0, 1U, 15));
  if (q1 != q0) tb().send(placed(s, ssn++, true, false, q1, 0x00ABCDF0U, 16));
  finish(10000);
  EXPECT_EQ(tb().order_events, 0U);
  EXPECT_EQ(tb().ref.expected_msn(s, q0), 2U);
  ASSERT_EQ(tb().entries_read.size(), q1 != q0 ? 6U : 4U);
  std::vector<std::uint32_t> msns;
  for (const Entry& e : tb().entries_read) {
    if (wire::load_le(e.data() + hw::kCQE_STAG_QN_OFFSET, 4) == q0)
      msns.push_back(static_cast<std::uint32_t>(wire::load_le(e.data() + 12, 4)));
  }
  EXPECT_EQ(msns, (std::vector<std::uint32_t>{0xFFFFFFFEU, 0xFFFFFFFFU, 0U, 1U}));
  // A new QUEUE_SET mid-stream: the old next MSN is now out of order.
  tb().send(queue_set(s, q0, 500));
  tb().send(placed(s, ssn++, true, false, q0, 500, 17));
  tb().send(placed(s, ssn++, true, false, q0, 2, 18));  // the MSN before the QUEUE_SET: error
  finish(10000);
  EXPECT_EQ(tb().order_events, 1U);
  EXPECT_EQ(wire::load_le(tb().entries_read.back().data() + hw::kCQE_MSN_OFFSET, 4), 2U);
}

// place's expected-MSN read port (issue 11): data one cycle after the address, deliver's write of
// the address cycle included (forwarded). With nothing queued, a message's completion (or a
// QUEUE_SET) is decided in O three cycles after its handover h (M, D, O), and the port, addressed all
// along, shows the new value from cycle h + 4: one cycle later without the forwarding.
TEST_F(Deliver, ExpReadPortForwardsSameCycleWrite) {
  tb().knobs = Knobs{1.0, 1.0, 1.0, 1.0, 1.0, 2, 0.0, 0, 1.0, true};
  const unsigned s = kStreams - 1;
  const std::uint32_t q = kQns - 1;
  tb().probe_exp(s, q);
  auto value_at = [&](std::uint64_t c) -> std::int64_t {
    for (const auto& [cc, v] : tb().port_log) {
      if (cc == c) return v;
    }
    return -1;
  };
  std::uint32_t expect = 0;
  unsigned ssn = 0;
  for (int round = 0; round < 6; ++round) {
    const bool qset = round % 3 == 0;
    const std::uint32_t next = qset ? static_cast<std::uint32_t>(tb().rnd(0, 0xFFFFFFFF)) : expect + 1;
    tb().send(qset ? queue_set(s, q, next) : placed(s, ssn++, true, false, q, expect, 5));
    tb().port_log.clear();
    ASSERT_TRUE(tb().run_until_idle(2000));
    ASSERT_FALSE(tb().handover_cycles.empty());
    const std::uint64_t h = tb().handover_cycles.back();
    EXPECT_EQ(value_at(h + 3), expect) << "round " << round << ": the port changed too early";
    EXPECT_EQ(value_at(h + 4), next) << "round " << round << ": the same-cycle write was not forwarded";
    EXPECT_EQ(value_at(h + 5), next) << "round " << round;
    expect = next;
  }
  tb().exp_probe_fixed = false;
  tb().check_final();
  EXPECT_EQ(tb().order_events, 0U);
}

// Completion marks (issue 11): commit_now_i sampled when the completion is decided (with nothing
// queued, in O three cycles after the handover of the segment that completes the message). A place segment
// committed in that very cycle is waited for: its B comes before the completion's AW (no write into
// a buffer follows the completion that hands it back). One committed a cycle later is not.
TEST_F(Deliver, CompletionMarkSampledAtDecision) {
  tb().knobs = Knobs{1.0, 1.0, 1.0, 1.0, 1.0, 0, 0.0, 0, 1.0, true};
  tb().knobs.commit_aw_lat = 0;
  constexpr unsigned kLat = 200;
  // Committed in the decision cycle: waited for.
  tb().commit_after_handover = {{3, kLat}};
  tb().send(msg(0, 0, true, false, 0, 1));
  finish(2000);
  ASSERT_EQ(tb().cq_aw_cycles.size(), 1U);
  ASSERT_EQ(tb().b_cycles.size(), 2U);  // the segment's B, then the completion's
  EXPECT_GT(tb().cq_aw_cycles[0], tb().b_cycles[0]) << "completion written before the B of a segment "
                                                       "committed when it was decided";
  EXPECT_GT(tb().cq_aw_cycles[0], tb().handover_cycles[0] + kLat);
  // Committed in the cycle after the decision: not waited for.
  tb().commit_after_handover = {{4, kLat}};
  tb().send(msg(0, 1, true, false, 0, 2));
  finish(2000);
  ASSERT_EQ(tb().cq_aw_cycles.size(), 2U);
  ASSERT_EQ(tb().b_cycles.size(), 4U);
  EXPECT_LT(tb().cq_aw_cycles[1], tb().handover_cycles[1] + 20)
      << "completion waited for a segment committed after its decision";
}

// FENCE (STAG_INVALIDATE, STREAM_TEARDOWN) and QUEUE_SET complete in deliver (issue 11): fence_done_o
// pulses once every completion decided before the fence is written and acknowledged and every place
// segment committed before it is acknowledged; a fence with nothing before it completes at once;
// with the CQ disabled the completions before it are discarded and it completes too.
TEST_F(Deliver, FenceDoneAfterEarlierCompletions) {
  tb().knobs = Knobs{1.0, 1.0, 1.0, 1.0, 1.0, 2, 0.0, 0, 1.0, true};
  tb().cq_log2 = 6;
  // Nothing before it.
  tb().send(fence(1));
  finish(1000);
  ASSERT_EQ(tb().fence_cycles.size(), 1U);
  EXPECT_LE(tb().fence_cycles[0], tb().handover_cycles[0] + 7);  // M, D, O, push, FIFO, slice, done
  std::printf("[   INFO   ] fence with nothing before it: done %llu cycles after its handover\n",
              static_cast<unsigned long long>(tb().fence_cycles[0] - tb().handover_cycles[0]));
  // Completions whose B is held.
  tb().knobs.p_b = 0.0;
  unsigned ssn = 0;
  for (unsigned i = 0; i < 3; ++i) tb().send(msg(0, ssn++, true, true, i));
  tb().send(fence(2));
  tb().send(msg(0, ssn++, true, true, 3));  // after the fence: behind its marker
  tb().run(300);
  ASSERT_FALSE(tb().failed);
  EXPECT_EQ(tb().aw_total, 3U);
  EXPECT_EQ(tb().fences_done, 1U) << "fence done before the completions before it were acknowledged";
  tb().knobs.p_b = 1.0;
  finish(2000);
  ASSERT_EQ(tb().fence_cycles.size(), 2U);
  ASSERT_GE(tb().b_cycles.size(), 3U);
  EXPECT_GT(tb().fence_cycles[1], tb().b_cycles[2]);
  // A segment committed before the fence, its B late; QUEUE_SET as the fence.
  Item qs = queue_set(0, 0, 1);
  qs.pre_writes = 1;
  qs.pre_lat = 300;
  const std::size_t b0 = tb().b_cycles.size();
  tb().send(qs);
  finish(2000);
  ASSERT_EQ(tb().fence_cycles.size(), 3U);
  ASSERT_EQ(tb().b_cycles.size(), b0 + 1);
  EXPECT_GT(tb().fence_cycles[2], tb().b_cycles[b0]) << "fence done before a committed segment's B";
  // CQ disabled: discarded completions, the fence completes.
  tb().cq_enable = false;
  tb().ref.discard = true;
  for (unsigned i = 0; i < 20; ++i) tb().send(msg(0, ssn++, true, true, i));
  tb().send(fence(3));
  finish(2000);
  EXPECT_EQ(tb().fence_cycles.size(), 4U);
  EXPECT_EQ(tb().ref.discarded, 20U);
}

TEST_F(Deliver, CqResetRestartsRing) {
  tb().cq_log2 = 2;
  for (unsigned i = 0; i < 6; ++i) tb().send(placed(0, i, true, true, i));
  ASSERT_TRUE(tb().run_until_idle(20000));
  EXPECT_EQ(tb().top().cq_prod_o, 6U);
  tb().cq_reset();
  tb().step();
  EXPECT_EQ(tb().top().cq_prod_o, 0U);
  for (unsigned i = 6; i < 9; ++i) tb().send(placed(0, i, true, true, i));
  finish(20000);
  ASSERT_EQ(tb().entries_read.size(), 9U);
  for (unsigned i = 6; i < 9; ++i) EXPECT_EQ(tb().entries_read[i][2] & 1, 1) << "phase after reset";
  EXPECT_EQ(tb().top().cq_prod_o, 3U);
}

// ---- throughput ------------------------------------------------------------------------------------

// The item sequences of the throughput tests.
enum class Pattern { kTaggedSingle, kUntaggedSingle, kEightSegment, kStreamsRoundRobin, kPairsSwapped };

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::kTaggedSingle:
      return "tagged 1-segment messages";
    case Pattern::kUntaggedSingle:
      return "untagged 1-segment messages";
    case Pattern::kEightSegment:
      return "8-segment messages (tagged/untagged)";
    case Pattern::kStreamsRoundRobin:
      return "1-segment messages, streams round robin";
    case Pattern::kPairsSwapped:
      return "1-segment messages, each pair swapped";
  }
  return "";
}

struct Throughput {
  std::uint64_t items = 0;
  std::uint64_t entries = 0;
  std::uint64_t input = 0;       // first to last handover, cycles
  std::uint64_t to_last_aw = 0;  // first handover to the last completion AW, cycles
  std::uint64_t to_prod = 0;     // first handover to the last cq_prod_o step, cycles
};

// Always-ready AXI slave and consume sink, B exactly b_latency cycles after AW + data, host reading
// one entry per cycle, no place writes; the items are presented back to back.
Throughput run_throughput(Tb& tb, Pattern p, unsigned n, unsigned b_latency) {
  tb.knobs = Knobs{1.0, 1.0, 1.0, 1.0, 1.0, 0, 0.0, 0, 1.0, true, b_latency};
  tb.cq_log2 = 10;
  tb.reset();
  const unsigned streams = std::min(kStreams, 4U);
  std::vector<std::uint16_t> ssn(streams, 0);
  MsnBook book;  // untagged messages in MSN order per queue (RFC 5041 4.3)
  for (unsigned i = 0; i < n; ++i) {
    switch (p) {
      case Pattern::kTaggedSingle:
        tb.send(placed(0, i, true, true, 0x100 + i, 0, 0, i));
        break;
      case Pattern::kUntaggedSingle:
        tb.send(placed(0, i, true, false, i % kQns, book.take(0, i % kQns, true), i, i));
        break;
      case Pattern::kEightSegment: {
        const bool tagged = (i / 8) % 2 == 0;
        const std::uint32_t qn = tagged ? 0x200 + i / 8 : (i / 8) % kQns;
        const std::uint32_t msn = tagged ? 0 : book.take(0, qn, i % 8 == 7);
        tb.send(placed(0, i, i % 8 == 7, tagged, qn, msn, i, i));
        break;
      }
      case Pattern::kStreamsRoundRobin: {
        const unsigned s = i % streams;
        const bool tagged = (i & 2) != 0;
        const std::uint32_t qn = tagged ? i : i % kQns;
        tb.send(placed(s, ssn[s]++, true, tagged, qn, tagged ? i : book.take(s, qn, true), i, i));
        break;
      }
      case Pattern::kPairsSwapped:
        tb.send(placed(0, i ^ 1U, true, true, i ^ 1U));
        break;
    }
  }
  Throughput t;
  if (!tb.run_until_idle(20ULL * n + 2000)) return t;
  tb.check_final();
  t.items = tb.handovers;
  t.entries = tb.entries_read.size();
  const std::uint64_t t0 = tb.handover_cycles.front();
  t.input = tb.handover_cycles.back() - t0 + 1;
  t.to_last_aw = tb.cq_aw_cycles.back() - t0 + 1;
  t.to_prod = tb.prod_change_cycles.back() - t0 + 1;
  return t;
}

TEST_F(Deliver, ThroughputBackToBack) {
  // One item per cycle in; completions written back to back (one entry per 64/BYTES cycles), several
  // awaiting their B at once: N messages complete in about max(N, N * beats per entry) + a constant.
  const unsigned n = 256;
  for (const unsigned lat : {4U, 8U, 16U}) {
    for (const Pattern p : {Pattern::kTaggedSingle, Pattern::kUntaggedSingle, Pattern::kEightSegment,
                            Pattern::kStreamsRoundRobin, Pattern::kPairsSwapped}) {
      const Throughput t = run_throughput(tb(), p, n, lat);
      ASSERT_FALSE(tb().failed) << pattern_name(p) << ", B latency " << lat;
      ASSERT_EQ(t.items, n);
      const std::uint64_t write_cycles = t.entries * kBeats;
      // Each pair swapped: the first fills its slot, the second is delivered and then the slot:
      // one cycle per released slot.
      const std::uint64_t in_cycles = p == Pattern::kPairsSwapped ? n + n / 2 : n;
      const std::uint64_t bound = std::max(in_cycles, write_cycles);
      std::printf(
          "[   INFO   ] w%u B latency %2u, %-40s: %u items, %llu entries: input %llu cycles, "
          "last completion AW at %llu, cq_prod at %llu\n",
          kDw, lat, pattern_name(p), n, static_cast<unsigned long long>(t.entries),
          static_cast<unsigned long long>(t.input), static_cast<unsigned long long>(t.to_last_aw),
          static_cast<unsigned long long>(t.to_prod));
      EXPECT_LE(t.input, std::max(in_cycles, write_cycles - std::min<std::uint64_t>(write_cycles, 40)) + 24)
          << pattern_name(p) << ", B latency " << lat;
      if (kBeats == 1 && p != Pattern::kPairsSwapped) {
        EXPECT_EQ(t.input, n) << "input stalled: " << pattern_name(p) << ", B latency " << lat;
      }
      // A constant for the pipeline from the handover to the completion's AW (M, D, O, the
      // registered push, the FIFO, the slice in front of the writer, the writer's load).
      EXPECT_LE(t.to_last_aw, bound + 9) << pattern_name(p) << ", B latency " << lat;
      EXPECT_LE(t.to_prod, bound + kBeats + 9 + lat) << pattern_name(p) << ", B latency " << lat;
    }
  }
}

TEST_F(Deliver, BackToBackHazards) {
  // RFC 5041 5.3: items of one stream in consecutive cycles, each depending on the state the previous
  // one left (the per-stream word and the slots): in order, fill then release, fill then duplicate,
  // release chains, a reset right behind a fill, other streams in between.
  tb().knobs = Knobs{1.0, 1.0, 1.0, 1.0, 1.0, 0, 0.0, 0, 1.0, true, 3};
  tb().cq_log2 = 8;
  const unsigned a = 0;
  const unsigned b = kStreams > 1 ? 1 : 0;
  for (unsigned i = 0; i < 6; ++i) tb().send(placed(a, i, i % 2 == 1, true, 0x10 + i));  // in order
  tb().send(placed(a, 7, true, false, 1, 0, 70));                                        // fill (MSN 0 of QN 1)
  tb().send(placed(a, 6, false, false, 1, 0, 60));                                       // release 6, 7
  tb().send(placed(a, 8, true, true, 0x18));                                             // right after the release ends
  tb().send(placed(a, 9, true, true, 0x19));
  if (kWin >= 4) {
    tb().send(placed(a, 12, true, true, 0x1C));   // fill
    tb().send(placed(a, 12, true, true, 0xDD));   // same slot again: duplicate
    tb().send(placed(a, 11, false, true, 0x1B));  // fill
    tb().send(placed(a, 10, true, true, 0x1A));   // release 10, 11, 12
    tb().send(placed(a, 13, true, true, 0x1D));
    tb().send(placed(a, 12, true, true, 0xEE));  // behind: duplicate
  }
  tb().send(placed(a, 15, true, true, 0x0F));                    // fill (14 missing)
  tb().send(placed(b, 0, true, false, kQns > 2 ? 2 : 0, 0, 5));  // another stream in between
  tb().send(placed(a, kWin > 2 ? 14 : 13, true, true, 0x0E));
  tb().send(placed(b, 1, true, true, 0xB1));
  tb().send(placed(b, 2, false, true, 0xB2));
  Item r;
  r.kind = kStreamReset;
  r.stream = static_cast<std::uint16_t>(b);
  tb().send(placed(b, 4, true, true, 0xB4));   // fill
  tb().send(r);                                // right behind the fill: slot and next_ssn cleared
  tb().send(placed(b, 0, false, true, 0xC0));  // SSN 0 again: new
  tb().send(placed(b, 1, true, true, 0xC1));
  tb().send(placed(b, 4, true, true, 0xC4));  // slot 4 was cleared: fills again
  tb().send(r);
  tb().send(r);
  tb().send(placed(b, 0, true, false, kQns - 1, 0, 90));  // after the resets: MSN 0
  finish(5000);
  EXPECT_GT(tb().dup_events, 0U);
  EXPECT_GE(tb().entries_read.size(), 8U);
}

TEST_F(Deliver, CqResetWithWritesInFlight) {
  // Two entries written and awaiting B, a third started but its AW and data held, two more decided:
  // cq_reset_i. The three started ones are finished on the bus but never counted (their B responses
  // arrive after the reset); the two decided ones go to entries 0 and 1 of the new ring.
  tb().knobs = Knobs{1.0, 1.0, 1.0, 1.0, 0.0, 0, 0.0, 0, 1.0, false, 2};
  tb().cq_log2 = 3;
  for (unsigned i = 0; i < 2; ++i) tb().send(placed(0, i, true, true, 0x100 + i));
  tb().run(40);
  ASSERT_EQ(tb().aw_total, 2U);
  tb().knobs.p_wready = 0.0;
  tb().knobs.p_awready = 0.0;
  for (unsigned i = 2; i < 5; ++i) tb().send(placed(0, i, true, true, 0x100 + i));
  tb().run(40);
  ASSERT_EQ(tb().aw_total, 2U);
  ASSERT_TRUE(tb().top().awvalid_o && tb().top().wvalid_o);
  EXPECT_EQ(tb().top().cq_prod_o, 0U);
  tb().cq_reset();
  tb().knobs.p_wready = 1.0;
  tb().knobs.p_awready = 1.0;
  tb().knobs.p_b = 1.0;
  tb().run(60);
  ASSERT_FALSE(tb().failed);
  EXPECT_EQ(tb().aw_total, 5U);
  EXPECT_EQ(tb().acked_total, 5U);
  EXPECT_EQ(tb().top().cq_prod_o, 2U) << "entries started before cq_reset_i were counted";
  // The host skips the three entries of the old ring and reads the new one.
  tb().consumed_total = 3;
  tb().knobs.consume = true;
  finish(2000);
  ASSERT_EQ(tb().entries_read.size(), 2U);
  for (unsigned k = 0; k < 2; ++k) {
    EXPECT_EQ(tb().entries_read[k][2] & 1, 1) << "phase after reset";
    EXPECT_EQ(wire::load_le(tb().entries_read[k].data() + 8, 4), 0x103U + k);
  }
}

struct RandomCase {
  const char* name;
  unsigned cq_log2;
  Knobs knobs;
  unsigned max_segs;
  double in_order = 0.5;  // Traffic::Mix::p_in_order
};

void PrintTo(const RandomCase& c, std::ostream* os) { *os << c.name; }

class DeliverRandom : public Deliver, public ::testing::WithParamInterface<RandomCase> {};

TEST_P(DeliverRandom, InterleavedStreams) {
  const RandomCase& c = GetParam();
  tb().cq_log2 = c.cq_log2;
  tb().knobs = c.knobs;
  Traffic::Mix mix;
  mix.streams = std::min(kStreams, 6U);
  mix.max_segs = c.max_segs;
  mix.p_out_of_range = kStreams < 65536 ? 0.01 : 0.0;
  mix.items = 3000;
  mix.p_in_order = c.in_order;
  mix.p_reset = 0.015;
  mix.p_fence = 0.01;
  mix.p_order_err = 0.03;
  Traffic tr(tb(), mix);
  tb().generator = [&tr](Item& it) { return tr.next(it); };
  finish(400000);
  std::printf(
      "[   INFO   ] %llu items, %zu entries, %llu dups, %llu order errors, %llu fences, %llu "
      "cycles\n",
      static_cast<unsigned long long>(tb().handovers), tb().entries_read.size(),
      static_cast<unsigned long long>(tb().dup_events), static_cast<unsigned long long>(tb().order_events),
      static_cast<unsigned long long>(tb().fences_done), static_cast<unsigned long long>(tb().cycle));
  EXPECT_GT(tb().entries_read.size(), 50U);
  EXPECT_GT(tb().dup_events, 50U);
}

INSTANTIATE_TEST_SUITE_P(
    Mixes, DeliverRandom,
    ::testing::Values(RandomCase{"Backpressure", 2, Knobs{}, 4},
                      RandomCase{"SlowHostTinyRing", 1, Knobs{0.5, 0.3, 0.3, 0.3, 0.5, 16, 0.1, 40, 0.05, true}, 3},
                      RandomCase{"FullSpeed", 8, Knobs{1.0, 1.0, 1.0, 1.0, 1.0, 0, 0.0, 0, 1.0, true}, 6},
                      RandomCase{"LongMessages", 5, Knobs{}, 2 * kWin + 3},
                      RandomCase{"AlwaysReadyLongB", 6, Knobs{1.0, 1.0, 1.0, 1.0, 1.0, 4, 0.1, 30, 1.0, true, 12}, 3},
                      RandomCase{"RandomReadyRandomB", 3, Knobs{0.9, 0.6, 0.6, 0.6, 0.7, 16, 0.05, 30, 0.4, true, 4},
                                 4}),
    [](const ::testing::TestParamInfo<RandomCase>& i) { return std::string(i.param.name); });

}  // namespace
