// SPDX-License-Identifier: Apache-2.0
// RFC 5041 8.3.1 #6 (and 7.1): invalidate() returns only once no placement to the STag is in flight
// and none can start. Segments for the STag keep arriving from another thread while it is called: no
// byte of the buffer changes after invalidate() returns, and the first segment that arrives later is
// reported as Invalid STag (7.2 type 1 code 0); the stream drops the rest.
#include <atomic>
#include <thread>

#include "driver_test_util.hpp"

namespace rnic::systest {
namespace {

constexpr std::uint64_t kBase = 0x40000;
constexpr std::uint64_t kLen = 64 * 1024;
constexpr std::uint32_t kSegBytes = 1024;

TEST_F(DriverSystem, InvalidateDuringTrafficFencesPlacement) {
  const PdId pd = client_->alloc_pd();
  const Buffer mem = filled_buffer(kLen, 0x00);
  RegisterRequest rq;
  rq.pd = pd;
  rq.buffer = mem.id;
  rq.length = kLen;
  rq.base_to = kBase;
  const Registration st = client_->register_memory(rq);
  const StreamId s = client_->create_stream(pd);

  // The traffic thread: one full-buffer sweep after another, each segment filled with its own
  // nonzero value, so any write after the fence changes a byte.
  std::atomic<bool> invalidated{false};
  std::atomic<unsigned> sent{0}, sent_after{0};
  std::thread traffic([&] {
    std::uint16_t ssn = 0;
    std::vector<std::uint8_t> payload(kSegBytes);
    // Stay within the DDP-SSN window: sync every half window so delivery keeps up.
    const unsigned half = std::max(1u, dev_->info().ssn_window / 2);
    while (sent_after.load() < 64) {
      std::fill(payload.begin(), payload.end(), static_cast<std::uint8_t>(1 + ssn % 255));
      const std::uint64_t to = kBase + (ssn * std::uint64_t{kSegBytes}) % kLen;
      const bool after = invalidated.load();
      dev_->require_sim().inject(s, ssn, tagged_segment(st.stag, to, payload));
      ++ssn;
      ++sent;
      if (after) ++sent_after;
      if (ssn % half == 0) dev_->require_sim().sync();
    }
  });
  while (sent.load() < 100) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  client_->invalidate(st.stag);
  const std::vector<std::uint8_t> snapshot(mem.data, mem.data + mem.size);
  invalidated = true;
  traffic.join();
  const auto got = drain(*dev_, *client_, 1);

  for (std::size_t b = 0; b < mem.size; ++b)
    ASSERT_EQ(mem.data[b], snapshot[b]) << "byte " << b << " written after invalidate";
  // Completions: tagged deliveries, then exactly one Invalid STag error; everything later dropped.
  ASSERT_FALSE(got.empty());
  std::size_t errors = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Completion& c = got[i];
    if (c.kind == Completion::Kind::kError) {
      ++errors;
      EXPECT_EQ(i, got.size() - 1) << "completion after the error: " << describe(got.back());
      EXPECT_EQ(c.err_type, wire::error_type(wire::DdpError::kTaggedInvalidStag));
      EXPECT_EQ(c.err_code, wire::error_code(wire::DdpError::kTaggedInvalidStag));
    } else {
      EXPECT_EQ(c.kind, Completion::Kind::kTagged) << describe(c);
      EXPECT_EQ(c.stag, st.stag);
    }
  }
  EXPECT_EQ(errors, 1u);
  EXPECT_GE(dev_->counters().drops, 63u);

  // A fresh stream using the invalidated STag: Invalid STag again, nothing written.
  const StreamId s2 = client_->create_stream(pd);
  dev_->require_sim().inject(s2, 0, tagged_segment(st.stag, kBase, std::vector<std::uint8_t>(64, 0x77)));
  const auto again = drain(*dev_, *client_, 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].kind, Completion::Kind::kError);
  EXPECT_EQ(again[0].err_type, 1);
  EXPECT_EQ(again[0].err_code, 0);
  for (std::size_t b = 0; b < mem.size; ++b) ASSERT_EQ(mem.data[b], snapshot[b]) << "byte " << b;
  // The handle is gone: a second invalidate is refused.
  try {
    client_->invalidate(st.stag);
    FAIL() << "invalidate twice accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kNotFound) << e.what();
  }
}

}  // namespace
}  // namespace rnic::systest
