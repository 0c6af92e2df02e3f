"""Phase `ab`: this kit's networks and layers against the same functions
compiled by a baseline compiler (build_kit.py --baseline-compiler,
`<name>@baseline`), in one process on one device: outputs compared first,
then alternating rounds of timed calls, so that a change of a few percent
is told from the machine's own spread (docs/GPU.md, "A/B against a
baseline"). A kit without a baseline has nothing to compare: the phase
says so and passes nothing."""
import statistics

import numpy as np

from .context import bf16_values, compare
from .inputs import layer_arguments, network_arguments, scan
from .timings import TOLERANCE, time_calls

# Two correct builds of a network may round differently (another tile,
# another order of sums); a wrong one is far off.
NETWORK_TOLERANCE = 1e-4


def arguments(ctx, name, coords):
    meta = ctx.functions[name]["meta"]
    if name.startswith("network/"):
        return network_arguments(ctx, name, ctx.sites)
    return layer_arguments(coords, meta["channels"], meta["element"])


def check_outputs(ctx, name, new, old):
    kind = ctx.functions[name]["meta"].get("kind")
    tol = TOLERANCE[kind] if kind else NETWORK_TOLERANCE
    if len(new) != len(old):
        raise AssertionError("%d results against the baseline's %d" % (len(new), len(old)))
    for i, (a, b) in enumerate(zip(new, old)):
        if kind == "bf16" and a.dtype == np.uint16:  # bf16 bits
            a, b = bf16_values(a), bf16_values(b)
        # Integer results (sites, counts) exactly.
        compare(a, b, tol, tol, "result %d against the baseline's" % i)


def run(ctx):
    baseline = ctx.kit.get("baseline")
    pairs = [(info["meta"]["of"], name) for name, info in sorted(ctx.functions.items())
             if info["group"] == "baseline"]
    if not baseline or not pairs:
        ctx.checks.notes.append("no baseline in this kit (build_kit.py --baseline-compiler)")
        return
    coords = scan(ctx.work, ctx.sites)
    rounds, calls = (6, 20) if ctx.mode == "cuda" else (2, 1)
    rows = []
    for new, old in pairs:
        def one():
            args = arguments(ctx, new, coords)
            check_outputs(ctx, new, ctx.on_device(new, *args), ctx.on_device(old, *args))
            libraries = {n: ctx.library(n, ctx.device_target(n)) for n in (new, old)}
            times = {new: [], old: []}
            for r in range(rounds):
                for n in (new, old) if r % 2 == 0 else (old, new):
                    times[n].append(time_calls(ctx, libraries[n], args, calls)[0])
            ms, baseline_ms = statistics.median(times[new]), statistics.median(times[old])
            rows.append({"function": new, "ms": round(ms, 4), "baseline_ms": round(baseline_ms, 4),
                         "speedup": round(baseline_ms / ms, 3) if ms else None,
                         "rounds_ms": [round(t, 4) for t in times[new]],
                         "baseline_rounds_ms": [round(t, 4) for t in times[old]]})
        ctx.checks.run("a/b %s" % new, one)
    ctx.data["ab"] = {"baseline": baseline, "rounds": rounds, "calls": calls, "rows": rows}
    if ctx.mode != "cuda":
        ctx.checks.notes.append("stand-in: the A/B times are the emulator's on this CPU")
