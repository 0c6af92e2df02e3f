#!/usr/bin/env bash
# The project as an outside consumer meets it (docs/Embedding.md): installs
# the build into a temporary prefix, then configures, builds and runs
# examples/consumer against it with find_package(SpConv): its own opt tool,
# a C program on the C API, a C program linking a network compiled ahead of
# time by the installed spconv-compile against the installed runtime, and
# Debian's mlir-opt with the installed plugin; the installed Python package
# compiles and runs a network with them. Then configures the consumer
# with spconv-mlir through add_subdirectory (configuration only: building the
# compiler a second time would double the suite's time) and checks that it
# brings the SpConv:: targets and none of the project's tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}
jobs=${SPCONV_JOBS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -G Ninja -S "$root/examples/consumer" -B "$work/consumer" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  > "$work/configure.log"
ninja -C "$work/consumer" -j "$jobs" > "$work/build.log" \
  || { cat "$work/build.log"; exit 1; }
ctest --test-dir "$work/consumer" --output-on-failure

# The installed Python package finds the installed compiler and runtime by
# itself (its _install.py), with nothing on PATH or in SPCONV_MLIR_PREFIX.
if [[ -x "$work/prefix/bin/spconv-compile" ]]; then
  env -u SPCONV_MLIR_PREFIX PATH=/usr/bin:/bin SPCONV_MLIR_CACHE_DIR="$work/pycache" \
    PYTHONPATH="$work/prefix/lib/python3/site-packages" \
    /usr/bin/python3 "$root/test/Python/installed_package.py" "$work/prefix"
fi

cmake -G Ninja -S "$root/examples/consumer" -B "$work/subdir" \
  -DCMAKE_BUILD_TYPE=Release -DSPCONV_SOURCE_DIR="$root" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir > "$work/subdir.log" \
  || { cat "$work/subdir.log"; exit 1; }
targets=$(ninja -C "$work/subdir" -t targets all)
for wanted in consumer-opt consumer-capi consumer-aot spconv-opt SpConvPlugin; do
  grep -q "^$wanted:" <<< "$targets" \
    || { echo "add_subdirectory: no target $wanted"; exit 1; }
done
for unwanted in check-spconv spconv-api-tests spconv-runtime-tests \
    spconv-aot-example spconv-v1-cpu; do
  if grep -q "^$unwanted:" <<< "$targets"; then
    echo "add_subdirectory: brought the project's own $unwanted"; exit 1
  fi
done
echo "consumer: find_package and add_subdirectory both work"
