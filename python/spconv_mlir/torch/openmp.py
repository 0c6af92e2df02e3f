"""Which OpenMP runtime serves torch's threads, and a warning when it is not
the compiled kernels'.

The compiled kernels run their parallel loops on LLVM's libomp; the PyPI
torch wheel runs its own on GCC's libgomp. In one process on more than one
thread, each runtime's threads spin for a while after their parallel region
ends, on the cores the other runtime's next region needs: a MinkUNet
training step on two threads was slower than on one (docs/Benchmarks.md,
"Training in PyTorch"). libomp implements libgomp's interface, so starting
Python with `LD_PRELOAD=<libomp>` runs torch's regions on libomp too: one
pool of threads for both, and the second thread pays.
"""
import ctypes
import ctypes.util
import os
import threading
import warnings

from ..errors import ToolchainError
from ..toolchain import find_libomp


class OpenMPWarning(RuntimeWarning):
    """torch and the compiled kernels run on two OpenMP runtimes."""


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def gomp_provider():
    """The path of the library that a call of GOMP_parallel (libgomp's
    interface, which torch's parallel loops call) reaches in this process,
    or None where nothing provides it."""
    process = ctypes.CDLL(None)
    try:
        address = ctypes.cast(process.GOMP_parallel, ctypes.c_void_p).value
    except AttributeError:
        return None
    libdl = ctypes.CDLL(ctypes.util.find_library("dl") or "libc.so.6")
    info = _DlInfo()
    if not libdl.dladdr(ctypes.c_void_p(address), ctypes.byref(info)) or not info.dli_fname:
        return None
    return os.path.realpath(info.dli_fname.decode())


_checked = False
_lock = threading.Lock()


def check(threads):
    """Warns once per process when the kernels are about to run on more than
    one thread while torch's parallel loops run on libgomp."""
    global _checked
    if _checked or threads <= 1:
        return
    with _lock:
        if _checked:
            return
        _checked = True
        provider = gomp_provider()
        if provider is None or "libgomp" not in os.path.basename(provider):
            return
        try:
            libomp = find_libomp()
        except ToolchainError:
            libomp = "libomp.so"
        warnings.warn(
            "spconv_mlir.torch: torch's threads run on libgomp (%s) and the compiled "
            "kernels' on libomp; on more than one thread the two runtimes' waiting threads "
            "take each other's cores. Start Python with LD_PRELOAD=%s so that torch runs on "
            "libomp too (docs/Python.md, \"Threads\")." % (provider, libomp),
            OpenMPWarning, stacklevel=4)
