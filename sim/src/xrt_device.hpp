// SPDX-License-Identifier: Apache-2.0
// rnic-sim as an XRT hardware-emulation device (docs/xrt-backend.md, "hw_emu"): XRT 2.13's
// libxrt_hwemu starts it through the simulate.sh the build generates and talks to it over two Unix
// sockets (rnic/hwemu/wire.hpp); the driver's XRT backend runs unchanged against it. And the xclbin
// that describes this device to XRT, written by the same program so the two cannot disagree.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "host_memory.hpp"

#include "server.hpp"

namespace rnic::sim {

// The emulated platform. The compute unit's control space starts at kXrtCuBase (register accesses
// arrive as kXrtCuBase + offset). Two memory banks: DDR[0] is card memory, the simulator's own, at
// kMemBase (--mem-mib MiB; XRT allocates in it and copies to and from it); HOST[0] is host memory at
// kXrtHostBase, kXrtHostBytes of bus addresses XRT hands out for host_only buffers, which the card
// reads and writes through XRT's host-memory socket.
inline constexpr std::uint64_t kXrtCuBase = 0x180'0000;
inline constexpr std::uint64_t kXrtHostBase = 0x20'0000'0000ull;
inline constexpr std::uint64_t kXrtHostBytes = 0x4'0000'0000ull;  // 16 GiB
inline constexpr const char* kXrtDdrTag = "DDR[0]";
inline constexpr const char* kXrtHostTag = "HOST[0]";

// The bank rnic_kernel's m_axi_gmem is connected to in the xclbin (what `v++ --connectivity.sp`
// decides on a card): the XRT backend then allocates host_only or card-memory buffers.
enum class XrtBank { kHost, kDdr };

// Writes the hardware-emulation xclbin: rnic_kernel:rnic_kernel_1 at kXrtCuBase, DDR[0] of
// o.mem_mib MiB at kMemBase, HOST[0], m_axi_gmem connected to `bank`. Throws std::runtime_error.
void write_xrt_xclbin(const std::string& path, const Options& o, XrtBank bank);

// What XRT's calls do to the card (the simulator's KernelServer implements it over its Card).
class XrtCard {
 public:
  virtual ~XrtCard() = default;
  virtual bool valid_register(std::uint32_t offset) const = 0;
  virtual std::uint32_t read_register(std::uint32_t offset) = 0;
  virtual void write_register(std::uint32_t offset, std::uint32_t value) = 0;  // the owner's write
  // XRT closed the device or is gone: what a kernel driver does when its owner exits. False if the
  // cleanup did not finish.
  virtual bool owner_gone() = 0;
  virtual std::uint64_t cycle() const = 0;
};

// One XRT session: the device end of XRT's two sockets, the memory the card reaches through them.
class XrtSession {
 public:
  // Connects to the sockets XRT names through $EMULATION_SOCKETID and $USER, waiting at most
  // o.xrt_connect_seconds (XRT binds them only after it started the device). `ddr` is DDR[0].
  // Throws std::runtime_error.
  XrtSession(const Options& o, MemRegion& ddr);
  ~XrtSession();  // XRT's host-memory thread gets its close call (without it XRT 2.13 spins forever)
  XrtSession(const XrtSession&) = delete;
  XrtSession& operator=(const XrtSession&) = delete;

  int fd() const;                   // XRT's calls arrive here
  const std::string& path() const;  // of that socket
  BusMemory& bus();                 // DDR[0] and HOST[0], as the card's AXI masters reach them

  enum class Next { kGoOn, kClosed, kFailed };
  // Reads and answers one call (call when fd() is readable). kClosed: XRT closed the device; kFailed:
  // the session ended otherwise (the reason on stderr). Both after card.owner_gone(): the device ends.
  Next serve(XrtCard& card);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rnic::sim
