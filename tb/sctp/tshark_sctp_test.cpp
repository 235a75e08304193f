// SPDX-License-Identifier: Apache-2.0
// Interop (label `interop`): the packets usrsctp really put on the wire for an RFC 5043 session,
// captured to pcap and decoded by tshark's own SCTP dissector (CRC32c, U bit, PPID, adaptation
// indication) and the iWARP DDP dissector behind tb/interop/ddp_sctp.lua.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "pair.hpp"
#include "rnic/tb/seed.hpp"

namespace {

using namespace rnic::sctp;
using rnic::wire::ConstBytes;

// All values of one field over the whole capture, in wire order.
std::vector<std::string> field(const std::string& pcap, const std::string& name) {
  const std::string cmd = std::string(RNIC_TSHARK) + " -r " + pcap + " -X lua_script:" + RNIC_DDP_LUA +
                          " -o sctp.checksum:CRC-32C -T fields -E occurrence=a -E aggregator=, -e " + name +
                          " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::vector<std::string> out;
  if (!p) return out;
  std::string all;
  for (int c; (c = std::fgetc(p.get())) != EOF;) all.push_back(static_cast<char>(c == '\n' ? ',' : c));
  std::stringstream ss(all);
  for (std::string v; std::getline(ss, v, ',');)
    if (!v.empty()) out.push_back(v);
  return out;
}

TEST(SctpTshark, UsrsctpSessionDecodesAsDdpOverSctp) {
  const std::uint64_t seed = rnic::tb::random_test_seed(1);
  const std::string pcap = std::string(::testing::TempDir()) + "rnic_sctp_" + std::to_string(seed) + ".pcap";
  std::vector<std::uint8_t> msg(3000);
  for (std::size_t i = 0; i < msg.size(); ++i) msg[i] = static_cast<std::uint8_t>(i * 7 + seed);
  std::uint64_t a_segments = 0;
  {
    test::Pair p;
    p.capture = std::make_unique<test::RawPcap>(pcap);
    std::uint64_t got = 0;
    p.b->set_segment_sink([&](std::uint16_t, std::uint16_t, ConstBytes) { ++got; });
    p.connect();
    ASSERT_EQ(p.a->state(), AssociationState::kReady);
    p.a->initiate(3, ConstBytes(std::vector<std::uint8_t>{1, 2}));
    ASSERT_TRUE(p.run([&] { return p.b->session_state(3) == SessionState::kInitiateReceived; }));
    p.b->accept(3);
    ASSERT_TRUE(p.run([&] { return p.a->session_state(3) == SessionState::kEstablished; }));
    a_segments += p.a->send_untagged(3, 0, 0, ConstBytes(msg));
    a_segments += p.a->send_tagged(3, 0x1234517, 0x1000, 0x40, ConstBytes(msg));
    p.a->terminate(3);
    ASSERT_TRUE(p.run([&] { return got == a_segments && p.b->session_state(3) == SessionState::kIdle; }));
    p.capture->close();
  }
  const auto status = field(pcap, "sctp.checksum.status");
  ASSERT_FALSE(status.empty());
  for (const auto& s : status) EXPECT_EQ(s, "1") << "CRC32c of a usrsctp packet";
  EXPECT_EQ(field(pcap, "sctp.adaptation_layer_indication"),
            (std::vector<std::string>{"0x00000001", "0x00000001"}));       // INIT and INIT-ACK (5.1)
  for (const auto& u : field(pcap, "sctp.data_u_bit")) EXPECT_EQ(u, "1");  // 10
  std::vector<std::string> want_ppid{"17", "17"};                          // Initiate, Accept
  for (std::uint64_t i = 0; i < a_segments; ++i) want_ppid.push_back("16");
  want_ppid.push_back("17");  // Terminate
  EXPECT_EQ(field(pcap, "sctp.data_payload_proto_id"), want_ppid);
  EXPECT_EQ(field(pcap, "ddp_ssc.function"), (std::vector<std::string>{"0x0001", "0x0002", "0x0004"}));
  std::vector<std::string> want_ssn;
  for (std::uint64_t i = 1; i <= a_segments; ++i) want_ssn.push_back(std::to_string(i));
  EXPECT_EQ(field(pcap, "ddp_sctp.ssn"), want_ssn);  // 5.2.1: no gaps, after the Initiate's 0
  EXPECT_EQ(field(pcap, "iwarp_ddp.stag").size(), a_segments / 2);
  const auto msn = field(pcap, "iwarp_ddp.msn");
  ASSERT_FALSE(msn.empty());
  for (const auto& m : msn) EXPECT_EQ(m, "1");
  EXPECT_EQ(field(pcap, "iwarp_ddp.tagged_offset").front(), "0x0000000000001000");
}

}  // namespace
