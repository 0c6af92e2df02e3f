#!/usr/bin/env python3
# ===- training_torch.py - minkunet_train.mlir's network in PyTorch --=== #
#
# Part of the spconv-mlir project.
#
# ===------------------------------------------------------------------=== #
"""examples/minkunet_train.mlir's network and loss written with
spconv_mlir.torch (each sparse op a custom op, autograd by torch), for
bench/training.py: the same layers, widths, parameters and mean
cross-entropy as examples/training/gen_minkunet_train.py generates, its
parameters loaded from that file's argument order.

Run by bench/training.py in a process of its own:

  training_torch.py --work DIR --width-divisor D --threads T --repeat R
      reads DIR/arg*.npy (coordinates, features, one-hot labels, parameters
      in @minkunet_loss's order), writes DIR/torch-gradients.npz (the loss
      and every gradient of the first step, f32) and prints JSON: the median
      forward + loss and backward times (ms) of R steps after the first.
"""
import argparse
import glob
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "training"))
import gen_minkunet_train as gen  # noqa: E402
import train_minkunet  # noqa: E402

import spconv_mlir.torch as spconv  # noqa: E402


class MinkUNetTrain(torch.nn.Module):
    """gen_minkunet_train.Net's forward: convs with biases (pointwise
    projections without), ReLUs, no normalisation. Layers are named by the
    generated file's parameters (w_<name>, b_<name>)."""

    def __init__(self, divisor):
        super().__init__()
        self.w = lambda c: max(1, c // divisor)
        self.layers = torch.nn.ModuleDict()
        stem = self.w(gen.STEM)
        self._subm("stem_a", gen.IN_CHANNELS, stem, 0)
        self._subm("stem_b", stem, stem, 0)
        c = stem
        for i, (_, cout) in enumerate(gen.ENCODER, start=1):
            self.layers["down%d" % i] = spconv.SparseConv3d(
                c, c, 2, stride=2, bias=True, indice_key="down%d" % i)
            self._block("enc%d" % i, c, self.w(cout), i)
            c = self.w(cout)
        skips = [stem] + [self.w(cout) for _, cout in gen.ENCODER]
        for j, width in enumerate(gen.DECODER, start=1):
            level = 4 - j
            self.layers["up%d" % j] = spconv.SparseInverseConv3d(
                c, self.w(width), 2, bias=True, indice_key="down%d" % (level + 1))
            self._block("dec%d" % j, self.w(width) + skips[level], self.w(width), level)
            c = self.w(width)
        self.layers["classifier"] = spconv.SubMConv3d(c, gen.CLASSES, 1, bias=True)

    def _subm(self, name, cin, cout, level):
        self.layers[name] = spconv.SubMConv3d(cin, cout, 3, bias=True,
                                              indice_key="s%d" % level)

    def _block(self, name, cin, cout, level):
        self._subm(name + "_a", cin, cout, level)
        self._subm(name + "_b", cout, cout, level)
        if cin != cout:
            self.layers[name + "_proj"] = spconv.SubMConv3d(cin, cout, 1, bias=False)

    def block(self, name, x):
        a = self.layers[name + "_a"](x)
        a = a.replace_feature(torch.relu(a.features))
        b = self.layers[name + "_b"](a)
        proj = name + "_proj"
        skip = self.layers[proj](x).features if proj in self.layers else x.features
        return b.replace_feature(torch.relu(b.features + skip))

    def forward(self, x):
        relu = lambda t: t.replace_feature(torch.relu(t.features))  # noqa: E731
        x = relu(self.layers["stem_b"](relu(self.layers["stem_a"](x))))
        skips = [x]
        for i in range(1, len(gen.ENCODER) + 1):
            x = self.block("enc%d" % i, relu(self.layers["down%d" % i](x)))
            skips.append(x)
        for j in range(1, len(gen.DECODER) + 1):
            up = relu(self.layers["up%d" % j](x))
            skip = skips[4 - j]
            x = self.block("dec%d" % j, up.replace_feature(
                torch.cat([up.features, skip.features], 1)))
        return self.layers["classifier"](x).features

    def load(self, names, arrays):
        """Sets parameter `names[i]` (w_<layer> as K x Cin x Cout, b_<layer>)
        to `arrays[i]`."""
        for name, array in zip(names, arrays):
            kind, layer = name.split("_", 1)
            conv = self.layers[layer]
            value = torch.from_numpy(array)
            if kind == "w":
                # The inverse of the module's kernel_matrix().
                if conv.reads_weight_as_matrix():
                    value = value.reshape(conv.weight.shape)
                else:
                    value = value.permute(2, 0, 1).reshape(conv.weight.shape)
                conv.weight.data.copy_(value)
            else:
                conv.bias.data.copy_(value)


def loss_fn(logits, onehot):
    """The generated file's loss: mean over sites of log(sum exp z) - z_label."""
    return (torch.logsumexp(logits, 1) - (logits * onehot).sum(1)).mean()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True)
    p.add_argument("--width-divisor", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    torch.set_num_threads(args.threads)

    names = [name for name, _ in gen.params(args.width_divisor)]
    paths = sorted(glob.glob(os.path.join(args.work, "arg*.npy")),
                   key=lambda f: int(os.path.basename(f)[3:-4]))
    arrays = [np.load(f) for f in paths]
    coords, features, onehot, params = arrays[0], arrays[1], arrays[2], arrays[3:]
    if len(params) != len(names):
        sys.exit("%d parameter arrays for %d parameters" % (len(params), len(names)))

    model = MinkUNetTrain(args.width_divisor)
    model.load(names, params)
    indices = torch.from_numpy(coords)
    x_features = torch.from_numpy(features)
    labels = torch.from_numpy(onehot)
    grid = list(train_minkunet.GRID)

    def step(times=None):
        model.zero_grad()
        start = time.perf_counter()
        logits = model(spconv.SparseConvTensor(x_features, indices, grid, 1))
        loss = loss_fn(logits, labels)
        middle = time.perf_counter()
        loss.backward()
        if times is not None:
            times.append(((middle - start) * 1000, (time.perf_counter() - middle) * 1000))
        return loss

    loss = step()  # compiles, warms the caches
    params_by_name = {}
    for name in names:
        kind, layer = name.split("_", 1)
        conv = model.layers[layer]
        grad = conv.kernel_matrix(conv.weight.grad) if kind == "w" else conv.bias.grad
        params_by_name[name] = grad.detach().numpy()
    np.savez(os.path.join(args.work, "torch-gradients.npz"), loss=loss.detach().numpy(),
             **params_by_name)
    times = []
    for _ in range(args.repeat):
        step(times)
    print(json.dumps({"forward_ms": statistics.median(f for f, _ in times),
                      "backward_ms": statistics.median(b for _, b in times)}))


if __name__ == "__main__":
    main()
