// numpy arrays to the library's tensors and back (docs/python.md, "Arrays").
// The package (bnorm/_tensors.py) resolves each input's ONNX type, raw
// views included, and hands over (array, type) pairs, each array
// C-contiguous in native byte order; inputs are copied once into
// bnorm::Tensor (which owns its bytes). Outputs move into numpy without a
// copy: a Tensor's bytes become the array's memory, owned by its base.
#pragma once

#include <bnorm/bnorm.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace bnorm::python {

namespace py = pybind11;

// {name: (array, ONNX element type)} -> tensors; Error(usage) naming the
// input when the array does not fit the type.
std::map<std::string, Tensor> to_tensors(const py::dict& inputs);
// [{name: (array, type)}, ...]
std::vector<std::map<std::string, Tensor>> to_tensor_sets(const py::list& sets);

// {name: (array, ONNX element type)}, the arrays of numpy's container type
// for the raw types (bfloat16, float8, the 4-bit ones): the package views
// them with their ONNX type in the dtype's metadata.
py::dict to_arrays(std::map<std::string, Tensor>&& tensors);

// --input-range NAME=LO:HI as {name: (lo, hi)}.
using Ranges = std::map<std::string, std::pair<double, double>>;
std::map<std::string, InputRange> to_ranges(const Ranges& ranges);

}  // namespace bnorm::python
