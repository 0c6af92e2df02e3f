#!/usr/bin/env python3
"""Fused epilogues against the reference: each function of
Inputs/epilogues.mlir runs with spconv-run (on the CPU with and without
--fuse-epilogues, and on the GPU emulator with its race check, as the
implicit GEMM and as the pair-per-thread form); its conv runs with spconv-ref
(the naive reference) and its element-wise ops in numpy, written from their
definitions. The CPU's fused and unfused results must be bit for bit equal:
the epilogue rounds the sum once and applies the same ops in the same order.

usage: epilogues.py --bin DIR --work DIR --input FILE.mlir
"""

import argparse
import os
import subprocess
import sys

import numpy as np

GRID = (16, 16, 8)
TARGETS = [("cpu", ["--target", "cpu"]),
           ("cpu-unfused", ["--target", "cpu", "--fuse-epilogues=false"]),
           ("gpu-emulator", ["--target", "gpu-emulator", "--gpu-race-check"]),
           ("gpu-emulator-gather", ["--target", "gpu-emulator", "--gpu-race-check",
                                    "--gpu-conv=gather-scatter"])]


def run(args, expect_failure=False):
    result = subprocess.run(args, capture_output=True, text=True)
    if (result.returncode != 0) != expect_failure:
        sys.exit("%s %s:\n%s%s" % (" ".join(args),
                                   "succeeded" if expect_failure else "failed",
                                   result.stdout, result.stderr))
    return result


def random_sites(rng, count, batches=2):
    volume = int(np.prod(GRID))
    linear = rng.choice(batches * volume, size=count, replace=False)
    coords = [linear // volume]
    rest = linear % volume
    for extent in reversed(GRID):
        coords.insert(1, rest % extent)
        rest //= extent
    # Columns: batch, then x0, x1, x2 (row-major in the grid).
    return np.stack(coords, axis=1).astype(np.int32)


class Check:
    def __init__(self, args):
        self.bin = args.bin
        self.work = args.work
        self.model = args.input
        os.makedirs(self.work, exist_ok=True)

    def tool(self, name):
        return os.path.join(self.bin, name)

    def save(self, name, array):
        path = os.path.join(self.work, name)
        np.save(path, array)
        return path

    def spconv_run(self, entry, inputs, target, out, expect_failure=False):
        args = [self.tool("spconv-run"), self.model, "--entry", entry,
                "--output-dir", os.path.join(self.work, out)] + target
        for path in inputs:
            args += ["--input", path]
        return run(args, expect_failure)

    def reference_conv(self, kind, kernel, coords, x, w, b, out, stride=None):
        args = [self.tool("spconv-ref"), "conv", "--kind", kind,
                "--kernel", kernel, "--grid", ",".join(map(str, GRID)),
                "--coords", coords, "--features", x, "--weight", w,
                "--out-dir", os.path.join(self.work, out)]
        if b:
            args += ["--bias", b]
        if stride:
            args += ["--stride", stride]
        run(args)
        return [np.load(os.path.join(self.work, out, "out%d.npy" % i)) for i in (0, 1)]

    def expect_report(self, entry, inputs, label, keyword, skip=()):
        """Runs `entry` on each target but `skip`, which must fail; prints
        the line of its error naming `keyword`."""
        for name, target in TARGETS:
            if name in skip:
                continue
            failed = self.spconv_run(entry, inputs, target,
                                     "%s-%s" % (label.replace(" ", "-"), name),
                                     expect_failure=True)
            message = [line for line in failed.stderr.splitlines() if keyword in line]
            print("%s on %s: %s" % (label, name, message[0] if message else failed.stderr))

    def compare(self, entry, outputs, expected, rtol, atol):
        """Each target's outputs against `expected`; fused == unfused."""
        results = {}
        for name, target in TARGETS:
            self.spconv_run(entry, outputs, target, entry + "-" + name)
            actual = [np.load(os.path.join(self.work, entry + "-" + name, "out%d.npy" % i))
                      for i in range(len(expected))]
            for a, e in zip(actual, expected):
                if a.dtype != e.dtype or a.shape != e.shape:
                    sys.exit("%s on %s: got %s%s, expected %s%s"
                             % (entry, name, a.dtype, a.shape, e.dtype, e.shape))
                if not np.allclose(a.astype(np.float64), e.astype(np.float64),
                                   rtol=rtol, atol=atol):
                    worst = np.abs(a.astype(np.float64) - e.astype(np.float64)).max()
                    sys.exit("%s on %s: off by up to %g" % (entry, name, worst))
            results[name] = actual
            print("%s on %s matches the reference" % (entry, name))
        for a, b in zip(results["cpu"], results["cpu-unfused"]):
            if not np.array_equal(a, b):
                sys.exit("%s: fused and unfused CPU results differ" % entry)
        print("%s: fused and unfused CPU results are identical" % entry)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--input", required=True)
    check = Check(parser.parse_args())
    rng = np.random.default_rng(7)
    f32 = np.float32

    coords = random_sites(rng, 300)
    n = len(coords)
    c = check.save("c.npy", coords)
    x = check.save("x.npy", rng.standard_normal((n, 8)).astype(f32))

    # leaky_relu(y * scale + shift + residual)
    w = check.save("w.npy", rng.standard_normal((27, 8, 16)).astype(f32))
    b = check.save("b.npy", rng.standard_normal(16).astype(f32))
    scale = rng.standard_normal(16).astype(f32)
    shift = rng.standard_normal(16).astype(f32)
    residual = rng.standard_normal((n, 16)).astype(f32)
    _, y = check.reference_conv("subm", "3,3,3", c, x, w, b, "ref-subm")
    total = y * scale + shift + residual
    expected = np.where(total > 0, total, total * f32(0.1)).astype(f32)
    inputs = [c, x, w, b, check.save("scale.npy", scale), check.save("shift.npy", shift),
              check.save("residual.npy", residual)]
    check.compare("subm_bn_residual_leaky", inputs, [expected], rtol=1e-4, atol=1e-4)

    # A residual with a row too few is reported, not read. (Unfused, the
    # add is upstream linalg's, which assumes operands of one shape.)
    short = inputs[:-1] + [check.save("short.npy", residual[:-1])]
    check.expect_report("subm_bn_residual_leaky", short, "short residual",
                        "epilogue", skip=("cpu-unfused",))

    # relu(regular conv), 5 channels.
    w5 = check.save("w5.npy", rng.standard_normal((8, 8, 5)).astype(f32))
    b5 = check.save("b5.npy", rng.standard_normal(5).astype(f32))
    oc, y5 = check.reference_conv("regular", "2,2,2", c, x, w5, b5, "ref-regular",
                                  stride="2,2,2")
    check.compare("regular_relu", [c, x, w5, b5], [oc, np.maximum(y5, 0)],
                  rtol=1e-4, atol=1e-4)

    # relu(subm) in f16.
    x16 = check.save("x16.npy", rng.standard_normal((n, 8)).astype(np.float16))
    w16 = check.save("w16.npy", (rng.standard_normal((27, 8, 16)) * 0.3).astype(np.float16))
    _, y16 = check.reference_conv("subm", "3,3,3", c, x16, w16, None, "ref-f16")
    check.compare("subm_relu_f16", [c, x16, w16], [np.maximum(y16, np.float16(0))],
                  rtol=1e-2, atol=1e-2)

    # Concatenations: convs write their rows into the joint buffer's
    # columns; the other operands are copied in.
    wa = check.save("wa.npy", rng.standard_normal((27, 8, 16)).astype(f32))
    ba = check.save("ba.npy", rng.standard_normal(16).astype(f32))
    wb = check.save("wb.npy", rng.standard_normal((27, 8, 5)).astype(f32))
    wc = check.save("wc.npy", rng.standard_normal((27, 8, 3)).astype(f32))
    _, ya = check.reference_conv("subm", "3,3,3", c, x, wa, ba, "ref-cat-a")
    _, yb = check.reference_conv("subm", "3,3,3", c, x, wb, None, "ref-cat-b")
    _, yc = check.reference_conv("subm", "3,3,3", c, x, wc, None, "ref-cat-c")
    joint = np.concatenate([np.maximum(ya, 0), np.load(x), yc, yb], axis=1)
    check.compare("concat_in_place", [c, x, wa, ba, wb, wc], [joint, yc],
                  rtol=1e-4, atol=1e-4)

    skip16 = rng.standard_normal((n, 4)).astype(np.float16)
    inputs16 = [c, x16, w16, check.save("skip16.npy", skip16)]
    check.compare("concat_f16", inputs16,
                  [np.concatenate([y16, skip16], axis=1)], rtol=1e-2, atol=1e-2)

    # An operand with a row too few is reported; nothing is written past
    # the joint buffer.
    short16 = inputs16[:-1] + [check.save("short16.npy", skip16[:-1])]
    check.expect_report("concat_f16", short16, "short concat operand", "concat")

    # Two convs into one buffer; then the second on a site set with a site
    # fewer, which it reports.
    _, y1 = check.reference_conv("subm", "3,3,3", c, x, wa, None, "ref-cat-1")
    _, y2 = check.reference_conv("subm", "3,3,3", c, x, wb, None, "ref-cat-2")
    check.compare("concat_two_site_sets", [c, x, c, x, wa, wb],
                  [np.concatenate([y1, y2], axis=1)], rtol=1e-4, atol=1e-4)
    fewer = [c, x, check.save("c2.npy", coords[1:]),
             check.save("x2.npy", np.load(x)[1:]), wa, wb]
    check.expect_report("concat_two_site_sets", fewer,
                        "site sets of different sizes", "concat")

if __name__ == "__main__":
    main()
