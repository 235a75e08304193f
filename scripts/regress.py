#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a regression plan (tb/regress/plans.json) on this machine or on a Slurm cluster.

A plan names tiers (CTest selections: the default run, slow, lockstep, formal, ...) and seed sweeps (every
randomised test of some tiers run again with N seeds from a base seed). The plan becomes units (one test,
at most one seed), the units are cut into shards balanced by each test's measured time, and each shard runs
its units one after another: as local processes (--jobs N) or as the tasks of one `sbatch --array`
(--slurm), every task running from the shared build folder. The shards' results merge into one JUnit XML,
one results.json and one summary; every failure comes with the command that replays it on one machine.
A shard that dies or runs out of time is reported as such: each of its units that did not finish is an
error that names the shard.

Subcommands: run (the default: plan, shard, run, merge), shard (one shard's units; what a Slurm task runs),
merge (the report of a run folder again), compare (two results.json name the same units with the same
outcomes). scripts/regress.sh is the front end (it builds first); docs/testing.md "Running regressions".
"""
import argparse
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED_LINE = re.compile(r"\[   SEED   \] RNIC_TEST_SEED=(\d+)")
DEFAULT_COST = 5.0  # seconds, for a test never timed


def die(msg, code=2):
    print(f"regress: {msg}", file=sys.stderr)
    sys.exit(code)


# ---------------------------------------------------------------------------------------------------
# The plan


def load_plans(path):
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        die(f"cannot read the plan file {path}: {e}")
    if "tiers" not in data or "plans" not in data:
        die(f"{path}: a plan file has 'tiers' and 'plans'")
    return data


def ctest_tests(build, selection):
    """The tests a tier selects, as CTest would run them: name, command, working folder, environment,
    timeout, labels and pass/fail rules (ctest --show-only=json-v1 with the tier's filters)."""
    args = ["ctest", "--test-dir", str(build), "--show-only=json-v1"]
    for key, flag in (("label", "-L"), ("label_exclude", "-LE"), ("name", "-R"), ("name_exclude", "-E")):
        if selection.get(key):
            args += [flag, selection[key]]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        die(f"ctest could not list the tests of {build}: {out.stderr.strip()}")
    tests = []
    for t in json.loads(out.stdout).get("tests", []):
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if props.get("DISABLED"):
            continue
        if "command" not in t:
            continue  # a test whose program is missing: ctest reports it; so do we (below)
        tests.append({
            "name": t["name"],
            "command": t["command"],
            "cwd": props.get("WORKING_DIRECTORY", str(build)),
            "env": props.get("ENVIRONMENT", []),
            "timeout": float(props.get("TIMEOUT", 0) or 0),
            "labels": props.get("LABELS", []),
            "will_fail": bool(props.get("WILL_FAIL", False)),
            "skip_rc": props.get("SKIP_RETURN_CODE"),
            "skip_re": props.get("SKIP_REGULAR_EXPRESSION", []),
            "pass_re": props.get("PASS_REGULAR_EXPRESSION", []),
            "fail_re": props.get("FAIL_REGULAR_EXPRESSION", []),
        })
    return tests


def measured_costs(build):
    """Each test's measured time: regress's own record first, then CTest's (CTestCostData.txt)."""
    costs = {}
    ctest_costs = Path(build) / "Testing" / "Temporary" / "CTestCostData.txt"
    if ctest_costs.exists():
        for line in ctest_costs.read_text(errors="replace").splitlines():
            if line.strip() == "---":
                break
            parts = line.rsplit(" ", 2)
            if len(parts) == 3:
                try:
                    costs[parts[0]] = float(parts[2])
                except ValueError:
                    pass
    record = Path(build) / "regress" / "record.json"
    if record.exists():
        try:
            costs.update(json.loads(record.read_text()).get("cost", {}))
        except ValueError:
            pass
    return costs


def known_seeded(build):
    """Tests known to be randomised (they printed RNIC_TEST_SEED): regress's record and CTest's last log."""
    seeded = set()
    record = Path(build) / "regress" / "record.json"
    if record.exists():
        try:
            seeded.update(json.loads(record.read_text()).get("seeded", []))
        except ValueError:
            pass
    for log in sorted((Path(build) / "Testing" / "Temporary").glob("LastTest*.log")):
        name = None
        for line in log.read_text(errors="replace").splitlines():
            m = re.match(r"\d+/\d+ Test: (.*)$", line)
            if m:
                name = m.group(1).strip()
            elif name and SEED_LINE.search(line):
                seeded.add(name)
    return seeded


def update_record(build, results):
    path = Path(build) / "regress" / "record.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    rec = {"cost": {}, "seeded": []}
    if path.exists():
        try:
            rec = json.loads(path.read_text())
        except ValueError:
            pass
    seeded = set(rec.get("seeded", []))
    for r in results:
        if r["status"] in ("passed", "failed") and r["seed"] is None:
            rec.setdefault("cost", {})[r["test"]] = round(r["time"], 3)
        if r.get("printed_seed"):
            seeded.add(r["test"])
    rec["seeded"] = sorted(seeded)
    path.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")


def make_units(plan_name, plans, build, seeds_override, base_override):
    if plan_name not in plans["plans"]:
        die(f"no plan '{plan_name}' (plans: {', '.join(sorted(plans['plans']))})")
    plan = plans["plans"][plan_name]
    sweep = plan.get("sweep", {})
    n_seeds = sweep.get("seeds", 0) if seeds_override is None else seeds_override
    base = sweep.get("base", 1) if base_override is None else base_override
    sweep_tiers = set(sweep.get("tiers", plan.get("tiers", [])))
    seeded = known_seeded(build)
    units, unseen = [], []
    for tier in plan.get("tiers", []):
        if tier not in plans["tiers"]:
            die(f"plan '{plan_name}' names tier '{tier}', which the plan file does not define")
        tests = ctest_tests(build, plans["tiers"][tier])
        if not tests:
            die(f"tier '{tier}' selects no test in {build}")
        for t in tests:
            units.append({"tier": tier, "seed": None, **t})
            if n_seeds and tier in sweep_tiers:
                if t["name"] in seeded:
                    units += [{"tier": tier, "seed": base + i, **t} for i in range(n_seeds)]
                else:
                    unseen.append((tier, t))
    return units, unseen, n_seeds, base


def shard_units(units, costs, n_shards):
    """Longest-processing-time-first: each unit, costliest first, to the least loaded shard."""
    shards = [[] for _ in range(n_shards)]
    load = [0.0] * n_shards
    order = sorted(range(len(units)), key=lambda i: -costs.get(units[i]["name"], DEFAULT_COST))
    for i in order:
        k = min(range(n_shards), key=lambda s: load[s])
        units[i]["id"] = i
        shards[k].append(units[i])
        load[k] += costs.get(units[i]["name"], DEFAULT_COST)
    return shards, load


# ---------------------------------------------------------------------------------------------------
# Running units


def replay_command(unit):
    env = f"RNIC_TEST_SEED={unit['seed']} " if unit["seed"] is not None else ""
    cmd = " ".join(shlex.quote(c) for c in unit["command"])
    return f"cd {shlex.quote(unit['cwd'])} && {env}{cmd}"


def run_unit(unit, log_path, default_timeout):
    env = dict(os.environ)
    for kv in unit["env"]:
        k, _, v = kv.partition("=")
        env[k] = v
    if unit["seed"] is not None:
        env["RNIC_TEST_SEED"] = str(unit["seed"])
    timeout = unit["timeout"] or default_timeout
    start = time.monotonic()
    status = "passed"
    with open(log_path, "wb") as log:
        try:
            p = subprocess.Popen(unit["command"], cwd=unit["cwd"], env=env, stdout=log, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as e:
            log.write(f"regress: cannot start {unit['command'][0]}: {e}\n".encode())
            return {"status": "failed", "time": 0.0, "message": f"cannot start: {e}"}
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
    elapsed = time.monotonic() - start
    out = Path(log_path).read_text(errors="replace")
    message = ""
    if rc is None:
        status, message = "failed", f"timed out after {timeout:.0f} s"
    elif unit["skip_rc"] is not None and rc == int(unit["skip_rc"]):
        status = "skipped"
    elif any(re.search(r, out) for r in unit["skip_re"]):
        status = "skipped"
    else:
        ok = rc == 0
        if unit["pass_re"]:
            ok = any(re.search(r, out) for r in unit["pass_re"])
        if any(re.search(r, out) for r in unit["fail_re"]):
            ok = False
        if unit["will_fail"]:
            ok = not ok
        if not ok:
            status = "failed"
            message = f"exit status {rc}" if rc >= 0 else f"killed by signal {-rc}"
    printed = SEED_LINE.search(out)
    return {"status": status, "time": elapsed, "message": message, "printed_seed": bool(printed)}


def cmd_shard(args):
    run_dir = Path(args.run_dir)
    shards = json.loads((run_dir / "shards.json").read_text())
    k = args.shard
    if k < 0 or k >= len(shards["shards"]):
        die(f"shard {k} is not one of the {len(shards['shards'])} shards of {run_dir}")
    res_path = run_dir / "results" / f"shard-{k}.jsonl"
    logs = run_dir / "logs"
    logs.mkdir(exist_ok=True)
    with open(res_path, "a") as res:
        def emit(obj):
            res.write(json.dumps(obj) + "\n")
            res.flush()
            os.fsync(res.fileno())
        emit({"event": "start", "host": socket.gethostname(), "pid": os.getpid(), "time": time.time()})
        for unit in shards["shards"][k]:
            emit({"event": "begin", "id": unit["id"]})
            r = run_unit(unit, logs / f"{unit['id']}.log", shards["unit_timeout"])
            emit({"event": "unit", "id": unit["id"], **r})
        emit({"event": "done", "time": time.time()})
    return 0


# ---------------------------------------------------------------------------------------------------
# Merging


def read_shard(run_dir, k):
    path = run_dir / "results" / f"shard-{k}.jsonl"
    events = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                pass  # a line cut short by a dying task
    return events


def shard_fate(run_dir, k, events):
    """Why shard k did not finish: from the Slurm task's own output when there is one."""
    started = any(e["event"] == "start" for e in events)
    for out in (run_dir / "slurm").glob(f"*_{k}.out") if (run_dir / "slurm").exists() else []:
        text = out.read_text(errors="replace")
        if "DUE TO TIME LIMIT" in text:
            return "timed out (Slurm time limit)"
        if "CANCELLED" in text:
            return "cancelled"
    return "died while running" if started else "never started"


def merge(run_dir):
    run_dir = Path(run_dir)
    shards = json.loads((run_dir / "shards.json").read_text())
    results = []
    dead = []
    for k, units in enumerate(shards["shards"]):
        events = read_shard(run_dir, k)
        done = {e["id"]: e for e in events if e["event"] == "unit"}
        began = [e["id"] for e in events if e["event"] == "begin"]
        finished = any(e["event"] == "done" for e in events)
        fate = None if finished else shard_fate(run_dir, k, events)
        if fate:
            dead.append((k, fate))
        for u in units:
            r = done.get(u["id"])
            base = {"tier": u["tier"], "test": u["name"], "seed": u["seed"], "shard": k,
                    "replay": replay_command(u), "log": str(run_dir / "logs" / f"{u['id']}.log")}
            if r:
                results.append({**base, "status": r["status"], "time": r["time"], "message": r["message"],
                                "printed_seed": r.get("printed_seed", False)})
            else:
                running = began and began[-1] == u["id"]
                why = f"shard {k} {fate}" + (" while this test ran" if running else " before this test ran")
                results.append({**base, "status": "error", "time": 0.0, "message": why, "printed_seed": False})
    results.sort(key=lambda r: (r["tier"], r["test"], -1 if r["seed"] is None else r["seed"]))
    (run_dir / "results.json").write_text(json.dumps({"plan": shards["plan"], "results": results,
                                                      "dead_shards": dead}, indent=1) + "\n")
    write_junit(run_dir / "report.xml", shards["plan"], results)
    summary = summarize(shards, results, dead)
    (run_dir / "summary.txt").write_text(summary)
    return results, dead, summary


def unit_name(r):
    return r["test"] + (f" [seed={r['seed']}]" if r["seed"] is not None else "")


def write_junit(path, plan, results):
    root = ET.Element("testsuites", name=f"rnic regression: {plan}")
    tiers = {}
    for r in results:
        tiers.setdefault(r["tier"], []).append(r)
    for tier, rs in tiers.items():
        suite = ET.SubElement(root, "testsuite", name=tier, tests=str(len(rs)),
                              failures=str(sum(r["status"] == "failed" for r in rs)),
                              errors=str(sum(r["status"] == "error" for r in rs)),
                              skipped=str(sum(r["status"] == "skipped" for r in rs)),
                              time=f"{sum(r['time'] for r in rs):.3f}")
        for r in rs:
            case = ET.SubElement(suite, "testcase", classname=f"{tier}.{r['test'].split('.')[0]}",
                                 name=unit_name(r), time=f"{r['time']:.3f}")
            if r["status"] in ("failed", "error"):
                el = ET.SubElement(case, "failure" if r["status"] == "failed" else "error", message=r["message"])
                tail = ""
                if Path(r["log"]).exists():
                    tail = "\n".join(Path(r["log"]).read_text(errors="replace").splitlines()[-40:])
                el.text = f"replay: {r['replay']}\n{tail}"
            elif r["status"] == "skipped":
                ET.SubElement(case, "skipped")
    ET.ElementTree(root).write(path, encoding="unicode", xml_declaration=True)


def summarize(shards, results, dead):
    lines = [f"plan {shards['plan']}: {len(results)} units in {len(shards['shards'])} shards "
             f"({shards['where']}), {shards['seeds']} seeds per randomised test from {shards['base_seed']}"]
    tiers = sorted({r["tier"] for r in results})
    lines.append(f"{'tier':<12}{'units':>7}{'passed':>8}{'failed':>8}{'error':>7}{'skipped':>9}{'time s':>9}")
    for t in tiers:
        rs = [r for r in results if r["tier"] == t]
        c = {s: sum(r["status"] == s for r in rs) for s in ("passed", "failed", "error", "skipped")}
        lines.append(f"{t:<12}{len(rs):>7}{c['passed']:>8}{c['failed']:>8}{c['error']:>7}{c['skipped']:>9}"
                     f"{sum(r['time'] for r in rs):>9.1f}")
    for k, fate in dead:
        lines.append(f"shard {k}: {fate}; its unfinished units are errors")
    bad = [r for r in results if r["status"] in ("failed", "error")]
    for r in bad:
        lines.append(f"{r['status'].upper()}: {unit_name(r)} ({r['message']})")
        lines.append(f"  replay: {r['replay']}")
        lines.append(f"  log:    {r['log']}")
    passed = sum(r["status"] == "passed" for r in results)
    lines.append(f"regress: {passed} passed, {len(bad)} failed, {sum(r['status'] == 'skipped' for r in results)} "
                 f"skipped")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------
# Running a plan


def write_shards(run_dir, plan, where, shards, seeds, base, unit_timeout):
    (run_dir / "results").mkdir(parents=True, exist_ok=True)
    (run_dir / "shards.json").write_text(json.dumps({
        "plan": plan, "where": where, "seeds": seeds, "base_seed": base, "unit_timeout": unit_timeout,
        "shards": shards}, indent=1) + "\n")


def run_local(run_dir, n):
    procs = [subprocess.Popen([sys.executable, __file__, "shard", "--run-dir", str(run_dir), "--shard", str(k)])
             for k in range(n)]
    try:
        for p in procs:
            p.wait()
    except KeyboardInterrupt:
        for p in procs:
            p.terminate()
        raise


def run_slurm(run_dir, n, args):
    (run_dir / "slurm").mkdir(exist_ok=True)
    script = run_dir / "task.sh"
    script.write_text("#!/bin/bash\n# One shard of the regression (scripts/regress.py shard).\n"
                      f"exec {shlex.quote(sys.executable)} {shlex.quote(str(Path(__file__).resolve()))} shard "
                      f"--run-dir {shlex.quote(str(run_dir))} --shard \"$SLURM_ARRAY_TASK_ID\"\n")
    script.chmod(0o755)
    cmd = ["sbatch", "--parsable", "--wait", f"--array=0-{n - 1}", f"--job-name={args.job_name}",
           f"--output={run_dir}/slurm/%A_%a.out", f"--time={args.time}", "--ntasks=1",
           f"--cpus-per-task={args.cpus_per_task}", f"--chdir={run_dir}"]
    if args.partition:
        cmd.append(f"--partition={args.partition}")
    if args.account:
        cmd.append(f"--account={args.account}")
    cmd += args.sbatch_arg or []
    cmd.append(str(script))
    print("regress: " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    job = p.stdout.readline().strip().split(";")[0]
    if job:
        (run_dir / "slurm" / "job_id").write_text(job + "\n")
        print(f"regress: Slurm job {job}, {n} tasks; waiting", flush=True)
    try:
        p.wait()  # sbatch --wait: non-zero when any task failed; the results say which
    except KeyboardInterrupt:
        if job:
            subprocess.run(["scancel", job])
        raise
    if not job:
        die("sbatch did not submit the job (see its message above)", 1)
    return job


def cmd_run(args):
    build = Path(args.build_dir).resolve()
    if not (build / "CTestTestfile.cmake").exists():
        die(f"{build} is not a configured build folder (scripts/build.sh builds one)")
    plans = load_plans(args.plans)
    units, unseen, seeds, base = make_units(args.plan, plans, build, args.seeds, args.base_seed)
    costs = measured_costs(build)
    run_dir = Path(args.out or (build / "regress" / time.strftime("%Y%m%d-%H%M%S"))).resolve()
    if run_dir.exists() and any(run_dir.iterdir()):
        die(f"{run_dir} exists and is not empty")
    run_dir.mkdir(parents=True, exist_ok=True)

    def run_phase(phase_units, tag):
        where = "slurm" if args.slurm else "local"
        n = args.shards or (args.jobs if not args.slurm else max(1, min(64, len(phase_units))))
        n = max(1, min(n, len(phase_units)))
        shards, load = shard_units(phase_units, costs, n)
        d = run_dir / tag
        write_shards(d, args.plan, where, shards, seeds, base, args.unit_timeout)
        print(f"regress: {tag}: {len(phase_units)} units in {n} shards ({where}), "
              f"estimated {max(load):.0f} s per shard", flush=True)
        if args.slurm:
            run_slurm(d, n, args)
        else:
            run_local(d, n)
        return merge(d)

    # Phase 1: the plan's units. Phase 2: the sweeps of the tests phase 1 found randomised that no earlier
    # run had seen print a seed (so a new random test is swept the first time it runs).
    results, dead, summary = run_phase(units, "phase1")
    if seeds and unseen:
        found = {r["test"] for r in results if r.get("printed_seed") and r["seed"] is None}
        extra = [{"tier": tier, "seed": base + i, **t} for tier, t in unseen if t["name"] in found
                 for i in range(seeds)]
        if extra:
            r2, d2, _ = run_phase(extra, "phase2")
            results += r2
            dead += [(f"phase2/{k}", f) for k, f in d2]
    update_record(build, results)
    # One report over both phases.
    all_shards = {"plan": args.plan, "where": "slurm" if args.slurm else "local", "seeds": seeds, "base_seed": base,
                  "shards": json.loads((run_dir / "phase1" / "shards.json").read_text())["shards"]}
    results.sort(key=lambda r: (r["tier"], r["test"], -1 if r["seed"] is None else r["seed"]))
    (run_dir / "results.json").write_text(json.dumps({"plan": args.plan, "results": results, "dead_shards": dead},
                                                     indent=1) + "\n")
    write_junit(run_dir / "report.xml", args.plan, results)
    summary = summarize(all_shards, results, dead)
    (run_dir / "summary.txt").write_text(summary)
    print(summary, end="")
    print(f"regress: report {run_dir}/report.xml, summary {run_dir}/summary.txt")
    return 0 if all(r["status"] in ("passed", "skipped") for r in results) else 1


def cmd_merge(args):
    _, _, summary = merge(args.run_dir)
    print(summary, end="")
    return 0


def cmd_compare(args):
    def key(path):
        data = json.loads(Path(path).read_text())
        return {(r["tier"], r["test"], r["seed"]): r["status"] for r in data["results"]}
    a, b = key(args.a), key(args.b)
    diff = [(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b), key=str) if a.get(k) != b.get(k)]
    for (tier, test, seed), x, y in diff:
        print(f"differs: {tier} {test} seed={seed}: {x} vs {y}")
    print(f"compare: {len(a)} and {len(b)} units, {len(diff)} differ")
    return 0 if not diff else 1


def main():
    ap = argparse.ArgumentParser(prog="regress", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    r = sub.add_parser("run", help="run a plan (the default)")
    r.add_argument("--plan", default="default", help="a plan of the plan file (default: default)")
    r.add_argument("--plans", default=str(ROOT / "tb" / "regress" / "plans.json"), help="the plan file")
    r.add_argument("--build-dir", default=str(ROOT / "build" / "default"), help="the build folder (shared with "
                   "the cluster's nodes under --slurm)")
    r.add_argument("--out", help="the run folder (default: <build>/regress/<date-time>; shared under --slurm)")
    r.add_argument("--seeds", type=int, help="seeds per randomised test (overrides the plan)")
    r.add_argument("--base-seed", type=int, help="first seed of each sweep (overrides the plan)")
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="local shards run at once")
    r.add_argument("--shards", type=int, help="number of shards (default: --jobs locally, one per unit up to 64 "
                   "on Slurm)")
    r.add_argument("--unit-timeout", type=float, default=600, help="seconds for a test without its own TIMEOUT")
    r.add_argument("--slurm", action="store_true", help="run the shards as one sbatch --array")
    r.add_argument("--partition", help="Slurm partition")
    r.add_argument("--account", help="Slurm account")
    r.add_argument("--time", default="60", help="Slurm time limit per task (sbatch --time; default 60 minutes)")
    r.add_argument("--cpus-per-task", type=int, default=1, help="CPUs per Slurm task (default 1)")
    r.add_argument("--job-name", default="rnic-regress")
    r.add_argument("--sbatch-arg", action="append", help="one more sbatch argument (repeatable)")
    s = sub.add_parser("shard", help="run one shard of a run folder (what each Slurm task runs)")
    s.add_argument("--run-dir", required=True)
    s.add_argument("--shard", type=int, required=True)
    m = sub.add_parser("merge", help="merge a run folder's shard results again")
    m.add_argument("run_dir")
    c = sub.add_parser("compare", help="do two results.json name the same units with the same outcomes")
    c.add_argument("a")
    c.add_argument("b")
    argv = sys.argv[1:]
    if not argv or argv[0] not in ("run", "shard", "merge", "compare", "-h", "--help"):
        argv = ["run"] + argv
    args = ap.parse_args(argv)
    return {"run": cmd_run, "shard": cmd_shard, "merge": cmd_merge, "compare": cmd_compare}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
