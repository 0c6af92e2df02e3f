#!/usr/bin/env bash
# Builds spconv-mlir and runs every test: the lit suite (dialect, passes,
# examples, execution, the Python front end), a bounded slice of the fuzzer
# (test/Fuzz), the C++ unit tests (ctest), an outside project built against
# the installed package (scripts/test-consumer.sh), the Python package
# pip-installed and against spconv 2.x (scripts/test-python.sh) and the
# runtime under AddressSanitizer + UndefinedBehaviorSanitizer.
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
# The compiler's sanitizer run below is opt-in (too slow for every run); this
# keeps it from rotting: its configuration must build every tool lit calls.
echo "== the compiler's sanitizer configuration (scripts/test-sanitizers.sh --configure-only)"
"$root/scripts/test-sanitizers.sh" --configure-only
# Opt-in (about 28 minutes here): the lit suite against an ASan + UBSan build
# of the compiler itself, in build-sanitize/.
if [[ "${SPCONV_SANITIZE:-0}" == 1 ]]; then
  echo "== the compiler under ASan + UBSan (SPCONV_SANITIZE=1)"
  "$root/scripts/test-sanitizers.sh"
fi
echo "All tests passed."
