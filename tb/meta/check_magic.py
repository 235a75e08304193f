#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""No magic bit or repeated contract constant in rtl/, sim/, driver/, host/ (issue 32).

The hardware/software contract is written once, in hw/include/rnic/hw/hw.def; every side takes its
register fields, capabilities and limits from there (rtl/rnic_hw.svh, rnic/hw/hw.hpp). This check looks
for the copies the tree used to hold, so that none comes back:
  check_magic.py SOURCE_DIR [--expect-offenders N]
--expect-offenders: the check of the check (exit 0 only when exactly N lines break a rule).
"""
import os
import re
import sys

import check_args

# (what, regex, folders, file suffixes). A line matches when the regex finds it outside // comments.
RULES = [
    ("MAX_SEG_BYTES is hw.def's (hw::kMAX_SEG_BYTES, RNIC_MAX_SEG_BYTES; the card reports CAP_MAX_SEG_BYTES)",
     r"\b16384\b|kKernelMaxSegBytes|\bkMaxSegBytes\b", ["rtl", "sim", "driver/src", "driver/include", "host"],
     (".sv", ".svh", ".cpp", ".hpp")),
    ("NET_MAX_PACKET_BYTES is hw.def's (the card reports CAP_NET_MAX_PACKET)", r"\b9216\b",
     ["rtl", "sim", "driver", "host"], (".sv", ".cpp", ".hpp")),
    ("NET_ASSOC_ENTRIES / NET_SOCKETS are hw.def's", r"\bEntries\s*=\s*16\b|kNetEntries\s*=\s*16\b|kNetSockets\s*=\s*16\b",
     ["rtl/rnic_net_side.sv", "driver", "sim"], (".sv", ".cpp", ".hpp")),
    ("the DDP header sizes are hw.def's (TAGGED_HDR_BYTES, UNTAGGED_HDR_BYTES)",
     r"(HDR_BYTES|HdrBytes|HeaderSize)\s*=\s*1[48]\b", ["rtl", "sim", "driver", "host"], (".sv", ".svh", ".cpp", ".hpp")),
    ("register bits are hw.def's RNIC_BITS fields (kREG_FIELD.put / .get / .mask)",
     r"0x100u|0x8000'?0000u|1u << 31|kAssocWrite|kCtrlEnable|kCtrlBusy|kFlagPhase|kFlagMalformed|kCqeFlag|kStagArg"
     r"|version >> 16|version & 0xFFFF|& 3u\) == 0",
     ["sim", "driver/src", "driver/sctp", "host"], (".cpp", ".hpp")),
    ("register fields by bit number: use the RNIC_<REG>_<FIELD>_LSB / _BITS localparams",
     r"(reg_wdata_i|w_data_q)\[\d+(:\d+)?\]|5'd16\b|<= 5'd15\b", ["rtl/rnic_regs.sv", "rtl/rnic_net_regs.sv"], (".sv",)),
]


KERNEL_DEFAULT = re.compile(r"parameter int\s+(DATA_WIDTH|STAG_ENTRIES|NUM_STREAMS|NUM_QNS|SSN_WINDOW|MAX_SEG_BYTES|RQ_PREFETCH)\s*=")


def code_part(line):
    i = line.find("//")
    return line if i < 0 else line[:i]


def files_under(src, rel, suffixes):
    path = os.path.join(src, rel)
    if os.path.isfile(path):
        yield path
        return
    for root, _, names in os.walk(path):
        for n in sorted(names):
            # rnic_hw.svh is the contract's generated copy; the CRC32c tables are 16384 bits wide by chance
            if n.endswith(suffixes) and n not in ("rnic_hw.svh", "rnic_crc32c_tables.svh"):
                yield os.path.join(root, n)


KERNEL_DEFAULTS = {  # rnic_kernel parameter -> hw.def row
    "DATA_WIDTH": "DEFAULT_DATA_WIDTH", "STAG_ENTRIES": "DEFAULT_STAGS", "NUM_STREAMS": "DEFAULT_STREAMS",
    "NUM_QNS": "DEFAULT_QNS", "SSN_WINDOW": "DEFAULT_SSN_WINDOW", "MAX_SEG_BYTES": "MAX_SEG_BYTES",
    "RQ_PREFETCH": "DEFAULT_RQ_PREFETCH"}


def kernel_default(src):
    """rnic_kernel.sv keeps literal defaults (IP packagers read top-level parameters as text): each must be
    hw.def's."""
    bad = 0
    hw_def = os.path.join(src, "hw/include/rnic/hw/hw.def")
    kernel = os.path.join(src, "rtl/rnic_kernel.sv")
    if not (os.path.exists(hw_def) and os.path.exists(kernel)):
        return 0
    rows = open(hw_def, encoding="utf-8").read()
    top = open(kernel, encoding="utf-8").read()
    for param, row in KERNEL_DEFAULTS.items():
        want = re.search(r"RNIC_CONST\(" + row + r",\s*(\d+)", rows)
        got = re.search(r"parameter int\s+" + param + r"\s*=\s*(\d+)", top)
        if want and got and want.group(1) != got.group(1):
            print(f"magic: rtl/rnic_kernel.sv {param} default {got.group(1)} is not hw.def's {row} {want.group(1)}")
            bad += 1
        elif got and not want:
            print(f"magic: hw.def has no row {row} for rnic_kernel's {param}")
            bad += 1
    return bad


def main():
    args, expect = check_args.parse(__doc__, 1)
    src = os.path.realpath(args[0])
    offenders = kernel_default(src)
    checked = 0
    for what, rx, folders, suffixes in RULES:
        pat = re.compile(rx)
        for folder in folders:
            for path in files_under(src, folder, suffixes):
                checked += 1
                rel = os.path.relpath(path, src)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for no, line in enumerate(f, 1):
                        if rel == "rtl/rnic_kernel.sv" and KERNEL_DEFAULT.search(line):
                            continue  # kernel_default() compares it with hw.def
                        if pat.search(code_part(line)):
                            offenders += 1
                            print(f"magic: {rel}:{no}: {line.strip()}\n       {what}")
    if expect is not None:
        return check_args.verdict("magic", offenders, expect)
    if checked == 0:
        print("magic: no file checked", file=sys.stderr)
        return 1
    if offenders:
        return 1
    print(f"magic: {checked} files checked: no copy of a contract constant or register bit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
