#!/usr/bin/env bash
# The demo: compiles the example networks for the CPU and runs them on a
# generated LiDAR scan, printing each rulebook build and compute with its
# time and output rows, then the networks' outputs.
#
#   SPCONV_DEMO_SITES   sites in the scan (default 30000, a dense KITTI frame)
#   SPCONV_DEMO_THREADS threads (default: all cores)
#   SPCONV_PYTHON       a python3 with numpy (default /usr/bin/python3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}
sites=${SPCONV_DEMO_SITES:-30000}
threads=${SPCONV_DEMO_THREADS:-$(nproc)}
# Debian's python3 has python3-numpy (scripts/install-deps.sh installs it).
python=${SPCONV_PYTHON:-/usr/bin/python3}

"$root/scripts/build.sh" spconv-run
work="$build/demo"
mkdir -p "$work"

echo "== A LiDAR-like scan on the KITTI grid [41, 1600, 1408]"
"$python" "$root/bench/workloads/gen_workload.py" lidar "$work/scan" \
  --sites "$sites" --seed 1 2>&1 | sed 's/^/   /'

for example in second_middle_encoder minkunet; do
  model="$root/examples/$example.mlir"
  inputs=$("$python" "$root/scripts/make_inputs.py" "$model" "$example" \
    --coords "$work/scan_coords.npy" --out-dir "$work/$example" 2>/dev/null)
  echo
  echo "== $example ($threads threads): ms, output rows, op"
  # shellcheck disable=SC2086
  "$build/bin/spconv-run" "$model" --entry "$example" $inputs \
    --output-dir "$work/$example/out" --num-threads "$threads" --profile --time \
    2> >(sed 's/^spconv-run: /   /' >&2)
  "$python" - "$work/$example/out" <<'PY'
import glob, sys
import numpy as np
for path in sorted(glob.glob(sys.argv[1] + "/out*.npy")):
    a = np.load(path)
    print("   %s: %s %s" % (path.rsplit("/", 1)[1], a.dtype, list(a.shape)))
PY
done
