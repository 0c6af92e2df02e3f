#!/usr/bin/env python3
"""A subm 3x1x1 conv with one input and one output channel, weights 1 and
sites two apart (no neighbours; a 1x1x1 conv would become a plain matmul),
so each output is its input as the tensor cores saw it: with --gpu-matmul=tf32 the
f32 features must come out rounded to TF32 (nearest, ties away from zero),
not truncated as tensor cores do with unrounded inputs, and the bias must
be added in f32, unrounded.

usage: tf32_rounding.py --bin DIR --work DIR [--run-arg ARG]...
"""

import argparse
import os
import subprocess
import sys

import numpy as np

ULP = 2.0 ** -10  # a TF32 unit in the last place at 1.0
CASES = [
    # (input, what TF32 rounding gives)
    (1.0 + ULP / 2, 1.0 + ULP),        # a tie: away from zero
    (-(1.0 + ULP / 2), -(1.0 + ULP)),  # a negative tie: away from zero
    (1.0 + ULP / 4, 1.0),              # below half: down
    (1.0 + 3 * ULP / 4, 1.0 + ULP),    # above half: up
    (3.0 + 2 * ULP, 3.0 + 2 * ULP),    # already a TF32 value (ulp 2^-9 here)
    (2.0 - ULP / 4, 2.0),              # rounds up into the next binade
]

MLIR = """\
func.func @f(%c: tensor<?x4xi32, #spconv.grid<[{n}, 1, 1]>>, %x: tensor<?x1xf32>,
             %w: tensor<3x1x1xf32>, %b: tensor<1xf32>)
    -> tensor<?x1xf32> {{
  %oc, %of = spconv.conv <subm, kernel = [3, 1, 1]> %c, %x, %w bias %b
      : tensor<?x4xi32, #spconv.grid<[{n}, 1, 1]>>, tensor<?x1xf32>,
        tensor<3x1x1xf32>, tensor<1xf32>
     -> tensor<?x4xi32, #spconv.grid<[{n}, 1, 1]>>, tensor<?x1xf32>
  return %of : tensor<?x1xf32>
}}
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--run-arg", action="append", default=[])
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    path = lambda name: os.path.join(args.work, name)
    n = len(CASES)
    with open(path("f.mlir"), "w") as f:
        f.write(MLIR.format(n=2 * n))
    coords = np.zeros((n, 4), dtype=np.int32)
    coords[:, 1] = 2 * np.arange(n)
    np.save(path("c.npy"), coords)
    np.save(path("x.npy"), np.array([[x] for x, _ in CASES], dtype=np.float32))
    np.save(path("w.npy"), np.ones((3, 1, 1), dtype=np.float32))
    bias = np.float32(ULP / 8)  # below TF32 resolution at 1.0, not at f32's
    np.save(path("b.npy"), np.array([bias], dtype=np.float32))
    command = [os.path.join(args.bin, "spconv-run"), path("f.mlir"),
               "--entry", "f", "--output-dir", path("out")] + args.run_arg
    for name in ("c", "x", "w", "b"):
        command += ["--input", path(name + ".npy")]
    subprocess.run(command, check=True)
    out = np.load(path("out/out0.npy"))[:, 0]
    failures = 0
    for (x, expected), actual in zip(CASES, out):
        want = np.float32(np.float32(expected) + bias)
        verdict = "ok" if actual == want else "WRONG"
        failures += verdict != "ok"
        print("%s %.10f -> %.10f (want %.10f)" % (verdict, x, actual, want))
    print("%d of %d exact" % (n - failures, n))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
