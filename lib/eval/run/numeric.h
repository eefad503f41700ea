// Element conversion between a tensor's storage type and the type ops
// compute in: float for float, float16 and bfloat16 (one rounding on the
// way back), double for double. Plus the small shape helpers every op
// family needs.
#pragma once

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "kernels/half.h"
#include "model/tensor.h"

namespace bnorm::eval {

// Calls f(float{}) or f(double{}) by the compute type of floating type `t`;
// any other type is Error(unsupported) naming `what`.
template <typename F>
auto with_float_type(DType t, const char* what, F&& f) {
  switch (t) {
    case DType::float64: return f(double{});
    case DType::float32:
    case DType::float16:
    case DType::bfloat16: return f(float{});
    default: fail(ErrorKind::unsupported, "{} of type {} is not supported", what, dtype_name(t));
  }
}

// The elements of `t` (any numeric type) converted to T.
template <typename T>
std::vector<T> load_values(const Tensor& t) {
  const int64_t n = t.numel();
  std::vector<T> out(static_cast<size_t>(n));
  auto cast_all = [&](auto tag) {
    using S = decltype(tag);
    const auto* p = t.data<S>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(p[i]);
  };
  switch (t.dtype) {
    case DType::float32:
      if constexpr (std::is_same_v<T, float>) {
        if (n) std::memcpy(out.data(), t.bytes.data(), t.bytes.size());
      } else {
        cast_all(float{});
      }
      break;
    case DType::float64: cast_all(double{}); break;
    case DType::float16: {
      const auto* p = t.data<kernels::f16>();
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(kernels::f16_to_f32(p[i]));
      break;
    }
    case DType::bfloat16: {
      const auto* p = t.data<kernels::bf16>();
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(kernels::bf16_to_f32(p[i]));
      break;
    }
    case DType::int8: cast_all(int8_t{}); break;
    case DType::uint8: cast_all(uint8_t{}); break;
    case DType::int16: cast_all(int16_t{}); break;
    case DType::uint16: cast_all(uint16_t{}); break;
    case DType::int32: cast_all(int32_t{}); break;
    case DType::uint32: cast_all(uint32_t{}); break;
    case DType::int64: cast_all(int64_t{}); break;
    case DType::uint64: cast_all(uint64_t{}); break;
    case DType::boolean: cast_all(uint8_t{}); break;
    case DType::int4:
    case DType::int2: cast_all(int8_t{}); break;  // held unpacked (model/tensor.h)
    case DType::uint4:
    case DType::uint2: cast_all(uint8_t{}); break;
    case DType::float8e4m3fn:
    case DType::float8e4m3fnuz:
    case DType::float8e5m2:
    case DType::float8e5m2fnuz:
    case DType::float8e8m0:
    case DType::float4e2m1: {
      const auto* p = t.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(minifloat_value(t.dtype, p[i]));
      break;
    }
    default: fail(ErrorKind::unsupported, "values of type {} are not supported", dtype_name(t.dtype));
  }
  return out;
}

// The tensor type that holds T: float32 for float, float64 for double.
template <typename T>
constexpr DType dtype_of() {
  return std::is_same_v<T, double> ? DType::float64 : DType::float32;
}

// t's values as T: its own storage when it holds T, else a converted copy
// kept in `keep`.
template <typename T>
const T* values_as(const Tensor& t, std::vector<T>& keep) {
  if (t.dtype == dtype_of<T>()) return t.data<T>();
  keep = load_values<T>(t);
  return keep.data();
}

// Stores `v` (out.numel() values) into floating tensor `out`, rounding once
// (float8 types: overflow to infinity or NaN, as Tensor::from_f64; float8e8m0:
// the nearest power of two).
template <typename T>
void store_values(Tensor& out, const T* v) {
  const int64_t n = out.numel();
  switch (out.dtype) {
    case DType::float32: {
      auto* p = out.data<float>();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(v[i]);
      break;
    }
    case DType::float64: {
      auto* p = out.data<double>();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<double>(v[i]);
      break;
    }
    case DType::float16: {
      auto* p = out.data<kernels::f16>();
      for (int64_t i = 0; i < n; ++i) p[i] = kernels::f64_to_f16(static_cast<double>(v[i]));
      break;
    }
    case DType::bfloat16: {
      auto* p = out.data<kernels::bf16>();
      for (int64_t i = 0; i < n; ++i) p[i] = kernels::f64_to_bf16(static_cast<double>(v[i]));
      break;
    }
    case DType::float8e4m3fn:
    case DType::float8e4m3fnuz:
    case DType::float8e5m2:
    case DType::float8e5m2fnuz:
    case DType::float8e8m0:
    case DType::float4e2m1: {
      auto* p = out.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = minifloat_bits(out.dtype, static_cast<double>(v[i]), false);
      break;
    }
    default: fail(ErrorKind::unsupported, "results of type {} are not supported", dtype_name(out.dtype));
  }
}

template <typename T>
Tensor make_tensor(DType t, std::vector<int64_t> dims, const std::vector<T>& v) {
  Tensor out(t, std::move(dims));
  store_values(out, v.data());
  return out;
}

// An int64 or int32 tensor (shape, axes, pads) as int64 values.
std::vector<int64_t> read_ints(const Tensor& t, const char* what);
// `axis` in [-rank, rank) made non-negative, else Error(input).
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what = "axis");
// Numpy multidirectional broadcasting of two shapes, else Error(input).
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Strides (in elements) of `dims` as seen from `out_dims` under broadcasting:
// right-aligned, 0 along broadcast dimensions.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out_dims);
int64_t product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX);

}  // namespace bnorm::eval
