#!/usr/bin/env bash
#===- test-runtime-sanitizers.sh - Runtime tests under ASan + UBSan -------===#
#
# Configures runtime/ standalone with SPCONV_RUNTIME_SANITIZE=ON (CPU only),
# builds it and runs its tests. Usage: scripts/test-runtime-sanitizers.sh
# [build-dir] (default: build-asan). Exits non-zero on any failure.
#
# The "10 million keys" tests run with 300k keys here (compile-time default of
# the sanitizer build; SPCONV_RT_TEST_LARGE_N overrides it).
#
#===----------------------------------------------------------------------===#

set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${root}/build-asan}"
jobs="${SPCONV_RT_BUILD_JOBS:-2}"

generator=()
if command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi

cmake -S "${root}/runtime" -B "${build}" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSPCONV_RUNTIME_SANITIZE=ON \
  -DSPCONV_RUNTIME_BUILD_BENCHMARKS=OFF
cmake --build "${build}" -j "${jobs}"

# halt_on_error: any report fails the run; leaks are real errors too.
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
cd "${build}"
ctest --output-on-failure -j "${jobs}"
