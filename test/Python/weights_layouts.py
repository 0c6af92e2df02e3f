#!/usr/bin/env python3
"""Checkpoints in spconv 1.x, early spconv 2.x (RSKC) and MinkowskiEngine
layouts load into the weights that compute what the spconv 2.x checkpoint
computes. The other layouts are written here from their definitions, one
kernel offset at a time, not with the package's conversions. Also: the
compiled network takes new weights without a recompile, and the compile
cache."""
import itertools
import math
import sys

import numpy as np

import spconv_mlir
import spconv_mlir.nn as spconv
from spconv_mlir.store import KernelStore
from sites import random_sites


class Net(spconv.Module):
    def __init__(self):
        super().__init__()
        self.a = spconv.SparseSequential(
            spconv.SubMConv3d(3, 6, (3, 1, 2), bias=False, indice_key="s"),
            spconv.BatchNorm1d(6), spconv.ReLU())
        self.down = spconv.SparseConv3d(6, 5, (2, 3, 2), stride=2, padding=(0, 1, 0),
                                        indice_key="d")
        self.up = spconv.SparseInverseConv3d(5, 4, (2, 3, 2), indice_key="d")
        self.point = spconv.SubMConv3d(4, 7, 1)

    def forward(self, x):
        x = self.a(x)
        return self.point(self.up(self.down(x)))


def offsets(kernel):
    """Kernel index tuples in spconv's (row-major) offset order."""
    return list(itertools.product(*[range(k) for k in kernel]))


def true_matrices(model):
    """name -> K x Cin x Cout of every conv, from spconv 2.x's arrays."""
    out = {}
    for name, m in model.named_modules():
        if isinstance(m, spconv.SparseConvolution):
            w = m.weight
            if math.prod(m.kernel_size) == 1:
                out[name] = w.reshape(1, m.in_channels, m.out_channels)  # spconv's view
            else:
                out[name] = np.stack([w[(slice(None),) + j + (slice(None),)].T
                                      for j in offsets(m.kernel_size)])
    return out


def row_major_state(model, mats, shape, entry):
    """A state_dict whose conv weights have `shape(m)` and hold
    `entry(W[j])` at each row-major kernel index j."""
    state = dict(model.state_dict())
    for name, m in model.named_modules():
        if name in mats:
            w = np.zeros(shape(m), np.float32)
            for r, j in enumerate(offsets(m.kernel_size)):
                w[j] = entry(mats[name][r])
            state[name + ".weight"] = w
    return state


def spconv1_state(model, mats):
    """spconv 1.x (RSCK): k... x Cin x Cout."""
    return row_major_state(model, mats, lambda m: tuple(m.kernel_size) + (
        m.in_channels, m.out_channels), lambda w: w)


def rskc_state(model, mats):
    """Early spconv 2.x (RSKC): k... x Cout x Cin."""
    return row_major_state(model, mats, lambda m: tuple(m.kernel_size) + (
        m.out_channels, m.in_channels), lambda w: w.T)


def minkowski_state(model, mats):
    """MinkowskiEngine: `kernel` K x Cin x Cout with the first spatial
    dimension varying fastest, bias 1 x Cout, BatchNorm inside `.bn`,
    saved from DataParallel (`module.`)."""
    state = {}
    for key, value in model.state_dict().items():
        owner, leaf = key.rsplit(".", 1)
        module = dict(model.named_modules())[owner]
        if isinstance(module, spconv.BatchNorm1d):
            key = owner + ".bn." + leaf
        elif leaf == "bias":
            value = value.reshape(1, -1)
        state["module." + key] = value
    for name, m in model.named_modules():
        if name in mats:
            k = m.kernel_size
            w = np.zeros((math.prod(k), m.in_channels, m.out_channels), np.float32)
            for r, j in enumerate(offsets(k)):
                me = sum(j[d] * math.prod(k[:d]) for d in range(len(k)))
                w[me] = mats[name][r]
            del state["module." + name + ".weight"]
            state["module." + name + ".kernel"] = w
    return state


def main():
    grid = [9, 8, 7]
    rng = np.random.default_rng(5)
    spconv.manual_seed(11)
    source = Net()
    for m in source.modules():
        if isinstance(m, spconv.BatchNorm1d):
            m.running_mean[:] = rng.normal(size=m.num_features)
            m.running_var[:] = rng.uniform(0.5, 2, m.num_features)
    mats = true_matrices(source)
    indices = random_sites(rng, grid, 150)
    features = rng.normal(size=(150, 3)).astype(np.float32)

    reference = spconv_mlir.compile(source, grid=grid)
    want = reference(indices, features)

    spconv.manual_seed(12)
    target = Net()
    net = spconv_mlir.compile(target, grid=grid)
    if net.library_path != reference.library_path:
        sys.exit("the same network compiled twice was not taken from the cache")
    before = net(indices, features)
    if np.allclose(before.features, want.features):
        sys.exit("two seeds gave the same weights: the test would prove nothing")
    for layout, state in [("spconv2", source.state_dict()),
                          ("spconv1", spconv1_state(source, mats)),
                          ("RSKC", rskc_state(source, mats)),
                          ("minkowski", minkowski_state(source, mats))]:
        spconv.manual_seed(13)
        fresh = Net()
        fresh.load_state_dict(state, layout=layout)
        for name, m in fresh.named_modules():
            if name in mats and not np.array_equal(m.kernel_matrix(), mats[name]):
                sys.exit("%s: %s: loaded weights compute another function" % (layout, name))
        target.load_state_dict(state, layout=layout)
        net.reload_weights()
        got = net(indices, features)
        if not (np.array_equal(got.indices, want.indices) and
                np.array_equal(got.features, want.features)):
            sys.exit("%s: the compiled network's outputs differ" % layout)
        print("layout %s: same weights, same outputs" % layout)

    store = KernelStore(spconv_mlir.find_toolchain().libdir)
    print("cached libraries: %d" % len(store.entries()))
    other = spconv_mlir.compile(target, grid=grid, options=["--block-size=128"])
    print("other options, other library: %s" % (other.library_path != net.library_path))
    print("cached libraries: %d" % len(store.entries()))


if __name__ == "__main__":
    main()
