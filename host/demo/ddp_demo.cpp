// SPDX-License-Identifier: Apache-2.0
// rnic-demo: moves real DDP traffic through the project's software stack and checks every byte.
//
//   Data Source (RFC 5041 5.2 segmentation, per-QN MSN) -> DDP Segment Chunks with DDP-SSN (RFC 5043)
//   -> pcap (SCTP INIT with the DDP adaptation indication, unordered DATA chunks, PPID 16)
//   -> arrival reordered within the DDP-SSN window -> reference Data Sink (placement, in-order delivery)
//   -> every placed byte, every completion and every byte outside the buffers verified
//   -> invalid segments injected, one per RFC 5041 7.2 error, with the codes and counters printed.
//
// Exit status 0 only if every check passed.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rnic/capture/sctp_capture.hpp"
#include "rnic/model/data_sink.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/sctp_ddp.hpp"
#include "rnic/wire/segmentation.hpp"

namespace {

using namespace rnic;
using wire::ConstBytes;
using wire::DdpError;

constexpr std::uint8_t kFill = 0xA5;  // pattern of host memory no one was told to write
constexpr std::uint32_t kDataStreams = 3;
constexpr std::uint32_t kPd = 7;
constexpr std::uint32_t kNumStags = 8;
constexpr std::uint64_t kStagBytes = 256 * 1024;

struct Wire {  // one DDP Segment Chunk as the LLP hands it over
  std::uint32_t stream;
  std::uint16_t ssn;
  std::vector<std::uint8_t> segment;
};

struct Expected {  // what the sink must report, per stream, in order
  model::Completion c;
  std::uint64_t dest;  // host address of the message's first byte
  std::vector<std::uint8_t> bytes;
};

struct Stag {
  std::uint32_t stag;
  std::uint64_t base_to;
  std::uint64_t addr;
};

int fail(const std::string& what) {
  fmt::print(stderr, "rnic-demo: FAILED: {}\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Software DDP Data Source -> DDP/SCTP pcap -> reference Data Sink, with every byte checked"};
  std::uint64_t seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  unsigned messages = 300;
  std::size_t mulpdu = 1450;  // 1500-byte MTU - IPv4 20 - SCTP 12 - DATA chunk 16 - DDP-SSN 2
  std::string pcap_path;
  std::uint16_t window = 64;
  app.add_option("--seed", seed, "random seed (printed; pass it back to reproduce a run)");
  app.add_option("--messages", messages, "number of ULP messages to send")->check(CLI::Range(1u, 100000u));
  app.add_option("--mulpdu", mulpdu, "MULPDU: largest DDP segment the LLP carries")->check(CLI::Range(19, 65000));
  app.add_option("--pcap", pcap_path, "write the traffic as SCTP packets to this pcap file");
  app.add_option("--window", window, "DDP-SSN reorder window of the sink")->check(CLI::Range(2, 4096));
  CLI11_PARSE(app, argc, argv);

  fmt::print("rnic-demo: seed {} messages {} MULPDU {} window {}\n", seed, messages, mulpdu, window);
  std::mt19937_64 rng(seed);
  auto uni = [&rng](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };

  // Host memory: tagged buffers first, then untagged receive buffers, all else holds the fill pattern.
  model::HostMemory mem(64u << 20, kFill);
  model::DataSink::Config cfg;
  cfg.ssn_window = window;
  model::DataSink sink(mem, cfg);
  for (std::uint32_t s = 0; s < kDataStreams; ++s) sink.enable_stream(s, kPd);

  std::vector<Stag> stags;
  for (std::uint32_t i = 0; i < kNumStags; ++i) {
    model::StagEntry e;
    e.key = static_cast<std::uint8_t>(uni(0, 255));
    e.pd = kPd;
    if (i % 2 == 1) e.bound_stream = i % kDataStreams;
    e.base_to = uni(0, 1ull << 48);
    e.length = kStagBytes;
    e.host_addr = 4096 + i * (kStagBytes + 4096);
    sink.set_stag(i + 1, e);
    stags.push_back({model::make_stag(i + 1, e.key), e.base_to, e.host_addr});
  }
  std::uint64_t next_rx_addr = 4096 + kNumStags * (kStagBytes + 4096);

  // ---- Data Source: generate and segment -------------------------------------------------------
  std::vector<wire::DataSource> sources(kDataStreams, wire::DataSource(mulpdu));
  std::vector<std::uint16_t> next_ssn(kDataStreams, 0);
  std::vector<std::vector<Wire>> per_stream(kDataStreams);
  std::vector<std::vector<Expected>> expected(kDataStreams);
  std::vector<std::uint64_t> stag_cursor(kNumStags, 0);
  std::uint64_t total_bytes = 0, total_segments = 0, tagged_msgs = 0;

  for (unsigned m = 0; m < messages; ++m) {
    const auto stream = static_cast<std::uint32_t>(uni(0, kDataStreams - 1));
    const unsigned pick = static_cast<unsigned>(uni(0, 9));
    std::uint64_t len = pick == 0 ? 0 : pick < 6 ? uni(1, 2 * mulpdu) : uni(1, 9000);
    if (m == 0) len = 2048;  // the RFC 5041 5.2 example size
    std::vector<std::uint8_t> msg(len);
    for (auto& b : msg) b = static_cast<std::uint8_t>(rng());
    // Tagged messages go to a STag this stream may use (unbound ones, or those bound to it) at the
    // STag's cursor; when the STag is full the message goes untagged, so no byte is written twice.
    std::uint32_t si;
    do {
      si = static_cast<std::uint32_t>(uni(0, kNumStags - 1));
    } while (si % 2 == 1 && si % kDataStreams != stream);
    const bool tagged = uni(0, 1) == 1 && stag_cursor[si] + len <= kStagBytes;

    Expected x;
    x.c.stream = stream;
    x.bytes = msg;
    wire::Result<wire::MessageSegmenter> seg = wire::make_error(wire::Errc::kTruncated, "unset");
    if (tagged) {
      const std::uint64_t to = stags[si].base_to + stag_cursor[si];
      x.dest = stags[si].addr + stag_cursor[si];
      stag_cursor[si] += len + uni(0, 64);  // unaligned, with gaps
      x.c.tagged = true;
      x.c.stag = stags[si].stag;
      x.c.rsvd_ulp = uni(0, 255);
      seg = sources[stream].send_tagged(stags[si].stag, to, static_cast<std::uint8_t>(x.c.rsvd_ulp), len);
      ++tagged_msgs;
    } else {
      const auto qn = static_cast<std::uint32_t>(uni(0, cfg.num_qns - 1));
      const auto buf_len = static_cast<std::uint32_t>(len + uni(0, 100));
      x.dest = next_rx_addr;
      sink.post_buffer(stream, qn, next_rx_addr, buf_len);
      next_rx_addr += buf_len + 64;
      x.c.qn = qn;
      x.c.msn = sources[stream].next_msn(qn);
      x.c.length = static_cast<std::uint32_t>(len);
      x.c.rsvd_ulp = uni(0, wire::kUntaggedRsvdUlpMax);
      x.c.buffer_addr = x.dest;
      seg = sources[stream].send_untagged(qn, x.c.rsvd_ulp, len);
    }
    if (!seg) return fail("segmentation refused a valid message: " + seg.error().message());
    for (std::uint64_t i = 0; i < seg->segment_count(); ++i) {
      auto bytes = wire::encode_planned_segment(seg->segment(i), ConstBytes(msg));
      if (!bytes) return fail(bytes.error().message());
      per_stream[stream].push_back({stream, next_ssn[stream]++, std::move(*bytes)});
      ++total_segments;
    }
    total_bytes += len;
    expected[stream].push_back(std::move(x));
  }

  // ---- The LLP: unordered delivery within the window, streams interleaved ----------------------
  const std::size_t block = std::min<std::size_t>(window, 16);
  for (auto& v : per_stream) {
    for (std::size_t i = 0; i < v.size(); i += block) {
      std::shuffle(v.begin() + static_cast<std::ptrdiff_t>(i),
                   v.begin() + static_cast<std::ptrdiff_t>(std::min(v.size(), i + block)), rng);
    }
  }
  std::vector<Wire> arrival;
  std::vector<std::size_t> pos(kDataStreams, 0);
  while (arrival.size() < total_segments) {
    const auto s = static_cast<std::uint32_t>(uni(0, kDataStreams - 1));
    if (pos[s] < per_stream[s].size()) arrival.push_back(per_stream[s][pos[s]++]);
  }
  std::uint64_t out_of_order = 0;
  {
    std::vector<int> last(kDataStreams, -1);
    for (const auto& w : arrival) {
      if (static_cast<int>(w.ssn) < last[w.stream]) ++out_of_order;
      last[w.stream] = std::max(last[w.stream], static_cast<int>(w.ssn));
    }
  }

  if (!pcap_path.empty()) {
    capture::SctpCaptureWriter pcap(pcap_path, {0x0A000001, 5001}, {0x0A000002, 5002}, 0x1234ABCD);
    pcap.write_init_with_adaptation(static_cast<std::uint16_t>(kDataStreams), wire::kDdpAdaptationIndication);
    for (const auto& w : arrival) {
      pcap.write_data(static_cast<std::uint16_t>(w.stream), wire::kPpidDdpSegment,
                      ConstBytes(wire::encode_segment_chunk(w.ssn, ConstBytes(w.segment))));
    }
    fmt::print("rnic-demo: wrote {} SCTP packets to {}\n", pcap.packets_written(), pcap_path);
  }

  // ---- Data Sink --------------------------------------------------------------------------------
  for (const auto& w : arrival) sink.receive(w.stream, w.ssn, ConstBytes(w.segment));

  // Completions: one per message, per stream in submission order, with the 5.4 fields.
  std::vector<std::size_t> next(kDataStreams, 0);
  std::uint64_t completions = 0;
  for (const auto& c : sink.completions()) {
    if (c.is_error)
      return fail(fmt::format("unexpected error completion on stream {}: {}", c.stream, wire::error_name(c.error)));
    if (c.stream >= kDataStreams || next[c.stream] >= expected[c.stream].size())
      return fail("completion for no message");
    const Expected& x = expected[c.stream][next[c.stream]++];
    const bool same =
        c.tagged == x.c.tagged && c.rsvd_ulp == x.c.rsvd_ulp &&
        (c.tagged ? c.stag == x.c.stag
                  : c.qn == x.c.qn && c.msn == x.c.msn && c.length == x.c.length && c.buffer_addr == x.c.buffer_addr);
    if (!same)
      return fail(
          fmt::format("completion {} on stream {} does not match the message sent", next[c.stream] - 1, c.stream));
    ++completions;
  }
  sink.completions().clear();
  if (completions != messages) return fail(fmt::format("{} completions for {} messages", completions, messages));

  // Every byte placed where it belongs; every other byte still holds the fill pattern.
  std::vector<const Expected*> owner(mem.size(), nullptr);
  for (const auto& v : expected) {
    for (const auto& x : v) {
      for (std::size_t b = 0; b < x.bytes.size(); ++b) owner[x.dest + b] = &x;
    }
  }
  for (std::size_t a = 0; a < mem.size(); ++a) {
    const std::uint8_t want = owner[a] == nullptr ? kFill : owner[a]->bytes[a - owner[a]->dest];
    if (mem.data()[a] != want) {
      return fail(fmt::format("host byte {:#x} is {:#04x}, want {:#04x} ({})", a, mem.data()[a], want,
                              owner[a] == nullptr ? "outside every message" : "message payload"));
    }
  }

  const auto& k = sink.counters();
  fmt::print(
      "rnic-demo: data: {} messages ({} tagged, {} untagged) on {} streams, {} segments "
      "({} arrived out of order), {} payload bytes placed, {} completions in order: all verified\n",
      messages, tagged_msgs, messages - tagged_msgs, kDataStreams, total_segments, out_of_order, k.bytes_placed,
      completions);

  // ---- Error injection: one fresh stream per RFC 5041 7.2 error -------------------------------------
  struct Bad {
    const char* what;
    DdpError want;
    wire::DdpHeader hdr;
    std::uint16_t ssn = 0;
    std::uint32_t pd = kPd;
    std::size_t payload = 16;
  };
  const Stag& s0 = stags[0];
  auto tag = [](std::uint32_t st, std::uint64_t to, std::uint8_t dv = 1) {
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
  const std::vector<Bad> bad = {
      {"STag key mismatch", DdpError::kTaggedInvalidStag, tag(s0.stag ^ 0x01, s0.base_to)},
      {"TO past the end of the buffer", DdpError::kTaggedBaseBounds, tag(s0.stag, s0.base_to + kStagBytes - 8)},
      {"STag of another protection domain", DdpError::kTaggedStagNotAssociated, tag(s0.stag, s0.base_to), 0, kPd + 1},
      {"TO + length wraps 64 bits", DdpError::kTaggedToWrap, tag(s0.stag, UINT64_MAX - 4)},
      {"tagged DV = 2", DdpError::kTaggedInvalidVersion, tag(s0.stag, s0.base_to, 2)},
      {"QN 9 of 4", DdpError::kUntaggedInvalidQn, untag(9, 1, 0)},
      {"MSN with no buffer posted", DdpError::kUntaggedNoBuffer, untag(1, 1, 0)},
      {"MSN before the first buffer", DdpError::kUntaggedMsnRange, untag(0, 0, 0)},
      {"MO past the buffer", DdpError::kUntaggedInvalidMo, untag(0, 1, 4096)},
      {"MO + length past the buffer", DdpError::kUntaggedMessageTooLong, untag(0, 1, 100), 0, kPd, 64},
      {"untagged DV = 0", DdpError::kUntaggedInvalidVersion, untag(0, 1, 0, 0)},
      {"DDP-SSN outside the window", DdpError::kLlpError, untag(0, 1, 0), static_cast<std::uint16_t>(window + 5)},
  };
  fmt::print("rnic-demo: error injection (RFC 5041 7.1 / 7.2):\n");
  std::uint32_t stream = kDataStreams;
  const std::vector<std::uint8_t> junk(64, 0xEE);
  for (const auto& b : bad) {
    sink.enable_stream(stream, b.pd);
    sink.post_buffer(stream, 0, next_rx_addr, 128);  // MSN 1 on QN 0: 128 bytes
    next_rx_addr += 128 + 64;
    auto seg = wire::encode_segment(b.hdr, ConstBytes(junk.data(), b.payload));
    sink.receive(stream, b.ssn, ConstBytes(*seg));
    // A valid segment after the error must be silently dropped (7.1).
    auto ok = wire::encode_segment(untag(0, 1, 0), ConstBytes(junk.data(), 8));
    const auto drops_before = sink.counters().drops;
    sink.receive(stream, static_cast<std::uint16_t>(b.ssn + 1), ConstBytes(*ok));
    if (sink.completions().size() != 1)
      return fail(fmt::format("{}: {} completions, want 1", b.what, sink.completions().size()));
    const auto c = sink.completions().front();
    sink.completions().clear();
    if (!c.is_error || c.error != b.want)
      return fail(fmt::format("{}: got {} want {}", b.what, wire::error_name(c.error), wire::error_name(b.want)));
    if (sink.counters().drops != drops_before + 1) return fail(fmt::format("{}: later segment not dropped", b.what));
    fmt::print("  stream {:2} {:34} -> type {:#x} code {:#04x} {} (segment {} bytes, header {} bytes reported)\n",
               stream, b.what, wire::error_type(c.error), wire::error_code(c.error), wire::error_description(c.error),
               c.segment_length, c.header_bytes.size());
    ++stream;
  }
  for (std::size_t a = 0; a < mem.size(); ++a) {
    if (owner[a] == nullptr && mem.data()[a] != kFill)
      return fail(fmt::format("invalid segment wrote host address {:#x}", a));
  }
  const auto& kk = sink.counters();
  std::uint64_t errs = 0;
  for (const auto& [e, n] : kk.errors) errs += n;
  fmt::print(
      "rnic-demo: counters: segments {} bytes placed {} messages delivered {} errors {} "
      "dropped-after-error {} access violations {}\n",
      kk.segments, kk.bytes_placed, kk.messages_delivered, errs, kk.drops, kk.access_violations);
  fmt::print("rnic-demo: PASS (seed {})\n", seed);
  return 0;
}
