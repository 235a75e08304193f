// SPDX-License-Identifier: Apache-2.0
// RFC 5041 6.2 stream teardown, graceful and abortive: receive buffers still posted come back as
// kFlushed completions (with their cookies, in MSN order), every segment that arrives afterwards is
// dropped and counted (CNT_DROPS), never placed, never completed; the stream refuses new posts.
#include "driver_test_util.hpp"

namespace rnic::systest {
namespace {

constexpr std::uint32_t kBufLen = 512;

class DriverTeardown : public DriverSystem, public ::testing::WithParamInterface<Teardown> {};

TEST_P(DriverTeardown, PostedBuffersFlushedLaterSegmentsDropped) {
  const PdId pd = client_->alloc_pd();
  const Buffer rx = filled_buffer(8 * kBufLen, 0xA5);
  const StreamId s = client_->create_stream(pd);
  client_->configure_queue(s, 0, 4);
  for (std::uint32_t i = 0; i < 4; ++i) client_->post_recv(s, 0, rx.id, i * kBufLen, kBufLen, 100 + i);

  // MSN 1 delivered; the first half of MSN 2 arrives before the teardown.
  const std::vector<std::uint8_t> a(300, 0x11), b(200, 0x22);
  dev_->require_sim().inject(s, 0, untagged_segment(0, 1, 0, a));
  dev_->require_sim().inject(s, 1, untagged_segment(0, 2, 0, b, /*last=*/false));
  auto got = drain(*dev_, *client_, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, Completion::Kind::kUntagged) << describe(got[0]);
  EXPECT_EQ(got[0].msn, 1u);
  EXPECT_EQ(got[0].length, a.size());

  client_->teardown_stream(s, GetParam());
  got = drain(*dev_, *client_, 3);
  ASSERT_EQ(got.size(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].kind, Completion::Kind::kFlushed) << describe(got[i]);
    EXPECT_EQ(got[i].stream, s);
    EXPECT_EQ(got[i].cookie, 101u + i);
    EXPECT_EQ(got[i].buffer, rx.id);
    EXPECT_EQ(got[i].offset, (1u + i) * kBufLen);
  }
  const std::vector<std::uint8_t> after_msn2(rx.data + kBufLen, rx.data + 4 * kBufLen);

  // Segments after the teardown: the rest of MSN 2, MSN 3, a tagged one. All dropped and counted.
  const Counters before = dev_->counters();
  dev_->require_sim().inject(s, 2, untagged_segment(0, 2, 200, b));
  dev_->require_sim().inject(s, 3, untagged_segment(0, 3, 0, a));
  dev_->require_sim().inject(s, 4, tagged_segment(0x100, 0, a));
  got = drain(*dev_, *client_, 0);
  EXPECT_TRUE(got.empty()) << describe(got.front());
  const Counters after = dev_->counters();
  EXPECT_EQ(after.drops - before.drops, 3u);
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(std::vector<std::uint8_t>(rx.data + kBufLen, rx.data + 4 * kBufLen), after_msn2);

  try {
    client_->post_recv(s, 0, rx.id, 0, kBufLen);
    FAIL() << "post to a torn-down stream accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kState) << e.what();
  }
  client_->destroy_stream(s);
  client_->free_buffer(rx.id);  // nothing posted any more
  client_->dealloc_pd(pd);      // nothing uses it any more
}

INSTANTIATE_TEST_SUITE_P(Rfc5041Sec6_2, DriverTeardown, ::testing::Values(Teardown::kGraceful, Teardown::kAbortive),
                         [](const auto& p) { return p.param == Teardown::kGraceful ? "Graceful" : "Abortive"; });

}  // namespace
}  // namespace rnic::systest
