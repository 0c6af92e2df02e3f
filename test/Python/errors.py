#!/usr/bin/env python3
"""Bad models, checkpoints and inputs: each case prints the error the user
sees (errors.test checks the messages), or "no error", which fails it."""
import ctypes
import os
import sys

import numpy as np

import spconv_mlir
import spconv_mlir.nn as spconv


def case(title, thunk):
    print("== " + title)
    try:
        thunk()
    except spconv_mlir.SpconvMlirError as e:
        print("%s: %s" % (type(e).__name__, e))
    else:
        print("no error")


def seq(*layers):
    return spconv.SparseSequential(*layers)


def subm(cin=4, cout=8, **kw):
    return spconv.SubMConv3d(cin, cout, 3, **kw)


class Inverse(spconv.Module):
    def __init__(self, key, kernel=2):
        super().__init__()
        self.down = spconv.SparseConv3d(4, 8, 2, stride=2, indice_key="d1")
        self.up = spconv.SparseInverseConv3d(8, 4, kernel, indice_key=key)

    def forward(self, x):
        return self.up(self.down(x))


class ReturnsFeatures(spconv.Module):
    def __init__(self):
        super().__init__()
        self.conv = subm()

    def forward(self, x):
        return self.conv(x).features


class MixesSites(spconv.Module):
    def __init__(self):
        super().__init__()
        self.down = spconv.SparseConv3d(4, 4, 2, stride=2)

    def forward(self, x):
        return x.replace_feature(x.features + self.down(x).features)


grid = [8, 8, 8]
compile = spconv_mlir.compile

# The model.
case("grid with a zero", lambda: compile(seq(subm()), grid=[8, 0, 8]))
case("grid of five dims", lambda: compile(seq(subm()), grid=[8, 8, 8, 8, 8]))
case("grid past int64", lambda: compile(seq(subm()), grid=[2 ** 31, 2 ** 31, 2 ** 3]))
case("channels that do not chain", lambda: compile(seq(subm(4, 16), subm(8, 16)), grid=grid))
case("a 2-D layer on a 3-D grid",
     lambda: compile(seq(spconv.SubMConv2d(4, 8, 3)), grid=grid))
case("an empty output grid",
     lambda: compile(seq(spconv.SparseConv3d(4, 4, 5)), grid=[3, 3, 3]))
case("a strided subm conv", lambda: spconv.SubMConv3d(4, 4, 3, stride=2))
case("groups that do not divide the channels", lambda: spconv.SparseConv3d(4, 6, 3, groups=4))
case("inverse conv without indice_key", lambda: spconv.SparseInverseConv3d(4, 4, 2))
case("inverse conv of an unknown key", lambda: compile(Inverse("nope"), grid=grid))
case("inverse conv of another kernel", lambda: compile(Inverse("d1", 3), grid=grid))
case("forward returns features", lambda: compile(ReturnsFeatures(), grid=grid))
case("features of other sites", lambda: compile(MixesSites(), grid=grid))
case("a layer called outside compile", lambda: subm()(None))
case("unknown target", lambda: compile(seq(subm()), grid=grid, target="tpu"))
case("unsupported dtype", lambda: compile(seq(subm()), grid=grid, dtype="float16"))
case("not a spconv_mlir model", lambda: compile(object(), grid=grid))
case("input channels unknown",
     lambda: compile(spconv.SparseSequential(spconv.ReLU()), grid=grid))
case("ToDense", lambda: spconv.ToDense())

# Checkpoints.
model = seq(subm(4, 8), spconv.BatchNorm1d(8))
state = {k: v.copy() for k, v in model.state_dict().items()}
case("a missing key", lambda: model.load_state_dict(
    {k: v for k, v in state.items() if k != "1.running_var"}))
case("an unexpected key", lambda: model.load_state_dict(dict(state, **{"2.weight": state["1.weight"]})))
case("a spconv 1.x weight loaded as spconv 2.x", lambda: model.load_state_dict(
    dict(state, **{"0.weight": np.zeros((3, 3, 3, 4, 8), np.float32)})))
case("a wrong BatchNorm size", lambda: model.load_state_dict(
    dict(state, **{"1.weight": np.zeros(9, np.float32)})))
case("an unknown layout", lambda: model.load_state_dict(state, layout="caffe"))

# Inputs of a compiled network.
net = compile(seq(subm(4, 8)), grid=grid)
rng = np.random.default_rng(0)
ok_idx = np.array([[0, 1, 2, 3], [0, 4, 5, 6], [1, 0, 0, 0]], np.int32)
ok_feat = rng.normal(size=(3, 4)).astype(np.float32)
case("features of the wrong width", lambda: net(ok_idx, ok_feat[:, :3]))
case("indices without the batch column", lambda: net(ok_idx[:, 1:], ok_feat))
case("rows that differ", lambda: net(ok_idx[:2], ok_feat))
case("float indices", lambda: net(ok_idx.astype(np.float32), ok_feat))
case("another spatial_shape",
     lambda: net(spconv_mlir.SparseConvTensor(ok_feat, ok_idx, [8, 8, 9], 2)))
bad = ok_idx.copy()
bad[1, 2] = 8
case("a site outside the grid", lambda: net(bad, ok_feat))
bad = ok_idx.copy()
bad[1, 3] = -1
case("a negative index", lambda: net(bad, ok_feat))
bad = ok_idx.copy()
bad[2] = bad[0]
case("a duplicate site", lambda: net(bad, ok_feat))
# The runtime's test switch: the first allocation of the next call fails.
runtime = net.entry.runtime.lib
runtime.spconv_rt_test_fail_allocation.argtypes = [ctypes.c_int64]
runtime.spconv_rt_test_fail_allocation(1)
case("out of memory", lambda: net(ok_idx, ok_feat))
print("is a MemoryError: %s" % issubclass(spconv_mlir.OutOfMemoryError, MemoryError))
print("== still usable after errors")
out = net(ok_idx, ok_feat)
print("sites %d, features %s" % (len(out.indices), out.features.shape))
print("== no sites")
out = net(np.zeros((0, 4), np.int32), np.zeros((0, 4), np.float32))
print("sites %d, features %s" % (len(out.indices), out.features.shape))

# The toolchain.
os.environ["SPCONV_MLIR_PREFIX"] = "/nonexistent"
case("no toolchain", lambda: compile(seq(subm()), grid=grid, cache=False))
sys.stdout.flush()
