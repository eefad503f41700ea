#!/usr/bin/python3
"""Writes the fold benchmark's model: 64 blocks of Conv(256 -> 256, 3x3, no bias)
+ BatchNormalization + Relu at opset 13, float weights (about 150 MB).

    /usr/bin/python3 bench/gen_large_model.py OUT.onnx [--blocks N] [--channels C]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--blocks", type=int, default=64)
    ap.add_argument("--channels", type=int, default=256)
    a = ap.parse_args()
    c = a.channels
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    x = "input"
    for b in range(a.blocks):
        w = (rng.standard_normal((c, c, 3, 3), dtype=np.float32) * 0.05).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{b}"))
        for name, v in (("s", rng.uniform(0.5, 1.5, c)), ("b", rng.uniform(-0.1, 0.1, c)),
                        ("m", rng.uniform(-0.1, 0.1, c)), ("v", rng.uniform(0.5, 1.5, c))):
            inits.append(numpy_helper.from_array(v.astype(np.float32), f"{name}{b}"))
        nodes.append(helper.make_node("Conv", [x, f"w{b}"], [f"c{b}"], name=f"conv{b}", pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("BatchNormalization", [f"c{b}", f"s{b}", f"b{b}", f"m{b}", f"v{b}"],
                                      [f"n{b}"], name=f"bn{b}"))
        nodes.append(helper.make_node("Relu", [f"n{b}"], [f"r{b}"], name=f"relu{b}"))
        x = f"r{b}"
    graph = helper.make_graph(nodes, "large", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, c, 8, 8])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, c, 8, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="bnorm-bench")
    model.ir_version = 7
    onnx.save(model, a.out)


if __name__ == "__main__":
    main()
