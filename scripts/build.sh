#!/usr/bin/env bash
# Configures and builds one CMake preset (default: "default", i.e. Release). Used by run.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-${RNIC_PRESET:-default}}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
