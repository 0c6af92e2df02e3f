"""spconv_mlir.torch and the two OpenMP runtimes: with torch's threads on
libgomp (the PyPI wheel's) and the kernels on two threads, the first op
warns once, naming the LD_PRELOAD that fixes it; with libomp preloaded
there is no warning, and the outputs and gradients are bit-identical to
the first run's (the runtime changes who runs the loops, not what they
compute).

Run with torch 2.4 or later (build/venv-torch): lit's `torch2` feature.
"""
import os
import subprocess
import sys


def child(path):
    import warnings

    import torch

    import spconv_mlir.torch as spconv
    from spconv_mlir.torch import openmp

    torch.set_num_threads(2)
    torch.manual_seed(0)
    grid = [8, 8, 8]
    coords = torch.unique(torch.randint(0, 8, (60, 3)), dim=0)
    indices = torch.cat([torch.zeros(len(coords), 1, dtype=torch.long), coords], 1).int()
    features = torch.randn(len(indices), 8, dtype=torch.float64, requires_grad=True)
    net = spconv.SparseSequential(
        spconv.SubMConv3d(8, 16, 3, indice_key="a"),
        spconv.SparseConv3d(16, 16, 2, stride=2, indice_key="down"),
        spconv.SparseInverseConv3d(16, 8, 2, indice_key="down")).double()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = net(spconv.SparseConvTensor(features, indices, grid, 1))
        out.features.square().sum().backward()
        net(spconv.SparseConvTensor(features, indices, grid, 1))
    ours = [w for w in caught if issubclass(w.category, openmp.OpenMPWarning)]
    print("provider:", os.path.basename(openmp.gomp_provider() or "none"))
    print("warnings:", len(ours))
    for w in ours:
        print("warning:", str(w.message))
    torch.save([out.features.detach(), features.grad] +
               [p.grad for p in net.parameters()], path)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    import torch

    from spconv_mlir.toolchain import find_libomp

    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    runs = {"libgomp": {}, "libomp": {"LD_PRELOAD": find_libomp()}}
    for name, extra in runs.items():
        path = os.path.join(work, name + ".pt")
        result = subprocess.run([sys.executable, __file__, "--child", path],
                                env=dict(os.environ, **extra), capture_output=True, text=True)
        print("== %s\n%s" % (name, result.stdout), end="")
        if result.returncode != 0:
            sys.exit(result.stderr)
    a, b = (torch.load(os.path.join(work, n + ".pt")) for n in runs)
    same = all(torch.equal(x, y) for x, y in zip(a, b))
    print("bit-identical under both runtimes:", same)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
