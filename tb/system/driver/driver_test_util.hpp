// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the driver system tests: a fixture with its own rnic-sim (or the program's shared
// device), a device and a client; segment builders (the wire library's encoders); completion draining
// with a deadline.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/systest/sim_process.hpp"
#include "rnic/wire/ddp.hpp"
#include "rnic/wire/ddp_errors.hpp"

namespace rnic::systest {

inline std::vector<std::uint8_t> tagged_segment(Stag stag, std::uint64_t to, const std::vector<std::uint8_t>& payload,
                                                bool last = true, std::uint8_t rsvd_ulp = 0,
                                                std::uint8_t dv = wire::kDdpVersion) {
  wire::TaggedHeader h;
  h.last = last;
  h.dv = dv;
  h.rsvd_ulp = rsvd_ulp;
  h.stag = stag;
  h.to = to;
  return wire::encode_segment(h, wire::ConstBytes(payload)).value();
}

inline std::vector<std::uint8_t> untagged_segment(std::uint32_t qn, std::uint32_t msn, std::uint32_t mo,
                                                  const std::vector<std::uint8_t>& payload, bool last = true,
                                                  std::uint64_t rsvd_ulp = 0, std::uint8_t dv = wire::kDdpVersion) {
  wire::UntaggedHeader h;
  h.last = last;
  h.dv = dv;
  h.rsvd_ulp = rsvd_ulp;
  h.qn = qn;
  h.msn = msn;
  h.mo = mo;
  return wire::encode_segment(h, wire::ConstBytes(payload)).value();
}

// sync(), then completions until `want` arrived or timeout_ms passed, then whatever else is there
// (so a test sees extra completions too).
inline std::vector<Completion> drain(Device& dev, Client& client, std::size_t want, std::uint32_t timeout_ms = 5000) {
  dev.require_sim().sync();
  std::vector<Completion> out, batch;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (out.size() < want) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    batch.clear();
    client.wait(batch, static_cast<std::uint32_t>(left.count()), 256);
    out.insert(out.end(), batch.begin(), batch.end());
  }
  // Then everything the device has produced, however many: one poll of 256 left the rest (and the
  // last completion of a long run) for the next drain.
  do {
    dev.require_sim().sync();
    batch.clear();
    client.poll(batch, 256);
    out.insert(out.end(), batch.begin(), batch.end());
  } while (!batch.empty());
  return out;
}

inline std::size_t error_row(wire::DdpError e) {
  for (std::size_t i = 0; i < wire::kAllDdpErrors.size(); ++i) {
    if (wire::kAllDdpErrors[i] == e) return i;
  }
  return wire::kAllDdpErrors.size();
}

inline std::string describe(const Completion& c) {
  return std::string(completion_kind_name(c.kind)) + " stream " + std::to_string(c.stream) + " ssn " +
         std::to_string(c.ssn) + " stag " + std::to_string(c.stag) + " qn " + std::to_string(c.qn) + " msn " +
         std::to_string(c.msn) + " length " + std::to_string(c.length) + " cookie " + std::to_string(c.cookie) +
         " type " + std::to_string(c.err_type) + " code " + std::to_string(c.err_code);
}

// RNIC_SYSTEST_DEVICE=shared: the tests share one device, opened once from $RNIC_DEVICE, each with a
// client of its own. That is how the suite runs through XRT's hardware emulation of rnic-sim
// (scripts/xrt_emu.sh sets RNIC_DEVICE=xrt:0 and the simulated wire; XRT starts one simulator per
// session and a session costs about 10 s). Unset: every test starts its own rnic-sim.
inline bool shared_device() {
  const char* e = std::getenv("RNIC_SYSTEST_DEVICE");
  return e != nullptr && std::string(e) == "shared";
}
inline Device& the_shared_device() {
  static const std::unique_ptr<Device> dev = Device::open("");
  return *dev;
}

// Every test gets its own simulator, device (owner) and client; or, on a shared device, its own client.
class DriverSystem : public ::testing::Test {
 protected:
  void SetUp() override {
    if (shared_device()) {
      dev_ = &the_shared_device();
    } else {
      sim_.emplace();
      own_dev_ = Device::open(sim_->device_string());
      dev_ = own_dev_.get();
    }
    client_ = dev_->create_client();
  }

  // The fill pattern in host memory and, on a card whose buffers are card memory, on the card too.
  Buffer filled_buffer(std::size_t bytes, std::uint8_t fill) {
    Buffer b = client_->alloc_buffer(bytes);
    std::fill(b.data, b.data + b.size, fill);
    client_->flush_buffer(b.id, 0, b.size);
    return b;
  }

  // The test's own simulator, for a second connection to it (an observer). A test that needs one
  // calls this first: on a shared device it is skipped (the device is XRT's, opened once).
  SimProcess& own_sim() {
    if (!sim_) throw std::logic_error("own_sim() on a shared device: GTEST_SKIP first (needs_own_sim)");
    return *sim_;
  }
  bool needs_own_sim() const { return !sim_.has_value(); }

  std::optional<SimProcess> sim_;
  std::unique_ptr<Device> own_dev_;
  Device* dev_ = nullptr;
  std::unique_ptr<Client> client_;
};

}  // namespace rnic::systest
