#!/usr/bin/env python3
# ===- run.py - Layer sweep, scaling and network benchmark ----------------=== #
#
# Part of the spconv-mlir project.
#
# ===----------------------------------------------------------------------=== #
"""One benchmark command: the layer sweep, the scaling study and
VoxelBackBone8x, side by side with the baselines, in one run.

usage: /usr/bin/python3 bench/run.py [--workload KIND:SITES ...] [--threads 1,2]
           [--repeat 3] [--calls 3] [--out results/] [--cases c4_c32_k3,...]
           [--scaling-sites 10000,30000,100000,300000] [--no-scaling]
           [--grid-scales 1,2,4] [--no-grid-memory]
           [--no-network] [--target cpu|cuda|gpu-emulator] [--spconv2-python PYTHON]
           [--bin build/bin] [--baselines build/bench/baselines]

Workloads come from bench/workloads/gen_workload.py (KIND lidar, uniform or
indoor; seed --seed). lidar and uniform live on the KITTI grid
[41, 1600, 1408]; indoor on the room's own grid (a copy of the layer suite on
that grid is generated). Default: lidar:100000.

Per workload, thread count and layer of bench/models/layers.mlir (subm K^3,
Cin -> Cout: the sweep and the goals' 64 -> 64) it runs, interleaved,
--repeat times:

  ours       spconv-run --profile on that one function (rulebook build and
             compute, each timed inside the generated code), called --calls
             times in one process, the last call timed (warm, as the
             baselines time a repeat after a warm-up); end-to-end is the sum
             of build and compute; peak memory is the spconv-run process's
             max RSS as /usr/bin/time reports it (JIT compiler and compile
             included)
  v1         spconv-v1-cpu (spconv v1's CPU algorithm), same layer
  sgemm      sgemm-roofline, gemm_hot_ms: OpenBLAS on cache-hot gathered rows
  dense      dense-gemm: the im2col GEMM of a dense conv over the sites'
             tightest box (projected from a tile above 4 GiB of im2col)
  spconv2    with --spconv2-python, the real spconv 2.x CPU library
             (bench/baselines/spconv2_layer.py run by that Python, one that
             imports spconv: docs/Benchmarks.md, "Real libraries")

and reports medians. Pair counts come from the reference (spconv-ref
rulebook) and are checked against spconv-v1-cpu's. The scaling study runs
the 16 -> 16 layer at K = 3 and 5 on LiDAR scans of --scaling-sites sites
(denser as they grow) and on batches of --density-batches scans of
--density-sites sites each (a fixed density), and fits log(time) against
log(sites). The grid-memory study runs the 16 -> 16
layer on the first KITTI-grid workload with the grid scaled by each of
--grid-scales per axis (volume x1, x8, x64): peak memory must not follow the
volume. VoxelBackBone8x (examples/second_middle_encoder.mlir, which is that
network) runs end to end on every KITTI-grid workload, the MinkUNet
(examples/minkunet.mlir, SparseResUNet42-like: 32, 64, 128, 256 and back)
on every workload, its sites rescaled onto its grid. The "Goals" table
checks the figures of issue 6 on the lidar workload closest to 100k sites.

--target cuda runs the GPU benchmark of bench/run_gpu.py instead (ours on a
GPU beside spconv 2.x's GPU wheel); --target gpu-emulator its dry run with
the CUDA kernels emulated on the CPU.

Writes DIR/results.md (the tables, also printed), DIR/results.json (every
sample) and PNG plots (matplotlib: apt-get install python3-matplotlib).
Degenerate figures of tiny or noisy runs are reported, not fatal: a ratio
over a time of 0 ms prints as inf (nan for 0 / 0), a fit through a zero time
as nan, and a fitted exponent may come out negative.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "models"))
import gen_layers  # noqa: E402  (the suite's cases and names)

KITTI = (41, 1600, 1408)


# ===----------------------------------------------------------------------=== #
# Running programs
# ===----------------------------------------------------------------------=== #

TIME = "/usr/bin/time"  # GNU time (Debian package `time`)


class Run:
    """The result of one program run: its output and its peak memory."""

    def __init__(self, stdout, stderr, max_rss_kib, wall_s):
        self.stdout = stdout
        self.stderr = stderr
        self.max_rss_mib = max_rss_kib / 1024.0
        self.wall_s = wall_s


# The environment of every BLAS-backed side (the C++ baselines, numpy's and
# torch's OpenBLAS in spconv 2.x): OPENBLAS_CORETYPE when choose_blas() set
# one. Ours does not use a BLAS.
BLAS_ENV = {}


def run(args, measure=False, env=None):
    """Runs `args` and exits on failure. With `measure`, the peak RSS is
    the program's own max RSS as GNU time reports it (`%M`, what `time -v`
    calls "Maximum resident set size"). Not wait4's ru_maxrss of a child of
    this script: Linux starts a child's ru_maxrss at the RSS of the process
    it was forked from (here, Python with numpy), so a small tool would
    inherit this script's footprint."""
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = os.path.join(tmp, "rss")
        command = [TIME, "-f", "%M", "-o", rss_file] + args if measure else args
        start = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True,
                                env=dict(os.environ, **env) if env else None)
        wall = time.monotonic() - start
        rss = float(open(rss_file).read().split()[-1]) if measure and os.path.exists(rss_file) else 0.0
    if result.returncode != 0:
        sys.exit("%s failed (exit %d):\n%s%s" % (" ".join(args), result.returncode,
                                                  result.stdout, result.stderr))
    return Run(result.stdout, result.stderr, rss, wall)


def metrics(text):
    """The `name value` lines of a baseline's output, as floats."""
    values = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                values[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return values


def profile_table(text):
    """Rows (ms, rows, op) of spconv-run --profile's table."""
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) > 3 and parts[0].isdigit():
            rows.append((float(parts[1]), int(parts[2]), parts[3]))
    return rows


def phase_ms(stderr, phase):
    """One phase's wall time from spconv-run --time (stderr)."""
    match = re.search(r"spconv-run: %s\s+([\d.]+) ms" % phase, stderr)
    return float(match.group(1)) if match else float("nan")


# ===----------------------------------------------------------------------=== #
# Figures that tolerate degenerate measurements
# ===----------------------------------------------------------------------=== #
# On tiny workloads a time can round to 0 ms, and a fit over two noisy points
# can come out with any sign. The report prints such figures as they are
# (negative, `inf`, `nan`) instead of failing; they are never checked.


def ratio(numerator, denominator):
    """numerator / denominator as a float: inf (or -inf) for a zero
    denominator, nan for 0 / 0, instead of ZeroDivisionError."""
    if denominator == 0:
        if numerator == 0 or numerator != numerator:
            return float("nan")
        return float("inf") if numerator > 0 else float("-inf")
    return numerator / denominator


def log_slope(x, y):
    """b of the least-squares fit log(y) = a + b log(x), or nan when a point
    is not positive and finite or fewer than two distinct x remain."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if (len(x) < 2 or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y)))
            or np.any(x <= 0) or np.any(y <= 0) or len(set(x.tolist())) < 2):
        return float("nan")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def line_fit(x, y):
    """(slope, intercept) of the least-squares line, nan when fewer than two
    distinct x or a value is not finite."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if (len(x) < 2 or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y)))
            or len(set(x.tolist())) < 2):
        return float("nan"), float("nan")
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(intercept)


# ===----------------------------------------------------------------------=== #
# Workloads and inputs
# ===----------------------------------------------------------------------=== #

class Workload:
    """A generated set of sites and the grid the layers run on."""

    def __init__(self, kind, sites, path, grid, batch=1):
        self.kind = kind
        self.sites = sites
        self.batch = batch
        self.coords = path
        self.grid = grid
        self.n = len(np.load(path))

    @property
    def name(self):
        # Inputs are cached by this name: batches must not share it.
        suffix = "x%d" % self.batch if self.batch > 1 else ""
        return "%s_%d%s" % (self.kind, self.sites, suffix)

    @property
    def on_kitti(self):
        return tuple(self.grid) == KITTI


def generate_workload(spec, seed, work, batch=1):
    """Writes (once) the sites of `KIND:SITES` (per batch sample) and returns
    the Workload."""
    kind, _, sites = spec.partition(":")
    if kind not in ("lidar", "uniform", "indoor") or not sites.isdigit():
        sys.exit("bad --workload %r: expected lidar|uniform|indoor:SITES" % spec)
    prefix = os.path.join(work, "%s_%s_s%d%s" % (kind, sites, seed,
                                                 "_b%d" % batch if batch > 1 else ""))
    path = prefix + "_coords.npy"
    if not os.path.exists(path):
        run([sys.executable, os.path.join(HERE, "workloads", "gen_workload.py"), kind, prefix,
             "--sites", sites, "--seed", str(seed), "--batch", str(batch)])
    grid = KITTI
    if kind == "indoor":
        grid = tuple(int(v) for v in np.load(path)[:, 1:].max(axis=0) + 1)
    return Workload(kind, int(sites), path, grid, batch)


def layer_module(cin, cout, k, grid, work):
    """A module holding only the layer's function (so each spconv-run
    compiles, and its peak RSS counts, one layer), on `grid`."""
    name = gen_layers.entry_name(cin, cout, k)
    path = os.path.join(work, "%s_g%s.mlir" % (name, "x".join(map(str, grid))))
    if not os.path.exists(path):
        if tuple(grid) == KITTI:
            # Sliced from the checked-in suite: what is measured is that file.
            text = open(os.path.join(HERE, "models", "layers.mlir")).read()
            match = re.search(r"^func\.func @%s\(.*?^}\n" % name, text, re.S | re.M)
            if not match:
                sys.exit("bench/models/layers.mlir has no @%s; rerun gen_layers.py" % name)
            body = match.group(0)
        else:
            body = gen_layers.layer_function(cin, cout, k, grid)
        with open(path, "w") as f:
            f.write(body)
    return path, name


def layer_inputs(workload, cin, cout, k, work):
    """Random features [N x Cin] and weights [K^3 x Cin x Cout] (He scale)."""
    prefix = os.path.join(work, "%s_c%d_c%d_k%d" % (workload.name, cin, cout, k))
    features, weights = prefix + "_f.npy", prefix + "_w.npy"
    if not os.path.exists(weights):
        rng = np.random.default_rng(cin * 1000 + cout * 10 + k)
        np.save(features, rng.standard_normal((workload.n, cin)).astype(np.float32))
        np.save(weights, (rng.standard_normal((k ** 3, cin, cout)) *
                          np.sqrt(2.0 / (k ** 3 * cin))).astype(np.float32))
    return ["--input", workload.coords, "--input", features, "--input", weights]


def input_files(inputs):
    """(features, weights) of layer_inputs' arguments."""
    return inputs[3], inputs[5]


def reference_pairs(opts, workload, k, work):
    """The subm K^3 pair count from spconv-ref rulebook (the reference)."""
    out = run([os.path.join(opts.bin, "spconv-ref"), "rulebook", "--kind", "subm",
               "--kernel", str(k), "--grid", ",".join(map(str, workload.grid)),
               "--coords", workload.coords, "--out-dir", os.path.join(work, "ref")])
    return int(re.search(r"^pairs: (\d+)", out.stdout, re.M).group(1))


# ===----------------------------------------------------------------------=== #
# Measurements
# ===----------------------------------------------------------------------=== #

def spconv_run(opts, module, entry, threads):
    """The spconv-run command line of one measurement, without inputs: the
    last of --calls calls is the one --profile and --time report."""
    return [os.path.join(opts.bin, "spconv-run"), module, "--entry", entry,
            "--output-dir", os.path.join(opts.work, "out"), "--profile",
            "--num-threads", str(threads), "--repeat", str(opts.calls),
            "--target", opts.target, "--mcpu", opts.mcpu, "--no-cache"]


def warm_recompile(opts, module, entry, inputs, threads, work):
    """The compile time of a second process, which loads the code a first
    one left in a fresh cache: parse + load (ms; nan where the target is not
    cached)."""
    cache = os.path.join(work, "cache", entry)
    shutil.rmtree(cache, ignore_errors=True)
    cmd = spconv_run(opts, module, entry, threads)
    cmd = cmd[:cmd.index("--no-cache")] + ["--cache-dir", cache, "--time", "--repeat", "1"]
    run(cmd + inputs)
    result = run(cmd + inputs)
    return phase_ms(result.stderr, "parse") + phase_ms(result.stderr, "load")


def ours(opts, module, entry, inputs, threads, out_dir=None):
    """One spconv-run of a layer (--calls calls in one process): build ms,
    compute ms of the last call, the cold first call (whole function) and
    the compile time (lower + JIT), peak RSS MiB."""
    cmd = spconv_run(opts, module, entry, threads) + ["--time"] + inputs
    if out_dir:
        cmd[cmd.index("--output-dir") + 1] = out_dir
    result = run(cmd, measure=True)
    rows = profile_table(result.stdout)
    build = sum(ms for ms, _, op in rows if op == "build_rulebook")
    compute = sum(ms for ms, _, op in rows if op == "rulebook_conv")
    first = phase_ms(result.stderr, "first" if opts.calls > 1 else "run")
    return {"build_ms": build, "compute_ms": compute, "e2e_ms": build + compute,
            "first_ms": first,
            "compile_ms": phase_ms(result.stderr, "lower") + phase_ms(result.stderr, "jit"),
            "rss_mib": result.max_rss_mib}


def outputs_args(out_dir, name):
    """--out / --out-coords of a side that writes its output (or nothing)."""
    if not out_dir:
        return []
    return ["--out", os.path.join(out_dir, name + "_f.npy"),
            "--out-coords", os.path.join(out_dir, name + "_c.npy")]


def baselines(opts, workload, cin, cout, k, threads, inputs, out_dir=None):
    """One process of each baseline on the same features and weights as
    ours, with the same policy: --calls calls, the first (cold) reported
    apart, the last timed. With `out_dir` the outputs are written there."""
    features, weights = input_files(inputs)
    common = ["--coords", workload.coords, "--grid", ",".join(map(str, workload.grid)),
              "--kernel", str(k), "--cin", str(cin), "--cout", str(cout),
              "--threads", str(threads), "--repeat", str(opts.calls - 1),
              "--features", features, "--weight", weights]
    tool = lambda name: os.path.join(opts.baselines, name)  # noqa: E731
    v1 = run([tool("spconv-v1-cpu")] + common + outputs_args(out_dir, "v1"), measure=True,
             env=BLAS_ENV)
    sgemm_run = run([tool("sgemm-roofline")] + common + outputs_args(out_dir, "sgemm"),
                    env=BLAS_ENV)
    sgemm = metrics(sgemm_run.stdout)
    dense = metrics(run([tool("dense-gemm")] + common +
                        ["--max-bytes", str(opts.dense_max_bytes)], env=BLAS_ENV).stdout)
    # The floor of a sorted-key subm rulebook: counting its pairs by merging
    # the sorted keys with themselves, shifted (no sort, no writes).
    merge = metrics(run([tool("merge-join-count"), "--coords", workload.coords,
                         "--grid", ",".join(map(str, workload.grid)), "--kernel", str(k),
                         "--threads", str(threads), "--repeat", str(opts.calls - 1)]).stdout)
    v1m = metrics(v1.stdout)
    note_blas("spconv-v1-cpu", v1.stdout)
    note_blas("sgemm-roofline", sgemm_run.stdout)
    return {"v1_rulebook_ms": v1m["rulebook_ms_last"], "v1_conv_ms": v1m["conv_ms_last"],
            "v1_total_ms": v1m["total_ms_last"], "v1_first_ms": v1m["total_ms_first"],
            "v1_pairs": v1m["pairs"], "v1_rss_mib": v1.max_rss_mib,
            "sgemm_hot_ms": sgemm["gemm_hot_ms_last"],
            "sgemm_best_ms": sgemm["gemm_best_ms_last"],
            "sgemm_first_ms": sgemm["gemm_best_ms_first"],
            "dense_ms": dense["dense_gemm_ms_last"], "dense_first_ms": dense["dense_gemm_ms_first"],
            "dense_projected": dense["dense_projected"], "dense_volume": dense["dense_volume"],
            "merge_join_ms": merge["merge_ms_last"]}


def spconv2(opts, workload, cin, cout, k, threads, inputs, out_dir=None):
    """One process of the real spconv 2.x, same inputs and policy as ours:
    its C++ ops driven like spconv.pytorch (`s2_`), and where torch imports
    spconv.pytorch's own module (`s2m_`)."""
    if not opts.spconv2_python or threads not in opts.spconv2_threads:
        return {}
    features, weights = input_files(inputs)
    common = [opts.spconv2_python, os.path.join(HERE, "baselines", "spconv2_layer.py"),
              "--coords", workload.coords, "--grid", ",".join(map(str, workload.grid)),
              "--kernel", str(k), "--cin", str(cin), "--cout", str(cout),
              "--threads", str(threads), "--repeat", str(opts.calls - 1),
              "--features", features, "--weight", weights]
    result = run(common + outputs_args(out_dir, "s2"), env=BLAS_ENV)
    note_blas("spconv 2.x (numpy matmul)", result.stdout)
    m = metrics(result.stdout)
    row = {"s2_rulebook_ms": m["rulebook_ms_last"], "s2_conv_ms": m["conv_ms_last"],
           "s2_total_ms": m["total_ms_last"], "s2_first_ms": m["total_ms_first"],
           "s2_pairs": m["pairs"]}
    if opts.spconv2_torch:
        result = run(common + ["--api", "module"] + outputs_args(out_dir, "s2m"), env=BLAS_ENV)
        note_blas("spconv 2.x (SubMConv3d, torch)", result.stdout)
        m = metrics(result.stdout)
        row.update(s2m_total_ms=m["total_ms_last"], s2m_first_ms=m["total_ms_first"])
    return row


def medians(samples):
    """{metric: median over the repeats, metric_min, metric_max} of a list
    of {metric: value} (the spread is reported, not only the median)."""
    row = {}
    for key in samples[0]:
        values = [s[key] for s in samples]
        row[key] = statistics.median(values)
        row[key + "_min"] = min(values)
        row[key + "_max"] = max(values)
    return row


# ===----------------------------------------------------------------------=== #
# The BLAS of the baselines, the machine's limits, equal outputs
# ===----------------------------------------------------------------------=== #

# side -> the OpenBLAS kernels it reported (blas_core lines).
BLAS_SEEN = {}


def note_blas(side, stdout):
    """Records the `blas_core` (or `# blas_core`) line of a side's output."""
    match = re.search(r"^(?:# )?blas_core (.+)$", stdout, re.M)
    if match:
        BLAS_SEEN.setdefault(side, set()).add(match.group(1).strip())


def cpu_flags():
    """The flags of /proc/cpuinfo's first processor (a set)."""
    try:
        with open("/proc/cpuinfo") as f:
            match = re.search(r"^flags\s*: (.*)$", f.read(), re.M)
        return set(match.group(1).split()) if match else set()
    except OSError:
        return set()


def blas_candidates(flags):
    """OPENBLAS_CORETYPE values worth trying on a CPU with these flags: the
    kernels of the widest vectors it has. OpenBLAS 0.3.21 picks its kernels
    from the CPU model, and falls back to Prescott's on a model it does not
    know (Intel family 6 model 207), whatever the vector units."""
    names = []
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        names += ["SkylakeX"] + (["Cooperlake"] if "avx512_bf16" in flags else [])
    if {"avx2", "fma"} <= flags:
        names += ["Haswell", "Zen"]
    return names


def choose_blas(opts, workload):
    """Sets BLAS_ENV: with --blas-coretype auto, times sgemm-roofline (64 ->
    64, subm 3x3x3, the most threads) under OpenBLAS's own choice and under
    each candidate of the CPU flags, best of 3 interleaved rounds of 3
    repeats, and keeps the fastest (the default unless another is more than
    5 % faster); NAME forces OPENBLAS_CORETYPE, `default` leaves it alone.
    Returns the probes for the report."""
    BLAS_ENV.clear()
    if opts.blas_coretype == "default":
        return []
    if opts.blas_coretype != "auto":
        BLAS_ENV["OPENBLAS_CORETYPE"] = opts.blas_coretype
        return []
    features = workload_features(workload, 64, opts.work)
    names = [None] + blas_candidates(cpu_flags())
    probes = [None] * len(names)
    # Three interleaved rounds; each candidate keeps its best repeat (what
    # the library reaches, least disturbed by other processes).
    for _ in range(3):
        for i, name in enumerate(names):
            env = {"OPENBLAS_CORETYPE": name} if name else {}
            result = run([os.path.join(opts.baselines, "sgemm-roofline"), "--coords",
                          workload.coords, "--grid", ",".join(map(str, workload.grid)),
                          "--cin", "64", "--cout", "64", "--threads", str(max(opts.threads)),
                          "--repeat", "3", "--features", features], env=env)
            m = metrics(result.stdout)
            core = re.search(r"^blas_core (.+)$", result.stdout, re.M)
            if probes[i] is None or m["gemm_best_gflops_max"] > probes[i]["gflops"]:
                probes[i] = {"coretype": name or "(OpenBLAS's choice)",
                             "core": core.group(1) if core else "?",
                             "gflops": m["gemm_best_gflops_max"], "ms": m["gemm_best_ms_min"]}
    best = max(probes, key=lambda p: p["gflops"])
    if best is not probes[0] and best["gflops"] > 1.05 * probes[0]["gflops"]:
        BLAS_ENV["OPENBLAS_CORETYPE"] = best["coretype"]
    return probes


def workload_features(workload, cin, work):
    """Seeded features [N x cin] of `workload` (for the BLAS probe)."""
    path = os.path.join(work, "%s_probe_c%d_f.npy" % (workload.name, cin))
    if not os.path.exists(path):
        rng = np.random.default_rng(cin)
        np.save(path, rng.standard_normal((workload.n, cin)).astype(np.float32))
    return path


_PEAK = {}


def machine_limits(opts, threads, read_bytes, write_bytes):
    """machine-peak's figures for `threads` with the bandwidths measured at
    the layer's footprints (cached)."""
    key = (threads, read_bytes, write_bytes)
    if key not in _PEAK:
        width = (["--vector-bits", str(opts.peak_vector_bits)]
                 if opts.peak_vector_bits else [])
        _PEAK[key] = metrics(run([os.path.join(opts.baselines, "machine-peak"),
                                  "--threads", str(threads),
                                  "--read-bytes", str(max(read_bytes, 4096)),
                                  "--write-bytes", str(max(write_bytes, 4096))]
                                 + width).stdout)
    return _PEAK[key]


def layer_limits(opts, workload, cin, cout, pairs, threads):
    """The layer's bounds on this machine: the FMA bound (2 P Cin Cout flops
    at the FP32 FMA rate `threads` sustain at the kernels' vector width,
    machine-peak's fma_measured_gflops) and the memory bound of a gather conv
    (each pair reads its input row, P Cin 4 bytes, at the streaming read
    bandwidth over a buffer the size of the features; every output row is
    written once, N Cout 4 bytes): both are lower bounds of any
    implementation that gathers per pair; the limit is the larger."""
    n = workload.n
    m = machine_limits(opts, threads, n * cin * 4, n * cout * 4)
    flops = 2.0 * pairs * cin * cout
    read, write = 4.0 * pairs * cin, 4.0 * n * cout
    flop_ms = ratio(flops, m["fma_measured_gflops"]) * 1e-6
    bw_ms = (ratio(read, m["read_gbs"]) + ratio(write, m["write_gbs"])) * 1e-6
    return {"peak_gflops": m["fma_measured_gflops"],
            "clock_peak_gflops": m["peak_gflops"], "clock_ghz": m["clock_ghz"],
            "vector_bits": m["vector_bits"], "fma_pipes": m["fma_pipes"],
            "read_gbs": m["read_gbs"], "write_gbs": m["write_gbs"],
            "bytes": read + write, "flop_bound_ms": flop_ms, "bw_bound_ms": bw_ms,
            "limit_ms": max(flop_ms, bw_ms)}


# (side, file prefix) of every side that writes its output.
CHECKED_SIDES = [("spconv-v1-cpu", "v1"), ("sgemm-roofline (gathered GEMMs, scattered)", "sgemm"),
                 ("spconv 2.x (ops, numpy matmul)", "s2"), ("spconv 2.x (SubMConv3d)", "s2m")]


def check_outputs(opts, workload, layer, threads, out_dir, sides=CHECKED_SIDES):
    """Compares every side's output with ours, on the same inputs: the
    output coordinates exactly (ours, a subm conv, keeps the input's, in
    their order), the features to --check-tolerance of the largest |ours|.
    Exits (no report, no times) on a mismatch; returns the verdicts."""
    ours_f = np.load(os.path.join(out_dir, "out0.npy"))
    coords = np.load(workload.coords).astype(np.int64)
    scale = max(float(np.abs(ours_f).max()) if ours_f.size else 0.0, 1e-30)
    found, bad = [], []
    for side, name in sides:
        fpath = os.path.join(out_dir, name + "_f.npy")
        if not os.path.exists(fpath):
            continue
        feats = np.load(fpath)
        c = np.load(os.path.join(out_dir, name + "_c.npy")).astype(np.int64)
        coords_ok = c.shape == coords.shape and bool(np.array_equal(c, coords))
        if feats.shape == ours_f.shape:
            err = float(np.abs(feats.astype(np.float64) - ours_f).max()) / scale \
                if feats.size else 0.0
        else:
            err = float("inf")
        ok = coords_ok and err <= opts.check_tolerance
        found.append({"workload": workload.name, "threads": threads, "layer": layer,
                      "side": side, "rows": int(feats.shape[0]), "coords_equal": coords_ok,
                      "rel_err": err, "ok": ok})
        if not ok:
            bad.append("%s: coordinates %s, max |difference| / max |ours| = %.3g (shape %s "
                       "against ours %s)" % (side, "equal" if coords_ok else "DIFFER", err,
                                             feats.shape, ours_f.shape))
    if bad:
        hint = ""
        if threads > 1 and any(b.startswith("spconv 2.x") for b in bad):
            hint = ("\n(spconv 2.3.8 is known to go wrong on 2 threads, docs/Benchmarks.md "
                    "'Real libraries': --spconv2-threads 1)")
        sys.exit("output check FAILED on %s, %s, %d threads (inputs and outputs in %s):\n  %s%s"
                 % (workload.name, layer, threads, out_dir, "\n  ".join(bad), hint))
    return found


def sweep(opts, workload, work):
    """The layer sweep on one workload: a list of result rows."""
    pairs = {k: reference_pairs(opts, workload, k, work)
             for k in sorted({k for _, _, k in opts.cases})}
    rows = []
    for threads in opts.threads:
        for cin, cout, k in opts.cases:
            module, entry = layer_module(cin, cout, k, workload.grid, work)
            inputs = layer_inputs(workload, cin, cout, k, work)
            layer = "%d->%d k%d" % (cin, cout, k)
            samples = []
            for i in range(opts.repeat):
                # The first process of every side writes its output: checked
                # against ours before anything is timed further.
                out_dir = os.path.join(work, "check", "%s_%s_t%d" % (workload.name, entry,
                                                                     threads)) if i == 0 else None
                if out_dir:
                    # Fresh: a side that does not run must leave no output
                    # of an earlier run into the same --out to be checked.
                    shutil.rmtree(out_dir, ignore_errors=True)
                    os.makedirs(out_dir)
                sample = ours(opts, module, entry, inputs, threads, out_dir)
                sample.update(baselines(opts, workload, cin, cout, k, threads, inputs, out_dir))
                sample.update(spconv2(opts, workload, cin, cout, k, threads, inputs, out_dir))
                if out_dir:
                    CHECKS.extend(check_outputs(opts, workload, layer, threads, out_dir))
                samples.append(sample)
            row = medians(samples)
            for key, tool in (("v1_pairs", "spconv-v1-cpu"), ("s2_pairs", "spconv 2.x")):
                if key in row and row[key] != pairs[k]:
                    print("warning: %s k=%d: %s has %d pairs, spconv-ref %d"
                          % (workload.name, k, tool, row[key], pairs[k]), file=sys.stderr)
            flops = 2.0 * pairs[k] * cin * cout
            row.update(workload=workload.name, threads=threads, cin=cin, cout=cout, k=k,
                       pairs=pairs[k], entry=entry,
                       gflops=ratio(flops, row["compute_ms"]) * 1e-6,
                       v1_conv_gflops=ratio(flops, row["v1_conv_ms"]) * 1e-6,
                       sgemm_best_gflops=ratio(flops, row["sgemm_best_ms"]) * 1e-6,
                       dense_gflops=ratio(2.0 * row["dense_volume"] * k ** 3 * cin * cout,
                                          row["dense_ms"]) * 1e-6,
                       samples=samples)
            row.update(layer_limits(opts, workload, cin, cout, pairs[k], threads))
            rows.append(row)
            print("  %s t=%d %s: build %.1f compute %.1f ms, v1 %.1f ms, rss %.0f MiB"
                  % (workload.name, threads, entry, row["build_ms"], row["compute_ms"],
                     row["v1_total_ms"], row["rss_mib"]), file=sys.stderr)
    return rows


def scaling(opts, work):
    """Time and memory of the 16 -> 16 layer (K = 3, 5) against the sites:
    single scans of more and more sites (denser as they grow), and batches
    of 1 to 4 scans of --density-sites sites each (the same density)."""
    rows = []
    series = [("scan", s, 1) for s in opts.scaling_sites]
    series += [("batch", opts.density_sites, b) for b in opts.density_batches]
    for kind, sites, batch in series:
        workload = generate_workload("lidar:%d" % sites, opts.seed, work, batch)
        for k in (3, 5):
            module, entry = layer_module(16, 16, k, KITTI, work)
            inputs = layer_inputs(workload, 16, 16, k, work)
            count = metrics(run([os.path.join(opts.baselines, "merge-join-count"),
                                 "--coords", workload.coords, "--grid", "41,1600,1408",
                                 "--kernel", str(k), "--repeat", "1"]).stdout)["pairs"]
            for threads in opts.threads:
                samples = [ours(opts, module, entry, inputs, threads) for _ in range(opts.repeat)]
                row = medians(samples)
                row.update(series=kind, batch=batch, sites=workload.n, k=k, threads=threads,
                           pairs=int(count), samples=samples)
                rows.append(row)
                print("  scaling n=%d k=%d t=%d: e2e %.1f ms, rss %.0f MiB"
                      % (workload.n, k, threads, row["e2e_ms"], row["rss_mib"]), file=sys.stderr)
    return rows


def fit_scaling(rows):
    """Least-squares fits per (series, K, threads): the exponent of time
    against sites (log-log) for e2e, build and compute, and the RSS slope
    (MiB per 100k sites) with its intercept."""
    fits = []
    keys = sorted({(r["series"], r["k"], r["threads"]) for r in rows},
                  key=lambda key: (key[0] != "scan",) + key[1:])
    for series, k, threads in keys:
        sel = [r for r in rows
               if (r["series"], r["k"], r["threads"]) == (series, k, threads)]
        if len(sel) < 2:
            continue
        sites = [r["sites"] for r in sel]
        fit = {"series": series, "k": k, "threads": threads}
        for key in ("e2e_ms", "build_ms", "compute_ms"):
            fit[key + "_exponent"] = log_slope(sites, [r[key] for r in sel])
        # Pairs per site grow with a scan's density, so also against pairs.
        fit["pairs_exponent"] = log_slope(sites, [r["pairs"] for r in sel])
        fit["e2e_ms_vs_pairs_exponent"] = log_slope([r["pairs"] for r in sel],
                                                    [r["e2e_ms"] for r in sel])
        slope, intercept = line_fit(sites, [r["rss_mib"] for r in sel])
        fit["rss_mib_per_100k"] = slope * 1e5
        fit["rss_mib_at_0"] = intercept
        fits.append(fit)
    return fits


# The networks: (name, example file, entry, runs on the workload's own grid
# only when it is KITTI's).
NETWORKS = [
    ("VoxelBackBone8x", "second_middle_encoder", True),
    ("MinkUNet (SparseResUNet42-like)", "minkunet", False),
]


# The output checks of the layer sweep (check_outputs), for the report.
CHECKS = []


def network(opts, workload, work):
    """Each example network end to end: summed builds and computes, the
    whole function's run time (--time), compile time, peak RSS."""
    rows = []
    for name, entry, kitti_only in NETWORKS:
        if kitti_only and not workload.on_kitti:
            continue
        model = os.path.join(ROOT, "examples", entry + ".mlir")
        inputs_dir = os.path.join(work, "%s_%s" % (workload.name, entry))
        made = run([sys.executable, os.path.join(ROOT, "scripts", "make_inputs.py"), model,
                    entry, "--coords", workload.coords, "--out-dir", inputs_dir])
        inputs = made.stdout.split()
        for threads in opts.threads:
            samples = []
            for i in range(opts.repeat):
                check_dir = os.path.join(work, "check", "%s_%s_t%d" % (workload.name, entry,
                                                                       threads))
                cmd = spconv_run(opts, model, entry, threads) + ["--time"] + inputs
                if i == 0:
                    shutil.rmtree(check_dir, ignore_errors=True)
                    cmd[cmd.index("--output-dir") + 1] = os.path.join(check_dir, "ours")
                result = run(cmd, measure=True)
                table = profile_table(result.stdout)
                sample = {
                    "builds": sum(1 for _, _, op in table if op == "build_rulebook"),
                    "build_ms": sum(ms for ms, _, op in table if op == "build_rulebook"),
                    "compute_ms": sum(ms for ms, _, op in table if op != "build_rulebook"),
                    "run_ms": phase_ms(result.stderr, "run"),
                    "first_ms": phase_ms(result.stderr, "first" if opts.calls > 1 else "run"),
                    "compile_ms": phase_ms(result.stderr, "lower") + phase_ms(result.stderr, "jit"),
                    "rss_mib": result.max_rss_mib}
                if opts.spconv2_torch and threads in opts.spconv2_threads:
                    # spconv 2.x's own modules, same inputs and weights,
                    # BatchNorm and ReLU included (spconv2_networks.py).
                    s2 = run([opts.spconv2_python,
                              os.path.join(HERE, "baselines", "spconv2_networks.py"), model,
                              entry, "--threads", str(threads), "--repeat", str(opts.calls - 1)]
                             + inputs + (["--out-dir", os.path.join(check_dir, "s2")]
                                         if i == 0 else []), env=BLAS_ENV)
                    m = metrics(s2.stdout)
                    sample.update(s2_run_ms=m["total_ms_last"], s2_first_ms=m["total_ms_first"])
                    if i == 0:
                        CHECKS.append(check_network(opts, workload, name, threads, check_dir))
                samples.append(sample)
            row = medians(samples)
            if threads == opts.threads[0]:
                row["recompile_ms"] = warm_recompile(opts, model, entry, inputs, threads, work)
            row.update(network=name, workload=workload.name, threads=threads, layers=sum(
                1 for _, _, op in profile_table(result.stdout)
                if op in ("rulebook_conv", "inverse_conv")))
            rows.append(row)
            print("  %s %s t=%d: run %.1f ms, rss %.0f MiB"
                  % (name, workload.name, threads, row["run_ms"], row["rss_mib"]),
                  file=sys.stderr)
    return rows


def sorted_by_key(coords, feats):
    """Rows sorted by their (batch, z, y, x) key (regular convs number their
    outputs in different orders in different libraries)."""
    c = coords.astype(np.int64)
    order = np.lexsort(tuple(c[:, j] for j in range(c.shape[1] - 1, -1, -1)))
    return c[order], feats[order]


def check_network(opts, workload, name, threads, check_dir, other="s2",
                  side="spconv 2.x modules (BatchNorm, ReLU)"):
    """A network's outputs, ours against another side's (by default spconv
    2.x's modules, in check_dir/s2): coordinates exactly and features to
    --check-tolerance, rows compared in key order. Exits on a mismatch, as
    check_outputs."""
    oc, of = sorted_by_key(np.load(os.path.join(check_dir, "ours", "out0.npy")),
                           np.load(os.path.join(check_dir, "ours", "out1.npy")))
    sc, sf = sorted_by_key(np.load(os.path.join(check_dir, other, "out0.npy")),
                           np.load(os.path.join(check_dir, other, "out1.npy")))
    coords_ok = oc.shape == sc.shape and bool(np.array_equal(oc, sc))
    scale = max(float(np.abs(of).max()) if of.size else 0.0, 1e-30)
    err = (float(np.abs(sf.astype(np.float64) - of).max()) / scale if of.size else 0.0) \
        if coords_ok and sf.shape == of.shape else float("inf")
    ok = coords_ok and err <= opts.check_tolerance
    if not ok:
        sys.exit("output check FAILED on %s, %s, %d threads: %s: coordinates "
                 "%s, max |difference| / max |ours| = %.3g (outputs in %s)%s" % (
                     workload.name, name, threads, side, "equal" if coords_ok else "DIFFER",
                     err, check_dir, "; spconv 2.3.8's modules are known to go wrong on 2 "
                     "torch threads (docs/Benchmarks.md, 'Real libraries'): "
                     "--spconv2-threads 1" if threads > 1 and other == "s2" else ""))
    return {"workload": workload.name, "threads": threads, "layer": name,
            "side": side, "rows": int(sf.shape[0]),
            "coords_equal": coords_ok, "rel_err": err, "ok": ok}


def grid_memory(opts, workload, work):
    """The 16 -> 16 K = 3 layer on the same sites with the grid scaled per
    axis: time and peak memory against the dense grid's volume."""
    rows = []
    threads = max(opts.threads)
    inputs = layer_inputs(workload, 16, 16, 3, work)
    for scale in opts.grid_scales:
        grid = tuple(d * scale for d in workload.grid)
        module, entry = layer_module(16, 16, 3, grid, work)
        samples = [ours(opts, module, entry, inputs, threads) for _ in range(opts.repeat)]
        row = medians(samples)
        row.update(workload=workload.name, scale=scale, grid=list(grid),
                   volume=int(np.prod(grid)), threads=threads, samples=samples)
        rows.append(row)
        print("  grid x%d %s: e2e %.1f ms, rss %.0f MiB"
              % (scale, list(grid), row["e2e_ms"], row["rss_mib"]), file=sys.stderr)
    return rows


# ===----------------------------------------------------------------------=== #
# Reports
# ===----------------------------------------------------------------------=== #

def fmt_ms(value):
    """Milliseconds with a precision that suits their size."""
    return "%.0f" % value if value >= 100 else "%.1f" % value if value >= 1 else "%.2f" % value


def sweep_table(rows):
    """The layer sweep as Markdown (one table, every workload and thread)."""
    head = ("| workload | thr | layer | pairs | ours: build | ours: compute | ours: e2e "
            "| ours: GFLOP/s | ours: peak RSS | v1: rulebook | v1: conv | v1: total | v1 / ours "
            "| v1: GFLOP/s | v1: peak RSS | sgemm best | sgemm GFLOP/s | dense GEMM | dense GFLOP/s |")
    lines = [head, "|---|---:|---|---:" + "|---:" * 15 + "|"]
    for r in rows:
        dense = fmt_ms(r["dense_ms"]) + (" (proj.)" if r["dense_projected"] else "")
        lines.append("| %s | %d | %d->%d k%d | %d | %s | %s | %s | %.1f | %.0f MiB | %s | %s | %s "
                     "| %.2fx | %.1f | %.0f MiB | %s | %.1f | %s | %.1f |" % (
                         r["workload"], r["threads"], r["cin"], r["cout"], r["k"], r["pairs"],
                         fmt_ms(r["build_ms"]), fmt_ms(r["compute_ms"]), fmt_ms(r["e2e_ms"]),
                         r["gflops"], r["rss_mib"], fmt_ms(r["v1_rulebook_ms"]),
                         fmt_ms(r["v1_conv_ms"]), fmt_ms(r["v1_total_ms"]),
                         ratio(r["v1_total_ms"], r["e2e_ms"]), r["v1_conv_gflops"], r["v1_rss_mib"],
                         fmt_ms(r["sgemm_best_ms"]), r["sgemm_best_gflops"], dense,
                         r["dense_gflops"]))
    return "\n".join(lines)


def spread(r, key):
    """'median [min, max]' of a row's metric (ms)."""
    return "%s [%s, %s]" % (fmt_ms(r[key]), fmt_ms(r[key + "_min"]), fmt_ms(r[key + "_max"]))


def spread_table(rows):
    """Every side's time as median [min, max] over the processes (the last
    call of each), as Markdown."""
    s2 = any("s2_total_ms" in r for r in rows)
    s2m = any("s2m_total_ms" in r for r in rows)
    head = ("| workload | thr | layer | ours: e2e | ours: compute | v1: total | v1: conv "
            "| sgemm best | dense GEMM" + (" | spconv 2.x: total" if s2 else "")
            + (" | SubMConv3d: total" if s2m else "") + " |")
    lines = [head, "|---|---:|---|" + "---:|" * (6 + s2 + s2m)]
    for r in rows:
        cells = [spread(r, key) for key in ("e2e_ms", "compute_ms", "v1_total_ms", "v1_conv_ms",
                                            "sgemm_best_ms", "dense_ms")]
        if s2:
            cells.append(spread(r, "s2_total_ms") if "s2_total_ms" in r else "—")
        if s2m:
            cells.append(spread(r, "s2m_total_ms") if "s2m_total_ms" in r else "—")
        lines.append("| %s | %d | %d->%d k%d | %s |" % (r["workload"], r["threads"], r["cin"],
                                                      r["cout"], r["k"], " | ".join(cells)))
    return "\n".join(lines)


def cold_table(rows):
    """Cold first calls and compile time, apart from the warm figures."""
    s2 = any("s2_first_ms" in r for r in rows)
    s2m = any("s2m_first_ms" in r for r in rows)
    head = ("| workload | thr | layer | ours: compile (lower + JIT) | ours: first call "
            "| ours: last call | v1: first call | v1: last call | sgemm best: first call"
            + (" | spconv 2.x: first call" if s2 else "")
            + (" | SubMConv3d: first call" if s2m else "") + " |")
    lines = [head, "|---|---:|---|" + "---:|" * (6 + s2 + s2m)]
    for r in rows:
        cells = [fmt_ms(r["compile_ms"]), fmt_ms(r["first_ms"]), fmt_ms(r["e2e_ms"]),
                 fmt_ms(r["v1_first_ms"]), fmt_ms(r["v1_total_ms"]), fmt_ms(r["sgemm_first_ms"])]
        if s2:
            cells.append(fmt_ms(r["s2_first_ms"]) if "s2_first_ms" in r else "—")
        if s2m:
            cells.append(fmt_ms(r["s2m_first_ms"]) if "s2m_first_ms" in r else "—")
        lines.append("| %s | %d | %d->%d k%d | %s |" % (r["workload"], r["threads"], r["cin"],
                                                      r["cout"], r["k"], " | ".join(cells)))
    return "\n".join(lines)


def limits_table(rows):
    """Each layer against this machine's limits, as Markdown."""
    lines = ["| workload | thr | layer | FMA peak GFLOP/s (sustained) | FMA bound "
             "| bytes moved (min) "
             "| read / write GB/s | bandwidth bound | limit | ours: compute | ours: fraction "
             "| v1: conv fraction | sgemm best: fraction |",
             "|---|---:|---|" + "---:|" * 10]
    for r in rows:
        lines.append("| %s | %d | %d->%d k%d | %.0f | %s | %.1f MB | %.0f / %.0f | %s | %s | %s "
                     "| %.2f | %.2f | %.2f |" % (
                         r["workload"], r["threads"], r["cin"], r["cout"], r["k"],
                         r["peak_gflops"], fmt_ms(r["flop_bound_ms"]), r["bytes"] / 1e6,
                         r["read_gbs"], r["write_gbs"], fmt_ms(r["bw_bound_ms"]),
                         fmt_ms(r["limit_ms"]), fmt_ms(r["compute_ms"]),
                         ratio(r["limit_ms"], r["compute_ms"]),
                         ratio(r["limit_ms"], r["v1_conv_ms"]),
                         ratio(r["flop_bound_ms"], r["sgemm_best_ms"])))
    return "\n".join(lines)


def checks_table(checks):
    """The output checks as Markdown."""
    lines = ["| workload | thr | layer | side | output rows | coordinates | max rel. error "
             "| verdict |", "|---|---:|---|---|---:|---|---:|---|"]
    for c in checks:
        lines.append("| %s | %d | %s | %s | %d | %s | %.1e | %s |" % (
            c["workload"], c["threads"], c["layer"], c["side"], c["rows"],
            "equal" if c["coords_equal"] else "**differ**", c["rel_err"],
            "equal" if c["ok"] else "**MISMATCH**"))
    return "\n".join(lines)


def blas_section(probes, limits):
    """The BLAS kernels each side used, the core-type probe, and the
    machine's limits, as Markdown."""
    lines = ["OPENBLAS_CORETYPE for every BLAS-backed side: %s." % (
        BLAS_ENV.get("OPENBLAS_CORETYPE", "not set (OpenBLAS's own choice)"))]
    if probes:
        lines += ["", "Core-type probe (sgemm-roofline 64->64, its best GEMM timing, best of 3 "
                  "interleaved rounds of 3):",
                  "", "| OPENBLAS_CORETYPE | kernels loaded | GFLOP/s | ms |",
                  "|---|---|---:|---:|"]
        for p in probes:
            lines.append("| %s | %s | %.1f | %s |" % (p["coretype"], p["core"], p["gflops"],
                                                    fmt_ms(p["ms"])))
    if BLAS_SEEN:
        lines += ["", "| side | OpenBLAS kernels used |", "|---|---|"]
        for side in sorted(BLAS_SEEN):
            lines.append("| %s | %s |" % (side, ", ".join(sorted(BLAS_SEEN[side]))))
    if limits:
        lines += ["", "Machine limits (`machine-peak`): clock measured with a chain of "
                  "dependent adds, vector width from the CPU flags (or --peak-vector-bits, "
                  "the kernels' width), FMA pipes measured; the FMA peak every fraction "
                  "divides by is the rate the threads sustain with FMAs of that width "
                  "(which may run at a lower clock than the adds); bandwidths are "
                  "streaming at each layer's footprint (Limits table).", "",
                  "| threads | clock GHz | vector bits | FMA pipes | clock x pipes GFLOP/s "
                  "| sustained FMA GFLOP/s |",
                  "|---:|---:|---:|---:|---:|---:|"]
        for threads in sorted(limits):
            m = limits[threads]
            lines.append("| %d | %.2f | %d | %d | %.0f | %.0f |" % (
                threads, m["clock_ghz"], m["vector_bits"], m["fma_pipes"],
                m["clock_peak_gflops"], m["peak_gflops"]))
    return "\n".join(lines)


def scaling_tables(rows, fits):
    """The scaling study and its fits as Markdown."""
    lines = ["Series *scan*: one LiDAR scan of more and more sites (denser as it "
             "grows); *batch*: batches of 1 to 4 scans of the same size (the same "
             "density).", "",
             "| series | sites | K | thr | pairs | build | compute | e2e | ns / pair (e2e) "
             "| peak RSS |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r["series"] != "scan", r["k"], r["threads"],
                                         r["sites"])):
        lines.append("| %s | %d | %d | %d | %d | %s | %s | %s | %.1f | %.0f MiB |" % (
            r["series"] if r["series"] == "scan" else "batch of %d" % r["batch"],
            r["sites"], r["k"], r["threads"], r["pairs"], fmt_ms(r["build_ms"]),
            fmt_ms(r["compute_ms"]), fmt_ms(r["e2e_ms"]), ratio(r["e2e_ms"] * 1e6, r["pairs"]),
            r["rss_mib"]))
    lines += ["", "Least-squares fits, log(time) = a + b log(sites) (b below), and of the "
              "peak RSS against the sites (linear):", "",
              "| series | K | thr | b: e2e | b: build | b: compute | b: pairs | e2e vs pairs "
              "| peak RSS: MiB per 100k sites | at 0 sites |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for f in fits:
        lines.append("| %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.0f |" % (
            f["series"], f["k"], f["threads"], f["e2e_ms_exponent"], f["build_ms_exponent"],
            f["compute_ms_exponent"], f["pairs_exponent"], f["e2e_ms_vs_pairs_exponent"],
            f["rss_mib_per_100k"], f["rss_mib_at_0"]))
    lines += ["", "Kernel size, K = 5 over K = 3 at the same sites:", "",
              "| sites | thr | pairs | build | compute | e2e | peak RSS |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
    by_key = {(r["sites"], r["threads"], r["k"]): r for r in rows if r["series"] == "scan"}
    for sites, threads, k in sorted(by_key):
        if k != 3 or (sites, threads, 5) not in by_key:
            continue
        r3, r5 = by_key[(sites, threads, 3)], by_key[(sites, threads, 5)]
        lines.append("| %d | %d | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx |" % (
            sites, threads, ratio(r5["pairs"], r3["pairs"]),
            ratio(r5["build_ms"], r3["build_ms"]), ratio(r5["compute_ms"], r3["compute_ms"]),
            ratio(r5["e2e_ms"], r3["e2e_ms"]), ratio(r5["rss_mib"], r3["rss_mib"])))
    return "\n".join(lines)


def network_table(rows):
    """The example networks as Markdown (with spconv 2.x's modules beside
    ours where they ran)."""
    s2 = any("s2_run_ms" in r for r in rows)
    lines = ["| network | workload | thr | convs | rulebook builds | builds | computes "
             "| builds + computes | whole function (run) | run [min, max] | first call "
             "| compile (lower + JIT) | warm recompile (parse + load) | peak RSS"
             + (" | spconv 2.x modules: run [min, max] | first call | spconv 2.x / ours"
                if s2 else "") + " |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
             + ("---:|---:|---:|" if s2 else "")]
    for r in rows:
        extra = ""
        if s2 and "s2_run_ms" in r:
            extra = " %s | %s | %.2fx |" % (spread(r, "s2_run_ms"), fmt_ms(r["s2_first_ms"]),
                                           ratio(r["s2_run_ms"], r["run_ms"]))
        elif s2:
            extra = " — | — | — |"
        lines.append("| %s | %s | %d | %d | %d | %s | %s | %s | %s | [%s, %s] | %s | %s "
                     "| %s | %.0f MiB |%s" % (
                         r["network"], r["workload"], r["threads"], r["layers"], r["builds"],
                         fmt_ms(r["build_ms"]),
                         fmt_ms(r["compute_ms"]), fmt_ms(r["build_ms"] + r["compute_ms"]),
                         fmt_ms(r["run_ms"]), fmt_ms(r["run_ms_min"]), fmt_ms(r["run_ms_max"]),
                         fmt_ms(r["first_ms"]), fmt_ms(r["compile_ms"]),
                         fmt_ms(r["recompile_ms"]) if "recompile_ms" in r else "—",
                         r["rss_mib"], extra))
    return "\n".join(lines)


def spconv2_table(rows):
    """Ours against the real spconv 2.x CPU library, as Markdown: its ops
    driven like spconv.pytorch (numpy's matmul) and, where torch imports,
    spconv.pytorch's SubMConv3d itself."""
    s2m = any("s2m_total_ms" in r for r in rows)
    lines = ["| workload | thr | layer | ours: build | ours: compute | ours: e2e "
             "| spconv 2.x: rulebook | spconv 2.x: conv | spconv 2.x: total "
             "| rulebook ratio | conv ratio | total ratio"
             + (" | SubMConv3d: total | SubMConv3d / ours" if s2m else "") + " |",
             "|---|---:|---|" + "---:|" * (9 + 2 * s2m)]
    for r in rows:
        if "s2_total_ms" not in r:
            continue  # a thread count spconv 2.x did not run at
        extra = ""
        if s2m:
            extra = " %s | %.2fx |" % (fmt_ms(r["s2m_total_ms"]),
                                       ratio(r["s2m_total_ms"], r["e2e_ms"]))
        lines.append("| %s | %d | %d->%d k%d | %s | %s | %s | %s | %s | %s | %.2fx | %.2fx | %.2fx |%s" % (
            r["workload"], r["threads"], r["cin"], r["cout"], r["k"], fmt_ms(r["build_ms"]),
            fmt_ms(r["compute_ms"]), fmt_ms(r["e2e_ms"]), fmt_ms(r["s2_rulebook_ms"]),
            fmt_ms(r["s2_conv_ms"]), fmt_ms(r["s2_total_ms"]),
            ratio(r["s2_rulebook_ms"], r["build_ms"]), ratio(r["s2_conv_ms"], r["compute_ms"]),
            ratio(r["s2_total_ms"], r["e2e_ms"]), extra))
    return "\n".join(lines)


def grid_memory_table(rows):
    """The grid-memory study as Markdown."""
    lines = ["| grid | volume | build | compute | e2e | peak RSS |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append("| %s | %.2e | %s | %s | %s | %.0f MiB |" % (
            "x".join(map(str, r["grid"])), r["volume"], fmt_ms(r["build_ms"]),
            fmt_ms(r["compute_ms"]), fmt_ms(r["e2e_ms"]), r["rss_mib"]))
    return "\n".join(lines)


def goals(sweep_rows, grid_rows, fits=(), network_rows=()):
    """The goals of issues 6 and 40, each with its measured figure and
    whether it is met, on the lidar workload closest to 100k sites."""
    found = []
    lidar = [r for r in sweep_rows if r["workload"].startswith("lidar_")]
    if lidar:
        sites = min({r["workload"] for r in lidar},
                    key=lambda name: abs(int(name.split("_")[1]) - 100000))
        for threads in sorted({r["threads"] for r in lidar}):
            sel = [r for r in lidar if r["workload"] == sites and r["threads"] == threads]
            goal = [r for r in sel if (r["cin"], r["cout"], r["k"]) == (64, 64, 3)]
            k3 = goal or [r for r in sel if r["k"] == 3]
            where = "%s, %d thr" % (sites, threads)
            if k3:
                r = k3[0]
                found.append(("subm 3x3x3 rulebook: v1 rulebook / ours build", where,
                              ratio(r["v1_rulebook_ms"], r["build_ms"]), ">= 5x", True))
                found.append(("subm 3x3x3 rulebook: ours build / merge-join count of its pairs",
                              where, ratio(r["build_ms"], r["merge_join_ms"]), "<= 1.25x",
                              False))
            if goal:
                r = goal[0]
                found.append(("subm 64->64 end to end: v1 total / ours e2e", where,
                              ratio(r["v1_total_ms"], r["e2e_ms"]), ">= 3x", True))
                found.append(("subm 64->64 compute / sgemm on the gathered pairs", where,
                              ratio(r["compute_ms"], r["sgemm_best_ms"]), "<= 1.3x", False))
            # Issue 40: every layer against the FMA peak, OpenBLAS and a
            # second thread.
            for r in sel:
                layer = "subm %d->%d k%d compute" % (r["cin"], r["cout"], r["k"])
                if threads == 1 and r["k"] == 3 and r["cin"] == r["cout"] >= 64:
                    found.append(("%s: fraction of the sustained FMA peak" % layer, where,
                                  ratio(r["flop_bound_ms"], r["compute_ms"]), ">= 0.7", True))
                found.append(("%s: sgemm on the gathered pairs / ours" % layer, where,
                              ratio(r["sgemm_best_ms"], r["compute_ms"]), ">= 1x", True))
                one = [o for o in lidar if o["workload"] == sites and o["threads"] == 1
                       and (o["cin"], o["cout"], o["k"]) == (r["cin"], r["cout"], r["k"])]
                if threads == 2 and one:
                    found.append(("%s: 1 thread / 2 threads" % layer, sites,
                                  ratio(one[0]["compute_ms"], r["compute_ms"]), ">= 1.8x",
                                  True))
    for fit in fits:
        if fit["series"] == "batch" and fit["k"] == 3:
            found.append(("time against sites at a fixed density (b of e2e ~ sites^b)",
                          "batches of lidar scans, %d thr" % fit["threads"],
                          fit["e2e_ms_exponent"], "<= 1.1", False))
    if len(grid_rows) > 1:
        rss = [r["rss_mib"] for r in grid_rows]
        found.append(("peak RSS, largest / smallest grid (volume x%.0f)"
                      % (grid_rows[-1]["volume"] / grid_rows[0]["volume"]),
                      "%s, %d thr" % (grid_rows[0]["workload"], grid_rows[0]["threads"]),
                      ratio(max(rss), min(rss)), "<= 1.1x", False))
    for r in network_rows:
        where = "%s, %d thr" % (r["workload"], r["threads"])
        # The whole function against its layers: what the element-wise ops,
        # concatenations and allocations between them cost (issue 15).
        found.append(("%s: whole function / (builds + computes)" % r["network"], where,
                      ratio(r["run_ms"], r["build_ms"] + r["compute_ms"]), "<= 1.15x", False))
        if "s2_run_ms" in r:
            found.append(("%s end to end: spconv 2.x CPU / ours" % r["network"], where,
                          ratio(r["s2_run_ms"], r["run_ms"]), ">= 3x", True))
        if "recompile_ms" in r:
            found.append(("warm recompile of %s from the cache (parse + load)" % r["network"],
                          "%s, %d thr" % (r["workload"], r["threads"]), r["recompile_ms"],
                          "<= 50 ms", False))
    return found


def goals_table(found):
    """The goals as Markdown."""
    lines = ["| goal | workload | measured | target | met |", "|---|---|---:|---|---|"]
    for name, where, value, target, at_least in found:
        bound = float(re.search(r"[0-9.]+", target).group(0))
        met = value >= bound if at_least else value <= bound
        unit = "x" if target.endswith("x") else " ms" if target.endswith("ms") else ""
        lines.append("| %s | %s | %.2f%s | %s | %s |" % (name, where, value, unit, target,
                                                       "yes" if met else "**no**"))
    return "\n".join(lines)


def machine():
    """A line on the machine and its load."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = re.search(r"model name\s*: (.*)", f.read()).group(1)
    except (OSError, AttributeError):
        pass
    return "%s, %d cores, %s; load average %.2f %.2f %.2f" % (
        model, os.cpu_count(), platform.platform(), *os.getloadavg())


# ===----------------------------------------------------------------------=== #
# Plots
# ===----------------------------------------------------------------------=== #

def plot_sweep(plt, rows, path):
    """Grouped bars (log scale): ours build / compute, v1 rulebook / conv,
    sgemm hot and the dense GEMM, one panel per (workload, threads)."""
    groups = sorted({(r["workload"], r["threads"]) for r in rows})
    series = [("build_ms", "ours: build"), ("compute_ms", "ours: compute"),
              ("v1_rulebook_ms", "v1: rulebook"), ("v1_conv_ms", "v1: conv"),
              ("sgemm_best_ms", "sgemm best"), ("dense_ms", "dense GEMM")]
    fig, axes = plt.subplots(len(groups), 1, figsize=(11, 3.6 * len(groups)), squeeze=False)
    for ax, (workload, threads) in zip(axes[:, 0], groups):
        sel = [r for r in rows if r["workload"] == workload and r["threads"] == threads]
        width = 0.8 / len(series)
        for i, (key, label) in enumerate(series):
            ax.bar([j + (i - len(series) / 2 + 0.5) * width for j in range(len(sel))],
                   [r[key] for r in sel], width, label=label)
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels(["%d->%d k%d" % (r["cin"], r["cout"], r["k"]) for r in sel])
        ax.set_yscale("log")
        ax.set_ylabel("ms (median)")
        ax.set_title("%s, %d thread(s) (dense GEMM: projected where the table says so)"
                     % (workload, threads))
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_gflops(plt, rows, path):
    """Achieved GFLOP/s of ours, v1's conv and sgemm hot, per layer."""
    groups = sorted({(r["workload"], r["threads"]) for r in rows})
    series = [("gflops", "ours: compute"), ("v1_conv_gflops", "v1: conv"),
              ("sgemm_best_gflops", "sgemm best (GEMM only)")]
    fig, axes = plt.subplots(len(groups), 1, figsize=(10, 3.2 * len(groups)), squeeze=False)
    for ax, (workload, threads) in zip(axes[:, 0], groups):
        sel = [r for r in rows if r["workload"] == workload and r["threads"] == threads]
        width = 0.8 / len(series)
        for i, (key, label) in enumerate(series):
            ax.bar([j + (i - 1) * width for j in range(len(sel))], [r[key] for r in sel],
                   width, label=label)
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels(["%d->%d k%d" % (r["cin"], r["cout"], r["k"]) for r in sel])
        ax.set_ylabel("GFLOP/s (2 P Cin Cout)")
        ax.set_title("%s, %d thread(s)" % (workload, threads))
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_scaling(plt, rows, fits, key, ylabel, path, loglog):
    """`key` against the number of sites, one line per (K, threads), with
    the fitted power law (log-log) or line."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for fit in fits:
        sel = sorted((r for r in rows if r["k"] == fit["k"] and r["threads"] == fit["threads"]
                      and r["series"] == fit["series"]), key=lambda r: r["sites"])
        x = np.array([r["sites"] for r in sel], float)
        y = np.array([r[key] for r in sel])
        if loglog:
            b = log_slope(x, y)
            label = "%s K=%d, %d thr: ~ N^%.2f" % (fit["series"], fit["k"], fit["threads"], b)
            line = ax.loglog(x, y, "o", label=label)[0]
            if b == b:  # no fitted line through a zero or non-finite time
                a = float(np.mean(np.log(y)) - b * np.mean(np.log(x)))
                ax.loglog(x, np.exp(a) * x ** b, "--", color=line.get_color(), alpha=0.7)
        else:
            label = "%s K=%d, %d thr: %.0f + %.1f MiB / 100k" % (
                fit["series"], fit["k"], fit["threads"], fit["rss_mib_at_0"],
                fit["rss_mib_per_100k"])
            line = ax.plot(x, y, "o", label=label)[0]
            ax.plot(x, fit["rss_mib_at_0"] + fit["rss_mib_per_100k"] * x / 1e5, "--",
                    color=line.get_color(), alpha=0.7)
    ax.set_xlabel("LiDAR sites (KITTI grid)")
    ax.set_ylabel(ylabel)
    ax.set_title("subm 16->16: %s" % ylabel)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def make_plots(out, sweep_rows, scaling_rows, fits):
    """Writes the PNGs; returns their paths (none without matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: plots skipped (apt-get install python3-matplotlib)", file=sys.stderr)
        return []
    paths = []
    if sweep_rows:
        paths.append(os.path.join(out, "layers_time.png"))
        plot_sweep(plt, sweep_rows, paths[-1])
        paths.append(os.path.join(out, "layers_gflops.png"))
        plot_gflops(plt, sweep_rows, paths[-1])
    if scaling_rows:
        paths.append(os.path.join(out, "scaling_time.png"))
        plot_scaling(plt, scaling_rows, fits, "e2e_ms", "build + compute (ms, median)",
                     paths[-1], True)
        paths.append(os.path.join(out, "scaling_memory.png"))
        plot_scaling(plt, scaling_rows, fits, "rss_mib", "peak RSS of spconv-run (MiB)",
                     paths[-1], False)
    return paths


# ===----------------------------------------------------------------------=== #
# Driver
# ===----------------------------------------------------------------------=== #

def parse_cases(text):
    """'all' or 'c4_c32_k3,c16_c16_k5' -> [(Cin, Cout, K)]."""
    if text == "all":
        return list(gen_layers.SWEEP + gen_layers.GOALS)
    cases = []
    for item in text.split(","):
        match = re.fullmatch(r"c(\d+)_c(\d+)_k(\d+)", item.strip())
        if not match:
            raise argparse.ArgumentTypeError("bad case %r (expected cCIN_cCOUT_kK)" % item)
        cases.append(tuple(int(v) for v in match.groups()))
    return cases


def parse_ints(text):
    """'1,2' -> [1, 2]."""
    return [int(v) for v in text.split(",") if v]


def parse_args():
    parser = argparse.ArgumentParser(
        description="The layer sweep, the scaling study and VoxelBackBone8x, side by side "
                    "with the baselines (see bench/README.md).")
    parser.add_argument("--workload", action="append",
                        help="KIND:SITES (lidar, uniform, indoor); repeatable; default lidar:100000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=parse_ints, default=[1, 2])
    parser.add_argument("--repeat", type=int, default=3, help="median of R runs (default 3)")
    parser.add_argument("--calls", type=int, default=3,
                        help="calls per process of every side, the last one timed, the first "
                             "reported as the cold call (default 3, at least 2)")
    parser.add_argument("--blas-coretype", default="auto",
                        help="OPENBLAS_CORETYPE of the BLAS-backed sides: auto (default: the "
                             "fastest of OpenBLAS's choice and the kernels the CPU flags allow), "
                             "default (OpenBLAS's choice) or a name (SkylakeX, Haswell, ...)")
    parser.add_argument("--check-tolerance", type=float, default=1e-4,
                        help="largest |other - ours| / max |ours| of an output check (1e-4)")
    parser.add_argument("--target", choices=["cpu", "cuda", "gpu-emulator"], default="cpu",
                        help="where spconv-run runs ours; cuda (needs a GPU) and gpu-emulator "
                             "(the CUDA kernels emulated on the CPU: a dry run of the GPU "
                             "benchmark, its times meaningless) run the GPU benchmark of "
                             "bench/run_gpu.py instead of the CPU study")
    parser.add_argument("--mcpu", default="host",
                        help="the CPU spconv-run compiles ours for (default host: this "
                             "machine's; e.g. haswell measures the AVX2 code here)")
    parser.add_argument("--peak-vector-bits", type=int, choices=[128, 256, 512], default=None,
                        help="the FMA width of the peak every fraction divides by (default: "
                             "the widest the CPU has); the width of the kernels measured, "
                             "e.g. 256 with --mcpu haswell on an AVX-512 machine")
    parser.add_argument("--grid-scales", type=parse_ints, default=[1, 2, 4],
                        help="per-axis grid scales of the grid-memory study (default 1,2,4)")
    parser.add_argument("--no-grid-memory", action="store_true")
    parser.add_argument("--spconv2-python",
                        help="a Python that imports spconv 2.x: adds the real library to the "
                             "layer sweep (docs/Benchmarks.md, 'Real libraries')")
    parser.add_argument("--spconv2-threads", type=parse_ints,
                        help="thread counts at which spconv 2.x runs (its ops, SubMConv3d, "
                             "the networks' modules); default: every --threads. spconv 2.3.8 "
                             "gives wrong outputs on 2 threads, which stops the run: "
                             "docs/Benchmarks.md")
    parser.add_argument("--cases", type=parse_cases,
                        help="'all' or a list like c4_c32_k3,c16_c16_k5 (default: 'all' on "
                             "the CPU; on a GPU target the subm K=3 layers 16->16, 32->32, "
                             "64->64 and 128->128)")
    parser.add_argument("--scaling-sites", type=parse_ints, default=[10000, 30000, 100000, 300000])
    parser.add_argument("--density-sites", type=int, default=100000,
                        help="sites per scan of the fixed-density scaling (default 100000)")
    parser.add_argument("--density-batches", type=parse_ints, default=[1, 2, 3, 4],
                        help="batch sizes of the fixed-density scaling (default 1,2,3,4; "
                             "the generator makes at most 4)")
    parser.add_argument("--no-sweep", action="store_true")
    parser.add_argument("--no-scaling", action="store_true")
    parser.add_argument("--no-network", action="store_true")
    parser.add_argument("--dense-max-bytes", type=int, default=4 << 30,
                        help="largest im2col matrix dense-gemm allocates (default 4 GiB)")
    parser.add_argument("--out", default=os.path.join(ROOT, "results"))
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--baselines", default=os.path.join(ROOT, "build", "bench", "baselines"))
    opts = parser.parse_args()
    if opts.calls < 2 or opts.repeat < 1:
        sys.exit("--calls must be at least 2 (a cold first call and a timed last one) and "
                 "--repeat positive")
    opts.spconv2_torch = False
    if opts.spconv2_python:
        probe = subprocess.run([opts.spconv2_python, "-c", "import torch, spconv.pytorch"],
                               capture_output=True)
        opts.spconv2_torch = probe.returncode == 0
    if opts.spconv2_threads is None:
        opts.spconv2_threads = opts.threads
    opts.workload = opts.workload or ["lidar:100000"]
    opts.work = os.path.join(opts.out, "work")
    on_cpu = opts.target == "cpu"
    if opts.cases is None:
        opts.cases = list(gen_layers.SWEEP + gen_layers.GOALS) if on_cpu else [
            (16, 16, 3), (32, 32, 3), (64, 64, 3), (128, 128, 3)]
    tools = [TIME, os.path.join(opts.bin, "spconv-run"), os.path.join(opts.bin, "spconv-ref")]
    if on_cpu:
        tools += [os.path.join(opts.baselines, "dense-gemm"),
                  os.path.join(opts.baselines, "machine-peak")]
    for tool in tools:
        if tool == TIME and not os.access(tool, os.X_OK):
            sys.exit("%s is missing: apt-get install time" % TIME)
        if not os.access(tool, os.X_OK):
            sys.exit("%s is missing: build it (ninja -C build spconv-run spconv-ref "
                     "spconv-v1-cpu sgemm-roofline merge-join-count dense-gemm machine-peak)" % tool)
    return opts


def main():
    opts = parse_args()
    os.makedirs(opts.work, exist_ok=True)
    if opts.target != "cpu":
        import run_gpu
        return run_gpu.main(opts)
    start = time.monotonic()
    load_before = machine()
    workloads = [generate_workload(spec, opts.seed, opts.work) for spec in opts.workload]
    probes = choose_blas(opts, workloads[0])
    sweep_rows, network_rows, scaling_rows, grid_rows = [], [], [], []
    for workload in workloads:
        if not opts.no_sweep:
            sweep_rows += sweep(opts, workload, opts.work)
        if not opts.no_network:
            network_rows += network(opts, workload, opts.work)
    kitti = [w for w in workloads if w.on_kitti]
    if not opts.no_grid_memory and kitti:
        grid_rows = grid_memory(opts, kitti[0], opts.work)
    if not opts.no_scaling:
        scaling_rows = scaling(opts, opts.work)
    fits = fit_scaling(scaling_rows)
    plots = make_plots(opts.out, sweep_rows, scaling_rows, fits)

    report = ["# bench/run.py results", "",
              "Command: `%s`" % " ".join(["bench/run.py"] + sys.argv[1:]), "",
              "Machine at the start: %s." % load_before,
              "Machine at the end: %s." % machine(),
              "Every side, ours and each baseline alike: %d processes of %d calls each on the "
              "same inputs, the last call of each timed (medians below, [min, max] in "
              "'Spread'), the first (cold) call and our compile time apart; ours on --target "
              "%s; times in ms; wall time of the whole run %.0f s." % (
                  opts.repeat, opts.calls, opts.target, time.monotonic() - start), "",
              "Workloads: " + ", ".join("%s (%d sites, grid %s)" % (w.name, w.n, list(w.grid))
                                        for w in workloads), ""]
    found = goals(sweep_rows, grid_rows, fits, network_rows)
    limits = {r["threads"]: r for r in sweep_rows}
    report += ["## BLAS kernels and machine limits", "", blas_section(probes, limits), ""]
    if CHECKS:
        report += ["## Output checks (before any time)", "",
                   "Every side ran on the same coordinates, features and weights; its output "
                   "coordinates must equal ours exactly (a subm conv keeps the input's, in "
                   "order; a network's rows are compared in key order) and its features ours to %.0e of the largest |ours| (FP32 sums in "
                   "different orders). A mismatch stops the run: no report." % opts.check_tolerance,
                   "", checks_table(CHECKS), ""]
    if found:
        report += ["## Goals", "", goals_table(found), ""]
    if sweep_rows:
        report += ["## Layer sweep", "", sweep_table(sweep_rows), "",
                   "## Against the machine's limits", "",
                   "FMA bound: 2 P Cin Cout flops at the FP32 FMA rate the threads used "
                   "sustain; bandwidth bound: P Cin 4 bytes gathered at the streaming read bandwidth "
                   "over the features' footprint plus N Cout 4 bytes written; limit: the "
                   "larger. Fraction: limit / measured time (1 = the machine's limit; sgemm: "
                   "FMA bound / its time).", "", limits_table(sweep_rows), "",
                   "## Spread (median [min, max] over the processes)", "",
                   spread_table(sweep_rows), "",
                   "## Cold first calls and compile time", "", cold_table(sweep_rows), ""]
    if sweep_rows and opts.spconv2_python:
        report += ["## The real spconv 2.x (CPU)", "",
                   "Ratios are spconv 2.x / ours (above 1: we are faster).", "",
                   spconv2_table(sweep_rows), ""]
    if network_rows:
        report += ["## Networks", "", network_table(network_rows), ""]
    if grid_rows:
        report += ["## Memory against the grid volume (subm 16->16 K=3)", "",
                   grid_memory_table(grid_rows), ""]
    if scaling_rows:
        report += ["## Scaling (subm 16->16)", "", scaling_tables(scaling_rows, fits), ""]
    if plots:
        report += ["Plots: " + ", ".join(os.path.basename(p) for p in plots), ""]
    text = "\n".join(report)
    with open(os.path.join(opts.out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(opts.out, "results.json"), "w") as f:
        json.dump({"sweep": sweep_rows, "network": network_rows, "scaling": scaling_rows,
                   "fits": fits, "grid_memory": grid_rows,
                   "goals": [dict(zip(("goal", "workload", "measured", "target", "at_least"), g))
                             for g in found],
                   "checks": CHECKS, "blas_probes": probes, "blas_env": BLAS_ENV,
                   "blas_seen": {k: sorted(v) for k, v in BLAS_SEEN.items()},
                   "argv": sys.argv[1:]}, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
