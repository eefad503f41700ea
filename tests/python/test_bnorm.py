#!/usr/bin/python3
"""The Python module (`import bnorm`, docs/python.md) against the CLI and against numpy.

Run by ctest with /usr/bin/python3, PYTHONPATH at the build's python/ folder and BNORM_CLI naming the built
binary. Every model is made here with onnx.helper; expected numbers come from numpy (float64 references) or
from the CLI run on the same model, never from the module under test.
"""
import ast
import gc
import inspect as pyinspect
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import bnorm

CLI = os.environ["BNORM_CLI"]
SOURCE = Path(os.environ.get("BNORM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
PATH_FIELDS = {"input", "output", "file", "a", "b"}
# What the CLI's report says about the file it wrote, which the module leaves to the caller.
WRITE_FIELDS = {"written", "unchanged_copy"}


def cli(*args, check=None):
    r = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if check is not None and r.returncode != check:
        raise AssertionError(f"bnorm {' '.join(map(str, args))}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def cli_error(r):
    """The message of the CLI's 'bnorm: error: ...' line and its continuation lines, without the hint."""
    lines = r.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("bnorm: error: "))
    out = [lines[start][len("bnorm: error: "):]]
    for line in lines[start + 1:]:
        if line.startswith("  hint: "):
            break
        out.append(line)
    return "\n".join(out)


def without(report, fields):
    return {k: v for k, v in report.items() if k not in fields}


def rng_floats(rng, shape, lo=-1.0, hi=1.0):
    return (lo + (hi - lo) * rng.random(shape)).astype(np.float32)


def conv_bn_model(opset=9, seed=1, scale=None, var=None):
    """X[1,3,6,6] -> Conv(W[4,3,3,3], bias) 'conv1' -> BatchNormalization 'bn1' -> Relu -> Y."""
    rng = np.random.default_rng(seed)
    w = rng_floats(rng, (4, 3, 3, 3))
    b = rng_floats(rng, (4,))
    s = rng_floats(rng, (4,), 0.5, 1.5) if scale is None else np.asarray(scale, np.float32)
    bb = rng_floats(rng, (4,))
    mean = rng_floats(rng, (4,))
    v = rng_floats(rng, (4,), 0.5, 2.0) if var is None else np.asarray(var, np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w, "W"), (b, "Bc"), (s, "s"), (bb, "bb"), (mean, "m"), (v, "v")]]
    nodes = [
        helper.make_node("Conv", ["X", "W", "Bc"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["n"], ["Y"], name="relu1"),
    ]
    g = helper.make_graph(nodes, "conv_bn", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 6, 6])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4, 6, 6])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="test_bnorm")
    m.ir_version = 4 if opset <= 9 else 7
    return m


def conv_bn_reference(model, x):
    """Y of conv_bn_model in float64, straight from the formulas."""
    p = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    w = p["W"]
    y = np.zeros((1, 4, 6, 6))
    for i in range(6):
        for j in range(6):
            y[0, :, i, j] = np.tensordot(w, xp[0, :, i:i + 3, j:j + 3], axes=([1, 2, 3], [0, 1, 2]))
    y += p["Bc"][None, :, None, None]
    scale = p["s"] / np.sqrt(p["v"] + 1e-5)
    y = (y - p["m"][None, :, None, None]) * scale[None, :, None, None] + p["bb"][None, :, None, None]
    return np.maximum(y, 0)


def unary_model(op, in_type, out_type, shape, opset, ir, **attrs):
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"], name=f"{op.lower()}1", **attrs)], op,
                          [helper.make_tensor_value_info("x", in_type, shape)],
                          [helper.make_tensor_value_info("y", out_type, shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def bf16_bits(x):
    """float32 -> bfloat16 bit patterns, rounded to nearest even (NaN kept a NaN)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(x)
    return np.where(nan, (u >> 16) | 0x40, rounded).astype(np.uint16)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Base(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="bnorm_py_")
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def save(self, model, name):
        path = self.tmp / name
        path.write_bytes(model.SerializeToString())
        return path


class ModelKinds(Base):
    def test_load_takes_a_path_bytes_or_a_proto_and_validates(self):
        proto = conv_bn_model()
        path = self.save(proto, "m.onnx")
        for given in (str(path), path, proto.SerializeToString(), bytearray(proto.SerializeToString()), proto):
            m = bnorm.load(given)
            self.assertIsInstance(m, bnorm.Model)
            self.assertEqual(m.opset, 9)
            self.assertEqual(m.ir_version, 4)
        self.assertEqual(bnorm.load(path).path, str(path))
        self.assertIsNone(bnorm.load(proto).path)
        # The bytes are the model: parsed by onnx, the same graph.
        back = onnx.ModelProto.FromString(bnorm.load(proto).to_bytes())
        self.assertEqual([n.name for n in back.graph.node], ["conv1", "bn1", "relu1"])
        with self.assertRaises(TypeError):
            bnorm.load(12)

    def test_a_proto_in_gives_a_proto_of_the_same_class_out(self):
        proto = conv_bn_model()
        folded, _ = bnorm.fold(proto)
        self.assertIs(type(folded), type(proto))
        self.assertEqual([n.op_type for n in folded.graph.node], ["Conv", "Relu"])
        # The given proto is untouched.
        self.assertEqual([n.op_type for n in proto.graph.node], ["Conv", "BatchNormalization", "Relu"])
        up, _ = bnorm.upgrade(proto, to=15)
        self.assertIs(type(up), type(proto))
        self.assertEqual(up.opset_import[0].version, 15)

        class NotOnnx:
            """Any object with SerializeToString and FromString."""
            def __init__(self, data=b""):
                self.data = data

            def SerializeToString(self):
                return self.data

            @classmethod
            def FromString(cls, data):
                return cls(data)

        out, _ = bnorm.fold(NotOnnx(proto.SerializeToString()))
        self.assertIsInstance(out, NotOnnx)
        self.assertEqual(out.data, folded.SerializeToString())

    def test_bytes_in_give_bytes_out_and_a_path_a_model(self):
        proto = conv_bn_model()
        out, _ = bnorm.fold(proto.SerializeToString())
        self.assertIsInstance(out, bytes)
        out, report = bnorm.fold(self.save(proto, "m.onnx"))
        self.assertIsInstance(out, bnorm.Model)
        self.assertIsNone(out.path)
        out.save(str(self.tmp / "saved.onnx"))
        self.assertEqual((self.tmp / "saved.onnx").read_bytes(), out.to_bytes())


class SameAsTheCli(Base):
    """Results identical to the CLI's on the same model: the bytes written, the JSON but for its path fields."""

    def test_fold(self):
        proto = conv_bn_model()
        path = self.save(proto, "m.onnx")
        for extra, kwargs in (([], {}), (["--verify", "--seed", "3"], {"verify": True, "seed": 3}),
                              (["--norms", "all"], {"norms": "all"})):
            r = cli("fold", path, "-o", self.tmp / "cli.onnx", "--json", *extra, check=0)
            expected = json.loads(r.stdout)
            out, report = bnorm.fold(proto.SerializeToString(), **kwargs)
            self.assertEqual(out, (self.tmp / "cli.onnx").read_bytes())
            self.assertEqual(without(report, PATH_FIELDS | WRITE_FIELDS), without(expected, PATH_FIELDS | WRITE_FIELDS))
            self.assertIsNone(report["input"])
            self.assertIsNone(report["output"])
            self.assertFalse(report["written"])
            self.assertEqual(report["folded"][0]["bn"], "bn1")
        # From the path: the report names it as the CLI's does.
        _, report = bnorm.fold(str(path))
        self.assertEqual(report["input"], str(path))

    def test_upgrade(self):
        proto = conv_bn_model()
        path = self.save(proto, "m.onnx")
        for extra, kwargs in ((["--to", "15"], {"to": 15}), (["--to", "21", "--verify"], {"to": 21, "verify": True}),
                              (["--to", "7", "--no-check"], {"to": 7, "no_check": True})):
            r = cli("upgrade", path, "-o", self.tmp / "cli.onnx", "--json", *extra, check=0)
            expected = json.loads(r.stdout)
            out, report = bnorm.upgrade(proto.SerializeToString(), **kwargs)
            self.assertEqual(out, (self.tmp / "cli.onnx").read_bytes(), extra)
            self.assertEqual(without(report, PATH_FIELDS | WRITE_FIELDS), without(expected, PATH_FIELDS | WRITE_FIELDS))
            self.assertIsNone(report["input"])

    def test_inspect(self):
        proto = conv_bn_model()
        path = self.save(proto, "m.onnx")
        for extra, kwargs in (([], {}), (["--to", "15", "--shapes"], {"to": 15, "shapes": True}),
                              (["--fp16", "--random", "2"], {"fp16": True, "random": 2})):
            expected = json.loads(cli("inspect", path, "--json", *extra, check=0).stdout)
            report = bnorm.inspect(proto, **kwargs)
            self.assertEqual(without(report, {"file"}), without(expected, {"file"}))
            self.assertIsNone(report["file"])
            self.assertEqual(bnorm.inspect(path, **kwargs), expected)

    def test_compare(self):
        a = conv_bn_model()
        b, _ = bnorm.fold(a)
        changed = conv_bn_model(seed=2)
        pa, pb, pc = self.save(a, "a.onnx"), self.save(b, "b.onnx"), self.save(changed, "c.onnx")
        for other, path, code in ((b, pb, 0), (changed, pc, 1)):
            for extra, kwargs in (([], {}), (["--random", "4", "--trace"], {"random": 4, "trace": True}),
                                  (["--tolerance", "fixed", "--rtol", "1e-3"], {"tolerance": "fixed", "rtol": 1e-3})):
                expected = json.loads(cli("eval", pa, "--compare", path, "--json", *extra, check=code).stdout)
                report = bnorm.compare(a, other, **kwargs)
                self.assertEqual(without(report, PATH_FIELDS), without(expected, PATH_FIELDS))
                self.assertEqual(report["pass"], code == 0)
                self.assertIsNone(report["a"])
        self.assertEqual(bnorm.compare(pa, pb)["a"], str(pa))

    def test_eval_outputs_are_the_clis_bit_for_bit(self):
        proto = conv_bn_model()
        path = self.save(proto, "m.onnx")
        x = rng_floats(np.random.default_rng(7), (1, 3, 6, 6))
        np.save(self.tmp / "x.npy", x)
        cli("eval", path, "--input", f"X={self.tmp / 'x.npy'}", "--output-dir", self.tmp / "given", check=0)
        cli("eval", path, "--random", "5", "--output-dir", self.tmp / "random", check=0)
        y = bnorm.eval(proto, {"X": x})["Y"]
        self.assertEqual(y.tobytes(), np.load(self.tmp / "given" / "Y.npy").tobytes())
        y = bnorm.eval(proto, random=5)["Y"]
        self.assertEqual(y.tobytes(), np.load(self.tmp / "random" / "Y.npy").tobytes())


class Numbers(Base):
    def test_eval_and_fold_agree_with_a_float64_reference(self):
        proto = conv_bn_model()
        x = rng_floats(np.random.default_rng(8), (1, 3, 6, 6))
        want = conv_bn_reference(proto, x)
        for model in (proto, bnorm.fold(proto, verify=True)[0]):
            y = bnorm.eval(model, {"X": x})["Y"]
            self.assertEqual(y.dtype, np.float32)
            self.assertEqual(y.shape, (1, 4, 6, 6))
            np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)

    def test_make_inputs_is_what_eval_random_runs_on(self):
        proto = conv_bn_model()
        made = bnorm.make_inputs(proto, 9)
        self.assertEqual(list(made), ["X"])
        self.assertEqual(made["X"].shape, (1, 3, 6, 6))
        self.assertTrue(((made["X"] >= -1) & (made["X"] < 1)).all())
        np.testing.assert_array_equal(bnorm.eval(proto, made)["Y"], bnorm.eval(proto, random=9)["Y"])
        ranged = bnorm.make_inputs(proto, 9, input_ranges={"X": (2, 3)})["X"]
        self.assertTrue(((ranged >= 2) & (ranged < 3)).all())

    def test_a_non_contiguous_or_big_endian_input_is_taken_by_value(self):
        proto = conv_bn_model()
        x = rng_floats(np.random.default_rng(8), (1, 3, 6, 12))[..., ::2]
        self.assertFalse(x.flags.c_contiguous)
        want = bnorm.eval(proto, {"X": np.ascontiguousarray(x)})["Y"]
        np.testing.assert_array_equal(bnorm.eval(proto, {"X": x})["Y"], want)
        np.testing.assert_array_equal(bnorm.eval(proto, {"X": x.astype(">f4")})["Y"], want)

    def test_outputs_are_not_copied(self):
        proto = conv_bn_model()
        y = bnorm.eval(proto, random=1)["Y"]
        # The array owns no memory of its own: its base is the buffer bnorm computed into.
        self.assertFalse(y.flags.owndata)
        self.assertIsNotNone(y.base)
        self.assertTrue(y.flags.writeable)


class DTypes(Base):
    """Every element type: numpy's own as themselves, the others as raw views."""

    NUMPY = [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
             np.uint32, np.uint64, np.bool_]

    def test_every_numpy_type_goes_through_identity_unchanged(self):
        rng = np.random.default_rng(3)
        for t in self.NUMPY:
            code = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(t)) if hasattr(onnx.helper, "np_dtype_to_tensor_dtype") \
                else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(t)]
            model = unary_model("Identity", code, code, [2, 3], 13, 7)
            x = (rng.random((2, 3)) * 100).astype(t) if t is not np.bool_ else rng.random((2, 3)) < 0.5
            y = bnorm.eval(model, {"x": x})["y"]
            self.assertEqual(y.dtype, np.dtype(t), t)
            np.testing.assert_array_equal(y, x)

    def test_float16_arithmetic_is_numpys(self):
        g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "add",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT16, [64]) for n in "ab"],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [64])])
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        rng = np.random.default_rng(4)
        a, b = (rng.random(64) * 10).astype(np.float16), (rng.random(64) * 10).astype(np.float16)
        y = bnorm.eval(model, {"a": a, "b": b})["y"]
        self.assertEqual(y.dtype, np.float16)
        # float16 + float16 rounded once from the exact (float64) sum.
        np.testing.assert_array_equal(y, (a.astype(np.float64) + b.astype(np.float64)).astype(np.float16))

    def test_bfloat16_comes_out_as_a_raw_uint16_view_rounded_to_nearest_even(self):
        model = unary_model("Cast", TensorProto.FLOAT, TensorProto.BFLOAT16, [5], 13, 7, to=TensorProto.BFLOAT16)
        x = np.array([1.0, 1.00390625, 1.01171875, -3.14159, 65504.0], np.float32)
        y = bnorm.eval(model, {"x": x})["y"]
        self.assertEqual(y.dtype, np.uint16)
        self.assertEqual(bnorm.onnx_type_of(y), "bfloat16")
        np.testing.assert_array_equal(y, bf16_bits(x))
        # And back in: a bfloat16 input, given as the view or as plain uint16 (the model declares bfloat16).
        back = unary_model("Cast", TensorProto.BFLOAT16, TensorProto.FLOAT, [5], 13, 7, to=TensorProto.FLOAT)
        want = (bf16_bits(x).astype(np.uint32) << 16).view(np.float32)
        for given in (y, y.view(np.uint16), bnorm.raw(y.view(np.uint16), "bfloat16")):
            np.testing.assert_array_equal(bnorm.eval(back, {"x": given})["y"], want)

    def test_float8_int4_uint4_and_float4_are_raw_views_of_their_bits(self):
        cases = [
            ("float8e4m3fn", 17, np.arange(0, 256, 37, dtype=np.uint8), 21, 10),
            ("float8e4m3fnuz", 18, np.arange(0, 256, 41, dtype=np.uint8), 21, 10),
            ("float8e5m2", 19, np.arange(1, 256, 43, dtype=np.uint8), 21, 10),
            ("float8e5m2fnuz", 20, np.arange(1, 256, 29, dtype=np.uint8), 21, 10),
            ("uint4", 21, np.array([0, 1, 7, 8, 15, 3], np.uint8), 21, 10),
            ("int4", 22, np.array([-8, -1, 0, 1, 7, 3], np.int8), 21, 10),
            ("float4e2m1", 23, np.array([0, 1, 6, 9, 15, 7], np.uint8), 23, 11),
        ]
        for name, code, bits, opset, ir in cases:
            with self.subTest(name):
                model = unary_model("Identity", code, code, [len(bits)], opset, ir)
                y = bnorm.eval(model, {"x": bits})["y"]
                self.assertEqual(bnorm.onnx_type_of(y), name)
                self.assertEqual(y.dtype, bits.dtype)
                np.testing.assert_array_equal(y, bits)
                np.testing.assert_array_equal(bnorm.eval(model, {"x": bnorm.raw(bits, name)})["y"], bits)
        model = unary_model("Identity", 22, 22, [2], 21, 10)
        with self.assertRaises(bnorm.UsageError) as e:
            bnorm.eval(model, {"x": np.array([8, 0], np.int8)})
        self.assertIn("[-8, 7]", str(e.exception))

    def test_float8_values_are_onnxs(self):
        # float8e4m3fn 0x38 is 1.0, 0x40 is 2.0, 0xb8 is -1.0, 0x7f is NaN (ONNX's table).
        model = unary_model("Cast", 17, TensorProto.FLOAT, [4], 19, 9, to=TensorProto.FLOAT)
        y = bnorm.eval(model, {"x": bnorm.raw(np.array([0x38, 0x40, 0xB8, 0x7F], np.uint8), "float8e4m3fn")})["y"]
        np.testing.assert_array_equal(y[:3], [1.0, 2.0, -1.0])
        self.assertTrue(np.isnan(y[3]))

    def test_a_type_numpy_has_but_onnx_does_not_is_refused(self):
        model = unary_model("Identity", TensorProto.FLOAT, TensorProto.FLOAT, [2], 13, 7)
        with self.assertRaises(bnorm.UsageError):
            bnorm.eval(model, {"x": np.array([1 + 2j, 3j])})


class Errors(Base):
    """Each kind raises its class with the CLI's message and the node it concerns."""

    def test_an_invalid_model_is_an_input_error_naming_the_node(self):
        proto = conv_bn_model(scale=[1.0, 1.0, 1.0])  # 3 scales for 4 channels
        path = self.save(proto, "bad.onnx")
        r = cli("inspect", path, check=2)
        with self.assertRaises(bnorm.InputError) as e:
            bnorm.inspect(path)
        err = e.exception
        self.assertEqual(err.message, cli_error(r))
        self.assertEqual(err.node, "bn1")
        self.assertEqual(err.op, "BatchNormalization")
        self.assertEqual(err.version, 9)
        self.assertEqual(err.file, str(path))
        self.assertEqual(err.exit_code, 2)
        self.assertIsInstance(err, bnorm.Error)
        # In memory, the same message without the file.
        with self.assertRaises(bnorm.InputError) as e:
            bnorm.fold(proto)
        self.assertIn("node 'bn1' (BatchNormalization-9)", e.exception.message)
        with self.assertRaises(bnorm.InputError) as e:
            bnorm.load(b"not a model")
        self.assertEqual(e.exception.message, "<bytes>: not an ONNX model: the protobuf data is invalid or truncated")
        self.assertEqual(e.exception.file, "<bytes>")

    def test_an_op_bnorm_does_not_run_is_unsupported_naming_the_node(self):
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="r1"),
                               helper.make_node("Frobnicate", ["r"], ["y"], name="frob", domain="com.example")],
                              "custom", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
        proto = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
        path = self.save(proto, "custom.onnx")
        r = cli("eval", path, "--random", "0", check=2)
        with self.assertRaises(bnorm.Error) as e:
            bnorm.eval(path, random=0)
        self.assertEqual(e.exception.message, cli_error(r))
        self.assertIsInstance(e.exception, bnorm.UnsupportedError)
        self.assertEqual(e.exception.node, "frob")
        self.assertEqual(e.exception.op, "Frobnicate")

    def test_usage_errors_are_the_clis(self):
        proto = conv_bn_model()
        path = self.save(proto, "m.onnx")
        r = cli("eval", path, "--compare", path, "--tolerance", "loose", check=2)
        with self.assertRaises(bnorm.UsageError) as e:
            bnorm.compare(path, path, tolerance="loose")
        self.assertEqual(e.exception.message, cli_error(r))
        with self.assertRaises(bnorm.UsageError) as e:
            bnorm.compare(proto, proto, tolerance="loose")
        self.assertEqual(e.exception.message, "--tolerance loose: use auto or fixed")
        self.assertIsInstance(e.exception, ValueError)
        with self.assertRaises(bnorm.UsageError):
            bnorm.fold(proto, norms="most")
        with self.assertRaises(bnorm.UsageError):
            bnorm.fold(proto, seed=3)  # seed without verify, refused as the CLI refuses --seed
        with self.assertRaises(bnorm.UsageError):
            bnorm.eval(proto, {"X": np.zeros((1, 3, 6, 6), np.float32)}, input_ranges={"X": (0, 1)})

    def test_inputs_the_model_does_not_take_are_refused_as_the_cli_refuses_them(self):
        proto = conv_bn_model()
        path = self.save(proto, "m.onnx")
        np.save(self.tmp / "x.npy", np.zeros((2, 3), np.float32))
        r = cli("eval", path, "--input", f"X={self.tmp / 'x.npy'}", check=2)
        with self.assertRaises(bnorm.UsageError) as e:
            bnorm.eval(path, {"X": np.zeros((2, 3), np.float32)})
        self.assertEqual(e.exception.message, cli_error(r))
        self.assertEqual(e.exception.file, str(path))
        with self.assertRaises(bnorm.UsageError) as e:
            bnorm.eval(proto, {"X": np.zeros((2, 3), np.float32)})
        self.assertEqual(e.exception.message, "input 'X' has shape [2, 3], the model declares [1, 3, 6, 6]")
        self.assertIsNone(e.exception.file)

    def test_a_fold_off_raises_check_failed_with_the_report_and_the_model(self):
        # scale 3e38 / sqrt(1e-4 + eps) overflows float: the folded weight is inf, the float64 reference is not.
        proto = conv_bn_model(scale=[3e38, 1, 1, 1], var=[1e-4, 1, 1, 1])
        path = self.save(proto, "overflow.onnx")
        r = cli("fold", path, "-o", self.tmp / "out.onnx", "--verify", "--json", check=1)
        with self.assertRaises(bnorm.CheckFailed) as e:
            bnorm.fold(proto, verify=True)
        err = e.exception
        self.assertEqual(err.exit_code, 1)
        self.assertEqual(without(err.report, PATH_FIELDS | WRITE_FIELDS),
                         without(json.loads(r.stdout), PATH_FIELDS | WRITE_FIELDS))
        self.assertFalse(err.report["verify"][0]["pass"])
        self.assertIsInstance(err.model, onnx.ModelProto)
        self.assertNotIn("BatchNormalization", [n.op_type for n in err.model.graph.node])


class Warnings(Base):
    def test_the_clis_warnings_are_python_warnings(self):
        proto = conv_bn_model(var=[-1.0, 1, 1, 1])  # a negative variance: valid, and fold warns
        path = self.save(proto, "negvar.onnx")
        r = cli("fold", path, "-o", self.tmp / "out.onnx", check=0)
        expected = [line[len("bnorm: warning: "):] for line in r.stderr.splitlines()
                    if line.startswith("bnorm: warning: ")]
        self.assertTrue(expected, r.stderr)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bnorm.fold(proto)
        got = [str(w.message) for w in caught if issubclass(w.category, bnorm.BnormWarning)]
        self.assertEqual(got, expected)
        self.assertEqual(caught[0].filename, __file__)  # the caller's line, not the package's
        with warnings.catch_warnings():
            warnings.simplefilter("error", bnorm.BnormWarning)
            with self.assertRaises(bnorm.BnormWarning):
                bnorm.fold(proto)


def big_model():
    """Sixteen 3x3 convolutions of 32 channels on 96x96: long enough to see what other threads do meanwhile."""
    rng = np.random.default_rng(5)
    nodes, inits, prev = [], [], "x"
    for i in range(16):
        inits.append(numpy_helper.from_array(rng_floats(rng, (32, 32, 3, 3), -0.1, 0.1), f"w{i}"))
        nodes.append(helper.make_node("Conv", [prev, f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1]))
        prev = f"c{i}"
    g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 96, 96])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 32, 96, 96])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def long_model(n):
    """n 3x3 convolutions of 32 channels on 160x160, one weight: n = 800 is seconds of work in short nodes."""
    rng = np.random.default_rng(6)
    nodes, prev = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("Conv", [prev, "w"], [f"c{i}"], pads=[1, 1, 1, 1]))
        prev = f"c{i}"
    g = helper.make_graph(nodes, "long", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 160, 160])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 32, 160, 160])],
                          [numpy_helper.from_array(rng_floats(rng, (32, 32, 3, 3), -0.06, 0.06), "w")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


# Runs in a process of its own: SIGINT 0.2 s into an evaluation of 800 nodes (the time of one measured on 16).
INTERRUPTED = """
import os, signal, sys, threading, time
import bnorm
model, short = bnorm.load(sys.argv[1]), bnorm.load(sys.argv[2])
x = bnorm.make_inputs(model, 0)
bnorm.eval(short, x)
start = time.perf_counter()
bnorm.eval(short, x)
node = (time.perf_counter() - start) / 16
print("node", node)
threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
start = time.perf_counter()
try:
    bnorm.eval(model, x)
    print("finished", time.perf_counter() - start)
except KeyboardInterrupt:
    print("interrupted", time.perf_counter() - start)
print("then", sorted(bnorm.eval(short, x)))
# A SIGINT handler of the user's is left alone: the evaluation runs to its end, then the handler runs.
mid = bnorm.load(sys.argv[3])
caught = []
signal.signal(signal.SIGINT, lambda *_: caught.append(time.perf_counter()))
threading.Timer(50 * node, os.kill, (os.getpid(), signal.SIGINT)).start()  # a quarter of the way
start = time.perf_counter()
out = bnorm.eval(mid, x)
print("own", (time.perf_counter() - start) / node, len(caught), len(out))
"""


class Threads(Base):
    def test_ctrl_c_stops_an_evaluation_at_its_next_node(self):
        self.save(long_model(800), "long.onnx")
        self.save(long_model(16), "short.onnx")
        self.save(long_model(200), "mid.onnx")
        (self.tmp / "run.py").write_text(INTERRUPTED)
        r = subprocess.run([sys.executable, self.tmp / "run.py", *(self.tmp / f"{n}.onnx" for n in ("long", "short", "mid"))],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
        self.assertIn("interrupted", lines, r.stdout)
        node, took = float(lines["node"]), float(lines["interrupted"])
        # Stopped within a few nodes of the signal, long before the 800 nodes' end.
        self.assertLess(took, 0.2 + 10 * node + 0.5, r.stdout)
        self.assertLess(took, 800 * node / 2, r.stdout)
        self.assertEqual(lines["then"], "['c15']")
        nodes, handled, outputs = lines["own"].split()
        self.assertGreater(float(nodes), 100, r.stdout)  # it ran past the signal, to its one output
        self.assertEqual((handled, outputs), ("1", "1"), r.stdout)

class Gil(Base):
    def test_a_call_releases_the_gil(self):
        model = bnorm.load(big_model())
        x = {"x": rng_floats(np.random.default_rng(1), (1, 32, 96, 96))}
        bnorm.eval(model, x)
        start = time.perf_counter()
        bnorm.eval(model, x)
        alone = time.perf_counter() - start
        ticks = 0
        done = threading.Event()

        def run():
            bnorm.eval(model, x)
            done.set()

        t = threading.Thread(target=run)
        t.start()
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)
        t.join()
        # With the GIL held for the whole call, the loop would tick about once.
        self.assertGreater(ticks, max(3, int(alone / 0.001) // 10), (ticks, alone))


    def test_threads_calling_at_once_get_what_one_thread_gets(self):
        proto = conv_bn_model()
        model = bnorm.load(proto)
        xs = [rng_floats(np.random.default_rng(i), (1, 3, 6, 6)) for i in range(4)]
        want = [bnorm.eval(model, {"X": x})["Y"] for x in xs]
        want_fold = bnorm.fold(proto.SerializeToString(), verify=True)
        got, errors = [[] for _ in xs], []

        def work(i):
            try:
                for _ in range(25):
                    got[i].append(bnorm.eval(model, {"X": xs[i]})["Y"])
                    got[i].append(bnorm.fold(proto.SerializeToString(), verify=True))
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for i, results in enumerate(got):
            for y, folded in zip(results[::2], results[1::2]):
                np.testing.assert_array_equal(y, want[i])
                self.assertEqual(folded, want_fold)


class Leaks(Base):
    def test_a_thousand_calls_do_not_grow_the_process(self):
        proto = conv_bn_model()
        data = proto.SerializeToString()
        x = {"X": rng_floats(np.random.default_rng(2), (1, 3, 6, 6))}
        model = bnorm.load(data)

        def calls(n):
            for _ in range(n):
                bnorm.eval(model, x)
                bnorm.fold(data)
                try:
                    bnorm.load(b"junk")
                except bnorm.InputError:
                    pass
        calls(100)
        gc.collect()
        before = rss_bytes()
        calls(1000)
        gc.collect()
        grown = rss_bytes() - before
        # A copy of the model leaked per call would be 3000 x ~2 kB, an output 1000 x 576 B, and allocator
        # noise stays far below 16 MiB.
        self.assertLess(grown, 16 << 20, f"{grown} bytes more after 1000 calls")


class Stubs(unittest.TestCase):
    def test_the_stubs_name_every_public_function_with_its_keywords(self):
        stub = ast.parse((Path(bnorm.__file__).parent / "__init__.pyi").read_text())
        stubbed = {}
        for node in stub.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                stubbed[node.name] = node
        for name in bnorm.__all__:
            if name in ("__version__", "ONNX_TYPES"):
                continue
            self.assertIn(name, stubbed, name)
            obj = getattr(bnorm, name)
            if isinstance(stubbed[name], ast.FunctionDef):
                args = stubbed[name].args
                want = [a.arg for a in args.args + args.kwonlyargs]
                self.assertEqual(list(pyinspect.signature(obj).parameters), want, name)
                self.assertTrue(obj.__doc__, name)


class Docs(Base):
    def test_the_example_of_docs_python_md_runs(self):
        text = (SOURCE / "docs" / "python.md").read_text()
        # The README's example (also at the top of python.md) is the other test's.
        blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "def test_" in b]
        self.assertTrue(blocks)
        cwd = os.getcwd()
        os.chdir(self.tmp)
        try:
            ran = 0
            for code in blocks:
                ns = {"__name__": "docs_example"}
                exec(compile(code, "docs/python.md", "exec"), ns)
                for name, fn in ns.items():
                    if name.startswith("test_") and callable(fn):
                        fn()
                        ran += 1
            self.assertGreater(ran, 0)
            self.assertTrue((self.tmp / "model_opset11.onnx").exists())
        finally:
            os.chdir(cwd)

    def test_the_readme_example_runs(self):
        text = (SOURCE / "README.md").read_text()
        blocks = re.findall(r"```python\n(.*?)```", text, re.S)
        self.assertEqual(len(blocks), 1)
        (self.tmp / "model.onnx").write_bytes(conv_bn_model().SerializeToString())
        cwd = os.getcwd()
        os.chdir(self.tmp)
        try:
            exec(compile(blocks[0], "README.md", "exec"), {"__name__": "readme_example"})
        finally:
            os.chdir(cwd)


if __name__ == "__main__":
    unittest.main(verbosity=2)
