"""Functions on sparse features inside a model's forward.

`relu(f)`, `leaky_relu(f, slope)` and `cat([a, b], dim=1)` record the
operation; `+`, `-` and `*` on features do too. Code written for spconv.pytorch
may call `torch.relu`, `torch.nn.functional.relu` and `torch.cat` instead:
with torch installed they dispatch here.
"""
from . import graph as g
from .errors import ModelError, UnsupportedError


def _graph(what):
    graph = g.current_graph()
    if graph is None:
        raise ModelError("spconv_mlir.functional.%s called outside "
                         "spconv_mlir.compile()" % what)
    return graph


def _features(value, what):
    if isinstance(value, g.TracedSparseTensor):
        value = value.features
    if not isinstance(value, g.Features):
        raise ModelError("%s takes sparse features, got %s" % (what, type(value).__name__))
    return value


def relu(features, inplace=False):
    graph = _graph("relu")
    return graph.activation("relu", _features(features, "relu"))


def leaky_relu(features, negative_slope=0.01, inplace=False):
    graph = _graph("leaky_relu")
    return graph.activation("leaky_relu", _features(features, "leaky_relu"),
                            negative_slope=float(negative_slope))


def cat(values, dim=1):
    graph = _graph("cat")
    if dim not in (1, -1):
        raise UnsupportedError("%s: cat along dim %s; sparse features concatenate "
                               "along the channels (dim=1)" % (graph.where(), dim))
    return graph.concat(_features(v, "cat") for v in values)


def add(a, b):
    return _features(a, "add") + b


def _torch_relu(x, *args, **kwargs):
    return relu(x)


def _torch_leaky_relu(x, negative_slope=0.01, *args, **kwargs):
    return leaky_relu(x, negative_slope)


def _torch_cat(tensors, dim=0, *args, **kwargs):
    return cat(tensors, dim)


def _torch_add(a, b, *args, **kwargs):
    return add(a, b)


# torch function name -> handler, for Features.__torch_function__.
TORCH_FUNCTIONS = {
    "relu": _torch_relu,
    "relu_": _torch_relu,
    "leaky_relu": _torch_leaky_relu,
    "cat": _torch_cat,
    "concat": _torch_cat,
    "add": _torch_add,
    "__add__": _torch_add,
}
