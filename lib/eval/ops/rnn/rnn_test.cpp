// RNN, GRU and LSTM against the float64 reference of tests/support/rnn_test_util.h
// and a hand-computed case: directions, sequence lengths, layout, LSTM's
// peepholes/input_forget/clip, GRU's linear_before_reset, the versions and
// the types.
#include <catch2/catch.hpp>

#include <cmath>

#include "support/rnn_test_util.h"

using namespace bnorm::rnn_test;

TEST_CASE("A one-unit RNN matches a hand computation over two steps", "[eval][rnn]") {
  Case c;
  c.op = "RNN";
  c.seq = 2, c.batch = 1, c.input = 2, c.hidden = 1;
  c.fill();
  c.x = {1, 2, 2, 0};
  c.w = {0.5, -0.25};
  c.r = {2};
  c.b = {0.1, 0.2};
  const double h1 = std::tanh(0.5 - 0.5 + 0.3);
  const double h2 = std::tanh(1.0 + 2 * h1 + 0.3);
  const auto got = run(c, 22);
  check_close(got[0], {2, 1, 1, 1}, {h1, h2}, 1e-15);
  check_close(got[1], {1, 1, 1}, {h2}, 1e-15);
}

TEST_CASE("RNN, GRU and LSTM match the reference in every direction", "[eval][rnn]") {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      for (int64_t opset : {7, 14, 22}) {
        INFO(op << " " << dir << " opset " << opset);
        Case c;
        c.op = op;
        c.direction = dir;
        c.init_h = c.init_c = true;
        check_case(c, opset);
      }
    }
  }
}

TEST_CASE("Shorter sequences leave Y zero past their length and end their states at their last step", "[eval][rnn]") {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      INFO(op << " " << dir);
      Case c;
      c.op = op;
      c.direction = dir;
      c.seq = 4, c.batch = 3;
      c.lens = {4, 2, 0};
      c.init_h = c.init_c = true;
      check_case(c);
    }
  }
}

TEST_CASE("A sequence of length 0 keeps its initial states and an empty time axis gives an empty Y", "[eval][rnn]") {
  Case c;
  c.op = "LSTM";
  c.batch = 1;
  c.lens = {0};
  c.init_h = c.init_c = true;
  c.fill();
  auto got = run(c, 22);
  CHECK(got[0].to_f64() == std::vector<double>(static_cast<size_t>(c.seq * c.hidden), 0.0));
  CHECK(got[1].to_f64() == c.h0);
  CHECK(got[2].to_f64() == c.c0);
  c.seq = 0;
  c.lens.clear();
  c.fill();
  got = run(c, 22);
  CHECK(got[0].dims == std::vector<int64_t>{0, 1, 1, 2});
  CHECK(got[1].to_f64() == c.h0);
}

TEST_CASE("Layout 1 reads and writes batch-major tensors from version 14", "[eval][rnn]") {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    INFO(op);
    Case c;
    c.op = op;
    c.direction = "bidirectional";
    c.init_h = c.init_c = true;
    c.lens = {3, 1};
    c.fill();
    const Out want = reference(c);
    const auto got = run(c, 14, DType::float64, true);
    const int64_t D = 2, H = c.hidden;
    REQUIRE(got[0].dims == std::vector<int64_t>{c.batch, c.seq, D, H});
    REQUIRE(got[1].dims == std::vector<int64_t>{c.batch, D, H});
    const auto y = got[0].to_f64(), yh = got[1].to_f64();
    for (int64_t t = 0; t < c.seq; ++t)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t b = 0; b < c.batch; ++b)
          for (int64_t j = 0; j < H; ++j) {
            CHECK(y[static_cast<size_t>(((b * c.seq + t) * D + d) * H + j)] ==
                  Approx(want.y[static_cast<size_t>(((t * D + d) * c.batch + b) * H + j)]).margin(1e-12));
            if (t == 0) {
              CHECK(yh[static_cast<size_t>((b * D + d) * H + j)] ==
                    Approx(want.yh[static_cast<size_t>((d * c.batch + b) * H + j)]).margin(1e-12));
            }
          }
  }
}

TEST_CASE("LSTM peepholes, input_forget and clip follow the equations", "[eval][rnn]") {
  Case c;
  c.peepholes = true;
  c.init_c = true;
  check_case(c);
  c.input_forget = true;
  check_case(c);
  c.input_forget = false;
  c.clip = 0.25;  // exact in the float attribute
  c.direction = "bidirectional";
  check_case(c);
}

TEST_CASE("GRU linear_before_reset applies R before the reset gate, from version 3", "[eval][rnn]") {
  Case c;
  c.op = "GRU";
  c.init_h = true;
  c.linear_before_reset = true;
  check_case(c, 3);
  check_case(c, 22);
  c.clip = 0.5;
  check_case(c, 7);
  c.fill();
  REQUIRE_THROWS_AS(run(c, 1), bnorm::Error);
  c.linear_before_reset = false;
  check_case(c, 1);
}

TEST_CASE("Version 1 accepts output_sequence and computes Y all the same", "[eval][rnn]") {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    INFO(op);
    Case c;
    c.op = op;
    c.init_h = true;
    c.attrs = [](onnx::NodeProto& n) { set_attr(n, "output_sequence", int64_t{0}); };
    check_case(c, 1);
  }
}

TEST_CASE("float32 and float16 round once, bfloat16 only from version 22", "[eval][rnn]") {
  Case c;
  c.op = "GRU";
  c.init_h = true;
  check_case(c, 22, DType::float32, 1e-7);
  check_case(c, 7, DType::float16, 1e-3);
  check_case(c, 22, DType::bfloat16, 8e-3);
  c.fill();
  REQUIRE_THROWS_AS(run(c, 14, DType::bfloat16), bnorm::Error);
}

TEST_CASE("NaN in X propagates to the outputs it reaches", "[eval][rnn]") {
  Case c;
  c.op = "RNN";
  c.batch = 2;
  c.fill();
  c.x[0] = std::nan("");  // batch entry 0 at time 0
  const auto got = run(c, 22);
  const auto yh = got[1].to_f64();
  CHECK(std::isnan(yh[0]));
  CHECK(!std::isnan(yh[static_cast<size_t>(c.hidden)]));
}
