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

usage: bench/training.py [--bin build/bin] [--sites N] [--width-divisor D]
           [--threads T] [--repeat R] [--processes P]
Prints a Markdown table.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "examples", "training"))
import train_minkunet  # noqa: E402


def run_ms(args, model, entry, inputs):
    """The warm run's wall time (ms) that spconv-run --time prints."""
    result = subprocess.run(
        [os.path.join(args.bin, "spconv-run"), model, "--entry", entry, "--time",
         "--repeat", str(args.repeat), "--threads", str(args.threads),
         "--output-dir", os.path.join(args.work, "out-" + entry)] + inputs,
        capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("spconv-run %s failed:\n%s" % (entry, result.stderr))
    return float(re.search(r"spconv-run: run\s+([\d.]+) ms", result.stderr).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--sites", type=int, default=20000)
    p.add_argument("--width-divisor", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3, help="runs per process (the last is timed)")
    p.add_argument("--processes", type=int, default=3)
    args = p.parse_args()
    args.work = tempfile.mkdtemp(prefix="bench-training-")
    model = os.path.join(args.work, "minkunet_train.mlir")
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "training",
                                                 "gen_minkunet_train.py"),
                    "--width-divisor", str(args.width_divisor), "-o", model], check=True)
    arrays = train_minkunet.prepare(args.work, model, args.sites, 3, 1.0)
    # Without the learning rate: the loss functions' arguments.
    inputs = train_minkunet.save_inputs(args.work, arrays[:3] + arrays[4:])
    forward, both = [], []
    for _ in range(args.processes):
        forward.append(run_ms(args, model, "minkunet_loss", inputs))
        both.append(run_ms(args, model, "minkunet_loss_and_gradients", inputs))
    f, fb = statistics.median(forward), statistics.median(both)
    print("MinkUNet (width divisor %d), %d voxels, %d thread(s), median of %d processes:\n"
          % (args.width_divisor, len(arrays[0]), args.threads, args.processes))
    print("| forward + loss (ms) | forward + loss + backward (ms) | backward (ms) | backward / forward |")
    print("|---:|---:|---:|---:|")
    print("| %.1f | %.1f | %.1f | %.2fx |" % (f, fb, fb - f, (fb - f) / f))


if __name__ == "__main__":
    main()
