#!/usr/bin/env python3
# ===- compile_ab.py - Two builds' compile and run times, side by side --=== #
#
# Part of the spconv-mlir project.
#
# ===------------------------------------------------------------------=== #
"""Cold compile and run time of two builds of spconv-run, side by side in
one run: A (--bin-a, say a build of main before a change) and B (--bin-b,
the change), on the example networks and MinkUNet's training step.

For each network the two builds run alternately, --processes times each:
spconv-run --no-cache --time --repeat R --num-threads T, which prints the
lowering and JIT times of the cold compile and the last (warm) call's run
time. Their outputs are checked to be bit-identical first. Prints medians
and B / A per figure: issue 39 asks that a compile-time change keep the run
time within 3 %.

usage: build/venv-torch/bin/python bench/compile_ab.py --bin-a OLD/bin
           [--bin-b build/bin] [--sites N] [--threads T] [--repeat R]
           [--processes P]
(any Python with numpy; examples/training needs numpy only)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "training"))
import train_minkunet  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench"))
from run import phase_ms  # noqa: E402  (bench/run.py)


def spconv_run(args, binary, model, entry, inputs, out):
    result = subprocess.run(
        [os.path.join(binary, "spconv-run"), model, "--entry", entry, "--no-cache", "--time",
         "--repeat", str(args.repeat), "--num-threads", str(args.threads),
         "--output-dir", out] + inputs, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("%s/spconv-run %s failed:\n%s" % (binary, entry, result.stderr))
    return {phase: phase_ms(result.stderr, phase) for phase in ("lower", "jit", "run")}


def same_outputs(a, b):
    names = sorted(n for n in os.listdir(a) if n.endswith(".npy"))
    return names == sorted(n for n in os.listdir(b) if n.endswith(".npy")) and all(
        np.array_equal(np.load(os.path.join(a, n)), np.load(os.path.join(b, n)), equal_nan=True)
        for n in names)


def networks(args, work):
    """(name, model, entry, inputs) of each network measured."""
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "workloads", "gen_workload.py"),
                    "lidar", os.path.join(work, "scan"), "--sites", str(args.sites),
                    "--seed", "5"], check=True, capture_output=True)
    coords = os.path.join(work, "scan_coords.npy")
    found = []
    for entry in ("second_middle_encoder", "minkunet"):
        model = os.path.join(ROOT, "examples", entry + ".mlir")
        made = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_inputs.py"),
                               model, entry, "--coords", coords, "--out-dir",
                               os.path.join(work, entry)],
                              check=True, capture_output=True, text=True)
        found.append((entry, model, entry, made.stdout.split()))
    model = os.path.join(ROOT, "examples", "minkunet_train.mlir")
    train_dir = os.path.join(work, "train")
    os.makedirs(train_dir)
    arrays = train_minkunet.prepare(train_dir, model, args.sites, 3, 1.0)
    # Without the learning rate: the loss function's arguments.
    inputs = train_minkunet.save_inputs(train_dir, arrays[:3] + arrays[4:])
    found.append(("minkunet training step", model, "minkunet_loss_and_gradients", inputs))
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin-a", required=True, help="the first build's bin/ (the baseline)")
    p.add_argument("--bin-b", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--sites", type=int, default=20000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3, help="calls per process (the last is timed)")
    p.add_argument("--processes", type=int, default=3)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="bench-compile-ab-")
    rows = []
    for name, model, entry, inputs in networks(args, work):
        samples = {"a": [], "b": []}
        for i in range(args.processes):
            for side, binary in (("a", args.bin_a), ("b", args.bin_b)):
                out = os.path.join(work, "out", entry, side)
                samples[side].append(spconv_run(args, binary, model, entry, inputs, out))
            if i == 0 and not same_outputs(os.path.join(work, "out", entry, "a"),
                                           os.path.join(work, "out", entry, "b")):
                sys.exit("%s: the two builds' outputs differ" % name)
        med = {side: {k: statistics.median(s[k] for s in samples[side])
                      for k in ("lower", "jit", "run")} for side in samples}
        rows.append((name, med["a"], med["b"]))
    print("spconv-run --no-cache, %d sites (LiDAR scan, seed 5), %d thread(s), medians of %d "
          "processes each, A and B alternating; outputs bit-identical.\n"
          % (args.sites, args.threads, args.processes))
    print("| network | A lower + JIT (s) | B lower + JIT (s) | B / A | A run (ms) | B run (ms) "
          "| B / A |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, a, b in rows:
        ca, cb = (a["lower"] + a["jit"]) / 1000, (b["lower"] + b["jit"]) / 1000
        print("| %s | %.2f | %.2f | %.2f | %.1f | %.1f | %.3f |"
              % (name, ca, cb, cb / ca, a["run"], b["run"], b["run"] / a["run"]))


if __name__ == "__main__":
    main()
