// float8e8m0 tensors (IR 12): one bit pattern per byte, from raw_data or
// int32_data, written back as raw_data unchanged.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/tensor_proto.h"

using bnorm::decode_tensor;
using bnorm::DType;
using bnorm::Tensor;
using Bytes = std::vector<uint8_t>;

namespace {

onnx::TensorProto e8m0_proto(std::vector<int64_t> dims) {
  onnx::TensorProto p;
  p.set_name("s");
  p.set_data_type(24);
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

}  // namespace

TEST_CASE("float8e8m0 tensors decode from raw_data and int32_data and encode back byte for byte", "[model][e8m0]") {
  CHECK(bnorm::dtype_name(DType::float8e8m0) == "float8e8m0");
  CHECK(bnorm::dtype_size(DType::float8e8m0) == 1);
  onnx::TensorProto raw = e8m0_proto({2, 3});
  raw.set_raw_data(std::string("\x00\x7F\x80\x7C\xFE\xFF", 6));
  const Tensor t = decode_tensor(raw);
  CHECK(t.dtype == DType::float8e8m0);
  CHECK(t.bytes == Bytes{0x00, 0x7F, 0x80, 0x7C, 0xFE, 0xFF});
  const std::vector<double> v = t.to_f64();
  CHECK(v[0] == std::ldexp(1.0, -127));
  CHECK(v[1] == 1.0);
  CHECK(v[2] == 2.0);
  CHECK(v[3] == 0.125);
  CHECK(v[4] == std::ldexp(1.0, 127));
  CHECK(std::isnan(v[5]));
  const onnx::TensorProto back = bnorm::to_proto(t);
  CHECK(back.data_type() == 24);
  CHECK(back.raw_data() == raw.raw_data());

  onnx::TensorProto typed = e8m0_proto({3});
  for (int b : {0, 127, 255}) typed.add_int32_data(b);
  CHECK(decode_tensor(typed).bytes == Bytes{0x00, 0x7F, 0xFF});
  onnx::TensorProto wide = e8m0_proto({1});
  wide.add_int32_data(256);
  CHECK_THROWS_AS(decode_tensor(wide), bnorm::Error);
  onnx::TensorProto short_raw = e8m0_proto({2});
  short_raw.set_raw_data(std::string("\x7F", 1));
  CHECK_THROWS_AS(decode_tensor(short_raw), bnorm::Error);
}

TEST_CASE("from_f64 to float8e8m0 takes the nearest power of two, ties up, NaN out of range", "[model][e8m0]") {
  // 3 = 1.5 * 2 (a tie: 4), 5 = 1.25 * 4 (4), 0 and 2^128 out of range.
  const Tensor t = Tensor::from_f64(DType::float8e8m0, {5}, {1, 3, 5, 0, std::ldexp(1.0, 128)});
  CHECK(t.bytes == Bytes{127, 129, 129, 0xFF, 0xFF});
}
