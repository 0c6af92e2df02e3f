#!/usr/bin/env python3
"""The performance model of the conv kernels, read from their machine code.

For each tiled kernel (those with a `spconv.tile`; --kernel picks others)
and architecture, assembles spconv-to-cuda's PTX with ptxas, disassembles
it with nvdisasm and reads the hot loop (one step of the kernel's main loop:
scripts/sass_model.py says how it is found and counted). Two tables:

1. Per step and per warp: instructions, MMAs (or FFMAs) and their share,
   global loads (and bytes per thread), cp.async copies, shared loads and
   stores, barriers, the instructions spent on 64-bit index high words, the
   longest chain of dependent global loads, the cp.async groups in flight
   at a step's wait (the pipeline depth), registers and occupancy.
2. Per step of a block, the cycles each SM pipe is busy (issue, tensor,
   FMA, shared memory, L1) with scripts/sass_costs.py's fixed figures, the
   exposed latency of one warp's step (an in-order scoreboard walk) shared
   by the blocks an SM holds, the bound that wins, and the share of the
   math peak it leaves: mma.sync and wgmma peaks kept apart. With
   --executed-gflop (bench/gpu_model.py's executed FLOPs for the layer) it
   also prints the layer's estimated time.

A model, not a measurement: bank conflicts, cache misses and tail effects
are not in it (docs/GPU.md, "Performance model").

usage: sass-report.py --spconv-opt BIN --ptxas BIN --nvdisasm BIN
                      [--chip sm_80]... [--option KEY=VALUE]...
                      [--kernel REGEX] [--executed-gflop X] FILE.mlir...

nvdisasm is not in the CUDA toolkit's compiler packages; scripts/
install-sass-tools.sh puts the pinned PyPI release into build/venv-sass.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import sass_costs
import sass_model
from kernel_reports import (add_dynamic_shared, assemble, compile_kernels, occupancy,
                            run, tile_threads)


def tool_release(binary):
    """"13.0" from a CUDA tool's --version."""
    text = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else "?"


def percent(x):
    return "%d%%" % round(100 * x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spconv-opt", required=True)
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--nvdisasm", required=True)
    parser.add_argument("--chip", action="append")
    parser.add_argument("--block-size", type=int, default=256)
    parser.add_argument("--option", action="append", default=[])
    parser.add_argument("--kernel", help="report the kernels whose name matches")
    parser.add_argument("--executed-gflop", type=float)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    chips = args.chip or ["sm_80", "sm_90"]
    for chip in chips:
        if chip not in sass_costs.CHIPS:
            sys.exit("sass-report: no machine figures for %s (scripts/sass_costs.py "
                     "has %s)" % (chip, ", ".join(sorted(sass_costs.CHIPS))))
    ptxas_release = tool_release(args.ptxas)
    nvdisasm_release = tool_release(args.nvdisasm)
    if ptxas_release.split(".")[0] != nvdisasm_release.split(".")[0]:
        sys.exit("sass-report: nvdisasm %s cannot be trusted with ptxas %s's code: "
                 "use one of the same major release" % (nvdisasm_release, ptxas_release))

    rows = []
    for mlir in args.files:
        for chip in chips:
            ptx, ir = compile_kernels(args.spconv_opt, mlir, chip, args.block_size,
                                      args.option)
            threads = tile_threads(ir)
            with tempfile.TemporaryDirectory() as work:
                cubin = os.path.join(work, "k.cubin")
                resources = add_dynamic_shared(assemble(args.ptxas, ptx, chip, cubin),
                                               ir)
                listing = run([args.nvdisasm, "-c", cubin]).stdout
            for name, body in sass_model.parse_listing(listing).items():
                if args.kernel:
                    if not re.search(args.kernel, name):
                        continue
                elif name not in threads:
                    continue
                rows.append(analyse(name, chip, body, resources[name],
                                    threads.get(name, args.block_size)))

    print("Machine code from ptxas %s, read by nvdisasm %s; figures from "
          "scripts/sass_costs.py." % (ptxas_release, nvdisasm_release))
    print()
    print("Per step of the hot loop, per warp (~: an inner loop's trip count "
          "estimated; a forward branch's both arms counted):")
    print()
    print("| kernel | chip | regs | occupancy | instructions | math | math share | "
          "LDG (B/thread) | LDGSTS | STS | LDS+LDSM | barriers | 64-bit index | "
          "load chain | cp.async depth |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        c = r["counts"]
        if c is None:
            print("| `%s` | %s | %d | %s | no hot loop |" % (
                r["name"], r["chip"], r["registers"], percent(r["occupancy"])))
            continue
        mark = "~" if c["estimated"] else ""
        math = "%d %s" % (c["mma"], r["math_unit"]) if c["mma"] else "%d FFMA" % c["ffma"]
        print("| `%s` | %s | %d | %s | %d%s | %s | %s | %d (%d) | %d | %d | %d | %d | "
              "%d | %d | %d |" % (
                  r["name"], r["chip"], r["registers"], percent(r["occupancy"]),
                  c["instructions"], mark, math, percent(r["math_share"]),
                  c["global_load"], c["global_load_bytes"], c["async_copy"],
                  c["shared_store"], c["shared_load"], c["barrier"], c["wide_index"],
                  c["load_chain"], c["pipeline_depth"]))
    print()
    print("Per step of a block, SM cycles by pipe; latency: one warp's step "
          "(in-order scoreboard) over the blocks an SM holds:")
    print()
    header = ("| kernel | chip | issue | tensor | FMA | shared | L1 | latency / "
              "blocks | bound | of the math peak |")
    if args.executed_gflop:
        header += " layer estimate |"
    print(header)
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|" +
          ("---:|" if args.executed_gflop else ""))
    for r in rows:
        if r["counts"] is None:
            continue
        p = r["pipes"]
        line = "| `%s` | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f / %d | %s | %s (%s) |" % (
            r["name"], r["chip"], p["issue"], p["mma"], p["ffma"], p["shared"], p["l1"],
            r["latency"], r["blocks"], r["limiter"], percent(r["peak_share"]), r["peak"])
        if args.executed_gflop:
            line += " %.0f us |" % layer_time(r, args.executed_gflop)
        print(line)
    return 0


def analyse(name, chip, body, resources, threads):
    costs = sass_costs.CHIPS[chip]
    warps = -(-threads // 32)
    occ = occupancy(chip, resources["registers"], resources["smem"], threads) or 0
    blocks = max(1, round(occ * 64 / warps))
    row = {"name": name, "chip": chip, "registers": resources["registers"],
           "occupancy": occ, "blocks": blocks, "warps": warps, "counts": None}
    found = sass_model.loops(body)
    hot = sass_model.hot_loop(body, found)
    if hot is None:
        return row
    counts = sass_model.profile(body, hot, found)
    pipes = sass_model.pipe_cycles(counts, costs, warps)
    latency = sass_model.simulate(body, hot, found, costs)
    bounds = dict(pipes)
    bounds["latency"] = latency / blocks
    limiter = max(bounds, key=bounds.get)
    math = "mma" if counts["mma"] else "ffma"
    row.update(counts=counts, pipes=pipes, latency=latency, limiter=limiter,
               bound=bounds[limiter], math_unit="HGMMA" if counts["wgmma"] else "HMMA",
               math_share=(counts["mma"] or counts["ffma"]) / max(1, counts["instructions"]),
               peak_share=pipes[math] / bounds[limiter] if bounds[limiter] else 0,
               peak="wgmma" if counts["wgmma"] else "mma.sync" if counts["mma"] else "FFMA")
    return row


def layer_time(row, executed_gflop):
    """Microseconds for a layer whose steps execute `executed_gflop`."""
    costs = sass_costs.CHIPS[row["chip"]]
    c = row["counts"]
    flop_per_step = (c["mma_flop"] if c["mma"] else c["ffma"] * 64) * row["warps"]
    steps = executed_gflop * 1e9 / flop_per_step
    cycles = steps * row["bound"] / costs["sms"]
    return cycles / (costs["clock_ghz"] * 1e3)


if __name__ == "__main__":
    sys.exit(main())
