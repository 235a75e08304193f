#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The XRT process SIGKILLed mid-run (ctest XrtEmu.XrtKilledMidRun): rnic-run moves traffic through XRT's
# hardware emulation of rnic-sim and is killed; the device XRT started sees its socket close, runs the
# owner cleanup (what a kernel driver does when its owner dies, RFC 5041 8.3.2) and exits: nothing of
# the session is left running.
# Usage: xrt_killed_emu.sh <xrt_emu.sh> <build dir> <rnic-run>
set -euo pipefail
emu=$1 build=$2 run=$3
fail() { echo "xrt_killed_emu: FAILED: $*" >&2; exit 1; }
log=$(mktemp "${TMPDIR:-/tmp}/rnic-xrt-killed.XXXXXX")
trap 'rm -f "$log"' EXIT
children() { cat "/proc/$1/task/$1/children" 2>/dev/null || true; }

RNIC_XRT_VERBOSE=1 "$emu" --build "$build" --timeout 120 -- "$run" --messages 1000000 --progress 1 >"$log" 2>&1 &
emu_pid=$!
# rnic-run: XRT's process; its child rnic-sim the guardian; the guardian's child the card.
host= guardian= card=
for _ in $(seq 1 600); do
  if grep -q '^rnic-run: device xrt:0' "$log"; then
    host=$(pgrep -f -n -- "^$run --messages 1000000" || true)
    [[ -n $host ]] && guardian=$(children "$host" | tr ' ' '\n' | while read -r p; do
      [[ -n $p && $(cat "/proc/$p/comm" 2>/dev/null) == rnic-sim ]] && echo "$p"; done | head -1)
    [[ -n $guardian ]] && card=$(children "$guardian" | awk '{print $1}')
    [[ -n $card ]] && break
  fi
  kill -0 "$emu_pid" 2>/dev/null || { cat "$log" >&2; fail "the run ended before it could be killed"; }
  sleep 0.1
done
[[ -n $card ]] || { cat "$log" >&2; fail "no rnic-run -> rnic-sim -> card process chain within 60 s"; }
sleep 1  # traffic under way
kill -KILL "$host"
wait "$emu_pid" || true
for _ in $(seq 1 150); do
  kill -0 "$guardian" 2>/dev/null || kill -0 "$card" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$guardian" 2>/dev/null && fail "rnic-sim (pid $guardian) still runs 15 s after XRT was killed"
kill -0 "$card" 2>/dev/null && fail "the card (pid $card) still runs 15 s after XRT was killed"
grep -q 'cleaning up after the owner' "$log" || { cat "$log" >&2; fail "rnic-sim did not run the owner cleanup"; }
grep -q 'owner gone: disabling the CQ' "$log" || { cat "$log" >&2; fail "the owner cleanup did not run"; }
echo "xrt_killed_emu: XRT killed mid-run; rnic-sim ran the owner cleanup and exited (pids $guardian, $card)"
