// Mod, BitShift and the bitwise ops (bitwise.cpp): both remainder
// conventions, broadcasting, every integer width, and the refusals.
// Expected values are worked out by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;

Tensor t(DType type, std::vector<int64_t> dims, const V& v) { return Tensor::from_f64(type, std::move(dims), v); }
Tensor t(DType type, const V& v) { return t(type, {static_cast<int64_t>(v.size())}, v); }

const Attrs fmod1 = [](onnx::NodeProto& n) { set_attr(n, "fmod", int64_t{1}); };

template <typename T>
Tensor raw(DType type, const std::vector<T>& v) {
  Tensor out(type, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) out.data<T>()[i] = v[i];
  return out;
}

}  // namespace

TEST_CASE("Mod with fmod 0 takes the divisor's sign, as Python's %", "[eval][unary]") {
  const V a = {-4, 7, 5, -4, 7, 0};
  const V b = {3, -3, 3, -3, 3, 5};
  for (DType type : {DType::int8, DType::int16, DType::int32, DType::int64}) {
    for (int opset : {10, 13, 23}) {
      const Tensor c = run_node1(opset, "Mod", {t(type, a), t(type, b)});
      CHECK(c.dtype == type);
      CHECK(c.to_f64() == V{2, -2, 2, -1, 1, 0});
    }
  }
  CHECK(run_node1(13, "Mod", {t(DType::uint8, {250, 7, 9}), t(DType::uint8, {7, 250, 3})}).to_f64() == V{5, 7, 0});
  // A divisor of 0 gives 0; INT64_MIN mod -1 is 0 (and must not trap).
  const Tensor edge = run_node1(13, "Mod", {raw<int64_t>(DType::int64, {7, INT64_MIN, INT64_MIN}),
                                      raw<int64_t>(DType::int64, {0, -1, 3})});
  CHECK(edge.data<int64_t>()[0] == 0);
  CHECK(edge.data<int64_t>()[1] == 0);
  CHECK(edge.data<int64_t>()[2] == 1);  // -2^63 = -3074457345618258603 * 3 + 1
  CHECK_THROWS_AS(run_node1(9, "Mod", {t(DType::int32, a), t(DType::int32, b)}), bnorm::Error);
}

TEST_CASE("Mod with fmod 1 takes the dividend's sign, for floating types and integers", "[eval][unary]") {
  const double inf = std::numeric_limits<double>::infinity();
  const V a = {-4.5, 7.5, 5, -4, 3, inf, 0};
  const V b = {3, -3, 2.5, -3, inf, 2, 0};
  const V c = run_node1(13, "Mod", {t(DType::float64, a), t(DType::float64, b)}, fmod1).to_f64();
  REQUIRE(c.size() == 7);
  CHECK(c[0] == -1.5);
  CHECK(c[1] == 1.5);
  CHECK(c[2] == 0);
  CHECK(c[3] == -1);
  CHECK(c[4] == 3);
  CHECK(std::isnan(c[5]));
  CHECK(std::isnan(c[6]));
  CHECK(run_node1(10, "Mod", {t(DType::float16, {-4.5, 7.5}), t(DType::float16, {3, -3})}, fmod1).to_f64() == V{-1.5, 1.5});
  CHECK(run_node1(13, "Mod", {t(DType::int64, {-4, 7, -7}), t(DType::int64, {3, -3, 0})}, fmod1).to_f64() == V{-1, 1, 0});
  // A floating type needs fmod = 1; fmod is 0 or 1.
  CHECK_THROWS_AS(run_node1(13, "Mod", {t(DType::float32, a), t(DType::float32, b)}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(13, "Mod", {t(DType::int32, {1}), t(DType::int32, {1})},
                      [](auto& n) { set_attr(n, "fmod", int64_t{2}); }),
                  bnorm::Error);
  CHECK_THROWS_AS(run_node1(13, "Mod", {t(DType::int32, {1}), t(DType::int64, {1})}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(13, "Mod", {t(DType::boolean, {1}), t(DType::boolean, {1})}), bnorm::Error);
}

TEST_CASE("Mod broadcasts numpy-style and refuses shapes that do not broadcast", "[eval][unary]") {
  const Tensor c = run_node1(13, "Mod", {t(DType::int32, {2, 3}, {0, 1, 2, 3, 4, 5}), t(DType::int32, {3}, {4, -3, 2})});
  CHECK(c.dims == std::vector<int64_t>{2, 3});
  CHECK(c.to_f64() == V{0, -2, 0, 3, -2, 1});
  CHECK(run_node1(13, "Mod", {t(DType::int32, {0}, {}), t(DType::int32, {1}, {2})}).dims == std::vector<int64_t>{0});
  CHECK_THROWS_AS(run_node1(13, "Mod", {t(DType::int32, {2}, {1, 2}), t(DType::int32, {3}, {1, 2, 3})}), bnorm::Error);
}

TEST_CASE("A broadcast beyond the tensor size limit is an input error, not an allocation", "[eval][unary]") {
  const bnorm::TensorByteLimit limit(int64_t{4} << 20);
  // 2^20 elements: 4 MiB as int32 or float, 8 MiB in Mod's double buffer.
  const Tensor icol(DType::int32, {1024, 1}), irow(DType::int32, {1, 1024});
  CHECK(run_node1(18, "BitwiseAnd", {icol, irow}).dims == std::vector<int64_t>{1024, 1024});
  CHECK_THROWS_AS(run_node1(18, "BitwiseAnd", {Tensor(DType::int32, {2048, 1}), irow}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(13, "Mod", {Tensor(DType::float32, {1024, 1}), Tensor(DType::float32, {1, 1024})}, fmod1),
                  bnorm::Error);
}

TEST_CASE("BitShift moves bits of unsigned integers, dropping those shifted out", "[eval][unary]") {
  const Attrs left = [](auto& n) { set_string(n, "direction", "LEFT"); };
  const Attrs right = [](auto& n) { set_string(n, "direction", "RIGHT"); };
  CHECK(run_node1(11, "BitShift", {t(DType::uint8, {1, 2, 255, 3}), t(DType::uint8, {1, 2, 1, 8})}, left).to_f64() ==
        V{2, 8, 254, 0});
  CHECK(run_node1(11, "BitShift", {t(DType::uint16, {16, 4, 65535}), t(DType::uint16, {1})}, right).to_f64() ==
        V{8, 2, 32767});
  const Tensor big = run_node1(23, "BitShift", {raw<uint64_t>(DType::uint64, {1, UINT64_MAX, 5}),
                                          raw<uint64_t>(DType::uint64, {63, 4, 64})}, left);
  CHECK(big.data<uint64_t>()[0] == uint64_t{1} << 63);
  CHECK(big.data<uint64_t>()[1] == UINT64_MAX << 4);
  CHECK(big.data<uint64_t>()[2] == 0);
  CHECK(run_node1(11, "BitShift", {t(DType::uint32, {0xFFFFFFFF}), t(DType::uint32, {31})}, right).to_f64() == V{1});
  CHECK_THROWS_AS(run_node1(11, "BitShift", {t(DType::int32, {1}), t(DType::int32, {1})}, left), bnorm::Error);
  CHECK_THROWS_AS(run_node1(11, "BitShift", {t(DType::uint8, {1}), t(DType::uint8, {1})}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(11, "BitShift", {t(DType::uint8, {1}), t(DType::uint8, {1})},
                      [](auto& n) { set_string(n, "direction", "left"); }),
                  bnorm::Error);
  CHECK_THROWS_AS(run_node1(10, "BitShift", {t(DType::uint8, {1}), t(DType::uint8, {1})}, left), bnorm::Error);
}

TEST_CASE("BitwiseAnd, Or, Xor broadcast over signed and unsigned integers, Not flips every bit", "[eval][unary]") {
  const Tensor a = t(DType::int16, {2, 2}, {12, -1, 0, -32768});
  const Tensor b = t(DType::int16, {2}, {10, 3});
  CHECK(run_node1(18, "BitwiseAnd", {a, b}).to_f64() == V{8, 3, 0, 0});
  CHECK(run_node1(18, "BitwiseOr", {a, b}).to_f64() == V{14, -1, 10, -32765});
  CHECK(run_node1(18, "BitwiseXor", {a, b}).to_f64() == V{6, -4, 10, -32765});
  CHECK(run_node1(23, "BitwiseAnd", {t(DType::uint8, {0xF0, 0x0F}), t(DType::uint8, {}, {0x3C})}).to_f64() == V{0x30, 0x0C});
  const Tensor n = run_node1(18, "BitwiseNot", {t(DType::int32, {0, -1, 5})});
  CHECK(n.dtype == DType::int32);
  CHECK(n.to_f64() == V{-1, 0, -6});
  CHECK(run_node1(18, "BitwiseNot", {t(DType::uint8, {0, 1, 255})}).to_f64() == V{255, 254, 0});
  CHECK(run_node1(18, "BitwiseNot", {raw<uint64_t>(DType::uint64, {0})}).data<uint64_t>()[0] == UINT64_MAX);
  CHECK_THROWS_AS(run_node1(18, "BitwiseAnd", {t(DType::float32, {1}), t(DType::float32, {1})}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(18, "BitwiseOr", {t(DType::int32, {1}), t(DType::int16, {1})}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(18, "BitwiseNot", {t(DType::boolean, {1})}), bnorm::Error);
  CHECK_THROWS_AS(run_node1(17, "BitwiseXor", {t(DType::int32, {1}), t(DType::int32, {1})}), bnorm::Error);
}
