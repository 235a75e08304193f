// SPDX-License-Identifier: Apache-2.0
// rnic_net_regs (issue 14, docs/network.md): the network side's register window, hw.def's NET_* rows
// at 0x0400..0x04FF, driven on its reg_* port as rnic_regs drives it (a one-cycle write with whit read
// in that cycle; a one-cycle read whose word is on reg_rdata_o from the next cycle until the next read),
// against a cycle model of the window written from the rows' text (Model below). Every cycle of every
// test compares every output of the RTL with the model; the directed tests also state the expected
// values themselves.
//   - every word offset 0x00..0xFC: hit for each word of a NET_* row, miss (read 0) elsewhere;
//   - RW words take the strobes per byte, RO words ignore writes, WO words read 0;
//   - NET_ASSOC_CMD: the wr_* pulse with the staged fields, index >= Entries ignored, commands while
//     busy ignored; a clear's fence: busy until every packet that entered up to the wr_o cycle has left
//     (drops 0..3 per cycle and summaries), random sequences, > 2^16 packets in flight, and (suite
//     Small: every counter starts at 2^32 - 256) across the 32-bit wrap;
//   - NET_STREAM_LIVE pulses, streams >= NumStreams ignored;
//   - ring configuration taken only while CTRL reads 0, invalid SIZE values ignored whole, CTRL bit 0
//     = 1 zeroing CONS / PROD, BASE_LO [11:0] zero;
//   - NET_CNT0..9 count their event inputs (registered once), wrapping at 2^32 (suite Small).
// Built twice by netregs.cmake: suite NetRegsDefault at the module's defaults (16 entries, 256
// streams) and NetRegsSmall (8 entries, 100 streams, CountInit 2^32 - 256).
// Seed: random tests print theirs; RNIC_TEST_SEED=<n> replays. Waveform with RNIC_FST=<file>.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/stage_sim.hpp"

#define RNIC_CAT2(a, b) a##b
#define RNIC_CAT(a, b) RNIC_CAT2(a, b)
#include RNIC_NETREGS_HDR  // the model's header and class, the suite's suffix: netregs.cmake

#define NETREGS_SUITE RNIC_CAT(NetRegs, RNIC_NETREGS_NAME)

namespace {

namespace hw = rnic::hw;
using Dut = RNIC_NETREGS_CLASS;

constexpr unsigned kEntries = RNIC_NETREGS_ENTRIES;      // the model's Entries
constexpr unsigned kStreams = RNIC_NETREGS_STREAMS;      // the model's NumStreams
constexpr std::uint32_t kCountInit = RNIC_NETREGS_INIT;  // the model's CountInit
constexpr std::uint32_t kWindow = 0x0400;                // rnic_regs' EXT_BASE
constexpr unsigned kNumArgs = hw::kNET_ASSOC_ARGS;       // NET_ASSOC_ARG0..7
constexpr unsigned kNumCnt = hw::kNET_COUNTERS;          // NET_CNT0..14

constexpr std::uint8_t off(std::uint32_t reg) { return static_cast<std::uint8_t>(reg - kWindow); }
constexpr std::uint8_t kArg0 = off(hw::kRegNET_ASSOC_ARG0);
constexpr std::uint8_t kCmd = off(hw::kRegNET_ASSOC_CMD);
constexpr std::uint8_t kStatus = off(hw::kRegNET_ASSOC_STATUS);
constexpr std::uint8_t kLive = off(hw::kRegNET_STREAM_LIVE);
constexpr std::uint8_t kRxBaseLo = off(hw::kRegNET_RX_BASE_LO);
constexpr std::uint8_t kRxBaseHi = off(hw::kRegNET_RX_BASE_HI);
constexpr std::uint8_t kRxSize = off(hw::kRegNET_RX_SIZE);
constexpr std::uint8_t kRxCtrl = off(hw::kRegNET_RX_CTRL);
constexpr std::uint8_t kRxProd = off(hw::kRegNET_RX_PROD);
constexpr std::uint8_t kRxCons = off(hw::kRegNET_RX_CONS);
constexpr std::uint8_t kTxBaseLo = off(hw::kRegNET_TX_BASE_LO);
constexpr std::uint8_t kTxBaseHi = off(hw::kRegNET_TX_BASE_HI);
constexpr std::uint8_t kTxSize = off(hw::kRegNET_TX_SIZE);
constexpr std::uint8_t kTxCtrl = off(hw::kRegNET_TX_CTRL);
constexpr std::uint8_t kTxProd = off(hw::kRegNET_TX_PROD);
constexpr std::uint8_t kTxCons = off(hw::kRegNET_TX_CONS);
constexpr std::uint8_t kCnt0 = off(hw::kRegNET_CNT0);
constexpr std::uint8_t kFault = off(hw::kRegNET_TX_FAULT);
constexpr std::uint8_t kFaultReason = off(hw::kRegNET_TX_FAULT_REASON);
constexpr unsigned kArgSocket = 6;  // NET_ASSOC_ARG6: [15:0] the VNx socket
// NET_CNT11..14: the gather's drops by the class of their reason (hw.def NET_TX_DROP_*)
unsigned drop_counter(unsigned reason) {
  if (reason == hw::kNET_TX_DROP_ASSOC) return 11;
  if (reason == hw::kNET_TX_DROP_READ_ERROR) return 14;
  if (reason >= hw::kNET_TX_DROP_STAG && reason <= hw::kNET_TX_DROP_BOUNDS) return 13;
  if ((reason >= hw::kNET_TX_DROP_FRAMING && reason <= hw::kNET_TX_DROP_LENGTH) || reason == hw::kNET_TX_DROP_TOO_LONG)
    return 12;
  return 0;  // no class (0, 14, 15: never given by the gather)
}
constexpr std::uint8_t arg_reg(unsigned i) { return static_cast<std::uint8_t>(kArg0 + 4 * i); }
constexpr std::uint8_t cnt_reg(unsigned i) { return static_cast<std::uint8_t>(kCnt0 + 4 * i); }

enum class Access : std::uint8_t { kRO, kRW, kWO };

// One word of the window: the hw.def row it belongs to.
struct Word {
  std::string name;
  std::uint8_t offset;
  Access access;
};

// Every word of the window, from hw.def's RNIC_REG rows in [0x400, 0x500); the staging and counter
// rows stand for NET_ASSOC_ARGS and NET_COUNTERS words (hw::reg_net_assoc_arg, hw::reg_net_counter).
std::vector<Word> window_words() {
  struct Row {
    const char* name;
    std::uint32_t offset;
    Access access;
  };
  constexpr Access RO = Access::kRO;
  constexpr Access RW = Access::kRW;
  constexpr Access WO = Access::kWO;
  constexpr Access RC = Access::kRO;
  static const Row rows[] = {
#define RNIC_CONST(name, value, desc)
#define RNIC_CMD(name, opcode, desc)
#define RNIC_FIELD(rec, name, offset, bits, desc)
#define RNIC_REG(name, offset, access, desc) {#name, offset, access},
#include "rnic/hw/hw.def"
#undef RNIC_CONST
#undef RNIC_CMD
#undef RNIC_FIELD
#undef RNIC_REG
  };
  (void)RC;
  std::vector<Word> words;
  for (const Row& r : rows) {
    if (r.offset < kWindow || r.offset >= kWindow + 0x100) continue;
    const std::string name = r.name;
    const unsigned n = name == "NET_ASSOC_ARG0" ? kNumArgs : name == "NET_CNT0" ? kNumCnt : 1;
    const std::string stem = n > 1 ? name.substr(0, name.size() - 1) : name;
    for (unsigned i = 0; i < n; ++i)
      words.push_back(
          {n > 1 ? stem + std::to_string(i) : name, static_cast<std::uint8_t>(off(r.offset) + 4 * i), r.access});
  }
  return words;
}

const std::vector<Word>& words() {
  static const std::vector<Word> w = window_words();
  return w;
}
const Word* word_at(std::uint8_t offset) {
  for (const Word& w : words())
    if (w.offset == (offset & 0xFC)) return &w;
  return nullptr;
}

std::uint32_t strb_mask(unsigned s) {
  std::uint32_t m = 0;
  for (unsigned b = 0; b < 4; ++b)
    if ((s >> b) & 1U) m |= 0xFFU << (8 * b);
  return m;
}
std::uint32_t merge(std::uint32_t old, std::uint32_t d, unsigned s) {
  return (old & ~strb_mask(s)) | (d & strb_mask(s));
}

// The inputs of one cycle.
struct In {
  bool wr = false;
  std::uint8_t waddr = 0;
  std::uint32_t wdata = 0;
  std::uint8_t wstrb = 0;
  bool rd = false;
  std::uint8_t raddr = 0;
  bool pkt_in = false;        // also NET_CNT0's event
  std::uint8_t pkt_drop = 0;  // 0..3
  bool pkt_done = false;
  std::array<bool, kNumCnt> ev{};  // NET_CNT1..10's events (ev[0] unused: pkt_in; 11..14 from g_drop)
  // the gather (rnic_net_tx g_*): a drop with its reason and association; packets in and out (the fence)
  bool g_drop = false;
  std::uint8_t g_reason = 0, g_assoc = 0;
  bool g_in = false, g_out = false;
  std::uint32_t rx_prod = 0, tx_cons = 0;
  bool rx_busy = false, tx_busy = false;
};

struct Ring {
  std::uint32_t base_lo = 0, base_hi = 0;
  std::uint32_t slots = 0, slot = 12;
  bool enable = false;
  std::uint32_t index = 0;  // rx: CONS (RW), tx: PROD (RW)
  std::uint32_t size_word() const { return slot << 8 | slots; }
};

// The window as its rows say, one cycle at a time. Fence totals are 64-bit (no wrap): the RTL's
// 32-bit counters must give the same answers while fewer than 2^31 packets are in flight.
class Model {
 public:
  // Outputs in the current cycle.
  std::array<std::uint32_t, kNumArgs> args{};
  bool wr = false, wr_valid = false;
  unsigned wr_index = 0;
  bool busy = false;
  bool live = false, live_value = false;
  unsigned live_index = 0;
  Ring rx, tx;
  std::array<std::uint32_t, kNumCnt> cnt{};
  std::uint32_t rdata = 0;
  bool rhit = false;
  // Bookkeeping for the tests.
  std::uint64_t cycle = 0;
  std::uint64_t in_total = 0;                     // pkt_in pulses in the cycles before this one
  std::uint64_t left_total = 0;                   // packets left (drops + summaries) in the cycles before this one
  bool fence = false;                             // a clear is fenced
  std::uint64_t fence_w = 0;                      // its wr_o cycle
  std::uint64_t snapshot = 0;                     // pkt_in pulses up to and including fence_w
  std::uint64_t g_in_total = 0, g_out_total = 0;  // the gather's packets in / out before this cycle
  std::uint64_t g_snapshot = 0;                   // g_in pulses up to and including fence_w
  std::uint32_t fault = 0;                        // NET_TX_FAULT
  std::uint32_t fault_reason = 0;                 // NET_TX_FAULT_REASON

  Model() { cnt.fill(kCountInit); }

  static bool hit(std::uint8_t a) { return word_at(a) != nullptr; }

  std::uint32_t read_word(std::uint8_t a, const In& in) const {
    const unsigned w = a & 0xFC;
    for (unsigned i = 0; i < kNumArgs; ++i)
      if (w == arg_reg(i)) return args[i];
    for (unsigned i = 0; i < kNumCnt; ++i)
      if (w == cnt_reg(i)) return cnt[i];
    if (w == kStatus) return busy ? 1U : 0U;
    if (w == kRxBaseLo) return rx.base_lo;
    if (w == kRxBaseHi) return rx.base_hi;
    if (w == kRxSize) return rx.size_word();
    if (w == kRxCtrl) return (in.rx_busy ? 2U : 0U) | (rx.enable ? 1U : 0U);
    if (w == kRxProd) return in.rx_prod;
    if (w == kRxCons) return rx.index;
    if (w == kTxBaseLo) return tx.base_lo;
    if (w == kTxBaseHi) return tx.base_hi;
    if (w == kTxSize) return tx.size_word();
    if (w == kTxCtrl) return (in.tx_busy ? 2U : 0U) | (tx.enable ? 1U : 0U);
    if (w == kTxProd) return tx.index;
    if (w == kTxCons) return in.tx_cons;
    if (w == kFault) return fault;
    if (w == kFaultReason) return fault_reason;
    return 0;  // CMD, LIVE (WO) and misses
  }

  // The end of the current cycle with inputs `in`.
  void step(const In& in) {
    const unsigned w = in.waddr & 0xFC;
    const bool wr_at_cmd = in.wr && w == kCmd;
    const bool wr_at_live = in.wr && w == kLive;
    Model n = *this;
    // Reads see this cycle's state.
    if (in.rd) {
      n.rdata = read_word(in.raddr, in);
      n.rhit = hit(in.raddr);
    }
    // Staging words.
    for (unsigned i = 0; i < kNumArgs; ++i)
      if (in.wr && w == arg_reg(i))
        n.args[i] = merge(args[i], in.wdata, in.wstrb) & (i == kArgSocket ? 0xFFFFU : 0xFFFFFFFFU);
    // Command and fence.
    n.wr = false;
    if (wr && wr_valid) n.busy = false;  // a write: done after its wr_o cycle
    if (fence && cycle == fence_w) {
      n.snapshot = in_total + (in.pkt_in ? 1U : 0U);
      n.g_snapshot = g_in_total + (in.g_in ? 1U : 0U);
    }
    // From W + 2: the packets that left up to cycle - 2 against the snapshot, the gather's too.
    if (fence && cycle >= fence_w + 2 && left_before_ >= snapshot && g_out_before_ >= g_snapshot) {
      n.fence = false;
      n.busy = false;
    }
    if (wr_at_cmd && !busy && (in.wdata & 0xF) < kEntries) {
      n.wr = true;
      n.wr_valid = (in.wdata >> 8) & 1U;
      n.wr_index = in.wdata & 0xF;
      n.busy = true;
      if (!n.wr_valid) {
        n.fence = true;
        n.fence_w = cycle + 1;
      }
    }
    // Live bits.
    n.live = wr_at_live && (in.wdata & 0xFFFF) < kStreams;
    if (n.live) {
      n.live_index = in.wdata & 0xFFFF;
      n.live_value = (in.wdata >> 31) & 1U;
    }
    // Rings.
    ring_write(n.rx, rx, in, in.rx_busy, kRxBaseLo, kRxBaseHi, kRxSize, kRxCtrl, kRxCons);
    ring_write(n.tx, tx, in, in.tx_busy, kTxBaseLo, kTxBaseHi, kTxSize, kTxCtrl, kTxProd);
    // Counters: each event registered once, then counted.
    std::array<bool, kNumCnt> ev = in.ev;
    ev[0] = in.pkt_in;
    for (unsigned i = 11; i < kNumCnt; ++i) ev[i] = false;
    if (in.g_drop && drop_counter(in.g_reason) != 0) ev[drop_counter(in.g_reason)] = true;
    // NET_TX_FAULT: a drop sets its association's bit, a write clears the bits written 1.
    std::uint32_t set = 0, clr = 0;
    if (in.g_drop && in.g_assoc < kEntries) set = 1U << in.g_assoc;
    if (in.wr && w == kFault) clr = merge(0, in.wdata, in.wstrb) & ((1U << kEntries) - 1);
    n.fault = (fault & ~clr) | set;
    if (in.g_drop && fault == 0) n.fault_reason = static_cast<std::uint32_t>(in.g_assoc) << 8 | (in.g_reason & 0xFU);
    for (unsigned i = 0; i < kNumCnt; ++i) n.cnt[i] = cnt[i] + (ev_q_[i] ? 1U : 0U);
    n.ev_q_ = ev;
    // Totals.
    n.in_total = in_total + (in.pkt_in ? 1U : 0U);
    n.left_total = left_total + in.pkt_drop + (in.pkt_done ? 1U : 0U);
    n.left_before_ = left_total;
    n.g_in_total = g_in_total + (in.g_in ? 1U : 0U);
    n.g_out_total = g_out_total + (in.g_out ? 1U : 0U);
    n.g_out_before_ = g_out_total;
    n.cycle = cycle + 1;
    *this = n;
  }

 private:
  std::array<bool, kNumCnt> ev_q_{};
  std::uint64_t left_before_ = 0;   // packets left in the cycles before the previous one
  std::uint64_t g_out_before_ = 0;  // the gather's packets out in the cycles before the previous one

  static void ring_write(Ring& n, const Ring& r, const In& in, bool busy_in, std::uint8_t lo, std::uint8_t hi,
                         std::uint8_t size, std::uint8_t ctrl, std::uint8_t index) {
    if (!in.wr) return;
    const unsigned w = in.waddr & 0xFC;
    const bool idle = !r.enable && !busy_in;  // CTRL reads 0
    if (w == lo && idle) n.base_lo = merge(r.base_lo, in.wdata, in.wstrb) & 0xFFFFF000U;
    if (w == hi && idle) n.base_hi = merge(r.base_hi, in.wdata, in.wstrb);
    if (w == size && idle) {
      const std::uint32_t v = merge(r.size_word(), in.wdata, in.wstrb);
      const std::uint32_t slots = v & 0x1F, slot = (v >> 8) & 0x1F;
      if (slots <= 15 && slot >= 12 && slot <= 16) {
        n.slots = slots;
        n.slot = slot;
      }
    }
    if (w == index) n.index = merge(r.index, in.wdata, in.wstrb);
    if (w == ctrl && (in.wstrb & 1U)) {
      n.enable = in.wdata & 1U;
      if (n.enable) n.index = 0;
    }
  }
};

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// The RTL and the model side by side; every cycle compares every output (throws on a difference).
class Bench {
 public:
  Bench() {
    apply(In{});
    sim_.reset();
  }

  Dut& dut() { return sim_.model(); }
  Model& model() { return m_; }
  std::uint64_t now() const { return m_.cycle; }
  // Background inputs of every cycle that a test does not set itself.
  In background;
  // Pulses seen (for the directed tests).
  unsigned wr_pulses = 0, live_pulses = 0;

  // One clock cycle with inputs `in`: compare the outputs of the cycle, then the edge.
  void cycle(const In& in) {
    apply(in);
    sim_.eval();
    compare(in);
    if (dut().wr_o) ++wr_pulses;
    if (dut().live_wr_o) ++live_pulses;
    sim_.tick();
    m_.step(in);
  }
  void idle(unsigned n = 1) {
    for (unsigned i = 0; i < n; ++i) cycle(background);
  }
  // A register write as rnic_regs gives it; returns whit.
  bool write(std::uint8_t a, std::uint32_t d, std::uint8_t strb = 0xF) {
    In in = background;
    in.wr = true;
    in.waddr = a;
    in.wdata = d;
    in.wstrb = strb;
    apply(in);
    sim_.eval();
    const bool hit = dut().reg_whit_o;
    cycle(in);
    return hit;
  }
  // A register read: its word, from the cycle after reg_rd_i (rhit in *hit).
  std::uint32_t read(std::uint8_t a, bool* hit = nullptr) {
    In in = background;
    in.rd = true;
    in.raddr = a;
    cycle(in);
    sim_.eval();
    if (hit != nullptr) *hit = dut().reg_rhit_o;
    return dut().reg_rdata_o;
  }
  void reset() {
    apply(In{});
    sim_.reset();
    m_ = Model{};
  }

 private:
  rnic::tb::StageSim<Dut> sim_;
  Model m_;

  void apply(const In& in) {
    Dut& d = dut();
    d.reg_wr_i = in.wr;
    d.reg_waddr_i = in.waddr;
    d.reg_wdata_i = in.wdata;
    d.reg_wstrb_i = in.wstrb;
    d.reg_rd_i = in.rd;
    d.reg_raddr_i = in.raddr;
    d.pkt_in_i = in.pkt_in;
    d.pkt_drop_i = in.pkt_drop;
    d.pkt_done_i = in.pkt_done;
    d.rx_prod_i = in.rx_prod;
    d.rx_busy_i = in.rx_busy;
    d.tx_cons_i = in.tx_cons;
    d.tx_busy_i = in.tx_busy;
    d.drop_crc_i = in.ev[1];
    d.drop_size_i = in.ev[2];
    d.drop_frame_i = in.ev[3];
    d.rx_drop_full_i = in.ev[4];
    d.rx_drop_size_i = in.ev[5];
    d.rx_bresp_err_i = in.ev[6];
    d.tx_sent_i = in.ev[7];
    d.tx_bad_i = in.ev[8];
    d.tx_rresp_err_i = in.ev[9];
    d.g_sent_i = in.ev[10];
    d.g_drop_i = in.g_drop;
    d.g_reason_i = in.g_reason;
    d.g_assoc_i = in.g_assoc;
    d.g_in_i = in.g_in;
    d.g_out_i = in.g_out;
  }

  void compare(const In& in) {
    Dut& d = dut();
    std::ostringstream err;
    const auto check = [&err](const char* what, std::uint64_t got, std::uint64_t want) {
      if (got != want) err << " " << what << " got " << hex(got) << " want " << hex(want) << ";";
    };
    check("reg_whit_o", d.reg_whit_o, Model::hit(in.waddr));
    check("reg_rdata_o", d.reg_rdata_o, m_.rdata);
    check("reg_rhit_o", d.reg_rhit_o, m_.rhit);
    check("wr_o", d.wr_o, m_.wr);
    if (m_.wr) {
      check("wr_index_o", d.wr_index_o, m_.wr_index);
      check("wr_valid_o", d.wr_valid_o, m_.wr_valid);
    }
    const auto& a = m_.args;
    check("wr_my_ip_o", d.wr_my_ip_o, a[0]);
    check("wr_their_ip_o", d.wr_their_ip_o, a[1]);
    check("wr_my_udp_port_o", d.wr_my_udp_port_o, a[2] & 0xFFFF);
    check("wr_their_udp_port_o", d.wr_their_udp_port_o, a[2] >> 16);
    check("wr_my_sctp_port_o", d.wr_my_sctp_port_o, a[3] & 0xFFFF);
    check("wr_their_sctp_port_o", d.wr_their_sctp_port_o, a[3] >> 16);
    check("wr_my_vtag_o", d.wr_my_vtag_o, a[4]);
    check("wr_stream_base_o", d.wr_stream_base_o, a[5] & 0xFFFF);
    check("wr_stream_count_o", d.wr_stream_count_o, a[5] >> 16);
    check("wr_socket_o", d.wr_socket_o, a[6] & 0xFFFF);
    check("wr_their_vtag_o", d.wr_their_vtag_o, a[7]);
    check("assoc_busy_o", d.assoc_busy_o, m_.busy);
    check("live_wr_o", d.live_wr_o, m_.live);
    if (m_.live) {
      check("live_index_o", d.live_index_o, m_.live_index);
      check("live_value_o", d.live_value_o, m_.live_value);
    }
    check("rx_enable_o", d.rx_enable_o, m_.rx.enable);
    check("rx_base_o", d.rx_base_o, std::uint64_t{m_.rx.base_hi} << 32 | m_.rx.base_lo);
    check("rx_log2_slots_o", d.rx_log2_slots_o, m_.rx.slots);
    check("rx_slot_log2_o", d.rx_slot_log2_o, m_.rx.slot);
    check("rx_cons_o", d.rx_cons_o, m_.rx.index);
    check("tx_enable_o", d.tx_enable_o, m_.tx.enable);
    check("tx_base_o", d.tx_base_o, std::uint64_t{m_.tx.base_hi} << 32 | m_.tx.base_lo);
    check("tx_log2_slots_o", d.tx_log2_slots_o, m_.tx.slots);
    check("tx_slot_log2_o", d.tx_slot_log2_o, m_.tx.slot);
    check("tx_prod_o", d.tx_prod_o, m_.tx.index);
    const std::string e = err.str();
    if (!e.empty()) throw std::runtime_error("cycle " + std::to_string(m_.cycle) + ":" + e);
  }
};

std::uint32_t rnd32(std::mt19937_64& rng) { return static_cast<std::uint32_t>(rng()); }

// ---- the map -------------------------------------------------------------------------------------------

TEST(NETREGS_SUITE, WindowHasEveryNetRow) {
  // hw.def's NET_* rows as this test reads them: 8 staging words, 15 counters, 17 other registers.
  ASSERT_EQ(words().size(), 8U + 15U + 17U);
  for (const Word& w : words()) EXPECT_EQ(w.offset % 4, 0U) << w.name;
}

TEST(NETREGS_SUITE, HitMissEveryOffset) {
  Bench b;
  for (unsigned a = 0; a < 0x100; a += 4) {
    const Word* w = word_at(static_cast<std::uint8_t>(a));
    bool rhit = false;
    const std::uint32_t v = b.read(static_cast<std::uint8_t>(a), &rhit);
    EXPECT_EQ(rhit, w != nullptr) << "read at " << hex(a);
    if (w == nullptr) {
      EXPECT_EQ(v, 0U) << "read at " << hex(a);
    }
    // whit, with data that would change a register if the write were taken (a miss must change nothing;
    // the model compares every output and every later read).
    EXPECT_EQ(b.write(static_cast<std::uint8_t>(a), w == nullptr ? 0xFFFFFFFFU : 0U, 0xF), w != nullptr)
        << "write at " << hex(a);
    b.idle(4);
  }
  for (unsigned a = 0; a < 0x100; a += 4) b.read(static_cast<std::uint8_t>(a));
}

TEST(NETREGS_SUITE, ResetValues) {
  Bench b;
  EXPECT_EQ(b.dut().rx_base_o, 0U);
  EXPECT_EQ(b.dut().rx_log2_slots_o, 0U);
  EXPECT_EQ(b.dut().rx_slot_log2_o, rnic::hw::kNET_RX_SIZE_LOG2_SLOT_BYTES.reset);
  EXPECT_EQ(b.dut().rx_enable_o, 0U);
  EXPECT_EQ(b.dut().tx_slot_log2_o, rnic::hw::kNET_TX_SIZE_LOG2_SLOT_BYTES.reset);
  EXPECT_EQ(b.dut().assoc_busy_o, 0U);
  for (const Word& w : words()) {
    bool hit = false;
    const std::uint32_t v = b.read(w.offset, &hit);
    EXPECT_TRUE(hit) << w.name;
    // The fields' reset values (hw.def RNIC_BITS rows; write-only fields read 0).
    std::uint32_t want = 0;
#define RNIC_BITS(reg, field, lsb, bits, access, reset, desc) \
  if (w.name == #reg && std::string(#access) != "WO") want |= rnic::hw::k##reg##_##field.put(reset);
#include "rnic/hw/hw.def"
    if (w.name.rfind("NET_CNT", 0) == 0) want = kCountInit;
    EXPECT_EQ(v, want) << w.name;
  }
}

// The bits each RW word keeps.
std::uint32_t rw_mask(std::uint8_t a) {
  if (a == arg_reg(kArgSocket)) return 0xFFFF;               // [15:0] the VNx socket
  if (a == kRxBaseLo || a == kTxBaseLo) return 0xFFFFF000U;  // 4 KiB aligned
  if (a == kRxCtrl || a == kTxCtrl) return 0x1;
  return 0xFFFFFFFFU;
}

TEST(NETREGS_SUITE, RwRegistersTakeStrobes) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  Bench b;
  for (const Word& w : words()) {
    if (w.access != Access::kRW || w.offset == kRxSize || w.offset == kTxSize) continue;
    if (w.offset == kRxCtrl || w.offset == kTxCtrl) continue;  // RingCtrl* below
    if (w.offset == kFault) continue;                          // write-1-to-clear: TxFault* below
    std::uint32_t want = b.read(w.offset);
    for (unsigned strb = 0; strb < 16; ++strb) {
      const std::uint32_t d = rnd32(rng);
      EXPECT_TRUE(b.write(w.offset, d, static_cast<std::uint8_t>(strb))) << w.name;
      want = merge(want, d, strb) & rw_mask(w.offset);
      EXPECT_EQ(b.read(w.offset), want) << w.name << " strobes " << strb;
    }
  }
  // Each staging word shows on its wr_* fields.
  b.write(arg_reg(2), 0x22221111);
  b.write(arg_reg(3), 0x44443333);
  b.write(arg_reg(5), 0x66665555);
  b.write(arg_reg(6), 0xFFFF7777);
  b.idle();
  EXPECT_EQ(b.dut().wr_my_udp_port_o, 0x1111U);
  EXPECT_EQ(b.dut().wr_their_udp_port_o, 0x2222U);
  EXPECT_EQ(b.dut().wr_my_sctp_port_o, 0x3333U);
  EXPECT_EQ(b.dut().wr_their_sctp_port_o, 0x4444U);
  EXPECT_EQ(b.dut().wr_stream_base_o, 0x5555U);
  EXPECT_EQ(b.dut().wr_stream_count_o, 0x6666U);
  EXPECT_EQ(b.dut().wr_socket_o, 0x7777U);
  EXPECT_EQ(b.read(arg_reg(6)), 0x7777U);
}

TEST(NETREGS_SUITE, RoAndWoRegisters) {
  Bench b;
  b.background.rx_prod = 0x12345678;
  b.background.tx_cons = 0x9ABCDEF0;
  for (const Word& w : words()) {
    if (w.access == Access::kRO) {
      const std::uint32_t before = b.read(w.offset);
      EXPECT_TRUE(b.write(w.offset, ~before)) << w.name;  // hit, ignored
      b.idle(3);
      EXPECT_EQ(b.read(w.offset), before) << w.name;
    } else if (w.access == Access::kWO) {
      EXPECT_EQ(b.read(w.offset), 0U) << w.name;
    }
  }
  EXPECT_EQ(b.read(kRxProd), 0x12345678U);
  EXPECT_EQ(b.read(kTxCons), 0x9ABCDEF0U);
  // A write of STATUS does not start or end anything.
  EXPECT_EQ(b.wr_pulses, 0U);
  EXPECT_EQ(b.read(kStatus), 0U);
}

TEST(NETREGS_SUITE, ReadHoldsUntilNextRead) {
  Bench b;
  b.write(kRxCons, 0x1111);
  EXPECT_EQ(b.read(kRxCons), 0x1111U);
  b.write(kRxCons, 0x2222);
  for (int i = 0; i < 10; ++i) {
    b.idle();
    EXPECT_EQ(b.dut().reg_rdata_o, 0x1111U);
    EXPECT_EQ(b.dut().reg_rhit_o, 1U);
  }
  bool hit = true;
  EXPECT_EQ(b.read(0xFC, &hit), 0U);
  EXPECT_FALSE(hit);
  b.idle(5);
  EXPECT_EQ(b.dut().reg_rhit_o, 0U);
}

// ---- the association table -----------------------------------------------------------------------------

TEST(NETREGS_SUITE, AssocWritePulse) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  Bench b;
  for (unsigned idx = 0; idx < 16; ++idx) {
    std::array<std::uint32_t, kNumArgs> a{};
    for (unsigned i = 0; i < kNumArgs; ++i) {
      a[i] = rnd32(rng);
      b.write(arg_reg(i), a[i]);
    }
    const unsigned before = b.wr_pulses;
    // Bits other than [3:0] and 8 do not matter.
    b.write(kCmd, (rnd32(rng) & 0xFFFFFEF0U) | 0x100U | idx);
    if (idx >= kEntries) {
      EXPECT_EQ(b.dut().wr_o, 0U) << "index " << idx << " >= Entries is ignored";
      EXPECT_EQ(b.dut().assoc_busy_o, 0U);
      b.idle(3);
      EXPECT_EQ(b.wr_pulses, before);
      continue;
    }
    // The cycle after the write: one pulse with the staged fields, busy in that cycle only.
    Dut& d = b.dut();
    ASSERT_EQ(d.wr_o, 1U);
    EXPECT_EQ(d.wr_index_o, idx);
    EXPECT_EQ(d.wr_valid_o, 1U);
    EXPECT_EQ(d.wr_my_ip_o, a[0]);
    EXPECT_EQ(d.wr_their_ip_o, a[1]);
    EXPECT_EQ(d.wr_my_udp_port_o, a[2] & 0xFFFF);
    EXPECT_EQ(d.wr_their_udp_port_o, a[2] >> 16);
    EXPECT_EQ(d.wr_my_sctp_port_o, a[3] & 0xFFFF);
    EXPECT_EQ(d.wr_their_sctp_port_o, a[3] >> 16);
    EXPECT_EQ(d.wr_my_vtag_o, a[4]);
    EXPECT_EQ(d.wr_stream_base_o, a[5] & 0xFFFF);
    EXPECT_EQ(d.wr_stream_count_o, a[5] >> 16);
    EXPECT_EQ(d.wr_socket_o, a[6] & 0xFFFF);
    EXPECT_EQ(d.assoc_busy_o, 1U);
    b.idle();
    EXPECT_EQ(d.wr_o, 0U);
    EXPECT_EQ(d.assoc_busy_o, 0U);
    EXPECT_EQ(b.read(kStatus), 0U);
    EXPECT_EQ(b.wr_pulses, before + 1);
  }
}

// Clears one entry with nothing in flight: wr_o with valid 0, then busy for three cycles in all.
TEST(NETREGS_SUITE, ClearWithNothingInFlight) {
  Bench b;
  b.write(kCmd, 3);  // bit 8 = 0: clear entry 3
  Dut& d = b.dut();
  ASSERT_EQ(d.wr_o, 1U);
  EXPECT_EQ(d.wr_valid_o, 0U);
  EXPECT_EQ(d.wr_index_o, 3U);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(d.assoc_busy_o, 1U) << "cycle W + " << i;
    b.idle();
  }
  EXPECT_EQ(d.assoc_busy_o, 0U);
  EXPECT_EQ(b.wr_pulses, 1U);
}

// Packets in flight at the clear: busy until exactly as many have left as had entered up to the wr_o
// cycle; packets entering later do not extend it; commands while busy are ignored.
TEST(NETREGS_SUITE, ClearFenceDirected) {
  Bench b;
  Dut& d = b.dut();
  In p = b.background;
  p.pkt_in = true;
  for (int i = 0; i < 5; ++i) b.cycle(p);   // 5 packets in
  b.write(kCmd, 0x0);                       // clear entry 0 in C; W = C + 1
  b.cycle(p);                               // W: a sixth packet, counted (it entered up to W)
  for (int i = 0; i < 20; ++i) b.cycle(p);  // later packets: not waited for
  EXPECT_EQ(d.assoc_busy_o, 1U);
  // Commands while busy: ignored.
  const unsigned pulses = b.wr_pulses;
  EXPECT_TRUE(b.write(kCmd, 0x101));
  EXPECT_TRUE(b.write(kCmd, 0x002));
  b.idle(3);
  EXPECT_EQ(b.wr_pulses, pulses);
  // Four drops in one cycle (3 + a summary), one more: 5 of 6.
  In l = b.background;
  l.pkt_drop = 3;
  l.pkt_done = true;
  b.cycle(l);
  l.pkt_drop = 1;
  l.pkt_done = false;
  b.cycle(l);
  b.idle(10);
  EXPECT_EQ(d.assoc_busy_o, 1U);
  EXPECT_EQ(b.read(kStatus), 1U);
  // The sixth leaves in cycle P: busy reads 0 from P + 3 on.
  l.pkt_drop = 0;
  l.pkt_done = true;
  b.cycle(l);
  EXPECT_EQ(d.assoc_busy_o, 1U);  // P + 1
  b.idle();
  EXPECT_EQ(d.assoc_busy_o, 1U);  // P + 2
  b.idle();
  EXPECT_EQ(d.assoc_busy_o, 0U);  // P + 3
  EXPECT_EQ(b.read(kStatus), 0U);
  // A command is taken again.
  b.write(kCmd, 0x105);
  EXPECT_EQ(d.wr_o, 1U);
}

// Random packet traffic (entries, drops of 0..3 per cycle, summaries) with clears, writes and
// commands while busy; the model checks busy in every cycle.
void fence_random(Bench& b, std::mt19937_64& rng, unsigned cycles, unsigned max_in_flight) {
  std::uint64_t in_flight = 0;
  unsigned clears = 0, done = 0;
  bool was_busy = false;
  for (unsigned c = 0; c < cycles; ++c) {
    In in = b.background;
    const unsigned mode = static_cast<unsigned>((c / 500) % 3);  // bursts in, bursts out, mixed
    in.pkt_in = in_flight < max_in_flight && rng() % 4 < (mode == 0 ? 3U : mode == 1 ? 0U : 1U);
    std::uint64_t can_leave = in_flight;
    if (can_leave > 0 && rng() % 4 < (mode == 1 ? 3U : 1U)) {
      in.pkt_drop = static_cast<std::uint8_t>(std::min<std::uint64_t>(rng() % 4, can_leave));
      can_leave -= in.pkt_drop;
    }
    if (can_leave > 0 && rng() % 3 == 0) in.pkt_done = true;
    in_flight += (in.pkt_in ? 1U : 0U);
    in_flight -= in.pkt_drop + (in.pkt_done ? 1U : 0U);
    if (rng() % 16 == 0) {
      in.wr = true;
      in.waddr = kCmd;
      in.wstrb = 0xF;
      in.wdata = static_cast<std::uint32_t>(rng() % 16) | (rng() % 3 == 0 ? 0x100U : 0U);
      if (!b.model().busy && (in.wdata & 0x100U) == 0 && (in.wdata & 0xF) < kEntries) ++clears;
    } else if (rng() % 8 == 0) {
      in.rd = true;
      in.raddr = kStatus;
    }
    b.cycle(in);
    if (was_busy && !b.model().busy) ++done;
    was_busy = b.model().busy;
  }
  std::printf("[   INFO   ] %u cycles, %u clears taken, %u commands finished\n", cycles, clears, done);
  EXPECT_GT(clears, 0U);
}

TEST(NETREGS_SUITE, ClearFenceRandom) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  Bench b;
  fence_random(b, rng, 60000, 64);
  fence_random(b, rng, 20000, 2);
}

// More than 2^16 packets in flight at the clear (a 16-bit count would wrap) and leaving through
// every kind of exit, with packets entering after the clear.
TEST(NETREGS_SUITE, ClearFenceManyPackets) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  Bench b;
  constexpr std::uint64_t kPackets = 70000;
  In p = b.background;
  p.pkt_in = true;
  for (std::uint64_t i = 0; i < kPackets; ++i) b.cycle(p);
  b.write(kCmd, 0x1);
  std::uint64_t left = 0;
  std::uint64_t cycles = 0;
  while (left < kPackets) {
    In in = b.background;
    in.pkt_in = cycles > 0 && rng() % 2 == 0;  // after W (the first cycle here): not waited for
    const std::uint64_t room = kPackets - left;
    in.pkt_drop = static_cast<std::uint8_t>(std::min<std::uint64_t>(rng() % 4, room));
    in.pkt_done = room > in.pkt_drop && rng() % 2 == 0;
    left += in.pkt_drop + (in.pkt_done ? 1U : 0U);
    b.cycle(in);
    ++cycles;
    if (left < kPackets) {
      ASSERT_EQ(b.dut().assoc_busy_o, 1U) << "left " << left;
    }
  }
  b.idle(2);
  EXPECT_EQ(b.dut().assoc_busy_o, 0U);
  std::printf("[   INFO   ] %llu packets drained in %llu cycles\n", static_cast<unsigned long long>(kPackets),
              static_cast<unsigned long long>(cycles));
}

// Suite Small starts every counter at 2^32 - 256: clears whose snapshot or left count crosses the wrap
// (an unsigned compare would end the fence at once). At the defaults the same sequence runs below it.
TEST(NETREGS_SUITE, ClearFenceAcrossCounterWrap) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  Bench b;
  In p = b.background;
  p.pkt_in = true;
  for (unsigned round = 0; round < 6; ++round) {
    for (int i = 0; i < 100; ++i) b.cycle(p);  // 100 in per round; the counts wrap in round 2
    b.write(kCmd, 0x2);                        // nothing enters in C and W: the snapshot is these 100
    In l = b.background;
    l.pkt_done = true;
    for (int k = 1; k <= 100; ++k) {
      b.cycle(l);
      ASSERT_EQ(b.dut().assoc_busy_o, 1U) << "round " << round << ", " << k << " left";
    }
    b.idle();
    ASSERT_EQ(b.dut().assoc_busy_o, 1U) << "round " << round;
    b.idle();
    ASSERT_EQ(b.dut().assoc_busy_o, 0U) << "round " << round;
  }
  fence_random(b, rng, 5000, 300);
}

TEST(NETREGS_SUITE, ResetDuringFence) {
  Bench b;
  In p = b.background;
  p.pkt_in = true;
  for (int i = 0; i < 10; ++i) b.cycle(p);
  b.write(kCmd, 0x4);
  b.idle(3);
  ASSERT_EQ(b.dut().assoc_busy_o, 1U);
  b.reset();
  EXPECT_EQ(b.dut().assoc_busy_o, 0U);
  b.write(kCmd, 0x4);
  b.idle(3);
  EXPECT_EQ(b.dut().assoc_busy_o, 0U);
}

// ---- live bits -----------------------------------------------------------------------------------------

TEST(NETREGS_SUITE, StreamLive) {
  Bench b;
  Dut& d = b.dut();
  const std::uint32_t cases[] = {0x80000000U,  0x00000001U,     0x80000000U | (kStreams - 1),
                                 kStreams - 1, 0x7FFF0000U | 5, 0x80000000U | kStreams,
                                 0xFFFFU,      0x8000FFFFU};
  for (const std::uint32_t v : cases) {
    const unsigned before = b.live_pulses;
    EXPECT_TRUE(b.write(kLive, v));
    const bool taken = (v & 0xFFFF) < kStreams;
    ASSERT_EQ(d.live_wr_o, taken ? 1U : 0U) << hex(v);
    if (taken) {
      EXPECT_EQ(d.live_index_o, v & 0xFFFF);
      EXPECT_EQ(d.live_value_o, v >> 31);
    }
    b.idle();
    EXPECT_EQ(d.live_wr_o, 0U);
    EXPECT_EQ(b.live_pulses, before + (taken ? 1U : 0U));
    EXPECT_EQ(b.read(kLive), 0U);
  }
  // Back to back: one pulse each.
  b.write(kLive, 0x80000002U);
  b.write(kLive, 0x00000003U);
  b.idle(2);
  EXPECT_EQ(b.model().live_index, 3U);
}

// ---- rings ---------------------------------------------------------------------------------------------

struct RingRegs {
  const char* name;
  std::uint8_t lo, hi, size, ctrl, index;
  bool In::*busy;
};
const RingRegs kRings[] = {{"rx", kRxBaseLo, kRxBaseHi, kRxSize, kRxCtrl, kRxCons, &In::rx_busy},
                           {"tx", kTxBaseLo, kTxBaseHi, kTxSize, kTxCtrl, kTxProd, &In::tx_busy}};

TEST(NETREGS_SUITE, RingConfigRules) {
  for (const RingRegs& r : kRings) {
    SCOPED_TRACE(r.name);
    Bench b;
    // Taken while CTRL reads 0; BASE_LO [11:0] read and drive 0.
    b.write(r.lo, 0x12345FFFU);
    b.write(r.hi, 0xCAFEF00DU);
    b.write(r.size, 14U << 8 | 7U);
    EXPECT_EQ(b.read(r.lo), 0x12345000U);
    EXPECT_EQ(b.read(r.hi), 0xCAFEF00DU);
    EXPECT_EQ(b.read(r.size), 14U << 8 | 7U);
    // Invalid sizes: ignored whole.
    for (const std::uint32_t v : {16U << 8 | 16U, 11U << 8 | 3U, 17U << 8 | 3U, 12U << 8 | 31U, 31U << 8 | 0U, 0U}) {
      b.write(r.size, v);
      EXPECT_EQ(b.read(r.size), 14U << 8 | 7U) << hex(v);
    }
    // Limits are valid; strobes merge before the check (byte 1 alone keeps the slot count).
    b.write(r.size, 0xFFFF0000U | 16U << 8 | 15U);
    EXPECT_EQ(b.read(r.size), 16U << 8 | 15U);
    b.write(r.size, 12U << 8 | 0U, 0x2);
    EXPECT_EQ(b.read(r.size), 12U << 8 | 15U);
    b.write(r.size, 11U << 8 | 0U, 0x1);  // byte 0 only: slots 0, slot 12 kept
    EXPECT_EQ(b.read(r.size), 12U << 8 | 0U);
    // Enabled: ignored.
    b.write(r.ctrl, 1);
    EXPECT_EQ(b.read(r.ctrl), 1U);
    b.write(r.lo, 0xFFFFF000U);
    b.write(r.hi, 0);
    b.write(r.size, 13U << 8 | 2U);
    EXPECT_EQ(b.read(r.lo), 0x12345000U);
    EXPECT_EQ(b.read(r.hi), 0xCAFEF00DU);
    EXPECT_EQ(b.read(r.size), 12U << 8 | 0U);
    // Disabled but busy: ignored, CTRL reads {busy, enable}.
    b.write(r.ctrl, 0);
    b.background.*r.busy = true;
    EXPECT_EQ(b.read(r.ctrl), 2U);
    b.write(r.lo, 0xFFFFF000U);
    b.write(r.hi, 0);
    b.write(r.size, 13U << 8 | 2U);
    EXPECT_EQ(b.read(r.lo), 0x12345000U);
    EXPECT_EQ(b.read(r.hi), 0xCAFEF00DU);
    EXPECT_EQ(b.read(r.size), 12U << 8 | 0U);
    // Enabled and busy, then idle again: taken.
    b.write(r.ctrl, 1);
    EXPECT_EQ(b.read(r.ctrl), 3U);
    b.write(r.ctrl, 0);
    b.background.*r.busy = false;
    EXPECT_EQ(b.read(r.ctrl), 0U);
    b.write(r.lo, 0xFFFFF000U);
    b.write(r.hi, 0);
    b.write(r.size, 13U << 8 | 2U);
    EXPECT_EQ(b.read(r.lo), 0xFFFFF000U);
    EXPECT_EQ(b.read(r.hi), 0U);
    EXPECT_EQ(b.read(r.size), 13U << 8 | 2U);
    const bool rx = r.lo == kRxBaseLo;
    EXPECT_EQ(rx ? b.dut().rx_base_o : b.dut().tx_base_o, 0xFFFFF000U);
    EXPECT_EQ(rx ? b.dut().rx_log2_slots_o : b.dut().tx_log2_slots_o, 2U);
    EXPECT_EQ(rx ? b.dut().rx_slot_log2_o : b.dut().tx_slot_log2_o, 13U);
  }
}

TEST(NETREGS_SUITE, RingCtrlResetsIndex) {
  for (const RingRegs& r : kRings) {
    SCOPED_TRACE(r.name);
    Bench b;
    const bool rx = r.lo == kRxBaseLo;
    const auto index = [&b, rx] { return rx ? b.dut().rx_cons_o : b.dut().tx_prod_o; };
    const auto enable = [&b, rx] { return rx ? b.dut().rx_enable_o : b.dut().tx_enable_o; };
    b.write(r.index, 0xDEADBEEFU);
    EXPECT_EQ(index(), 0xDEADBEEFU);
    b.write(r.ctrl, 0xFFFFFFFEU);  // bit 0 = 0: disable, the index stays
    EXPECT_EQ(index(), 0xDEADBEEFU);
    EXPECT_EQ(b.read(r.ctrl), 0U);
    b.write(r.ctrl, 0x1, 0xE);  // no strobe on byte 0: nothing
    EXPECT_EQ(enable(), 0U);
    EXPECT_EQ(index(), 0xDEADBEEFU);
    b.write(r.ctrl, 0x1);  // enable: index 0
    EXPECT_EQ(enable(), 1U);
    EXPECT_EQ(index(), 0U);
    b.write(r.index, 0x00000505U, 0x1);
    EXPECT_EQ(b.read(r.index), 0x05U);
    b.write(r.ctrl, 0x1);  // 1 again: index 0 again
    EXPECT_EQ(index(), 0U);
    b.write(r.index, 7);
    b.write(r.ctrl, 0x0);  // disable: kept
    EXPECT_EQ(b.read(r.index), 7U);
    EXPECT_EQ(enable(), 0U);
  }
}

// ---- counters ------------------------------------------------------------------------------------------

TEST(NETREGS_SUITE, Counters) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  Bench b;
  std::array<std::uint64_t, kNumCnt> sent{};
  for (unsigned c = 0; c < 3000; ++c) {
    In in = b.background;
    const unsigned density = static_cast<unsigned>(c / 1000);  // sparse, half, every cycle
    for (unsigned i = 0; i <= 11; ++i) {
      const bool e = density == 2 ? true : density == 1 ? rng() % 2 == 0 : rng() % 16 == 0;
      if (i == 0) {
        in.pkt_in = e;
      } else if (i <= 10) {
        in.ev[i] = e;
        sent[i] += e ? 1U : 0U;
      } else if (e) {  // a gather drop (one a cycle at most): its class's counter
        in.g_drop = true;
        in.g_reason = static_cast<std::uint8_t>(1 + rng() % 15);  // 14, 15: no class
        in.g_assoc = static_cast<std::uint8_t>(rng() % 32);
        if (drop_counter(in.g_reason) != 0) ++sent[drop_counter(in.g_reason)];
      }
      if (i == 0) sent[0] += e ? 1U : 0U;
    }
    if (rng() % 4 == 0) {
      in.rd = true;
      in.raddr = cnt_reg(static_cast<unsigned>(rng() % kNumCnt));
    }
    b.cycle(in);
  }
  b.idle(2);
  for (unsigned i = 0; i < kNumCnt; ++i)
    EXPECT_EQ(b.read(cnt_reg(i)), static_cast<std::uint32_t>(kCountInit + sent[i])) << "NET_CNT" << i;
  // Each counter alone: one event, read two cycles later.
  for (unsigned i = 0; i < kNumCnt; ++i) {
    const std::uint32_t before = b.read(cnt_reg(i));
    In in = b.background;
    if (i == 0) {
      in.pkt_in = true;
    } else if (i <= 10) {
      in.ev[i] = true;
    } else {
      in.g_drop = true;
      in.g_reason = static_cast<std::uint8_t>(i == 11   ? hw::kNET_TX_DROP_ASSOC
                                              : i == 12 ? hw::kNET_TX_DROP_LENGTH
                                              : i == 13 ? hw::kNET_TX_DROP_BOUNDS
                                                        : hw::kNET_TX_DROP_READ_ERROR);
    }
    b.cycle(in);
    b.idle();
    EXPECT_EQ(b.read(cnt_reg(i)), before + 1) << "NET_CNT" << i;
    for (unsigned j = 0; j < kNumCnt; ++j)
      if (j != i) {
        EXPECT_EQ(b.read(cnt_reg(j)), static_cast<std::uint32_t>(kCountInit + sent[j] + (j < i ? 1U : 0U)));
      }
  }
}

// ---- NET_TX_FAULT (issue 35, docs/transmit.md) ---------------------------------------------------------

TEST(NETREGS_SUITE, TxFaultSetsPerAssociationAndClearsOnWriteOne) {
  Bench b;
  const auto drop = [&b](unsigned assoc, unsigned reason) {
    In in = b.background;
    in.g_drop = true;
    in.g_assoc = static_cast<std::uint8_t>(assoc);
    in.g_reason = static_cast<std::uint8_t>(reason);
    b.cycle(in);
  };
  EXPECT_EQ(b.read(kFault), 0U);
  drop(1, hw::kNET_TX_DROP_BOUNDS);
  drop(kEntries - 1, hw::kNET_TX_DROP_STAG);
  const std::uint32_t both = 1U << 1 | 1U << (kEntries - 1);
  EXPECT_EQ(b.read(kFault), both);
  // The reason of the first drop since NET_TX_FAULT read 0, with its association.
  EXPECT_EQ(b.read(kFaultReason), 1U << 8 | hw::kNET_TX_DROP_BOUNDS);
  // Write 1 clears, 0 keeps; a byte not strobed keeps its bits.
  EXPECT_TRUE(b.write(kFault, 1U << 1, 0x0));
  EXPECT_EQ(b.read(kFault), both);
  EXPECT_TRUE(b.write(kFault, 1U << 1));
  EXPECT_EQ(b.read(kFault), 1U << (kEntries - 1));
  EXPECT_EQ(b.read(kFaultReason), 1U << 8 | hw::kNET_TX_DROP_BOUNDS);  // held while a bit is set
  EXPECT_TRUE(b.write(kFault, 0xFFFFFFFFU));
  EXPECT_EQ(b.read(kFault), 0U);
  // An association past the table sets no bit.
  drop(kEntries + 3, hw::kNET_TX_DROP_ASSOC);
  EXPECT_EQ(b.read(kFault), 0U);
  EXPECT_EQ(b.read(kFaultReason), (kEntries + 3) << 8 | hw::kNET_TX_DROP_ASSOC);
  // A drop in the cycle of the clear of its own bit leaves it set.
  drop(2, hw::kNET_TX_DROP_READ_ERROR);
  In in = b.background;
  in.wr = true;
  in.waddr = kFault;
  in.wdata = 1U << 2;
  in.wstrb = 0xF;
  in.g_drop = true;
  in.g_assoc = 2;
  in.g_reason = hw::kNET_TX_DROP_PD;
  b.cycle(in);
  EXPECT_EQ(b.read(kFault), 1U << 2);
}

// The clear's fence waits for the gather packets that entered the gather up to the clear (issue 35:
// the gather read the entry; none of their reads may outlive the clear).
TEST(NETREGS_SUITE, ClearFenceWaitsForTheGather) {
  Bench b;
  In in = b.background;
  in.g_in = true;
  b.cycle(in);
  b.cycle(in);         // two gather packets in
  b.write(kCmd, 0x3);  // clear entry 3
  b.idle(20);
  EXPECT_TRUE(b.dut().assoc_busy_o);
  in = b.background;
  in.g_out = true;
  b.cycle(in);
  b.idle(20);
  EXPECT_TRUE(b.dut().assoc_busy_o);  // one is still in the gather
  b.cycle(in);
  b.idle(4);
  EXPECT_FALSE(b.dut().assoc_busy_o);
}

// ---- everything at once --------------------------------------------------------------------------------

TEST(NETREGS_SUITE, RandomEverything) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  Bench b;
  std::vector<std::uint8_t> offsets;
  for (const Word& w : words()) offsets.push_back(w.offset);
  std::uint64_t in_flight = 0, g_in_flight = 0;
  for (unsigned c = 0; c < 200000; ++c) {
    In in = b.background;
    if (rng() % 2 == 0) {
      in.wr = true;
      // Mostly registers of the window; sometimes any offset.
      in.waddr = rng() % 8 == 0 ? static_cast<std::uint8_t>(rng() & 0xFC) : offsets[rng() % offsets.size()];
      in.wstrb = rng() % 2 == 0 ? 0xF : static_cast<std::uint8_t>(rng() % 16);
      in.wdata = rnd32(rng);
      if (rng() % 2 == 0 && (in.waddr == kRxSize || in.waddr == kTxSize))  // often a valid size
        in.wdata = static_cast<std::uint32_t>((12 + rng() % 5) << 8 | rng() % 16);
      if (in.waddr == kCmd && rng() % 2 == 0) in.wdata &= 0x10F;
      if (in.waddr == kLive && rng() % 2 == 0) in.wdata &= 0x800001FFU;
      if ((in.waddr == kRxCtrl || in.waddr == kTxCtrl) && rng() % 4 != 0) in.wdata = 0;  // mostly disabled
    }
    if (rng() % 2 == 0) {
      in.rd = true;
      in.raddr = rng() % 8 == 0 ? static_cast<std::uint8_t>(rng() & 0xFC) : offsets[rng() % offsets.size()];
    }
    in.pkt_in = rng() % 3 == 0;
    in_flight += in.pkt_in ? 1U : 0U;
    if (in_flight > 0 && rng() % 3 == 0) {
      in.pkt_drop = static_cast<std::uint8_t>(std::min<std::uint64_t>(rng() % 4, in_flight));
      in_flight -= in.pkt_drop;
    }
    if (in_flight > 0 && rng() % 3 == 0) {
      in.pkt_done = true;
      --in_flight;
    }
    for (unsigned i = 1; i <= 10; ++i) in.ev[i] = rng() % 4 == 0;
    if (rng() % 8 == 0) {
      in.g_drop = true;
      in.g_reason = static_cast<std::uint8_t>(rng() % 16);
      in.g_assoc = static_cast<std::uint8_t>(rng() % 8 == 0 ? rng() % 256 : rng() % kEntries);
    }
    in.g_in = g_in_flight < 3 && rng() % 5 == 0;  // at most 3 in the gather (rnic_net_tx)
    g_in_flight += in.g_in ? 1U : 0U;
    if (g_in_flight > 0 && !in.g_in && rng() % 5 == 0) {
      in.g_out = true;
      --g_in_flight;
    }
    in.rx_prod = rnd32(rng);
    in.tx_cons = rnd32(rng);
    if (rng() % 64 == 0) b.background.rx_busy = !b.background.rx_busy;
    if (rng() % 64 == 0) b.background.tx_busy = !b.background.tx_busy;
    in.rx_busy = b.background.rx_busy;
    in.tx_busy = b.background.tx_busy;
    b.cycle(in);
  }
  std::printf("[   INFO   ] %u table pulses, %u live pulses\n", b.wr_pulses, b.live_pulses);
  EXPECT_GT(b.wr_pulses, 100U);
  EXPECT_GT(b.live_pulses, 100U);
}

// ---- figures -------------------------------------------------------------------------------------------

// Cycles a driver sees: a table write (pulse to done), a clear with nothing in flight, live writes back to
// back, a read's latency.
TEST(NETREGS_SUITE, CommandThroughput) {
  Bench b;
  std::uint64_t c0 = b.now();
  for (unsigned i = 0; i < 100; ++i) {
    b.write(kCmd, 0x100U | (i % kEntries));
    while (b.dut().assoc_busy_o) b.idle();
  }
  const double write_cycles = static_cast<double>(b.now() - c0) / 100.0;
  c0 = b.now();
  for (unsigned i = 0; i < 100; ++i) {
    b.write(kCmd, i % kEntries);
    while (b.dut().assoc_busy_o) b.idle();
  }
  const double clear_cycles = static_cast<double>(b.now() - c0) / 100.0;
  c0 = b.now();
  for (unsigned i = 0; i < 100; ++i) b.write(kLive, 0x80000000U | (i % kStreams));
  b.idle();
  const double live_cycles = static_cast<double>(b.now() - c0) / 100.0;
  std::printf(
      "[  FIGURE  ] cycles per command: table write %.1f, clear (nothing in flight) %.1f, "
      "live write %.2f; read data 1 cycle after reg_rd_i\n",
      write_cycles, clear_cycles, live_cycles);
  EXPECT_LE(write_cycles, 4.0);
  EXPECT_LE(clear_cycles, 8.0);
  EXPECT_EQ(b.live_pulses, 100U);
}

}  // namespace
