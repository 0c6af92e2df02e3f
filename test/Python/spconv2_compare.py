#!/usr/bin/env python3
"""The compiled network against spconv 2.x itself.

Each model's source (examples/python/models.py, test/Python/zoo.py) is run
twice: as written (spconv_mlir.nn) and with its import block swapped for
spconv.pytorch and torch.nn. The spconv model gets random weights and
BatchNorm statistics (torch's seed); its state_dict loads into ours as it
is; both run on the same scan (spconv on one thread: at two, 2.3.8 gives
wrong outputs, docs/Benchmarks.md). Coordinates must be the same sites
(spconv does not sort its outputs; both are sorted by key first) and
features agree to 1e-4 of their largest magnitude.

usage: VENV/bin/python spconv2_compare.py --root SRC --work DIR
(VENV: scripts/bench-install.sh's, with spconv 2.x and torch)
"""
import argparse
import os
import sys
import types

import numpy as np
import torch

import spconv
import spconv.pytorch as sp

import spconv_mlir
from sites import random_sites

SPCONV_IMPORTS = """import spconv.pytorch as spconv
from torch.nn import BatchNorm1d, Module, ModuleList, ReLU
from torch import cat
"""


def load_source(path, name, imports=None):
    """The module at `path`, with its import block replaced by `imports`."""
    text = open(path).read()
    if imports is not None:
        begin, end = text.index("# BEGIN imports"), text.index("# END imports")
        text = text[:begin] + imports + text[end:]
    module = types.ModuleType(name)
    module.__file__ = path
    exec(compile(text, path, "exec"), module.__dict__)
    return module


def randomize(model, seed):
    torch.manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm1d):
                m.running_mean.normal_(0, 0.3)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.2)
            elif isinstance(m, sp.conv.SparseConvolution) and m.bias is not None:
                m.bias.normal_(0, 0.1)
    return model.eval()


def by_key(indices, features, grid):
    idx = np.asarray(indices, np.int64)
    key = idx[:, 0]
    for d, size in enumerate(grid):
        key = key * size + idx[:, d + 1]
    order = np.argsort(key, kind="stable")
    return idx[order], np.asarray(features, np.float64)[order]


def compare(name, ours, theirs):
    grid = ours.spatial_shape  # the output grid: sort keys need its sizes
    if list(theirs.spatial_shape) != grid:
        sys.exit("%s: output grid %s, spconv's %s" % (name, grid, theirs.spatial_shape))
    oi, of = by_key(ours.indices.numpy(), ours.features.numpy(), grid)
    ti, tf = by_key(theirs.indices.numpy(), theirs.features.detach().numpy(), grid)
    if oi.shape != ti.shape or not np.array_equal(oi, ti):
        sys.exit("%s: the output sites differ from spconv's (%d vs %d)" % (name, len(oi), len(ti)))
    scale = max(float(np.abs(tf).max()), 1e-30)
    err = float(np.abs(of - tf).max()) / scale
    if of.shape != tf.shape or err > 1e-4:
        sys.exit("%s: features differ from spconv's by %.3g of their scale (shapes %s, %s)"
                 % (name, err, of.shape, tf.shape))
    print("match: %s (%d sites x %d, max difference %.1e of the scale)"
          % (name, len(oi), of.shape[1], err))


def check(name, ours_factory, theirs_factory, grid, indices, features, seed):
    theirs = randomize(theirs_factory(), seed)
    ours = ours_factory()
    ours.load_state_dict(theirs.state_dict())  # spconv 2.x's layout, torch tensors
    net = spconv_mlir.compile(ours, grid=grid)
    batch = int(indices[:, 0].max()) + 1
    ti, tf = torch.from_numpy(indices), torch.from_numpy(features)
    with torch.no_grad():
        expected = theirs(sp.SparseConvTensor(tf, ti, grid, batch))
    got = net(spconv_mlir.SparseConvTensor(tf, ti, grid, batch))
    if not isinstance(got.features, torch.Tensor):
        sys.exit("%s: torch inputs did not give torch outputs" % name)
    compare(name, got, expected)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--sites", type=int, default=6000)
    args = p.parse_args()
    torch.set_num_threads(1)
    print("# spconv %s, torch %s" % (spconv.__version__, torch.__version__))
    sys.path.insert(0, os.path.join(args.root, "examples", "python"))
    from scan import scan

    rng = np.random.default_rng(0)
    zoo_path = os.path.join(args.root, "test", "Python", "zoo.py")
    ours, theirs = load_source(zoo_path, "zoo"), load_source(zoo_path, "zoo_sp", SPCONV_IMPORTS)
    for i, name in enumerate(sorted(ours.MODELS)):
        grid = [24, 20] if name == "planar" else [12, 14, 10]
        first = ours.MODELS[name]()
        cin = next(m.in_channels for m in first.modules()
                   if isinstance(m, spconv_mlir.nn.SparseConvolution))
        indices = random_sites(rng, grid, 400, 2)
        features = rng.normal(size=(len(indices), cin)).astype(np.float32)
        check(name, ours.MODELS[name], theirs.MODELS[name], grid, indices, features, i)

    models_path = os.path.join(args.root, "examples", "python", "models.py")
    ours = load_source(models_path, "models")
    theirs = load_source(models_path, "models_sp", SPCONV_IMPORTS)
    for name, grid in [("VoxelBackBone8x", [41, 1600, 1408]), ("MinkUNet", [1024, 1024, 64])]:
        indices, features = scan(grid, args.sites, 4, seed=3)
        check(name, getattr(ours, name), getattr(theirs, name), grid, indices, features, 7)
    print("spconv %s and the compiled networks agree" % spconv.__version__)


if __name__ == "__main__":
    main()
