"""Whole models trained on spconv_mlir.torch against the same models with
every sparse conv computed densely.

examples/python/models.py's VoxelBackBone8x (with examples/python/train.py's
head and loss) and MinkUNet, as train.py builds them, take a few SGD steps
(momentum, BatchNorm in training mode) on small grids, once on the compiled
kernels and once with each conv's `apply_weights` replaced by
dense_reference.dense_conv (PyTorch's dense conv / conv_transpose over a
zero volume, sampled at the sites: DESIGN.md's semantics, autograd by
torch), from the same initial parameters. The losses of every step, the
output sites and the parameters after the last step agree in f64.

Run with torch 2.4 or later (build/venv-torch): lit's `torch2` feature.
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))
import train  # noqa: E402  examples/python/train.py: the models, head and loss

import spconv_mlir.torch as spconv  # noqa: E402
from spconv_mlir.torch import modules  # noqa: E402

from dense_reference import dense_conv, sites  # noqa: E402
from report import check, finish, relative_difference  # noqa: E402

STEPS = 3
TOLERANCE = 1e-9


def dense_apply_weights(self, x, weight, bias):
    """SparseConvolution.apply_weights computed densely. A strided conv
    with an indice_key records its input sites for the inverse conv."""
    assert weight is self.weight and bias is self.bias
    records = dict(x.indice_dict)
    fine = records[self.indice_key] if self.kind == "inverse" else None
    indices, features, grid = dense_conv(self, x.indices, x.features, x.batch_size,
                                         x.spatial_shape, fine)
    if self.kind == "regular" and self.indice_key:
        records[self.indice_key] = (x.indices, list(x.spatial_shape), list(self.stride),
                                    list(self.padding), list(self.dilation))
    return spconv.SparseConvTensor(features, indices, grid, x.batch_size,
                                   indice_dict=records)


def train_steps(make, x, loss_of):
    """The losses of STEPS SGD steps from make()'s parameters, the last
    output's sites, and the parameters after them."""
    torch.manual_seed(0)
    model = make().double()
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        y, loss = loss_of(model, x)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses), y.indices, [p.detach().clone() for p in model.parameters()]


def compare(name, make, x, loss_of):
    ours = train_steps(make, x, loss_of)
    original = modules.SparseConvolution.apply_weights
    modules.SparseConvolution.apply_weights = dense_apply_weights
    try:
        theirs = train_steps(make, x, loss_of)
    finally:
        modules.SparseConvolution.apply_weights = original
    losses, out_sites, params = ours
    check("%s: output sites equal the dense model's" % name, torch.equal(out_sites, theirs[1]),
          "%d against %d" % (len(out_sites), len(theirs[1])))
    scale = losses.abs().max()
    check("%s: the losses of %d steps equal the dense model's" % (name, STEPS),
          ((losses - theirs[0]).abs().max() <= TOLERANCE * scale).item(),
          "%s against %s" % (losses.tolist(), theirs[0].tolist()))
    worst = max(relative_difference(a, b) for a, b in zip(params, theirs[2]))
    check("%s: the parameters after %d steps equal the dense model's" % (name, STEPS),
          worst <= TOLERANCE, "largest difference %.1e of a parameter's scale" % worst)
    check("%s: the loss falls" % name, (losses[-1] < losses[0]).item(), str(losses.tolist()))


def input_tensor(grid, batch, count):
    indices = sites(grid, batch, count, seed=3)
    features = torch.randn(len(indices), 4, dtype=torch.float64,
                           generator=torch.Generator().manual_seed(4))
    return spconv.SparseConvTensor(features, indices, grid, batch)


def detector_loss(model, x):
    y, predicted = model(x)
    return y, torch.nn.functional.mse_loss(predicted, train.targets("second", x, y))


def minkunet_loss(model, x):
    y = model(x)
    return y, torch.nn.functional.cross_entropy(y.features, train.targets("minkunet", x, y))


models = train.models(train.TORCH_IMPORTS)
compare("VoxelBackBone8x + head", lambda: train.Detector(models.VoxelBackBone8x()),
        input_tensor([41, 24, 24], 2, 150), detector_loss)
# Four stride-2 downsamplings take a 16^3 grid to one site per batch element:
# six elements, so that the bottleneck's BatchNorms (training mode) see six
# samples per channel. With two, they amplified the rounding of the two
# sides' different summation orders to 3e-8 after three steps on an AMD EPYC
# (3e-14 with six), and the comparison measured that, not the kernels.
compare("MinkUNet", models.MinkUNet, input_tensor([16, 16, 16], 6, 400), minkunet_loss)
finish()
