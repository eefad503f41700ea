// conv_plane.h's loops, compiled once per SIMD level: each level's entry
// point carries its target attribute and flattens the template into
// itself, so GCC vectorizes the row loops for that level. The contiguous
// row loop (stride 1) vectorizes at every level; strided rows go lane by
// lane. Contraction is off: products and sums round apart, as specified.
#pragma GCC optimize("fp-contract=off")
#include "kernels/conv_plane.h"

#include <algorithm>

#include "kernels/isa.h"
#include "kernels/simd.h"

namespace bnorm::kernels {
namespace {

// y[0..n) += wv * X: X = xs[(i - lo) * stride] inside [lo, hi), 0 elsewhere.
template <class T>
inline void add_row(T* __restrict y, const T* __restrict xs, size_t n, size_t stride, size_t lo, size_t hi,
                    T wv) noexcept {
  const T zero = wv * T(0);
  for (size_t i = 0; i < lo; ++i) y[i] += zero;
  T* __restrict yl = y + lo;
  const size_t len = hi - lo;
  if (stride == 1) {
    for (size_t j = 0; j < len; ++j) yl[j] += wv * xs[j];
  } else {
    for (size_t j = 0; j < len; ++j) yl[j] += wv * xs[j * stride];
  }
  for (size_t i = hi; i < n; ++i) y[i] += zero;
}

// The output columns [lo, hi) whose input column ox*stride + off - pad is
// inside [0, in).
inline void valid_columns(size_t n, size_t stride, size_t off, size_t pad, size_t in, size_t& lo,
                          size_t& hi) noexcept {
  lo = off >= pad ? 0 : (pad - off + stride - 1) / stride;
  const size_t end = in + pad;  // ix < in  <=>  ox*stride + off < in + pad
  hi = off >= end ? 0 : (end - off + stride - 1) / stride;
  hi = std::min(hi, n);
  lo = std::min(lo, hi);
}

template <class T>
inline void plane_body(const T* x, const T* w, T* y, const ConvPlane& s) noexcept {
  for (size_t oy = 0; oy < s.out_h; ++oy) {
    T* yr = y + oy * s.out_w;
    std::fill(yr, yr + s.out_w, T(0));
    for (size_t ky = 0; ky < s.kernel_h; ++ky) {
      const size_t iy_pad = oy * s.stride_h + ky * s.dil_h;  // iy + pad_h
      const bool row = iy_pad >= s.pad_h && iy_pad - s.pad_h < s.in_h;
      const T* xr = row ? x + (iy_pad - s.pad_h) * s.in_w : x;
      for (size_t kx = 0; kx < s.kernel_w; ++kx) {
        const size_t off = kx * s.dil_w;
        size_t lo = 0, hi = 0;
        if (row) valid_columns(s.out_w, s.stride_w, off, s.pad_w, s.in_w, lo, hi);
        // Column ox reads xr[ox*stride + off - pad], from column lo on.
        const T* xs = hi > lo ? xr + (lo * s.stride_w + off - s.pad_w) : xr;
        add_row(yr, xs, s.out_w, s.stride_w, lo, hi, w[ky * s.kernel_w + kx]);
      }
    }
  }
}

BNORM_ENTRY_GENERIC void plane_generic(const float* x, const float* w, float* y, const ConvPlane& s) noexcept {
  plane_body(x, w, y, s);
}
BNORM_ENTRY_AVX2 void plane_avx2(const float* x, const float* w, float* y, const ConvPlane& s) noexcept {
  plane_body(x, w, y, s);
}
BNORM_ENTRY_AVX512 void plane_avx512(const float* x, const float* w, float* y, const ConvPlane& s) noexcept {
  plane_body(x, w, y, s);
}
BNORM_ENTRY_GENERIC void plane_generic(const double* x, const double* w, double* y, const ConvPlane& s) noexcept {
  plane_body(x, w, y, s);
}
BNORM_ENTRY_AVX2 void plane_avx2(const double* x, const double* w, double* y, const ConvPlane& s) noexcept {
  plane_body(x, w, y, s);
}
BNORM_ENTRY_AVX512 void plane_avx512(const double* x, const double* w, double* y, const ConvPlane& s) noexcept {
  plane_body(x, w, y, s);
}

template <class T>
void dispatch(const T* x, const T* w, T* y, const ConvPlane& s) noexcept {
  switch (active_isa()) {
    case Isa::Avx512: return plane_avx512(x, w, y, s);
    case Isa::Avx2: return plane_avx2(x, w, y, s);
    case Isa::Generic: return plane_generic(x, w, y, s);
  }
}

}  // namespace

void conv_plane(const float* x, const float* w, float* y, const ConvPlane& s) noexcept { dispatch(x, w, y, s); }
void conv_plane(const double* x, const double* w, double* y, const ConvPlane& s) noexcept { dispatch(x, w, y, s); }

}  // namespace bnorm::kernels
