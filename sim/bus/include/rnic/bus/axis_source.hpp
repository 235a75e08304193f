// SPDX-License-Identifier: Apache-2.0
// AXI-Stream source on rnic_kernel's s_axis_rx: one packet per DDP segment, tuser = (net << 32) | (ssn << 16) | stream
// on every beat, tkeep all ones but on the last beat (low bytes), optional random idle cycles between
// beats. Counts packets and the cycles the kernel held the input off (tvalid && !tready); its state does
// not grow with the traffic (rnic-sim injects for as long as it runs). A testbench that wants the cycles
// each packet's beats were accepted sets on_packet and keeps them itself.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

#include "rnic/bus/sim.hpp"

namespace rnic::bus {

struct AxisPacket {
  std::vector<std::uint8_t> bytes;
  std::uint16_t stream = 0;
  std::uint16_t ssn = 0;
  bool net = false;           // tuser[32]: from the network front end (docs/network.md)
  unsigned header_bytes = 0;  // beat holding byte header_bytes - 1 is "the last header beat"
};

struct AxisTiming {
  std::uint64_t first_beat = 0;   // cycle the first beat was accepted
  std::uint64_t header_beat = 0;  // cycle the beat completing the header was accepted
  std::uint64_t last_beat = 0;
};

template <class Top>
class AxisSource : public Component<Top> {
 public:
  AxisSource(Sim<Top>& sim, unsigned bus_bytes, std::uint64_t seed) : bytes_(bus_bytes), rng_(seed) { sim.add(this); }

  // Probability of an idle cycle before each beat that is not yet presented.
  void set_idle(double p) { idle_ = p; }
  void push(AxisPacket p) {
    if (p.bytes.empty()) throw std::invalid_argument("AXI-Stream packet needs at least one byte");
    q_.push_back(std::move(p));
  }
  bool empty() const { return q_.empty(); }
  std::size_t pending() const { return q_.size(); }

  // Called as each packet's last beat is accepted, with the cycles of its beats.
  void on_packet(std::function<void(const AxisTiming&)> f) { on_packet_ = std::move(f); }

  std::uint64_t packets_sent() const { return packets_; }
  std::uint64_t backpressure_cycles() const { return bp_cycles_; }
  std::uint64_t valid_cycles() const { return valid_cycles_; }
  std::uint64_t first_valid_cycle() const { return first_valid_; }
  std::uint64_t last_accept_cycle() const { return last_accept_; }
  // Beats the kernel has accepted since construction (clear_stats leaves it).
  std::uint64_t beats_accepted() const { return beats_; }
  void clear_stats() {
    packets_ = 0;
    bp_cycles_ = valid_cycles_ = 0;
    first_valid_ = ~std::uint64_t{0};
  }

  void drive(Top& t, std::uint64_t) override {
    if (!presented_ && !q_.empty()) {
      presented_ = !(idle_ > 0.0 && std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < idle_);
    }
    t.s_axis_rx_tvalid = presented_;
    clear_all(t.s_axis_rx_tdata);
    clear_all(t.s_axis_rx_tkeep);
    t.s_axis_rx_tlast = 0;
    t.s_axis_rx_tuser = 0;
    if (!presented_) return;
    const AxisPacket& p = q_.front();
    const std::size_t off = std::size_t{beat_} * bytes_;
    for (unsigned i = 0; i < bytes_ && off + i < p.bytes.size(); ++i) {
      set_byte(t.s_axis_rx_tdata, i, p.bytes[off + i]);
      set_bit(t.s_axis_rx_tkeep, i, true);
    }
    t.s_axis_rx_tlast = off + bytes_ >= p.bytes.size();
    t.s_axis_rx_tuser = (std::uint64_t{p.net} << 32) | (std::uint64_t{p.ssn} << 16) | p.stream;
  }

  void sample(const Top& t, std::uint64_t cycle) override {
    if (!presented_) return;
    ++valid_cycles_;
    if (first_valid_ == ~std::uint64_t{0}) first_valid_ = cycle;
    if (!t.s_axis_rx_tready) {
      ++bp_cycles_;
      return;
    }
    const AxisPacket& p = q_.front();
    const std::size_t off = std::size_t{beat_} * bytes_;
    if (beat_ == 0) cur_.first_beat = cycle;
    const std::size_t hdr_last = p.header_bytes == 0 ? 0 : p.header_bytes - 1;
    if (hdr_last >= off && hdr_last < off + bytes_) cur_.header_beat = cycle;
    last_accept_ = cycle;
    ++beats_;
    presented_ = false;
    if (off + bytes_ >= p.bytes.size()) {
      cur_.last_beat = cycle;
      if (hdr_last >= p.bytes.size()) cur_.header_beat = cycle;
      ++packets_;
      if (on_packet_) on_packet_(cur_);
      q_.pop_front();
      beat_ = 0;
    } else {
      ++beat_;
    }
  }

 private:
  unsigned bytes_;
  std::mt19937_64 rng_;
  double idle_ = 0.0;
  std::deque<AxisPacket> q_;
  bool presented_ = false;
  unsigned beat_ = 0;
  AxisTiming cur_;
  std::uint64_t packets_ = 0;
  std::function<void(const AxisTiming&)> on_packet_;
  std::uint64_t bp_cycles_ = 0, valid_cycles_ = 0, first_valid_ = ~std::uint64_t{0}, last_accept_ = 0;
  std::uint64_t beats_ = 0;
};

}  // namespace rnic::bus
