// DFT and STFT, computed in float64 and rounded once to the input's type.
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
// The sums run as a radix-2 FFT for powers of two, directly up to 64
// points, and by Bluestein's chirp-z (through a power-of-two FFT) above:
// twiddles come from exact integer angle indices, so the error stays near
// log2(N) ulps instead of growing with N.
#include <cmath>
#include <complex>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op_helpers.h"
#include "eval/run/op.h"
#include "eval/ops/spectral/ops.h"

namespace bnorm::eval {

namespace {

using cplx = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

void require_float(const Tensor& t, const char* what) {
  if (!is_floating(t.dtype)) fail(ErrorKind::input, "input '{}' must be floating, not {}", what, dtype_name(t.dtype));
}

// e^{-2 pi i m / n} for m in [0, n).
std::vector<cplx> twiddles(int64_t n) {
  std::vector<cplx> tw(static_cast<size_t>(n));
  for (int64_t m = 0; m < n; ++m) tw[m] = std::polar(1.0, -2.0 * kPi * static_cast<double>(m) / static_cast<double>(n));
  return tw;
}

// In place, a.size() a power of two, tw = twiddles(a.size()).
void fft_pow2(std::vector<cplx>& a, const std::vector<cplx>& tw) {
  const size_t n = a.size();
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const size_t half = len / 2, step = n / len;
    for (size_t i = 0; i < n; i += len) {
      for (size_t j = 0; j < half; ++j) {
        const cplx u = a[i + j], v = a[i + j + half] * tw[j * step];
        a[i + j] = u + v;
        a[i + j + half] = u - v;
      }
    }
  }
}

// The forward DFT of n points; the inverse is conj(forward(conj(x))) / n.
class DftPlan {
 public:
  explicit DftPlan(int64_t n) : n_(n) {
    // Bluestein's buffers hold up to 4 n points; this also bounds k * k below.
    checked_buffer_numel({4, n}, sizeof(cplx) * 2, "DFT working buffers");
    if ((n & (n - 1)) == 0 || n <= 64) {
      tw_ = twiddles(n);
      return;
    }
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    tw_ = twiddles(m);
    // chirp[k] = e^{-pi i k^2 / n}, the angle index k^2 mod 2n exact.
    chirp_.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      const int64_t idx = static_cast<int64_t>((static_cast<uint64_t>(k) * static_cast<uint64_t>(k)) % static_cast<uint64_t>(2 * n));
      chirp_[k] = std::polar(1.0, -kPi * static_cast<double>(idx) / static_cast<double>(n));
    }
    kernel_.assign(static_cast<size_t>(m), 0.0);
    for (int64_t k = 0; k < n; ++k) kernel_[k] = kernel_[k == 0 ? 0 : m - k] = std::conj(chirp_[k]);
    fft_pow2(kernel_, tw_);
  }

  // out = DFT(in) (n values each), or its inverse.
  void run(const std::vector<cplx>& in, std::vector<cplx>& out, bool inverse) const {
    const auto n = static_cast<size_t>(n_);
    out.assign(in.begin(), in.end());
    if (inverse) {
      for (cplx& v : out) v = std::conj(v);
    }
    forward(out);
    if (inverse) {
      for (cplx& v : out) v = std::conj(v) / static_cast<double>(n_);
    }
    out.resize(n);
  }

 private:
  void forward(std::vector<cplx>& a) const {
    const auto n = static_cast<size_t>(n_);
    if ((n & (n - 1)) == 0) return fft_pow2(a, tw_);
    if (chirp_.empty()) {
      const std::vector<cplx> x = a;
      for (size_t k = 0; k < n; ++k) {
        cplx s = 0;
        for (size_t j = 0, idx = 0; j < n; ++j, idx = (idx + k) % n) s += x[j] * tw_[idx];
        a[k] = s;
      }
      return;
    }
    std::vector<cplx> b(kernel_.size(), 0.0);
    for (size_t k = 0; k < n; ++k) b[k] = a[k] * chirp_[k];
    fft_pow2(b, tw_);
    for (size_t k = 0; k < b.size(); ++k) b[k] = std::conj(b[k] * kernel_[k]);
    fft_pow2(b, tw_);  // conj(FFT(conj(.))) / m is the inverse FFT
    const double m = static_cast<double>(b.size());
    for (size_t k = 0; k < n; ++k) a[k] = std::conj(b[k]) / m * chirp_[k];
  }

  int64_t n_;
  std::vector<cplx> tw_, chirp_, kernel_;
};

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
    a.axis = t ? single_int(*t, "axis") : -2;
  }
  if (a.axis < -r || a.axis > r - 2 || a.axis == -1) fail(ErrorKind::input, "axis {} is not a signal axis of rank {}", a.axis, r);
  if (a.axis < 0) a.axis += r;
  a.inverse = attr_flag(*ctx.node, "inverse", 0);
  a.onesided = attr_flag(*ctx.node, "onesided", 0);
  const bool complex_in = x.dims.back() == 2;
  if (a.onesided && !a.inverse && complex_in) fail(ErrorKind::input, "a onesided forward DFT takes a real input only");
  if (a.onesided && a.inverse && !complex_in) fail(ErrorKind::input, "a onesided inverse DFT takes a complex input only");
  const int64_t dim = x.dims[a.axis];
  const Tensor* len = ctx.input(1);
  a.n = len ? single_int(*len, "dft_length") : (a.onesided && a.inverse ? 2 * (dim - 1) : dim);
  if (a.n < 1) fail(ErrorKind::input, "dft_length {} is not positive", a.n);
  return a;
}

}  // namespace

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
  const DftPlan plan(n);
  // The line the sum runs over: the signal cut or zero-padded to n; for
  // IRFFT the half spectrum (n / 2 + 1 bins at most) completed by symmetry.
  const int64_t used = std::min(dim, irfft ? n / 2 + 1 : n);
  std::vector<cplx> line(static_cast<size_t>(n)), res;
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
      plan.run(line, res, a.inverse);
      for (int64_t k = 0; k < out_len; ++k) {
        const size_t p = static_cast<size_t>(((o * out_len + k) * inner + i) * out_c);
        out[p] = res[k].real();
        if (out_c == 2) out[p + 1] = res[k].imag();
      }
    }
  }
  return one_tensor(Tensor::from_f64(x.dtype, dims, out));
}

Tensors op_stft(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "signal");
  require_float(x, "signal");
  if (x.dims.size() != 3 || (x.dims[2] != 1 && x.dims[2] != 2)) {
    fail(ErrorKind::input, "signal must be [batch][length][1 or 2], not {}", shape_str(x.dims));
  }
  const int64_t batch = x.dims[0], length = x.dims[1], c = x.dims[2];
  const int64_t step = single_int(ctx.required(1, "frame_step"), "frame_step");
  if (step < 1) fail(ErrorKind::input, "frame_step {} is not positive", step);
  const Tensor* window = ctx.input(2);
  const Tensor* frame_len = ctx.input(3);
  if (window) {
    require_float(*window, "window");
    if (window->dims.size() != 1) fail(ErrorKind::input, "window must have rank 1, not {}", shape_str(window->dims));
  }
  // Without frame_length nor window, one frame of the whole signal (ONNX's
  // reference implementation).
  int64_t n = frame_len ? single_int(*frame_len, "frame_length") : window ? window->dims[0] : length;
  if (window && window->dims[0] != n) fail(ErrorKind::input, "window of {} for frame_length {}", window->dims[0], n);
  if (n < 1 || n > length) fail(ErrorKind::input, "frame_length {} for a signal of {}", n, length);
  const bool onesided = attr_flag(*ctx.node, "onesided", 1);
  if (onesided && c == 2) fail(ErrorKind::input, "onesided output is not possible for a complex signal");
  const int64_t frames = 1 + (length - n) / step, bins = onesided ? n / 2 + 1 : n;
  const std::vector<int64_t> dims{batch, frames, bins, 2};
  std::vector<double> out(static_cast<size_t>(checked_buffer_numel(dims, sizeof(double), "STFT output")));
  const std::vector<double> v = x.to_f64();
  const std::vector<double> w = window ? window->to_f64() : std::vector<double>(static_cast<size_t>(n), 1.0);
  const DftPlan plan(n);
  std::vector<cplx> line(static_cast<size_t>(n)), res;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < n; ++t) {
        const size_t p = static_cast<size_t>((b * length + f * step + t) * c);
        line[t] = cplx(v[p], c == 2 ? v[p + 1] : 0.0) * w[t];
      }
      plan.run(line, res, false);
      for (int64_t k = 0; k < bins; ++k) {
        const size_t p = static_cast<size_t>(((b * frames + f) * bins + k) * 2);
        out[p] = res[k].real();
        out[p + 1] = res[k].imag();
      }
    }
  }
  return one_tensor(Tensor::from_f64(x.dtype, dims, out));
}

}  // namespace bnorm::eval
