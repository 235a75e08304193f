// SPDX-License-Identifier: Apache-2.0
// RFC 5041 8.3.2: the Device is the privileged resource manager. Per-client limits are enforced
// (Errc::kQuota, nothing half-done) and a client cannot name another client's PDs, buffers, STags or
// streams (Errc::kNotFound), while the owner's resources keep working.
#include <functional>

#include "driver_test_util.hpp"

namespace rnic::systest {
namespace {

void expect_errc(Errc want, const std::function<void()>& call, const char* what) {
  try {
    call();
    ADD_FAILURE() << what << ": accepted, want " << errc_name(want);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), want) << what << ": " << errc_name(e.code()) << ": " << e.what();
  }
}

TEST_F(DriverSystem, QuotasRefusedWithKQuota) {
  Limits l;
  l.max_pds = 1;
  l.max_stags = 2;
  l.max_stags_per_pd = 2;
  l.max_streams = 1;
  l.max_posted = 2;
  l.max_buffer_bytes = 64 * 1024;
  auto c = dev_->create_client(l);
  const PdId pd = c->alloc_pd();
  expect_errc(
      Errc::kQuota, [&] { c->alloc_pd(); }, "second PD");
  const Buffer b = c->alloc_buffer(32 * 1024);
  expect_errc(
      Errc::kQuota, [&] { c->alloc_buffer(33 * 1024); }, "buffer bytes over the limit");
  RegisterRequest rq;
  rq.pd = pd;
  rq.buffer = b.id;
  rq.length = 4096;
  const Registration r1 = c->register_memory(rq);
  rq.offset = 4096;
  c->register_memory(rq);
  rq.offset = 8192;
  expect_errc(
      Errc::kQuota, [&] { c->register_memory(rq); }, "third STag");
  const StreamId s = c->create_stream(pd);
  expect_errc(
      Errc::kQuota, [&] { c->create_stream(pd); }, "second stream");
  c->configure_queue(s, 0, 4);
  c->post_recv(s, 0, b.id, 16384, 1024, 1);
  c->post_recv(s, 0, b.id, 17408, 1024, 2);
  expect_errc(
      Errc::kQuota, [&] { c->post_recv(s, 0, b.id, 18432, 1024, 3); }, "third posted buffer");

  // A refusal changed nothing: freeing one STag makes room for exactly one more.
  c->invalidate(r1.stag);
  rq.offset = 8192;
  EXPECT_NO_THROW(c->register_memory(rq));
  expect_errc(
      Errc::kQuota, [&] { c->register_memory(rq); }, "STag after refill");

  // The posted buffers are what delivery consumes: one message frees one slot.
  dev_->require_sim().inject(s, 0, untagged_segment(0, 1, 0, std::vector<std::uint8_t>(10, 1)));
  ASSERT_EQ(drain(*dev_, *client_, 0).size(), 0u);  // the other client sees nothing
  std::vector<Completion> got;
  for (int i = 0; i < 50 && got.empty(); ++i) c->wait(got, 100);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].cookie, 1u);
  EXPECT_NO_THROW(c->post_recv(s, 0, b.id, 18432, 1024, 3));
}

TEST_F(DriverSystem, AnotherClientsHandlesAreNotFound) {
  // Owner: a PD, a buffer, a STag, a stream with a queue.
  const PdId pd = client_->alloc_pd();
  const Buffer b = filled_buffer(16 * 1024, 0xA5);
  RegisterRequest rq;
  rq.pd = pd;
  rq.buffer = b.id;
  rq.length = 4096;
  const Registration r = client_->register_memory(rq);
  const StreamId s = client_->create_stream(pd);
  client_->configure_queue(s, 0, 4);

  auto other = dev_->create_client();
  const PdId opd = other->alloc_pd();
  const Buffer ob = other->alloc_buffer(4096);
  expect_errc(
      Errc::kNotFound, [&] { other->dealloc_pd(pd); }, "dealloc another client's PD");
  expect_errc(
      Errc::kNotFound, [&] { other->free_buffer(b.id); }, "free another client's buffer");
  expect_errc(
      Errc::kNotFound, [&] { other->invalidate(r.stag); }, "invalidate another client's STag");
  expect_errc(
      Errc::kNotFound, [&] { other->create_stream(pd); }, "stream on another client's PD");
  RegisterRequest steal = rq;  // another client's buffer in the other's own PD
  steal.pd = opd;
  expect_errc(
      Errc::kNotFound, [&] { other->register_memory(steal); }, "register another client's buffer");
  RegisterRequest foreign_pd;  // own buffer, another client's PD
  foreign_pd.pd = pd;
  foreign_pd.buffer = ob.id;
  foreign_pd.length = 4096;
  expect_errc(
      Errc::kNotFound, [&] { other->register_memory(foreign_pd); }, "register in another client's PD");
  expect_errc(
      Errc::kNotFound, [&] { other->configure_queue(s, 1, 4); }, "configure another client's stream");
  expect_errc(
      Errc::kNotFound, [&] { other->post_recv(s, 0, ob.id, 0, 1024); }, "post to another client's stream");
  expect_errc(
      Errc::kNotFound, [&] { other->teardown_stream(s, Teardown::kAbortive); }, "tear down another client's stream");
  expect_errc(
      Errc::kNotFound, [&] { other->destroy_stream(s); }, "destroy another client's stream");

  // The owner's resources still work: a tagged message lands, the completion is the owner's only.
  const std::vector<std::uint8_t> payload(100, 0x5A);
  dev_->require_sim().inject(s, 0, tagged_segment(r.stag, 0, payload));
  const auto got = drain(*dev_, *client_, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, Completion::Kind::kTagged) << describe(got[0]);
  EXPECT_EQ(got[0].stag, r.stag);
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), b.data));
  std::vector<Completion> none;
  EXPECT_EQ(other->poll(none), 0u);
}

}  // namespace
}  // namespace rnic::systest
