#!/usr/bin/env python3
"""Compiles one of the example networks and runs it on a generated LiDAR scan.

usage: run.py second|minkunet [--checkpoint FILE] [--layout spconv2|spconv1|RSKC|minkowski]
              [--sites N] [--threads T] [--target cpu|cuda] [--repeat R]
              [--seed S] [--save-weights FILE.npz]

--checkpoint takes a torch checkpoint (.pth / .pt, a state_dict or a dict
with one under "state_dict" or "model_state"; needs torch) or a numpy .npz
of the state_dict's arrays. Without one the layers keep their random
initial weights (--seed picks them); --save-weights writes the weights the
network ran with as .npz. Prints the compile time (from the cache after the
first run), the time of each call, the output's shape and a checksum.
"""
import argparse
import os
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))  # a checkout without pip install
import spconv_mlir  # noqa: E402

from models import MinkUNet, VoxelBackBone8x  # noqa: E402
from scan import scan  # noqa: E402

NETWORKS = {"second": (VoxelBackBone8x, [41, 1600, 1408]),
            "minkunet": (MinkUNet, [1024, 1024, 64])}


def load_checkpoint(path):
    if path.endswith(".npz"):
        return dict(np.load(path))
    import torch

    state = torch.load(path, map_location="cpu")
    for key in ("state_dict", "model_state", "model"):
        if isinstance(state, dict) and isinstance(state.get(key), dict):
            return state[key]
    return state


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("network", choices=sorted(NETWORKS))
    p.add_argument("--checkpoint")
    p.add_argument("--layout", default="spconv2", choices=spconv_mlir.LAYOUTS)
    p.add_argument("--sites", type=int, default=20000)
    p.add_argument("--threads", type=int)
    p.add_argument("--target", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save-weights")
    args = p.parse_args()

    factory, grid = NETWORKS[args.network]
    spconv_mlir.nn.manual_seed(args.seed)
    model = factory()
    if args.checkpoint:
        model.load_state_dict(load_checkpoint(args.checkpoint), layout=args.layout)
    start = time.perf_counter()
    net = spconv_mlir.compile(model, grid=grid, target=args.target, num_threads=args.threads)
    print("compiled %s in %.2f s: %s" % (type(model).__name__, time.perf_counter() - start,
                                         net.library_path))
    indices, features = scan(grid, args.sites, 4)
    print("scan: %d sites on %s" % (len(indices), grid))
    x = spconv_mlir.SparseConvTensor(features, indices, grid, batch_size=1)
    for _ in range(args.repeat):
        start = time.perf_counter()
        out = net(x)
        print("call: %.1f ms" % ((time.perf_counter() - start) * 1e3))
    print("output: %d sites x %d features on %s" % (out.features.shape[0],
                                                    out.features.shape[1], out.spatial_shape))
    print("checksum: %.6e" % float(np.abs(out.features).astype(np.float64).sum()))
    if args.save_weights:
        np.savez(args.save_weights, **model.state_dict())


if __name__ == "__main__":
    main()
