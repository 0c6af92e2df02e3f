// RUN: spconv-opt %s -spconv-gpu-kernels-to-cpu -split-input-file | FileCheck %s

// A kernel becomes a private function taking the block id, thread id, block
// size and grid size (dimension x) after its own arguments; y and z are one
// block of one thread. A launch becomes a parallel loop over the blocks
// around a loop over the threads of a block.
// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[BUF:.*]]: memref<?xf32>, %[[N:.*]]: index, %[[BLOCKS:.*]]: index)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: scf.parallel (%[[B:.*]]) = (%[[C0]]) to (%[[BLOCKS]]) step
// CHECK: scf.for %[[T:.*]] = %[[C0]] to %[[C32]] step
// CHECK: func.call @scale(%[[BUF]], %[[N]], %[[B]], %[[T]], %[[C32]], %[[BLOCKS]])
// CHECK-NOT: gpu.
// CHECK-LABEL: func.func private @scale
// CHECK-SAME: (%[[A:.*]]: memref<?xf32>, %[[SIZE:.*]]: index, %[[BID:.*]]: index, %[[TID:.*]]: index, %[[BDIM:.*]]: index, %[[GDIM:.*]]: index)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[BASE:.*]] = arith.muli %[[BID]], %[[BDIM]]
// CHECK: %[[FIRST:.*]] = arith.addi %[[BASE]], %[[TID]]
// CHECK: %[[STRIDE:.*]] = arith.muli %[[GDIM]], %[[BDIM]]
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %[[SIZE]] step %[[STRIDE]]
// CHECK: memref.store %{{.*}}, %[[A]][%[[ZERO]]]
// CHECK: return
module attributes {gpu.container_module} {
  func.func @host(%buf: memref<?xf32>, %n: index, %blocks: index) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@scale blocks in (%blocks, %c1, %c1) threads in (%c32, %c1, %c1) args(%buf : memref<?xf32>, %n : index)
    return
  }
  gpu.module @kernels {
    gpu.func @scale(%a: memref<?xf32>, %n: index) kernel {
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %gdim = gpu.grid_dim x
      %y = gpu.thread_id y
      %base = arith.muli %bid, %bdim : index
      %first = arith.addi %base, %tid : index
      %stride = arith.muli %gdim, %bdim : index
      scf.for %i = %first to %n step %stride {
        %x = memref.load %a[%i] : memref<?xf32>
        %two = arith.addf %x, %x : f32
        memref.store %two, %a[%y] : memref<?xf32>
      }
      gpu.return
    }
  }
}

// -----

// A device copy of a host function is served by the host's; a kernel whose
// name a host function already has is renamed.
// CHECK: func.func private @helper
// CHECK-LABEL: func.func @probe
// CHECK: func.call @probe_0(
// CHECK-LABEL: func.func private @probe_0(
// CHECK: call @helper
// CHECK-NOT: func.func private @helper
module attributes {gpu.container_module} {
  func.func private @helper(%x: index) -> index {
    return %x : index
  }
  func.func @probe(%a: memref<?xindex>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@probe blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xindex>)
    return
  }
  gpu.module @kernels {
    gpu.func @probe(%a: memref<?xindex>) kernel {
      %t = gpu.thread_id x
      %y = func.call @helper(%t) : (index) -> index
      memref.store %y, %a[%t] : memref<?xindex>
      gpu.return
    }
    func.func private @helper(%x: index) -> index {
      return %x : index
    }
  }
}
