// DFT, STFT, the windows and MelWeightMatrix against a direct float64
// evaluation of the spec's sums written here and hand-computed values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

const double kPi = std::acos(-1.0);

Tensor scalar(int64_t v, DType t = DType::int64) { return Tensor::from_f64(t, {}, {static_cast<double>(v)}); }

Attrs attr(const char* name, int64_t v) {
  return [name, v](onnx::NodeProto& n) { set_attr(n, name, v); };
}

// sum_{j < n} x[j] exp(sign 2 pi i k j / n) for k < out, x zero-padded or cut
// to n; interleaved (re, im).
std::vector<double> dft_ref(const std::vector<double>& re, const std::vector<double>& im, int64_t n, int sign,
                            int64_t out) {
  std::vector<double> r;
  const size_t len = std::min(re.size(), static_cast<size_t>(n));
  for (int64_t k = 0; k < out; ++k) {
    double sr = 0, si = 0;
    for (size_t j = 0; j < len; ++j) {
      const double a = sign * 2 * kPi * static_cast<double>(k) * static_cast<double>(j) / static_cast<double>(n);
      sr += re[j] * std::cos(a) - im[j] * std::sin(a);
      si += re[j] * std::sin(a) + im[j] * std::cos(a);
    }
    r.push_back(sr);
    r.push_back(si);
  }
  return r;
}

}  // namespace

TEST_CASE("DFT transforms real and complex signals along the axis, cut or zero-padded to dft_length",
          "[eval][misc]") {
  const std::vector<double> re{1, -2, 0.5, 3, 4}, im{0.25, 0, -1, 2, 1};
  const std::vector<double> zeros(5, 0.0);
  // [1][5][1] real, the default axis 1 at DFT-17.
  check_close(run_node1(17, "DFT", {f64({1, 5, 1}, re)}).to_f64(), dft_ref(re, zeros, 5, -1, 5), 1e-12);
  std::vector<double> c;
  for (size_t i = 0; i < re.size(); ++i) c.insert(c.end(), {re[i], im[i]});
  check_close(run_node1(17, "DFT", {f64({1, 5, 2}, c), scalar(8)}).to_f64(), dft_ref(re, im, 8, -1, 8), 1e-12);
  check_close(run_node1(17, "DFT", {f64({1, 5, 2}, c), scalar(3, DType::int32)}).to_f64(), dft_ref(re, im, 3, -1, 3),
              1e-12);
  // Inverse divides by n.
  std::vector<double> inv = dft_ref(re, im, 5, 1, 5);
  for (double& v : inv) v /= 5;
  check_close(run_node1(17, "DFT", {f64({1, 5, 2}, c)}, attr("inverse", 1)).to_f64(), inv, 1e-12);
}

TEST_CASE("DFT of long lengths (power of two, composite and prime above 64) matches the direct sum",
          "[eval][misc]") {
  for (int64_t n : {128, 100, 97}) {
    std::vector<double> re, im, c;
    for (int64_t j = 0; j < n; ++j) {
      re.push_back(std::sin(0.37 * j * j) + 0.01 * j);
      im.push_back(std::cos(1.3 * j) - 0.5);
      c.insert(c.end(), {re.back(), im.back()});
    }
    check_close(run_node1(20, "DFT", {f64({n, 2}, c), {}, scalar(0)}).to_f64(), dft_ref(re, im, n, -1, n), 1e-10);
    std::vector<double> inv = dft_ref(re, im, n, 1, n);
    for (double& v : inv) v /= static_cast<double>(n);
    check_close(run_node1(20, "DFT", {f64({n, 2}, c), {}, scalar(0)}, attr("inverse", 1)).to_f64(), inv, 1e-12);
  }
}

TEST_CASE("DFT-20 reads the axis from input 2, -2 by default, DFT-17 from its attribute", "[eval][misc]") {
  // [2][3][1]: along axis 0 the lines are (x[0][j], x[1][j]).
  const Tensor x = f64({2, 3, 1}, {1, 2, 3, 10, 20, 30});
  const std::vector<double> along0{11, 0, 22, 0, 33, 0, -9, 0, -18, 0, -27, 0};
  check_close(run_node1(20, "DFT", {x, {}, scalar(0)}).to_f64(), along0, 1e-12);
  check_close(run_node1(17, "DFT", {x}, attr("axis", 0)).to_f64(), along0, 1e-12);
  check_close(run_node1(17, "DFT", {x}, attr("axis", -3)).to_f64(), along0, 1e-12);
  // The default -2 is axis 1 here: each row's 3-point DFT.
  const Tensor d = run_node1(20, "DFT", {x});
  std::vector<double> rows = dft_ref({1, 2, 3}, {0, 0, 0}, 3, -1, 3), second = dft_ref({10, 20, 30}, {0, 0, 0}, 3, -1, 3);
  rows.insert(rows.end(), second.begin(), second.end());
  check_close(d.to_f64(), rows, 1e-12);
  REQUIRE_THROWS_AS(run_node1(20, "DFT", {x, {}, scalar(-1)}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(17, "DFT", {x}, attr("axis", 2)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(17, "DFT", {f64({2, 3, 3}, std::vector<double>(18, 0))}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(17, "DFT", {x, scalar(0)}), bnorm::Error);
}

TEST_CASE("DFT onesided keeps n/2 + 1 bins of a real signal and its inverse rebuilds the real signal",
          "[eval][misc]") {
  for (int64_t n : {6, 7}) {
    std::vector<double> sig;
    for (int64_t j = 0; j < n; ++j) sig.push_back(std::sin(0.7 * j) + 0.1 * j * j);
    const Tensor half = run_node1(20, "DFT", {f64({1, n, 1}, sig), {}, scalar(1)}, attr("onesided", 1));
    CHECK(half.dims == std::vector<int64_t>{1, n / 2 + 1, 2});
    check_close(half.to_f64(), dft_ref(sig, std::vector<double>(n, 0.0), n, -1, n / 2 + 1), 1e-12);
    // IRFFT: dft_length n given (the default 2 (m - 1) is 6 for both).
    const Tensor back = run_node1(20, "DFT", {half, scalar(n), scalar(1)}, [](auto& node) {
      set_attr(node, "onesided", int64_t{1});
      set_attr(node, "inverse", int64_t{1});
    });
    CHECK(back.dims == std::vector<int64_t>{1, n, 1});
    check_close(back.to_f64(), sig, 1e-12);
  }
  // The imaginary parts of the DC and Nyquist bins do not reach the real output.
  const Tensor spectrum = f64({1, 3, 2}, {4, 7, 0, 0, 0, 5});
  const Tensor r = run_node1(17, "DFT", {spectrum}, [](auto& node) {
    set_attr(node, "onesided", int64_t{1});
    set_attr(node, "inverse", int64_t{1});
  });
  CHECK(r.dims == std::vector<int64_t>{1, 4, 1});
  check_close(r.to_f64(), {1, 1, 1, 1}, 1e-15);
  REQUIRE_THROWS_AS(run_node1(17, "DFT", {spectrum}, attr("onesided", 1)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(17, "DFT", {f64({1, 3, 1}, {1, 2, 3})}, [](auto& node) {
                      set_attr(node, "onesided", int64_t{1});
                      set_attr(node, "inverse", int64_t{1});
                    }),
                    bnorm::Error);
}

TEST_CASE("STFT transforms windowed frames every frame_step, onesided by default", "[eval][misc]") {
  std::vector<double> sig;
  for (int j = 0; j < 10; ++j) sig.push_back(std::cos(0.3 * j) + j);
  const std::vector<double> win{0.5, 1, 0.25, 2};
  const Tensor y = run_node1(17, "STFT", {f64({1, 10, 1}, sig), scalar(3), f64({4}, win)});
  // 1 + (10 - 4) / 3 = 3 frames of 4 / 2 + 1 = 3 bins.
  REQUIRE(y.dims == std::vector<int64_t>{1, 3, 3, 2});
  std::vector<double> want;
  for (int f = 0; f < 3; ++f) {
    std::vector<double> frame;
    for (int t = 0; t < 4; ++t) frame.push_back(sig[f * 3 + t] * win[t]);
    const auto bins = dft_ref(frame, std::vector<double>(4, 0.0), 4, -1, 3);
    want.insert(want.end(), bins.begin(), bins.end());
  }
  check_close(y.to_f64(), want, 1e-12);
  const Tensor full = run_node1(17, "STFT", {f64({1, 10, 1}, sig), scalar(5), {}, scalar(4)}, attr("onesided", 0));
  CHECK(full.dims == std::vector<int64_t>{1, 2, 4, 2});
  const std::vector<double> got = full.to_f64();
  check_close(std::vector<double>(got.begin() + 8, got.end()),
              dft_ref(std::vector<double>(sig.begin() + 5, sig.begin() + 9), std::vector<double>(4, 0.0), 4, -1, 4),
              1e-12);
  REQUIRE_THROWS_AS(run_node1(17, "STFT", {f64({1, 10, 1}, sig), scalar(0), f64({4}, win)}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(17, "STFT", {f64({1, 10, 1}, sig), scalar(1), f64({4}, win), scalar(5)}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(17, "STFT", {f64({1, 10, 1}, sig), scalar(1), {}, scalar(11)}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(17, "STFT", {f64({1, 5, 2}, sig), scalar(1), {}, scalar(2)}), bnorm::Error);
}

TEST_CASE("Hann, Hamming and Blackman windows, periodic or symmetric, in any numeric output type", "[eval][misc]") {
  check_close(run_node1(17, "HannWindow", {scalar(4)}).to_f64(), {0, 0.5, 1, 0.5}, 1e-7);
  check_close(run_node1(17, "HannWindow", {scalar(5, DType::int32)}, attr("periodic", 0)).to_f64(), {0, 0.5, 1, 0.5, 0},
              1e-7);
  const Tensor hamming = run_node1(17, "HammingWindow", {scalar(2)}, attr("output_datatype", 11));
  CHECK(hamming.dtype == DType::float64);
  check_close(hamming.to_f64(), {4.0 / 46.0, 1.0}, 1e-15);
  check_close(run_node1(17, "BlackmanWindow", {scalar(3)}, [](auto& n) {
                set_attr(n, "periodic", int64_t{0});
                set_attr(n, "output_datatype", int64_t{11});
              }).to_f64(),
              {0, 1, 0}, 1e-15);
  // Blackman periodic of 4: 0.42 - 0.5 cos(pi k / 2) + 0.08 cos(pi k).
  check_close(run_node1(17, "BlackmanWindow", {scalar(4)}, attr("output_datatype", 11)).to_f64(), {0, 0.34, 1, 0.34}, 1e-15);
  // Integer outputs truncate: only the peak of 1 survives.
  const Tensor i = run_node1(17, "HannWindow", {scalar(4)}, attr("output_datatype", 6));
  CHECK(i.dtype == DType::int32);
  CHECK(i.to_f64() == std::vector<double>{0, 0, 1, 0});
  CHECK(run_node1(17, "HannWindow", {scalar(0)}).dims == std::vector<int64_t>{0});
  REQUIRE_THROWS_AS(run_node1(17, "HannWindow", {scalar(-1)}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(17, "HannWindow", {scalar(4)}, attr("output_datatype", 9)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(17, "HannWindow", {scalar(4)}, attr("periodic", 2)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(16, "HannWindow", {scalar(4)}), bnorm::Error);
}

TEST_CASE("MelWeightMatrix puts triangles of peak 1 between mel-spaced spectrogram bins", "[eval][misc]") {
  // dft_length 16 -> 9 bins; 2 mel bands over 0..4000 Hz at 8000 Hz: the 4
  // edges are at mel 0, m/4, m/2, 3m/4 (m = mel(4000)), mapped to the bins
  // floor(17 hz / 8000).
  const double m = 2595 * std::log10(1 + 4000.0 / 700);
  std::vector<int64_t> edge;
  for (int i = 0; i < 4; ++i) {
    edge.push_back(static_cast<int64_t>(std::floor(17 * 700 * (std::pow(10, i * m / 4 / 2595) - 1) / 8000)));
  }
  REQUIRE(edge == std::vector<int64_t>{0, 0, 2, 4});
  const Tensor w = run_node1(17, "MelWeightMatrix", {scalar(2), scalar(16), scalar(8000),
                                               Tensor::from_f64(DType::float32, {}, {0}),
                                               Tensor::from_f64(DType::float32, {}, {4000})});
  CHECK(w.dims == std::vector<int64_t>{9, 2});
  // Band 0 has no rise (left = center = 0: 1 there) and falls over 0..2;
  // band 1 rises over 0..2 and falls over 2..4.
  const std::vector<double> want{1, 0, 0.5, 0.5, 0, 1, 0, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK(w.to_f64() == want);
  REQUIRE_THROWS_AS(run_node1(17, "MelWeightMatrix", {scalar(int64_t{1} << 40), scalar(16), scalar(8000),
                                                Tensor::from_f64(DType::float32, {}, {0}),
                                                Tensor::from_f64(DType::float32, {}, {4000})}),
                    bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(17, "HannWindow", {scalar(int64_t{1} << 40)}), bnorm::Error);
  // A band reaching past the spectrum is refused.
  REQUIRE_THROWS_AS(run_node1(17, "MelWeightMatrix", {scalar(2), scalar(16), scalar(1000),
                                                Tensor::from_f64(DType::float32, {}, {0}),
                                                Tensor::from_f64(DType::float32, {}, {4000})}),
                    bnorm::Error);
}
