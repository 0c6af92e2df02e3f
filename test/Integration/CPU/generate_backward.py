#!/usr/bin/env python3
"""The backward function spconv-generate-backward derives for @net of
Inputs/generate-backward.mlir, against central finite differences of @net.

@grads returns the loss and its gradient with respect to every float
argument (features, weights, bias, target). For each argument, along a
random direction u: (L(p + h u) - L(p - h u)) / 2h against <dL/dp, u>, in
f64. The gradients are computed on the CPU and on the GPU emulator (race
check on), which must agree.

usage: generate_backward.py --bin DIR --work DIR --input Inputs/generate-backward.mlir
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gradients import Case, random_sites, parse_args  # noqa: E402

NAMES = ["x", "w1", "b1", "wd", "wu", "wp", "target"]


def main():
    args = parse_args()
    rng = np.random.default_rng(31)
    case = Case(args)

    sites = random_sites(rng, (8, 8, 8), 90)
    n = len(sites)
    params = [rng.normal(size=(n, 4)), rng.normal(size=(27, 4, 8)) * 0.3,
              rng.normal(size=8) * 0.3, rng.normal(size=(8, 4, 8)) * 0.3,
              rng.normal(size=(8, 8, 8)) * 0.3, rng.normal(size=(1, 16, 4)) * 0.3,
              rng.normal(size=(n, 4))]

    results = {}
    for target, flags in [("cpu", ["--target", "cpu"]),
                          ("gpu-emulator", ["--target", "gpu-emulator", "--gpu-race-check"])]:
        results[target] = case.spconv_run("grads", [sites] + params, flags, "grads-" + target)
    worst = max(float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))
                for a, b in zip(results["gpu-emulator"], results["cpu"]))
    print("gpu-emulator gradients %s the cpu's (max difference %.1e of the scale)"
          % ("match" if worst < 1e-12 else "DIFFER from", worst))
    if worst >= 1e-12:
        case.failures += 1

    loss, grads = results["cpu"][0], results["cpu"][1:]
    print("loss %.6f" % float(loss))
    h = 1e-5
    for i, name in enumerate(NAMES):
        u = rng.normal(size=params[i].shape)
        values = []
        for sign in (1, -1):
            moved = list(params)
            moved[i] = params[i] + sign * h * u
            (out,) = case.spconv_run("net", [sites] + moved, ["--target", "cpu"],
                                     "fd-%s%+d" % (name, sign))
            values.append(float(out))
        fd = (values[0] - values[1]) / (2 * h)
        analytic = float((grads[i] * u).sum())
        rel = abs(fd - analytic) / max(abs(analytic), 1e-30)
        ok = rel < 1e-6
        print("d loss / d %s: finite differences %s (relative difference %.1e)"
              % (name, "agree" if ok else "DISAGREE", rel))
        if not ok:
            case.failures += 1
    if case.failures:
        sys.exit("%d checks failed" % case.failures)
    print("the generated backward matches finite differences")


if __name__ == "__main__":
    main()
