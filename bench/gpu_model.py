#!/usr/bin/env python3
"""The performance model of docs/GPU.md for a subm 3x3x3 conv, from a voxel set.

  gpu_model.py COORDS.npy D H W [--cin 64 --cout 64]

COORDS.npy: int32 [N, 4] rows (batch, z, y, x), as bench/workloads/
gen_workload.py and the shared yardstick generator write them. For each
element type's tile (docs/GPU.md, "Tiles per channel counts") it replays the
tile schedule the compiler builds (rows stably sorted by their 27-bit offset
mask, a tile visiting only the offsets its 32-row groups list) and prints,
per layer, the executed FLOPs, the bytes staged from L2 (gathered feature
rows, weight slices, table entries), and the roofline time of the conv
kernel on an A100 and an H100 beside the layer's own roofline (useful FLOPs
at the peak; compulsory DRAM traffic: features, outputs, table once). The
same figures without the schedule (rows in their own order, every offset
visited) are printed for comparison. A floor, not an estimate: it assumes
every latency hidden, and its H100 column charges tensor FLOPs at wgmma's
peak, which no mma.sync kernel reaches; scripts/sass-report.py estimates
from the kernels' machine code (docs/GPU.md, "Performance model").
"""
import argparse
import numpy as np

PEAK = {  # TFLOP/s: FMA f32, TF32, f16 tensor; L2 and DRAM TB/s
    "A100": {"f32": 19.5, "tf32": 156, "f16": 312, "l2": 5.0, "dram": 1.55},
    "H100": {"f32": 67, "tf32": 494, "f16": 989, "l2": 10.0, "dram": 3.35},
}
# (math, tile rows, element bytes staged, output bytes) per element type,
# as GemmTiles::choose picks them for 64 output channels (tensor cores: 4 x 2
# fragments per warp, 256 rows).
TILES = {"f32": ("f32", 64, 4, 4), "tf32": ("tf32", 256, 4, 4),
         "f16": ("f16", 256, 2, 2)}
GROUP = 32


def masks(coords, shape):
    d, h, w = shape
    c = coords.astype(np.int64)
    key = ((c[:, 0] * d + c[:, 1]) * h + c[:, 2]) * w + c[:, 3]
    order = np.argsort(key, kind="stable")
    skey = key[order]
    mask = np.zeros(len(c), np.int64)
    k = 0
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                z, y, x = c[:, 1] + dz, c[:, 2] + dy, c[:, 3] + dx
                ok = (z >= 0) & (z < d) & (y >= 0) & (y < h) & (x >= 0) & (x < w)
                q = ((c[:, 0] * d + z) * h + y) * w + x
                at = np.minimum(np.searchsorted(skey, q), len(c) - 1)
                mask |= (ok & (skey[at] == q)).astype(np.int64) << k
                k += 1
    return mask


def visited(mask, rows):
    """Sum over tiles of the offsets a tile visits (union of its groups)."""
    groups = np.array([np.bitwise_or.reduce(mask[i:i + GROUP])
                       for i in range(0, len(mask), GROUP)])
    per = rows // GROUP
    total = 0
    for t in range(0, len(groups), per):
        total += bin(int(np.bitwise_or.reduce(groups[t:t + per]))).count("1")
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("coords")
    ap.add_argument("shape", nargs=3, type=int)
    ap.add_argument("--cin", type=int, default=64)
    ap.add_argument("--cout", type=int, default=64)
    ap.add_argument("--check", action="store_true",
                    help="fail unless the schedule visits no more offsets "
                         "than rows in their own order, for every tile")
    a = ap.parse_args()
    mask = masks(np.load(a.coords), a.shape)
    n, cin, cout = len(mask), a.cin, a.cout
    pairs = sum(bin(int(m)).count("1") for m in mask)
    useful = 2.0 * pairs * cin * cout
    print(f"{n} rows, {pairs} pairs, {useful / 1e9:.2f} useful GFLOP")
    print("| math | schedule | tile rows | visited offsets per tile | "
          "executed GFLOP | L2 -> SM MB (features + weights + table) | "
          "A100 | H100 (wgmma peak) | H100 / layer roofline |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, (math, rows, eb, ob) in TILES.items():
        for scheduled in (False, True):
            m = np.sort(mask, kind="stable") if scheduled else mask
            tiles = -(-n // rows)
            offsets = visited(m, rows) if scheduled else tiles * 27
            if scheduled and a.check:
                own = visited(mask, rows)
                assert offsets <= own <= tiles * 27, (name, offsets, own)
            flops = 2.0 * offsets * rows * cin * cout
            feat = pairs * cin * eb
            weights = offsets * cin * cout * eb
            table = (offsets * rows if scheduled else n * 27) * 4
            mb = (feat + weights + table) / 1e6
            times = {}
            for gpu, p in PEAK.items():
                t_flop = flops / (p[math] * 1e12)
                t_byte = mb * 1e6 / (p["l2"] * 1e12)
                times[gpu] = max(t_flop, t_byte)
            h = PEAK["H100"]
            compulsory = (n * cin * eb + n * cout * ob + n * 27 * 4) / (h["dram"] * 1e12)
            roof = max(useful / (h[math] * 1e12), compulsory)
            print(f"| {name} | {'sorted' if scheduled else 'none'} | {rows} | "
                  f"{offsets / tiles:.1f} | {flops / 1e9:.1f} | "
                  f"{feat / 1e6:.0f} + {weights / 1e6:.0f} + {table / 1e6:.0f} | "
                  f"{times['A100'] * 1e6:.0f} us | {times['H100'] * 1e6:.0f} us | "
                  f"{times['H100'] / roof:.2f}x of {roof * 1e6:.0f} us |")


if __name__ == "__main__":
    main()
