// SPDX-License-Identifier: Apache-2.0
// rnic_net_hold (issue 14, docs/network.md; the front end's unit interfaces, section 1) at one DataWidth
// (RNIC_HOLD_DW; hold.cmake builds it at 512 and 64), against a scoreboard: every packet offered is good
// (it must come out whole, byte-exact, with tuser {length, meta} on every beat, in arrival order) or
// dropped for exactly one reason (its counter pulses once, in packet order, nothing of it comes out):
//   frame  a beat with tkeep 0, a non-last beat not all ones, tkeep not contiguous from bit 0;
//   size   longer than MaxPacketBytes (9216);
//   crc    the CRC32c at bytes 8..11 wrong, or shorter than the 12-byte common header (RFC 9260 3.1,
//          6.8; NetRef rule 1 with rnic_sctp_crc's verdict, which is 0 for such packets).
// Good packets carry a valid SCTP CRC32c computed with ISA-L (crc32_iscsi, as tb/rtl/crc does).
// Tests: random mixes with random valid and ready gaps; directed boundaries; back-to-back line rate for
// L = 12, 64, 65, 1500, 9000 (cycles printed, no input stall, no output bubble); the output held for a
// long time (input stalls only when the buffer or the pending FIFO is full; nothing lost or
// duplicated); reset in the middle of a packet, then clean traffic.
// Seed: random tests print theirs; RNIC_TEST_SEED=<n> replays. Waveform with RNIC_FST=<file>.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/tb/net_ref.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/stage_sim.hpp"
#include "rnic/wire/bytes.hpp"

#define RNIC_CAT2(a, b) a##b
#define RNIC_CAT(a, b) RNIC_CAT2(a, b)
#include RNIC_HOLD_HDR  // the model's header and class, the suite's suffix: hold.cmake

#define HOLD_SUITE RNIC_CAT(NetHold, RNIC_HOLD_NAME)

namespace {

using Model = RNIC_HOLD_CLASS;
using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kBeatBytes = RNIC_HOLD_DW / 8;
constexpr std::size_t kDepthBeats = RNIC_HOLD_DEPTH;  // the model's DepthBeats (hold.cmake)
constexpr std::size_t kMaxPacketBytes = 9216;         // the module's default
constexpr std::size_t kPendDepth = 32;                // rnic_net_hold's PendDepth
constexpr std::size_t kHeader = rnic::tb::net::kCommonHeaderSize;

enum class Fate : std::uint8_t { kGood, kCrc, kSize, kFrame };
const char* fate_name(Fate f) {
  switch (f) {
    case Fate::kGood:
      return "good";
    case Fate::kCrc:
      return "crc";
    case Fate::kSize:
      return "size";
    case Fate::kFrame:
      return "frame";
  }
  return "?";
}

std::uint64_t mask_of(std::size_t n) { return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

struct Beat {
  std::array<std::uint8_t, kBeatBytes> data{};
  std::uint64_t keep = 0;
  bool last = false;
};

// One packet as offered, its meta and the fate it must meet.
struct Packet {
  std::vector<Beat> beats;
  std::array<std::uint32_t, 3> meta{};  // tuser words: my_ip, their_ip, {their_udp_port, my_udp_port}
  std::size_t length = 0;
  Fate fate = Fate::kGood;
};

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}
// RFC 9260 6.8: the CRC32c over the packet with bytes 8..11 as zero, stored least significant first.
void fill_crc(Bytes& p) { rnic::capture::SctpPacket::seal(p); }
bool crc_ok(const Bytes& p) {
  if (p.size() < kHeader) return false;
  Bytes z = p;
  for (std::size_t i = 8; i < 12; ++i) z[i] = 0;
  return rnic::wire::load_le32(p.data() + 8) == rnic::capture::SctpPacket::checksum(z);
}

// The beats of p, well framed; bytes past the end are noise.
Packet make_packet(std::mt19937_64& rng, const Bytes& p) {
  Packet pk;
  pk.length = p.size();
  const std::size_t beats = (p.size() + kBeatBytes - 1) / kBeatBytes;
  for (std::size_t b = 0; b < beats; ++b) {
    Beat bt;
    const std::size_t here = std::min(kBeatBytes, p.size() - b * kBeatBytes);
    for (std::size_t i = 0; i < kBeatBytes; ++i)
      bt.data[i] = i < here ? p[b * kBeatBytes + i] : static_cast<std::uint8_t>(rng());
    bt.keep = mask_of(here);
    bt.last = b + 1 == beats;
    pk.beats.push_back(bt);
  }
  for (auto& m : pk.meta) m = static_cast<std::uint32_t>(rng());
  // The fate by the interface's order: frame, then size, then CRC (NetRef rule 1).
  pk.fate = p.size() > kMaxPacketBytes ? Fate::kSize : crc_ok(p) ? Fate::kGood : Fate::kCrc;
  return pk;
}

Packet good_packet(std::mt19937_64& rng, std::size_t n) {
  Bytes p = random_bytes(rng, n);
  fill_crc(p);
  return make_packet(rng, p);
}
Packet bad_crc_packet(std::mt19937_64& rng, std::size_t n) {
  Bytes p = random_bytes(rng, n);
  fill_crc(p);
  const std::size_t bit = rng() % (8 * n);
  p[bit / 8] = static_cast<std::uint8_t>(p[bit / 8] ^ (1U << (bit % 8)));
  return make_packet(rng, p);
}
// Shorter than the common header, its bytes 8.. holding what a CRC check reading past the end could take
// for a right checksum.
Packet short_packet(std::mt19937_64& rng, std::size_t n) {
  Bytes p = random_bytes(rng, n);
  Packet pk = make_packet(rng, p);
  pk.fate = Fate::kCrc;
  return pk;
}
// A good CRC and broken framing: kind 0 a non-last beat not all ones, 1 the last beat's tkeep not
// contiguous, 2 a last beat with tkeep 0 appended, 3 a first beat with bit 0 of tkeep clear.
Packet broken_packet(std::mt19937_64& rng, std::size_t n, unsigned kind) {
  Packet pk = good_packet(rng, n);
  Beat& last = pk.beats.back();
  switch (kind) {
    case 0:
      if (pk.beats.size() >= 2) {
        pk.beats[rng() % (pk.beats.size() - 1)].keep &= ~(std::uint64_t{1} << (1 + rng() % (kBeatBytes - 1)));
        break;
      }
      [[fallthrough]];
    case 1:
      if (last.keep >= 3) {  // 2 bytes or more: a hole below the top byte
        const auto bytes = static_cast<unsigned>(__builtin_popcountll(last.keep));
        last.keep &= ~(std::uint64_t{1} << (rng() % (bytes - 1)));
        break;
      }
      last.keep |= std::uint64_t{1} << (kBeatBytes - 1);  // 1 byte: add the farthest one
      break;
    case 2: {
      last.last = false;
      if (last.keep != mask_of(kBeatBytes)) last.keep = mask_of(kBeatBytes);  // now a full non-last beat
      Beat empty;
      empty.keep = 0;
      empty.last = true;
      pk.beats.push_back(empty);
      break;
    }
    default:
      pk.beats.front().keep &= ~std::uint64_t{1};
      break;
  }
  pk.fate = Fate::kFrame;
  return pk;
}

// Ports: tdata VlWide<16> at 512 bits, QData at 64; tkeep QData / CData; tuser VlWide<3> / VlWide<4>.
template <std::size_t N>
void put_data(VlWide<N>& port, const std::uint8_t* b) {
  for (std::size_t w = 0; w < N; ++w) port[w] = rnic::wire::load_le32(b + 4 * w);
}
inline void put_data(QData& port, const std::uint8_t* b) { port = rnic::wire::load_le(b, 8); }
template <std::size_t N>
void get_data(const VlWide<N>& port, std::uint8_t* b) {
  for (std::size_t w = 0; w < N; ++w) rnic::wire::store_le32(b + 4 * w, port[w]);
}
inline void get_data(QData port, std::uint8_t* b) { rnic::wire::store_le(b, port, 8); }
template <typename P>
void put_mask(P& port, std::uint64_t v) {
  port = static_cast<std::remove_reference_t<P>>(v);
}

// Gaps: mostly none, some short, a few long.
unsigned random_gap(std::mt19937_64& rng) {
  const unsigned r = static_cast<unsigned>(rng() % 100);
  if (r < 60) return 0U;
  if (r < 90) return 1U + static_cast<unsigned>(rng() % 3);
  return 4U + static_cast<unsigned>(rng() % 17);
}

// Drives packets into the model, takes its output under a ready policy and scores both.
class Bench {
 public:
  explicit Bench(std::uint64_t seed) : rng_(seed) {
    sim_->s_axis_tvalid_i = 0;
    sim_->m_axis_tready_i = 0;
    sim_.reset();
    for (int i = 0; i < 3; ++i) cycle();  // the input's ready rises the cycle after reset
  }
  ~Bench() { EXPECT_EQ(errors_, 0U) << "mismatches (first 10 reported above)"; }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  std::function<unsigned()> in_gap = [] { return 0U; };  // idle cycles before each input beat
  std::function<bool()> out_ready = [] { return true; };
  // Called in every cycle the input offers a beat that is not taken (after the policy's evaluation).
  std::function<void(Bench&)> on_stall;

  void offer(Packet p) { in_.push_back(std::move(p)); }

  // Runs until every offered packet is taken and every expected result seen, at most `limit` cycles.
  void run(std::uint64_t limit = 2'000'000) {
    for (std::uint64_t i = 0; i < limit && !idle(); ++i) cycle();
    for (int i = 0; i < 40; ++i) cycle();  // nothing more may come
    EXPECT_TRUE(in_.empty()) << in_.size() << " packets never taken";
    EXPECT_TRUE(expect_.empty()) << expect_.size() << " good packets never came out";
    EXPECT_TRUE(drops_.empty()) << drops_.size() << " drops never counted, first "
                                << (drops_.empty() ? "" : fate_name(drops_.front().first));
  }
  // Cycles until `done` holds (at most `limit`).
  void until(const std::function<bool()>& done, std::uint64_t limit = 200'000) {
    for (std::uint64_t i = 0; i < limit && !done(); ++i) cycle();
  }
  std::size_t in_packets() const { return in_.size(); }
  std::size_t in_beat() const { return beat_; }  // beats of the front packet taken
  // Cycles with the current policies (the input keeps offering what it has).
  void cycles(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) cycle();
  }
  // rst_ni low for `n` edges in the middle of whatever is going on; everything before it is forgotten.
  void reset_now(int n = 2) {
    sim_->rst_ni = 0;
    for (int i = 0; i < n; ++i) sim_.tick();
    sim_->rst_ni = 1;
    in_.clear();
    beat_ = 0;
    gap_ = 0;
    expect_.clear();
    drops_.clear();
    out_beat_ = 0;
    held_beats_ = held_packets_ = 0;
  }

  std::uint64_t now() const { return sim_.cycle(); }
  std::uint64_t stalls() const { return stalls_; }
  std::uint64_t good_out() const { return good_out_; }
  std::uint64_t first_in() const { return first_in_; }
  std::uint64_t last_in() const { return last_in_; }
  std::uint64_t first_out() const { return first_out_; }
  std::uint64_t last_out() const { return last_out_; }
  std::uint64_t out_beats() const { return out_beats_; }
  // Beats taken and neither out nor counted dropped; packets likewise (their last beat taken).
  std::size_t held_beats() const { return held_beats_; }
  std::size_t held_packets() const { return held_packets_; }
  std::array<std::uint64_t, 4> dropped{};  // by Fate
  void fail(const std::string& what) {
    if (++errors_ <= 10) ADD_FAILURE() << "cycle " << sim_.cycle() << ": " << what;
  }

 private:
  bool idle() const { return in_.empty() && expect_.empty() && drops_.empty(); }

  void drive() {
    sim_->s_axis_tvalid_i = 0;
    if (in_.empty() || gap_ > 0) {
      std::array<std::uint8_t, kBeatBytes> noise;
      for (auto& b : noise) b = static_cast<std::uint8_t>(rng_());
      put_data(sim_->s_axis_tdata_i, noise.data());
      put_mask(sim_->s_axis_tkeep_i, rng_());
      sim_->s_axis_tlast_i = rng_() & 1U;
      for (std::size_t w = 0; w < 3; ++w) sim_->s_axis_tuser_i[w] = static_cast<std::uint32_t>(rng_());
      return;
    }
    const Packet& p = in_.front();
    const Beat& b = p.beats[beat_];
    put_data(sim_->s_axis_tdata_i, b.data.data());
    put_mask(sim_->s_axis_tkeep_i, b.keep);
    sim_->s_axis_tlast_i = b.last;
    // tuser is sampled on the first beat only: noise on the others.
    for (std::size_t w = 0; w < 3; ++w)
      sim_->s_axis_tuser_i[w] = beat_ == 0 ? p.meta[w] : static_cast<std::uint32_t>(rng_());
    sim_->s_axis_tvalid_i = 1;
  }

  void cycle() {
    drive();
    sim_->m_axis_tready_i = out_ready() ? 1 : 0;
    sim_.eval();
    const std::uint64_t t = sim_.cycle();
    if (sim_->s_axis_tvalid_i != 0) {
      if (sim_->s_axis_tready_o != 0) {
        if (first_in_ == 0 && !any_in_) first_in_ = t;
        any_in_ = true;
        last_in_ = t;
        Packet& p = in_.front();
        ++held_beats_;
        if (++beat_ == p.beats.size()) {
          ++held_packets_;
          if (p.fate == Fate::kGood) {
            expect_.push_back(std::move(p));
          } else {
            drops_.push_back({p.fate, p.beats.size()});
          }
          in_.pop_front();
          beat_ = 0;
        }
        gap_ = in_gap();
      } else {
        ++stalls_;
        if (on_stall) on_stall(*this);
      }
    } else if (gap_ > 0) {
      --gap_;
    }
    check_output(t);
    for (const auto& [port, fate] : {std::pair{sim_->drop_crc_o, Fate::kCrc}, std::pair{sim_->drop_size_o, Fate::kSize},
                                     std::pair{sim_->drop_frame_o, Fate::kFrame}}) {
      if (port == 0) continue;
      ++dropped[static_cast<std::size_t>(fate)];
      if (drops_.empty()) {
        fail(std::string("drop_") + fate_name(fate) + " pulsed with no dropped packet pending");
      } else {
        if (drops_.front().first != fate)
          fail(std::string("drop_") + fate_name(fate) + " pulsed, next dropped packet is " +
               fate_name(drops_.front().first));
        held_beats_ -= drops_.front().second;
        --held_packets_;
        drops_.pop_front();
      }
    }
    sim_.tick();
  }

  void check_output(std::uint64_t t) {
    if (sim_->m_axis_tvalid_o == 0 || sim_->m_axis_tready_i == 0) return;
    if (out_beats_++ == 0) first_out_ = t;
    last_out_ = t;
    if (expect_.empty()) {
      fail("an output beat with no good packet pending");
      return;
    }
    const Packet& p = expect_.front();
    const Beat& want = p.beats[out_beat_];
    const std::string at = "good packet " + std::to_string(good_out_) + " (" + std::to_string(p.length) +
                           " bytes) beat " + std::to_string(out_beat_);
    std::array<std::uint8_t, kBeatBytes> got;
    get_data(sim_->m_axis_tdata_o, got.data());
    if (static_cast<std::uint64_t>(sim_->m_axis_tkeep_o) != want.keep) fail(at + ": tkeep differs");
    for (std::size_t i = 0; i < kBeatBytes; ++i) {
      if (((want.keep >> i) & 1U) != 0 && got[i] != want.data[i]) {
        fail(at + ": byte " + std::to_string(i) + " differs");
        break;
      }
    }
    if ((sim_->m_axis_tlast_o != 0) != want.last) fail(at + ": tlast " + std::to_string(sim_->m_axis_tlast_o));
    for (std::size_t w = 0; w < 3; ++w)
      if (sim_->m_axis_tuser_o[w] != p.meta[w]) fail(at + ": tuser meta word " + std::to_string(w) + " differs");
    if ((sim_->m_axis_tuser_o[3] & 0xFFFFU) != p.length)
      fail(at + ": tuser length " + std::to_string(sim_->m_axis_tuser_o[3] & 0xFFFFU));
    --held_beats_;
    if (++out_beat_ == p.beats.size()) {
      expect_.pop_front();
      --held_packets_;
      out_beat_ = 0;
      ++good_out_;
    }
  }

  rnic::tb::StageSim<Model> sim_;
  std::mt19937_64 rng_;
  std::deque<Packet> in_, expect_;
  std::deque<std::pair<Fate, std::size_t>> drops_;  // dropped packets to be counted, their beats
  std::size_t beat_ = 0, out_beat_ = 0, held_beats_ = 0, held_packets_ = 0;
  unsigned gap_ = 0;
  bool any_in_ = false;
  std::uint64_t stalls_ = 0, errors_ = 0, good_out_ = 0, out_beats_ = 0;
  std::uint64_t first_in_ = 0, last_in_ = 0, first_out_ = 0, last_out_ = 0;
};

// A random packet of any fate: about half good.
Packet random_packet(std::mt19937_64& rng) {
  const unsigned r = static_cast<unsigned>(rng() % 100);
  const auto len = [&rng] {
    const unsigned k = static_cast<unsigned>(rng() % 4);
    if (k == 0) return kHeader + rng() % 64;
    if (k == 1) return kHeader + rng() % 600;
    return kHeader + rng() % (kMaxPacketBytes - kHeader + 1);
  };
  if (r < 50) return good_packet(rng, len());
  if (r < 65) return bad_crc_packet(rng, len());
  if (r < 72) return short_packet(rng, 1 + rng() % (kHeader - 1));
  if (r < 80) return good_packet(rng, kMaxPacketBytes + 1 + rng() % 3000);  // oversize, right CRC
  return broken_packet(rng, len(), static_cast<unsigned>(rng() % 4));
}

// A random mix of good, bad-CRC, short, oversize and broken packets with random gaps on the input and
// random ready on the output: exactly the good ones come out, exact; each drop pulses its counter once.
TEST(HOLD_SUITE, RandomMixRandomGapsBothSides) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x401D0001);
  std::mt19937_64 rng(seed);
  Bench bench(seed);
  std::array<std::uint64_t, 4> want{};
  for (int i = 0; i < 2000; ++i) {
    Packet p = random_packet(rng);
    ++want[static_cast<std::size_t>(p.fate)];
    bench.offer(std::move(p));
  }
  bench.in_gap = [&rng] { return rng() % 3 == 0 ? random_gap(rng) : 0U; };
  unsigned phase = 0;
  bench.out_ready = [&rng, &phase] {
    if (++phase % 4096 < 2048) return rng() % 4 != 0;  // mostly ready
    return rng() % 4 == 0;                             // mostly not
  };
  bench.run();
  EXPECT_EQ(bench.good_out(), want[0]);
  for (std::size_t f = 1; f < 4; ++f) EXPECT_EQ(bench.dropped[f], want[f]) << fate_name(static_cast<Fate>(f));
  std::printf("[   INFO   ] %llu good, %llu crc, %llu size, %llu frame\n", static_cast<unsigned long long>(want[0]),
              static_cast<unsigned long long>(want[1]), static_cast<unsigned long long>(want[2]),
              static_cast<unsigned long long>(want[3]));
}

// Small packets only, back to back, many of every fate, the output ready at random: the drop decisions
// at one packet per cycle.
TEST(HOLD_SUITE, SmallPacketsEveryFateBackToBack) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x401D0002);
  std::mt19937_64 rng(seed);
  Bench bench(seed);
  std::array<std::uint64_t, 4> want{};
  for (int i = 0; i < 2000; ++i) {
    const std::size_t n = kHeader + rng() % (3 * kBeatBytes);
    Packet p;
    switch (rng() % 5) {
      case 0:
        p = bad_crc_packet(rng, n);
        break;
      case 1:
        p = short_packet(rng, 1 + rng() % (kHeader - 1));
        break;
      case 2:
        p = broken_packet(rng, n, static_cast<unsigned>(rng() % 4));
        break;
      default:
        p = good_packet(rng, n);
        break;
    }
    ++want[static_cast<std::size_t>(p.fate)];
    bench.offer(std::move(p));
  }
  bench.out_ready = [&rng] { return rng() % 8 != 0; };
  bench.run();
  EXPECT_EQ(bench.good_out(), want[0]);
  for (std::size_t f = 1; f < 4; ++f) EXPECT_EQ(bench.dropped[f], want[f]) << fate_name(static_cast<Fate>(f));
}

// Boundaries: RFC 9260 3.1 (a 12-byte packet, the common header alone, with a right CRC32c is good;
// 1..11 bytes are dropped as crc), RFC 9260 6.8 (one bit flipped: crc), MaxPacketBytes exactly (good) and
// one more (size, though its CRC is right), every kind of broken framing (frame, though its CRC is right),
// and an oversize packet with a broken beat (frame: framing is judged first).
TEST(HOLD_SUITE, DirectedBoundaries) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x401D0003);
  std::mt19937_64 rng(seed);
  Bench bench(seed);
  std::vector<Packet> ps;
  ps.push_back(good_packet(rng, kHeader));
  for (std::size_t n = 1; n < kHeader; ++n) ps.push_back(short_packet(rng, n));
  ps.push_back(bad_crc_packet(rng, kHeader));
  ps.push_back(good_packet(rng, kMaxPacketBytes));
  ps.push_back(good_packet(rng, kMaxPacketBytes + 1));
  ps.push_back(bad_crc_packet(rng, kMaxPacketBytes + 1));  // size: judged before the CRC
  ps.back().fate = Fate::kSize;
  ps.push_back(good_packet(rng, kMaxPacketBytes - 1));
  ps.push_back(good_packet(rng, 65535));
  for (unsigned kind = 0; kind < 4; ++kind) {
    ps.push_back(broken_packet(rng, kHeader, kind));
    ps.push_back(broken_packet(rng, 3 * kBeatBytes + 5, kind));
    ps.push_back(broken_packet(rng, 4 * kBeatBytes, kind));
  }
  ps.push_back(broken_packet(rng, kMaxPacketBytes + 100, 3));
  ps.push_back(good_packet(rng, kBeatBytes));
  ps.push_back(good_packet(rng, kBeatBytes + 1));
  std::array<std::uint64_t, 4> want{};
  for (auto& p : ps) {
    ++want[static_cast<std::size_t>(p.fate)];
    bench.offer(std::move(p));
  }
  bench.run();
  EXPECT_EQ(bench.good_out(), want[0]);
  for (std::size_t f = 1; f < 4; ++f) EXPECT_EQ(bench.dropped[f], want[f]) << fate_name(static_cast<Fate>(f));
}

// Line rate: N back-to-back packets of L bytes, the output always ready: no input stall, and the output
// one beat per cycle from its first beat to its last (no bubble between packets). Prints the cycles.
TEST(HOLD_SUITE, BackToBackLineRate) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x401D0004);
  std::mt19937_64 rng(seed);
  for (const std::size_t len :
       {std::size_t{12}, std::size_t{64}, std::size_t{65}, std::size_t{1500}, std::size_t{9000}}) {
    const std::size_t beats = (len + kBeatBytes - 1) / kBeatBytes;
    const std::size_t n = std::max<std::size_t>(8, std::min<std::size_t>(400, 6000 / beats));
    Bench bench(seed + len);
    for (std::size_t i = 0; i < n; ++i) bench.offer(good_packet(rng, len));
    bench.run();
    const std::uint64_t total = n * beats;
    const std::uint64_t in_cycles = bench.last_in() - bench.first_in() + 1;
    const std::uint64_t out_cycles = bench.last_out() - bench.first_out() + 1;
    EXPECT_EQ(bench.stalls(), 0U) << "L=" << len;
    EXPECT_EQ(in_cycles, total) << "L=" << len;
    EXPECT_EQ(out_cycles, total) << "L=" << len << ": bubbles in the output";
    EXPECT_EQ(bench.good_out(), n);
    std::printf(
        "[   INFO   ] DW %d L=%zu: %zu packets, %llu beats: input %llu cycles, output %llu cycles "
        "(%.3f beats/cycle), first beat out %llu cycles after first in, %llu input stalls\n",
        RNIC_HOLD_DW, len, n, static_cast<unsigned long long>(total), static_cast<unsigned long long>(in_cycles),
        static_cast<unsigned long long>(out_cycles), static_cast<double>(total) / static_cast<double>(out_cycles),
        static_cast<unsigned long long>(bench.first_out() - bench.first_in()),
        static_cast<unsigned long long>(bench.stalls()));
  }
}

// Line rate with drops: back-to-back packets, a third of them bad (crc, short, frame), the output always
// ready: no input stall, the good ones out one beat per cycle.
TEST(HOLD_SUITE, BackToBackWithDropsNoStall) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x401D0005);
  std::mt19937_64 rng(seed);
  Bench bench(seed);
  std::uint64_t good = 0;
  for (int i = 0; i < 500; ++i) {
    const std::size_t n = kHeader + (rng() % 2 == 0 ? rng() % 100 : rng() % 2000);
    const unsigned r = static_cast<unsigned>(rng() % 6);
    Packet p = r == 0   ? bad_crc_packet(rng, n)
               : r == 1 ? short_packet(rng, 1 + rng() % (kHeader - 1))
               : r == 2 ? broken_packet(rng, n, static_cast<unsigned>(rng() % 4))
                        : good_packet(rng, n);
    good += p.fate == Fate::kGood;
    bench.offer(std::move(p));
  }
  bench.run();
  EXPECT_EQ(bench.stalls(), 0U);
  EXPECT_EQ(bench.good_out(), good);
}

// The output held low for a long time while the input offers back to back: the input stalls, and only
// when the buffer holds DepthBeats - 1 beats or PendDepth - 1 packets wait (one of slack: the ready is
// registered); then the output is released: every packet out exactly once, exact. Big packets (the
// buffer fills) and small ones (the pending FIFO fills).
TEST(HOLD_SUITE, OutputHeldLongThenReleased) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x401D0006);
  std::mt19937_64 rng(seed);
  for (const std::size_t len : {std::size_t{1500}, std::size_t{12}, std::size_t{9000}}) {
    Bench bench(seed + len);
    std::uint64_t good = 0;
    for (int i = 0; i < 80; ++i) {
      Packet p = i % 5 == 4 ? bad_crc_packet(rng, len) : good_packet(rng, len);
      good += p.fate == Fate::kGood;
      bench.offer(std::move(p));
    }
    bool held = true;
    bench.out_ready = [&held] { return !held; };
    std::uint64_t stalls_full = 0;
    bench.on_stall = [&](Bench& b) {
      if (!held) return;
      // Beats in the buffer (the output slice and read register hold up to 3 more) or packets pending;
      // 4 of slack: the ready is registered from the previous cycle's pointers.
      if (b.held_beats() + 4 < kDepthBeats && b.held_packets() + 4 < kPendDepth)
        b.fail("input stalled with " + std::to_string(b.held_beats()) + " beats, " + std::to_string(b.held_packets()) +
               " packets held");
      ++stalls_full;
    };
    const std::uint64_t hold_cycles = kDepthBeats + 2000;
    bench.cycles(hold_cycles);
    EXPECT_GT(stalls_full, 1000U) << "L=" << len << ": the input never stalled with the output held";
    const std::size_t beats_held = bench.held_beats();
    EXPECT_LE(beats_held, kDepthBeats + 3) << "more beats held than the buffer, slice and read register";
    held = false;
    bench.out_ready = [&rng] { return rng() % 3 != 0; };
    bench.run();
    EXPECT_EQ(bench.good_out(), good) << "L=" << len;
    std::printf("[   INFO   ] DW %d L=%zu: output held %llu cycles: input stalled with %zu beats held\n", RNIC_HOLD_DW,
                len, static_cast<unsigned long long>(hold_cycles), beats_held);
  }
}

// Reset in the middle of a packet, with packets of every fate waiting in the buffer, the info and
// verdict FIFOs, the read side and the output (held in even rounds, at random in odd ones): nothing from
// before the reset comes out or is counted; then clean traffic comes out exact.
TEST(HOLD_SUITE, ResetMidPacketThenCleanTraffic) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x401D0007);
  std::mt19937_64 rng(seed);
  Bench bench(seed);
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 10; ++i) {
      const std::size_t n = kHeader + rng() % 400;
      bench.offer(i % 4 == 1 ? bad_crc_packet(rng, n) : i % 4 == 3 ? broken_packet(rng, n, 0) : good_packet(rng, n));
    }
    bench.offer(good_packet(rng, 4000));  // cut by the reset at a random beat
    const std::size_t cut = 1 + rng() % (4000 / kBeatBytes - 1);
    const bool held = round % 2 == 0;
    bench.out_ready = [&rng, held] { return !held && rng() % 2 == 0; };
    bench.until([&bench, cut] { return bench.in_packets() == 1 && bench.in_beat() == cut; });
    ASSERT_EQ(bench.in_packets(), 1U) << "never reached the cut";
    bench.reset_now(1 + round);
    std::uint64_t good = bench.good_out();
    for (int i = 0; i < 40; ++i) {
      Packet p = random_packet(rng);
      good += p.fate == Fate::kGood;
      bench.offer(std::move(p));
    }
    bench.out_ready = [&rng] { return rng() % 4 != 0; };
    bench.in_gap = [&rng] { return rng() % 4 == 0 ? random_gap(rng) : 0U; };
    bench.run();
    EXPECT_EQ(bench.good_out(), good) << "round " << round;
    bench.in_gap = [] { return 0U; };
  }
}

}  // namespace
