// RUN: spconv-opt %s -allow-unregistered-dialect | spconv-opt -allow-unregistered-dialect | FileCheck %s

// Defaults are filled in when parsing and omitted when printing.
// CHECK-LABEL: func @geometry
func.func @geometry() {
  // CHECK: geom = #spconv.geom<subm, kernel = [3, 3, 3]>
  "test.op"() {geom = #spconv.geom<subm, kernel = [3, 3, 3], stride = [1, 1, 1], padding = [1, 1, 1], dilation = [1, 1, 1], output_padding = [0, 0, 0]>} : () -> ()
  // Even subm kernels centre at kernel / 2: offsets -1 and 0.
  // CHECK: geom = #spconv.geom<subm, kernel = [2]>
  "test.op"() {geom = #spconv.geom<subm, kernel = [2], padding = [1]>} : () -> ()
  // CHECK: geom = #spconv.geom<subm, kernel = [5, 3], dilation = [3, 1]>
  "test.op"() {geom = #spconv.geom<subm, kernel = [5, 3], dilation = [3, 1]>} : () -> ()
  // CHECK: geom = #spconv.geom<regular, kernel = [3, 3, 3], dilation = [2, 1, 1]>
  "test.op"() {geom = #spconv.geom<regular, kernel = [3, 3, 3], dilation = [2, 1, 1]>} : () -> ()
  // CHECK: geom = #spconv.geom<inverse, kernel = [2, 2, 2], stride = [2, 2, 2]>
  "test.op"() {geom = #spconv.geom<inverse, kernel = [2, 2, 2], stride = [2, 2, 2]>} : () -> ()
  // CHECK: geom = #spconv.geom<transposed, kernel = [3], stride = [3], output_padding = [2]>
  "test.op"() {geom = #spconv.geom<transposed, output_padding = [2], stride = [3], kernel = [3]>} : () -> ()
  // Output padding only needs to be below the dilation when that is larger.
  // CHECK: geom = #spconv.geom<transposed, kernel = [3], dilation = [3], output_padding = [2]>
  "test.op"() {geom = #spconv.geom<transposed, kernel = [3], dilation = [3], output_padding = [2]>} : () -> ()
  return
}

// CHECK-LABEL: func @grid
func.func @grid() {
  // CHECK: grid = #spconv.grid<[41, 1600, 1408]>
  "test.op"() {grid = #spconv.grid<[41, 1600, 1408]>} : () -> ()
  // CHECK: grid = #spconv.grid<[1440, 1440, 41, 3], batch = 16>
  "test.op"() {grid = #spconv.grid<[1440, 1440, 41, 3], batch = 16>} : () -> ()
  // Keys up to 2 * (2^31 - 1)^2 = 2^63 - 2^33 + 2 still fit in int64.
  // CHECK: grid = #spconv.grid<[2147483647, 2147483647], batch = 2>
  "test.op"() {grid = #spconv.grid<[2147483647, 2147483647], batch = 2>} : () -> ()
  return
}

// CHECK-LABEL: func @types
// CHECK-SAME: !spconv.rulebook<#spconv.geom<transposed, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[10, 12], batch = 2>>
// CHECK-SAME: !spconv.hash_table
func.func @types(%rb: !spconv.rulebook<#spconv.geom<transposed, kernel = [2, 2], stride = [2, 2]>, #spconv.grid<[10, 12], batch = 2>>,
                 %t: !spconv.hash_table) {
  return
}
