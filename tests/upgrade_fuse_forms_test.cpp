// upgrade --fuse-norms on the other forms exporters write (lib/transforms/fuse/):
// a value computed twice by identical nodes (tf2onnx's two Sub(x, mean)),
// the inverse standard deviation as Div(1, Sqrt) or Reciprocal(Sqrt) times
// x, the square as Pow with an exponent 2 of any numeric type, epsilon and
// the scale as either operand, the scale applied to the inverse standard
// deviation. Each fused model has the same outputs through the evaluator;
// the near misses (epsilon after the Sqrt, another exponent, a Sub that
// differs) are left and reported with their reason.
#include <catch2/catch.hpp>

#include "support/cli.h"
#include "support/fuse_support.h"

namespace bnorm::test {
namespace {

// A decomposition written node by node at opset 15: x [2, 3, 8] (or `dims`) float;
// constants eps 1e-5, two, one, gamma [8], beta [8]; each node "/n/<output>",
// each ReduceMean over axis -1.
struct Chain {
  GraphBuilder b{15};
  std::vector<int64_t> dims;
  explicit Chain(std::vector<int64_t> x_dims = {2, 3, 8}) : dims(std::move(x_dims)) {
    b.input("x", DType::float32, dims);
    b.initializer("eps", f32({}, {1e-5}));
    b.initializer("two", f32({}, {2.0}));
    b.initializer("one", f32({}, {1.0}));
    b.initializer("gamma", random_tensor(DType::float32, {8}, 3));
    b.initializer("beta", random_tensor(DType::float32, {8}, 4));
  }
  Chain& op(const std::string& op, const std::vector<std::string>& in, const std::string& out) {
    onnx::NodeProto& n = b.node(op, in, {out}, "/n/" + out);
    if (op == "ReduceMean") set_ints(n, "axes", {-1});
    return *this;
  }
  // mean, d = x - mean, sq = Pow(d, 2), var, ve = var + eps, sd = Sqrt(ve)
  Chain& variance() {
    return op("ReduceMean", {"x"}, "mean")
        .op("Sub", {"x", "mean"}, "d")
        .op("Pow", {"d", "two"}, "sq")
        .op("ReduceMean", {"sq"}, "var")
        .op("Add", {"var", "eps"}, "ve")
        .op("Sqrt", {"ve"}, "sd");
  }
  // sq = Pow(x, 2), ms, mse = ms + eps, sd = Sqrt(mse)
  Chain& mean_square() {
    return op("Pow", {"x", "two"}, "sq").op("ReduceMean", {"sq"}, "ms").op("Add", {"ms", "eps"}, "mse").op("Sqrt", {"mse"}, "sd");
  }
  // inv = Div(one, sd) | Reciprocal(sd)
  Chain& inverse(bool div) { return div ? op("Div", {"one", "sd"}, "inv") : op("Reciprocal", {"sd"}, "inv"); }
  // y = Relu(v), the graph's output
  Model model(const std::string& v) {
    b.node("Relu", {v}, {"y"}, "relu");
    add_output(b.graph(), "y", DType::float32, dims);
    return with_ir(b.model(), 8);
  }
};

struct Fused {
  Model model;
  std::string what;  // the report's text
};

// `in` fused at `to` into one `op`, the rest being the Relu, with the same outputs.
Fused expect_fused(const Model& in, int64_t to, const std::string& op) {
  UpgradeReport r;
  Model out = fused(in, to, &r);
  for (const auto& m : r.not_fused) INFO(m.label << ": " << m.why);
  CHECK(r.not_fused.empty());
  CHECK(count_op(out, op) == 1);
  CHECK(count_op(out, "ReduceMean") == 0);
  CHECK(out.proto.graph().node_size() == 2);
  expect_same_outputs(in, out);
  return {std::move(out), fused_what(r)};
}

// `in` fused at 23 into RMSNormalization (`rms`) or LayerNormalization, with gamma as its Scale (and beta as B).
Fused expect_fused_with_gamma(const Model& in, bool rms) {
  const std::string op = rms ? "RMSNormalization" : "LayerNormalization";
  Fused f = expect_fused(in, 23, op);
  REQUIRE(count_op(f.model, op) == 1);
  const auto& n = first_node(f.model, op);
  CHECK(n.input(1) == "gamma");
  CHECK(n.input_size() == (rms ? 2 : 3));
  if (!rms) CHECK(n.input(2) == "beta");
  return f;
}

// `in` left as it is at `to` (its `reduce_means` ReduceMeans and its Sqrt stay); same outputs; why `op` was not fused.
std::string expect_left(const Model& in, int64_t to, const std::string& op, int reduce_means) {
  UpgradeReport r;
  const Model out = fused(in, to, &r);
  CHECK(count_op(out, op) == 0);
  CHECK(count_op(out, "ReduceMean") == reduce_means);
  CHECK(count_op(out, "Sqrt") == 1);
  CHECK(r.not_fused.size() == 1);
  expect_same_outputs(in, out);
  return why_not(r, op);
}

}  // namespace

TEST_CASE("upgrade --fuse-norms: two identical Sub(x, mean) nodes, one squared and one divided (tf2onnx), are one value",
          "[upgrade][fuse]") {
  const bool first_squared = GENERATE(true, false);
  INFO("the first Sub squared " << first_squared);
  Chain c;
  c.op("ReduceMean", {"x"}, "mean").op("Sub", {"x", "mean"}, "d").op("Sub", {"x", "mean"}, "d2");
  c.op("Pow", {first_squared ? "d" : "d2", "two"}, "sq").op("ReduceMean", {"sq"}, "var");
  c.op("Add", {"var", "eps"}, "ve").op("Sqrt", {"ve"}, "sd").op("Div", {first_squared ? "d2" : "d", "sd"}, "n");
  c.op("Mul", {"n", "gamma"}, "ns").op("Add", {"ns", "beta"}, "nb");
  const Model in = c.model("nb");
  const Fused f = expect_fused(in, 17, "LayerNormalization");
  CHECK(f.what == "fused ReduceMean, Sub, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add into LayerNormalization (axis -1, "
                  "epsilon 1e-05)");
  REQUIRE(count_op(f.model, "LayerNormalization") == 1);
  const auto& ln = first_node(f.model, "LayerNormalization");
  CHECK(std::vector<std::string>(ln.input().begin(), ln.input().end()) == std::vector<std::string>{"x", "gamma", "beta"});
}

TEST_CASE("upgrade --fuse-norms: ReduceMean(x) twice and Sub(x, mean) three times, squared as Mul of two copies, are one "
          "value each, at 18 with axes as two constants alike", "[upgrade][fuse]") {
  const int64_t to = GENERATE(17, 18);  // from 18 each ReduceMean reads its own axes constant: compared by value
  INFO("to " << to);
  Chain c;
  c.op("ReduceMean", {"x"}, "mean").op("ReduceMean", {"x"}, "mean2");
  c.op("Sub", {"x", "mean"}, "d").op("Sub", {"x", "mean2"}, "d2").op("Sub", {"x", "mean"}, "d3");
  c.op("Mul", {"d", "d3"}, "sq").op("ReduceMean", {"sq"}, "var").op("Add", {"var", "eps"}, "ve");
  c.op("Sqrt", {"ve"}, "sd").op("Div", {"d2", "sd"}, "n").op("Mul", {"n", "gamma"}, "ns");
  CHECK(expect_fused(c.model("ns"), to, "LayerNormalization").what ==
        "fused ReduceMean, ReduceMean, Sub, Sub, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul into LayerNormalization "
        "(axis -1, epsilon 1e-05)");
}

TEST_CASE("upgrade --fuse-norms: the inverse standard deviation as Div(1, Sqrt) or Reciprocal(Sqrt), times x - mean "
          "either way round, is LayerNormalization", "[upgrade][fuse]") {
  const bool div = GENERATE(true, false);
  const bool d_first = GENERATE(true, false);
  INFO("Div(1, S) " << div << " Mul(d, inv) " << d_first);
  Chain c;
  c.variance().inverse(div);
  c.op("Mul", {d_first ? "d" : "inv", d_first ? "inv" : "d"}, "n").op("Mul", {"n", "gamma"}, "ns");
  c.op("Add", {"ns", "beta"}, "nb");
  CHECK(expect_fused(c.model("nb"), 17, "LayerNormalization").what ==
        std::string("fused ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, ") + (div ? "Div" : "Reciprocal") +
            ", Mul, Mul, Add into LayerNormalization (axis -1, epsilon 1e-05)");
}

TEST_CASE("upgrade --fuse-norms: x * (1 / sqrt(mean(x^2) + eps)) * scale (a detector's RMS norm) is RMSNormalization",
          "[upgrade][fuse]") {
  const bool pow = GENERATE(true, false);
  const bool scale_first = GENERATE(true, false);
  INFO("Pow " << pow << " Mul(scale, n) " << scale_first);
  Chain c;
  if (pow) {
    c.op("Pow", {"x", "two"}, "sq");
  } else {
    c.op("Mul", {"x", "x"}, "sq");
  }
  c.op("ReduceMean", {"sq"}, "ms").op("Add", {"ms", "eps"}, "mse").op("Sqrt", {"mse"}, "sd");
  c.op("Div", {"one", "sd"}, "inv").op("Mul", {"x", "inv"}, "n");
  c.op("Mul", {scale_first ? "gamma" : "n", scale_first ? "n" : "gamma"}, "ns");
  const Model in = c.model("ns");
  const Fused f = expect_fused(in, 23, "RMSNormalization");
  CHECK(f.what == std::string("fused ") + (pow ? "Pow" : "Mul") +
                      ", ReduceMean, Add, Sqrt, Div, Mul, Mul into RMSNormalization (axis -1, epsilon 1e-05)");
  REQUIRE(count_op(f.model, "RMSNormalization") == 1);
  CHECK(first_node(f.model, "RMSNormalization").input(1) == "gamma");
}

TEST_CASE("upgrade --fuse-norms: Pow's exponent 2 of any numeric type squares", "[upgrade][fuse]") {
  const DType t = GENERATE(DType::float16, DType::float64, DType::int32, DType::int64);
  const bool rms = GENERATE(true, false);
  INFO("exponent type " << dtype_name(t) << " RMS " << rms);
  Chain c;
  c.b.initializer("two_t", tensor_of(t, {}, {2.0}));
  if (rms) {
    c.op("Pow", {"x", "two_t"}, "sq").op("ReduceMean", {"sq"}, "ms").op("Add", {"ms", "eps"}, "mse");
    c.op("Sqrt", {"mse"}, "sd").op("Div", {"x", "sd"}, "n");
  } else {
    c.op("ReduceMean", {"x"}, "mean").op("Sub", {"x", "mean"}, "d").op("Pow", {"d", "two_t"}, "sq");
    c.op("ReduceMean", {"sq"}, "var").op("Add", {"var", "eps"}, "ve").op("Sqrt", {"ve"}, "sd");
    c.op("Div", {"d", "sd"}, "n");
  }
  expect_fused(c.model("n"), 23, rms ? "RMSNormalization" : "LayerNormalization");
}

TEST_CASE("upgrade --fuse-norms: epsilon, Scale and B as either operand of their Add and Mul", "[upgrade][fuse]") {
  const bool rms = GENERATE(true, false);
  INFO("RMS " << rms);
  Chain c;
  if (rms) {
    c.op("Pow", {"x", "two"}, "sq").op("ReduceMean", {"sq"}, "var");
  } else {
    c.op("ReduceMean", {"x"}, "mean").op("Sub", {"x", "mean"}, "d").op("Pow", {"d", "two"}, "sq");
    c.op("ReduceMean", {"sq"}, "var");
  }
  c.op("Add", {"eps", "var"}, "ve").op("Sqrt", {"ve"}, "sd").op("Div", {rms ? "x" : "d", "sd"}, "n");
  c.op("Mul", {"gamma", "n"}, "ns");
  if (!rms) c.op("Add", {"beta", "ns"}, "nb");
  expect_fused_with_gamma(c.model(rms ? "ns" : "nb"), rms);
}

TEST_CASE("upgrade --fuse-norms: the scale applied to the inverse standard deviation, x * (inv * scale), is fused",
          "[upgrade][fuse]") {
  const bool rms = GENERATE(true, false);
  const bool div = GENERATE(true, false);
  const bool scale_first = GENERATE(true, false);
  const bool x_first = GENERATE(true, false);
  INFO("RMS " << rms << " Div(1, S) " << div << " Mul(scale, inv) " << scale_first << " Mul(x, t) " << x_first);
  Chain c;
  if (rms) {
    c.mean_square();
  } else {
    c.variance();
  }
  const std::string v = rms ? "x" : "d";
  c.inverse(div);
  c.op("Mul", {scale_first ? "gamma" : "inv", scale_first ? "inv" : "gamma"}, "t");
  c.op("Mul", {x_first ? v : "t", x_first ? "t" : v}, "n");
  if (!rms) c.op("Add", {"n", "beta"}, "nb");
  const Fused f = expect_fused_with_gamma(c.model(rms ? "n" : "nb"), rms);
  CHECK_THAT(f.what, Catch::Contains(std::string("Sqrt, ") + (div ? "Div" : "Reciprocal") + ", Mul, Mul" +
                                     (rms ? " into RMSNormalization" : ", Add into LayerNormalization")));
}

TEST_CASE("upgrade --fuse-norms: a group standardization with two identical Subs and Div(1, Sqrt) is GroupNormalization",
          "[upgrade][fuse]") {
  GraphBuilder b(15);
  const std::vector<int64_t> dims{2, 6, 4, 4};
  b.input("x", DType::float32, dims);
  b.initializer("gshape", i64({3}, {0, 3, -1}));
  b.initializer("eps", f32({}, {1e-5}));
  b.initializer("one", f32({}, {1.0}));
  b.initializer("gamma", f32({6, 1, 1}, {1.0, 2.0, 0.5, -1.0, 1.5, 0.25}));
  b.initializer("beta", f32({6, 1, 1}, {0.1, -0.2, 0.3, 0.3, -0.5, 0.6}));
  b.node("Reshape", {"x", "gshape"}, {"r"}, "/gn/r");
  set_ints(b.node("ReduceMean", {"r"}, {"mean"}, "/gn/mean"), "axes", {-1});
  b.node("Sub", {"r", "mean"}, {"d"}, "/gn/d");
  b.node("Sub", {"r", "mean"}, {"d2"}, "/gn/d2");
  b.node("Mul", {"d", "d2"}, {"sq"}, "/gn/sq");
  set_ints(b.node("ReduceMean", {"sq"}, {"var"}, "/gn/var"), "axes", {-1});
  b.node("Add", {"eps", "var"}, {"ve"}, "/gn/ve");
  b.node("Sqrt", {"ve"}, {"sd"}, "/gn/sd");
  b.node("Div", {"one", "sd"}, {"inv"}, "/gn/inv");
  b.node("Mul", {"inv", "d2"}, {"n"}, "/gn/n");
  b.node("Shape", {"x"}, {"xs"}, "/gn/xs");
  b.node("Reshape", {"n", "xs"}, {"back"}, "/gn/back");
  b.node("Mul", {"back", "gamma"}, {"scaled"}, "/gn/scaled");
  b.node("Add", {"scaled", "beta"}, {"y"}, "/gn/y");
  add_output(b.graph(), "y", DType::float32, dims);
  const Model in = with_ir(b.model(), 8);
  UpgradeReport r;
  const Model out = fused(in, 21, &r);
  CHECK(r.not_fused.empty());
  CHECK(count_op(out, "GroupNormalization") == 1);
  CHECK(out.proto.graph().node_size() == 1);
  CHECK(fused_what(r) == "fused Reshape, ReduceMean, Sub, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Reshape, Shape, Mul, "
                         "Add into GroupNormalization (num_groups 3, epsilon 1e-05, scale and bias per channel)");
  expect_same_outputs(in, out);
}

TEST_CASE("upgrade --fuse-norms leaves the near misses of these forms, and says why", "[upgrade][fuse]") {
  Chain c;
  std::string op = "LayerNormalization", why;
  int reduce_means = 2;
  SECTION("epsilon added after the Sqrt of the variance") {
    c.op("ReduceMean", {"x"}, "mean").op("Sub", {"x", "mean"}, "d").op("Pow", {"d", "two"}, "sq");
    c.op("ReduceMean", {"sq"}, "var").op("Sqrt", {"var"}, "sd").op("Add", {"sd", "eps"}, "se");
    c.op("Div", {"d", "se"}, "n");
    why = "epsilon is added after the Sqrt 'sd' ('se'): sqrt(v) + eps is not the normalization's sqrt(v + eps)";
  }
  SECTION("epsilon added after the Sqrt of the mean square") {
    c.op("Pow", {"x", "two"}, "sq").op("ReduceMean", {"sq"}, "ms").op("Sqrt", {"ms"}, "sd");
    c.op("Add", {"eps", "sd"}, "se").op("Div", {"x", "se"}, "n");
    op = "RMSNormalization";
    reduce_means = 1;
    why = "epsilon is added after the Sqrt 'sd' ('se'): sqrt(v) + eps is not the normalization's sqrt(v + eps)";
  }
  SECTION("no epsilon at all") {
    c.op("Pow", {"x", "two"}, "sq").op("ReduceMean", {"sq"}, "ms").op("Sqrt", {"ms"}, "sd").op("Div", {"x", "sd"}, "n");
    op = "RMSNormalization";
    reduce_means = 1;
    why = "the mean square 'ms' goes into the Sqrt with no epsilon added";
  }
  SECTION("x - mean raised to the power 3") {
    c.b.initializer("three", f32({}, {3.0}));
    c.op("ReduceMean", {"x"}, "mean").op("Sub", {"x", "mean"}, "d").op("Pow", {"d", "three"}, "sq");
    c.op("ReduceMean", {"sq"}, "var").op("Add", {"var", "eps"}, "ve").op("Sqrt", {"ve"}, "sd");
    c.op("Div", {"d", "sd"}, "n");
    why = "x - mean 'd' is raised to the power 3, not squared";
  }
  SECTION("x raised to the power 3 under the root") {
    c.b.initializer("three", tensor_of(DType::int64, {}, {3.0}));
    c.op("Pow", {"x", "three"}, "sq").op("ReduceMean", {"sq"}, "ms").op("Add", {"ms", "eps"}, "mse");
    c.op("Sqrt", {"mse"}, "sd").op("Div", {"x", "sd"}, "n");
    op = "RMSNormalization";
    reduce_means = 1;
    why = "'x' is raised to the power 3, not squared";
  }
  SECTION("a second Sub that differs (mean - x) divided") {
    c.variance().op("Sub", {"mean", "x"}, "e").op("Div", {"e", "sd"}, "n");
    why = "'e' is divided by the Sqrt 'sd', not 'd' or 1";
  }
  SECTION("2 / Sqrt") {
    c.variance().op("Div", {"two", "sd"}, "inv").op("Mul", {"d", "inv"}, "n");
    why = "'two' is divided by the Sqrt 'sd', not 'd' or 1";
  }
  SECTION("a copy of x - mean that is also a graph output") {
    c.variance().op("Sub", {"x", "mean"}, "d2").op("Div", {"d2", "sd"}, "n");
    add_output(c.b.graph(), "d2", DType::float32, {2, 3, 8});
    why = "x - mean 'd' has another reader";
  }
  SECTION("a copy of the last node (B's Add) read outside") {
    c.variance().op("Div", {"d", "sd"}, "q").op("Add", {"q", "beta"}, "n").op("Add", {"q", "beta"}, "n2");
    add_output(c.b.graph(), "n2", DType::float32, {2, 3, 8});
    why = "'n2' (made by Add '/n/n2') is read outside the decomposition";
  }
  SECTION("a scale of 1 / sqrt over another axis") {
    c.b.initializer("g31", random_tensor(DType::float32, {3, 1}, 5));
    c.variance().op("Reciprocal", {"sd"}, "inv").op("Mul", {"inv", "g31"}, "t").op("Mul", {"d", "t"}, "n");
    why = "the scale 'g31' applied to 1 / sqrt is not of the type of 'x' with a known shape spanning its last 1 axes "
          "only";
  }
  INFO(op);
  const Model in = c.model("n");
  CHECK(expect_left(in, 23, op, reduce_means) == why);
}

TEST_CASE("upgrade --fuse-norms leaves a chain whose Scale is a value of the chain itself (its own Mean)", "[upgrade][fuse]") {
  Chain c({8});  // rank 1: the Mean [1] spans the normalized axis as a Scale would
  c.variance().op("Div", {"d", "sd"}, "n").op("Mul", {"n", "mean"}, "nm");
  CHECK(expect_left(c.model("nm"), 17, "LayerNormalization", 2) ==
        "the fused node would read 'mean', which the decomposition makes");
}

TEST_CASE("upgrade --fuse-norms --verify passes on the tf2onnx LayerNormalization and the detector's RMS norm",
          "[cli][upgrade][fuse]") {
  TempDir tmp;
  Chain ln;
  ln.op("ReduceMean", {"x"}, "mean").op("Sub", {"x", "mean"}, "d").op("Sub", {"x", "mean"}, "d2");
  ln.op("Pow", {"d", "two"}, "sq").op("ReduceMean", {"sq"}, "var").op("Add", {"var", "eps"}, "ve");
  ln.op("Sqrt", {"ve"}, "sd").op("Div", {"d2", "sd"}, "n").op("Mul", {"n", "gamma"}, "ns");
  Chain rms;
  rms.mean_square().op("Div", {"one", "sd"}, "inv").op("Mul", {"x", "inv"}, "n").op("Mul", {"n", "gamma"}, "ns");
  std::pair<Model, std::string> cases[] = {{ln.model("ns"), "LayerNormalization"}, {rms.model("ns"), "RMSNormalization"}};
  for (auto& [model, op] : cases) {
    const auto in = (tmp / (op + ".onnx")).string();
    const auto out = tmp / (op + "_23.onnx");
    save_model(model, in);
    const auto r = run_cli({"upgrade", in, "-o", out.string(), "--to", "23", "--fuse-norms", "--verify"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("/n/" + op + " (" + op + ") fused "));
    CHECK_THAT(r.out, Catch::Contains("verified"));
    const Model written = load_model(out);
    CHECK(count_op(written, op) == 1);
    CHECK(written.proto.graph().node_size() == 2);
  }
}

}  // namespace bnorm::test
