// SPDX-License-Identifier: Apache-2.0
// rnic-sim's simulated host memory: one memfd shared with every client (MAP_SHARED), a first-fit
// allocator with per-client ownership, and the AXI4 slave the kernel's m_axi_gmem master talks to.
//
// Device addresses are mem_base + offset into the memfd. The slave accepts every AW/AR at once
// (AWREADY/ARREADY/WREADY always 1), writes each W beat's strobed bytes as it arrives, answers one B
// per burst and R beats in order without extra latency. A burst not entirely inside
// [mem_base, mem_base + size) (or not a bus-aligned full-width INCR burst) is answered SLVERR (BRESP, or RRESP on every
// beat with zero data), counted once, and touches nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "rnic/bus/sim.hpp"

namespace rnic::sim {

// The memfd and the simulator's own mapping of it. Throws std::system_error on failure.
class MemRegion {
 public:
  MemRegion(std::uint64_t base, std::size_t bytes);
  ~MemRegion();
  MemRegion(const MemRegion&) = delete;
  MemRegion& operator=(const MemRegion&) = delete;

  int fd() const { return fd_; }
  // The same memory opened read-only (for observers): mmap with PROT_WRITE of it fails.
  int read_only_fd() const { return ro_fd_; }
  std::uint64_t base() const { return base_; }
  std::size_t size() const { return size_; }
  std::uint8_t* data() { return data_; }
  // [addr, addr + n) lies inside the region.
  bool contains(std::uint64_t addr, std::uint64_t n) const {
    return addr >= base_ && n <= size_ && addr - base_ <= size_ - n;
  }

 private:
  int fd_ = -1, ro_fd_ = -1;
  std::uint64_t base_;
  std::size_t size_;
  std::uint8_t* data_ = nullptr;
};

// First-fit allocator over [0, size) in offsets; blocks are zeroed by the caller.
class Allocator {
 public:
  explicit Allocator(std::size_t size) : size_(size) {}
  // Offset of a free block of `bytes` aligned to `align` (a power of two), or nullopt.
  std::optional<std::uint64_t> alloc(std::uint64_t bytes, std::uint64_t align);
  // False if `offset` is not the start of an allocated block.
  bool free(std::uint64_t offset);
  // Bytes of the block at `offset` (0 if none starts there).
  std::uint64_t size_of(std::uint64_t offset) const {
    auto it = blocks_.find(offset);
    return it == blocks_.end() ? 0 : it->second;
  }
  std::uint64_t used() const { return used_; }

 private:
  std::size_t size_;
  std::map<std::uint64_t, std::uint64_t> blocks_;  // offset -> bytes
  std::uint64_t used_ = 0;
};

template <class Top>
class AxiSlave : public rnic::bus::Component<Top> {
 public:
  AxiSlave(rnic::bus::Sim<Top>& sim, MemRegion& mem, unsigned bus_bytes) : mem_(mem), bytes_(bus_bytes) {
    sim.add(this);
  }

  std::uint64_t errors() const { return errors_; }                 // bursts answered SLVERR
  std::uint64_t protocol_errors() const { return proto_errors_; }  // W beats without an AW
  std::uint64_t last_activity() const { return last_activity_; }
  bool idle() const { return writes_.empty() && b_q_.empty() && reads_.empty(); }

  void drive(Top& t, std::uint64_t) override {
    t.m_axi_gmem_awready = 1;
    t.m_axi_gmem_wready = 1;
    t.m_axi_gmem_arready = 1;
    t.m_axi_gmem_bvalid = !b_q_.empty();
    t.m_axi_gmem_bresp = b_q_.empty() ? 0 : b_q_.front();
    const bool rv = !reads_.empty();
    t.m_axi_gmem_rvalid = rv;
    if (rv) {
      const Burst& r = reads_.front();
      const std::uint64_t a = r.addr + std::uint64_t{r.beat} * bytes_;
      const std::uint8_t* p = r.err ? nullptr : mem_.data() + (a - mem_.base());
      for (unsigned i = 0; i < bytes_; ++i) rnic::bus::set_byte(t.m_axi_gmem_rdata, i, p ? p[i] : 0);
      t.m_axi_gmem_rresp = r.err ? kSlvErr : 0;
      t.m_axi_gmem_rlast = r.beat == r.len;
    } else {
      rnic::bus::clear_all(t.m_axi_gmem_rdata);
      t.m_axi_gmem_rresp = 0;
      t.m_axi_gmem_rlast = 0;
    }
  }

  void sample(const Top& t, std::uint64_t cycle) override {
    const bool active = t.m_axi_gmem_awvalid || t.m_axi_gmem_wvalid || t.m_axi_gmem_arvalid || t.m_axi_gmem_bvalid ||
                        t.m_axi_gmem_rvalid;
    if (active || !idle()) last_activity_ = cycle;
    // AW before W: a W beat at the edge of its burst's AW handshake belongs to that burst.
    if (t.m_axi_gmem_awvalid) {
      writes_.push_back(open(t.m_axi_gmem_awaddr, t.m_axi_gmem_awlen, t.m_axi_gmem_awsize, t.m_axi_gmem_awburst));
    }
    if (t.m_axi_gmem_wvalid) sample_w(t);
    if (t.m_axi_gmem_bvalid && t.m_axi_gmem_bready) b_q_.pop_front();
    if (t.m_axi_gmem_arvalid) {
      reads_.push_back(open(t.m_axi_gmem_araddr, t.m_axi_gmem_arlen, t.m_axi_gmem_arsize, t.m_axi_gmem_arburst));
    }
    if (t.m_axi_gmem_rvalid && t.m_axi_gmem_rready && !reads_.empty()) {
      Burst& r = reads_.front();
      if (r.beat == r.len) {
        reads_.pop_front();
      } else {
        ++r.beat;
      }
    }
  }

 private:
  struct Burst {
    std::uint64_t addr;
    unsigned len;  // AxLEN: beats - 1
    unsigned beat;
    bool err;
  };
  static constexpr std::uint8_t kSlvErr = 2;
  static constexpr unsigned kIncr = 1;

  // Only full-width INCR bursts (all rnic_kernel issues) are served; anything else is SLVERR too.
  Burst open(std::uint64_t addr, unsigned len, unsigned size, unsigned burst) {
    const bool ok = (1u << size) == bytes_ && burst == kIncr && addr % bytes_ == 0 &&
                    mem_.contains(addr, std::uint64_t{len + 1} * bytes_);
    if (!ok) ++errors_;
    return Burst{addr, len, 0, !ok};
  }

  void sample_w(const Top& t) {
    if (writes_.empty()) {
      ++proto_errors_;  // the kernel promises W never precedes its burst's AWVALID
      return;
    }
    Burst& b = writes_.front();
    if (!b.err) {
      std::uint8_t* p = mem_.data() + (b.addr - mem_.base()) + std::uint64_t{b.beat} * bytes_;
      for (unsigned i = 0; i < bytes_; ++i) {
        if (rnic::bus::get_bit(t.m_axi_gmem_wstrb, i)) p[i] = rnic::bus::get_byte(t.m_axi_gmem_wdata, i);
      }
    }
    if (b.beat == b.len || t.m_axi_gmem_wlast) {
      b_q_.push_back(b.err ? kSlvErr : 0);
      writes_.pop_front();
    } else {
      ++b.beat;
    }
  }

  MemRegion& mem_;
  unsigned bytes_;
  std::deque<Burst> writes_;  // accepted AWs still receiving W beats
  std::deque<std::uint8_t> b_q_;
  std::deque<Burst> reads_;
  std::uint64_t errors_ = 0, proto_errors_ = 0, last_activity_ = 0;
};

}  // namespace rnic::sim
