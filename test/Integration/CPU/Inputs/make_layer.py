#!/usr/bin/env python3
"""Writes a random sparse layer for tests: distinct sites, features, weights.

make_layer.py DIR --grid 8,8,8 --sites N --cin C --cout C --volume K --seed S
writes DIR/coords.npy (N x (1+D) i4, batch 0), DIR/feats.npy (N x Cin f4)
and DIR/weight.npy (K x Cin x Cout f4)."""
import argparse
import os

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("dir")
parser.add_argument("--grid", required=True)
parser.add_argument("--sites", type=int, required=True)
parser.add_argument("--cin", type=int, required=True)
parser.add_argument("--cout", type=int, required=True)
parser.add_argument("--volume", type=int, required=True)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

rng = np.random.default_rng(args.seed)
grid = [int(s) for s in args.grid.split(",")]
keys = rng.choice(int(np.prod(grid)), size=args.sites, replace=False)
spatial = np.stack(np.unravel_index(keys, grid), axis=1)
coords = np.concatenate([np.zeros((args.sites, 1), np.int64), spatial], axis=1)
os.makedirs(args.dir, exist_ok=True)
np.save(os.path.join(args.dir, "coords.npy"), coords.astype(np.int32))
np.save(os.path.join(args.dir, "feats.npy"),
        rng.standard_normal((args.sites, args.cin)).astype(np.float32))
np.save(os.path.join(args.dir, "weight.npy"),
        rng.standard_normal((args.volume, args.cin, args.cout)).astype(np.float32))
