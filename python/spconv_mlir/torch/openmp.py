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
import sys
import threading
import warnings

import torch

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
# Where the frames between the model code and check() come from: this
# package's and torch's.
_LIBRARY_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                      for m in (sys.modules[__name__.split(".")[0]], torch))


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
        message = ("spconv_mlir.torch: torch's threads run on libgomp (%s) and the compiled "
                   "kernels' on libomp; on more than one thread the two runtimes' waiting "
                   "threads take each other's cores. Start Python with LD_PRELOAD=%s so that "
                   "torch runs on libomp too (docs/Python.md, \"Threads\")." % (provider, libomp))
        # Attributed to the first caller outside this package and torch:
        # the model code whose layer ran first.
        frame = sys._getframe(1)
        while frame.f_back is not None and \
                os.path.abspath(frame.f_code.co_filename).startswith(_LIBRARY_DIRS):
            frame = frame.f_back
        warnings.warn_explicit(message, OpenMPWarning, frame.f_code.co_filename, frame.f_lineno,
                               module=frame.f_globals.get("__name__"),
                               registry=frame.f_globals.setdefault("__warningregistry__", {}))
