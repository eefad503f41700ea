// The body of the Avx512 LayerNormalization/RMSNormalization rows (the
// algorithm: layer_norm_rows_avx512.cpp's header), included inside an anonymous namespace by
// layer_norm_rows_avx512.cpp (BNORM_LN_TARGET = the Avx512 level, kBf16Insn
// false) and layer_norm_rows_avx512_bf16.cpp (the level plus AVX512-BF16,
// kBf16Insn true: bfloat16 outputs rounded by VCVTNEPS2BF16). Same bits
// either way.
#pragma once

#define BNORM_LN512_MEMBER inline __attribute__((target(BNORM_LN_TARGET), always_inline))
#define BNORM_LN512 static BNORM_LN512_MEMBER

BNORM_LN512 __mmask8 first(size_t n) {
  return n >= 8 ? static_cast<__mmask8>(0xFF) : static_cast<__mmask8>((1u << n) - 1);
}

// 8 elements as float64 (exact); masked: lanes outside k are 0.
template <class X>
BNORM_LN512 __m512d load8(const X* x, __mmask8 k = 0xFF) {
  __m256 f;
  if constexpr (std::is_same_v<X, float>) {
    f = k == 0xFF ? _mm256_loadu_ps(x) : _mm256_maskz_loadu_ps(k, x);
  } else {
    const __m128i h = k == 0xFF ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(x))
                                : _mm_maskz_loadu_epi16(k, x);
    if constexpr (std::is_same_v<X, f16>) {
      f = _mm256_cvtph_ps(h);
    } else {
      f = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
  }
  return _mm512_cvtps_pd(f);
}

// norm_common.h's odd_float_bits of 8 doubles: the double truncated to
// float (rounded toward zero, which is where odd_float_bits' step back from
// a rounding away from zero lands, overflow included), its last bit set
// when inexact. NaN lanes as layer_norm.cpp's AVX2 loops treat them (the
// payload truncated, the last bit set).
//
// For float16 (kF16) the test of exactness is that the 29 bits float drops
// are zero, one integer test instead of converting back: it is the test
// wherever it matters. It errs only below float's normal range (where
// float16 rounds to zero whatever the last bit), beyond it (where the
// truncation, float's largest finite, is odd already) and on NaN
// payloads (whose last bit float16 drops).
template <bool kF16>
BNORM_LN512 __m256i odd_float8(__m512d v) {
  const __m256 f = _mm512_cvt_roundpd_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  __mmask8 inexact;
  if constexpr (kF16) {
    inexact = _mm512_test_epi64_mask(_mm512_castpd_si512(v), _mm512_set1_epi64(0x1FFFFFFF));
  } else {
    inexact = _mm512_cmp_pd_mask(_mm512_cvtps_pd(f), v, _CMP_NEQ_UQ);
  }
  return _mm256_mask_or_epi32(_mm256_castps_si256(f), inexact, _mm256_castps_si256(f), _mm256_set1_epi32(1));
}

// With AVX512-BF16 (kBf16Insn): b (odd float bits from the integer test of
// exactness, as for float16) to bfloat16 with VCVTNEPS2BF16, which rounds
// to nearest even and encodes NaN as the integer path does. Returns false,
// with b recomputed by the exact test, when a lane is a float subnormal:
// the instruction flushes those, and the integer test errs below float's
// normal range, where bfloat16 still has subnormals.
BNORM_LN512 bool bf16_insn(__m256i& b, __m128i& h, __m512d v) {
  if constexpr (kBf16Insn) {
    if (__builtin_expect(_mm256_fpclass_ps_mask(_mm256_castsi256_ps(b), 0x20) == 0, 1)) {
      h = (__m128i)_mm256_cvtneps_pbh(_mm256_castsi256_ps(b));
      return true;
    }
    b = odd_float8<false>(v);
  }
  (void)b, (void)h, (void)v;
  return false;
}

// v rounded once to Y into y[0..8) (lanes of k). kStream: a full vector
// is stored non-temporally (y then aligned to 8 * sizeof(Y) bytes).
template <class Y, bool kStream = false>
BNORM_LN512 void store8(Y* y, __m512d v, __mmask8 k = 0xFF) {
  if constexpr (std::is_same_v<Y, double>) {
    if (kStream && k == 0xFF) _mm512_stream_pd(y, v);
    else _mm512_mask_storeu_pd(y, k, v);
  } else if constexpr (std::is_same_v<Y, float>) {
    if (kStream && k == 0xFF) _mm256_stream_ps(y, _mm512_cvtpd_ps(v));
    else if (k == 0xFF) _mm256_storeu_ps(y, _mm512_cvtpd_ps(v));
    else _mm256_mask_storeu_ps(y, k, _mm512_cvtpd_ps(v));
  } else {
    __m256i b = odd_float8<std::is_same_v<Y, f16> || (kBf16Insn && std::is_same_v<Y, bf16>)>(v);
    __m128i h;
    if constexpr (std::is_same_v<Y, f16>) {
      h = _mm256_cvtps_ph(_mm256_castsi256_ps(b), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    } else if (!bf16_insn(b, h, v)) {
      const __m256i one = _mm256_set1_epi32(1);
      const __m256i rounded = _mm256_srli_epi32(
          _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7FFF)), _mm256_and_si256(_mm256_srli_epi32(b, 16), one)), 16);
      const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(0x40));
      const __m256 f = _mm256_castsi256_ps(b);
      const __mmask8 nan = _mm256_cmp_ps_mask(f, f, _CMP_UNORD_Q);
      h = _mm256_cvtepi32_epi16(_mm256_mask_blend_epi32(nan, rounded, quiet_nan));
    }
    if (kStream && k == 0xFF) _mm_stream_si128(reinterpret_cast<__m128i*>(y), h);
    else if (k == 0xFF) _mm_storeu_si128(reinterpret_cast<__m128i*>(y), h);
    else _mm_mask_storeu_epi16(y, k, h);
  }
}

// moments.cpp's add_lanes on lanes 0-7, 8-15, 16-23, 24-31: the same sums.
BNORM_LN512 double add_lanes(__m512d a0, __m512d a1, __m512d a2, __m512d a3) {
  a0 = _mm512_add_pd(a0, a2);
  a1 = _mm512_add_pd(a1, a3);
  a0 = _mm512_add_pd(a0, a1);
  const __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(a0), _mm512_extractf64x4_pd(a0, 1));
  const __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
  return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
}

// moments.cpp's shifted_moments of one chunk (n <= kMomentsChunk), a
// block of 32 elements at a time (so that another row's normalization can
// ride along), then the tail and the sums.
struct ChunkSums {
  double shift;
  __m512d k, s1[4], s2[4];

  template <class X>
  BNORM_LN512_MEMBER explicit ChunkSums(const X* x, size_t n) {
    const size_t head = std::min<size_t>(n, 32);
    __m512d l[4];
    for (size_t v = 0; v < 4; ++v) l[v] = head > 8 * v ? load8(x + 8 * v, first(head - 8 * v)) : _mm512_setzero_pd();
    shift = add_lanes(l[0], l[1], l[2], l[3]) / static_cast<double>(head);
    if (!std::isfinite(shift)) shift = 0.0;
    k = _mm512_set1_pd(shift);
    for (size_t v = 0; v < 4; ++v) s1[v] = s2[v] = _mm512_setzero_pd();
  }

  template <class X>
  BNORM_LN512_MEMBER void block(const X* x) {
    for (size_t v = 0; v < 4; ++v) {
      const __m512d e = _mm512_sub_pd(load8(x + 8 * v), k);
      s1[v] = _mm512_add_pd(s1[v], e);
      s2[v] = _mm512_fmadd_pd(e, e, s2[v]);
    }
  }

  // Elements [i, n) (i a multiple of 32), then the moments.
  template <class X>
  BNORM_LN512_MEMBER Moments finish(const X* x, size_t i, size_t n) {
    for (; i + 32 <= n; i += 32) block(x + i);
    for (size_t v = 0; v < 4 && i + 8 * v < n; ++v) {
      const __mmask8 m = first(n - i - 8 * v);
      const __m512d e = _mm512_sub_pd(load8(x + i + 8 * v, m), k);
      s1[v] = _mm512_mask_add_pd(s1[v], m, s1[v], e);
      s2[v] = _mm512_mask3_fmadd_pd(e, e, s2[v], m);
    }
    const double count = static_cast<double>(n);
    const double sum1 = add_lanes(s1[0], s1[1], s1[2], s1[3]);
    const double m2 = add_lanes(s2[0], s2[1], s2[2], s2[3]) - sum1 * (sum1 / count);
    return {count, shift * count + sum1, m2 < 0 ? 0.0 : m2};
  }
};

// layer_norm.cpp's sum_squares (element i into partial sum i % 8), in the
// same blocks of 32.
struct SquareSums {
  __m512d acc;

  BNORM_LN512_MEMBER SquareSums() : acc(_mm512_setzero_pd()) {}

  template <class X>
  BNORM_LN512_MEMBER void block(const X* x) {
    for (size_t v = 0; v < 4; ++v) {
      const __m512d q = load8(x + 8 * v);
      acc = _mm512_add_pd(acc, _mm512_mul_pd(q, q));
    }
  }

  template <class X>
  BNORM_LN512_MEMBER double finish(const X* x, size_t i, size_t n) {
    for (; i + 8 <= n; i += 8) {
      const __m512d q = load8(x + i);
      acc = _mm512_add_pd(acc, _mm512_mul_pd(q, q));
    }
    if (i < n) {
      const __mmask8 m = first(n - i);
      const __m512d q = load8(x + i, m);
      acc = _mm512_mask_add_pd(acc, m, acc, _mm512_mul_pd(q, q));
    }
    double a[8];
    _mm512_storeu_pd(a, acc);
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  }
};

// y = ((x - m) * inv) * s (+ b), 8 at a time (kStream: as store8).
template <bool kCenter, bool kBias, bool kStream = false, class X, class Y>
BNORM_LN512 void scale8(const X* x, Y* y, __m512d m, __m512d inv, const double* s, const double* b,
                        __mmask8 k = 0xFF) {
  __m512d t = load8(x, k);
  if constexpr (kCenter) t = _mm512_sub_pd(t, m);
  t = _mm512_mul_pd(t, inv);
  t = _mm512_mul_pd(t, k == 0xFF ? _mm512_loadu_pd(s) : _mm512_maskz_loadu_pd(k, s));
  if constexpr (kBias) t = _mm512_add_pd(t, k == 0xFF ? _mm512_loadu_pd(b) : _mm512_maskz_loadu_pd(k, b));
  store8<Y, kStream>(y, t, k);
}

// A row's mean (RMS: 0) and 1 / sqrt(var + epsilon), as layer_norm.cpp's.
struct RowStats {
  double mu, inv;
};

template <bool kRms>
BNORM_LN512 RowStats row_stats(double mu, double var, double epsilon) {
  return {kRms ? 0.0 : mu, 1.0 / std::sqrt(var + epsilon)};
}

// The statistics of row x alone (any length > 0).
template <bool kRms, class X>
BNORM_LN512 RowStats stats_alone(const X* x, size_t n, double epsilon) {
  if constexpr (kRms) {
    return row_stats<true>(0, SquareSums().finish(x, 0, n) / static_cast<double>(n), epsilon);
  } else {
    Moments total;
    for (size_t begin = 0; begin < n; begin += kMomentsChunk) {
      const size_t count = std::min(kMomentsChunk, n - begin);
      total = merge(total, ChunkSums(x + begin, count).finish(x + begin, 0, count));
    }
    return row_stats<false>(total.mean(), total.variance(), epsilon);
  }
}

// Row x normalized into y from st, while the statistics of row `next`
// (null: none; n <= kMomentsChunk) are taken in the same loop: the sums'
// chains of additions overlap the normalization's work, and reading the
// next row overlaps writing this one. Returns next's statistics.
template <bool kRms, bool kBias, bool kStream, class X, class Y>
BNORM_LN512 RowStats norm_row(const X* x, Y* y, size_t n, RowStats st, const double* s,
                              const double* b, const X* next, double epsilon) {
  const __m512d vm = _mm512_set1_pd(st.mu);
  const __m512d vinv = _mm512_set1_pd(st.inv);
  size_t i = 0;
  const auto norm32 = [&](size_t j) {
    for (size_t v = 0; v < 4; ++v) {
      const size_t e = j + 8 * v;
      scale8<!kRms, kBias, kStream>(x + e, y + e, vm, vinv, s + e, kBias ? b + e : b);
    }
  };
  RowStats out{0, 0};
  if (next != nullptr) {
    if constexpr (kRms) {
      SquareSums sums;
      for (; i + 32 <= n; i += 32) {
        sums.block(next + i);
        norm32(i);
      }
      out = row_stats<true>(0, sums.finish(next, i, n) / static_cast<double>(n), epsilon);
    } else {
      ChunkSums sums(next, n);
      for (; i + 32 <= n; i += 32) {
        sums.block(next + i);
        norm32(i);
      }
      const Moments m = sums.finish(next, i, n);
      out = row_stats<false>(m.mean(), m.variance(), epsilon);
    }
  }
  for (; i + 8 <= n; i += 8) scale8<!kRms, kBias, kStream>(x + i, y + i, vm, vinv, s + i, kBias ? b + i : b);
  if (i < n) scale8<!kRms, kBias>(x + i, y + i, vm, vinv, s + i, kBias ? b + i : b, first(n - i));
  return out;
}

// RMSNormalization of 16-bit data, rows of up to kRmsRow elements. Each
// row is decoded once, into a float64 copy in L1 (exact: the values load8
// gives), by the loop that takes its sum of squares, and normalized from
// that copy; that loop is the previous row's normalization (the row after
// it decoded while it is normalized, as norm_row fuses them). On Zen 4 the
// conversions are the bottleneck of 16-bit rows: this drops one
// f16 -> float -> float64 decoding of the two an element took. The sums are
// SquareSums' (element i into partial sum i % 8, in order), the
// normalization scale8's operations: the same bits.
constexpr size_t kRmsRow = 1024;

// 8 elements of x decoded into d[0..8) (lanes of m; the others 0), their
// squares added to acc.
template <class X>
BNORM_LN512 void square8(const X* x, double* d, __m512d& acc, __mmask8 m = 0xFF) {
  const __m512d q = load8(x, m);
  _mm512_store_pd(d, q);
  acc = m == 0xFF ? _mm512_add_pd(acc, _mm512_mul_pd(q, q)) : _mm512_mask_add_pd(acc, m, acc, _mm512_mul_pd(q, q));
}

// SquareSums::finish's sum of the eight partial sums.
BNORM_LN512 double lanes_sum(__m512d acc) {
  double a[8];
  _mm512_storeu_pd(a, acc);
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// y[0..8) (lanes of k) from the decoded d: scale8<false, false>.
template <bool kStream, class Y>
BNORM_LN512 void rms8(const double* d, Y* y, __m512d inv, const double* s, __mmask8 k = 0xFF) {
  __m512d t = k == 0xFF ? _mm512_load_pd(d) : _mm512_maskz_load_pd(k, d);
  t = _mm512_mul_pd(t, inv);
  t = _mm512_mul_pd(t, k == 0xFF ? _mm512_loadu_pd(s) : _mm512_maskz_loadu_pd(k, s));
  store8<Y, kStream>(y, t, k);
}

// Row x (n elements) decoded into d; returns its sum of squares.
template <class X>
BNORM_LN512 double decode_row(const X* x, double* d, size_t n) {
  __m512d acc = _mm512_setzero_pd();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) square8(x + i, d + i, acc);
  if (i < n) square8(x + i, d + i, acc, first(n - i));
  return lanes_sum(acc);
}

// The decoded row d normalized into y; when `next` is not null, row next
// decoded into dn in the same loop, returning its sum of squares.
template <bool kStream, class X, class Y>
BNORM_LN512 double scale_decode(const double* d, Y* y, size_t n, double inv, const double* s, const X* next,
                                double* dn) {
  const __m512d vinv = _mm512_set1_pd(inv);
  __m512d acc = _mm512_setzero_pd();
  size_t i = 0;
  if (next != nullptr) {
    for (; i + 8 <= n; i += 8) {
      square8(next + i, dn + i, acc);
      rms8<kStream>(d + i, y + i, vinv, s + i);
    }
    if (i < n) square8(next + i, dn + i, acc, first(n - i));
  } else {
    for (; i + 8 <= n; i += 8) rms8<kStream>(d + i, y + i, vinv, s + i);
  }
  if (i < n) rms8<false>(d + i, y + i, vinv, s + i, first(n - i));
  return lanes_sum(acc);
}

// `stream`: full vectors of y stored non-temporally in rows that start
// aligned to them.
template <class X, class Y>
BNORM_LN512 void rms_rows_decoded(const X* x, Y* y, size_t r0, size_t r1, size_t len, const RowNormParams& p,
                                  double* mean, double* inv_std, bool stream) {
  // The loop stores one copy while loading the other, and the scale, at
  // the same index: a load whose address is a multiple of 4 KiB from a
  // store's waits for it (measured: up to twice as slow). So the copies are
  // 8.5 KiB apart, not 8, and placed at 2 and 2.5 KiB (modulo 4) from
  // the scale.
  constexpr size_t kApart = kRmsRow + 64;
  alignas(64) double buffer[2 * kApart + 512];
  const uintptr_t from_scale = (reinterpret_cast<uintptr_t>(buffer) - reinterpret_cast<uintptr_t>(p.scale)) % 4096;
  double* const base = buffer + (2048 + 4096 - from_scale) % 4096 / 64 * 8;
  double* const d[2] = {base, base + kApart};
  double sum = decode_row(x + r0 * len, d[0], len);
  for (size_t r = r0; r < r1; ++r) {
    const double inv = row_stats<true>(0, sum / static_cast<double>(len), p.epsilon).inv;
    if (mean != nullptr) mean[r] = 0;
    if (inv_std != nullptr) inv_std[r] = inv;
    Y* yr = y + r * len;
    const double* s = p.scale + r * p.scale_stride;
    const X* next = r + 1 < r1 ? x + (r + 1) * len : nullptr;
    const double* cur = d[(r - r0) & 1];
    double* dn = d[(r - r0 + 1) & 1];
    sum = stream && reinterpret_cast<uintptr_t>(yr) % (8 * sizeof(Y)) == 0
              ? scale_decode<true>(cur, yr, len, inv, s, next, dn)
              : scale_decode<false>(cur, yr, len, inv, s, next, dn);
  }
}

template <bool kRms, bool kBias, class X, class Y>
BNORM_LN512 void rows_of(const X* x, Y* y, size_t r0, size_t r1, size_t len, const RowNormParams& p,
                         double* mean, double* inv_std, bool stream) {
  // Rows fuse when this call's data fit in L2 (1 MiB on Zen 4): out of
  // cache, f32 [32*512, 768] measured 10% (LayerNormalization) to 20%
  // (RMSNormalization) slower fused than with a separate pass of sums (a
  // short loop, which keeps more reads in flight) on Zen 4; in cache fused
  // was 5 to 15% faster. Where rows_fusion_active() (isa.h: AMD Zen 5),
  // LayerNormalization rows fuse at every size, and their outputs beyond
  // the streaming threshold are stored non-temporally: on Zen 5 that was
  // 25 to 35% faster out of cache, while streaming the unfused loop was
  // slower than not (docs/performance.md, 2026-11-27).
  constexpr size_t kFuseBytes = size_t{1} << 20;
  const bool fused = len <= kMomentsChunk &&
                     ((!kRms && rows_fusion_active()) || (r1 - r0) * len * (sizeof(X) + sizeof(Y)) <= kFuseBytes);
  stream = stream && fused;
  RowStats st = stats_alone<kRms>(x + r0 * len, len, p.epsilon);
  for (size_t r = r0; r < r1; ++r) {
    if (mean != nullptr) mean[r] = st.mu;
    if (inv_std != nullptr) inv_std[r] = st.inv;
    const X* next = r + 1 < r1 ? x + (r + 1) * len : nullptr;
    Y* const yr = y + r * len;
    const double* const s = p.scale + r * p.scale_stride;
    const double* const b = kBias ? p.bias + r * p.bias_stride : nullptr;
    const X* const fuse_next = fused ? next : nullptr;
    const RowStats next_st =
        stream && reinterpret_cast<uintptr_t>(yr) % (8 * sizeof(Y)) == 0
            ? norm_row<kRms, kBias, true>(x + r * len, yr, len, st, s, b, fuse_next, p.epsilon)
            : norm_row<kRms, kBias, false>(x + r * len, yr, len, st, s, b, fuse_next, p.epsilon);
    if (next != nullptr) st = fused ? next_st : stats_alone<kRms>(next, len, p.epsilon);
  }
}

template <class X, class Y>
__attribute__((target(BNORM_LN_TARGET))) void rows(const X* x, Y* y, size_t r0, size_t r1, size_t len,
                                                      const RowNormParams& p, double* mean,
                                                      double* inv_std, bool stream) {
  if (len == 0) {  // statistics of an empty row: NaN (RMS: mean 0)
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    for (size_t r = r0; r < r1; ++r) {
      if (mean != nullptr) mean[r] = p.rms ? 0 : nan;
      if (inv_std != nullptr) inv_std[r] = 1.0 / std::sqrt(nan + p.epsilon);
    }
  } else if (p.rms && !std::is_same_v<X, float> && len <= kRmsRow) {
    rms_rows_decoded(x, y, r0, r1, len, p, mean, inv_std, stream);
  } else if (p.rms) {
    rows_of<true, false>(x, y, r0, r1, len, p, mean, inv_std, stream);
  } else if (p.bias == nullptr) {
    rows_of<false, false>(x, y, r0, r1, len, p, mean, inv_std, stream);
  } else {
    rows_of<false, true>(x, y, r0, r1, len, p, mean, inv_std, stream);
  }
}

