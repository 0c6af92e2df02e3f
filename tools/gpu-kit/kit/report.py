"""gpu-report.json and gpu-report.md: what a kit run found (docs/GPU.md,
"Reading the report")."""
import datetime
import json
import os


def _fmt(value, digits=3):
    if value is None:
        return "-"
    if isinstance(value, float):
        return ("%%.%dg" % digits) % value
    return str(value)


def _layers_table(rows):
    lines = ["| layer | sites | pairs | ms | TFLOP/s | roofline ms | of roofline | "
             "build / conv ms | host waits | torch gather-GEMM-scatter ms | torch dense conv3d ms |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        split = r.get("split_ms") or {}
        split_text = " / ".join(_fmt(v) for v in split.values()) if split else "-"
        base = r.get("baselines") or {}
        lines.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["layer"], r["sites"], r["pairs"], _fmt(r.get("ms")), _fmt(r.get("tflops")),
            _fmt(r.get("roofline_ms")), _fmt(r.get("of_roofline")), split_text,
            _fmt(r.get("host_waits")), _fmt(base.get("torch_gather_gemm_scatter_ms")),
            _fmt(base.get("torch_dense_conv3d_ms"))))
    notes = sorted({(r.get("baselines") or {}).get("note") for r in rows} - {None})
    return lines + ["", "Baselines: " + "; ".join(notes)] if notes else lines


def _markdown(report):
    lines = ["# GPU kit report", "",
             "- mode: **%s**%s" % (report["mode"], " (quick)" if report["quick"] else ""),
             "- kit: commit %s, built %s" % (report["kit"].get("commit"),
                                             report["kit"].get("built")),
             "- finished: %s, %.0f s in all" % (report["finished"], report["seconds"]),
             "- **%d passed, %d failed**" % (report["passed"], report["failed"]), ""]
    env = {}
    for phase in report["phases"]:
        env.update(phase["data"].get("environment", {}))
        env.update({"peak " + k: v for k, v in phase["data"].get("peaks", {}).items()})
    if env:
        lines += ["## Environment", "", "| | |", "|---|---|"]
        lines += ["| %s | %s |" % (k, _fmt(v)) for k, v in env.items()] + [""]
    lines += ["## Phases", "", "| phase | status | s (budget) | passed | failed |",
              "|---|---|---:|---:|---:|"]
    for p in report["phases"]:
        lines.append("| %s | %s | %.1f (%d) | %d | %d |" % (
            p["name"], p["status"], p["seconds"], p["budget_s"], len(p["passed"]),
            len(p["failed"])))
    lines.append("")
    failures = [(p["name"], f) for p in report["phases"] for f in p["failed"]]
    if failures:
        lines += ["## Failures", ""]
        for phase, (name, why) in failures:
            first = why.strip().splitlines()
            lines.append("- **%s** (%s): %s" % (name, phase, first[0] if first else ""))
        lines.append("")
    for p in report["phases"]:
        data = p["data"]
        if data.get("layers"):
            lines += ["## Layers (subm 3x3x3, C -> C)", ""] + _layers_table(data["layers"]) + [""]
        if data.get("networks") and p["name"] == "timings":
            lines += ["## Networks", "", "| network | sites | ms | host waits per call |",
                      "|---|---:|---:|---:|"]
            for r in data["networks"]:
                lines.append("| %s | %d | %s | %s |" % (r["network"], r["sites"], _fmt(r["ms"]),
                                                        _fmt(r.get("host_waits"))))
            lines.append("")
        if data.get("sweep"):
            lines += ["## Tile sweep", "", "| layer | default ms | best variant ms | tile |",
                      "|---|---:|---:|---|"]
            for r in data["sweep"]:
                best = min(r["variants"], key=lambda v: v["ms"]) if r["variants"] else None
                lines.append("| %s | %s | %s | %s |" % (
                    r["layer"], _fmt(r["default_ms"]), _fmt(best["ms"]) if best else "-",
                    json.dumps(best["tile"]) if best else "-"))
            lines += ["", "Tuning table: %d entries (gpu-tiles.json)" %
                      len(data["table"]["entries"]), ""]
        if data.get("pipeline"):
            lines += ["## Pipeline against one stage (f16)", "",
                      "| layer | tile | compiler's stages ms | one stage ms | speedup |",
                      "|---|---|---:|---:|---:|"]
            for r in data["pipeline"]:
                t = r["tile"]
                lines.append("| %s | %dx%d, warp %dx%d, depth %d | %s | %s | %sx |" % (
                    r["layer"], t["rows"], t["cols"], t["warp_rows"], t["warp_cols"], t["depth"],
                    _fmt(r["compiler_ms"]), _fmt(r["one_stage_ms"]), _fmt(r["speedup"])))
            lines.append("")
        if data.get("ab"):
            ab = data["ab"]
            lines += ["## A/B against the baseline", "",
                      "Baseline: commit %s (`%s`); medians of %d alternating rounds of %d calls."
                      % (ab["baseline"].get("commit"), ab["baseline"].get("compiler"),
                         ab["rounds"], ab["calls"]), "",
                      "| function | this kit ms | baseline ms | speedup | rounds (this / baseline) |",
                      "|---|---:|---:|---:|---|"]
            for r in ab["rows"]:
                lines.append("| %s | %s | %s | %sx | %s / %s |" % (
                    r["function"], _fmt(r["ms"]), _fmt(r["baseline_ms"]), _fmt(r["speedup"]),
                    " ".join(_fmt(t) for t in r["rounds_ms"]),
                    " ".join(_fmt(t) for t in r["baseline_rounds_ms"])))
            lines.append("")
        if data.get("ncu"):
            lines += ["## Profile (ncu)", ""] + ["- %s: %s" % kv for kv in data["ncu"].items()]
            lines.append("")
        if data.get("wgmma_layouts"):
            lines += ["## wgmma layouts (probe)", "",
                      "| family | reading | result |", "|---|---|---|"]
            for family, readings in sorted(data["wgmma_layouts"].items()):
                for reading, result in sorted(readings.items()):
                    lines.append("| %s | %s | %s |" % (family, reading, result))
            lines.append("")
        if data.get("graph"):
            lines += ["## CUDA graph capture", ""] + \
                ["- %s: %s" % kv for kv in data["graph"].items()] + [""]
    notes = [(p["name"], n) for p in report["phases"] for n in p["notes"]]
    if notes:
        lines += ["## Notes", ""] + ["- %s: %s" % pn for pn in notes] + [""]
    return "\n".join(lines)


def write(out, mode, args, phases, seconds):
    with open(os.path.join(args.kit, "kit.json")) as f:
        kit = json.load(f)
    report = {"format": "spconv-gpu-report/1", "mode": mode, "quick": bool(args.quick),
              "planted": args.plant,
              "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(
                  timespec="seconds"),
              "seconds": round(seconds, 1),
              "kit": {k: kit.get(k) for k in ("commit", "built", "chips", "small", "host_cpu")},
              "passed": sum(len(p["passed"]) for p in phases),
              "failed": sum(len(p["failed"]) for p in phases),
              "phases": phases}
    markdown = _markdown(report)
    with open(os.path.join(out, "gpu-report.json"), "w") as f:
        json.dump(report, f, indent=1, default=str)
    with open(os.path.join(out, "gpu-report.md"), "w") as f:
        f.write(markdown + "\n")
    return {"markdown": markdown, "passed": report["passed"], "failed": report["failed"]}
