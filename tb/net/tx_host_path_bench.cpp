// SPDX-License-Identifier: Apache-2.0
// rnic_tx_host_path_bench: the transmit side of the host figures (issue 35, "Host CPU per sent packet
// through usrsctp with descriptor chunks, against today's copying path, at 1500 and 9000-byte MTU, and the
// throughput ceiling per core that follows"). The receive-side twin is host_path_bench.cpp.
//
// Method: a sender Endpoint and a receiver Endpoint (driver/sctp, usrsctp over AF_CONN) in this process,
// usrsctp's CRC32c offloaded (the card inserts it, docs/network.md), the association's MTU 1500 or 9000
// (EndpointConfig::path_mtu: usrsctp fixes an association's fragmentation point when it creates it). After an RFC 5043
// session on stream 0 the sender sends tagged messages of max_segment_size() - 14 bytes: one DDP segment,
// one DATA chunk, one packet each. Two paths:
//   copy        send_tagged: usrsctp copies the message; the output callback copies each packet into a
//               std::vector (the real driver copies it into a transmit ring slot).
//   descriptor  send_tagged_described (docs/transmit.md): usrsctp gets full-length descriptor chunks whose
//               payload is zeros; the output callback does what CardEndpoint::on_emit does: summarize_packet
//               (TSN bookkeeping), rewrite_for_gather with an is_ours that looks the chunk up in a
//               std::map registry keyed by (SCTP stream, DDP-SSN) and matches STag, TO and LEN, the slot
//               form kept in a std::vector; each packet from the peer is parsed (summarize_packet: its
//               cumulative TSN acks) and the acknowledged segments leave the registry, as the driver does.
// What is timed (CLOCK_THREAD_CPUTIME_ID, the cost of reading the clock subtracted) is the sender's host
// CPU: its send calls, its pump(), its input() of the receiver's packets (SACK processing, and whatever
// usrsctp sends from inside it) and the driver work above, all output callbacks included. Two timed
// regions per batch (the --batch sends with the pump() after them; the receiver's packets of that round),
// so the clock, a system call here, is read rarely. Not timed: the receiver's input() / pump(), moving
// packets between the two, and, on the descriptor path, the card's gather (the reference model tb/net
// TxGatherRef puts each slot packet back together from the memory buffer, so the receiver gets real
// payload bytes; every segment's payload is checked). Every packet moves once each way per batch: the
// receiver keeps SACKing and the sender is never window-limited (initial cwnd 1024 MTUs). Only packets of
// the sender's that carry DATA are counted; each must carry exactly one whole (U, B, E) DATA chunk (and,
// on the descriptor path, be rewritten), else the run fails. Message i comes from slot i % --slots of the
// buffer: the default 16 keeps the copying path's source in the cache; a large count makes it cold.
//
// Reading the table: "ns/pkt" is the sender's CPU per DATA packet (median over rounds), "input()" the part
// of it spent in the sender's input() of SACKs; "Mpps/core" = 1e3 / ns/pkt; "Gb/s/core" = pps x payload x
// 8, payload the message bytes per packet (the DDP payload: MTU - IPv4 20 - SCTP 12 - DATA 16 - DDP-SSN 2
// - tagged DDP header 14; no UDP header, as Endpoint::max_segment_size counts it); "wire B" the SCTP
// packet, "host B" what the output callback keeps of it (the slot's packet); "desc/copy" the descriptor
// path's ns/pkt over the copying path's at the same MTU, per round, then the median (above 1: the
// descriptor path costs the host more). Absolute numbers are indicative: the machine is shared.
//
//   rnic_tx_host_path_bench [--packets N] [--rounds R] [--batch B] [--slots S]
#include <usrsctp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rnic/sctp/endpoint.hpp"
#include "rnic/tb/tx_gather_ref.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/gather.hpp"

namespace {

using rnic::sctp::Endpoint;
using rnic::sctp::EndpointConfig;
using Packet = std::vector<std::uint8_t>;

enum class Path { kCopy, kDescriptor };
const char* path_name(Path p) { return p == Path::kCopy ? "copy" : "descriptor"; }

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

// RFC 1982 serial arithmetic on TSNs.
bool serial_le(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(b - a) >= 0; }

// The registered memory the card reads on the descriptor path (and the user's buffer on the copying path):
// message i is its part i % slots (--slots, each a message long). STag 0x105: index 1, key 5, local read, PD 7.
constexpr std::uint32_t kLocalStag = 0x105;
constexpr std::uint64_t kBaseTo = 0x1'0000'0000;
constexpr std::uint16_t kPd = 7;
constexpr std::uint32_t kRemoteStag = 0x100;

struct RunResult {
  std::uint64_t data_packets = 0;   // sender packets with DATA (one DDP segment each) while timing
  std::uint64_t other_packets = 0;  // sender packets without DATA while timing
  std::uint64_t ns = 0;             // sender CPU time, clock overhead subtracted
  std::uint64_t input_ns = 0;       // of which the sender's input() of the receiver's packets
  std::size_t payload = 0;          // message (DDP payload) bytes per packet
  std::size_t wire_bytes = 0;       // the SCTP packet of one segment
  std::size_t host_bytes = 0;       // what the output callback keeps of it (the slot's packet)
  std::uint32_t path_mtu = 0;
};

struct Registered {  // one descriptor segment the Data Source issued (CardEndpoint's SegmentState)
  std::uint32_t stag = 0;
  std::uint64_t to = 0;
  std::uint32_t length = 0;
  std::optional<std::uint32_t> tsn;
};
using Key = std::pair<std::uint16_t, std::uint16_t>;  // (SCTP stream, DDP-SSN)

struct Out {
  Packet bytes;
  bool gather = false;  // the slot form: the card reads the payload
};

RunResult run(Path path, std::uint32_t mtu, std::uint64_t packets, std::uint64_t batch, std::uint16_t port_base,
              std::uint64_t clock_ns, const Packet& memory, std::size_t slots) {
  std::deque<Out> to_b;
  std::deque<Packet> to_a;
  std::map<Key, Registered> registry;
  std::deque<Key> in_order;  // registry keys in send order, for the cumulative acks
  std::optional<std::uint32_t> cum_ack;
  bool fragmented = false;
  std::string emit_error;
  RunResult r;

  EndpointConfig ca, cb;
  ca.port = port_base;
  cb.port = static_cast<std::uint16_t>(port_base + 1);
  ca.crc32c_offload = cb.crc32c_offload = true;
  ca.path_mtu = cb.path_mtu = mtu;
  // The sender's output callback (timed: it runs inside the sender's calls).
  const auto copy_out = [&](rnic::wire::ConstBytes p) { to_b.push_back(Out{p.to_vector(), false}); };
  const auto descriptor_out = [&](rnic::wire::ConstBytes p) {
    Out o;
    if (auto sum = rnic::wire::summarize_packet(p); sum.ok()) {
      for (const auto& d : sum->data) {
        if (!d.ddp_segment) continue;
        if (auto it = registry.find({d.sctp_stream, d.ddp_ssn}); it != registry.end() && !it->second.tsn)
          it->second.tsn = d.tsn;
      }
    }
    if (!registry.empty()) {
      auto slot = rnic::wire::rewrite_for_gather(p, [&](const rnic::wire::GatherDescriptor& g) {
        const auto it = registry.find({g.sctp_stream, g.ddp_ssn});
        return it != registry.end() && it->second.stag == g.stag && it->second.to == g.to &&
               it->second.length == g.length;
      });
      if (!slot.ok()) {
        if (slot.error().code == rnic::wire::Errc::kFragmented) fragmented = true;
        if (emit_error.empty()) emit_error = slot.error().message();
        return;
      }
      if (slot->gather) {
        o.bytes = std::move(slot->packet);
        o.gather = true;
      }
    }
    if (!o.gather) o.bytes = p.to_vector();
    to_b.push_back(std::move(o));
  };
  auto a = std::make_unique<Endpoint>(ca, [&](rnic::wire::ConstBytes p) {
    if (path == Path::kCopy) {
      copy_out(p);
    } else {
      descriptor_out(p);
    }
  });
  auto b = std::make_unique<Endpoint>(cb, [&](rnic::wire::ConstBytes p) { to_a.push_back(p.to_vector()); });
  b->set_session_handler([&](const rnic::sctp::SessionNotice& n) {
    if (n.kind == rnic::sctp::NoticeKind::kInitiate) b->accept(n.stream);
  });

  // The receiver checks every segment's payload against the memory it came from (untimed).
  std::uint64_t delivered = 0;
  std::string sink_error;
  b->set_segment_sink([&](std::uint16_t, std::uint16_t, rnic::wire::ConstBytes seg) {
    const std::size_t off = static_cast<std::size_t>(delivered % slots) * r.payload;
    if (seg.size != rnic::wire::kTaggedHeaderSize + r.payload ||
        std::memcmp(seg.data + rnic::wire::kTaggedHeaderSize, memory.data() + off, r.payload) != 0) {
      if (sink_error.empty()) sink_error = "segment " + std::to_string(delivered) + " differs from what was sent";
    }
    ++delivered;
  });

  // The card's tables for its gather (tb/net TxGatherRef), filled in once the association is up.
  rnic::tb::net::TxTables tables;
  const rnic::tb::net::TxReadFn read = [&](std::uint64_t addr, std::uint8_t* out, std::size_t n) {
    if (addr + n > memory.size()) return false;
    std::memcpy(out, memory.data() + addr, n);
    return true;
  };

  bool timing = false;
  const auto timed = [&](std::uint64_t& acc, const auto& f) {
    if (!timing) {
      f();
      return;
    }
    const std::uint64_t t0 = thread_ns();
    f();
    const std::uint64_t t1 = thread_ns();
    acc += t1 - t0 > clock_ns ? t1 - t0 - clock_ns : 0;
  };
  std::uint64_t total_ns = 0, input_ns = 0;
  // The driver's reading of a packet from the peer (CardEndpoint::on_peer_packet + complete_sends).
  const auto peer_packet = [&](const Packet& p) {
    auto sum = rnic::wire::summarize_packet(rnic::wire::ConstBytes(p));
    if (!sum.ok()) return;
    for (const std::uint32_t cum : sum->cumulative_tsn_acks) {
      if (!cum_ack || !serial_le(cum, *cum_ack)) cum_ack = cum;
    }
    if (!cum_ack) return;
    while (!in_order.empty()) {
      const auto it = registry.find(in_order.front());
      if (it != registry.end()) {
        if (!it->second.tsn || !serial_le(*it->second.tsn, *cum_ack)) break;
        registry.erase(it);
      }
      in_order.pop_front();
    }
  };
  const auto check_emit = [&] {
    if (fragmented)
      throw std::runtime_error("bench: usrsctp fragmented a DATA chunk (rewrite_for_gather: kFragmented)");
    if (!emit_error.empty()) throw std::runtime_error("bench: rewrite_for_gather: " + emit_error);
  };

  // Every packet of the sender's to the receiver (untimed: the card's gather, the checks, the receiver),
  // then every packet of the receiver's to the sender, in one timed region. Returns whether anything moved.
  const auto exchange = [&] {
    bool moved = b->pump();
    check_emit();
    while (!to_b.empty()) {
      Out o = std::move(to_b.front());
      to_b.pop_front();
      moved = true;
      const std::size_t host_bytes = o.bytes.size();
      Packet wire;
      if (o.gather) {  // the card: the slot's packet put back together from memory
        auto g = rnic::tb::net::gather(rnic::wire::ConstBytes(o.bytes), 0, 0, tables, read);
        if (g.drop != rnic::tb::net::TxDrop::kNone)
          throw std::runtime_error(std::string("bench: the card's gather dropped a packet: ") +
                                   rnic::tb::net::tx_drop_name(g.drop));
        wire = std::move(g.wire);
      } else {
        wire = std::move(o.bytes);
      }
      if (timing) {
        auto sum = rnic::wire::summarize_packet(rnic::wire::ConstBytes(wire));
        if (!sum.ok()) throw std::runtime_error("bench: the sender's packet does not parse");
        if (sum->data.empty()) {
          ++r.other_packets;
        } else {
          if (sum->data.size() != 1 || !sum->data[0].ddp_segment)
            throw std::runtime_error("bench: a sender packet carries " + std::to_string(sum->data.size()) +
                                     " DATA chunks or a fragment, not one whole segment");
          if (path == Path::kDescriptor && !o.gather)
            throw std::runtime_error("bench: a DATA packet on the descriptor path was not rewritten");
          ++r.data_packets;
          r.wire_bytes = wire.size();
          r.host_bytes = host_bytes;
        }
      }
      b->input(wire);
    }
    moved = b->pump() || moved;
    if (!to_a.empty()) {
      moved = true;
      const std::uint64_t before = total_ns;
      timed(total_ns, [&] {
        for (const Packet& p : to_a) {
          if (path == Path::kDescriptor) peer_packet(p);
          a->input(p);
        }
      });
      input_ns += total_ns - before;
      to_a.clear();
    }
    check_emit();
    return moved;
  };
  const auto step = [&] {
    bool moved = false;
    timed(total_ns, [&] { moved = a->pump(); });
    return exchange() || moved;
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
  a->initiate(0);
  settle([&] { return a->session_state(0) == rnic::sctp::SessionState::kEstablished; }, "Initiate / Accept");

  r.path_mtu = a->path_mtu();
  const std::size_t expected = mtu - rnic::sctp::kIpv4HeaderSize - rnic::sctp::kSctpCommonHeaderSize -
                               rnic::sctp::kDataChunkHeaderSize - rnic::wire::kDdpSsnSize;
  if (a->max_segment_size() != expected || b->max_segment_size() != expected)
    throw std::runtime_error("bench: path MTU " + std::to_string(mtu) + " gives max_segment_size() " +
                             std::to_string(a->max_segment_size()) + ", not " + std::to_string(expected));
  r.payload = a->max_segment_size() - rnic::wire::kTaggedHeaderSize;
  if (memory.size() < slots * r.payload) throw std::runtime_error("bench: memory buffer too small");

  const auto their_vtag = b->local_verification_tag();
  if (!their_vtag) throw std::runtime_error("bench: the receiver's verification tag is not known");
  rnic::tb::net::AssocEntry e;
  e.valid = true;
  e.my_sctp_port = ca.port;
  e.their_sctp_port = cb.port;
  e.their_vtag = *their_vtag;
  e.stream_base = 0;
  e.stream_count = rnic::sctp::kDefaultStreams;
  e.vnx_socket = 0;
  tables.assoc = {e};
  tables.live.assign(rnic::sctp::kDefaultStreams, true);
  tables.stream_pd.assign(rnic::sctp::kDefaultStreams, kPd);
  tables.stags.resize(2);
  tables.stags[1] = rnic::tb::net::TxStag{true, 5, true, kPd, false, 0, kBaseTo, memory.size(), 0};

  // The Data Source's registration of a described message (CardEndpoint::post_send's register_segments).
  std::uint64_t local_to = 0;
  const Endpoint::DescribedQueued register_segments = [&](const rnic::sctp::DescribedMessage& m) {
    for (const rnic::sctp::DescribedSegment& d : m.segments) {
      Registered g;
      g.stag = kLocalStag;
      g.to = local_to + d.plan.message_offset;
      g.length = d.plan.payload_length;
      registry[{0, d.ddp_ssn}] = g;
      in_order.emplace_back(0, d.ddp_ssn);
    }
  };

  timing = true;
  const auto length = static_cast<std::uint32_t>(r.payload);
  std::uint64_t sent = 0;
  int idle = 0;
  while (r.data_packets < packets) {
    // One timed region: a batch of messages, then the sender's pump() (its output callbacks run inside).
    bool moved = false;
    timed(total_ns, [&] {
      for (std::uint64_t i = 0; i < batch && sent < packets; ++i, ++sent) {
        const std::size_t off = static_cast<std::size_t>(sent % slots) * r.payload;
        const std::uint64_t remote_to = sent * r.payload;
        if (path == Path::kCopy) {
          (void)a->send_tagged(0, kRemoteStag, remote_to, 0, rnic::wire::ConstBytes(memory.data() + off, r.payload));
        } else {
          local_to = kBaseTo + off;
          (void)a->send_tagged_described(0, kRemoteStag, remote_to, 0, length, kLocalStag, local_to, register_segments);
        }
        moved = true;
      }
      moved = a->pump() || moved;
    });
    check_emit();
    if (exchange() || moved) {
      idle = 0;
      continue;
    }
    if (++idle > 100000) throw std::runtime_error("bench: no progress");
    Endpoint::advance_timers(10);  // delayed SACK, untimed
  }
  timing = false;
  settle([&] { return delivered >= packets; }, "delivery of every segment");
  if (!sink_error.empty()) throw std::runtime_error("bench: " + sink_error);
  r.ns = total_ns;
  r.input_ns = input_ns;
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 != 0 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t packets = 20000;
  std::uint64_t batch = 32;
  std::size_t slots = 16;
  int rounds = 3;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      if (arg == "--packets") {
        packets = std::stoull(argv[++i]);
      } else if (arg == "--rounds") {
        rounds = std::stoi(argv[++i]);
      } else if (arg == "--batch") {
        batch = std::stoull(argv[++i]);
      } else if (arg == "--slots") {
        slots = std::stoul(argv[++i]);
      } else {
        throw std::invalid_argument("unknown option " + arg + " (--packets N, --rounds R, --batch B, --slots S)");
      }
    }
    if (packets < 100 || rounds < 1 || batch < 1 || batch > 1024 || slots < 1 || slots > 65536)
      throw std::invalid_argument("--packets >= 100, --rounds >= 1, --batch 1..1024, --slots 1..65536");

    // usrsctp is set up by the first Endpoint; this one keeps it up, so that the settings below hold for
    // every run: large buffers, a large initial window, no burst limit. CRC32c is the card's.
    EndpointConfig keep{4999};
    keep.crc32c_offload = true;
    Endpoint keeper(keep, [](rnic::wire::ConstBytes) {});
    usrsctp_sysctl_set_sctp_sendspace(64u << 20);
    usrsctp_sysctl_set_sctp_recvspace(64u << 20);
    usrsctp_sysctl_set_sctp_initial_cwnd(1024);
    usrsctp_sysctl_set_sctp_max_burst_default(0);
    const std::uint64_t clock_ns = clock_overhead_ns();

    Packet memory(slots * rnic::sctp::kMaxPathMtu);
    for (std::size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<std::uint8_t>((i * 7 + i / 251) & 0xFF);

    const std::uint32_t mtus[] = {1500, 9000};
    const Path paths[] = {Path::kCopy, Path::kDescriptor};
    std::vector<std::vector<RunResult>> results(4);  // [mtu * 2 + path][round]
    std::uint16_t port = 7000;
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t m = 0; m < 2; ++m) {
        for (std::size_t p = 0; p < 2; ++p) {
          results[m * 2 + p].push_back(run(paths[p], mtus[m], packets, batch, port, clock_ns, memory, slots));
          port = static_cast<std::uint16_t>(port + 2);
        }
      }
    }

    std::printf(
        "rnic_tx_host_path_bench: %llu DATA packets per run (one tagged DDP segment each), batch %llu, %d rounds "
        "(median shown), clock read %llu ns (subtracted)\n",
        static_cast<unsigned long long>(packets), static_cast<unsigned long long>(batch), rounds,
        static_cast<unsigned long long>(clock_ns));
    std::printf(
        "sender CPU per DATA packet: send call + pump() + input() of SACKs + output callback (+ driver work)\n");
    std::printf("%5s %-10s %8s %7s %9s %9s %8s %8s %10s %10s %10s\n", "MTU", "path", "packets", "payload", "wire B",
                "host B", "ns/pkt", "input()", "Mpps/core", "Gb/s/core", "desc/copy");
    for (std::size_t m = 0; m < 2; ++m) {
      for (std::size_t p = 0; p < 2; ++p) {
        const auto& rs = results[m * 2 + p];
        std::vector<double> ns, in, ratio;
        std::uint64_t total = 0, other = 0;
        for (int round = 0; round < rounds; ++round) {
          const RunResult& x = rs[static_cast<std::size_t>(round)];
          const RunResult& copy = results[m * 2][static_cast<std::size_t>(round)];
          const double per = static_cast<double>(x.ns) / static_cast<double>(x.data_packets);
          ns.push_back(per);
          in.push_back(static_cast<double>(x.input_ns) / static_cast<double>(x.data_packets));
          ratio.push_back(per / (static_cast<double>(copy.ns) / static_cast<double>(copy.data_packets)));
          total += x.data_packets;
          other += x.other_packets;
        }
        const RunResult& x = rs[0];
        const double n = median(ns);
        const double pps = 1e9 / n;
        std::printf("%5u %-10s %8llu %7zu %9zu %9zu %8.0f %8.0f %10.3f %10.2f %9.2fx\n", mtus[m], path_name(paths[p]),
                    static_cast<unsigned long long>(total), x.payload, x.wire_bytes, x.host_bytes, n, median(in),
                    pps / 1e6, pps * static_cast<double>(x.payload) * 8 / 1e9, median(ratio));
        if (other != 0)
          std::printf("      (%llu sender packets without DATA, not counted)\n",
                      static_cast<unsigned long long>(other));
        if (x.path_mtu != mtus[m]) std::printf("      (usrsctp's path MTU %u, not %u)\n", x.path_mtu, mtus[m]);
      }
    }
    std::printf(
        "\n(payload: DDP payload bytes per packet; wire B: the SCTP packet; host B: what the output callback keeps\n"
        " of it; Gb/s/core: pps x payload x 8; desc/copy: ns/pkt ratio per round, then the median)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rnic_tx_host_path_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
