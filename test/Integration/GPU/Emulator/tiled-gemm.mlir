// A 16x16-tiled GEMM that stages tiles of A and B in workgroup memory behind
// two barriers, with 2-D blocks, partial tiles at every edge (M, N, K not
// multiples of 16) and an accumulator carried across the barriers: emulated,
// it matches numpy; the race detector stays silent on it and names the
// planted race of the same kernel without its second barrier. (Without the
// detector that kernel still computes the right numbers here: each loop
// iteration is its own phase in the emulator. Only the detector sees that
// nothing orders one iteration's reads before the next one's tile writes.)
//
// The host functions launch on memrefs, which the tensor pipelines of
// spconv-run cannot bufferize, so the kernels are emulated first and the
// result runs on the CPU target.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/emulator_check.py make gemm %t
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu -o %t/emulated.mlir
// RUN: spconv-run %t/emulated.mlir --entry gemm --input %t/a.npy --input %t/b.npy --output-dir %t/out
// RUN: %python %S/Inputs/emulator_check.py check gemm %t %t/out
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu=race-check=1 -o %t/checked.mlir
// RUN: spconv-run %t/checked.mlir --entry gemm --input %t/a.npy --input %t/b.npy --output-dir %t/checked
// RUN: %python %S/Inputs/emulator_check.py check gemm %t %t/checked
// RUN: not spconv-run %t/checked.mlir --entry gemm_missing_barrier --input %t/a.npy --input %t/b.npy --output-dir %t/race 2>&1 | FileCheck %s --check-prefix=RACE
// RACE: spconv-run: error: @gemm_missing_barrier: data race in kernel @gemm_missing_barrier on workgroup buffer {{[01]}} (memref<16x16xf32, #gpu.address_space<workgroup>>) at byte offset {{[0-9]+}}: read by thread {{[0-9]+}} of block 0 and written by thread {{[0-9]+}} of block 0 with no barrier between them

module attributes {gpu.container_module} {
  func.func @gemm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %m = tensor.dim %a, %c0 : tensor<?x?xf32>
    %k = tensor.dim %a, %c1 : tensor<?x?xf32>
    %n = tensor.dim %b, %c1 : tensor<?x?xf32>
    %ma = bufferization.to_buffer %a : tensor<?x?xf32> to memref<?x?xf32>
    %mb = bufferization.to_buffer %b : tensor<?x?xf32> to memref<?x?xf32>
    %mc = memref.alloc(%m, %n) : memref<?x?xf32>
    %gx = arith.ceildivui %n, %c16 : index
    %gy = arith.ceildivui %m, %c16 : index
    call @launch_gemm(%ma, %mb, %mc, %gx, %gy) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, index) -> ()
    %r = bufferization.to_tensor %mc restrict : memref<?x?xf32> to tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }

  func.func private @launch_gemm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %gx: index, %gy: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %m = memref.dim %a, %c0 : memref<?x?xf32>
    %k = memref.dim %a, %c1 : memref<?x?xf32>
    %n = memref.dim %b, %c1 : memref<?x?xf32>
    gpu.launch_func @kernels::@gemm blocks in (%gx, %gy, %c1) threads in (%c16, %c16, %c1)
        args(%a : memref<?x?xf32>, %b : memref<?x?xf32>, %c : memref<?x?xf32>, %m : index, %n : index, %k : index)
    return
  }
  func.func @gemm_missing_barrier(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %m = tensor.dim %a, %c0 : tensor<?x?xf32>
    %k = tensor.dim %a, %c1 : tensor<?x?xf32>
    %n = tensor.dim %b, %c1 : tensor<?x?xf32>
    %ma = bufferization.to_buffer %a : tensor<?x?xf32> to memref<?x?xf32>
    %mb = bufferization.to_buffer %b : tensor<?x?xf32> to memref<?x?xf32>
    %mc = memref.alloc(%m, %n) : memref<?x?xf32>
    %gx = arith.ceildivui %n, %c16 : index
    %gy = arith.ceildivui %m, %c16 : index
    call @launch_gemm_missing_barrier(%ma, %mb, %mc, %gx, %gy) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, index) -> ()
    %r = bufferization.to_tensor %mc restrict : memref<?x?xf32> to tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }

  func.func private @launch_gemm_missing_barrier(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %gx: index, %gy: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %m = memref.dim %a, %c0 : memref<?x?xf32>
    %k = memref.dim %a, %c1 : memref<?x?xf32>
    %n = memref.dim %b, %c1 : memref<?x?xf32>
    gpu.launch_func @kernels::@gemm_missing_barrier blocks in (%gx, %gy, %c1) threads in (%c16, %c16, %c1)
        args(%a : memref<?x?xf32>, %b : memref<?x?xf32>, %c : memref<?x?xf32>, %m : index, %n : index, %k : index)
    return
  }

  gpu.module @kernels {
    gpu.func @gemm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %m: index, %n: index, %k: index)
        workgroup(%ta : memref<16x16xf32, #gpu.address_space<workgroup>>, %tb : memref<16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %zero = arith.constant 0.0 : f32
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %row0 = arith.muli %by, %c16 : index
      %col0 = arith.muli %bx, %c16 : index
      %row = arith.addi %row0, %ty : index
      %col = arith.addi %col0, %tx : index
      %acc = scf.for %k0 = %c0 to %k step %c16 iter_args(%sum = %zero) -> (f32) {
        // ta[ty][tx] = A[row][k0 + tx], tb[ty][tx] = B[k0 + ty][col], 0 outside.
        %ak = arith.addi %k0, %tx : index
        %arow = arith.cmpi ult, %row, %m : index
        %acol = arith.cmpi ult, %ak, %k : index
        %ain = arith.andi %arow, %acol : i1
        %av = scf.if %ain -> (f32) {
          %v = memref.load %a[%row, %ak] : memref<?x?xf32>
          scf.yield %v : f32
        } else {
          scf.yield %zero : f32
        }
        memref.store %av, %ta[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        %bk = arith.addi %k0, %ty : index
        %brow = arith.cmpi ult, %bk, %k : index
        %bcol = arith.cmpi ult, %col, %n : index
        %bin = arith.andi %brow, %bcol : i1
        %bv = scf.if %bin -> (f32) {
          %v = memref.load %b[%bk, %col] : memref<?x?xf32>
          scf.yield %v : f32
        } else {
          scf.yield %zero : f32
        }
        memref.store %bv, %tb[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %next = scf.for %i = %c0 to %c16 step %c1 iter_args(%s = %sum) -> (f32) {
          %x = memref.load %ta[%ty, %i] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %y = memref.load %tb[%i, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %p = arith.mulf %x, %y : f32
          %s2 = arith.addf %s, %p : f32
          scf.yield %s2 : f32
        }
        gpu.barrier
        scf.yield %next : f32
      }
      %rin = arith.cmpi ult, %row, %m : index
      %cin = arith.cmpi ult, %col, %n : index
      %in = arith.andi %rin, %cin : i1
      scf.if %in {
        memref.store %acc, %c[%row, %col] : memref<?x?xf32>
      }
      gpu.return
    }

    // The same kernel without the barrier after the multiply: the next
    // iteration's tile loads overwrite what other threads still read.
    gpu.func @gemm_missing_barrier(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %m: index, %n: index, %k: index)
        workgroup(%ta : memref<16x16xf32, #gpu.address_space<workgroup>>, %tb : memref<16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %zero = arith.constant 0.0 : f32
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %row0 = arith.muli %by, %c16 : index
      %col0 = arith.muli %bx, %c16 : index
      %row = arith.addi %row0, %ty : index
      %col = arith.addi %col0, %tx : index
      %acc = scf.for %k0 = %c0 to %k step %c16 iter_args(%sum = %zero) -> (f32) {
        %ak = arith.addi %k0, %tx : index
        %arow = arith.cmpi ult, %row, %m : index
        %acol = arith.cmpi ult, %ak, %k : index
        %ain = arith.andi %arow, %acol : i1
        %av = scf.if %ain -> (f32) {
          %v = memref.load %a[%row, %ak] : memref<?x?xf32>
          scf.yield %v : f32
        } else {
          scf.yield %zero : f32
        }
        memref.store %av, %ta[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        %bk = arith.addi %k0, %ty : index
        %brow = arith.cmpi ult, %bk, %k : index
        %bcol = arith.cmpi ult, %col, %n : index
        %bin = arith.andi %brow, %bcol : i1
        %bv = scf.if %bin -> (f32) {
          %v = memref.load %b[%bk, %col] : memref<?x?xf32>
          scf.yield %v : f32
        } else {
          scf.yield %zero : f32
        }
        memref.store %bv, %tb[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %next = scf.for %i = %c0 to %c16 step %c1 iter_args(%s = %sum) -> (f32) {
          %x = memref.load %ta[%ty, %i] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %y = memref.load %tb[%i, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %p = arith.mulf %x, %y : f32
          %s2 = arith.addf %s, %p : f32
          scf.yield %s2 : f32
        }
        scf.yield %next : f32
      }
      %rin = arith.cmpi ult, %row, %m : index
      %cin = arith.cmpi ult, %col, %n : index
      %in = arith.andi %rin, %cin : i1
      scf.if %in {
        memref.store %acc, %c[%row, %col] : memref<?x?xf32>
      }
      gpu.return
    }
  }
}
