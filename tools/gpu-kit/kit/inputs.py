"""Inputs the phases share: the LiDAR scan, the networks' arguments, the
layers' arguments and their rulebook's pair count.

The scan comes from the benchmark's workload generator and the networks'
weights from scripts/make_inputs.py, both shipped in the kit, so the GPU
machine computes on what the benchmarks here compute on.
"""
import os
import subprocess
import sys

import numpy as np

from .context import bf16_bits

PY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scan(work, sites, seed=1):
    """int32 (batch, z, y, x) rows of a LiDAR scan on the KITTI grid."""
    prefix = os.path.join(work, "scan_%d_%d" % (sites, seed))
    if not os.path.exists(prefix + "_coords.npy"):
        os.makedirs(work, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(PY, "gen_workload.py"), "lidar", prefix,
                        "--sites", str(sites), "--seed", str(seed)],
                       check=True, capture_output=True, text=True)
    return np.load(prefix + "_coords.npy")


def training_arguments(ctx, sites):
    """The training step's arguments as examples/training/train_minkunet.py
    makes them for @train (scan, one-hot labels, He weights), less the
    learning rate, which only @train takes."""
    import train_minkunet
    work = os.path.join(ctx.work, "train_%d" % sites)
    os.makedirs(work, exist_ok=True)
    args = train_minkunet.prepare(work, os.path.join(ctx.root, "examples", "minkunet_train.mlir"),
                                  sites, 1, 1.0, generator=os.path.join(PY, "gen_workload.py"))
    return args[:3] + args[4:]


def network_arguments(ctx, name, sites):
    """The arguments of a network function: the scan rescaled onto its
    grid, features and He-scaled weights (make_inputs.py)."""
    if name == "network/minkunet_train":
        return training_arguments(ctx, sites)
    info = ctx.functions[name]
    source = {"network/second": "second_middle_encoder.mlir",
              "network/minkunet": "minkunet.mlir",
              "network/minkunet_train": "minkunet_train.mlir"}[name]
    coords = os.path.join(ctx.work, "scan_%d_1_coords.npy" % sites)
    scan(ctx.work, sites)
    out = os.path.join(ctx.work, "inputs", name.replace("/", "--"))
    os.makedirs(out, exist_ok=True)
    printed = subprocess.run(
        [sys.executable, os.path.join(PY, "make_inputs.py"),
         os.path.join(ctx.root, "examples", source), info["entry"], "--coords", coords,
         "--out-dir", out], check=True, capture_output=True, text=True).stdout.split()
    paths = [printed[i + 1] for i, a in enumerate(printed) if a == "--input"]
    return [np.load(p) for p in paths]


def layer_arguments(coords, channels, element, seed=3):
    """Features and a 3x3x3 weight, scaled so that outputs stay near 1."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((len(coords), channels)).astype(np.float32)
    w = (rng.standard_normal((27, channels, channels)) / np.sqrt(27 * channels)).astype(np.float32)
    if element == "f16":
        return [coords, x.astype(np.float16), w.astype(np.float16)]
    if element == "bf16":
        return [coords, bf16_bits(x), bf16_bits(w)]
    return [coords, x, w]


def subm_pairs(coords, kernel=3):
    """For each offset of a subm kernel^3 window, (input rows, output rows):
    the rulebook, computed here with numpy (sort + search), for the torch
    baselines and the layers' FLOP counts."""
    dims = coords[:, 1:].max(axis=0).astype(np.int64) + 3
    def key(c):
        k = c[:, 0].astype(np.int64)
        for d in range(3):
            k = k * dims[d] + c[:, d + 1].astype(np.int64) + 1
        return k
    keys = key(coords)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    pairs = []
    r = kernel // 2
    for dz in range(-r, r + 1):
        for dy in range(-r, r + 1):
            for dx in range(-r, r + 1):
                shifted = coords.copy()
                shifted[:, 1] += dz
                shifted[:, 2] += dy
                shifted[:, 3] += dx
                inside = (shifted[:, 1:] >= -1).all(axis=1)
                q = key(shifted)
                pos = np.searchsorted(sorted_keys, q)
                pos = np.minimum(pos, len(sorted_keys) - 1)
                hit = inside & (sorted_keys[pos] == q)
                out_rows = np.flatnonzero(hit)
                in_rows = order[pos[hit]]
                pairs.append((in_rows, out_rows))
    return pairs
