// SPDX-License-Identifier: Apache-2.0
// Probes for scripts/regress.py's own test (regress_test.sh): a randomised test whose outcome the test
// plants through the environment, so that a sweep has a known failing seed and a known dying shard.
//   RNIC_REGRESS_PROBE_FAIL_SEED=<n>  RegressProbe.Seeded fails at seed n (and passes at every other);
//   RNIC_REGRESS_PROBE_KILL_SEED=<n>  RegressProbe.Seeded kills the process that started it at seed n
//                                     (a shard that dies under the runner).
// Unset, both tests pass: in the default run they are two quick tests like any other.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "rnic/tb/seed.hpp"

namespace {

std::uint64_t planted(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? 0 : std::stoull(v);
}

TEST(RegressProbe, Seeded) {
  const std::uint64_t seed = rnic::tb::random_test_seed(1);
  if (seed == planted("RNIC_REGRESS_PROBE_KILL_SEED")) kill(getppid(), SIGKILL);
  EXPECT_NE(seed, planted("RNIC_REGRESS_PROBE_FAIL_SEED")) << "the seed planted to fail";
}

TEST(RegressProbe, Deterministic) { EXPECT_EQ(1 + 1, 2); }

}  // namespace
