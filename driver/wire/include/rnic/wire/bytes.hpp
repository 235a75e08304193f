// SPDX-License-Identifier: Apache-2.0
// Non-owning byte views, network-byte-order (big-endian) and little-endian access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rnic::wire {

// A read-only view of bytes (C++17 has no std::span). Never owns; the caller keeps the storage alive.
struct ConstBytes {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;

  ConstBytes() = default;
  ConstBytes(const std::uint8_t* d, std::size_t n) : data(d), size(n) {}
  ConstBytes(const std::vector<std::uint8_t>& v) : data(v.data()), size(v.size()) {}  // NOLINT

  // Sub-view; clamps to the view so it never points past the end.
  ConstBytes subview(std::size_t offset, std::size_t count = SIZE_MAX) const {
    if (offset > size) offset = size;
    std::size_t left = size - offset;
    return ConstBytes(data + offset, count < left ? count : left);
  }
  std::vector<std::uint8_t> to_vector() const { return std::vector<std::uint8_t>(data, data + size); }
};

// Big-endian loads; the caller has checked that offset + width <= size.
inline std::uint16_t load_be16(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }
inline std::uint32_t load_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}
inline std::uint64_t load_be64(const std::uint8_t* p) { return (std::uint64_t{load_be32(p)} << 32) | load_be32(p + 4); }

// Big-endian appends.
inline void put_be16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v));
}
inline void put_be32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  put_be16(out, static_cast<std::uint16_t>(v >> 16));
  put_be16(out, static_cast<std::uint16_t>(v));
}
inline void put_be64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  put_be32(out, static_cast<std::uint32_t>(v >> 32));
  put_be32(out, static_cast<std::uint32_t>(v));
}

// Big-endian stores in place; the caller has checked that offset + width <= size.
inline void store_be16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
inline void store_be32(std::uint8_t* p, std::uint32_t v) {
  store_be16(p, static_cast<std::uint16_t>(v >> 16));
  store_be16(p + 2, static_cast<std::uint16_t>(v));
}

// Little-endian loads and stores (the card's registers, completion entries and descriptors; the SCTP
// CRC32c field) of `bytes` bytes (0..8), low byte first; the caller has checked the bounds.
inline std::uint64_t load_le(const std::uint8_t* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}
inline void store_le(std::uint8_t* p, std::uint64_t v, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline std::uint16_t load_le16(const std::uint8_t* p) { return static_cast<std::uint16_t>(load_le(p, 2)); }
inline std::uint32_t load_le32(const std::uint8_t* p) { return static_cast<std::uint32_t>(load_le(p, 4)); }
inline std::uint64_t load_le64(const std::uint8_t* p) { return load_le(p, 8); }
inline void store_le16(std::uint8_t* p, std::uint16_t v) { store_le(p, v, 2); }
inline void store_le32(std::uint8_t* p, std::uint32_t v) { store_le(p, v, 4); }
inline void store_le64(std::uint8_t* p, std::uint64_t v) { store_le(p, v, 8); }

}  // namespace rnic::wire
