"""Phase `tiles`: the implicit-GEMM conv of the subm layers compiled under
other tiles (one-entry tuning tables, chosen when the kit was built), each
checked against the CPU build and timed beside the compiler's own choice;
the tiles that beat it go into a tuning table (`gpu-tiles.json`, the format
`--gpu-tiles` reads: docs/GPU.md, "Tuning table"), which this run writes
beside its report."""
import json

from .context import compare
from .inputs import layer_arguments, scan
from .timings import TOLERANCE, as_float, layer_reference, time_calls

# A tile enters the table only if it beats the default by this much: below
# it, run-to-run noise decides.
MARGIN = 0.03


def pinned_pairs(layer, variants):
    """Each tile timed both as the compiler stages it and pinned to one
    stage: the pipeline against the form before it, side by side."""
    by_shape = {}
    for v in variants:
        shape = json.dumps({k: x for k, x in v["tile"].items() if k != "stages"},
                           sort_keys=True)
        by_shape.setdefault(shape, {})[v["tile"].get("stages")] = v["ms"]
    out = []
    for shape, times in sorted(by_shape.items()):
        if None in times and 1 in times:
            out.append({"layer": layer, "tile": json.loads(shape),
                        "compiler_ms": times[None], "one_stage_ms": times[1],
                        "speedup": round(times[1] / times[None], 3)})
    return out


def run(ctx):
    coords = scan(ctx.work, ctx.sites)
    reps = 3 if ctx.mode != "cuda" else 7
    by_layer = {}
    for name in ctx.names("tile"):
        meta = ctx.functions[name]["meta"]
        by_layer.setdefault(meta["layer"], []).append(name)
    sweep, entries, pipeline = [], [], []
    for layer, variants in sorted(by_layer.items()):
        if layer not in ctx.functions:
            continue
        meta = ctx.functions[layer]["meta"]
        kind = meta["kind"]
        arrays = layer_arguments(coords, meta["channels"], meta["element"])
        expected = {}

        def default():
            expected["features"] = layer_reference(ctx, kind, meta["channels"], arrays)[1]
            library = ctx.library(layer, ctx.device_target(layer))
            expected["ms"], _ = time_calls(ctx, library, arrays, reps)
        if not ctx.checks.run("tiles: default of %s" % layer, default):
            continue
        best = None
        row = {"layer": layer, "default_ms": round(expected["ms"], 4), "variants": []}
        for name in variants:
            tile = ctx.functions[name]["meta"]["tile"]

            def one():
                device = ctx.on_device(name, *arrays)
                compare(as_float(device[1], kind), expected["features"], TOLERANCE[kind],
                        TOLERANCE[kind], "features against the CPU build")
                library = ctx.library(name, ctx.device_target(name))
                ms, _ = time_calls(ctx, library, arrays, reps)
                row["variants"].append({"tile": tile, "ms": round(ms, 4)})
                return ms
            ctx.checks.run("tiles: %s" % name, one)
        for variant in row["variants"]:
            if variant["ms"] < expected["ms"] * (1 - MARGIN) and \
                    (best is None or variant["ms"] < best["ms"]):
                best = variant
        if best:
            entries.append(dict(best["tile"], time_us=round(best["ms"] * 1e3, 1),
                                note="default %.1f us" % (expected["ms"] * 1e3)))
        sweep.append(row)
        pipeline.extend(pinned_pairs(layer, row["variants"]))
    table = {"format": "spconv-gpu-tiles/1", "entries": entries}
    if ctx.mode == "cuda":
        table["device"] = ctx.device_props["name"]
        table["chip"] = ctx.device_props["chip"]
    else:
        table["device"] = "stand-in (GPU emulator): not a tuning, a format check"
    ctx.data["sweep"] = sweep
    ctx.data["pipeline"] = pipeline
    ctx.data["table"] = table
    ctx.write_output("gpu-tiles.json", json.dumps(table, indent=1) + "\n")
