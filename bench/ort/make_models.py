#!/usr/bin/python3
"""Single-node BatchNormalization models (opset 15, inference, float) for the
onnxruntime side-by-side run: one per benchmark shape.
    /usr/bin/python3 bench/ort/make_models.py OUT_DIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHAPES = {"large": [32, 64, 112, 112], "cache": [1, 64, 56, 56]}


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(0)
    for name, shape in SHAPES.items():
        c = shape[1]
        inits = [numpy_helper.from_array(rng.uniform(0.5, 1.5, c).astype(np.float32), n) for n in ("s", "v")]
        inits += [numpy_helper.from_array(rng.uniform(-0.5, 0.5, c).astype(np.float32), n) for n in ("b", "m")]
        node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn")
        g = helper.make_graph([node], "bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])
        m.ir_version = 8
        onnx.save(m, f"{out}/bn_{name}.onnx")


if __name__ == "__main__":
    main()
