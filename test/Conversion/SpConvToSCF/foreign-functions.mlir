// RUN: spconv-opt %s -convert-spconv-to-scf | FileCheck %s

// Functions typed otherwise than by a FunctionType (an llvm.func, already
// lowered) hold no grid encodings to strip: they are left as they are. (The
// pass used to cast every function's type to FunctionType and ran out of
// memory on an llvm.func in a release build.)
// CHECK-LABEL: llvm.func @lowered(%{{.*}}: i64) -> i64
// CHECK: llvm.return
// CHECK-LABEL: func.func @plain(%{{.*}}: tensor<?x4xi32>) -> tensor<?x4xi32>
llvm.func @lowered(%a: i64) -> i64 {
  llvm.return %a : i64
}
func.func @plain(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>) -> tensor<?x4xi32, #spconv.grid<[8, 8, 8]>> {
  return %c : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>
}
