#!/usr/bin/env bash
# The main job: install what is missing, build, and move real DDP traffic through the project.
#
# Today: a software Data Source segments ULP messages (RFC 5041 5.2), frames them as DDP Segment
# Chunks over SCTP (RFC 5043), writes them to a pcap, delivers them out of order to the reference
# Data Sink, verifies every placed byte and completion, injects one invalid segment per RFC 5041 7.2
# error, and has tshark decode the capture. Extra arguments go to rnic-demo (try --help).
# Environment: RNIC_PRESET selects a CMake preset (default, debug, asan).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${RNIC_PRESET:-default}

./scripts/deps.sh
./scripts/build.sh "$preset"

build=build/$preset
pcap=$build/rnic-demo.pcap
log=$build/rnic-demo.log
"$build/host/demo/rnic-demo" --pcap "$pcap" "$@" | tee "$log"
sent=$(sed -n 's/.*wrote \([0-9]*\) SCTP packets.*/\1/p' "$log")

# An independent reader of what went on the wire: Wireshark's own SCTP and iWARP DDP dissectors.
ddp=$(tshark -r "$pcap" -X lua_script:tb/interop/ddp_sctp.lua -o sctp.checksum:CRC-32C \
        -Y 'iwarp_ddp && sctp.checksum.status == 1' -T fields -e frame.number 2>/dev/null | wc -l)
adapt=$(tshark -r "$pcap" -Y 'sctp.adaptation_layer_indication == 1' -T fields -e frame.number 2>/dev/null | wc -l)
echo "run: tshark decoded $ddp DDP segments with good SCTP CRC32c and $adapt INIT with the DDP adaptation indication in $pcap"
if [[ "$ddp" -ne $((sent - 1)) || "$adapt" -ne 1 ]]; then
  echo "run: FAILED: the capture holds $((sent - 1)) DDP segments and 1 INIT" >&2
  exit 1
fi
