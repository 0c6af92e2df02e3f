// A block reduction the way CUDA kernels write it: warp sums by a loop of
// xor shuffles, one value per warp through workgroup memory and a barrier,
// then the first warp alone (a branch uniform per warp, not per block)
// reduces the warp sums with gpu.subgroup_reduce; also 4-lane cluster sums.
// The last block is partial (1000 items, blocks of 128 threads). Emulated,
// it matches numpy exactly, and the race detector finds nothing.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/emulator_check.py make reduction %t
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu -o %t/emulated.mlir
// RUN: spconv-run %t/emulated.mlir --entry reduce --input %t/x.npy --output-dir %t/out
// RUN: %python %S/Inputs/emulator_check.py check reduction %t %t/out
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu=race-check=1 -o %t/checked.mlir
// RUN: spconv-run %t/checked.mlir --entry reduce --input %t/x.npy --output-dir %t/checked
// RUN: %python %S/Inputs/emulator_check.py check reduction %t %t/checked

module attributes {gpu.container_module} {
  func.func @reduce(%x: tensor<1000xi32>) -> (tensor<8xi32>, tensor<1000xi32>) {
    %mx = bufferization.to_buffer %x : tensor<1000xi32> to memref<1000xi32>
    %sums = memref.alloc() : memref<8xi32>
    %clusters = memref.alloc() : memref<1000xi32>
    call @launch(%mx, %sums, %clusters) : (memref<1000xi32>, memref<8xi32>, memref<1000xi32>) -> ()
    %r0 = bufferization.to_tensor %sums restrict : memref<8xi32> to tensor<8xi32>
    %r1 = bufferization.to_tensor %clusters restrict : memref<1000xi32> to tensor<1000xi32>
    return %r0, %r1 : tensor<8xi32>, tensor<1000xi32>
  }
  func.func private @launch(%x: memref<1000xi32>, %sums: memref<8xi32>, %clusters: memref<1000xi32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @kernels::@reduce blocks in (%c8, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%x : memref<1000xi32>, %sums : memref<8xi32>, %clusters : memref<1000xi32>)
    return
  }
  gpu.module @kernels {
    gpu.func @reduce(%x: memref<1000xi32>, %sums: memref<8xi32>, %clusters: memref<1000xi32>)
        workgroup(%partial : memref<4xi32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %n = arith.constant 1000 : index
      %zero = arith.constant 0 : i32
      %sixteen = arith.constant 16 : i32
      %width = arith.constant 32 : i32
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %base = arith.muli %b, %c128 : index
      %i = arith.addi %base, %t : index
      %in = arith.cmpi ult, %i, %n : index
      %v = scf.if %in -> (i32) {
        %l = memref.load %x[%i] : memref<1000xi32>
        scf.yield %l : i32
      } else {
        scf.yield %zero : i32
      }
      // Offsets 16, 8, 4, 2, 1.
      %warpSum = scf.for %k = %c0 to %c5 step %c1 iter_args(%s = %v) -> (i32) {
        %k32 = arith.index_cast %k : index to i32
        %offset = arith.shrui %sixteen, %k32 : i32
        %other, %valid = gpu.shuffle xor %s, %offset, %width : i32
        %s2 = arith.addi %s, %other : i32
        scf.yield %s2 : i32
      }
      %lane = arith.remui %t, %c32 : index
      %warp = arith.divui %t, %c32 : index
      %first = arith.cmpi eq, %lane, %c0 : index
      scf.if %first {
        memref.store %warpSum, %partial[%warp] : memref<4xi32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      // Only the first warp reduces the warp sums: a branch that differs
      // between warps but not within one.
      %firstWarp = arith.cmpi eq, %warp, %c0 : index
      scf.if %firstWarp {
        %has = arith.cmpi ult, %lane, %c4 : index
        %w = scf.if %has -> (i32) {
          %l = memref.load %partial[%lane] : memref<4xi32, #gpu.address_space<workgroup>>
          scf.yield %l : i32
        } else {
          scf.yield %zero : i32
        }
        %total = gpu.subgroup_reduce add %w : (i32) -> i32
        %leader = arith.cmpi eq, %t, %c0 : index
        scf.if %leader {
          memref.store %total, %sums[%b] : memref<8xi32>
        }
      }
      %cluster = gpu.subgroup_reduce add %v cluster(size = 4) : (i32) -> i32
      scf.if %in {
        memref.store %cluster, %clusters[%i] : memref<1000xi32>
      }
      gpu.return
    }
  }
}
