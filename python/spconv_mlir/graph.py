"""The traced network: symbolic values and the operations between them.

`compile()` calls the model's `forward` once on a `TracedSparseTensor`;
every layer appends a `Node` to the active `Graph` instead of computing. The
graph is then rewritten (BatchNorm folding, `fold.py`) and printed as MLIR
(`emit.py`). Nothing here knows MLIR syntax.
"""
import contextlib
import threading

from .errors import ModelError, UnsupportedError


class Coords:
    """The coordinates of a sparse tensor: `N x (1 + D)` i32 on a grid."""

    def __init__(self, graph, grid, batch=None):
        self.graph = graph
        self.id = graph.new_id()
        self.grid = tuple(int(s) for s in grid)
        self.batch = batch

    @property
    def ndim(self):
        return len(self.grid)


class Features:
    """The features of a sparse tensor: `N x C`, one row per site.

    Element-wise arithmetic and (with torch installed) `torch.relu` and
    `torch.cat` on these values record operations of the graph."""

    def __init__(self, graph, channels, sites, producer=None):
        self.graph = graph
        self.id = graph.new_id()
        self.channels = channels  # None only for the network input, until known
        self.sites = sites  # the Coords whose rows these are
        self.producer = producer

    @property
    def shape(self):
        return (None, self.channels)

    def __add__(self, other):
        return self.graph.elementwise("add", self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return self.graph.elementwise("sub", self, other)

    def __mul__(self, other):
        return self.graph.elementwise("mul", self, other)

    __rmul__ = __mul__

    def relu(self):
        return self.graph.activation("relu", self)

    # Code written for spconv.pytorch calls torch functions on features;
    # torch hands such calls on a non-tensor to this hook.
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from . import functional

        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        handler = functional.TORCH_FUNCTIONS.get(name)
        if handler is None:
            graph = current_graph()
            raise UnsupportedError(
                "%s: torch.%s on sparse features is not supported by spconv_mlir; "
                "supported: %s" % (graph.where() if graph else "forward", name, ", ".join(
                    sorted(n for n in functional.TORCH_FUNCTIONS if not n.startswith("_")))))
        return handler(*args, **kwargs)


class Node:
    """One operation: `op` names it, `inputs` and `outputs` are Coords and
    Features, `attrs` holds its static parameters, `module` the layer it
    came from (its weights), `name` the layer's path in the model."""

    def __init__(self, op, inputs, attrs=None, module=None, name=None):
        self.op = op
        self.inputs = list(inputs)
        self.outputs = []
        self.attrs = dict(attrs or {})
        self.module = module
        self.name = name


class Graph:
    def __init__(self):
        self.nodes = []
        self.inputs = []
        self.outputs = []
        self._next_id = 0
        self.layer_stack = []

    def new_id(self):
        self._next_id += 1
        return self._next_id

    def add(self, node):
        self.nodes.append(node)
        return node

    def where(self):
        """The layer being traced, for messages."""
        return self.layer_stack[-1] if self.layer_stack else "the model's forward"

    def check_same_sites(self, op, values):
        sites = {id(v.sites) for v in values}
        if len(sites) > 1:
            raise ModelError(
                "%s: %s of features of different sparse tensors (their sites "
                "differ); combine features of one tensor, e.g. a residual "
                "branch of subm convs" % (self.where(), op))

    def resolve_channels(self, value, channels):
        """The network input's channels become known at its first use."""
        if value.channels is None:
            value.channels = int(channels)

    def elementwise(self, op, lhs, rhs):
        if isinstance(rhs, (int, float)) and not isinstance(rhs, bool):
            if op == "sub":
                op, rhs = "add", -float(rhs)
            node = self.add(Node(op + "_scalar", [lhs], {"scalar": float(rhs)},
                                 name=self.where()))
            out = Features(self, lhs.channels, lhs.sites, node)
            node.outputs = [out]
            return out
        if not isinstance(rhs, Features):
            raise UnsupportedError(
                "%s: features %s %s is not supported; combine sparse features "
                "with sparse features of the same tensor or a number"
                % (self.where(), op, type(rhs).__name__))
        self.check_same_sites(op, [lhs, rhs])
        if lhs.channels is None:
            self.resolve_channels(lhs, rhs.channels)
        if rhs.channels is None:
            self.resolve_channels(rhs, lhs.channels)
        if lhs.channels != rhs.channels:
            raise ModelError(
                "%s: %s of features with %d and %d channels; both sides need "
                "the same channels" % (self.where(), op, lhs.channels, rhs.channels))
        node = self.add(Node(op, [lhs, rhs], name=self.where()))
        out = Features(self, lhs.channels, lhs.sites, node)
        node.outputs = [out]
        return out

    def activation(self, op, value, **attrs):
        if value.channels is None:
            raise ModelError(
                "%s: %s applied to the network input before any layer fixed "
                "its channels; pass in_channels= to compile()" % (self.where(), op))
        node = self.add(Node(op, [value], attrs, name=self.where()))
        out = Features(self, value.channels, value.sites, node)
        node.outputs = [out]
        return out

    def concat(self, values):
        values = list(values)
        if not values or not all(isinstance(v, Features) for v in values):
            raise ModelError("%s: cat takes a list of sparse features" % self.where())
        self.check_same_sites("cat", values)
        if any(v.channels is None for v in values):
            raise ModelError("%s: cat of the network input before its channels "
                             "are known; pass in_channels= to compile()" % self.where())
        node = self.add(Node("cat", values, name=self.where()))
        out = Features(self, sum(v.channels for v in values), values[0].sites, node)
        node.outputs = [out]
        return out

    def uses(self, value):
        """The nodes that read `value`, and whether it is an output."""
        readers = [n for n in self.nodes if any(v is value for v in n.inputs)]
        returned = any(v is value for pair in self.outputs for v in pair)
        return readers, returned


class TracedSparseTensor:
    """What the model's forward receives while `compile()` traces it: the
    interface of spconv's `SparseConvTensor` (`features`, `indices`,
    `spatial_shape`, `replace_feature`, `indice_dict`) over symbolic values."""

    def __init__(self, coords, features, indice_dict=None):
        self.coords = coords
        self.features = features
        self.indice_dict = dict(indice_dict or {})

    @property
    def indices(self):
        return self.coords

    @property
    def spatial_shape(self):
        return list(self.coords.grid)

    @property
    def batch_size(self):
        return self.coords.batch

    def replace_feature(self, features):
        if not isinstance(features, Features):
            raise ModelError("replace_feature takes the features of a sparse "
                             "tensor traced by spconv_mlir, not %s"
                             % type(features).__name__)
        if features.sites is not self.coords:
            raise ModelError(
                "%s: replace_feature with features of other sites (they were "
                "computed on another sparse tensor)" % features.graph.where())
        return TracedSparseTensor(self.coords, features, self.indice_dict)

    def dense(self, *args, **kwargs):
        raise UnsupportedError("SparseConvTensor.dense() is not supported by "
                               "spconv_mlir: return the sparse tensor and "
                               "scatter it into a dense array after the call")


_state = threading.local()


def current_graph():
    return getattr(_state, "graph", None)


@contextlib.contextmanager
def tracing(graph):
    previous = current_graph()
    _state.graph = graph
    try:
        yield graph
    finally:
        _state.graph = previous


@contextlib.contextmanager
def layer(graph, name):
    graph.layer_stack.append(name)
    try:
        yield
    finally:
        graph.layer_stack.pop()
