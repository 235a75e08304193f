// SPDX-License-Identifier: Apache-2.0
// rnic_rx_parse: random packets (1 byte .. beyond MaxSegBytes) with random tvalid gaps and random
// beat/segment backpressure. Checks that every beat passes unchanged, the oversize cut, tready, the
// descriptor order against the beats, every descriptor field against an independent decode of the
// packet bytes (RFC 5041 4.1-4.3), and one beat per cycle at full rate. DataWidth and MaxSegBytes
// come from the Verilated library (PARSE_DW, PARSE_MAX).
#include <algorithm>
#include <array>

#include "Vrnic_rx_parse.h"
#include "dp_harness.hpp"
#include "rnic/wire/bytes.hpp"

namespace {

constexpr std::size_t kBytes = PARSE_DW / 8;
constexpr std::size_t kMax = PARSE_MAX;
constexpr std::size_t kMaxBeats = (kMax + kBytes - 1) / kBytes;
constexpr std::size_t kHdrBytes = 18;

// rnic_seg_t as the test expects it, decoded from the packet bytes: rnic/tb/rtl_structs.hpp, the members
// of structs.def (the rows rtl/rnic_structs.svh is generated from), read from seg_o with get<Seg>().
using Seg = rnic::tb::Seg;
static_assert(sizeof(Vrnic_rx_parse::seg_o) == 4 * ((rnic::tb::kSegBits + 31) / 32), "rnic_seg_t");

std::uint64_t load_be(const std::array<std::uint8_t, kHdrBytes>& h, std::size_t off, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | h[off + i];
  return v;
}

struct Pkt {
  std::vector<std::uint8_t> bytes;
  std::uint32_t tuser = 0;
};

// Independent decode of RFC 5041 4.1 (control), 4.2 (tagged) and 4.3 (untagged) from the bytes.
Seg decode(const Pkt& p) {
  Seg s;
  for (std::size_t i = 0; i < kHdrBytes; ++i) s.hdr_raw[i] = i < p.bytes.size() ? p.bytes[i] : 0;
  const auto& h = s.hdr_raw;
  s.stream = static_cast<std::uint16_t>(p.tuser & 0xFFFFU);
  s.ssn = static_cast<std::uint16_t>(p.tuser >> 16);
  s.seg_bytes = static_cast<std::uint16_t>(p.bytes.size() & 0xFFFFU);
  s.oversize = p.bytes.size() > kMax;
  s.is_tagged = ((h[0] >> 7) & 1U) != 0;
  s.last = ((h[0] >> 6) & 1U) != 0;
  s.dv = static_cast<std::uint8_t>(h[0] & 3U);
  s.rsvd_ulp = s.is_tagged ? h[1] : load_be(h, 1, 5);
  s.stag = static_cast<std::uint32_t>(load_be(h, 2, 4));
  s.to = load_be(h, 6, 8);
  s.qn = static_cast<std::uint32_t>(load_be(h, 6, 4));
  s.msn = static_cast<std::uint32_t>(load_be(h, 10, 4));
  s.mo = static_cast<std::uint32_t>(load_be(h, 14, 4));
  return s;
}

void expect_seg_eq(const Seg& got, const Seg& exp, std::size_t pkt, std::size_t len) {
  SCOPED_TRACE(::testing::Message() << "descriptor of packet " << pkt << " (" << len << " bytes)");
  EXPECT_EQ(got.stream, exp.stream);
  EXPECT_EQ(got.ssn, exp.ssn);
  EXPECT_EQ(got.oversize, exp.oversize);
  if (!exp.oversize) {
    EXPECT_EQ(got.seg_bytes, exp.seg_bytes);  // don't-care when oversize
  }
  EXPECT_EQ(got.is_tagged, exp.is_tagged);
  EXPECT_EQ(got.last, exp.last);
  EXPECT_EQ(got.dv, exp.dv);
  EXPECT_EQ(got.rsvd_ulp, exp.rsvd_ulp);
  EXPECT_EQ(got.stag, exp.stag);
  EXPECT_EQ(got.to, exp.to);
  EXPECT_EQ(got.qn, exp.qn);
  EXPECT_EQ(got.msn, exp.msn);
  EXPECT_EQ(got.mo, exp.mo);
  EXPECT_EQ(got.hdr_raw, exp.hdr_raw);
}

struct InBeat {
  std::vector<std::uint8_t> data;  // kBytes, random past the packet end
  std::uint64_t keep = 0;
  bool last = false;
  std::uint32_t tuser = 0;  // the packet's on the first beat, random on the others
};

struct Knobs {
  double p_valid = 1.0;       // chance to raise tvalid for a pending beat
  double p_beat_ready = 1.0;  // chance of beat_ready_i per cycle
  double p_seg_ready = 1.0;   // chance of seg_ready_i per cycle
};

std::uint64_t keep_mask(std::size_t n) { return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

class ParseBench {
 public:
  explicit ParseBench(std::uint64_t seed) : rng_(seed) {
    idle_inputs();
    sim_->beat_ready_i = 0;
    sim_->seg_ready_i = 0;
    sim_.reset();
  }

  std::mt19937_64& rng() { return rng_; }
  dp::Sim<Vrnic_rx_parse>& sim() { return sim_; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
  std::size_t uniform(std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng_);
  }

  Pkt make_packet(std::size_t len) {
    Pkt p;
    p.bytes.resize(len);
    for (auto& b : p.bytes) b = static_cast<std::uint8_t>(rng_());
    p.tuser = static_cast<std::uint32_t>(rng_());
    return p;
  }

  // Mostly ordinary lengths; some tiny (shorter than a header), near the limit and oversize.
  std::size_t random_len() {
    const std::size_t k = uniform(0, 99);
    if (k < 25) return uniform(1, 2 * kHdrBytes);
    if (k < 80) return uniform(1, std::min<std::size_t>(2000, kMax));
    if (k < 92) return uniform(kMax > kBytes + 1 ? kMax - kBytes - 1 : 1, kMax);
    if (k < 98) return uniform(kMax + 1, kMax + 3 * kBytes);
    return uniform(kMax + 1, 2 * kMax + kBytes);
  }

  std::vector<InBeat> to_beats(const Pkt& p) {
    std::vector<InBeat> v;
    const std::size_t n = p.bytes.size();
    for (std::size_t off = 0; off < n; off += kBytes) {
      InBeat b;
      b.data.resize(kBytes);
      const std::size_t take = std::min(kBytes, n - off);
      for (std::size_t i = 0; i < kBytes; ++i) {
        b.data[i] = i < take ? p.bytes[off + i] : static_cast<std::uint8_t>(rng_());
      }
      b.keep = keep_mask(take);
      b.last = off + kBytes >= n;
      b.tuser = off == 0 ? p.tuser : static_cast<std::uint32_t>(rng_());
      v.push_back(std::move(b));
    }
    return v;
  }

  void drive(const InBeat& b, bool valid) {
    dp::set_bytes(sim_->s_axis_tdata_i, b.data.data(), kBytes);
    std::array<std::uint8_t, 8> kb{};
    rnic::wire::store_le64(kb.data(), b.keep);
    dp::set_bytes(sim_->s_axis_tkeep_i, kb.data(), 8);
    sim_->s_axis_tlast_i = b.last;
    sim_->s_axis_tuser_i = b.tuser;
    sim_->s_axis_tvalid_i = valid;
  }

  // Random garbage on the data inputs, tvalid low.
  void idle_inputs() {
    InBeat g;
    g.data.resize(kBytes);
    for (auto& x : g.data) x = static_cast<std::uint8_t>(rng_());
    g.keep = rng_();
    g.last = (rng_() & 1U) != 0;
    g.tuser = static_cast<std::uint32_t>(rng_());
    drive(g, false);
  }

  // Sends the packets and checks everything that comes out. With full_rate, every knob must be 1
  // and the input must take one beat per cycle without a single stall.
  void run(const std::vector<Pkt>& pkts, const Knobs& k, bool full_rate = false) {
    const std::size_t n = pkts.size();
    std::vector<InBeat> in;
    std::vector<std::size_t> first_beat(n);
    for (std::size_t p = 0; p < n; ++p) {
      first_beat[p] = in.size();
      auto v = to_beats(pkts[p]);
      for (auto& b : v) in.push_back(std::move(b));
    }
    std::vector<Seg> exp_seg(n);
    for (std::size_t p = 0; p < n; ++p) exp_seg[p] = decode(pkts[p]);

    std::size_t ib = 0;     // next input beat
    bool holding = false;   // tvalid raised and not yet accepted: must stay
    std::size_t out_p = 0;  // packet of the next output beat
    std::size_t out_j = 0;  // its index within the packet
    std::size_t seg_p = 0;  // packet of the next descriptor
    std::vector<bool> last_presented(n, false);
    std::size_t tlast_accepted = 0, seg_events = 0;
    bool prev_bv = false, prev_br = false, prev_sv = false, prev_sr = false;
    std::uint64_t first_acc = 0, last_acc = 0;
    bool any_acc = false;
    const std::uint64_t limit = sim_.cycle() + 30 * in.size() + 2000;

    while ((out_p < n || seg_p < n) && sim_.cycle() < limit && !::testing::Test::HasFailure()) {
      const bool tvalid = ib < in.size() && (holding || chance(k.p_valid));
      if (tvalid) {
        drive(in[ib], true);
      } else {
        idle_inputs();
      }
      const bool br = chance(k.p_beat_ready);
      const bool sr = chance(k.p_seg_ready);
      sim_->beat_ready_i = br;
      sim_->seg_ready_i = sr;
      sim_.eval();
      const std::uint64_t cyc = sim_.cycle();

      // tready: never held low while both consumers are ready.
      const bool tready = sim_->s_axis_tready_o != 0;
      if (br && sr) {
        EXPECT_TRUE(tready) << "tready low with both readies at cycle " << cyc;
      }
      if (full_rate && ib < in.size()) {
        ASSERT_TRUE(tvalid && tready) << "stall at cycle " << cyc;
      }

      // Outputs hold until taken.
      const bool bv = sim_->beat_valid_o != 0;
      const bool sv = sim_->seg_valid_o != 0;
      if (prev_bv && !prev_br) {
        EXPECT_TRUE(bv) << "beat_valid dropped without handshake, cycle " << cyc;
      }
      if (prev_sv && !prev_sr) {
        EXPECT_TRUE(sv) << "seg_valid dropped without handshake, cycle " << cyc;
      }

      if (bv) check_beat(pkts, in, first_beat, out_p, out_j, br, last_presented, cyc);
      if (sv) {
        ASSERT_LT(seg_p, n) << "extra descriptor at cycle " << cyc;
        EXPECT_TRUE(last_presented[seg_p])
            << "descriptor of packet " << seg_p << " before its last beat, cycle " << cyc;
        if (sr) {
          expect_seg_eq(rnic::tb::get<Seg>(sim_->seg_o), exp_seg[seg_p], seg_p, pkts[seg_p].bytes.size());
          ++seg_p;
        }
      }

      if (tvalid && tready) {
        if (!any_acc) first_acc = cyc;
        any_acc = true;
        last_acc = cyc;
        if (in[ib].last) ++tlast_accepted;
        ++ib;
        holding = false;
      } else {
        holding = tvalid;
      }
      if (sim_->seg_event_o != 0) ++seg_events;
      EXPECT_LE(seg_events, tlast_accepted) << "seg_event before the packet's tlast, cycle " << cyc;

      prev_bv = bv;
      prev_br = br;
      prev_sv = sv;
      prev_sr = sr;
      sim_.tick();
    }
    EXPECT_EQ(ib, in.size()) << "input beats not all accepted";
    EXPECT_EQ(out_p, n) << "packets whose beats did not all come out";
    EXPECT_EQ(seg_p, n) << "descriptors missing";
    // Drain a few more cycles: nothing else may appear; seg_event may still pulse for the last one.
    sim_->s_axis_tvalid_i = 0;
    sim_->beat_ready_i = 1;
    sim_->seg_ready_i = 1;
    for (int i = 0; i < 4; ++i) {
      sim_.eval();
      EXPECT_EQ(sim_->beat_valid_o, 0);
      EXPECT_EQ(sim_->seg_valid_o, 0);
      if (sim_->seg_event_o != 0) ++seg_events;
      sim_.tick();
    }
    EXPECT_EQ(seg_events, n) << "seg_event pulses";
    if (full_rate && any_acc) {
      EXPECT_EQ(last_acc - first_acc + 1, in.size()) << "N beats must be accepted in N cycles";
    }
  }

 private:
  void check_beat(const std::vector<Pkt>& pkts, const std::vector<InBeat>& in,
                  const std::vector<std::size_t>& first_beat, std::size_t& out_p, std::size_t& out_j, bool ready,
                  std::vector<bool>& last_presented, std::uint64_t cyc) {
    ASSERT_LT(out_p, pkts.size()) << "extra beat at cycle " << cyc;
    const std::size_t len = pkts[out_p].bytes.size();
    const std::size_t nbeats = (len + kBytes - 1) / kBytes;
    const bool oversize = len > kMax;
    const auto data = dp::get_bytes(sim_->beat_data_o, kBytes);
    const std::uint64_t keep = dp::bits(dp::get_bytes(sim_->beat_keep_o, 8), 0, static_cast<unsigned>(kBytes));
    const bool last = sim_->beat_last_o != 0;
    SCOPED_TRACE(::testing::Message() << "packet " << out_p << " (" << len << " bytes, " << nbeats << " beats) beat "
                                      << out_j << " cycle " << cyc);
    if (!oversize) {
      ASSERT_LT(out_j, nbeats);
      const InBeat& e = in[first_beat[out_p] + out_j];
      EXPECT_EQ(data, e.data);
      EXPECT_EQ(keep, e.keep);
      EXPECT_EQ(last, e.last);
    } else {
      // At most kMaxBeats + 1 beats, the last one marked last; the kept ones unchanged.
      ASSERT_LE(out_j, kMaxBeats);
      if (!last) {
        ASSERT_LT(out_j, kMaxBeats);
        ASSERT_LT(out_j, nbeats);
        const InBeat& e = in[first_beat[out_p] + out_j];
        EXPECT_EQ(data, e.data);
        EXPECT_EQ(keep, e.keep);
      }
    }
    if (last) last_presented[out_p] = true;
    if (ready) {
      if (last) {
        ++out_p;
        out_j = 0;
      } else {
        ++out_j;
      }
    }
  }

  std::mt19937_64 rng_;
  dp::Sim<Vrnic_rx_parse> sim_;
};

TEST(RxParse, RandomPacketsWithBackpressure) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  ParseBench tb(seed);
  const Knobs knobs[] = {{0.7, 0.6, 0.7}, {1.0, 0.9, 0.3}, {0.3, 1.0, 1.0}, {0.9, 0.5, 0.95}};
  for (const Knobs& k : knobs) {
    std::vector<Pkt> pkts;
    for (int i = 0; i < 120; ++i) pkts.push_back(tb.make_packet(tb.random_len()));
    tb.run(pkts, k);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(RxParse, LengthSweep) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  ParseBench tb(seed);
  std::vector<Pkt> pkts;
  for (std::size_t len = 1; len <= 3 * kBytes + kHdrBytes + 2; ++len) pkts.push_back(tb.make_packet(len));
  const std::size_t lo = kMax > 2 * kBytes + 2 ? kMax - 2 * kBytes - 2 : 1;
  for (std::size_t len = lo; len <= kMax + 2 * kBytes + 2; ++len) pkts.push_back(tb.make_packet(len));
  pkts.push_back(tb.make_packet(2 * kMax + 7));
  pkts.push_back(tb.make_packet(kMax));
  // Both header layouts, every DV and L value, at the shortest and the full header length.
  for (std::size_t len : {kHdrBytes - 4, kHdrBytes, kHdrBytes + 1}) {
    for (unsigned ctrl = 0; ctrl < 16; ++ctrl) {
      Pkt p = tb.make_packet(len);
      p.bytes[0] = static_cast<std::uint8_t>(((ctrl & 0xCU) << 4) | (ctrl & 3U));
      pkts.push_back(p);
    }
  }
  tb.run(pkts, {0.8, 0.7, 0.6});
}

TEST(RxParse, BackToBackFullRate) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  ParseBench tb(seed);
  std::vector<Pkt> pkts;
  for (int i = 0; i < 200; ++i) pkts.push_back(tb.make_packet(tb.random_len()));
  for (int i = 0; i < 50; ++i) pkts.push_back(tb.make_packet(tb.uniform(1, kBytes)));  // 1-beat packets
  tb.run(pkts, {1.0, 1.0, 1.0}, true);
}

// Back-to-back packets of one beat each (tlast on every beat), 1..Bytes bytes: one accepted per
// cycle, tready never low while both outputs are taken, a descriptor per beat (RFC 5041 4.1-4.3
// fields checked by run()). At 64 and 128 bits these are shorter than a DDP header.
TEST(RxParse, OneBeatPacketsFullRate) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  ParseBench tb(seed);
  std::vector<Pkt> pkts;
  for (int i = 0; i < 2000; ++i) {
    const std::size_t len = i % 4 == 0 ? kBytes : tb.uniform(1, kBytes);  // full beats too
    pkts.push_back(tb.make_packet(len));
  }
  tb.run(pkts, {1.0, 1.0, 1.0}, true);
}

// Back-to-back minimum-size DDP segments (14- or 18-byte header + 0..50 payload bytes): at narrow
// widths the header spans up to three beats and a packet starts the beat after the previous tlast;
// each length that puts a header byte at a beat boundary is included.
TEST(RxParse, ShortSegmentsFullRate) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  ParseBench tb(seed);
  std::vector<Pkt> pkts;
  for (int i = 0; i < 1500; ++i) {
    const std::size_t hdr = tb.chance(0.5) ? 14 : kHdrBytes;
    Pkt p = tb.make_packet(hdr + tb.uniform(0, 50));
    p.bytes[0] = static_cast<std::uint8_t>((hdr == 14 ? 0x80U : 0x00U) | (p.bytes[0] & 0x43U));
    pkts.push_back(std::move(p));
  }
  for (std::size_t len = 1; len <= kHdrBytes + 2 * kBytes; ++len) pkts.push_back(tb.make_packet(len));
  std::shuffle(pkts.begin(), pkts.end(), tb.rng());
  tb.run(pkts, {1.0, 1.0, 1.0}, true);
}

TEST(RxParse, ResetMidPacket) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  ParseBench tb(seed);
  // Half of a long packet goes in, then reset: nothing of it may survive.
  Pkt p = tb.make_packet(4 * kBytes + 3);
  const auto beats = tb.to_beats(p);
  tb.sim()->beat_ready_i = 0;
  tb.sim()->seg_ready_i = 1;
  tb.drive(beats[0], true);
  tb.sim().tick();
  tb.sim()->beat_ready_i = 1;
  tb.drive(beats[1], true);
  tb.sim().tick();
  tb.drive(beats[2], true);
  tb.sim().tick();
  tb.idle_inputs();
  tb.sim().reset(1);
  tb.sim().eval();
  EXPECT_EQ(tb.sim()->beat_valid_o, 0);
  EXPECT_EQ(tb.sim()->seg_valid_o, 0);
  std::vector<Pkt> pkts;
  for (int i = 0; i < 60; ++i) pkts.push_back(tb.make_packet(tb.random_len()));
  tb.run(pkts, {0.8, 0.8, 0.8});
}

}  // namespace
