// SPDX-License-Identifier: Apache-2.0
// make_xrt_backend on a machine without an Alveo card: the xclbin is judged first, then the missing
// card is reported as kNoDevice naming the index (no crash, no hang).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backend.hpp"
#include "rnic/driver/rnic.hpp"
#include "test_xclbin.hpp"

namespace {

using rnic::Errc;
using rnic::Error;
using rnic::detail::make_xrt_backend;

class XrtNoCard : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = rnic::tb::make_test_dir();
    xclbin_ = rnic::tb::write_test_file(dir_, "rnic.xclbin", rnic::tb::build_xclbin(rnic::tb::rnic_test_xclbin()));
  }
  void TearDown() override { rnic::tb::remove_test_dir(dir_); }

  // The error make_xrt_backend(index, path) throws (a failure if it returns).
  static Error open_error(unsigned index, const std::string& path) {
    try {
      make_xrt_backend(index, path);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "make_xrt_backend(" << index << ", " << path << ") opened a card";
    return Error(Errc::kBackend, "");
  }

  static bool contains(const Error& e, const std::string& part) {
    return std::string(e.what()).find(part) != std::string::npos;
  }

  std::string dir_, xclbin_;
};

TEST_F(XrtNoCard, ValidXclbinFailsAtTheDevice) {
  for (unsigned index : {0u, 3u}) {
    const Error e = open_error(index, xclbin_);
    EXPECT_EQ(e.code(), Errc::kNoDevice) << e.what();
    const std::string card = "no Alveo card at index " + std::to_string(index);
    EXPECT_TRUE(contains(e, "xrt:" + std::to_string(index) + ":")) << e.what();
    EXPECT_TRUE(contains(e, card)) << e.what();
    EXPECT_FALSE(contains(e, "xclbin '")) << "the xclbin was fine: " << e.what();
    if (std::getenv("RNIC_EXPECT_XRT_SHIM") != nullptr) {
      // XRT got past its shim loader and looked for the card itself.
      EXPECT_TRUE(contains(e, "Could not open device with index '" + std::to_string(index) + "'")) << e.what();
      EXPECT_TRUE(contains(e, "xbutil examine")) << e.what();
    }
  }
}

TEST_F(XrtNoCard, XclbinIsCheckedBeforeTheDevice) {
  auto spec = rnic::tb::rnic_test_xclbin();
  spec.ips = {{"vadd:vadd_1", 0x1800000}};
  const std::string vadd = rnic::tb::write_test_file(dir_, "vadd.xclbin", rnic::tb::build_xclbin(spec));
  const std::string garbage = rnic::tb::write_test_file(dir_, "garbage.xclbin", std::vector<char>(600, 'x'));
  const std::string absent = dir_ + "/absent.xclbin";

  struct Case {
    std::string path;
    Errc code;
    std::string part;
  };
  for (const Case& c :
       {Case{"", Errc::kInvalidArgument, "xrt needs an xclbin: --xclbin or RNIC_XCLBIN"},
        Case{absent, Errc::kNoDevice, absent + "': cannot open"}, Case{garbage, Errc::kNoDevice, "no 'xclbin2' magic"},
        Case{vadd, Errc::kNoDevice, "no rnic_kernel IP (it contains: vadd:vadd_1)"}}) {
    const Error e = open_error(0, c.path);
    EXPECT_EQ(e.code(), c.code) << e.what();
    EXPECT_TRUE(contains(e, c.part)) << "'" << c.part << "' not in: " << e.what();
    EXPECT_FALSE(contains(e, "Alveo card")) << "device touched for a bad xclbin: " << e.what();
  }
}

}  // namespace

namespace {

// The same through the public API: the device string picks the XRT backend, the xclbin comes from
// OpenOptions or RNIC_XCLBIN, and the missing card is kNoDevice (no crash, no hang, nothing opened).
TEST_F(XrtNoCard, DeviceOpenReportsNoCard) {
  rnic::OpenOptions o;
  o.xclbin = xclbin_;
  try {
    rnic::Device::open("xrt:0", o);
    ADD_FAILURE() << "Device::open(xrt:0) opened a card";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kNoDevice) << e.what();
    EXPECT_TRUE(contains(e, "no Alveo card at index 0")) << e.what();
  }
  ::setenv("RNIC_XCLBIN", xclbin_.c_str(), 1);
  try {
    rnic::Device::open("xrt:1");
    ADD_FAILURE() << "Device::open(xrt:1) opened a card";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kNoDevice) << e.what();  // the xclbin was found: the card is missing
    EXPECT_TRUE(contains(e, "no Alveo card at index 1")) << e.what();
  }
  ::unsetenv("RNIC_XCLBIN");
  try {
    rnic::Device::open("xrt:0");
    ADD_FAILURE() << "Device::open(xrt:0) without an xclbin opened a card";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
  }
}

}  // namespace
