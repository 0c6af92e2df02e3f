/* consumer-aot: calls net.mlir's @net, compiled ahead of time by
 * spconv-compile, and checks it against the definition of a subm conv:
 * out[o] = bias + sum over offsets j = (a, b, c) in [0, 3)^3 of
 * in[o + j - 1] @ weight[9a + 3b + c], over the sites o + j - 1 that exist. */
#include "net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kSites = 6, kIn = 2, kOut = 3, kOffsets = 27 };

static const int32_t kCoords[kSites][4] = {
    {0, 0, 0, 0}, {0, 0, 0, 1}, {0, 1, 1, 1},
    {0, 3, 3, 3}, {1, 0, 0, 0}, {1, 1, 0, 0}};

static int findSite(const int32_t site[4]) {
  for (int i = 0; i < kSites; ++i)
    if (memcmp(kCoords[i], site, sizeof(int32_t) * 4) == 0)
      return i;
  return -1;
}

int main(void) {
  float features[kSites * kIn], weight[kOffsets * kIn * kOut], bias[kOut];
  for (int i = 0; i < kSites * kIn; ++i)
    features[i] = (float)(i % 5) - 2.0f;
  for (int i = 0; i < kOffsets * kIn * kOut; ++i)
    weight[i] = (float)(i % 7) / 4.0f - 0.75f;
  for (int i = 0; i < kOut; ++i)
    bias[i] = 0.5f * (float)i;

  spconv_memref_2d_i32 coords = {(int32_t *)kCoords, (int32_t *)kCoords, 0,
                                 {kSites, 4}, {4, 1}};
  spconv_memref_2d_f32 in = {features, features, 0, {kSites, kIn}, {kIn, 1}};
  spconv_memref_3d_f32 w = {weight, weight, 0, {kOffsets, kIn, kOut},
                            {kIn * kOut, kOut, 1}};
  spconv_memref_1d_f32 b = {bias, bias, 0, {kOut}, {1}};
  spconv_memref_2d_f32 out;
  spconv_rt_clear_error();
  net(&out, &coords, &in, &w, &b);
  if (spconv_rt_last_error()[0] != '\0') {
    fprintf(stderr, "net failed: %s\n", spconv_rt_last_error());
    return 1;
  }
  if (out.sizes[0] != kSites || out.sizes[1] != kOut) {
    fprintf(stderr, "net returned %lld x %lld\n", (long long)out.sizes[0],
            (long long)out.sizes[1]);
    return 1;
  }

  int failures = 0;
  for (int o = 0; o < kSites; ++o) {
    for (int c = 0; c < kOut; ++c) {
      float expected = bias[c];
      for (int j = 0; j < kOffsets; ++j) {
        int32_t site[4] = {kCoords[o][0], kCoords[o][1] + j / 9 - 1,
                           kCoords[o][2] + j / 3 % 3 - 1,
                           kCoords[o][3] + j % 3 - 1};
        int x = findSite(site);
        for (int k = 0; x >= 0 && k < kIn; ++k)
          expected += features[x * kIn + k] * weight[(j * kIn + k) * kOut + c];
      }
      float actual =
          out.aligned[out.offset + o * out.strides[0] + c * out.strides[1]];
      if (fabsf(actual - expected) > 1e-4f) {
        fprintf(stderr, "out[%d][%d] = %g, expected %g\n", o, c, actual,
                expected);
        ++failures;
      }
    }
  }
  free(out.allocated);
  printf("consumer-aot: %d sites, runtime ABI %d, %s\n", kSites,
         spconv_rt_abi_version(), failures ? "MISMATCH" : "ok");
  return failures != 0;
}
