// The packed structs of rtl/rnic_defs.svh in C++, and their packing into Verilator port words: a
// packed struct is one vector, first field most significant; Bits holds it little endian (bit i is
// bit i%8 of byte i/8), put_bytes/take_bytes move it to and from a port of any width. Shared by the
// stage testbenches (place: rnic_verdict_t in; validate: rnic_lookup_t in, rnic_verdict_t out).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

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

// Writes / reads the fields of a packed struct in declaration order (first field = most
// significant).
class FieldWriter {
 public:
  explicit FieldWriter(unsigned total) : bits_(total), pos_(total) {}
  void add(unsigned w, std::uint64_t v) {
    pos_ -= w;
    bits_.set(pos_, w, v);
  }
  // A logic [8*n-1:0] field holding byte i at [8*i +: 8].
  void add_bytes(const std::uint8_t* p, unsigned n) {
    pos_ -= 8 * n;
    for (unsigned i = 0; i < n; ++i) bits_.set(pos_ + 8 * i, 8, p[i]);
  }
  const Bits& done() const {
    EXPECT_EQ(pos_, 0U) << "struct layout does not add up";
    return bits_;
  }

 private:
  Bits bits_;
  unsigned pos_;
};

class FieldReader {
 public:
  explicit FieldReader(const Bits& b) : bits_(b), pos_(b.size()) {}
  std::uint64_t take(unsigned w) {
    pos_ -= w;
    return bits_.get(pos_, w);
  }
  void take_bytes(std::uint8_t* p, unsigned n) {
    pos_ -= 8 * n;
    for (unsigned i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(bits_.get(pos_ + 8 * i, 8));
  }
  unsigned left() const { return pos_; }

 private:
  const Bits& bits_;
  unsigned pos_;
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
      p[i] =
          i < sizeof(T) ? static_cast<std::uint8_t>(static_cast<std::uint64_t>(sig) >> (8 * i)) : 0;
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

// ---- rnic_defs.svh types ------------------------------------------------------------------------

enum Action : unsigned { kPlace = 0, kDrop = 1, kError = 2, kToken = 3 };
enum ItemKind : unsigned { kSeg = 0, kFence = 1, kStreamReset = 2, kQueueSet = 3 };
constexpr unsigned kSegBits = 16 * 3 + 1 + 1 + 1 + 2 + 40 + 32 + 64 + 32 + 32 + 32 + 144;
constexpr unsigned kVerdictBits = 2 + 2 + 16 + kSegBits + 64 + 16 + 5 + 32 + 4 + 8 + 5;

struct Seg {
  std::uint16_t stream = 0, ssn = 0, seg_bytes = 0;
  bool oversize = false, tagged = false, last = false;
  std::uint8_t dv = 1;
  std::uint64_t rsvd_ulp = 0;  // 40 bits
  std::uint32_t stag = 0;
  std::uint64_t to = 0;
  std::uint32_t qn = 0, msn = 0, mo = 0;
  std::array<std::uint8_t, 18> hdr_raw{};
};

struct Verdict {
  Action action = kPlace;
  ItemKind kind = kSeg;
  std::uint16_t arg = 0;
  Seg seg;
  std::uint64_t addr = 0;
  std::uint16_t pay = 0;
  std::uint8_t hdr = 18;
  std::uint32_t msg_len = 0;
  std::uint8_t err_type = 0, err_code = 0, err_idx = 0;
};

// rnic_seg_t, field by field (first field = most significant).
inline void add_seg(FieldWriter& f, const Seg& s) {
  f.add(16, s.stream);
  f.add(16, s.ssn);
  f.add(16, s.seg_bytes);
  f.add(1, s.oversize);
  f.add(1, s.tagged);
  f.add(1, s.last);
  f.add(2, s.dv);
  f.add(40, s.rsvd_ulp);
  f.add(32, s.stag);
  f.add(64, s.to);
  f.add(32, s.qn);
  f.add(32, s.msn);
  f.add(32, s.mo);
  f.add_bytes(s.hdr_raw.data(), 18);
}
inline Seg take_seg(FieldReader& r) {
  Seg s;
  s.stream = static_cast<std::uint16_t>(r.take(16));
  s.ssn = static_cast<std::uint16_t>(r.take(16));
  s.seg_bytes = static_cast<std::uint16_t>(r.take(16));
  s.oversize = r.take(1) != 0;
  s.tagged = r.take(1) != 0;
  s.last = r.take(1) != 0;
  s.dv = static_cast<std::uint8_t>(r.take(2));
  s.rsvd_ulp = r.take(40);
  s.stag = static_cast<std::uint32_t>(r.take(32));
  s.to = r.take(64);
  s.qn = static_cast<std::uint32_t>(r.take(32));
  s.msn = static_cast<std::uint32_t>(r.take(32));
  s.mo = static_cast<std::uint32_t>(r.take(32));
  r.take_bytes(s.hdr_raw.data(), 18);
  return s;
}

inline Bits pack(const Verdict& v) {
  FieldWriter f(kVerdictBits);
  f.add(2, v.action);
  f.add(2, v.kind);
  f.add(16, v.arg);
  add_seg(f, v.seg);
  f.add(64, v.addr);
  f.add(16, v.pay);
  f.add(5, v.hdr);
  f.add(32, v.msg_len);
  f.add(4, v.err_type);
  f.add(8, v.err_code);
  f.add(5, v.err_idx);
  return f.done();
}

inline Verdict unpack_verdict(const Bits& b) {
  FieldReader r(b);
  Verdict v;
  v.action = static_cast<Action>(r.take(2));
  v.kind = static_cast<ItemKind>(r.take(2));
  v.arg = static_cast<std::uint16_t>(r.take(16));
  v.seg = take_seg(r);
  v.addr = r.take(64);
  v.pay = static_cast<std::uint16_t>(r.take(16));
  v.hdr = static_cast<std::uint8_t>(r.take(5));
  v.msg_len = static_cast<std::uint32_t>(r.take(32));
  v.err_type = static_cast<std::uint8_t>(r.take(4));
  v.err_code = static_cast<std::uint8_t>(r.take(8));
  v.err_idx = static_cast<std::uint8_t>(r.take(5));
  EXPECT_EQ(r.left(), 0U) << "struct layout does not add up";
  return v;
}

// rnic_lookup_t (lookup -> validate).
constexpr unsigned kLookupBits =
    2 + 16 + kSegBits + 2 + 16 + 16 + 1 + 8 + 16 + 1 + 16 + 1 + 64 + 64 + 64 + 2 + 64 + 32 + 1;

enum StreamState : unsigned { kStreamNormal = 0, kStreamError = 1, kStreamTornDown = 2 };
enum RqStatus : unsigned { kRqOk = 0, kRqBadQn = 1, kRqNoBuf = 2, kRqMsnRange = 3 };

struct Lookup {
  ItemKind kind = kSeg;
  std::uint16_t arg = 0;
  Seg seg;
  std::uint8_t stream_state = kStreamNormal;  // 2 bits
  std::uint16_t stream_pd = 0;
  std::uint16_t next_ssn = 0;
  bool stag_valid = false;
  std::uint8_t stag_key = 0;
  std::uint16_t stag_pd = 0;
  bool stag_bound = false;
  std::uint16_t stag_stream = 0;
  bool stag_remote_write = false;
  std::uint64_t stag_base_to = 0, stag_length = 0, stag_addr = 0;
  std::uint8_t rq_status = kRqOk;  // 2 bits
  std::uint64_t rq_addr = 0;
  std::uint32_t rq_length = 0;
  bool local_fault = false;
};

inline Bits pack(const Lookup& l) {
  FieldWriter f(kLookupBits);
  f.add(2, l.kind);
  f.add(16, l.arg);
  add_seg(f, l.seg);
  f.add(2, l.stream_state);
  f.add(16, l.stream_pd);
  f.add(16, l.next_ssn);
  f.add(1, l.stag_valid);
  f.add(8, l.stag_key);
  f.add(16, l.stag_pd);
  f.add(1, l.stag_bound);
  f.add(16, l.stag_stream);
  f.add(1, l.stag_remote_write);
  f.add(64, l.stag_base_to);
  f.add(64, l.stag_length);
  f.add(64, l.stag_addr);
  f.add(2, l.rq_status);
  f.add(64, l.rq_addr);
  f.add(32, l.rq_length);
  f.add(1, l.local_fault);
  return f.done();
}

}  // namespace rnic::tb
