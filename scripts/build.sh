#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds one CMake preset. Used by run.sh, test.sh and bench.sh.
#   build.sh [PRESET] [--target T]... [--log FILE]
# PRESET: default (Release, the default or $RNIC_PRESET), debug, asan. --target: build only these targets
# (and what they need); default: everything. --log: the compiler's output goes to FILE and one line says
# how the build went (the last lines of FILE when it failed).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${RNIC_PRESET:-default}
targets=()
log=
while [[ $# -gt 0 ]]; do
  case $1 in
    --target) [[ $# -ge 2 ]] || { echo "build: --target needs a name" >&2; exit 2; }; targets+=("$2"); shift 2 ;;
    --log) [[ $# -ge 2 ]] || { echo "build: --log needs a file" >&2; exit 2; }; log=$2; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build: unknown option $1 (try --help)" >&2; exit 2 ;;
    *) preset=$1; shift ;;
  esac
done
build_args=(--build --preset "$preset")
[[ ${#targets[@]} -eq 0 ]] || build_args+=(--target "${targets[@]}")

if [[ -z "$log" ]]; then
  cmake --preset "$preset" >/dev/null
  cmake "${build_args[@]}"
  exit 0
fi
mkdir -p "$(dirname "$log")"
start=$SECONDS
if ! { cmake --preset "$preset" && cmake "${build_args[@]}"; } >"$log" 2>&1; then
  echo "build: FAILED after $((SECONDS - start)) s; the last lines of $log:" >&2
  tail -n 30 "$log" >&2
  exit 1
fi
echo "build: ${targets[*]:-everything} ($preset) in $((SECONDS - start)) s; compiler output in $log"
