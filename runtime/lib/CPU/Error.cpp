//===- Error.cpp - Status codes and the thread-local last error ----------===//
//
// One fixed-size thread-local buffer per thread: recording an error never
// allocates, so it cannot fail or throw.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cstdio>
#include <cstring>

namespace {
thread_local char lastError[1024];
} // namespace

extern "C" {

const char *spconv_rt_last_error(void) { return lastError; }

void spconv_rt_clear_error(void) { lastError[0] = '\0'; }

const char *spconv_rt_status_name(int status) {
  switch (status) {
  case SPCONV_RT_OK:
    return "SPCONV_RT_OK";
  case SPCONV_RT_ERR_INVALID_ARGUMENT:
    return "SPCONV_RT_ERR_INVALID_ARGUMENT";
  case SPCONV_RT_ERR_OUT_OF_RANGE:
    return "SPCONV_RT_ERR_OUT_OF_RANGE";
  case SPCONV_RT_ERR_OVERFLOW:
    return "SPCONV_RT_ERR_OVERFLOW";
  case SPCONV_RT_ERR_DUPLICATE_KEY:
    return "SPCONV_RT_ERR_DUPLICATE_KEY";
  case SPCONV_RT_ERR_CAPACITY:
    return "SPCONV_RT_ERR_CAPACITY";
  case SPCONV_RT_ERR_OUT_OF_MEMORY:
    return "SPCONV_RT_ERR_OUT_OF_MEMORY";
  case SPCONV_RT_ERR_UNSUPPORTED:
    return "SPCONV_RT_ERR_UNSUPPORTED";
  case SPCONV_RT_ERR_CUDA:
    return "SPCONV_RT_ERR_CUDA";
  default:
    return "SPCONV_RT_ERR_UNKNOWN";
  }
}

int spconv_rt_report_bad_index(int64_t position, int64_t value, int64_t bound) {
  return spconv::rt::setError(
      SPCONV_RT_ERR_OUT_OF_RANGE,
      "index %lld at position %lld is outside [0, %lld)",
      static_cast<long long>(value), static_cast<long long>(position),
      static_cast<long long>(bound));
}

int spconv_rt_report_row_mismatch(int64_t rows, int64_t expected,
                                  int64_t what) {
  return spconv::rt::setError(
      SPCONV_RT_ERR_INVALID_ARGUMENT,
      "features have %lld rows but there are %lld %s",
      static_cast<long long>(rows), static_cast<long long>(expected),
      what == 0 ? "input sites" : "output sites of the inverted convolution");
}

int spconv_rt_internal_set_error(int status, const char *message) {
  std::snprintf(lastError, sizeof(lastError), "%s", message ? message : "");
  return status;
}

} // extern "C"
