"""spconv_mlir.torch where no compiler is installed (a deployment box):
the ops run from a kernel store filled on a machine with the compiler.

usage: torch_deploy.py fill [--cuda] OUT.pt  (with spconv-compile: fills the store)
       torch_deploy.py run OUT.pt              (with only the runtime: reads it)
       torch_deploy.py run-cuda OUT.pt         (the CUDA half)

`fill` runs a small network (a subm conv, a strided conv, its inverse, a max
pool) forward and backward and a gradcheck of a small f64 layer, so that
every kernel they need is compiled into $SPCONV_MLIR_CACHE_DIR, and saves
the outputs and gradients; with --cuda it compiles the same kernels for
CUDA too, for sm_80 and sm_90 (no GPU needed). `run` does the same with $SPCONV_MLIR_PREFIX
holding the runtime alone: the results must be bit-identical, a layer the
store lacks must fail with an error that says what to do, and neither code
for another CPU nor a runtime of another build may come from the store's
libraries. `run-cuda`, with the runtime alone too, finds every kernel's
CUDA build in the store; then, on a GPU (the GPU-day kit's torch-deploy
phase), runs the network and the gradcheck on CUDA tensors: outputs and
gradients equal the CPU's to 1e-5, bit for bit from one run to the next and
on another stream, and the buffers the kernels return are torch's caching
allocator's.
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


def results(device="cpu"):
    torch.manual_seed(0)
    net = Net().to(device)
    generator = torch.Generator().manual_seed(1)
    cells = torch.randperm(9 * 8 * 7, generator=generator)[:40]
    indices = torch.stack([torch.zeros_like(cells), cells // 56, cells // 7 % 8, cells % 7],
                          dim=1).int().to(device)
    features = torch.randn(40, 3, generator=generator).to(device).requires_grad_()
    pooled, up = net(spconv.SparseConvTensor(features, indices, GRID, 1))
    loss = pooled.features.square().sum() + up.features.sin().sum()
    grads = torch.autograd.grad(loss, [features] + list(net.parameters()))
    return {"pooled": pooled.features, "pooled_sites": pooled.indices,
            "up": up.features, "grads": grads}


def gradcheck(device="cpu"):
    """torch.autograd.gradcheck of a small f64 subm conv on `device`."""
    torch.manual_seed(2)
    layer = spconv.SubMConv3d(2, 3, 3).double().to(device)
    cells = torch.randperm(9 * 8 * 7, generator=torch.Generator().manual_seed(3))[:12]
    indices = torch.stack([torch.zeros_like(cells), cells // 56, cells // 7 % 8, cells % 7],
                          dim=1).int().to(device)
    features = torch.randn(12, 2, dtype=torch.float64, device=device, requires_grad=True)
    weight = layer.weight.detach().clone().requires_grad_()
    bias = layer.bias.detach().clone().requires_grad_()

    def f(feat, weight, bias):
        return layer.apply_weights(spconv.SparseConvTensor(feat, indices, GRID, 1), weight,
                                   bias).features

    return torch.autograd.gradcheck(f, (features, weight, bias), eps=1e-6, atol=1e-7)


# The chips of the GPUs the kit meets (A100, H100 and H200): kernels are
# compiled for the device's own chip.
CUDA_CHIPS = ("sm_80", "sm_90")


def load_for_cuda(chips=CUDA_CHIPS):
    """The kernels this process loaded for the CPU, loaded for CUDA on each
    of `chips`: compiled into the store where the compiler is, read from
    it where only the runtime is (loading them needs no GPU). How many per
    chip, and the chips."""
    specs = kernels.loaded_specs("cpu")
    chip = os.environ.get("SPCONV_MLIR_CUDA_CHIP")
    try:
        for each in chips:
            os.environ["SPCONV_MLIR_CUDA_CHIP"] = each
            for spec in specs:
                if isinstance(spec, kernels.RulebookSpec):
                    kernels.rulebook_kernel(spec, "cuda")
                else:
                    kernels.compute_kernel(spec, "cuda").load_backward()
    finally:
        if chip is None:
            del os.environ["SPCONV_MLIR_CUDA_CHIP"]
        else:
            os.environ["SPCONV_MLIR_CUDA_CHIP"] = chip
    return "%d (%s)" % (len(specs), " ".join(chips))


def same(a, b):
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return torch.equal(a, b)


def error_of(call):
    """What `call` raised (a ToolchainError), else what it returned."""
    try:
        return call()
    except ToolchainError as e:
        return str(e)


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
    spec = next(s for s in kernels.loaded_specs() if isinstance(s, kernels.RulebookSpec))
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


def close(a, b):
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if a.dtype in (torch.int32, torch.int64):
        return torch.equal(a.cpu(), b.cpu())
    return torch.allclose(a.cpu(), b.cpu(), rtol=1e-5, atol=1e-5)


def run_cuda(saved):
    print("compiler:", find_toolchain().compiler)
    want = torch.load(saved)
    results()
    gradcheck()
    # On a GPU only its own chip's: loading another's would have the driver
    # compile its PTX for this one.
    device = torch.cuda.is_available()
    chips = (kernels.cuda_chip(torch.device("cuda")),) if device else CUDA_CHIPS
    print("cuda kernels from the store:", error_of(lambda: load_for_cuda(chips)))
    if not device:
        print("no CUDA device")
        return
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    got = results("cuda")
    torch.cuda.synchronize()
    held = torch.cuda.memory_allocated() - before
    print("outputs and gradients on cuda equal the CPU's:",
          all(close(got[k], want[k]) for k in want))
    print("outputs on cuda tensors:", all(got[k].is_cuda for k in ("pooled", "up")))
    # The results (and every buffer they hold on to) are the caching
    # allocator's: it counts at least their bytes.
    kept = sum(got[k].untyped_storage().nbytes() for k in ("pooled", "pooled_sites", "up"))
    print("results from torch's allocator:", held >= kept > 0)
    print("bit-identical from run to run:",
          all(same(got[k], v) for k, v in results("cuda").items()))
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        other = results("cuda")
    stream.synchronize()
    print("bit-identical on another stream:", all(same(got[k], v) for k, v in other.items()))
    print("gradcheck f64 on cuda:", gradcheck("cuda"))


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[-1]
    if mode == "fill":
        print("compiler:", os.path.basename(find_toolchain().compiler))
        torch.save(results(), path)
        print("gradcheck f64:", gradcheck())
        if "--cuda" in sys.argv:
            print("kernels compiled for cuda:", load_for_cuda())
    elif mode == "run-cuda":
        run_cuda(path)
    else:
        run(path)
