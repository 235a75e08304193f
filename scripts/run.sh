#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: install what is missing, build, and move real DDP traffic through the RTL.
#
# After the Debian packages and a build of only what it runs:
# 1. rnic-demo (seconds): the software Data Source against the reference Data Sink (driver/model), with
#    its capture decoded by tshark: checks the wire side before the card is involved.
# 2. rnic-sim (rnic_kernel as a simulated card: the Verilated RTL, then the SystemC-HLS model) starts on
#    a temporary socket and captures every segment it is given; rnicctl shows the card; rnic-run (the driver: STags,
#    streams, queues, posted buffers) injects random tagged and untagged messages out of order,
#    verifies every placed byte and completion, injects one invalid segment per RFC 5041 7.2 error and
#    checks the reported type/code; rnicctl prints the counters; the simulator stops (SIGTERM) and
#    tshark decodes its capture: the DDP segments with a good SCTP CRC32c must be exactly the ones
#    rnic-run injected.
#    Then the same rnic-run through the real XRT runtime: XRT's hardware emulation starts rnic-sim and the
#    driver drives it through its XRT backend (scripts/xrt_emu.sh).
# 3. The card on the network (issue 14): rnic-sim's RTL card with its network port on UDP 127.0.0.1:9899
#    (RFC 6951; RNIC_NET_PORT changes it) and loss, duplication and reordering on the path; rnic-sink
#    (the driver, the packet rings, usrsctp over them) on the card's side; rnic-peer (usrsctp in UDP,
#    the Data Source) sends tagged and untagged messages. The card places them; rnic-sink checks every
#    byte and completion. tshark decodes rnic-peer's capture: SCTP over UDP, DDP through the project's
#    Lua, every packet's CRC32c good (the card computes those it sends). scripts/net_run.sh runs it.
# 6. Card to card (issue 35): a second rnic-sim card sends the same kind of run from its own host process
#    (rnic-peer --device): usrsctp over its rings, every payload byte read by its transmit gather from
#    registered memory; loss, duplication and reordering on the path; rnic-sink checks every byte and
#    completion on the receiving card; tshark decodes the receiving card's port (every CRC32c good, the
#    sending card's distinct DDP segments exactly the plan's). scripts/net_run.sh --card-to-card.
# Extra arguments go to rnic-run (try --help). Environment: RNIC_PRESET selects a CMake preset
# (default, debug, asan). Step 2 runs twice: on the Verilated RTL and on the SystemC-HLS model of the
# pipeline (rtl/hls, rnic-sim --model systemc); RNIC_SIM_MODEL=rtl or =systemc runs only that one.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${RNIC_PRESET:-default}
model=${RNIC_SIM_MODEL:-}
[[ -z "$model" || "$model" == rtl || "$model" == systemc ]] || {
  echo "run: RNIC_SIM_MODEL must be rtl or systemc" >&2
  exit 2
}

build=build/$preset
fail() { echo "run: FAILED: $*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }
t_start=$SECONDS

step "1/6 Debian packages"
./scripts/deps.sh
step "2/6 build what the job runs: rnic-sim (the Verilated kernel and the SystemC model), rnic-run, rnicctl, rnic-demo,"\
     "rnic-peer, rnic-sink"
mkdir -p "$build"
./scripts/build.sh "$preset" --log "$build/run-build.log" \
  --target rnic-sim --target rnic-run --target rnicctl --target rnic-demo --target rnic-peer --target rnic-sink

# An independent reader of what went on the wire: Wireshark's own SCTP and iWARP DDP dissectors.
# tshark_count <pcap> <filter>: how many packets match the display filter.
#   iwarp_ddp: decoded by Wireshark's iWARP DDP dissector; ddp_sctp: any DDP Segment Chunk (PPID 16),
#   malformed DDP segments included (tb/interop/ddp_sctp.lua).
tshark_count() {
  tshark -r "$1" -X lua_script:tb/interop/ddp_sctp.lua -o sctp.checksum:CRC-32C -Y "$2" \
    -T fields -e frame.number 2>/dev/null | wc -l
}
good_crc='sctp.checksum.status == 1'
adapt_init='sctp.adaptation_layer_indication == 1'

# ---- 3. The wire side: the software Data Source against the software Data Sink -------------------------
step "3/6 the wire side: rnic-demo (software Data Source and Data Sink, capture decoded by tshark)"
demo_pcap=$build/rnic-demo.pcap
demo_log=$build/rnic-demo.log
"$build/host/demo/rnic-demo" --pcap "$demo_pcap" >"$demo_log" 2>&1 || { cat "$demo_log" >&2; fail "rnic-demo (log: $demo_log)"; }
grep -E '^rnic-demo: (data|PASS)' "$demo_log" || true
sent=$(sed -n 's/.*wrote \([0-9]*\) SCTP packets.*/\1/p' "$demo_log")
ddp=$(tshark_count "$demo_pcap" "iwarp_ddp && $good_crc")
adapt=$(tshark_count "$demo_pcap" "$adapt_init")
echo "run: tshark decoded $ddp DDP segments with good SCTP CRC32c and $adapt INIT with the DDP adaptation indication in $demo_pcap"
[[ "$ddp" -eq $((sent - 1)) && "$adapt" -eq 1 ]] || fail "the capture holds $((sent - 1)) DDP segments and 1 INIT"

# ---- 4. The simulated card through the driver ----------------------------------------------------------
step "4/6 the card: rnic-sim with the driver loaded against it (rnic-run), capture decoded by tshark, on the" \
     "Verilated RTL and on the SystemC-HLS model"
sim=$build/sim/rnic-sim
rnicctl=$build/host/rnicctl/rnicctl
sim_pid=
sock=
stop_sim() {  # SIGTERM, then the simulator's own exit status
  local pid=$sim_pid status=0
  sim_pid=
  [[ -n "$pid" ]] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || status=$?
  return "$status"
}
trap 'stop_sim || true; [[ -z "$sock" ]] || rm -f "$sock"' EXIT

# One run of the card on implementation $1 (rtl or systemc); sets injected and data.
run_card() {
  local m=$1
  local pcap=$build/rnic-run.$m.pcap log=$build/rnic-run.$m.log sim_log=$build/rnic-sim.$m.log
  sock=$(mktemp -u "${TMPDIR:-/tmp}/rnic-sim.XXXXXX.sock")
  rm -f "$pcap"
  "$sim" --socket "$sock" --pcap "$pcap" --model "$m" >"$sim_log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 1 300); do
    [[ -S "$sock" ]] && break
    kill -0 "$sim_pid" 2>/dev/null || fail "rnic-sim exited at start (see $sim_log)"
    sleep 0.1
  done
  [[ -S "$sock" ]] || fail "rnic-sim did not open $sock within 30 s (see $sim_log)"
  export RNIC_DEVICE=sim:$sock
  echo "run: rnic-sim --model $m (pid $sim_pid) on $sock, capture $pcap"

  "$rnicctl" info
  "$build/host/run/rnic-run" "${rnic_run_args[@]}" | tee "$log"
  "$rnicctl" counters >"$build/rnic-counters.$m.txt" || fail "rnicctl counters"
  echo "run: the card's counters: $build/rnic-counters.$m.txt (rnicctl counters)"
  stop_sim || fail "rnic-sim exited with status $? on SIGTERM (see $sim_log)"
  rm -f "$sock"

  # rnic-run says: "injected <all> segments (<data> data, <n> invalid or after an error)".
  injected=$(sed -n 's/^rnic-run: injected \([0-9]*\) segments.*/\1/p' "$log")
  data=$(sed -n 's/^rnic-run: injected [0-9]* segments (\([0-9]*\) data.*/\1/p' "$log")
  [[ -n "$injected" && -n "$data" ]] || fail "rnic-run did not say how many segments it injected"
  local chunks ddp
  chunks=$(tshark_count "$pcap" "ddp_sctp && $good_crc")
  ddp=$(tshark_count "$pcap" "iwarp_ddp && $good_crc")
  echo "run: tshark found $chunks DDP Segment Chunks with good SCTP CRC32c in $pcap ($ddp decoded as iWARP DDP);" \
       "rnic-run injected $injected ($data data segments)"
  [[ "$chunks" -eq "$injected" ]] || fail "the capture holds $chunks DDP segments, rnic-run injected $injected"
  [[ "$ddp" -ge "$data" ]] || fail "Wireshark decoded $ddp DDP segments, fewer than the $data data segments"
}

rnic_run_args=("$@")
models=(rtl systemc)
[[ -z "${RNIC_SIM_MODEL:-}" ]] || models=("$model")
cards=""
for m in "${models[@]}"; do
  printf '\n-- the card on %s\n' "$m"
  run_card "$m"
  cards+="${cards:+, }$injected segments on $m"
done

# The same card step through the real XRT runtime: Debian's XRT 2.13 loads the project's xclbin in
# hardware emulation, starts rnic-sim (the RTL) and the driver runs through its XRT backend
# (docs/xrt-backend.md, "hw_emu"; XRT itself waits about 10 s while loading).
printf '\n-- the card through XRT (hw_emu: XRT starts rnic-sim, the driver uses its XRT backend)\n'
xrt_log=$build/rnic-run.xrt.log
./scripts/xrt_emu.sh --build "$build" -- "$build/host/run/rnic-run" "${rnic_run_args[@]}" 2>&1 |
  grep -v '^INFO: \[HW-EMU' | tee "$xrt_log" || fail "rnic-run through XRT hw_emu (see $xrt_log)"
grep -q '^rnic-run: PASS' "$xrt_log" || fail "rnic-run through XRT hw_emu did not pass (see $xrt_log)"
xrt_injected=$(sed -n 's/^rnic-run: injected \([0-9]*\) segments.*/\1/p' "$xrt_log")
cards+=", $xrt_injected segments on rtl under XRT hw_emu"

# ---- 5. The card on the network: rnic-peer -> UDP -> rnic-sim's network port, rnic-sink on the host -------
step "5/6 the card on the network: rnic-peer (usrsctp in UDP, RFC 6951) -> rnic-sim's network port (the RTL card," \
     "3% loss, 2% duplication, 5% reordering both ways) <- rnic-sink (the driver, usrsctp over the packet rings)"
./scripts/net_run.sh --build "$build" --out "$build/net" --port "${RNIC_NET_PORT:-9899}" \
  --peer-port "${RNIC_PEER_PORT:-9898}" --messages 400 --loss 0.03 --dup 0.02 --reorder 0.05 | tee "$build/net.log" ||
  fail "the card on the network (logs in $build/net)"
net_msgs=$(sed -n 's/^net_run: PASS: \([0-9]*\) messages.*/\1/p' "$build/net.log")
[[ -n "$net_msgs" ]] || fail "no message count in net_run's PASS line ($build/net.log)"

# ---- 6. Card to card: rnic-peer --device on a second rnic-sim -> UDP -> the card, rnic-sink on its host -----
step "6/6 card to card: rnic-peer --device (a second RTL card sending through its transmit gather) -> UDP (3% loss," \
     "2% duplication, 5% reordering both ways) -> the card <- rnic-sink"
./scripts/net_run.sh --build "$build" --out "$build/c2c" --card-to-card --port "${RNIC_NET_PORT:-9899}" \
  --peer-port "${RNIC_PEER_PORT:-9898}" --messages 400 --loss 0.03 --dup 0.02 --reorder 0.05 --seed 2 |
  tee "$build/c2c.log" || fail "card to card (logs in $build/c2c)"
c2c_msgs=$(sed -n 's/^net_run: PASS: \([0-9]*\) messages card to card.*/\1/p' "$build/c2c.log")
[[ -n "$c2c_msgs" ]] || fail "no message count in net_run's card-to-card PASS line ($build/c2c.log)"

echo
echo "run: PASS in $((SECONDS - t_start)) s: the wire side ($sent packets), the card ($cards through the" \
     "driver, every byte and completion checked, every RFC 5041 7.2 error reported as expected), the card on" \
     "the network ($net_msgs messages from rnic-peer over SCTP in UDP with loss, placed by the card) and card to" \
     "card ($c2c_msgs messages sent by one card's gather, placed by the other)"
