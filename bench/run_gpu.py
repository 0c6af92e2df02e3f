# ===- run_gpu.py - The GPU benchmark of bench/run.py --target cuda -------=== #
#
# Part of the spconv-mlir project.
#
# ===----------------------------------------------------------------------=== #
"""`bench/run.py --target cuda` (or `--target gpu-emulator`): ours on a GPU,
side by side with the real spconv 2.x GPU wheel when --spconv2-python names
a Python whose torch sees a CUDA device.

Per workload and layer of --cases (default: subm K=3 16->16, 32->32, 64->64,
128->128), --repeat processes of each side, interleaved:

  ours     spconv-run --target cuda --profile --time, --calls calls per
           process, the last one timed: build (the rulebook) and compute
           (the conv), each bracketed by the generated code's timers, plus
           the whole call, the cold first call and the compile time
  spconv2  spconv.pytorch's SubMConv3d on the GPU (its default
           MaskImplicitGemm), bench/baselines/spconv2_layer.py --api module
           --device cuda: a fresh SparseConvTensor per call, features and
           coordinates already on the device, synchronised around each call

The first process of every side writes its output, checked before any time
is reported against the reference (spconv-ref conv, the naive C++
implementation of DESIGN.md's semantics): coordinates exactly, features to
--check-tolerance of the largest |ours|. VoxelBackBone8x and the MinkUNet run
end to end on the GPU, checked against ours on the CPU (itself checked
against spconv 2.x in the CPU benchmark) and against spconv 2.x's GPU
modules when they run.

--target gpu-emulator runs the same command with the CUDA target's kernels
emulated on the CPU (spconv-gpu-kernels-to-cpu): the whole harness and its
output checks run without a GPU (test/Bench/run-gpu.test), but its times
say nothing about a GPU and the report says so.

Writes DIR/results.md (also printed) and DIR/results.json.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import run as harness

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (side, file prefix) of the layer outputs checked against ours.
LAYER_SIDES = [("reference (spconv-ref conv)", "ref"),
               ("spconv 2.x GPU (SubMConv3d)", "s2g")]


def device_name(opts):
    """The GPU the run measures, in words."""
    if opts.target == "gpu-emulator":
        return "none: the CUDA kernels emulated on the CPU (times say nothing about a GPU)"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            return "%s (driver %s)" % tuple(
                (out.stdout.splitlines()[0].split(",") + ["?"])[:2])
    except OSError:
        pass
    return "unknown (nvidia-smi did not answer)"


def spconv2_gpu_available(opts):
    """Whether --spconv2-python imports spconv.pytorch and its torch sees a
    CUDA device (never on --target gpu-emulator: there is no GPU)."""
    if not opts.spconv2_python or opts.target != "cuda":
        return False
    probe = subprocess.run([opts.spconv2_python, "-c",
                            "import sys, torch, spconv.pytorch; "
                            "sys.exit(0 if torch.cuda.is_available() else 1)"],
                           capture_output=True)
    return probe.returncode == 0


def reference_output(opts, workload, k, inputs, out_dir):
    """spconv-ref conv's output for the layer, as out_dir/ref_{c,f}.npy."""
    features, weights = harness.input_files(inputs)
    ref_dir = os.path.join(out_dir, "ref")
    harness.run([os.path.join(opts.bin, "spconv-ref"), "conv", "--kind", "subm",
                 "--kernel", str(k), "--grid", ",".join(map(str, workload.grid)),
                 "--coords", workload.coords, "--features", features, "--weight", weights,
                 "--out-dir", ref_dir])
    shutil.copy(os.path.join(ref_dir, "out0.npy"), os.path.join(out_dir, "ref_c.npy"))
    shutil.copy(os.path.join(ref_dir, "out1.npy"), os.path.join(out_dir, "ref_f.npy"))


def spconv2_layer(opts, workload, cin, cout, k, inputs, out_dir=None):
    """One process of spconv 2.x's SubMConv3d on the GPU: total ms of the
    last call and of the first."""
    features, weights = harness.input_files(inputs)
    result = harness.run(
        [opts.spconv2_python, os.path.join(HERE, "baselines", "spconv2_layer.py"),
         "--api", "module", "--device", "cuda", "--coords", workload.coords,
         "--grid", ",".join(map(str, workload.grid)), "--kernel", str(k), "--cin", str(cin),
         "--cout", str(cout), "--repeat", str(opts.calls - 1), "--features", features,
         "--weight", weights] + harness.outputs_args(out_dir, "s2g"))
    m = harness.metrics(result.stdout)
    return {"s2_total_ms": m["total_ms_last"], "s2_first_ms": m["total_ms_first"]}


def sweep(opts, workload, with_s2, checks):
    """The layer sweep on one workload: a list of result rows."""
    work = opts.work
    pairs = {k: harness.reference_pairs(opts, workload, k, work)
             for k in sorted({k for _, _, k in opts.cases})}
    rows = []
    for cin, cout, k in opts.cases:
        module, entry = harness.layer_module(cin, cout, k, workload.grid, work)
        inputs = harness.layer_inputs(workload, cin, cout, k, work)
        layer = "%d->%d k%d" % (cin, cout, k)
        samples = []
        for i in range(opts.repeat):
            out_dir = None
            if i == 0:
                out_dir = os.path.join(work, "check", "%s_%s_%s" % (workload.name, entry,
                                                                    opts.target))
                shutil.rmtree(out_dir, ignore_errors=True)
                os.makedirs(out_dir)
                reference_output(opts, workload, k, inputs, out_dir)
            sample = harness.ours(opts, module, entry, inputs, 1, out_dir)
            if with_s2:
                sample.update(spconv2_layer(opts, workload, cin, cout, k, inputs, out_dir))
            if out_dir:
                checks.extend(harness.check_outputs(opts, workload, layer, 1, out_dir,
                                                    sides=LAYER_SIDES))
            samples.append(sample)
        row = harness.medians(samples)
        flops = 2.0 * pairs[k] * cin * cout
        row.update(workload=workload.name, cin=cin, cout=cout, k=k, pairs=pairs[k],
                   entry=entry, gflops=harness.ratio(flops, row["compute_ms"]) * 1e-6,
                   samples=samples)
        rows.append(row)
        print("  %s %s: build %.2f compute %.2f ms%s" % (
            workload.name, entry, row["build_ms"], row["compute_ms"],
            ", spconv 2.x %.2f ms" % row["s2_total_ms"] if with_s2 else ""), file=sys.stderr)
    return rows


def network(opts, workload, with_s2, checks):
    """Each example network end to end on the GPU; its output checked against
    ours on the CPU and, where it runs, spconv 2.x's GPU modules."""
    rows = []
    for name, entry, kitti_only in harness.NETWORKS:
        if kitti_only and not workload.on_kitti:
            continue
        model = os.path.join(ROOT, "examples", entry + ".mlir")
        inputs = harness.run([sys.executable, os.path.join(ROOT, "scripts", "make_inputs.py"),
                              model, entry, "--coords", workload.coords, "--out-dir",
                              os.path.join(opts.work, "%s_%s" % (workload.name, entry))]
                             ).stdout.split()
        check_dir = os.path.join(opts.work, "check", "%s_%s_%s" % (workload.name, entry,
                                                                   opts.target))
        shutil.rmtree(check_dir, ignore_errors=True)
        cpu = harness.spconv_run(opts, model, entry, 1) + inputs
        cpu[cpu.index("--target") + 1] = "cpu"
        cpu[cpu.index("--output-dir") + 1] = os.path.join(check_dir, "cpu")
        harness.run(cpu)
        samples = []
        for i in range(opts.repeat):
            cmd = harness.spconv_run(opts, model, entry, 1) + ["--time"] + inputs
            if i == 0:
                cmd[cmd.index("--output-dir") + 1] = os.path.join(check_dir, "ours")
            result = harness.run(cmd, measure=True)
            table = harness.profile_table(result.stdout)
            sample = {
                "build_ms": sum(ms for ms, _, op in table if op == "build_rulebook"),
                "compute_ms": sum(ms for ms, _, op in table if op != "build_rulebook"),
                "run_ms": harness.phase_ms(result.stderr, "run"),
                "first_ms": harness.phase_ms(result.stderr, "first"),
                "compile_ms": harness.phase_ms(result.stderr, "lower")
                + harness.phase_ms(result.stderr, "jit")}
            if i == 0:
                checks.append(harness.check_network(opts, workload, name, 1, check_dir,
                                                    other="cpu", side="ours on the CPU"))
            if with_s2:
                s2 = harness.run([opts.spconv2_python,
                                  os.path.join(HERE, "baselines", "spconv2_networks.py"),
                                  model, entry, "--device", "cuda",
                                  "--repeat", str(opts.calls - 1)] + inputs
                                 + (["--out-dir", os.path.join(check_dir, "s2")] if i == 0
                                    else []))
                m = harness.metrics(s2.stdout)
                sample.update(s2_run_ms=m["total_ms_last"], s2_first_ms=m["total_ms_first"])
                if i == 0:
                    checks.append(harness.check_network(
                        opts, workload, name, 1, check_dir,
                        side="spconv 2.x GPU modules (BatchNorm, ReLU)"))
            samples.append(sample)
        row = harness.medians(samples)
        row.update(network=name, workload=workload.name, samples=samples, layers=sum(
            1 for _, _, op in harness.profile_table(result.stdout)
            if op in ("rulebook_conv", "inverse_conv")))
        rows.append(row)
        print("  %s %s: run %.2f ms" % (name, workload.name, row["run_ms"]), file=sys.stderr)
    return rows


def sweep_table(rows, with_s2):
    """The layer sweep as Markdown."""
    ms = harness.fmt_ms
    lines = ["| workload | layer | pairs | build | compute | build + compute | compute GFLOP/s "
             "| first call | compile" + (" | spconv 2.x GPU | first call | spconv 2.x / ours"
                                         if with_s2 else "") + " |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" * 3 if with_s2 else "")]
    for r in rows:
        extra = ""
        if with_s2:
            extra = " %s | %s | %.2fx |" % (ms(r["s2_total_ms"]), ms(r["s2_first_ms"]),
                                           harness.ratio(r["s2_total_ms"], r["e2e_ms"]))
        lines.append("| %s | %d->%d k%d | %d | %s | %s | %s | %.1f | %s | %s |%s" % (
            r["workload"], r["cin"], r["cout"], r["k"], r["pairs"], harness.spread(r, "build_ms"),
            harness.spread(r, "compute_ms"), ms(r["e2e_ms"]), r["gflops"], ms(r["first_ms"]),
            ms(r["compile_ms"]), extra))
    return "\n".join(lines)


def network_table(rows, with_s2):
    """The networks as Markdown."""
    ms = harness.fmt_ms
    lines = ["| network | workload | convs | builds | computes | whole function (run) "
             "| first call | compile" + (" | spconv 2.x GPU modules | spconv 2.x / ours"
                                         if with_s2 else "") + " |",
             "|---|---|---:|---:|---:|---:|---:|---:|" + ("---:|" * 2 if with_s2 else "")]
    for r in rows:
        extra = ""
        if with_s2:
            extra = " %s | %.2fx |" % (harness.spread(r, "s2_run_ms"),
                                       harness.ratio(r["s2_run_ms"], r["run_ms"]))
        lines.append("| %s | %s | %d | %s | %s | %s | %s | %s |%s" % (
            r["network"], r["workload"], r["layers"], ms(r["build_ms"]), ms(r["compute_ms"]),
            harness.spread(r, "run_ms"), ms(r["first_ms"]), ms(r["compile_ms"]), extra))
    return "\n".join(lines)


def main(opts):
    """The GPU benchmark: writes and prints the report."""
    start = time.monotonic()
    with_s2 = spconv2_gpu_available(opts)
    checks = []
    workloads = [harness.generate_workload(spec, opts.seed, opts.work)
                 for spec in opts.workload]
    sweep_rows, network_rows = [], []
    for workload in workloads:
        if not opts.no_sweep:
            sweep_rows += sweep(opts, workload, with_s2, checks)
        if not opts.no_network:
            network_rows += network(opts, workload, with_s2, checks)
    if opts.spconv2_python and not with_s2:
        s2_note = ("spconv 2.x GPU: not run (%s)." % (
            "no GPU on --target gpu-emulator" if opts.target != "cuda"
            else "%s does not import spconv.pytorch with a CUDA torch" % opts.spconv2_python))
    elif with_s2:
        s2_note = "spconv 2.x GPU: %s (ratios above 1: we are faster)." % opts.spconv2_python
    else:
        s2_note = "spconv 2.x GPU: not run (no --spconv2-python)."
    report = ["# bench/run.py --target %s results" % opts.target, "",
              "Command: `%s`" % " ".join(["bench/run.py"] + sys.argv[1:]), "",
              "GPU: %s. Host: %s." % (device_name(opts), harness.machine()),
              "Every side: %d processes of %d calls each on the same inputs, the last call "
              "timed (medians, [min, max] where shown), the first (cold) call and our "
              "compile time apart; times in ms; wall time of the whole run %.0f s."
              % (opts.repeat, opts.calls, time.monotonic() - start), s2_note, "",
              "Workloads: " + ", ".join("%s (%d sites, grid %s)" % (w.name, w.n, list(w.grid))
                                        for w in workloads), ""]
    if checks:
        report += ["## Output checks (before any time)", "",
                   "Layers against spconv-ref (the reference), networks against ours on the "
                   "CPU, and spconv 2.x's GPU outputs where it ran: coordinates exactly, "
                   "features to %.0e of the largest |ours|. A mismatch stops the run."
                   % opts.check_tolerance, "", harness.checks_table(checks), ""]
    if sweep_rows:
        report += ["## Layer sweep", "", sweep_table(sweep_rows, with_s2), ""]
    if network_rows:
        report += ["## Networks", "", network_table(network_rows, with_s2), ""]
    text = "\n".join(report)
    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(opts.out, "results.json"), "w") as f:
        json.dump({"target": opts.target, "device": device_name(opts),
                   "spconv2_gpu": with_s2, "sweep": sweep_rows, "network": network_rows,
                   "checks": checks, "argv": sys.argv[1:]}, f, indent=1)
    print(text)
