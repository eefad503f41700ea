#!/usr/bin/env bash
# Whole-network speed, bnorm against onnxruntime 1.30 (npm's
# onnxruntime-node, --ignore-scripts, in a temporary folder), one thread
# each. Networks: bench/gen_large_model.py (64 blocks of 256-channel 3x3
# Conv + BN + Relu at 8x8, its defaults) and bench/gen_nets.py's ResNet-18,
# detector, int8 YOLOv8n-style network and QDQ ResNet-18, written into a
# temporary folder (deterministic). What is
# timed and how: bench/model_speed.py.
#   [ORT_NODE_DIR=DIR] bash bench/model_speed.sh [BUILD_DIR] [RUNS]
# ORT_NODE_DIR: a folder where onnxruntime-node is installed already.
# MATMUL=1: also onnxruntime's MatMul on bench/gemm_bench.cpp's shapes, and
# bnorm_bench's gemm benchmarks when BUILD_DIR has bnorm_bench.
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
if [[ ${MATMUL:-0} == 1 ]]; then
  /usr/bin/python3 "$here/model_speed.py" --bnorm "$build/bnorm" --node-path "$nm" --matmul
  [[ ! -x $build/bnorm_bench ]] || OMP_NUM_THREADS=1 "$build/bnorm_bench" --benchmark_filter=gemm
fi
/usr/bin/python3 "$here/model_speed.py" --bnorm "$build/bnorm" --node-path "$nm" --runs "$runs" \
  "$work/large.onnx" "$work/resnet.onnx" "$work/detection.onnx" "$work/yolo_int8.onnx" "$work/resnet_qdq.onnx"
