#!/usr/bin/env bash
# Installs the Debian 12 packages spconv-mlir needs, if any is missing.
# Quick (no apt call) when everything is present.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3 python3-numpy python3-pyflakes
  python3-venv python3-setuptools
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libomp-22-dev
  libgtest-dev libbenchmark-dev robin-map-dev libopenblas-dev
  time
)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "Installing missing packages: ${missing[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
# LLVM/MLIR 22 comes from bookworm-security; refresh the lists if apt does not
# know the packages yet.
if ! apt-cache show libmlir-22-dev >/dev/null 2>&1; then
  $sudo apt-get update -q
fi
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
