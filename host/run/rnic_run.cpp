// SPDX-License-Identifier: Apache-2.0
// rnic-run: the main job. Moves real DDP traffic through the card (rnic-sim by default) with the host
// driver and checks every byte.
//
//   driver: client, PDs, DMA buffers, STags (some bound to a stream), streams, receive queues, posts
//   -> software Data Source (RFC 5041 5.2 segmentation, per-QN MSN) for random tagged and untagged
//      messages -> segments injected out of order within the DDP-SSN window (RFC 5043)
//   -> Device::sync, completions polled: every RFC 5041 5.4 field and the per-stream order checked
//   -> every placed byte checked, every byte outside the targeted ranges still holds the fill pattern
//   (the data steps run in batches of 1000 messages, so --messages up to 1e8 runs in bounded memory
//   and within the client's quotas; runs longer than a batch print a progress line)
//   -> one invalid segment per RFC 5041 7.2 error on its own stream: the reported type/code checked,
//      a valid segment after it dropped (7.1), the per-error counters checked
//   -> orderly teardown (posted buffers flushed), summary with simulated cycles.
//
// Exit status 0 only if every check passed; 1 on a failed check or a driver error; 2 on a usage error.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/ddp_errors.hpp"
#include "rnic/wire/segmentation.hpp"

namespace {

using namespace rnic;
using wire::ConstBytes;
using wire::DdpError;

constexpr std::uint8_t kFill = 0xA5;  // pattern of host memory no one was told to write
constexpr std::uint32_t kDataStreams = 3;
constexpr std::uint64_t kStagBytes = 256 * 1024;
constexpr std::uint64_t kGuard = 4096;  // bytes of each buffer on both sides of what is registered
constexpr std::uint32_t kErrRxBytes = 128;

// A failed check: reported, and the run ends with exit status 1.
struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Wire {  // one DDP Segment Chunk as the LLP hands it over
  std::uint32_t stream_index;
  std::uint16_t ssn;
  std::vector<std::uint8_t> segment;
};

struct TaggedBuf {  // one registered buffer
  Buffer buf;
  Registration reg;
  PdId pd = 0;
  std::optional<std::uint32_t> bound;  // data-stream index it is bound to
  std::uint64_t cursor = 0;            // next free byte (messages never overlap)
};

struct Message {  // what the card must report for one ULP message, per stream in order
  bool tagged = false;
  std::uint32_t stream_index = 0;
  std::uint16_t last_ssn = 0;
  Stag stag = 0;
  std::uint32_t qn = 0, msn = 0, length = 0;
  std::uint64_t rsvd_ulp = 0, cookie = 0, rx_offset = 0;
  std::uint32_t rx_len = 0;
  std::size_t image = 0;          // index of the buffer's Image the bytes land in
  std::uint64_t dest_offset = 0;  // offset of the first byte in it
  std::vector<std::uint8_t> bytes;
};

// Expected image of a buffer: the fill pattern with every message's bytes laid over it.
struct Image {
  const Buffer* buf;
  std::vector<std::uint8_t> want;
  std::string what;
};

void check(bool ok, const std::string& what) {
  if (!ok) throw CheckFailed(what);
}

// SimControl::inject, retried while the simulator's ingress queue is full.
void inject(Device& dev, StreamId stream, std::uint16_t ssn, const std::vector<std::uint8_t>& seg) {
  for (int attempt = 0;; ++attempt) {
    try {
      dev.require_sim().inject(stream, ssn, seg);
      return;
    } catch (const Error& e) {
      if (e.code() != Errc::kBusy || attempt >= 1000) throw;
      dev.require_sim().sync();
    }
  }
}

std::uint32_t log2_ceil(std::uint64_t n) {
  std::uint32_t l = 0;
  while ((std::uint64_t{1} << l) < n) ++l;
  return l;
}

std::string describe(const Completion& c) {
  return fmt::format(
      "{} stream {} ssn {} stag {:#x} qn {} msn {} length {} rsvd_ulp {:#x} cookie {} type {:#x} code {:#04x}",
      completion_kind_name(c.kind), c.stream, c.ssn, c.stag, c.qn, c.msn, c.length, c.rsvd_ulp, c.cookie, c.err_type,
      c.err_code);
}

// Every completion until `want` arrived; fails if they do not come within the timeout.
void collect(Client& client, std::vector<Completion>& out, std::size_t want, std::uint32_t timeout_ms) {
  std::vector<Completion> batch;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (out.size() < want) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    check(left.count() > 0, fmt::format("{} completions after {} ms, want {}", out.size(), timeout_ms, want));
    batch.clear();
    client.wait(batch, static_cast<std::uint32_t>(left.count()), 256);
    out.insert(out.end(), batch.begin(), batch.end());
  }
  // Anything beyond what was expected is a failure too.
  batch.clear();
  client.poll(batch, 256);
  out.insert(out.end(), batch.begin(), batch.end());
}

void verify_images(const std::vector<Image>& images) {
  for (const auto& im : images) {
    for (std::size_t i = 0; i < im.want.size(); ++i) {
      if (im.buf->data[i] != im.want[i]) {
        throw CheckFailed(fmt::format("{}: byte {} is {:#04x}, want {:#04x} ({})", im.what, i, im.buf->data[i],
                                      im.want[i], im.want[i] == kFill ? "outside every message" : "message payload"));
      }
    }
  }
}

// The fill pattern, flushed to the card (a card-memory bank: the driver copies a tagged completion's
// whole registration back, so the pattern must be on the card too).
Image fill_image(Client& client, const Buffer& b, std::string what) {
  std::fill(b.data, b.data + b.size, kFill);
  client.flush_buffer(b.id, 0, b.size);
  return Image{&b, std::vector<std::uint8_t>(b.size, kFill), std::move(what)};
}

// Messages per batch of the data phase (generated, injected and checked before the next): bounds the
// run's memory and the client's posted buffers (Limits::max_posted) and DMA memory whatever --messages.
constexpr std::uint64_t kBatchMessages = 1000;
// --messages above this is refused as a mistake (about a day against rnic-sim).
constexpr std::uint64_t kMaxMessages = 100'000'000;

struct Options {
  std::uint64_t seed = 0;
  std::uint64_t messages = 300;
  double progress_s = 5;      // a progress line at most this often (long runs)
  std::size_t mulpdu = 1450;  // 1500-byte MTU - IPv4 20 - SCTP 12 - DATA chunk 16 - DDP-SSN 2
  std::string device;
  std::string xclbin;  // OpenOptions::xclbin (xrt); empty: $RNIC_XCLBIN
};

int run(const Options& o) {
  std::mt19937_64 rng(o.seed);
  auto uni = [&rng](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };

  OpenOptions opts;
  opts.xclbin = o.xclbin;
  auto dev = Device::open(o.device, opts);
  const DeviceInfo& info = dev->info();
  fmt::print("rnic-run: device {} ({}): {}-bit, {} STags, {} streams, {} QNs, DDP-SSN window {}\n", info.device,
             info.backend, info.data_width, info.stags, info.streams, info.qns, info.ssn_window);
  check(info.qns >= 2 && info.streams >= 32 && info.ssn_window >= 4,
        "the card is too small for this run (needs 2 QNs, 32 streams, a DDP-SSN window of 4)");
  const std::uint32_t window = info.ssn_window;
  const std::size_t nrows = wire::kAllDdpErrors.size();
  const Counters start = dev->counters();
  check(start.errors.size() == nrows,
        fmt::format("{} per-error counters, ddp_errors.def has {} rows", start.errors.size(), nrows));

  // ---- Resources --------------------------------------------------------------------------------
  auto client = dev->create_client();
  const PdId pd[2] = {client->alloc_pd(), client->alloc_pd()};
  const std::uint32_t stream_pd[kDataStreams] = {0, 0, 1};  // PD index of each data stream
  std::vector<StreamId> streams;
  for (std::uint32_t s = 0; s < kDataStreams; ++s) streams.push_back(client->create_stream(pd[stream_pd[s]]));

  // STags: PD index and bound data stream. Every data stream can use at least two.
  struct StagPlan {
    std::uint32_t pd;
    std::optional<std::uint32_t> bound;
  };
  const std::vector<StagPlan> plan = {{0, std::nullopt}, {0, 0}, {0, 1}, {1, std::nullopt}, {1, 2}, {0, std::nullopt},
                                      {1, std::nullopt}, {0, 1}};
  std::vector<TaggedBuf> tagged(plan.size());
  std::vector<Image> images;
  images.reserve(plan.size() + kDataStreams + 2);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    TaggedBuf& t = tagged[i];
    t.buf = client->alloc_buffer(kStagBytes + 2 * kGuard);
    t.pd = plan[i].pd;
    t.bound = plan[i].bound;
    RegisterRequest rq;
    rq.pd = pd[t.pd];
    rq.buffer = t.buf.id;
    rq.offset = kGuard;
    rq.length = kStagBytes;
    rq.access = kRemoteWrite;
    rq.base_to = uni(1ull << 12, 1ull << 48);
    if (t.bound) rq.bind_stream = streams[*t.bound];
    images.push_back(fill_image(*client, t.buf, fmt::format("tagged buffer {}", i)));
    t.reg = client->register_memory(rq);
  }

  // ---- Data phase, in batches -------------------------------------------------------------------
  // Messages go in batches of kBatchMessages: generated, posted, injected, completed and checked
  // before the next batch is generated, so memory (messages, segments, receive pools, posted
  // buffers: the client's max_posted and max_buffer_bytes quotas) stays bounded however many
  // messages the run sends. The Data Sources (per-QN MSNs), DDP-SSNs and receive queues carry on
  // from one batch to the next; the tagged buffers are refilled and their cursors start over.
  const std::uint64_t first_batch = std::min<std::uint64_t>(o.messages, kBatchMessages);
  // Queues are configured once, sized for the most one QN can have posted in a batch.
  for (std::uint32_t s = 0; s < kDataStreams; ++s) {
    for (std::uint32_t qn = 0; qn < info.qns; ++qn) {
      client->configure_queue(streams[s], qn, std::clamp<std::uint32_t>(log2_ceil(first_batch + 1), 4, 16));
    }
  }
  std::vector<wire::DataSource> sources(kDataStreams, wire::DataSource(o.mulpdu));
  std::vector<std::uint16_t> next_ssn(kDataStreams, 0);  // wraps (RFC 5043: DDP-SSN is 16-bit, modular)
  std::uint64_t total_bytes = 0, total_segments = 0, tagged_msgs = 0, out_of_order = 0, completions = 0;
  std::uint64_t data_cycles = 0;
  const auto started = std::chrono::steady_clock::now();
  auto last_progress = started;
  std::uint64_t batches = 0;

  for (std::uint64_t first = 0; first < o.messages; first += kBatchMessages, ++batches) {
    const std::uint64_t end = std::min<std::uint64_t>(o.messages, first + kBatchMessages);
    const std::uint64_t count = end - first;
    if (first > 0) {  // the tagged buffers start over: fill pattern, cursors at 0
      for (std::size_t i = 0; i < tagged.size(); ++i) {
        tagged[i].cursor = 0;
        images[i] = fill_image(*client, tagged[i].buf, fmt::format("tagged buffer {}", i));
      }
    }
    std::vector<std::vector<Wire>> per_stream(kDataStreams);
    std::vector<std::vector<Message>> expected(kDataStreams);
    std::vector<std::uint64_t> rx_cursor(kDataStreams, 0);
    std::uint64_t batch_segments = 0;

    // ---- Data Source: generate and segment --------------------------------------------------------
    for (std::uint64_t m = first; m < end; ++m) {
      const auto s = static_cast<std::uint32_t>(uni(0, kDataStreams - 1));
      const auto pick = uni(0, 9);
      std::uint64_t len = pick == 0 ? 0 : pick < 6 ? uni(1, 2 * o.mulpdu) : uni(1, 9000);
      if (m == 0) len = 2048;  // the RFC 5041 5.2 example size
      Message x;
      x.stream_index = s;
      x.bytes.resize(len);
      for (auto& b : x.bytes) b = static_cast<std::uint8_t>(rng());
      x.cookie = m + 1;
      // Tagged messages go to a STag this stream may use (same PD; unbound or bound to it) at the
      // STag's cursor; when the STag is full the message goes untagged, so no byte is written twice.
      std::vector<std::size_t> usable;
      for (std::size_t i = 0; i < tagged.size(); ++i) {
        if (tagged[i].pd == stream_pd[s] && (!tagged[i].bound || *tagged[i].bound == s)) usable.push_back(i);
      }
      const std::size_t ti = usable[uni(0, usable.size() - 1)];
      TaggedBuf& t = tagged[ti];
      x.tagged = uni(0, 1) == 1 && t.cursor + len <= kStagBytes;
      wire::Result<wire::MessageSegmenter> seg = wire::Error{wire::Errc::kTruncated, "unset"};
      if (x.tagged) {
        x.stag = t.reg.stag;
        x.rsvd_ulp = uni(0, 255);
        x.image = ti;
        x.dest_offset = kGuard + t.cursor;
        seg = sources[s].send_tagged(t.reg.stag, t.reg.base_to + t.cursor, static_cast<std::uint8_t>(x.rsvd_ulp), len);
        t.cursor += len + uni(0, 64);  // unaligned, with gaps
        ++tagged_msgs;
      } else {
        x.qn = static_cast<std::uint32_t>(uni(0, info.qns - 1));
        x.msn = sources[s].next_msn(x.qn);
        x.length = static_cast<std::uint32_t>(len);
        x.rsvd_ulp = uni(0, wire::kUntaggedRsvdUlpMax);
        x.rx_len = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, len + uni(0, 100)));
        x.rx_offset = kGuard + rx_cursor[s] + uni(0, 63);
        rx_cursor[s] = x.rx_offset - kGuard + x.rx_len + 64;
        x.dest_offset = x.rx_offset;
        x.image = plan.size() + s;
        seg = sources[s].send_untagged(x.qn, x.rsvd_ulp, len);
      }
      if (!seg) throw CheckFailed("segmentation refused a valid message: " + seg.error().message());
      for (std::uint64_t i = 0; i < seg->segment_count(); ++i) {
        auto bytes = wire::encode_planned_segment(seg->segment(i), ConstBytes(x.bytes));
        if (!bytes) throw CheckFailed(bytes.error().message());
        per_stream[s].push_back({s, next_ssn[s]++, std::move(*bytes)});
        ++batch_segments;
      }
      x.last_ssn = static_cast<std::uint16_t>(next_ssn[s] - 1);
      total_bytes += len;
      expected[s].push_back(std::move(x));
    }
    total_segments += batch_segments;

    // Receive pools of this batch (one buffer per stream), buffers posted in MSN order.
    std::vector<Buffer> rx(kDataStreams);
    for (std::uint32_t s = 0; s < kDataStreams; ++s) {
      rx[s] = client->alloc_buffer(rx_cursor[s] + 2 * kGuard);
      images.push_back(fill_image(*client, rx[s], fmt::format("receive pool of stream {}", s)));
    }
    for (std::uint32_t s = 0; s < kDataStreams; ++s) {
      for (auto& x : expected[s]) {
        if (x.tagged) continue;
        client->post_recv(streams[s], x.qn, rx[s].id, x.rx_offset, x.rx_len, x.cookie);
      }
    }
    for (std::uint32_t s = 0; s < kDataStreams; ++s) {
      for (const auto& x : expected[s]) {
        auto& want = images[x.image].want;
        std::copy(x.bytes.begin(), x.bytes.end(), want.begin() + static_cast<std::ptrdiff_t>(x.dest_offset));
      }
    }

    // ---- The LLP: unordered delivery within the window, streams interleaved ------------------------
    const std::size_t block = std::min<std::size_t>(window, 16);
    for (auto& v : per_stream) {
      for (std::size_t i = 0; i < v.size(); i += block) {
        std::shuffle(v.begin() + static_cast<std::ptrdiff_t>(i),
                     v.begin() + static_cast<std::ptrdiff_t>(std::min(v.size(), i + block)), rng);
      }
    }
    std::vector<const Wire*> arrival;
    std::vector<std::size_t> pos(kDataStreams, 0);
    while (arrival.size() < batch_segments) {
      const auto s = static_cast<std::uint32_t>(uni(0, kDataStreams - 1));
      if (pos[s] < per_stream[s].size()) arrival.push_back(&per_stream[s][pos[s]++]);
    }
    {
      // Behind the highest DDP-SSN seen so far on its stream (16-bit serial arithmetic: SSNs wrap).
      std::vector<std::optional<std::uint16_t>> highest(kDataStreams);
      for (const auto* w : arrival) {
        auto& h = highest[w->stream_index];
        if (h && static_cast<std::int16_t>(static_cast<std::uint16_t>(w->ssn - *h)) < 0) {
          ++out_of_order;
        } else {
          h = w->ssn;
        }
      }
    }

    // ---- Inject, sync, collect ----------------------------------------------------------------------
    std::vector<Completion> done;
    std::vector<Completion> batch;
    const std::uint64_t inject_cycles0 = dev->require_sim().cycles();
    for (std::size_t i = 0; i < arrival.size(); ++i) {
      const Wire& w = *arrival[i];
      inject(*dev, streams[w.stream_index], w.ssn, w.segment);
      if (i % 256 == 255) {  // keep the completion ring drained
        batch.clear();
        client->poll(batch, 256);
        done.insert(done.end(), batch.begin(), batch.end());
      }
    }
    dev->require_sim().sync();
    data_cycles += dev->require_sim().cycles() - inject_cycles0;  // from the first segment to the card quiet
    collect(*client, done, count, 10000);

    std::vector<std::size_t> next(kDataStreams, 0);
    for (const auto& c : done) {
      const auto it = std::find(streams.begin(), streams.end(), c.stream);
      check(it != streams.end(), "completion for an unknown stream: " + describe(c));
      const auto s = static_cast<std::uint32_t>(it - streams.begin());
      check(c.kind != Completion::Kind::kError,
            fmt::format("unexpected error completion {} ({})", describe(c),
                        wire::ddp_error_from(c.err_type, c.err_code)
                            ? wire::error_name(*wire::ddp_error_from(c.err_type, c.err_code))
                            : "not in 7.2"));
      check(next[s] < expected[s].size(), "completion for no message: " + describe(c));
      const Message& x = expected[s][next[s]++];
      const bool same = x.tagged ? c.kind == Completion::Kind::kTagged && c.stag == x.stag &&
                                       c.rsvd_ulp == x.rsvd_ulp && c.ssn == x.last_ssn
                                 : c.kind == Completion::Kind::kUntagged && c.qn == x.qn && c.msn == x.msn &&
                                       c.length == x.length && c.rsvd_ulp == x.rsvd_ulp && c.ssn == x.last_ssn &&
                                       c.buffer == rx[s].id && c.offset == x.rx_offset && c.cookie == x.cookie;
      check(same,
            fmt::format("completion {} of stream {} is {}; the message sent was {} (stag {:#x} qn {} msn {} length {} "
                        "rsvd_ulp {:#x} last ssn {} offset {} cookie {})",
                        next[s] - 1, s, describe(c), x.tagged ? "tagged" : "untagged", x.stag, x.qn, x.msn,
                        x.bytes.size(), x.rsvd_ulp, x.last_ssn, x.rx_offset, x.cookie));
    }
    check(done.size() == count,
          fmt::format("{} completions for messages {}..{} ({} messages)", done.size(), first + 1, end, count));
    completions += done.size();
    verify_images(images);
    images.erase(images.begin() + static_cast<std::ptrdiff_t>(plan.size()), images.end());  // the pools go
    for (const auto& b : rx) client->free_buffer(b.id);

    // A progress line on long runs: after the first batch, then at most every o.progress_s seconds.
    const auto now = std::chrono::steady_clock::now();
    if (end < o.messages && (batches == 0 || now - last_progress >= std::chrono::duration<double>(o.progress_s))) {
      last_progress = now;
      const double secs = std::chrono::duration<double>(now - started).count();
      fmt::print(
          "rnic-run: progress: {}/{} messages ({:.1f}%), {} segments, {} payload bytes, {} cycles, {:.1f} s, "
          "about {:.0f} s left\n",
          end, o.messages, 100.0 * static_cast<double>(end) / static_cast<double>(o.messages), total_segments,
          total_bytes, data_cycles, secs, secs * static_cast<double>(o.messages - end) / static_cast<double>(end));
      std::fflush(stdout);
    }
  }

  const Counters mid = dev->counters();
  check(mid.segments - start.segments == total_segments,
        fmt::format("segment counter {} , injected {}", mid.segments - start.segments, total_segments));
  check(mid.bytes - start.bytes == total_bytes,
        fmt::format("byte counter {}, placed {}", mid.bytes - start.bytes, total_bytes));
  check(mid.messages - start.messages == o.messages,
        fmt::format("message counter {}, sent {}", mid.messages - start.messages, o.messages));
  check(mid.drops == start.drops && mid.duplicates == start.duplicates,
        "drops or duplicates counted for valid traffic");
  fmt::print(
      "rnic-run: data: {} messages ({} tagged, {} untagged) on {} streams, {} segments ({} arrived out of "
      "order), {} payload bytes placed, {} completions in order: all verified{}\n",
      o.messages, tagged_msgs, o.messages - tagged_msgs, kDataStreams, total_segments, out_of_order, total_bytes,
      completions, batches > 1 ? fmt::format(" ({} batches of up to {})", batches, kBatchMessages) : "");

  // ---- Error injection: one fresh stream per RFC 5041 7.2 error -------------------------------------
  Registration noaccess;  // remote read only: a tagged write to it is an access-rights failure
  {
    RegisterRequest rq;
    rq.pd = pd[0];
    rq.buffer = tagged[0].buf.id;
    rq.offset = kGuard;
    rq.length = 4096;
    rq.access = kRemoteRead;
    rq.base_to = 0x1000;
    noaccess = client->register_memory(rq);
  }
  const TaggedBuf& t0 = tagged[0];  // PD 0, unbound
  const TaggedBuf& tb = tagged[1];  // PD 0, bound to data stream 0
  auto tag = [](Stag st, std::uint64_t to, std::uint8_t dv = 1) {
    wire::TaggedHeader h;
    h.last = true;
    h.stag = st;
    h.to = to;
    h.dv = dv;
    return wire::DdpHeader(h);
  };
  auto untag = [](std::uint32_t qn, std::uint32_t msn, std::uint32_t mo, std::uint8_t dv = 1) {
    wire::UntaggedHeader h;
    h.last = true;
    h.qn = qn;
    h.msn = msn;
    h.mo = mo;
    h.dv = dv;
    return wire::DdpHeader(h);
  };
  struct Bad {
    const char* what;
    DdpError want;
    wire::DdpHeader hdr;
    std::uint16_t ssn = 0;
    std::uint32_t pd = 0;  // PD index of the error stream
    std::size_t payload = 16;
    bool access = false;  // counts as an access-rights failure too
    std::size_t raw = 0;  // > 0: send only this many bytes of the header (shorter than a header)
  };
  const std::vector<Bad> bad = {
      {"segment shorter than its header", DdpError::kLocalCatastrophic, tag(t0.reg.stag, t0.reg.base_to), 0, 0, 0,
       false, 10},
      {"STag key mismatch", DdpError::kTaggedInvalidStag, tag(t0.reg.stag ^ 0x01, t0.reg.base_to)},
      {"STag without remote write", DdpError::kTaggedInvalidStag, tag(noaccess.stag, noaccess.base_to), 0, 0, 16, true},
      {"TO past the end of the buffer", DdpError::kTaggedBaseBounds, tag(t0.reg.stag, t0.reg.base_to + kStagBytes - 8)},
      {"TO before the base", DdpError::kTaggedBaseBounds, tag(t0.reg.stag, t0.reg.base_to - 1)},
      {"STag of another PD", DdpError::kTaggedStagNotAssociated, tag(t0.reg.stag, t0.reg.base_to), 0, 1},
      {"STag bound to another stream", DdpError::kTaggedStagNotAssociated, tag(tb.reg.stag, tb.reg.base_to)},
      {"TO + length wraps 64 bits", DdpError::kTaggedToWrap, tag(t0.reg.stag, UINT64_MAX - 4)},
      {"tagged DV = 2", DdpError::kTaggedInvalidVersion, tag(t0.reg.stag, t0.reg.base_to, 2)},
      {"QN past the card's QNs", DdpError::kUntaggedInvalidQn, untag(info.qns + 5, 1, 0)},
      {"MSN with no buffer posted", DdpError::kUntaggedNoBuffer, untag(0, 2, 0)},
      {"MSN before the first buffer", DdpError::kUntaggedMsnRange, untag(0, 0, 0)},
      {"MO past the buffer", DdpError::kUntaggedInvalidMo, untag(0, 1, 4096)},
      {"MO + length past the buffer", DdpError::kUntaggedMessageTooLong, untag(0, 1, 100), 0, 0, 64},
      {"untagged DV = 0", DdpError::kUntaggedInvalidVersion, untag(0, 1, 0, 0)},
      {"DDP-SSN outside the window", DdpError::kLlpError, untag(0, 1, 0), static_cast<std::uint16_t>(window + 5)},
  };
  Buffer err_rx = client->alloc_buffer(bad.size() * (kErrRxBytes + 64) + 2 * kGuard);
  images.push_back(fill_image(*client, err_rx, "receive pool of the error streams"));
  fmt::print("rnic-run: error injection (RFC 5041 7.1 / 7.2), one stream each, a valid segment after each:\n");
  const std::vector<std::uint8_t> junk(64, 0xEE);
  std::vector<StreamId> err_streams;
  std::uint64_t err_segments = 0, mismatches = 0;
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const Bad& b = bad[i];
    const StreamId s = client->create_stream(pd[b.pd]);
    err_streams.push_back(s);
    client->configure_queue(s, 0, 4);
    client->post_recv(s, 0, err_rx.id, kGuard + i * (kErrRxBytes + 64), kErrRxBytes, 0xE000 + i);  // MSN 1 on QN 0
    const Counters before = dev->counters();
    auto seg = wire::encode_segment(b.hdr, ConstBytes(junk.data(), b.payload));
    if (!seg) throw CheckFailed(seg.error().message());
    std::vector<std::uint8_t> bytes = *seg;
    if (b.raw > 0) bytes.resize(b.raw);
    inject(*dev, s, b.ssn, bytes);
    // A valid segment after the error must be silently dropped (7.1).
    inject(*dev, s, static_cast<std::uint16_t>(b.ssn + 1),
           *wire::encode_segment(untag(0, 1, 0), ConstBytes(junk.data(), 8)));
    err_segments += 2;
    dev->require_sim().sync();
    std::vector<Completion> got;
    collect(*client, got, 1, 5000);
    const Counters after = dev->counters();
    check(got.size() == 1, fmt::format("{}: {} completions, want 1", b.what, got.size()));
    const Completion& c = got.front();
    check(c.kind == Completion::Kind::kError && c.stream == s, fmt::format("{}: got {}", b.what, describe(c)));
    const bool match =
        c.err_type == wire::error_type(b.want) && c.err_code == wire::error_code(b.want) && c.ssn == b.ssn;
    const auto row = static_cast<std::size_t>(
        std::find(wire::kAllDdpErrors.begin(), wire::kAllDdpErrors.end(), b.want) - wire::kAllDdpErrors.begin());
    const bool counted = after.errors[row] - before.errors[row] == 1 && after.drops - before.drops == 1 &&
                         after.access - before.access == (b.access ? 1u : 0u);
    const auto got_err = wire::ddp_error_from(c.err_type, c.err_code);
    fmt::print("  stream {:3} {:33} -> type {:#x} code {:#04x} {:42} expected type {:#x} code {:#04x}: {}{}\n", s,
               b.what, c.err_type, c.err_code, got_err ? wire::error_description(*got_err) : "(not in 7.2)",
               wire::error_type(b.want), wire::error_code(b.want), match ? "ok" : "MISMATCH",
               counted ? "" : " (counters wrong: error, drop or access counter did not advance by one)");
    if (!match || !counted) ++mismatches;
  }
  verify_images(images);
  check(mismatches == 0,
        fmt::format("{} of {} invalid segments were reported or counted wrong", mismatches, bad.size()));

  // ---- Teardown: the error streams' posted buffers come back flushed (RFC 5041 6.2) -----------------
  for (const StreamId s : streams) client->teardown_stream(s, Teardown::kGraceful);
  for (const StreamId s : err_streams) client->teardown_stream(s, Teardown::kAbortive);
  std::vector<Completion> flushed;
  collect(*client, flushed, err_streams.size(), 5000);
  for (const auto& c : flushed) {
    check(c.kind == Completion::Kind::kFlushed && c.buffer == err_rx.id,
          "teardown: want a flushed receive buffer of an error stream, got " + describe(c));
  }
  check(flushed.size() == err_streams.size(),
        fmt::format("teardown: {} flushed completions, want {}", flushed.size(), err_streams.size()));
  // STags first (fenced invalidate, RFC 5041 8.3.1 #6): a stream with STags bound to it stays.
  client->invalidate(noaccess.stag);
  for (const auto& t : tagged) {
    client->invalidate(t.reg.stag);
    client->free_buffer(t.buf.id);
  }
  for (const StreamId s : streams) client->destroy_stream(s);
  for (const StreamId s : err_streams) client->destroy_stream(s);
  client->free_buffer(err_rx.id);
  for (const PdId p : pd) client->dealloc_pd(p);

  const Counters end = dev->counters();
  std::uint64_t errs = 0;
  fmt::print("rnic-run: per-error counters (whole run):\n");
  for (std::size_t r = 0; r < nrows; ++r) {
    const auto e = wire::kAllDdpErrors[r];
    const std::uint64_t n = end.errors[r] - start.errors[r];
    errs += n;
    fmt::print("  type {:#x} code {:#04x} {:26} {}\n", wire::error_type(e), wire::error_code(e), wire::error_name(e),
               n);
  }
  fmt::print("rnic-run: injected {} segments ({} data, {} invalid or after an error)\n", total_segments + err_segments,
             total_segments, err_segments);
  fmt::print(
      "rnic-run: summary: {} messages, {} segments, {} bytes, {} errors reported as expected, dropped {}, "
      "{} cycles, {:.2f} bytes per cycle (data phase)\n",
      o.messages, total_segments, total_bytes, errs, end.drops - start.drops, data_cycles,
      data_cycles == 0 ? 0.0 : static_cast<double>(total_bytes) / static_cast<double>(data_cycles));
  // Every completion the card wrote named a buffer or STag the driver held (issue 11: none unmatched).
  const std::uint64_t unmatched = end.unmatched_completions.value_or(0);
  fmt::print("rnic-run: completions the driver could not match: {}\n", unmatched);
  check(unmatched == 0, fmt::format("{} completions matched no posted buffer or STag", unmatched));
  fmt::print("rnic-run: PASS (seed {})\n", o.seed);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "rnic-run: tagged and untagged DDP traffic through the card with the host driver, every byte, "
      "completion and RFC 5041 7.2 error checked"};
  Options o;
  o.seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  app.add_option("--seed", o.seed, "random seed (printed; pass it back to reproduce a run)");
  app.add_option("--messages", o.messages,
                 fmt::format("number of ULP messages to send, 1..{} (sent in batches of {}; long runs print a "
                             "progress line)",
                             kMaxMessages, kBatchMessages))
      ->check(CLI::Range(std::uint64_t{1}, kMaxMessages));
  app.add_option("--progress", o.progress_s,
                 "seconds between progress lines of a run longer than one batch (the first comes after the first "
                 "batch; 0: after every batch)")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--device", o.device, "sim:<socket> or xrt:<index> (default $RNIC_DEVICE, then sim:rnic-sim.sock)");
  app.add_option("--xclbin", o.xclbin, "xrt: the xclbin to load (default $RNIC_XCLBIN)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  fmt::print("rnic-run: seed {} messages {} MULPDU {}\n", o.seed, o.messages, o.mulpdu);
  try {
    return run(o);
  } catch (const CheckFailed& e) {
    fmt::print(stderr, "rnic-run: FAILED: {} (seed {})\n", e.what(), o.seed);
  } catch (const Error& e) {
    fmt::print(stderr, "rnic-run: FAILED: driver: {}: {} (seed {})\n", errc_name(e.code()), e.what(), o.seed);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rnic-run: FAILED: {} (seed {})\n", e.what(), o.seed);
  }
  return 1;
}
