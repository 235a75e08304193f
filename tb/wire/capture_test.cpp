// SPDX-License-Identifier: Apache-2.0
// SCTP framing of the pcap writer: CRC32c (RFC 3720 B.4 test vectors, as SCTP uses it per RFC 4960
// Appendix B) and the DATA chunk layout that carries DDP Segment Chunks (RFC 5043 5.2).
#include <gtest/gtest.h>

#include <vector>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/sctp_ddp.hpp"

namespace {

using rnic::capture::SctpPacket;

TEST(SctpCrc32c, Rfc3720VectorsZerosOnesIncrementing) {
  EXPECT_EQ(SctpPacket::checksum(std::vector<std::uint8_t>(32, 0x00)), 0x8A9136AAu);
  EXPECT_EQ(SctpPacket::checksum(std::vector<std::uint8_t>(32, 0xFF)), 0x62A8AB43u);
  std::vector<std::uint8_t> inc(32);
  for (std::size_t i = 0; i < inc.size(); ++i) inc[i] = static_cast<std::uint8_t>(i);
  EXPECT_EQ(SctpPacket::checksum(inc), 0x46DD794Eu);
}

TEST(SctpCrc32c, StoredLeastSignificantByteFirstAndVerifies) {
  const auto pkt = SctpPacket::build(1, 2, 0xAABBCCDD, std::vector<std::uint8_t>(16, 0x5A));
  const std::uint32_t stored =
      std::uint32_t{pkt[8]} | std::uint32_t{pkt[9]} << 8 | std::uint32_t{pkt[10]} << 16 | std::uint32_t{pkt[11]} << 24;
  auto zeroed = pkt;
  zeroed[8] = zeroed[9] = zeroed[10] = zeroed[11] = 0;
  EXPECT_EQ(stored, SctpPacket::checksum(zeroed));
}

TEST(SctpDataChunk, Rfc5043UnorderedPpid16Layout) {
  const std::vector<std::uint8_t> user = {0x00, 0x07, 0x41, 0x42, 0x43};  // DDP-SSN 7 + 3 bytes
  const auto c =
      SctpPacket::data_chunk(0x01020304, 9, 0, rnic::wire::kPpidDdpSegment, true, rnic::wire::ConstBytes(user));
  ASSERT_EQ(c.size(), 24u);         // 16 header + 5 data, padded to 4
  EXPECT_EQ(c[0], 0);               // DATA
  EXPECT_EQ(c[1], 0x07);            // U, B, E
  EXPECT_EQ(c[2] << 8 | c[3], 21);  // length excludes padding
  EXPECT_EQ(c[8] << 8 | c[9], 9);   // stream identifier
  EXPECT_EQ(c[15], 16);             // PPID 16, big-endian
  EXPECT_EQ(c[17], 0x07);           // DDP-SSN low byte
  EXPECT_EQ(c[21], 0);              // padding
  EXPECT_THROW(SctpPacket::data_chunk(1, 0, 0, 16, true, rnic::wire::ConstBytes()), std::invalid_argument);
}

// RFC 6951 capture frames (rnic-peer --pcap): Ethernet / IPv4 (protocol 17, a valid header checksum) /
// UDP (RFC 768: length, no checksum) around the datagram's payload, byte for byte.
TEST(UdpFrame, Rfc6951SctpOverUdpLayout) {
  const std::vector<std::uint8_t> payload{1, 2, 3, 4, 5};
  const auto f = SctpPacket::udp_frame({0x7F000001, 9898}, {0x0A000002, 9899}, rnic::wire::ConstBytes(payload));
  ASSERT_EQ(f.size(), 14u + 20 + 8 + payload.size());
  EXPECT_EQ(f[12] << 8 | f[13], 0x0800);                  // IPv4
  EXPECT_EQ(f[14], 0x45);                                 // version 4, 20-byte header
  EXPECT_EQ(f[16] << 8 | f[17], 20 + 8 + 5);              // IP total length
  EXPECT_EQ(f[23], 17);                                   // UDP
  EXPECT_EQ(rnic::wire::load_be32(&f[26]), 0x7F000001u);  // source address
  EXPECT_EQ(rnic::wire::load_be32(&f[30]), 0x0A000002u);  // destination address
  std::uint32_t sum = 0;                                  // the header checksums to 0xFFFF
  for (std::size_t i = 14; i < 34; i += 2) sum += static_cast<std::uint32_t>(f[i] << 8 | f[i + 1]);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  EXPECT_EQ(sum, 0xFFFFu);
  EXPECT_EQ(f[34] << 8 | f[35], 9898);   // source port
  EXPECT_EQ(f[36] << 8 | f[37], 9899);   // destination port (sctp-tunneling)
  EXPECT_EQ(f[38] << 8 | f[39], 8 + 5);  // UDP length
  EXPECT_EQ(f[40] << 8 | f[41], 0);      // no checksum
  EXPECT_EQ(std::vector<std::uint8_t>(f.begin() + 42, f.end()), payload);
}

}  // namespace
