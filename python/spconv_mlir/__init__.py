"""spconv_mlir: spconv.pytorch-style models, compiled by spconv-mlir.

    import spconv_mlir
    import spconv_mlir.nn as spconv

    model = spconv.SparseSequential(
        spconv.SubMConv3d(4, 16, 3, indice_key="subm1"),
        spconv.BatchNorm1d(16), spconv.ReLU(),
        spconv.SparseConv3d(16, 32, 3, stride=2, padding=1))
    model.load_state_dict(torch.load("checkpoint.pth"))      # spconv 2.x layout
    net = spconv_mlir.compile(model, grid=[41, 1600, 1408])
    out = net(spconv_mlir.SparseConvTensor(features, indices, [41, 1600, 1408], 1))
    out.indices, out.features

See docs/Python.md.
"""
from . import functional, nn
from .compiler import CompiledNetwork, SparseConvTensor, compile, trace
from .errors import (InputError, ModelError, OutOfMemoryError, SpconvMlirError,
                     ToolchainError, UnsupportedError, WeightError)
from .toolchain import find_toolchain
from .weights import LAYOUTS, load_state_dict

__version__ = "0.1.0"

__all__ = [
    "CompiledNetwork", "InputError", "LAYOUTS", "ModelError", "OutOfMemoryError",
    "SparseConvTensor",
    "SpconvMlirError", "ToolchainError", "UnsupportedError", "WeightError", "compile",
    "find_toolchain", "functional", "load_state_dict", "nn", "trace",
]
