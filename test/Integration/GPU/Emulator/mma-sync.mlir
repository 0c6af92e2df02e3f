// Warp-level fragments in PTX's layouts: C = A * B + 1 through
// nvgpu.ldmatrix and nvgpu.mma.sync, two warps of 16 rows each, A and B
// staged in workgroup memory with padded rows. f16 and bf16 (m16n8k16): A
// by ldmatrix x4, B (k x n, row-major) by ldmatrix x4 .trans (both n-blocks
// at once) and x2 .trans (one each); tf32 (m16n8k8): A by ldmatrix x4 of
// 32-bit units, B by scalar loads. Emulated, it matches numpy exactly
// (emulator_check.py's values make every sum exact, and tf32's inputs
// carry low bits the tensor cores must ignore); the race detector sees
// each lane's ldmatrix row read after the barrier that ends the staging.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/emulator_check.py make mma_sync %t
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu -o %t/emulated.mlir
// RUN: spconv-run %t/emulated.mlir --entry mma --input %t/a.npy --input %t/b.npy --input %t/at.npy --input %t/bt.npy --output-dir %t/out
// RUN: %python %S/Inputs/emulator_check.py check mma_sync %t %t/out
// RUN: spconv-opt %s --spconv-gpu-kernels-to-cpu=race-check=1 -o %t/checked.mlir
// RUN: spconv-run %t/checked.mlir --entry mma --input %t/a.npy --input %t/b.npy --input %t/at.npy --input %t/bt.npy --output-dir %t/checked
// RUN: %python %S/Inputs/emulator_check.py check mma_sync %t %t/checked
//
// Without the f16 kernel's barrier, the race detector names a lane's
// ldmatrix read of a row other threads staged.
// RUN: sed -e '0,/^ *gpu.barrier$/{//d}' %s | spconv-opt --spconv-gpu-kernels-to-cpu=race-check=1 -o %t/racy.mlir
// RUN: not spconv-run %t/racy.mlir --entry mma --input %t/a.npy --input %t/b.npy --input %t/at.npy --input %t/bt.npy --output-dir %t/racy 2>&1 | FileCheck %s --check-prefix=RACE
// RACE: data race in kernel @f16 on workgroup buffer 0
// RACE-SAME: read by thread

!wsa16 = memref<32x40xf16, #gpu.address_space<workgroup>>
!wsb16 = memref<32x24xf16, #gpu.address_space<workgroup>>
!wsabf = memref<32x40xbf16, #gpu.address_space<workgroup>>
!wsbbf = memref<32x24xbf16, #gpu.address_space<workgroup>>
!wsa32 = memref<32x20xf32, #gpu.address_space<workgroup>>
!wsb32 = memref<16x24xf32, #gpu.address_space<workgroup>>

module attributes {gpu.container_module} {
  func.func @mma(%a: tensor<32x32xf32>, %b: tensor<32x16xf32>, %at: tensor<32x16xf32>, %bt: tensor<16x16xf32>)
      -> (tensor<32x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>) {
    %ma = bufferization.to_buffer %a : tensor<32x32xf32> to memref<32x32xf32>
    %mb = bufferization.to_buffer %b : tensor<32x16xf32> to memref<32x16xf32>
    %mat = bufferization.to_buffer %at : tensor<32x16xf32> to memref<32x16xf32>
    %mbt = bufferization.to_buffer %bt : tensor<16x16xf32> to memref<16x16xf32>
    %c16 = memref.alloc() : memref<32x16xf32>
    %cbf = memref.alloc() : memref<32x16xf32>
    %c32 = memref.alloc() : memref<32x16xf32>
    call @launch(%ma, %mb, %mat, %mbt, %c16, %cbf, %c32) : (memref<32x32xf32>, memref<32x16xf32>, memref<32x16xf32>, memref<16x16xf32>, memref<32x16xf32>, memref<32x16xf32>, memref<32x16xf32>) -> ()
    %r0 = bufferization.to_tensor %c16 restrict : memref<32x16xf32> to tensor<32x16xf32>
    %r1 = bufferization.to_tensor %cbf restrict : memref<32x16xf32> to tensor<32x16xf32>
    %r2 = bufferization.to_tensor %c32 restrict : memref<32x16xf32> to tensor<32x16xf32>
    return %r0, %r1, %r2 : tensor<32x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>
  }
  func.func private @launch(%a: memref<32x32xf32>, %b: memref<32x16xf32>, %at: memref<32x16xf32>, %bt: memref<16x16xf32>,
                            %c16: memref<32x16xf32>, %cbf: memref<32x16xf32>, %c32: memref<32x16xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@f16 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%a : memref<32x32xf32>, %b : memref<32x16xf32>, %c16 : memref<32x16xf32>)
    gpu.launch_func @kernels::@bf16 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%a : memref<32x32xf32>, %b : memref<32x16xf32>, %cbf : memref<32x16xf32>)
    gpu.launch_func @kernels::@tf32 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%at : memref<32x16xf32>, %bt : memref<16x16xf32>, %c32 : memref<32x16xf32>)
    return
  }
  gpu.module @kernels {
    // Lane l of a warp: g = l / 4, t = l % 4; it gives the address of row
    // l % 8 + 8 ((l / 8) % 2), 16 bytes (l / 16) into the k columns.
    gpu.func @f16(%a: memref<32x32xf32>, %b: memref<32x16xf32>, %c: memref<32x16xf32>)
        workgroup(%sa: !wsa16, %sb: !wsb16) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c512 = arith.constant 512 : index
      %c1024 = arith.constant 1024 : index
      %tid = gpu.thread_id x
      scf.for %e = %tid to %c1024 step %c64 {
        %r = arith.divui %e, %c32 : index
        %k = arith.remui %e, %c32 : index
        %v = memref.load %a[%r, %k] : memref<32x32xf32>
        %h = arith.truncf %v : f32 to f16
        memref.store %h, %sa[%r, %k] : !wsa16
      }
      scf.for %e = %tid to %c512 step %c64 {
        %k = arith.divui %e, %c16 : index
        %n = arith.remui %e, %c16 : index
        %v = memref.load %b[%k, %n] : memref<32x16xf32>
        %h = arith.truncf %v : f32 to f16
        memref.store %h, %sb[%k, %n] : !wsb16
      }
      gpu.barrier
      %lane = arith.remui %tid, %c32 : index
      %warp = arith.divui %tid, %c32 : index
      %r8 = arith.remui %lane, %c8 : index
      %l8 = arith.divui %lane, %c8 : index
      %m = arith.remui %l8, %c2 : index
      %m8 = arith.muli %m, %c8 : index
      %hi = arith.divui %lane, %c16 : index
      %col = arith.muli %hi, %c8 : index
      %w16 = arith.muli %warp, %c16 : index
      %row = arith.addi %r8, %m8 : index
      %arow = arith.addi %w16, %row : index
      %init = arith.constant dense<1.0> : vector<2x2xf32>
      %acc:2 = scf.for %k0 = %c0 to %c32 step %c16 iter_args(%s0 = %init, %s1 = %init) -> (vector<2x2xf32>, vector<2x2xf32>) {
        %ak = arith.addi %col, %k0 : index
        %fa = nvgpu.ldmatrix %sa[%arow, %ak] {numTiles = 4 : i32, transpose = false} : !wsa16 -> vector<4x2xf16>
        %bk = arith.addi %row, %k0 : index
        %fb = nvgpu.ldmatrix %sb[%bk, %col] {numTiles = 4 : i32, transpose = true} : !wsb16 -> vector<4x2xf16>
        %fb0 = vector.extract_strided_slice %fb {offsets = [0, 0], sizes = [2, 2], strides = [1, 1]} : vector<4x2xf16> to vector<2x2xf16>
        %fb1 = vector.extract_strided_slice %fb {offsets = [2, 0], sizes = [2, 2], strides = [1, 1]} : vector<4x2xf16> to vector<2x2xf16>
        %n0 = nvgpu.mma.sync (%fa, %fb0, %s0) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
        %n1 = nvgpu.mma.sync (%fa, %fb1, %s1) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
        scf.yield %n0, %n1 : vector<2x2xf32>, vector<2x2xf32>
      }
      // C[i][j] of n-block nb: row w16 + g + 8 i, column 8 nb + 2 t + j.
      %sg = arith.divui %lane, %c4 : index
      %st = arith.remui %lane, %c4 : index
      %row0 = arith.addi %w16, %sg : index
      %row1 = arith.addi %row0, %c8 : index
      %col0 = arith.muli %st, %c2 : index
      %col1 = arith.addi %col0, %c8 : index
      %v00 = vector.extract %acc#0[0] : vector<2xf32> from vector<2x2xf32>
      %v01 = vector.extract %acc#0[1] : vector<2xf32> from vector<2x2xf32>
      %v10 = vector.extract %acc#1[0] : vector<2xf32> from vector<2x2xf32>
      %v11 = vector.extract %acc#1[1] : vector<2xf32> from vector<2x2xf32>
      vector.store %v00, %c[%row0, %col0] : memref<32x16xf32>, vector<2xf32>
      vector.store %v01, %c[%row1, %col0] : memref<32x16xf32>, vector<2xf32>
      vector.store %v10, %c[%row0, %col1] : memref<32x16xf32>, vector<2xf32>
      vector.store %v11, %c[%row1, %col1] : memref<32x16xf32>, vector<2xf32>
      gpu.return
    }
    gpu.func @bf16(%a: memref<32x32xf32>, %b: memref<32x16xf32>, %c: memref<32x16xf32>)
        workgroup(%sa: !wsabf, %sb: !wsbbf) kernel {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c512 = arith.constant 512 : index
      %c1024 = arith.constant 1024 : index
      %tid = gpu.thread_id x
      scf.for %e = %tid to %c1024 step %c64 {
        %r = arith.divui %e, %c32 : index
        %k = arith.remui %e, %c32 : index
        %v = memref.load %a[%r, %k] : memref<32x32xf32>
        %h = arith.truncf %v : f32 to bf16
        memref.store %h, %sa[%r, %k] : !wsabf
      }
      scf.for %e = %tid to %c512 step %c64 {
        %k = arith.divui %e, %c16 : index
        %n = arith.remui %e, %c16 : index
        %v = memref.load %b[%k, %n] : memref<32x16xf32>
        %h = arith.truncf %v : f32 to bf16
        memref.store %h, %sb[%k, %n] : !wsbbf
      }
      gpu.barrier
      %lane = arith.remui %tid, %c32 : index
      %warp = arith.divui %tid, %c32 : index
      %r8 = arith.remui %lane, %c8 : index
      %l8 = arith.divui %lane, %c8 : index
      %m = arith.remui %l8, %c2 : index
      %m8 = arith.muli %m, %c8 : index
      %hi = arith.divui %lane, %c16 : index
      %col = arith.muli %hi, %c8 : index
      %w16 = arith.muli %warp, %c16 : index
      %row = arith.addi %r8, %m8 : index
      %arow = arith.addi %w16, %row : index
      %init = arith.constant dense<1.0> : vector<2x2xf32>
      %acc:2 = scf.for %k0 = %c0 to %c32 step %c16 iter_args(%s0 = %init, %s1 = %init) -> (vector<2x2xf32>, vector<2x2xf32>) {
        %ak = arith.addi %col, %k0 : index
        %fa = nvgpu.ldmatrix %sa[%arow, %ak] {numTiles = 4 : i32, transpose = false} : !wsabf -> vector<4x2xbf16>
        %bk = arith.addi %row, %k0 : index
        %fb0 = nvgpu.ldmatrix %sb[%bk, %c0] {numTiles = 2 : i32, transpose = true} : !wsbbf -> vector<2x2xbf16>
        %fb1 = nvgpu.ldmatrix %sb[%bk, %c8] {numTiles = 2 : i32, transpose = true} : !wsbbf -> vector<2x2xbf16>
        %n0 = nvgpu.mma.sync (%fa, %fb0, %s0) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
        %n1 = nvgpu.mma.sync (%fa, %fb1, %s1) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
        scf.yield %n0, %n1 : vector<2x2xf32>, vector<2x2xf32>
      }
      // C[i][j] of n-block nb: row w16 + g + 8 i, column 8 nb + 2 t + j.
      %sg = arith.divui %lane, %c4 : index
      %st = arith.remui %lane, %c4 : index
      %row0 = arith.addi %w16, %sg : index
      %row1 = arith.addi %row0, %c8 : index
      %col0 = arith.muli %st, %c2 : index
      %col1 = arith.addi %col0, %c8 : index
      %v00 = vector.extract %acc#0[0] : vector<2xf32> from vector<2x2xf32>
      %v01 = vector.extract %acc#0[1] : vector<2xf32> from vector<2x2xf32>
      %v10 = vector.extract %acc#1[0] : vector<2xf32> from vector<2x2xf32>
      %v11 = vector.extract %acc#1[1] : vector<2xf32> from vector<2x2xf32>
      vector.store %v00, %c[%row0, %col0] : memref<32x16xf32>, vector<2xf32>
      vector.store %v01, %c[%row1, %col0] : memref<32x16xf32>, vector<2xf32>
      vector.store %v10, %c[%row0, %col1] : memref<32x16xf32>, vector<2xf32>
      vector.store %v11, %c[%row1, %col1] : memref<32x16xf32>, vector<2xf32>
      gpu.return
    }
    // tf32: A's 32-bit units by ldmatrix (row l % 8 + 8 ((l / 8) % 2), 4
    // units (l / 16) into k); B(t + 4 i, g) by scalar loads.
    gpu.func @tf32(%a: memref<32x16xf32>, %b: memref<16x16xf32>, %c: memref<32x16xf32>)
        workgroup(%sa: !wsa32, %sb: !wsb32) kernel {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c256 = arith.constant 256 : index
      %c512 = arith.constant 512 : index
      %tid = gpu.thread_id x
      scf.for %e = %tid to %c512 step %c64 {
        %r = arith.divui %e, %c16 : index
        %k = arith.remui %e, %c16 : index
        %v = memref.load %a[%r, %k] : memref<32x16xf32>
        memref.store %v, %sa[%r, %k] : !wsa32
      }
      scf.for %e = %tid to %c256 step %c64 {
        %k = arith.divui %e, %c16 : index
        %n = arith.remui %e, %c16 : index
        %v = memref.load %b[%k, %n] : memref<16x16xf32>
        memref.store %v, %sb[%k, %n] : !wsb32
      }
      gpu.barrier
      %lane = arith.remui %tid, %c32 : index
      %warp = arith.divui %tid, %c32 : index
      %g = arith.divui %lane, %c4 : index
      %t = arith.remui %lane, %c4 : index
      %r8 = arith.remui %lane, %c8 : index
      %l8 = arith.divui %lane, %c8 : index
      %m = arith.remui %l8, %c2 : index
      %m8 = arith.muli %m, %c8 : index
      %hi = arith.divui %lane, %c16 : index
      %col = arith.muli %hi, %c4 : index
      %w16 = arith.muli %warp, %c16 : index
      %row = arith.addi %r8, %m8 : index
      %arow = arith.addi %w16, %row : index
      %g8 = arith.addi %g, %c8 : index
      %zero = arith.constant dense<0.0> : vector<2x1xf32>
      %init = arith.constant dense<1.0> : vector<2x2xf32>
      %acc:2 = scf.for %k0 = %c0 to %c16 step %c8 iter_args(%s0 = %init, %s1 = %init) -> (vector<2x2xf32>, vector<2x2xf32>) {
        %ak = arith.addi %col, %k0 : index
        %fa = nvgpu.ldmatrix %sa[%arow, %ak] {numTiles = 4 : i32, transpose = false} : !wsa32 -> vector<4x1xf32>
        %k1 = arith.addi %t, %k0 : index
        %k2 = arith.addi %k1, %c4 : index
        %b00 = memref.load %sb[%k1, %g] : !wsb32
        %b01 = memref.load %sb[%k2, %g] : !wsb32
        %b10 = memref.load %sb[%k1, %g8] : !wsb32
        %b11 = memref.load %sb[%k2, %g8] : !wsb32
        %fb0a = vector.insert %b00, %zero [0, 0] : f32 into vector<2x1xf32>
        %fb0 = vector.insert %b01, %fb0a [1, 0] : f32 into vector<2x1xf32>
        %fb1a = vector.insert %b10, %zero [0, 0] : f32 into vector<2x1xf32>
        %fb1 = vector.insert %b11, %fb1a [1, 0] : f32 into vector<2x1xf32>
        %n0 = nvgpu.mma.sync (%fa, %fb0, %s0) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
        %n1 = nvgpu.mma.sync (%fa, %fb1, %s1) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
        scf.yield %n0, %n1 : vector<2x2xf32>, vector<2x2xf32>
      }
      // C[i][j] of n-block nb: row w16 + g + 8 i, column 8 nb + 2 t + j.
      %sg = arith.divui %lane, %c4 : index
      %st = arith.remui %lane, %c4 : index
      %row0 = arith.addi %w16, %sg : index
      %row1 = arith.addi %row0, %c8 : index
      %col0 = arith.muli %st, %c2 : index
      %col1 = arith.addi %col0, %c8 : index
      %v00 = vector.extract %acc#0[0] : vector<2xf32> from vector<2x2xf32>
      %v01 = vector.extract %acc#0[1] : vector<2xf32> from vector<2x2xf32>
      %v10 = vector.extract %acc#1[0] : vector<2xf32> from vector<2x2xf32>
      %v11 = vector.extract %acc#1[1] : vector<2xf32> from vector<2x2xf32>
      vector.store %v00, %c[%row0, %col0] : memref<32x16xf32>, vector<2xf32>
      vector.store %v01, %c[%row1, %col0] : memref<32x16xf32>, vector<2xf32>
      vector.store %v10, %c[%row0, %col1] : memref<32x16xf32>, vector<2xf32>
      vector.store %v11, %c[%row1, %col1] : memref<32x16xf32>, vector<2xf32>
      gpu.return
    }
  }
}
