// A 16x16-tiled GEMM whose A and B tiles come in by cp.async
// (nvgpu.device_async_copy, a source count of 0 zero-filling what is
// outside the matrices) into two stages: the copies of tile t + 1 are in
// flight while tile t is multiplied. Emulated, it matches numpy, with and
// without the race detector; the copies land only at their thread's wait.
// Two planted mistakes: @gemm_early_read waits for all groups but the two
// newest, so it multiplies a stage whose copies have not landed (the
// detector names the read; without it the numbers are wrong), and
// @gemm_unwaited never waits for its last prefetch (an error at the end of
// every block, with or without the detector). kernels-assemble.test
// assembles the same kernels for sm_80 and sm_90 (cp.async.ca, 4 bytes).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/emulator_check.py make gemm %t
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu -o %t/emulated.mlir
// RUN: spconv-run %t/emulated.mlir --entry gemm --input %t/a.npy --input %t/b.npy --output-dir %t/out
// RUN: %python %S/Inputs/emulator_check.py check gemm %t %t/out
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu=race-check=1 -o %t/checked.mlir
// RUN: spconv-run %t/checked.mlir --entry gemm --input %t/a.npy --input %t/b.npy --output-dir %t/checked
// RUN: %python %S/Inputs/emulator_check.py check gemm %t %t/checked
// RUN: not spconv-run %t/checked.mlir --entry gemm_early_read --input %t/a.npy --input %t/b.npy --output-dir %t/early 2>&1 | FileCheck %s --check-prefix=EARLY
// EARLY: spconv-run: error: @gemm_early_read: kernel @gemm_early_read: workgroup buffer {{[01]}} (memref<2x16x16xf32, #gpu.address_space<workgroup>>) at byte offset {{[0-9]+}} read by thread {{[0-9]+}} of block 0 before the asynchronous copy of thread {{[0-9]+}} that writes it landed
// RUN: spconv-run %t/emulated.mlir --entry gemm_early_read --input %t/a.npy --input %t/b.npy --output-dir %t/early-unchecked
// RUN: not %python %S/Inputs/emulator_check.py check gemm %t %t/early-unchecked | FileCheck %s --check-prefix=STALE
// STALE: gemm: MISMATCH
// RUN: not spconv-run %t/emulated.mlir --entry gemm_unwaited --input %t/a.npy --input %t/b.npy --output-dir %t/unwaited 2>&1 | FileCheck %s --check-prefix=UNWAITED
// UNWAITED: spconv-run: error: @gemm_unwaited: kernel @gemm_unwaited: block {{[0-9]+}} ended with 512 asynchronous copies no thread waited for (the first of thread 0)

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
  func.func @gemm_early_read(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
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
    call @launch_gemm_early_read(%ma, %mb, %mc, %gx, %gy) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, index) -> ()
    %r = bufferization.to_tensor %mc restrict : memref<?x?xf32> to tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }
  func.func private @launch_gemm_early_read(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %gx: index, %gy: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %m = memref.dim %a, %c0 : memref<?x?xf32>
    %k = memref.dim %a, %c1 : memref<?x?xf32>
    %n = memref.dim %b, %c1 : memref<?x?xf32>
    gpu.launch_func @kernels::@gemm_early_read blocks in (%gx, %gy, %c1) threads in (%c16, %c16, %c1)
        args(%a : memref<?x?xf32>, %b : memref<?x?xf32>, %c : memref<?x?xf32>, %m : index, %n : index, %k : index)
    return
  }
  func.func @gemm_unwaited(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
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
    call @launch_gemm_unwaited(%ma, %mb, %mc, %gx, %gy) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, index) -> ()
    %r = bufferization.to_tensor %mc restrict : memref<?x?xf32> to tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }
  func.func private @launch_gemm_unwaited(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %gx: index, %gy: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %m = memref.dim %a, %c0 : memref<?x?xf32>
    %k = memref.dim %a, %c1 : memref<?x?xf32>
    %n = memref.dim %b, %c1 : memref<?x?xf32>
    gpu.launch_func @kernels::@gemm_unwaited blocks in (%gx, %gy, %c1) threads in (%c16, %c16, %c1)
        args(%a : memref<?x?xf32>, %b : memref<?x?xf32>, %c : memref<?x?xf32>, %m : index, %n : index, %k : index)
    return
  }

  gpu.module @kernels {
    // Two stages, one group in flight during each multiply.
    gpu.func @gemm(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %m: index, %n: index, %k: index)
        workgroup(%ta : memref<2x16x16xf32, #gpu.address_space<workgroup>>, %tb : memref<2x16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
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
      %arow = arith.cmpi ult, %row, %m : index
      %bcol = arith.cmpi ult, %col, %n : index
      // The first tile into stage 0.
      %ak0 = arith.addi %c0, %tx : index
      %acol0 = arith.cmpi ult, %ak0, %k : index
      %ain0 = arith.andi %arow, %acol0 : i1
      %ar0 = arith.select %ain0, %row, %c0 : index
      %ac0 = arith.select %ain0, %ak0, %c0 : index
      %an0 = arith.select %ain0, %c1, %c0 : index
      %ta0 = nvgpu.device_async_copy %a[%ar0, %ac0], %ta[%c0, %ty, %tx], 1, %an0 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
      %bk0 = arith.addi %c0, %ty : index
      %brow0 = arith.cmpi ult, %bk0, %k : index
      %bin0 = arith.andi %brow0, %bcol : i1
      %br0 = arith.select %bin0, %bk0, %c0 : index
      %bc0 = arith.select %bin0, %col, %c0 : index
      %bn0 = arith.select %bin0, %c1, %c0 : index
      %tb0 = nvgpu.device_async_copy %b[%br0, %bc0], %tb[%c0, %ty, %tx], 1, %bn0 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
      %g0 = nvgpu.device_async_create_group %ta0, %tb0
      %acc = scf.for %k0 = %c0 to %k step %c16 iter_args(%sum = %zero) -> (f32) {
        %tile = arith.divui %k0, %c16 : index
        %stage = arith.remui %tile, %c2 : index
        %other = arith.subi %c1, %stage : index
        // The next tile into the other stage (zeros past K), then wait for
        // all groups but the newest 1: this tile's.
        %k1 = arith.addi %k0, %c16 : index
        %ak1 = arith.addi %k1, %tx : index
        %acol1 = arith.cmpi ult, %ak1, %k : index
        %ain1 = arith.andi %arow, %acol1 : i1
        %ar1 = arith.select %ain1, %row, %c0 : index
        %ac1 = arith.select %ain1, %ak1, %c0 : index
        %an1 = arith.select %ain1, %c1, %c0 : index
        %ta1 = nvgpu.device_async_copy %a[%ar1, %ac1], %ta[%other, %ty, %tx], 1, %an1 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
        %bk1 = arith.addi %k1, %ty : index
        %brow1 = arith.cmpi ult, %bk1, %k : index
        %bin1 = arith.andi %brow1, %bcol : i1
        %br1 = arith.select %bin1, %bk1, %c0 : index
        %bc1 = arith.select %bin1, %col, %c0 : index
        %bn1 = arith.select %bin1, %c1, %c0 : index
        %tb1 = nvgpu.device_async_copy %b[%br1, %bc1], %tb[%other, %ty, %tx], 1, %bn1 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
        %g1 = nvgpu.device_async_create_group %ta1, %tb1
        nvgpu.device_async_wait %g1 {numGroups = 1 : i32}
        gpu.barrier
        %next = scf.for %i = %c0 to %c16 step %c1 iter_args(%s = %sum) -> (f32) {
          %x = memref.load %ta[%stage, %ty, %i] : memref<2x16x16xf32, #gpu.address_space<workgroup>>
          %y = memref.load %tb[%stage, %i, %tx] : memref<2x16x16xf32, #gpu.address_space<workgroup>>
          %p = arith.mulf %x, %y : f32
          %s2 = arith.addf %s, %p : f32
          scf.yield %s2 : f32
        }
        // The next iteration's copies overwrite this stage.
        gpu.barrier
        scf.yield %next : f32
      }
      // The last prefetch (zeros) is waited for too.
      nvgpu.device_async_wait %g0 {numGroups = 0 : i32}
      %rin = arith.cmpi ult, %row, %m : index
      %cin = arith.cmpi ult, %col, %n : index
      %in = arith.andi %rin, %cin : i1
      scf.if %in {
        memref.store %acc, %c[%row, %col] : memref<?x?xf32>
      }
      gpu.return
    }

    // Waits for all groups but the two newest: this tile's is one of them.
    gpu.func @gemm_early_read(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %m: index, %n: index, %k: index)
        workgroup(%ta : memref<2x16x16xf32, #gpu.address_space<workgroup>>, %tb : memref<2x16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
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
      %arow = arith.cmpi ult, %row, %m : index
      %bcol = arith.cmpi ult, %col, %n : index
      // The first tile into stage 0.
      %ak0 = arith.addi %c0, %tx : index
      %acol0 = arith.cmpi ult, %ak0, %k : index
      %ain0 = arith.andi %arow, %acol0 : i1
      %ar0 = arith.select %ain0, %row, %c0 : index
      %ac0 = arith.select %ain0, %ak0, %c0 : index
      %an0 = arith.select %ain0, %c1, %c0 : index
      %ta0 = nvgpu.device_async_copy %a[%ar0, %ac0], %ta[%c0, %ty, %tx], 1, %an0 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
      %bk0 = arith.addi %c0, %ty : index
      %brow0 = arith.cmpi ult, %bk0, %k : index
      %bin0 = arith.andi %brow0, %bcol : i1
      %br0 = arith.select %bin0, %bk0, %c0 : index
      %bc0 = arith.select %bin0, %col, %c0 : index
      %bn0 = arith.select %bin0, %c1, %c0 : index
      %tb0 = nvgpu.device_async_copy %b[%br0, %bc0], %tb[%c0, %ty, %tx], 1, %bn0 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
      %g0 = nvgpu.device_async_create_group %ta0, %tb0
      %acc = scf.for %k0 = %c0 to %k step %c16 iter_args(%sum = %zero) -> (f32) {
        %tile = arith.divui %k0, %c16 : index
        %stage = arith.remui %tile, %c2 : index
        %other = arith.subi %c1, %stage : index
        // The next tile into the other stage (zeros past K), then wait for
        // all groups but the newest 2: this tile's.
        %k1 = arith.addi %k0, %c16 : index
        %ak1 = arith.addi %k1, %tx : index
        %acol1 = arith.cmpi ult, %ak1, %k : index
        %ain1 = arith.andi %arow, %acol1 : i1
        %ar1 = arith.select %ain1, %row, %c0 : index
        %ac1 = arith.select %ain1, %ak1, %c0 : index
        %an1 = arith.select %ain1, %c1, %c0 : index
        %ta1 = nvgpu.device_async_copy %a[%ar1, %ac1], %ta[%other, %ty, %tx], 1, %an1 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
        %bk1 = arith.addi %k1, %ty : index
        %brow1 = arith.cmpi ult, %bk1, %k : index
        %bin1 = arith.andi %brow1, %bcol : i1
        %br1 = arith.select %bin1, %bk1, %c0 : index
        %bc1 = arith.select %bin1, %col, %c0 : index
        %bn1 = arith.select %bin1, %c1, %c0 : index
        %tb1 = nvgpu.device_async_copy %b[%br1, %bc1], %tb[%other, %ty, %tx], 1, %bn1 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
        %g1 = nvgpu.device_async_create_group %ta1, %tb1
        nvgpu.device_async_wait %g1 {numGroups = 2 : i32}
        gpu.barrier
        %next = scf.for %i = %c0 to %c16 step %c1 iter_args(%s = %sum) -> (f32) {
          %x = memref.load %ta[%stage, %ty, %i] : memref<2x16x16xf32, #gpu.address_space<workgroup>>
          %y = memref.load %tb[%stage, %i, %tx] : memref<2x16x16xf32, #gpu.address_space<workgroup>>
          %p = arith.mulf %x, %y : f32
          %s2 = arith.addf %s, %p : f32
          scf.yield %s2 : f32
        }
        // The next iteration's copies overwrite this stage.
        gpu.barrier
        scf.yield %next : f32
      }
      // The last prefetch (zeros) is waited for too.
      nvgpu.device_async_wait %g0 {numGroups = 0 : i32}
      %rin = arith.cmpi ult, %row, %m : index
      %cin = arith.cmpi ult, %col, %n : index
      %in = arith.andi %rin, %cin : i1
      scf.if %in {
        memref.store %acc, %c[%row, %col] : memref<?x?xf32>
      }
      gpu.return
    }

    // Never waits for the last prefetch.
    gpu.func @gemm_unwaited(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %m: index, %n: index, %k: index)
        workgroup(%ta : memref<2x16x16xf32, #gpu.address_space<workgroup>>, %tb : memref<2x16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
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
      %arow = arith.cmpi ult, %row, %m : index
      %bcol = arith.cmpi ult, %col, %n : index
      // The first tile into stage 0.
      %ak0 = arith.addi %c0, %tx : index
      %acol0 = arith.cmpi ult, %ak0, %k : index
      %ain0 = arith.andi %arow, %acol0 : i1
      %ar0 = arith.select %ain0, %row, %c0 : index
      %ac0 = arith.select %ain0, %ak0, %c0 : index
      %an0 = arith.select %ain0, %c1, %c0 : index
      %ta0 = nvgpu.device_async_copy %a[%ar0, %ac0], %ta[%c0, %ty, %tx], 1, %an0 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
      %bk0 = arith.addi %c0, %ty : index
      %brow0 = arith.cmpi ult, %bk0, %k : index
      %bin0 = arith.andi %brow0, %bcol : i1
      %br0 = arith.select %bin0, %bk0, %c0 : index
      %bc0 = arith.select %bin0, %col, %c0 : index
      %bn0 = arith.select %bin0, %c1, %c0 : index
      %tb0 = nvgpu.device_async_copy %b[%br0, %bc0], %tb[%c0, %ty, %tx], 1, %bn0 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
      %g0 = nvgpu.device_async_create_group %ta0, %tb0
      %acc = scf.for %k0 = %c0 to %k step %c16 iter_args(%sum = %zero) -> (f32) {
        %tile = arith.divui %k0, %c16 : index
        %stage = arith.remui %tile, %c2 : index
        %other = arith.subi %c1, %stage : index
        // The next tile into the other stage (zeros past K), then wait for
        // all groups but the newest 1: this tile's.
        %k1 = arith.addi %k0, %c16 : index
        %ak1 = arith.addi %k1, %tx : index
        %acol1 = arith.cmpi ult, %ak1, %k : index
        %ain1 = arith.andi %arow, %acol1 : i1
        %ar1 = arith.select %ain1, %row, %c0 : index
        %ac1 = arith.select %ain1, %ak1, %c0 : index
        %an1 = arith.select %ain1, %c1, %c0 : index
        %ta1 = nvgpu.device_async_copy %a[%ar1, %ac1], %ta[%other, %ty, %tx], 1, %an1 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
        %bk1 = arith.addi %k1, %ty : index
        %brow1 = arith.cmpi ult, %bk1, %k : index
        %bin1 = arith.andi %brow1, %bcol : i1
        %br1 = arith.select %bin1, %bk1, %c0 : index
        %bc1 = arith.select %bin1, %col, %c0 : index
        %bn1 = arith.select %bin1, %c1, %c0 : index
        %tb1 = nvgpu.device_async_copy %b[%br1, %bc1], %tb[%other, %ty, %tx], 1, %bn1 : memref<?x?xf32> to memref<2x16x16xf32, #gpu.address_space<workgroup>>
        %g1 = nvgpu.device_async_create_group %ta1, %tb1
        nvgpu.device_async_wait %g1 {numGroups = 1 : i32}
        gpu.barrier
        %next = scf.for %i = %c0 to %c16 step %c1 iter_args(%s = %sum) -> (f32) {
          %x = memref.load %ta[%stage, %ty, %i] : memref<2x16x16xf32, #gpu.address_space<workgroup>>
          %y = memref.load %tb[%stage, %i, %tx] : memref<2x16x16xf32, #gpu.address_space<workgroup>>
          %p = arith.mulf %x, %y : f32
          %s2 = arith.addf %s, %p : f32
          scf.yield %s2 : f32
        }
        // The next iteration's copies overwrite this stage.
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
  }
}
