// SPDX-License-Identifier: Apache-2.0
// Interop (label `interop`): segments produced by rnic_wire, framed as SCTP DATA chunks in a pcap, must
// decode to the same field values in tshark's own iWARP DDP dissector (RFC 5041 4.1-4.3) and SCTP
// dissector (RFC 5043 5.1 adaptation indication, 5.2 PPIDs, CRC32c checked). The Lua in
// ddp_sctp.lua only strips the 2-byte DDP-SSN (RFC 5043 5.2.2) before calling iwarp_ddp_rdmap.
//
// Seed: RNIC_TEST_SEED=<n> reproduces a run; the seed is printed.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "rnic/wire/segmentation.hpp"

namespace {

using namespace rnic::wire;
using rnic::capture::SctpCaptureWriter;

const std::vector<std::string> kFields = {"sctp.checksum.status",
                                          "sctp.data_payload_proto_id",
                                          "sctp.data_sid",
                                          "sctp.data_u_bit",
                                          "sctp.adaptation_layer_indication",
                                          "ddp_sctp.ssn",
                                          "iwarp_ddp.tagged_flag",
                                          "iwarp_ddp.last_flag",
                                          "iwarp_ddp.dv",
                                          "iwarp_ddp.rsvdulp",
                                          "iwarp_ddp.stag",
                                          "iwarp_ddp.tagged_offset",
                                          "iwarp_ddp.qn",
                                          "iwarp_ddp.msn",
                                          "iwarp_ddp.mo",
                                          "iwarp_rdma.version",
                                          "iwarp_rdma.rsv",
                                          "iwarp_rdma.opcode",
                                          "sctp.chunk_length",
                                          "ddp_ssc.ssn",
                                          "ddp_ssc.function",
                                          "ddp_ssc.private_length"};

using Row = std::map<std::string, std::string>;

std::string hex(std::uint64_t v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return b;
}

// What tshark must print for one DDP segment chunk.
Row expect_segment(std::uint16_t stream, std::uint16_t ssn, const DdpHeader& h, std::size_t payload) {
  Row r{{"sctp.checksum.status", "1"},
        {"sctp.data_payload_proto_id", "16"},
        {"sctp.data_sid", hex(stream, 4)},
        {"sctp.data_u_bit", "1"},
        {"ddp_sctp.ssn", std::to_string(ssn)},
        {"sctp.chunk_length", std::to_string(16 + kDdpSsnSize + header_size(h) + payload)}};
  if (const auto* t = std::get_if<TaggedHeader>(&h)) {
    r["iwarp_ddp.tagged_flag"] = "1";
    r["iwarp_ddp.last_flag"] = t->last ? "1" : "0";
    r["iwarp_ddp.dv"] = std::to_string(t->dv);
    r["iwarp_ddp.stag"] = hex(t->stag, 8);
    r["iwarp_ddp.tagged_offset"] = hex(t->to, 16);
    // In iWARP the 8 tagged RsvdULP bits are the RDMAP control field: version(2) rsv(2) opcode(4).
    r["iwarp_rdma.version"] = std::to_string(t->rsvd_ulp >> 6);
    r["iwarp_rdma.rsv"] = hex((t->rsvd_ulp >> 4) & 3, 2);
    r["iwarp_rdma.opcode"] = hex(t->rsvd_ulp & 0xF, 2);
  } else {
    const auto& u = std::get<UntaggedHeader>(h);
    r["iwarp_ddp.tagged_flag"] = "0";
    r["iwarp_ddp.last_flag"] = u.last ? "1" : "0";
    r["iwarp_ddp.dv"] = std::to_string(u.dv);
    char b[16];
    std::snprintf(b, sizeof b, "%010llx", static_cast<unsigned long long>(u.rsvd_ulp));
    r["iwarp_ddp.rsvdulp"] = b;
    r["iwarp_ddp.qn"] = std::to_string(u.qn);
    r["iwarp_ddp.msn"] = std::to_string(u.msn);
    r["iwarp_ddp.mo"] = std::to_string(u.mo);
    // Its first RsvdULP byte is the RDMAP control field as well.
    const auto ctrl = static_cast<std::uint8_t>(u.rsvd_ulp >> 32);
    r["iwarp_rdma.version"] = std::to_string(ctrl >> 6);
    r["iwarp_rdma.rsv"] = hex((ctrl >> 4) & 3, 2);
    r["iwarp_rdma.opcode"] = hex(ctrl & 0xF, 2);
  }
  return r;
}

class TsharkInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = rnic::tb::random_test_seed();
    rng_.seed(seed_);
    pcap_ = std::string(::testing::TempDir()) + "rnic_interop_" + std::to_string(seed_) + ".pcap";
  }

  // Runs tshark on the pcap and returns one Row per frame.
  std::vector<Row> decode() {
    std::string cmd = std::string(RNIC_TSHARK) + " -r " + pcap_ + " -X lua_script:" + RNIC_DDP_LUA +
                      " -o sctp.checksum:CRC-32C -T fields -E separator=/t -E occurrence=f";
    for (const auto& f : kFields) cmd += " -e " + f;
    cmd += " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
    if (!p) return {};
    std::vector<Row> rows;
    std::string line;
    for (int c; (c = std::fgetc(p.get())) != EOF;) {
      if (c != '\n') {
        line.push_back(static_cast<char>(c));
        continue;
      }
      Row r;
      std::size_t start = 0;
      for (const auto& f : kFields) {
        const std::size_t tab = line.find('\t', start);
        r[f] = line.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
        start = tab == std::string::npos ? line.size() : tab + 1;
      }
      rows.push_back(r);
      line.clear();
    }
    return rows;
  }

  void check(const std::vector<Row>& want) {
    const auto got = decode();
    ASSERT_EQ(got.size(), want.size()) << "tshark decoded a different number of frames (seed " << seed_ << ")";
    for (std::size_t i = 0; i < want.size(); ++i) {
      for (const auto& f : kFields) {
        const auto it = want[i].find(f);
        const std::string expected = it == want[i].end() ? "" : it->second;
        EXPECT_EQ(got[i].at(f), expected) << "frame " << i + 1 << " field " << f << " (seed " << seed_ << ")";
      }
    }
  }

  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::string pcap_;
};

// RFC 5041 5.2 examples and zero-length messages, segmented by the Data Source, as tshark sees them.
TEST_F(TsharkInterop, Rfc5041SegmentationExamplesDecodeIdentically) {
  std::vector<Row> want;
  SctpCaptureWriter w(pcap_, {0x0A000001, 7000}, {0x0A000002, 7001}, 0xC0FFEE01);
  w.write_init_with_adaptation(4, kDdpAdaptationIndication);  // RFC 5043 5.1
  want.push_back(
      {{"sctp.checksum.status", "1"}, {"sctp.adaptation_layer_indication", "0x00000001"}, {"sctp.chunk_length", "28"}});
  DataSource src(1500);
  std::vector<std::uint8_t> msg(2048);
  for (auto& b : msg) b = static_cast<std::uint8_t>(rng_());
  std::uint16_t ssn = 0;
  auto send = [&](const MessageSegmenter& m, const std::vector<std::uint8_t>& body) {
    for (const auto& plan : m.all()) {
      const auto seg = encode_planned_segment(plan, ConstBytes(body));
      ASSERT_TRUE(seg.ok());
      w.write_data(1, kPpidDdpSegment, ConstBytes(encode_segment_chunk(ssn, ConstBytes(*seg))));
      want.push_back(expect_segment(1, ssn++, plan.header, plan.payload_length));
    }
  };
  auto u = src.send_untagged(0, 0x0102030405, msg.size());  // MO 0 / 1482, MO 1482 / 566
  ASSERT_TRUE(u.ok());
  ASSERT_EQ(u->segment_count(), 2u);
  send(*u, msg);
  auto t = src.send_tagged(0x00ABCD17, 16384, 0x40, msg.size());  // TO 16384 / 1486, TO 17870 / 562
  ASSERT_TRUE(t.ok());
  send(*t, msg);
  send(*src.send_tagged(0x12345678, 0, 0x40, 0), {});  // zero length: one segment, L set
  send(*src.send_untagged(3, 0, 0), {});
  w.write_data(1, kPpidDdpSessionControl,  // RFC 5043 5.2.3
               ConstBytes(*encode_session_control({ssn, SessionFunction::kTerminate, {}})));
  want.push_back({{"sctp.checksum.status", "1"},
                  {"sctp.data_payload_proto_id", "17"},
                  {"sctp.data_sid", "0x0001"},
                  {"sctp.data_u_bit", "1"},
                  {"sctp.chunk_length", "20"},
                  {"ddp_ssc.ssn", std::to_string(ssn)},
                  {"ddp_ssc.function", "0x0004"},
                  {"ddp_ssc.private_length", "0"}});
  w.close();
  check(want);
  // The examples' exact numbers, as tshark read them.
  const auto got = decode();
  ASSERT_GE(got.size(), 5u);
  EXPECT_EQ(got[1].at("iwarp_ddp.mo"), "0");
  EXPECT_EQ(got[1].at("sctp.chunk_length"), std::to_string(16 + 2 + 18 + 1482));
  EXPECT_EQ(got[2].at("iwarp_ddp.mo"), "1482");
  EXPECT_EQ(got[2].at("sctp.chunk_length"), std::to_string(16 + 2 + 18 + 566));
  EXPECT_EQ(got[3].at("iwarp_ddp.tagged_offset"), hex(16384, 16));
  EXPECT_EQ(got[3].at("sctp.chunk_length"), std::to_string(16 + 2 + 14 + 1486));
  EXPECT_EQ(got[4].at("iwarp_ddp.tagged_offset"), hex(17870, 16));
  EXPECT_EQ(got[4].at("sctp.chunk_length"), std::to_string(16 + 2 + 14 + 562));
}

// Random headers over every field's full range (RFC 5041 4.1-4.3), decoded by tshark.
TEST_F(TsharkInterop, RandomHeadersDecodeIdentically) {
  std::vector<Row> want;
  SctpCaptureWriter w(pcap_, {0x0A000001, 7000}, {0x0A000002, 7001}, 0xC0FFEE02);
  std::vector<std::uint8_t> payload(600);
  for (int i = 0; i < 400; ++i) {
    const auto stream = static_cast<std::uint16_t>(rng_() % 8);
    const auto ssn = static_cast<std::uint16_t>(rng_());
    const std::size_t len = rng_() % 4 == 0 ? 0 : rng_() % payload.size();
    DdpHeader h;
    if (rng_() % 2) {
      TaggedHeader t;
      t.last = rng_() % 2;
      t.rsvd_ulp = static_cast<std::uint8_t>(rng_());
      t.stag = static_cast<std::uint32_t>(rng_());
      t.to = rng_();
      h = t;
    } else {
      UntaggedHeader u;
      u.last = rng_() % 2;
      u.rsvd_ulp = rng_() & kUntaggedRsvdUlpMax;
      u.qn = static_cast<std::uint32_t>(rng_());
      u.msn = i == 0 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(rng_());  // MSN wrap edge
      u.mo = static_cast<std::uint32_t>(rng_());
      h = u;
    }
    const auto seg = encode_segment(h, ConstBytes(payload.data(), len));
    ASSERT_TRUE(seg.ok());
    w.write_data(stream, kPpidDdpSegment, ConstBytes(encode_segment_chunk(ssn, ConstBytes(*seg))));
    want.push_back(expect_segment(stream, ssn, h, len));
  }
  w.close();
  check(want);
}

}  // namespace
