"""Phase `timings`: the subm 3x3x3 layers and both networks, outputs
checked first, timed with CUDA events on the compiled code's stream (wall
clock in a stand-in run, where the numbers say nothing about a GPU), the
rulebook build and the conv apart (the --profile build's timers), host
synchronisations counted, and beside them the baselines that exist on the
machine: a torch gather-GEMM-scatter (index_select, mm, index_add_: the
MinkowskiEngine / TorchSparse-1 dataflow) and torch's dense conv3d (cuDNN)
on a crop of the grid, each checked against ours.
"""
import ctypes
import statistics
import time

import numpy as np

from .context import bf16_values, compare
from .inputs import layer_arguments, network_arguments, scan, subm_pairs

TOLERANCE = {"f32": 1e-4, "tf32": 2e-2, "f16": 2e-2, "bf16": 3e-2}


def as_float(array, kind):
    return bf16_values(array) if kind == "bf16" else array.astype(np.float32)


def layer_reference(ctx, kind, channels, arrays):
    """A layer's expected (sites, features as f32): the CPU build of the f32
    layer on the same values (f16 and bf16 widen exactly), the CPU's fast
    path, for every element type."""
    return ctx.on_cpu("layer/f32_%dx%d" % (channels, channels), arrays[0],
                      as_float(arrays[1], kind), as_float(arrays[2], kind))


def time_calls(ctx, library, arrays, reps):
    """Median milliseconds of `reps` calls on arguments placed once, and
    the host waits per call (CUDA)."""
    with library.staged(arrays) as placed:
        library.call_discarding(placed)  # warm-up
        waits0 = ctx.device.host_waits() if ctx.mode == "cuda" else None
        times = []
        for _ in range(reps):
            with ctx.timer() as t:
                results = library.call_placed(placed)
            library.device.release(results)
            times.append(t.milliseconds)
        waits = None if waits0 is None else (ctx.device.host_waits() - waits0) / reps
    return statistics.median(times), waits


def profile_split(ctx, name, arrays):
    """Milliseconds per timed op (rulebook build, conv) of the --profile
    build: its generated timers synchronise around each op."""
    library = ctx.library(name, ctx.device_target(name))
    lib = library.handle
    lib.spconv_rt_profile_count.restype = ctypes.c_int64
    with library.staged(arrays) as placed:
        library.call_discarding(placed)  # warm-up
        lib.spconv_rt_profile_reset()
        library.call_discarding(placed)
    labels = library.manifest.get("profile_labels", [])
    split = {}
    for i in range(lib.spconv_rt_profile_count()):
        ms, rows, calls = ctypes.c_double(), ctypes.c_int64(), ctypes.c_int64()
        if lib.spconv_rt_profile_get(ctypes.c_int64(i), ctypes.byref(ms), ctypes.byref(rows),
                                     ctypes.byref(calls)) == 0 and calls.value:
            label = labels[i] if i < len(labels) else "op %d" % i
            split[label] = round(ms.value, 4)
    return split


def roofline(ctx, flops, nbytes, kind):
    env = ctx.previous("environment")
    peaks = (env or {}).get("peaks", {})
    rate = peaks.get({"f32": "f32_tflops", "tf32": "tf32_tflops", "f16": "f16_tflops",
                      "bf16": "bf16_tflops"}[kind])
    bandwidth = peaks.get("copy_gbps")
    if not rate or not bandwidth:
        return None
    return max(flops / (rate * 1e12), nbytes / (bandwidth * 1e9)) * 1e3


def torch_baselines(ctx, coords, arrays, kind, pairs, ours, reps):
    """The torch baselines on the GPU; in a stand-in run, on the CPU for f32
    (so that their code and checks run in the tests; torch's CPU has no
    f16 conv3d), timed by the wall clock there."""
    try:
        import torch
    except ImportError:
        return {"note": "torch is not importable"}
    if ctx.mode == "cuda":
        if not torch.cuda.is_available():
            return {"note": "torch sees no CUDA device"}
        where = "cuda"
    elif kind != "f32":
        return {"note": "stand-in: the CPU baselines run for f32 only"}
    else:
        where = "cpu"
    dtype = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16,
             "bf16": torch.bfloat16}[kind]
    torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
    torch.backends.cudnn.allow_tf32 = kind == "tf32"
    x = torch.from_numpy(as_float(arrays[1], kind)).to(where, dtype)
    w = torch.from_numpy(as_float(arrays[2], kind)).to(where, dtype)
    index = [(torch.from_numpy(i).to(where), torch.from_numpy(o).to(where)) for i, o in pairs]
    out = {"device": where}

    def gather_gemm_scatter():
        y = torch.zeros((x.shape[0], w.shape[2]), device=where, dtype=dtype)
        for k, (i, o) in enumerate(index):
            if len(i):
                y.index_add_(0, o, x.index_select(0, i) @ w[k])
        return y

    def timed(fn):
        fn()
        times = []
        for _ in range(reps):
            if where == "cpu":
                start = time.perf_counter()
                fn()
                times.append((time.perf_counter() - start) * 1e3)
                continue
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return statistics.median(times)

    y = gather_gemm_scatter().float().cpu().numpy()
    compare(y, ours, TOLERANCE[kind] * 5, TOLERANCE[kind] * 5, "torch gather-GEMM-scatter")
    out["torch_gather_gemm_scatter_ms"] = round(timed(gather_gemm_scatter), 4)
    # Dense conv3d on a crop around the scan's median site.
    channels = w.shape[1]
    # A crop of at most ~0.5 TFLOP per call on a GPU (2 GFLOP on a CPU):
    # the dense conv computes every voxel of it.
    flops = 5e11 if where == "cuda" else 2e9
    side = int(min(200, np.sqrt(flops / (2 * 27 * channels * w.shape[2]) / 41)))
    box = np.array([41, side, side])
    centre = np.median(coords[:, 1:], axis=0).astype(int)
    lo = np.clip(centre - box // 2, 0, None)
    lo[0] = 0
    inside = ((coords[:, 1:] >= lo) & (coords[:, 1:] < lo + box)).all(axis=1) & (coords[:, 0] == 0)
    rows = np.flatnonzero(inside)
    local = torch.from_numpy(coords[rows, 1:] - lo).to(where).long()
    dense = torch.zeros((1, channels) + tuple(int(b) for b in box), device=where, dtype=dtype)
    # dense[0] first: with the batch index among them, the advanced
    # indices would not be adjacent and the sites' dimension would lead.
    dense[0][:, local[:, 0], local[:, 1], local[:, 2]] = x[torch.from_numpy(rows).to(where)].T
    weight = w.reshape(3, 3, 3, channels, -1).permute(4, 3, 0, 1, 2).contiguous()
    conv = lambda: torch.nn.functional.conv3d(dense, weight, padding=1)
    result = conv()[0][:, local[:, 0], local[:, 1], local[:, 2]].T.float().cpu().numpy()
    # Sites whose whole window lies in the crop see the same neighbours.
    interior = ((coords[rows, 1:] - lo >= 1) & (coords[rows, 1:] - lo < box - 1)).all(axis=1)
    compare(result[interior], ours[rows[interior]], TOLERANCE[kind] * 5, TOLERANCE[kind] * 5,
            "torch dense conv3d on the crop")
    out["torch_dense_conv3d_ms"] = round(timed(conv), 4)
    out["dense_crop"] = [int(b) for b in box]
    out["dense_crop_sites"] = int(len(rows))
    return out


def time_layers(ctx, coords, reps):
    layers = []
    names = [n for n in ctx.names("layer") if not ctx.functions[n]["meta"].get("profile")]
    if ctx.quick:
        names = [n for n in names if ctx.functions[n]["meta"]["channels"] in (16, 64)
                 and ctx.functions[n]["meta"]["kind"] == "f16"]
    pairs = subm_pairs(coords)
    pair_count = int(sum(len(i) for i, _ in pairs))
    for name in names:
        meta = ctx.functions[name]["meta"]
        kind, c = meta["kind"], meta["channels"]
        arrays = layer_arguments(coords, c, meta["element"])
        row = {"layer": name, "channels": c, "kind": kind, "sites": int(len(coords)),
               "pairs": pair_count}

        def one():
            device = ctx.on_device(name, *arrays)
            cpu = layer_reference(ctx, kind, c, arrays)
            compare(device[0], cpu[0], 0, 0, "output sites")
            tol = TOLERANCE[kind]
            ours = as_float(device[1], kind)
            compare(ours, cpu[1], tol, tol, "features against the CPU build of the f32 layer")
            library = ctx.library(name, ctx.device_target(name))
            row["ms"], row["host_waits"] = time_calls(ctx, library, arrays, reps)
            profiled = name + "_profile"
            if profiled in ctx.functions:
                row["split_ms"] = profile_split(ctx, profiled, arrays)
            elt = 4 if kind in ("f32", "tf32") else 2
            flops = 2.0 * pair_count * c * c
            nbytes = 2.0 * len(coords) * c * elt + 27 * c * c * elt + len(coords) * 27 * 4
            row["tflops"] = float("%.4g" % (flops / (row["ms"] * 1e-3) / 1e12))
            bound = roofline(ctx, flops, nbytes, kind)
            if bound:
                row["roofline_ms"] = round(bound, 4)
                row["of_roofline"] = round(bound / row["ms"], 3)
            # A variant of a layer's fragment ops shares its baselines.
            if not ctx.quick and not meta.get("mma_ops"):
                row["baselines"] = torch_baselines(ctx, coords, arrays, kind, pairs, ours, reps)
            layers.append(row)
        ctx.checks.run("timed %s" % name, one)
    ctx.data["layers"] = layers


def time_networks(ctx, reps):
    rows = []
    names = [n for n in ctx.names("network") if n != "network/minkunet_train"]
    if ctx.quick:
        names = names[:1]
    for name in names:
        def one():
            args = network_arguments(ctx, name, ctx.sites)
            device = ctx.on_device(name, *args)
            cpu = ctx.on_cpu(name, *args)
            compare(device[0], cpu[0], 0, 0, "output sites")
            library = ctx.library(name, ctx.device_target(name))
            ms, waits = time_calls(ctx, library, args, reps)
            rows.append({"network": name, "sites": int(len(args[0])), "ms": round(ms, 4),
                         "host_waits": waits})
        ctx.checks.run("timed %s" % name, one)
    ctx.data["networks"] = rows


def run(ctx):
    coords = scan(ctx.work, ctx.sites)
    reps = 3 if ctx.mode != "cuda" else (5 if ctx.quick else 10)
    time_layers(ctx, coords, reps)
    time_networks(ctx, reps)
    if ctx.mode != "cuda":
        ctx.checks.notes.append("stand-in: times are the emulator's on this CPU and say "
                                "nothing about a GPU; the outputs were checked")
