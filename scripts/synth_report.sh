#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Open synthesis report of rnic_kernel with Yosys 0.23 (docs/synthesis.md).
#   scripts/synth_report.sh [--config default|stags65536|streams16384|all] [--quick] [--jobs N] [--json FILE]
#                           [--workdir DIR]   (keeps the Yosys logs and netlists there)
# Per configuration, two Yosys runs through scripts/yosys_synth.sh (which fails on any Yosys error or
# unexpected warning):
#  1. synth_xilinx -family xcup (hierarchy kept): LUT1..6, FDRE/FDSE/FDCE/FDPE, CARRY4/8, RAMB36E2,
#     RAMB18E2, URAM288, distributed RAM, MUXF7/8/9, DSP48E2, in total and per instance.
#  2. --depth: generic synthesis, 6-LUTs (abc -lut 6 per module, then flattened), adders/comparators
#     on CARRY4, memories kept as $mem_v2 cells. scripts/synth_report.py measures the worst
#     register-to-register path on it.
#     Why not `synth -flatten; memory_map; ... ltp -noff` (toolchain notes): memory_map turns every RAM
#     into flip-flops and multiplexers, i.e. the 65536-entry STag table into ~15 M flip-flops, which
#     neither finishes nor models the hardware: every big table here is a registered-read block RAM,
#     so its read data is a register output and its address/data/enable inputs are register inputs.
#     RAMs of <= 64 words (LUTRAM on Xilinx: asynchronous read, then the read register) add one level
#     to their read address; transparent read ports add a one-level bypass mux after the register.
#     Carry chains count as Vivado counts them (one level per CARRY8 = two CARRY4); abc -lut 6 alone
#     would ripple a 32-bit adder through ~32 LUTs. ltp would count each CARRY4 as a full level and
#     treat RAMs as combinational, hence the analysis in Python.
# Configurations: default = rnic_kernel's defaults; stags65536 = DATA_WIDTH=512 STAG_ENTRIES=65536;
# streams16384 = NUM_STREAMS=16384 RQ_PREFETCH=8 (issue 33: the largest stream table measured).
# --quick (for the test): quick64 = STAG_ENTRIES=256 NUM_STREAMS=16 at DATA_WIDTH 64 (the 512-bit
# synth_xilinx run at those tables is Rtl.YosysSynthXilinxClean's; not repeated in the default run).
# --jobs N runs up to N configurations at once (Yosys is single-threaded; default 1: the machine is shared).
# Output: a table on stdout, JSON in FILE (default build/synth_report.json):
#   {"generator": ..., "configurations": [{name, params, luts, ffs, carry, bram36, bram18, uram, lutram,
#    lutram_luts, muxf7, muxf8, muxf9, dsp, lut_depth, worst_path, depth_histogram, per_module,
#    yosys_version, seconds}, ...]}
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
config=all
quick=0
jobs=1
json=""
workdir=""
usage() { sed -n '2,4p' "$0"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config)
      [[ $# -ge 2 ]] || { echo "synth_report.sh: --config needs a value" >&2; exit 2; }
      config=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --jobs)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "synth_report.sh: --jobs needs a positive integer" >&2; exit 2; }
      jobs=$2; shift 2 ;;
    --json)
      [[ $# -ge 2 ]] || { echo "synth_report.sh: --json needs a file name" >&2; exit 2; }
      json=$2; shift 2 ;;
    --workdir)
      [[ $# -ge 2 ]] || { echo "synth_report.sh: --workdir needs a directory" >&2; exit 2; }
      workdir=$2; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "synth_report.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
command -v yosys > /dev/null || { echo "synth_report.sh: yosys not found (apt-get install yosys)" >&2; exit 1; }
command -v python3 > /dev/null || { echo "synth_report.sh: python3 not found" >&2; exit 1; }

declare -A cfg_params=(
  [default]=""
  [stags65536]="DATA_WIDTH=512 STAG_ENTRIES=65536"
  [streams16384]="NUM_STREAMS=16384 RQ_PREFETCH=8"
  [quick64]="STAG_ENTRIES=256 NUM_STREAMS=16 DATA_WIDTH=64"
)
if [[ $quick -eq 1 ]]; then
  [[ "$config" == all ]] || { echo "synth_report.sh: --quick runs its own configurations; drop --config" >&2; exit 2; }
  names=(quick64)
else
  case "$config" in
    default|stags65536|streams16384) names=("$config") ;;
    all) names=(default stags65536 streams16384) ;;
    *) echo "synth_report.sh: --config '$config': expected default, stags65536, streams16384 or all" >&2; exit 2 ;;
  esac
fi
json=${json:-$root/build/synth_report.json}
mkdir -p "$(dirname "$json")"
keep=1
if [[ -z "$workdir" ]]; then
  keep=0
  workdir=$(mktemp -d /tmp/rnic_synth_report.XXXXXX)
  trap 'rm -rf "$workdir"' EXIT
else
  mkdir -p "$workdir"
fi
version=$(yosys -V | head -1)

# One configuration: both Yosys runs, then the analysis into $workdir/<name>.json.
run_one() {
  local name=$1 args=() p start end
  for p in ${cfg_params[$name]}; do args+=(--param "$p"); done
  start=$(date +%s.%N)
  "$root/scripts/yosys_synth.sh" "${args[@]}" --write-json "$workdir/$name.xilinx.json" \
      --log "$workdir/$name.xilinx.log" > /dev/null || { echo "synth_report.sh: $name: synth_xilinx failed" >&2; return 1; }
  "$root/scripts/yosys_synth.sh" "${args[@]}" --depth --write-json "$workdir/$name.depth.json" \
      --log "$workdir/$name.depth.log" > /dev/null || { echo "synth_report.sh: $name: depth synthesis failed" >&2; return 1; }
  end=$(date +%s.%N)
  local pargs=()
  for p in ${cfg_params[$name]}; do pargs+=(--param "$p"); done
  python3 "$root/scripts/synth_report.py" analyze --name "$name" "${pargs[@]}" \
      --xilinx "$workdir/$name.xilinx.json" --depth "$workdir/$name.depth.json" \
      --seconds "$(awk "BEGIN { print $end - $start }")" --yosys-version "$version" --out "$workdir/$name.json"
  [[ $keep -eq 1 ]] || rm -f "$workdir/$name.xilinx.json" "$workdir/$name.depth.json"
  echo "synth_report.sh: $name done" >&2
}

pids=()
failed=0
for name in "${names[@]}"; do
  echo "synth_report.sh: $name (${cfg_params[$name]:-defaults})..." >&2
  run_one "$name" &
  pids+=($!)
  if [[ ${#pids[@]} -ge $jobs ]]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[[ $failed -eq 0 ]] || { echo "synth_report.sh: failed (logs in $workdir)" >&2; trap - EXIT; exit 1; }
outs=()
for name in "${names[@]}"; do outs+=("$workdir/$name.json"); done
python3 "$root/scripts/synth_report.py" merge --out "$json" "${outs[@]}"
echo "synth_report.sh: wrote $json"
