// What the driver needs from a card: MMIO, DMA-able host memory, and (simulator only) ingress.
// Two implementations: sim_backend.cpp (rnic-sim over its socket, sim/include/rnic/sim/protocol.hpp)
// and xrt_backend.cpp (an Alveo card through XRT). Errors are thrown as rnic::Error (kBackend,
// kNoDevice, kExhausted, kUnsupported, kInvalidArgument) with a message naming the cause.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"

namespace rnic::detail {

struct DmaRegion {
  std::uint8_t* host = nullptr;    // host mapping (shared with the card)
  std::uint64_t device_addr = 0;   // address the kernel's AXI master uses
  std::size_t size = 0;
  std::uint64_t handle = 0;        // backend's own
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

  // Simulator only (a card throws kUnsupported / does nothing, as documented per call).
  virtual void inject(std::uint32_t stream, std::uint16_t ssn, const std::vector<std::uint8_t>& seg) = 0;
  virtual void sync() = 0;             // card: no-op
  virtual std::uint64_t cycles() = 0;  // card: 0
  virtual void publish(const std::string& json) = 0;  // the driver's tables for rnicctl; card: no-op
  virtual std::string published_state() = 0;          // what the owner published last ("" if none)
};

// "sim:<socket>": connects as owner (observer=false) or observer. Throws kNoDevice when nothing
// listens there, kBusy when another process owns the card.
std::unique_ptr<Backend> make_sim_backend(const std::string& socket_path, bool observer);
// "xrt:<index>": opens the device and loads the xclbin (kNoDevice: no card / no such index / bad
// xclbin, with XRT's reason).
std::unique_ptr<Backend> make_xrt_backend(unsigned index, const std::string& xclbin);

}  // namespace rnic::detail
