// conv_plane.h's loops, compiled once per SIMD level: each level's entry
// point carries its target attribute and flattens the template into
// itself. Strides 1 and 2 (depthwise layers): up to four vectors of output
// columns at a time keep their sums in registers through every kernel
// position (512-bit or 256-bit vectors at the AVX-512 level, as gemm does:
// isa.h, wide_products_active()), columns near the border one by one.
// Other strides: one kernel position at a time over the whole output row,
// vectorized by GCC where it can. Contraction is off: every product is
// fused with its sum explicitly (simd::fmadd, std::fma), as specified.
#pragma GCC optimize("fp-contract=off")
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers
#include "kernels/conv_plane.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/isa.h"
#include "kernels/simd.h"

namespace bnorm::kernels {
namespace {

// y[0..n) += wv * X: X = xs[(i - lo) * stride] inside [lo, hi), 0 elsewhere.
template <class T>
inline void add_row(T* __restrict y, const T* __restrict xs, size_t n, size_t stride, size_t lo, size_t hi,
                    T wv) noexcept {
  const T zero = wv * T(0);
  for (size_t i = 0; i < lo; ++i) y[i] += zero;  // fma(wv, 0, y) rounds to this
  T* __restrict yl = y + lo;
  const size_t len = hi - lo;
  if (stride == 1) {
    for (size_t j = 0; j < len; ++j) yl[j] = std::fma(wv, xs[j], yl[j]);
  } else {
    for (size_t j = 0; j < len; ++j) yl[j] = std::fma(wv, xs[j * stride], yl[j]);
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

// Row by row, one kernel position at a time over the whole output row
// (any stride).
template <class T>
inline void plane_by_taps(const T* x, const T* w, T* y, const ConvPlane& s, size_t oy) noexcept {
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

// Element ox of an output row whose input rows are `rows` (null: padding).
template <class T>
inline T one_column(const T* const* rows, const T* w, const ConvPlane& s, size_t ox) noexcept {
  T acc = T(0);
  for (size_t ky = 0; ky < s.kernel_h; ++ky)
    for (size_t kx = 0; kx < s.kernel_w; ++kx) {
      const size_t ix_pad = ox * s.stride_w + kx * s.dil_w;  // ix + pad_w
      const bool inside = rows[ky] && ix_pad >= s.pad_w && ix_pad - s.pad_w < s.in_w;
      acc = std::fma(w[ky * s.kernel_w + kx], inside ? rows[ky][ix_pad - s.pad_w] : T(0), acc);
    }
  return acc;
}

// The even lanes of a then b: elements 0, 2, 4, ... of the 2L elements
// from p, for stride 2.
template <class V, class T>
inline V even_lanes(const T* p) noexcept {
  const V a = simd::load_bits<V>(p), b = simd::load_bits<V>(p + simd::lanes<V>());
#if defined(__clang__)
  V v;
  constexpr size_t L = simd::lanes<V>();
  for (size_t l = 0; l < L; ++l) v[l] = l < L / 2 ? a[2 * l] : b[2 * l - L];
  return v;
#else
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  typedef I M __attribute__((vector_size(sizeof(V))));
  M m;
  for (size_t l = 0; l < simd::lanes<V>(); ++l) m[l] = static_cast<I>(2 * l);
  return __builtin_shuffle(a, b, m);
#endif
}

// Stride S (1 or 2): U vectors of output columns from ox, inside the input
// for every kernel column, with their sums in registers through all the
// products.
template <class V, size_t S, size_t U, class T>
inline void columns(const T* const* rows, const T* w, T* yr, const ConvPlane& s, size_t ox) noexcept {
  constexpr size_t L = simd::lanes<V>();
  V acc[U];
#pragma GCC unroll 4
  for (size_t u = 0; u < U; ++u) acc[u] = V{};
  for (size_t ky = 0; ky < s.kernel_h; ++ky) {
    const T* row = rows[ky];
    for (size_t kx = 0; kx < s.kernel_w; ++kx) {
      const T wv = w[ky * s.kernel_w + kx];
      if (!row) {
        const T zero = wv * T(0);
#pragma GCC unroll 4
        for (size_t u = 0; u < U; ++u) acc[u] += zero;
        continue;
      }
      const T* xp = row + (ox * S + kx * s.dil_w - s.pad_w);
#pragma GCC unroll 4
      for (size_t u = 0; u < U; ++u) {
        if constexpr (S == 1) {
          acc[u] = simd::fmadd(wv, simd::load_bits<V>(xp + u * L), acc[u]);
        } else {
          acc[u] = simd::fmadd(wv, even_lanes<V>(xp + u * 2 * L), acc[u]);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (size_t u = 0; u < U; ++u) simd::store_bits(yr + ox + u * L, acc[u]);
}

// Columns [a, b) (inside the input for every kernel column) four vectors,
// then one vector at a time, the last one ending at b; the others one by one.
template <class V, size_t S, class T>
inline void row_vectors(const T* const* rows, const T* w, T* yr, const ConvPlane& s, size_t a, size_t b) noexcept {
  constexpr size_t L = simd::lanes<V>();
  size_t ox = 0;
  for (; ox < a; ++ox) yr[ox] = one_column(rows, w, s, ox);
  for (; ox + 4 * L <= b; ox += 4 * L) columns<V, S, 4>(rows, w, yr, s, ox);
  for (; ox + L <= b; ox += L) columns<V, S, 1>(rows, w, yr, s, ox);
  if (ox < b && b - a >= L) {  // the last vector ends at b: columns before ox get their own value again
    columns<V, S, 1>(rows, w, yr, s, b - L);
    ox = b;
  }
  for (; ox < s.out_w; ++ox) yr[ox] = one_column(rows, w, s, ox);
}

template <class V, size_t S, class T>
inline void plane_vectors(const T* x, const T* w, T* y, const ConvPlane& s) noexcept {
  constexpr size_t kMaxRows = 16;
  // Columns whose every kernel column is inside the input; at stride 2 the
  // vector loads read one element past the last column's, so that one too.
  size_t a = 0, b = s.out_w;
  const size_t in = S == 1 ? s.in_w : s.in_w - 1;
  for (size_t kx = 0; kx < s.kernel_w; ++kx) {
    size_t lo, hi;
    valid_columns(s.out_w, S, kx * s.dil_w, s.pad_w, in, lo, hi);
    a = std::max(a, lo);
    b = std::min(b, hi);
  }
  if (a > b) a = b;
  const T* rows[kMaxRows];
  for (size_t oy = 0; oy < s.out_h; ++oy) {
    for (size_t ky = 0; ky < s.kernel_h; ++ky) {
      const size_t iy_pad = oy * s.stride_h + ky * s.dil_h;  // iy + pad_h
      rows[ky] = iy_pad >= s.pad_h && iy_pad - s.pad_h < s.in_h ? x + (iy_pad - s.pad_h) * s.in_w : nullptr;
    }
    row_vectors<V, S>(rows, w, y + oy * s.out_w, s, a, b);
  }
}

// The vector of half V's lanes (void below 128 bits).
template <class V>
struct Half {
  using type = void;
};
template <>
struct Half<simd::f32x16> {
  using type = simd::f32x8;
};
template <>
struct Half<simd::f32x8> {
  using type = simd::f32x4;
};
template <>
struct Half<simd::f64x8> {
  using type = simd::f64x4;
};
template <>
struct Half<simd::f64x4> {
  using type = simd::f64x2;
};

// Elements of the zero-bordered copy of a small padded plane (16 KiB of floats).
constexpr size_t kBorderedMax = 4096;

template <class V, class T>
inline void plane_vectored(const T* x, const T* w, T* y, const ConvPlane& s) noexcept {
  // Rows too narrow for one vector between their borders (a 10 x 10 map in
  // 16 lanes) take narrower vectors: the same operations on every element.
  using H = typename Half<V>::type;
  if constexpr (!std::is_void_v<H>) {
    if (s.out_w < simd::lanes<V>() + 2 * s.kernel_w) return plane_vectored<H>(x, w, y, s);
  }
  if (s.kernel_h <= 16 && s.stride_w == 1) return plane_vectors<V, 1>(x, w, y, s);
  if (s.kernel_h <= 16 && s.stride_w == 2 && s.in_w > 0) return plane_vectors<V, 2>(x, w, y, s);
  for (size_t oy = 0; oy < s.out_h; ++oy) plane_by_taps(x, w, y, s, oy);
}

// Bytes of the zero-bordered band of input rows the 3 x 3 path copies in.
constexpr size_t kBandBytes = 48 * 1024;

// The 3 x 3 kernel at stride S in both directions, dilation 1, in vectors
// of V, for planes with at least one vector of output columns: the input
// rows of a band of output rows are copied into a zero border first (a
// read there adds fma(w, 0, acc), what a padded position adds), so every
// output column is a vector column; the nine weights stay in registers.
// The last vector of a row ends at the row's end (its first columns get
// their own value again). Per element: fma over (ky, kx) in row-major
// order from 0, as every other path.
template <class V, size_t S, class T>
inline void plane3(const T* x, const T* w, T* y, const ConvPlane& s, T* band, size_t pitch) noexcept {
  constexpr size_t L = simd::lanes<V>();
  const size_t ow = s.out_w, rows_max = kBandBytes / sizeof(T) / pitch, per_band = (rows_max - 3) / S + 1;
  T wk[9];
  for (size_t k = 0; k < 9; ++k) wk[k] = w[k];
  for (size_t oy0 = 0; oy0 < s.out_h; oy0 += per_band) {
    const size_t oy1 = std::min(s.out_h, oy0 + per_band), rows = (oy1 - oy0 - 1) * S + 3;
    for (size_t r = 0; r < rows; ++r) {
      T* d = band + r * pitch;
      const size_t iy_pad = oy0 * S + r;  // iy + pad_h
      size_t done = 0;
      if (iy_pad >= s.pad_h && iy_pad - s.pad_h < s.in_h && s.pad_w < pitch) {
        const T* src = x + (iy_pad - s.pad_h) * s.in_w;
        const size_t n = std::min(s.in_w, pitch - s.pad_w);
        std::fill(d, d + s.pad_w, T(0));
        std::memcpy(d + s.pad_w, src, n * sizeof(T));
        done = s.pad_w + n;
      }
      std::fill(d + done, d + pitch, T(0));
    }
    for (size_t oy = oy0; oy < oy1; ++oy) {
      const T* r0 = band + (oy - oy0) * S * pitch;
      T* yr = y + oy * ow;
      const auto vectors = [&](auto u_count, size_t ox) {
        constexpr size_t U = decltype(u_count)::value;
        V acc[U];
#pragma GCC unroll 4
        for (size_t u = 0; u < U; ++u) acc[u] = V{};
#pragma GCC unroll 3
        for (size_t ky = 0; ky < 3; ++ky) {
          const T* xp = r0 + ky * pitch + ox * S;
#pragma GCC unroll 3
          for (size_t kx = 0; kx < 3; ++kx) {
#pragma GCC unroll 4
            for (size_t u = 0; u < U; ++u) {
              if constexpr (S == 1) {
                acc[u] = simd::fmadd(wk[ky * 3 + kx], simd::load_bits<V>(xp + kx + u * L), acc[u]);
              } else {
                acc[u] = simd::fmadd(wk[ky * 3 + kx], even_lanes<V>(xp + kx + u * 2 * L), acc[u]);
              }
            }
          }
        }
#pragma GCC unroll 4
        for (size_t u = 0; u < U; ++u) simd::store_bits(yr + ox + u * L, acc[u]);
      };
      size_t ox = 0;
      for (; ox + 4 * L <= ow; ox += 4 * L) vectors(std::integral_constant<size_t, 4>{}, ox);
      for (; ox + L <= ow; ox += L) vectors(std::integral_constant<size_t, 1>{}, ox);
      if (ox < ow) vectors(std::integral_constant<size_t, 1>{}, ow - L);
    }
  }
}

// Row pitch of plane3's band: the last vector of a row reads up to column
// (ow - 1) * S + 2, and at stride 2 one more (even_lanes loads 2L).
inline size_t plane3_pitch(const ConvPlane& s) noexcept { return s.stride_w == 1 ? s.out_w + 2 : 2 * s.out_w + 2; }

// Whether plane3 takes the plane, in vectors of V or narrower ones; runs
// it if so.
template <class V, class T>
inline bool plane3_try(const T* x, const T* w, T* y, const ConvPlane& s) noexcept {
  if (s.kernel_h != 3 || s.kernel_w != 3 || s.dil_h != 1 || s.dil_w != 1 || s.stride_h != s.stride_w ||
      s.stride_w > 2 || s.out_h == 0)
    return false;
  const size_t pitch = plane3_pitch(s);
  if (pitch * 3 > kBandBytes / sizeof(T)) return false;
  alignas(64) T band[kBandBytes / sizeof(T)];
  using H = typename Half<V>::type;
  if (s.out_w >= simd::lanes<V>()) {
    s.stride_w == 1 ? plane3<V, 1>(x, w, y, s, band, pitch) : plane3<V, 2>(x, w, y, s, band, pitch);
    return true;
  }
  if constexpr (!std::is_void_v<H>) {
    if (s.out_w >= simd::lanes<H>()) {
      s.stride_w == 1 ? plane3<H, 1>(x, w, y, s, band, pitch) : plane3<H, 2>(x, w, y, s, band, pitch);
      return true;
    }
    using Q = typename Half<H>::type;
    if constexpr (!std::is_void_v<Q>) {
      if (s.out_w >= simd::lanes<Q>()) {
        s.stride_w == 1 ? plane3<Q, 1>(x, w, y, s, band, pitch) : plane3<Q, 2>(x, w, y, s, band, pitch);
        return true;
      }
    }
  }
  return false;
}

// (Not recursive: a template that calls itself is compiled out of line,
// without the level's target attributes.)
template <class V, class T>
inline void plane_body(const T* x, const T* w, T* y, const ConvPlane& s) noexcept {
  if (plane3_try<V>(x, w, y, s)) return;
  // A small padded plane is copied into a zero border first: every output
  // column is then a vector column (one_column's scalar taps cost most of a
  // 10 x 10 map's time). A zero read there adds fma(w, 0, acc), what a
  // position in the padding adds: the same bits.
  if ((s.pad_h || s.pad_w) && s.out_h && s.out_w && s.kernel_h && s.kernel_w && s.kernel_h <= 16 &&
      s.stride_w <= 2) {
    const size_t ph = (s.out_h - 1) * s.stride_h + (s.kernel_h - 1) * s.dil_h + 1;
    const size_t pw = (s.out_w - 1) * s.stride_w + (s.kernel_w - 1) * s.dil_w + 1 + (s.stride_w == 2);
    if (ph * pw <= kBorderedMax) {
      alignas(64) T bordered[kBorderedMax];
      std::fill(bordered, bordered + ph * pw, T(0));
      for (size_t iy = 0; iy < s.in_h && iy + s.pad_h < ph; ++iy) {
        const size_t n = std::min(s.in_w, pw > s.pad_w ? pw - s.pad_w : 0);
        std::copy(x + iy * s.in_w, x + iy * s.in_w + n, bordered + (iy + s.pad_h) * pw + s.pad_w);
      }
      ConvPlane b = s;
      b.in_h = ph;
      b.in_w = pw;
      b.pad_h = b.pad_w = 0;
      return plane_vectored<V>(bordered, w, y, b);
    }
  }
  plane_vectored<V>(x, w, y, s);
}

BNORM_ENTRY_GENERIC void plane_generic(const float* x, const float* w, float* y, const ConvPlane& s) noexcept {
  plane_body<simd::f32x4>(x, w, y, s);
}
BNORM_ENTRY_AVX2 void plane_avx2(const float* x, const float* w, float* y, const ConvPlane& s) noexcept {
  plane_body<simd::f32x8>(x, w, y, s);
}
BNORM_ENTRY_AVX512 void plane_avx512(const float* x, const float* w, float* y, const ConvPlane& s) noexcept {
  plane_body<simd::f32x8>(x, w, y, s);
}
BNORM_ENTRY_AVX512 void plane_avx512_wide(const float* x, const float* w, float* y, const ConvPlane& s) noexcept {
  plane_body<simd::f32x16>(x, w, y, s);
}
BNORM_ENTRY_GENERIC void plane_generic(const double* x, const double* w, double* y, const ConvPlane& s) noexcept {
  plane_body<simd::f64x2>(x, w, y, s);
}
BNORM_ENTRY_AVX2 void plane_avx2(const double* x, const double* w, double* y, const ConvPlane& s) noexcept {
  plane_body<simd::f64x4>(x, w, y, s);
}
BNORM_ENTRY_AVX512 void plane_avx512(const double* x, const double* w, double* y, const ConvPlane& s) noexcept {
  plane_body<simd::f64x4>(x, w, y, s);
}
BNORM_ENTRY_AVX512 void plane_avx512_wide(const double* x, const double* w, double* y, const ConvPlane& s) noexcept {
  plane_body<simd::f64x8>(x, w, y, s);
}

template <class T>
void dispatch(const T* x, const T* w, T* y, const ConvPlane& s) noexcept {
  switch (active_isa()) {
    case Isa::Avx512: return wide_products_active() ? plane_avx512_wide(x, w, y, s) : plane_avx512(x, w, y, s);
    case Isa::Avx2: return plane_avx2(x, w, y, s);
    case Isa::Generic: return plane_generic(x, w, y, s);
  }
}

}  // namespace

void conv_plane(const float* x, const float* w, float* y, const ConvPlane& s) noexcept { dispatch(x, w, y, s); }
void conv_plane(const double* x, const double* w, double* y, const ConvPlane& s) noexcept { dispatch(x, w, y, s); }

}  // namespace bnorm::kernels
