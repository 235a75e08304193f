// SPDX-License-Identifier: Apache-2.0
// rnicctl and rnic-run as a user runs them: as processes, with their command lines, against a real
// rnic-sim (rnic::systest::SimProcess). Checked: the options every rnicctl command takes before or
// after its name (--json, --device, --xclbin), --xclbin reaching the driver (OpenOptions::xclbin, the
// xrt: backend's xclbin check names the file: no card needed), rnic-run past one batch of messages
// with its progress line, and --messages validation (exit 2).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "rnic/hw/hw.hpp"
#include "rnic/systest/sim_process.hpp"
#include "rnic/tb/seed.hpp"

#ifndef RNICCTL_BINARY
#error "RNICCTL_BINARY must name the rnicctl executable"
#endif
#ifndef RNIC_RUN_BINARY
#error "RNIC_RUN_BINARY must name the rnic-run executable"
#endif

namespace {

using Json = nlohmann::ordered_json;

struct Result {
  int code = -1;  // exit status; 128 + signal if killed by one
  std::string out, err;
  long maxrss_kb = -1;  // the tool's peak resident set (wait4)
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs a tool with `args`; env: variables to set (a nullopt value unsets it). RNIC_DEVICE and
// RNIC_XCLBIN are unset unless given, so the machine's environment does not leak in.
Result run_tool(const char* binary, const std::vector<std::string>& args,
                std::map<std::string, std::optional<std::string>> env = {},
                std::chrono::seconds timeout = std::chrono::seconds(90)) {
  env.emplace("RNIC_DEVICE", std::nullopt);
  env.emplace("RNIC_XCLBIN", std::nullopt);
  char tmpl[] = "/tmp/rnic-tools-test.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  const std::string dir = tmpl, out_path = dir + "/out", err_path = dir + "/err";
  std::vector<std::string> argv_s{binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    for (const auto& [name, value] : env) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Result r;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int st = 0;
  for (;;) {
    rusage ru{};
    const pid_t w = ::wait4(pid, &st, WNOHANG, &ru);
    if (w == pid) {
      r.maxrss_kb = ru.ru_maxrss;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  ::rmdir(dir.c_str());
  return r;
}

Result rnicctl(const std::vector<std::string>& args, std::map<std::string, std::optional<std::string>> env = {}) {
  return run_tool(RNICCTL_BINARY, args, std::move(env));
}

std::string show(const std::vector<std::string>& args, const Result& r) {
  std::string cmd;
  for (const auto& a : args) cmd += " " + a;
  return "command:" + cmd + "\nexit " + std::to_string(r.code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A file name no one has: the xrt: backend's xclbin check names it in its error.
std::string absent_xclbin(const std::string& tag) {
  return "/tmp/rnic-tools-test-absent-" + tag + "-" + std::to_string(::getpid()) + ".xclbin";
}

class ToolsOnSim : public ::testing::Test {
 protected:
  rnic::systest::SimProcess sim_;
};

// --json and --device go before or after the command; the JSON is the same document either way.
TEST_F(ToolsOnSim, RnicctlJsonBeforeOrAfterTheCommand) {
  const std::string dev = sim_.device_string();
  for (const std::string cmd : {"info", "counters", "stags", "streams", "queues", "regs"}) {
    const std::vector<std::vector<std::string>> forms = {{"--device", dev, "--json", cmd},
                                                         {cmd, "--json", "--device", dev},
                                                         {"--device", dev, cmd, "--json"},
                                                         {"--json", cmd, "--device", dev}};
    std::vector<Json> docs;
    for (const auto& args : forms) {
      const Result r = rnicctl(args);
      ASSERT_EQ(r.code, 0) << show(args, r);
      Json j = Json::parse(r.out, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << "not JSON:\n" << show(args, r);
      docs.push_back(std::move(j));
    }
    for (std::size_t i = 1; i < docs.size(); ++i) {
      if (cmd == "regs") {  // values may move between two reads; the rows must not
        ASSERT_EQ(docs[i].size(), docs[0].size());
        for (std::size_t k = 0; k < docs[0].size(); ++k) {
          EXPECT_EQ(docs[i][k]["name"], docs[0][k]["name"]);
          EXPECT_EQ(docs[i][k]["offset"], docs[0][k]["offset"]);
        }
      } else {
        EXPECT_EQ(docs[i], docs[0]) << cmd << ": form " << i << " differs from form 0";
      }
    }
  }
  // The info document is the card's.
  const Result r = rnicctl({"info", "--json", "--device", dev});
  const Json info = Json::parse(r.out);
  EXPECT_EQ(info["device"], dev);
  EXPECT_EQ(info["backend"], "sim");
  // Issue 33: the card's default has 4096 DDP streams, and info says so (JSON and text).
  EXPECT_EQ(info["streams"], 4096);
  EXPECT_EQ(info["qns"], 4);
  // Issue 32: the capabilities the card reports (CAP_MAX_SEG_BYTES, CAP_NET_ASSOCS, CAP_NET_MAX_PACKET):
  // rnic-sim's RTL kernel has the network side, the SystemC model none.
  EXPECT_EQ(info["max_segment_bytes"], rnic::hw::kMAX_SEG_BYTES);
  const char* model = std::getenv("RNIC_SIM_MODEL");
  const bool net = model == nullptr || std::string(model) != "systemc";
  EXPECT_EQ(info["net_assocs"], net ? rnic::hw::kNET_ASSOC_ENTRIES : 0u);
  EXPECT_EQ(info["net_max_packet"], net ? rnic::hw::kNET_MAX_PACKET_BYTES : 0u);
  const std::vector<std::string> text{"info", "--device", dev};
  const Result t = rnicctl(text);
  ASSERT_EQ(t.code, 0) << show(text, t);
  EXPECT_TRUE(contains(t.out, "streams     4096\n")) << show(text, t);
  const std::string net_line = net ? "network     " + std::to_string(rnic::hw::kNET_ASSOC_ENTRIES) +
                                         " associations, packets up to " +
                                         std::to_string(rnic::hw::kNET_MAX_PACKET_BYTES) + " bytes\n"
                                   : "network     none (built without the network side)\n";
  EXPECT_TRUE(contains(t.out, net_line)) << show(text, t);
}

// Issue 37: a register array of hw.def (RNIC_REG_ARRAY) is listed register by register: the network
// counters NET_CNT0..9, the command arguments, the association staging words.
TEST_F(ToolsOnSim, RnicctlRegsListsEveryRegisterOfAnArray) {
  const std::vector<std::string> args{"regs", "--json", "--device", sim_.device_string()};
  const Result r = rnicctl(args);
  ASSERT_EQ(r.code, 0) << show(args, r);
  const Json regs = Json::parse(r.out);
  std::map<std::string, std::uint32_t> offset;
  for (const auto& row : regs) offset[row["name"].get<std::string>()] = row["offset"].get<std::uint32_t>();
  for (unsigned i = 0; i < rnic::hw::kNET_COUNTERS; ++i)
    EXPECT_EQ(offset["NET_CNT" + std::to_string(i)], rnic::hw::reg_net_counter(i)) << show(args, r);
  for (unsigned i = 0; i < rnic::hw::kCMD_ARGS; ++i)
    EXPECT_EQ(offset["CMD_ARG" + std::to_string(i)], rnic::hw::reg_cmd_arg(i)) << show(args, r);
  const std::string last_arg = "NET_ASSOC_ARG" + std::to_string(rnic::hw::kNET_ASSOC_ARGS - 1);
  EXPECT_EQ(offset[last_arg], rnic::hw::kRegNET_ASSOC_ARG0 + 4 * (rnic::hw::kNET_ASSOC_ARGS - 1));
  EXPECT_EQ(offset.count("NET_CNT"), 0u);
  EXPECT_EQ(offset.count("NET_CNT" + std::to_string(rnic::hw::kNET_COUNTERS)), 0u);
  // counters: the network side's, by name.
  const std::vector<std::string> cargs{"counters", "--json", "--device", sim_.device_string()};
  const Result c = rnicctl(cargs);
  ASSERT_EQ(c.code, 0) << show(cargs, c);
  const Json cj = Json::parse(c.out);
  ASSERT_TRUE(cj.contains("network")) << show(cargs, c);
  EXPECT_EQ(cj["network"].size(), rnic::hw::kNET_COUNTERS);
  EXPECT_TRUE(cj["network"].contains("crc_drops"));
  EXPECT_TRUE(cj.contains("simulator_udp_port")) << show(cargs, c);
}

TEST_F(ToolsOnSim, RnicctlTablesBeforeOrAfterTheCommand) {
  const std::string dev = sim_.device_string();
  const Result a = rnicctl({"--device", dev, "info"});
  const Result b = rnicctl({"info", "--device", dev});
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_TRUE(contains(a.out, "device      " + dev)) << a.out;
}

// The same option before and after the command must agree (exit 2 names both values otherwise).
TEST_F(ToolsOnSim, RnicctlOptionGivenTwiceMustAgree) {
  const std::string dev = sim_.device_string();
  const std::vector<std::string> args = {"--device", dev, "info", "--device", "sim:/nonexistent.sock"};
  const Result r = rnicctl(args);
  EXPECT_EQ(r.code, 2) << show(args, r);
  EXPECT_TRUE(contains(r.err, "--device")) << r.err;
  EXPECT_TRUE(contains(r.err, "sim:/nonexistent.sock")) << r.err;
  const Result same = rnicctl({"--device", dev, "info", "--device", dev, "--json"});
  EXPECT_EQ(same.code, 0) << same.err;
}

// --xclbin is OpenOptions::xclbin: on an xrt: device the driver's xclbin check (before any card) names
// the file given, in either position, over $RNIC_XCLBIN; without it $RNIC_XCLBIN is used.
TEST(ToolsXclbin, RnicctlPassesXclbinToTheDriver) {
  const std::string given = absent_xclbin("given"), env = absent_xclbin("env");
  const std::vector<std::vector<std::string>> forms = {{"--device", "xrt:0", "--xclbin", given, "info"},
                                                       {"info", "--device", "xrt:0", "--xclbin", given},
                                                       {"--xclbin", given, "counters", "--device", "xrt:0"}};
  for (const auto& args : forms) {
    const Result r = rnicctl(args, {{"RNIC_XCLBIN", env}});
    EXPECT_EQ(r.code, 1) << show(args, r);
    EXPECT_TRUE(contains(r.err, "NoDevice")) << show(args, r);
    EXPECT_TRUE(contains(r.err, "xclbin '" + given + "'")) << show(args, r);
    EXPECT_FALSE(contains(r.err, env)) << show(args, r);
  }
  const std::vector<std::string> args = {"--device", "xrt:0", "info"};
  const Result r = rnicctl(args, {{"RNIC_XCLBIN", env}});
  EXPECT_EQ(r.code, 1) << show(args, r);
  EXPECT_TRUE(contains(r.err, "xclbin '" + env + "'")) << show(args, r);
}

TEST(ToolsXclbin, RnicRunPassesXclbinToTheDriver) {
  const std::string given = absent_xclbin("run");
  const std::vector<std::string> args = {"--device", "xrt:0", "--xclbin", given, "--seed", "1"};
  const Result r = run_tool(RNIC_RUN_BINARY, args, {{"RNIC_XCLBIN", absent_xclbin("run-env")}});
  EXPECT_EQ(r.code, 1) << show(args, r);
  EXPECT_TRUE(contains(r.err, "NoDevice")) << show(args, r);
  EXPECT_TRUE(contains(r.err, "xclbin '" + given + "'")) << show(args, r);
}

// More messages than one batch (rnic-run once stopped at 2000): every message checked, a progress
// line after the first batch.
TEST_F(ToolsOnSim, RnicRunPastOneBatchPrintsProgress) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  const std::vector<std::string> args = {"--device", sim_.device_string(), "--messages", "2500",
                                         "--seed",   std::to_string(seed)};
  const Result r = run_tool(RNIC_RUN_BINARY, args);
  ASSERT_EQ(r.code, 0) << show(args, r);
  EXPECT_TRUE(contains(r.out, "rnic-run: progress: 1000/2500 messages")) << show(args, r);
  EXPECT_TRUE(contains(r.out, "rnic-run: data: 2500 messages")) << show(args, r);
  EXPECT_TRUE(contains(r.out, "2500 completions in order: all verified")) << show(args, r);
  EXPECT_TRUE(contains(r.out, "rnic-run: PASS (seed " + std::to_string(seed) + ")")) << show(args, r);
  EXPECT_EQ(sim_.stop(), 0);
}

// Past what the client may have posted at once (Limits::max_posted 4096: the run posted every untagged
// buffer up front and failed with kQuota near 6000 messages) and in bounded memory: batches.
TEST_F(ToolsOnSim, RnicRunBeyondThePostedQuotaInBoundedMemory) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  const std::vector<std::string> args = {"--device", sim_.device_string(), "--messages", "9000",
                                         "--seed",   std::to_string(seed)};
  const Result r = run_tool(RNIC_RUN_BINARY, args);
  ASSERT_EQ(r.code, 0) << show(args, r);
  EXPECT_TRUE(contains(r.out, "rnic-run: data: 9000 messages")) << show(args, r);
  EXPECT_TRUE(contains(r.out, "(9 batches of up to 1000)")) << show(args, r);
  // One batch holds at most 1000 messages of up to 9000 bytes (payload, segments, expected images).
  EXPECT_GT(r.maxrss_kb, 0);
  EXPECT_LT(r.maxrss_kb, 96 * 1024) << "rnic-run peaked at " << r.maxrss_kb << " KiB";
}

// --progress 0: a line after every batch but the last.
TEST_F(ToolsOnSim, RnicRunProgressEveryBatch) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  const std::vector<std::string> args = {"--device", sim_.device_string(), "--messages", "2100", "--progress", "0",
                                         "--seed",   std::to_string(seed)};
  const Result r = run_tool(RNIC_RUN_BINARY, args);
  ASSERT_EQ(r.code, 0) << show(args, r);
  EXPECT_TRUE(contains(r.out, "progress: 1000/2100 messages")) << show(args, r);
  EXPECT_TRUE(contains(r.out, "progress: 2000/2100 messages")) << show(args, r);
  EXPECT_FALSE(contains(r.out, "progress: 2100/2100")) << show(args, r);
}

// 0, negative, non-numeric and absurd counts are usage errors (exit 2) naming the option; nothing runs.
TEST(ToolsUsage, RnicRunRefusesBadMessageCounts) {
  for (const std::string bad : {"0", "-3", "abc", "100000001", "1000000000000", "18446744073709551616"}) {
    const std::vector<std::string> args = {"--device", "sim:/nonexistent.sock", "--messages", bad};
    const Result r = run_tool(RNIC_RUN_BINARY, args);
    EXPECT_EQ(r.code, 2) << show(args, r);
    EXPECT_TRUE(contains(r.err, "--messages")) << show(args, r);
    EXPECT_FALSE(contains(r.out, "rnic-run: device")) << show(args, r);
  }
  const std::vector<std::string> args = {"--device", "sim:/nonexistent.sock", "--progress", "-1"};
  const Result r = run_tool(RNIC_RUN_BINARY, args);
  EXPECT_EQ(r.code, 2) << show(args, r);
  EXPECT_TRUE(contains(r.err, "--progress")) << show(args, r);
}

}  // namespace
