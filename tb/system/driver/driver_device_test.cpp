// SPDX-License-Identifier: Apache-2.0
// Device-level behaviour through the driver against rnic-sim: untagged messages across the 32-bit
// MSN wrap (RFC 5041 4.3), the largest segment the card takes (DeviceInfo::max_segment_bytes), and
// the owner's published tables (what rnicctl shows) after completions.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "driver_test_util.hpp"
#include "rnic/tb/seed.hpp"

namespace rnic::systest {
namespace {

std::vector<std::uint8_t> bytes_of(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + 13 * i);
  return v;
}

// RFC 5041 5.2 on the card and through the driver: a long run of zero-length tagged messages on one
// stream, across the 16-bit DDP-SSN wrap, each naming an STag the client may not hold (random, 0,
// another client's, its own), then a message with a payload. Every one is delivered to the stream's
// owner in DDP-SSN order with its STag and RsvdULP; nothing is placed (the client's registered buffer
// keeps its fill until the last message's bytes); nothing is unmatched. RNIC_ZERO_LENGTH_MESSAGES sets
// the count (default 66000: past the wrap at 65536).
TEST_F(DriverSystem, ZeroLengthTaggedMessagesWithAnyStagAcrossTheSsnWrap) {
  const std::uint64_t seed = rnic::tb::random_test_seed();
  std::mt19937_64 rng(seed);
  const char* env = std::getenv("RNIC_ZERO_LENGTH_MESSAGES");
  const std::uint32_t n = env != nullptr ? static_cast<std::uint32_t>(std::stoul(env)) : 66000;
  const PdId pd = client_->alloc_pd();
  const StreamId s = client_->create_stream(pd);
  const Buffer mine = filled_buffer(4096, 0xEE);
  RegisterRequest rq;
  rq.pd = pd;
  rq.buffer = mine.id;
  rq.length = 4096;
  const Stag own = client_->register_memory(rq).stag;
  auto other = dev_->create_client();
  const PdId opd = other->alloc_pd();
  Buffer ob = other->alloc_buffer(4096);
  rq.pd = opd;
  rq.buffer = ob.id;
  const Stag theirs = other->register_memory(rq).stag;
  std::vector<Stag> stags(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    switch (rng() % 4) {
      case 0:
        stags[i] = static_cast<Stag>(rng());
        break;
      case 1:
        stags[i] = 0;
        break;
      case 2:
        stags[i] = theirs;
        break;
      default:
        stags[i] = own;
    }
  }
  const std::vector<std::uint8_t> last_bytes = bytes_of(100, 7);
  constexpr std::uint32_t kBatch = 2000;  // injected, then drained: the completion ring stays short
  std::uint32_t next = 0, wrong = 0;
  std::vector<Completion> got;
  for (std::uint32_t from = 0; from <= n; from += kBatch) {
    const std::uint32_t to = std::min(n + 1, from + kBatch);
    for (std::uint32_t i = from; i < to; ++i) {
      const auto ssn = static_cast<std::uint16_t>(i);
      if (i < n) {
        dev_->require_sim().inject(s, ssn, tagged_segment(stags[i], rng(), {}, true, static_cast<std::uint8_t>(i)));
      } else {
        dev_->require_sim().inject(s, ssn, tagged_segment(own, 0, last_bytes, true, 0x5A));
      }
    }
    got = drain(*dev_, *client_, to - from, 20000);
    ASSERT_EQ(got.size(), to - from) << "messages " << from << ".." << to - 1;
    for (const Completion& c : got) {
      const std::uint32_t i = next++;
      const bool ok = c.kind == Completion::Kind::kTagged && c.stream == s && c.ssn == static_cast<std::uint16_t>(i) &&
                      c.stag == (i < n ? stags[i] : own) && c.rsvd_ulp == (i < n ? (i & 0xFFu) : 0x5Au);
      if (!ok && wrong++ < 5) ADD_FAILURE() << "message " << i << ": " << describe(c);
    }
  }
  EXPECT_EQ(next, n + 1);
  EXPECT_EQ(wrong, 0u);
  EXPECT_TRUE(std::equal(last_bytes.begin(), last_bytes.end(), mine.data)) << "the last message's bytes";
  EXPECT_TRUE(std::all_of(mine.data + last_bytes.size(), mine.data + mine.size, [](std::uint8_t b) {
    return b == 0xEE;
  })) << "nothing else placed";
  EXPECT_TRUE(std::all_of(ob.data, ob.data + ob.size, [](std::uint8_t b) { return b == 0; }))
      << "nothing placed in the other client's buffer";
  EXPECT_EQ(other->poll(got), 0u);
  const StreamState st = client_->stream_state(s);
  EXPECT_EQ(st.state, StreamState::State::kNormal);
  EXPECT_EQ(st.unmatched_completions, 0u);
  EXPECT_EQ(dev_->counters().unmatched_completions, 0u);
}

// RFC 5041 4.3: the MSN is 32 bits and wraps. A queue configured to start at 0xFFFFFFFD (QUEUE_CONFIG's
// first MSN): six messages carry MSNs 0xFFFFFFFD, 0xFFFFFFFE, 0xFFFFFFFF, 0, 1, 2 and complete in that
// order into their buffers; the second message is two segments, the one carrying MSN 0 arrives first.
TEST_F(DriverSystem, UntaggedMessagesAcrossTheMsnWrapCompleteInOrder) {
  const PdId pd = client_->alloc_pd();
  const StreamId s = client_->create_stream(pd);
  client_->configure_queue(s, 2, 3, 0xFFFFFFFDu);
  constexpr std::uint32_t kSlot = 512;
  const Buffer rx = filled_buffer(8 * kSlot, 0xEE);
  const std::uint32_t msns[] = {0xFFFFFFFDu, 0xFFFFFFFEu, 0xFFFFFFFFu, 0u, 1u, 2u};
  for (std::uint32_t m = 0; m < 6; ++m) client_->post_recv(s, 2, rx.id, m * kSlot, kSlot, 0x700 + m);

  std::vector<std::vector<std::uint8_t>> msgs;
  for (std::uint32_t m = 0; m < 6; ++m) msgs.push_back(bytes_of(100 + 50 * m, static_cast<std::uint8_t>(m + 1)));
  // DDP-SSN order: message 1 in two segments (MO 0 and MO 60), everything else one segment each.
  std::vector<std::pair<std::uint16_t, std::vector<std::uint8_t>>> segs;
  std::uint16_t ssn = 0;
  for (std::uint32_t m = 0; m < 6; ++m) {
    const auto& msg = msgs[m];
    if (m == 1) {
      segs.emplace_back(ssn++, untagged_segment(2, msns[m], 0, {msg.begin(), msg.begin() + 60}, /*last=*/false));
      segs.emplace_back(ssn++, untagged_segment(2, msns[m], 60, {msg.begin() + 60, msg.end()}));
    } else {
      segs.emplace_back(ssn++, untagged_segment(2, msns[m], 0, msg));
    }
  }
  std::swap(segs[3], segs[4]);  // MSN 0 (DDP-SSN 4) arrives before 0xFFFFFFFF (DDP-SSN 3)
  for (const auto& [n, bytes] : segs) dev_->require_sim().inject(s, n, bytes);

  const auto got = drain(*dev_, *client_, 6);
  ASSERT_EQ(got.size(), 6u);
  for (std::uint32_t m = 0; m < 6; ++m) {
    SCOPED_TRACE(m);
    EXPECT_EQ(got[m].kind, Completion::Kind::kUntagged) << describe(got[m]);
    EXPECT_EQ(got[m].qn, 2u);
    EXPECT_EQ(got[m].msn, msns[m]);
    EXPECT_EQ(got[m].length, msgs[m].size());
    EXPECT_EQ(got[m].cookie, 0x700u + m);
    EXPECT_EQ(got[m].offset, m * kSlot);
    EXPECT_TRUE(std::equal(msgs[m].begin(), msgs[m].end(), rx.data + m * kSlot));
    EXPECT_EQ(rx.data[m * kSlot + msgs[m].size()], 0xEE) << "nothing past the message";
  }
  const StreamState st = client_->stream_state(s);
  EXPECT_EQ(st.state, StreamState::State::kNormal);
  EXPECT_EQ(st.unmatched_completions, 0u);
  // MSN 0xFFFFFFFF is behind the queue now (RFC 5041 7.2: 2/0x03 Invalid MSN - MSN range), not ahead.
  client_->post_recv(s, 2, rx.id, 6 * kSlot, kSlot, 0x7FF);
  dev_->require_sim().inject(s, ssn, untagged_segment(2, 0xFFFFFFFFu, 0, bytes_of(10, 9)));
  const auto late = drain(*dev_, *client_, 1);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].kind, Completion::Kind::kError) << describe(late[0]);
  EXPECT_EQ(late[0].err_type, wire::error_type(wire::DdpError::kUntaggedMsnRange));
  EXPECT_EQ(late[0].err_code, wire::error_code(wire::DdpError::kUntaggedMsnRange));
}

// DeviceInfo::max_segment_bytes is what the card takes: a segment of exactly that many bytes (header
// included) is placed; one byte more fails Local Catastrophic (RFC 5041 7.2 type 0 code 0) and
// places nothing.
TEST_F(DriverSystem, MaxSegmentBytesIsTheLargestSegmentTheCardTakes) {
  const std::uint32_t max = dev_->info().max_segment_bytes;
  ASSERT_GT(max, wire::kTaggedHeaderSize);
  const PdId pd = client_->alloc_pd();
  const Buffer b = filled_buffer(2 * max, 0x11);
  RegisterRequest r;
  r.pd = pd;
  r.buffer = b.id;
  r.length = b.size;
  const Stag stag = client_->register_memory(r).stag;
  const StreamId s = client_->create_stream(pd);
  const auto fits = bytes_of(max - wire::kTaggedHeaderSize, 3);
  ASSERT_EQ(tagged_segment(stag, 0, fits).size(), max);
  dev_->require_sim().inject(s, 0, tagged_segment(stag, 0, fits));
  auto got = drain(*dev_, *client_, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, Completion::Kind::kTagged) << describe(got[0]);
  EXPECT_TRUE(std::equal(fits.begin(), fits.end(), b.data));

  const auto over = bytes_of(max - wire::kTaggedHeaderSize + 1, 4);
  dev_->require_sim().inject(s, 1, tagged_segment(stag, max, over));
  got = drain(*dev_, *client_, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, Completion::Kind::kError) << describe(got[0]);
  EXPECT_EQ(got[0].ssn, 1u);
  EXPECT_EQ(got[0].err_type, wire::error_type(wire::DdpError::kLocalCatastrophic));
  EXPECT_EQ(got[0].err_code, wire::error_code(wire::DdpError::kLocalCatastrophic));
  EXPECT_TRUE(std::all_of(b.data + max, b.data + b.size, [](std::uint8_t x) { return x == 0x11; }))
      << "nothing of the oversized segment was placed";
}

// What rnicctl shows (the owner's published tables, read by an observer in another connection):
// after the card consumed a receive buffer and the owner synced, the buffer is consumed, not posted;
// after a poll alone, at the latest one publish interval (20 ms) and one driver call later.
TEST_F(DriverSystem, PublishedStateShowsConsumedBuffersAfterCompletions) {
  if (needs_own_sim()) GTEST_SKIP() << "opens a second device (an observer) on the test's own simulator";
  OpenOptions o;
  o.observer = true;
  auto rnicctl = Device::open(own_sim().device_string(), o);
  auto client_json = [&] {
    const auto doc = nlohmann::json::parse(rnicctl->published_state());
    return doc.at("clients").at(0);
  };
  const PdId pd = client_->alloc_pd();
  const StreamId s = client_->create_stream(pd);
  client_->configure_queue(s, 0, 2);
  const Buffer rx = filled_buffer(1024, 0);
  client_->post_recv(s, 0, rx.id, 0, 512, 1);
  dev_->require_sim().sync();
  EXPECT_EQ(client_json()["streams"][0]["queues"][0]["posted"], 1);
  EXPECT_EQ(client_json()["buffers"][0]["posted"], 1);

  dev_->require_sim().inject(s, 0, untagged_segment(0, 1, 0, bytes_of(40, 1)));
  dev_->require_sim().sync();  // no poll: the sync reads the completion ring
  auto c = client_json();
  EXPECT_EQ(c["streams"][0]["queues"][0]["posted"], 0);
  EXPECT_EQ(c["streams"][0]["queues"][0]["next_msn"], 2);
  EXPECT_EQ(c["buffers"][0]["posted"], 0);
  EXPECT_EQ(c["posted"], 0);
  EXPECT_EQ(c["pending_completions"], 1);
  std::vector<Completion> out;
  ASSERT_EQ(client_->poll(out), 1u);
  EXPECT_EQ(out[0].cookie, 1u);

  // Through wait/poll only: no sync, no other table change after the completion.
  client_->post_recv(s, 0, rx.id, 512, 512, 2);
  dev_->require_sim().inject(s, 1, untagged_segment(0, 2, 0, bytes_of(40, 2)));
  ASSERT_EQ(client_->wait(out, 5000), 1u);
  EXPECT_EQ(out[0].cookie, 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_EQ(client_->poll(out), 0u);
  c = client_json();
  EXPECT_EQ(c["streams"][0]["queues"][0]["posted"], 0);
  EXPECT_EQ(c["buffers"][0]["posted"], 0);
  EXPECT_EQ(c["pending_completions"], 0);
}

}  // namespace
}  // namespace rnic::systest
