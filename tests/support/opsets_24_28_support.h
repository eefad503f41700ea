// What the opsets 24..28 upgrade tests share (upgrade_opsets_24_28_test.cpp,
// upgrade_opsets_24_28_models_test.cpp): inputs spread over the interesting
// range, bit-for-bit comparison of two models' evaluations, and a model taken
// down through opsets and back up, each result checked.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>

#include "support/lower_support.h"
#include "support/test_graph.h"
#include "support/upgrade_support.h"

namespace bnorm::test {

// Values from -20 to 20 (sigmoid saturated at both ends), 0 and small ones.
inline std::vector<double> spread(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(-20.0 + 40.0 * static_cast<double>(i) / static_cast<double>(n - 1) + (i % 3) * 0.013);
  v[1] = 0.0;
  v[2] = -1e-3;
  v[3] = 1.0;
  return v;
}

inline std::map<std::string, Tensor> evaluated(const Model& m, const std::map<std::string, Tensor>& inputs) {
  return evaluate(m, inputs, EvalOptions{});
}

// `after` gives, on `inputs`, the bits `before` gives.
inline void expect_same_bits(const Model& before, const Model& after, const std::map<std::string, Tensor>& inputs) {
  const auto a = evaluated(before, inputs);
  const auto b = evaluated(after, inputs);
  REQUIRE(!a.empty());
  for (const auto& [name, t] : a) {
    INFO("output " << name);
    REQUIRE(b.count(name));
    CHECK(b.at(name).dtype == t.dtype);
    CHECK(b.at(name).dims == t.dims);
    CHECK(b.at(name).bytes == t.bytes);
  }
}

// `after`'s output `name` on `inputs` within the model comparison's
// tolerance of `before`'s (a lowering that rounds after each node).
inline void expect_close_output(const Model& before, const Model& after, const std::map<std::string, Tensor>& inputs,
                                const std::string& name) {
  const auto want = evaluated(before, inputs);
  const auto got = evaluated(after, inputs);
  REQUIRE(got.count(name));
  const Diff d = compare(want.at(name), got.at(name), model_compare_tolerance(want.at(name).dtype));
  INFO("output " << name << ": " << d.problem << " max abs " << d.max_abs);
  CHECK(d.pass);
}

inline Model unary(int64_t opset, const std::string& op, DType t, const std::vector<int64_t>& dims) {
  Model m = net(opset);
  input(m, "x", t, dims);
  node(m, op, {"x"}, {"y"}, "n");
  add_output(g(m), "y", t, dims);
  return m;
}

inline std::map<std::string, Tensor> spread_inputs(const Model& m, DType t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::map<std::string, Tensor> in;
  for (const auto& i : m.proto.graph().input()) {
    Tensor x = Tensor::from_f64(t, dims, spread(n));
    if (i.name() != "x") {  // a second input: other values, same range
      std::vector<double> v = spread(n);
      std::reverse(v.begin(), v.end());
      x = Tensor::from_f64(t, dims, v);
    }
    x.name = i.name();
    in[i.name()] = x;
  }
  return in;
}

// `m` down to each opset of `down` (each result checked and its bits
// compared with `m`'s), then the lowest back up to `m`'s opset.
inline void down_and_back(const Model& m, std::initializer_list<int64_t> down, const std::map<std::string, Tensor>& in) {
  const int64_t from = default_opset(m.proto);
  Model low = m;
  for (int64_t to : down) {
    INFO("down to opset " << to);
    low = converted(m, to);
    CHECK(default_opset(low.proto) == to);
    expect_same_bits(m, low, in);
  }
  INFO("back up to opset " << from);
  const Model up = converted(low, from);
  CHECK(default_opset(up.proto) == from);
  expect_same_bits(m, up, in);
}

inline const DType kFloats[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16};

}  // namespace bnorm::test
