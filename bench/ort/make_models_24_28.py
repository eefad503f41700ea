#!/usr/bin/python3
"""The models of bench/ort/upgrade_24_28.sh: an MLP block at opset 28 (RMSNormalization-23, MatMul, SwiGLU-28,
Add, Swish-24 with alpha 1.5), an Attention-23 decoder step with a KV cache (causal, past 3 and one new token) and a
TopK-24.
    /usr/bin/python3 bench/ort/make_models_24_28.py OUT_DIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh


def save(path, nodes, inputs, outputs, inits=(), opset=28, ir=13):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = ir
    onnx.save(m, path)


def main():
    out = sys.argv[1]
    vi = h.make_tensor_value_info
    rng = np.random.default_rng(0)
    d, hidden = 8, 16
    inits = [nh.from_array(rng.standard_normal(d).astype(np.float32), "ns"),
             nh.from_array((rng.standard_normal((d, hidden)) * 0.2).astype(np.float32), "wg"),
             nh.from_array((rng.standard_normal((d, hidden)) * 0.2).astype(np.float32), "wu"),
             nh.from_array((rng.standard_normal((hidden, d)) * 0.2).astype(np.float32), "wd")]
    nodes = [h.make_node("RMSNormalization", ["x", "ns"], ["n"], name="norm"),
             h.make_node("MatMul", ["n", "wg"], ["g"], name="gate"),
             h.make_node("MatMul", ["n", "wu"], ["u"], name="up"),
             h.make_node("SwiGLU", ["g", "u"], ["a"], name="glu"),
             h.make_node("MatMul", ["a", "wd"], ["d"], name="down"),
             h.make_node("Add", ["x", "d"], ["r"], name="res"),
             h.make_node("Swish", ["r"], ["y"], name="swish", alpha=1.5)]
    save(f"{out}/mlp28.onnx", nodes, [vi("x", T.FLOAT, ["N", 4, d])], [vi("y", T.FLOAT, ["N", 4, d])], inits)
    q = [1, 2, 1, 4]
    past = [1, 2, 3, 4]
    save(f"{out}/attn23.onnx",
         [h.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "present_k", "present_v"], name="attn",
                      is_causal=1)],
         [vi("q", T.FLOAT, q), vi("k", T.FLOAT, q), vi("v", T.FLOAT, q), vi("pk", T.FLOAT, past),
          vi("pv", T.FLOAT, past)],
         [vi("y", T.FLOAT, q), vi("present_k", T.FLOAT, [1, 2, 4, 4]), vi("present_v", T.FLOAT, [1, 2, 4, 4])],
         opset=23, ir=11)
    save(f"{out}/topk24.onnx", [h.make_node("TopK", ["x", "k"], ["v", "i"], name="top")], [vi("x", T.FLOAT, [3, 6])],
         [vi("v", T.FLOAT, [3, 2]), vi("i", T.INT64, [3, 2])], [nh.from_array(np.array([2], np.int64), "k")],
         opset=24, ir=12)


if __name__ == "__main__":
    main()
