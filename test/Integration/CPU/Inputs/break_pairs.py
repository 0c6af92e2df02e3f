#!/usr/bin/env python3
"""Writes broken copies of a rulebook's exported pairs (out0: input rows,
out1: output rows, out2: offsets) for rulebook-pairs.mlir: break_pairs.py
PAIRS_DIR OUT_DIR. Each file breaks one rule of spconv.rulebook_from_pairs."""
import os
import sys

import numpy as np

src, out = sys.argv[1:3]
os.makedirs(out, exist_ok=True)
in_rows = np.load(os.path.join(src, "out0.npy"))
out_rows = np.load(os.path.join(src, "out1.npy"))
offsets = np.load(os.path.join(src, "out2.npy"))
n = 6  # the sites of the test's coordinates

bad = in_rows.copy()
bad[3] = n  # one past the last input site
np.save(os.path.join(out, "in_row.npy"), bad)
bad = out_rows.copy()
bad[0] = -1
np.save(os.path.join(out, "out_row.npy"), bad)
bad = offsets.copy()
bad[0] = 1
np.save(os.path.join(out, "first.npy"), bad)
# A drop: an offset below the one before it (the first nonzero one's
# successor set to 0).
bad = offsets.copy()
j = int(np.nonzero(offsets)[0][0])
bad[j + 1] = 0
assert offsets[j] == 2, offsets  # the check line expects 2 before the drop
np.save(os.path.join(out, "order.npy"), bad)
bad = offsets.copy()
bad[-1] = 100
np.save(os.path.join(out, "many.npy"), bad)
