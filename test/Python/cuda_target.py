#!/usr/bin/env python3
"""target="cuda": the network compiles into a library with the kernels
embedded; without a GPU the call says so; with one, its outputs equal the
CPU's (numpy in and out; torch CUDA tensors when torch sees a GPU)."""
import numpy as np

import spconv_mlir
import spconv_mlir.nn as spconv
from sites import random_sites

grid = [10, 9, 8]
model = spconv.SparseSequential(
    spconv.SubMConv3d(4, 16, 3, bias=False), spconv.BatchNorm1d(16), spconv.ReLU(),
    spconv.SparseConv3d(16, 8, 3, stride=2, padding=1), spconv.ReLU())
rng = np.random.default_rng(4)
idx = random_sites(rng, grid, 200)
feat = rng.normal(size=(200, 4)).astype(np.float32)

net = spconv_mlir.compile(model, grid=grid, target="cuda")
print("compiled for cuda:", net.library_path.endswith(".so"))
try:
    got = net(idx, feat)
except spconv_mlir.ToolchainError as e:
    print("no GPU here:", e)
else:
    want = spconv_mlir.compile(model, grid=grid)(idx, feat)
    print("GPU outputs equal the CPU's:", np.array_equal(got.indices, want.indices) and
          np.allclose(got.features, want.features, rtol=1e-5, atol=1e-5))
