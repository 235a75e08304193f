#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regress.SlurmMatchesLocal: scripts/regress.py on a one-node Slurm cluster started here (local_slurm.sh,
# in a fresh folder, on free ports) against the same plan run locally.
#   regress_test.sh <build-dir>
# 1. The small plan (selftest_plans.json: a few quick tests, 4 seeds each) with a failing seed planted in
#    the probe runs locally (2 shards) and with --slurm (3 array tasks): the two results.json name the same
#    units with the same outcomes; every unit but the planted one passed; the planted one is reported in the
#    summary and the JUnit XML with its replay command, and that command fails at that seed and passes at
#    the next.
# 2. The probe kills its shard at one seed: the shard is reported dead, the test that ran in it and the
#    units after it are errors naming the shard, the other shards' units passed.
# The cluster's jobs are cancelled and its daemons stopped, by PID, however the test ends.
# Exit 77 (skipped) when not root: the daemons run as root.
set -euo pipefail
build=$(cd "${1:?usage: regress_test.sh <build-dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: the one-node cluster runs its daemons as root"
  exit 77
fi
work=$(mktemp -d /tmp/rnic-regress-test.XXXXXX)
cleanup() {
  "$here/local_slurm.sh" stop "$work/cluster" || true
  [[ -n "${KEEP:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

eval "$("$here/local_slurm.sh" start "$work/cluster")"
echo "cluster up: $SLURM_CONF"

regress=(python3 "$root/scripts/regress.py" run --plans "$here/selftest_plans.json" --plan quick
         --build-dir "$build")
# Seeds 1000..1003; 1002 is planted to fail.
export RNIC_REGRESS_PROBE_FAIL_SEED=1002
set +e
"${regress[@]}" --jobs 2 --out "$work/local" >"$work/local.txt" 2>&1
rc_local=$?
"${regress[@]}" --slurm --shards 3 --time 5 --out "$work/slurm" >"$work/slurm.txt" 2>&1
rc_slurm=$?
set -e
cat "$work/slurm.txt"
[[ $rc_local -eq 1 ]] || { cat "$work/local.txt"; fail "the local run exited $rc_local, not 1 (one planted failure)"; }
[[ $rc_slurm -eq 1 ]] || fail "the Slurm run exited $rc_slurm, not 1 (one planted failure)"
grep -q "Slurm job" "$work/slurm.txt" || fail "the Slurm run did not submit a job"
python3 "$root/scripts/regress.py" compare "$work/local/results.json" "$work/slurm/results.json" ||
  fail "the Slurm run's results differ from the local run's"

python3 - "$work/slurm" "$build" <<'PY'
import json, sys, xml.etree.ElementTree as ET
run, build = sys.argv[1], sys.argv[2]
res = json.load(open(f"{run}/results.json"))["results"]
def fail(msg):
    print("FAIL:", msg); sys.exit(1)
probe = [r for r in res if r["test"] == "RegressProbe.Seeded"]
if sorted(r["seed"] for r in probe if r["seed"] is not None) != [1000, 1001, 1002, 1003]:
    fail(f"the probe's sweep is not seeds 1000..1003: {[r['seed'] for r in probe]}")
bad = [r for r in res if r["status"] != "passed"]
if [(r["test"], r["seed"], r["status"]) for r in bad] != [("RegressProbe.Seeded", 1002, "failed")]:
    fail(f"expected exactly the planted failure, got {[(r['test'], r['seed'], r['status']) for r in bad]}")
swept = {r["test"] for r in res if r["seed"] is not None}
if "RegressProbe.Deterministic" in swept:
    fail("a test that never printed a seed was swept")
if len(swept) < 3:
    fail(f"only {sorted(swept)} were swept; the plan has more randomised tests")
want = "RNIC_TEST_SEED=1002 " 
if want not in bad[0]["replay"] or "--gtest_filter=RegressProbe.Seeded" not in bad[0]["replay"]:
    fail(f"replay command {bad[0]['replay']!r}")
summary = open(f"{run}/summary.txt").read()
if "FAILED: RegressProbe.Seeded [seed=1002]" not in summary or bad[0]["replay"] not in summary:
    fail("the summary does not name the planted failure and its replay command")
cases = ET.parse(f"{run}/report.xml").getroot().iter("testcase")
failed = [c.get("name") for c in cases if c.find("failure") is not None]
if failed != ["RegressProbe.Seeded [seed=1002]"]:
    fail(f"JUnit failures {failed}")
print(f"ok: {len(res)} units, {len(swept)} randomised tests swept, the planted failure reported with its replay")
open(f"{run}/replay.sh", "w").write(bad[0]["replay"] + "\n")
PY
# The replay command reproduces the failure on one machine, and only at that seed.
if bash "$work/slurm/replay.sh" >"$work/replay.txt" 2>&1; then
  fail "the replay command passed: $(cat "$work/slurm/replay.sh")"
fi
sed 's/RNIC_TEST_SEED=1002/RNIC_TEST_SEED=1003/' "$work/slurm/replay.sh" >"$work/replay_ok.sh"
bash "$work/replay_ok.sh" >/dev/null 2>&1 || fail "the probe failed at a seed that was not planted"
echo "ok: the replay command fails at seed 1002 and passes at 1003"

# A shard that dies: the probe kills its shard runner at seed 1001.
unset RNIC_REGRESS_PROBE_FAIL_SEED
export RNIC_REGRESS_PROBE_KILL_SEED=1001
set +e
"${regress[@]}" --slurm --shards 3 --time 5 --out "$work/dead" >"$work/dead.txt" 2>&1
rc_dead=$?
set -e
cat "$work/dead.txt"
[[ $rc_dead -eq 1 ]] || fail "a run with a dead shard exited $rc_dead, not 1"
python3 - "$work/dead" <<'PY'
import json, sys
data = json.load(open(f"{sys.argv[1]}/results.json"))
res, dead = data["results"], data["dead_shards"]
def fail(msg):
    print("FAIL:", msg); sys.exit(1)
if len(dead) != 1:
    fail(f"expected one dead shard, got {dead}")
k = dead[0][0]
killed = [r for r in res if r["test"] == "RegressProbe.Seeded" and r["seed"] == 1001]
if killed[0]["status"] != "error" or "while this test ran" not in killed[0]["message"]:
    fail(f"the unit running when the shard died: {killed[0]}")
for r in res:
    if r["shard"] != k and r["status"] != "passed":
        fail(f"a unit of a live shard did not pass: {r}")
    if r["shard"] == k and r["status"] not in ("passed", "error"):
        fail(f"a unit of the dead shard is {r['status']}: {r}")
    if r["status"] == "error" and f"shard {k}" not in r["message"]:
        fail(f"an error that does not name its shard: {r}")
summary = open(f"{sys.argv[1]}/summary.txt").read()
if f"shard {k}: " not in summary:
    fail("the summary does not report the dead shard")
print(f"ok: shard {k} reported as '{dead[0][1]}', {sum(r['status'] == 'error' for r in res)} units as errors")
PY
echo "PASS"
