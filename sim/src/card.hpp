// SPDX-License-Identifier: Apache-2.0
// One simulated card: the kernel of one implementation (Top: the Verilated rnic_kernel, or the SystemC
// model behind the same ports) on its clock, its AXI4-Lite master, its AXI4 slave over a BusMemory, its
// AXI-Stream ingress and (with a UDP port) its network port; and what a kernel driver does when the
// process that owned the card is gone (RFC 5041 8.3.2). Two front ends serve it: the simulator's own
// socket (server.cpp) and XRT's hardware-emulation sockets (xrt_device.cpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <set>
#include <stdexcept>
#include <type_traits>

#include <fmt/core.h>

#include "host_memory.hpp"
#include "net_port.hpp"
#include "rnic/bus/axi_lite_master.hpp"
#include "rnic/bus/axis_source.hpp"
#include "rnic/bus/sim.hpp"
#include "rnic/hw/command.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/wire/ddp_errors.hpp"
#include "server.hpp"

namespace rnic::sim {

inline constexpr std::uint64_t kCmdTimeoutCycles = 2'000'000;

template <class Top>
class Card {
 public:
  // Bus width of the model (DATA_WIDTH / 8), checked against CAP_DATA_WIDTH at start.
  static constexpr unsigned kBusBytes =
      static_cast<unsigned>(sizeof(std::remove_reference_t<decltype(std::declval<Top&>().s_axis_rx_tdata)>));

  // Builds the kernel over `mem`, resets it and lets it clear its tables. Throws std::runtime_error
  // when it is not rnic_kernel at this width or an option does not fit it.
  Card(const Options& o, BusMemory& mem) : verbose_(o.verbose) {
    if (o.fst.empty()) {
      unsetenv("RNIC_FST");
    } else {
      setenv("RNIC_FST", o.fst.c_str(), 1);  // rnic::bus::Sim opens the FST dump from it
    }
    sim_ = std::make_unique<bus::Sim<Top>>();
    mmio_ = std::make_unique<bus::AxiLiteMaster<Top>>(*sim_);
    axis_ = std::make_unique<bus::AxisSource<Top>>(*sim_, kBusBytes, 1);
    slave_ = std::make_unique<AxiSlave<Top>>(*sim_, mem, kBusBytes);
    if (o.udp_port >= 0) {
      net_ = make_net_port<Top>(*sim_, mem, kBusBytes, o.udp_port, o.net_path, o.net_pcap);
      if (!net_) throw std::runtime_error("--udp-port needs --model rtl: the SystemC model has no network ports");
    }
    sim_->reset();
    const std::uint32_t width = mmio_->read32(hw::kRegCAP_DATA_WIDTH);
    streams_ = mmio_->read32(hw::kRegCAP_STREAMS);
    // Longer segments are cut and reported by the kernel, so the ingress takes up to this plus the
    // largest header.
    max_seg_bytes_ = mmio_->read32(hw::kRegCAP_MAX_SEG_BYTES);
    qns_ = mmio_->read32(hw::kRegCAP_QNS);
    if (mmio_->read32(hw::kRegID) != hw::kID_VALUE || width != 8 * kBusBytes) {
      throw std::runtime_error("the Verilated kernel does not identify as rnic_kernel");
    }
    // The kernel's network side (NET = 1): CAP_NET_ASSOCS reads 0 without it.
    net_side_ = mmio_->read32(hw::kRegCAP_NET_ASSOCS) != 0;
    if (net_ && !net_side_) {
      throw std::runtime_error("--udp-port: this kernel was built without its network side (NET = 0)");
    }
    // After reset the kernel clears its tables, one row per cycle: lookup the longest of the STag table,
    // the stream table and the queues (CAP_STAGS, CAP_STREAMS * CAP_QNS), deliver its stream words.
    // Commands and segments wait meanwhile; the simulator lets it finish before it serves.
    const std::uint32_t stags = mmio_->read32(hw::kRegCAP_STAGS);
    const std::uint64_t clear = std::max<std::uint64_t>(stags, std::uint64_t{streams_} * qns_) + 1024;
    for (std::uint64_t i = 0; i < clear; ++i) sim_->tick();
  }

  bus::Sim<Top>& sim() { return *sim_; }
  bus::AxisSource<Top>& axis() { return *axis_; }
  const bus::AxisSource<Top>& axis() const { return *axis_; }
  AxiSlave<Top>& slave() { return *slave_; }
  const AxiSlave<Top>& slave() const { return *slave_; }
  NetPortBase* net() { return net_.get(); }
  const NetPortBase* net() const { return net_.get(); }
  std::uint32_t streams() const { return streams_; }
  std::uint32_t qns() const { return qns_; }
  std::uint32_t max_seg_bytes() const { return max_seg_bytes_; }
  std::uint64_t cycle() const { return sim_->cycle(); }
  std::uint64_t last_mmio() const { return last_mmio_; }

  std::uint64_t last_axi_activity() const {
    const std::uint64_t net = net_ ? net_->last_activity() : 0;
    return std::max({slave_->last_activity(), axis_->last_accept_cycle(), net});
  }
  bool inputs_quiet() const { return axis_->empty() && slave_->idle() && (!net_ || net_->idle()); }
  // Nothing queued, no AXI/stream/MMIO activity for `quiet_cycles`.
  bool quiet_for(std::uint64_t quiet_cycles) const {
    return inputs_quiet() && cycle() - std::max(last_axi_activity(), last_mmio_) >= quiet_cycles;
  }

  // `n` cycles of the free-running clock, timed for log_speed().
  void run(unsigned n) {
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < n; ++i) sim_->tick();
    run_time_ += std::chrono::steady_clock::now() - t0;
    run_cycles_ += n;
  }

  // The simulation speed while the card runs (the batches of run(): traffic, and the quiet tail after
  // it; not the MMIO round trips' few cycles): scripts/bench.sh reads this line.
  void log_speed() {
    const double secs = std::chrono::duration<double>(run_time_).count();
    log("rnic-sim: ran {} of {} cycles in batches, {:.3f} s: {:.0f} cycles/s", run_cycles_, cycle(), secs,
        secs > 0 ? static_cast<double>(run_cycles_) / secs : 0.0);
  }

  // The register map: the RNIC_REG rows, every register of the RNIC_REG_ARRAY rows (CMD_ARG0..15,
  // NET_ASSOC_ARG0..6, NET_CNT0..9) and the per-error counters. A kernel without its
  // network side answers that window's rows SLVERR, read as 0, as any row it does not decode: the same
  // on every model, so a reader (rnicctl counters, regs) sees zeros, not an error.
  bool valid_register(std::uint32_t off) const {
    if (off % 4 != 0 || off >= hw::kMMIO_BYTES) return false;
    if (off >= hw::kRegNET_ASSOC_ARG0 && off < hw::reg_net_assoc_arg(hw::kNET_ASSOC_ARGS)) return true;
    if (off >= hw::kRegNET_CNT0 && off < hw::reg_net_counter(hw::kNET_COUNTERS)) return true;
    if (std::find(std::begin(kRegRows), std::end(kRegRows), off) != std::end(kRegRows)) return true;
    if (off >= hw::kRegCMD_ARG0 && off < hw::reg_cmd_arg(hw::kCMD_ARGS)) return true;
    const auto rows = static_cast<unsigned>(wire::kAllDdpErrors.size());
    return off >= hw::kRegCNT_ERROR0_LO && off < hw::reg_error_counter_lo(rows);
  }

  // The owner set network socket `index` (owner_gone() unsets it).
  void owner_socket(std::uint32_t index) { owner_sockets_.insert(index); }

  // Writes a register for the owner, remembering what owner_gone() must undo.
  void owner_write(std::uint32_t off, std::uint32_t v) {
    if (off == hw::kRegCMD) snoop_command(v);
    snoop_net(off, v);
    mmio_write(off, v);
  }

  std::uint32_t mmio_read(std::uint32_t off) {
    const std::uint32_t v = mmio_->read32(off);
    last_mmio_ = cycle();
    return v;
  }
  void mmio_write(std::uint32_t off, std::uint32_t v) {
    mmio_->write32(off, v);
    last_mmio_ = cycle();
  }

  // What the owner programmed, for owner_gone(): every STag index it wrote and every stream it
  // enabled or configured, as the card sees them: the opcode is CMD[7:0] (the card ignores the upper
  // bits) and the index or stream argument is read back from the card's register. A command the card
  // ignores or refuses only adds an entry that is cleaned up needlessly.
  static_assert(hw::kArgSTREAM_ENABLE_STREAM.word == hw::kArgQUEUE_CONFIG_STREAM.word &&
                hw::kArgSTREAM_ENABLE_STREAM.mask() == hw::kArgQUEUE_CONFIG_STREAM.mask());
  void snoop_command(std::uint32_t v) {
    const std::uint32_t op = hw::cmd_opcode(v);
    if (op == hw::kCmdSTAG_WRITE) {
      owner_stags_.insert(arg_of(hw::kArgSTAG_WRITE_INDEX));
    } else if (op == hw::kCmdSTREAM_ENABLE || op == hw::kCmdQUEUE_CONFIG) {
      owner_streams_.insert(arg_of(hw::kArgSTREAM_ENABLE_STREAM));
    }
  }
  std::uint32_t arg_of(const hw::ArgField& f) { return f.get(mmio_read(hw::reg_cmd_arg(f.word))); }

  // What the owner set on the network side, for owner_gone(): association entries written and streams
  // made live (NET_ASSOC_CMD WRITE, NET_STREAM_LIVE LIVE).
  void snoop_net(std::uint32_t off, std::uint32_t v) {
    if (!net_side_) return;
    if (off == hw::kRegNET_ASSOC_CMD && hw::kNET_ASSOC_CMD_WRITE.get(v) != 0)
      owner_assocs_.insert(hw::kNET_ASSOC_CMD_INDEX.get(v));
    if (off == hw::kRegNET_STREAM_LIVE && hw::kNET_STREAM_LIVE_LIVE.get(v) != 0)
      owner_live_.insert(hw::kNET_STREAM_LIVE_STREAM.get(v));
  }

  // The network side's part of owner_gone(): both packet rings off (their memory is the owner's: free
  // only once no ring write or read is in flight, NET_RX_CTRL / NET_TX_CTRL bit 1), every stream it made
  // live cleared, every association entry it wrote cleared (fenced: NET_ASSOC_STATUS busy until the
  // packets that came before have left the front end), its sockets unset. False if anything stayed busy.
  bool net_owner_gone() {
    if (!net_side_) return true;
    bool clean = true;
    mmio_write(hw::kRegNET_RX_CTRL, 0);
    mmio_write(hw::kRegNET_TX_CTRL, 0);
    for (std::uint32_t stream : owner_live_) {
      mmio_write(hw::kRegNET_STREAM_LIVE, hw::kNET_STREAM_LIVE_STREAM.put(stream));  // LIVE 0
    }
    for (std::uint32_t idx : owner_assocs_) {
      clean = wait_clear(hw::kRegNET_ASSOC_STATUS, hw::kNET_ASSOC_STATUS_BUSY.mask()) && clean;
      mmio_write(hw::kRegNET_ASSOC_CMD, hw::kNET_ASSOC_CMD_INDEX.put(idx));  // WRITE 0: clear
    }
    clean = wait_clear(hw::kRegNET_ASSOC_STATUS, hw::kNET_ASSOC_STATUS_BUSY.mask()) && clean;
    for (std::uint32_t reg : {hw::kRegNET_RX_CTRL, hw::kRegNET_TX_CTRL}) {
      if (!wait_clear(reg, hw::kNET_RX_CTRL_BUSY.mask())) {
        fmt::print(stderr, "rnic-sim: packet ring (0x{:x}) still busy after {} cycles\n", reg, kCmdTimeoutCycles);
        clean = false;
      }
    }
    if (net_) {
      for (std::uint32_t i : owner_sockets_) net_->set_socket(sim_protocol::NetSocketReq{i, 0, 0, 0});
    }
    owner_assocs_.clear();
    owner_live_.clear();
    owner_sockets_.clear();
    return clean;
  }

  // Reads reg until (value & mask) == 0; false after kCmdTimeoutCycles.
  bool wait_clear(std::uint32_t reg, std::uint32_t mask) {
    const std::uint64_t t0 = cycle();
    while ((mmio_read(reg) & mask) != 0) {
      if (cycle() - t0 > kCmdTimeoutCycles) return false;
    }
    return true;
  }

  // Runs a command as a driver would (rnic/hw/command.hpp): wait for an earlier one, then its one
  // argument (arg: where it goes) and the opcode until CMD_STATUS is not busy. False when busy never
  // clears within kCmdTimeoutCycles.
  bool command(std::uint32_t op, const hw::ArgField& arg, std::uint32_t arg0) {
    const auto read = [this](std::uint32_t off) { return mmio_read(off); };
    std::uint64_t t0 = cycle();
    const auto again = [&] { return cycle() - t0 <= kCmdTimeoutCycles; };  // each read takes cycles
    if (!hw::wait_cmd_idle(read, again)) {
      fmt::print(stderr, "rnic-sim: an earlier command is still busy after {} cycles; {} ({}) not issued\n",
                 kCmdTimeoutCycles, op, arg0);
      return false;
    }
    t0 = cycle();
    const auto write = [this](std::uint32_t off, std::uint32_t v) { mmio_write(off, v); };
    const hw::CmdArgs args = hw::CmdArgs().set(arg, arg0);
    if (hw::run_command(read, write, again, op, args.data(), args.size())) return true;
    fmt::print(stderr, "rnic-sim: command {} ({}) still busy after {} cycles\n", op, arg0, kCmdTimeoutCycles);
    return false;
  }

  // RFC 5041 8.3.2: what a kernel driver does when the owning process exits (and, with a network
  // port, net_owner_gone() for the packet rings and the association table). The CQ goes off first:
  // nobody drains the ring any more, and with the CQ disabled the card discards completions, so the
  // fenced commands (STAG_INVALIDATE, STREAM_TEARDOWN: busy until every write and completion decided
  // before them is done) can finish; then CQ_CTRL.busy must read 0 (no completion write loaded before
  // the disable still in flight). When all of that finished, nothing the owner left can be written
  // and its memory can be freed; otherwise (false) the memory must be quarantined.
  bool owner_gone() {
    log("rnic-sim: owner gone: disabling the CQ, invalidating {} STags, tearing down {} streams", owner_stags_.size(),
        owner_streams_.size());
    bool clean = true;
    try {
      mmio_write(hw::kRegCQ_CTRL, 0);
      for (std::uint32_t idx : owner_stags_)
        clean = command(hw::kCmdSTAG_INVALIDATE, hw::kArgSTAG_INVALIDATE_INDEX, idx) && clean;
      for (std::uint32_t s : owner_streams_)
        clean = command(hw::kCmdSTREAM_TEARDOWN, hw::kArgSTREAM_TEARDOWN_STREAM, s) && clean;
      // The ring is the owner's memory: free only once no completion write is in flight.
      if (!wait_clear(hw::kRegCQ_CTRL, hw::kCQ_CTRL_BUSY.mask())) {
        fmt::print(stderr, "rnic-sim: completion ring still busy after {} cycles\n", kCmdTimeoutCycles);
        clean = false;
      }
      clean = net_owner_gone() && clean;
    } catch (const std::exception& e) {
      fmt::print(stderr, "rnic-sim: owner cleanup: {}\n", e.what());
      clean = false;
    }
    owner_stags_.clear();
    owner_streams_.clear();
    return clean;
  }

 private:
  template <class... Args>
  void log(fmt::format_string<Args...> f, Args&&... args) {
    if (verbose_) fmt::print(stderr, "{}\n", fmt::format(f, std::forward<Args>(args)...));
  }

  // Offsets of the RNIC_REG rows of hw.def.
  static constexpr std::uint32_t kRegRows[] = {
#define RNIC_REG(name, offset, access, desc) offset,
#include "rnic/hw/hw.def"
  };

  bool verbose_;
  std::unique_ptr<bus::Sim<Top>> sim_;
  std::unique_ptr<bus::AxiLiteMaster<Top>> mmio_;
  std::unique_ptr<bus::AxisSource<Top>> axis_;
  std::unique_ptr<AxiSlave<Top>> slave_;
  std::unique_ptr<NetPortBase> net_;
  bool net_side_ = false;  // the kernel has its network side (NET = 1): the window answers
  std::uint32_t streams_ = 0, qns_ = 0, max_seg_bytes_ = 0;
  std::uint64_t last_mmio_ = 0;
  std::set<std::uint32_t> owner_stags_, owner_streams_;
  std::set<std::uint32_t> owner_assocs_, owner_live_, owner_sockets_;
  std::uint64_t run_cycles_ = 0;                    // cycles ticked by run()
  std::chrono::steady_clock::duration run_time_{};  // and the time they took
};

}  // namespace rnic::sim
