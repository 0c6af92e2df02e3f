#!/usr/bin/env bash
# The demo: compiles the example networks through spconv-opt. Every layer's
# output grid and weight shape is verified against its geometry, then the
# canonicalizer rewrites what is plainly simpler (pointwise subm convs become
# matmuls, subm layers read their producer's coordinates).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}

"$root/scripts/build.sh" spconv-opt
opt="$build/bin/spconv-opt"

mkdir -p "$build/demo"
for example in second_middle_encoder minkunet; do
  file="$root/examples/$example.mlir"
  out="$build/demo/$example.canonical.mlir"
  "$opt" "$file" -canonicalize -cse -o "$out"
  echo "== $example: verified; canonical IR in ${out#$root/}"
  # One line per layer: the op, its geometry and the grid it produces.
  grep -E 'spconv\.[a-z_]+ |linalg\.matmul' "$out" |
    sed -E 's/.*(spconv\.[a-z_]+) ((max|avg) )?(<[^>]*>).*/  \1 \3\4/;
            s/.*linalg\.matmul.*/  linalg.matmul (a pointwise subm conv)/'
done
