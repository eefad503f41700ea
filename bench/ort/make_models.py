#!/usr/bin/python3
"""Single-node BatchNormalization models (opset 15, inference, float) for the
onnxruntime side-by-side run: one per benchmark shape; and the normalization
family's: LayerNormalization-17 and GroupNormalization-18 (norm_models).
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
    norm_models(out, rng)


# The normalization family's shapes (bench/kernels_bench.cpp's family rows):
# LayerNormalization-17 over the last axis, GroupNormalization-18 with 32
# groups. ONNX 1.12's checker does not know GroupNormalization-18: its node
# is written by hand and the model is not checked.
LN_SHAPES = {"ln_large": [32, 512, 768], "ln_cache": [1, 128, 768]}
GN_SHAPE = [8, 256, 56, 56]


def norm_models(out, rng):
    for name, shape in LN_SHAPES.items():
        inits = [numpy_helper.from_array(rng.uniform(0.5, 1.5, shape[-1]).astype(np.float32), "s"),
                 numpy_helper.from_array(rng.uniform(-0.5, 0.5, shape[-1]).astype(np.float32), "b")]
        node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], name="ln", axis=-1, epsilon=1e-5)
        save(out, name, node, shape, inits, 17)
    groups = 32
    inits = [numpy_helper.from_array(rng.uniform(0.5, 1.5, groups).astype(np.float32), "s"),
             numpy_helper.from_array(rng.uniform(-0.5, 0.5, groups).astype(np.float32), "b")]
    node = onnx.NodeProto()
    node.op_type, node.name = "GroupNormalization", "gn"
    node.input.extend(["x", "s", "b"])
    node.output.append("y")
    node.attribute.extend([helper.make_attribute("num_groups", groups), helper.make_attribute("epsilon", 1e-5)])
    save(out, "gn", node, GN_SHAPE, inits, 18)


def save(out, name, node, shape, inits, opset):
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, f"{out}/{name}.onnx")


if __name__ == "__main__":
    main()
