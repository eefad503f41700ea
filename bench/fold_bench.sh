#!/usr/bin/env bash
# Times `bnorm fold` as a whole process against the baseline any tool pays
# (bnorm_proto_copy: protobuf parse + write of the same model), on the
# ~150 MB model of gen_large_model.py. Prints wall time and peak memory of
# each, best of N runs, and their ratios. Not part of `make test`.
#   bash bench/fold_bench.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$(dirname "$0")/gen_large_model.py" "$work/large.onnx"
echo "model: $(du -m "$work/large.onnx" | cut -f1) MB"

measure() {  # prints "seconds max_rss_kb", best wall time of $runs
  local best_t="" best_m=""
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$work/t" "$@" >/dev/null
    read -r t m <"$work/t"
    if [ -z "$best_t" ] || awk "BEGIN{exit !($t < $best_t)}"; then best_t=$t; best_m=$m; fi
  done
  echo "$best_t $best_m"
}

read -r bt bm < <(measure "$build/bnorm_proto_copy" "$work/large.onnx" "$work/copy.onnx")
read -r ft fm < <(measure "$build/bnorm" fold "$work/large.onnx" -o "$work/folded.onnx")
echo "baseline (parse + write): ${bt} s, ${bm} KB peak"
echo "bnorm fold:               ${ft} s, ${fm} KB peak"
awk "BEGIN{printf \"ratios: time %.2f (target <= 1.3), memory %.2f (target <= 1.0)\n\", $ft/$bt, $fm/$bm}"
