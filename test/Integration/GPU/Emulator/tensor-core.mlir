// Tensor-core tiles: C = A * B + 1 with f16 A (32x48), B given transposed
// (48x48, loaded with `transpose`) and f32 accumulators; two warps per
// block, one 16x16 tile of C each, over three 16-deep k steps. Emulated, it
// matches numpy; the race detector sees each element of C stored once.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/emulator_check.py make mma %t
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu -o %t/emulated.mlir
// RUN: spconv-run %t/emulated.mlir --entry mma --input %t/a.npy --input %t/bt.npy --output-dir %t/out
// RUN: %python %S/Inputs/emulator_check.py check mma %t %t/out
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu=race-check=1 -o %t/checked.mlir
// RUN: spconv-run %t/checked.mlir --entry mma --input %t/a.npy --input %t/bt.npy --output-dir %t/checked
// RUN: %python %S/Inputs/emulator_check.py check mma %t %t/checked

module attributes {gpu.container_module} {
  func.func @mma(%a: tensor<32x48xf16>, %bt: tensor<48x48xf16>) -> tensor<32x48xf32> {
    %ma = bufferization.to_buffer %a : tensor<32x48xf16> to memref<32x48xf16>
    %mbt = bufferization.to_buffer %bt : tensor<48x48xf16> to memref<48x48xf16>
    %c = memref.alloc() : memref<32x48xf32>
    call @launch(%ma, %mbt, %c) : (memref<32x48xf16>, memref<48x48xf16>, memref<32x48xf32>) -> ()
    %r = bufferization.to_tensor %c restrict : memref<32x48xf32> to tensor<32x48xf32>
    return %r : tensor<32x48xf32>
  }
  func.func private @launch(%a: memref<32x48xf16>, %bt: memref<48x48xf16>, %c: memref<32x48xf32>) {
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@mma blocks in (%c3, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%a : memref<32x48xf16>, %bt : memref<48x48xf16>, %c : memref<32x48xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @mma(%a: memref<32x48xf16>, %bt: memref<48x48xf16>, %c: memref<32x48xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %c48 = arith.constant 48 : index
      %one = arith.constant 1.0 : f32
      %c32 = arith.constant 32 : index
      %tid = gpu.thread_id x
      %warp = arith.divui %tid, %c32 : index
      %bx = gpu.block_id x
      %row0 = arith.muli %warp, %c16 : index
      %col0 = arith.muli %bx, %c16 : index
      %init = gpu.subgroup_mma_constant_matrix %one : !gpu.mma_matrix<16x16xf32, "COp">
      %acc = scf.for %k0 = %c0 to %c48 step %c16 iter_args(%sum = %init) -> (!gpu.mma_matrix<16x16xf32, "COp">) {
        %ta = gpu.subgroup_mma_load_matrix %a[%row0, %k0] {leadDimension = 48 : index} : memref<32x48xf16> -> !gpu.mma_matrix<16x16xf16, "AOp">
        %tb = gpu.subgroup_mma_load_matrix %bt[%col0, %k0] {leadDimension = 48 : index, transpose} : memref<48x48xf16> -> !gpu.mma_matrix<16x16xf16, "BOp">
        %next = gpu.subgroup_mma_compute %ta, %tb, %sum {b_transpose} : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
        scf.yield %next : !gpu.mma_matrix<16x16xf32, "COp">
      }
      gpu.subgroup_mma_store_matrix %acc, %c[%row0, %col0] {leadDimension = 48 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<32x48xf32>
      gpu.return
    }
  }
}
