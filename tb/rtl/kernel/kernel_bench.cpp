// rnic_kernel_bench: cycle benchmark of the kernel at its default parameters (DATA_WIDTH 512,
// STAG_ENTRIES 4096, NUM_STREAMS 256). Not a test: run by hand.
//
// For each payload size S, tagged and untagged, destination aligned (address % 64 == 0) and unaligned
// (% 64 == 37): ~N segments of S payload bytes sent back to back (no idle cycles), in messages of
// --segs-per-msg segments (a zero-length message is one segment), AXI write channels always ready,
// B a fixed few cycles after the last W beat, descriptor reads answered after --r-latency cycles.
// Reported per row:
//   B/cycle  placed payload bytes per cycle, from the first TVALID to the last placement W beat
//            (the bus limit is 64 bytes/cycle); for S = 0 the end is the last completion beat
//   bp %     cycles with TVALID && !TREADY, over the cycles from the first TVALID to the last accepted beat
//   latency  cycles from the accepted beat completing the DDP header (the packet's first beat at 512
//            bits) to the segment's first placement W beat: average / min / max
//   W/in     write beats the row needs (placement beats + one completion per message) over its input
//            beats: above 1.00 the one AXI write channel, not the kernel, must slow the input down
//
//   rnic_kernel_bench [--json FILE] [--segments N] [--segs-per-msg N] [--b-latency N] [--r-latency N]
//                     [--sizes 0,64,...]
#include <algorithm>
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

namespace {

using rnic::tb::EnvConfig;
using rnic::tb::KernelEnv;
using Env = KernelEnv<Vrnic_kernel>;
using Bytes = std::vector<std::uint8_t>;

struct Options {
  std::string json;
  unsigned segments = 200;
  unsigned segs_per_msg = 8;
  unsigned b_latency = 4;
  unsigned r_latency = 16;
  std::vector<unsigned> sizes = {0, 1, 64, 128, 256, 512, 1024, 1450, 2048, 4096, 8192, 9000};
};

struct Row {
  bool tagged;
  unsigned size, align, segments;
  std::uint64_t cycles, bytes, input_cycles, bp_cycles;
  double bytes_per_cycle, bp_fraction, lat_avg, w_demand;
  std::uint64_t lat_min, lat_max;
  bool ok;
  std::string note;
};

Row run_case(const Options& o, bool tagged, unsigned size, unsigned align) {
  EnvConfig cfg;
  cfg.params.data_width = 512;
  cfg.params.stag_entries = 4096;
  cfg.params.num_streams = 256;
  cfg.params.num_qns = 4;
  cfg.params.ssn_window = 64;
  cfg.params.max_seg_bytes = 16384;
  cfg.use_model = false;
  cfg.seed = 1;
  cfg.mem.b_latency_min = cfg.mem.b_latency_max = o.b_latency;
  cfg.mem.r_latency_min = cfg.mem.r_latency_max = o.r_latency;
  cfg.mem.commit_on_b = false;
  cfg.mem.log_w = true;
  cfg.quiet_cycles = 100;
  Env env(cfg);
  env.start(10);
  env.stream_enable(0, 1);
  const unsigned bus = env.bus_bytes();
  const unsigned spm = size == 0 ? 1 : o.segs_per_msg;
  const unsigned msgs = (o.segments + spm - 1) / spm;
  const std::uint64_t msg_len = std::uint64_t{size} * spm;
  const std::size_t mulpdu = std::max(size, 1u) + (tagged ? 14u : 18u);
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
  // Write-channel demand: placement beats of every segment plus the completions, over the input beats.
  std::uint64_t w_beats = std::uint64_t{msgs} * ((rnic::hw::kCQE_BYTES + bus - 1) / bus), in_beats = 0;
  for (std::size_t k = 0; k < segs.size(); ++k) {
    in_beats += (segs[k].size() + bus - 1) / bus;
    if (size > 0) w_beats += (dest[k] % bus + size + bus - 1) / bus;
  }
  r.w_demand = in_beats ? static_cast<double>(w_beats) / static_cast<double>(in_beats) : 0.0;
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

std::vector<unsigned> parse_list(const char* s) {
  std::vector<unsigned> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(static_cast<unsigned>(std::stoul(item)));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (v == nullptr && a != "--help") {
      std::fprintf(stderr, "%s needs a value\n", a.c_str());
      return 2;
    }
    if (a == "--json")
      o.json = v;
    else if (a == "--segments")
      o.segments = static_cast<unsigned>(std::stoul(v));
    else if (a == "--segs-per-msg")
      o.segs_per_msg = static_cast<unsigned>(std::stoul(v));
    else if (a == "--b-latency")
      o.b_latency = static_cast<unsigned>(std::stoul(v));
    else if (a == "--r-latency")
      o.r_latency = static_cast<unsigned>(std::stoul(v));
    else if (a == "--sizes")
      o.sizes = parse_list(v);
    else {
      std::fprintf(stderr,
                   "usage: rnic_kernel_bench [--json FILE] [--segments N] [--segs-per-msg N] [--b-latency N] "
                   "[--r-latency N] [--sizes 0,64,...]\n");
      return a == "--help" ? 0 : 2;
    }
    ++i;
  }
  std::printf(
      "rnic_kernel_bench: DATA_WIDTH 512 (limit 64 B/cycle), %u segments per row, %u segments per "
      "message, B latency %u, R latency %u cycles\n",
      o.segments, o.segs_per_msg, o.b_latency, o.r_latency);
  std::printf("%-8s %6s %5s %5s %8s %8s %7s %6s %5s %9s %6s %6s  %s\n", "kind", "S", "align", "segs",
              "cycles", "B/cycle", "%limit", "bp %", "W/in", "lat avg", "min", "max", "");
  std::vector<Row> rows;
  bool all_ok = true;
  for (bool tagged : {true, false}) {
    for (unsigned size : o.sizes) {
      for (unsigned align : {0u, 37u}) {
        const Row r = run_case(o, tagged, size, align);
        rows.push_back(r);
        all_ok = all_ok && r.ok;
        std::printf("%-8s %6u %5u %5u %8llu %8.2f %6.1f%% %5.1f%% %5.2f %9.1f %6llu %6llu  %s%s\n",
                    tagged ? "tagged" : "untagged", r.size, r.align, r.segments,
                    static_cast<unsigned long long>(r.cycles), r.bytes_per_cycle,
                    100.0 * r.bytes_per_cycle / 64.0, 100.0 * r.bp_fraction, r.w_demand, r.lat_avg,
                    static_cast<unsigned long long>(r.lat_min), static_cast<unsigned long long>(r.lat_max),
                    r.ok ? "" : "FAILED ", r.note.c_str());
        std::fflush(stdout);
      }
    }
  }
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f << "{\n  \"data_width\": 512,\n  \"limit_bytes_per_cycle\": 64,\n  \"segments_per_row\": " << o.segments
      << ",\n  \"segments_per_message\": " << o.segs_per_msg << ",\n  \"b_latency\": " << o.b_latency
      << ",\n  \"r_latency\": " << o.r_latency << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      f << "    {\"kind\": \"" << (r.tagged ? "tagged" : "untagged") << "\", \"payload_bytes\": " << r.size
        << ", \"align\": " << r.align << ", \"segments\": " << r.segments << ", \"cycles\": " << r.cycles
        << ", \"placed_bytes\": " << r.bytes << ", \"bytes_per_cycle\": " << r.bytes_per_cycle
        << ", \"input_cycles\": " << r.input_cycles << ", \"backpressure_cycles\": " << r.bp_cycles
        << ", \"backpressure_fraction\": " << r.bp_fraction << ", \"write_demand\": " << r.w_demand
        << ", \"latency_avg\": " << r.lat_avg
        << ", \"latency_min\": " << r.lat_min << ", \"latency_max\": " << r.lat_max
        << ", \"ok\": " << (r.ok ? "true" : "false") << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    f << "  ]\n}\n";
  }
  return all_ok ? 0 : 1;
}
