"""Phase `environment`: what the machine is, and the peaks the timings are
held against: the GPU's name, compute capability, driver, SMs and memory,
the measured device-to-device copy bandwidth and torch's f16, bf16, TF32
and f32 matmul rates (cuBLAS), for the rooflines of the timings phase."""
import os
import platform
import statistics

import numpy as np


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def copy_bandwidth(ctx):
    """GB/s of a 1 GiB device-to-device copy (read + write counted)."""
    device = ctx.device
    nbytes = 1 << 30
    src, dst = device.alloc(nbytes), device.alloc(nbytes)
    try:
        device.lib.mgpuMemcpy(dst, src, nbytes, None)
        device.synchronize()
        times = []
        for _ in range(5):
            with device.timer() as t:
                device.lib.mgpuMemcpy(dst, src, nbytes, device.stream)
            times.append(t.milliseconds)
    finally:
        device.free(src)
        device.free(dst)
    return 2 * nbytes / (statistics.median(times) * 1e-3) / 1e9


def matmul_rates(ctx):
    try:
        import torch
    except ImportError:
        ctx.checks.notes.append("torch is not importable: no matmul peaks, no rooflines")
        return {}
    if not torch.cuda.is_available():
        ctx.checks.notes.append("torch sees no CUDA device: no matmul peaks")
        return {}
    rates = {"torch": torch.__version__}
    n = 8192
    for key, dtype, tf32 in [("f16_tflops", torch.float16, False),
                             ("bf16_tflops", torch.bfloat16, False),
                             ("tf32_tflops", torch.float32, True),
                             ("f32_tflops", torch.float32, False)]:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        a @ b
        torch.cuda.synchronize()
        times = []
        for _ in range(5):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            a @ b
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        rates[key] = round(2 * n ** 3 / (statistics.median(times) * 1e-3) / 1e12, 2)
        del a, b
    torch.backends.cuda.matmul.allow_tf32 = False
    return rates


def run(ctx):
    env = {"host_cpu": cpu_name(), "host_cores": os.cpu_count(),
           "python": platform.python_version(), "numpy": np.__version__,
           "kit_commit": ctx.kit.get("commit"), "kit_built": ctx.kit.get("built")}
    if ctx.mode != "cuda":
        env["device"] = "none: the GPU emulator plays the device (stand-in run)"
        ctx.data["environment"] = env
        ctx.checks.ok("environment (stand-in)")
        return
    env.update(ctx.device_props)
    ctx.data["environment"] = env
    ctx.checks.ok("environment: %s, sm %s" % (env["name"], env["compute_capability"]))
    peaks = {}
    if ctx.checks.run("copy bandwidth", lambda: peaks.update(
            copy_gbps=round(copy_bandwidth(ctx), 1))):
        pass
    ctx.checks.run("torch matmul peaks", lambda: peaks.update(matmul_rates(ctx)))
    ctx.data["peaks"] = peaks
