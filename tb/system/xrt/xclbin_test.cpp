// SPDX-License-Identifier: Apache-2.0
// inspect_xclbin: the checks the XRT backend makes on an xclbin before it touches a card.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <xrt/xclbin.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/tb/seed.hpp"
#include "test_xclbin.hpp"
#include "xrt_xclbin.hpp"

namespace {

using rnic::Errc;
using rnic::Error;
using rnic::detail::inspect_xclbin;
using rnic::tb::build_xclbin;
using rnic::tb::rnic_test_xclbin;
using rnic::tb::TestXclbin;

class Xclbin : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rnic::tb::make_test_dir(); }
  void TearDown() override { rnic::tb::remove_test_dir(dir_); }

  std::string write(const std::string& name, const std::vector<char>& bytes) {
    return rnic::tb::write_test_file(dir_, name, bytes);
  }
  std::string write(const std::string& name, const TestXclbin& spec) { return write(name, build_xclbin(spec)); }

  // inspect_xclbin must throw code with a message containing every part.
  static void expect_error(const std::string& path, Errc code, const std::vector<std::string>& parts) {
    try {
      inspect_xclbin(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      for (const auto& part : parts)
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "'" << part << "' not in: " << e.what();
    }
  }

  std::string dir_;
};

TEST_F(Xclbin, ValidRnicXclbinIsDescribed) {
  const std::string path = write("rnic.xclbin", rnic_test_xclbin());
  const auto info = inspect_xclbin(path);
  EXPECT_EQ(info.path, path);
  EXPECT_EQ(info.ips, std::vector<std::string>{"rnic_kernel:rnic_kernel_1"});
  EXPECT_EQ(info.ip_name, "rnic_kernel:rnic_kernel_1");
  EXPECT_EQ(info.ip_open_name, "rnic_kernel:{rnic_kernel_1}");
  EXPECT_EQ(info.base_address, 0x1800000u);
  EXPECT_EQ(info.control_bytes, rnic::hw::kMMIO_BYTES);
  EXPECT_TRUE(info.free_running);
  EXPECT_EQ(info.gmem_arg, "gmem");
  EXPECT_EQ(info.gmem.index, 1);
  EXPECT_EQ(info.gmem.tag, "HOST[0]");
  EXPECT_TRUE(info.gmem.host);
  EXPECT_EQ(info.gmem.type, MEM_HOST);
  EXPECT_EQ(info.platform, "xilinx_u250_gen3x16_xdma_4_1_202210_1");
  EXPECT_EQ(info.uuid, "01020304-0506-0708-090a-0b0c0d0e0f10");
}

TEST_F(Xclbin, GmemInCardDdrIsNotHostMemory) {
  const auto info = inspect_xclbin(write("ddr.xclbin", rnic_test_xclbin(0)));
  EXPECT_EQ(info.gmem.index, 0);
  EXPECT_EQ(info.gmem.tag, "bank0");
  EXPECT_FALSE(info.gmem.host);
  EXPECT_EQ(info.gmem.base, 0x4000000000u);
}

TEST_F(Xclbin, SeveralComputeUnitsTheFirstByNameIsUsed) {
  auto spec = rnic_test_xclbin();
  spec.ips = {{"rnic_kernel:rnic_kernel_2", 0x1810000}, {"rnic_kernel:rnic_kernel_1", 0x1800000}};
  spec.connections = {{0, 0, 0}, {0, 1, 1}};
  spec.metadata_xml = R"(<?xml version="1.0"?><project name="rnic"><platform><device><core>
    <kernel name="rnic_kernel" language="ip_c" hwControlProtocol="ap_ctrl_none">
      <port name="s_axi_control" mode="slave" range="0x10000" dataWidth="32" portType="addressable" base="0x0"/>
      <port name="m_axi_gmem" mode="master" range="0xFFFFFFFFFFFFFFFF" dataWidth="512" portType="addressable" base="0x0"/>
      <arg name="gmem" addressQualifier="1" id="0" port="m_axi_gmem" size="0x8" offset="0x10" hostOffset="0x0" hostSize="0x8" type="void*"/>
      <instance name="rnic_kernel_1"><addrRemap base="0x1800000" range="0x10000" port="s_axi_control"/></instance>
      <instance name="rnic_kernel_2"><addrRemap base="0x1810000" range="0x10000" port="s_axi_control"/></instance>
    </kernel></core></device></platform></project>)";
  const auto info = inspect_xclbin(write("two.xclbin", spec));
  EXPECT_EQ(info.ip_name, "rnic_kernel:rnic_kernel_1");
  EXPECT_EQ(info.base_address, 0x1800000u);
  EXPECT_EQ(info.gmem.tag, "HOST[0]");  // rnic_kernel_1's own connection, not rnic_kernel_2's
}

TEST_F(Xclbin, EmptyPathIsInvalidArgument) {
  expect_error("", Errc::kInvalidArgument, {"xrt needs an xclbin", "--xclbin", "RNIC_XCLBIN"});
}

TEST_F(Xclbin, MissingFile) {
  const std::string path = dir_ + "/absent.xclbin";
  expect_error(path, Errc::kNoDevice, {path, "cannot open", "No such file"});
}

TEST_F(Xclbin, DirectoryIsNotAnXclbin) { expect_error(dir_, Errc::kNoDevice, {dir_, "not a regular file"}); }

TEST_F(Xclbin, EmptyFile) {
  // XRT 2.13's own parser crashes on this one (it reads the header without a size check).
  const std::string path = write("empty.xclbin", std::vector<char>{});
  expect_error(path, Errc::kNoDevice, {path, "not an xclbin", "0 bytes"});
}

TEST_F(Xclbin, GarbageFile) {
  std::vector<char> garbage(4096);
  std::mt19937_64 rng(rnic::tb::random_test_seed(0x5eed));
  for (auto& c : garbage) c = static_cast<char>(rng());
  const std::string path = write("garbage.xclbin", garbage);
  expect_error(path, Errc::kNoDevice, {path, "no 'xclbin2' magic"});
}

TEST_F(Xclbin, TruncatedFile) {
  auto bytes = build_xclbin(rnic_test_xclbin());
  bytes.resize(bytes.size() / 2);
  expect_error(write("half.xclbin", bytes), Errc::kNoDevice, {"truncated"});
}

TEST_F(Xclbin, SectionOutsideTheFile) {
  auto bytes = build_xclbin(rnic_test_xclbin());
  const std::uint64_t beyond = bytes.size();
  std::memcpy(bytes.data() + offsetof(axlf, m_sections) + offsetof(axlf_section_header, m_sectionOffset), &beyond,
              sizeof beyond);
  expect_error(write("outside.xclbin", bytes), Errc::kNoDevice, {"lies outside the file"});
}

TEST_F(Xclbin, ConnectionToAMissingMemoryBank) {
  auto spec = rnic_test_xclbin();
  spec.connections = {{0, 0, 7}};
  expect_error(write("badconn.xclbin", spec), Errc::kNoDevice, {"CONNECTIVITY entry 0", "mem 7"});
}

TEST_F(Xclbin, WithoutRnicKernelNamesWhatItHas) {
  auto spec = rnic_test_xclbin();
  spec.ips = {{"vadd:vadd_1", 0x1800000}, {"krnl_mm2s:krnl_mm2s_1", 0x1810000}};
  const std::string path = write("vadd.xclbin", spec);
  expect_error(path, Errc::kNoDevice, {path, "no rnic_kernel IP", "vadd:vadd_1", "krnl_mm2s:krnl_mm2s_1"});
}

TEST_F(Xclbin, PrefixOfTheKernelNameIsNotTheKernel) {
  auto spec = rnic_test_xclbin();
  spec.ips = {{"rnic_kernel_v2:rnic_kernel_v2_1", 0x1800000}};
  expect_error(write("v2.xclbin", spec), Errc::kNoDevice, {"no rnic_kernel IP", "rnic_kernel_v2:rnic_kernel_v2_1"});
}

TEST_F(Xclbin, WithoutIps) {
  auto spec = rnic_test_xclbin();
  spec.ips.clear();
  spec.connections.clear();
  expect_error(write("noip.xclbin", spec), Errc::kNoDevice, {"no rnic_kernel IP", "no IPs"});
}

TEST_F(Xclbin, WithoutKernelMetadataTheControlRangeIsUnknown) {
  auto spec = rnic_test_xclbin();
  spec.metadata_xml.clear();
  expect_error(write("nometa.xclbin", spec), Errc::kNoDevice, {"rnic_kernel:rnic_kernel_1", "control space"});
}

TEST_F(Xclbin, ControlRangeSmallerThanTheRegisterMap) {
  auto spec = rnic_test_xclbin();
  const std::string full = "range=\"0x10000\" dataWidth=\"32\"";
  const auto at = spec.metadata_xml.find(full);
  ASSERT_NE(at, std::string::npos);
  spec.metadata_xml.replace(at, full.size(), "range=\"0x1000\" dataWidth=\"32\"");
  expect_error(write("small.xclbin", spec), Errc::kNoDevice, {"0x1000 bytes of control space", "0x10000"});
}

TEST_F(Xclbin, GmemNotConnected) {
  auto spec = rnic_test_xclbin();
  spec.connections.clear();
  expect_error(write("noconn.xclbin", spec), Errc::kNoDevice, {"connects no memory", "m_axi_gmem"});
}

TEST_F(Xclbin, GmemConnectedToAnUnusedBank) {
  auto spec = rnic_test_xclbin();
  spec.mems[1].used = false;
  expect_error(write("unused.xclbin", spec), Errc::kNoDevice, {"no usable memory bank", "HOST[0] (unused)"});
}

// Caps the address space while a test runs, so a parser that sizes memory by a corrupted number fails
// (std::bad_alloc) instead of taking the machine's memory. Not under AddressSanitizer, which reserves
// terabytes of address space up front.
class AddressSpaceCap {
 public:
  explicit AddressSpaceCap(rlim_t bytes) {
#if !defined(__SANITIZE_ADDRESS__)
    active_ = ::getrlimit(RLIMIT_AS, &saved_) == 0;
    if (active_) {
      rlimit cap = saved_;
      cap.rlim_cur = std::min<rlim_t>(bytes, saved_.rlim_max);
      active_ = ::setrlimit(RLIMIT_AS, &cap) == 0;
    }
#else
    (void)bytes;
#endif
  }
  ~AddressSpaceCap() {
    if (active_) ::setrlimit(RLIMIT_AS, &saved_);
  }
  AddressSpaceCap(const AddressSpaceCap&) = delete;
  AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;

 private:
  rlimit saved_{};
  bool active_ = false;
};

TEST_F(Xclbin, HugeArgumentIndexIsRefusedBeforeXrtSizesByIt) {
  const AddressSpaceCap cap(rlim_t{4} << 30);
  auto spec = rnic_test_xclbin();
  spec.connections = {{0x40000000, 0, 1}};
  expect_error(write("hugearg.xclbin", spec), Errc::kNoDevice, {"argument index 1073741824"});
}

// Whatever bytes the file holds, inspect_xclbin answers with a parse or an rnic::Error, never a crash
// and never an allocation sized by garbage.
TEST_F(Xclbin, CorruptedXclbinsNeverCrash) {
  const AddressSpaceCap cap(rlim_t{4} << 30);
  const auto good = build_xclbin(rnic_test_xclbin());
  std::mt19937_64 rng(rnic::tb::random_test_seed());
  int parsed = 0, refused = 0;
  for (int round = 0; round < 300; ++round) {
    auto bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    const std::string path = write("fuzz.xclbin", bytes);
    try {
      inspect_xclbin(path);
      ++parsed;
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), Errc::kNoDevice) << "round " << round << ": " << e.what();
      ASSERT_EQ(std::string(e.what()).find("bad_alloc"), std::string::npos) << "round " << round << ": " << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  std::printf("parsed %d, refused %d\n", parsed, refused);
}

}  // namespace
