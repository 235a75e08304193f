#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a build and a test run cost, in a short table (scripts/test.sh prints it at the end of every run).

  build_report.py build BUILD_DIR [--since-ns T] [--wall S] [--top K]
      CPU seconds per target group from ninja's log (.ninja_log), only the steps whose output was
      written at or after T (nanoseconds since the epoch; test.sh passes the time the build started,
      so a rebuild shows what it rebuilt). Ninja rewrites its log when it grows (one line per output,
      old runs dropped), so a line count from before the build does not mark where the build began.
  build_report.py tests BUILD_DIR JUNIT [--wall S] [--top K]
      seconds per CTest label from ctest --output-junit, with each label's slowest test.
The sum of a group's step times is CPU time only roughly (a step may wait on I/O); it is what ninja
measured, and it is what a change to the build moves.
"""
import argparse
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

# First match wins: (group, pattern on the output's path).
GROUPS = [
    ("Verilator runtime", r"rnic_verilated_rt|/include/verilated[^/]*\.cpp\.o$"),
    ("gate-level netlist", r"^tb/rtl/netlist/"),
    ("SystemC model, kernel tests on it", r"_systemc\.dir/|_lockstep\.dir/|rnic_kernel_sc_w|rtl/hls/"),
    ("Verilated models", r"/V[^/]*\.dir/"),
    ("RTL testbenches", r"^tb/rtl/"),
    ("other testbenches", r"^tb/"),
    ("rnic-sim", r"^sim/"),
    ("driver", r"^driver/"),
    ("host tools", r"^host/"),
]


def group_of(path):
    for name, pat in GROUPS:
        if re.search(pat, path):
            return name
    return "other"


def read_ninja_log(build, since_ns):
    log = Path(build) / ".ninja_log"
    if not log.exists():
        return []
    lines = log.read_text(errors="replace").splitlines()
    steps = []
    seen = set()
    for line in lines[1:]:
        parts = line.split("\t")
        if len(parts) != 5 or not parts[2].isdigit() or int(parts[2]) < since_ns:
            continue
        start, end, _, out, cmd_hash = parts
        # A step with several outputs (Verilator's generated files) has a line per output: count it once.
        if (start, end, cmd_hash) in seen:
            continue
        seen.add((start, end, cmd_hash))
        steps.append((out, (int(end) - int(start)) / 1000.0))
    return steps


def cmd_build(a):
    steps = read_ninja_log(a.build_dir, a.since_ns)
    by = {}
    for out, t in steps:
        g = by.setdefault(group_of(out), [0, 0.0, ("", 0.0)])
        g[0] += 1
        g[1] += t
        if t > g[2][1]:
            g[2] = (out, t)
    total = sum(g[1] for g in by.values())
    wall = f", {a.wall:.0f} s wall" if a.wall is not None else ""
    print(f"build: {len(steps)} steps, {total:.0f} s summed over steps{wall}")
    if not steps:
        return 0
    print(f"  {'group':<36}{'steps':>7}{'step s':>9}  slowest step")
    for name, (n, t, (slow, st)) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        short = slow if len(slow) <= 60 else "..." + slow[-57:]
        print(f"  {name:<36}{n:>7}{t:>9.0f}  {short} ({st:.0f} s)")
    return 0


def labels_of(build):
    """Each test's CTest labels, from the listing regress.py reads (ctest --show-only=json-v1)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from regress import ctest_tests  # pylint: disable=import-outside-toplevel
    return {t["name"]: t["labels"] or ["(none)"] for t in ctest_tests(build, {})}


def cmd_tests(a):
    try:
        root = ET.parse(a.junit).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"tests: no figures ({a.junit}: {e})")
        return 0
    labels = labels_of(a.build_dir)
    by = {}
    n = failed = 0
    total = 0.0
    for case in root.iter("testcase"):
        name = case.get("name", "")
        t = float(case.get("time", 0) or 0)
        bad = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped") is not None or case.get("status") in ("notrun", "disabled")
        n += 1
        failed += bad
        total += t
        for lab in labels.get(name, ["(none)"]):
            g = by.setdefault(lab, [0, 0, 0.0, ("", 0.0), 0])
            g[0] += 1
            g[1] += bad
            g[2] += t
            g[4] += skipped
            if t > g[3][1]:
                g[3] = (name, t)
    wall = f", {a.wall:.0f} s wall" if a.wall is not None else ""
    print(f"tests: {n} run, {failed} failed, {total:.0f} test-seconds{wall}")
    print(f"  {'label':<12}{'tests':>7}{'failed':>8}{'skipped':>9}{'test s':>9}  slowest test")
    for lab, (c, f, t, (slow, st), sk) in sorted(by.items(), key=lambda kv: -kv[1][2]):
        short = slow if len(slow) <= 56 else slow[:53] + "..."
        print(f"  {lab:<12}{c:>7}{f:>8}{sk:>9}{t:>9.0f}  {short} ({st:.0f} s)")
    skipped = sum(1 for case in root.iter("testcase") if case.find("skipped") is not None or
                  case.get("status") in ("notrun", "disabled"))
    print(f"tests: {n - failed - skipped} passed, {failed} failed, {skipped} skipped")
    return 0


def main():
    ap = argparse.ArgumentParser(prog="build_report", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("build_dir")
    b.add_argument("--since-ns", type=int, default=0,
                   help="only steps whose output was written at or after this time (ns since the epoch)")
    b.add_argument("--wall", type=float)
    t = sub.add_parser("tests")
    t.add_argument("build_dir")
    t.add_argument("junit")
    t.add_argument("--wall", type=float)
    a = ap.parse_args()
    return cmd_build(a) if a.cmd == "build" else cmd_tests(a)


if __name__ == "__main__":
    sys.exit(main())
