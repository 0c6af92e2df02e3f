"""Phase `profile`: Nsight Compute on the 64 -> 64 f16 subm conv kernel of
the yardstick scan: achieved occupancy, DRAM and L2 throughput, tensor-pipe
use and registers. Skipped with a note where ncu is missing or refuses."""
import csv
import io
import os
import subprocess
import sys

METRICS = {
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_throughput_pct",
    "lts__t_sectors.avg.pct_of_peak_sustained_elapsed": "l2_throughput_pct",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": "tensor_pipe_pct",
    "launch__registers_per_thread": "registers_per_thread",
    "gpu__time_duration.sum": "duration_ns",
}
LAYER = "layer/f16_64x64"


def run(ctx):
    if ctx.mode != "cuda":
        ctx.checks.notes.append("ncu needs a device: not run")
        return
    if LAYER not in ctx.functions:
        ctx.checks.notes.append("%s is not in this kit" % LAYER)
        return
    py = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = ["ncu", "--csv", "--kernel-name", "regex:spconv_conv", "--launch-skip", "1",
           "--launch-count", "1", "--metrics", ",".join(METRICS),
           sys.executable, "-m", "kit", "call", LAYER, "--kit", ctx.root,
           "--work", ctx.work, "--sites", str(ctx.sites), "--calls", "2"]
    try:
        result = subprocess.run(cmd, cwd=py, capture_output=True, text=True,
                                timeout=ctx.budget_left())
    except FileNotFoundError:
        ctx.checks.notes.append("ncu is not installed")
        return
    except subprocess.TimeoutExpired:
        ctx.checks.notes.append("ncu timed out")
        return
    rows = [l for l in result.stdout.splitlines() if l.startswith('"')]
    if result.returncode != 0 or len(rows) < 2:
        tail = (result.stdout + result.stderr).strip().splitlines()[-3:]
        ctx.checks.notes.append("ncu did not profile (%s)" % " / ".join(tail)[:400])
        return
    values = {}
    for record in csv.DictReader(io.StringIO("\n".join(rows))):
        metric = METRICS.get(record.get("Metric Name"))
        if metric:
            values[metric] = record.get("Metric Value")
            values["kernel"] = record.get("Kernel Name")
    ctx.data["ncu"] = values
    ctx.checks.ok("ncu on %s" % LAYER)
