// SPDX-License-Identifier: Apache-2.0
// The public API (rnic.hpp): Device::open, Device and Client calls, each serialized on the core's mutex.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "core.hpp"
#include "rnic/hw/hw.hpp"

namespace rnic {

const char* completion_kind_name(Completion::Kind k) {
  switch (k) {
    case Completion::Kind::kTagged:
      return "tagged";
    case Completion::Kind::kUntagged:
      return "untagged";
    case Completion::Kind::kError:
      return "error";
    case Completion::Kind::kFlushed:
      return "flushed";
  }
  return "?";
}

const char* stream_state_name(StreamState::State s) {
  switch (s) {
    case StreamState::State::kNormal:
      return "normal";
    case StreamState::State::kError:
      return "error";
    case StreamState::State::kTornDown:
      return "torn_down";
  }
  return "?";
}

const char* errc_name(Errc e) {
  switch (e) {
    case Errc::kInvalidArgument:
      return "InvalidArgument";
    case Errc::kNotFound:
      return "NotFound";
    case Errc::kBusy:
      return "Busy";
    case Errc::kQuota:
      return "Quota";
    case Errc::kExhausted:
      return "Exhausted";
    case Errc::kState:
      return "State";
    case Errc::kQueueFull:
      return "QueueFull";
    case Errc::kTimeout:
      return "Timeout";
    case Errc::kNoDevice:
      return "NoDevice";
    case Errc::kMismatch:
      return "Mismatch";
    case Errc::kUnsupported:
      return "Unsupported";
    case Errc::kBackend:
      return "Backend";
  }
  return "?";
}

namespace detail {

namespace {
const char* const kDeviceForms = "expected sim:<socket path> or xrt:<index>";
}

std::string resolve_device(const std::string& device) {
  if (!device.empty()) return device;
  const char* env = std::getenv("RNIC_DEVICE");
  if (env != nullptr && *env != '\0') return env;
  return "sim:rnic-sim.sock";
}

DeviceSpec parse_device(const std::string& device) {
  DeviceSpec spec;
  const auto colon = device.find(':');
  if (colon == std::string::npos) {
    throw Error(Errc::kInvalidArgument, "device '" + device + "': " + kDeviceForms);
  }
  spec.kind = device.substr(0, colon);
  const std::string rest = device.substr(colon + 1);
  if (spec.kind == "sim") {
    if (rest.empty())
      throw Error(Errc::kInvalidArgument, "device '" + device + "': empty socket path; " + kDeviceForms);
    spec.path = rest;
    return spec;
  }
  if (spec.kind == "xrt") {
    const bool digits = !rest.empty() && rest.size() <= 9 && std::all_of(rest.begin(), rest.end(), [](char ch) {
      return std::isdigit(static_cast<unsigned char>(ch)) != 0;
    });
    if (!digits) {
      throw Error(Errc::kInvalidArgument,
                  "device '" + device + "': '" + rest + "' is not a card index; " + kDeviceForms);
    }
    spec.index = static_cast<unsigned>(std::stoul(rest));
    return spec;
  }
  throw Error(Errc::kInvalidArgument, "device '" + device + "': unknown kind '" + spec.kind + "'; " + kDeviceForms);
}

std::unique_ptr<Device> open_with_backend(std::unique_ptr<Backend> backend, const std::string& device,
                                          const OpenOptions& opts) {
  const bool sim = backend->sim() != nullptr;
  auto core = std::make_shared<Core>(std::move(backend), device, opts);
  auto impl = std::make_unique<DeviceImpl>(core);
  if (sim) impl->sim = std::make_unique<SimControl>(std::static_pointer_cast<void>(core));
  return std::make_unique<Device>(std::move(impl));
}

Core& core_of(Device& device) { return *device.impl().core; }

}  // namespace detail

// ---- Device ---------------------------------------------------------------------------------------

std::unique_ptr<Device> Device::open(const std::string& device, const OpenOptions& opts) {
  const std::string resolved = detail::resolve_device(device);
  const detail::DeviceSpec spec = detail::parse_device(resolved);
  std::unique_ptr<detail::Backend> be;
  if (spec.kind == "sim") {
    const std::chrono::milliseconds timeout =
        opts.sim_timeout_ms == 0 ? detail::kDefaultSimTimeout : std::chrono::milliseconds(opts.sim_timeout_ms);
    be = detail::make_sim_backend(spec.path, opts.observer, timeout);
  } else {
    std::string xclbin = opts.xclbin;
    if (xclbin.empty()) {
      const char* env = std::getenv("RNIC_XCLBIN");
      if (env != nullptr) xclbin = env;
    }
    std::string wire = opts.sim_wire;
    if (wire.empty()) {
      const char* env = std::getenv("RNIC_SIM_WIRE");
      if (env != nullptr) wire = env;
    }
    be = detail::make_xrt_backend(spec.index, xclbin);
    if (!wire.empty()) {
      const std::chrono::milliseconds timeout =
          opts.sim_timeout_ms == 0 ? detail::kDefaultSimTimeout : std::chrono::milliseconds(opts.sim_timeout_ms);
      be = detail::make_wired_backend(std::move(be), detail::make_sim_backend(wire, true, timeout));
    }
  }
  return detail::open_with_backend(std::move(be), resolved, opts);
}

Device::Device(std::unique_ptr<DeviceImpl> impl) : impl_(std::move(impl)) {}

Device::~Device() {
  if (!impl_) return;
  std::lock_guard<std::mutex> lk(impl_->core->mu);
  impl_->core->close();
}

const DeviceInfo& Device::info() const { return impl_->core->info(); }

std::unique_ptr<Client> Device::create_client(const Limits& limits) {
  auto& core = *impl_->core;
  std::lock_guard<std::mutex> lk(core.mu);
  const std::uint32_t id = core.add_client(limits);
  auto handle = std::make_shared<detail::ClientHandle>(detail::ClientHandle{impl_->core, id});
  return std::make_unique<Client>(std::static_pointer_cast<void>(handle));
}

std::uint32_t Device::read_reg(std::uint32_t offset) {
  if (offset >= hw::kMMIO_BYTES || offset % 4 != 0) {
    throw Error(Errc::kInvalidArgument, "read_reg: offset " + std::to_string(offset) +
                                            " is not a 4-byte aligned offset below " + std::to_string(hw::kMMIO_BYTES));
  }
  auto& core = *impl_->core;
  std::lock_guard<std::mutex> lk(core.mu);
  return core.rd(offset);
}

Counters Device::counters() {
  auto& core = *impl_->core;
  std::lock_guard<std::mutex> lk(core.mu);
  return core.counters();
}

SimControl* Device::sim() { return impl_->sim.get(); }

SimControl& Device::require_sim() {
  if (impl_->sim) return *impl_->sim;
  const DeviceInfo& i = info();
  throw Error(Errc::kUnsupported, i.device + " is a card (" + i.backend +
                                      "): this needs the simulator's ingress and clock (inject, sync, cycles); "
                                      "open a sim:<socket> device");
}

std::string Device::published_state() {
  auto& core = *impl_->core;
  std::lock_guard<std::mutex> lk(core.mu);
  core.flush_publish(true);  // the owner itself sees its current tables
  return core.backend().published_state();
}

DriverStats Device::stats() const {
  auto& core = *impl_->core;
  std::lock_guard<std::mutex> lk(core.mu);
  return core.stats();
}

NetPort& Device::open_net(const NetOptions& opts) {
  auto& core = *impl_->core;
  std::lock_guard<std::mutex> lk(core.mu);
  core.net_open(opts);
  impl_->net = std::make_unique<NetPort>(std::static_pointer_cast<void>(impl_->core));
  return *impl_->net;
}

NetPort* Device::net() { return impl_->net.get(); }

// ---- SimControl -----------------------------------------------------------------------------------

SimControl::SimControl(std::shared_ptr<void> core) : core_(std::move(core)) {}

namespace {
detail::Core& core_from(const std::shared_ptr<void>& p) { return *static_cast<detail::Core*>(p.get()); }
}  // namespace

void SimControl::inject(StreamId stream, std::uint16_t ssn, const std::vector<std::uint8_t>& segment) {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  if (stream >= core.info().streams) {
    throw Error(Errc::kInvalidArgument, "inject: stream " + std::to_string(stream) + " out of range 0.." +
                                            std::to_string(core.info().streams - 1));
  }
  if (segment.empty()) throw Error(Errc::kInvalidArgument, "inject: empty segment");
  core.sim_port("inject").inject(stream, ssn, segment);
}

void SimControl::sync() {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  core.sim_sync();
}

std::uint64_t SimControl::cycles() {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  return core.sim_port("cycles").cycles();
}

SimNetPortStats SimControl::net_port_stats() {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  return core.sim_port("net_port_stats").net_port_stats();
}

// ---- NetPort --------------------------------------------------------------------------------------

NetPort::NetPort(std::shared_ptr<void> core) : core_(std::move(core)) {}

std::size_t NetPort::receive(std::vector<NetRxPacket>& out, std::size_t max) {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  return core.net_receive(out, max);
}

std::uint32_t NetPort::send(const std::vector<std::uint8_t>& sctp_packet, std::uint16_t socket) {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  return core.net_send(sctp_packet, socket);
}

std::uint32_t NetPort::send_gather(const std::vector<std::uint8_t>& slot_packet, std::uint16_t socket,
                                   std::uint32_t association) {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  return core.net_send_gather(slot_packet, socket, association);
}

NetTxFaults NetPort::tx_faults() {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  return core.net_tx_faults();
}

void NetPort::clear_tx_faults(std::uint32_t associations) {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  core.net_clear_tx_faults(associations);
}

void NetPort::set_association(std::uint32_t index, const NetAssociation& a) {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  core.net_set_association(index, a);
}

void NetPort::clear_association(std::uint32_t index) {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  core.net_clear_association(index);
}

void NetPort::set_socket(std::uint32_t index, std::uint32_t ip, std::uint16_t port) {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  core.net_set_socket(index, ip, port);
}

std::uint32_t NetPort::tx_consumed() {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  return core.net_tx_consumed();
}

std::uint32_t NetPort::tx_pending() {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  return core.net_tx_pending();
}

NetCounters NetPort::counters() {
  detail::Core& core = core_from(core_);
  std::lock_guard<std::mutex> lk(core.mu);
  return core.net_counters();
}

// ---- Client ---------------------------------------------------------------------------------------

namespace {

detail::ClientHandle& handle(const std::shared_ptr<void>& state) {
  return *static_cast<detail::ClientHandle*>(state.get());
}

// Runs fn(core, client record) with the device's mutex held.
template <class Fn>
auto with_client(const std::shared_ptr<void>& state, Fn&& fn) {
  detail::ClientHandle& h = handle(state);
  std::lock_guard<std::mutex> lk(h.core->mu);
  return fn(*h.core, h.core->client(h.id));
}

}  // namespace

Client::Client(std::shared_ptr<void> state) : state_(std::move(state)) {}

Client::~Client() {
  if (!state_) return;
  detail::ClientHandle& h = handle(state_);
  std::lock_guard<std::mutex> lk(h.core->mu);
  h.core->remove_client(h.id);
}

PdId Client::alloc_pd() {
  return with_client(state_, [](detail::Core& core, detail::ClientRec& c) { return core.alloc_pd(c); });
}

void Client::dealloc_pd(PdId pd) {
  with_client(state_, [pd](detail::Core& core, detail::ClientRec& c) { core.dealloc_pd(c, pd); });
}

Buffer Client::alloc_buffer(std::size_t bytes) {
  return with_client(state_, [bytes](detail::Core& core, detail::ClientRec& c) { return core.alloc_buffer(c, bytes); });
}

void Client::free_buffer(std::uint64_t buffer) {
  with_client(state_, [buffer](detail::Core& core, detail::ClientRec& c) { core.free_buffer(c, buffer); });
}

void Client::flush_buffer(std::uint64_t buffer, std::size_t offset, std::size_t bytes) {
  with_client(state_, [=](detail::Core& core, detail::ClientRec& c) { core.flush_buffer(c, buffer, offset, bytes); });
}

Registration Client::register_memory(const RegisterRequest& req) {
  return with_client(state_, [&req](detail::Core& core, detail::ClientRec& c) { return core.register_memory(c, req); });
}

void Client::invalidate(Stag stag) {
  with_client(state_, [stag](detail::Core& core, detail::ClientRec& c) { core.invalidate(c, stag); });
}

void Client::hold_local_read(Stag stag, PdId pd, std::uint64_t to, std::uint64_t length) {
  with_client(state_, [&](detail::Core& core, detail::ClientRec& c) { core.hold_local_read(c, stag, pd, to, length); });
}

void Client::release_local_read(Stag stag) {
  with_client(state_, [stag](detail::Core& core, detail::ClientRec& c) { core.release_local_read(c, stag); });
}

StreamId Client::create_stream(PdId pd) {
  return with_client(state_, [pd](detail::Core& core, detail::ClientRec& c) { return core.create_stream(c, pd); });
}

void Client::configure_queue(StreamId stream, std::uint32_t qn, std::uint32_t log2_entries, std::uint32_t first_msn) {
  with_client(state_, [&](detail::Core& core, detail::ClientRec& c) {
    core.configure_queue(c, stream, qn, log2_entries, first_msn);
  });
}

void Client::post_recv(StreamId stream, std::uint32_t qn, std::uint64_t buffer, std::uint64_t offset,
                       std::uint32_t length, std::uint64_t cookie) {
  with_client(state_, [&](detail::Core& core, detail::ClientRec& c) {
    core.post_recv(c, stream, qn, buffer, offset, length, cookie);
  });
}

void Client::teardown_stream(StreamId stream, Teardown how) {
  with_client(state_, [&](detail::Core& core, detail::ClientRec& c) { core.teardown_stream(c, stream, how); });
}

void Client::destroy_stream(StreamId stream) {
  with_client(state_, [&](detail::Core& core, detail::ClientRec& c) { core.destroy_stream(c, stream); });
}

StreamState Client::stream_state(StreamId stream) {
  return with_client(state_, [&](detail::Core& core, detail::ClientRec& c) {
    core.poll_hw();  // the state after every completion written so far
    return core.stream_state(c, stream);
  });
}

void Client::set_stream_live(StreamId stream, bool live) {
  with_client(state_, [&](detail::Core& core, detail::ClientRec& c) { core.set_stream_live(c, stream, live); });
}

std::size_t Client::poll(std::vector<Completion>& out, std::size_t max) {
  return with_client(state_, [&](detail::Core& core, detail::ClientRec& c) {
    core.poll_hw();
    return core.take_completions(c, out, max);
  });
}

// Polls with a short sleep in between (never a busy spin); 0 when the timeout passes with nothing.
std::size_t Client::wait(std::vector<Completion>& out, std::uint32_t timeout_ms, std::size_t max) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    bool more = false;
    const std::size_t n = with_client(state_, [&](detail::Core& core, detail::ClientRec& c) {
      core.poll_hw();
      const std::size_t got = core.take_completions(c, out, max);
      // CQ_PROD ahead of what was read: the entries are on their way, look again at once.
      if (got == 0) more = core.cq_pending();
      return got;
    });
    if (n != 0) return n;
    const auto now = clock::now();
    if (now >= deadline) return 0;
    const clock::duration nap = more ? std::chrono::microseconds(20) : std::chrono::microseconds(500);
    std::this_thread::sleep_for(std::min<clock::duration>(nap, deadline - now));
  }
}

}  // namespace rnic
