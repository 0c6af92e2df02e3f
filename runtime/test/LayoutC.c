/*===- LayoutC.c - The layout header compiled as C ------------------------===*
 *
 * Proves HashTableLayout.h and SpConvRuntime.h are valid C and exposes the
 * inline functions as compiled by a C compiler, for LayoutTest.cpp.
 *
 *===----------------------------------------------------------------------===*/

#include "spconv-rt/SpConvRuntime.h"

uint64_t layoutTestHashFromC(int64_t key) { return spconv_ht_hash(key); }

int64_t layoutTestCapacityFromC(int64_t n) { return spconv_ht_capacity_for(n); }

int32_t layoutTestLookupFromC(const int64_t *keys, const int32_t *values,
                              int64_t capacity, int64_t key) {
  return spconv_ht_lookup(keys, values, capacity, key);
}
