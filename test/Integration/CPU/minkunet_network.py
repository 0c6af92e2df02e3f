#!/usr/bin/env python3
"""The MinkUNet example (examples/minkunet.mlir) end to end.

Runs the example with spconv-run on a small generated scan and recomputes
it with spconv-ref for every conv (subm, downsampling, inverse, pointwise)
and numpy for ReLU, residual adds and skip concatenation, then compares.

usage: minkunet_network.py --root SRC --bin DIR --work DIR
"""
import argparse
import os

import numpy as np

from networks import csv, run, run_example

GRIDS = [[1024 >> i, 1024 >> i, 64 >> i] for i in range(5)]
ENCODER = [(32, 32), (32, 64), (64, 128), (128, 256)]
DECODER = [256, 128, 96, 96]




class Reference:
    """Replays the network; arguments are consumed in the example's order."""

    def __init__(self, bindir, work):
        self.bindir, self.work = bindir, work
        self.next_arg = 2
        self.count = 0

    def arg(self):
        path = os.path.join(self.work, "args", "arg%d.npy" % self.next_arg)
        self.next_arg += 1
        return path

    def tmp(self, name, array=None):
        path = os.path.join(self.work, "ref", "%03d_%s.npy" % (self.count, name))
        self.count += 1
        if array is not None:
            np.save(path, array.astype(np.float32))
        return path

    def ref(self, args):
        out = self.tmp("out")[:-4]
        run([os.path.join(self.bindir, "spconv-ref")] + args + ["--out-dir", out])
        return out

    def conv(self, kind, kernel, stride, grid, coords, x, bias=True):
        args = ["conv", "--kind", kind, "--kernel", str(kernel), "--stride", str(stride),
                "--grid", csv(grid), "--coords", coords, "--features", x, "--weight", self.arg()]
        if bias:
            args += ["--bias", self.arg()]
        out = self.ref(args)
        return os.path.join(out, "out0.npy"), np.load(os.path.join(out, "out1.npy"))

    def subm(self, coords, grid, x, kernel=3, bias=True, relu=True):
        _, y = self.conv("subm", kernel, 1, grid, coords, x, bias)
        return np.maximum(y, 0) if relu else y

    def res(self, coords, grid, x, cin, cout):
        a = self.subm(coords, grid, x)
        b = self.subm(coords, grid, self.tmp("a", a), relu=False)
        skip = np.load(x)
        if cin != cout:
            skip = self.subm(coords, grid, x, kernel=1, bias=False, relu=False)
        return np.maximum(b + skip, 0)

    def inverse(self, fine, grid, coarse, x):
        out = self.ref(["inverse", "--kernel", "2", "--stride", "2", "--grid", csv(grid),
                        "--coords", fine, "--source-coords", coarse, "--features", x,
                        "--weight", self.arg(), "--bias", self.arg()])
        return np.maximum(np.load(os.path.join(out, "out0.npy")), 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    opts = parser.parse_args()
    os.makedirs(os.path.join(opts.work, "ref"), exist_ok=True)
    w = lambda name: os.path.join(opts.work, name)
    num_inputs = run_example(opts.root, opts.bin, opts.work, "minkunet",
                             sites=4000, seed=3)

    r = Reference(opts.bin, opts.work)
    coords = [w("args/arg0.npy")]
    x = r.subm(coords[0], GRIDS[0], w("args/arg1.npy"))
    x = r.subm(coords[0], GRIDS[0], r.tmp("stem", x))
    skips = [x]
    for i, (cin, cout) in enumerate(ENCODER):
        down, y = r.conv("regular", 2, 2, GRIDS[i], coords[i], r.tmp("x", x))
        coords.append(down)
        x = r.res(down, GRIDS[i + 1], r.tmp("down", np.maximum(y, 0)), cin, cout)
        skips.append(x)
    for i, cout in enumerate(DECODER):
        level = 3 - i
        up = r.inverse(coords[level], GRIDS[level], coords[level + 1], r.tmp("x", x))
        cat = np.concatenate([up, skips[level]], axis=1)
        x = r.res(coords[level], GRIDS[level], r.tmp("cat", cat), cat.shape[1], cout)
    logits = r.subm(coords[0], GRIDS[0], r.tmp("x", x), kernel=1, relu=False)
    assert r.next_arg == num_inputs, "the replay must consume every argument"

    compare = os.path.join(opts.bin, "spconv-npy-compare")
    print(run([compare, w("out/out0.npy"), coords[0]]).strip())
    print(run([compare, w("out/out1.npy"), r.tmp("logits", logits),
               "--rtol", "1e-3", "--atol", "1e-4"]).strip())
    print("minkunet matches the reference")


if __name__ == "__main__":
    main()
