// The testbenches' view of the simulation bus models (sim/bus: clock/reset, FST dump, port accessors,
// AXI4-Lite master, AXI-Stream source), which the simulator uses too, plus the seed of a test.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include "rnic/bus/axi_lite_master.hpp"
#include "rnic/bus/axis_source.hpp"
#include "rnic/bus/sim.hpp"
#include "rnic/bus/verilated_context.hpp"

namespace rnic::tb {

using bus::AxiLiteMaster;
using bus::AxisPacket;
using bus::AxisSource;
using bus::AxisTiming;
using bus::clear_all;
using bus::Component;
using bus::ErrorLog;
using bus::get_bit;
using bus::get_byte;
using bus::make_current;
using bus::set_bit;
using bus::set_byte;
using bus::Sim;

// RNIC_TEST_SEED=<n> overrides the test's default seed; RNIC_TEST_SEED=random draws one.
inline std::uint64_t test_seed(std::uint64_t default_seed) {
  const char* s = std::getenv("RNIC_TEST_SEED");
  if (s == nullptr || *s == '\0') return default_seed;
  if (std::string(s) == "random") {
    std::random_device rd;
    return (std::uint64_t{rd()} << 32) | rd();
  }
  return std::strtoull(s, nullptr, 0);
}

}  // namespace rnic::tb
