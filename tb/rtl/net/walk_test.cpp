// SPDX-License-Identifier: Apache-2.0
// rnic_net_walk (issue 14, docs/network.md) at one DataWidth (RNIC_WALK_DW): the SCTP chunk walker's
// descriptor items, item by item, against the reference model's walk() (tb/net NetRef rules 2..6, the
// same association table entry and live bits), with random valid gaps on both inputs and random
// ready gaps on the output.
//   directed: a bundle of DATA + SACK + HEARTBEAT (RFC 9260 3.2 bundling); each of rule 5's conditions
//     failing alone (RFC 9260 3.3.1 type and U/B/E flags, RFC 5043 5.2 PPID 16, the stream table and
//     live bits); a chunk header straddling a beat boundary; chunk length < 4, past the end, 0xFFFF
//     (RFC 9260 3.2); padding past the end; a tail of 1..3 bytes; 40 candidates (32 SEGMENT + 8
//     BEYOND); a miss; T = 0 / T = 1 trimmed lengths (RFC 5041 4.2, 4.3); a segment of 1 byte;
//   random: well-formed bundles of random chunks, DATA with random flags, PPID, stream and length,
//     fully random bytes (seeded, RNIC_TEST_SEED replays);
//   throughput: cycles per packet for one DATA chunk of 100, 1500, 9000 bytes and for bundles of
//     minimal chunks, printed, and bounded.
// Waveform with RNIC_FST=<file>.
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
#include RNIC_WALK_HDR
#define WALK_SUITE RNIC_CAT(NetWalk, RNIC_WALK_NAME)

namespace {

namespace net = rnic::tb::net;
using Model = RNIC_WALK_CLASS;
using Bytes = std::vector<std::uint8_t>;
using rnic::wire::store_be16;
using rnic::wire::store_be32;

constexpr std::size_t kBeatBytes = RNIC_WALK_DW / 8;
constexpr std::size_t kNumStreams = 256;  // the module's default NumStreams
constexpr std::size_t kMaxSegments = 32;  // and MaxSegments

enum Kind : unsigned { kWhole = 0, kSegment = 1, kBeyond = 2, kRaw = 3, kEnd = 4 };

// One descriptor item, every field of the interface (/tmp/fe_interfaces.md section 3).
struct Item {
  unsigned kind = 0, offset = 0, copy_bytes = 0, chunk_length = 0, type = 0, flags = 0, stream = 0, ssn = 0,
           trimmed_length = 0, last = 0, hit = 0, assoc_index = 0, malformed = 0, chunks = 0, candidates = 0,
           segments = 0, beyond = 0, length = 0;
  bool operator==(const Item& o) const {
    return kind == o.kind && offset == o.offset && copy_bytes == o.copy_bytes && chunk_length == o.chunk_length &&
           type == o.type && flags == o.flags && stream == o.stream && ssn == o.ssn &&
           trimmed_length == o.trimmed_length && last == o.last && hit == o.hit && assoc_index == o.assoc_index &&
           malformed == o.malformed && chunks == o.chunks && candidates == o.candidates && segments == o.segments &&
           beyond == o.beyond && length == o.length;
  }
  std::string str() const {
    static const char* const names[] = {"WHOLE", "SEGMENT", "BEYOND", "RAW", "END", "?5", "?6", "?7"};
    char b[320];
    std::snprintf(b, sizeof b,
                  "%s off %u copy %u len %u type 0x%02x flags 0x%02x stream %u ssn %u trim %u last %u | hit %u idx %u "
                  "malformed %u chunks %u cand %u seg %u beyond %u length %u",
                  names[kind & 7U], offset, copy_bytes, chunk_length, type, flags, stream, ssn, trimmed_length, last,
                  hit, assoc_index, malformed, chunks, candidates, segments, beyond, length);
    return b;
  }
};

// The test's association table: entry 1 is the one packets hit (entry 0 never matches: other ports).
struct Tables {
  std::vector<net::AssocEntry> table;
  std::vector<bool> live;
  net::PacketMeta meta;
};

Tables default_tables(std::uint16_t base = 10, std::uint16_t count = 8) {
  Tables t;
  t.meta = {0x0A000001U, 0x0A000002U, 9899, 9899};
  net::AssocEntry e;
  e.valid = true;
  e.my_ip = t.meta.my_ip;
  e.their_ip = t.meta.their_ip;
  e.my_udp_port = 9899;
  e.their_udp_port = 9899;
  e.my_sctp_port = 5002;
  e.their_sctp_port = 5001;
  e.my_vtag = 0xC0FFEE11U;
  e.stream_base = base;
  e.stream_count = count;
  net::AssocEntry other = e;
  other.my_sctp_port = 7;
  t.table = {other, e};
  t.live.assign(kNumStreams, true);
  return t;
}

// The common header (RFC 9260 3.1) of a packet to entry 1 (hit) or to nobody (miss).
Bytes common_header(bool hit) {
  Bytes b(12, 0);
  store_be16(b.data(), 5001);
  store_be16(b.data() + 2, hit ? 5002 : 5003);
  store_be32(b.data() + 4, 0xC0FFEE11U);
  store_be32(b.data() + 8, 0x12345678U);  // the checksum: judged before the walker
  return b;
}

// A chunk (RFC 9260 3.2): type, flags, length = 4 + value size, the value, zero padding to 4.
Bytes chunk(std::uint8_t type, std::uint8_t flags, const Bytes& value, bool pad = true) {
  Bytes b(4 + value.size(), 0);
  b[0] = type;
  b[1] = flags;
  store_be16(b.data() + 2, static_cast<std::uint16_t>(4 + value.size()));
  std::copy(value.begin(), value.end(), b.begin() + 4);
  while (pad && b.size() % 4 != 0) b.push_back(0);
  return b;
}

// A DATA chunk (RFC 9260 3.3.1) carrying a DDP segment chunk (RFC 5043 5.2: PPID 16, DDP-SSN, then
// the segment of seg_bytes bytes, its first byte's bit 7 = T).
Bytes data_chunk(std::uint8_t flags, std::uint16_t stream, std::uint32_t ppid, std::uint16_t ddp_ssn,
                 std::size_t seg_bytes, bool tagged, std::uint32_t tsn = 1, bool pad = true) {
  Bytes v(12 + 2 + seg_bytes, 0);
  store_be32(v.data(), tsn);
  store_be16(v.data() + 4, stream);
  store_be16(v.data() + 6, 0);
  store_be32(v.data() + 8, ppid);
  store_be16(v.data() + 12, ddp_ssn);
  for (std::size_t i = 0; i < seg_bytes; ++i) v[14 + i] = static_cast<std::uint8_t>(0x41 + i);
  if (seg_bytes > 0) v[14] = tagged ? 0x81 : 0x01;
  return chunk(0x00, flags, v, pad);
}
Bytes candidate(std::uint16_t stream, std::uint16_t ddp_ssn, std::size_t seg_bytes, bool tagged = true) {
  return data_chunk(0x07, stream, 16, ddp_ssn, seg_bytes, tagged);
}

Bytes packet(bool hit, const std::vector<Bytes>& chunks) {
  Bytes p = common_header(hit);
  for (const auto& c : chunks) p.insert(p.end(), c.begin(), c.end());
  return p;
}

// The items rnic_net_walk must emit for packet p: NetRef's walk() in the interface's terms.
std::vector<Item> expected_items(const Bytes& p, const Tables& t, net::Walk* walk_out = nullptr) {
  const net::Walk w = net::walk(rnic::wire::ConstBytes(p), t.meta, true, t.table, t.live);
  if (walk_out != nullptr) *walk_out = w;
  std::vector<Item> out;
  Item h;
  h.copy_bytes = 12;
  out.push_back(h);
  const auto len = static_cast<unsigned>(p.size());
  std::size_t segs = 0;
  if (w.assoc) {
    const net::AssocEntry& e = t.table[*w.assoc];
    for (const net::ChunkInfo& c : w.chunks) {
      Item i;
      i.kind = c.kind == net::ChunkKind::kWhole ? kWhole : c.kind == net::ChunkKind::kSegment ? kSegment : kBeyond;
      i.offset = static_cast<unsigned>(c.offset);
      i.copy_bytes = static_cast<unsigned>(c.copy_bytes);
      i.chunk_length = c.length;
      i.type = c.type;
      i.flags = c.flags;
      if (c.kind != net::ChunkKind::kWhole) {
        i.stream = (e.stream_base + rnic::wire::load_be16(p.data() + c.offset + 8)) & 0xFFFFU;
        i.ssn = (rnic::wire::load_be16(p.data() + c.offset + 16) + 0xFFFFU) & 0xFFFFU;
        i.trimmed_length = static_cast<unsigned>(c.trimmed_length);
        if (c.kind == net::ChunkKind::kSegment) {
          const net::Segment& s = w.segments.at(c.segment);
          EXPECT_EQ(s.stream, i.stream) << "the reference's own segment";
          EXPECT_EQ(s.ssn, i.ssn) << "the reference's own segment";
          ++segs;
        }
      }
      out.push_back(i);
    }
  }
  const std::size_t rest = w.malformed ? w.malformed_offset : w.tail_offset;
  if (!w.assoc && len > 12) {
    Item r;
    r.kind = kRaw;
    r.offset = 12;
    r.copy_bytes = len - 12;
    out.push_back(r);
  } else if (w.assoc && rest < p.size()) {
    Item r;
    r.kind = kRaw;
    r.offset = static_cast<unsigned>(rest);
    r.copy_bytes = static_cast<unsigned>(p.size() - rest);
    out.push_back(r);
  }
  Item end;
  end.kind = kEnd;
  end.last = 1;
  end.hit = w.assoc ? 1 : 0;
  end.assoc_index = w.assoc ? static_cast<unsigned>(*w.assoc) : 0;
  end.malformed = w.malformed ? 1 : 0;
  end.chunks = static_cast<unsigned>(w.chunks.size());
  end.segments = static_cast<unsigned>(w.segments.size());
  end.beyond = static_cast<unsigned>(w.beyond_limit);
  end.candidates = end.segments + end.beyond;
  end.length = len;
  EXPECT_EQ(segs, w.segments.size());
  out.push_back(end);
  return out;
}

// Port helpers: wide ports are VlWide<N>, narrow ones integers.
template <std::size_t N>
void put_bytes(VlWide<N>& port, const std::uint8_t* b) {
  for (std::size_t w = 0; w < N; ++w) port[w] = rnic::wire::load_le32(b + 4 * w);
}
inline void put_bytes(QData& port, const std::uint8_t* b) { port = rnic::wire::load_le(b, 8); }
template <typename P>
void put_mask(P& port, std::uint64_t v) {
  port = static_cast<std::remove_reference_t<P>>(v);
}
std::uint64_t mask_of(std::size_t n) { return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

// Gaps: mostly none, some short, a few long (used for input valid and output ready).
std::function<unsigned()> random_gaps(std::mt19937_64& rng, unsigned percent_busy) {
  return [&rng, percent_busy] {
    const unsigned r = static_cast<unsigned>(rng() % 100);
    if (r < percent_busy) return 0U;
    if (r < 95) return 1U + static_cast<unsigned>(rng() % 3);
    return 4U + static_cast<unsigned>(rng() % 13);
  };
}
std::function<unsigned()> no_gaps() {
  return [] { return 0U; };
}

// Drives packets and lookup results into the walker and checks every item it emits.
class Bench {
 public:
  explicit Bench(const Tables& t, std::uint64_t noise_seed = 1) : t_(t), noise_(noise_seed) {
    set_live(t.live);
    idle_inputs();
    sim_->m_desc_ready_i = 1;
    sim_.reset();
  }
  ~Bench() { EXPECT_EQ(errors_, 0U) << "item mismatches (first 10 reported above)"; }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  void set_live(const std::vector<bool>& live) {
    for (std::size_t w = 0; w < kNumStreams / 32; ++w) {
      std::uint32_t v = 0;
      for (std::size_t i = 0; i < 32; ++i)
        if (live[32 * w + i]) v |= 1U << i;
      sim_->live_i[w] = v;
    }
  }
  void gaps(std::function<unsigned()> pkt, std::function<unsigned()> assoc, std::function<unsigned()> ready) {
    pkt_gap_ = std::move(pkt);
    assoc_gap_ = std::move(assoc);
    ready_gap_ = std::move(ready);
  }

  // Queues packet p (its lookup result and expected items from the reference).
  void send(const Bytes& p) {
    net::Walk w;
    const std::vector<Item> items = expected_items(p, t_, &w);
    const std::size_t index = packets_++;
    for (const Item& i : items) expect_.push_back({i, index});
    Assoc a;
    if (w.assoc) {
      a.hit = true;
      a.index = static_cast<unsigned>(*w.assoc);
      a.base = t_.table[*w.assoc].stream_base;
      a.count = t_.table[*w.assoc].stream_count;
    }
    assoc_q_.push_back(a);
    const std::size_t beats = (p.size() + kBeatBytes - 1) / kBeatBytes;
    for (std::size_t b = 0; b < beats; ++b) {
      Beat beat;
      const std::size_t off = b * kBeatBytes;
      const std::size_t here = std::min(kBeatBytes, p.size() - off);
      beat.data.assign(kBeatBytes, 0);
      for (std::size_t i = 0; i < kBeatBytes; ++i)
        beat.data[i] = i < here ? p[off + i] : static_cast<std::uint8_t>(noise_());  // past tkeep: noise
      beat.keep = mask_of(here);
      beat.last = b + 1 == beats;
      beat.length = static_cast<std::uint16_t>(p.size());
      beats_q_.push_back(beat);
    }
  }

  // Runs until every expected item came; fails if that takes more than `limit` cycles.
  void run(std::uint64_t limit = 200000) {
    const std::uint64_t start = sim_.cycle();
    while (!expect_.empty() || !beats_q_.empty() || !assoc_q_.empty()) {
      if (sim_.cycle() - start > limit) {
        fail("stalled: " + std::to_string(expect_.size()) + " items, " + std::to_string(beats_q_.size()) + " beats, " +
             std::to_string(assoc_q_.size()) + " lookups left after " + std::to_string(limit) + " cycles");
        expect_.clear();
        return;
      }
      cycle();
    }
    for (int i = 0; i < 8; ++i) cycle();  // nothing more may come
  }
  // Runs `n` cycles whatever is left (items that come are checked in order).
  void run_cycles(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) cycle();
  }
  // rst_ni low for `cycles` edges, inputs offering noise as valid; everything queued is forgotten.
  void reset_now(int cycles) {
    sim_->rst_ni = 0;
    for (int i = 0; i < cycles; ++i) {
      Bytes n(kBeatBytes);
      for (auto& b : n) b = static_cast<std::uint8_t>(noise_());
      put_bytes(sim_->s_pkt_tdata_i, n.data());
      sim_->s_pkt_tvalid_i = 1;
      sim_->s_assoc_valid_i = 1;
      sim_->m_desc_ready_i = static_cast<std::uint8_t>(noise_() & 1U);
      sim_.tick();
    }
    sim_->rst_ni = 1;
    beats_q_.clear();
    assoc_q_.clear();
    expect_.clear();
    pkt_on_ = assoc_on_ = false;
    pkt_wait_ = assoc_wait_ = ready_wait_ = 0;
    idle_inputs();
    sim_->m_desc_ready_i = 1;
  }
  std::uint64_t cycle_now() const { return sim_.cycle(); }
  const std::vector<std::uint64_t>& end_cycles() const { return end_cycles_; }
  const std::vector<Item>& got() const { return got_; }

 private:
  struct Beat {
    Bytes data;
    std::uint64_t keep = 0;
    bool last = false;
    std::uint16_t length = 0;
  };
  struct Assoc {
    bool hit = false;
    unsigned index = 0, base = 0, count = 0;
  };
  struct Expect {
    Item item;
    std::size_t packet;
  };

  void idle_inputs() {
    // Not valid: whatever they hold is ignored.
    Bytes n(kBeatBytes);
    for (auto& b : n) b = static_cast<std::uint8_t>(noise_());
    put_bytes(sim_->s_pkt_tdata_i, n.data());
    put_mask(sim_->s_pkt_tkeep_i, noise_());
    sim_->s_pkt_tlast_i = static_cast<std::uint8_t>(noise_() & 1U);
    sim_->s_pkt_tvalid_i = 0;
    sim_->s_assoc_valid_i = 0;
    sim_->s_assoc_hit_i = static_cast<std::uint8_t>(noise_() & 1U);
    sim_->s_assoc_stream_base_i = static_cast<std::uint16_t>(noise_());
  }
  void fail(const std::string& what) {
    if (++errors_ <= 10) ADD_FAILURE() << "cycle " << sim_.cycle() << ": " << what;
  }
  void cycle() {
    // Inputs of this cycle: valid decided before looking at ready (it never depends on it).
    if (pkt_wait_ == 0 && !pkt_on_ && !beats_q_.empty()) pkt_on_ = true;
    if (pkt_on_) {
      const Beat& b = beats_q_.front();
      put_bytes(sim_->s_pkt_tdata_i, b.data.data());
      put_mask(sim_->s_pkt_tkeep_i, b.keep);
      sim_->s_pkt_tlast_i = b.last;
      sim_->s_pkt_tuser_i[0] = static_cast<std::uint32_t>(noise_());  // meta: not the walker's
      sim_->s_pkt_tuser_i[1] = static_cast<std::uint32_t>(noise_());
      sim_->s_pkt_tuser_i[2] = static_cast<std::uint32_t>(noise_());
      sim_->s_pkt_tuser_i[3] = b.length;
      sim_->s_pkt_tvalid_i = 1;
    }
    if (assoc_wait_ == 0 && !assoc_on_ && !assoc_q_.empty()) assoc_on_ = true;
    if (assoc_on_) {
      const Assoc& a = assoc_q_.front();
      sim_->s_assoc_valid_i = 1;
      sim_->s_assoc_hit_i = a.hit;
      sim_->s_assoc_index_i = static_cast<std::uint8_t>(a.index);
      sim_->s_assoc_stream_base_i = static_cast<std::uint16_t>(a.base);
      sim_->s_assoc_stream_count_i = static_cast<std::uint16_t>(a.count);
    }
    if (ready_wait_ > 0) {
      sim_->m_desc_ready_i = 0;
      --ready_wait_;
    } else {
      sim_->m_desc_ready_i = 1;
      ready_wait_ = ready_gap_();
    }
    sim_.eval();
    const bool pkt_take = pkt_on_ && sim_->s_pkt_tready_o != 0;
    const bool assoc_take = assoc_on_ && sim_->s_assoc_ready_o != 0;
    if (sim_->m_desc_valid_o != 0 && sim_->m_desc_ready_i != 0) check(read_item());
    sim_.tick();
    if (pkt_take) {
      beats_q_.pop_front();
      pkt_on_ = false;
      pkt_wait_ = pkt_gap_();
    } else if (!pkt_on_ && pkt_wait_ > 0) {
      --pkt_wait_;
    }
    if (assoc_take) {
      assoc_q_.pop_front();
      assoc_on_ = false;
      assoc_wait_ = assoc_gap_();
    } else if (!assoc_on_ && assoc_wait_ > 0) {
      --assoc_wait_;
    }
    if (!pkt_on_) {
      sim_->s_pkt_tvalid_i = 0;
      sim_->s_pkt_tlast_i = static_cast<std::uint8_t>(noise_() & 1U);
    }
    if (!assoc_on_) sim_->s_assoc_valid_i = 0;
  }
  Item read_item() {
    Item i;
    i.kind = sim_->m_desc_kind_o;
    i.offset = sim_->m_desc_offset_o;
    i.copy_bytes = sim_->m_desc_copy_bytes_o;
    i.chunk_length = sim_->m_desc_chunk_length_o;
    i.type = sim_->m_desc_type_o;
    i.flags = sim_->m_desc_flags_o;
    i.stream = sim_->m_desc_stream_o;
    i.ssn = sim_->m_desc_ssn_o;
    i.trimmed_length = sim_->m_desc_trimmed_length_o;
    i.last = sim_->m_desc_last_o;
    i.hit = sim_->m_desc_hit_o;
    i.assoc_index = sim_->m_desc_assoc_index_o;
    i.malformed = sim_->m_desc_malformed_o;
    i.chunks = sim_->m_desc_chunks_o;
    i.candidates = sim_->m_desc_candidates_o;
    i.segments = sim_->m_desc_segments_o;
    i.beyond = sim_->m_desc_beyond_o;
    i.length = sim_->m_desc_length_o;
    return i;
  }
  void check(const Item& got) {
    got_.push_back(got);
    if (got.kind == kEnd) end_cycles_.push_back(sim_.cycle());
    if (expect_.empty()) {
      fail("an item with none expected: " + got.str());
      return;
    }
    const Expect e = expect_.front();
    expect_.pop_front();
    if (!(got == e.item))
      fail("packet " + std::to_string(e.packet) + ":\n  got  " + got.str() + "\n  want " + e.item.str());
  }

  Tables t_;
  rnic::tb::StageSim<Model> sim_;
  std::mt19937_64 noise_;
  std::deque<Beat> beats_q_;
  std::deque<Assoc> assoc_q_;
  std::deque<Expect> expect_;
  std::function<unsigned()> pkt_gap_ = no_gaps(), assoc_gap_ = no_gaps(), ready_gap_ = no_gaps();
  bool pkt_on_ = false, assoc_on_ = false;
  unsigned pkt_wait_ = 0, assoc_wait_ = 0, ready_wait_ = 0;
  std::size_t packets_ = 0;
  std::uint64_t errors_ = 0;
  std::vector<std::uint64_t> end_cycles_;
  std::vector<Item> got_;
};

// Runs the packets through a bench with no gaps, then again with random gaps; returns the items of
// the first run.
std::vector<Item> run_both(const Tables& t, const std::vector<Bytes>& pkts, std::uint64_t seed = 7) {
  std::vector<Item> first;
  {
    Bench b(t, seed);
    for (const auto& p : pkts) b.send(p);
    b.run();
    first = b.got();
  }
  std::mt19937_64 rng(seed);
  Bench b(t, seed);
  b.gaps(random_gaps(rng, 60), random_gaps(rng, 50), random_gaps(rng, 60));
  for (const auto& p : pkts) b.send(p);
  b.run();
  return first;
}

std::vector<unsigned> kinds(const std::vector<Item>& items) {
  std::vector<unsigned> k;
  for (const auto& i : items) k.push_back(i.kind);
  return k;
}

// ---------------------------------------------------------------------------------------------
// Directed

// RFC 9260 3.2: chunks bundled in one packet, each padded to 4; a DDP segment chunk (RFC 5043 5.2)
// becomes a SEGMENT, SACK (3.3.4) and HEARTBEAT (3.3.5) stay WHOLE.
TEST(WALK_SUITE, BundleDataSackHeartbeat_Rfc9260_3_2) {
  const Tables t = default_tables();
  const Bytes p = packet(true, {candidate(3, 5, 41), chunk(3, 0, Bytes(12, 0xAB)), chunk(4, 0, Bytes(9, 0xCD))});
  const auto items = run_both(t, {p});
  ASSERT_EQ(kinds(items), (std::vector<unsigned>{kWhole, kSegment, kWhole, kWhole, kEnd}))
      << "header, DATA, SACK, HEARTBEAT, no tail";
  EXPECT_EQ(items[1].stream, 13U);
  EXPECT_EQ(items[1].ssn, 4U);
  EXPECT_EQ(items[1].trimmed_length, 32U) << "tagged: 18 + 14";
  EXPECT_EQ(items[3].copy_bytes, 16U) << "HEARTBEAT of 13 bytes, padded";
}

// RFC 9260 3.3.1 / RFC 5043 5.2 (NetRef rule 5): each candidate condition failing alone leaves the chunk
// WHOLE; a passing candidate in the same packet is still a SEGMENT.
TEST(WALK_SUITE, Rule5EachConditionFailingAlone_Rfc5043_5_2) {
  Tables t = default_tables(10, 8);
  t.live[10 + 6] = false;  // SCTP stream 6: not live
  const std::vector<Bytes> failing = {
      [] {
        Bytes c = candidate(1, 1, 20);
        c[0] = 0x01;  // not DATA
        return c;
      }(),
      data_chunk(0x06, 1, 16, 1, 20, true),       // U missing
      data_chunk(0x05, 1, 16, 1, 20, true),       // B missing
      data_chunk(0x03, 1, 16, 1, 20, true),       // E missing
      data_chunk(0x07, 1, 16, 1, 0, true),        // length 18: no segment byte
      data_chunk(0x07, 1, 17, 1, 20, true),       // PPID 17 (Stream Session Control)
      data_chunk(0x07, 1, 0x10010, 1, 20, true),  // PPID 16 in its low half only
      data_chunk(0x07, 8, 16, 1, 20, true),       // stream == stream_count
      data_chunk(0x07, 6, 16, 1, 20, true),       // not live
  };
  std::vector<Bytes> pkts;
  for (const Bytes& f : failing)
    pkts.push_back(packet(true, {f, candidate(2, 9, 30), data_chunk(0x0F, 2, 16, 9, 3, 0)}));
  // stream_base + stream past NumStreams (table base 250, stream 7: DDP stream 257, not live).
  Tables hi = default_tables(250, 16);
  const auto items = run_both(t, pkts);
  ASSERT_EQ(items.size(), pkts.size() * 5);
  for (std::size_t i = 0; i < pkts.size(); ++i) {
    EXPECT_EQ(items[5 * i + 1].kind, kWhole) << "condition " << i;
    EXPECT_EQ(items[5 * i + 2].kind, kSegment) << "condition " << i;
    EXPECT_EQ(items[5 * i + 3].kind, kSegment) << "condition " << i << ": I set, 3 segment bytes";
  }
  const auto hi_items = run_both(hi, {packet(true, {candidate(7, 1, 20), candidate(5, 1, 20)})});
  ASSERT_EQ(kinds(hi_items), (std::vector<unsigned>{kWhole, kWhole, kSegment, kEnd}));
  EXPECT_EQ(hi_items[2].stream, 255U);
}

// A chunk header crossing a beat boundary (every 4-byte position of a beat, so at 512 bits the DATA
// header's bytes 0..18 at 48..60 reach into the next beat): same items as the reference, and one chunk
// header per cycle however it lies.
TEST(WALK_SUITE, HeaderStraddlingBeats_Rfc9260_3_2) {
  const Tables t = default_tables();
  std::vector<Bytes> pkts;
  for (std::size_t lead = 0; lead < kBeatBytes + 8; lead += 4) {
    std::vector<Bytes> cs;
    if (lead > 0) cs.push_back(chunk(0xC0, 0, Bytes(lead - 4, 0x11)));
    cs.push_back(candidate(1, 7, 25));
    cs.push_back(candidate(2, 8, 1, false));
    pkts.push_back(packet(true, cs));
  }
  const auto items = run_both(t, pkts);
  std::size_t segs = 0;
  for (const auto& i : items) segs += i.kind == kSegment;
  EXPECT_EQ(segs, 2 * pkts.size());
}

// RFC 9260 3.2: a chunk length < 4, past the packet end, or 0xFFFF stops the walk (NetRef rule 4):
// RAW from that chunk on, END malformed; never a stall.
TEST(WALK_SUITE, MalformedLengths_Rfc9260_3_2) {
  const Tables t = default_tables();
  std::vector<Bytes> pkts;
  for (unsigned bad : {0U, 1U, 2U, 3U, 0xFFFFU, 0xFFFEU, 0x8000U}) {
    Bytes c = chunk(0x01, 0, Bytes(40, 0x22));
    store_be16(c.data() + 2, static_cast<std::uint16_t>(bad));
    pkts.push_back(packet(true, {candidate(1, 1, 30), c, chunk(3, 0, Bytes(8, 0))}));
  }
  {
    Bytes c = chunk(0x03, 0, Bytes(16, 0x33));  // SACK claiming 5 bytes more than there are
    store_be16(c.data() + 2, 25);
    pkts.push_back(packet(true, {c}));
  }
  {
    Bytes c = candidate(1, 1, 8000);  // a long chunk whose length is 1 past the end
    store_be16(c.data() + 2, static_cast<std::uint16_t>(c.size() + 1));
    pkts.push_back(packet(true, {c}));
  }
  const auto items = run_both(t, pkts);
  std::size_t malformed = 0;
  for (const auto& i : items) malformed += i.kind == kEnd && i.malformed == 1;
  EXPECT_EQ(malformed, pkts.size());
  EXPECT_EQ(kinds(std::vector<Item>(items.begin(), items.begin() + 4)),
            (std::vector<unsigned>{kWhole, kSegment, kRaw, kEnd}));
  EXPECT_EQ(items[2].offset, 12U + 48U);
}

// RFC 9260 3.2: the last chunk's padding runs past the packet end (the sender left it off): its
// copy_bytes stop at the end; and a tail of 1..3 bytes after the last chunk is RAW (rule 7).
TEST(WALK_SUITE, PaddingPastEndAndTails_Rfc9260_3_2) {
  const Tables t = default_tables();
  std::vector<Bytes> pkts;
  for (std::size_t n = 1; n <= 3; ++n) {
    pkts.push_back(packet(true, {chunk(9, 0, Bytes(4 + n, 0x44), false)}));              // padding missing
    pkts.push_back(packet(true, {candidate(1, 1, 20 + n, true), Bytes(n, 0x55)}));       // tail of n
    pkts.push_back(packet(true, {chunk(9, 0, Bytes(4, 0x44)), Bytes(n, 0x55)}));         // tail of n
    pkts.push_back(packet(true, {data_chunk(0x07, 1, 16, 1, 20 + n, true, 1, false)}));  // candidate, short pad
  }
  pkts.push_back(packet(true, {}));  // header only
  const auto items = run_both(t, pkts);
  EXPECT_EQ(kinds(std::vector<Item>(items.begin(), items.begin() + 3)), (std::vector<unsigned>{kWhole, kWhole, kEnd}));
  EXPECT_EQ(items[1].copy_bytes, 9U) << "chunk of 9 bytes, packet ends there";
  EXPECT_EQ(kinds(std::vector<Item>(items.begin() + 3, items.begin() + 7)),
            (std::vector<unsigned>{kWhole, kSegment, kRaw, kEnd}));
  EXPECT_EQ(items[5].copy_bytes, 1U);
}

// NetRef rule 5: 40 candidates in one packet: the first 32 are SEGMENTs, the other 8 BEYOND.
TEST(WALK_SUITE, FortyCandidates32Segments8Beyond) {
  const Tables t = default_tables();
  std::vector<Bytes> cs;
  for (unsigned i = 0; i < 40; ++i)
    cs.push_back(
        candidate(static_cast<std::uint16_t>(i % 8), static_cast<std::uint16_t>(i + 1), 1 + i % 5, i % 2 == 0));
  const auto items = run_both(t, {packet(true, cs)});
  ASSERT_EQ(items.size(), 42U);
  for (std::size_t i = 1; i <= 40; ++i) EXPECT_EQ(items[i].kind, i <= kMaxSegments ? kSegment : kBeyond) << i;
  EXPECT_EQ(items[41].segments, 32U);
  EXPECT_EQ(items[41].beyond, 8U);
  EXPECT_EQ(items[41].candidates, 40U);
}

// NetRef rule 3: a miss: the header, RAW from 12, END with hit 0, whatever the chunks say.
TEST(WALK_SUITE, MissIsHeaderRawEnd) {
  const Tables t = default_tables();
  const auto items =
      run_both(t, {packet(false, {candidate(1, 1, 300)}), packet(false, {}), packet(false, {Bytes(5000, 0x00)})});
  ASSERT_EQ(kinds(items), (std::vector<unsigned>{kWhole, kRaw, kEnd, kWhole, kEnd, kWhole, kRaw, kEnd}));
  EXPECT_EQ(items[2].hit, 0U);
}

// RFC 5041 4.2 / 4.3 (NetRef rule 6): trimmed_length = 18 + min(14 tagged / 18 untagged, segment bytes),
// around both limits; and a segment of 1 byte (length 19, the shortest candidate).
TEST(WALK_SUITE, TrimmedLengthsTaggedUntagged_Rfc5041_4) {
  const Tables t = default_tables();
  std::vector<Bytes> pkts;
  for (const std::size_t seg : {1U, 2U, 13U, 14U, 15U, 17U, 18U, 19U, 100U, 1400U}) {
    pkts.push_back(packet(true, {candidate(0, 1, seg, true)}));
    pkts.push_back(packet(true, {candidate(0, 1, seg, false)}));
  }
  const auto items = run_both(t, pkts);
  ASSERT_GE(items.size(), 4U);
  EXPECT_EQ(items[1].kind, kSegment) << "a segment of 1 byte";
  EXPECT_EQ(items[1].chunk_length, 19U);
  EXPECT_EQ(items[1].trimmed_length, 19U);
}

// DDP-SSN 0 maps to ssn 0xFFFF (DDP-SSN - 1 mod 2^16) and stream_base + stream wraps at 16 bits.
TEST(WALK_SUITE, SsnMinusOneAndStream_Rfc5043_5_2) {
  const Tables t = default_tables(10, 8);
  const auto items = run_both(t, {packet(true, {candidate(7, 0, 4), candidate(0, 0x8000, 4)})});
  ASSERT_EQ(items.size(), 4U);
  EXPECT_EQ(items[1].ssn, 0xFFFFU);
  EXPECT_EQ(items[1].stream, 17U);
  EXPECT_EQ(items[2].ssn, 0x7FFFU);
}

// ---------------------------------------------------------------------------------------------
// Random

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

// A random chunk: a DDP candidate-ish DATA chunk (random flags, PPID, stream, length) or a control chunk.
Bytes random_chunk(std::mt19937_64& rng, std::size_t max_value) {
  const unsigned r = static_cast<unsigned>(rng() % 10);
  const std::size_t room = std::max<std::size_t>(max_value, 1);
  if (r < 6) {
    const std::uint8_t flags = rng() % 4 == 0 ? static_cast<std::uint8_t>(rng()) : 0x07;
    const unsigned pr = static_cast<unsigned>(rng() % 10);
    const std::uint32_t ppid = pr == 0   ? static_cast<std::uint32_t>(rng() % 20)
                               : pr == 1 ? (static_cast<std::uint32_t>(rng()) & 0xFFFF0000U) | 16U
                                         : 16;
    const auto stream = static_cast<std::uint16_t>(rng() % 4 == 0 ? rng() % 20 : rng() % 8);
    std::size_t seg = rng() % 3 == 0 ? rng() % 40 : rng() % room;
    Bytes c = data_chunk(flags, stream, ppid, static_cast<std::uint16_t>(rng()), seg, rng() % 2 == 0,
                         static_cast<std::uint32_t>(rng()));
    for (std::size_t i = 16 + 3; i < c.size(); ++i) c[i] = static_cast<std::uint8_t>(rng());
    return c;
  }
  return chunk(static_cast<std::uint8_t>(1 + rng() % 255), static_cast<std::uint8_t>(rng()),
               random_bytes(rng, rng() % 3 == 0 ? rng() % 9 : rng() % std::min<std::size_t>(room, 200)),
               rng() % 8 != 0);
}

Bytes random_packet(std::mt19937_64& rng) {
  const unsigned r = static_cast<unsigned>(rng() % 20);
  if (r < 3) {  // fully random bytes, the header a hit or a miss
    Bytes p = random_bytes(rng, 12 + rng() % (rng() % 4 == 0 ? 2000 : 200));
    if (rng() % 4 != 0) {
      const Bytes h = common_header(true);
      std::copy(h.begin(), h.begin() + 8, p.begin());
    }
    return p;
  }
  const bool hit = r != 3;
  const std::size_t target = rng() % 10 == 0 ? 1 + rng() % 9000 : 1 + rng() % 600;
  std::vector<Bytes> cs;
  std::size_t size = 12;
  while (size < target) {
    Bytes c = random_chunk(rng, target - size);
    size += c.size();
    cs.push_back(std::move(c));
  }
  Bytes p = packet(hit, cs);
  if (rng() % 6 == 0) {
    const std::size_t tail = rng() % 4;
    for (std::size_t i = 0; i < tail; ++i) p.push_back(static_cast<std::uint8_t>(rng()));
  }
  if (rng() % 10 == 0 && p.size() > 12) p.resize(12 + rng() % (p.size() - 12));  // cut anywhere
  if (rng() % 12 == 0 && p.size() > 16) {  // a random length field somewhere at a chunk-ish spot
    const std::size_t at = 12 + 4 * (rng() % ((p.size() - 12) / 4));
    if (at + 4 <= p.size())
      store_be16(p.data() + at + 2, static_cast<std::uint16_t>(rng() % 3 == 0 ? rng() % 8 : rng()));
  }
  return p;
}

// Random packets (well-formed bundles, random DATA fields, random bytes, cut and corrupted ones) with
// random valid gaps on both inputs and random ready gaps, against the reference item by item. The
// live bits and stream table vary per run.
TEST(WALK_SUITE, RandomPacketsAgainstReference) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x57A1C0001ULL);
  std::mt19937_64 rng(seed);
  for (int run = 0; run < 3; ++run) {
    Tables t = default_tables(static_cast<std::uint16_t>(run == 2 ? 250 : rng() % 100),
                              static_cast<std::uint16_t>(4 + rng() % 12));
    for (std::size_t i = 0; i < kNumStreams; ++i) t.live[i] = rng() % 5 != 0;
    Bench b(t, seed + static_cast<std::uint64_t>(run));
    std::mt19937_64 gap_rng(seed + 1000003U * static_cast<std::uint64_t>(run + 1));
    if (run > 0) b.gaps(random_gaps(gap_rng, 70), random_gaps(gap_rng, 60), random_gaps(gap_rng, 70));
    std::size_t bytes = 0, segs = 0;
    for (int i = 0; i < 250; ++i) {
      const Bytes p = random_packet(rng);
      bytes += p.size();
      b.send(p);
    }
    b.run(2000000);
    for (const auto& it : b.got()) segs += it.kind == kSegment || it.kind == kBeyond;
    std::printf("[   INFO   ] run %d: 250 packets, %zu bytes, %zu items, %zu candidates\n", run, bytes, b.got().size(),
                segs);
  }
}

// A reset anywhere (mid-packet, mid-walk, with items waiting on a stalled output): nothing of before
// comes out after it, and the packets after it are walked right.
TEST(WALK_SUITE, ResetMidPacketThenCleanPackets) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x57A1C0002ULL);
  std::mt19937_64 rng(seed);
  const Tables t = default_tables();
  Bench b(t, seed);
  b.gaps(random_gaps(rng, 70), random_gaps(rng, 60), random_gaps(rng, 40));
  for (int round = 0; round < 24; ++round) {
    for (int i = 0; i < 3; ++i) b.send(random_packet(rng));
    b.run_cycles(rng() % 50);
    b.reset_now(1 + round % 3);
    for (int i = 0; i < 10; ++i) b.send(random_packet(rng));
    b.run(400000);
  }
}

// ---------------------------------------------------------------------------------------------
// Throughput (issue 14 "Figures": bytes per cycle against the input limit of one beat per cycle)

// Cycles per packet in steady state, packets back to back, ready always: the distance between END
// items of consecutive packets.
double cycles_per_packet(const Tables& t, const Bytes& p, int count = 24) {
  Bench b(t);
  for (int i = 0; i < count; ++i) b.send(p);
  b.run();
  const auto& e = b.end_cycles();
  if (e.size() != static_cast<std::size_t>(count)) return 1e9;
  return static_cast<double>(e.back() - e[4]) / static_cast<double>(count - 5);
}

TEST(WALK_SUITE, ThroughputFigures) {
  const Tables t = default_tables();
  std::printf("[   INFO   ] DataWidth %d: %zu bytes per beat (the input limit per cycle)\n", RNIC_WALK_DW, kBeatBytes);
  for (const std::size_t n : {100U, 1500U, 9000U}) {
    const Bytes p = packet(true, {candidate(1, 1, n - 12 - 18)});
    ASSERT_EQ(p.size(), n);
    const double c = cycles_per_packet(t, p);
    const double beats = static_cast<double>((n + kBeatBytes - 1) / kBeatBytes);
    std::printf("[   INFO   ] one DATA chunk, %5zu-byte packet: %7.2f cycles/packet (%.0f beats), %6.2f bytes/cycle\n",
                n, c, beats, static_cast<double>(n) / c);
    // Line rate: a packet takes its beats' cycles, or its 3 items' (header, SEGMENT, END) and the cycle
    // after END (the next packet's first beat waits for it: the input ready is registered state) if
    // more; at 64 bits one more, for the first chunk header's 3 beats.
    EXPECT_LE(c, std::max(beats, 4.0) + (kBeatBytes >= 16 ? 0.0 : 1.0)) << n;
  }
  for (const std::size_t n : {64U, 1500U}) {
    std::vector<Bytes> cs;
    for (std::size_t s = 12; s + 4 <= n; s += 4) cs.push_back(chunk(0xC1, 0, {}));
    const Bytes p = packet(true, cs);
    const double c = cycles_per_packet(t, p);
    std::printf("[   INFO   ] %zu minimal chunks (4 bytes), %zu-byte packet: %.2f cycles/packet, %.2f bytes/cycle\n",
                cs.size(), p.size(), c, static_cast<double>(p.size()) / c);
    // One chunk header per cycle: the chunks, the header and END items, the cycle after END, and at the
    // packet's start the beats the first chunk header spans to arrive at 64 bits (3: 2 cycles more).
    const double spans = kBeatBytes >= 16 ? 0.0 : 2.0;
    EXPECT_LE(c, static_cast<double>(cs.size()) + 3.0 + spans) << "one chunk header per cycle";
  }
}

}  // namespace
