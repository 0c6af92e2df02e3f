#!/usr/bin/env python3
# ===- kernel_store.py - Compile times with the kernel-level store ----=== #
#
# Part of the spconv-mlir project.
#
# ===------------------------------------------------------------------=== #
"""What spconv-run's compile costs with and without kernels in the store
(docs/Compiler.md, "The kernel store"), on the example networks and
MinkUNet's training step, one after the other on one machine:

- inline: --no-cache --outline-kernels=false, every layer lowered inline
  (the compile before kernels existed), and its run time;
- cold: an empty store, every kernel compiled and stored;
- new text: the module's text with a comment added (a module the store has
  never seen), all of its kernels stored: the front end, the main
  function's lowering and JIT, the kernels loaded (issue 39's "network none
  of whose kernels is new", goal 100 ms);
- load: the same text again, loaded whole;
and the run time of each, after checking that every way's outputs are
bit-identical to the inline compile's.

usage: python3 bench/kernel_store.py [--bin build/bin] [--sites N]
           [--threads T] [--repeat R] [--processes P]
(any Python with numpy)
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from compile_ab import networks, same_outputs  # noqa: E402  (bench/compile_ab.py)
from run import phase_ms  # noqa: E402  (bench/run.py)

COMPILE_PHASES = ("front end", "kernels", "lower", "jit", "store", "load")


def spconv_run(args, model, entry, inputs, out, extra):
    result = subprocess.run(
        [os.path.join(args.bin, "spconv-run"), model, "--entry", entry, "--time",
         "--repeat", str(args.repeat), "--num-threads", str(args.threads),
         "--output-dir", out] + inputs + extra, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("spconv-run %s %s failed:\n%s" % (entry, " ".join(extra), result.stderr))
    compile_ms = sum(t for t in (phase_ms(result.stderr, p) for p in COMPILE_PHASES)
                     if t == t)
    return compile_ms, phase_ms(result.stderr, "run")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--sites", type=int, default=20000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3, help="calls per process (the last is timed)")
    p.add_argument("--processes", type=int, default=3)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="bench-kernel-store-")
    ways = ("inline", "cold", "new text", "load")
    rows = []
    for name, model, entry, inputs in networks(args, work):
        samples = {way: [] for way in ways}
        with open(model) as f:
            text = f.read()
        for i in range(args.processes):
            store = os.path.join(work, "store")
            shutil.rmtree(store, ignore_errors=True)
            variant = os.path.join(work, "%s-%d.mlir" % (entry, i))
            with open(variant, "w") as f:
                f.write(text + "\n// a module the store has not seen: %d\n" % i)
            runs = (("inline", model, ["--no-cache", "--outline-kernels=false"]),
                    ("cold", model, ["--cache-dir", store]),
                    ("new text", variant, ["--cache-dir", store]),
                    ("load", variant, ["--cache-dir", store]))
            for way, source, extra in runs:
                out = os.path.join(work, "out", entry, way)
                samples[way].append(spconv_run(args, source, entry, inputs, out, extra))
                if i == 0 and way != "inline" and not same_outputs(
                        os.path.join(work, "out", entry, "inline"), out):
                    sys.exit("%s: the outputs of '%s' differ from the inline compile's"
                             % (name, way))
        rows.append((name, {way: (statistics.median(s[0] for s in samples[way]),
                                  statistics.median(s[1] for s in samples[way]))
                            for way in ways}))
    print("spconv-run, %d sites (LiDAR scan, seed 5), %d thread(s), medians of %d processes; "
          "outputs bit-identical to the inline compile's.\n"
          % (args.sites, args.threads, args.processes))
    print("| network | inline compile (s) | cold, kernels stored (s) | new text, kernels "
          "in the store (ms) | load (ms) | inline run (ms) | kernels run (ms) | run ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, m in rows:
        print("| %s | %.2f | %.2f | %.0f | %.1f | %.1f | %.1f | %.3f |"
              % (name, m["inline"][0] / 1000, m["cold"][0] / 1000, m["new text"][0],
                 m["load"][0], m["inline"][1], m["cold"][1], m["cold"][1] / m["inline"][1]))


if __name__ == "__main__":
    main()
