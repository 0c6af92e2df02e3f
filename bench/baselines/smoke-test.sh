#!/usr/bin/env bash
#===- bench/baselines/smoke-test.sh - Quick correctness run ---------------===#
#
# usage: smoke-test.sh BIN_DIR PYTHON GEN_WORKLOAD.py
#
# Generates small workloads and runs every baseline once with --check: the
# hash rulebook must equal the sorted-key one, the conv must match a double
# precision sum, and the merge counts must agree with each other and with
# spconv-v1-cpu's pair count.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
bin=$1
python=$2
gen=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$python" "$gen" lidar "$tmp/lidar" --sites 4000 --batch 2 > /dev/null
"$python" "$gen" uniform "$tmp/uni" --sites 3000 > /dev/null
grid=41,1600,1408
for coords in "$tmp/lidar_coords.npy" "$tmp/uni_coords.npy"; do
  run=(--coords "$coords" --grid "$grid" --repeat 1)
  "$bin/spconv-v1-cpu" "${run[@]}" --check --cin 4 --cout 8 > "$tmp/v1.txt"
  "$bin/spconv-v1-cpu" "${run[@]}" --check --regular --stride 2 --padding 1 \
    --cin 3 --cout 5 --threads 2 > "$tmp/v1r.txt"
  "$bin/sgemm-roofline" "${run[@]}" --cin 4 --cout 4 > "$tmp/sg.txt"
  "$bin/merge-join-count" "${run[@]}" --threads 2 > "$tmp/mj.txt"
  "$bin/merge-join-count" "${run[@]}" --kernel 5 --dilation 2 > "$tmp/mj5.txt"
  "$bin/spconv-v1-cpu" "${run[@]}" --kernel 5 --dilation 2 --check \
    > "$tmp/v15.txt"
  pairs() { awk '$1 == "pairs" {print $2}' "$1"; }
  for f in v1 v1r v15; do
    grep -q '^check ok$' "$tmp/$f.txt" || { cat "$tmp/$f.txt"; exit 1; }
  done
  [[ $(pairs "$tmp/v1.txt") == $(pairs "$tmp/mj.txt") ]]
  [[ $(pairs "$tmp/v1.txt") == $(pairs "$tmp/sg.txt") ]]
  [[ $(pairs "$tmp/v15.txt") == $(pairs "$tmp/mj5.txt") ]]
done
echo "bench smoke test passed"
