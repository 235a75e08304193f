#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Formal proofs of the write-safety property (issue 11, docs/rtl-architecture.md) with Yosys 0.23.
#   scripts/formal.sh [--work DIR] [--place-depth N] [--deliver-depth N] [--cq-depth N]
#                     [--lookup-depth N] [--only NAME]... [--no-mutants]
#                     [--engine sat|smtbmc] [--smt-timeout S]
# Proofs (harnesses in tb/formal/, see its README.md):
#   validate        rnic_rx_validate, all lookup inputs: a PLACE lies in the STag range / receive
#                   buffer the 7.1 checks passed for. k-induction (proven: unbounded).
#   place           rnic_rx_place at 64 bits, queue depths 2/2/2/4: every W beat's strobe lanes lie in
#                   its PLACE verdict's [addr, addr + pay_bytes); no write for DROP/ERROR/TOKEN/
#                   zero-length/stale. BMC from reset to --place-depth cycles (default 9).
#   deliver         rnic_rx_deliver (512 bits, 2 streams, 2 QNs, window 4): completion ring slots,
#                   the b_segs gate, CONSUME only in MSN order, order errors, CQE fields, cq_busy_o
#                   covers every completion write until its B. BMC from reset to
#                   --deliver-depth cycles (default 12: an item taken at cycle 3, after the
#                   stream words' clearing, is decided in O at 6, its completion written from 9).
#                   The harness reads the module's observation ports (`ifdef FORMAL in the RTL).
#   cq              rnic_deliver_cq (deliver's completion-ring writer) alone at 512 bits, every entry
#                   field free: ring slot and room, the b_segs gate, fence markers, discards,
#                   cq_busy_o until the last B, cq_prod_o after each B in order, the CQE at every W
#                   beat. BMC from reset to --cq-depth cycles (default 9: every scenario of
#                   tb/formal/README.md 3b occurs by cycle 7; k-induction and pdr do not close).
#   cq-128          the same at 128 bits, four beats per entry, --cq-depth cycles too (slow: only
#                   when named; formal.deep runs both to 12: every scenario occurs by cycle 9 there).
#   lookup-a        rnic_rx_lookup (128 bits, 2 STags, 1 stream x 1 QN): every tagged item carries the
#                   STag entry the commands programmed (key as the card issued it). BMC to
#                   --lookup-depth cycles (default 14: the first tagged item with a valid STag
#                   reaches O at cycle 9, the first untagged RQ OK item at 12, since stage C).
#   lookup-bw       the same, 1 QN: an untagged RQ OK item names a posted, not completed MSN (slow).
#   lookup-b        2 QNs: the window and the descriptor the host ring holds for the MSN's slot (slow).
#   lookup-race     2 QNs, well-behaved doorbells and consumes, the window: QUEUE_CONFIG's table
#                   writes racing a consume / doorbell of another queue (depth 16; failed at cycle 12
#                   before the C_QWR fix, with one pipeline stage fewer in lookup).
#   regs-cq         rnic_regs, all inputs free: CQ_BASE / CQ_LOG2_SIZE change only with the ring
#                   disabled in that cycle and the one before and cq_busy_i = 0 the cycle before;
#                   log2 <= 16 (deliver's configuration assumption). k-induction (proven: unbounded).
# Each proof is also run against MUTANT copies of its RTL (tb/formal/mutants.json: file, original,
# replacement; the copies are made in the work dir, rtl/ is never touched), each with one planted bug
# its proof must find: the mutant must FAIL, its counterexample depth is printed. The observation ports
# the harnesses read are in the RTL itself, under `ifdef FORMAL (read_verilog -formal defines it).
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
place_depth=9
deliver_depth=12
cq_depth=9
lookup_depth=14
mutants=1
engine=sat
smt_timeout=120
only=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --work) work=$2; shift 2 ;;
    --place-depth) place_depth=$2; shift 2 ;;
    --deliver-depth) deliver_depth=$2; shift 2 ;;
    --cq-depth) cq_depth=$2; shift 2 ;;
    --lookup-depth) lookup_depth=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --no-mutants) mutants=0; shift ;;
    --engine) engine=$2; shift 2 ;;
    --smt-timeout) smt_timeout=$2; shift 2 ;;
    -h|--help) sed -n "2,$(($(grep -n '^set -euo' "$0" | cut -d: -f1) - 1))p" "$0"; exit 0 ;;
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
    rm -f "$aig"  # never read an earlier run's AIG if Yosys fails
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
      # Frame f of bmc3 is the state after f clock edges (frame 0: the reset cycle). With
      # bmc_simplify=1 (set for one run), ABC first merges the signals it proves equal in every
      # reachable state (scorr: induction from the initial state) and rewrites the logic (dc2): the AIG
      # keeps its behaviour from reset cycle by cycle, and a long BMC gets faster (lookup-race 16 frames:
      # 156 s -> 48 s, issue 31). Not by default: on deliver's 11,000 registers scorr alone takes about
      # two minutes, for a bmc3 of 7 s.
      local prep="fold; strash"
      [[ "${bmc_simplify:-0}" == 1 ]] && prep="fold; strash; scorr; dc2"
      yosys-abc -c "read_aiger $aig; $prep; bmc3 -F $depth -v" >> "$log" 2>&1 || true
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

# The proofs: NAME -> harness top, mode, depth, files (the RTL, then the harness; relative to the root).
declare -A p_top p_mode p_depth p_files p_simplify
proof() {  # NAME TOP MODE DEPTH FILES...
  local name=$1
  p_top[$name]=$2; p_mode[$name]=$3; p_depth[$name]=$4
  shift 4
  p_files[$name]="$*"
}
lk="rtl/rnic_rx_lookup.sv rtl/rnic_lookup_stag.sv rtl/rnic_lookup_stream.sv rtl/rnic_lookup_rq.sv"
lk="$lk rtl/rnic_lookup_prefetch.sv rtl/rnic_lookup_fetch.sv rtl/rnic_fifo.sv tb/formal/lookup_fv.sv"
proof validate validate_fv induct 4 rtl/rnic_rx_validate.sv tb/formal/validate_fv.sv
proof place place_fv bmc "$place_depth" rtl/rnic_rx_place.sv tb/formal/place_fv.sv
proof deliver deliver_fv bmc "$deliver_depth" rtl/rnic_fifo.sv rtl/rnic_slice.sv rtl/rnic_deliver_cq.sv \
  rtl/rnic_rx_deliver.sv tb/formal/deliver_fv.sv
proof regs-cq regs_cq_fv induct 4 rtl/rnic_regs.sv tb/formal/deliver_fv.sv
proof cq cq_fv bmc "$cq_depth" rtl/rnic_slice.sv rtl/rnic_deliver_cq.sv tb/formal/cq_fv.sv
proof cq-128 cq_fv_128 bmc "$cq_depth" rtl/rnic_slice.sv rtl/rnic_deliver_cq.sv tb/formal/cq_fv.sv
# $lk: paths without spaces, one word each.
proof lookup-a lookup_fv_a bmc "$lookup_depth" $lk
proof lookup-bw lookup_fv_bw bmc "$lookup_depth" $lk
proof lookup-b lookup_fv_b bmc "$lookup_depth" $lk
proof lookup-race lookup_fv_race bmc 16 $lk
p_simplify[lookup-race]=1

# prove PROOF EXPECT RUN_NAME [FILE=REPLACEMENT]: PROOF's harness on its files, one of them replaced.
prove() {
  local name=$1 expect=$2 as=$3 swap=${4:-} f files=()
  for f in ${p_files[$name]}; do
    if [[ -n "$swap" && "$f" == "${swap%%=*}" ]]; then files+=("${swap#*=}"); else files+=("$root/$f"); fi
  done
  bmc_simplify=${p_simplify[$name]:-0} run "$as" "${p_top[$name]}" "${p_mode[$name]}" "${p_depth[$name]}" \
    "$expect" "${files[@]}"
}

printf '%-16s %-26s %-16s %-58s %7s\n' proof method '      depth' result time
prove validate pass validate
prove place pass place
prove deliver pass deliver
prove regs-cq pass regs-cq
prove cq pass cq
prove lookup-a pass lookup-a
# The slow tops run only when named (--only; the deep tier).
if wanted cq-128 && [[ ${#only[@]} -gt 0 ]]; then prove cq-128 pass cq-128; fi
if wanted lookup-bw && [[ ${#only[@]} -gt 0 ]]; then prove lookup-bw pass lookup-bw; fi
if wanted lookup-b && [[ ${#only[@]} -gt 0 ]]; then prove lookup-b pass lookup-b; fi
prove lookup-race pass lookup-race
if [[ $mutants -eq 1 ]]; then
  # One line per mutant: name, proof, file, the mutated copy (made here: its original must occur once).
  mutant_list=$(python3 - "$root" "$work" "$fv/mutants.json" <<'EOF'
import json, os, sys
root, work, path = sys.argv[1:]
for m in json.load(open(path))["mutants"]:
    s = open(os.path.join(root, m["file"])).read()
    if s.count(m["original"]) != 1:
        sys.exit(f"formal.sh: mutant {m['name']}: the original occurs {s.count(m['original'])} times in "
                 f"{m['file']} (must be once): {m['original']}")
    out = os.path.join(work, m["name"].replace("-", "_") + "_" + os.path.basename(m["file"]))
    open(out, "w").write(s.replace(m["original"], m["replacement"]))
    print(m["name"], m["proof"], m["file"], out)
EOF
  ) || exit 2
  while read -r name proof_name file copy; do
    wanted "$name" || continue
    prove "$proof_name" fail "$name" "$file=$copy"
  done <<< "$mutant_list"
fi
exit $status
