// bnorm::Tensor: a dense tensor held in memory, the one in-memory form of
// every value bnorm reads or computes (weights, inputs, outputs).
//
// Storage is little-endian bytes in C order, exactly as ONNX's raw_data.
// float16 and bfloat16 elements are stored as their 16-bit patterns
// (kernels::f16 / kernels::bf16). Element access goes through data<T>().
//
// The float8 types (IR 9) and float8e8m0 (IR 12) hold one bit pattern per
// byte. The 4-bit types
// (int4, uint4: IR 10; float4e2m1: IR 11) are held UNPACKED, one element
// per byte, so every op that moves elements by dtype_size() works on them
// unchanged: int4 as an int8 in [-8, 7], uint4 as a uint8 in [0, 15],
// float4e2m1 as its bit pattern in the low 4 bits. So are the 2-bit types
// (int2, uint2: IR 13): int2 as an int8 in [-2, 1], uint2 as a uint8 in
// [0, 3]. ONNX stores them packed, two (four) per byte, the first element
// in the lowest bits: tensor_proto.cpp packs and unpacks at the boundary,
// so for these types only, `bytes` is not the raw_data form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bnorm {

// Values equal ONNX's TensorProto.DataType, so a cast converts.
enum class DType : int32_t {
  undefined = 0,
  float32 = 1,
  uint8 = 2,
  int8 = 3,
  uint16 = 4,
  int16 = 5,
  int32 = 6,
  int64 = 7,
  string = 8,
  boolean = 9,
  float16 = 10,
  float64 = 11,
  uint32 = 12,
  uint64 = 13,
  bfloat16 = 16,
  float8e4m3fn = 17,
  float8e4m3fnuz = 18,
  float8e5m2 = 19,
  float8e5m2fnuz = 20,
  uint4 = 21,
  int4 = 22,
  float4e2m1 = 23,
  float8e8m0 = 24,  // unsigned powers of two 2^-127..2^127, 0xFF NaN (kernels/e8m0.h)
  uint2 = 25,
  int2 = 26,
};

// Size of one element in bytes; 0 for types bnorm cannot hold (string,
// complex, undefined, unknown values).
size_t dtype_size(DType t);
// ONNX's spelling: "float", "double", "float16", "bfloat16", "int64", ...
std::string dtype_name(DType t);
// float, double, float16, bfloat16: the types a normalization node carries.
bool is_floating(DType t);
// float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz.
bool is_float8(DType t);
// int4, uint4, float4e2m1: packed two per byte in ONNX's storage.
bool is_4bit(DType t);
// int2, uint2: packed four per byte in ONNX's storage.
bool is_2bit(DType t);
// The bits of one element of a type packed below a byte (4 or 2), else 0.
int packed_bits(DType t);
// The value of the bit pattern `bits` of float8, float8e8m0 or float4e2m1
// type `t` (exact; NaN for NaN patterns).
double minifloat_value(DType t, uint8_t bits);
// `v` rounded once (to nearest even) to float8 or float4e2m1 type `t`, out
// of range values as ONNX's Cast tables say for `saturate`
// (kernels/minifloat.h); float8e8m0 rounds to the nearest power of two,
// ties up (kernels/e8m0.h). Error(unsupported) for other types.
uint8_t minifloat_bits(DType t, double v, bool saturate);

struct Tensor {
  std::string name;
  DType dtype = DType::undefined;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;

  Tensor() = default;
  // Allocates numel(dims) zeroed elements. Throws Error(input) when dims
  // are negative, overflow, exceed max_tensor_bytes(), or the type has no
  // fixed size.
  Tensor(DType t, std::vector<int64_t> shape, std::string tensor_name = {});

  int64_t numel() const;
  size_t byte_size() const { return bytes.size(); }

  template <typename T> T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <typename T> const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }

  // Every element as double (exact for float, double, float16, bfloat16
  // and integers up to 2^53). Throws for types without a numeric value.
  std::vector<double> to_f64() const;
  // Every element as an int64: integer types exactly; floating types when
  // every element is a whole number in int64's range (nullopt otherwise:
  // NaN, infinities, 0.5, 1e30 are no int64).
  std::optional<std::vector<int64_t>> to_i64() const;
  // A tensor of `t` whose elements are `values` rounded once to `t`
  // (round to nearest even for floating types, overflow to infinity, or
  // to NaN for float8 types without one (Cast with saturate = 0); float4e2m1
  // saturates; float8e8m0 takes the nearest power of two, ties up, NaN out
  // of its range). Saturating truncation toward zero for integers is NOT done:
  // integers, int4, uint4, int2 and uint2 included, must be exact).
  static Tensor from_f64(DType t, std::vector<int64_t> shape, const std::vector<double>& values,
                         std::string tensor_name = {});
};

// The most bytes bnorm allocates for one tensor whose size comes from a
// shape (Tensor(dtype, dims): the evaluator's outputs, random inputs):
// a shape needing more is Error(input) (exit 2) naming the tensor, instead
// of an attempt to allocate terabytes a model merely declares. Tensors read
// from data (initializers, .pb, .npy, external files) are bounded by that
// data. The default is 4 GiB; TensorByteLimit changes it for a scope (the
// fuzz targets use 64 MiB, docs/reliability.md).
inline constexpr int64_t kDefaultMaxTensorBytes = int64_t{1} << 32;
int64_t max_tensor_bytes();

// The element count of a buffer of `dims` with `elem_bytes`-byte elements
// that bnorm is about to allocate (a Tensor, or an operator's working
// buffer, which may be wider than the tensor's type): Error(input) naming
// `what` when dims are invalid or it would need over max_tensor_bytes().
int64_t checked_buffer_numel(const std::vector<int64_t>& dims, size_t elem_bytes, const std::string& what);

// Sets the limit (process-wide) while it lives, then restores the previous one.
class TensorByteLimit {
 public:
  explicit TensorByteLimit(int64_t bytes);
  ~TensorByteLimit();
  TensorByteLimit(const TensorByteLimit&) = delete;
  TensorByteLimit& operator=(const TensorByteLimit&) = delete;

 private:
  int64_t previous_;
};

// Number of elements of `dims`; throws Error(input) on a negative dim or
// when the product overflows int64 or exceeds `max_elements`.
int64_t checked_numel(const std::vector<int64_t>& dims, int64_t max_elements = INT64_MAX);

// "[2, 3, 4]"; "[]" for a scalar.
std::string shape_str(const std::vector<int64_t>& dims);

// The values random data for one input is drawn from (--input-range
// NAME=LO:HI): integer and bool inputs every integer in [lo, hi] (both
// whole numbers), floating ones uniformly in [lo, hi) before rounding to
// the type (lo == hi: that value).
struct InputRange {
  double lo = 0, hi = 0;
};

}  // namespace bnorm
