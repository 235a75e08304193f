// SPDX-License-Identifier: Apache-2.0
// rnic_kernel with its network side (NET = 1; issue 14, docs/network.md): SCTP packets in on s_axis_net,
// the DDP segments placed by the pipeline, the trimmed host copies in the receive packet ring, the
// transmit packet ring out on m_axis_net with the CRC32c inserted, all programmed through the register
// window (hw.def NET_*) as the driver will. The expected host copies come from tb/net NetRef.
// Host memory: m_axi_gmem and m_axi_net each on an AxiHostMemory with a guard pattern; at the end every
// byte either master wrote must lie where it was allowed to (RFC 5041 8: the card writes only memory it
// owns). Seed: RNIC_TEST_SEED; waveform: RNIC_FST=<file>.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "Vrnic_kernel.h"
#include "rnic/bus/net_stream.hpp"
#include "rnic/capture/sctp_capture.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/tb/host_memory.hpp"
#include "rnic/tb/kernel_driver.hpp"
#include "rnic/tb/net_ref.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/tb/sim.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"

namespace rnic::tb {
namespace {

using Top = Vrnic_kernel;
using Bytes = std::vector<std::uint8_t>;
using wire::load_le;
using wire::store_be16;
using wire::store_be32;
namespace hw = rnic::hw;

constexpr unsigned kBusBytes = 64;
constexpr std::uint64_t kCqBase = 0x10000;
constexpr std::uint64_t kStagAddr = 0x40000;
constexpr std::uint64_t kRxRing = 0x100000;  // m_axi_net memory
constexpr std::uint64_t kTxRing = 0x200000;
constexpr unsigned kSlotLog2 = 14;
constexpr unsigned kRxSlotsLog2 = 6;
constexpr unsigned kTxSlotsLog2 = 3;
constexpr std::uint16_t kStream = 3;

// RFC 9260 6.8: the CRC32c with bytes 8..11 as zero, stored least significant byte first.
void seal(Bytes& p) { capture::SctpPacket::seal(p); }

// The VNx network layer's two sides (rnic/bus/net_stream.hpp).
bus::NetMeta bus_meta(const net::PacketMeta& m) { return {m.my_ip, m.their_ip, m.my_udp_port, m.their_udp_port}; }

class NetSide : public ::testing::Test {
 protected:
  NetSide()
      : seed_(random_test_seed()),
        gmem_(sim_, kBusBytes, HostMemConfig::random(seed_)),
        nmem_(sim_, kBusBytes, HostMemConfig::random(seed_ ^ 0x77), "m_axi_net"),
        mmio_(sim_),
        drv_(sim_, mmio_, gmem_, 4),
        src_(sim_, kBusBytes),
        sink_(sim_, kBusBytes) {
    sim_.reset();
    drv_.cq_setup(kCqBase, 6);
    entry_.valid = true;
    entry_.my_ip = 0x0A000001;
    entry_.their_ip = 0x0A000002;
    entry_.my_udp_port = 9899;
    entry_.their_udp_port = 40000;
    entry_.my_sctp_port = 5002;
    entry_.their_sctp_port = 5001;
    entry_.my_vtag = 0x11223344;
    entry_.stream_base = kStream;
    entry_.stream_count = 1;
    entry_.vnx_socket = 7;
    meta_ = {entry_.my_ip, entry_.their_ip, entry_.my_udp_port, entry_.their_udp_port};
    live_.assign(16, false);
  }

  void wr(std::uint32_t reg, std::uint32_t v) { mmio_.write32(reg, v); }
  std::uint32_t rd(std::uint32_t reg) { return mmio_.read32(reg); }
  static std::uint32_t arg(unsigned i) { return hw::reg_net_assoc_arg(i); }

  void program_assoc(unsigned index) {
    wr(arg(0), entry_.my_ip);
    wr(arg(1), entry_.their_ip);
    wr(arg(2), (std::uint32_t{entry_.their_udp_port} << 16) | entry_.my_udp_port);
    wr(arg(3), (std::uint32_t{entry_.their_sctp_port} << 16) | entry_.my_sctp_port);
    wr(arg(4), entry_.my_vtag);
    wr(arg(5), (std::uint32_t{entry_.stream_count} << 16) | entry_.stream_base);
    wr(arg(6), entry_.vnx_socket);
    wr(hw::kRegNET_ASSOC_CMD, 0x100u | index);
    table_.resize(16);
    table_[index] = entry_;
  }
  void set_live(std::uint16_t stream) {
    wr(hw::kRegNET_STREAM_LIVE, 0x80000000u | stream);
    live_[stream] = true;
  }
  void rx_ring_on() {
    wr(hw::kRegNET_RX_BASE_LO, static_cast<std::uint32_t>(kRxRing));
    wr(hw::kRegNET_RX_BASE_HI, 0);
    wr(hw::kRegNET_RX_SIZE, kRxSlotsLog2 | (kSlotLog2 << 8));
    wr(hw::kRegNET_RX_CTRL, 1);
  }
  void tx_ring_on() {
    wr(hw::kRegNET_TX_BASE_LO, static_cast<std::uint32_t>(kTxRing));
    wr(hw::kRegNET_TX_BASE_HI, 0);
    wr(hw::kRegNET_TX_SIZE, kTxSlotsLog2 | (kSlotLog2 << 8));
    wr(hw::kRegNET_TX_CTRL, 1);
  }
  void run(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) sim_.tick();
  }
  // Runs until the receive ring has published `n` descriptors (or fails after `limit` cycles).
  void wait_rx_prod(std::uint32_t n, std::uint64_t limit = 200000) {
    const std::uint64_t end = sim_.cycle() + limit;
    while (sim_.cycle() < end) {
      if (rd(hw::kRegNET_RX_PROD) == n) return;
      run(50);
    }
    FAIL() << "NET_RX_PROD did not reach " << n << " (is " << rd(hw::kRegNET_RX_PROD) << ")";
  }

  // A packet to entry_ with one DATA chunk carrying DDP segment `seg` with DDP-SSN `ddp_ssn`, after a
  // 16-byte control chunk (a HEARTBEAT: goes to the host whole).
  Bytes packet(const Bytes& seg, std::uint16_t ddp_ssn, std::uint32_t tsn) {
    Bytes p(12, 0);
    store_be16(p.data(), entry_.their_sctp_port);
    store_be16(p.data() + 2, entry_.my_sctp_port);
    store_be32(p.data() + 4, entry_.my_vtag);
    const std::size_t hb = p.size();
    p.resize(hb + 16, 0x5A);
    p[hb] = 4;  // HEARTBEAT
    p[hb + 1] = 0;
    store_be16(p.data() + hb + 2, 16);
    const std::size_t c = p.size();
    p.resize(c + 18 + seg.size(), 0);
    p[c + 1] = 0x07;  // U, B, E
    store_be16(p.data() + c + 2, static_cast<std::uint16_t>(18 + seg.size()));
    store_be32(p.data() + c + 4, tsn);
    store_be16(p.data() + c + 8, 0);    // SCTP stream 0 -> DDP stream kStream
    store_be32(p.data() + c + 12, 16);  // PPID: DDP segment (RFC 5043 5.2)
    store_be16(p.data() + c + 16, ddp_ssn);
    std::copy(seg.begin(), seg.end(), p.begin() + static_cast<std::ptrdiff_t>(c + 18));
    while (p.size() % 4 != 0) p.push_back(0);
    seal(p);
    return p;
  }

  // The descriptor and copy of receive ring slot i, checked against NetRef with the given fates.
  void check_slot(std::uint32_t i, const Bytes& pkt, const std::vector<net::Fate>& fates) {
    SCOPED_TRACE("rx ring slot " + std::to_string(i));
    const std::uint64_t slot = kRxRing + (std::uint64_t{i % (1u << kRxSlotsLog2)} << kSlotLog2);
    const std::uint8_t* d = nmem_.data() + slot;
    const net::Walk w = net::walk(pkt, meta_, true, table_, live_);
    const Bytes want = net::host_copy(pkt, w, fates);
    auto f = [d](unsigned off, unsigned bits) { return load_le(d + off, bits / 8); };
    EXPECT_EQ(f(hw::kNRXD_COPY_LEN_OFFSET, hw::kNRXD_COPY_LEN_BITS), want.size());
    EXPECT_EQ(f(hw::kNRXD_WIRE_LEN_OFFSET, hw::kNRXD_WIRE_LEN_BITS), pkt.size());
    EXPECT_EQ(f(hw::kNRXD_ASSOC_OFFSET, hw::kNRXD_ASSOC_BITS), w.assoc ? *w.assoc : hw::kNET_ASSOC_MISS);
    const bool lap_phase = ((i >> kRxSlotsLog2) & 1u) == 0;
    EXPECT_EQ(f(hw::kNRXD_FLAGS_OFFSET, hw::kNRXD_FLAGS_BITS) & 1u, lap_phase ? 1u : 0u);
    std::size_t taken = 0, dup = 0, declined = 0;
    for (net::Fate x : fates) {
      taken += x == net::Fate::kTaken;
      dup += x == net::Fate::kDuplicate;
      declined += x == net::Fate::kDeclined;
    }
    EXPECT_EQ(f(hw::kNRXD_TAKEN_OFFSET, hw::kNRXD_TAKEN_BITS), taken);
    EXPECT_EQ(f(hw::kNRXD_DUP_OFFSET, hw::kNRXD_DUP_BITS), dup);
    EXPECT_EQ(f(hw::kNRXD_DECLINED_OFFSET, hw::kNRXD_DECLINED_BITS), declined);
    EXPECT_EQ(f(hw::kNRXD_SRC_IP_OFFSET, hw::kNRXD_SRC_IP_BITS), meta_.their_ip);  // the sender: where answers go
    EXPECT_EQ(f(hw::kNRXD_SRC_PORT_OFFSET, hw::kNRXD_SRC_PORT_BITS), meta_.their_udp_port);
    EXPECT_EQ(Bytes(d + hw::kNET_SLOT_DESC_BYTES, d + hw::kNET_SLOT_DESC_BYTES + want.size()), want);
  }

  Bytes tagged(std::uint32_t stag, std::uint64_t to, const Bytes& payload) {
    wire::TaggedHeader h;
    h.last = true;
    h.stag = stag;
    h.to = to;
    return wire::encode_segment(h, wire::ConstBytes(payload)).value();
  }

  std::uint64_t seed_;
  Sim<Top> sim_;
  AxiHostMemory<Top> gmem_;
  AxiHostMemory<Top, NetPorts> nmem_;
  AxiLiteMaster<Top> mmio_;
  KernelDriver<Top> drv_;
  bus::NetSource<Top> src_;
  bus::NetSink<Top> sink_;
  net::AssocEntry entry_;
  net::PacketMeta meta_;
  std::vector<net::AssocEntry> table_;
  std::vector<bool> live_;
};

// RFC 5043 5.2 on the card: a DDP segment chunk of a live stream of a programmed association is placed
// by the pipeline (RFC 5041 tagged: at the STag's address), and the host sees the packet with the chunk
// trimmed to its header, DDP-SSN and DDP header (TAKEN 1); a segment beyond the DDP-SSN window is
// declined: nothing placed, the chunk a PAD chunk in the host copy (RFC 4820), DECLINED 1.
TEST_F(NetSide, SegmentPlacedAndTrimmedCopyInTheReceiveRing) {
  std::mt19937_64 rng(seed_);
  StagArgs sa;
  sa.index = 1;
  sa.pd = 1;
  sa.length = 0x10000;
  sa.host_addr = kStagAddr;
  ASSERT_FALSE(drv_.stag_write(sa));
  const std::uint32_t stag = (sa.index << 8) | sa.key;
  ASSERT_FALSE(drv_.stream_enable(kStream, 1));
  program_assoc(0);
  set_live(kStream);
  rx_ring_on();

  Bytes payload(1000);
  for (auto& b : payload) b = static_cast<std::uint8_t>(rng());
  const Bytes p1 = packet(tagged(stag, 0, payload), 1, 100);
  src_.push({p1, bus_meta(meta_)});
  wait_rx_prod(1);
  check_slot(0, p1, {net::Fate::kTaken});
  // The ring entry may be published before the message's completion: the copy and the placement go
  // different ways (the ring writer, place and deliver); the completion follows.
  std::optional<Cqe> cqe;
  for (int i = 0; i < 200 && !(cqe = drv_.cq_peek()); ++i) run(50);
  ASSERT_TRUE(cqe.has_value());
  EXPECT_TRUE(cqe->tagged()) << cqe->str();
  EXPECT_FALSE(cqe->error()) << cqe->str();
  EXPECT_EQ(cqe->stream, kStream);
  EXPECT_EQ(cqe->stag_qn, stag);
  // The completion is written after the placement is acknowledged: the bytes are there.
  EXPECT_EQ(Bytes(gmem_.data() + kStagAddr, gmem_.data() + kStagAddr + payload.size()), payload);

  // DDP-SSN 1 + 200: beyond the 64-segment window (RFC 5043 10): declined, not an error.
  Bytes payload2(300, 0xEE);
  const Bytes p2 = packet(tagged(stag, 0x2000, payload2), 201, 101);
  wr(hw::kRegNET_RX_CONS, 1);
  src_.push({p2, bus_meta(meta_)});
  wait_rx_prod(2);
  check_slot(1, p2, {net::Fate::kDeclined});
  EXPECT_EQ(gmem_.data()[kStagAddr + 0x2000], pattern_byte(kStagAddr + 0x2000)) << "declined segment placed";

  // Counters: 2 packets in, nothing dropped.
  EXPECT_EQ(rd(hw::reg_net_counter(0)), 2u);
  for (unsigned k = 1; k <= 6; ++k) EXPECT_EQ(rd(hw::reg_net_counter(k)), 0u) << "NET_CNT" << k;
  EXPECT_TRUE(sim_.errors().empty()) << sim_.errors().text();
  // m_axi_net wrote only the two slots it published.
  const auto& w = nmem_.kernel_written();
  for (std::uint64_t a = 0; a < w.size(); ++a) {
    if (!w[a]) continue;
    const bool in = a >= kRxRing && a < kRxRing + (2ull << kSlotLog2);
    ASSERT_TRUE(in) << "m_axi_net wrote 0x" << std::hex << a;
  }
}

// The transmit ring: each packet leaves on m_axis_net with its CRC32c (RFC 9260 6.8) at bytes 8..11
// and tdest = the slot's socket; a descriptor with a hostile length is skipped and counted.
TEST_F(NetSide, TransmitRingSendsWithCrc) {
  std::mt19937_64 rng(seed_);
  tx_ring_on();
  std::vector<Bytes> want;
  const std::size_t lens[] = {64, 1500, 11, 9000, 333};  // 11: shorter than the common header
  std::uint32_t prod = 0;
  for (std::size_t len : lens) {
    const std::uint64_t slot = kTxRing + (std::uint64_t{prod % (1u << kTxSlotsLog2)} << kSlotLog2);
    Bytes p(len);
    for (auto& b : p) b = static_cast<std::uint8_t>(rng());
    Bytes d(16, 0);
    wire::store_le16(d.data(), static_cast<std::uint16_t>(len));
    wire::store_le16(d.data() + 2, static_cast<std::uint16_t>(20 + prod));
    nmem_.host_write(slot, d.data(), d.size());
    nmem_.host_write(slot + 16, p.data(), p.size());
    if (len >= 12) {
      seal(p);
      want.push_back(p);
    }
    ++prod;
  }
  wr(hw::kRegNET_TX_PROD, prod);
  const std::uint64_t end = sim_.cycle() + 100000;
  while (sink_.got().size() < want.size() && sim_.cycle() < end) run(100);
  ASSERT_EQ(sink_.got().size(), want.size());
  unsigned sock = 20;
  for (std::size_t i = 0; i < want.size(); ++i, ++sock) {
    if (sock == 22) ++sock;  // the skipped slot's socket
    EXPECT_EQ(sink_.got()[i].bytes, want[i]) << "packet " << i;
    EXPECT_EQ(sink_.got()[i].socket, sock) << "packet " << i;
  }
  EXPECT_EQ(rd(hw::kRegNET_TX_CONS), prod);
  EXPECT_EQ(rd(hw::reg_net_counter(7)), want.size());  // sent
  EXPECT_EQ(rd(hw::reg_net_counter(8)), 1u);           // skipped: bad length
  EXPECT_TRUE(sim_.errors().empty()) << sim_.errors().text();
  for (std::uint8_t b : nmem_.kernel_written()) ASSERT_EQ(b, 0) << "the transmit side wrote host memory";
}

}  // namespace
}  // namespace rnic::tb
