// SPDX-License-Identifier: Apache-2.0
// RFC 5041 7.2: every error a segment from the wire can cause is reported through the driver's
// Completion with the exact Error Type and Error Code, on the failing segment's stream and DDP-SSN,
// with the DDP header as received; the stream then drops every later segment (7.1) and the per-error
// counter (ddp_errors.def row) advances by one.
#include <set>

#include "driver_test_util.hpp"

namespace rnic::systest {
namespace {

using wire::DdpError;

constexpr std::uint64_t kBase = 0x10000;  // base TO of the test STag
constexpr std::uint64_t kLen = 4096;      // its length
constexpr std::uint32_t kRxLen = 128;     // the one receive buffer of each stream (MSN 1, QN 0)

struct Case {
  const char* what;
  DdpError want;
  std::vector<std::uint8_t> segment;
  std::uint16_t ssn = 0;
  bool other_pd = false;  // the stream's PD differs from the STag's
  bool access = false;    // counted as an access-rights failure too
};

TEST_F(DriverSystem, EveryWireErrorReportedWithTypeAndCode) {
  const DeviceInfo& info = dev_->info();
  const PdId pd = client_->alloc_pd();
  const PdId other = client_->alloc_pd();
  const Buffer mem = filled_buffer(3 * kLen, 0xA5);
  const Buffer rx = filled_buffer(64 * 1024, 0xA5);
  RegisterRequest rq;
  rq.pd = pd;
  rq.buffer = mem.id;
  rq.length = kLen;
  rq.base_to = kBase;
  const Registration st = client_->register_memory(rq);
  rq.offset = kLen;
  rq.access = kRemoteRead;  // no remote write
  const Registration ro = client_->register_memory(rq);
  const StreamId owner = client_->create_stream(pd);
  rq.offset = 2 * kLen;
  rq.access = kRemoteWrite;
  rq.bind_stream = owner;  // RFC 5041 8.2: only `owner` may use it
  const Registration bound = client_->register_memory(rq);

  const std::vector<std::uint8_t> p16(16, 0xEE), p64(64, 0xEE);
  std::vector<Case> cases = {
      {"segment shorter than its header", DdpError::kLocalCatastrophic, tagged_segment(st.stag, kBase, p16)},
      {"STag key differs", DdpError::kTaggedInvalidStag, tagged_segment(st.stag ^ 0x01, kBase, p16)},
      {"STag without remote write", DdpError::kTaggedInvalidStag, tagged_segment(ro.stag, kBase, p16), 0, false, true},
      {"TO + length past the end", DdpError::kTaggedBaseBounds, tagged_segment(st.stag, kBase + kLen - 8, p16)},
      {"TO below the base", DdpError::kTaggedBaseBounds, tagged_segment(st.stag, kBase - 1, p16)},
      {"STag of another PD", DdpError::kTaggedStagNotAssociated, tagged_segment(st.stag, kBase, p16), 0, true},
      {"STag bound to another stream", DdpError::kTaggedStagNotAssociated, tagged_segment(bound.stag, kBase, p16)},
      {"TO + length wraps", DdpError::kTaggedToWrap, tagged_segment(st.stag, UINT64_MAX - 4, p16)},
      {"tagged DV 2", DdpError::kTaggedInvalidVersion, tagged_segment(st.stag, kBase, p16, true, 0, 2)},
      {"QN beyond the card's", DdpError::kUntaggedInvalidQn, untagged_segment(info.qns, 1, 0, p16)},
      {"MSN with no buffer", DdpError::kUntaggedNoBuffer, untagged_segment(0, 2, 0, p16)},
      {"MSN already delivered", DdpError::kUntaggedMsnRange, untagged_segment(0, 0, 0, p16)},
      {"MO past the buffer", DdpError::kUntaggedInvalidMo, untagged_segment(0, 1, kRxLen, p16)},
      {"MO + length past the buffer", DdpError::kUntaggedMessageTooLong, untagged_segment(0, 1, 100, p64)},
      {"untagged DV 0", DdpError::kUntaggedInvalidVersion, untagged_segment(0, 1, 0, p16, true, 0, 0)},
      {"DDP-SSN outside the window (RFC 5043 10)", DdpError::kLlpError, untagged_segment(0, 1, 0, p16),
       static_cast<std::uint16_t>(info.ssn_window + 3)},
  };
  cases[0].segment.resize(10);  // T set, 10 of the 14 header bytes

  std::set<DdpError> covered;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.what);
    const StreamId s = client_->create_stream(c.other_pd ? other : pd);
    client_->configure_queue(s, 0, 4);
    client_->post_recv(s, 0, rx.id, i * 256, kRxLen, i);
    const Counters before = dev_->counters();
    dev_->require_sim().inject(s, c.ssn, c.segment);
    // A valid segment after the error: dropped (7.1), never placed.
    dev_->require_sim().inject(s, static_cast<std::uint16_t>(c.ssn + 1), untagged_segment(0, 1, 0, p16));
    const auto got = drain(*dev_, *client_, 1);
    const Counters after = dev_->counters();
    ASSERT_EQ(got.size(), 1u);
    const Completion& e = got[0];
    EXPECT_EQ(e.kind, Completion::Kind::kError) << describe(e);
    EXPECT_EQ(e.stream, s);
    EXPECT_EQ(e.ssn, c.ssn);
    EXPECT_EQ(e.err_type, wire::error_type(c.want)) << describe(e);
    EXPECT_EQ(e.err_code, wire::error_code(c.want)) << describe(e);
    if (c.want != DdpError::kLocalCatastrophic) {
      // The header as received (14 bytes tagged, 18 untagged).
      const std::size_t hs =
          (c.segment[0] & wire::kCtrlTagged) != 0 ? wire::kTaggedHeaderSize : wire::kUntaggedHeaderSize;
      ASSERT_GE(e.header.size(), hs);
      EXPECT_TRUE(std::equal(c.segment.begin(), c.segment.begin() + static_cast<std::ptrdiff_t>(hs), e.header.begin()));
    }
    const std::size_t row = error_row(c.want);
    EXPECT_EQ(after.errors.at(row) - before.errors.at(row), 1u);
    EXPECT_EQ(after.drops - before.drops, 1u);
    EXPECT_EQ(after.access - before.access, c.access ? 1u : 0u);
    EXPECT_EQ(after.bytes, before.bytes);
    covered.insert(c.want);
  }
  // No invalid segment wrote a byte anywhere.
  for (std::size_t b = 0; b < mem.size; ++b) ASSERT_EQ(mem.data[b], 0xA5) << "STag memory byte " << b;
  for (std::size_t b = 0; b < rx.size; ++b) ASSERT_EQ(rx.data[b], 0xA5) << "receive buffer byte " << b;
  // Every row of the 7.2 table was exercised.
  for (const DdpError e : wire::kAllDdpErrors) EXPECT_EQ(covered.count(e), 1u) << wire::error_name(e);
}

}  // namespace
}  // namespace rnic::systest
