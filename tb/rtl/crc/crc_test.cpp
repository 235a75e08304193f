// SPDX-License-Identifier: Apache-2.0
// rnic_crc32c and rnic_sctp_crc (issue 14) at one DataWidth (RNIC_CRC_DW), against ISA-L's CRC32c.
// Built once per width (CMakeLists.txt: crc_test_Dw512, crc_test_Dw64), each on both Verilated models.
//   the engine: RFC 3720 B.4's CRC32c vectors; every length 1..300 back to back at full rate; random
//     lengths up to 9216 and some up to 65535 with random gaps, bytes taken as zero (in_zero) and the
//     sideband; reset in the middle of a packet, then clean packets;
//   the SCTP check (RFC 9260 6.8, appendix A; the CRC32c field at bytes 8..11, least significant byte
//     first): every packet usrsctp sends over AF_CONN (association set-up, DDP segments, SACKs) is
//     ok = 1, the same packets with one bit flipped anywhere are ok = 0; packets shorter than 12 bytes
//     are ok = 0; random packets with good and bad checksums; reset in the middle of a packet.
// Every result must come exactly Latency cycles after the packet's last beat, in packet order, once.
// Seed: random tests print theirs; RNIC_TEST_SEED=<n> replays. Waveform with RNIC_FST=<file>.
#include <gtest/gtest.h>
#include <isa-l.h>

#include <algorithm>
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

#include "pair.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/stage_sim.hpp"
#include "rnic/wire/bytes.hpp"

#define RNIC_CAT2(a, b) a##b
#define RNIC_CAT(a, b) RNIC_CAT2(a, b)
#include RNIC_CRC_ENGINE_HDR  // the models' headers and classes, the suites' suffix: CMakeLists.txt
#include RNIC_CRC_SCTP_HDR

// Test suite names carry the width: Crc32cDw512, SctpCrcDw64, ...
#define CRC32C_SUITE RNIC_CAT(Crc32c, RNIC_CRC_NAME)
#define SCTP_SUITE RNIC_CAT(SctpCrc, RNIC_CRC_NAME)

namespace {

using EngineModel = RNIC_CRC_ENGINE_CLASS;
using SctpModel = RNIC_CRC_SCTP_CLASS;
using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kBeatBytes = RNIC_CRC_DW / 8;
constexpr unsigned log2u(std::size_t v) { return v <= 1 ? 0 : 1 + log2u(v / 2); }
// Documented in the modules' headers.
constexpr std::uint64_t kEngineLatency = log2u(kBeatBytes) + 3;
constexpr std::uint64_t kSctpLatency = kEngineLatency + 1;

// The standard CRC32c (init ~0, reflected, final xor ~0). ISA-L's crc32_iscsi(buf, n, ~0) returns its
// complement (toolchain notes), as driver/capture's SctpPacket::checksum() uses it.
std::uint32_t crc32c(const Bytes& b) {
  return ~crc32_iscsi(const_cast<std::uint8_t*>(b.data()), static_cast<int>(b.size()), 0xFFFFFFFFU);
}

// One packet as offered: bytes, and for the engine the bytes to take as zero and the sideband.
struct Packet {
  Packet(Bytes d, Bytes z = {}, std::uint16_t u = 0, Bytes t = {})
      : data(std::move(d)), zero(std::move(z)), user(u), tail(std::move(t)) {}
  Bytes data;
  Bytes zero;  // engine only: 1 = in_zero for that byte (empty: none)
  std::uint16_t user = 0;
  Bytes tail;  // offered in the last beat past the packet's end (tkeep 0 there; default noise)
};

// Ports: in_data_i is VlWide<N> at 512 bits, QData at 64; tkeep QData / CData.
template <std::size_t N>
void put_data(VlWide<N>& port, const std::uint8_t* b) {
  for (std::size_t w = 0; w < N; ++w) port[w] = rnic::wire::load_le32(b + 4 * w);
}
inline void put_data(QData& port, const std::uint8_t* b) { port = rnic::wire::load_le(b, 8); }
template <typename P>
void put_mask(P& port, std::uint64_t v) {
  port = static_cast<std::remove_reference_t<P>>(v);
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::uint64_t mask_of(std::size_t n) { return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

// Drives packets beat by beat into the model M and checks each result at its cycle. kEngine: M is
// rnic_crc32c (in_zero_i, in_user_i, out_user_o), else rnic_sctp_crc (out_ok_o).
template <class M, bool kEngine>
class Bench {
 public:
  static constexpr std::uint64_t kLatency = kEngine ? kEngineLatency : kSctpLatency;

  explicit Bench(std::uint64_t noise_seed = 1) : noise_(noise_seed) {
    idle();
    sim_.reset();
  }
  ~Bench() { EXPECT_EQ(errors_, 0U) << "result mismatches (first 10 reported above)"; }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // Offers p; gap() cycles of in_valid low before each of its beats.
  void send(
      const Packet& p, const std::function<unsigned()>& gap = [] { return 0U; }) {
    const std::size_t n = p.data.size();
    const std::size_t beats = (n + kBeatBytes - 1) / kBeatBytes;
    for (std::size_t b = 0; b < beats; ++b) {
      for (unsigned g = gap(); g > 0; --g) cycle();
      std::uint8_t buf[kBeatBytes];
      std::uint64_t zero = 0;
      const std::size_t off = b * kBeatBytes;
      const std::size_t here = std::min(kBeatBytes, n - off);
      for (std::size_t i = 0; i < kBeatBytes; ++i) {
        // Bytes past the end: noise, which the engine must ignore (tkeep).
        const std::size_t past = i - here;
        buf[i] = i < here ? p.data[off + i] : past < p.tail.size() ? p.tail[past] : static_cast<std::uint8_t>(noise_());
        if (i < here && !p.zero.empty() && p.zero[off + i] != 0) zero |= std::uint64_t{1} << i;
      }
      put_data(sim_->in_data_i, buf);
      put_mask(sim_->in_keep_i, mask_of(here));
      sim_->in_last_i = b + 1 == beats;
      sim_->in_valid_i = 1;
      if constexpr (kEngine) {
        put_mask(sim_->in_zero_i, zero);
        sim_->in_user_i = p.user;
      }
      if (b + 1 == beats) expect_.push_back(expected(p, sim_.cycle() + kLatency, sent_++));
      cycle();
    }
  }
  // Idle cycles until every result has come out (and a few more: nothing else may).
  void drain() {
    for (std::uint64_t i = 0; i < kLatency + 4; ++i) cycle();
    EXPECT_TRUE(expect_.empty()) << expect_.size() << " results never came";
  }
  // rst_ni low for `cycles` edges with noise offered as valid beats; results in flight are dropped.
  void reset_now(int cycles = 2) {
    sim_->rst_ni = 0;
    for (int i = 0; i < cycles; ++i) {
      noise_beat();
      sim_->in_valid_i = 1;
      sim_.tick();
    }
    sim_->rst_ni = 1;
    expect_.clear();
    idle();
  }
  // The first `count` beats of p only (a packet cut by a reset).
  void send_partial(const Packet& p, std::size_t count) {
    for (std::size_t b = 0; b < count; ++b) {
      put_data(sim_->in_data_i, p.data.data() + b * kBeatBytes);
      put_mask(sim_->in_keep_i, mask_of(kBeatBytes));
      sim_->in_last_i = 0;
      sim_->in_valid_i = 1;
      if constexpr (kEngine) put_mask(sim_->in_zero_i, 0);
      cycle();
    }
  }
  std::uint64_t results() const { return results_; }

 private:
  struct Expect {
    std::uint64_t due;
    std::uint32_t crc;
    bool ok;
    std::uint16_t user;
    std::uint64_t index;
    std::size_t length;
  };

  static Expect expected(const Packet& p, std::uint64_t due, std::uint64_t index) {
    Bytes z = p.data;
    bool ok = false;
    if constexpr (kEngine) {
      for (std::size_t i = 0; i < p.zero.size(); ++i)
        if (p.zero[i] != 0) z[i] = 0;
    } else {
      // RFC 9260 6.8: the CRC32c over the packet with its checksum field (bytes 8..11) as zero.
      for (std::size_t i = 8; i < 12 && i < z.size(); ++i) z[i] = 0;
    }
    const std::uint32_t crc = crc32c(z);
    if (!kEngine) ok = p.data.size() >= 12 && rnic::wire::load_le32(p.data.data() + 8) == crc;
    return {due, crc, ok, p.user, index, p.data.size()};
  }

  void noise_beat() {
    std::uint8_t buf[kBeatBytes];
    for (auto& b : buf) b = static_cast<std::uint8_t>(noise_());
    put_data(sim_->in_data_i, buf);
    put_mask(sim_->in_keep_i, noise_());
    sim_->in_last_i = static_cast<std::uint8_t>(noise_() & 1U);
    if constexpr (kEngine) {
      put_mask(sim_->in_zero_i, noise_());
      sim_->in_user_i = static_cast<std::uint16_t>(noise_());
    }
  }
  void idle() {
    noise_beat();  // not valid: must be ignored whatever it holds
    sim_->in_valid_i = 0;
  }
  void fail(const std::string& what) {
    if (++errors_ <= 10) ADD_FAILURE() << "cycle " << sim_.cycle() << ": " << what;
  }
  // One clock: the outputs of this cycle are checked, then the edge; the inputs go idle after it.
  void cycle() {
    sim_.eval();
    const std::uint64_t now = sim_.cycle();
    if (sim_->out_valid_o != 0) {
      ++results_;
      if (expect_.empty()) {
        fail("a result with no packet");
      } else {
        const Expect e = expect_.front();
        expect_.pop_front();
        std::string got = "packet " + std::to_string(e.index) + " (" + std::to_string(e.length) + " bytes)";
        if (e.due != now) fail(got + " came at cycle " + std::to_string(now) + ", due " + std::to_string(e.due));
        if (sim_->out_crc_o != e.crc) fail(got + ": crc " + hex(sim_->out_crc_o) + ", want " + hex(e.crc));
        if constexpr (kEngine) {
          if (sim_->out_user_o != e.user) fail(got + ": user " + std::to_string(sim_->out_user_o));
        } else {
          if ((sim_->out_ok_o != 0) != e.ok)
            fail(got + ": ok " + std::to_string(sim_->out_ok_o) + ", want " + std::to_string(e.ok));
        }
      }
    } else if (!expect_.empty() && expect_.front().due <= now) {
      fail("packet " + std::to_string(expect_.front().index) + ": no result at cycle " + std::to_string(now));
      expect_.pop_front();
    }
    sim_.tick();
    idle();
  }

  rnic::tb::StageSim<M> sim_;
  std::mt19937_64 noise_;
  std::deque<Expect> expect_;
  std::uint64_t sent_ = 0, results_ = 0, errors_ = 0;
};

using EngineBench = Bench<EngineModel, true>;
using SctpBench = Bench<SctpModel, false>;

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

// Gaps: mostly none, some short, a few long.
std::function<unsigned()> random_gaps(std::mt19937_64& rng) {
  return [&rng] {
    const unsigned r = static_cast<unsigned>(rng() % 100);
    if (r < 60) return 0U;
    if (r < 90) return 1U + static_cast<unsigned>(rng() % 3);
    return 4U + static_cast<unsigned>(rng() % 17);
  };
}

// ---------------------------------------------------------------------------------------------
// The engine

// RFC 3720 B.4 (iSCSI, the same CRC32c as RFC 9260 appendix A / RFC 3309), and the usual check value.
TEST(CRC32C_SUITE, Rfc3720VectorsAndCheckValue) {
  struct Vec {
    Bytes data;
    std::uint32_t crc;
  };
  std::vector<Vec> v;
  v.push_back({Bytes(32, 0x00), 0x8A9136AAU});
  v.push_back({Bytes(32, 0xFF), 0x62A8AB43U});
  Bytes inc(32), dec(32);
  for (std::size_t i = 0; i < 32; ++i) {
    inc[i] = static_cast<std::uint8_t>(i);
    dec[i] = static_cast<std::uint8_t>(31 - i);
  }
  v.push_back({inc, 0x46DD794EU});
  v.push_back({dec, 0x113FDB5CU});
  v.push_back({Bytes{'1', '2', '3', '4', '5', '6', '7', '8', '9'}, 0xE3069283U});
  EngineBench bench;
  for (const auto& x : v) {
    ASSERT_EQ(crc32c(x.data), x.crc) << "the reference itself";
    bench.send({x.data, {}, 0});
  }
  bench.drain();
  EXPECT_EQ(bench.results(), v.size());
}

// One beat per cycle for every length, packets back to back (each first beat right after the
// previous last beat), and the sideband with each.
TEST(CRC32C_SUITE, EveryLength1To300BackToBack) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0xC3C0001);
  std::mt19937_64 rng(seed);
  EngineBench bench(seed);
  for (std::size_t n = 1; n <= 300; ++n) bench.send({random_bytes(rng, n), {}, static_cast<std::uint16_t>(n)});
  bench.drain();
  EXPECT_EQ(bench.results(), 300U);
}

// Random lengths up to 9216 (jumbo) and some up to 65535, random gaps between beats and packets,
// random bytes taken as zero.
TEST(CRC32C_SUITE, RandomLengthsGapsAndZeroedBytes) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0xC3C0002);
  std::mt19937_64 rng(seed);
  EngineBench bench(seed);
  const auto gaps = random_gaps(rng);
  std::vector<std::size_t> lengths;
  for (int i = 0; i < 250; ++i) lengths.push_back(1 + rng() % 9216);
  for (int i = 0; i < 3; ++i) lengths.push_back(9217 + rng() % (65535 - 9217));
  lengths.push_back(65535);
  std::shuffle(lengths.begin(), lengths.end(), rng);
  std::uint16_t user = 0;
  for (const std::size_t n : lengths) {
    Packet p{random_bytes(rng, n), {}, user++};
    if (rng() % 2 == 0) {
      p.zero.assign(n, 0);
      for (auto& z : p.zero) z = rng() % 16 == 0;
    }
    bench.send(p, rng() % 4 == 0 ? std::function<unsigned()>([] { return 0U; }) : gaps);
  }
  bench.drain();
  EXPECT_EQ(bench.results(), lengths.size());
}

// A reset in the middle of a packet (and with results in flight): no result of anything before it,
// then clean packets come out right.
TEST(CRC32C_SUITE, ResetMidPacketThenCleanPackets) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0xC3C0003);
  std::mt19937_64 rng(seed);
  EngineBench bench(seed);
  for (int round = 0; round < 4; ++round) {
    bench.send({random_bytes(rng, 1 + rng() % 200), {}, 1});  // its result is in flight at the reset
    bench.send_partial({random_bytes(rng, 8 * kBeatBytes), {}, 0}, 1 + rng() % 5);
    bench.reset_now(1 + round);
    for (int i = 0; i < 20; ++i) bench.send({random_bytes(rng, 1 + rng() % 700), {}, static_cast<std::uint16_t>(i)});
    bench.drain();
  }
}

// ---------------------------------------------------------------------------------------------
// The SCTP check

// Every SCTP packet two usrsctp endpoints send each other over AF_CONN: association set-up (INIT with
// the RFC 5043 indication, INIT-ACK with its cookie, COOKIE-ECHO/ACK), session control, DDP segments
// of messages up to several packets long, SACKs.
std::vector<Bytes> usrsctp_packets() {
  using rnic::sctp::test::Pair;
  std::vector<Bytes> out;
  Pair p;
  p.tap = [&out](bool, const rnic::sctp::test::Packet& pkt) { out.push_back(pkt); };
  p.connect();
  if (p.a->state() != rnic::sctp::AssociationState::kReady) {
    ADD_FAILURE() << "usrsctp association not ready: " << p.a->refusal_reason();
    return out;
  }
  p.a->initiate(0);
  p.run([&] { return p.b->session_state(0) == rnic::sctp::SessionState::kInitiateReceived; });
  p.b->accept(0);
  p.run([&] { return p.a->session_state(0) == rnic::sctp::SessionState::kEstablished; });
  std::mt19937_64 rng(5043);
  std::uint32_t qn = 0;
  for (const std::size_t n : {1U, 3U, 17U, 100U, 480U, 1000U, 1400U, 2900U, 9000U, 20000U}) {
    p.a->send_untagged(0, qn % 3, 0, rnic::wire::ConstBytes(random_bytes(rng, n)));
    p.b->send_untagged(0, qn % 3, 0, rnic::wire::ConstBytes(random_bytes(rng, (n * 7) % 3001 + 1)));
    ++qn;
    p.run();
  }
  return out;
}

const std::vector<Bytes>& sctp_packets() {
  static const std::vector<Bytes> pkts = usrsctp_packets();
  return pkts;
}

// RFC 9260 6.8: usrsctp's packets carry the CRC32c at bytes 8..11: every one is ok, back to back and
// with gaps.
TEST(SCTP_SUITE, UsrsctpPacketsAreOk) {
  const auto& pkts = sctp_packets();
  ASSERT_GE(pkts.size(), 30U);
  std::size_t bytes = 0;
  for (const auto& p : pkts) {
    ASSERT_EQ(rnic::wire::load_le32(p.data() + 8), [&] {
      Bytes z = p;
      for (std::size_t i = 8; i < 12; ++i) z[i] = 0;
      return crc32c(z);
    }()) << "usrsctp did not fill the checksum (CRC offload on?)";
    bytes += p.size();
  }
  const std::uint64_t seed = rnic::tb::random_test_seed(0xC3C0004);
  std::mt19937_64 rng(seed);
  SctpBench bench(seed);
  for (const auto& p : pkts) bench.send({p, {}, 0});
  const auto gaps = random_gaps(rng);
  for (const auto& p : pkts) bench.send({p, {}, 0}, gaps);
  bench.drain();
  EXPECT_EQ(bench.results(), 2 * pkts.size());
  std::printf("[   INFO   ] %zu usrsctp packets, %zu bytes, largest %zu\n", pkts.size(), bytes,
              std::max_element(pkts.begin(), pkts.end(), [](const Bytes& a, const Bytes& b) {
                return a.size() < b.size();
              })->size());
}

// RFC 9260 6.8 / RFC 3309: one bit flipped anywhere in a packet (header, checksum field, chunks) and
// the check fails: every bit of the first packet (INIT), a random bit of every other.
TEST(SCTP_SUITE, OneBitFlippedAnywhereIsNotOk) {
  const auto& pkts = sctp_packets();
  ASSERT_FALSE(pkts.empty());
  const std::uint64_t seed = rnic::tb::random_test_seed(0xC3C0005);
  std::mt19937_64 rng(seed);
  SctpBench bench(seed);
  std::size_t sent = 0;
  for (std::size_t bit = 0; bit < 8 * pkts[0].size(); ++bit) {
    Bytes p = pkts[0];
    p[bit / 8] = static_cast<std::uint8_t>(p[bit / 8] ^ (1U << (bit % 8)));
    bench.send({p, {}, 0});
    ++sent;
  }
  for (int pass = 0; pass < 3; ++pass) {
    for (const auto& orig : pkts) {
      Bytes p = orig;
      const std::size_t bit = rng() % (8 * p.size());
      p[bit / 8] = static_cast<std::uint8_t>(p[bit / 8] ^ (1U << (bit % 8)));
      bench.send({p, {}, 0});
      bench.send({orig, {}, 0});  // and the good one right behind it
      sent += 2;
    }
  }
  bench.drain();
  EXPECT_EQ(bench.results(), sent);
}

// Packets shorter than the 12-byte common header (RFC 9260 3.1) are never ok, even when bytes 8..11 as
// offered (the packet's own, then bytes past its end with tkeep 0) hold exactly the CRC32c computed;
// 12 bytes with the right checksum is ok (a packet with no chunks), with a wrong one is not.
TEST(SCTP_SUITE, ShortPacketsAreNotOk) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0xC3C0006);
  std::mt19937_64 rng(seed);
  SctpBench bench(seed);
  for (int round = 0; round < 4; ++round) {
    for (std::size_t n = 1; n <= 13; ++n) {
      const std::size_t len = std::min<std::size_t>(n, 12);
      Bytes data = random_bytes(rng, len);
      Bytes z = data;
      for (std::size_t i = 8; i < len; ++i) z[i] = 0;
      // The CRC32c of the packet with its bytes of 8..11 as zero: what the check computes for it.
      std::uint8_t field[4];
      rnic::wire::store_le32(field, crc32c(z));
      for (std::size_t i = 8; i < len; ++i) data[i] = field[i - 8];
      Bytes tail;
      for (std::size_t i = std::max<std::size_t>(len, 8); i < 12; ++i) tail.push_back(field[i - 8]);
      if (n == 13) data[rng() % 12] ^= 1;  // 12 bytes, a wrong checksum
      bench.send(
          {data, {}, 0, tail}, round >= 2 ? random_gaps(rng) : [] { return 0U; });
    }
  }
  bench.drain();
}

// Random packets (1..9216 bytes), half with the right checksum, back to back and with gaps.
TEST(SCTP_SUITE, RandomPacketsGoodAndBad) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0xC3C0007);
  std::mt19937_64 rng(seed);
  SctpBench bench(seed);
  const auto gaps = random_gaps(rng);
  for (int i = 0; i < 300; ++i) {
    const std::size_t n = rng() % 8 == 0 ? 1 + rng() % 64 : 1 + rng() % 9216;
    Bytes p = random_bytes(rng, n);
    if (n >= 12 && rng() % 2 == 0) {
      for (std::size_t k = 8; k < 12; ++k) p[k] = 0;
      rnic::wire::store_le32(p.data() + 8, crc32c(p));
    }
    bench.send(
        {p, {}, 0}, i % 2 == 0 ? gaps : [] { return 0U; });
  }
  bench.drain();
}

// A reset in the middle of a packet (before, at and after the beat holding the checksum field), then
// usrsctp's packets are all ok.
TEST(SCTP_SUITE, ResetMidPacketThenCleanPackets) {
  const auto& pkts = sctp_packets();
  const std::uint64_t seed = rnic::tb::random_test_seed(0xC3C0008);
  std::mt19937_64 rng(seed);
  SctpBench bench(seed);
  for (std::size_t cut = 1; cut <= 4; ++cut) {
    bench.send({pkts[cut % pkts.size()], {}, 0});
    bench.send_partial({random_bytes(rng, 8 * kBeatBytes), {}, 0}, cut);
    bench.reset_now();
    for (std::size_t i = 0; i < 10; ++i) bench.send({pkts[(cut * 10 + i) % pkts.size()], {}, 0});
    bench.drain();
  }
}

}  // namespace
