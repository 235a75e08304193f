// SPDX-License-Identifier: Apache-2.0
// rnic-sim's core: the Verilated rnic_kernel on a free-running clock, its host memory, the AXI-Stream
// ingress, and the socket server that speaks driver/sim_protocol/include/rnic/sim_protocol/protocol.hpp to clients.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "rnic/simnet/path_impairment.hpp"

namespace rnic::sim {

struct Options {
  std::string socket = "rnic-sim.sock";
  std::uint64_t mem_mib = 256;
  std::string pcap;  // empty: none
  std::string fst;   // empty: none
  std::uint64_t quiet_cycles = 2000;
  bool verbose = false;
  std::string model = "rtl";  // the kernel implementation: "rtl" (Verilated) or "systemc" (rtl/hls)
  // The network port (docs/network.md): UDP on 127.0.0.1, -1 none, 0 any free port (STATUS tells
  // which). Needs the RTL model: the SystemC model has no network ports.
  int udp_port = -1;
  simnet::ImpairmentConfig net_path;  // loss, duplication, reordering on both directions, seeded
  std::string net_pcap;               // --net-pcap: the network port's datagrams, both ways
  // XRT hardware-emulation device (xrt_device.hpp): XRT owns the card; how long to wait for its sockets.
  bool xrt = false;
  unsigned xrt_connect_seconds = 60;
};

// Device address of the first byte of the host memory: above 4 GiB so 64-bit addressing is used.
inline constexpr std::uint64_t kMemBase = 0x10'0000'0000ull;

class Server {
 public:
  // Builds the kernel, resets it, binds the socket. Throws std::runtime_error with the reason
  // (socket in use by another simulator, path too long, bad option, ...).
  explicit Server(const Options& o);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves until SIGINT/SIGTERM (blocked by the caller and read through signal_fd), or with --xrt
  // until the XRT session ends. Returns the process's exit code: 0 on a signal or XRT's close, 1 when
  // the XRT session ended without one. The destructor then closes the pcap/FST and unlinks the socket.
  int run(int signal_fd);

  // One implementation's card (server.cpp).
  class Impl {
   public:
    virtual ~Impl() = default;
    virtual int run(int signal_fd) = 0;
  };

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rnic::sim
