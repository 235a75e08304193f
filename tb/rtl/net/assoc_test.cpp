// SPDX-License-Identifier: Apache-2.0
// rnic_net_assoc (issue 14, docs/network.md): the association table, the live bits and the per-packet
// lookup, on the Verilated model at its default size (Entries 16, NumStreams 256).
// The reference is tb/net NetRef's own rule 3: every response is checked against
// rnic::tb::net::walk(header, meta, crc_ok = true, table, {}) on the 12-byte SCTP common header the
// request carries (a packet of exactly the header: walk looks it up and has no chunk to walk), with
// the table a mirror of the writes as rtl/rnic_net_assoc.sv's header promises them: a request taken in
// cycle T sees exactly the writes of cycles <= T (one taken in a write's cycle sees the new entry).
// The live bits are checked every cycle against a mirror (registered: a write shows the cycle after).
//   directed: each of the 7 key fields differing alone (every bit of it) misses (RFC 9260 3.1: the
//     verification tag and the ports of the common header); the checksum bytes do not matter; the
//     lowest index wins among duplicates; a cleared entry misses; live bits set/clear, an index >=
//     NumStreams ignored; reset clears every entry, every live bit and the lookups in flight; the write
//     order with lookups in flight and held by backpressure;
//   random: lookups from a small pool of keys (so hits, duplicates and near misses are frequent) with
//     table and live writes interleaved and random valid/ready gaps (seed printed; RNIC_TEST_SEED=<n>);
//   throughput: one lookup per cycle with the response side always ready, latency 3.
// Waveform with RNIC_FST=<file>.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "Vrnic_net_assoc.h"
#include "net_table.hpp"
#include "rnic/tb/net_ref.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/stage_sim.hpp"
#include "rnic/wire/bytes.hpp"

namespace {

using rnic::tb::net::AssocEntry;
using rnic::tb::net::PacketMeta;
using Model = Vrnic_net_assoc;

constexpr std::size_t kEntries = 16;  // the model's parameters (defaults)
constexpr std::size_t kStreams = 256;
constexpr std::uint64_t kLatency = 3;  // rtl/rnic_net_assoc.sv's header
constexpr unsigned kResponseTimeout = 64;

// One lookup's inputs: the packet's metadata and its 12-byte common header (RFC 9260 3.1).
struct Key {
  PacketMeta meta;
  std::uint16_t src_port = 0;  // bytes 0..1: their SCTP port
  std::uint16_t dst_port = 0;  // bytes 2..3: my SCTP port
  std::uint32_t vtag = 0;      // bytes 4..7: my verification tag
  std::uint32_t checksum = 0;  // bytes 8..11: not looked at
};

std::vector<std::uint8_t> header(const Key& k) {
  std::vector<std::uint8_t> h;
  rnic::wire::put_be16(h, k.src_port);
  rnic::wire::put_be16(h, k.dst_port);
  rnic::wire::put_be32(h, k.vtag);
  rnic::wire::put_be32(h, k.checksum);
  return h;
}

// The key an entry answers to.
Key key_of(const AssocEntry& e) {
  Key k;
  k.meta.my_ip = e.my_ip;
  k.meta.their_ip = e.their_ip;
  k.meta.my_udp_port = e.my_udp_port;
  k.meta.their_udp_port = e.their_udp_port;
  k.src_port = e.their_sctp_port;
  k.dst_port = e.my_sctp_port;
  k.vtag = e.my_vtag;
  return k;
}

struct Resp {
  bool hit = false;
  unsigned index = 0;
  std::uint16_t stream_base = 0, stream_count = 0, socket = 0;
  bool operator==(const Resp& o) const {
    return hit == o.hit && index == o.index && stream_base == o.stream_base && stream_count == o.stream_count &&
           socket == o.socket;
  }
};

std::string str(const Resp& r) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "{hit %d index %u base %u count %u socket %u}", r.hit ? 1 : 0, r.index,
                unsigned{r.stream_base}, unsigned{r.stream_count}, unsigned{r.socket});
  return buf;
}

std::string str(const Key& k) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "{my_ip %08x their_ip %08x udp %u<-%u sctp %u<-%u vtag %08x}", k.meta.my_ip,
                k.meta.their_ip, unsigned{k.meta.my_udp_port}, unsigned{k.meta.their_udp_port}, unsigned{k.dst_port},
                unsigned{k.src_port}, k.vtag);
  return buf;
}

// NetRef's rule 3 on the request's header: walk() with crc_ok on the 12-byte packet.
Resp reference(const Key& k, const std::vector<AssocEntry>& table) {
  const std::vector<std::uint8_t> pkt = header(k);
  const rnic::tb::net::Walk w = rnic::tb::net::walk(pkt, k.meta, true, table, {});
  Resp r;
  if (w.assoc) {
    const AssocEntry& e = table.at(*w.assoc);
    r.hit = true;
    r.index = static_cast<unsigned>(*w.assoc);
    r.stream_base = e.stream_base;
    r.stream_count = e.stream_count;
    r.socket = e.vnx_socket;
  }
  return r;
}

struct TableWrite {
  unsigned index = 0;
  AssocEntry entry;  // entry.valid false: clears
};
struct LiveWrite {
  std::uint16_t index = 0;
  bool value = false;
};

// The model with the mirrors and the scoreboard. step() is one clock cycle.
class Bench {
 public:
  Bench() : table_(kEntries), live_(kStreams, false) {
    idle();
    sim_.reset();
  }
  ~Bench() { EXPECT_EQ(errors_, 0U) << "mismatches (first 10 reported above)"; }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // Offers k from the next step on until it is taken.
  void offer(const Key& k) {
    ASSERT_FALSE(offered_) << "a request is still offered";
    offered_ = k;
  }
  bool offering() const { return offered_.has_value(); }

  // One cycle: the offered request (if any), a table write, a live write, resp_ready_i.
  void step(bool resp_ready = true, const std::optional<TableWrite>& wr = std::nullopt,
            const std::optional<LiveWrite>& lw = std::nullopt) {
    Model& m = sim_.model();
    m.req_valid_i = offered_ ? 1 : 0;
    if (offered_) drive_request(*offered_);
    m.resp_ready_i = resp_ready ? 1 : 0;
    m.wr_i = 0;
    if (wr) rnic::tb::net::drive_assoc_write(m, wr->index, wr->entry);
    m.live_wr_i = 0;
    if (lw) rnic::tb::net::drive_live_write(m, lw->index, lw->value);
    sim_.eval();

    check_live();
    last_ready_ = m.req_ready_o != 0;
    if (m.resp_valid_o != 0 && resp_ready) take_response();
    // This cycle's write is in the table a request taken in this cycle sees (the RTL's promise).
    if (wr) table_[wr->index] = wr->entry;
    if (offered_ && last_ready_) {
      expected_.push_back({reference(*offered_, table_), *offered_, sim_.cycle()});
      ++taken_;
      offered_.reset();
    }
    if (lw && lw->index < kStreams) live_[lw->index] = lw->value;
    sim_.tick();
    idle();
  }

  // Steps (response side ready) until every request taken has its response.
  void drain() {
    unsigned guard = 0;
    while ((offered_ || !expected_.empty()) && guard++ < 1000) step();
    EXPECT_TRUE(expected_.empty()) << expected_.size() << " responses missing";
  }

  // One lookup on an otherwise idle model: its response.
  Resp lookup(const Key& k) {
    offer(k);
    drain();
    return got_.empty() ? Resp{} : got_.back();
  }

  void write(unsigned index, const AssocEntry& e) { step(true, TableWrite{index, e}); }
  void clear(unsigned index) { step(true, TableWrite{index, AssocEntry{}}); }
  void live(std::uint16_t index, bool value) { step(true, std::nullopt, LiveWrite{index, value}); }

  // rst_ni low for `cycles` cycles in the middle of whatever is going on: everything forgotten.
  void reset(int cycles) {
    idle();
    sim_.reset(cycles);
    table_.assign(kEntries, AssocEntry{});
    live_.assign(kStreams, false);
    expected_.clear();
    offered_.reset();
  }

  Model& model() { return sim_.model(); }
  std::uint64_t cycle() const { return sim_.cycle(); }
  const std::vector<Resp>& responses() const { return got_; }
  const std::vector<std::uint64_t>& response_cycles() const { return got_cycles_; }
  std::size_t taken() const { return taken_; }
  std::size_t outstanding() const { return expected_.size(); }
  bool last_ready() const { return last_ready_; }
  const std::vector<AssocEntry>& table() const { return table_; }
  bool live_bit(std::size_t i) { return (sim_.model().live_o[i / 32] >> (i % 32)) & 1U; }

 private:
  struct Expected {
    Resp resp;
    Key key;
    std::uint64_t taken_cycle;
  };

  void idle() {
    Model& m = sim_.model();
    m.req_valid_i = 0;
    m.resp_ready_i = 1;
    m.wr_i = 0;
    m.live_wr_i = 0;
    // Noise on the data inputs while their valid is low: must not matter.
    m.wr_index_i = static_cast<CData>(noise_() % kEntries);
    m.wr_valid_i = static_cast<CData>(noise_() & 1);
    m.live_index_i = static_cast<SData>(noise_() % kStreams);
    m.live_value_i = 1;
    for (std::size_t w = 0; w < 3; ++w) {
      m.req_meta_i[w] = static_cast<IData>(noise_());
      m.req_hdr_i[w] = static_cast<IData>(noise_());
    }
  }

  void drive_request(const Key& k) {
    Model& m = sim_.model();
    m.req_meta_i[0] = k.meta.my_ip;
    m.req_meta_i[1] = k.meta.their_ip;
    m.req_meta_i[2] = (IData{k.meta.their_udp_port} << 16) | k.meta.my_udp_port;
    const std::vector<std::uint8_t> h = header(k);
    for (std::size_t w = 0; w < 3; ++w) m.req_hdr_i[w] = rnic::wire::load_le32(h.data() + 4 * w);
  }

  void take_response() {
    const Model& m = sim_.model();
    Resp got;
    got.hit = m.resp_hit_o != 0;
    got.index = m.resp_index_o;
    got.stream_base = m.resp_stream_base_o;
    got.stream_count = m.resp_stream_count_o;
    got.socket = m.resp_socket_o;
    got_.push_back(got);
    got_cycles_.push_back(sim_.cycle());
    if (expected_.empty()) {
      if (errors_++ < 10) ADD_FAILURE() << "cycle " << sim_.cycle() << ": response " << str(got) << " to no request";
      return;
    }
    const Expected e = expected_.front();
    expected_.pop_front();
    if (!(got == e.resp) && errors_++ < 10)
      ADD_FAILURE() << "cycle " << sim_.cycle() << ": request " << str(e.key) << " taken in cycle " << e.taken_cycle
                    << ": got " << str(got) << ", reference (NetRef rule 3) " << str(e.resp);
  }

  void check_live() {
    for (std::size_t i = 0; i < kStreams; ++i) {
      if (live_bit(i) != live_[i] && errors_++ < 10)
        ADD_FAILURE() << "cycle " << sim_.cycle() << ": live_o[" << i << "] = " << live_bit(i) << ", expected "
                      << live_[i];
    }
  }

  rnic::tb::StageSim<Model> sim_;
  std::mt19937_64 noise_{7};
  std::vector<AssocEntry> table_;
  std::vector<bool> live_;
  std::optional<Key> offered_;
  std::deque<Expected> expected_;
  std::vector<Resp> got_;
  std::vector<std::uint64_t> got_cycles_;
  std::size_t taken_ = 0;
  bool last_ready_ = false;
  unsigned errors_ = 0;
};

AssocEntry entry(std::uint32_t seed) {
  AssocEntry e;
  e.valid = true;
  e.my_ip = 0x0A000001U + seed;
  e.their_ip = 0xC0A80001U + (seed << 8);
  e.my_udp_port = 9899;
  e.their_udp_port = static_cast<std::uint16_t>(40000 + seed);
  e.my_sctp_port = static_cast<std::uint16_t>(5002 + seed);
  e.their_sctp_port = static_cast<std::uint16_t>(5001 + seed);
  e.my_vtag = 0x5A5A0000U ^ (seed * 0x01010101U);
  e.stream_base = static_cast<std::uint16_t>(16 * seed + 3);
  e.stream_count = static_cast<std::uint16_t>(seed + 1);
  e.vnx_socket = static_cast<std::uint16_t>(0x100 + seed);
  return e;
}

Resp hit_of(unsigned index, const AssocEntry& e) { return {true, index, e.stream_base, e.stream_count, e.vnx_socket}; }

// The 7 key fields, each as a bit span of a Key to flip.
struct Field {
  const char* name;
  unsigned bits;
  void (*flip)(Key&, unsigned bit);
};
const Field kFields[] = {
    {"my_ip", 32, [](Key& k, unsigned b) { k.meta.my_ip ^= 1U << b; }},
    {"their_ip", 32, [](Key& k, unsigned b) { k.meta.their_ip ^= 1U << b; }},
    {"my_udp_port", 16, [](Key& k, unsigned b) { k.meta.my_udp_port ^= static_cast<std::uint16_t>(1U << b); }},
    {"their_udp_port", 16, [](Key& k, unsigned b) { k.meta.their_udp_port ^= static_cast<std::uint16_t>(1U << b); }},
    {"my_sctp_port (destination port, bytes 2..3)", 16,
     [](Key& k, unsigned b) { k.dst_port ^= static_cast<std::uint16_t>(1U << b); }},
    {"their_sctp_port (source port, bytes 0..1)", 16,
     [](Key& k, unsigned b) { k.src_port ^= static_cast<std::uint16_t>(1U << b); }},
    {"my_vtag (verification tag, bytes 4..7)", 32, [](Key& k, unsigned b) { k.vtag ^= 1U << b; }},
};

// RFC 9260 3.1: a packet is the association's only if its ports and verification tag are the
// association's (and, here, its addresses and UDP ports, RFC 6951). Every bit of every field, alone.
TEST(NetAssoc, EachKeyFieldDifferingAloneMisses_Rfc9260_3_1) {
  Bench b;
  const AssocEntry e = entry(5);
  b.write(9, e);
  const Key k = key_of(e);
  EXPECT_EQ(str(b.lookup(k)), str(hit_of(9, e)));
  for (const Field& f : kFields) {
    for (unsigned bit = 0; bit < f.bits; ++bit) {
      Key miss = k;
      f.flip(miss, bit);
      EXPECT_EQ(str(b.lookup(miss)), str(Resp{})) << f.name << " bit " << bit << " differs";
    }
  }
  // Source and destination SCTP ports swapped: a packet in the other direction.
  Key swapped = k;
  swapped.src_port = k.dst_port;
  swapped.dst_port = k.src_port;
  EXPECT_EQ(str(b.lookup(swapped)), str(Resp{}));
  // The checksum bytes (8..11) are not part of the key.
  Key sum = k;
  sum.checksum = 0xDEADBEEF;
  EXPECT_EQ(str(b.lookup(sum)), str(hit_of(9, e)));
}

// NetRef rule 3: the first valid entry. Duplicates at 3, 7 and 12 (different payloads).
TEST(NetAssoc, LowestIndexWinsAmongDuplicates) {
  Bench b;
  const AssocEntry base = entry(1);
  AssocEntry e3 = base, e7 = base, e12 = base, e0 = base;
  e3.stream_base = 30;
  e7.stream_base = 70;
  e12.stream_base = 120;
  e0.valid = false;  // written but not valid: never matches
  b.write(12, e12);
  b.write(7, e7);
  b.write(3, e3);
  b.write(0, e0);
  EXPECT_EQ(str(b.lookup(key_of(base))), str(hit_of(3, e3)));
  b.clear(3);
  EXPECT_EQ(str(b.lookup(key_of(base))), str(hit_of(7, e7)));
  b.clear(7);
  EXPECT_EQ(str(b.lookup(key_of(base))), str(hit_of(12, e12)));
  e0.valid = true;
  b.write(0, e0);
  EXPECT_EQ(str(b.lookup(key_of(base))), str(hit_of(0, e0)));
  b.write(15, entry(2));
  EXPECT_EQ(str(b.lookup(key_of(entry(2)))), str(hit_of(15, entry(2))));
}

// A write with wr_valid_i 0 clears the entry; other entries stay.
TEST(NetAssoc, ClearedEntryMisses) {
  Bench b;
  for (unsigned i = 0; i < kEntries; ++i) b.write(i, entry(i));
  for (unsigned i = 0; i < kEntries; ++i) EXPECT_EQ(str(b.lookup(key_of(entry(i)))), str(hit_of(i, entry(i))));
  // NET_ASSOC_CLEAR: wr_valid_i 0, the other fields as they come (here: the entry's own key, so only
  // the valid bit can make it miss; then all zero).
  AssocEntry cleared = entry(4);
  cleared.valid = false;
  b.write(4, cleared);
  EXPECT_EQ(str(b.lookup(key_of(entry(4)))), str(Resp{}));
  b.write(4, entry(4));
  EXPECT_EQ(str(b.lookup(key_of(entry(4)))), str(hit_of(4, entry(4))));
  b.clear(4);
  EXPECT_EQ(str(b.lookup(key_of(entry(4)))), str(Resp{}));
  for (unsigned i = 0; i < kEntries; ++i)
    if (i != 4) {
      EXPECT_EQ(str(b.lookup(key_of(entry(i)))), str(hit_of(i, entry(i))));
    }
}

// Live bits: set and cleared one by one, registered (the bench checks live_o every cycle against the
// mirror, which changes at the clock edge); indexes >= NumStreams ignored.
TEST(NetAssoc, LiveBitsSetClearOutOfRangeIgnored) {
  Bench b;
  for (std::uint16_t i = 0; i < kStreams; i += 3) b.live(i, true);
  for (std::size_t i = 0; i < kStreams; ++i) EXPECT_EQ(b.live_bit(i), i % 3 == 0) << i;
  b.live(0, false);
  b.live(255, true);
  b.live(3, false);
  EXPECT_FALSE(b.live_bit(0));
  EXPECT_TRUE(b.live_bit(255));
  EXPECT_FALSE(b.live_bit(3));
  // Out of range: 256 (would be bit 0 if the upper bits were dropped), 0x0100 + k, 0xFFFF.
  for (const std::uint16_t bad : {std::uint16_t{256}, std::uint16_t{0x0103}, std::uint16_t{0x8000},
                                  std::uint16_t{0xFFFF}, std::uint16_t{0x01FF}}) {
    b.live(bad, true);
  }
  b.step();
  EXPECT_FALSE(b.live_bit(0));
  EXPECT_FALSE(b.live_bit(3));
  EXPECT_TRUE(b.live_bit(255));
  for (const std::uint16_t bad : {std::uint16_t{0x01FF}, std::uint16_t{0x0106}}) b.live(bad, false);
  b.step();
  EXPECT_TRUE(b.live_bit(255));
  EXPECT_TRUE(b.live_bit(6));
}

// Reset (one cycle of rst_ni low, and two) in the middle of traffic: every entry invalid, every live bit
// 0, nothing in flight answered.
TEST(NetAssoc, ResetClearsEverything) {
  for (const int cycles : {1, 2}) {
    SCOPED_TRACE("rst_ni low for " + std::to_string(cycles) + " cycles");
    Bench b;
    for (unsigned i = 0; i < kEntries; ++i) b.write(i, entry(i));
    for (std::uint16_t i = 0; i < kStreams; ++i) b.live(i, true);
    // Requests queued behind a stalled response side, then flowing: at reset, every pipeline stage and
    // the response FIFO hold one.
    for (unsigned i = 0; i < 10; ++i) {
      if (!b.offering()) b.offer(key_of(entry(i)));
      b.step(i >= 6);
    }
    ASSERT_GT(b.outstanding(), 0U);
    b.reset(cycles);
    EXPECT_EQ(b.model().resp_valid_o, 0);
    EXPECT_EQ(b.model().req_ready_o, 1);
    for (std::size_t i = 0; i < kStreams; ++i) EXPECT_FALSE(b.live_bit(i)) << i;
    const std::size_t before = b.responses().size();
    for (std::size_t i = 0; i < 20; ++i) b.step();
    EXPECT_EQ(b.responses().size(), before) << "a response of a request taken before reset came out";
    for (unsigned i = 0; i < kEntries; ++i) EXPECT_EQ(str(b.lookup(key_of(entry(i)))), str(Resp{})) << i;
  }
}

// The header's promise: a request taken in cycle T sees the writes of cycles <= T, whole entries,
// whatever the stalls. A run of back-to-back requests for one key while the entry's key (then its
// payload only) is rewritten in one of those cycles, the response side stalled so that the requests
// wait in the pipeline and the FIFO; the bench's mirror checks each response against the table of its
// take cycle; here also by count.
TEST(NetAssoc, WriteOrderWithLookupsInFlight) {
  for (unsigned at = 0; at < 6; ++at) {
    for (const bool payload_only : {false, true}) {
      SCOPED_TRACE("write in cycle " + std::to_string(at) + (payload_only ? ", payload only" : ", key"));
      Bench b;
      const AssocEntry old_e = entry(3);
      AssocEntry new_e = old_e;
      new_e.stream_base = 999;
      new_e.stream_count = 77;
      new_e.vnx_socket = 0x4242;
      if (!payload_only) new_e.my_vtag ^= 0x80000000U;
      b.write(6, old_e);
      const std::size_t first = b.responses().size();
      std::size_t taken_before_write = 0;
      for (unsigned c = 0; c < 12; ++c) {
        if (!b.offering()) b.offer(key_of(old_e));
        const bool ready = c % 5 == 4;  // mostly stalled: requests wait after being taken
        const std::size_t before = b.taken();
        if (c == at) {
          b.step(ready, TableWrite{6, new_e});
          taken_before_write = before;
        } else {
          b.step(ready);
        }
      }
      b.drain();
      const std::vector<Resp>& r = b.responses();
      ASSERT_GT(r.size(), first + taken_before_write);
      for (std::size_t i = first; i < r.size(); ++i) {
        const bool sees_old = i - first < taken_before_write;
        const Resp want = sees_old ? hit_of(6, old_e) : payload_only ? hit_of(6, new_e) : Resp{};
        EXPECT_EQ(str(r[i]), str(want)) << "request " << i - first << " (" << taken_before_write
                                        << " taken before the write's cycle)";
      }
    }
  }
}

// Backpressure: with the response side stalled, requests are taken only while there is room, none is
// lost, and they come out in order when it opens.
TEST(NetAssoc, BackpressureLosesNothing) {
  Bench b;
  for (unsigned i = 0; i < kEntries; ++i) b.write(i, entry(i));
  std::size_t offered = 0;
  for (unsigned c = 0; c < 40; ++c) {
    if (!b.offering()) b.offer(key_of(entry(static_cast<std::uint32_t>(offered++ % kEntries))));
    b.step(false);
  }
  EXPECT_LE(b.taken(), 8U) << "took more than the pipeline and FIFO hold";
  EXPECT_GE(b.taken(), 3U);
  EXPECT_FALSE(b.last_ready());
  b.drain();
  EXPECT_EQ(b.responses().size(), offered);
  for (std::size_t i = 0; i < b.responses().size(); ++i)
    EXPECT_EQ(str(b.responses()[i]),
              str(hit_of(static_cast<unsigned>(i % kEntries), entry(static_cast<std::uint32_t>(i % kEntries)))));
}

// One lookup per cycle sustained: 1000 back-to-back requests, each taken in its first cycle, responses
// on consecutive cycles from kLatency cycles after the first was taken.
TEST(NetAssoc, ThroughputOnePerCycle) {
  Bench b;
  for (unsigned i = 0; i < kEntries; i += 2) b.write(i, entry(i));
  constexpr std::size_t kN = 1000;
  const std::uint64_t start = b.cycle();
  std::size_t not_ready = 0;
  for (std::size_t n = 0; n < kN; ++n) {
    b.offer(key_of(entry(static_cast<std::uint32_t>(n % kEntries))));
    b.step();
    if (b.offering()) {
      ++not_ready;
      b.drain();
    }
  }
  b.drain();
  EXPECT_EQ(not_ready, 0U) << "req_ready_o low with the response side always ready";
  ASSERT_EQ(b.responses().size(), kN);
  const std::vector<std::uint64_t>& at = b.response_cycles();
  EXPECT_EQ(at.front(), start + kLatency);
  EXPECT_EQ(at.back(), at.front() + kN - 1) << "responses not one per cycle";
}

// Random lookups against NetRef rule 3 with table and live writes interleaved and random gaps on
// both handshakes. Phases vary the rates; keys come from a small pool, entries from the same pool or
// one field away from it, so hits, duplicates, clears and near misses are all frequent.
TEST(NetAssoc, RandomAgainstNetRef) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  const auto chance = [&rng](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };

  std::vector<AssocEntry> pool;
  for (std::uint32_t i = 0; i < 6; ++i) {
    AssocEntry e = entry(i);
    e.my_ip = static_cast<std::uint32_t>(rng());
    e.my_vtag = static_cast<std::uint32_t>(rng());
    pool.push_back(e);
  }
  const auto near = [&](Key k) {
    const Field& f = kFields[pick(7)];
    f.flip(k, static_cast<unsigned>(pick(f.bits)));
    return k;
  };
  const auto random_entry = [&]() {
    AssocEntry e = pool[pick(pool.size())];
    if (chance(0.2)) {
      const Key k = near(key_of(e));
      e.my_ip = k.meta.my_ip;
      e.their_ip = k.meta.their_ip;
      e.my_udp_port = k.meta.my_udp_port;
      e.their_udp_port = k.meta.their_udp_port;
      e.my_sctp_port = k.dst_port;
      e.their_sctp_port = k.src_port;
      e.my_vtag = k.vtag;
    }
    e.valid = chance(0.8);
    e.stream_base = static_cast<std::uint16_t>(rng());
    e.stream_count = static_cast<std::uint16_t>(rng());
    e.vnx_socket = static_cast<std::uint16_t>(rng());
    return e;
  };
  const auto random_key = [&]() {
    Key k = key_of(pool[pick(pool.size())]);
    if (chance(0.25)) k = near(k);
    if (chance(0.05)) {
      k.meta.my_ip = static_cast<std::uint32_t>(rng());
      k.vtag = static_cast<std::uint32_t>(rng());
    }
    k.checksum = static_cast<std::uint32_t>(rng());
    return k;
  };

  struct Phase {
    double req, ready, write, live;
  };
  const Phase phases[] = {
      {1.0, 1.0, 0.05, 0.02}, {0.6, 0.5, 0.2, 0.1}, {1.0, 0.3, 0.3, 0.05}, {0.3, 1.0, 0.5, 0.05}, {1.0, 0.9, 0.1, 0.0}};
  Bench b;
  constexpr std::size_t kPerPhase = 4000;
  std::size_t hits = 0;
  for (const Phase& ph : phases) {
    const std::size_t target = b.taken() + kPerPhase;
    unsigned guard = 0;
    while (b.taken() < target && guard++ < 20 * kPerPhase) {
      if (!b.offering() && chance(ph.req)) b.offer(random_key());
      std::optional<TableWrite> wr;
      if (chance(ph.write)) wr = TableWrite{static_cast<unsigned>(pick(kEntries)), random_entry()};
      std::optional<LiveWrite> lw;
      if (chance(ph.live))
        lw = LiveWrite{static_cast<std::uint16_t>(chance(0.8) ? pick(kStreams) : rng()), chance(0.5)};
      b.step(chance(ph.ready), wr, lw);
    }
    EXPECT_GE(b.taken(), target) << "stalled";
  }
  b.drain();
  for (const Resp& r : b.responses()) hits += r.hit ? 1 : 0;
  std::printf("[   INFO   ] %zu lookups, %zu hits, %zu cycles\n", b.responses().size(), hits,
              static_cast<std::size_t>(b.cycle()));
  EXPECT_EQ(b.responses().size(), b.taken());
  EXPECT_GT(hits, b.taken() / 10) << "too few hits to mean anything";
  EXPECT_LT(hits, b.taken() * 9 / 10) << "too few misses to mean anything";
}

}  // namespace
