#!/usr/bin/env bash
#===- test-sanitizers.sh - The compiler under ASan + UBSan ----------------===#
#
# Builds the whole project (lib/, spconv-opt, spconv-run, spconv-compile, the
# runtime, the reference) with -DSPCONV_ENABLE_SANITIZERS=ON into
# ${SPCONV_SANITIZE_BUILD_DIR:-build-sanitize} and runs the lit suite against
# it. Any AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer report
# in a tool fails the test that ran it. libMLIR.so and the JIT-compiled code
# are not instrumented. Opt-in (too slow for every run): see README, "Tests".
#
# Usage: scripts/test-sanitizers.sh [lit arguments...]
#   (default: the whole suite; e.g. `scripts/test-sanitizers.sh -v
#    build-sanitize/test/Dialect` runs one directory)
#        scripts/test-sanitizers.sh --configure-only
#   (configures the build and checks, without building, that it makes every
#    tool the lit suite calls: what scripts/test.sh runs, so that the
#    opt-in run cannot rot unnoticed)
# SPCONV_JOBS: ninja jobs (default 2).
#
#===----------------------------------------------------------------------===#

set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${SPCONV_JOBS:-2}

configure_only=0
if [[ "${1:-}" == --configure-only ]]; then
  configure_only=1
  shift
else
  "$root/scripts/install-deps.sh"
fi

start=$(date +%s)
if [[ ! -f "$build/build.ninja" || $configure_only == 1 ]]; then
  # -O1 -g1: quicker to build than -O3 with usable stacks; NDEBUG as libMLIR.so
  # was built (MLIR's headers must agree with the library).
  mkdir -p "$build"
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
    -DSPCONV_ENABLE_SANITIZERS=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit > "$build/configure.log" ||
    { cat "$build/configure.log"; exit 1; }
fi
# allow_user_poisoning=0: LLVM's headers poison the free part of a
# BumpPtrAllocator slab when compiled with ASan, and the uninstrumented
# libMLIR.so then allocates from the same slab without unpoisoning it: a false
# use-after-poison in the first attribute uniqued by MLIR. Needed for the build
# too: it runs spconv-compile (examples/aot).
export ASAN_OPTIONS=allow_user_poisoning=0
# What the lit suite runs (test/CMakeLists.txt: every tool, the C API test,
# the plugin, the docs), not the benchmark baselines.
if [[ $configure_only == 1 ]]; then
  ninja -C "$build" -n spconv-test-depends > /dev/null
  echo "== sanitizer configuration in $build: builds every tool the lit suite calls"
  exit 0
fi
ninja -C "$build" -j "$jobs" spconv-test-depends
built=$(date +%s)
echo "== sanitizer build: $((built - start)) s"

# Tools run by lit, and by the Python scripts that lit runs, inherit these (lit
# passes ASAN_OPTIONS, LSAN_OPTIONS and UBSAN_OPTIONS through). A test that
# expects a tool to fail (`not spconv-opt ...`) must not pass because the tool
# died of a sanitizer report instead: abort_on_error=1 makes every report a
# crash (SIGABRT), which `not` does not accept (the Python drivers fail on any
# non-zero status), and ASan and LSan reports also go to a file under $logs,
# any of which fails the run. (gcc 12's UBSan runtime ignores log_path: its
# reports go to stderr only, and the abort is what fails the test.)
# Leaks are errors; the suppressions name upstream frames only.
logs="$build/sanitizer-logs"
rm -rf "$logs" && mkdir -p "$logs"
common="halt_on_error=1:abort_on_error=1:log_path=$logs/report"
export ASAN_OPTIONS="${SPCONV_ASAN_OPTIONS:-$common:allow_user_poisoning=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/scripts/sanitizers/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-$common:print_stacktrace=1}"
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}

if [[ $# -eq 0 ]]; then
  set -- "$build/test"
fi
status=0
/usr/lib/llvm-22/bin/lit -sv --time-tests -j "$jobs" "$@" || status=$?
echo "== sanitizer lit suite: $(($(date +%s) - built)) s (total $(($(date +%s) - start)) s)"
if compgen -G "$logs/report*" >/dev/null; then
  echo "== sanitizer reports (in $logs):"
  for f in "$logs"/report*; do echo "--- $f"; cat "$f"; done
  status=1
fi
exit "$status"
