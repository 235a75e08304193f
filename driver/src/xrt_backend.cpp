// SPDX-License-Identifier: Apache-2.0
// The XRT backend: rnic_kernel on an Alveo card through XRT's native C++ API (Debian's XRT 2.13).
// The kernel is free-running (ap_ctrl_none), so it is driven as an xrt::ip (register reads and
// writes) and never started as an xrt::kernel. DMA memory is xrt::bo in the bank the xclbin connects
// m_axi_gmem to. docs/xrt-backend.md has the why and how.
#include <experimental/xrt_ip.h>
#include <experimental/xrt_xclbin.h>
#include <fmt/format.h>
#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <system_error>

#include "backend.hpp"
#include "xrt_util.hpp"
#include "xrt_xclbin.hpp"

namespace rnic::detail {
namespace {

// The errno a std::system_error (XRT's xrt_core::error derives from it) carries, else 0.
int error_number(const std::exception& e) {
  if (const auto* se = dynamic_cast<const std::system_error*>(&e)) return se->code().value();
  return 0;
}

std::string open_hint(const std::string& reason) {
  if (reason.find("XILINX_XRT") != std::string::npos || reason.find("No such library") != std::string::npos)
    return "; XRT cannot find its driver shim: set XILINX_XRT to a directory whose lib/ holds "
           "libxrt_core.so.2 (docs/xrt-backend.md)";
  return "; check `xbutil examine`";
}

class XrtBackend final : public Backend {
 public:
  XrtBackend(unsigned index, const std::string& xclbin_path) : index_(index) {
    // The xclbin first: a bad file is reported as such, whether or not a card is present.
    xrt::xclbin xclbin;
    info_ = inspect_xclbin(xclbin_path, &xclbin);
    try {
      device_ = xrt::device(index);
    } catch (const std::exception& e) {
      throw Error(Errc::kNoDevice,
                  fmt::format("xrt:{}: no Alveo card at index {}: {}{}", index, index, e.what(), open_hint(e.what())));
    }
    // XRT's hardware emulation forks the simulator here (docs/xrt-backend.md, "hw_emu"), and the child
    // flushes what the caller's stdio buffers hold a second time: flushed first.
    std::fflush(nullptr);
    try {
      uuid_ = device_.load_xclbin(xclbin);
    } catch (const std::exception& e) {
      throw Error(Errc::kNoDevice, fmt::format("xrt:{}: loading xclbin '{}' (platform {}) failed: {}", index,
                                               info_.path, info_.platform, e.what()));
    }
    try {
      ip_ = xrt::ip(device_, uuid_, info_.ip_open_name);
    } catch (const std::exception& e) {
      const bool busy = error_number(e) == EBUSY;
      throw Error(busy ? Errc::kBusy : Errc::kNoDevice,
                  fmt::format("xrt:{}: opening {} failed{}: {}", index, info_.ip_open_name,
                              busy ? " (another process has it open)" : "", e.what()));
    }
  }

  ~XrtBackend() override = default;
  XrtBackend(const XrtBackend&) = delete;
  XrtBackend& operator=(const XrtBackend&) = delete;

  std::string name() const override { return "xrt"; }

  std::uint32_t read32(std::uint32_t offset) override {
    check_xrt_mmio_offset(offset, "read32");
    try {
      return ip_.read_register(offset);
    } catch (const std::exception& e) {
      throw Error(Errc::kBackend,
                  fmt::format("xrt:{}: read_register({:#x}) on {}: {}", index_, offset, info_.ip_name, e.what()));
    }
  }

  void write32(std::uint32_t offset, std::uint32_t value) override {
    check_xrt_mmio_offset(offset, "write32");
    try {
      ip_.write_register(offset, value);
    } catch (const std::exception& e) {
      throw Error(Errc::kBackend, fmt::format("xrt:{}: write_register({:#x}, {:#x}) on {}: {}", index_, offset, value,
                                              info_.ip_name, e.what()));
    }
  }

  DmaRegion alloc(std::size_t bytes, std::size_t align) override {
    check_xrt_alloc(bytes, align);
    // HOST bank: host memory the card reaches directly (host_only, sync is a cache operation).
    // A card bank (DDR/HBM/PLRAM): a host shadow plus device memory, sync copies between them.
    const auto flags = info_.gmem.host ? xrt::bo::flags::host_only : xrt::bo::flags::normal;
    DmaRegion region;
    xrt::bo bo = take_pooled(bytes);
    try {
      if (!bo) bo = xrt::bo(device_, bytes, flags, static_cast<xrt::memory_group>(info_.gmem.index));
      region.host = bo.map<std::uint8_t*>();
      region.device_addr = bo.address();
      std::memset(region.host, 0, bytes);
      bo.sync(XCL_BO_SYNC_BO_TO_DEVICE, bytes, 0);
    } catch (const std::bad_alloc&) {
      throw Error(Errc::kExhausted,
                  fmt::format("xrt alloc: {} bytes in {} (out of host memory)", bytes, info_.gmem.tag));
    } catch (const std::exception& e) {
      const int err = error_number(e);
      throw Error(err == ENOMEM ? Errc::kExhausted : Errc::kBackend,
                  fmt::format("xrt alloc: {} bytes in memory bank {} ({}): {}", bytes, info_.gmem.index, info_.gmem.tag,
                              e.what()));
    }
    if (region.device_addr % align != 0) {
      throw Error(Errc::kBackend, fmt::format("xrt alloc: XRT returned device address {:#x}, not {}-byte "
                                              "aligned",
                                              region.device_addr, align));
    }
    region.size = bytes;
    std::lock_guard<std::mutex> lock(mutex_);
    region.handle = ++last_handle_;
    bos_.emplace(region.handle, std::move(bo));
    return region;
  }

  // A freed region's buffer object is kept for a later allocation of the same size (up to
  // kPoolBytes in all) and zeroed again when it is handed out: an XRT buffer object is expensive to
  // make (its memory is pinned and mapped for the card), and XRT 2.13's hardware emulation cannot
  // free one safely while the card runs (docs/xrt-backend.md, "hw_emu").
  void free(const DmaRegion& region) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = bos_.find(region.handle);
    if (it == bos_.end())
      throw Error(Errc::kNotFound, fmt::format("xrt free: unknown region handle {}", region.handle));
    const std::size_t size = it->second.size();
    if (pooled_bytes_ + size <= kPoolBytes) {
      pool_.emplace(size, std::move(it->second));
      pooled_bytes_ += size;
    }
    bos_.erase(it);
  }

  void to_device(const DmaRegion& region, std::size_t offset, std::size_t bytes) override {
    sync_bo(region, offset, bytes, XCL_BO_SYNC_BO_TO_DEVICE, "to_device");
  }

  void from_device(const DmaRegion& region, std::size_t offset, std::size_t bytes) override {
    sync_bo(region, offset, bytes, XCL_BO_SYNC_BO_FROM_DEVICE, "from_device");
  }

  // No sim(): a card's ingress is its network port and it runs on its own clock.

  // Atomic (xrt_util.hpp): a reader (rnicctl) sees the previous or the new tables, never half.
  void publish(const std::string& json) override { write_state_file(xrt_state_path(index_), json); }
  std::string published_state() override { return read_state_file(xrt_state_path(index_)); }

 private:
  static constexpr std::size_t kPoolBytes = std::size_t{256} << 20;

  // A pooled buffer object of exactly `bytes`, or an empty one.
  xrt::bo take_pooled(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = pool_.find(bytes);
    if (it == pool_.end()) return {};
    xrt::bo bo = std::move(it->second);
    pool_.erase(it);
    pooled_bytes_ -= bytes;
    return bo;
  }

  void sync_bo(const DmaRegion& region, std::size_t offset, std::size_t bytes, xclBOSyncDirection dir, const char* op) {
    xrt::bo bo;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = bos_.find(region.handle);
      if (it == bos_.end())
        throw Error(Errc::kNotFound, fmt::format("xrt {}: unknown region handle {}", op, region.handle));
      bo = it->second;  // shared handle: stays valid if another thread frees the region meanwhile
    }
    const std::size_t size = bo.size();
    if (offset > size || bytes > size - offset)
      throw Error(Errc::kInvalidArgument, fmt::format("xrt {}: offset {} + bytes {} exceeds the region's "
                                                      "{} bytes",
                                                      op, offset, bytes, size));
    if (bytes == 0) return;
    try {
      bo.sync(dir, bytes, offset);
    } catch (const std::exception& e) {
      throw Error(Errc::kBackend, fmt::format("xrt {}: bo.sync({} bytes at {}) in {}: {}", op, bytes, offset,
                                              info_.gmem.tag, e.what()));
    }
  }

  unsigned index_;
  XclbinInfo info_;
  xrt::device device_;
  xrt::uuid uuid_;
  xrt::ip ip_;  // declared after device_: closed before it
  std::mutex mutex_;
  std::uint64_t last_handle_ = 0;
  std::map<std::uint64_t, xrt::bo> bos_;      // destroyed first: buffers go before the device
  std::multimap<std::size_t, xrt::bo> pool_;  // freed regions' buffer objects by size (free())
  std::size_t pooled_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_xrt_backend(unsigned index, const std::string& xclbin) {
  return std::make_unique<XrtBackend>(index, xclbin);
}

}  // namespace rnic::detail
