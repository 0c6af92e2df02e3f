#!/usr/bin/env bash
#===- bench/run-baselines.sh - Run the CPU baselines on workload files ----===#
#
# usage: bench/run-baselines.sh BIN_DIR OUT_DIR COORDS.npy...
#
# Runs spconv-v1-cpu and sgemm-roofline (16->16 and 64->64) and
# merge-join-count on every coordinates file with 1 and 2 threads, writes one
# output file per run to OUT_DIR and prints a summary line per run. The
# grid is KITTI's unless SPCONV_BENCH_GRID says otherwise (D,H,W); the
# repeat count is SPCONV_BENCH_REPEAT (default 5).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: $0 BIN_DIR OUT_DIR COORDS.npy..." >&2
  exit 2
fi
bin=$1
out=$2
shift 2
grid=${SPCONV_BENCH_GRID:-41,1600,1408}
repeat=${SPCONV_BENCH_REPEAT:-5}
threads=${SPCONV_BENCH_THREADS:-1 2}
mkdir -p "$out"

# Prints "name=value" for the given metrics of one output file.
summary() {
  local file=$1
  shift
  for m in "$@"; do
    printf ' %s=%s' "$m" "$(awk -v m="$m" '$1 == m {print $2}' "$file")"
  done
  echo
}

for coords in "$@"; do
  name=$(basename "$coords" .npy)
  for t in $threads; do
    common=(--coords "$coords" --grid "$grid" --threads "$t"
            --repeat "$repeat")
    for c in 16 64; do
      f="$out/$name.v1.c$c.t$t.txt"
      "$bin/spconv-v1-cpu" "${common[@]}" --cin "$c" --cout "$c" > "$f"
      echo -n "$name spconv-v1-cpu $c->$c threads=$t:"
      summary "$f" rulebook_ms gather_ms gemm_ms scatter_ms conv_ms total_ms \
        pairs
      f="$out/$name.sgemm.c$c.t$t.txt"
      "$bin/sgemm-roofline" "${common[@]}" --cin "$c" --cout "$c" > "$f"
      echo -n "$name sgemm-roofline $c->$c threads=$t:"
      summary "$f" gemm_per_offset_ms gemm_stacked_ms gemm_hot_ms
    done
    f="$out/$name.merge.t$t.txt"
    "$bin/merge-join-count" "${common[@]}" > "$f"
    echo -n "$name merge-join-count threads=$t:"
    summary "$f" sort_ms merge_simple_ms merge_ms merge_half_ms bsearch_ms \
      pairs
  done
done
