// spconv-compile sizes the CPU lowering's row chunks by the vector registers
// of the CPU it compiles for (--mcpu): a group of 8 output rows keeps its
// chunks in registers, one per row with AVX2's 16 registers of 256 bits, two
// with AVX-512's 32 of 512 (docs/Compiler.md, "Vector registers").
// REQUIRES: x86-host
// RUN: spconv-compile %s -o - --emit llvm --mcpu=haswell | FileCheck %s --check-prefix=AVX2
// RUN: spconv-compile %s -o - --emit llvm --mcpu=skylake-avx512 | FileCheck %s --check-prefix=AVX512
// RUN: spconv-compile %s -o - --emit llvm --mcpu=x86-64 | FileCheck %s --check-prefix=SSE
// AVX2: @llvm.fmuladd.v8f32(<8 x float>
// AVX2-NOT: <32 x float>
// AVX512: @llvm.fmuladd.v32f32(<32 x float>
// SSE: @llvm.fmuladd.v4f32(<4 x float>
// SSE-NOT: <32 x float>

// No vector register is spilled: verbose assembly names every spill and
// reload by its size, and only scalars may be (16-, 32- and 64-byte ones
// would be xmm, ymm and zmm registers). Before the chunks followed the
// target, the AVX2 code of this layer spilled 176 times.
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
