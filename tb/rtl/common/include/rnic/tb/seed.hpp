// The seed of a randomised RTL test: RNIC_TEST_SEED (decimal or 0x-hex) if set, else a fresh random
// one. Always printed and recorded so a failure can be replayed.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace rnic::tb {

// fixed_default != 0: use it instead of a random seed when RNIC_TEST_SEED is unset.
inline std::uint64_t random_test_seed(std::uint64_t fixed_default = 0) {
  std::uint64_t seed = fixed_default;
  const char* env = std::getenv("RNIC_TEST_SEED");
  if (env != nullptr && *env != '\0') {
    seed = std::strtoull(env, nullptr, 0);
  } else if (seed == 0) {
    std::random_device rd;
    seed = (std::uint64_t{rd()} << 32) | rd();
  }
  std::printf("[   SEED   ] RNIC_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  ::testing::Test::RecordProperty("RNIC_TEST_SEED", std::to_string(seed));
  return seed;
}

}  // namespace rnic::tb
