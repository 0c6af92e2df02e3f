"""`compile(model, grid=...)`: trace, emit MLIR, build, load.

The compiled network is called like the model: on a `SparseConvTensor`
(or `indices, features`), with numpy arrays or torch tensors, and returns
sparse tensors with the output sites (sorted by key for regular and
transposed convs, as DESIGN.md defines) and their features.
"""
import math

import numpy as np

from . import abi
from . import graph as g
from .emit import ELEMENT_TYPES, Emitter
from .errors import InputError, ModelError, UnsupportedError
from .nn import Module
from .toolchain import build_library, find_toolchain

TARGETS = ("cpu", "cuda")
INT64_MAX = 2 ** 63 - 1


class SparseConvTensor:
    """Sites and their features, with spconv's constructor:
    `SparseConvTensor(features, indices, spatial_shape, batch_size)`.
    `indices` is `N x (1 + D)` int32 (batch, then the spatial indices in the
    order of `spatial_shape`), `features` `N x C`."""

    def __init__(self, features, indices, spatial_shape=None, batch_size=None):
        self.features = features
        self.indices = indices
        self.spatial_shape = None if spatial_shape is None else [int(s) for s in spatial_shape]
        self.batch_size = batch_size

    def replace_feature(self, features):
        return SparseConvTensor(features, self.indices, self.spatial_shape, self.batch_size)

    def __repr__(self):
        return "SparseConvTensor(sites=%d, channels=%s, spatial_shape=%s)" % (
            len(self.indices), getattr(self.features, "shape", ("?", "?"))[1],
            self.spatial_shape)


def _check_grid(grid, batch_size):
    if not isinstance(grid, (list, tuple)) or not 1 <= len(grid) <= 4:
        raise ModelError("grid must list 1 to 4 spatial sizes (spconv's spatial_shape), "
                         "got %r" % (grid,))
    grid = [int(s) for s in grid]
    if min(grid) <= 0:
        raise ModelError("grid sizes must be positive, got %s" % grid)
    volume = math.prod(grid) * (batch_size or 1)
    if volume > INT64_MAX:
        raise ModelError("grid %s%s has more sites than a 64-bit key can number"
                         % (grid, "" if batch_size is None else " x batch %d" % batch_size))
    return grid


def _outputs(result):
    if isinstance(result, g.TracedSparseTensor):
        return [result], True
    if isinstance(result, (list, tuple)) and result and all(
            isinstance(r, g.TracedSparseTensor) for r in result):
        return list(result), False
    raise ModelError("the model's forward must return a sparse tensor or a tuple of "
                     "them, got %s" % type(result).__name__)


def trace(model, grid, in_channels=None, batch_size=None):
    """Runs the model's forward on symbolic inputs; returns the graph."""
    if not isinstance(model, Module):
        hint = ""
        if any(c.__name__ == "Module" and c.__module__.startswith("torch")
               for c in type(model).__mro__):
            hint = ("; write it with spconv_mlir.nn (spconv_mlir.nn.Module as its base "
                    "class and spconv_mlir.nn layers) and load its state_dict")
        raise ModelError("compile() takes a spconv_mlir.nn.Module, got %s%s"
                         % (type(model).__name__, hint))
    for name, module in model.named_modules():
        module.__dict__["_trace_name"] = name or type(model).__name__
    graph = g.Graph()
    coords = g.Coords(graph, grid, batch_size)
    features = g.Features(graph, None if in_channels is None else int(in_channels), coords)
    graph.inputs = [coords, features]
    with g.tracing(graph):
        result = model(g.TracedSparseTensor(coords, features))
    outputs, single = _outputs(result)
    graph.outputs = [(o.coords, o.features) for o in outputs]
    graph.single_output = single
    if features.channels is None:
        raise ModelError("the input's channels are not used by any layer that fixes "
                         "them; pass in_channels= to compile()")
    return graph


def compile(model, grid, target="cpu", in_channels=None, batch_size=None, dtype="float32",
            fold_batchnorm=True, prefix=None, cache=True, options=(), num_threads=None):
    """Compiles `model` for sparse tensors on `grid` (spconv's
    `spatial_shape`: 1 to 4 sizes) and returns a `CompiledNetwork`.

    target: "cpu" or "cuda" (the CUDA build needs spconv-mlir built with the
        CUDA toolkit, and a GPU to run).
    in_channels: the input's feature channels (default: those of the first
        layer that reads them).
    batch_size: states the batch count in the grid (optional).
    dtype: "float32" or "float64".
    fold_batchnorm: fold each BatchNorm1d that follows a conv into the
        conv's weights and bias (inference only; exact up to rounding).
    prefix: where spconv-mlir is installed or built (see toolchain.py).
    cache: reuse a library compiled before for the same network and options.
    options: extra spconv-compile options, e.g. ["--mcpu=x86-64-v3"].
    num_threads: threads of the compiled code (default: OpenMP's default).
    """
    if target not in TARGETS:
        raise ModelError("target must be one of %s, got %r" % (", ".join(TARGETS), target))
    dtype = np.dtype(dtype).name
    if dtype not in ELEMENT_TYPES:
        raise UnsupportedError("dtype %s is not supported; use float32 or float64" % dtype)
    if batch_size is not None and int(batch_size) <= 0:
        raise ModelError("batch_size must be positive, got %s" % batch_size)
    grid = _check_grid(grid, batch_size)
    graph = trace(model, grid, in_channels, batch_size)
    emitter = Emitter(graph, dtype, fold_batchnorm)
    text = emitter.emit(graph.inputs, graph.outputs)
    toolchain = find_toolchain(prefix)
    library, header = build_library(text, toolchain, target, options, cache)
    return CompiledNetwork(model, graph, emitter, text, library, header, target, dtype,
                           num_threads)


def _is_torch(value):
    return type(value).__module__.startswith("torch")


class CompiledNetwork:
    """A compiled model. Call it with `SparseConvTensor(features, indices,
    ...)` or `(indices, features)`; it returns a `SparseConvTensor` (or a
    tuple of them when the model returns several) whose arrays are numpy, or
    torch tensors when the inputs were torch tensors."""

    def __init__(self, model, graph, emitter, mlir, library, header, target, dtype,
                 num_threads):
        self.model = model
        self.mlir = mlir
        self.library_path = library
        self.header_path = header
        self.target = target
        self.dtype = np.dtype(dtype)
        coords, features = graph.inputs
        self.grid = list(coords.grid)
        self.ndim = coords.ndim
        self.in_channels = features.channels
        self.params = [p for p, _, _ in emitter.params]
        self.output_spec = [(list(c.grid), f.channels) for c, f in graph.outputs]
        self.single_output = graph.single_output
        results = []
        for _ in graph.outputs:
            results += [(2, np.int32), (2, self.dtype)]
        self.entry = abi.Entry(library, "forward", results)
        self.num_threads = None
        if num_threads is not None:
            self.set_num_threads(num_threads)
        self.reload_weights()

    def set_num_threads(self, count):
        """Threads of this network's calls (compiled loops and runtime),
        applied at each call: networks that share a process (and their
        cached library) keep their own counts. Calls of several networks at
        once from several Python threads share the runtime's."""
        count = int(count)
        if count <= 0:
            raise ModelError("num_threads must be positive, got %d" % count)
        self.num_threads = count

    def reload_weights(self):
        """Reads the model's weights again (after load_state_dict or an edit
        of a layer's arrays); compile() reads them once."""
        self.weights = []
        for p in self.params:
            value = np.ascontiguousarray(np.asarray(p.compute(), dtype=self.dtype))
            if value.shape != p.shape:
                raise ModelError("%s: its weights have shape %s but the compiled network "
                                 "takes %s; compile the model again after changing its "
                                 "layers" % (p.name, value.shape, p.shape))
            self.weights.append(value)
        self._device_weights = None

    # -- inputs ------------------------------------------------------------
    def _inputs(self, args, kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], SparseConvTensor):
            x = args[0]
            indices, features = x.indices, x.features
            if x.spatial_shape is not None and list(x.spatial_shape) != self.grid:
                raise InputError("the input's spatial_shape %s is not the grid %s the "
                                 "network was compiled for" % (x.spatial_shape, self.grid))
        elif len(args) == 2 and not kwargs:
            indices, features = args
        else:
            indices, features = kwargs.get("indices"), kwargs.get("features")
            if indices is None or features is None:
                raise InputError("call the network with a SparseConvTensor or with "
                                 "(indices, features)")
        return indices, features

    def _host_array(self, value, dtype, name, shape_check):
        """A C-contiguous host array of `dtype` (no copy when it already is
        one) and whether the caller passed torch."""
        torch_in = _is_torch(value)
        if torch_in:
            if value.device.type != "cpu":
                raise InputError("%s is on %s; the %s target takes CPU tensors"
                                 % (name, value.device, self.target))
            array = value.detach().numpy()
        else:
            array = np.asarray(value)
        if array.dtype != dtype:
            if not np.can_cast(array.dtype, dtype, casting="same_kind"):
                raise InputError("%s has dtype %s; the network takes %s"
                                 % (name, array.dtype, np.dtype(dtype).name))
            array = array.astype(dtype)
        shape_check(array)
        return np.ascontiguousarray(array), torch_in

    def _check_indices(self, a):
        if a.ndim != 2 or a.shape[1] != self.ndim + 1:
            raise InputError("indices must be N x %d (batch, then %d spatial indices), got "
                             "shape %s" % (self.ndim + 1, self.ndim, a.shape))

    def _check_features(self, a):
        if a.ndim != 2 or a.shape[1] != self.in_channels:
            raise InputError("features must be N x %d (the network's input channels), got "
                             "shape %s" % (self.in_channels, a.shape))

    # -- the call ----------------------------------------------------------
    def __call__(self, *args, **kwargs):
        indices, features = self._inputs(args, kwargs)
        if self.target == "cuda":
            from .cuda import call_cuda

            arrays = call_cuda(self, indices, features)
        else:
            arrays = self._call_cpu(indices, features)
        outs = [SparseConvTensor(arrays[2 * i + 1], arrays[2 * i], grid)
                for i, (grid, _) in enumerate(self.output_spec)]
        return outs[0] if self.single_output else tuple(outs)

    def _call_cpu(self, indices, features):
        idx, t1 = self._host_array(indices, np.int32, "indices", self._check_indices)
        feat, t2 = self._host_array(features, self.dtype, "features", self._check_features)
        if idx.shape[0] != feat.shape[0]:
            raise InputError("indices have %d rows but features have %d; one feature row "
                             "per site" % (idx.shape[0], feat.shape[0]))
        arrays = [idx, feat] + self.weights
        descs = [abi.describe(a.ctypes.data, a.shape, a.itemsize) for a in arrays]
        if self.num_threads is not None:
            self.entry.set_threads(self.num_threads)
        out = self.entry.numpy_results(self.entry.call(descs, self.entry.runtime.free))
        if t1 or t2:
            import torch

            out = [torch.from_numpy(a) for a in out]
        return out

    def __repr__(self):
        return "CompiledNetwork(target=%r, grid=%s, in_channels=%d, outputs=%s, library=%r)" % (
            self.target, self.grid, self.in_channels, self.output_spec, self.library_path)
