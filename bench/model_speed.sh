#!/usr/bin/env bash
# Whole-network speed, bnorm against onnxruntime 1.30 (npm's
# onnxruntime-node, --ignore-scripts, in a temporary folder), one thread
# each. Networks: bench/gen_large_model.py (64 blocks of 256-channel 3x3
# Conv + BN + Relu at 8x8, its defaults) and bench/gen_nets.py's ResNet-18
# and detector, written into a temporary folder (deterministic). What is
# timed and how: bench/model_speed.py.
#   [ORT_NODE_DIR=DIR] bash bench/model_speed.sh [BUILD_DIR] [RUNS]
# ORT_NODE_DIR: a folder where onnxruntime-node is installed already.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
runs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -n ${ORT_NODE_DIR:-} ]]; then nm=$ORT_NODE_DIR/node_modules; else
  (cd "$work" && npm install --silent --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
  nm=$work/node_modules
fi
/usr/bin/python3 "$here/gen_large_model.py" "$work/large.onnx"
/usr/bin/python3 "$here/gen_nets.py" "$work"
/usr/bin/python3 "$here/model_speed.py" --bnorm "$build/bnorm" --node-path "$nm" --runs "$runs" \
  "$work/large.onnx" "$work/resnet.onnx" "$work/detection.onnx"
