// SPDX-License-Identifier: Apache-2.0
#include "rnic/capture/sctp_capture.hpp"

#include <isa-l.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <ctime>
#include <stdexcept>

#include "rnic/wire/bytes.hpp"
#include "rnic/wire/sctp_ddp.hpp"

namespace rnic::capture {

using rnic::wire::put_be16;
using rnic::wire::put_be32;

namespace {

constexpr std::uint8_t kChunkData = 0;
constexpr std::uint8_t kChunkInit = 1;
constexpr std::uint8_t kDataFlagUnordered = 0x04;
constexpr std::uint8_t kDataFlagBeginning = 0x02;
constexpr std::uint8_t kDataFlagEnding = 0x01;
constexpr std::uint8_t kIpProtoSctp = 132;
constexpr std::uint8_t kIpProtoUdp = 17;
constexpr std::size_t kUdpHeader = 8;
constexpr std::size_t kMaxUdpPayload = 65507;  // 65535 - IPv4 header - UDP header
constexpr std::size_t kSctpCommonHeader = 12;

void pad4(std::vector<std::uint8_t>& v) {
  while (v.size() % 4 != 0) v.push_back(0);
}

std::uint16_t ipv4_header_checksum(const std::uint8_t* h, std::size_t n) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < n; i += 2) sum += rnic::wire::load_be16(h + i);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

}  // namespace

std::uint32_t SctpPacket::checksum(const std::vector<std::uint8_t>& pkt) {
  // ISA-L's crc32_iscsi with seed ~0 returns the complement of the standard CRC32c (toolchain notes).
  return ~crc32_iscsi(const_cast<std::uint8_t*>(pkt.data()), static_cast<int>(pkt.size()), 0xFFFFFFFFu);
}

void SctpPacket::seal(std::vector<std::uint8_t>& p) {
  std::fill(p.begin() + 8, p.begin() + 12, std::uint8_t{0});
  wire::store_le32(p.data() + 8, checksum(p));
}

std::vector<std::uint8_t> SctpPacket::build(std::uint16_t src_port, std::uint16_t dst_port,
                                            std::uint32_t verification_tag, const std::vector<std::uint8_t>& chunks) {
  std::vector<std::uint8_t> p;
  p.reserve(kSctpCommonHeader + chunks.size());
  put_be16(p, src_port);
  put_be16(p, dst_port);
  put_be32(p, verification_tag);
  put_be32(p, 0);  // checksum, filled below
  p.insert(p.end(), chunks.begin(), chunks.end());
  seal(p);
  return p;
}

std::vector<std::uint8_t> SctpPacket::data_chunk(std::uint32_t tsn, std::uint16_t stream_id, std::uint16_t stream_seq,
                                                 std::uint32_t ppid, bool unordered, rnic::wire::ConstBytes data) {
  if (data.size == 0 || data.size > 0xFFFF - 16) {
    throw std::invalid_argument("SCTP DATA chunk user data must be 1..65519 bytes");
  }
  std::vector<std::uint8_t> c;
  c.push_back(kChunkData);
  c.push_back(static_cast<std::uint8_t>((unordered ? kDataFlagUnordered : 0) | kDataFlagBeginning | kDataFlagEnding));
  put_be16(c, static_cast<std::uint16_t>(16 + data.size));
  put_be32(c, tsn);
  put_be16(c, stream_id);
  put_be16(c, stream_seq);
  put_be32(c, ppid);
  c.insert(c.end(), data.data, data.data + data.size);
  pad4(c);
  return c;
}

std::vector<std::uint8_t> SctpPacket::init_chunk(std::uint32_t initiate_tag, std::uint16_t streams,
                                                 std::uint32_t initial_tsn,
                                                 const std::vector<std::uint8_t>& parameters) {
  std::vector<std::uint8_t> c;
  c.push_back(kChunkInit);
  c.push_back(0);
  put_be16(c, static_cast<std::uint16_t>(20 + parameters.size()));
  put_be32(c, initiate_tag);
  put_be32(c, 1u << 20);  // a_rwnd
  put_be16(c, streams);   // outbound streams
  put_be16(c, streams);   // inbound streams: equal, as RFC 5043 8 requires
  put_be32(c, initial_tsn);
  c.insert(c.end(), parameters.begin(), parameters.end());
  pad4(c);
  return c;
}

namespace {

// Ethernet II + IPv4 (DF, TTL 64, no options) around an IP payload of `protocol`.
std::vector<std::uint8_t> ipv4_frame(const SctpEndpoint& src, const SctpEndpoint& dst, std::uint8_t protocol,
                                     std::size_t payload_size) {
  std::vector<std::uint8_t> f;
  f.reserve(14 + 20 + payload_size);
  const std::uint8_t dst_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
  const std::uint8_t src_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
  f.insert(f.end(), dst_mac, dst_mac + 6);
  f.insert(f.end(), src_mac, src_mac + 6);
  put_be16(f, 0x0800);
  const std::size_t ip = f.size();
  f.push_back(0x45);  // IPv4, 20-byte header
  f.push_back(0);
  put_be16(f, static_cast<std::uint16_t>(20 + payload_size));
  put_be16(f, 0);       // identification
  put_be16(f, 0x4000);  // DF
  f.push_back(64);      // TTL
  f.push_back(protocol);
  put_be16(f, 0);  // header checksum, filled below
  put_be32(f, src.ipv4);
  put_be32(f, dst.ipv4);
  const std::uint16_t sum = ipv4_header_checksum(f.data() + ip, 20);
  f[ip + 10] = static_cast<std::uint8_t>(sum >> 8);
  f[ip + 11] = static_cast<std::uint8_t>(sum);
  return f;
}

}  // namespace

std::vector<std::uint8_t> SctpPacket::frame(const SctpEndpoint& src, const SctpEndpoint& dst,
                                            const std::vector<std::uint8_t>& sctp) {
  std::vector<std::uint8_t> f = ipv4_frame(src, dst, kIpProtoSctp, sctp.size());
  f.insert(f.end(), sctp.begin(), sctp.end());
  return f;
}

std::vector<std::uint8_t> SctpPacket::udp_frame(const SctpEndpoint& src, const SctpEndpoint& dst,
                                                wire::ConstBytes payload) {
  const std::size_t n = std::min<std::size_t>(payload.size, kMaxUdpPayload);
  std::vector<std::uint8_t> f = ipv4_frame(src, dst, kIpProtoUdp, kUdpHeader + n);
  put_be16(f, src.port);
  put_be16(f, dst.port);
  put_be16(f, static_cast<std::uint16_t>(kUdpHeader + n));
  put_be16(f, 0);  // no checksum (RFC 768)
  if (n != 0) f.insert(f.end(), payload.data, payload.data + n);
  return f;
}

PcapFile::PcapFile(const std::string& path) {
  pcap_ = pcap_open_dead(DLT_EN10MB, 65535);
  if (pcap_ == nullptr) throw std::runtime_error("pcap_open_dead failed");
  dumper_ = pcap_dump_open(pcap_, path.c_str());
  if (dumper_ == nullptr) {
    std::string err = pcap_geterr(pcap_);
    pcap_close(pcap_);
    pcap_ = nullptr;
    throw std::runtime_error("cannot write pcap '" + path + "': " + err);
  }
}

PcapFile::~PcapFile() { close(); }

void PcapFile::close() {
  if (dumper_ != nullptr) pcap_dump_close(dumper_);
  if (pcap_ != nullptr) pcap_close(pcap_);
  dumper_ = nullptr;
  pcap_ = nullptr;
}

void PcapFile::write(const std::vector<std::uint8_t>& frame, std::int64_t sec, std::int64_t usec) {
  if (dumper_ == nullptr) throw std::logic_error("pcap: write after close()");
  pcap_pkthdr hdr{};
  hdr.ts.tv_sec = static_cast<time_t>(sec);
  hdr.ts.tv_usec = static_cast<suseconds_t>(usec);
  hdr.caplen = static_cast<bpf_u_int32>(frame.size());
  hdr.len = hdr.caplen;
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &hdr, frame.data());
  ++packets_;
}

void UdpCaptureWriter::write(const SctpEndpoint& src, const SctpEndpoint& dst, wire::ConstBytes payload) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  file_.write(SctpPacket::udp_frame(src, dst, payload), now.tv_sec, now.tv_nsec / 1000);
}

SctpCaptureWriter::SctpCaptureWriter(const std::string& path, SctpEndpoint src, SctpEndpoint dst,
                                     std::uint32_t verification_tag)
    : file_(path), src_(src), dst_(dst), vtag_(verification_tag) {}

SctpCaptureWriter::~SctpCaptureWriter() = default;

void SctpCaptureWriter::write_packet(const std::vector<std::uint8_t>& chunks) {
  // Timestamps 1 us apart from a fixed start: the file is byte-for-byte reproducible.
  const auto n = static_cast<std::int64_t>(file_.packets_written());
  file_.write(SctpPacket::frame(src_, dst_, SctpPacket::build(src_.port, dst_.port, vtag_, chunks)),
              1700000000 + n / 1000000, n % 1000000);
}

void SctpCaptureWriter::write_init_with_adaptation(std::uint16_t streams, std::uint32_t indication) {
  const auto param = rnic::wire::encode_adaptation_indication(indication);
  // An INIT travels with verification tag 0 (RFC 4960 8.5.1).
  const std::uint32_t saved = vtag_;
  vtag_ = 0;
  write_packet(
      SctpPacket::init_chunk(saved, streams, next_tsn_, std::vector<std::uint8_t>(param.begin(), param.end())));
  vtag_ = saved;
}

void SctpCaptureWriter::write_data(std::uint16_t stream_id, std::uint32_t ppid, rnic::wire::ConstBytes user_data,
                                   bool unordered) {
  write_packet(SctpPacket::data_chunk(next_tsn_++, stream_id, 0, ppid, unordered, user_data));
}

}  // namespace rnic::capture
