"""Phase `sanitizers`: a slice of the execution matrix and SECOND on a small
scan under compute-sanitizer's memcheck and racecheck (in a stand-in run:
the emulator builds with the race detector, which fails a call at the
first unordered pair of accesses). A tool that refuses the device is a
note, not a failure."""
import os
import subprocess
import sys

from .context import find_tool

REFUSALS = ("Device not supported", "not supported on this", "Target application terminated",
            "Unable to find", "No supported devices")


def run(ctx):
    if ctx.mode != "cuda":
        from . import slice as check_slice
        check_slice.run(ctx, "emu-race")
        return
    sanitizer = find_tool("compute-sanitizer")
    if not sanitizer:
        ctx.checks.notes.append("compute-sanitizer is not installed")
        return
    py = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for tool in ("memcheck", "racecheck"):
        cmd = [sanitizer, "--tool", tool, "--error-exitcode", "86",
               sys.executable, "-m", "kit", "slice", "--kit", ctx.root,
               "--work", os.path.join(ctx.work, "slice-" + tool)]
        limit = ctx.budget_left() / 2
        try:
            result = subprocess.run(cmd, cwd=py, capture_output=True, text=True, timeout=limit)
        except FileNotFoundError:
            ctx.checks.notes.append("compute-sanitizer is not installed")
            return
        except subprocess.TimeoutExpired:
            # Out of time is no finding: say so, and leave the time to others.
            ctx.checks.notes.append("compute-sanitizer %s did not finish in %.0f s"
                                    % (tool, limit))
            continue
        text = result.stdout + result.stderr
        # memcheck ends with "ERROR SUMMARY: N errors", racecheck with
        # "RACECHECK SUMMARY: N hazards displayed (...)".
        summary = [l for l in text.splitlines() if "SUMMARY:" in l]
        ctx.data[tool] = summary[-1] if summary else text[-300:]
        if result.returncode == 0:
            ctx.checks.ok("compute-sanitizer %s (%s)" % (tool, summary[-1] if summary else ""))
        elif any(r in text for r in REFUSALS) and result.returncode != 86:
            ctx.checks.notes.append("compute-sanitizer %s refused the device: %s"
                                    % (tool, text.strip().splitlines()[-1][:300]))
        else:
            ctx.checks.fail("compute-sanitizer " + tool, text[-3000:])
