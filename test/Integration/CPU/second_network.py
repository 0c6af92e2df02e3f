#!/usr/bin/env python3
"""SECOND's middle encoder (examples/second_middle_encoder.mlir) end to end.

Runs the example with spconv-run on a small generated LiDAR scan and
recomputes it layer by layer with spconv-ref (and numpy for the ReLUs),
then compares the outputs.

usage: second_network.py --root SRC --bin DIR --work DIR
"""
import argparse
import os

import numpy as np

from networks import csv, run, run_example

# (kind, kernel, stride, padding, input grid) per conv, in the example's
# order; every conv has a bias and is followed by a ReLU.
KITTI = [41, 1600, 1408]
S2, S4, S8 = [21, 800, 704], [11, 400, 352], [5, 200, 176]
LAYERS = [
    ("subm", [3, 3, 3], [1, 1, 1], [1, 1, 1], KITTI),
    ("subm", [3, 3, 3], [1, 1, 1], [1, 1, 1], KITTI),
    ("regular", [3, 3, 3], [2, 2, 2], [1, 1, 1], KITTI),
    ("subm", [3, 3, 3], [1, 1, 1], [1, 1, 1], S2),
    ("subm", [3, 3, 3], [1, 1, 1], [1, 1, 1], S2),
    ("regular", [3, 3, 3], [2, 2, 2], [1, 1, 1], S2),
    ("subm", [3, 3, 3], [1, 1, 1], [1, 1, 1], S4),
    ("subm", [3, 3, 3], [1, 1, 1], [1, 1, 1], S4),
    ("regular", [3, 3, 3], [2, 2, 2], [0, 1, 1], S4),
    ("subm", [3, 3, 3], [1, 1, 1], [1, 1, 1], S8),
    ("subm", [3, 3, 3], [1, 1, 1], [1, 1, 1], S8),
    ("regular", [3, 1, 1], [2, 1, 1], [0, 0, 0], S8),
]




def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    opts = parser.parse_args()
    os.makedirs(opts.work, exist_ok=True)
    w = lambda name: os.path.join(opts.work, name)
    run_example(opts.root, opts.bin, opts.work, "second_middle_encoder",
                sites=3000, seed=7)

    coords, features = w("args/arg0.npy"), w("args/arg1.npy")
    for index, (kind, kernel, stride, padding, grid) in enumerate(LAYERS):
        layer = w("layer%d" % index)
        run([os.path.join(opts.bin, "spconv-ref"), "conv", "--kind", kind,
             "--kernel", csv(kernel), "--stride", csv(stride), "--padding", csv(padding),
             "--grid", csv(grid), "--coords", coords, "--features", features,
             "--weight", w("args/arg%d.npy" % (2 + 2 * index)),
             "--bias", w("args/arg%d.npy" % (3 + 2 * index)), "--out-dir", layer])
        relu = np.maximum(np.load(os.path.join(layer, "out1.npy")), 0)
        np.save(os.path.join(layer, "relu.npy"), relu)
        coords, features = os.path.join(layer, "out0.npy"), os.path.join(layer, "relu.npy")

    compare = os.path.join(opts.bin, "spconv-npy-compare")
    print(run([compare, w("out/out0.npy"), coords]).strip())
    print(run([compare, w("out/out1.npy"), features, "--rtol", "1e-3", "--atol", "1e-4"]).strip())
    print("second_middle_encoder matches the reference")


if __name__ == "__main__":
    main()
