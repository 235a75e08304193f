// SPDX-License-Identifier: Apache-2.0
// The lockstep harness's own tests (built into the lockstep program only): a model that disagrees with the
// RTL must stop the run at the first differing transaction, naming the seed, the cycle and both sides'
// transactions. The disagreement is made by changing one byte of the input the model is replayed.
#include <string>

#include "kernel_test_util.hpp"

#ifndef RNIC_TB_IMPL_LOCKSTEP
#error "kernel_lockstep_test.cpp is built into the lockstep test program only"
#endif

namespace rnic::tb::test {
namespace {

// The exception of the first divergence while the test runs the kernel; "" if none came.
template <class F>
std::string divergence(F&& f) {
  try {
    f();
  } catch (const LockstepDivergence& e) {
    return e.what();
  }
  return "";
}

// A payload byte differs: the model writes another byte to the same address (RFC 5041 7.1 tagged
// placement at base + TO offset).
TEST(KernelLockstep, DataWriteDivergenceStopsTheRun) {
  Env env(test_config(2001, false));
  Std s(env);
  const Bytes payload = env.random_bytes(300);
  // Byte 14 + 40 of the packet: the 40th payload byte of the tagged segment.
  env.sim().top().corrupt_next_model_beat(14 + 40, 0x01);
  const std::string what = divergence([&] {
    env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo + 100, 0x5A, payload, 2000));
    env.drain();
  });
  ASSERT_NE(what, "") << "the model's wrong byte was not noticed";
  EXPECT_NE(what.find("seed 2001"), std::string::npos) << what;
  EXPECT_NE(what.find("cycle "), std::string::npos) << what;
  EXPECT_NE(what.find("host-memory data write"), std::string::npos) << what;
  // Both transactions, at the same address: the first differing byte's (buffer + 100 + 40).
  char addr[32];
  std::snprintf(addr, sizeof addr, "write 0x%llx", static_cast<unsigned long long>(s.buf + 100 + 40));
  EXPECT_NE(what.find(std::string("RTL:   ") + addr), std::string::npos) << what;
  EXPECT_NE(what.find(std::string("model: ") + addr), std::string::npos) << what;
}

// The RsvdULP byte of a tagged segment differs (header byte 1): every data byte agrees, the completion
// (RFC 5041 5.4: RsvdULP of the last segment) does not.
TEST(KernelLockstep, CompletionDivergenceStopsTheRun) {
  Env env(test_config(2002, false));
  Std s(env);
  const Bytes payload = env.random_bytes(64);
  env.sim().top().corrupt_next_model_beat(1, 0x80);
  const std::string what = divergence([&] {
    env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo, 0x11, payload, 2000));
    env.drain();
  });
  ASSERT_NE(what, "") << "the model's wrong completion was not noticed";
  EXPECT_NE(what.find("seed 2002"), std::string::npos) << what;
  EXPECT_NE(what.find(": completion"), std::string::npos) << what;
  EXPECT_NE(what.find("RTL:   completion at"), std::string::npos) << what;
  EXPECT_NE(what.find("model: completion at"), std::string::npos) << what;
  EXPECT_GT(env.sim().top().compared_bytes(), 0u) << "the data bytes were compared (and agreed) first";
}

// Without a change the same traffic agrees everywhere: every byte and completion was compared.
TEST(KernelLockstep, AgreementIsCounted) {
  Env env(test_config(2003, false));
  Std s(env);
  const Bytes payload = env.random_bytes(3000);
  env.send_all(0, tagged_message(Std::kStag, Std::kBaseTo, 0x22, payload, 1000));
  ASSERT_TRUE(env.drain());
  EXPECT_EQ(env.finish(), "");
  EXPECT_EQ(env.sim().top().compared_bytes(), payload.size());
  EXPECT_EQ(env.sim().top().compared_cqes(), 1u);
}

}  // namespace
}  // namespace rnic::tb::test
