#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Formal proofs of the write-safety property (issue 11, docs/rtl-architecture.md) with Yosys 0.23.
#   scripts/formal.sh [--work DIR] [--place-depth N] [--deliver-depth N] [--lookup-depth N]
#                     [--only NAME]... [--no-mutants]
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
#                   Runs on a copy of the RTL with observation ports added (deliver_probe).
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
# Each proof is also run against a MUTANT copy of its RTL module (made in the work dir, rtl/ is never
# touched) that skips one bounds check; the mutant must FAIL, its counterexample depth is printed.
#   validate-mut    rnic_rx_validate without the 7.1 tagged #4 bounds check (past_end)
#   place-mut-strb  rnic_rx_place without the last write beat's strobe mask
#   place-mut-stale rnic_rx_place writing a stale untagged PLACE
#   deliver-mut-ring  rnic_rx_deliver without the cq_log2 mask of the ring index
#   deliver-mut-order rnic_rx_deliver without the MSN order check
#   deliver-mut-gate  rnic_rx_deliver without the b_segs gate
#   deliver-mut-busy  rnic_rx_deliver whose cq_busy_o ignores the B of its last completion write
#   regs-cq-mut     rnic_regs taking ring configuration writes while cq_busy is 1
#   lookup-mut-stag rnic_rx_lookup's STag table (rnic_lookup_stag) without the index range check
#                   (index 2 aliases entry 0)
#   lookup-mut-prod rnic_rx_lookup without the producer bound of the RQ status (no NO_BUF)
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

# rnic_rx_deliver with observation ports (fv_*) for its internal decide / completion-queue events:
# a copy made in the work dir (no logic changed), used by deliver_fv.sv and its mutants. O's decision
# is the probed one: the item O holds (fv_o_item) is the one the events name.
deliver_probe() {  # SRC NAME
  local m
  m=$(mutant "$1" "$2_p1" "order_err_event_o // an order error completion was decided" \
"order_err_event_o, // an order error completion was decided
  output logic fv_ce_push, output logic fv_ce_pop, output logic fv_ce_marker,
  output logic fv_ce_err, output logic fv_ce_tagged, output logic fv_ce_order,
  output logic [15:0] fv_ce_stream, output logic [15:0] fv_ce_ssn,
  output logic [31:0] fv_ce_stag_qn, output logic [31:0] fv_ce_msn,
  output logic [3:0] fv_ce_type, output logic [7:0] fv_ce_code,
  output logic fv_co_push, output logic [1:0] fv_co_kind, output logic [15:0] fv_co_stream,
  output logic [7:0] fv_co_qn, output logic fv_dlv_rel, output logic fv_rel_last,
  output logic fv_rel_tagged, output logic [31:0] fv_rel_stag_qn, output logic [31:0] fv_rel_msn,
  output rnic_dlv_t fv_o_item, output logic fv_s_drain, output logic fv_ce_valid")
  mutant "$m" "$2" "endmodule" \
"  assign fv_ce_push = ce_push;
  assign fv_ce_pop = ce_pop;
  assign fv_ce_marker = ce_wdata[CeMarker];
  assign fv_ce_err = ce_wdata[CeErr];
  assign fv_ce_tagged = ce_wdata[CeTagged];
  assign fv_ce_order = ce_wdata[CeOrder];
  assign fv_ce_stream = ce_wdata[CeStreamLsb +: 16];
  assign fv_ce_ssn = ce_wdata[CeSsnLsb +: 16];
  assign fv_ce_stag_qn = ce_wdata[CeAuxLsb +: 32];
  assign fv_ce_msn = ce_wdata[CeAuxLsb + 32 +: 32];
  assign fv_ce_type = ce_wdata[CeTypeLsb +: 4];
  assign fv_ce_code = ce_wdata[CeCodeLsb +: 8];
  assign fv_co_push = co_push;
  assign fv_co_kind = co_wdata[25:24];
  assign fv_co_stream = co_wdata[23:8];
  assign fv_co_qn = co_wdata[7:0];
  assign fv_dlv_rel = o_del;
  assign fv_rel_last = o_item_q.last;
  assign fv_rel_tagged = o_item_q.is_tagged;
  assign fv_rel_stag_qn = o_item_q.stag_qn;
  assign fv_rel_msn = o_item_q.msn;
  assign fv_o_item = o_item_q;
  assign fv_s_drain = dr_q && o_push && !o_d.is_tagged;
  assign fv_ce_valid = ce_valid;
endmodule" > /dev/null
  echo "$work/$2.sv"
}

# rnic_rx_validate with observation ports for V1 (fv_v1_valid, fv_v1) and V1's invariants: every V1
# register is the RFC arithmetic of the item V1 holds (SsnWindow 64, as validate_fv.sv instantiates).
validate_probe() {  # SRC NAME
  local m
  m=$(mutant "$1" "$2_p1" "output logic          access_event_o" \
"output logic          access_event_o,
  output logic          fv_v1_valid,
  output rnic_lookup_t  fv_v1")
  mutant "$m" "$2" "endmodule" \
"  assign fv_v1_valid = v1_valid_q;
  assign fv_v1 = v1_q;
  logic [4:0] fv_hdr;
  logic [15:0] fv_pay;
  always_comb begin
    fv_hdr = v1_q.seg.is_tagged ? 5'(RNIC_TAGGED_HDR_BYTES) : 5'(RNIC_HDR_BYTES);
    fv_pay = v1_q.seg.seg_bytes < {11'b0, fv_hdr} ? 16'd0 : v1_q.seg.seg_bytes - {11'b0, fv_hdr};
    if (rst_ni && v1_valid_q) begin
      assert (v1_hdr_q == fv_hdr);
      assert (v1_short_q == (v1_q.seg.seg_bytes < {11'b0, fv_hdr}));
      assert (v1_pay_q == fv_pay);
      assert (v1_to_off_q == v1_q.seg.to - v1_q.stag_base_to);
      assert (v1_below_q == (v1_q.seg.to < v1_q.stag_base_to));
      assert (v1_room_neg_q == ({48'b0, fv_pay} > v1_q.stag_length));
      if (!v1_room_neg_q) assert (v1_room_q == v1_q.stag_length - {48'b0, fv_pay});
      assert (v1_wraps_q == (({1'b0, v1_q.seg.to} + {49'b0, fv_pay}) > 65'h0_FFFF_FFFF_FFFF_FFFF));
      assert (v1_ssn_out_q == ((v1_q.seg.ssn - v1_q.next_ssn) >= 16'd64));
      assert (v1_mo_bad_q == (fv_pay != 16'd0 ? v1_q.seg.mo >= v1_q.rq_length
                                              : v1_q.seg.mo > v1_q.rq_length));
      assert (v1_mo_end_q == {1'b0, v1_q.seg.mo} + {17'b0, fv_pay});
      assert (v1_stag_bad_q == (!v1_q.stag_valid || v1_q.stag_key != v1_q.seg.stag[7:0]));
      assert (v1_assoc_bad_q == (v1_q.stag_pd != v1_q.stream_pd ||
                                 (v1_q.stag_bound && v1_q.stag_stream != v1_q.seg.stream)));
    end
  end
endmodule" > /dev/null
  echo "$work/$2.sv"
}

# rtl_mutant NAME SRC TOP MODE DEPTH PATTERN REPLACEMENT [FILES...]: SRC with one change, run with
# the harness FILES after it, must fail.
rtl_mutant() {
  local name=$1 src=$2 top=$3 mode=$4 depth=$5 pat=$6 rep=$7 m
  shift 7
  wanted "$name" || return 0
  m=$(mutant "$src" "${name//-/_}_rtl" "$pat" "$rep")
  run "$name" "$top" "$mode" "$depth" fail "$m" "$@"
}

# deliver_mutant NAME PATTERN REPLACEMENT: deliver with one change, probed, must fail.
deliver_mutant() {
  wanted "$1" || return 0
  local m
  m=$(mutant "$rtl/rnic_rx_deliver.sv" "${1//-/_}_src" "$2" "$3")
  m=$(deliver_probe "$m" "${1//-/_}_rtl")
  run "$1" deliver_fv bmc "$deliver_depth" fail "$rtl/rnic_fifo.sv" "$rtl/rnic_slice.sv" "$m" "$fv/deliver_fv.sv"
}

printf '%-16s %-26s %-16s %-58s %7s\n' proof method '      depth' result time
if wanted validate; then
  m=$(validate_probe "$rtl/rnic_rx_validate.sv" validate_probe_rtl)
  run validate validate_fv induct 4 pass "$m" "$fv/validate_fv.sv"
fi
run place place_fv bmc "$place_depth" pass "$rtl/rnic_rx_place.sv" "$fv/place_fv.sv"
if wanted deliver; then
  m=$(deliver_probe "$rtl/rnic_rx_deliver.sv" deliver_probe_rtl)
  run deliver deliver_fv bmc "$deliver_depth" pass "$rtl/rnic_fifo.sv" "$rtl/rnic_slice.sv" "$m" "$fv/deliver_fv.sv"
fi
run regs-cq regs_cq_fv induct 4 pass "$rtl/rnic_regs.sv" "$fv/deliver_fv.sv"
# lookup_probe SRC NAME: lookup with fv_c_load (stage C takes an item's table data this cycle: the
# item moves in from B, or C's own re-read answers), for the harness's snapshot, and a command's end
# in the cycle it is decided (fv_cmd_done/refused/result; cmd_*_o are their registered copies).
lookup_probe() {
  local m
  m=$(mutant "$1" "$2_p1" "  input  logic                   lk_ready_i
);" "  input  logic                   lk_ready_i,
  output logic                   fv_c_load,
  output logic                   fv_cmd_done,
  output logic                   fv_cmd_refused,
  output logic [31:0]            fv_cmd_result
);")
  mutant "$m" "$2" "endmodule" "  assign fv_c_load = b_move || c_refresh_q;
  assign fv_cmd_done = cmd_done;
  assign fv_cmd_refused = cmd_refused;
  assign fv_cmd_result = cmd_result;
endmodule"
}
lk_units=("$rtl/rnic_lookup_stream.sv" "$rtl/rnic_lookup_rq.sv" "$rtl/rnic_lookup_prefetch.sv" "$rtl/rnic_fifo.sv")
lk_probe=$(lookup_probe "$rtl/rnic_rx_lookup.sv" lookup_probe_rtl)
lk=("$lk_probe" "$rtl/rnic_lookup_stag.sv" "${lk_units[@]}" "$fv/lookup_fv.sv")
run lookup-a lookup_fv_a bmc "$lookup_depth" pass "${lk[@]}"
wanted lookup-bw && [[ ${#only[@]} -gt 0 ]] && run lookup-bw lookup_fv_bw bmc "$lookup_depth" pass "${lk[@]}"
wanted lookup-b && [[ ${#only[@]} -gt 0 ]] && run lookup-b lookup_fv_b bmc "$lookup_depth" pass "${lk[@]}"
bmc_simplify=1 run lookup-race lookup_fv_race bmc 16 pass "${lk[@]}"
if [[ $mutants -eq 1 ]]; then
  if wanted validate-mut; then
    m=$(mutant "$rtl/rnic_rx_validate.sv" validate_mut_src "end else if (v1_below_q || past_end) begin" \
      "end else if (v1_below_q) begin")
    m=$(validate_probe "$m" validate_mut_rtl)
    run validate-mut validate_fv induct 4 fail "$m" "$fv/validate_fv.sv"
  fi
  rtl_mutant place-mut-strb "$rtl/rnic_rx_place.sv" place_fv bmc "$place_depth" \
    "(last_a ? ({Bytes{1'b1}} >> (~c_ll_q)) : {Bytes{1'b1}})" \
    "{Bytes{1'b1}}" \
    "$fv/place_fv.sv"
  rtl_mutant place-mut-stale "$rtl/rnic_rx_place.sv" place_fv bmc "$place_depth" \
    "v_place_w = v_place && !v_stale &&" \
    "v_place_w = v_place &&" \
    "$fv/place_fv.sv"
  deliver_mutant deliver-mut-ring \
    "assign cq_index = widx_q & (cq_size - 32'd1);" \
    "assign cq_index = widx_q;"
  deliver_mutant deliver-mut-order \
    "assign o_bad = o_untagged &&" \
    "assign o_bad = 1'b0 && o_untagged &&"
  deliver_mutant deliver-mut-gate \
    "assign gate = ce_valid && !mark_wait[31];" \
    "assign gate = ce_valid;"
  rtl_mutant regs-cq-mut "$rtl/rnic_regs.sv" regs_cq_fv induct 4 \
    "assign cq_idle = !cq_en_q && !cq_busy_q;" \
    "assign cq_idle = !cq_en_q;" \
    "$fv/deliver_fv.sv"
  deliver_mutant deliver-mut-busy \
    "assign cq_busy_o = load || wv_q || last_b_wait[31];" \
    "assign cq_busy_o = load || wv_q;"
  rtl_mutant lookup-mut-stag "$rtl/rnic_lookup_stag.sv" lookup_fv_a bmc "$lookup_depth" \
    "assign rsp_hit_o = {8'b0, rd_index_q} < StagEntries && rdata[SeValid];" \
    "assign rsp_hit_o = rdata[SeValid];" \
    "$lk_probe" "${lk_units[@]}" "$fv/lookup_fv.sv"
  if wanted lookup-mut-prod; then
    m=$(mutant "$rtl/rnic_rx_lookup.sv" lookup_mut_prod_src "else if (c_nobuf_q) c_status" \
      "else if (1'b0) c_status")
    m=$(lookup_probe "$m" lookup_mut_prod_rtl)
    run lookup-mut-prod lookup_fv_bw bmc "$lookup_depth" fail "$m" "$rtl/rnic_lookup_stag.sv" \
      "${lk_units[@]}" "$fv/lookup_fv.sv"
  fi
fi
exit $status
