// SPDX-License-Identifier: Apache-2.0
// The rnic host driver: one API for the simulated card (rnic-sim) and a real Alveo card (XRT).
//
// Shape (as libibverbs users know it):
//   Device::open("sim:/path/to.sock") or Device::open("xrt:0", {.xclbin = "rnic.xclbin"})
//   -> Device::create_client(limits) -> Client::alloc_pd -> Client::alloc_buffer (DMA-able)
//   -> Client::register_memory (STag) -> Client::create_stream (bound to a PD) -> configure_queue
//   -> post_recv -> poll / wait -> invalidate (returns after the hardware fence) -> teardown_stream
//   (returns after the hardware fence) -> free / dereg / dealloc.
//
// What every device has (Device, Client) and what only the simulator has are apart: the network
// ingress and the simulated clock (inject, sync, cycles) are SimControl, which Device::sim() returns
// for a "sim:" device and nullptr for a card (Device::require_sim() throws Errc::kUnsupported there).
// A card's ingress is its network port and it runs on its own clock: code written for a card never
// sees inject.
//
// The Device is the privileged resource manager of RFC 5041 8.3.2: it owns the hardware tables, hands
// out STag indices (the card issues the 8-bit keys, so an STag value is never issued twice to two
// owners), stream numbers and receive rings, and checks every request. Clients are
// isolated: a handle of one client is unknown to every other (Errc::kNotFound), a registration must
// lie inside a buffer the client allocated, and per-client limits (Limits) bound what each can take.
//
// Errors: every failing call throws rnic::Error with a specific Errc and a message naming the bad
// argument. Nothing is half-done when a call throws. Objects are plain handles (ids); using a freed
// one is kNotFound, never undefined behaviour.
//
// Threads: a Device and its Clients may be used from several threads; calls are serialized inside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rnic/hw/hw.hpp"

namespace rnic {

enum class Errc {
  kInvalidArgument,  // zero or overflowing length, bad alignment, bad flags, out-of-range number
  kNotFound,         // unknown, freed or another client's handle (double free, use after free)
  kBusy,             // the resource is in use (PD with live STags/streams, buffer still registered)
  kQuota,            // a per-client or per-PD limit is reached
  kExhausted,        // the hardware table or host memory is full
  kState,            // wrong state for the call (post to a torn-down stream, enable twice, ...)
  kQueueFull,        // receive queue has no free slot
  kTimeout,          // a wait ran out
  kNoDevice,         // the device string names nothing usable (no socket, no card, bad xclbin)
  kMismatch,         // the bitstream's ID/version does not match this driver
  kUnsupported,      // not available on this backend (e.g. inject on a real card)
  kBackend,          // the transport failed (simulator gone, XRT error)
};
const char* errc_name(Errc e);

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& what) : std::runtime_error(what), code_(code) {}
  Errc code() const { return code_; }

 private:
  Errc code_;
};

// Values read from the ID/version/capability registers at open.
struct DeviceInfo {
  std::string device;   // the device string it was opened with
  std::string backend;  // "sim" or "xrt"
  std::uint32_t id = 0, version = 0, build_id = 0;
  std::uint32_t data_width = 0, stags = 0, streams = 0, qns = 0, ssn_window = 0;
  // The longest DDP segment the card takes, header included (RFC 5041 4.2/4.3 headers: 14 bytes
  // tagged, 18 untagged): CAP_MAX_SEG_BYTES. A longer segment fails Local Catastrophic (RFC 5041 7.2,
  // type 0 code 0) and nothing of it is placed. A ULP sizes its MULPDU (RFC 5043 9) from it.
  std::uint32_t max_segment_bytes = 0;
  // The network side (docs/network.md): association table entries (CAP_NET_ASSOCS, kNetEntries) and the
  // longest SCTP packet it takes or sends (CAP_NET_MAX_PACKET); both 0 when the card has none (NET = 0).
  std::uint32_t net_assocs = 0, net_max_packet = 0;
};

struct OpenOptions {
  std::string xclbin;                  // xrt: the xclbin to load (default: $RNIC_XCLBIN)
  std::uint32_t cq_log2_entries = 12;  // hardware completion ring size
  // Observer: read registers, counters and the owner's published tables; inject (simulator). No
  // clients, no table writes. rnicctl opens this way so it can look at a card a driver owns.
  bool observer = false;
  // sim: how long one request waits for rnic-sim (connect, send, reply) before Errc::kTimeout naming
  // the request: a stopped (SIGSTOP) or hung simulator is an error, never a hang. SimControl::sync
  // waits longer as long as the simulated clock advances (see there). 0 means the default, 10 s.
  std::uint32_t sim_timeout_ms = 10'000;
  // xrt: when the card is rnic-sim run by XRT's hardware emulation (rnic-sim --xrt), the simulator's
  // socket: its wire (Device::sim(): inject, sync, cycles, the network port's sockets) is reached
  // through it, the card itself through XRT. Default $RNIC_SIM_WIRE; empty: a card, no sim().
  std::string sim_wire;
};

// Per-client limits (RFC 5041 8.3.2). Zero means "the device default" shown here.
struct Limits {
  std::uint32_t max_pds = 16;
  std::uint32_t max_stags = 1024;  // registrations, over all the client's PDs
  std::uint32_t max_stags_per_pd = 512;
  std::uint32_t max_streams = 64;
  std::uint32_t max_posted = 4096;               // receive buffers posted and not yet completed
  std::uint64_t max_buffer_bytes = 64ull << 20;  // DMA-able memory allocated
};

using PdId = std::uint32_t;
using StreamId = std::uint32_t;  // hardware stream number
using Stag = std::uint32_t;      // 24-bit index << 8 | 8-bit key (RFC 5041 4.2 STag)

enum Access : std::uint32_t {
  kRemoteWrite = 1u << 0,
  kRemoteRead = 1u << 1,  // accepted and stored; the card serves no RDMA Read
  kLocalRead = 1u << 2,   // the card may read the range to send it (docs/transmit.md: the gather's
                          // descriptors name only STags with it; set by the owner, RFC 5041 8.3.2)
};

struct Buffer {
  std::uint64_t id = 0;
  std::uint8_t* data = nullptr;  // host mapping
  std::size_t size = 0;
  std::uint64_t device_addr = 0;  // what the card's DMA uses
};

struct Registration {
  Stag stag = 0;
  std::uint64_t base_to = 0;  // tagged offset of the first byte (RFC 5041 4.4: TO)
  std::uint64_t length = 0;
};

struct RegisterRequest {
  PdId pd = 0;
  std::uint64_t buffer = 0;  // Buffer::id
  std::uint64_t offset = 0;  // into the buffer
  std::uint64_t length = 0;  // > 0, offset + length <= buffer size
  std::uint32_t access = kRemoteWrite;
  std::uint64_t base_to = 0;            // TO of the first byte
  std::optional<StreamId> bind_stream;  // RFC 5041 8.2: only this stream may use the STag
};

enum class Teardown { kGraceful, kAbortive };  // RFC 5041 6.2

// What the card completed on one of the client's streams, in DDP-SSN order per stream (RFC 5041 5.4).
// How the driver matches a card entry to its client, per kind:
// - kTagged: delivered to the stream's owner whatever STag it names. RFC 5041 5.2 forbids checking the
//   STag and TO of a zero-length tagged message (the card places nothing and delivers it; the STag may be
//   one the client never registered); every other tagged message passed the STag checks of 7.1 before
//   the card placed a byte. `length` is 0: the card does not count a tagged message's bytes.
// - kUntagged: the oldest buffer posted on (stream, QN), which must carry the entry's MSN (the card
//   completes buffers strictly in MSN order); `length` is the message's.
// - kError: the stream's, always; the stream is in the error state afterwards.
// - kFlushed: made by the driver for a posted buffer a teardown gave back.
// An entry naming no stream the driver holds, an unknown QN, or an MSN that is not its queue's head is
// given to nobody and counted (StreamState::unmatched_completions, Counters).
struct Completion {
  enum class Kind { kTagged, kUntagged, kError, kFlushed };
  Kind kind = Kind::kUntagged;
  StreamId stream = 0;
  std::uint16_t ssn = 0;  // DDP-SSN of the last segment (or of the failing one)
  // Tagged delivery
  Stag stag = 0;
  // Untagged delivery / flushed receive buffer / order error (qn and msn of the failing segment)
  std::uint32_t qn = 0, msn = 0, length = 0;
  std::uint64_t buffer = 0;    // Buffer::id of the receive buffer
  std::uint64_t offset = 0;    // where in it
  std::uint64_t cookie = 0;    // what post_recv was given
  std::uint64_t rsvd_ulp = 0;  // RFC 5041 4.2/4.3 Reserved for ULP
  // Error (RFC 5041 7.2)
  std::uint8_t err_type = 0, err_code = 0;
  // Order error: found in DDP-SSN order at delivery (RFC 5041 4.3, 5.3: the segment does not carry
  // the MSN its queue expects next). qn and msn name the segment's; header is empty; nothing of the
  // message is delivered and no buffer is consumed. The stream is in the error state afterwards.
  bool order = false;
  std::vector<std::uint8_t> header;  // the DDP header as received (empty for an order error)
};

// A stream as its owner sees it (Client::stream_state). RFC 5041 7.1: after an error the stream is
// in the error state and the card drops its later segments; the driver records the first error.
struct StreamError {
  std::uint8_t err_type = 0, err_code = 0;  // RFC 5041 7.2
  bool order = false;                       // an order error (Completion::order)
  std::uint16_t ssn = 0;
  std::uint32_t qn = 0, msn = 0;  // order error: the failing segment's
};
struct StreamState {
  enum class State { kNormal, kError, kTornDown };
  State state = State::kNormal;  // kTornDown wins over kError; first_error stays set
  std::optional<StreamError> first_error;
  std::uint64_t errors = 0;  // error completions seen on the stream
  // Completions the card wrote for this stream that name no buffer the driver holds for it (an MSN that
  // is not the head of its queue's posted buffers, an unknown QN; never a tagged one, see Completion).
  // They are never given to the client as deliveries; a nonzero count means the card and the driver
  // disagree.
  std::uint64_t unmatched_completions = 0;
};
const char* stream_state_name(StreamState::State s);  // "normal", "error", "torn_down"

const char* completion_kind_name(Completion::Kind k);  // "tagged", "untagged", "error", "flushed"

// The card's network counters (hw.def NET_CNT0..9; 32 bits, wrapping).
struct NetCounters {
  std::uint32_t received = 0, crc_drops = 0, size_drops = 0, frame_drops = 0;
  std::uint32_t copy_drops_full = 0, copy_drops_size = 0, ring_write_errors = 0;
  std::uint32_t sent = 0, tx_bad_length = 0, tx_read_errors = 0;
  // the transmit gather (docs/transmit.md): packets sent, and dropped whole by class
  std::uint32_t gather_sent = 0, gather_drops_assoc = 0, gather_drops_chunk = 0, gather_drops_stag = 0;
  std::uint32_t gather_read_errors = 0;

  // Every counter in NET_CNT order: its key (the name reports and rnicctl's JSON use), what it counts
  // and its value.
  struct Row {
    const char* key;
    const char* meaning;
    std::uint32_t value;
  };
  std::vector<Row> rows() const;
  // What the card counted since `earlier` (a reading of the same card): each counter's difference
  // modulo 2^32, right across one wrap.
  NetCounters since(const NetCounters& earlier) const;
};

// rnic-sim's UDP network port (rnic-sim --udp-port): its port (0: none) and the datagrams it handed to
// the card, sent for it, dropped (ingress queue full, a socket not set) and received empty (no packet:
// the card never sees them).
struct SimNetPortStats {
  std::uint16_t udp_port = 0;
  std::uint64_t in = 0, out = 0, dropped = 0, empty = 0;
};

struct Counters {
  std::uint64_t segments = 0, bytes = 0, messages = 0, drops = 0, access = 0, duplicates = 0;
  std::uint64_t write_errors = 0, read_errors = 0;
  std::vector<std::uint64_t> errors;  // one per row of ddp_errors.def, in that order
  NetCounters net;                    // the network side's (all 0 on a card built without one)
  // The driver's, not the card's: completions the owner could not match to a live stream, queue head
  // or STag (counted, never dropped silently). An observer reads it from the owner's published state
  // (nullopt when no owner published one).
  std::optional<std::uint64_t> unmatched_completions;
};

// What the driver did to the card (for the registration/invalidate benchmark and rnicctl).
struct DriverStats {
  std::uint64_t mmio_reads = 0, mmio_writes = 0, commands = 0;
};

class Client;
class DeviceImpl;
class SimControl;
class NetPort;

// The card's network side (docs/network.md): the receive and transmit packet rings in host memory.
struct NetOptions {
  std::uint32_t rx_log2_slots = 8;     // 256 slots (the card keeps about 10 in flight): 0..15
  std::uint32_t tx_log2_slots = 6;     // 0..15
  std::uint32_t log2_slot_bytes = 14;  // 16 KiB: the longest packet (CAP_NET_MAX_PACKET) and its descriptor fit; 12..16
};

// One packet of the receive ring: what the card copied for the host (trimmed: each DATA chunk the card
// took is cut to its header, DDP-SSN and DDP header) and its descriptor (hw.def NRXD_*).
struct NetRxPacket {
  std::vector<std::uint8_t> bytes;
  std::uint32_t wire_length = 0;                         // the packet as it arrived
  std::optional<std::uint8_t> association;               // the association table entry it matched; nullopt: none
  bool malformed = false;                                // the chunk walk found a bad length: the rest is whole
  std::uint8_t taken = 0, duplicates = 0, declined = 0;  // DDP segment chunks by their fate
  std::uint32_t source_ip = 0;                           // the sender's IPv4 address, host byte order
  std::uint16_t source_port = 0;                         // and UDP port: where an answer goes
};

// Entries of the card's association table (hw.def NET_ASSOC_ENTRIES; a card with a network side
// reports it in CAP_NET_ASSOCS). The network layer's sockets are hw::kNET_SOCKETS (VNx's table).
inline constexpr std::uint32_t kNetEntries = hw::kNET_ASSOC_ENTRIES;

// One entry of the card's association table (hw.def NET_ASSOC_ARG0..6): packets whose addresses,
// ports and verification tag match have their PPID 16 chunks on live streams offloaded (RFC 5043).
struct NetAssociation {
  std::uint32_t my_ip = 0, their_ip = 0;  // IPv4, host byte order
  std::uint16_t my_udp_port = 0, their_udp_port = 0;
  std::uint16_t my_sctp_port = 0, their_sctp_port = 0;
  std::uint32_t my_verification_tag = 0;     // the tag packets to us carry
  std::uint32_t their_verification_tag = 0;  // the tag our packets carry (the card's gather checks it)
  StreamId first_stream = 0;                 // SCTP stream s of the association is DDP stream first_stream + s
  std::uint32_t stream_count = 0;            // 1..65536, first_stream + stream_count <= CAP_STREAMS
  std::uint16_t socket = 0;                  // the network layer's socket towards the peer (VNx), 0..15
};

// NET_TX_FAULT and NET_TX_FAULT_REASON (docs/transmit.md).
struct NetTxFaults {
  std::uint32_t associations = 0;  // bit i: a gather packet of association i was dropped
  std::uint32_t reason = 0;        // the first drop's hw::kNET_TX_DROP_* (0: none)
  std::uint32_t association = 0;   // the first drop's association
};

class Device {
 public:
  // device: "sim:<socket path>" or "xrt:<index>"; empty means $RNIC_DEVICE, then "sim:rnic-sim.sock".
  static std::unique_ptr<Device> open(const std::string& device = "", const OpenOptions& opts = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const;
  std::unique_ptr<Client> create_client(const Limits& limits = {});

  std::uint32_t read_reg(std::uint32_t offset);  // any register in the map (rnicctl)
  Counters counters();
  // The simulator's own controls (ingress, clock); nullptr on a card. Lives as long as the Device.
  SimControl* sim();
  // The same, or Errc::kUnsupported naming the device when it is a card (for programs that only make
  // sense on the simulator, e.g. a traffic generator).
  SimControl& require_sim();
  // The owning driver's tables (PDs, STags, streams, queues, buffers, per client) as JSON. The owner
  // republishes after every change, completions it has read included (a consumed receive buffer
  // is shown consumed): at once from SimControl::sync and from this call (the owner's own view),
  // otherwise from its next driver call, at most one document per 20 ms. Empty when no owner
  // published.
  std::string published_state();
  DriverStats stats() const;

  // The network side (owner only): allocates and enables both packet rings; the port lives as long as
  // the Device. kUnsupported when the card has no network side (a kernel built with NET = 0, or
  // rnic-sim without --udp-port), kState when already open or opened as observer.
  NetPort& open_net(const NetOptions& opts = {});
  // The open network side, or nullptr.
  NetPort* net();

  explicit Device(std::unique_ptr<DeviceImpl> impl);
  DeviceImpl& impl() { return *impl_; }

 private:
  std::unique_ptr<DeviceImpl> impl_;
};

// Simulator only (Device::sim()): what a card's network port and clock do by themselves. An observer
// may use it too (inject, sync, cycles; its sync reads no completion ring).
class SimControl {
 public:
  // Network ingress: one DDP segment as the LLP delivers it (RFC 5043: SCTP stream = DDP stream, and
  // the DDP-SSN). Queued at the simulator's ingress; retried while that queue is full.
  void inject(StreamId stream, std::uint16_t ssn, const std::vector<std::uint8_t>& segment);
  // Waits until every segment injected so far was processed and the card is quiet, then reads the
  // completion ring (the completions wait for their clients' poll/wait) and republishes the owner's
  // tables. A big injection may legitimately take long: sync waits as long as the simulated clock
  // advances (checked every OpenOptions::sim_timeout_ms on a second connection) and gives up with
  // Errc::kTimeout once an interval passes with neither a reply nor progress (a stopped simulator:
  // about 2x sim_timeout_ms), or when the simulator reports its own cycle limit (10 M cycles).
  void sync();
  std::uint64_t cycles();            // simulated clock cycles since the simulator started
  SimNetPortStats net_port_stats();  // its UDP network port (rnic-sim --udp-port)

  explicit SimControl(std::shared_ptr<void> core);
  SimControl(const SimControl&) = delete;
  SimControl& operator=(const SimControl&) = delete;

 private:
  std::shared_ptr<void> core_;
};

// The network side of an owned device (Device::open_net). The host's SCTP stack (usrsctp) runs on its
// rings; the association table and the live streams are what it decided (docs/network.md).
class NetPort {
 public:
  // Packets the card put in the receive ring since the last call, in order (at most max; `out` is
  // replaced by them); the slots go back to the card.
  std::size_t receive(std::vector<NetRxPacket>& out, std::size_t max = 64);
  // One SCTP packet into the transmit ring; the card fills in the CRC32c (bytes 8..11) and sends it
  // through `socket`. kInvalidArgument: length outside hw::kNET_MIN_PACKET_BYTES..kNET_MAX_PACKET_BYTES or
  // longer than a slot holds, socket not below hw::kNET_SOCKETS; kQueueFull: every slot is still the card's.
  // Returns the slot's sequence number in the ring (the count of packets sent before it, mod 2^32): the
  // card has read the slot once tx_consumed() is past it.
  std::uint32_t send(const std::vector<std::uint8_t>& sctp_packet, std::uint16_t socket);
  // One gather packet into the transmit ring (docs/transmit.md): a packet in its transmit-slot form
  // (wire::rewrite_for_gather) whose descriptor chunks the card checks against association entry
  // `association` and expands from registered memory (STags with kLocalRead) before it leaves through
  // `socket`. The card drops a packet with any bad descriptor whole and reports it in tx_faults().
  // Errors as send(), and kInvalidArgument for an association index out of range, kState for an entry
  // not written.
  std::uint32_t send_gather(const std::vector<std::uint8_t>& slot_packet, std::uint16_t socket,
                            std::uint32_t association);
  // Gather packets the card dropped (NET_TX_FAULT): the associations with a drop since their bit was
  // last cleared, and the first drop's reason (hw::kNET_TX_DROP_*) and association.
  NetTxFaults tx_faults();
  // Clears the bits of `associations` (NET_TX_FAULT is write-1-to-clear).
  void clear_tx_faults(std::uint32_t associations);
  // Packets sent that the card has not read from the transmit ring yet (one MMIO read). A packet's
  // socket is looked up as it leaves: a socket pointed elsewhere while any is pending misdirects it.
  std::uint32_t tx_pending();
  // The card's consumer index (NET_TX_CONS, one MMIO read): the slots of sequence numbers s with
  // (std::int32_t)(tx_consumed() - s) > 0 are read.
  std::uint32_t tx_consumed();
  // Writes entry `index` (0..15) of the association table. kInvalidArgument: bad index or stream range.
  void set_association(std::uint32_t index, const NetAssociation& a);
  // Clears entry `index`, fenced: returns once every packet that reached the card before is past the
  // front end (nothing more is offloaded for it). kTimeout if the card never finishes.
  void clear_association(std::uint32_t index);
  // The network layer's socket `index` (0..15) towards ip:port (host byte order): on the simulator its
  // socket table (NETSOCKET); on a card VNx's, which this driver does not program yet (kUnsupported).
  void set_socket(std::uint32_t index, std::uint32_t ip, std::uint16_t port);
  NetCounters counters();

  explicit NetPort(std::shared_ptr<void> core);
  NetPort(const NetPort&) = delete;
  NetPort& operator=(const NetPort&) = delete;

 private:
  std::shared_ptr<void> core_;
};

class Client {
 public:
  ~Client();  // frees everything the client still holds (streams torn down abortively)
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  PdId alloc_pd();
  void dealloc_pd(PdId pd);  // kBusy while STags or streams use it

  Buffer alloc_buffer(std::size_t bytes);  // zeroed, 64-byte aligned, DMA-able
  void free_buffer(std::uint64_t buffer);  // kBusy while registered or posted
  // Makes the host's writes to bytes [offset, offset + bytes) of a buffer visible to the card. On a
  // card whose buffers live in card memory (an XRT DDR/HBM bank) this copies them to the card, and is
  // needed: the driver copies the card's writes back over a tagged completion's whole registration,
  // so bytes the host wrote there and never flushed are overwritten. Elsewhere (simulator, host memory
  // bank) the memory is shared and this is a fence. kInvalidArgument outside the buffer.
  void flush_buffer(std::uint64_t buffer, std::size_t offset, std::size_t bytes);

  Registration register_memory(const RegisterRequest& req);
  // Fenced (RFC 5041 8.3.1 #6): returns once no placement to the STag is in flight and none can start.
  void invalidate(Stag stag);  // also deregisters; kBusy while sends hold it (hold_local_read)
  // The transmit path's bookkeeping (rnic::sctp::CardEndpoint::post_send, docs/transmit.md): a send that
  // the card is to read [to, to + length) through `stag` for, on a stream of `pd`, holds the STag until
  // it is complete, so that it cannot be invalidated (nor its buffer freed) while a retransmission may
  // still read it. kNotFound: not this client's STag; kInvalidArgument: no kLocalRead, another PD, or the
  // range outside the registration. release_local_read gives one hold back (kState if it has none).
  void hold_local_read(Stag stag, PdId pd, std::uint64_t to, std::uint64_t length);
  void release_local_read(Stag stag);

  StreamId create_stream(PdId pd);  // enabled: DDP-SSN 0, state normal
  // Untagged receive queue QN of a stream: a ring of 2^log2_entries descriptors. The first buffer
  // posted gets MSN first_msn, each next one MSN + 1, wrapping from 0xFFFFFFFF to 0 (RFC 5041 4.3:
  // MSNs start at 1 and are 32-bit, so a long-lived queue wraps; a first MSN near 2^32 makes that
  // testable). The card expects the same MSN first (QUEUE_CONFIG ARG5). first_msn 0 is
  // kInvalidArgument: QUEUE_CONFIG reads 0 as 1, so MSN 0 is reached only by wrapping.
  void configure_queue(StreamId stream, std::uint32_t qn, std::uint32_t log2_entries, std::uint32_t first_msn = 1);
  void post_recv(StreamId stream, std::uint32_t qn, std::uint64_t buffer, std::uint64_t offset, std::uint32_t length,
                 std::uint64_t cookie = 0);
  // Fenced (RFC 5041 8.3.1 #6): returns once no write for an earlier segment can follow; completions
  // written before it are returned by poll first, then every buffer still posted as kFlushed.
  void teardown_stream(StreamId stream, Teardown how);
  void destroy_stream(StreamId stream);  // after teardown
  // The stream's state: normal, error (with the first error) or torn down; see StreamState.
  StreamState stream_state(StreamId stream);
  // RFC 5043 over the card's network side (Device::open_net first, else kState): while a stream is
  // live, PPID 16 chunks of it become DDP segments for the card; otherwise they go to the host whole.
  // kState for a torn-down stream; teardown_stream clears it first.
  void set_stream_live(StreamId stream, bool live);

  // Completions of this client's streams, in the order the card wrote them; `out` is replaced by
  // them (at most max) and their number returned.
  std::size_t poll(std::vector<Completion>& out, std::size_t max = 64);
  // Waits for at least one completion (or the timeout); returns what poll would.
  std::size_t wait(std::vector<Completion>& out, std::uint32_t timeout_ms, std::size_t max = 64);

  explicit Client(std::shared_ptr<void> state);

 private:
  std::shared_ptr<void> state_;
};

}  // namespace rnic
