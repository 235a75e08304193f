// SPDX-License-Identifier: Apache-2.0
// A program of the project (rnic-peer, rnic-sink) as a child process of a system test: its stdout and
// stderr in files of a private temporary directory (dir(): a --json report can go there too), its exit
// code by poll() or wait(), SIGKILLed if still running when the object goes. Header-only.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace rnic::systest {

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class ChildProcess {
 public:
  // Starts `binary` with `args`; stdout and stderr go to files in a fresh temporary directory.
  ChildProcess(const std::string& binary, std::vector<std::string> args) {
    char tmpl[] = "/tmp/rnic-child-test.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    dir_ = tmpl;
    args.insert(args.begin(), binary);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid_ == 0) {
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(126);
      ::execv(argv[0], argv.data());
      std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
      ::_exit(127);
    }
  }
  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The exit code once it has exited (128 + signal if killed by one).
  std::optional<int> poll() {
    if (pid_ <= 0) return code_;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) != pid_) return std::nullopt;
    pid_ = -1;
    code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return code_;
  }
  int wait(std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (!poll()) {
      if (std::chrono::steady_clock::now() > end) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
        return -1;
      }
      ::usleep(2000);
    }
    return *code_;
  }
  // Sends `sig` while it runs (e.g. SIGTERM to ask a server to stop).
  void signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  pid_t pid() const { return pid_; }  // -1 once it has exited
  const std::string& dir() const { return dir_; }
  std::string out() const { return slurp(dir_ + "/stdout"); }
  std::string err() const { return slurp(dir_ + "/stderr"); }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  std::optional<int> code_;
};

}  // namespace rnic::systest
