#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Netlist analysis behind scripts/synth_report.sh (docs/synthesis.md). Standard library only.

  synth_report.py analyze --name N --param K=V... --xilinx X.json --depth D.json --seconds S
                          --yosys-version V --out CFG.json
      X.json: write_json of synth_xilinx -family xcup (hierarchical): resource counts, total and
              per instance. D.json: write_json of scripts/yosys_synth.sh --depth (6-LUTs mapped per
              module, then flattened; CARRY4, memories as $mem_v2 cells): depth of the worst
              register-to-register path.
  synth_report.py merge --out REPORT.json CFG.json...   one report, human table on stdout
  synth_report.py check REPORT.json [--configs N]         sanity check (exit 1 with the reason)
  synth_report.py budget --name N --depth D.json [--json OUT] [--check]
      the logic-depth budget alone, of any top (the kernel or one stage); --check: exit 1 when over

Depth model (levels of the worst register-to-register path):
  - start points: flip-flop outputs and RAM read data; end points: every flip-flop input (D, enable,
    reset) and every RAM input (address, write data, enables).
  - $lut: 1 level. CARRY4: 1 level when it starts a chain, 0.5 when cascaded from another CARRY4 (Vivado
    packs two CARRY4 into one UltraScale+ CARRY8 and counts each CARRY8 as one logic level).
  - RAMs stay $mem_v2 cells whose read register Yosys merged in (memory -nomap): read data is a register
    output. A RAM of <= 64 words is LUTRAM on Xilinx (asynchronous read, then the register): its
    read address gets +1 level. A transparent read port (read-during-write bypass) adds a 1-level mux
    after the read register.
  lut_depth = ceil(levels of the worst path).
Logic-depth budget (issue 12, docs/synthesis.md): LUTs and CARRY4s are also counted separately, each as
its own maximum over all paths into an end point (the deepest-LUT path need not be the most-levels
path). A path starting at a block-RAM read (the RAM's read register, no output register: about 1 ns
clock-to-out) counts one extra LUT, as do a transparent read port's bypass mux and a LUTRAM read
address; a CARRY8 counts as two CARRY4. Budget: at most BUDGET_LUTS LUTs and BUDGET_CARRY4 CARRY4 on
every register-to-register path; the report lists the end points over it.
"""
import argparse
import json
import math
import re
import sys
from pathlib import Path

LUTRAM_MAX_WORDS = 64
BUDGET_LUTS = 7
BUDGET_CARRY4 = 16
LUT_LUTRAM_EQUIV = {  # LUTs (SLICEM LUT sites) each distributed-RAM primitive occupies
    "RAM32M16": 8, "RAM64M8": 8, "RAM32M": 4, "RAM64M": 4, "RAM32X1D": 2, "RAM64X1D": 2,
    "RAM128X1D": 4, "RAM256X1D": 8, "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4,
    "RAM512X1S": 8, "SRL16E": 1, "SRLC32E": 1, "SRLC16E": 1,
}
FIELDS = ("luts", "ffs", "carry", "bram36", "bram18", "uram", "lutram", "lutram_luts", "muxf7", "muxf8",
          "muxf9", "dsp")


class ReportError(Exception):
    pass


def load_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ReportError(f"{what} '{path}': {e}") from e


def category_counts(type_counts):
    """Resource fields from a {cell type: count} map of a synth_xilinx netlist."""
    c = dict.fromkeys(FIELDS, 0)
    other = {}
    for t, n in type_counts.items():
        if re.fullmatch(r"LUT[1-6]", t):
            c["luts"] += n
        elif t in ("FDRE", "FDSE", "FDCE", "FDPE"):
            c["ffs"] += n
        elif t in ("CARRY4", "CARRY8"):
            c["carry"] += n
        elif t == "RAMB36E2":
            c["bram36"] += n
        elif t == "RAMB18E2":
            c["bram18"] += n
        elif t.startswith("URAM288"):
            c["uram"] += n
        elif t in LUT_LUTRAM_EQUIV:
            c["lutram"] += n
            c["lutram_luts"] += n * LUT_LUTRAM_EQUIV[t]
        elif t in ("MUXF7", "MUXF8", "MUXF9"):
            c[t.lower()] += n
        elif t.startswith("DSP48"):
            c["dsp"] += n
        else:
            other[t] = other.get(t, 0) + n
    c["other_cells"] = dict(sorted(other.items()))
    return c


def short_module(name):
    """'$paramod$5f45...\\rnic_fifo' or '$paramod\\rnic_fifo\\Width=...' -> 'rnic_fifo'."""
    if name.startswith("$paramod"):
        parts = name.split("\\")
        if len(parts) >= 2:
            return parts[1]
    return name.lstrip("\\")


def find_top(modules):
    tops = [n for n, m in modules.items() if str(m.get("attributes", {}).get("top", "0")).strip("0") != ""]
    if len(tops) != 1:
        raise ReportError(f"expected one top module in the netlist, found {tops}")
    return tops[0]


def hierarchy_counts(netlist):
    """Resource counts of the whole design and of each instance (inclusive of its sub-instances)."""
    # write_json also emits the Xilinx primitive library (cells_sim.v black/white boxes): those are cells.
    modules = {n: m for n, m in netlist.get("modules", {}).items()
               if not any(str(m.get("attributes", {}).get(a, "0")).strip("0")
                          for a in ("blackbox", "whitebox", "lib_whitebox"))}
    if not modules:
        raise ReportError("synth_xilinx netlist has no modules")
    top = find_top(modules)
    own, children = {}, {}
    for name, m in modules.items():
        types, kids = {}, []
        for cname, cell in m.get("cells", {}).items():
            t = cell["type"]
            if t in modules:
                kids.append((cname, t))
            else:
                types[t] = types.get(t, 0) + 1
        own[name], children[name] = types, kids

    inclusive_cache = {}

    def inclusive(mod):
        if mod not in inclusive_cache:
            total = dict(own[mod])
            for _, kid in children[mod]:
                for t, n in inclusive(kid).items():
                    total[t] = total.get(t, 0) + n
            inclusive_cache[mod] = total
        return inclusive_cache[mod]

    per_instance = {}
    instance_module = {}

    def walk(mod, path):
        for cname, kid in sorted(children[mod]):
            ipath = f"{path}.{cname}" if path else cname
            entry = {"module": short_module(kid)}
            entry.update(category_counts(inclusive(kid)))
            per_instance[ipath] = entry
            instance_module[ipath] = short_module(kid)
            walk(kid, ipath)

    walk(top, "")
    top_own = {"module": short_module(top) + " (own cells)"}
    top_own.update(category_counts(own[top]))
    per_instance["(top)"] = top_own
    return category_counts(inclusive(top)), per_instance, instance_module


SEQ_RE = re.compile(r"^\$_(DFF|DFFE|SDFF|SDFFE|SDFFCE|DFFSR|DFFSRE|ALDFF|ALDFFE|DLATCH|SR)_")
SEQ_COARSE = {"$dff", "$dffe", "$sdff", "$sdffe", "$sdffce", "$adff", "$adffe", "$aldff", "$aldffe",
              "$dffsr", "$dffsre", "$dlatch", "$adlatch", "$sr"}
CARRY_OUT = {"O", "CO"}


def const_int(v):
    """A Yosys JSON parameter (binary string or int) as an int; x/z bits count as 0."""
    if isinstance(v, int):
        return v
    s = str(v).strip()
    return int(re.sub(r"[xzXZ]", "0", s), 2) if re.fullmatch(r"[01xzXZ]+", s) else int(s)


def depth_analysis(netlist, instance_module):
    modules = netlist.get("modules")
    if not isinstance(modules, dict) or len(modules) == 0:
        raise ReportError("depth netlist has no modules")
    top = find_top(modules)
    mod = modules[top]
    cells = mod.get("cells", {})
    names = {}  # bit -> best public name
    all_names = {}  # bit -> every public name (a register's net also carries the port names it passes)
    for nname, net in mod.get("netnames", {}).items():
        public = not net.get("hide_name", 0)
        bits = net["bits"]
        for i, b in enumerate(bits):
            if not isinstance(b, int):
                continue
            label = nname if len(bits) == 1 else f"{nname}[{i + net.get('offset', 0)}]"
            # public first, then the deepest hierarchical name: where the register is declared (the
            # same net also carries the names of the ports it is wired through)
            score = (0 if public else 1, label.count("$"), -label.count("."), len(label))
            if b not in names or score < names[b][0]:
                names[b] = (score, label)
            if public:
                all_names.setdefault(b, []).append(label)

    comb = {}        # cell name -> (type, [input bits], [output bits])
    driver = {}      # bit -> comb cell name
    start_bits = {}  # bit -> (extra levels, kind, cell name)
    start_lut = {}   # bit -> extra LUT levels for the budget (block RAM read, bypass mux)
    endpoints = []   # (bit, extra levels, kind, cell name)
    unknown = {}
    # The top's ports: an input comes from a register outside (the platform's register slice, or the
    # next stage when a single module is measured), an output goes into one.
    for pname, port in mod.get("ports", {}).items():
        for i, b in enumerate(port.get("bits", [])):
            if not isinstance(b, int):
                continue
            bit = pname if len(port["bits"]) == 1 else f"{pname}[{i}]"
            if port.get("direction") == "input":
                start_bits[b] = (0.0, "port", bit)
            elif port.get("direction") == "output":
                endpoints.append((b, 0.0, "port", bit))
    for cname, cell in cells.items():
        t = cell["type"]
        conns = cell.get("connections", {})
        dirs = cell.get("port_directions", {})
        if SEQ_RE.match(t) or t in SEQ_COARSE:
            for port, bits in conns.items():
                out = dirs.get(port) == "output" if dirs else port == "Q"
                for b in bits:
                    if not isinstance(b, int):
                        continue
                    if out:
                        start_bits[b] = (0.0, "ff", cname)
                    elif port not in ("C", "CLK"):
                        endpoints.append((b, 0.0, "ff", cname))
        elif t in ("$mem_v2", "$mem"):
            p = cell.get("parameters", {})
            size = const_int(p.get("SIZE", 0))
            transparent = const_int(p.get("RD_TRANSPARENCY_MASK", 0)) != 0 or \
                const_int(p.get("RD_COLLISION_X_MASK", 0)) != 0
            lutram = size <= LUTRAM_MAX_WORDS
            for port, bits in conns.items():
                for b in bits:
                    if not isinstance(b, int):
                        continue
                    if port == "RD_DATA":
                        start_bits[b] = (1.0 if transparent else 0.0,
                                         "ram-bypass" if transparent else ("lutram" if lutram else "bram"), cname)
                        start_lut[b] = int(transparent) + int(not lutram)
                    elif port in ("RD_CLK", "WR_CLK"):
                        continue
                    elif port == "RD_ADDR" and lutram:
                        endpoints.append((b, 1.0, "lutram-read", cname))
                    else:
                        endpoints.append((b, 0.0, "ram", cname))
        else:
            if t == "$lut":
                ins, outs = conns.get("A", []), conns.get("Y", [])
            elif t in ("CARRY4", "CARRY8"):
                ins = [b for p, bs in conns.items() if p not in CARRY_OUT for b in bs]
                outs = [b for p in CARRY_OUT for b in conns.get(p, [])]
            else:
                unknown[t] = unknown.get(t, 0) + 1
                if not dirs:
                    raise ReportError(f"depth netlist: cell {cname} of type {t} has no port directions")
                ins = [b for p, bs in conns.items() if dirs.get(p) == "input" for b in bs]
                outs = [b for p, bs in conns.items() if dirs.get(p) == "output" for b in bs]
            ins = [b for b in ins if isinstance(b, int)]
            comb[cname] = (t, ins, outs)
            for b in outs:
                if isinstance(b, int):
                    driver[b] = cname

    # arrival[cell] = (levels, best input bit or None, luts, carries, most LUTs on any path, its input
    # bit, most CARRY4 on any path, its input bit); None when no register feeds it.
    arrival = {}
    NONE = object()

    def bit_arrival(b):
        if b in start_bits:
            ls = start_lut.get(b, 0)
            return (start_bits[b][0], 0, 0, ls, 0)
        c = driver.get(b)
        if c is None:
            return None
        a = cell_arrival(c)
        return None if a is None else (a[0], a[2], a[3], a[4], a[6])

    def weight(c):
        t = comb[c][0]
        if t in ("CARRY4", "CARRY8"):
            ci = cells[c]["connections"].get("CI", [])
            cascaded = any(isinstance(b, int) and driver.get(b) and comb[driver[b]][0] == t for b in ci)
            return (0.5 if cascaded and t == "CARRY4" else 1.0), 0, (2 if t == "CARRY8" else 1)
        return 1.0, 1, 0

    in_progress = set()

    def cell_arrival(c):
        if c in arrival:
            a = arrival[c]
            return None if a is NONE else a
        # iterative DFS: resolve inputs first
        stack = [c]
        while stack:
            cur = stack[-1]
            if cur in arrival:
                stack.pop()
                continue
            pending = [driver[b] for b in comb[cur][1] if b not in start_bits and b in driver
                       and driver[b] not in arrival]
            if pending:
                if cur in in_progress and all(p in in_progress for p in pending):
                    raise ReportError(f"combinational loop through {cur}")
                in_progress.add(cur)
                stack.extend(p for p in pending if p not in in_progress)
                if all(p in in_progress for p in pending):
                    raise ReportError(f"combinational loop through {cur}")
                continue
            best = bl = bc = None
            for b in comb[cur][1]:
                ba = bit_arrival(b)
                if ba is None:
                    continue
                if best is None or ba[0] > best[0][0]:
                    best = (ba, b)
                if bl is None or ba[3] > bl[0]:
                    bl = (ba[3], b)
                if bc is None or ba[4] > bc[0]:
                    bc = (ba[4], b)
            if best is None:
                arrival[cur] = NONE
            else:
                w, dl, dc = weight(cur)
                arrival[cur] = (best[0][0] + w, best[1], best[0][1] + dl, best[0][2] + dc,
                                bl[0] + dl, bl[1], bc[0] + dc, bc[1])
            in_progress.discard(cur)
            stack.pop()
        a = arrival[c]
        return None if a is NONE else a

    def label(b):
        return names[b][1] if b in names else f"<net {b}>"

    def instance_of(signal):
        inst = signal.split("[")[0].rsplit(".", 1)[0] if "." in signal else "(top)"
        return inst, instance_module.get(inst, "rnic_kernel" if inst == "(top)" else "?")

    def register_name(cname, b):
        """The name of flip-flop cname's output bit b: of its public names, one in an instance of the
        module whose source file (src attribute, rtl/<module>.sv) declared the flip-flop."""
        src = str(cells[cname].get("attributes", {}).get("src", ""))
        files = re.findall(r"(\w+)\.sv:", src)  # instantiation chain: top file first, declaring file last
        cands = all_names.get(b, [])
        if files:
            mine = [n for n in cands if instance_of(n)[1] == files[-1]]
            if mine:
                return min(mine, key=lambda n: (-n.count("."), len(n)))
        return label(b)

    def end_register(kind, cname, b):
        """The name of the register (flip-flop Q net) or RAM an end point belongs to."""
        if kind == "port":
            return cname
        if kind == "ff":
            q = cells[cname]["connections"].get("Q", [])
            if len(q) == 1 and isinstance(q[0], int):
                return register_name(cname, q[0])
        return cname.lstrip("\\")

    def trace(end_bit, kind, cname, field):
        """The start and end of the path into end_bit that has the most LUTs (field 5) or CARRY4 (7)."""
        x = end_bit
        via = []
        while x not in start_bits:
            x = arrival[driver[x]][field]
            if x in names and names[x][0][0] == 0 and x not in start_bits:
                n = names[x][1].split("[")[0]
                if not via or via[-1] != n:
                    via.append(n)
        via.reverse()
        sk = start_bits[x][1]
        s_sig = register_name(start_bits[x][2], x) if sk == "ff" else \
            (start_bits[x][2] if sk == "port" else label(x))
        e_reg = end_register(kind, cname, end_bit)
        return {"from": s_sig, "from_kind": sk, "to": e_reg, "to_kind": kind, "via": via,
                "from_instance": instance_of(s_sig)[0], "to_instance": instance_of(e_reg)[0]}

    comb_out = {}    # output port -> the most logic between a register and it
    worst = None
    histogram = {}
    by_instance = {}
    over = []        # (luts, carry4, end bit, kind, cell) of end points over the budget
    most_l = most_c = None
    budget_inst = {}  # instance -> [most LUTs, most CARRY4] of paths ending there
    for b, extra, kind, cname in endpoints:
        a = bit_arrival(b)
        if a is None:
            continue
        el, ec = a[3] + int(extra), a[4]
        if most_l is None or el > most_l[0]:
            most_l = (el, b, kind, cname)
        if most_c is None or ec > most_c[0]:
            most_c = (ec, b, kind, cname)
        if el > BUDGET_LUTS or ec > BUDGET_CARRY4:
            over.append((el, ec, b, kind, cname))
        if kind == "port" and (el or ec):
            port = cname.split("[")[0]
            prev = comb_out.get(port)
            if prev is None or (el, ec) > (prev["luts"], prev["carry4"]):
                t = trace(b, kind, cname, 5 if el >= ec else 7)
                comb_out[port] = {"luts": el, "carry4": ec, "from": t["from"]}
        levels = a[0] + extra
        key = str(math.ceil(levels))
        histogram[key] = histogram.get(key, 0) + 1
        inst = instance_of(end_register(kind, cname, b))[0]
        by_instance[inst] = max(by_instance.get(inst, 0), math.ceil(levels))
        bi = budget_inst.setdefault(inst, [0, 0])
        bi[0], bi[1] = max(bi[0], el), max(bi[1], ec)
        if worst is None or levels > worst[0]:
            worst = (levels, b, kind, cname, a[1], a[2])
    if worst is None:
        raise ReportError("depth netlist: no register-to-register path found")

    # walk back from the end point to the start point
    levels, end_bit, end_kind, end_cell, luts, carries = worst
    chain = [end_bit]
    b = end_bit
    while b not in start_bits:
        c = driver[b]
        b = arrival[c][1]
        chain.append(b)
    chain.reverse()
    start_kind = start_bits[chain[0]][1]
    via = []
    for x in chain[1:-1]:
        if x in names and names[x][0][0] == 0 and (not via or via[-1] != names[x][1]):
            via.append(names[x][1])

    start_cell = start_bits[chain[0]][2]
    start_sig = register_name(start_cell, chain[0]) if start_kind == "ff" else \
        (start_cell if start_kind == "port" else label(chain[0]))
    end_sig = label(end_bit)
    end_reg = end_register(end_kind, end_cell, end_bit)
    si, sm = instance_of(start_sig)
    ei, em = instance_of(end_reg if end_sig.startswith("$") or end_sig.startswith("<") else end_sig)
    path = {
        "levels": levels, "luts": luts, "carry4": carries,
        "from": start_sig, "from_kind": start_kind, "from_instance": si, "from_module": sm,
        "to": end_sig, "to_kind": end_kind, "to_register": end_reg, "to_instance": ei, "to_module": em,
        "via": via,
    }
    hist = dict(sorted(histogram.items(), key=lambda kv: int(kv[0])))

    over.sort(key=lambda o: (-(max(0, o[0] - BUDGET_LUTS) + max(0, o[1] - BUDGET_CARRY4)), -o[0], -o[1]))
    worst_over = []
    seen = set()
    for el, ec, b, kind, cname in over:
        reg = end_register(kind, cname, b).split("[")[0]
        if reg in seen:
            continue
        seen.add(reg)
        t = trace(b, kind, cname, 5 if el > BUDGET_LUTS else 7)
        t.update({"luts": el, "carry4": ec})
        worst_over.append(t)
        if len(worst_over) == 20:
            break
    budget = {
        "luts": BUDGET_LUTS, "carry4": BUDGET_CARRY4,
        "most_luts": dict(trace(most_l[1], most_l[2], most_l[3], 5), luts=most_l[0]),
        "most_carry4": dict(trace(most_c[1], most_c[2], most_c[3], 7), carry4=most_c[0]),
        "end_points_over": len(over),
        "registers_over": worst_over,  # the worst end point of up to 20 registers / RAMs over budget
        "per_instance": {k: {"luts": v[0], "carry4": v[1]} for k, v in sorted(budget_inst.items())},
        # outputs of the top that are not register outputs (for one stage: the logic the next stage's
        # inputs add to; a stage whose outputs are all registers composes within the budget)
        "comb_outputs": dict(sorted(comb_out.items())),
    }
    return (math.ceil(levels), path, hist, dict(sorted(unknown.items())), dict(sorted(by_instance.items())),
            budget)


def kernel_defaults(root):
    src = (root / "rtl" / "rnic_kernel.sv").read_text(encoding="utf-8")
    out = {}
    for m in re.finditer(r"parameter\s+int\s+(\w+)\s*=\s*(\d+)", src):
        out[m.group(1)] = int(m.group(2))
    if "DATA_WIDTH" not in out:
        raise ReportError("could not read rnic_kernel's parameter defaults from rtl/rnic_kernel.sv")
    return out


def cmd_analyze(a):
    root = Path(__file__).resolve().parent.parent
    params = kernel_defaults(root)
    for p in a.param:
        k, sep, v = p.partition("=")
        if not sep or k not in params:
            raise ReportError(f"--param '{p}': expected NAME=VALUE with NAME one of {sorted(params)}")
        try:
            params[k] = int(v, 0)
        except ValueError as e:
            raise ReportError(f"--param '{p}': value is not an integer") from e
    xil = load_json(a.xilinx, "--xilinx netlist")
    dep = load_json(a.depth, "--depth netlist")
    totals, per_instance, instance_module = hierarchy_counts(xil)
    lut_depth, path, hist, unknown, by_instance, budget = depth_analysis(dep, instance_module)
    for inst, entry in per_instance.items():
        # deepest path ending in this instance or below it (its sub-instances have their own entry too)
        entry["lut_depth"] = max((d for i, d in by_instance.items()
                                  if i == inst or i.startswith(inst + ".")), default=0)
    cfg = {"name": a.name, "params": params}
    cfg.update({k: totals[k] for k in FIELDS})
    cfg["other_cells"] = totals["other_cells"]
    cfg["lut_depth"] = lut_depth
    cfg["worst_path"] = path
    cfg["depth_histogram"] = hist
    cfg["budget"] = budget
    if unknown:
        cfg["depth_other_cells"] = unknown
    cfg["per_module"] = per_instance
    cfg["yosys_version"] = a.yosys_version
    cfg["seconds"] = round(a.seconds, 1)
    Path(a.out).write_text(json.dumps(cfg, indent=1) + "\n", encoding="utf-8")


REQUIRED = ("name", "params", "luts", "ffs", "carry", "bram36", "bram18", "uram", "lutram", "lut_depth",
            "worst_path", "per_module", "yosys_version", "seconds")


def validate(report, configs):
    cl = report.get("configurations")
    if not isinstance(cl, list) or not cl:
        raise ReportError("no 'configurations' list")
    if configs is not None and len(cl) != configs:
        raise ReportError(f"{len(cl)} configurations, expected {configs}")
    for c in cl:
        missing = [k for k in REQUIRED if k not in c]
        if missing:
            raise ReportError(f"configuration {c.get('name', '?')}: missing {missing}")
        n = c["name"]
        for k in ("luts", "ffs"):
            if not isinstance(c[k], int) or c[k] <= 0:
                raise ReportError(f"{n}: {k} = {c[k]!r}, expected > 0")
        for k in ("carry", "bram36", "bram18", "uram", "lutram"):
            if not isinstance(c[k], int) or c[k] < 0:
                raise ReportError(f"{n}: {k} = {c[k]!r}, expected >= 0")
        if not isinstance(c["lut_depth"], int) or not 1 <= c["lut_depth"] <= 40:
            raise ReportError(f"{n}: lut_depth = {c['lut_depth']!r}, expected 1..40")
        wp = c["worst_path"]
        if not wp.get("from") or not wp.get("to"):
            raise ReportError(f"{n}: worst_path lacks from/to")
        pm = c["per_module"]
        if not isinstance(pm, dict) or len(pm) < 2:
            raise ReportError(f"{n}: per_module has {len(pm) if isinstance(pm, dict) else 0} entries")
        s = sum(v["luts"] for k, v in pm.items() if k == "(top)" or "." not in k)
        if s != c["luts"]:
            raise ReportError(f"{n}: per-instance LUTs add up to {s}, total says {c['luts']}")
        bd = c.get("budget")
        if not isinstance(bd, dict) or not isinstance(bd.get("end_points_over"), int) or \
                not bd.get("most_luts", {}).get("to") or not bd.get("most_carry4", {}).get("to"):
            raise ReportError(f"{n}: budget lacks end_points_over / most_luts / most_carry4")
        if not str(c["yosys_version"]).startswith("Yosys"):
            raise ReportError(f"{n}: yosys_version = {c['yosys_version']!r}")


def print_table(report):
    cl = report["configurations"]
    rows = [("DATA_WIDTH", lambda c: c["params"]["DATA_WIDTH"]),
            ("STAG_ENTRIES", lambda c: c["params"]["STAG_ENTRIES"]),
            ("NUM_STREAMS", lambda c: c["params"]["NUM_STREAMS"]),
            ("LUTs (LUT1..6)", lambda c: c["luts"]), ("FFs (FD*E)", lambda c: c["ffs"]),
            ("CARRY4/8", lambda c: c["carry"]), ("RAMB36E2", lambda c: c["bram36"]),
            ("RAMB18E2", lambda c: c["bram18"]), ("URAM288", lambda c: c["uram"]),
            ("LUTRAM prims", lambda c: c["lutram"]), ("LUTRAM LUTs", lambda c: c["lutram_luts"]),
            ("MUXF7/8/9", lambda c: f"{c['muxf7']}/{c['muxf8']}/{c['muxf9']}"), ("DSP48E2", lambda c: c["dsp"]),
            ("LUT depth", lambda c: c["lut_depth"]),
            ("  levels (LUT+carry)", lambda c: f"{c['worst_path']['levels']:g} "
                                               f"({c['worst_path']['luts']}+{c['worst_path']['carry4']})"),
            ("seconds", lambda c: c["seconds"])]
    w0 = max(len(r[0]) for r in rows)
    ws = [max(12, len(c["name"])) for c in cl]
    print(f"{'':<{w0}}  " + "  ".join(f"{c['name']:>{w}}" for c, w in zip(cl, ws)))
    for label, f in rows:
        print(f"{label:<{w0}}  " + "  ".join(f"{str(f(c)):>{w}}" for c, w in zip(cl, ws)))
    for c in cl:
        wp = c["worst_path"]
        print(f"\n[{c['name']}] worst register-to-register path: {wp['levels']:g} levels "
              f"({wp['luts']} LUTs, {wp['carry4']} CARRY4)")
        print(f"  from {wp['from']} ({wp['from_kind']}, {wp['from_instance']}: {wp['from_module']})")
        print(f"  to   {wp['to']} -> {wp['to_register']} ({wp['to_kind']}, {wp['to_instance']}: {wp['to_module']})")
        if wp["via"]:
            print("  via  " + " -> ".join(wp["via"][:12]) + (" ..." if len(wp["via"]) > 12 else ""))
        print(f"  end points by levels: " + " ".join(f"{k}:{v}" for k, v in c["depth_histogram"].items()))
        print(f"[{c['name']}] per instance (inclusive of sub-instances):")
        hdr = ("instance", "module", "LUTs", "FFs", "carry", "B36", "B18", "URAM", "LUTRAM", "MUXF", "depth")
        print(f"  {hdr[0]:<28} {hdr[1]:<18}" + "".join(f"{h:>8}" for h in hdr[2:]))
        for inst, m in c["per_module"].items():
            vals = (m["luts"], m["ffs"], m["carry"], m["bram36"], m["bram18"], m["uram"], m["lutram"],
                    m["muxf7"] + m["muxf8"] + m["muxf9"], m.get("lut_depth", "-"))
            print(f"  {inst:<28} {m['module'][:18]:<18}" + "".join(f"{v:>8}" for v in vals))
        if c.get("budget"):
            print_budget(c["name"], c["budget"])


def print_budget(name, bd):
    print(f"[{name}] logic-depth budget ({bd['luts']} LUTs, {bd['carry4']} CARRY4 on every "
          f"register-to-register path): {bd['end_points_over']} end points over")
    for k, unit in (("most_luts", "luts"), ("most_carry4", "carry4")):
        t = bd[k]
        print(f"  {k.replace('_', ' '):<12} {t[unit]:>3}  from {t['from']} ({t['from_kind']}) to {t['to']}")
    print("  per instance (paths ending there): " +
          ", ".join(f"{i} {v['luts']}/{v['carry4']}" for i, v in bd["per_instance"].items()))
    for t in bd["registers_over"]:
        print(f"  over: {t['luts']:>2} LUTs {t['carry4']:>2} CARRY4  {t['from']} -> {t['to']}")
        if t.get("via"):
            print(f"        via {', '.join(t['via'][:12])}")
    if bd.get("comb_outputs"):
        print("  outputs behind logic (LUTs/CARRY4, from): " +
              ", ".join(f"{p} {v['luts']}/{v['carry4']} ({v['from']})" for p, v in bd["comb_outputs"].items()))


def cmd_budget(a):
    """The budget of one --depth netlist (any top: the kernel or one stage); exit 1 when over it."""
    dep = load_json(a.depth, "--depth netlist")
    _, path, _, _, _, budget = depth_analysis(dep, {})
    print_budget(a.name, budget)
    if a.json:
        Path(a.json).write_text(json.dumps({"name": a.name, "worst_path": path, "budget": budget}, indent=1)
                                + "\n", encoding="utf-8")
    if a.check and budget["end_points_over"]:
        worst = budget["registers_over"][0]
        print(f"synth_report.py budget: {a.name}: {budget['end_points_over']} end points over the budget; "
              f"worst {worst['luts']} LUTs / {worst['carry4']} CARRY4 from {worst['from']} to {worst['to']}",
              file=sys.stderr)
        return 1
    return 0


def cmd_merge(a):
    report = {"generator": "scripts/synth_report.sh", "configurations": []}
    for p in a.configs:
        report["configurations"].append(load_json(p, "configuration"))
    validate(report, None)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print_table(report)


def cmd_check(a):
    validate(load_json(a.report, "report"), a.configs)
    print(f"synth_report.py: {a.report} is sane")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    an = sub.add_parser("analyze")
    an.add_argument("--name", required=True)
    an.add_argument("--param", action="append", default=[])
    an.add_argument("--xilinx", required=True)
    an.add_argument("--depth", required=True)
    an.add_argument("--seconds", type=float, required=True)
    an.add_argument("--yosys-version", required=True)
    an.add_argument("--out", required=True)
    me = sub.add_parser("merge")
    me.add_argument("--out", required=True)
    me.add_argument("configs", nargs="+")
    bu = sub.add_parser("budget")
    bu.add_argument("--name", required=True)
    bu.add_argument("--depth", required=True)
    bu.add_argument("--json")
    bu.add_argument("--check", action="store_true")
    ch = sub.add_parser("check")
    ch.add_argument("report")
    ch.add_argument("--configs", type=int)
    a = ap.parse_args()
    try:
        return {"analyze": cmd_analyze, "merge": cmd_merge, "check": cmd_check,
                "budget": cmd_budget}[a.cmd](a) or 0
    except ReportError as e:
        print(f"synth_report.py {a.cmd}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
