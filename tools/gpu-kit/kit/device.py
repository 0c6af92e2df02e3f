"""Where the kit's buffers live and how it times: a CUDA device or the host.

`CudaDevice` speaks to the GPU through the kit's own runtime library
(libspconv_runtime_cuda: the mgpu* wrappers the compiled code calls too,
over the driver's libcuda) for memory, and through libcuda directly for
what the runtime does not export: device properties and timed events.
`HostDevice` is the CPU and emulator builds' side: arguments are the numpy
arrays themselves, results the runtime's buffers, freed by the runtime.
"""
import contextlib
import ctypes
import os
import time

import numpy as np

from spconv_mlir import abi
from spconv_mlir.cuda import CudaMemory
from spconv_mlir.errors import ToolchainError


class DeviceError(RuntimeError):
    pass


@contextlib.contextmanager
def stderr_to(fd):
    """Sends what the runtime prints on stderr (file descriptor 2, which
    C code writes to directly) to `fd` for the block."""
    saved = os.dup(2)
    os.dup2(fd, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class _Placed:
    """An argument where the compiled code reads it."""

    def __init__(self, descriptor, keep=None, release=None):
        self.descriptor = descriptor
        self.keep = keep
        self._release = release

    def free(self):
        if self._release:
            self._release()
            self._release = None


def _span_bytes(desc, itemsize):
    if 0 in tuple(desc.sizes) or not desc.aligned:
        return 0
    last = desc.offset + sum((n - 1) * s for n, s in zip(desc.sizes, desc.strides))
    return (last + 1) * itemsize


def _as_array(raw, desc, dtype):
    """Result `desc` over `raw` (its elements from the start of its
    allocation's aligned pointer) as a contiguous array."""
    itemsize = np.dtype(dtype).itemsize
    shape = tuple(desc.sizes)
    if 0 in shape or raw is None:
        return np.zeros(shape, dtype)
    strides = tuple(s * itemsize for s in desc.strides)
    view = np.lib.stride_tricks.as_strided(raw[desc.offset:], shape, strides)
    return np.ascontiguousarray(view)


class HostDevice:
    """The CPU and the GPU emulator: host memory, wall-clock timers."""

    kind = "host"

    def __init__(self, runtime_library):
        library = ctypes.CDLL(runtime_library, mode=ctypes.RTLD_GLOBAL)
        self.runtime = abi.Runtime(library)
        self._free = library._mlir_memref_to_llvm_free
        self._free.argtypes = [ctypes.c_void_p]
        self._free.restype = None

    def place(self, array):
        return _Placed(abi.describe(array.ctypes.data, array.shape, array.itemsize), keep=array)

    def fetch(self, results, dtypes):
        out = []
        for desc, dtype in zip(results, dtypes):
            nbytes = _span_bytes(desc, np.dtype(dtype).itemsize)
            raw = None
            if nbytes:
                raw = np.frombuffer((ctypes.c_char * nbytes).from_address(desc.aligned),
                                    dtype=dtype).copy()
            out.append(_as_array(raw, desc, dtype))
        self.release(results)
        return out

    def release(self, results):
        # The runtime's own free: its count of live buffers stays true (the
        # injection phase's leak check).
        for address in {d.allocated for d in results if d.allocated}:
            self._free(address)

    def synchronize(self):
        pass

    def timer(self):
        return _WallTimer()


class _WallTimer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.milliseconds = (time.perf_counter() - self.start) * 1e3


# CUdevice_attribute values (cuda.h).
_ATTRIBUTES = {"cc_major": 75, "cc_minor": 76, "sm_count": 16, "clock_khz": 13,
               "memory_clock_khz": 36, "bus_width_bits": 37, "l2_bytes": 38}


class CudaDevice:
    """One GPU through the kit's CUDA runtime and the driver."""

    kind = "cuda"

    def __init__(self, runtime_cuda_library, ordinal=0):
        self.lib = ctypes.CDLL(runtime_cuda_library, mode=ctypes.RTLD_GLOBAL)
        self.runtime = abi.Runtime(self.lib)
        # Memory and copies as the Python front end does them.
        self.memory = CudaMemory(self.lib)
        try:
            self.memory.check_device()
        except ToolchainError as e:
            raise DeviceError(str(e).replace("target='cuda': ", "")) from None
        self.lib.spconv_rt_cuda_thread_stream.restype = ctypes.c_void_p
        self.lib.spconv_rt_cuda_host_wait_count.restype = ctypes.c_int64
        # The driver itself, for properties and timed events, on the
        # device's primary context (the one the runtime uses).
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self._check("cuInit", self.cuda.cuInit(0))
        self.handle = ctypes.c_int(0)
        self._check("cuDeviceGet", self.cuda.cuDeviceGet(ctypes.byref(self.handle), ordinal))
        context = ctypes.c_void_p()
        self._check("cuDevicePrimaryCtxRetain",
                    self.cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), self.handle))
        self._check("cuCtxSetCurrent", self.cuda.cuCtxSetCurrent(context))
        self.stream = self.lib.spconv_rt_cuda_thread_stream()
        if not self.stream:
            raise DeviceError("no stream: %s" % self.runtime.last_error())

    def _check(self, call, status):
        if status != 0:
            name = ctypes.c_char_p()
            self.cuda.cuGetErrorName(status, ctypes.byref(name))
            raise DeviceError("%s failed: %s" % (call, (name.value or b"?").decode()))

    # -- properties ---------------------------------------------------------
    def properties(self):
        name = ctypes.create_string_buffer(256)
        self._check("cuDeviceGetName", self.cuda.cuDeviceGetName(name, 256, self.handle))
        props = {"name": name.value.decode()}
        for key, attribute in _ATTRIBUTES.items():
            value = ctypes.c_int(0)
            self._check("cuDeviceGetAttribute", self.cuda.cuDeviceGetAttribute(
                ctypes.byref(value), attribute, self.handle))
            props[key] = value.value
        total = ctypes.c_size_t(0)
        self._check("cuDeviceTotalMem", self.cuda.cuDeviceTotalMem_v2(ctypes.byref(total),
                                                                      self.handle))
        props["memory_bytes"] = total.value
        version = ctypes.c_int(0)
        self._check("cuDriverGetVersion", self.cuda.cuDriverGetVersion(ctypes.byref(version)))
        props["driver_cuda_version"] = "%d.%d" % (version.value // 1000, version.value % 1000 // 10)
        props["compute_capability"] = "%d.%d" % (props["cc_major"], props["cc_minor"])
        props["chip"] = "sm_%d%d" % (props["cc_major"], props["cc_minor"])
        return props

    # -- memory -------------------------------------------------------------
    def alloc(self, nbytes):
        pointer = self.lib.mgpuMemAlloc(max(int(nbytes), 1), None, False)
        if not pointer:
            raise DeviceError("cannot allocate %d bytes of device memory: %s"
                              % (nbytes, self.runtime.last_error()))
        return pointer

    def free(self, pointer):
        self.memory.free(pointer)

    def copy(self, dst, src, nbytes):
        try:
            self.memory.copy(dst, src, nbytes)
        except ToolchainError as e:
            raise DeviceError(str(e)) from None

    def upload(self, array):
        pointer = self.alloc(array.nbytes)
        if array.nbytes:
            self.copy(pointer, array.ctypes.data, array.nbytes)
        return pointer

    def place(self, array):
        pointer = self.upload(array)
        return _Placed(abi.describe(pointer, array.shape, array.itemsize),
                       release=lambda: self.free(pointer))

    def fetch(self, results, dtypes):
        out = []
        try:
            for desc, dtype in zip(results, dtypes):
                nbytes = _span_bytes(desc, np.dtype(dtype).itemsize)
                raw = None
                if nbytes:
                    raw = np.empty(nbytes // np.dtype(dtype).itemsize, dtype)
                    self.copy(raw.ctypes.data, desc.aligned, nbytes)
                out.append(_as_array(raw, desc, dtype))
        finally:
            self.release(results)
        return out

    def release(self, results):
        for address in {d.allocated for d in results if d.allocated}:
            self.free(address)

    def synchronize(self):
        self._check("cuStreamSynchronize", self.cuda.cuStreamSynchronize(
            ctypes.c_void_p(self.stream)))

    def host_waits(self):
        return self.lib.spconv_rt_cuda_host_wait_count()

    def timer(self):
        return _EventTimer(self)


class _EventTimer:
    """CUDA events on the compiled code's stream around a block of calls."""

    def __init__(self, device):
        self.device = device
        cuda = device.cuda
        self.start, self.stop = ctypes.c_void_p(), ctypes.c_void_p()
        device._check("cuEventCreate", cuda.cuEventCreate(ctypes.byref(self.start), 0))
        device._check("cuEventCreate", cuda.cuEventCreate(ctypes.byref(self.stop), 0))

    def __enter__(self):
        self.device._check("cuEventRecord", self.device.cuda.cuEventRecord(
            self.start, ctypes.c_void_p(self.device.stream)))
        return self

    def __exit__(self, *exc):
        cuda = self.device.cuda
        self.device._check("cuEventRecord", cuda.cuEventRecord(
            self.stop, ctypes.c_void_p(self.device.stream)))
        self.device._check("cuEventSynchronize", cuda.cuEventSynchronize(self.stop))
        elapsed = ctypes.c_float(0)
        self.device._check("cuEventElapsedTime", cuda.cuEventElapsedTime(
            ctypes.byref(elapsed), self.start, self.stop))
        self.milliseconds = elapsed.value
        cuda.cuEventDestroy_v2(self.start)
        cuda.cuEventDestroy_v2(self.stop)
