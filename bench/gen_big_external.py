#!/usr/bin/python3
"""Writes a model whose weights exceed 2 GiB, in external data: N blocks of
Conv(C -> C, 3x3, pads 1, no bias) + BatchNormalization + Relu at opset 13,
input [1, C, 1, 1] (so that evaluating it stays cheap). The Conv weights go,
one at a time, to OUT.data (64-byte aligned); the small BN parameters stay
inline. Default: 16 blocks of 2048 channels, 2.4 GB of weights.

    /usr/bin/python3 bench/gen_big_external.py OUT.onnx [--blocks N] [--channels C]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--blocks", type=int, default=16)
    ap.add_argument("--channels", type=int, default=2048)
    a = ap.parse_args()
    c = a.channels
    rng = np.random.default_rng(0)
    side_name = os.path.basename(a.out) + ".data"
    nodes, inits = [], []
    x = "input"
    with open(os.path.join(os.path.dirname(a.out) or ".", side_name), "wb") as side:
        for b in range(a.blocks):
            w = (rng.standard_normal((c, c, 3, 3), dtype=np.float32) * 0.02).astype(np.float32)
            side.write(b"\0" * ((-side.tell()) % 64))
            offset = side.tell()
            side.write(w.tobytes())
            t = TensorProto(name=f"w{b}", data_type=TensorProto.FLOAT, dims=w.shape)
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", side_name), ("offset", str(offset)), ("length", str(w.nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            inits.append(t)
            del w
            for name, v in (("s", rng.uniform(0.5, 1.5, c)), ("b", rng.uniform(-0.1, 0.1, c)),
                            ("m", rng.uniform(-0.1, 0.1, c)), ("v", rng.uniform(0.5, 1.5, c))):
                inits.append(numpy_helper.from_array(v.astype(np.float32), f"{name}{b}"))
            nodes.append(helper.make_node("Conv", [x, f"w{b}"], [f"c{b}"], name=f"conv{b}", pads=[1, 1, 1, 1]))
            nodes.append(helper.make_node("BatchNormalization", [f"c{b}", f"s{b}", f"b{b}", f"m{b}", f"v{b}"],
                                          [f"n{b}"], name=f"bn{b}"))
            nodes.append(helper.make_node("Relu", [f"n{b}"], [f"r{b}"], name=f"relu{b}"))
            x = f"r{b}"
    graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, c, 1, 1])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, c, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="bnorm-bench")
    model.ir_version = 7
    with open(a.out, "wb") as f:
        f.write(model.SerializeToString())


if __name__ == "__main__":
    main()
