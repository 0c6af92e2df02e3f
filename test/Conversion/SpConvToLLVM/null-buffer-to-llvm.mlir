// RUN: spconv-opt %s -convert-spconv-null-buffers-to-llvm | FileCheck %s

// A null buffer is a descriptor whose pointers are null: offset 0, static
// sizes and strides from its type, dynamic ones 0. Its users see it through
// a cast until they are converted too.
// CHECK-LABEL: func.func @null
// CHECK: %[[POISON:.*]] = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[D0:.*]] = llvm.insertvalue %[[NULL]], %[[POISON]][0]
// CHECK: %[[D1:.*]] = llvm.insertvalue %[[NULL]], %[[D0]][1]
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : index) : i64
// CHECK: %[[D2:.*]] = llvm.insertvalue %[[ZERO]], %[[D1]][2]
// CHECK: llvm.mlir.constant(0 : index) : i64
// CHECK: llvm.insertvalue %{{.*}}[3, 0]
// CHECK: llvm.mlir.constant(27 : index) : i64
// CHECK: llvm.insertvalue %{{.*}}[4, 0]
// CHECK: llvm.mlir.constant(27 : index) : i64
// CHECK: llvm.insertvalue %{{.*}}[3, 1]
// CHECK: llvm.mlir.constant(1 : index) : i64
// CHECK: %[[DESC:.*]] = llvm.insertvalue %{{.*}}[4, 1]
// CHECK: %[[BUFFER:.*]] = builtin.unrealized_conversion_cast %[[DESC]] : {{.*}} to memref<?x27xi32>
// CHECK: return %[[BUFFER]]
func.func @null() -> memref<?x27xi32> {
  %a = spconv.null_buffer : memref<?x27xi32>
  return %a : memref<?x27xi32>
}
