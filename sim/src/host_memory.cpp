// SPDX-License-Identifier: Apache-2.0
#include "host_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

namespace rnic::sim {

MemRegion::MemRegion(std::uint64_t base, std::size_t bytes) : base_(base), size_(bytes) {
  fd_ = memfd_create("rnic-sim-host-memory", MFD_CLOEXEC);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
  if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
    const int e = errno;
    close(fd_);
    throw std::system_error(e, std::generic_category(), "ftruncate of the host memory");
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    close(fd_);
    throw std::system_error(e, std::generic_category(), "mmap of the host memory");
  }
  data_ = static_cast<std::uint8_t*>(p);
  // A second, read-only open file description of the same memory, for observers.
  const std::string self = "/proc/self/fd/" + std::to_string(fd_);
  ro_fd_ = open(self.c_str(), O_RDONLY | O_CLOEXEC);
  if (ro_fd_ < 0) {
    const int e = errno;
    munmap(data_, size_);
    close(fd_);
    throw std::system_error(e, std::generic_category(), "read-only open of the host memory (" + self + ")");
  }
  // Nobody but the simulator reopens it writable through /proc (the owner's descriptor is the
  // simulator's own, already open read-write).
  fchmod(fd_, 0400);
}

MemRegion::~MemRegion() {
  munmap(data_, size_);
  close(ro_fd_);
  close(fd_);
}

bool MemRegion::write(std::uint64_t addr, const std::uint8_t* data, const std::uint8_t* strobe, std::size_t n) {
  std::uint8_t* p = data_ + (addr - base_);
  if (n < 8) {  // a bus narrower than 8 bytes: byte by byte
    for (std::size_t i = 0; i < n; ++i) {
      if (strobe[i]) p[i] = data[i];
    }
    return true;
  }
  for (std::size_t i = 8; i < n; ++i) {
    if (strobe[i]) p[i] = data[i];
  }
  std::atomic_thread_fence(std::memory_order_release);
  std::uint8_t head[8];  // the burst is 8-aligned: one 64-bit store
  std::memcpy(head, p, 8);
  for (std::size_t i = 0; i < 8; ++i) {
    if (strobe[i]) head[i] = data[i];
  }
  std::memcpy(p, head, 8);
  return true;
}

std::optional<std::uint64_t> Allocator::alloc(std::uint64_t bytes, std::uint64_t align) {
  if (bytes == 0 || bytes > size_) return std::nullopt;
  std::uint64_t start = 0;
  auto try_gap = [&](std::uint64_t gap_end) -> std::optional<std::uint64_t> {
    const std::uint64_t a = (start + align - 1) & ~(align - 1);
    if (a < start || a > gap_end || gap_end - a < bytes) return std::nullopt;
    return a;
  };
  for (const auto& [off, n] : blocks_) {
    if (auto a = try_gap(off)) {
      blocks_.emplace(*a, bytes);
      used_ += bytes;
      return a;
    }
    start = off + n;
  }
  if (auto a = try_gap(size_)) {
    blocks_.emplace(*a, bytes);
    used_ += bytes;
    return a;
  }
  return std::nullopt;
}

bool Allocator::free(std::uint64_t offset) {
  auto it = blocks_.find(offset);
  if (it == blocks_.end()) return false;
  used_ -= it->second;
  blocks_.erase(it);
  return true;
}

}  // namespace rnic::sim
