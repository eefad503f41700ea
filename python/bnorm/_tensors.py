"""numpy arrays in and out: every ONNX element type bnorm holds, and its numpy form.

Types numpy has are themselves (float16 is numpy.float16). The others are
*raw views*: arrays of the integer type that holds their bits, whose dtype
carries the ONNX type in its metadata (dtype.metadata == {"onnx_type": NAME}):

    bfloat16                    uint16, the 16-bit pattern
    float8e4m3fn, float8e4m3fnuz,
    float8e5m2, float8e5m2fnuz,
    float8e8m0                  uint8, the 8-bit pattern
    float4e2m1                  uint8, the 4-bit pattern in the low bits, one element per byte
    int4                        int8 in [-8, 7], one element per byte (unpacked)
    uint4                       uint8 in [0, 15], one element per byte (unpacked)

bnorm.raw(array, "bfloat16") makes such a view; outputs of these types come
as such views. An input without the metadata is taken as the model declares
it when its container fits (a uint16 array for a bfloat16 input). A list or a
scalar (anything but an ndarray) takes the type the model declares.
"""
import numpy as np

# ONNX's TensorProto.DataType, by bnorm's names (its reports' spelling).
ONNX_TYPES = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "bool": 9,
    "float16": 10, "double": 11, "uint32": 12, "uint64": 13, "bfloat16": 16, "float8e4m3fn": 17,
    "float8e4m3fnuz": 18, "float8e5m2": 19, "float8e5m2fnuz": 20, "uint4": 21, "int4": 22, "float4e2m1": 23,
    "float8e8m0": 24,
}
TYPE_NAMES = {code: name for name, code in ONNX_TYPES.items()}

# The types numpy has.
_NUMPY = {
    np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.uint16): 4,
    np.dtype(np.int16): 5, np.dtype(np.int32): 6, np.dtype(np.int64): 7, np.dtype(np.bool_): 9,
    np.dtype(np.float16): 10, np.dtype(np.float64): 11, np.dtype(np.uint32): 12, np.dtype(np.uint64): 13,
}

_DTYPE_OF = {code: dtype for dtype, code in _NUMPY.items()}

# The raw types: (container, the values an element may take or None).
RAW = {
    "bfloat16": (np.uint16, None),
    "float8e4m3fn": (np.uint8, None), "float8e4m3fnuz": (np.uint8, None),
    "float8e5m2": (np.uint8, None), "float8e5m2fnuz": (np.uint8, None), "float8e8m0": (np.uint8, None),
    "float4e2m1": (np.uint8, (0, 15)),
    "int4": (np.int8, (-8, 7)),
    "uint4": (np.uint8, (0, 15)),
}


def raw_dtype(onnx_type):
    """The numpy dtype of a raw view of ONNX type `onnx_type` ("bfloat16", "float8e4m3fn", "int4", ...)."""
    from ._errors import UsageError
    if onnx_type not in RAW:
        raise UsageError(f"'{onnx_type}' is no raw type: those are {', '.join(RAW)} (numpy holds the others itself)")
    return np.dtype(RAW[onnx_type][0], metadata={"onnx_type": onnx_type})


def raw(array, onnx_type):
    """A view of `array` (its container type: uint16 for bfloat16, ...) as ONNX type `onnx_type`, no copy."""
    from ._errors import UsageError
    dtype = raw_dtype(onnx_type)
    a = np.asarray(array)
    if a.dtype != np.dtype(RAW[onnx_type][0]):
        raise UsageError(f"a {onnx_type} array is held in {np.dtype(RAW[onnx_type][0]).name}, not {a.dtype.name}")
    return a.view(dtype)


def onnx_type_of(array):
    """The ONNX type a raw view carries, else None."""
    md = array.dtype.metadata
    return md.get("onnx_type") if md else None


def to_input(name, value, declared=None):
    """(C-contiguous native array, ONNX type code) for input `name`; `declared` is the model's type for it."""
    from ._errors import UsageError
    if not isinstance(value, np.ndarray) and declared in ONNX_TYPES and ONNX_TYPES[declared] in _DTYPE_OF:
        # A list or a scalar takes the declared type (numpy would make 1.5 a float64).
        value = np.asarray(value, dtype=_DTYPE_OF[ONNX_TYPES[declared]])
    a = np.asarray(value)
    kind = onnx_type_of(a)
    plain = np.dtype(a.dtype.str)  # without metadata, native order spelled out
    if kind is None and declared in RAW and plain == np.dtype(RAW[declared][0]):
        kind = declared
    if kind is not None:
        if kind not in RAW:
            raise UsageError(f"input '{name}': unknown onnx_type '{kind}' in the array's dtype metadata")
        if plain.newbyteorder("=") != np.dtype(RAW[kind][0]):
            raise UsageError(f"input '{name}': a {kind} array is held in {np.dtype(RAW[kind][0]).name}, "
                             f"not {a.dtype.name}")
        code = ONNX_TYPES[kind]
        bounds = RAW[kind][1]
    else:
        code = _NUMPY.get(plain.newbyteorder("="))
        bounds = None
        if code is None:
            raise UsageError(f"input '{name}': numpy type {a.dtype} is no ONNX element type bnorm holds "
                             f"(bnorm.raw(array, TYPE) for bfloat16, float8, int4, uint4 and float4e2m1)")
    a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
    if bounds is not None and a.size and (a.min() < bounds[0] or a.max() > bounds[1]):
        raise UsageError(f"input '{name}': {TYPE_NAMES[code]} elements are one a byte in "
                         f"[{bounds[0]}, {bounds[1]}]; the array holds {a.min()}..{a.max()}")
    return a, code


def from_output(array, code):
    """An output array from the extension, as its ONNX type's numpy form."""
    name = TYPE_NAMES.get(code)
    if name in RAW:
        return array.view(raw_dtype(name))
    return array
