// SPDX-License-Identifier: Apache-2.0
// rnic-sim: the Verilated rnic_kernel run as a simulated card (sim/README.md).
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "server.hpp"
#include "xrt_device.hpp"

int main(int argc, char** argv) {
  rnic::sim::Options o;
  CLI::App app{"rnic-sim: the rnic_kernel (Verilated RTL or SystemC model) as a simulated card on a UNIX socket"};
  app.add_option("--socket", o.socket, "socket path (refused if another rnic-sim listens there)")
      ->capture_default_str();
  app.add_option("--mem-mib", o.mem_mib, "simulated host memory in MiB")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  app.add_option("--pcap", o.pcap, "write every injected segment as an SCTP DATA chunk (PPID 16) to this pcap");
  app.add_option("--fst", o.fst, "write an FST waveform of the kernel to this file");
  app.add_option("--quiet-cycles", o.quiet_cycles,
                 "cycles without activity after which the clock stops until a message arrives")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_option("--model", o.model,
                 "the kernel implementation: rtl (the Verilated RTL) or systemc (the SystemC-HLS model, rtl/hls)")
      ->capture_default_str()
      ->check(CLI::IsMember({"rtl", "systemc"}));
  app.add_option("--udp-port", o.udp_port,
                 "network port: SCTP over UDP (RFC 6951) on 127.0.0.1:PORT (9899 is the project's; 0 any free port, "
                 "which STATUS reports); needs --model rtl")
      ->check(CLI::Range(0, 65535));
  app.add_option("--net-loss", o.net_path.loss, "network path: probability a datagram is lost (each direction)")
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--net-dup", o.net_path.duplicate, "network path: probability a datagram arrives twice")
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--net-reorder", o.net_path.reorder,
                 "network path: probability a datagram is held back behind 1..3 later ones")
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--net-seed", o.net_path.seed, "network path: seed of the loss, duplication and reordering draws")
      ->capture_default_str();
  app.add_option("--net-pcap", o.net_pcap,
                 "network port: write every datagram the card takes from the path and every one it sends to FILE "
                 "(Ethernet/IPv4/UDP; tshark -d udp.port==PORT,sctp decodes it)");
  app.add_flag("--verbose", o.verbose, "log connections, errors and cleanup to stderr");
  bool xrt = false;
  std::string xclbin, bank = "host";
  app.add_flag("--xrt", xrt,
               "be an XRT hardware-emulation device: XRT's hw_emu shim starts rnic-sim (simulate.sh) and owns the card "
               "over its sockets (docs/xrt-backend.md); --socket serves observers and the simulated wire");
  app.add_option("--xrt-connect-seconds", o.xrt_connect_seconds, "--xrt: how long to wait for XRT's sockets")
      ->capture_default_str()
      ->check(CLI::Range(1u, 3600u));
  app.add_option("--write-xclbin", xclbin,
                 "write the xclbin that describes the --xrt device to XRT (its DDR[0] bank is --mem-mib MiB) and exit");
  app.add_option("--xclbin-bank", bank,
                 "--write-xclbin: the bank m_axi_gmem is connected to: host (host_only buffers) "
                 "or ddr (card memory)")
      ->capture_default_str()
      ->check(CLI::IsMember({"host", "ddr"}));
  CLI11_PARSE(app, argc, argv);

  if (!xclbin.empty()) {
    try {
      rnic::sim::write_xrt_xclbin(xclbin, o, bank == "host" ? rnic::sim::XrtBank::kHost : rnic::sim::XrtBank::kDdr);
      return 0;
    } catch (const std::exception& e) {
      fmt::print(stderr, "rnic-sim: {}\n", e.what());
      return 1;
    }
  }

  // SIGINT/SIGTERM arrive through a signalfd the server polls; SIGPIPE is never wanted.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) {
    fmt::print(stderr, "rnic-sim: sigprocmask: {}\n", std::strerror(errno));
    return 1;
  }
  signal(SIGPIPE, SIG_IGN);
  const int sfd = signalfd(-1, &set, SFD_CLOEXEC);
  if (sfd < 0) {
    fmt::print(stderr, "rnic-sim: signalfd: {}\n", std::strerror(errno));
    return 1;
  }
  int rc = 0;
  try {
    o.xrt = xrt;
    rnic::sim::Server server(o);
    rc = server.run(sfd);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rnic-sim: {}\n", e.what());
    rc = 1;
  }
  close(sfd);
  return rc;
}
