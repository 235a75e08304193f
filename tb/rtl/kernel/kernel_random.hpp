// SPDX-License-Identifier: Apache-2.0
// Random mixed traffic against the reference model, shared by the 512- and 64-bit test executables.
//
// Rounds of: (between rounds, with the kernel quiet) re-enable streams the model says are in error,
// sometimes rewrite an STag or tear a stream down and bring it back; post the round's receive
// buffers; then tagged and untagged messages of several streams with random sizes and MULPDUs,
// each stream's segments shuffled in small blocks inside the DDP-SSN window, duplicates of pending
// segments, all streams interleaved, a few segments corrupted into each kind of 7.2 error; host memory
// with random ready/latency and the input with random idle cycles. The scoreboard compares every
// completion, the final host memory and the counters with the model (KernelEnv::finish()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernel_test_util.hpp"

namespace rnic::tb::test {

struct RandomTrafficOptions {
  unsigned segments = 3000;  // stop after the round that reaches this many segments
  unsigned streams = 6;      // streams 0..streams-1; the last one has PD 2
  unsigned max_message = 6000;
  double error_rate = 0.05;  // per message
  double duplicate_rate = 0.05;
};

struct RandomStats {
  unsigned segments = 0, messages = 0, errors_injected = 0, duplicates = 0, rounds = 0;
};

inline RandomStats random_traffic(Env& env, const RandomTrafficOptions& o) {
  auto& rng = env.rng();
  auto uni = [&rng](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  auto chance = [&rng](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  RandomStats st;
  env.start(6);  // 64-entry completion ring: many laps (phase flips), sometimes full

  // STags: index, buffer, base TO; index 3 bound to stream 1, index 4 without remote write, index 6
  // with a TO range near 2^64, index 7 in the other PD.
  struct Tag {
    StagArgs a;
  };
  std::vector<Tag> tags;
  for (std::uint32_t i = 0; i < 8; ++i) {
    StagArgs a;
    a.index = 16 + i * 29;
    a.key = static_cast<std::uint8_t>(uni(0, 255));
    a.pd = i == 7 ? 2 : 1;
    a.length = std::uint64_t{4096} << uni(0, 4);
    a.base_to = i == 6 ? ~std::uint64_t{0} - a.length : uni(0, 1ull << 40);
    a.host_addr = env.alloc(a.length, 64, uni(0, 63));
    a.remote_write = i != 4;
    if (i == 3) a.bound_stream = 1;
    EXPECT_FALSE(env.stag_write(a));
    tags.push_back(Tag{a});
  }
  auto enable = [&](std::uint16_t s) {
    EXPECT_FALSE(env.stream_enable(s, s + 1u == o.streams ? 2 : 1));
    EXPECT_FALSE(env.queue_config(s, 0, 4));
    EXPECT_FALSE(env.queue_config(s, 1, 4));
  };
  for (std::uint16_t s = 0; s < o.streams; ++s) enable(s);

  const std::size_t mulpdus[] = {64, 200, 576, 1460, 4096, 9014};
  struct Tx {
    std::uint16_t stream, ssn;
    Bytes seg;
  };

  while (st.segments < o.segments) {
    ++st.rounds;
    // Between rounds (quiet): recover streams in error, sometimes change the tables.
    if (!env.drain()) {
      ADD_FAILURE() << "round " << st.rounds << ": " << env.finish();
      return st;
    }
    for (std::uint16_t s = 0; s < o.streams; ++s) {
      if (env.model().stream_state(s) != rnic::model::StreamState::kNormal) enable(s);
    }
    if (chance(0.2)) {
      Tag& t = tags[uni(0, tags.size() - 1)];
      t.a.key = static_cast<std::uint8_t>(t.a.key + 1);
      EXPECT_FALSE(env.stag_write(t.a));
    }
    if (chance(0.1)) {
      const auto s = static_cast<std::uint16_t>(uni(0, o.streams - 1));
      EXPECT_FALSE(env.stream_teardown(s));
      env.send(s, 0, tagged_message(tags[0].a.index << 8 | tags[0].a.key, tags[0].a.base_to, 0, Bytes(10, 1), 100)[0]);
      enable(s);
    }

    std::vector<std::vector<Tx>> per(o.streams);
    for (std::uint16_t s = 0; s < o.streams; ++s) {
      const bool pd2 = s + 1u == o.streams;
      const unsigned msgs = static_cast<unsigned>(uni(1, 4));
      std::vector<Tx> segs;
      std::uint32_t next_msn[2] = {env.drv().rq_prod(s, 0) + 1, env.drv().rq_prod(s, 1) + 1};
      for (unsigned m = 0; m < msgs; ++m) {
        const std::size_t mulpdu = mulpdus[uni(0, 5)];
        std::uint64_t len = chance(0.05) ? 0 : uni(1, std::min<std::uint64_t>(o.max_message, 40 * (mulpdu - 18)));
        std::vector<Bytes> msg;
        const bool tagged = pd2 ? chance(0.3) : chance(0.65);
        if (tagged) {
          // PD 1 streams: tags 0, 1, 2, 6 (near 2^64), and 3 on stream 1 (bound to it).
          const unsigned pick[] = {0, 1, 2, 6, 3};
          const Tag& t = pd2 ? tags[7] : tags[pick[uni(0, s == 1 ? 4 : 3)]];
          len = std::min<std::uint64_t>(len, t.a.length);
          const std::uint64_t off = uni(0, t.a.length - len);
          const std::uint32_t stag = (t.a.index << 8) | t.a.key;
          msg = tagged_message(stag, t.a.base_to + off, static_cast<std::uint8_t>(uni(0, 255)), env.random_bytes(len),
                               mulpdu);
        } else {
          const std::uint32_t qn = static_cast<std::uint32_t>(uni(0, 1));
          const std::uint32_t blen = static_cast<std::uint32_t>(chance(0.2) ? len : len + uni(0, 300));
          const std::uint64_t b = env.alloc(std::max<std::uint32_t>(blen, 1), 16, uni(0, 15));
          const std::uint32_t msn = env.post_recv(s, qn, b, blen, false, 0);
          EXPECT_EQ(msn, next_msn[qn]++);
          msg = untagged_message(qn, msn, uni(0, (1ull << 40) - 1), env.random_bytes(len), mulpdu);
        }
        std::size_t bad_ssn = msg.size();  // index of a segment sent outside the DDP-SSN window
        if (chance(o.error_rate)) {        // corrupt one segment of the message
          ++st.errors_injected;
          const std::size_t k = uni(0, msg.size() - 1);
          Bytes& g = msg[k];
          const bool t = (g[0] & 0x80) != 0;
          const unsigned kind = static_cast<unsigned>(uni(0, 6));
          if (kind == 0) {  // DV 2
            g[0] = static_cast<std::uint8_t>((g[0] & ~3u) | 2u);
          } else if (kind == 1) {  // shorter than its header
            g.resize(uni(1, t ? 13 : 17));
          } else if (kind == 2) {  // STag key / QN beyond CAP_QNS
            g[t ? 5 : 9] = t ? static_cast<std::uint8_t>(g[5] ^ 0x5A) : 7;
          } else if (kind == 3) {  // STag index beyond the table / MSN without a buffer
            g[t ? 2 : 13] = static_cast<std::uint8_t>(t ? g[2] ^ 0x80 : g[13] + 40);
          } else if (kind == 4) {  // TO / MO far off
            g[t ? 8 : 14] ^= 0x40;
          } else if (kind == 5) {  // an STag without remote write / DV 0
            if (t) {
              g[2] = g[3] = 0;
              g[4] = static_cast<std::uint8_t>(tags[4].a.index);
              g[5] = tags[4].a.key;
            } else {
              g[0] = static_cast<std::uint8_t>(g[0] & ~3u);
            }
          } else {
            bad_ssn = k;
          }
        }
        for (std::size_t k = 0; k < msg.size(); ++k) {
          const std::uint16_t ssn = env.tx_ssn(s)++;
          segs.push_back(Tx{s, static_cast<std::uint16_t>(k == bad_ssn ? ssn + 100 : ssn), std::move(msg[k])});
        }
        ++st.messages;
      }
      // Blocks of 1..16 segments: shuffled, or the block's first segment held back to its end with
      // duplicates of the others inside (they are placed and pending, so counted as duplicates).
      for (std::size_t i = 0; i < segs.size();) {
        const std::size_t n = std::min<std::size_t>(segs.size() - i, uni(1, 16));
        std::vector<Tx> blk(segs.begin() + static_cast<std::ptrdiff_t>(i),
                            segs.begin() + static_cast<std::ptrdiff_t>(i + n));
        if (n > 2 && chance(0.3)) {
          Tx first = blk.front();
          blk.erase(blk.begin());
          std::shuffle(blk.begin(), blk.end(), rng);
          const std::size_t d = uni(0, blk.size() - 1);
          if (chance(o.duplicate_rate * 10)) {
            blk.insert(blk.begin() + static_cast<std::ptrdiff_t>(uni(d + 1, blk.size())), blk[d]);
            ++st.duplicates;
          }
          blk.push_back(first);
        } else {
          std::shuffle(blk.begin(), blk.end(), rng);
        }
        per[s].insert(per[s].end(), blk.begin(), blk.end());
        i += n;
      }
      for (std::uint32_t q = 0; q < 2; ++q) env.drv().ring_doorbell(s, q);
    }
    env.run(64);  // doorbells reach lookup before any segment
    std::vector<std::size_t> pos(o.streams, 0);
    for (;;) {
      std::vector<unsigned> live;
      for (unsigned s = 0; s < o.streams; ++s) {
        if (pos[s] < per[s].size()) live.push_back(s);
      }
      if (live.empty()) break;
      const unsigned s = live[uni(0, live.size() - 1)];
      const Tx& t = per[s][pos[s]++];
      env.send(t.stream, t.ssn, t.seg);
      ++st.segments;
      if (env.src().pending() > 64) env.run_until([&] { return env.src().pending() < 16; }, 1000000);
    }
  }
  std::printf("[ random   ] %u rounds, %u messages, %u segments, %u corrupted, %u duplicates, %llu cycles\n", st.rounds,
              st.messages, st.segments, st.errors_injected, st.duplicates,
              static_cast<unsigned long long>(env.cycle()));
  return st;
}

}  // namespace rnic::tb::test
