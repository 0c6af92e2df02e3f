#!/usr/bin/env bash
#===- test-sanitizers.sh - The compiler under ASan + UBSan ----------------===#
#
# Builds the whole project (lib/, spconv-opt, spconv-run, spconv-compile, the
# runtime, the reference) with -DSPCONV_ENABLE_SANITIZERS=ON into
# ${SPCONV_SANITIZE_BUILD_DIR:-build-sanitize} and runs the lit suite against
# it. Any AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer report
# in a tool fails the test that ran it. libMLIR.so and the JIT-compiled code
# are not instrumented. scripts/test.sh runs its --slice (the whole suite is
# too slow for every run): see the README.
#
# Usage: scripts/test-sanitizers.sh [lit arguments...]
#   (default: the whole suite; e.g. `scripts/test-sanitizers.sh -v
#    build-sanitize/test/Dialect` runs one directory)
#        scripts/test-sanitizers.sh --slice
#   (what scripts/test.sh runs, about 9 minutes from scratch here: builds
#    every tool the lit suite calls, so that the full run cannot rot, and
#    runs the tests that exercise the most code: the CPU execution matrix,
#    both example networks, the allocation-failure sweeps, the error paths,
#    the fuzzer's corpus, then the fuzzer's CI slice of mutants)
#        scripts/test-sanitizers.sh --configure-only
#   (configures the build and checks, without building, that it makes every
#    tool the lit suite calls)
# SPCONV_JOBS: ninja jobs (default 2).
#
#===----------------------------------------------------------------------===#

set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${SPCONV_JOBS:-2}

configure_only=0
slice=0
if [[ "${1:-}" == --configure-only ]]; then
  configure_only=1
  shift
else
  if [[ "${1:-}" == --slice ]]; then
    slice=1
    shift
  fi
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

# The slice: about 2 minutes of lit (each test under 70 s with ASan),
# chosen for the code they run: every conv geometry and element type on the
# CPU, both networks on the CPU and (in the sweeps) the emulator, every
# allocation failing in turn (the leak checker sees what a failed call
# leaves), the run-time error paths, and the fuzzer's seeds.
slice_tests=(
  Integration/CPU/conv-matrix-0.test
  Integration/CPU/conv-matrix-1.test
  Integration/CPU/second-network.test
  Integration/CPU/minkunet-network.test
  Integration/CPU/allocation-failures.test
  Integration/CPU/errors.mlir
  Integration/CPU/bad-indices.mlir
  Fuzz/corpus.test
)
if [[ $slice == 1 ]]; then
  set -- "${slice_tests[@]/#/$build/test/}"
elif [[ $# -eq 0 ]]; then
  set -- "$build/test"
fi
status=0
/usr/lib/llvm-22/bin/lit -sv --time-tests -j "$jobs" "$@" || status=$?
echo "== sanitizer lit $([[ $slice == 1 ]] && echo slice || echo suite):" \
  "$(($(date +%s) - built)) s (total $(($(date +%s) - start)) s)"
if [[ $slice == 1 ]]; then
  # The CI slice's mutants (the same seed as scripts/test.sh's), now through
  # the instrumented spconv-opt: a memory error the plain build survives is
  # a crash here. No address-space limit: ASan reserves its shadow memory.
  fuzz_start=$(date +%s)
  rm -rf "$build/fuzz-findings"
  /usr/bin/python3 "$root/test/Fuzz/fuzz.py" --spconv-opt "$build/bin/spconv-opt" \
    --mem-limit 0 --seed 11 --runs "${SPCONV_SANITIZE_FUZZ_RUNS:-300}" --jobs "$jobs" \
    --timeout 120 --minimise-time 60 --out "$build/fuzz-findings" --quiet || status=$?
  echo "== sanitizer fuzz slice: $(($(date +%s) - fuzz_start)) s"
fi
if compgen -G "$logs/report*" >/dev/null; then
  echo "== sanitizer reports (in $logs):"
  for f in "$logs"/report*; do echo "--- $f"; cat "$f"; done
  status=1
fi
exit "$status"
