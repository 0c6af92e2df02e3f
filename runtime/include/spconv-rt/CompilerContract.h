/*===- CompilerContract.h - Codes compiled code and runtime share -*- C -*-===*\
|*                                                                            *|
|* The numbers that code compiled by spconv-mlir passes to the runtime and    *|
|* the runtime interprets: the codes of the run-time size checks and the      *|
|* bound on profile entries. Plain C with no dependency, so that both sides   *|
|* include this one header: the runtime (SpConvRuntime.h includes it) and the *|
|* compiler (lib/Conversion/SpConvToSCF/Utils/Checks.h, lib/Transforms/       *|
|* Profile.cpp), which includes only this header and HashTableLayout.h of the *|
|* runtime's; the runtime includes nothing of the compiler's. Changing a      *|
|* value changes the ABI between compiled code and the runtime.               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SPCONV_RT_COMPILERCONTRACT_H
#define SPCONV_RT_COMPILERCONTRACT_H

#include <stdint.h>

/* What spconv_rt_report_size_mismatch reports: a size known only at run
 * time that contradicts a static size in an op's types (the verifier checks
 * the sizes that are static on both sides). */
enum SpConvRtSizeCheck {
  /* spconv.sort_unique: unique keys vs the static size of unique/first. */
  SPCONV_RT_SIZE_SORT_UNIQUE_COUNT = 0,
  /* spconv.sort_unique: keys vs the static size of the inverse map. */
  SPCONV_RT_SIZE_SORT_UNIQUE_INVERSE = 1,
  /* spconv.linearize: coordinate rows vs the static number of keys. */
  SPCONV_RT_SIZE_LINEARIZE_KEYS = 2,
  /* spconv.delinearize: keys vs the static number of coordinate rows. */
  SPCONV_RT_SIZE_DELINEARIZE_ROWS = 3,
  /* spconv.hash_lookup: queries vs the static size of the result. */
  SPCONV_RT_SIZE_HASH_LOOKUP_ROWS = 4,
  /* spconv.gather_rows: row indices vs the static rows of the result. */
  SPCONV_RT_SIZE_GATHER_ROWS = 5,
  /* spconv.gather_rows: feature channels vs the result's static channels. */
  SPCONV_RT_SIZE_GATHER_CHANNELS = 6,
  /* spconv.unfold: input batch vs the result's static batch. */
  SPCONV_RT_SIZE_UNFOLD_BATCH = 7,
  /* spconv.unfold: input channels x kernel volume vs static result rows. */
  SPCONV_RT_SIZE_UNFOLD_ROWS = 8,
  /* spconv.unfold: window positions vs the result's static columns. */
  SPCONV_RT_SIZE_UNFOLD_COLUMNS = 9,
  /* spconv.fold: input batch vs the result's static batch. */
  SPCONV_RT_SIZE_FOLD_BATCH = 10,
  /* spconv.fold: input rows vs result channels x kernel volume. */
  SPCONV_RT_SIZE_FOLD_ROWS = 11,
  /* spconv.fold: input columns vs the window positions of the output size. */
  SPCONV_RT_SIZE_FOLD_COLUMNS = 12,
  /* spconv.fold: input rows vs the kernel volume they must be a multiple of
   * (expected: the kernel volume). */
  SPCONV_RT_SIZE_FOLD_ROWS_MULTIPLE = 13,
  /* spconv.build_rulebook (regular, transposed): output sites vs the static
   * rows of its output coordinates. */
  SPCONV_RT_SIZE_OUTPUT_SITES = 14,
  /* spconv.rulebook_conv: output rows vs the static rows of its result. */
  SPCONV_RT_SIZE_CONV_ROWS = 15,
  /* spconv.rulebook_pool: output sites vs the static rows of its result. */
  SPCONV_RT_SIZE_POOL_ROWS = 16,
  /* spconv.rulebook_conv: rows of a row epilogue operand vs output rows. */
  SPCONV_RT_SIZE_EPILOGUE_ROWS = 17,
  /* spconv.rulebook_conv: extent of an epilogue operand's last dimension vs
   * output channels. */
  SPCONV_RT_SIZE_EPILOGUE_CHANNELS = 18,
  /* tensor.concat along the channels: rows of an operand vs those of the
   * operand that sized its buffer. */
  SPCONV_RT_SIZE_CONCAT_ROWS = 19,
  /* spconv.scatter_add_rows: indices vs source rows, or source channels vs
   * destination channels. */
  SPCONV_RT_SIZE_SCATTER_ROWS = 20,
  /* spconv.segment_max_grad: an extent of the positions or the destination
   * vs the matching extent of the values gradient. */
  SPCONV_RT_SIZE_SEGMENT_MAX_GRAD = 21,
  /* spconv.rulebook_pool_grad: input sites vs the static rows of its
   * result. */
  SPCONV_RT_SIZE_POOL_GRAD_ROWS = 22,
  /* spconv.rulebook_from_pairs: the first pair offset vs 0. */
  SPCONV_RT_SIZE_PAIR_OFFSETS_FIRST = 23,
  /* spconv.rulebook_from_pairs: a pair offset vs the one before it, which
   * it must not be below. */
  SPCONV_RT_SIZE_PAIR_OFFSETS_ORDER = 24,
  /* spconv.rulebook_from_pairs: the number of pairs (the last offset) vs
   * the shorter of the row tensors, which must hold them. */
  SPCONV_RT_SIZE_PAIR_ROWS = 25,
};

/* Entry ids are in [0, SPCONV_RT_PROFILE_MAX_ENTRIES). The spconv-profile
 * pass numbers the timed ops of a module 0, 1, ... and rejects a module with
 * more of them. The table grows to the largest id begun (about 40 bytes per
 * entry). */
#define SPCONV_RT_PROFILE_MAX_ENTRIES (INT64_C(1) << 20)

#endif /* SPCONV_RT_COMPILERCONTRACT_H */
