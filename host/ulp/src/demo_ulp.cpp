// SPDX-License-Identifier: Apache-2.0
#include "rnic/ulp/demo_ulp.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "rnic/wire/ddp.hpp"
#include "rnic/wire/sctp_ddp.hpp"

namespace rnic::ulp {

static_assert(kMaxPrivateData == wire::kMaxPrivateData, "RFC 5043 5.2.3: 512 bytes");
static_assert(kAcceptHeaderSize + kTaggedBufferEntrySize * kMaxTaggedBuffers <= kMaxPrivateData);

namespace {

using wire::ConstBytes;
using wire::Errc;
using wire::make_error;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

wire::Error field_error(Errc code, const char* msg, const char* field, const std::string& why) {
  return make_error(code, fmt::format("{}.{}: {}", msg, field, why));
}

// Common header check: length, magic, version. Returns an error or nothing.
std::optional<wire::Error> check_header(ConstBytes pd, const char* msg, std::uint32_t magic, std::size_t min_size) {
  if (pd.size > kMaxPrivateData)
    return make_error(Errc::kPrivateDataTooLong, fmt::format("{}: private data is {} bytes, over {} (RFC 5043 5.2.3)",
                                                             msg, pd.size, kMaxPrivateData));
  if (pd.size < min_size)
    return make_error(Errc::kTruncated,
                      fmt::format("{}: private data is {} bytes, the header needs {}", msg, pd.size, min_size));
  if (pd.data == nullptr) return make_error(Errc::kTruncated, fmt::format("{}: private data is null", msg));
  const std::uint32_t got = wire::load_be32(pd.data + 4);
  if (got != magic)
    return field_error(Errc::kBadParameter, msg, "magic", fmt::format("0x{:08x}, want 0x{:08x}", got, magic));
  const std::uint16_t v = wire::load_be16(pd.data + 8);
  if (v != kVersion) return field_error(Errc::kBadParameter, msg, "version", fmt::format("{}, want {}", v, kVersion));
  return std::nullopt;
}

std::uint64_t segments_of(bool tagged, std::uint32_t length, std::uint32_t mulpdu) {
  const std::uint64_t per = mulpdu - (tagged ? wire::kTaggedHeaderSize : wire::kUntaggedHeaderSize);
  return length == 0 ? 1 : (length + per - 1) / per;
}

}  // namespace

wire::Status validate(const Initiate& m) {
  if (m.streams == 0 || m.streams > kMaxStreams)
    return field_error(Errc::kFieldOutOfRange, "Initiate", "streams",
                       fmt::format("{}, want 1..{}", m.streams, kMaxStreams));
  if (m.messages > kMaxMessages)
    return field_error(Errc::kFieldOutOfRange, "Initiate", "messages",
                       fmt::format("{}, want 0..{}", m.messages, kMaxMessages));
  if (m.max_message > kMaxMessageSize)
    return field_error(Errc::kFieldOutOfRange, "Initiate", "max_message",
                       fmt::format("{}, want 0..{}", m.max_message, kMaxMessageSize));
  if (m.mulpdu < kMinMulpdu || m.mulpdu > 65535)
    return field_error(Errc::kFieldOutOfRange, "Initiate", "mulpdu",
                       fmt::format("{}, want {}..65535 (RFC 5043 9)", m.mulpdu, kMinMulpdu));
  return wire::Ok{};
}

wire::Status validate(const Advertisement& a) {
  if (a.tagged.size() > kMaxTaggedBuffers)
    return field_error(Errc::kFieldOutOfRange, "Accept", "n",
                       fmt::format("{} tagged buffers, at most {} fit 512 bytes (RFC 5043 5.2.3)", a.tagged.size(),
                                   kMaxTaggedBuffers));
  if (a.posted > kMaxPosted)
    return field_error(Errc::kFieldOutOfRange, "Accept", "posted", fmt::format("{}, want 0..{}", a.posted, kMaxPosted));
  if (a.buffer_size > kMaxMessageSize)
    return field_error(Errc::kFieldOutOfRange, "Accept", "buffer_size",
                       fmt::format("{}, want 0..{}", a.buffer_size, kMaxMessageSize));
  for (std::size_t i = 0; i < a.tagged.size(); ++i) {
    const TaggedBuffer& b = a.tagged[i];
    const std::string field = fmt::format("tagged[{}]", i);
    if (b.length == 0) return field_error(Errc::kFieldOutOfRange, "Accept", field.c_str(), "length 0");
    if (b.to + b.length < b.to)
      return field_error(Errc::kFieldOutOfRange, "Accept", field.c_str(),
                         fmt::format("TO 0x{:x} + length {} wraps 64 bits (RFC 5041 7.1)", b.to, b.length));
    for (std::size_t j = 0; j < i; ++j) {
      const TaggedBuffer& o = a.tagged[j];
      if (o.stag == b.stag && b.to < o.to + o.length && o.to < b.to + b.length)
        return field_error(Errc::kFieldOutOfRange, "Accept", field.c_str(),
                           fmt::format("STag 0x{:08x} TO 0x{:x}+{} overlaps tagged[{}]", b.stag, b.to, b.length, j));
    }
  }
  return wire::Ok{};
}

wire::Result<std::vector<std::uint8_t>> encode_initiate(const Initiate& m) {
  if (auto s = validate(m); !s) return s.error();
  std::vector<std::uint8_t> out;
  out.reserve(kInitiateSize);
  wire::put_be32(out, m.rfc6581);
  wire::put_be32(out, kInitiateMagic);
  wire::put_be16(out, kVersion);
  wire::put_be16(out, m.streams);
  wire::put_be64(out, m.seed);
  wire::put_be32(out, m.messages);
  wire::put_be32(out, m.max_message);
  wire::put_be32(out, m.mulpdu);
  return out;
}

wire::Result<Initiate> decode_initiate(ConstBytes pd) {
  if (auto e = check_header(pd, "Initiate", kInitiateMagic, 12)) return *e;
  if (pd.size != kInitiateSize)
    return make_error(
        pd.size < kInitiateSize ? Errc::kTruncated : Errc::kBadParameter,
        fmt::format("Initiate: private data is {} bytes, version 1 is exactly {}", pd.size, kInitiateSize));
  Initiate m;
  m.rfc6581 = wire::load_be32(pd.data);
  m.streams = wire::load_be16(pd.data + 10);
  m.seed = wire::load_be64(pd.data + 12);
  m.messages = wire::load_be32(pd.data + 20);
  m.max_message = wire::load_be32(pd.data + 24);
  m.mulpdu = wire::load_be32(pd.data + 28);
  if (auto s = validate(m); !s) return s.error();
  return m;
}

wire::Result<std::vector<std::uint8_t>> encode_accept(const Advertisement& a) {
  if (auto s = validate(a); !s) return s.error();
  std::vector<std::uint8_t> out;
  out.reserve(kAcceptHeaderSize + kTaggedBufferEntrySize * a.tagged.size());
  wire::put_be32(out, a.rfc6581);
  wire::put_be32(out, kAcceptMagic);
  wire::put_be16(out, kVersion);
  wire::put_be16(out, static_cast<std::uint16_t>(a.tagged.size()));
  wire::put_be32(out, a.qn);
  wire::put_be32(out, a.posted);
  wire::put_be32(out, a.buffer_size);
  for (const TaggedBuffer& b : a.tagged) {
    wire::put_be32(out, b.stag);
    wire::put_be64(out, b.to);
    wire::put_be64(out, b.length);
  }
  return out;
}

wire::Result<Advertisement> decode_accept(ConstBytes pd) {
  if (auto e = check_header(pd, "Accept", kAcceptMagic, 12)) return *e;
  if (pd.size < kAcceptHeaderSize)
    return make_error(Errc::kTruncated,
                      fmt::format("Accept: private data is {} bytes, the header needs {}", pd.size, kAcceptHeaderSize));
  const std::size_t n = wire::load_be16(pd.data + 10);
  if (n > kMaxTaggedBuffers)
    return field_error(
        Errc::kFieldOutOfRange, "Accept", "n",
        fmt::format("{} tagged buffers, at most {} fit 512 bytes (RFC 5043 5.2.3)", n, kMaxTaggedBuffers));
  const std::size_t want = kAcceptHeaderSize + kTaggedBufferEntrySize * n;
  if (pd.size != want)
    return make_error(
        pd.size < want ? Errc::kTruncated : Errc::kBadParameter,
        fmt::format("Accept: private data is {} bytes, n = {} tagged buffers needs exactly {}", pd.size, n, want));
  Advertisement a;
  a.rfc6581 = wire::load_be32(pd.data);
  a.qn = wire::load_be32(pd.data + 12);
  a.posted = wire::load_be32(pd.data + 16);
  a.buffer_size = wire::load_be32(pd.data + 20);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* p = pd.data + kAcceptHeaderSize + kTaggedBufferEntrySize * i;
    a.tagged.push_back(TaggedBuffer{wire::load_be32(p), wire::load_be64(p + 4), wire::load_be64(p + 12)});
  }
  if (auto s = validate(a); !s) return s.error();
  return a;
}

MessageShape message_shape(const Initiate& m, std::uint32_t index) {
  const std::uint64_t h = splitmix64(m.seed ^ splitmix64(0x5EED0000ull + index));
  MessageShape s;
  s.stream = static_cast<std::uint16_t>(h % m.streams);
  s.tagged = ((h >> 40) & 1) != 0;
  s.length = static_cast<std::uint32_t>(splitmix64(h) % (std::uint64_t{m.max_message} + 1));
  return s;
}

std::vector<StreamDemand> stream_demand(const Initiate& m) {
  std::vector<StreamDemand> d(m.streams);
  for (std::uint32_t i = 0; i < m.messages; ++i) {
    const MessageShape s = message_shape(m, i);
    StreamDemand& x = d[s.stream];
    if (s.tagged) {
      ++x.tagged_messages;
      x.tagged_bytes += s.length;
    } else {
      ++x.untagged_messages;
      x.untagged_max_length = std::max(x.untagged_max_length, s.length);
    }
  }
  return d;
}

std::vector<std::uint64_t> tagged_buffer_sizes(const Initiate& m, std::uint16_t stream, std::size_t max_buffers) {
  max_buffers = std::clamp<std::size_t>(max_buffers, 1, kMaxTaggedBuffers);
  const std::vector<StreamDemand> d = stream_demand(m);
  if (stream >= d.size() || d[stream].tagged_messages == 0) return {};
  if (d[stream].tagged_bytes == 0) return {1};  // zero-length messages only: any buffer takes them
  const std::uint64_t target = (d[stream].tagged_bytes + max_buffers - 1) / max_buffers;
  std::vector<std::uint64_t> sizes{0};
  for (std::uint32_t i = 0; i < m.messages; ++i) {
    const MessageShape s = message_shape(m, i);
    if (s.stream != stream || !s.tagged) continue;
    // A group closes once it holds `target` bytes; the next message with bytes opens the next one.
    if (sizes.back() >= target && s.length > 0) sizes.push_back(0);
    sizes.back() += s.length;
  }
  return sizes;
}

wire::Result<Plan> make_plan(const Initiate& m, const std::vector<Advertisement>& per_stream) {
  if (auto s = validate(m); !s) return s.error();
  if (per_stream.size() != m.streams)
    return make_error(Errc::kBadParameter,
                      fmt::format("plan: {} advertisements for {} streams", per_stream.size(), m.streams));
  for (std::size_t s = 0; s < per_stream.size(); ++s) {
    if (auto v = validate(per_stream[s]); !v)
      return make_error(v.error().code, fmt::format("stream {}: {}", s, v.error().detail));
  }
  struct Cursor {
    std::size_t buffer = 0;
    std::uint64_t used = 0;
    std::uint32_t untagged = 0;
    std::uint16_t next_ssn = 1;  // the Initiate is DDP-SSN 0 (RFC 5043 6.1)
  };
  std::vector<Cursor> cur(m.streams);
  Plan plan;
  plan.initiate = m;
  plan.advertisements = per_stream;
  plan.messages.reserve(m.messages);
  for (std::uint32_t i = 0; i < m.messages; ++i) {
    const MessageShape s = message_shape(m, i);
    const Advertisement& a = per_stream[s.stream];
    Cursor& c = cur[s.stream];
    PlannedMessage p;
    p.index = i;
    p.stream = s.stream;
    p.tagged = s.tagged;
    p.length = s.length;
    if (s.tagged) {
      while (c.buffer < a.tagged.size() && a.tagged[c.buffer].length - c.used < s.length) {
        ++c.buffer;
        c.used = 0;
      }
      if (c.buffer >= a.tagged.size()) {
        std::uint64_t have = 0;
        for (const auto& b : a.tagged) have += b.length;
        return make_error(Errc::kFieldOutOfRange,
                          fmt::format("plan: stream {} message {} (tagged, {} bytes) does not fit the {} advertised "
                                      "tagged buffers ({} bytes in all)",
                                      s.stream, i, s.length, a.tagged.size(), have));
      }
      const TaggedBuffer& b = a.tagged[c.buffer];
      p.buffer = static_cast<std::uint32_t>(c.buffer);
      p.stag = b.stag;
      p.offset_in_buffer = c.used;
      p.to = b.to + c.used;
      p.rsvd_ulp = i & 0xFF;
      c.used += s.length;
    } else {
      if (c.untagged >= a.posted)
        return make_error(Errc::kFieldOutOfRange,
                          fmt::format("plan: stream {} message {} (untagged) is untagged message {} but only {} "
                                      "buffers are posted on QN {}",
                                      s.stream, i, c.untagged + 1, a.posted, a.qn));
      if (s.length > a.buffer_size)
        return make_error(Errc::kFieldOutOfRange,
                          fmt::format("plan: stream {} message {} (untagged, {} bytes) is longer than the posted "
                                      "buffers ({} bytes) of QN {}",
                                      s.stream, i, s.length, a.buffer_size, a.qn));
      ++c.untagged;
      p.qn = a.qn;
      p.msn = c.untagged;  // RFC 5041 4.3: MSN 1 for the first message of the queue
      p.rsvd_ulp = i;
    }
    p.segments = segments_of(s.tagged, s.length, m.mulpdu);
    c.next_ssn = static_cast<std::uint16_t>(c.next_ssn + p.segments);
    p.last_ddp_ssn = static_cast<std::uint16_t>(c.next_ssn - 1);
    plan.total_bytes += s.length;
    plan.total_segments += p.segments;
    plan.messages.push_back(p);
  }
  return plan;
}

void fill_message(std::uint64_t seed, std::uint32_t index, std::uint8_t* out, std::size_t length) {
  const std::uint64_t base = splitmix64(seed ^ (0xB17E5000ull + (std::uint64_t{index} << 20)));
  for (std::size_t k = 0; k < length; k += 8) {
    std::uint64_t w = splitmix64(base + k / 8);
    for (std::size_t j = k; j < std::min(length, k + 8); ++j, w >>= 8) out[j] = static_cast<std::uint8_t>(w);
  }
}

std::vector<std::uint8_t> message_bytes(std::uint64_t seed, std::uint32_t index, std::size_t length) {
  std::vector<std::uint8_t> v(length);
  fill_message(seed, index, v.data(), length);
  return v;
}

}  // namespace rnic::ulp
