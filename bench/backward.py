#!/usr/bin/env python3
# ===- backward.py - Backward against forward, per layer --------------=== #
#
# Part of the spconv-mlir project.
#
# ===------------------------------------------------------------------=== #
"""Times the gradients of the benchmark layers against their forward conv
(issue 17): per layer, the forward conv, the data gradient (the rulebook
read backwards with the weights transposed) and the weight gradient
(spconv.rulebook_weight_grad), each from spconv-run --profile on the same
rulebook, on gen_workload.py's LiDAR scan. With spconv 2.x and torch
importable (scripts/bench-install.sh's Python), spconv's own forward and
backward of the same layer (SubMConv3d / SparseConv3d, autograd) run beside
it, and both weight gradients are compared first.

usage: PYTHON bench/backward.py [--bin build/bin] [--sites N] [--threads T]
           [--repeat R] [--layers KIND:CIN:COUT,...]

--layers replaces the default layers with stride-1 ones of the given kinds
(subm or regular) and channels, e.g. subm:128:128,subm:256:256.
Prints a Markdown table.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GRID = [41, 1600, 1408]

# (name, kind, cin, cout, stride, padding)
LAYERS = [("subm 16->16", "subm", 16, 16, 1, 1),
          ("subm 32->32", "subm", 32, 32, 1, 1),
          ("subm 64->64", "subm", 64, 64, 1, 1),
          ("regular 32->64 /2", "regular", 32, 64, 2, 1)]


def geometry(kind, stride, padding):
    if kind == "subm":
        return "<subm, kernel = [3, 3, 3]>"
    return "<regular, kernel = [3, 3, 3], stride = [%d, %d, %d], padding = [%d, %d, %d]>" % (
        (stride,) * 3 + (padding,) * 3)


def layer_mlir(kind, cin, cout, stride, padding):
    grid = ", ".join(map(str, GRID))
    out_grid = GRID if kind == "subm" else [(g + 2 * padding - 3) // stride + 1 for g in GRID]
    g = "tensor<?x4xi32, #spconv.grid<[%s]>>" % grid
    o = "tensor<?x4xi32, #spconv.grid<[%s]>>" % ", ".join(map(str, out_grid))
    rb = "!spconv.rulebook<#spconv.geom%s, #spconv.grid<[%s]>>" % (
        geometry(kind, stride, padding), grid)
    x, y = "tensor<?x%dxf32>" % cin, "tensor<?x%dxf32>" % cout
    w, wt = "tensor<27x%dx%dxf32>" % (cin, cout), "tensor<27x%dx%dxf32>" % (cout, cin)
    return f"""
func.func @forward(%c: {g}, %x: {x}, %w: {w}) -> ({o}, {y}) {{
  %rb, %oc = spconv.build_rulebook %c : {g} -> {rb}, {o}
  %y = spconv.rulebook_conv %rb, %x, %w : {rb}, {x}, {w} -> {y}
  return %oc, %y : {o}, {y}
}}
func.func @backward(%c: {g}, %x: {x}, %w: {w}, %dy: {y}) -> ({x}, {w}) {{
  %rb, %oc = spconv.build_rulebook %c : {g} -> {rb}, {o}
  %init = tensor.empty() : {wt}
  %wt = linalg.transpose ins(%w : {w}) outs(%init : {wt}) permutation = [0, 2, 1]
  %dx = spconv.rulebook_conv inverse %rb, %dy, %wt : {rb}, {y}, {wt} -> {x}
  %dw = spconv.rulebook_weight_grad %rb, %x, %dy : {rb}, {x}, {y} -> {w}
  return %dx, %dw : {x}, {w}
}}
"""


def profile(args, model, entry, inputs, out):
    """Median ms per profiled operation over --repeat processes."""
    runs = []
    for _ in range(args.repeat):
        result = subprocess.run(
            [os.path.join(args.bin, "spconv-run"), model, "--entry", entry, "--profile",
             "--output-dir", out] + sum([["--input", i] for i in inputs], []),
            capture_output=True, text=True,
            env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
        if result.returncode != 0:
            sys.exit(result.stderr)
        times = {}
        for line in (result.stdout + result.stderr).splitlines():
            m = re.match(r"\s*\d+\s+([\d.]+)\s+\d+\s+(\w+)( inverse)?", line)
            if m:
                times[m.group(2) + (m.group(3) or "")] = float(m.group(1))
        runs.append(times)
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def spconv_side(args, kind, cin, cout, stride, padding, coords, x, dy_rows):
    """spconv 2.x's forward and backward (ms), and its weight gradient in
    our layout, or None without spconv."""
    try:
        import torch
        import spconv.pytorch as sp
    except ImportError:
        return None
    torch.set_num_threads(args.threads)
    if kind == "subm":
        conv = sp.SubMConv3d(cin, cout, 3, bias=False)
    else:
        conv = sp.SparseConv3d(cin, cout, 3, stride=stride, padding=padding, bias=False)
    fwd, bwd = [], []
    dw, reason = None, ""
    for _ in range(args.repeat + 1):
        xt = torch.from_numpy(x).requires_grad_()
        t = sp.SparseConvTensor(xt, torch.from_numpy(coords), GRID, 1)
        start = time.perf_counter()
        out = conv(t)
        fwd.append((time.perf_counter() - start) * 1e3)
        dy = torch.from_numpy(dy_rows(out))
        start = time.perf_counter()
        try:
            out.features.backward(dy)
        except (AssertionError, RuntimeError) as e:
            # spconv 2.3.8's CPU wheel runs its backward through CUDA only.
            bwd = None
            reason = str(e).splitlines()[0] if str(e) else type(e).__name__
            continue
        bwd.append((time.perf_counter() - start) * 1e3)
        dw = conv.weight.grad.numpy().copy()  # Cout x 3 x 3 x 3 x Cin
        conv.weight.grad = None
    if bwd is None:
        return (statistics.median(fwd[1:]), None, reason, None)
    return (statistics.median(fwd[1:]), statistics.median(bwd[1:]), conv, dw)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--sites", type=int, default=100000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--layers", help="KIND:CIN:COUT,... instead of the default layers")
    args = p.parse_args()
    layers = LAYERS
    if args.layers:
        layers = []
        for text in args.layers.split(","):
            kind, cin, cout = text.split(":")
            if kind not in ("subm", "regular"):
                p.error("--layers: kind %r is not subm or regular" % kind)
            layers.append(("%s %s->%s" % (kind, cin, cout), kind, int(cin), int(cout), 1, 1))
    work = tempfile.mkdtemp(prefix="spconv-backward-")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "workloads", "gen_workload.py"),
                    "lidar", os.path.join(work, "scan"), "--sites", str(args.sites)],
                   check=True, capture_output=True)
    coords = np.load(os.path.join(work, "scan_coords.npy"))
    rng = np.random.default_rng(0)
    rows = []
    for name, kind, cin, cout, stride, padding in layers:
        model = os.path.join(work, "layer.mlir")
        with open(model, "w") as f:
            f.write(layer_mlir(kind, cin, cout, stride, padding))
        x = rng.normal(size=(len(coords), cin)).astype(np.float32)
        w = (rng.normal(size=(27, cin, cout)) / np.sqrt(27 * cin)).astype(np.float32)
        paths = {}
        for key, value in [("c", coords), ("x", x), ("w", w)]:
            paths[key] = os.path.join(work, key + ".npy")
            np.save(paths[key], value)
        fwd = profile(args, model, "forward", [paths["c"], paths["x"], paths["w"]],
                      os.path.join(work, "fwd"))
        out_rows = len(np.load(os.path.join(work, "fwd", "out0.npy")))
        dy = rng.normal(size=(out_rows, cout)).astype(np.float32)
        paths["dy"] = os.path.join(work, "dy.npy")
        np.save(paths["dy"], dy)
        bwd = profile(args, model, "backward",
                      [paths["c"], paths["x"], paths["w"], paths["dy"]],
                      os.path.join(work, "bwd"))
        conv_ms, data_ms, weight_ms = (fwd["rulebook_conv"], bwd["rulebook_conv inverse"],
                                       bwd["rulebook_weight_grad"])
        row = [name, "%.1f" % conv_ms, "%.1f" % data_ms, "%.1f" % weight_ms,
               "%.2fx" % ((data_ms + weight_ms) / conv_ms)]
        side = None
        if kind == "subm":  # spconv's regular outputs are unordered: dy is ours
            side = spconv_side(args, kind, cin, cout, stride, padding, coords, x,
                               lambda out: dy)
        if side and side[1] is None:
            row += ["%.1f / fails: %s" % (side[0], side[2]), "-"]
        elif side:
            s_fwd, s_bwd, conv, s_dw = side
            # The same weights for both: compare the weight gradients.
            ours_dw = np.load(os.path.join(work, "bwd", "out1.npy"))
            theirs = s_dw.reshape(cout, 27, cin).transpose(1, 2, 0)
            if not np.allclose(ours_dw, theirs, rtol=1e-3, atol=1e-3 * np.abs(theirs).max()):
                row += ["(weights differ)", "-"]
            else:
                row += ["%.1f / %.1f" % (s_fwd, s_bwd), "%.2fx" % (s_bwd / (data_ms + weight_ms))]
        else:
            row += ["-", "-"]
        rows.append(row)
    print("| layer | forward (ms) | data grad (ms) | weight grad (ms) | backward / forward "
          "| spconv 2.x fwd / bwd (ms) | spconv 2.x bwd / ours |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print("\n%d sites, %d thread(s), medians of %d runs; our rulebook builds are not "
          "counted, spconv's forward includes its rulebook build." % (
              len(coords), args.threads, args.repeat))


if __name__ == "__main__":
    main()
