// SPDX-License-Identifier: Apache-2.0
// What the host driver does to rnic_kernel, over AXI4-Lite and host memory (hw.def is the contract):
// identification, the completion ring, commands, receive-buffer posting and completion polling.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rnic/hw/command.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/tb/host_memory.hpp"
#include "rnic/tb/sim.hpp"
#include "rnic/wire/bytes.hpp"

namespace rnic::tb {

// Little-endian field of a host-memory record.
using wire::load_le;
using wire::store_le;

// One completion entry (hw.def CQE rows).
struct Cqe {
  std::uint16_t stream = 0;
  std::uint8_t flags = 0;
  std::uint8_t err_type = 0;
  std::uint8_t err_code = 0;
  std::uint16_t ssn = 0;
  std::uint32_t stag_qn = 0;
  std::uint32_t msn = 0;
  std::uint32_t length = 0;
  std::uint64_t rsvd_ulp = 0;
  std::array<std::uint8_t, 18> header{};

  bool phase() const { return (flags & hw::kCQE_FLAGS_PHASE.mask()) != 0; }
  bool error() const { return (flags & hw::kCQE_FLAGS_ERROR.mask()) != 0; }
  bool tagged() const { return (flags & hw::kCQE_FLAGS_TAGGED.mask()) != 0; }
  std::string str() const;
};

inline Cqe decode_cqe(const std::uint8_t* p) {
  using namespace rnic::hw;
  auto f = [p](std::uint32_t off, std::uint32_t bits) { return load_le(p + off, bits / 8); };
  Cqe c;
  c.stream = static_cast<std::uint16_t>(f(kCQE_STREAM_OFFSET, kCQE_STREAM_BITS));
  c.flags = static_cast<std::uint8_t>(f(kCQE_FLAGS_OFFSET, kCQE_FLAGS_BITS));
  c.err_type = static_cast<std::uint8_t>(f(kCQE_ERR_TYPE_OFFSET, kCQE_ERR_TYPE_BITS));
  c.err_code = static_cast<std::uint8_t>(f(kCQE_ERR_CODE_OFFSET, kCQE_ERR_CODE_BITS));
  c.ssn = static_cast<std::uint16_t>(f(kCQE_SSN_OFFSET, kCQE_SSN_BITS));
  c.stag_qn = static_cast<std::uint32_t>(f(kCQE_STAG_QN_OFFSET, kCQE_STAG_QN_BITS));
  c.msn = static_cast<std::uint32_t>(f(kCQE_MSN_OFFSET, kCQE_MSN_BITS));
  c.length = static_cast<std::uint32_t>(f(kCQE_LENGTH_OFFSET, kCQE_LENGTH_BITS));
  c.rsvd_ulp = f(kCQE_RSVD_ULP_OFFSET, kCQE_RSVD_ULP_BITS);
  for (unsigned i = 0; i < c.header.size(); ++i) c.header[i] = p[kCQE_HEADER_OFFSET + i];
  return c;
}

inline std::string Cqe::str() const {
  char b[256];
  std::snprintf(b, sizeof b,
                "stream %u flags 0x%x (%s%s) type 0x%x code 0x%02x ssn %u stag/qn 0x%08x msn 0x%08x "
                "length %u rsvd_ulp 0x%llx",
                stream, flags, error() ? "error" : "delivery", tagged() ? ", tagged" : "", err_type, err_code, ssn,
                stag_qn, msn, length, static_cast<unsigned long long>(rsvd_ulp));
  return b;
}

struct KernelCaps {
  std::uint32_t id, version, build_id, data_width, stags, streams, qns, ssn_window;
};

struct StagArgs {
  std::uint32_t index = 0;
  std::uint8_t key = 0;
  bool remote_write = true;
  bool remote_read = false;
  bool local_read = false;  // the transmit gather may read the range (issue 35)
  std::optional<std::uint16_t> bound_stream;
  std::uint16_t pd = 0;
  std::uint64_t base_to = 0;
  std::uint64_t length = 0;
  std::uint64_t host_addr = 0;
};

template <class Top>
class KernelDriver {
 public:
  KernelDriver(Sim<Top>& sim, AxiLiteMaster<Top>& mmio, AxiHostMemory<Top>& mem, unsigned num_qns)
      : sim_(sim), mmio_(mmio), mem_(mem), num_qns_(num_qns) {}

  AxiLiteMaster<Top>& mmio() { return mmio_; }

  KernelCaps read_caps() {
    using namespace rnic::hw;
    return KernelCaps{mmio_.read32(kRegID),        mmio_.read32(kRegVERSION),
                      mmio_.read32(kRegBUILD_ID),  mmio_.read32(kRegCAP_DATA_WIDTH),
                      mmio_.read32(kRegCAP_STAGS), mmio_.read32(kRegCAP_STREAMS),
                      mmio_.read32(kRegCAP_QNS),   mmio_.read32(kRegCAP_SSN_WINDOW)};
  }

  // ---- completion ring ----------------------------------------------------------------------------
  // As a driver does it (hw.def CQ_CTRL): disable, wait until no completion write is in flight (the
  // card takes a ring configuration only then), program, read back, enable.
  void cq_setup(std::uint64_t base, unsigned log2) {
    using namespace rnic::hw;
    mmio_.write32(kRegCQ_CTRL, 0);
    for (int i = 0; mmio_.read32(kRegCQ_CTRL) != 0; ++i) {
      if (i == 100000) throw std::runtime_error("cq_setup: CQ_CTRL busy does not clear");
    }
    mmio_.write32(kRegCQ_BASE_LO, static_cast<std::uint32_t>(base));
    mmio_.write32(kRegCQ_BASE_HI, static_cast<std::uint32_t>(base >> 32));
    mmio_.write32(kRegCQ_LOG2_SIZE, log2);
    if (mmio_.read32(kRegCQ_BASE_LO) != static_cast<std::uint32_t>(base) || mmio_.read32(kRegCQ_LOG2_SIZE) != log2) {
      throw std::runtime_error("cq_setup: the card did not take the ring configuration (log2 " + std::to_string(log2) +
                               ")");
    }
    mmio_.write32(kRegCQ_CTRL, 1);
    cq_base_ = base;
    cq_log2_ = log2;
    cq_cons_ = cq_cons_written_ = 0;
  }
  std::uint64_t cq_base() const { return cq_base_; }
  unsigned cq_log2() const { return cq_log2_; }
  std::uint64_t cq_bytes() const { return std::uint64_t{hw::kCQE_BYTES} << cq_log2_; }
  std::uint32_t cq_cons() const { return cq_cons_; }

  // The entry at the consumer index if its phase says it is new (1 on the first lap, flipping per lap).
  std::optional<Cqe> cq_peek() const {
    const std::uint32_t size_mask = (1u << cq_log2_) - 1;
    const std::uint64_t addr = cq_base_ + std::uint64_t{hw::kCQE_BYTES} * (cq_cons_ & size_mask);
    const Cqe c = decode_cqe(mem_.data() + addr);
    const bool want = ((cq_cons_ >> cq_log2_) & 1u) == 0;
    if (c.phase() != want) return std::nullopt;
    return c;
  }
  void cq_pop() { ++cq_cons_; }
  // Tell the kernel how far the driver has consumed (only when it changed).
  void cq_update_cons() {
    if (cq_cons_ == cq_cons_written_) return;
    mmio_.write32(hw::kRegCQ_CONS, cq_cons_);
    cq_cons_written_ = cq_cons_;
  }

  // ---- commands -------------------------------------------------------------------------------------
  // Writes the arguments and the opcode, polls CMD_STATUS until not busy (rnic/hw/command.hpp). Returns
  // the refused bit.
  bool command(std::uint32_t op, const std::vector<std::uint32_t>& args) {
    const std::uint64_t t0 = sim_.cycle();
    const std::optional<hw::CmdStatus> st =
        hw::run_command([this](std::uint32_t off) { return mmio_.read32(off); },
                        [this](std::uint32_t off, std::uint32_t v) { mmio_.write32(off, v); },
                        [&] { return sim_.cycle() - t0 <= kCmdTimeout; }, op, args.data(), args.size());
    if (!st) {
      throw std::runtime_error("command " + std::to_string(op) + " still busy after " + std::to_string(kCmdTimeout) +
                               " cycles");
    }
    if (st->last_op() != op) {
      sim_.errors().add(sim_.cycle(), "CMD_STATUS last opcode " + std::to_string(st->last_op()) + " after command " +
                                          std::to_string(op));
    }
    return st->refused();
  }
  // STAG_WRITE: the card issues the key (the index's last key + 1) and returns the STag in
  // CMD_RESULT; a.key is set to it. Returns the refused bit.
  bool stag_write(StagArgs& a) {
    std::uint32_t flags = 0;
    if (a.remote_write) flags |= hw::kArgSTAG_WRITE_REMOTE_WRITE.mask();
    if (a.remote_read) flags |= hw::kArgSTAG_WRITE_REMOTE_READ.mask();
    if (a.local_read) flags |= hw::kArgSTAG_WRITE_LOCAL_READ.mask();
    if (a.bound_stream) flags |= hw::kArgSTAG_WRITE_BOUND.mask();
    const bool refused =
        command(hw::kCmdSTAG_WRITE, {a.index, flags, a.pd, a.bound_stream.value_or(0), lo(a.base_to), hi(a.base_to),
                                     lo(a.length), hi(a.length), lo(a.host_addr), hi(a.host_addr)});
    const std::uint32_t stag = mmio_.read32(hw::kRegCMD_RESULT);
    if (refused) {
      if (stag != 0) sim_.errors().add(sim_.cycle(), "CMD_RESULT not 0 after a refused STAG_WRITE");
      return true;
    }
    if ((stag >> 8) != a.index) {
      sim_.errors().add(sim_.cycle(),
                        "CMD_RESULT " + std::to_string(stag) + " names another index than " + std::to_string(a.index));
    }
    a.key = static_cast<std::uint8_t>(stag & 0xFFu);
    return false;
  }
  bool stag_invalidate(std::uint32_t index) { return command(hw::kCmdSTAG_INVALIDATE, {index}); }
  bool stream_enable(std::uint32_t stream, std::uint16_t pd) {
    for (unsigned q = 0; q < num_qns_; ++q) rqs_.erase({stream, q});
    return command(hw::kCmdSTREAM_ENABLE, {stream, pd});
  }
  bool stream_teardown(std::uint32_t stream) { return command(hw::kCmdSTREAM_TEARDOWN, {stream}); }
  bool queue_config(std::uint32_t stream, std::uint32_t qn, std::uint64_t ring, unsigned log2,
                    std::uint32_t first_msn) {
    const bool refused = command(hw::kCmdQUEUE_CONFIG, {stream, qn, lo(ring), hi(ring), log2, first_msn});
    if (!refused) {
      // The producer index counts in MSN - 1 space: the buffer for MSN m is slot (m - 1) mod 2^log2.
      rqs_[{stream, qn}] = Rq{ring, log2, (first_msn == 0 ? 1u : first_msn) - 1u};
    }
    return refused;
  }

  // ---- receive buffers --------------------------------------------------------------------------------
  // Writes the descriptor for the next MSN of (stream, qn) into its ring slot; rings the doorbell
  // unless ring == false. Returns the MSN the buffer is for.
  std::uint32_t post_recv(std::uint32_t stream, std::uint32_t qn, std::uint64_t addr, std::uint32_t length,
                          bool ring = true, std::uint32_t cookie = 0) {
    Rq& q = rq(stream, qn);
    const std::uint32_t msn = q.prod + 1;
    std::uint8_t d[hw::kRQ_DESC_BYTES] = {};
    store_le(d + hw::kRQD_ADDR_OFFSET, addr, hw::kRQD_ADDR_BITS / 8);
    store_le(d + hw::kRQD_LENGTH_OFFSET, length, hw::kRQD_LENGTH_BITS / 8);
    store_le(d + hw::kRQD_COOKIE_OFFSET, cookie, hw::kRQD_COOKIE_BITS / 8);
    mem_.host_write(rq_slot_addr(stream, qn, msn), d, sizeof d);
    q.prod = msn;
    if (ring) ring_doorbell(stream, qn);
    return msn;
  }
  // DB_QUEUE names the queue, DB_PROD rings it (both written every time: a test may reset the card).
  void ring_doorbell(std::uint32_t stream, std::uint32_t qn) {
    mmio_.write32(hw::kRegDB_QUEUE, hw::db_queue(stream, qn));
    mmio_.write32(hw::kRegDB_PROD, rq(stream, qn).prod);
  }
  std::uint64_t rq_slot_addr(std::uint32_t stream, std::uint32_t qn, std::uint32_t msn) {
    const Rq& q = rq(stream, qn);
    return q.ring + std::uint64_t{hw::kRQ_DESC_BYTES} * ((msn - 1u) & ((1u << q.log2) - 1u));
  }
  bool rq_configured(std::uint32_t stream, std::uint32_t qn) const { return rqs_.count({stream, qn}) != 0; }
  std::uint32_t rq_prod(std::uint32_t stream, std::uint32_t qn) { return rq(stream, qn).prod; }
  unsigned rq_log2(std::uint32_t stream, std::uint32_t qn) { return rq(stream, qn).log2; }

  // ---- counters ---------------------------------------------------------------------------------------
  std::uint64_t counter(std::uint32_t lo_reg) { return mmio_.read64(lo_reg); }
  std::uint64_t error_counter(unsigned row) { return mmio_.read64(hw::reg_error_counter_lo(row)); }

 private:
  struct Rq {
    std::uint64_t ring;
    unsigned log2;
    std::uint32_t prod;  // free-running, in MSN - 1 space
  };
  Rq& rq(std::uint32_t stream, std::uint32_t qn) {
    auto it = rqs_.find({stream, qn});
    if (it == rqs_.end()) throw std::logic_error("queue not configured");
    return it->second;
  }
  static std::uint32_t lo(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
  static std::uint32_t hi(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

  // After reset the kernel clears its tables (NUM_STREAMS * SSN_WINDOW cycles in deliver) first.
  static constexpr std::uint64_t kCmdTimeout = 200000;
  Sim<Top>& sim_;
  AxiLiteMaster<Top>& mmio_;
  AxiHostMemory<Top>& mem_;
  unsigned num_qns_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Rq> rqs_;
  std::uint64_t cq_base_ = 0;
  unsigned cq_log2_ = 0;
  std::uint32_t cq_cons_ = 0, cq_cons_written_ = 0;
};

}  // namespace rnic::tb
