// RUN: spconv-opt %s -spconv-check-lowered -split-input-file -verify-diagnostics | FileCheck %s

// What translates to LLVM IR passes: LLVM and OpenMP ops, and the CUDA host
// code's gpu.binary and gpu.launch_func.
// CHECK-LABEL: llvm.func @lowered
// CHECK: omp.parallel
// CHECK: gpu.launch_func
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, "">]
  llvm.func @lowered() {
    omp.parallel {
      omp.terminator
    }
    %c1 = llvm.mlir.constant(1 : index) : i64
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64
    llvm.return
  }
}

// -----

// Anything else fails the pass, naming the first op found (innermost
// first).
module {
  func.func @left() {
    // expected-error @below {{'func.return' is left unlowered: only LLVM, OpenMP and gpu.binary / gpu.launch_func ops translate to LLVM IR}}
    return
  }
}

// -----

// An unrealized cast is named only when nothing else is left: it is the
// trace of another op that was not converted.
module {
  llvm.func @casts(%a: i64) -> i64 {
    %i = builtin.unrealized_conversion_cast %a : i64 to index
    // expected-error @below {{'arith.addi' is left unlowered}}
    %s = arith.addi %i, %i : index
    %r = builtin.unrealized_conversion_cast %s : index to i64
    llvm.return %r : i64
  }
}

// -----

module {
  llvm.func @cast_only(%a: i64) -> i64 {
    // expected-error @below {{'builtin.unrealized_conversion_cast' is left unlowered}}
    %i = builtin.unrealized_conversion_cast %a : i64 to i32
    %r = builtin.unrealized_conversion_cast %i : i32 to i64
    llvm.return %r : i64
  }
}
