#!/usr/bin/env bash
# bnorm's BN kernel and onnxruntime's, side by side on the same shapes; then
# LayerNormalization and GroupNormalization (bench/ort/run_norms.js).
# onnxruntime comes from the npm registry (onnxruntime-node, installed with
# --ignore-scripts into a temporary folder); its kernel time is taken from
# its own profiler. bnorm's figures come from build/bnorm_bench.
#   bash bench/ort_side_by_side.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm install --silent --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
/usr/bin/python3 "$here/ort/make_models.py" "$work"
for t in 1 $(nproc); do
  NODE_PATH="$work/node_modules" node "$here/ort/run.js" "$work" "$t"
done
# The normalization family (LayerNormalization, GroupNormalization), one thread.
NODE_PATH="$work/node_modules" node "$here/ort/run_norms.js" "$work" 1
echo
"$build/bnorm_bench" --benchmark_filter='memcpy|bn_infer_f32|layer_norm_f32|group_norm_f32' --benchmark_min_time=0.2 2>/dev/null
