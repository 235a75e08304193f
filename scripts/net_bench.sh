#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end figures of the card on the network in simulation (docs/network.md): rnic-peer -> UDP ->
# rnic-sim's RTL card <- rnic-sink, as scripts/net_run.sh runs them, on a clean path and with loss,
# duplication and reordering. Per condition: messages and bytes per second (rnic-peer's transfer phase,
# wall clock: the Verilated card sets the pace), DATA chunks retransmitted and T3 timeouts (rnic-peer's
# usrsctp), and the share of the wire's bytes that reached the host (rnic-sink). Medians of --runs runs,
# each with its own seed. Builds what it runs unless --no-build.
#   scripts/net_bench.sh [--runs N] [--messages N] [--out DIR] [--no-build]
# Output: a markdown table on stdout and DIR/net_bench.json (default DIR build/net-bench).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=3
messages=1000
out=$root/build/net-bench
build_dir=${RNIC_BUILD_DIR:-$root/build/default}
do_build=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=${2:?}; shift 2 ;;
    --messages) messages=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) sed -n '9,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "net_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]?$ ]] || { echo "net_bench: --runs needs 1..99" >&2; exit 2; }
[[ "$messages" =~ ^[0-9]+$ ]] || { echo "net_bench: --messages needs a number" >&2; exit 2; }
if [[ "$do_build" -eq 1 ]]; then
  flock /tmp/rnic-build.lock cmake --build "$build_dir" --target rnic-sim rnic-sink rnic-peer >/dev/null
fi
mkdir -p "$out"
conditions=("clean:0:0:0" "loss-1%:0.01:0:0" "loss-3%,dup-2%,reorder-5%:0.03:0.02:0.05")
for c in "${conditions[@]}"; do
  IFS=: read -r name loss dup reorder <<<"$c"
  for r in $(seq 1 "$runs"); do
    dir=$out/$name/$r
    mkdir -p "$dir"
    "$root/scripts/net_run.sh" --build "$build_dir" --out "$dir" --messages "$messages" --seed "$r" --loss "$loss" \
      --dup "$dup" --reorder "$reorder" --port "${RNIC_NET_PORT:-9899}" --peer-port "${RNIC_PEER_PORT:-9898}" \
      --no-tshark >"$dir.log" 2>&1 || { cat "$dir.log" >&2; echo "net_bench: run $name/$r failed" >&2; exit 1; }
  done
done
python3 - "$out" "$runs" "$messages" "${conditions[@]}" <<'EOF'
import json, statistics, sys
out, runs, messages, conds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
rows = []
for c in conds:
    name = c.split(":")[0]
    m = {"messages_per_s": [], "mbit_per_s": [], "retransmitted": [], "t3": [], "host_share": [], "bytes": []}
    for r in range(1, runs + 1):
        peer = json.load(open(f"{out}/{name}/{r}/peer.json"))
        sink = json.load(open(f"{out}/{name}/{r}/sink.json"))
        m["messages_per_s"].append(peer["messages_per_s"])
        m["mbit_per_s"].append(peer["bytes_per_s"] * 8e-6)
        m["retransmitted"].append(peer["sctp"]["retransmitted_chunks"])
        m["t3"].append(peer["sctp"]["t3_timeouts"])
        h = sink["host"]
        m["host_share"].append(100.0 * h["bytes_in_ring"] / max(h["bytes_on_wire"], 1))
        m["bytes"].append(peer["bytes"])
    rows.append({"condition": name, **{k: statistics.median(v) for k, v in m.items()}})
print(f"| path ({messages} messages, 2 streams, median of {runs}) | messages/s | Mbit/s | DATA chunks retransmitted | T3 timeouts | wire bytes that reached the host |")
print("|---|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['condition']} | {r['messages_per_s']:.0f} | {r['mbit_per_s']:.1f} | {r['retransmitted']:.0f} | {r['t3']:.0f} | {r['host_share']:.1f}% |")
json.dump(rows, open(f"{out}/net_bench.json", "w"), indent=2)
EOF
