#!/usr/bin/env python3
"""Writes a small .npy for tests: make_npy.py OUT.npy DTYPE VALUES

VALUES is a Python literal (nested lists) or `zeros:D0xD1x...`."""
import ast
import sys

import numpy as np

out, dtype, values = sys.argv[1:4]
if values.startswith("zeros:"):
    shape = [int(d) for d in values[len("zeros:"):].split("x")]
    array = np.zeros(shape, dtype=dtype)
else:
    array = np.array(ast.literal_eval(values), dtype=dtype)
np.save(out, array)
