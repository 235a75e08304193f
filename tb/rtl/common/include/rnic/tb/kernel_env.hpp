// SPDX-License-Identifier: Apache-2.0
// The rnic_kernel verification environment: the Verilated kernel with its bus functional models,
// a test driver, and the software Data Sink (driver/model) as scoreboard.
//
// Everything the test programs goes to both the kernel and the model, and every segment is handed to
// both in the same order, so the model's completions and host memory are the expected ones:
//   - completions are compared per stream, in order (deliveries: tagged flag, STag / QN + MSN, message
//     length, RsvdULP, DDP-SSN of the last segment; errors: type, code, segment length, DDP-SSN, the
//     header bytes the model reports; order errors found at delivery: the order flag, QN, MSN, zero
//     header and length);
//   - an untagged delivery names the buffer its message was placed in: every placement of the message
//     lies inside the buffer posted for its (stream, QN, MSN);
//   - when a completion becomes visible to the driver, the bytes of its message must already be in host
//     memory (writes are visible once acknowledged, see host_memory.hpp);
//   - at finish(): nothing missing, host memory equal to the model's (outside the completion ring), the
//     kernel wrote only inside registered tagged buffers, posted receive buffers and the completion
//     ring, every other byte still holds the fill pattern, the kernel's counters equal the model's,
//     and no AXI rule was broken.
// Table commands wait until the kernel has gone quiet first (drain()), so the kernel applies them at the
// same point of the segment sequence as the model.
//
// Where the kernel may legally decide otherwise than a sequential model (a hostile peer's segments back
// to back, whose lookup may or may not see an earlier message's consume; an abortive teardown while
// segments are in flight), a test declares the stream diverged: its completions are then not compared
// with the model (the test checks them itself), and once the stream is quiet and enabled again
// resync() makes the model's host memory and counters the kernel's for what it may have touched.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/model/data_sink.hpp"
#include "rnic/tb/host_memory.hpp"
#include "rnic/tb/kernel_driver.hpp"
#include "rnic/tb/lockstep_hooks.hpp"
#include "rnic/tb/sim.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/ddp_errors.hpp"
#include "rnic/wire/segmentation.hpp"

namespace rnic::tb {

// The parameters the Verilated model was built with.
struct KernelParams {
  unsigned data_width = 512;
  unsigned stag_entries = 256;
  unsigned num_streams = 16;
  unsigned num_qns = 4;
  unsigned ssn_window = 64;
  unsigned max_seg_bytes = 16384;
};

struct EnvConfig {
  KernelParams params;
  HostMemConfig mem;
  double input_idle = 0.0;  // probability of an idle cycle before an input beat
  std::uint64_t seed = 1;
  unsigned cq_log2 = 10;
  bool use_model = true;        // compare against the reference Data Sink
  unsigned quiet_cycles = 200;  // drain(): cycles without any activity that count as "done"
};

// Host memory map of the environment.
inline constexpr std::uint64_t kDataBase = 0x1000;      // buffers: [kDataBase, kRqRingBase)
inline constexpr std::uint64_t kRqRingBase = 0x600000;  // 4 KiB per (stream, QN) ring
inline constexpr std::uint64_t kCqBase = 0x700000;      // completion ring (up to 1 MiB)

// Row of DdpError in ddp_errors.def = index of its counter register.
inline unsigned error_row(rnic::wire::DdpError e) {
  for (unsigned i = 0; i < rnic::wire::kAllDdpErrors.size(); ++i) {
    if (rnic::wire::kAllDdpErrors[i] == e) return i;
  }
  return 0;
}

// Segments of one message, encoded by the wire library exactly as a Data Source would.
inline std::vector<std::vector<std::uint8_t>> tagged_message(std::uint32_t stag, std::uint64_t to,
                                                             std::uint8_t rsvd_ulp,
                                                             const std::vector<std::uint8_t>& payload,
                                                             std::size_t mulpdu) {
  auto seg = rnic::wire::MessageSegmenter::tagged(stag, to, rsvd_ulp, payload.size(), mulpdu).value();
  std::vector<std::vector<std::uint8_t>> out;
  for (const auto& p : seg.all()) out.push_back(rnic::wire::encode_planned_segment(p, payload).value());
  return out;
}
inline std::vector<std::vector<std::uint8_t>> untagged_message(std::uint32_t qn, std::uint32_t msn,
                                                               std::uint64_t rsvd_ulp,
                                                               const std::vector<std::uint8_t>& payload,
                                                               std::size_t mulpdu) {
  auto seg = rnic::wire::MessageSegmenter::untagged(qn, msn, rsvd_ulp, payload.size(), mulpdu).value();
  std::vector<std::vector<std::uint8_t>> out;
  for (const auto& p : seg.all()) out.push_back(rnic::wire::encode_planned_segment(p, payload).value());
  return out;
}
// One segment with an explicit header (DV, L, TO, MO... as the test wants them).
inline std::vector<std::uint8_t> segment(const rnic::wire::DdpHeader& h, const std::vector<std::uint8_t>& payload) {
  return rnic::wire::encode_segment(h, payload).value();
}

// Records m_axis_fate (no tready: a fate is taken in every cycle its tvalid is up), whoever advances
// the clock (the environment, or the driver during a register access).
template <class Top>
class FateMonitor : public rnic::bus::Component<Top> {
 public:
  explicit FateMonitor(Sim<Top>& sim) { sim.add(this); }
  void drive(Top&, std::uint64_t) override {}
  void sample(const Top& t, std::uint64_t cycle) override {
    if (t.m_axis_fate_tvalid) seen.push_back({static_cast<unsigned>(t.m_axis_fate_tdata), cycle});
  }
  std::deque<std::pair<unsigned, std::uint64_t>> seen;  // (tdata, cycle)
};

template <class Top>
class KernelEnv {
 public:
  explicit KernelEnv(const EnvConfig& cfg) : cfg_(cfg), bytes_(cfg.params.data_width / 8), rng_(cfg.seed) {
    sim_ = std::make_unique<Sim<Top>>();
    HostMemConfig mc = cfg.mem;
    mem_ = std::make_unique<AxiHostMemory<Top>>(*sim_, bytes_, mc);
    src_ = std::make_unique<AxisSource<Top>>(*sim_, bytes_, cfg.seed ^ 0x5eed5eedULL);
    src_->set_idle(cfg.input_idle);
    fate_mon_ = std::make_unique<FateMonitor<Top>>(*sim_);
    mmio_ = std::make_unique<AxiLiteMaster<Top>>(*sim_);
    drv_ = std::make_unique<KernelDriver<Top>>(*sim_, *mmio_, *mem_, cfg.params.num_qns);
    model_mem_ = std::make_unique<rnic::model::HostMemory>(mem_->size());
    std::copy(mem_->data(), mem_->data() + mem_->size(), model_mem_->data());
    lockstep_attach(sim_->top(), mem_->data(), mem_->size(), cfg.seed);
    rnic::model::DataSink::Config mcfg;
    mcfg.num_stags = cfg.params.stag_entries;
    mcfg.num_streams = cfg.params.num_streams;
    mcfg.num_qns = cfg.params.num_qns;
    mcfg.ssn_window = static_cast<std::uint16_t>(cfg.params.ssn_window);
    mcfg.max_seg_bytes = cfg.params.max_seg_bytes;
    mcfg.queues_need_config = true;  // STREAM_ENABLE leaves every queue unconfigured
    model_ = std::make_unique<rnic::model::DataSink>(*model_mem_, mcfg);
    owner_.assign(mem_->size(), 0);
    allowed_.assign(mem_->size(), 0);
    host_owned_.assign(mem_->size(), 0);
    excused_.assign(mem_->size(), 0);
    exp_.resize(cfg.params.num_streams);
    shadow_.resize(cfg.params.num_streams);
    tx_ssn_.assign(cfg.params.num_streams, 0);
    diverged_.assign(cfg.params.num_streams, 0);
  }

  Sim<Top>& sim() { return *sim_; }
  AxiHostMemory<Top>& mem() { return *mem_; }
  AxisSource<Top>& src() { return *src_; }
  KernelDriver<Top>& drv() { return *drv_; }
  AxiLiteMaster<Top>& mmio() { return *mmio_; }
  rnic::model::DataSink& model() { return *model_; }
  rnic::model::HostMemory& model_mem() { return *model_mem_; }
  std::mt19937_64& rng() { return rng_; }
  ErrorLog& errors() { return sim_->errors(); }
  const EnvConfig& cfg() const { return cfg_; }
  unsigned bus_bytes() const { return bytes_; }
  std::uint64_t cycle() const { return sim_->cycle(); }

  // Reset, check identification and capabilities, set up the completion ring.
  void start(unsigned cq_log2 = 0) {
    using namespace rnic::hw;
    sim_->reset();
    const KernelCaps c = drv_->read_caps();
    const KernelParams& p = cfg_.params;
    expect_eq("REG_ID", c.id, kID_VALUE);
    expect_eq("REG_VERSION major", c.version >> 16, kVERSION_VALUE >> 16);
    expect_eq("CAP_DATA_WIDTH", c.data_width, p.data_width);
    expect_eq("CAP_STAGS", c.stags, p.stag_entries);
    expect_eq("CAP_STREAMS", c.streams, p.num_streams);
    expect_eq("CAP_QNS", c.qns, p.num_qns);
    expect_eq("CAP_SSN_WINDOW", c.ssn_window, p.ssn_window);
    cq_setup(cq_log2 == 0 ? cfg_.cq_log2 : cq_log2);
  }

  // A fresh completion ring (zeroed by the driver, as a driver allocates it).
  void cq_setup(unsigned log2) {
    const std::uint64_t n = std::uint64_t{hw::kCQE_BYTES} << log2;
    const std::vector<std::uint8_t> zero(n, 0);
    mem_->host_write(kCqBase, zero.data(), zero.size());
    model_mem_->write(kCqBase, zero);
    mark(host_owned_, kCqBase, n);
    mark(allowed_, kCqBase, n);
    drv_->cq_setup(kCqBase, log2);
  }

  // ---- host memory -------------------------------------------------------------------------------
  // A buffer of len bytes at an address = offset (mod align).
  std::uint64_t alloc(std::uint64_t len, std::uint64_t align = 64, std::uint64_t offset = 0) {
    std::uint64_t a = (next_alloc_ + align - 1) / align * align + offset;
    if (a + len > kRqRingBase) throw std::runtime_error("testbench host memory exhausted");
    next_alloc_ = a + len;
    return a;
  }
  std::vector<std::uint8_t> random_bytes(std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (auto& b : v) b = static_cast<std::uint8_t>(rng_());
    return v;
  }
  // The host writes memory it owns (freed and reused memory, say): kernel and model memory alike;
  // check_writes() no longer expects the fill pattern there.
  void host_write(std::uint64_t addr, const std::vector<std::uint8_t>& data) {
    mem_->host_write(addr, data.data(), data.size());
    model_mem_->write(addr, data);
    mark(host_owned_, addr, data.size());
  }
  std::vector<std::uint8_t> host_bytes(std::uint64_t addr, std::size_t n) const {
    return std::vector<std::uint8_t>(mem_->data() + addr, mem_->data() + addr + n);
  }

  // ---- programming (kernel and model) --------------------------------------------------------------
  // The card issues the key (hw.def STAG_WRITE): a.key is set to it.
  bool stag_write(StagArgs& a) {
    drain();
    const bool refused = drv_->stag_write(a);
    if (refused) return true;
    rnic::model::StagEntry e;
    e.key = a.key;
    e.pd = a.pd;
    if (a.bound_stream) e.bound_stream = *a.bound_stream;
    e.remote_write = a.remote_write;
    e.base_to = a.base_to;
    e.length = a.length;
    e.host_addr = a.host_addr;
    model_->set_stag(a.index, e);
    stags_[a.index] = a;
    mark(allowed_, a.host_addr, a.length);
    return false;
  }
  bool stag_invalidate(std::uint32_t index) {
    drain();
    const bool refused = drv_->stag_invalidate(index);
    if (!refused) {
      model_->invalidate_stag(index);
      stags_.erase(index);
    }
    return refused;
  }
  bool stream_enable(std::uint16_t stream, std::uint16_t pd) {
    drain();
    const bool refused = drv_->stream_enable(stream, pd);
    if (!refused) {
      model_->enable_stream(stream, pd);
      shadow_.at(stream) = Shadow{};
      tx_ssn_.at(stream) = 0;
      diverged_.at(stream) = 0;
      exp_.at(stream).clear();
      for (auto it = bufs_.begin(); it != bufs_.end();) {
        it = it->first.first == stream ? bufs_.erase(it) : std::next(it);
      }
    }
    return refused;
  }
  bool stream_teardown(std::uint16_t stream) {
    drain();
    const bool refused = drv_->stream_teardown(stream);
    if (!refused) model_->teardown_stream(stream);
    return refused;
  }
  // STREAM_TEARDOWN at once, with segments of the stream possibly in flight: the stream diverges from
  // the model (which has seen every segment sent).
  bool stream_teardown_abortive(std::uint16_t stream) {
    diverge(stream);
    const bool refused = drv_->stream_teardown(stream);
    if (!refused) model_->teardown_stream(stream);
    return refused;
  }
  // Queue (stream, qn) with a ring of 2^log2 descriptors, starting empty at first_msn (0 means 1).
  bool queue_config(std::uint16_t stream, std::uint32_t qn, unsigned log2 = 6, std::uint32_t first_msn = 0) {
    drain();
    const std::uint64_t ring = rq_ring_addr(stream, qn);
    mark(host_owned_, ring, std::uint64_t{hw::kRQ_DESC_BYTES} << log2);
    const bool refused = drv_->queue_config(stream, qn, ring, log2, first_msn);
    if (!refused) {
      model_->configure_queue(stream, qn, first_msn);
      bufs_[{stream, qn}].clear();
    }
    return refused;
  }
  std::uint64_t rq_ring_addr(std::uint32_t stream, std::uint32_t qn) const {
    return kRqRingBase + 0x1000 * ((std::uint64_t{stream} * cfg_.params.num_qns + qn) % 256);
  }
  // Posts a receive buffer (descriptor in the ring, doorbell) to kernel and model; returns its MSN.
  // settle: cycles to let the doorbell reach the lookup stage before later segments can need it.
  std::uint32_t post_recv(std::uint16_t stream, std::uint32_t qn, std::uint64_t addr, std::uint32_t len,
                          bool ring = true, unsigned settle = 16) {
    const std::uint32_t msn = drv_->post_recv(stream, qn, addr, len, ring);
    const std::uint64_t slot = drv_->rq_slot_addr(stream, qn, msn);
    model_mem_->write(slot, rnic::wire::ConstBytes(mem_->data() + slot, hw::kRQ_DESC_BYTES));
    model_->post_buffer(stream, qn, addr, len);
    bufs_[{stream, qn}][msn] = {addr, len};
    mark(allowed_, addr, len);
    if (ring) run(settle);
    return msn;
  }

  // ---- traffic -------------------------------------------------------------------------------------
  std::uint16_t& tx_ssn(std::uint16_t stream) { return tx_ssn_.at(stream); }

  // One DDP segment (the whole AXI-Stream packet) on stream with DDP-SSN ssn, to kernel and model.
  // net: as the network front end hands it over (tuser net = 1, docs/network.md): outside the window it
  // is a duplicate or declined instead of an LLP error, and the kernel's fate of every such segment
  // (m_axis_fate) is checked against the model's, in order.
  void send(std::uint16_t stream, std::uint16_t ssn, const std::vector<std::uint8_t>& seg, bool net = false) {
    AxisPacket p;
    p.bytes = seg;
    p.stream = stream;
    p.ssn = ssn;
    p.net = net;
    p.header_bytes = !seg.empty() && (seg[0] & rnic::wire::kCtrlTagged) ? 14 : 18;
    beats_since_drain_ += (seg.size() + bytes_ - 1) / bytes_;
    ++packets_since_drain_;
    src_->push(std::move(p));
    ++sent_;
    if (!cfg_.use_model) return;
    if (net)
      net_pending_.push_back({stream, ssn, seg});
    else if (stream < cfg_.params.num_streams)
      model_receive(stream, ssn, seg);
  }
  void send_net(std::uint16_t stream, std::uint16_t ssn, const std::vector<std::uint8_t>& seg) {
    send(stream, ssn, seg, true);
  }
  using Fate = rnic::model::DataSink::Fate;
  // The fates m_axis_fate reported so far, in order.
  const std::vector<Fate>& fates() {
    watch_fate();
    return fates_;
  }
  // Segments the kernel declined that the model would have taken (lookup's lagging delivery point).
  std::uint64_t lag_declines() const { return lag_declines_; }

  // Segments with consecutive DDP-SSNs from the stream's transmit counter.
  void send_all(std::uint16_t stream, const std::vector<std::vector<std::uint8_t>>& segs) {
    for (const auto& s : segs) send(stream, tx_ssn_.at(stream)++, s);
  }

  // ---- time ----------------------------------------------------------------------------------------
  void tick() {
    sim_->tick();
    watch_fate();
    service();
  }
  void run(std::uint64_t cycles) {
    for (std::uint64_t i = 0; i < cycles; ++i) tick();
  }
  template <class Pred>
  bool run_until(Pred done, std::uint64_t max_cycles) {
    for (std::uint64_t i = 0; !done(); ++i) {
      if (i >= max_cycles) return false;
      tick();
    }
    return true;
  }
  // Until the input is sent, every expected completion arrived (model) and nothing moved on any bus
  // for quiet_cycles. False (and an error) on timeout.
  // A dropped or failing segment moves nothing on any bus while place discards its beats, so the quiet
  // time covers discarding everything the data FIFO can hold of what was sent since the last drain.
  bool drain(std::uint64_t max_cycles = 300000) {
    const std::uint64_t need = cfg_.quiet_cycles + std::min(rx_fifo_beats(), beats_since_drain_) +
                               8 * std::min<std::uint64_t>(64, packets_since_drain_);
    if (stuck_) return false;  // reported once; do not wait again
    std::uint64_t quiet = 0;
    for (std::uint64_t i = 0; i < max_cycles; ++i) {
      tick();
      const bool busy = !src_->empty() || !mem_->idle() || mem_->last_activity() + 1 >= sim_->cycle() ||
                        (consume_ && expected_pending() > 0);
      quiet = busy ? 0 : quiet + 1;
      if (quiet >= need) {
        beats_since_drain_ = packets_since_drain_ = 0;
        return true;
      }
    }
    stuck_ = true;
    std::string missing;
    for (std::size_t st = 0; st < exp_.size() && missing.size() < 400; ++st) {
      for (const auto& e : exp_[st]) missing += "; stream " + std::to_string(st) + ": " + e.str();
    }
    errors().add(sim_->cycle(), "drain: kernel not quiet after " + std::to_string(max_cycles) + " cycles (" +
                                    std::to_string(src_->pending()) + " packets unsent, " +
                                    std::to_string(expected_pending()) + " completions missing" + missing + ")");
    return false;
  }

  // rnic_kernel's RxFifoBeats.
  std::uint64_t rx_fifo_beats() const {
    const std::uint64_t beats = 2 * ((cfg_.params.max_seg_bytes + bytes_ - 1) / bytes_ + 1);
    std::uint64_t p = 1;
    while (p < beats) p <<= 1;
    return p;
  }

  // ---- divergence from the model (see the top of this file) -----------------------------------------
  // From now until stream_enable(), the stream's completions are not compared with the model's.
  void diverge(std::uint16_t stream) {
    diverged_.at(stream) = 1;
    exp_.at(stream).clear();
    lockstep_diverge(sim_->top(), stream);
  }
  bool diverged(std::uint16_t stream) const { return diverged_.at(stream) != 0; }
  // With the kernel quiet: the model's host memory takes the kernel's bytes in [addr, addr + len), and
  // the model's counters are taken as equal to the kernel's from now on (the differences so far are
  // kept as offsets compare_counters() allows).
  void resync(std::uint64_t addr, std::uint64_t len) {
    if (addr >= mem_->size()) return;
    len = std::min<std::uint64_t>(len, mem_->size() - addr);
    model_mem_->write(addr, rnic::wire::ConstBytes(mem_->data() + addr, len));
    std::fill(excused_.begin() + static_cast<std::ptrdiff_t>(addr),
              excused_.begin() + static_cast<std::ptrdiff_t>(addr + len), 0);
  }
  // Memory a diverged stream may write (a tagged buffer it shares with other streams of its PD): the
  // kernel's bytes there need not be the model's until resync(), also when another stream's
  // completion is checked for its data.
  void excuse(std::uint64_t addr, std::uint64_t len) {
    mark(excused_, addr, len);
    lockstep_excuse(sim_->top(), addr, len);
  }
  // Memory whose write sequence depends on timing only (e.g. copies of a net segment placed again or
  // found a duplicate depending on where the delivery point is when they pass): the model of this
  // environment still checks it (its contents at the end), the lockstep harness no longer compares the
  // RTL's and the SystemC model's writes there.
  void lockstep_timing_dependent(std::uint64_t addr, std::uint64_t len) { lockstep_excuse(sim_->top(), addr, len); }
  void resync_counters() {
    counter_offsets_.clear();
    for (const auto& c : counter_pairs()) counter_offsets_[c.name] = c.kernel - c.model;
  }

  // ---- completions -----------------------------------------------------------------------------------
  // Polls the completion ring after every cycle while on (the default).
  void set_consume(bool on) { consume_ = on; }
  // Called with every completion entry the driver takes off the ring, in order, once the scoreboard
  // has checked it (a test's own ownership bookkeeping: the host may reuse the memory from then on).
  void set_cqe_hook(std::function<void(const Cqe&)> h) { cqe_hook_ = std::move(h); }
  std::uint64_t mismatches() const { return mismatches_; }
  const std::vector<Cqe>& cqes() const { return cqes_; }
  std::size_t expected_pending() const {
    std::size_t n = 0;
    for (const auto& q : exp_) n += q.size();
    return n;
  }
  // Takes every new entry (phase bit) off the ring into the scoreboard, then writes CQ_CONS once.
  void service() {
    if (!consume_ || in_service_) return;
    in_service_ = true;
    bool any = false;
    while (auto c = drv_->cq_peek()) {
      drv_->cq_pop();
      handle(*c);
      if (cqe_hook_) cqe_hook_(*c);  // after the scoreboard has looked at the memory it names
      any = true;
    }
    if (any) drv_->cq_update_cons();
    in_service_ = false;
  }

  // ---- counters --------------------------------------------------------------------------------------
  std::uint64_t counter(std::uint32_t lo_reg) { return drv_->counter(lo_reg); }
  std::uint64_t error_counter(rnic::wire::DdpError e) { return drv_->error_counter(error_row(e)); }

  // ---- the end -----------------------------------------------------------------------------------------
  // Drains and runs every end-of-test check; "" when all passed, else what failed.
  std::string finish() {
    drain();
    watch_fate();
    std::string out;
    if (cfg_.use_model) {
      for (std::size_t s = 0; s < exp_.size(); ++s) {
        for (const auto& e : exp_[s])
          out += "missing completion on stream " + std::to_string(s) + ": " + e.str() + "\n";
      }
      out += compare_memory();
      out += compare_counters();
      for (const NetSeg& n : net_pending_) {
        out += "no fate on m_axis_fate for stream " + std::to_string(n.stream) + " DDP-SSN " + std::to_string(n.ssn) +
               "\n";
      }
    }
    out += check_writes();
    out += lockstep_finish(sim_->top());
    if (!errors().empty()) out += errors().text();
    return out;
  }

  // The kernel wrote only where it may; every byte nobody may write still holds the pattern.
  std::string check_writes() const {
    std::string out;
    const auto& w = mem_->kernel_written();
    unsigned reported = 0;
    for (std::size_t a = 0; a < w.size(); ++a) {
      if (w[a] && !allowed_[a]) {
        const std::size_t b = run_end(a, [&](std::size_t x) { return w[x] && !allowed_[x]; });
        if (reported++ < 8) out += "kernel wrote outside every buffer: " + range_str(a, b) + "\n";
        a = b;
      }
    }
    const std::uint8_t* m = mem_->data();
    for (std::size_t a = 0; a < w.size(); ++a) {
      if (!allowed_[a] && !host_owned_[a] && m[a] != pattern_byte(a)) {
        const std::size_t b =
            run_end(a, [&](std::size_t x) { return !allowed_[x] && !host_owned_[x] && m[x] != pattern_byte(x); });
        if (reported++ < 8) out += "host memory changed outside every buffer: " + range_str(a, b) + "\n";
        a = b;
      }
    }
    return out;
  }

  // Kernel host memory equals the model's everywhere but in the completion ring.
  std::string compare_memory() const {
    std::string out;
    const std::uint8_t* k = mem_->data();
    const std::uint8_t* m = model_mem_->data();
    const std::uint64_t cq_end = kCqBase + drv_->cq_bytes();
    unsigned reported = 0;
    for (std::size_t a = 0; a < mem_->size(); ++a) {
      if (a >= kCqBase && a < cq_end) continue;
      if (k[a] != m[a]) {
        const std::size_t b = run_end(a, [&](std::size_t x) { return k[x] != m[x]; });
        if (reported++ < 8) {
          char buf[96];
          std::snprintf(buf, sizeof buf, " (first byte: kernel 0x%02x model 0x%02x, pattern 0x%02x)", k[a], m[a],
                        pattern_byte(a));
          out += "host memory differs from the model: " + range_str(a, b) + buf + "\n";
        }
        a = b;
      }
    }
    return out;
  }

  std::string compare_counters() {
    std::string out;
    for (const auto& c : counter_pairs()) {
      const auto it = counter_offsets_.find(c.name);
      const std::uint64_t off = it == counter_offsets_.end() ? 0 : it->second;
      if (c.kernel - off != c.model)
        out += "counter " + c.name + ": kernel " + std::to_string(c.kernel) + ", model " + std::to_string(c.model) +
               (off != 0 ? " (+ " + std::to_string(off) + " since a resync)" : "") + "\n";
    }
    return out;
  }

 private:
  struct Range {
    std::uint64_t addr;
    std::uint32_t len;
    std::uint32_t serial;
    bool untagged = false;  // placed by an untagged segment with this QN and MSN
    std::uint32_t qn = 0, msn = 0;
  };
  struct Expect {
    rnic::model::Completion c;
    std::uint16_t ssn = 0;
    std::vector<Range> ranges;  // deliveries: every placement of the message
    std::string str() const {
      char b[200];
      if (c.is_error && c.order) {
        std::snprintf(b, sizeof b, "order error %s ssn %u qn %u msn 0x%08x", rnic::wire::error_name(c.error), ssn, c.qn,
                      c.msn);
      } else if (c.is_error) {
        std::snprintf(b, sizeof b, "error %s ssn %u length %u", rnic::wire::error_name(c.error), ssn, c.segment_length);
      } else if (c.tagged) {
        std::snprintf(b, sizeof b, "tagged delivery stag 0x%08x ssn %u rsvd_ulp 0x%llx", c.stag, ssn,
                      static_cast<unsigned long long>(c.rsvd_ulp));
      } else {
        std::snprintf(b, sizeof b, "untagged delivery qn %u msn 0x%08x length %u ssn %u rsvd_ulp 0x%llx", c.qn, c.msn,
                      c.length, ssn, static_cast<unsigned long long>(c.rsvd_ulp));
      }
      return b;
    }
  };
  struct Slot {
    bool last;
    std::vector<Range> ranges;
  };
  struct CounterPair {
    std::string name;
    std::uint64_t kernel, model;
  };
  std::vector<CounterPair> counter_pairs() {
    using namespace rnic::hw;
    const auto& mc = model_->counters();
    std::vector<CounterPair> v = {
        {"SEGMENTS", counter(kRegCNT_SEGMENTS_LO), mc.segments + lag_declines_},  // see on_fate
        {"BYTES", counter(kRegCNT_BYTES_LO), mc.bytes_placed},
        {"MESSAGES", counter(kRegCNT_MESSAGES_LO), mc.messages_delivered},
        {"DROPS", counter(kRegCNT_DROPS_LO), mc.drops},
        {"ACCESS", counter(kRegCNT_ACCESS_LO), mc.access_violations},
        {"DUPLICATES", counter(kRegCNT_DUPLICATES_LO), mc.duplicates}};
    for (auto e : rnic::wire::kAllDdpErrors) {
      auto it = mc.errors.find(e);
      v.push_back({rnic::wire::error_name(e), error_counter(e), it == mc.errors.end() ? 0 : it->second});
    }
    return v;
  }
  struct Shadow {  // the model's per-stream delivery state, mirrored to know DDP-SSNs and placements
    std::uint16_t next = 0;
    std::map<std::uint16_t, Slot> placed;
  };

  static const char* fate_name(Fate f) {
    return f == Fate::kTaken ? "taken" : f == Fate::kDuplicate ? "duplicate" : "declined";
  }
  // m_axis_fate (no tready): one fate per cycle at most. The model takes a net segment when the
  // kernel reports its fate, so that it judges against the same delivery point. Lookup's copy of the
  // delivery point may lag deliver's by the segments in flight, so the kernel may decline a segment
  // the model would take (harmless: SCTP brings it again; counted in lag_declines()). Every other
  // difference is a mismatch: a duplicate the model takes, a decline of a duplicate, taken beyond the
  // window. (A copy sent while the delivery point moves past it may be judged either way: tests send
  // copies only while it stands still.)
  void watch_fate() {
    while (!fate_mon_->seen.empty()) {
      const auto [v, cycle] = fate_mon_->seen.front();
      fate_mon_->seen.pop_front();
      on_fate(v, cycle);
    }
  }
  void on_fate(unsigned v, std::uint64_t cycle) {
    const Fate f = v == 0 ? Fate::kTaken : v == 1 ? Fate::kDuplicate : Fate::kDeclined;
    if (v > 2) errors().add(cycle, "m_axis_fate: code " + std::to_string(v) + " is no fate");
    fates_.push_back(f);
    if (!cfg_.use_model) return;
    if (net_pending_.empty()) {
      ++mismatches_;
      errors().add(cycle, std::string("unexpected fate on m_axis_fate: ") + fate_name(f));
      return;
    }
    const NetSeg n = std::move(net_pending_.front());
    net_pending_.pop_front();
    if (n.stream >= cfg_.params.num_streams) {  // beyond the stream table: dropped as torn down
      if (f != Fate::kTaken) {
        ++mismatches_;
        errors().add(cycle, std::string("fate of a segment beyond the stream table: ") + fate_name(f));
      }
      return;
    }
    const Fate m = model_->net_fate(n.stream, n.ssn);
    if (f == Fate::kDeclined && m == Fate::kTaken) {
      ++lag_declines_;
      return;
    }
    if (f != m) {
      ++mismatches_;
      errors().add(cycle, std::string("fate mismatch on m_axis_fate: stream ") + std::to_string(n.stream) +
                              " DDP-SSN " + std::to_string(n.ssn) + ": kernel " + fate_name(f) + ", model " +
                              fate_name(m));
      return;
    }
    model_receive(n.stream, n.ssn, n.seg, true);
  }

  void model_receive(std::uint16_t stream, std::uint16_t ssn, const std::vector<std::uint8_t>& seg, bool net = false) {
    const std::size_t first = model_->completions().size();
    using Outcome = rnic::model::DataSink::Outcome;
    if (net && model_->net_fate(stream, ssn) != Fate::kTaken) {
      model_->receive_net(stream, ssn, seg);  // a duplicate or declined: counted, nothing else changes
      return;
    }
    const Outcome outcome = model_->receive(stream, ssn, seg);  // (what receive_net does with one it takes)
    auto& done = model_->completions();
    const std::uint32_t serial = ++serial_;
    Shadow& sh = shadow_.at(stream);
    if (outcome == Outcome::kPlaced) {
      const auto dec = rnic::wire::decode_segment(seg).value();
      const std::size_t hlen = rnic::wire::header_size(dec.header);
      const std::uint32_t len = static_cast<std::uint32_t>(seg.size() - hlen);
      std::uint64_t addr = 0;
      Range rg{0, len, serial};
      if (const auto* t = std::get_if<rnic::wire::TaggedHeader>(&dec.header)) {
        if (len > 0) {
          const StagArgs& a = stags_.at(t->stag >> 8);
          addr = a.host_addr + (t->to - a.base_to);
        }
      } else {
        const auto& u = std::get<rnic::wire::UntaggedHeader>(dec.header);
        addr = bufs_.at({stream, u.qn}).at(u.msn).first + u.mo;
        rg.untagged = true;
        rg.qn = u.qn;
        rg.msn = u.msn;
      }
      rg.addr = addr;
      std::vector<Range> r;
      if (len > 0) {
        r.push_back(rg);
        std::fill(owner_.begin() + static_cast<std::ptrdiff_t>(addr),
                  owner_.begin() + static_cast<std::ptrdiff_t>(addr + len), serial);
      }
      auto it = sh.placed.find(ssn);
      if (it == sh.placed.end()) {
        sh.placed.emplace(ssn, Slot{rnic::wire::is_last(dec.header), r});
      } else {
        it->second.ranges.insert(it->second.ranges.end(), r.begin(), r.end());
      }
    }
    for (std::size_t i = first; i < done.size(); ++i) {
      Expect e;
      e.c = done[i];
      if (e.c.is_error) {
        e.ssn = e.c.ssn;
        sh.placed.clear();  // nothing more is delivered on the stream
      } else {              // walk the shadow exactly as the model's in-order delivery did
        for (;;) {
          auto it = sh.placed.find(sh.next);
          if (it == sh.placed.end())
            throw std::logic_error("shadow delivery state out of step with the model: stream " +
                                   std::to_string(stream) + " DDP-SSN " + std::to_string(sh.next) +
                                   " not placed, for " + e.str());
          e.ranges.insert(e.ranges.end(), it->second.ranges.begin(), it->second.ranges.end());
          const bool last = it->second.last;
          e.ssn = sh.next;
          sh.placed.erase(it);
          ++sh.next;
          if (last) break;
        }
      }
      if (!diverged_.at(e.c.stream)) exp_.at(e.c.stream).push_back(std::move(e));
    }
    done.clear();
  }

  void handle(const Cqe& k) {
    cqes_.push_back(k);
    if (!cfg_.use_model) return;
    if (k.stream < diverged_.size() && diverged_[k.stream]) return;
    const std::uint64_t cyc = sim_->cycle();
    if (k.stream >= exp_.size() || exp_[k.stream].empty()) {
      ++mismatches_;
      errors().add(cyc, "unexpected completion: " + k.str());
      return;
    }
    const Expect e = std::move(exp_[k.stream].front());
    exp_[k.stream].pop_front();
    const std::string diff = compare(k, e);
    if (!diff.empty()) {
      ++mismatches_;
      errors().add(cyc, "completion mismatch on stream " + std::to_string(k.stream) + ": " + diff +
                            "\n    kernel: " + k.str() + "\n    model:  " + e.str());
    }
    // 5.4: an untagged delivery names the buffer its message's segments of that QN and MSN were placed
    // in (a message whose T or QN changed inside it has placements elsewhere too: tolerated).
    if (!e.c.is_error && !e.c.tagged) {
      const std::pair<std::uint64_t, std::uint32_t>* buf = nullptr;
      const auto q = bufs_.find({k.stream, e.c.qn});
      if (q != bufs_.end()) {
        const auto it = q->second.find(e.c.msn);
        if (it != q->second.end()) buf = &it->second;
      }
      for (const Range& r : e.ranges) {
        if (!r.untagged || r.qn != e.c.qn || r.msn != e.c.msn) continue;
        if (buf == nullptr || r.addr < buf->first || r.addr + r.len > buf->first + buf->second) {
          ++mismatches_;
          errors().add(cyc, "completion names a buffer its message was not (only) placed in: " + e.str() +
                                ", a placement at 0x" + hex(r.addr) + " of " + std::to_string(r.len) + " bytes");
          break;
        }
      }
    }
    // Visibility: the message's bytes are in host memory once its completion is.
    const std::uint8_t* km = mem_->data();
    const std::uint8_t* mm = model_mem_->data();
    for (const Range& r : e.ranges) {
      for (std::uint64_t a = r.addr; a < r.addr + r.len; ++a) {
        if (owner_[a] == r.serial && !excused_[a] && km[a] != mm[a]) {
          errors().add(cyc,
                       "completion visible before its data: " + e.str() + " byte 0x" + hex(a) + " not yet written");
          break;
        }
      }
    }
  }

  // The segment length the kernel reports: parse cuts a packet longer than max_seg_bytes after
  // ceil(max_seg_bytes / bus bytes) full beats and counts the bytes of its last beat on top.
  std::uint64_t reported_length(const rnic::model::Completion& c) const {
    const std::uint64_t n = c.segment_length;
    const std::uint64_t max_beats = (cfg_.params.max_seg_bytes + bytes_ - 1) / bytes_;
    if (n <= max_beats * bytes_) return n;
    return max_beats * bytes_ + (n - 1) % bytes_ + 1;
  }

  std::string compare(const Cqe& k, const Expect& e) const {
    const auto& c = e.c;
    std::string d;
    auto chk = [&d](const char* what, std::uint64_t got, std::uint64_t want) {
      if (got != want) d += std::string(what) + " " + std::to_string(got) + " != " + std::to_string(want) + "; ";
    };
    chk("error flag", k.error(), c.is_error);
    chk("ssn", k.ssn, e.ssn);
    if (c.is_error) {
      chk("err_type", k.err_type, rnic::wire::error_type(c.error));
      chk("err_code", k.err_code, rnic::wire::error_code(c.error));
      chk("length", k.length, reported_length(c));
      chk("order flag", (k.flags & hw::kCQE_FLAGS_ORDER.mask()) != 0, c.order);
      if (c.order) {  // hw.def CQE FLAGS bit 3: QN and MSN of the segment, header zero
        chk("qn", k.stag_qn, c.qn);
        chk("msn", k.msn, c.msn);
        for (std::size_t i = 0; i < k.header.size(); ++i) {
          if (k.header[i] != 0) {
            d += "header byte " + std::to_string(i) + " not zero; ";
            break;
          }
        }
      }
      for (std::size_t i = 0; i < c.header_bytes.size() && i < k.header.size(); ++i) {
        if (k.header[i] != c.header_bytes[i]) {
          d += "header byte " + std::to_string(i) + " differs; ";
          break;
        }
      }
      return d;
    }
    chk("tagged flag", k.tagged(), c.tagged);
    if (c.tagged) {
      chk("stag", k.stag_qn, c.stag);
      chk("rsvd_ulp", k.rsvd_ulp, c.rsvd_ulp);
    } else {
      chk("qn", k.stag_qn, c.qn);
      chk("msn", k.msn, c.msn);
      chk("length", k.length, c.length);
      chk("rsvd_ulp", k.rsvd_ulp, c.rsvd_ulp);
    }
    return d;
  }

  template <class Pred>
  std::size_t run_end(std::size_t a, Pred p) const {
    std::size_t b = a;
    while (b + 1 < mem_->size() && p(b + 1)) ++b;
    return b;
  }
  static std::string range_str(std::size_t a, std::size_t b) {
    return "[0x" + hex(a) + ", 0x" + hex(b + 1) + ") " + std::to_string(b + 1 - a) + " bytes";
  }
  static std::string hex(std::uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v));
    return b;
  }
  void mark(std::vector<std::uint8_t>& map, std::uint64_t addr, std::uint64_t len) {
    if (addr >= map.size()) return;
    const std::uint64_t end = std::min<std::uint64_t>(map.size(), len > map.size() - addr ? map.size() : addr + len);
    std::fill(map.begin() + static_cast<std::ptrdiff_t>(addr), map.begin() + static_cast<std::ptrdiff_t>(end), 1);
  }
  void expect_eq(const char* what, std::uint64_t got, std::uint64_t want) {
    if (got != want) {
      errors().add(sim_->cycle(),
                   std::string(what) + " reads " + std::to_string(got) + ", expected " + std::to_string(want));
    }
  }

  EnvConfig cfg_;
  unsigned bytes_;
  std::mt19937_64 rng_;
  std::unique_ptr<Sim<Top>> sim_;
  std::unique_ptr<AxiHostMemory<Top>> mem_;
  std::unique_ptr<AxisSource<Top>> src_;
  std::unique_ptr<AxiLiteMaster<Top>> mmio_;
  std::unique_ptr<KernelDriver<Top>> drv_;
  std::unique_ptr<rnic::model::HostMemory> model_mem_;
  std::unique_ptr<rnic::model::DataSink> model_;
  std::map<std::uint32_t, StagArgs> stags_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::map<std::uint32_t, std::pair<std::uint64_t, std::uint32_t>>>
      bufs_;
  std::vector<std::uint32_t> owner_;
  std::vector<std::uint8_t> allowed_, host_owned_, excused_;
  std::vector<std::deque<Expect>> exp_;
  std::vector<Shadow> shadow_;
  struct NetSeg {
    std::uint16_t stream, ssn;
    std::vector<std::uint8_t> seg;
  };
  std::unique_ptr<FateMonitor<Top>> fate_mon_;
  std::deque<NetSeg> net_pending_;  // net segments sent whose fate the kernel has not reported yet
  std::vector<Fate> fates_;         // every fate the kernel reported
  std::uint64_t lag_declines_ = 0;
  std::vector<std::uint16_t> tx_ssn_;
  std::vector<Cqe> cqes_;
  std::vector<std::uint8_t> diverged_;
  std::map<std::string, std::uint64_t> counter_offsets_;
  std::function<void(const Cqe&)> cqe_hook_;
  std::uint64_t mismatches_ = 0;
  std::uint64_t next_alloc_ = kDataBase;
  std::uint64_t sent_ = 0;
  std::uint64_t beats_since_drain_ = 0, packets_since_drain_ = 0;
  std::uint32_t serial_ = 0;
  bool consume_ = true, in_service_ = false, stuck_ = false;
};

}  // namespace rnic::tb
