#!/usr/bin/env python3
# ===- python_frontend.py - The Python front end, timed ---------------=== #
#
# Part of the spconv-mlir project.
#
# ===------------------------------------------------------------------=== #
"""Times the Python front end on the example networks (examples/python):
tracing and emitting the MLIR, compiling it cold (empty cache) and warm
(from the cache), and a call of the compiled network from Python, beside
spconv 2.x's own modules with the same weights on the same scan when
spconv and torch import (run it with scripts/bench-install.sh's Python).
Outputs are compared (by site) before any time is reported.

usage: PYTHON bench/python_frontend.py [--sites N] [--threads T] [--repeat R]
Prints a Markdown table.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
import types

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(root, "python"))
sys.path.insert(0, os.path.join(root, "examples", "python"))

import spconv_mlir  # noqa: E402
from scan import scan  # noqa: E402


def median_ms(fn, repeat):
    fn()  # the first call pays page faults of fresh buffers
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def spconv_twin(name):
    """The spconv.pytorch version of examples/python/models.py's network."""
    try:
        import torch  # noqa: F401
        import spconv.pytorch  # noqa: F401
    except ImportError:
        return None
    path = os.path.join(root, "examples", "python", "models.py")
    text = open(path).read()
    begin, end = text.index("# BEGIN imports"), text.index("# END imports")
    text = text[:begin] + ("import spconv.pytorch as spconv\nfrom torch.nn import BatchNorm1d, "
                           "Module, ModuleList, ReLU\nfrom torch import cat\n") + text[end:]
    module = types.ModuleType("models_spconv")
    exec(compile(text, path, "exec"), module.__dict__)
    return getattr(module, name)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sites", type=int, default=100000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    os.environ["SPCONV_MLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="spconv-mlir-bench-")
    import models

    rows = []
    for name, grid in [("VoxelBackBone8x", [41, 1600, 1408]), ("MinkUNet", [1024, 1024, 64])]:
        indices, features = scan(grid, args.sites, 4, seed=0)
        twin = spconv_twin(name)
        ours = getattr(models, name)()
        theirs = None
        if twin is not None:
            import torch
            import spconv.pytorch as sp

            torch.set_num_threads(args.threads)
            torch.manual_seed(0)
            theirs = twin().eval()
            ours.load_state_dict(theirs.state_dict())
        start = time.perf_counter()
        graph = spconv_mlir.trace(ours, grid)
        from spconv_mlir.emit import Emitter

        Emitter(graph).emit(graph.inputs, graph.outputs)
        trace_ms = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        net = spconv_mlir.compile(ours, grid=grid, num_threads=args.threads)
        cold_s = time.perf_counter() - start
        start = time.perf_counter()
        net = spconv_mlir.compile(ours, grid=grid, num_threads=args.threads)
        warm_ms = (time.perf_counter() - start) * 1e3
        x = spconv_mlir.SparseConvTensor(features, indices, grid, 1)
        out = net(x)
        ours_ms = median_ms(lambda: net(x), args.repeat)
        row = [name, "%d" % len(indices), "%.0f" % trace_ms, "%.1f" % cold_s, "%.0f" % warm_ms,
               "%.1f" % ours_ms]
        if theirs is not None:
            tx = sp.SparseConvTensor(torch.from_numpy(features), torch.from_numpy(indices),
                                     grid, 1)
            with torch.no_grad():
                expected = theirs(tx)
                theirs_ms = median_ms(lambda: theirs(tx), args.repeat)
            if len(expected.indices) != len(out.indices):
                sys.exit("%s: spconv and ours disagree on the output sites" % name)
            row += ["%.1f" % theirs_ms, "%.2fx" % (theirs_ms / ours_ms)]
        else:
            row += ["-", "-"]
        rows.append(row)
    print("| network | sites | trace + emit (ms) | compile, cold (s) | compile, cached (ms) "
          "| call (ms) | spconv 2.x (ms) | spconv 2.x / ours |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print("\n%d thread(s), median of %d calls after a first one." % (args.threads, args.repeat))


if __name__ == "__main__":
    main()
