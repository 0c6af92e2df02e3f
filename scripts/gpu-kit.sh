#!/usr/bin/env bash
# Builds the GPU kit into ${SPCONV_GPU_KIT_DIR:-build/gpu-kit} (docs/GPU.md,
# "A GPU day"): the CUDA, CPU and emulator builds of every function the GPU
# checks need, compiled here ahead of time, with the runtime, spconv-ref and
# the driver; at most 48 MiB, needing only glibc, libstdc++, libgcc, libm and
# the driver's libcuda on the GPU machine. Builds the project first.
#
#   scripts/gpu-kit.sh            # the full kit (sm_90 and sm_80 objects)
#   scripts/gpu-kit.sh --small    # a few functions of each kind (the test's)
#   scripts/gpu-kit.sh --baseline REV
#                                 # and REV's networks and layers beside them,
#                                 # for the A/B phase (REV's spconv-compile is
#                                 # built in build/baseline/<commit>/)
#
# Then, on the GPU machine: bash build/gpu-kit/run.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}
# --baseline REV becomes --baseline-compiler: REV checked out as a git
# worktree and its spconv-compile built, once per commit.
args=()
rev=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --baseline) [[ $# -ge 2 ]] || { echo "gpu-kit: error: --baseline needs a revision" >&2; exit 2; }
                rev=$2; shift 2 ;;
    --baseline=*) rev=${1#--baseline=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
if [[ -n "$rev" ]] && ! sha=$(git -C "$root" rev-parse --verify --quiet "$rev^{commit}"); then
  echo "gpu-kit: error: --baseline $rev is not a commit of $root" >&2
  exit 2
fi
"$root/scripts/build.sh"
if [[ -n "$rev" ]]; then
  base="$build/baseline/$sha"
  if [[ ! -e "$base/src/.git" ]]; then
    git -C "$root" worktree prune
    git -C "$root" worktree add --detach "$base/src" "$sha"
  fi
  SPCONV_BUILD_DIR="$base/build" "$base/src/scripts/build.sh" spconv-compile
  args+=(--baseline-compiler "$base/build/bin/spconv-compile")
fi
if [[ ! -e "$build/runtime/lib/libspconv_runtime_cuda.so.1" ]]; then
  echo "gpu-kit: error: this build has no CUDA runtime library (is the CUDA toolkit" \
       "at /usr/local/cuda?)" >&2
  exit 1
fi
exec /usr/bin/python3 "$root/tools/gpu-kit/build_kit.py" --build "$build" \
  --out "${SPCONV_GPU_KIT_DIR:-$build/gpu-kit}" --jobs "${SPCONV_JOBS:-2}" ${args[@]+"${args[@]}"}
