"""Calls a network compiled with `target="cuda"`.

Its arguments and results are device memory (spconv-compile's header
says so). numpy inputs are copied to the device and the results back; torch
CUDA tensors are passed by pointer, without a copy, and the results come
back as torch CUDA tensors. The weights stay on the device between calls.
Copies go through the runtime's `mgpu*` wrappers, as examples/aot does.
"""
import ctypes

import numpy as np

from . import abi
from .errors import InputError, ToolchainError


class CudaMemory:
    """Device memory and copies through the runtime's mgpu* wrappers (also
    the GPU kit's, tools/gpu-kit/kit/device.py)."""

    def __init__(self, lib):
        self.lib = lib
        lib.mgpuMemAlloc.restype = ctypes.c_void_p
        lib.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_bool]
        lib.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.mgpuMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                   ctypes.c_void_p]
        lib.mgpuStreamSynchronize.argtypes = [ctypes.c_void_p]
        lib.spconv_rt_cuda_device_count.argtypes = [ctypes.POINTER(ctypes.c_int32)]

    def check_device(self):
        count = ctypes.c_int32(0)
        if self.lib.spconv_rt_cuda_device_count(ctypes.byref(count)) != 0:
            raise ToolchainError("target='cuda': no usable CUDA driver: %s"
                                 % self.lib.spconv_rt_last_error().decode(errors="replace"))
        if count.value == 0:
            raise ToolchainError("target='cuda': no CUDA device is visible")

    def copy(self, dst, src, nbytes):
        self.lib.spconv_rt_clear_error()
        self.lib.mgpuMemcpy(dst, src, nbytes, None)
        self.lib.mgpuStreamSynchronize(None)
        error = self.lib.spconv_rt_last_error()
        if error:
            raise ToolchainError("CUDA copy failed: %s" % error.decode(errors="replace"))

    def upload(self, array):
        pointer = self.lib.mgpuMemAlloc(max(array.nbytes, 1), None, False)
        if not pointer:
            raise ToolchainError("cannot allocate %d bytes of device memory" % array.nbytes)
        self.copy(pointer, array.ctypes.data, array.nbytes)
        return pointer

    def free(self, pointer):
        self.lib.mgpuMemFree(pointer, None)


class _DeviceWeights:
    """The weights' device copies, freed with this object."""

    def __init__(self, cuda, arrays):
        self.cuda = cuda
        self.pointers = [cuda.upload(a) for a in arrays]

    def __del__(self):
        for pointer in getattr(self, "pointers", []):
            self.cuda.free(pointer)


def _span_bytes(desc, itemsize):
    if 0 in tuple(desc.sizes):
        return 0
    last = desc.offset + sum((n - 1) * s for n, s in zip(desc.sizes, desc.strides))
    return (last + 1) * itemsize


def call_cuda(net, indices, features):
    runtime = net.entry.runtime.lib
    cuda = getattr(net, "_cuda", None)
    if cuda is None:
        cuda = net._cuda = CudaMemory(runtime)
    cuda.check_device()
    torch_in = type(indices).__module__.startswith("torch")
    if torch_in:
        import torch

        if indices.device.type != "cuda" or features.device.type != "cuda":
            raise InputError("target='cuda' takes numpy arrays or CUDA tensors; got tensors "
                             "on %s and %s" % (indices.device, features.device))
        idx = indices.detach().to(torch.int32).contiguous()
        feat = features.detach().to(getattr(torch, net.dtype.name)).contiguous()
        net._check_indices(idx)
        net._check_features(feat)
        torch.cuda.synchronize()
        pointers, shapes, keep = [idx.data_ptr(), feat.data_ptr()], [idx.shape, feat.shape], []
    else:
        idx, _ = net._host_array(indices, np.int32, "indices", net._check_indices)
        feat, _ = net._host_array(features, net.dtype, "features", net._check_features)
        keep = [cuda.upload(idx), cuda.upload(feat)]
        pointers, shapes = list(keep), [idx.shape, feat.shape]
    if shapes[0][0] != shapes[1][0]:
        raise InputError("indices have %d rows but features have %d; one feature row per "
                         "site" % (shapes[0][0], shapes[1][0]))
    if net._device_weights is None:
        net._device_weights = _DeviceWeights(cuda, net.weights)
    pointers += net._device_weights.pointers
    shapes += [w.shape for w in net.weights]
    itemsizes = [4, net.dtype.itemsize] + [net.dtype.itemsize] * len(net.weights)
    descs = [abi.describe(p, s, i) for p, s, i in zip(pointers, shapes, itemsizes)]
    try:
        results = net.entry.call(descs, cuda.free)
    finally:
        for pointer in keep:
            cuda.free(pointer)
    out, freed = [], set()
    try:
        for desc, (_, dtype) in zip(results, net.entry.results):
            out.append(_download(cuda, desc, np.dtype(dtype), torch_in))
    finally:
        for desc in results:
            if desc.allocated and desc.allocated not in freed:
                freed.add(desc.allocated)
                cuda.free(desc.allocated)
    return out


def _download(cuda, desc, dtype, to_torch):
    """A result as a host numpy array, or a CUDA tensor for torch callers."""
    nbytes = _span_bytes(desc, dtype.itemsize)
    shape = tuple(desc.sizes)
    strides = tuple(s * dtype.itemsize for s in desc.strides)
    source = (desc.aligned or 0)
    if to_torch:
        import torch

        flat = torch.empty(nbytes // dtype.itemsize, dtype=getattr(torch, dtype.name),
                           device="cuda")
        if nbytes:
            cuda.copy(flat.data_ptr(), source, nbytes)
        view = flat[desc.offset:] if nbytes else flat
        return view.as_strided(shape, tuple(s // dtype.itemsize for s in strides)).contiguous()
    staging = np.empty(nbytes // dtype.itemsize, dtype)
    if nbytes:
        cuda.copy(staging.ctypes.data, source, nbytes)
    if not nbytes:
        return np.zeros(shape, dtype)
    base = staging[desc.offset:]
    return np.ascontiguousarray(np.lib.stride_tricks.as_strided(base, shape, strides))
