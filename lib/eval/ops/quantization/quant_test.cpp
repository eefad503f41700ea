// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the integer
// ops: hand-computed cases of each version's behaviour, and refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"
#include "model/model.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;

Tensor t(DType type, std::vector<int64_t> dims, const V& v) { return Tensor::from_f64(type, std::move(dims), v); }

Attrs int_attr(const std::string& name, int64_t v) {
  return [name, v](onnx::NodeProto& n) { set_attr(n, name, v); };
}

}  // namespace

TEST_CASE("QuantizeLinear rounds half to even, adds the zero point and saturates", "[eval][quant]") {
  const Tensor x = f32({8}, {0.5, 1.5, 2.5, -0.5, -2.5, 1000, -1000, 3.2});
  const Tensor y = run_node1(10, "QuantizeLinear", {x, f32({}, {1}), t(DType::uint8, {}, {128})});
  CHECK(y.dtype == DType::uint8);
  CHECK(y.to_f64() == V{128, 130, 130, 128, 126, 255, 0, 131});
  CHECK(run_node1(13, "QuantizeLinear", {x, f32({}, {0.5}), t(DType::int8, {}, {0})}).to_f64() ==
        V{1, 3, 5, -1, -5, 127, -128, 6});
  // No zero point: uint8 with zero point 0.
  const Tensor d = run_node1(10, "QuantizeLinear", {x, f32({}, {1})});
  CHECK(d.dtype == DType::uint8);
  CHECK(d.to_f64() == V{0, 2, 2, 0, 0, 255, 0, 3});
}

TEST_CASE("QuantizeLinear per axis (13), blocked (21), int4 and output_dtype (21)", "[eval][quant]") {
  const Tensor x = f32({2, 4}, {1, 2, 3, 4, 10, 20, 30, 40});
  // Per axis 0 (given as -2): row scales 1 and 10.
  CHECK(run_node1(13, "QuantizeLinear", {x, f32({2}, {1, 10}), t(DType::uint8, {2}, {0, 5})}, int_attr("axis", -2))
            .to_f64() == V{1, 2, 3, 4, 6, 7, 8, 9});
  // Blocks of 2 along axis 1: scales [[1, 2], [10, 20]].
  CHECK(run_node1(21, "QuantizeLinear", {x, f32({2, 2}, {1, 2, 10, 20}), t(DType::int8, {2, 2}, {0, 0, 0, 0})},
             [](auto& n) {
               set_attr(n, "axis", int64_t{1});
               set_attr(n, "block_size", int64_t{2});
             })
            .to_f64() == V{1, 2, 2, 2, 1, 2, 2, 2});
  const Tensor i4 = run_node1(21, "QuantizeLinear", {x, f32({}, {2})}, int_attr("output_dtype", int64_t(DType::int4)));
  CHECK(i4.dtype == DType::int4);
  CHECK(i4.to_f64() == V{0, 1, 2, 2, 5, 7, 7, 7});
  // Blocks that do not cover the axis, a per-axis length mismatch, a
  // conflicting output_dtype, and per-axis scales at version 10 are refused.
  REQUIRE_THROWS_AS(run_node1(21, "QuantizeLinear", {x, f32({2, 3}, {1, 1, 1, 1, 1, 1})}, int_attr("block_size", 2)),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "QuantizeLinear", {x, f32({3}, {1, 1, 1})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(21, "QuantizeLinear", {x, f32({}, {1}), t(DType::uint8, {}, {0})},
                         int_attr("output_dtype", int64_t(DType::int8))),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(10, "QuantizeLinear", {x, f32({4}, {1, 1, 1, 1})}), bnorm::Error);
}

TEST_CASE("QuantizeLinear to float8 rounds to nearest even with saturate (19), types refused before", "[eval][quant]") {
  const Tensor x = f32({3}, {0.9375, 1000, -1000});
  const Tensor zp(DType::float8e4m3fn, {});
  // 0.9375 / 0.5 = 1.875 (0x3F); 2000 saturates to 448 (0x7E) or becomes NaN (0x7F).
  CHECK(run_node1(19, "QuantizeLinear", {x, f32({}, {0.5}), zp}).bytes == std::vector<uint8_t>{0x3F, 0x7E, 0xFE});
  CHECK(run_node1(19, "QuantizeLinear", {x, f32({}, {0.5}), zp}, int_attr("saturate", 0)).bytes ==
        std::vector<uint8_t>{0x3F, 0x7F, 0xFF});
  REQUIRE_THROWS_AS(run_node1(13, "QuantizeLinear", {x, f32({}, {0.5}), zp}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(19, "QuantizeLinear", {x, f32({}, {1}), t(DType::int4, {}, {0})}), bnorm::Error);
  // float16 x needs 19, and until 23 a scale of x's type.
  const Tensor h = t(DType::float16, {1}, {1});
  REQUIRE_THROWS_AS(run_node1(13, "QuantizeLinear", {h, f32({}, {1})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(21, "QuantizeLinear", {h, f32({}, {1})}), bnorm::Error);
  CHECK(run_node1(23, "QuantizeLinear", {h, f32({}, {0.25})}).to_f64() == V{4});
}

TEST_CASE("DequantizeLinear computes (x - zero point) * scale per tensor, axis and block", "[eval][quant]") {
  const Tensor x = t(DType::int8, {2, 2}, {-128, 0, 5, 127});
  CHECK(run_node1(10, "DequantizeLinear", {x, f32({}, {0.5}), t(DType::int8, {}, {1})}).to_f64() ==
        V{-64.5, -0.5, 2, 63});
  CHECK(run_node1(13, "DequantizeLinear", {x, f32({2}, {1, 2}), t(DType::int8, {2}, {0, 1})}, int_attr("axis", 0))
            .to_f64() == V{-128, 0, 8, 252});
  CHECK(run_node1(21, "DequantizeLinear", {x, f32({2, 1}, {1, 2})}, [](auto& n) {
          set_attr(n, "axis", int64_t{1});
          set_attr(n, "block_size", int64_t{2});
        }).to_f64() == V{-128, 0, 10, 254});
  const Tensor i32 = t(DType::int32, {2}, {1 << 20, -3});
  CHECK(run_node1(10, "DequantizeLinear", {i32, f32({}, {0.25})}).to_f64() == V{262144, -0.75});
  // float8 input (19), output type of the scale; output_dtype (23).
  Tensor f8(DType::float8e5m2, {2});
  f8.bytes = {0x3C, 0xC2};  // 1, -3
  const Tensor y = run_node1(19, "DequantizeLinear", {f8, t(DType::float16, {}, {2})});
  CHECK(y.dtype == DType::float16);
  CHECK(y.to_f64() == V{2, -6});
  const Tensor z = run_node1(23, "DequantizeLinear", {f8, f32({}, {2})}, int_attr("output_dtype", int64_t(DType::bfloat16)));
  CHECK(z.dtype == DType::bfloat16);
  CHECK(z.to_f64() == V{2, -6});
  const Tensor u4 = t(DType::uint4, {3}, {0, 8, 15});
  CHECK(run_node1(21, "DequantizeLinear", {u4, f32({}, {1}), t(DType::uint4, {}, {8})}).to_f64() == V{-8, 0, 7});
  REQUIRE_THROWS_AS(run_node1(19, "DequantizeLinear", {u4, f32({}, {1})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "DequantizeLinear", {x, f32({}, {1}), t(DType::uint8, {}, {0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "DequantizeLinear", {x, t(DType::float16, {}, {1})}), bnorm::Error);
}

TEST_CASE("QuantizeLinear and DequantizeLinear take int2 and uint2 from 25, saturating to their ranges",
          "[eval][quant]") {
  const Tensor x = f32({6}, {-3, -1, 0, 0.4, 2, 7});
  // round half to even, + zero point, saturate: int2 [-2, 1], uint2 [0, 3].
  const Tensor i2 = run_node1(25, "QuantizeLinear", {x, f32({}, {1}), t(DType::int2, {}, {0})});
  CHECK(i2.dtype == DType::int2);
  CHECK(i2.to_f64() == V{-2, -1, 0, 0, 1, 1});
  const Tensor u2 = run_node1(25, "QuantizeLinear", {x, f32({}, {1}), t(DType::uint2, {}, {1})});
  CHECK(u2.dtype == DType::uint2);
  CHECK(u2.to_f64() == V{0, 0, 1, 1, 3, 3});
  // (x - zero point) * scale.
  CHECK(run_node1(25, "DequantizeLinear", {t(DType::int2, {4}, {-2, -1, 0, 1}), f32({}, {0.5}), t(DType::int2, {}, {-1})})
            .to_f64() == V{-0.5, 0, 0.5, 1});
  CHECK(run_node1(28, "DequantizeLinear", {t(DType::uint2, {4}, {0, 1, 2, 3}), f32({}, {2}), t(DType::uint2, {}, {1})})
            .to_f64() == V{-2, 0, 2, 4});
  REQUIRE_THROWS_AS(run_node1(24, "QuantizeLinear", {x, f32({}, {1}), t(DType::int2, {}, {0})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(24, "DequantizeLinear", {t(DType::uint2, {1}, {1}), f32({}, {1})}), bnorm::Error);
}

TEST_CASE("DynamicQuantizeLinear maps [min(0, x), max(0, x)] onto uint8", "[eval][quant]") {
  const auto r = run_node(11, "DynamicQuantizeLinear", {f32({4}, {-1, 0, 2, 4})}, 3);
  const float scale = 5.0f / 255.0f;
  CHECK(r[1].to_f64() == V{scale});
  CHECK(r[2].to_f64() == V{51});
  CHECK(r[0].to_f64() == V{0, 51, 153, 255});
  const auto zeros = run_node(11, "DynamicQuantizeLinear", {f32({2}, {0, 0})}, 3);
  CHECK(zeros[1].to_f64() == V{1.0f / 255.0f});
  CHECK(zeros[0].to_f64() == V{0, 0});
  REQUIRE_THROWS_AS(run_node(11, "DynamicQuantizeLinear", {t(DType::float64, {1}, {1})}, 3), bnorm::Error);
}

TEST_CASE("MatMulInteger subtracts per-tensor or per-row/column zero points and gives int32", "[eval][quant]") {
  const Tensor a = t(DType::uint8, {2, 3}, {11, 7, 3, 10, 6, 2});
  const Tensor b = t(DType::uint8, {3, 2}, {1, 4, 2, 5, 3, 6});
  const Tensor y = run_node1(10, "MatMulInteger", {a, b, t(DType::uint8, {}, {12})});
  CHECK(y.dtype == DType::int32);
  CHECK(y.to_f64() == V{-38, -83, -44, -98});
  CHECK(run_node1(10, "MatMulInteger", {a, b, t(DType::uint8, {2}, {12, 10}), t(DType::uint8, {2}, {1, 0})}).to_f64() ==
        V{-38 + 15, -83, -32 + 12, -68});
  REQUIRE_THROWS_AS(run_node1(10, "MatMulInteger", {f32({1, 1}, {1}), b}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(10, "MatMulInteger", {a, b, t(DType::int8, {}, {0})}), bnorm::Error);
}

TEST_CASE("QLinearMatMul requantizes the integer product, half to even", "[eval][quant]") {
  const Tensor a = t(DType::uint8, {1, 2}, {2, 4});
  const Tensor b = t(DType::uint8, {2, 2}, {1, 2, 3, 2});
  // (a) @ (b - 1) = [8, 6]; * 0.5 * 1 / 2 = [2, 1.5] -> [2, 2] + 3.
  const std::vector<Tensor> in = {a, f32({}, {0.5}), t(DType::uint8, {}, {0}), b, f32({}, {1}),
                                  t(DType::uint8, {}, {1}), f32({}, {2}), t(DType::int8, {}, {3})};
  CHECK(run_node1(10, "QLinearMatMul", in).to_f64() == V{5, 5});
  std::vector<Tensor> half = in;
  for (size_t i : {1, 4, 6}) half[i] = t(DType::float16, {}, half[i].to_f64());
  REQUIRE_THROWS_AS(run_node1(10, "QLinearMatMul", half), bnorm::Error);
  CHECK(run_node1(21, "QLinearMatMul", half).to_f64() == V{5, 5});
}

TEST_CASE("ConvInteger pads with the zero point and QLinearConv adds the bias before requantizing", "[eval][quant]") {
  const Tensor x = t(DType::uint8, {1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  const Tensor w = t(DType::uint8, {1, 1, 2, 2}, {1, 1, 1, 1});
  CHECK(run_node1(10, "ConvInteger", {x, w, t(DType::uint8, {}, {1})}).to_f64() == V{12, 16, 24, 28});
  const Tensor padded = run_node1(10, "ConvInteger", {x, w, t(DType::uint8, {}, {1})}, [](onnx::NodeProto& n) {
    auto* a = n.add_attribute();
    a->set_name("pads");
    a->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) a->add_ints(1);
  });
  CHECK(padded.dims == std::vector<int64_t>{1, 1, 4, 4});
  CHECK(padded.to_f64()[0] == 1);
  CHECK(padded.to_f64()[5] == 12);

  // (x - 10) = [0, 10, 20, 30]; * 2 + bias 2 = [2, 22, 42, 62]; * 0.5 * 0.25 / 0.5 -> [0.5, 5.5, 10.5, 15.5].
  const std::vector<Tensor> in = {t(DType::uint8, {1, 1, 2, 2}, {10, 20, 30, 40}), f32({}, {0.5}),
                                  t(DType::uint8, {}, {10}),  t(DType::int8, {1, 1, 1, 1}, {2}),
                                  f32({}, {0.25}),            t(DType::int8, {}, {0}),
                                  f32({}, {0.5}),             t(DType::uint8, {}, {100}),
                                  t(DType::int32, {1}, {2})};
  CHECK(run_node1(10, "QLinearConv", in).to_f64() == V{100, 106, 110, 116});
  std::vector<Tensor> bad = in;
  bad[8] = f32({1}, {2});
  REQUIRE_THROWS_AS(run_node1(10, "QLinearConv", bad), bnorm::Error);
}

TEST_CASE("A model of IR 10 with int4 and float8 initializers evaluates and saves them losslessly", "[eval][quant]") {
  GraphBuilder b(21);
  b.initializer("w", t(DType::int4, {5}, {-8, -1, 0, 3, 7}));
  b.initializer("s", f32({}, {0.5}));
  b.node("DequantizeLinear", {"w", "s"}, {"y"}, "dq");
  b.output("y");
  bnorm::Model m = b.model();
  m.proto.set_ir_version(10);
  CHECK(bnorm::evaluate(m, {}).at("y").to_f64() == V{-4, -0.5, 0, 1.5, 3.5});
  const std::string raw = m.proto.graph().initializer(0).raw_data();
  CHECK(raw == std::string("\xF8\x30\x07", 3));
  const bnorm::Model back = bnorm::parse_model(m.proto.SerializeAsString(), "m");
  CHECK(back.proto.graph().initializer(0).raw_data() == raw);
  CHECK(bnorm::evaluate(back, {}).at("y").to_f64() == V{-4, -0.5, 0, 1.5, 3.5});
}

TEST_CASE("DynamicQuantizeLinear skips NaN in the range and an infinite x does not crash", "[eval][quant]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto r = run_node(11, "DynamicQuantizeLinear", {f32({3}, {nan, 0, 2})}, 3);
  CHECK(r[2].to_f64() == V{0});
  CHECK(r[0].to_f64() == V{0, 0, 255});
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(run_node(11, "DynamicQuantizeLinear", {f32({2}, {-inf, 1})}, 3)[2].to_f64() == V{0});
}
