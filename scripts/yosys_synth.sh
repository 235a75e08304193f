#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Open synthesis of rnic_kernel with Yosys 0.23 (the check every RTL change must pass).
#   scripts/yosys_synth.sh [--top MODULE] [--param NAME=VALUE]... [--generic NETLIST.v | --depth]
#                          [--write-json FILE] [--log FILE]
# Default: read_verilog -sv -noautowire, synth_xilinx -family xcup -uram, stat. Exit 1 on any Yosys error or
# warning outside the allowlist below ("Resizing cell port": Yosys narrowing the ports of each block
# RAM it maps, printed for every RAMB18E2/RAMB36E2).
# --generic writes a flattened generic-cell netlist instead (for re-simulation against the RTL).
# --depth: the flattened LUT-depth netlist scripts/synth_report.py measures (see its header and
#   docs/synthesis.md): generic synthesis, memories kept as $mem_v2 cells (never memory_map: at 65536
#   STags that is millions of flip-flops), adders/comparators on CARRY4 (+/xilinx/arith_map.v), abc -lut 6
#   per module, flattened after.
# --write-json FILE also writes the final netlist as Yosys JSON (write_json).
# --top MODULE synthesizes one module of rtl/ instead of rnic_kernel (--param then sets its parameters).
set -euo pipefail
cd "$(dirname "$0")/.."
params=()
generic=""
depth=0
json=""
log=""
top=rnic_kernel
while [[ $# -gt 0 ]]; do
  case "$1" in
    --top) top=$2; shift 2 ;;
    --param) params+=("$2"); shift 2 ;;
    --generic) generic=$2; shift 2 ;;
    --depth) depth=1; shift ;;
    --write-json) json=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "yosys_synth.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ -n "$generic" && $depth -eq 1 ]]; then
  echo "yosys_synth.sh: --generic and --depth exclude each other" >&2; exit 2
fi
log=${log:-$(mktemp /tmp/rnic_yosys.XXXXXX.log)}
write_json=""
[[ -n "$json" ]] && write_json="; write_json $json"
chparam=""
for p in "${params[@]}"; do chparam+=" -set ${p%%=*} ${p#*=}"; done
files=$(ls rtl/*.sv | tr '\n' ' ')
# Read only the files of the modules under the top, at its parameters (so NET=0 leaves the network side
# out), so its netlist (and ABC's mapping of it, which follows the order of the cells Yosys numbered
# while reading) does not change when another file of rtl/ does. The kernel too: adding
# rnic_net_gather.sv once moved an rnic_regs path of the NET=0 kernel from 7 to 8 LUTs.
hier_param=""
[[ -n "$chparam" ]] && hier_param="chparam$chparam $top; "
used=$(yosys -p "read_verilog -sv -noautowire -Irtl $files; ${hier_param}hierarchy -top $top; ls" 2>/dev/null |
       sed -n '/ modules:$/,/^$/p' | grep -oE 'rnic_[A-Za-z0-9_]+' | sort -u)
[[ -n "$used" ]] || { echo "yosys_synth.sh: no module $top under rtl/" >&2; exit 2; }
files=""
for m in $used; do files+="$(grep -lE "^\s*module\s+$m\b" rtl/*.sv) "; done
read_cmd="read_verilog -sv -noautowire -Irtl $files"
[[ -n "$chparam" ]] && read_cmd+="; chparam$chparam $top"
if [[ -n "$generic" ]]; then
  # Generic gates, memories kept as arrays (memory_map would turn every RAM into flip-flops).
  script="$read_cmd; synth -flatten -top $top -run :fine; opt -fast -full; techmap; opt -fast;"
  # splitnets: Verilator 5.006 sees false combinational loops through multi-bit netlist wires.
  script+=" abc -fast; opt -fast; opt_clean -purge; splitnets; write_verilog -noattr $generic; stat$write_json"
elif [[ $depth -eq 1 ]]; then
  # The coarse part of synth (memory -nomap keeps every RAM one $mem_v2 cell with its read register
  # merged in), the generic fine part without memory_map, carries as CARRY4 like synth_xilinx, 6-LUTs.
  # ABC maps each module on its own, the netlist is flattened after (docs/synthesis.md, "Mapped per
  # module"): one ABC network per module, so no module's paths are relaxed up to the depth of
  # another's; paths across modules are the sum of both sides' LUTs.
  script="$read_cmd; synth -top $top -run :fine; opt -fast -full;"
  script+=" techmap -map +/techmap.v -D LUT_SIZE=6 -map +/xilinx/arith_map.v; opt -fast; abc -lut 6;"
  script+=" flatten; opt_clean; stat$write_json"
else
  # -uram: the largest tables (4096 streams' descriptor cache and reorder slots) go to UltraRAM where
  # Yosys finds it cheaper than block RAM (docs/synthesis.md, "What grows with the stream count").
  script="$read_cmd; synth_xilinx -family xcup -uram -top $top -noiopad; stat$write_json"
fi
if ! yosys -p "$script" > "$log" 2>&1; then
  grep -E "ERROR|Error" "$log" | head -20 >&2
  echo "yosys_synth.sh: Yosys failed (log: $log)" >&2
  exit 1
fi
warnings=$(grep -E "^Warning: " "$log" | grep -vE "^Warning: Resizing cell port " | sort -u || true)
if [[ -n "$warnings" ]]; then
  echo "$warnings" | head -30 >&2
  echo "yosys_synth.sh: Yosys warnings (log: $log)" >&2
  exit 1
fi
sed -n '/Printing statistics/,/End of script/p' "$log" | grep -E "Number of cells|LUT|FD|CARRY|RAMB|URAM|MUXF|DSP|\\\$_" | sed 's/^ *//'
echo "yosys_synth.sh: clean (log: $log)"
