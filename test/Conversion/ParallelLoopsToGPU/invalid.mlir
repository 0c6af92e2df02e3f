// RUN: spconv-opt %s -spconv-parallel-loops-to-gpu -split-input-file -verify-diagnostics
// RUN: not spconv-opt %s -spconv-parallel-loops-to-gpu="block-size=2048" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not spconv-opt %s -spconv-parallel-loops-to-gpu="max-blocks=-1" 2>&1 | FileCheck %s --check-prefix=MAX

// BLOCK: block-size must be in [1, 1024], got 2048
// MAX: max-blocks must be 0 (no cap) or positive, got -1

func.func @reduction(%a: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{a parallel loop with reductions cannot become a kernel}}
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %x = memref.load %a[%i] : memref<?xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}

// -----

func.func private @host_only(index) -> index

func.func @external_callee(%a: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error @+1 {{kernel code calls @host_only, which has no body to compile for the device}}
    %y = func.call @host_only(%i) : (index) -> index
    memref.store %y, %a[%i] : memref<?xindex>
    scf.reduce
  }
  return
}

// -----

// expected-error @+1 {{the module already has a symbol named 'spconv_kernels'}}
module {
  func.func private @spconv_kernels()
  func.func @f(%a: memref<?xindex>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      memref.store %i, %a[%i] : memref<?xindex>
      scf.reduce
    }
    return
  }
}

// -----

func.func @workgroup_in_loop(%a: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.for %i = %bx to %n step %gx {
      // expected-error @+1 {{a workgroup buffer needs a static shape and must be allocated where the kernel starts}}
      %shared = memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>
      %v = memref.load %shared[%tx] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %v, %a[%i] : memref<?xf32>
    }
    gpu.terminator
  } {spconv.kernel = "bad"}
  return
}
