#!/bin/sh
# bnorm upgrade at opsets 24..28 against onnxruntime (docs/upgrade.md, "Opsets 24..28 against onnxruntime 1.30"):
# generated models (an MLP block at 28: RMSNormalization, SwiGLU, Swish; an Attention-23 decoder step with a KV
# cache; TopK-24; a decoder block at 28 with a 3-D grouped-query Attention-24, its KV cache and a padding mask) are
# converted by bnorm (--verify where bnorm's evaluator runs both sides) and run in onnxruntime
# by compare_models.py against bnorm's evaluation; the Attention taken to 24 is compared with the Attention-23 in
# onnxruntime alone (bnorm's evaluator does not run Attention-24).
#   sh bench/ort/upgrade_24_28.sh BUILD/bnorm NODE_MODULES   (NODE_MODULES holds onnxruntime-node)
set -e
BNORM=$(realpath "$1"); NODE_MODULES=$(realpath "$2"); HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
/usr/bin/python3 "$HERE/make_models_24_28.py" "$OUT"
cd "$OUT"
for to in 26 25 24 23; do "$BNORM" upgrade mlp28.onnx -o "mlp_$to.onnx" --to "$to" --verify --dim N=2 -q; done
"$BNORM" upgrade attn23.onnx -o attn24.onnx --to 24 -q
"$BNORM" upgrade attn24.onnx -o attn_back23.onnx --to 23 -q
"$BNORM" upgrade attn23.onnx -o attn17.onnx --to 17 --verify -q  # Attention lowered to MatMul, Softmax, MatMul
"$BNORM" upgrade topk24.onnx -o topk23.onnx --to 23 --verify -q
for to in 26 24 23 21 17; do "$BNORM" upgrade block28.onnx -o "block_$to.onnx" --to "$to" --verify -q; done
/usr/bin/python3 "$HERE/compare_models.py" --bnorm "$BNORM" --node-path "$NODE_MODULES" --dim N=2 \
  mlp_26.onnx mlp_25.onnx mlp_24.onnx mlp_23.onnx attn23.onnx attn_back23.onnx attn17.onnx topk24.onnx topk23.onnx \
  block_26.onnx block_24.onnx block_23.onnx block_21.onnx block_17.onnx || true
NODE_PATH="$NODE_MODULES" node "$HERE/same_outputs.js" attn23.onnx attn24.onnx
