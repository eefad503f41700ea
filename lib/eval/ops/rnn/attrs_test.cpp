// RNN, GRU and LSTM activations (every function, alpha and beta given or
// defaulted, their order across directions) and the nodes they refuse.
#include <catch2/catch.hpp>

#include <cmath>

#include "support/rnn_test_util.h"

using namespace bnorm::rnn_test;

TEST_CASE("Every activation with its alpha and beta, given or defaulted", "[eval][rnn]") {
  struct A {
    std::vector<std::string> names;
    std::vector<float> alpha, beta;
    Fn f;
  };
  const std::vector<A> cases = {
      {{"Relu"}, {}, {}, [](double x) { return std::max(x, 0.0); }},
      {{"Tanh"}, {}, {}, kTanh},
      {{"Sigmoid"}, {}, {}, kSigmoid},
      {{"Affine"}, {0.7F}, {0.2F}, [](double x) { return double{0.7F} * x + double{0.2F}; }},
      {{"Affine"}, {}, {}, [](double x) { return x; }},
      {{"LeakyRelu"}, {}, {}, [](double x) { return x >= 0 ? x : double{0.01F} * x; }},
      {{"ThresholdedRelu"}, {}, {}, [](double x) { return x >= 1 ? x : 0; }},
      {{"ThresholdedRelu"}, {0.5F}, {}, [](double x) { return x >= 0.5 ? x : 0; }},
      {{"ScaledTanh"}, {0.7F}, {0.2F}, [](double x) { return double{0.7F} * std::tanh(double{0.2F} * x); }},
      {{"HardSigmoid"}, {}, {}, [](double x) { return std::min(1.0, std::max(0.0, double{0.2F} * x + 0.5)); }},
      {{"Elu"}, {0.7F}, {}, [&](double x) { return x >= 0 ? x : double{0.7F} * (std::exp(x) - 1); }},
      {{"Softsign"}, {}, {}, [](double x) { return x / (1 + std::fabs(x)); }},
      {{"softplus"}, {}, {}, [](double x) { return std::log(1 + std::exp(x)); }},
  };
  for (const auto& e : cases) {
    INFO(e.names[0]);
    Case c;
    c.op = "RNN";
    c.seq = 4, c.batch = 1, c.input = 1, c.hidden = 1;
    c.fill();
    c.x = {-3, -0.5, 0.5, 1};  // W = 1, R = 0, B = 0: Y is f(x)
    c.w = {1}, c.r = {0}, c.b = {0, 0};
    c.attrs = [&](onnx::NodeProto& n) {
      set_strings(n, "activations", e.names);
      if (!e.alpha.empty()) set_floats(n, "activation_alpha", e.alpha);
      if (!e.beta.empty()) set_floats(n, "activation_beta", e.beta);
    };
    const auto y = run(c, 22)[0].to_f64();
    for (size_t i = 0; i < 4; ++i) CHECK(y[i] == Approx(e.f(c.x[i])).margin(1e-15));
  }
}

TEST_CASE("Alpha and beta go to the activations that take them, in order, per direction", "[eval][rnn]") {
  Case c;
  c.direction = "bidirectional";
  const Fn leaky = [](double x) { return x >= 0 ? x : double{0.3F} * x; };
  const Fn hard = [](double x) { return std::min(1.0, std::max(0.0, double{0.4F} * x + double{0.6F})); };
  const Fn elu = [](double x) { return x >= 0 ? x : 1.0 * (std::exp(x) - 1); };
  c.fns = {{kSigmoid, leaky, hard}, {hard, kTanh, elu}};
  c.attrs = [](onnx::NodeProto& n) {
    set_strings(n, "activations", {"Sigmoid", "LeakyRelu", "HardSigmoid", "HardSigmoid", "Tanh", "Elu"});
    set_floats(n, "activation_alpha", {0.3F, 0.4F, 0.4F});
    set_floats(n, "activation_beta", {0.6F, 0.6F});
  };
  check_case(c);
  c.fns = {{kSigmoid, leaky, kTanh}, {kSigmoid, leaky, kTanh}};  // one direction's list serves both
  c.attrs = [](onnx::NodeProto& n) {
    set_strings(n, "activations", {"Sigmoid", "LeakyRelu", "Tanh"});
    set_floats(n, "activation_alpha", {0.3F});
  };
  check_case(c);
}

TEST_CASE("Invalid RNN nodes are refused with an error", "[eval][rnn]") {
  const auto refused = [](const std::function<void(Case&)>& edit, int64_t opset = 22) {
    Case c;
    c.init_h = true;
    c.fill();
    edit(c);
    REQUIRE_THROWS_AS(run(c, opset), bnorm::Error);
  };
  refused([](Case& c) { c.attrs = [](onnx::NodeProto& n) { set_string(n, "direction", "sideways"); }; });
  refused([](Case& c) {  // W and R hold one direction
    c.attrs = [](onnx::NodeProto& n) { set_string(n, "direction", "bidirectional"); };
  });
  refused([](Case& c) { c.lens = {1, 4}; });
  refused([](Case& c) { c.lens = {-1, 2}; });
  refused([](Case& c) { c.attrs = [](onnx::NodeProto& n) { set_strings(n, "activations", {"Sigmoid", "Tanh", "Cube"}); }; });
  refused([](Case& c) { c.attrs = [](onnx::NodeProto& n) { set_strings(n, "activations", {"Sigmoid", "Tanh"}); }; });
  refused([](Case& c) {
    c.attrs = [](onnx::NodeProto& n) {
      set_strings(n, "activations", {"Sigmoid", "Tanh", "Tanh"});
      set_floats(n, "activation_alpha", {1.0F});
    };
  });
  refused([](Case& c) {
    c.attrs = [](onnx::NodeProto& n) { set_strings(n, "activations", {"Sigmoid", "ScaledTanh", "Tanh"}); };
  });
  refused([](Case& c) { c.attrs = [](onnx::NodeProto& n) { set_attr(n, "clip", -1.0F); }; });
  refused([](Case& c) { c.attrs = [](onnx::NodeProto& n) { set_attr(n, "input_forget", int64_t{2}); }; });
  refused([](Case& c) { c.attrs = [](onnx::NodeProto& n) { set_attr(n, "layout", int64_t{1}); }; }, 7);
  refused([](Case& c) { c.attrs = [](onnx::NodeProto& n) { set_attr(n, "layout", int64_t{2}); }; });
  refused([](Case& c) {
    c.attrs = [](onnx::NodeProto& n) { n.mutable_attribute(0)->set_i(3); };  // hidden_size disagrees with R
  });
}

TEST_CASE("hidden_size may be omitted and an empty activations list keeps the defaults", "[eval][rnn]") {
  for (const char* op : {"GRU", "LSTM"}) {
    INFO(op);
    Case c;
    c.op = op;
    c.init_h = true;
    c.attrs = [](onnx::NodeProto& n) {
      n.mutable_attribute()->DeleteSubrange(0, 1);  // hidden_size: R's shape gives it
      set_strings(n, "activations", {});
    };
    check_case(c);
  }
}

TEST_CASE("An empty batch gives empty outputs", "[eval][rnn]") {
  Case c;
  c.batch = 0;
  c.fill();
  const auto got = run(c, 22);
  CHECK(got[0].dims == std::vector<int64_t>{3, 1, 0, 2});
  CHECK(got[1].dims == std::vector<int64_t>{1, 0, 2});
  CHECK(got[2].numel() == 0);
}

TEST_CASE("A one-direction node given two directions' activations uses the first ones", "[eval][rnn]") {
  Case c;
  c.op = "RNN";
  c.direction = "reverse";
  c.fns = {{[](double x) { return std::max(x, 0.0); }}};
  c.attrs = [](onnx::NodeProto& n) { set_strings(n, "activations", {"Relu", "Tanh"}); };
  check_case(c);
}
