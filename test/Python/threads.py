"""Thread counts are per network (applied at each call), and the torch ops
follow torch.get_num_threads()."""
import ctypes
import sys

import numpy as np

import spconv_mlir
import spconv_mlir.nn as spconv


def runtime_threads(entry):
    count = ctypes.c_int32()
    entry.runtime.lib.spconv_rt_get_num_threads(ctypes.byref(count))
    return count.value


spconv.manual_seed(0)
model = spconv.SparseSequential(spconv.SubMConv3d(3, 2, 3))
one = spconv_mlir.compile(model, grid=[4, 4, 4], num_threads=1)
two = spconv_mlir.compile(model, grid=[4, 4, 4], num_threads=2)
indices = np.array([[0, 0, 0, i] for i in range(4)], np.int32)
x = spconv_mlir.SparseConvTensor(np.ones((4, 3), np.float32), indices, [4, 4, 4], 1)
seen = []
for net in (one, two, one):
    net(x)
    seen.append(runtime_threads(net.entry))
print("networks with 1, 2, 1 threads ran with %s" % seen)

if len(sys.argv) > 1 and sys.argv[1] == "torch":
    import torch

    import spconv_mlir.torch as sp
    from spconv_mlir.torch import kernels

    layer = sp.SubMConv3d(3, 2, 3)
    seen = []
    for count in (1, 2):
        torch.set_num_threads(count)
        layer(sp.SparseConvTensor(torch.ones(4, 3), torch.from_numpy(indices), [4, 4, 4], 1))
        entry = next(iter(kernels._loaded.values())).get().entry
        seen.append(runtime_threads(entry))
    print("torch.set_num_threads(1), (2): the ops ran with %s" % seen)
