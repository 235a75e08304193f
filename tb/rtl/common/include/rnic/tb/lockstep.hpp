// SPDX-License-Identifier: Apache-2.0
// LockstepKernel<Rtl, C>: the Verilated RTL and the SystemC-HLS model run together, every host-memory
// write and every completion compared as they happen.
//
// The testbench sees the RTL: LockstepKernel is the Verilated class (its ports, trace, final) and every bus
// model of the testbench drives it as usual. The model runs beside it on the same clock as a shadow:
//   - every AXI-Stream beat and every AXI4-Lite transaction the RTL accepts is replayed to the model, beats
//     in their order and AXI4-Lite transactions in theirs. A beat waits for every AXI4-Lite transaction
//     the RTL accepted before it (a doorbell before a segment is seen before it); a CMD write waits until
//     the model has taken every earlier beat and its segments have reached lookup (the testbench drains
//     the RTL before a command, so the command falls between the same segments on both sides); other
//     AXI4-Lite writes do not wait for beats. The harness consumes the model's completion ring itself (the
//     RTL's CQ_CONS writes are not replayed), and a CQ_CTRL write waits for the completions the RTL had
//     written before it. A read of CMD_STATUS that found the RTL idle is repeated on the model until the model is idle
//     too;
//   - the model's AXI4 master is served by a shadow slave: writes are taken and compared, reads come
//     from the testbench's host memory (lockstep_attach), with the RTL's RRESP for the same address;
//   - writes are compared as byte streams (address and data, in the order each side writes them, bursts
//     and beats split anywhere), separately for data placement and for the completion ring (whole 64-byte
//     entries, in order).
// The first difference throws LockstepDivergence from eval(): the seed, the cycle, and both sides'
// transactions. lockstep_finish() runs the model on until it is quiet and compares what is left.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "rnic/bus/sc_kernel.hpp"
#include "rnic/bus/sim.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/tb/lockstep_hooks.hpp"

namespace rnic::tb {

class LockstepDivergence : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class Rtl, class C>
class LockstepKernel : public Rtl {
 public:
  static constexpr unsigned kBytes = C::BYTES;

  explicit LockstepKernel(VerilatedContext* ctx, const char* name = "tb") : Rtl(ctx, name) {
    const char* t = std::getenv("RNIC_LOCKSTEP_TRACE");
    trace_ = t != nullptr && *t != '\0' && *t != '0';
  }

  void attach(const std::uint8_t* mem, std::size_t size, std::uint64_t seed) {
    mem_ = mem;
    mem_size_ = size;
    seed_ = seed;
  }
  void diverge(unsigned stream) { diverged_[stream] = true; }
  // Memory a diverged stream may write (KernelEnv::excuse): RTL and model may legally write it differently,
  // so from now on neither side's writes there are compared, and what is not yet compared is dropped.
  void excuse(std::uint64_t addr, std::uint64_t len) {
    excused_.push_back({addr, addr + len});
    for (auto& runs : data_) {
      std::deque<Run> kept;
      for (const Run& r : runs) {
        for (std::size_t i = 0; i < r.data.size(); ++i) {
          const std::uint64_t a = r.addr + i;
          if (is_excused(a)) continue;
          if (!kept.empty() && kept.back().addr + kept.back().data.size() == a) {
            kept.back().data.push_back(r.data[i]);
          } else {
            kept.push_back(Run{a, {r.data[i]}, r.cycle});
          }
        }
      }
      runs.swap(kept);
    }
  }
  // The harness's own test: the next beat replayed to the model has byte `index` XORed with `mask` (a
  // model that disagrees with the RTL), so the comparison must report a divergence.
  void corrupt_next_model_beat(unsigned index, std::uint8_t mask) {
    corrupt_index_ = index;
    corrupt_mask_ = mask;
    corrupt_ = true;
  }
  std::uint64_t compared_bytes() const { return cmp_bytes_; }
  std::uint64_t compared_cqes() const { return cmp_cqes_; }

  void eval() {
    const bool rising = this->ap_clk != 0 && last_clk_ == 0;
    last_clk_ = this->ap_clk;
    if (rising) observe_rtl();
    Rtl::eval();
    if (rising) {
      step_model();
      ++cycle_;
    }
  }

  // The model alone, until it has taken everything the RTL took and been quiet for a while; then what is
  // left unmatched on either side is a divergence. "" when both agree.
  std::string finish() {
    std::uint64_t quiet = 0;
    for (std::uint64_t i = 0; i < 400000 && quiet < 400; ++i) {
      const std::uint64_t before = model_activity_;
      step_model();
      ++cycle_;
      quiet = (beats_.empty() && mmio_.empty() && model_activity_ == before) ? quiet + 1 : 0;
    }
    try {
      compare();
    } catch (const LockstepDivergence& e) {
      return e.what();
    }
    std::printf("[ LOCKSTEP ] RTL and SystemC model agreed on %llu host-memory bytes and %llu completions\n",
                static_cast<unsigned long long>(cmp_bytes_), static_cast<unsigned long long>(cmp_cqes_));
    std::string out;
    if (!beats_.empty() || !mmio_.empty())
      out += "lockstep: the model did not take " + std::to_string(beats_.size()) + " beats and " +
             std::to_string(mmio_.size()) + " AXI4-Lite transactions (next: " + op_str() +
             "; model: " + model_.model().channel_states() + ")\n";
    const auto left = [](const auto& side) {
      std::uint64_t n = 0;
      for (const auto& r : side) n += r.data.size();
      return n;
    };
    if (left(data_[0]) != 0 || left(data_[1]) != 0) {
      out += "lockstep: unmatched data bytes at the end: RTL " + std::to_string(left(data_[0])) + ", model " +
             std::to_string(left(data_[1])) + " (first: " + head_str(0) + " / " + head_str(1) + ")\n";
    }
    // What is left of streams the test declared diverged may legally differ in number.
    for (auto& q : cqe_) {
      std::deque<Cqe> kept;
      for (const Cqe& c : q)
        if (diverged_.count(c.bytes[0] | (unsigned{c.bytes[1]} << 8)) == 0) kept.push_back(c);
      q.swap(kept);
    }
    if (cqe_[0].size() != cqe_[1].size()) {
      out += "lockstep: completions at the end: RTL " + std::to_string(cqe_[0].size()) + " unmatched, model " +
             std::to_string(cqe_[1].size()) + " (first: " + (cqe_[0].empty() ? "none" : cqe_str(cqe_[0].front())) +
             " / " + (cqe_[1].empty() ? "none" : cqe_str(cqe_[1].front())) + ")\n";
    }
    return out;
  }

 private:
  struct Op {
    enum Kind { kBeat, kWrite, kRead };
    Kind kind = kBeat;
    // beat
    std::vector<std::uint8_t> data;
    std::uint64_t keep = 0;
    bool last = false;
    std::uint64_t user = 0;  // tuser: {net, DDP-SSN, stream}
    // AXI4-Lite
    std::uint16_t addr = 0;
    std::uint32_t wdata = 0;
    std::uint8_t wstrb = 0;
    bool rtl_idle = false;       // a CMD_STATUS read: the RTL answered not busy
    std::uint64_t seq = 0;       // order in which the RTL accepted it
    std::uint64_t rtl_cqes = 0;  // completion entries the RTL had written when it took this
  };
  struct Run {
    std::uint64_t addr;
    std::vector<std::uint8_t> data;
    std::uint64_t cycle;
  };
  struct Burst {
    std::uint64_t addr;
    unsigned beats;
    unsigned done = 0;
  };
  struct Cqe {
    std::uint64_t addr;
    std::vector<std::uint8_t> bytes;
    std::uint64_t cycle;
  };
  // Write-channel decoding of one side (RTL 0, model 1): AW and W paired in order (W may run ahead of
  // its AW handshake).
  struct WrSide {
    std::deque<Burst> aw;
    std::deque<std::pair<std::vector<std::uint8_t>, std::uint64_t>> w;  // data, strobes
    std::vector<std::uint8_t> cq_partial;
    std::uint64_t cq_partial_addr = 0;
  };

  // ---- the RTL side: what it accepted, what it wrote ------------------------------------------------
  template <class T>
  static std::vector<std::uint8_t> bytes_of(const T& v) {
    std::vector<std::uint8_t> out(kBytes);
    for (unsigned i = 0; i < kBytes; ++i) out[i] = rnic::bus::get_byte(v, i);
    return out;
  }
  template <class T>
  static std::uint64_t u64(const T& v) {
    std::uint64_t x = 0;
    for (unsigned i = 0; i < 8 && i < sizeof(T); ++i) x |= std::uint64_t{rnic::bus::get_byte(v, i)} << (8 * i);
    return x;
  }

  void observe_rtl() {
    Rtl& r = *this;
    if (r.s_axis_rx_tvalid && r.s_axis_rx_tready) {
      Op o;
      o.kind = Op::kBeat;
      o.data = bytes_of(r.s_axis_rx_tdata);
      o.keep = u64(r.s_axis_rx_tkeep);
      o.last = r.s_axis_rx_tlast != 0;
      o.user = r.s_axis_rx_tuser;
      o.seq = seq_++;
      beats_.push_back(std::move(o));
    }
    // AXI4-Lite: pair AW and W (either may come first).
    if (r.s_axi_control_awvalid && r.s_axi_control_awready) lite_aw_.push_back(r.s_axi_control_awaddr);
    if (r.s_axi_control_wvalid && r.s_axi_control_wready)
      lite_w_.push_back({r.s_axi_control_wdata, static_cast<std::uint8_t>(r.s_axi_control_wstrb)});
    while (!lite_aw_.empty() && !lite_w_.empty()) {
      Op o;
      o.kind = Op::kWrite;
      o.addr = lite_aw_.front();
      o.wdata = lite_w_.front().first;
      o.wstrb = lite_w_.front().second;
      lite_aw_.pop_front();
      lite_w_.pop_front();
      note_cq_config(o.addr, o.wdata);
      o.seq = seq_++;
      o.rtl_cqes = cqe_total_[0];
      mmio_.push_back(std::move(o));
    }
    if (r.s_axi_control_arvalid && r.s_axi_control_arready) lite_ar_.push_back(r.s_axi_control_araddr);
    if (r.s_axi_control_rvalid && r.s_axi_control_rready && !lite_ar_.empty()) {
      Op o;
      o.kind = Op::kRead;
      o.addr = lite_ar_.front();
      lite_ar_.pop_front();
      o.rtl_idle = o.addr == rnic::hw::kRegCMD_STATUS && (r.s_axi_control_rdata & 1u) == 0;
      o.seq = seq_++;
      mmio_.push_back(std::move(o));
    }
    // Host memory: writes, and the RRESP of each read address.
    if (r.m_axi_gmem_awvalid && r.m_axi_gmem_awready)
      wr_[0].aw.push_back(Burst{r.m_axi_gmem_awaddr, unsigned{r.m_axi_gmem_awlen} + 1u});
    if (r.m_axi_gmem_wvalid && r.m_axi_gmem_wready)
      wr_[0].w.push_back({bytes_of(r.m_axi_gmem_wdata), u64(r.m_axi_gmem_wstrb)});
    decode_writes(0);
    if (r.m_axi_gmem_arvalid && r.m_axi_gmem_arready) rtl_ar_.push_back(r.m_axi_gmem_araddr);
    if (r.m_axi_gmem_rvalid && r.m_axi_gmem_rready && !rtl_ar_.empty()) {
      rresp_[rtl_ar_.front()] = r.m_axi_gmem_rresp;
      if (r.m_axi_gmem_rlast) rtl_ar_.pop_front();
    }
    compare();
  }

  void note_cq_config(std::uint16_t addr, std::uint32_t v) {
    if (addr == rnic::hw::kRegCQ_BASE_LO) cq_base_ = (cq_base_ & ~0xFFFFFFFFull) | v;
    if (addr == rnic::hw::kRegCQ_BASE_HI) cq_base_ = (cq_base_ & 0xFFFFFFFFull) | (std::uint64_t{v} << 32);
    if (addr == rnic::hw::kRegCQ_LOG2_SIZE && v >= 1 && v <= 16) cq_log2_ = v;
    if (addr == rnic::hw::kRegCQ_CTRL && (v & 1u) != 0)
      rings_.push_back({cq_base_, cq_base_ + (std::uint64_t{rnic::hw::kCQE_BYTES} << cq_log2_)});
  }
  bool is_excused(std::uint64_t a) const {
    for (const auto& g : excused_)
      if (a >= g.first && a < g.second) return true;
    return false;
  }
  bool in_ring(std::uint64_t a) const {
    for (const auto& g : rings_)
      if (a >= g.first && a < g.second) return true;
    return false;
  }

  // Pairs W beats with their bursts; data bytes go to data_[side] as runs, completion-ring bytes are
  // gathered into 64-byte entries.
  void decode_writes(int side) {
    WrSide& s = wr_[side];
    while (!s.aw.empty() && !s.w.empty()) {
      Burst& b = s.aw.front();
      const auto& [d, strb] = s.w.front();
      const std::uint64_t base = (b.addr & ~std::uint64_t{kBytes - 1}) + std::uint64_t{b.done} * kBytes;
      for (unsigned i = 0; i < kBytes; ++i) {
        if (((strb >> i) & 1u) == 0) continue;
        const std::uint64_t a = base + i;
        if (in_ring(a)) {
          if (s.cq_partial.empty()) s.cq_partial_addr = a;
          s.cq_partial.push_back(d[i]);
          if (s.cq_partial.size() == rnic::hw::kCQE_BYTES) {
            cqe_[side].push_back(Cqe{s.cq_partial_addr, s.cq_partial, cycle_});
            ++cqe_total_[side];
            s.cq_partial.clear();
          }
          continue;
        }
        if (trace_)
          std::printf("lockstep %s cycle %llu: byte 0x%llx\n", side == 0 ? "RTL  " : "model",
                      static_cast<unsigned long long>(cycle_), static_cast<unsigned long long>(a));
        if (is_excused(a)) continue;
        auto& runs = data_[side];
        if (!runs.empty() && runs.back().addr + runs.back().data.size() == a) {
          runs.back().data.push_back(d[i]);
        } else {
          runs.push_back(Run{a, {d[i]}, cycle_});
        }
      }
      s.w.pop_front();
      if (++b.done == b.beats) s.aw.pop_front();
      if (side == 1) ++model_activity_;
    }
  }

  // ---- the model side --------------------------------------------------------------------------------
  // One edge of the model. Inputs for the edge are chosen from the state after the previous one; every
  // handshake of the edge is computed from those inputs and the model's registered outputs before it.
  void step_model() {
    auto& m = model_;
    m.s_axis_rx_tvalid = 0;
    m.s_axi_control_awvalid = m.s_axi_control_wvalid = m.s_axi_control_arvalid = 0;
    m.s_axi_control_bready = m.s_axi_control_rready = 1;
    const bool beat_go = !beats_.empty() && (mmio_.empty() || mmio_.front().seq > beats_.front().seq);
    if (beat_go) {
      Op& o = beats_.front();
      if (corrupt_) {
        o.data.at(corrupt_index_) ^= corrupt_mask_;
        corrupt_ = false;
      }
      for (unsigned i = 0; i < kBytes; ++i) rnic::bus::set_byte(m.s_axis_rx_tdata, i, o.data[i]);
      rnic::bus::clear_all(m.s_axis_rx_tkeep);
      for (unsigned i = 0; i < kBytes; ++i) rnic::bus::set_bit(m.s_axis_rx_tkeep, i, ((o.keep >> i) & 1u) != 0);
      m.s_axis_rx_tlast = o.last;
      m.s_axis_rx_tuser = o.user;
      m.s_axis_rx_tvalid = 1;
    }
    // The model's completion ring is consumed by this harness as soon as the model writes an entry (the
    // RTL's CQ_CONS writes follow the RTL's entries and are not replayed: a diverged stream may leave the
    // two sides with different numbers of entries).
    while (lite_state_ == 0 && !mmio_.empty() && mmio_.front().kind == Op::kWrite &&
           mmio_.front().addr == rnic::hw::kRegCQ_CONS)
      mmio_.pop_front();
    if (lite_state_ == 0 && m.model().cq_prod() != model_cons_) {
      Op c;
      c.kind = Op::kWrite;
      c.addr = static_cast<std::uint16_t>(rnic::hw::kRegCQ_CONS);
      c.wdata = m.model().cq_prod();
      c.wstrb = 0xF;
      c.seq = ~std::uint64_t{0};  // holds back no beat
      model_cons_ = c.wdata;
      mmio_.push_front(std::move(c));
    }
    if (!mmio_.empty()) {
      const Op& o = mmio_.front();
      const bool cmd = o.kind == Op::kWrite && o.addr == rnic::hw::kRegCMD;
      // A CQ_CTRL write (disable, reset) comes after the completions the RTL had written by then: the
      // model's too (or, if a diverged stream leaves it fewer, once the model has been quiet a while).
      const bool ctrl = o.kind == Op::kWrite && o.addr == rnic::hw::kRegCQ_CTRL;
      const bool go = (!cmd || ((beats_.empty() || beats_.front().seq > o.seq) && since_beat_ >= 8 &&
                                !m.model().segments_in_flight())) &&
                      (!ctrl || cqe_total_[1] >= o.rtl_cqes || quiet_ >= 256);
      if (go && o.kind == Op::kWrite) {
        m.s_axi_control_awaddr = o.addr;
        m.s_axi_control_awvalid = (lite_state_ & 1) == 0;
        m.s_axi_control_wdata = o.wdata;
        m.s_axi_control_wstrb = o.wstrb;
        m.s_axi_control_wvalid = (lite_state_ & 2) == 0;
      } else if (go) {
        m.s_axi_control_araddr = o.addr;
        m.s_axi_control_arvalid = (lite_state_ & 4) == 0;
      }
    }
    // Host memory slave: AW, W and AR always ready; B for the oldest burst once its W beats are in; R
    // beats of the oldest read from host memory.
    m.m_axi_gmem_awready = m.m_axi_gmem_wready = m.m_axi_gmem_arready = 1;
    m.m_axi_gmem_bvalid = !b_pending_.empty() && w_beats_ >= b_pending_.front();
    m.m_axi_gmem_bresp = 0;
    m.m_axi_gmem_rvalid = 0;
    // A read is answered once the RTL has read the same address (its RRESP is the answer's: a test may
    // make the testbench's memory fail a descriptor read), or after kReadWait cycles (OKAY).
    if (!ar_pending_.empty() && rresp_.count(ar_pending_.front().first) == 0 && r_wait_ < kReadWait) ++r_wait_;
    if (!ar_pending_.empty() && (rresp_.count(ar_pending_.front().first) != 0 || r_wait_ >= kReadWait)) {
      const std::uint64_t a =
          (ar_pending_.front().first & ~std::uint64_t{kBytes - 1}) + std::uint64_t{r_beat_} * kBytes;
      for (unsigned i = 0; i < kBytes; ++i)
        rnic::bus::set_byte(m.m_axi_gmem_rdata, i, (mem_ != nullptr && a + i < mem_size_) ? mem_[a + i] : 0);
      const auto it = rresp_.find(ar_pending_.front().first);
      m.m_axi_gmem_rresp = static_cast<CData>(it == rresp_.end() ? 0 : it->second);
      m.m_axi_gmem_rlast = r_beat_ + 1 == ar_pending_.front().second;
      m.m_axi_gmem_rvalid = 1;
    }
    m.ap_rst_n = this->ap_rst_n;

    // The handshakes of this edge.
    const bool rx = m.s_axis_rx_tvalid && m.s_axis_rx_tready;
    const bool l_aw = m.s_axi_control_awvalid && m.s_axi_control_awready;
    const bool l_w = m.s_axi_control_wvalid && m.s_axi_control_wready;
    const bool l_b = m.s_axi_control_bvalid && m.s_axi_control_bready;
    const bool l_ar = m.s_axi_control_arvalid && m.s_axi_control_arready;
    const bool l_r = m.s_axi_control_rvalid && m.s_axi_control_rready;
    const std::uint32_t l_rdata = m.s_axi_control_rdata;
    const bool g_aw = m.m_axi_gmem_awvalid && m.m_axi_gmem_awready;
    const bool g_w = m.m_axi_gmem_wvalid && m.m_axi_gmem_wready;
    const bool g_b = m.m_axi_gmem_bvalid && m.m_axi_gmem_bready;
    const bool g_ar = m.m_axi_gmem_arvalid && m.m_axi_gmem_arready;
    const bool g_r = m.m_axi_gmem_rvalid && m.m_axi_gmem_rready;
    if (g_aw) {
      wr_[1].aw.push_back(Burst{m.m_axi_gmem_awaddr, unsigned{m.m_axi_gmem_awlen} + 1u});
      b_pending_.push_back(unsigned{m.m_axi_gmem_awlen} + 1u);
      ++model_activity_;
    }
    if (g_w) {
      wr_[1].w.push_back({bytes_of(m.m_axi_gmem_wdata), u64(m.m_axi_gmem_wstrb)});
      ++w_beats_;
      ++model_activity_;
    }
    if (g_ar) {
      ar_pending_.push_back({m.m_axi_gmem_araddr, unsigned{m.m_axi_gmem_arlen} + 1u});
      ++model_activity_;
    }

    m.ap_clk = 0;
    m.eval();
    m.ap_clk = 1;
    m.eval();

    ++since_beat_;
    if (rx) {
      beats_.pop_front();
      since_beat_ = 0;
      ++model_activity_;
    }
    if (l_aw) lite_state_ |= 1;
    if (l_w) lite_state_ |= 2;
    if (l_b) {
      if (mmio_.front().addr == rnic::hw::kRegCQ_CTRL) model_cons_ = 0;  // the ring starts again
      pop_op();
    }
    if (l_ar) lite_state_ |= 4;
    if (l_r) {
      if (mmio_.front().rtl_idle && (l_rdata & 1u) != 0) {
        lite_state_ = 0;  // the model is still busy with the command: ask again
      } else {
        pop_op();
      }
    }
    if (g_b) {
      w_beats_ -= b_pending_.front();
      b_pending_.pop_front();
    }
    if (g_r && ++r_beat_ == ar_pending_.front().second) {
      ar_pending_.pop_front();
      r_beat_ = 0;
      r_wait_ = 0;
    }
    decode_writes(1);
    quiet_ = model_activity_ == activity_seen_ ? quiet_ + 1 : 0;
    activity_seen_ = model_activity_;
    compare();
  }

  std::string op_str() const {
    char b[120];
    if (!mmio_.empty()) {
      const Op& o = mmio_.front();
      std::snprintf(b, sizeof b, "AXI4-Lite %s 0x%x seq %llu%s, beats from seq %llu",
                    o.kind == Op::kWrite ? "write" : "read", unsigned{o.addr}, static_cast<unsigned long long>(o.seq),
                    o.rtl_idle ? " (CMD_STATUS: wait for idle)" : "",
                    static_cast<unsigned long long>(beats_.empty() ? 0 : beats_.front().seq));
    } else {
      std::snprintf(b, sizeof b, "beat seq %llu",
                    static_cast<unsigned long long>(beats_.empty() ? 0 : beats_.front().seq));
    }
    return b;
  }

  void pop_op() {
    mmio_.pop_front();
    lite_state_ = 0;
    ++model_activity_;
  }

  // ---- comparing ---------------------------------------------------------------------------------------
  std::string run_str(const Run& r) const {
    char b[64];
    std::snprintf(b, sizeof b, "write 0x%llx (%zu bytes, cycle %llu): ", static_cast<unsigned long long>(r.addr),
                  r.data.size(), static_cast<unsigned long long>(r.cycle));
    std::string s = b;
    for (std::size_t i = 0; i < r.data.size() && i < 16; ++i) {
      std::snprintf(b, sizeof b, "%02x", r.data[i]);
      s += b;
    }
    return s + (r.data.size() > 16 ? "..." : "");
  }
  std::string head_str(int side) const { return data_[side].empty() ? "none" : run_str(data_[side].front()); }
  std::string cqe_str(const Cqe& c) const {
    char b[64];
    std::snprintf(b, sizeof b, "completion at 0x%llx (cycle %llu): ", static_cast<unsigned long long>(c.addr),
                  static_cast<unsigned long long>(c.cycle));
    std::string s = b;
    for (std::size_t i = 0; i < 32; ++i) {
      std::snprintf(b, sizeof b, "%02x", c.bytes[i]);
      s += b;
    }
    return s;
  }
  [[noreturn]] void diverged(const std::string& what, const std::string& rtl, const std::string& model) const {
    throw LockstepDivergence("lockstep divergence (seed " + std::to_string(seed_) + ", cycle " +
                             std::to_string(cycle_) + "): " + what + "\n  RTL:   " + rtl + "\n  model: " + model);
  }

  void compare() {
    auto& a = data_[0];
    auto& b = data_[1];
    while (!a.empty() && !b.empty()) {
      Run& x = a.front();
      Run& y = b.front();
      std::size_t n = std::min(x.data.size(), y.data.size());
      if (x.addr != y.addr) diverged("host-memory data write", run_str(x), run_str(y));
      const auto d = std::mismatch(x.data.begin(), x.data.begin() + static_cast<std::ptrdiff_t>(n), y.data.begin());
      const bool differ = d.first != x.data.begin() + static_cast<std::ptrdiff_t>(n);
      if (differ) n = static_cast<std::size_t>(d.first - x.data.begin());  // the agreeing part first
      cmp_bytes_ += n;
      x.addr += n;
      y.addr += n;
      x.data.erase(x.data.begin(), x.data.begin() + static_cast<std::ptrdiff_t>(n));
      y.data.erase(y.data.begin(), y.data.begin() + static_cast<std::ptrdiff_t>(n));
      if (differ) diverged("host-memory data write", run_str(x), run_str(y));  // from the first differing byte
      if (x.data.empty()) a.pop_front();
      if (y.data.empty()) b.pop_front();
    }
    // Completions: the entries in ring order, compared without their ring address and phase bit (a
    // diverged stream may leave an entry more on one side, which moves every later one by a slot).
    while (!cqe_[0].empty() && !cqe_[1].empty()) {
      const Cqe& x = cqe_[0].front();
      const Cqe& y = cqe_[1].front();
      const unsigned stream = x.bytes[0] | (unsigned{x.bytes[1]} << 8);
      const unsigned stream_m = y.bytes[0] | (unsigned{y.bytes[1]} << 8);
      std::vector<std::uint8_t> xb = x.bytes, yb = y.bytes;
      xb[rnic::hw::kCQE_FLAGS_OFFSET] &= static_cast<std::uint8_t>(~rnic::hw::kCQE_FLAGS_PHASE.mask());
      yb[rnic::hw::kCQE_FLAGS_OFFSET] &= static_cast<std::uint8_t>(~rnic::hw::kCQE_FLAGS_PHASE.mask());
      if (xb != yb) {
        // A stream the test declared diverged (RTL and model may legally decide otherwise there).
        if (diverged_.count(stream) != 0 || diverged_.count(stream_m) != 0) {
          if (diverged_.count(stream) != 0) cqe_[0].pop_front();
          if (diverged_.count(stream_m) != 0) cqe_[1].pop_front();
          continue;
        }
        diverged("completion", cqe_str(x), cqe_str(y));
      }
      ++cmp_cqes_;
      cqe_[0].pop_front();
      cqe_[1].pop_front();
    }
  }

  rnic::bus::ScKernel<C> model_;
  const std::uint8_t* mem_ = nullptr;
  std::size_t mem_size_ = 0;
  std::uint64_t seed_ = 0;
  std::uint64_t cycle_ = 0;
  CData last_clk_ = 0;
  bool corrupt_ = false;
  unsigned corrupt_index_ = 0;
  std::uint8_t corrupt_mask_ = 0;
  bool trace_ = false;  // RNIC_LOCKSTEP_TRACE=1: every written byte of both sides on stdout
  std::deque<Op> beats_, mmio_;
  std::uint64_t cqe_total_[2] = {0, 0};
  std::uint32_t model_cons_ = 0;
  std::uint64_t quiet_ = 0, activity_seen_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t since_beat_ = 0;
  unsigned lite_state_ = 0;  // the head AXI4-Lite op: 1 AW taken, 2 W taken, 4 AR taken
  std::deque<std::uint16_t> lite_aw_, lite_ar_;
  std::deque<std::pair<std::uint32_t, std::uint8_t>> lite_w_;
  WrSide wr_[2];
  std::deque<Run> data_[2];
  std::deque<Cqe> cqe_[2];
  std::deque<std::uint64_t> rtl_ar_;
  std::map<std::uint64_t, unsigned> rresp_;
  std::deque<unsigned> b_pending_;
  std::deque<std::pair<std::uint64_t, unsigned>> ar_pending_;
  unsigned r_beat_ = 0;
  static constexpr unsigned kReadWait = 256;
  unsigned r_wait_ = 0;
  std::uint64_t w_beats_ = 0;
  std::uint64_t cq_base_ = 0;
  unsigned cq_log2_ = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> rings_;
  std::map<unsigned, bool> diverged_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> excused_;
  std::uint64_t model_activity_ = 0;
  std::uint64_t cmp_bytes_ = 0;
  std::uint64_t cmp_cqes_ = 0;
};

template <class Rtl, class C>
void lockstep_attach(LockstepKernel<Rtl, C>& t, const std::uint8_t* mem, std::size_t size, std::uint64_t seed) {
  t.attach(mem, size, seed);
}
template <class Rtl, class C>
void lockstep_diverge(LockstepKernel<Rtl, C>& t, unsigned stream) {
  t.diverge(stream);
}
template <class Rtl, class C>
std::string lockstep_finish(LockstepKernel<Rtl, C>& t) {
  return t.finish();
}

}  // namespace rnic::tb

namespace rnic::tb {
template <class Rtl, class C>
void lockstep_excuse(LockstepKernel<Rtl, C>& t, std::uint64_t addr, std::uint64_t len) {
  t.excuse(addr, len);
}
}  // namespace rnic::tb
