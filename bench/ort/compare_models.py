#!/usr/bin/python3
"""bnorm against onnxruntime on whole models: the same seeded random inputs
go to `bnorm eval MODEL --input NAME=FILE.npy` and to onnxruntime (through
bench/ort/run_model.js), and every output is compared element by element.

    /usr/bin/python3 bench/ort/compare_models.py --bnorm BUILD/bnorm --node-path NODE_MODULES \
        [--seed S] [--dim NAME=VALUE]... [--rtol R] [--atol A] [--optimization disabled|all] MODEL...

Inputs are the graph inputs that are not initializers. A symbolic dim takes
--dim NAME=VALUE, else 1. Float inputs are standard normal, except inputs
whose name contains "var" (a variance: BatchNormalization's), uniform in
[0.5, 1.5); integers uniform in [0, 4); bool uniform. The generator is numpy's
default_rng(seed), fed the inputs in graph order.

With --f64-reference, bnorm also runs a float64 copy of the model (float
initializers, inputs, outputs, Constant/ConstantOfShape values and Cast
targets made double) on the same inputs, and each output line adds both
sides' max abs error from that reference: where bnorm and onnxruntime
differ past the tolerance, it tells whose float32 rounding it is (a deep
or ill-conditioned network amplifies either side's).

A value agrees when |bnorm - ort| <= atol + rtol * |ort| (rtol 1e-4, atol
1e-5 for float32 and float64; 1e-2 for float16), NaN where both are NaN,
and integers and bools exactly. Prints one line per model and output; a
model that either side cannot run prints why. Exit status 1 if any output
differs or any model fails on either side.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

ONNX_TO_NP = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
              9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
NP_TO_ORT = {np.float32: "float32", np.uint8: "uint8", np.int8: "int8", np.uint16: "uint16", np.int16: "int16",
             np.int32: "int32", np.int64: "int64", np.bool_: "bool", np.float16: "float16", np.float64: "float64",
             np.uint32: "uint32", np.uint64: "uint64"}
ORT_TO_NP = {v: k for k, v in NP_TO_ORT.items()}
HERE = os.path.dirname(os.path.abspath(__file__))


def graph_inputs(model, dims):
    inits = {i.name for i in model.graph.initializer}
    out = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if tt.elem_type not in ONNX_TO_NP:
            raise RuntimeError(f"input {vi.name}: element type {tt.elem_type} is not handled")
        shape = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            else:
                shape.append(int(dims.get(d.dim_param, 1)))
        out.append((vi.name, ONNX_TO_NP[tt.elem_type], shape))
    return out


def make_input(rng, name, dtype, shape):
    if dtype in (np.float32, np.float64, np.float16):
        if "var" in name.lower():
            return rng.uniform(0.5, 1.5, shape).astype(dtype)
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(0, 4, shape).astype(dtype)


def file_stem(name):
    s = "".join("_" if c in "/\\:" else c for c in name)
    return s or "output"


def f64_copy(model):
    """The model with float32 made float64 wherever a type is written."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph

    def widen(t):
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name))

    for t in g.initializer:
        widen(t)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.DOUBLE
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                widen(a.t)
            elif n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.DOUBLE
    return m


def run_reference(args, model, values, work):
    """bnorm's outputs of the float64 copy, or the reason there are none."""
    path = os.path.join(work, "f64.onnx")
    onnx.save(f64_copy(model), path)
    feeds = []
    for i, (name, v) in enumerate(values):
        f = os.path.join(work, f"ref{i}.npy")
        np.save(f, v.astype(np.float64) if v.dtype == np.float32 else v)
        feeds.append((name, f))
    try:
        return run_bnorm(args, path, feeds, work, "f64"), None
    except RuntimeError as e:
        return None, str(e)


def run_bnorm(args, path, feeds, work, sub="bnorm"):
    out_dir = os.path.join(work, sub)
    cmd = [args.bnorm, "eval", path, "--output-dir", out_dir]
    for name, file in feeds:
        cmd += ["--input", f"{name}={file}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("bnorm: " + (r.stderr.strip() or r.stdout.strip()).splitlines()[-1])
    return out_dir


def run_ort(args, path, inputs, work):
    manifest = {"model": path, "out_dir": work, "threads": 1, "optimization": args.optimization, "runs": 0,
                "inputs": inputs}
    mfile = os.path.join(work, "manifest.json")
    with open(mfile, "w") as f:
        json.dump(manifest, f)
    env = dict(os.environ, NODE_PATH=args.node_path)
    r = subprocess.run(["node", os.path.join(HERE, "run_model.js"), mfile], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("onnxruntime: " + (r.stderr.strip() or "exit %d" % r.returncode).splitlines()[-1])
    with open(os.path.join(work, "outputs.json")) as f:
        outs = json.load(f)
    res = {}
    for o in outs:
        dt = ORT_TO_NP[o["dtype"]]
        res[o["name"]] = np.fromfile(o["file"], dtype=dt).reshape(o["dims"])
    return res


def compare(a, b, rtol, atol):
    """(max abs, max rel, agree) of bnorm's a against onnxruntime's b."""
    if a.shape != b.shape:
        return None, None, f"shape {list(a.shape)} vs {list(b.shape)}"
    if a.size == 0:
        return 0.0, 0.0, True
    if a.dtype.kind in "iub":
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        return float(d.max()), float((d / np.maximum(np.abs(b.astype(np.float64)), 1e-300)).max()), bool((d == 0).all())
    x, y = a.astype(np.float64), b.astype(np.float64)
    nan = np.isnan(x) & np.isnan(y)
    same = (x == y) | nan
    d = np.where(same, 0.0, np.abs(x - y))
    d = np.where(np.isnan(d), np.inf, d)
    rel = d / np.where(np.abs(y) > 0, np.abs(y), np.inf)
    rel = np.where((d > 0) & (y == 0), np.inf, rel)
    ok = bool((d <= atol + rtol * np.abs(y)).all())
    return float(d.max()), float(rel.max()), ok


def known_difference(model, output):
    """Why onnxruntime's value of `output` differs by design, or ''."""
    for n in model.graph.node:
        if n.op_type == "BatchNormalization" and len(n.output) > 4 and n.output[4] == output:
            return "  (by design: onnxruntime writes 1/sqrt(var + eps) as saved_var, bnorm the variance; docs/semantics.md)"
    return ""


def check_model(args, path, dims):
    name = os.path.basename(path)
    model = onnx.load(path)
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as work:
        feeds, inputs, values = [], [], []
        for i, (iname, dtype, shape) in enumerate(graph_inputs(model, dims)):
            v = make_input(rng, iname, dtype, shape)
            npy, raw = os.path.join(work, f"in{i}.npy"), os.path.join(work, f"in{i}.bin")
            np.save(npy, v)
            v.tofile(raw)
            feeds.append((iname, npy))
            values.append((iname, v))
            inputs.append({"name": iname, "dtype": NP_TO_ORT[dtype], "dims": shape, "file": raw})
        errors = []
        try:
            bdir = run_bnorm(args, path, feeds, work)
        except RuntimeError as e:
            bdir = None
            errors.append(str(e))
        try:
            ort = run_ort(args, path, inputs, work)
        except RuntimeError as e:
            ort = None
            errors.append(str(e))
        if errors:
            for e in errors:
                print(f"{name}: CANNOT RUN  {e}")
            return False
        ref_dir, ref_error = run_reference(args, model, values, work) if args.f64_reference else (None, None)
        if ref_error:
            print(f"{name}: no float64 reference ({ref_error})")
        good = True
        for out in model.graph.output:
            if out.name not in ort:
                print(f"{name}  {out.name}: onnxruntime gave no such output")
                good = False
                continue
            f = os.path.join(bdir, file_stem(out.name) + ".npy")
            if not os.path.exists(f):
                print(f"{name}  {out.name}: bnorm wrote no {f}")
                good = False
                continue
            a, b = np.load(f), ort[out.name]
            tight = b.dtype == np.float16
            rtol, atol = (1e-2, 1e-2) if tight else (args.rtol, args.atol)
            mabs, mrel, ok = compare(a, b, rtol, atol)
            if mabs is None:
                print(f"{name}  {out.name}: DIFFER  {ok}")
                good = False
                continue
            verdict = "agree" if ok else "DIFFER"
            good = good and ok
            ref = ""
            rf = os.path.join(ref_dir, file_stem(out.name) + ".npy") if ref_dir else ""
            if rf and os.path.exists(rf) and b.dtype.kind == "f":
                r = np.load(rf).astype(np.float64)
                if r.shape == a.shape:
                    eb = np.nanmax(np.abs(a.astype(np.float64) - r)) if a.size else 0.0
                    eo = np.nanmax(np.abs(b.astype(np.float64) - r)) if b.size else 0.0
                    ref = f"  (vs float64: bnorm {eb:.3g}, onnxruntime {eo:.3g})"
            note = "" if ok else known_difference(model, out.name)
            print(f"{name}  {out.name} {b.dtype} {list(b.shape)}: max abs {mabs:.3g}  max rel {mrel:.3g}  {verdict}{ref}{note}")
        return good


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--bnorm", required=True)
    ap.add_argument("--node-path", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dim", action="append", default=[], help="NAME=VALUE for a symbolic dim")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--optimization", default="disabled", choices=["disabled", "basic", "extended", "all"])
    ap.add_argument("--f64-reference", action="store_true", help="also compare both with bnorm on a float64 copy")
    args = ap.parse_args()
    dims = dict(d.split("=", 1) for d in args.dim)
    failed = 0
    for path in args.models:
        try:
            ok = check_model(args, os.path.abspath(path), dims)
        except Exception as e:  # a model onnx cannot read, an input type not handled
            print(f"{os.path.basename(path)}: CANNOT RUN  {e}")
            ok = False
        failed += not ok
    print(f"{len(args.models) - failed} models agree, {failed} differ or cannot run")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
