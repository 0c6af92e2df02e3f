#!/usr/bin/env bash
# Configures (once) and builds spconv-mlir into ${SPCONV_BUILD_DIR:-build}.
# Extra arguments are ninja targets (default: everything).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}
jobs=${SPCONV_JOBS:-2}

"$root/scripts/install-deps.sh"

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
ninja -C "$build" -j "$jobs" "$@"
