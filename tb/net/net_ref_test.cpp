// SPDX-License-Identifier: Apache-2.0
// The reference model of the card's receive front end (tb/net, docs/network.md): hand-built packets for
// every rule (RFC 9260 3.1 common header, 3.2 chunk layout and padding, 3.3.1 DATA; RFC 5043 5.2 PPIDs,
// 5.2.2 DDP-SSN; RFC 4820 PAD), and random bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "rnic/tb/net_ref.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp.hpp"

namespace rnic::tb::net {
namespace {

using Bytes = std::vector<std::uint8_t>;
using wire::load_be16;
using wire::load_be32;
using wire::put_be16;
using wire::put_be32;

constexpr std::uint16_t kMySctpPort = 5002, kPeerSctpPort = 5001;
constexpr std::uint32_t kVtag = 0x1234ABCD;
constexpr std::uint32_t kChecksum = 0xA1B2C3D4;  // never checked by the model (rule 1 is crc_ok)
const PacketMeta kMeta{0x0A000002, 0x0A000001, 9899, 49152};

// Entry 0: another association of the same peer (other vtag). Entry 1: ours, DDP streams 4..6 for SCTP
// streams 0..2. Live: DDP streams 4 and 5; 6 is not.
std::vector<AssocEntry> table() {
  AssocEntry other{true,
                   kMeta.my_ip,
                   kMeta.their_ip,
                   kMeta.my_udp_port,
                   kMeta.their_udp_port,
                   kMySctpPort,
                   kPeerSctpPort,
                   0x55555555,
                   0,
                   4,
                   1};
  AssocEntry ours = other;
  ours.my_vtag = kVtag;
  ours.stream_base = 4;
  ours.stream_count = 3;
  ours.vnx_socket = 2;
  return {other, ours};
}
std::vector<bool> live() {
  std::vector<bool> l(8, false);
  l[4] = l[5] = true;
  return l;
}

Bytes common_header(std::uint16_t src = kPeerSctpPort, std::uint16_t dst = kMySctpPort, std::uint32_t vtag = kVtag) {
  Bytes p;
  put_be16(p, src);
  put_be16(p, dst);
  put_be32(p, vtag);
  put_be32(p, kChecksum);
  return p;
}

// A chunk (RFC 9260 3.2): header, body, then padding to 4 of `pad_byte` (the sender should write zeros;
// a receiver ignores them, and the model must copy them as received).
void add_chunk(Bytes& p, std::uint8_t type, std::uint8_t flags, const Bytes& body, std::uint8_t pad_byte = 0) {
  p.push_back(type);
  p.push_back(flags);
  put_be16(p, static_cast<std::uint16_t>(4 + body.size()));
  p.insert(p.end(), body.begin(), body.end());
  while (p.size() % 4 != 0) p.push_back(pad_byte);
}

// DATA chunk body (RFC 9260 3.3.1): TSN, stream, stream sequence number, PPID, user data.
Bytes data_body(std::uint16_t sid, std::uint32_t ppid, const Bytes& user, std::uint32_t tsn = 100) {
  Bytes b;
  put_be32(b, tsn);
  put_be16(b, sid);
  put_be16(b, 0);
  put_be32(b, ppid);
  b.insert(b.end(), user.begin(), user.end());
  return b;
}

Bytes payload(std::size_t n, std::uint8_t seed = 1) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 13);
  return b;
}
Bytes tagged_segment(std::size_t payload_bytes, std::uint32_t stag = 0x00010203) {
  wire::TaggedHeader h;
  h.last = true;
  h.stag = stag;
  h.to = 0x1000;
  return wire::encode_segment(h, payload(payload_bytes)).value();
}
Bytes untagged_segment(std::size_t payload_bytes) {
  wire::UntaggedHeader h;
  h.last = true;
  h.qn = 1;
  h.msn = 7;
  return wire::encode_segment(h, payload(payload_bytes, 9)).value();
}
// RFC 5043 5.2.2: DDP-SSN then the DDP segment.
Bytes ddp_user(std::uint16_t ddp_ssn, const Bytes& segment) {
  Bytes u(kDdpSsnSize + segment.size());
  u[0] = static_cast<std::uint8_t>(ddp_ssn >> 8);
  u[1] = static_cast<std::uint8_t>(ddp_ssn);
  std::copy(segment.begin(), segment.end(), u.begin() + kDdpSsnSize);
  return u;
}
void add_ddp(Bytes& p, std::uint16_t sid, std::uint16_t ddp_ssn, const Bytes& segment, std::uint8_t flags = 0x07,
             std::uint32_t ppid = kPpidDdpSegment) {
  add_chunk(p, kChunkTypeData, flags, data_body(sid, ppid, ddp_user(ddp_ssn, segment)));
}

struct Run {
  Walk w;
  std::vector<Fate> fates;
  Bytes host;
  PacketSummary summary;
};
Run run(const Bytes& p, std::vector<Fate> fates = {}, bool crc_ok = true, const std::vector<AssocEntry>& t = table(),
        const std::vector<bool>& l = live()) {
  Run r;
  r.w = walk(p, kMeta, crc_ok, t, l);
  if (fates.empty()) fates.assign(r.w.segments.size(), Fate::kTaken);
  r.fates = fates;
  r.host = host_copy(p, r.w, fates);
  r.summary = summarize(r.w, fates, r.host.size());
  return r;
}

// ---------------------------------------------------------------------------------------------
// Rule 1: a bad CRC32c (RFC 9260 6.8) drops the packet: nothing to the host, nothing to the pipeline.
// ---------------------------------------------------------------------------------------------
TEST(NetRefRule1, Rfc9260_6_8_BadCrcDropsEverything) {
  Bytes p = common_header();
  add_ddp(p, 0, 1, tagged_segment(100));
  NetRef ref(table(), live());
  bool asked = false;
  const auto r = ref.receive(p, kMeta, false, [&](const std::vector<Segment>& s) {
    asked = true;
    return take_all(s);
  });
  EXPECT_FALSE(asked);
  EXPECT_TRUE(r.segments.empty());
  EXPECT_FALSE(r.host.has_value());
  EXPECT_TRUE(r.summary.dropped);
  EXPECT_EQ(ref.counters().crc_errors, 1u);
  EXPECT_EQ(ref.counters().host_packets, 0u);
  EXPECT_EQ(ref.counters().segments, 0u);
  // The same packet with a good CRC goes through.
  const auto ok = ref.receive(p, kMeta, true, take_all);
  EXPECT_TRUE(ok.host.has_value());
  EXPECT_EQ(ok.segments.size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Rule 2: shorter than the common header (RFC 9260 3.1, 12 bytes): to the host whole, malformed.
// ---------------------------------------------------------------------------------------------
TEST(NetRefRule2, Rfc9260_3_1_ShorterThanCommonHeaderGoesWholeMalformed) {
  NetRef ref(table(), live());
  const Bytes full = common_header();
  for (std::size_t n = 0; n < kCommonHeaderSize; ++n) {
    const Bytes p(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    const auto r = ref.receive(wire::ConstBytes(p.data(), n), kMeta, true, take_all);
    ASSERT_TRUE(r.host.has_value());
    EXPECT_EQ(*r.host, p) << n;
    EXPECT_TRUE(r.summary.malformed) << n;
    EXPECT_FALSE(r.summary.assoc.has_value()) << n;
    EXPECT_EQ(r.summary.chunks, 0u);
  }
  EXPECT_EQ(ref.counters().short_packets, kCommonHeaderSize);
  EXPECT_EQ(ref.counters().misses, 0u) << "no lookup for a short packet";
  // 12 bytes is a packet (no chunks): looked up, not malformed.
  const auto r = ref.receive(full, kMeta, true, take_all);
  EXPECT_EQ(r.summary.assoc, std::optional<std::size_t>(1));
  EXPECT_FALSE(r.summary.malformed);
  EXPECT_EQ(*r.host, full);
}

// ---------------------------------------------------------------------------------------------
// Rule 3: association lookup on IPs, UDP ports, SCTP ports (RFC 9260 3.1: source, destination) and the
// verification tag; the first valid match wins; a miss goes to the host whole.
// ---------------------------------------------------------------------------------------------
TEST(NetRefRule3, Rfc9260_3_1_EveryFieldMustMatch) {
  Bytes p = common_header();
  add_ddp(p, 0, 1, tagged_segment(64));
  ASSERT_EQ(run(p).summary.assoc, std::optional<std::size_t>(1));
  ASSERT_EQ(run(p).w.segments.size(), 1u);

  const auto expect_miss = [&](const Bytes& pkt, const PacketMeta& meta, const char* what) {
    const Walk w = walk(pkt, meta, true, table(), live());
    EXPECT_FALSE(w.assoc.has_value()) << what;
    EXPECT_TRUE(w.segments.empty()) << what;
    EXPECT_TRUE(w.chunks.empty()) << what << ": no chunk walk on a miss";
    EXPECT_EQ(host_copy(pkt, w, {}), pkt) << what << ": to the host whole";
  };
  PacketMeta m = kMeta;
  m.my_ip ^= 1;
  expect_miss(p, m, "my_ip");
  m = kMeta;
  m.their_ip ^= 1;
  expect_miss(p, m, "their_ip");
  m = kMeta;
  m.my_udp_port ^= 1;
  expect_miss(p, m, "my_udp_port");
  m = kMeta;
  m.their_udp_port ^= 1;
  expect_miss(p, m, "their_udp_port");
  Bytes q = p;
  q[0] ^= 1;  // source port: their_sctp_port
  expect_miss(q, kMeta, "their_sctp_port (source port)");
  q = p;
  q[3] ^= 1;  // destination port: my_sctp_port
  expect_miss(q, kMeta, "my_sctp_port (destination port)");
  q = p;
  std::swap(q[0], q[2]);  // ports swapped: the direction matters
  std::swap(q[1], q[3]);
  expect_miss(q, kMeta, "ports swapped");
  q = p;
  q[7] ^= 1;
  expect_miss(q, kMeta, "verification tag");

  NetRef ref(table(), live());
  q = p;
  q[4] ^= 0x80;
  ref.receive(q, kMeta, true, take_all);
  EXPECT_EQ(ref.counters().misses, 1u);
}

TEST(NetRefRule3, FirstValidEntryWinsInvalidOnesAreSkipped) {
  Bytes p = common_header();
  add_ddp(p, 0, 1, tagged_segment(64));
  auto t = table();
  t.insert(t.begin(), t[1]);  // index 0: a copy of ours
  EXPECT_EQ(run(p, {}, true, t).summary.assoc, std::optional<std::size_t>(0));
  t[0].valid = false;
  EXPECT_EQ(run(p, {}, true, t).summary.assoc, std::optional<std::size_t>(2));
  t[2].valid = false;
  const auto r = run(p, {}, true, t);
  EXPECT_FALSE(r.summary.assoc.has_value());
  EXPECT_EQ(r.host, p);
}

// ---------------------------------------------------------------------------------------------
// Rule 4: the chunk walk (RFC 9260 3.2): length counts the header and value, not the padding; a chunk is
// padded to 4 bytes. A length < 4 or past the end stops the walk: the rest goes as received.
// ---------------------------------------------------------------------------------------------
TEST(NetRefRule4, Rfc9260_3_2_WalksBundledChunksAndTheirPadding) {
  Bytes p = common_header();
  add_chunk(p, 3, 0, payload(13));  // SACK-typed, length 17: 3 bytes of padding
  add_ddp(p, 0, 1, tagged_segment(33));
  add_chunk(p, 4, 0, payload(4));  // HEARTBEAT-typed, length 8: no padding
  add_ddp(p, 1, 1, untagged_segment(10));
  const auto r = run(p);
  ASSERT_EQ(r.w.chunks.size(), 4u);
  EXPECT_EQ(r.w.chunks[0].offset, 12u);
  EXPECT_EQ(r.w.chunks[0].length, 17u);
  EXPECT_EQ(r.w.chunks[1].offset, 32u);                     // 12 + pad4(17)
  EXPECT_EQ(r.w.chunks[2].offset, 32u + 16 + 2 + 14 + 36);  // pad4(16 + 2 + 14 + 33) = 68
  EXPECT_EQ(r.w.segments.size(), 2u);
  EXPECT_FALSE(r.summary.malformed);
}

TEST(NetRefRule4, Rfc9260_3_2_LengthBelowFourIsMalformedTheRestGoesAsReceived) {
  for (int b = 0; b < 4; ++b) {
    const auto bad = static_cast<std::uint8_t>(b);
    Bytes p = common_header();
    add_ddp(p, 0, 1, tagged_segment(40));  // before the bad chunk: still a segment
    const std::size_t bad_at = p.size();
    add_chunk(p, 0, 7, Bytes(30, 0xEE));
    p[bad_at + 2] = 0;
    p[bad_at + 3] = bad;
    add_ddp(p, 1, 1, tagged_segment(40));  // after: not walked
    const auto r = run(p);
    EXPECT_TRUE(r.summary.malformed) << bad;
    EXPECT_EQ(r.w.malformed_offset, bad_at);
    EXPECT_EQ(r.w.segments.size(), 1u) << "nothing is taken after the stop";
    EXPECT_EQ(r.summary.chunks, 1u);
    // Host copy: header, the trimmed first chunk (32 bytes), then everything from the bad chunk on.
    Bytes expect(12 + 32 + (p.size() - bad_at));
    std::copy(p.begin(), p.begin() + 12 + 32, expect.begin());
    expect[12 + 3] = 32;
    std::copy(p.begin() + static_cast<std::ptrdiff_t>(bad_at), p.end(), expect.begin() + 12 + 32);
    EXPECT_EQ(r.host, expect) << bad;
  }
  NetRef ref(table(), live());
  Bytes p = common_header();
  add_chunk(p, 4, 0, {});
  p[15] = 2;
  ref.receive(p, kMeta, true, take_all);
  EXPECT_EQ(ref.counters().malformed, 1u);
}

TEST(NetRefRule4, Rfc9260_3_2_LengthPastTheEndIsMalformed) {
  for (std::size_t over = 1; over <= 8; ++over) {  // the length field says `over` bytes more than there are
    Bytes p = common_header();
    add_ddp(p, 0, 1, tagged_segment(40));  // 72 bytes: no padding
    p[12 + 3] = static_cast<std::uint8_t>(72 + over);
    const auto r = run(p);
    EXPECT_TRUE(r.summary.malformed) << over;
    EXPECT_EQ(r.w.malformed_offset, 12u) << over;
    EXPECT_TRUE(r.w.segments.empty()) << over;
    EXPECT_EQ(r.host, p) << over;
  }
  Bytes p = common_header();
  add_chunk(p, 4, 0, payload(8));
  const std::size_t bad_at = p.size();
  add_ddp(p, 0, 1, tagged_segment(40));
  p.resize(p.size() - 8);  // truncated: its length runs past the end
  const auto r = run(p);
  EXPECT_TRUE(r.summary.malformed);
  EXPECT_EQ(r.w.malformed_offset, bad_at);
  EXPECT_TRUE(r.w.segments.empty());
  EXPECT_EQ(r.host, p) << "whole chunks and the malformed rest: exactly as received";
}

TEST(NetRefRule4, Rfc9260_3_2_PaddingPastTheEndMakesTheLastChunk) {
  // A control chunk of length 17 at the end, with 1 of its 3 padding bytes: copied to the end.
  Bytes p = common_header();
  add_chunk(p, 4, 0, payload(13), 0xAB);
  p.resize(p.size() - 2);
  auto r = run(p);
  EXPECT_FALSE(r.summary.malformed);
  ASSERT_EQ(r.w.chunks.size(), 1u);
  EXPECT_EQ(r.w.chunks[0].copy_bytes, 18u);
  EXPECT_EQ(r.host, p);
  // The same with no padding at all, and a candidate last: still a segment, its copy padded with zeros.
  p = common_header();
  add_ddp(p, 0, 1, untagged_segment(1));  // length 16 + 2 + 19 = 37
  p.resize(12 + 37);
  r = run(p);
  EXPECT_FALSE(r.summary.malformed);
  ASSERT_EQ(r.w.segments.size(), 1u);
  EXPECT_EQ(r.host.size(), 12u + 36);  // 16 + 2 + 18 trimmed
}

TEST(NetRefRule4, Rfc9260_3_2_FewerThanFourBytesAfterTheLastChunkAreCopied) {
  for (std::size_t extra = 1; extra <= 3; ++extra) {
    Bytes p = common_header();
    add_ddp(p, 0, 1, tagged_segment(40));  // length 72: no padding
    for (std::size_t i = 0; i < extra; ++i) p.push_back(static_cast<std::uint8_t>(0xC0 + i));
    const auto r = run(p);
    EXPECT_FALSE(r.summary.malformed);
    EXPECT_EQ(r.w.segments.size(), 1u);
    ASSERT_EQ(r.host.size(), 12u + 32 + extra);
    EXPECT_TRUE(std::equal(p.end() - static_cast<std::ptrdiff_t>(extra), p.end(), r.host.begin() + 44));
  }
}

// ---------------------------------------------------------------------------------------------
// Rule 5: DDP candidates: DATA (RFC 9260 3.3.1) with U, B and E set (an unordered, unfragmented
// message: RFC 5043 5.2 / 10), at least 16 + 2 + 1 bytes, PPID 16 (RFC 5043 5.2), a DDP stream of the
// association that is live.
// ---------------------------------------------------------------------------------------------
TEST(NetRefRule5, Rfc9260_3_3_1_OnlyDataWithUBEAndPpid16OnALiveStream) {
  const Bytes seg = tagged_segment(50);
  const auto candidate = [&](std::uint8_t type, std::uint8_t flags, std::uint16_t sid, std::uint32_t ppid) {
    Bytes p = common_header();
    add_chunk(p, type, flags, data_body(sid, ppid, ddp_user(1, seg)));
    const auto r = run(p);
    EXPECT_EQ(r.summary.chunks, 1u);
    if (r.w.segments.empty()) {
      EXPECT_EQ(r.host, p) << "a chunk that is not a candidate goes whole (rule 7)";
    }
    return r.w.segments.size() == 1;
  };
  EXPECT_TRUE(candidate(0, 0x07, 0, 16));
  EXPECT_TRUE(candidate(0, 0x0F, 0, 16)) << "the I bit is ignored";
  EXPECT_TRUE(candidate(0, 0x07, 1, 16)) << "DDP stream 5 is live";
  EXPECT_FALSE(candidate(0, 0x06, 0, 16)) << "E clear: a fragment";
  EXPECT_FALSE(candidate(0, 0x05, 0, 16)) << "B clear: a fragment";
  EXPECT_FALSE(candidate(0, 0x03, 0, 16)) << "U clear: ordered";
  EXPECT_FALSE(candidate(0, 0x00, 0, 16));
  EXPECT_FALSE(candidate(64, 0x07, 0, 16)) << "I-DATA (RFC 8260) is not DATA";
  EXPECT_FALSE(candidate(0x84, 0x07, 0, 16)) << "PAD";
  EXPECT_FALSE(candidate(0, 0x07, 0, 17)) << "PPID 17: Stream Session Control (RFC 5043 5.2)";
  EXPECT_FALSE(candidate(0, 0x07, 0, 0));
  EXPECT_FALSE(candidate(0, 0x07, 0, 0x10000000)) << "PPID is big-endian";
  EXPECT_FALSE(candidate(0, 0x07, 2, 16)) << "DDP stream 6 is not live";
  EXPECT_FALSE(candidate(0, 0x07, 3, 16)) << "SCTP stream 3 >= stream_count 3";
  EXPECT_FALSE(candidate(0, 0x07, 0x0100, 16)) << "stream is big-endian";
  // Every DDP stream live: SCTP stream 3 is still beyond the association's 3 (stream_count).
  Bytes p = common_header();
  add_ddp(p, 3, 1, seg);
  add_ddp(p, 2, 1, seg);
  const auto r = run(p, {}, true, table(), std::vector<bool>(64, true));
  ASSERT_EQ(r.w.segments.size(), 1u);
  EXPECT_EQ(r.w.segments[0].stream, 6u);
}

TEST(NetRefRule5, Rfc5043_5_2_2_AtLeastOneSegmentByteAfterTheDdpSsn) {
  Bytes p = common_header();
  add_chunk(p, 0, 7, data_body(0, 16, {0x00, 0x01}));        // length 18: DDP-SSN, no segment
  add_chunk(p, 0, 7, data_body(0, 16, {0x00, 0x02, 0x80}));  // length 19: one byte
  const auto r = run(p);
  ASSERT_EQ(r.w.chunks.size(), 2u);
  EXPECT_EQ(r.w.chunks[0].kind, ChunkKind::kWhole);
  EXPECT_EQ(r.w.chunks[1].kind, ChunkKind::kSegment);
  ASSERT_EQ(r.w.segments.size(), 1u);
  EXPECT_EQ(r.w.segments[0].bytes, Bytes{0x80});
}

TEST(NetRefRule5, LiveBitPastTheTableIsNotLive) {
  auto t = table();
  t[1].stream_base = 7;  // SCTP stream 1 -> DDP stream 8: past live()
  Bytes p = common_header();
  add_ddp(p, 0, 1, tagged_segment(20));
  add_ddp(p, 1, 1, tagged_segment(20));
  auto l = live();
  l[7] = true;
  const auto r = run(p, {}, true, t, l);
  ASSERT_EQ(r.w.segments.size(), 1u);
  EXPECT_EQ(r.w.segments[0].stream, 7u);
}

TEST(NetRefRule5, AtMost32SegmentsAPacketTheRestDeclinedAsPad) {
  Bytes p = common_header();
  for (std::uint16_t i = 1; i <= 40; ++i) add_ddp(p, 0, i, tagged_segment(4));
  NetRef ref(table(), live());
  std::size_t asked = 0;
  const auto r = ref.receive(p, kMeta, true, [&](const std::vector<Segment>& s) {
    asked = s.size();
    return take_all(s);
  });
  ASSERT_EQ(asked, kMaxSegmentsPerPacket);
  ASSERT_EQ(r.segments.size(), kMaxSegmentsPerPacket);
  EXPECT_EQ(r.summary.candidates, 40u);
  EXPECT_EQ(r.summary.segments, 32u);
  EXPECT_EQ(r.summary.beyond_limit, 8u);
  EXPECT_EQ(r.summary.declined, 8u);
  EXPECT_EQ(r.summary.taken, 32u);
  EXPECT_EQ(ref.counters().beyond_limit, 8u);
  EXPECT_EQ(r.segments.back().ssn, 31u);
  // Host copy: 40 trimmed chunks (16 + 2 + 14 = 32 bytes), the last 8 as PAD.
  ASSERT_EQ(r.host->size(), 12u + 40 * 32);
  for (std::size_t i = 0; i < 40; ++i) {
    const std::uint8_t* c = r.host->data() + 12 + 32 * i;
    EXPECT_EQ(c[0], i < 32 ? kChunkTypeData : kChunkTypePad) << i;
    EXPECT_EQ(c[1], i < 32 ? 0x07 : 0x00) << i;
    EXPECT_EQ(load_be16(c + 2), 32u) << i;
    EXPECT_EQ(load_be16(c + 16), i + 1) << "the DDP-SSN stays" << i;
  }
}

// ---------------------------------------------------------------------------------------------
// Rule 6: the segment and the trimmed host copy (RFC 5043 5.2.2: DDP-SSN then the DDP segment; RFC 5041
// 4.2 / 4.3: 14-byte tagged, 18-byte untagged header).
// ---------------------------------------------------------------------------------------------
TEST(NetRefRule6, Rfc5043_5_2_2_SegmentStreamSsnAndBytes) {
  const Bytes tagged = tagged_segment(100), untagged = untagged_segment(77);
  Bytes p = common_header();
  add_ddp(p, 1, 0x0001, tagged);
  add_ddp(p, 0, 0x0000, untagged);  // DDP-SSN 0 -> 65535
  add_ddp(p, 0, 0xABCD, tagged);
  const auto r = run(p);
  ASSERT_EQ(r.w.segments.size(), 3u);
  EXPECT_EQ(r.w.segments[0].stream, 5u);
  EXPECT_EQ(r.w.segments[0].ssn, 0u);
  EXPECT_EQ(r.w.segments[0].bytes, tagged);
  EXPECT_EQ(r.w.segments[1].stream, 4u);
  EXPECT_EQ(r.w.segments[1].ssn, 0xFFFFu);
  EXPECT_EQ(r.w.segments[1].bytes, untagged);
  EXPECT_EQ(r.w.segments[2].ssn, 0xABCCu);
}

TEST(NetRefRule6, Rfc5043_5_2_2_HostCopyKeepsChunkHeaderSsnAndDdpHeader) {
  const Bytes tagged = tagged_segment(101), untagged = untagged_segment(50);
  Bytes p = common_header();
  add_chunk(p, 0, 0x0F, data_body(1, 16, ddp_user(9, tagged), 0xDEADBEEF), 0x5A);  // I bit, junk padding
  add_ddp(p, 0, 10, untagged);
  const auto r = run(p);
  Bytes expect = common_header();
  // Tagged: 16 + 2 + 14 = 32, aligned.
  Bytes c1;
  c1.push_back(0);
  c1.push_back(0x0F);
  put_be16(c1, 32);
  Bytes body = data_body(1, 16, ddp_user(9, Bytes(tagged.begin(), tagged.begin() + 14)), 0xDEADBEEF);
  c1.insert(c1.end(), body.begin(), body.end());
  expect.insert(expect.end(), c1.begin(), c1.end());
  // Untagged: 16 + 2 + 18 = 36, aligned.
  Bytes c2;
  add_chunk(c2, 0, 0x07, data_body(0, 16, ddp_user(10, Bytes(untagged.begin(), untagged.begin() + 18))));
  expect.insert(expect.end(), c2.begin(), c2.end());
  EXPECT_EQ(r.host, expect);
}

TEST(NetRefRule6, Rfc5043_5_2_2_SegmentShorterThanItsHeaderKeepsWhatThereIsZeroPadded) {
  for (std::size_t n = 1; n <= 20; ++n) {
    Bytes seg = payload(n, 0x40);  // T clear: untagged, 18-byte header
    Bytes p = common_header();
    add_chunk(p, 0, 7, data_body(0, 16, ddp_user(1, seg)), 0xFF);
    const auto r = run(p);
    ASSERT_EQ(r.w.segments.size(), 1u) << n;
    const std::size_t kept = std::min<std::size_t>(n, 18);
    const std::size_t len = 18 + kept;
    ASSERT_EQ(r.host.size(), 12 + ((len + 3) & ~std::size_t{3})) << n;
    EXPECT_EQ(load_be16(r.host.data() + 14), len) << n;
    EXPECT_TRUE(std::equal(seg.begin(), seg.begin() + static_cast<std::ptrdiff_t>(kept), r.host.begin() + 30)) << n;
    for (std::size_t i = 12 + len; i < r.host.size(); ++i) EXPECT_EQ(r.host[i], 0) << "padding is zero " << n;
  }
  // T set, 5 bytes: keeps 5 of the 14.
  Bytes seg = payload(5, 0x80);
  seg[0] = 0x81;
  Bytes p = common_header();
  add_chunk(p, 0, 7, data_body(0, 16, ddp_user(1, seg)));
  EXPECT_EQ(load_be16(run(p).host.data() + 14), 23u);
}

// ---------------------------------------------------------------------------------------------
// Rule 7: everything else whole, padding as received; the common header as received.
// ---------------------------------------------------------------------------------------------
TEST(NetRefRule7, Rfc9260_3_2_OtherChunksAndTheCommonHeaderAsReceived) {
  Bytes p = common_header();
  add_chunk(p, 3, 0, payload(13), 0x77);                                   // SACK-typed, padding 0x77
  add_chunk(p, 0, 0x07, data_body(0, 17, payload(9)), 0x66);               // PPID 17 (session control)
  add_chunk(p, 0, 0x04, data_body(0, 16, ddp_user(1, payload(9))), 0x55);  // a fragment
  add_chunk(p, 0xC1, 0xFF, payload(5), 0x44);                              // unknown type
  const auto r = run(p);
  EXPECT_EQ(r.summary.chunks, 4u);
  EXPECT_TRUE(r.w.segments.empty());
  EXPECT_EQ(r.host, p);
  EXPECT_EQ(load_be32(r.host.data() + 8), kChecksum) << "checksum copied as received";
}

// ---------------------------------------------------------------------------------------------
// Rule 8: the fates (docs/network.md): declined -> PAD (RFC 4820, type 0x84: the top bits 10 tell every
// receiver to skip it and go on, RFC 9260 3.2), flags 0; taken and duplicate stay DATA.
// ---------------------------------------------------------------------------------------------
TEST(NetRefRule8, Rfc4820_DeclinedBecomesPadTakenAndDuplicateStay) {
  Bytes p = common_header();
  add_ddp(p, 0, 1, tagged_segment(60));
  add_ddp(p, 0, 2, tagged_segment(60));
  add_chunk(p, 4, 0, payload(4));
  add_ddp(p, 1, 1, untagged_segment(60));
  const auto taken = run(p);
  const auto mixed = run(p, {Fate::kDuplicate, Fate::kDeclined, Fate::kTaken});
  ASSERT_EQ(taken.host.size(), mixed.host.size());
  Bytes expect = taken.host;
  expect[12 + 32] = kChunkTypePad;  // the second chunk
  expect[12 + 32 + 1] = 0;
  EXPECT_EQ(mixed.host, expect);
  EXPECT_EQ(mixed.summary.taken, 1u);
  EXPECT_EQ(mixed.summary.duplicate, 1u);
  EXPECT_EQ(mixed.summary.declined, 1u);
  const auto all_declined = run(p, {Fate::kDeclined, Fate::kDeclined, Fate::kDeclined});
  const std::size_t offsets[] = {12, 44, 84};
  for (const std::size_t o : offsets) {
    EXPECT_EQ(all_declined.host[o], kChunkTypePad) << o;
    EXPECT_EQ(all_declined.host[o + 1], 0) << o;
  }
  EXPECT_EQ(all_declined.host[76], 4) << "the control chunk is untouched";
  EXPECT_THROW(host_copy(p, taken.w, {Fate::kTaken}), std::invalid_argument);
  NetRef ref(table(), live());
  EXPECT_THROW(ref.receive(p, kMeta, true, [](const std::vector<Segment>&) { return std::vector<Fate>{}; }),
               std::invalid_argument);
}

TEST(NetRefCounters, AddUpOverPackets) {
  NetRef ref(table(), live());
  Bytes p = common_header();
  add_ddp(p, 0, 1, tagged_segment(60));
  add_ddp(p, 0, 2, tagged_segment(60));
  add_chunk(p, 4, 0, payload(4));
  const auto fates = [](const std::vector<Segment>& s) {
    std::vector<Fate> f(s.size(), Fate::kTaken);
    f.back() = Fate::kDeclined;
    return f;
  };
  ref.receive(p, kMeta, true, fates);
  ref.receive(p, kMeta, true, take_all);
  ref.receive(p, kMeta, false, take_all);
  Bytes miss = p;
  miss[4] ^= 1;
  const auto r = ref.receive(miss, kMeta, true, take_all);
  EXPECT_EQ(r.summary.host_bytes, miss.size());
  const Counters& c = ref.counters();
  EXPECT_EQ(c.packets, 4u);
  EXPECT_EQ(c.crc_errors, 1u);
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.chunks, 6u);
  EXPECT_EQ(c.segments, 4u);
  EXPECT_EQ(c.taken, 3u);
  EXPECT_EQ(c.declined, 1u);
  EXPECT_EQ(c.host_packets, 3u);
  EXPECT_EQ(c.host_bytes, 2 * (12u + 32 + 32 + 8) + miss.size());
}

// ---------------------------------------------------------------------------------------------
// Random bytes: no exception, no read out of bounds (run under the asan preset for the latter), and the
// host copy walks to the same chunks.
// ---------------------------------------------------------------------------------------------
TEST(NetRefRandom, RandomAndMutatedPacketsNeverThrowAndKeepTheChunkSequence) {
  const std::uint64_t seed = random_test_seed();
  std::mt19937_64 rng(seed);
  const auto t = table();
  const auto l = live();
  std::uint64_t segments = 0, malformed = 0;
  for (int i = 0; i < 20000; ++i) {
    Bytes p;
    if (i % 2 == 0) {  // random bytes behind a matching common header, or none at all
      p.resize(rng() % 200);
      for (auto& b : p) b = static_cast<std::uint8_t>(rng());
      if (p.size() >= 12 && rng() % 2 == 0) {
        const Bytes h = common_header();
        std::copy(h.begin(), h.end(), p.begin());
      }
    } else {  // a valid packet with a few bytes changed and perhaps truncated
      p = common_header();
      const int n = static_cast<int>(rng() % 40);
      for (int k = 0; k < n; ++k) {
        if (rng() % 3 == 0) {
          add_chunk(p, static_cast<std::uint8_t>(rng() % 5), 0x07, payload(rng() % 30));
        } else {
          add_ddp(p, static_cast<std::uint16_t>(rng() % 4), static_cast<std::uint16_t>(rng()),
                  (rng() % 2) != 0 ? tagged_segment(rng() % 40) : untagged_segment(rng() % 40),
                  static_cast<std::uint8_t>((rng() % 4) != 0 ? 0x07 : rng() % 16));
        }
      }
      for (int k = static_cast<int>(rng() % 4); k > 0 && p.size() > 12; --k)
        p[12 + rng() % (p.size() - 12)] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      if (rng() % 4 == 0) p.resize(rng() % (p.size() + 1));
    }
    const bool crc_ok = rng() % 16 != 0;
    const Walk w = walk(p, kMeta, crc_ok, t, l);
    std::vector<Fate> fates;
    for (std::size_t k = 0; k < w.segments.size(); ++k) fates.push_back(static_cast<Fate>(rng() % 3));
    const Bytes host = host_copy(p, w, fates);
    segments += w.segments.size();
    malformed += w.malformed;
    ASSERT_LE(w.segments.size(), kMaxSegmentsPerPacket);
    if (w.dropped) {
      ASSERT_TRUE(host.empty());
      continue;
    }
    ASSERT_LE(host.size(), p.size() + 3) << "i " << i;  // trimmed candidates; at most the last padded
    if (!w.assoc) {
      ASSERT_EQ(host, p);
      continue;
    }
    // The host copy walks to the same chunks in the same places, candidates trimmed.
    const Walk again = walk(host, kMeta, true, t, l);
    ASSERT_EQ(again.chunks.size(), w.chunks.size()) << "i " << i;
    ASSERT_EQ(again.malformed, w.malformed) << "i " << i;
    for (std::size_t k = 0; k < w.chunks.size(); ++k) {
      const ChunkInfo& a = w.chunks[k];
      const ChunkInfo& b = again.chunks[k];
      const bool pad =
          a.kind == ChunkKind::kBeyondLimit || (a.kind == ChunkKind::kSegment && fates[a.segment] == Fate::kDeclined);
      ASSERT_EQ(b.type, pad ? kChunkTypePad : a.type) << "i " << i << " chunk " << k;
      ASSERT_EQ(b.length, a.kind == ChunkKind::kWhole ? a.length : a.trimmed_length) << "i " << i;
    }
  }
  std::printf("[   INFO   ] %llu segments, %llu malformed packets\n", static_cast<unsigned long long>(segments),
              static_cast<unsigned long long>(malformed));
  EXPECT_GT(segments, 0u);
  EXPECT_GT(malformed, 0u);
}

}  // namespace
}  // namespace rnic::tb::net
