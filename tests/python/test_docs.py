#!/usr/bin/python3
"""The Python module's documentation: its type stubs name every public function with its keywords, and the
examples of docs/python.md and README.md run."""
import ast
import inspect as pyinspect
import os
import re
import unittest
from pathlib import Path

import bnorm
from support import SOURCE, Base, conv_bn_model


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
