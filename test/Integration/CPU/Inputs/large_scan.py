"""Writes c.npy, x.npy, w.npy into DIR: N distinct random sites of a
1024^3 grid (batch 0), one feature of 1 each, a 27 x 1 x 1 weight of 1.

usage: large_scan.py DIR N
"""
import os
import sys

import numpy as np

out, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
keys = np.unique(rng.integers(0, 1024 ** 3, n + n // 20, dtype=np.int64))[:n]
assert len(keys) == n, "not enough distinct sites drawn"
rng.shuffle(keys)
coords = np.zeros((n, 4), np.int32)
coords[:, 1] = keys // (1024 * 1024)
coords[:, 2] = keys // 1024 % 1024
coords[:, 3] = keys % 1024
np.save(os.path.join(out, "c.npy"), coords)
np.save(os.path.join(out, "x.npy"), np.ones((n, 1), np.float32))
np.save(os.path.join(out, "w.npy"), np.ones((27, 1, 1), np.float32))
