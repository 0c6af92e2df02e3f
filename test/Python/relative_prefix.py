"""Compiles (or finds in the cache) a one-layer network and runs it."""
import numpy as np

import spconv_mlir
import spconv_mlir.nn as spconv

spconv.manual_seed(0)
net = spconv_mlir.compile(spconv.SparseSequential(spconv.SubMConv3d(3, 2, 3)), grid=[4, 4, 4])
indices = np.array([[0, 0, 0, i] for i in range(4)] + [[0, 1, 1, i] for i in range(3)], np.int32)
out = net(spconv_mlir.SparseConvTensor(np.ones((7, 3), np.float32), indices, [4, 4, 4], 1))
print("%d sites x %d features" % out.features.shape)
