// SPDX-License-Identifier: Apache-2.0
// rnic/tb/seed.hpp: the one reader of RNIC_TEST_SEED. Decimal, 0x-hex and "random" are accepted; a
// malformed value is refused with a message naming it (never read as 0); the seed is printed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include "rnic/tb/seed.hpp"

namespace {

using rnic::tb::parse_test_seed;
using rnic::tb::random_test_seed;

// Sets RNIC_TEST_SEED for one test and restores what was there.
class TestSeed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("RNIC_TEST_SEED")) saved_ = old;
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("RNIC_TEST_SEED", saved_->c_str(), 1);
    } else {
      ::unsetenv("RNIC_TEST_SEED");
    }
  }
  static void set(const char* v) { ::setenv("RNIC_TEST_SEED", v, 1); }
  static void unset() { ::unsetenv("RNIC_TEST_SEED"); }

 private:
  std::optional<std::string> saved_;
};

TEST_F(TestSeed, DecimalAndHex) {
  EXPECT_EQ(parse_test_seed("0"), 0u);
  EXPECT_EQ(parse_test_seed("1234"), 1234u);
  EXPECT_EQ(parse_test_seed("18446744073709551615"), 18446744073709551615ull);
  EXPECT_EQ(parse_test_seed("0x5eed"), 0x5eedu);
  EXPECT_EQ(parse_test_seed("0XABCDEF"), 0xABCDEFu);
  EXPECT_EQ(parse_test_seed("0xffffffffffffffff"), 0xffffffffffffffffull);
  EXPECT_EQ(parse_test_seed("010"), 10u) << "decimal, not octal";
  EXPECT_EQ(parse_test_seed("random"), std::nullopt);
}

TEST_F(TestSeed, MalformedIsRefusedNamingTheValue) {
  for (const char* bad : {"12x", "-1", "+1", " 1", "1 ", "0x", "0xg", "abc", "Random", "1.5", "18446744073709551616",
                          "0x10000000000000000"}) {
    try {
      parse_test_seed(bad);
      ADD_FAILURE() << "RNIC_TEST_SEED='" << bad << "' accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("RNIC_TEST_SEED='") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST_F(TestSeed, EnvironmentOverridesTheDefaultAndIsPrinted) {
  set("0x10");
  ::testing::internal::CaptureStdout();
  const std::uint64_t s = random_test_seed(7);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(s, 16u);
  EXPECT_NE(out.find("RNIC_TEST_SEED=16\n"), std::string::npos) << out;
}

TEST_F(TestSeed, UnsetUsesTheFixedDefaultElseAFreshSeed) {
  unset();
  EXPECT_EQ(random_test_seed(7), 7u);
  set("");
  EXPECT_EQ(random_test_seed(7), 7u) << "empty is unset";
  // Fresh seeds: two 64-bit draws from std::random_device are equal with probability 2^-64.
  EXPECT_NE(random_test_seed(), random_test_seed());
  set("random");
  EXPECT_NE(random_test_seed(7), random_test_seed(7));
}

TEST_F(TestSeed, MalformedEnvironmentFailsTheTest) {
  set("12x");
  EXPECT_THROW(random_test_seed(), std::invalid_argument);
  EXPECT_THROW(random_test_seed(7), std::invalid_argument);
}

}  // namespace
