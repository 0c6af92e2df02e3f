#!/usr/bin/env python3
"""Writes an .npy per argument of a network's entry function.

usage: make_inputs.py MODEL.mlir ENTRY --coords SITES.npy --out-dir DIR [--seed S]

The first argument of ENTRY must be the coordinates (tensor<?x(1+D)xi32,
#spconv.grid<[...]>>), the second the features; the rest are weights and
biases. SITES.npy holds int32 sites (batch, x0, ...) on any grid: they are
rescaled onto the entry's grid and de-duplicated. Weights are random with
variance 2 / fan-in (He), biases small, so activations stay in range
through a deep network. Prints the --input arguments for spconv-run.
"""
import argparse
import os
import re
import sys

import numpy as np


def parse_signature(text, entry):
    match = re.search(r"func\.func @%s\((.*?)\)\s*->" % re.escape(entry), text, re.S)
    if not match:
        sys.exit("make_inputs.py: no function @%s" % entry)
    aliases = dict(re.findall(r"^(![\w.]+) = (tensor<[^\n]*>)$", text, re.M))
    args = []
    for name, type_text in re.findall(r"%([\w.]+)\s*:\s*(![\w.]+|tensor<[^>]*(?:<[^>]*>[^>]*)?>)", match.group(1)):
        type_text = aliases.get(type_text, type_text)
        body = re.match(r"tensor<([^,>]*)", type_text).group(1).split("x")
        shape, dtype = body[:-1], body[-1]
        grid = re.search(r"#spconv\.grid<\[([\d, ]+)\]", type_text)
        args.append((name, shape, dtype, [int(v) for v in grid.group(1).split(",")] if grid else None))
    return args


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("entry")
    parser.add_argument("--coords", required=True)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    args = parse_signature(open(opts.model).read(), opts.entry)
    if len(args) < 2 or args[0][3] is None:
        sys.exit("make_inputs.py: @%s must take coordinates, then features" % opts.entry)
    rng = np.random.default_rng(opts.seed)
    os.makedirs(opts.out_dir, exist_ok=True)

    # Sites: rescale each spatial axis onto the entry's grid, de-duplicate,
    # keep them sorted by key.
    grid = np.array(args[0][3])
    sites = np.load(opts.coords).astype(np.int64)
    extent = sites[:, 1:].max(axis=0) + 1
    scaled = sites.copy()
    scaled[:, 1:] = sites[:, 1:] * grid // np.maximum(extent, grid)
    coords = np.unique(scaled, axis=0).astype(np.int32)
    paths = []

    def save(index, array):
        path = os.path.join(opts.out_dir, "arg%d.npy" % index)
        np.save(path, array)
        paths.append(path)

    save(0, coords)
    channels = int(args[1][1][1])
    save(1, rng.standard_normal((len(coords), channels)).astype(np.float32))
    for index, (name, shape, dtype, _) in enumerate(args[2:], start=2):
        dims = [int(d) for d in shape]
        if len(dims) == 3:  # K x Cin x Cout
            fan_in = dims[0] * dims[1]
            array = rng.standard_normal(dims) * np.sqrt(2.0 / fan_in)
        else:
            array = rng.standard_normal(dims) * 0.01
        save(index, array.astype(np.float16 if dtype == "f16" else np.float32))
    print(" ".join("--input %s" % p for p in paths))
    print("%s: %d sites on %s" % (opts.entry, len(coords), list(grid)), file=sys.stderr)


if __name__ == "__main__":
    main()
