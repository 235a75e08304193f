// SPDX-License-Identifier: Apache-2.0
// rnic_kernel_bench: cycle benchmark of the kernel at its default parameters (DATA_WIDTH 512,
// STAG_ENTRIES 4096, NUM_STREAMS 4096, RQ_PREFETCH 32). Not a test: run by hand.
//
// For each payload size S, tagged and untagged, destination aligned (address % 64 == 0) and unaligned
// (% 64 == 37): ~N segments of S payload bytes sent back to back (no idle cycles), in messages of
// --segs-per-msg segments (a zero-length message is one segment), AXI write channels always ready,
// B a fixed few cycles after the last W beat, descriptor reads answered after --r-latency cycles.
// Reported per row:
//   B/cycle  placed payload bytes per cycle, from the first TVALID to the last placement W beat
//            (the bus limit is 64 bytes/cycle); for S = 0 the end is the last completion beat
//   in lim   the input-beat limit of the row: placed bytes over the input beats the row's segments take
//            (a segment of S payload bytes behind its DDP header, 14 bytes tagged / 18 untagged, is
//            ceil((hdr + S) / 64) beats; the input takes at most one beat per cycle), so
//            S / ceil((hdr + S) / 64) bytes/cycle; %in = B/cycle over it. Both B/cycle and in lim
//            count the same bytes; B/cycle also pays the pipeline's fill and drain once per row
//   bp %     cycles with TVALID && !TREADY, over the cycles from the first TVALID to the last accepted beat
//   latency  cycles from the accepted beat completing the DDP header (the packet's first beat at 512
//            bits) to the segment's first placement W beat: average / min / max
//   W/in     write beats the row needs (placement beats + one completion per message) over its input
//            beats: above 1.00 the one AXI write channel, not the kernel, must slow the input down
//
// Simulation speed (--speed-cycles N, default 200000; 0 skips it): wall clock of N cycles of the
// Verilated kernel with its bus models (the harness rnic-sim also uses; no trace unless RNIC_FST is
// set, which the bench refuses), --speed-runs times (default 5), reported as the median: "loaded" with
// back-to-back tagged 1450-byte segments (8 per message, one completion each) and "idle" with no traffic.
//
//   rnic_kernel_bench [--json FILE] [--segments N] [--segs-per-msg N] [--b-latency N] [--r-latency N]
//                     [--sizes 0,64,...] [--speed-cycles N] [--speed-runs N] [--no-rows]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "Vrnic_kernel.h"
#include "rnic/hw/hw.hpp"
#include "rnic/tb/kernel_env.hpp"
#ifdef RNIC_BENCH_SYSTEMC
#include "rnic/bus/sc_kernel.hpp"
#endif

namespace {

using rnic::tb::EnvConfig;
using rnic::tb::KernelEnv;
// rnic_kernel_bench measures the Verilated RTL, rnic_kernel_bench_systemc the SystemC-HLS model (rtl/hls),
// both at the kernel's default parameters.
#ifdef RNIC_BENCH_SYSTEMC
using Env = KernelEnv<rnic::bus::ScKernel<rnic::hls::Config<>>>;
constexpr const char* kImplementation = "systemc";
#else
using Env = KernelEnv<Vrnic_kernel>;
constexpr const char* kImplementation = "rtl";
#endif
using Bytes = std::vector<std::uint8_t>;

struct Options {
  std::string json;
  unsigned segments = 200;
  unsigned segs_per_msg = 8;
  unsigned b_latency = 4;
  unsigned r_latency = 16;
  std::vector<unsigned> sizes = {0, 1, 64, 128, 256, 512, 1024, 1450, 2048, 4096, 8192, 9000};
  std::uint64_t speed_cycles = 200000;
  unsigned speed_runs = 5;
  bool rows = true;
};

constexpr unsigned kTaggedHeader = 14;    // RFC 5041 4.1: control 2, STag 4, TO 8
constexpr unsigned kUntaggedHeader = 18;  // RFC 5041 4.2: control 2, QN 4, MSN 4, MO 4, RsvdULP 4

struct Row {
  bool tagged;
  unsigned size, align, segments, messages, header;
  std::uint64_t cycles, bytes, input_cycles, bp_cycles, in_beats, w_beats;
  double bytes_per_cycle, bp_fraction, lat_avg, w_demand, input_limit, write_limit;
  std::uint64_t lat_min, lat_max;
  bool lat_measured;
  bool ok;
  std::string note;
};

// The kernel at its default parameters (what a card is built with) and the host memory's fixed latencies.
EnvConfig bench_config(const Options& o) {
  EnvConfig cfg;
  cfg.params.data_width = rnic::hw::kDEFAULT_DATA_WIDTH;
  cfg.params.stag_entries = rnic::hw::kDEFAULT_STAGS;
  cfg.params.num_streams = rnic::hw::kDEFAULT_STREAMS;
  cfg.params.num_qns = rnic::hw::kDEFAULT_QNS;
  cfg.params.ssn_window = rnic::hw::kDEFAULT_SSN_WINDOW;
  cfg.params.max_seg_bytes = rnic::hw::kMAX_SEG_BYTES;
  cfg.use_model = false;
  cfg.seed = 1;
  cfg.mem.b_latency_min = cfg.mem.b_latency_max = o.b_latency;
  cfg.mem.r_latency_min = cfg.mem.r_latency_max = o.r_latency;
  cfg.mem.commit_on_b = false;
  return cfg;
}

Row run_case(const Options& o, bool tagged, unsigned size, unsigned align) {
  EnvConfig cfg = bench_config(o);
  cfg.mem.log_w = true;
  cfg.quiet_cycles = 100;
  Env env(cfg);
  env.start(10);
  env.stream_enable(0, 1);
  const unsigned bus = env.bus_bytes();
  const unsigned spm = size == 0 ? 1 : o.segs_per_msg;
  const unsigned msgs = (o.segments + spm - 1) / spm;
  const std::uint64_t msg_len = std::uint64_t{size} * spm;
  const std::size_t mulpdu = std::max(size, 1u) + (tagged ? kTaggedHeader : kUntaggedHeader);
  std::vector<std::uint64_t> dest;  // host address of each segment's first payload byte
  std::vector<Bytes> segs;
  const Bytes payload(msg_len, 0x5A);
  if (tagged) {
    const std::uint64_t len = 4u << 20;
    rnic::tb::StagArgs a;
    a.index = 1;
    a.pd = 1;
    a.length = len;
    a.host_addr = env.alloc(len, 4096);
    env.stag_write(a);
    const std::uint64_t stride = (msg_len + 63) / 64 * 64 + 64;
    std::uint64_t off = 0;
    for (unsigned m = 0; m < msgs; ++m) {
      if (off + align + msg_len > len) off = 0;
      for (auto& g : rnic::tb::tagged_message((1u << 8) | a.key, off + align, 0, payload, mulpdu))
        segs.push_back(std::move(g));
      for (unsigned i = 0; i < spm; ++i) dest.push_back(a.host_addr + off + align + std::uint64_t{i} * size);
      off += stride;
    }
  } else {
    env.queue_config(0, 0, 8);
    for (unsigned m = 0; m < msgs; ++m) {
      const std::uint64_t b = env.alloc(std::max<std::uint64_t>(msg_len, 1), 64, align);
      const std::uint32_t msn = env.post_recv(0, 0, b, static_cast<std::uint32_t>(msg_len), m + 1 == msgs, 0);
      for (auto& g : rnic::tb::untagged_message(0, msn, 0, payload, mulpdu)) segs.push_back(std::move(g));
      for (unsigned i = 0; i < spm; ++i) dest.push_back(b + std::uint64_t{i} * size);
    }
  }
  env.run(200);
  env.mem().clear_w_log();
  env.src().clear_stats();
  std::vector<rnic::bus::AxisTiming> tm;
  env.src().on_packet([&tm](const rnic::bus::AxisTiming& t) { tm.push_back(t); });
  for (const auto& g : segs) env.send(0, env.tx_ssn(0)++, g);
  Row r{};
  r.tagged = tagged;
  r.size = size;
  r.align = align;
  r.segments = static_cast<unsigned>(segs.size());
  r.messages = msgs;
  r.header = tagged ? kTaggedHeader : kUntaggedHeader;
  r.ok = env.drain(2000000);
  const auto& wl = env.mem().w_log();
  const std::uint64_t cq_end = rnic::tb::kCqBase + env.drv().cq_bytes();
  std::vector<rnic::tb::WBeatLog> data;
  std::uint64_t last_any = 0;
  for (const auto& w : wl) {
    last_any = std::max(last_any, w.cycle);
    if (w.addr < rnic::tb::kCqBase || w.addr >= cq_end) data.push_back(w);
  }
  const std::uint64_t t0 = env.src().first_valid_cycle();
  const std::uint64_t t_end = data.empty() ? last_any : data.back().cycle;
  r.cycles = t_end >= t0 ? t_end - t0 + 1 : 0;
  r.bytes = std::uint64_t{size} * segs.size();
  r.bytes_per_cycle = r.cycles ? static_cast<double>(r.bytes) / static_cast<double>(r.cycles) : 0.0;
  r.input_cycles = env.src().last_accept_cycle() - t0 + 1;
  r.bp_cycles = env.src().backpressure_cycles();
  r.bp_fraction = static_cast<double>(r.bp_cycles) / static_cast<double>(r.input_cycles);
  // Latency: the data beats come in segment order; segment k takes ceil((addr % 64 + S) / 64) beats.
  std::size_t bi = 0;
  double sum = 0;
  unsigned n = 0;
  r.lat_min = ~std::uint64_t{0};
  r.lat_max = 0;
  for (std::size_t k = 0; size > 0 && k < segs.size() && k < tm.size(); ++k) {
    const std::uint64_t first = dest[k] / bus * bus;
    const std::uint64_t beats = (dest[k] % bus + size + bus - 1) / bus;
    if (bi >= data.size() || data[bi].addr != first) {
      r.note = "W beat order does not match the segments";
      break;
    }
    const std::uint64_t lat = data[bi].cycle - tm[k].header_beat;
    sum += static_cast<double>(lat);
    ++n;
    r.lat_min = std::min(r.lat_min, lat);
    r.lat_max = std::max(r.lat_max, lat);
    bi += beats;
  }
  r.lat_avg = n ? sum / n : 0.0;
  r.lat_measured = n > 0;
  // Write-channel demand: placement beats of every segment plus the completions, over the input beats.
  std::uint64_t w_beats = std::uint64_t{msgs} * ((rnic::hw::kCQE_BYTES + bus - 1) / bus), in_beats = 0;
  for (std::size_t k = 0; k < segs.size(); ++k) {
    in_beats += (segs[k].size() + bus - 1) / bus;
    if (size > 0) w_beats += (dest[k] % bus + size + bus - 1) / bus;
  }
  r.w_demand = in_beats ? static_cast<double>(w_beats) / static_cast<double>(in_beats) : 0.0;
  // The ceilings one beat per cycle on each channel sets: input beats, AXI write beats.
  r.in_beats = in_beats;
  r.w_beats = w_beats;
  r.input_limit = in_beats ? static_cast<double>(r.bytes) / static_cast<double>(in_beats) : 0.0;
  r.write_limit = w_beats ? static_cast<double>(r.bytes) / static_cast<double>(w_beats) : 0.0;
  if (n == 0) r.lat_min = 0;
  if (!env.errors().empty()) {
    r.ok = false;
    r.note += " " + env.errors().text();
  }
  if (env.cqes().size() != msgs) {
    r.ok = false;
    r.note += " " + std::to_string(env.cqes().size()) + " of " + std::to_string(msgs) + " completions";
  }
  return r;
}

// Wall clock of the simulation: cycles per second over windows of o.speed_cycles cycles.
struct Speed {
  std::vector<double> idle, loaded;
  std::uint64_t loaded_segments = 0, loaded_beats = 0, loaded_bp_cycles = 0, loaded_completions = 0;
  bool ok = true;
  std::string note;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2.0;
}

Speed measure_speed(const Options& o) {
  EnvConfig cfg = bench_config(o);
  cfg.mem.log_w = false;  // the log would grow with the run
  Env env(cfg);
  env.start(10);
  env.stream_enable(0, 1);
  rnic::tb::StagArgs a;
  a.index = 1;
  a.pd = 1;
  a.length = 1u << 20;
  a.host_addr = env.alloc(a.length, 4096);
  env.stag_write(a);
  constexpr unsigned kSize = 1450, kSegs = 8;
  const Bytes payload(std::size_t{kSize} * kSegs, 0x5A);
  const auto segs = rnic::tb::tagged_message((1u << 8) | a.key, 0, 0, payload, kSize + kTaggedHeader);
  Speed sp;
  std::size_t k = 0;  // next segment of the message, across windows: every message is sent whole
  const auto window = [&](bool loaded) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < o.speed_cycles; ++i) {
      // Keep the source two packets ahead: the input never waits for the testbench.
      while (loaded && env.src().pending() < 2) {
        env.send(0, env.tx_ssn(0)++, segs[k]);
        k = (k + 1) % segs.size();
      }
      env.tick();
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return static_cast<double>(o.speed_cycles) / secs;
  };
  env.run(2000);  // warm up
  const std::size_t cq0 = env.cqes().size();
  // Loaded and idle windows alternate, so a slower spell of the shared machine hits both alike.
  for (unsigned r = 0; r < o.speed_runs; ++r) {
    const std::uint64_t p0 = env.src().packets_sent(), v0 = env.src().valid_cycles(),
                        b0 = env.src().backpressure_cycles();
    sp.loaded.push_back(window(true));
    sp.loaded_segments += env.src().packets_sent() - p0;
    sp.loaded_bp_cycles += env.src().backpressure_cycles() - b0;
    sp.loaded_beats += (env.src().valid_cycles() - v0) - (env.src().backpressure_cycles() - b0);
    sp.idle.push_back(window(false));  // its first few hundred cycles drain the two packets queued
  }
  sp.loaded_completions = env.cqes().size() - cq0;
  if (sp.loaded_completions * kSegs + 2 * kSegs < sp.loaded_segments) {
    sp.ok = false;
    sp.note += std::to_string(sp.loaded_completions) + " completions for " + std::to_string(sp.loaded_segments) +
               " segments of " + std::to_string(kSegs) + "-segment messages\n";
  }
  if (!env.errors().empty()) {
    sp.ok = false;
    sp.note = env.errors().text();
  }
  for (std::size_t i = cq0; i < env.cqes().size(); ++i) {
    if (env.cqes()[i].error()) {
      sp.ok = false;
      sp.note += "error completion: " + env.cqes()[i].str() + "\n";
      break;
    }
  }
  return sp;
}

[[noreturn]] void bad_value(const std::string& opt, const std::string& v, const char* want) {
  std::fprintf(stderr, "rnic_kernel_bench: %s: '%s' is not %s\n", opt.c_str(), v.c_str(), want);
  std::exit(2);
}

std::uint64_t parse_u64(const std::string& opt, const std::string& v, std::uint64_t lo, std::uint64_t hi) {
  std::size_t used = 0;
  unsigned long long x = 0;
  try {
    x = std::stoull(v, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (v.empty() || v[0] == '-' || used != v.size() || x < lo || x > hi) {
    const std::string want = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
    bad_value(opt, v, want.c_str());
  }
  return x;
}

std::vector<unsigned> parse_list(const std::string& opt, const std::string& s) {
  std::vector<unsigned> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(static_cast<unsigned>(parse_u64(opt, item, 0, 16384 - 18)));
  if (v.empty()) bad_value(opt, s, "a comma-separated list of payload sizes");
  return v;
}

void json_latency(std::ofstream& f, const char* name, bool measured, double v) {
  f << ", \"" << name << "\": ";
  if (measured)
    f << v;
  else
    f << "null";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const char* usage =
      "usage: rnic_kernel_bench [--json FILE] [--segments N] [--segs-per-msg N] [--b-latency N] "
      "[--r-latency N] [--sizes 0,64,...] [--speed-cycles N (0: skip)] [--speed-runs N] [--no-rows]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (a == "--no-rows") {
      o.rows = false;
      continue;
    }
    const bool known = a == "--json" || a == "--segments" || a == "--segs-per-msg" || a == "--b-latency" ||
                       a == "--r-latency" || a == "--sizes" || a == "--speed-cycles" || a == "--speed-runs";
    if (!known) {
      std::fprintf(stderr, "rnic_kernel_bench: unknown option '%s'\n%s", a.c_str(), usage);
      return 2;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "rnic_kernel_bench: %s needs a value\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--json")
      o.json = v;
    else if (a == "--segments")
      o.segments = static_cast<unsigned>(parse_u64(a, v, 1, 1000000));
    else if (a == "--segs-per-msg")
      o.segs_per_msg = static_cast<unsigned>(parse_u64(a, v, 1, 1024));
    else if (a == "--b-latency")
      o.b_latency = static_cast<unsigned>(parse_u64(a, v, 1, 1000));
    else if (a == "--r-latency")
      o.r_latency = static_cast<unsigned>(parse_u64(a, v, 1, 1000));
    else if (a == "--sizes")
      o.sizes = parse_list(a, v);
    else if (a == "--speed-cycles")
      o.speed_cycles = parse_u64(a, v, 0, 1000000000);
    else
      o.speed_runs = static_cast<unsigned>(parse_u64(a, v, 1, 101));
  }
  if (o.speed_cycles > 0 && std::getenv("RNIC_FST") != nullptr && *std::getenv("RNIC_FST") != '\0') {
    std::fprintf(stderr,
                 "rnic_kernel_bench: RNIC_FST is set: the speed measurement is without trace; unset it "
                 "or pass --speed-cycles 0\n");
    return 2;
  }
  std::vector<Row> rows;
  bool all_ok = true;
  if (o.rows) {
    std::printf(
        "rnic_kernel_bench: DATA_WIDTH 512 (limit 64 B/cycle), %u segments per row, %u segments per "
        "message, B latency %u, R latency %u cycles\n",
        o.segments, o.segs_per_msg, o.b_latency, o.r_latency);
    std::printf("%-8s %6s %5s %5s %8s %8s %7s %7s %6s %6s %5s %9s %6s %6s  %s\n", "kind", "S", "align", "segs",
                "cycles", "B/cycle", "%limit", "in lim", "%in", "bp %", "W/in", "lat avg", "min", "max", "");
    for (bool tagged : {true, false}) {
      for (unsigned size : o.sizes) {
        for (unsigned align : {0u, 37u}) {
          const Row r = run_case(o, tagged, size, align);
          rows.push_back(r);
          all_ok = all_ok && r.ok;
          char lat[48] = "        -      -      -";
          if (r.lat_measured)
            std::snprintf(lat, sizeof lat, "%9.1f %6llu %6llu", r.lat_avg, static_cast<unsigned long long>(r.lat_min),
                          static_cast<unsigned long long>(r.lat_max));
          std::printf("%-8s %6u %5u %5u %8llu %8.2f %6.1f%% %7.2f %5.1f%% %5.1f%% %5.2f %s  %s%s\n",
                      tagged ? "tagged" : "untagged", r.size, r.align, r.segments,
                      static_cast<unsigned long long>(r.cycles), r.bytes_per_cycle, 100.0 * r.bytes_per_cycle / 64.0,
                      r.input_limit, r.input_limit > 0 ? 100.0 * r.bytes_per_cycle / r.input_limit : 0.0,
                      100.0 * r.bp_fraction, r.w_demand, lat, r.ok ? "" : "FAILED ", r.note.c_str());
          std::fflush(stdout);
        }
      }
    }
  }
  Speed sp;
  if (o.speed_cycles > 0) {
    sp = measure_speed(o);
    all_ok = all_ok && sp.ok;
    std::printf(
        "simulation speed of the %s (%llu cycles per run, %u runs, no trace): loaded %.0f cycles/s median "
        "(%.0f..%.0f; %llu segments, %llu beats in, %llu backpressure cycles, %llu completions), "
        "idle %.0f cycles/s median%s%s\n",
        kImplementation, static_cast<unsigned long long>(o.speed_cycles), o.speed_runs, median(sp.loaded),
        *std::min_element(sp.loaded.begin(), sp.loaded.end()), *std::max_element(sp.loaded.begin(), sp.loaded.end()),
        static_cast<unsigned long long>(sp.loaded_segments), static_cast<unsigned long long>(sp.loaded_beats),
        static_cast<unsigned long long>(sp.loaded_bp_cycles), static_cast<unsigned long long>(sp.loaded_completions),
        median(sp.idle), sp.ok ? "" : " FAILED ", sp.note.c_str());
  }
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    if (!f) {
      std::fprintf(stderr, "rnic_kernel_bench: cannot write %s\n", o.json.c_str());
      return 2;
    }
    f.precision(10);
    f << "{\n  \"implementation\": \"" << kImplementation
      << "\",\n  \"data_width\": 512,\n  \"limit_bytes_per_cycle\": 64,\n  \"tagged_header_bytes\": " << kTaggedHeader
      << ",\n  \"untagged_header_bytes\": " << kUntaggedHeader << ",\n  \"segments_per_row\": " << o.segments
      << ",\n  \"segments_per_message\": " << o.segs_per_msg << ",\n  \"b_latency\": " << o.b_latency
      << ",\n  \"r_latency\": " << o.r_latency << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      f << "    {\"kind\": \"" << (r.tagged ? "tagged" : "untagged")
        << "\", \"tagged\": " << (r.tagged ? "true" : "false") << ", \"payload_bytes\": " << r.size
        << ", \"align\": " << r.align << ", \"header_bytes\": " << r.header << ", \"segments\": " << r.segments
        << ", \"messages\": " << r.messages << ", \"cycles\": " << r.cycles << ", \"placed_bytes\": " << r.bytes
        << ", \"bytes_per_cycle\": " << r.bytes_per_cycle << ", \"segments_per_cycle\": "
        << (r.cycles ? static_cast<double>(r.segments) / static_cast<double>(r.cycles) : 0.0)
        << ", \"input_beats\": " << r.in_beats << ", \"input_limit_bytes_per_cycle\": " << r.input_limit
        << ", \"input_limit_segments_per_cycle\": "
        << (r.in_beats ? static_cast<double>(r.segments) / static_cast<double>(r.in_beats) : 0.0)
        << ", \"write_beats\": " << r.w_beats << ", \"write_limit_bytes_per_cycle\": " << r.write_limit
        << ", \"input_cycles\": " << r.input_cycles << ", \"backpressure_cycles\": " << r.bp_cycles
        << ", \"backpressure_fraction\": " << r.bp_fraction << ", \"write_demand\": " << r.w_demand;
      json_latency(f, "latency_cycles_min", r.lat_measured, static_cast<double>(r.lat_min));
      json_latency(f, "latency_cycles_avg", r.lat_measured, r.lat_avg);
      json_latency(f, "latency_cycles_max", r.lat_measured, static_cast<double>(r.lat_max));
      f << ", \"ok\": " << (r.ok ? "true" : "false") << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    f << "  ]";
    if (o.speed_cycles > 0) {
      const auto list = [&f](const std::vector<double>& v) {
        f << "[";
        for (std::size_t i = 0; i < v.size(); ++i) f << (i ? ", " : "") << v[i];
        f << "]";
      };
      f << ",\n  \"sim\": {\"cycles_per_run\": " << o.speed_cycles << ", \"runs\": " << o.speed_runs
        << ", \"trace\": false, \"loaded_traffic\": \"tagged 1450-byte segments back to back, 8 per message\""
        << ", \"cycles_per_second_median\": " << median(sp.loaded) << ", \"cycles_per_second_runs\": ";
      list(sp.loaded);
      f << ", \"idle_cycles_per_second_median\": " << median(sp.idle) << ", \"idle_cycles_per_second_runs\": ";
      list(sp.idle);
      f << ", \"loaded_segments\": " << sp.loaded_segments << ", \"loaded_input_beats\": " << sp.loaded_beats
        << ", \"loaded_backpressure_cycles\": " << sp.loaded_bp_cycles
        << ", \"loaded_completions\": " << sp.loaded_completions << ", \"ok\": " << (sp.ok ? "true" : "false") << "}";
    }
    f << "\n}\n";
  }
  return all_ok ? 0 : 1;
}
