// SPDX-License-Identifier: Apache-2.0
// Making a Verilated model's own context current around its construction and destruction.
//
// Verilator 5.006 registers a model's scopes (every model built with --assert has some) in the calling
// thread's current context, Verilated::threadContextp(), and erases them from that context again in
// the model's destructor: not from the model's own context. eval() leaves the current context at the
// last model evaluated, so a test that destroys one model after another model ran (two kernels in one
// test), or makes a model after another context was destroyed, locks the mutex of a destroyed
// context and hangs (KernelError.TaggedInvalidStagIndexOutOfRange did, 16 minutes, until killed).
// Every harness calls make_current(ctx) right before it constructs its model and right before it
// destroys it, so each model's scopes live and die in its own context.
#pragma once

#include <verilated.h>

namespace rnic::bus {

inline void make_current(VerilatedContext* ctx) { Verilated::threadContextp(ctx); }

}  // namespace rnic::bus
