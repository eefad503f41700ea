// The window generators and MelWeightMatrix, computed in float64 and
// rounded once to output_datatype (default float); integer output types
// truncate toward zero as Cast does.
//
//   HannWindow-17, HammingWindow-17, BlackmanWindow-17
//     w[n] = a0 - a1 cos(2 pi n / M) + a2 cos(4 pi n / M), n in [0, size),
//     M = size (periodic, the default) or size - 1 (symmetric), as the ops'
//     function bodies; Hann (.5, .5, 0), Hamming (25/46, 21/46, 0),
//     Blackman (.42, .5, .08).
//   MelWeightMatrix-17
//     [dft_length / 2 + 1][num_mel_bins]: num_mel_bins + 2 edges evenly
//     spaced in mel (mel(f) = 2595 log10(1 + f / 700)) from
//     lower_edge_hertz to upper_edge_hertz, each on spectrogram bin
//     floor((dft_length + 1) hz / sample_rate); band i rises linearly from
//     edge i to edge i+1 (1 at edge i+1 alone when they coincide) and falls
//     to edge i+2, as ONNX's reference implementation builds it. A band
//     reaching a bin outside the spectrum is Error(input).
#include <cmath>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op_helpers.h"
#include "eval/run/op.h"
#include "eval/ops/spectral/ops.h"

namespace bnorm::eval {

namespace {

constexpr double kPi = 3.14159265358979323846;

double scalar_float(const Tensor& t, const char* what) {
  if (!is_floating(t.dtype)) fail(ErrorKind::input, "input '{}' must be floating, not {}", what, dtype_name(t.dtype));
  if (t.numel() != 1) fail(ErrorKind::input, "input '{}' must be a scalar, not {}", what, shape_str(t.dims));
  return t.to_f64()[0];
}

DType output_datatype(const onnx::NodeProto& node) {
  const int64_t v = attr_int(node, "output_datatype", 1);
  const auto t = static_cast<DType>(v);
  switch (t) {
    case DType::uint8: case DType::uint16: case DType::uint32: case DType::uint64:
    case DType::int8: case DType::int16: case DType::int32: case DType::int64:
    case DType::float16: case DType::float32: case DType::float64: case DType::bfloat16: return t;
    default: fail(ErrorKind::input, "output_datatype {} is not a numeric type", v);
  }
}

Tensor numeric_tensor(DType t, std::vector<int64_t> dims, std::vector<double> v) {
  if (!is_floating(t)) {
    for (double& e : v) {
      if (std::isnan(e)) fail(ErrorKind::unsupported, "a NaN value has no {} value", dtype_name(t));
      e = std::trunc(e) + 0.0;
    }
  }
  return Tensor::from_f64(t, std::move(dims), v);
}

Tensors window(const OpContext& ctx, double a0, double a1, double a2) {
  const int64_t size = single_int(ctx.required(0, "size"), "size");
  if (size < 0) fail(ErrorKind::input, "size {} is negative", size);
  const bool periodic = attr_flag(*ctx.node, "periodic", 1);
  const DType t = output_datatype(*ctx.node);
  // A symmetric window of size 1 divides 0 by 0 in the function body: NaN.
  const double m = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(checked_buffer_numel({size}, sizeof(double), "window")));
  for (int64_t i = 0; i < size; ++i) {
    const double angle = 2.0 * kPi * static_cast<double>(i) / m;
    w[i] = a0 - a1 * std::cos(angle) + a2 * std::cos(2.0 * angle);
  }
  return one_tensor(numeric_tensor(t, {size}, std::move(w)));
}

}  // namespace

Tensors op_hann(const OpContext& ctx) { return window(ctx, 0.5, 0.5, 0.0); }

Tensors op_hamming(const OpContext& ctx) { return window(ctx, 25.0 / 46.0, 21.0 / 46.0, 0.0); }

Tensors op_blackman(const OpContext& ctx) { return window(ctx, 0.42, 0.5, 0.08); }

namespace {

double hz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }

}  // namespace

Tensors op_mel_weight_matrix(const OpContext& ctx) {
  const int64_t mels = single_int(ctx.required(0, "num_mel_bins"), "num_mel_bins");
  const int64_t dft_length = single_int(ctx.required(1, "dft_length"), "dft_length");
  const int64_t rate = single_int(ctx.required(2, "sample_rate"), "sample_rate");
  const double lower = scalar_float(ctx.required(3, "lower_edge_hertz"), "lower_edge_hertz");
  const double upper = scalar_float(ctx.required(4, "upper_edge_hertz"), "upper_edge_hertz");
  if (mels < 1 || dft_length < 1 || rate < 1) {
    fail(ErrorKind::input, "num_mel_bins {}, dft_length {} and sample_rate {} must be positive", mels, dft_length, rate);
  }
  const DType t = output_datatype(*ctx.node);
  const int64_t spectrum = dft_length / 2 + 1;
  const std::vector<int64_t> dims{spectrum, mels};
  std::vector<double> w(static_cast<size_t>(checked_buffer_numel(dims, sizeof(double), "MelWeightMatrix")), 0.0);
  // mels + 2 edges evenly spaced in mel, each mapped to the spectrogram bin
  // floor((dft_length + 1) hz / sample_rate).
  const double low = hz_to_mel(lower), step = (hz_to_mel(upper) - low) / static_cast<double>(mels + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low) / 2595.0) - 1.0);
    const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate));
    if (!(std::fabs(bin) < 9.0e15)) fail(ErrorKind::input, "mel edge {} Hz falls on no bin", hz);
    edge[i] = static_cast<int64_t>(bin);
  }
  auto put = [&](int64_t j, int64_t i, double v) {
    if (j < 0 || j >= spectrum) {
      fail(ErrorKind::input, "mel band {} reaches bin {}, outside the {} bins of the spectrum", i, j, spectrum);
    }
    w[static_cast<size_t>(j * mels + i)] = v;
  };
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
    if (center == left) put(center, i, 1.0);
    for (int64_t j = left; center != left && j <= center; ++j) {
      put(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    }
    for (int64_t j = center; j < right; ++j) put(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  return one_tensor(numeric_tensor(t, dims, std::move(w)));
}

}  // namespace bnorm::eval
