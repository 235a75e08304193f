// rnic_driver_bench: what STag registration and invalidation cost the driver against rnic-sim
// (not a test; run by hand). Prints the MMIO reads/writes and commands per operation (Device::stats()
// deltas), simulated cycles per operation, and operations per second of wall time: the software
// rate through the simulator, far below a card's.
//
//   rnic_driver_bench [count]     (default 2000 registrations, then as many invalidates)
#include <fmt/format.h>

#include <chrono>
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
  const std::uint64_t c0 = dev.cycles();
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < n; ++i) op(i);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const rnic::DriverStats s1 = dev.stats();
  const double dn = static_cast<double>(n);
  return {static_cast<double>(s1.mmio_reads - s0.mmio_reads) / dn,
          static_cast<double>(s1.mmio_writes - s0.mmio_writes) / dn,
          static_cast<double>(s1.commands - s0.commands) / dn,
          static_cast<double>(dev.cycles() - c0) / dn, dn / secs};
}

void print(const char* what, const Figures& f) {
  fmt::print("{:<12} {:>8.2f} MMIO reads {:>8.2f} MMIO writes {:>6.2f} commands {:>10.1f} sim cycles {:>10.0f} per second\n",
             what, f.reads, f.writes, f.commands, f.cycles, f.per_second);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 2000;
  if (argc > 1) {
    char* end = nullptr;
    n = std::strtoul(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || n == 0 || n > 4000) {
      fmt::print(stderr, "usage: rnic_driver_bench [count 1..4000]\n");
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
    fmt::print("rnic_driver_bench: {} on {} ({}-bit kernel, {} STags)\n", n, dev->info().device,
               dev->info().data_width, dev->info().stags);
    print("register", measure(*dev, n, [&](std::size_t i) {
            rnic::RegisterRequest rq;
            rq.pd = pd;
            rq.buffer = buf.id;
            rq.offset = i * 64;
            rq.length = 64;
            stags[i] = client->register_memory(rq).stag;
          }));
    print("invalidate", measure(*dev, n, [&](std::size_t i) { client->invalidate(stags[i]); }));
    return 0;
  } catch (const rnic::Error& e) {
    fmt::print(stderr, "rnic_driver_bench: {}: {}\n", rnic::errc_name(e.code()), e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "rnic_driver_bench: {}\n", e.what());
  }
  return 1;
}
