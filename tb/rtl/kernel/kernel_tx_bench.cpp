// SPDX-License-Identifier: Apache-2.0
// rnic_kernel_tx_bench: cycle benchmark of the kernel's transmit path (issue 35 figure: transmit bytes
// per cycle at 512 bits against the line limit, back to back, and the latency from ring doorbell to first
// beat out). The whole kernel at NET = 1 (the model of rnic_kernel_netside_test: DATA_WIDTH 512,
// STAG_ENTRIES 256, NUM_STREAMS 16), programmed through the register window as kernel_netside_test.cpp's
// NetGather fixture does: one association entry (their tag, socket 7), one live DDP stream, one STag with
// local read over a registered buffer, the transmit packet ring in m_axi_net memory. Not a test: run by
// hand.
//
// For each payload size S two kinds of packet, each its own row. Both leave as the same wire packet: the
// SCTP common header (12), one DATA chunk (U, B, E; PPID 16) with DDP-SSN (2) and a tagged DDP header
// (14), S payload bytes, zeros to a multiple of 4: 44 + S rounded up to 4 bytes.
//   plain   the slot holds that packet whole (the copying path's form; NTXD FLAGS 0): the ring reader
//           reads it and the sender puts the CRC32c in.
//   gather  the slot holds the packet with a descriptor chunk (NTXD GATHER, ASSOC; docs/transmit.md):
//           chunk flag G and an NGD record {STag, S, TO} in place of the payload; the card checks it
//           against the association entry and its tables and reads the S bytes from registered memory
//           on m_axi_gmem. S < 16 cannot be a descriptor (the driver sends such a payload by copy): that
//           row is the copied form the driver sends, the plain DATA chunk in a slot with NTXD GATHER set,
//           marked "gather*" (the gather unit walks the packet and copies the chunk, nothing is read).
// Method: per row a fresh kernel. First the latency: one packet in the otherwise idle ring, the
// doorbell, until it is out. Then N packets (--packets, default 200): every slot written first, one
// NET_TX_PROD doorbell for all of them, m_axis_net always ready. Host memory on both read ports
// (m_axi_net: the ring; m_axi_gmem: the registered buffer) answers AR with the first R beat after a fixed
// --r-latency cycles (default 8, rnic::tb::HostMemConfig's default and the gather unit's
// ThroughputFigures; kernel_netside_test.cpp draws it at random instead), every channel always ready.
// Each gather packet reads its own range of the buffer (TO = 64 * i + --src-offset, so the source is
// beat-aligned unless --src-offset says otherwise). Every packet out is checked byte for byte (and its
// tdest) against the reference model TxGatherRef (tb/net tx_gather_ref.hpp) computed from the same slot,
// tables and memory; plain rows expect that same packet. Also checked: NET_TX_CONS, NET_CNT7 (sent),
// NET_CNT10 (gather packets sent), NET_TX_FAULT 0, no AXI protocol error. Any failure: the row is marked
// FAILED and the exit status is 1.
//
// Columns:
//   kind      plain / gather (gather*: the copied form, see above)
//   S         payload bytes per packet
//   wire      bytes per packet on m_axis_net (44 + S, rounded up to 4)
//   pkts      N, the packets of the back-to-back run
//   cycles    from the first beat of the first packet on m_axis_net to the last beat of the last, inclusive
//   cyc/pkt   cycles / N: the steady-state cycles per packet (the pipeline's fill before the first beat
//             is not in it; its drain after the last beat neither)
//   B/cycle   wire bytes * N / cycles: bytes per cycle on m_axis_net
//   %line     B/cycle over the line limit, 64 bytes per cycle at 512 bits
//   beat lim  the beat limit of the row: a packet of W wire bytes takes ceil(W / 64) beats and the port
//             moves one beat per cycle, so W / ceil(W / 64) bytes per cycle; %beat = B/cycle over it (100%:
//             the port never idles between or inside packets)
//   latency   cycles from the NET_TX_PROD doorbell (the cycle its AXI-Lite write completes, the B
//             handshake) to the first beat of the packet on m_axis_net, the ring idle before it
//
//   rnic_kernel_tx_bench [--packets N] [--r-latency N] [--src-offset N] [--sizes 0,16,...]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "Vrnic_kernel.h"
#include "rnic/bus/net_stream.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/tb/host_memory.hpp"
#include "rnic/tb/kernel_driver.hpp"
#include "rnic/tb/net_ref.hpp"
#include "rnic/tb/sim.hpp"
#include "rnic/tb/tx_gather_fixture.hpp"
#include "rnic/tb/tx_gather_ref.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"

namespace {

using Top = Vrnic_kernel;
using Bytes = std::vector<std::uint8_t>;
using rnic::tb::AxiHostMemory;
using rnic::tb::AxiLiteMaster;
using rnic::tb::Component;
using rnic::tb::HostMemConfig;
using rnic::tb::KernelDriver;
using rnic::tb::NetPorts;
using rnic::tb::Sim;
using rnic::tb::StagArgs;
using rnic::wire::store_be16;
using rnic::wire::store_be32;
namespace hw = rnic::hw;
namespace net = rnic::tb::net;

constexpr unsigned kBusBytes = 64;  // 512 bits: the line limit in bytes per cycle
constexpr std::uint64_t kCqBase = 0x10000;
constexpr std::uint64_t kTxRing = 0x200000;  // m_axi_net memory
constexpr unsigned kSlotLog2 = 14;           // 16 KiB slots: a maximum packet fits
constexpr std::uint16_t kStream = 3;
constexpr std::uint16_t kPd = 5;
constexpr unsigned kAssoc = 2;
constexpr std::uint32_t kStagIndex = 1;
constexpr std::uint64_t kBaseTo = 0x7000;
constexpr std::uint64_t kBufAddr = 0x100000;  // m_axi_gmem memory, 4 KiB aligned
constexpr std::uint64_t kBufLen = 0x100000;
constexpr std::size_t kWireOverhead = 12 + 16 + 2 + 14;  // common header, DATA chunk header, DDP-SSN, DDP header

struct Options {
  unsigned packets = 200;
  unsigned r_latency = 8;
  unsigned src_offset = 0;
  std::vector<unsigned> sizes = {0, 16, 64, 256, 1024, 1400, 4096, 8900};
};

// m_axis_net, always ready: each packet with its tdest and the cycles of its first and last beat.
class TimedSink : public Component<Top> {
 public:
  struct Packet {
    Bytes bytes;
    std::uint16_t socket;
    std::uint64_t first, last;
  };
  explicit TimedSink(Sim<Top>& sim) { sim.add(this); }
  std::vector<Packet>& got() { return got_; }
  void drive(Top& t, std::uint64_t) override { t.m_axis_net_tready = 1; }
  void sample(const Top& t, std::uint64_t cycle) override {
    if (!t.m_axis_net_tvalid || !t.m_axis_net_tready) return;
    if (!in_packet_) first_ = cycle;
    in_packet_ = true;
    for (unsigned i = 0; i < kBusBytes; ++i) {
      if (rnic::tb::get_bit(t.m_axis_net_tkeep, i)) cur_.push_back(rnic::tb::get_byte(t.m_axis_net_tdata, i));
    }
    if (!t.m_axis_net_tlast) return;
    got_.push_back(Packet{std::move(cur_), static_cast<std::uint16_t>(t.m_axis_net_tdest), first_, cycle});
    cur_.clear();
    in_packet_ = false;
  }

 private:
  Bytes cur_;
  bool in_packet_ = false;
  std::uint64_t first_ = 0;
  std::vector<Packet> got_;
};

HostMemConfig mem_config(const Options& o, std::size_t size, std::uint64_t seed) {
  HostMemConfig c;  // every channel always ready
  c.size = size;
  c.r_latency_min = c.r_latency_max = o.r_latency;
  c.seed = seed;
  return c;
}

unsigned ring_log2(unsigned slots) {
  unsigned l = 0;
  while ((1u << l) < slots) ++l;
  return l;
}

// One kernel with its network side programmed for transmit (kernel_netside_test.cpp NetSide / NetGather).
class TxBench {
 public:
  TxBench(const Options& o, unsigned slots)
      : log2_slots_(ring_log2(slots)),
        gmem_(sim_, kBusBytes, mem_config(o, std::size_t{8} << 20, 1)),
        nmem_(
            sim_, kBusBytes,
            mem_config(
                o, std::max<std::size_t>(std::size_t{8} << 20, kTxRing + (std::size_t{1} << log2_slots_ << kSlotLog2)),
                2),
            "m_axi_net"),
        mmio_(sim_),
        drv_(sim_, mmio_, gmem_, 4),
        src_(sim_, kBusBytes),
        sink_(sim_) {
    sim_.reset();
    const Bytes zero(std::size_t{hw::kCQE_BYTES} << 6, 0);
    gmem_.host_write(kCqBase, zero.data(), zero.size());
    drv_.cq_setup(kCqBase, 6);
    // The registered buffer: a random payload.
    std::mt19937_64 rng(0x7B5E);
    Bytes buf(kBufLen);
    for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
    gmem_.host_write(kBufAddr, buf.data(), buf.size());
    check(!drv_.stream_enable(kStream, kPd), "STREAM_ENABLE");
    // The association entry (NET_ASSOC_ARG0..7, NET_ASSOC_CMD WRITE).
    entry_ = net::fixture::kernel_entry(kStream);
    net::fixture::write_kernel_entry([this](std::uint32_t reg, std::uint32_t v) { wr(reg, v); }, kAssoc, entry_);
    wr(hw::kRegNET_STREAM_LIVE, 0x80000000u | kStream);
    // The transmit ring.
    wr(hw::kRegNET_TX_BASE_LO, static_cast<std::uint32_t>(kTxRing));
    wr(hw::kRegNET_TX_BASE_HI, 0);
    wr(hw::kRegNET_TX_SIZE, log2_slots_ | (kSlotLog2 << 8));
    wr(hw::kRegNET_TX_CTRL, 1);
    // The STag the descriptors name: local read over the buffer.
    StagArgs a;
    a.index = kStagIndex;
    a.remote_write = false;
    a.local_read = true;
    a.pd = kPd;
    a.base_to = kBaseTo;
    a.length = kBufLen;
    a.host_addr = kBufAddr;
    check(!drv_.stag_write(a), "STAG_WRITE");
    stag_ = (a.index << 8) | a.key;
    // TxGatherRef's view of the same tables.
    tables_.assoc.resize(16);
    tables_.assoc[kAssoc] = entry_;
    tables_.live.assign(16, false);
    tables_.live[kStream] = true;
    tables_.stream_pd.assign(16, 0);
    tables_.stream_pd[kStream] = kPd;
    tables_.stags.resize(kStagIndex + 1);
    net::TxStag& t = tables_.stags[kStagIndex];
    t.valid = true;
    t.key = a.key;
    t.local_read = true;
    t.pd = kPd;
    t.base_to = kBaseTo;
    t.length = kBufLen;
    t.addr = kBufAddr;
    sim_.tick();
  }

  void wr(std::uint32_t reg, std::uint32_t v) { mmio_.write32(reg, v); }
  std::uint32_t rd(std::uint32_t reg) { return mmio_.read32(reg); }
  void run(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) sim_.tick();
  }
  void check(bool ok, const std::string& what) {
    if (!ok) fail(what + " failed");
  }
  void fail(const std::string& what) {
    if (errors_.size() < 8) errors_.push_back(what);
    ok_ = false;
  }

  // The slot form of packet i with S payload bytes: a descriptor chunk (gather) or, when the payload is
  // carried, the DATA chunk with the payload the descriptor names (plain, and gather for S < 16). The
  // common header carries the association's ports and their tag (what the gather checks).
  Bytes slot_packet(unsigned i, unsigned size, bool descriptor, unsigned src_offset) {
    Bytes p(12, 0);
    store_be16(p.data(), entry_.my_sctp_port);
    store_be16(p.data() + 2, entry_.their_sctp_port);
    store_be32(p.data() + 4, entry_.their_vtag);
    const std::uint64_t to = kBaseTo + (64ull * i + src_offset) % (kBufLen - size - 64);
    rnic::wire::TaggedHeader h;
    h.last = true;
    h.stag = 0xABCD0000u + size;  // the remote STag (the peer's)
    h.to = 0x10000ull * i;
    const Bytes ddp = rnic::wire::encode_segment(h, rnic::wire::ConstBytes()).value();
    Bytes c(16 + 2, 0);
    c[1] = 0x07;  // U, B, E
    store_be16(c.data() + 2, static_cast<std::uint16_t>(16 + 2 + ddp.size() + size));
    store_be32(c.data() + 4, 1000 + i);  // TSN
    store_be32(c.data() + 12, 16);       // PPID: DDP segment (RFC 5043 5.2)
    store_be16(c.data() + 16, static_cast<std::uint16_t>(1 + i));
    c.insert(c.end(), ddp.begin(), ddp.end());
    if (descriptor) {
      c = net::descriptor_chunk(c, stag_, to, size);
    } else {
      const std::uint8_t* src = gmem_.data() + kBufAddr + (to - kBaseTo);
      c.insert(c.end(), src, src + size);
      while (c.size() % 4 != 0) c.push_back(0);
    }
    p.insert(p.end(), c.begin(), c.end());
    return p;
  }

  // What leaves for a slot packet (the reference model; a plain packet is its own expansion, the CRC32c
  // put in): empty and the bench failed if the model drops it.
  Bytes expect(const Bytes& slot) {
    const auto read = [this](std::uint64_t a, std::uint8_t* out, std::size_t n) {
      std::copy_n(gmem_.data() + a, n, out);
      return true;
    };
    const net::TxGather g = net::gather(slot, entry_.vnx_socket, kAssoc, tables_, read);
    if (g.drop != net::TxDrop::kNone) fail(std::string("TxGatherRef drops the packet: ") + net::tx_drop_name(g.drop));
    return g.wire;
  }

  // Writes the slot packets into the ring (NTXD LEN, SOCKET, FLAGS GATHER, ASSOC) without a doorbell.
  void write_slots(const std::vector<Bytes>& slots, bool gather) {
    for (const Bytes& p : slots) {
      const std::uint64_t slot = kTxRing + (std::uint64_t{prod_ % (1u << log2_slots_)} << kSlotLog2);
      Bytes d(hw::kNET_SLOT_DESC_BYTES, 0);
      rnic::wire::store_le16(d.data() + hw::kNTXD_LEN_OFFSET, static_cast<std::uint16_t>(p.size()));
      rnic::wire::store_le16(d.data() + hw::kNTXD_SOCKET_OFFSET, entry_.vnx_socket);
      if (gather) {
        d[hw::kNTXD_FLAGS_OFFSET] = static_cast<std::uint8_t>(hw::kNTXD_FLAGS_GATHER.mask());
        d[hw::kNTXD_ASSOC_OFFSET] = kAssoc;
      }
      nmem_.host_write(slot, d.data(), d.size());
      nmem_.host_write(slot + hw::kNET_SLOT_DESC_BYTES, p.data(), p.size());
      ++prod_;
    }
  }
  // The doorbell: the cycle its write completed (the B handshake).
  std::uint64_t doorbell() {
    wr(hw::kRegNET_TX_PROD, prod_);
    return sim_.cycle() - 1;
  }
  // Runs until `n` packets in all have left (or `limit` cycles passed), then until the ring is idle.
  void wait_out(std::size_t n, std::uint64_t limit) {
    const std::uint64_t end = sim_.cycle() + limit;
    while (sink_.got().size() < n && sim_.cycle() < end) run(1);
    run(200);
  }
  // Every packet from `from` on as expected; the ring and counters as they must be after `sent` packets
  // (`gathers` of them gather packets).
  void verify(std::size_t from, const std::vector<Bytes>& want, std::uint32_t sent, std::uint32_t gathers) {
    const auto& got = sink_.got();
    if (got.size() != from + want.size()) {
      fail(std::to_string(got.size() - from) + " packets out of " + std::to_string(want.size()));
    }
    for (std::size_t i = 0; i < want.size() && from + i < got.size(); ++i) {
      const auto& g = got[from + i];
      if (g.bytes != want[i]) {
        std::size_t k = 0;
        while (k < g.bytes.size() && k < want[i].size() && g.bytes[k] == want[i][k]) ++k;
        fail("packet " + std::to_string(i) + ": " + std::to_string(g.bytes.size()) + " bytes, want " +
             std::to_string(want[i].size()) + ", first difference at byte " + std::to_string(k));
      }
      if (g.socket != entry_.vnx_socket) fail("packet " + std::to_string(i) + ": tdest " + std::to_string(g.socket));
    }
    if (rd(hw::kRegNET_TX_CONS) != prod_) fail("NET_TX_CONS " + std::to_string(rd(hw::kRegNET_TX_CONS)));
    if (rd(hw::reg_net_counter(7)) != sent) fail("NET_CNT7 (sent) " + std::to_string(rd(hw::reg_net_counter(7))));
    if (rd(hw::reg_net_counter(10)) != gathers) {
      fail("NET_CNT10 (gather sent) " + std::to_string(rd(hw::reg_net_counter(10))));
    }
    if (rd(hw::reg_net_counter(8)) != 0) fail("NET_CNT8 (skipped) " + std::to_string(rd(hw::reg_net_counter(8))));
    if (rd(hw::kRegNET_TX_FAULT) != 0) fail("NET_TX_FAULT " + std::to_string(rd(hw::kRegNET_TX_FAULT)));
    if (!sim_.errors().empty()) fail(sim_.errors().text());
  }

  TimedSink& sink() { return sink_; }
  bool ok() const { return ok_; }
  std::string errors() const {
    std::string s;
    for (const auto& e : errors_) s += (s.empty() ? "" : "; ") + e;
    return s;
  }

 private:
  unsigned log2_slots_;
  Sim<Top> sim_;
  AxiHostMemory<Top> gmem_;
  AxiHostMemory<Top, NetPorts> nmem_;
  AxiLiteMaster<Top> mmio_;
  KernelDriver<Top> drv_;
  rnic::bus::NetSource<Top> src_;  // s_axis_net idle
  TimedSink sink_;
  net::AssocEntry entry_;
  net::TxTables tables_;
  std::uint32_t stag_ = 0;
  std::uint32_t prod_ = 0;
  bool ok_ = true;
  std::vector<std::string> errors_;
};

struct Row {
  std::string kind;
  unsigned size = 0;
  std::size_t wire = 0;
  unsigned packets = 0;
  std::uint64_t cycles = 0, latency = 0;
  double per_packet = 0, bytes_per_cycle = 0, beat_limit = 0;
  bool ok = false;
  std::string note;
};

Row run_row(const Options& o, unsigned size, bool gather) {
  const bool descriptor = gather && size >= 16;
  Row r;
  r.kind = gather ? (descriptor ? "gather" : "gather*") : "plain";
  r.size = size;
  r.packets = o.packets;
  TxBench b(o, o.packets + 1);
  // The latency: one packet, the ring idle.
  const Bytes first = b.slot_packet(0, size, descriptor, o.src_offset);
  const std::vector<Bytes> want0 = {b.expect(first)};
  b.write_slots({gather ? first : want0[0]}, gather);
  b.run(100);
  const std::uint64_t t_db = b.doorbell();
  b.wait_out(1, 100000);
  if (!b.sink().got().empty()) r.latency = b.sink().got()[0].first - t_db;
  b.verify(0, want0, 1, gather ? 1 : 0);
  b.run(500);
  // N packets back to back: every slot written, one doorbell.
  std::vector<Bytes> slots, want;
  for (unsigned i = 0; i < o.packets; ++i) {
    const Bytes s = b.slot_packet(i + 1, size, descriptor, o.src_offset);
    want.push_back(b.expect(s));
    slots.push_back(gather ? s : want.back());
  }
  b.write_slots(slots, gather);
  b.doorbell();
  b.wait_out(1 + std::size_t{o.packets}, 2000000);
  b.verify(1, want, 1 + o.packets, gather ? 1 + o.packets : 0);
  const auto& got = b.sink().got();
  r.wire = want0[0].size();
  if (got.size() == 1 + std::size_t{o.packets}) {
    r.cycles = got.back().last - got[1].first + 1;
    r.per_packet = static_cast<double>(r.cycles) / o.packets;
    r.bytes_per_cycle = static_cast<double>(r.wire) * o.packets / static_cast<double>(r.cycles);
  }
  r.beat_limit = static_cast<double>(r.wire) / static_cast<double>((r.wire + kBusBytes - 1) / kBusBytes);
  r.ok = b.ok();
  r.note = b.errors();
  if (gather && !descriptor) r.note = "copied chunk in a GATHER slot (S < 16 goes by copy) " + r.note;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "rnic_kernel_tx_bench: the kernel's transmit path in cycles (issue 35; the file's header says how to "
      "read the table)"};
  app.add_option("--packets", o.packets, "packets per row, back to back")
      ->check(CLI::Range(1u, 4000u))
      ->capture_default_str();
  app.add_option("--r-latency", o.r_latency, "cycles from AR to the first R beat on both read ports")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  app.add_option("--src-offset", o.src_offset, "the payload's offset from a 64-byte boundary in the buffer")
      ->check(CLI::Range(0u, 63u))
      ->capture_default_str();
  // The wire packet at most NET_MAX_PACKET_BYTES: 44 + S rounded up to 4.
  app.add_option("--sizes", o.sizes, "payload sizes, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(0u, static_cast<unsigned>(hw::kNET_MAX_PACKET_BYTES - kWireOverhead)));
  CLI11_PARSE(app, argc, argv);
  std::printf(
      "rnic_kernel_tx_bench: NET = 1, DATA_WIDTH 512 (line limit 64 B/cycle), %u packets per row back to back "
      "(one doorbell), m_axis_net always ready, R latency %u cycles on m_axi_net and m_axi_gmem, source offset "
      "%u\n",
      o.packets, o.r_latency, o.src_offset);
  std::printf("%-8s %5s %5s %5s %8s %8s %8s %6s %8s %6s %7s  %s\n", "kind", "S", "wire", "pkts", "cycles", "cyc/pkt",
              "B/cycle", "%line", "beat lim", "%beat", "latency", "");
  bool all_ok = true;
  for (unsigned size : o.sizes) {
    for (bool gather : {false, true}) {
      const Row r = run_row(o, size, gather);
      all_ok = all_ok && r.ok;
      std::printf("%-8s %5u %5zu %5u %8llu %8.1f %8.2f %5.1f%% %8.2f %5.1f%% %7llu  %s%s\n", r.kind.c_str(), r.size,
                  r.wire, r.packets, static_cast<unsigned long long>(r.cycles), r.per_packet, r.bytes_per_cycle,
                  100.0 * r.bytes_per_cycle / kBusBytes, r.beat_limit,
                  r.beat_limit > 0 ? 100.0 * r.bytes_per_cycle / r.beat_limit : 0.0,
                  static_cast<unsigned long long>(r.latency), r.ok ? "" : "FAILED ", r.note.c_str());
      std::fflush(stdout);
    }
  }
  if (!all_ok) std::fprintf(stderr, "rnic_kernel_tx_bench: FAILED\n");
  return all_ok ? 0 : 1;
}
