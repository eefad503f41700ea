#!/usr/bin/python3
"""Whole-network speed, bnorm against onnxruntime, one thread each (run by
bench/model_speed.sh, which installs onnxruntime and writes the networks).

    /usr/bin/python3 bench/model_speed.py --bnorm BUILD/bnorm --node-path NODE_MODULES [--runs N] MODEL...

bnorm, two ways, with OMP_NUM_THREADS=1:
- warm: `bnorm eval MODEL --random 1 --repeat 4N --json`, the least CPU
  time of a run after the first (the first decodes the weights, which the
  later runs reuse, as an onnxruntime session does): the counterpart of
  onnxruntime's run, and the figure the ratio is of;
- process: `bnorm eval MODEL --random 1`, the fastest of N processes, and
  the same for a copy of the model whose graph is one Identity of the
  input but keeps every initializer ("load": the parse, the input and the
  summary; the weights are decoded on first use, so that copy reads none
  of them): process - load = a cold evaluation, weights read and decoded
  (column "cold").
Times are CPU time (user + system): on a machine shared with other work,
the CPU time of one thread is what the work costs, where wall time also
counts the waiting. onnxruntime: the fastest CPU time of 4 N warm
InferenceSession.run calls after one warm-up (intra_op_num_threads 1,
inter_op 1, sequential, graph optimization 'all', its default), on an
input of the same shape. ratio = bnorm warm / onnxruntime run.

With --matmul (no models needed), onnxruntime's MatMul W[M, K] x X[K, N]
on bench/gemm_bench.cpp's shapes instead, in GFLOP/s per CPU second of the
fastest of 100 runs: the counterpart of `build/bnorm_bench
--benchmark_filter=gemm`.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_seconds(cmd, env=None):
    """CPU time (user + system) of one process running cmd."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.read().decode()[-300:]}")
    p.stderr.close()
    return usage.ru_utime + usage.ru_stime


def noop_copy(model, path):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.node[:]
    m.graph.node.append(helper.make_node("Identity", [m.graph.input[0].name], ["noop"]))
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info("noop", onnx.TensorProto.FLOAT, None))
    onnx.save(m, path)


GEMM_SHAPES = [(64, 12544, 147), (64, 3136, 576), (128, 784, 1152), (256, 196, 2304), (512, 49, 4608),
               (32, 25600, 27), (1024, 100, 1024), (1, 1000, 512)]


def ort_matmul(node_path):
    with tempfile.TemporaryDirectory() as work:
        for m, n, k in GEMM_SHAPES:
            rng = np.random.default_rng(0)
            w = numpy_helper.from_array(rng.standard_normal((m, k)).astype(np.float32), "W")
            g = helper.make_graph([helper.make_node("MatMul", ["W", "input"], ["y"])], "mm",
                                  [helper.make_tensor_value_info("input", onnx.TensorProto.FLOAT, [k, n])],
                                  [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [m, n])], [w])
            model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
            model.ir_version = 7
            path, raw, mfile = (os.path.join(work, f) for f in ("mm.onnx", "in.bin", "m.json"))
            onnx.save(model, path)
            rng.standard_normal((k, n)).astype(np.float32).tofile(raw)
            with open(mfile, "w") as f:
                json.dump({"model": path, "out_dir": work, "threads": 1, "optimization": "all", "runs": 100,
                           "inputs": [{"name": "input", "dtype": "float32", "dims": [k, n], "file": raw}]}, f)
            r = subprocess.run(["node", os.path.join(HERE, "ort", "run_model.js"), mfile], capture_output=True,
                               text=True, env=dict(os.environ, NODE_PATH=node_path), check=True)
            ms = json.loads(r.stdout)["min_cpu_ms"]
            print(f"onnxruntime MatMul M {m} N {n} K {k}: {2 * m * n * k / ms / 1e6:.1f} GFLOP/s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="*")
    ap.add_argument("--matmul", action="store_true")
    ap.add_argument("--bnorm", required=True)
    ap.add_argument("--node-path", required=True)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    if a.matmul:
        ort_matmul(a.node_path)
        return 0
    env = dict(os.environ, OMP_NUM_THREADS="1")
    print(f"{'model':<12} {'process':>9} {'load':>9} {'cold':>9} {'warm':>9} {'ort run':>9} {'ratio':>6}   (CPU seconds)")
    with tempfile.TemporaryDirectory() as work:
        for path in a.models:
            model = onnx.load(path)
            name = os.path.splitext(os.path.basename(path))[0]
            noop = os.path.join(work, "noop.onnx")
            noop_copy(model, noop)
            proc = min(cpu_seconds([a.bnorm, "eval", path, "--random", "1"], env) for _ in range(a.runs))
            load = min(cpu_seconds([a.bnorm, "eval", noop, "--random", "1"], env) for _ in range(a.runs))
            r = subprocess.run([a.bnorm, "eval", path, "--random", "1", "--repeat", str(4 * a.runs + 1), "--json"],
                               capture_output=True, text=True, env=env, check=True)
            warm = json.loads(r.stdout)["timing"]["cpu_min_ms"] / 1e3
            vi = model.graph.input[0]
            shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            raw = os.path.join(work, "in.bin")
            np.random.default_rng(1).standard_normal(shape).astype(np.float32).tofile(raw)
            manifest = {"model": os.path.abspath(path), "out_dir": work, "threads": 1, "optimization": "all",
                        "runs": 4 * a.runs, "inputs": [{"name": vi.name, "dtype": "float32", "dims": shape, "file": raw}]}
            mfile = os.path.join(work, "m.json")
            with open(mfile, "w") as f:
                json.dump(manifest, f)
            r = subprocess.run(["node", os.path.join(HERE, "ort", "run_model.js"), mfile], capture_output=True,
                               text=True, env=dict(os.environ, NODE_PATH=a.node_path), check=True)
            ort = json.loads(r.stdout)["min_cpu_ms"] / 1e3
            print(f"{name:<12} {proc:9.3f} {load:9.3f} {proc - load:9.3f} {warm:9.4f} {ort:9.4f} {warm / ort:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
