#!/usr/bin/env python3
"""The pooling gradients of Inputs/pool-gradients.mlir against PyTorch
autograd: max_pool3d on the dense grid (features positive, so the zeros of
empty sites never win; many exact ties, which both send to the first site of
the window in row-major order), and the average over contributing sites as
sum pooling over a pooled count of active sites. On the CPU and the GPU
emulator (race check on).

usage: pool_gradients.py --bin DIR --work DIR --input Inputs/pool-gradients.mlir
"""
import sys

import numpy as np
import torch

from gradients import Case, dense, output_sites, parse_args, random_sites, sample

GRID = (8, 6, 7)


def oracle(kind, sites, x, gout, k, s, p):
    batch = int(sites[:, 0].max()) + 1
    xt = dense(sites, torch.from_numpy(x), GRID, batch).requires_grad_()
    if kind == "max":
        y = torch.nn.functional.max_pool3d(xt, k, s, p)
    else:
        mask = dense(sites, torch.ones((len(sites), 1), dtype=xt.dtype), GRID, batch)
        y = (torch.nn.functional.avg_pool3d(xt, k, s, p) /
             torch.nn.functional.avg_pool3d(mask, k, s, p))
    out_sites, _ = output_sites(sites, "regular", GRID, k, s, p, 1)
    (sample(y, out_sites) * torch.from_numpy(gout)).sum().backward()
    return sample(xt.grad, sites).numpy()


def main():
    args = parse_args()
    rng = np.random.default_rng(23)
    case = Case(args)
    for entry, kind, k, s, pad, dtype in [
            ("max_pool_grad", "max", 2, 2, 0, np.float32),
            ("avg_pool_grad", "avg", 2, 2, 0, np.float32),
            ("max_pool3_grad", "max", 3, 2, 1, np.float32),
            ("avg_pool3_grad", "avg", 3, 2, 1, np.float64)]:
        sites = random_sites(rng, GRID, 150)
        # Four distinct values: windows with several sites tie often.
        x = (rng.integers(1, 5, size=(len(sites), 5)) * 0.5).astype(dtype)
        out_sites, _ = output_sites(sites, "regular", GRID, k, s, pad, 1)
        gout = rng.normal(size=(len(out_sites), 5)).astype(dtype)
        case.check(entry, [sites, x, gout], [oracle(kind, sites, x, gout, k, s, pad)],
                   1e-5 if dtype == np.float32 else 1e-12)
    if case.failures:
        sys.exit("%d gradient checks failed" % case.failures)
    print("all pooling gradients match")


if __name__ == "__main__":
    main()
