// SPDX-License-Identifier: Apache-2.0
// The resource manager (RFC 5041 8.3.2), the command interface, receive rings and the completion
// ring. hw.def (through hw.hpp) is the contract for every register, command word and record field.
#include "core.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "rnic/hw/command.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/wire/bytes.hpp"
#include "rnic/wire/ddp_errors.hpp"

namespace rnic::detail {
namespace {

using namespace rnic::hw;

std::uint32_t lo32(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t hi32(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

using wire::load_le;
using wire::store_le;

std::string cmd_name(std::uint32_t op) {
#define RNIC_CONST(name, value, desc)
#define RNIC_REG(name, offset, access, desc)
#define RNIC_CMD(name, opcode, desc) \
  if (op == (opcode)) return #name;
#define RNIC_FIELD(rec, name, offset, bits, desc)
#include "rnic/hw/hw.def"
#undef RNIC_CONST
#undef RNIC_REG
#undef RNIC_CMD
#undef RNIC_FIELD
  return "opcode " + hex(op);
}

Limits with_defaults(const Limits& l) {
  const Limits d;
  Limits r = l;
  if (r.max_pds == 0) r.max_pds = d.max_pds;
  if (r.max_stags == 0) r.max_stags = d.max_stags;
  if (r.max_stags_per_pd == 0) r.max_stags_per_pd = d.max_stags_per_pd;
  if (r.max_streams == 0) r.max_streams = d.max_streams;
  if (r.max_posted == 0) r.max_posted = d.max_posted;
  if (r.max_buffer_bytes == 0) r.max_buffer_bytes = d.max_buffer_bytes;
  return r;
}

[[noreturn]] void quota(const std::string& limit, std::uint64_t value) {
  throw Error(Errc::kQuota, "client limit " + limit + " (" + std::to_string(value) + ") reached");
}

// STAG_WRITE / STREAM_ENABLE carry the PD in their PD arguments.
constexpr PdId kMaxPd = kArgSTAG_WRITE_PD.mask() >> kArgSTAG_WRITE_PD.lsb;
static_assert(kArgSTAG_WRITE_PD.bits == kArgSTREAM_ENABLE_PD.bits);

StreamState::State state_of(const StreamRec& s) {
  if (s.torn_down) return StreamState::State::kTornDown;
  return s.first_error ? StreamState::State::kError : StreamState::State::kNormal;
}

}  // namespace

// ---- open / close -------------------------------------------------------------------------------

Core::Core(std::unique_ptr<Backend> backend, const std::string& device, const OpenOptions& opts)
    : be_(std::move(backend)), opts_(opts) {
  info_.device = device;
  info_.backend = be_->name();
  info_.id = rd(kRegID);
  info_.version = rd(kRegVERSION);
  if (info_.id != kID_VALUE) {
    throw Error(Errc::kMismatch, device + ": REG_ID is " + hex(info_.id) + ", expected " + hex(kID_VALUE) +
                                     " ('RDDP'): not an rnic kernel");
  }
  if (kVERSION_MAJOR.get(info_.version) != kVERSION_MAJOR.reset) {
    throw Error(Errc::kMismatch, device + ": interface version " + std::to_string(kVERSION_MAJOR.get(info_.version)) +
                                     "." + std::to_string(kVERSION_MINOR.get(info_.version)) + " (REG_VERSION " +
                                     hex(info_.version) + "), this driver needs major " +
                                     std::to_string(kVERSION_MAJOR.reset));
  }
  info_.build_id = rd(kRegBUILD_ID);
  info_.data_width = rd(kRegCAP_DATA_WIDTH);
  info_.stags = rd(kRegCAP_STAGS);
  info_.streams = rd(kRegCAP_STREAMS);
  info_.qns = rd(kRegCAP_QNS);
  info_.ssn_window = rd(kRegCAP_SSN_WINDOW);
  info_.max_segment_bytes = rd(kRegCAP_MAX_SEG_BYTES);
  info_.net_assocs = rd(kRegCAP_NET_ASSOCS);
  info_.net_max_packet = rd(kRegCAP_NET_MAX_PACKET);
  auto check_cap = [&](const char* name, std::uint32_t v, std::uint32_t max) {
    if (v == 0 || v > max) {
      throw Error(Errc::kMismatch,
                  device + ": " + name + " = " + std::to_string(v) + ", expected 1.." + std::to_string(max));
    }
  };
  check_cap("CAP_STAGS", info_.stags, 1u << kCMD_RESULT_INDEX.bits);  // the STag's index
  check_cap("CAP_STREAMS", info_.streams, 1u << kCQE_STREAM_BITS);
  check_cap("CAP_QNS", info_.qns, 1u << kDB_QUEUE_QN.bits);
  // A segment holds at least an untagged header; its length is 16 bits (RFC 5043 5.1: one SCTP chunk).
  if (info_.max_segment_bytes < kUNTAGGED_HDR_BYTES || info_.max_segment_bytes > 0xFFFF) {
    throw Error(Errc::kMismatch, device + ": CAP_MAX_SEG_BYTES = " + std::to_string(info_.max_segment_bytes) +
                                     ", expected " + std::to_string(kUNTAGGED_HDR_BYTES) + "..65535");
  }
  // A card has the network side of this contract or none.
  if (info_.net_assocs != 0 &&
      (info_.net_assocs != kNET_ASSOC_ENTRIES || info_.net_max_packet != kNET_MAX_PACKET_BYTES)) {
    throw Error(Errc::kMismatch, device + ": CAP_NET_ASSOCS = " + std::to_string(info_.net_assocs) +
                                     ", CAP_NET_MAX_PACKET = " + std::to_string(info_.net_max_packet) + ", expected " +
                                     std::to_string(kNET_ASSOC_ENTRIES) + " and " +
                                     std::to_string(kNET_MAX_PACKET_BYTES) + " (or 0: no network side)");
  }
  if (opts_.observer) return;

  if (opts_.cq_log2_entries < 1 || opts_.cq_log2_entries > kCQ_LOG2_MAX) {
    throw Error(Errc::kInvalidArgument, "cq_log2_entries " + std::to_string(opts_.cq_log2_entries) +
                                            " out of range 1.." + std::to_string(kCQ_LOG2_MAX));
  }
  for (std::uint32_t i = 0; i < info_.stags; ++i) free_stags_.push_back(i);
  for (std::uint32_t s = 0; s < info_.streams; ++s) free_streams_.push_back(s);
  stream_owner_.assign(info_.streams, 0);
  if (info_.backend == "xrt") scrub_tables();
  setup_cq();
  publish();
}

Core::~Core() { close(); }

void Core::setup_cq() {
  cq_log2_ = opts_.cq_log2_entries;
  cq_ = be_->alloc(std::size_t{kCQE_BYTES} << cq_log2_, 4096);
  // The card takes a ring configuration only while the ring is disabled and no completion write is
  // in flight (CQ_CTRL reads 0); read it back, so a card that did not take it is an error here.
  if (!disable_cq_and_wait()) {
    throw Error(Errc::kTimeout, "completion ring still busy after disabling it (CQ_CTRL " + hex(rd(kRegCQ_CTRL)) + ")");
  }
  wr(kRegCQ_BASE_LO, lo32(cq_.device_addr));
  wr(kRegCQ_BASE_HI, hi32(cq_.device_addr));
  wr(kRegCQ_LOG2_SIZE, cq_log2_);
  const std::uint64_t base = (std::uint64_t{rd(kRegCQ_BASE_HI)} << 32) | rd(kRegCQ_BASE_LO);
  if (base != cq_.device_addr || rd(kRegCQ_LOG2_SIZE) != cq_log2_) {
    throw Error(Errc::kBackend, "the card did not take the completion ring configuration (base " + hex(base) +
                                    ", log2 " + std::to_string(rd(kRegCQ_LOG2_SIZE)) + ")");
  }
  wr(kRegCQ_CTRL, kCQ_CTRL_ENABLE.put(1));  // resets producer and consumer to 0, phase 1
  cq_enabled_ = true;
  cq_cons_ = cq_cons_written_ = 0;
}

// A card keeps its tables across processes: a new owner invalidates whatever an earlier one left.
void Core::scrub_tables() {
  for (std::uint32_t i = 0; i < info_.stags; ++i)
    command(kCmdSTAG_INVALIDATE, hw::CmdArgs().set(kArgSTAG_INVALIDATE_INDEX, i));
  for (std::uint32_t s = 0; s < info_.streams; ++s)
    command(kCmdSTREAM_TEARDOWN, hw::CmdArgs().set(kArgSTREAM_TEARDOWN_STREAM, s));
}

void Core::close() noexcept {
  if (!be_) return;
  if (!opts_.observer) {
    net_close();  // nothing offloaded any more, and the packet rings are the driver's again
    while (!clients_.empty()) {
      release_client(clients_.begin()->second);
      clients_.erase(clients_.begin());
    }
    if (cq_enabled_) {
      try {
        // A completion write loaded before the disable still lands in the ring: free it only once
        // the card says none is in flight. If that never comes, the ring is left allocated.
        if (disable_cq_and_wait()) be_->free(cq_);
      } catch (const std::exception&) {
        // The transport is gone: nothing more to disable.
      }
    }
    cq_enabled_ = false;
    try {
      be_->publish("");
    } catch (const std::exception&) {
    }
  }
  be_.reset();
}

Backend& Core::backend() {
  if (!be_) throw Error(Errc::kState, "device is closed");
  return *be_;
}

SimPort& Core::sim_port(const char* call) {
  SimPort* p = backend().sim();
  if (p == nullptr) {
    throw Error(Errc::kUnsupported, std::string(call) + ": " + info_.device + " is a card (" + info_.backend +
                                        "): inject, sync and cycles are the simulator's (sim:<socket>); a card's "
                                        "ingress is its network port");
  }
  return *p;
}

void Core::sim_sync() {
  sim_port("sync").sync();
  poll_hw();  // every completion the card wrote is in the ring now: hand it to its client
  flush_publish(true);
}

// ---- MMIO and commands ----------------------------------------------------------------------------

std::uint32_t Core::rd(std::uint32_t offset) {
  ++stats_.mmio_reads;
  return backend().read32(offset);
}

void Core::wr(std::uint32_t offset, std::uint32_t value) {
  ++stats_.mmio_writes;
  backend().write32(offset, value);
}

std::uint64_t Core::rd64(std::uint32_t lo_offset) {
  const std::uint32_t lo = rd(lo_offset);
  const std::uint32_t hi = rd(lo_offset + 4);
  return (std::uint64_t{hi} << 32) | lo;
}

Counters Core::counters() {
  Counters c;
  c.segments = rd64(kRegCNT_SEGMENTS_LO);
  c.bytes = rd64(kRegCNT_BYTES_LO);
  c.messages = rd64(kRegCNT_MESSAGES_LO);
  c.drops = rd64(kRegCNT_DROPS_LO);
  c.access = rd64(kRegCNT_ACCESS_LO);
  c.duplicates = rd64(kRegCNT_DUPLICATES_LO);
  c.write_errors = rd64(kRegCNT_WRITE_ERRORS_LO);
  c.read_errors = rd64(kRegCNT_READ_ERRORS_LO);
  for (unsigned row = 0; row < wire::kAllDdpErrors.size(); ++row) c.errors.push_back(rd64(reg_error_counter_lo(row)));
  c.net = read_net_counters();
  if (!opts_.observer) {
    c.unmatched_completions = unmatched_cqes_;
  } else {
    // The owner's count, from what it published (a card keeps no such counter).
    const auto doc = nlohmann::json::parse(backend().published_state(), nullptr, false);
    if (doc.is_object() && doc.contains("unmatched_completions") && doc["unmatched_completions"].is_number_unsigned()) {
      c.unmatched_completions = doc["unmatched_completions"].get<std::uint64_t>();
    }
  }
  return c;
}

bool Core::disable_cq_and_wait() {
  wr(kRegCQ_CTRL, 0);
  return poll_until([&] { return rd(kRegCQ_CTRL) == 0; }, [] {});  // disabled, not busy
}

void Core::command(std::uint32_t op, const hw::CmdArgs& args) {
  const auto read = [this](std::uint32_t off) { return rd(off); };
  // Fenced commands stay busy until the completions decided before them are written: drain the ring
  // meanwhile, or a full ring would never let the command finish.
  const auto timed_out = [&](const PollBudget& b, const char* what) {
    cmd_stuck_ = true;
    return Error(Errc::kTimeout, "command " + cmd_name(op) + " " + what + " after " + std::to_string(b.polls()) +
                                     " CMD_STATUS reads (" + std::to_string(b.elapsed().count()) + " ms)");
  };
  if (cmd_stuck_) {  // an earlier command timed out: never overwrite its arguments while it runs
    PollBudget budget(cmd_limits_);
    if (!hw::wait_cmd_idle(read, [&] {
          poll_hw();
          return budget.again();
        })) {
      throw timed_out(budget, "not issued: an earlier command is still busy");
    }
    cmd_stuck_ = false;
  }
  ++stats_.commands;
  PollBudget budget(cmd_limits_);
  const std::optional<hw::CmdStatus> st = hw::run_command(
      read, [this](std::uint32_t off, std::uint32_t v) { wr(off, v); },
      [&] {
        poll_hw();
        return budget.again();
      },
      op, args.data(), args.size());
  if (!st) throw timed_out(budget, "still busy");
  if (st->refused()) {
    throw Error(Errc::kBackend, "command " + cmd_name(op) + " refused by the card (CMD_STATUS " + hex(st->raw) + ")");
  }
  if (st->last_op() != op) {
    throw Error(Errc::kBackend, "command " + cmd_name(op) + ": CMD_STATUS reports " + cmd_name(st->last_op()) +
                                    " as the last command (" + hex(st->raw) + ")");
  }
}

// ---- clients --------------------------------------------------------------------------------------

std::uint32_t Core::add_client(const Limits& limits) {
  if (opts_.observer) throw Error(Errc::kState, "observer cannot create clients");
  backend();
  const std::uint32_t id = next_client_++;
  ClientRec& c = clients_[id];
  c.id = id;
  c.limits = with_defaults(limits);
  publish();
  return id;
}

ClientRec& Core::client(std::uint32_t id) {
  if (!be_) throw Error(Errc::kState, "device is closed");
  auto it = clients_.find(id);
  if (it == clients_.end()) throw Error(Errc::kState, "client " + std::to_string(id) + " is gone");
  return it->second;
}

void Core::remove_client(std::uint32_t id) noexcept {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  release_client(it->second);
  clients_.erase(it);
  publish();
}

// Abortive teardown of every stream, then STags, streams, buffers and PDs. A resource whose hardware
// release failed is kept out of the free lists (leaked) rather than handed to someone else.
void Core::release_client(ClientRec& c) noexcept {
  for (auto& [sn, s] : c.streams) {
    if (s.torn_down) continue;
    try {
      teardown_stream(c, sn, Teardown::kAbortive);
    } catch (const std::exception&) {
      s.torn_down = true;
      s.hw_quiet = false;
    }
  }
  while (!c.stags.empty()) {
    auto it = c.stags.begin();
    try {
      invalidate_locked(c, it);
    } catch (const std::exception&) {
      c.stags.erase(it);  // index leaked: its invalidation is not confirmed
    }
  }
  for (auto& [sn, s] : c.streams) {
    if (s.hw_quiet) {
      for (auto& [qn, q] : s.queues) {
        try {
          be_->free(q.ring);
        } catch (const std::exception&) {
        }
      }
      free_streams_.push_back(sn);
    }
    if (sn < stream_owner_.size()) stream_owner_[sn] = 0;
  }
  c.streams.clear();
  for (auto& [id, b] : c.buffers) {
    // Still posted to a stream whose teardown failed, or registered to an STag whose invalidation
    // failed: the card may yet write it, so it is never handed out again (quarantined).
    if (b.posted != 0 || b.registrations != 0) continue;
    try {
      be_->free(b.region);
    } catch (const std::exception&) {
    }
  }
  c.buffers.clear();
  for (auto& [pd, p] : c.pds) free_pds_.push_back(pd);
  c.pds.clear();
}

PdRec& Core::pd_of(ClientRec& c, PdId pd, const char* what) {
  auto it = c.pds.find(pd);
  if (it == c.pds.end()) throw Error(Errc::kNotFound, std::string(what) + ": unknown pd " + std::to_string(pd));
  return it->second;
}

StreamRec& Core::stream_of(ClientRec& c, StreamId stream, const char* what) {
  auto it = c.streams.find(stream);
  if (it == c.streams.end()) {
    throw Error(Errc::kNotFound, std::string(what) + ": unknown stream " + std::to_string(stream));
  }
  return it->second;
}

BufferRec& Core::buffer_of(ClientRec& c, std::uint64_t buffer, const char* what) {
  auto it = c.buffers.find(buffer);
  if (it == c.buffers.end()) {
    throw Error(Errc::kNotFound, std::string(what) + ": unknown buffer " + std::to_string(buffer));
  }
  return it->second;
}

// ---- protection domains and memory --------------------------------------------------------------

PdId Core::alloc_pd(ClientRec& c) {
  if (c.pds.size() >= c.limits.max_pds) quota("max_pds", c.limits.max_pds);
  PdId pd = 0;
  if (!free_pds_.empty()) {
    pd = free_pds_.front();
    free_pds_.pop_front();
  } else if (next_pd_ <= kMaxPd) {
    pd = next_pd_++;
  } else {
    throw Error(Errc::kExhausted, "alloc_pd: all " + std::to_string(kMaxPd) + " protection domains in use");
  }
  c.pds[pd] = PdRec{};
  publish();
  return pd;
}

void Core::dealloc_pd(ClientRec& c, PdId pd) {
  PdRec& p = pd_of(c, pd, "dealloc_pd");
  if (p.stags != 0 || p.streams != 0) {
    throw Error(Errc::kBusy, "dealloc_pd: pd " + std::to_string(pd) + " still has " + std::to_string(p.stags) +
                                 " STags and " + std::to_string(p.streams) + " streams");
  }
  c.pds.erase(pd);
  free_pds_.push_back(pd);
  publish();
}

Buffer Core::alloc_buffer(ClientRec& c, std::size_t bytes) {
  if (bytes == 0) throw Error(Errc::kInvalidArgument, "alloc_buffer: bytes must be > 0");
  if (bytes > c.limits.max_buffer_bytes - c.buffer_bytes) quota("max_buffer_bytes", c.limits.max_buffer_bytes);
  const DmaRegion r = backend().alloc(bytes, 64);
  const std::uint64_t id = next_buffer_++;
  BufferRec& b = c.buffers[id];
  b.region = r;
  b.size = bytes;
  c.buffer_bytes += bytes;
  publish();
  return Buffer{id, r.host, bytes, r.device_addr};
}

void Core::free_buffer(ClientRec& c, std::uint64_t buffer) {
  BufferRec& b = buffer_of(c, buffer, "free_buffer");
  if (b.registrations != 0 || b.posted != 0) {
    throw Error(Errc::kBusy, "free_buffer: buffer " + std::to_string(buffer) + " has " +
                                 std::to_string(b.registrations) + " registrations and " + std::to_string(b.posted) +
                                 " posted receives");
  }
  backend().free(b.region);
  c.buffer_bytes -= b.size;
  c.buffers.erase(buffer);
  publish();
}

void Core::flush_buffer(ClientRec& c, std::uint64_t buffer, std::size_t offset, std::size_t bytes) {
  BufferRec& b = buffer_of(c, buffer, "flush_buffer");
  if (offset > b.size || bytes > b.size - offset) {
    throw Error(Errc::kInvalidArgument, "flush_buffer: offset " + std::to_string(offset) + " + bytes " +
                                            std::to_string(bytes) + " outside buffer " + std::to_string(buffer) +
                                            " of " + std::to_string(b.size) + " bytes");
  }
  backend().to_device(b.region, offset, bytes);
}

Registration Core::register_memory(ClientRec& c, const RegisterRequest& req) {
  PdRec& p = pd_of(c, req.pd, "register_memory");
  BufferRec& b = buffer_of(c, req.buffer, "register_memory");
  if (req.length == 0) throw Error(Errc::kInvalidArgument, "register_memory: length must be > 0");
  if (req.offset > b.size || req.length > b.size - req.offset) {
    throw Error(Errc::kInvalidArgument, "register_memory: offset " + std::to_string(req.offset) + " + length " +
                                            std::to_string(req.length) + " outside buffer " +
                                            std::to_string(req.buffer) + " of " + std::to_string(b.size) + " bytes");
  }
  constexpr std::uint32_t kValid = kRemoteWrite | kRemoteRead | kLocalRead;
  if (req.access == 0 || (req.access & ~kValid) != 0) {
    throw Error(Errc::kInvalidArgument, "register_memory: access " + hex(req.access) +
                                            " must be a non-empty combination of kRemoteWrite|kRemoteRead|kLocalRead");
  }
  if (req.base_to > std::numeric_limits<std::uint64_t>::max() - req.length) {
    throw Error(Errc::kInvalidArgument, "register_memory: base_to " + hex(req.base_to) + " + length " +
                                            std::to_string(req.length) + " wraps the 64-bit tagged offset");
  }
  StreamRec* bound = nullptr;
  if (req.bind_stream) {
    bound = &stream_of(c, *req.bind_stream, "register_memory bind_stream");
    if (bound->pd != req.pd) {
      throw Error(Errc::kInvalidArgument, "register_memory: bind_stream " + std::to_string(*req.bind_stream) +
                                              " is on pd " + std::to_string(bound->pd) + ", not pd " +
                                              std::to_string(req.pd));
    }
    if (bound->torn_down) {
      throw Error(Errc::kState, "register_memory: bind_stream " + std::to_string(*req.bind_stream) + " is torn down");
    }
  }
  if (c.stags.size() >= c.limits.max_stags) quota("max_stags", c.limits.max_stags);
  if (p.stags >= c.limits.max_stags_per_pd) quota("max_stags_per_pd", c.limits.max_stags_per_pd);
  if (free_stags_.empty()) {
    throw Error(Errc::kExhausted, "register_memory: all " + std::to_string(info_.stags) + " STags in use");
  }
  // The card issues the key (STAG_WRITE ignores ARG1[7:0] and advances the index's key, a table that
  // survives owners and resets) and returns the STag in CMD_RESULT.
  const std::uint32_t index = free_stags_.front();
  const std::uint64_t addr = b.region.device_addr + req.offset;
  try {
    command(kCmdSTAG_WRITE, hw::CmdArgs()
                                .set(kArgSTAG_WRITE_INDEX, index)
                                .set(kArgSTAG_WRITE_REMOTE_WRITE, (req.access & kRemoteWrite) != 0)
                                .set(kArgSTAG_WRITE_REMOTE_READ, (req.access & kRemoteRead) != 0)
                                .set(kArgSTAG_WRITE_LOCAL_READ, (req.access & kLocalRead) != 0)
                                .set(kArgSTAG_WRITE_BOUND, req.bind_stream.has_value())
                                .set(kArgSTAG_WRITE_PD, req.pd)
                                .set(kArgSTAG_WRITE_STREAM, req.bind_stream.value_or(0))
                                .set(kArgSTAG_WRITE_BASE_TO_LO, lo32(req.base_to))
                                .set(kArgSTAG_WRITE_BASE_TO_HI, hi32(req.base_to))
                                .set(kArgSTAG_WRITE_LENGTH_LO, lo32(req.length))
                                .set(kArgSTAG_WRITE_LENGTH_HI, hi32(req.length))
                                .set(kArgSTAG_WRITE_ADDR_LO, lo32(addr))
                                .set(kArgSTAG_WRITE_ADDR_HI, hi32(addr)));
  } catch (const Error& e) {
    free_stags_.pop_front();
    // Timeout: the entry may yet become valid, never reuse this index. Refused: nothing was written.
    if (e.code() != Errc::kTimeout) free_stags_.push_back(index);
    throw;
  }
  free_stags_.pop_front();
  const Stag stag = rd(kRegCMD_RESULT);
  if (kCMD_RESULT_INDEX.get(stag) != index) {
    // The card and the driver disagree on what was written: the entry at `index` may be valid with a
    // key the driver does not know. Invalidate it (best effort) and never hand the index out again.
    try {
      command(kCmdSTAG_INVALIDATE, hw::CmdArgs().set(kArgSTAG_INVALIDATE_INDEX, index));
    } catch (const Error&) {
    }
    throw Error(Errc::kMismatch, "register_memory: STAG_WRITE of index " + std::to_string(index) + " returned STag " +
                                     hex(stag) + " in CMD_RESULT (index " +
                                     std::to_string(kCMD_RESULT_INDEX.get(stag)) + "); index retired");
  }
  c.stags[stag] = StagRec{req.pd, req.buffer, req.offset, req.length, req.base_to, req.access, req.bind_stream};
  ++p.stags;
  ++b.registrations;
  if (bound != nullptr) ++bound->bound_stags;
  publish();
  return Registration{stag, req.base_to, req.length};
}

void Core::invalidate(ClientRec& c, Stag stag) {
  auto it = c.stags.find(stag);
  if (it == c.stags.end()) throw Error(Errc::kNotFound, "invalidate: unknown STag " + hex(stag));
  if (it->second.send_holds != 0) {
    throw Error(Errc::kBusy, "invalidate: STag " + hex(stag) + " has " + std::to_string(it->second.send_holds) +
                                 " sends not yet acknowledged (abort the association to end them)");
  }
  invalidate_locked(c, it);
  publish();
}

// The checks the card makes on a descriptor (docs/transmit.md), made once more where the error can name
// the argument: a send through `stag` of [to, to + length) on a stream of `pd`.
void Core::hold_local_read(ClientRec& c, Stag stag, PdId pd, std::uint64_t to, std::uint64_t length) {
  auto it = c.stags.find(stag);
  if (it == c.stags.end()) throw Error(Errc::kNotFound, "hold_local_read: unknown STag " + hex(stag));
  StagRec& r = it->second;
  if ((r.access & kLocalRead) == 0) {
    throw Error(Errc::kInvalidArgument, "hold_local_read: STag " + hex(stag) + " has no kLocalRead");
  }
  if (to < r.base_to || length > r.length || to - r.base_to > r.length - length) {
    throw Error(Errc::kInvalidArgument, "hold_local_read: [" + hex(to) + ", +" + std::to_string(length) +
                                            ") outside STag " + hex(stag) + "'s [" + hex(r.base_to) + ", +" +
                                            std::to_string(r.length) + ")");
  }
  if (r.pd != pd) {
    throw Error(Errc::kInvalidArgument, "hold_local_read: STag " + hex(stag) + " is on pd " + std::to_string(r.pd) +
                                            ", the stream on pd " + std::to_string(pd) + " (RFC 5041 8.3.2)");
  }
  ++r.send_holds;
}

void Core::release_local_read(ClientRec& c, Stag stag) {
  auto it = c.stags.find(stag);
  if (it == c.stags.end()) throw Error(Errc::kNotFound, "release_local_read: unknown STag " + hex(stag));
  if (it->second.send_holds == 0) {
    throw Error(Errc::kState, "release_local_read: STag " + hex(stag) + " holds no send");
  }
  --it->second.send_holds;
}

// STAG_INVALIDATE returns once busy clears: the fence of RFC 5041 8.3.1 #6. Only then the index is
// free again; the card advances its key at the next STAG_WRITE, so the old STag stays invalid (8.3.1,
// 7.1 Invalid STag).
void Core::invalidate_locked(ClientRec& c, std::map<Stag, StagRec>::iterator it) {
  const Stag stag = it->first;
  const std::uint32_t index = kCMD_RESULT_INDEX.get(stag);
  command(kCmdSTAG_INVALIDATE, hw::CmdArgs().set(kArgSTAG_INVALIDATE_INDEX, index));
  // Fenced: every completion that names the STag is in the ring now; dispatch them while it is known.
  poll_hw();
  const StagRec& r = it->second;
  if (auto p = c.pds.find(r.pd); p != c.pds.end()) --p->second.stags;
  if (auto b = c.buffers.find(r.buffer); b != c.buffers.end()) --b->second.registrations;
  if (r.bind) {
    if (auto s = c.streams.find(*r.bind); s != c.streams.end()) --s->second.bound_stags;
  }
  c.stags.erase(it);
  free_stags_.push_back(index);
}

// ---- streams and receive queues -------------------------------------------------------------------

StreamId Core::create_stream(ClientRec& c, PdId pd) {
  PdRec& p = pd_of(c, pd, "create_stream");
  if (c.streams.size() >= c.limits.max_streams) quota("max_streams", c.limits.max_streams);
  if (free_streams_.empty()) {
    throw Error(Errc::kExhausted, "create_stream: all " + std::to_string(info_.streams) + " streams in use");
  }
  const StreamId sn = free_streams_.front();
  try {
    command(kCmdSTREAM_ENABLE, hw::CmdArgs().set(kArgSTREAM_ENABLE_STREAM, sn).set(kArgSTREAM_ENABLE_PD, pd));
  } catch (const Error& e) {
    if (e.code() == Errc::kTimeout) {
      free_streams_.pop_front();  // state unknown: never reuse this number
    } else {
      free_streams_.pop_front();
      free_streams_.push_back(sn);
    }
    throw;
  }
  free_streams_.pop_front();
  StreamRec& s = c.streams[sn];
  s.pd = pd;
  ++p.streams;
  stream_owner_[sn] = c.id;
  publish();
  return sn;
}

void Core::configure_queue(ClientRec& c, StreamId stream, std::uint32_t qn, std::uint32_t log2_entries,
                           std::uint32_t first_msn) {
  StreamRec& s = stream_of(c, stream, "configure_queue");
  if (qn >= info_.qns) {
    throw Error(Errc::kInvalidArgument,
                "configure_queue: qn " + std::to_string(qn) + " out of range 0.." + std::to_string(info_.qns - 1));
  }
  if (log2_entries > kRQ_LOG2_MAX) {
    throw Error(Errc::kInvalidArgument, "configure_queue: log2_entries " + std::to_string(log2_entries) +
                                            " out of range 0.." + std::to_string(kRQ_LOG2_MAX));
  }
  if (first_msn == 0) {
    // hw.def QUEUE_CONFIG: ARG5 0 means 1. RFC 5041 4.3: MSNs start at 1; 0 follows 0xFFFFFFFF.
    throw Error(Errc::kInvalidArgument,
                "configure_queue: first_msn 0 out of range 1..4294967295 (the card reads 0 as "
                "1; MSN 0 is reached by wrapping from 0xFFFFFFFF)");
  }
  if (s.torn_down) throw Error(Errc::kState, "configure_queue: stream " + std::to_string(stream) + " is torn down");
  if (s.queues.count(qn) != 0) {
    throw Error(Errc::kState, "configure_queue: queue " + std::to_string(qn) + " of stream " + std::to_string(stream) +
                                  " is already configured");
  }
  const DmaRegion ring = backend().alloc(std::size_t{kRQ_DESC_BYTES} << log2_entries, 64);
  try {
    command(kCmdQUEUE_CONFIG, hw::CmdArgs()
                                  .set(kArgQUEUE_CONFIG_STREAM, stream)
                                  .set(kArgQUEUE_CONFIG_QN, qn)
                                  .set(kArgQUEUE_CONFIG_RING_LO, lo32(ring.device_addr))
                                  .set(kArgQUEUE_CONFIG_RING_HI, hi32(ring.device_addr))
                                  .set(kArgQUEUE_CONFIG_LOG2, log2_entries)
                                  .set(kArgQUEUE_CONFIG_FIRST_MSN, first_msn));
  } catch (const Error& e) {
    if (e.code() != Errc::kTimeout) be_->free(ring);  // timeout: the card may yet read it
    throw;
  }
  QueueRec& q = s.queues[qn];
  q.ring = ring;
  q.log2 = log2_entries;
  q.prod = first_msn - 1u;  // nothing posted yet: the first post gets first_msn
  publish();
}

void Core::post_recv(ClientRec& c, StreamId stream, std::uint32_t qn, std::uint64_t buffer, std::uint64_t offset,
                     std::uint32_t length, std::uint64_t cookie) {
  StreamRec& s = stream_of(c, stream, "post_recv");
  if (qn >= info_.qns) {
    throw Error(Errc::kInvalidArgument,
                "post_recv: qn " + std::to_string(qn) + " out of range 0.." + std::to_string(info_.qns - 1));
  }
  if (s.torn_down) throw Error(Errc::kState, "post_recv: stream " + std::to_string(stream) + " is torn down");
  auto qit = s.queues.find(qn);
  if (qit == s.queues.end()) {
    throw Error(Errc::kState, "post_recv: queue " + std::to_string(qn) + " of stream " + std::to_string(stream) +
                                  " is not configured");
  }
  QueueRec& q = qit->second;
  BufferRec& b = buffer_of(c, buffer, "post_recv");
  if (length == 0) throw Error(Errc::kInvalidArgument, "post_recv: length must be > 0");
  if (offset > b.size || length > b.size - offset) {
    throw Error(Errc::kInvalidArgument, "post_recv: offset " + std::to_string(offset) + " + length " +
                                            std::to_string(length) + " outside buffer " + std::to_string(buffer) +
                                            " of " + std::to_string(b.size) + " bytes");
  }
  if (q.posted.size() >= q.entries()) {
    throw Error(Errc::kQueueFull, "post_recv: queue " + std::to_string(qn) + " of stream " + std::to_string(stream) +
                                      " has all " + std::to_string(q.entries()) + " entries posted");
  }
  if (c.posted >= c.limits.max_posted) quota("max_posted", c.limits.max_posted);

  // The buffer for MSN m is ring slot (m - 1) mod 2^log2 (docs/rtl-architecture.md, untagged buffers),
  // MSNs mod 2^32 (RFC 5041 4.3): 0xFFFFFFFF is followed by 0.
  const std::uint32_t msn = q.prod + 1u;
  const std::size_t slot = std::size_t{(msn - 1u) & (q.entries() - 1u)} * kRQ_DESC_BYTES;
  std::uint8_t* d = q.ring.host + slot;
  std::fill(d, d + kRQ_DESC_BYTES, std::uint8_t{0});
  store_le(d + kRQD_ADDR_OFFSET, b.region.device_addr + offset, kRQD_ADDR_BITS / 8);
  store_le(d + kRQD_LENGTH_OFFSET, length, kRQD_LENGTH_BITS / 8);
  store_le(d + kRQD_COOKIE_OFFSET, msn, kRQD_COOKIE_BITS / 8);
  backend().to_device(q.ring, slot, kRQ_DESC_BYTES);
  // The doorbell: DB_QUEUE names the queue (written only when it changes: the driver is the card's only
  // writer, under mu), DB_PROD rings it.
  const std::uint32_t sel = db_queue(stream, qn);
  if (db_selected_ != sel) {
    db_selected_.reset();  // unknown should the write throw
    wr(kRegDB_QUEUE, sel);
    db_selected_ = sel;
  }
  wr(kRegDB_PROD, msn);
  q.prod = msn;
  q.posted.push_back(PostedRecv{msn, buffer, offset, length, cookie});
  ++b.posted;
  ++c.posted;
  publish();
}

void Core::flush_stream(ClientRec& c, StreamId stream, StreamRec& s) {
  for (auto& [qn, q] : s.queues) {
    for (const PostedRecv& p : q.posted) {
      Completion k;
      k.kind = Completion::Kind::kFlushed;
      k.stream = stream;
      k.qn = qn;
      k.msn = p.msn;
      k.length = p.length;
      k.buffer = p.buffer;
      k.offset = p.offset;
      k.cookie = p.cookie;
      c.completions.push_back(std::move(k));
      if (auto b = c.buffers.find(p.buffer); b != c.buffers.end()) --b->second.posted;
      --c.posted;
    }
    q.posted.clear();
  }
}

// RFC 5041 6.2. Graceful: no more posts, the card drains what is in flight (sync), completions so
// far are dispatched, then STREAM_TEARDOWN. Abortive: STREAM_TEARDOWN at once. STREAM_TEARDOWN is
// fenced (busy until every write and completion decided before it is done), so once it returns the
// ring is polled first, then every buffer still posted completes as kFlushed: a message the card
// completed before the teardown comes back as its completion, never as a flush. If the command does
// not finish, the card may still write the posted buffers: they stay posted (free_buffer refuses
// them) and are never freed.
void Core::teardown_stream(ClientRec& c, StreamId stream, Teardown how) {
  StreamRec& s = stream_of(c, stream, "teardown_stream");
  if (s.torn_down)
    throw Error(Errc::kState, "teardown_stream: stream " + std::to_string(stream) + " is already torn down");
  s.torn_down = true;  // no more posts from here on
  if (how == Teardown::kGraceful) {
    try {
      if (SimPort* sim = backend().sim()) sim->sync();  // a card drains on its own clock
      poll_hw();
    } catch (const Error&) {
      s.torn_down = false;  // the card was not touched: the stream stays usable
      throw;
    }
  }
  try {
    if (s.live) {  // its chunks go to the host whole from here on (docs/network.md)
      wr(kRegNET_STREAM_LIVE, stream);
      s.live = false;
    }
    command(kCmdSTREAM_TEARDOWN, hw::CmdArgs().set(kArgSTREAM_TEARDOWN_STREAM, stream));
  } catch (const Error&) {
    s.hw_quiet = false;  // the card may still read its rings and write its buffers
    publish();
    throw;
  }
  poll_hw();
  flush_stream(c, stream, s);
  publish();
}

void Core::destroy_stream(ClientRec& c, StreamId stream) {
  StreamRec& s = stream_of(c, stream, "destroy_stream");
  if (!s.torn_down) {
    throw Error(Errc::kState, "destroy_stream: stream " + std::to_string(stream) + " is not torn down");
  }
  if (s.bound_stags != 0) {
    throw Error(Errc::kBusy, "destroy_stream: stream " + std::to_string(stream) + " has " +
                                 std::to_string(s.bound_stags) + " STags bound to it");
  }
  if (s.hw_quiet) {
    for (auto& [qn, q] : s.queues) backend().free(q.ring);
    free_streams_.push_back(stream);
  }
  if (auto p = c.pds.find(s.pd); p != c.pds.end()) --p->second.streams;
  stream_owner_[stream] = 0;
  c.streams.erase(stream);
  publish();
}

// ---- completions ----------------------------------------------------------------------------------

bool Core::cq_pending() {
  if (!cq_enabled_) return false;
  return rd(kRegCQ_PROD) != cq_cons_;
}

void Core::poll_hw() {
  if (!cq_enabled_) {
    flush_publish(false);
    return;
  }
  const std::uint32_t mask = (1u << cq_log2_) - 1u;
  for (std::uint32_t n = 0; n <= mask; ++n) {
    const std::size_t off = std::size_t{cq_cons_ & mask} * kCQE_BYTES;
    backend().from_device(cq_, off, kCQE_BYTES);
    const std::uint8_t* e = cq_.host + off;
    const bool phase = (load_le(e + kCQE_FLAGS_OFFSET, 1) & kCQE_FLAGS_PHASE.mask()) != 0;
    const bool want = ((cq_cons_ >> cq_log2_) & 1u) == 0;  // 1 on the first lap, flipping per lap
    if (phase != want) break;
    std::atomic_thread_fence(std::memory_order_acquire);  // the entry is read after its phase
    dispatch(e);
    ++cq_cons_;
  }
  if (cq_cons_ != cq_cons_written_) {
    wr(kRegCQ_CONS, cq_cons_);
    cq_cons_written_ = cq_cons_;
  }
  flush_publish(false);  // earlier changes and what the entries just read changed
}

void Core::unmatched(StreamRec* s) noexcept {
  ++unmatched_cqes_;
  if (s != nullptr) ++s->unmatched;
  publish_dirty_ = true;  // poll_hw publishes once it has read the ring
}

// One ring entry to its client (the rules per kind are Completion's, rnic.hpp). Nothing is dropped
// silently: an entry that names no stream the driver holds, no configured queue, or not the head of its
// queue's posted buffers (the card completes them in MSN order) is counted as unmatched (total and per
// stream) and given to nobody. A tagged entry's STag is not looked up to decide whether it is
// delivered (RFC 5041 5.2, see there). An error entry moves the stream to the error state (7.1).
void Core::dispatch(const std::uint8_t* e) {
  auto f = [e](std::uint32_t off, std::uint32_t bits) { return load_le(e + off, bits / 8); };
  const auto stream = static_cast<StreamId>(f(kCQE_STREAM_OFFSET, kCQE_STREAM_BITS));
  const auto flags = static_cast<std::uint32_t>(f(kCQE_FLAGS_OFFSET, kCQE_FLAGS_BITS));
  if (stream >= stream_owner_.size() || stream_owner_[stream] == 0) return unmatched(nullptr);
  auto cit = clients_.find(stream_owner_[stream]);
  if (cit == clients_.end()) return unmatched(nullptr);
  ClientRec& c = cit->second;
  auto sit = c.streams.find(stream);
  if (sit == c.streams.end()) return unmatched(nullptr);
  StreamRec& s = sit->second;
  Completion k;
  k.stream = stream;
  k.ssn = static_cast<std::uint16_t>(f(kCQE_SSN_OFFSET, kCQE_SSN_BITS));
  k.length = static_cast<std::uint32_t>(f(kCQE_LENGTH_OFFSET, kCQE_LENGTH_BITS));
  k.rsvd_ulp = f(kCQE_RSVD_ULP_OFFSET, kCQE_RSVD_ULP_BITS);
  const auto stag_qn = static_cast<std::uint32_t>(f(kCQE_STAG_QN_OFFSET, kCQE_STAG_QN_BITS));
  const bool tagged = (flags & kCQE_FLAGS_TAGGED.mask()) != 0;
  // Every entry changes the published tables (a consumed buffer, a pending completion, an error
  // state): poll_hw publishes once it has read the ring.
  publish_dirty_ = true;
  if ((flags & kCQE_FLAGS_ERROR.mask()) != 0) {
    // RFC 5041 7.2: type and code, the failing segment's SSN and length, its DDP header. An order
    // error (found at delivery) carries the segment's QN and MSN instead of a header.
    k.kind = Completion::Kind::kError;
    k.err_type = static_cast<std::uint8_t>(f(kCQE_ERR_TYPE_OFFSET, kCQE_ERR_TYPE_BITS));
    k.err_code = static_cast<std::uint8_t>(f(kCQE_ERR_CODE_OFFSET, kCQE_ERR_CODE_BITS));
    k.order = (flags & kCQE_FLAGS_ORDER.mask()) != 0;
    if (k.order) {
      k.qn = stag_qn;
      k.msn = static_cast<std::uint32_t>(f(kCQE_MSN_OFFSET, kCQE_MSN_BITS));
    } else {
      const std::size_t hdr = tagged ? 14 : kCQE_HEADER_BITS / 8;
      k.header.assign(e + kCQE_HEADER_OFFSET, e + kCQE_HEADER_OFFSET + hdr);
    }
    ++s.errors;
    if (!s.first_error) s.first_error = StreamError{k.err_type, k.err_code, k.order, k.ssn, k.qn, k.msn};
    c.completions.push_back(std::move(k));
    return;
  }
  if (tagged) {
    // RFC 5041 5.2: "The STag and TO fields MUST NOT be checked for a zero-length Tagged DDP Message",
    // and the card checks them for every other tagged segment before placing it (7.1: valid, bound to
    // the stream's PD, in bounds), so a tagged delivery is the stream owner's whatever STag it names: a
    // zero-length message carries any STag (RDMAP's zero-length RDMA Write does). Not looked up to
    // decide delivery; looked up only to make the card's writes visible (XRT: bo sync) over the range
    // of an STag the client holds (invalidation is fenced: never after it).
    k.kind = Completion::Kind::kTagged;
    k.stag = stag_qn;
    k.length = 0;
    if (auto st = c.stags.find(stag_qn); st != c.stags.end()) {
      if (auto b = c.buffers.find(st->second.buffer); b != c.buffers.end()) {
        backend().from_device(b->second.region, st->second.offset, st->second.length);
      }
    }
    c.completions.push_back(std::move(k));
    return;
  }
  // Untagged: the buffer posted for (stream, QN, MSN), which must be the queue's oldest.
  k.kind = Completion::Kind::kUntagged;
  k.qn = stag_qn;
  k.msn = static_cast<std::uint32_t>(f(kCQE_MSN_OFFSET, kCQE_MSN_BITS));
  auto qit = s.queues.find(k.qn);
  if (qit == s.queues.end()) return unmatched(&s);
  auto& posted = qit->second.posted;
  if (posted.empty() || posted.front().msn != k.msn) return unmatched(&s);  // flushed, never posted, out of order
  const PostedRecv p = posted.front();
  posted.pop_front();
  k.buffer = p.buffer;
  k.offset = p.offset;
  k.cookie = p.cookie;
  if (auto b = c.buffers.find(p.buffer); b != c.buffers.end()) {
    --b->second.posted;
    backend().from_device(b->second.region, p.offset, std::min<std::uint32_t>(k.length, p.length));
  }
  --c.posted;
  c.completions.push_back(std::move(k));
}

StreamState Core::stream_state(ClientRec& c, StreamId stream) {
  const StreamRec& s = stream_of(c, stream, "stream_state");
  StreamState st;
  st.state = state_of(s);
  st.first_error = s.first_error;
  st.errors = s.errors;
  st.unmatched_completions = s.unmatched;
  return st;
}

std::size_t Core::take_completions(ClientRec& c, std::vector<Completion>& out, std::size_t max) {
  out.clear();
  while (out.size() < max && !c.completions.empty()) {
    out.push_back(std::move(c.completions.front()));
    c.completions.pop_front();
  }
  return out.size();
}

// ---- published state ------------------------------------------------------------------------------

std::string Core::state_json(bool tables) const {
  using nlohmann::json;
  json clients = json::array();
  for (const auto& [id, c] : clients_) {
    if (!tables) {  // too large to publish whole: counts only
      clients.push_back({{"id", id},
                         {"pd_count", c.pds.size()},
                         {"buffer_count", c.buffers.size()},
                         {"stag_count", c.stags.size()},
                         {"stream_count", c.streams.size()},
                         {"buffer_bytes", c.buffer_bytes},
                         {"posted", c.posted},
                         {"pending_completions", c.completions.size()}});
      continue;
    }
    json pds = json::array();
    for (const auto& [pd, p] : c.pds) pds.push_back({{"pd", pd}, {"stags", p.stags}, {"streams", p.streams}});
    json buffers = json::array();
    for (const auto& [bid, b] : c.buffers) {
      buffers.push_back({{"id", bid},
                         {"size", b.size},
                         {"device_addr", b.region.device_addr},
                         {"registrations", b.registrations},
                         {"posted", b.posted}});
    }
    json stags = json::array();
    for (const auto& [stag, s] : c.stags) {
      json access = json::array();
      if ((s.access & kRemoteWrite) != 0) access.push_back("remote_write");
      if ((s.access & kRemoteRead) != 0) access.push_back("remote_read");
      if ((s.access & kLocalRead) != 0) access.push_back("local_read");
      stags.push_back({{"stag", stag},
                       {"index", kCMD_RESULT_INDEX.get(stag)},
                       {"key", kCMD_RESULT_KEY.get(stag)},
                       {"pd", s.pd},
                       {"buffer", s.buffer},
                       {"offset", s.offset},
                       {"base_to", s.base_to},
                       {"length", s.length},
                       {"access", access},
                       {"bound_stream", s.bind ? json(*s.bind) : json(nullptr)}});
    }
    json streams = json::array();
    for (const auto& [sn, s] : c.streams) {
      json queues = json::array();
      for (const auto& [qn, q] : s.queues) {
        queues.push_back({{"qn", qn},
                          {"entries", q.entries()},
                          {"posted", q.posted.size()},
                          {"next_msn", q.prod + 1},
                          {"ring", q.ring.device_addr}});
      }
      json first_error = nullptr;
      if (s.first_error) {
        const StreamError& fe = *s.first_error;
        first_error = {{"type", fe.err_type}, {"code", fe.err_code}, {"order", fe.order}, {"ssn", fe.ssn}};
        if (fe.order) {
          first_error["qn"] = fe.qn;
          first_error["msn"] = fe.msn;
        }
      }
      streams.push_back({{"stream", sn},
                         {"pd", s.pd},
                         {"state", stream_state_name(state_of(s))},
                         {"first_error", first_error},
                         {"errors", s.errors},
                         {"unmatched_completions", s.unmatched},
                         {"bound_stags", s.bound_stags},
                         {"queues", queues}});
    }
    clients.push_back({{"id", id},
                       {"limits",
                        {{"max_pds", c.limits.max_pds},
                         {"max_stags", c.limits.max_stags},
                         {"max_stags_per_pd", c.limits.max_stags_per_pd},
                         {"max_streams", c.limits.max_streams},
                         {"max_posted", c.limits.max_posted},
                         {"max_buffer_bytes", c.limits.max_buffer_bytes}}},
                       {"buffer_bytes", c.buffer_bytes},
                       {"posted", c.posted},
                       {"pending_completions", c.completions.size()},
                       {"pds", pds},
                       {"buffers", buffers},
                       {"stags", stags},
                       {"streams", streams}});
  }
  json doc = {{"device", info_.device},
              {"backend", info_.backend},
              {"stags_free", free_stags_.size()},
              {"streams_free", free_streams_.size()},
              {"cq", {{"entries", 1u << cq_log2_}, {"cons", cq_cons_}, {"base", cq_.device_addr}}},
              {"unmatched_completions", unmatched_cqes_},
              {"stats",
               {{"mmio_reads", stats_.mmio_reads}, {"mmio_writes", stats_.mmio_writes}, {"commands", stats_.commands}}},
              {"clients", clients}};
  if (!tables) doc["truncated"] = true;
  return doc.dump();
}

void Core::publish() noexcept {
  publish_dirty_ = true;
  flush_publish(false);
}

void Core::flush_publish(bool force) noexcept {
  if (!be_ || opts_.observer || !publish_dirty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_publish_ < kPublishInterval) return;
  publish_dirty_ = false;
  last_publish_ = now;
  // Publishing is for rnicctl only; a failure must not undo a table change.
  try {
    be_->publish(state_json(true));
    return;
  } catch (const Error& e) {
    if (e.code() != Errc::kInvalidArgument) return;  // kInvalidArgument: larger than the backend takes
  } catch (const std::exception&) {
    return;
  }
  try {
    be_->publish(state_json(false));
  } catch (const std::exception&) {
  }
}

}  // namespace rnic::detail
