#!/usr/bin/env python3
"""Grouped and depthwise convs of Inputs/grouped.mlir against PyTorch.

Each function returns (out, dL/dx, dL/dw) for the loss sum(out * gout). The
oracle is PyTorch's conv3d (subm, regular) or conv_transpose3d (transposed,
inverse) with `groups` on the dense grid, sampled at the active sites, and
autograd through it (gradients.py's oracle, with groups). Our grouped weight
is K x Cin/g x Cout; conv3d's is Cout x Cin/g x k..., conv_transpose3d's
Cin x Cout/g x k.... Every function runs on the CPU and the GPU emulator
(race check on, both conv forms); f64 also against finite differences.

usage: grouped.py --bin DIR --work DIR --input Inputs/grouped.mlir
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gradients import (Case, FINE, GRID, dense, output_sites, parse_args,  # noqa: E402
                       random_sites, sample)


def to_torch_conv(w, groups):
    """K x cig x Cout -> conv3d's Cout x cig x k x k x k."""
    k = round(w.shape[0] ** (1 / 3))
    return w.transpose(2, 1, 0).reshape((w.shape[2], w.shape[1], k, k, k)).copy()


def to_torch_transposed(w, groups):
    """K x cig x Cout -> conv_transpose3d's Cin x Cout/g x k x k x k:
    t[q * cig + ci, c] = w[j, ci, q * cog + c]."""
    volume, cig, cout = w.shape
    k = round(volume ** (1 / 3))
    cog = cout // groups
    t = w.reshape(volume, cig, groups, cog).transpose(2, 1, 3, 0)
    return t.reshape(groups * cig, cog, k, k, k).copy()


def from_torch_conv(g, w):
    return g.reshape(w.shape[2], w.shape[1], -1).permute(2, 1, 0).numpy()


def from_torch_transposed(g, w, groups):
    volume, cig, cout = w.shape
    cog = cout // groups
    return (g.reshape(groups, cig, cog, volume).permute(3, 1, 0, 2)
            .reshape(volume, cig, cout).numpy())


def oracle(kind, sites, x, w, gout, out_sites, in_grid, k, s, p, groups):
    """(out, dL/dx, dL/dw) by autograd on the dense grouped conv."""
    batch = int(max(sites[:, 0].max(), out_sites[:, 0].max())) + 1
    xt = dense(sites, torch.from_numpy(x), in_grid, batch).requires_grad_()
    if kind in ("subm", "regular"):
        wt = torch.from_numpy(to_torch_conv(w, groups)).requires_grad_()
        y = torch.nn.functional.conv3d(xt, wt, stride=s, padding=p, groups=groups)
    else:
        wt = torch.from_numpy(to_torch_transposed(w, groups)).requires_grad_()
        y = torch.nn.functional.conv_transpose3d(xt, wt, stride=s, padding=p, groups=groups)
    out = sample(y, out_sites)
    (out * torch.from_numpy(gout)).sum().backward()
    dw = (from_torch_conv(wt.grad, w) if kind in ("subm", "regular")
          else from_torch_transposed(wt.grad, w, groups))
    return [out.detach().numpy(), sample(xt.grad, sites).numpy(), dw]


def regroup(w, groups):
    """The data gradient's weight: wt[j, c, q * cig + ci] = w[j, ci, q * cog + c]."""
    volume, cig, cout = w.shape
    cog = cout // groups
    return (w.reshape(volume, cig, groups, cog).transpose(0, 3, 2, 1)
            .reshape(volume, cog, groups * cig).copy())


def main():
    args = parse_args()
    rng = np.random.default_rng(23)
    case = Case(args)

    def conv_case(entry, kind, k, s, pad, cin, cig, cout, groups, dtype=np.float32):
        sites = random_sites(rng, GRID, 70)
        x = rng.normal(size=(len(sites), cin)).astype(dtype)
        w = rng.normal(size=(k ** 3, cig, cout)).astype(dtype)
        if kind == "subm":
            out_sites = sites
        else:
            out_sites, _ = output_sites(sites, kind, GRID, k, s, pad, 1)
        gout = rng.normal(size=(len(out_sites), cout)).astype(dtype)
        expected = oracle(kind, sites, x, w, gout, out_sites, GRID, k, s, pad, groups)
        case.check(entry, [sites, x, w, gout], expected,
                   1e-5 if dtype == np.float32 else 1e-12)
        return sites, x, w, gout, expected

    sites, x, w, gout, expected = conv_case("grouped_subm", "subm", 3, 1, 1, 4, 2, 8, 2)
    case.check("grouped_dynamic", [sites, x, w, gout, regroup(w, 2)], expected, 1e-5)
    conv_case("grouped_regular", "regular", 3, 2, 1, 4, 2, 8, 2)
    conv_case("grouped_transposed", "transposed", 3, 2, 1, 4, 2, 8, 2)
    conv_case("depthwise_subm", "subm", 3, 1, 1, 8, 1, 8, 8)

    # The inverse conv of a 2x2x2 / stride-2 conv, 8 -> 4 channels in two
    # groups: conv_transpose3d from the coarse sites to the fine ones.
    fine = random_sites(rng, FINE, 60)
    coarse, _ = output_sites(fine, "regular", FINE, 2, 2, 0, 1)
    y = rng.normal(size=(len(coarse), 8)).astype(np.float32)
    w = rng.normal(size=(8, 4, 4)).astype(np.float32)
    gout = rng.normal(size=(len(fine), 4)).astype(np.float32)
    expected = oracle("inverse", coarse, y, w, gout, fine, tuple(g // 2 for g in FINE),
                      2, 2, 0, 2)
    case.check("grouped_inverse", [fine, y, w, gout], expected, 1e-5)

    # f64 with a depth multiplier, and central finite differences of its
    # forward result along a random direction.
    sites, x, w, gout, (_, dx, dw) = conv_case("multiplier_subm_f64", "subm", 3, 1, 1,
                                               4, 1, 8, 4, np.float64)
    case.check_finite_differences("multiplier_subm_f64", [sites, x, w, gout], [1, 2], [dx, dw],
                                  gout, rng)
    if case.failures:
        sys.exit("%d grouped conv checks failed" % case.failures)
    print("all grouped convs match")


if __name__ == "__main__":
    main()
