// SPDX-License-Identifier: Apache-2.0
// What the transmit gather's tests share (tb/net tx_gather_ref_test.cpp against the reference model,
// tb/rtl/net gather_test.cpp against the RTL unit): the card's tables of a test and builders of slot
// packets (docs/transmit.md: descriptor chunks, plain chunks, the common header).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rnic/tb/tx_gather_ref.hpp"
#include "rnic/wire/bytes.hpp"

namespace rnic::tb::net::fixture {

using Bytes = std::vector<std::uint8_t>;

inline constexpr std::uint16_t kMyPort = 5002, kTheirPort = 5001, kSocket = 3;
inline constexpr std::uint32_t kTheirVtag = 0x0BADCAFE;
inline constexpr std::uint64_t kBaseTo = 0x1'0000'0000;
// STag 0x105: index 1, key 5, local read, PD 7. 0x203: PD 8 (another client's). 0x301: PD 7 without
// local read. 0x402: bound to DDP stream 5.
inline constexpr std::uint32_t kStag = 0x105, kForeignStag = 0x203, kNoReadStag = 0x301, kBoundStag = 0x402;

// The association entry the whole-kernel tests (tb/rtl/kernel kernel_netside_test.cpp) and the transmit
// bench (kernel_tx_bench.cpp) program: 10.0.0.1:9899 (SCTP 5002) to 10.0.0.2:40000 (SCTP 5001), one
// DDP stream, socket 7.
inline AssocEntry kernel_entry(std::uint16_t stream) {
  AssocEntry e;
  e.valid = true;
  e.my_ip = 0x0A000001;
  e.their_ip = 0x0A000002;
  e.my_udp_port = 9899;
  e.their_udp_port = 40000;
  e.my_sctp_port = 5002;
  e.their_sctp_port = 5001;
  e.my_vtag = 0x11223344;
  e.stream_base = stream;
  e.stream_count = 1;
  e.vnx_socket = 7;
  e.their_vtag = 0x55667788;
  return e;
}

// Writes entry `index` of the kernel's association table through its registers (NET_ASSOC_ARG0..7, then
// NET_ASSOC_CMD WRITE): wr(register offset, value) is the test's MMIO write.
template <class Write>
void write_kernel_entry(Write&& wr, unsigned index, const AssocEntry& e) {
  const auto arg = [](unsigned i) { return hw::reg_net_assoc_arg(i); };
  wr(arg(0), e.my_ip);
  wr(arg(1), e.their_ip);
  wr(arg(2), (std::uint32_t{e.their_udp_port} << 16) | e.my_udp_port);
  wr(arg(3), (std::uint32_t{e.their_sctp_port} << 16) | e.my_sctp_port);
  wr(arg(4), e.my_vtag);
  wr(arg(5), (std::uint32_t{e.stream_count} << 16) | e.stream_base);
  wr(arg(6), e.vnx_socket);
  wr(arg(7), e.their_vtag);
  wr(hw::kRegNET_ASSOC_CMD, 0x100u | index);
}

// Entry 0 another association; entry 1 ours (socket kSocket): SCTP streams 0..2 are DDP streams 4..6; 4
// and 5 live; every stream PD 7 but stream 0 (PD 8). STags 0x105, 0x402 (the upper half) over
// [region, + size); 0x203, 0x301 over [other, + size).
inline TxTables tables(std::uint64_t region, std::uint64_t size, std::uint64_t other) {
  TxTables t;
  AssocEntry a;
  a.valid = true;
  a.my_sctp_port = kMyPort;
  a.their_sctp_port = 6000;
  a.their_vtag = 0x11111111;
  a.stream_count = 4;
  a.vnx_socket = 1;
  AssocEntry ours = a;
  ours.their_sctp_port = kTheirPort;
  ours.their_vtag = kTheirVtag;
  ours.stream_base = 4;
  ours.stream_count = 3;
  ours.vnx_socket = kSocket;
  t.assoc = {a, ours};
  t.live.assign(8, false);
  t.live[4] = t.live[5] = true;
  t.stream_pd.assign(8, 7);
  t.stream_pd[0] = 8;
  t.stags.resize(5);
  t.stags[1] = TxStag{true, 5, true, 7, false, 0, kBaseTo, size, region};
  t.stags[2] = TxStag{true, 3, true, 8, false, 0, kBaseTo, size, other};
  t.stags[3] = TxStag{true, 1, false, 7, false, 0, kBaseTo, size, other};
  t.stags[4] = TxStag{true, 2, true, 7, true, 5, kBaseTo, size / 2, region + size / 2};
  return t;
}

inline Bytes common_header(std::uint16_t src = kMyPort, std::uint16_t dst = kTheirPort,
                           std::uint32_t vtag = kTheirVtag) {
  Bytes h;
  wire::put_be16(h, src);
  wire::put_be16(h, dst);
  wire::put_be32(h, vtag);
  wire::put_be32(h, 0xDEADBEEF);  // the host's checksum: the card computes it
  return h;
}

// A DATA chunk's first 16 + 2 + H bytes: U, B, E unless told; PPID 16 unless told; a tagged (T, L, DV 1)
// or untagged (L, DV 1) DDP header whose other bytes are a pattern. The length is descriptor_chunk's.
inline Bytes chunk_head(bool tagged, std::uint16_t sctp_stream, std::uint16_t ddp_ssn, std::uint32_t tsn = 1000,
                        std::uint8_t flags = 0x07, std::uint32_t ppid = 16) {
  Bytes c{kChunkTypeData, flags, 0, 0};
  wire::put_be32(c, tsn);
  wire::put_be16(c, sctp_stream);
  wire::put_be16(c, 0);
  wire::put_be32(c, ppid);
  wire::put_be16(c, ddp_ssn);
  const std::size_t h = tagged ? kTaggedDdpHeaderSize : kUntaggedDdpHeaderSize;
  c.push_back(tagged ? 0xC1 : 0x41);
  for (std::size_t i = 1; i < h; ++i) c.push_back(static_cast<std::uint8_t>(0xA0 + i));
  return c;
}

inline Bytes descriptor(bool tagged, std::uint16_t sctp_stream, std::uint32_t stag, std::uint64_t to, std::uint32_t len,
                        std::uint8_t flags = 0x07, std::uint32_t ppid = 16) {
  return descriptor_chunk(chunk_head(tagged, sctp_stream, 1, 1000, flags, ppid), stag, to, len);
}

// A chunk that is not a descriptor: type, flags, `body` bytes after its 4-byte header, padded.
inline Bytes plain_chunk(std::uint8_t type, std::uint8_t flags, std::size_t body) {
  Bytes c{type, flags};
  wire::put_be16(c, static_cast<std::uint16_t>(4 + body));
  for (std::size_t i = 0; i < body; ++i) c.push_back(static_cast<std::uint8_t>(0x30 + i));
  while (c.size() % 4 != 0) c.push_back(0);
  return c;
}

inline Bytes packet(std::initializer_list<Bytes> chunks, Bytes head = common_header()) {
  for (const Bytes& c : chunks) head.insert(head.end(), c.begin(), c.end());
  return head;
}

}  // namespace rnic::tb::net::fixture
