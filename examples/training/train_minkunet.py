#!/usr/bin/env python3
"""Trains MinkUNet (examples/minkunet_train.mlir) on one synthetic LiDAR scan.

Generates a scan with bench/workloads/gen_workload.py, labels every voxel
with one of 19 classes by height band (a quantile of its first spatial
coordinate, so the classes are balanced and learnable from the features),
initialises the weights (He, seeded), and runs @train with spconv-run: its
steps of SGD on the mean cross-entropy, each a forward pass and the backward
pass spconv-generate-backward derived. Prints the loss of every step and
fails unless each step lowered it.

usage: train_minkunet.py [--bin DIR] [--sites N] [--lr LR] [--work DIR] [--target cpu|gpu-emulator]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODEL = os.path.join(ROOT, "examples", "minkunet_train.mlir")
GRID = np.array([1024, 1024, 64])
CLASSES = 19


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("%s failed:\n%s%s" % (" ".join(args), result.stdout, result.stderr))
    return result.stdout




def prepare(work, model, sites, seed, lr,
            generator=os.path.join(ROOT, "bench", "workloads", "gen_workload.py")):
    """@train's arguments for a generated scan of about `sites` voxels:
    coordinates, features, one-hot labels, the learning rate, He-initialised
    weights and zero biases (shapes read from `model`'s @train). The GPU kit
    calls it too, with the workload generator it carries."""
    rng = np.random.default_rng(seed)
    # The scan, rescaled onto the network's grid.
    scan = os.path.join(work, "scan")
    run([sys.executable, generator, "lidar", scan, "--sites", str(sites), "--seed", str(seed)])
    coords = np.load(scan + "_coords.npy").astype(np.int64)
    extent = coords[:, 1:].max(axis=0) + 1
    coords[:, 1:] = coords[:, 1:] * GRID // np.maximum(extent, GRID)
    coords = np.unique(coords, axis=0).astype(np.int32)
    n = len(coords)

    # Features: normalised position and a constant; labels: height bands.
    position = coords[:, 1:].astype(np.float32) / GRID.astype(np.float32)
    features = np.concatenate([position, np.ones((n, 1), np.float32)], axis=1)
    height = coords[:, 1].astype(np.float64) + rng.uniform(0, 1e-3, n)
    bands = np.quantile(height, np.linspace(0, 1, CLASSES + 1)[1:-1])
    onehot = np.eye(CLASSES, dtype=np.float32)[np.searchsorted(bands, height)]

    # The parameters' shapes, from @train's signature (lr, tensor<f32>, and
    # the dynamic tensors have none).
    signature = re.search(r"func\.func @train\((.*?)\)\s*->", open(model).read(), re.S).group(1)
    shapes = [tuple(int(v) for v in s.rstrip("x").split("x")) for s in
              re.findall(r"tensor<((?:\d+x)+)f32>", signature)]
    params = []
    for shape in shapes:
        if len(shape) == 3:  # K x Cin x Cout: He initialisation
            params.append(rng.normal(0, np.sqrt(2.0 / (shape[0] * shape[1])), shape))
        else:  # bias
            params.append(np.zeros(shape))
    return [coords, features, onehot, np.array(lr, np.float32)] + \
        [a.astype(np.float32) for a in params]


def save_inputs(work, arrays):
    """Writes argI.npy per array; returns spconv-run's --input arguments."""
    inputs = []
    for i, a in enumerate(arrays):
        path = os.path.join(work, "arg%d.npy" % i)
        np.save(path, a)
        inputs += ["--input", path]
    return inputs


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                   help="the folder with spconv-run (default: build/bin)")
    p.add_argument("--sites", type=int, default=6000, help="voxels in the scan")
    p.add_argument("--lr", type=float, default=1.0, help="SGD learning rate")
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--target", default="cpu", choices=["cpu", "gpu-emulator"])
    p.add_argument("--work", help="where inputs and outputs go (default: a temporary folder)")
    args = p.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="minkunet-train-")
    os.makedirs(work, exist_ok=True)
    arrays = prepare(work, MODEL, args.sites, args.seed, args.lr)
    inputs = save_inputs(work, arrays)
    out = os.path.join(work, "out")
    run([os.path.join(args.bin, "spconv-run"), MODEL, "--entry", "train", "--output-dir", out,
         "--target", args.target] + inputs)
    losses = np.load(os.path.join(out, "out0.npy"))
    print("MinkUNet training on %d voxels, %d parameter tensors, lr %g, %s"
          % (len(arrays[0]), len(arrays) - 4, args.lr, args.target))
    for step, loss in enumerate(losses):
        print("step %d: loss %.4f" % (step, loss))
    decreasing = bool(np.all(np.isfinite(losses)) and np.all(np.diff(losses) < 0))
    print("the loss %s" % ("decreases at every step" if decreasing
                           else "does NOT decrease at every step"))
    if not decreasing:
        sys.exit(1)


if __name__ == "__main__":
    main()
