#!/usr/bin/env python3
# ===- torch_training.py - Training steps through spconv_mlir.torch ---=== #
#
# Part of the spconv-mlir project.
#
# ===------------------------------------------------------------------=== #
"""Times one training step (forward, loss, backward, SGD) of
examples/python/models.py's VoxelBackBone8x and MinkUNet written with
spconv_mlir.torch, on gen_workload.py's LiDAR scan, beside the same model
whose convs are what a PyTorch user would write over our rulebooks
(index_select, mm and index_add_ per kernel offset, autograd by torch).
Outputs and gradients are checked against each other first, in f64 (1e-9
of their scale); the timed steps run in f32.

Each configuration runs in a process of its own (threads: OMP_NUM_THREADS
for the compiled code, torch.set_num_threads for torch), warm (the first
step compiles), the median of --steps steps. The first step is reported
too, with a cold kernel store (an empty one: every kernel set is compiled)
and a warm one (a second process on the store the first filled: loaded).
Needs torch 2.4 or later (build/venv-torch: scripts/test-python.sh
--install).

usage: build/venv-torch/bin/python bench/torch_training.py [--sites N]
           [--threads 1,2] [--steps S] [--models VoxelBackBone8x,MinkUNet]
           [--torch-openmp libomp|libgomp]
Prints a Markdown table.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types

import torch_env  # bench/, the script's directory

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
GRID = [41, 1600, 1408]
TORCH_IMPORTS = """import spconv_mlir.torch as spconv
from torch.nn import BatchNorm1d, Module, ModuleList, ReLU
from torch import cat
"""


def load_models():
    """examples/python/models.py with spconv_mlir.torch's imports."""
    path = os.path.join(ROOT, "examples", "python", "models.py")
    text = open(path).read()
    begin, end = text.index("# BEGIN imports"), text.index("# END imports")
    module = types.ModuleType("models")
    exec(compile(text[:begin] + TORCH_IMPORTS + text[end:], path, "exec"), module.__dict__)
    return module


class TorchOps:
    """The conv op of spconv_mlir.torch's modules computed by torch ops over
    the same rulebooks: per kernel offset, the pairs' input rows gathered,
    multiplied by the offset's weight and added into the output rows."""

    def __init__(self, ops):
        self.subm_rulebook = ops.subm_rulebook
        self.strided_rulebook = ops.strided_rulebook

    @staticmethod
    def rulebook_conv(in_rows, out_rows, offsets, sites, features, weight, bias, spec):
        import torch

        from spconv_mlir.torch import ConvSpec

        s = ConvSpec.from_json(spec)
        if s.groups != 1:
            raise NotImplementedError("groups")
        src, dst = (out_rows, in_rows) if s.op == "inverse_conv" else (in_rows, out_rows)
        out = features.new_zeros((sites.shape[0], s.out_channels))
        bounds = offsets.tolist()
        for k in range(len(bounds) - 1):
            a, b = bounds[k], bounds[k + 1]
            if a == b:
                continue
            rows = features.index_select(0, src[a:b].long()) @ weight[k]
            out = out.index_add(0, dst[a:b].long(), rows)
        return out + bias if bias is not None else out

    def rulebook_pool(self, *args):
        raise NotImplementedError("pools")


def scan(sites, work):
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "workloads", "gen_workload.py"),
                    "lidar", os.path.join(work, "scan"), "--sites", str(sites), "--seed", "5"],
                   check=True, capture_output=True)
    import numpy as np

    return np.load(os.path.join(work, "scan_coords.npy"))


def one_config(args):
    """In a process of its own: times one (model, path) at one thread
    count; prints JSON."""
    import numpy as np
    import torch

    import spconv_mlir.torch as sp
    from spconv_mlir.torch import modules

    torch.set_num_threads(args.one_threads)
    coords = np.load(args.one_coords)
    models = load_models()
    if args.one_path == "torch-ops":
        modules.ops = TorchOps(sp.ops)
    indices = torch.from_numpy(coords.astype(np.int32))
    # The check runs in f64: the models' BatchNorms (training mode) amplify
    # f32 rounding through a deep backward by up to 1e-2 of the scale.
    dtype = torch.float64 if args.one_check else torch.float32
    features = torch.from_numpy(np.random.default_rng(0).standard_normal(
        (len(coords), 4))).to(dtype)
    torch.manual_seed(0)
    net = getattr(models, args.one_model)().to(dtype)
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)

    def step(split=None):
        start = time.perf_counter()
        opt.zero_grad()
        out = net(sp.SparseConvTensor(features, indices, GRID, 1))
        loss = out.features.square().mean()
        middle = time.perf_counter()
        loss.backward()
        opt.step()
        if split is not None:
            split.append(((middle - start) * 1000, (time.perf_counter() - middle) * 1000))
        return out, loss

    if args.one_check:
        # The first step's output and gradients, for the comparison.
        out, loss = step()
        torch.save({"features": out.features.detach(), "loss": loss.detach(),
                    "grads": {n: p.grad for n, p in net.named_parameters()}}, args.one_check)
        return
    start = time.perf_counter()
    step()  # compiles (or loads from the store), warms the caches
    first_ms = (time.perf_counter() - start) * 1000
    times, split = [], []
    for _ in range(args.steps):
        start = time.perf_counter()
        step(split)
        times.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"first_ms": first_ms, "ms": statistics.median(times),
                      "forward_ms": statistics.median(f for f, _ in split),
                      "backward_ms": statistics.median(b for _, b in split)}))


def run_config(args, model, path, threads, coords, store, check=None, steps=None):
    # Both paths' torch ops run on the OpenMP runtime --torch-openmp names.
    env = torch_env.child_env(threads, args.torch_openmp)
    env["SPCONV_MLIR_CACHE_DIR"] = store
    cmd = [sys.executable, os.path.abspath(__file__), "--one-model", model, "--one-path", path,
           "--one-threads", str(threads), "--one-coords", coords,
           "--steps", str(steps or args.steps)]
    if check:
        cmd += ["--one-check", check]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("%s / %s failed:\n%s" % (model, path, result.stderr[-3000:]))
    return None if check else json.loads(result.stdout.strip().splitlines()[-1])


def compare(work, model):
    import torch

    a = torch.load(os.path.join(work, model + "-custom-ops.pt"))
    b = torch.load(os.path.join(work, model + "-torch-ops.pt"))

    def rel(x, y):
        return ((x - y).abs().max() / y.abs().max().clamp(min=1e-30)).item()

    worst = max([rel(a["features"], b["features"])] +
                [rel(a["grads"][n], b["grads"][n]) for n in a["grads"]])
    if worst > 1e-9:
        sys.exit("%s: the two paths differ by %.1e of the scale" % (model, worst))
    return worst


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sites", type=int, default=100000)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--models", default="VoxelBackBone8x,MinkUNet")
    torch_env.add_torch_openmp_option(p)
    for name in ("model", "path", "threads", "coords", "check"):
        p.add_argument("--one-" + name, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one_model:
        args.one_threads = int(args.one_threads)
        return one_config(args)
    work = tempfile.mkdtemp(prefix="bench-torch-training-")
    coords = os.path.join(work, "scan_coords.npy")
    n = len(scan(args.sites, work))
    rows, first_steps = [], []
    thread_counts = [int(t) for t in args.threads.split(",")]
    for model in args.models.split(","):
        # The checks (f64 kernels) compile into a store of their own, so
        # that the first timed process starts from an empty one.
        for path in ("custom-ops", "torch-ops"):
            run_config(args, model, path, 1, coords, os.path.join(work, "store-check"),
                       check=os.path.join(work, "%s-%s.pt" % (model, path)))
        worst = compare(work, model)
        store = os.path.join(work, "store-" + model)
        for threads in thread_counts:
            ours = run_config(args, model, "custom-ops", threads, coords, store)
            theirs = run_config(args, model, "torch-ops", threads, coords, store)
            rows.append((model, threads, ours, theirs, worst))
            if threads == thread_counts[0]:
                cold = ours
        warm = run_config(args, model, "custom-ops", thread_counts[0], coords, store, steps=1)
        first_steps.append((model, thread_counts[0], cold, warm))
    print("One training step (forward, loss, backward, SGD), %d sites (LiDAR scan, seed 5), "
          "median of %d warm steps, f32; outputs and gradients of both paths agree "
          "first (f64; agreement: the largest difference over their scale).\n"
          % (n, args.steps))
    print("Forward: the model and the loss; backward: loss.backward() and the SGD step. "
          "torch's own threads on %s.\n" % args.torch_openmp)
    print("| model | threads | spconv_mlir.torch ms | forward ms | backward ms | "
          "backward / forward | torch ops over our rulebooks ms | speedup | agreement |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for model, threads, ours, theirs, worst in rows:
        print("| %s | %d | %.1f | %.1f | %.1f | %.2f | %.1f | %.2fx | %.0e |" % (
            model, threads, ours["ms"], ours["forward_ms"], ours["backward_ms"],
            ours["backward_ms"] / ours["forward_ms"], theirs["ms"],
            theirs["ms"] / ours["ms"], worst))
    print("\nThe first step of a process, spconv_mlir.torch: with a cold kernel store (empty: "
          "it compiles every kernel set) and a warm one (the store the cold process filled: "
          "it loads them), beside a later step.\n")
    print("| model | threads | first step, cold store s | first step, warm store ms | "
          "later step ms |")
    print("|---|---:|---:|---:|---:|")
    for model, threads, cold, warm in first_steps:
        print("| %s | %d | %.1f | %.1f | %.1f |" % (
            model, threads, cold["first_ms"] / 1000, warm["first_ms"], cold["ms"]))


if __name__ == "__main__":
    main()
