// BatchNormalization and InstanceNormalization against a float64 reference
// written here from the ONNX spec (not from the code under test), at every
// version, in inference and training forms, ranks 1 to 6 and mixed types.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;

struct BnData {
  std::vector<int64_t> dims;
  std::vector<double> x, scale, bias, mean, var;
  // ONNX attributes are float: the defaults are the float values.
  double eps = double{1e-5f}, momentum = double{0.9f};
};

struct BnRef {
  std::vector<double> y, running_mean, running_var, batch_mean, batch_var;
};

// The spec: parameter p is the channel (spatial) or the position within one
// batch item (legacy spatial = 0); training uses the batch's mean and
// population variance over every element sharing p.
BnRef reference_bn(const BnData& d, bool training, bool spatial) {
  const size_t n = static_cast<size_t>(d.dims[0]), item = d.x.size() / n;
  const size_t c = d.dims.size() > 1 ? static_cast<size_t>(d.dims[1]) : 1, s = item / c;
  const size_t params = spatial ? c : item;
  auto param = [&](size_t i) { return spatial ? (i % item) / s : i % item; };
  BnRef r;
  r.batch_mean.assign(params, 0.0);
  r.batch_var.assign(params, 0.0);
  std::vector<double> count(params, 0.0);
  for (size_t i = 0; i < d.x.size(); ++i) {
    r.batch_mean[param(i)] += d.x[i];
    count[param(i)] += 1;
  }
  for (size_t p = 0; p < params; ++p) r.batch_mean[p] /= count[p];
  for (size_t i = 0; i < d.x.size(); ++i) r.batch_var[param(i)] += std::pow(d.x[i] - r.batch_mean[param(i)], 2);
  for (size_t p = 0; p < params; ++p) r.batch_var[p] /= count[p];
  const auto& m = training ? r.batch_mean : d.mean;
  const auto& v = training ? r.batch_var : d.var;
  for (size_t i = 0; i < d.x.size(); ++i) {
    const size_t p = param(i);
    r.y.push_back((d.x[i] - m[p]) / std::sqrt(v[p] + d.eps) * d.scale[p] + d.bias[p]);
  }
  for (size_t p = 0; p < params; ++p) {
    r.running_mean.push_back(d.mean[p] * d.momentum + r.batch_mean[p] * (1 - d.momentum));
    r.running_var.push_back(d.var[p] * d.momentum + r.batch_var[p] * (1 - d.momentum));
  }
  return r;
}

std::vector<double> uniform(size_t n, double lo, double hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& e : v) e = dist(gen);
  return v;
}

struct Types {
  DType x = DType::float32, scale = DType::float32, stats = DType::float32;
};

// Random data already rounded to the storage types, as tensors and as doubles.
struct BnCase {
  BnData d;
  Tensor x, scale, bias, mean, var;
};

BnCase make_case(const std::vector<int64_t>& dims, const std::vector<int64_t>& param_dims, Types t, unsigned seed) {
  BnCase k;
  k.d.dims = dims;
  const auto np = static_cast<size_t>(bnorm::checked_numel(param_dims));
  k.x = Tensor::from_f64(t.x, dims, uniform(static_cast<size_t>(bnorm::checked_numel(dims)), -3, 3, seed));
  k.scale = Tensor::from_f64(t.scale, param_dims, uniform(np, 0.5, 2, seed + 1));
  k.bias = Tensor::from_f64(t.scale, param_dims, uniform(np, -1, 1, seed + 2));
  k.mean = Tensor::from_f64(t.stats, param_dims, uniform(np, -0.5, 0.5, seed + 3));
  k.var = Tensor::from_f64(t.stats, param_dims, uniform(np, 0.25, 2, seed + 4));
  k.d.x = k.x.to_f64();
  k.d.scale = k.scale.to_f64();
  k.d.bias = k.bias.to_f64();
  k.d.mean = k.mean.to_f64();
  k.d.var = k.var.to_f64();
  return k;
}

// A one-node BatchNormalization model at opset `version` with `outputs`.
bnorm::test::GraphBuilder bn_model(int version, const BnCase& k, const std::vector<std::string>& outputs) {
  bnorm::test::GraphBuilder b(version);
  b.input("X", k.x.dtype, k.x.dims);
  b.initializer("scale", k.scale);
  b.initializer("B", k.bias);
  b.initializer("mean", k.mean);
  b.initializer("var", k.var);
  b.node("BatchNormalization", {"X", "scale", "B", "mean", "var"}, outputs, "bn");
  for (const auto& o : outputs) b.output(o);
  return b;
}

void check_close(const Tensor& actual, DType t, const std::vector<int64_t>& dims, const std::vector<double>& expected,
                 double tol) {
  REQUIRE(actual.dtype == t);
  REQUIRE(actual.dims == dims);
  const auto a = actual.to_f64();
  REQUIRE(a.size() == expected.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i);
    CHECK(std::fabs(a[i] - expected[i]) <= tol * (1 + std::fabs(expected[i])));
  }
}

double tolerance(DType t) {
  return t == DType::float64 ? 1e-12 : t == DType::float32 ? 1e-5 : t == DType::float16 ? 2e-3 : 1.6e-2;
}

std::vector<int64_t> dims_of_rank(int rank) {
  const std::vector<int64_t> all{3, 4, 2, 3, 2, 2};
  return {all.begin(), all.begin() + rank};
}

std::vector<int64_t> channel_dims(const std::vector<int64_t>& dims) { return {dims.size() > 1 ? dims[1] : 1}; }

}  // namespace

TEST_CASE("BatchNormalization inference matches the float64 reference at every version and rank 1 to 6",
          "[eval][norm]") {
  const int version = GENERATE(1, 6, 7, 9, 14, 15);
  const int rank = GENERATE(1, 2, 3, 4, 5, 6);
  const DType t = GENERATE(DType::float32, DType::float64);
  INFO(fmt::format("BatchNormalization-{}, rank {}, {}", version, rank, bnorm::dtype_name(t)));
  const auto dims = dims_of_rank(rank);
  const BnCase k = make_case(dims, channel_dims(dims), {t, t, t}, 10u + rank);
  auto b = bn_model(version, k, {"Y"});
  if (version < 7) bnorm::test::set_attr(b.graph().mutable_node(0)[0], "is_test", int64_t{1});
  const auto out = bnorm::evaluate(b.model(), {{"X", k.x}});
  check_close(out.at("Y"), t, dims, reference_bn(k.d, false, true).y, tolerance(t));
}

TEST_CASE("legacy spatial = 0 uses one parameter per position of a batch item", "[eval][norm]") {
  const int version = GENERATE(1, 6, 7);
  const int rank = GENERATE(2, 3, 4);
  const bool training = GENERATE(false, true);
  INFO(fmt::format("BatchNormalization-{}, rank {}, training {}", version, rank, training));
  const auto dims = dims_of_rank(rank);
  const std::vector<int64_t> item(dims.begin() + 1, dims.end());
  const BnCase k = make_case(dims, item, {DType::float64, DType::float64, DType::float64}, 40u + rank);
  const std::vector<std::string> outs =
      training ? std::vector<std::string>{"Y", "rm", "rv", "sm", "sv"} : std::vector<std::string>{"Y"};
  auto b = bn_model(version, k, outs);
  auto& node = b.graph().mutable_node(0)[0];
  bnorm::test::set_attr(node, "spatial", int64_t{0});
  if (version < 7) bnorm::test::set_attr(node, "is_test", int64_t{training ? 0 : 1});
  const auto out = bnorm::evaluate(b.model(), {{"X", k.x}});
  const BnRef r = reference_bn(k.d, training, false);
  check_close(out.at("Y"), DType::float64, dims, r.y, 1e-12);
  if (training) {
    check_close(out.at("rm"), DType::float64, item, r.running_mean, 1e-12);
    check_close(out.at("sv"), DType::float64, item, r.batch_var, 1e-12);
  }
}

TEST_CASE("training mode at 14 and 15 gives Y from batch statistics and the running statistics",
          "[eval][norm]") {
  const int version = GENERATE(14, 15);
  const int rank = GENERATE(1, 2, 4, 6);
  const DType t = GENERATE(DType::float32, DType::float64);
  INFO(fmt::format("BatchNormalization-{}, rank {}, {}", version, rank, bnorm::dtype_name(t)));
  const auto dims = dims_of_rank(rank);
  BnCase k = make_case(dims, channel_dims(dims), {t, t, t}, 70u + rank);
  k.d.momentum = 0.75;
  auto b = bn_model(version, k, {"Y", "running_mean", "running_var"});
  auto& node = b.graph().mutable_node(0)[0];
  bnorm::test::set_attr(node, "training_mode", int64_t{1});
  bnorm::test::set_attr(node, "momentum", 0.75f);
  const auto out = bnorm::evaluate(b.model(), {{"X", k.x}});
  const BnRef r = reference_bn(k.d, true, true);
  check_close(out.at("Y"), t, dims, r.y, tolerance(t));
  check_close(out.at("running_mean"), t, channel_dims(dims), r.running_mean, tolerance(t));
  check_close(out.at("running_var"), t, channel_dims(dims), r.running_var, tolerance(t));
}

TEST_CASE("the legacy training form gives Y, running mean and var, batch mean and batch variance",
          "[eval][norm]") {
  const int version = GENERATE(1, 6, 7, 9);
  const DType t = GENERATE(DType::float32, DType::float64);
  INFO(fmt::format("BatchNormalization-{}, {}", version, bnorm::dtype_name(t)));
  const std::vector<int64_t> dims{4, 3, 5};
  const BnCase k = make_case(dims, {3}, {t, t, t}, 99);
  auto b = bn_model(version, k, {"Y", "running_mean", "running_var", "saved_mean", "saved_var"});
  if (version < 7) bnorm::test::set_attr(b.graph().mutable_node(0)[0], "is_test", int64_t{0});
  const auto out = bnorm::evaluate(b.model(), {{"X", k.x}});
  const BnRef r = reference_bn(k.d, true, true);
  check_close(out.at("Y"), t, dims, r.y, tolerance(t));
  check_close(out.at("running_mean"), t, {3}, r.running_mean, tolerance(t));
  check_close(out.at("running_var"), t, {3}, r.running_var, tolerance(t));
  check_close(out.at("saved_mean"), t, {3}, r.batch_mean, tolerance(t));
  check_close(out.at("saved_var"), t, {3}, r.batch_var, tolerance(t));
}

TEST_CASE("is_test absent at version 6 means training: Y uses the batch statistics", "[eval][norm]") {
  const std::vector<int64_t> dims{2, 3, 4};
  const BnCase k = make_case(dims, {3}, {DType::float64, DType::float64, DType::float64}, 5);
  auto b = bn_model(6, k, {"Y"});
  const auto out = bnorm::evaluate(b.model(), {{"X", k.x}});
  check_close(out.at("Y"), DType::float64, dims, reference_bn(k.d, true, true).y, 1e-12);
}

TEST_CASE("version 15 takes X, scale/B and mean/var of independent types", "[eval][norm]") {
  const auto types = GENERATE(Types{DType::float16, DType::bfloat16, DType::float32},
                              Types{DType::bfloat16, DType::float16, DType::float64},
                              Types{DType::float32, DType::float16, DType::bfloat16},
                              Types{DType::float64, DType::float32, DType::float16},
                              Types{DType::float16, DType::float16, DType::float16});
  const bool training = GENERATE(false, true);
  INFO(fmt::format("X {}, scale {}, mean {}, training {}", bnorm::dtype_name(types.x),
                   bnorm::dtype_name(types.scale), bnorm::dtype_name(types.stats), training));
  const std::vector<int64_t> dims{2, 3, 4, 2};
  const BnCase k = make_case(dims, {3}, types, 123);
  auto b = bn_model(15, k, training ? std::vector<std::string>{"Y", "rm", "rv"} : std::vector<std::string>{"Y"});
  if (training) bnorm::test::set_attr(b.graph().mutable_node(0)[0], "training_mode", int64_t{1});
  const auto out = bnorm::evaluate(b.model(), {{"X", k.x}});
  const BnRef r = reference_bn(k.d, training, true);
  check_close(out.at("Y"), types.x, dims, r.y, tolerance(types.x));
  if (training) {
    // The running statistics have T2's type and are rounded once to it.
    // Batch statistics of float16/bfloat16/float data are float values.
    const double tol = std::max(tolerance(types.stats), types.x == DType::float64 ? 0.0 : 1e-6);
    check_close(out.at("rm"), types.stats, {3}, r.running_mean, tol);
    check_close(out.at("rv"), types.stats, {3}, r.running_var, tol);
  }
}

TEST_CASE("InstanceNormalization normalizes each instance and channel at versions 1 and 6", "[eval][norm]") {
  const int version = GENERATE(1, 6);
  const DType t = GENERATE(DType::float32, DType::float64, DType::float16);
  const std::vector<int64_t> dims{2, 3, 4, 5};
  const BnCase k = make_case(dims, {3}, {t, t, t}, 7);
  bnorm::test::GraphBuilder b(version);
  b.input("X", t, dims);
  b.initializer("scale", k.scale);
  b.initializer("B", k.bias);
  b.node("InstanceNormalization", {"X", "scale", "B"}, {"Y"}, "in");
  b.output("Y");
  const auto out = bnorm::evaluate(b.model(), {{"X", k.x}});
  // Each (n, c) is its own batch of one item with one channel.
  std::vector<double> y;
  for (size_t nc = 0; nc < 6; ++nc) {
    BnData one;
    one.dims = {1, 1, 20};
    one.x.assign(k.d.x.begin() + nc * 20, k.d.x.begin() + (nc + 1) * 20);
    one.scale = {k.d.scale[nc % 3]};
    one.bias = {k.d.bias[nc % 3]};
    one.mean = one.var = {0};
    const auto part = reference_bn(one, true, true).y;
    y.insert(y.end(), part.begin(), part.end());
  }
  check_close(out.at("Y"), t, dims, y, tolerance(t));
}

TEST_CASE("a parameter of the wrong shape is an error naming the node and the input", "[eval][norm]") {
  const std::vector<int64_t> dims{2, 3, 4};
  const BnCase k = make_case(dims, {4}, {DType::float32, DType::float32, DType::float32}, 1);
  BnCase bad = make_case(dims, {3}, {DType::float32, DType::float32, DType::float32}, 1);
  bad.scale = k.scale;
  auto b = bn_model(9, bad, {"Y"});
  try {
    bnorm::evaluate(b.model(), {{"X", bad.x}});
    FAIL("no error");
  } catch (const bnorm::Error& e) {
    CHECK(e.kind() == bnorm::ErrorKind::input);
    CHECK(e.node() == "bn");
    CHECK(e.bare_message() == "input 'scale' has shape [4], expected [3]");
  }
}

// Found by fuzz_eval (tests/fuzz_regressions/eval/): the node's output list
// sized the results, and Y went to index 0 of an empty one.
TEST_CASE("a BatchNormalization that names no output runs without writing past its results") {
  bnorm::test::GraphBuilder b(15);
  b.input("X", bnorm::DType::float32, {1, 2, 2});
  for (const char* p : {"s", "b", "m", "v"}) b.initializer(p, bnorm::Tensor::from_f64(bnorm::DType::float32, {2}, {1, 1}));
  b.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {}, "bn");
  CHECK(bnorm::evaluate(b.model(), {{"X", bnorm::Tensor(bnorm::DType::float32, {1, 2, 2})}}).empty());
}

TEST_CASE("bfloat16 is refused where the schema has none: BatchNormalization before 14, InstanceNormalization before 22",
          "[eval][norm][regression]") {
  using bnorm::DType;
  const std::vector<int64_t> dims{1, 2, 3};
  for (const auto& [op, version, ok] : std::vector<std::tuple<std::string, int, bool>>{
           {"BatchNormalization", 9, false}, {"BatchNormalization", 14, true},
           {"InstanceNormalization", 6, false}, {"InstanceNormalization", 22, true}}) {
    INFO(op << "-" << version);
    const bool bn = op == "BatchNormalization";
    const BnCase k = make_case(dims, {2}, {DType::bfloat16, DType::bfloat16, DType::bfloat16}, 3);
    bnorm::test::GraphBuilder b(version);
    b.input("X", DType::bfloat16, dims);
    b.initializer("scale", k.scale);
    b.initializer("B", k.bias);
    std::vector<std::string> in{"X", "scale", "B"};
    if (bn) {
      b.initializer("mean", k.mean);
      b.initializer("var", k.var);
      in.push_back("mean");
      in.push_back("var");
    }
    b.node(op, in, {"Y"}, "norm");
    b.output("Y");
    if (ok) {
      CHECK_NOTHROW(bnorm::evaluate(b.model(), {{"X", k.x}}));
    } else {
      CHECK_THROWS_WITH(bnorm::evaluate(b.model(), {{"X", k.x}}), Catch::Contains("bfloat16"));
    }
  }
}
