// SPDX-License-Identifier: Apache-2.0
// The driver's core: one per opened device, shared by the Device and its Clients (a Client that
// outlives its Device finds it closed, never a dangling pointer). It is the resource manager of
// RFC 5041 8.3.2: the STag, stream and PD tables, the per-client handles and limits, the command
// interface, the receive rings and the completion ring. Every member function expects `mu` held.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "rnic/driver/rnic.hpp"
#include "rnic/hw/command.hpp"

namespace rnic::detail {

// One receive buffer posted to a queue and not yet completed.
struct PostedRecv {
  std::uint32_t msn = 0;
  std::uint64_t buffer = 0, offset = 0;
  std::uint32_t length = 0;
  std::uint64_t cookie = 0;
};

struct QueueRec {
  DmaRegion ring;
  std::uint32_t log2 = 0;
  std::uint32_t prod = 0;         // MSN of the last posted buffer (first MSN - 1 before the first post; mod 2^32)
  std::deque<PostedRecv> posted;  // in posting (= MSN) order
  std::uint32_t entries() const { return 1u << log2; }
};

struct StreamRec {
  PdId pd = 0;
  bool torn_down = false;
  bool hw_quiet = true;  // false when STREAM_TEARDOWN failed: its rings and posted buffers are never freed
  bool live = false;     // NET_STREAM_LIVE set (set_stream_live): cleared before STREAM_TEARDOWN
  std::uint32_t bound_stags = 0;
  std::optional<StreamError> first_error;  // RFC 5041 7.1: set by the first error completion
  std::uint64_t errors = 0, unmatched = 0;
  std::map<std::uint32_t, QueueRec> queues;  // by QN
};

struct StagRec {
  PdId pd = 0;
  std::uint64_t buffer = 0, offset = 0, length = 0, base_to = 0;
  std::uint32_t access = 0;
  std::optional<StreamId> bind;
  std::uint32_t send_holds = 0;  // sends not yet complete that read through it (hold_local_read)
};

struct BufferRec {
  DmaRegion region;
  std::size_t size = 0;
  std::uint32_t registrations = 0, posted = 0;
};

struct PdRec {
  std::uint32_t stags = 0, streams = 0;
};

struct ClientRec {
  std::uint32_t id = 0;
  Limits limits;
  std::map<PdId, PdRec> pds;
  std::map<std::uint64_t, BufferRec> buffers;
  std::map<Stag, StagRec> stags;
  std::map<StreamId, StreamRec> streams;
  std::uint64_t buffer_bytes = 0;
  std::uint32_t posted = 0;
  std::deque<Completion> completions;
};

// The network side (net.cpp): both packet rings and what the driver set in the association table.
struct NetRing {
  DmaRegion mem;
  std::uint32_t log2_slots = 0;
  std::uint32_t index = 0;  // rx: the consumer (next slot to read); tx: the producer (next slot to fill)
};
struct NetState {
  NetRing rx, tx;
  std::uint32_t log2_slot_bytes = 0;
  std::uint32_t tx_cons = 0;             // NET_TX_CONS as last read
  std::set<std::uint32_t> associations;  // entries written and not cleared
};

// How long a command may stay busy (tests shorten it).
struct CommandLimits {
  std::uint64_t max_polls = 10'000'000;
  std::chrono::milliseconds timeout{5000};
  std::uint64_t spin_polls = 64;  // polls before each further poll sleeps a little
};

class Core {
 public:
  Core(std::unique_ptr<Backend> backend, const std::string& device, const OpenOptions& opts);
  ~Core();  // close() if not yet closed
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  mutable std::mutex mu;

  // ---- device ---------------------------------------------------------------------------------
  const DeviceInfo& info() const { return info_; }
  bool observer() const { return opts_.observer; }
  bool closed() const { return be_ == nullptr; }
  void close() noexcept;  // frees every client's resources, disables the CQ, drops the backend
  Backend& backend();     // kState once closed
  // The simulator's ingress and clock: kUnsupported on a card (naming the call), kState once closed.
  SimPort& sim_port(const char* call);
  // SimControl::sync: the simulator's sync, then the completion ring is read and the tables published.
  void sim_sync();
  std::uint32_t rd(std::uint32_t offset);
  void wr(std::uint32_t offset, std::uint32_t value);
  std::uint64_t rd64(std::uint32_t lo_offset);  // LO then HI (reading LO latches HI)
  Counters counters();
  DriverStats stats() const { return stats_; }
  CommandLimits& command_limits() { return cmd_limits_; }

  // ---- clients --------------------------------------------------------------------------------
  std::uint32_t add_client(const Limits& limits);
  ClientRec& client(std::uint32_t id);            // kState when the device is closed or the client gone
  void remove_client(std::uint32_t id) noexcept;  // frees everything it holds

  PdId alloc_pd(ClientRec& c);
  void dealloc_pd(ClientRec& c, PdId pd);
  Buffer alloc_buffer(ClientRec& c, std::size_t bytes);
  void free_buffer(ClientRec& c, std::uint64_t buffer);
  void flush_buffer(ClientRec& c, std::uint64_t buffer, std::size_t offset, std::size_t bytes);
  Registration register_memory(ClientRec& c, const RegisterRequest& req);
  void invalidate(ClientRec& c, Stag stag);
  void hold_local_read(ClientRec& c, Stag stag, PdId pd, std::uint64_t to, std::uint64_t length);
  void release_local_read(ClientRec& c, Stag stag);
  StreamId create_stream(ClientRec& c, PdId pd);
  void configure_queue(ClientRec& c, StreamId stream, std::uint32_t qn, std::uint32_t log2_entries,
                       std::uint32_t first_msn);
  void post_recv(ClientRec& c, StreamId stream, std::uint32_t qn, std::uint64_t buffer, std::uint64_t offset,
                 std::uint32_t length, std::uint64_t cookie);
  void teardown_stream(ClientRec& c, StreamId stream, Teardown how);
  void destroy_stream(ClientRec& c, StreamId stream);
  StreamState stream_state(ClientRec& c, StreamId stream);
  std::size_t take_completions(ClientRec& c, std::vector<Completion>& out, std::size_t max);
  // ---- network side (net.cpp) -----------------------------------------------------------------
  void net_open(const NetOptions& opts);
  bool net_open() const { return net_.has_value(); }
  std::size_t net_receive(std::vector<NetRxPacket>& out, std::size_t max);
  std::uint32_t net_send(const std::vector<std::uint8_t>& packet, std::uint16_t socket);
  std::uint32_t net_send_gather(const std::vector<std::uint8_t>& packet, std::uint16_t socket,
                                std::uint32_t association);
  // One packet into the transmit ring (n: the open network side): send and send_gather's common part.
  std::uint32_t net_put_slot(NetState& n, const char* what, const std::vector<std::uint8_t>& packet,
                             std::uint16_t socket, bool gather, std::uint32_t association);
  NetTxFaults net_tx_faults();
  void net_clear_tx_faults(std::uint32_t associations);
  std::uint32_t net_tx_pending();
  std::uint32_t net_tx_consumed();
  void net_set_association(std::uint32_t index, const NetAssociation& a);
  void net_clear_association(std::uint32_t index);
  void net_set_socket(std::uint32_t index, std::uint32_t ip, std::uint16_t port);
  NetCounters net_counters();
  NetCounters read_net_counters();  // NET_CNT0..14, without the open_net check
  void set_stream_live(ClientRec& c, StreamId stream, bool live);

  // Reads the hardware completion ring and dispatches every new entry to its client's queue.
  void poll_hw();
  // True when CQ_PROD says entries are waiting that poll_hw has not read (one MMIO read).
  bool cq_pending();

  // The tables for rnicctl: publish() marks them changed (so does every completion poll_hw reads:
  // it consumes a buffer or adds a pending completion); they go out at most every
  // kPublishInterval (a full document per change would make N registrations cost O(N^2)), from the
  // next call, poll/wait included, and at once from flush_publish(true) (SimControl::sync,
  // Device::published_state).
  void publish() noexcept;
  void flush_publish(bool force) noexcept;
  std::string state_json(bool tables = true) const;

 private:
  static constexpr std::chrono::milliseconds kPublishInterval{20};
  bool publish_dirty_ = false;
  std::chrono::steady_clock::time_point last_publish_{};

  void setup_cq();
  // Both rings off and idle (their memory is the driver's again), every association written cleared;
  // false if the card did not finish (the rings are then left allocated).
  bool net_close() noexcept;
  NetState& net(const char* call);  // kState unless open
  std::optional<NetState> net_;
  // CQ_CTRL = 0, then polls CQ_CTRL.busy (bounded like a command): true once the card has finished
  // every completion write it had loaded, i.e. the ring memory is the driver's again.
  bool disable_cq_and_wait();
  // One wait bounded by cmd_limits_ (polls and time; later polls sleep a little): again() after each poll
  // that did not end the wait, false at the limit.
  class PollBudget {
   public:
    explicit PollBudget(const CommandLimits& lim) : lim_(lim), t0_(std::chrono::steady_clock::now()) {}
    bool again() {
      if (n_ >= lim_.max_polls || elapsed() >= lim_.timeout) return false;
      if (n_ >= lim_.spin_polls) std::this_thread::sleep_for(std::chrono::microseconds(20));
      ++n_;
      return true;
    }
    std::uint64_t polls() const { return n_; }
    std::chrono::milliseconds elapsed() const {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0_);
    }

   private:
    const CommandLimits& lim_;
    std::chrono::steady_clock::time_point t0_;
    std::uint64_t n_ = 1;
  };
  // Calls done() until it returns true, between() after each false, within cmd_limits_. False at the limit.
  template <class Done, class Between>
  bool poll_until(Done done, Between between) {
    PollBudget budget(cmd_limits_);
    for (;;) {
      if (done()) return true;
      between();
      if (!budget.again()) return false;
    }
  }
  void scrub_tables();
  void command(std::uint32_t op, const hw::CmdArgs& args);
  void dispatch(const std::uint8_t* cqe);
  void unmatched(StreamRec* s) noexcept;
  void flush_stream(ClientRec& c, StreamId stream, StreamRec& s);
  void release_client(ClientRec& c) noexcept;
  void invalidate_locked(ClientRec& c, std::map<Stag, StagRec>::iterator it);
  PdRec& pd_of(ClientRec& c, PdId pd, const char* what);
  StreamRec& stream_of(ClientRec& c, StreamId stream, const char* what);
  BufferRec& buffer_of(ClientRec& c, std::uint64_t buffer, const char* what);

  std::unique_ptr<Backend> be_;
  DeviceInfo info_;
  std::optional<std::uint32_t> db_selected_;  // the card's DB_QUEUE as this driver last wrote it
  OpenOptions opts_;
  CommandLimits cmd_limits_;
  DriverStats stats_;
  bool cmd_stuck_ = false;  // the last command never cleared busy: wait for it before the next

  // Completion ring (owner only).
  DmaRegion cq_;
  bool cq_enabled_ = false;
  std::uint32_t cq_log2_ = 0, cq_cons_ = 0, cq_cons_written_ = 0;

  // Hardware tables. STag keys are the card's (REG_CMD_RESULT): the driver keeps only indices.
  std::deque<std::uint32_t> free_stags_;
  std::deque<std::uint32_t> free_streams_;
  std::vector<std::uint32_t> stream_owner_;  // client id, 0 = free
  std::deque<PdId> free_pds_;
  PdId next_pd_ = 1;  // PDs are 16-bit on the card; 0 is never handed out

  std::map<std::uint32_t, ClientRec> clients_;
  std::uint32_t next_client_ = 1;
  std::uint64_t next_buffer_ = 1;
  // Entries the driver could not match (no live stream, queue, STag, or an MSN that is not the head of
  // its queue): counted here and on the stream, shown in the published state and Counters.
  std::uint64_t unmatched_cqes_ = 0;
};

// Handle a Client holds (its shared_ptr<void>).
struct ClientHandle {
  std::shared_ptr<Core> core;
  std::uint32_t id = 0;
};

// "sim:<path>" / "xrt:<index>" split and checked (kInvalidArgument otherwise). "" is not accepted here:
// Device::open resolves it first.
struct DeviceSpec {
  std::string kind;  // "sim" or "xrt"
  std::string path;
  unsigned index = 0;
};
DeviceSpec parse_device(const std::string& device);
// The device string Device::open uses for "": $RNIC_DEVICE, else "sim:rnic-sim.sock".
std::string resolve_device(const std::string& device);

// Opens a Device on an already-made backend (Device::open and the unit tests' fake backend).
std::unique_ptr<Device> open_with_backend(std::unique_ptr<Backend> backend, const std::string& device,
                                          const OpenOptions& opts);
// The core behind a Device (tests: command limits).
Core& core_of(Device& device);

}  // namespace rnic::detail

namespace rnic {
class DeviceImpl {
 public:
  explicit DeviceImpl(std::shared_ptr<detail::Core> c) : core(std::move(c)) {}
  std::shared_ptr<detail::Core> core;
  std::unique_ptr<SimControl> sim;  // set when the backend is a simulator
  std::unique_ptr<NetPort> net;     // set by open_net
};
}  // namespace rnic
