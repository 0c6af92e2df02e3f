/*===- HashTableLayout.h - Coordinate hash table layout contract --*- C -*-===*\
|*                                                                            *|
|* The memory layout of the coordinate hash table. Generated kernels probe    *|
|* the table inline, so everything here is a contract shared by the runtime's *|
|* CPU and CUDA builders and by the code that the compiler emits. A unit test *|
|* (test/LayoutTest.cpp) pins the constants; changing any of them is an ABI   *|
|* break.                                                                     *|
|*                                                                            *|
|* Layout:                                                                    *|
|*   - two arrays of `capacity` elements: `int64_t keys[]`, `int32_t values[]`*|
|*   - `capacity` is a power of two, at least SPCONV_HT_MIN_CAPACITY, and at  *|
|*     least twice the number of entries (load factor <= 1/2);                *|
|*   - an empty slot holds SPCONV_HT_EMPTY_KEY (-1) in `keys` and             *|
|*     SPCONV_HT_EMPTY_VALUE (-1) in `values`: both arrays can be cleared     *|
|*     with a 0xFF byte fill; real keys are nonnegative;                      *|
|*   - a key's home slot is spconv_ht_hash(key) & (capacity - 1);             *|
|*   - collisions use linear probing: home, home + 1, ... modulo capacity;    *|
|*     there are no deletions, so a probe stops at the key or at the first    *|
|*     empty slot.                                                            *|
|* Which slot of a probe run a key ends up in depends on the builder (the CPU *|
|* builder is deterministic, the CUDA one is not); every table that follows   *|
|* these rules answers every probe correctly.                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SPCONV_RT_HASHTABLELAYOUT_H
#define SPCONV_RT_HASHTABLELAYOUT_H

#include <stdint.h>

#if defined(__CUDACC__)
#define SPCONV_HT_FN static inline __host__ __device__
#else
#define SPCONV_HT_FN static inline
#endif

/* Marker of an empty slot in the key array (all bits set). */
#define SPCONV_HT_EMPTY_KEY ((int64_t)-1)
/* Value stored in an empty slot; also what a failed lookup returns. */
#define SPCONV_HT_EMPTY_VALUE ((int32_t)-1)
/* Smallest capacity a table may have. */
#define SPCONV_HT_MIN_CAPACITY ((int64_t)16)
/* Values are int32 site indices, so a table holds at most this many keys. */
#define SPCONV_HT_MAX_ENTRIES ((int64_t)INT32_MAX)

/* The splitmix64 finaliser: a bijective 64-bit mix that spreads the low,
 * highly correlated bits of linear coordinate keys over the whole word. */
#define SPCONV_HT_MIX_SHIFT_1 30
#define SPCONV_HT_MIX_MULTIPLIER_1 UINT64_C(0xbf58476d1ce4e5b9)
#define SPCONV_HT_MIX_SHIFT_2 27
#define SPCONV_HT_MIX_MULTIPLIER_2 UINT64_C(0x94d049bb133111eb)
#define SPCONV_HT_MIX_SHIFT_3 31
SPCONV_HT_FN uint64_t spconv_ht_hash(int64_t key) {
  uint64_t z = (uint64_t)key;
  z = (z ^ (z >> SPCONV_HT_MIX_SHIFT_1)) * SPCONV_HT_MIX_MULTIPLIER_1;
  z = (z ^ (z >> SPCONV_HT_MIX_SHIFT_2)) * SPCONV_HT_MIX_MULTIPLIER_2;
  return z ^ (z >> SPCONV_HT_MIX_SHIFT_3);
}

/* First slot probed for `key`. `capacity` must be a power of two. */
SPCONV_HT_FN int64_t spconv_ht_home_slot(int64_t key, int64_t capacity) {
  return (int64_t)(spconv_ht_hash(key) & (uint64_t)(capacity - 1));
}

/* Slot probed after `slot` (linear probing with wrap-around). */
SPCONV_HT_FN int64_t spconv_ht_next_slot(int64_t slot, int64_t capacity) {
  return (slot + 1) & (capacity - 1);
}

/* Capacity for `n` entries: the next power of two >= 2 * n, at least
 * SPCONV_HT_MIN_CAPACITY. Returns -1 if n is negative or above
 * SPCONV_HT_MAX_ENTRIES. */
SPCONV_HT_FN int64_t spconv_ht_capacity_for(int64_t n) {
  int64_t capacity = SPCONV_HT_MIN_CAPACITY;
  if (n < 0 || n > SPCONV_HT_MAX_ENTRIES)
    return -1;
  while (capacity < 2 * n)
    capacity <<= 1;
  return capacity;
}

/* Slot that holds `key`, or -1 if the key is absent (negative keys are always
 * absent). */
SPCONV_HT_FN int64_t spconv_ht_find_slot(const int64_t *keys, int64_t capacity,
                                         int64_t key) {
  int64_t slot, probes;
  if (key < 0)
    return -1;
  slot = spconv_ht_home_slot(key, capacity);
  /* The bound only matters for a corrupt (full) table. */
  for (probes = 0; probes < capacity; ++probes) {
    int64_t k = keys[slot];
    if (k == key)
      return slot;
    if (k == SPCONV_HT_EMPTY_KEY)
      return -1;
    slot = spconv_ht_next_slot(slot, capacity);
  }
  return -1;
}

/* Value (site index) stored for `key`, or SPCONV_HT_EMPTY_VALUE (-1). */
SPCONV_HT_FN int32_t spconv_ht_lookup(const int64_t *keys,
                                      const int32_t *values, int64_t capacity,
                                      int64_t key) {
  int64_t slot = spconv_ht_find_slot(keys, capacity, key);
  return slot < 0 ? SPCONV_HT_EMPTY_VALUE : values[slot];
}

#endif /* SPCONV_RT_HASHTABLELAYOUT_H */
