//===- Error.cpp - Status codes and the thread-local last error ----------===//
//
// One fixed-size thread-local buffer per thread: recording an error never
// allocates, so it cannot fail or throw. An allocation failure is sticky:
// the code that goes on after it (skipping work, reporting zero sites) must
// not replace "out of memory" with a consequence of it.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cstdio>
#include <cstring>

namespace {
thread_local char lastError[1024];
thread_local int lastStatus = SPCONV_RT_OK;
/// Set by the first failed allocation; cleared by spconv_rt_clear_error.
thread_local bool allocFailed = false;
thread_local bool failedBytesKnown = false;
thread_local uint64_t failedBytes = 0;
} // namespace

extern "C" {

int spconv_rt_abi_version(void) { return SPCONV_RT_ABI_VERSION; }

const char *spconv_rt_last_error(void) { return lastError; }

int spconv_rt_last_status(void) { return lastStatus; }

int32_t spconv_rt_alloc_failed(void) { return allocFailed ? 1 : 0; }

void spconv_rt_clear_error(void) {
  lastError[0] = '\0';
  lastStatus = SPCONV_RT_OK;
  allocFailed = false;
  failedBytesKnown = false;
  failedBytes = 0;
}

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
  case SPCONV_RT_ERR_EMULATION:
    return "SPCONV_RT_ERR_EMULATION";
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
      what == 0   ? "input sites"
      : what == 1 ? "output sites of the inverted convolution"
                  : "output sites");
}

namespace {
/// The op and the sentence of each SpConvRtSizeCheck: "<op>: <actual>
/// <middle> <expected>".
struct SizeCheckText {
  const char *op, *middle;
};
SizeCheckText sizeCheckText(int64_t what) {
  switch (what) {
  case SPCONV_RT_SIZE_SORT_UNIQUE_COUNT:
    return {"spconv.sort_unique",
            "unique keys, but its unique and first results have the static "
            "size"};
  case SPCONV_RT_SIZE_SORT_UNIQUE_INVERSE:
    return {"spconv.sort_unique",
            "keys, but its inverse result has the static size"};
  case SPCONV_RT_SIZE_LINEARIZE_KEYS:
    return {"spconv.linearize",
            "coordinate rows, but its keys have the static size"};
  case SPCONV_RT_SIZE_DELINEARIZE_ROWS:
    return {"spconv.delinearize",
            "keys, but its coordinates have the static number of rows"};
  case SPCONV_RT_SIZE_HASH_LOOKUP_ROWS:
    return {"spconv.hash_lookup",
            "queries, but its result has the static size"};
  case SPCONV_RT_SIZE_GATHER_ROWS:
    return {"spconv.gather_rows",
            "row indices, but its result has the static number of rows"};
  case SPCONV_RT_SIZE_GATHER_CHANNELS:
    return {"spconv.gather_rows",
            "feature channels, but its result has the static number of "
            "channels"};
  case SPCONV_RT_SIZE_UNFOLD_BATCH:
    return {"spconv.unfold",
            "input batch rows, but its result has the static batch"};
  case SPCONV_RT_SIZE_UNFOLD_ROWS:
    return {"spconv.unfold",
            "input channels x kernel volume, but its result has the static "
            "number of rows"};
  case SPCONV_RT_SIZE_UNFOLD_COLUMNS:
    return {"spconv.unfold",
            "window positions, but its result has the static number of "
            "columns"};
  case SPCONV_RT_SIZE_FOLD_BATCH:
    return {"spconv.fold",
            "input batch rows, but its result has the static batch"};
  case SPCONV_RT_SIZE_FOLD_ROWS:
    return {"spconv.fold",
            "input rows, but the result's channels x kernel volume is"};
  case SPCONV_RT_SIZE_FOLD_COLUMNS:
    return {"spconv.fold", "input columns, but the output size has the "
                           "number of window positions"};
  case SPCONV_RT_SIZE_FOLD_ROWS_MULTIPLE:
    return {"spconv.fold", "input rows, not a multiple of the kernel volume"};
  case SPCONV_RT_SIZE_OUTPUT_SITES:
    return {"spconv.build_rulebook",
            "output sites, but its output coordinates have the static number "
            "of rows"};
  case SPCONV_RT_SIZE_CONV_ROWS:
    return {"spconv.rulebook_conv",
            "output rows, but its result has the static number of rows"};
  case SPCONV_RT_SIZE_POOL_ROWS:
    return {"spconv.rulebook_pool",
            "output sites, but its result has the static number of rows"};
  case SPCONV_RT_SIZE_EPILOGUE_ROWS:
    return {"spconv.rulebook_conv",
            "rows in an epilogue operand, but its result has output rows:"};
  case SPCONV_RT_SIZE_EPILOGUE_CHANNELS:
    return {"spconv.rulebook_conv",
            "channels in an epilogue operand, but its result has output "
            "channels:"};
  case SPCONV_RT_SIZE_CONCAT_ROWS:
    return {"tensor.concat", "rows in an operand, but another operand has"};
  case SPCONV_RT_SIZE_SCATTER_ROWS:
    return {"spconv.scatter_add_rows",
            "indices (or destination channels), but its source has"};
  case SPCONV_RT_SIZE_SEGMENT_MAX_GRAD:
    return {"spconv.segment_max_grad",
            "in an extent of the positions or the destination, but the values "
            "gradient has"};
  case SPCONV_RT_SIZE_POOL_GRAD_ROWS:
    return {"spconv.rulebook_pool_grad",
            "input sites, but its result has the static number of rows"};
  case SPCONV_RT_SIZE_PAIR_OFFSETS_FIRST:
    return {"spconv.rulebook_from_pairs",
            "is the first pair offset; it must be"};
  case SPCONV_RT_SIZE_PAIR_OFFSETS_ORDER:
    return {"spconv.rulebook_from_pairs",
            "is a pair offset below the one before it,"};
  case SPCONV_RT_SIZE_PAIR_ROWS:
    return {"spconv.rulebook_from_pairs",
            "pairs, but the shorter row tensor holds"};
  default:
    return {nullptr, nullptr};
  }
}

/// " at line N", or "" for line 0 (unknown).
void formatLine(char (&text)[32], int64_t line) {
  text[0] = '\0';
  if (line > 0)
    std::snprintf(text, sizeof(text), " at line %lld",
                  static_cast<long long>(line));
}
} // namespace

int spconv_rt_report_size_mismatch(int64_t what, int64_t actual,
                                   int64_t expected, int64_t line) {
  SizeCheckText text = sizeCheckText(what);
  if (!text.op)
    return spconv::rt::setError(
        SPCONV_RT_ERR_INVALID_ARGUMENT,
        "spconv_rt_report_size_mismatch: unknown size check %lld (%lld "
        "against %lld)",
        static_cast<long long>(what), static_cast<long long>(actual),
        static_cast<long long>(expected));
  char at[32];
  formatLine(at, line);
  return spconv::rt::setError(SPCONV_RT_ERR_INVALID_ARGUMENT,
                              "%s%s: %lld %s %lld", text.op, at,
                              static_cast<long long>(actual), text.middle,
                              static_cast<long long>(expected));
}

int spconv_rt_report_empty_window(int64_t dim, int64_t extent, int64_t padding,
                                  int64_t kernelExtent, int64_t line) {
  char at[32];
  formatLine(at, line);
  return spconv::rt::setError(
      SPCONV_RT_ERR_INVALID_ARGUMENT,
      "spconv.unfold%s: the window does not fit in spatial dimension %lld: "
      "input extent %lld + 2 * padding %lld is smaller than the dilated "
      "kernel extent %lld",
      at, static_cast<long long>(dim), static_cast<long long>(extent),
      static_cast<long long>(padding), static_cast<long long>(kernelExtent));
}

int spconv_rt_internal_set_error(int status, const char *message) {
  if (allocFailed)
    return status;
  std::snprintf(lastError, sizeof(lastError), "%s", message ? message : "");
  lastStatus = status;
  return status;
}

int spconv_rt_internal_set_alloc_failure(int hasBytes, uint64_t bytes,
                                         const char *message) {
  if (allocFailed)
    return SPCONV_RT_ERR_OUT_OF_MEMORY;
  allocFailed = true;
  failedBytesKnown = hasBytes != 0;
  failedBytes = hasBytes ? bytes : 0;
  std::snprintf(lastError, sizeof(lastError), "%s", message ? message : "");
  lastStatus = SPCONV_RT_ERR_OUT_OF_MEMORY;
  return SPCONV_RT_ERR_OUT_OF_MEMORY;
}

} // extern "C"

int spconv::rt::reportAllocFailure(const char *what, int64_t length,
                                   int64_t line) {
  char size[80] = "";
  if (allocFailed && failedBytesKnown)
    std::snprintf(size, sizeof(size), ": %s",
                  spconv::rt::HumanBytes(failedBytes).c_str());
  char at[32];
  formatLine(at, line);
  if (!what || length < 0)
    length = 0;
  // Room for the rest of the message; a longer description is cut.
  if (length > 512)
    length = 512;
  std::snprintf(lastError, sizeof(lastError), "out of memory%s%s%.*s%s", size,
                length ? " for " : "", static_cast<int>(length),
                what ? what : "", at);
  lastStatus = SPCONV_RT_ERR_OUT_OF_MEMORY;
  return SPCONV_RT_ERR_OUT_OF_MEMORY;
}
