// spconv-compile blocks the CPU lowering's row updates for the CPU it
// compiles for (--mcpu): its vector registers and FMA units choose how many
// output rows a group takes and how many registers each row's chunk holds
// (docs/Compiler.md, "Register blocking"). 64 channels: 6 rows of two
// 256-bit registers with AVX2's 16 (vector<16xf32>), 6 rows of four 512-bit
// ones with AVX-512's 32 (vector<64xf32>), 6 rows of two 128-bit ones with
// SSE's 16 (vector<8xf32>).
// REQUIRES: x86-host
// RUN: spconv-compile %s -o - --emit llvm --mcpu=haswell | FileCheck %s --check-prefix=AVX2
// RUN: spconv-compile %s -o - --emit llvm --mcpu=skylake-avx512 | FileCheck %s --check-prefix=AVX512
// RUN: spconv-compile %s -o - --emit llvm --mcpu=x86-64 | FileCheck %s --check-prefix=SSE
// AVX2: @llvm.fmuladd.v16f32(<16 x float>
// AVX2-NOT: <64 x float>
// AVX512: @llvm.fmuladd.v64f32(<64 x float>
// SSE: @llvm.fmuladd.v8f32(<8 x float>
// SSE-NOT: <16 x float>

// No vector register is spilled: verbose assembly names every spill and
// reload by its size, and only scalars may be (16-, 32- and 64-byte ones
// would be xmm, ymm and zmm registers): the blocking leaves room for the
// accumulators, the chunk's weight vectors and the broadcast. Before the
// chunks followed the target, the AVX2 code of this layer spilled 176
// times; a blocking that counted one weight register instead of the chunk's
// (3 rows of four ymm) spilled 12.
// RUN: spconv-compile %s -o %t-avx2.s --emit asm --mcpu=haswell
// RUN: FileCheck %s --check-prefix=VERBOSE < %t-avx2.s
// RUN: FileCheck %s --check-prefix=NOSPILL < %t-avx2.s
// RUN: spconv-compile %s -o %t-avx512.s --emit asm --mcpu=skylake-avx512
// RUN: FileCheck %s --check-prefix=NOSPILL < %t-avx512.s
// RUN: spconv-compile %s -o %t-sse.s --emit asm --mcpu=x86-64
// RUN: FileCheck %s --check-prefix=NOSPILL < %t-sse.s
// VERBOSE: -- Begin function layer
// NOSPILL-NOT: {{(16|32|64)-byte (Folded )?(Spill|Reload)}}

func.func @layer(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x64xf32>, %w: tensor<27x64x64xf32>) -> tensor<?x64xf32> {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x64xf32>, tensor<27x64x64xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x64xf32>
  return %a#1 : tensor<?x64xf32>
}

// 128 channels (NOSPILL covers every function): 8 AVX-512 registers a row
// would leave room for 2 rows only; 6 rows of 4 registers load less per FMA.
func.func @layer128(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x128xf32>, %w: tensor<27x128x128xf32>) -> tensor<?x128xf32> {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x128xf32>, tensor<27x128x128xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x128xf32>
  return %a#1 : tensor<?x128xf32>
}

// 96 and 48 channels (MinkUNet's decoder, a 16 -> 48 layer): chunks of 6 or
// 3 registers, vector<96xf32> and vector<48xf32>, were assembled lane by
// lane and spilled thousands of times; they are chunks of 2 and 1.
// RUN: spconv-compile %s -o - --emit llvm --mcpu=skylake-avx512 | FileCheck %s --check-prefix=POW2
// POW2-NOT: <96 x float>
// POW2-NOT: <48 x float>
func.func @layer96(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x128xf32>, %w: tensor<27x128x96xf32>) -> tensor<?x96xf32> {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x128xf32>, tensor<27x128x96xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x96xf32>
  return %a#1 : tensor<?x96xf32>
}

func.func @layer48(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x16xf32>, %w: tensor<27x16x48xf32>) -> tensor<?x48xf32> {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x48xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x48xf32>
  return %a#1 : tensor<?x48xf32>
}
