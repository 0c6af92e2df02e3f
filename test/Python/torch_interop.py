#!/usr/bin/env python3
"""spconv.pytorch code meets torch: torch.nn layers inside our containers,
torch functions on traced features, torch tensors in and out."""
import numpy as np
import torch

import spconv_mlir
import spconv_mlir.nn as spconv
from spconv_mlir.functional import cat, relu
from sites import random_sites


class TorchStyle(spconv.Module):
    """A forward written against torch, as spconv.pytorch models are."""

    def __init__(self):
        super().__init__()
        bn = torch.nn.BatchNorm1d(6, eps=1e-3)
        with torch.no_grad():
            bn.running_mean.copy_(torch.linspace(-1, 1, 6))
            bn.running_var.copy_(torch.linspace(0.5, 2, 6))
            bn.weight.copy_(torch.linspace(0.8, 1.3, 6))
        self.a = spconv.SparseSequential(
            spconv.SubMConv3d(3, 6, 3, bias=False), bn, torch.nn.ReLU())
        self.b = spconv.SubMConv3d(6, 6, 3, bias=False)

    def forward(self, x):
        x = self.a(x)
        y = self.b(x)
        f = torch.cat([torch.relu(y.features), torch.nn.functional.relu(x.features)], dim=1)
        return y.replace_feature(torch.add(f, torch.cat([x.features, y.features], 1)))


torch.manual_seed(0)
model = TorchStyle()
adopted = model.a[1]
print("adopted:", type(adopted).__name__, type(model.a[2]).__name__)
print("with its statistics:", np.allclose(adopted.running_mean, np.linspace(-1, 1, 6)) and
      np.allclose(adopted.running_var, np.linspace(0.5, 2, 6)) and
      np.allclose(adopted.weight, np.linspace(0.8, 1.3, 6)) and adopted.eps == 1e-3)

grid = [7, 6, 5]
rng = np.random.default_rng(2)
idx = random_sites(rng, grid, 60)
feat = rng.normal(size=(60, 3)).astype(np.float32)

net = spconv_mlir.compile(model, grid=grid)
want = net(idx, feat)
# torch in, torch out; a non-contiguous view and int64 indices are accepted.
wide = torch.from_numpy(np.ascontiguousarray(np.concatenate([feat, feat], 1)))
got = net(spconv_mlir.SparseConvTensor(wide[:, :3], torch.from_numpy(idx).long(), grid))
print("outputs:", type(got.indices).__name__, type(got.features).__name__,
      got.indices.dtype, got.features.dtype, tuple(got.features.shape))
print("same as numpy:", np.array_equal(got.features.numpy(), want.features) and
      np.array_equal(got.indices.numpy(), want.indices))



class OursStyle(TorchStyle):
    """The same network with spconv_mlir's own layers and functions."""

    def __init__(self):
        spconv.Module.__init__(self)
        self.a = spconv.SparseSequential(
            spconv.SubMConv3d(3, 6, 3, bias=False), spconv.BatchNorm1d(6, eps=1e-3), spconv.ReLU())
        self.b = spconv.SubMConv3d(6, 6, 3, bias=False)

    def forward(self, x):
        x = self.a(x)
        y = self.b(x)
        f = cat([relu(y.features), relu(x.features)], 1)
        return y.replace_feature(f + cat([x.features, y.features], 1))


ours = OursStyle()
ours.load_state_dict(model.state_dict())
same = spconv_mlir.compile(ours, grid=grid)(idx, feat)
print("torch layers and functions compute what ours do:",
      np.array_equal(same.features, want.features))

try:
    spconv_mlir.compile(torch.nn.Linear(3, 3), grid=grid)
except spconv_mlir.ModelError as e:
    print("ModelError:", e)
try:
    spconv.SparseSequential(torch.nn.Conv1d(3, 3, 1))
except spconv_mlir.UnsupportedError as e:
    print("UnsupportedError:", e)


class TorchSigmoid(spconv.Module):
    def __init__(self):
        super().__init__()
        self.a = spconv.SubMConv3d(3, 3, 3)

    def forward(self, x):
        y = self.a(x)
        return y.replace_feature(torch.sigmoid(y.features))


try:
    spconv_mlir.compile(TorchSigmoid(), grid=grid)
except spconv_mlir.UnsupportedError as e:
    print("UnsupportedError:", e)
