// SPDX-License-Identifier: Apache-2.0
// Under scripts/xrt_emu.sh only (ctest XrtEmu.CardKilledMidRun): the real XRT runtime drives rnic-sim;
// the simulated card is SIGKILLed mid-run. The driver must report it (an error naming the register
// access) and never hang, and closing the device must return: rnic-sim's guardian (the process XRT
// started) answers XRT from then on.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "rnic/driver/rnic.hpp"
#include "rnic/hw/hw.hpp"

namespace rnic {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

pid_t parent_of(pid_t pid) {
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 2));
  char state = 0;
  long ppid = -1;
  rest >> state >> ppid;
  return static_cast<pid_t>(ppid);
}

// The card: an rnic-sim whose parent (the guardian XRT started) is an rnic-sim started by this process.
pid_t find_card() {
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::atol(name.c_str()));
    if (read_text("/proc/" + name + "/comm").rfind("rnic-sim", 0) != 0) continue;
    const pid_t guardian = parent_of(pid);
    if (guardian > 0 && read_text("/proc/" + std::to_string(guardian) + "/comm").rfind("rnic-sim", 0) == 0 &&
        parent_of(guardian) == ::getpid())
      return pid;
  }
  return -1;
}

TEST(XrtEmuKilled, DriverReportsACardKilledMidRunAndNeverHangs) {
  ASSERT_NE(std::getenv("XCL_EMULATION_MODE"), nullptr) << "run under scripts/xrt_emu.sh";
  auto dev = Device::open("xrt:0");
  EXPECT_EQ(dev->read_reg(hw::kRegID), hw::kID_VALUE);
  auto client = dev->create_client();
  client->alloc_buffer(4096);  // a buffer object the close must free
  const pid_t card = find_card();
  ASSERT_GT(card, 0) << "no rnic-sim card process under XRT's";
  ASSERT_EQ(::kill(card, SIGKILL), 0);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    dev->read_reg(hw::kRegID);
    ADD_FAILURE() << "a register read after the card died succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kBackend) << e.what();
    EXPECT_NE(std::string(e.what()).find("read_register"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  client.reset();
  dev.reset();  // XRT's close: answered by the guardian
}

}  // namespace
}  // namespace rnic
