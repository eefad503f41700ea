#include "model/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "core/error.h"
#include "model/buffer_pool.h"
#include "kernels/half.h"
#include "kernels/e8m0.h"
#include "kernels/minifloat.h"

// Tensor bytes are little-endian and are read and written with memcpy into
// native values, which is only right on a little-endian host.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "bnorm assumes a little-endian host");

namespace bnorm {

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

std::string tensor_label(const std::string& name) {
  return name.empty() ? std::string("tensor") : fmt::format("tensor '{}'", name);
}

// Checks that `v` is an integer within [lo, hi] (given as doubles, so the
// bounds of 64-bit types are exact powers of two: the test is `v < hi_excl`).
bool integral_in(double v, double lo, double hi_excl) {
  return std::isfinite(v) && std::trunc(v) == v && v >= lo && v < hi_excl;
}

template <typename T>
void store_integer(uint8_t* p, double v, const std::string& name, size_t index, DType t) {
  // Exclusive upper bound max + 1: exact in double for every integer type.
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);
  if (!integral_in(v, lo, hi)) {
    fail(ErrorKind::input, "{}: value {} at index {} is not representable as {}", tensor_label(name), v,
         index, dtype_name(t));
  }
  store<T>(p, static_cast<T>(v));
}

}  // namespace

size_t dtype_size(DType t) {
  switch (t) {
    case DType::float32: return 4;
    case DType::uint8: return 1;
    case DType::int8: return 1;
    case DType::uint16: return 2;
    case DType::int16: return 2;
    case DType::int32: return 4;
    case DType::int64: return 8;
    case DType::boolean: return 1;
    case DType::float16: return 2;
    case DType::float64: return 8;
    case DType::uint32: return 4;
    case DType::uint64: return 8;
    case DType::bfloat16: return 2;
    case DType::float8e4m3fn:
    case DType::float8e4m3fnuz:
    case DType::float8e5m2:
    case DType::float8e5m2fnuz:
    case DType::float8e8m0: return 1;
    case DType::uint4:
    case DType::int4:
    case DType::float4e2m1:
    case DType::uint2:
    case DType::int2: return 1;  // held unpacked (tensor.h)
    case DType::undefined:
    case DType::string: return 0;
  }
  return 0;
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::undefined: return "undefined";
    case DType::float32: return "float";
    case DType::uint8: return "uint8";
    case DType::int8: return "int8";
    case DType::uint16: return "uint16";
    case DType::int16: return "int16";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::string: return "string";
    case DType::boolean: return "bool";
    case DType::float16: return "float16";
    case DType::float64: return "double";
    case DType::uint32: return "uint32";
    case DType::uint64: return "uint64";
    case DType::bfloat16: return "bfloat16";
    case DType::float8e4m3fn: return "float8e4m3fn";
    case DType::float8e4m3fnuz: return "float8e4m3fnuz";
    case DType::float8e5m2: return "float8e5m2";
    case DType::float8e5m2fnuz: return "float8e5m2fnuz";
    case DType::float8e8m0: return "float8e8m0";
    case DType::uint4: return "uint4";
    case DType::int4: return "int4";
    case DType::float4e2m1: return "float4e2m1";
    case DType::uint2: return "uint2";
    case DType::int2: return "int2";
  }
  // Values outside the enum (complex64 = 14, complex128 = 15, newer types).
  return fmt::format("data type {}", static_cast<int32_t>(t));
}

bool is_floating(DType t) {
  return t == DType::float32 || t == DType::float64 || t == DType::float16 || t == DType::bfloat16;
}

bool is_float8(DType t) {
  return t == DType::float8e4m3fn || t == DType::float8e4m3fnuz || t == DType::float8e5m2 ||
         t == DType::float8e5m2fnuz;
}

bool is_4bit(DType t) { return t == DType::int4 || t == DType::uint4 || t == DType::float4e2m1; }

bool is_2bit(DType t) { return t == DType::int2 || t == DType::uint2; }

int packed_bits(DType t) { return is_4bit(t) ? 4 : is_2bit(t) ? 2 : 0; }

namespace {

bool minifloat_of(DType t, kernels::Minifloat* f) {
  switch (t) {
    case DType::float8e4m3fn: *f = kernels::Minifloat::e4m3fn; return true;
    case DType::float8e4m3fnuz: *f = kernels::Minifloat::e4m3fnuz; return true;
    case DType::float8e5m2: *f = kernels::Minifloat::e5m2; return true;
    case DType::float8e5m2fnuz: *f = kernels::Minifloat::e5m2fnuz; return true;
    case DType::float4e2m1: *f = kernels::Minifloat::e2m1; return true;
    default: return false;
  }
}

}  // namespace

double minifloat_value(DType t, uint8_t bits) {
  if (t == DType::float8e8m0) return kernels::e8m0_to_f64(bits);
  kernels::Minifloat f;
  if (!minifloat_of(t, &f)) fail(ErrorKind::unsupported, "type {} is not a float8 or float4 type", dtype_name(t));
  return kernels::minifloat_to_f64(bits, f);
}

uint8_t minifloat_bits(DType t, double v, bool saturate) {
  if (t == DType::float8e8m0) return kernels::to_e8m0(v, kernels::E8m0Round::nearest, saturate);
  kernels::Minifloat f;
  if (!minifloat_of(t, &f)) fail(ErrorKind::unsupported, "type {} is not a float8 or float4 type", dtype_name(t));
  return kernels::f64_to_minifloat(v, f, saturate);
}

namespace {
std::atomic<int64_t> g_max_tensor_bytes{kDefaultMaxTensorBytes};
}  // namespace

int64_t max_tensor_bytes() { return g_max_tensor_bytes.load(std::memory_order_relaxed); }

int64_t checked_buffer_numel(const std::vector<int64_t>& dims, size_t elem_bytes, const std::string& what) {
  int64_t n = 0;
  try {
    n = checked_numel(dims);
  } catch (const Error& e) {
    fail(ErrorKind::input, "{}: {}", what, e.bare_message());
  }
  const auto size = static_cast<int64_t>(elem_bytes);
  if (n > max_tensor_bytes() / size) {
    const std::string need = n <= INT64_MAX / size ? std::to_string(n * size) : "over " + std::to_string(INT64_MAX);
    throw Error(ErrorKind::input,
                fmt::format("{}: dims {} need {} bytes, over bnorm's limit of {} bytes per tensor", what,
                            shape_str(dims), need, max_tensor_bytes()),
                "is a dim of the model wrong?");
  }
  return n;
}

TensorByteLimit::TensorByteLimit(int64_t bytes) : previous_(max_tensor_bytes()) {
  if (bytes < 0) fail(ErrorKind::usage, "the tensor byte limit must not be negative, got {}", bytes);
  g_max_tensor_bytes.store(bytes, std::memory_order_relaxed);
}

TensorByteLimit::~TensorByteLimit() { g_max_tensor_bytes.store(previous_, std::memory_order_relaxed); }

int64_t checked_numel(const std::vector<int64_t>& dims, int64_t max_elements) {
  // The product of the non-zero dims must fit even when another dim is 0:
  // such a shape cannot hold data, but its strides would still overflow.
  int64_t nonzero = 1;
  bool empty = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < 0) fail(ErrorKind::input, "dims {}: dim {} is negative", shape_str(dims), i);
    if (d == 0) {
      empty = true;
      continue;
    }
    if (nonzero > INT64_MAX / d) fail(ErrorKind::input, "dims {}: element count overflows int64", shape_str(dims));
    nonzero *= d;
  }
  const int64_t n = empty ? 0 : nonzero;
  if (n > max_elements) {
    fail(ErrorKind::input, "dims {}: {} elements exceed the limit of {}", shape_str(dims), n, max_elements);
  }
  return n;
}

std::string shape_str(const std::vector<int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

Tensor::Tensor(DType t, std::vector<int64_t> shape, std::string tensor_name)
    : name(std::move(tensor_name)), dtype(t), dims(std::move(shape)) {
  const size_t size = dtype_size(t);
  if (size == 0) fail(ErrorKind::input, "{}: type {} has no fixed element size", tensor_label(name), dtype_name(t));
  const int64_t n = checked_buffer_numel(dims, size, fmt::format("{} of {}", tensor_label(name), dtype_name(t)));
  if (BufferPool* pool = current_buffer_pool()) {
    bytes = pool->take(static_cast<size_t>(n) * size);
  } else {
    bytes.assign(static_cast<size_t>(n) * size, 0);
  }
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::optional<std::vector<int64_t>> Tensor::to_i64() const {
  const int64_t n = numel();
  switch (dtype) {
    case DType::int64: return std::vector<int64_t>(data<int64_t>(), data<int64_t>() + n);
    case DType::int32: return std::vector<int64_t>(data<int32_t>(), data<int32_t>() + n);
    case DType::uint64: {
      std::vector<int64_t> out;
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t v = data<uint64_t>()[i];
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
        out.push_back(static_cast<int64_t>(v));
      }
      return out;
    }
    default: break;
  }
  std::vector<int64_t> out;
  for (double v : to_f64()) {  // exact for the other integer types and every floating one
    if (!std::isfinite(v) || v != std::floor(v) || std::fabs(v) >= 9223372036854775808.0) return std::nullopt;
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

std::vector<double> Tensor::to_f64() const {
  const size_t size = dtype_size(dtype);
  if (size == 0) {
    fail(ErrorKind::unsupported, "{}: type {} has no numeric value", tensor_label(name), dtype_name(dtype));
  }
  const size_t n = bytes.size() / size;
  std::vector<double> out(n);
  const uint8_t* p = bytes.data();
  for (size_t i = 0; i < n; ++i, p += size) {
    switch (dtype) {
      case DType::float32: out[i] = load<float>(p); break;
      case DType::float64: out[i] = load<double>(p); break;
      case DType::float16: out[i] = kernels::f16_to_f32({load<uint16_t>(p)}); break;
      case DType::bfloat16: out[i] = kernels::bf16_to_f32({load<uint16_t>(p)}); break;
      case DType::uint8: out[i] = load<uint8_t>(p); break;
      case DType::int8: out[i] = load<int8_t>(p); break;
      case DType::uint16: out[i] = load<uint16_t>(p); break;
      case DType::int16: out[i] = load<int16_t>(p); break;
      case DType::int32: out[i] = load<int32_t>(p); break;
      case DType::int64: out[i] = static_cast<double>(load<int64_t>(p)); break;
      case DType::boolean: out[i] = load<uint8_t>(p) != 0 ? 1.0 : 0.0; break;
      case DType::uint32: out[i] = load<uint32_t>(p); break;
      case DType::uint64: out[i] = static_cast<double>(load<uint64_t>(p)); break;
      case DType::int4:
      case DType::int2: out[i] = load<int8_t>(p); break;
      case DType::uint4:
      case DType::uint2: out[i] = load<uint8_t>(p); break;
      case DType::float8e4m3fn:
      case DType::float8e4m3fnuz:
      case DType::float8e5m2:
      case DType::float8e5m2fnuz:
      case DType::float8e8m0:
      case DType::float4e2m1: out[i] = minifloat_value(dtype, load<uint8_t>(p)); break;
      case DType::undefined:
      case DType::string: break;  // size 0, refused above
    }
  }
  return out;
}

Tensor Tensor::from_f64(DType t, std::vector<int64_t> shape, const std::vector<double>& values,
                        std::string tensor_name) {
  Tensor out(t, std::move(shape), std::move(tensor_name));
  const int64_t n = out.numel();
  if (static_cast<int64_t>(values.size()) != n) {
    fail(ErrorKind::input, "{}: {} values given for dims {} ({} elements)", tensor_label(out.name),
         values.size(), shape_str(out.dims), n);
  }
  const size_t size = dtype_size(t);
  uint8_t* p = out.bytes.data();
  for (size_t i = 0; i < values.size(); ++i, p += size) {
    const double v = values[i];
    switch (t) {
      // IEEE conversion (round to nearest even, overflow to infinity).
      case DType::float32: store<float>(p, static_cast<float>(v)); break;
      case DType::float64: store<double>(p, v); break;
      case DType::float16: store<uint16_t>(p, kernels::f64_to_f16(v).bits); break;
      case DType::bfloat16: store<uint16_t>(p, kernels::f64_to_bf16(v).bits); break;
      case DType::uint8: store_integer<uint8_t>(p, v, out.name, i, t); break;
      case DType::int8: store_integer<int8_t>(p, v, out.name, i, t); break;
      case DType::uint16: store_integer<uint16_t>(p, v, out.name, i, t); break;
      case DType::int16: store_integer<int16_t>(p, v, out.name, i, t); break;
      case DType::int32: store_integer<int32_t>(p, v, out.name, i, t); break;
      case DType::int64: store_integer<int64_t>(p, v, out.name, i, t); break;
      case DType::uint32: store_integer<uint32_t>(p, v, out.name, i, t); break;
      case DType::uint64: store_integer<uint64_t>(p, v, out.name, i, t); break;
      case DType::int4:
      case DType::uint4:
      case DType::int2:
      case DType::uint2: {
        const double count = is_2bit(t) ? 4 : 16;
        const double lo = t == DType::int4 || t == DType::int2 ? -count / 2 : 0;
        if (!integral_in(v, lo, lo + count)) {
          fail(ErrorKind::input, "{}: value {} at index {} is not representable as {}", tensor_label(out.name), v,
               i, dtype_name(t));
        }
        store<int8_t>(p, static_cast<int8_t>(v));  // uint4's [0, 15] (uint2's [0, 3]) in the same byte
        break;
      }
      case DType::float8e4m3fn:
      case DType::float8e4m3fnuz:
      case DType::float8e5m2:
      case DType::float8e5m2fnuz:
      case DType::float8e8m0:
      case DType::float4e2m1: store<uint8_t>(p, minifloat_bits(t, v, false)); break;
      case DType::boolean:
        if (v != 0.0 && v != 1.0) {
          fail(ErrorKind::input, "{}: value {} at index {} is not representable as bool", tensor_label(out.name),
               v, i);
        }
        store<uint8_t>(p, v == 1.0 ? 1 : 0);
        break;
      case DType::undefined:
      case DType::string: break;  // the constructor refused these
    }
  }
  return out;
}

}  // namespace bnorm
