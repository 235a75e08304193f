// SPDX-License-Identifier: Apache-2.0
// rnic-sim's simulated host memory: one memfd shared with every client (MAP_SHARED), a first-fit
// allocator with per-client ownership, and the AXI4 slave the kernel's masters (m_axi_gmem, m_axi_net)
// talk to, over a BusMemory: the memfd (MemRegion), or, when XRT drives the card (xrt_device.cpp), card
// memory plus the host memory XRT serves over its socket.
//
// The slave accepts every AW/AR at once (AWREADY/ARREADY/WREADY always 1), reads a burst's bytes when
// it takes the AR, gathers a write burst's W beats and lands it when the last one arrives, answers one B
// per burst and R beats in order without extra latency. A burst the memory does not hold entirely (or
// not a bus-aligned full-width INCR burst, or one the memory fails) is answered SLVERR (BRESP, or RRESP
// on every beat with zero data), counted once, and touches nothing.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rnic/bus/axi_ports.hpp"
#include "rnic/bus/sim.hpp"

namespace rnic::sim {

// What the AXI slave reads and writes: device addresses to bytes.
class BusMemory {
 public:
  virtual ~BusMemory() = default;
  // [addr, addr + n) lies inside the memory.
  virtual bool contains(std::uint64_t addr, std::uint64_t n) const = 0;
  // False: the memory failed the access (nothing was read or written).
  virtual bool read(std::uint64_t addr, std::uint8_t* out, std::size_t n) = 0;
  // Writes the bytes whose strobe is non-zero as one PCIe write lands: the bytes from offset 8 on
  // first, then the first 8 (addr is 8-aligned when n >= 8). The driver, another process reading the
  // same memory while the card runs, polls a phase bit in the first 8 bytes of an entry (CQE FLAGS,
  // NRXD FLAGS), each written as a burst of its own: once it sees the phase it sees the whole entry.
  // Byte by byte in address order, it could see a completion's phase before its RsvdULP (a torn read:
  // SimNetE2E found it).
  virtual bool write(std::uint64_t addr, const std::uint8_t* data, const std::uint8_t* strobe, std::size_t n) = 0;
};

// The memfd and the simulator's own mapping of it. Throws std::system_error on failure.
class MemRegion final : public BusMemory {
 public:
  MemRegion(std::uint64_t base, std::size_t bytes);
  ~MemRegion() override;
  MemRegion(const MemRegion&) = delete;
  MemRegion& operator=(const MemRegion&) = delete;

  int fd() const { return fd_; }
  // The same memory opened read-only (for observers): mmap with PROT_WRITE of it fails.
  int read_only_fd() const { return ro_fd_; }
  std::uint64_t base() const { return base_; }
  std::size_t size() const { return size_; }
  std::uint8_t* data() { return data_; }
  bool contains(std::uint64_t addr, std::uint64_t n) const override {
    return addr >= base_ && n <= size_ && addr - base_ <= size_ - n;
  }
  bool read(std::uint64_t addr, std::uint8_t* out, std::size_t n) override {
    std::memcpy(out, data_ + (addr - base_), n);
    return true;
  }
  bool write(std::uint64_t addr, const std::uint8_t* data, const std::uint8_t* strobe, std::size_t n) override;

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

// P: which master of Top it serves (rnic/bus/axi_ports.hpp): m_axi_gmem, or m_axi_net for the packet rings.
template <class Top, class P = rnic::bus::GmemPorts>
class AxiSlave : public rnic::bus::Component<Top> {
 public:
  AxiSlave(rnic::bus::Sim<Top>& sim, BusMemory& mem, unsigned bus_bytes) : mem_(mem), bytes_(bus_bytes) {
    sim.add(this);
  }

  std::uint64_t errors() const { return errors_; }                 // bursts answered SLVERR
  std::uint64_t protocol_errors() const { return proto_errors_; }  // W beats without an AW
  std::uint64_t last_activity() const { return last_activity_; }
  bool idle() const { return writes_.empty() && b_q_.empty() && reads_.empty(); }

  void drive(Top& t, std::uint64_t) override {
    P::awready(t) = 1;
    P::wready(t) = 1;
    P::arready(t) = 1;
    P::bvalid(t) = !b_q_.empty();
    P::bresp(t) = b_q_.empty() ? 0 : b_q_.front();
    const bool rv = !reads_.empty();
    P::rvalid(t) = rv;
    if (rv) {
      const Burst& r = reads_.front();
      const std::uint8_t* p = r.err ? nullptr : r.data.data() + std::size_t{r.beat} * bytes_;
      for (unsigned i = 0; i < bytes_; ++i) rnic::bus::set_byte(P::rdata(t), i, p ? p[i] : 0);
      P::rresp(t) = r.err ? kSlvErr : 0;
      P::rlast(t) = r.beat == r.len;
    } else {
      rnic::bus::clear_all(P::rdata(t));
      P::rresp(t) = 0;
      P::rlast(t) = 0;
    }
  }

  void sample(const Top& t, std::uint64_t cycle) override {
    const bool active = P::awvalid(t) || P::wvalid(t) || P::arvalid(t) || P::bvalid(t) || P::rvalid(t);
    if (active || !idle()) last_activity_ = cycle;
    // AW before W: a W beat at the edge of its burst's AW handshake belongs to that burst.
    if (P::awvalid(t)) {
      writes_.push_back(open(P::awaddr(t), P::awlen(t), P::awsize(t), P::awburst(t)));
    }
    if (P::wvalid(t)) sample_w(t);
    if (P::bvalid(t) && P::bready(t)) b_q_.pop_front();
    if (P::arvalid(t)) {
      Burst r = open(P::araddr(t), P::arlen(t), P::arsize(t), P::arburst(t));
      if (!r.err) {
        r.data.resize(std::size_t{r.len + 1} * bytes_);
        if (!mem_.read(r.addr, r.data.data(), r.data.size())) {
          r.err = true;
          ++errors_;
        }
      }
      reads_.push_back(std::move(r));
    }
    if (P::rvalid(t) && P::rready(t) && !reads_.empty()) {
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
    std::vector<std::uint8_t> data;  // a read burst's bytes, read when its AR was taken
  };
  static constexpr std::uint8_t kSlvErr = 2;
  static constexpr unsigned kIncr = 1;

  // Only full-width INCR bursts (all rnic_kernel issues) are served; anything else is SLVERR too.
  Burst open(std::uint64_t addr, unsigned len, unsigned size, unsigned burst) {
    const bool ok = (1u << size) == bytes_ && burst == kIncr && addr % bytes_ == 0 &&
                    mem_.contains(addr, std::uint64_t{len + 1} * bytes_);
    if (!ok) ++errors_;
    return Burst{addr, len, 0, !ok, {}};
  }

  // W beats are gathered and the burst lands in memory when its last beat is taken, as one PCIe write
  // does (BusMemory::write).
  void sample_w(const Top& t) {
    if (writes_.empty()) {
      ++proto_errors_;  // the kernel promises W never precedes its burst's AWVALID
      return;
    }
    Burst& b = writes_.front();
    if (!b.err) {
      const std::size_t at = std::size_t{b.beat} * bytes_;
      if (data_.size() < at + bytes_) {
        data_.resize(at + bytes_);
        strobe_.resize(at + bytes_);
      }
      for (unsigned i = 0; i < bytes_; ++i) {
        data_[at + i] = rnic::bus::get_byte(P::wdata(t), i);
        strobe_[at + i] = rnic::bus::get_bit(P::wstrb(t), i) ? 1 : 0;
      }
    }
    if (b.beat == b.len || P::wlast(t)) {
      if (!b.err && !mem_.write(b.addr, data_.data(), strobe_.data(), std::size_t{b.beat + 1} * bytes_)) {
        b.err = true;
        ++errors_;
      }
      b_q_.push_back(b.err ? kSlvErr : 0);
      writes_.pop_front();
    } else {
      ++b.beat;
    }
  }

  BusMemory& mem_;
  unsigned bytes_;
  std::deque<Burst> writes_;  // accepted AWs still receiving W beats
  std::deque<std::uint8_t> b_q_;
  std::deque<Burst> reads_;
  std::vector<std::uint8_t> data_, strobe_;  // the W beats of the burst being written
  std::uint64_t errors_ = 0, proto_errors_ = 0, last_activity_ = 0;
};

}  // namespace rnic::sim
