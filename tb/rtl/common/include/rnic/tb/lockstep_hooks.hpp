// SPDX-License-Identifier: Apache-2.0
// What KernelEnv tells the top it drives, for the lockstep run (rnic/tb/lockstep.hpp): a Verilated model
// or the SystemC model alone ignores it. LockstepKernel overloads these (found by argument-dependent
// lookup where KernelEnv<Top> is instantiated).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace rnic::tb {

// The testbench's host memory (the model's descriptor reads) and the test's seed (divergence reports).
template <class Top>
void lockstep_attach(Top&, const std::uint8_t*, std::size_t, std::uint64_t) {}
// The test declared a stream diverged from the sequential reference: RTL and model may decide
// differently there too.
template <class Top>
void lockstep_diverge(Top&, unsigned) {}
// Memory a diverged stream may write (KernelEnv::excuse).
template <class Top>
void lockstep_excuse(Top&, std::uint64_t, std::uint64_t) {}
// At finish(): what is left unmatched; "" when nothing.
template <class Top>
std::string lockstep_finish(Top&) {
  return "";
}

}  // namespace rnic::tb
