// SPDX-License-Identifier: Apache-2.0
// rnic_net_tx (issue 14, docs/network.md "Rings in host memory") at one DataWidth (RNIC_TX_DW; tx.cmake
// builds it at 512 and 128) against rnic::tb::AxiHostMemory and a host model: the host writes SCTP
// packets (random bytes, random checksum field content) and NTXD descriptors (LEN, SOCKET; hw.def) into
// the slots of a ring, rings the doorbell (prod_i) and reclaims slots as cons_o passes them (scribbling
// over each reclaimed slot, so a slot read after cons_o passed it shows up as a wrong packet). Checked:
//   - every packet with a good LEN and no read error leaves on m_axis_net whole, byte-exact, with the
//     CRC32c of the packet with bytes 8..11 as zero stored there least significant byte first (RFC 9260
//     6.8, appendix A), tdest = SOCKET on every beat, tkeep contiguous from bit 0 (partial only on the
//     last beat), in ring order, and stable while not taken (AXI-Stream handshake);
//   - a LEN outside 12..9216 or above the slot less 16: nothing sent, bad_o pulses in the cycle cons_o
//     passes the slot, only the descriptor beat read;
//   - a slot touching the SLVERR range: nothing sent, rresp_err_o once per bad beat, cons_o goes on;
//   - every AR: inside a slot between cons_o and prod_i, within [slot, slot + 16 + LEN) rounded out to
//     beats (one beat for a bad LEN), never across a 16-beat boundary from the slot (the memory model
//     checks alignment, INCR, 4 KiB crossings);
//   - cons_o steps by one, never past prod_i; enable low then high restarts it at 0; reset mid-packet.
// Seed: random tests print theirs; RNIC_TEST_SEED=<n> replays. Waveform with RNIC_FST=<file>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/tb/host_memory.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/sim.hpp"
#include "rnic/wire/bytes.hpp"

#define RNIC_CAT2(a, b) a##b
#define RNIC_CAT(a, b) RNIC_CAT2(a, b)
#include RNIC_TX_HDR  // the model's header and class, the suite's suffix: tx.cmake

#define TX_SUITE RNIC_CAT(NetTx, RNIC_TX_NAME)

namespace {

using rnic::tb::AxiHostMemory;
using rnic::tb::Component;
using rnic::tb::get_bit;
using rnic::tb::get_byte;
using rnic::tb::HostMemConfig;
using rnic::tb::Sim;
using Bytes = std::vector<std::uint8_t>;
using Model = RNIC_TX_CLASS;

constexpr std::size_t kBeat = RNIC_TX_DW / 8;
constexpr std::size_t kDesc = 16;  // NET_SLOT_DESC_BYTES
constexpr std::size_t kMaxPacket = 9216;

// Sim and AxiHostMemory drive ap_clk / ap_rst_n: the unit's clk_i / rst_ni behind those names.
struct Top : Model {
  Top(VerilatedContext* c, const char* n) : Model(c, n) {}
  CData ap_clk = 0, ap_rst_n = 0;
  void eval() {
    clk_i = ap_clk;
    rst_ni = ap_rst_n;
    Model::eval();
  }
};

enum class Fate : std::uint8_t { kSent, kBad, kReadErr, kGatherBad };

// One slot as the host wrote it.
struct Slot {
  Fate fate = Fate::kSent;
  Bytes wire;  // the packet as it must leave (CRC32c in place)
  std::uint16_t socket = 0;
  std::uint64_t addr = 0;
  std::size_t len_field = 0;
};

// RFC 9260 6.8: the CRC32c over the packet with bytes 8..11 as zero, stored least significant first.
Bytes with_crc(Bytes p) {
  rnic::capture::SctpPacket::seal(p);
  return p;
}

std::size_t round_up(std::size_t n) { return (n + kBeat - 1) / kBeat * kBeat; }

// A packet to put in the ring: its bytes (checksum field random) and the LEN field written (the
// packet's size unless a hostile descriptor says otherwise).
struct HostPacket {
  Bytes bytes;
  std::size_t len_field = 0;
  std::uint16_t socket = 0;
  bool gather = false;  // NTXD GATHER: through rnic_net_gather, whose tables the bench leaves empty
};

class Bench : public Component<Top> {
 public:
  Bench(std::uint64_t seed, const HostMemConfig& cfg, unsigned log2_slots, unsigned slot_log2,
        std::uint64_t base = 0x100000)
      : rng_(seed), mem_(sim_, kBeat, cfg) {
    sim_.add(this);
    set_ring(base, log2_slots, slot_log2);
    sim_.reset(4);
  }
  ~Bench() override {
    EXPECT_TRUE(sim_.errors().empty()) << sim_.errors().text();
    EXPECT_EQ(errors_, 0U) << "mismatches (first 10 reported above)";
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  std::mt19937_64& rng() { return rng_; }
  Top& top() { return sim_.top(); }
  AxiHostMemory<Top, rnic::bus::ModulePorts>& mem() { return mem_; }
  std::uint64_t cycle() const { return sim_.cycle(); }

  void set_ring(std::uint64_t base, unsigned log2_slots, unsigned slot_log2) {
    base_ = base;
    log2_slots_ = log2_slots;
    slot_log2_ = slot_log2;
  }
  std::uint64_t slot_addr(std::uint32_t i) const {
    return base_ + (std::uint64_t{i & ((1U << log2_slots_) - 1)} << slot_log2_);
  }

  // ---- policies ---------------------------------------------------------------------------------
  double out_ready = 1.0;                          // probability of tready in a cycle
  double doorbell = 1.0;                           // probability the host rings for what it has written, per cycle
  bool auto_doorbell = true;                       // false: only ring() rings
  bool host_enable = true;                         // enable_i
  std::uint64_t read_err_lo = 0, read_err_hi = 0;  // the memory's SLVERR range (the same as its config)

  void offer(HostPacket p) { pending_.push_back(std::move(p)); }
  void offer_random(std::size_t n) {
    HostPacket p;
    p.bytes.resize(n);
    for (auto& x : p.bytes) x = static_cast<std::uint8_t>(rng_());
    p.len_field = n;
    p.socket = static_cast<std::uint16_t>(rng_());
    offer(std::move(p));
  }
  void ring() { prod_ = written_; }

  // Cycles until every offered packet is written, its slot consumed and every expected packet out.
  void run(std::uint64_t limit = 3'000'000) {
    for (std::uint64_t i = 0; i < limit && !done(); ++i) sim_.tick();
    for (int i = 0; i < 60; ++i) sim_.tick();  // nothing more may come
    EXPECT_TRUE(pending_.empty()) << pending_.size() << " packets never written";
    EXPECT_TRUE(slots_.empty()) << slots_.size() << " slots never consumed (cons_o " << cons_seen_ << ")";
    EXPECT_TRUE(expect_.empty()) << expect_.size() << " packets never sent";
    EXPECT_EQ(rresp_pulses_, mem_.r_error_beats()) << "rresp_err_o pulses vs SLVERR beats";
  }
  bool done() const { return pending_.empty() && slots_.empty() && expect_.empty(); }
  void cycles(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) sim_.tick();
  }
  void until(const std::function<bool()>& f, std::uint64_t limit = 1'000'000) {
    for (std::uint64_t i = 0; i < limit && !f(); ++i) sim_.tick();
  }

  // Reset in the middle of whatever is going on (at a cycle without ARVALID, so the memory sees no
  // AR withdrawn), held until the memory has answered every read; then a fresh ring at prod 0.
  void reset_now() {
    until([this] { return top().m_axi_arvalid_o == 0; });
    top().ap_rst_n = 0;
    sim_.tick();
    until([this] { return mem_.idle(); });
    sim_.tick();
    top().ap_rst_n = 1;
    forget();
    sim_.tick();
  }
  // The host gives up what it had in the ring (after a reset, or while disabled and idle).
  void forget() {
    pending_.clear();
    slots_.clear();
    expect_.clear();
    prod_ = written_ = cons_seen_ = 0;
    acc_.clear();
    in_packet_ = false;
    prev_valid_ = false;
  }
  // enable low -> high restarts cons at 0: the host expects it.
  void expect_restart() {
    cons_seen_ = 0;
    restart_pending_ = true;
  }
  // Packets of slots cons_o has passed that have not left yet.
  std::size_t unsent_consumed() const {
    const auto later = std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.fate == Fate::kSent; });
    return expect_.size() - static_cast<std::size_t>(later);
  }

  std::uint32_t cons_seen() const { return cons_seen_; }
  std::uint32_t prod() const { return prod_; }
  std::uint64_t bad_pulses() const { return bad_pulses_; }
  std::uint64_t rresp_pulses() const { return rresp_pulses_; }
  std::uint64_t gather_bad_pulses() const { return gather_bad_pulses_; }
  std::uint64_t gather_bad_expected() const { return gather_bad_expected_; }
  std::uint64_t sent() const { return sent_; }
  std::size_t expected_out() const { return expect_.size(); }
  const std::vector<std::uint64_t>& first_beat_cycles() const { return first_cycles_; }
  const std::vector<std::uint64_t>& last_beat_cycles() const { return last_cycles_; }
  std::uint64_t ar_count() const { return ars_; }

  void error(const std::string& s) {
    if (errors_ < 10) ADD_FAILURE() << "cycle " << sim_.cycle() << ": " << s;
    ++errors_;
  }

  // ---- the component -----------------------------------------------------------------------------
  void drive(Top& t, std::uint64_t) override {
    host_step();
    t.enable_i = host_enable;
    t.base_i = base_;
    t.log2_slots_i = static_cast<CData>(log2_slots_);
    t.slot_log2_i = static_cast<CData>(slot_log2_);
    t.prod_i = prod_;
    t.m_axis_net_tready_i = chance(out_ready);
  }

  void sample(const Top& t, std::uint64_t cycle) override {
    if (!t.ap_rst_n) return;
    sample_ar(t);
    sample_cons(t);
    sample_out(t, cycle);
    if (t.rresp_err_o) ++rresp_pulses_;
    if (t.gather_bad_o) {
      if (t.g_reason_o == 1)
        ++gather_bad_pulses_;  // association
      else if (t.g_reason_o != 12)
        error("gather_bad_o with reason " + std::to_string(t.g_reason_o));
    }
  }

 private:
  bool chance(double p) { return p >= 1.0 || std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
  std::uint32_t slots() const { return 1U << log2_slots_; }

  // Writes one pending packet into the next free slot, rings by policy.
  void host_step() {
    if (!pending_.empty() && written_ - cons_seen_ < slots()) {
      HostPacket p = std::move(pending_.front());
      pending_.pop_front();
      Slot s;
      s.addr = slot_addr(written_);
      s.socket = p.socket;
      s.len_field = p.len_field;
      Bytes desc(kDesc);
      for (auto& x : desc) x = static_cast<std::uint8_t>(rng_());  // RSVD: ignored
      rnic::wire::store_le16(desc.data(), static_cast<std::uint16_t>(p.len_field));
      rnic::wire::store_le16(desc.data() + 2, p.socket);
      desc[4] = p.gather ? 1 : 0;  // FLAGS
      desc[5] = 0;                 // ASSOC
      mem_.host_write(s.addr, desc.data(), desc.size());
      const std::size_t room = (std::size_t{1} << slot_log2_) - kDesc;
      const std::size_t n = std::min(p.bytes.size(), room);
      mem_.host_write(s.addr + kDesc, p.bytes.data(), n);
      const bool good_len = p.len_field >= 12 && p.len_field <= kMaxPacket && p.len_field <= room;
      if (!good_len) {
        s.fate = Fate::kBad;
      } else {
        const std::uint64_t end = s.addr + round_up(kDesc + p.len_field);
        s.fate =
            (read_err_lo < read_err_hi && s.addr < read_err_hi && read_err_lo < end) ? Fate::kReadErr : Fate::kSent;
        // No association entry (a_valid_i 0): the gather fails every gather packet (reason 1).
        if (p.gather && s.fate == Fate::kSent) {
          s.fate = Fate::kGatherBad;
          ++gather_bad_expected_;
        }
        p.bytes.resize(p.len_field);
        s.wire = with_crc(p.bytes);
      }
      if (s.fate == Fate::kSent) expect_.push_back(s);
      slot_len_[written_ & (slots() - 1)] = s.len_field;
      slots_.push_back(std::move(s));
      ++written_;
    }
    if (auto_doorbell && prod_ != written_ && chance(doorbell)) prod_ = written_;
  }

  void sample_ar(const Top& t) {
    if (!(t.m_axi_arvalid_o && t.m_axi_arready_i)) return;
    ++ars_;
    const std::uint64_t a = t.m_axi_araddr_o;
    const unsigned beats = t.m_axi_arlen_o + 1U;
    const std::uint64_t bytes = std::uint64_t{beats} * kBeat;
    const std::uint64_t slot_bytes = std::uint64_t{1} << slot_log2_;
    if (a < base_ || ((a - base_) >> slot_log2_) >= slots()) {
      error("AR 0x" + hex(a) + " outside the ring");
      return;
    }
    const auto idx = static_cast<std::uint32_t>((a - base_) >> slot_log2_);
    const std::uint64_t off = (a - base_) & (slot_bytes - 1);
    if (off + bytes > slot_bytes) error("AR 0x" + hex(a) + " +" + std::to_string(beats) + " beats leaves its slot");
    if ((off / kBeat) % 16 + beats > 16) error("AR 0x" + hex(a) + " crosses a 16-beat boundary of its slot");
    // The slot must be one the host handed over: between cons and prod.
    const std::uint32_t inflight = prod_ - cons_seen_;
    if (inflight < slots() && ((idx - cons_seen_) & (slots() - 1)) >= inflight) {
      error("AR 0x" + hex(a) + " reads slot " + std::to_string(idx) + " not between cons " +
            std::to_string(cons_seen_) + " and prod " + std::to_string(prod_));
    }
    const std::size_t len = slot_len_[idx];
    const std::size_t room = slot_bytes - kDesc;
    const bool good_len = len >= 12 && len <= kMaxPacket && len <= room;
    const std::uint64_t limit = good_len ? round_up(kDesc + len) : kBeat;
    if (off + bytes > limit) {
      error("AR 0x" + hex(a) + " +" + std::to_string(beats) + " beats reads past the packet (LEN " +
            std::to_string(len) + ")");
    }
  }

  void sample_cons(const Top& t) {
    const std::uint32_t c = t.cons_o;
    if (restart_pending_) {  // enable_i rose: cons_o goes to 0 once the unit is idle
      if (c == 0) restart_pending_ = false;
      return;
    }
    if (c == cons_seen_) {
      if (t.bad_o) error("bad_o without cons_o passing a bad slot");
      return;
    }
    if (c != cons_seen_ + 1) {
      error("cons_o " + std::to_string(c) + " after " + std::to_string(cons_seen_));
      cons_seen_ = c;
      return;
    }
    if (cons_seen_ == prod_) error("cons_o passes prod_i " + std::to_string(prod_));
    cons_seen_ = c;
    if (slots_.empty()) {
      error("cons_o passes a slot the host never wrote");
      return;
    }
    const Slot s = slots_.front();
    slots_.pop_front();
    if ((s.fate == Fate::kBad) != static_cast<bool>(t.bad_o)) {
      error(std::string("cons_o passes a slot with LEN ") + std::to_string(s.len_field) + ", bad_o " +
            std::to_string(t.bad_o));
    }
    if (t.bad_o) ++bad_pulses_;
    // The slot is the host's again: scribble over it.
    Bytes junk(round_up(kDesc + std::min<std::size_t>(s.len_field, (std::size_t{1} << slot_log2_) - kDesc)));
    for (auto& x : junk) x = static_cast<std::uint8_t>(rng_());
    junk.resize(std::min<std::size_t>(junk.size(), std::size_t{1} << slot_log2_));
    mem_.host_write(s.addr, junk.data(), junk.size());
  }

  void sample_out(const Top& t, std::uint64_t cycle) {
    const bool v = t.m_axis_net_tvalid_o;
    const bool r = t.m_axis_net_tready_i;
    Bytes data(kBeat);
    for (unsigned i = 0; i < kBeat; ++i) data[i] = get_byte(t.m_axis_net_tdata_o, i);
    std::uint64_t keep = 0;
    for (unsigned i = 0; i < kBeat; ++i)
      if (get_bit(t.m_axis_net_tkeep_o, i)) keep |= std::uint64_t{1} << (i % 64);
    unsigned nkeep = 0;
    for (unsigned i = 0; i < kBeat; ++i) nkeep += get_bit(t.m_axis_net_tkeep_o, i) ? 1U : 0U;
    if (prev_valid_) {  // AXI-Stream: held until taken
      if (!v || data != prev_data_ || nkeep != prev_keep_ || t.m_axis_net_tlast_o != prev_last_ ||
          t.m_axis_net_tdest_o != prev_dest_) {
        error("m_axis_net changed or dropped tvalid before tready");
      }
    }
    prev_valid_ = v && !r;
    prev_data_ = data;
    prev_keep_ = nkeep;
    prev_last_ = t.m_axis_net_tlast_o;
    prev_dest_ = t.m_axis_net_tdest_o;
    if (!(v && r)) return;
    for (unsigned i = 0; i < kBeat; ++i) {
      if (get_bit(t.m_axis_net_tkeep_o, i) != (i < nkeep)) {
        error("tkeep not contiguous from bit 0");
        break;
      }
    }
    if (!t.m_axis_net_tlast_o && nkeep != kBeat) error("a non-last beat not full");
    if (nkeep == 0) error("a beat with tkeep 0");
    if (!in_packet_) {
      in_packet_ = true;
      dest_ = t.m_axis_net_tdest_o;
      first_cycles_.push_back(cycle);
    } else if (t.m_axis_net_tdest_o != dest_) {
      error("tdest changed within a packet");
    }
    acc_.insert(acc_.end(), data.begin(), data.begin() + nkeep);
    if (!t.m_axis_net_tlast_o) return;
    in_packet_ = false;
    last_cycles_.push_back(cycle);
    ++sent_;
    if (expect_.empty()) {
      error("a packet of " + std::to_string(acc_.size()) + " bytes sent, none expected");
    } else {
      const Slot& s = expect_.front();
      if (acc_ != s.wire) {
        std::size_t at = 0;
        while (at < std::min(acc_.size(), s.wire.size()) && acc_[at] == s.wire[at]) ++at;
        error("packet of " + std::to_string(acc_.size()) + " bytes (expected " + std::to_string(s.wire.size()) +
              ", slot 0x" + hex(s.addr) + ") differs from byte " + std::to_string(at));
      }
      if (dest_ != s.socket) error("tdest " + std::to_string(dest_) + ", expected " + std::to_string(s.socket));
      expect_.pop_front();
    }
    acc_.clear();
  }

  static std::string hex(std::uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v));
    return b;
  }

  std::mt19937_64 rng_;
  Sim<Top> sim_;
  AxiHostMemory<Top, rnic::bus::ModulePorts> mem_;
  std::uint64_t base_ = 0;
  unsigned log2_slots_ = 0, slot_log2_ = 12;
  std::deque<HostPacket> pending_;
  std::deque<Slot> slots_;   // written, not yet consumed
  std::deque<Slot> expect_;  // to be sent, in order
  std::vector<std::size_t> slot_len_ = std::vector<std::size_t>(1U << 15, 0);
  std::uint32_t prod_ = 0, written_ = 0, cons_seen_ = 0;
  Bytes acc_, prev_data_;
  bool in_packet_ = false, prev_valid_ = false, restart_pending_ = false;
  unsigned prev_keep_ = 0;
  CData prev_last_ = 0;
  SData prev_dest_ = 0;
  std::uint16_t dest_ = 0;
  std::uint64_t errors_ = 0, bad_pulses_ = 0, rresp_pulses_ = 0, sent_ = 0, ars_ = 0;
  std::uint64_t gather_bad_pulses_ = 0, gather_bad_expected_ = 0;
  std::vector<std::uint64_t> first_cycles_, last_cycles_;
};

// Lengths: boundaries around the beat and the 16-byte shift, short, medium and long packets.
std::size_t random_len(std::mt19937_64& rng) {
  const unsigned r = static_cast<unsigned>(rng() % 100);
  if (r < 15) {
    const long b = static_cast<long>(kBeat);
    const long edges[] = {12, 13,    b - 17,     b - 16, b - 15,         b - 1,
                          b,  b + 1, 2 * b - 16, 2 * b,  kMaxPacket - 1, kMaxPacket};
    return static_cast<std::size_t>(std::max(12L, edges[rng() % (sizeof edges / sizeof edges[0])]));
  }
  if (r < 55) return 12 + rng() % 200;
  if (r < 85) return 200 + rng() % 1800;
  return 2000 + rng() % (kMaxPacket - 2000 + 1);
}

// Random traffic through a small ring (wraps many times) with random memory timing, random output
// backpressure, doorbells rung for bursts of packets, and phases of a very slow consumer.
TEST(TX_SUITE, RandomTrafficRingWrap) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  Bench b(seed, HostMemConfig::random(seed), 3, 14);
  auto& rng = b.rng();
  b.out_ready = 0.7;
  b.doorbell = 0.1;
  for (int i = 0; i < 250; ++i) b.offer_random(random_len(rng));
  for (int phase = 0; phase < 6 && !b.done(); ++phase) {
    b.out_ready = phase % 2 == 0 ? 0.05 : 0.8;  // slow consumer, then a fast one
    b.doorbell = phase % 3 == 0 ? 0.02 : 0.5;   // rare doorbells: bursts of slots at once
    b.cycles(20'000);
  }
  b.out_ready = 0.7;
  b.run();
  EXPECT_EQ(b.sent(), 250U);
  EXPECT_EQ(b.bad_pulses(), 0U);
}

// One slot (log2_slots 0) and two slots: the ring index wraps at every packet.
TEST(TX_SUITE, TinyRings) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  for (unsigned ls : {0U, 1U}) {
    Bench b(seed + ls, HostMemConfig::random(seed + ls), ls, 14);
    auto& rng = b.rng();
    b.out_ready = 0.8;
    for (int i = 0; i < 40; ++i) b.offer_random(random_len(rng));
    b.run();
    EXPECT_EQ(b.sent(), 40U);
  }
}

// Hostile descriptors at slot_log2 12 (4 KiB slots: LEN at most 4080): LEN 0, 1..11, 9217, 0xFFFF and
// 4081 are skipped (bad_o in the cycle cons_o passes the slot), nothing of them is read past the
// descriptor beat and no AR leaves its slot; 12 and 4080 pass; good packets around them are sent.
TEST(TX_SUITE, HostileDescriptorsSkipped) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  Bench b(seed, HostMemConfig::random(seed), 4, 12);
  auto& rng = b.rng();
  b.out_ready = 0.8;
  std::vector<std::size_t> bad = {0, 9217, 0xFFFF, 4081, 4095, 4096, 8192};
  for (std::size_t l = 1; l < 12; ++l) bad.push_back(l);
  std::size_t nbad = 0, ngood = 0;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t l : bad) {
      HostPacket p;
      p.bytes.resize(std::min<std::size_t>(std::max<std::size_t>(l, 1), 4080));
      for (auto& x : p.bytes) x = static_cast<std::uint8_t>(rng());
      p.len_field = l;
      p.socket = static_cast<std::uint16_t>(rng());
      b.offer(p);
      ++nbad;
      const std::size_t good = rng() % 4 == 0 ? 4080 : rng() % 3 == 0 ? 12 : 12 + rng() % 4069;
      b.offer_random(good);
      ++ngood;
    }
  }
  b.run();
  EXPECT_EQ(b.bad_pulses(), nbad);
  EXPECT_EQ(b.sent(), ngood);
}

// SLVERR on a range inside one slot of the ring: every packet whose read touches it is dropped whole
// (rresp_err_o per bad beat, cons_o goes on), the others are sent.
TEST(TX_SUITE, ReadErrorDropsThatPacket) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  HostMemConfig cfg = HostMemConfig::random(seed);
  const std::uint64_t base = 0x100000;
  // Slot 2 of 4 (16 KiB slots), from byte 16 + 3 * kBeat on: packets in slot 2 longer than that fail.
  cfg.read_err_lo = base + 2 * 0x4000 + kDesc + 3 * kBeat;
  cfg.read_err_hi = cfg.read_err_lo + 64;
  Bench b(seed, cfg, 2, 14, base);
  b.read_err_lo = cfg.read_err_lo;
  b.read_err_hi = cfg.read_err_hi;
  auto& rng = b.rng();
  b.out_ready = 0.8;
  for (int i = 0; i < 80; ++i) b.offer_random(i % 4 == 2 && i % 8 == 6 ? 12 + rng() % 20 : random_len(rng));
  b.run();
  EXPECT_GT(b.rresp_pulses(), 0U);
  EXPECT_GT(b.sent(), 40U);
  EXPECT_LT(b.sent(), 80U);
}

// NTXD GATHER (issue 35, docs/transmit.md): the packet goes through rnic_net_gather, and with no
// association entry (the bench leaves the gather's tables empty) it is dropped whole, gather_bad_o
// naming the association; the packets around it are sent as they are.
TEST(TX_SUITE, GatherPacketWithoutItsAssociationIsDropped) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  Bench b(seed, HostMemConfig::random(seed), 3, 14);
  auto& rng = b.rng();
  b.out_ready = 0.7;
  for (int i = 0; i < 60; ++i) {
    HostPacket p;
    const std::size_t n = random_len(rng);
    p.bytes.resize(n);
    for (auto& x : p.bytes) x = static_cast<std::uint8_t>(rng());
    p.len_field = n;
    p.socket = static_cast<std::uint16_t>(rng() % 16);
    p.gather = i % 3 == 1;
    b.offer(std::move(p));
  }
  b.run();
  EXPECT_EQ(b.sent(), 40U);
  EXPECT_EQ(b.gather_bad_expected(), 20U);
  EXPECT_EQ(b.gather_bad_pulses(), 20U);
}

// Same, the descriptor beat itself erroring: the slot is skipped as a read error, not as a bad LEN.
TEST(TX_SUITE, ReadErrorOnDescriptorBeat) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  HostMemConfig cfg = HostMemConfig::random(seed);
  const std::uint64_t base = 0x100000;
  cfg.read_err_lo = base + 0x4000;  // slot 1's descriptor beat
  cfg.read_err_hi = cfg.read_err_lo + 8;
  Bench b(seed, cfg, 2, 14, base);
  b.read_err_lo = cfg.read_err_lo;
  b.read_err_hi = cfg.read_err_hi;
  auto& rng = b.rng();
  for (int i = 0; i < 40; ++i) b.offer_random(random_len(rng));
  b.run();
  EXPECT_EQ(b.sent(), 30U);
  EXPECT_EQ(b.rresp_pulses(), 10U);
  EXPECT_EQ(b.bad_pulses(), 0U);
}

// enable_i low in the middle of traffic: no new slot started, the started one finishes; then enable_i
// high again restarts cons_o at 0 and a fresh ring is sent whole.
TEST(TX_SUITE, EnableLowThenHighRestartsCons) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  Bench b(seed, HostMemConfig::random(seed), 3, 14);
  auto& rng = b.rng();
  b.out_ready = 0.3;
  for (int i = 0; i < 60; ++i) b.offer_random(random_len(rng));
  b.cycles(1000 + rng() % 2000);
  b.host_enable = false;
  b.auto_doorbell = false;
  b.cycles(5);
  // Quiet: not busy, and every slot consumed so far has left (the packets in the buffer).
  b.until([&] { return b.top().busy_o == 0; });
  const std::uint32_t stopped = b.top().cons_o;  // after the last edge (cons_seen() is one sample behind)
  b.cycles(2000);
  EXPECT_EQ(b.cons_seen(), stopped) << "a slot consumed while disabled";
  EXPECT_EQ(b.top().busy_o, 0);
  EXPECT_EQ(b.top().m_axi_arvalid_o, 0);
  // Every packet of a consumed slot leaves; the rest of the ring is given up.
  b.until([&] { return b.unsent_consumed() == 0; }, 100'000);
  EXPECT_EQ(b.unsent_consumed(), 0U);
  EXPECT_LT(stopped, 60U) << "traffic finished before the disable";
  const std::uint64_t sent_before = b.sent();
  b.forget();
  b.expect_restart();
  b.cycles(2);
  b.host_enable = true;
  b.auto_doorbell = true;
  b.cycles(3);
  EXPECT_EQ(b.top().cons_o, 0U) << "cons_o after enable low -> high";
  for (int i = 0; i < 40; ++i) b.offer_random(random_len(rng));
  b.run();
  EXPECT_EQ(b.sent() - sent_before, 40U);
}

// Reset in the middle of packets (long ones, so it lands mid-read and mid-send), then clean traffic.
TEST(TX_SUITE, ResetMidPacketThenCleanTraffic) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  Bench b(seed, HostMemConfig::random(seed), 3, 14);
  auto& rng = b.rng();
  b.out_ready = 0.5;
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < 20; ++i) b.offer_random(4000 + rng() % 5000);
    b.cycles(500 + rng() % 4000);
    b.reset_now();
    EXPECT_EQ(b.top().cons_o, 0U);
    EXPECT_EQ(b.top().m_axis_net_tvalid_o, 0);
  }
  const std::uint64_t before = b.sent();
  for (int i = 0; i < 40; ++i) b.offer_random(random_len(rng));
  b.run();
  EXPECT_EQ(b.sent() - before, 40U);
}

// Cycles per packet, 100 packets back to back of 64, 1500 and 9000 bytes (memory always ready, its
// default 8-cycle latency; output always ready), and the latency from the doorbell to the first beat.
TEST(TX_SUITE, Throughput) {
  for (std::size_t len : {std::size_t{64}, std::size_t{1500}, std::size_t{9000}}) {
    Bench b(1, HostMemConfig{}, 7, 14);
    b.auto_doorbell = false;
    for (int i = 0; i < 100; ++i) b.offer_random(len);
    b.cycles(110);  // the host writes every slot first
    b.ring();
    const std::uint64_t t0 = b.cycle();
    b.run();
    ASSERT_EQ(b.first_beat_cycles().size(), 100U);
    const std::uint64_t first = b.first_beat_cycles().front();
    const std::uint64_t last = b.last_beat_cycles().back();
    const double per = static_cast<double>(last - first) / 99.0;
    const double beats = static_cast<double>((len + kBeat - 1) / kBeat);
    std::printf(
        "[ RNIC     ] rnic_net_tx %u bits, %zu-byte packets: %.2f cycles/packet (%.0f beats, %.2f beats/cycle); "
        "doorbell to first beat %llu cycles, 100 packets in %llu cycles\n",
        static_cast<unsigned>(RNIC_TX_DW), len, per, beats, beats / per, static_cast<unsigned long long>(first - t0),
        static_cast<unsigned long long>(last - t0));
    EXPECT_LT(per, 4.0 * beats + 100.0);  // a sanity bound only
  }
}

}  // namespace
