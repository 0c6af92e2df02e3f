// RUN: spconv-opt %s -spconv-lower-nd-vector-ops | FileCheck %s

// A 2-D from_elements (what the canonicalizer makes of a fragment built
// element by element) becomes one 1-D from_elements per row.
// CHECK-LABEL: func.func @fragment
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK: %[[R0:.*]] = vector.from_elements %[[A]] : vector<1xf32>
// CHECK: %[[V0:.*]] = vector.insert %[[R0]], %{{.*}} [0] : vector<1xf32> into vector<2x1xf32>
// CHECK: %[[R1:.*]] = vector.from_elements %[[B]] : vector<1xf32>
// CHECK: vector.insert %[[R1]], %[[V0]] [1] : vector<1xf32> into vector<2x1xf32>
// CHECK-NOT: vector.from_elements {{.*}} : vector<2x1xf32>
func.func @fragment(%a: f32, %b: f32) -> vector<2x1xf32> {
  %v = vector.from_elements %a, %b : vector<2x1xf32>
  return %v : vector<2x1xf32>
}

// The upper half of an ldmatrix x4's registers: rows extracted and
// inserted.
// CHECK-LABEL: func.func @half
// CHECK-SAME: (%[[X:.*]]: vector<4x2xf16>)
// CHECK: %[[E2:.*]] = vector.extract %[[X]][2] : vector<2xf16> from vector<4x2xf16>
// CHECK: %[[H:.*]] = vector.insert %[[E2]], %{{.*}} [0] : vector<2xf16> into vector<2x2xf16>
// CHECK: %[[E3:.*]] = vector.extract %[[X]][3] : vector<2xf16> from vector<4x2xf16>
// CHECK: vector.insert %[[E3]], %[[H]] [1] : vector<2xf16> into vector<2x2xf16>
// CHECK-NOT: vector.extract_strided_slice
func.func @half(%x: vector<4x2xf16>) -> vector<2x2xf16> {
  %s = vector.extract_strided_slice %x {offsets = [2, 0], sizes = [2, 2], strides = [1, 1]} : vector<4x2xf16> to vector<2x2xf16>
  return %s : vector<2x2xf16>
}

// 1-D ones are convert-to-llvm's: left as they are.
// CHECK-LABEL: func.func @flat
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: vector.extract_strided_slice %{{.*}} {offsets = [1], sizes = [2], strides = [1]} : vector<4xf32> to vector<2xf32>
func.func @flat(%a: f32, %b: f32, %x: vector<4xf32>) -> (vector<2xf32>, vector<2xf32>) {
  %v = vector.from_elements %a, %b : vector<2xf32>
  %s = vector.extract_strided_slice %x {offsets = [1], sizes = [2], strides = [1]} : vector<4xf32> to vector<2xf32>
  return %v, %s : vector<2xf32>, vector<2xf32>
}
