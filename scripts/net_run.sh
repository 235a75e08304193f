#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One run of the card on the network (docs/network.md): rnic-sim's RTL card with its network port on
# UDP, rnic-sink (the driver and usrsctp over the card's packet rings) on the card's side, rnic-peer
# (usrsctp in UDP, RFC 6951, the Data Source) sending the demo ULP's tagged and untagged messages. The
# card places them; rnic-sink checks every byte and completion. Then tshark decodes rnic-peer's capture:
# SCTP over UDP, DDP through tb/interop/ddp_sctp.lua, every packet's CRC32c good (the card computes
# those it sends), the DDP indication in INIT and INIT-ACK. Uses what is built (run.sh builds it).
#   scripts/net_run.sh [--build DIR] [--out DIR] [--messages N] [--max-message B] [--streams N]
#                      [--seed N] [--loss P] [--dup P] [--reorder P] [--port P] [--peer-port P]
#                      [--no-tshark] [--xrt host|ddr]
#     --build DIR    build directory (default build/default)
#     --out DIR      logs, reports (sink.json, peer.json) and the capture (net.pcap) (default DIR/net)
#     --loss/--dup/--reorder P   impairment on the path, both ways (rnic-sim --net-*; default 0)
#     --port P       the card's UDP port (default 9899, RFC 6951); --peer-port the peer's (default 9898):
#                    two runs at once need other ports
#     --xrt BANK     the card through XRT's hardware emulation (scripts/xrt_emu.sh --bank BANK): XRT starts
#                    rnic-sim and rnic-sink drives it through the driver's XRT backend
# Prints the three programs' summaries and one line "net_run: PASS ..."; exit 0 on success, 1 on any
# failure (what failed on stderr), 2 bad arguments.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/default
out=""
messages=400
max_message=8192
streams=2
seed=1
loss=0
dup=0
reorder=0
port=9899
peer_port=9898
tshark=1
xrt=
usage() { sed -n '9,11p' "$0" | sed 's/^# \{0,1\}//'; }
need() { [[ $# -ge 2 && -n "$2" ]] || { echo "net_run: $1 needs a value" >&2; exit 2; }; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) need "$@"; build=$2; shift 2 ;;
    --out) need "$@"; out=$2; shift 2 ;;
    --messages) need "$@"; messages=$2; shift 2 ;;
    --max-message) need "$@"; max_message=$2; shift 2 ;;
    --streams) need "$@"; streams=$2; shift 2 ;;
    --seed) need "$@"; seed=$2; shift 2 ;;
    --loss) need "$@"; loss=$2; shift 2 ;;
    --dup) need "$@"; dup=$2; shift 2 ;;
    --reorder) need "$@"; reorder=$2; shift 2 ;;
    --port) need "$@"; port=$2; shift 2 ;;
    --peer-port) need "$@"; peer_port=$2; shift 2 ;;
    --no-tshark) tshark=0; shift ;;
    --xrt) need "$@"; xrt=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "net_run: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[[ -n "$out" ]] || out=$build/net
mkdir -p "$out"
sim=$build/sim/rnic-sim
sink=$build/host/sink/rnic-sink
peer=$build/host/peer/rnic-peer
for b in "$sim" "$sink" "$peer"; do
  [[ -x "$b" ]] || { echo "net_run: $b is not built (./scripts/run.sh builds it)" >&2; exit 1; }
done

fail() { echo "net_run: FAILED: $*" >&2; exit 1; }
sim_pid=
sink_pid=
sock=$(mktemp -u "${TMPDIR:-/tmp}/rnic-sim.XXXXXX.sock")
cleanup() {
  if [[ -n "$sink_pid" ]]; then
    if [[ -n "$xrt" ]]; then  # xrt_emu.sh: TERM ends its session and lets it clean up
      kill -TERM "$sink_pid" 2>/dev/null || true
      wait "$sink_pid" 2>/dev/null || true
    else
      kill -KILL "$sink_pid" 2>/dev/null || true
    fi
  fi
  if [[ -n "$sim_pid" ]]; then
    kill -TERM "$sim_pid" 2>/dev/null || true
    wait "$sim_pid" 2>/dev/null || true
  fi
  rm -f "$sock"
}
trap cleanup EXIT

net_args=(--udp-port "$port" --net-loss "$loss" --net-dup "$dup" --net-reorder "$reorder" --net-seed "$seed")
if [[ -z "$xrt" ]]; then
  "$sim" --socket "$sock" --model rtl "${net_args[@]}" >"$out/sim.log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 1 300); do
    [[ -S "$sock" ]] && break
    kill -0 "$sim_pid" 2>/dev/null || fail "rnic-sim --udp-port $port exited at start (see $out/sim.log; port in use?)"
    sleep 0.1
  done
  [[ -S "$sock" ]] || fail "rnic-sim did not open $sock within 30 s (see $out/sim.log)"
  "$sink" --once --device "sim:$sock" --peer "127.0.0.1:$peer_port" --udp-port "$port" --json "$out/sink.json" \
    >"$out/sink.log" 2>&1 &
  sink_pid=$!
else
  # XRT loads the xclbin and starts rnic-sim (with these options) when rnic-sink opens xrt:0.
  sim_args=()
  for a in "${net_args[@]}"; do sim_args+=(--sim-arg "$a"); done
  "$root/scripts/xrt_emu.sh" --build "$build" --bank "$xrt" --timeout 600 "${sim_args[@]}" -- \
    "$sink" --once --device xrt:0 --peer "127.0.0.1:$peer_port" --udp-port "$port" --json "$out/sink.json" \
    >"$out/sink.log" 2>&1 &
  sink_pid=$!
fi
for _ in $(seq 1 600); do
  grep -q listening "$out/sink.log" && break
  kill -0 "$sink_pid" 2>/dev/null || { cat "$out/sink.log" >&2; fail "rnic-sink exited at start"; }
  sleep 0.1
done
grep -q listening "$out/sink.log" || { cat "$out/sink.log" >&2; fail "rnic-sink did not start listening within 60 s"; }
"$peer" --connect "127.0.0.1:$port" --local-port "$peer_port" --messages "$messages" --max-message "$max_message" \
  --streams "$streams" --seed "$seed" --timeout-ms 300000 --pcap "$out/net.pcap" --json "$out/peer.json" \
  >"$out/peer.log" 2>&1 ||
  { cat "$out/peer.log" "$out/sink.log" >&2; fail "rnic-peer (log: $out/peer.log)"; }
status=0
wait "$sink_pid" || status=$?
sink_pid=
cat "$out/peer.log" "$out/sink.log"
[[ "$status" -eq 0 ]] || fail "rnic-sink exited with status $status (log: $out/sink.log)"
if [[ -n "$sim_pid" ]]; then  # with --xrt the device ended with rnic-sink's XRT session
  kill -TERM "$sim_pid"
  status=0
  wait "$sim_pid" || status=$?
  sim_pid=
  [[ "$status" -eq 0 ]] || fail "rnic-sim exited with status $status on SIGTERM (see $out/sim.log)"
fi

if [[ "$tshark" -eq 1 ]]; then
  command -v tshark >/dev/null || fail "tshark not found (./scripts/deps.sh installs it; --no-tshark skips the check)"
  count() {  # a tshark that fails counts 0, and the check below says so
    { tshark -r "$out/net.pcap" -d "udp.port==$port,sctp" -X lua_script:"$root/tb/interop/ddp_sctp.lua" \
      -o sctp.checksum:CRC-32C -Y "$1" -T fields -e frame.number 2>/dev/null || true; } | wc -l
  }
  good='sctp.checksum.status == 1'
  all=$(count "sctp")
  bad=$(count "sctp && !($good)")
  card=$(count "sctp && udp.srcport == $port")
  ddp=$(count "iwarp_ddp && $good")
  adapt=$(count "sctp.adaptation_layer_indication == 1")
  echo "net_run: tshark decoded $all SCTP packets in $out/net.pcap: $bad with a bad CRC32c, $card sent by the card" \
       "(CRC32c computed on the card), $ddp with DDP segments, $adapt INIT / INIT-ACK with the DDP indication"
  [[ "$all" -gt 0 && "$bad" -eq 0 && "$card" -gt 0 && "$ddp" -gt 0 && "$adapt" -ge 2 ]] ||
    fail "the capture does not hold what the run moved"
fi
msgs=$(sed -n 's/^rnic-sink: [0-9.:]*: PASS: \([0-9]*\) messages.*/\1/p' "$out/sink.log")
[[ -n "$msgs" ]] || fail "no PASS line from rnic-sink in $out/sink.log"
echo "net_run: PASS: $msgs messages from rnic-peer over SCTP in UDP (loss $loss, dup $dup, reorder $reorder)," \
     "placed by the card${xrt:+ (through XRT hw_emu, bank $xrt)}, every byte and completion checked"
