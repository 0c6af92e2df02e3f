// --target gpu-emulator: the CUDA target's kernels compiled for the CPU, in
// an object with host-memory arguments; --gpu-race-check adds the race
// detector's calls. --manifest describes the entries as JSON.
// RUN: rm -rf %t && mkdir -p %t
// RUN: spconv-compile %s --target gpu-emulator -o %t/emu.o --header %t/emu.h --manifest %t/emu.json
// RUN: llvm-nm %t/emu.o | FileCheck %s --check-prefix=SYMBOLS
// RUN: llvm-nm %t/emu.o | not grep mgpu
// RUN: FileCheck %s --input-file=%t/emu.h --check-prefix=HEADER
// RUN: FileCheck %s --input-file=%t/emu.json --check-prefix=MANIFEST
// RUN: spconv-compile %s --target gpu-emulator --gpu-race-check --gpu-matmul fma -o %t/race.o
// RUN: llvm-nm %t/race.o | FileCheck %s --check-prefix=RACE
// RUN: spconv-compile %s --target cpu -o %t/cpu.o --manifest %t/cpu.json
// RUN: FileCheck %s --input-file=%t/cpu.json --check-prefix=CPU

// SYMBOLS: T pair
// RACE: U spconv_rt_emu_access

// HEADER: (target gpu-emulator, OpenMP, gpu-conv implicit-gemm, gpu-matmul tensor-cores, gpu-mma-ops auto, mcpu host)
// HEADER-NOT: CUDA target
// HEADER: free(result.allocated)

// MANIFEST: "compiled_with": "target gpu-emulator, OpenMP, gpu-conv implicit-gemm, gpu-matmul tensor-cores, gpu-mma-ops auto, mcpu host",
// MANIFEST: "entries": [
// MANIFEST: "arguments": [
// MANIFEST: "element": "i32",
// MANIFEST-NEXT: "mlir_type": "tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>",
// MANIFEST-NEXT: "rank": 2
// MANIFEST: "element": "f16",
// MANIFEST: "name": "pair",
// MANIFEST: "results": [
// MANIFEST: "element": "i32",
// MANIFEST: "element": "f16",
// MANIFEST: "symbol": "pair"
// MANIFEST: "format": "spconv-compile-manifest/1",
// MANIFEST: "gpu_memory": false,
// MANIFEST: "libraries": [
// MANIFEST-NEXT: "spconv_runtime",
// MANIFEST: "runtime_abi_version": 1,
// MANIFEST: "source": "spconv-compile-emulator.mlir",
// MANIFEST: "target": "gpu-emulator"

// CPU: "compiled_with": "target cpu, OpenMP, mcpu host",
// CPU: "target": "cpu"

func.func @pair(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, %f: tensor<?x16xf16>,
                %w: tensor<27x16x16xf16>)
    -> (tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf16>) {
  %oc, %of = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf16>, tensor<27x16x16xf16>
      -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf16>
  return %oc, %of : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>, tensor<?x16xf16>
}

// An object that only allocates (a dense unfold) still links with the
// runtime, which defines the allocation functions of lowered memrefs.
// RUN: spconv-compile %S/Inputs/aot-unfold.mlir --target cpu --openmp=false -o %t/unfold.o --manifest %t/unfold.json
// RUN: FileCheck %s --input-file=%t/unfold.json --check-prefix=ALLOC
// ALLOC: "libraries": [
// ALLOC-NEXT: "spconv_runtime"
// ALLOC-NEXT: ],

// --gpu-tiles: a tuning table's tiles, named in the banner; a bad table is
// the lowering's error, and nothing is written.
// RUN: spconv-compile %s --target gpu-emulator --gpu-tiles %S/../Integration/GPU/Inputs/gpu-tiles.json -o %t/tiled.o --header %t/tiled.h
// RUN: FileCheck %s --input-file=%t/tiled.h --check-prefix=TILED
// TILED: gpu-matmul tensor-cores, gpu-mma-ops auto, gpu-tiles gpu-tiles.json, mcpu host)
// RUN: not spconv-compile %s --target cuda --gpu-format isa --gpu-tiles %t/missing.json -o %t/bad.o 2>&1 | FileCheck %s --check-prefix=BAD-TABLE
// BAD-TABLE: missing.json
// BAD-TABLE: spconv-compile: error: lowering {{.*}} for --target cuda failed
// RUN: not ls %t/bad.o
