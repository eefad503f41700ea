// TensorScatter-24 against cache contents written out by hand from the
// Changelog's pseudocode (and its linear example).
#include <catch2/catch.hpp>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;

// past [2, 3, 2]: batch 0 is 0..5, batch 1 6..11; update [2, 2, 2]: 100..107.
Tensor past(DType t = DType::float32) { return iota(t, {2, 3, 2}, 0); }
Tensor update(DType t = DType::float32) { return iota(t, {2, 2, 2}, 100); }

Tensor scatter(const std::vector<Tensor>& in, const std::string& mode = "", int64_t axis = -2) {
  return run_node1(24, "TensorScatter", in, [&](onnx::NodeProto& n) {
    if (!mode.empty()) set_string(n, "mode", mode);
    if (axis != -2) set_attr(n, "axis", axis);
  });
}

}  // namespace

TEST_CASE("TensorScatter-24 writes each batch entry's update at its write index along the axis",
          "[eval][indexing]") {
  const Tensor lin = scatter({past(), update(), i64({2}, {1, 0})});
  CHECK(lin.dims == std::vector<int64_t>{2, 3, 2});
  CHECK(lin.to_f64() == V{0, 1, 100, 101, 102, 103, 104, 105, 106, 107, 10, 11});
  // write_indices absent: zeros.
  CHECK(scatter({past(), update()}).to_f64() == V{100, 101, 102, 103, 4, 5, 104, 105, 106, 107, 10, 11});
  // Circular: positions modulo 3, a negative index as numpy's mod (-1 -> 2).
  CHECK(scatter({past(), update(), i64({2}, {2, -1})}, "circular").to_f64() ==
        V{102, 103, 2, 3, 100, 101, 106, 107, 8, 9, 104, 105});
  // The last axis: every (batch, row) prefix writes one element.
  const Tensor last = scatter({past(), iota(DType::float32, {2, 3, 1}, 100), i64({2}, {1, 0})}, "linear", 2);
  CHECK(last.to_f64() == V{0, 100, 2, 101, 4, 102, 103, 7, 104, 9, 105, 11});
  // Any type: elements are copied as they are.
  const Tensor ints = scatter({past(DType::int32), update(DType::int32), i64({2}, {1, 0})});
  CHECK(ints.dtype == DType::int32);
  CHECK(ints.to_f64() == V{0, 1, 100, 101, 102, 103, 104, 105, 106, 107, 10, 11});
}

TEST_CASE("TensorScatter-24 refuses writes past the cache in linear mode, the batch axis and misfit shapes",
          "[eval][indexing]") {
  REQUIRE_THROWS_AS(scatter({past(), update(), i64({2}, {2, 0})}), bnorm::Error);   // 2 + 2 > 3
  REQUIRE_THROWS_AS(scatter({past(), update(), i64({2}, {-1, 0})}), bnorm::Error);  // negative, linear
  REQUIRE_THROWS_AS(scatter({past(), update(), i64({1}, {0})}), bnorm::Error);      // one index per batch entry
  REQUIRE_THROWS_AS(scatter({past(), update()}, "linear", 0), bnorm::Error);
  REQUIRE_THROWS_AS(scatter({past(), iota(DType::float32, {2, 4, 2}, 0)}), bnorm::Error);  // longer than the cache
  REQUIRE_THROWS_AS(scatter({past(), iota(DType::float32, {2, 2, 3}, 0)}), bnorm::Error);  // other inner dims
  REQUIRE_THROWS_AS(scatter({past(), update(DType::float64)}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(23, "TensorScatter", {past(), update()}), bnorm::Error);
}

TEST_CASE("TensorScatter-24 writes in place into a past_cache that dies at the node, with the same result",
          "[eval][indexing]") {
  // past_cache computed by a Neg (so the executor may hand it to TensorScatter to write in place).
  GraphBuilder b(24);
  b.initializer("p", iota(DType::float32, {2, 3, 2}, -11));  // -(p) is 11..0
  b.initializer("u", update());
  b.initializer("w", i64({2}, {1, 0}));
  b.node("Neg", {"p"}, {"past"});
  b.node("TensorScatter", {"past", "u", "w"}, {"y"});
  b.output("y");
  const auto r = bnorm::evaluate(b.model(), {});
  CHECK(r.at("y").to_f64() == V{11, 10, 100, 101, 102, 103, 104, 105, 106, 107, 1, 0});
}
