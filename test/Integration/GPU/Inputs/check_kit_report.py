#!/usr/bin/env python3
"""Checks a stand-in GPU kit report (gpu-report.json) beyond its totals:
every phase ran to its end, every timed layer has a time and its build /
conv split (their presence: no test reads a measured value), and the torch
baselines ran for the f32 layers (checked against ours) where this Python
has torch, or say why not where it has none.

usage: check_kit_report.py REPORT.json"""
import importlib.util
import json
import sys

report = json.load(open(sys.argv[1]))
have_torch = importlib.util.find_spec("torch") is not None
problems = []
for phase in report["phases"]:
    if phase["status"] != "done":
        problems.append("phase %s: %s" % (phase["name"], phase["status"]))
layers = [l for p in report["phases"] for l in p["data"].get("layers", [])]
if not layers:
    problems.append("no timed layers")
for layer in layers:
    if "ms" not in layer or not layer.get("split_ms"):
        problems.append("%s: no time or no build / conv split" % layer["layer"])
    baselines = layer.get("baselines", {})
    if layer["kind"] == "f32" and have_torch:
        for key in ("torch_gather_gemm_scatter_ms", "torch_dense_conv3d_ms"):
            if key not in baselines:
                problems.append("%s: no %s (%s)" % (layer["layer"], key, baselines))
    elif not baselines.get("note"):
        problems.append("%s: baselines neither ran nor say why" % layer["layer"])
for problem in problems:
    print("report: " + problem)
print("report checked: %d layers, torch %s" % (len(layers), "present" if have_torch else "absent"))
sys.exit(1 if problems else 0)
