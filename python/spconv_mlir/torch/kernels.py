"""The compiled kernels behind spconv_mlir.torch's ops.

One kernel set per conv specification (`ConvSpec`: kind, window, grid,
channels, groups, bias, element type): a module holding the conv as its
forward function and, derived by `spconv-generate-backward`, its
vector-Jacobian product, compiled by spconv-compile into one shared library
through the Python front end's content-addressed store on disk
(`toolchain.build_library`: keyed by the MLIR, the options and the
compiler's identity; safe under concurrent processes) and loaded once per
process. Entry names carry the specification's hash, so the libraries of
many layers can live in one process without their symbols meeting.

The backward function rebuilds the conv's rulebook from the coordinates and
reads it backwards; it does not recompute the forward's output features
(the canonicalizer drops them: nothing reads them).
"""
import collections
import hashlib
import json
import math
import threading

from .. import abi
from ..emit import ELEMENT_TYPES, geometry_attr
from ..errors import UnsupportedError
from ..toolchain import build_library, find_toolchain

KINDS = ("subm", "regular", "transposed", "inverse", "maxpool", "avgpool")
POOLS = {"maxpool": "max", "avgpool": "avg"}

_Spec = collections.namedtuple("ConvSpec", [
    "kind", "kernel", "stride", "padding", "dilation", "output_padding", "grid",
    "out_grid", "in_channels", "out_channels", "groups", "bias", "dtype"])


class ConvSpec(_Spec):
    """What a conv kernel set is specialised for. `grid` is the grid of the
    input sites (for `inverse`, of the fine sites it writes), `out_grid` that
    of the output sites; the window is the conv's (for `inverse`, the window
    of the regular conv it inverts)."""

    @property
    def is_pool(self):
        return self.kind in POOLS

    @property
    def ndim(self):
        return len(self.kernel)

    @property
    def volume(self):
        return math.prod(self.kernel)

    def weight_shape(self):
        """The compiler's weight layout: `K x Cin/groups x Cout`."""
        return (self.volume, self.in_channels // self.groups, self.out_channels)

    def to_json(self):
        """The op argument that carries the spec: JSON, written with string
        operations only, so that torch.compile traces it as a constant."""
        fields = []
        for name, value in zip(self._fields, self):
            if isinstance(value, tuple):
                text = "[" + ",".join([str(int(v)) for v in value]) + "]"
            elif isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, int):
                text = str(value)
            else:
                text = '"' + value + '"'
            fields.append('"' + name + '":' + text)
        return "{" + ",".join(fields) + "}"

    @staticmethod
    def from_json(text):
        d = json.loads(text)
        for key in ("kernel", "stride", "padding", "dilation", "output_padding", "grid",
                    "out_grid"):
            d[key] = tuple(d[key])
        return ConvSpec(**d)

    def key(self):
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]


def _coords_type(grid):
    return "tensor<?x%dxi32, #spconv.grid<[%s]>>" % (len(grid) + 1,
                                                    ", ".join(str(s) for s in grid))


def _features_type(channels, ftype):
    return "tensor<?x%dx%s>" % (channels, ftype)


def conv_module(spec):
    """The MLIR of `spec`'s kernel set: `@conv_<key>` (the conv or pool) and
    `@conv_<key>_backward` (the gradients of its float arguments for the
    cotangent of its output features). Arguments: the coordinates (for
    `inverse`: the fine, then the coarse ones), the features, then for a
    conv the weight and, with `spec.bias`, the bias."""
    if spec.kind not in KINDS:
        raise UnsupportedError("conv kind %r is not one of %s" % (spec.kind, ", ".join(KINDS)))
    ftype = ELEMENT_TYPES[spec.dtype]
    name = "conv_" + spec.key()
    attrs = spec._asdict()
    if spec.is_pool:
        attrs["kind"] = "regular"
    geometry = geometry_attr(attrs)
    groups = " groups %d" % spec.groups if spec.groups != 1 else ""
    args = []
    if spec.kind == "inverse":
        args += [("%fine", _coords_type(spec.out_grid)), ("%coarse", _coords_type(spec.grid))]
    else:
        args += [("%coords", _coords_type(spec.grid))]
    args += [("%features", _features_type(spec.in_channels, ftype))]
    if not spec.is_pool:
        args += [("%weight", "tensor<%sx%s>" % ("x".join(str(d) for d in spec.weight_shape()),
                                                ftype))]
    if spec.bias:
        args.append(("%bias", "tensor<%dx%s>" % (spec.out_channels, ftype)))
    out_features = _features_type(spec.out_channels, ftype)
    operands = ", ".join(n for n, _ in args)
    operand_types = ", ".join(t for _, t in args)
    if spec.bias:
        operands = operands.rsplit(", ", 1)[0] + " bias %bias"
    if spec.is_pool:
        out_coords = _coords_type(spec.out_grid)
        body = ["  %%oc, %%of = spconv.pool %s %s %s\n      : %s -> %s, %s" % (
            POOLS[spec.kind], geometry, operands, operand_types, out_coords, out_features)]
        results = [("%oc", out_coords), ("%of", out_features)]
    elif spec.kind == "inverse":
        body = ["  %%of = spconv.inverse_conv %s%s %s\n      : %s -> %s" % (
            geometry, groups, operands, operand_types, out_features)]
        results = [("%of", out_features)]
    else:
        out_coords = _coords_type(spec.out_grid)
        body = ["  %%oc, %%of = spconv.conv %s%s %s\n      : %s -> %s, %s" % (
            geometry, groups, operands, operand_types, out_coords, out_features)]
        # A subm conv's output sites are its input sites: not returned.
        results = [("%of", out_features)] if spec.kind == "subm" else \
            [("%oc", out_coords), ("%of", out_features)]
    signature = ", ".join("%s: %s" % a for a in args)
    result_types = ", ".join(t for _, t in results)
    grads = [t for n, t in args if n not in ("%coords", "%fine", "%coarse")]
    vjp_results = [t for _, t in results] + grads
    all_types = [t for _, t in args]
    lines = [
        "// spconv_mlir.torch kernel set: %s" % spec.to_json(),
        "func.func @%s(%s)\n    -> (%s) attributes {spconv.backward = @%s_vjp} {"
        % (name, signature, result_types, name),
    ] + body + [
        "  return %s : %s" % (", ".join(n for n, _ in results), result_types),
        "}",
        "func.func private @%s_vjp(%s) -> (%s)" % (
            name, ", ".join(all_types + [out_features]), ", ".join(vjp_results)),
        "func.func @%s_backward(%s, %%cot: %s)\n    -> (%s) {" % (
            name, signature, out_features, ", ".join(grads)),
        "  %%r:%d = func.call @%s_vjp(%s, %%cot) : (%s) -> (%s)" % (
            len(vjp_results), name, ", ".join(n for n, _ in args),
            ", ".join(all_types + [out_features]), ", ".join(vjp_results)),
        "  return %s : %s" % (", ".join("%%r#%d" % (len(results) + i) for i in range(len(grads))),
                              ", ".join(grads)),
        "}", ""]
    return "\n".join(lines)


class KernelSet:
    """A loaded kernel set: `forward(*tensors)` and `backward(*tensors,
    cotangent)`, each returning torch tensors that own the compiled code's
    result buffers."""

    def __init__(self, spec, library):
        import numpy as np

        self.spec = spec
        name = "conv_" + spec.key()
        dtype = np.dtype(spec.dtype)
        forward = [(2, dtype)] if spec.kind in ("subm", "inverse") else \
            [(2, np.int32), (2, dtype)]
        backward = [(2, dtype)]
        if not spec.is_pool:
            backward += [(3, dtype)] + ([(1, dtype)] if spec.bias else [])
        self.forward_entry = abi.Entry(library, name, forward)
        self.backward_entry = abi.Entry(library, name + "_backward", backward)

    @staticmethod
    def _call(entry, tensors):
        import torch

        descs = [abi.describe(t.data_ptr(), tuple(t.shape), t.element_size())
                 for t in tensors]
        arrays = entry.numpy_results(entry.call(descs, entry.runtime.free))
        return [torch.from_numpy(a) for a in arrays]

    def forward(self, *tensors):
        return self._call(self.forward_entry, tensors)

    def backward(self, *tensors):
        return self._call(self.backward_entry, tensors)


_loaded = {}
_lock = threading.Lock()


def kernel_set(spec):
    """`spec`'s kernel set, compiled on first use (or found in the store)
    and loaded once per process."""
    key = spec.to_json()
    with _lock:
        found = _loaded.get(key)
        if found is None:
            name = "conv_" + spec.key()
            library, _ = build_library(conv_module(spec), find_toolchain(), "cpu",
                                       entries=(name, name + "_backward"))
            found = _loaded[key] = KernelSet(spec, library)
        return found
