"""A function compiled ahead of time by spconv-compile, called with numpy.

Each compiled function of the kit is a shared library (the object of
`spconv-compile --target T` linked with the kit's runtime) and the manifest
spconv-compile wrote beside it (`--manifest`): its C symbol and the rank and
element type of every argument and result. The memref descriptors and the
runtime's error calls are the Python front end's (spconv_mlir.abi), so the
kit calls compiled code exactly as `spconv_mlir.compile` does.

Where the buffers live is the device's business (device.py): host memory
for the CPU and emulator builds, device memory for the CUDA ones.
"""
import contextlib
import ctypes
import json
import os

import numpy as np

from spconv_mlir import abi

# Element names of the manifest -> numpy dtypes (bf16 travels as its bits).
DTYPES = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
          "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}


class CallError(RuntimeError):
    """The compiled function reported an error (spconv_rt_last_error)."""


class Library:
    """One compiled entry point: `library.so` and `library.json`."""

    def __init__(self, path, device):
        self.path = path
        with open(os.path.splitext(path)[0] + ".json") as f:
            self.manifest = json.load(f)
        entry = self.manifest["entries"][0]
        self.name = entry["name"]
        self.arguments = [(p["rank"], DTYPES[p["element"]]) for p in entry["arguments"]]
        self.results = [(p["rank"], DTYPES[p["element"]]) for p in entry["results"]]
        self.handle = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        self.function = getattr(self.handle, entry["symbol"])
        self.function.restype = None
        self.runtime = abi.Runtime(self.handle)
        self.result_struct = type("Results", (ctypes.Structure,), {"_fields_": [
            ("r%d" % i, abi.descriptor_type(rank)) for i, (rank, _) in enumerate(self.results)]})
        self.device = device

    def check_arguments(self, arrays):
        if len(arrays) != len(self.arguments):
            raise CallError("%s takes %d arguments, got %d" % (
                self.name, len(self.arguments), len(arrays)))
        for i, (array, (rank, dtype)) in enumerate(zip(arrays, self.arguments)):
            if array.ndim != rank or array.dtype != np.dtype(dtype):
                raise CallError("%s: argument %d must be rank %d %s, got %s %s" % (
                    self.name, i, rank, np.dtype(dtype).name, array.shape, array.dtype))

    def call_placed(self, placed):
        """Calls with arguments already where the device wants them
        (`device.place`); returns the result descriptors, which the caller
        must release (`device.fetch` or `device.release`)."""
        out = self.result_struct()
        self.runtime.clear_error()
        descriptors = [p.descriptor for p in placed]
        self.function(ctypes.byref(out), *[ctypes.byref(d) for d in descriptors])
        results = [getattr(out, "r%d" % i) for i in range(len(self.results))]
        error = self.runtime.last_error()
        if error:
            self.device.release(results)
            raise CallError("%s: %s" % (self.name, error))
        return results

    @contextlib.contextmanager
    def staged(self, arrays):
        """`arrays`, checked, where the device reads them, for the calls in
        the block (`call_placed`); freed after it."""
        arrays = [np.ascontiguousarray(a) for a in arrays]
        self.check_arguments(arrays)
        placed = [self.device.place(a) for a in arrays]
        try:
            yield placed
        finally:
            for p in placed:
                p.free()

    def call_discarding(self, placed):
        """A call whose results are not wanted (a warm-up, a timed call)."""
        self.device.release(self.call_placed(placed))

    def __call__(self, *arrays):
        """numpy in, numpy out: copies to the device and back."""
        with self.staged(arrays) as placed:
            results = self.call_placed(placed)
        return self.device.fetch(results, [dtype for _, dtype in self.results])
