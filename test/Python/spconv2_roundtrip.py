#!/usr/bin/env python3
"""A spconv 2.x checkpoint through spconv_mlir.torch and back (issue 38):
spconv 2.3.8 saves a model's state_dict and its outputs on a scan; the same
model written with spconv_mlir.torch loads the checkpoint unchanged, gives
the same outputs, trains one SGD step and saves; spconv 2.3.8 loads that
and computes what ours computes after the step.

The two sides need two Pythons (spconv 2.3.8 runs on Debian's torch 1.13,
spconv_mlir.torch on torch 2.4 or later), so the script has three steps,
each run by the right one (scripts/test-python.sh):

  VENV_SPCONV/bin/python spconv2_roundtrip.py save  DIR   # spconv 2.3.8
  VENV_TORCH2/bin/python spconv2_roundtrip.py train DIR   # ours
  VENV_SPCONV/bin/python spconv2_roundtrip.py check DIR   # spconv 2.3.8

Features agree to 1e-4 of their largest magnitude (the bound of
spconv2_compare.py). spconv 2.3.8's CPU build takes no bias on convs other
than 1x1 and runs on one thread (at two it gives wrong outputs,
docs/Benchmarks.md).
"""
import os
import sys

import torch

GRID = [21, 40, 36]


def define(sp):
    """The model, written once for either library's module namespace `sp`:
    subm convs, a strided conv and the inverse conv sharing its indice_key,
    BatchNorm and ReLU, and a 1x1 conv with a bias."""
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = sp.SparseSequential(
                sp.SubMConv3d(4, 16, 3, bias=False, indice_key="subm1"),
                torch.nn.BatchNorm1d(16), torch.nn.ReLU())
            self.down = sp.SparseSequential(
                sp.SparseConv3d(16, 32, 3, stride=2, padding=1, bias=False, indice_key="down1"),
                torch.nn.BatchNorm1d(32), torch.nn.ReLU(),
                sp.SubMConv3d(32, 32, 3, bias=False, indice_key="subm2"),
                torch.nn.BatchNorm1d(32), torch.nn.ReLU())
            self.up = sp.SparseSequential(
                sp.SparseInverseConv3d(32, 16, 3, bias=False, indice_key="down1"),
                torch.nn.BatchNorm1d(16), torch.nn.ReLU())
            self.head = sp.SubMConv3d(16, 3, 1, bias=True)

        def forward(self, x):
            x = self.stem(x)
            y = self.up(self.down(x))
            return self.head(y.replace_feature(y.features + x.features))
    return Net()


def scan():
    g = torch.Generator().manual_seed(7)
    volume = GRID[0] * GRID[1] * GRID[2]
    keys = torch.randperm(volume, generator=g)[:600].sort().values
    coords = torch.stack([keys // (GRID[1] * GRID[2]), keys // GRID[2] % GRID[1],
                          keys % GRID[2]], 1)
    indices = torch.cat([torch.zeros(len(keys), 1, dtype=torch.long), coords], 1).int()
    features = torch.randn(len(keys), 4, generator=g)
    return indices, features


def agree(a, b, what):
    scale = max(a.abs().max().item(), 1e-30)
    worst = (a - b).abs().max().item() / scale
    print("%s: max difference %.1e of the largest magnitude" % (what, worst))
    if worst > 1e-4:
        sys.exit("%s differ" % what)


def spconv_side(step, work):
    import spconv.pytorch as sp

    torch.set_num_threads(1)
    model = define(sp)
    indices, features = scan()
    if step == "save":
        torch.manual_seed(3)
        with torch.no_grad():
            for p in model.parameters():
                p.uniform_(-0.3, 0.3)
            for m in model.modules():
                if isinstance(m, torch.nn.BatchNorm1d):
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 1.5)
        model.eval()
        out = model(sp.SparseConvTensor(features, indices, GRID, 1))
        torch.save(model.state_dict(), os.path.join(work, "spconv.pt"))
        torch.save({"indices": out.indices, "features": out.features},
                   os.path.join(work, "spconv-out.pt"))
        print("spconv %s: saved a checkpoint and outputs at %d sites"
              % (sp.__name__, out.indices.shape[0]))
    else:
        model.load_state_dict(torch.load(os.path.join(work, "trained.pt")))
        model.eval()
        out = model(sp.SparseConvTensor(features, indices, GRID, 1))
        ours = torch.load(os.path.join(work, "trained-out.pt"))
        if not torch.equal(out.indices, ours["indices"]):
            sys.exit("sites differ after training")
        agree(out.features, ours["features"],
              "spconv 2.3.8 with the checkpoint trained by spconv_mlir.torch")


def our_side(work):
    import spconv_mlir.torch as sp

    model = define(sp)
    state = torch.load(os.path.join(work, "spconv.pt"))
    result = model.load_state_dict(state, strict=True)
    print("spconv_mlir.torch loaded the spconv 2.3.8 checkpoint: %d tensors, missing %s, "
          "unexpected %s" % (len(state), result.missing_keys, result.unexpected_keys))
    indices, features = scan()
    model.eval()
    out = model(sp.SparseConvTensor(features, indices, GRID, 1))
    theirs = torch.load(os.path.join(work, "spconv-out.pt"))
    if not torch.equal(out.indices, theirs["indices"]):
        sys.exit("sites differ from spconv 2.3.8's")
    agree(out.features, theirs["features"], "spconv_mlir.torch against spconv 2.3.8")
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    opt.zero_grad()
    loss = model(sp.SparseConvTensor(features, indices, GRID, 1)).features.square().mean()
    loss.backward()
    opt.step()
    print("one training step: loss %.4f" % loss.item())
    model.eval()
    out = model(sp.SparseConvTensor(features, indices, GRID, 1))
    torch.save(model.state_dict(), os.path.join(work, "trained.pt"))
    torch.save({"indices": out.indices, "features": out.features.detach()},
               os.path.join(work, "trained-out.pt"))


def main():
    step, work = sys.argv[1], sys.argv[2]
    if step == "train":
        our_side(work)
    elif step in ("save", "check"):
        spconv_side(step, work)
    else:
        sys.exit("usage: spconv2_roundtrip.py save|train|check DIR")


if __name__ == "__main__":
    main()
