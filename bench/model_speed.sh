#!/usr/bin/env bash
# Whole-network speed, bnorm against onnxruntime 1.30 (npm's
# onnxruntime-node, --ignore-scripts, in a temporary folder), both on one
# thread. Networks: bench/gen_large_model.py (64 blocks of 256-channel 3x3
# Conv + BN + Relu at 8x8, its defaults) and bench/gen_nets.py's ResNet-18
# and detector, written into a temporary folder (deterministic).
#   bash bench/model_speed.sh [BUILD_DIR] [RUNS]
# bnorm: wall time of `bnorm eval MODEL --random 1` with OMP_NUM_THREADS=1,
# the median of RUNS (default 5) processes: parsing the model, making the
# input, evaluating and printing the summary all count; `load` is the wall
# time of `bnorm inspect MODEL` (parsing and checking alone), for scale.
# onnxruntime: the median of RUNS x 4 warm InferenceSession.run calls
# (intra_op_num_threads 1, inter_op 1, sequential, graph optimization
# 'all', its default) on an input of the same shape; `cold` adds the
# session's creation and first run to one run.
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
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
printf "%-12s %16s %10s %12s %12s %8s\n" model "bnorm eval (s)" "load (s)" "ort run (s)" "ort cold (s)" ratio
for model in large resnet detection; do
  path=$work/$model.onnx
  b=$(for _ in $(seq "$runs"); do OMP_NUM_THREADS=1 wall "$build/bnorm" eval "$path" --random 1; done | median)
  l=$(for _ in $(seq "$runs"); do wall "$build/bnorm" inspect "$path"; done | median)
  shape=$(/usr/bin/python3 -c "import onnx,sys; m=onnx.load(sys.argv[1]); \
print([d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim])" "$path")
  /usr/bin/python3 -c "import numpy as np,sys; np.random.default_rng(1).standard_normal($shape).astype(np.float32).tofile(sys.argv[1])" \
    "$work/in.bin"
  manifest() { echo "{\"model\":\"$path\",\"out_dir\":\"$work\",\"threads\":1,\"optimization\":\"all\",\"runs\":$1,\
\"inputs\":[{\"name\":\"input\",\"dtype\":\"float32\",\"dims\":$shape,\"file\":\"$work/in.bin\"}]}" >"$work/m.json"; }
  manifest $((runs * 4))
  o=$(NODE_PATH=$nm node "$here/ort/run_model.js" "$work/m.json" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['median_ms']/1e3)")
  manifest 1
  c=$(NODE_PATH=$nm wall node "$here/ort/run_model.js" "$work/m.json")
  printf "%-12s %16.3f %10.3f %12.4f %12.3f %8.2f\n" "$model" "$b" "$l" "$o" "$c" "$(awk "BEGIN{print $b/$o}")"
done
