#!/usr/bin/env python3
"""The gradients of Inputs/gradients.mlir against PyTorch autograd.

Each function takes a conv's inputs and dL/dout and returns (dL/dx, dL/dw).
The oracle is the dense equivalent DESIGN.md names: conv3d (subm, regular)
or conv_transpose3d (transposed, inverse) on a dense grid holding the
sparse features, sampled at the active outputs, with the loss sum(out *
dL/dout); autograd gives the gradients at the active inputs and of the
weights. The active outputs and their order (sorted by key) are computed
here from DESIGN.md's definitions. Every function runs on the CPU and on the
GPU emulator (race check on, both conv forms); f64 also against central
finite differences of the compiled forward conv.

usage: gradients.py --bin DIR --work DIR --input Inputs/gradients.mlir
"""
import argparse
import itertools
import os
import subprocess
import sys

import numpy as np

try:
    import torch
except ImportError:
    # The oracles need torch (their tests REQUIRE it); the helpers that
    # generate_backward.py shares (sites, runs, finite differences) do not.
    torch = None

TARGETS = [("cpu", ["--target", "cpu"]),
           ("gpu-emulator", ["--target", "gpu-emulator", "--gpu-race-check"]),
           ("gpu-emulator-gather", ["--target", "gpu-emulator", "--gpu-race-check",
                                    "--gpu-conv=gather-scatter"])]

GRID = (6, 7, 5)
FINE = (8, 6, 4)


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("%s failed:\n%s%s" % (" ".join(args), result.stdout, result.stderr))


def random_sites(rng, grid, n, batch=2):
    dims = (batch,) + tuple(grid)
    keys = np.sort(rng.choice(int(np.prod(dims)), size=n, replace=False))
    return np.stack(np.unravel_index(keys, dims), axis=1).astype(np.int32)


def sort_by_key(sites, grid):
    dims = (int(sites[:, 0].max()) + 1 if len(sites) else 1,) + tuple(grid)
    keys = np.ravel_multi_index(tuple(sites.T), dims)
    return sites[np.argsort(keys, kind="stable")]


def output_sites(sites, kind, grid, k, s, p, d):
    """The active outputs of a regular or transposed conv (DESIGN.md)."""
    if kind == "transposed":
        out_grid = tuple((i - 1) * s - 2 * p + d * (k - 1) + 1 for i in grid)
    else:
        out_grid = tuple((i + 2 * p - d * (k - 1) - 1) // s + 1 for i in grid)
    found = set()
    for b, *x in sites.tolist():
        for j in itertools.product(range(k), repeat=3):
            if kind == "transposed":
                o = [xi * s - p + ji * d for xi, ji in zip(x, j)]
            else:
                num = [xi + p - ji * d for xi, ji in zip(x, j)]
                if any(n % s for n in num):
                    continue
                o = [n // s for n in num]
            if all(0 <= oi < g for oi, g in zip(o, out_grid)):
                found.add((b, *o))
    return sort_by_key(np.array(sorted(found), np.int32).reshape(-1, 4), out_grid), out_grid


def dense(sites, values, grid, batch):
    t = torch.zeros((batch, values.shape[1]) + tuple(grid), dtype=values.dtype)
    t[sites[:, 0], :, sites[:, 1], sites[:, 2], sites[:, 3]] = values
    return t


def sample(t, sites):
    return t[sites[:, 0], :, sites[:, 1], sites[:, 2], sites[:, 3]]


def oracle(kind, sites, x, w, gout, out_sites, in_grid, k, s, p, d):
    """(dL/dx, dL/dw) by autograd on the dense conv."""
    batch = int(max(sites[:, 0].max(), out_sites[:, 0].max())) + 1
    xt = dense(sites, torch.from_numpy(x), in_grid, batch).requires_grad_()
    kk = (k, k, k)
    if kind in ("subm", "regular"):
        # conv3d's weight is Cout x Cin x k...: ours W[j, ci, co].
        wt = torch.from_numpy(w.transpose(2, 1, 0).reshape((w.shape[2], w.shape[1]) + kk)
                              .copy()).requires_grad_()
        y = torch.nn.functional.conv3d(xt, wt, stride=s, padding=p, dilation=d)
        dw_of = lambda g: g.reshape(w.shape[2], w.shape[1], -1).permute(2, 1, 0)  # noqa: E731
    else:
        # conv_transpose3d's weight is Cin x Cout x k...
        wt = torch.from_numpy(w.transpose(1, 2, 0).reshape((w.shape[1], w.shape[2]) + kk)
                              .copy()).requires_grad_()
        y = torch.nn.functional.conv_transpose3d(xt, wt, stride=s, padding=p, dilation=d)
        dw_of = lambda g: g.reshape(w.shape[1], w.shape[2], -1).permute(2, 0, 1)  # noqa: E731
    loss = (sample(y, out_sites) * torch.from_numpy(gout)).sum()
    loss.backward()
    return sample(xt.grad, sites).numpy(), dw_of(wt.grad).numpy()


def parse_args(with_input=True):
    """--bin, --work and (with_input) --input, the arguments of every
    gradient test script."""
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    if with_input:
        p.add_argument("--input", required=True)
    return p.parse_args()


class Case:
    def __init__(self, args):
        self.args = args
        self.failures = 0

    def spconv_run(self, entry, arrays, target, name):
        folder = os.path.join(self.args.work, name)
        os.makedirs(folder, exist_ok=True)
        inputs = []
        for i, a in enumerate(arrays):
            path = os.path.join(folder, "arg%d.npy" % i)
            np.save(path, a)
            inputs += ["--input", path]
        out = os.path.join(folder, "out")
        run([os.path.join(self.args.bin, "spconv-run"), self.args.input, "--entry", entry,
             "--output-dir", out] + inputs + target)
        count = len([f for f in os.listdir(out) if f.startswith("out")])
        return [np.load(os.path.join(out, "out%d.npy" % i)) for i in range(count)]

    def check(self, entry, arrays, expected, rtol):
        for name, target in TARGETS:
            got = self.spconv_run(entry, arrays, target, entry + "-" + name)
            worst = 0.0
            for g, e in zip(got, expected):
                if g.shape != e.shape:
                    sys.exit("%s on %s: shape %s, expected %s" % (entry, name, g.shape, e.shape))
                scale = max(float(np.abs(e).max()), 1e-30)
                worst = max(worst, float(np.abs(g - e).max()) / scale)
            status = "matches autograd" if worst <= rtol else "DIFFERS from autograd"
            print("%s on %s %s (max difference %.1e of the scale)" % (entry, name, status, worst))
            if worst > rtol:
                self.failures += 1

    def check_finite_differences(self, entry, arrays, moved, gradients, gout, rng,
                                 h=1e-4, rtol=1e-7):
        """Central finite differences of L = sum(entry(arrays)[0] * gout) on
        the CPU, along a random direction U_i of each array i in `moved`:
        (L(a + hU) - L(a - hU)) / 2h against sum_i <gradients[i], U_i>."""
        directions = {i: rng.normal(size=arrays[i].shape) for i in moved}
        loss = []
        for sign in (1, -1):
            shifted = [a + sign * h * directions[i] if i in directions else a
                       for i, a in enumerate(arrays)]
            out = self.spconv_run(entry, shifted, ["--target", "cpu"], "fd%+d" % sign)[0]
            loss.append(float((out * gout).sum()))
        fd = (loss[0] - loss[1]) / (2 * h)
        analytic = float(sum((g * directions[i]).sum() for i, g in zip(moved, gradients)))
        rel = abs(fd - analytic) / abs(analytic)
        print("finite differences: %s (relative difference %.1e)"
              % ("agree" if rel < rtol else "DISAGREE", rel))
        if rel >= rtol:
            self.failures += 1


def main():
    args = parse_args()
    rng = np.random.default_rng(17)
    case = Case(args)

    def conv_case(entry, kind, k, s, pad, d, dtype=np.float32):
        sites = random_sites(rng, GRID, 70)
        x = rng.normal(size=(len(sites), 4)).astype(dtype)
        w = rng.normal(size=(k ** 3, 4, 8)).astype(dtype)
        if kind == "subm":
            out_sites = sites
        else:
            out_sites, _ = output_sites(sites, kind, GRID, k, s, pad, d)
        gout = rng.normal(size=(len(out_sites), 8)).astype(dtype)
        expected = oracle(kind, sites, x, w, gout, out_sites, GRID, k, s, pad, d)
        case.check(entry, [sites, x, w, gout], expected,
                   1e-5 if dtype == np.float32 else 1e-12)
        return sites, x, w, gout, expected

    sites, x, w, gout, (dx, dw) = conv_case("subm_grads", "subm", 3, 1, 1, 1)
    case.check("subm_weight_grad_dynamic", [sites, x, gout], [dw], 1e-5)
    # Wide channels and many sites: several GPU weight-gradient tiles, each
    # piece of an offset's pairs more than one staged step.
    sites = random_sites(rng, GRID, 300)
    x = rng.normal(size=(len(sites), 40)).astype(np.float32)
    gout = rng.normal(size=(len(sites), 36)).astype(np.float32)
    w = np.zeros((27, 40, 36), np.float32)
    _, dw = oracle("subm", sites, x, w, gout, sites, GRID, 3, 1, 1, 1)
    case.check("weight_grad_wide", [sites, x, gout], [dw], 1e-5)
    conv_case("regular_grads", "regular", 3, 2, 1, 1)
    conv_case("transposed_grads", "transposed", 3, 2, 1, 1)

    # The dilated subm kernel: dilation (2, 1, 2), padding k/2 * d.
    sites = random_sites(rng, GRID, 70)
    x = rng.normal(size=(len(sites), 4)).astype(np.float32)
    w = rng.normal(size=(27, 4, 8)).astype(np.float32)
    gout = rng.normal(size=(len(sites), 8)).astype(np.float32)
    xt = dense(sites, torch.from_numpy(x), GRID, 2).requires_grad_()
    wt = torch.from_numpy(w.transpose(2, 1, 0).reshape(8, 4, 3, 3, 3).copy()).requires_grad_()
    y = torch.nn.functional.conv3d(xt, wt, padding=(2, 1, 2), dilation=(2, 1, 2))
    (sample(y, sites) * torch.from_numpy(gout)).sum().backward()
    case.check("subm_dilated_grads", [sites, x, w, gout],
               [sample(xt.grad, sites).numpy(),
                wt.grad.reshape(8, 4, -1).permute(2, 1, 0).numpy()], 1e-5)

    # The inverse conv of a 2x2x2 / stride-2 conv: fine sites, their coarse
    # outputs (the forward conv's, sorted by key), features on the coarse ones.
    fine = random_sites(rng, FINE, 60)
    coarse, _ = output_sites(fine, "regular", FINE, 2, 2, 0, 1)
    y = rng.normal(size=(len(coarse), 8)).astype(np.float32)
    w = rng.normal(size=(8, 8, 4)).astype(np.float32)
    gout = rng.normal(size=(len(fine), 4)).astype(np.float32)
    expected = oracle("inverse", coarse, y, w, gout, fine, tuple(g // 2 for g in FINE),
                      2, 2, 0, 1)
    case.check("inverse_grads", [fine, y, w, gout], expected, 1e-5)

    # f64, and central finite differences of the compiled forward conv along
    # a random direction: (L(x + hU, w + hV) - L(x - hU, w - hV)) / 2h against
    # <dL/dx, U> + <dL/dw, V>.
    sites, x, w, gout, (dx, dw) = conv_case("subm_grads_f64", "subm", 3, 1, 1, 1, np.float64)
    case.check_finite_differences("subm_forward_f64", [sites, x, w], [1, 2], [dx, dw], gout, rng)
    if case.failures:
        sys.exit("%d gradient checks failed" % case.failures)
    print("all gradients match")


if __name__ == "__main__":
    main()
