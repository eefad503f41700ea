#!/usr/bin/python3
"""The models of bench/ort/upgrade_24_28.sh: an MLP block at opset 28 (RMSNormalization-23, MatMul, SwiGLU-28,
Add, Swish-24 with alpha 1.5), an Attention-23 decoder step with a KV cache (causal, past 3 and one new token) and a
TopK-24, and a decoder block at 28 (RMSNormalization, 3-D grouped-query causal Attention-24 with a KV cache and a bool
padding mask, SwiGLU-28).
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
    block(out, rng)


def block(out, rng):
    vi = h.make_tensor_value_info
    e, hq, hkv, hd, past, seq = 16, 4, 2, 4, 5, 3

    def w(name, shape):
        return nh.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)

    inits = [w("n1", e), w("n2", e), w("wq", (e, hq * hd)), w("wk", (e, hkv * hd)), w("wv", (e, hkv * hd)),
             w("wo", (hq * hd, e)), w("wg", (e, 32)), w("wu", (e, 32)), w("wd", (32, e))]
    nodes = [h.make_node("RMSNormalization", ["x", "n1"], ["h"], name="attn_norm"),
             h.make_node("MatMul", ["h", "wq"], ["q"], name="q_proj"),
             h.make_node("MatMul", ["h", "wk"], ["k"], name="k_proj"),
             h.make_node("MatMul", ["h", "wv"], ["v"], name="v_proj"),
             h.make_node("Attention", ["q", "k", "v", "keep", "pk", "pv"], ["a", "present_k", "present_v"],
                         name="attn", q_num_heads=hq, kv_num_heads=hkv, is_causal=1),
             h.make_node("MatMul", ["a", "wo"], ["o"], name="o_proj"),
             h.make_node("Add", ["x", "o"], ["r"], name="res1"),
             h.make_node("RMSNormalization", ["r", "n2"], ["h2"], name="mlp_norm"),
             h.make_node("MatMul", ["h2", "wg"], ["g"], name="gate"),
             h.make_node("MatMul", ["h2", "wu"], ["u"], name="up"),
             h.make_node("SwiGLU", ["g", "u"], ["act"], name="glu"),
             h.make_node("MatMul", ["act", "wd"], ["m"], name="down"),
             h.make_node("Add", ["r", "m"], ["y"], name="res2")]
    total = past + seq
    save(f"{out}/block28.onnx", nodes,
         [vi("x", T.FLOAT, [1, seq, e]), vi("pk", T.FLOAT, [1, hkv, past, hd]), vi("pv", T.FLOAT, [1, hkv, past, hd]),
          vi("keep", T.BOOL, [1, 1, seq, total])],
         [vi("y", T.FLOAT, [1, seq, e]), vi("present_k", T.FLOAT, [1, hkv, total, hd]),
          vi("present_v", T.FLOAT, [1, hkv, total, hd])], inits)


if __name__ == "__main__":
    main()
