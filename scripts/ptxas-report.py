#!/usr/bin/env python3
"""Assembles every kernel of spconv-to-cuda with ptxas and reports its
resources: registers, spill stores and loads, stack frame and local memory,
per kernel and architecture, as a Markdown table.

usage: ptxas-report.py --spconv-opt BIN --ptxas BIN [--chip sm_80]...
                       [--check] FILE.mlir...

With --check, exits 1 if a rulebook kernel (spconv_build_*) spills, uses a
stack frame or local memory.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (" ".join(args), result.returncode,
                                          result.stderr[-4000:]))
    return result


def unescape(text):
    """An MLIR string attribute's body (\\XX hex escapes, \\\\, \\") as bytes."""
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "\\":
            if text[i + 1] in "\\\"":
                out.append(ord(text[i + 1]))
                i += 2
            else:
                out.append(int(text[i + 1:i + 3], 16))
                i += 3
        else:
            out += text[i].encode()
            i += 1
    return bytes(out)


def ptx_of(spconv_opt, mlir, chip):
    """The PTX that spconv-to-cuda embeds for `mlir` on `chip`."""
    ir = run([spconv_opt, mlir,
              "--spconv-to-cuda=chip=%s format=isa" % chip]).stdout
    objects = re.findall(r'assembly = "((?:[^"\\]|\\.)*)"', ir)
    if len(objects) != 1:
        sys.exit("%s: expected one embedded PTX module, found %d" % (mlir, len(objects)))
    return unescape(objects[0])


FUNCTION = re.compile(r"Compiling entry function '(\w+)' for '(\w+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes lmem)?")


def assemble(ptxas, ptx, chip):
    """Per kernel of `ptx`: registers, spill stores, spill loads, stack, lmem."""
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, "k.ptx")
        with open(source, "wb") as f:
            f.write(ptx)
        log = run([ptxas, "-v", "-arch=" + chip, source,
                   "-o", os.path.join(work, "k.cubin")]).stderr
    kernels = {}
    name = None
    for line in log.splitlines():
        if m := FUNCTION.search(line):
            name = m.group(1)
            kernels[name] = {"registers": 0, "spill_stores": 0,
                             "spill_loads": 0, "stack": 0, "lmem": 0}
        elif name and (m := FRAME.search(line)):
            kernels[name].update(stack=int(m.group(1)),
                                 spill_stores=int(m.group(2)),
                                 spill_loads=int(m.group(3)))
        elif name and (m := USED.search(line)):
            kernels[name].update(registers=int(m.group(1)),
                                 lmem=int(m.group(2) or 0))
    return kernels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spconv-opt", required=True)
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--chip", action="append")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    chips = args.chip or ["sm_80", "sm_90"]

    rows = {}  # kernel -> chip -> resources
    for mlir in args.files:
        for chip in chips:
            for name, info in assemble(args.ptxas, ptx_of(args.spconv_opt, mlir, chip),
                                       chip).items():
                rows.setdefault(name, {})[chip] = info

    print("| kernel | " + " | ".join("%s regs" % c for c in chips) +
          " | spill st/ld | stack | lmem |")
    print("|---|" + "---:|" * len(chips) + "---:|---:|---:|")
    bad = []
    for name in sorted(rows):
        per_chip = rows[name]
        spills = max(i["spill_stores"] + i["spill_loads"] for i in per_chip.values())
        stack = max(i["stack"] for i in per_chip.values())
        lmem = max(i["lmem"] for i in per_chip.values())
        print("| `%s` | %s | %d | %d | %d |" % (
            name, " | ".join(str(per_chip[c]["registers"]) if c in per_chip else "-"
                             for c in chips), spills, stack, lmem))
        if name.startswith("spconv_build_") and (spills or stack or lmem):
            bad.append(name)
    print("%d kernels assembled for %s" % (len(rows), ", ".join(chips)))
    if args.check and bad:
        print("rulebook kernels with spills, stack or local memory: " + ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
