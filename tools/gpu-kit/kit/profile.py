"""Phase `profile`: Nsight Compute on the 64 -> 64 f16 subm conv kernel of
the yardstick scan: achieved occupancy, DRAM and L2 throughput, tensor-pipe
use and registers. Skipped with a note where ncu is missing or refuses."""
import csv
import io
import os
import subprocess
import sys

from .context import find_tool

METRICS = {
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_throughput_pct",
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed": "l2_throughput_pct",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": "tensor_pipe_pct",
    "launch__registers_per_thread": "registers_per_thread",
    "gpu__time_duration.sum": "duration_ns",
}
# The same facts under their names in ncu's standard sections.
SECTION_ROWS = {
    "Achieved Occupancy": "achieved_occupancy_pct",
    "DRAM Throughput": "dram_throughput_pct",
    "L2 Cache Throughput": "l2_throughput_pct",
    "Compute (SM) Throughput": "sm_throughput_pct",
    "Registers Per Thread": "registers_per_thread",
    "Duration": "duration",
}
LAYER = "layer/f16_64x64"


def run(ctx):
    if ctx.mode != "cuda":
        ctx.checks.notes.append("ncu needs a device: not run")
        return
    if LAYER not in ctx.functions:
        ctx.checks.notes.append("%s is not in this kit" % LAYER)
        return
    ncu = find_tool("ncu")
    if not ncu:
        ctx.checks.notes.append("ncu is not installed")
        return
    py = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    call = [sys.executable, "-m", "kit", "call", LAYER, "--kit", ctx.root, "--work", ctx.work,
            "--sites", str(ctx.sites), "--calls", "2"]
    # The raw metrics first; where a name is unknown to this ncu (they move
    # between chips and versions), its standard sections instead.
    attempts = [(["--metrics", ",".join(METRICS)], METRICS),
                (["--section", "SpeedOfLight", "--section", "Occupancy",
                  "--section", "LaunchStats"], SECTION_ROWS)]
    tails = []
    for options, wanted in attempts:
        cmd = [ncu, "--csv", "--kernel-name", "regex:spconv_conv", "--launch-skip", "1",
               "--launch-count", "1"] + options + call
        try:
            result = subprocess.run(cmd, cwd=py, capture_output=True, text=True,
                                    timeout=max(5.0, ctx.budget_left() - 2))
        except FileNotFoundError:
            ctx.checks.notes.append("ncu is not installed")
            return
        except subprocess.TimeoutExpired:
            ctx.checks.notes.append("ncu timed out")
            return
        rows = [l for l in result.stdout.splitlines() if l.startswith('"')]
        values = {}
        for record in csv.DictReader(io.StringIO("\n".join(rows))):
            metric = wanted.get(record.get("Metric Name"))
            if metric:
                values[metric] = "%s %s" % (record.get("Metric Value"),
                                            record.get("Metric Unit") or "")
                values["kernel"] = record.get("Kernel Name")
        if result.returncode == 0 and values:
            ctx.data["ncu"] = values
            ctx.checks.ok("ncu on %s" % LAYER)
            return
        tails.append(" / ".join((result.stdout + result.stderr).strip().splitlines()[-2:]))
    ctx.checks.notes.append("ncu did not profile (%s)" % " | ".join(tails)[:500])
