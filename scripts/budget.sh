#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The logic-depth budget (docs/synthesis.md): at most 7 LUTs and 16 CARRY4 on every register-to-register
# path, measured on the flattened --depth netlist of scripts/yosys_synth.sh by scripts/synth_report.py.
#   scripts/budget.sh [--top MODULE] [--param NAME=VALUE]... [--check] [--json FILE] [--keep DIR]
# --top: one module of rtl/ (a stage while it is being written; its ports count as registers, which
#        holds once every stage boundary is registered) instead of rnic_kernel.
# --check: exit 1 when any path is over the budget, naming the worst ones (the CTest Rtl.Budget).
# Only the depth run: about a third of scripts/synth_report.sh's time for the kernel, seconds for a stage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
top=rnic_kernel
params=()
check=()
json=()
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --top)
      [[ $# -ge 2 ]] || { echo "budget.sh: --top needs a module name" >&2; exit 2; }
      top=$2; shift 2 ;;
    --param)
      [[ $# -ge 2 && "$2" == *=* ]] || { echo "budget.sh: --param needs NAME=VALUE" >&2; exit 2; }
      params+=(--param "$2"); shift 2 ;;
    --check) check=(--check); shift ;;
    --json)
      [[ $# -ge 2 ]] || { echo "budget.sh: --json needs a file name" >&2; exit 2; }
      json=(--json "$2"); shift 2 ;;
    --keep)
      [[ $# -ge 2 ]] || { echo "budget.sh: --keep needs a directory" >&2; exit 2; }
      keep=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "budget.sh: unknown argument '$1'" >&2; sed -n '4p' "$0" >&2; exit 2 ;;
  esac
done
command -v yosys > /dev/null || { echo "budget.sh: yosys not found (apt-get install yosys)" >&2; exit 1; }
grep -qE "^\s*module\s+$top\b" "$root"/rtl/*.sv || { echo "budget.sh: no module '$top' in rtl/" >&2; exit 2; }
if [[ -n "$keep" ]]; then
  mkdir -p "$keep"; work=$keep
else
  work=$(mktemp -d /tmp/rnic_budget.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
name=$top
[[ ${#params[@]} -gt 0 ]] && name+=" (${params[*]//--param /})"
"$root/scripts/yosys_synth.sh" --top "$top" "${params[@]}" --depth --write-json "$work/depth.json" \
    --log "$work/depth.log" > /dev/null || { echo "budget.sh: depth synthesis failed (log: $work/depth.log)" >&2; exit 1; }
python3 "$root/scripts/synth_report.py" budget --name "$name" --depth "$work/depth.json" "${json[@]}" "${check[@]}"
