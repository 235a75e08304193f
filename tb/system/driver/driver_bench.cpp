// SPDX-License-Identifier: Apache-2.0
// rnic_driver_bench: what STag registration and invalidation cost the driver against rnic-sim
// (not a test; run by hand or by scripts/bench.sh). Prints the MMIO reads/writes and commands per
// operation (Device::stats() deltas), simulated cycles per operation and operations per second of wall
// time: the software rate through the simulator, far below a card's. The writes per operation are fixed;
// the reads include the CMD_STATUS polls until the command completes, so a slower simulator (a busy
// machine) can add some, and the simulated cycles per operation follow the wall clock too (rnic-sim's
// clock runs while the driver waits). With --runs N every figure is the median of the N runs.
// Each run registers count STags (64 bytes each, one PD), then invalidates them all (invalidate
// deregisters, so every run starts from the same state).
//
//   rnic_driver_bench [--count N | N] [--runs N] [--json FILE]
//                     (default 2000 registrations then as many invalidates, 1 run)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/systest/sim_process.hpp"

namespace {

struct Figures {
  double reads, writes, commands, cycles, per_second;
};

template <typename Op>
Figures measure(rnic::Device& dev, std::size_t n, Op op) {
  const rnic::DriverStats s0 = dev.stats();
  const std::uint64_t c0 = dev.require_sim().cycles();
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < n; ++i) op(i);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const rnic::DriverStats s1 = dev.stats();
  const double dn = static_cast<double>(n);
  return {static_cast<double>(s1.mmio_reads - s0.mmio_reads) / dn,
          static_cast<double>(s1.mmio_writes - s0.mmio_writes) / dn,
          static_cast<double>(s1.commands - s0.commands) / dn,
          static_cast<double>(dev.require_sim().cycles() - c0) / dn, dn / secs};
}

void print(const char* what, const Figures& f) {
  fmt::print(
      "{:<12} {:>8.2f} MMIO reads {:>8.2f} MMIO writes {:>6.2f} commands {:>10.1f} sim cycles {:>10.0f} per second\n",
      what, f.reads, f.writes, f.commands, f.cycles, f.per_second);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2.0;
}

// The median of each field over the runs; counts_agree: the MMIO and command counts were the same in
// every run (the reads need not be: see the top).
Figures summary(const std::vector<Figures>& runs, bool& counts_agree) {
  std::vector<double> rd, wr, cmd, cyc, ps;
  for (const auto& f : runs) {
    rd.push_back(f.reads);
    wr.push_back(f.writes);
    cmd.push_back(f.commands);
    cyc.push_back(f.cycles);
    ps.push_back(f.per_second);
    counts_agree =
        counts_agree && f.reads == runs[0].reads && f.writes == runs[0].writes && f.commands == runs[0].commands;
  }
  return {median(rd), median(wr), median(cmd), median(cyc), median(ps)};
}

std::string json_list(const std::vector<Figures>& runs, double Figures::*field) {
  std::string s = "[";
  for (std::size_t i = 0; i < runs.size(); ++i) s += fmt::format("{}{:.6g}", i ? ", " : "", runs[i].*field);
  return s + "]";
}

std::string json_op(const char* name, const Figures& m, const std::vector<Figures>& runs) {
  return fmt::format(
      "  \"{}\": {{\"mmio_reads_per_op\": {:.6g}, \"mmio_writes_per_op\": {:.6g}, \"mmio_ops_per_op\": {:.6g}, "
      "\"commands_per_op\": {:.6g}, \"sim_cycles_per_op_median\": {:.6g}, \"ops_per_second_median\": {:.6g}, "
      "\"ops_per_second_runs\": {}, \"sim_cycles_per_op_runs\": {}, \"mmio_reads_per_op_runs\": {}, "
      "\"mmio_writes_per_op_runs\": {}}}",
      name, m.reads, m.writes, m.reads + m.writes, m.commands, m.cycles, m.per_second,
      json_list(runs, &Figures::per_second), json_list(runs, &Figures::cycles), json_list(runs, &Figures::reads),
      json_list(runs, &Figures::writes));
}

bool parse_count(const std::string& v, std::size_t lo, std::size_t hi, std::size_t& out) {
  char* end = nullptr;
  if (v.empty() || v[0] == '-') return false;
  const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0' || x < lo || x > hi) return false;
  out = static_cast<std::size_t>(x);
  return true;
}

constexpr const char* kUsage = "usage: rnic_driver_bench [--count N (1..4000) | N] [--runs N (1..51)] [--json FILE]\n";

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 2000, runs = 1;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    }
    const bool opt = a == "--count" || a == "--runs" || a == "--json";
    if (opt && i + 1 >= argc) {
      fmt::print(stderr, "rnic_driver_bench: {} needs a value\n{}", a, kUsage);
      return 2;
    }
    const std::string v = opt ? argv[++i] : a;
    if (a == "--json") {
      json = v;
    } else if (a == "--runs") {
      if (!parse_count(v, 1, 51, runs)) {
        fmt::print(stderr, "rnic_driver_bench: --runs: '{}' is not an integer in 1..51\n", v);
        return 2;
      }
    } else if (a == "--count" || (!a.empty() && a[0] != '-')) {
      if (!parse_count(v, 1, 4000, n)) {
        fmt::print(stderr, "rnic_driver_bench: count: '{}' is not an integer in 1..4000\n", v);
        return 2;
      }
    } else {
      fmt::print(stderr, "rnic_driver_bench: unknown option '{}'\n{}", a, kUsage);
      return 2;
    }
  }
  try {
    rnic::systest::SimProcess sim;
    auto dev = rnic::Device::open(sim.device_string());
    rnic::Limits l;
    l.max_stags = static_cast<std::uint32_t>(n);
    l.max_stags_per_pd = static_cast<std::uint32_t>(n);
    auto client = dev->create_client(l);
    const rnic::PdId pd = client->alloc_pd();
    const rnic::Buffer buf = client->alloc_buffer(n * 64);
    std::vector<rnic::Stag> stags(n);
    fmt::print("rnic_driver_bench: {} on {} ({}-bit kernel, {} STags), {} run(s)\n", n, dev->info().device,
               dev->info().data_width, dev->info().stags, runs);
    std::vector<Figures> reg, inv;
    for (std::size_t r = 0; r < runs; ++r) {
      reg.push_back(measure(*dev, n, [&](std::size_t i) {
        rnic::RegisterRequest rq;
        rq.pd = pd;
        rq.buffer = buf.id;
        rq.offset = i * 64;
        rq.length = 64;
        stags[i] = client->register_memory(rq).stag;
      }));
      inv.push_back(measure(*dev, n, [&](std::size_t i) { client->invalidate(stags[i]); }));
      if (runs > 1) {
        print(fmt::format("register #{}", r + 1).c_str(), reg.back());
        print(fmt::format("invalidate #{}", r + 1).c_str(), inv.back());
      }
    }
    bool agree = true;
    const Figures rm = summary(reg, agree), im = summary(inv, agree);
    if (runs > 1)
      fmt::print("median of {} runs (MMIO and command counts {} in every run):\n", runs,
                 agree ? "the same" : "not the same");
    print("register", rm);
    print("invalidate", im);
    if (!json.empty()) {
      std::FILE* f = std::fopen(json.c_str(), "w");
      if (f == nullptr) {
        fmt::print(stderr, "rnic_driver_bench: cannot write {}\n", json);
        return 2;
      }
      fmt::print(f, "{{\n  \"count\": {}, \"runs\": {}, \"counts_equal_in_every_run\": {},\n{},\n{}\n}}\n", n, runs,
                 agree ? "true" : "false", json_op("register", rm, reg), json_op("invalidate", im, inv));
      std::fclose(f);
    }
    return 0;
  } catch (const rnic::Error& e) {
    fmt::print(stderr, "rnic_driver_bench: {}: {}\n", rnic::errc_name(e.code()), e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "rnic_driver_bench: {}\n", e.what());
  }
  return 1;
}
