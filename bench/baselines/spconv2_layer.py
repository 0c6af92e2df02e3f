#!/usr/bin/env python3
# ===- spconv2_layer.py - One spconv 2.x sparse conv as a baseline -------=== #
#
# Part of the spconv-mlir project.
#
# ===----------------------------------------------------------------------=== #
"""Times one sparse conv with the real spconv 2.x library.

Standalone: needs only numpy and the `spconv` wheel (which brings cumm,
pccm and ccimport); no PyTorch and no project imports. Run it with the
Python of the virtualenv spconv is installed in (docs/Benchmarks.md, "Real
libraries"):

  /work/venv-spconv/bin/python bench/baselines/spconv2_layer.py \
      --coords C.npy --grid 41,1600,1408 --kernel 3 --cin 16 --cout 16 \
      --threads 2 --repeat 3 [--kind subm|regular]

--api module times spconv.pytorch's own SubMConv3d / SparseConv3d instead
(needs torch), as a user would run it: total_ms per call, our weights,
a fresh SparseConvTensor per call. With --device cuda (module API only,
spconv's GPU wheel and a CUDA torch) the module runs on the GPU, features
and coordinates already there as a user's would be, every call bracketed by
torch.cuda.synchronize(); its algorithm is SubMConv3d's default
(spconv 2.x's MaskImplicitGemm).

Every metric is printed as its median over the timed repeats and as
NAME_min, NAME_max, NAME_last (the process's last call) and NAME_first (the
warm-up, i.e. the cold first call), like the C++ baselines.

It runs what `spconv.pytorch` runs for a CPU tensor, minus torch:

  rulebook  SpconvOps.get_indice_pairs (C++): the (2, K, N) pair table
            filled with -1, then SpconvIndicesCPU::generate_subm_conv_inds
            (or generate_conv_inds), a std::unordered_map hash, single-
            threaded. For subm only the first K/2 offsets are searched and
            each pair is mirrored into offset K-1-k.
  conv      the Python loop of spconv.pytorch.ops.indice_conv for CPU data
            (spconv's CPU-only wheel has no C++ GEMM, so its CPU conv is
            always this loop): for subm the centre offset as one
            features @ W[centre] over all rows, then per other offset
            SpconvOps.gather_cpu (OpenMP) -> matmul -> SpconvOps.scatter_add_cpu
            (OpenMP). The matmul is numpy's (OpenBLAS) where spconv.pytorch
            calls torch.mm; the shapes, order and buffers are the same.
            --gemm torch calls torch.mm (needs torch); the output is then
            bitwise that of spconv.pytorch.SubMConv3d(algo=Native) on CPU.

Prints `name value` lines like the C++ baselines (BenchUtil.cpp): the header
(sites, grid, batch, conv, threads, repeat), the medians over --repeat runs
after one warm-up of rulebook_ms, gather_ms, gemm_ms, scatter_ms, conv_ms,
total_ms, then pairs, out_sites and spconv's own count pairs_spconv.

Pair counts. `pairs` counts (input, output, offset) triples with the centre
offset of a subm conv included, as spconv-ref and the C++ baselines do
(N + 2 * sum of spconv's indice_num_per_loc). spconv's indice_num_per_loc
leaves the centre at 0 (it is done as one dense GEMM over all N rows) and, for
subm, holds counts only for offsets 0..K/2-1 (offset K-1-k reuses k's count),
so `pairs_spconv` = sum(indice_num_per_loc) is less than half of `pairs`. For
a regular conv the two are equal.

Weights. --weight takes our layout, K x Cin x Cout with the offsets in
row-major (z, y, x) order of the window (as spconv-ref). spconv 2.x keeps
weights as KRSC = (Cout, kz, ky, kx, Cin) and offset k of its rulebook is the
same row-major window position, so W_spconv[:, k, :] = W_ours[k].T; the script
converts. Output rows: for subm they are in input order (as ours); for a
regular conv in spconv's discovery order (--out writes them sorted by key,
as spconv-ref does).

Threads: --threads sets OMP_NUM_THREADS (spconv's gather / scatter use
libgomp) and the matmul's threads (OPENBLAS_NUM_THREADS for numpy,
torch.set_num_threads for torch; --blas-threads overrides) before anything
loads. The rulebook is single-threaded whatever --threads says, as in spconv.
With --gemm numpy, OMP_WAIT_POLICY defaults to PASSIVE (see below).
"""

import argparse
import os
import sys
import time


def parse_triple(text):
    parts = [int(p) for p in text.split(",")]
    if len(parts) == 1:
        parts *= 3
    if len(parts) != 3:
        raise argparse.ArgumentTypeError("expected K or K,K,K: %r" % text)
    return parts


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--coords", required=True,
                   help="int [N, 4] .npy, rows (batch, z, y, x)")
    p.add_argument("--grid", type=parse_triple, default=None,
                   help="D,H,W (default: the sites' extent)")
    p.add_argument("--kernel", type=parse_triple, default=[3, 3, 3])
    p.add_argument("--stride", type=parse_triple, default=[1, 1, 1])
    p.add_argument("--padding", type=parse_triple, default=None,
                   help="default k/2*d for subm, 0 for regular")
    p.add_argument("--dilation", type=parse_triple, default=[1, 1, 1])
    p.add_argument("--kind", choices=["subm", "regular"], default="subm")
    p.add_argument("--regular", action="store_true",
                   help="same as --kind regular (the C++ baselines' flag)")
    p.add_argument("--cin", type=int, default=16)
    p.add_argument("--cout", type=int, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--blas-threads", type=int, default=None,
                   help="threads of the matmul's BLAS (default --threads)")
    p.add_argument("--gemm", choices=["numpy", "torch"], default="numpy",
                   help="the matmul: numpy (OpenBLAS; no torch needed) or "
                   "torch.mm, as spconv.pytorch (needs torch)")
    p.add_argument("--api", choices=["ops", "module"], default="ops",
                   help="ops: spconv's C++ ops driven like spconv.pytorch "
                   "(rulebook and conv timed apart); module: "
                   "spconv.pytorch.SubMConv3d / SparseConv3d itself, as a "
                   "user runs it (needs torch; only the total is timed)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="where --api module runs (cuda: the GPU wheel)")
    p.add_argument("--repeat", type=int, default=5,
                   help="timed runs after one warm-up; medians are printed")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random features and weights")
    p.add_argument("--features", help="float32 [N, Cin] .npy instead of "
                   "random features")
    p.add_argument("--weight", help="float32 [K, Cin, Cout] .npy (our "
                   "layout) instead of random weights")
    p.add_argument("--out", help="write the output features here (.npy)")
    p.add_argument("--out-coords", help="write the output coords here (.npy)")
    p.add_argument("--check", action="store_true",
                   help="verify pairs and output against an independent "
                   "numpy computation")
    a = p.parse_args(argv)
    if a.regular:
        a.kind = "regular"
    if a.device == "cuda" and a.api != "module":
        p.error("--device cuda needs --api module (the ops API drives the "
                "CPU ops)")
    if a.threads < 1 or a.repeat < 1 or a.cin < 1 or a.cout < 1:
        p.error("--threads, --repeat, --cin and --cout must be positive")
    subm = a.kind == "subm"
    if subm:
        if any(k % 2 == 0 for k in a.kernel):
            p.error("a submanifold kernel must be odd")
        if a.stride != [1, 1, 1]:
            p.error("a submanifold conv has stride 1")
        if a.padding is not None and a.padding != [
                k // 2 * d for k, d in zip(a.kernel, a.dilation)]:
            p.error("spconv's subm conv fixes padding to k/2*d")
    if a.padding is None:
        a.padding = ([k // 2 * d for k, d in zip(a.kernel, a.dilation)]
                     if subm else [0, 0, 0])
    return a


ARGS = parse_args(sys.argv[1:])
# Before numpy / spconv load their thread pools.
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.blas_threads or ARGS.threads)
# numpy's OpenBLAS keeps its own pthreads spinning after each call; with
# spconv's libgomp threads spinning too, two pools share 2 cores and the
# gather / scatter slow down 20-40x (5 -> 140 ms at 100k sites, 16 -> 16).
# Passive libgomp threads avoid it; set OMP_WAIT_POLICY to override. With
# --gemm torch the libraries' defaults are kept (spinning is faster there).
if ARGS.gemm == "numpy" and ARGS.api == "ops":
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import cumm  # noqa: E402
from cumm import tensorview as tv  # noqa: E402
import spconv  # noqa: E402
if ARGS.gemm == "torch" or ARGS.api == "module":
    import torch  # noqa: E402
    torch.set_num_threads(ARGS.blas_threads or ARGS.threads)

    def matmul(a, b, out=None):
        """torch.mm on zero-copy views, as spconv.pytorch.ops.indice_conv."""
        if out is None:
            return torch.mm(torch.from_numpy(a), torch.from_numpy(b)).numpy()
        torch.mm(torch.from_numpy(a), torch.from_numpy(b),
                 out=torch.from_numpy(out))
        return out
else:
    matmul = np.matmul
from spconv.core_cc.csrc.sparse.all import SpconvOps  # noqa: E402
from spconv.core_cc.csrc.sparse.alloc import ExternalAllocator  # noqa: E402

_TV_TO_NP = {
    tv.float32: np.float32, tv.float64: np.float64, tv.float16: np.float16,
    tv.int8: np.int8, tv.int16: np.int16, tv.int32: np.int32,
    tv.int64: np.int64, tv.uint8: np.uint8, tv.uint16: np.uint16,
    tv.uint32: np.uint32, tv.uint64: np.uint64,
}


class NumpyAllocator(ExternalAllocator):
    """spconv.pytorch's TorchAllocator with numpy arrays (CPU only)."""

    def __init__(self):
        super().__init__()
        self.allocated = {}

    def _keep(self, name, arr, is_temp_memory):
        ten = tv.from_numpy(arr)
        self.allocated[ten.byte_pointer()] = arr
        if name and not is_temp_memory:
            self.allocated[name] = arr
        return ten

    def _array(self, shape, dtype, device):
        if device != -1:
            raise RuntimeError("NumpyAllocator: CPU tensors only")
        return np.empty(shape, dtype=_TV_TO_NP[dtype])

    def zeros(self, name, shape, dtype, device, stream=0,
              is_temp_memory=False, scale=1.0):
        arr = self._array(shape, dtype, device)
        arr.fill(0)
        return self._keep(name, arr, is_temp_memory)

    def empty(self, name, shape, dtype, device, stream=0,
              is_temp_memory=False, scale=1.0):
        return self._keep(name, self._array(shape, dtype, device),
                          is_temp_memory)

    def full_int(self, name, shape, value, dtype, device, stream=0,
                 is_temp_memory=False):
        arr = self._array(shape, dtype, device)
        arr.fill(value)
        return self._keep(name, arr, is_temp_memory)

    def full_float(self, name, shape, value, dtype, device, stream=0,
                   is_temp_memory=False):
        arr = self._array(shape, dtype, device)
        arr.fill(value)
        return self._keep(name, arr, is_temp_memory)

    def get_tensor_by_name(self, name):
        return tv.from_numpy(self.allocated[name])

    def free(self, ten):
        self.allocated.pop(ten.byte_pointer())

    def free_noexcept(self, ten):
        self.allocated.pop(ten.byte_pointer(), None)


def split_mix(n, seed):
    """BenchUtil.cpp's fillRandom: SplitMix64 mapped to [-1, 1)."""
    with np.errstate(over="ignore"):
        z = (np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15)
             * np.arange(1, n + 1, dtype=np.uint64))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    v = (z >> np.uint64(11)).astype(np.float64) * (2.0 / 9007199254740992.0)
    return (v - 1.0).astype(np.float32)


def out_dims(grid, a):
    if a.kind == "subm":
        return list(grid)
    return [(g + 2 * p - d * (k - 1) - 1) // s + 1 for g, k, s, p, d in
            zip(grid, a.kernel, a.stride, a.padding, a.dilation)]


def build_rulebook(indices_tv, batch, grid, a):
    """spconv.pytorch.ops.get_indice_pairs on CPU (SPCONV_CPP_INDICE_PAIRS)."""
    alloc = NumpyAllocator()
    subm = a.kind == "subm"
    num_out = SpconvOps.get_indice_pairs(
        alloc, indices_tv, batch, list(grid), 0,  # ConvAlgo.Native
        a.kernel, a.stride, a.padding, a.dilation, [0, 0, 0], subm, False, 0)
    pair = alloc.allocated["PairFwd"]
    num_per_loc = alloc.allocated["IndiceNumPerLoc"]
    out_inds = None if subm else alloc.allocated["OutIndices"][:num_out]
    return pair, num_per_loc, num_out, out_inds


def indice_conv(feats, feats_tv, w_krsc, pair, pair_tv, num_per_loc,
                num_out, subm, times):
    """spconv.pytorch.ops.indice_conv's CPU loop (its CPU-only path)."""
    cout = w_krsc.shape[0]
    kv = w_krsc.shape[1]
    kc = kv // 2
    t0 = time.perf_counter()
    if subm:
        out = matmul(feats, w_krsc[:, kc].T)
    else:
        out = np.zeros((num_out, cout), np.float32)
    times["gemm"] += time.perf_counter() - t0
    nums = num_per_loc.tolist()
    if subm and all(x == 0 for x in nums):
        return out
    maxnhot = max(nums)
    out_tv = tv.from_numpy(out)
    inp_buffer = np.empty((maxnhot, feats.shape[1]), np.float32)
    out_buffer = np.empty((maxnhot, cout), np.float32)
    inp_buffer_tv = tv.from_numpy(inp_buffer)
    out_buffer_tv = tv.from_numpy(out_buffer)
    pair_in, pair_out = pair_tv[0], pair_tv[1]
    for i, nhot in enumerate(nums):
        if subm and i == kc:
            continue
        if subm and i > kc:
            nhot = nums[kv - i - 1]
        if nhot <= 0:
            continue
        t0 = time.perf_counter()
        SpconvOps.gather_cpu(inp_buffer_tv, feats_tv,
                             pair_in[i].slice_first_axis(0, nhot))
        t1 = time.perf_counter()
        # torch.mm(inp_buffer[:nhot], filters_i.T, out=out_buffer[:nhot])
        matmul(inp_buffer[:nhot], w_krsc[:, i].T, out=out_buffer[:nhot])
        t2 = time.perf_counter()
        SpconvOps.scatter_add_cpu(out_tv, out_buffer_tv,
                                  pair_out[i].slice_first_axis(0, nhot))
        t3 = time.perf_counter()
        times["gather"] += t1 - t0
        times["gemm"] += t2 - t1
        times["scatter"] += t3 - t2
    return out


def print_samples(samples, first):
    """BenchUtil.cpp's Metrics::print: per metric the lower median of the
    timed repeats, then _min, _max, _last (the process's last call) and
    _first (the cold warm-up call)."""
    for name, v in samples.items():
        last = v[-1]
        v = sorted(v)
        print("%s %.3f" % (name, v[(len(v) - 1) // 2]))  # lower median
        print("%s_min %.3f" % (name, v[0]))
        print("%s_max %.3f" % (name, v[-1]))
        print("%s_last %.3f" % (name, last))
        if name in first:
            print("%s_first %.3f" % (name, first[name]))


def blas_core():
    """The kernels of the OpenBLAS this process loaded (numpy's, torch's),
    from openblas_get_corename() of every loaded library that has it."""
    import ctypes
    names = []
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f
                            if "blas" in line.lower() and "/" in line})
    except OSError:
        return "unknown"
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
            fn = lib.openblas_get_corename
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_char_p
        if fn().decode() not in names:
            names.append(fn().decode())
    return ", ".join(names) or "no OpenBLAS loaded"


def main_module(a, coords, n, batch, grid, feats, w_ours):
    """spconv.pytorch's own module as a user runs it: a SubMConv3d (or
    SparseConv3d) with our weights, called on a fresh SparseConvTensor per
    call (so every call builds its rulebook), under torch.no_grad()."""
    import torch
    import spconv.pytorch as spconv_torch
    kz, ky, kx = a.kernel
    if a.kind == "subm":
        conv = spconv_torch.SubMConv3d(a.cin, a.cout, a.kernel, bias=False,
                                       dilation=a.dilation)
    else:
        conv = spconv_torch.SparseConv3d(a.cin, a.cout, a.kernel, bias=False,
                                         stride=a.stride, padding=a.padding,
                                         dilation=a.dilation)
    w = conv.weight
    # Ours K x Cin x Cout -> the module's weight; spconv 2.x keeps KRSC
    # (Cout, kz, ky, kx, Cin) by default, RSCK (kz, ky, kx, Cin, Cout) on
    # older layouts: match the shape.
    if tuple(w.shape) == (a.cout, kz, ky, kx, a.cin):
        wt = w_ours.transpose(2, 0, 1).reshape(a.cout, kz, ky, kx, a.cin)
    elif tuple(w.shape) == (kz, ky, kx, a.cin, a.cout):
        wt = w_ours.reshape(kz, ky, kx, a.cin, a.cout)
    else:
        sys.exit("error: unexpected spconv weight shape %s" % (tuple(w.shape),))
    with torch.no_grad():
        w.copy_(torch.from_numpy(np.ascontiguousarray(wt)))
    on_gpu = a.device == "cuda"
    if on_gpu and not torch.cuda.is_available():
        sys.exit("error: --device cuda: torch sees no CUDA device")
    conv = conv.to(a.device).eval()
    tfeats = torch.from_numpy(feats).to(a.device)
    tcoords = torch.from_numpy(coords).to(a.device)
    if on_gpu:
        print("# device %s" % torch.cuda.get_device_name())
    else:
        print("# blas_core %s" % blas_core())
    print("# torch %s, %d threads" % (torch.__version__, torch.get_num_threads()))
    # A GPU call is done when the device is: synchronise around each one.
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    samples, first = {}, {}
    out = None
    with torch.no_grad():
        for rep in range(a.repeat + 1):
            sync()
            t0 = time.perf_counter()
            x = spconv_torch.SparseConvTensor(tfeats, tcoords, list(grid), batch)
            out = conv(x)
            sync()
            t1 = time.perf_counter()
            if rep == 0:
                first["total_ms"] = (t1 - t0) * 1e3
            else:
                samples.setdefault("total_ms", []).append((t1 - t0) * 1e3)
    print_samples(samples, first)
    ofeats = out.features.cpu().numpy()
    ocoords = out.indices.cpu().numpy().astype(np.int32)
    if a.kind != "subm":
        order = np.argsort(linear_keys(ocoords, out_dims(grid, a)))
        ocoords, ofeats = ocoords[order], ofeats[order]
    print("out_sites %d" % len(ocoords))
    if a.out:
        np.save(a.out, np.ascontiguousarray(ofeats, dtype=np.float32))
    if a.out_coords:
        np.save(a.out_coords, np.ascontiguousarray(ocoords))
    return 0


def linear_keys(coords, dims):
    c = coords.astype(np.int64)
    return ((c[:, 0] * dims[0] + c[:, 1]) * dims[1] + c[:, 2]) * dims[2] \
        + c[:, 3]


def reference_conv(coords, grid, feats, w_ours, a):
    """Independent conv: sorted keys + searchsorted per offset (no spconv).

    out[p] = sum_k in[p * s - pad + k * d] @ W[k]. Returns (out coords in
    input order for subm, else sorted by key), out features, pair count.
    """
    odims = out_dims(grid, a)
    offs = [(z, y, x) for z in range(a.kernel[0]) for y in range(a.kernel[1])
            for x in range(a.kernel[2])]
    if a.kind == "subm":
        ocoords = coords.astype(np.int64)
    else:
        cand = []
        for off in offs:
            q = coords[:, 1:].astype(np.int64) + np.array(a.padding) \
                - np.array(off) * np.array(a.dilation)
            ok = np.all(q % np.array(a.stride) == 0, axis=1)
            q = q // np.array(a.stride)
            ok &= np.all((q >= 0) & (q < np.array(odims)), axis=1)
            cand.append(np.concatenate([coords[ok, :1], q[ok]], axis=1))
        ocoords = np.concatenate(cand).astype(np.int64)
        ocoords = ocoords[np.argsort(linear_keys(ocoords, odims))]
        ocoords = np.unique(ocoords, axis=0)  # stays sorted by key
    ikeys = linear_keys(coords, grid)
    order = np.argsort(ikeys, kind="stable")
    skeys = ikeys[order]
    out = np.zeros((len(ocoords), w_ours.shape[2]), np.float64)
    pairs = 0
    for k, off in enumerate(offs):
        q = ocoords[:, 1:] * np.array(a.stride) - np.array(a.padding) \
            + np.array(off) * np.array(a.dilation)
        ok = np.all((q >= 0) & (q < np.array(grid)), axis=1)
        qk = linear_keys(np.concatenate([ocoords[:, :1], q], axis=1), grid)
        pos = np.searchsorted(skeys, qk)
        pos = np.minimum(pos, len(skeys) - 1)
        ok &= skeys[pos] == qk
        rows = np.nonzero(ok)[0]
        pairs += len(rows)
        out[rows] += feats[order[pos[rows]]].astype(np.float64) @ w_ours[k]
    return ocoords, out, pairs


def main():
    a = ARGS
    coords = np.load(a.coords)
    if coords.ndim != 2 or coords.shape[1] != 4 or coords.dtype.kind not in "iu":
        sys.exit("error: %s: expected an integer [N, 4] array (batch, z, y, "
                 "x), got %s %s" % (a.coords, coords.dtype, coords.shape))
    if coords.size and coords.min() < 0:
        sys.exit("error: %s: negative coordinate" % a.coords)
    coords = np.ascontiguousarray(coords, dtype=np.int32)
    n = coords.shape[0]
    batch = int(coords[:, 0].max()) + 1 if n else 1
    extent = (coords[:, 1:].max(axis=0) + 1).tolist() if n else [1, 1, 1]
    grid = a.grid or extent
    if any(e > g for e, g in zip(extent, grid)):
        sys.exit("error: %s: a site lies outside the grid %s" % (a.coords,
                                                                 grid))
    subm = a.kind == "subm"
    kv = a.kernel[0] * a.kernel[1] * a.kernel[2]

    if a.features:
        feats = np.load(a.features)
        if feats.shape != (n, a.cin):
            sys.exit("error: --features: expected [%d, %d], got %s" %
                     (n, a.cin, feats.shape))
    else:
        feats = split_mix(n * a.cin, a.seed).reshape(n, a.cin)
    feats = np.ascontiguousarray(feats, dtype=np.float32)
    if a.weight:
        w_ours = np.load(a.weight)
        if w_ours.shape != (kv, a.cin, a.cout):
            sys.exit("error: --weight: expected [%d, %d, %d], got %s" %
                     (kv, a.cin, a.cout, w_ours.shape))
    else:
        w_ours = split_mix(kv * a.cin * a.cout,
                           a.seed + 1).reshape(kv, a.cin, a.cout)
    w_ours = w_ours.astype(np.float32)
    # Ours K x Cin x Cout -> spconv's KRSC (Cout, kz*ky*kx, Cin).
    w_krsc = np.ascontiguousarray(w_ours.transpose(2, 0, 1))

    print("# coords %s" % a.coords)
    print("# spconv %s cumm %s numpy %s" % (spconv.__version__,
                                           cumm.__version__, np.__version__))
    print("sites %d" % n)
    print("grid %d,%d,%d" % tuple(grid))
    print("batch %d" % batch)
    print("conv %s k=%d,%d,%d s=%d,%d,%d p=%d,%d,%d d=%d,%d,%d" % (
        a.kind, *a.kernel, *a.stride, *a.padding, *a.dilation))
    print("# gemm %s%s omp_wait_policy %s" % (
        a.gemm, (" torch " + torch.__version__) if a.gemm == "torch" else "",
        os.environ.get("OMP_WAIT_POLICY", "default")))
    print("threads %d" % a.threads)
    if a.api == "ops":
        matmul(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32))
        print("# blas_core %s" % blas_core())
    print("blas_threads %d" % (a.blas_threads or a.threads))
    print("repeat %d" % a.repeat)
    sys.stdout.flush()

    indices_tv = tv.from_numpy(coords)
    feats_tv = tv.from_numpy(feats)
    if a.api == "module":
        return main_module(a, coords, n, batch, grid, feats, w_ours)
    samples, first = {}, {}
    for rep in range(a.repeat + 1):
        times = {"gather": 0.0, "gemm": 0.0, "scatter": 0.0}
        t0 = time.perf_counter()
        pair, num_per_loc, num_out, out_inds = build_rulebook(
            indices_tv, batch, grid, a)
        t1 = time.perf_counter()
        out = indice_conv(feats, feats_tv, w_krsc, pair, tv.from_numpy(pair),
                          num_per_loc, num_out, subm, times)
        t2 = time.perf_counter()
        for name, v in (("rulebook_ms", t1 - t0),
                        ("gather_ms", times["gather"]),
                        ("gemm_ms", times["gemm"]),
                        ("scatter_ms", times["scatter"]),
                        ("conv_ms", t2 - t1), ("total_ms", t2 - t0)):
            if rep == 0:
                first[name] = v * 1e3  # the warm-up: the cold first call
            else:
                samples.setdefault(name, []).append(v * 1e3)
    print_samples(samples, first)
    spconv_pairs = int(num_per_loc.sum())
    pairs = n + 2 * spconv_pairs if subm else spconv_pairs
    print("pairs %d" % pairs)
    print("out_sites %d" % num_out)
    print("pairs_spconv %d" % spconv_pairs)

    ocoords = coords if subm else np.asarray(out_inds)
    if not subm:
        # Sort the output rows by key, as spconv-ref writes them.
        order = np.argsort(linear_keys(ocoords, out_dims(grid, a)))
        ocoords, out = ocoords[order], out[order]
    if a.out:
        np.save(a.out, out)
    if a.out_coords:
        np.save(a.out_coords, ocoords)
    if a.check:
        rcoords, rout, rpairs = reference_conv(coords, grid, feats, w_ours, a)
        ok = rpairs == pairs and np.array_equal(rcoords, ocoords)
        err = float(np.abs(out - rout).max() / max(np.abs(rout).max(), 1e-30)) \
            if rout.size else 0.0
        ok &= err < 1e-4
        print("check_pairs %d" % rpairs)
        print("check_rel_err %.3g" % err)
        print("check %s" % ("ok" if ok else "FAILED"))
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
