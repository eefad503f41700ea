// Spectral ops, computed in float64 and rounded once to the output type.
//
//   DFT-17, DFT-20  y[k] = sum_n x[n] e^{-2 pi i k n / N} along `axis`
//                   (attribute, default 1, at 17; scalar input 2, default
//                   -2, at 20; either in [-r, -2] or [0, r-2]); inverse:
//                   x[n] = 1/N sum_k y[k] e^{2 pi i k n / N}. The last dim
//                   holds 1 (real) or 2 (real, imaginary) values. N is
//                   dft_length (input 1): the signal is cut or zero-padded
//                   to N. onesided: forward keeps k in [0, N/2] of a real
//                   input (RFFT); inverse takes the half spectrum of a
//                   complex input, completes it by X[N-k] = conj(X[k]) and
//                   returns the real signal (IRFFT, N = 2 (m - 1) by
//                   default), as numpy's irfft: the imaginary parts of the
//                   DC and Nyquist bins drop out.
//   STFT-17         frames of frame_length samples every frame_step,
//                   times the window, each transformed as by DFT:
//                   [batch][frames][bins][2], onesided by default.
//   HannWindow-17, HammingWindow-17, BlackmanWindow-17
//                   w[n] = a0 - a1 cos(2 pi n / M) + a2 cos(4 pi n / M),
//                   M = size (periodic) or size - 1 (symmetric), as the
//                   ops' function bodies; Hann (.5, .5, 0), Hamming
//                   (25/46, 21/46, 0), Blackman (.42, .5, .08).
//   MelWeightMatrix-17
//                   triangular filters of peak 1 between mel-spaced bins,
//                   as ONNX's reference implementation computes them.
// Integer output types (windows, MelWeightMatrix) truncate toward zero as
// Cast does.
#include <cmath>
#include <complex>

#include "eval/attrs.h"
#include "eval/numeric.h"
#include "eval/op.h"
#include "eval/ops.h"

namespace bnorm::eval {

namespace {

using cplx = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

void require_float(const Tensor& t, const char* what) {
  if (!is_floating(t.dtype)) fail(ErrorKind::input, "input '{}' must be floating, not {}", what, dtype_name(t.dtype));
}

int64_t scalar_int(const Tensor& t, const char* what) {
  if (t.numel() != 1) fail(ErrorKind::input, "input '{}' must be a scalar, not {}", what, shape_str(t.dims));
  return read_ints(t, what)[0];
}

double scalar_float(const Tensor& t, const char* what) {
  require_float(t, what);
  if (t.numel() != 1) fail(ErrorKind::input, "input '{}' must be a scalar, not {}", what, shape_str(t.dims));
  return t.to_f64()[0];
}

bool flag(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  const int64_t v = attr_int(node, name, fallback);
  if (v != 0 && v != 1) fail(ErrorKind::input, "attribute '{}' is {}, not 0 or 1", name, v);
  return v == 1;
}

// e^{-2 pi i m / n} for m in [0, n): exact indices, so no drift with k * n.
std::vector<cplx> twiddles(int64_t n) {
  std::vector<cplx> tw(static_cast<size_t>(n));
  for (int64_t m = 0; m < n; ++m) {
    const double a = -2.0 * kPi * static_cast<double>(m) / static_cast<double>(n);
    tw[m] = {std::cos(a), std::sin(a)};
  }
  return tw;
}

// out[k] = sum_{j < len} in[j] tw[k j mod n]^(+-1), k < out_len; the
// inverse conjugates the twiddles and divides by n.
void transform(const cplx* in, int64_t len, int64_t n, bool inverse, const std::vector<cplx>& tw, cplx* out,
               int64_t out_len) {
  for (int64_t k = 0; k < out_len; ++k) {
    cplx s = 0;
    int64_t idx = 0;
    for (int64_t j = 0; j < len; ++j) {
      const cplx w = inverse ? std::conj(tw[idx]) : tw[idx];
      s += in[j] * w;
      idx += k % n;
      if (idx >= n) idx -= n;
    }
    out[k] = inverse ? s / static_cast<double>(n) : s;
  }
}

struct DftArgs {
  int64_t axis = 0, n = 0;
  bool inverse = false, onesided = false;
};

DftArgs dft_args(const OpContext& ctx, const Tensor& x) {
  const auto r = static_cast<int64_t>(x.dims.size());
  if (r < 2) fail(ErrorKind::input, "input must have a signal dim and a last dim of 1 or 2, not {}", shape_str(x.dims));
  if (x.dims.back() != 1 && x.dims.back() != 2) fail(ErrorKind::input, "the last dim must be 1 or 2, not {}", x.dims.back());
  DftArgs a;
  a.axis = attr_int(*ctx.node, "axis", 1);
  if (ctx.version >= 20) {
    const Tensor* t = ctx.input(2);
    a.axis = t ? scalar_int(*t, "axis") : -2;
  }
  if (a.axis < -r || a.axis > r - 2 || a.axis == -1) fail(ErrorKind::input, "axis {} is not a signal axis of rank {}", a.axis, r);
  if (a.axis < 0) a.axis += r;
  a.inverse = flag(*ctx.node, "inverse", 0);
  a.onesided = flag(*ctx.node, "onesided", 0);
  const bool complex_in = x.dims.back() == 2;
  if (a.onesided && !a.inverse && complex_in) fail(ErrorKind::input, "a onesided forward DFT takes a real input only");
  if (a.onesided && a.inverse && !complex_in) fail(ErrorKind::input, "a onesided inverse DFT takes a complex input only");
  const int64_t dim = x.dims[a.axis];
  const Tensor* len = ctx.input(1);
  a.n = len ? scalar_int(*len, "dft_length") : (a.onesided && a.inverse ? 2 * (dim - 1) : dim);
  if (a.n < 1) fail(ErrorKind::input, "dft_length {} is not positive", a.n);
  return a;
}

Tensors op_dft(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "input");
  require_float(x, "input");
  const DftArgs a = dft_args(ctx, x);
  const bool irfft = a.onesided && a.inverse;
  const int64_t dim = x.dims[a.axis], n = a.n;
  const int64_t out_len = a.onesided && !a.inverse ? n / 2 + 1 : n;
  const int64_t c = x.dims.back(), outer = product(x.dims, 0, a.axis);
  const int64_t inner = product(x.dims, a.axis + 1, x.dims.size() - 1);
  std::vector<int64_t> dims = x.dims;
  dims[a.axis] = out_len;
  dims.back() = irfft ? 1 : 2;
  const int64_t out_c = dims.back();
  std::vector<double> out(static_cast<size_t>(checked_buffer_numel(dims, sizeof(double), "DFT output")));
  const std::vector<double> v = x.to_f64();
  const std::vector<cplx> tw = twiddles(n);
  // The line the sum runs over: the signal cut or zero-padded to n; for
  // IRFFT the half spectrum (n / 2 + 1 bins at most) completed by symmetry.
  const int64_t used = std::min(dim, irfft ? n / 2 + 1 : n);
  std::vector<cplx> line(static_cast<size_t>(n)), res(static_cast<size_t>(out_len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) {
        const size_t p = static_cast<size_t>(((o * dim + j) * inner + i) * c);
        return cplx(v[p], c == 2 ? v[p + 1] : 0.0);
      };
      for (int64_t j = 0; j < n; ++j) {
        if (!irfft) {
          line[j] = j < used ? at(j) : 0.0;
        } else if (j <= n / 2) {
          line[j] = j < used ? at(j) : 0.0;
        } else {
          line[j] = n - j < used ? std::conj(at(n - j)) : 0.0;
        }
      }
      transform(line.data(), n, n, a.inverse, tw, res.data(), out_len);
      for (int64_t k = 0; k < out_len; ++k) {
        const size_t p = static_cast<size_t>(((o * out_len + k) * inner + i) * out_c);
        out[p] = res[k].real();
        if (out_c == 2) out[p + 1] = res[k].imag();
      }
    }
  }
  return {Tensor::from_f64(x.dtype, dims, out)};
}

Tensors op_stft(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "signal");
  require_float(x, "signal");
  if (x.dims.size() != 3 || (x.dims[2] != 1 && x.dims[2] != 2)) {
    fail(ErrorKind::input, "signal must be [batch][length][1 or 2], not {}", shape_str(x.dims));
  }
  const int64_t batch = x.dims[0], length = x.dims[1], c = x.dims[2];
  const int64_t step = scalar_int(ctx.required(1, "frame_step"), "frame_step");
  if (step < 1) fail(ErrorKind::input, "frame_step {} is not positive", step);
  const Tensor* window = ctx.input(2);
  const Tensor* frame_len = ctx.input(3);
  if (window) {
    require_float(*window, "window");
    if (window->dims.size() != 1) fail(ErrorKind::input, "window must have rank 1, not {}", shape_str(window->dims));
  }
  // Without frame_length nor window, one frame of the whole signal (ONNX's
  // reference implementation).
  int64_t n = frame_len ? scalar_int(*frame_len, "frame_length") : window ? window->dims[0] : length;
  if (window && window->dims[0] != n) fail(ErrorKind::input, "window of {} for frame_length {}", window->dims[0], n);
  if (n < 1 || n > length) fail(ErrorKind::input, "frame_length {} for a signal of {}", n, length);
  const bool onesided = flag(*ctx.node, "onesided", 1);
  if (onesided && c == 2) fail(ErrorKind::input, "onesided output is not possible for a complex signal");
  const int64_t frames = 1 + (length - n) / step, bins = onesided ? n / 2 + 1 : n;
  const std::vector<int64_t> dims{batch, frames, bins, 2};
  std::vector<double> out(static_cast<size_t>(checked_buffer_numel(dims, sizeof(double), "STFT output")));
  const std::vector<double> v = x.to_f64();
  const std::vector<double> w = window ? window->to_f64() : std::vector<double>(static_cast<size_t>(n), 1.0);
  const std::vector<cplx> tw = twiddles(n);
  std::vector<cplx> line(static_cast<size_t>(n)), res(static_cast<size_t>(bins));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < n; ++t) {
        const size_t p = static_cast<size_t>((b * length + f * step + t) * c);
        line[t] = cplx(v[p], c == 2 ? v[p + 1] : 0.0) * w[t];
      }
      transform(line.data(), n, n, false, tw, res.data(), bins);
      for (int64_t k = 0; k < bins; ++k) {
        const size_t p = static_cast<size_t>(((b * frames + f) * bins + k) * 2);
        out[p] = res[k].real();
        out[p + 1] = res[k].imag();
      }
    }
  }
  return {Tensor::from_f64(x.dtype, dims, out)};
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
  const int64_t size = scalar_int(ctx.required(0, "size"), "size");
  if (size < 0) fail(ErrorKind::input, "size {} is negative", size);
  const bool periodic = flag(*ctx.node, "periodic", 1);
  const DType t = output_datatype(*ctx.node);
  // A symmetric window of size 1 divides 0 by 0 in the function body: NaN.
  const double m = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(checked_buffer_numel({size}, sizeof(double), "window")));
  for (int64_t i = 0; i < size; ++i) {
    const double angle = 2.0 * kPi * static_cast<double>(i) / m;
    w[i] = a0 - a1 * std::cos(angle) + a2 * std::cos(2.0 * angle);
  }
  return {numeric_tensor(t, {size}, std::move(w))};
}

Tensors op_hann(const OpContext& ctx) { return window(ctx, 0.5, 0.5, 0.0); }
Tensors op_hamming(const OpContext& ctx) { return window(ctx, 25.0 / 46.0, 21.0 / 46.0, 0.0); }
Tensors op_blackman(const OpContext& ctx) { return window(ctx, 0.42, 0.5, 0.08); }

double hz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }

Tensors op_mel_weight_matrix(const OpContext& ctx) {
  const int64_t mels = scalar_int(ctx.required(0, "num_mel_bins"), "num_mel_bins");
  const int64_t dft_length = scalar_int(ctx.required(1, "dft_length"), "dft_length");
  const int64_t rate = scalar_int(ctx.required(2, "sample_rate"), "sample_rate");
  const double lower = scalar_float(ctx.required(3, "lower_edge_hertz"), "lower_edge_hertz");
  const double upper = scalar_float(ctx.required(4, "upper_edge_hertz"), "upper_edge_hertz");
  if (mels < 1 || dft_length < 1 || rate < 1) {
    fail(ErrorKind::input, "num_mel_bins {}, dft_length {} and sample_rate {} must be positive", mels, dft_length, rate);
  }
  const DType t = output_datatype(*ctx.node);
  const int64_t spectrum = dft_length / 2 + 1;
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
  const std::vector<int64_t> dims{spectrum, mels};
  std::vector<double> w(static_cast<size_t>(checked_buffer_numel(dims, sizeof(double), "MelWeightMatrix")), 0.0);
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
  return {numeric_tensor(t, dims, std::move(w))};
}

}  // namespace

void add_misc_spectral_ops(OpRegistry& r) {
  r.add("BlackmanWindow", 17, 17, op_blackman);
  r.add("DFT", 17, 20, op_dft);
  r.add("HammingWindow", 17, 17, op_hamming);
  r.add("HannWindow", 17, 17, op_hann);
  r.add("MelWeightMatrix", 17, 17, op_mel_weight_matrix);
  r.add("STFT", 17, 17, op_stft);
}

}  // namespace bnorm::eval
