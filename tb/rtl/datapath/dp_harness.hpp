// SPDX-License-Identifier: Apache-2.0
// Small helpers shared by the datapath RTL tests: the seed, the clock/trace harness and byte-level
// access to Verilated signals of any width (CData..QData, VlWide<N>).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <verilated.h>

#include <verilated_fst_c.h>
#include "rnic/tb/rtl_structs.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/stage_sim.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace dp {

// Little-endian byte access: byte i of the buffer is bits [8*i+7 : 8*i] of the signal
// (rnic/tb/rtl_structs.hpp).
template <class T>
void set_bytes(T& sig, const std::uint8_t* p, std::size_t n) {
  rnic::tb::put_bytes(sig, p, n);
}
template <class T>
void get_bytes(const T& sig, std::uint8_t* p, std::size_t n) {
  rnic::tb::take_bytes(sig, p, n);
}
template <class T>
std::vector<std::uint8_t> get_bytes(const T& sig, std::size_t n) {
  return rnic::tb::take_bytes(sig, n);
}

// Random bytes for a signal of `width` bits (little endian; the bits above the width are 0).
inline std::vector<std::uint8_t> random_bytes(std::mt19937_64& rng, unsigned width) {
  std::vector<std::uint8_t> e((width + 7) / 8);
  for (auto& b : e) b = static_cast<std::uint8_t>(rng());
  if (width % 8 != 0) e.back() = static_cast<std::uint8_t>(e.back() & ((1U << (width % 8)) - 1U));
  return e;
}

// The traffic of a one-stage handshake bench (skid buffer, register slice): 20 rounds of phases
// with different offer/ready rates (balanced, upstream-bound, downstream-bound, full rate, both
// random, downstream stalled), 300 cycles each, then drained. Bench: cycle(offer, ready),
// chance(p), in_flight().
template <class Bench>
void run_rate_phases(Bench& tb) {
  const double rates[][2] = {{0.5, 0.5}, {1.0, 0.3}, {0.3, 1.0}, {1.0, 1.0}, {0.9, 0.9}, {1.0, 0.0}};
  for (int round = 0; round < 20 && !::testing::Test::HasFailure(); ++round) {
    for (const auto& r : rates) {
      for (int i = 0; i < 300 && !::testing::Test::HasFailure(); ++i) tb.cycle(tb.chance(r[0]), tb.chance(r[1]));
    }
  }
  while (tb.in_flight() > 0 && !::testing::Test::HasFailure()) tb.cycle(false, true);
}

// Bits [lsb, lsb+width) of a byte vector (little endian), width <= 64.
inline std::uint64_t bits(const std::vector<std::uint8_t>& v, unsigned lsb, unsigned width) {
  std::uint64_t r = 0;
  for (unsigned i = 0; i < width; ++i) {
    const unsigned b = lsb + i;
    if (((v.at(b / 8) >> (b % 8)) & 1U) != 0) r |= std::uint64_t{1} << i;
  }
  return r;
}

// For a death test: Verilator reports a failed assertion on stdout, a death test reads stderr, so
// stdout goes to stderr, unbuffered. Call it inside the statement that is expected to die.
inline void verilator_reports_to_stderr() {
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  std::setvbuf(stdout, nullptr, _IONBF, 0);
}

// Clock, reset and FST trace around a model with clk_i/rst_ni: rnic/tb/stage_sim.hpp.
template <class M>
using Sim = rnic::tb::StageSim<M>;

}  // namespace dp
