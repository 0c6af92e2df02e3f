#!/usr/bin/env python3
"""An installed spconv_mlir package: run by scripts/test-consumer.sh against
a fresh `cmake --install` (the package finds the installed spconv-compile
and runtime by itself) and by scripts/test-python.sh after `pip install
./python` (the tools come from SPCONV_MLIR_PREFIX). Checks where the package
and the tools came from, then that a subm conv + ReLU computes what
DESIGN.md defines (a brute-force numpy loop here).

usage: installed_package.py PACKAGE_PREFIX [--tools TOOLS_PREFIX]
"""
import argparse
import os
import sys

import numpy as np

import spconv_mlir
import spconv_mlir.nn as spconv
from sites import random_sites  # beside this script

parser = argparse.ArgumentParser()
parser.add_argument("package_prefix")
parser.add_argument("--tools", help="where the tools are (default: the package prefix)")
args = parser.parse_args()
prefix = os.path.realpath(args.package_prefix)
tools = os.path.realpath(args.tools or args.package_prefix)
where = os.path.realpath(spconv_mlir.__file__)
if not where.startswith(prefix + os.sep):
    sys.exit("spconv_mlir was imported from %s, not from %s" % (where, prefix))
toolchain = spconv_mlir.find_toolchain()
if os.path.realpath(toolchain.prefix) != tools:
    sys.exit("found the tools in %s, not in %s" % (toolchain.prefix, tools))

grid = [6, 5, 4]
rng = np.random.default_rng(1)
indices = random_sites(rng, grid, 40)
features = rng.normal(size=(40, 3)).astype(np.float32)
model = spconv.SparseSequential(spconv.SubMConv3d(3, 5, 3), spconv.ReLU())
out = spconv_mlir.compile(model, grid=grid)(indices, features)

conv = model[0]
site = {tuple(c): i for i, c in enumerate(indices.tolist())}
want = np.tile(conv.bias.astype(np.float64), (40, 1))
for o, (b, *x) in enumerate(indices.tolist()):
    for j, d in enumerate(np.ndindex(3, 3, 3)):
        i = site.get((b,) + tuple(x[a] + d[a] - 1 for a in range(3)))
        if i is not None:
            want[o] += features[i] @ conv.weight[(slice(None),) + d + (slice(None),)].T
want = np.maximum(want, 0)
if not (np.array_equal(out.indices, indices) and np.allclose(out.features, want, atol=1e-5)):
    sys.exit("the installed package computes another function")
print("installed Python package (%s): compiled with %s, outputs match"
      % (where, toolchain.compiler))
