// SPDX-License-Identifier: Apache-2.0
// rnic-sim's network port (docs/network.md, issue 14) as a process: SCTP packets in UDP datagrams
// (RFC 6951) on 127.0.0.1 to the kernel's s_axis_net and out of its m_axis_net, the packet rings on the
// simulator's host memory, the socket table, owner cleanup of the network side (RFC 5041 8.3.2), and
// any bytes from anyone on the port.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "rnic/capture/sctp_capture.hpp"
#include "rnic/driver/rnic.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/sim_protocol/protocol.hpp"
#include "rnic/systest/errors.hpp"
#include "rnic/systest/raw_client.hpp"
#include "rnic/systest/sim_process.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/gather.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "rnic/wire/segmentation.hpp"

namespace {

namespace proto = rnic::sim_protocol;
namespace hw = rnic::hw;
using rnic::capture::SctpPacket;
using rnic::detail::Backend;
using rnic::detail::DmaRegion;
using rnic::detail::make_sim_backend;
using rnic::systest::error_code;
using rnic::systest::RawClient;
using rnic::systest::SimProcess;
using Bytes = std::vector<std::uint8_t>;

constexpr unsigned kSlotLog2 = 14;  // 16 KiB slots: the largest packet fits
constexpr unsigned kRxSlotsLog2 = 4;
constexpr unsigned kTxSlotsLog2 = 2;
constexpr std::uint32_t kLoopback = 0x7F000001;

// A UDP socket on 127.0.0.1: the peer's end of the path.
class Peer {
 public:
  Peer() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = addr(0);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
      throw std::runtime_error(std::string("peer socket: ") + std::strerror(errno));
    }
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~Peer() { ::close(fd_); }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;
  std::uint16_t port() const { return port_; }

  void send_to(std::uint16_t port, const Bytes& d) {
    const sockaddr_in a = addr(port);
    ASSERT_EQ(::sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&a), sizeof a),
              static_cast<ssize_t>(d.size()))
        << std::strerror(errno);
  }
  // The next datagram within `ms`, or nullopt.
  std::optional<Bytes> receive(int ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return std::nullopt;
    Bytes b(65536);
    const ssize_t n = ::recv(fd_, b.data(), b.size(), 0);
    if (n < 0) return std::nullopt;
    b.resize(static_cast<std::size_t>(n));
    return b;
  }

 private:
  static sockaddr_in addr(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(kLoopback);
    a.sin_port = htons(port);
    return a;
  }
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

std::uint32_t field(const std::uint8_t* desc, unsigned offset, unsigned bits) {
  return static_cast<std::uint32_t>(rnic::wire::load_le(desc + offset, bits / 8));
}

// A HEARTBEAT (RFC 9260 3.3.5) of an association the card does not know: it goes to the host whole.
Bytes heartbeat(std::uint32_t vtag, std::size_t info_bytes) {
  Bytes chunk{4, 0, 0, 0, 0, 1, 0, 0};  // type 4, flags, length; Heartbeat Info parameter type 1
  const std::size_t plen = 4 + info_bytes;
  chunk.resize(4 + plen, 0xAB);
  const std::size_t clen = chunk.size();
  chunk[2] = static_cast<std::uint8_t>(clen >> 8);
  chunk[3] = static_cast<std::uint8_t>(clen);
  chunk[6] = static_cast<std::uint8_t>(plen >> 8);
  chunk[7] = static_cast<std::uint8_t>(plen);
  chunk.resize((clen + 3) & ~std::size_t{3}, 0);
  return SctpPacket::build(5001, 5002, vtag, chunk);
}

// The simulator has taken `n` datagrams in all off its socket (STATUS net_in + net_dropped). They cross a
// real socket, so they are waited for, bounded.
void wait_datagrams_taken(const SimProcess& sim, std::uint64_t n) {
  RawClient c(sim.socket());
  ASSERT_EQ(c.hello(proto::kRoleObserver), proto::Status::kOk);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    const proto::StatusRep st = c.status_rep();
    if (st.net_in + st.net_dropped >= n) return;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the simulator did not take the datagrams";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

class SimNet : public ::testing::Test {
 protected:
  SimNet() : sim_({"--udp-port", "0"}) {}

  void SetUp() override {
    backend_ = make_sim_backend(sim_.socket(), false);
    RawClient c(sim_.socket());
    ASSERT_EQ(c.hello(proto::kRoleObserver), proto::Status::kOk);
    port_ = static_cast<std::uint16_t>(c.status_rep().udp_port);
    ASSERT_NE(port_, 0) << "STATUS reports no network port";
  }
  void TearDown() override {
    if (backend_ == nullptr) return;
    for (const DmaRegion& r : regions_) backend_->free(r);
  }

  DmaRegion alloc(std::size_t bytes) {
    regions_.push_back(backend_->alloc(bytes, 4096));
    return regions_.back();
  }
  void ring_setup(std::uint32_t base_lo, std::uint32_t base_hi, std::uint32_t size, std::uint32_t ctrl,
                  std::uint64_t addr, unsigned slots_log2) {
    backend_->write32(ctrl, 0);
    backend_->write32(base_lo, static_cast<std::uint32_t>(addr));
    backend_->write32(base_hi, static_cast<std::uint32_t>(addr >> 32));
    backend_->write32(size, (kSlotLog2 << 8) | slots_log2);
    backend_->write32(ctrl, 1);
  }
  void rings() {
    rx_ = alloc(std::size_t{1} << (kSlotLog2 + kRxSlotsLog2));
    tx_ = alloc(std::size_t{1} << (kSlotLog2 + kTxSlotsLog2));
    ring_setup(hw::kRegNET_RX_BASE_LO, hw::kRegNET_RX_BASE_HI, hw::kRegNET_RX_SIZE, hw::kRegNET_RX_CTRL,
               rx_.device_addr, kRxSlotsLog2);
    ring_setup(hw::kRegNET_TX_BASE_LO, hw::kRegNET_TX_BASE_HI, hw::kRegNET_TX_SIZE, hw::kRegNET_TX_CTRL,
               tx_.device_addr, kTxSlotsLog2);
  }
  void settle_in(std::uint64_t want_in) { wait_datagrams_taken(sim_, want_in); }
  // The simulator took them, and the card has processed them (SYNC: every input taken, the card quiet).
  void settle(std::uint64_t want_in) {
    settle_in(want_in);
    backend_->sim()->sync();
  }
  const std::uint8_t* rx_slot(unsigned i) const {
    return rx_.host + (std::size_t{i % (1u << kRxSlotsLog2)} << kSlotLog2);
  }
  proto::StatusRep status() {
    RawClient c(sim_.socket());
    EXPECT_EQ(c.hello(proto::kRoleObserver), proto::Status::kOk);
    return c.status_rep();
  }

  SimProcess sim_;
  std::unique_ptr<Backend> backend_;
  std::vector<DmaRegion> regions_;
  DmaRegion rx_, tx_;
  std::uint16_t port_ = 0;
};

// A packet of an unknown association arrives whole in the receive ring (docs/network.md: everything
// the card does not take goes to the host), with a descriptor of its lengths and ASSOC = MISS; a packet
// with a bad CRC32c (RFC 9260 6.8) is dropped and counted, and nothing of it reaches the ring.
TEST_F(SimNet, DatagramsReachTheReceiveRing) {
  rings();
  Peer peer;
  const Bytes good = heartbeat(0x01020304, 100);
  Bytes bad = heartbeat(0x01020304, 60);
  bad[20] ^= 0x01;  // after sealing: the CRC32c no longer matches
  peer.send_to(port_, good);
  peer.send_to(port_, bad);
  settle(2);
  EXPECT_EQ(backend_->read32(hw::kRegNET_RX_PROD), 1u);
  EXPECT_EQ(backend_->read32(hw::reg_net_counter(0)), 2u);  // received
  EXPECT_EQ(backend_->read32(hw::reg_net_counter(1)), 1u);  // bad CRC32c
  const std::uint8_t* d = rx_slot(0);
  EXPECT_EQ(field(d, hw::kNRXD_COPY_LEN_OFFSET, hw::kNRXD_COPY_LEN_BITS), good.size());
  EXPECT_EQ(field(d, hw::kNRXD_WIRE_LEN_OFFSET, hw::kNRXD_WIRE_LEN_BITS), good.size());
  EXPECT_EQ(field(d, hw::kNRXD_ASSOC_OFFSET, hw::kNRXD_ASSOC_BITS), hw::kNET_ASSOC_MISS);
  EXPECT_EQ(field(d, hw::kNRXD_FLAGS_OFFSET, hw::kNRXD_FLAGS_BITS), 1u);           // phase 1, not malformed
  EXPECT_EQ(field(d, hw::kNRXD_SRC_IP_OFFSET, hw::kNRXD_SRC_IP_BITS), kLoopback);  // the datagram's sender
  EXPECT_EQ(field(d, hw::kNRXD_SRC_PORT_OFFSET, hw::kNRXD_SRC_PORT_BITS), peer.port());
  EXPECT_EQ(Bytes(d + hw::kNET_SLOT_DESC_BYTES, d + hw::kNET_SLOT_DESC_BYTES + good.size()), good);
  // The second slot was never written (the simulator zeroes allocations).
  const std::uint8_t* d1 = rx_slot(1);
  EXPECT_EQ(field(d1, hw::kNRXD_FLAGS_OFFSET, hw::kNRXD_FLAGS_BITS), 0u);
  EXPECT_EQ(status().net_in, 2u);
}

// The transmit ring's packets leave through the socket table: socket 3 set to the peer gets the packet
// with its CRC32c filled in by the card; a packet for a socket that is not set is dropped and counted.
TEST_F(SimNet, TransmitRingLeavesThroughTheSocketTable) {
  rings();
  Peer peer;
  backend_->sim()->net_socket(3, kLoopback, peer.port(), true);
  const Bytes want = heartbeat(0xCAFEF00D, 300);
  auto post = [&](unsigned slot, std::uint16_t socket) {
    std::uint8_t* s = tx_.host + (std::size_t{slot} << kSlotLog2);
    std::memset(s, 0, hw::kNET_SLOT_DESC_BYTES);
    rnic::wire::store_le(s + hw::kNTXD_LEN_OFFSET, want.size(), 2);
    rnic::wire::store_le(s + hw::kNTXD_SOCKET_OFFSET, socket, 2);
    Bytes body = want;
    std::memset(body.data() + 8, 0, 4);  // the card computes the checksum
    std::memcpy(s + hw::kNET_SLOT_DESC_BYTES, body.data(), body.size());
  };
  post(0, 3);
  post(1, 5);
  backend_->to_device(tx_, 0, tx_.size);
  backend_->write32(hw::kRegNET_TX_PROD, 2);
  backend_->sim()->sync();
  EXPECT_EQ(backend_->read32(hw::kRegNET_TX_CONS), 2u);
  const std::optional<Bytes> got = peer.receive(5000);
  ASSERT_TRUE(got.has_value()) << "nothing arrived from the card";
  EXPECT_EQ(*got, want);
  EXPECT_FALSE(peer.receive(200).has_value()) << "the packet for socket 5 (not set) left";
  EXPECT_EQ(backend_->read32(hw::reg_net_counter(7)), 2u);  // sent by the card
  const proto::StatusRep st = status();
  EXPECT_EQ(st.net_out, 1u);
  EXPECT_EQ(st.net_dropped, 1u);
  EXPECT_THROW(backend_->sim()->net_socket(16, kLoopback, 1, true), rnic::Error);
}

// RFC 5041 8.3.2, the network side: when the owner goes away, the simulator turns both packet rings
// off and waits for them to be idle before its memory is handed out again, clears the association
// entries and live streams it set, and unsets its sockets. A datagram that comes later reaches no ring.
TEST_F(SimNet, OwnerGoneTurnsTheNetworkSideOff) {
  rings();
  backend_->write32(hw::kRegNET_STREAM_LIVE, 0x8000'0000u | 2u);
  for (unsigned i = 0; i < hw::kNET_ASSOC_ARGS; ++i) backend_->write32(hw::reg_net_assoc_arg(i), i + 1);
  backend_->write32(hw::kRegNET_ASSOC_CMD, 0x100u | 4u);
  backend_->sim()->net_socket(0, kLoopback, 9, true);
  regions_.clear();  // the owner does not free them: it just goes away
  backend_.reset();
  RawClient c(sim_.socket());
  ASSERT_EQ(c.hello(proto::kRoleObserver), proto::Status::kOk);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (c.status_rep().owner_pid != 0 || c.status_rep().mem_used != 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the owner's memory was not freed";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (std::uint32_t reg : {hw::kRegNET_RX_CTRL, hw::kRegNET_TX_CTRL, hw::kRegNET_ASSOC_STATUS}) {
    auto r = c.read32(reg);
    ASSERT_EQ(r->status(), proto::Status::kOk);
    proto::MmioRep v{};
    std::memcpy(&v, r->payload.data(), sizeof v);
    EXPECT_EQ(v.value, 0u) << "register 0x" << std::hex << reg;
  }
  Peer peer;
  peer.send_to(port_, heartbeat(1, 8));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (c.status_rep().net_in < 1) {
    ASSERT_LT(std::chrono::steady_clock::now(), until);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // A new owner sees the copy dropped (ring disabled), not written anywhere.
  backend_ = make_sim_backend(sim_.socket(), false);
  backend_->sim()->sync();
  EXPECT_EQ(backend_->read32(hw::reg_net_counter(4)), 1u);  // host copy dropped: ring full or disabled
  EXPECT_EQ(status().axi_errors, 0u);
}

// Any bytes from anyone (RFC 5041 8): random datagrams of 1..9300 bytes, empty ones and SCTP-looking
// ones with good CRCs; the card counts each and the simulator keeps serving. Seeded (RNIC_TEST_SEED).
TEST_F(SimNet, AnyDatagramIsCountedAndTheCardServesOn) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  rings();
  Peer peer;
  unsigned sent = 0, too_long = 0, short_ones = 0;
  for (int i = 0; i < 60; ++i) {
    std::size_t n = 1 + rng() % 9300;
    if (i % 10 == 0) n = 1 + rng() % 11;
    Bytes d(n);
    for (auto& b : d) b = static_cast<std::uint8_t>(rng());
    if (i % 3 == 0 && n >= 12) SctpPacket::seal(d);  // a valid CRC32c over random chunks
    peer.send_to(port_, d);
    ++sent;
    settle_in(sent);  // one at a time: a burst would overflow the socket's receive buffer (a real loss)
    if (n > 9216) ++too_long;
    if (n < 12) ++short_ones;
  }
  settle(sent);
  EXPECT_EQ(backend_->read32(hw::reg_net_counter(0)), sent);
  EXPECT_EQ(backend_->read32(hw::reg_net_counter(2)), too_long);
  EXPECT_GE(backend_->read32(hw::reg_net_counter(1)), short_ones);
  // Every packet that passed its checks is in the ring or counted as a dropped copy.
  const std::uint32_t passed = sent - backend_->read32(hw::reg_net_counter(1)) -
                               backend_->read32(hw::reg_net_counter(2)) - backend_->read32(hw::reg_net_counter(3));
  EXPECT_EQ(backend_->read32(hw::kRegNET_RX_PROD) + backend_->read32(hw::reg_net_counter(4)) +
                backend_->read32(hw::reg_net_counter(5)),
            passed);
  EXPECT_EQ(backend_->read32(hw::kRegID), hw::kID_VALUE);
  EXPECT_EQ(status().axi_errors, 0u);
}

// ---- the driver's network side (Device::open_net, NetPort, Client::set_stream_live) ------------------

class DriverNet : public ::testing::Test {
 protected:
  DriverNet() : sim_({"--udp-port", "0"}) {}
  void SetUp() override {
    dev_ = rnic::Device::open("sim:" + sim_.socket());
    RawClient c(sim_.socket());
    ASSERT_EQ(c.hello(proto::kRoleObserver), proto::Status::kOk);
    port_ = static_cast<std::uint16_t>(c.status_rep().udp_port);
  }
  // Waits until the simulator took `n` datagrams in all, then until the card is quiet.
  void settle(std::uint64_t n) {
    wait_datagrams_taken(sim_, n);
    dev_->sim()->sync();
  }

  // An association entry between this card's UDP port and `peer` on 127.0.0.1, SCTP ports 5002 (ours)
  // and 5001 (theirs), with one DDP stream.
  rnic::NetAssociation association(const Peer& peer, rnic::StreamId stream) const {
    rnic::NetAssociation a;
    a.my_ip = kLoopback;
    a.their_ip = kLoopback;
    a.my_udp_port = port_;
    a.their_udp_port = peer.port();
    a.my_sctp_port = 5002;
    a.their_sctp_port = 5001;
    a.my_verification_tag = 0x5EED1234;
    a.first_stream = stream;
    a.stream_count = 1;
    return a;
  }

  SimProcess sim_;
  std::unique_ptr<rnic::Device> dev_;
  std::uint16_t port_ = 0;
};

// Issue 37: the network side's counters come with Device::counters (rnicctl counters prints them, an
// observer reads them), by name in NET_CNT order; an empty UDP datagram carries no SCTP packet, so the
// card never sees it: rnic-sim's port counts it (SimControl::net_port_stats, rnicctl counters).
TEST_F(DriverNet, CountersShowTheNetworkSideAndEmptyDatagrams) {
  rnic::OpenOptions oo;
  oo.observer = true;
  auto obs = rnic::Device::open("sim:" + sim_.socket(), oo);
  Peer peer;
  Bytes bad = heartbeat(0x01020304, 40);
  bad[20] ^= 0x01;  // a bad CRC32c: received and dropped by the card
  peer.send_to(port_, Bytes{});
  peer.send_to(port_, bad);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (rnic::SimNetPortStats s = obs->sim()->net_port_stats(); s.in + s.empty < 2; s = obs->sim()->net_port_stats()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the simulator did not take the datagrams";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  dev_->sim()->sync();
  const rnic::SimNetPortStats s = obs->sim()->net_port_stats();
  EXPECT_EQ(s.udp_port, port_);
  EXPECT_EQ(s.in, 1u);
  EXPECT_EQ(s.empty, 1u);
  const rnic::Counters c = obs->counters();
  EXPECT_EQ(c.net.received, 1u);
  EXPECT_EQ(c.net.crc_drops, 1u);
  const auto rows = c.net.rows();
  ASSERT_EQ(rows.size(), hw::kNET_COUNTERS);
  EXPECT_STREQ(rows[0].key, "received");
  EXPECT_EQ(rows[0].value, 1u);
  EXPECT_STREQ(rows[1].key, "crc_drops");
  EXPECT_EQ(rows[1].value, 1u);
  for (unsigned i = 0; i < hw::kNET_COUNTERS; ++i)
    EXPECT_EQ(rows[i].value, dev_->read_reg(hw::reg_net_counter(i))) << "row " << i << " is NET_CNT" << i;
  // A run's figures are the difference of two readings, right across a wrap of the 32-bit counters.
  rnic::NetCounters before, after;
  before.received = 0xFFFFFFF0u;
  after.received = 0x10u;
  after.sent = 7;
  EXPECT_EQ(after.since(before).received, 0x20u);
  EXPECT_EQ(after.since(before).sent, 7u);
}

// Packets both ways through the driver's rings, across several laps of each (the receive ring's phase
// bit flips every lap; the transmit ring's slots are reused once the card has read them).
TEST_F(DriverNet, RingsCarryPacketsBothWaysOverSeveralLaps) {
  rnic::NetOptions o;
  o.rx_log2_slots = 3;
  o.tx_log2_slots = 1;
  rnic::NetPort& net = dev_->open_net(o);
  EXPECT_EQ(dev_->net(), &net);
  Peer peer;
  std::uint64_t sent = 0;
  std::vector<rnic::NetRxPacket> got;
  for (unsigned lap = 0; lap < 5; ++lap) {
    std::vector<Bytes> want;
    for (unsigned i = 0; i < 6; ++i) {
      want.push_back(heartbeat(0x1000 + lap, 8 + 40 * i + lap));
      peer.send_to(port_, want.back());
      settle(++sent);
    }
    ASSERT_EQ(net.receive(got), want.size()) << "lap " << lap;
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].bytes, want[i]) << "lap " << lap << " packet " << i;
      EXPECT_EQ(got[i].wire_length, want[i].size());
      EXPECT_FALSE(got[i].association.has_value());
      EXPECT_EQ(got[i].source_ip, kLoopback);  // who sent it: the host answers there
      EXPECT_EQ(got[i].source_port, peer.port());
      EXPECT_EQ(got[i].taken + got[i].duplicates + got[i].declined, 0);
    }
    EXPECT_EQ(net.receive(got), 0u);
  }
  net.set_socket(2, kLoopback, peer.port());
  for (unsigned i = 0; i < 7; ++i) {
    Bytes p = heartbeat(0xBEEF0000 + i, 20 + 8 * i);
    const Bytes want = p;
    std::memset(p.data() + 8, 0, 4);  // the card fills in the CRC32c
    net.send(p, 2);
    dev_->sim()->sync();
    const std::optional<Bytes> d = peer.receive(5000);
    ASSERT_TRUE(d.has_value()) << "packet " << i;
    EXPECT_EQ(*d, want) << "packet " << i;
  }
  const rnic::NetCounters c = net.counters();
  EXPECT_EQ(c.received, sent);
  EXPECT_EQ(c.sent, 7u);
  EXPECT_EQ(c.copy_drops_full + c.crc_drops + c.tx_bad_length, 0u);
}

// RFC 5043 on the card, programmed by the driver: an association entry and a live stream, and a DATA
// chunk of PPID 16 (a tagged DDP segment, DDP-SSN 1: the first after the session's Initiate/Accept) is
// placed in the registered buffer and completed; the host copy of its packet is trimmed to the chunk
// header, DDP-SSN and DDP header (TAKEN 1). Once the stream is torn down (which clears its live bit),
// the same chunk goes to the host whole.
TEST_F(DriverNet, OffloadedChunkIsPlacedAndTrimmedFromTheHostCopy) {
  rnic::NetPort& net = dev_->open_net();
  auto cl = dev_->create_client();
  const rnic::PdId pd = cl->alloc_pd();
  const rnic::Buffer buf = cl->alloc_buffer(4096);
  rnic::RegisterRequest rr;
  rr.pd = pd;
  rr.buffer = buf.id;
  rr.length = 4096;
  const rnic::Registration reg = cl->register_memory(rr);
  const rnic::StreamId stream = cl->create_stream(pd);
  Peer peer;
  const rnic::NetAssociation a = association(peer, stream);
  net.set_association(3, a);
  cl->set_stream_live(stream, true);

  const Bytes payload = [] {
    Bytes p(700);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<std::uint8_t>(i * 13 + 5);
    return p;
  }();
  rnic::wire::TaggedHeader h;
  h.last = true;
  h.stag = reg.stag;
  h.to = 64;
  const Bytes seg = rnic::wire::encode_segment(h, payload).value();
  auto packet = [&](std::uint32_t tsn) {
    const Bytes chunk =
        SctpPacket::data_chunk(tsn, 0, 0, rnic::wire::kPpidDdpSegment, true, rnic::wire::encode_segment_chunk(1, seg));
    return SctpPacket::build(5001, 5002, a.my_verification_tag, chunk);
  };
  const Bytes pkt = packet(100);
  peer.send_to(port_, pkt);
  settle(1);
  std::vector<rnic::Completion> done;
  ASSERT_EQ(cl->poll(done), 1u);
  EXPECT_EQ(done[0].kind, rnic::Completion::Kind::kTagged);
  EXPECT_EQ(done[0].stag, reg.stag);
  EXPECT_EQ(Bytes(buf.data + 64, buf.data + 64 + payload.size()), payload);
  std::vector<rnic::NetRxPacket> got;
  ASSERT_EQ(net.receive(got), 1u);
  EXPECT_EQ(got[0].association, std::optional<std::uint8_t>(3));
  EXPECT_EQ(got[0].taken, 1);
  EXPECT_EQ(got[0].wire_length, pkt.size());
  EXPECT_EQ(got[0].bytes.size(), pkt.size() - payload.size()) << "the payload is cut from the host copy";

  cl->teardown_stream(stream, rnic::Teardown::kAbortive);
  peer.send_to(port_, packet(101));
  settle(2);
  ASSERT_EQ(net.receive(got), 1u);
  EXPECT_EQ(got[0].taken, 0);
  EXPECT_EQ(got[0].bytes.size(), got[0].wire_length) << "a stream that is not live goes to the host whole";
  net.clear_association(3);
}

// The transmit gather through the driver (docs/transmit.md, interface 3.2): a DDP segment handed to
// "usrsctp" as a full-length descriptor chunk, rewritten to its slot form (wire::rewrite_for_gather)
// and sent with NetPort::send_gather, leaves the card with its payload read from the registered
// buffer: the datagram the peer gets is byte for byte the packet of the copying path. A descriptor
// naming an STag without local read (RFC 5041 8: the card reads only what it may) sends nothing and
// shows in tx_faults() with its reason until cleared.
TEST_F(DriverNet, GatherPacketLeavesWithThePayloadOfTheRegisteredBuffer) {
  rnic::NetPort& net = dev_->open_net();
  auto cl = dev_->create_client();
  const rnic::PdId pd = cl->alloc_pd();
  const rnic::Buffer buf = cl->alloc_buffer(16384);
  for (std::size_t i = 0; i < buf.size; ++i) buf.data[i] = static_cast<std::uint8_t>(i * 7 + 3);
  cl->flush_buffer(buf.id, 0, buf.size);
  rnic::RegisterRequest rr;
  rr.pd = pd;
  rr.buffer = buf.id;
  rr.length = 8192;
  rr.access = rnic::kLocalRead;
  rr.base_to = 0x100000;
  const rnic::Registration src = cl->register_memory(rr);
  rr.offset = 8192;
  rr.access = rnic::kRemoteWrite;  // no local read
  const rnic::Registration noread = cl->register_memory(rr);
  const rnic::StreamId stream = cl->create_stream(pd);
  Peer peer;
  rnic::NetAssociation a = association(peer, stream);
  a.their_verification_tag = 0x7A6B5C4D;
  a.socket = 1;
  net.set_association(3, a);
  net.set_socket(1, kLoopback, peer.port());
  cl->set_stream_live(stream, true);

  // A tagged message of 3000 bytes to the peer's STag 0x4242, from TO src.base_to + 100.
  const std::uint64_t to = src.base_to + 100;
  const Bytes message(buf.data + 100, buf.data + 100 + 3000);
  const rnic::wire::SegmentPlan plan =
      rnic::wire::MessageSegmenter::tagged(0x4242, 0, 0, message.size(), 4000).value().segment(0);
  const auto usrsctp_packet = [&](const Bytes& user_data) {
    return SctpPacket::build(a.my_sctp_port, a.their_sctp_port, a.their_verification_tag,
                             SctpPacket::data_chunk(77, 0, 0, rnic::wire::kPpidDdpSegment, true, user_data));
  };
  const Bytes copied =
      usrsctp_packet(rnic::wire::encode_segment_chunk(1, rnic::wire::encode_planned_segment(plan, message).value()));
  const auto slot_for = [&](const rnic::Registration& r, std::uint64_t from) {
    const Bytes desc = usrsctp_packet(rnic::wire::descriptor_user_data(plan, 1, r.stag, from).value());
    EXPECT_EQ(desc.size(), copied.size()) << "usrsctp counts the real size";
    const auto slot =
        rnic::wire::rewrite_for_gather(desc, [&](const rnic::wire::GatherDescriptor& d) { return d.stag == r.stag; });
    EXPECT_TRUE(slot.ok());
    EXPECT_TRUE(slot->gather);
    return slot->packet;
  };
  net.send_gather(slot_for(src, to), 1, 3);
  dev_->sim()->sync();
  const std::optional<Bytes> d = peer.receive(5000);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, copied);
  EXPECT_EQ(net.tx_faults().associations, 0u);

  net.send_gather(slot_for(noread, noread.base_to), 1, 3);
  dev_->sim()->sync();
  EXPECT_FALSE(peer.receive(300).has_value()) << "nothing of a packet with a bad descriptor leaves";
  const rnic::NetTxFaults f = net.tx_faults();
  EXPECT_EQ(f.associations, 1u << 3);
  EXPECT_EQ(f.reason, rnic::hw::kNET_TX_DROP_LOCAL_READ);
  EXPECT_EQ(f.association, 3u);
  const rnic::NetCounters c = net.counters();
  EXPECT_EQ(c.gather_sent, 1u);
  EXPECT_EQ(c.gather_drops_stag, 1u);
  net.clear_tx_faults(1u << 3);
  EXPECT_EQ(net.tx_faults().associations, 0u);

  // Bad calls: an entry not set, an index past the table, a mask past the table.
  using rnic::Errc;
  const Bytes slot = slot_for(src, to);
  EXPECT_EQ(error_code([&] { net.send_gather(slot, 1, 4); }), Errc::kState);
  EXPECT_EQ(error_code([&] { net.send_gather(slot, 1, rnic::kNetEntries); }), Errc::kInvalidArgument);
  EXPECT_EQ(error_code([&] { net.send_gather(slot, rnic::hw::kNET_SOCKETS, 3); }), Errc::kInvalidArgument);
  EXPECT_EQ(error_code([&] { net.clear_tx_faults(1u << rnic::kNetEntries); }), Errc::kInvalidArgument);
  net.clear_association(3);
  EXPECT_EQ(error_code([&] { net.send_gather(slot, 1, 3); }), Errc::kState);
}

// A hostile client of the network side: every call with bad arguments or in the wrong state gets its
// specific error and changes nothing.
TEST_F(DriverNet, BadCallsGetSpecificErrors) {
  using rnic::Errc;
  auto cl = dev_->create_client();
  const rnic::StreamId stream = cl->create_stream(cl->alloc_pd());
  EXPECT_EQ(dev_->net(), nullptr);
  EXPECT_EQ(error_code([&] { cl->set_stream_live(stream, true); }), Errc::kState);
  rnic::NetOptions bad;
  bad.rx_log2_slots = 16;
  EXPECT_EQ(error_code([&] { dev_->open_net(bad); }), Errc::kInvalidArgument);
  bad = {};
  bad.log2_slot_bytes = 11;
  EXPECT_EQ(error_code([&] { dev_->open_net(bad); }), Errc::kInvalidArgument);
  rnic::NetOptions small;
  small.log2_slot_bytes = 12;
  rnic::NetPort& net = dev_->open_net(small);
  EXPECT_EQ(error_code([&] { dev_->open_net(); }), Errc::kState);
  for (std::size_t n : {std::size_t{0}, std::size_t{11}, std::size_t{4081}, std::size_t{9217}}) {
    EXPECT_EQ(error_code([&] { net.send(Bytes(n, 0), 0); }), Errc::kInvalidArgument) << n << " bytes";
  }
  EXPECT_EQ(error_code([&] { net.send(Bytes(64, 0), 16); }), Errc::kInvalidArgument);
  rnic::NetAssociation a;
  a.stream_count = 1;
  EXPECT_EQ(error_code([&] { net.set_association(16, a); }), Errc::kInvalidArgument);
  a.first_stream = dev_->info().streams - 1;
  a.stream_count = 2;
  EXPECT_EQ(error_code([&] { net.set_association(0, a); }), Errc::kInvalidArgument);
  a.stream_count = 0;
  EXPECT_EQ(error_code([&] { net.set_association(0, a); }), Errc::kInvalidArgument);
  a.stream_count = 1;
  a.socket = 16;
  EXPECT_EQ(error_code([&] { net.set_association(0, a); }), Errc::kInvalidArgument);
  EXPECT_EQ(error_code([&] { net.clear_association(99); }), Errc::kInvalidArgument);
  EXPECT_EQ(error_code([&] { net.set_socket(16, kLoopback, 1); }), Errc::kInvalidArgument);
  auto other = dev_->create_client();
  EXPECT_EQ(error_code([&] { other->set_stream_live(stream, true); }), Errc::kNotFound);
  cl->teardown_stream(stream, rnic::Teardown::kAbortive);
  EXPECT_EQ(error_code([&] { cl->set_stream_live(stream, true); }), Errc::kState);
  // Nothing of the above reached the card's tables or rings.
  EXPECT_EQ(net.counters().sent, 0u);
  std::vector<rnic::NetRxPacket> got;
  EXPECT_EQ(net.receive(got), 0u);
  rnic::OpenOptions oo;
  oo.observer = true;
  auto observer = rnic::Device::open("sim:" + sim_.socket(), oo);
  EXPECT_EQ(error_code([&] { observer->open_net(); }), Errc::kState);
}

// Closing the device (RFC 5041 8.3.2, the driver's own cleanup): the association entries it wrote are
// cleared, both rings are off and their memory is freed once the card is done with it.
TEST_F(DriverNet, CloseTurnsTheNetworkSideOffAndFreesTheRings) {
  rnic::NetPort& net = dev_->open_net();
  rnic::NetAssociation a;
  a.stream_count = 1;
  net.set_association(5, a);
  RawClient c(sim_.socket());
  ASSERT_EQ(c.hello(proto::kRoleObserver), proto::Status::kOk);
  const std::uint64_t used_open = c.status_rep().mem_used;
  EXPECT_GT(used_open, 0u);
  dev_.reset();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (c.status_rep().owner_pid != 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(c.status_rep().mem_used, 0u);
  for (std::uint32_t reg : {hw::kRegNET_RX_CTRL, hw::kRegNET_TX_CTRL}) {
    auto r = c.read32(reg);
    proto::MmioRep v{};
    std::memcpy(&v, r->payload.data(), sizeof v);
    EXPECT_EQ(v.value, 0u);
  }
}

// A card without a network side (here the SystemC model, which has none) does not take the ring
// configuration: kUnsupported, and nothing is left allocated. The RTL card without a UDP port has its
// network side: the rings open (like a card whose network cable is unplugged).
TEST(DriverNetStart, OpensOnlyWhereTheCardHasANetworkSide) {
  {
    SimProcess sim({"--model", "systemc"});
    auto dev = rnic::Device::open("sim:" + sim.socket());
    RawClient c(sim.socket());
    ASSERT_EQ(c.hello(proto::kRoleObserver), proto::Status::kOk);
    const std::uint64_t used = c.status_rep().mem_used;  // the completion ring
    EXPECT_EQ(error_code([&] { dev->open_net(); }), rnic::Errc::kUnsupported);
    EXPECT_EQ(dev->net(), nullptr);
    EXPECT_EQ(c.status_rep().mem_used, used) << "the rings of the failed open were not freed";
  }
  SimProcess sim;
  auto dev = rnic::Device::open("sim:" + sim.socket());
  rnic::NetPort& net = dev->open_net();
  std::vector<rnic::NetRxPacket> got;
  EXPECT_EQ(net.receive(got), 0u);
  EXPECT_EQ(net.counters().received, 0u);
  // rnicctl regs reads every row of the map: the window answers on this card.
  EXPECT_EQ(dev->read_reg(hw::kRegNET_RX_CTRL) & 1u, 1u);
}

// The SystemC model has no network ports: --udp-port with it stops at start-up with the reason.
TEST(SimNetStart, UdpPortNeedsTheRtlModel) {
  EXPECT_THROW(SimProcess({"--model", "systemc", "--udp-port", "0"}), std::runtime_error);
}

}  // namespace
