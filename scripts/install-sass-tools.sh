#!/usr/bin/env bash
# Installs nvdisasm, which scripts/sass-report.py reads the kernels' machine
# code with, into ${SPCONV_BUILD_DIR:-build}/venv-sass from PyPI, and prints
# its path. The CUDA toolkit's compiler packages (ptxas) do not carry it.
#
# Pinned: 13.2.51 is the oldest nvdisasm release on PyPI, the nearest to the
# toolkit's ptxas 13.0 (PyPI has no 13.0 nvdisasm); sass-report.py refuses a
# disassembler of another major release than the ptxas that made the code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}
venv=$build/venv-sass
release=13.2.51
find_tool() { find "$venv" -path '*/nvidia/cu13/bin/nvdisasm' -type f 2>/dev/null | head -n 1 || true; }
tool=$(find_tool)
if [[ -z "$tool" ]]; then
  /usr/bin/python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q "nvidia-cuda-nvdisasm==$release" >&2
  tool=$(find_tool)
fi
[[ -x "$tool" ]] || { echo "install-sass-tools: no nvdisasm in $venv" >&2; exit 1; }
echo "$tool"
