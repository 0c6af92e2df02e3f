//===- MemRefTest.cpp - _mlir_ciface_ entry points on hand-built memrefs --===//

#include "TestUtil.h"

#include <numeric>
#include <string>

using namespace spconv_rt_test;

namespace {
template <typename T> StridedMemRefType<T, 1> memref1D(std::vector<T> &v) {
  return {v.data(), v.data(), 0, {int64_t(v.size())}, {1}};
}

/// A 2-D view of `buffer` with explicit offset, sizes and strides.
StridedMemRefType<int32_t, 2> memref2D(std::vector<int32_t> &buffer,
                                       int64_t offset, int64_t rows,
                                       int64_t cols, int64_t rowStride,
                                       int64_t colStride) {
  return {buffer.data(), buffer.data(), offset, {rows, cols},
          {rowStride, colStride}};
}

std::vector<int32_t> sampleCoords(int64_t n) {
  std::vector<int32_t> coords(static_cast<size_t>(n) * 4);
  uint64_t state = 3;
  const int64_t shape[4] = {2, kGridZ, kGridY, kGridX};
  for (int64_t i = 0; i < n; ++i)
    for (int c = 0; c < 4; ++c)
      coords[size_t(i * 4 + c)] = int32_t(splitmix(state) % uint64_t(shape[c]));
  return coords;
}
} // namespace

TEST(MemRef, LinearizeContiguousAndStrided) {
  const int64_t n = 1000;
  std::vector<int32_t> coords = sampleCoords(n);
  std::vector<int64_t> shape = {kGridZ, kGridY, kGridX};
  auto shapeRef = memref1D(shape);
  std::vector<int64_t> ref(n);
  ASSERT_EQ(spconv_rt_linearize_coords(coords.data(), n, 3, shape.data(), 2,
                                       ref.data()),
            0);

  std::vector<int64_t> keys(n, -1);
  auto keysRef = memref1D(keys);
  auto rowMajor = memref2D(coords, 0, n, 4, 4, 1);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_linearize_coords(&rowMajor, &shapeRef,
                                                           2, &keysRef),
            0)
      << lastError();
  EXPECT_TRUE(keys == ref);

  // Column-major copy (strides {1, N}) placed after 5 padding elements.
  std::vector<int32_t> colMajor(5 + size_t(n) * 4, 77);
  for (int64_t i = 0; i < n; ++i)
    for (int c = 0; c < 4; ++c)
      colMajor[size_t(5 + c * n + i)] = coords[size_t(i * 4 + c)];
  auto transposed = memref2D(colMajor, 5, n, 4, 1, n);
  std::fill(keys.begin(), keys.end(), -1);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_linearize_coords(
                &transposed, &shapeRef, 2, &keysRef),
            0)
      << lastError();
  EXPECT_TRUE(keys == ref);

  // Every other row of the row-major buffer (row stride 8).
  auto everyOther = memref2D(coords, 0, n / 2, 4, 8, 1);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_linearize_coords(
                &everyOther, &shapeRef, 2, &keysRef),
            0);
  for (int64_t i = 0; i < n / 2; ++i)
    ASSERT_EQ(keys[i], ref[2 * i]);

  // And back, into a strided (column-major) output.
  std::vector<int32_t> back(size_t(n) * 4, -1);
  auto backRef = memref2D(back, 0, n, 4, 1, n);
  auto allKeys = memref1D(ref);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_delinearize_keys(&allKeys, &shapeRef,
                                                           2, &backRef),
            0)
      << lastError();
  EXPECT_TRUE(std::equal(back.begin(), back.end(), colMajor.begin() + 5));
}

TEST(MemRef, LinearizeErrors) {
  std::vector<int32_t> coords = sampleCoords(10);
  std::vector<int64_t> shape = {kGridZ, kGridY, kGridX}, keys(10), small(3);
  auto shapeRef = memref1D(shape);
  auto keysRef = memref1D(keys), smallRef = memref1D(small);
  auto wrongCols = memref2D(coords, 0, 10, 3, 4, 1);
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_linearize_coords(
                &wrongCols, &shapeRef, 2, &keysRef),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("expected Nx4"), std::string::npos) << lastError();
  auto ok = memref2D(coords, 0, 10, 4, 4, 1);
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_linearize_coords(&ok, &shapeRef, 2,
                                                           &smallRef),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_linearize_coords(nullptr, &shapeRef,
                                                           2, &keysRef),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  coords[13] = 5000; // row 3, y
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_linearize_coords(&ok, &shapeRef, 2,
                                                           &keysRef),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_NE(lastError().find("row 3"), std::string::npos) << lastError();
}

TEST(MemRef, HashBuildAndLookup) {
  auto scene = makeLidarScene(5000, 2);
  std::vector<int64_t> keys = scene.keys;
  std::vector<int64_t> capacity(1);
  auto capRef = memref1D(capacity);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_hash_capacity(int64_t(keys.size()),
                                                        &capRef),
            0);
  EXPECT_EQ(capacity[0], 16384);
  std::vector<int64_t> tk(static_cast<size_t>(capacity[0])), dup(1, 99);
  std::vector<int32_t> tv(static_cast<size_t>(capacity[0]));
  auto keysRef = memref1D(keys), tkRef = memref1D(tk), dupRef = memref1D(dup);
  auto tvRef = memref1D(tv);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_hash_build(&keysRef, &tkRef, &tvRef,
                                                     &dupRef),
            0)
      << lastError();
  EXPECT_EQ(dup[0], -1);

  std::vector<int64_t> queries = subm27Queries(keys);
  std::vector<int32_t> out(queries.size());
  auto qRef = memref1D(queries);
  auto outRef = memref1D(out);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_hash_lookup(&tkRef, &tvRef, &qRef,
                                                      &outRef),
            0)
      << lastError();
  Table table;
  ASSERT_EQ(table.build(keys), 0);
  EXPECT_TRUE(out == table.lookup(queries));

  // Duplicates come back through the memref.
  keys[100] = keys[7];
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_hash_build(&keysRef, &tkRef, &tvRef,
                                                     &dupRef),
            SPCONV_RT_ERR_DUPLICATE_KEY);
  EXPECT_EQ(dup[0], 100);

  // Mismatched table arrays, non-unit stride, a short output.
  auto shortValues = tvRef;
  shortValues.sizes[0] = 16;
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_hash_lookup(&tkRef, &shortValues,
                                                      &qRef, &outRef),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  auto strided = qRef;
  strided.sizes[0] = int64_t(queries.size()) / 2;
  strided.strides[0] = 2;
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_hash_lookup(&tkRef, &tvRef, &strided,
                                                      &outRef),
            SPCONV_RT_ERR_UNSUPPORTED);
  EXPECT_NE(lastError().find("stride 2"), std::string::npos) << lastError();
  auto shortOut = outRef;
  shortOut.sizes[0] = 3;
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_hash_lookup(&tkRef, &tvRef, &qRef,
                                                      &shortOut),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  // A view with an offset: queries [10, 20).
  auto window = qRef;
  window.offset = 10;
  window.sizes[0] = 10;
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_hash_lookup(&tkRef, &tvRef, &window,
                                                      &outRef),
            0);
  auto expected = table.lookup(queries);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(out[i], expected[10 + i]);
}

TEST(MemRef, SortUniqueScan) {
  std::vector<int64_t> keys = {5, 3, 5, 1, 3, 9};
  std::vector<int64_t> uniqueKeys(6), count(1);
  std::vector<int32_t> first(6), inverse(6);
  auto k = memref1D(keys), u = memref1D(uniqueKeys), c = memref1D(count);
  auto f = memref1D(first), inv = memref1D(inverse);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_unique(&k, &u, &f, &inv, &c), 0)
      << lastError();
  EXPECT_EQ(count[0], 4);
  EXPECT_EQ(uniqueKeys, (std::vector<int64_t>{1, 3, 5, 9, 0, 0}));
  EXPECT_EQ(std::vector<int32_t>(first.begin(), first.begin() + 4),
            (std::vector<int32_t>{3, 1, 0, 5}));
  EXPECT_EQ(inverse, (std::vector<int32_t>{2, 1, 2, 0, 1, 3}));

  std::vector<int32_t> values = {0, 1, 2, 3, 4, 5};
  auto v = memref1D(values);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_sort_pairs(&k, &v), 0);
  EXPECT_EQ(keys, (std::vector<int64_t>{1, 3, 3, 5, 5, 9}));
  EXPECT_EQ(values, (std::vector<int32_t>{3, 1, 4, 0, 2, 5}));
  auto shortV = v;
  shortV.sizes[0] = 2;
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_sort_pairs(&k, &shortV),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  // Keys of a known width (the GPU conv's offset masks): stable, and a key
  // past the width or a width outside [1, 63] is an error.
  std::vector<int64_t> masks = {6, 1, 6, 0, 1};
  std::vector<int32_t> rows = {0, 1, 2, 3, 4};
  auto m = memref1D(masks);
  auto rw = memref1D(rows);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_sort_pairs_bits(&m, &rw, 3), 0);
  EXPECT_EQ(masks, (std::vector<int64_t>{0, 1, 1, 6, 6}));
  EXPECT_EQ(rows, (std::vector<int32_t>{3, 1, 4, 0, 2}));
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_sort_pairs_bits(&m, &rw, 2),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_sort_pairs_bits(&m, &rw, 0),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_sort_pairs_bits(&m, &rw, 64),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_sort_pairs_bits(&m, &shortV, 3),
            SPCONV_RT_ERR_INVALID_ARGUMENT);

  std::vector<int64_t> rev = {3, 2, 1};
  auto r = memref1D(rev);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_sort_keys(&r), 0);
  EXPECT_EQ(rev, (std::vector<int64_t>{1, 2, 3}));

  std::vector<int32_t> counts = {3, 0, 4, 1}, offsets(4), total(1);
  auto in = memref1D(counts), out = memref1D(offsets), t = memref1D(total);
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_exclusive_scan_i32(&in, &out, &t), 0);
  EXPECT_EQ(offsets, (std::vector<int32_t>{0, 3, 3, 7}));
  EXPECT_EQ(total[0], 8);
  std::vector<int64_t> counts64 = {1, 2}, offsets64(2), total64(1);
  auto in64 = memref1D(counts64), out64 = memref1D(offsets64),
       t64 = memref1D(total64);
  ASSERT_EQ(
      _mlir_ciface_spconv_rt_memref_exclusive_scan_i64(&in64, &out64, &t64), 0);
  EXPECT_EQ(offsets64, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(total64[0], 3);
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_memref_exclusive_scan_i64(&in64, &out64, nullptr),
      SPCONV_RT_ERR_INVALID_ARGUMENT);

  // Empty memrefs (null data, size 0) are valid.
  StridedMemRefType<int64_t, 1> empty = {nullptr, nullptr, 0, {0}, {1}};
  StridedMemRefType<int32_t, 1> empty32 = {nullptr, nullptr, 0, {0}, {1}};
  ASSERT_EQ(_mlir_ciface_spconv_rt_memref_unique(&empty, &empty, &empty32,
                                                 &empty32, &c),
            0)
      << lastError();
  EXPECT_EQ(count[0], 0);
  // Size > 0 with a null pointer is not.
  StridedMemRefType<int64_t, 1> dangling = {nullptr, nullptr, 0, {4}, {1}};
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_sort_keys(&dangling),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
}

TEST(MemRef, ReportBadIndexNamesPositionValueAndBound) {
  spconv_rt_clear_error();
  EXPECT_EQ(_mlir_ciface_spconv_rt_report_bad_index(7, 12, 10),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_STREQ(spconv_rt_last_error(),
               "index 12 at position 7 is outside [0, 10)");
}

TEST(MemRef, ReportSizeMismatchNamesOpLineAndBothSizes) {
  spconv_rt_clear_error();
  EXPECT_EQ(_mlir_ciface_spconv_rt_report_size_mismatch(
                SPCONV_RT_SIZE_SORT_UNIQUE_COUNT, 2, 3, 12),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(spconv_rt_last_error(),
               "spconv.sort_unique at line 12: 2 unique keys, but its unique "
               "and first results have the static size 3");
  // Line 0: no location.
  EXPECT_EQ(_mlir_ciface_spconv_rt_report_size_mismatch(
                SPCONV_RT_SIZE_UNFOLD_COLUMNS, 0, 36, 0),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(spconv_rt_last_error(),
               "spconv.unfold: 0 window positions, but its result has the "
               "static number of columns 36");
  EXPECT_EQ(_mlir_ciface_spconv_rt_report_size_mismatch(
                SPCONV_RT_SIZE_CONCAT_ROWS, 5, 7, 40),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(spconv_rt_last_error(),
               "tensor.concat at line 40: 5 rows in an operand, but another "
               "operand has 7");
  // Every check has a sentence, which names an op; an unknown one is named
  // as such.
  for (int64_t what = SPCONV_RT_SIZE_SORT_UNIQUE_COUNT;
       what <= SPCONV_RT_SIZE_POOL_GRAD_ROWS; ++what) {
    spconv_rt_report_size_mismatch(what, 1, 2, 3);
    std::string message = spconv_rt_last_error();
    EXPECT_TRUE(message.rfind("spconv.", 0) == 0 ||
                message.rfind("tensor.", 0) == 0)
        << what << ": " << message;
  }
  EXPECT_EQ(spconv_rt_report_size_mismatch(99, 1, 2, 3),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(spconv_rt_last_error(),
               "spconv_rt_report_size_mismatch: unknown size check 99 (1 "
               "against 2)");
  EXPECT_EQ(spconv_rt_report_size_mismatch(-1, 1, 2, 3),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(spconv_rt_report_size_mismatch(INT64_MIN, INT64_MAX, INT64_MIN,
                                           INT64_MAX),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
}

TEST(MemRef, ReportEmptyWindowNamesDimensionAndExtents) {
  spconv_rt_clear_error();
  EXPECT_EQ(_mlir_ciface_spconv_rt_report_empty_window(1, 2, 0, 3, 7),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(spconv_rt_last_error(),
               "spconv.unfold at line 7: the window does not fit in spatial "
               "dimension 1: input extent 2 + 2 * padding 0 is smaller than "
               "the dilated kernel extent 3");
}

TEST(MemRef, ReportDuplicateSiteNamesTheSiteAndBothRows) {
  std::vector<int32_t> coords = {0, 1, 2, 3, 1, 0, 0, 0, 0, 1, 2, 3};
  std::vector<int64_t> keys = {7, 9, 7};
  auto coordsRef = memref2D(coords, 0, 3, 4, 4, 1);
  auto keysRef = memref1D(keys);
  spconv_rt_clear_error();
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_report_duplicate_site(&coordsRef,
                                                                &keysRef, 2),
            SPCONV_RT_ERR_DUPLICATE_KEY);
  EXPECT_STREQ(spconv_rt_last_error(),
               "duplicate input site (0, 1, 2, 3) at rows 0 and 2");
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_report_duplicate_site(&coordsRef,
                                                                &keysRef, 3),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
}

// The deferred forms leave data-dependent results in memory and keep the
// error recorded before them: only argument errors are theirs.
TEST(MemRef, DeferredHashBuildLowersTheRepeatSlot) {
  std::vector<int64_t> keys = {7, 9, 7, 9}, tk(16), repeat = {INT64_MAX};
  std::vector<int32_t> tv(16);
  auto k = memref1D(keys), tkRef = memref1D(tk), r = memref1D(repeat);
  auto tvRef = memref1D(tv);
  _mlir_ciface_spconv_rt_report_bad_index(5, 9, 4);
  std::string earlier = spconv_rt_last_error();
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_memref_hash_build_deferred(&k, &tkRef, &tvRef, &r),
      0);
  EXPECT_EQ(repeat[0], 2);
  EXPECT_EQ(spconv_rt_last_error(), earlier);
  // A smaller row already there stays; without repeats nothing changes.
  repeat[0] = 1;
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_memref_hash_build_deferred(&k, &tkRef, &tvRef, &r),
      0);
  EXPECT_EQ(repeat[0], 1);
  std::vector<int64_t> unique = {7, 9, 11};
  auto u = memref1D(unique);
  repeat[0] = INT64_MAX;
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_memref_hash_build_deferred(&u, &tkRef, &tvRef, &r),
      0);
  EXPECT_EQ(repeat[0], INT64_MAX);
  // An argument error is the call's own.
  std::vector<int64_t> small(8);
  auto s = memref1D(small);
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_memref_hash_build_deferred(&k, &s, &tvRef, &r),
      SPCONV_RT_ERR_INVALID_ARGUMENT);
}

TEST(MemRef, DeferredScanWritesTheTotalOrMinusOne) {
  std::vector<int64_t> counts = {3, 0, 2}, total = {99};
  auto c = memref1D(counts), t = memref1D(total);
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_memref_exclusive_scan_i64_deferred(&c, &c, &t), 0);
  EXPECT_EQ(counts, (std::vector<int64_t>{0, 3, 3}));
  EXPECT_EQ(total[0], 5);
  std::vector<int64_t> huge = {INT64_MAX, 1};
  auto h = memref1D(huge);
  _mlir_ciface_spconv_rt_report_bad_index(5, 9, 4);
  std::string earlier = spconv_rt_last_error();
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_memref_exclusive_scan_i64_deferred(&h, &h, &t), 0);
  EXPECT_EQ(total[0], -1);
  EXPECT_EQ(spconv_rt_last_error(), earlier);
}

TEST(MemRef, DeferredUniqueHoldsKeysToTheirWidth) {
  std::vector<int64_t> keys = {5, 3, 5}, unique(3), count = {0};
  std::vector<int32_t> first(3), inverse(3);
  auto k = memref1D(keys), u = memref1D(unique), c = memref1D(count);
  auto f = memref1D(first), inv = memref1D(inverse);
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_memref_unique_deferred(&k, &u, &f, &inv, &c, 3),
      0);
  EXPECT_EQ(count[0], 2);
  EXPECT_EQ(unique[0], 3);
  EXPECT_EQ(unique[1], 5);
  EXPECT_EQ(inverse, (std::vector<int32_t>{1, 0, 1}));
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_memref_unique_deferred(&k, &u, &f, &inv, &c, 2),
      SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_STREQ(spconv_rt_last_error(),
               "spconv_rt_memref_unique_deferred: key 5 at index 0 is outside "
               "[0, 2^2)");
  EXPECT_EQ(
      _mlir_ciface_spconv_rt_memref_unique_deferred(&k, &u, &f, &inv, &c, 64),
      SPCONV_RT_ERR_INVALID_ARGUMENT);
}

TEST(MemRef, ReportBuildErrorNamesTheFirstError) {
  // Row 1 is outside the 8^3 grid; row 2 repeats row 0.
  std::vector<int32_t> coords = {0, 1, 2, 3, 0, 8, 0, 0, 0, 1, 2, 3};
  std::vector<int64_t> keys = {83, 512, 83}, shape = {8, 8, 8};
  auto coordsRef = memref2D(coords, 0, 3, 4, 4, 1);
  auto k = memref1D(keys), s = memref1D(shape);
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_report_build_error(&coordsRef, &k, &s,
                                                             1, 1, 2, 10),
            SPCONV_RT_ERR_OUT_OF_RANGE);
  EXPECT_STREQ(spconv_rt_last_error(),
               "input coordinates: row 1: coordinate 0 (column 1) = 8 is "
               "outside [0, 8)");
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_report_build_error(
                &coordsRef, &k, &s, 1, INT64_MAX, 2, 10),
            SPCONV_RT_ERR_DUPLICATE_KEY);
  EXPECT_STREQ(spconv_rt_last_error(),
               "duplicate input site (0, 1, 2, 3) at rows 0 and 2");
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_report_build_error(
                &coordsRef, &k, &s, 1, INT64_MAX, INT64_MAX, -1),
            SPCONV_RT_ERR_OVERFLOW);
  EXPECT_STREQ(spconv_rt_last_error(),
               "the number of rulebook pairs overflows int64");
  EXPECT_EQ(_mlir_ciface_spconv_rt_memref_report_build_error(
                &coordsRef, &k, &s, 1, INT64_MAX, INT64_MAX, 10),
            SPCONV_RT_ERR_INVALID_ARGUMENT);
}
