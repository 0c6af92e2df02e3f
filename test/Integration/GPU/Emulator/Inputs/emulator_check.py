#!/usr/bin/env python3
"""Inputs and numpy references for the emulator's kernel tests.

  emulator_check.py make CASE DIR          writes DIR/*.npy
  emulator_check.py check CASE DIR OUTDIR  compares OUTDIR/out*.npy with the
                                           reference, exit 1 on a mismatch

The references follow the documented semantics of the ops (gpu dialect,
PTX), not the emulator's code.
"""

import os
import sys

import numpy as np

WARP = 32


def save(directory, name, array):
    np.save(os.path.join(directory, name + ".npy"), array)


def load(directory, name):
    return np.load(os.path.join(directory, name + ".npy"))


# ---------------------------------------------------------------- gemm
# M, N, K not multiples of the 16x16 tile: partial tiles on every edge.
def make_gemm(d):
    rng = np.random.default_rng(7)
    save(d, "a", rng.uniform(-1, 1, (37, 45)).astype(np.float32))
    save(d, "b", rng.uniform(-1, 1, (45, 29)).astype(np.float32))


def reference_gemm(d):
    a, b = load(d, "a").astype(np.float64), load(d, "b").astype(np.float64)
    return [(a @ b, 1e-5)]


# ------------------------------------------------------------- shuffles
# 3 warps; each thread t holds x[t] and writes, per mode, the value it
# receives and whether it is valid.
SHUFFLES = [("xor", 5, 32), ("down", 3, 32), ("up", 3, 32), ("idx", 7, 16),
            ("down", 2, 8)]


def make_shuffles(d):
    save(d, "x", (np.arange(3 * WARP, dtype=np.int32) * 7 + 3))


def shuffle_reference(x, mode, offset, width):
    out = np.zeros((len(x), 2), dtype=np.int32)
    for t in range(len(x)):
        lane, base = t % WARP, t - t % WARP
        source = {"xor": lane ^ offset, "down": lane + offset,
                  "up": lane - offset, "idx": offset}[mode]
        valid = 0 <= source < width and lane < width
        # An invalid lane gets its own value (PTX shfl.sync).
        out[t] = (x[base + source] if valid else x[t], int(valid))
    return out


def reference_shuffles(d):
    x = load(d, "x")
    table = np.concatenate([shuffle_reference(x, *s) for s in SHUFFLES], axis=1)
    return [(table, 0)]


# ------------------------------------------------------------ reduction
# Block sums of 1000 integers by blocks of 128 threads: warp sums by xor
# shuffles, then the first warp reduces the four warp sums with
# gpu.subgroup_reduce; also each warp's 4-lane cluster sums.
def make_reduction(d):
    rng = np.random.default_rng(3)
    save(d, "x", rng.integers(-1000, 1000, 1000).astype(np.int32))


def reference_reduction(d):
    x = load(d, "x").astype(np.int64)
    blocks = -(-len(x) // 128)
    padded = np.zeros(blocks * 128, dtype=np.int64)
    padded[:len(x)] = x
    sums = padded.reshape(blocks, 128).sum(axis=1)
    clusters = padded.reshape(-1, 4).sum(axis=1).repeat(4)[:len(x)]
    return [(sums.astype(np.int32), 0), (clusters.astype(np.int32), 0)]


# ------------------------------------------------------- listed loops
# Block b of four (64 threads) runs n[b] rounds around two barriers, a trip
# count read from memory: each round a thread takes its mirror's value + 1.
def make_listed(d):
    save(d, "x", np.arange(256, dtype=np.int32) * 3)
    save(d, "n", np.array([0, 1, 2, 3], dtype=np.int32))


def reference_listed(d):
    x, n = load(d, "x").reshape(4, 64), load(d, "n")
    out = x.copy()
    for b in range(4):
        for _ in range(n[b]):
            out[b] = out[b][::-1] + 1
    return [(out.reshape(256), 0)]


# ---------------------------------------------------------- tensor core
# C = A * B + 1 with f16 A (M x K), B given transposed (N x K), f32 result;
# one warp per 16x16 tile of C.
def make_mma(d):
    rng = np.random.default_rng(11)
    save(d, "a", rng.uniform(-1, 1, (32, 48)).astype(np.float16))
    save(d, "bt", rng.uniform(-1, 1, (48, 48)).astype(np.float16))


def reference_mma(d):
    a = load(d, "a").astype(np.float64)
    bt = load(d, "bt").astype(np.float64)
    return [(a @ bt.T + 1.0, 1e-5)]


# ------------------------------------------------------ mma.sync fragments
# C = A * B + 1 through nvgpu.ldmatrix and nvgpu.mma.sync, two warps of 16
# rows each: f16 and bf16 from a (32 x 32) and b (32 x 16), values on a
# grid of quarters that both types hold exactly; tf32 from at (32 x 16) and
# bt (16 x 16), whose values carry bits below tf32's 10-bit mantissa that
# the tensor cores ignore.
def make_mma_sync(d):
    rng = np.random.default_rng(13)
    save(d, "a", rng.integers(-8, 9, (32, 32)).astype(np.float32) / 4)
    save(d, "b", rng.integers(-8, 9, (32, 16)).astype(np.float32) / 4)
    low = np.float32(1 + 2.0 ** -15)
    save(d, "at", (rng.integers(-8, 9, (32, 16)) / 4 * low).astype(np.float32))
    save(d, "bt", (rng.integers(-8, 9, (16, 16)) / 4 * low).astype(np.float32))


def tf32(x):
    """x with the 13 low mantissa bits of each f32 cleared."""
    return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def reference_mma_sync(d):
    a, b = load(d, "a").astype(np.float64), load(d, "b").astype(np.float64)
    at = tf32(load(d, "at")).astype(np.float64)
    bt = tf32(load(d, "bt")).astype(np.float64)
    # Sums of products of quarters are exact in f32: no tolerance.
    return [(a @ b + 1.0, 0), (a @ b + 1.0, 0), (at @ bt + 1.0, 0)]


CASES = {
    "gemm": (make_gemm, reference_gemm),
    "shuffles": (make_shuffles, reference_shuffles),
    "reduction": (make_reduction, reference_reduction),
    "mma": (make_mma, reference_mma),
    "mma_sync": (make_mma_sync, reference_mma_sync),
    "listed": (make_listed, reference_listed),
}


def check(case, d, out):
    ok = True
    for i, (want, tolerance) in enumerate(CASES[case][1](d)):
        got = np.load(os.path.join(out, f"out{i}.npy"))
        if got.shape != want.shape:
            print(f"{case} out{i}: shape {got.shape}, want {want.shape}")
            ok = False
            continue
        if tolerance == 0:
            bad = np.argwhere(got != want)
        else:
            err = np.abs(got.astype(np.float64) - want)
            bad = np.argwhere(err > tolerance * (1 + np.abs(want)))
        if len(bad):
            at = tuple(bad[0])
            print(f"{case} out{i}: {len(bad)} mismatches, first at {at}: "
                  f"got {got[at]}, want {want[at]}")
            ok = False
    print(f"{case}: {'ok' if ok else 'MISMATCH'}")
    return ok


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("make", "check") \
            or sys.argv[2] not in CASES:
        sys.exit(__doc__)
    if sys.argv[1] == "make":
        CASES[sys.argv[2]][0](sys.argv[3])
        return
    sys.exit(0 if check(sys.argv[2], sys.argv[3], sys.argv[4]) else 1)


if __name__ == "__main__":
    main()
