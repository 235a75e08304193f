// SPDX-License-Identifier: Apache-2.0
// rnic_kernel at 512 bits: random mixed traffic against the reference model (kernel_random.hpp).
#include "kernel_random.hpp"

namespace rnic::tb::test {
namespace {

TEST(KernelRandom, MixedTrafficVsModel) {
  Env env(test_config(301));
  RandomTrafficOptions o;
  const RandomStats st = random_traffic(env, o);
  EXPECT_GE(st.segments, o.segments);
  EXPECT_EQ(env.finish(), "");
}

// Fast input and memory (no random stalls): the pipeline at full rate with the same checks.
TEST(KernelRandom, MixedTrafficFullRate) {
  Env env(test_config(302, false));
  RandomTrafficOptions o;
  o.segments = 1500;
  random_traffic(env, o);
  EXPECT_EQ(env.finish(), "");
}

}  // namespace
}  // namespace rnic::tb::test
