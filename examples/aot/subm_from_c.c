/*===- subm_from_c.c - Call a compiled entry point from C -----------------===*\
|*                                                                            *|
|* Part of the spconv-mlir project.                                           *|
|*                                                                            *|
|* The generated header is meant for C as much as for C++: this file, built   *|
|* as C99, calls @subm through it.                                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "subm_from_c.h"

#include "net.h"

/* A contiguous row-major descriptor of rank 1 to 3 over `data`; the macro
 * works for every descriptor struct since they share their field names. */
#define DESCRIBE(desc, data, rank, ...)                                        \
  do {                                                                         \
    const int64_t shape[] = {__VA_ARGS__};                                     \
    int64_t stride = 1;                                                        \
    (desc).allocated = (desc).aligned = (data);                                \
    (desc).offset = 0;                                                         \
    for (int d = (rank)-1; d >= 0; --d) {                                      \
      (desc).sizes[d] = shape[d];                                              \
      (desc).strides[d] = stride;                                              \
      stride *= shape[d];                                                      \
    }                                                                          \
  } while (0)

const char *subm_from_c(int64_t n, int32_t *coords, float *features,
                        float *weight, float *bias,
                        spconv_memref_2d_f32 *result) {
  spconv_memref_2d_i32 c;
  spconv_memref_2d_f32 f;
  spconv_memref_3d_f32 w;
  spconv_memref_1d_f32 b;
  DESCRIBE(c, coords, 2, n, 4);
  DESCRIBE(f, features, 2, n, 4);
  DESCRIBE(w, weight, 3, 27, 4, 8);
  DESCRIBE(b, bias, 1, 8);
  spconv_rt_clear_error();
  subm(result, &c, &f, &w, &b);
  return spconv_rt_last_error();
}
