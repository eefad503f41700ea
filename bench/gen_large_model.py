#!/usr/bin/python3
"""Writes a benchmark model: N blocks of Conv(C -> C, 3x3, pads 1, no bias)
+ BatchNormalization + Relu at opset 13, float weights.

    /usr/bin/python3 bench/gen_large_model.py OUT.onnx [--blocks N] [--channels C] [--size S] [--external]

Defaults (the fold benchmark): 64 blocks of 256 channels on an 8x8 input,
weights inline (about 150 MB). With --external the Conv weights go, one at
a time, to OUT.data (64-byte aligned) and the small BN parameters stay
inline: bench/big_model.sh uses 16 blocks of 2048 channels on a 1x1 input
(2.4 GB of weights, beyond protobuf's 2 GiB limit for one file), with
--scale 0.02 so that activations stay of the order of 1 through the blocks.
"""
import argparse
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def external(w, name, side, side_name):
    side.write(b"\0" * ((-side.tell()) % 64))
    offset = side.tell()
    side.write(w.tobytes())
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=w.shape)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", side_name), ("offset", str(offset)), ("length", str(w.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--blocks", type=int, default=64)
    ap.add_argument("--channels", type=int, default=256)
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--external", action="store_true")
    ap.add_argument("--scale", type=float, default=0.05, help="standard deviation of the Conv weights")
    a = ap.parse_args()
    c, s = a.channels, a.size
    rng = np.random.default_rng(0)
    side_name = os.path.basename(a.out) + ".data"
    side = open(os.path.join(os.path.dirname(a.out) or ".", side_name), "wb") if a.external else None
    nodes, inits = [], []
    x = "input"
    for b in range(a.blocks):
        w = (rng.standard_normal((c, c, 3, 3), dtype=np.float32) * a.scale).astype(np.float32)
        inits.append(external(w, f"w{b}", side, side_name) if side else numpy_helper.from_array(w, f"w{b}"))
        del w
        for name, v in (("s", rng.uniform(0.5, 1.5, c)), ("b", rng.uniform(-0.1, 0.1, c)),
                        ("m", rng.uniform(-0.1, 0.1, c)), ("v", rng.uniform(0.5, 1.5, c))):
            inits.append(numpy_helper.from_array(v.astype(np.float32), f"{name}{b}"))
        nodes.append(helper.make_node("Conv", [x, f"w{b}"], [f"c{b}"], name=f"conv{b}", pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("BatchNormalization", [f"c{b}", f"s{b}", f"b{b}", f"m{b}", f"v{b}"],
                                      [f"n{b}"], name=f"bn{b}"))
        nodes.append(helper.make_node("Relu", [f"n{b}"], [f"r{b}"], name=f"relu{b}"))
        x = f"r{b}"
    if side:
        side.close()
    graph = helper.make_graph(nodes, "large", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, c, s, s])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, c, s, s])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="bnorm-bench")
    model.ir_version = 7
    with open(a.out, "wb") as f:
        f.write(model.SerializeToString())


if __name__ == "__main__":
    main()
