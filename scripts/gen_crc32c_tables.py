#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes rtl/rnic_crc32c_tables.svh: the XOR matrices of rnic_crc32c (CRC32c, RFC 9260 appendix A,
RFC 3309: reflected, polynomial 0x1EDC6F41, 0x82F63B78 reflected). Standard library only.

  gen_crc32c_tables.py                 print the .svh on stdout
  gen_crc32c_tables.py --out FILE      write it
  gen_crc32c_tables.py --check FILE    exit 1 (with a diff) when FILE differs from what this writes

The matrices are generated here rather than by constant functions in the RTL so that Yosys 0.23 only
ever sees literal constants. Every matrix is checked below against a bitwise CRC32c before anything is
written (the check value of "123456789" and random blocks); tb/rtl/crc checks the RTL against ISA-L.

State convention: the 32-bit CRC register s of the reflected algorithm (bit 0 is x^31's coefficient);
one byte b: s ^= b, then 8 times s = (s >> 1) ^ (0x82F63B78 if s & 1 else 0). Data: byte k of a block
is bits 8k..8k+7 of the beat (byte 0 first on the wire), bit j of a byte is bit 8k+j.

Tables (each 32x32 matrix as 32 rows of 32 bits, row i at [32*i +: 32]: output bit i is the XOR of the
input bits the row selects):
  RNIC_CRC32C_DATA_ROWS     32 rows of 512 bits, row i at [512*i +: 512]: bit i of the register after
                            a 64-byte block from s = 0. For a block of B < 64 bytes take its last 8B
                            columns: B bytes from s = 0 give the same register as 64 - B zero bytes and
                            then them (zero bytes leave s = 0 as it is).
  RNIC_CRC32C_ADVANCE_ROWS  matrix e - 3 at [1024*(e-3) +: 1024], e = 3..6: s -> s after 2^e zero bytes.
  RNIC_CRC32C_UNDO_ROWS     matrix e at [1024*e +: 1024], e = 0..5: the inverse, s after 2^e zero bytes
                            -> s (x^-8*2^e mod P: x is invertible modulo P, P(0) = 1).
"""
import argparse
import difflib
import random
import sys

POLY = 0x82F63B78
MAX_BYTES = 64


def crc_bytes(s, data):
    for b in data:
        s ^= b
        for _ in range(8):
            s = (s >> 1) ^ (POLY if s & 1 else 0)
    return s


def advance(s, nbytes):
    return crc_bytes(s, bytes(nbytes))


def undo_bit(s):
    # Inverse of s' = (s >> 1) ^ (POLY if s & 1): bit 31 of s' is set exactly when POLY was applied.
    if s & 0x80000000:
        return (((s ^ POLY) << 1) | 1) & 0xFFFFFFFF
    return (s << 1) & 0xFFFFFFFF


def undo(s, nbytes):
    for _ in range(8 * nbytes):
        s = undo_bit(s)
    return s


def rows_of_columns(columns, nrows=32):
    """columns[j] = image of input bit j (an int of nrows bits) -> rows[i] = int over input bits."""
    rows = [0] * nrows
    for j, col in enumerate(columns):
        for i in range(nrows):
            if (col >> i) & 1:
                rows[i] |= 1 << j
    return rows


def apply_rows(rows, v):
    out = 0
    for i, r in enumerate(rows):
        out |= (bin(r & v).count("1") & 1) << i
    return out


def data_rows():
    cols = []
    for k in range(MAX_BYTES):
        for j in range(8):
            block = bytearray(MAX_BYTES)
            block[k] = 1 << j
            cols.append(crc_bytes(0, block))
    return rows_of_columns(cols)


def matrix_rows(fn):
    return rows_of_columns([fn(1 << j) for j in range(32)])


def self_check(drows, adv, und):
    rng = random.Random(1)
    # The CRC32c check value (RFC 3309 / iSCSI): "123456789" -> 0xE3069283.
    assert crc_bytes(0xFFFFFFFF, b"123456789") ^ 0xFFFFFFFF == 0xE3069283
    for _ in range(200):
        nb = rng.choice([8, 16, 32, 64])
        e = nb.bit_length() - 1
        s = rng.getrandbits(32)
        block = bytes(rng.getrandbits(8) for _ in range(nb))
        v = int.from_bytes(block, "little")
        shift = 8 * (MAX_BYTES - nb)
        part = [(r >> shift) & ((1 << (8 * nb)) - 1) for r in drows]
        got = apply_rows(adv[e], s) ^ apply_rows(part, v)
        assert got == crc_bytes(s, block), "data/advance matrix"
        for u in range(6):
            assert apply_rows(und[u], advance(s, 1 << u)) == s, "undo matrix"
        # A last beat of n bytes padded with m = nb - n zero bytes, then undone m bytes.
        n = rng.randint(1, nb)
        m = nb - n
        t = crc_bytes(s, block[:n] + bytes(m))
        for u in range(6):
            if (m >> u) & 1:
                t = apply_rows(und[u], t)
        assert t == crc_bytes(s, block[:n]), "padded last beat"


def hexrows(rows, width):
    digits = width // 4
    parts = [f"{width}'h{rows[i]:0{digits}x}" for i in reversed(range(len(rows)))]
    return parts


def render():
    drows = data_rows()
    adv = [matrix_rows(lambda v, e=e: advance(v, 1 << e)) for e in range(7)]
    und = [matrix_rows(lambda v, e=e: undo(v, 1 << e)) for e in range(6)]
    self_check(drows, adv, und)
    out = []
    out.append("// SPDX-License-Identifier: Apache-2.0")
    out.append("// rnic_crc32c_tables.svh: the XOR matrices of rnic_crc32c, written by")
    out.append("// scripts/gen_crc32c_tables.py (its header says what each holds). Do not edit: run")
    out.append("//   scripts/gen_crc32c_tables.py --out rtl/rnic_crc32c_tables.svh")
    out.append("// (the test crc.TablesUpToDate compares). Included inside rnic_crc32c's module body.")

    def emit(name, width, chunks):
        out.append(f"localparam logic [{width}-1:0] {name} = {{")
        for idx, c in enumerate(chunks):
            sep = "," if idx + 1 < len(chunks) else ""
            out.append(f"  {c}{sep}")
        out.append("};")

    emit("RNIC_CRC32C_DATA_ROWS", 32 * 512, hexrows(drows, 512))
    adv_chunks = []
    for e in reversed(range(3, 7)):
        adv_chunks += hexrows(adv[e], 32)
    emit("RNIC_CRC32C_ADVANCE_ROWS", 4 * 1024, adv_chunks)
    und_chunks = []
    for e in reversed(range(6)):
        und_chunks += hexrows(und[e], 32)
    emit("RNIC_CRC32C_UNDO_ROWS", 6 * 1024, und_chunks)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--out", help="write the .svh to this file")
    g.add_argument("--check", help="compare this file with what would be written")
    a = ap.parse_args()
    text = render()
    if a.check:
        try:
            with open(a.check, encoding="utf-8") as f:
                have = f.read()
        except OSError as e:
            print(f"gen_crc32c_tables.py: cannot read {a.check}: {e}", file=sys.stderr)
            return 1
        if have != text:
            diff = difflib.unified_diff(have.splitlines(), text.splitlines(), a.check, "generated", lineterm="")
            for line in list(diff)[:40]:
                print(line, file=sys.stderr)
            print(f"gen_crc32c_tables.py: {a.check} is not what the generator writes: run "
                  f"scripts/gen_crc32c_tables.py --out {a.check}", file=sys.stderr)
            return 1
        print(f"gen_crc32c_tables.py: {a.check} up to date")
        return 0
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
