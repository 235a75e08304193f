// SPDX-License-Identifier: Apache-2.0
// A scripted card for the driver's unit tests: a register file answering ID/VERSION/CAP reads, a
// command interface that records every command (busy for a chosen number of CMD_STATUS reads,
// refusing chosen opcodes), recorded doorbells, DMA memory from the heap, and a completion ring the
// test writes entries into. Like the card (hw.def, interface 3): STAG_WRITE issues the STag from a
// per-index key table that advances on every STAG_WRITE and survives owners (it lives in FakeState,
// so a second Device opened on the same FakeState continues it) and returns it in CMD_RESULT; the
// fenced commands (STAG_INVALIDATE, STREAM_TEARDOWN, QUEUE_CONFIG) stay busy until the completions
// queued in `fenced_cqes` are written into the ring, which needs free ring slots (CQ_CONS). State
// lives in FakeState so the test keeps it after the Device owns the backend.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backend.hpp"
#include "core.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/wire/bytes.hpp"

namespace rnic::test {

struct FakeCommand {
  std::uint32_t op = 0;
  std::array<std::uint32_t, hw::kCMD_ARGS> args{};
};

struct FakeCqe {
  std::uint16_t stream = 0;
  bool error = false, tagged = false, order = false;
  std::uint8_t err_type = 0, err_code = 0;
  std::uint16_t ssn = 0;
  std::uint32_t stag_qn = 0, msn = 0, length = 0;
  std::uint64_t rsvd_ulp = 0;
  std::array<std::uint8_t, 18> header{};
};

struct FakeState {
  // Identification and capabilities.
  std::uint32_t id = hw::kID_VALUE, version = hw::kVERSION_VALUE, build_id = 0x1234;
  std::uint32_t data_width = 128, stags = 16, streams = 8, qns = 2, ssn_window = 32;
  // CAP_MAX_SEG_BYTES, CAP_NET_ASSOCS, CAP_NET_MAX_PACKET: a card without a network side by default.
  std::uint32_t max_seg_bytes = 4000, net_assocs = 0, net_max_packet = 0;

  // Command interface.
  std::array<std::uint32_t, hw::kCMD_ARGS> args{};
  std::vector<FakeCommand> commands;
  std::map<std::uint32_t, unsigned> busy_reads_for;  // opcode -> CMD_STATUS reads that stay busy
  bool busy_forever = false;
  std::set<std::uint32_t> refuse;  // opcodes answered with the refused bit
  unsigned busy_left = 0;
  bool refused = false;
  std::uint32_t last_op = 0;
  unsigned status_reads = 0;
  unsigned status_reads_at_last_command = 0;
  std::uint32_t cmd_result = 0;
  std::map<std::uint32_t, std::uint8_t> stag_keys;  // index -> key of the last STAG_WRITE (starts at 0)
  // Completions decided before the next fenced command: it stays busy until all are in the ring.
  std::deque<FakeCqe> fenced_cqes;
  unsigned cqes_discarded = 0;   // decided while the CQ was disabled
  std::uint32_t result_xor = 0;  // corrupts CMD_RESULT (a card that disagrees with the driver)
  // Bumped by cut_off(): every FakeBackend made before answers kBackend from then on, as if its
  // process had died without cleaning up (the card keeps its tables).
  unsigned generation = 0;
  void cut_off() { ++generation; }

  // Everything else written, and the doorbells.
  std::map<std::uint32_t, std::uint32_t> regs;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> writes;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> doorbells;  // (DB_QUEUE, DB_PROD) of each DB_PROD write
  std::map<std::uint32_t, std::uint64_t> counters;                 // LO offset -> 64-bit value
  std::vector<std::uint32_t> reads;

  // DMA memory.
  struct Region {
    std::uint8_t* host;
    std::size_t size;
  };
  std::map<std::uint64_t, Region> regions;  // by device address
  std::uint64_t next_addr = 0x10000000;
  std::size_t frees = 0, to_device_calls = 0, from_device_calls = 0;
  std::vector<std::pair<std::uint64_t, std::size_t>> to_device_log;  // (device addr, bytes)

  // Simulator-only calls (SimPort). card = true: the fake is a card (Backend::sim() is nullptr).
  bool card = false;
  unsigned syncs = 0;
  std::function<void()> on_sync;
  std::vector<std::string> published;
  std::size_t publish_limit = SIZE_MAX;  // larger documents are refused as the simulator does
  std::vector<std::vector<std::uint8_t>> injected;
  struct NetSocket {
    std::uint32_t index, ip;
    std::uint16_t port;
    bool valid;
  };
  std::vector<NetSocket> net_sockets;

  // Completion ring as programmed through CQ_BASE / CQ_LOG2_SIZE / CQ_CTRL.
  std::uint32_t cq_prod = 0;
  // CQ_CTRL.busy (a completion write in flight) reads 1 for this many more CQ_CTRL reads; like the
  // card, CQ_BASE / CQ_LOG2_SIZE writes are ignored while the ring is enabled or busy.
  std::uint64_t cq_busy_reads = 0;
  std::size_t cq_config_writes_ignored = 0;

  ~FakeState() {
    for (auto& [a, r] : regions) std::free(r.host);
  }

  std::uint32_t reg(std::uint32_t off) const {
    auto it = regs.find(off);
    return it == regs.end() ? 0 : it->second;
  }
  std::uint64_t cq_base() const { return (std::uint64_t{reg(hw::kRegCQ_BASE_HI)} << 32) | reg(hw::kRegCQ_BASE_LO); }
  std::uint8_t* host(std::uint64_t addr, std::size_t bytes) {
    auto it = regions.upper_bound(addr);
    if (it == regions.begin()) throw std::logic_error("fake: address outside every region");
    --it;
    if (addr + bytes > it->first + it->second.size) throw std::logic_error("fake: access past a region");
    return it->second.host + (addr - it->first);
  }
  std::uint32_t cq_entries() const { return 1u << reg(hw::kRegCQ_LOG2_SIZE); }
  bool cq_full() const { return cq_prod - reg(hw::kRegCQ_CONS) >= cq_entries(); }
  // Writes what fits of fenced_cqes into the ring (all of it, discarded, while the CQ is disabled).
  void write_fenced_cqes() {
    while (!fenced_cqes.empty()) {
      if ((reg(hw::kRegCQ_CTRL) & 1u) == 0) {
        ++cqes_discarded;
      } else if (cq_full()) {
        return;
      } else {
        push_cqe(fenced_cqes.front());
      }
      fenced_cqes.pop_front();
    }
  }
  // Writes the next completion entry into the ring, with the phase of its lap, as the card does.
  void push_cqe(const FakeCqe& c) {
    using namespace rnic::hw;
    const std::uint32_t log2 = reg(kRegCQ_LOG2_SIZE);
    std::uint8_t* e = host(cq_base() + std::uint64_t{kCQE_BYTES} * (cq_prod & ((1u << log2) - 1u)), kCQE_BYTES);
    std::memset(e, 0, kCQE_BYTES);
    auto put = [e](std::uint32_t off, std::uint32_t bits, std::uint64_t v) { wire::store_le(e + off, v, bits / 8); };
    std::uint32_t flags = ((cq_prod >> log2) & 1u) == 0 ? kCQE_FLAGS_PHASE.mask() : 0u;
    if (c.error) flags |= kCQE_FLAGS_ERROR.mask();
    if (c.tagged) flags |= kCQE_FLAGS_TAGGED.mask();
    if (c.order) flags |= kCQE_FLAGS_ORDER.mask();
    put(kCQE_STREAM_OFFSET, kCQE_STREAM_BITS, c.stream);
    put(kCQE_FLAGS_OFFSET, kCQE_FLAGS_BITS, flags);
    put(kCQE_ERR_TYPE_OFFSET, kCQE_ERR_TYPE_BITS, c.err_type);
    put(kCQE_ERR_CODE_OFFSET, kCQE_ERR_CODE_BITS, c.err_code);
    put(kCQE_SSN_OFFSET, kCQE_SSN_BITS, c.ssn);
    put(kCQE_STAG_QN_OFFSET, kCQE_STAG_QN_BITS, c.stag_qn);
    put(kCQE_MSN_OFFSET, kCQE_MSN_BITS, c.msn);
    put(kCQE_LENGTH_OFFSET, kCQE_LENGTH_BITS, c.length);
    put(kCQE_RSVD_ULP_OFFSET, kCQE_RSVD_ULP_BITS, c.rsvd_ulp);
    std::memcpy(e + kCQE_HEADER_OFFSET, c.header.data(), c.header.size());
    ++cq_prod;
  }
  std::vector<FakeCommand> commands_with(std::uint32_t op) const {
    std::vector<FakeCommand> r;
    for (const auto& c : commands) {
      if (c.op == op) r.push_back(c);
    }
    return r;
  }
};

class FakeBackend : public detail::Backend, public detail::SimPort {
 public:
  explicit FakeBackend(std::shared_ptr<FakeState> s) : s_(std::move(s)), generation_(s_->generation) {}
  std::string name() const override { return "fake"; }
  detail::SimPort* sim() override { return s_->card ? nullptr : this; }

  std::uint32_t read32(std::uint32_t off) override {
    using namespace rnic::hw;
    alive();
    s_->reads.push_back(off);
    switch (off) {
      case kRegID:
        return s_->id;
      case kRegVERSION:
        return s_->version;
      case kRegBUILD_ID:
        return s_->build_id;
      case kRegCAP_DATA_WIDTH:
        return s_->data_width;
      case kRegCAP_STAGS:
        return s_->stags;
      case kRegCAP_STREAMS:
        return s_->streams;
      case kRegCAP_QNS:
        return s_->qns;
      case kRegCAP_SSN_WINDOW:
        return s_->ssn_window;
      case kRegCAP_MAX_SEG_BYTES:
        return s_->max_seg_bytes;
      case kRegCAP_NET_ASSOCS:
        return s_->net_assocs;
      case kRegCAP_NET_MAX_PACKET:
        return s_->net_max_packet;
      case kRegCQ_PROD:
        return s_->cq_prod;
      case kRegCQ_CTRL: {
        const bool busy = s_->cq_busy_reads > 0;
        if (busy && s_->cq_busy_reads != UINT64_MAX) --s_->cq_busy_reads;
        return (s_->reg(kRegCQ_CTRL) & kCQ_CTRL_ENABLE.mask()) | kCQ_CTRL_BUSY.put(busy);
      }
      case kRegCMD_RESULT:
        return s_->cmd_result ^ s_->result_xor;
      case kRegCMD_STATUS: {
        ++s_->status_reads;
        bool busy = s_->busy_forever;
        if (s_->busy_left > 0) {
          --s_->busy_left;
          busy = true;
        }
        if (fenced(s_->last_op) && !s_->refused) {
          s_->write_fenced_cqes();
          busy = busy || !s_->fenced_cqes.empty();
        }
        return (busy ? 1u : 0u) | (s_->refused ? 2u : 0u) | (s_->last_op << 8);
      }
      default:
        break;
    }
    for (const auto& [lo, v] : s_->counters) {
      if (off == lo) return static_cast<std::uint32_t>(v);
      if (off == lo + 4) return static_cast<std::uint32_t>(v >> 32);
    }
    return s_->reg(off);
  }

  void write32(std::uint32_t off, std::uint32_t v) override {
    using namespace rnic::hw;
    alive();
    s_->writes.emplace_back(off, v);
    if (off >= kRegCMD_ARG0 && off < reg_cmd_arg(kCMD_ARGS)) {
      s_->args[(off - kRegCMD_ARG0) / 4] = v;
    } else if (off == kRegCMD) {
      s_->commands.push_back(FakeCommand{v, s_->args});
      s_->last_op = v;
      s_->refused = s_->refuse.count(v) != 0;
      s_->cmd_result = 0;
      if (v == kCmdSTAG_WRITE && !s_->refused) {
        const std::uint32_t index = s_->args[0];
        if (index < s_->stags) {
          const std::uint8_t key = ++s_->stag_keys[index];  // the first STAG_WRITE of an index issues key 1
          s_->cmd_result = (index << 8) | key;
        } else {
          s_->refused = true;
        }
      }
      auto it = s_->busy_reads_for.find(v);
      s_->busy_left = it == s_->busy_reads_for.end() ? 0 : it->second;
      s_->status_reads_at_last_command = s_->status_reads;
    } else if (off == kRegDB_PROD) {
      s_->doorbells.emplace_back(s_->reg(kRegDB_QUEUE), v);
    } else if ((off == kRegCQ_BASE_LO || off == kRegCQ_BASE_HI || off == kRegCQ_LOG2_SIZE) &&
               ((s_->reg(kRegCQ_CTRL) & 1u) != 0 || s_->cq_busy_reads > 0)) {
      ++s_->cq_config_writes_ignored;
    } else {
      s_->regs[off] = v;
      if (off == kRegCQ_CTRL && (v & 1u) != 0) s_->cq_prod = 0;
    }
  }

  detail::DmaRegion alloc(std::size_t bytes, std::size_t align) override {
    alive();
    if (bytes == 0 || align < 64 || (align & (align - 1)) != 0) throw std::logic_error("fake: bad alloc request");
    const std::size_t rounded = (bytes + align - 1) / align * align;
    auto* p = static_cast<std::uint8_t*>(std::aligned_alloc(align, rounded));
    if (p == nullptr) throw Error(Errc::kExhausted, "fake: out of memory");
    std::memset(p, 0, rounded);
    const std::uint64_t addr = (s_->next_addr + align - 1) / align * align;
    s_->next_addr = addr + rounded + 4096;
    s_->regions[addr] = FakeState::Region{p, bytes};
    return detail::DmaRegion{p, addr, bytes, addr};
  }
  void free(const detail::DmaRegion& r) override {
    alive();
    auto it = s_->regions.find(r.device_addr);
    if (it == s_->regions.end() || it->second.host != r.host) throw std::logic_error("fake: free of an unknown region");
    std::free(it->second.host);
    s_->regions.erase(it);
    ++s_->frees;
  }
  void to_device(const detail::DmaRegion& r, std::size_t off, std::size_t bytes) override {
    check(r, off, bytes);
    ++s_->to_device_calls;
    s_->to_device_log.emplace_back(r.device_addr + off, bytes);
  }
  void from_device(const detail::DmaRegion& r, std::size_t off, std::size_t bytes) override {
    check(r, off, bytes);
    ++s_->from_device_calls;
  }
  void inject(std::uint32_t, std::uint16_t, const std::vector<std::uint8_t>& seg) override {
    s_->injected.push_back(seg);
  }
  void sync() override {
    ++s_->syncs;
    if (s_->on_sync) s_->on_sync();
  }
  std::uint64_t cycles() override { return 42; }
  rnic::SimNetPortStats net_port_stats() override { return {}; }
  void net_socket(std::uint32_t index, std::uint32_t ip, std::uint16_t port, bool valid) override {
    s_->net_sockets.push_back({index, ip, port, valid});
  }
  void publish(const std::string& json) override {
    alive();
    if (json.size() > s_->publish_limit) throw Error(Errc::kInvalidArgument, "fake publish: too large");
    s_->published.push_back(json);
  }
  std::string published_state() override { return s_->published.empty() ? "" : s_->published.back(); }

 private:
  void alive() const {
    if (generation_ != s_->generation) throw Error(Errc::kBackend, "fake: this backend's process is gone");
  }
  static bool fenced(std::uint32_t op) {
    return op == hw::kCmdSTAG_INVALIDATE || op == hw::kCmdSTREAM_TEARDOWN || op == hw::kCmdQUEUE_CONFIG;
  }
  void check(const detail::DmaRegion& r, std::size_t off, std::size_t bytes) {
    auto it = s_->regions.find(r.device_addr);
    if (it == s_->regions.end()) throw std::logic_error("fake: sync of an unknown region");
    if (off > it->second.size || bytes > it->second.size - off) throw std::logic_error("fake: sync past a region");
  }
  std::shared_ptr<FakeState> s_;
  unsigned generation_;
};

inline std::unique_ptr<Device> open_fake(const std::shared_ptr<FakeState>& s, OpenOptions opts = {}) {
  return detail::open_with_backend(std::make_unique<FakeBackend>(s), "fake:0", opts);
}

}  // namespace rnic::test
