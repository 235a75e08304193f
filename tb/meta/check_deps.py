#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Dependencies run one way: tb -> sim -> (rtl, driver) -> hw, host -> driver.

Reads the build's compile_commands.json: a source file of the product may see (-I, -isystem) only the
folders its layer may depend on. hw/ (the contract) sees hw/ only; driver/ sees driver/ and hw/; rtl/
(the SystemC model, rtl/hls) sees rtl/ and hw/; host/ sees host/ (its shared libraries, such as
host/ulp), driver/ and hw/; sim/ sees sim/, rtl/, driver/ and hw/ (and the Verilated model in the build
tree). Nothing of the product sees tb/.
  check_deps.py SOURCE_DIR BUILD_DIR [--expect-offenders N]
--expect-offenders: the check of the check (exit 0 only when exactly N files break the rule).
"""
import json
import os
import shlex
import sys

import check_args


def main():
    args, expect = check_args.parse(__doc__, 2)
    src, build = (os.path.realpath(a) for a in args)
    allowed = {
        "hw": ["hw"],
        "driver": ["driver", "hw"],
        "host": ["host", "driver", "hw"],
        "rtl": ["rtl", "hw"],
        "sim": ["sim", "rtl", "driver", "hw"],
    }
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    offenders = 0
    checked = 0
    for e in entries:
        path = os.path.realpath(os.path.join(e.get("directory", ""), e["file"]))
        rel = os.path.relpath(path, src)
        layer = rel.split(os.sep)[0]
        if layer not in allowed:
            continue
        checked += 1
        words = shlex.split(e["command"]) if "command" in e else e["arguments"]
        dirs = []
        for i, w in enumerate(words):
            for flag in ("-I", "-isystem"):
                if w == flag and i + 1 < len(words):
                    dirs.append(words[i + 1])
                elif w.startswith(flag) and len(w) > len(flag) and flag == "-I":
                    dirs.append(w[2:])
        bad = []
        for d in dirs:
            d = os.path.realpath(os.path.join(e.get("directory", ""), d))
            if not d.startswith(src + os.sep) or d.startswith(build + os.sep):
                continue  # system headers, the Verilated model in the build tree
            top = os.path.relpath(d, src).split(os.sep)[0]
            if top not in allowed[layer]:
                bad.append(os.path.relpath(d, src))
        if bad:
            offenders += 1
            print(f"deps: {rel} ({layer}/) sees {', '.join(sorted(set(bad)))}: {layer}/ may depend on "
                  f"{' and '.join(allowed[layer])} only (tb -> sim -> (rtl, driver) -> hw, host -> driver)")
    if checked == 0:
        print("deps: no product source in compile_commands.json: nothing was checked", file=sys.stderr)
        return 1
    if expect is not None:
        return check_args.verdict("deps", offenders, expect)
    if offenders:
        return 1
    print(f"deps: {checked} product source files checked: every one sees only the layers it may depend on")
    return 0


if __name__ == "__main__":
    sys.exit(main())
