#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One run of the card on the network (docs/network.md): rnic-sim's RTL card with its network port on
# UDP, rnic-sink (the driver and usrsctp over the card's packet rings) on the card's side, rnic-peer
# (usrsctp in UDP, RFC 6951, the Data Source) sending the demo ULP's tagged and untagged messages. The
# card places them; rnic-sink checks every byte and completion. Then tshark decodes rnic-peer's capture:
# SCTP over UDP, DDP through tb/interop/ddp_sctp.lua, every packet's CRC32c good (the card computes
# those it sends), the DDP indication in INIT and INIT-ACK. Uses what is built (run.sh builds it).
# --card-to-card: the peer is a second card (issue 35, docs/transmit.md): another rnic-sim on --peer-port
# with rnic-peer --device driving it, every payload byte read by that card's gather from registered
# memory; the capture is then the receiving card's port (rnic-sim --net-pcap), and tshark also checks
# that the distinct DDP segments the sending card put on the wire are the plan's, in number and bytes.
#   scripts/net_run.sh [--build DIR] [--out DIR] [--messages N] [--max-message B] [--streams N]
#                      [--seed N] [--loss P] [--dup P] [--reorder P] [--port P] [--peer-port P]
#                      [--no-tshark] [--xrt host|ddr] [--card-to-card]
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
c2c=0
usage() { sed -n '13,15p' "$0" | sed 's/^# \{0,1\}//'; }
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
    --card-to-card) c2c=1; shift ;;
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
peer_sim_pid=
sock=$(mktemp -u "${TMPDIR:-/tmp}/rnic-sim.XXXXXX.sock")
peer_sock=$(mktemp -u "${TMPDIR:-/tmp}/rnic-sim-peer.XXXXXX.sock")
cleanup() {
  if [[ -n "$sink_pid" ]]; then
    if [[ -n "$xrt" ]]; then  # xrt_emu.sh: TERM ends its session and lets it clean up
      kill -TERM "$sink_pid" 2>/dev/null || true
      wait "$sink_pid" 2>/dev/null || true
    else
      kill -KILL "$sink_pid" 2>/dev/null || true
    fi
  fi
  for p in "$sim_pid" "$peer_sim_pid"; do
    if [[ -n "$p" ]]; then
      kill -TERM "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  rm -f "$sock" "$peer_sock"
}
trap cleanup EXIT

impair=(--net-loss "$loss" --net-dup "$dup" --net-reorder "$reorder")
net_args=(--udp-port "$port" "${impair[@]}" --net-seed "$seed")
[[ "$c2c" -eq 0 ]] || net_args+=(--net-pcap "$out/net.pcap")
rm -f "$out/net.pcap"
# start_sim <socket> <pid variable> <log> <args...>: an rnic-sim, once it listens on its socket.
start_sim() {
  local s=$1 var=$2 log=$3
  shift 3
  "$sim" --socket "$s" --model rtl "$@" >"$log" 2>&1 &
  printf -v "$var" '%s' "$!"
  for _ in $(seq 1 300); do
    [[ -S "$s" ]] && return 0
    kill -0 "${!var}" 2>/dev/null || fail "rnic-sim $* exited at start (see $log; port in use?)"
    sleep 0.1
  done
  fail "rnic-sim did not open $s within 30 s (see $log)"
}
if [[ "$c2c" -eq 1 ]]; then
  [[ -z "$xrt" ]] || fail "--card-to-card runs two rnic-sim cards, not XRT hw_emu"
  start_sim "$peer_sock" peer_sim_pid "$out/peer_sim.log" --udp-port "$peer_port" "${impair[@]}" \
    --net-seed "$((seed + 1))"
fi
if [[ -z "$xrt" ]]; then
  start_sim "$sock" sim_pid "$out/sim.log" "${net_args[@]}"
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
if [[ "$c2c" -eq 1 ]]; then
  peer_side=(--device "sim:$peer_sock")
else
  peer_side=(--local-port "$peer_port" --pcap "$out/net.pcap")
fi
"$peer" --connect "127.0.0.1:$port" "${peer_side[@]}" --messages "$messages" --max-message "$max_message" \
  --streams "$streams" --seed "$seed" --timeout-ms 300000 --json "$out/peer.json" >"$out/peer.log" 2>&1 ||
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
if [[ -n "$peer_sim_pid" ]]; then
  kill -TERM "$peer_sim_pid"
  status=0
  wait "$peer_sim_pid" || status=$?
  peer_sim_pid=
  [[ "$status" -eq 0 ]] || fail "the peer's rnic-sim exited with status $status on SIGTERM (see $out/peer_sim.log)"
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
  if [[ "$c2c" -eq 1 ]]; then
    # The sending card's DDP segments, each (SCTP stream, DDP-SSN) once (the path duplicates, SCTP
    # retransmits): as many as the plan has, and its payload bytes.
    read -r segs bytes < <({ tshark -r "$out/net.pcap" -d "udp.port==$port,sctp" \
      -X lua_script:"$root/tb/interop/ddp_sctp.lua" -o sctp.checksum:CRC-32C \
      -Y "ddp_sctp && $good && udp.srcport == $peer_port" -T fields -e ddp_sctp.sid -e ddp_sctp.ssn \
      -e ddp_sctp.payload_length 2>/dev/null || true; } |
      awk -F'\t' '{ n = split($1, sid, ","); split($2, ssn, ","); split($3, len, ",");
                    for (i = 1; i <= n; ++i) { k = sid[i] "/" ssn[i]; if (!(k in seen)) {
                      seen[k] = 1; c++; b += len[i] } } }
                  END { printf "%d %d\n", c, b }')
    want_segs=$(sed -n 's/.*"segments": \([0-9]*\).*/\1/p' "$out/peer.json" | head -1)
    want_bytes=$(sed -n 's/.*"bytes": \([0-9]*\).*/\1/p' "$out/peer.json" | head -1)
    echo "net_run: tshark: the sending card put $segs distinct DDP segments ($bytes payload bytes) on the wire;" \
         "the plan has $want_segs ($want_bytes bytes)"
    [[ "$segs" == "$want_segs" && "$bytes" == "$want_bytes" ]] ||
      fail "the sending card's DDP segments in the capture are not the plan's"
  fi
fi
msgs=$(sed -n 's/^rnic-sink: [0-9.:]*: PASS: \([0-9]*\) messages.*/\1/p' "$out/sink.log")
[[ -n "$msgs" ]] || fail "no PASS line from rnic-sink in $out/sink.log"
if [[ "$c2c" -eq 1 ]]; then
  copied=$(sed -n 's/.*"segments_by_copy": \([0-9]*\).*/\1/p' "$out/peer.json" | head -1)
  [[ "$copied" == 0 ]] || fail "rnic-peer sent $copied segments with their payload through the host"
  echo "net_run: PASS: $msgs messages card to card (the sending card's gather read every payload byte, none" \
       "went through its host) over SCTP in UDP (loss $loss, dup $dup, reorder $reorder)," \
       "placed by the receiving card, every byte and completion checked"
else
  echo "net_run: PASS: $msgs messages from rnic-peer over SCTP in UDP (loss $loss, dup $dup, reorder $reorder)," \
       "placed by the card${xrt:+ (through XRT hw_emu, bank $xrt)}, every byte and completion checked"
fi
