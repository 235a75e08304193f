// SPDX-License-Identifier: Apache-2.0
// rnic_net_split (issue 14, docs/network.md; the front end's unit interfaces, 4) at one DataWidth (RNIC_SPLIT_DW),
// against the reference model tb/net (NetRef rules 6..8): the descriptor items are made here from
// rnic::tb::net::walk()'s result as the walker sends them (header WHOLE {0, 12}; per ChunkInfo WHOLE,
// SEGMENT or BEYOND; RAW from the malformed offset or the tail; a miss: header, RAW {12}, END), and driven
// with the packet beats, each with random valid gaps, and random ready on every output. Checked:
//   m_seg   every segment's bytes, stream, ssn, tuser.net = 1 (walk.segments, rule 6);
//   m_copy  byte-exact host_copy(packet, walk, every fate taken) (rules 6, 7; BEYOND as PAD, rule 8);
//   m_patch the copy offset of each SEGMENT's type byte (the copy holds 0x00 there) and its last flag;
//   m_sum   END's fields and the copy's length, never before the copy's last beat has been taken.
// Directed: RFC 5043 5.2 segments of 1 byte and 9000 bytes, tagged and untagged (trimmed to 14 / 18
// bytes of DDP header), 32 tiny segments bundled and more (BEYOND, RFC 4820 PAD), RFC 9260 3.2 malformed
// lengths and 1..3 tail bytes, a miss; random packets (seeded: RNIC_TEST_SEED=<n> replays).
// Throughput: cycles per packet with every valid and ready high (printed; bounds asserted).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "rnic/tb/net_ref.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/stage_sim.hpp"
#include "rnic/wire/bytes.hpp"

#define RNIC_CAT2(a, b) a##b
#define RNIC_CAT(a, b) RNIC_CAT2(a, b)
#include RNIC_SPLIT_HDR
#define SPLIT_SUITE RNIC_CAT(NetSplit, RNIC_SPLIT_NAME)

namespace {

namespace net = rnic::tb::net;
using Model = RNIC_SPLIT_CLASS;
using Bytes = std::vector<std::uint8_t>;
using rnic::wire::store_be16;
using rnic::wire::store_be32;

constexpr std::size_t kBeat = RNIC_SPLIT_DW / 8;

// ---- Ports -------------------------------------------------------------------------------------------
template <std::size_t N>
void put_bytes(VlWide<N>& port, const std::uint8_t* b, std::size_t n) {
  for (std::size_t w = 0; w < N; ++w) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i)
      if (4 * w + i < n) v |= std::uint32_t{b[4 * w + i]} << (8 * i);
    port[w] = v;
  }
}
inline void put_bytes(QData& port, const std::uint8_t* b, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n && i < 8; ++i) v |= std::uint64_t{b[i]} << (8 * i);
  port = v;
}
template <std::size_t N>
std::uint8_t get_byte(const VlWide<N>& port, std::size_t i) {
  return static_cast<std::uint8_t>(port[i / 4] >> (8 * (i % 4)));
}
inline std::uint8_t get_byte(const QData& port, std::size_t i) { return static_cast<std::uint8_t>(port >> (8 * i)); }
template <typename P>
std::uint64_t get_u64(const P& port) {
  return static_cast<std::uint64_t>(port);
}

std::uint64_t mask_of(std::size_t n) { return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }
std::size_t pad4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

// ---- Descriptors from NetRef's walk ------------------------------------------------------------------
enum Kind : std::uint8_t { kWhole = 0, kSegment = 1, kBeyond = 2, kRaw = 3, kEnd = 4 };

struct Desc {
  Kind kind = kWhole;
  std::uint16_t offset = 0, copy_bytes = 0, chunk_length = 0;
  std::uint8_t type = 0, flags = 0;
  std::uint16_t stream = 0, ssn = 0, trimmed_length = 0;
  bool hit = false, malformed = false;
  std::uint8_t assoc_index = 0;
  std::uint16_t chunks = 0, candidates = 0, segments = 0, beyond = 0, length = 0;
};

struct Summary {
  bool hit = false, malformed = false;
  unsigned assoc_index = 0, chunks = 0, candidates = 0, segments = 0, beyond = 0, length = 0, copy_length = 0;
  bool operator==(const Summary& o) const {
    return hit == o.hit && malformed == o.malformed && assoc_index == o.assoc_index && chunks == o.chunks &&
           candidates == o.candidates && segments == o.segments && beyond == o.beyond && length == o.length &&
           copy_length == o.copy_length;
  }
};
std::string str(const Summary& s) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "hit %d idx %u malformed %d chunks %u cand %u seg %u beyond %u len %u copy %u", s.hit,
                s.assoc_index, s.malformed, s.chunks, s.candidates, s.segments, s.beyond, s.length, s.copy_length);
  return buf;
}

struct Patch {
  unsigned offset = 0;
  bool last = false;
  std::size_t packet = 0;  // expected entries: the packet's index in the bench
};

// Everything one packet must produce.
struct Expected {
  Bytes packet;
  std::vector<Desc> descs;
  std::vector<net::Segment> segments;
  Bytes copy;
  std::vector<Patch> patches;
  Summary summary;
};

// The fixed table: entry 1 matches the packets built below (entry 0 never matches).
constexpr std::uint16_t kStreamBase = 5, kStreamCount = 8;
constexpr std::uint16_t kTheirPort = 5001, kMyPort = 5002;
constexpr std::uint32_t kVtag = 0x1234abcd;

std::vector<net::AssocEntry> table() {
  net::AssocEntry e;
  e.valid = true;
  e.my_sctp_port = kMyPort;
  e.their_sctp_port = kTheirPort;
  e.my_vtag = kVtag;
  e.stream_base = kStreamBase;
  e.stream_count = kStreamCount;
  net::AssocEntry other = e;
  other.my_vtag = 0x55;
  return {other, e};
}
// DDP streams kStreamBase .. +7 live except SCTP stream 6.
std::vector<bool> live() {
  std::vector<bool> l(64, false);
  for (unsigned s = 0; s < kStreamCount; ++s) l[kStreamBase + s] = s != 6;
  return l;
}

Expected expect(const Bytes& p) {
  Expected x;
  x.packet = p;
  const net::Walk w = net::walk(p, net::PacketMeta{}, true, table(), live());
  EXPECT_FALSE(w.too_short);
  Desc hdr;
  hdr.kind = kWhole;
  hdr.offset = 0;
  hdr.copy_bytes = 12;
  x.descs.push_back(hdr);
  std::size_t pos = 12;
  std::vector<std::size_t> seg_pos;
  if (w.assoc) {
    for (const net::ChunkInfo& c : w.chunks) {
      Desc d;
      d.kind = c.kind == net::ChunkKind::kWhole ? kWhole : c.kind == net::ChunkKind::kSegment ? kSegment : kBeyond;
      d.offset = static_cast<std::uint16_t>(c.offset);
      d.copy_bytes = static_cast<std::uint16_t>(c.copy_bytes);
      d.chunk_length = c.length;
      d.type = c.type;
      d.flags = c.flags;
      d.trimmed_length = static_cast<std::uint16_t>(c.trimmed_length);
      if (d.kind != kWhole) {
        d.stream = static_cast<std::uint16_t>(kStreamBase + rnic::wire::load_be16(p.data() + c.offset + 8));
        d.ssn = static_cast<std::uint16_t>(rnic::wire::load_be16(p.data() + c.offset + 16) - 1);
      }
      if (d.kind == kSegment) seg_pos.push_back(pos);
      pos += d.kind == kWhole ? c.copy_bytes : pad4(c.trimmed_length);
      x.descs.push_back(d);
    }
    const std::size_t rest = w.malformed ? w.malformed_offset : w.tail_offset;
    if (rest < p.size()) {
      Desc r;
      r.kind = kRaw;
      r.offset = static_cast<std::uint16_t>(rest);
      x.descs.push_back(r);
    }
  } else if (p.size() > 12) {
    Desc r;
    r.kind = kRaw;
    r.offset = 12;
    x.descs.push_back(r);
  }
  Desc end;
  end.kind = kEnd;
  end.hit = w.assoc.has_value();
  end.assoc_index = static_cast<std::uint8_t>(w.assoc.value_or(0));
  end.malformed = w.malformed;
  end.chunks = static_cast<std::uint16_t>(w.chunks.size());
  end.segments = static_cast<std::uint16_t>(w.segments.size());
  end.beyond = static_cast<std::uint16_t>(w.beyond_limit);
  end.candidates = static_cast<std::uint16_t>(w.segments.size() + w.beyond_limit);
  end.length = static_cast<std::uint16_t>(p.size());
  x.descs.push_back(end);

  x.segments = w.segments;
  x.copy = net::host_copy(p, w, std::vector<net::Fate>(w.segments.size(), net::Fate::kTaken));
  for (std::size_t i = 0; i < seg_pos.size(); ++i) x.patches.push_back({unsigned(seg_pos[i]), i + 1 == seg_pos.size()});
  x.summary = {end.hit,    end.malformed, end.assoc_index,        end.chunks, end.candidates, end.segments,
               end.beyond, end.length,    unsigned(x.copy.size())};
  return x;
}

// ---- Packet builders (RFC 9260 3.1 common header, 3.2 chunks, 3.3.1 DATA; RFC 5043 5.2) --------------
Bytes common_header(std::uint32_t vtag = kVtag) {
  Bytes p(12, 0);
  p[0] = kTheirPort >> 8;
  p[1] = kTheirPort & 0xff;
  p[2] = kMyPort >> 8;
  p[3] = kMyPort & 0xff;
  for (std::size_t i = 0; i < 4; ++i) p[4 + i] = static_cast<std::uint8_t>(vtag >> (24 - 8 * i));
  p[8] = 0xc1;  // checksum: not looked at here
  p[9] = 0xc2;
  return p;
}
// A DATA chunk carrying DDP segment `seg` (PPID 16 unless told) on SCTP stream `stream`, DDP-SSN `ssn`.
Bytes data_chunk(std::uint16_t stream, std::uint16_t ssn, const Bytes& seg, std::uint8_t flags = 0x07,
                 std::uint32_t ppid = 16) {
  Bytes c(18 + seg.size(), 0);
  c[0] = 0;
  c[1] = flags;
  store_be16(c.data() + 2, static_cast<std::uint16_t>(18 + seg.size()));
  c[4] = 0x11;  // TSN
  c[7] = 0x22;
  store_be16(c.data() + 8, stream);
  store_be16(c.data() + 10, 0x3344);  // SCTP SSN
  store_be32(c.data() + 12, ppid);
  store_be16(c.data() + 16, ssn);
  std::copy(seg.begin(), seg.end(), c.begin() + 18);
  return c;
}
Bytes other_chunk(std::uint8_t type, std::size_t length, std::mt19937_64& rng) {
  Bytes c(length);
  for (auto& b : c) b = static_cast<std::uint8_t>(rng());
  c[0] = type;
  store_be16(c.data() + 2, static_cast<std::uint16_t>(length));
  return c;
}
// Appends chunk `c` and its padding to 4 (bytes `pad_byte`, RFC 9260 3.2 says zero; a receiver ignores them).
void append(Bytes& p, const Bytes& c, std::uint8_t pad_byte = 0) {
  p.insert(p.end(), c.begin(), c.end());
  while (p.size() % 4 != 0) p.push_back(pad_byte);
}
Bytes segment_bytes(std::size_t n, bool tagged, std::mt19937_64& rng) {
  Bytes s(n);
  for (auto& b : s) b = static_cast<std::uint8_t>(rng());
  if (n > 0) s[0] = static_cast<std::uint8_t>(tagged ? (s[0] | 0x80) : (s[0] & 0x7f));
  return s;
}

// A random packet: bundles of candidates, non-candidates (other PPIDs, flags, dead streams), control
// chunks; sometimes malformed, a tail, cut padding, a miss; up to about `max_len` bytes.
Bytes random_packet(std::mt19937_64& rng, std::size_t max_len) {
  const auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  Bytes p = common_header(pick(20) == 0 ? 0x99 : kVtag);
  if (pick(12) == 0) {  // hostile: random bytes after the common header
    for (std::size_t n = pick(pick(2) == 0 ? 64 : max_len); n > 0; --n) p.push_back(static_cast<std::uint8_t>(rng()));
    return p;
  }
  const bool tiny = pick(5) == 0;  // a bundle of small chunks, often past 32 candidates (rule 5)
  const std::size_t target = tiny ? 12 + 1400 + pick(1200) : 12 + pick(pick(4) == 0 ? max_len : 600);
  while (p.size() + 4 <= target) {
    const std::size_t left = target - p.size();
    Bytes c;
    const std::size_t r = tiny ? pick(12) / 2 : pick(10);
    if (r < 5) {
      const std::size_t n = tiny ? 1 + pick(30) : 1 + pick(std::min<std::size_t>(left, pick(3) == 0 ? 9000 : 200));
      std::uint8_t flags = 0x07 | static_cast<std::uint8_t>(pick(2) << 3);
      if (pick(12) == 0) flags = static_cast<std::uint8_t>(pick(8));
      const std::uint32_t ppid = pick(12) == 0 ? 17 : 16;
      c = data_chunk(static_cast<std::uint16_t>(tiny ? pick(6) : pick(10)), static_cast<std::uint16_t>(rng()),
                     segment_bytes(n, pick(2) == 0, rng), flags, ppid);
    } else {
      c = other_chunk(static_cast<std::uint8_t>(pick(256)), 4 + pick(std::min<std::size_t>(left, 80)), rng);
    }
    if (pick(tiny ? 300 : 40) == 0) {  // malformed: a length < 4 or past the end (RFC 9260 3.2)
      store_be16(c.data() + 2, static_cast<std::uint16_t>(pick(2) == 0 ? pick(4) : 0xfff0));
    }
    append(p, c, pick(4) == 0 ? static_cast<std::uint8_t>(rng()) : 0);
  }
  if (pick(3) == 0 && p.size() > 16) p.resize(p.size() - pick(4));  // cut padding / a chunk's end
  if (pick(6) == 0)
    for (std::size_t n = 1 + pick(3); n > 0; --n) p.push_back(static_cast<std::uint8_t>(rng()));  // tail
  return p;
}

// ---- The bench -----------------------------------------------------------------------------------------
struct Knobs {
  unsigned pkt_gap = 0, desc_gap = 0;      // percent of cycles an input holds valid low
  unsigned seg_stall = 0, copy_stall = 0;  // percent of cycles an output's ready is low
  unsigned side_stall = 0;                 // patch and summary
};

class Bench {
 public:
  Bench(Knobs k, std::uint64_t seed) : k_(k), rng_(seed) {
    idle();
    sim_.reset();
  }

  void add(const Bytes& p) {
    Expected x = expect(p);
    const std::size_t beats = (p.size() + kBeat - 1) / kBeat;
    for (std::size_t b = 0; b < beats; ++b) beats_.push_back({packets_in_, b, b + 1 == beats});
    for (const Desc& d : x.descs) descs_.push_back(d);
    for (const net::Segment& s : x.segments) segs_.push_back(s);
    for (Patch pa : x.patches) {
      pa.packet = packets_in_;
      patches_.push_back(pa);
    }
    copies_.push_back(x.copy);
    sums_.push_back(x.summary);
    packets_.push_back(std::move(x));
    ++packets_in_;
  }

  // Runs until every expected output came (or `limit` cycles); returns the cycles taken.
  std::uint64_t run(std::uint64_t limit = 2000000) {
    const std::uint64_t start = sim_.cycle();
    while (!done() && sim_.cycle() - start < limit) cycle();
    EXPECT_TRUE(done()) << "stuck after " << sim_.cycle() - start << " cycles: beats left " << beats_.size()
                        << ", descs left " << descs_.size() << ", segments left " << segs_.size() << ", copies left "
                        << copies_.size() << ", patches left " << patches_.size() << ", summaries left "
                        << sums_.size();
    const std::uint64_t took = sim_.cycle() - start;
    for (int i = 0; i < 20; ++i) cycle();  // nothing more may come
    // The copy holds the DATA chunk's type byte (RFC 9260 3.3.1: 0) at every patch offset.
    for (const Patch& pa : got_patches_) {
      if (pa.packet >= got_copies_.size() || pa.offset >= got_copies_[pa.packet].size())
        fail("patch offset " + std::to_string(pa.offset) + " outside its packet's copy");
      else if (got_copies_[pa.packet][pa.offset] != net::kChunkTypeData)
        fail("the copy's byte at patch offset " + std::to_string(pa.offset) + " is not 0x00");
    }
    return took;
  }
  std::uint64_t pkt_stall_cycles() const { return pkt_stalls_; }
  std::uint64_t first_copy_beat_cycle() const { return first_copy_; }
  unsigned errors() const { return errors_; }

 private:
  struct BeatRef {
    std::size_t packet, beat;
    bool last;
  };
  bool done() const {
    return beats_.empty() && descs_.empty() && segs_.empty() && copies_.empty() && patches_.empty() && sums_.empty();
  }
  bool chance(unsigned percent) { return percent != 0 && rng_() % 100 < percent; }

  void idle() {
    sim_->s_pkt_tvalid_i = 0;
    sim_->s_desc_valid_i = 0;
    sim_->m_seg_tready_i = 0;
    sim_->m_copy_tready_i = 0;
    sim_->m_patch_ready_i = 0;
    sim_->m_sum_ready_i = 0;
  }

  void drive_beat() {
    if (!pkt_valid_) {
      if (beats_.empty() || chance(k_.pkt_gap)) {
        sim_->s_pkt_tvalid_i = 0;
        return;
      }
      pkt_valid_ = true;
    }
    const BeatRef& r = beats_.front();
    const Bytes& p = packets_[r.packet].packet;
    const std::size_t off = r.beat * kBeat;
    const std::size_t here = std::min(kBeat, p.size() - off);
    std::uint8_t buf[kBeat];
    for (std::size_t i = 0; i < kBeat; ++i) buf[i] = i < here ? p[off + i] : static_cast<std::uint8_t>(0xa5 ^ i);
    put_bytes(sim_->s_pkt_tdata_i, buf, kBeat);
    sim_->s_pkt_tkeep_i = static_cast<std::remove_reference_t<decltype(sim_->s_pkt_tkeep_i)>>(mask_of(here));
    sim_->s_pkt_tlast_i = r.last;
    std::uint8_t user[14] = {};
    user[12] = static_cast<std::uint8_t>(p.size());
    user[13] = static_cast<std::uint8_t>(p.size() >> 8);
    put_bytes(sim_->s_pkt_tuser_i, user, 14);
    sim_->s_pkt_tvalid_i = 1;
  }

  void drive_desc() {
    if (!desc_valid_) {
      if (descs_.empty() || chance(k_.desc_gap)) {
        sim_->s_desc_valid_i = 0;
        return;
      }
      desc_valid_ = true;
    }
    const Desc& d = descs_.front();
    sim_->s_desc_valid_i = 1;
    sim_->s_desc_kind_i = d.kind;
    sim_->s_desc_offset_i = d.offset;
    sim_->s_desc_copy_bytes_i = d.copy_bytes;
    sim_->s_desc_chunk_length_i = d.chunk_length;
    sim_->s_desc_type_i = d.type;
    sim_->s_desc_flags_i = d.flags;
    sim_->s_desc_stream_i = d.stream;
    sim_->s_desc_ssn_i = d.ssn;
    sim_->s_desc_trimmed_length_i = d.trimmed_length;
    sim_->s_desc_last_i = d.kind == kEnd;
    sim_->s_desc_hit_i = d.hit;
    sim_->s_desc_assoc_index_i = d.assoc_index;
    sim_->s_desc_malformed_i = d.malformed;
    sim_->s_desc_chunks_i = d.chunks;
    sim_->s_desc_candidates_i = d.candidates;
    sim_->s_desc_segments_i = d.segments;
    sim_->s_desc_beyond_i = d.beyond;
    sim_->s_desc_length_i = d.length;
  }

  void fail(const std::string& what) {
    if (++errors_ <= 10) ADD_FAILURE() << "cycle " << sim_.cycle() << ": " << what;
  }

  void cycle() {
    drive_beat();
    drive_desc();
    sim_->m_seg_tready_i = !chance(k_.seg_stall);
    sim_->m_copy_tready_i = !chance(k_.copy_stall);
    sim_->m_patch_ready_i = !chance(k_.side_stall);
    sim_->m_sum_ready_i = !chance(k_.side_stall);
    sim_.eval();

    if (sim_->s_pkt_tvalid_i && !sim_->s_pkt_tready_o) ++pkt_stalls_;
    if (sim_->s_pkt_tvalid_i && sim_->s_pkt_tready_o) {
      beats_.pop_front();
      pkt_valid_ = false;
    }
    if (sim_->s_desc_valid_i && sim_->s_desc_ready_o) {
      descs_.pop_front();
      desc_valid_ = false;
    }
    if (sim_->m_seg_tvalid_o && sim_->m_seg_tready_i) on_seg();
    if (sim_->m_copy_tvalid_o && sim_->m_copy_tready_i) on_copy();
    if (sim_->m_patch_valid_o && sim_->m_patch_ready_i) on_patch();
    if (sim_->m_sum_valid_o && sim_->m_sum_ready_i) on_sum();
    sim_.tick();
  }

  static std::size_t keep_count(std::uint64_t keep, bool last, bool& ok) {
    std::size_t n = 0;
    while (n < kBeat && ((keep >> n) & 1U) != 0) ++n;
    ok = n > 0 && (keep & ~mask_of(n)) == 0 && (last || n == kBeat);
    return n;
  }

  void on_seg() {
    bool ok = false;
    const bool last = sim_->m_seg_tlast_o != 0;
    const std::size_t n = keep_count(get_u64(sim_->m_seg_tkeep_o), last, ok);
    if (!ok) fail("m_seg tkeep not contiguous or partial before tlast");
    const std::uint64_t user = sim_->m_seg_tuser_o;
    if (seg_bytes_.empty()) seg_user_ = user;
    if (user != seg_user_) fail("m_seg tuser changed within a segment");
    for (std::size_t i = 0; i < n; ++i) seg_bytes_.push_back(get_byte(sim_->m_seg_tdata_o, i));
    if (!last) return;
    if (segs_.empty()) {
      fail("a segment nobody expected");
    } else {
      const net::Segment& s = segs_.front();
      if (((user >> 32) & 1U) != 1) fail("tuser.net is not 1");
      if (((user >> 16) & 0xffffU) != s.ssn)
        fail("segment ssn " + std::to_string((user >> 16) & 0xffffU) + ", expected " + std::to_string(s.ssn));
      if ((user & 0xffffU) != s.stream)
        fail("segment stream " + std::to_string(user & 0xffffU) + ", expected " + std::to_string(s.stream));
      if (seg_bytes_ != s.bytes)
        fail("segment bytes differ (" + std::to_string(seg_bytes_.size()) + " bytes, expected " +
             std::to_string(s.bytes.size()) + ")");
      segs_.pop_front();
    }
    seg_bytes_.clear();
  }

  void on_copy() {
    bool ok = false;
    const bool last = sim_->m_copy_tlast_o != 0;
    const std::size_t n = keep_count(get_u64(sim_->m_copy_tkeep_o), last, ok);
    if (!ok) fail("m_copy tkeep not contiguous or partial before tlast");
    if (first_copy_ == 0) first_copy_ = sim_.cycle();
    for (std::size_t i = 0; i < n; ++i) copy_bytes_.push_back(get_byte(sim_->m_copy_tdata_o, i));
    if (!last) return;
    ++copies_done_;
    if (copies_.empty()) {
      fail("a host copy nobody expected");
    } else {
      const Bytes& want = copies_.front();
      if (copy_bytes_ != want) {
        std::size_t at = 0;
        while (at < copy_bytes_.size() && at < want.size() && copy_bytes_[at] == want[at]) ++at;
        fail("host copy " + std::to_string(copies_done_ - 1) + " differs at byte " + std::to_string(at) + " (" +
             std::to_string(copy_bytes_.size()) + " bytes, expected " + std::to_string(want.size()) + ")");
      }
      copies_.pop_front();
    }
    got_copies_.push_back(copy_bytes_);
    copy_bytes_.clear();
  }

  void on_patch() {
    const Patch got{sim_->m_patch_copy_offset_o, sim_->m_patch_last_o != 0};
    if (patches_.empty()) {
      fail("a patch entry nobody expected");
      return;
    }
    const Patch want = patches_.front();
    patches_.pop_front();
    if (got.offset != want.offset || got.last != want.last)
      fail("patch offset " + std::to_string(got.offset) + " last " + std::to_string(got.last) + ", expected " +
           std::to_string(want.offset) + " last " + std::to_string(want.last));
    got_patches_.push_back({got.offset, got.last, want.packet});
  }

  void on_sum() {
    Summary s;
    s.hit = sim_->m_sum_hit_o != 0;
    s.assoc_index = sim_->m_sum_assoc_index_o;
    s.malformed = sim_->m_sum_malformed_o != 0;
    s.chunks = sim_->m_sum_chunks_o;
    s.candidates = sim_->m_sum_candidates_o;
    s.segments = sim_->m_sum_segments_o;
    s.beyond = sim_->m_sum_beyond_o;
    s.length = sim_->m_sum_length_o;
    s.copy_length = sim_->m_sum_copy_length_o;
    if (sums_.empty()) {
      fail("a summary nobody expected");
      return;
    }
    if (sums_done_ >= copies_done_) fail("a summary before its copy's last beat");
    ++sums_done_;
    if (!(s == sums_.front())) fail("summary " + str(s) + ", expected " + str(sums_.front()));
    sums_.pop_front();
  }

  Knobs k_;
  std::mt19937_64 rng_;
  rnic::tb::StageSim<Model> sim_;
  std::vector<Expected> packets_;
  std::size_t packets_in_ = 0;
  std::deque<BeatRef> beats_;
  std::deque<Desc> descs_;
  std::deque<net::Segment> segs_;
  std::deque<Bytes> copies_;
  std::deque<Patch> patches_;
  std::deque<Summary> sums_;
  bool pkt_valid_ = false, desc_valid_ = false;
  Bytes seg_bytes_, copy_bytes_;
  std::vector<Bytes> got_copies_;
  std::vector<Patch> got_patches_;
  std::uint64_t seg_user_ = 0;
  std::uint64_t pkt_stalls_ = 0, first_copy_ = 0;
  std::size_t copies_done_ = 0, sums_done_ = 0;
  unsigned errors_ = 0;
};

Knobs busy() { return {20, 20, 25, 25, 25}; }

// Runs `packets` through a bench twice: full rate, and with random gaps and stalls.
void check(const std::vector<Bytes>& packets, std::uint64_t seed = 1) {
  for (const Knobs k : {Knobs{}, busy()}) {
    Bench b(k, seed);
    for (const Bytes& p : packets) b.add(p);
    b.run();
    EXPECT_EQ(b.errors(), 0U);
  }
}

std::mt19937_64& fixed_rng() {
  static std::mt19937_64 rng(7);
  return rng;
}

// RFC 5043 5.2: the smallest DDP segment, one byte, tagged and untagged (trimmed to 16 + 2 + 1 bytes).
TEST(SPLIT_SUITE, OneByteSegmentRfc5043_5_2) {
  std::vector<Bytes> v;
  for (const bool tagged : {true, false}) {
    Bytes p = common_header();
    append(p, data_chunk(1, 7, segment_bytes(1, tagged, fixed_rng())));
    v.push_back(p);
  }
  check(v);
}

// A 9000-byte segment (jumbo MTU), tagged and untagged: its bytes realigned over many beats, the copy
// trimmed to 14 / 18 bytes of DDP header (rule 6).
TEST(SPLIT_SUITE, Segment9000Rfc5043_5_2) {
  std::vector<Bytes> v;
  for (const bool tagged : {true, false}) {
    Bytes p = common_header();
    append(p, data_chunk(2, 1, segment_bytes(9000, tagged, fixed_rng())));
    v.push_back(p);
  }
  check(v);
}

// Every segment length 1..200 and the header sizes around the trim, one per packet, at every
// alignment the beats give.
TEST(SPLIT_SUITE, SegmentLengthsRfc5043_5_2) {
  std::vector<Bytes> v;
  for (std::size_t n = 1; n <= 200; ++n) {
    Bytes p = common_header();
    if (n % 3 == 0) append(p, other_chunk(0x80, 4 + n % 9, fixed_rng()));
    append(p, data_chunk(static_cast<std::uint16_t>(n % 6), static_cast<std::uint16_t>(n),
                         segment_bytes(n, n % 2 == 0, fixed_rng())));
    v.push_back(p);
  }
  check(v);
}

// RFC 9260 3.2 bundling: 32 tiny segments in one packet, then 40 (the 8 past the 32nd are BEYOND:
// PAD chunks of RFC 4820 in the copy, rule 5/8), mixed with control chunks.
TEST(SPLIT_SUITE, BundlesAndBeyondRfc9260_3_2) {
  std::vector<Bytes> v;
  for (const std::size_t count : {std::size_t{32}, std::size_t{40}}) {
    Bytes p = common_header();
    for (std::size_t i = 0; i < count; ++i) {
      append(p, data_chunk(static_cast<std::uint16_t>(i % 5), static_cast<std::uint16_t>(i + 1),
                           segment_bytes(1 + i % 23, i % 3 == 0, fixed_rng())));
      if (i % 7 == 3) append(p, other_chunk(3, 16, fixed_rng()));  // a SACK between
    }
    v.push_back(p);
  }
  check(v);
}

// RFC 9260 3.2: a chunk length below 4 or past the packet end stops the walk; the rest goes as received.
TEST(SPLIT_SUITE, MalformedRestRfc9260_3_2) {
  std::vector<Bytes> v;
  for (const std::size_t bad_len : {std::size_t{0}, std::size_t{3}, std::size_t{2000}}) {
    Bytes p = common_header();
    append(p, data_chunk(1, 3, segment_bytes(100, true, fixed_rng())));
    Bytes c = other_chunk(1, 40, fixed_rng());
    store_be16(c.data() + 2, static_cast<std::uint16_t>(bad_len));
    append(p, c);
    for (int i = 0; i < 70; ++i) p.push_back(static_cast<std::uint8_t>(i));
    v.push_back(p);
  }
  check(v);
}

// 1..3 bytes after the last chunk go as received (rule 7); a last chunk whose padding is cut.
TEST(SPLIT_SUITE, TailBytesRfc9260_3_2) {
  std::vector<Bytes> v;
  for (std::size_t tail = 1; tail <= 3; ++tail) {
    Bytes p = common_header();
    append(p, data_chunk(1, 3, segment_bytes(61, false, fixed_rng())));
    for (std::size_t i = 0; i < tail; ++i) p.push_back(0xee);
    v.push_back(p);
    Bytes q = common_header();
    append(q, data_chunk(1, 3, segment_bytes(57 + tail, true, fixed_rng())));
    q.resize(q.size() - (4 - tail) % 4);  // padding cut at the packet end
    v.push_back(q);
  }
  check(v);
}

// A packet for no association (rule 3): header and the rest as received, nothing to the pipeline.
TEST(SPLIT_SUITE, MissGoesWhole) {
  std::vector<Bytes> v;
  for (const std::size_t n : {std::size_t{0}, std::size_t{4}, std::size_t{100}, std::size_t{1500}}) {
    Bytes p = common_header(0x77777777);
    for (std::size_t i = 0; i < n; ++i) p.push_back(static_cast<std::uint8_t>(i * 7));
    v.push_back(p);
  }
  check(v);
}

// Packets of one beat (at 512 bits) back to back while one output stalls and the other does not: the
// engine ahead loads the next packet's first item early and must not read the previous packet's beat.
TEST(SPLIT_SUITE, OneBeatPacketsOneOutputStalled) {
  std::vector<Bytes> v;
  for (std::size_t i = 0; i < 60; ++i) {
    Bytes p = common_header();
    p[10] = static_cast<std::uint8_t>(i);  // the checksum field: a different header per packet
    append(p, data_chunk(static_cast<std::uint16_t>(i % 5), static_cast<std::uint16_t>(i),
                         segment_bytes(1 + i % 30, i % 2 == 0, fixed_rng())));
    v.push_back(p);
  }
  for (const Knobs k : {Knobs{0, 0, 90, 0, 0}, Knobs{0, 0, 0, 90, 0}, Knobs{0, 0, 0, 0, 90}}) {
    Bench b(k, 3);
    for (const Bytes& p : v) b.add(p);
    b.run();
    EXPECT_EQ(b.errors(), 0U);
  }
}

// Random packets, hostile ones among them, back to back at full rate and with random gaps and stalls.
TEST(SPLIT_SUITE, RandomPackets) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  struct {
    std::size_t packets = 0, segments = 0, beyond = 0, malformed = 0, misses = 0, tails = 0;
  } seen;
  for (const Knobs k : {Knobs{}, busy(), Knobs{50, 5, 60, 5, 50}, Knobs{5, 60, 5, 60, 10}}) {
    Bench b(k, rng());
    for (int i = 0; i < 250; ++i) {
      const Bytes p = random_packet(rng, 9200);
      const net::Walk w = net::walk(p, net::PacketMeta{}, true, table(), live());
      ++seen.packets;
      seen.segments += w.segments.size();
      seen.beyond += w.beyond_limit;
      seen.malformed += w.malformed;
      seen.misses += !w.assoc;
      seen.tails += w.assoc && !w.malformed && w.tail_offset < p.size();
      b.add(p);
    }
    b.run();
    EXPECT_EQ(b.errors(), 0U) << "seed " << seed;
  }
  std::printf("[  COVER   ] %zu packets: %zu segments, %zu beyond the 32nd, %zu malformed, %zu misses, %zu tails\n",
              seen.packets, seen.segments, seen.beyond, seen.malformed, seen.misses, seen.tails);
  // The generator reaches every case (else this test would prove less than it says).
  EXPECT_GT(seen.segments, 100U);
  EXPECT_GT(seen.beyond, 0U);
  EXPECT_GT(seen.malformed, 5U);
  EXPECT_GT(seen.misses, 5U);
  EXPECT_GT(seen.tails, 5U);
}

// Cycles per packet with every valid and ready high (the front-end figure): one DATA chunk of
// 100, 1500 and 9000 bytes of segment, and a bundle of 16 tiny chunks. Long packets go at one beat per
// cycle (bounded here: beats + 4 per packet).
TEST(SPLIT_SUITE, Throughput) {
  struct Case {
    const char* name;
    Bytes p;
  };
  std::vector<Case> cases;
  for (const std::size_t n : {std::size_t{100}, std::size_t{1500}, std::size_t{9000}}) {
    Bytes p = common_header();
    append(p, data_chunk(1, 1, segment_bytes(n, true, fixed_rng())));
    cases.push_back({n == 100 ? "DATA 100" : n == 1500 ? "DATA 1500" : "DATA 9000", p});
  }
  Bytes bundle = common_header();
  for (int i = 0; i < 16; ++i)
    append(bundle, data_chunk(1, static_cast<std::uint16_t>(i + 1), segment_bytes(40, true, fixed_rng())));
  cases.push_back({"bundle 16 x 40", bundle});
  constexpr int kPackets = 40;
  for (const Case& c : cases) {
    Bench b(Knobs{}, 1);
    for (int i = 0; i < kPackets; ++i) b.add(c.p);
    const std::uint64_t cycles = b.run();
    const double beats = double((c.p.size() + kBeat - 1) / kBeat);
    const double per = double(cycles) / kPackets;
    std::printf("[  FIGURE  ] DataWidth %d %-15s %5zu bytes %4.0f beats: %7.2f cycles/packet (%.2f bytes/cycle)\n",
                RNIC_SPLIT_DW, c.name, c.p.size(), beats, per, double(c.p.size()) / per);
    EXPECT_EQ(b.errors(), 0U);
    if (c.p.size() > 1000) {
      EXPECT_LE(per, beats + 4) << c.name;
    }
  }
}

}  // namespace
