// RUN: spconv-opt %s -spconv-check-input -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not spconv-opt %s -spconv-to-cpu -split-input-file 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not spconv-opt %s -spconv-to-gpu-emulator -split-input-file 2>&1 | FileCheck %s --check-prefix=EMU

// Parallel loops as scf.parallel pass: the pipelines put them on threads.
// CHECK-LABEL: func.func @no_openmp
// CHECK: scf.parallel
func.func @no_openmp(%n: index, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// OpenMP ops fail, naming the outermost: upstream's buffer deallocation
// would put its ownership constants into the omp.wsloop's region, which
// must hold its loop nest alone (the fuzzer's invalid-IR finding).
// CPU: error: spconv-to-cpu takes no OpenMP ops: 'omp.parallel' is one; give it the parallel loops as scf.parallel
// EMU: error: spconv-to-gpu-emulator takes no OpenMP ops: 'omp.parallel' is one
func.func @openmp(%n: index, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{the spconv pipelines take no OpenMP ops: 'omp.parallel' is one; give it the parallel loops as scf.parallel (it runs them on OpenMP threads itself)}}
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %zero, %out[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
