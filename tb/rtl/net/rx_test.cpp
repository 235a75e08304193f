// SPDX-License-Identifier: Apache-2.0
// rnic_net_rx (issue 14, docs/network.md): the whole receive front end (hold, association lookup, chunk
// walk, split) against the reference model tb/net NetRef, packet by packet:
//   - a packet with a good CRC32c (RFC 9260 6.8) of 12..9216 bytes gives exactly NetRef's DDP segments
//     (bytes, stream, DDP-SSN - 1, net = 1), its host copy with every segment taken (rules 6..8), one
//     patch entry per segment pointing at that chunk's type byte in the copy, and its summary;
//   - a bad CRC32c or an oversize packet gives nothing but its drop pulse (rule 1);
//   - traffic: bundles of DATA chunks (RFC 9260 3.3.1) that are DDP candidates (U=B=E=1, PPID 16,
//     RFC 5043 5.2) or miss one condition, control chunks, malformed lengths, tails, packets of other
//     associations, and random bytes with a valid checksum (the hostile peer of RFC 5041 8), with random
//     gaps on the input and random backpressure on every output.
// Seed: RNIC_TEST_SEED=<n> replays (printed); waveform with RNIC_FST=<file>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include RNIC_RX_HDR  // the model (rx.cmake: the defaults, or a source FIFO of 2)
#include "net_table.hpp"
#include "rnic/capture/sctp_capture.hpp"
#include "rnic/tb/net_ref.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/stage_sim.hpp"
#include "rnic/wire/bytes.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;
namespace net = rnic::tb::net;

constexpr std::size_t kBeat = 64;  // DataWidth 512
constexpr std::size_t kMaxPacket = 9216;
constexpr std::size_t kStreams = 256;

using rnic::wire::store_be16;
using rnic::wire::store_be32;

// RFC 9260 6.8: the CRC32c with bytes 8..11 as zero, stored least significant byte first.
void seal(Bytes& p, bool good) {
  if (p.size() < 12) return;
  rnic::capture::SctpPacket::seal(p);
  if (!good) p[10] ^= 0x01;  // bit 16 of the stored little-endian checksum
}

// Random SCTP packets for one association entry.
class Gen {
 public:
  Gen(std::mt19937_64& rng, const net::AssocEntry& e) : rng_(rng), e_(e) {}

  std::size_t pick(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng_() % n); }
  bool chance(unsigned pct) { return pick(100) < pct; }
  std::uint8_t byte() { return static_cast<std::uint8_t>(rng_()); }

  // The common header of a packet to the entry (or, with match false, one field off).
  Bytes header(bool match) {
    Bytes p(12, 0);
    store_be16(p.data(), e_.their_sctp_port);
    store_be16(p.data() + 2, e_.my_sctp_port);
    store_be32(p.data() + 4, e_.my_vtag);
    if (!match) p[pick(8)] ^= static_cast<std::uint8_t>(1U << pick(8));
    return p;
  }
  // A DATA chunk; mostly a DDP candidate, sometimes missing one of rule 5's conditions.
  void data(Bytes& p, std::size_t max_segment) {
    const std::size_t seg = chance(5) ? 0 : 1 + pick(std::max<std::size_t>(1, max_segment));
    const std::size_t start = p.size();
    const std::size_t len = 16 + 2 + seg;
    p.resize(start + len, 0);
    p[start] = 0;
    p[start + 1] = chance(90) ? 0x07 : static_cast<std::uint8_t>(pick(16));
    store_be16(p.data() + start + 2, static_cast<std::uint16_t>(len));
    store_be32(p.data() + start + 4, static_cast<std::uint32_t>(rng_()));  // TSN
    const std::uint32_t sid = chance(90) ? static_cast<std::uint32_t>(pick(e_.stream_count + 1U))
                                         : static_cast<std::uint32_t>(rng_() & 0xFFFF);
    store_be16(p.data() + start + 8, static_cast<std::uint16_t>(sid));
    store_be16(p.data() + start + 10, static_cast<std::uint16_t>(rng_() & 0xFFFF));
    store_be32(p.data() + start + 12, chance(90) ? 16U : (chance(50) ? 17U : static_cast<std::uint32_t>(rng_())));
    store_be16(p.data() + start + 16, static_cast<std::uint16_t>(rng_() & 0xFFFF));  // DDP-SSN
    for (std::size_t i = 0; i < seg; ++i) p[start + 18 + i] = byte();
    if (seg > 0 && chance(50)) p[start + 18] |= 0x80;  // T
    pad(p);
  }
  // A control chunk (SACK, HEARTBEAT, PAD or anything) of 4..64 bytes.
  void control(Bytes& p) {
    static constexpr std::uint8_t kTypes[] = {3, 4, 5, 0x84, 0xC0, 14};
    const std::size_t start = p.size();
    const std::size_t len = 4 + pick(61);
    p.resize(start + len);
    p[start] = chance(80) ? kTypes[pick(sizeof kTypes)] : byte();
    p[start + 1] = byte();
    store_be16(p.data() + start + 2, static_cast<std::uint16_t>(len));
    for (std::size_t i = 4; i < len; ++i) p[start + i] = byte();
    pad(p);
  }
  void pad(Bytes& p) {
    while (p.size() % 4 != 0) p.push_back(0);
  }

  // A whole packet: a bundle of chunks to the entry, sometimes malformed or for another association.
  Bytes packet() {
    const unsigned kind = static_cast<unsigned>(pick(100));
    if (kind < 5) {  // random bytes (maybe behind a matching header)
      Bytes p = chance(50) ? header(true) : Bytes(12, 0);
      if (p[0] == 0 && p[1] == 0 && chance(50)) p = header(false);
      const std::size_t n = pick(600);
      for (std::size_t i = 0; i < n; ++i) p.push_back(byte());
      return p;
    }
    Bytes p = header(kind >= 10);
    const std::size_t chunks = chance(10) ? 33 + pick(12) : 1 + pick(6);
    const std::size_t max_segment = chunks > 8 ? 24 : (chance(30) ? 1500 : 200);
    for (std::size_t i = 0; i < chunks && p.size() < kMaxPacket - 1600; ++i) {
      if (chance(75))
        data(p, max_segment);
      else
        control(p);
    }
    if (chance(8)) {  // a malformed length somewhere
      std::size_t off = 12;
      std::vector<std::size_t> starts;
      while (off + 4 <= p.size()) {
        starts.push_back(off);
        const std::size_t l = (std::size_t{p[off + 2]} << 8) | p[off + 3];
        off += (l + 3) & ~std::size_t{3};
      }
      if (!starts.empty()) {
        const std::size_t at = starts[pick(starts.size())];
        const std::uint32_t bad = chance(50) ? static_cast<std::uint32_t>(pick(4))
                                             : static_cast<std::uint32_t>(p.size() - at + 1 + pick(0x10000 - p.size()));
        store_be16(p.data() + at + 2, static_cast<std::uint16_t>(bad & 0xFFFF));
      }
    }
    if (chance(5)) p.resize(p.size() + 1 + pick(3), 0xEE);  // a tail of 1..3 bytes
    return p;
  }

 private:
  std::mt19937_64& rng_;
  const net::AssocEntry& e_;
};

struct Offered {
  Bytes bytes;
  net::PacketMeta meta;
};

struct SegOut {
  Bytes bytes;
  std::uint64_t user = 0;
};
struct SumOut {
  bool hit = false, malformed = false;
  unsigned index = 0, chunks = 0, candidates = 0, segments = 0, beyond = 0, length = 0, copy_length = 0;
  std::uint32_t src_ip = 0;  // the sender: tuser's their IP and UDP port (NRXD SRC_IP, SRC_PORT)
  unsigned src_port = 0;
};
struct PatchOut {
  unsigned offset = 0;
  bool last = false;
};

class Bench {
 public:
  explicit Bench(std::uint64_t seed) : rng_(seed) {
    idle_inputs();
    sim_.reset();
  }

  std::mt19937_64& rng() { return rng_; }
  // Output readiness in percent (100: always ready) and input gaps on or off.
  void set_ready(unsigned pct) { ready_pct_ = pct; }
  void set_gaps(bool on) { gaps_ = on; }

  void write_entry(unsigned index, const net::AssocEntry& e) {
    auto& m = sim_.model();
    net::drive_assoc_write(m, index, e);
    step();
    m.wr_i = 0;
    if (table_.size() <= index) table_.resize(index + 1);
    table_[index] = e;
  }
  void write_live(unsigned stream, bool value) {
    auto& m = sim_.model();
    net::drive_live_write(m, stream, value);
    step();
    m.live_wr_i = 0;
    if (live_.size() < kStreams) live_.resize(kStreams, false);
    live_[stream] = value;
  }

  // Offers a packet and records what the reference model expects of it.
  void offer(const Bytes& p, const net::PacketMeta& meta, bool good_crc) {
    Bytes b = p;
    seal(b, good_crc);
    const bool passes = good_crc && b.size() >= 12 && b.size() <= kMaxPacket;
    if (!passes) {
      ++(b.size() > kMaxPacket ? want_size_ : want_crc_);
    } else {
      const net::Walk w = net::walk(b, meta, true, table_, live_);
      const std::vector<net::Fate> taken(w.segments.size(), net::Fate::kTaken);
      const Bytes copy = net::host_copy(b, w, taken);
      for (const auto& s : w.segments) want_segs_.push_back(s);
      want_copies_.push_back(copy);
      const net::PacketSummary s = net::summarize(w, taken, copy.size());
      SumOut o;
      o.hit = s.assoc.has_value();
      o.index = s.assoc ? static_cast<unsigned>(*s.assoc) : 0;
      o.malformed = s.malformed;
      o.chunks = static_cast<unsigned>(s.chunks);
      o.candidates = static_cast<unsigned>(s.candidates);
      o.segments = static_cast<unsigned>(s.segments);
      o.beyond = static_cast<unsigned>(s.beyond_limit);
      o.length = static_cast<unsigned>(b.size());
      o.copy_length = static_cast<unsigned>(copy.size());
      o.src_ip = meta.their_ip;
      o.src_port = meta.their_udp_port;
      want_sums_.push_back(o);
      // Where each segment's chunk sits in the copy: the header, then each chunk's copy in order.
      std::size_t at = 12;
      std::vector<unsigned> patches;
      for (const auto& c : w.chunks) {
        if (c.kind == net::ChunkKind::kSegment) patches.push_back(static_cast<unsigned>(at));
        at += c.kind == net::ChunkKind::kWhole ? c.copy_bytes : (c.trimmed_length + 3) / 4 * 4;
      }
      for (std::size_t i = 0; i < patches.size(); ++i) want_patches_.push_back({patches[i], i + 1 == patches.size()});
      ++want_packets_;
    }
    in_.push_back({b, meta});
  }

  // Runs until every offered packet went in and every expected output came out (or a limit).
  void run(std::uint64_t limit = 2'000'000) {
    std::uint64_t quiet = 0;
    for (std::uint64_t i = 0; i < limit; ++i) {
      const std::uint64_t before = progress_;
      step();
      quiet = progress_ == before ? quiet + 1 : 0;
      if (in_.empty() && done()) {
        done_at_ = sim_.cycle();
        break;
      }
      if (quiet > 20000) {
        ADD_FAILURE() << "no progress for 20000 cycles at cycle " << sim_.cycle() << " (" << in_.size()
                      << " packets not taken, " << want_copies_.size() - got_copies_ << " copies missing)";
        return;
      }
    }
    for (int i = 0; i < 64; ++i) step();  // nothing more may come
    check_all();
  }
  std::uint64_t cycles() const { return sim_.cycle(); }
  // The cycle the last expected output came out (run()).
  std::uint64_t done_at() const { return done_at_; }
  std::uint64_t input_beats() const { return in_beats_; }
  std::uint64_t input_stalls() const { return in_stalls_; }

 private:
  bool done() const {
    return got_copies_ == want_copies_.size() && got_segs_ == want_segs_.size() && got_sums_ == want_sums_.size() &&
           got_patches_ == want_patches_.size() && got_crc_ == want_crc_ && got_size_ == want_size_;
  }
  void fail(const std::string& what) {
    if (++errors_ <= 10) ADD_FAILURE() << "cycle " << sim_.cycle() << ": " << what;
  }
  void check_all() {
    EXPECT_EQ(errors_, 0U) << "mismatches (first 10 above)";
    EXPECT_EQ(got_segs_, want_segs_.size()) << "DDP segments";
    EXPECT_EQ(got_copies_, want_copies_.size()) << "host copies";
    EXPECT_EQ(got_sums_, want_sums_.size()) << "summaries";
    EXPECT_EQ(got_patches_, want_patches_.size()) << "patch entries";
    EXPECT_EQ(got_crc_, want_crc_) << "drop_crc pulses (RFC 9260 6.8)";
    EXPECT_EQ(got_size_, want_size_) << "drop_size pulses";
    EXPECT_EQ(got_frame_, 0U) << "drop_frame pulses";
  }
  bool ready() { return ready_pct_ >= 100 || rng_() % 100 < ready_pct_; }

  void idle_inputs() {
    auto& m = sim_.model();
    m.s_axis_net_tvalid_i = 0;
    m.wr_i = 0;
    m.live_wr_i = 0;
    m.m_seg_tready_i = 0;
    m.m_copy_tready_i = 0;
    m.m_patch_ready_i = 0;
    m.m_sum_ready_i = 0;
  }

  void drive_input() {
    auto& m = sim_.model();
    m.s_axis_net_tvalid_i = 0;
    if (in_.empty()) return;
    if (gaps_ && !holding_ && rng_() % 100 < 20) return;
    const Offered& o = in_.front();
    const std::size_t n = o.bytes.size();
    const std::size_t off = in_beat_ * kBeat;
    const std::size_t here = std::min(kBeat, n - off);
    std::uint8_t buf[kBeat];
    for (std::size_t i = 0; i < kBeat; ++i) buf[i] = i < here ? o.bytes[off + i] : static_cast<std::uint8_t>(rng_());
    for (std::size_t w = 0; w < 16; ++w) m.s_axis_net_tdata_i[w] = rnic::wire::load_le32(buf + 4 * w);
    m.s_axis_net_tkeep_i = here >= 64 ? ~QData{0} : (QData{1} << here) - 1;
    m.s_axis_net_tlast_i = off + here >= n;
    m.s_axis_net_tuser_i[0] = o.meta.my_ip;
    m.s_axis_net_tuser_i[1] = o.meta.their_ip;
    m.s_axis_net_tuser_i[2] = (std::uint32_t{o.meta.their_udp_port} << 16) | o.meta.my_udp_port;
    m.s_axis_net_tvalid_i = 1;
  }

  template <class W>
  static void take_bytes(Bytes& into, const W& data, std::uint64_t keep) {
    bool ended = false;
    for (std::size_t i = 0; i < kBeat; ++i) {
      const bool k = ((keep >> i) & 1U) != 0;
      if (k && ended) throw std::runtime_error("tkeep not contiguous");
      if (!k) {
        ended = true;
        continue;
      }
      into.push_back(static_cast<std::uint8_t>(data[i / 4] >> (8 * (i % 4))));
    }
  }

  void step() {
    auto& m = sim_.model();
    drive_input();
    m.m_seg_tready_i = ready();
    m.m_copy_tready_i = ready();
    m.m_patch_ready_i = ready();
    m.m_sum_ready_i = ready();
    sim_.eval();
    // Input
    if (m.s_axis_net_tvalid_i) {
      if (m.s_axis_net_tready_o) {
        ++in_beats_;
        ++progress_;
        holding_ = false;
        if (m.s_axis_net_tlast_i) {
          in_.pop_front();
          in_beat_ = 0;
        } else {
          ++in_beat_;
        }
      } else {
        ++in_stalls_;
        holding_ = true;
      }
    }
    // Segments
    if (m.m_seg_tvalid_o && m.m_seg_tready_i) {
      ++progress_;
      if (seg_.bytes.empty())
        seg_.user = m.m_seg_tuser_o;
      else if (seg_.user != m.m_seg_tuser_o)
        fail("m_seg tuser changed inside a segment");
      take_bytes(seg_.bytes, m.m_seg_tdata_o, m.m_seg_tkeep_o);
      if (m.m_seg_tlast_o) {
        check_segment();
        seg_ = {};
      }
    }
    // Copies
    if (m.m_copy_tvalid_o && m.m_copy_tready_i) {
      ++progress_;
      take_bytes(copy_, m.m_copy_tdata_o, m.m_copy_tkeep_o);
      if (m.m_copy_tlast_o) {
        check_copy();
        copy_.clear();
      }
    }
    if (m.m_patch_valid_o && m.m_patch_ready_i) {
      ++progress_;
      if (got_patches_ >= want_patches_.size()) {
        fail("a patch entry nobody expected");
      } else {
        const PatchOut& w = want_patches_[got_patches_];
        if (m.m_patch_copy_offset_o != w.offset || (m.m_patch_last_o != 0) != w.last)
          fail("patch " + std::to_string(got_patches_) + ": offset " + std::to_string(m.m_patch_copy_offset_o) +
               " last " + std::to_string(m.m_patch_last_o) + ", want " + std::to_string(w.offset) + " last " +
               std::to_string(w.last));
      }
      ++got_patches_;
    }
    if (m.m_sum_valid_o && m.m_sum_ready_i) {
      ++progress_;
      check_sum();
    }
    got_crc_ += m.drop_crc_o;
    got_size_ += m.drop_size_o;
    got_frame_ += m.drop_frame_o;
    sim_.tick();
  }

  void check_segment() {
    if (got_segs_ >= want_segs_.size()) {
      fail("a DDP segment nobody expected (" + std::to_string(seg_.bytes.size()) + " bytes)");
      ++got_segs_;
      return;
    }
    const net::Segment& w = want_segs_[got_segs_];
    const std::uint64_t user = (std::uint64_t{1} << 32) | (std::uint64_t{w.ssn} << 16) | w.stream;
    if (seg_.user != user)
      fail("segment " + std::to_string(got_segs_) + ": tuser " + std::to_string(seg_.user) + ", want " +
           std::to_string(user) + " (net, DDP-SSN - 1, stream)");
    if (seg_.bytes != w.bytes)
      fail("segment " + std::to_string(got_segs_) + ": " + std::to_string(seg_.bytes.size()) + " bytes, want " +
           std::to_string(w.bytes.size()) + (seg_.bytes.size() == w.bytes.size() ? " (contents differ)" : ""));
    ++got_segs_;
  }
  void check_copy() {
    if (got_copies_ >= want_copies_.size()) {
      fail("a host copy nobody expected");
      ++got_copies_;
      return;
    }
    const Bytes& w = want_copies_[got_copies_];
    if (copy_ != w) {
      std::size_t at = 0;
      while (at < copy_.size() && at < w.size() && copy_[at] == w[at]) ++at;
      fail("host copy " + std::to_string(got_copies_) + ": " + std::to_string(copy_.size()) + " bytes, want " +
           std::to_string(w.size()) + ", first difference at byte " + std::to_string(at));
    }
    ++got_copies_;
  }
  void check_sum() {
    auto& m = sim_.model();
    if (got_sums_ >= want_sums_.size()) {
      fail("a summary nobody expected");
      ++got_sums_;
      return;
    }
    const SumOut& w = want_sums_[got_sums_];
    SumOut g;
    g.hit = m.m_sum_hit_o;
    g.index = g.hit ? m.m_sum_assoc_index_o : 0;
    g.malformed = m.m_sum_malformed_o;
    g.chunks = m.m_sum_chunks_o;
    g.candidates = m.m_sum_candidates_o;
    g.segments = m.m_sum_segments_o;
    g.beyond = m.m_sum_beyond_o;
    g.length = m.m_sum_length_o;
    g.copy_length = m.m_sum_copy_length_o;
    g.src_ip = m.m_sum_src_ip_o;
    g.src_port = m.m_sum_src_port_o;
    const auto str = [](const SumOut& s) {
      return "hit " + std::to_string(s.hit) + " index " + std::to_string(s.index) + " malformed " +
             std::to_string(s.malformed) + " chunks " + std::to_string(s.chunks) + " candidates " +
             std::to_string(s.candidates) + " segments " + std::to_string(s.segments) + " beyond " +
             std::to_string(s.beyond) + " length " + std::to_string(s.length) + " copy " +
             std::to_string(s.copy_length) + " from " + std::to_string(s.src_ip) + ":" + std::to_string(s.src_port);
    };
    if (str(g) != str(w)) fail("summary " + std::to_string(got_sums_) + ": " + str(g) + ", want " + str(w));
    ++got_sums_;
  }

  rnic::tb::StageSim<RNIC_RX_CLASS> sim_;
  std::mt19937_64 rng_;
  unsigned ready_pct_ = 100;
  bool gaps_ = false, holding_ = false;
  std::vector<net::AssocEntry> table_;
  std::vector<bool> live_ = std::vector<bool>(kStreams, false);
  std::deque<Offered> in_;
  std::size_t in_beat_ = 0;
  std::uint64_t in_beats_ = 0, in_stalls_ = 0, progress_ = 0, errors_ = 0, done_at_ = 0;
  std::vector<net::Segment> want_segs_;
  std::vector<Bytes> want_copies_;
  std::vector<SumOut> want_sums_;
  std::vector<PatchOut> want_patches_;
  std::uint64_t want_packets_ = 0, want_crc_ = 0, want_size_ = 0;
  std::uint64_t got_segs_ = 0, got_copies_ = 0, got_sums_ = 0, got_patches_ = 0;
  std::uint64_t got_crc_ = 0, got_size_ = 0, got_frame_ = 0;
  SegOut seg_;
  Bytes copy_;
};

net::AssocEntry entry(std::mt19937_64& rng, std::uint16_t base, std::uint16_t count) {
  net::AssocEntry e;
  e.valid = true;
  e.my_ip = 0x0A000001;
  e.their_ip = 0x0A000000U | static_cast<std::uint32_t>(2 + rng() % 200);
  e.my_udp_port = 9899;
  e.their_udp_port = static_cast<std::uint16_t>(9899 + rng() % 2);
  e.my_sctp_port = 5002;
  e.their_sctp_port = static_cast<std::uint16_t>(5001 + rng() % 100);
  e.my_vtag = static_cast<std::uint32_t>(rng());
  e.stream_base = base;
  e.stream_count = count;
  e.vnx_socket = static_cast<std::uint16_t>(rng() % 16);
  return e;
}
net::PacketMeta meta_of(const net::AssocEntry& e) { return {e.my_ip, e.their_ip, e.my_udp_port, e.their_udp_port}; }

// Three associations, random live bits; random packets to each and to nobody, some with a bad CRC32c or
// oversize, with input gaps and output backpressure.
TEST(NetRx, RandomTrafficMatchesReferenceModel) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  Bench b(seed);
  auto& rng = b.rng();
  std::vector<net::AssocEntry> es = {entry(rng, 0, 8), entry(rng, 8, 4), entry(rng, 100, 16)};
  for (unsigned i = 0; i < es.size(); ++i) b.write_entry(i * 5, es[i]);
  for (unsigned s = 0; s < kStreams; ++s)
    if (rng() % 100 < 80) b.write_live(s, true);
  b.set_ready(70);
  b.set_gaps(true);
  for (int i = 0; i < 400; ++i) {
    const net::AssocEntry& e = es[rng() % es.size()];
    Gen g(rng, e);
    Bytes p = g.packet();
    net::PacketMeta meta = meta_of(e);
    if (g.chance(5)) meta.their_udp_port ^= 1;  // another peer: a miss
    const bool good = !g.chance(8);
    if (g.chance(2)) p.resize(kMaxPacket + 1 + g.pick(200), 0x55);  // oversize
    b.offer(p, meta, good);
  }
  b.run();
}

// The hostile peer (RFC 5041 8): random bytes with a valid CRC32c, behind a matching common header or
// not, every length 12..2000; and packets whose chunk lengths are all random. Whatever they hold, the
// front end gives what the reference model gives and never stalls.
TEST(NetRx, HostileBytesWithValidChecksum) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  Bench b(seed);
  auto& rng = b.rng();
  const net::AssocEntry e = entry(rng, 0, 64);
  b.write_entry(3, e);
  for (unsigned s = 0; s < 64; ++s) b.write_live(s, true);
  b.set_ready(60);
  b.set_gaps(true);
  for (int i = 0; i < 300; ++i) {
    Gen g(rng, e);
    Bytes p = g.chance(70) ? g.header(true) : Bytes(12, 0);
    const std::size_t n = g.pick(2000);
    for (std::size_t k = 0; k < n; ++k) p.push_back(g.byte());
    if (g.chance(50) && p.size() >= 16) {  // a DATA chunk header that looks like a candidate, random length
      p[12] = 0;
      p[13] = 0x07;
      store_be16(p.data() + 14, static_cast<std::uint16_t>(rng() & 0xFFFF));
    }
    b.offer(p, meta_of(e), true);
  }
  b.run();
}

// Back to back, every output always ready: `packets` packets from make(gen, i) to one association with
// live streams 0..3. Prints cycles per packet, bytes per cycle against the 64-byte input limit and the
// input's stall cycles (a figure, not a bound; the outputs are checked as in every test).
void throughput(const std::string& what, std::uint64_t seed, int packets, const std::function<Bytes(Gen&, int)>& make) {
  Bench b(seed);
  auto& rng = b.rng();
  const net::AssocEntry e = entry(rng, 0, 4);
  b.write_entry(0, e);
  for (unsigned s = 0; s < 4; ++s) b.write_live(s, true);
  const std::uint64_t c0 = b.cycles();
  std::uint64_t bytes = 0, chunks = 0;
  for (int i = 0; i < packets; ++i) {
    Gen g(rng, e);
    const Bytes p = make(g, i);
    bytes += p.size();
    for (std::size_t off = 12; off + 4 <= p.size(); off += (((std::size_t{p[off + 2]} << 8) | p[off + 3]) + 3) / 4 * 4)
      ++chunks;
    b.offer(p, meta_of(e), true);
  }
  b.run();
  const auto cyc = static_cast<double>(b.done_at() - c0);
  std::printf(
      "[  FIGURE  ] %s: %d packets, %.0f cycles (%.1f per packet, %.2f chunks/cycle), %.1f bytes/cycle of 64, "
      "%llu input stall cycles\n",
      what.c_str(), packets, cyc, cyc / packets, static_cast<double>(chunks) / cyc, static_cast<double>(bytes) / cyc,
      static_cast<unsigned long long>(b.input_stalls()));
}

// A DATA chunk carrying a tagged DDP segment of `seg` bytes on SCTP stream `sid` (RFC 5043 5.2).
void ddp_chunk(Bytes& p, Gen& g, std::size_t seg, std::uint32_t sid, std::uint32_t ddp_ssn) {
  const std::size_t start = p.size();
  p.resize(start + 18 + seg);
  p[start + 1] = 0x07;
  store_be16(p.data() + start + 2, static_cast<std::uint16_t>(18 + seg));
  store_be16(p.data() + start + 8, static_cast<std::uint16_t>(sid));
  store_be32(p.data() + start + 12, 16);
  store_be16(p.data() + start + 16, static_cast<std::uint16_t>(ddp_ssn & 0xFFFF));
  p[start + 18] = 0x80;
  g.pad(p);
}

// Line rate: one DDP segment per packet of each size.
TEST(NetRx, ThroughputOneSegmentPerPacket) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x5EED0014);
  for (const std::size_t seg : {100U, 1400U, 8900U}) {
    throughput("one " + std::to_string(seg) + "-byte segment per packet", seed, 100, [seg](Gen& g, int i) {
      Bytes p = g.header(true);
      ddp_chunk(p, g, seg, 1, static_cast<std::uint32_t>(i + 1));
      return p;
    });
  }
}

// Bundles of minimal DDP segments (1 payload byte: 19-byte chunks padded to 20), 32 per packet, and of
// 4-byte control chunks: the walker's one chunk per cycle is the limit.
TEST(NetRx, ThroughputBundlesOfSmallChunks) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x5EED0015);
  throughput("32 1-byte DDP segments per packet", seed, 50, [](Gen& g, int i) {
    Bytes p = g.header(true);
    for (int k = 0; k < 32; ++k) ddp_chunk(p, g, 1, 2, static_cast<std::uint32_t>(32 * i + k + 1));
    return p;
  });
  throughput("32 4-byte control chunks per packet", seed, 50, [](Gen& g, int) {
    Bytes p = g.header(true);
    for (int k = 0; k < 32; ++k) {
      const std::size_t start = p.size();
      p.resize(start + 4);
      p[start] = 0x0E;  // SHUTDOWN COMPLETE: a 4-byte chunk
      store_be16(p.data() + start + 2, 4);
    }
    return p;
  });
}

}  // namespace
