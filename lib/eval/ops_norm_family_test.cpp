// The normalization family (LayerNormalization, RMSNormalization,
// GroupNormalization, MeanVarianceNormalization, LpNormalization, LRN,
// InstanceNormalization-22) through bnorm::evaluate, against float64
// references written here from the ONNX spec, at every version, with their
// attributes, types, broadcasting, edge cases and invalid nodes.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "core/error.h"
#include "eval/evaluator.h"
#include "eval/test_graph.h"
#include "kernels/half.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using Attrs = std::function<void(onnx::NodeProto&)>;
using Inputs = std::vector<std::pair<std::string, Tensor>>;

void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t i : v) a->add_ints(i);
}

// One node of `op` at `opset`, its inputs given as graph inputs ("" names an
// absent optional input).
std::map<std::string, Tensor> run(const std::string& op, int opset, const Inputs& in,
                                  const std::vector<std::string>& outputs, const Attrs& attrs = {}) {
  bnorm::test::GraphBuilder b(opset);
  std::vector<std::string> names;
  std::map<std::string, Tensor> feeds;
  for (const auto& [name, t] : in) {
    names.push_back(name);
    if (name.empty()) continue;
    b.input(name, t.dtype, t.dims);
    feeds[name] = t;
  }
  auto& node = b.node(op, names, outputs, "n");
  if (attrs) attrs(node);
  for (const auto& o : outputs) b.output(o);
  return bnorm::evaluate(b.model(), feeds);
}

std::vector<double> random(size_t n, double lo, double hi, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

// `v` as a tensor of type t (rounded once), and back as the values it holds.
Tensor tensor(DType t, std::vector<int64_t> dims, const std::vector<double>& v) {
  return Tensor::from_f64(t, std::move(dims), v);
}
std::vector<double> held(DType t, const std::vector<int64_t>& dims, const std::vector<double>& v) {
  return tensor(t, dims, v).to_f64();
}

// Within one rounding of the type (and float64's own error).
void check_close(const Tensor& got, const std::vector<double>& want) {
  REQUIRE(static_cast<size_t>(got.numel()) == want.size());
  const std::vector<double> g = got.to_f64();
  const double rel = got.dtype == DType::float64 ? 1e-13
                   : got.dtype == DType::float32 ? 1e-6
                   : got.dtype == DType::float16 ? 1.0 / 1024
                                                  : 1.0 / 128;
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(g[i]));
    } else {
      CHECK(std::fabs(g[i] - want[i]) <= rel * std::fabs(want[i]) + 1e-6);
    }
  }
}

// LayerNormalization per the spec: X as [rows, len]; scale and bias given
// already broadcast to all of X. Also Mean and InvStdDev per row.
struct LnRef {
  std::vector<double> y, mean, inv;
};
LnRef layer_norm_ref(const std::vector<double>& x, size_t rows, const std::vector<double>& s,
                     const std::vector<double>& b, double eps, bool rms = false) {
  LnRef r;
  const size_t len = x.size() / rows;
  for (size_t i = 0; i < rows; ++i) {
    double mean = 0, var = 0;
    for (size_t k = 0; k < len; ++k) mean += x[i * len + k];
    mean /= len;
    for (size_t k = 0; k < len; ++k) {
      const double v = x[i * len + k];
      var += rms ? v * v : (v - mean) * (v - mean);
    }
    var /= len;
    if (rms) mean = 0;
    const double inv = 1 / std::sqrt(var + eps);
    r.mean.push_back(mean);
    r.inv.push_back(inv);
    for (size_t k = 0; k < len; ++k) {
      const size_t at = i * len + k;
      r.y.push_back((x[at] - mean) * inv * s[at] + (b.empty() ? 0 : b[at]));
    }
  }
  return r;
}

// `row` repeated `times` times.
std::vector<double> repeat(const std::vector<double>& row, size_t times) {
  std::vector<double> out;
  for (size_t i = 0; i < times; ++i) out.insert(out.end(), row.begin(), row.end());
  return out;
}

const double kEps = double{1e-5f};

}  // namespace

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

TEST_CASE("LayerNormalization of float16 and bfloat16 rounds once; stash_type sets the statistics' type",
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

TEST_CASE("RMSNormalization divides by the root mean square; Y takes scale's type", "[eval][normfamily]") {
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

// GroupNormalization per the spec: X [N, C, S]; scale and bias per channel.
std::vector<double> group_norm_ref(const std::vector<double>& x, size_t n, size_t c, size_t g,
                                   const std::vector<double>& s, const std::vector<double>& b, double eps) {
  const size_t len = x.size() / n / g, sp = x.size() / n / c;
  std::vector<double> y;
  for (size_t r = 0; r < n * g; ++r) {
    double mean = 0, var = 0;
    for (size_t k = 0; k < len; ++k) mean += x[r * len + k];
    mean /= len;
    for (size_t k = 0; k < len; ++k) var += (x[r * len + k] - mean) * (x[r * len + k] - mean);
    var /= len;
    for (size_t k = 0; k < len; ++k) {
      const size_t ch = (r * len + k) / sp % c;
      y.push_back(s[ch] * (x[r * len + k] - mean) / std::sqrt(var + eps) + b[ch]);
    }
  }
  return y;
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

// (x - mean) / (sqrt(var) + 1e-9) over the reduced axes of a [2, 3, 2, 2] X.
std::vector<double> mvn_ref(const std::vector<double>& x, const std::vector<bool>& reduced, bool nv = true) {
  const size_t dims[4] = {2, 3, 2, 2};
  auto key = [&](size_t i) {
    size_t k = 0;
    for (size_t d = 4, rest = i; d-- > 0; rest /= dims[d]) k = k * 10 + (reduced[d] ? 0 : rest % dims[d] + 1);
    return k;
  };
  std::map<size_t, double> sum, sq, count;
  for (size_t i = 0; i < x.size(); ++i) {
    sum[key(i)] += x[i];
    count[key(i)] += 1;
  }
  for (size_t i = 0; i < x.size(); ++i) sq[key(i)] += std::pow(x[i] - sum[key(i)] / count[key(i)], 2);
  std::vector<double> y;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - sum[key(i)] / count[key(i)];
    y.push_back(nv ? d / (std::sqrt(sq[key(i)] / count[key(i)]) + 1e-9) : d);
  }
  return y;
}

TEST_CASE("MeanVarianceNormalization 9 and 13 reduce over `axes` (default 0, 2, 3)", "[eval][normfamily]") {
  const std::vector<double> x = held(DType::float32, {2, 3, 2, 2}, random(24, -3, 3));
  const Tensor xt = tensor(DType::float32, {2, 3, 2, 2}, x);
  for (int opset : {9, 13}) {
    check_close(run("MeanVarianceNormalization", opset, {{"X", xt}}, {"Y"}).at("Y"), mvn_ref(x, {true, false, true, true}));
    check_close(run("MeanVarianceNormalization", opset, {{"X", xt}}, {"Y"},
                    [](onnx::NodeProto& n) { set_ints(n, "axes", {-1, 1}); })
                    .at("Y"),
                mvn_ref(x, {false, true, false, true}));
  }
  const Tensor xb = tensor(DType::bfloat16, {2, 3, 2, 2}, x);
  check_close(run("MeanVarianceNormalization", 13, {{"X", xb}}, {"Y"}).at("Y"),
              mvn_ref(xb.to_f64(), {true, false, true, true}));
  REQUIRE_THROWS_AS(run("MeanVarianceNormalization", 9, {{"X", xb}}, {"Y"}), bnorm::Error);  // bf16 from 13
  REQUIRE_THROWS_AS(run("MeanVarianceNormalization", 13, {{"X", xt}}, {"Y"},
                        [](onnx::NodeProto& n) { set_ints(n, "axes", {1, -3}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run("MeanVarianceNormalization", 13, {{"X", xt}}, {"Y"},
                        [](onnx::NodeProto& n) { set_ints(n, "axes", {4}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run("MeanVarianceNormalization", 13, {{"X", tensor(DType::float32, {2, 3}, random(6, 0, 1))}}, {"Y"}),
                    bnorm::Error);  // default axis 3 does not exist
}

TEST_CASE("MeanVarianceNormalization-1 reduces per channel or across channels, with or without the variance",
          "[eval][normfamily]") {
  const std::vector<double> x = held(DType::float64, {2, 3, 2, 2}, random(24, -3, 3));
  const Tensor xt = tensor(DType::float64, {2, 3, 2, 2}, x);
  check_close(run("MeanVarianceNormalization", 7, {{"X", xt}}, {"Y"}).at("Y"), mvn_ref(x, {false, false, true, true}));
  check_close(run("MeanVarianceNormalization", 7, {{"X", xt}}, {"Y"},
                  [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "across_channels", int64_t{1}); })
                  .at("Y"),
              mvn_ref(x, {false, true, true, true}));
  check_close(run("MeanVarianceNormalization", 7, {{"X", xt}}, {"Y"},
                  [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "normalize_variance", int64_t{0}); })
                  .at("Y"),
              mvn_ref(x, {false, false, true, true}, false));
  REQUIRE_THROWS_AS(run("MeanVarianceNormalization", 7, {{"X", xt}}, {"Y"},
                        [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "across_channels", int64_t{2}); }),
                    bnorm::Error);
}

std::vector<double> lp_ref(const std::vector<double>& x, size_t outer, size_t len, size_t inner, int p) {
  std::vector<double> y(x.size());
  for (size_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < inner; ++k) {
      double norm = 0;
      for (size_t a = 0; a < len; ++a) norm += p == 1 ? std::fabs(x[(o * len + a) * inner + k]) : std::pow(x[(o * len + a) * inner + k], 2);
      if (p == 2) norm = std::sqrt(norm);
      for (size_t a = 0; a < len; ++a) y[(o * len + a) * inner + k] = norm == 0 ? 0 : x[(o * len + a) * inner + k] / norm;
    }
  }
  return y;
}

TEST_CASE("LpNormalization divides by the 1- or 2-norm along axis, giving 0 for a zero norm", "[eval][normfamily]") {
  std::vector<double> x = held(DType::float32, {2, 3, 4}, random(24, -3, 3));
  for (size_t a = 0; a < 3; ++a) x[4 * a + 1] = 0;  // a zero norm along axis 1 at (0, :, 1)
  const Tensor xt = tensor(DType::float32, {2, 3, 4}, x);
  check_close(run("LpNormalization", 1, {{"x", xt}}, {"Y"}).at("Y"), lp_ref(x, 6, 4, 1, 2));
  const std::vector<double> y = run("LpNormalization", 22, {{"x", xt}}, {"Y"}, [](onnx::NodeProto& n) {
                                  bnorm::test::set_attr(n, "axis", int64_t{1});
                                  bnorm::test::set_attr(n, "p", int64_t{1});
                                }).at("Y").to_f64();
  check_close(tensor(DType::float64, {24}, y), lp_ref(x, 2, 3, 4, 1));
  CHECK(y[1] == 0);
  const Tensor xb = tensor(DType::bfloat16, {2, 3, 4}, x);
  check_close(run("LpNormalization", 22, {{"x", xb}}, {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "axis", int64_t{-3}); }).at("Y"),
              lp_ref(xb.to_f64(), 1, 2, 12, 2));
  REQUIRE_THROWS_AS(run("LpNormalization", 1, {{"x", xb}}, {"Y"}), bnorm::Error);  // bf16 from 22
  REQUIRE_THROWS_AS(run("LpNormalization", 22, {{"x", xt}}, {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "p", int64_t{3}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run("LpNormalization", 22, {{"x", xt}}, {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "axis", int64_t{3}); }),
                    bnorm::Error);
}

std::vector<double> lrn_ref(const std::vector<double>& x, size_t n, size_t c, size_t s, int64_t size, double alpha,
                            double beta, double bias) {
  std::vector<double> y;
  for (size_t i = 0; i < n * c * s; ++i) {
    const auto ch = static_cast<int64_t>(i / s % c);
    double sq = 0;
    for (int64_t k = std::max<int64_t>(0, ch - (size - 1) / 2); k <= std::min<int64_t>(c - 1, ch + size / 2); ++k) {
      sq += std::pow(x[(i / s / c * c + static_cast<size_t>(k)) * s + i % s], 2);
    }
    y.push_back(x[i] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
  }
  return y;
}

TEST_CASE("LRN sums squares over a window of channels, odd or even in size", "[eval][normfamily]") {
  const std::vector<double> x = held(DType::float32, {2, 5, 3}, random(30, -3, 3));
  const Tensor xt = tensor(DType::float32, {2, 5, 3}, x);
  for (int64_t size : {1, 2, 3, 4}) {
    INFO("size " << size);
    check_close(run("LRN", 13, {{"X", xt}}, {"Y"}, [size](onnx::NodeProto& n) { bnorm::test::set_attr(n, "size", size); }).at("Y"),
                lrn_ref(x, 2, 5, 3, size, double{1e-4f}, 0.75, 1.0));
  }
  auto attrs = [](onnx::NodeProto& n) {
    bnorm::test::set_attr(n, "size", int64_t{3});
    bnorm::test::set_attr(n, "alpha", 0.5f);
    bnorm::test::set_attr(n, "beta", 0.5f);
    bnorm::test::set_attr(n, "bias", 2.0f);
  };
  check_close(run("LRN", 1, {{"X", tensor(DType::float64, {2, 5, 3}, x)}}, {"Y"}, attrs).at("Y"), lrn_ref(x, 2, 5, 3, 3, 0.5, 0.5, 2));
  const Tensor xb = tensor(DType::bfloat16, {2, 5, 3}, x);
  check_close(run("LRN", 13, {{"X", xb}}, {"Y"}, attrs).at("Y"), lrn_ref(xb.to_f64(), 2, 5, 3, 3, 0.5, 0.5, 2));
  REQUIRE_THROWS_AS(run("LRN", 1, {{"X", xb}}, {"Y"}, attrs), bnorm::Error);  // bf16 from 13
  REQUIRE_THROWS_AS(run("LRN", 13, {{"X", xt}}, {"Y"}), bnorm::Error);         // size is required
  REQUIRE_THROWS_AS(run("LRN", 13, {{"X", xt}}, {"Y"}, [](onnx::NodeProto& n) { bnorm::test::set_attr(n, "size", int64_t{0}); }),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run("LRN", 13, {{"X", tensor(DType::float32, {3}, {1, 2, 3})}}, {"Y"}, attrs), bnorm::Error);
}

TEST_CASE("InstanceNormalization-22 normalizes bfloat16 data", "[eval][normfamily]") {
  const std::vector<double> x = held(DType::bfloat16, {2, 3, 4}, random(24, -3, 3));
  const std::vector<double> s = held(DType::bfloat16, {3}, {1, -2, 0.5}), b = held(DType::bfloat16, {3}, {0, 1, -1});
  auto out = run("InstanceNormalization", 22,
                 {{"x", tensor(DType::bfloat16, {2, 3, 4}, x)}, {"s", tensor(DType::bfloat16, {3}, s)}, {"b", tensor(DType::bfloat16, {3}, b)}},
                 {"Y"});
  CHECK(out.at("Y").dtype == DType::bfloat16);
  check_close(out.at("Y"), group_norm_ref(x, 2, 3, 3, s, b, kEps));
}
