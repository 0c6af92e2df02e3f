"""An independent evaluation of a traced model, for the front end's tests.

Every sparse layer runs through `spconv-ref` (the naive C++ reference of
DESIGN.md's semantics), every feature layer through numpy in float64, with
the weights taken from the layers' spconv 2.x arrays by the formulas below,
written from spconv's layout (not from the package's conversion code). The
compiled network's outputs are compared with these.
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "Integration", "CPU"))
from networks import csv, run  # noqa: E402


def spconv2_matrix(module):
    """K x Cin x Cout from spconv 2.x's Cout x k... x Cin weight. spconv
    2.x computes 1x...x1 kernels as features @ weight.view(Cin, Cout). A
    grouped weight (Cout x k... x Cin/g) becomes the block-diagonal matrix of
    the ungrouped conv it equals: output channel co of group q reads input
    channels q * Cin/g ..< (q + 1) * Cin/g."""
    w = np.asarray(module.weight, np.float64)
    cout, group_in = w.shape[0], w.shape[-1]
    volume = math.prod(w.shape[1:-1])
    groups = getattr(module, "groups", 1)
    if groups != 1:
        group_out = cout // groups
        full = np.zeros((volume, group_in * groups, cout))
        blocks = w.reshape(cout, volume, group_in)
        for co in range(cout):
            q = co // group_out
            full[:, q * group_in:(q + 1) * group_in, co] = blocks[co]
        return full
    if volume == 1 and (module.kind == "subm" or max(module.stride) == 1):
        return w.reshape(1, group_in, cout)
    return np.stack([w.reshape(cout, volume, group_in)[:, j, :].T for j in range(volume)])


class Reference:
    def __init__(self, bindir, work, dtype=np.float32):
        self.ref = os.path.join(bindir, "spconv-ref")
        self.work = work
        self.dtype = dtype
        self.count = 0
        os.makedirs(work, exist_ok=True)

    def save(self, array):
        self.count += 1
        path = os.path.join(self.work, "t%04d.npy" % self.count)
        np.save(path, array)
        return path

    def call(self, args):
        self.count += 1
        out = os.path.join(self.work, "o%04d" % self.count)
        run([self.ref] + args + ["--out-dir", out])
        return [np.load(os.path.join(out, "out%d.npy" % i)) for i in range(2)
                if os.path.exists(os.path.join(out, "out%d.npy" % i))]

    def geometry_args(self, attrs, kind):
        args = ["--kernel", csv(attrs["kernel"]), "--dilation", csv(attrs["dilation"])]
        if kind != "subm":
            args += ["--stride", csv(attrs["stride"]), "--padding", csv(attrs["padding"])]
        if kind == "transposed":
            args += ["--output-padding", csv(attrs["output_padding"])]
        return args

    def conv(self, node, coords, feats):
        a, m = node.attrs, node.module
        w = spconv2_matrix(m).astype(self.dtype)
        args = ["conv", "--kind", a["kind"], "--grid", csv(node.inputs[0].grid),
                "--coords", self.save(coords), "--features", self.save(feats),
                "--weight", self.save(w)] + self.geometry_args(a, a["kind"])
        if m.bias is not None:
            args += ["--bias", self.save(np.asarray(m.bias, self.dtype))]
        out_coords, out = self.call(args)
        return out_coords, out

    def inverse(self, node, fine, coarse, feats):
        a, m = node.attrs, node.module
        w = spconv2_matrix(m).astype(self.dtype)
        args = ["inverse", "--grid", csv(node.inputs[0].grid), "--coords", self.save(fine),
                "--source-coords", self.save(coarse), "--features", self.save(feats),
                "--weight", self.save(w), "--kernel", csv(a["kernel"]),
                "--stride", csv(a["stride"]), "--padding", csv(a["padding"]),
                "--dilation", csv(a["dilation"])]
        if m.bias is not None:
            args += ["--bias", self.save(np.asarray(m.bias, self.dtype))]
        return self.call(args)[0]

    def pool(self, node, coords, feats):
        a = node.attrs
        args = ["pool", "--mode", a["mode"], "--grid", csv(node.inputs[0].grid),
                "--coords", self.save(coords), "--features", self.save(feats)]
        args += self.geometry_args(a, "regular")
        return self.call(args)

    def evaluate(self, graph, indices, features):
        """The outputs of `graph` (spconv_mlir.trace's) on the inputs, as a
        list of (indices, features)."""
        values = {id(graph.inputs[0]): indices, id(graph.inputs[1]): features}

        def get(v):
            return values[id(v)]

        for node in graph.nodes:
            op = node.op
            if op == "conv":
                c, f = self.conv(node, get(node.inputs[0]), get(node.inputs[1]))
                values[id(node.outputs[0])] = c if node.attrs["kind"] != "subm" else \
                    get(node.inputs[0])
                values[id(node.outputs[1])] = f
            elif op == "inverse_conv":
                values[id(node.outputs[1])] = self.inverse(node, *[get(v) for v in node.inputs])
            elif op == "pool":
                c, f = self.pool(node, get(node.inputs[0]), get(node.inputs[1]))
                values[id(node.outputs[0])], values[id(node.outputs[1])] = c, f
            else:
                values[id(node.outputs[0])] = self.feature_op(node, [get(v) for v in node.inputs])
        return [(get(c), get(f)) for c, f in graph.outputs]

    def feature_op(self, node, args):
        x = [np.asarray(a, np.float64) for a in args]
        op = node.op
        if op == "batchnorm":
            m = node.module
            y = (x[0] - m.running_mean) / np.sqrt(m.running_var.astype(np.float64) + m.eps)
            if m.affine:
                y = y * m.weight + m.bias
        elif op == "relu":
            y = np.maximum(x[0], 0)
        elif op == "leaky_relu":
            y = np.where(x[0] > 0, x[0], x[0] * node.attrs["negative_slope"])
        elif op == "add":
            y = x[0] + x[1]
        elif op == "sub":
            y = x[0] - x[1]
        elif op == "mul":
            y = x[0] * x[1]
        elif op == "add_scalar":
            y = x[0] + node.attrs["scalar"]
        elif op == "mul_scalar":
            y = x[0] * node.attrs["scalar"]
        elif op == "cat":
            y = np.concatenate(x, axis=1)
        else:
            raise ValueError("no reference for %s" % op)
        return y.astype(self.dtype)


def compare(name, got, want, rtol=1e-4, atol=1e-5):
    """Exits with a message unless the outputs agree: the same sites in the
    same order, and features within rtol of the largest magnitude."""
    for i, ((gc, gf), (wc, wf)) in enumerate(zip(got, want)):
        gc, gf = np.asarray(gc), np.asarray(gf)
        if gc.shape != wc.shape or not np.array_equal(gc, wc):
            sys.exit("%s: output %d: sites differ (%s vs reference %s)"
                     % (name, i, gc.shape, wc.shape))
        scale = max(1.0, float(np.abs(wf).max()) if wf.size else 1.0)
        err = float(np.abs(gf.astype(np.float64) - wf).max()) if wf.size else 0.0
        if gf.shape != wf.shape or err > rtol * scale + atol:
            sys.exit("%s: output %d: features differ by %g (scale %g), shapes %s, %s"
                     % (name, i, err, scale, gf.shape, wf.shape))
    print("match: %s (%s)" % (name, ", ".join("%d sites x %d" % (len(c), f.shape[1])
                                              for c, f in got)))
