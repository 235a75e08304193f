#!/usr/bin/env bash
# Formal proofs of the write-safety property (issue 11, docs/rtl-architecture.md) with Yosys 0.23.
#   scripts/formal.sh [--work DIR] [--place-depth N] [--only NAME]... [--no-mutants]
#                     [--engine sat|smtbmc] [--smt-timeout S]
# Proofs (harnesses in tb/formal/, see its README.md):
#   validate        rnic_rx_validate, all lookup inputs: a PLACE lies in the STag range / receive
#                   buffer the 7.1 checks passed for. k-induction (proven: unbounded).
#   place           rnic_rx_place at 64 bits: every W beat's strobe lanes lie in its PLACE verdict's
#                   [addr, addr + pay_bytes); no write for DROP/ERROR/TOKEN/zero-length/stale. BMC from
#                   reset to --place-depth cycles (default 8).
# Each proof is also run against a MUTANT copy of its RTL module (made in the work dir, rtl/ is never
# touched) that skips one bounds check; the mutant must FAIL, its counterexample depth is printed.
#   validate-mut    rnic_rx_validate without the 7.1 tagged #4 bounds check (past_end)
#   place-mut-strb  rnic_rx_place without the last write beat's strobe mask
#   place-mut-stale rnic_rx_place writing a stale untagged PLACE
# Engines (default): k-induction with Yosys's SAT prover (`sat -tempinduct`); BMC with the AIG of the
# design in ABC's incremental bmc3 (yosys-abc, shipped with Yosys). Both read the same harness
# (read_verilog -formal, immediate assert/assume). With
# --engine smtbmc the same harness goes through write_smt2 + yosys-smtbmc -s z3 (BMC, then -i), each
# check bounded by --smt-timeout seconds (default 120): on these 64-bit address datapaths z3 4.8.12
# does not finish (see tb/formal/README.md), so it is not the default.
# Output: one line per proof: name, method, depth, result, seconds. Exit 1 if a proof fails or a
# mutant passes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/build/formal"
place_depth=8
mutants=1
engine=sat
smt_timeout=120
only=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --work) work=$2; shift 2 ;;
    --place-depth) place_depth=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --no-mutants) mutants=0; shift ;;
    --engine) engine=$2; shift 2 ;;
    --smt-timeout) smt_timeout=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "formal.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$engine" == sat || "$engine" == smtbmc ]] || { echo "formal.sh: --engine sat|smtbmc" >&2; exit 2; }
command -v yosys >/dev/null || { echo "formal.sh: yosys not found (scripts/deps.sh)" >&2; exit 2; }
if [[ "$engine" == smtbmc ]]; then
  command -v yosys-smtbmc >/dev/null && command -v z3 >/dev/null ||
    { echo "formal.sh: yosys-smtbmc and z3 needed (scripts/deps.sh)" >&2; exit 2; }
fi
mkdir -p "$work"
rtl="$root/rtl"
fv="$root/tb/formal"
status=0

wanted() {
  [[ ${#only[@]} -eq 0 ]] && return 0
  local n
  for n in "${only[@]}"; do [[ "$n" == "$1" ]] && return 0; done
  return 1
}

# mutant SRC NAME PATTERN REPLACEMENT: a copy of SRC with PATTERN (fixed string, must occur) replaced.
mutant() {
  local src=$1 name=$2 pat=$3 rep=$4 out="$work/$2.sv"
  python3 - "$src" "$out" "$pat" "$rep" <<'EOF'
import sys
src, out, pat, rep = sys.argv[1:]
s = open(src).read()
if pat not in s:
    sys.exit(f"formal.sh: mutation pattern not found in {src}: {pat}")
open(out, "w").write(s.replace(pat, rep, 1))
EOF
  echo "$out"
}

# The common front end: harness + RTL, flattened, assumptions early, undriven inputs free.
frontend() {  # TOP FILES...
  local top=$1; shift
  echo "read_verilog -formal -sv -I$rtl $*"
  echo "prep -top $top"
  echo "flatten"
}

# run NAME TOP MODE DEPTH EXPECT FILES...
#   MODE induct: k-induction up to DEPTH steps; MODE bmc: base cases 1..DEPTH from reset.
#   EXPECT pass|fail.
run() {
  local name=$1 top=$2 mode=$3 depth=$4 expect=$5; shift 5
  wanted "$name" || return 0
  local ys="$work/$name.ys" log="$work/$name.log" t0 t1 result method reached
  t0=$(date +%s.%N)
  if [[ "$engine" == sat && $mode == induct ]]; then
    {
      frontend "$top" "$@"
      echo "memory_map"
      echo "opt -full"
      echo "async2sync"
      echo "chformal -assume -early"
      echo "setundef -anyseq"
      echo "opt -keepdc -fast"
      echo "opt_clean"
      echo "sat -tempinduct -prove-asserts -set-assumes -seq 1 -maxsteps $depth -dump_vcd $work/$name.vcd"
    } > "$ys"
    yosys -q -l "$log" "$ys" > /dev/null 2>&1 || true
    reached=$(grep -oE '\[base case [0-9]+\]' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
    if grep -q "Induction step proven: SUCCESS" "$log"; then
      k=$(grep -oE '\[induction step [0-9]+\]' "$log" | tail -1 | grep -oE '[0-9]+')
      result=PROVEN; method="k-induction (k=$k)"; reached="unbounded"
    elif grep -q "model found for base case: FAIL" "$log"; then
      result="FAIL (counterexample at step $reached, $name.vcd)"; method="k-induction"
    elif grep -q "Reached maximum number of time steps" "$log"; then
      result="PASS (bounded: induction did not close)"; method="BMC"
    else
      result="ERROR (see $log)"; method="-"
    fi
  elif [[ "$engine" == sat ]]; then
    # BMC from reset: the AIG of the design, ABC's incremental bmc3 (ships with Yosys as yosys-abc).
    local aig="$work/$name.aig"
    {
      frontend "$top" "$@"
      echo "memory_map"
      echo "opt -full -nodffe -nosdff"
      echo "async2sync"
      echo "chformal -assume -early"
      echo "setundef -anyseq"
      echo "opt -keepdc -fast -nodffe -nosdff"
      echo "dffunmap"
      echo "techmap"
      echo "opt -fast -nodffe -nosdff"
      echo "abc -fast -g AND"
      echo "opt_clean"
      echo "write_aiger -I -B -zinit $aig"
    } > "$ys"
    yosys -q -l "$log" "$ys" > /dev/null 2>&1 || true
    method="BMC from reset (abc bmc3)"
    if [[ ! -s "$aig" ]]; then
      result="ERROR (see $log)"; reached=0
    else
      # Frame f of bmc3 is the state after f clock edges (frame 0: the reset cycle).
      yosys-abc -c "read_aiger $aig; fold; strash; bmc3 -F $depth -v" >> "$log" 2>&1 || true
      if grep -qE "was asserted in frame" "$log"; then
        reached=$(grep -oE "asserted in frame [0-9]+" "$log" | tail -1 | grep -oE '[0-9]+$')
        result="FAIL (counterexample at cycle $reached)"
      elif grep -qE "No output asserted in [0-9]+ frames" "$log"; then
        reached=$(grep -oE "No output asserted in [0-9]+ frames" "$log" | tail -1 | grep -oE '[0-9]+')
        result="PASS (cycles 0..$((reached - 1)))"
      else
        result="ERROR (see $log)"; reached=0
      fi
    fi
  else
    local smt="$work/$name.smt2"
    {
      frontend "$top" "$@"
      echo "memory_nordff"
      echo "async2sync"
      echo "chformal -assume -early"
      echo "opt_clean"
      echo "setundef -anyseq"
      echo "opt -keepdc -fast"
      echo "check"
      echo "dffunmap"
      echo "write_smt2 -wires $smt"
    } > "$ys"
    yosys -q -l "$log" "$ys" > /dev/null 2>&1 || true
    local rc=0
    timeout "$smt_timeout" yosys-smtbmc -s z3 -t "$depth" --dump-vcd "$work/$name.vcd" "$smt" \
      >> "$log" 2>&1 || rc=$?
    reached=$(grep -oE 'Checking assertions in step [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$' || echo 0)
    method="smtbmc z3 BMC"
    if grep -q "Status: PASSED" "$log"; then
      result=PASS; reached=$depth
      if [[ $mode == induct ]]; then
        if timeout "$smt_timeout" yosys-smtbmc -s z3 -i -t "$depth" "$smt" >> "$log" 2>&1 &&
           [[ $(grep -c "Status: PASSED" "$log") -ge 2 ]]; then
          result=PROVEN; method="smtbmc z3 k-induction (k=$depth)"; reached=unbounded
        fi
      fi
    elif grep -q "Status: FAILED" "$log"; then
      result="FAIL (counterexample at step $reached, $work/$name.vcd)"
    elif [[ $rc -eq 124 ]]; then
      result="TIMEOUT after ${smt_timeout}s (step $reached not finished)"; reached=$((reached > 0 ? reached - 1 : 0))
    else
      result="ERROR (see $log)"
    fi
  fi
  t1=$(date +%s.%N)
  printf '%-16s %-26s depth %-10s %-58s %6.1fs\n' "$name" "$method" "$reached" "$result" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
  case "$expect:$result" in
    pass:PROVEN*|pass:PASS*|fail:FAIL*) ;;
    *) status=1 ;;
  esac
}

printf '%-16s %-26s %-16s %-58s %7s\n' proof method '      depth' result time
run validate validate_fv induct 4 pass "$rtl/rnic_rx_validate.sv" "$fv/validate_fv.sv"
run place place_fv bmc "$place_depth" pass "$rtl/rnic_rx_place.sv" "$fv/place_fv.sv"
if [[ $mutants -eq 1 ]]; then
  if wanted validate-mut; then
    m=$(mutant "$rtl/rnic_rx_validate.sv" validate_mut_rtl \
      "end else if (below_base || past_end) begin" "end else if (below_base) begin")
    run validate-mut validate_fv induct 4 fail "$m" "$fv/validate_fv.sv"
  fi
  if wanted place-mut-strb; then
    m=$(mutant "$rtl/rnic_rx_place.sv" place_mut_strb_rtl \
      "(last_a ? ({Bytes{1'b1}} >> (~h_ll)) : {Bytes{1'b1}})" "{Bytes{1'b1}}")
    run place-mut-strb place_fv bmc "$place_depth" fail "$m" "$fv/place_fv.sv"
  fi
  if wanted place-mut-stale; then
    m=$(mutant "$rtl/rnic_rx_place.sv" place_mut_stale_rtl \
      "v_place_w = v_place && !v_stale &&" "v_place_w = v_place &&")
    run place-mut-stale place_fv bmc "$place_depth" fail "$m" "$fv/place_fv.sv"
  fi
fi
exit $status
