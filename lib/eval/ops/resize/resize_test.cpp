// Resize (10, 11, 13, 18, 19) and Upsample (1, 7, 9) against hand-computed
// values and a float64 reference of the spec's 1-D formulas written here.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

const Tensor none;

Attrs mode(const std::string& m, const std::string& transform = {}) {
  return [=](onnx::NodeProto& n) {
    set_string(n, "mode", m);
    if (!transform.empty()) set_string(n, "coordinate_transformation_mode", transform);
  };
}

// The spec's cubic convolution kernel (Keys), written out for the reference.
double keys_ref(double s, double a) {
  s = std::fabs(s);
  if (s <= 1) return (a + 2) * s * s * s - (a + 3) * s * s + 1;
  if (s < 2) return a * s * s * s - 5 * a * s * s + 8 * a * s - 4 * a;
  return 0;
}

// 1-D cubic resize by half_pixel with edge replication, straight from the
// formulas: y[i] = sum_j W(x_ori - j) v[clamp(j)] over the 4 nearest j.
std::vector<double> cubic_ref(const std::vector<double>& v, double scale, int64_t out, double a) {
  std::vector<double> y;
  const auto n = static_cast<int64_t>(v.size());
  for (int64_t i = 0; i < out; ++i) {
    const double x = (static_cast<double>(i) + 0.5) / scale - 0.5;
    const auto f = static_cast<int64_t>(std::floor(x));
    double s = 0;
    for (int64_t j = f - 1; j <= f + 2; ++j) s += keys_ref(x - static_cast<double>(j), a) * v[std::clamp<int64_t>(j, 0, n - 1)];
    y.push_back(s);
  }
  return y;
}

}  // namespace

TEST_CASE("Resize-19 bilinear half_pixel upsampling matches the spec's example", "[eval][resample]") {
  const Tensor y = run_node1(19, "Resize", {f32({1, 1, 2, 2}, {1, 2, 3, 4}), none, f32({4}, {1, 1, 2, 2})}, mode("linear"));
  CHECK(y.dims == std::vector<int64_t>{1, 1, 4, 4});
  check_close(y.to_f64(), {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
}

TEST_CASE("Resize cubic equals the Keys-kernel reference for both coefficients", "[eval][resample]") {
  const std::vector<double> v{1, 4, 2, 8, 5, 7};
  for (const double a : {-0.75, -0.5}) {
    for (const double scale : {2.0, 0.5, 1.5}) {
      INFO("a " << a << " scale " << scale);
      const auto out = static_cast<int64_t>(std::floor(6 * scale));
      const Tensor y = run_node1(13, "Resize", {f64({6}, v), none, f32({1}, {scale})}, [&](onnx::NodeProto& n) {
        set_string(n, "mode", "cubic");
        set_attr(n, "cubic_coeff_a", static_cast<float>(a));
      });
      check_close(y.to_f64(), cubic_ref(v, scale, out, a));
    }
  }
}

TEST_CASE("Resize align_corners divides by the fractional target length in * scale", "[eval][resample]") {
  // 4 * 0.6 = 2.4 -> 2 outputs; x_ori(1) = 1 * 3 / 1.4.
  const Tensor y = run_node1(19, "Resize", {f64({4}, {1, 2, 3, 4}), none, f32({1}, {0.6})}, mode("linear", "align_corners"));
  const double x1 = 3.0 / (4 * static_cast<double>(0.6f) - 1);
  check_close(y.to_f64(), {1, 1 + x1}, 1e-9);
}

TEST_CASE("Resize nearest_mode rounds the half_pixel coordinate as named", "[eval][resample]") {
  // in 2 -> 5 (sizes): x_ori = (i + 0.5) * 0.4 - 0.5 = -0.3, 0.1, 0.5, 0.9, 1.3.
  const Tensor x = f64({2}, {10, 20});
  const std::vector<std::pair<std::string, std::vector<double>>> cases{
      {"round_prefer_floor", {10, 10, 10, 20, 20}},
      {"round_prefer_ceil", {10, 10, 20, 20, 20}},
      {"floor", {10, 10, 10, 10, 20}},
      {"ceil", {10, 20, 20, 20, 20}}};
  for (const auto& c : cases) {
    const std::string& m = c.first;  // a lambda cannot capture a structured binding in C++17 (clang refuses)
    INFO(m);
    const Tensor y = run_node1(13, "Resize", {x, none, none, i64({1}, {5})}, [&](onnx::NodeProto& n) {
      set_string(n, "nearest_mode", m);
    });
    CHECK(y.to_f64() == c.second);
  }
}

TEST_CASE("Resize-10 nearest reads floor(x / scale) upsampling and ceil downsampling", "[eval][resample]") {
  const Tensor x = f32({5}, {0, 1, 2, 3, 4});
  CHECK(run_node1(10, "Resize", {x, f32({1}, {0.6})}).to_f64() == std::vector<double>{0, 2, 4});
  CHECK(run_node1(10, "Resize", {f32({2}, {7, 9}), f32({1}, {2})}).to_f64() == std::vector<double>{7, 7, 9, 9});
}

TEST_CASE("Upsample linear is asymmetric with the edge repeated, its scales must be at least 1", "[eval][resample]") {
  const Tensor x = f64({1, 1, 1, 2}, {1, 2});
  const std::vector<double> want{1, 1.5, 2, 2};
  CHECK(run_node1(9, "Upsample", {x, f32({4}, {1, 1, 1, 2})}, mode("linear")).to_f64() == want);
  CHECK(run_node1(7, "Upsample", {x}, [](onnx::NodeProto& n) {
          set_string(n, "mode", "linear");
          set_floats(n, "scales", {1, 1, 1, 2});
        }).to_f64() == want);
  // Upsample-1's bilinear has no exact definition (docs/semantics.md): refused.
  REQUIRE_THROWS_AS(run_node1(1, "Upsample", {x}, [](onnx::NodeProto& n) {
                      set_string(n, "mode", "bilinear");
                      set_attr(n, "height_scale", 1.0f);
                      set_attr(n, "width_scale", 2.0f);
                    }),
                    bnorm::Error);
  CHECK(run_node1(1, "Upsample", {x}, [](onnx::NodeProto& n) {
          set_attr(n, "height_scale", 1.0f);
          set_attr(n, "width_scale", 2.0f);
        }).to_f64() == std::vector<double>{1, 1, 2, 2});
  REQUIRE_THROWS_AS(run_node1(9, "Upsample", {x, f32({4}, {1, 1, 1, 0.5})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(9, "Upsample", {x, f32({4}, {1, 1, 1, 2})}, mode("cubic")), bnorm::Error);
}

TEST_CASE("Resize linear of uint8 truncates toward zero", "[eval][resample]") {
  const Tensor x = Tensor::from_f64(DType::uint8, {2}, {0, 255});
  const Tensor y = run_node1(10, "Resize", {x, f32({1}, {2})}, mode("linear"));
  CHECK(y.dtype == DType::uint8);
  CHECK(y.to_f64() == std::vector<double>{0, 127, 255, 255});
}

TEST_CASE("Resize antialias stretches the triangle filter when downscaling", "[eval][resample]") {
  // in 4 -> 2, x_ori = 0.5, 2.5; weights max(0, 1 - |j - x| / 2) normalized.
  const std::vector<double> v{0, 1, 4, 9};
  auto ref = [&](double x) {
    double s = 0, w = 0;
    for (int j = -2; j <= 5; ++j) {
      const double k = std::max(0.0, 1 - std::fabs(j - x) / 2);
      s += k * v[std::clamp(j, 0, 3)];
      w += k;
    }
    return s / w;
  };
  const Tensor y = run_node1(18, "Resize", {f64({4}, v), none, f32({1}, {0.5})}, [](onnx::NodeProto& n) {
    set_string(n, "mode", "linear");
    set_attr(n, "antialias", int64_t{1});
  });
  check_close(y.to_f64(), {ref(0.5), ref(2.5)});
  const Tensor plain = run_node1(18, "Resize", {f64({4}, v), none, f32({1}, {0.5})}, mode("linear"));
  check_close(plain.to_f64(), {0.5, 6.5});
}

TEST_CASE("Resize tf_crop_and_resize reads the roi and extrapolates outside the input", "[eval][resample]") {
  // x_ori = 0.5 * 3 + i * 1.0 * 3 / 2 = 1.5, 3, 4.5.
  const Tensor y = run_node1(13, "Resize", {f64({4}, {0, 10, 20, 30}), f32({2}, {0.5, 1.5}), none, i64({1}, {3})},
                       [](onnx::NodeProto& n) {
                         set_string(n, "mode", "linear");
                         set_string(n, "coordinate_transformation_mode", "tf_crop_and_resize");
                         set_attr(n, "extrapolation_value", -1.0f);
                       });
  CHECK(y.to_f64() == std::vector<double>{15, 30, -1});
}

TEST_CASE("Resize-18 axes and keep_aspect_ratio_policy size only the named axes", "[eval][resample]") {
  const Tensor x = f64({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto policy = [](const std::string& p) {
    return [p](onnx::NodeProto& n) {
      set_ints(n, "axes", {-2, -1});
      set_string(n, "keep_aspect_ratio_policy", p);
    };
  };
  // sizes 1 x 3: ratios 0.5 and 0.75.
  CHECK(run_node1(18, "Resize", {x, none, none, i64({2}, {1, 3})}, policy("not_larger")).dims ==
        std::vector<int64_t>{1, 1, 2});
  CHECK(run_node1(18, "Resize", {x, none, none, i64({2}, {1, 3})}, policy("not_smaller")).dims ==
        std::vector<int64_t>{1, 2, 3});
  CHECK(run_node1(18, "Resize", {x, none, none, i64({2}, {1, 3})}, policy("stretch")).dims ==
        std::vector<int64_t>{1, 1, 3});
  REQUIRE_THROWS_AS(run_node1(13, "Resize", {x, none, none, i64({2}, {1, 3})}, policy("stretch")), bnorm::Error);
}

TEST_CASE("Resize half_pixel_symmetric centres the fractional output (19 only)", "[eval][resample]") {
  // in 4, scale 0.6: length 2.4, out 2, offset = 2 * (1 - 2 / 2.4).
  const Tensor x = f64({4}, {1, 2, 3, 4});
  const double s = static_cast<double>(0.6f), off = 2 * (1 - 2 / (4 * s));
  std::vector<double> want;
  for (int i = 0; i < 2; ++i) want.push_back(1 + off + (i + 0.5) / s - 0.5);
  check_close(run_node1(19, "Resize", {x, none, f32({1}, {0.6})}, mode("linear", "half_pixel_symmetric")).to_f64(), want,
              1e-9);
  REQUIRE_THROWS_AS(run_node1(18, "Resize", {x, none, f32({1}, {0.6})}, mode("linear", "half_pixel_symmetric")),
                    bnorm::Error);
}

TEST_CASE("Resize-11 keeps tf_half_pixel_for_nn, removed at 13", "[eval][resample]") {
  // (i + 0.5) / 0.5 = 1, 3 (round_prefer_floor).
  const Tensor x = f64({4}, {1, 2, 3, 4});
  auto attrs = mode("nearest", "tf_half_pixel_for_nn");
  CHECK(run_node1(11, "Resize", {x, f32({0}, {}), f32({1}, {0.5})}, attrs).to_f64() == std::vector<double>{2, 4});
  REQUIRE_THROWS_AS(run_node1(13, "Resize", {x, none, f32({1}, {0.5})}, attrs), bnorm::Error);
}

TEST_CASE("Resize refuses invalid targets", "[eval][resample]") {
  const Tensor x = f64({2}, {1, 2});
  REQUIRE_THROWS_AS(run_node1(13, "Resize", {x, none, f32({1}, {2}), i64({1}, {4})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "Resize", {x}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "Resize", {x, none, f32({1}, {-1})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "Resize", {x, none, none, i64({1}, {-3})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "Resize", {x, none, f32({2}, {1, 2})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "Resize", {f64({}, {1}), none, f32({0}, {})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "Resize", {x, none, f32({1}, {2})}, mode("linear", "tf_crop_and_resize")), bnorm::Error);
  // An empty input axis cannot grow.
  REQUIRE_THROWS_AS(run_node1(13, "Resize", {f64({0}, {}), none, none, i64({1}, {3})}), bnorm::Error);
  CHECK(run_node1(13, "Resize", {f64({0}, {}), none, f32({1}, {2})}).dims == std::vector<int64_t>{0});
  // An empty output is not planned axis by axis (2^40 positions would take hours).
  const Tensor huge = run_node1(13, "Resize", {f64({0, 4}, {}), none, none, i64({2}, {0, 1099511627776.0})}, mode("linear"));
  CHECK(huge.dims == std::vector<int64_t>{0, int64_t{1} << 40});
}
