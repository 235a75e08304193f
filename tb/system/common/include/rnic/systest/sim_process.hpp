// SPDX-License-Identifier: Apache-2.0
// A real rnic-sim process for a system test: started on a unique socket in a fresh temporary
// directory, ready once it accepts connections, stopped with SIGTERM (it must exit 0 and remove its
// socket). Header-only; link rnic_systest_common (RNIC_SIM_BINARY is the built rnic-sim).
//
//   rnic::systest::SimProcess sim;            // started and accepting
//   auto dev = rnic::Device::open("sim:" + sim.socket());
//   ...
//   EXPECT_EQ(sim.stop(), 0);                 // or let the destructor stop it
#pragma once

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifndef RNIC_SIM_BINARY
#error "RNIC_SIM_BINARY must name the rnic-sim executable (link rnic_systest_common)"
#endif

namespace rnic::systest {

class SimProcess {
 public:
  // Extra command-line options for rnic-sim (e.g. {"--mem-mib", "16"}); --socket is added here.
  explicit SimProcess(std::vector<std::string> extra_args = {},
                      std::chrono::milliseconds ready_timeout = std::chrono::seconds(60)) {
    char tmpl[] = "/tmp/rnic-sim-test.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    dir_ = tmpl;
    socket_ = dir_ + "/sim.sock";
    std::vector<std::string> args{RNIC_SIM_BINARY, "--socket", socket_};
    // RNIC_SIM_MODEL=systemc: the same tests against the SystemC model (rnic-sim --model).
    const char* model = std::getenv("RNIC_SIM_MODEL");
    if (model != nullptr && *model != '\0') args.insert(args.end(), {"--model", model});
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) {
      cleanup_dir();
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid_ == 0) {
      ::execv(argv[0], argv.data());
      std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
      ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + ready_timeout;
    while (!accepts()) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        cleanup_dir();
        throw std::runtime_error("rnic-sim exited during start-up (status " + std::to_string(st) + ")");
      }
      if (std::chrono::steady_clock::now() > deadline) {
        kill_now();
        cleanup_dir();
        throw std::runtime_error("rnic-sim did not accept on " + socket_ + " in time");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  ~SimProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      if (!wait_exit(std::chrono::seconds(10), nullptr)) kill_now();
    }
    cleanup_dir();
  }
  SimProcess(const SimProcess&) = delete;
  SimProcess& operator=(const SimProcess&) = delete;

  const std::string& socket() const { return socket_; }
  std::string device_string() const { return "sim:" + socket_; }  // what Device::open takes
  const std::string& dir() const { return dir_; }                 // private temporary directory, removed at the end
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  // SIGTERM, then wait (up to `timeout`). Returns the exit code, 128 + signal if it was killed by one,
  // or -1 if it did not exit in time (then it is SIGKILLed).
  int stop(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    int code = -1;
    if (!wait_exit(timeout, &code)) {
      kill_now();
      return -1;
    }
    return code;
  }

  // User + system CPU time of the process so far, in clock ticks (/proc/<pid>/stat fields 14, 15).
  long cpu_ticks() const {
    FILE* f = std::fopen(("/proc/" + std::to_string(pid_) + "/stat").c_str(), "r");
    if (f == nullptr) return -1;
    char buf[1024] = {};
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* p = std::strrchr(buf, ')');  // the command name may hold spaces
    if (p == nullptr) return -1;
    unsigned long utime = 0, stime = 0;
    // After ")": state (3) and fields 4..13, then utime (14) and stime (15).
    if (std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return -1;
    return static_cast<long>(utime + stime);
  }

 private:
  bool accepts() const {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_.size() >= sizeof addr.sun_path) return false;
    std::memcpy(addr.sun_path, socket_.c_str(), socket_.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
  }
  bool wait_exit(std::chrono::milliseconds timeout, int* code) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int st = 0;
      const pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_ || (r < 0 && errno == ECHILD)) {
        if (code != nullptr) *code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
        pid_ = -1;
        return true;
      }
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  void kill_now() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  void cleanup_dir() {
    if (dir_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);  // the socket and anything the test left there
    dir_.clear();
  }

  std::string dir_, socket_;
  pid_t pid_ = -1;
};

}  // namespace rnic::systest
