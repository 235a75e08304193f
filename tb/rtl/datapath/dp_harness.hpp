// Small helpers shared by the datapath RTL tests: the seed, the clock/trace harness and byte-level
// access to Verilated signals of any width (CData..QData, VlWide<N>).
#pragma once

#include <gtest/gtest.h>
#include <verilated.h>

#include "rnic/tb/seed.hpp"
#include <verilated_fst_c.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace dp {


// Little-endian byte access: byte i of the buffer is bits [8*i+7 : 8*i] of the signal.
template <class T>
void set_bytes(T& sig, const std::uint8_t* p, std::size_t n) {
  if constexpr (std::is_integral_v<T>) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n && i < sizeof(T); ++i) v |= std::uint64_t{p[i]} << (8 * i);
    sig = static_cast<T>(v);
  } else {
    constexpr std::size_t kWords = sizeof(sig.m_storage) / sizeof(sig.m_storage[0]);
    for (std::size_t w = 0; w < kWords; ++w) {
      std::uint32_t v = 0;
      for (std::size_t b = 0; b < 4; ++b) {
        const std::size_t i = 4 * w + b;
        if (i < n) v |= std::uint32_t{p[i]} << (8 * b);
      }
      sig.m_storage[w] = v;
    }
  }
}

template <class T>
void get_bytes(const T& sig, std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      p[i] =
          i < sizeof(T) ? static_cast<std::uint8_t>(static_cast<std::uint64_t>(sig) >> (8 * i)) : 0;
    } else {
      constexpr std::size_t kWords = sizeof(sig.m_storage) / sizeof(sig.m_storage[0]);
      p[i] = i / 4 < kWords ? static_cast<std::uint8_t>(sig.m_storage[i / 4] >> (8 * (i % 4))) : 0;
    }
  }
}

template <class T>
std::vector<std::uint8_t> get_bytes(const T& sig, std::size_t n) {
  std::vector<std::uint8_t> v(n);
  get_bytes(sig, v.data(), n);
  return v;
}

// Bits [lsb, lsb+width) of a byte vector (little endian), width <= 64.
inline std::uint64_t bits(const std::vector<std::uint8_t>& v, unsigned lsb, unsigned width) {
  std::uint64_t r = 0;
  for (unsigned i = 0; i < width; ++i) {
    const unsigned b = lsb + i;
    if (((v.at(b / 8) >> (b % 8)) & 1U) != 0) r |= std::uint64_t{1} << i;
  }
  return r;
}

// Clock, reset and optional FST trace (RNIC_FST=<file>) around a Verilated model with clk_i/rst_ni.
// Per cycle: set the inputs, call eval() and look at the outputs (combinational view of the cycle
// before the edge), then tick().
template <class M>
class Sim {
 public:
  Sim() : ctx_(std::make_unique<VerilatedContext>()) {
    const char* fst = std::getenv("RNIC_FST");
    const bool trace = fst != nullptr && *fst != '\0';
    if (trace) {
      Verilated::traceEverOn(true);
      ctx_->traceEverOn(true);
    }
    m_ = std::make_unique<M>(ctx_.get(), "top");
    if (trace) {
      tfp_ = std::make_unique<VerilatedFstC>();
      m_->trace(tfp_.get(), 99);
      tfp_->open(fst);
    }
    m_->clk_i = 0;
    m_->rst_ni = 0;
    m_->eval();
  }
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;
  ~Sim() {
    if (tfp_) tfp_->close();
    m_->final();
  }

  M* operator->() { return m_.get(); }
  M& model() { return *m_; }
  std::uint64_t cycle() const { return cycle_; }

  void eval() { m_->eval(); }

  void tick() {
    m_->clk_i = 0;
    m_->eval();
    if (tfp_) tfp_->dump(time_);
    time_ += 5;
    m_->clk_i = 1;
    m_->eval();
    if (tfp_) tfp_->dump(time_);
    time_ += 5;
    m_->clk_i = 0;
    m_->eval();
    ++cycle_;
  }

  // Holds rst_ni low for `cycles` edges (other inputs as the caller left them), then releases it.
  void reset(int cycles = 2) {
    m_->rst_ni = 0;
    for (int i = 0; i < cycles; ++i) tick();
    m_->rst_ni = 1;
    m_->eval();
  }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<M> m_;
  std::unique_ptr<VerilatedFstC> tfp_;
  std::uint64_t time_ = 0;
  std::uint64_t cycle_ = 0;
};

}  // namespace dp
