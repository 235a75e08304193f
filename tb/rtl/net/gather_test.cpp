// SPDX-License-Identifier: Apache-2.0
// rnic_net_gather (issue 35, docs/transmit.md) at one DataWidth (RNIC_GATHER_DW; gather.cmake builds it at
// 512, 256 and 128) against the reference model tb/net
// TxGatherRef (tx_gather_ref.hpp's rules) and rnic::tb::AxiHostMemory. The bench feeds slot packets
// (valid with random gaps), answers the association port and the table port (random latency) from the
// same TxTables the model reads, and takes the output with random backpressure. Checked, per packet in
// order:
//   - a packet the model sends leaves whole and byte-exact (bytes 8..11, the checksum, are the slot's:
//     the CRC32c is the sender's after this unit), tkeep contiguous and partial only on the last beat,
//     the info's length and socket right, not bad;
//   - a packet the model drops leaves marked bad with the model's reason (RFC 5041 8: nothing of it may
//     be sent);
//   - every AR lies inside the beats of a range the model read (so only inside a checked STag's range,
//     rounded out to whole beats), never crosses 4 KiB (the memory model checks it too);
//   - a read answered with SLVERR marks the packet bad (read error).
// Seed: random tests print theirs; RNIC_TEST_SEED=<n> replays. Waveform with RNIC_FST=<file>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "rnic/tb/host_memory.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/sim.hpp"
#include "rnic/tb/tx_gather_fixture.hpp"
#include "rnic/tb/tx_gather_ref.hpp"
#include "rnic/wire/bytes.hpp"

#define RNIC_CAT2(a, b) a##b
#define RNIC_CAT(a, b) RNIC_CAT2(a, b)
#include RNIC_GATHER_HDR  // the model's header and class, the suite's suffix: gather.cmake
#define GATHER_SUITE RNIC_CAT(NetGather, RNIC_GATHER_NAME)

namespace {

using rnic::tb::AxiHostMemory;
using rnic::tb::Component;
using rnic::tb::get_bit;
using rnic::tb::get_byte;
using rnic::tb::HostMemConfig;
using rnic::tb::set_byte;
using rnic::tb::Sim;
using rnic::tb::net::AssocEntry;
using rnic::tb::net::TxDrop;
using rnic::tb::net::TxGather;
using rnic::tb::net::TxStag;
using rnic::tb::net::TxTables;
using rnic::tb::net::fixture::common_header;
using rnic::tb::net::fixture::descriptor;
using rnic::tb::net::fixture::kBaseTo;
using rnic::tb::net::fixture::kBoundStag;
using rnic::tb::net::fixture::kForeignStag;
using rnic::tb::net::fixture::kMyPort;
using rnic::tb::net::fixture::kNoReadStag;
using rnic::tb::net::fixture::kStag;
using rnic::tb::net::fixture::kTheirPort;
using rnic::tb::net::fixture::plain_chunk;
using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kBeat = RNIC_GATHER_DW / 8;
constexpr std::uint64_t kRegion = 0x200000;  // registered memory in the memory model
constexpr std::size_t kRegionSize = 64 * 1024;

using Model = RNIC_GATHER_CLASS;
// Verilator's type for a field of `Bits` bits.
template <unsigned Bits>
using VlType = std::conditional_t<Bits <= 8, CData,
                                  std::conditional_t<Bits <= 16, SData, std::conditional_t<Bits <= 32, IData, QData>>>;
struct Top : Model {
  Top(VerilatedContext* c, const char* n) : Model(c, n) {}
  CData ap_clk = 0, ap_rst_n = 0;
  // rnic_net_gather has no write channels: the memory model's (rnic::bus::ModulePorts) are these, idle.
  QData m_axi_awaddr_o = 0;
  CData m_axi_awlen_o = 0, m_axi_awsize_o = 0, m_axi_awburst_o = 0, m_axi_awvalid_o = 0, m_axi_awready_i = 0;
  VlWide<RNIC_GATHER_DW / 32> m_axi_wdata_o{};
  VlType<RNIC_GATHER_DW / 8> m_axi_wstrb_o = 0;
  CData m_axi_wlast_o = 0, m_axi_wvalid_o = 0, m_axi_wready_i = 0, m_axi_bresp_i = 0, m_axi_bvalid_i = 0;
  CData m_axi_bready_o = 1;
  void eval() {
    clk_i = ap_clk;
    rst_ni = ap_rst_n;
    Model::eval();
  }
};

// The fixture's tables: STags 0x105 and 0x402 over the region, another client's and the one without local
// read over a range outside it.
TxTables tables() { return rnic::tb::net::fixture::tables(kRegion, kRegionSize, 0x600000); }

struct InPacket {
  Bytes slot;
  std::uint16_t socket = 3;
  bool gather = true;
  std::uint8_t assoc = 1;
  bool err = false;  // the slot's read failed (the reader says so)
};

struct OutPacket {
  Bytes bytes;
  bool bad = false;
  unsigned reason = 0;
  unsigned len = 0, socket = 0;
};

class Bench : public Component<Top> {
 public:
  Bench(std::uint64_t seed, const HostMemConfig& cfg) : rng_(seed), mem_(sim_, kBeat, cfg), tables_(tables()) {
    sim_.add(this);
    // The region's bytes: a pattern the model reads from its own copy.
    image_.resize(kRegionSize);
    for (std::size_t i = 0; i < image_.size(); ++i) image_[i] = static_cast<std::uint8_t>(rng_());
    mem_.host_write(kRegion, image_.data(), image_.size());
    read_err_lo_ = cfg.read_err_lo;
    read_err_hi_ = cfg.read_err_hi;
    sim_.reset(4);
  }
  ~Bench() override { EXPECT_TRUE(sim_.errors().empty()) << sim_.errors().text(); }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  double in_valid = 1.0, out_ready = 1.0;
  unsigned table_latency_max = 4;

  const TxTables& tbl() const { return tables_; }
  TxTables& mutable_tables() { return tables_; }  // before the first offer
  std::mt19937_64& rng() { return rng_; }

  // The model's verdict, then the packet to the unit.
  void offer(const InPacket& p) {
    const auto read = [this](std::uint64_t a, std::uint8_t* out, std::size_t n) {
      if (read_err_lo_ < read_err_hi_ && a < read_err_hi_ && read_err_lo_ < a + n) return false;
      if (a < kRegion || a + n > kRegion + kRegionSize) {
        ADD_FAILURE() << "the model read outside the region";
        return false;
      }
      std::copy_n(image_.begin() + static_cast<std::ptrdiff_t>(a - kRegion), n, out);
      return true;
    };
    TxGather g;
    if (p.err) {
      g.drop = TxDrop::kReadError;
    } else if (p.gather) {
      g = rnic::tb::net::gather(p.slot, p.socket, p.assoc, tables_, read);
      if (g.drop == TxDrop::kNone) std::copy_n(p.slot.begin() + 8, 4, g.wire.begin() + 8);  // no CRC here
    } else {
      g.wire = p.slot;
    }
    ++outcomes_[g.drop];
    for (const auto& r : g.reads) allowed_.push_back(r);
    expect_.push_back(g);
    in_.push_back(p);
  }
  std::map<TxDrop, std::size_t>& outcomes() { return outcomes_; }

  void run(std::uint64_t limit = 2'000'000) {
    for (std::uint64_t i = 0; i < limit && !(in_.empty() && expect_.empty()); ++i) sim_.tick();
    for (int i = 0; i < 100; ++i) sim_.tick();
    EXPECT_TRUE(in_.empty()) << in_.size() << " packets never taken";
    EXPECT_TRUE(expect_.empty()) << expect_.size() << " packets never out";
    EXPECT_EQ(sim_.top().busy_o, 0) << "busy after the last packet";
  }
  std::size_t packets_out() const { return out_count_; }
  std::uint64_t cycle() const { return sim_.cycle(); }
  std::uint64_t last_out_cycle() const { return last_out_; }
  std::size_t errors() const { return errors_; }

  void drive(Top& t, std::uint64_t) override {
    // The slot packet in.
    if (!in_.empty() && (in_beat_ > 0 || chance(in_valid))) {
      const InPacket& p = in_.front();
      const std::size_t off = in_beat_ * kBeat;
      for (unsigned i = 0; i < kBeat; ++i) set_byte(t.s_data_i, i, off + i < p.slot.size() ? p.slot[off + i] : 0);
      t.s_valid_i = 1;
      t.s_last_i = off + kBeat >= p.slot.size();
      t.s_info_i = (QData{p.err} << 41) | (QData{p.gather} << 40) | (QData{p.assoc} << 32) | (QData{p.socket} << 16) |
                   p.slot.size();
    } else {
      t.s_valid_i = 0;
    }
    t.m_ready_i = chance(out_ready);
    // The association entry the unit names.
    const std::size_t a = t.a_idx_o;
    const AssocEntry e = a < tables_.assoc.size() ? tables_.assoc[a] : AssocEntry{};
    t.a_valid_i = e.valid;
    t.a_socket_i = e.vnx_socket;
    t.a_my_port_i = e.my_sctp_port;
    t.a_their_port_i = e.their_sctp_port;
    t.a_their_vtag_i = e.their_vtag;
    t.a_first_i = e.stream_base;
    t.a_count_i = e.stream_count;
    // The table answer.
    t.t_rsp_i = 0;
    if (t_wait_ > 0 && --t_wait_ == 0) {
      const std::size_t idx = t_stag_ >> 8;
      const TxStag s = idx < tables_.stags.size() ? tables_.stags[idx] : TxStag{};
      t.t_rsp_i = 1;
      t.t_valid_i = s.valid;
      t.t_key_i = s.key;
      t.t_local_read_i = s.local_read;
      t.t_pd_i = s.pd;
      t.t_bound_i = s.bound;
      t.t_bound_stream_i = s.stream;
      t.t_base_to_i = s.base_to;
      t.t_length_i = s.length;
      t.t_addr_i = s.addr;
      t.t_stream_pd_i = t_stream_ < tables_.stream_pd.size() ? tables_.stream_pd[t_stream_] : 0xFFFF;
      t.t_live_i = t_stream_ < tables_.live.size() && tables_.live[t_stream_];
    }
  }

  void sample(const Top& t, std::uint64_t) override {
    if (!t.ap_rst_n) return;
    if (t.s_valid_i && t.s_ready_o) {
      if (t.s_last_i) {
        in_.pop_front();
        in_beat_ = 0;
      } else {
        ++in_beat_;
      }
    }
    if (t.t_req_o) {
      if (t_wait_ != 0) error("a table request while one is outstanding");
      t_stag_ = t.t_stag_o;
      t_stream_ = t.t_stream_o;
      t_wait_ = 1 + static_cast<unsigned>(rng_() % table_latency_max);
    }
    if (t.m_axi_arvalid_o && t.m_axi_arready_i) check_ar(t.m_axi_araddr_o, t.m_axi_arlen_o + 1U);
    if (t.m_valid_o && t.m_ready_i) take_beat(t);
  }

 private:
  bool chance(double p) { return p >= 1.0 || std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
  void error(const std::string& s) {
    if (errors_ < 10) ADD_FAILURE() << "cycle " << sim_.cycle() << ": " << s;
    ++errors_;
  }

  // Each AR inside the whole beats of a range the model read.
  void check_ar(std::uint64_t a, unsigned beats) {
    const std::uint64_t end = a + std::uint64_t{beats} * kBeat;
    for (const auto& r : allowed_) {
      const std::uint64_t lo = r.addr / kBeat * kBeat, hi = (r.addr + r.bytes + kBeat - 1) / kBeat * kBeat;
      if (a >= lo && end <= hi) return;
    }
    error("AR 0x" + std::to_string(a) + " +" + std::to_string(beats) + " beats: not a range the model read");
  }

  void take_beat(const Top& t) {
    unsigned keep = 0;
    bool gap = false;
    for (unsigned i = 0; i < kBeat; ++i) {
      const bool k = get_bit(t.m_keep_o, i);
      if (k && gap) error("tkeep not contiguous");
      if (!k) gap = true;
      if (k) {
        cur_.push_back(get_byte(t.m_data_o, i));
        ++keep;
      }
    }
    if (!t.m_last_o) {
      if (keep != kBeat) error("a partial beat that is not the last");
      return;
    }
    OutPacket o;
    o.bytes = std::move(cur_);
    cur_.clear();
    const QData info = t.m_info_o;
    o.bad = (info >> 36) & 1;
    o.reason = static_cast<unsigned>((info >> 32) & 0xF);
    o.socket = static_cast<unsigned>((info >> 16) & 0xFFFF);
    o.len = static_cast<unsigned>(info & 0xFFFF);
    ++out_count_;
    last_out_ = sim_.cycle();
    if (expect_.empty()) {
      error("a packet out that was never offered");
      return;
    }
    const TxGather g = expect_.front();
    expect_.pop_front();
    const std::string n = "packet " + std::to_string(out_count_);
    if (g.drop != TxDrop::kNone) {
      if (!o.bad) error(n + ": the model drops it (" + rnic::tb::net::tx_drop_name(g.drop) + "), the unit does not");
      if (o.bad && o.reason != static_cast<unsigned>(g.drop))
        error(n + ": reason " + std::to_string(o.reason) + ", the model's " + rnic::tb::net::tx_drop_name(g.drop));
      return;
    }
    if (o.bad) {
      error(n + ": marked bad (reason " + std::to_string(o.reason) + "), the model sends it");
      return;
    }
    if (o.bytes != g.wire) {
      std::size_t i = 0;
      while (i < o.bytes.size() && i < g.wire.size() && o.bytes[i] == g.wire[i]) ++i;
      std::string around;
      for (std::size_t k = i; k < i + 8 && k < o.bytes.size() && k < g.wire.size(); ++k) {
        char x[16];
        std::snprintf(x, sizeof x, " %02x/%02x", o.bytes[k], g.wire[k]);
        around += x;
      }
      error(n + ": " + std::to_string(o.bytes.size()) + " bytes, the model's " + std::to_string(g.wire.size()) +
            ", first difference at byte " + std::to_string(i) + " (unit/model:" + around + ")");
    }
    if (o.len != g.wire.size()) error(n + ": info length " + std::to_string(o.len));
  }

  std::mt19937_64 rng_;
  Sim<Top> sim_;
  AxiHostMemory<Top, rnic::bus::ModulePorts> mem_;
  TxTables tables_;
  Bytes image_;
  std::uint64_t read_err_lo_ = 0, read_err_hi_ = 0;
  std::deque<InPacket> in_;
  std::size_t in_beat_ = 0;
  std::deque<TxGather> expect_;
  std::vector<rnic::tb::net::TxRead> allowed_;
  std::map<TxDrop, std::size_t> outcomes_;
  Bytes cur_;
  std::size_t out_count_ = 0, errors_ = 0;
  std::uint64_t last_out_ = 0;
  unsigned t_wait_ = 0;
  std::uint32_t t_stag_ = 0;
  std::uint16_t t_stream_ = 0;
};

// ---- slot packets -------------------------------------------------------------------------------------

InPacket packet(std::initializer_list<Bytes> chunks) {
  InPacket p;
  p.slot = rnic::tb::net::fixture::packet(chunks);
  return p;
}

// A random slot packet: descriptors over every STag and stream, plain chunks, now and then a flipped bit
// or a cut (the same generator as TxGather.RandomSlotsReadOnlyWhatTheyMay, at the unit).
InPacket random_packet(std::mt19937_64& rng) {
  InPacket p;
  p.slot = common_header();
  if (rng() % 20 == 0) p.slot = common_header(kMyPort, kTheirPort, 0x11111111);
  const int chunks = 1 + static_cast<int>(rng() % 4);
  const std::uint32_t stags[] = {kStag, kStag, kStag, kForeignStag, kNoReadStag, kBoundStag, 0x106, 0};
  for (int k = 0; k < chunks; ++k) {
    Bytes c;
    if (rng() % 3 == 0) {
      c = plain_chunk(static_cast<std::uint8_t>(rng() % 4 == 0 ? 0 : 3 + rng() % 10),
                      static_cast<std::uint8_t>(rng() % 8 == 0 ? 0x80 : 0), rng() % 70);
    } else {
      const std::uint64_t to = kBaseTo + (rng() % 2 == 0 ? rng() % kRegionSize : rng() % 64) - rng() % 4;
      const std::uint32_t len = static_cast<std::uint32_t>(rng() % 4 == 0 ? rng() % 4000 : rng() % 300);
      c = descriptor(rng() % 2 == 0, static_cast<std::uint16_t>(rng() % 4), stags[rng() % 8], to, len);
    }
    p.slot.insert(p.slot.end(), c.begin(), c.end());
  }
  if (rng() % 8 == 0) p.slot[12 + rng() % (p.slot.size() - 12)] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
  if (rng() % 16 == 0) p.slot.resize(12 + rng() % (p.slot.size() - 12));
  if (rng() % 16 == 0) p.gather = false;
  if (rng() % 32 == 0) p.err = true;
  return p;
}

TEST(GATHER_SUITE, Rfc5043_5_2_2_DescriptorsExpandedAndEveryOtherChunkAsIs) {
  Bench b(1, HostMemConfig{});
  b.offer(packet({descriptor(true, 1, kStag, kBaseTo + 100, 1000)}));
  b.offer(packet({plain_chunk(3, 0, 12), descriptor(false, 0, kStag, kBaseTo, 3), plain_chunk(0x84, 0, 5),
                  descriptor(true, 1, kStag, kBaseTo + 8000, 517)}));
  b.offer(packet({descriptor(true, 0, kStag, kBaseTo + 4090, 9000)}));       // crosses 4 KiB twice
  b.offer(packet({descriptor(true, 1, 0xFFFFFF00, ~std::uint64_t{0}, 0)}));  // RFC 5041 5.2: nothing read or checked
  b.offer(packet({descriptor(true, 1, kBoundStag, kBaseTo, 63)}));           // bound to stream 5: SCTP stream 1
  InPacket plain = packet({plain_chunk(0, 0x80, 33)});  // not a gather packet: as it is, the mark too
  plain.gather = false;
  b.offer(plain);
  b.run();
  EXPECT_EQ(b.packets_out(), 6u);
  EXPECT_EQ(b.outcomes()[TxDrop::kNone], 6u);
}

TEST(GATHER_SUITE, Rfc5041_8_EveryBadDescriptorMarksThePacketBad) {
  Bench b(2, HostMemConfig{});
  const Bytes good = descriptor(true, 1, kStag, kBaseTo, 100);
  b.offer(packet({good, descriptor(true, 1, kForeignStag, kBaseTo, 10)}));       // another client's PD
  b.offer(packet({descriptor(true, 1, kNoReadStag, kBaseTo, 10)}));              // no local read
  b.offer(packet({descriptor(true, 0, kBoundStag, kBaseTo, 10)}));               // bound to another stream
  b.offer(packet({descriptor(true, 1, 0x106, kBaseTo, 10)}));                    // wrong key
  b.offer(packet({descriptor(true, 1, kStag, kBaseTo + kRegionSize - 9, 10)}));  // past the end
  b.offer(packet({descriptor(true, 1, kStag, ~std::uint64_t{0} - 3, 10)}));      // wraps
  b.offer(packet({descriptor(true, 2, kStag, kBaseTo, 10)}));                    // stream not live
  b.offer(packet({descriptor(true, 3, kStag, kBaseTo, 10)}));                    // not the association's
  b.offer(packet({descriptor(true, 1, kStag, kBaseTo, 10, 0x06)}));              // a fragment
  b.offer(packet({descriptor(true, 1, kStag, kBaseTo, 10, 0x07, 17)}));          // PPID 17
  b.offer(packet({plain_chunk(3, 0x80, 12)}));                                   // the mark on a SACK
  b.offer(packet({descriptor(true, 1, kStag, kBaseTo, 4600), descriptor(true, 1, kStag, kBaseTo, 4600)}));
  // Chunk lengths 65535 (a review found them wrapping to 0 when rounded up to 4): too long, not sent.
  b.offer(packet({descriptor(true, 1, kStag, kBaseTo, 65503)}));
  b.offer(packet({descriptor(false, 1, kStag, kBaseTo, 65499)}));
  InPacket wrong_socket = packet({good});
  wrong_socket.socket = 2;
  b.offer(wrong_socket);
  b.run();
  EXPECT_EQ(b.outcomes()[TxDrop::kNone], 0u);
  EXPECT_EQ(b.errors(), 0u);
}

// FIRST_STREAM + the SCTP stream past 16 bits names no DDP stream (not one it wraps to): RFC 5043 8.
TEST(GATHER_SUITE, StreamIndexPast16BitsIsNotLive) {
  Bench b(4, HostMemConfig{});
  b.mutable_tables().assoc[1].stream_base = 0xFFFF;
  b.mutable_tables().assoc[1].stream_count = 2;
  b.mutable_tables().live[0] = true;  // what a wrapped index would name: live, PD 7
  b.mutable_tables().stream_pd[0] = 7;
  b.offer(packet({descriptor(true, 1, kStag, kBaseTo, 8)}));
  b.offer(packet({descriptor(true, 0, kStag, kBaseTo, 8)}));  // stream 0xFFFF: not live either
  b.run();
  EXPECT_EQ(b.outcomes()[TxDrop::kStream], 2u);
  EXPECT_EQ(b.errors(), 0u);
}

TEST(GATHER_SUITE, ReadErrorMarksThePacketBad) {
  HostMemConfig cfg;
  cfg.read_err_lo = kRegion + 0x1000;
  cfg.read_err_hi = kRegion + 0x1040;
  Bench b(3, cfg);
  b.offer(packet({descriptor(true, 1, kStag, kBaseTo + 0x1010, 8)}));
  b.offer(packet({descriptor(true, 1, kStag, kBaseTo + 0x2000, 8)}));  // the next one is fine
  // A read error, then a chunk that fails its checks: the read error is the packet's reason.
  b.offer(packet({descriptor(true, 1, kStag, kBaseTo + 0x1010, 8), descriptor(true, 1, 0x906, kBaseTo, 8)}));
  b.run();
  EXPECT_EQ(b.outcomes()[TxDrop::kReadError], 2u);
  EXPECT_EQ(b.outcomes()[TxDrop::kNone], 1u);
  EXPECT_EQ(b.errors(), 0u);
}

TEST(GATHER_SUITE, RandomSlotsUnderBackpressureMatchTheModel) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  HostMemConfig cfg = HostMemConfig::random(seed);
  Bench b(seed, cfg);
  b.in_valid = 0.7;
  b.out_ready = 0.6;
  b.table_latency_max = 8;
  for (int i = 0; i < 1000; ++i) b.offer(random_packet(b.rng()));  // about 190 sent: far from the 100 below
  b.run(20'000'000);
  std::printf("[   INFO   ] seed %llu:", static_cast<unsigned long long>(seed));
  for (const auto& [d, n] : b.outcomes()) std::printf(" %s %zu,", rnic::tb::net::tx_drop_name(d), n);
  std::printf("\n");
  EXPECT_GT(b.outcomes()[TxDrop::kNone], 100u);
  EXPECT_GT(b.outcomes().size(), 8u) << "too few kinds of drop reached";
}

// Figures, not a pass/fail target (docs/transmit.md): cycles per packet, 100 packets back to back, every
// output ready, memory ready with 8 cycles of read latency, the table answering in one cycle.
TEST(GATHER_SUITE, ThroughputFigures) {
  struct Case {
    const char* what;
    std::vector<std::uint32_t> lens;  // descriptors of the packet
  };
  const Case cases[] = {{"one descriptor of 100 bytes", {100}},
                        {"one descriptor of 1400 bytes", {1400}},
                        {"one descriptor of 8900 bytes", {8900}},
                        {"8 descriptors of 64 bytes", {64, 64, 64, 64, 64, 64, 64, 64}}};
  for (const Case& c : cases) {
    Bench b(7, HostMemConfig{});
    b.table_latency_max = 1;
    for (int i = 0; i < 100; ++i) {
      InPacket p = packet({});
      for (std::uint32_t len : c.lens) {
        const Bytes d = descriptor(true, 1, kStag, kBaseTo + 64 * static_cast<std::uint64_t>(i), len);
        p.slot.insert(p.slot.end(), d.begin(), d.end());
      }
      b.offer(p);
    }
    const std::uint64_t t0 = b.cycle();
    b.run();
    const double per = static_cast<double>(b.last_out_cycle() - t0) / 100.0;
    std::size_t wire = 12;
    for (std::uint32_t len : c.lens) wire += 32 + (len + 3) / 4 * 4;
    std::printf("[  FIGURE  ] %-30s %5zu wire bytes: %7.1f cycles per packet, %5.1f bytes per cycle\n", c.what, wire,
                per, static_cast<double>(wire) / per);
    EXPECT_EQ(b.outcomes()[TxDrop::kNone], 100u);
  }
}

}  // namespace
