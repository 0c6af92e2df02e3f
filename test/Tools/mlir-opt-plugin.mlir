// Debian's mlir-opt with tools/spconv-plugin loaded parses, verifies and
// lowers the dialect, and its output is byte for byte what spconv-opt makes:
// the plugin and the tools share one registration (SpConv/InitAll.h).
// RUN: %mlir_opt --load-dialect-plugin=%spconv_plugin %s | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: %mlir_opt --load-dialect-plugin=%spconv_plugin --load-pass-plugin=%spconv_plugin %s \
// RUN:   --pass-pipeline='builtin.module(spconv-to-cpu)' -o %t.plugin.mlir
// RUN: spconv-opt %s --spconv-to-cpu -o %t.spconv-opt.mlir
// RUN: diff %t.plugin.mlir %t.spconv-opt.mlir
// RUN: FileCheck %s --check-prefix=CPU < %t.plugin.mlir

// Pipeline options, the CUDA pipeline (its kernels serialised to PTX through
// the translations the plugin registers) and single passes.
// RUN: %mlir_opt --load-dialect-plugin=%spconv_plugin --load-pass-plugin=%spconv_plugin %s \
// RUN:   -p 'builtin.module(spconv-to-cuda{format=isa chip=sm_90})' | FileCheck %s --check-prefix=CUDA
// RUN: %mlir_opt --load-dialect-plugin=%spconv_plugin --load-pass-plugin=%spconv_plugin %s \
// RUN:   -p 'builtin.module(func.func(spconv-decompose))' | FileCheck %s --check-prefix=DECOMPOSE

// Without the plugin, mlir-opt knows no spconv.
// RUN: not %mlir_opt %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// A pipeline that cannot lower everything fails there too.
// RUN: not %mlir_opt --load-dialect-plugin=%spconv_plugin --load-pass-plugin=%spconv_plugin \
// RUN:   %S/../Pipelines/unlowered.mlir -p 'builtin.module(spconv-to-cpu)' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNLOWERED

// ROUNDTRIP-LABEL: func.func @net(
// ROUNDTRIP: spconv.conv <subm, kernel = [3, 3, 3]>
// CPU-NOT: spconv.
// CPU-LABEL: llvm.func @net(
// CPU: omp.wsloop
// CUDA-LABEL: llvm.func @net(
// CUDA: gpu.launch_func
// CUDA: gpu.binary @spconv_kernels
// CUDA-SAME: chip = "sm_90"
// CUDA-SAME: .entry
// DECOMPOSE: spconv.build_rulebook
// DECOMPOSE: spconv.rulebook_conv
// UNKNOWN: error: #"spconv"<"grid<[41, 1600, 1408]>"> : 'none' attribute created with unregistered dialect
// UNLOWERED: error: 'shape.add' is left unlowered by spconv-to-cpu
func.func @net(%c: tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, %f: tensor<?x16xf32>, %w: tensor<27x16x32xf32>)
    -> tensor<?x32xf32> {
  %a:2 = spconv.conv <subm, kernel = [3, 3, 3]> %c, %f, %w
      : tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x16xf32>, tensor<27x16x32xf32>
      -> tensor<?x4xi32, #spconv.grid<[41, 1600, 1408]>>, tensor<?x32xf32>
  return %a#1 : tensor<?x32xf32>
}
