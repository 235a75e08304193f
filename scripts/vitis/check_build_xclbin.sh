#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest CardFlow.BuildXclbinScript: scripts/build_xclbin.sh without Vivado/Vitis.
#   check_build_xclbin.sh SCRATCH_DIR
# --dry-run prints the package and link commands for every card and exits 0; without --dry-run and
# without the tools it exits 1 naming each missing tool; with stand-in tools it runs exactly the
# commands --dry-run printed; bad arguments exit 2 with a message naming the argument.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
script=$root/scripts/build_xclbin.sh
scratch=${1:?usage: check_build_xclbin.sh SCRATCH_DIR}
rm -rf "$scratch" && mkdir -p "$scratch"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# Run the script with a PATH that has no Xilinx tool in it.
clean_path=/usr/local/bin:/usr/bin:/bin
run() { env -u XILINX_XRT -u PLATFORM_REPO_PATHS PATH="$clean_path" bash "$script" "$@"; }
expect_in() {  # expect_in TEXT PATTERN WHAT
  grep -qF -- "$2" <<< "$1" || fail "$3: output lacks '$2'"
}

declare -A platform=([u250]=xilinx_u250_gen3x16_xdma_4_1_202210_1 [u280]=xilinx_u280_gen3x16_xdma_1_202211_1
                     [u55c]=xilinx_u55c_gen3x16_xdma_3_202210_1)
declare -A part=([u250]=xcu250-figd2104-2L-e [u280]=xcu280-fsvh2892-2L-e [u55c]=xcu55c-fsvh2892-2L-e)
for card in u250 u280 u55c; do
  out=$(run --platform "$card" --dry-run --out "$scratch/$card" 2>&1); rc=$?
  [[ $rc -eq 0 ]] || fail "$card --dry-run exited $rc: $out"
  expect_in "$out" "vivado -mode batch" "$card --dry-run"
  expect_in "$out" "-source $root/scripts/package_xo.tcl" "$card --dry-run"
  expect_in "$out" "--part ${part[$card]} --data-width 512" "$card --dry-run"
  expect_in "$out" "--net 0 --work" "$card --dry-run"
  expect_in "$out" "v++ --link --target hw --platform ${platform[$card]}" "$card --dry-run"
  expect_in "$out" "--config $root/scripts/vitis/$card.cfg" "$card --dry-run"
  expect_in "$out" "run.impl_1.STEPS.OPT_DESIGN.TCL.PRE=$root/constraints/rnic_kernel_pre_opt.tcl" "$card --dry-run"
  expect_in "$out" "--output $scratch/$card/rnic.xclbin $scratch/$card/rnic_kernel.xo" "$card --dry-run"
  grep -q "_vnx.cfg" <<< "$out" && fail "$card --dry-run --net none links the network configuration"
  [[ -f "$root/scripts/vitis/$card.cfg" && -f "$root/scripts/vitis/${card}_vnx.cfg" ]] || fail "$card: a .cfg is missing"
  [[ -e "$scratch/$card" ]] && fail "$card --dry-run created $scratch/$card"

  out=$(run --platform "$card" --dry-run --data-width 256 --build-id 0xABC --net vnx --net-xo /x/cmac_0.xo \
        --net-xo /x/networklayer.xo 2>&1); rc=$?
  [[ $rc -eq 0 ]] || fail "$card --dry-run --net vnx exited $rc: $out"
  expect_in "$out" "--data-width 256 --build-id 0xABC --net 1 --work" "$card --dry-run --net vnx --data-width 256"
  expect_in "$out" "--config $root/scripts/vitis/${card}_vnx.cfg" "$card --dry-run --net vnx"
  expect_in "$out" "rnic_kernel.xo /x/cmac_0.xo /x/networklayer.xo" "$card --dry-run --net-xo"
done

# Without the tools: exit 1, every missing piece named, nothing created.
out=$(run --platform u250 --out "$scratch/notools" 2>&1); rc=$?
[[ $rc -eq 1 ]] || fail "without tools: exit $rc, expected 1"
expect_in "$out" "vivado not found" "without tools"
expect_in "$out" "v++ not found" "without tools"
expect_in "$out" "XILINX_XRT is not set" "without tools"
expect_in "$out" "platform xilinx_u250_gen3x16_xdma_4_1_202210_1 not found" "without tools"
[[ -e "$scratch/notools" ]] && fail "without tools: $scratch/notools was created"

# With stand-in tools: the commands that run are the ones --dry-run printed.
bin=$scratch/bin && mkdir -p "$bin" "$scratch/platforms/xilinx_u280_gen3x16_xdma_1_202211_1"
touch "$scratch/platforms/xilinx_u280_gen3x16_xdma_1_202211_1/xilinx_u280_gen3x16_xdma_1_202211_1.xpfm"
for tool in vivado v++; do
  printf '#!/bin/sh\nprintf "%%s\\n" "%s $*" >> "%s/ran.log"\n' "$tool" "$scratch" > "$bin/$tool"
  chmod +x "$bin/$tool"
done
dry=$(run --platform u280 --out "$scratch/stub" --build-id 0x1 --jobs 3 --dry-run | sed 1,2d)
out=$(env XILINX_XRT=/opt/xilinx/xrt PLATFORM_REPO_PATHS="$scratch/platforms" PATH="$bin:$clean_path" \
      bash "$script" --platform u280 --out "$scratch/stub" --build-id 0x1 --jobs 3 2>&1); rc=$?
[[ $rc -eq 0 ]] || fail "with stand-in tools: exit $rc: $out"
[[ "$(cat "$scratch/ran.log" 2>/dev/null)" == "$dry" ]] || fail "with stand-in tools: ran
$(cat "$scratch/ran.log" 2>/dev/null)
--dry-run printed
$dry"

# Bad arguments: exit 2 and the argument named.
bad() {  # bad PATTERN ARGS...
  local pattern=$1; shift
  out=$(run --dry-run "$@" 2>&1); rc=$?
  [[ $rc -eq 2 ]] || fail "$*: exit $rc, expected 2"
  expect_in "$out" "$pattern" "$*"
}
bad "--platform is required" --data-width 512
bad "--platform must be u250, u280 or u55c (got 'u200')" --platform u200
bad "--data-width must be 64, 128, 256 or 512 (got '100')" --platform u250 --data-width 100
bad "--build-id must be 0x" --platform u250 --build-id 12
bad "--net vnx needs the network kernels" --platform u250 --net vnx
bad "--net-xo needs --net vnx" --platform u250 --net-xo a.xo
bad "--net vnx needs --data-width 128 or more (got '64'" --platform u250 --net vnx --net-xo a.xo --data-width 64
bad "--target must be hw or hw_emu" --platform u250 --target sw_emu
bad "unknown argument '--bogus'" --platform u250 --bogus
bad "--out needs a value" --platform u250 --out

[[ $fails -eq 0 ]] || { echo "check_build_xclbin.sh: $fails failure(s)" >&2; exit 1; }
echo "check_build_xclbin.sh: ok"
