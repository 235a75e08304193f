// SPDX-License-Identifier: Apache-2.0
// rnic_kernel's network ports as VNx's network layer drives them (docs/network.md, docs/card-flow.md):
// - NetSource on s_axis_net: one SCTP packet (a UDP payload) per AXI-Stream packet, tkeep all ones but
//   on the last beat (low bytes), tuser = {their UDP port [95:80], my UDP port [79:64], their IPv4
//   [63:32], my IPv4 [31:0]} on every beat;
// - NetSink on m_axis_net: always ready; each packet with its tdest (the VNx socket), to a callback
//   or kept in a queue.
// Their state does not grow with the traffic beyond the packets not yet sent or taken.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "rnic/bus/sim.hpp"

namespace rnic::bus {

// The addresses VNx hands the kernel with a packet (host byte order).
struct NetMeta {
  std::uint32_t my_ip = 0;
  std::uint32_t their_ip = 0;
  std::uint16_t my_udp_port = 0;
  std::uint16_t their_udp_port = 0;
};

struct NetPacket {
  std::vector<std::uint8_t> bytes;
  NetMeta meta;
};

template <class Top>
class NetSource : public Component<Top> {
 public:
  NetSource(Sim<Top>& sim, unsigned bus_bytes) : bytes_(bus_bytes) { sim.add(this); }

  void push(NetPacket p) {
    if (p.bytes.empty()) throw std::invalid_argument("a network packet needs at least one byte");
    q_.push_back(std::move(p));
  }
  bool empty() const { return q_.empty(); }
  std::size_t pending() const { return q_.size(); }
  std::uint64_t packets_sent() const { return packets_; }
  std::uint64_t last_accept_cycle() const { return last_accept_; }

  void drive(Top& t, std::uint64_t) override {
    clear_all(t.s_axis_net_tdata);
    clear_all(t.s_axis_net_tkeep);
    clear_all(t.s_axis_net_tuser);
    t.s_axis_net_tlast = 0;
    t.s_axis_net_tdest = 0;
    t.s_axis_net_tvalid = !q_.empty();
    if (q_.empty()) return;
    const NetPacket& p = q_.front();
    const std::size_t off = std::size_t{beat_} * bytes_;
    for (unsigned i = 0; i < bytes_ && off + i < p.bytes.size(); ++i) {
      set_byte(t.s_axis_net_tdata, i, p.bytes[off + i]);
      set_bit(t.s_axis_net_tkeep, i, true);
    }
    t.s_axis_net_tlast = off + bytes_ >= p.bytes.size();
    const std::uint32_t words[3] = {p.meta.my_ip, p.meta.their_ip,
                                    (std::uint32_t{p.meta.their_udp_port} << 16) | p.meta.my_udp_port};
    for (unsigned i = 0; i < 12; ++i) {
      set_byte(t.s_axis_net_tuser, i, static_cast<std::uint8_t>(words[i / 4] >> (8 * (i % 4))));
    }
  }

  void sample(const Top& t, std::uint64_t cycle) override {
    if (!t.s_axis_net_tvalid || !t.s_axis_net_tready) return;
    last_accept_ = cycle;
    if (t.s_axis_net_tlast) {
      q_.pop_front();
      beat_ = 0;
      ++packets_;
    } else {
      ++beat_;
    }
  }

 private:
  unsigned bytes_;
  std::deque<NetPacket> q_;
  unsigned beat_ = 0;
  std::uint64_t packets_ = 0, last_accept_ = 0;
};

template <class Top>
class NetSink : public Component<Top> {
 public:
  struct Packet {
    std::vector<std::uint8_t> bytes;
    std::uint16_t socket;  // tdest
  };
  using OnPacket = std::function<void(Packet)>;

  NetSink(Sim<Top>& sim, unsigned bus_bytes) : bytes_(bus_bytes) { sim.add(this); }

  // Each packet as its last beat is taken; without a callback they queue in got().
  void on_packet(OnPacket f) { on_packet_ = std::move(f); }
  std::deque<Packet>& got() { return got_; }
  std::uint64_t packets() const { return packets_; }
  std::uint64_t last_activity() const { return last_beat_; }

  void drive(Top& t, std::uint64_t) override { t.m_axis_net_tready = 1; }
  void sample(const Top& t, std::uint64_t cycle) override {
    if (!t.m_axis_net_tvalid || !t.m_axis_net_tready) return;
    last_beat_ = cycle;
    for (unsigned i = 0; i < bytes_; ++i) {
      if (get_bit(t.m_axis_net_tkeep, i)) cur_.push_back(get_byte(t.m_axis_net_tdata, i));
    }
    if (!t.m_axis_net_tlast) return;
    ++packets_;
    Packet p{std::move(cur_), static_cast<std::uint16_t>(t.m_axis_net_tdest)};
    cur_.clear();
    if (on_packet_) {
      on_packet_(std::move(p));
    } else {
      got_.push_back(std::move(p));
    }
  }

 private:
  unsigned bytes_;
  std::vector<std::uint8_t> cur_;
  std::deque<Packet> got_;
  OnPacket on_packet_;
  std::uint64_t packets_ = 0, last_beat_ = 0;
};

}  // namespace rnic::bus
