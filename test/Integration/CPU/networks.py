"""Shared steps of the example-network tests: run a tool, and compile and
run an example network with spconv-run on a generated LiDAR scan."""
import os
import subprocess
import sys


def run(args):
    """Runs a command; exits with its output if it fails."""
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("%s failed:\n%s%s" % (" ".join(args), result.stdout, result.stderr))
    return result.stdout


def csv(values):
    return ",".join(str(v) for v in values)


def run_example(root, bindir, work, entry, sites, seed):
    """Runs examples/ENTRY.mlir on a scan of `sites` sites; its inputs land
    in WORK/args/argI.npy and its outputs in WORK/out/outI.npy. Returns the
    number of inputs."""
    model = os.path.join(root, "examples", entry + ".mlir")
    scan = os.path.join(work, "scan")
    run([sys.executable, os.path.join(root, "bench", "workloads", "gen_workload.py"),
         "lidar", scan, "--sites", str(sites), "--seed", str(seed)])
    inputs = run([sys.executable, os.path.join(root, "scripts", "make_inputs.py"),
                  model, entry, "--coords", scan + "_coords.npy",
                  "--out-dir", os.path.join(work, "args")]).split()
    run([os.path.join(bindir, "spconv-run"), model, "--entry", entry,
         "--output-dir", os.path.join(work, "out")] + inputs)
    return len(inputs) // 2
