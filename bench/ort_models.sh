#!/usr/bin/env bash
# bnorm against onnxruntime (npm's onnxruntime-node, installed with
# --ignore-scripts into a temporary folder) on whole models: the same seeded
# random inputs to both, each output compared (max abs / max rel difference,
# agree within rtol 1e-4 + atol 1e-5 for float32). Details and options:
# bench/ort/compare_models.py.
#   bash bench/ort_models.sh [--build DIR] [compare_models.py options] MODEL.onnx|FOLDER...
# A folder stands for every .onnx in it. By hand only: tests never read
# /work/shared. Example: bash bench/ort_models.sh --f64-reference /work/shared/models
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build="$here/../build"
if [[ ${1:-} == --build ]]; then build=$2; shift 2; fi
args=() models=()
while (($#)); do
  case $1 in
    --seed|--dim|--rtol|--atol|--optimization) args+=("$1" "$2"); shift 2 ;;
    --f64-reference) args+=("$1"); shift ;;
    *) if [[ -d $1 ]]; then models+=("$1"/*.onnx); else models+=("$1"); fi; shift ;;
  esac
done
((${#models[@]})) || { echo "usage: $0 [--build DIR] [options] MODEL.onnx|FOLDER..." >&2; exit 2; }
work=${ORT_NODE_DIR:-}
if [[ -z $work ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
[[ -d $work/node_modules/onnxruntime-node ]] ||
  (cd "$work" && npm install --silent --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
/usr/bin/python3 "$here/ort/compare_models.py" --bnorm "$build/bnorm" --node-path "$work/node_modules" \
  "${args[@]}" "${models[@]}"
