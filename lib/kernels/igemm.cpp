// The entry point of igemm.h: the empty cases, the operands made one kind
// (A' uint8, B' int8, igemm.h), the split of C's columns across OpenMP
// threads (multiples of 64, whole panels at every level) and the dispatch
// to the active level's loops.
#include "kernels/igemm.h"

#include <omp.h>

#include <algorithm>

#include "kernels/igemm_impl.h"
#include "kernels/isa.h"

namespace bnorm::kernels {
namespace {

// Below this many multiply-adds a product runs on the calling thread.
constexpr size_t kParallelWork = size_t{1} << 22;

void run_level(const detail::IgemmArgs& g) noexcept {
  switch (active_isa()) {
    case Isa::Avx512:
      return avx512_vnni_active() ? detail::igemm_avx512_vnni(g) : detail::igemm_avx512(g);
    case Isa::Avx2: return detail::igemm_avx2(g);
    case Isa::Generic: return detail::igemm_generic(g);
  }
}

}  // namespace

void igemm(const IgemmOperand& a, const IgemmOperand& b, int32_t* c, size_t ldc, size_t m, size_t n,
           size_t k) noexcept {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (size_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0);
    return;
  }
  const detail::IgemmArgs g{static_cast<const uint8_t*>(a.data), a.ld, static_cast<uint8_t>(a.is_signed ? 0x80 : 0),
                            a.zero, a.zero_step, a.is_signed ? 128 : 0,
                            static_cast<const uint8_t*>(b.data), b.ld, static_cast<uint8_t>(b.is_signed ? 0 : 0x80),
                            b.zero, b.zero_step, b.is_signed ? 0 : -128,
                            c, ldc, m, n, k};
  constexpr size_t kStep = 64;
  const size_t steps = (n + kStep - 1) / kStep;
  const int threads = static_cast<int>(std::min<size_t>(steps, static_cast<size_t>(omp_get_max_threads())));
  if (threads <= 1 || m * n * k < kParallelWork || omp_in_parallel()) return run_level(g);
#pragma omp parallel num_threads(threads)
  {
    const size_t t = static_cast<size_t>(omp_get_thread_num()), nt = static_cast<size_t>(omp_get_num_threads());
    const size_t j0 = std::min(n, steps * t / nt * kStep), j1 = std::min(n, steps * (t + 1) / nt * kStep);
    if (j1 > j0) {
      detail::IgemmArgs part = g;
      part.b += j0;
      part.zb = g.zb ? g.zb + j0 * g.zb_step : nullptr;
      part.c += j0;
      part.n = j1 - j0;
      run_level(part);
    }
  }
}

}  // namespace bnorm::kernels
