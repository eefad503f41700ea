#!/usr/bin/env bash
# A model whose weights exceed 2 GiB (external data) through inspect, fold,
# fold --verify, upgrade and eval --compare: wall time and peak memory of
# each, with the size of the weights for scale. Needs about 10 GB of disk
# and a few minutes; not part of `make test`.
#   [BLOCKS=16] [CHANNELS=2048] bash bench/big_model.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
build=${1:-build}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
bnorm="$build/bnorm"
/usr/bin/python3 "$(dirname "$0")/gen_large_model.py" "$work/big.onnx" --external --size 1 --scale 0.02 \
  --blocks "${BLOCKS:-16}" --channels "${CHANNELS:-2048}"
weights=$(stat -c %s "$work/big.onnx.data")
echo "model: $(stat -c %s "$work/big.onnx") bytes + external data $weights bytes ($(awk "BEGIN{printf \"%.2f\", $weights/2^30}") GiB)"

run() {  # label, command...: prints wall time, peak RSS and its share of the weights
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" >"$work/out" 2>&1 || { cat "$work/out"; exit 1; }
  read -r t m <"$work/t"
  printf "%-28s %7.2f s %10d KB peak (%.2f of the weights)\n" "$label" "$t" "$m" "$(awk "BEGIN{print $m*1024/$weights}")"
}

run "inspect" "$bnorm" inspect "$work/big.onnx"
mkdir -p "$work/folded" "$work/verified" "$work/upgraded"
run "fold" "$bnorm" -q fold "$work/big.onnx" -o "$work/folded/big.onnx"
run "fold --verify" "$bnorm" -q fold --verify "$work/big.onnx" -o "$work/verified/big.onnx"
run "upgrade --to 15" "$bnorm" -q upgrade "$work/big.onnx" -o "$work/upgraded/big.onnx"
run "eval --compare (folded)" "$bnorm" -q eval "$work/big.onnx" --compare "$work/folded/big.onnx" --random 1
run "eval --compare (upgraded)" "$bnorm" -q eval "$work/big.onnx" --compare "$work/upgraded/big.onnx" --random 1
cmp "$work/folded/big.onnx.data" "$work/verified/big.onnx.data" && echo "fold and fold --verify wrote the same weights"
