#!/usr/bin/env python3
"""Copies ONNX 1.23's node tests at opsets 1 to 28 into testdata/onnx-node-1.23.

    /usr/bin/python3 scripts/copy_conformance.py ../shared/conformance/onnx-node-1.23

The source is ONNX's own data (Apache-2.0); testdata/onnx-node-1.23/NOTICE
names it. Every folder whose default-domain opset is 1 to 28 (the newest ONNX
1.23 defines) is copied, those of the ai.onnx.preview domain's FlexAttention
(opset 26) included; folders at opsets 24..28 run in tests/conformance_1_23_test.cpp
next to the rest. The copy is exact (bytes unchanged).
"""
import shutil
import sys
from pathlib import Path

import onnx

MAX_OPSET = 28  # the newest opset of ONNX 1.23


def opset_of(model_path):
    m = onnx.load(str(model_path), load_external_data=False)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 1


def main():
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/conformance/onnx-node-1.23")
    dst = Path(__file__).resolve().parent.parent / "testdata" / "onnx-node-1.23"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    copied = 0
    for d in sorted(p for p in src.iterdir() if (p / "model.onnx").is_file()):
        if 1 <= opset_of(d / "model.onnx") <= MAX_OPSET:
            shutil.copytree(d, dst / d.name)
            copied += 1
    source = (src.parent / (src.name + ".SOURCE.txt"))
    notice = ("ONNX backend node tests (model.onnx and test_data_set_*), copied unchanged from the ONNX project,\n"
              "https://github.com/onnx/onnx, onnx/backend/test/data/node, licensed under the Apache License 2.0\n"
              "(http://www.apache.org/licenses/LICENSE-2.0). Copyright (c) ONNX Project Contributors.\n"
              "Only the folders whose default-domain opset is 1 to 28 are here (all of ONNX 1.23's), copied by\n"
              "scripts/copy_conformance.py.\n")
    if source.exists():
        notice += "Source: " + source.read_text().strip() + "\n"
    (dst / "NOTICE").write_text(notice)
    print(f"{copied} folders -> {dst}")


if __name__ == "__main__":
    main()
