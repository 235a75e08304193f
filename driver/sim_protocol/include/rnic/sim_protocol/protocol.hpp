// SPDX-License-Identifier: Apache-2.0
// The rnic-sim message protocol: how a host program (the driver's sim backend, rnicctl, a traffic
// source) talks to the simulated card. This header is the protocol's one definition; sim/README.md
// explains it in prose.
//
// Transport: a UNIX-domain SOCK_SEQPACKET socket (one message per datagram, boundaries kept). Every
// request gets exactly one reply, in order; a zero-byte datagram too (kBadLength: shorter than the
// header; on SOCK_SEQPACKET it reads like a hang-up, which the simulator tells apart with poll()).
// The driver bounds every wait for a reply (OpenOptions::sim_timeout_ms) and discards the late
// reply of a request that timed out by its seq. A message is a Header followed by `length` payload bytes;
// all integers are little-endian (the host's order on x86-64 and arm64; checked at compile time).
//
// Host memory: the simulator owns a memfd of `mem_bytes`; the HELLO reply carries its descriptor
// (SCM_RIGHTS) and the device address of its first byte (`mem_base`). A client mmaps it MAP_SHARED:
// the kernel's AXI master reads and writes exactly these bytes, as a card's DMA would. AXI accesses
// outside [mem_base, mem_base + mem_bytes) are answered SLVERR (counted by CNT_WRITE_ERRORS /
// CNT_READ_ERRORS) and touch nothing.
//
// Roles: the first client to say HELLO with kRoleOwner owns the card (MMIO writes, ALLOC/FREE,
// PUBLISH). Any number of observers may read registers, inject segments and read the published state.
// When the owner disconnects (cleanly or not), the simulator invalidates every STag and tears down
// every stream the owner programmed, then frees its memory, so nothing it left behind can be written.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "rnic/hw/hw.hpp"

namespace rnic::sim_protocol {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the protocol is little-endian on the wire");

inline constexpr std::uint32_t kMagic = 0x31534E52;      // "RNS1"
inline constexpr std::uint16_t kVersion = 2;             // 2: the network port (kNetSocket, StatusRep net_*)
inline constexpr std::uint32_t kMaxPayload = 64 * 1024;  // a longer message is refused (kBadLength)

enum class Op : std::uint16_t {
  // c->s HelloReq; s->c HelloRep (+ memfd via SCM_RIGHTS). Must be the first message.
  kHello = 1,
  // c->s MmioReq {offset}; s->c MmioRep {value}. Offsets outside the register map: kBadAddress.
  kRead32 = 2,
  // c->s MmioReq {offset, value}; s->c empty. Owner only.
  kWrite32 = 3,
  // c->s AllocReq; s->c AllocRep. Owner only. Memory is zeroed.
  kAlloc = 4,
  // c->s FreeReq; s->c empty. Owner only; only what this client allocated.
  kFree = 5,
  // c->s InjectReq + the segment's bytes (one DDP segment = one AXI-Stream packet); s->c empty.
  // Queued at the ingress; kBusy when the ingress queue is full (retry later).
  kInject = 6,
  // c->s SyncReq; s->c SyncRep: returns once every segment injected so far entered the kernel and
  // the kernel has been quiet (no AXI traffic) for `quiet_cycles`, or after `max_cycles` (kTimeout).
  // Meanwhile other connections are served: the driver watches STATUS cycles on a second
  // connection to tell a long SYNC from a stopped simulator.
  kSync = 7,
  // c->s empty; s->c StatusRep.
  kStatus = 8,
  // c->s a UTF-8 JSON document (the driver's resource tables, for rnicctl), or nothing: the document is
  // withdrawn (the driver's close); s->c empty. Owner only. kBadArgument for text that is not JSON.
  kPublish = 9,
  // c->s empty; s->c the last published document (empty when none).
  kGetState = 10,
  // c->s NetSocketReq; s->c empty. Owner only. One entry of the socket table of the simulated network
  // layer (VNx's UDP socket table, docs/card-flow.md): a packet the card sends with tdest = index goes
  // to ip:port from the simulator's UDP port. kNoNetwork when the simulator has no network port;
  // kBadArgument for an index >= hw::kNET_SOCKETS (VNx's socket table).
  kNetSocket = 11,
};
inline constexpr Op kLastOp = Op::kNetSocket;

enum class Status : std::uint16_t {
  kOk = 0,
  kBadMagic = 1,      // header magic wrong: the simulator closes the connection after replying
  kBadOp = 2,         // unknown op
  kBadLength = 3,     // payload length wrong for the op, or over kMaxPayload
  kBadAddress = 4,    // MMIO offset outside the register map or not 4-byte aligned
  kNotOwner = 5,      // the op needs the owner role
  kOwned = 6,         // HELLO as owner while another client owns the card
  kNoMemory = 7,      // ALLOC cannot be satisfied
  kNotAllocated = 8,  // FREE of an address this client did not allocate
  kBusy = 9,          // ingress queue full
  kTimeout = 10,      // SYNC reached max_cycles
  kBadVersion = 11,   // HELLO with another protocol version
  kNoHello = 12,      // first message was not HELLO
  kBadArgument = 13,
  kNoNetwork = 14,  // kNetSocket on a simulator without a network port (--udp-port)  // any other malformed field
                    // (zero-size ALLOC, bad alignment, stream out of range)
};

const char* status_name(Status s);  // defined inline below

struct Header {
  std::uint32_t magic;
  std::uint16_t op;      // Op
  std::uint16_t status;  // Status in replies; 0 in requests
  std::uint32_t seq;     // echoed in the reply
  std::uint32_t length;  // payload bytes after the header
};
static_assert(sizeof(Header) == 16);

inline constexpr std::uint32_t kRoleObserver = 0;
inline constexpr std::uint32_t kRoleOwner = 1;

struct HelloReq {
  std::uint16_t version;  // kVersion
  std::uint16_t reserved;
  std::uint32_t role;  // kRoleOwner / kRoleObserver
  std::uint32_t pid;   // for messages ("owned by pid N")
  std::uint32_t reserved2;
};
struct HelloRep {
  std::uint16_t version;
  std::uint16_t reserved;
  std::uint32_t owner_pid;  // pid of the current owner (0: none)
  std::uint64_t mem_base;   // device address of byte 0 of the memfd
  std::uint64_t mem_bytes;  // size of the memfd
  std::uint64_t cycles;     // simulated cycles so far
};
struct MmioReq {
  std::uint32_t offset;
  std::uint32_t value;  // kWrite32 only (ignored for kRead32)
};
struct MmioRep {
  std::uint32_t value;
  std::uint32_t reserved;
};
struct AllocReq {
  std::uint64_t bytes;  // > 0
  std::uint64_t align;  // power of two, >= 64; 0 means 4096
};
struct AllocRep {
  std::uint64_t device_addr;  // mem_base + offset into the memfd
};
struct FreeReq {
  std::uint64_t device_addr;
};
struct InjectReq {
  std::uint16_t stream;  // tuser stream field (< CAP_STREAMS)
  std::uint16_t ssn;     // the LLP's 16-bit DDP-SSN (RFC 5043)
  std::uint32_t bytes;   // segment bytes following this struct (1..MAX_SEG_BYTES+header)
};
struct SyncReq {
  std::uint64_t quiet_cycles;  // 0 means 64
  std::uint64_t max_cycles;    // 0 means 10,000,000
};
struct SyncRep {
  std::uint64_t cycles;  // simulated cycles so far
};
struct StatusRep {
  std::uint64_t cycles;          // simulated cycles so far
  std::uint64_t injected;        // segments injected since start
  std::uint64_t ingress_queued;  // segments waiting at the ingress
  std::uint64_t mem_base;
  std::uint64_t mem_bytes;
  std::uint64_t mem_used;    // bytes allocated
  std::uint32_t owner_pid;   // 0: none
  std::uint32_t clients;     // connected clients
  std::uint64_t axi_errors;  // AXI accesses outside the memory region (answered SLVERR)
  // The network port (all 0 without one): its UDP port on 127.0.0.1, datagrams received and handed
  // to the card (after the path's loss and duplication), packets the card sent, datagrams dropped
  // (ingress queue full, or the card sent to a socket that is not set), and empty datagrams (no SCTP
  // packet: nothing reaches the card, so only the simulator counts them).
  std::uint32_t udp_port;
  std::uint32_t reserved;
  std::uint64_t net_in;
  std::uint64_t net_out;
  std::uint64_t net_dropped;
  std::uint64_t net_empty;
};
struct NetSocketReq {
  std::uint32_t index;  // < hw::kNET_SOCKETS
  std::uint32_t ip;     // IPv4, host byte order
  std::uint16_t port;   // UDP, host byte order
  std::uint16_t valid;  // 0 clears the entry
};

static_assert(std::is_trivially_copyable_v<StatusRep>);

inline const char* status_name(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kBadMagic:
      return "bad magic";
    case Status::kBadOp:
      return "unknown operation";
    case Status::kBadLength:
      return "bad message length";
    case Status::kBadAddress:
      return "address outside the register map";
    case Status::kNotOwner:
      return "operation needs the owner role";
    case Status::kOwned:
      return "the card is owned by another client";
    case Status::kNoMemory:
      return "out of simulated host memory";
    case Status::kNotAllocated:
      return "address was not allocated by this client";
    case Status::kBusy:
      return "ingress queue full";
    case Status::kTimeout:
      return "timed out";
    case Status::kBadVersion:
      return "protocol version mismatch";
    case Status::kNoHello:
      return "first message must be HELLO";
    case Status::kNoNetwork:
      return "no network port";
    case Status::kBadArgument:
      return "bad argument";
  }
  return "unknown status";
}

// Sends one message, header and payload, with `pass_fd` attached (SCM_RIGHTS) when >= 0. Never blocks
// (MSG_DONTWAIT) and never raises SIGPIPE; returns sendmsg's result (errno set on failure). Both sides send
// with it: the simulator its replies, the driver its requests.
inline ssize_t send_message(int fd, const Header& h, const void* payload, std::size_t n, int pass_fd = -1) {
  Header copy = h;
  iovec iov[2] = {{&copy, sizeof copy}, {const_cast<void*>(payload), n}};
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = n > 0 ? 2 : 1;
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  if (pass_fd >= 0) {
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    cmsghdr* cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
  }
  return ::sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace rnic::sim_protocol
