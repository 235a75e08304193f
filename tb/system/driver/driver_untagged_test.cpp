// SPDX-License-Identifier: Apache-2.0
// RFC 5041 5.3 / 5.4 through the driver: untagged multi-segment messages whose segments arrive out of
// order (and one twice) within the DDP-SSN window are placed at MO, and each is delivered exactly once,
// in MSN order, with the 5.4 fields (QN, MSN, length, RsvdULP) and the receive buffer's cookie.
#include <algorithm>
#include <random>

#include "driver_test_util.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/wire/segmentation.hpp"

namespace rnic::systest {
namespace {

constexpr std::size_t kMulpdu = 1450;
constexpr std::uint32_t kBufLen = 16 * 1024;

TEST_F(DriverSystem, UntaggedOutOfOrderDeliveredOnceInMsnOrder) {
  std::mt19937_64 rng(tb::random_test_seed());
  const PdId pd = client_->alloc_pd();
  const Buffer rx = filled_buffer(4 * kBufLen, 0xA5);
  const StreamId s = client_->create_stream(pd);
  client_->configure_queue(s, 1, 4);
  const std::uint32_t lens[3] = {5000, 9000, 1};  // 4, 7 and 1 segments at MULPDU 1450
  for (std::uint32_t m = 0; m < 3; ++m) client_->post_recv(s, 1, rx.id, m * kBufLen, kBufLen, 10 + m);

  wire::DataSource src(kMulpdu);
  std::vector<std::vector<std::uint8_t>> msgs;
  std::vector<std::pair<std::uint16_t, std::vector<std::uint8_t>>> segs;  // (DDP-SSN, bytes)
  std::uint16_t ssn = 0;
  for (std::uint32_t m = 0; m < 3; ++m) {
    std::vector<std::uint8_t> msg(lens[m]);
    for (auto& b : msg) b = static_cast<std::uint8_t>(rng());
    const auto plan = src.send_untagged(1, 0xABC00 + m, msg.size()).value();
    for (std::uint64_t i = 0; i < plan.segment_count(); ++i) {
      segs.emplace_back(ssn++, wire::encode_planned_segment(plan.segment(i), wire::ConstBytes(msg)).value());
    }
    msgs.push_back(std::move(msg));
  }
  ASSERT_EQ(segs.size(), 12u);
  std::shuffle(segs.begin(), segs.end(), rng);
  // The first segment of the whole run goes last, so nothing can be delivered before everything is
  // there, and one segment arrives twice before the gap closes (a duplicate: counted, placed again).
  const auto first = std::find_if(segs.begin(), segs.end(), [](const auto& x) { return x.first == 0; });
  std::rotate(first, first + 1, segs.end());
  segs.insert(segs.end() - 1, segs[3]);

  const Counters before = dev_->counters();
  for (const auto& [n, bytes] : segs) dev_->require_sim().inject(s, n, bytes);
  const auto got = drain(*dev_, *client_, 3);
  ASSERT_EQ(got.size(), 3u);
  for (std::uint32_t m = 0; m < 3; ++m) {
    SCOPED_TRACE(m);
    EXPECT_EQ(got[m].kind, Completion::Kind::kUntagged) << describe(got[m]);
    EXPECT_EQ(got[m].stream, s);
    EXPECT_EQ(got[m].qn, 1u);
    EXPECT_EQ(got[m].msn, m + 1);  // RFC 5041 4.3: MSNs start at 1
    EXPECT_EQ(got[m].length, lens[m]);
    EXPECT_EQ(got[m].rsvd_ulp, 0xABC00u + m);
    EXPECT_EQ(got[m].cookie, 10u + m);
    EXPECT_EQ(got[m].buffer, rx.id);
    EXPECT_EQ(got[m].offset, m * std::uint64_t{kBufLen});
    EXPECT_TRUE(std::equal(msgs[m].begin(), msgs[m].end(), rx.data + m * kBufLen)) << "message bytes";
    EXPECT_TRUE(std::all_of(rx.data + m * kBufLen + lens[m], rx.data + (m + 1) * kBufLen, [](std::uint8_t b) {
      return b == 0xA5;
    })) << "bytes past the message";
  }
  const Counters after = dev_->counters();
  EXPECT_EQ(after.messages - before.messages, 3u);
  EXPECT_EQ(after.duplicates - before.duplicates, 1u);
  EXPECT_EQ(after.segments - before.segments, 13u);
}

// RFC 5041 5.3: a receive queue entry is the card's from post_recv until its buffer completes. The driver
// frees it when it takes the completion off the card's ring, which sync() and any other call that polls
// the card do before the client polls: post_recv on a queue that was full then succeeds, and the
// completion still reaches the client, in MSN order. Without a completion, a full queue refuses.
TEST_F(DriverSystem, QueueEntryFreedWhenTheDriverTakesTheCompletion) {
  const PdId pd = client_->alloc_pd();
  const Buffer rx = filled_buffer(4 * 1024, 0xA5);
  const StreamId s = client_->create_stream(pd);
  client_->configure_queue(s, 0, 1);  // 2 entries
  client_->post_recv(s, 0, rx.id, 0, 1024, 1);
  client_->post_recv(s, 0, rx.id, 1024, 1024, 2);
  try {
    client_->post_recv(s, 0, rx.id, 2048, 1024, 3);
    ADD_FAILURE() << "post_recv accepted on a queue with both entries posted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kQueueFull) << e.what();
  }
  const std::vector<std::uint8_t> msg(100, 0x42);
  dev_->require_sim().inject(s, 0, untagged_segment(0, 1, 0, msg));
  dev_->require_sim().sync();                      // the driver takes MSN 1's completion off the card's ring
  client_->post_recv(s, 0, rx.id, 2048, 1024, 3);  // MSN 3: MSN 1's entry is free
  const auto got = drain(*dev_, *client_, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, Completion::Kind::kUntagged) << describe(got[0]);
  EXPECT_EQ(got[0].msn, 1u);
  EXPECT_EQ(got[0].cookie, 1u);
  EXPECT_EQ(got[0].length, msg.size());
  try {
    client_->post_recv(s, 0, rx.id, 3072, 1024, 4);
    ADD_FAILURE() << "post_recv accepted with MSN 2 and 3 posted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kQueueFull) << e.what();
  }
}

}  // namespace
}  // namespace rnic::systest
