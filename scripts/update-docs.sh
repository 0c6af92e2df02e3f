#!/usr/bin/env bash
# Regenerates the dialect and pass references from TableGen into docs/generated/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" mlir-doc
cp "$build"/docs/SpConv/*.md "$root/docs/generated/"
