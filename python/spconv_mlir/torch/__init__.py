"""spconv_mlir.torch: spconv.pytorch's modules for training and inference in
PyTorch, on kernels this compiler specialises per layer (torch 2.4 or
later).

    import spconv_mlir.torch as spconv

    net = spconv.SparseSequential(
        spconv.SubMConv3d(4, 16, 3, indice_key="subm1"),
        torch.nn.BatchNorm1d(16), torch.nn.ReLU(),
        spconv.SparseConv3d(16, 32, 3, stride=2, padding=1, indice_key="down1"),
        spconv.SparseInverseConv3d(32, 16, 3, indice_key="down1"))
    x = spconv.SparseConvTensor(features, indices, [41, 1600, 1408], batch_size)
    loss = net(x).features.sum()
    loss.backward()

Rulebooks are built by torch custom ops (`spconv_mlir::subm_rulebook`,
`strided_rulebook`), once per `indice_key`, and read by the convs and pools
(`spconv_mlir::rulebook_conv`, `rulebook_pool`, `rulebook_backward` for
their gradients), whose kernels are compiled on first use for that layer's
window, grid, channels and dtype and kept on disk. See docs/Python.md,
"Training in PyTorch".
"""
from . import modules, ops
from .kernels import ConvSpec, RulebookSpec
from .modules import (SparseConvolution, SparseConvTensor, SparseModule, SparsePool,
                      SparseSequential)

__all__ = ["ConvSpec", "RulebookSpec", "ops", "SparseConvolution", "SparseConvTensor", "SparseModule",
           "SparsePool", "SparseSequential"] + modules.CONV_CLASSES
globals().update({name: getattr(modules, name) for name in modules.CONV_CLASSES})
