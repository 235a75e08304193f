// SPDX-License-Identifier: Apache-2.0
// rnic_kernel with its network side (NET = 1; issue 14, docs/network.md): SCTP packets in on s_axis_net,
// the DDP segments placed by the pipeline, the trimmed host copies in the receive packet ring, the
// transmit packet ring out on m_axis_net with the CRC32c inserted, all programmed through the register
// window (hw.def NET_*) as the driver will. The expected host copies come from tb/net NetRef.
// Host memory: m_axi_gmem and m_axi_net each on an AxiHostMemory with a guard pattern; at the end every
// byte either master wrote must lie where it was allowed to (RFC 5041 8: the card writes only memory it
// owns). Seed: RNIC_TEST_SEED; waveform: RNIC_FST=<file>.
#include <gtest/gtest.h>

#include <algorithm>
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
#include "rnic/tb/tx_gather_fixture.hpp"
#include "rnic/tb/tx_gather_ref.hpp"
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
    const Bytes zero(std::size_t{hw::kCQE_BYTES} << 6, 0);  // a fresh ring: no entry with a phase yet
    gmem_.host_write(kCqBase, zero.data(), zero.size());
    drv_.cq_setup(kCqBase, 6);
    entry_ = net::fixture::kernel_entry(kStream);
    meta_ = {entry_.my_ip, entry_.their_ip, entry_.my_udp_port, entry_.their_udp_port};
    live_.assign(16, false);
  }

  void wr(std::uint32_t reg, std::uint32_t v) { mmio_.write32(reg, v); }
  std::uint32_t rd(std::uint32_t reg) { return mmio_.read32(reg); }

  void program_assoc(unsigned index) {
    net::fixture::write_kernel_entry([this](std::uint32_t reg, std::uint32_t v) { wr(reg, v); }, index, entry_);
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

// ---- the transmit gather (issue 35, docs/transmit.md) ----------------------------------------------

class NetGather : public NetSide {
 protected:
  static constexpr std::uint16_t kPd = 5;
  static constexpr std::uint64_t kBaseTo = 0x7000;
  static constexpr std::uint64_t kLen = 3 * 4096 + 100;
  static constexpr std::uint64_t kBufAddr = 0x80000 + 0x9C0;  // not 4 KiB aligned: bursts split at pages
  static constexpr unsigned kAssoc = 2;

  NetGather() {
    std::mt19937_64 rng(seed_ ^ 0x9A7E);
    payload_.resize(kLen);
    for (auto& b : payload_) b = static_cast<std::uint8_t>(rng());
    gmem_.host_write(kBufAddr, payload_.data(), payload_.size());
    EXPECT_FALSE(drv_.stream_enable(kStream, kPd));
    program_assoc(kAssoc);
    set_live(kStream);
    tx_ring_on();
    send_ = add_stag(1, true);
    noread_ = add_stag(2, false);
  }

  StagArgs add_stag(std::uint32_t index, bool local_read) {
    StagArgs a;
    a.index = index;
    a.remote_write = false;
    a.local_read = local_read;
    a.pd = kPd;
    a.base_to = kBaseTo;
    a.length = kLen;
    a.host_addr = kBufAddr;
    EXPECT_FALSE(drv_.stag_write(a));
    net::TxStag t;
    t.valid = true;
    t.key = a.key;
    t.local_read = local_read;
    t.pd = kPd;
    t.base_to = kBaseTo;
    t.length = kLen;
    t.addr = kBufAddr;
    if (tables_.stags.size() <= index) tables_.stags.resize(index + 1);
    tables_.stags[index] = t;
    return a;
  }
  static std::uint32_t stag_of(const StagArgs& a) { return a.index << 8 | a.key; }

  // A slot packet of association kAssoc: its common header (our ports, their tag), then one descriptor
  // chunk per (stag, to, len): a tagged DDP segment with DDP-SSN ssn0 + i.
  struct Desc {
    std::uint32_t stag;
    std::uint64_t to;
    std::uint32_t len;
  };
  Bytes slot_packet(const std::vector<Desc>& descs, std::uint16_t ssn0) {
    Bytes p(12, 0);
    store_be16(p.data(), entry_.my_sctp_port);
    store_be16(p.data() + 2, entry_.their_sctp_port);
    store_be32(p.data() + 4, entry_.their_vtag);
    std::uint32_t tsn = 1000;
    for (const Desc& d : descs) {
      wire::TaggedHeader h;
      h.last = true;
      h.stag = 0xABCD0000u + d.len;  // the remote STag (any: the peer's)
      h.to = d.to;
      const Bytes ddp = wire::encode_segment(h, wire::ConstBytes()).value();
      Bytes head(16 + 2, 0);
      head[1] = 0x07;
      store_be16(head.data() + 2, static_cast<std::uint16_t>(16 + 2 + ddp.size() + d.len));
      store_be32(head.data() + 4, tsn++);
      store_be32(head.data() + 12, 16);
      store_be16(head.data() + 16, ssn0++);
      head.insert(head.end(), ddp.begin(), ddp.end());
      const Bytes c = net::descriptor_chunk(head, d.stag, d.to, d.len);
      p.insert(p.end(), c.begin(), c.end());
    }
    return p;
  }
  net::TxGather expect(const Bytes& slot) {
    tables_.assoc = table_;
    tables_.live.assign(16, false);
    tables_.live[kStream] = true;
    tables_.stream_pd.assign(16, 0);
    tables_.stream_pd[kStream] = kPd;
    const auto read = [this](std::uint64_t a, std::uint8_t* out, std::size_t n) {
      std::copy_n(gmem_.data() + a, n, out);
      return true;
    };
    return net::gather(slot, entry_.vnx_socket, kAssoc, tables_, read);
  }
  // Puts the slot packets in the transmit ring (NTXD GATHER, ASSOC kAssoc) and rings the doorbell.
  void post(const std::vector<Bytes>& slots) {
    ASSERT_LE(prod_ + slots.size() - rd(hw::kRegNET_TX_CONS), 1u << kTxSlotsLog2) << "the ring holds 8 slots";
    for (const Bytes& p : slots) {
      const std::uint64_t slot = kTxRing + (std::uint64_t{prod_ % (1u << kTxSlotsLog2)} << kSlotLog2);
      Bytes d(16, 0);
      wire::store_le16(d.data() + hw::kNTXD_LEN_OFFSET, static_cast<std::uint16_t>(p.size()));
      wire::store_le16(d.data() + hw::kNTXD_SOCKET_OFFSET, entry_.vnx_socket);
      d[hw::kNTXD_FLAGS_OFFSET] = static_cast<std::uint8_t>(hw::kNTXD_FLAGS_GATHER.mask());
      d[hw::kNTXD_ASSOC_OFFSET] = kAssoc;
      nmem_.host_write(slot, d.data(), d.size());
      nmem_.host_write(slot + 16, p.data(), p.size());
      ++prod_;
    }
    wr(hw::kRegNET_TX_PROD, prod_);
  }
  void wait_cons() {
    const std::uint64_t end = sim_.cycle() + 200000;
    while (rd(hw::kRegNET_TX_CONS) != prod_ && sim_.cycle() < end) run(100);
    ASSERT_EQ(rd(hw::kRegNET_TX_CONS), prod_);
    run(2000);  // the last packet through the gather and out
  }

  Bytes payload_;
  net::TxTables tables_;
  StagArgs send_, noread_;
  std::uint32_t prod_ = 0;
};

// Good gather packets through the whole card: each descriptor checked against the STag and stream
// tables the commands wrote and the association entry with their tag, its payload read from
// registered memory on m_axi_gmem, the packet on m_axis_net byte for byte as TxGatherRef says.
TEST_F(NetGather, DescriptorsExpandFromRegisteredMemory) {
  std::vector<Bytes> slots, want;
  const std::uint32_t s = stag_of(send_);
  slots.push_back(slot_packet({{s, kBaseTo, 1400}}, 1));
  slots.push_back(slot_packet({{s, kBaseTo + 3000, 5000}}, 2));  // 4 KiB pages
  slots.push_back(slot_packet({{s, kBaseTo + 7, 64}, {s, kBaseTo + 100, 0}, {s, kBaseTo + kLen - 33, 33}}, 3));
  for (const Bytes& p : slots) {
    const net::TxGather g = expect(p);
    ASSERT_EQ(g.drop, net::TxDrop::kNone) << net::tx_drop_name(g.drop);
    want.push_back(g.wire);
  }
  post(slots);
  wait_cons();
  ASSERT_EQ(sink_.got().size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(sink_.got()[i].bytes, want[i]) << "packet " << i;
    EXPECT_EQ(sink_.got()[i].socket, entry_.vnx_socket);
  }
  EXPECT_EQ(rd(hw::reg_net_counter(10)), want.size());  // gather packets sent
  EXPECT_EQ(rd(hw::kRegNET_TX_FAULT), 0u);
  EXPECT_TRUE(sim_.errors().empty()) << sim_.errors().text();
}

// RFC 5041 8 / docs/transmit.md: a descriptor the card may not read drops its whole packet, counted by
// class, its association's NET_TX_FAULT bit set with the first reason; the good packets around it go.
TEST_F(NetGather, BadDescriptorsDropTheirPacketAndRaiseTheFault) {
  const std::uint32_t s = stag_of(send_);
  struct Case {
    Desc d;
    unsigned reason, counter;
  };
  const std::vector<Case> cases = {
      {{stag_of(noread_), kBaseTo, 100}, hw::kNET_TX_DROP_LOCAL_READ, 13},
      {{s, kBaseTo + kLen - 10, 11}, hw::kNET_TX_DROP_BOUNDS, 13},
      {{s ^ 0x01u, kBaseTo, 100}, hw::kNET_TX_DROP_STAG, 13},       // wrong key
      {{(9u << 8) | 1u, kBaseTo, 100}, hw::kNET_TX_DROP_STAG, 13},  // no entry
      {{s, kBaseTo - 1, 100}, hw::kNET_TX_DROP_BOUNDS, 13},
  };
  std::vector<Bytes> slots;
  std::vector<Bytes> want;
  for (const Case& c : cases) {
    slots.push_back(slot_packet({{s, kBaseTo, 200}, c.d}, 7));
    const net::TxGather g = expect(slots.back());
    ASSERT_EQ(static_cast<unsigned>(g.drop), c.reason) << net::tx_drop_name(g.drop);
    slots.push_back(slot_packet({{s, kBaseTo + 8, 300}}, 8));  // a good one after it
    want.push_back(expect(slots.back()).wire);
  }
  for (std::size_t k = 0; k < slots.size(); k += 4) {  // the ring has 8 slots
    post(std::vector<Bytes>(slots.begin() + static_cast<std::ptrdiff_t>(k),
                            slots.begin() + static_cast<std::ptrdiff_t>(std::min(slots.size(), k + 4))));
    wait_cons();
  }
  ASSERT_EQ(sink_.got().size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(sink_.got()[i].bytes, want[i]) << "packet " << i;
  EXPECT_EQ(rd(hw::reg_net_counter(13)), cases.size());
  EXPECT_EQ(rd(hw::reg_net_counter(10)), want.size());
  EXPECT_EQ(rd(hw::kRegNET_TX_FAULT), 1u << kAssoc);
  EXPECT_EQ(rd(hw::kRegNET_TX_FAULT_REASON),
            hw::kNET_TX_FAULT_REASON_ASSOC.put(kAssoc) | hw::kNET_TX_FAULT_REASON_REASON.put(cases[0].reason));
  wr(hw::kRegNET_TX_FAULT, 1u << kAssoc);
  EXPECT_EQ(rd(hw::kRegNET_TX_FAULT), 0u);
  // Wrong tag in the common header: the association check (NET_CNT11).
  Bytes bad = slot_packet({{s, kBaseTo, 10}}, 9);
  store_be32(bad.data() + 4, entry_.my_vtag);
  post({bad});
  wait_cons();
  EXPECT_EQ(rd(hw::reg_net_counter(11)), 1u);
  EXPECT_EQ(rd(hw::kRegNET_TX_FAULT_REASON),
            hw::kNET_TX_FAULT_REASON_ASSOC.put(kAssoc) | hw::kNET_TX_FAULT_REASON_REASON.put(hw::kNET_TX_DROP_ASSOC));
  EXPECT_EQ(sink_.got().size(), want.size());
  EXPECT_TRUE(sim_.errors().empty()) << sim_.errors().text();
}

// The fences (docs/transmit.md "Security"): STAG_INVALIDATE completes only once every descriptor
// checked before it has finished its reads: at the cycle CMD_STATUS reads not busy, m_axi_gmem has no
// read outstanding and none comes later (the later descriptors fail kStag). Each packet either went out
// whole or was dropped. The association clear likewise (NET_ASSOC_STATUS).
TEST_F(NetGather, InvalidateAndClearAreFencedAgainstTheGather) {
  const std::uint32_t s = stag_of(send_);
  std::vector<Bytes> slots;
  for (int i = 0; i < 8; ++i)
    slots.push_back(slot_packet({{s, kBaseTo + 64, 8000}}, static_cast<std::uint16_t>(20 + i)));
  const Bytes whole = expect(slots.front()).wire;
  post(slots);
  // Mid-stream: the gather is reading when the command is issued.
  const std::uint64_t t_post = sim_.cycle();
  while (gmem_.ar_count() < 3 && sim_.cycle() < t_post + 20000) run(1);
  ASSERT_GE(gmem_.ar_count(), 3u);
  wr(hw::reg_cmd_arg(0), send_.index);
  wr(hw::kRegCMD, hw::kCmdSTAG_INVALIDATE);
  const std::uint64_t ar_at_issue = gmem_.ar_count();
  bool idle_at_done = false;
  std::uint64_t ar_at_done = 0;
  for (int i = 0; i < 100000; ++i) {
    if ((rd(hw::kRegCMD_STATUS) & hw::kCMD_STATUS_BUSY.mask()) == 0) {
      idle_at_done = gmem_.idle();
      ar_at_done = gmem_.ar_count();
      break;
    }
  }
  EXPECT_TRUE(idle_at_done) << "a payload read outstanding when STAG_INVALIDATE completed";
  wait_cons();
  EXPECT_EQ(gmem_.ar_count(), ar_at_done) << "a payload read after STAG_INVALIDATE completed";
  std::printf("[  INFO    ] ARs: %llu at the command, %llu at its completion; %zu packets sent whole\n",
              static_cast<unsigned long long>(ar_at_issue), static_cast<unsigned long long>(ar_at_done),
              sink_.got().size());
  for (const auto& got : sink_.got()) EXPECT_EQ(got.bytes.size(), whole.size());
  EXPECT_EQ(rd(hw::reg_net_counter(10)) + rd(hw::reg_net_counter(13)), slots.size());
  EXPECT_GE(rd(hw::reg_net_counter(13)), 1u);  // the invalidation came before the last packet
  // The association clear.
  send_ = add_stag(3, true);
  const std::size_t sent = sink_.got().size();
  wr(hw::kRegNET_ASSOC_CMD, kAssoc);  // WRITE 0: clear
  while ((rd(hw::kRegNET_ASSOC_STATUS) & 1u) != 0) run(10);
  post({slot_packet({{stag_of(send_), kBaseTo, 64}}, 30)});
  wait_cons();
  EXPECT_EQ(sink_.got().size(), sent);
  EXPECT_EQ(rd(hw::reg_net_counter(11)), 1u);
  EXPECT_TRUE(sim_.errors().empty()) << sim_.errors().text();
}

// m_axi_gmem carries both readers at once (rnic_axi_rd_mux): untagged segments arriving from the
// network make lookup fetch receive descriptors (the buffers are posted one at a time, so each fetch
// is a read of its own) while the gather reads payload for back-to-back gather packets. Every message
// is placed into its buffer and completed, every gather packet leaves as TxGatherRef says.
TEST_F(NetGather, DescriptorFetchesAndGatherReadsShareTheReadPort) {
  constexpr std::uint64_t kRqRing = 0x60000, kRecvBase = 0xA0000;
  constexpr unsigned kMessages = 16;
  rx_ring_on();
  ASSERT_FALSE(drv_.queue_config(kStream, 0, kRqRing, 6, 1));
  std::mt19937_64 rng(seed_ ^ 0x5EA7);
  const std::uint32_t s = stag_of(send_);
  std::vector<Bytes> want_tx, payloads;
  unsigned cqes = 0;
  for (unsigned m = 0; m < kMessages; ++m) {
    // Two gather packets, then a receive buffer and its message, without waiting in between.
    std::vector<Bytes> slots;
    for (int k = 0; k < 2; ++k) {
      const std::uint32_t len = 500 + static_cast<std::uint32_t>(rng() % 7000);
      const std::uint64_t to = kBaseTo + rng() % (kLen - len);
      slots.push_back(slot_packet({{s, to, len}}, static_cast<std::uint16_t>(100 + 2 * m + static_cast<unsigned>(k))));
      want_tx.push_back(expect(slots.back()).wire);
    }
    while (prod_ + slots.size() - rd(hw::kRegNET_TX_CONS) > (1u << kTxSlotsLog2)) run(50);
    post(slots);
    drv_.post_recv(kStream, 0, kRecvBase + 0x1000ull * m, 2048);
    Bytes payload(100 + rng() % 1900);
    for (auto& b : payload) b = static_cast<std::uint8_t>(rng());
    payloads.push_back(payload);
    wire::UntaggedHeader h;
    h.last = true;
    h.qn = 0;
    h.msn = m + 1;
    h.mo = 0;
    src_.push(
        {packet(wire::encode_segment(h, wire::ConstBytes(payload)).value(), static_cast<std::uint16_t>(m + 1), 200 + m),
         bus_meta(meta_)});
    run(rng() % 200);
  }
  const std::uint64_t end = sim_.cycle() + 400000;
  while ((sink_.got().size() < want_tx.size() || cqes < kMessages) && sim_.cycle() < end) {
    run(100);
    while (auto c = drv_.cq_peek()) {
      EXPECT_FALSE(c->error()) << c->str();
      EXPECT_FALSE(c->tagged()) << c->str();
      EXPECT_EQ(c->msn, cqes + 1) << c->str();
      EXPECT_EQ(c->length, payloads[cqes].size()) << c->str();
      drv_.cq_pop();
      ++cqes;
    }
    drv_.cq_update_cons();
  }
  ASSERT_EQ(cqes, kMessages);
  ASSERT_EQ(sink_.got().size(), want_tx.size());
  for (std::size_t i = 0; i < want_tx.size(); ++i) EXPECT_EQ(sink_.got()[i].bytes, want_tx[i]) << "packet " << i;
  for (unsigned m = 0; m < kMessages; ++m) {
    const std::uint8_t* b = gmem_.data() + kRecvBase + 0x1000ull * m;
    EXPECT_EQ(Bytes(b, b + payloads[m].size()), payloads[m]) << "message " << m;
  }
  EXPECT_EQ(rd(hw::reg_net_counter(10)), want_tx.size());
  EXPECT_EQ(rd(hw::kRegNET_TX_FAULT), 0u);
  EXPECT_TRUE(sim_.errors().empty()) << sim_.errors().text();
}

}  // namespace
}  // namespace rnic::tb
