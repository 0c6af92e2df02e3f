// RUN: spconv-opt %s -spconv-gpu-kernels-to-cpu -split-input-file | FileCheck %s

// A kernel becomes a private function that runs one block: it takes the
// block id, block size and grid size (x, y, z) after its own arguments, and
// its body is one loop over the block's threads (no barrier: one phase);
// thread ids come from the loop index. A launch becomes a parallel loop over
// the blocks of the grid.
// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[BUF:.*]]: memref<?xf32>, %[[N:.*]]: index, %[[BLOCKS:.*]]: index)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: scf.parallel (%[[BX:.*]], %[[BY:.*]], %[[BZ:.*]]) = (%[[C0]], %[[C0]], %[[C0]]) to (%[[BLOCKS]], %[[C1]], %[[C1]])
// CHECK: func.call @scale(%[[BUF]], %[[N]], %[[BX]], %[[BY]], %[[BZ]], %[[C32]], %[[C1]], %[[C1]], %[[BLOCKS]], %[[C1]], %[[C1]])
// CHECK-NOT: gpu.
// CHECK-LABEL: func.func private @scale
// CHECK-SAME: (%[[A:[^:]*]]: memref<?xf32>, %[[SIZE:[^:]*]]: index, %[[BID:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[BDIM:[^:]*]]: index, %[[BDIMY:[^:]*]]: index, %[[BDIMZ:[^:]*]]: index, %[[GDIM:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index)
// CHECK: %[[XY:.*]] = arith.muli %[[BDIM]], %[[BDIMY]]
// CHECK: %[[THREADS:.*]] = arith.muli %[[XY]], %[[BDIMZ]]
// CHECK: %[[BASE:.*]] = arith.muli %[[BID]], %[[BDIM]]
// CHECK: %[[STRIDE:.*]] = arith.muli %[[GDIM]], %[[BDIM]]
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[THREADS]] step
// CHECK: %[[TID:.*]] = arith.remui %[[T]], %[[BDIM]]
// CHECK: %[[FIRST:.*]] = arith.addi %[[BASE]], %[[TID]]
// CHECK: %[[Y0:.*]] = arith.divui %[[T]], %[[BDIM]]
// CHECK: %[[TIDY:.*]] = arith.remui %[[Y0]], %[[BDIMY]]
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %[[SIZE]] step %[[STRIDE]]
// CHECK: memref.store %{{.*}}, %[[A]][%[[TIDY]]]
// CHECK-NOT: scf.for
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

// A barrier splits the body into two loops over the threads. The workgroup
// buffer is allocated once per block, without its address space; the
// loaded value %x, used after the barrier, is kept per thread, while the
// index %i is recomputed from the thread id.
// CHECK-LABEL: func.func private @shift
// CHECK-SAME: (%[[A:[^:]*]]: memref<?xf32>, %[[BID:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[BDIM:[^:]*]]: index
// CHECK: arith.muli
// CHECK: %[[THREADS:.*]] = arith.muli
// CHECK: %[[TILE:.*]] = memref.alloca() : memref<64xf32>
// CHECK: %[[SLOT:.*]] = memref.alloca(%[[THREADS]]) : memref<?xf32>
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[THREADS]]
// CHECK:   %[[X:.*]] = memref.load %[[A]]
// CHECK:   memref.store %[[X]], %[[SLOT]][%[[T]]]
// CHECK:   memref.store %[[X]], %[[TILE]]
// CHECK: }
// CHECK: scf.for %[[T2:.*]] = %{{.*}} to %[[THREADS]]
// CHECK:   %[[TID:.*]] = arith.remui %[[T2]], %[[BDIM]]
// CHECK:   %[[Y:.*]] = memref.load %[[TILE]]
// CHECK:   %[[XAGAIN:.*]] = memref.load %[[SLOT]][%[[T2]]]
// CHECK:   arith.addf %[[XAGAIN]], %[[Y]]
// CHECK:   %[[I:.*]] = arith.addi %{{.*}}, %[[TID]]
// CHECK:   memref.store %{{.*}}, %[[A]][%[[I]]]
// CHECK: }
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @shift(%a: memref<?xf32>) workgroup(%tile : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %c1 = arith.constant 1 : index
      %c63 = arith.constant 63 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %x = memref.load %a[%i] : memref<?xf32>
      memref.store %x, %tile[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %next = arith.addi %tid, %c1 : index
      %j = arith.minui %next, %c63 : index
      %y = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
      %sum = arith.addf %x, %y : f32
      memref.store %sum, %a[%i] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// A per-thread slot for a vector wider than 512 bits (a tensor-core tile is
// 256 elements) is heap memory, freed where the block ends; narrower ones
// stay on the stack.
// CHECK-LABEL: func.func private @wide
// CHECK: arith.muli
// CHECK: %[[THREADS:.*]] = arith.muli
// CHECK-DAG: %[[WIDE:.*]] = memref.alloc(%[[THREADS]]) : memref<?xvector<17xf32>>
// CHECK-DAG: %[[NARROW:.*]] = memref.alloca(%[[THREADS]]) : memref<?xvector<16xf32>>
// CHECK: scf.for
// CHECK: scf.for
// CHECK:   memref.load %[[WIDE]]
// CHECK:   memref.load %[[NARROW]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[WIDE]]
// CHECK-NOT: memref.dealloc
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @wide(%a: memref<?xvector<17xf32>>, %b: memref<?xvector<16xf32>>) kernel {
      %tid = gpu.thread_id x
      %x = memref.load %a[%tid] : memref<?xvector<17xf32>>
      %y = memref.load %b[%tid] : memref<?xvector<16xf32>>
      gpu.barrier
      memref.store %x, %a[%tid] : memref<?xvector<17xf32>>
      memref.store %y, %b[%tid] : memref<?xvector<16xf32>>
      gpu.return
    }
  }
}

// -----

// A loop around barriers runs once for the block, with the phases of its
// body inside; its iteration argument lives per thread (initialised before
// the loop, copied at the end of each iteration, read after it).
// CHECK-LABEL: func.func private @steps
// CHECK-SAME: (%[[A:[^:]*]]: memref<?xf32>, %[[N:[^:]*]]: index
// CHECK: %[[ITER:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: %[[NEXT:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: scf.for %[[T0:.*]] =
// CHECK:   memref.store %{{.*}}, %[[ITER]][%[[T0]]]
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %[[N]]
// CHECK:   scf.for
// CHECK:     memref.load %[[A]][%[[K]]]
// CHECK:   scf.for %[[T1:.*]] =
// CHECK:     %[[S:.*]] = memref.load %[[ITER]][%[[T1]]]
// CHECK:     %[[S2:.*]] = arith.addf %[[S]]
// CHECK:     memref.store %[[S2]], %[[NEXT]][%[[T1]]]
// CHECK:   scf.for %[[T2:.*]] =
// CHECK:     %[[V:.*]] = memref.load %[[NEXT]][%[[T2]]]
// CHECK:     memref.store %[[V]], %[[ITER]][%[[T2]]]
// CHECK: scf.for %[[T3:.*]] =
// CHECK:   %[[SUM:.*]] = memref.load %[[ITER]][%[[T3]]]
// CHECK:   memref.store %[[SUM]], %[[A]]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @steps(%a: memref<?xf32>, %n: index) workgroup(%tile : memref<32xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f32
      %tid = gpu.thread_id x
      %sum = scf.for %k = %c0 to %n step %c1 iter_args(%s = %zero) -> (f32) {
        %x = memref.load %a[%k] : memref<?xf32>
        memref.store %x, %tile[%tid] : memref<32xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %y = memref.load %tile[%c0] : memref<32xf32, #gpu.address_space<workgroup>>
        %s2 = arith.addf %s, %y : f32
        gpu.barrier
        scf.yield %s2 : f32
      }
      memref.store %sum, %a[%tid] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// A shuffle ends a phase: every thread's value goes to a slot, then each
// thread reads its partner lane's slot (lane = thread mod 32, xor offset),
// or its own when the partner is out of range.
// CHECK-LABEL: func.func private @butterfly
// CHECK: %[[VALUES:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: %[[RESULT:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: scf.for %[[T:.*]] =
// CHECK:   memref.store %{{.*}}, %[[VALUES]][%[[T]]]
// CHECK: scf.for %[[U:.*]] =
// CHECK:   %[[LANE:.*]] = arith.remui %[[U]], %{{.*}}
// CHECK:   %[[BASE:.*]] = arith.subi %[[U]], %[[LANE]]
// CHECK:   %[[SRC:.*]] = arith.xori %[[LANE]]
// CHECK:   %[[FROM:.*]] = arith.addi %[[BASE]], %[[SRC]]
// CHECK:   %[[PICK:.*]] = arith.select %{{.*}}, %[[FROM]], %[[U]]
// CHECK:   %[[V:.*]] = memref.load %[[VALUES]][%[[PICK]]]
// CHECK:   memref.store %[[V]], %[[RESULT]][%[[U]]]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @butterfly(%a: memref<?xf32>) kernel {
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %tid = gpu.thread_id x
      %x = memref.load %a[%tid] : memref<?xf32>
      %y, %valid = gpu.shuffle xor %x, %c1, %c32 : f32
      memref.store %y, %a[%tid] : memref<?xf32>
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

// -----

// An scf.if around warp ops whose condition may differ between warps: the
// condition goes to a slot, each warp's first lane scans its lanes and
// reports the first that disagrees, and the arm's phases run for the block
// predicated on the per-thread condition.
// CHECK-LABEL: func.func private @first_warp
// CHECK: %[[COND:.*]] = memref.alloca(%{{.*}}) : memref<?xi1>
// CHECK: %[[THEN:.*]] = memref.alloca(%{{.*}}) : memref<?xi1>
// CHECK: scf.for %[[T:.*]] =
// CHECK:   memref.store %{{.*}}, %[[COND]][%[[T]]]
// CHECK: scf.for %[[U:.*]] =
// CHECK:   %[[MINE:.*]] = memref.load %[[COND]][%[[U]]]
// CHECK:   scf.if
// CHECK:     scf.for %[[L:.*]] = %[[U]] to
// CHECK:       memref.load %[[COND]][%[[L]]]
// CHECK:     func.call @spconv_rt_emu_report_divergent_warp(
// CHECK:   memref.store %[[MINE]], %[[THEN]][%[[U]]]
// CHECK: scf.for %[[V:.*]] =
// CHECK:   %[[ACTIVE:.*]] = memref.load %[[THEN]][%[[V]]]
// CHECK:   scf.if %[[ACTIVE]] {
// CHECK:     memref.load %arg0
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @first_warp(%a: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %tid = gpu.thread_id x
      %warp = arith.divui %tid, %c32 : index
      %first = arith.cmpi eq, %warp, %c0 : index
      scf.if %first {
        %x = memref.load %a[%tid] : memref<?xf32>
        %s = gpu.subgroup_reduce add %x : (f32) -> f32
        memref.store %s, %a[%tid] : memref<?xf32>
      }
      gpu.return
    }
  }
}

// -----

// A condition around a barrier read from memory (a tile's list of offsets):
// every thread computes it into a slot, thread 0's value is checked against
// the others' (the first to disagree is reported as divergent control
// flow), and one block-level scf.if runs the phases of its arm.
// CHECK-LABEL: func.func private @listed
// CHECK: scf.for %[[T:.*]] =
// CHECK:   memref.load %arg0
// CHECK:   memref.store %{{.*}}, %{{.*}}[%[[T]]] : memref<?xi1>
// CHECK: %[[FIRST:.*]] = memref.load %[[COND:.*]][%c0{{.*}}] : memref<?xi1>
// CHECK: %[[SCAN:.*]] = scf.for %[[U:.*]] = %c1{{.*}} iter_args
// CHECK:   memref.load %[[COND]][%[[U]]]
// CHECK: %[[DIVERGED:.*]] = arith.cmpi sge, %[[SCAN]]
// CHECK: scf.if %[[DIVERGED]] {
// CHECK:   func.call @spconv_rt_emu_report_divergent_block(
// CHECK: scf.if %[[FIRST]] {
// CHECK:   scf.for
// CHECK:     memref.store
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @listed(%flags: memref<?xi8>, %a: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0 : i8
      %one = arith.constant 1.0 : f32
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %flag = memref.load %flags[%b] : memref<?xi8>
      %active = arith.cmpi ne, %flag, %zero : i8
      scf.if %active {
        memref.store %one, %a[%t] : memref<?xf32>
        gpu.barrier
      }
      gpu.return
    }
  }
}
