// SPDX-License-Identifier: Apache-2.0
// rnic_host_path_bench: the host side of issue 14 ("Figures: the host side"). What one CPU core spends in
// usrsctp per packet of the trimmed-header path, the packet rate that gives, and the throughput ceiling
// it puts on the card at 1500 and 9000-byte MTU; then the same with the trimmed chunks of K consecutive
// packets of one association coalesced into one host packet.
//
// Method: a sender Endpoint and a receiver Endpoint (driver/sctp, usrsctp over AF_CONN) in this process,
// usrsctp's CRC32c offloaded (the card checks and inserts it, docs/network.md). The sender sends
// maximum-size tagged DDP segments; each of its packets goes through the reference model of the card's
// front end (tb/net NetRef: every segment taken), and the host copies (chunk header, DDP-SSN and the
// 14-byte DDP header per segment: 44 bytes a packet) are handed, K at a time, to the receiver, merged
// by the host's rnic::sctp::PacketCoalescer (as rnic-sink does). Only the merge and the
// receiver's input() + pump() are timed (CLOCK_THREAD_CPUTIME_ID, the cost of reading the clock
// subtracted); its SACKs go back to the sender untouched. Under callgrind the same region is the only one
// collected (CALLGRIND_TOGGLE_COLLECT), so Ir / packet is the instruction count per packet.
//
// The host copy of a packet is the same at any MTU: the MTU only sets the payload the card placed per
// packet, so the ceiling is pps x (MTU - IPv4 20 - UDP 8 - SCTP 12 - chunk 16 - DDP-SSN 2 - tagged DDP
// header 14) x 8 for each MTU, from the same measured rate.
//
//   rnic_host_path_bench [--packets N] [--rounds R] [--k 1,4,16,32] [--segment BYTES]
// --segment: the DDP segment size (default: the largest for the path); the host packet, and so the
// time, should not depend on it.
#include <usrsctp.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rnic/sctp/coalesce.hpp"
#include "rnic/sctp/endpoint.hpp"
#include "rnic/tb/net_ref.hpp"
#include "rnic/wire/ddp.hpp"

namespace {

using rnic::sctp::Endpoint;
using rnic::sctp::EndpointConfig;
using rnic::tb::net::AssocEntry;
using rnic::tb::net::NetRef;
using rnic::tb::net::PacketMeta;
using Packet = std::vector<std::uint8_t>;

std::uint64_t thread_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The cost of one thread_ns() pair, subtracted from every timed region.
std::uint64_t clock_overhead_ns() {
  constexpr int kN = 20000;
  const std::uint64_t t0 = thread_ns();
  for (int i = 0; i < kN; ++i) (void)thread_ns();
  return (thread_ns() - t0) / kN;
}

std::uint64_t payload_bytes(std::uint64_t mtu) { return mtu - 20 - 8 - 12 - 16 - 2 - 14; }

struct RunResult {
  std::uint64_t wire_packets = 0;        // sender DATA packets (one DDP segment each) delivered timed
  std::uint64_t host_packets = 0;        // packets handed to the receiver, timed
  std::uint64_t partial = 0;             // host packets of fewer than K (the sender had no more in flight)
  std::uint64_t ns = 0;                  // receiver CPU time, clock overhead subtracted
  std::size_t segment_bytes = 0;         // DDP segment size the sender used
  std::uint32_t path_mtu = 0;            // the AF_CONN path MTU usrsctp chose
  std::uint64_t segments_delivered = 0;  // what the receiving Endpoint's session machine saw
};

// b's INIT-ACK names the tag a's packets carry: the driver's table entry (NET_ASSOC_WRITE).
void learn_association(const Packet& from_b, NetRef& ref, const PacketMeta& meta) {
  if (auto e = assoc_from_init_ack(rnic::wire::ConstBytes(from_b), meta, 0, 8)) ref.table() = {*e};
}

// One association: handshake, Initiate / Accept, then `packets` DATA packets of one maximum-size tagged
// DDP segment each, trimmed by the model, K trimmed packets per host packet. Ports differ per run so no
// lingering association of an earlier run is met.
RunResult run(std::size_t k, std::uint64_t packets, std::size_t segment_bytes, std::uint16_t port_base,
              std::uint64_t clock_ns) {
  std::deque<Packet> to_b, to_a;
  EndpointConfig ca, cb;
  ca.port = port_base;
  cb.port = static_cast<std::uint16_t>(port_base + 1);
  auto a = std::make_unique<Endpoint>(ca, [&](rnic::wire::ConstBytes p) { to_b.push_back(p.to_vector()); });
  auto b = std::make_unique<Endpoint>(cb, [&](rnic::wire::ConstBytes p) { to_a.push_back(p.to_vector()); });
  const PacketMeta meta{0x0A000002, 0x0A000001, 9899, 9899};
  NetRef ref({}, std::vector<bool>(8, false));
  b->set_session_handler([&](const rnic::sctp::SessionNotice& n) {
    if (n.kind != rnic::sctp::NoticeKind::kInitiate) return;
    ref.live()[n.stream] = true;  // the driver sets the live bit before the Accept goes
    b->accept(n.stream);
  });
  RunResult r;
  b->set_segment_sink([&](std::uint16_t, std::uint16_t, rnic::wire::ConstBytes) { ++r.segments_delivered; });

  std::deque<Packet> pending;  // trimmed DATA packets waiting to be coalesced
  bool timing = false;
  const auto deliver_to_b = [&](const Packet& p) {  // untimed: the handshake, SACK-only rounds
    b->input(p);
    b->pump();
  };
  // The first n pending packets as one host packet, merged by the host's own PacketCoalescer (the first
  // common header, then every packet's chunks): the merge is timed with usrsctp's input and pump.
  const auto coalesce = [&](std::size_t n) {
    std::uint64_t inputs = 0;
    rnic::sctp::PacketCoalescer merger(n, std::size_t{1} << 16, [&](rnic::wire::ConstBytes p) {
      b->input(p);
      ++inputs;
    });
    CALLGRIND_TOGGLE_COLLECT;
    const std::uint64_t t0 = thread_ns();
    for (std::size_t i = 0; i < n; ++i) merger.add(0, rnic::wire::ConstBytes(pending[i]));
    merger.flush();
    b->pump();
    const std::uint64_t t1 = thread_ns();
    CALLGRIND_TOGGLE_COLLECT;
    if (inputs != 1) throw std::runtime_error("bench: the coalescer did not merge a batch of trimmed DATA packets");
    r.ns += t1 - t0 > clock_ns ? t1 - t0 - clock_ns : 0;
    r.wire_packets += n;
    ++r.host_packets;
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(n));
  };
  // Moves every packet once; returns whether anything moved.
  const auto step = [&] {
    bool moved = a->pump();
    moved = b->pump() || moved;
    while (!to_b.empty()) {
      Packet p = std::move(to_b.front());
      to_b.pop_front();
      moved = true;
      auto res = ref.receive(p, meta, true, rnic::tb::net::take_all);
      if (timing && res.summary.segments > 0) {
        pending.push_back(std::move(*res.host));
      } else {
        deliver_to_b(*res.host);
      }
    }
    while (pending.size() >= k) coalesce(k);
    while (!to_a.empty()) {
      Packet p = std::move(to_a.front());
      to_a.pop_front();
      moved = true;
      learn_association(p, ref, meta);
      a->input(p);
    }
    return moved;
  };
  const auto settle = [&](const auto& done, const char* what) {
    for (int i = 0; i < 100000 && !done(); ++i)
      if (!step()) Endpoint::advance_timers(10);
    if (!done()) throw std::runtime_error(std::string("bench: ") + what + " did not happen");
  };

  b->listen();
  a->connect(cb.port);
  settle(
      [&] {
        return a->state() == rnic::sctp::AssociationState::kReady && b->state() == rnic::sctp::AssociationState::kReady;
      },
      "association set-up");
  if (ref.table().empty()) throw std::runtime_error("bench: no INIT-ACK seen");
  a->initiate(0);
  settle([&] { return a->session_state(0) == rnic::sctp::SessionState::kEstablished; }, "Initiate / Accept");

  r.path_mtu = a->path_mtu();
  r.segment_bytes = segment_bytes == 0 ? a->max_segment_size() : segment_bytes;
  if (r.segment_bytes > a->max_segment_size() || r.segment_bytes <= rnic::wire::kTaggedHeaderSize)
    throw std::invalid_argument("--segment " + std::to_string(segment_bytes) + ": must be 15.." +
                                std::to_string(a->max_segment_size()) + " on this path");
  rnic::wire::TaggedHeader h;
  h.last = true;
  h.stag = 0x00000100;
  const Packet segment =
      rnic::wire::encode_segment(h, Packet(r.segment_bytes - rnic::wire::kTaggedHeaderSize, 0xA5)).value();
  timing = true;
  std::uint64_t sent = 0;
  int idle = 0;
  while (r.wire_packets < packets) {
    while (sent < packets && a->queued_chunks() < 256) {
      a->send_segment(0, segment);
      ++sent;
    }
    if (step()) {
      idle = 0;
      continue;
    }
    if (!pending.empty()) {  // the sender has nothing more in flight: a short batch
      ++r.partial;
      coalesce(pending.size());
      continue;
    }
    if (++idle > 100000) throw std::runtime_error("bench: no progress");
    Endpoint::advance_timers(10);  // delayed SACK, untimed
  }
  if (r.segments_delivered + 1 < packets) throw std::runtime_error("bench: the receiver did not take the segments");
  return r;
}

std::vector<std::size_t> parse_list(const char* s) {
  std::vector<std::size_t> v;
  std::string t(s);
  std::size_t pos = 0;
  while (pos <= t.size()) {
    const std::size_t comma = std::min(t.find(',', pos), t.size());
    const std::string item = t.substr(pos, comma - pos);
    std::size_t used = 0;
    const unsigned long x = std::stoul(item, &used);
    if (used != item.size() || x == 0 || x > 32) throw std::invalid_argument("--k: '" + item + "' is not 1..32");
    v.push_back(x);
    pos = comma + 1;
  }
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 != 0 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t packets = 20000;
  int rounds = 3;
  std::vector<std::size_t> ks{1, 4, 16, 32};
  std::size_t segment = 0;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      if (arg == "--packets") {
        packets = std::stoull(argv[++i]);
      } else if (arg == "--rounds") {
        rounds = std::stoi(argv[++i]);
      } else if (arg == "--segment") {
        segment = std::stoul(argv[++i]);
      } else if (arg == "--k") {
        ks = parse_list(argv[++i]);
      } else {
        throw std::invalid_argument("unknown option " + arg +
                                    " (--packets N, --rounds R, --k 1,4,16,32, --segment BYTES)");
      }
    }
    if (packets < 100 || rounds < 1) throw std::invalid_argument("--packets >= 100 and --rounds >= 1");

    // usrsctp is set up by the first Endpoint; this one keeps it up, so that the settings below hold for
    // every run. The sender may keep enough in flight for K = 32 (two host packets a SACK): large
    // buffers, a large initial window, no burst limit. CRC32c is the card's (docs/network.md).
    Endpoint keeper(EndpointConfig{4999}, [](rnic::wire::ConstBytes) {});
    usrsctp_sysctl_set_sctp_sendspace(64u << 20);
    usrsctp_sysctl_set_sctp_recvspace(64u << 20);
    usrsctp_sysctl_set_sctp_initial_cwnd(1024);
    usrsctp_sysctl_set_sctp_max_burst_default(0);
    usrsctp_enable_crc32c_offload();
    const std::uint64_t clock_ns = clock_overhead_ns();

    std::vector<std::vector<RunResult>> results(ks.size());
    std::uint16_t port = 6000;
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t i = 0; i < ks.size(); ++i) {
        results[i].push_back(run(ks[i], packets, segment, port, clock_ns));
        port = static_cast<std::uint16_t>(port + 2);
      }
    }
    const RunResult& first = results[0][0];
    std::printf(
        "rnic_host_path_bench: %llu DATA packets per run, %d rounds (median shown), clock read %llu ns "
        "(subtracted)\n",
        static_cast<unsigned long long>(packets), rounds, static_cast<unsigned long long>(clock_ns));
    std::printf("sender: AF_CONN path MTU %u, DDP segment %zu bytes; host packet per wire packet: 12 + 32 bytes\n",
                first.path_mtu, first.segment_bytes);
    std::printf("ceiling payload per packet: %llu bytes at MTU 1500, %llu at MTU 9000\n",
                static_cast<unsigned long long>(payload_bytes(1500)),
                static_cast<unsigned long long>(payload_bytes(9000)));
    std::printf("%4s %10s %10s %8s %12s %12s %10s %11s %11s %8s\n", "K", "wire pkts", "host pkts", "partial",
                "ns/wire pkt", "ns/host pkt", "Mpps/core", "Gb/s @1500", "Gb/s @9000", "vs K=1");
    for (std::size_t i = 0; i < ks.size(); ++i) {
      std::vector<double> ns_wire, ns_host, ratio;
      std::uint64_t wire = 0, host = 0, partial = 0;
      for (int round = 0; round < rounds; ++round) {
        const RunResult& x = results[i][static_cast<std::size_t>(round)];
        const RunResult& base = results[0][static_cast<std::size_t>(round)];
        ns_wire.push_back(static_cast<double>(x.ns) / static_cast<double>(x.wire_packets));
        ns_host.push_back(static_cast<double>(x.ns) / static_cast<double>(x.host_packets));
        ratio.push_back((static_cast<double>(base.ns) / static_cast<double>(base.wire_packets)) / ns_wire.back());
        wire += x.wire_packets;
        host += x.host_packets;
        partial += x.partial;
      }
      const double ns = median(ns_wire);
      const double pps = 1e9 / ns;
      std::printf("%4zu %10llu %10llu %8llu %12.0f %12.0f %10.3f %11.1f %11.1f %7.2fx\n", ks[i],
                  static_cast<unsigned long long>(wire), static_cast<unsigned long long>(host),
                  static_cast<unsigned long long>(partial), ns, median(ns_host), pps / 1e6,
                  pps * static_cast<double>(payload_bytes(1500)) * 8 / 1e9,
                  pps * static_cast<double>(payload_bytes(9000)) * 8 / 1e9, median(ratio));
    }
    std::printf(
        "\n(the ratio is per round against K=%zu of the same round, then the median; absolute numbers\n"
        " are indicative: the machine is shared)\n",
        ks[0]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rnic_host_path_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
