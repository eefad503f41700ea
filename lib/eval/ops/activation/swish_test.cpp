// Swish-24, SwiGLU-28 and Celu-28 against float64 values computed apart
// (numpy: x / (1 + exp(-alpha x)), max(0, x) + min(0, alpha (exp(x / alpha) - 1))).
#include <catch2/catch.hpp>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;
using V = std::vector<double>;

const V kX = {-3, -0.5, 0, 1, 2.5};
const V kSwish1 = {-0.14227761953270035, -0.1887703343990727, 0, 0.7310585786300049, 2.3103545499468914};
const V kSwishHalf = {-0.5472765714190689, -0.21891174955710097, 0, 0.6224593312018546, 1.9432496529367278};

bnorm::test::Attrs alpha(float a) {
  return [a](onnx::NodeProto& n) { set_attr(n, "alpha", a); };
}

}  // namespace

TEST_CASE("Swish-24 is x * sigmoid(alpha * x) in every float type, alpha 1 by default", "[eval][activation]") {
  const Tensor d = run_node1(24, "Swish", {f64({5}, kX)});
  CHECK(d.dtype == DType::float64);
  check_close(d.to_f64(), kSwish1, 0, 1e-15);
  check_close(run_node1(24, "Swish", {f64({5}, kX)}, alpha(0.5f)).to_f64(), kSwishHalf, 0, 1e-15);
  const Tensor f = run_node1(24, "Swish", {f32({5}, kX)}, alpha(0.5f));
  CHECK(f.dtype == DType::float32);
  CHECK(f.dims == std::vector<int64_t>{5});
  check_close(f.to_f64(), kSwishHalf, 0, 5e-7);
  for (DType t : {DType::float16, DType::bfloat16}) {
    const Tensor h = run_node1(28, "Swish", {tensor_of(t, {5}, kX)});  // opset 28 still runs Swish-24
    CHECK(h.dtype == t);
    check_close(h.to_f64(), kSwish1, 0, t == DType::float16 ? 1e-3 : 8e-3);
  }
}

TEST_CASE("Swish does not exist before opset 24 and takes no integers", "[eval][activation]") {
  REQUIRE_THROWS_AS(run_node1(23, "Swish", {f32({5}, kX)}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(24, "Swish", {i64({2}, {1, 2})}), bnorm::Error);
}

TEST_CASE("SwiGLU-28 is Swish_alpha(A) * B, with equal shapes only", "[eval][activation]") {
  const V a = {1.0, -2.0, 3.0, 4.0, -1.0, 2.0, -3.0, 0.5};
  const V b = {0.5, 1.0, -1.0, 2.0, 2.0, -1.0, 0.5, 1.0};
  const V half = {0.3112296656009273, -0.5378828427399902, -2.452723428580931,  7.04637662382306,
                  -0.7550813375962908, -1.4621171572600098, -0.27363828570953447, 0.28108825044289903};
  const V one = {0.36552928931500245, -0.2384058440442351, -2.8577223804672998, 7.856110320303268,
                 -0.5378828427399902, -1.761594155955765, -0.07113880976635018, 0.3112296656009273};
  check_close(run_node1(28, "SwiGLU", {f64({2, 4}, a), f64({2, 4}, b)}, alpha(0.5f)).to_f64(), half, 0, 1e-15);
  check_close(run_node1(28, "SwiGLU", {f64({2, 4}, a), f64({2, 4}, b)}).to_f64(), one, 0, 1e-15);
  const Tensor f = run_node1(28, "SwiGLU", {f32({2, 4}, a), f32({2, 4}, b)}, alpha(0.5f));
  CHECK(f.dims == std::vector<int64_t>{2, 4});
  check_close(f.to_f64(), half, 0, 5e-7);
  const Tensor h = run_node1(28, "SwiGLU", {tensor_of(DType::float16, {2, 4}, a), tensor_of(DType::float16, {2, 4}, b)});
  CHECK(h.dtype == DType::float16);
  check_close(h.to_f64(), one, 0, 1e-3);
  // No broadcasting, one type, floats only, and no SwiGLU before 28.
  REQUIRE_THROWS_AS(run_node1(28, "SwiGLU", {f32({2, 4}, a), f32({4}, {1, 2, 3, 4})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(28, "SwiGLU", {f32({2, 4}, a), f64({2, 4}, b)}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(28, "SwiGLU", {i64({2}, {1, 2}), i64({2}, {1, 2})}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(27, "SwiGLU", {f32({2, 4}, a), f32({2, 4}, b)}), bnorm::Error);
}

TEST_CASE("Celu-28 runs float16, bfloat16 and double as Celu-12 runs float", "[eval][activation]") {
  const V x = {-2, -0.25, 0, 1.5};
  const V want = {-0.4908421805556329, -0.1967346701436833, 0, 1.5};  // alpha 0.5
  check_close(run_node1(28, "Celu", {f64({4}, x)}, alpha(0.5f)).to_f64(), want, 0, 1e-15);
  check_close(run_node1(12, "Celu", {f32({4}, x)}, alpha(0.5f)).to_f64(), want, 0, 5e-7);
  const Tensor h = run_node1(28, "Celu", {tensor_of(DType::float16, {4}, x)}, alpha(0.5f));
  CHECK(h.dtype == DType::float16);
  check_close(h.to_f64(), want, 0, 1e-3);
  const Tensor b = run_node1(28, "Celu", {tensor_of(DType::bfloat16, {4}, x)}, alpha(0.5f));
  CHECK(b.dtype == DType::bfloat16);
  check_close(b.to_f64(), want, 0, 8e-3);
}
