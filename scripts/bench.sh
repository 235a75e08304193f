#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The project's benchmark (docs/bench.md): kernel throughput and latency per payload size, the
# Verilated kernel's simulation speed and rnic-sim's under the driver's traffic, the driver's cost per
# STag registration / invalidate, and on request the synthesis summary. Builds only what it runs.
#   scripts/bench.sh [--quick] [--out DIR] [--synth] [--runs N] [--docs] [--no-build] [--help]
#     --quick     fewer payload sizes, shorter speed windows, fewer driver registrations (~1/4 the time)
#     --out DIR   where bench.json, bench.png, bench.md and the raw outputs go (default build/bench)
#     --synth     also the open synthesis summary of the default configuration (scripts/synth_report.sh
#                 --config default, 3-5 minutes)
#     --runs N    wall-clock repetitions whose median is reported (default 5, --quick 3)
#     --docs      write the figures into the documentation (scripts/bench_docs.py: the README's headline,
#                 docs/bench.md's table) and the plot to docs/bench.png; needs --synth (the headline has it)
#     --no-build  use the executables already in the build directory
# Output: a table on stdout (= DIR/bench_summary.md); DIR/bench.json (metric names in docs/bench.md),
# DIR/bench.png (bytes per cycle against payload size, the 64 B/cycle bus limit and the input-beat
# limits), DIR/bench.md (every row), DIR/kernel.json, sim.json (the Verilated RTL's speed),
# sim_systemc.json (the SystemC-HLS model's), rnic_sim.json (rnic-sim's), driver.json, synth.json,
# DIR/*.log.
# Cycle figures are exact (the simulation is deterministic); wall-clock figures are medians.
# Environment: RNIC_BUILD_DIR (default build/default; built under flock /tmp/rnic-build.lock).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0
synth=0
docs=0
build=1
runs=""
out="$root/build/bench"
usage() { sed -n '5p' "$0" | sed 's/^# //'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --synth) synth=1; shift ;;
    --docs) docs=1; shift ;;
    --no-build) build=0; shift ;;
    --out)
      [[ $# -ge 2 && -n "$2" ]] || { echo "bench.sh: --out needs a directory" >&2; exit 2; }
      out=$2; shift 2 ;;
    --runs)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]?$ ]] || { echo "bench.sh: --runs needs an integer in 1..99" >&2; exit 2; }
      runs=$2; shift 2 ;;
    -h|--help) sed -n "2,$(($(grep -n '^# Environment' "$0" | cut -d: -f1)))p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
if [[ $docs -eq 1 && ( $synth -eq 0 || $quick -eq 1 ) ]]; then
  echo "bench.sh: --docs writes the documentation's figures: it needs --synth and a full run (not --quick)" >&2
  exit 2
fi
command -v python3 > /dev/null || { echo "bench.sh: python3 not found (scripts/deps.sh)" >&2; exit 1; }
command -v gnuplot > /dev/null || { echo "bench.sh: gnuplot not found (scripts/deps.sh installs gnuplot-nox)" >&2; exit 1; }
if [[ -n "${RNIC_FST:-}" ]]; then
  echo "bench.sh: RNIC_FST is set: the simulation speed is measured without trace; unset it" >&2
  exit 2
fi

if [[ $quick -eq 1 ]]; then
  sizes=0,1,64,256,1024,1450,4096,9000
  segments=100
  speed_cycles=50000
  driver_count=500
  sim_messages=5000
  runs=${runs:-3}
else
  sizes=0,1,16,32,50,64,128,256,512,1024,1450,2048,4096,8192,9000
  segments=200
  speed_cycles=200000
  driver_count=2000
  sim_messages=20000
  runs=${runs:-5}
fi

bdir=${RNIC_BUILD_DIR:-$root/build/default}
[[ "$bdir" = /* ]] || bdir="$root/$bdir"
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/{bench.json,bench.png,bench.md,bench_summary.md,bench_plot.dat,kernel.json,sim.json,sim_systemc.json,rnic_sim.json,driver.json,synth.json}
kbench="$bdir/tb/rtl/kernel/rnic_kernel_bench"
kbench_sc="$bdir/tb/rtl/kernel/rnic_kernel_bench_systemc"
dbench="$bdir/tb/system/driver/rnic_driver_bench"
rnic_sim="$bdir/sim/rnic-sim"
rnic_run="$bdir/host/run/rnic-run"
now() { date +%s.%N; }
declare -A secs=()

if [[ $build -eq 1 ]]; then
  [[ -f "$bdir/build.ninja" || -f "$bdir/Makefile" ]] ||
    { echo "bench.sh: $bdir is not configured (cmake --preset default)" >&2; exit 1; }
  t=$(now)
  echo "bench.sh: building rnic_kernel_bench rnic_kernel_bench_systemc rnic_driver_bench rnic-sim rnic-run in $bdir"
  lock=()
  [[ "$bdir" == "$root/build/default" ]] && lock=(flock /tmp/rnic-build.lock)
  "${lock[@]}" cmake --build "$bdir" --target rnic_kernel_bench rnic_kernel_bench_systemc rnic_driver_bench rnic-sim rnic-run -j2 > "$out/build.log" 2>&1 ||
    { tail -40 "$out/build.log" >&2; echo "bench.sh: build failed (log: $out/build.log)" >&2; exit 1; }
  secs[build]=$(python3 -c "print(round($(now) - $t, 1))")
fi
for x in "$kbench" "$kbench_sc" "$dbench" "$rnic_sim" "$rnic_run"; do
  [[ -x "$x" ]] || { echo "bench.sh: $x not built" >&2; exit 1; }
done

t=$(now)
echo "bench.sh: kernel rows (sizes $sizes, $segments segments per row)"
"$kbench" --sizes "$sizes" --segments "$segments" --speed-cycles 0 --json "$out/kernel.json" > "$out/kernel.log" 2>&1 ||
  { cat "$out/kernel.log" >&2; echo "bench.sh: rnic_kernel_bench failed" >&2; exit 1; }
secs[kernel]=$(python3 -c "print(round($(now) - $t, 1))")

t=$(now)
echo "bench.sh: simulation speed ($runs windows of $speed_cycles cycles, loaded and idle)"
"$kbench" --no-rows --speed-cycles "$speed_cycles" --speed-runs "$runs" --json "$out/sim.json" > "$out/sim.log" 2>&1 ||
  { cat "$out/sim.log" >&2; echo "bench.sh: rnic_kernel_bench (speed) failed" >&2; exit 1; }
secs[sim]=$(python3 -c "print(round($(now) - $t, 1))")

t=$(now)
echo "bench.sh: simulation speed of the SystemC-HLS model (rtl/hls), the same windows"
"$kbench_sc" --no-rows --speed-cycles "$speed_cycles" --speed-runs "$runs" --json "$out/sim_systemc.json" \
  > "$out/sim_systemc.log" 2>&1 ||
  { cat "$out/sim_systemc.log" >&2; echo "bench.sh: rnic_kernel_bench_systemc (speed) failed" >&2; exit 1; }
secs[sim_systemc]=$(python3 -c "print(round($(now) - $t, 1))")

# rnic-sim's own speed: the card (the Verilated RTL with its network side, as users run it) under
# rnic-run's traffic through the driver. rnic-sim --verbose says at exit how many cycles its main loop
# ran and in how long (the MMIO round trips' few cycles aside); one rnic-sim per run.
t=$(now)
echo "bench.sh: rnic-sim under rnic-run ($runs runs of $sim_messages messages, seed 1)"
sim_rates=()
sim_pid=
trap '[[ -n "$sim_pid" ]] && kill "$sim_pid" 2>/dev/null' EXIT
for ((r = 0; r < runs; r++)); do
  sock=$(mktemp -u "${TMPDIR:-/tmp}/rnic-bench.XXXXXX.sock")
  "$rnic_sim" --socket "$sock" --verbose > "$out/rnic_sim.$r.log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 300); do [[ -S "$sock" ]] && break; sleep 0.1; done
  RNIC_DEVICE="sim:$sock" "$rnic_run" --seed 1 --messages "$sim_messages" > "$out/rnic_run.$r.log" 2>&1 ||
    { cat "$out/rnic_run.$r.log" "$out/rnic_sim.$r.log" >&2; echo "bench.sh: rnic-run against rnic-sim failed" >&2; exit 1; }
  kill -TERM "$sim_pid"
  wait "$sim_pid" || { cat "$out/rnic_sim.$r.log" >&2; echo "bench.sh: rnic-sim failed" >&2; exit 1; }
  sim_pid=
  line=$(grep -E '^rnic-sim: ran [0-9]+ of [0-9]+ cycles in batches' "$out/rnic_sim.$r.log" || true)
  [[ -n "$line" ]] || { cat "$out/rnic_sim.$r.log" >&2; echo "bench.sh: rnic-sim did not report its speed" >&2; exit 1; }
  sim_rates+=("$(sed -E 's/.* ([0-9]+) cycles\/s$/\1/' <<< "$line")")
done
python3 - "$out/rnic_sim.json" "$sim_messages" "${sim_rates[@]}" <<'PY'
import json, statistics, sys
path, messages, rates = sys.argv[1], int(sys.argv[2]), [float(x) for x in sys.argv[3:]]
json.dump({"traffic": "rnic-run --seed 1 --messages %d through the driver" % messages, "runs": len(rates),
           "cycles_per_second_runs": rates, "cycles_per_second_median": statistics.median(rates)},
          open(path, "w"), indent=1)
PY
secs[rnic_sim]=$(python3 -c "print(round($(now) - $t, 1))")

t=$(now)
echo "bench.sh: driver ($runs runs of $driver_count registrations and invalidates against rnic-sim)"
"$dbench" --count "$driver_count" --runs "$runs" --json "$out/driver.json" > "$out/driver.log" 2>&1 ||
  { cat "$out/driver.log" >&2; echo "bench.sh: rnic_driver_bench failed" >&2; exit 1; }
secs[driver]=$(python3 -c "print(round($(now) - $t, 1))")

rm -f "$out/synth.json"
if [[ $synth -eq 1 ]]; then
  t=$(now)
  echo "bench.sh: synthesis summary (scripts/synth_report.sh --config default, 3-5 minutes)"
  "$root/scripts/synth_report.sh" --config default --json "$out/synth.json" > "$out/synth.log" 2>&1 ||
    { tail -40 "$out/synth.log" >&2; echo "bench.sh: synth_report.sh failed" >&2; exit 1; }
  secs[synth]=$(python3 -c "print(round($(now) - $t, 1))")
fi

timings=""
for k in "${!secs[@]}"; do timings+="${timings:+,}\"$k\": ${secs[$k]}"; done
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | head -1 || true)

# Merge into bench.json, write the plot's data, the Markdown table; print the table.
python3 - "$out" "{$timings}" "$commit${dirty:+ (work tree modified)}" "$quick" <<'PY'
import json, os, sys, time
out, timings, commit, quick = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
SIM_KEYS = ("cycles_per_second_median", "cycles_per_second_runs", "idle_cycles_per_second_median",
            "idle_cycles_per_second_runs", "cycles_per_run", "runs", "trace", "loaded_traffic",
            "loaded_segments", "loaded_input_beats", "loaded_backpressure_cycles", "ok")
def load(name):
    p = os.path.join(out, name)
    return json.load(open(p)) if os.path.exists(p) else None
k, s, d, y = load("kernel.json"), load("sim.json"), load("driver.json"), load("synth.json")
rs = load("rnic_sim.json")
sc = load("sim_systemc.json")
bus = k["limit_bytes_per_cycle"]
rows = []
for r in k["rows"]:
    rows.append({
        "kind": r["kind"], "tagged": r["tagged"], "payload_bytes": r["payload_bytes"], "align": r["align"],
        "header_bytes": r["header_bytes"], "segments": r["segments"], "messages": r["messages"],
        "cycles": r["cycles"], "bytes_per_cycle": r["bytes_per_cycle"],
        "bus_fraction": r["bytes_per_cycle"] / bus,
        "input_beats": r["input_beats"], "input_limit_bytes_per_cycle": r["input_limit_bytes_per_cycle"],
        "input_fraction": (r["bytes_per_cycle"] / r["input_limit_bytes_per_cycle"]
                           if r["input_limit_bytes_per_cycle"] else None),
        "segments_per_cycle": r["segments_per_cycle"],
        "input_limit_segments_per_cycle": r["input_limit_segments_per_cycle"],
        "write_beats": r["write_beats"], "write_limit_bytes_per_cycle": r["write_limit_bytes_per_cycle"],
        # One beat per cycle on the input and on the one AXI write channel: the row can do no better.
        "ceiling_bytes_per_cycle": min(r["input_limit_bytes_per_cycle"], r["write_limit_bytes_per_cycle"]),
        "ceiling_fraction": (r["bytes_per_cycle"] / min(r["input_limit_bytes_per_cycle"], r["write_limit_bytes_per_cycle"])
                             if r["payload_bytes"] else None),
        "segments_ceiling_per_cycle": r["segments"] / max(r["input_beats"], r["write_beats"]),
        "backpressure_fraction": r["backpressure_fraction"],
        "latency_cycles_min": r["latency_cycles_min"], "latency_cycles_avg": r["latency_cycles_avg"],
        "latency_cycles_max": r["latency_cycles_max"], "ok": r["ok"]})
res = {
    "generator": "scripts/bench.sh" + (" --quick" if quick else ""),
    "commit": commit,
    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "machine": {"cpus": os.cpu_count(), "load_average_1min": os.getloadavg()[0]},
    "kernel": {"data_width": k["data_width"], "bus_limit_bytes_per_cycle": bus,
               "tagged_header_bytes": k["tagged_header_bytes"],
               "untagged_header_bytes": k["untagged_header_bytes"],
               "segments_per_row": k["segments_per_row"], "segments_per_message": k["segments_per_message"],
               "b_latency_cycles": k["b_latency"], "r_latency_cycles": k["r_latency"], "rows": rows},
    "sim": {key: s["sim"][key] for key in SIM_KEYS},
    "sim_systemc": {key: sc["sim"][key] for key in SIM_KEYS},
    "rnic_sim": rs,
    "driver": {"count": d["count"], "runs": d["runs"],
               "counts_equal_in_every_run": d["counts_equal_in_every_run"],
               "register": d["register"], "invalidate": d["invalidate"],
               "registrations_per_second_median": d["register"]["ops_per_second_median"],
               "invalidates_per_second_median": d["invalidate"]["ops_per_second_median"],
               "mmio_ops_per_registration": d["register"]["mmio_ops_per_op"],
               "mmio_ops_per_invalidate": d["invalidate"]["mmio_ops_per_op"]},
    "synth": None,
    "seconds": timings,
}
if y:
    c = y["configurations"][0]
    res["synth"] = {"configuration": c.get("name"), "yosys_version": c.get("yosys_version")}
    for key in ("luts", "ffs", "carry", "bram36", "bram18", "uram", "lutram", "lutram_luts", "muxf7",
                "muxf8", "muxf9", "dsp", "lut_depth", "seconds"):
        if key in c:
            res["synth"][key] = c[key]
json.dump(res, open(os.path.join(out, "bench.json"), "w"), indent=1)

# Plot data: one line per payload size > 0, bytes/cycle per (kind, align), each kind's input limit, and
# the ceiling min(input, W) per (kind, align).
series = [("tagged", 0), ("tagged", 37), ("untagged", 0), ("untagged", 37)]
by = {(r["kind"], r["align"], r["payload_bytes"]): r for r in rows}
sizes = sorted({r["payload_bytes"] for r in rows if r["payload_bytes"] > 0})
with open(os.path.join(out, "bench_plot.dat"), "w") as f:
    f.write("# S tagged/0 tagged/37 untagged/0 untagged/37 input_limit_tagged input_limit_untagged"
            " ceiling_tagged/0 ceiling_tagged/37 ceiling_untagged/0 ceiling_untagged/37\n")
    for sz in sizes:
        vals = [by.get((kd, al, sz), {}).get("bytes_per_cycle", float("nan")) for kd, al in series]
        lim = [by.get((kd, 0, sz), {}).get("input_limit_bytes_per_cycle", float("nan")) for kd in ("tagged", "untagged")]
        ceil = [by.get((kd, al, sz), {}).get("ceiling_bytes_per_cycle", float("nan")) for kd, al in series]
        f.write(" ".join(str(v) for v in [sz] + vals + lim + ceil) + "\n")

def fmt(v, spec):
    return "-" if v is None else format(v, spec)
lines = []
lines.append("| kind | S (B) | align | B/cycle | % of 64 | input limit | % of input limit | W limit | % of min(input, W) | latency min / avg / max (cycles) |")
lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for r in rows:
    if r["payload_bytes"] == 0:
        bpc = "%.3f seg/cycle" % r["segments_per_cycle"]
        lim = "%.3f seg/cycle" % r["input_limit_segments_per_cycle"]
        frac = "%.1f%%" % (100 * r["segments_per_cycle"] / r["input_limit_segments_per_cycle"])
        busf, wl = "-", "-"
        cf = "%.1f%%" % (100 * r["segments_per_cycle"] / r["segments_ceiling_per_cycle"])
    else:
        bpc, lim = "%.2f" % r["bytes_per_cycle"], "%.2f" % r["input_limit_bytes_per_cycle"]
        frac, busf = "%.1f%%" % (100 * r["input_fraction"]), "%.1f%%" % (100 * r["bus_fraction"])
        wl = "%.2f" % r["write_limit_bytes_per_cycle"]
        cf = "%.1f%%" % (100 * r["ceiling_fraction"])
    lat = "-" if r["latency_cycles_min"] is None else "%d / %.1f / %d" % (
        r["latency_cycles_min"], r["latency_cycles_avg"], r["latency_cycles_max"])
    lines.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |%s" % (
        r["kind"], r["payload_bytes"], r["align"], bpc, busf, lim, frac, wl, cf, lat, "" if r["ok"] else " FAILED"))
sm, dr = res["sim"], res["driver"]
lines.append("")
lines.append("| other figure | value |")
lines.append("|---|---|")
lines.append("| simulation speed, loaded (%s), no trace | %.0f cycles/s (median of %d x %d cycles) |" % (
    sm["loaded_traffic"], sm["cycles_per_second_median"], sm["runs"], sm["cycles_per_run"]))
lines.append("| simulation speed, idle | %.0f cycles/s (median) |" % sm["idle_cycles_per_second_median"])
ss = res["sim_systemc"]
lines.append("| simulation speed of the SystemC-HLS model, loaded (same traffic), no trace | %.0f cycles/s (median of %d x %d cycles; %.2fx the Verilated RTL's) |" % (
    ss["cycles_per_second_median"], ss["runs"], ss["cycles_per_run"],
    ss["cycles_per_second_median"] / sm["cycles_per_second_median"]))
lines.append("| simulation speed of the SystemC-HLS model, idle | %.0f cycles/s (median; %.2fx the RTL's) |" % (
    ss["idle_cycles_per_second_median"], ss["idle_cycles_per_second_median"] / sm["idle_cycles_per_second_median"]))
lines.append("| rnic-sim's speed (the RTL card with its network side) under %s | %.0f cycles/s (median of %d runs; %.0f..%.0f) |" % (
    rs["traffic"], rs["cycles_per_second_median"], rs["runs"], min(rs["cycles_per_second_runs"]),
    max(rs["cycles_per_second_runs"])))
lines.append("| machine: CPUs, load average at the end | %d, %.2f |" % (res["machine"]["cpus"], res["machine"]["load_average_1min"]))
for op, name, plural in (("register", "STag registration", "registrations"),
                         ("invalidate", "STag invalidate", "invalidates")):
    o = dr[op]
    lines.append("| %s: MMIO reads + writes per operation | %.3g + %.3g = %.4g (median; the reads include CMD_STATUS polls), %g command |" % (
        name, o["mmio_reads_per_op"], o["mmio_writes_per_op"], o["mmio_ops_per_op"], o["commands_per_op"]))
    lines.append("| %s per second through rnic-sim | %.0f (median of %d runs of %d; runs %.0f..%.0f) |" % (
        plural, o["ops_per_second_median"], dr["runs"], dr["count"], min(o["ops_per_second_runs"]),
        max(o["ops_per_second_runs"])))
if res["synth"]:
    sy = res["synth"]
    lines.append("| synthesis (%s, Yosys synth_xilinx xcup) | %s LUTs, %s FFs, %s RAMB36, %s RAMB18, %s URAM, LUT depth %s |" % (
        sy.get("configuration"), sy.get("luts"), sy.get("ffs"), sy.get("bram36"), sy.get("bram18"),
        sy.get("uram"), sy.get("lut_depth")))
md = "\n".join(lines) + "\n"
open(os.path.join(out, "bench.md"), "w").write(md)

# The compact table (stdout and docs/bench.md): one line per payload size.
def cell(kd, al, sz, key, spec):
    r = by.get((kd, al, sz))
    return "-" if r is None or r[key] is None else format(r[key], spec)
def pct(v):
    return "-" if v is None else "%.0f%%" % (100 * v)
c = ["| S (B) | input limit tagged / untagged | tagged, aligned | tagged, % 64 = 37 | untagged, aligned | untagged, % 64 = 37 | of min(input, W) | latency avg (min..max), tagged aligned |",
     "|---:|---:|---:|---:|---:|---:|---:|---|"]
for sz in [0] + sizes:
    if sz == 0:
        t = [cell(kd, al, 0, "segments_per_cycle", ".3f") for kd, al in series]
        fr = [by[(kd, al, 0)]["segments_per_cycle"] / by[(kd, al, 0)]["segments_ceiling_per_cycle"]
              for kd, al in series if (kd, al, 0) in by]
        lim = "1 seg/cycle"
        t = [x + " seg/c" for x in t]
    else:
        t = [cell(kd, al, sz, "bytes_per_cycle", ".2f") for kd, al in series]
        fr = [by[(kd, al, sz)]["ceiling_fraction"] for kd, al in series if (kd, al, sz) in by]
        lim = cell("tagged", 0, sz, "input_limit_bytes_per_cycle", ".2f") + " / " + cell("untagged", 0, sz, "input_limit_bytes_per_cycle", ".2f")
    t = [x + ("" if by.get((kd, al, sz), {}).get("ok", True) else " FAILED") for x, (kd, al) in zip(t, series)]
    r0 = by.get(("tagged", 0, sz))
    lat = "-" if r0 is None or r0["latency_cycles_min"] is None else "%.1f (%d..%d)" % (
        r0["latency_cycles_avg"], r0["latency_cycles_min"], r0["latency_cycles_max"])
    span = "-" if not fr else ("%.0f%%" % (100 * min(fr)) if round(100 * min(fr)) == round(100 * max(fr))
                               else "%.0f..%.0f%%" % (100 * min(fr), 100 * max(fr)))
    c.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (sz, lim, t[0], t[1], t[2], t[3], span, lat))
other = lines[lines.index("| other figure | value |"):]
compact = "\n".join(c) + "\n\n" + "\n".join(other) + "\n"
open(os.path.join(out, "bench_summary.md"), "w").write(compact)
print()
print("Kernel: placed payload bytes per cycle (bus limit %d B/cycle; the full table per row: %s/bench.md)" % (bus, out))
print(compact)
print("timings (s): " + ", ".join("%s %s" % kv for kv in timings.items()))
bad = [r for r in rows if not r["ok"]]
if bad or not sm["ok"]:
    print("bench.sh: FAILED rows or runs (see %s/*.log)" % out, file=sys.stderr)
    sys.exit(1)
PY

t=$(now)
gnuplot -e "datafile='$out/bench_plot.dat'; outfile='$out/bench.png'; buslimit=64" "$root/scripts/bench_plot.gp" ||
  { echo "bench.sh: gnuplot failed" >&2; exit 1; }
if [[ $docs -eq 1 ]]; then
  python3 "$root/scripts/bench_docs.py" "$out" "$root"
  cp "$out/bench.png" "$root/docs/bench.png"
  echo "bench.sh: copied the plot to docs/bench.png"
fi
echo "bench.sh: $out/bench.json, $out/bench.png, $out/bench.md, $out/bench_summary.md"
