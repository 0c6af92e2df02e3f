"""spconv_mlir.torch where no compiler is installed (a deployment box):
the ops run from a kernel store filled on a machine with the compiler.

usage: torch_deploy.py fill OUT.pt     (with spconv-compile: fills the store)
       torch_deploy.py run OUT.pt      (with only the runtime: reads it)

`fill` runs a small network (a subm conv, a strided conv, its inverse, a max
pool) forward and backward, so that every kernel it needs is compiled into
$SPCONV_MLIR_CACHE_DIR, and saves the outputs and gradients. `run` does the
same with $SPCONV_MLIR_PREFIX holding the runtime alone: the results must be
bit-identical, a layer the store lacks must fail with an error that says
what to do, and neither code for another CPU nor a runtime of another build
may come from the store's libraries.
"""
import os
import shutil
import sys
import tempfile

import torch

import spconv_mlir.torch as spconv
from spconv_mlir.errors import ToolchainError
from spconv_mlir.toolchain import TOOLCHAIN_ID, Toolchain, build_library, find_toolchain
from spconv_mlir.torch import kernels

GRID = [9, 8, 7]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.subm = spconv.SubMConv3d(3, 4, 3, indice_key="subm")
        self.down = spconv.SparseConv3d(4, 5, 3, stride=2, padding=1, indice_key="down")
        self.pool = spconv.SparseMaxPool3d(2, stride=1)
        self.up = spconv.SparseInverseConv3d(5, 4, 3, indice_key="down")

    def forward(self, x):
        x = self.subm(x)
        coarse = self.down(x)
        pooled = self.pool(coarse)
        return pooled, self.up(coarse)


def results():
    torch.manual_seed(0)
    net = Net()
    generator = torch.Generator().manual_seed(1)
    cells = torch.randperm(9 * 8 * 7, generator=generator)[:40]
    indices = torch.stack([torch.zeros_like(cells), cells // 56, cells // 7 % 8, cells % 7],
                          dim=1).int()
    features = torch.randn(40, 3, generator=generator, requires_grad=True)
    pooled, up = net(spconv.SparseConvTensor(features, indices, GRID, 1))
    loss = pooled.features.square().sum() + up.features.sin().sum()
    grads = torch.autograd.grad(loss, [features] + list(net.parameters()))
    return {"pooled": pooled.features, "pooled_sites": pooled.indices,
            "up": up.features, "grads": grads}


def same(a, b):
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return torch.equal(a, b)


def error_of(call):
    try:
        call()
    except ToolchainError as e:
        return str(e)
    return "no error"


def run(saved):
    toolchain = find_toolchain()
    print("compiler:", toolchain.compiler)
    want = torch.load(saved)
    got = results()
    print("outputs and gradients bit-identical to the compiler's:",
          all(same(got[k], want[k]) for k in want))

    # A layer whose kernels nobody compiled.
    layer = spconv.SubMConv3d(3, 6, 3)
    x = spconv.SparseConvTensor(torch.randn(2, 3), torch.tensor([[0, 1, 1, 1], [0, 1, 2, 1]],
                                                                 dtype=torch.int32), GRID, 1)
    print("a new layer:", error_of(lambda: layer(x)))

    # The same kernel text under another build's identity: a miss, not the
    # library of this one.
    spec = next(kernels.RulebookSpec.from_json(text)
                for kind, text in kernels._loaded if kind == "RulebookSpec")
    text, entries = kernels.rulebook_module(spec), ("rulebook_" + spec.key(),)
    found, _ = build_library(text, toolchain, entries=entries)
    print("this build's rulebook kernel from the store:",
          found.startswith(os.environ["SPCONV_MLIR_CACHE_DIR"]))
    os.environ["SPCONV_MLIR_CPU"] = "x86-64-v3"
    print("code for another CPU:", error_of(lambda: build_library(text, toolchain,
                                                                   entries=entries)))
    del os.environ["SPCONV_MLIR_CPU"]
    other = tempfile.mkdtemp()
    for name in os.listdir(toolchain.libdir):
        os.symlink(os.path.join(toolchain.libdir, name), os.path.join(other, name))
    os.remove(os.path.join(other, TOOLCHAIN_ID))
    with open(os.path.join(other, TOOLCHAIN_ID), "w") as f:
        f.write("0" * 64 + "\n")
    another = Toolchain(toolchain.prefix, None, other)
    print("another build:", error_of(lambda: build_library(text, another, entries=entries)))
    with open(os.path.join(other, TOOLCHAIN_ID), "w") as f:
        f.write("not an identity\n")
    print("a damaged identity:",
          error_of(lambda: build_library(text, Toolchain(toolchain.prefix, None, other),
                                         entries=entries)))
    shutil.rmtree(other)


if __name__ == "__main__":
    mode, path = sys.argv[1:]
    if mode == "fill":
        print("compiler:", os.path.basename(find_toolchain().compiler))
        torch.save(results(), path)
    else:
        run(path)
