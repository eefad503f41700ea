#!/usr/bin/env bash
# `bnorm eval A --compare B` on the models of bench/gen_large_model.py (A,
# and B = A folded): the outputs-only element check (--tolerance fixed),
# the default check (--tolerance auto: A, A in float64 and B, every shared
# value judged), and the same with --trace: CPU time and peak memory of
# each, their ratios to the fixed check, and the largest intermediate
# value, which bounds what the auto check holds on top of the fixed one
# (each shared value of A and its float64 twin: 3x a float value).
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
  measure plain "$bnorm" -q eval "$work/a.onnx" --compare "$work/b.onnx" --random 1 --tolerance fixed
  measure auto "$bnorm" -q eval "$work/a.onnx" --compare "$work/b.onnx" --random 1
  measure trace "$bnorm" -q eval "$work/a.onnx" --compare "$work/b.onnx" --random 1 --trace
  "$bnorm" -q eval "$work/a.onnx" --compare "$work/b.onnx" --random 1 --trace --json >"$work/trace.json" || true
  largest=$(/usr/bin/python3 -c "
import json, math, sys
d = json.load(open('$work/trace.json'))
vals = d['trace']['values']
size = {'float': 4, 'double': 8, 'float16': 2, 'bfloat16': 2}
print(max(math.prod(v['shape']) * size.get(v['type'], 4) for v in vals) // 1024)")
  printf "%-44s fixed %6.2f s %8d KB | auto %6.2f s %8d KB (x%.2f, +%d KB = %.2f x the largest value, %d KB) | auto --trace %6.2f s %8d KB (x%.2f)\n" \
    "$label" "$plain_t" "$plain_m" "$auto_t" "$auto_m" "$(awk "BEGIN{print $auto_t/$plain_t}")" \
    $((auto_m - plain_m)) "$(awk "BEGIN{print ($auto_m-$plain_m)/$largest}")" "$largest" \
    "$trace_t" "$trace_m" "$(awk "BEGIN{print $trace_t/$plain_t}")"
}

one "64 blocks x 256 channels, 8x8 (default)"
one "24 blocks x 64 channels, 112x112" --blocks 24 --channels 64 --size 112
