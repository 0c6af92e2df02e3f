#!/usr/bin/env python3
"""The gradients of Inputs/primitive-gradients.mlir against PyTorch autograd.

Each function returns (forward result, gradient of sum(result * gout) with
respect to its data input). The oracles are PyTorch ops with the same
semantics (DESIGN.md): index_select after padding a zero row (gather_rows,
-1 picks the zero row), scatter_reduce "amax" without the initial value
(segment_max, empty segments 0; the data has no ties, where PyTorch would
split the gradient and segment_max gives it to the first point), and
nn.functional.unfold / fold. Every function runs on the CPU and on the GPU
emulator with the race check on.

usage: primitive_gradients.py --bin DIR --work DIR --input Inputs/primitive-gradients.mlir
"""
import os
import sys
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gradients import Case, parse_args  # noqa: E402

warnings.filterwarnings("ignore", message="scatter_reduce")


def autograd(forward, x, gout):
    xt = torch.from_numpy(x).requires_grad_()
    y = forward(xt)
    (y * torch.from_numpy(gout)).sum().backward()
    return [y.detach().numpy(), xt.grad.numpy()]


def main():
    args = parse_args()
    rng = np.random.default_rng(29)
    case = Case(args)

    # Rows that repeat and rows that are -1.
    x = rng.normal(size=(9, 8)).astype(np.float32)
    rows = rng.integers(-1, 9, size=30).astype(np.int32)
    rows[:3] = [4, 4, -1]
    gout = rng.normal(size=(30, 8)).astype(np.float32)

    def gather(xt):
        padded = torch.cat([xt, torch.zeros(1, 8)])
        return padded.index_select(0, torch.from_numpy(np.where(rows < 0, 9, rows)).long())
    case.check("gather_grads", [x, rows, gout], autograd(gather, x, gout), 1e-6)

    # Segments 0..6 of 40 points per batch, segment 5 empty in batch 1.
    data = rng.normal(size=(2, 5, 40))
    index = rng.integers(0, 7, size=(2, 40)).astype(np.int32)
    index[1][index[1] == 5] = 6
    gout = rng.normal(size=(2, 5, 7))

    def segment_max(dt):
        idx = torch.from_numpy(index).long().unsqueeze(1).expand(2, 5, 40)
        return torch.zeros(2, 5, 7, dtype=dt.dtype).scatter_reduce(
            2, idx, dt, "amax", include_self=False)
    case.check("segment_max_grads", [data, index, gout], autograd(segment_max, data, gout),
               1e-12)

    x = rng.normal(size=(2, 3, 7, 6)).astype(np.float32)
    gout = rng.normal(size=(2, 27, 12)).astype(np.float32)
    case.check("unfold_grads", [x, gout], autograd(
        lambda t: torch.nn.functional.unfold(t, (3, 3), stride=2, padding=1), x, gout), 1e-6)

    cols = rng.normal(size=(2, 18, 18)).astype(np.float32)
    gout = rng.normal(size=(2, 3, 6, 5)).astype(np.float32)
    case.check("fold_grads", [cols, gout], autograd(
        lambda t: torch.nn.functional.fold(t, (6, 5), (2, 3), padding=(1, 0), dilation=(2, 1)),
        cols, gout), 1e-6)

    if case.failures:
        sys.exit("%d gradient checks failed" % case.failures)
    print("all primitive gradients match")


if __name__ == "__main__":
    main()
