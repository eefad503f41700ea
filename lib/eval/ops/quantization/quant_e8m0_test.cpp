// QuantizeLinear and DequantizeLinear with float8e8m0 scales (versions 24
// and 25: the scales of the MX formats), hand-computed.
#include <catch2/catch.hpp>

#include <vector>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;

// float8e8m0 codes: 125 is 2^-2, 126 2^-1, 128 2, 129 4.
Tensor scales(std::vector<int64_t> dims, const std::vector<uint8_t>& codes) {
  Tensor s(DType::float8e8m0, std::move(dims));
  s.bytes = codes;
  return s;
}

Attrs attrs(std::vector<std::pair<std::string, int64_t>> kv) { return int_attrs(std::move(kv)); }

}  // namespace

TEST_CASE("QuantizeLinear-24 divides by a float8e8m0 scale in float", "[eval][quant][e8m0]") {
  const Tensor x = f32({4}, {1, 3, -5, 100});
  const Tensor zp = Tensor::from_f64(DType::int8, {}, {0});
  // x / 0.5 = 2, 6, -10, 200 -> int8 saturates 200 to 127.
  CHECK(run_node1(24, "QuantizeLinear", {x, scales({}, {126}), zp}).to_f64() == V{2, 6, -10, 127});
  // Blocks of 2 along axis 1, scales 2^-2 and 4: 0.25 / 0.25, 0.5 / 0.25, 4 / 4, 12 / 4 -> float8e4m3fn.
  const Tensor b = run_node1(25, "QuantizeLinear", {f32({1, 4}, {0.25, 0.5, 4, 12}), scales({1, 2}, {125, 129})},
                             attrs({{"axis", 1}, {"block_size", 2}, {"output_dtype", int64_t(DType::float8e4m3fn)}}));
  CHECK(b.dtype == DType::float8e4m3fn);
  CHECK(b.to_f64() == V{1, 2, 1, 3});
  REQUIRE_THROWS_AS(run_node1(23, "QuantizeLinear", {x, scales({}, {126}), zp}), bnorm::Error);
}

TEST_CASE("DequantizeLinear-24 multiplies by a float8e8m0 scale into output_dtype, which it needs",
          "[eval][quant][e8m0]") {
  const Tensor x = Tensor::from_f64(DType::int8, {2}, {2, -3});
  const Tensor y = run_node1(24, "DequantizeLinear", {x, scales({}, {128})}, attrs({{"output_dtype", 1}}));
  CHECK(y.dtype == DType::float32);
  CHECK(y.to_f64() == V{4, -6});
  // float8e4m3fn x, blocks of 2 with scales 2^-2 and 4, into float16.
  const Tensor f8 = Tensor::from_f64(DType::float8e4m3fn, {1, 4}, {1, -2, 0.5, 3});
  const Tensor h = run_node1(25, "DequantizeLinear", {f8, scales({1, 2}, {125, 129})},
                             attrs({{"axis", 1}, {"block_size", 2}, {"output_dtype", int64_t(DType::float16)}}));
  CHECK(h.dtype == DType::float16);
  CHECK(h.to_f64() == V{0.25, -0.5, 2, 12});
  REQUIRE_THROWS_AS(run_node1(24, "DequantizeLinear", {x, scales({}, {128})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(23, "DequantizeLinear", {x, scales({}, {128})}, attrs({{"output_dtype", 1}})),
                    bnorm::Error);
}
