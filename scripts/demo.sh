#!/usr/bin/env bash
# make demo: the main job on the embedded default model, testdata/demo_opset6.onnx
# (an opset-6 network, Conv + BatchNormalization + Relu twice, then Flatten,
# Gemm and a BatchNormalization on the logits; made by testdata/generate.py):
# inspect it, upgrade it to opset 15, fold its BatchNormalization nodes,
# and check each step's numbers with eval.
set -euo pipefail
bnorm=${1:-build/bnorm}
cd "$(dirname "$0")/.."
model=testdata/demo_opset6.onnx

say() { if [ -t 1 ]; then printf '\n\033[1m$ %s\033[0m\n' "$*"; else printf '\n$ %s\n' "$*"; fi; }
step() { say "$@"; "$@"; }

echo "bnorm demo on $model"
step "$bnorm" inspect --summary "$model"
say "$bnorm" inspect "$model" "  (the details of bn1)"
"$bnorm" inspect "$model" | sed -n '/^bn1 /,/^$/p'
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
step "$bnorm" upgrade "$model" -o "$out/demo_opset15.onnx"
step "$bnorm" eval "$model" --compare "$out/demo_opset15.onnx" --random 1
step "$bnorm" fold --verify "$out/demo_opset15.onnx" -o "$out/demo_folded.onnx"
step "$bnorm" inspect --summary "$out/demo_folded.onnx"
step "$bnorm" eval "$model" --compare "$out/demo_folded.onnx" --random 1
echo
echo "The opset-6 model went to opset 15 and had its three BatchNormalization nodes folded,"
echo "and both steps were checked against the original's outputs."
