"""spconv.pytorch's sparse tensor and conv modules, as torch modules whose
convs run compiled kernels (ops.py).

Parameters have spconv 2.x's names and shapes (`weight`: `Cout x k... x
Cin/groups`, `bias`: `Cout`), so its checkpoints load unchanged; the window
checks, output grids and the 1 x ... x 1 weight quirk are the traced front
end's (`spconv_mlir.nn`), shared, not copied.
"""
import math
import operator

import torch

from .. import nn as traced
from ..errors import InputError, ModelError
from . import ops
from .kernels import TARGETS, ConvSpec, RulebookSpec

_DTYPES = {torch.float32: "float32", torch.float64: "float64"}


def _static_int(value):
    """A grid or batch size as a Python int. The kernels are compiled for
    the grid, so it must be a constant: under torch.compile(dynamic=True)
    the ints of a model's inputs arrive as symbols, and operator.index makes
    dynamo specialise one (a guard on its value) where int() would keep a
    symbol that the kernel's spec cannot be written with."""
    try:
        return operator.index(value)
    except TypeError:
        return int(value)


class SparseConvTensor:
    """Sites and their features: `features` (`N x C`), `indices` (`N x (1 +
    D)` int32, the batch index first), `spatial_shape` (the grid, D sizes)
    and `batch_size`, as spconv.pytorch's. `indice_dict` carries, per
    `indice_key`, what a later inverse conv needs of the strided conv that
    set it."""

    def __init__(self, features, indices, spatial_shape, batch_size, grid=None,
                 voxel_num=None, indice_dict=None, benchmark=False, **unused):
        self._features = features
        self.indices = indices
        self.spatial_shape = [_static_int(s) for s in spatial_shape]
        self.batch_size = _static_int(batch_size)
        self.indice_dict = dict(indice_dict or {})
        self.grid = grid
        self.voxel_num = voxel_num
        self.benchmark = benchmark

    @property
    def features(self):
        return self._features

    @features.setter
    def features(self, value):
        self._features = value

    def replace_feature(self, feature):
        """The same sites with new features (spconv 2.x's way of applying
        feature layers)."""
        out = SparseConvTensor(feature, self.indices, self.spatial_shape, self.batch_size,
                               self.grid, self.voxel_num, self.indice_dict, self.benchmark)
        return out

    @property
    def spatial_size(self):
        return math.prod(self.spatial_shape)

    def dense(self, channels_first=True):
        """The dense `batch x C x spatial...` tensor (`batch x spatial... x
        C` without channels_first), zeros off the sites."""
        shape = [self.batch_size] + self.spatial_shape + [self.features.shape[1]]
        out = self.features.new_zeros(shape)
        index = tuple(self.indices[:, i].long() for i in range(self.indices.shape[1]))
        out = out.index_put(index, self.features)
        if channels_first:
            out = out.permute(0, len(shape) - 1, *range(1, len(shape) - 1)).contiguous()
        return out

    def __repr__(self):
        return "SparseConvTensor(sites=%d, channels=%d, spatial_shape=%s, batch_size=%d)" % (
            self.indices.shape[0], self.features.shape[1], self.spatial_shape,
            self.batch_size)


class SparseModule(torch.nn.Module):
    """A module that takes and returns a SparseConvTensor (spconv's marker
    class: SparseSequential hands such modules the tensor, others its
    features)."""


class SparseSequential(SparseModule):
    """Applies its modules in order: sparse modules to the tensor, any other
    module (BatchNorm1d, ReLU, ...) to its features."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], dict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)
        for name, module in kwargs.items():
            self.add_module(name, module)

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return SparseSequential(*list(self._modules.values())[index])
        return list(self._modules.values())[index]

    def add(self, module, name=None):
        self.add_module(name or str(len(self._modules)), module)

    def forward(self, x):
        for module in self._modules.values():
            if isinstance(module, SparseModule):
                x = module(x)
            elif isinstance(x, SparseConvTensor):
                x = x.replace_feature(module(x.features))
            else:
                x = module(x)
        return x


class _IndiceRecord:
    """A rulebook under its indice_key: the build's spec (its window and
    grids), the sites it was built on (the tensor object, and as int32) and
    its output sites, its pairs, and the layer that built it. Layers with
    the same key and window on the same sites read it instead of building
    their own; an inverse conv reads a strided conv's backwards."""

    def __init__(self, spec, sites, in_indices, out_indices, pairs, layer):
        self.spec, self.sites = spec, sites
        self.in_indices, self.out_indices = in_indices, out_indices
        self.pairs, self.layer = pairs, layer


def _rulebook(x, indices, spec, key, layer, indice_dict):
    """The rulebook of `spec` on `x`'s sites: the one under `key` if it was
    built there with the same window, else a new one (kept under `key`).
    Returns the record."""
    record = indice_dict.get(key) if key is not None else None
    if record is not None and record.sites is x.indices:
        if record.spec != spec:
            def window(s):
                return "%s, kernel %s, stride %s, padding %s, dilation %s" % (
                    s.kind, list(s.kernel), list(s.stride), list(s.padding),
                    list(s.dilation))
            raise ModelError("%s: indice_key=%r names the rulebook of %s (%s), not one of "
                             "this layer's window (%s)" % (layer, key, record.layer,
                                                           window(record.spec), window(spec)))
        return record
    if spec.kind == "subm":
        pairs = tuple(ops.subm_rulebook(indices, spec.to_json()))
        out_indices = x.indices
    else:
        out_indices, *pairs = ops.strided_rulebook(indices, spec.to_json())
        pairs = tuple(pairs)
    record = _IndiceRecord(spec, x.indices, indices, out_indices, pairs, layer)
    if key is not None:
        indice_dict[key] = record
    return record


class SparseConvolution(SparseModule):
    """A sparse conv of spconv.pytorch's signature; the classes below fix
    `ndim` and `kind`."""
    ndim = None
    kind = "regular"

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, indice_key=None, output_padding=0,
                 algo=None, fp32_accum=None, name=None, **unused):
        super().__init__()
        # The traced front end's checks (window, groups, subm stride,
        # inverse key); they set the window's attributes on this module.
        traced.configure_conv(self, in_channels, out_channels, kernel_size, stride, padding,
                              dilation, groups, indice_key, output_padding, unused)
        group_in = self.in_channels // self.groups
        volume = math.prod(self.kernel_size)
        bound = 1.0 / math.sqrt(group_in * volume)
        self.weight = torch.nn.Parameter(torch.empty(
            (self.out_channels,) + self.kernel_size + (group_in,)).uniform_(-bound, bound))
        self.bias = torch.nn.Parameter(torch.empty(self.out_channels).uniform_(-bound, bound)) \
            if bias else None

    def extra_repr(self):
        return traced.SparseConvolution.extra_repr(self)

    def _layer(self):
        return "%s(%s)" % (type(self).__name__, self.extra_repr())

    def reads_weight_as_matrix(self):
        return traced.SparseConvolution.reads_weight_as_matrix(self)

    def kernel_matrix(self, weight=None):
        """The weight (default: the parameter) as the compiler takes it, `K x
        Cin/groups x Cout`, by torch ops (so its gradient flows back), in
        memory in that order: the conv saves this copy for its backward,
        which would otherwise copy the permuted view a second time."""
        w = self.weight if weight is None else weight
        if self.reads_weight_as_matrix():
            return w.reshape(1, self.in_channels, self.out_channels)
        volume = math.prod(self.kernel_size)
        return w.reshape(self.out_channels, volume, self.in_channels // self.groups) \
            .permute(1, 2, 0).contiguous()

    def _features(self, x, layer):
        features = x.features
        if not isinstance(features, torch.Tensor) or features.dim() != 2:
            raise InputError("%s: features must be an N x C tensor, got %s"
                             % (layer, _describe(features)))
        if features.shape[1] != self.in_channels:
            raise InputError("%s: in_channels=%d but the features have %d columns"
                             % (layer, self.in_channels, features.shape[1]))
        if features.dtype != self.weight.dtype:
            raise InputError("%s: the features are %s but the weight is %s"
                             % (layer, features.dtype, self.weight.dtype))
        if features.dtype not in _DTYPES:
            raise InputError("%s: %s is not supported; use float32 or float64"
                             % (layer, features.dtype))
        if features.device != self.weight.device:
            raise InputError("%s: features on %s but the weight on %s; move the module or "
                             "the tensor" % (layer, features.device, self.weight.device))
        _check_device(features, layer)
        return features

    def forward(self, x):
        return self.apply_weights(x, self.weight, self.bias)

    def apply_weights(self, x, weight, bias):
        """The layer on `x` with `weight` (spconv 2.x's layout) and `bias`
        in place of its parameters: the functional form."""
        layer = self._layer()
        if not isinstance(x, SparseConvTensor):
            raise InputError("%s takes a SparseConvTensor, got %s" % (layer, type(x).__name__))
        if len(x.spatial_shape) != self.ndim:
            raise InputError("%s: a %d-D layer applied to a %d-D sparse tensor (spatial_shape "
                             "%s)" % (layer, self.ndim, len(x.spatial_shape), x.spatial_shape))
        indices, features = _check_indices(x, self.ndim, layer), self._features(x, layer)
        if features.shape[0] != indices.shape[0]:
            raise InputError("%s: %d indices but %d feature rows" % (
                layer, indices.shape[0], features.shape[0]))
        grid = tuple(x.spatial_shape)
        dtype = _DTYPES[features.dtype]
        weight = self.kernel_matrix(weight)
        indice_dict = dict(x.indice_dict)
        try:
            if self.kind == "inverse":
                record = self._record(x, layer)
                spec = ConvSpec(*record.spec, "inverse_conv", self.in_channels,
                                self.out_channels, self.groups, bias is not None, dtype)
                sites, out_grid = record.in_indices, list(record.spec.grid)
                out_indices = record.sites
            else:
                out_grid = list(grid) if self.kind == "subm" else \
                    traced.SparseConvolution._output_grid(self, list(grid), layer)
                # A subm conv's padding is its kernel's half, whatever the
                # layer says (spconv's too): not part of its rulebook.
                padding = (0,) * self.ndim if self.kind == "subm" else tuple(self.padding)
                window = RulebookSpec(self.kind, tuple(self.kernel_size), tuple(self.stride),
                                      padding, tuple(self.dilation),
                                      tuple(self.output_padding), grid, tuple(out_grid))
                record = _rulebook(x, indices, window, self.indice_key, layer, indice_dict)
                spec = ConvSpec(*window, "conv", self.in_channels, self.out_channels,
                                self.groups, bias is not None, dtype)
                out_indices = record.out_indices
                sites = indices if self.kind == "subm" else out_indices
            out = ops.rulebook_conv(*record.pairs, sites, features, weight, bias,
                                    spec.to_json())
        except InputError as e:
            raise InputError("%s: %s" % (layer, e)) from None
        return SparseConvTensor(out, out_indices, out_grid, x.batch_size, x.grid, x.voxel_num,
                                indice_dict, x.benchmark)

    def _record(self, x, layer):
        record = x.indice_dict.get(self.indice_key)
        if record is None or record.spec.kind != "regular":
            known = sorted(k for k, r in x.indice_dict.items() if r.spec.kind == "regular")
            raise ModelError("%s: no SparseConv with indice_key=%r before it on this "
                             "tensor's path (keys of strided convs: %s)"
                             % (layer, self.indice_key, ", ".join(map(repr, known)) or "none"))
        if tuple(record.spec.kernel) != tuple(self.kernel_size):
            raise ModelError("%s: kernel_size %s differs from kernel_size %s of %s, the conv "
                             "it inverts (indice_key=%r)" % (
                                 layer, list(self.kernel_size), list(record.spec.kernel),
                                 record.layer, self.indice_key))
        if list(x.spatial_shape) != list(record.spec.out_grid) or \
                x.indices is not record.out_indices:
            raise ModelError("%s: its input is not on the output sites of %s (indice_key=%r), "
                             "the conv it inverts" % (layer, record.layer, self.indice_key))
        return record


class SparsePool(SparseModule):
    """Max or average pooling over the sites a window reaches (a regular
    conv's output sites); the classes below fix `ndim` and `mode`."""
    ndim = None
    mode = "max"

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, indice_key=None,
                 algo=None, **unused):
        super().__init__()
        traced.configure_pool(self, kernel_size, stride, padding, dilation, indice_key,
                              unused)

    def extra_repr(self):
        return traced.SparsePool.extra_repr(self)

    def forward(self, x):
        layer = "%s(%s)" % (type(self).__name__, self.extra_repr())
        if not isinstance(x, SparseConvTensor):
            raise InputError("%s takes a SparseConvTensor, got %s" % (layer, type(x).__name__))
        if len(x.spatial_shape) != self.ndim:
            raise InputError("%s: a %d-D layer applied to a %d-D sparse tensor (spatial_shape "
                             "%s)" % (layer, self.ndim, len(x.spatial_shape), x.spatial_shape))
        indices = _check_indices(x, self.ndim, layer)
        features = x.features
        if not isinstance(features, torch.Tensor) or features.dim() != 2 or \
                features.dtype not in _DTYPES:
            raise InputError("%s: features must be an N x C float32 or float64 tensor, "
                             "got %s" % (layer, _describe(features)))
        _check_device(features, layer)
        grid = tuple(x.spatial_shape)
        out_grid = tuple(traced.pool_output_grid(self, list(grid), layer))
        channels = features.shape[1]
        window = RulebookSpec("regular", tuple(self.kernel_size), tuple(self.stride),
                              tuple(self.padding), tuple(self.dilation), (0,) * self.ndim,
                              grid, out_grid)
        spec = ConvSpec(*window, self.mode + "pool", channels, channels, 1, False,
                        _DTYPES[features.dtype])
        indice_dict = dict(x.indice_dict)
        try:
            record = _rulebook(x, indices, window, self.indice_key, layer, indice_dict)
            out = ops.rulebook_pool(*record.pairs, record.out_indices, features,
                                    spec.to_json())
        except InputError as e:
            raise InputError("%s: %s" % (layer, e)) from None
        return SparseConvTensor(out, record.out_indices, list(out_grid), x.batch_size, x.grid,
                                x.voxel_num, indice_dict, x.benchmark)


def _check_indices(x, ndim, layer):
    """`x.indices` as int32 on the features' device: other integer types converted where
    their values fit, anything else a clear error."""
    indices = x.indices
    if not isinstance(indices, torch.Tensor) or indices.dim() != 2 or \
            indices.shape[1] != ndim + 1:
        raise InputError("%s: indices must be a %d-column tensor (batch, then %d "
                         "coordinates), got %s" % (layer, ndim + 1, ndim, _describe(indices)))
    if isinstance(x.features, torch.Tensor) and indices.device != x.features.device:
        raise InputError("%s: the indices are on %s but the features on %s; both must be "
                         "on one device" % (layer, indices.device, x.features.device))
    if indices.dtype != torch.int32:
        if indices.dtype not in (torch.int64, torch.int16, torch.int8, torch.uint8):
            raise InputError("%s: indices must be integers, got %s" % (layer, indices.dtype))
        if indices.numel() and (indices.min() < 0 or indices.max() > 2**31 - 1):
            raise InputError("%s: indices hold values outside int32" % layer)
        indices = indices.to(torch.int32)
    return indices


def _check_device(tensor, layer):
    if tensor.device.type not in TARGETS:
        raise InputError("%s: spconv_mlir.torch runs CPU and CUDA tensors, not tensors on %s"
                         % (layer, tensor.device))


def _describe(value):
    if isinstance(value, torch.Tensor):
        return "a %s tensor of shape %s" % (value.dtype, list(value.shape))
    return type(value).__name__


def _conv_class(name, ndim, kind, doc):
    return type(name, (SparseConvolution,), {"ndim": ndim, "kind": kind, "__doc__": doc})


def _pool_class(name, ndim, mode):
    return type(name, (SparsePool,), {"ndim": ndim, "mode": mode,
                                      "__doc__": "%s pooling over a window." % mode.title()})


_KINDS = {"SubMConv": ("subm", "Submanifold conv: output sites are the input sites."),
          "SparseConv": ("regular", "Regular sparse conv: output sites are every site "
                                    "the window reaches from an input site."),
          "SparseConvTranspose": ("transposed", "Transposed sparse conv."),
          "SparseInverseConv": ("inverse", "Inverse of the SparseConv with the same "
                                           "indice_key: back onto its input sites.")}
# SubMConv1d .. SparseInverseConv4d, SparseMaxPool1d .. SparseAvgPool4d.
CONV_CLASSES = []
for _prefix, (_kind, _doc) in _KINDS.items():
    for _n in (1, 2, 3, 4):
        _name = "%s%dd" % (_prefix, _n)
        globals()[_name] = _conv_class(_name, _n, _kind, _doc)
        CONV_CLASSES.append(_name)
for _mode in ("max", "avg"):
    for _n in (1, 2, 3, 4):
        _name = "Sparse%sPool%dd" % (_mode.title(), _n)
        globals()[_name] = _pool_class(_name, _n, _mode)
        CONV_CLASSES.append(_name)
