"""The sanitizers' slice: a few matrix cases and SECOND on a small scan,
device against CPU build; run under compute-sanitizer as its own process
(`python3 -m kit slice`), or in-process on the emulator's race-checked
builds in a stand-in run."""
import conv_matrix

import functions

from .context import compare
from .correctness import KitRunner
from .inputs import network_arguments

SLICE_SITES = 3000


def run(ctx, target=None):
    cases = {c.name: c for c in conv_matrix.cases()}
    runner = KitRunner(ctx, ctx.work + "/slice-matrix")
    for case in functions.SANITIZER_SLICE:
        name = "matrix/" + case
        if name not in ctx.functions:
            continue
        runner.device_name = name
        runner.cpu_name = name
        runner.device_target = target
        ctx.checks.run("%s (%s)" % (name, target or "sanitized"), runner.check, cases[case])

    def second():
        args = network_arguments(ctx, "network/second", SLICE_SITES)
        device = ctx.on_device("network/second", *args, target=target)
        cpu = ctx.on_cpu("network/second", *args)
        for i, (d, c) in enumerate(zip(device, cpu)):
            compare(d, c, 1e-4, 1e-4, "result %d" % i)
    ctx.checks.run("network/second (%d sites, %s)" % (SLICE_SITES, target or "sanitized"),
                   second)
