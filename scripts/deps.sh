#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages the project needs, and only those that are missing.
# As root: apt-get installs them. Otherwise: prints the exact missing packages and exits 1.
set -euo pipefail

# Keep in step with docs/building.md.
PACKAGES=(
  g++ cmake ninja-build pkg-config   # toolchain
  ccache                             # compiler cache: a second build of the same commit is quick
  slurm-wlm munge                    # scripts/regress.sh --slurm and its test (a one-node cluster)
  libgtest-dev libgmock-dev          # unit / system tests
  libfmt-dev libcli11-dev            # host tools
  libpcap-dev libisal-dev            # captures (pcap), CRC32c (ISA-L)
  tshark                             # interop tests: Wireshark's own DDP/SCTP dissectors
  verilator yosys python3            # RTL simulation and lint; open synthesis check and its report
  tcl                                # card-flow checks: the Vivado Tcl scripts parsed and run against stubs
  libxrt-dev uuid-dev                # XRT backend of the driver (Alveo cards)
  nlohmann-json3-dev libbenchmark-dev # rnicctl --json, published driver state; benchmarks
  libusrsctp-dev                     # RFC 5043 adaptation layer over a real SCTP stack (driver/sctp)
  libusrsctp-examples                # third-party SCTP clients (tsctp) against rnic-sink (SimNetE2E)
  z3                                 # formal: yosys-smtbmc's solver (scripts/formal.sh --engine smtbmc)
  gnuplot-nox                        # scripts/bench.sh: the bytes/cycle plot (docs/bench.png)
  libsystemc-dev                     # the SystemC-HLS model of the pipeline (rtl/hls)
  clang-format                       # scripts/format.sh and the Style.FormatAndSpdx test
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all ${#PACKAGES[@]} Debian packages present"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: install them as root, then run this again:" >&2
  echo "      sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: installed ${#missing[@]} package(s)"
