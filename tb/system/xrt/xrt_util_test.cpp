// SPDX-License-Identifier: Apache-2.0
// The card-free parts of the XRT backend: argument checks and the published-state file.
#include "xrt_util.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "rnic/driver/rnic.hpp"
#include "rnic/hw/hw.hpp"
#include "test_xclbin.hpp"

namespace {

using rnic::Errc;
using rnic::Error;
using namespace rnic::detail;

Errc code_of(void (*f)()) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return Errc::kBackend;  // "no error" shows up as a mismatch
}

TEST(XrtUtil, MmioOffsetsInsideTheRegisterMap) {
  EXPECT_NO_THROW(check_xrt_mmio_offset(0, "read32"));
  EXPECT_NO_THROW(check_xrt_mmio_offset(rnic::hw::kRegCMD_ARG0, "read32"));
  EXPECT_NO_THROW(check_xrt_mmio_offset(rnic::hw::kMMIO_BYTES - 4, "write32"));
  EXPECT_EQ(code_of([] { check_xrt_mmio_offset(rnic::hw::kMMIO_BYTES, "read32"); }), Errc::kInvalidArgument);
  EXPECT_EQ(code_of([] { check_xrt_mmio_offset(0xffffffffu, "read32"); }), Errc::kInvalidArgument);
  EXPECT_EQ(code_of([] { check_xrt_mmio_offset(2, "write32"); }), Errc::kInvalidArgument);
  try {
    check_xrt_mmio_offset(0x10000, "write32");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("write32: offset 0x10000"), std::string::npos) << e.what();
  }
}

TEST(XrtUtil, AllocArguments) {
  EXPECT_NO_THROW(check_xrt_alloc(1, 64));
  EXPECT_NO_THROW(check_xrt_alloc(1 << 20, 4096));
  EXPECT_EQ(code_of([] { check_xrt_alloc(0, 64); }), Errc::kInvalidArgument);
  EXPECT_EQ(code_of([] { check_xrt_alloc(64, 32); }), Errc::kInvalidArgument);
  EXPECT_EQ(code_of([] { check_xrt_alloc(64, 96); }), Errc::kInvalidArgument);
  EXPECT_EQ(code_of([] { check_xrt_alloc(64, 8192); }), Errc::kInvalidArgument);
}

class XrtState : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rnic::tb::make_test_dir(); }
  void TearDown() override { rnic::tb::remove_test_dir(dir_); }
  std::string dir_;
};

TEST_F(XrtState, PathFollowsXdgRuntimeDir) {
  const char* old = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_RUNTIME_DIR", dir_.c_str(), 1);
  EXPECT_EQ(xrt_state_path(2), dir_ + "/rnic-xrt2.json");
  ::setenv("XDG_RUNTIME_DIR", "", 1);
  EXPECT_EQ(xrt_state_path(0), "/tmp/rnic-xrt0.json");
  if (old != nullptr)
    ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  else
    ::unsetenv("XDG_RUNTIME_DIR");
}

TEST_F(XrtState, PublishThenReadBack) {
  const std::string path = dir_ + "/rnic-xrt0.json";
  EXPECT_EQ(read_state_file(path), "");  // nothing published yet
  write_state_file(path, R"({"clients":[]})");
  EXPECT_EQ(read_state_file(path), R"({"clients":[]})");
  write_state_file(path, R"({"clients":[{"id":1}]})");  // replaced, not appended
  EXPECT_EQ(read_state_file(path), R"({"clients":[{"id":1}]})");
  write_state_file(path, "");
  EXPECT_EQ(read_state_file(path), "");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(XrtState, NoTemporaryFilesLeftBehind) {
  write_state_file(dir_ + "/rnic-xrt0.json", "{}");
  write_state_file(dir_ + "/rnic-xrt0.json", "{}");
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(XrtState, UnwritableDirectoryIsABackendError) {
  const std::string path = dir_ + "/missing-dir/rnic-xrt0.json";
  try {
    write_state_file(path, "{}");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kBackend);
    EXPECT_NE(std::string(e.what()).find(dir_ + "/missing-dir"), std::string::npos) << e.what();
  }
}

TEST_F(XrtState, UnreadableStateIsABackendError) {
  // A directory where the file should be: it exists, but cannot be read as the state.
  const std::string path = dir_ + "/rnic-xrt0.json";
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  EXPECT_THROW(
      {
        try {
          read_state_file(path);
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), Errc::kBackend) << e.what();
          throw;
        }
      },
      Error);
}

}  // namespace
