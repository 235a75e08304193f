// SPDX-License-Identifier: Apache-2.0
// The seed of a randomised test, the one reader of RNIC_TEST_SEED for every testbench:
//   unset or empty  the test's fixed default seed if it has one, else a fresh random seed;
//   <decimal>       e.g. RNIC_TEST_SEED=1234;
//   0x<hex>         e.g. RNIC_TEST_SEED=0x5eed;
//   random          a fresh random seed (also for tests with a fixed default).
// Anything else (a sign, spaces, trailing characters, a value over 64 bits) is refused with
// std::invalid_argument naming the value, never read as 0. The seed is always printed as
// "[   SEED   ] RNIC_TEST_SEED=<n>" and recorded as the test's RNIC_TEST_SEED property, so
//   RNIC_TEST_SEED=<n> <test executable> --gtest_filter=<test>
// replays a failure.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rnic::tb {

// A fresh, unpredictable seed.
inline std::uint64_t fresh_test_seed() {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) | rd();
}

// RNIC_TEST_SEED's value: the seed, or nullopt for "random". Throws std::invalid_argument otherwise.
inline std::optional<std::uint64_t> parse_test_seed(std::string_view text) {
  if (text == "random") return std::nullopt;
  const auto refuse = [&text](const char* why) {
    return std::invalid_argument("RNIC_TEST_SEED='" + std::string(text) + "' " + why +
                                 ": use a decimal number, 0x-hex or 'random'");
  };
  unsigned base = 10;
  std::string_view digits = text;
  if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  if (digits.empty()) throw refuse("has no digits");
  std::uint64_t v = 0;
  for (const char c : digits) {
    unsigned d = 0;
    if (c >= '0' && c <= '9') {
      d = static_cast<unsigned>(c - '0');
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      d = static_cast<unsigned>(c - 'a') + 10;
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      d = static_cast<unsigned>(c - 'A') + 10;
    } else {
      throw refuse("is not a seed");
    }
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / base) throw refuse("does not fit 64 bits");
    v = v * base + d;
  }
  return v;
}

// The seed of a randomised test (see the top of this file). fixed_default != 0: the seed when
// RNIC_TEST_SEED is unset (tests that must be reproducible in CI by default).
inline std::uint64_t random_test_seed(std::uint64_t fixed_default = 0) {
  std::uint64_t seed = fixed_default;
  const char* env = std::getenv("RNIC_TEST_SEED");
  if (env != nullptr && *env != '\0') {
    const std::optional<std::uint64_t> given = parse_test_seed(env);
    seed = given ? *given : fresh_test_seed();
  } else if (seed == 0) {
    seed = fresh_test_seed();
  }
  std::printf("[   SEED   ] RNIC_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  ::testing::Test::RecordProperty("RNIC_TEST_SEED", std::to_string(seed));
  return seed;
}

}  // namespace rnic::tb
