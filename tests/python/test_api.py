#!/usr/bin/python3
"""The Python module (docs/python.md) against the CLI and numpy: models in and out, the same bytes and reports as
the CLI's, numbers against float64 references, every element type."""
import json
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper

import bnorm
from support import (PATH_FIELDS, WRITE_FIELDS, Base, bf16_bits, cli, conv_bn_model, conv_bn_reference, rng_floats,
                     unary_model, without)


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

    def test_a_list_takes_the_declared_type_and_an_array_keeps_its_own(self):
        proto = conv_bn_model()
        x = rng_floats(np.random.default_rng(8), (1, 3, 6, 6))
        np.testing.assert_array_equal(bnorm.eval(proto, {"X": x.tolist()})["Y"], bnorm.eval(proto, {"X": x})["Y"])
        with self.assertRaises(bnorm.Error) as e:
            bnorm.eval(proto, {"X": x.astype(np.float64)})
        self.assertIn("'X'", e.exception.message)

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
            code = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(t)]  # onnx's own table, not bnorm's
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

    def test_float8_int4_uint4_float4_and_e8m0_are_raw_views_of_their_bits(self):
        cases = [
            ("float8e4m3fn", 17, np.arange(0, 256, 37, dtype=np.uint8), 21, 10),
            ("float8e4m3fnuz", 18, np.arange(0, 256, 41, dtype=np.uint8), 21, 10),
            ("float8e5m2", 19, np.arange(1, 256, 43, dtype=np.uint8), 21, 10),
            ("float8e5m2fnuz", 20, np.arange(1, 256, 29, dtype=np.uint8), 21, 10),
            ("uint4", 21, np.array([0, 1, 7, 8, 15, 3], np.uint8), 21, 10),
            ("int4", 22, np.array([-8, -1, 0, 1, 7, 3], np.int8), 21, 10),
            ("float4e2m1", 23, np.array([0, 1, 6, 9, 15, 7], np.uint8), 23, 11),
            ("float8e8m0", 24, np.arange(0, 256, 31, dtype=np.uint8), 24, 12),
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
