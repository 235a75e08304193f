// SPDX-License-Identifier: Apache-2.0
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
#include "rnic/tb/seed.hpp"

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

// The seed of a test: random_test_seed(default) from rnic/tb/seed.hpp (RNIC_TEST_SEED=<n>|0x<hex>|random).

}  // namespace rnic::tb
