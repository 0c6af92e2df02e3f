#!/usr/bin/env bash
# The Python front end beyond the lit suite (test/Python runs there):
#   1. `pip install ./python` into a fresh virtualenv, then a network compiled
#      and checked from outside the checkout (test/Python/installed_package.py);
#   2. the compiled networks against spconv 2.x itself
#      (test/Python/spconv2_compare.py), in the virtualenv that
#      scripts/bench-install.sh makes (spconv's CPU wheel, Debian's torch).
#      When that cannot be installed (no network, no wheel for this Python),
#      it is skipped with the reason, as the issue asks; SPCONV_REQUIRE_SPCONV2=1
#      makes that a failure instead.
# Uses ${SPCONV_BUILD_DIR:-build}'s tools; the spconv virtualenv is
# ${SPCONV_BENCH_VENV:-<build>/venv-spconv}.
#
# `test-python.sh --install` only installs spconv 2.x and torch (best effort,
# quick when present): scripts/test.sh calls it before the lit suite, whose
# torch tests (test/Python/torch.test) need Debian's python3-torch.
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

if [[ "${1:-}" == --install ]]; then
  if install_spconv2; then
    tail -n 3 "$work/bench-install.log"
  else
    echo "spconv 2.x and torch could not be installed (their tests will be skipped):"
    tail -n 5 "$work/bench-install.log" | sed 's/^/  /'
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
