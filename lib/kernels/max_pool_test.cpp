// max_pool.h at every SIMD level: strides 1 to 3, dilations 1 and 2, window
// widths 1 to 3 and one to three rows, every length across the vector
// tails, against the fold written out (first element, then v > y ? v : y);
// NaNs first and later in a window, and +0 against -0; nothing read past
// the last element of a row (the rows end at a page the process may not
// read), nothing written past y[n - 1].
#include "kernels/max_pool.h"

#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

TEST_CASE("max_pool_stretch folds each window in order at every level", "[kernels]") {
  testing::SettingsGuard guard;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE)), count = page / sizeof(float);
  // Three readable pages then one that is not: the last row ends right before it.
  void* map = ::mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(map != MAP_FAILED);
  auto* base = static_cast<float*>(map);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pick(-8, 8);
  for (size_t i = 0; i < 3 * count; ++i) base[i] = static_cast<float>(pick(rng)) * 0.5f;  // many ties
  for (size_t i = 0; i < 3 * count; i += 37) base[i] = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 5; i < 3 * count; i += 11) base[i] = -0.0f;
  REQUIRE(::mprotect(static_cast<char*>(map) + 3 * page, page, PROT_NONE) == 0);
  const float* end = base + 3 * count;
  for (Isa isa : testing::available_isas()) {
    set_active_isa(isa);
    for (size_t sx = 1; sx <= 3; ++sx)
      for (size_t dx = 1; dx <= 2; ++dx)
        for (size_t kw = 1; kw <= 3; ++kw)
          for (size_t nrows = 1; nrows <= 3; ++nrows)
            for (size_t n = 1; n <= 40; ++n) {
              INFO(isa_name(isa) << " sx " << sx << " dx " << dx << " kw " << kw << " rows " << nrows << " n " << n);
              const size_t span = (n - 1) * sx + (kw - 1) * dx + 1;
              // Rows `span` long, 300 apart, the last ending at the unreadable page.
              std::vector<const float*> rows(nrows);
              for (size_t r = 0; r < nrows; ++r) rows[r] = end - span - (nrows - 1 - r) * 300;
              std::vector<float> got(n + 2, 7.0f);
              max_pool_stretch(rows.data(), nrows, kw, dx, sx, n, got.data());
              for (size_t o = 0; o < n; ++o) {
                float want = rows[0][o * sx];
                for (size_t r = 0; r < nrows; ++r)
                  for (size_t kx = r == 0 ? 1 : 0; kx < kw; ++kx) {
                    const float v = rows[r][o * sx + kx * dx];
                    want = v > want ? v : want;
                  }
                REQUIRE(std::memcmp(&got[o], &want, sizeof(float)) == 0);
              }
              REQUIRE(got[n] == 7.0f);
            }
  }
  ::munmap(map, 4 * page);
}

}  // namespace
}  // namespace bnorm::kernels
