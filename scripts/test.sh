#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, builds, and runs the default regression with ctest. Exits non-zero on any
# failure. Usage:
#   ./scripts/test.sh                 # default preset, every label but `slow` and `extended`
#   ./scripts/test.sh --preset asan   # another preset: default, debug, asan
#   ./scripts/test.sh --label unit    # one slice: unit, rtl, hls, lockstep, system, interop, formal,
#                                     # extended, slow
#   ./scripts/test.sh --slow          # everything: the default regression plus `extended` and `slow`
# At the end: what the build and each label's tests cost (scripts/build_report.py).
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
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

./scripts/deps.sh
# The figures at the end: what this run's build and tests cost (scripts/build_report.py).
build_start_ns=$(date +%s%N)
build_start=$SECONDS
./scripts/build.sh "$preset"
build_wall=$((SECONDS - build_start))

# --timeout: a test without its own TIMEOUT that hangs fails after 10 minutes instead of holding the
# run (and CI's 90 minutes) hostage.
args=(--test-dir "build/$preset" --output-on-failure --no-tests=error -j "$(nproc)" --timeout 600)
if [[ -n "$label" ]]; then
  args+=(-L "$label")
elif [[ $slow -eq 0 ]]; then
  args+=(-LE 'slow|extended')
fi
if [[ "$preset" == asan ]]; then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
junit="build/$preset/Testing/test-report.xml"
mkdir -p "$(dirname "$junit")"
args+=(--output-junit "$PWD/$junit")
test_start=$SECONDS
rc=0
ctest "${args[@]}" || rc=$?
test_wall=$((SECONDS - test_start))
echo
echo "== figures (scripts/build_report.py) =="
python3 scripts/build_report.py build "build/$preset" --since-ns "$build_start_ns" --wall "$build_wall" || true
python3 scripts/build_report.py tests "build/$preset" "$junit" --wall "$test_wall" || true
exit $rc
