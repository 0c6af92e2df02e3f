#!/usr/bin/env python3
"""Compiles models built with spconv_mlir.nn and runs them on the CPU
against reference.py (spconv-ref and numpy): every layer kind, 1-D to 4-D,
BatchNorm folded and not, float32 and float64, several outputs, and the
two example networks on a small scan.

usage: exec_models.py --bin DIR --work DIR [--root SRC]
"""
import argparse
import os
import sys

import numpy as np

import spconv_mlir
import spconv_mlir.nn as spconv
from spconv_mlir.functional import cat, relu

from reference import Reference, compare
from sites import random_sites


def randomize_batchnorms(model, rng):
    for m in model.modules():
        if isinstance(m, spconv.BatchNorm1d):
            c = m.num_features
            m.running_mean[:] = rng.normal(0, 0.5, c)
            m.running_var[:] = rng.uniform(0.5, 2.0, c)
            m.weight[:] = rng.uniform(0.5, 1.5, c)
            m.bias[:] = rng.normal(0, 0.2, c)


class DownUp(spconv.Module):
    """Down, inverse back up, concatenate the skip, pointwise projection
    (spconv's 1x1 reading) and a residual add."""

    def __init__(self):
        super().__init__()
        self.stem = spconv.SubMConv3d(3, 8, 3, indice_key="s0")
        self.down = spconv.SparseConv3d(8, 16, 2, stride=2, indice_key="d1")
        self.up = spconv.SparseInverseConv3d(16, 8, 2, indice_key="d1")
        self.proj = spconv.SubMConv3d(16, 8, 1)

    def forward(self, x):
        x = self.stem(x)
        x = x.replace_feature(relu(x.features))
        u = self.up(self.down(x))
        y = self.proj(u.replace_feature(cat([u.features, x.features], 1)))
        return y.replace_feature(y.features + x.features * 0.5 - x.features)


class TwoOutputs(spconv.Module):
    def __init__(self):
        super().__init__()
        self.a = spconv.SubMConv2d(2, 4, 3, dilation=2)
        self.pool = spconv.SparseMaxPool2d(3, stride=2, padding=1)

    def forward(self, x):
        y = self.a(x)
        return y, self.pool(y)


def models():
    """(name, model, grid, sites, batch, compile options)."""
    yield ("subm-bn-relu-folded", spconv.SparseSequential(
        spconv.SubMConv3d(4, 16, 3, bias=False), spconv.BatchNorm1d(16), spconv.ReLU()),
        [12, 10, 8], 300, 2, {})
    yield ("subm-bn-relu-unfolded", spconv.SparseSequential(
        spconv.SubMConv3d(4, 16, 3), spconv.BatchNorm1d(16), spconv.ReLU()),
        [12, 10, 8], 300, 1, {"fold_batchnorm": False})
    yield ("regular-stride2-leaky", spconv.SparseSequential(
        spconv.SparseConv3d(4, 8, 3, stride=2, padding=1), spconv.LeakyReLU(0.1)),
        [11, 9, 13], 250, 2, {})
    yield ("transposed", spconv.SparseSequential(
        spconv.SparseConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=1)),
        [6, 5, 7], 60, 1, {})
    yield ("down-inverse-cat-1x1-residual", DownUp(), [10, 10, 10], 300, 1, {})
    yield ("pool-max-2d-and-dilated-subm", TwoOutputs(), [20, 17], 120, 2, {})
    yield ("avgpool-3d", spconv.SparseSequential(spconv.SparseAvgPool3d(2)),
           [8, 8, 8], 200, 1, {"in_channels": 5})
    yield ("subm-1d-dilated", spconv.SparseSequential(
        spconv.SubMConv1d(3, 5, 5, dilation=2), spconv.ReLU()), [64], 40, 2, {})
    yield ("regular-4d", spconv.SparseSequential(
        spconv.SparseConv4d(2, 3, 2, stride=(1, 2, 2, 1), padding=(0, 1, 0, 1))),
        [5, 6, 4, 3], 150, 1, {})
    yield ("grouped-depthwise-strided", spconv.SparseSequential(
        spconv.SubMConv3d(4, 8, 3, groups=2), spconv.BatchNorm1d(8), spconv.ReLU(),
        spconv.SubMConv3d(8, 8, 3, groups=8),
        spconv.SparseConv3d(8, 12, 3, stride=2, padding=1, groups=4)),
        [10, 9, 8], 200, 1, {})
    yield ("subm-float64", spconv.SparseSequential(
        spconv.SubMConv3d(4, 8, 3), spconv.BatchNorm1d(8), spconv.ReLU()),
        [8, 8, 8], 150, 1, {"dtype": "float64"})


def channels_of(model, options):
    if "in_channels" in options:
        return options["in_channels"]
    for m in model.modules():
        if isinstance(m, spconv.SparseConvolution):
            return m.in_channels
    raise ValueError("no conv")


def run_model(name, model, grid, indices, features, options, args, rng):
    randomize_batchnorms(model, rng)
    net = spconv_mlir.compile(model, grid=grid, **options)
    got = net(indices, features)
    got = list(got) if isinstance(got, tuple) else [got]
    graph = spconv_mlir.trace(model, grid, options.get("in_channels"))
    dtype = np.dtype(options.get("dtype", "float32"))
    ref = Reference(args.bin, os.path.join(args.work, name), dtype.type)
    want = ref.evaluate(graph, indices, features.astype(dtype))
    compare(name, [(o.indices, o.features) for o in got], want,
            rtol=1e-4 if dtype == np.float32 else 1e-10)
    return net


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    args = p.parse_args()
    rng = np.random.default_rng(7)
    spconv.manual_seed(3)
    for name, model, grid, sites, batch, options in models():
        indices = random_sites(rng, grid, sites, batch)
        channels = channels_of(model, options)
        dtype = options.get("dtype", "float32")
        features = rng.normal(size=(sites, channels)).astype(dtype)
        run_model(name, model, grid, indices, features, options, args, rng)

    # The examples, on a small LiDAR scan.
    sys.path.insert(0, os.path.join(args.root, "examples", "python"))
    import models as examples
    from scan import scan

    for name, model, grid, sites in [
            ("VoxelBackBone8x", examples.VoxelBackBone8x(), [41, 1600, 1408], 3000),
            ("MinkUNet", examples.MinkUNet(), [256, 256, 32], 2000)]:
        indices, features = scan(grid, sites, 4, seed=1)
        run_model(name, model, grid, indices, features, {}, args, rng)
    print("all models match the reference")


if __name__ == "__main__":
    main()
