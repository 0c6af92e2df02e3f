#!/usr/bin/env python3
"""The static report of every kernel of spconv-to-cuda, as Markdown tables.

From ptxas -v, per kernel and architecture: registers, spill stores and
loads, stack frame, local memory, shared memory (with the dynamic shared
memory the kernel IR records), and the theoretical
occupancy at the launch's block size (--block-size, the pipeline's too).
From the kernel IR (the gpu.func as it goes to NVVM), per item of the
kernel's grid-stride loop (a pair x output channel for a conv, a site for a
rulebook kernel): global bytes loaded and stored, floating-point operations
(an fma counts two) and bytes per FLOP. Loops of constant trip count
multiply their body; both arms of an scf.if count (an upper bound); a loop
whose trip count is known only at run time is counted once and marked "+".

usage: ptxas-report.py --spconv-opt BIN --ptxas BIN [--chip sm_80]...
                       [--block-size 256] [--option KEY=VALUE]... [--check]
                       FILE.mlir...

--option passes more spconv-to-cuda options, e.g. max-unrolled-offsets=0.

With --check, exits 1 if any kernel spills, uses a stack frame or local
memory.
"""

import argparse
import re
import sys

from kernel_reports import (add_dynamic_shared, assemble, compile_kernels, occupancy,
                            tile_threads)


# ---------------------------------------------------------------- IR counts
KERNEL = re.compile(r"^\s*gpu\.func @(\w+)\(.*\bkernel\b")
CONSTANT = re.compile(r"^\s*(%[\w.]+) = arith\.constant (-?\d+) : index")
FOR = re.compile(r"scf\.for %[\w.]+ = (%[\w.]+) to (%[\w.]+) step (%[\w.]+)")
ACCESS = re.compile(r"\b(memref\.load|memref\.store|vector\.load|vector\.store|"
                    r"memref\.atomic_rmw)\b")
MEMREF = re.compile(r"memref<([^>]*)>")
VECTOR = re.compile(r"vector<([\dx]+)x\w+>")
FLOAT_OP = re.compile(r"\barith\.(addf|subf|mulf|divf|maximumf|minimumf|maxnumf|minnumf)\b"
                      r"|\bmath\.fma\b")
BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2,
         "i32": 4, "i64": 8, "index": 8}


def element_bytes(memref_body):
    """Bytes of the element type of `memref<...>`'s body, e.g. "?x64xf32"."""
    element = memref_body.split(",")[0].split("x")[-1].strip()
    return BYTES.get(element, 4)


def global_access(line):
    """(kind, bytes) of a load or store of global memory on `line`, or None."""
    op = ACCESS.search(line)
    if not op or " : " not in line:
        return None
    types = line.split(" : ", 1)[1]
    memref = MEMREF.search(types)
    if not memref or "workgroup" in memref.group(1) or "address_space" in memref.group(1):
        return None
    lanes = 1
    if vector := VECTOR.search(types):
        for d in vector.group(1).split("x"):
            lanes *= int(d)
    size = lanes * element_bytes(memref.group(1))
    if op.group(1) == "memref.atomic_rmw":
        return "both", size
    return ("stored" if op.group(1).endswith("store") else "loaded"), size


def count_kernels(ir):
    """Per kernel of the printed IR: global bytes loaded and stored and FLOPs
    per item of its first run-time loop (the grid-stride loop), and whether a
    further run-time loop was counted once."""
    counts = {}
    name = None
    for line in ir.splitlines():
        if m := KERNEL.search(line):
            name = m.group(1)
            counts[name] = {"loaded": 0, "stored": 0, "flops": 0, "dynamic": False}
            constants, stack, items_seen = {}, [1], False
            continue
        if name is None:
            continue
        stripped = line.strip()
        # Close regions first ("} else {" closes one and opens one).
        if stripped.startswith("}"):
            stack.pop()
            if not stack:
                name = None
                continue
        factor = stack[-1]
        if m := CONSTANT.search(line):
            constants[m.group(1)] = int(m.group(2))
        if m := FOR.search(line):
            lb, ub, step = (constants.get(v) for v in m.groups())
            if None in (lb, ub, step) or step <= 0:
                counts[name]["dynamic"] |= items_seen
                items_seen = True
                trip = 1
            else:
                trip = max(0, -(-(ub - lb) // step))
            stack.append(factor * trip)
            continue
        if access := global_access(line):
            kind, size = access
            for k in (("loaded", "stored") if kind == "both" else (kind,)):
                counts[name][k] += factor * size
        if FLOAT_OP.search(line):
            counts[name]["flops"] += factor * (2 if "fma" in line else 1)
        if stripped.endswith("{"):
            stack.append(factor)
    return counts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spconv-opt", required=True)
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--chip", action="append")
    parser.add_argument("--block-size", type=int, default=256)
    parser.add_argument("--option", action="append", default=[])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    chips = args.chip or ["sm_80", "sm_90"]

    rows = {}  # kernel -> chip -> resources
    traffic = {}  # kernel -> IR counts
    threads = {}  # kernel -> threads per block, where its tiles fix them
    for mlir in args.files:
        for chip in chips:
            ptx, ir = compile_kernels(args.spconv_opt, mlir, chip, args.block_size,
                                      args.option)
            for name, info in add_dynamic_shared(assemble(args.ptxas, ptx, chip),
                                                 ir).items():
                rows.setdefault(name, {})[chip] = info
            traffic.update(count_kernels(ir))
            threads.update(tile_threads(ir))

    print("| kernel | " + " | ".join("%s regs" % c for c in chips) +
          " | spill st/ld | stack | lmem | smem | threads | " +
          " | ".join("%s occ." % c for c in chips) + " |")
    print("|---|" + "---:|" * len(chips) + "---:|---:|---:|---:|---:|" + "---:|" * len(chips))
    bad = []
    for name in sorted(rows):
        per_chip = rows[name]
        spills = max(i["spill_stores"] + i["spill_loads"] for i in per_chip.values())
        stack = max(i["stack"] for i in per_chip.values())
        lmem = max(i["lmem"] for i in per_chip.values())
        smem = max(i["smem"] for i in per_chip.values())
        block = threads.get(name, args.block_size)
        occupancies = []
        for c in chips:
            o = occupancy(c, per_chip[c]["registers"], per_chip[c]["smem"],
                          block) if c in per_chip else None
            occupancies.append("-" if o is None else "%d%%" % round(100 * o))
        print("| `%s` | %s | %d | %d | %d | %d | %d | %s |" % (
            name, " | ".join(str(per_chip[c]["registers"]) if c in per_chip else "-"
                             for c in chips), spills, stack, lmem, smem, block,
            " | ".join(occupancies)))
        if spills or stack or lmem:
            bad.append(name)
    print()
    print("Global memory traffic per item, from the kernel IR (+: a loop of run-time "
          "trip count counted once; tiled kernels, whose threads share a tile, are "
          "modelled from their machine code by scripts/sass-report.py instead):")
    print()
    print("| kernel | bytes loaded | bytes stored | FLOPs | bytes/FLOP |")
    print("|---|---:|---:|---:|---:|")
    for name in sorted(traffic):
        if name in threads:
            continue  # a tile is no item: sass-report.py models tiled kernels
        t = traffic[name]
        mark = "+" if t["dynamic"] else ""
        ratio = ("%.2f" % ((t["loaded"] + t["stored"]) / t["flops"])) if t["flops"] else "-"
        print("| `%s` | %d%s | %d%s | %d%s | %s |" % (
            name, t["loaded"], mark, t["stored"], mark, t["flops"], mark, ratio))
    print()
    print("%d kernels assembled for %s at %d threads per block (tiled kernels: "
          "their tiles' threads)" % (len(rows), ", ".join(chips), args.block_size))
    if args.check and bad:
        print("kernels with spills, stack or local memory: " + ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
