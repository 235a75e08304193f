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
#include "rnic/hw/hw.hpp"
#include "rnic/pcap/sctp_capture.hpp"
#include "rnic/sim/protocol.hpp"
#include "rnic/systest/raw_client.hpp"
#include "rnic/systest/sim_process.hpp"

namespace {

namespace proto = rnic::sim::proto;
namespace hw = rnic::hw;
using rnic::capture::SctpPacket;
using rnic::detail::Backend;
using rnic::detail::DmaRegion;
using rnic::detail::make_sim_backend;
using rnic::systest::RawClient;
using rnic::systest::SimProcess;
using Bytes = std::vector<std::uint8_t>;

constexpr unsigned kSlotLog2 = 14;  // 16 KiB slots: the largest packet fits
constexpr unsigned kRxSlotsLog2 = 4;
constexpr unsigned kTxSlotsLog2 = 2;
constexpr std::uint32_t kLoopback = 0x7F000001;

std::uint64_t seed_from_env() {
  const char* s = std::getenv("RNIC_TEST_SEED");
  if (s != nullptr && *s != '\0') return std::strtoull(s, nullptr, 0);
  return std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32);
}

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
  std::uint32_t v = 0;
  for (unsigned i = 0; i < (bits + 7) / 8; ++i) v |= std::uint32_t{desc[offset + i]} << (8 * i);
  return bits >= 32 ? v : v & ((1u << bits) - 1);
}
void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
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
  // The simulator has taken `want_in` datagrams off its socket (they cross a real socket, so they are
  // waited for, bounded).
  void settle_in(std::uint64_t want_in) {
    RawClient c(sim_.socket());
    ASSERT_EQ(c.hello(proto::kRoleObserver), proto::Status::kOk);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      const proto::StatusRep st = c.status_rep();
      if (st.net_in + st.net_dropped >= want_in) return;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the simulator did not take the datagrams";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  // ... and the card has processed them (SYNC: every input taken and the card quiet).
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
  EXPECT_EQ(field(d, hw::kNRXD_FLAGS_OFFSET, hw::kNRXD_FLAGS_BITS), 1u);  // phase 1, not malformed
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
    put16(s + hw::kNTXD_LEN_OFFSET, static_cast<std::uint16_t>(want.size()));
    put16(s + hw::kNTXD_SOCKET_OFFSET, socket);
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
  const std::uint64_t seed = seed_from_env();
  std::printf("[   SEED   ] RNIC_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
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

// The SystemC model has no network ports: --udp-port with it stops at start-up with the reason.
TEST(SimNetStart, UdpPortNeedsTheRtlModel) {
  EXPECT_THROW(SimProcess({"--model", "systemc", "--udp-port", "0"}), std::runtime_error);
}

}  // namespace
