// SPDX-License-Identifier: Apache-2.0
// The driver's network side (docs/network.md): the receive and transmit packet rings in host memory,
// the association table and the live streams. Formats and registers are hw.def's (NRXD_*, NTXD_*,
// NET_*). Every member function expects Core::mu held, as core.cpp's do.
#include <atomic>
#include <cstring>
#include <string>

#include "core.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/wire/bytes.hpp"

namespace rnic::detail {
namespace {

using namespace rnic::hw;

// The two rings have one SIZE and one CTRL layout (hw.def); the code below uses NET_RX_*'s fields for both.
static_assert(kNET_TX_SIZE_LOG2_SLOTS.mask() == kNET_RX_SIZE_LOG2_SLOTS.mask() &&
              kNET_TX_SIZE_LOG2_SLOT_BYTES.mask() == kNET_RX_SIZE_LOG2_SLOT_BYTES.mask() &&
              kNET_TX_CTRL_ENABLE.mask() == kNET_RX_CTRL_ENABLE.mask() &&
              kNET_TX_CTRL_BUSY.mask() == kNET_RX_CTRL_BUSY.mask());

// hw.def fields are whole little-endian bytes.
std::uint32_t field(const std::uint8_t* p, unsigned offset, unsigned bits) {
  return static_cast<std::uint32_t>(wire::load_le(p + offset, bits / 8));
}
void put(std::uint8_t* p, unsigned offset, unsigned bits, std::uint32_t v) { wire::store_le(p + offset, v, bits / 8); }
std::string num(std::uint64_t v) { return std::to_string(v); }

}  // namespace

NetState& Core::net(const char* call) {
  if (!net_) throw Error(Errc::kState, std::string(call) + ": the network side is not open (Device::open_net)");
  return *net_;
}

void Core::net_open(const NetOptions& o) {
  if (opts_.observer) throw Error(Errc::kState, "open_net: opened as observer (the owner runs the network side)");
  if (net_) throw Error(Errc::kState, "open_net: the network side is already open");
  if (info_.net_assocs == 0) {
    throw Error(Errc::kUnsupported,
                "open_net: the card has no network side (CAP_NET_ASSOCS reads 0: built with NET = 0)");
  }
  if (o.rx_log2_slots > kNET_LOG2_SLOTS_MAX || o.tx_log2_slots > kNET_LOG2_SLOTS_MAX) {
    throw Error(Errc::kInvalidArgument, "open_net: log2 slots " + num(o.rx_log2_slots) + " / " + num(o.tx_log2_slots) +
                                            " out of range 0.." + num(kNET_LOG2_SLOTS_MAX));
  }
  if (o.log2_slot_bytes < kNET_LOG2_SLOT_MIN || o.log2_slot_bytes > kNET_LOG2_SLOT_MAX) {
    throw Error(Errc::kInvalidArgument, "open_net: log2 slot bytes " + num(o.log2_slot_bytes) + " out of range " +
                                            num(kNET_LOG2_SLOT_MIN) + ".." + num(kNET_LOG2_SLOT_MAX));
  }
  NetState n;
  n.log2_slot_bytes = o.log2_slot_bytes;
  struct Ring {
    NetRing* r;
    std::uint32_t log2;
    std::uint32_t base_lo, base_hi, size, ctrl;
  };
  const Ring rings[] = {
      {&n.rx, o.rx_log2_slots, kRegNET_RX_BASE_LO, kRegNET_RX_BASE_HI, kRegNET_RX_SIZE, kRegNET_RX_CTRL},
      {&n.tx, o.tx_log2_slots, kRegNET_TX_BASE_LO, kRegNET_TX_BASE_HI, kRegNET_TX_SIZE, kRegNET_TX_CTRL}};
  std::vector<DmaRegion> allocated;
  try {
    for (const Ring& g : rings) {
      g.r->log2_slots = g.log2;
      g.r->mem = be_->alloc(std::size_t{1} << (g.log2 + o.log2_slot_bytes), 4096);
      allocated.push_back(g.r->mem);
      // The card takes a configuration only while the ring is disabled and idle (CTRL reads 0).
      wr(g.ctrl, 0);
      if (!poll_until([&] { return rd(g.ctrl) == 0; }, [] {})) {
        throw Error(Errc::kTimeout, "open_net: a packet ring stays busy after disabling it");
      }
      wr(g.base_lo, static_cast<std::uint32_t>(g.r->mem.device_addr));
      wr(g.base_hi, static_cast<std::uint32_t>(g.r->mem.device_addr >> 32));
      const std::uint32_t size =
          kNET_RX_SIZE_LOG2_SLOT_BYTES.put(o.log2_slot_bytes) | kNET_RX_SIZE_LOG2_SLOTS.put(g.log2);
      wr(g.size, size);
      const std::uint64_t base = (std::uint64_t{rd(g.base_hi)} << 32) | rd(g.base_lo);
      if (base != g.r->mem.device_addr || rd(g.size) != size) {
        // CAP_NET_ASSOCS said the card has a network side (checked above): a card that does not take
        // the configuration it reported is broken.
        throw Error(Errc::kBackend, "open_net: " + info_.device + " did not take the packet ring configuration");
      }
      wr(g.ctrl, kNET_RX_CTRL_ENABLE.mask());  // producer and consumer to 0, phase 1
    }
  } catch (...) {
    // The receive ring may have been enabled (and written) before the transmit ring failed: its memory
    // is the driver's again only once both rings read idle; otherwise it stays allocated.
    wr(kRegNET_RX_CTRL, 0);
    wr(kRegNET_TX_CTRL, 0);
    const bool idle = poll_until(
        [&] { return ((rd(kRegNET_RX_CTRL) | rd(kRegNET_TX_CTRL)) & kNET_RX_CTRL_BUSY.mask()) == 0; }, [] {});
    if (idle) {
      for (const DmaRegion& r : allocated) be_->free(r);
    }
    throw;
  }
  net_ = std::move(n);
}

bool Core::net_close() noexcept {
  if (!net_) return true;
  bool clean = true;
  try {
    for (std::uint32_t idx : net_->associations) {
      if (!poll_until([&] { return (rd(kRegNET_ASSOC_STATUS) & kNET_ASSOC_STATUS_BUSY.mask()) == 0; }, [] {}))
        clean = false;
      wr(kRegNET_ASSOC_CMD, kNET_ASSOC_CMD_INDEX.put(idx));  // WRITE 0: clear
    }
    wr(kRegNET_RX_CTRL, 0);
    wr(kRegNET_TX_CTRL, 0);
    for (std::uint32_t reg : {kRegNET_RX_CTRL, kRegNET_TX_CTRL}) {
      if (!poll_until([&] { return (rd(reg) & kNET_RX_CTRL_BUSY.mask()) == 0; }, [] {})) clean = false;
    }
    if (clean) {
      be_->free(net_->rx.mem);
      be_->free(net_->tx.mem);
    }
  } catch (const std::exception&) {
    clean = false;  // the transport is gone: nothing more to disable
  }
  net_.reset();
  return clean;
}

std::size_t Core::net_receive(std::vector<NetRxPacket>& out, std::size_t max) {
  NetState& n = net("NetPort::receive");
  out.clear();
  NetRing& r = n.rx;
  const std::uint32_t slots = 1u << r.log2_slots;
  const std::size_t slot_bytes = std::size_t{1} << n.log2_slot_bytes;
  const std::uint32_t start = r.index;
  while (out.size() < max) {
    const std::size_t off = std::size_t{r.index & (slots - 1)} << n.log2_slot_bytes;
    be_->from_device(r.mem, off, kNET_SLOT_DESC_BYTES);
    const std::uint8_t* d = r.mem.host + off;
    // The phase bit of lap L is 1 on even laps: the descriptor is the card's last write to a slot.
    const bool phase = ((r.index >> r.log2_slots) & 1u) == 0;
    const std::uint32_t flags = field(d, kNRXD_FLAGS_OFFSET, kNRXD_FLAGS_BITS);
    if ((kNRXD_FLAGS_PHASE.get(flags) != 0) != phase) break;
    std::atomic_thread_fence(std::memory_order_acquire);  // the rest of the slot is read after its phase
    const std::uint32_t copy = field(d, kNRXD_COPY_LEN_OFFSET, kNRXD_COPY_LEN_BITS);
    if (copy > slot_bytes - kNET_SLOT_DESC_BYTES) {
      throw Error(Errc::kBackend, "NetPort::receive: slot " + num(r.index) + " says " + num(copy) +
                                      " bytes, more than a slot holds (the card broke its contract)");
    }
    be_->from_device(r.mem, off + kNET_SLOT_DESC_BYTES, copy);
    NetRxPacket p;
    p.bytes.assign(d + kNET_SLOT_DESC_BYTES, d + kNET_SLOT_DESC_BYTES + copy);
    p.wire_length = field(d, kNRXD_WIRE_LEN_OFFSET, kNRXD_WIRE_LEN_BITS);
    const std::uint32_t assoc = field(d, kNRXD_ASSOC_OFFSET, kNRXD_ASSOC_BITS);
    if (assoc != kNET_ASSOC_MISS) p.association = static_cast<std::uint8_t>(assoc);
    p.malformed = kNRXD_FLAGS_MALFORMED.get(flags) != 0;
    p.taken = static_cast<std::uint8_t>(field(d, kNRXD_TAKEN_OFFSET, kNRXD_TAKEN_BITS));
    p.duplicates = static_cast<std::uint8_t>(field(d, kNRXD_DUP_OFFSET, kNRXD_DUP_BITS));
    p.declined = static_cast<std::uint8_t>(field(d, kNRXD_DECLINED_OFFSET, kNRXD_DECLINED_BITS));
    p.source_ip = field(d, kNRXD_SRC_IP_OFFSET, kNRXD_SRC_IP_BITS);
    p.source_port = static_cast<std::uint16_t>(field(d, kNRXD_SRC_PORT_OFFSET, kNRXD_SRC_PORT_BITS));
    out.push_back(std::move(p));
    ++r.index;
  }
  if (r.index != start) wr(kRegNET_RX_CONS, r.index);  // the slots are the card's again
  return out.size();
}

std::uint32_t Core::net_send(const std::vector<std::uint8_t>& packet, std::uint16_t socket) {
  return net_put_slot(net("NetPort::send"), "NetPort::send", packet, socket, false, 0);
}

std::uint32_t Core::net_send_gather(const std::vector<std::uint8_t>& packet, std::uint16_t socket,
                                    std::uint32_t association) {
  NetState& n = net("NetPort::send_gather");
  if (association >= kNetEntries) {
    throw Error(Errc::kInvalidArgument,
                "NetPort::send_gather: association " + num(association) + " out of range 0.." + num(kNetEntries - 1));
  }
  if (n.associations.count(association) == 0) {
    throw Error(Errc::kState, "NetPort::send_gather: association " + num(association) + " is not set");
  }
  return net_put_slot(n, "NetPort::send_gather", packet, socket, true, association);
}

std::uint32_t Core::net_put_slot(NetState& n, const char* what, const std::vector<std::uint8_t>& packet,
                                 std::uint16_t socket, bool gather, std::uint32_t association) {
  const std::size_t room = (std::size_t{1} << n.log2_slot_bytes) - kNET_SLOT_DESC_BYTES;
  if (packet.size() < kNET_MIN_PACKET_BYTES || packet.size() > kNET_MAX_PACKET_BYTES || packet.size() > room) {
    throw Error(Errc::kInvalidArgument, std::string(what) + ": " + num(packet.size()) + " bytes, expected " +
                                            num(kNET_MIN_PACKET_BYTES) + ".." +
                                            num(std::min<std::size_t>(kNET_MAX_PACKET_BYTES, room)));
  }
  if (socket >= kNET_SOCKETS) {
    throw Error(Errc::kInvalidArgument,
                std::string(what) + ": socket " + num(socket) + " out of range 0.." + num(kNET_SOCKETS - 1));
  }
  NetRing& r = n.tx;
  const std::uint32_t slots = 1u << r.log2_slots;
  // The card's consumer index is read (one MMIO read) only when the last one read says the ring is full.
  if (r.index - n.tx_cons >= slots) {
    n.tx_cons = rd(kRegNET_TX_CONS);
    if (r.index - n.tx_cons >= slots) {
      throw Error(Errc::kQueueFull, std::string(what) + ": all " + num(slots) + " transmit slots are the card's");
    }
  }
  const std::size_t off = std::size_t{r.index & (slots - 1)} << n.log2_slot_bytes;
  std::uint8_t* s = r.mem.host + off;
  std::memset(s, 0, kNET_SLOT_DESC_BYTES);
  put(s, kNTXD_LEN_OFFSET, kNTXD_LEN_BITS, static_cast<std::uint32_t>(packet.size()));
  put(s, kNTXD_SOCKET_OFFSET, kNTXD_SOCKET_BITS, socket);
  if (gather) {
    put(s, kNTXD_FLAGS_OFFSET, kNTXD_FLAGS_BITS, kNTXD_FLAGS_GATHER.mask());
    put(s, kNTXD_ASSOC_OFFSET, kNTXD_ASSOC_BITS, association);
  }
  std::memcpy(s + kNET_SLOT_DESC_BYTES, packet.data(), packet.size());
  be_->to_device(r.mem, off, kNET_SLOT_DESC_BYTES + packet.size());
  const std::uint32_t sequence = r.index++;
  wr(kRegNET_TX_PROD, r.index);
  return sequence;
}

NetTxFaults Core::net_tx_faults() {
  net("NetPort::tx_faults");
  NetTxFaults f;
  f.associations = kNET_TX_FAULT_ASSOCS.get(rd(kRegNET_TX_FAULT));
  const std::uint32_t r = rd(kRegNET_TX_FAULT_REASON);
  f.reason = kNET_TX_FAULT_REASON_REASON.get(r);
  f.association = kNET_TX_FAULT_REASON_ASSOC.get(r);
  return f;
}

void Core::net_clear_tx_faults(std::uint32_t associations) {
  net("NetPort::clear_tx_faults");
  const std::uint32_t all = (1u << kNetEntries) - 1;
  if ((associations & ~all) != 0) {
    throw Error(Errc::kInvalidArgument, "NetPort::clear_tx_faults: associations mask " + num(associations) +
                                            " name entries past " + num(kNetEntries - 1));
  }
  wr(kRegNET_TX_FAULT, kNET_TX_FAULT_ASSOCS.put(associations));
}

std::uint32_t Core::net_tx_consumed() {
  NetState& n = net("NetPort::tx_consumed");
  n.tx_cons = rd(kRegNET_TX_CONS);
  return n.tx_cons;
}

std::uint32_t Core::net_tx_pending() {
  const std::uint32_t produced = net("NetPort::tx_pending").tx.index;  // first: its error names this call
  return produced - net_tx_consumed();
}

void Core::net_set_association(std::uint32_t index, const NetAssociation& a) {
  NetState& n = net("NetPort::set_association");
  if (index >= kNetEntries) {
    throw Error(Errc::kInvalidArgument,
                "set_association: index " + num(index) + " out of range 0.." + num(kNetEntries - 1));
  }
  if (a.stream_count == 0 || a.stream_count > 0x10000 ||
      std::uint64_t{a.first_stream} + a.stream_count > info_.streams) {
    throw Error(Errc::kInvalidArgument, "set_association: streams " + num(a.first_stream) + " + " +
                                            num(a.stream_count) + " beyond CAP_STREAMS " + num(info_.streams));
  }
  if (a.socket >= kNET_SOCKETS) {
    throw Error(Errc::kInvalidArgument,
                "set_association: socket " + num(a.socket) + " out of range 0.." + num(kNET_SOCKETS - 1));
  }
  if (!poll_until([&] { return (rd(kRegNET_ASSOC_STATUS) & kNET_ASSOC_STATUS_BUSY.mask()) == 0; }, [] {})) {
    throw Error(Errc::kTimeout, "set_association: the card's last association command never finished");
  }
  const std::uint32_t args[kNET_ASSOC_ARGS] = {
      kNET_ASSOC_ARG0_MY_IP.put(a.my_ip),
      kNET_ASSOC_ARG1_THEIR_IP.put(a.their_ip),
      kNET_ASSOC_ARG2_THEIR_UDP_PORT.put(a.their_udp_port) | kNET_ASSOC_ARG2_MY_UDP_PORT.put(a.my_udp_port),
      kNET_ASSOC_ARG3_THEIR_SCTP_PORT.put(a.their_sctp_port) | kNET_ASSOC_ARG3_MY_SCTP_PORT.put(a.my_sctp_port),
      kNET_ASSOC_ARG4_MY_VTAG.put(a.my_verification_tag),
      kNET_ASSOC_ARG5_STREAM_COUNT.put(a.stream_count) | kNET_ASSOC_ARG5_FIRST_STREAM.put(a.first_stream),
      kNET_ASSOC_ARG6_SOCKET.put(a.socket),
      kNET_ASSOC_ARG7_THEIR_VTAG.put(a.their_verification_tag)};
  for (unsigned i = 0; i < kNET_ASSOC_ARGS; ++i) wr(reg_net_assoc_arg(i), args[i]);
  wr(kRegNET_ASSOC_CMD, kNET_ASSOC_CMD_WRITE.put(1) | kNET_ASSOC_CMD_INDEX.put(index));
  n.associations.insert(index);
}

void Core::net_clear_association(std::uint32_t index) {
  NetState& n = net("NetPort::clear_association");
  if (index >= kNetEntries) {
    throw Error(Errc::kInvalidArgument,
                "clear_association: index " + num(index) + " out of range 0.." + num(kNetEntries - 1));
  }
  const auto idle = [&] { return (rd(kRegNET_ASSOC_STATUS) & kNET_ASSOC_STATUS_BUSY.mask()) == 0; };
  if (!poll_until(idle, [] {})) {
    throw Error(Errc::kTimeout, "clear_association: the card's last association command never finished");
  }
  wr(kRegNET_ASSOC_CMD, kNET_ASSOC_CMD_INDEX.put(index));  // WRITE 0: clear
  // The fence: busy until every packet that reached the card before the clear has left the front end.
  if (!poll_until(idle, [] {})) throw Error(Errc::kTimeout, "clear_association: the fence never finished");
  n.associations.erase(index);
}

void Core::net_set_socket(std::uint32_t index, std::uint32_t ip, std::uint16_t port) {
  net("NetPort::set_socket");
  if (index >= kNET_SOCKETS) {
    throw Error(Errc::kInvalidArgument,
                "set_socket: index " + num(index) + " out of range 0.." + num(kNET_SOCKETS - 1));
  }
  SimPort* sim = be_->sim();
  if (sim == nullptr) {
    throw Error(Errc::kUnsupported,
                "set_socket: on a card the socket table is VNx's network layer (docs/card-flow.md), which this "
                "driver does not program yet");
  }
  sim->net_socket(index, ip, port, true);
}

NetCounters Core::net_counters() {
  net("NetPort::counters");
  return read_net_counters();
}

// Also for an observer and a card without the network side (its window reads as 0).
NetCounters Core::read_net_counters() {
  static_assert(kNET_COUNTERS == 15, "NetCounters (rnic.hpp) has one field per NET_CNT register");
  std::uint32_t v[kNET_COUNTERS];
  for (unsigned i = 0; i < kNET_COUNTERS; ++i) v[i] = rd(reg_net_counter(i));
  return NetCounters{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14]};
}

void Core::set_stream_live(ClientRec& c, StreamId stream, bool live) {
  StreamRec& s = stream_of(c, stream, "set_stream_live");
  net("set_stream_live");
  if (live && s.torn_down) {
    throw Error(Errc::kState, "set_stream_live: stream " + num(stream) + " is torn down");
  }
  wr(kRegNET_STREAM_LIVE, kNET_STREAM_LIVE_LIVE.put(live ? 1u : 0u) | kNET_STREAM_LIVE_STREAM.put(stream));
  s.live = live;
}

}  // namespace rnic::detail

namespace rnic {

// NET_CNT0..14 in hw.def's order (the row's description says what each counts).
std::vector<NetCounters::Row> NetCounters::rows() const {
  return {{"received", "packets received", received},
          {"crc_drops", "dropped: bad CRC32c or shorter than the SCTP common header", crc_drops},
          {"size_drops", "dropped: longer than the largest packet (CAP_NET_MAX_PACKET)", size_drops},
          {"frame_drops", "dropped: broken framing", frame_drops},
          {"copy_drops_ring_full", "host copies dropped: receive ring full or disabled", copy_drops_full},
          {"copy_drops_size", "host copies dropped: longer than the slot", copy_drops_size},
          {"ring_write_errors", "receive ring writes answered with an error", ring_write_errors},
          {"sent", "packets sent", sent},
          {"tx_bad_length", "transmit descriptors skipped (bad length)", tx_bad_length},
          {"tx_read_errors", "transmit ring read beats answered with an error", tx_read_errors},
          {"gather_sent", "gather packets sent", gather_sent},
          {"gather_drops_assoc", "gather packets dropped: association", gather_drops_assoc},
          {"gather_drops_chunk", "gather packets dropped: chunks (framing, descriptor, length)", gather_drops_chunk},
          {"gather_drops_stag", "gather packets dropped: STag checks", gather_drops_stag},
          {"gather_read_errors", "gather packets dropped: payload read errors", gather_read_errors}};
}

NetCounters NetCounters::since(const NetCounters& e) const {
  // Unsigned subtraction is modulo 2^32: right across one wrap of the card's counters.
  return NetCounters{received - e.received,
                     crc_drops - e.crc_drops,
                     size_drops - e.size_drops,
                     frame_drops - e.frame_drops,
                     copy_drops_full - e.copy_drops_full,
                     copy_drops_size - e.copy_drops_size,
                     ring_write_errors - e.ring_write_errors,
                     sent - e.sent,
                     tx_bad_length - e.tx_bad_length,
                     tx_read_errors - e.tx_read_errors,
                     gather_sent - e.gather_sent,
                     gather_drops_assoc - e.gather_drops_assoc,
                     gather_drops_chunk - e.gather_drops_chunk,
                     gather_drops_stag - e.gather_drops_stag,
                     gather_read_errors - e.gather_read_errors};
}

}  // namespace rnic
