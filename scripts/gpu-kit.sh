#!/usr/bin/env bash
# Builds the GPU kit into ${SPCONV_GPU_KIT_DIR:-build/gpu-kit} (docs/GPU.md,
# "A GPU day"): the CUDA, CPU and emulator builds of every function the GPU
# checks need, compiled here ahead of time, with the runtime, spconv-ref and
# the driver; at most 48 MiB, needing only glibc, libstdc++, libgcc, libm and
# the driver's libcuda on the GPU machine. Builds the project first.
#
#   scripts/gpu-kit.sh            # the full kit (sm_90 and sm_80 objects)
#   scripts/gpu-kit.sh --small    # a few functions of each kind (the test's)
#
# Then, on the GPU machine: bash build/gpu-kit/run.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
if [[ ! -e "$build/runtime/lib/libspconv_runtime_cuda.so.1" ]]; then
  echo "gpu-kit: error: this build has no CUDA runtime library (is the CUDA toolkit" \
       "at /usr/local/cuda?)" >&2
  exit 1
fi
exec /usr/bin/python3 "$root/tools/gpu-kit/build_kit.py" --build "$build" \
  --out "${SPCONV_GPU_KIT_DIR:-$build/gpu-kit}" --jobs "${SPCONV_JOBS:-2}" "$@"
