/*===- subm_from_c.h - Call a compiled entry point from C -----------*- C -*-===*\
|*                                                                            *|
|* Part of the spconv-mlir project.                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SPCONV_EXAMPLES_AOT_SUBM_FROM_C_H
#define SPCONV_EXAMPLES_AOT_SUBM_FROM_C_H

#include "net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs @subm on n sites (coords n x 4, features n x 4, weight 27 x 4 x 8,
 * bias 8); returns the runtime's error message, "" on success. The result
 * is the caller's to free either way. */
const char *subm_from_c(int64_t n, int32_t *coords, float *features,
                        float *weight, float *bias,
                        spconv_memref_2d_f32 *result);

#ifdef __cplusplus
}
#endif

#endif /* SPCONV_EXAMPLES_AOT_SUBM_FROM_C_H */
