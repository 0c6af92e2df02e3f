#!/usr/bin/env python3
"""Conv gradients on 1-, 2- and 4-D grids against PyTorch autograd.

gradients.py covers 3-D grids; this covers the other ranks with one oracle
for every rank: the dense conv written as a sum over kernel offsets of
strided slices of the padded dense input times that offset's weight
(DESIGN.md's definition), evaluated and differentiated by torch, sampled at
the active sites. Per rank: a subm conv (3 per dimension) and a regular
conv (kernel 3, stride 2, padding 1), data and weight gradients, on the CPU
and on the GPU emulator (race check on); f32, and f64 on 2-D.

usage: gradients_nd.py --bin DIR --work DIR
"""
import itertools
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gradients  # noqa: E402
from gradients import Case, sort_by_key, parse_args  # noqa: E402

# The CPU and the emulator's default conv form (gradients.test runs both
# forms in 3-D).
gradients.TARGETS = gradients.TARGETS[:2]

GRIDS = {1: (23,), 2: (9, 8), 4: (5, 4, 6, 3)}
ELEMENT = {np.float32: "f32", np.float64: "f64"}


def random_sites(rng, grid, n):
    dims = (2,) + tuple(grid)
    keys = np.sort(rng.choice(int(np.prod(dims)), size=n, replace=False))
    return np.stack(np.unravel_index(keys, dims), axis=1).astype(np.int32)


def dense_conv(x, w, k, s, p, out_grid):
    """out[b, :, o] = sum over offsets j of x[b, :, o * s - p + j] @ w[j]."""
    rank = len(out_grid)
    xp = torch.nn.functional.pad(x, [p] * (2 * rank))
    out = 0
    for j, offset in enumerate(itertools.product(range(k), repeat=rank)):
        index = (slice(None), slice(None)) + tuple(
            slice(o, o + s * (n - 1) + 1, s) for o, n in zip(offset, out_grid))
        out = out + torch.einsum("bc...,cd->bd...", xp[index], w[j])
    return out


def sample(t, sites):
    return t[(sites[:, 0], slice(None)) + tuple(sites[:, 1 + d] for d in range(sites.shape[1] - 1))]


def regular_outputs(sites, grid, k, s, p):
    out_grid = tuple((g + 2 * p - k) // s + 1 for g in grid)
    found = set()
    for b, *x in sites.tolist():
        for j in itertools.product(range(k), repeat=len(grid)):
            num = [xi + p - ji for xi, ji in zip(x, j)]
            if any(v % s for v in num):
                continue
            o = [v // s for v in num]
            if all(0 <= oi < g for oi, g in zip(o, out_grid)):
                found.add((b, *o))
    sites_out = np.array(sorted(found), np.int32).reshape(-1, len(grid) + 1)
    return sort_by_key(sites_out, out_grid), out_grid


def mlir(name, rank, grid, out_grid, geometry, cin, cout, volume, t):
    g = "tensor<?x%dxi32, #spconv.grid<[%s]>>" % (rank + 1, ", ".join(map(str, grid)))
    o = "tensor<?x%dxi32, #spconv.grid<[%s]>>" % (rank + 1, ", ".join(map(str, out_grid)))
    rb = "!spconv.rulebook<#spconv.geom%s, #spconv.grid<[%s]>>" % (
        geometry, ", ".join(map(str, grid)))
    x, y = "tensor<?x%dx%s>" % (cin, t), "tensor<?x%dx%s>" % (cout, t)
    w = "tensor<%dx%dx%dx%s>" % (volume, cin, cout, t)
    wt = "tensor<%dx%dx%dx%s>" % (volume, cout, cin, t)
    return f"""
func.func @{name}(%c: {g}, %x: {x}, %w: {w}, %gout: {y}) -> ({x}, {w}) {{
  %rb, %oc = spconv.build_rulebook %c : {g} -> {rb}, {o}
  %init = tensor.empty() : {wt}
  %wt = linalg.transpose ins(%w : {w}) outs(%init : {wt}) permutation = [0, 2, 1]
  %dx = spconv.rulebook_conv inverse %rb, %gout, %wt : {rb}, {y}, {wt} -> {x}
  %dw = spconv.rulebook_weight_grad %rb, %x, %gout : {rb}, {x}, {y} -> {w}
  return %dx, %dw : {x}, {w}
}}
"""


def main():
    args = parse_args(with_input=False)
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(37)
    cases, text = [], ""
    for rank, grid in GRIDS.items():
        for kind in ("subm", "regular"):
            dtypes = [np.float32] + ([np.float64] if rank == 2 else [])
            for dtype in dtypes:
                name = "%s_%dd_%s" % (kind, rank, ELEMENT[dtype])
                k, s, pad = 3, (1 if kind == "subm" else 2), 1
                kernel = ", ".join(["3"] * rank)
                if kind == "subm":
                    geometry = "<subm, kernel = [%s]>" % kernel
                else:
                    geometry = "<regular, kernel = [%s], stride = [%s], padding = [%s]>" % (
                        kernel, ", ".join(["2"] * rank), ", ".join(["1"] * rank))
                sites = random_sites(rng, grid, min(60, int(np.prod(grid))))
                if kind == "subm":
                    out_sites, out_grid = sites, grid
                else:
                    out_sites, out_grid = regular_outputs(sites, grid, k, s, pad)
                cin, cout, volume = 3, 5, 3 ** rank
                text += mlir(name, rank, grid, out_grid, geometry, cin, cout, volume,
                             ELEMENT[dtype])
                cases.append((name, grid, out_grid, sites, out_sites, k, s, pad, cin, cout,
                              volume, dtype))
    model = os.path.join(args.work, "gradients-nd.mlir")
    with open(model, "w") as f:
        f.write(text)
    args.input = model
    case = Case(args)
    for name, grid, out_grid, sites, out_sites, k, s, pad, cin, cout, volume, dtype in cases:
        x = rng.normal(size=(len(sites), cin)).astype(dtype)
        w = rng.normal(size=(volume, cin, cout)).astype(dtype)
        gout = rng.normal(size=(len(out_sites), cout)).astype(dtype)
        xd = torch.zeros((2, cin) + tuple(grid), dtype=torch.from_numpy(x).dtype)
        xd[(sites[:, 0], slice(None)) + tuple(sites[:, 1 + d] for d in range(len(grid)))] = \
            torch.from_numpy(x)
        xd.requires_grad_()
        wt = torch.from_numpy(w).requires_grad_()
        y = dense_conv(xd, wt, k, s, pad, out_grid)
        (sample(y, out_sites) * torch.from_numpy(gout)).sum().backward()
        expected = [sample(xd.grad, sites).numpy(), wt.grad.numpy()]
        case.check(name, [sites, x, w, gout], expected, 1e-5 if dtype == np.float32 else 1e-12)
    if case.failures:
        sys.exit("%d gradient checks failed" % case.failures)
    print("all gradients match on 1-, 2- and 4-D grids")


if __name__ == "__main__":
    main()
