"""The compiled kernels behind spconv_mlir.torch's ops.

Two kinds of kernel sets, each one shared library compiled by spconv-compile
for the tensors' device (`--target cpu` or `cuda`; CUDA ones are called
through `cuda_call.py`) and kept in the kernel store that every tool shares (`store.py`, through
`toolchain.build_library`: keyed by the MLIR, the options and the
compiler's identity; safe under concurrent processes, bounded in size) and
loaded once per process:

* a rulebook build (`RulebookSpec`: kind, window, grids): the coordinates
  in, the output coordinates (strided kinds) and the rulebook's pairs out,
  as `spconv.rulebook_pairs` gives them;
* a compute (`ConvSpec`: the rulebook's spec, the op, channels, groups,
  bias, element type): a conv or pool over pairs taken back by
  `spconv.rulebook_from_pairs` (which checks them), and its
  vector-Jacobian product derived by `spconv-generate-backward`.

So a rulebook is built once per `indice_key` and read by every layer that
shares it, forward and backward. Entry names carry the spec's hash, so the
libraries of many layers live in one process without their symbols meeting.
"""
import collections
import concurrent.futures
import hashlib
import json
import math
import os
import threading

from .. import abi
from ..emit import ELEMENT_TYPES, geometry_attr
from ..errors import UnsupportedError
from ..toolchain import build_library, find_toolchain
from . import cuda_call, openmp

RULEBOOK_KINDS = ("subm", "regular", "transposed")
OPS = ("conv", "inverse_conv", "maxpool", "avgpool")

_WINDOW = ["kind", "kernel", "stride", "padding", "dilation", "output_padding", "grid",
           "out_grid"]


class _Spec:
    """JSON text (the ops' spec argument) written with string operations
    only, so that torch.compile traces it as a constant; a key from it."""

    def to_json(self):
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

    @classmethod
    def from_json(cls, text):
        d = json.loads(text)
        for key, value in d.items():
            if isinstance(value, list):
                d[key] = tuple(value)
        return cls(**d)

    def key(self):
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    @property
    def ndim(self):
        return len(self.kernel)

    @property
    def volume(self):
        return math.prod(self.kernel)

    def rulebook_type(self):
        """`!spconv.rulebook` of the window over `grid` (the build's input
        grid)."""
        return "!spconv.rulebook<#spconv.geom%s, #spconv.grid<[%s]>>" % (
            geometry_attr(dict(zip(_WINDOW, self[:len(_WINDOW)]))),
            ", ".join(str(s) for s in self.grid))


class RulebookSpec(_Spec, collections.namedtuple("RulebookSpec", _WINDOW)):
    """A rulebook build: `kind` subm, regular or transposed, the window,
    the input `grid` and the `out_grid`."""


class ConvSpec(_Spec, collections.namedtuple("ConvSpec", _WINDOW + [
        "op", "in_channels", "out_channels", "groups", "bias", "dtype"])):
    """A compute over a rulebook of the window (whose fields come first, as
    in RulebookSpec): `op` conv, inverse_conv (the rulebook read backwards),
    maxpool or avgpool."""

    def rulebook(self):
        return RulebookSpec(*self[:len(_WINDOW)])

    @property
    def is_pool(self):
        return self.op in ("maxpool", "avgpool")

    def weight_shape(self):
        """The compiler's weight layout: `K x Cin/groups x Cout`."""
        return (self.volume, self.in_channels // self.groups, self.out_channels)


def _coords_type(grid):
    return "tensor<?x%dxi32, #spconv.grid<[%s]>>" % (len(grid) + 1,
                                                    ", ".join(str(s) for s in grid))


def _pairs_types(spec):
    return ["tensor<?xi32>", "tensor<?xi32>", "tensor<%dxi64>" % (spec.volume + 1)]


def rulebook_module(spec):
    """`@rulebook_<key>(coords)`: the output coordinates (strided kinds
    only: a subm conv's are its input's) and the pairs."""
    if spec.kind not in RULEBOOK_KINDS:
        raise UnsupportedError("rulebook kind %r is not one of %s"
                               % (spec.kind, ", ".join(RULEBOOK_KINDS)))
    name = "rulebook_" + spec.key()
    rb, coords, out_coords = spec.rulebook_type(), _coords_type(spec.grid), \
        _coords_type(spec.out_grid)
    pairs = _pairs_types(spec)
    results = ([] if spec.kind == "subm" else [("%oc", out_coords)]) + \
        list(zip(["%in", "%out", "%off"], pairs))
    return "\n".join([
        "// spconv_mlir.torch rulebook: %s" % spec.to_json(),
        "func.func @%s(%%coords: %s) -> (%s) {" % (name, coords,
                                                  ", ".join(t for _, t in results)),
        "  %%rb, %%oc = spconv.build_rulebook %%coords : %s -> %s, %s" % (coords, rb, out_coords),
        "  %%in, %%out, %%off = spconv.rulebook_pairs %%rb : %s -> %s" % (rb, ", ".join(pairs)),
        "  return %s : %s" % (", ".join(n for n, _ in results), ", ".join(t for _, t in results)),
        "}", ""])


def compute_module(spec, backward=False):
    """`@compute_<key>(in rows, out rows, offsets, sites, features[, weight
    [, bias]])`, the op's output features; with `backward`, also
    `@compute_<key>_backward` (the same arguments and the output's
    cotangent), the gradients of the features, weight and bias, the module's
    entry then. `sites` are the output sites (for an inverse conv the input
    sites of the rulebook), read for their count."""
    if spec.op not in OPS:
        raise UnsupportedError("op %r is not one of %s" % (spec.op, ", ".join(OPS)))
    ftype = ELEMENT_TYPES[spec.dtype]
    name = "compute_" + spec.key()
    rb = spec.rulebook_type()
    site_type = _coords_type(spec.grid if spec.op == "inverse_conv" else spec.out_grid)
    features = "tensor<?x%dx%s>" % (spec.in_channels, ftype)
    out_features = "tensor<?x%dx%s>" % (spec.out_channels, ftype)
    args = list(zip(["%in", "%out", "%off"], _pairs_types(spec)))
    args += [("%sites", site_type), ("%features", features)]
    if not spec.is_pool:
        args.append(("%weight", "tensor<%sx%s>" % (
            "x".join(str(d) for d in spec.weight_shape()), ftype)))
        if spec.bias:
            args.append(("%bias", "tensor<%dx%s>" % (spec.out_channels, ftype)))
    # The rulebook's sites: features and sites, read backwards for an
    # inverse conv.
    num_in, num_out = ("%n_sites", "%n_features") if spec.op == "inverse_conv" else \
        ("%n_features", "%n_sites")
    body = [
        "  %c0 = arith.constant 0 : index",
        "  %%n_features = tensor.dim %%features, %%c0 : %s" % features,
        "  %%n_sites = tensor.dim %%sites, %%c0 : %s" % site_type,
        "  %%rb = spconv.rulebook_from_pairs %%in, %%out, %%off, %s, %s : %s -> %s" % (
            num_in, num_out, ", ".join(_pairs_types(spec)), rb)]
    if spec.is_pool:
        body.append("  %%y = spconv.rulebook_pool %s %%rb, %%features : %s, %s -> %s" % (
            spec.op[:3], rb, features, out_features))
    else:
        flags = (" inverse" if spec.op == "inverse_conv" else "") + \
            (" groups %d" % spec.groups if spec.groups != 1 else "")
        bias = " bias %bias" if spec.bias else ""
        types = [rb, features, args[5][1]] + ([args[6][1]] if spec.bias else [])
        body.append("  %%y = spconv.rulebook_conv%s %%rb, %%features, %%weight%s : %s -> %s" % (
            flags, bias, ", ".join(types), out_features))
    signature = ", ".join("%s: %s" % a for a in args)
    all_types = [t for _, t in args]
    grads = [t for n, t in args if n in ("%features", "%weight", "%bias")]
    if not backward:
        return "\n".join([
            "// spconv_mlir.torch compute: %s" % spec.to_json(),
            "func.func @%s(%s)\n    -> %s {" % (name, signature, out_features)] + body + [
            "  return %%y : %s" % out_features, "}", ""])
    # @..._vjp is declared with the gradients only, so the backward does not
    # run the forward conv again; declarations are private, hence the public
    # wrapper that exports it.
    return "\n".join([
        "// spconv_mlir.torch compute backward: %s" % spec.to_json(),
        "func.func @%s(%s)\n    -> %s attributes {spconv.backward = @%s_vjp} {"
        % (name, signature, out_features, name)] + body + [
        "  return %%y : %s" % out_features,
        "}",
        "func.func private @%s_vjp(%s) -> (%s)" % (
            name, ", ".join(all_types + [out_features]), ", ".join(grads)),
        "func.func @%s_backward(%s, %%cot: %s)\n    -> (%s) {" % (
            name, signature, out_features, ", ".join(grads)),
        "  %%r:%d = func.call @%s_vjp(%s, %%cot) : (%s) -> (%s)" % (
            len(grads), name, ", ".join(n for n, _ in args),
            ", ".join(all_types + [out_features]), ", ".join(grads)),
        "  return %s : %s" % (", ".join("%%r#%d" % i for i in range(len(grads))),
                              ", ".join(grads)),
        "}", ""])


def _call(entry, tensors):
    import torch

    if tensors[0].device.type == "cuda":
        return cuda_call.call(entry, tensors, [dtype for _, dtype in entry.results])
    # torch.set_num_threads governs these kernels too.
    threads = torch.get_num_threads()
    openmp.check(threads)
    entry.set_threads(threads)
    descs = [abi.describe(t.data_ptr(), tuple(t.shape), t.element_size()) for t in tensors]
    arrays = entry.numpy_results(entry.call(descs, entry.runtime.free))
    return [torch.from_numpy(a) for a in arrays]


class RulebookKernel:
    def __init__(self, spec, library):
        import numpy as np

        results = [(1, np.int32), (1, np.int32), (1, np.int64)]
        if spec.kind != "subm":
            results.insert(0, (2, np.int32))
        self.entry = abi.Entry(library, "rulebook_" + spec.key(), results)

    def __call__(self, indices):
        return _call(self.entry, [indices])


class ComputeKernel:
    """`forward(*tensors)` and `backward(*tensors, cotangent)`, returning
    torch tensors that own the compiled code's result buffers. The backward
    is a library of its own, built on its first call or ahead of it
    (`prefetch_backward`)."""

    def __init__(self, spec, device, library):
        import numpy as np

        name = "compute_" + spec.key()
        self.forward_entry = abi.Entry(library, name, [(2, np.dtype(spec.dtype))])
        self._backward = _backward_library(spec, device)

    def forward(self, *tensors):
        return _call(self.forward_entry, tensors)[0]

    def backward(self, *tensors):
        return _call(self._backward.get(), tensors)

    def load_backward(self):
        """Builds (or finds in the store) and loads the backward now."""
        self._backward.get()


class _Once:
    """A value made once per process, by its first user or ahead of it on
    the background thread (`_prefetch`); a failed make is tried again by the
    next user, who gets its error."""

    def __init__(self, make):
        self._make = make
        self._lock = threading.Lock()
        self._value = None

    def get(self):
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value

    @property
    def made(self):
        return self._value is not None


_loaded = {}    # (spec kind, spec, target): _Once of the kernel object
_backwards = {}  # (spec, target): _Once of the backward's abi.Entry
_lock = threading.Lock()
_background = None


def _after_fork_in_child():
    """A forked child (a DataLoader worker) has no background thread, and a
    lock the thread held stays held: it starts both afresh."""
    global _background, _lock
    _background = None
    _lock = threading.Lock()
    for table in (_loaded, _backwards):
        for key in [k for k, once in table.items() if not once.made]:
            del table[key]


os.register_at_fork(after_in_child=_after_fork_in_child)


def _prefetch(once):
    """Makes `once` on the background thread: one compile at a time beside
    the caller's, on a second core."""
    global _background
    with _lock:
        if _background is None:
            _background = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="spconv-mlir-compile")

    def make():
        try:
            once.get()
        except Exception:  # noqa: BLE001 - the caller's own get reports it
            pass

    _background.submit(make)


# The torch device types that have kernels: each is spconv-compile's target.
TARGETS = ("cpu", "cuda")
# The chip CUDA kernels are compiled for where neither $SPCONV_MLIR_CUDA_CHIP
# nor a device says.
DEFAULT_CUDA_CHIP = "sm_80"


def cuda_chip(device=None):
    """The GPU architecture (`spconv-compile --gpu-chip`) of the CUDA
    kernels for `device`: $SPCONV_MLIR_CUDA_CHIP, else the device's own
    (`sm_90` on an H100), else DEFAULT_CUDA_CHIP (no device: filling a store
    on a machine without a GPU)."""
    chip = os.environ.get("SPCONV_MLIR_CUDA_CHIP")
    if chip:
        return chip
    if getattr(device, "type", None) == "cuda":
        import torch

        major, minor = torch.cuda.get_device_capability(device)
        return "sm_%d%d" % (major, minor)
    return DEFAULT_CUDA_CHIP


def _target(device):
    """(spconv-compile's target, its options) for a torch device or its
    type."""
    kind = getattr(device, "type", device)
    if kind not in TARGETS:
        raise UnsupportedError("spconv_mlir.torch runs CPU and CUDA tensors, not %s" % device)
    return kind, (("--gpu-chip=" + cuda_chip(device),) if kind == "cuda" else ())


def _build(text, spec, device, entries, kind):
    """The library of `text` for `device`, from the store or compiled."""
    target, options = _target(device)
    what = "spconv_mlir.torch's %s %s kernel %s" % (" ".join((target,) + options), kind,
                                                     spec.to_json())
    library, _ = build_library(text, find_toolchain(), target, options=options,
                               entries=entries, what=what)
    return library


def _once(table, key, make):
    with _lock:
        found = table.get(key)
        if found is None:
            found = table[key] = _Once(make)
    return found


def _target_key(device):
    target, options = _target(device)
    return target + "".join(options)


def rulebook_kernel(spec, device="cpu"):
    """`spec`'s rulebook build for `device` (a torch device or its type, cpu
    or cuda), compiled on first use (or found in the store) and loaded once
    per process."""
    name = "rulebook_" + spec.key()
    return _once(_loaded, ("RulebookSpec", spec.to_json(), _target_key(device)),
                 lambda: RulebookKernel(spec, _build(rulebook_module(spec), spec, device,
                                                     (name,), "rulebook"))).get()


def compute_kernel(spec, device="cpu"):
    """`spec`'s compute for `device`, compiled on first use (or found in the
    store) and loaded once per process; its backward is built when first
    called, or ahead (`prefetch_backward`)."""
    name = "compute_" + spec.key()
    return _once(_loaded, ("ConvSpec", spec.to_json(), _target_key(device)),
                 lambda: ComputeKernel(spec, device, _build(compute_module(spec), spec, device,
                                                            (name,), "compute"))).get()


def _backward_library(spec, device):
    import numpy as np

    name = "compute_" + spec.key() + "_backward"
    dtype = np.dtype(spec.dtype)
    results = [(2, dtype)]
    if not spec.is_pool:
        results += [(3, dtype)] + ([(1, dtype)] if spec.bias else [])
    return _once(_backwards, (spec.to_json(), _target_key(device)),
                 lambda: abi.Entry(_build(compute_module(spec, backward=True), spec, device,
                                          (name,), "backward"), name, results))


def prefetch_backward(spec, device):
    """Starts building `spec`'s backward for `device` on the background
    thread, unless it is built or being built: a layer whose forward autograd
    records calls it, so that the backward's compile runs beside the
    forward's next ones. Nothing for a device without kernels."""
    if getattr(device, "type", device) not in TARGETS:
        return
    library = _backward_library(spec, device)
    if not library.made:
        _prefetch(library)


def loaded_specs(device="cpu"):
    """The specs of the kernels this process has loaded for `device`: what
    a store filled ahead of time must hold for the same model (compute
    specs: their forward; `ComputeKernel.load_backward` adds the rest)."""
    target = _target_key(device)
    with _lock:
        return [(RulebookSpec if kind == "RulebookSpec" else ConvSpec).from_json(text)
                for (kind, text, t), once in _loaded.items() if t == target and once.made]
