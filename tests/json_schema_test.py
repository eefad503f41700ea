#!/usr/bin/env python3
"""Every --json document bnorm prints matches the JSON Schema its "schema" field names, and
every field the schemas define is printed by some command.

    /usr/bin/python3 tests/json_schema_test.py BNORM_BINARY SOURCE_DIR [-v]

Runs a matrix of commands (every command, every form, every option that adds fields, the
batch forms with failing models, a failing --verify, failing saves), each in its own temporary
folder, on the models in SOURCE_DIR/testdata and on small models built here with python3-onnx.
Each command's stdout is one JSON document: it must name the expected kind in "schema", validate
against SOURCE_DIR/docs/schema/<kind>.json (Draft 2020-12; $refs between the files resolved
locally) and come with the expected exit code. Then every property defined anywhere in the
schemas must have appeared in at least one document: a documented field that no command prints
is a failure too. Exit 0 only when everything holds.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VERBOSE = "-v" in sys.argv[3:]


# ----------------------------------------------------------------------------- schemas

class Schemas:
    """docs/schema/*.json, a validator per kind, and the coverage of their properties."""

    def __init__(self, folder):
        self.folder = Path(folder).resolve()
        self.docs = {}  # file stem -> schema
        for path in sorted(self.folder.glob("*.json")):
            with open(path, encoding="utf-8") as f:
                self.docs[path.stem] = json.load(f)
        if not self.docs:
            raise SystemExit(f"json_schema_test: no schema in {self.folder}")
        for stem, schema in self.docs.items():
            jsonschema.Draft202012Validator.check_schema(schema)
        self.kinds = {}  # "bnorm.fold/1" -> "fold"
        for stem, schema in self.docs.items():
            kind = schema.get("properties", {}).get("schema", {}).get("const")
            if not kind:
                raise SystemExit(f"json_schema_test: {stem}.json has no \"schema\": {{\"const\": ...}} property")
            self.kinds[kind] = stem
        self.validators = {stem: self._validator(stem) for stem in self.docs}
        self.defined = set()  # (stem, JSON pointer of a property's definition)
        for stem, schema in self.docs.items():
            self._collect(stem, schema, "")
        self.seen = set()

    def uri(self, stem):
        return (self.folder / f"{stem}.json").as_uri()

    def _validator(self, stem):
        schema = self.docs[stem]
        try:  # jsonschema >= 4.18
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012
            registry = Registry().with_resources(
                (self.uri(s), Resource.from_contents(d, default_specification=DRAFT202012))
                for s, d in self.docs.items())
            return jsonschema.Draft202012Validator({"$ref": self.uri(stem)}, registry=registry)
        except ImportError:  # Debian's 4.10
            store = {self.uri(s): d for s, d in self.docs.items()}
            resolver = jsonschema.RefResolver(base_uri=self.uri(stem), referrer=schema, store=store)
            return jsonschema.Draft202012Validator(schema, resolver=resolver)

    def _collect(self, stem, node, pointer):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    for name, sub in value.items():
                        self.defined.add((stem, f"{pointer}/properties/{name}"))
                        self._collect(stem, sub, f"{pointer}/properties/{name}")
                elif key not in ("const", "enum", "default", "examples"):
                    self._collect(stem, value, f"{pointer}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                self._collect(stem, value, f"{pointer}/{i}")

    def _at(self, stem, pointer):
        node = self.docs[stem]
        for part in [p for p in pointer.split("/") if p]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node

    def _follow(self, stem, pointer):
        """Follows $refs from the schema node at (stem, pointer)."""
        for _ in range(50):
            node = self._at(stem, pointer)
            if not (isinstance(node, dict) and "$ref" in node):
                return stem, pointer, node
            ref = node["$ref"]
            target, _, fragment = ref.partition("#")
            if target:
                stem = Path(target).stem
            pointer = fragment
        raise SystemExit(f"json_schema_test: $ref loop at {stem}.json#{pointer}")

    def mark(self, instance, stem, pointer=""):
        """Records the property definitions `instance` (valid against the node) used."""
        stem, pointer, node = self._follow(stem, pointer)
        if not isinstance(node, dict):
            return
        if "if" in node:
            branch = "then" if jsonschema.Draft202012Validator(node["if"]).is_valid(instance) else "else"
            if branch in node:
                self.mark(instance, stem, f"{pointer}/{branch}")
        for key in ("allOf", "oneOf", "anyOf"):
            for i, _ in enumerate(node.get(key, [])):
                self.mark(instance, stem, f"{pointer}/{key}/{i}")
        if isinstance(instance, dict):
            props = node.get("properties", {})
            for name, value in instance.items():
                if name in props:
                    self.seen.add((stem, f"{pointer}/properties/{name}"))
                    self.mark(value, stem, f"{pointer}/properties/{name}")
                elif isinstance(node.get("additionalProperties"), dict):
                    self.mark(value, stem, f"{pointer}/additionalProperties")
        if isinstance(instance, list) and isinstance(node.get("items"), dict):
            for value in instance:
                self.mark(value, stem, f"{pointer}/items")

    @staticmethod
    def field_path(pointer):
        """'/$defs/norm_node/properties/params/items/...' -> a readable 'params[]...' hint."""
        parts = [p for p in pointer.split("/") if p]
        out = []
        for i, part in enumerate(parts):
            if i > 0 and parts[i - 1] == "properties":
                out.append(part)
            elif part == "items" and out:
                out[-1] += "[]"
            elif i > 0 and parts[i - 1] == "$defs":
                out.append(f"$defs.{part}")
        return ".".join(out)


# ----------------------------------------------------------------------------- models

def f32(name, values, dims=None):
    a = np.asarray(values, dtype=np.float32)
    return numpy_helper.from_array(a.reshape(dims) if dims is not None else a, name)


def i64(name, values):
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def ramp(name, dims, first):
    n = int(np.prod(dims))
    return f32(name, [first + 0.25 * (i % 7) - 0.5 for i in range(n)], dims)


def vi(name, dims, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, dims)


def model(nodes, inputs, outputs, inits, opset, ir):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="json_schema_test")
    m.ir_version = ir
    return m


def conv_bn(scale=(1.0, 0.5, 2.0), var=(1.0, 0.25, 4.0)):
    """x [1, 3, 4, 4] -> conv1 (3x3, pads 1, bias) -> bn1 -> y, opset 13 (tests/support/conv_bn_model.h)."""
    w = [(i % 7) / 8.0 - 0.375 for i in range(81)]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "B", "m", "v"], ["y"], name="bn1")]
    inits = [f32("w", w, [3, 3, 3, 3]), f32("b", [0.125, -0.25, 0.5]), f32("s", scale), f32("B", [0.0, 0.25, -0.5]),
             f32("m", [0.5, -0.5, 0.0]), f32("v", var)]
    return model(nodes, [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])], inits, 13, 7)


def ln_gemm():
    """x [2, 8] -> LayerNormalization 'ln' -> Gemm 'fc' -> Relu -> LayerNormalization (unnamed) -> Relu -> z:
    the first folds with --norms all, the second is kept (its output is read by Relu)."""
    nodes = [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], name="ln"),
             helper.make_node("Gemm", ["y", "W", "C"], ["h"], name="fc", transB=1),
             helper.make_node("Relu", ["h"], ["r"], name="relu1"),
             helper.make_node("LayerNormalization", ["r", "s2"], ["y2"]),
             helper.make_node("Relu", ["y2"], ["z"], name="relu2")]
    inits = [ramp("s", [8], 1.0), ramp("b", [8], 0.1), ramp("W", [4, 8], -0.3), ramp("C", [4], 0.2),
             ramp("s2", [4], 0.7)]
    return model(nodes, [vi("x", [2, 8])], [vi("z", [2, 4])], inits, 17, 8)


def generated_bn():
    """A Conv whose weight ConstantOfShape makes, then a BN: folding writes the weight out."""
    fill = helper.make_node("ConstantOfShape", ["wshape"], ["w"], name="fill",
                            value=helper.make_tensor("value", TensorProto.FLOAT, [1], [0.5]))
    nodes = [fill, helper.make_node("Conv", ["x", "w"], ["c"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "B", "m", "v"], ["y"], name="bn1")]
    inits = [i64("wshape", [3, 3, 3, 3]), f32("s", [1.0, 0.5, 2.0]), f32("B", [0.0, 0.25, -0.5]),
             f32("m", [0.5, -0.5, 0.0]), f32("v", [1.0, 0.25, 4.0])]
    return model(nodes, [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])], inits, 13, 7)


def generated_ln():
    """A LayerNormalization whose scale ConstantOfShape makes, then a MatMul."""
    fill = helper.make_node("ConstantOfShape", ["sshape"], ["s"], name="fill_s",
                            value=helper.make_tensor("value", TensorProto.FLOAT, [1], [1.5]))
    nodes = [fill, helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln"),
             helper.make_node("MatMul", ["y", "W"], ["z"], name="mm")]
    return model(nodes, [vi("x", [2, 8])], [vi("z", [2, 3])], [i64("sshape", [8]), ramp("W", [8, 3], 0.5)], 17, 8)


def fp16_risky():
    """x [batch, 3, 4, 4] -> Conv -> BN (a variance above 65504) -> LayerNormalization -> y."""
    w = [(i % 5) / 4.0 - 0.5 for i in range(81)]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "B", "m", "v"], ["n"], name="bn1", epsilon=1e-9),
             helper.make_node("LayerNormalization", ["n", "ls", "lb"], ["y"], name="ln")]
    inits = [f32("w", w, [3, 3, 3, 3]), f32("b", [0.0, 0.1, 0.2]), f32("s", [1.0, 1e-6, 2.0]),
             f32("B", [0.0, 0.25, -0.5]), f32("m", [0.5, -0.5, 0.0]), f32("v", [70000.0, 0.25, 4.0]),
             f32("ls", [1.0] * 4), f32("lb", [0.0] * 4)]
    return model(nodes, [vi("x", ["batch", 3, 4, 4])], [vi("y", ["batch", 3, 4, 4])], inits, 17, 8)


def odd_dims():
    """Symbolic and unknown dims, an output without a shape, an unnamed BN whose scale is a graph input."""
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "B", "m", "v"], ["y"])]
    inits = [f32("B", [0.0, 0.25, -0.5]), f32("m", [0.5, -0.5, 0.0]), f32("v", [1.0, 0.25, 4.0])]
    inputs = [vi("x", ["batch", 3, None, 4]), vi("s", None)]
    return model(nodes, inputs, [vi("y", None)], inits, 13, 7)


def range_11():
    """Range exists from opset 11: upgrading to 10 is blocked."""
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")]
    inits = [f32("start", 0.0, []), f32("limit", 5.0, []), f32("delta", 1.0, [])]
    return model(nodes, [], [vi("y", [5])], inits, 11, 6)


def ln_decomposition():
    """LayerNormalization as PyTorch exports it below opset 17 (tests/upgrade_fuse_norms_test.cpp)."""
    mean = lambda i, o, n: helper.make_node("ReduceMean", [i], [o], name=n, axes=[-1])
    nodes = [mean("x", "mean", "/ln/ReduceMean"),
             helper.make_node("Sub", ["x", "mean"], ["d"], name="/ln/Sub"),
             helper.make_node("Pow", ["d", "two"], ["sq"], name="/ln/Pow"),
             mean("sq", "var", "/ln/ReduceMean_1"),
             helper.make_node("Add", ["var", "eps"], ["ve"], name="/ln/Add"),
             helper.make_node("Sqrt", ["ve"], ["sd"], name="/ln/Sqrt"),
             helper.make_node("Div", ["d", "sd"], ["n"], name="/ln/Div"),
             helper.make_node("Mul", ["n", "gamma"], ["scaled"], name="/ln/Mul"),
             helper.make_node("Add", ["scaled", "beta"], ["y"], name="/ln/Add_1")]
    inits = [f32("two", 2.0, []), f32("eps", 1e-5, []), ramp("gamma", [8], 1.0), ramp("beta", [8], 0.1)]
    return model(nodes, [vi("x", [2, 3, 8])], [vi("y", [2, 3, 8])], inits, 15, 8)


def nan_and_empty(abs_first):
    """y = Log(x) (NaN for x < 0; Log(Abs(x)) with abs_first) and e, an empty slice of x: eval prints
    null for NaN and infinite figures."""
    nodes = [helper.make_node("Slice", ["x", "start", "end"], ["e"], name="empty")]
    if abs_first:
        nodes += [helper.make_node("Abs", ["x"], ["a"], name="abs"), helper.make_node("Log", ["a"], ["y"], name="log")]
    else:
        nodes += [helper.make_node("Log", ["x"], ["y"], name="log")]
    inits = [i64("start", [0]), i64("end", [0])]
    return model(nodes, [vi("x", [4])], [vi("y", [4]), vi("e", [0])], inits, 13, 7)


def quantized(perturb):
    """x [64, 32] -> MatMul -> DynamicQuantizeLinear -> (q, a graph output) -> DequantizeLinear -> MatMul -> y;
    `perturb` scales W1 by 1 +- 3e-5 (codes flip by rounding: tests/compare_codes_test.cpp)."""
    rng = np.random.default_rng(5)
    w1 = rng.uniform(-1, 1, (32, 64)).astype(np.float32)
    w2 = rng.uniform(-1, 1, (64, 16)).astype(np.float32)
    if perturb:
        w1 = (w1 * rng.uniform(1 - 3e-5, 1 + 3e-5, w1.shape)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h"], name="mm1"),
             helper.make_node("DynamicQuantizeLinear", ["h"], ["q", "s", "z"], name="dql"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], name="dq"),
             helper.make_node("MatMul", ["d", "W2"], ["y"], name="mm2")]
    return model(nodes, [vi("x", [64, 32])], [vi("y", [64, 16]), vi("q", [64, 64], TensorProto.UINT8)],
                 [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(w2, "W2")], 13, 7)


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def write_over_2gib(source, path):
    """`source` plus an unused uint8 initializer of 2 GiB + 100 zero bytes, written as a sparse file
    (a few KB on disk): bnorm reads it without loading the bytes, and no save of it fits protobuf's
    2 GiB limit, so saving fails after the report is made (with a hint)."""
    m = onnx.load(str(source))
    n = 2 ** 31 + 100
    graph = m.graph.SerializeToString()
    t = TensorProto()
    t.name, t.data_type = "unused_2gib", TensorProto.UINT8
    t.dims.append(n)
    tensor = t.SerializeToString()
    raw = bytes([(9 << 3) | 2]) + varint(n)  # TensorProto.raw_data
    tensor_len = len(tensor) + len(raw) + n
    init = bytes([(5 << 3) | 2]) + varint(tensor_len)  # GraphProto.initializer
    m.ClearField("graph")
    head = m.SerializeToString() + bytes([(7 << 3) | 2]) + varint(len(graph) + len(init) + tensor_len)
    with open(path, "wb") as f:
        f.write(head + graph + init + tensor + raw)
        f.seek(n, os.SEEK_CUR)
        f.truncate()


def build_models(dir, testdata, bnorm):
    d = Path(dir)
    onnx.save(conv_bn(scale=(3e38, 1.0, 1.0), var=(1e-4, 1.0, 1.0)), str(d / "overflow.onnx"))  # --verify fails
    onnx.save(ln_gemm(), str(d / "ln.onnx"))
    onnx.save(generated_bn(), str(d / "gen_bn.onnx"))
    onnx.save(generated_ln(), str(d / "gen_ln.onnx"))
    onnx.save(fp16_risky(), str(d / "fp16.onnx"))
    onnx.save(odd_dims(), str(d / "dims.onnx"))
    onnx.save(range_11(), str(d / "range11.onnx"))
    onnx.save(ln_decomposition(), str(d / "ln_decomp.onnx"))
    onnx.save(nan_and_empty(False), str(d / "nan.onnx"))
    onnx.save(nan_and_empty(True), str(d / "nan_abs.onnx"))
    onnx.save(quantized(False), str(d / "quant_a.onnx"))
    onnx.save(quantized(True), str(d / "quant_b.onnx"))
    (d / "junk.onnx").write_bytes(b"not a model")
    write_over_2gib(testdata / "demo_opset6.onnx", d / "big.onnx")
    demo = onnx.load(str(testdata / "demo_opset6.onnx"))
    for t in demo.graph.initializer:
        if t.name == "bn1.scale":
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * 1.5, t.name))
    onnx.save(demo, str(d / "demo_changed.onnx"))
    for args in (["fold", str(testdata / "demo_opset6.onnx"), "-o", str(d / "demo_folded.onnx")],
                 ["upgrade", str(testdata / "demo_opset6.onnx"), "-o", str(d / "demo_opset17.onnx"), "--to", "17"]):
        r = subprocess.run([bnorm] + args, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"json_schema_test: cannot make a model: bnorm {' '.join(args)}: {r.stderr}")
    rng = np.random.default_rng(0)
    np.save(d / "x_fp16.npy", (rng.random((2, 3, 4, 4)) * 2 - 1).astype(np.float32))
    np.save(d / "x_ln.npy", (rng.random((2, 8)) * 2 - 1).astype(np.float32))
    (d / "sets").mkdir()
    np.save(d / "sets" / "input.npy", (rng.random((1, 3, 16, 16)) * 2 - 1).astype(np.float32))


def conformance_folders(cwd, node_tests):
    """conf/: a test that passes, one that fails, one with a shape problem, one skipped, one broken."""
    conf = cwd / "conf"
    conf.mkdir()
    shutil.copytree(node_tests / "test_batchnorm_example", conf / "test_pass")
    shutil.copytree(node_tests / "test_batchnorm_example", conf / "test_fail")
    shutil.copytree(node_tests / "test_batchnorm_example", conf / "test_shape")
    shutil.copytree(node_tests / "test_bernoulli", conf / "test_skip")
    (conf / "test_broken" / "test_data_set_0").mkdir(parents=True)
    (conf / "test_broken" / "model.onnx").write_bytes(b"junk")
    for name, change in (("test_fail", lambda a: a + 1.0), ("test_shape", lambda a: a.reshape(-1))):
        path = conf / name / "test_data_set_0" / "output_0.pb"
        t = TensorProto()
        t.ParseFromString(path.read_bytes())
        path.write_bytes(numpy_helper.from_array(change(numpy_helper.to_array(t)), t.name).SerializeToString())


# ----------------------------------------------------------------------------- the matrix

def cases(T, M, N):
    """(name, argv after the binary, expected kind, expected exit code, prepare(cwd) or None).
    T: testdata, M: models built here, N: testdata/onnx-node-1.23. Outputs are relative to cwd."""
    demo, cnn9 = str(T / "demo_opset6.onnx"), str(T / "small_cnn_opset9.onnx")

    def mkdir(*names):
        return lambda cwd: [(cwd / n).mkdir() for n in names]

    def out_with_self(cwd):  # out/self.onnx as input: its output would be itself
        (cwd / "out").mkdir()
        shutil.copy(T / "demo_opset6.onnx", cwd / "out" / "self.onnx")

    def full_device(cwd):
        if not os.path.exists("/dev/full"):
            raise Skip("no /dev/full")

    c = []
    add = lambda *a: c.append(a)
    add("version", ["version", "--json"], "bnorm.version/1", 0, None)
    E = "bnorm.error/1"
    add("inspect error", ["inspect", "none.onnx", "--json"], E, 2, None)
    add("fold error", ["fold", str(M / "junk.onnx"), "-o", "out.onnx", "--json"], E, 2, None)
    add("upgrade error (a node blocks)", ["upgrade", str(M / "range11.onnx"), "-o", "out.onnx", "--json", "--to", "10"],
        E, 2, None)
    add("eval error", ["eval", "none.onnx", "--random", "0", "--json"], E, 2, None)
    add("eval --compare error", ["eval", demo, "--compare", "none.onnx", "--json"], E, 2, None)

    for m in ("demo_opset6", "subgraph_if_opset11", "legacy_opset1", "legacy_training_opset1", "bn15_mixed_types",
              "every_field", "constant_params_opset12", "bn_spatial0_opset6", "external/model"):
        add(f"inspect {m}", ["inspect", str(T / f"{m}.onnx"), "--json"], "bnorm.inspect/1", 0, None)
    for m in ("dims", "ln", "gen_ln"):
        add(f"inspect {m} (built)", ["inspect", str(M / f"{m}.onnx"), "--json"], "bnorm.inspect/1", 0, None)
    add("inspect --to 15", ["inspect", demo, "--json", "--to", "15"], "bnorm.inspect/1", 0, None)
    add("inspect --to 23 (above 17)", ["inspect", cnn9, "--json", "--to", "23"], "bnorm.inspect/1", 0, None)
    add("inspect --to 16 (lowered)", ["inspect", str(M / "ln.onnx"), "--json", "--to", "16"],
        "bnorm.inspect/1", 0, None)
    add("inspect --to 10 (a node blocks)", ["inspect", str(M / "range11.onnx"), "--json", "--to", "10"],
        "bnorm.inspect/1", 0, None)
    add("inspect --to 5 (a type blocks)", ["inspect", str(T / "bn15_mixed_types.onnx"), "--json", "--to", "5"],
        "bnorm.inspect/1", 0, None)
    add("inspect --shapes", ["inspect", str(M / "fp16.onnx"), "--json", "--shapes"], "bnorm.inspect/1", 0, None)
    add("inspect --fp16", ["inspect", str(M / "fp16.onnx"), "--json", "--fp16"], "bnorm.inspect/1", 0, None)
    add("inspect --fp16 --random --dim", ["inspect", str(M / "fp16.onnx"), "--json", "--fp16", "--random", "0",
                                          "--dim", "batch=2"], "bnorm.inspect/1", 0, None)
    add("inspect --fp16 --input", ["inspect", str(M / "fp16.onnx"), "--json", "--fp16", "--input",
                                   f"x={M / 'x_fp16.npy'}"], "bnorm.inspect/1", 0, None)
    add("inspect --fp16 --to", ["inspect", str(M / "fp16.onnx"), "--json", "--fp16", "--to", "13"],
        "bnorm.inspect/1", 0, None)

    F = "bnorm.fold/1"
    add("fold", ["fold", demo, "-o", "out.onnx", "--json"], F, 0, None)
    add("fold --verify --seed", ["fold", demo, "-o", "out.onnx", "--json", "--verify", "--seed", "3"], F, 0, None)
    add("fold every decision --verify", ["fold", str(T / "fold_cases_opset13.onnx"), "-o", "out.onnx", "--json",
                                         "--verify"], F, 0, None)
    add("fold subgraphs --verify", ["fold", str(T / "subgraph_if_opset11.onnx"), "-o", "out.onnx", "--json",
                                    "--verify"], F, 0, None)
    add("fold nothing to fold", ["fold", str(T / "bn14_training.onnx"), "-o", "out.onnx", "--json"], F, 0, None)
    add("fold --no-copy", ["fold", str(T / "bn14_training.onnx"), "-o", "out.onnx", "--json", "--no-copy"], F, 0, None)
    add("fold --external-data", ["fold", str(T / "external" / "model.onnx"), "-o", "out.onnx", "--json",
                                 "--external-data", "w.bin"], F, 0, None)
    add("fold --norms bn", ["fold", str(M / "ln.onnx"), "-o", "out.onnx", "--json", "--norms", "bn"], F, 0, None)
    add("fold --norms all --verify", ["fold", str(M / "ln.onnx"), "-o", "out.onnx", "--json", "--norms", "all",
                                      "--verify"], F, 0, None)
    add("fold generated weights", ["fold", str(M / "gen_bn.onnx"), "-o", "out.onnx", "--json"], F, 0, None)
    add("fold --keep-generated", ["fold", str(M / "gen_bn.onnx"), "-o", "out.onnx", "--json", "--keep-generated"],
        F, 0, None)
    add("fold --norms all generated", ["fold", str(M / "gen_ln.onnx"), "-o", "out.onnx", "--json", "--norms", "all",
                                       "--verify"], F, 0, None)
    add("fold --norms all --keep-generated", ["fold", str(M / "gen_ln.onnx"), "-o", "out.onnx", "--json", "--norms",
                                              "all", "--keep-generated"], F, 0, None)
    add("fold --verify fails", ["fold", str(M / "overflow.onnx"), "-o", "out.onnx", "--json", "--verify"], F, 1, None)
    add("fold save fails (2 GiB, hint)", ["fold", str(M / "big.onnx"), "-o", "out.onnx", "--json"], F, 2, None)
    add("fold save fails (/dev/full)", ["fold", demo, "-o", "/dev/full", "--json"], F, 2, full_device)

    FB = "bnorm.fold-batch/1"
    add("fold --output-dir", ["fold", demo, str(T / "small_cnn_opset6.onnx"), "--output-dir", "out", "--json"],
        FB, 0, mkdir("out"))
    add("fold --output-dir one model", ["fold", demo, "--output-dir", "out", "--json"], FB, 0, mkdir("out"))
    add("fold --output-dir --norms all --verify", ["fold", str(M / "ln.onnx"), str(M / "gen_ln.onnx"), "--output-dir",
                                                   "out", "--json", "--norms", "all", "--verify"], FB, 0, mkdir("out"))
    add("fold --output-dir with failures", ["fold", demo, str(M / "overflow.onnx"), str(M / "junk.onnx"),
                                            str(M / "big.onnx"), "out/self.onnx", "--output-dir", "out", "--json",
                                            "--verify"], FB, 2, out_with_self)
    add("fold --output-dir --no-copy", ["fold", str(T / "bn14_training.onnx"), demo, "--output-dir", "out", "--json",
                                        "--no-copy"], FB, 0, mkdir("out"))
    add("fold --output-dir verify fails", ["fold", demo, str(M / "overflow.onnx"), "--output-dir", "out", "--json",
                                           "--verify"], FB, 1, mkdir("out"))

    U = "bnorm.upgrade/1"
    add("upgrade", ["upgrade", demo, "-o", "out.onnx", "--json"], U, 0, None)
    add("upgrade --no-check", ["upgrade", demo, "-o", "out.onnx", "--json", "--no-check"], U, 0, None)
    add("upgrade --to 17 --verify --seed", ["upgrade", demo, "-o", "out.onnx", "--json", "--to", "17", "--verify",
                                            "--seed", "2"], U, 0, None)
    add("upgrade --inference", ["upgrade", str(T / "legacy_training_opset1.onnx"), "-o", "out.onnx", "--json",
                                "--inference"], U, 0, None)
    add("upgrade spatial=0", ["upgrade", str(T / "bn_spatial0_opset6.onnx"), "-o", "out.onnx", "--json"], U, 0, None)
    add("upgrade --to 13 (rewrites)", ["upgrade", cnn9, "-o", "out.onnx", "--json", "--to", "13"], U, 0, None)
    add("upgrade --to 23 --verify", ["upgrade", cnn9, "-o", "out.onnx", "--json", "--to", "23", "--verify"],
        U, 0, None)
    add("upgrade --to 16 (lowered)", ["upgrade", str(M / "ln.onnx"), "-o", "out.onnx", "--json", "--to", "16"],
        U, 0, None)
    add("upgrade --to 9 --no-casts (subgraphs)", ["upgrade", str(T / "subgraph_if_opset11.onnx"), "-o", "out.onnx",
                                                  "--json", "--to", "9", "--no-casts"], U, 0, None)
    add("upgrade --fuse-norms (not fused)", ["upgrade", str(M / "ln_decomp.onnx"), "-o", "out.onnx", "--json",
                                             "--to", "16", "--fuse-norms"], U, 0, None)
    add("upgrade --fuse-norms --verify", ["upgrade", str(M / "ln_decomp.onnx"), "-o", "out.onnx", "--json", "--to",
                                          "17", "--fuse-norms", "--verify"], U, 0, None)
    add("upgrade --verify --dim", ["upgrade", str(M / "fp16.onnx"), "-o", "out.onnx", "--json", "--to", "18",
                                   "--verify", "--dim", "batch=2"], U, 0, None)
    add("upgrade --external-data", ["upgrade", str(T / "external" / "model.onnx"), "-o", "out.onnx", "--json",
                                    "--external-data", "w.bin"], U, 0, None)
    add("upgrade save fails (2 GiB, hint)", ["upgrade", str(M / "big.onnx"), "-o", "out.onnx", "--json",
                                             "--no-check"], U, 2, None)

    UB = "bnorm.upgrade-batch/1"
    add("upgrade --output-dir", ["upgrade", demo, cnn9, "--output-dir", "out", "--json", "--to", "13"], UB, 0,
        mkdir("out"))
    add("upgrade --output-dir --fuse-norms --verify", ["upgrade", str(M / "ln_decomp.onnx"), demo, "--output-dir",
                                                       "out", "--json", "--to", "17", "--fuse-norms", "--verify"],
        UB, 0, mkdir("out"))
    add("upgrade --output-dir with failures", ["upgrade", demo, str(M / "junk.onnx"), str(M / "big.onnx"),
                                               "out/self.onnx", str(M / "range11.onnx"), "--output-dir", "out",
                                               "--json", "--no-check", "--to", "10"], UB, 2, out_with_self)

    EF = "bnorm.eval-folders/1"
    add("eval folders", ["eval", str(N), "--filter", "test_batchnorm_e*", "--json"], EF, 0, None)
    add("eval folders --junit --report", ["eval", str(N), "--filter", "test_layer_normalization_2d_axis1*", "--json",
                                          "--junit", "j.xml", "--report", "r.html"], EF, 0, None)
    add("eval folders: fail, skip, error", ["eval", "conf", "--json"], EF, 2,
        lambda cwd: conformance_folders(cwd, N))
    add("eval folders --rtol --atol: fail", ["eval", "conf/test_pass", "conf/test_fail", "conf/test_shape", "--json",
                                             "--rtol", "1e-2", "--atol", "1e-6"], EF, 1,
        lambda cwd: conformance_folders(cwd, N))

    EM = "bnorm.eval-model/1"
    add("eval model --random", ["eval", demo, "--random", "0", "--json"], EM, 0, None)
    add("eval model --output-dir", ["eval", demo, "--random", "0", "--json", "--output-dir", "od"], EM, 0, None)
    add("eval model --repeat", ["eval", demo, "--random", "0", "--repeat", "3", "--json"], EM, 0, None)
    add("eval model --random --dim", ["eval", str(M / "fp16.onnx"), "--random", "1", "--dim", "batch=1", "--json"],
        EM, 0, None)
    add("eval model --input", ["eval", str(M / "ln.onnx"), "--input", f"x={M / 'x_ln.npy'}", "--json"], EM, 0, None)
    add("eval model NaN and empty outputs", ["eval", str(M / "nan.onnx"), "--random", "0", "--json"], EM, 0, None)
    add("eval model float16", ["eval", str(T / "bn15_mixed_types.onnx"), "--random", "0", "--json"], EM, 0, None)

    EC = "bnorm.eval-compare/2"
    folded, changed = str(M / "demo_folded.onnx"), str(M / "demo_changed.onnx")
    add("eval --compare", ["eval", demo, "--compare", folded, "--random", "1", "--json"], EC, 0, None)
    add("eval --compare --trace", ["eval", demo, "--compare", folded, "--random", "1", "--json", "--trace"], EC, 0,
        None)
    add("eval --compare --trace: differ", ["eval", demo, "--compare", changed, "--json", "--trace"], EC, 1, None)
    add("eval --compare: differ, --junit --report", ["eval", demo, "--compare", changed, "--json", "--junit", "j.xml",
                                                     "--report", "r.html"], EC, 1, None)
    add("eval --compare --rtol --atol", ["eval", demo, "--compare", changed, "--json", "--rtol", "10", "--atol", "10"],
        EC, 0, None)
    add("eval --compare --inputs --trace", ["eval", demo, "--compare", folded, "--inputs", str(M / "sets"), "--json",
                                            "--trace"], EC, 0, None)
    add("eval --compare --input", ["eval", demo, "--compare", folded, "--input", f"input={M / 'sets' / 'input.npy'}",
                                   "--json"], EC, 0, None)
    add("eval --compare --trace: NaN against a number", ["eval", str(M / "nan.onnx"), "--compare",
                                                         str(M / "nan_abs.onnx"), "--random", "0", "--json", "--trace"],
        EC, 1, None)
    add("eval --compare --trace: another opset", ["eval", demo, "--compare", str(M / "demo_opset17.onnx"),
                                                  "--random", "4", "--json", "--trace"], EC, 0, None)
    for seed in ("0", "1", "2"):
        add(f"eval --compare --trace: codes flipped by rounding (seed {seed})",
            ["eval", str(M / "quant_a.onnx"), "--compare", str(M / "quant_b.onnx"), "--random", seed, "--json",
             "--trace"], EC, 0, None)
    dql = str(N / "test_dynamicquantizelinear" / "model.onnx")
    add("eval --compare --trace: no float64 evaluation (scaled)", ["eval", dql, "--compare", dql, "--random", "0",
                                                                   "--json", "--trace", "--error-stat", "p99"],
        EC, 0, None)
    return c


class Skip(Exception):
    pass


# ----------------------------------------------------------------------------- running

def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    bnorm = str(Path(sys.argv[1]).resolve())
    source = Path(sys.argv[2]).resolve()
    testdata = source / "testdata"
    schemas = Schemas(source / "docs" / "schema")
    failures = []
    ran = skipped = 0
    with tempfile.TemporaryDirectory(prefix="bnorm-json-schema-") as top:
        top = Path(top)
        (top / "models").mkdir()
        build_models(top / "models", testdata, bnorm)
        matrix = cases(testdata, top / "models", testdata / "onnx-node-1.23")
        for i, (name, args, kind, code, prepare) in enumerate(matrix):
            cwd = top / f"case{i:02d}"
            cwd.mkdir()
            command = " ".join([bnorm] + [a if " " not in a and "*" not in a else f"'{a}'" for a in args])
            try:
                if prepare:
                    prepare(cwd)
            except Skip as e:
                skipped += 1
                print(f"skip {name}: {e}")
                continue
            ran += 1
            try:
                r = subprocess.run([bnorm] + args, cwd=cwd, capture_output=True, text=True, timeout=600)
            except subprocess.TimeoutExpired:
                failures.append((name, command, "timed out after 600 s", ""))
                continue
            problems = check(r, kind, code, schemas)
            if problems:
                failures.append((name, command, "\n".join(problems), r.stderr))
            elif VERBOSE:
                print(f"ok   {name}: {command}")
            shutil.rmtree(cwd, ignore_errors=True)

    for name, command, what, stderr in failures:
        print(f"\nFAIL {name}\n  command (in its own temporary folder): {command}")
        print("  " + what.replace("\n", "\n  "))
        if stderr.strip():
            print("  stderr: " + stderr.strip().replace("\n", "\n          ")[:2000])

    missing = sorted(schemas.defined - schemas.seen)
    if missing:
        print(f"\nFAIL coverage: {len(missing)} field(s) defined in docs/schema/ appeared in no output:")
        for stem, pointer in missing:
            print(f"  {stem}.json#{pointer}   ({schemas.field_path(pointer)})")

    covered = len(schemas.defined) - len(missing)
    print(f"\njson_schema_test: {ran} commands run ({skipped} skipped), {len(failures)} with a problem; "
          f"{covered} of {len(schemas.defined)} fields of the {len(schemas.docs)} schemas printed by some command")
    ok = not failures and not missing
    passed = ran - len(failures) + (1 if not missing else 0)
    failed = len(failures) + (1 if missing else 0)
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 0 if ok else 1


def check(r, kind, code, schemas):
    """What is wrong with one command's result (empty: nothing)."""
    problems = []
    if r.returncode != code:
        problems.append(f"exit code {r.returncode}, expected {code}")
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError as e:
        problems.append(f"stdout is not one JSON document ({e}): {r.stdout[:500]!r}")
        return problems
    if not isinstance(doc, dict) or "schema" not in doc:
        problems.append("the document has no top-level \"schema\" field")
        return problems
    if doc["schema"] != kind:
        problems.append(f"\"schema\" is {doc['schema']!r}, expected {kind!r}")
    stem = schemas.kinds.get(doc["schema"])
    if stem is None:
        problems.append(f"no file in docs/schema/ defines {doc['schema']!r}")
        return problems
    errors = sorted(schemas.validators[stem].iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:10]:
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
        schema_where = "/".join(str(p) for p in e.absolute_schema_path)
        problems.append(f"schema mismatch at {where}: {e.message}\n"
                        f"    (schema path from docs/schema/{stem}.json, through its $refs: {schema_where})")
    if len(errors) > 10:
        problems.append(f"... and {len(errors) - 10} more mismatches")
    # Counted even when the document does not match, so that the coverage report lists only
    # fields that no command prints.
    schemas.mark(doc, stem)
    return problems


if __name__ == "__main__":
    sys.exit(main())
