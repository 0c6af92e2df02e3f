#!/usr/bin/env bash
# Builds spconv-mlir and runs every test: the lit suite (dialect, passes,
# examples, execution, the Python front end), a bounded slice of the fuzzer
# (test/Fuzz), the C++ unit tests (ctest), an outside project built against
# the installed package (scripts/test-consumer.sh), the Python package
# pip-installed and against spconv 2.x (scripts/test-python.sh), the
# runtime under AddressSanitizer + UndefinedBehaviorSanitizer and a slice of
# the lit suite against the compiler built with both.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}

"$root/scripts/build.sh"

# Best effort: spconv 2.x and torch, for the Python front end's tests.
echo "== Python test dependencies: spconv 2.x, torch (scripts/test-python.sh --install)"
"$root/scripts/test-python.sh" --install

# Best effort: numpy 2, for the GPU kit's driver (gpu-kit-numpy2.test).
echo "== numpy 2 for the GPU kit's driver (into $build/venv-numpy2)"
if [[ ! -x "$build/venv-numpy2/bin/python" ]]; then
  if ! { /usr/bin/python3 -m venv "$build/venv-numpy2" &&
         "$build/venv-numpy2/bin/pip" install -q "numpy>=2"; } > "$build/venv-numpy2.log" 2>&1; then
    echo "SKIP: no numpy 2 from PyPI (see $build/venv-numpy2.log); gpu-kit-numpy2.test will not run"
    rm -rf "$build/venv-numpy2"
  fi
fi

# Best effort: nvdisasm, for the machine-code report (sass-report.test).
echo "== nvdisasm for scripts/sass-report.py (scripts/install-sass-tools.sh)"
if ! "$root/scripts/install-sass-tools.sh" > "$build/venv-sass.log" 2>&1; then
  echo "SKIP: no nvdisasm from PyPI (see $build/venv-sass.log); sass-report.test will not run"
fi

echo "== lit: ninja check-spconv"
ninja -C "$build" check-spconv

# The CI slice of the fuzzer (docs/Fuzzing.md): a fixed number of mutants, so
# the result depends on the seed only, never on the machine's load.
echo "== fuzz: test/Fuzz/fuzz.py, CI slice"
rm -rf "$build/fuzz-findings"
/usr/bin/python3 "$root/test/Fuzz/fuzz.py" --spconv-opt "$build/bin/spconv-opt" \
  --seed 11 --runs "${SPCONV_FUZZ_RUNS:-500}" --jobs 2 --timeout 60 --minimise-time 30 \
  --out "$build/fuzz-findings" --quiet

echo "== ctest: C++ unit tests"
ctest --test-dir "$build" --output-on-failure -j 2

echo "== consumer: install, then build examples/consumer against the package"
"$root/scripts/test-consumer.sh"

echo "== Python front end: pip install ./python, and against spconv 2.x"
"$root/scripts/test-python.sh"

if [[ -x "$root/scripts/test-runtime-sanitizers.sh" ]]; then
  echo "== runtime under ASan + UBSan"
  "$root/scripts/test-runtime-sanitizers.sh" "$build-asan"
fi
# The compiler itself under ASan + UBSan (scripts/test-sanitizers.sh, in
# build-sanitize/): by default a slice, about 9 minutes from scratch (its
# build makes every tool the lit suite calls, so the full run cannot rot);
# SPCONV_SANITIZE=full runs the whole lit suite instead (about 25 minutes),
# SPCONV_SANITIZE=off only checks that the configuration builds every tool.
case "${SPCONV_SANITIZE:-slice}" in
  slice)
    echo "== the compiler under ASan + UBSan: a slice (scripts/test-sanitizers.sh --slice)"
    "$root/scripts/test-sanitizers.sh" --slice ;;
  full | 1)
    echo "== the compiler under ASan + UBSan: the lit suite (SPCONV_SANITIZE=full)"
    "$root/scripts/test-sanitizers.sh" ;;
  off | 0)
    echo "== the compiler's sanitizer configuration (SPCONV_SANITIZE=off: --configure-only)"
    "$root/scripts/test-sanitizers.sh" --configure-only ;;
  *)
    echo "scripts/test.sh: SPCONV_SANITIZE must be slice, full or off, got '$SPCONV_SANITIZE'" >&2
    exit 2 ;;
esac
echo "All tests passed."
