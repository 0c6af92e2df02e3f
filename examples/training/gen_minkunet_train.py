#!/usr/bin/env python3
"""Writes examples/minkunet_train.mlir: MinkUNet training on one scan.

The network is examples/minkunet.mlir's MinkUNet (a stem of two subm convs;
four encoder stages, each a 2x2x2 / stride-2 conv and a residual block; four
decoder stages, each the inverse conv of an encoder downsampling, a skip
concatenation and a residual block; a pointwise classifier over 19 classes)
with every width divided by --width-divisor (default 4: 8 to 64 channels,
so that a training step takes seconds on two CPU cores; 1 gives the
example's widths). The generated file holds:

  @minkunet_loss(coords, features, onehot, params...) -> tensor<f32>
      the forward pass and the mean cross-entropy against one-hot labels,
      marked {spconv.backward = @minkunet_loss_backward};
  @minkunet_loss_backward   declared only: spconv-generate-backward (in the
      spconv-to-* pipelines) derives it, returning the loss and the
      gradient of every float argument;
  @minkunet_loss_and_gradients(coords, features, onehot, params...)
      -> (loss, gradients...)   the backward called with cotangent 1 (what
      bench/training.py times against @minkunet_loss);
  @train(coords, features, onehot, lr, params...) -> (losses, params...)
      --steps steps of SGD in an scf.for: backward, then p -= lr * dL/dp.

usage: gen_minkunet_train.py [--width-divisor N] [--steps K] [-o FILE]
"""
import argparse
import sys

GRIDS = [[1024 >> i, 1024 >> i, 64 >> i] for i in range(5)]
ENCODER = [(32, 32), (32, 64), (64, 128), (128, 256)]
DECODER = [256, 128, 96, 96]
STEM = 32
CLASSES = 19
IN_CHANNELS = 4


class Net:
    def __init__(self, divisor):
        self.lines = []
        self.params = []  # (name, shape)
        self.counter = 0
        self.d = divisor

    def width(self, c):
        return max(1, c // self.d)

    def fresh(self, hint):
        self.counter += 1
        return "%%%s%d" % (hint, self.counter)

    def param(self, name, shape):
        self.params.append((name, shape))
        return "%" + name

    @staticmethod
    def ftype(c):
        return "tensor<?x%dxf32>" % c

    def conv(self, name, geometry, coords, grid_in, grid_out, x, cin, cout, bias=True):
        k = 1
        for v in geometry["kernel"]:
            k *= v
        w = self.param("w_" + name, (k, cin, cout))
        wt = "tensor<%dx%dx%dxf32>" % (k, cin, cout)
        text = "spconv.conv %s %s, %s, %s" % (geometry["text"], coords, x, w)
        types = "!g%d, %s, %s" % (grid_in, self.ftype(cin), wt)
        if bias:
            b = self.param("b_" + name, (cout,))
            text += " bias %s" % b
            types += ", tensor<%dxf32>" % cout
        oc, of = self.fresh("c"), self.fresh("f")
        self.lines.append("  %s, %s = %s" % (oc, of, text))
        self.lines.append("      : %s -> !g%d, %s" % (types, grid_out, self.ftype(cout)))
        return oc, of

    def inverse(self, name, fine, coarse, grid_fine, grid_coarse, x, cin, cout):
        w = self.param("w_" + name, (8, cin, cout))
        b = self.param("b_" + name, (cout,))
        of = self.fresh("f")
        self.lines.append("  %s = spconv.inverse_conv <inverse, kernel = [2, 2, 2], stride = [2, 2, 2]> "
                          "%s, %s, %s, %s bias %s" % (of, fine, coarse, x, w, b))
        self.lines.append("      : !g%d, !g%d, %s, tensor<8x%dx%dxf32>, tensor<%dxf32> -> %s"
                          % (grid_fine, grid_coarse, self.ftype(cin), cin, cout, cout,
                             self.ftype(cout)))
        return of

    def relu(self, x, c):
        n, init, y = self.fresh("n"), self.fresh("init"), self.fresh("r")
        self.lines += [
            "  %s = tensor.dim %s, %%c0 : %s" % (n, x, self.ftype(c)),
            "  %s = tensor.empty(%s) : %s" % (init, n, self.ftype(c)),
            "  %s = linalg.map ins(%s : %s) outs(%s : %s)" % (y, x, self.ftype(c), init,
                                                             self.ftype(c)),
            "      (%v: f32, %unused: f32) {",
            "        %m = arith.maximumf %v, %zero : f32",
            "        linalg.yield %m : f32",
            "      }"]
        return y

    def add(self, a, b, c):
        s = self.fresh("sum")
        self.lines.append("  %s = arith.addf %s, %s : %s" % (s, a, b, self.ftype(c)))
        return s

    def block(self, name, coords, grid, x, cin, cout):
        """A residual block: two 3x3x3 subm convs, a pointwise projection
        where the width changes."""
        subm = {"kernel": [3, 3, 3], "text": "<subm, kernel = [3, 3, 3]>"}
        point = {"kernel": [1, 1, 1], "text": "<subm, kernel = [1, 1, 1]>"}
        _, a = self.conv(name + "_a", subm, coords, grid, grid, x, cin, cout)
        a = self.relu(a, cout)
        _, b = self.conv(name + "_b", subm, coords, grid, grid, a, cout, cout)
        skip = x
        if cin != cout:
            _, skip = self.conv(name + "_proj", point, coords, grid, grid, x, cin, cout,
                                bias=False)
        return self.relu(self.add(b, skip, cout), cout)

    def forward(self):
        W = self.width
        subm = {"kernel": [3, 3, 3], "text": "<subm, kernel = [3, 3, 3]>"}
        down = {"kernel": [2, 2, 2], "text": "<regular, kernel = [2, 2, 2], stride = [2, 2, 2]>"}
        stem = W(STEM)
        _, x = self.conv("stem_a", subm, "%coords", 0, 0, "%features", IN_CHANNELS, stem)
        x = self.relu(x, stem)
        _, x = self.conv("stem_b", subm, "%coords", 0, 0, x, stem, stem)
        x = self.relu(x, stem)
        coords, skips, c = ["%coords"], [(x, stem)], stem
        for i, (cin, cout) in enumerate(ENCODER, start=1):
            oc, y = self.conv("down%d" % i, down, coords[-1], i - 1, i, x, c, c)
            y = self.relu(y, c)
            x = self.block("enc%d" % i, oc, i, y, c, W(cout))
            coords.append(oc)
            c = W(cout)
            skips.append((x, c))
        for j, width in enumerate(DECODER, start=1):
            level = 4 - j
            up = self.inverse("up%d" % j, coords[level], coords[level + 1], level, level + 1,
                              x, c, W(width))
            up = self.relu(up, W(width))
            skip, sc = skips[level]
            cat = self.fresh("cat")
            self.lines.append("  %s = tensor.concat dim(1) %s, %s : (%s, %s) -> %s" % (
                cat, up, skip, self.ftype(W(width)), self.ftype(sc), self.ftype(W(width) + sc)))
            x = self.block("dec%d" % j, coords[level], level, cat, W(width) + sc, W(width))
            c = W(width)
        point = {"kernel": [1, 1, 1], "text": "<subm, kernel = [1, 1, 1]>"}
        _, logits = self.conv("classifier", point, "%coords", 0, 0, x, c, CLASSES)
        return logits


LOSS = """\
  // Mean cross-entropy: log(sum_c exp(z_c)) - z_label, averaged over sites.
  %%classes_init = tensor.empty(%%sites) : tensor<?x%(k)dxf32>
  %%exp = linalg.map ins(%(z)s : tensor<?x%(k)dxf32>) outs(%%classes_init : tensor<?x%(k)dxf32>)
      (%%v: f32, %%unused: f32) {
        %%e = math.exp %%v : f32
        linalg.yield %%e : f32
      }
  %%sites_init = tensor.empty(%%sites) : tensor<?xf32>
  %%sites_zero = linalg.fill ins(%%zero : f32) outs(%%sites_init : tensor<?xf32>) -> tensor<?xf32>
  %%total = linalg.reduce ins(%%exp : tensor<?x%(k)dxf32>) outs(%%sites_zero : tensor<?xf32>) dimensions = [1]
      (%%v: f32, %%acc: f32) {
        %%s = arith.addf %%v, %%acc : f32
        linalg.yield %%s : f32
      }
  %%log_total = linalg.map ins(%%total : tensor<?xf32>) outs(%%sites_init : tensor<?xf32>)
      (%%v: f32, %%unused: f32) {
        %%l = math.log %%v : f32
        linalg.yield %%l : f32
      }
  %%picked = linalg.generic {
      indexing_maps = [affine_map<(i, c) -> (i, c)>, affine_map<(i, c) -> (i, c)>,
                       affine_map<(i, c) -> (i)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%(z)s, %%onehot : tensor<?x%(k)dxf32>, tensor<?x%(k)dxf32>) outs(%%sites_zero : tensor<?xf32>) {
  ^bb0(%%v: f32, %%hot: f32, %%acc: f32):
    %%p = arith.mulf %%v, %%hot : f32
    %%s = arith.addf %%acc, %%p : f32
    linalg.yield %%s : f32
  } -> tensor<?xf32>
  %%nll = arith.subf %%log_total, %%picked : tensor<?xf32>
  %%sites_i64 = arith.index_cast %%sites : index to i64
  %%sites_f = arith.sitofp %%sites_i64 : i64 to f32
  %%one = arith.constant 1.0 : f32
  %%inv_sites = arith.divf %%one, %%sites_f : f32
  %%loss_init = tensor.empty() : tensor<f32>
  %%loss_zero = linalg.fill ins(%%zero : f32) outs(%%loss_init : tensor<f32>) -> tensor<f32>
  %%loss = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
      iterator_types = ["reduction"]}
      ins(%%nll : tensor<?xf32>) outs(%%loss_zero : tensor<f32>) {
  ^bb0(%%v: f32, %%acc: f32):
    %%w = arith.mulf %%v, %%inv_sites : f32
    %%s = arith.addf %%acc, %%w : f32
    linalg.yield %%s : f32
  } -> tensor<f32>
  return %%loss : tensor<f32>
}
"""


def tensor_type(shape):
    return "tensor<%sxf32>" % "x".join(str(s) for s in shape)


def params(divisor):
    """(name, shape) of every parameter, in @minkunet_loss's argument order."""
    net = Net(divisor)
    net.forward()
    return net.params


def generate(divisor, steps):
    net = Net(divisor)
    logits = net.forward()
    params = net.params
    ptypes = [tensor_type(s) for _, s in params]
    grids = "\n".join("!g%d = tensor<?x4xi32, #spconv.grid<[%s]>>" % (i, ", ".join(map(str, g)))
                      for i, g in enumerate(GRIDS))
    head = [
        "// Generated by examples/training/gen_minkunet_train.py --width-divisor %d --steps %d."
        % (divisor, steps),
        "// Do not edit: regenerate (test/Examples/minkunet-training.test checks it is current).",
        "//",
        "// MinkUNet training on one scan: @minkunet_loss is the forward pass and the mean",
        "// cross-entropy; spconv-generate-backward derives @minkunet_loss_backward from it",
        "// (the loss and every gradient); @train runs %d steps of SGD." % steps,
        "", grids, ""]
    fwd_args = ["%coords: !g0", "%%features: tensor<?x%dxf32>" % IN_CHANNELS,
                "%%onehot: tensor<?x%dxf32>" % CLASSES]
    fwd_args += ["%%%s: %s" % (n, t) for (n, _), t in zip(params, ptypes)]
    out = head + ["func.func @minkunet_loss(\n    " + ",\n    ".join(fwd_args) + ")",
                  "    -> tensor<f32> attributes {spconv.backward = @minkunet_loss_backward} {",
                  "  %c0 = arith.constant 0 : index",
                  "  %zero = arith.constant 0.0 : f32",
                  "  %sites = tensor.dim %features, %c0 : tensor<?x4xf32>"]
    out += net.lines
    out.append(LOSS % {"z": logits, "k": CLASSES})
    in_types = ["!g0", "tensor<?x%dxf32>" % IN_CHANNELS, "tensor<?x%dxf32>" % CLASSES] + ptypes
    grad_types = ["tensor<f32>", "tensor<?x%dxf32>" % IN_CHANNELS,
                  "tensor<?x%dxf32>" % CLASSES] + ptypes
    out.append("func.func private @minkunet_loss_backward(\n    %s)\n    -> (%s)\n" % (
        ",\n    ".join(in_types + ["tensor<f32>"]), ",\n        ".join(grad_types)))
    # @minkunet_loss_and_gradients
    out.append("func.func @minkunet_loss_and_gradients(\n    " + ",\n    ".join(fwd_args) + ")")
    out.append("    -> (%s) {" % ", ".join(grad_types))
    out.append("  %seed = arith.constant dense<1.0> : tensor<f32>")
    args_in = ["%coords", "%features", "%onehot"] + ["%%%s" % name for name, _ in params]
    out.append("  %%g:%d = func.call @minkunet_loss_backward(%s, %%seed)\n      : (%s)\n      -> (%s)"
               % (len(grad_types), ", ".join(args_in), ", ".join(in_types + ["tensor<f32>"]),
                  ", ".join(grad_types)))
    out.append("  return %s : %s" % (", ".join("%%g#%d" % i for i in range(len(grad_types))),
                                      ", ".join(grad_types)))
    out.append("}\n")
    # @train
    train_args = fwd_args[:3] + ["%lr: tensor<f32>"] + fwd_args[3:]
    results = ["tensor<%dxf32>" % steps] + ptypes
    out.append("func.func @train(\n    " + ",\n    ".join(train_args) + ")")
    out.append("    -> (%s) {" % ", ".join(results))
    n = len(params)
    out += ["  %c0 = arith.constant 0 : index",
            "  %c1 = arith.constant 1 : index",
            "  %%steps = arith.constant %d : index" % steps,
            "  %zero = arith.constant 0.0 : f32",
            "  %seed = arith.constant dense<1.0> : tensor<f32>",
            "  %rate = tensor.extract %lr[] : tensor<f32>",
            "  %%losses_init = tensor.empty() : tensor<%dxf32>" % steps,
            "  %%losses0 = linalg.fill ins(%%zero : f32) outs(%%losses_init : tensor<%dxf32>)"
            " -> tensor<%dxf32>" % (steps, steps)]
    iter_args = ["%losses = %losses0"] + ["%%p%d = %%%s" % (i, name)
                                             for i, (name, _) in enumerate(params)]
    out.append("  %%state:%d = scf.for %%step = %%c0 to %%steps step %%c1 iter_args(\n      %s)\n"
               "      -> (%s) {" % (n + 1, ",\n      ".join(iter_args), ", ".join(results)))
    # no_inline: the backward function stays a function of its own, lowered
    # at the top level, not copied into the loop body.
    call_args = ["%coords", "%features", "%onehot"] + ["%%p%d" % i for i in range(n)] + ["%seed"]
    out.append("    %%g:%d = func.call @minkunet_loss_backward(%s) {no_inline}\n        : (%s)\n        -> (%s)"
               % (n + 3, ", ".join(call_args), ", ".join(in_types + ["tensor<f32>"]),
                  ", ".join(grad_types)))
    out += ["    %loss = tensor.extract %g#0[] : tensor<f32>",
            "    %%losses_next = tensor.insert %%loss into %%losses[%%step] : tensor<%dxf32>"
            % steps]
    updated = []
    for i, t in enumerate(ptypes):
        init, new = "%%u_init%d" % i, "%%u%d" % i
        out += ["    %s = tensor.empty() : %s" % (init, t),
                "    %s = linalg.map ins(%%p%d, %%g#%d : %s, %s) outs(%s : %s)"
                % (new, i, i + 3, t, t, init, t),
                "        (%w: f32, %dw: f32, %unused: f32) {",
                "          %step_w = arith.mulf %dw, %rate : f32",
                "          %next = arith.subf %w, %step_w : f32",
                "          linalg.yield %next : f32",
                "        }"]
        updated.append(new)
    out.append("    scf.yield %%losses_next, %s : %s" % (", ".join(updated), ", ".join(results)))
    out.append("  }")
    out.append("  return %s : %s" % (", ".join("%%state#%d" % i for i in range(n + 1)),
                                      ", ".join(results)))
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--width-divisor", type=int, default=4)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("-o", "--output", default="-")
    args = p.parse_args()
    if args.width_divisor < 1 or args.steps < 1:
        sys.exit("gen_minkunet_train.py: --width-divisor and --steps must be positive")
    text = generate(args.width_divisor, args.steps)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
