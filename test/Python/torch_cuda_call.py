"""spconv_mlir.torch's CUDA calls hand the runtime a stream and an allocator
through ctypes (cuda_call.py): this checks that hand-over against the
runtime's C functions on a machine without a GPU, where the caller's stream
and allocator are asked before any driver is. A Python allocator over host
memory stands in for torch's caching allocator (which needs a GPU).

usage: torch_cuda_call.py LIBSPCONV_RUNTIME_CUDA
"""
import ctypes
import sys

from spconv_mlir.torch import cuda_call

lib = ctypes.CDLL(sys.argv[1])
cuda_call._prepare(lib)
lib.mgpuMemAlloc.restype = ctypes.c_void_p
lib.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_bool]
lib.mgpuStreamCreate.restype = ctypes.c_void_p
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]

asked = []


def alloc(nbytes, stream, user):
    asked.append(("alloc", nbytes, stream, user))
    return libc.malloc(nbytes)


def free(pointer, stream, user):
    asked.append(("free", pointer, stream, user))
    libc.free(pointer)


mine = cuda_call._Allocator(cuda_call._ALLOC(alloc), cuda_call._FREE(free), 42)
previous = cuda_call._Allocator()
legacy = cuda_call.CU_STREAM_LEGACY
print("no stream before:", lib.spconv_rt_cuda_set_thread_stream(legacy) is None)
print("the caller's stream handed out:", lib.mgpuStreamCreate() == legacy)
print("allocator set:", lib.spconv_rt_cuda_set_thread_allocator(ctypes.byref(mine),
                                                               ctypes.byref(previous)) == 0)
print("none before:", not previous.alloc)
pointer = lib.mgpuMemAlloc(100, legacy, False)
print("alloc asked with bytes, stream and user:", asked == [("alloc", 100, legacy, 42)])
libc.free(pointer)
# Restored as cuda_call restores: the previous allocator (none) and stream.
print("restored:", lib.spconv_rt_cuda_set_thread_allocator(None, ctypes.byref(previous)) == 0,
      previous.user == 42, lib.spconv_rt_cuda_set_thread_stream(None) == legacy)
half = cuda_call._Allocator(cuda_call._ALLOC(alloc), cuda_call._FREE(), None)
print("half an allocator refused:",
      lib.spconv_rt_cuda_set_thread_allocator(ctypes.byref(half), None) != 0)
