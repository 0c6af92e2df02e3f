"""What the training benchmarks give a child process that runs
spconv_mlir.torch: this checkout's python/ on PYTHONPATH, OMP_NUM_THREADS,
and with --torch-openmp libomp the LLVM OpenMP runtime preloaded, so that
torch's own parallel loops run on the compiled kernels' runtime
(spconv_mlir/torch/openmp.py, docs/Python.md "Threads")."""
import os
import sys

PYTHON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")


def add_torch_openmp_option(parser):
    parser.add_argument("--torch-openmp", choices=["libomp", "libgomp"], default="libomp",
                        help="the OpenMP runtime of torch's own threads: libomp (preloaded, "
                             "the kernels' runtime; default) or libgomp (the wheel's)")


def child_env(threads, torch_openmp):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               PYTHONPATH=os.pathsep.join([PYTHON, os.environ.get("PYTHONPATH", "")]))
    if torch_openmp == "libomp":
        if PYTHON not in sys.path:
            sys.path.insert(0, PYTHON)
        from spconv_mlir.toolchain import find_libomp

        env["LD_PRELOAD"] = find_libomp()
    return env
