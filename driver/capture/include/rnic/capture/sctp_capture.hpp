// SPDX-License-Identifier: Apache-2.0
// Writes SCTP packets (Ethernet / IPv4 / SCTP with a correct CRC32c) to a pcap file through libpcap,
// so DDP traffic produced by this project can be read by tshark, Wireshark or any pcap tool.
#pragma once

#include <cstdint>
#include <ctime>
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
  // Ethernet II + IPv4 (protocol 17) + UDP (checksum 0: none, RFC 768) around a datagram's payload:
  // SCTP over UDP (RFC 6951) as it went on the wire. Payloads over 65507 bytes are truncated.
  static std::vector<std::uint8_t> udp_frame(const SctpEndpoint& src, const SctpEndpoint& dst,
                                             wire::ConstBytes payload);
};

// A pcap file of Ethernet frames (LINKTYPE_ETHERNET). Throws std::runtime_error with libpcap's message
// if the file cannot be opened, std::logic_error on a write after close().
class PcapFile {
 public:
  explicit PcapFile(const std::string& path);
  ~PcapFile();
  PcapFile(const PcapFile&) = delete;
  PcapFile& operator=(const PcapFile&) = delete;
  // One frame at the given time (seconds, microseconds since the epoch).
  void write(const std::vector<std::uint8_t>& frame, std::int64_t sec, std::int64_t usec);
  std::uint64_t packets_written() const { return packets_; }
  void close();  // flushes and closes (the destructor does the same)

 private:
  pcap_t* pcap_ = nullptr;
  pcap_dumper_t* dumper_ = nullptr;
  std::uint64_t packets_ = 0;
};

// Datagrams of SCTP over UDP (RFC 6951) as a process sent and received them, at wall-clock time:
// tshark decodes UDP port 9899 as SCTP (and DDP through tb/interop/ddp_sctp.lua).
class UdpCaptureWriter {
 public:
  explicit UdpCaptureWriter(const std::string& path) : file_(path) {}
  void write(const SctpEndpoint& src, const SctpEndpoint& dst, wire::ConstBytes payload);
  std::uint64_t packets_written() const { return file_.packets_written(); }
  void close() { file_.close(); }

 private:
  PcapFile file_;
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
  std::uint64_t packets_written() const { return file_.packets_written(); }
  // Flushes and closes the file (the destructor does the same); writing after close() throws.
  void close() { file_.close(); }

 private:
  void write_packet(const std::vector<std::uint8_t>& chunks);
  PcapFile file_;
  SctpEndpoint src_, dst_;
  std::uint32_t vtag_;
  std::uint32_t next_tsn_ = 1;
};

}  // namespace rnic::capture
