"""A LiDAR scan for the examples: bench/workloads/gen_workload.py's
ray-cast street on the KITTI grid, moved onto the grid a model takes.

scan(grid, sites, channels, seed) -> (indices N x 4 int32, features N x C
float32): unique sites, batch 0, in the order of `grid` (z, y, x for
SECOND's [41, 1600, 1408]).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench", "workloads"))
import gen_workload  # noqa: E402


def scan(grid, sites=20000, channels=4, seed=0):
    keys, point_keys, point_feats, _ = gen_workload.gen_lidar(seed, sites, "kitti", 0.16, 0.5)
    feats = gen_workload.mean_features(keys, point_keys, point_feats)
    kitti = gen_workload.GRIDS["kitti"][0]
    zyx = gen_workload.keys_to_zyx(keys, kitti)
    # Rescale each axis onto the model's grid and drop the sites that merge.
    scaled = (zyx * (np.array(grid) / np.array(kitti))).astype(np.int64)
    scaled = np.minimum(scaled, np.array(grid) - 1)
    key = (scaled[:, 0] * grid[1] + scaled[:, 1]) * grid[2] + scaled[:, 2]
    _, first = np.unique(key, return_index=True)
    first = np.sort(first)
    indices = np.zeros((len(first), 4), np.int32)
    indices[:, 1:] = scaled[first]
    rng = np.random.default_rng(seed)
    features = gen_workload.finish_features(feats[first], channels, rng)
    return indices, features
