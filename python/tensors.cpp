#include "tensors.h"

namespace bnorm::python {

namespace {

// An input as the package passes it: the array C-contiguous in native
// byte order, and its ONNX element type.
struct Input {
  py::array array;
  int dtype = 0;
};

Tensor to_tensor(const std::string& name, const Input& in) {
  const auto t = static_cast<DType>(in.dtype);
  const size_t size = dtype_size(t);
  if (size == 0) throw Error(ErrorKind::usage, "input '" + name + "': bnorm holds no " + dtype_name(t));
  if (static_cast<size_t>(in.array.itemsize()) != size) {
    throw Error(ErrorKind::usage, "input '" + name + "': " + std::to_string(in.array.itemsize()) +
                                      "-byte elements for " + dtype_name(t) + ", which takes " + std::to_string(size));
  }
  if (!(in.array.flags() & py::array::c_style)) {
    throw Error(ErrorKind::usage, "input '" + name + "': the array is not C-contiguous");
  }
  Tensor out;
  out.name = name;
  out.dtype = t;
  out.dims.assign(in.array.shape(), in.array.shape() + in.array.ndim());
  const auto* p = static_cast<const uint8_t*>(in.array.data());
  out.bytes.assign(p, p + in.array.nbytes());
  return out;
}

// numpy's container for each element type: the raw types (bfloat16, float8,
// the 4-bit ones) as the integers holding their bits; the package views
// them with their ONNX type in the dtype's metadata.
const char* numpy_format(DType t) {
  switch (t) {
    case DType::float32: return "f4";
    case DType::float64: return "f8";
    case DType::float16: return "f2";
    case DType::boolean: return "?";
    case DType::int8: case DType::int4: case DType::int2: return "i1";
    case DType::int16: return "i2";
    case DType::int32: return "i4";
    case DType::int64: return "i8";
    case DType::uint8: case DType::uint4: case DType::uint2: case DType::float4e2m1: case DType::float8e4m3fn:
    case DType::float8e4m3fnuz: case DType::float8e5m2: case DType::float8e5m2fnuz: case DType::float8e8m0:
      return "u1";
    case DType::uint16: case DType::bfloat16: return "u2";
    case DType::uint32: return "u4";
    case DType::uint64: return "u8";
    default: return nullptr;
  }
}

// The tensor's bytes become the array's, without a copy.
py::tuple to_array(Tensor&& t) {
  const char* format = numpy_format(t.dtype);
  if (!format) {
    throw Error(ErrorKind::unsupported, "output '" + t.name + "' is " + dtype_name(t.dtype) + ", which numpy cannot hold");
  }
  auto* bytes = new std::vector<uint8_t>(std::move(t.bytes));
  py::capsule owner(bytes, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
  const py::dtype dtype(format);
  std::vector<py::ssize_t> shape(t.dims.begin(), t.dims.end()), strides(t.dims.size());
  py::ssize_t stride = dtype.itemsize();
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  py::array array(dtype, shape, strides, bytes->empty() ? nullptr : bytes->data(), owner);
  return py::make_tuple(array, static_cast<int>(t.dtype));
}

}  // namespace

// {name: (array, dtype)}
std::map<std::string, Tensor> to_tensors(const py::dict& inputs) {
  std::map<std::string, Tensor> out;
  for (const auto& [key, value] : inputs) {
    const auto name = key.cast<std::string>();
    const auto pair = value.cast<py::tuple>();
    out.emplace(name, to_tensor(name, Input{pair[0].cast<py::array>(), pair[1].cast<int>()}));
  }
  return out;
}

std::vector<std::map<std::string, Tensor>> to_tensor_sets(const py::list& sets) {
  std::vector<std::map<std::string, Tensor>> out;
  for (const auto& set : sets) out.push_back(to_tensors(set.cast<py::dict>()));
  return out;
}

py::dict to_arrays(std::map<std::string, Tensor>&& tensors) {
  py::dict out;
  for (auto& [name, t] : tensors) {
    if (t.name.empty()) t.name = name;
    out[py::str(name)] = to_array(std::move(t));
  }
  return out;
}

std::map<std::string, InputRange> to_ranges(const Ranges& ranges) {
  std::map<std::string, InputRange> out;
  for (const auto& [name, r] : ranges) out[name] = InputRange{r.first, r.second};
  return out;
}
}  // namespace bnorm::python
