#!/usr/bin/env python3
"""Execution matrix: compiled spconv (spconv-run) against the reference.

Every case writes a small .mlir function, random inputs as .npy, runs it
with spconv-run and the same computation with spconv-ref (the naive
reference written from DESIGN.md), and compares the results with
spconv-npy-compare. Cases cover 1-D to 4-D grids, kernels 1/2/3/5 and
non-cubic ones, strides, padding, dilation (also with stride > 1), all
conv kinds, pooling, unfold/fold, segment max, batch > 1, N = 0, odd
channel counts, f16 features and bf16 ones (behind f32 arguments).

usage: conv_matrix.py --bin DIR --work DIR [--shard I/N] [--list]
                      [--subm-search sorted|hash] [--only OP] [--case NAME]...
                      [--target cpu|gpu-emulator|cuda] [--run-arg ARG]...
                      [--tf32-inputs]

--target runs the compiled side on another spconv-run target (the GPU
kernels emulated on the CPU, or a GPU; the default, cpu, leaves out the
cases marked GPU-only); --run-arg passes extra options to spconv-run (e.g.
--gpu-max-blocks=2, so that grid-stride loops wrap).
--compile-cuda compiles every case with spconv-opt --spconv-to-cuda (kernels
assembled by ptxas) instead of running it.
"""

import argparse
import os
import subprocess
import sys

import numpy as np


def round_to_tf32(array):
    """f32 values rounded to 10 mantissa bits, ties away from zero
    (cvt.rna.tf32.f32); infinities and NaNs unchanged."""
    bits = array.view(np.uint32)
    rounded = ((bits.astype(np.uint64) + 0x1000) & 0xFFFFE000).astype(np.uint32)
    finite = (bits & 0x7F800000) != 0x7F800000
    return np.where(finite, rounded, bits).view(np.float32)


def round_to_bf16(array):
    """f32 values rounded to bf16 (nearest, ties to even), kept as f32."""
    bits = array.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def fmt(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


def csv(values):
    return ",".join(str(v) for v in values)


class Case:
    """One conv-like computation, described by its parameters."""

    def __init__(self, name, op, dims, kernel, stride=None, padding=None,
                 dilation=None, output_padding=None, batch=1, sites=40,
                 cin=3, cout=5, dtype="f32", bias=False, seed=0,
                 grid=None, mode=None, dynamic_channels=False, fixed_sites=None,
                 gpu_only=False):
        rank = len(kernel)
        self.name = name
        self.op = op  # subm, regular, transposed, inverse, realign, pool
        self.kernel = kernel
        self.stride = stride or [1] * rank
        self.dilation = dilation or [1] * rank
        if op == "subm":
            self.padding = [k // 2 * d for k, d in zip(kernel, self.dilation)]
        else:
            self.padding = padding or [0] * rank
        self.output_padding = output_padding or [0] * rank
        self.grid = grid or dims or [1]
        self.batch = batch
        self.sites = sites
        self.cin, self.cout = cin, cout
        self.dtype = dtype
        self.bias = bias
        self.seed = seed
        self.mode = mode
        # Channel counts left dynamic in the types (the scalar compute path).
        self.dynamic_channels = dynamic_channels
        # Given sites (rows of batch, coordinates) instead of random ones.
        self.fixed_sites = fixed_sites
        # A shape that only a GPU form treats apart (the CPU runs it as it
        # runs a neighbouring case): not run with --target cpu.
        self.gpu_only = gpu_only

    # -- shapes -------------------------------------------------------------
    def out_grid(self, kind):
        out = []
        for i, k, s, p, d, op in zip(self.grid, self.kernel, self.stride,
                                     self.padding, self.dilation,
                                     self.output_padding):
            if kind == "subm":
                out.append(i)
            elif kind == "transposed":
                out.append((i - 1) * s - 2 * p + d * (k - 1) + op + 1)
            else:
                out.append((i + 2 * p - d * (k - 1) - 1) // s + 1)
        return out

    def geom(self, kind):
        parts = [kind, "kernel = " + fmt(self.kernel)]
        if any(s != 1 for s in self.stride):
            parts.append("stride = " + fmt(self.stride))
        if kind != "subm" and any(self.padding):
            parts.append("padding = " + fmt(self.padding))
        if any(d != 1 for d in self.dilation):
            parts.append("dilation = " + fmt(self.dilation))
        if any(self.output_padding):
            parts.append("output_padding = " + fmt(self.output_padding))
        return "<" + ", ".join(parts) + ">"

    def window_args(self, kind):
        args = ["--kernel", csv(self.kernel), "--stride", csv(self.stride),
                "--dilation", csv(self.dilation)]
        if kind != "subm":
            args += ["--padding", csv(self.padding)]
        if any(self.output_padding):
            args += ["--output-padding", csv(self.output_padding)]
        return args

    # -- IR -----------------------------------------------------------------
    def coords_type(self, grid):
        return "tensor<?x%dxi32, #spconv.grid<%s>>" % (len(grid) + 1, fmt(grid))

    def feat_type(self, channels):
        if self.dynamic_channels:
            return "tensor<?x?x%s>" % self.dtype
        return "tensor<?x%dx%s>" % (channels, self.dtype)

    def weight_type(self, cin, cout):
        volume = int(np.prod(self.kernel))
        if self.dynamic_channels:
            return "tensor<%dx?x?x%s>" % (volume, self.dtype)
        return "tensor<%dx%dx%dx%s>" % (volume, cin, cout, self.dtype)

    def mlir(self):
        ci, co = self.coords_type(self.grid), None
        fin, fout = self.feat_type(self.cin), self.feat_type(self.cout)
        w = self.weight_type(self.cin, self.cout)
        b = "tensor<%sx%s>" % ("?" if self.dynamic_channels else self.cout,
                               self.dtype)
        if self.dtype == "bf16":
            return self.bf16_mlir()
        if self.op in ("subm", "regular", "transposed"):
            co = self.coords_type(self.out_grid(self.op))
            bias_arg = ", %%b: %s" % b if self.bias else ""
            bias_use = " bias %b" if self.bias else ""
            bias_type = ", " + b if self.bias else ""
            return f"""func.func @f(%c: {ci}, %x: {fin}, %w: {w}{bias_arg}) -> ({co}, {fout}) {{
  %oc, %of = spconv.conv {self.geom(self.op)} %c, %x, %w{bias_use}
      : {ci}, {fin}, {w}{bias_type} -> {co}, {fout}
  return %oc, %of : {co}, {fout}
}}
"""
        if self.op == "inverse":
            # Down with the forward conv, back up with its inverse: the
            # inverse reads the forward conv's rulebook.
            co = self.coords_type(self.out_grid("regular"))
            wi = self.weight_type(self.cout, self.cin)
            return f"""func.func @f(%c: {ci}, %x: {fin}, %w: {w}, %wi: {wi}) -> ({co}, {fout}, {fin}) {{
  %oc, %of = spconv.conv {self.geom("regular")} %c, %x, %w
      : {ci}, {fin}, {w} -> {co}, {fout}
  %up = spconv.inverse_conv {self.geom("inverse")} %c, %oc, %of, %wi
      : {ci}, {co}, {fout}, {wi} -> {fin}
  return %oc, %of, %up : {co}, {fout}, {fin}
}}
"""
        if self.op == "realign":
            # Source sites given in another order: the features are
            # realigned onto the forward rulebook's outputs.
            co = self.coords_type(self.out_grid("regular"))
            wi = self.weight_type(self.cin, self.cout)
            return f"""func.func @f(%c: {ci}, %src: {co}, %x: {fin}, %wi: {wi}) -> {fout} {{
  %up = spconv.inverse_conv {self.geom("inverse")} %c, %src, %x, %wi
      : {ci}, {co}, {fin}, {wi} -> {fout}
  return %up : {fout}
}}
"""
        if self.op == "pool":
            co = self.coords_type(self.out_grid("regular"))
            return f"""func.func @f(%c: {ci}, %x: {fin}) -> ({co}, {fin}) {{
  %oc, %of = spconv.pool {self.mode} {self.geom("regular")} %c, %x
      : {ci}, {fin} -> {co}, {fin}
  return %oc, %of : {co}, {fin}
}}
"""
        if self.op in ("unfold", "fold"):
            n, c = self.batch, self.cin
            volume = int(np.prod(self.kernel))
            blocks = int(np.prod(self.out_grid("regular")))
            dense = "tensor<%dx%dx%sx%s>" % (n, c, "x".join(map(str, self.grid)), self.dtype)
            cols = "tensor<%dx%dx%dx%s>" % (n, c * volume, blocks, self.dtype)
            src, dst = (dense, cols) if self.op == "unfold" else (cols, dense)
            return f"""func.func @f(%x: {src}) -> {dst} {{
  %y = spconv.{self.op} {self.geom("regular")} %x : {src} -> {dst}
  return %y : {dst}
}}
"""
        if self.op == "segment_max":
            b, c, p, m = self.batch, self.cin, self.sites, self.cout
            data = "tensor<%dx%dx%dx%s>" % (b, c, p, self.dtype)
            index = "tensor<%dx%dxi32>" % (b, p)
            values = "tensor<%dx%dx%dx%s>" % (b, c, m, self.dtype)
            positions = "tensor<%dx%dx%dxi32>" % (b, c, m)
            return f"""func.func @f(%d: {data}, %i: {index}) -> ({values}, {positions}) {{
  %v, %p = spconv.segment_max %d, %i : {data}, {index} -> {values}, {positions}
  return %v, %p : {values}, {positions}
}}
"""
        raise ValueError(self.op)

    def bf16_mlir(self):
        """A bf16 conv behind f32 arguments and results (.npy has no bf16):
        the function rounds its inputs to bf16 and widens its output."""
        assert self.op in ("subm", "regular", "transposed") and self.bias
        ci = self.coords_type(self.grid)
        co = self.coords_type(self.out_grid(self.op))
        volume = int(np.prod(self.kernel))
        shapes = {"x": "?x%d" % self.cin, "w": "%dx%dx%d" % (volume, self.cin, self.cout),
                  "b": "%d" % self.cout, "o": "?x%d" % self.cout}
        t = {k: ("tensor<%sxf32>" % v, "tensor<%sxbf16>" % v) for k, v in shapes.items()}
        narrow = "".join("  %%%sh = arith.truncf %%%s : %s to %s\n" % (k, k, *t[k])
                         for k in ("x", "w", "b"))
        return f"""func.func @f(%c: {ci}, %x: {t["x"][0]}, %w: {t["w"][0]}, %b: {t["b"][0]}) -> ({co}, {t["o"][0]}) {{
{narrow}  %oc, %of = spconv.conv {self.geom(self.op)} %c, %xh, %wh bias %bh
      : {ci}, {t["x"][1]}, {t["w"][1]}, {t["b"][1]} -> {co}, {t["o"][1]}
  %o = arith.extf %of : {t["o"][1]} to {t["o"][0]}
  return %oc, %o : {co}, {t["o"][0]}
}}
"""

    # -- data ---------------------------------------------------------------
    def npdtype(self):
        return np.float16 if self.dtype == "f16" else np.float32

    def random_sites(self, rng, grid, count):
        if self.fixed_sites is not None:
            return np.array(self.fixed_sites, dtype=np.int32)
        volume = self.batch * int(np.prod(grid))
        count = min(count, volume)
        keys = rng.choice(volume, size=count, replace=False)
        coords = np.zeros((count, len(grid) + 1), dtype=np.int32)
        rest = keys.copy()
        for d in range(len(grid) - 1, -1, -1):
            coords[:, d + 1] = rest % grid[d]
            rest //= grid[d]
        coords[:, 0] = rest
        return coords

    def tolerance(self):
        return ["--rtol", "2e-2", "--atol", "2e-2"] if self.dtype in ("f16", "bf16") \
            else ["--rtol", "1e-4", "--atol", "1e-4"]


class Runner:
    def __init__(self, bindir, work, subm_search, target="cpu", run_args=(),
                 tf32=False):
        self.bindir = bindir
        self.work = work
        self.subm_search = subm_search
        self.target = target
        self.run_args = list(run_args)
        self.tf32 = tf32
        self.rounding = None

    def spconv_run(self, path):
        """The spconv-run command line of a case, without its inputs."""
        args = [self.tool("spconv-run"), path("f.mlir"), "--entry", "f",
                "--output-dir", path("out"), "--target", self.target]
        if self.target == "cpu":
            args += ["--subm-search", self.subm_search]
        return args + self.run_args

    def save(self, path, array):
        """Writes an input; with --tf32-inputs f32 arrays are first rounded
        to TF32 (nearest, ties away from zero, as the kernels round them),
        so a TF32 run must match the reference at f32 tolerance."""
        if self.rounding and array.dtype == np.float32:
            array = self.rounding(array)
        np.save(path, array)

    def tool(self, name):
        return os.path.join(self.bindir, name)

    def run(self, args, case):
        result = subprocess.run(args, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError("%s: %s failed (%d):\n%s%s" % (
                case.name, os.path.basename(args[0]), result.returncode,
                result.stdout, result.stderr))
        return result

    def write_case(self, case):
        """The case's directory, holding its function as f.mlir."""
        d = os.path.join(self.work, case.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f.mlir"), "w") as f:
            f.write(case.mlir())
        return d

    def compile_cuda(self, case, options):
        """Lowers the case's function through spconv-to-cuda."""
        d = self.write_case(case)
        self.run([self.tool("spconv-opt"), os.path.join(d, "f.mlir"),
                  "--spconv-to-cuda=" + options, "-o", os.path.join(d, "f.cuda.mlir")], case)

    def compare(self, case, actual, expected, exact=False):
        args = [self.tool("spconv-npy-compare"), actual, expected]
        if not exact:
            args += case.tolerance()
        self.run(args, case)

    def check(self, case):
        d = self.write_case(case)
        path = lambda n: os.path.join(d, n)
        # bf16 cases pass bf16 values as f32 (the reference computes on them;
        # they are TF32 values too).
        self.rounding = round_to_bf16 if case.dtype == "bf16" else \
            round_to_tf32 if self.tf32 else None
        rng = np.random.default_rng(case.seed)
        dt = case.npdtype()
        if case.op in ("unfold", "fold", "segment_max"):
            return self.check_dense(case, rng, path, dt)
        coords = case.random_sites(rng, case.grid, case.sites)
        self.save(path("c.npy"), coords)
        self.save(path("x.npy"), rng.standard_normal((len(coords), case.cin)).astype(dt))
        volume = int(np.prod(case.kernel))
        self.save(path("w.npy"), rng.standard_normal((volume, case.cin, case.cout)).astype(dt))
        self.save(path("b.npy"), rng.standard_normal(case.cout).astype(dt))
        self.save(path("wi.npy"), rng.standard_normal((volume, case.cout, case.cin)).astype(dt))
        run = self.spconv_run(path)
        ref = [self.tool("spconv-ref")]
        grid = ["--grid", csv(case.grid)]

        if case.op in ("subm", "regular", "transposed"):
            inputs = ["c", "x", "w"] + (["b"] if case.bias else [])
            self.run(run + sum((["--input", path(n + ".npy")] for n in inputs), []), case)
            self.run(ref + ["conv", "--kind", case.op] + case.window_args(case.op) + grid +
                     ["--coords", path("c.npy"), "--features", path("x.npy"),
                      "--weight", path("w.npy"), "--out-dir", path("ref")] +
                     (["--bias", path("b.npy")] if case.bias else []), case)
            self.compare(case, path("out/out0.npy"), path("ref/out0.npy"), exact=True)
            self.compare(case, path("out/out1.npy"), path("ref/out1.npy"))
        elif case.op == "inverse":
            self.run(run + ["--input", path("c.npy"), "--input", path("x.npy"),
                            "--input", path("w.npy"), "--input", path("wi.npy")], case)
            self.run(ref + ["conv", "--kind", "regular"] + case.window_args("regular") + grid +
                     ["--coords", path("c.npy"), "--features", path("x.npy"),
                      "--weight", path("w.npy"), "--out-dir", path("down")], case)
            self.compare(case, path("out/out0.npy"), path("down/out0.npy"), exact=True)
            self.compare(case, path("out/out1.npy"), path("down/out1.npy"))
            # The inverse reads the compiled forward features, so only the
            # inverse itself is measured against the reference here.
            # (As the kernels see them: rounded where the inputs are.)
            self.save(path("up_in.npy"), np.load(path("out/out1.npy")))
            self.run(ref + ["inverse"] + case.window_args("regular") + grid +
                     ["--coords", path("c.npy"), "--source-coords", path("out/out0.npy"),
                      "--features", path("up_in.npy"), "--weight", path("wi.npy"),
                      "--out-dir", path("up")], case)
            self.compare(case, path("out/out2.npy"), path("up/out0.npy"))
        elif case.op == "realign":
            self.run(ref + ["conv", "--kind", "regular"] + case.window_args("regular") + grid +
                     ["--coords", path("c.npy"), "--features", path("x.npy"),
                      "--weight", path("w.npy"), "--out-dir", path("down")], case)
            coarse = np.load(path("down/out0.npy"))
            order = rng.permutation(len(coarse))
            features = rng.standard_normal((len(coarse), case.cin)).astype(dt)
            # With `mode == "missing"`, a third of the forward outputs are left
            # out of the sources: they must count as zero features, which is
            # what the reference computes when given them with zero rows.
            kept = order[: len(order) - len(order) // 3] if case.mode == "missing" else order
            self.save(path("src.npy"), coarse[kept])
            self.save(path("xs.npy"), features[kept])
            full = np.zeros_like(features)
            full[kept] = features[kept]
            self.save(path("src_full.npy"), coarse)
            self.save(path("xs_full.npy"), full)
            self.save(path("wr.npy"), rng.standard_normal((volume, case.cin, case.cout)).astype(dt))
            self.run(run + ["--input", path("c.npy"), "--input", path("src.npy"),
                            "--input", path("xs.npy"), "--input", path("wr.npy")], case)
            self.run(ref + ["inverse"] + case.window_args("regular") + grid +
                     ["--coords", path("c.npy"), "--source-coords", path("src_full.npy"),
                      "--features", path("xs_full.npy"), "--weight", path("wr.npy"),
                      "--out-dir", path("ref")], case)
            self.compare(case, path("out/out0.npy"), path("ref/out0.npy"))
        elif case.op == "pool":
            self.run(run + ["--input", path("c.npy"), "--input", path("x.npy")], case)
            self.run(ref + ["pool", "--mode", case.mode] + case.window_args("regular") + grid +
                     ["--coords", path("c.npy"), "--features", path("x.npy"),
                      "--out-dir", path("ref")], case)
            self.compare(case, path("out/out0.npy"), path("ref/out0.npy"), exact=True)
            self.compare(case, path("out/out1.npy"), path("ref/out1.npy"))


def check_dense(self, case, rng, path, dt):
    run = self.spconv_run(path)
    ref = [self.tool("spconv-ref")]
    window = case.window_args("regular")
    volume = int(np.prod(case.kernel))
    if case.op == "unfold":
        self.save(path("x.npy"), rng.standard_normal([case.batch, case.cin] + case.grid).astype(dt))
        self.run(run + ["--input", path("x.npy")], case)
        self.run(ref + ["unfold"] + window + ["--input", path("x.npy"), "--out-dir", path("ref")], case)
    elif case.op == "fold":
        blocks = int(np.prod(case.out_grid("regular")))
        self.save(path("x.npy"), rng.standard_normal((case.batch, case.cin * volume, blocks)).astype(dt))
        self.run(run + ["--input", path("x.npy")], case)
        self.run(ref + ["fold"] + window + ["--output-size", csv(case.grid), "--input", path("x.npy"),
                        "--out-dir", path("ref")], case)
    else:
        data = rng.standard_normal((case.batch, case.cin, case.sites)).astype(dt)
        # Ties and NaN: equal values in one segment, a NaN in another.
        if case.sites > 4:
            data[:, :, 1] = data[:, :, 0]
            data[0, 0, 3] = np.nan
        # Fewer points than segments leaves some segments empty.
        index = rng.integers(0, case.cout, size=(case.batch, case.sites)).astype(np.int32)
        self.save(path("d.npy"), data)
        self.save(path("i.npy"), index)
        self.run(run + ["--input", path("d.npy"), "--input", path("i.npy")], case)
        self.run(ref + ["segment-max", "--segments", str(case.cout), "--data", path("d.npy"),
                        "--index", path("i.npy"), "--out-dir", path("ref")], case)
        self.compare(case, path("out/out1.npy"), path("ref/out1.npy"), exact=True)
    self.compare(case, path("out/out0.npy"), path("ref/out0.npy"))


Runner.check_dense = check_dense


def cases():
    c = []
    # Submanifold: 1-D to 4-D, kernels 1/2/3/5, non-cubic, dilation, batch.
    c.append(Case("subm_1d_k5", "subm", None, [5], grid=[30], cin=2, cout=3))
    c.append(Case("subm_2d_k3_d2", "subm", None, [3, 3], dilation=[2, 2], grid=[12, 12], bias=True))
    c.append(Case("subm_3d_k3", "subm", None, [3, 3, 3], grid=[8, 8, 8], sites=120, cin=4, cout=7))
    c.append(Case("subm_3d_k313_b2", "subm", None, [3, 1, 3], grid=[6, 7, 8], batch=2, sites=100))
    c.append(Case("subm_3d_k2", "subm", None, [2, 2, 2], grid=[6, 6, 6], sites=80))
    c.append(Case("subm_3d_k1", "subm", None, [1, 1, 1], grid=[6, 6, 6], bias=True))
    # Pointwise convs are matmuls in groups of 8 rows, then the rest: 45
    # rows (5 groups and 5 left over, 19 columns as 16 + 3), and 5 rows
    # (none in a group).
    # 48 output channels: chunks of whole registers (3 x 16 lanes on
    # AVX-512), not two ragged vector<24xf32>.
    c.append(Case("subm_3d_c48", "subm", None, [3, 3, 3], grid=[8, 8, 8], sites=150, cin=6, cout=48, bias=True))
    c.append(Case("subm_3d_k1_tail", "subm", None, [1, 1, 1], grid=[6, 6, 6], sites=45, cin=7, cout=19, bias=True))
    c.append(Case("subm_3d_k1_few", "subm", None, [1, 1, 1], grid=[6, 6, 6], sites=5, cin=9, cout=24))
    c.append(Case("subm_4d_k3_d3", "subm", None, [3, 3, 3, 3], dilation=[1, 3, 1, 2], grid=[5, 6, 5, 6], sites=150))
    c.append(Case("subm_3d_f16", "subm", None, [3, 3, 3], grid=[7, 7, 7], sites=100, dtype="f16", bias=True))
    # Tensor-core tiles: bf16 (as tf32 fragments); f16 with several
    # fragments per warp, a partial channel slice and two column tiles.
    c.append(Case("subm_3d_bf16", "subm", None, [3, 3, 3], grid=[7, 7, 7], sites=100, dtype="bf16", bias=True))
    c.append(Case("regular_3d_bf16", "regular", None, [3, 3, 3], stride=[2, 2, 2], padding=[1, 1, 1], grid=[8, 8, 8], sites=100, dtype="bf16", bias=True))
    c.append(Case("transposed_2d_bf16", "transposed", None, [3, 3], stride=[2, 2], grid=[6, 6], sites=20, cin=9, cout=17, dtype="bf16", bias=True))
    c.append(Case("subm_3d_f16_wide", "subm", None, [3, 3, 3], grid=[9, 9, 9], sites=300, cin=40, cout=70, dtype="f16", bias=True))
    # f16 whose rows are whole 16-byte chunks: the GPU's cp.async pipeline,
    # two stages at 64 output channels (two slices, the second partial;
    # partial columns and rows), three at 16 (a strided conv, offsets some
    # tiles do not visit). On the CPU they are subm_3d_f16_wide and
    # regular_3d_bf16 again.
    c.append(Case("subm_3d_f16_pipelined", "subm", None, [3, 3, 3], grid=[9, 9, 9], sites=300, cin=48, cout=40, dtype="f16", bias=True, gpu_only=True))
    c.append(Case("regular_3d_f16_pipelined", "regular", None, [3, 3, 3], stride=[2, 2, 2], padding=[1, 1, 1], grid=[10, 10, 10], sites=200, cin=16, cout=16, dtype="f16", gpu_only=True))
    # 64 output channels: the GPU's tallest tensor-core tiles (4 x 2
    # fragments per warp, epilogue in four passes), partial in rows.
    c.append(Case("subm_3d_bf16_wide", "subm", None, [3, 3, 3], grid=[9, 9, 9], sites=280, cin=24, cout=64, dtype="bf16", bias=True))
    c.append(Case("subm_3d_wide", "subm", None, [3, 3, 3], grid=[9, 9, 9], sites=270, cin=33, cout=64, bias=True))
    # A grid too large for the sorted builder's padded keys (2 x the padded
    # volume overflows int64): it keeps the grid's keys and checks every
    # neighbour against the site's coordinates. Sites at the ends of rows,
    # whose grid keys are consecutive across the row boundary.
    big = 2147483647
    c.append(Case("subm_2d_unpadded_keys", "subm", None, [3, 3], grid=[big, big], fixed_sites=[
        [0, 5, big - 1], [0, 6, 0], [0, 5, big - 2], [0, 6, 1], [0, 4, big - 1], [0, 7, 0],
        [1, 0, 0], [0, big - 1, big - 1], [1, 0, 1], [0, big - 1, big - 2]], bias=True))
    c.append(Case("subm_3d_empty", "subm", None, [3, 3, 3], grid=[5, 5, 5], sites=0))
    c.append(Case("subm_3d_dynamic_channels", "subm", None, [3, 3, 3], grid=[6, 6, 6], sites=80, bias=True, dynamic_channels=True))
    c.append(Case("regular_2d_dynamic_channels_f16", "regular", None, [3, 3], stride=[2, 2], grid=[9, 9], sites=40, dtype="f16", dynamic_channels=True))
    # Regular: strides 1/2/3, padding, dilation with stride > 1.
    c.append(Case("regular_1d_k3_s2_p1", "regular", None, [3], stride=[2], padding=[1], grid=[25], cin=1, cout=2))
    c.append(Case("regular_2d_k3_s3_d2", "regular", None, [3, 3], stride=[3, 3], dilation=[2, 2], padding=[1, 2], grid=[15, 14], sites=60))
    c.append(Case("regular_3d_k3_s2_p1", "regular", None, [3, 3, 3], stride=[2, 2, 2], padding=[1, 1, 1], grid=[9, 9, 9], sites=150, bias=True))
    c.append(Case("regular_3d_k2_s2_b3", "regular", None, [2, 2, 2], stride=[2, 2, 2], grid=[8, 8, 8], batch=3, sites=150))
    c.append(Case("regular_3d_k311_s211", "regular", None, [3, 1, 1], stride=[2, 1, 1], grid=[7, 6, 6], sites=90, cin=6, cout=9))
    c.append(Case("regular_3d_k5_s1_p2", "regular", None, [5, 5, 5], padding=[2, 2, 2], grid=[6, 6, 6], sites=40))
    # Dilations sharing a factor with the stride (gcd 2 and 3; the pairing
    # offsets repeat every s / gcd), and a stride whose period is 3.
    c.append(Case("regular_3d_k3_gcd", "regular", None, [3, 3, 3], stride=[2, 4, 3], dilation=[2, 2, 3], padding=[1, 2, 0], grid=[11, 13, 12], sites=120))
    c.append(Case("regular_2d_k4_s4_d6", "regular", None, [4, 4], stride=[4, 6], dilation=[6, 4], padding=[3, 1], grid=[30, 26], sites=80))
    c.append(Case("regular_4d_k2_s2_d3", "regular", None, [2, 2, 2, 2], stride=[2, 1, 2, 1], dilation=[3, 1, 1, 2], grid=[7, 5, 6, 5], sites=120))
    c.append(Case("regular_3d_f16", "regular", None, [3, 3, 3], stride=[2, 2, 2], padding=[1, 1, 1], grid=[8, 8, 8], sites=100, dtype="f16"))
    c.append(Case("regular_3d_empty", "regular", None, [3, 3, 3], stride=[2, 2, 2], grid=[8, 8, 8], sites=0))
    # Transposed: output padding, dilation.
    c.append(Case("transposed_1d_k3_s2_op1", "transposed", None, [3], stride=[2], output_padding=[1], grid=[10]))
    c.append(Case("transposed_2d_k2_s2", "transposed", None, [2, 2], stride=[2, 2], grid=[6, 7], sites=25, bias=True))
    c.append(Case("transposed_3d_k3_s2_p1_d2", "transposed", None, [3, 3, 3], stride=[2, 2, 2], padding=[1, 1, 1], dilation=[2, 1, 2], grid=[5, 5, 5], sites=50))
    c.append(Case("transposed_3d_k3_s3_b2_f16", "transposed", None, [3, 3, 3], stride=[3, 3, 3], grid=[4, 4, 4], batch=2, sites=40, dtype="f16"))
    # Inverse: reusing the forward rulebook, and realigning shuffled sources.
    c.append(Case("inverse_3d_k2_s2", "inverse", None, [2, 2, 2], stride=[2, 2, 2], grid=[8, 8, 8], sites=120))
    c.append(Case("inverse_3d_k3_s2_p1_b2", "inverse", None, [3, 3, 3], stride=[2, 2, 2], padding=[1, 1, 1], grid=[9, 8, 7], batch=2, sites=120))
    c.append(Case("inverse_2d_k3_s3_d2_f16", "inverse", None, [3, 3], stride=[3, 3], dilation=[2, 2], grid=[14, 14], sites=60, dtype="f16"))
    c.append(Case("inverse_realigned", "realign", None, [2, 2, 2], stride=[2, 2, 2], grid=[8, 8, 8], sites=100))
    c.append(Case("inverse_realigned_missing", "realign", None, [3, 3, 3], stride=[2, 2, 2], padding=[1, 1, 1], grid=[8, 8, 8], sites=100, mode="missing"))
    # Pooling.
    c.append(Case("pool_max_3d_k2_s2", "pool", None, [2, 2, 2], stride=[2, 2, 2], grid=[8, 8, 8], sites=120, mode="max"))
    c.append(Case("pool_avg_3d_k3_s2_p1", "pool", None, [3, 3, 3], stride=[2, 2, 2], padding=[1, 1, 1], grid=[8, 8, 8], sites=120, mode="avg"))
    c.append(Case("pool_max_2d_f16", "pool", None, [3, 3], stride=[2, 2], dilation=[2, 1], grid=[11, 11], sites=50, mode="max", dtype="f16"))
    c.append(Case("pool_avg_1d_b2", "pool", None, [4], stride=[3], grid=[20], batch=2, sites=20, mode="avg"))
    # Dense unfold / fold (N-d im2col / col2im) and segment max.
    c.append(Case("unfold_2d_k3_p1", "unfold", None, [3, 3], padding=[1, 1], grid=[6, 7], batch=2, cin=3))
    c.append(Case("unfold_3d_k2_s2_d2", "unfold", None, [2, 2, 2], stride=[2, 2, 2], dilation=[2, 2, 2], grid=[5, 6, 7], cin=2))
    c.append(Case("unfold_1d_k5_f16", "unfold", None, [5], stride=[3], padding=[2], grid=[17], cin=3, dtype="f16"))
    c.append(Case("fold_2d_k3_p1", "fold", None, [3, 3], padding=[1, 1], grid=[6, 7], batch=2, cin=3))
    c.append(Case("fold_3d_k3_s2_d2", "fold", None, [3, 3, 3], stride=[2, 2, 2], dilation=[2, 1, 2], padding=[1, 0, 2], grid=[7, 6, 8], cin=2))
    c.append(Case("fold_4d_k2", "fold", None, [2, 2, 2, 2], grid=[3, 4, 3, 4], cin=2))
    c.append(Case("segment_max", "segment_max", None, [1], batch=2, cin=5, sites=40, cout=12))
    c.append(Case("segment_max_sparse_f16", "segment_max", None, [1], batch=3, cin=3, sites=6, cout=20, dtype="f16"))
    return c


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--shard", default="0/1")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--subm-search", default="sorted", choices=["sorted", "hash"])
    parser.add_argument("--only", help="run only the cases of this op (e.g. subm)")
    parser.add_argument("--case", action="append", default=[],
                        help="run only the case of this name (repeatable)")
    parser.add_argument("--target", default="cpu", choices=["cpu", "gpu-emulator", "cuda"])
    parser.add_argument("--run-arg", action="append", default=[],
                        help="an extra spconv-run option (repeatable)")
    parser.add_argument("--tf32-inputs", action="store_true",
                        help="round f32 inputs to TF32 on both sides (for "
                             "--run-arg=--gpu-matmul=tf32)")
    parser.add_argument("--compile-cuda", metavar="OPTIONS",
                        help="only compile each case with spconv-to-cuda=OPTIONS "
                             "(e.g. 'format=bin chip=sm_90')")
    args = parser.parse_args()
    index, count = (int(v) for v in args.shard.split("/"))
    selected = [c for i, c in enumerate(cases())
                if i % count == index and (not args.only or c.op == args.only)
                and (not args.case or c.name in args.case)
                and (args.target != "cpu" or args.compile_cuda is not None
                     or not c.gpu_only)]
    unknown = set(args.case) - {c.name for c in cases()}
    if unknown:
        print("unknown case(s): " + ", ".join(sorted(unknown)), file=sys.stderr)
        return 2
    # A named case that the target leaves out would pass as "0 of 0".
    left_out = sorted(c.name for c in cases() if c.name in args.case and c.gpu_only
                      and args.target == "cpu" and args.compile_cuda is None)
    if left_out:
        print("GPU-only case(s) named with --target cpu: " + ", ".join(left_out),
              file=sys.stderr)
        return 2
    if args.list:
        for c in selected:
            print(c.name)
        return 0
    runner = Runner(args.bin, args.work, args.subm_search, args.target, args.run_arg,
                    args.tf32_inputs)
    failures = 0
    for case in selected:
        try:
            if args.compile_cuda is not None:
                runner.compile_cuda(case, args.compile_cuda)
            else:
                runner.check(case)
            print("PASS", case.name)
        except RuntimeError as error:
            failures += 1
            print("FAIL", error)
    print("%d of %d cases passed" % (len(selected) - failures, len(selected)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
