// SPDX-License-Identifier: Apache-2.0
// Shared helpers for the rnic_wire unit tests: printers, error matchers, seeded randomness.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "rnic/tb/seed.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/ddp_errors.hpp"
#include "rnic/wire/result.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "rnic/wire/segmentation.hpp"

// gtest printers, found by ADL, so failures show field values instead of raw object bytes.
namespace rnic::wire {

inline void PrintTo(Errc e, std::ostream* os) { *os << "Errc(" << errc_name(e) << ")"; }
inline void PrintTo(DdpError e, std::ostream* os) {
  *os << "DdpError::k" << error_name(e) << " (type 0x" << std::hex << int{error_type(e)} << ", code 0x"
      << int{error_code(e)} << std::dec << ")";
}
inline void PrintTo(const ControlField& c, std::ostream* os) {
  *os << "{T=" << c.tagged << " L=" << c.last << " DV=" << int{c.dv} << "}";
}
inline void PrintTo(const TaggedHeader& h, std::ostream* os) {
  *os << std::hex << "Tagged{L=" << h.last << " DV=" << int{h.dv} << " RsvdULP=0x" << int{h.rsvd_ulp} << " STag=0x"
      << h.stag << " TO=0x" << h.to << "}" << std::dec;
}
inline void PrintTo(const UntaggedHeader& h, std::ostream* os) {
  *os << std::hex << "Untagged{L=" << h.last << " DV=" << int{h.dv} << " RsvdULP=0x" << h.rsvd_ulp << " QN=0x" << h.qn
      << " MSN=0x" << h.msn << " MO=0x" << h.mo << "}" << std::dec;
}
inline void PrintTo(const SessionControl& m, std::ostream* os) {
  *os << "SessionControl{SSN=" << m.ddp_ssn << " fn=" << static_cast<unsigned>(m.function)
      << " private=" << m.private_data.size() << " bytes}";
}

}  // namespace rnic::wire

namespace rnic::wire::test {

using Bytes = std::vector<std::uint8_t>;

// Succeeds iff r holds an error with code `want`.
template <typename T>
::testing::AssertionResult FailsWith(const Result<T>& r, Errc want) {
  if (r.ok()) {
    return ::testing::AssertionFailure() << "expected error " << errc_name(want) << ", got a value";
  }
  if (r.error().code != want) {
    return ::testing::AssertionFailure() << "expected error " << errc_name(want) << ", got " << r.error().message();
  }
  return ::testing::AssertionSuccess();
}

// Succeeds iff r holds a value; otherwise shows the error message.
template <typename T>
::testing::AssertionResult Succeeds(const Result<T>& r) {
  if (r.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "unexpected error: " << r.error().message();
}

inline std::string hex(const std::uint8_t* p, std::size_t n) {
  std::ostringstream s;
  s << std::hex << std::setfill('0');
  for (std::size_t i = 0; i < n; ++i) s << (i ? " " : "") << std::setw(2) << int{p[i]};
  return s.str();
}
inline std::string hex(const Bytes& b) { return hex(b.data(), b.size()); }
inline std::string hex(ConstBytes b) { return hex(b.data, b.size); }

inline Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

// Fixture for randomised tests: prints and records the seed and seeds rng().
class SeededTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = rnic::tb::random_test_seed();  // printed and recorded; RNIC_TEST_SEED=<seed> replays
    rng_.seed(seed_);
  }
  std::string seed_trace() const { return "RNIC_TEST_SEED=" + std::to_string(seed_) + " reproduces this run"; }
  std::mt19937_64& engine() { return rng_; }
  std::uint64_t seed_ = 0;

 private:
  std::mt19937_64 rng_;
};

}  // namespace rnic::wire::test
