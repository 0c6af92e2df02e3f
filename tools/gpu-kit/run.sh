#!/usr/bin/env bash
# A GPU day in one command (docs/GPU.md, "A GPU day"): proves and times the
# CUDA path of this kit on the machine it runs on, with nothing but the
# NVIDIA driver, Python 3 and numpy (torch, compute-sanitizer and ncu are
# used where present). The report goes to $OUT (else the current folder).
#
#   bash build/gpu-kit/run.sh            # every phase, at most 9 minutes on an H100
#   bash build/gpu-kit/run.sh --quick    # the short re-run, at most 2
#   bash build/gpu-kit/run.sh --stand-in # no GPU: the emulator plays the device
set -euo pipefail
kit=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
if ! "$python" -c 'import numpy' 2>/dev/null; then
  echo "gpu-kit: error: $python cannot import numpy; set PYTHON to a Python 3 with numpy" >&2
  exit 2
fi
export LD_LIBRARY_PATH="$kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$kit/py"
exec "$python" -m kit --kit "$kit" "$@"
