#!/usr/bin/python3
"""The Python module (docs/python.md) at run time: errors of each kind as the CLI's, warnings, the GIL, Ctrl-C,
threads, and no leak over 1,000 calls."""
import gc
import json
import subprocess
import sys
import threading
import time
import unittest
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper

import bnorm
from support import (INTERRUPTED, PATH_FIELDS, WRITE_FIELDS, Base, cli, cli_error, conv_bn_model,
                     long_model, rng_floats, rss_bytes, without)


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


class Threads(Base):
    def test_ctrl_c_stops_an_evaluation_at_its_next_node(self):
        self.save(long_model(800), "long.onnx")
        self.save(long_model(16), "short.onnx")
        self.save(long_model(200), "mid.onnx")
        (self.tmp / "run.py").write_text(INTERRUPTED)
        models = [self.tmp / f"{n}.onnx" for n in ("long", "short", "mid")]
        r = subprocess.run([sys.executable, self.tmp / "run.py", *models], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
        self.assertIn("interrupted", lines, r.stdout)
        node, after = float(lines["node"]), float(lines["interrupted"])
        # KeyboardInterrupt within a few nodes of the signal; had the evaluation gone on, 780 more nodes.
        self.assertLess(after, 0.2 + 20 * node, r.stdout)
        self.assertEqual(lines["then"], "['c15']")
        # The signal came during the call; the user's handler ran once, after it; the call gave its one output.
        self.assertEqual(lines["own"], "1 1 1", r.stdout)


class Gil(Base):
    def test_a_call_releases_the_gil(self):
        model = bnorm.load(long_model(200))
        x = bnorm.make_inputs(model, 1)
        span = []

        def run():
            span.append(time.perf_counter())
            bnorm.eval(model, x)
            span.append(time.perf_counter())

        t = threading.Thread(target=run)
        ticks = []
        t.start()
        while t.is_alive():
            ticks.append(time.perf_counter())
        t.join()
        start, end = span
        self.assertGreater(end - start, 0.2)
        # While the other thread is inside the call (50 ms off either end, for switching in and out of it), this
        # one runs Python: thousands of ticks. Were the GIL held through the call there would be none.
        inside = [tick for tick in ticks if start + 0.05 < tick < end - 0.05]
        self.assertGreater(len(inside), 100, (len(ticks), end - start))

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


if __name__ == "__main__":
    unittest.main(verbosity=2)
