// RUN: spconv-opt %s -spconv-parallel-loops-to-gpu -split-input-file | FileCheck %s
// RUN: spconv-opt %s -spconv-parallel-loops-to-gpu="block-size=64 max-blocks=0" -split-input-file | FileCheck %s --check-prefix=NOCAP

// A loop of a rulebook builder: the kernel is named after the builder (its
// geometry) and the loop's role; constants are cloned in, so the grid
// extent 16 stays folded; the bounds and buffers become arguments. Threads
// walk the iterations in a grid-stride loop. No guard around the launch: an
// empty grid launches nothing (the runtime's contract).
// CHECK-LABEL: func.func private @spconv_build_subm_k3_s1_p1_d1_g16
// CHECK-SAME: (%[[BUF:.*]]: memref<?xi32>, %[[N:.*]]: index)
// CHECK: %[[TRIPS:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[BLOCKS:.*]] = arith.ceildivsi %[[TRIPS]], %[[C256]]
// CHECK: %[[CAP:.*]] = arith.constant 65535 : index
// CHECK: %[[GRID:.*]] = arith.minsi %[[BLOCKS]], %[[CAP]]
// CHECK-NEXT: gpu.launch_func @spconv_kernels::@spconv_build_subm_k3_s1_p1_d1_g16_count_pairs blocks in (%[[GRID]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]]) args(%[[N]] : index, %[[BUF]] : memref<?xi32>)
// CHECK-NOT: scf.parallel
// CHECK: gpu.module @spconv_kernels attributes {dlti.dl_spec = #dlti.dl_spec<i64 = dense<64> : vector<2xi64>>}
// CHECK: gpu.func @spconv_build_subm_k3_s1_p1_d1_g16_count_pairs(%[[KN:.*]]: index, %[[KBUF:.*]]: memref<?xi32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: %[[K16:.*]] = arith.constant 16 : i32
// CHECK: %[[KTRIPS:.*]] = arith.maxsi %[[KN]]
// CHECK-DAG: %[[TID:.*]] = gpu.thread_id x
// CHECK-DAG: %[[BID:.*]] = gpu.block_id x
// CHECK-DAG: %[[BDIM:.*]] = gpu.block_dim x
// CHECK-DAG: %[[GDIM:.*]] = gpu.grid_dim x
// CHECK: %[[BASE:.*]] = arith.muli %[[BID]], %[[BDIM]]
// CHECK: %[[FIRST:.*]] = arith.addi %[[BASE]], %[[TID]]
// CHECK: %[[STRIDE:.*]] = arith.muli %[[GDIM]], %[[BDIM]]
// CHECK: scf.for %[[I:.*]] = %[[FIRST]] to %[[KTRIPS]] step %[[STRIDE]]
// CHECK: memref.store %[[K16]], %[[KBUF]][%[[I]]]
// CHECK: gpu.return
// NOCAP-LABEL: func.func private @spconv_build_subm_k3_s1_p1_d1_g16
// NOCAP-NOT: arith.minsi
// NOCAP: gpu.launch_func
// NOCAP-SAME: threads in (%c64,
// NOCAP: known_block_size = array<i32: 64, 1, 1>
func.func private @spconv_build_subm_k3_s1_p1_d1_g16(%buf: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : i32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %c16, %buf[%i] : memref<?xi32>
    scf.reduce
  } {spconv.kernel = "count_pairs"}
  return
}

// -----

// Two dimensions are linearised, the last fastest, with the lower bounds
// and steps applied; a nested parallel loop runs on the thread itself.
// CHECK-LABEL: func.func @fill
// CHECK: gpu.func @spconv_fill
// CHECK-SAME: (%[[ROWS:.*]]: index, %[[BUF:.*]]: memref<?x8xf32>)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[ROWS1:.*]] = arith.subi %[[ROWS]], %[[C1]]
// CHECK: %[[ROWTRIPS:.*]] = arith.maxsi %[[ROWS1]]
// CHECK: %[[TOTAL:.*]] = arith.muli %[[ROWTRIPS]], %[[C2]]
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[TOTAL]] step %{{.*}} {
// CHECK: %[[COL:.*]] = arith.remui %[[I]], %[[C2]]
// CHECK: %[[ROW:.*]] = arith.divui %[[I]], %[[C2]]
// CHECK: %[[SCALED:.*]] = arith.muli %[[COL]], %[[C2]]
// CHECK: %[[C:.*]] = arith.addi %[[SCALED]], %[[C4]]
// CHECK: %[[R:.*]] = arith.addi %[[ROW]], %[[C1]]
// CHECK: scf.for %[[J:.*]] =
// CHECK-NOT: scf.parallel
// CHECK: %[[CJ:.*]] = arith.addi %[[C]], %[[J]]
// CHECK: memref.store %{{.*}}, %[[BUF]][%[[R]], %[[CJ]]]
func.func @fill(%buf: memref<?x8xf32>, %rows: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%r, %c) = (%c1, %c4) to (%rows, %c8) step (%c1, %c2) {
    scf.parallel (%k) = (%c0) to (%c2) step (%c1) {
      %col = arith.addi %c, %k : index
      memref.store %zero, %buf[%r, %col] : memref<?x8xf32>
      scf.reduce
    }
    scf.reduce
  } {spconv.kernel = "fill"}
  return
}

// -----

// Identical loops share one kernel; a different loop of the same role gets
// a numbered name; a loop without a role is named after its function.
// CHECK-LABEL: func.func @share
// CHECK: gpu.launch_func @spconv_kernels::@spconv_scale
// CHECK: gpu.launch_func @spconv_kernels::@spconv_scale
// CHECK: gpu.launch_func @spconv_kernels::@spconv_scale_1
// CHECK: gpu.launch_func @spconv_kernels::@share_loop
// CHECK: gpu.module @spconv_kernels
// CHECK: gpu.func @spconv_scale(
// CHECK: arith.constant 2.000000e+00
// CHECK: gpu.func @spconv_scale_1(
// CHECK: arith.constant 3.000000e+00
// CHECK: gpu.func @share_loop(
// CHECK-NOT: gpu.func
func.func @share(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<?xf32>
    scf.reduce
  } {spconv.kernel = "scale"}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %b[%i] : memref<?xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<?xf32>
    scf.reduce
  } {spconv.kernel = "scale"}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %b[%i] : memref<?xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %b[%i] : memref<?xf32>
    scf.reduce
  } {spconv.kernel = "scale"}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %three, %b[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Functions that kernels call are copied into the kernel module.
// CHECK-LABEL: func.func @calls
// CHECK: gpu.module @spconv_kernels
// CHECK: gpu.func @spconv_probe
// CHECK: func.call @helper
// CHECK: func.func private @helper
func.func private @helper(%x: index) -> index {
  %c1 = arith.constant 1 : index
  %y = arith.addi %x, %c1 : index
  return %y : index
}
func.func @calls(%a: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %y = func.call @helper(%i) : (index) -> index
    memref.store %y, %a[%i] : memref<?xindex>
    scf.reduce
  } {spconv.kernel = "probe"}
  return
}

// -----

// A gpu.launch of the lowering (a tiled kernel) is outlined into the same
// module: constants sunk, its workgroup allocas made workgroup attributions
// (an alloca's alignment becoming the attribution's llvm.align), its role
// naming it, its tiles recorded on it, no known block size (ptxas
// would read .maxntid as a register budget); its grid is capped by
// max-blocks (its body walks the tiles in a grid-stride loop), its block
// size kept.
// CHECK-LABEL: func.func @tiled
// CHECK: %[[CAP:.*]] = arith.constant 65535 : index
// CHECK: %[[GRID:.*]] = arith.minsi %{{.*}}, %[[CAP]] : index
// CHECK: gpu.launch_func @spconv_kernels::@spconv_conv_f32_4x4 blocks in (%[[GRID]], %{{.*}}, %{{.*}}) threads in (%c64, %{{.*}}, %{{.*}}) args(%{{.*}} : memref<?xf32>, %{{.*}} : index)
// CHECK-NOT: gpu.launch blocks
// CHECK: gpu.func @spconv_conv_f32_4x4(%{{.*}}: memref<?xf32>, %{{.*}}: index) workgroup(%[[SHARED:.*]] : memref<64xf32, #gpu.address_space<workgroup>>, %[[ALIGNED:.*]] : memref<16xf16, #gpu.address_space<workgroup>> {llvm.align = 32 : i64}) kernel attributes {spconv.tile = {threads = 64 : i64}}
// CHECK-NOT: known_block_size
// CHECK: arith.constant 2.0
// CHECK: memref.store %{{.*}}, %[[SHARED]]
// CHECK: memref.store %{{.*}}, %[[ALIGNED]]
// CHECK: gpu.barrier
// CHECK: gpu.return
// NOCAP-LABEL: func.func @tiled
// NOCAP-NOT: arith.minsi
// NOCAP: gpu.launch_func @spconv_kernels::@spconv_conv_f32_4x4 blocks in (%arg1,
func.func @tiled(%a: memref<?xf32>, %tiles: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %tiles, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %shared = memref.alloca() : memref<64xf32, #gpu.address_space<workgroup>>
    %aligned = memref.alloca() {alignment = 32 : i64} : memref<16xf16, #gpu.address_space<workgroup>>
    scf.for %t = %bx to %tiles step %gx {
      memref.store %two, %shared[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      %half = arith.truncf %two : f32 to f16
      memref.store %half, %aligned[%c1] : memref<16xf16, #gpu.address_space<workgroup>>
      gpu.barrier
      %v = memref.load %shared[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %v, %a[%t] : memref<?xf32>
    }
    gpu.terminator
  } {spconv.kernel = "conv_f32_4x4", spconv.tile = {threads = 64 : i64}}
  return
}

// -----

// A register budget of the tiles (max_registers) becomes the kernel's
// nvvm.maxnreg, PTX's .maxnreg.
// CHECK-LABEL: func.func @budget
// CHECK: gpu.func @spconv_conv_f16_64x64({{.*}} kernel attributes {nvvm.maxnreg = 128 : i32, spconv.tile = {max_registers = 128 : i64, threads = 256 : i64}}
func.func @budget(%a: memref<?xf32>, %tiles: index) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %tiles, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<?xf32>
    memref.store %v, %a[%bx] : memref<?xf32>
    gpu.terminator
  } {spconv.kernel = "conv_f16_64x64", spconv.tile = {max_registers = 128 : i64, threads = 256 : i64}}
  return
}
