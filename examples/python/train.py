#!/usr/bin/env python3
"""Trains one of the example networks in PyTorch with spconv_mlir.torch,
saves the checkpoint, and runs it again through the inference compiler.

usage: train.py second|minkunet [--steps N] [--sites N] [--lr LR]
                [--checkpoint OUT.pt] [--seed S]

The models are examples/python/models.py's, with spconv_mlir.torch's
imports (the import block is the only difference from spconv.pytorch code;
test/Python/spconv2_compare.py runs the same source on spconv 2.x). The
task is synthetic, so that the loss can fall in a few steps on one scan:
VoxelBackBone8x with a small head regresses each output site's mean input
feature; MinkUNet segments each site by the sign of its first feature
(cross-entropy over 19 classes, two used). Then the checkpoint goes
through `spconv_mlir.compile` (BatchNorm folded, inference) and the
compiled network's outputs are checked against the trained model's in
eval mode.
"""
import argparse
import os
import sys
import time
import types

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))  # a checkout without pip install
import spconv_mlir  # noqa: E402
import spconv_mlir.torch as sp  # noqa: E402

from scan import scan  # noqa: E402

GRIDS = {"second": [41, 1600, 1408], "minkunet": [1024, 1024, 64]}
TORCH_IMPORTS = """import spconv_mlir.torch as spconv
from torch.nn import BatchNorm1d, Module, ModuleList, ReLU
from torch import cat
"""


def models(imports=None):
    """models.py as written (spconv_mlir.nn, for compile()) or with
    `imports` in place of its import block."""
    path = os.path.join(here, "models.py")
    text = open(path).read()
    if imports:
        begin, end = text.index("# BEGIN imports"), text.index("# END imports")
        text = text[:begin] + imports + text[end:]
    module = types.ModuleType("models")
    exec(compile(text, path, "exec"), module.__dict__)
    return module


class Detector(torch.nn.Module):
    """VoxelBackBone8x and a linear head per output site."""

    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.head = torch.nn.Linear(128, 1)

    def forward(self, x):
        y = self.backbone(x)
        return y, self.head(y.features).squeeze(1)


def targets(network, x, y):
    """The synthetic task's targets for output `y` of input `x`."""
    if network == "minkunet":
        return (x.features[:, 0] > 0).long()
    # The mean input feature over the batch's sites: one number per site.
    return x.features.mean().expand(y.features.shape[0])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("network", choices=sorted(GRIDS))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--sites", type=int, default=20000)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--checkpoint", default="checkpoint.pt")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    grid = GRIDS[args.network]
    torch.manual_seed(args.seed)
    trainable = models(TORCH_IMPORTS)
    if args.network == "second":
        model = Detector(trainable.VoxelBackBone8x())
    else:
        model = trainable.MinkUNet()
    indices, features = scan(grid, args.sites, 4, args.seed)
    x = sp.SparseConvTensor(torch.from_numpy(features), torch.from_numpy(indices), grid, 1)
    print("scan: %d sites on %s" % (len(indices), grid))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    model.train()
    losses = []
    for step in range(args.steps):
        start = time.perf_counter()
        opt.zero_grad()
        if args.network == "second":
            y, predicted = model(x)
            loss = torch.nn.functional.mse_loss(predicted, targets(args.network, x, y))
        else:
            y = model(x)
            loss = torch.nn.functional.cross_entropy(y.features, targets(args.network, x, y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
        print("step %d: loss %.4f (%.0f ms)" % (step, losses[-1],
                                               (time.perf_counter() - start) * 1e3))
    print("loss fell: %s (%.4f -> %.4f)" % (losses[-1] < losses[0], losses[0], losses[-1]))

    backbone = model.backbone if args.network == "second" else model
    torch.save(backbone.state_dict(), args.checkpoint)
    print("saved %s" % args.checkpoint)

    # The checkpoint through the inference compiler, against the model in
    # eval mode (BatchNorm with its running statistics).
    backbone.eval()
    with torch.no_grad():
        want = backbone(x)
    inference = models()
    net_model = inference.VoxelBackBone8x() if args.network == "second" else inference.MinkUNet()
    net_model.load_state_dict(torch.load(args.checkpoint))
    net = spconv_mlir.compile(net_model, grid=grid)
    got = net(spconv_mlir.SparseConvTensor(features, indices, grid, 1))
    order_want = np.lexsort(want.indices.numpy().T[::-1])
    order_got = np.lexsort(got.indices.T[::-1])
    same_sites = np.array_equal(want.indices.numpy()[order_want], got.indices[order_got])
    scale = float(np.abs(want.features.numpy()).max()) or 1.0
    worst = float(np.abs(want.features.numpy()[order_want] - got.features[order_got]).max()) / \
        scale if same_sites else float("inf")
    print("compiled inference on the checkpoint: same sites %s, features within %.1e of "
          "their scale" % (same_sites, worst))
    return 0 if same_sites and worst < 1e-4 and losses[-1] < losses[0] else 1


if __name__ == "__main__":
    sys.exit(main())
