// SPDX-License-Identifier: Apache-2.0
// Clock/reset driver for a Verilated rnic_kernel (ap_clk / ap_rst_n), FST dump on request, and the
// byte/bit accessors for Verilator port types (integers up to 64 bits, VlWide<N> above).
//
// One cycle of Sim::tick():
//   1. every component drives its inputs for the cycle;
//   2. clock low, eval: the design's combinational outputs settle;
//   3. every component samples the settled signals: a valid && ready seen here is the handshake
//      that happens at this rising edge, and the component updates its own state accordingly;
//   4. clock high, eval (the rising edge).
// Components never drive in sample(), so the edge sees exactly what drive() presented.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "rnic/bus/verilated_context.hpp"
#include "verilated.h"
#include "verilated_fst_c.h"

namespace rnic::bus {

// ---- Verilator port accessors ------------------------------------------------------------------

template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline std::uint8_t get_byte(const T& v, unsigned i) {
  return static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i));
}
template <std::size_t N>
inline std::uint8_t get_byte(const VlWide<N>& v, unsigned i) {
  return static_cast<std::uint8_t>(v.m_storage[i / 4] >> (8 * (i % 4)));
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline void set_byte(T& v, unsigned i, std::uint8_t b) {
  const std::uint64_t mask = std::uint64_t{0xFF} << (8 * i);
  v = static_cast<T>((static_cast<std::uint64_t>(v) & ~mask) | (std::uint64_t{b} << (8 * i)));
}
template <std::size_t N>
inline void set_byte(VlWide<N>& v, unsigned i, std::uint8_t b) {
  EData& w = v.m_storage[i / 4];
  const unsigned sh = 8 * (i % 4);
  w = (w & ~(EData{0xFF} << sh)) | (EData{b} << sh);
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline bool get_bit(const T& v, unsigned i) {
  return ((static_cast<std::uint64_t>(v) >> i) & 1u) != 0;
}
template <std::size_t N>
inline bool get_bit(const VlWide<N>& v, unsigned i) {
  return ((v.m_storage[i / 32] >> (i % 32)) & 1u) != 0;
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline void set_bit(T& v, unsigned i, bool b) {
  const std::uint64_t m = std::uint64_t{1} << i;
  v = static_cast<T>(b ? (static_cast<std::uint64_t>(v) | m) : (static_cast<std::uint64_t>(v) & ~m));
}
template <std::size_t N>
inline void set_bit(VlWide<N>& v, unsigned i, bool b) {
  const EData m = EData{1} << (i % 32);
  if (b) {
    v.m_storage[i / 32] |= m;
  } else {
    v.m_storage[i / 32] &= ~m;
  }
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline void clear_all(T& v) {
  v = 0;
}
template <std::size_t N>
inline void clear_all(VlWide<N>& v) {
  for (std::size_t i = 0; i < N; ++i) v.m_storage[i] = 0;
}

// ---- the simulation --------------------------------------------------------------------------------

// Protocol or consistency problems found by components: collected, never thrown, so one run reports
// everything it saw. Tests assert the list is empty.
class ErrorLog {
 public:
  void add(std::uint64_t cycle, const std::string& what) {
    if (errors_.size() < 200) errors_.push_back("cycle " + std::to_string(cycle) + ": " + what);
    ++count_;
  }
  bool empty() const { return count_ == 0; }
  std::size_t count() const { return count_; }
  std::string text() const {
    std::string s;
    for (const auto& e : errors_) s += e + "\n";
    if (count_ > errors_.size()) s += "... " + std::to_string(count_ - errors_.size()) + " more\n";
    return s;
  }

 private:
  std::vector<std::string> errors_;
  std::size_t count_ = 0;
};

template <class Top>
class Component {
 public:
  virtual ~Component() = default;
  // Present this cycle's inputs (before the rising edge).
  virtual void drive(Top& top, std::uint64_t cycle) = 0;
  // Observe settled signals; a valid && ready here is a handshake at this edge.
  virtual void sample(const Top& top, std::uint64_t cycle) = 0;
};

template <class Top>
class Sim {
 public:
  Sim() : ctx_(std::make_unique<VerilatedContext>()) {
    const char* fst = std::getenv("RNIC_FST");
    if (fst != nullptr && *fst != '\0') ctx_->traceEverOn(true);
    make_current(ctx_.get());
    top_ = std::make_unique<Top>(ctx_.get(), "tb");
    if (fst != nullptr && *fst != '\0') {
      trace_ = std::make_unique<VerilatedFstC>();
      top_->trace(trace_.get(), 99);
      trace_->open(fst);
    }
    top_->ap_clk = 0;
    top_->ap_rst_n = 0;
    top_->eval();
  }
  ~Sim() {
    if (trace_) trace_->close();
    make_current(ctx_.get());
    top_->final();
    top_.reset();
  }
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;

  Top& top() { return *top_; }
  std::uint64_t cycle() const { return cycle_; }
  ErrorLog& errors() { return errors_; }
  void add(Component<Top>* c) { comps_.push_back(c); }

  void tick() {
    for (auto* c : comps_) c->drive(*top_, cycle_);
    top_->ap_clk = 0;
    top_->eval();
    dump(2 * cycle_);
    for (auto* c : comps_) c->sample(*top_, cycle_);
    top_->ap_clk = 1;
    top_->eval();
    dump(2 * cycle_ + 1);
    ++cycle_;
  }

  // Active-low reset for `cycles` cycles, then one cycle out of reset.
  void reset(unsigned cycles = 16) {
    top_->ap_rst_n = 0;
    for (unsigned i = 0; i < cycles; ++i) tick();
    top_->ap_rst_n = 1;
    tick();
  }

 private:
  void dump(std::uint64_t t) {
    if (!trace_) return;
    ctx_->time(t);
    trace_->dump(t);
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Top> top_;
  std::unique_ptr<VerilatedFstC> trace_;
  std::vector<Component<Top>*> comps_;
  ErrorLog errors_;
  std::uint64_t cycle_ = 0;
};

}  // namespace rnic::bus
