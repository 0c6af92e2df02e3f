#!/usr/bin/env bash
# Builds spconv-mlir and runs every test: the lit suite (dialect, passes,
# examples, execution), the C++ unit tests (ctest) and the runtime under
# AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}

"$root/scripts/build.sh"

echo "== lit: ninja check-spconv"
ninja -C "$build" check-spconv

echo "== ctest: C++ unit tests"
ctest --test-dir "$build" --output-on-failure -j 2

if [[ -x "$root/scripts/test-runtime-sanitizers.sh" ]]; then
  echo "== runtime under ASan + UBSan"
  "$root/scripts/test-runtime-sanitizers.sh" "$build-asan"
fi
# Opt-in (about 28 minutes here): the lit suite against an ASan + UBSan build
# of the compiler itself, in build-sanitize/.
if [[ "${SPCONV_SANITIZE:-0}" == 1 ]]; then
  echo "== the compiler under ASan + UBSan (SPCONV_SANITIZE=1)"
  "$root/scripts/test-sanitizers.sh"
fi
echo "All tests passed."
