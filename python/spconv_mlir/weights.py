"""Loads checkpoints of spconv 2.x, spconv 1.x and MinkowskiEngine.

Layers keep their weights in spconv 2.x's layout (`Cout x k... x Cin`), so
a spconv 2.x `state_dict` loads as it is. Other layouts are converted on
load to the weights that compute the same function:

| layout      | conv weight            | kernel offset order                 |
|-------------|------------------------|-------------------------------------|
| "spconv2"   | `Cout x k... x Cin`    | row-major over the kernel dims      |
| "RSKC"      | `k... x Cout x Cin`    | row-major (early spconv 2.x)        |
| "spconv1"   | `k... x Cin x Cout`    | row-major (spconv 1.x, RSCK)        |
| "minkowski" | `K x Cin x Cout`       | the first spatial dim fastest       |

MinkowskiEngine names a conv's weight `kernel` and wraps BatchNorm in
`.bn`; both are mapped to spconv's names.
"""
import collections
import math

import numpy as np

from .errors import WeightError
from .nn import SparseConvolution

LAYOUTS = ("spconv2", "RSKC", "spconv1", "minkowski")

LoadResult = collections.namedtuple("LoadResult", ["missing_keys", "unexpected_keys"])


def _numpy(value):
    if type(value).__module__.startswith("torch"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def expected_shape(conv, layout):
    """The shape of `conv`'s weight in `layout`."""
    k, cin, cout = tuple(conv.kernel_size), conv.in_channels // conv.groups, conv.out_channels
    return {"spconv2": (cout,) + k + (cin,), "RSKC": k + (cout, cin),
            "spconv1": k + (cin, cout), "minkowski": (math.prod(k), cin, cout)}[layout]


def kernel_matrix_from(conv, array, layout):
    """The `K x Cin x Cout` matrix (row-major offsets) a weight in `layout`
    computes with, for the layouts that hold it directly."""
    k, cin, cout = tuple(conv.kernel_size), conv.in_channels // conv.groups, conv.out_channels
    volume = math.prod(k)
    if layout == "RSKC":
        return array.reshape(volume, cout, cin).transpose(0, 2, 1)
    if layout == "spconv1":
        return array.reshape(volume, cin, cout)
    if layout == "minkowski":
        # Offset index j0 + k0 * (j1 + k1 * j2 ...): reverse the kernel axes.
        n = len(k)
        w = array.reshape(tuple(reversed(k)) + (cin, cout))
        w = w.transpose(tuple(reversed(range(n))) + (n, n + 1))
        return w.reshape(volume, cin, cout)
    raise ValueError(layout)


def set_kernel_matrix(conv, matrix):
    """Stores `matrix` (`K x Cin x Cout`) as `conv`'s spconv 2.x weight so
    that `conv.kernel_matrix()` returns it (the inverse of that function,
    including spconv 2.x's reading of 1x...x1 kernels)."""
    matrix = np.asarray(matrix, np.float32)
    shape = (conv.out_channels,) + tuple(conv.kernel_size) + (conv.in_channels // conv.groups,)
    if conv.reads_weight_as_matrix():
        weight = matrix.reshape(shape)
    else:
        weight = matrix.transpose(2, 0, 1).reshape(shape)
    conv._parameters["weight"] = np.ascontiguousarray(weight)


def _strip_prefix(state):
    keys = list(state)
    if keys and all(k.startswith("module.") for k in keys):
        return collections.OrderedDict((k[len("module."):], v) for k, v in state.items())
    return state


def _minkowski_names(state, targets):
    """MinkowskiEngine's `X.kernel` -> `X.weight`, `X.bn.Y` -> `X.Y`."""
    out = collections.OrderedDict()
    for key, value in state.items():
        new = key
        if key.endswith(".kernel"):
            new = key[:-len(".kernel")] + ".weight"
        elif ".bn." in key:
            candidate = key.replace(".bn.", ".", 1)
            if candidate in targets:
                new = candidate
        out[new] = value
    return out


def _describe(conv):
    return "%s(%s)" % (type(conv).__name__, conv.extra_repr())


def _load_conv_weight(conv, key, array, layout):
    shape = tuple(array.shape)
    want = expected_shape(conv, layout)
    if shape != want and not (layout == "minkowski" and array.size == math.prod(want)):
        fits = [name for name in LAYOUTS if expected_shape(conv, name) == shape]
        hint = " (it fits layout=%r)" % fits[0] if fits else ""
        raise WeightError("%s: weight of shape %s does not fit %s in layout %r, which "
                          "takes %s%s" % (key, list(shape), _describe(conv), layout,
                                          list(want), hint))
    array = np.asarray(array, np.float32)
    if layout == "spconv2":
        conv._parameters["weight"] = np.ascontiguousarray(array)
    else:
        set_kernel_matrix(conv, kernel_matrix_from(conv, array.reshape(want), layout))


def load_state_dict(model, state_dict, layout="spconv2", strict=True):
    """Loads `state_dict` (a mapping of names to numpy arrays or torch
    tensors, as torch's `state_dict()` gives) into `model`'s layers.

    layout: how conv weights are stored (see the module's table).
    strict: a missing or unexpected key is an error (else they are
        returned, like torch's `load_state_dict`). BatchNorm's
        `num_batches_tracked` is never required.
    """
    if layout not in LAYOUTS:
        raise WeightError("layout must be one of %s, got %r" % (", ".join(LAYOUTS), layout))
    if hasattr(state_dict, "state_dict") and callable(state_dict.state_dict):
        state_dict = state_dict.state_dict()
    state = _strip_prefix(collections.OrderedDict(state_dict))
    targets = {}
    for prefix, module in model.named_modules():
        for table in ("_parameters", "_buffers"):
            for name, value in getattr(module, table).items():
                if value is not None:
                    targets[(prefix + "." if prefix else "") + name] = (module, table, name)
    if layout == "minkowski":
        state = _minkowski_names(state, targets)
    optional = {k for k in targets if k.endswith("num_batches_tracked")}
    missing = [k for k in targets if k not in state and k not in optional]
    unexpected = [k for k in state if k not in targets and
                  not k.endswith("num_batches_tracked")]
    if strict and (missing or unexpected):
        parts = []
        if missing:
            parts.append("missing keys: %s" % ", ".join(missing[:12]) +
                         (" ..." if len(missing) > 12 else ""))
        if unexpected:
            parts.append("unexpected keys: %s" % ", ".join(unexpected[:12]) +
                         (" ..." if len(unexpected) > 12 else ""))
        raise WeightError("the checkpoint does not fit the model (%s); are the layer "
                          "names those of the model that saved it? strict=False loads "
                          "what fits" % "; ".join(parts))
    for key, value in state.items():
        if key not in targets:
            continue
        module, table, name = targets[key]
        array = _numpy(value)
        if isinstance(module, SparseConvolution) and name == "weight":
            _load_conv_weight(module, key, array, layout)
            continue
        current = getattr(module, table)[name]
        if isinstance(module, SparseConvolution) and name == "bias":
            array = array.reshape(-1) if array.size == current.size else array
        if tuple(array.shape) != tuple(current.shape):
            what = "%s(%s)" % (type(module).__name__, module.extra_repr())
            raise WeightError("%s: shape %s does not fit %s, which takes %s"
                              % (key, list(array.shape), what, list(current.shape)))
        getattr(module, table)[name] = np.array(array, dtype=current.dtype)
    return LoadResult(missing, unexpected)

