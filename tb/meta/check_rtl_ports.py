#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""RTL port names say their direction (docs/style.md): on every module but the kernel's top, an input
ends in _i (_ni when active low), an output in _o, an inout in _io; the proofs' observation ports
(fv_*, under `ifdef FORMAL) are outputs by construction. The top, rnic_kernel, keeps the names the
Vitis RTL-kernel flow and VNx require (ap_clk, s_axi_control_*, m_axi_gmem_*, s_axis_net_*).
  check_rtl_ports.py RTL_DIR [--expect-offenders N]
--expect-offenders: the check of the check (exit 0 only when exactly N ports break the rule).
"""
import glob
import os
import re
import sys

import check_args

TOPS = {"rnic_kernel"}
MODULE = re.compile(r"\bmodule\s+(\w+)\s*(?:#\s*\((?:[^()]|\([^()]*\))*\))?\s*\((.*?)\n\s*\);", re.S)
PORT = re.compile(r"^\s*,?\s*(input|output|inout)\b.*?(\w+)\s*,?\s*$")


def ok(direction, name):
    if direction == "input":
        return name.endswith("_i") or name.endswith("_ni")
    if direction == "output":
        return name.endswith("_o") or name.startswith("fv_")
    return name.endswith("_io")


def main():
    args, expect = check_args.parse(__doc__, 1)
    files = sorted(glob.glob(os.path.join(args[0], "*.sv")))
    offenders = modules = 0
    for path in files:
        text = open(path, encoding="utf-8").read()
        if not MODULE.search(text):
            offenders += 1
            print(f"ports: {os.path.basename(path)}: no module header this check can read")
        for m in MODULE.finditer(text):
            if m.group(1) in TOPS:
                continue
            modules += 1
            for line in m.group(2).split("\n"):
                p = PORT.match(re.sub(r"//.*", "", line))
                if p and not ok(p.group(1), p.group(2)):
                    offenders += 1
                    print(f"ports: {os.path.basename(path)}: module {m.group(1)}: {p.group(1)} {p.group(2)}: "
                          f"an {p.group(1)} port's name ends in "
                          f"{ {'input': '_i or _ni', 'output': '_o', 'inout': '_io'}[p.group(1)] }")
    if expect is not None:
        return check_args.verdict("ports", offenders, expect)
    if modules == 0:
        print("ports: no module found", file=sys.stderr)
        return 1
    if offenders:
        return 1
    print(f"ports: {modules} modules checked: every port name says its direction")
    return 0


if __name__ == "__main__":
    sys.exit(main())
