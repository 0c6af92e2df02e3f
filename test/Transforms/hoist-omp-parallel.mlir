// RUN: spconv-opt %s -split-input-file -spconv-hoist-omp-parallel | FileCheck %s

// A nest of two sequential loops around a parallel one, whose bounds are read
// from a table no work-sharing loop writes, runs in one team; the
// work-sharing loop is the same as before.
// CHECK-LABEL: func.func @nest
// CHECK-SAME: %[[TABLE:[^:]*]]: memref<?xindex>
// CHECK: %[[OUT:.*]] = memref.alloc
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: scf.for %[[I:.*]] =
// CHECK-NEXT: scf.for %[[J:.*]] =
// CHECK-NEXT: %[[LO:.*]] = memref.load %[[TABLE]][%[[J]]]
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[HI:.*]] = memref.load %[[TABLE]]
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[K:.*]]) : index = (%[[LO]]) to (%[[HI]])
// CHECK-NEXT: %[[V:.*]] = memref.load %[[OUT]][%[[K]]]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[K]]]
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK-NEXT: }
// CHECK-NEXT: return %[[OUT]]
func.func @nest(%n: index, %table: memref<?xindex>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %out = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %lo = memref.load %table[%j] : memref<?xindex>
      %j1 = arith.addi %j, %c1 : index
      %hi = memref.load %table[%j1] : memref<?xindex>
      omp.parallel {
        omp.wsloop {
          omp.loop_nest (%k) : index = (%lo) to (%hi) step (%c1) {
            %v = memref.load %out[%k] : memref<?xf32>
            %s = arith.addf %v, %one : f32
            memref.store %s, %out[%k] : memref<?xf32>
            omp.yield
          }
        }
        omp.terminator
      }
    }
  }
  return %out : memref<?xf32>
}

// -----

// Two parallel loops in one body share the team too; code that only
// computes needs no memory to be unshared.
// CHECK-LABEL: func.func @two_loops
// CHECK: omp.parallel {
// CHECK-NEXT: scf.for
// CHECK-NEXT: arith.muli
// CHECK-NEXT: omp.wsloop {
// CHECK: omp.wsloop {
// CHECK-NOT: omp.parallel
// CHECK: return
func.func @two_loops(%n: index, %a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %hi = arith.muli %i, %n : index
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%k) : index = (%c0) to (%hi) step (%c1) {
          memref.store %zero, %a[%k] : memref<?xf32>
          omp.yield
        }
      }
      omp.terminator
    }
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%k) : index = (%c0) to (%hi) step (%c1) {
          %v = memref.load %a[%k] : memref<?xf32>
          memref.store %v, %b[%k] : memref<?xf32>
          omp.yield
        }
      }
      omp.terminator
    }
  }
  return
}

// -----

// A read that may see what a work-sharing loop writes (two arguments may
// be one buffer) keeps its team per loop: another thread may already be
// writing the next loop's rows while this one reads.
// CHECK-LABEL: func.func @read_may_alias_write
// CHECK: scf.for
// CHECK: memref.load
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: omp.wsloop {
func.func @read_may_alias_write(%table: memref<?xindex>, %out: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %hi = memref.load %table[%i] : memref<?xindex>
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%k) : index = (%c0) to (%hi) step (%c1) {
          memref.store %k, %out[%k] : memref<?xindex>
          omp.yield
        }
      }
      omp.terminator
    }
  }
  return
}

// -----

// Sequential code that writes would run on every thread.
// CHECK-LABEL: func.func @sequential_write
// CHECK: scf.for
// CHECK-NEXT: memref.store
// CHECK-NEXT: omp.parallel {
func.func @sequential_write(%n: index, %count: memref<1xindex>, %out: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %i, %count[%c0] : memref<1xindex>
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%k) : index = (%c0) to (%n) step (%c1) {
          memref.store %k, %out[%k] : memref<?xindex>
          omp.yield
        }
      }
      omp.terminator
    }
  }
  return
}

// -----

// Only the inner loop of a nest whose outer loop writes runs in one team.
// CHECK-LABEL: func.func @inner_only
// CHECK: scf.for
// CHECK-NEXT: memref.store
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: scf.for
// CHECK-NEXT: omp.wsloop {
// CHECK-NOT: omp.parallel
// CHECK: return
func.func @inner_only(%n: index, %count: memref<1xindex>, %out: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %i, %count[%c0] : memref<1xindex>
    scf.for %j = %c0 to %c4 step %c1 {
      omp.parallel {
        omp.wsloop {
          omp.loop_nest (%k) : index = (%c0) to (%n) step (%c1) {
            memref.store %k, %out[%k] : memref<?xindex>
            omp.yield
          }
        }
        omp.terminator
      }
    }
  }
  return
}

// -----

// A loop that carries values, a region with a clause, a work-sharing loop
// without its closing barrier, a sequential op with regions: each keeps its
// team per parallel loop.
// CHECK-LABEL: func.func @not_plain
// CHECK: scf.for {{.*}} iter_args
// CHECK-NEXT: omp.parallel {
// CHECK: scf.for
// CHECK-NEXT: omp.parallel num_threads
// CHECK: scf.for
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: omp.wsloop nowait {
// CHECK: scf.for
// CHECK-NEXT: scf.if
// CHECK: omp.parallel {
func.func @not_plain(%n: index, %flag: i1, %out: memref<?xindex>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2 : i32
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %c0) -> (index) {
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%k) : index = (%c0) to (%n) step (%c1) {
          memref.store %k, %out[%k] : memref<?xindex>
          omp.yield
        }
      }
      omp.terminator
    }
    %next = arith.addi %acc, %i : index
    scf.yield %next : index
  }
  scf.for %i = %c0 to %c4 step %c1 {
    omp.parallel num_threads(%two : i32) {
      omp.wsloop {
        omp.loop_nest (%k) : index = (%c0) to (%n) step (%c1) {
          memref.store %k, %out[%k] : memref<?xindex>
          omp.yield
        }
      }
      omp.terminator
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    omp.parallel {
      omp.wsloop nowait {
        omp.loop_nest (%k) : index = (%c0) to (%n) step (%c1) {
          memref.store %k, %out[%k] : memref<?xindex>
          omp.yield
        }
      }
      omp.terminator
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    scf.if %flag {
      %x = arith.addi %i, %c1 : index
    }
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%k) : index = (%c0) to (%n) step (%c1) {
          memref.store %k, %out[%k] : memref<?xindex>
          omp.yield
        }
      }
      omp.terminator
    }
  }
  return %sum : index
}

// -----

func.func private @opaque(index)

// A work-sharing loop whose effects are unknown keeps its team where the
// sequential code reads memory, and shares it where that code only computes.
// CHECK-LABEL: func.func @unknown_effects
// CHECK: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: omp.parallel {
// CHECK: omp.parallel {
// CHECK-NEXT: scf.for
// CHECK-NEXT: omp.wsloop {
func.func @unknown_effects(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %table = memref.alloc(%n) : memref<?xindex>
  scf.for %i = %c0 to %c4 step %c1 {
    %hi = memref.load %table[%i] : memref<?xindex>
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%k) : index = (%c0) to (%hi) step (%c1) {
          func.call @opaque(%k) : (index) -> ()
          omp.yield
        }
      }
      omp.terminator
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%k) : index = (%c0) to (%n) step (%c1) {
          func.call @opaque(%k) : (index) -> ()
          omp.yield
        }
      }
      omp.terminator
    }
  }
  memref.dealloc %table : memref<?xindex>
  return
}
