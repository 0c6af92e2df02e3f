"""Phase `correctness`: every device result against the CPU build of the
same function run on the same machine and, for the execution matrix,
against spconv-ref (the plain C++ reference) with the suite's tolerances.

The matrix reuses test/Integration/CPU/conv_matrix.py as the test suite
runs it here: its cases, inputs, reference calls and comparisons; only the
compiled side changes, from `spconv-run` (which needs LLVM) to the kit's
ahead-of-time libraries.
"""
import os
import re
import subprocess

import numpy as np

import conv_matrix

from .context import compare
from .inputs import network_arguments
from .library import DTYPES


def case_tolerance(case):
    values = case.tolerance()
    return float(values[1]), float(values[3])


class KitRunner(conv_matrix.Runner):
    """conv_matrix's runner with the compiled side played by the kit: the
    device build of `device_name`, checked against the CPU build of
    `cpu_name` on the same inputs before the reference sees it."""

    def __init__(self, ctx, work, tf32=False):
        super().__init__(os.path.join(ctx.root, "bin"), work, "sorted", target="kit",
                         tf32=tf32)
        self.ctx = ctx
        self.device_name = self.cpu_name = None
        self.device_target = None  # the context's choice

    def spconv_run(self, path):
        return ["@kit", path("out")]

    def run(self, args, case):
        if args[0] != "@kit":
            return super().run(args, case)
        inputs = [np.load(args[i + 1]) for i, a in enumerate(args) if a == "--input"]
        device = self.ctx.on_device(self.device_name, *inputs, target=self.device_target)
        cpu = self.ctx.on_cpu(self.cpu_name, *inputs)
        rtol, atol = case_tolerance(case)
        for i, (d, c) in enumerate(zip(device, cpu)):
            compare(d, c, rtol, atol, "result %d against the CPU build" % i)
        os.makedirs(args[1], exist_ok=True)
        for i, d in enumerate(device):
            np.save(os.path.join(args[1], "out%d.npy" % i), d)
        return None


def check_matrix(ctx):
    cases = {c.name: c for c in conv_matrix.cases()}
    names = ctx.names("matrix")
    if ctx.quick:
        names = [n for n in names if n.startswith("matrix/")][::3]
    runners = {False: KitRunner(ctx, os.path.join(ctx.work, "matrix")),
               True: KitRunner(ctx, os.path.join(ctx.work, "matrix-tf32"), tf32=True)}
    for name in names:
        meta = ctx.functions[name]["meta"]
        tf32 = bool(meta.get("tf32"))
        runner = runners[tf32]
        runner.device_name = name
        runner.cpu_name = "matrix/" + meta["case"]
        ctx.checks.run(name, runner.check, cases[meta["case"]])


def check_networks(ctx):
    names = ctx.names("network")
    if ctx.quick:
        names = [n for n in names if n == "network/second"]
    for name in names:
        def one():
            args = network_arguments(ctx, name, ctx.sites)
            device = ctx.on_device(name, *args)
            cpu = ctx.on_cpu(name, *args)
            for i, (d, c) in enumerate(zip(device, cpu)):
                if d.dtype.kind in "iu":
                    compare(d, c, 0, 0, "result %d (sites)" % i)
                else:
                    # Relative to the result's scale: the training step's
                    # gradients are means over the sites, far below 1.
                    scale = float(np.abs(c).max()) if c.size else 0.0
                    compare(d, c, 1e-4, 1e-4 * max(scale, 1e-30), "result %d" % i)
            ctx.data.setdefault("networks", {})[name] = {
                "sites": int(len(args[0])),
                "results": [list(d.shape) for d in device]}
        ctx.checks.run("%s (%d sites)" % (name, ctx.sites), one)


def typed_inputs(manifest, rng, sites=150, channels=5):
    """Arguments made from an entry's types: coordinates on the grid of
    their type (batch 2, distinct sites), features and gradients with a row
    per site, static extents as written, other dynamic extents `channels`."""
    args = []
    for param in manifest["entries"][0]["arguments"]:
        text = param["mlir_type"]
        dims = text[len("tensor<"):].split(",")[0].split("x")[:-1]
        grid = re.search(r"#spconv\.grid<\[([\d, ]+)\]>", text)
        if grid:
            extents = [2] + [int(v) for v in grid.group(1).split(",")]
            count = min(sites, int(np.prod(extents)) // 2)
            keys = np.sort(rng.choice(int(np.prod(extents)), size=count, replace=False))
            args.append(np.stack(np.unravel_index(keys, extents), axis=1).astype(np.int32))
            continue
        shape = [len(args[0]) if i == 0 and d == "?" else channels if d == "?" else int(d)
                 for i, d in enumerate(dims)]
        dtype = DTYPES[param["element"]]
        args.append(rng.standard_normal(shape).astype(dtype))
    return args


def check_gradients(ctx):
    rng = np.random.default_rng(7)
    for name in ctx.names("gradient"):
        def one():
            args = typed_inputs(ctx.library(name, "cpu").manifest, rng)
            device = ctx.on_device(name, *args)
            cpu = ctx.on_cpu(name, *args)
            tolerance = 1e-10 if args[1].dtype == np.float64 else 1e-4
            for i, (d, c) in enumerate(zip(device, cpu)):
                compare(d, c, tolerance, tolerance, "result %d against the CPU build" % i)
        ctx.checks.run(name, one)


def check_runtime_tests(ctx):
    """The runtime's CudaDevice.* unit tests (they need a device)."""
    binary = os.path.join(ctx.root, "bin", "spconv-runtime-cuda-tests")
    if ctx.mode != "cuda":
        ctx.checks.notes.append("the runtime's CudaDevice.* tests need a device: not run")
        return
    if not os.path.exists(binary):
        ctx.checks.fail("CudaDevice.*", "the kit has no spconv-runtime-cuda-tests")
        return
    result = subprocess.run([binary, "--gtest_filter=CudaDevice.*:CudaMemRef.*"],
                            capture_output=True, text=True, timeout=120)
    summary = [l for l in result.stdout.splitlines() if l.startswith("[  PASSED  ]")
               or l.startswith("[  FAILED  ]")]
    ctx.data["runtime_tests"] = summary
    if result.returncode == 0:
        ctx.checks.ok("CudaDevice.* (%s)" % (summary[0] if summary else "passed"))
    else:
        ctx.checks.fail("CudaDevice.*", "\n".join(summary + failed_test_output(result.stdout))
                        or result.stdout[-2000:])


def failed_test_output(stdout):
    """What each failed gtest printed between its RUN and FAILED lines (the
    failed expectations), at most 40 lines of each."""
    out, block = [], []
    for line in stdout.splitlines():
        if line.startswith("[ RUN      ]"):
            block = [line]
        elif line.startswith("[       OK ]") or line.startswith("[  SKIPPED ]"):
            block = []
        elif line.startswith("[  FAILED  ]") and block:
            out += block[:40] + [line]
            block = []
        elif block:
            block.append(line)
    return out


def run(ctx):
    check_runtime_tests(ctx)
    check_matrix(ctx)
    check_gradients(ctx)
    check_networks(ctx)
