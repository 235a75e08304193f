// SPDX-License-Identifier: Apache-2.0
// Shared set-up of the rnic_kernel tests: the environment at the test configuration and a standard
// programming (streams enabled, a tagged buffer, untagged queues).
//
// The implementation under test is chosen when the test program is built (tb/rtl/kernel/CMakeLists.txt
// builds each program three ways): the Verilated RTL (default), RNIC_TB_IMPL_SYSTEMC the SystemC-HLS
// model (rtl/hls) alone, RNIC_TB_IMPL_LOCKSTEP both at once, every host-memory write and completion of
// the model compared with the RTL's (rnic/tb/lockstep.hpp).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "Vrnic_kernel.h"
#include "rnic/hw/hw.hpp"
#include "rnic/tb/kernel_env.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/ddp_errors.hpp"

#ifndef RNIC_TB_DATA_WIDTH
#error "RNIC_TB_DATA_WIDTH must match the Verilated model"
#endif

#if defined(RNIC_TB_IMPL_SYSTEMC) || defined(RNIC_TB_IMPL_LOCKSTEP)
#include "kernel_model.hpp"
#include "rnic/tb/lockstep.hpp"
#endif

namespace rnic::tb::test {

#if defined(RNIC_TB_IMPL_SYSTEMC)
using Top = rnic::bus::ScKernel<ModelConfig>;
#elif defined(RNIC_TB_IMPL_LOCKSTEP)
using Top = LockstepKernel<Vrnic_kernel, ModelConfig>;
#else
using Top = Vrnic_kernel;
#endif
using Env = KernelEnv<Top>;
using rnic::wire::DdpError;
using rnic::wire::TaggedHeader;
using rnic::wire::UntaggedHeader;
using Bytes = std::vector<std::uint8_t>;

// The parameters of tb/rtl/kernel/CMakeLists.txt's models.
inline KernelParams test_params() {
  KernelParams p;
  p.data_width = RNIC_TB_DATA_WIDTH;
  p.stag_entries = 256;
  p.num_streams = 16;
  p.num_qns = 4;
  p.ssn_window = 64;
  p.max_seg_bytes = 16384;
  return p;
}

// Seeded configuration; prints the seed so a failure can be replayed with RNIC_TEST_SEED.
inline EnvConfig test_config(std::uint64_t default_seed, bool random_timing = true) {
  EnvConfig c;
  c.params = test_params();
  c.seed = random_test_seed(default_seed);
  if (random_timing) {
    c.mem = HostMemConfig::random(c.seed);
    c.input_idle = 0.2;
  }
  return c;
}

// Stream 0 and 1 enabled with PD 1; stream 2 with PD 2. STag kStag (index 5) over a 64 KiB buffer with
// base TO kBaseTo; queue 0 of streams 0..2 configured (64 entries).
struct Std {
  static constexpr std::uint32_t kStagIndex = 5;
  static constexpr std::uint8_t kKey = 1;  // the card issues keys: the first on a fresh card is 1
  static constexpr std::uint32_t kStag = (kStagIndex << 8) | kKey;
  static constexpr std::uint64_t kBaseTo = 0x100000000ull;
  static constexpr std::uint64_t kLen = 0x10000;
  std::uint64_t buf = 0;

  explicit Std(Env& env) {
    env.start();
    EXPECT_FALSE(env.stream_enable(0, 1));
    EXPECT_FALSE(env.stream_enable(1, 1));
    EXPECT_FALSE(env.stream_enable(2, 2));
    buf = env.alloc(kLen);
    StagArgs a;
    a.index = kStagIndex;
    a.pd = 1;
    a.base_to = kBaseTo;
    a.length = kLen;
    a.host_addr = buf;
    EXPECT_FALSE(env.stag_write(a));
    EXPECT_EQ(a.key, kKey);
    for (std::uint16_t s = 0; s < 3; ++s) EXPECT_FALSE(env.queue_config(s, 0, 6));
  }
};

// One untagged segment with the header fields a test names (RFC 5041 4.3).
inline Bytes untagged_segment(std::uint32_t qn, std::uint32_t msn, std::uint32_t mo, bool last, const Bytes& p,
                              std::uint8_t dv = 1, std::uint64_t rsvd_ulp = 0) {
  UntaggedHeader h;
  h.qn = qn;
  h.msn = msn;
  h.mo = mo;
  h.last = last;
  h.dv = dv;
  h.rsvd_ulp = rsvd_ulp;
  return segment(h, p);
}

// "" when equal, else where the first difference is (readable where EXPECT_EQ on vectors is not).
inline std::string diff_bytes(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      std::size_t n = 0;
      for (std::size_t j = i; j < got.size(); ++j) n += got[j] != want[j];
      char b[120];
      std::snprintf(b, sizeof b, "first difference at offset %zu (got 0x%02x, want 0x%02x), %zu bytes differ", i,
                    got[i], want[i], n);
      return b;
    }
  }
  return "";
}

// Hex string of bytes.
inline std::string hexdump(const std::uint8_t* p, std::size_t n) {
  std::string s;
  char b[4];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

}  // namespace rnic::tb::test
