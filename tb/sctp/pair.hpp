// SPDX-License-Identifier: Apache-2.0
// Two rnic::sctp::Endpoints in one process joined by an in-memory wire that the test controls:
// packets queue per direction, a hook may reorder / hold them, and every packet can be captured to a
// pcap as Ethernet/IPv4/SCTP (the bytes usrsctp produced, CRC32c included).
#pragma once

#include <pcap/pcap.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/sctp/endpoint.hpp"

namespace rnic::sctp::test {

using Packet = std::vector<std::uint8_t>;

// Raw SCTP packets to a pcap file (LINKTYPE_ETHERNET), 1 us apart: reproducible.
class RawPcap {
 public:
  explicit RawPcap(const std::string& path) {
    pcap_ = pcap_open_dead(DLT_EN10MB, 65535);
    if (pcap_ == nullptr) throw std::runtime_error("pcap_open_dead failed");
    dumper_ = pcap_dump_open(pcap_, path.c_str());
    if (dumper_ == nullptr) {
      const std::string e = pcap_geterr(pcap_);
      pcap_close(pcap_);
      throw std::runtime_error("pcap_dump_open " + path + ": " + e);
    }
  }
  ~RawPcap() { close(); }
  RawPcap(const RawPcap&) = delete;
  RawPcap& operator=(const RawPcap&) = delete;
  void write(bool a_to_b, const Packet& sctp) {
    const capture::SctpEndpoint a{0x0A000001, 0}, b{0x0A000002, 0};
    const auto frame = capture::SctpPacket::frame(a_to_b ? a : b, a_to_b ? b : a, sctp);
    pcap_pkthdr h{};
    h.ts.tv_sec = 1;
    h.ts.tv_usec = static_cast<decltype(h.ts.tv_usec)>(++count_);
    h.caplen = h.len = static_cast<bpf_u_int32>(frame.size());
    pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, frame.data());
  }
  void close() {
    if (dumper_ != nullptr) pcap_dump_close(dumper_);
    if (pcap_ != nullptr) pcap_close(pcap_);
    dumper_ = nullptr;
    pcap_ = nullptr;
  }
  std::uint64_t count() const { return count_; }

 private:
  pcap_t* pcap_ = nullptr;
  pcap_dumper_t* dumper_ = nullptr;
  std::uint64_t count_ = 0;
};

// The DATA chunks of one SCTP packet (RFC 4960 3.3.1): what the tests check on the wire.
struct DataChunkInfo {
  bool unordered, begin, end;
  std::uint16_t sid;
  std::uint32_t ppid;
  std::size_t user_data;
  std::uint32_t tsn;
};
inline std::vector<DataChunkInfo> data_chunks(const Packet& p) {
  std::vector<DataChunkInfo> out;
  std::size_t off = 12;
  while (off + 4 <= p.size()) {
    const std::size_t len = (std::size_t{p[off + 2]} << 8) | p[off + 3];
    if (len < 4 || off + len > p.size()) break;
    if (p[off] == 0 && len >= 16) {
      const std::uint8_t f = p[off + 1];
      out.push_back({(f & 4) != 0, (f & 2) != 0, (f & 1) != 0,
                     static_cast<std::uint16_t>((p[off + 8] << 8) | p[off + 9]),
                     (std::uint32_t{p[off + 12]} << 24) | (std::uint32_t{p[off + 13]} << 16) |
                         (std::uint32_t{p[off + 14]} << 8) | p[off + 15],
                     len - 16,
                     (std::uint32_t{p[off + 4]} << 24) | (std::uint32_t{p[off + 5]} << 16) |
                         (std::uint32_t{p[off + 6]} << 8) | p[off + 7]});
    }
    off += (len + 3) & ~std::size_t{3};
  }
  return out;
}

class Pair {
 public:
  explicit Pair(EndpointConfig ca = {}, EndpointConfig cb = {}) {
    ca.port = 5001;
    cb.port = 5002;
    a = std::make_unique<Endpoint>(ca, [this](wire::ConstBytes p) { on_wire(true, p); });
    b = std::make_unique<Endpoint>(cb, [this](wire::ConstBytes p) { on_wire(false, p); });
  }

  // a connects to b; runs until both sides have decided the association.
  void connect() {
    b->listen();
    a->connect(5002);
    run([&] { return settled(*a) && settled(*b); });
  }
  static bool settled(const Endpoint& e) {
    return e.state() != AssociationState::kConnecting && e.state() != AssociationState::kListening;
  }

  // Moves packets and pumps both sides until `done` or nothing moves any more (then timers advance,
  // at most max_idle times). Returns done().
  bool run(
      const std::function<bool()>& done = [] { return false; }, int max_idle = 20) {
    int idle = 0;
    for (int i = 0; i < 100000; ++i) {
      if (done()) return true;
      bool moved = a->pump();
      moved = b->pump() || moved;
      if (reorder) reorder(to_b, to_a);
      moved = deliver(to_b, *b) || moved;
      moved = deliver(to_a, *a) || moved;
      if (!moved) {
        if (done()) return true;
        if (++idle > max_idle) return done();
        Endpoint::advance_timers(250);  // delayed SACK, retransmission
      } else {
        idle = 0;
      }
    }
    return done();
  }

  std::unique_ptr<RawPcap> capture;
  // May reorder or hold back packets of either direction before they are delivered.
  std::function<void(std::deque<Packet>& to_b, std::deque<Packet>& to_a)> reorder;
  std::function<void(bool a_to_b, const Packet&)> tap;
  std::deque<Packet> to_b, to_a;
  std::unique_ptr<Endpoint> a, b;

 private:
  void on_wire(bool a_to_b, wire::ConstBytes p) {
    Packet pkt = p.to_vector();
    if (capture) capture->write(a_to_b, pkt);
    if (tap) tap(a_to_b, pkt);
    (a_to_b ? to_b : to_a).push_back(std::move(pkt));
  }
  static bool deliver(std::deque<Packet>& q, Endpoint& to) {
    bool any = !q.empty();
    std::deque<Packet> now;
    now.swap(q);  // packets produced while delivering wait for the next round
    for (auto& p : now) to.input(wire::ConstBytes(p));
    return any;
  }
};

}  // namespace rnic::sctp::test
