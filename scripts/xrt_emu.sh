#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a command against rnic-sim as an XRT hardware-emulation device: the real XRT runtime (Debian's
# libxrt 2.13, its hw_emu shim) loads the project's xclbin and starts rnic-sim through simulate.sh;
# the driver's XRT backend drives the Verilated card (docs/xrt-backend.md, "hw_emu").
#
#   scripts/xrt_emu.sh [options] -- COMMAND [ARGS...]
#   scripts/xrt_emu.sh -- build/default/host/rnicctl/rnicctl info
#   scripts/xrt_emu.sh --bank ddr -- build/default/host/run/rnic-run --messages 200
#
# Options:
#   --build DIR        the build tree (default build/${RNIC_PRESET:-default})
#   --bank host|ddr    the bank m_axi_gmem is connected to: host (host_only buffers, the card reaches
#                      host memory through XRT's host-memory socket; default) or ddr (card memory:
#                      XRT copies to and from it)
#   --model rtl|systemc, --udp-port N, --mem-mib N, --sim-arg ARG (repeatable): rnic-sim's options
#   --timeout SECONDS  hard limit for COMMAND (default 600): then it and the device are killed
#   --keep             keep the scratch directory (it is printed)
#
# For COMMAND it sets: XCL_EMULATION_MODE=hw_emu, XILINX_XRT (a tree whose lib/ holds Debian's
# libxrt_hwemu.so.2), XRT_INI_PATH, EMCONFIG_PATH, SDACCEL_EM_RUN_DIR and XDG_RUNTIME_DIR (XRT's run
# files, the driver's state file), USER (rnic-xrt-<pid>: XRT's socket directory /tmp/$USER is the
# session's own), RNIC_DEVICE=xrt:0, RNIC_XCLBIN, and RNIC_SIM_WIRE (rnic-sim's own socket: the
# simulated wire, for inject/sync and the network port's sockets). RNIC_XRT_VERBOSE=1 passes --verbose
# to rnic-sim. Everything lives in one
# private scratch directory (mode 0700) and /tmp/$USER, both removed afterwards; XRT makes its sim_dir
# world-writable, which is why that lives inside the scratch directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/${RNIC_PRESET:-default}
bank=host
timeout_s=600
keep=0
sim_args=()
usage() { sed -n '3,27p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --bank) bank=$2; shift 2 ;;
    --model) sim_args+=(--model "$2"); shift 2 ;;
    --udp-port) sim_args+=(--udp-port "$2"); shift 2 ;;
    --mem-mib) sim_args+=(--mem-mib "$2"); mem_mib=$2; shift 2 ;;
    --sim-arg) sim_args+=("$2"); shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) echo "xrt_emu: unknown option '$1' (--help)" >&2; exit 2 ;;
  esac
done
[[ $# -gt 0 ]] || { echo "xrt_emu: no command (scripts/xrt_emu.sh [options] -- COMMAND ...)" >&2; exit 2; }
[[ $bank == host || $bank == ddr ]] || { echo "xrt_emu: --bank must be host or ddr" >&2; exit 2; }
sim=$build/sim/rnic-sim
simulate=$build/sim/simulate.sh
for f in "$sim" "$simulate"; do
  [[ -x $f ]] || { echo "xrt_emu: $f is missing: build rnic-sim first (scripts/build.sh)" >&2; exit 1; }
done
hwemu=$(find /usr/lib /opt/xilinx/xrt/lib -name libxrt_hwemu.so.2 -print -quit 2>/dev/null || true)
[[ -n $hwemu ]] || { echo "xrt_emu: libxrt_hwemu.so.2 not found (apt-get install libxrt1)" >&2; exit 1; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/rnic-xrt-emu.XXXXXX")
chmod 700 "$scratch"
# XRT names its socket directory /tmp/$USER and never removes what a killed or crashed session leaves
# there: each session gets a USER of its own, so its directory is private (0700, made before XRT sees
# it) and goes with the session; parallel sessions never touch each other's sockets.
export USER=rnic-xrt-$$
sockdir=/tmp/$USER
rm -rf "$sockdir"
mkdir -m 700 "$sockdir"
cleanup() {
  local rc=$?
  rm -rf "$sockdir"
  if [[ $keep == 1 ]]; then echo "xrt_emu: kept $scratch" >&2; else rm -rf "$scratch"; fi
  exit "$rc"
}
trap cleanup EXIT

mkdir -p "$scratch/xrt/lib" "$scratch/sim" "$scratch/run"
ln -s "$hwemu" "$scratch/xrt/lib/libxrt_hwemu.so.2"
cp "$simulate" "$scratch/sim/simulate.sh"
# XRT 2.13's shim loses realloc's result when a message outgrows its first one (docs/xrt-backend.md):
# the first message (xclSetEnvironment, carrying this file's entries) is made the largest by a pad
# longer than any copy chunk (packet_size) plus its framing. system_dpa=false: no 10 s wait at close.
packet=65536
{
  echo "[Emulation]"
  echo "sim_dir=$scratch/sim"
  echo "packet_size=$packet"
  echo "system_dpa=false"
  echo "[Debug]"
  printf 'pad=%*s\n' $((packet + 4096)) '' | tr ' ' 'x'
} >"$scratch/xrt.ini"
echo '{"Version": {"FileVersion": "2.0"}, "Platform": {"Boards": [{"Devices": [{"Name": "rnic_hwemu"}]}]}}' \
  >"$scratch/emconfig.json"
"$sim" --write-xclbin "$scratch/rnic.xclbin" --xclbin-bank "$bank" ${mem_mib:+--mem-mib "$mem_mib"}

export XCL_EMULATION_MODE=hw_emu XILINX_XRT=$scratch/xrt XRT_INI_PATH=$scratch/xrt.ini EMCONFIG_PATH=$scratch
export SDACCEL_EM_RUN_DIR=$scratch/run XDG_RUNTIME_DIR=$scratch  # XRT's run files; the driver's state file
# XRT 2.13's shim gives each buffer object memory from posix_memalign and munmaps it when the object
# goes: from glibc's heap that unmaps heap pages under the allocator. Above the mmap threshold each
# such allocation is a mapping of its own, and unmapping it harms nothing else.
export MALLOC_MMAP_THRESHOLD_=4096
export RNIC_DEVICE=xrt:0 RNIC_XCLBIN=$scratch/rnic.xclbin RNIC_SIM_WIRE=$scratch/wire.sock
RNIC_SIM_ARGS="--socket $scratch/wire.sock ${sim_args[*]}"
[[ -n ${RNIC_XRT_VERBOSE:-} ]] && RNIC_SIM_ARGS+=" --verbose"
export RNIC_SIM_ARGS
# timeout runs COMMAND in its own process group and signals the group: XRT's device process (in XRT's
# group) goes with it.
# In the background so that a TERM or INT to this script reaches it (and through it the whole session)
# and the cleanup above still runs.
timeout --kill-after=10 "$timeout_s" "$@" &
tpid=$!
trap 'kill -TERM "$tpid" 2>/dev/null || true' TERM INT
set +e
while :; do
  wait "$tpid"
  rc=$?
  kill -0 "$tpid" 2>/dev/null || break  # a trapped signal interrupted wait: wait again
done
set -e
[[ $rc == 124 ]] && echo "xrt_emu: '$*' did not finish within $timeout_s s: killed" >&2
exit "$rc"
