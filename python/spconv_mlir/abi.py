"""Calls a compiled network through its C ABI with ctypes.

spconv-compile's entry `void forward(forward_results *results, const
memref *arg0, ...)` takes MLIR's ranked memref descriptors (`allocated`,
`aligned`, `offset`, `sizes[R]`, `strides[R]`) and returns malloc'ed (CPU)
or device (CUDA) buffers that become the caller's. On the CPU the results
are wrapped as numpy arrays without a copy and freed when the last array
using them goes away.
"""
import ctypes
import weakref

import numpy as np

from .errors import InputError, OutOfMemoryError, ToolchainError

# SpConvRuntime.h's status of an allocation that failed.
SPCONV_RT_ERR_OUT_OF_MEMORY = 6

_DESCRIPTORS = {}


def descriptor_type(rank):
    """The memref descriptor struct of `rank` (the element type does not
    change its layout)."""
    if rank not in _DESCRIPTORS:
        _DESCRIPTORS[rank] = type("MemRef%dD" % rank, (ctypes.Structure,), {"_fields_": [
            ("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
            ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
            ("strides", ctypes.c_int64 * rank)]})
    return _DESCRIPTORS[rank]


def describe(pointer, shape, itemsize, strides_bytes=None):
    """A descriptor of a strided array at `pointer` (element strides)."""
    rank = len(shape)
    d = descriptor_type(rank)()
    d.allocated = d.aligned = pointer
    d.offset = 0
    if strides_bytes is None:
        strides, step = [], 1
        for extent in reversed(shape):
            strides.insert(0, step)
            step *= max(int(extent), 1)
    else:
        strides = [s // itemsize for s in strides_bytes]
    for i in range(rank):
        d.sizes[i] = int(shape[i])
        d.strides[i] = int(strides[i])
    return d


class Runtime:
    """libspconv_runtime's error and thread calls, and the C library's free."""

    def __init__(self, library):
        self.lib = library
        self.lib.spconv_rt_last_error.restype = ctypes.c_char_p
        self.lib.spconv_rt_last_status.restype = ctypes.c_int
        self.lib.spconv_rt_clear_error.restype = None
        self.lib.spconv_rt_set_num_threads.argtypes = [ctypes.c_int32]
        libc = ctypes.CDLL(None)
        self.free = libc.free
        self.free.argtypes = [ctypes.c_void_p]
        self.free.restype = None

    def clear_error(self):
        self.lib.spconv_rt_clear_error()

    def last_error(self):
        message = self.lib.spconv_rt_last_error()
        return message.decode(errors="replace") if message else ""

    def out_of_memory(self):
        """Whether the last error is SPCONV_RT_ERR_OUT_OF_MEMORY."""
        return self.lib.spconv_rt_last_status() == SPCONV_RT_ERR_OUT_OF_MEMORY


class _Allocation:
    """One result buffer; frees it when the arrays over it are gone."""

    def __init__(self, address, release):
        self.address = address
        self._finalizer = weakref.finalize(self, release, address)


def _to_numpy(desc, dtype, owner):
    """An ndarray over a result descriptor's elements, keeping `owner`
    (the allocation) alive."""
    itemsize = np.dtype(dtype).itemsize
    shape = tuple(desc.sizes)
    strides = tuple(s * itemsize for s in desc.strides)
    if 0 in shape or not desc.aligned:
        return np.zeros(shape, dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(shape, desc.strides))
    base = (ctypes.c_char * (span * itemsize)).from_address(desc.aligned + desc.offset * itemsize)
    array = np.lib.stride_tricks.as_strided(
        np.frombuffer(base, dtype=dtype), shape=shape, strides=strides)
    # The array's base chain ends at `base`: it keeps the allocation alive.
    base.owner = owner
    return array


class Entry:
    """The compiled `forward`; `results` lists (rank, numpy dtype) of each
    result."""

    def __init__(self, library_path, symbol, results):
        try:
            self.library = ctypes.CDLL(library_path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            raise ToolchainError("cannot load the compiled network %s: %s"
                                 % (library_path, e)) from None
        self.function = getattr(self.library, symbol)
        self.function.restype = None
        self.results = results
        self.result_struct = type("Results", (ctypes.Structure,), {"_fields_": [
            ("r%d" % i, descriptor_type(rank)) for i, (rank, _) in enumerate(results)]})
        self.runtime = Runtime(self.library)

    def set_threads(self, count):
        """Threads of the compiled loops (OpenMP's, for the calling thread)
        and of the runtime's primitives (process-wide) for the calls that
        follow."""
        # The library links libomp unless compiled with --openmp=false.
        omp = getattr(self.library, "omp_set_num_threads", None)
        if omp is not None:
            omp(ctypes.c_int(count))
        self.runtime.lib.spconv_rt_set_num_threads(count)

    def call(self, descriptors, release):
        """Calls the function; returns the result descriptors. `release`
        frees a result buffer (free, or the CUDA runtime's)."""
        out = self.result_struct()
        self.runtime.clear_error()
        self.function(ctypes.byref(out), *[ctypes.byref(d) for d in descriptors])
        descs = [getattr(out, "r%d" % i) for i in range(len(self.results))]
        error = self.runtime.last_error()
        if error:
            for address in {d.allocated for d in descs if d.allocated}:
                release(address)
            if self.runtime.out_of_memory():
                raise OutOfMemoryError(error)
            raise InputError(error)
        return descs

    def numpy_results(self, descs):
        """Result descriptors as numpy arrays, one owner per distinct buffer."""
        owners = {}
        arrays = []
        for desc, (_, dtype) in zip(descs, self.results):
            if desc.allocated and desc.allocated not in owners:
                owners[desc.allocated] = _Allocation(desc.allocated, self.runtime.free)
            arrays.append(_to_numpy(desc, dtype, owners.get(desc.allocated)))
        return arrays
