#!/usr/bin/env python3
"""Subm 3x3x3 on the KITTI grid: the compiled path against the baselines,
side by side in one run.

usage: compare_subm.py --bin BUILD/bin --baselines BUILD/bench/baselines
                       --coords SITES.npy [--coords ...] [--repeat R]
                       [--threads 1,2] [--work DIR]

For every coordinates file and thread count it runs, interleaved, R times:
spconv-run --profile --repeat 3 on bench/models/subm.mlir (rulebook build,
16->16 and 64->64 conv, timed on the third call, warm like the baselines,
which time after a warm-up), spconv-v1-cpu (spconv v1's CPU algorithm), sgemm-roofline
(OpenBLAS sgemm on the gathered rows of each offset) and merge-join-count;
and prints a Markdown table of medians and ratios.
"""
import argparse
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import metrics, profile_table, run as run_tool  # noqa: E402  (bench/run.py)


def run(args):
    """stdout of `args`; exits if it fails."""
    return run_tool(args).stdout


def profile(text):
    """ms of the build and of the conv from spconv-run --profile."""
    times = {op: ms for ms, _, op in profile_table(text)}
    return times.get("build_rulebook"), times.get("rulebook_conv")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--baselines", required=True)
    parser.add_argument("--coords", action="append", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--work", default="/tmp/spconv-compare-subm")
    opts = parser.parse_args()
    os.makedirs(opts.work, exist_ok=True)
    model = os.path.join(HERE, "models", "subm.mlir")
    rng = np.random.default_rng(0)

    print("| workload | threads | ours: rulebook | v1: rulebook | ratio | ours: 16->16 | v1: 16->16 | ratio "
          "| ours: 64->64 | sgemm 64->64 | ours / sgemm | merge-join count (half) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for coords in opts.coords:
        name = os.path.splitext(os.path.basename(coords))[0]
        n = len(np.load(coords))
        inputs = {}
        for c in (16, 64):
            f = os.path.join(opts.work, "%s_f%d.npy" % (name, c))
            w = os.path.join(opts.work, "%s_w%d.npy" % (name, c))
            np.save(f, rng.standard_normal((n, c)).astype(np.float32))
            np.save(w, (rng.standard_normal((27, c, c)) / np.sqrt(27 * c)).astype(np.float32))
            inputs[c] = ["--input", coords, "--input", f, "--input", w]
        for threads in opts.threads.split(","):
            samples = {k: [] for k in ("build", "c16", "c64", "v1_rb", "v1_c16", "gemm64", "merge")}
            base = ["--coords", coords, "--grid", "41,1600,1408", "--threads", threads, "--repeat", "1"]
            for _ in range(opts.repeat):
                for c in (16, 64):
                    out = run([os.path.join(opts.bin, "spconv-run"), model, "--entry", "subm%d" % c,
                               "--output-dir", os.path.join(opts.work, "out"), "--profile",
                               "--repeat", "3", "--num-threads", threads] + inputs[c])
                    build, conv = profile(out)
                    samples["build"].append(build)
                    samples["c%d" % c].append(conv)
                v1 = metrics(run([os.path.join(opts.baselines, "spconv-v1-cpu")] + base +
                                 ["--cin", "16", "--cout", "16"]))
                samples["v1_rb"].append(v1["rulebook_ms"])
                samples["v1_c16"].append(v1["conv_ms"])
                gemm = metrics(run([os.path.join(opts.baselines, "sgemm-roofline")] + base +
                                   ["--cin", "64", "--cout", "64"]))
                samples["gemm64"].append(gemm["gemm_hot_ms"])
                merge = metrics(run([os.path.join(opts.baselines, "merge-join-count")] + base))
                samples["merge"].append(merge["merge_half_ms"])
            m = {k: statistics.median(v) for k, v in samples.items()}
            print("| %s (%d sites) | %s | %.1f | %.1f | %.2fx | %.1f | %.1f | %.2fx | %.1f | %.1f | %.2f | %.1f |" % (
                name, n, threads, m["build"], m["v1_rb"], m["v1_rb"] / m["build"],
                m["c16"], m["v1_c16"], m["v1_c16"] / m["c16"],
                m["c64"], m["gemm64"], m["c64"] / m["gemm64"], m["merge"]))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
