"""Calls spconv_mlir.torch's CUDA kernels the way torch's own CUDA ops run:
on the current stream, with the caching allocator.

Around each call the runtime gets torch's current stream and an allocator
that asks torch's caching allocator (`spconv_rt_cuda_set_thread_stream`,
`spconv_rt_cuda_set_thread_allocator`: docs/Runtime.md, "The caller's
stream and allocator"), and gets back what it had before. So the kernels
queue behind the work before them, nothing synchronises the device except
where the compiled host code must read a size, and every device buffer
(temporaries and results) is torch's: `torch.cuda.memory_allocated` counts
it and `torch.cuda.empty_cache` returns it. The results become CUDA tensors
over those buffers (through `__cuda_array_interface__`), which give them
back to the caching allocator when the last tensor over them goes.

The default device of the runtime (`mgpuSetDefaultDevice`) is process-wide:
it is set to the tensors' device before each call, so threads of one
process that drive different GPUs at once are not supported (one process
per GPU, as DistributedDataParallel runs, is).
"""
import ctypes
import threading

import numpy as np

from ..errors import InputError

# cuda.h's handle of the legacy default stream.
CU_STREAM_LEGACY = 0x1

_ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p)
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


class _Allocator(ctypes.Structure):
    """SpConvRtCudaAllocator."""
    _fields_ = [("alloc", _ALLOC), ("free", _FREE), ("user", ctypes.c_void_p)]


_live = threading.local()


def _handed_out():
    """The calling thread's buffers from torch's allocator that the runtime
    has not given back: after a call, its results that are torch's (a
    result the host code also writes is managed memory, the runtime's)."""
    if not hasattr(_live, "pointers"):
        _live.pointers = set()
    return _live.pointers


def _torch_alloc(nbytes, stream, user):
    import torch

    try:
        # On torch's current stream, which is the runtime's thread stream
        # during the call (torch's handle: the runtime's is CU_STREAM_LEGACY
        # where torch's is the default stream, 0).
        pointer = torch.cuda.caching_allocator_alloc(int(nbytes), torch.cuda.current_device())
    except RuntimeError:
        # torch.cuda.OutOfMemoryError among them: the runtime records a
        # null result as out of memory, which the call then raises.
        return None
    _handed_out().add(pointer)
    return pointer


def _torch_free(pointer, stream, user):
    import torch

    _handed_out().discard(pointer)
    torch.cuda.caching_allocator_delete(pointer)


# Kept alive for the process: the runtime holds the function pointers.
_TORCH_ALLOCATOR = _Allocator(_ALLOC(_torch_alloc), _FREE(_torch_free), None)
_PREPARED = set()


def _prepare(lib):
    if id(lib) in _PREPARED:
        return
    lib.spconv_rt_cuda_set_thread_stream.restype = ctypes.c_void_p
    lib.spconv_rt_cuda_set_thread_stream.argtypes = [ctypes.c_void_p]
    lib.spconv_rt_cuda_set_thread_allocator.restype = ctypes.c_int
    lib.spconv_rt_cuda_set_thread_allocator.argtypes = [ctypes.POINTER(_Allocator),
                                                        ctypes.POINTER(_Allocator)]
    lib.mgpuSetDefaultDevice.argtypes = [ctypes.c_int32]
    lib.mgpuSetDefaultDevice.restype = None
    lib.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.mgpuMemFree.restype = None
    _PREPARED.add(id(lib))


class _Buffer:
    """One result buffer, given back when the last tensor over it goes: to
    torch's caching allocator, or (managed memory) to the runtime."""

    def __init__(self, address, lib):
        self.address = address
        self.lib = lib if address not in _handed_out() else None
        _handed_out().discard(address)

    def __del__(self):
        if self.lib is None:
            import torch

            torch.cuda.caching_allocator_delete(self.address)
        else:
            self.lib.mgpuMemFree(self.address, None)


class _View:
    """A result's elements as `__cuda_array_interface__`, keeping its
    buffer alive for as long as torch keeps the tensor over it."""

    def __init__(self, desc, dtype, buffer):
        itemsize = np.dtype(dtype).itemsize
        self.buffer = buffer
        self.__cuda_array_interface__ = {
            "shape": tuple(desc.sizes), "typestr": np.dtype(dtype).str,
            "data": (desc.aligned + desc.offset * itemsize, False),
            "strides": tuple(s * itemsize for s in desc.strides), "version": 2}


def call(entry, tensors, dtypes):
    """`entry` (an abi.Entry of a library compiled for target cuda) on CUDA
    `tensors`, returning its results (numpy dtypes `dtypes`) as CUDA
    tensors on the tensors' device."""
    import torch

    from .. import abi

    device = tensors[0].device
    for t in tensors:
        if t.device != device:
            raise InputError("the op's tensors are on %s and %s; they must share one device"
                             % (device, t.device))
    lib = entry.runtime.lib
    _prepare(lib)
    descs = [abi.describe(t.data_ptr(), tuple(t.shape), t.element_size()) for t in tensors]
    with torch.cuda.device(device):
        lib.mgpuSetDefaultDevice(device.index)
        # torch's default stream is the legacy default stream, handle 0; to
        # the runtime a null stream means its own, so it gets that stream's
        # explicit handle.
        stream = torch.cuda.current_stream(device).cuda_stream or CU_STREAM_LEGACY
        previous_stream = lib.spconv_rt_cuda_set_thread_stream(stream)
        previous = _Allocator()
        if lib.spconv_rt_cuda_set_thread_allocator(ctypes.byref(_TORCH_ALLOCATOR),
                                                   ctypes.byref(previous)) != 0:
            lib.spconv_rt_cuda_set_thread_stream(previous_stream)
            raise InputError(entry.runtime.last_error())
        try:
            # On an error the call frees what it had returned.
            results = entry.call(descs, lambda address: _Buffer(address, lib))
        finally:
            lib.spconv_rt_cuda_set_thread_allocator(
                ctypes.byref(previous) if previous.alloc else None, None)
            lib.spconv_rt_cuda_set_thread_stream(previous_stream)
    buffers, out = {}, []
    for desc, dtype in zip(results, dtypes):
        if desc.allocated and desc.allocated not in buffers:
            buffers[desc.allocated] = _Buffer(desc.allocated, lib)
        torch_dtype = getattr(torch, np.dtype(dtype).name)
        if 0 in tuple(desc.sizes) or not desc.aligned:
            out.append(torch.zeros(tuple(desc.sizes), dtype=torch_dtype, device=device))
        else:
            out.append(torch.as_tensor(_View(desc, dtype, buffers[desc.allocated]),
                                       device=device))
    return out
