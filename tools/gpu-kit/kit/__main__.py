"""The GPU kit's driver: `bash run.sh [--quick] [--stand-in]` runs this.

  python3 -m kit [--quick] [--stand-in] [--out DIR] [--only PHASES]
                 [--plant FUNCTION] [--sites N]

Runs each phase in a process of its own, with its own time budget: a phase
that fails, crashes or runs out of time is reported and the others still
run. Writes gpu-report.json and gpu-report.md to --out ($OUT, else the
current folder), prints the report, and exits 0 only if every check passed.

--stand-in plays the device with the GPU emulator builds of the same
functions (for testing the kit where there is no GPU); without it, a
machine with no usable CUDA device stops at once with one line saying so.
--plant FUNCTION changes one value of that function's device results, to
prove that a wrong result is caught and named.

Internal subcommands (what the phases start): `phase NAME`, `slice` (the
sanitizers' slice, under compute-sanitizer) and `call FUNCTION` (the
profiler's target).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import traceback

from . import report
from .context import Checks, Context
from .device import CudaDevice, DeviceError, stderr_to

KIT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name -> (seconds on a GPU, seconds with --quick; None: not in a quick run)
PHASES = {
    "environment": (30, 20),
    "correctness": (110, 60),
    "injection": (60, None),
    "sanitizers": (60, None),
    "timings": (80, 30),
    "tiles": (40, None),
    "profile": (25, None),
    "graph": (15, 10),
    "probes": (20, 20),
    "torch-deploy": (40, None),
    "ab": (60, None),
}
# The stand-in's budgets: the emulator is a CPU.
STAND_IN_BUDGET = 600


def phase_module(name):
    from . import (ab, correctness, environment, graph, injection, probes, profile, sanitizers,
                   tiles, timings, torch_deploy)
    return {"environment": environment, "correctness": correctness, "injection": injection,
            "sanitizers": sanitizers, "timings": timings, "tiles": tiles, "profile": profile,
            "graph": graph, "probes": probes, "torch-deploy": torch_deploy, "ab": ab}[name]


def run_phase(args):
    """`phase NAME`: runs one phase, writes its JSON."""
    ctx = Context(args.kit, args.mode, args.work, out=args.out, quick=args.quick,
                  plant=args.plant, sites=args.sites)
    ctx.deadline = time.perf_counter() + args.budget
    ctx.checks.progress = args.json + ".progress"
    try:
        phase_module(args.name).run(ctx)
    except Exception as e:  # noqa: BLE001 - reported as the phase's failure
        ctx.checks.fail(args.name, "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc()))
    result = {"passed": ctx.checks.passed, "failed": ctx.checks.failed,
              "notes": ctx.checks.notes, "data": ctx.data}
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1, default=str)
    return 0


def device_or_reason(kit):
    """None if the kit's CUDA runtime finds a device, else why not. The
    runtime also says why on stderr; the reason is printed once, here."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        with stderr_to(devnull):
            CudaDevice(os.path.join(kit, "lib", "libspconv_runtime_cuda.so.1"))
    except (DeviceError, OSError) as e:
        return str(e)
    finally:
        os.close(devnull)
    return None


def orchestrate(args):
    out = os.path.abspath(args.out or os.environ.get("OUT") or os.getcwd())
    os.makedirs(out, exist_ok=True)
    mode = "stand-in" if args.stand_in else "cuda"
    with open(os.path.join(args.kit, "kit.json")) as f:
        if mode == "stand-in" and not json.load(f).get("emulator"):
            print("gpu-kit: error: this kit has no emulator builds for --stand-in; build "
                  "one with scripts/gpu-kit.sh --emulator (or --small)")
            return 2
    if mode == "cuda":
        reason = device_or_reason(args.kit)
        if reason:
            print("gpu-kit: error: no CUDA device here (%s); run.sh runs on a GPU machine, "
                  "run.sh --stand-in checks the kit with the GPU emulator" % reason)
            return 2
    work = os.path.abspath(args.work or os.path.join(out, "gpu-kit-work"))
    os.makedirs(work, exist_ok=True)
    selected = args.only.split(",") if args.only else list(PHASES)
    unknown = [p for p in selected if p not in PHASES]
    if unknown:
        print("gpu-kit: error: unknown phase %s; the phases are %s"
              % (", ".join(unknown), ", ".join(PHASES)))
        return 2
    results = []
    started = time.perf_counter()
    for name in selected:
        full, quick = PHASES[name]
        budget = quick if args.quick else full
        if budget is None:
            continue
        if mode != "cuda":
            budget = STAND_IN_BUDGET
        print("== %s (budget %d s)" % (name, budget), flush=True)
        path = os.path.join(work, "phase-%s.json" % name)
        for stale in (path, path + ".progress"):
            if os.path.exists(stale):
                os.remove(stale)
        # -X faulthandler: a crash prints the Python stack, naming the
        # check and the call that crashed.
        cmd = [sys.executable, "-X", "faulthandler", "-m", "kit", "phase", name,
               "--kit", args.kit, "--mode", mode, "--work", work, "--out", out,
               "--json", path, "--budget", str(budget)]
        cmd += ["--quick"] if args.quick else []
        cmd += ["--plant", args.plant] if args.plant else []
        cmd += ["--sites", str(args.sites)] if args.sites else []
        t0 = time.perf_counter()
        status, tail = "done", ""
        try:
            proc = subprocess.run(cmd, cwd=os.path.dirname(os.path.dirname(
                os.path.abspath(__file__))), timeout=budget, capture_output=True, text=True)
            tail = (proc.stdout + proc.stderr)[-3000:]
            if proc.returncode != 0:
                status = "crashed (exit %d)" % proc.returncode
        except subprocess.TimeoutExpired as e:
            status = "timed out"
            tail = ((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes)
                    else (e.stdout or ""))[-3000:]
        seconds = time.perf_counter() - t0
        phase = {"name": name, "budget_s": budget, "seconds": round(seconds, 1),
                 "status": status, "passed": [], "failed": [], "notes": [], "data": {}}
        if os.path.exists(path):
            with open(path) as f:
                phase.update(json.load(f))
        else:
            # A phase that crashed or ran out of time keeps the checks it
            # finished (its progress file).
            phase.update(Checks.load_progress(path + ".progress"))
        if status != "done":
            phase["failed"].append([name, "%s after %.0f s; last output:\n%s"
                                    % (status, seconds, tail)])
        if args.verbose and tail:
            print(tail)
        print("   %d passed, %d failed, %.1f s" % (len(phase["passed"]), len(phase["failed"]),
                                                  seconds), flush=True)
        for failure in phase["failed"]:
            print("   FAIL %s" % failure[0], flush=True)
        results.append(phase)
    total = time.perf_counter() - started
    summary = report.write(out, mode, args, results, total)
    print(summary["markdown"])
    print("%d passed, %d failed" % (summary["passed"], summary["failed"]))
    return 0 if summary["failed"] == 0 else 1


def run_slice(args):
    """`slice`: the sanitizers' slice on the device, in this process."""
    from . import slice as check_slice
    ctx = Context(args.kit, "cuda", args.work)
    check_slice.run(ctx)
    for name, why in ctx.checks.failed:
        print("FAIL", name, why)
    return 1 if ctx.checks.failed else 0


def run_call(args):
    """`call FUNCTION`: calls a layer on the scan (what ncu profiles)."""
    from .inputs import layer_arguments, scan
    ctx = Context(args.kit, "cuda", args.work, sites=args.sites)
    meta = ctx.functions[args.function]["meta"]
    arrays = layer_arguments(scan(ctx.work, ctx.sites), meta["channels"], meta["element"])
    for _ in range(args.calls):
        ctx.on_device(args.function, *arrays)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("phase", "slice", "call"):
        sub = argparse.ArgumentParser(prog="kit " + argv[0])
        if argv[0] == "phase":
            sub.add_argument("name")
            sub.add_argument("--mode", required=True)
            sub.add_argument("--json", required=True)
            sub.add_argument("--budget", type=float, required=True)
            sub.add_argument("--out")
            sub.add_argument("--quick", action="store_true")
            sub.add_argument("--plant")
        if argv[0] == "call":
            sub.add_argument("function")
            sub.add_argument("--calls", type=int, default=2)
        sub.add_argument("--kit", required=True)
        sub.add_argument("--work", required=True)
        sub.add_argument("--sites", type=int)
        args = sub.parse_args(argv[1:])
        return {"phase": run_phase, "slice": run_slice, "call": run_call}[argv[0]](args)
    parser = argparse.ArgumentParser(prog="run.sh", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="the short re-run: fewer cases, no injection, sanitizers, tiles "
                        "or profile")
    parser.add_argument("--stand-in", action="store_true",
                        help="no GPU: the emulator builds play the device")
    parser.add_argument("--out", help="where the report goes (default $OUT, else .)")
    parser.add_argument("--work", help="scratch folder (default OUT/gpu-kit-work)")
    parser.add_argument("--only", help="comma-separated phases (default all): " +
                        ", ".join(PHASES))
    parser.add_argument("--plant", metavar="FUNCTION",
                        help="make FUNCTION's device results wrong (tests the kit)")
    parser.add_argument("--sites", type=int, help="scan size (default 100000 on a GPU, "
                        "2000 in a stand-in run)")
    parser.add_argument("--verbose", action="store_true", help="print each phase's output")
    parser.add_argument("--kit", default=KIT, help=argparse.SUPPRESS)
    return orchestrate(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
