#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a benchmark run's figures into the documentation: its one home for each (issue 32).

  bench_docs.py OUT_DIR SOURCE_DIR

- README.md, between the headline markers: a few headline figures from OUT_DIR/bench.json;
- docs/bench.md, between the table markers: the full table of OUT_DIR/bench_summary.md.
Each block says the commit and date it was measured at. scripts/bench.sh --docs runs it (with --synth:
the headline carries the synthesis figures).
"""
import json
import os
import sys

HEAD_BEGIN = "<!-- bench.sh --docs: headline (generated: edit scripts/bench_docs.py, not this block) -->"
HEAD_END = "<!-- end of headline -->"
TABLE_BEGIN = "<!-- bench.sh --docs: table (generated: edit scripts/bench.sh, not this block) -->"
TABLE_END = "<!-- end of table -->"
CLOCK_HZ = 250e6  # the card's target clock (docs/synthesis.md)


def replace_block(path, begin, end, text):
    body = open(path, encoding="utf-8").read()
    i, j = body.find(begin), body.find(end)
    if i < 0 or j < i:
        sys.exit(f"bench_docs.py: {path} has no block {begin!r} .. {end!r}")
    body = body[:i + len(begin)] + "\n" + text + body[j:]
    open(path, "w", encoding="utf-8").write(body)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, src = sys.argv[1], sys.argv[2]
    b = json.load(open(os.path.join(out, "bench.json"), encoding="utf-8"))
    rows = {(r["kind"], r["align"], r["payload_bytes"]): r for r in b["kernel"]["rows"]}
    stamp = "Measured at commit %s on %s by `./scripts/bench.sh%s --docs` (%d CPUs)." % (
        b["commit"], b["date"][:10], " --synth" if b["synth"] else "", b["machine"]["cpus"])

    def rate(size):
        t, u = rows[("tagged", 0, size)], rows[("untagged", 0, size)]
        return "%.2f / %.2f B/cycle, %.0f Gbit/s at 250 MHz" % (
            t["bytes_per_cycle"], u["bytes_per_cycle"], t["bytes_per_cycle"] * 8 * CLOCK_HZ / 1e9)

    bus = b["kernel"]["bus_limit_bytes_per_cycle"]
    lat = rows[("tagged", 0, 1024)]
    lines = ["| figure | value |", "|---|---|",
             "| placement of 1450-byte segments, tagged / untagged (bus limit %d B/cycle) | %s |" % (bus, rate(1450)),
             "| placement of 9000-byte segments | %s |" % rate(9000),
             "| latency of a 1024-byte tagged segment, its header in to its first write beat | %.0f cycles |"
             % lat["latency_cycles_avg"],
             "| rnic-sim (the RTL card) under rnic-run | %.0f cycles/s |" % b["rnic_sim"]["cycles_per_second_median"],
             "| STag registrations through the driver and rnic-sim | %.0f per second |"
             % b["driver"]["registrations_per_second_median"]]
    if b["synth"]:
        s = b["synth"]
        lines.append("| synthesis at the defaults (Yosys 0.23, xcup; not Vivado) | %s LUTs, %s FFs, %s URAM, "
                     "%s RAMB36, %s RAMB18; at most %s LUTs deep |" % (s["luts"], s["ffs"], s["uram"], s["bram36"],
                                                                      s["bram18"], s["lut_depth"]))
    replace_block(os.path.join(src, "README.md"), HEAD_BEGIN, HEAD_END, "\n".join(lines) + "\n\n" + stamp + "\n")
    summary = open(os.path.join(out, "bench_summary.md"), encoding="utf-8").read().rstrip("\n")
    replace_block(os.path.join(src, "docs/bench.md"), TABLE_BEGIN, TABLE_END, stamp + "\n\n" + summary + "\n")
    print("bench_docs.py: wrote the figures into README.md and docs/bench.md")


if __name__ == "__main__":
    main()
