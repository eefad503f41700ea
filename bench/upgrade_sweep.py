#!/usr/bin/python3
"""Every model of a folder to every opset of 1..23 and back, each step
proven by `bnorm upgrade --verify` (seeded random inputs, outputs within the
documented tolerance). Prints one line per model: for each target, "ok"
(down or up and back, both verified), "one-way" (converted and verified, the
way back failed), or the first words of why bnorm refused; then the counts.
With --ort NODE_MODULES (a folder holding onnxruntime-node: `npm install
--ignore-scripts onnxruntime-node`), every model bnorm writes at opset 7 or
above is also loaded in onnxruntime, which must accept it; a refusal counts
as "ort-refused" and is listed with onnxruntime's message. Not part of
`make test` (it reads third-party models):

    /usr/bin/python3 bench/upgrade_sweep.py [--bnorm build/bnorm] [--ort DIR] [--dim N=V ...] DIR_OR_MODEL...
"""
import json
import argparse
import os
import re
import subprocess
import sys
import tempfile

import onnx


def symbolic_dims(path):
    m = onnx.load(path, load_external_data=False)
    return {d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}


def opset_of(path):
    m = onnx.load(path, load_external_data=False)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 1


def upgrade(bnorm, src, dst, to, dims):
    cmd = [bnorm, "-q", "upgrade", src, "-o", dst, "--to", str(to), "--verify"]
    for d in dims:
        cmd += ["--dim", d]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 0:
        return None
    lines = [l for l in r.stderr.splitlines() if l.strip() and not l.startswith("  hint")]
    why = " / ".join(l.strip() for l in lines[:2]) or f"exit {r.returncode}"
    return f"exit {r.returncode}: " + re.sub(r"^bnorm: error: \S+: ", "", why)


class OrtLoader:
    """One node process loading models on request (bench/ort/load_models.js)."""

    def __init__(self, node_modules):
        here = os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ, NODE_PATH=node_modules)
        self.p = subprocess.Popen(["node", os.path.join(here, "ort", "load_models.js")], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)

    def refusal(self, model):
        self.p.stdin.write(model + "\n")
        self.p.stdin.flush()
        r = json.loads(self.p.stdout.readline())
        return None if r["ok"] else r["error"][:200]


def general(why):
    """The reason without the opsets and counts that vary with the target."""
    why = re.sub(r"\b(opset|to|from|Version \$)\s*\d+", r"\1 N", why)
    why = re.sub(r"^exit 2: \d+ nodes", "exit 2: K nodes", why)
    return why[:160]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--bnorm", default="build/bnorm")
    ap.add_argument("--dim", action="append", default=[])
    ap.add_argument("--lo", type=int, default=1)
    ap.add_argument("--hi", type=int, default=23)
    ap.add_argument("--ort", help="node_modules folder holding onnxruntime-node")
    a = ap.parse_args()
    ort = OrtLoader(a.ort) if a.ort else None
    models = []
    for p in a.paths:
        if os.path.isdir(p):
            models += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".onnx"))
        else:
            models.append(p)
    totals = {"ok": 0, "one-way": 0, "refused": 0, "ort-refused": 0}
    reasons = {}
    with tempfile.TemporaryDirectory() as work:
        for path in models:
            name = os.path.basename(path)
            start = opset_of(path)
            have = symbolic_dims(path)
            dims = [d for d in a.dim if d.split("=")[0] in have]  # --dim only for the model's own dims
            cells = []
            for to in range(a.lo, a.hi + 1):
                if to == start:
                    cells.append(f"{to}:=")
                    continue
                there, back = os.path.join(work, "there.onnx"), os.path.join(work, "back.onnx")
                why = upgrade(a.bnorm, path, there, to, dims)
                if why:
                    totals["refused"] += 1
                    reasons.setdefault(general(why), []).append(f"{name}@{to}")
                    cells.append(f"{to}:-")
                    continue
                if ort and to >= 7:
                    why = ort.refusal(there)
                    if why:
                        totals["ort-refused"] += 1
                        reasons.setdefault("onnxruntime: " + general(why), []).append(f"{name}@{to}")
                why = upgrade(a.bnorm, there, back, start, dims)
                if why:
                    totals["one-way"] += 1
                    reasons.setdefault("back: " + general(why), []).append(f"{name}@{to}")
                    cells.append(f"{to}:>")
                else:
                    why = ort.refusal(back) if ort and start >= 7 else None
                    if why:
                        totals["ort-refused"] += 1
                        reasons.setdefault("onnxruntime, back: " + general(why), []).append(f"{name}@{to}")
                    totals["ok"] += 1
                    cells.append(f"{to}:ok")
            print(f"{name} (opset {start}): {' '.join(cells)}", flush=True)
    print(f"\n{totals['ok']} round trips verified, {totals['one-way']} one way only, {totals['refused']} refused"
          + (f", {totals['ort-refused']} written models onnxruntime refused" if ort else ""))
    for why, where in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(where):3d} x {why}\n        e.g. {', '.join(where[:4])}")


if __name__ == "__main__":
    sys.exit(main())
