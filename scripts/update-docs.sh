#!/usr/bin/env bash
# Regenerates the dialect reference from TableGen and copies it into docs/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" mlir-doc
cp "$build/docs/SpConv/SpConvDialect.md" "$root/docs/generated/SpConvDialect.md"
