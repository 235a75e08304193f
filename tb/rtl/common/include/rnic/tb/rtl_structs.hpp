// SPDX-License-Identifier: Apache-2.0
// The packed types rnic_kernel's stages hand each other (rnic_seg_t, rnic_lookup_t, rnic_verdict_t,
// rnic_dlv_t and their enums) in C++, expanded from hw/include/rnic/hw/structs.def, the rows
// rtl/rnic_structs.svh is generated from: a member added, removed, resized or moved there changes the
// RTL and these structs alike. A packed struct is one vector, its first member most significant;
// pack()/unpack() walk the members in that order, Bits holds the vector little endian (bit i is bit
// i%8 of byte i/8), put()/get() move a struct to and from a Verilated port (put_bytes/take_bytes: raw
// bytes of a port of any width). C++ member types: bool (1 bit), the smallest std::uintN_t up to 64
// bits, std::array<std::uint8_t, bits / 8> above (byte i at [8*i +: 8]), the enum or struct of a typed
// member. Each struct also has str() (every member, for failure messages) and == (equal as packed).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "rnic/hw/hw.hpp"

namespace rnic::tb {

// ---- bit vectors and Verilated signals of any width ---------------------------------------------

// Little endian: bit i is bit i%8 of byte i/8.
class Bits {
 public:
  explicit Bits(unsigned nbits) : n_(nbits), b_((nbits + 7) / 8, 0) {}
  unsigned size() const { return n_; }
  std::vector<std::uint8_t>& bytes() { return b_; }
  const std::vector<std::uint8_t>& bytes() const { return b_; }
  void set(unsigned lsb, unsigned w, std::uint64_t v) {
    for (unsigned i = 0; i < w; ++i) {
      const unsigned p = lsb + i;
      const auto m = static_cast<std::uint8_t>(1U << (p % 8));
      if (((v >> i) & 1U) != 0) {
        b_.at(p / 8) = static_cast<std::uint8_t>(b_.at(p / 8) | m);
      } else {
        b_.at(p / 8) = static_cast<std::uint8_t>(b_.at(p / 8) & ~m);
      }
    }
  }
  std::uint64_t get(unsigned lsb, unsigned w) const {
    std::uint64_t r = 0;
    for (unsigned i = 0; i < w; ++i) {
      const unsigned p = lsb + i;
      if (((b_.at(p / 8) >> (p % 8)) & 1U) != 0) r |= std::uint64_t{1} << i;
    }
    return r;
  }

 private:
  unsigned n_;
  std::vector<std::uint8_t> b_;
};

// Little-endian byte access to a port of any width (CData..QData, VlWide<N>): byte i of the buffer
// is bits [8*i+7 : 8*i] of the signal; bytes past the buffer are written 0, past the port read 0.
template <class T>
void put_bytes(T& sig, const std::uint8_t* p, std::size_t n) {
  if constexpr (std::is_integral_v<T>) {
    std::uint64_t x = 0;
    for (std::size_t i = 0; i < n && i < sizeof(T); ++i) x |= std::uint64_t{p[i]} << (8 * i);
    sig = static_cast<T>(x);
  } else {
    constexpr std::size_t kWords = sizeof(sig.m_storage) / sizeof(sig.m_storage[0]);
    for (std::size_t w = 0; w < kWords; ++w) {
      std::uint32_t x = 0;
      for (std::size_t b = 0; b < 4; ++b) {
        const std::size_t i = 4 * w + b;
        if (i < n) x |= std::uint32_t{p[i]} << (8 * b);
      }
      sig.m_storage[w] = x;
    }
  }
}
template <class T>
void put_bytes(T& sig, const std::vector<std::uint8_t>& v) {
  put_bytes(sig, v.data(), v.size());
}

template <class T>
void take_bytes(const T& sig, std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      p[i] = i < sizeof(T) ? static_cast<std::uint8_t>(static_cast<std::uint64_t>(sig) >> (8 * i)) : 0;
    } else {
      constexpr std::size_t kWords = sizeof(sig.m_storage) / sizeof(sig.m_storage[0]);
      p[i] = i / 4 < kWords ? static_cast<std::uint8_t>(sig.m_storage[i / 4] >> (8 * (i % 4))) : 0;
    }
  }
}
template <class T>
std::vector<std::uint8_t> take_bytes(const T& sig, std::size_t n) {
  std::vector<std::uint8_t> v(n);
  take_bytes(sig, v.data(), n);
  return v;
}

// ---- the types of structs.def ---------------------------------------------------------------------

// The C++ type of a plain member of `bits` bits.
template <unsigned W, class = void>
struct FieldType {
  static_assert(W % 8 == 0, "a member wider than 64 bits must be whole bytes");
  using type = std::array<std::uint8_t, W / 8>;
};
template <unsigned W>
struct FieldType<W, std::enable_if_t<(W >= 1 && W <= 64)>> {
  using type = std::conditional_t<
      W == 1, bool,
      std::conditional_t<
          W <= 8, std::uint8_t,
          std::conditional_t<W <= 16, std::uint16_t, std::conditional_t<W <= 32, std::uint32_t, std::uint64_t>>>>;
};
template <unsigned W>
using field_t = typename FieldType<W>::type;

// Width in bits of an enum or struct of structs.def; true for its structs.
template <class T>
inline constexpr unsigned kBitsOf = 0;
template <class T>
inline constexpr bool kIsRtlStruct = false;

// Enums (C++ names and values from the .def), each also named by its SV type (rnic_item_e, ...), and
// structs with every member zero.
#define RNIC_ENUM(type, cpp, bits, typed, desc)  \
  enum cpp : std::uint32_t;                      \
  using type = cpp;                              \
  template <>                                    \
  inline constexpr unsigned kBitsOf<cpp> = bits; \
  enum cpp : std::uint32_t {
#define RNIC_ENUM_VALUE(type, name, cpp, value, desc) cpp = value,
#define RNIC_ENUM_END(type) \
  }                         \
  ;
#define RNIC_STRUCT(type, cpp, desc)              \
  struct cpp;                                     \
  using type = cpp;                               \
  template <>                                     \
  inline constexpr bool kIsRtlStruct<cpp> = true; \
  struct cpp {
#define RNIC_MEMBER(type, field, bits, desc) field_t<bits> field{};
#define RNIC_MEMBER_T(type, field, member_type, desc) member_type field{};
#define RNIC_STRUCT_END(type)                                    \
  std::string str() const;                                       \
  bool operator==(const type& o) const;                          \
  bool operator!=(const type& o) const { return !(*this == o); } \
  }                                                              \
  ;
#include "rnic/hw/structs.def"

// Struct widths: the sum of the members'.
#define RNIC_STRUCT(type, cpp, desc) \
  template <>                        \
  inline constexpr unsigned kBitsOf<cpp> = 0
#define RNIC_MEMBER(type, field, bits, desc) +(bits)
#define RNIC_MEMBER_T(type, field, member_type, desc) +kBitsOf<member_type>
#define RNIC_STRUCT_END(type) ;
#include "rnic/hw/structs.def"

// visit_fields(s, v): v(name, bits, member) for each member of s in declaration order (most
// significant first); s const or not.
#define RNIC_STRUCT(type, cpp, desc) \
  template <class S, class V>        \
  std::enable_if_t<std::is_same_v<std::remove_const_t<S>, cpp>> visit_fields(S& s, V&& v) {
#define RNIC_MEMBER(type, field, bits, desc) v(#field, bits, s.field);
#define RNIC_MEMBER_T(type, field, member_type, desc) v(#field, kBitsOf<member_type>, s.field);
#define RNIC_STRUCT_END(type) }
#include "rnic/hw/structs.def"

// The widths the stage testbenches use (rtl/rnic_structs.svh).
inline constexpr unsigned kSegBits = kBitsOf<Seg>;
inline constexpr unsigned kLookupBits = kBitsOf<Lookup>;
inline constexpr unsigned kVerdictBits = kBitsOf<Verdict>;
inline constexpr unsigned kDlvBits = kBitsOf<Dlv>;

// Stream states (rnic_lookup_t.stream_state): hw.def's.
enum StreamState : unsigned {
  kStreamNormal = hw::kSTREAM_NORMAL,
  kStreamError = hw::kSTREAM_ERROR,
  kStreamTornDown = hw::kSTREAM_TORN_DOWN,
  kStreamPending = hw::kSTREAM_PENDING
};

// ---- packing ----------------------------------------------------------------------------------------

namespace detail {

template <class T>
struct IsByteArray : std::false_type {};
template <std::size_t N>
struct IsByteArray<std::array<std::uint8_t, N>> : std::true_type {};

// Members from the most significant down: pos is the bit just above the next member.
struct Packer {
  Bits& bits;
  unsigned pos;
  template <class T>
  void operator()(const char* /*name*/, unsigned w, const T& x) {
    if constexpr (kIsRtlStruct<T>) {
      visit_fields(x, *this);
    } else if constexpr (IsByteArray<T>::value) {
      pos -= w;
      for (std::size_t i = 0; i < x.size(); ++i) bits.set(pos + 8 * static_cast<unsigned>(i), 8, x[i]);
    } else {
      pos -= w;
      bits.set(pos, w, static_cast<std::uint64_t>(x));
    }
  }
};

struct Unpacker {
  const Bits& bits;
  unsigned pos;
  template <class T>
  void operator()(const char* /*name*/, unsigned w, T& x) {
    if constexpr (kIsRtlStruct<T>) {
      visit_fields(x, *this);
    } else if constexpr (IsByteArray<T>::value) {
      pos -= w;
      for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<std::uint8_t>(bits.get(pos + 8 * static_cast<unsigned>(i), 8));
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      pos -= w;
      x = bits.get(pos, w) != 0;
    } else {
      pos -= w;
      x = static_cast<T>(bits.get(pos, w));
    }
  }
};

struct Printer {
  std::string& out;
  template <class T>
  void operator()(const char* name, unsigned w, const T& x) {
    if (out.size() > 1) out += ' ';
    out += name;
    out += ' ';
    char buf[24];
    if constexpr (kIsRtlStruct<T>) {
      out += x.str();
    } else if constexpr (IsByteArray<T>::value) {
      for (std::size_t i = 0; i < x.size(); ++i) {  // byte 0 first
        std::snprintf(buf, sizeof buf, "%02x", x[i]);
        out += buf;
      }
    } else if (w <= 8) {
      std::snprintf(buf, sizeof buf, "%u", static_cast<unsigned>(x));
      out += buf;
    } else {
      std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(x));
      out += buf;
    }
  }
};

// A Verilated port of `bits` bits: CData/SData/IData/QData up to 8/16/32/64 bits, VlWide<N> above.
template <class Sig>
constexpr bool port_fits(unsigned bits) {
  if constexpr (std::is_integral_v<Sig>) {
    return bits <= 8 * sizeof(Sig) && (sizeof(Sig) == 1 || bits > 4 * sizeof(Sig));
  } else {
    return bits > 64 && sizeof(Sig::m_storage) == 4 * ((bits + 31) / 32);
  }
}

}  // namespace detail

// s as the packed vector of its SV type.
template <class S, class = std::enable_if_t<kIsRtlStruct<S>>>
Bits pack(const S& s) {
  Bits b(kBitsOf<S>);
  detail::Packer p{b, kBitsOf<S>};
  visit_fields(s, p);
  return b;
}

// The struct held in b (kBitsOf<S> bits; shorter: the missing high bits read 0, longer: a failure).
template <class S, class = std::enable_if_t<kIsRtlStruct<S>>>
S unpack(const Bits& b) {
  EXPECT_LE(b.size(), kBitsOf<S>) << "unpack: " << b.size() << " bits for a struct of " << kBitsOf<S>;
  Bits w(kBitsOf<S>);
  for (std::size_t i = 0; i < w.bytes().size() && i < b.bytes().size(); ++i) w.bytes()[i] = b.bytes()[i];
  S s;
  detail::Unpacker u{w, kBitsOf<S>};
  visit_fields(s, u);
  return s;
}
// The struct held in the little-endian bytes of a port (as take_bytes returns them).
template <class S, class = std::enable_if_t<kIsRtlStruct<S>>>
S unpack(const std::vector<std::uint8_t>& bytes) {
  Bits w(kBitsOf<S>);
  for (std::size_t i = 0; i < w.bytes().size() && i < bytes.size(); ++i) w.bytes()[i] = bytes[i];
  return unpack<S>(w);
}

// Drives / reads a Verilated port of the struct's SV type; the port's width must be the struct's.
template <class S, class Sig, class = std::enable_if_t<kIsRtlStruct<S>>>
void put(Sig& sig, const S& s) {
  static_assert(detail::port_fits<Sig>(kBitsOf<S>), "the port is not as wide as the struct (structs.def vs RTL)");
  put_bytes(sig, pack(s).bytes());
}
template <class S, class Sig, class = std::enable_if_t<kIsRtlStruct<S>>>
S get(const Sig& sig) {
  static_assert(detail::port_fits<Sig>(kBitsOf<S>), "the port is not as wide as the struct (structs.def vs RTL)");
  return unpack<S>(take_bytes(sig, (kBitsOf<S> + 7) / 8));
}

// str(): "{member value ...}" (1..8-bit members decimal, wider ones hex, byte arrays byte 0 first);
// ==: equal as packed (every member within its width).
#define RNIC_STRUCT(type, cpp, desc)    \
  inline std::string cpp::str() const { \
    std::string out = "{";              \
    detail::Printer p{out};             \
    visit_fields(*this, p);             \
    return out + "}";                   \
  }                                     \
  inline bool cpp::operator==(const cpp& o) const { return pack(*this).bytes() == pack(o).bytes(); }
#include "rnic/hw/structs.def"

}  // namespace rnic::tb
