// SPDX-License-Identifier: Apache-2.0
// The SystemC-HLS model (rtl/hls) at the parameters of tb/rtl/kernel/CMakeLists.txt's Verilated models
// (kernel_test_util.hpp's test_params()). It is compiled once per data width, in kernel_model.cpp
// (library rnic_kernel_sc_w<width>), and linked by every SystemC and lockstep test program of that width;
// the extern template below keeps each test file from compiling it again.
#pragma once

#include "rnic/bus/sc_kernel.hpp"

#ifndef RNIC_TB_DATA_WIDTH
#error "RNIC_TB_DATA_WIDTH must match the Verilated model"
#endif

namespace rnic::tb::test {
using ModelConfig = rnic::hls::Config<RNIC_TB_DATA_WIDTH, 256, 16, 4, 64, 16384, 8>;
}  // namespace rnic::tb::test

extern template class rnic::bus::ScKernel<rnic::tb::test::ModelConfig>;
