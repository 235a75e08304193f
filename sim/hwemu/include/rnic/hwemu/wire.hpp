// SPDX-License-Identifier: Apache-2.0
// The wire format between XRT 2.13's hardware-emulation shim (libxrt_hwemu) and a device process, as
// XRT's own source defines it (tag 202210.2.13.466: common_em/rpc_messages.proto for the messages,
// hw_em/generic_pcie_hal2/shim.cxx and xcl_api_macros.h for the framing; call numbers from the
// xcl_macros.h libxrt-dev installs). docs/xrt-backend.md says how rnic-sim uses it.
//
// Framing. A call (XRT to device on the main socket; device to XRT on the host-memory socket) is a
// 14-byte header, the protobuf `call_packet_info {fixed64 size = 1; fixed32 xcl_api = 2}` with both
// fields set (09 <u64 size> 15 <u32 call>), then `size` bytes of the call's message. The device's
// reply on the main socket has a 9-byte header (09 <u64 size>: only field 1); XRT's reply on the
// host-memory socket has the full 14 bytes with call 0.
//
// Messages are proto2; the few fields used are varints (uint32, uint64, bool) and bytes, encoded and
// decoded here by hand (no protoc step): a decoder that refuses anything malformed (truncated
// varints and lengths, groups, lengths past the end) and skips unknown fields, as protobuf does.
#pragma once

#include <xrt/xcl_macros.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace rnic::hwemu {

// The calls rnic-sim answers or makes (numbers: XRT's xcl_macros.h).
enum class Call : std::uint32_t {
  kClose = xclClose_n,
  kAllocDeviceBuffer = xclAllocDeviceBuffer_n,
  kFreeDeviceBuffer = xclFreeDeviceBuffer_n,
  kCopyHostToDevice = xclCopyBufferHost2Device_n,
  kCopyDeviceToHost = xclCopyBufferDevice2Host_n,
  kWriteKernelCtrl = xclWriteAddrKernelCtrl_n,
  kReadKernelCtrl = xclReadAddrKernelCtrl_n,
  kGetDeviceTimestamp = xclGetDeviceTimestamp_n,
  kGetDebugMessages = xclGetDebugMessages_n,
  kSetEnvironment = xclSetEnvironment_n,
  kHostReadMem = xclQdma2HostReadMem_n,    // device -> XRT: read host memory
  kHostWriteMem = xclQdma2HostWriteMem_n,  // device -> XRT: write host memory
};

inline constexpr std::size_t kCallHeaderBytes = 14;
inline constexpr std::size_t kReplyHeaderBytes = 9;

inline void put_le(std::uint8_t* p, std::uint64_t v, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline std::uint64_t get_le(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

inline void encode_call_header(std::uint8_t (&h)[kCallHeaderBytes], std::uint64_t size, std::uint32_t call) {
  h[0] = 0x09;  // field 1, fixed64
  put_le(h + 1, size, 8);
  h[9] = 0x15;  // field 2, fixed32
  put_le(h + 10, call, 4);
}
inline void encode_reply_header(std::uint8_t (&h)[kReplyHeaderBytes], std::uint64_t size) {
  h[0] = 0x09;
  put_le(h + 1, size, 8);
}

struct CallHeader {
  std::uint64_t size = 0;
  std::uint32_t call = 0;
};
// nullopt unless the 14 bytes are the two fields in XRT's order with their tags.
inline std::optional<CallHeader> decode_call_header(const std::uint8_t (&h)[kCallHeaderBytes]) {
  if (h[0] != 0x09 || h[9] != 0x15) return std::nullopt;
  return CallHeader{get_le(h + 1, 8), static_cast<std::uint32_t>(get_le(h + 10, 4))};
}

// A message being encoded.
class Writer {
 public:
  Writer& varint(std::uint32_t field, std::uint64_t v) {
    tag(field, 0);
    raw_varint(v);
    return *this;
  }
  Writer& bytes(std::uint32_t field, const void* p, std::size_t n) {
    tag(field, 2);
    raw_varint(n);
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
    return *this;
  }
  const std::vector<std::uint8_t>& data() const { return out_; }

 private:
  void tag(std::uint32_t field, unsigned wire_type) { raw_varint((std::uint64_t{field} << 3) | wire_type); }
  void raw_varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<std::uint8_t>(v));
  }
  std::vector<std::uint8_t> out_;
};

// A decoded message: for each field number its last value (proto2 semantics for a non-repeated
// field); repeated fields (xclSetEnvironment's name-value pairs) are never needed.
class Message {
 public:
  // False (and the message empty) if the bytes are not a well-formed protobuf message of varint,
  // fixed64, length-delimited and fixed32 fields.
  bool parse(const std::uint8_t* p, std::size_t n) {
    fields_.clear();
    std::size_t at = 0;
    while (at < n) {
      std::uint64_t key = 0;
      if (!varint(p, n, at, key)) return fail();
      const auto field = key >> 3;
      const auto wire_type = static_cast<unsigned>(key & 7);
      if (field == 0 || field > 0x1FFFFFFF) return fail();
      Field f{static_cast<std::uint32_t>(field), wire_type, 0, nullptr, 0};
      switch (wire_type) {
        case 0:
          if (!varint(p, n, at, f.value)) return fail();
          break;
        case 1:
        case 5: {
          const unsigned w = wire_type == 1 ? 8 : 4;
          if (n - at < w) return fail();
          f.value = get_le(p + at, w);
          at += w;
          break;
        }
        case 2: {
          std::uint64_t len = 0;
          if (!varint(p, n, at, len) || len > n - at) return fail();
          f.bytes = p + at;
          f.length = static_cast<std::size_t>(len);
          at += f.length;
          break;
        }
        default:
          return fail();  // groups (3, 4) and the unused wire types
      }
      fields_.push_back(f);
    }
    return true;
  }
  // The last varint / fixed field `field`, or nullopt (absent, or of another wire type).
  std::optional<std::uint64_t> number(std::uint32_t field) const {
    const Field* f = last(field);
    if (f == nullptr || f->wire_type == 2) return std::nullopt;
    return f->value;
  }
  // The last length-delimited field `field` as {pointer, length}, or nullopt.
  struct Bytes {
    const std::uint8_t* data;
    std::size_t size;
  };
  std::optional<Bytes> bytes(std::uint32_t field) const {
    const Field* f = last(field);
    if (f == nullptr || f->wire_type != 2) return std::nullopt;
    return Bytes{f->bytes, f->length};
  }

 private:
  struct Field {
    std::uint32_t number;
    unsigned wire_type;
    std::uint64_t value;
    const std::uint8_t* bytes;
    std::size_t length;
  };
  const Field* last(std::uint32_t field) const {
    for (auto it = fields_.rbegin(); it != fields_.rend(); ++it) {
      if (it->number == field) return &*it;
    }
    return nullptr;
  }
  static bool varint(const std::uint8_t* p, std::size_t n, std::size_t& at, std::uint64_t& v) {
    v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (at >= n) return false;
      const std::uint8_t b = p[at++];
      v |= std::uint64_t{b & 0x7Fu} << shift;
      if ((b & 0x80) == 0) return shift < 63 || b <= 1;  // the tenth byte holds bit 63 only
    }
    return false;
  }
  bool fail() {
    fields_.clear();
    return false;
  }
  std::vector<Field> fields_;
};

}  // namespace rnic::hwemu
