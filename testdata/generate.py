#!/usr/bin/python3
"""Deterministic generator of bnorm's test models (see README.md next to this file).

Usage:
  generate.py           write every generated file into the directory of this script
  generate.py --check   generate into a temporary directory and compare byte for byte
                        with the committed files; exit 1 (listing the names) on any
                        difference or missing file

Requirements: Debian's python3-onnx (ONNX 1.12) and python3-numpy, nothing else.

Determinism rules followed here: every model has its own fixed seed for
np.random.default_rng; only rng.random() (uniform doubles, stable across numpy
versions) and + - * / are used to derive values (no exp/log/sqrt, whose SIMD
implementations differ between machines); no timestamps; JSON with sorted keys;
protobufs serialised with SerializeToString (onnx.save).

manifest.json is written BY HAND below (the NORM(...) calls next to each model):
it is the expected behaviour tests assert against, never computed by bnorm code.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx import external_data_helper

HERE = os.path.dirname(os.path.abspath(__file__))
PRODUCER = "bnorm-testdata"
PRODUCER_VERSION = "1"

F32 = TensorProto.FLOAT
F16 = TensorProto.FLOAT16
BF16 = TensorProto.BFLOAT16
BOOL = TensorProto.BOOL
I64 = TensorProto.INT64


# --------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------

def uniform(rng, shape, lo, hi, dtype=np.float32):
    """Uniform values in [lo, hi) computed in float64, then rounded to dtype."""
    return (rng.random(shape) * (hi - lo) + lo).astype(dtype)


def init(name, arr):
    """Initializer with raw_data (little endian)."""
    return numpy_helper.from_array(np.ascontiguousarray(arr), name)


def init_typed(name, arr):
    """float32 initializer stored in float_data (not raw_data)."""
    arr = np.asarray(arr, dtype=np.float32)
    t = TensorProto()
    t.name = name
    t.data_type = F32
    t.dims.extend(arr.shape)
    t.float_data.extend(float(v) for v in arr.flatten())
    return t


def f32_to_bf16_bits(arr):
    """float32 -> bfloat16 bit patterns; asserts the values are exactly representable."""
    a = np.asarray(arr, dtype=np.float32)
    bits = a.view(np.uint32)
    assert np.all((bits & 0xFFFF) == 0), "value not exactly representable in bfloat16"
    return (bits >> 16).astype(np.uint16)


def init_bf16(name, arr):
    a = np.asarray(arr, dtype=np.float32)
    t = TensorProto()
    t.name = name
    t.data_type = BF16
    t.dims.extend(a.shape)
    t.raw_data = f32_to_bf16_bits(a).astype("<u2").tobytes()
    return t


def bn_params(rng, prefix, c, shape=None):
    """scale, B, mean, var initializers (float32, raw_data); var strictly positive.
    Values are rounded to multiples of 1/256 (short exact decimals)."""
    shape = [c] if shape is None else shape
    q = lambda a: (np.round(a.astype(np.float64) * 256.0) / 256.0).astype(np.float32)
    scale = q(uniform(rng, shape, 0.5, 1.5))
    bias = q(uniform(rng, shape, -0.5, 0.5))
    mean = q(uniform(rng, shape, -0.5, 0.5))
    var = q(uniform(rng, shape, 0.5, 2.0))
    names = [prefix + ".scale", prefix + ".bias", prefix + ".mean", prefix + ".var"]
    return names, [init(n, a) for n, a in zip(names, [scale, bias, mean, var])]


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def inputs_for(inits):
    """IR < 4 style: every initializer also listed as a graph input."""
    return [vi(t.name, t.data_type, list(t.dims)) for t in inits]


def make_model(graph, opsets, ir_version, **kw):
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
        producer_name=PRODUCER,
        producer_version=PRODUCER_VERSION,
        **kw)
    model.ir_version = ir_version
    return model


def check(model_or_path):
    """Run the ONNX checker (with strict shape inference); raises if it refuses."""
    onnx.checker.check_model(model_or_path, full_check=True)


def NORM(name, op, version, mode, foldable, reason=None, graph="main", outputs=1, producer=None, **extra):
    """One manifest.json norm_nodes entry, written by hand next to the model it describes.
    graph: "main" or "<node name>/<graph attribute name>" for nodes inside subgraphs;
    outputs: number of node outputs; producer: name of the node producing input 0 (None when
    it is a graph input)."""
    assert mode in ("inference", "training")
    assert foldable == (reason is None)
    d = {"name": name, "op": op, "version": version, "mode": mode,
         "foldable": foldable, "reason_not_foldable": reason, "graph": graph,
         "outputs": outputs, "producer": producer}
    d.update(extra)
    return d


def verify_entry(model, e):
    """Guard against typos in the hand-written manifest: every listed node exists with
    that op, output count and producer, and every norm node of the model is listed."""
    graphs = {"main": model.graph}
    for n in model.graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH and n.domain in ("", "ai.onnx"):
                graphs[n.name + "/" + a.name] = a.g
    listed = {(x["graph"], x["name"]) for x in e["norm_nodes"]}
    found = set()
    for gname, g in graphs.items():
        producers = {o: n.name for n in g.node for o in n.output}
        for n in g.node:
            if n.op_type in ("BatchNormalization", "InstanceNormalization") and n.domain in ("", "ai.onnx"):
                found.add((gname, n.name))
                x = [x for x in e["norm_nodes"] if x["graph"] == gname and x["name"] == n.name]
                assert len(x) == 1, (gname, n.name)
                x = x[0]
                assert x["op"] == n.op_type and x["outputs"] == len(n.output), x
                assert x["producer"] == producers.get(n.input[0]), (x, producers.get(n.input[0]))
    assert listed == found, (listed, found)
    assert e["ir_version"] == model.ir_version
    ops = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    assert ops == ([e["opset"]] if ops else []), (ops, e["opset"])


# Reasons (short strings, reused so tests can compare them if they want to).
R_TRAINING = "training mode"
R_NO_PRODUCER = "input is a graph input (no producer)"
R_IN = "InstanceNormalization uses per-instance statistics"
R_SHARED = "producer output has another consumer"
R_GRAPH_OUTPUT = "producer output is a graph output"
R_DYNAMIC_W = "producer weight is not constant"
R_NOT_LINEAR = "producer is not Conv/ConvTranspose/Gemm/MatMul"
R_SPATIAL0 = "spatial=0 (per-activation statistics)"


class Out:
    """Collects files (relative path -> bytes) and manifest entries."""

    def __init__(self):
        self.files = {}
        self.manifest = {}

    def model(self, rel, model, manifest_entry, valid, extra_bytes=None):
        if valid:
            check(model)
        verify_entry(model, manifest_entry)
        data = model.SerializeToString()
        assert rel not in self.files
        self.files[rel] = data
        manifest_entry = dict(manifest_entry)
        manifest_entry["checker_valid"] = valid
        self.manifest[rel] = manifest_entry

    def raw(self, rel, data):
        assert rel not in self.files
        self.files[rel] = data


def entry(opset, ir, norm_nodes, **extra):
    d = {"opset": opset, "ir_version": ir, "norm_nodes": norm_nodes}
    d.update(extra)
    return d


# --------------------------------------------------------------------------------------
# 1. demo_opset6.onnx
# --------------------------------------------------------------------------------------

def demo_opset6(out):
    rng = np.random.default_rng(1001)
    inits = []
    w1 = init("conv1.weight", uniform(rng, [8, 3, 3, 3], -0.3, 0.3))
    bn1_n, bn1_t = bn_params(rng, "bn1", 8)
    w2 = init("conv2.weight", uniform(rng, [8, 4, 3, 3], -0.2, 0.2))
    b2 = init("conv2.bias", uniform(rng, [8], -0.1, 0.1))
    bn2_n, bn2_t = bn_params(rng, "bn2", 8)
    wf = init("fc.weight", uniform(rng, [10, 2048], -0.03, 0.03))
    bf = init("fc.bias", uniform(rng, [10], -0.1, 0.1))
    bn3_n, bn3_t = bn_params(rng, "bn3", 10)
    inits = [w1] + bn1_t + [w2, b2] + bn2_t + [wf, bf] + bn3_t
    bn_attrs = dict(is_test=1, epsilon=1e-5, momentum=0.9)
    nodes = [
        helper.make_node("Conv", ["input", "conv1.weight"], ["conv1_out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["conv1_out"] + bn1_n, ["bn1_out"], name="bn1", **bn_attrs),
        helper.make_node("Relu", ["bn1_out"], ["relu1_out"], name="relu1"),
        helper.make_node("Conv", ["relu1_out", "conv2.weight", "conv2.bias"], ["conv2_out"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], group=2),
        helper.make_node("BatchNormalization", ["conv2_out"] + bn2_n, ["bn2_out"], name="bn2", **bn_attrs),
        helper.make_node("Relu", ["bn2_out"], ["relu2_out"], name="relu2"),
        helper.make_node("Flatten", ["relu2_out"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["fc_out"], name="fc",
                         transB=1, broadcast=1, alpha=1.0, beta=1.0),
        helper.make_node("BatchNormalization", ["fc_out"] + bn3_n, ["logits"], name="bn3", **bn_attrs),
    ]
    graph = helper.make_graph(nodes, "demo_opset6",
                              [vi("input", F32, [1, 3, 16, 16])] + inputs_for(inits),
                              [vi("logits", F32, [1, 10])], initializer=inits)
    model = make_model(graph, [("", 6)], 3)
    out.model("demo_opset6.onnx", model, entry(6, 3, [
        NORM("bn1", "BatchNormalization", 6, "inference", True, producer="conv1"),
        NORM("bn2", "BatchNormalization", 6, "inference", True, producer="conv2"),
        NORM("bn3", "BatchNormalization", 6, "inference", True, producer="fc"),
    ]), valid=True)


# --------------------------------------------------------------------------------------
# 2. legacy_opset1.onnx  (IR 1, no opset_import at all)
# --------------------------------------------------------------------------------------

def legacy_opset1(out):
    rng = np.random.default_rng(1002)
    bn_n, bn_t = bn_params(rng, "bn1", 3)
    in_scale = init("in1.scale", uniform(rng, [3], 0.5, 1.5))
    in_b = init("in1.bias", uniform(rng, [3], -0.5, 0.5))
    inits = bn_t + [in_scale, in_b]
    nodes = [
        helper.make_node("BatchNormalization", ["x"] + bn_n, ["bn1_out"], name="bn1",
                         consumed_inputs=[0, 0, 0, 1, 1], is_test=1, spatial=1,
                         epsilon=1e-5, momentum=0.9),
        helper.make_node("InstanceNormalization", ["bn1_out", "in1.scale", "in1.bias"], ["y"],
                         name="in1", consumed_inputs=[0, 0, 0], epsilon=1e-5),
    ]
    graph = helper.make_graph(nodes, "legacy_opset1",
                              [vi("x", F32, [2, 3, 4, 4])] + inputs_for(inits),
                              [vi("y", F32, [2, 3, 4, 4])], initializer=inits)
    model = make_model(graph, [("", 1)], 1)
    del model.opset_import[:]
    out.model("legacy_opset1.onnx", model, entry(1, 1, [
        NORM("bn1", "BatchNormalization", 1, "inference", False, R_NO_PRODUCER),
        NORM("in1", "InstanceNormalization", 1, "inference", False, R_IN, producer="bn1"),
    ], opset_import_present=False), valid=False)


# --------------------------------------------------------------------------------------
# 3. legacy_training_opset1.onnx
# --------------------------------------------------------------------------------------

def legacy_training_opset1(out):
    rng = np.random.default_rng(1003)
    bn_n, bn_t = bn_params(rng, "bn1", 3)
    nodes = [
        helper.make_node("BatchNormalization", ["x"] + bn_n,
                         ["y", "bn1_mean_out", "bn1_var_out", "bn1_saved_mean", "bn1_saved_var"],
                         name="bn1", consumed_inputs=[0, 0, 0, 1, 1], is_test=0, spatial=1,
                         epsilon=1e-5, momentum=0.9),
    ]
    graph = helper.make_graph(nodes, "legacy_training_opset1",
                              [vi("x", F32, [2, 3, 4, 4])] + inputs_for(bn_t),
                              [vi("y", F32, [2, 3, 4, 4])], initializer=bn_t)
    model = make_model(graph, [("", 1)], 3)
    out.model("legacy_training_opset1.onnx", model, entry(1, 3, [
        NORM("bn1", "BatchNormalization", 1, "training", False, R_TRAINING, outputs=5),
    ]), valid=True)


# --------------------------------------------------------------------------------------
# 4. bn_absent_is_test_opset6.onnx
# --------------------------------------------------------------------------------------

def bn_absent_is_test_opset6(out):
    rng = np.random.default_rng(1004)
    w = init("conv1.weight", uniform(rng, [4, 3, 3, 3], -0.3, 0.3))
    bn_n, bn_t = bn_params(rng, "bn1", 4)
    inits = [w] + bn_t
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight"], ["conv1_out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        # no is_test attribute: BN-6 default is_test=0, i.e. training mode
        helper.make_node("BatchNormalization", ["conv1_out"] + bn_n, ["y"], name="bn1",
                         epsilon=1e-5, momentum=0.9),
    ]
    graph = helper.make_graph(nodes, "bn_absent_is_test_opset6",
                              [vi("x", F32, [1, 3, 6, 6])] + inputs_for(inits),
                              [vi("y", F32, [1, 4, 6, 6])], initializer=inits)
    model = make_model(graph, [("", 6)], 3)
    out.model("bn_absent_is_test_opset6.onnx", model, entry(6, 3, [
        NORM("bn1", "BatchNormalization", 6, "training", False,
             R_TRAINING + " (is_test absent, defaults to 0)", outputs=1, producer="conv1"),
    ]), valid=True)


# --------------------------------------------------------------------------------------
# 5. bn_spatial0_opset6.onnx
# --------------------------------------------------------------------------------------

def bn_spatial0_opset6(out):
    rng = np.random.default_rng(1005)
    w = init("conv1.weight", uniform(rng, [3, 3, 3, 3], -0.3, 0.3))
    bn_n, bn_t = bn_params(rng, "bn1", 3, shape=[3, 4, 5])
    inits = [w] + bn_t
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight"], ["conv1_out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv1_out"] + bn_n, ["y"], name="bn1",
                         spatial=0, is_test=1, epsilon=1e-5, momentum=0.9),
    ]
    graph = helper.make_graph(nodes, "bn_spatial0_opset6",
                              [vi("x", F32, [2, 3, 4, 5])] + inputs_for(inits),
                              [vi("y", F32, [2, 3, 4, 5])], initializer=inits)
    model = make_model(graph, [("", 6)], 3)
    out.model("bn_spatial0_opset6.onnx", model, entry(6, 3, [
        NORM("bn1", "BatchNormalization", 6, "inference", False, R_SPATIAL0, producer="conv1"),
    ]), valid=True)


# --------------------------------------------------------------------------------------
# 6. bn_training_5out_opset9.onnx
# --------------------------------------------------------------------------------------

def bn_training_5out_opset9(out):
    rng = np.random.default_rng(1006)
    bn_n, bn_t = bn_params(rng, "bn1", 3)
    nodes = [
        helper.make_node("BatchNormalization", ["x"] + bn_n,
                         ["y", "bn1_running_mean", "bn1_running_var", "bn1_saved_mean", "bn1_saved_var"],
                         name="bn1", epsilon=1e-5, momentum=0.9),
        helper.make_node("Identity", ["bn1_saved_mean"], ["saved_mean_out"], name="saved_mean_identity"),
    ]
    graph = helper.make_graph(nodes, "bn_training_5out_opset9",
                              [vi("x", F32, [2, 3, 4, 4])],
                              [vi("y", F32, [2, 3, 4, 4]), vi("saved_mean_out", F32, [3])],
                              initializer=bn_t)
    model = make_model(graph, [("", 9)], 4)
    out.model("bn_training_5out_opset9.onnx", model, entry(9, 4, [
        NORM("bn1", "BatchNormalization", 9, "training", False, R_TRAINING, outputs=5,
             used_outputs=[0, 3]),
    ]), valid=True)


# --------------------------------------------------------------------------------------
# 7. bn15_mixed_types.onnx
# --------------------------------------------------------------------------------------

def bn15_mixed_types(out):
    rng = np.random.default_rng(1007)
    _, t = bn_params(rng, "bn1", 3)
    arr = [numpy_helper.to_array(x) for x in t]
    # bfloat16 keeps 8 significant bits: round scale and B to multiples of 1/64 first
    arr[0], arr[1] = [(np.round(a.astype(np.float64) * 64.0) / 64.0).astype(np.float32) for a in arr[:2]]
    inits = [init_bf16("bn1.scale", arr[0]), init_bf16("bn1.bias", arr[1]),
             init("bn1.mean", arr[2]), init("bn1.var", arr[3])]
    nodes = [
        helper.make_node("BatchNormalization", ["x", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"],
                         ["y", "running_mean", "running_var"], name="bn1",
                         training_mode=1, epsilon=1e-5, momentum=0.9),
    ]
    graph = helper.make_graph(nodes, "bn15_mixed_types",
                              [vi("x", F16, [2, 3, 4])],
                              [vi("y", F16, [2, 3, 4]), vi("running_mean", F32, [3]),
                               vi("running_var", F32, [3])],
                              initializer=inits)
    model = make_model(graph, [("", 15)], 8)
    out.model("bn15_mixed_types.onnx", model, entry(15, 8, [
        NORM("bn1", "BatchNormalization", 15, "training", False, R_TRAINING, outputs=3,
             types={"T": "float16", "T1": "bfloat16", "T2": "float"}),
    ]), valid=True)


# --------------------------------------------------------------------------------------
# 8. bn14_training.onnx
# --------------------------------------------------------------------------------------

def bn14_training(out):
    rng = np.random.default_rng(1008)
    w = init("conv1.weight", uniform(rng, [3, 3, 3, 3], -0.3, 0.3))
    bn_n, bn_t = bn_params(rng, "bn1", 3)
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight"], ["conv1_out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv1_out"] + bn_n,
                         ["y", "running_mean", "running_var"], name="bn1",
                         training_mode=1, epsilon=1e-5, momentum=0.9),
    ]
    graph = helper.make_graph(nodes, "bn14_training",
                              [vi("x", F32, [2, 3, 4, 4])],
                              [vi("y", F32, [2, 3, 4, 4]), vi("running_mean", F32, [3]),
                               vi("running_var", F32, [3])],
                              initializer=[w] + bn_t)
    model = make_model(graph, [("", 14)], 7)
    out.model("bn14_training.onnx", model, entry(14, 7, [
        NORM("bn1", "BatchNormalization", 14, "training", False, R_TRAINING, outputs=3, producer="conv1"),
    ]), valid=True)


# --------------------------------------------------------------------------------------
# 9. subgraph_if_opset11.onnx
# --------------------------------------------------------------------------------------

def subgraph_if_opset11(out):
    rng = np.random.default_rng(1009)
    wt = init("then_conv.weight", uniform(rng, [4, 3, 3, 3], -0.3, 0.3))
    bt_n, bt_t = bn_params(rng, "then_bn", 4)
    we = init("else_conv.weight", uniform(rng, [4, 3, 1, 1], -0.5, 0.5))
    be_n, be_t = bn_params(rng, "else_bn", 4)
    then_g = helper.make_graph([
        helper.make_node("Conv", ["x", "then_conv.weight"], ["then_conv_out"], name="then_conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["then_conv_out"] + bt_n, ["then_y"], name="then_bn",
                         epsilon=1e-5),
    ], "then_branch", [], [vi("then_y", F32, [1, 4, 6, 6])])
    else_g = helper.make_graph([
        helper.make_node("Conv", ["x", "else_conv.weight"], ["else_conv_out"], name="else_conv",
                         kernel_shape=[1, 1]),
        helper.make_node("BatchNormalization", ["else_conv_out"] + be_n, ["else_y"], name="else_bn",
                         epsilon=1e-5),
    ], "else_branch", [], [vi("else_y", F32, [1, 4, 6, 6])])
    nodes = [helper.make_node("If", ["cond"], ["y"], name="if_node",
                              then_branch=then_g, else_branch=else_g)]
    graph = helper.make_graph(nodes, "subgraph_if_opset11",
                              [vi("x", F32, [1, 3, 6, 6]), vi("cond", BOOL, [])],
                              [vi("y", F32, [1, 4, 6, 6])],
                              initializer=[wt] + bt_t + [we] + be_t)
    model = make_model(graph, [("", 11)], 6)
    out.model("subgraph_if_opset11.onnx", model, entry(11, 6, [
        NORM("then_bn", "BatchNormalization", 9, "inference", True, graph="if_node/then_branch",
             producer="then_conv"),
        NORM("else_bn", "BatchNormalization", 9, "inference", True, graph="if_node/else_branch",
             producer="else_conv"),
    ]), valid=True)


# --------------------------------------------------------------------------------------
# 10. constant_params_opset9.onnx and constant_params_opset12.onnx
# --------------------------------------------------------------------------------------

def constant_params_opset9(out):
    # Constant-9 only has the `value` attribute (value_float/value_floats arrived in
    # Constant-12; see constant_params_opset12.onnx).
    rng = np.random.default_rng(1010)
    w = init("conv1.weight", uniform(rng, [3, 3, 3, 3], -0.3, 0.3))
    _, t = bn_params(rng, "bn1", 3)
    arr = [numpy_helper.to_array(x) for x in t]
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight"], ["conv1_out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Constant", [], ["bn1_scale"], name="const_scale",
                         value=init_typed("bn1_scale_value", arr[0])),      # float_data
        helper.make_node("Constant", [], ["bn1_bias"], name="const_bias",
                         value=init("bn1_bias_value", arr[1])),             # raw_data
        helper.make_node("Constant", [], ["bn1_mean"], name="const_mean",
                         value=init("bn1_mean_value", arr[2])),
        helper.make_node("Constant", [], ["bn1_var"], name="const_var",
                         value=init_typed("bn1_var_value", arr[3])),
        helper.make_node("BatchNormalization", ["conv1_out", "bn1_scale", "bn1_bias", "bn1_mean", "bn1_var"],
                         ["y"], name="bn1", epsilon=1e-5, momentum=0.9),
    ]
    graph = helper.make_graph(nodes, "constant_params_opset9",
                              [vi("x", F32, [1, 3, 4, 4])], [vi("y", F32, [1, 3, 4, 4])],
                              initializer=[w])
    model = make_model(graph, [("", 9)], 4)
    out.model("constant_params_opset9.onnx", model, entry(9, 4, [
        NORM("bn1", "BatchNormalization", 9, "inference", True, producer="conv1",
             param_sources=["Constant(value)"] * 4),
    ]), valid=True)


def constant_params_opset12(out):
    rng = np.random.default_rng(1011)
    w1 = init("conv_c1.weight", uniform(rng, [1, 1, 3, 3], -0.3, 0.3))
    w3 = init("conv_c3.weight", uniform(rng, [3, 3, 3, 3], -0.3, 0.3))
    _, t1 = bn_params(rng, "bn_c1", 1)
    a1 = [numpy_helper.to_array(x) for x in t1]
    _, t3 = bn_params(rng, "bn_c3", 3)
    a3 = [numpy_helper.to_array(x) for x in t3]
    var_c1 = init("bn_c1.var", a1[3])
    nodes = [
        # C = 1: scale <- value (tensor [1]), B <- value_floats [1], mean <- value_float (rank 0!),
        # var <- initializer
        helper.make_node("Conv", ["x1", "conv_c1.weight"], ["conv_c1_out"], name="conv_c1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Constant", [], ["bn_c1_scale"], name="const_c1_scale",
                         value=init("bn_c1_scale_value", a1[0])),
        helper.make_node("Constant", [], ["bn_c1_bias"], name="const_c1_bias",
                         value_floats=[float(v) for v in a1[1]]),
        helper.make_node("Constant", [], ["bn_c1_mean"], name="const_c1_mean",
                         value_float=float(a1[2][0])),
        helper.make_node("BatchNormalization", ["conv_c1_out", "bn_c1_scale", "bn_c1_bias", "bn_c1_mean",
                                                "bn_c1.var"], ["y1"], name="bn_c1", epsilon=1e-5),
        # C = 3: scale <- value, B <- value_floats, mean <- value_floats, var <- value
        helper.make_node("Conv", ["x3", "conv_c3.weight"], ["conv_c3_out"], name="conv_c3",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Constant", [], ["bn_c3_scale"], name="const_c3_scale",
                         value=init("bn_c3_scale_value", a3[0])),
        helper.make_node("Constant", [], ["bn_c3_bias"], name="const_c3_bias",
                         value_floats=[float(v) for v in a3[1]]),
        helper.make_node("Constant", [], ["bn_c3_mean"], name="const_c3_mean",
                         value_floats=[float(v) for v in a3[2]]),
        helper.make_node("Constant", [], ["bn_c3_var"], name="const_c3_var",
                         value=init_typed("bn_c3_var_value", a3[3])),
        helper.make_node("BatchNormalization", ["conv_c3_out", "bn_c3_scale", "bn_c3_bias", "bn_c3_mean",
                                                "bn_c3_var"], ["y3"], name="bn_c3", epsilon=1e-5),
    ]
    graph = helper.make_graph(nodes, "constant_params_opset12",
                              [vi("x1", F32, [1, 1, 4, 4]), vi("x3", F32, [1, 3, 4, 4])],
                              [vi("y1", F32, [1, 1, 4, 4]), vi("y3", F32, [1, 3, 4, 4])],
                              initializer=[w1, w3, var_c1])
    model = make_model(graph, [("", 12)], 7)
    out.model("constant_params_opset12.onnx", model, entry(12, 7, [
        NORM("bn_c1", "BatchNormalization", 9, "inference", True, producer="conv_c1",
             param_sources=["Constant(value)", "Constant(value_floats)", "Constant(value_float)",
                            "initializer"]),
        NORM("bn_c3", "BatchNormalization", 9, "inference", True, producer="conv_c3",
             param_sources=["Constant(value)", "Constant(value_floats)", "Constant(value_floats)",
                            "Constant(value)"]),
    ]), valid=True)


# --------------------------------------------------------------------------------------
# 11. fold_cases_opset13.onnx
# --------------------------------------------------------------------------------------

def fold_cases_opset13(out):
    rng = np.random.default_rng(1013)
    inits, nodes, outputs, norms = [], [], [], []
    conv3 = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])

    def bn(name, x, y, c, reason=None, producer=None):
        n, t = bn_params(rng, name, c)
        inits.extend(t)
        nodes.append(helper.make_node("BatchNormalization", [x] + n, [y], name=name, epsilon=1e-5,
                                      momentum=0.9))
        norms.append(NORM(name, "BatchNormalization", 9, "inference", reason is None, reason,
                          producer=producer))

    # ConvTranspose, group 2, with bias: W [C_in=4, C_out/group=3, 3, 3] -> 6 output channels
    inits.append(init("convT_g2.weight", uniform(rng, [4, 3, 3, 3], -0.3, 0.3)))
    inits.append(init("convT_g2.bias", uniform(rng, [6], -0.1, 0.1)))
    nodes.append(helper.make_node("ConvTranspose", ["x", "convT_g2.weight", "convT_g2.bias"], ["convT_g2_out"],
                                  name="convT_g2", group=2, kernel_shape=[3, 3], strides=[1, 1]))
    bn("bn_convT_g2", "convT_g2_out", "y_convT_g2", 6, producer="convT_g2")
    outputs.append(vi("y_convT_g2", F32, [1, 6, 8, 8]))

    # Gemm(transB=1) with C of shape [M]
    inits.append(init("gemm_transB.weight", uniform(rng, [5, 8], -0.3, 0.3)))
    inits.append(init("gemm_transB.bias", uniform(rng, [5], -0.1, 0.1)))
    nodes.append(helper.make_node("Gemm", ["v", "gemm_transB.weight", "gemm_transB.bias"], ["gemm_transB_out"],
                                  name="gemm_transB", transB=1))
    bn("bn_gemm_transB", "gemm_transB_out", "y_gemm_transB", 5, producer="gemm_transB")
    outputs.append(vi("y_gemm_transB", F32, [2, 5]))

    # MatMul(2-D x constant 2-D)
    inits.append(init("matmul_const.weight", uniform(rng, [8, 5], -0.3, 0.3)))
    nodes.append(helper.make_node("MatMul", ["v", "matmul_const.weight"], ["matmul_const_out"],
                                  name="matmul_const"))
    bn("bn_matmul_const", "matmul_const_out", "y_matmul_const", 5, producer="matmul_const")
    outputs.append(vi("y_matmul_const", F32, [2, 5]))

    # Conv with bias, stride 2, dilation 2 (foldable)
    inits.append(init("conv_bias_strided.weight", uniform(rng, [4, 4, 3, 3], -0.2, 0.2)))
    inits.append(init("conv_bias_strided.bias", uniform(rng, [4], -0.1, 0.1)))
    nodes.append(helper.make_node("Conv", ["x", "conv_bias_strided.weight", "conv_bias_strided.bias"],
                                  ["conv_bias_strided_out"], name="conv_bias_strided",
                                  kernel_shape=[3, 3], pads=[2, 2, 2, 2], strides=[2, 2], dilations=[2, 2]))
    bn("bn_conv_bias_strided", "conv_bias_strided_out", "y_conv_bias_strided", 4, producer="conv_bias_strided")
    outputs.append(vi("y_conv_bias_strided", F32, [1, 4, 3, 3]))

    # Conv whose output also feeds a Relu (not foldable)
    inits.append(init("conv_shared_out.weight", uniform(rng, [4, 4, 3, 3], -0.2, 0.2)))
    nodes.append(helper.make_node("Conv", ["x", "conv_shared_out.weight"], ["conv_shared_out_out"],
                                  name="conv_shared_out", **conv3))
    nodes.append(helper.make_node("Relu", ["conv_shared_out_out"], ["y_relu_shared_out"], name="relu_shared_out"))
    bn("bn_conv_shared_out", "conv_shared_out_out", "y_bn_conv_shared_out", 4, R_SHARED, producer="conv_shared_out")
    outputs.append(vi("y_relu_shared_out", F32, [1, 4, 6, 6]))
    outputs.append(vi("y_bn_conv_shared_out", F32, [1, 4, 6, 6]))

    # Conv whose output is a graph output (not foldable)
    inits.append(init("conv_graph_output.weight", uniform(rng, [4, 4, 3, 3], -0.2, 0.2)))
    nodes.append(helper.make_node("Conv", ["x", "conv_graph_output.weight"], ["conv_graph_output_out"],
                                  name="conv_graph_output", **conv3))
    bn("bn_conv_graph_output", "conv_graph_output_out", "y_bn_conv_graph_output", 4, R_GRAPH_OUTPUT,
       producer="conv_graph_output")
    outputs.append(vi("conv_graph_output_out", F32, [1, 4, 6, 6]))
    outputs.append(vi("y_bn_conv_graph_output", F32, [1, 4, 6, 6]))

    # Conv whose weight is a graph input, not an initializer (not foldable)
    nodes.append(helper.make_node("Conv", ["x", "w_dynamic"], ["conv_dynamic_weight_out"],
                                  name="conv_dynamic_weight", **conv3))
    bn("bn_conv_dynamic_weight", "conv_dynamic_weight_out", "y_bn_conv_dynamic_weight", 4, R_DYNAMIC_W,
       producer="conv_dynamic_weight")
    outputs.append(vi("y_bn_conv_dynamic_weight", F32, [1, 4, 6, 6]))

    # Two Convs sharing one weight initializer, each followed by its own BN (foldable, but the
    # shared weight must be duplicated, not modified in place)
    inits.append(init("shared.weight", uniform(rng, [4, 4, 3, 3], -0.2, 0.2)))
    for s in ("a", "b"):
        nodes.append(helper.make_node("Conv", ["x", "shared.weight"], ["conv_shared_weight_%s_out" % s],
                                      name="conv_shared_weight_" + s, **conv3))
        bn("bn_conv_shared_weight_" + s, "conv_shared_weight_%s_out" % s, "y_bn_conv_shared_weight_" + s, 4,
           producer="conv_shared_weight_" + s)
        outputs.append(vi("y_bn_conv_shared_weight_" + s, F32, [1, 4, 6, 6]))

    # BN after a Relu (not foldable: nothing linear to fold into)
    nodes.append(helper.make_node("Relu", ["x"], ["relu_pre_out"], name="relu_pre"))
    bn("bn_after_relu", "relu_pre_out", "y_bn_after_relu", 4, R_NOT_LINEAR, producer="relu_pre")
    outputs.append(vi("y_bn_after_relu", F32, [1, 4, 6, 6]))

    graph = helper.make_graph(nodes, "fold_cases_opset13",
                              [vi("x", F32, [1, 4, 6, 6]), vi("v", F32, [2, 8]),
                               vi("w_dynamic", F32, [4, 4, 3, 3])],
                              outputs, initializer=inits)
    model = make_model(graph, [("", 13)], 7)
    out.model("fold_cases_opset13.onnx", model, entry(13, 7, norms), valid=True)


# --------------------------------------------------------------------------------------
# 12. external/model.onnx + external/weights.bin
# --------------------------------------------------------------------------------------

def external_model(out, tmp):
    rng = np.random.default_rng(1014)
    w = init("conv1.weight", uniform(rng, [4, 3, 3, 3], -0.3, 0.3))
    b = init("conv1.bias", uniform(rng, [4], -0.1, 0.1))
    bn_n, bn_t = bn_params(rng, "bn1", 4)
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["conv1_out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv1_out"] + bn_n, ["y"], name="bn1", epsilon=1e-5),
    ]
    graph = helper.make_graph(nodes, "external",
                              [vi("x", F32, [1, 3, 6, 6])], [vi("y", F32, [1, 4, 6, 6])],
                              initializer=[w, b] + bn_t)
    model = make_model(graph, [("", 13)], 7)
    check(model)
    external_data_helper.convert_model_to_external_data(
        model, all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    d = os.path.join(tmp, "external")
    os.makedirs(d)  # fresh directory: onnx appends to an existing weights.bin
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    check(path)
    for t in onnx.load(path, load_external_data=False).graph.initializer:
        assert t.data_location == TensorProto.EXTERNAL
        for kv in t.external_data:
            assert not (kv.key == "location" and (os.path.isabs(kv.value) or ".." in kv.value))
    for name in ("model.onnx", "weights.bin"):
        with open(os.path.join(d, name), "rb") as f:
            out.raw("external/" + name, f.read())
    out.manifest["external/model.onnx"] = e = entry(13, 7, [
        NORM("bn1", "BatchNormalization", 9, "inference", True, producer="conv1"),
    ], external_data=["weights.bin"], checker_valid=True)
    verify_entry(model, e)


# --------------------------------------------------------------------------------------
# 13. external_bad/*.onnx
# --------------------------------------------------------------------------------------

def external_bad(out):
    short = np.array([1.0, 2.0], dtype="<f4").tobytes()  # 8 bytes
    out.raw("external_bad/short.bin", short)
    cases = [
        ("abs_location", "/etc/hostname", 0, 12, "absolute external data location"),
        ("dotdot_location", "../external/weights.bin", 0, 12, "external data location escapes the model directory"),
        ("past_end", "short.bin", 4, 12, "external data range past the end of the file"),
        ("missing_file", "nope.bin", 0, 12, "external data file does not exist"),
    ]
    for i, (stem, location, offset, length, err) in enumerate(cases):
        rng = np.random.default_rng(1015)  # same parameters in every case
        bn_n, bn_t = bn_params(rng, "bn1", 3)
        scale = TensorProto()
        scale.name = "bn1.scale"
        scale.data_type = F32
        scale.dims.extend([3])
        scale.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
            e = scale.external_data.add()
            e.key = k
            e.value = v
        inits = [scale] + bn_t[1:]
        nodes = [helper.make_node("BatchNormalization", ["x"] + bn_n, ["y"], name="bn1", epsilon=1e-5)]
        graph = helper.make_graph(nodes, "external_bad_" + stem,
                                  [vi("x", F32, [1, 3, 4, 4])], [vi("y", F32, [1, 3, 4, 4])],
                                  initializer=inits)
        model = make_model(graph, [("", 13)], 7)
        out.model("external_bad/%s.onnx" % stem, model, entry(13, 7, [
            NORM("bn1", "BatchNormalization", 9, "inference", False, R_NO_PRODUCER),
        ], external_data=[location], expected_load_error=err), valid=False)


# --------------------------------------------------------------------------------------
# 14. tensors/
# --------------------------------------------------------------------------------------

def tensors(out):
    # [2, 3]: 1.0, -2.5, big (65504 for f16 = f16 max), smallest subnormal, 0, an "odd" value
    f32_vals = np.array([1.0, -2.5, 65504.0, 2.0 ** -149, 0.0, 1.0 / 3.0], dtype=np.float32)
    f64_vals = np.array([1.0, -2.5, 65504.0, 2.0 ** -1074, 0.0, 0.1], dtype=np.float64)
    f16_vals = np.array([1.0, -2.5, 65504.0, 2.0 ** -24, 0.0, 0.1], dtype=np.float16)
    # bfloat16: max finite (0x7F7F), smallest subnormal (0x0001), 0.1 rounded to bf16 (0x3DCD)
    bf16_bits = np.array([0x3F80, 0xC020, 0x7F7F, 0x0001, 0x0000, 0x3DCD], dtype=np.uint16)
    bf16_vals = (bf16_bits.astype(np.uint32) << 16).view(np.float32)
    shape = [2, 3]
    values = {}

    def tp(name, dtype):
        t = TensorProto()
        t.name = name
        t.data_type = dtype
        t.dims.extend(shape)
        return t

    def record(fname, dtype_name, vals, encoding, bits=None):
        d = {"dtype": dtype_name, "dims": shape, "encoding": encoding,
             "values": [float(v) for v in np.asarray(vals, dtype=np.float64)]}
        if bits is not None:
            d["bits"] = ["0x%04X" % int(b) for b in bits]
        values[fname] = d

    t = tp("f32_typed", TensorProto.FLOAT)
    t.float_data.extend(float(v) for v in f32_vals)
    out.raw("tensors/f32_typed.pb", t.SerializeToString())
    record("f32_typed.pb", "float32", f32_vals, "float_data")

    t = tp("f32_raw", TensorProto.FLOAT)
    t.raw_data = f32_vals.astype("<f4").tobytes()
    out.raw("tensors/f32_raw.pb", t.SerializeToString())
    record("f32_raw.pb", "float32", f32_vals, "raw_data")

    t = tp("f64_raw", TensorProto.DOUBLE)
    t.raw_data = f64_vals.astype("<f8").tobytes()
    out.raw("tensors/f64_raw.pb", t.SerializeToString())
    record("f64_raw.pb", "float64", f64_vals, "raw_data")

    f16_bits = f16_vals.view(np.uint16)
    t = tp("f16_raw", TensorProto.FLOAT16)
    t.raw_data = f16_vals.astype("<f2").tobytes()
    out.raw("tensors/f16_raw.pb", t.SerializeToString())
    record("f16_raw.pb", "float16", f16_vals, "raw_data", f16_bits)

    t = tp("f16_int32data", TensorProto.FLOAT16)
    t.int32_data.extend(int(b) for b in f16_bits)  # bit pattern, zero-extended
    out.raw("tensors/f16_int32data.pb", t.SerializeToString())
    record("f16_int32data.pb", "float16", f16_vals, "int32_data", f16_bits)

    t = tp("bf16_raw", TensorProto.BFLOAT16)
    t.raw_data = bf16_bits.astype("<u2").tobytes()
    out.raw("tensors/bf16_raw.pb", t.SerializeToString())
    record("bf16_raw.pb", "bfloat16", bf16_vals, "raw_data", bf16_bits)

    t = tp("bf16_int32data", TensorProto.BFLOAT16)
    t.int32_data.extend(int(b) for b in bf16_bits)
    out.raw("tensors/bf16_int32data.pb", t.SerializeToString())
    record("bf16_int32data.pb", "bfloat16", bf16_vals, "int32_data", bf16_bits)

    for fname, arr, dname in (("f32.npy", f32_vals, "float32"), ("f64.npy", f64_vals, "float64"),
                              ("f16.npy", f16_vals, "float16")):
        out.raw("tensors/" + fname, npy_bytes(arr.reshape(shape)))
        record(fname, dname, arr, "npy")

    # consistency: every encoding decodes to the recorded values
    for fname, d in values.items():
        if fname.endswith(".pb"):
            tt = TensorProto()
            tt.ParseFromString(out.files["tensors/" + fname])
            if tt.data_type == TensorProto.BFLOAT16:
                assert d["values"] == [float(v) for v in bf16_vals]
            else:
                got = numpy_helper.to_array(tt).astype(np.float64).flatten().tolist()
                assert got == d["values"], (fname, got, d["values"])
    out.raw("tensors/values.json", dumps(values))


def npy_bytes(arr):
    """Version 1.0 .npy file, written by hand so the header cannot vary with numpy versions."""
    descr = {np.dtype(np.float32): "<f4", np.dtype(np.float64): "<f8", np.dtype(np.float16): "<f2"}[arr.dtype]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(d) for d in arr.shape) + ("," if arr.ndim == 1 else ""))
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    data = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1")
    return data + np.ascontiguousarray(arr).astype(descr).tobytes()


# --------------------------------------------------------------------------------------
# 15. every_field.onnx
# --------------------------------------------------------------------------------------

def every_field(out):
    rng = np.random.default_rng(1016)
    w = init("conv1.weight", uniform(rng, [2, 2, 3, 3], -0.3, 0.3))
    b = init("conv1.bias", uniform(rng, [2], -0.1, 0.1))
    bn_n, bn_t = bn_params(rng, "bn1", 2)
    ss_scale = init("ss.scale", uniform(rng, [1, 2, 1, 1], 0.5, 1.5))
    ss_shift = init("ss.shift", uniform(rng, [1, 2, 1, 1], -0.5, 0.5))
    step = init("step", np.array([0.0], dtype=np.float32))

    # sparse initializer: dense shape [1, 2, 4, 4], 3 non-zeros (linearized indices, sorted)
    sp_values = init("sparse_bias", np.array([0.5, -1.25, 2.0], dtype=np.float32))
    sp_indices = init("sparse_bias_indices", np.array([1, 17, 30], dtype=np.int64))
    sparse_bias = helper.make_sparse_tensor(sp_values, sp_indices, [1, 2, 4, 4])

    # function com.example.ScaleShift(X, S, Bias) = LeakyRelu(X * S + Bias, alpha=@alpha)
    leaky = helper.make_node("LeakyRelu", ["t1"], ["Y"], name="fn_leaky")
    a = AttributeRef("alpha", "alpha", onnx.AttributeProto.FLOAT)
    leaky.attribute.append(a)
    fn = helper.make_function(
        "com.example", "ScaleShift", ["X", "S", "Bias"], ["Y"],
        [helper.make_node("Mul", ["X", "S"], ["t0"], name="fn_mul"),
         helper.make_node("Add", ["t0", "Bias"], ["t1"], name="fn_add"),
         leaky],
        [helper.make_opsetid("", 15)], attributes=["alpha"],
        doc_string="Y = LeakyRelu(X * S + Bias)")

    # a tiny graph for GRAPH / GRAPHS attributes
    def tiny(name):
        return helper.make_graph([helper.make_node("Identity", ["a"], ["b"], name=name + "_id")], name,
                                 [vi("a", F32, [1])], [vi("b", F32, [1])])

    attr_tensor = init("attr_tensor", np.array([1, 2, 3], dtype=np.int64))
    attr_sparse = helper.make_sparse_tensor(init("attr_sp_values", np.array([4.0], dtype=np.float32)),
                                            init("attr_sp_indices", np.array([2], dtype=np.int64)), [5])
    custom = helper.make_node(
        "AllAttrs", ["ss_out", "sparse_bias"], ["z"], name="custom_all_attrs", domain="com.example",
        doc_string="custom-domain node carrying one attribute of every kind",
        a_float=0.5, a_int=-7, a_string=b"hello", a_tensor=attr_tensor, a_graph=tiny("g_single"),
        a_floats=[1.0, 2.5, -0.125], a_ints=[1, -2, 3], a_strings=[b"a", b"bc", b""],
        a_sparse_tensor=attr_sparse,
        a_tensors=[init("attr_t0", np.array([1.5], dtype=np.float32)),
                   init("attr_t1", np.array([[1, 2]], dtype=np.int32))],
        a_graphs=[tiny("g_list0"), tiny("g_list1")],
        a_sparse_tensors=[attr_sparse],
        a_type_proto=helper.make_tensor_type_proto(F32, [2, "M"]),
        a_type_protos=[helper.make_tensor_type_proto(I64, [1]), helper.make_tensor_type_proto(F16, None)],
    )
    for at in custom.attribute:
        if at.name == "a_float":
            at.doc_string = "attribute doc string"

    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["conv1_out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], doc_string="conv node doc string"),
        helper.make_node("BatchNormalization", ["conv1_out"] + bn_n, ["bn1_out"], name="bn1",
                         epsilon=1e-3, momentum=0.8, doc_string="bn node doc string"),
        helper.make_node("ScaleShift", ["bn1_out", "ss.scale", "ss.shift"], ["ss_out"], name="scale_shift",
                         domain="com.example", alpha=0.1),
        custom,  # also consumes the sparse initializer (a standard op would refuse a sparse input)
    ]

    x = vi("x", F32, ["N", 2, 4, 4])
    x.type.denotation = "TENSOR"
    x.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    x.type.tensor_type.shape.dim[1].denotation = "DATA_CHANNEL"
    x.doc_string = "input doc string"
    graph = helper.make_graph(
        nodes, "every_field", [x], [vi("z", F32, ["N", 2, 4, 4])],
        initializer=[w, b] + bn_t + [ss_scale, ss_shift, step],
        doc_string="graph doc string",
        value_info=[vi("conv1_out", F32, ["N", 2, 4, 4]), vi("bn1_out", F32, ["N", 2, 4, 4]),
                    vi("ss_out", F32, ["N", 2, 4, 4])],
        sparse_initializer=[sparse_bias])
    qa = graph.quantization_annotation.add()
    qa.tensor_name = "conv1_out"
    for k, v in (("SCALE_TENSOR", "qa_scale"), ("ZERO_POINT_TENSOR", "qa_zero_point")):
        e = qa.quant_parameter_tensor_names.add()
        e.key = k
        e.value = v

    # training_info: initialization sets step := 0, algorithm does step := step + 1
    init_g = helper.make_graph(
        [helper.make_node("Constant", [], ["step_init"], name="ti_const",
                          value=init("step_init_value", np.array([0.0], dtype=np.float32)))],
        "training_initialization", [], [vi("step_init", F32, [1])])
    algo_g = helper.make_graph(
        [helper.make_node("Add", ["step", "one"], ["step_next"], name="ti_increment")],
        "training_algorithm", [], [vi("step_next", F32, [1])],
        initializer=[init("one", np.array([1.0], dtype=np.float32))])
    ti = helper.make_training_info(algo_g, [("step", "step_next")], init_g, [("step", "step_init")])

    model = make_model(graph, [("", 15), ("com.example", 1)], 8,
                       doc_string="model doc string", domain="org.bnorm.testdata", model_version=42,
                       functions=[fn])
    model.training_info.extend([ti])
    helper.set_model_props(model, {"author": "bnorm testdata", "purpose": "lossless round trip",
                                   "unicode": "\u00e9\u00e8 \u2713"})
    out.model("every_field.onnx", model, entry(15, 8, [
        NORM("bn1", "BatchNormalization", 15, "inference", True, producer="conv1"),
    ]), valid=True)


def AttributeRef(name, ref, typ):
    a = onnx.AttributeProto()
    a.name = name
    a.ref_attr_name = ref
    a.type = typ
    return a


# --------------------------------------------------------------------------------------
# 16. small_cnn_opset{6,7,8,9}.onnx
# --------------------------------------------------------------------------------------

def small_cnn(out, opset):
    rng = np.random.default_rng(1100 + opset)  # different weights per opset
    w = init("conv1.weight", uniform(rng, [4, 3, 3, 3], -0.3, 0.3))
    b = init("conv1.bias", uniform(rng, [4], -0.1, 0.1))
    bn_n, bn_t = bn_params(rng, "bn1", 4)
    fw = init("fc.weight", uniform(rng, [5, 64], -0.2, 0.2))
    fb = init("fc.bias", uniform(rng, [5], -0.1, 0.1))
    inits = [w, b] + bn_t + [fw, fb]
    ir = {6: 3, 7: 3, 8: 3, 9: 4}[opset]
    bn_attrs = dict(epsilon=1e-5, momentum=0.9)
    if opset == 6:
        bn_attrs["is_test"] = 1
    elif opset == 7:
        bn_attrs["spatial"] = 1
    gemm_attrs = dict(transB=1)
    if opset == 6:
        gemm_attrs["broadcast"] = 1
    drop_attrs = dict(ratio=0.5)
    if opset == 6:
        drop_attrs["is_test"] = 1
    nodes = [
        helper.make_node("Conv", ["input", "conv1.weight", "conv1.bias"], ["conv1_out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv1_out"] + bn_n, ["bn1_out"], name="bn1", **bn_attrs),
        helper.make_node("Relu", ["bn1_out"], ["relu1_out"], name="relu1"),
        helper.make_node("MaxPool", ["relu1_out"], ["pool1_out"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["pool1_out"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["fc_out"], name="fc", **gemm_attrs),
        helper.make_node("Dropout", ["fc_out"], ["dropout_out"], name="dropout", **drop_attrs),
        helper.make_node("Softmax", ["dropout_out"], ["probs"], name="softmax", axis=1),
    ]
    graph_inputs = [vi("input", F32, [1, 3, 8, 8])] + (inputs_for(inits) if ir < 4 else [])
    graph = helper.make_graph(nodes, "small_cnn_opset%d" % opset, graph_inputs,
                              [vi("probs", F32, [1, 5])], initializer=inits)
    model = make_model(graph, [("", opset)], ir)
    version = {6: 6, 7: 7, 8: 7, 9: 9}[opset]
    out.model("small_cnn_opset%d.onnx" % opset, model, entry(opset, ir, [
        NORM("bn1", "BatchNormalization", version, "inference", True, producer="conv1"),
    ]), valid=True)


# --------------------------------------------------------------------------------------
# 17. resnet_block_opset9.onnx
# --------------------------------------------------------------------------------------

def resnet_block_opset9(out, changed=False):
    """changed: the same network with output channel 0 of block2_conv1's weights 1% off (the trace example of
    docs/cli.md compares the two)."""
    rng = np.random.default_rng(1017)
    inits, nodes, norms = [], [], []
    cur = "input"
    for i in range(1, 5):
        p = "block%d" % i
        for j in (1, 2):
            w = uniform(rng, [16, 16, 3, 3], -0.08, 0.08)
            if changed and (i, j) == (2, 1):
                w = w.copy()
                w[0] *= np.float32(1.01)
            inits.append(init("%s_conv%d.weight" % (p, j), w))
            n, t = bn_params(rng, "%s_bn%d" % (p, j), 16)
            inits.extend(t)
            src = cur if j == 1 else "%s_relu1_out" % p
            nodes.append(helper.make_node("Conv", [src, "%s_conv%d.weight" % (p, j)], ["%s_conv%d_out" % (p, j)],
                                          name="%s_conv%d" % (p, j), kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
            nodes.append(helper.make_node("BatchNormalization", ["%s_conv%d_out" % (p, j)] + n,
                                          ["%s_bn%d_out" % (p, j)], name="%s_bn%d" % (p, j),
                                          epsilon=1e-5, momentum=0.9))
            norms.append(NORM("%s_bn%d" % (p, j), "BatchNormalization", 9, "inference", True,
                              producer="%s_conv%d" % (p, j)))
            if j == 1:
                nodes.append(helper.make_node("Relu", ["%s_bn1_out" % p], ["%s_relu1_out" % p], name="%s_relu1" % p))
        nodes.append(helper.make_node("Add", ["%s_bn2_out" % p, cur], ["%s_add_out" % p], name="%s_add" % p))
        last = "output" if i == 4 else "%s_out" % p
        nodes.append(helper.make_node("Relu", ["%s_add_out" % p], [last], name="%s_relu2" % p))
        cur = last
    graph = helper.make_graph(nodes, "resnet_block_opset9", [vi("input", F32, [1, 16, 8, 8])],
                              [vi("output", F32, [1, 16, 8, 8])], initializer=inits)
    model = make_model(graph, [("", 9)], 4)
    name = "resnet_block_changed_opset9.onnx" if changed else "resnet_block_opset9.onnx"
    out.model(name, model, entry(9, 4, norms), valid=True)


# --------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------

def dumps(obj):
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=True) + "\n").encode("ascii")


def generate(dest):
    """Build every file and write it under dest. Returns the sorted list of relative paths."""
    out = Out()
    with tempfile.TemporaryDirectory(prefix="bnorm-gen-ext-") as tmp:
        demo_opset6(out)
        legacy_opset1(out)
        legacy_training_opset1(out)
        bn_absent_is_test_opset6(out)
        bn_spatial0_opset6(out)
        bn_training_5out_opset9(out)
        bn15_mixed_types(out)
        bn14_training(out)
        subgraph_if_opset11(out)
        constant_params_opset9(out)
        constant_params_opset12(out)
        fold_cases_opset13(out)
        external_model(out, tmp)
        external_bad(out)
        tensors(out)
        every_field(out)
        for opset in (6, 7, 8, 9):
            small_cnn(out, opset)
        resnet_block_opset9(out)
        resnet_block_opset9(out, changed=True)
    out.raw("manifest.json", dumps(out.manifest))
    for rel in sorted(out.files):
        path = os.path.join(dest, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(out.files[rel])
    total = sum(len(v) for v in out.files.values())
    assert total < 2 * 1024 * 1024, "generated files too large: %d bytes" % total
    return sorted(out.files)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare freshly generated files with the committed ones; exit 1 on difference")
    args = ap.parse_args()
    if not args.check:
        names = generate(HERE)
        print("wrote %d files into %s" % (len(names), HERE))
        return 0
    with tempfile.TemporaryDirectory(prefix="bnorm-gen-check-") as tmp:
        names = generate(tmp)
        bad = []
        for rel in names:
            committed = os.path.join(HERE, *rel.split("/"))
            if not os.path.isfile(committed):
                bad.append(rel + " (missing)")
                continue
            with open(committed, "rb") as a, open(os.path.join(tmp, *rel.split("/")), "rb") as b:
                if a.read() != b.read():
                    bad.append(rel + " (differs)")
    if bad:
        print("testdata is out of date; run testdata/generate.py and commit the result:")
        for b in bad:
            print("  " + b)
        return 1
    print("all %d generated files are identical to the committed ones" % len(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
