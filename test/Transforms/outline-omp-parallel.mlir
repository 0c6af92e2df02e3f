// RUN: spconv-opt %s -spconv-outline-omp-parallel | FileCheck %s

llvm.mlir.global internal constant @table(dense<[1, 2]> : tensor<2xi32>) : !llvm.array<2 x i32>

// Each outermost region moves into a function of its own, called with the
// values it uses from outside; constants and global addresses are cloned
// into it, not passed; a nested region moves with its parent.
// CHECK-LABEL: llvm.func @f
// CHECK-SAME: (%[[N:.*]]: i64, %[[P:.*]]: !llvm.ptr)
// CHECK-NEXT: %[[C:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT: llvm.mlir.addressof @table
// CHECK-NEXT: llvm.call @f.omp_parallel.0(%[[N]], %[[P]]) : (i64, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.call @f.omp_parallel.1(%[[P]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.store %[[C]], %[[P]]
// CHECK-NEXT: llvm.return
// CHECK-NOT: omp.parallel
// CHECK-LABEL: llvm.func internal @f.omp_parallel.0
// CHECK-SAME: (%[[N0:.*]]: i64, %[[P0:.*]]: !llvm.ptr)
// CHECK-NEXT: %[[C0:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT: %[[T0:.*]] = llvm.mlir.addressof @table : !llvm.ptr
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: %[[S:.*]] = llvm.add %[[N0]], %[[C0]] : i64
// CHECK-NEXT: llvm.store %[[S]], %[[P0]] : i64, !llvm.ptr
// CHECK-NEXT: %[[E:.*]] = llvm.load %[[T0]] : !llvm.ptr -> i32
// CHECK-NEXT: llvm.store %[[E]], %[[P0]] : i32, !llvm.ptr
// CHECK-NEXT: omp.terminator
// CHECK-NEXT: }
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func internal @f.omp_parallel.1
// CHECK-SAME: (%[[P1:.*]]: !llvm.ptr)
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: llvm.load %[[P1]] : !llvm.ptr -> i64
// CHECK-NEXT: omp.terminator
// CHECK-NEXT: }
// CHECK-NEXT: omp.terminator
// CHECK-NEXT: }
// CHECK-NEXT: llvm.return
llvm.func @f(%n: i64, %p: !llvm.ptr) {
  %c = llvm.mlir.constant(4 : i64) : i64
  %t = llvm.mlir.addressof @table : !llvm.ptr
  omp.parallel {
    %s = llvm.add %n, %c : i64
    llvm.store %s, %p : i64, !llvm.ptr
    %e = llvm.load %t : !llvm.ptr -> i32
    llvm.store %e, %p : i32, !llvm.ptr
    omp.terminator
  }
  omp.parallel {
    omp.parallel {
      %v = llvm.load %p : !llvm.ptr -> i64
      omp.terminator
    }
    omp.terminator
  }
  llvm.store %c, %p : i64, !llvm.ptr
  llvm.return
}

// A function without regions is left alone.
// CHECK-LABEL: llvm.func @g
// CHECK-NEXT: llvm.return
// CHECK-NOT: @g.omp_parallel
llvm.func @g() {
  llvm.return
}
