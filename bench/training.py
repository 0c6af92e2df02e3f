#!/usr/bin/env python3
# ===- training.py - A whole network's backward against its forward ---=== #
#
# Part of the spconv-mlir project.
#
# ===------------------------------------------------------------------=== #
"""Times MinkUNet's backward, as spconv-generate-backward derives it, against
its forward pass, on gen_workload.py's LiDAR scan.

Generates examples/minkunet_train.mlir's network at --width-divisor (1: the
example's widths, 32 to 256 channels) and runs, alternately in one session,
@minkunet_loss (forward and loss) and @minkunet_loss_and_gradients (forward,
loss and every gradient) with spconv-run --time --repeat, taking the last
(warm) run of each process and the median over --processes processes.
Backward alone is their difference.

With --torch-python (a Python with torch 2.4 or later, such as
build/venv-torch/bin/python), the same network, parameters and loss written
with spconv_mlir.torch (bench/training_torch.py: one custom op per sparse
op, autograd by torch) run beside them at the same thread count, in a
process of their own per --processes: the loss and every parameter gradient
are checked against @minkunet_loss_and_gradients' first, then forward + loss
and backward are timed (the median of --repeat steps after a first).

usage: bench/training.py [--bin build/bin] [--sites N] [--width-divisor D]
           [--threads T] [--repeat R] [--processes P] [--torch-python PY]
           [--torch-openmp libomp|libgomp]
Prints a Markdown table.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "examples", "training"))
import gen_minkunet_train  # noqa: E402
import train_minkunet  # noqa: E402

import torch_env  # noqa: E402  (bench/, the script's directory)


def run_ms(args, model, entry, inputs):
    """The warm run's wall time (ms) that spconv-run --time prints."""
    result = subprocess.run(
        [os.path.join(args.bin, "spconv-run"), model, "--entry", entry, "--time",
         "--repeat", str(args.repeat), "--num-threads", str(args.threads),
         "--output-dir", os.path.join(args.work, "out-" + entry)] + inputs,
        capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("spconv-run %s failed:\n%s" % (entry, result.stderr))
    return float(re.search(r"spconv-run: run\s+([\d.]+) ms", result.stderr).group(1))


def run_torch(args):
    """bench/training_torch.py's forward and backward times (ms)."""
    env = torch_env.child_env(args.threads, args.torch_openmp)
    result = subprocess.run(
        [args.torch_python, os.path.join(ROOT, "bench", "training_torch.py"), "--work",
         args.work, "--width-divisor", str(args.width_divisor), "--threads", str(args.threads),
         "--repeat", str(args.repeat)], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit("training_torch.py failed:\n%s" % result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def torch_agreement(args, names):
    """The largest difference, over its scale, between spconv_mlir.torch's
    loss or a parameter gradient and @minkunet_loss_and_gradients'."""
    import numpy as np

    theirs = np.load(os.path.join(args.work, "torch-gradients.npz"))
    out = os.path.join(args.work, "out-minkunet_loss_and_gradients")
    # Results: the loss, the features' and labels' gradients, then the parameters'.
    ours = [np.load(os.path.join(out, "out%d.npy" % i)) for i in range(3 + len(names))]
    pairs = [(ours[0], theirs["loss"])] + [(ours[3 + i], theirs[n]) for i, n in enumerate(names)]
    return max(float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-30)) for a, b in pairs)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--sites", type=int, default=20000)
    p.add_argument("--width-divisor", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3, help="runs per process (the last is timed)")
    p.add_argument("--processes", type=int, default=3)
    p.add_argument("--torch-python",
                   help="a Python with torch >= 2.4: times spconv_mlir.torch beside")
    torch_env.add_torch_openmp_option(p)
    args = p.parse_args()
    args.work = tempfile.mkdtemp(prefix="bench-training-")
    model = os.path.join(args.work, "minkunet_train.mlir")
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "training",
                                                 "gen_minkunet_train.py"),
                    "--width-divisor", str(args.width_divisor), "-o", model], check=True)
    arrays = train_minkunet.prepare(args.work, model, args.sites, 3, 1.0)
    # Without the learning rate: the loss functions' arguments.
    inputs = train_minkunet.save_inputs(args.work, arrays[:3] + arrays[4:])
    forward, both, torch_runs = [], [], []
    for _ in range(args.processes):
        forward.append(run_ms(args, model, "minkunet_loss", inputs))
        both.append(run_ms(args, model, "minkunet_loss_and_gradients", inputs))
        if args.torch_python:
            torch_runs.append(run_torch(args))
    f, fb = statistics.median(forward), statistics.median(both)
    print("MinkUNet (width divisor %d), %d voxels, %d thread(s), median of %d processes:\n"
          % (args.width_divisor, len(arrays[0]), args.threads, args.processes))
    print("| path | forward + loss (ms) | forward + loss + backward (ms) | backward (ms) "
          "| backward / forward |")
    print("|---|---:|---:|---:|---:|")
    print("| whole network, spconv-run | %.1f | %.1f | %.1f | %.2fx |"
          % (f, fb, fb - f, (fb - f) / f))
    if torch_runs:
        names = [name for name, _ in gen_minkunet_train.params(args.width_divisor)]
        worst = torch_agreement(args, names)
        tf = statistics.median(r["forward_ms"] for r in torch_runs)
        tb = statistics.median(r["backward_ms"] for r in torch_runs)
        print("| spconv_mlir.torch (torch on %s) | %.1f | %.1f | %.1f | %.2fx |"
              % (args.torch_openmp, tf, tf + tb, tb, tb / tf))
        print("\nspconv_mlir.torch / whole network: %.2fx (forward + loss + backward); loss "
              "and parameter gradients agree to %.1e of their scale (f32)." % ((tf + tb) / fb, worst))


if __name__ == "__main__":
    main()
