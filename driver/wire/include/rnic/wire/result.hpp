// SPDX-License-Identifier: Apache-2.0
// Result<T>: a value or a wire-library error, with no exceptions on the decode path.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace rnic::wire {

// Every way the wire library refuses an input. Each has a stable name for messages and tests.
enum class Errc {
  kTruncated = 1,           // the buffer ends before the structure it must hold
  kFieldOutOfRange,         // a value does not fit its wire field (e.g. DV > 3, RsvdULP > 40 bits)
  kMessageTooLong,          // ULP message length >= 2^32 (RFC 5041 5.2)
  kMulpduTooSmall,          // MULPDU cannot hold the DDP header plus one payload byte
  kTaggedOffsetWrap,        // initial TO + message length wraps 64 bits (RFC 5041 7.1 tagged #5)
  kPrivateDataTooLong,      // Stream Session Control private data > 512 bytes (RFC 5043 5.2.3)
  kPrivateDataOnTerminate,  // Terminate carries no private data (RFC 5043 5.2.3)
  kUnknownFunctionCode,     // Stream Session Control function code not 1..4
  kBadParameter,            // an SCTP parameter of the wrong type or length
  // the transmit gather's host side (gather.hpp, docs/transmit.md)
  kFraming,          // an SCTP packet's chunks do not tile it (RFC 9260 3.2)
  kFragmented,       // a descriptor chunk with U, B or E clear: abort the association
  kStrayGatherFlag,  // a chunk that is no descriptor has flag bit 7 set in a packet that is to be GATHER
};

const char* errc_name(Errc e) noexcept;

struct Error {
  Errc code;
  std::string detail;  // human-readable: which field, which value, which limit
  std::string message() const { return std::string(errc_name(code)) + ": " + detail; }
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  // value() on an error throws std::logic_error carrying the error message: a caller bug, not UB.
  const T& value() const& {
    check();
    return std::get<0>(v_);
  }
  T& value() & {
    check();
    return std::get<0>(v_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(v_));
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const {
    if (ok()) throw std::logic_error("Result::error() called on a value");
    return std::get<1>(v_);
  }

 private:
  void check() const {
    if (!ok()) throw std::logic_error("Result::value() on error: " + std::get<1>(v_).message());
  }
  std::variant<T, Error> v_;
};

struct Ok {};
using Status = Result<Ok>;

inline Error make_error(Errc code, std::string detail) { return Error{code, std::move(detail)}; }

}  // namespace rnic::wire
