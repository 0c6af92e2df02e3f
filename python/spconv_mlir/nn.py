"""Layers with spconv.pytorch's names, arguments and conventions.

A model is written as with spconv 2.x (`import spconv_mlir.nn as spconv`
instead of `import spconv.pytorch as spconv`, and `spconv.Module` as the
base class instead of `torch.nn.Module`), then handed to
`spconv_mlir.compile`. Layers hold their weights as numpy arrays in spconv
2.x's layout (`weight`: `Cout x k... x Cin`, `bias`: `Cout`), named as torch
names them, so a spconv 2.x `state_dict` loads as it is
(`weights.load_state_dict` for other layouts).

Calling a layer outside `compile()` is an error: the layers describe the
network, the compiled code computes it.
"""
import collections
import math

import numpy as np

from . import graph as g
from .errors import ModelError, UnsupportedError

_rng = np.random.default_rng(0)


def manual_seed(seed):
    """Seeds the initial weights of layers created after this call."""
    global _rng
    _rng = np.random.default_rng(seed)


class Module:
    """The base class of layers and models, like `torch.nn.Module`:
    attributes that are modules are its children (named as in torch's
    `state_dict`), `forward` says what it computes."""

    def __init__(self):
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "training", False)

    def __setattr__(self, name, value):
        if "_modules" not in self.__dict__:
            raise ModelError("%s: call super().__init__() before assigning "
                             "attributes" % type(self).__name__)
        value = _adopt(value, name)
        if isinstance(value, Module):
            self._modules[name] = value
            self.__dict__.pop(name, None)
        else:
            self._modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        modules = self.__dict__.get("_modules", {})
        if name in modules:
            return modules[name]
        for table in ("_parameters", "_buffers"):
            entries = self.__dict__.get(table, {})
            if name in entries:
                return entries[name]
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def register_parameter(self, name, array):
        self._parameters[name] = array

    def register_buffer(self, name, array):
        self._buffers[name] = array

    def children(self):
        return iter(self._modules.values())

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(prefix + "." + name if prefix else name)

    def modules(self):
        return (m for _, m in self.named_modules())

    def state_dict(self):
        """Parameters and buffers by their torch names (numpy arrays)."""
        out = collections.OrderedDict()
        for prefix, module in self.named_modules():
            for table in (module._parameters, module._buffers):
                for name, array in table.items():
                    if array is not None:
                        out[prefix + "." + name if prefix else name] = array
        return out

    def load_state_dict(self, state_dict, layout="spconv2", strict=True):
        """See `spconv_mlir.weights.load_state_dict`."""
        from .weights import load_state_dict

        return load_state_dict(self, state_dict, layout=layout, strict=strict)

    def eval(self):
        return self

    def train(self, mode=True):
        if mode:
            raise UnsupportedError("spconv_mlir compiles inference: train() is not supported")
        return self

    def forward(self, *args, **kwargs):
        raise ModelError("%s has no forward()" % type(self).__name__)

    def __call__(self, *args, **kwargs):
        graph = g.current_graph()
        if graph is None:
            raise ModelError(
                "%s was called outside spconv_mlir.compile(): compile the model "
                "and call the compiled network instead" % type(self).__name__)
        name = self.__dict__.get("_trace_name")
        kind = type(self).__name__
        with g.layer(graph, kind if name in (None, kind) else "%s (%s)" % (name, kind)):
            return self.forward(*args, **kwargs)

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = ["%s(%s" % (type(self).__name__, self.extra_repr())]
        for name, child in self._modules.items():
            lines.append("  (%s): %s" % (name, repr(child).replace("\n", "\n  ")))
        return lines[0] + ")" if len(lines) == 1 else "\n".join(lines) + "\n)"


def _adopt(value, name):
    """Torch layers inside our containers become ours (BatchNorm1d, ReLU,
    ...), so spconv.pytorch code that mixes `torch.nn` layers in works."""
    if isinstance(value, Module) or not _is_torch_module(value):
        return value
    kind = type(value).__name__
    if kind == "BatchNorm1d":
        bn = BatchNorm1d(value.num_features, eps=value.eps, momentum=value.momentum,
                         affine=value.affine,
                         track_running_stats=value.track_running_stats)
        for key, tensor in value.state_dict().items():
            table = bn._parameters if key in bn._parameters else bn._buffers
            table[key] = tensor.detach().cpu().numpy().copy()
        return bn
    if kind == "ReLU":
        return ReLU()
    if kind == "LeakyReLU":
        return LeakyReLU(value.negative_slope)
    if kind in ("Identity", "Dropout"):
        return Identity()
    raise UnsupportedError(
        "%s: torch.nn.%s is not supported by spconv_mlir; supported torch "
        "layers: BatchNorm1d, ReLU, LeakyReLU, Identity, Dropout" % (name, kind))


def _is_torch_module(value):
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module"
               for c in type(value).__mro__)


def _tuple(value, ndim, what, layer):
    if isinstance(value, (list, tuple)):
        if len(value) != ndim:
            raise ModelError("%s: %s has %d entries for a %d-D layer"
                             % (layer, what, len(value), ndim))
        out = tuple(int(v) for v in value)
    else:
        out = (int(value),) * ndim
    return out


def _set_window(module, layer, kernel_size, stride, padding, dilation):
    """Sets and checks a conv's or pool's window, one entry per dimension."""
    n = module.ndim
    module.kernel_size = _tuple(kernel_size, n, "kernel_size", layer)
    module.stride = _tuple(stride, n, "stride", layer)
    module.padding = _tuple(padding, n, "padding", layer)
    module.dilation = _tuple(dilation, n, "dilation", layer)
    for what in ("kernel_size", "stride", "dilation"):
        if min(getattr(module, what)) <= 0:
            raise ModelError("%s: %s must be positive, got %s"
                             % (layer, what, list(getattr(module, what))))
    if min(module.padding) < 0:
        raise ModelError("%s: padding must not be negative, got %s"
                         % (layer, list(module.padding)))


def _regular_grid(grid, k, s, p, d):
    """The output grid of a regular conv (DESIGN.md)."""
    return [(i + 2 * p_ - d_ * (k_ - 1) - 1) // s_ + 1 for i, k_, s_, p_, d_ in
            zip(grid, k, s, p, d)]


def _check_sparse(x, layer):
    if not isinstance(x, g.TracedSparseTensor):
        raise ModelError("%s takes a sparse tensor, got %s; feature layers "
                         "(BatchNorm1d, ReLU) take features" % (layer, type(x).__name__))


class SparseSequential(Module):
    """Applies its layers in order, like spconv's SparseSequential: sparse
    layers take the tensor, feature layers (BatchNorm1d, ReLU) its features."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            items = list(args[0].items())
        else:
            items = [(str(i), m) for i, m in enumerate(args)]
        items += list(kwargs.items())
        for name, module in items:
            setattr(self, name, module)
        for name, module in self._modules.items():
            if not isinstance(module, Module):
                raise ModelError("SparseSequential: item %s is %s, not a layer"
                                 % (name, type(module).__name__))

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, index):
        return list(self._modules.values())[index]

    def add(self, module, name=None):
        setattr(self, name or str(len(self._modules)), module)

    def forward(self, x):
        for module in self._modules.values():
            x = module(x)
        return x


Sequential = SparseSequential


class ModuleList(Module):
    def __init__(self, modules=()):
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module):
        setattr(self, str(len(self._modules)), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, index):
        return list(self._modules.values())[index]


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        for name, module in (modules or {}).items():
            self[name] = module

    def __setitem__(self, name, module):
        setattr(self, name, module)

    def __getitem__(self, name):
        return self._modules[name]

    def __contains__(self, name):
        return name in self._modules

    def __len__(self):
        return len(self._modules)

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()


class IndiceRecord:
    """What an `indice_key` names: a conv's geometry and its input and
    output sites (spconv's `indice_dict` entries)."""

    def __init__(self, kind, kernel, stride, padding, dilation, in_coords, out_coords, layer):
        self.kind = kind
        self.kernel, self.stride, self.padding, self.dilation = kernel, stride, padding, dilation
        self.in_coords, self.out_coords = in_coords, out_coords
        self.layer = layer


def configure_conv(module, in_channels, out_channels, kernel_size, stride, padding, dilation,
                   groups, indice_key, output_padding, unused):
    """Checks a conv's arguments and sets them on `module` (whose class
    gives `ndim` and `kind`): the traced layers' and spconv_mlir.torch's."""
    layer = type(module).__name__
    if unused:
        raise UnsupportedError("%s: argument(s) %s are not supported by spconv_mlir"
                               % (layer, ", ".join(sorted(unused))))
    if in_channels <= 0 or out_channels <= 0:
        raise ModelError("%s: channels must be positive, got in_channels=%d, "
                         "out_channels=%d" % (layer, in_channels, out_channels))
    if groups < 1 or in_channels % groups or out_channels % groups:
        raise ModelError("%s: groups=%d must be positive and divide in_channels=%d "
                         "and out_channels=%d" % (layer, groups, in_channels, out_channels))
    module.groups = int(groups)
    n = module.ndim
    module.in_channels, module.out_channels = int(in_channels), int(out_channels)
    _set_window(module, layer, kernel_size, stride, padding, dilation)
    module.output_padding = _tuple(output_padding, n, "output_padding", layer)
    module.indice_key = indice_key
    if module.kind == "subm" and max(module.stride) != 1:
        raise ModelError("%s: a submanifold conv has stride 1 (its output sites are "
                         "its input sites), got stride=%s; use SparseConv%dd to "
                         "downsample" % (layer, list(module.stride), n))
    if module.kind == "inverse" and indice_key is None:
        raise ModelError("%s needs the indice_key of the SparseConv%dd it inverts"
                         % (layer, n))
    if module.kind != "transposed" and max(module.output_padding) != 0:
        raise ModelError("%s: output_padding is only for transposed convs" % layer)


class SparseConvolution(Module):
    """A sparse convolution with spconv 2.x's arguments. `weight` is
    `Cout x k... x Cin` (spconv 2.x's default KRSC layout) and `bias` `Cout`."""

    ndim = None
    kind = "regular"

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, indice_key=None, output_padding=0,
                 algo=None, fp32_accum=None, name=None, **unused):
        super().__init__()
        configure_conv(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                       groups, indice_key, output_padding, unused)
        volume = math.prod(self.kernel_size)
        group_in = self.in_channels // self.groups
        bound = 1.0 / math.sqrt(group_in * volume)
        self.register_parameter("weight", _rng.uniform(
            -bound, bound, (self.out_channels,) + self.kernel_size + (group_in,)
        ).astype(np.float32))
        self.register_parameter("bias", _rng.uniform(-bound, bound, self.out_channels)
                                .astype(np.float32) if bias else None)

    def extra_repr(self):
        s = "%d, %d, kernel_size=%s" % (self.in_channels, self.out_channels,
                                        list(self.kernel_size))
        if max(self.stride) > 1:
            s += ", stride=%s" % list(self.stride)
        if max(self.padding) > 0 and self.kind != "subm":
            s += ", padding=%s" % list(self.padding)
        if max(self.dilation) > 1:
            s += ", dilation=%s" % list(self.dilation)
        if self.groups != 1:
            s += ", groups=%d" % self.groups
        if self.indice_key:
            s += ", indice_key=%r" % self.indice_key
        return s

    def forward(self, x):
        graph = g.current_graph()
        layer = graph.where()
        _check_sparse(x, layer)
        coords, feats = x.coords, x.features
        if coords.ndim != self.ndim:
            raise ModelError("%s: a %d-D layer applied to a %d-D sparse tensor (grid %s)"
                             % (layer, self.ndim, coords.ndim, list(coords.grid)))
        graph.resolve_channels(feats, self.in_channels)
        if feats.channels != self.in_channels:
            raise ModelError("%s: in_channels=%d but its input has %d channels"
                             % (layer, self.in_channels, feats.channels))
        indice_dict = dict(x.indice_dict)
        attrs = {"kind": self.kind, "kernel": self.kernel_size, "stride": self.stride,
                 "padding": self.padding, "dilation": self.dilation,
                 "output_padding": self.output_padding, "in_channels": self.in_channels,
                 "groups": self.groups,
                 "out_channels": self.out_channels}
        if self.kind == "inverse":
            record = self._forward_record(x, layer)
            attrs.update(stride=record.stride, padding=record.padding,
                         dilation=record.dilation)
            node = graph.add(g.Node("inverse_conv", [record.in_coords, coords, feats],
                                    attrs, self, layer))
            out_coords = record.in_coords
        else:
            if self.kind == "subm":
                out_coords = coords
            else:
                out_coords = g.Coords(graph, self._output_grid(coords.grid, layer),
                                      coords.batch)
            node = graph.add(g.Node("conv", [coords, feats], attrs, self, layer))
            if self.indice_key is not None:
                record = IndiceRecord(self.kind, self.kernel_size, self.stride, self.padding,
                                      self.dilation, coords, out_coords, layer)
                previous = indice_dict.get(self.indice_key)
                if previous is None or previous.in_coords is not coords:
                    indice_dict[self.indice_key] = record
        out = g.Features(graph, self.out_channels, out_coords, node)
        node.outputs = [out_coords, out]
        return g.TracedSparseTensor(out_coords, out, indice_dict)

    def _output_grid(self, grid, layer):
        k, s, p, d, op = (self.kernel_size, self.stride, self.padding, self.dilation,
                          self.output_padding)
        if self.kind == "transposed":
            out = [(i - 1) * s_ - 2 * p_ + d_ * (k_ - 1) + op_ + 1
                   for i, k_, s_, p_, d_, op_ in zip(grid, k, s, p, d, op)]
        else:
            out = _regular_grid(grid, k, s, p, d)
        if min(out) <= 0:
            raise ModelError("%s: kernel %s, stride %s, padding %s, dilation %s on the "
                             "grid %s give the empty output grid %s" %
                             (layer, list(k), list(s), list(p), list(d), list(grid), out))
        return out

    def _forward_record(self, x, layer):
        record = x.indice_dict.get(self.indice_key)
        if record is None:
            known = sorted(k for k, r in x.indice_dict.items() if r.kind == "regular")
            raise ModelError("%s: no SparseConv with indice_key=%r before it on this "
                             "tensor's path (keys of regular convs: %s)"
                             % (layer, self.indice_key, ", ".join(map(repr, known)) or "none"))
        if record.kind != "regular":
            raise ModelError("%s: indice_key=%r names a %s conv (%s); an inverse conv "
                             "inverts a regular SparseConv" %
                             (layer, self.indice_key, record.kind, record.layer))
        if record.kernel != self.kernel_size:
            raise ModelError("%s: kernel_size %s differs from kernel_size %s of %s, "
                             "the conv it inverts (indice_key=%r)" %
                             (layer, list(self.kernel_size), list(record.kernel),
                              record.layer, self.indice_key))
        if record.out_coords is not x.coords:
            raise ModelError("%s: its input is not on the output sites of %s "
                             "(indice_key=%r), the conv it inverts" %
                             (layer, record.layer, self.indice_key))
        return record

    def reads_weight_as_matrix(self):
        """spconv 2.x computes a conv with a 1x...x1 kernel (and stride 1
        unless subm) as `features @ weight.view(Cin, Cout)`: the bytes of
        its `Cout x 1... x Cin` parameter read as `Cin x Cout`. Checkpoints
        trained with it hold weights for that product, so it is the
        function of such a layer here too."""
        return (math.prod(self.kernel_size) == 1 and self.groups == 1 and
                (self.kind == "subm" or max(self.stride) == 1))

    def kernel_matrix(self):
        """The weights as the compiler takes them: `K x Cin/groups x Cout`,
        K row-major over the kernel dimensions."""
        w = np.asarray(self.weight, dtype=np.float32)
        volume = math.prod(self.kernel_size)
        if self.reads_weight_as_matrix():
            return np.ascontiguousarray(w.reshape(1, self.in_channels, self.out_channels))
        w = w.reshape(self.out_channels, volume, self.in_channels // self.groups)
        return np.ascontiguousarray(w.transpose(1, 2, 0))


def _conv_class(name, ndim, kind, doc):
    return type(name, (SparseConvolution,), {"ndim": ndim, "kind": kind, "__doc__": doc})


for _n in (1, 2, 3, 4):
    globals()["SubMConv%dd" % _n] = _conv_class(
        "SubMConv%dd" % _n, _n, "subm",
        "Submanifold %d-D conv: output sites are the input sites." % _n)
    globals()["SparseConv%dd" % _n] = _conv_class(
        "SparseConv%dd" % _n, _n, "regular",
        "Regular %d-D sparse conv: every output reached by an input is active." % _n)
    globals()["SparseConvTranspose%dd" % _n] = _conv_class(
        "SparseConvTranspose%dd" % _n, _n, "transposed",
        "Transposed %d-D sparse conv: each input scatters to its output window." % _n)
    globals()["SparseInverseConv%dd" % _n] = _conv_class(
        "SparseInverseConv%dd" % _n, _n, "inverse",
        "Inverse of the %d-D SparseConv named by indice_key: back onto its input sites." % _n)


def configure_pool(module, kernel_size, stride, padding, dilation, indice_key, unused):
    """Checks a pool's arguments and sets them on `module` (stride defaults
    to the kernel, as spconv's): the traced layers' and spconv_mlir.torch's."""
    layer = type(module).__name__
    if unused:
        raise UnsupportedError("%s: argument(s) %s are not supported by spconv_mlir"
                               % (layer, ", ".join(sorted(unused))))
    _set_window(module, layer, kernel_size, kernel_size if stride is None else stride,
                padding, dilation)
    module.indice_key = indice_key


def pool_output_grid(module, grid, layer):
    """A pool's output grid (a regular conv's), or ModelError if empty."""
    out = _regular_grid(grid, module.kernel_size, module.stride, module.padding,
                        module.dilation)
    if min(out) <= 0:
        raise ModelError("%s: kernel %s, stride %s on the grid %s give the empty "
                         "output grid %s" % (layer, list(module.kernel_size),
                                             list(module.stride), list(grid), out))
    return out


class SparsePool(Module):
    ndim = None
    mode = "max"

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, indice_key=None,
                 algo=None, **unused):
        super().__init__()
        configure_pool(self, kernel_size, stride, padding, dilation, indice_key, unused)

    def extra_repr(self):
        return "kernel_size=%s, stride=%s" % (list(self.kernel_size), list(self.stride))

    def forward(self, x):
        graph = g.current_graph()
        layer = graph.where()
        _check_sparse(x, layer)
        if x.coords.ndim != self.ndim:
            raise ModelError("%s: a %d-D layer applied to a %d-D sparse tensor"
                             % (layer, self.ndim, x.coords.ndim))
        if x.features.channels is None:
            raise ModelError("%s: pooling the network input needs its channels; pass "
                             "in_channels= to compile()" % layer)
        grid = pool_output_grid(self, x.coords.grid, layer)
        out_coords = g.Coords(graph, grid, x.coords.batch)
        attrs = {"mode": self.mode, "kind": "regular", "kernel": self.kernel_size,
                 "stride": self.stride, "padding": self.padding, "dilation": self.dilation,
                 "output_padding": (0,) * self.ndim}
        node = graph.add(g.Node("pool", [x.coords, x.features], attrs, self, layer))
        out = g.Features(graph, x.features.channels, out_coords, node)
        node.outputs = [out_coords, out]
        indice_dict = dict(x.indice_dict)
        if self.indice_key is not None:
            indice_dict[self.indice_key] = IndiceRecord(
                "regular", self.kernel_size, self.stride, self.padding, self.dilation,
                x.coords, out_coords, layer)
        return g.TracedSparseTensor(out_coords, out, indice_dict)


for _n in (1, 2, 3, 4):
    globals()["SparseMaxPool%dd" % _n] = type(
        "SparseMaxPool%dd" % _n, (SparsePool,), {"ndim": _n, "mode": "max",
                                                 "__doc__": "%d-D sparse max pooling." % _n})
    globals()["SparseAvgPool%dd" % _n] = type(
        "SparseAvgPool%dd" % _n, (SparsePool,), {"ndim": _n, "mode": "avg",
                                                 "__doc__": "%d-D sparse average pooling "
                                                 "(over the contributing sites)." % _n})


class FeatureModule(Module):
    """A layer on features; on a sparse tensor it replaces its features."""

    def forward(self, x):
        if isinstance(x, g.TracedSparseTensor):
            return x.replace_feature(self.apply(x.features))
        if isinstance(x, g.Features):
            return self.apply(x)
        raise ModelError("%s takes a sparse tensor or its features, got %s"
                         % (g.current_graph().where(), type(x).__name__))


class BatchNorm1d(FeatureModule):
    """BatchNorm over the channels, in inference form (running statistics).
    With `compile(..., fold_batchnorm=True)` (the default) one that follows a
    conv is folded into its weights and bias."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = int(num_features), float(eps), momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.register_parameter("weight", np.ones(num_features, np.float32))
            self.register_parameter("bias", np.zeros(num_features, np.float32))
        if track_running_stats:
            self.register_buffer("running_mean", np.zeros(num_features, np.float32))
            self.register_buffer("running_var", np.ones(num_features, np.float32))
            self.register_buffer("num_batches_tracked", np.zeros((), np.int64))

    def extra_repr(self):
        return "%d, eps=%g" % (self.num_features, self.eps)

    def scale_shift(self):
        """Per channel: y = x * scale + shift."""
        if not self.track_running_stats:
            raise UnsupportedError("BatchNorm1d(track_running_stats=False) normalises "
                                   "with batch statistics, which inference does not have")
        inv = 1.0 / np.sqrt(self.running_var.astype(np.float64) + self.eps)
        gamma = self.weight.astype(np.float64) if self.affine else 1.0
        beta = self.bias.astype(np.float64) if self.affine else 0.0
        scale = gamma * inv
        shift = beta - self.running_mean.astype(np.float64) * scale
        return scale, shift

    def apply(self, features):
        graph = g.current_graph()
        if not self.track_running_stats:
            raise UnsupportedError("%s: BatchNorm1d(track_running_stats=False) normalises "
                                   "with batch statistics, which inference does not have"
                                   % graph.where())
        graph.resolve_channels(features, self.num_features)
        if features.channels != self.num_features:
            raise ModelError("%s: num_features=%d but its input has %d channels"
                             % (graph.where(), self.num_features, features.channels))
        node = graph.add(g.Node("batchnorm", [features], {}, self, graph.where()))
        out = g.Features(graph, features.channels, features.sites, node)
        node.outputs = [out]
        return out


class ReLU(FeatureModule):
    def __init__(self, inplace=False):
        super().__init__()

    def apply(self, features):
        return g.current_graph().activation("relu", features)


class LeakyReLU(FeatureModule):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = float(negative_slope)

    def apply(self, features):
        return g.current_graph().activation("leaky_relu", features,
                                            negative_slope=self.negative_slope)


class Identity(FeatureModule):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def apply(self, features):
        return features


class ToDense(Module):
    def __init__(self, *args, **kwargs):
        raise UnsupportedError("ToDense is not supported by spconv_mlir: return the "
                               "sparse tensor and scatter it into a dense array after "
                               "the call")
