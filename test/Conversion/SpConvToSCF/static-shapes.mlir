// RUN: spconv-opt %s -convert-spconv-to-scf -split-input-file | FileCheck %s

// Static result sizes that the data must confirm are checked at run time.
// sort_unique sorts into buffers large enough for both the keys and the
// static sizes, checks the unique count after a successful sort (reporting
// check 0, SPCONV_RT_SIZE_SORT_UNIQUE_COUNT, with the op's line), zeroes
// the results on any failure, and returns static views of the buffers.
// CHECK-LABEL: func.func @sort_unique_static
// CHECK: %[[KEYS:.*]] = memref.cast %{{.*}} : memref<5xi64> to memref<?xi64>
// CHECK: %[[N:.*]] = memref.dim %[[KEYS]]
// CHECK: %[[CAP3:.*]] = arith.maxui %[[N]], %{{.*}} : index
// CHECK: %[[CAP:.*]] = arith.maxui %[[CAP3]], %{{.*}} : index
// CHECK: %[[U:.*]] = memref.alloc(%[[CAP]]) : memref<?xi64>
// CHECK: %[[F:.*]] = memref.alloc(%[[CAP]]) : memref<?xi32>
// CHECK: %[[I:.*]] = memref.alloc(%[[CAP]]) : memref<?xi32>
// CHECK: %[[STATUS:.*]] = call @spconv_rt_memref_unique(%[[KEYS]], %[[U]], %[[F]], %[[I]], %{{.*}})
// CHECK: %[[SORTED:.*]] = arith.cmpi eq, %[[STATUS]]
// CHECK: %[[COUNT:.*]] = arith.select %[[SORTED]]
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[OK:.*]] = scf.if %[[SORTED]] -> (i1) {
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[COUNT]], %[[C3]] : index
// CHECK: scf.if %[[SAME]] {
// CHECK: } else {
// CHECK-DAG: %[[WHAT:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[LINE:.*]] = arith.constant 45 : i64
// CHECK: call @spconv_rt_report_size_mismatch(%[[WHAT]], %{{.*}}, %{{.*}}, %[[LINE]])
// CHECK: scf.yield %[[SAME]] : i1
// CHECK: } else {
// CHECK: scf.yield %[[SORTED]] : i1
// CHECK: %[[FAILED:.*]] = arith.xori %[[OK]], %true
// CHECK: scf.if %[[FAILED]] {
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[U]]
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[F]]
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[I]]
// CHECK: memref.subview %[[U]][0] [3] [1] : memref<?xi64> to memref<3xi64, strided<[1]>>
// CHECK: memref.subview %[[F]][0] [3] [1] : memref<?xi32> to memref<3xi32, strided<[1]>>
// CHECK: memref.subview %[[I]][0] [5] [1] : memref<?xi32> to memref<5xi32, strided<[1]>>
// CHECK: bufferization.to_tensor %{{.*}} : memref<3xi64> to tensor<3xi64>
// CHECK-LABEL: func.func private @spconv_rt_report_size_mismatch(i64, i64, i64, i64) -> i32
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @sort_unique_static(%k: tensor<5xi64>) -> (tensor<3xi64>, tensor<3xi32>, tensor<5xi32>) {
  %u, %f, %i = spconv.sort_unique %k : tensor<5xi64> -> tensor<3xi64>, tensor<3xi32>, tensor<5xi32>
  return %u, %f, %i : tensor<3xi64>, tensor<3xi32>, tensor<5xi32>
}

// -----

// Dynamic keys and a static inverse map: the key count is checked first
// (check 1) and the sort runs only if it holds.
// CHECK-LABEL: func.func @sort_unique_inverse
// CHECK: %[[N:.*]] = memref.dim
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK: %[[KEYS_OK:.*]] = arith.cmpi eq, %[[N]], %[[C5]] : index
// CHECK: scf.if %[[KEYS_OK]] {
// CHECK: } else {
// CHECK: %[[WHAT:.*]] = arith.constant 1 : i64
// CHECK: call @spconv_rt_report_size_mismatch(%[[WHAT]],
// CHECK: %[[SORTED:.*]] = scf.if %[[KEYS_OK]] -> (i1) {
// CHECK: call @spconv_rt_memref_unique
// CHECK: } else {
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: scf.yield %[[FALSE]] : i1
// CHECK: memref.subview %{{.*}}[0] [%{{.*}}] [1]
// CHECK: memref.subview %{{.*}}[0] [5] [1] : memref<?xi32> to memref<5xi32, strided<[1]>>
func.func @sort_unique_inverse(%k: tensor<?xi64>) -> (tensor<?xi64>, tensor<5xi32>) {
  %u, %f, %i = spconv.sort_unique %k : tensor<?xi64> -> tensor<?xi64>, tensor<?xi32>, tensor<5xi32>
  return %u, %i : tensor<?xi64>, tensor<5xi32>
}

// -----

// Only `first` states the unique count (found by the fuzzer: the count was
// taken from `unique` alone, leaving `first` a dynamic buffer for a static
// tensor): it is checked (check 0) and both results view their own sizes.
// CHECK-LABEL: func.func @sort_unique_static_first
// CHECK: call @spconv_rt_memref_unique
// CHECK: %[[WHAT:.*]] = arith.constant 0 : i64
// CHECK: call @spconv_rt_report_size_mismatch(%[[WHAT]],
// CHECK: memref.subview %{{.*}}[0] [%{{.*}}] [1] : memref<?xi64> to memref<?xi64, strided<[1]>>
// CHECK: memref.subview %{{.*}}[0] [2] [1] : memref<?xi32> to memref<2xi32, strided<[1]>>
func.func @sort_unique_static_first(%k: tensor<?xi64>) -> (tensor<?xi64>, tensor<2xi32>) {
  %u, %f, %i = spconv.sort_unique %k : tensor<?xi64> -> tensor<?xi64>, tensor<2xi32>, tensor<?xi32>
  return %u, %f : tensor<?xi64>, tensor<2xi32>
}

// And the other way round.
// CHECK-LABEL: func.func @sort_unique_static_unique
// CHECK: memref.subview %{{.*}}[0] [2] [1] : memref<?xi64> to memref<2xi64, strided<[1]>>
// CHECK: memref.subview %{{.*}}[0] [%{{.*}}] [1] : memref<?xi32> to memref<?xi32, strided<[1]>>
func.func @sort_unique_static_unique(%k: tensor<2xi64>) -> (tensor<2xi64>, tensor<?xi32>) {
  %u, %f, %i = spconv.sort_unique %k : tensor<2xi64> -> tensor<2xi64>, tensor<?xi32>, tensor<?xi32>
  return %u, %f : tensor<2xi64>, tensor<?xi32>
}

// -----

// linearize into a static number of keys: the rows are checked (check 2),
// the runtime fills a static buffer or the keys stay zero.
// CHECK-LABEL: func.func @linearize_static
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x4xi32
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[N]], %{{.*}} : index
// CHECK: arith.constant 2 : i64
// CHECK: call @spconv_rt_report_size_mismatch
// CHECK: %[[KEYS:.*]] = memref.alloc() : memref<2xi64>
// CHECK: scf.if %[[OK]] {
// CHECK: %[[DYN:.*]] = memref.cast %[[KEYS]] : memref<2xi64> to memref<?xi64>
// CHECK: call @spconv_rt_memref_linearize_coords(%{{.*}}, %{{.*}}, %{{.*}}, %[[DYN]])
// CHECK: } else {
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[KEYS]]
// CHECK: bufferization.to_tensor %[[KEYS]] {{.*}} : memref<2xi64> to tensor<2xi64>
func.func @linearize_static(%c: tensor<?x4xi32, #spconv.grid<[8, 8, 8]>>) -> tensor<2xi64> {
  %k = spconv.linearize %c : tensor<?x4xi32, #spconv.grid<[8, 8, 8]>> -> tensor<2xi64>
  return %k : tensor<2xi64>
}

// -----

// Static on both sides (the verifier compared them): nothing to check.
// CHECK-LABEL: func.func @linearize_both_static
// CHECK-NOT: spconv_rt_report_size_mismatch
// CHECK: %[[KEYS:.*]] = memref.alloc() : memref<3xi64>
// CHECK-NOT: scf.if
// CHECK: call @spconv_rt_memref_linearize_coords
// CHECK-NOT: spconv_rt_report_size_mismatch
func.func @linearize_both_static(%c: tensor<3x4xi32, #spconv.grid<[8, 8, 8]>>) -> tensor<3xi64> {
  %k = spconv.linearize %c : tensor<3x4xi32, #spconv.grid<[8, 8, 8]>> -> tensor<3xi64>
  return %k : tensor<3xi64>
}

// -----

// delinearize into a static number of rows (check 3).
// CHECK-LABEL: func.func @delinearize_static
// CHECK: arith.constant 3 : i64
// CHECK: call @spconv_rt_report_size_mismatch
// CHECK: %[[COORDS:.*]] = memref.alloc() : memref<2x4xi32>
// CHECK: scf.if
// CHECK: call @spconv_rt_memref_delinearize_keys
// CHECK: } else {
// CHECK: memref.store %{{.*}}, %[[COORDS]]
func.func @delinearize_static(%k: tensor<?xi64>) -> tensor<2x4xi32, #spconv.grid<[8, 8, 8]>> {
  %c = spconv.delinearize %k : tensor<?xi64> -> tensor<2x4xi32, #spconv.grid<[8, 8, 8]>>
  return %c : tensor<2x4xi32, #spconv.grid<[8, 8, 8]>>
}

// -----

// gather_rows into static rows and channels (checks 5 and 6): the result is
// allocated with its static shape and only filled when both hold.
// CHECK-LABEL: func.func @gather_static
// CHECK: arith.constant 5 : i64
// CHECK: call @spconv_rt_report_size_mismatch
// CHECK: arith.constant 6 : i64
// CHECK: call @spconv_rt_report_size_mismatch
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: %[[RESULT:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: scf.if %[[OK]] {
// CHECK: call @spconv_rt_report_bad_index
// CHECK: scf.parallel
// CHECK: } else {
// CHECK: memref.store %{{.*}}, %[[RESULT]]
// CHECK: bufferization.to_tensor %[[RESULT]]
func.func @gather_static(%f: tensor<?x?xf32>, %r: tensor<?xi32>) -> tensor<2x4xf32> {
  %g = spconv.gather_rows %f, %r : tensor<?x?xf32>, tensor<?xi32> -> tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}

// -----

// unfold on dynamic extents: each one must hold the window, the first that
// does not is reported (dimension, extent, padding, dilated kernel extent,
// line), and a static L is compared only once the windows fit (check 9).
// CHECK-LABEL: func.func @unfold_dynamic
// CHECK: %[[FITS0:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK: %[[BAD0:.*]] = arith.xori %[[FITS0]]
// CHECK: scf.if %[[BAD0]] {
// CHECK: call @spconv_rt_report_empty_window
// CHECK: %[[FITS1:.*]] = arith.cmpi sge
// CHECK: %[[NOT1:.*]] = arith.xori %[[FITS1]]
// CHECK: %[[BAD1:.*]] = arith.andi %[[FITS0]], %[[NOT1]]
// CHECK: scf.if %[[BAD1]] {
// CHECK: call @spconv_rt_report_empty_window
// CHECK: %[[FITS:.*]] = arith.andi %[[FITS0]], %[[FITS1]]
// CHECK: scf.if %[[FITS]] -> (i1) {
// CHECK: arith.constant 9 : i64
// CHECK: call @spconv_rt_report_size_mismatch
// CHECK: memref.alloc() : memref<1x9x2xf32>
// CHECK: scf.if
// CHECK: scf.parallel
// CHECK-LABEL: func.func private @spconv_rt_report_empty_window(i64, i64, i64, i64, i64) -> i32
func.func @unfold_dynamic(%x: tensor<1x1x?x?xf32>) -> tensor<1x9x2xf32> {
  %c = spconv.unfold <regular, kernel = [3, 3]> %x : tensor<1x1x?x?xf32> -> tensor<1x9x2xf32>
  return %c : tensor<1x9x2xf32>
}

// -----

// fold with a dynamic L and dynamic rows: L against the output size's
// window positions (check 12), rows a multiple of the kernel volume (13).
// CHECK-LABEL: func.func @fold_dynamic
// CHECK: arith.constant 13 : i64
// CHECK: call @spconv_rt_report_size_mismatch
// CHECK: arith.constant 12 : i64
// CHECK: call @spconv_rt_report_size_mismatch
// CHECK: scf.if
// CHECK: scf.parallel
func.func @fold_dynamic(%c: tensor<1x?x?xf32>) -> tensor<1x?x3x4xf32> {
  %x = spconv.fold <regular, kernel = [3, 3]> %c : tensor<1x?x?xf32> -> tensor<1x?x3x4xf32>
  return %x : tensor<1x?x3x4xf32>
}
