# Type stubs of the bnorm package (docs/python.md).
import os
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, TypeVar, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str

ONNX_TYPES: Dict[str, int]

class Error(Exception):
    message: str
    hint: Optional[str]
    file: Optional[str]
    node: Optional[str]
    op: Optional[str]
    version: Optional[int]
    exit_code: int
    report: Optional[Dict[str, Any]]
    model: Any
    def __init__(self, message: str, *, hint: Optional[str] = ..., file: Optional[str] = ..., node: Optional[str] = ...,
                 op: Optional[str] = ..., version: Optional[int] = ..., exit_code: int = ...,
                 report: Optional[Dict[str, Any]] = ..., model: Any = ...) -> None: ...

class UsageError(Error, ValueError): ...
class InputError(Error): ...
class UnsupportedError(Error): ...
class CheckFailed(Error): ...
class BnormWarning(UserWarning): ...

class Model:
    @staticmethod
    def from_path(path: str) -> Model: ...
    @staticmethod
    def from_bytes(data: bytes, name: str = ...) -> Model: ...
    def to_bytes(self) -> bytes: ...
    def save(self, path: str, external_data: str = ...) -> None: ...
    def copy(self) -> Model: ...
    @property
    def opset(self) -> int: ...
    @property
    def ir_version(self) -> int: ...
    @property
    def path(self) -> Optional[str]: ...

# What a function takes as a model; fold and upgrade give back the same kind (a path gives a Model).
ModelLike = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Model, Any]
M = TypeVar("M")
Report = Dict[str, Any]
Arrays = Mapping[str, npt.ArrayLike]
Ranges = Mapping[str, Tuple[float, float]]

def load(model: ModelLike) -> Model: ...
def inspect(model: ModelLike, to: Optional[int] = ..., *, fp16: bool = ..., shapes: bool = ...,
            random: Optional[int] = ..., inputs: Optional[Arrays] = ..., dims: Optional[Mapping[str, int]] = ...,
            input_ranges: Optional[Ranges] = ...) -> Report: ...
@overload
def fold(model: Union[str, "os.PathLike[str]"], verify: bool = ..., *, norms: str = ..., keep_generated: bool = ...,
         seed: Optional[int] = ...,
         inputs: Optional[Arrays] = ..., input_sets: Optional[Sequence[Arrays]] = ...,
         dims: Optional[Mapping[str, int]] = ..., input_ranges: Optional[Ranges] = ...) -> Tuple[Model, Report]: ...
@overload
def fold(model: M, verify: bool = ..., *, norms: str = ..., keep_generated: bool = ..., seed: Optional[int] = ...,
         inputs: Optional[Arrays] = ..., input_sets: Optional[Sequence[Arrays]] = ...,
         dims: Optional[Mapping[str, int]] = ..., input_ranges: Optional[Ranges] = ...) -> Tuple[M, Report]: ...
@overload
def upgrade(model: Union[str, "os.PathLike[str]"], to: int = ..., *, inference: bool = ..., no_casts: bool = ...,
            no_check: bool = ..., fuse_norms: bool = ..., verify: bool = ..., seed: Optional[int] = ...,
            dims: Optional[Mapping[str, int]] = ..., input_ranges: Optional[Ranges] = ...,
            inputs: Optional[Arrays] = ..., input_sets: Optional[Sequence[Arrays]] = ...) -> Tuple[Model, Report]: ...
@overload
def upgrade(model: M, to: int = ..., *, inference: bool = ..., no_casts: bool = ..., no_check: bool = ...,
            fuse_norms: bool = ..., verify: bool = ..., seed: Optional[int] = ...,
            dims: Optional[Mapping[str, int]] = ..., input_ranges: Optional[Ranges] = ...,
            inputs: Optional[Arrays] = ..., input_sets: Optional[Sequence[Arrays]] = ...) -> Tuple[M, Report]: ...
def eval(model: ModelLike, inputs: Optional[Arrays] = ..., *, random: Optional[int] = ...,
         dims: Optional[Mapping[str, int]] = ..., input_ranges: Optional[Ranges] = ...) -> Dict[str, np.ndarray]: ...
def make_inputs(model: ModelLike, random: int = ..., *, inputs: Optional[Arrays] = ...,
                dims: Optional[Mapping[str, int]] = ...,
                input_ranges: Optional[Ranges] = ...) -> Dict[str, np.ndarray]: ...
def compare(a: ModelLike, b: ModelLike, inputs: Optional[Arrays] = ..., *, random: Optional[int] = ...,
            dims: Optional[Mapping[str, int]] = ..., input_ranges: Optional[Ranges] = ..., trace: bool = ...,
            tolerance: Optional[str] = ..., error_stat: str = ..., rtol: Optional[float] = ...,
            atol: Optional[float] = ...) -> Report: ...
def raw(array: npt.ArrayLike, onnx_type: str) -> np.ndarray: ...
def raw_dtype(onnx_type: str) -> np.dtype: ...
def onnx_type_of(array: np.ndarray) -> Optional[str]: ...
