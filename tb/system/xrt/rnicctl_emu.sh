#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# rnicctl info, regs and counters through XRT's hardware emulation of rnic-sim (scripts/xrt_emu.sh):
# each must show the card (its ID, the default build's capabilities, a zero error counter).
# Usage: rnicctl_emu.sh <xrt_emu.sh> <build dir> <rnicctl>
set -euo pipefail
emu=$1 build=$2 rnicctl=$3
fail() { echo "rnicctl_emu: FAILED: $*" >&2; exit 1; }
run() { "$emu" --build "$build" --timeout 120 -- "$rnicctl" "$@" 2>&1; }

out=$(run info) || fail "rnicctl info: $out"
grep -q '^backend *xrt$' <<<"$out" || fail "rnicctl info does not say backend xrt: $out"
grep -q '^id *0x52444450 (RDDP)$' <<<"$out" || fail "rnicctl info shows no RDDP id: $out"
grep -q '^data width *512 bits$' <<<"$out" || fail "rnicctl info: not the default 512-bit build: $out"

out=$(run regs) || fail "rnicctl regs: $out"
grep -qi 'RDDP\|0x52444450' <<<"$out" || fail "rnicctl regs shows no ID register: $out"

out=$(run counters) || fail "rnicctl counters: $out"
grep -q 'TaggedInvalidStag .* 0$' <<<"$out" || fail "rnicctl counters: no zero TaggedInvalidStag row: $out"
echo "rnicctl_emu: info, regs and counters through XRT hw_emu: ok"
