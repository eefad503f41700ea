// Bulk f16/bf16 <-> f32 conversions (see convert.h): the loads and stores
// of simd.h, which do the conversions, over spans split into tasks.
#pragma GCC diagnostic ignored "-Wpsabi"  // vector arguments of always-inlined helpers

#include "kernels/convert.h"

#include "kernels/elementwise.h"
#include "kernels/isa.h"
#include "kernels/simd.h"

namespace bnorm::kernels {
namespace {

template <class I, class Tin, class Tout>
inline void convert_body(const Tin* x, Tout* y, size_t n, bool stream) noexcept {
  using V = detail::VecOf<I, Tin>;
  detail::map_span<I>(x, y, n, stream, [](const V& v, size_t, size_t) { return v; });
}

template <class Tin, class Tout>
BNORM_ENTRY_GENERIC void convert_generic(const Tin* x, Tout* y, size_t n, bool stream) {
  convert_body<simd::Generic>(x, y, n, stream);
}
template <class Tin, class Tout>
BNORM_ENTRY_AVX2 void convert_avx2(const Tin* x, Tout* y, size_t n, bool stream) {
  convert_body<simd::Avx2>(x, y, n, stream);
}
template <class Tin, class Tout>
BNORM_ENTRY_AVX512 void convert_avx512(const Tin* x, Tout* y, size_t n, bool stream) {
  convert_body<simd::Avx512>(x, y, n, stream);
}

template <class Tin, class Tout>
void convert(const Tin* x, Tout* y, size_t n) noexcept {
  const bool stream = n * sizeof(Tout) >= streaming_threshold_bytes();
  const bool parallel = n >= detail::kParallelMinElements;
  const size_t tasks = detail::task_count(n, n, parallel);
  const Isa isa = active_isa();
  detail::for_tasks(tasks, parallel, stream, [&](size_t t) {
    const size_t begin = detail::task_begin(t, tasks, n);
    const size_t count = detail::task_begin(t + 1, tasks, n) - begin;
    switch (isa) {
      case Isa::Avx512: return convert_avx512(x + begin, y + begin, count, stream);
      case Isa::Avx2: return convert_avx2(x + begin, y + begin, count, stream);
      case Isa::Generic: return convert_generic(x + begin, y + begin, count, stream);
    }
  });
}

}  // namespace

void convert_f16_to_f32(const f16* x, float* y, size_t n) noexcept { convert(x, y, n); }
void convert_f32_to_f16(const float* x, f16* y, size_t n) noexcept { convert(x, y, n); }
void convert_bf16_to_f32(const bf16* x, float* y, size_t n) noexcept { convert(x, y, n); }
void convert_f32_to_bf16(const float* x, bf16* y, size_t n) noexcept { convert(x, y, n); }

}  // namespace bnorm::kernels
