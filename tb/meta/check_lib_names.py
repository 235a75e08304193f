#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One name per library (docs/style.md): a product library rnic_NAME (hw/, driver/, rtl/, sim/, host/)
lives in a folder named NAME, its public headers in NAME/include/rnic/NAME/, and they declare namespace
rnic::NAME. Exceptions: rnic_driver is the product's API, namespace rnic (its internals rnic::detail); a
second library of a folder is named after it with a suffix (rnic_sctp_card in driver/sctp, namespace
rnic::sctp).
  check_lib_names.py SOURCE_DIR [--expect-offenders N]
--expect-offenders: the check of the check (exit 0 only when exactly N libraries break the rule).
"""
import glob
import os
import re
import sys

import check_args

LAYERS = ("hw", "driver", "rtl", "sim", "host")
ADD = re.compile(r"add_library\((rnic_\w+)\s+(STATIC|INTERFACE|SHARED)\b")
INC = re.compile(r"target_include_directories\((rnic_\w+)\s+(?:SYSTEM\s+)?(?:PUBLIC|INTERFACE)\s+([^\s)]+)")
NAMESPACE_OF = {"rnic_driver": "rnic"}


def main():
    args, expect = check_args.parse(__doc__, 1)
    src = os.path.realpath(args[0])
    libs, incs = {}, {}
    for layer in LAYERS:
        for cm in glob.glob(os.path.join(src, layer, "**", "CMakeLists.txt"), recursive=True):
            text = open(cm, encoding="utf-8").read()
            folder = os.path.dirname(cm)
            for m in ADD.finditer(text):
                libs[m.group(1)] = folder
            for m in INC.finditer(text):
                incs.setdefault(m.group(1), os.path.normpath(os.path.join(folder, m.group(2))))
    offenders = 0
    for lib, folder in sorted(libs.items()):
        name = lib[len("rnic_"):]
        inc = incs.get(lib)
        if inc is None:  # a library without public headers of its own (rnic_sctp_card): its folder's name
            leaf = os.path.basename(folder)
            if not name.startswith(leaf + "_"):
                offenders += 1
                print(f"names: {lib} in {os.path.relpath(folder, src)}: a second library of a folder is "
                      f"named rnic_{leaf}_<what>")
            continue
        home = os.path.dirname(inc) if os.path.basename(inc) == "include" else inc
        problems = []
        if os.path.basename(home) != name:
            problems.append(f"its folder is {os.path.relpath(home, src)}, not .../{name}")
        headers = os.path.join(inc, "rnic", name)
        if not os.path.isdir(headers):
            problems.append(f"no header folder {os.path.relpath(headers, src)}")
        else:
            ns = NAMESPACE_OF.get(lib, "rnic::" + name)
            texts = [open(h, encoding="utf-8").read() for h in glob.glob(os.path.join(headers, "*.hpp"))]
            pat = re.compile(r"^namespace " + re.escape(ns) + r"\b(?!::)", re.M)
            if texts and not any(pat.search(t) for t in texts):
                problems.append(f"its headers do not declare namespace {ns}")
        if problems:
            offenders += 1
            print(f"names: {lib}: " + "; ".join(problems))
    if expect is not None:
        return check_args.verdict("names", offenders, expect)
    if not libs:
        print("names: no library found", file=sys.stderr)
        return 1
    if offenders:
        return 1
    print(f"names: {len(libs)} libraries: folder = target = namespace")
    return 0


if __name__ == "__main__":
    sys.exit(main())
