// LpPool, GlobalMaxPool, GlobalLpPool, MaxUnpool, and the version-bound
// attributes of MaxPool/AveragePool, on hand-computed cases; MaxPool 2-D
// against its definition over swept geometries.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

Attrs kernel(std::vector<int64_t> k, std::function<void(onnx::NodeProto&)> more = {}) {
  return [=](onnx::NodeProto& n) {
    set_ints(n, "kernel_shape", k);
    if (more) more(n);
  };
}

}  // namespace

TEST_CASE("LpPool is the p-norm of each window, p is a float at 1 and an int from 2", "[eval][resample]") {
  const Tensor x = f32({1, 1, 3}, {-3, 4, 12});
  auto p_int = [](int64_t p) { return [p](onnx::NodeProto& n) { set_attr(n, "p", p); }; };
  const std::vector<double> l2 = run_node1(11, "LpPool", {x}, kernel({2})).to_f64();
  CHECK(l2[0] == 5);
  CHECK(l2[1] == Approx(std::sqrt(160.0)).epsilon(1e-7));
  CHECK(run_node1(2, "LpPool", {x}, kernel({2}, p_int(1))).to_f64() == std::vector<double>{7, 16});
  CHECK(run_node1(1, "LpPool", {x}, kernel({3}, [](auto& n) { set_attr(n, "p", 1.0f); })).to_f64() ==
        std::vector<double>{19});
  REQUIRE_THROWS_AS(run_node1(2, "LpPool", {x}, kernel({2}, [](auto& n) { set_attr(n, "p", 1.0f); })), bnorm::Error);
  // Dilation 2 joins elements 0 and 2; only from version 18.
  auto dilated = kernel({2}, [](auto& n) { set_ints(n, "dilations", {2}); });
  CHECK(run_node1(18, "LpPool", {x}, dilated).to_f64()[0] == Approx(std::sqrt(9.0 + 144.0)));
  REQUIRE_THROWS_AS(run_node1(11, "LpPool", {x}, dilated), bnorm::Error);
}

TEST_CASE("GlobalMaxPool and GlobalLpPool reduce each plane, NaN propagates through the max", "[eval][resample]") {
  const Tensor x = f32({1, 2, 2}, {3, -4, 1, NAN});
  const Tensor m = run_node1(22, "GlobalMaxPool", {x});
  CHECK(m.dims == std::vector<int64_t>{1, 2, 1});
  CHECK(m.to_f64()[0] == 3);
  CHECK(std::isnan(m.to_f64()[1]));
  const Tensor y = run_node1(2, "GlobalLpPool", {f32({1, 1, 2, 1}, {3, -4})});
  CHECK(y.dims == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(y.to_f64() == std::vector<double>{5});
  CHECK(run_node1(1, "GlobalLpPool", {f32({1, 1, 2}, {3, -4})}, [](auto& n) { set_attr(n, "p", 1.0f); }).to_f64() ==
        std::vector<double>{7});
  REQUIRE_THROWS_AS(run_node1(22, "GlobalMaxPool", {f32({2}, {1, 2})}), bnorm::Error);
}

TEST_CASE("MaxUnpool scatters by MaxPool's indices and pads to output_shape at the end", "[eval][resample]") {
  const Tensor x = f32({1, 1, 2}, {7, 9});
  const Tensor idx = i64({1, 1, 2}, {1, 2});
  auto strided = kernel({2}, [](auto& n) { set_ints(n, "strides", {2}); });
  CHECK(run_node1(11, "MaxUnpool", {x, idx}, strided).to_f64() == std::vector<double>{0, 7, 9, 0});
  const Tensor y = run_node1(9, "MaxUnpool", {x, idx, i64({3}, {1, 1, 6})}, strided);
  CHECK(y.to_f64() == std::vector<double>{0, 7, 9, 0, 0, 0});
  REQUIRE_THROWS_AS(run_node1(22, "MaxUnpool", {x, i64({1, 1, 2}, {1, 4})}, strided), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(22, "MaxUnpool", {x, idx, i64({3}, {1, 1, 3})}, strided), bnorm::Error);
}

TEST_CASE("MaxPool and AveragePool refuse attributes their version does not have", "[eval][resample]") {
  const Tensor x = f32({1, 1, 5}, {1, 2, 3, 4, 5});
  auto dilated = kernel({2}, [](auto& n) { set_ints(n, "dilations", {2}); });
  CHECK(run_node1(19, "AveragePool", {x}, dilated).to_f64() == std::vector<double>{2, 3, 4});
  REQUIRE_THROWS_AS(run_node1(11, "AveragePool", {x}, dilated), bnorm::Error);
  CHECK(run_node1(10, "MaxPool", {x}, dilated).to_f64() == std::vector<double>{3, 4, 5});
  REQUIRE_THROWS_AS(run_node1(8, "MaxPool", {x}, dilated), bnorm::Error);
  auto ceil = kernel({2}, [](auto& n) {
    set_ints(n, "strides", {2});
    set_attr(n, "ceil_mode", int64_t{1});
  });
  CHECK(run_node1(10, "MaxPool", {x}, ceil).to_f64() == std::vector<double>{2, 4, 5});
  REQUIRE_THROWS_AS(run_node1(8, "MaxPool", {x}, ceil), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(1, "AveragePool", {x}, kernel({2}, [](auto& n) { set_attr(n, "count_include_pad", int64_t{1}); })),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(11, "MaxPool", {x}, kernel({2}, [](auto& n) { set_string(n, "auto_pad", "SAME"); })),
                    bnorm::Error);
}

namespace {

// MaxPool-12 over a 2-D plane from the definition: the output size, then
// each window's elements in row-major order, padding skipped; the first
// in-bounds one, then any greater one (so a NaN first wins, a NaN later is
// passed over: the evaluator's documented order); a window wholly in the
// padding is -inf.
std::vector<float> max_pool_reference(const std::vector<float>& x, int64_t planes, int64_t h, int64_t w,
                                      const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                                      const std::vector<int64_t>& d, const std::vector<int64_t>& pads, bool ceil,
                                      int64_t& oh, int64_t& ow) {
  auto out_len = [&](int64_t in, int64_t kk, int64_t ss, int64_t dd, int64_t pb, int64_t pe) {
    const int64_t room = in + pb + pe - ((kk - 1) * dd + 1);
    int64_t o = (ceil ? (room + ss - 1) / ss : room / ss) + 1;
    if (ceil && (o - 1) * ss >= in + pb) --o;
    return o;
  };
  oh = out_len(h, k[0], s[0], d[0], pads[0], pads[2]);
  ow = out_len(w, k[1], s[1], d[1], pads[1], pads[3]);
  std::vector<float> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        bool any = false;
        float best = -INFINITY;
        for (int64_t ky = 0; ky < k[0]; ++ky)
          for (int64_t kx = 0; kx < k[1]; ++kx) {
            const int64_t iy = oy * s[0] - pads[0] + ky * d[0], ix = ox * s[1] - pads[1] + kx * d[1];
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            const float v = x[static_cast<size_t>((p * h + iy) * w + ix)];
            if (!any || v > best) best = v;
            any = true;
          }
        y.push_back(best);
      }
  return y;
}

}  // namespace

TEST_CASE("MaxPool 2-D matches the definition over strides dilations pads ceil_mode and NaNs", "[eval][resample]") {
  std::mt19937 rng(5);
  int cases = 0;
  for (int64_t kh : {1, 2, 3})
    for (int64_t sw : {1, 2, 3})
      for (int64_t dil : {1, 2})
        for (int64_t pad : {0, 1, 2})
          for (int64_t ceil : {0, 1})
            for (int64_t w : {1, 5, 16, 37}) {
              const int64_t h = 7, kw = kh == 2 ? 3 : kh, planes = 2;
              const std::vector<int64_t> k{kh, kw}, s{2, sw}, d{dil, dil}, pads{pad, pad, 0, pad + 1};
              if ((kh - 1) * dil + 1 > h + 2 * pad || (kw - 1) * dil + 1 > w + 2 * pad + 1 || pad >= kh * 3) continue;
              Tensor x = random_tensor(DType::float32, {1, planes, h, w}, static_cast<uint32_t>(cases));
              float* xv = x.data<float>();
              for (int i = 0; i < 3; ++i) xv[rng() % static_cast<uint32_t>(x.numel())] = NAN;
              int64_t oh = 0, ow = 0;
              const std::vector<float> want = max_pool_reference(
                  std::vector<float>(xv, xv + x.numel()), planes, h, w, k, s, d, pads, ceil != 0, oh, ow);
              const auto attrs = kernel(k, [&](onnx::NodeProto& n) {
                set_ints(n, "strides", s);
                set_ints(n, "dilations", d);
                set_ints(n, "pads", pads);
                set_attr(n, "ceil_mode", ceil);
              });
              // Without Indices (the evaluator's row loops) and with them (its general loop).
              const Tensor fast = run_node1(12, "MaxPool", {x}, attrs);
              const Tensor general = run_node(12, "MaxPool", {x}, 2, attrs)[0];
              INFO("k " << kh << "x" << kw << " stride 2," << sw << " dil " << dil << " pad " << pad << " ceil "
                        << ceil << " w " << w);
              REQUIRE(fast.dims == std::vector<int64_t>{1, planes, oh, ow});
              REQUIRE(fast.bytes.size() == want.size() * sizeof(float));
              REQUIRE(std::memcmp(fast.bytes.data(), want.data(), fast.bytes.size()) == 0);
              REQUIRE(general.bytes == fast.bytes);
              // Double data (the row loops without the float kernel): the same picks.
              const Tensor xd = Tensor::from_f64(DType::float64, x.dims, x.to_f64());
              const std::vector<double> got_d = run_node1(12, "MaxPool", {xd}, attrs).to_f64();
              REQUIRE(got_d.size() == want.size());
              for (size_t i = 0; i < want.size(); ++i) {
                INFO("double, element " << i);
                REQUIRE((std::isnan(want[i]) ? std::isnan(got_d[i]) : got_d[i] == static_cast<double>(want[i])));
              }
              ++cases;
            }
  REQUIRE(cases > 100);
}
