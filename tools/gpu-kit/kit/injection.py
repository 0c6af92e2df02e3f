"""Phase `injection`: out of memory on the device is an error, never a crash
(docs/Limits.md). Each function is called once per allocation it makes,
the n-th failing in call n (the runtime's spconv_rt_test_fail_allocation,
which counts the memref hooks, the runtime's scratch and, in the CUDA
library, every mgpuMemAlloc and the primitives' device scratch), until a
call succeeds. Every failed call must report out of memory and give back
all it took: host buffers by the runtime's live count, device memory by
the driver's own count of the memory pool's bytes in use (an oracle the
runtime does not keep). The call that succeeds must equal a call made
before the sweep, bit for bit.

What `spconv-run --fail-each-allocation` checks on the CPU and the
emulator in the test suite, here on the device's real allocations; in a
stand-in run, on the emulator builds again (which tests this phase).
"""
import ctypes

import numpy as np

from .context import compare, now
from .correctness import typed_inputs
from .inputs import network_arguments
from .library import CallError

# CUmemPool_attribute (cuda.h): bytes of the pool handed out and not freed.
CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7
# More calls than this: the sweep is not converging (a call that allocates
# without end); a failure, not a hang.
MAX_CALLS = 5000


class DevicePoolUse:
    """Bytes in use in the device's default memory pool (the one
    mgpuMemAlloc allocates from), after the stream has drained."""

    def __init__(self, device):
        self.device = device
        self.pool = ctypes.c_void_p()
        device._check("cuDeviceGetDefaultMemPool", device.cuda.cuDeviceGetDefaultMemPool(
            ctypes.byref(self.pool), device.handle))

    def __call__(self):
        self.device.synchronize()
        used = ctypes.c_uint64(0)
        self.device._check("cuMemPoolGetAttribute", self.device.cuda.cuMemPoolGetAttribute(
            self.pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, ctypes.byref(used)))
        return used.value


def sweep(ctx, name, args):
    """Calls `name` with allocation n failing, n = 1, 2, ... until a call
    succeeds; returns how many allocations the successful call made."""
    library = ctx.library(name, ctx.device_target(name))
    runtime = ctx.host.runtime.lib
    runtime.spconv_rt_test_fail_allocation.argtypes = [ctypes.c_int64]
    runtime.spconv_rt_test_fail_allocation.restype = None
    runtime.spconv_rt_test_live_buffers.restype = ctypes.c_int64
    device_use = DevicePoolUse(ctx.device) if ctx.mode == "cuda" else (lambda: 0)
    expected = library(*args)
    with library.staged(args) as placed:
        for n in range(1, MAX_CALLS + 1):
            if ctx.deadline and now() > ctx.deadline - 1.0:
                raise AssertionError("out of time after %d failed calls" % (n - 1))
            live, used = runtime.spconv_rt_test_live_buffers(), device_use()
            runtime.spconv_rt_test_fail_allocation(n)
            try:
                results = library.call_placed(placed)
            except CallError as e:
                error = e
            else:
                error = None
            finally:
                runtime.spconv_rt_test_fail_allocation(0)
            if error is None:
                got = ctx.device.fetch(results, [dtype for _, dtype in library.results])
                for i, (g, e) in enumerate(zip(got, expected)):
                    compare(g, e, 0, 0, "result %d after the sweep against a call before it" % i)
                return n - 1
            if not library.runtime.out_of_memory():
                raise AssertionError("allocation %d failed, but the call reported: %s"
                                     % (n, error))
            left = runtime.spconv_rt_test_live_buffers() - live
            if left:
                raise AssertionError("allocation %d failed (%s) and %d host buffers were "
                                     "not freed" % (n, error, left))
            kept = device_use() - used
            if kept:
                raise AssertionError("allocation %d failed (%s) and %d bytes of device "
                                     "memory were not freed" % (n, error, kept))
    raise AssertionError("no call succeeded in %d" % MAX_CALLS)


def run(ctx):
    rng = np.random.default_rng(7)
    sites = min(ctx.sites, 2000)
    cases = [("network/second", lambda: network_arguments(ctx, "network/second", sites))]
    gradients = ctx.names("gradient")[:1]
    cases += [(g, lambda g=g: typed_inputs(ctx.library(g, "cpu").manifest, rng))
              for g in gradients]
    if "network/minkunet_train" in ctx.functions:  # not in the small kit
        cases.append(("network/minkunet_train",
                      lambda: network_arguments(ctx, "network/minkunet_train", sites)))
    counts = {}
    for name, make in cases:
        def one(name=name, make=make):
            counts[name] = sweep(ctx, name, make())
        ctx.checks.run("%s: each allocation failing in turn" % name, one)
    ctx.data["allocations"] = counts
