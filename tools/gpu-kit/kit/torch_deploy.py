"""Phase `torch-deploy`: spconv_mlir.torch's ops where no compiler is
installed (issue 38). The kit carries a kernel store filled where it was
built, for the kit's baseline x86-64, by test/Python/torch_deploy.py's
network; here, with the kit's runtime as the only spconv-mlir files, that
script's `run` must give outputs and gradients bit-identical to those saved
where the store was filled, and a kernel the store lacks (a new layer,
another CPU, another build) must be a miss that says what to do. Runs on
the processor, so the same with and without a device; needs a Python whose
torch has `torch.library.custom_op` (2.4 or later).

Then the CUDA half (`run-cuda`): the store also holds the same kernels
compiled for CUDA, and they must load from it with no compiler. On a device
(not in a stand-in run) the network and a f64 gradcheck run on CUDA tensors,
on torch's stream with torch's allocator: results equal to the CPU's to
1e-5, bit-identical run to run and on another stream, buffers counted by
torch's allocator, gradcheck passing."""
import os
import shutil
import subprocess
import sys

# What torch_deploy.py's `run` prints, line by line: the start of each line
# and a part it must hold.
EXPECTED = [
    ("compiler:", "None"),
    ("outputs and gradients bit-identical to the compiler's:", "True"),
    ("a new layer:", "is not in the kernel store"),
    ("this build's rulebook kernel from the store:", "True"),
    ("code for another CPU:", "is not in the kernel store"),
    ("another build:", "is not in the kernel store"),
    ("a damaged identity:", "is not a toolchain identity"),
]
# What `run-cuda` prints: first on every machine, then on a device only.
EXPECTED_CUDA = [
    ("compiler:", "None"),
    ("cuda kernels from the store:", "8 (sm_"),
]
EXPECTED_DEVICE = [
    ("outputs and gradients on cuda equal the CPU's:", "True"),
    ("outputs on cuda tensors:", "True"),
    ("results from torch's allocator:", "True"),
    ("bit-identical from run to run:", "True"),
    ("bit-identical on another stream:", "True"),
    ("gradcheck f64 on cuda:", "True"),
]


def torch_usable():
    probe = subprocess.run([sys.executable, "-c", "import torch; torch.library.custom_op"],
                           capture_output=True, text=True)
    return probe.returncode == 0


def run(ctx):
    store = ctx.kit.get("torch_store")
    if not store:
        ctx.checks.notes.append("this kit carries no kernel store (it was built "
                                "without build/venv-torch): not run")
        return
    if not torch_usable():
        ctx.checks.notes.append("%s has no torch 2.4 or later: not run"
                                % sys.executable)
        return
    torch_dir = os.path.join(ctx.root, "torch")
    # A copy: a lookup marks the entry used, and the kit may be read-only.
    copy = os.path.join(ctx.work, "torch-store")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(os.path.join(ctx.root, store), copy, symlinks=True)
    env = dict(os.environ, SPCONV_MLIR_PREFIX=ctx.root, SPCONV_MLIR_CACHE_DIR=copy,
               SPCONV_MLIR_CPU=ctx.kit["host_cpu"],
               SPCONV_MLIR_LIBOMP=os.path.join(ctx.root, "lib", "libomp.so.5"),
               PYTHONPATH=os.path.join(ctx.root, "py"), CC="/nonexistent/cc")
    on_device = ctx.mode == "cuda"
    cuda_expected = EXPECTED_CUDA + (EXPECTED_DEVICE if on_device else
                                     [("no CUDA device", "")])
    for mode, expected, output in (("run", EXPECTED, "torch-deploy.txt"),
                                   ("run-cuda", cuda_expected, "torch-deploy-cuda.txt")):
        proc = subprocess.run([sys.executable, os.path.join(torch_dir, "torch_deploy.py"), mode,
                               os.path.join(torch_dir, "want.pt")], env=env,
                              capture_output=True, text=True,
                              timeout=max(5, ctx.budget_left() - 5))
        ctx.write_output(output, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        ctx.data["lines" if mode == "run" else "cuda_lines"] = lines
        prefix = "torch-deploy" + ("" if mode == "run" else " cuda")
        if proc.returncode != 0:
            ctx.checks.fail(prefix, "exit %d: %s" % (
                proc.returncode, (proc.stderr or proc.stdout)[-1500:]))
            continue
        for i, (start, part) in enumerate(expected):
            line = lines[i] if i < len(lines) else ""
            name = prefix + ": " + start.rstrip(":")
            if line.startswith(start) and part in line[len(start):]:
                ctx.checks.ok(name)
            else:
                ctx.checks.fail(name, "expected a line %r holding %r, got %r"
                                % (start, part, line))
