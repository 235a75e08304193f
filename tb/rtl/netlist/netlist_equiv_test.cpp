// SPDX-License-Identifier: Apache-2.0
// Yosys netlist vs RTL (label rtl): Yosys 0.23 silently miscompiles some SystemVerilog (toolchain
// notes), so rnic_kernel is synthesized to generic gates and the netlist is simulated in lockstep with
// the RTL on a smoke workload: table commands, receive-buffer posting, tagged and untagged traffic with
// errors, random host-memory backpressure. Every output port must match in every cycle.
// RNIC_TEST_SEED=<n> replays; RNIC_FST=<file> dumps the RTL model's waveform.
#include <gtest/gtest.h>
#include <verilated.h>
#include <verilated_fst_c.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Vnet_kernel.h"
#include "Vrtl_kernel.h"
#include "rnic/hw/hw.hpp"
#include "rnic/tb/sim.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/segmentation.hpp"

namespace {

using namespace rnic;
constexpr int kBytes = 64;  // DATA_WIDTH 512
constexpr std::size_t kMem = 4u << 20;

// Copies every input from a to b (identical stimulus).
template <typename A, typename B>
void copy_inputs(const A& a, B& b) {
  b.ap_rst_n = a.ap_rst_n;
  b.s_axi_control_awaddr = a.s_axi_control_awaddr;
  b.s_axi_control_awvalid = a.s_axi_control_awvalid;
  b.s_axi_control_wdata = a.s_axi_control_wdata;
  b.s_axi_control_wstrb = a.s_axi_control_wstrb;
  b.s_axi_control_wvalid = a.s_axi_control_wvalid;
  b.s_axi_control_bready = a.s_axi_control_bready;
  b.s_axi_control_araddr = a.s_axi_control_araddr;
  b.s_axi_control_arvalid = a.s_axi_control_arvalid;
  b.s_axi_control_rready = a.s_axi_control_rready;
  b.m_axi_gmem_awready = a.m_axi_gmem_awready;
  b.m_axi_gmem_wready = a.m_axi_gmem_wready;
  b.m_axi_gmem_bresp = a.m_axi_gmem_bresp;
  b.m_axi_gmem_bvalid = a.m_axi_gmem_bvalid;
  b.m_axi_gmem_arready = a.m_axi_gmem_arready;
  b.m_axi_gmem_rdata = a.m_axi_gmem_rdata;
  b.m_axi_gmem_rresp = a.m_axi_gmem_rresp;
  b.m_axi_gmem_rlast = a.m_axi_gmem_rlast;
  b.m_axi_gmem_rvalid = a.m_axi_gmem_rvalid;
  b.s_axis_rx_tdata = a.s_axis_rx_tdata;
  b.s_axis_rx_tkeep = a.s_axis_rx_tkeep;
  b.s_axis_rx_tlast = a.s_axis_rx_tlast;
  b.s_axis_rx_tvalid = a.s_axis_rx_tvalid;
  b.s_axis_rx_tuser = a.s_axis_rx_tuser;
}

// Names of the outputs that differ between a and b ("" when all match).
template <typename A, typename B>
std::string diff_outputs(const A& a, const B& b) {
  std::string d;
#define CMP(sig)                          \
  do {                                    \
    if (!(a.sig == b.sig)) d += #sig " "; \
  } while (0)
// Payload signals are compared while their valid is high (they are don't-care otherwise).
#define CMP_IF(valid, sig)                           \
  do {                                               \
    if (a.valid && !(a.sig == b.sig)) d += #sig " "; \
  } while (0)
  CMP(s_axi_control_awready);
  CMP(s_axi_control_wready);
  CMP(s_axi_control_bvalid);
  CMP(s_axi_control_arready);
  CMP(s_axi_control_rvalid);
  CMP(m_axi_gmem_awvalid);
  CMP(m_axi_gmem_wvalid);
  CMP(m_axi_gmem_bready);
  CMP(m_axi_gmem_arvalid);
  CMP(m_axi_gmem_rready);
  CMP(s_axis_rx_tready);
  CMP(m_axis_fate_tvalid);
  CMP(m_axi_gmem_awsize);
  CMP(m_axi_gmem_awburst);
  CMP(m_axi_gmem_arsize);
  CMP(m_axi_gmem_arburst);
  CMP_IF(s_axi_control_bvalid, s_axi_control_bresp);
  CMP_IF(m_axis_fate_tvalid, m_axis_fate_tdata);
  CMP_IF(s_axi_control_rvalid, s_axi_control_rdata);
  CMP_IF(s_axi_control_rvalid, s_axi_control_rresp);
  CMP_IF(m_axi_gmem_awvalid, m_axi_gmem_awaddr);
  CMP_IF(m_axi_gmem_awvalid, m_axi_gmem_awlen);
  CMP_IF(m_axi_gmem_wvalid, m_axi_gmem_wstrb);
  if (a.m_axi_gmem_wvalid) {  // bytes without their strobe are don't-care
    for (int i = 0; i < kBytes; ++i) {
      const unsigned sa = static_cast<unsigned>(a.m_axi_gmem_wdata[i / 4] >> (8 * (i % 4))) & 0xFF;
      const unsigned sb = static_cast<unsigned>(b.m_axi_gmem_wdata[i / 4] >> (8 * (i % 4))) & 0xFF;
      if (((a.m_axi_gmem_wstrb >> i) & 1) && sa != sb) {
        d += "m_axi_gmem_wdata[byte " + std::to_string(i) + "] ";
        break;
      }
    }
  }
  CMP_IF(m_axi_gmem_wvalid, m_axi_gmem_wlast);
  CMP_IF(m_axi_gmem_arvalid, m_axi_gmem_araddr);
  CMP_IF(m_axi_gmem_arvalid, m_axi_gmem_arlen);
#undef CMP_IF
#undef CMP
  return d;
}

struct MmioOp {
  bool write;
  std::uint32_t addr;
  std::uint32_t data;
  std::function<bool(std::uint32_t)> until;  // reads: repeat until this holds for the value read
};

class Lockstep {
 public:
  explicit Lockstep(std::uint64_t seed) : rng_(seed), mem_(kMem, 0xA5) {
    rnic::tb::make_current(&ctx_);
    rtl_ = std::make_unique<Vrtl_kernel>(&ctx_, "rtl");
    net_ = std::make_unique<Vnet_kernel>(&ctx_, "net");
    if (const char* f = std::getenv("RNIC_FST")) {
      Verilated::traceEverOn(true);
      fst_ = std::make_unique<VerilatedFstC>();
      rtl_->trace(fst_.get(), 99);
      fst_->open(f);
    }
  }
  ~Lockstep() {
    if (fst_) fst_->close();
    rnic::tb::make_current(&ctx_);
    net_.reset();
    rtl_.reset();
  }

  std::vector<std::uint8_t>& mem() { return mem_; }
  void mmio(MmioOp op) { mmio_.push_back(std::move(op)); }
  // net: tuser[32], a segment from the network front end (validate's duplicate / declined fates).
  void send(std::uint16_t stream, std::uint16_t ssn, std::vector<std::uint8_t> pkt, bool net = false) {
    packets_.push_back({std::uint64_t{net} << 32 | std::uint64_t{ssn} << 16 | stream, std::move(pkt)});
  }
  bool idle() const { return mmio_.empty() && packets_.empty() && !lite_busy_; }
  std::string progress() const {
    return std::to_string(packets_.size()) + " packets and " + std::to_string(mmio_.size() + lite_busy_) +
           " MMIO operations left after " + std::to_string(cycles_) + " cycles";
  }
  std::uint64_t mismatches() const { return mismatches_; }
  std::string first_mismatch() const { return first_; }

  void reset() {
    rtl_->ap_rst_n = 0;
    for (int i = 0; i < 8; ++i) cycle();
    rtl_->ap_rst_n = 1;
  }

  // One clock cycle: drive inputs from the testbench state, compare, then clock both models.
  void cycle() {
    drive();
    copy_inputs(*rtl_, *net_);
    rtl_->ap_clk = 0;
    net_->ap_clk = 0;
    rtl_->eval();
    net_->eval();
    const std::string d = diff_outputs(*rtl_, *net_);
    if (!d.empty() && mismatches_++ == 0) first_ = "cycle " + std::to_string(cycles_) + ": " + d;
    observe();
    if (fst_) fst_->dump(ctx_.time());
    ctx_.timeInc(1);
    rtl_->ap_clk = 1;
    net_->ap_clk = 1;
    rtl_->eval();
    net_->eval();
    if (fst_) fst_->dump(ctx_.time());
    ctx_.timeInc(1);
    ++cycles_;
  }

 private:
  bool chance(int percent) { return static_cast<int>(rng_() % 100) < percent; }

  void drive() {
    auto& m = *rtl_;
    // AXI4-Lite: one operation at a time.
    if (!lite_busy_ && !mmio_.empty() && m.ap_rst_n) {
      op_ = mmio_.front();
      mmio_.pop_front();
      lite_busy_ = true;
      aw_done_ = w_done_ = ar_done_ = false;
    }
    m.s_axi_control_awvalid = lite_busy_ && op_.write && !aw_done_;
    m.s_axi_control_awaddr = op_.addr;
    m.s_axi_control_wvalid = lite_busy_ && op_.write && !w_done_;
    m.s_axi_control_wdata = op_.data;
    m.s_axi_control_wstrb = 0xF;
    m.s_axi_control_bready = 1;
    m.s_axi_control_arvalid = lite_busy_ && !op_.write && !ar_done_;
    m.s_axi_control_araddr = op_.addr;
    m.s_axi_control_rready = 1;
    // AXI-Stream: packets back to back with random idle beats.
    const bool beat = !packets_.empty() && chance(85);
    m.s_axis_rx_tvalid = beat;
    if (beat) {
      const auto& p = packets_.front().second;
      const std::size_t off = beat_ * kBytes;
      const std::size_t n = std::min<std::size_t>(kBytes, p.size() - off);
      for (int w = 0; w < 16; ++w) {
        std::uint32_t v = 0;
        for (int b = 0; b < 4; ++b) {
          const std::size_t i = static_cast<std::size_t>(w * 4 + b);
          if (i < n) v |= static_cast<std::uint32_t>(p[off + i]) << (8 * b);
        }
        m.s_axis_rx_tdata[w] = v;
      }
      m.s_axis_rx_tkeep = n == 64 ? ~0ull : ((1ull << n) - 1);
      m.s_axis_rx_tlast = off + n == p.size();
      m.s_axis_rx_tuser = packets_.front().first;
    }
    // Host memory: random ready on every channel; B and R after the data.
    m.m_axi_gmem_awready = chance(80);
    m.m_axi_gmem_wready = chance(80);
    m.m_axi_gmem_bvalid = !bq_.empty() && chance(70);
    m.m_axi_gmem_bresp = 0;
    m.m_axi_gmem_arready = chance(70);
    m.m_axi_gmem_rvalid = !rq_.empty() && chance(70);
    if (!rq_.empty()) {
      for (int w = 0; w < 16; ++w) {
        std::uint32_t v = 0;
        for (int b = 0; b < 4; ++b)
          v |= static_cast<std::uint32_t>(mem_[(rq_.front().first + w * 4 + b) % kMem]) << (8 * b);
        m.m_axi_gmem_rdata[w] = v;
      }
      m.m_axi_gmem_rlast = rq_.front().second;
    }
    m.m_axi_gmem_rresp = 0;
  }

  // Handshakes seen at the falling edge take effect at the rising edge.
  void observe() {
    auto& m = *rtl_;
    if (m.s_axi_control_awvalid && m.s_axi_control_awready) aw_done_ = true;
    if (m.s_axi_control_wvalid && m.s_axi_control_wready) w_done_ = true;
    if (m.s_axi_control_bvalid && m.s_axi_control_bready) lite_busy_ = false;
    if (m.s_axi_control_arvalid && m.s_axi_control_arready) ar_done_ = true;
    if (m.s_axi_control_rvalid && m.s_axi_control_rready) {
      if (op_.until && !op_.until(m.s_axi_control_rdata)) {
        ar_done_ = false;  // poll again
      } else {
        lite_busy_ = false;
      }
    }
    if (m.s_axis_rx_tvalid && m.s_axis_rx_tready) {
      if (m.s_axis_rx_tlast) {
        packets_.pop_front();
        beat_ = 0;
      } else {
        ++beat_;
      }
    }
    // AXI A3.3.1: W may come before its AW handshake (the kernel offers it once the AW is presented);
    // such a burst takes the presented AW, and its B waits until that AW is accepted.
    if (m.m_axi_gmem_awvalid && m.m_axi_gmem_awready) {
      if (w_ahead_) {
        w_ahead_ = false;
        if (b_waits_aw_) bq_.push_back(1);
        b_waits_aw_ = false;
      } else {
        awq_.push_back({m.m_axi_gmem_awaddr, m.m_axi_gmem_awlen + 1u});
      }
    }
    if (m.m_axi_gmem_wvalid && m.m_axi_gmem_wready && awq_.empty() && !w_ahead_ && m.m_axi_gmem_awvalid) {
      awq_.push_back({m.m_axi_gmem_awaddr, m.m_axi_gmem_awlen + 1u});
      w_ahead_ = true;
    }
    if (m.m_axi_gmem_wvalid && m.m_axi_gmem_wready && !awq_.empty()) {
      auto& aw = awq_.front();
      for (int i = 0; i < kBytes; ++i) {
        const bool strobe = (m.m_axi_gmem_wstrb >> i) & 1;
        if (strobe)
          mem_[(aw.first + static_cast<std::uint64_t>(i)) % kMem] =
              static_cast<std::uint8_t>(m.m_axi_gmem_wdata[i / 4] >> (8 * (i % 4)));
      }
      aw.first += kBytes;
      if (--aw.second == 0) {
        awq_.pop_front();
        if (w_ahead_ && awq_.empty()) {
          b_waits_aw_ = true;  // B only after the AW
        } else {
          bq_.push_back(1);
        }
      }
    }
    if (m.m_axi_gmem_bvalid && m.m_axi_gmem_bready) bq_.pop_front();
    if (m.m_axi_gmem_arvalid && m.m_axi_gmem_arready) {
      for (unsigned i = 0; i <= m.m_axi_gmem_arlen; ++i)
        rq_.push_back({m.m_axi_gmem_araddr + i * kBytes, i == m.m_axi_gmem_arlen});
    }
    if (m.m_axi_gmem_rvalid && m.m_axi_gmem_rready) rq_.pop_front();
  }

  VerilatedContext ctx_;
  std::unique_ptr<Vrtl_kernel> rtl_;
  std::unique_ptr<Vnet_kernel> net_;
  std::unique_ptr<VerilatedFstC> fst_;
  std::mt19937_64 rng_;
  std::vector<std::uint8_t> mem_;
  std::deque<MmioOp> mmio_;
  MmioOp op_;
  bool lite_busy_ = false, aw_done_ = false, w_done_ = false, ar_done_ = false;
  std::deque<std::pair<std::uint64_t, std::vector<std::uint8_t>>> packets_;
  std::size_t beat_ = 0;
  std::deque<std::pair<std::uint64_t, std::uint32_t>> awq_;
  bool w_ahead_ = false;     // awq_.back() came from a presented AW whose handshake is still to come
  bool b_waits_aw_ = false;  // that burst's W is done; its B waits for the AW handshake
  std::deque<int> bq_;
  std::deque<std::pair<std::uint64_t, bool>> rq_;
  std::uint64_t cycles_ = 0, mismatches_ = 0;
  std::string first_;
};

void command(Lockstep& k, std::uint32_t op, const std::vector<std::uint32_t>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) k.mmio({true, hw::reg_cmd_arg(static_cast<unsigned>(i)), args[i], {}});
  k.mmio({true, hw::kRegCMD, op, {}});
  k.mmio({false, hw::kRegCMD_STATUS, 0, [op](std::uint32_t v) {
            if ((v & 1) == 0 && std::getenv("RNIC_VERBOSE")) std::printf("cmd %u -> status %#x\n", op, v);
            return (v & 1) == 0;
          }});
}

TEST(NetlistEquivalence, YosysNetlistMatchesRtlCycleByCycle) {
  const std::uint64_t s = rnic::tb::random_test_seed();
  Lockstep k(s);
  std::mt19937_64 rng(s ^ 0x5EED);
  k.reset();

  constexpr std::uint64_t kCq = 0x10000, kRing = 0x20000, kTagged = 0x100000, kRx = 0x200000;
  std::fill(k.mem().begin() + kCq, k.mem().begin() + kCq + 64 * 64, 0);  // the driver zeroes its ring
  k.mmio({false, hw::kRegID, 0, {}});
  k.mmio({true, hw::kRegCQ_BASE_LO, static_cast<std::uint32_t>(kCq), {}});
  k.mmio({true, hw::kRegCQ_BASE_HI, 0, {}});
  k.mmio({true, hw::kRegCQ_LOG2_SIZE, 6, {}});
  k.mmio({true, hw::kRegCQ_CTRL, 1, {}});
  for (std::uint32_t st = 0; st < 2; ++st) command(k, hw::kCmdSTREAM_ENABLE, {st, 7});
  // The card issues the keys (hw.def STAG_WRITE): the first write of an index on a fresh card gives
  // key 1, which CMD_RESULT confirms.
  for (std::uint32_t i = 1; i <= 3; ++i) {
    command(k, hw::kCmdSTAG_WRITE,
            {i, hw::kArgSTAG_WRITE_REMOTE_WRITE.mask() | (i == 3 ? hw::kArgSTAG_WRITE_BOUND.mask() : 0), 7, 1, 0x1000,
             0, 0x10000, 0, static_cast<std::uint32_t>(kTagged + i * 0x20000), 0});
    k.mmio({false, hw::kRegCMD_RESULT, 0, [i](std::uint32_t v) {
              EXPECT_EQ(v, i << 8 | 1u) << "CMD_RESULT after STAG_WRITE " << i;
              return true;
            }});
  }
  command(k, hw::kCmdQUEUE_CONFIG, {0, 0, static_cast<std::uint32_t>(kRing), 0, 4, 0});
  for (std::uint32_t slot = 0; slot < 12; ++slot) {  // 12 receive buffers of 4 KiB on (stream 0, QN 0)
    const std::uint64_t buf = kRx + slot * 0x1000;
    wire::store_le64(&k.mem()[kRing + slot * 16], buf);
    wire::store_le32(&k.mem()[kRing + slot * 16 + 8], 0x1000u);
  }
  k.mmio({true, hw::kRegDB_QUEUE, hw::db_queue(0, 0), {}});
  k.mmio({true, hw::kRegDB_PROD, 12, {}});
  for (int i = 0; i < 20000 && !k.idle(); ++i) k.cycle();  // tables programmed before traffic
  ASSERT_TRUE(k.idle()) << "programming did not finish (seed " << s << ")";

  // Tagged and untagged messages, a few invalid segments, on two streams.
  std::uint16_t ssn[2] = {0, 0};
  wire::DataSource src(1450);
  for (int m = 0; m < 24; ++m) {
    const std::uint16_t st = static_cast<std::uint16_t>(m % 2);
    const std::uint64_t len = rng() % 3000;
    std::vector<std::uint8_t> body(len);
    for (auto& b : body) b = static_cast<std::uint8_t>(rng());
    const auto stag = static_cast<std::uint32_t>((1u + rng() % 2) << 8 | 1u);
    auto seg = (st == 0 && m % 4 == 0) ? src.send_untagged(0, rng() & 0xFFFFFFFFFFull, len)
                                       : src.send_tagged(stag, 0x1000 + rng() % 0x8000, 0x42, len);
    ASSERT_TRUE(seg.ok());
    for (std::uint64_t i = 0; i < seg->segment_count(); ++i) {
      // Stream 0's segments come from the network front end (tuser net = 1), stream 1's do not.
      k.send(st, ssn[st]++, *wire::encode_planned_segment(seg->segment(i), wire::ConstBytes(body)), st == 0);
    }
  }
  {  // Stream 0 (net): a copy behind the window (duplicate) and one far ahead (declined), RFC 5043 10.
    wire::TaggedHeader t;
    t.last = true;
    t.stag = 1u << 8 | 0x01;
    t.to = 0x1000;
    k.send(0, static_cast<std::uint16_t>(ssn[0] - 1),
           *wire::encode_segment(t, wire::ConstBytes(std::vector<std::uint8_t>(40, 7))), true);
    k.send(0, static_cast<std::uint16_t>(ssn[0] + 500),
           *wire::encode_segment(t, wire::ConstBytes(std::vector<std::uint8_t>(40, 7))), true);
  }
  wire::TaggedHeader bad;  // wrong key on stream 1: an error, then stream 1 drops
  bad.last = true;
  bad.stag = 1u << 8 | 0x02;
  bad.to = 0x1000;
  k.send(1, ssn[1]++, *wire::encode_segment(bad, wire::ConstBytes(std::vector<std::uint8_t>(100, 1))));
  k.send(1, ssn[1]++, *wire::encode_segment(bad, wire::ConstBytes(std::vector<std::uint8_t>(10, 1))));
  k.mmio({false, hw::kRegCNT_SEGMENTS_LO, 0, {}});
  k.mmio({false, hw::kRegCQ_PROD, 0, [](std::uint32_t v) { return v > 0; }});

  for (int i = 0; i < 200000 && !k.idle(); ++i) k.cycle();
  for (int i = 0; i < 2000; ++i) k.cycle();
  EXPECT_TRUE(k.idle()) << "the workload did not finish: " << k.progress() << " (seed " << s << ")";
  EXPECT_EQ(k.mismatches(), 0u) << "first mismatch: " << k.first_mismatch() << " (seed " << s << ")";
  // The workload must have done real work: completions in the ring with their phase bit set.
  int completions = 0;
  for (int e = 0; e < 64; ++e) {
    const std::uint8_t* c = &k.mem()[kCq + static_cast<std::size_t>(e) * 64];
    completions += c[2] & 1;
    if ((c[2] & 1) && std::getenv("RNIC_VERBOSE")) {
      std::printf("cqe %2d stream %u flags %#x err %x/%02x ssn %u stag/qn %#x len %u\n", e, c[0] | c[1] << 8, c[2],
                  c[3], c[4], c[6] | c[7] << 8, c[8] | c[9] << 8 | c[10] << 16 | static_cast<unsigned>(c[11]) << 24,
                  c[16] | c[17] << 8);
      for (int i = 32; i < 50; ++i) std::printf("%02x ", c[i]);
      std::printf("\n");
    }
  }
  EXPECT_GE(completions, 10) << "seed " << s;
  // ... and placed payload: tagged buffers and receive buffers no longer hold the fill pattern.
  std::size_t placed = 0;
  for (std::uint64_t a = kTagged; a < kRx + 12 * 0x1000; ++a) placed += k.mem()[a] != 0xA5;
  EXPECT_GE(placed, 20000u) << "seed " << s;
}

}  // namespace
