// LayerNormalization (17), RMSNormalization (23) and GroupNormalization
// (18, 21) through bnorm::evaluate, against float64 references written from
// the ONNX spec (tests/support/norm_family_test_util.h), at every version, with their
// attributes, types, broadcasting, edge cases and invalid nodes. The other
// ops of the family: local_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "support/norm_family_test_util.h"

using namespace normfamily_test;

TEST_CASE("LayerNormalization normalizes over the axes from axis on and returns Mean and InvStdDev",
          "[eval][normfamily]") {
  const std::vector<double> x = held(DType::float32, {2, 3, 4}, random(24, -3, 3));
  for (int64_t axis : {-1, 1, 0, -3}) {
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    const std::vector<int64_t> xd = {2, 3, 4};
    const std::vector<int64_t> nd(xd.begin() + static_cast<std::ptrdiff_t>(a), xd.end());
    const size_t len = static_cast<size_t>(bnorm::checked_numel(nd)), rows = 24 / len;
    const std::vector<double> s = held(DType::float32, nd, random(len, -2, 2, 1));
    const std::vector<double> b = held(DType::float32, nd, random(len, -1, 1, 2));
    const LnRef want = layer_norm_ref(x, rows, repeat(s, rows), repeat(b, rows), kEps);
    auto out = run("LayerNormalization", 17,
                   {{"X", tensor(DType::float32, {2, 3, 4}, x)}, {"S", tensor(DType::float32, nd, s)},
                    {"B", tensor(DType::float32, nd, b)}},
                   {"Y", "Mean", "Inv"}, [&](onnx::NodeProto& n) { bnorm::test::set_attr(n, "axis", axis); });
    INFO("axis " << axis);
    check_close(out.at("Y"), want.y);
    check_close(out.at("Mean"), want.mean);
    check_close(out.at("Inv"), want.inv);
    std::vector<int64_t> stats_dims = {2, 3, 4};
    for (size_t d = a; d < 3; ++d) stats_dims[d] = 1;
    CHECK(out.at("Mean").dims == stats_dims);
    CHECK(out.at("Mean").dtype == DType::float32);
  }
}

TEST_CASE("LayerNormalization broadcasts Scale along leading axes, works without B and with epsilon",
          "[eval][normfamily]") {
  const std::vector<double> x = held(DType::float64, {2, 3, 4}, random(24, -3, 3));
  const std::vector<double> s = random(8, -2, 2, 3);  // shape [2, 1, 4]: differs per batch item
  std::vector<double> full;
  for (size_t i = 0; i < 2; ++i) {
    for (size_t j = 0; j < 3; ++j) full.insert(full.end(), s.begin() + 4 * i, s.begin() + 4 * i + 4);
  }
  const double eps = double{0.5f};
  const LnRef want = layer_norm_ref(x, 6, full, {}, eps);
  auto out = run("LayerNormalization", 17, {{"X", tensor(DType::float64, {2, 3, 4}, x)}, {"S", tensor(DType::float64, {2, 1, 4}, s)}},
                 {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "epsilon", 0.5f); });
  check_close(out.at("Y"), want.y);
  // A scalar Scale broadcasts to everything.
  out = run("LayerNormalization", 17, {{"X", tensor(DType::float64, {2, 3, 4}, x)}, {"S", tensor(DType::float64, {}, {2.0})}}, {"Y"});
  check_close(out.at("Y"), layer_norm_ref(x, 6, std::vector<double>(24, 2.0), {}, kEps).y);
}

TEST_CASE("LayerNormalization of float16 and bfloat16 rounds once, stash_type sets the statistics' type",
          "[eval][normfamily]") {
  for (DType t : {DType::float16, DType::bfloat16}) {
    const std::vector<double> x = held(t, {3, 5}, random(15, -3, 3));
    const std::vector<double> s = held(t, {5}, random(5, -2, 2, 4));
    const LnRef want = layer_norm_ref(x, 3, repeat(s, 3), {}, kEps);
    auto out = run("LayerNormalization", 17, {{"X", tensor(t, {3, 5}, x)}, {"S", tensor(t, {5}, s)}}, {"Y", "M", "I"},
                   [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "stash_type", int64_t{16}); });
    CHECK(out.at("Y").dtype == t);
    check_close(out.at("Y"), want.y);
    CHECK(out.at("M").dtype == DType::bfloat16);
    check_close(out.at("I"), want.inv);
  }
}

TEST_CASE("LayerNormalization refuses a bad axis, stash_type or parameter", "[eval][normfamily]") {
  const Tensor x = tensor(DType::float32, {2, 3}, random(6, -1, 1));
  const Tensor s = tensor(DType::float32, {3}, {1, 2, 3});
  auto ln = [&](const Inputs& in, const Attrs& a) { return run("LayerNormalization", 17, in, {"Y"}, a); };
  REQUIRE_THROWS_AS(ln({{"X", x}, {"S", s}}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "axis", int64_t{2}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(ln({{"X", x}, {"S", s}}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "stash_type", int64_t{11}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(ln({{"X", x}, {"S", tensor(DType::float32, {2}, {1, 2})}}, {}), bnorm::Error);
  REQUIRE_THROWS_AS(ln({{"X", x}, {"S", tensor(DType::float64, {3}, {1, 2, 3})}}, {}), bnorm::Error);
  REQUIRE_THROWS_AS(ln({{"X", x}, {"S", tensor(DType::float32, {1, 2, 3}, {1, 2, 3, 4, 5, 6})}}, {}), bnorm::Error);
  REQUIRE_THROWS_AS(ln({{"X", x}, {"S", tensor(DType::float32, {1, 1, 3}, {1, 2, 3})}}, {}), bnorm::Error);  // rank above X's
  REQUIRE_THROWS_AS(run("LayerNormalization", 16, {{"X", x}, {"S", s}}, {"Y"}), bnorm::Error);
}

TEST_CASE("LayerNormalization of an empty row count or a NaN row", "[eval][normfamily]") {
  auto out = run("LayerNormalization", 17, {{"X", Tensor(DType::float32, {0, 4})}, {"S", tensor(DType::float32, {4}, {1, 1, 1, 1})}},
                 {"Y", "M"});
  CHECK(out.at("Y").dims == std::vector<int64_t>{0, 4});
  CHECK(out.at("M").dims == std::vector<int64_t>{0, 1});
  std::vector<double> x = random(8, -1, 1);
  x[5] = std::numeric_limits<double>::quiet_NaN();
  out = run("LayerNormalization", 17, {{"X", tensor(DType::float32, {2, 4}, x)}, {"S", tensor(DType::float32, {4}, {1, 1, 1, 1})}}, {"Y"});
  const std::vector<double> y = out.at("Y").to_f64();
  for (size_t i = 0; i < 8; ++i) CHECK(std::isnan(y[i]) == (i >= 4));
}

TEST_CASE("RMSNormalization divides by the root mean square, Y takes scale's type", "[eval][normfamily]") {
  const std::vector<double> x = held(DType::float16, {2, 2, 3}, random(12, -3, 3));
  const std::vector<double> s = held(DType::float32, {2, 3}, random(6, -2, 2, 5));
  auto out = run("RMSNormalization", 23, {{"X", tensor(DType::float16, {2, 2, 3}, x)}, {"S", tensor(DType::float32, {2, 3}, s)}},
                 {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "axis", int64_t{-2}); });
  CHECK(out.at("Y").dtype == DType::float32);
  check_close(out.at("Y"), layer_norm_ref(x, 2, repeat(s, 2), {}, kEps, true).y);
  out = run("RMSNormalization", 23, {{"X", tensor(DType::float32, {2, 2, 3}, x)}, {"S", tensor(DType::bfloat16, {3}, {1, 1, 1})}},
            {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "stash_type", int64_t{11}); });
  CHECK(out.at("Y").dtype == DType::bfloat16);
  check_close(out.at("Y"), layer_norm_ref(x, 4, std::vector<double>(12, 1.0), {}, kEps, true).y);
  REQUIRE_THROWS_AS(run("RMSNormalization", 23, {{"X", tensor(DType::float32, {3}, {1, 2, 3})}, {"S", tensor(DType::float32, {3}, {1, 1, 1})}},
                        {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "stash_type", int64_t{7}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run("RMSNormalization", 22, {{"X", tensor(DType::float32, {3}, {1, 2, 3})}, {"S", tensor(DType::float32, {3}, {1, 1, 1})}},
                        {"Y"}),
                    bnorm::Error);
}


TEST_CASE("GroupNormalization-21 takes scale and bias per channel, 18 per group", "[eval][normfamily]") {
  const std::vector<double> x = held(DType::float32, {2, 6, 2, 2}, random(48, -3, 3));
  const std::vector<double> sc = held(DType::float32, {6}, random(6, -2, 2, 8));
  const std::vector<double> bc = held(DType::float32, {6}, random(6, -1, 1, 9));
  auto groups3 = [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "num_groups", int64_t{3}); };
  auto out = run("GroupNormalization", 21,
                 {{"X", tensor(DType::float32, {2, 6, 2, 2}, x)}, {"s", tensor(DType::float32, {6}, sc)}, {"b", tensor(DType::float32, {6}, bc)}},
                 {"Y"}, groups3);
  check_close(out.at("Y"), group_norm_ref(x, 2, 6, 3, sc, bc, kEps));
  const std::vector<double> sg = {sc[0], sc[1], sc[2]}, bg = {bc[0], bc[1], bc[2]};
  out = run("GroupNormalization", 18,
            {{"X", tensor(DType::float32, {2, 6, 2, 2}, x)}, {"s", tensor(DType::float32, {3}, sg)}, {"b", tensor(DType::float32, {3}, bg)}},
            {"Y"}, groups3);
  check_close(out.at("Y"), group_norm_ref(x, 2, 6, 3, {sg[0], sg[0], sg[1], sg[1], sg[2], sg[2]},
                                          {bg[0], bg[0], bg[1], bg[1], bg[2], bg[2]}, kEps));
  // Each version refuses the other's parameter size.
  REQUIRE_THROWS_AS(run("GroupNormalization", 18,
                        {{"X", tensor(DType::float32, {2, 6, 2, 2}, x)}, {"s", tensor(DType::float32, {6}, sc)}, {"b", tensor(DType::float32, {6}, bc)}},
                        {"Y"}, groups3),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run("GroupNormalization", 21,
                        {{"X", tensor(DType::float32, {2, 6, 2, 2}, x)}, {"s", tensor(DType::float32, {3}, sg)}, {"b", tensor(DType::float32, {3}, bg)}},
                        {"Y"}, groups3),
                    bnorm::Error);
}

TEST_CASE("GroupNormalization of bfloat16 and double data, and its invalid nodes", "[eval][normfamily]") {
  for (DType t : {DType::bfloat16, DType::float64, DType::float16}) {
    const std::vector<double> x = held(t, {1, 4, 5}, random(20, -3, 3));
    const std::vector<double> s = held(t, {4}, {1, -1, 0.5, 2}), b = held(t, {4}, {0, 1, 2, 3});
    auto out = run("GroupNormalization", 21, {{"X", tensor(t, {1, 4, 5}, x)}, {"s", tensor(t, {4}, s)}, {"b", tensor(t, {4}, b)}}, {"Y"},
                   [](onnx::NodeProto& n) {
                     bnorm::test::set_attr(n, "num_groups", int64_t{2});
                     bnorm::test::set_attr(n, "epsilon", 0.25f);
                   });
    CHECK(out.at("Y").dtype == t);
    check_close(out.at("Y"), group_norm_ref(x, 1, 4, 2, s, b, 0.25));
  }
  const Inputs in = {{"X", tensor(DType::float32, {1, 4, 5}, random(20, -1, 1))},
                     {"s", tensor(DType::float32, {4}, {1, 1, 1, 1})},
                     {"b", tensor(DType::float32, {4}, {0, 0, 0, 0})}};
  REQUIRE_THROWS_AS(run("GroupNormalization", 21, in, {"Y"}), bnorm::Error);  // num_groups is required
  for (int64_t g : {0, 3, -2}) {
    REQUIRE_THROWS_AS(run("GroupNormalization", 21, in, {"Y"},
                          [g](onnx::NodeProto& n) { bnorm::test::set_attr(n, "num_groups", g); }),
                      bnorm::Error);
  }
  REQUIRE_THROWS_AS(run("GroupNormalization", 21, {{"X", tensor(DType::float32, {4}, {1, 2, 3, 4})}, in[1], in[2]}, {"Y"},
                        [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "num_groups", int64_t{1}); }),
                    bnorm::Error);
}
