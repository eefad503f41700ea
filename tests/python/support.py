"""What the Python module's tests share (tests/python/test_*.py): the CLI, models made with onnx.helper, and
numpy references. Expected numbers come from numpy (float64) or from the CLI run on the same model, never from
the module under test.

The tests run from ctest with /usr/bin/python3, PYTHONPATH at the build's python/ folder and BNORM_CLI naming the
built binary (tests/CMakeLists.txt).
"""
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

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
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="bnorm-python-tests")
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


# Runs in a process of its own, on three models of long_model(800, 16, 200): SIGINT 20 nodes into an evaluation
# of 800 (the time of a node measured on 16), then the same with a SIGINT handler of the user's, on 200.
INTERRUPTED = """
import os, signal, sys, threading, time
import bnorm
model, short, mid = (bnorm.load(p) for p in sys.argv[1:4])
x = bnorm.make_inputs(model, 0)
bnorm.eval(short, x)
start = time.perf_counter()
bnorm.eval(short, x)
node = (time.perf_counter() - start) / 16
print("node", node)
fired = []

def fire():
    fired.append(time.perf_counter())
    os.kill(os.getpid(), signal.SIGINT)

threading.Timer(20 * node, fire).start()
try:
    bnorm.eval(model, x)
    print("finished", time.perf_counter() - fired[0])
except KeyboardInterrupt:
    print("interrupted", time.perf_counter() - fired[0])
print("then", sorted(bnorm.eval(short, x)))
# A SIGINT handler of the user's is left alone: the evaluation runs to its end, then the handler runs.
caught = []
signal.signal(signal.SIGINT, lambda *_: caught.append(1))
fired.clear()
timer = threading.Timer(20 * node, fire)
timer.start()
out = bnorm.eval(mid, x)
end = time.perf_counter()
timer.join()
time.sleep(0.01)
print("own", int(fired[0] < end), len(caught), len(out))
"""
