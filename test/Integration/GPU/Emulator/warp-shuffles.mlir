// gpu.shuffle in its four modes (and a width below the warp) over three
// warps: each thread records the value it receives and whether it is valid;
// emulated, this matches the op's documented semantics lane for lane, also
// under the race detector.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/emulator_check.py make shuffles %t
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu -o %t/emulated.mlir
// RUN: spconv-run %t/emulated.mlir --entry shuffles --input %t/x.npy --output-dir %t/out
// RUN: %python %S/Inputs/emulator_check.py check shuffles %t %t/out
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu=race-check=1 -o %t/checked.mlir
// RUN: spconv-run %t/checked.mlir --entry shuffles --input %t/x.npy --output-dir %t/checked
// RUN: %python %S/Inputs/emulator_check.py check shuffles %t %t/checked
//
// A block that is not whole warps is an error, not an answer:
// RUN: not spconv-run %t/emulated.mlir --entry partial_warp --input %t/x.npy --output-dir %t/partial 2>&1 | FileCheck %s
// CHECK: spconv-run: error: @partial_warp: kernel @shuffles uses warp-level operations but was launched with 48 threads per block, not a whole number of 32-thread warps
//
// So is a shuffle under a branch whose lanes disagree:
// RUN: not spconv-run %t/emulated.mlir --entry divergent_warp --input %t/x.npy --output-dir %t/divergent 2>&1 | FileCheck %s --check-prefix=DIVERGENT
// DIVERGENT: spconv-run: error: @divergent_warp: kernel @half_warp: thread 16 and the first lane of its warp disagree on a branch around warp-level operations (a divergent warp)

module attributes {gpu.container_module} {
  func.func @shuffles(%x: tensor<96xi32>) -> tensor<96x10xi32> {
    %mx = bufferization.to_buffer %x : tensor<96xi32> to memref<96xi32>
    %out = memref.alloc() : memref<96x10xi32>
    call @launch(%mx, %out) : (memref<96xi32>, memref<96x10xi32>) -> ()
    %r = bufferization.to_tensor %out restrict : memref<96x10xi32> to tensor<96x10xi32>
    return %r : tensor<96x10xi32>
  }
  func.func @partial_warp(%x: tensor<96xi32>) -> tensor<96x10xi32> {
    %mx = bufferization.to_buffer %x : tensor<96xi32> to memref<96xi32>
    %out = memref.alloc() : memref<96x10xi32>
    call @launch48(%mx, %out) : (memref<96xi32>, memref<96x10xi32>) -> ()
    %r = bufferization.to_tensor %out restrict : memref<96x10xi32> to tensor<96x10xi32>
    return %r : tensor<96x10xi32>
  }
  func.func private @launch48(%x: memref<96xi32>, %out: memref<96x10xi32>) {
    %c1 = arith.constant 1 : index
    %c48 = arith.constant 48 : index
    gpu.launch_func @kernels::@shuffles blocks in (%c1, %c1, %c1) threads in (%c48, %c1, %c1)
        args(%x : memref<96xi32>, %out : memref<96x10xi32>)
    return
  }
  func.func @divergent_warp(%x: tensor<96xi32>) -> tensor<96xi32> {
    %mx = bufferization.to_buffer %x : tensor<96xi32> to memref<96xi32>
    %out = memref.alloc() : memref<96xi32>
    call @launch_half(%mx, %out) : (memref<96xi32>, memref<96xi32>) -> ()
    %r = bufferization.to_tensor %out restrict : memref<96xi32> to tensor<96xi32>
    return %r : tensor<96xi32>
  }
  func.func private @launch_half(%x: memref<96xi32>, %out: memref<96xi32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@half_warp blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%x : memref<96xi32>, %out : memref<96xi32>)
    return
  }
  func.func private @launch(%x: memref<96xi32>, %out: memref<96x10xi32>) {
    %c1 = arith.constant 1 : index
    %c96 = arith.constant 96 : index
    gpu.launch_func @kernels::@shuffles blocks in (%c1, %c1, %c1) threads in (%c96, %c1, %c1)
        args(%x : memref<96xi32>, %out : memref<96x10xi32>)
    return
  }
  gpu.module @kernels {
    // Half the warp takes the branch: undefined on a GPU, an error here.
    gpu.func @half_warp(%x: memref<96xi32>, %out: memref<96xi32>) kernel {
      %c16 = arith.constant 16 : index
      %one = arith.constant 1 : i32
      %width = arith.constant 32 : i32
      %t = gpu.thread_id x
      %low = arith.cmpi ult, %t, %c16 : index
      scf.if %low {
        %v = memref.load %x[%t] : memref<96xi32>
        %r, %ok = gpu.shuffle xor %v, %one, %width : i32
        memref.store %r, %out[%t] : memref<96xi32>
      }
      gpu.return
    }
    gpu.func @shuffles(%x: memref<96xi32>, %out: memref<96x10xi32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<96xi32>
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c5 = arith.constant 5 : i32
      %c7 = arith.constant 7 : i32
      %c8 = arith.constant 8 : i32
      %c16 = arith.constant 16 : i32
      %c32 = arith.constant 32 : i32
      %r0, %ok0 = gpu.shuffle xor %v, %c5, %c32 : i32
      %r1, %ok1 = gpu.shuffle down %v, %c3, %c32 : i32
      %r2, %ok2 = gpu.shuffle up %v, %c3, %c32 : i32
      %r3, %ok3 = gpu.shuffle idx %v, %c7, %c16 : i32
      %r4, %ok4 = gpu.shuffle down %v, %c2, %c8 : i32
      %i0 = arith.constant 0 : index
      %i1 = arith.constant 1 : index
      %i2 = arith.constant 2 : index
      %i3 = arith.constant 3 : index
      %i4 = arith.constant 4 : index
      %i5 = arith.constant 5 : index
      %i6 = arith.constant 6 : index
      %i7 = arith.constant 7 : index
      %i8 = arith.constant 8 : index
      %i9 = arith.constant 9 : index
      %v0 = arith.extui %ok0 : i1 to i32
      %v1 = arith.extui %ok1 : i1 to i32
      %v2 = arith.extui %ok2 : i1 to i32
      %v3 = arith.extui %ok3 : i1 to i32
      %v4 = arith.extui %ok4 : i1 to i32
      memref.store %r0, %out[%t, %i0] : memref<96x10xi32>
      memref.store %v0, %out[%t, %i1] : memref<96x10xi32>
      memref.store %r1, %out[%t, %i2] : memref<96x10xi32>
      memref.store %v1, %out[%t, %i3] : memref<96x10xi32>
      memref.store %r2, %out[%t, %i4] : memref<96x10xi32>
      memref.store %v2, %out[%t, %i5] : memref<96x10xi32>
      memref.store %r3, %out[%t, %i6] : memref<96x10xi32>
      memref.store %v3, %out[%t, %i7] : memref<96x10xi32>
      memref.store %r4, %out[%t, %i8] : memref<96x10xi32>
      memref.store %v4, %out[%t, %i9] : memref<96x10xi32>
      gpu.return
    }
  }
}
