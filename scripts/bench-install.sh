#!/usr/bin/env bash
#===- scripts/bench-install.sh - Opt-in: the real libraries for bench/ ----===#
#
# usage: scripts/bench-install.sh [--torch apt|pip|none] [--wheel NAME] [VENV]
#
# Makes VENV (default $SPCONV_BENCH_VENV or /work/venv-spconv), a virtualenv
# of Debian's /usr/bin/python3 that also sees Debian's packages
# (--system-site-packages: python3-numpy, and python3-torch when chosen),
# and pip-installs the spconv 2.x CPU wheel into it. Then
#
#   /usr/bin/python3 bench/run.py --spconv2-python VENV/bin/python
#
# adds spconv 2.x to the report (its torch modules too when torch imports).
#
#   --torch apt   (default) Debian's python3-torch (CPU build; about 180
#                 packages from apt, no CUDA libraries)
#   --torch pip   numpy and torch from PyPI into a venv of its own (no
#                 Debian packages visible; about 3 GB: the PyPI torch wheel
#                 pulls CUDA libraries even for CPU use)
#   --torch none  spconv without torch (bench/baselines/spconv2_layer.py's
#                 numpy-driven path only)
#   --wheel NAME  the spconv wheel: spconv (default, the CPU wheel) or a GPU
#                 one such as spconv-cu120, with --torch pip (a CUDA torch)
#                 for bench/run.py --target cuda
#
# Idempotent: quick when everything is there. Machines are fresh each
# session, so this is how the comparison is made reproducible.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
torch=apt
wheel=spconv
venv=${SPCONV_BENCH_VENV:-/work/venv-spconv}
while [[ $# -gt 0 ]]; do
  case $1 in
    --torch) torch=$2; shift 2 ;;
    --wheel) wheel=$2; shift 2 ;;
    -h|--help) sed -n '3,27p' "$0"; exit 0 ;;
    *) venv=$1; shift ;;
  esac
done
case $torch in apt|pip|none) ;; *) echo "bad --torch $torch" >&2; exit 2 ;; esac
[[ $wheel =~ ^spconv(-cu[0-9]+)?$ ]] || { echo "bad --wheel $wheel (spconv or spconv-cuNNN)" >&2; exit 2; }

sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
need=(python3-venv python3-numpy)
[[ $torch == apt ]] && need+=(python3-torch)
missing=()
for p in "${need[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
fi

if [[ $torch == pip ]]; then
  # Its own numpy and torch: Debian's must not satisfy pip's requirements.
  [[ -x $venv/bin/python ]] || /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -c "import numpy, torch" 2>/dev/null ||
    "$venv/bin/pip" install -q numpy torch
else
  [[ -x $venv/bin/python ]] || /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
"$venv/bin/python" -c "import spconv" 2>/dev/null ||
  "$venv/bin/pip" install -q "$wheel"
"$venv/bin/python" - <<'PY'
import numpy, spconv
print("spconv", spconv.__version__, "numpy", numpy.__version__)
try:
    import torch
    print("torch", torch.__version__, "threads", torch.get_num_threads(),
          "CUDA device" if torch.cuda.is_available() else "no CUDA device")
    import spconv.pytorch  # noqa: F401
    print("spconv.pytorch imports")
except ImportError as e:
    print("no torch:", e)
PY
echo "bench-install: $venv/bin/python"
