#!/usr/bin/env bash
# The Python front end beyond the lit suite (test/Python runs there):
#   1. `pip install ./python` into a fresh virtualenv, then a network compiled
#      and checked from outside the checkout (test/Python/installed_package.py);
#   2. the compiled networks against spconv 2.x itself
#      (test/Python/spconv2_compare.py), in the virtualenv that
#      scripts/bench-install.sh makes (spconv's CPU wheel, Debian's torch).
#      When that cannot be installed (no network, no wheel for this Python),
#      it is skipped with the reason, as the issue asks; SPCONV_REQUIRE_SPCONV2=1
#      makes that a failure instead;
#   3. a spconv 2.x checkpoint loaded by spconv_mlir.torch, trained one step
#      and loaded back into spconv 2.x (test/Python/spconv2_roundtrip.py:
#      spconv's venv and <build>/venv-torch, skipped like 2.).
# Uses ${SPCONV_BUILD_DIR:-build}'s tools; the spconv virtualenv is
# ${SPCONV_BENCH_VENV:-<build>/venv-spconv}.
#
# `test-python.sh --install` only installs spconv 2.x and torch (best effort,
# quick when present): scripts/test.sh calls it before the lit suite, whose
# torch tests (test/Python/torch.test) need Debian's python3-torch; and
# PyTorch 2.x from PyPI into <build>/venv-torch (pinned; about 5.4 GB with
# the NVIDIA libraries its wheel imports even on a CPU, a minute), for
# spconv_mlir.torch's tests (lit feature `torch2`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SPCONV_BUILD_DIR:-$root/build}
venv=${SPCONV_BENCH_VENV:-$build/venv-spconv}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

install_spconv2() {
  "$root/scripts/bench-install.sh" "$venv" > "$work/bench-install.log" 2>&1 &&
    "$venv/bin/python" -c "import spconv.pytorch, torch" 2> /dev/null
}

# PyTorch for spconv_mlir.torch: torch.library.custom_op and torch.compile
# need 2.4 or later; Debian's python3-torch is 1.13.
TORCH2_VERSION=2.15.0
install_torch2() {
  local venv2=$build/venv-torch
  if [[ -x "$venv2/bin/python" ]] &&
     "$venv2/bin/python" -c "import torch; assert torch.__version__.startswith('$TORCH2_VERSION')" \
       2> /dev/null; then
    echo "torch $TORCH2_VERSION already in $venv2"
    return 0
  fi
  rm -rf "$venv2"
  /usr/bin/python3 -m venv "$venv2" &&
    "$venv2/bin/pip" install -q "torch==$TORCH2_VERSION" "numpy<2.3" &&
    "$venv2/bin/python" -c "import torch; torch.library.custom_op" &&
    echo "torch $TORCH2_VERSION installed in $venv2"
}

if [[ "${1:-}" == --install ]]; then
  if install_spconv2; then
    tail -n 3 "$work/bench-install.log"
  else
    echo "spconv 2.x and torch could not be installed (their tests will be skipped):"
    tail -n 5 "$work/bench-install.log" | sed 's/^/  /'
  fi
  if ! install_torch2 > "$work/torch2-install.log" 2>&1; then
    echo "SKIP: torch $TORCH2_VERSION could not be installed from PyPI; spconv_mlir.torch's"
    echo "tests (lit feature torch2) will not run:"
    tail -n 5 "$work/torch2-install.log" | sed 's/^/  /'
    rm -rf "$build/venv-torch"
  else
    tail -n 1 "$work/torch2-install.log"
  fi
  exit 0
fi

echo "-- pip install ./python"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
# Debian's numpy and setuptools serve: no download needed.
"$work/venv/bin/pip" install -q --no-build-isolation --no-deps "$root/python"
(cd "$work" && SPCONV_MLIR_PREFIX="$build" SPCONV_MLIR_CACHE_DIR="$work/cache" \
  "$work/venv/bin/python" "$root/test/Python/installed_package.py" "$work/venv" \
  --tools "$build")

echo "-- the compiled networks against spconv 2.x"
if install_spconv2; then
  SPCONV_MLIR_PREFIX="$build" SPCONV_MLIR_CACHE_DIR="$work/cache" \
    PYTHONPATH="$root/python" \
    "$venv/bin/python" "$root/test/Python/spconv2_compare.py" --root "$root"
else
  echo "SKIP: spconv 2.x could not be installed, so the comparison with it did not run:"
  tail -n 5 "$work/bench-install.log" | sed 's/^/  /'
  [[ "${SPCONV_REQUIRE_SPCONV2:-0}" != 1 ]] || exit 1
fi

echo "-- a spconv 2.x checkpoint through spconv_mlir.torch and back"
torch2="$build/venv-torch/bin/python"
if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import spconv.pytorch" 2> /dev/null &&
   [[ -x "$torch2" ]]; then
  mkdir -p "$work/roundtrip"
  "$venv/bin/python" "$root/test/Python/spconv2_roundtrip.py" save "$work/roundtrip"
  SPCONV_MLIR_PREFIX="$build" SPCONV_MLIR_CACHE_DIR="$work/cache" PYTHONPATH="$root/python" \
    "$torch2" "$root/test/Python/spconv2_roundtrip.py" train "$work/roundtrip"
  "$venv/bin/python" "$root/test/Python/spconv2_roundtrip.py" check "$work/roundtrip"
else
  echo "SKIP: the round trip needs spconv 2.x ($venv) and torch 2.x ($build/venv-torch);"
  echo "test-python.sh --install puts them there when PyPI answers"
  [[ "${SPCONV_REQUIRE_SPCONV2:-0}" != 1 ]] || exit 1
fi
