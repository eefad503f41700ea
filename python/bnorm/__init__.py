"""bnorm in-process: inspect, fold, upgrade, run and compare ONNX models (docs/python.md).

    import bnorm, onnx
    folded, report = bnorm.fold(onnx.load("model.onnx"), verify=True)   # a ModelProto in, one out
    assert bnorm.compare("model.onnx", folded)["pass"]

Every function takes a model as
- a path (str or os.PathLike): read as the CLI reads it; a bnorm.Model comes back,
  and reports name the path as the CLI's do;
- bytes (ModelProto.SerializeToString()): bytes come back;
- any object with SerializeToString(), an onnx.ModelProto of whatever onnx
  version: an object of the same class comes back (type(obj).FromString);
- a bnorm.Model (bnorm.load): a bnorm.Model comes back.
Models cross as serialized bytes, never as shared protobuf objects.

Reports are the documents `bnorm COMMAND --json` prints (schemas in
docs/schema/), as Python data; the path fields (input, output, file, a, b) are
None for a model given in memory, "written" is False (saving is the caller's).
Errors raise bnorm.Error (UsageError, InputError, UnsupportedError,
CheckFailed); what the CLI prints as a warning is issued as a
bnorm.BnormWarning. Calls release the GIL; Ctrl-C stops an evaluation at its
next node (docs/python.md, "Threads and Ctrl-C").
"""
import json as _json
import os as _os

from . import _bnorm
from ._errors import BnormWarning, CheckFailed, Error, InputError, UnsupportedError, UsageError
from ._tensors import ONNX_TYPES, from_output as _from_output, onnx_type_of, raw, raw_dtype, to_input as _to_input

__all__ = [
    "Model", "load", "inspect", "fold", "upgrade", "eval", "compare", "make_inputs", "raw", "raw_dtype",
    "onnx_type_of", "ONNX_TYPES", "Error", "UsageError", "InputError", "UnsupportedError", "CheckFailed",
    "BnormWarning", "__version__",
]

__version__ = _bnorm.version()

Model = _bnorm.Model
Model.__module__ = "bnorm"


def _model(obj):
    """(bnorm.Model, how to give a result back) for what the user passed."""
    if isinstance(obj, Model):
        return obj, ("model", None)
    if isinstance(obj, (str, _os.PathLike)):
        return Model.from_path(_os.fsdecode(obj)), ("model", None)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return Model.from_bytes(bytes(obj)), ("bytes", None)
    serialize = getattr(obj, "SerializeToString", None)
    if callable(serialize):
        return Model.from_bytes(serialize(), f"<{type(obj).__name__}>"), ("proto", type(obj))
    raise TypeError(f"a model is a path, bytes, an object with SerializeToString() (onnx.ModelProto) or a "
                    f"bnorm.Model, not {type(obj).__name__}")


def _give_back(model, how):
    kind, cls = how
    if kind == "model":
        return model
    data = model.to_bytes()
    if kind == "bytes":
        return data
    from_string = getattr(cls, "FromString", None)
    if callable(from_string):
        return from_string(data)
    out = cls()
    out.ParseFromString(data)
    return out


def load(model):
    """A bnorm.Model from a path, bytes or a ModelProto, read and validated as every bnorm command does."""
    return _model(model)[0]


def _io(model):
    """({input name: declared element type}, [output names]) of the main graph, cached on the Model."""
    cached = getattr(model, "_io", None)
    if cached is None:
        report = _json.loads(_bnorm.inspect(model, None, False, False, {}, None, {}, {}))
        cached = ({i["name"]: i["type"] for i in report["inputs"]}, [o["name"] for o in report["outputs"]])
        model._io = cached
    return cached


def _inputs(model, inputs):
    """{name: (array, ONNX type)} for the extension; `inputs` maps names to array-likes."""
    if not inputs:
        return {}
    if not hasattr(inputs, "items"):
        raise TypeError("inputs is a dict of input name to numpy array")
    declared = None
    out = {}
    for name, value in inputs.items():
        if not isinstance(name, str):
            raise TypeError(f"input names are str, not {type(name).__name__}")
        if declared is None:
            declared = _io(model)[0]
        out[name] = _to_input(name, value, declared.get(name))
    return out


def _input_sets(model, sets):
    if sets is None:
        return []
    return [_inputs(model, s) for s in sets]


def _ranges(input_ranges):
    """{name: (lo, hi)} from {name: (lo, hi)} (--input-range NAME=LO:HI)."""
    out = {}
    for name, r in (input_ranges or {}).items():
        lo, hi = r
        out[name] = (float(lo), float(hi))
    return out


def _dims(dims):
    out = {}
    for name, value in (dims or {}).items():
        if int(value) != value or value < 0:
            raise UsageError(f"dims[{name!r}]: {value!r} is not a size (a whole number >= 0)")
        out[name] = int(value)
    return out


def _seed(name, value):
    if value is None:
        return None
    if isinstance(value, bool) or int(value) != value or not 0 <= value < 2**64:
        raise UsageError(f"{name}: {value!r} is not a seed (a whole number in [0, 2^64))")
    return int(value)


def _refuse_without(flag_name, **given):
    for name, value in given.items():
        if value:
            raise UsageError(f"{name} has no effect without {flag_name}")


def inspect(model, to=None, *, fp16=False, shapes=False, random=None, inputs=None, dims=None, input_ranges=None):
    """What is in a model and what the other commands would do to it: `bnorm inspect --json` as a dict.

    to: the pre-flight of an upgrade to this opset (upgrade_plan). fp16: the float16 risks of the
    normalization nodes, measured on `inputs` ({name: array}) and, with random=SEED, random data for the
    others (dims sizing symbolic dims, input_ranges {name: (lo, hi)} their values).
    """
    m, _ = _model(model)
    if not fp16:
        _refuse_without("fp16=True", random=random is not None, inputs=inputs, dims=dims,
                        input_ranges=input_ranges)
    if input_ranges and random is None:
        raise UsageError("input_ranges has no effect without random: it sets random's data")
    text = _bnorm.inspect(m, None if to is None else int(to), bool(fp16), bool(shapes), _inputs(m, inputs),
                          _seed("random", random), _dims(dims), _ranges(input_ranges))
    return _json.loads(text)


def fold(model, verify=False, *, norms="bn", keep_generated=False, seed=None, inputs=None, input_sets=None,
         dims=None, input_ranges=None):
    """Fold inference normalization into the neighbouring Conv, ConvTranspose, Gemm or MatMul: `bnorm fold`.

    Returns (folded model, report): the model of the kind given (ModelProto in, ModelProto out), the report
    `bnorm fold --json`'s. The model given is not changed. verify=True proves each fold, and the whole model
    where bnorm runs it, on seeded random inputs (seed; inputs {name: array} or input_sets [{name: array}]
    for the whole-model check, dims, input_ranges {name: (lo, hi)}); a fold off raises CheckFailed, whose
    .report and .model are the report and the folded model. norms="all" also folds the affine of
    LayerNormalization, RMSNormalization and GroupNormalization.
    """
    m, how = _model(model)
    if norms not in ("bn", "all"):
        raise UsageError(f"norms={norms!r}: use 'bn' or 'all'")
    if not verify:
        _refuse_without("verify=True", seed=seed is not None, inputs=inputs, input_sets=input_sets,
                        dims=dims, input_ranges=input_ranges)
    if input_sets is not None and (inputs or dims):
        raise UsageError("input_sets gives every input of the whole-model check: drop inputs and dims")
    out, text, code = _bnorm.fold(m, bool(verify), _seed("seed", seed) or 0, _ranges(input_ranges),
                                  _inputs(m, inputs), _input_sets(m, input_sets), _dims(dims), norms == "all",
                                  bool(keep_generated))
    report = _json.loads(text)
    result = _give_back(out, how)
    if code != 0:
        raise CheckFailed("a fold is off beyond tolerance (the CLI writes nothing)", exit_code=code, report=report,
                          model=result)
    return result, report


def upgrade(model, to=15, *, inference=False, no_casts=False, no_check=False, fuse_norms=False, verify=False,
            seed=None, dims=None, input_ranges=None, inputs=None, input_sets=None):
    """Move a whole model to another opset, up or down: `bnorm upgrade --to N`.

    Returns (converted model, report), as fold does. Keywords are the CLI's options: inference (training
    nodes become inference nodes), no_casts, no_check, fuse_norms, verify (with seed, dims, input_ranges,
    inputs or input_sets). An output off under verify raises CheckFailed (.report, .model).
    """
    m, how = _model(model)
    if not verify:
        _refuse_without("verify=True", seed=seed is not None, dims=dims, input_ranges=input_ranges,
                        inputs=inputs, input_sets=input_sets)
    if input_sets is not None and (inputs or dims or seed is not None or input_ranges):
        raise UsageError("input_sets gives every input: drop inputs, seed, dims and input_ranges")
    out, text, code = _bnorm.upgrade(m, int(to), bool(inference), not no_casts, bool(fuse_norms), not no_check,
                                     bool(verify), _seed("seed", seed) or 0, _dims(dims), _ranges(input_ranges),
                                     _inputs(m, inputs), _input_sets(m, input_sets))
    report = _json.loads(text)
    result = _give_back(out, how)
    if code != 0:
        raise CheckFailed("an output of the converted model is off beyond tolerance (the CLI writes nothing)",
                          exit_code=code, report=report, model=result)
    return result, report


def eval(model, inputs=None, *, random=None, dims=None, input_ranges=None):  # noqa: A001 (the CLI's name)
    """Run a model: `bnorm eval MODEL`. Returns {output name: numpy array}, in graph output order.

    inputs: {name: array}; every graph input without an initializer must be given, unless random=SEED fills
    the others with `bnorm eval --random SEED`'s data (dims sizing symbolic dims, input_ranges
    {name: (lo, hi)} their values). Outputs are not copied: each array owns the memory bnorm computed into.
    """
    m, _ = _model(model)
    if random is None:
        _refuse_without("random", dims=dims, input_ranges=input_ranges)
    outputs = _bnorm.run(m, _inputs(m, inputs), _seed("random", random), _dims(dims), _ranges(input_ranges))
    order = _io(m)[1]
    named = {name: _from_output(*outputs[name]) for name in order if name in outputs}
    for name, value in outputs.items():
        named.setdefault(name, _from_output(*value))
    return named


def make_inputs(model, random=0, *, inputs=None, dims=None, input_ranges=None):
    """The data `bnorm eval --random SEED` runs a model on: {input name: numpy array} for every graph input
    (those in `inputs` as given)."""
    m, _ = _model(model)
    made = _bnorm.make_inputs(m, _seed("random", random), _dims(dims), _inputs(m, inputs), _ranges(input_ranges))
    return {name: _from_output(*value) for name, value in made.items()}


def compare(a, b, inputs=None, *, random=None, dims=None, input_ranges=None, trace=False, tolerance=None,
            error_stat="max", rtol=None, atol=None):
    """Run two models on the same inputs and judge B against A: `bnorm eval A --compare B --json` as a dict.

    inputs: {name: array} (the others random from random=SEED, or 0). tolerance "auto" (default: A's own
    rounding) or "fixed" (rtol/atol); error_stat: median, p90, p99, max or mean; trace=True: every value both
    compute, and the first divergence. Returns the report whatever the verdict: report["pass"] is False when
    the models differ (CheckFailed is for fold and upgrade, whose result is a model).
    """
    ma, _ = _model(a)
    mb, _ = _model(b)
    text, _code = _bnorm.compare(ma, mb, _inputs(ma, inputs), _seed("random", random) or 0, _dims(dims),
                                 _ranges(input_ranges), bool(trace), tolerance or "", rtol, atol, error_stat)
    return _json.loads(text)
