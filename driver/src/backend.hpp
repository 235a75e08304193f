// SPDX-License-Identifier: Apache-2.0
// What the driver needs from a card: MMIO, DMA-able host memory, the published tables; and, from the
// simulator only, its ingress and clock (SimPort, Backend::sim()). Two implementations:
// sim_backend.cpp (rnic-sim over its socket, driver/sim_protocol: rnic/sim_protocol/protocol.hpp) and
// xrt_backend.cpp (an Alveo card through XRT). Errors are thrown as rnic::Error (kBackend,
// kNoDevice, kExhausted, kInvalidArgument, kTimeout) with a message naming the cause.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"

namespace rnic::detail {

struct DmaRegion {
  std::uint8_t* host = nullptr;   // host mapping (shared with the card)
  std::uint64_t device_addr = 0;  // address the kernel's AXI master uses
  std::size_t size = 0;
  std::uint64_t handle = 0;  // backend's own
};

// The simulator's own operations (a card has none of them: Backend::sim() is nullptr there).
class SimPort {
 public:
  virtual ~SimPort() = default;
  virtual void inject(std::uint32_t stream, std::uint16_t ssn, const std::vector<std::uint8_t>& seg) = 0;
  virtual void sync() = 0;  // every injected segment processed and the card quiet (bounded: kTimeout)
  virtual std::uint64_t cycles() = 0;
  // The simulated network port's datagram counts (all 0 without one).
  virtual SimNetPortStats net_port_stats() = 0;
  // One entry of the simulated network layer's UDP socket table (VNx's, docs/card-flow.md): packets
  // the card sends with tdest = index go to ip:port (host byte order). kUnsupported when the simulator
  // has no network port; kInvalidArgument for an index >= 16.
  virtual void net_socket(std::uint32_t index, std::uint32_t ip, std::uint16_t port, bool valid) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "sim" / "xrt"

  virtual std::uint32_t read32(std::uint32_t offset) = 0;
  virtual void write32(std::uint32_t offset, std::uint32_t value) = 0;

  // Zeroed memory the card can read and write; align is a power of two >= 64.
  virtual DmaRegion alloc(std::size_t bytes, std::size_t align) = 0;
  virtual void free(const DmaRegion& region) = 0;
  // Make host writes visible to the card / card writes visible to the host (XRT: bo.sync; the
  // simulator shares the memory and only needs a fence).
  virtual void to_device(const DmaRegion& region, std::size_t offset, std::size_t bytes) = 0;
  virtual void from_device(const DmaRegion& region, std::size_t offset, std::size_t bytes) = 0;

  virtual void publish(const std::string& json) = 0;  // the driver's tables for rnicctl
  virtual std::string published_state() = 0;          // what the owner published last ("" if none)

  // The simulator's ingress and clock; nullptr for a card.
  virtual SimPort* sim() { return nullptr; }
};

inline constexpr std::chrono::milliseconds kDefaultSimTimeout{10'000};

// "sim:<socket>": connects as owner (observer=false) or observer. Throws kNoDevice when nothing
// listens there, kBusy when another process owns the card, kTimeout when the simulator does not
// accept or answer within `timeout` (every later request is bounded by it as well).
std::unique_ptr<Backend> make_sim_backend(const std::string& socket_path, bool observer,
                                          std::chrono::milliseconds timeout = kDefaultSimTimeout);
// "xrt:<index>": opens the device and loads the xclbin (kNoDevice: no card / no such index / bad
// xclbin, with XRT's reason).
std::unique_ptr<Backend> make_xrt_backend(unsigned index, const std::string& xclbin);
// `card` for everything but sim(), which is `wire`'s (a simulator observer): rnic-sim owned by XRT.
std::unique_ptr<Backend> make_wired_backend(std::unique_ptr<Backend> card, std::unique_ptr<Backend> wire);

}  // namespace rnic::detail
