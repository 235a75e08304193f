#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a regression plan (tb/regress/plans.json) here or on a Slurm cluster; docs/testing.md "Running regressions".
#   ./scripts/regress.sh --plan sweep --jobs 2              # locally, 2 shards at once
#   ./scripts/regress.sh --plan nightly --slurm --partition batch --time 120
#   ./scripts/regress.sh --plan sweep --seeds 4 --base-seed 7 --out /shared/runs/today
# Builds the preset first (--preset, default 'default'; --no-build to use the build folder as it is), then
# runs scripts/regress.py with the remaining options (scripts/regress.py run --help lists them). The build
# folder and --out must be visible at the same path on every node of the cluster.
# Exit status 0 when every unit passed, 1 when one failed or did not run, 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${RNIC_PRESET:-default}
build=1
rest=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --preset) [[ $# -ge 2 ]] || { echo "regress: --preset needs a name" >&2; exit 2; }; preset=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) rest+=("$1"); shift ;;
  esac
done
if [[ $build -eq 1 ]]; then
  ./scripts/deps.sh
  ./scripts/build.sh "$preset" --log "build/$preset/regress-build.log"
fi
has_build_dir=0
for a in "${rest[@]}"; do [[ "$a" == --build-dir || "$a" == --build-dir=* ]] && has_build_dir=1; done
[[ $has_build_dir -eq 1 ]] || rest+=(--build-dir "build/$preset")
exec python3 scripts/regress.py run "${rest[@]}"
