#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, builds, and runs the default regression with ctest. Exits non-zero on any
# failure. Usage:
#   ./scripts/test.sh                 # default preset, every label but `slow`
#   ./scripts/test.sh --preset asan   # another preset: default, debug, asan
#   ./scripts/test.sh --label unit    # one slice: unit, rtl, system, interop, formal, slow
#   ./scripts/test.sh --slow          # the default regression plus the `slow` label
# Random tests print their seed; RNIC_TEST_SEED=<n> reproduces one.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${RNIC_PRESET:-default}
label=""
slow=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --preset) preset=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --slow) slow=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

./scripts/deps.sh
./scripts/build.sh "$preset"

# --timeout: a test without its own TIMEOUT that hangs fails after 10 minutes instead of holding the
# run (and CI's 90 minutes) hostage.
args=(--test-dir "build/$preset" --output-on-failure --no-tests=error -j "$(nproc)" --timeout 600)
if [[ -n "$label" ]]; then
  args+=(-L "$label")
elif [[ $slow -eq 0 ]]; then
  args+=(-LE slow)
fi
if [[ "$preset" == asan ]]; then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
ctest "${args[@]}"
