// SPDX-License-Identifier: Apache-2.0
// The rnic::Errc a call throws (a test failure, and kBackend, when it throws none).
#pragma once

#include <gtest/gtest.h>

#include "rnic/driver/rnic.hpp"

namespace rnic::systest {

template <class F>
rnic::Errc error_code(F f) {
  try {
    f();
  } catch (const rnic::Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no rnic::Error thrown";
  return rnic::Errc::kBackend;
}

}  // namespace rnic::systest
