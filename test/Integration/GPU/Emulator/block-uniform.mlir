// A loop around barriers whose trip count each block reads from memory (as
// the convolution's tiles read their list of offsets): emulated, every
// thread of a block agrees on it and the result matches the reference, also
// under the race detector.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/emulator_check.py make listed %t
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu -o %t/emulated.mlir
// RUN: spconv-run %t/emulated.mlir --entry listed --input %t/x.npy --input %t/n.npy --output-dir %t/out
// RUN: %python %S/Inputs/emulator_check.py check listed %t %t/out
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu=race-check=1 -o %t/checked.mlir
// RUN: spconv-run %t/checked.mlir --entry listed --input %t/x.npy --input %t/n.npy --output-dir %t/checked
// RUN: %python %S/Inputs/emulator_check.py check listed %t %t/checked
//
// Threads that read different trip counts would not all reach the barrier
// on a GPU: the emulator reports the first that disagrees with thread 0.
// RUN: not spconv-run %t/emulated.mlir --entry divergent --input %t/x.npy --input %t/n.npy --output-dir %t/divergent 2>&1 | FileCheck %s
// CHECK: spconv-run: error: @divergent: kernel @per_thread: thread 1 and thread 0 of its block disagree on a branch or loop bound around a barrier (a barrier in divergent control flow)

module attributes {gpu.container_module} {
  func.func @listed(%x: tensor<256xi32>, %n: tensor<4xi32>) -> tensor<256xi32> {
    %mx = bufferization.to_buffer %x : tensor<256xi32> to memref<256xi32>
    %mn = bufferization.to_buffer %n : tensor<4xi32> to memref<4xi32>
    %out = memref.alloc() : memref<256xi32>
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@rounds blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%mx : memref<256xi32>, %mn : memref<4xi32>, %out : memref<256xi32>)
    %r = bufferization.to_tensor %out restrict : memref<256xi32> to tensor<256xi32>
    return %r : tensor<256xi32>
  }
  func.func @divergent(%x: tensor<256xi32>, %n: tensor<4xi32>) -> tensor<256xi32> {
    %mx = bufferization.to_buffer %x : tensor<256xi32> to memref<256xi32>
    %out = memref.alloc() : memref<256xi32>
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@per_thread blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%mx : memref<256xi32>, %out : memref<256xi32>)
    %r = bufferization.to_tensor %out restrict : memref<256xi32> to tensor<256xi32>
    return %r : tensor<256xi32>
  }
  gpu.module @kernels {
    gpu.func @rounds(%x: memref<256xi32>, %n: memref<4xi32>, %out: memref<256xi32>)
        workgroup(%wg: memref<64xi32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c63 = arith.constant 63 : index
      %c64 = arith.constant 64 : index
      %one = arith.constant 1 : i32
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %base = arith.muli %b, %c64 : index
      %at = arith.addi %base, %t : index
      %start = memref.load %x[%at] : memref<256xi32>
      %count = memref.load %n[%b] : memref<4xi32>
      %rounds = arith.index_cast %count : i32 to index
      %mirror = arith.subi %c63, %t : index
      %end = scf.for %i = %c0 to %rounds step %c1 iter_args(%v = %start) -> (i32) {
        memref.store %v, %wg[%t] : memref<64xi32, #gpu.address_space<workgroup>>
        gpu.barrier
        %m = memref.load %wg[%mirror] : memref<64xi32, #gpu.address_space<workgroup>>
        %next = arith.addi %m, %one : i32
        gpu.barrier
        scf.yield %next : i32
      }
      memref.store %end, %out[%at] : memref<256xi32>
      gpu.return
    }
    // Each thread's trip count is its own input's low bit.
    gpu.func @per_thread(%x: memref<256xi32>, %out: memref<256xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<256xi32>
      %c1_i32 = arith.constant 1 : i32
      %bit = arith.andi %v, %c1_i32 : i32
      %rounds = arith.index_cast %bit : i32 to index
      scf.for %i = %c0 to %rounds step %c1 {
        gpu.barrier
      }
      memref.store %v, %out[%t] : memref<256xi32>
      gpu.return
    }
  }
}
