// SPDX-License-Identifier: Apache-2.0
// Writes SCTP packets (Ethernet / IPv4 / SCTP with a correct CRC32c) to a pcap file through libpcap,
// so DDP traffic produced by this project can be read by tshark, Wireshark or any pcap tool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rnic/wire/bytes.hpp"

typedef struct pcap pcap_t;
typedef struct pcap_dumper pcap_dumper_t;

namespace rnic::capture {

struct SctpEndpoint {
  std::uint32_t ipv4 = 0;  // host byte order, e.g. 0x7F000001 for 127.0.0.1
  std::uint16_t port = 0;
};

// Builds SCTP packets. Pure functions: no file I/O, usable from tests.
struct SctpPacket {
  // CRC32c over the SCTP packet as RFC 4960 Appendix B stores it (the checksum field zeroed first).
  static std::uint32_t checksum(const std::vector<std::uint8_t>& sctp_packet);
  // Zeroes the checksum field of a packet of at least 12 bytes and stores checksum() there (RFC 9260
  // 6.8: least-significant byte first).
  static void seal(std::vector<std::uint8_t>& sctp_packet);
  // One SCTP common header + chunks, checksum filled in.
  static std::vector<std::uint8_t> build(std::uint16_t src_port, std::uint16_t dst_port, std::uint32_t verification_tag,
                                         const std::vector<std::uint8_t>& chunks);
  // A DATA chunk (RFC 4960 3.3.1) padded to 4 bytes: B and E set (one unfragmented message).
  static std::vector<std::uint8_t> data_chunk(std::uint32_t tsn, std::uint16_t stream_id, std::uint16_t stream_seq,
                                              std::uint32_t ppid, bool unordered, rnic::wire::ConstBytes user_data);
  // An INIT chunk (RFC 4960 3.3.2) carrying the given parameters (already encoded, padded here).
  static std::vector<std::uint8_t> init_chunk(std::uint32_t initiate_tag, std::uint16_t streams,
                                              std::uint32_t initial_tsn, const std::vector<std::uint8_t>& parameters);
  // Ethernet II + IPv4 (protocol 132) around an SCTP packet.
  static std::vector<std::uint8_t> frame(const SctpEndpoint& src, const SctpEndpoint& dst,
                                         const std::vector<std::uint8_t>& sctp_packet);
};

// One direction of an association written to a pcap (LINKTYPE_ETHERNET). Throws std::runtime_error
// with libpcap's message if the file cannot be opened. Timestamps advance 1 us per packet so the
// file is byte-for-byte reproducible.
class SctpCaptureWriter {
 public:
  SctpCaptureWriter(const std::string& path, SctpEndpoint src, SctpEndpoint dst, std::uint32_t verification_tag);
  ~SctpCaptureWriter();
  SctpCaptureWriter(const SctpCaptureWriter&) = delete;
  SctpCaptureWriter& operator=(const SctpCaptureWriter&) = delete;

  // INIT with the DDP Adaptation Layer Indication parameter (RFC 5043 5.1, 11.1).
  void write_init_with_adaptation(std::uint16_t streams, std::uint32_t indication);
  // One unordered (the RFC 5043 default) or ordered DATA chunk in its own packet; TSN advances.
  void write_data(std::uint16_t stream_id, std::uint32_t ppid, rnic::wire::ConstBytes user_data, bool unordered = true);
  std::uint64_t packets_written() const { return packets_; }
  // Flushes and closes the file (the destructor does the same); writing after close() throws.
  void close();

 private:
  void write_packet(const std::vector<std::uint8_t>& chunks);
  pcap_t* pcap_ = nullptr;
  pcap_dumper_t* dumper_ = nullptr;
  SctpEndpoint src_, dst_;
  std::uint32_t vtag_;
  std::uint32_t next_tsn_ = 1;
  std::uint64_t packets_ = 0;
};

}  // namespace rnic::capture
