#!/usr/bin/env bash
# `bnorm eval A --compare B --trace` against the plain compare on the models
# of bench/gen_large_model.py (A, and B = A folded): CPU time and peak
# memory of each, their ratios, and the largest intermediate value, which
# bounds what the trace may hold on top of a plain compare (issue targets:
# time at most 1.5x, memory at most 2 x the largest value more).
#   [RUNS=5] bash bench/trace_bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
bnorm="$build/bnorm"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1

measure() {  # out_prefix, command...: min CPU seconds and max peak KB over RUNS runs
  local prefix=$1
  shift
  local best_t="" peak=0
  for _ in $(seq "${RUNS:-5}"); do
    # exit 1 (the models differ) is a complete run too
    /usr/bin/time -f "%U %S %M" -o "$work/t" "$@" >"$work/out" 2>&1 || [ $? -eq 1 ] || { cat "$work/out"; exit 1; }
    read -r u s m < <(tail -1 "$work/t")
    t=$(awk "BEGIN{print $u+$s}")
    if [ -z "$best_t" ] || awk "BEGIN{exit !($t < $best_t)}"; then best_t=$t; fi
    [ "$m" -gt "$peak" ] && peak=$m
  done
  eval "${prefix}_t=$best_t ${prefix}_m=$peak"
}

one() {  # label, generator args...
  local label=$1
  shift
  /usr/bin/python3 "$(dirname "$0")/gen_large_model.py" "$work/a.onnx" "$@" >/dev/null
  "$bnorm" -q fold "$work/a.onnx" -o "$work/b.onnx" >/dev/null
  measure plain "$bnorm" -q eval "$work/a.onnx" --compare "$work/b.onnx" --random 1
  measure trace "$bnorm" -q eval "$work/a.onnx" --compare "$work/b.onnx" --random 1 --trace
  "$bnorm" -q eval "$work/a.onnx" --compare "$work/b.onnx" --random 1 --trace --json >"$work/trace.json" || true
  largest=$(/usr/bin/python3 -c "
import json, math, sys
d = json.load(open('$work/trace.json'))
vals = d['trace']['values']
size = {'float': 4, 'double': 8, 'float16': 2, 'bfloat16': 2}
print(max(math.prod(v['shape']) * size.get(v['type'], 4) for v in vals) // 1024)")
  printf "%-44s plain %6.2f s %8d KB | trace %6.2f s %8d KB | time x%.2f | memory +%d KB = %.2f x the largest value (%d KB)\n" \
    "$label" "$plain_t" "$plain_m" "$trace_t" "$trace_m" "$(awk "BEGIN{print $trace_t/$plain_t}")" \
    $((trace_m - plain_m)) "$(awk "BEGIN{print ($trace_m-$plain_m)/$largest}")" "$largest"
}

one "64 blocks x 256 channels, 8x8 (default)"
one "24 blocks x 64 channels, 112x112" --blocks 24 --channels 64 --size 112
