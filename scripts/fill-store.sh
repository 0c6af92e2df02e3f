#!/usr/bin/env bash
# Fills the kernel store ahead of time (docs/Compiler.md, "Filling the store
# ahead of time"): compiles each network's kernels and module with
# `spconv-run --compile-only`, so that a later run of any network made of
# these layers (same geometry, grid, channels and element type) compiles
# only what is new. With no network named, the example networks: SECOND's
# middle encoder, MinkUNet and MinkUNet's training step (KITTI-sized grids).
#
#   scripts/fill-store.sh                        # the examples, default store
#   scripts/fill-store.sh --cache-dir DIR        # another store
#   scripts/fill-store.sh net.mlir:forward ...   # these networks (FILE:ENTRY)
#
# Other options go to spconv-run (--mcpu, --chunk-bytes, ...: code compiled
# for other options is other kernels). The store is $SPCONV_MLIR_CACHE_DIR,
# else ~/.cache/spconv-mlir, as for every tool.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}
run="$build/bin/spconv-run"
if [[ ! -x "$run" ]]; then
  echo "fill-store: error: $run not found; build first (scripts/build.sh)" >&2
  exit 1
fi
networks=()
options=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cache-dir) [[ $# -ge 2 ]] || { echo "fill-store: error: --cache-dir needs a folder" >&2; exit 2; }
                 options+=("$1" "$2"); shift 2 ;;
    -*) options+=("$1"); shift ;;
    *:*) networks+=("$1"); shift ;;
    *) echo "fill-store: error: '$1' is not FILE.mlir:ENTRY" >&2; exit 2 ;;
  esac
done
if [[ ${#networks[@]} -eq 0 ]]; then
  networks=("$root/examples/second_middle_encoder.mlir:second_middle_encoder"
            "$root/examples/minkunet.mlir:minkunet"
            "$root/examples/minkunet_train.mlir:minkunet_loss_and_gradients")
fi
for network in "${networks[@]}"; do
  file=${network%:*}
  entry=${network##*:}
  echo "fill-store: $file @$entry"
  if ! out=$("$run" "$file" --entry "$entry" --compile-only --time \
               ${options[@]+"${options[@]}"} 2>&1); then
    echo "$out" >&2
    echo "fill-store: error: $network did not compile" >&2
    exit 1
  fi
  grep -E "^spconv-run: (kernels [0-9]+ compiled|load|warning)" <<<"$out" || true
done
