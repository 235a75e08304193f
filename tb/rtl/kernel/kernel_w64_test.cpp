// SPDX-License-Identifier: Apache-2.0
// rnic_kernel at DATA_WIDTH = 64 (its own Verilated model): smoke test with random mixed traffic
// against the reference model.
#include "kernel_random.hpp"

namespace rnic::tb::test {
namespace {

TEST(KernelW64, MixedTrafficVsModel) {
  Env env(test_config(401));
  RandomTrafficOptions o;
  o.segments = 1000;
  o.max_message = 3000;
  const RandomStats st = random_traffic(env, o);
  EXPECT_GE(st.segments, o.segments);
  EXPECT_EQ(env.finish(), "");
}

}  // namespace
}  // namespace rnic::tb::test
