"""Prints a traced graph as an MLIR module of the `spconv` dialect.

The module has one public function, `@forward(coords, features, params...)
-> (coords, features)...`: the weights are arguments, not constants, so the
compiled code does not depend on them (a checkpoint loads without a
recompile, and the cache key is the network's structure). `Param` says how
each argument is computed from the model's layers at call time.
"""
import math

import numpy as np

ELEMENT_TYPES = {"float32": "f32", "float64": "f64"}


class Param:
    """One weight argument of `@forward`: its name (the layer's path), its
    shape, and a function computing it from the model."""

    def __init__(self, name, shape, compute):
        self.name, self.shape, self.compute = name, tuple(shape), compute


def fold_batchnorms(graph):
    """Folds each BatchNorm that is the only reader of a conv's features into
    that conv (scale into its weights, shift into its bias). Returns the
    nodes that remain and a map from folded values to their replacements."""
    alias, kept = {}, []
    for node in graph.nodes:
        if node.op == "batchnorm":
            value = node.inputs[0]
            target = alias.get(id(value), value)
            readers, returned = graph.uses(value)
            producer = target.producer
            if (producer is not None and producer.op in ("conv", "inverse_conv")
                    and readers == [node] and not returned):
                producer.attrs.setdefault("folded", []).append(node.module)
                alias[id(node.outputs[0])] = target
                continue
        kept.append(node)
    return kept, alias


def _conv_weights(node):
    """The conv's `K x Cin x Cout` weights and `Cout` bias (or None), with
    its folded BatchNorms applied."""
    module = node.module
    w = module.kernel_matrix().astype(np.float64)
    b = None if module.bias is None else np.asarray(module.bias, np.float64)
    for bn in node.attrs.get("folded", []):
        scale, shift = bn.scale_shift()
        w = w * scale
        b = shift if b is None else b * scale + shift
    return w, b


class Emitter:
    def __init__(self, graph, dtype="float32", fold_batchnorm=True, entry="forward"):
        self.graph = graph
        self.dtype = dtype
        self.ftype = ELEMENT_TYPES[dtype]
        self.entry = entry
        self.lines = []
        self.params = []
        self.names = {}
        self.counter = 0
        if fold_batchnorm:
            self.nodes, self.alias = fold_batchnorms(graph)
        else:
            self.nodes, self.alias = list(graph.nodes), {}

    # -- names and types ---------------------------------------------------
    def fresh(self, hint):
        self.counter += 1
        return "%%%s%d" % (hint, self.counter)

    def ref(self, value):
        value = self.alias.get(id(value), value)
        return self.names[id(value)]

    def bind(self, value, name):
        self.names[id(value)] = name

    def coords_type(self, coords):
        grid = ", ".join(str(s) for s in coords.grid)
        batch = "" if coords.batch is None else ", batch = %d" % coords.batch
        return "tensor<?x%dxi32, #spconv.grid<[%s]%s>>" % (coords.ndim + 1, grid, batch)

    def feature_type(self, channels):
        return "tensor<?x%dx%s>" % (channels, self.ftype)

    def param(self, hint, shape, compute):
        name = "%%p%d_%s" % (len(self.params), hint)
        typ = "tensor<%sx%s>" % ("x".join(str(d) for d in shape), self.ftype)
        self.params.append((Param(hint, shape, compute), name, typ))
        return name, typ

    @staticmethod
    def _list(values):
        return "[%s]" % ", ".join(str(v) for v in values)

    def geometry(self, attrs):
        kind = attrs["kind"]
        parts = ["%s" % kind, "kernel = %s" % self._list(attrs["kernel"])]
        if max(attrs["stride"]) != 1:
            parts.append("stride = %s" % self._list(attrs["stride"]))
        if kind != "subm" and max(attrs["padding"]) != 0:
            parts.append("padding = %s" % self._list(attrs["padding"]))
        if max(attrs["dilation"]) != 1:
            parts.append("dilation = %s" % self._list(attrs["dilation"]))
        if kind == "transposed" and max(attrs["output_padding"]) != 0:
            parts.append("output_padding = %s" % self._list(attrs["output_padding"]))
        return "<%s>" % ", ".join(parts)

    @staticmethod
    def _groups(attrs):
        return " groups %d" % attrs["groups"] if attrs.get("groups", 1) != 1 else ""

    # -- ops ---------------------------------------------------------------
    def emit(self, inputs, outputs):
        coords, features = inputs
        self.bind(coords, "%coords")
        self.bind(features, "%features")
        for node in self.nodes:
            getattr(self, "emit_" + node.op)(node)
        results = []
        for c, f in outputs:
            results.append((self.ref(c), self.coords_type(c)))
            results.append((self.ref(f), self.feature_type(f.channels)))
        args = ["%%coords: %s" % self.coords_type(coords),
                "%%features: %s" % self.feature_type(features.channels)]
        args += ["%s: %s" % (name, typ) for _, name, typ in self.params]
        head = ["// Generated by spconv_mlir from a traced model. Do not edit.",
                "func.func @%s(" % self.entry + (",\n    ".join(args)) + ")",
                "    -> (%s) {" % ", ".join(t for _, t in results)]
        body = ["  " + line for line in self.lines]
        ret = "  return %s : %s" % (", ".join(n for n, _ in results),
                                    ", ".join(t for _, t in results))
        return "\n".join(head + body + [ret, "}", ""])

    def emit_conv(self, node):
        a = node.attrs
        coords, feats = node.inputs
        out_coords, out = node.outputs
        layer = node.module._trace_name
        k = math.prod(a["kernel"])
        w, wt = self.param(_ident(layer) + "_weight",
                           (k, a["in_channels"] // a["groups"], a["out_channels"]),
                           lambda n=node: _conv_weights(n)[0])
        operands, types = [self.ref(coords), self.ref(feats), w], \
            [self.coords_type(coords), self.feature_type(a["in_channels"]), wt]
        bias = self._bias(node, layer)
        text = "spconv.conv %s%s %s" % (self.geometry(a), self._groups(a), ", ".join(operands))
        if bias:
            text += " bias %s" % bias[0]
            types.append(bias[1])
        oc, of = self.fresh("c"), self.fresh("f")
        self.lines.append("%s, %s = %s\n      : %s -> %s, %s" % (
            oc, of, text, ", ".join(types), self.coords_type(out_coords),
            self.feature_type(a["out_channels"])))
        if a["kind"] != "subm":
            self.bind(out_coords, oc)
        self.bind(out, of)

    def _bias(self, node, layer):
        if node.module.bias is None and not node.attrs.get("folded"):
            return None
        return self.param(_ident(layer) + "_bias", (node.attrs["out_channels"],),
                          lambda n=node: _bias_or_zero(n))

    def emit_inverse_conv(self, node):
        a = node.attrs
        fine, coarse, feats = node.inputs
        out = node.outputs[1]
        layer = node.module._trace_name
        k = math.prod(a["kernel"])
        w, wt = self.param(_ident(layer) + "_weight",
                           (k, a["in_channels"] // a["groups"], a["out_channels"]),
                           lambda n=node: _conv_weights(n)[0])
        geometry = dict(a, kind="inverse")
        operands = [self.ref(fine), self.ref(coarse), self.ref(feats), w]
        types = [self.coords_type(fine), self.coords_type(coarse),
                 self.feature_type(a["in_channels"]), wt]
        text = "spconv.inverse_conv %s%s %s" % (self.geometry(geometry), self._groups(a),
                                                ", ".join(operands))
        bias = self._bias(node, layer)
        if bias:
            text += " bias %s" % bias[0]
            types.append(bias[1])
        of = self.fresh("f")
        self.lines.append("%s = %s\n      : %s -> %s" % (
            of, text, ", ".join(types), self.feature_type(a["out_channels"])))
        self.bind(out, of)

    def emit_pool(self, node):
        a = node.attrs
        coords, feats = node.inputs
        out_coords, out = node.outputs
        oc, of = self.fresh("c"), self.fresh("f")
        self.lines.append("%s, %s = spconv.pool %s %s %s, %s\n      : %s, %s -> %s, %s" % (
            oc, of, a["mode"], self.geometry(a), self.ref(coords), self.ref(feats),
            self.coords_type(coords), self.feature_type(feats.channels),
            self.coords_type(out_coords), self.feature_type(out.channels)))
        self.bind(out_coords, oc)
        self.bind(out, of)

    def _map(self, node, inputs, body, extra_types=()):
        """A linalg.map over rows x channels: `body` gets the block's
        argument names and returns (lines, yielded value)."""
        out = node.outputs[0]
        t = self.feature_type(out.channels)
        n, init, res = self.fresh("n"), self.fresh("init"), self.fresh("f")
        c0 = self.fresh("c0")
        args = ["%%a%d" % i for i in range(len(inputs))]
        lines, result = body(args)
        self.lines.append("%s = arith.constant 0 : index" % c0)
        self.lines.append("%s = tensor.dim %s, %s : %s" % (n, self.ref(inputs[0]), c0, t))
        self.lines.append("%s = tensor.empty(%s) : %s" % (init, n, t))
        self.lines.append("%s = linalg.map ins(%s : %s) outs(%s : %s)" % (
            res, ", ".join(self.ref(v) for v in inputs), ", ".join([t] * len(inputs)),
            init, t))
        self.lines.append("    (%s, %%unused: %s) {" % (
            ", ".join("%s: %s" % (a, self.ftype) for a in args), self.ftype))
        self.lines += ["  " + line for line in lines]
        self.lines.append("  linalg.yield %s : %s" % (result, self.ftype))
        self.lines.append("}")
        self.bind(out, res)

    def emit_relu(self, node):
        ft = self.ftype
        self._map(node, node.inputs, lambda a: (
            ["%%zero = arith.constant 0.0 : %s" % ft,
             "%%r = arith.maximumf %s, %%zero : %s" % (a[0], ft)], "%r"))

    def emit_leaky_relu(self, node):
        ft, slope = self.ftype, _float(node.attrs["negative_slope"])
        self._map(node, node.inputs, lambda a: (
            ["%%zero = arith.constant 0.0 : %s" % ft,
             "%%slope = arith.constant %s : %s" % (slope, ft),
             "%%positive = arith.cmpf ogt, %s, %%zero : %s" % (a[0], ft),
             "%%scaled = arith.mulf %s, %%slope : %s" % (a[0], ft),
             "%%r = arith.select %%positive, %s, %%scaled : %s" % (a[0], ft)], "%r"))

    def _scalar(self, node, op):
        ft, value = self.ftype, _float(node.attrs["scalar"])
        self._map(node, node.inputs, lambda a: (
            ["%%s = arith.constant %s : %s" % (value, ft),
             "%%r = arith.%s %s, %%s : %s" % (op, a[0], ft)], "%r"))

    def emit_add_scalar(self, node):
        self._scalar(node, "addf")

    def emit_mul_scalar(self, node):
        self._scalar(node, "mulf")

    def _binary(self, node, op):
        a, b = node.inputs
        res = self.fresh("f")
        self.lines.append("%s = arith.%s %s, %s : %s" % (
            res, op, self.ref(a), self.ref(b), self.feature_type(a.channels)))
        self.bind(node.outputs[0], res)

    def emit_add(self, node):
        self._binary(node, "addf")

    def emit_sub(self, node):
        self._binary(node, "subf")

    def emit_mul(self, node):
        self._binary(node, "mulf")

    def emit_batchnorm(self, node):
        bn = node.module
        layer = _ident(bn._trace_name)
        x = node.inputs[0]
        c = x.channels
        scale, st = self.param(layer + "_scale", (c,), lambda m=bn: m.scale_shift()[0])
        shift, _ = self.param(layer + "_shift", (c,), lambda m=bn: m.scale_shift()[1])
        t, ft = self.feature_type(c), self.ftype
        n, init, res, c0 = self.fresh("n"), self.fresh("init"), self.fresh("f"), self.fresh("c0")
        self.lines += [
            "%s = arith.constant 0 : index" % c0,
            "%s = tensor.dim %s, %s : %s" % (n, self.ref(x), c0, t),
            "%s = tensor.empty(%s) : %s" % (init, n, t),
            "%s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, "
            "affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, "
            "affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", "
            "\"parallel\"]}" % res,
            "    ins(%s, %s, %s : %s, %s, %s) outs(%s : %s) {" % (
                self.ref(x), scale, shift, t, st, st, init, t),
            "  ^bb0(%%v: %s, %%s: %s, %%t: %s, %%unused: %s):" % (ft, ft, ft, ft),
            "    %%m = arith.mulf %%v, %%s : %s" % ft,
            "    %%y = arith.addf %%m, %%t : %s" % ft,
            "    linalg.yield %%y : %s" % ft,
            "} -> %s" % t]
        self.bind(node.outputs[0], res)

    def emit_cat(self, node):
        res = self.fresh("f")
        types = ", ".join(self.feature_type(v.channels) for v in node.inputs)
        self.lines.append("%s = tensor.concat dim(1) %s : (%s) -> %s" % (
            res, ", ".join(self.ref(v) for v in node.inputs), types,
            self.feature_type(node.outputs[0].channels)))
        self.bind(node.outputs[0], res)


def _bias_or_zero(node):
    w, b = _conv_weights(node)
    return np.zeros(w.shape[2]) if b is None else b


def _float(value):
    """An MLIR float literal (it needs the decimal point)."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError("non-finite constant %r in the model" % value)
    return "%.17e" % value


def _ident(name):
    out = "".join(ch if ch.isalnum() else "_" for ch in name)
    return out or "layer"
