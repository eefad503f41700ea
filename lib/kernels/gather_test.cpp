// gather.h at every SIMD level: every stride from 1 to 4 and every length
// across the vector tails, against the definition dst[j] = src[j * stride]
// (bits: NaNs and negative zeros copied as they are), the rest of dst left
// alone, and nothing read past the last element: the source ends at a page
// the process may not read.
#include "kernels/gather.h"

#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

TEST_CASE("gather_row copies every stride-th element, and nothing past the last, at every level", "[kernels]") {
  testing::SettingsGuard guard;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Two pages, the second unreadable: sources end right before it.
  void* map = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(map != MAP_FAILED);
  auto* base = static_cast<float*>(map);
  const size_t count = page / sizeof(float);
  for (size_t i = 0; i < count; ++i) base[i] = static_cast<float>(i) - 100.5f;
  base[count - 1] = std::numeric_limits<float>::quiet_NaN();
  base[count - 3] = -0.0f;
  REQUIRE(::mprotect(static_cast<char*>(map) + page, page, PROT_NONE) == 0);
  for (Isa isa : testing::available_isas()) {
    set_active_isa(isa);
    for (size_t stride = 1; stride <= 4; ++stride)
      for (size_t n = 0; n <= 70; ++n) {
        INFO(isa_name(isa) << " stride " << stride << " n " << n);
        // The last element read is the last of the readable page.
        const float* src = n ? base + count - 1 - (n - 1) * stride : base + count;
        std::vector<float> got(n + 3, 7.0f);
        gather_row(src, stride, n, got.data());
        for (size_t j = 0; j < n; ++j) REQUIRE(std::memcmp(&got[j], &src[j * stride], sizeof(float)) == 0);
        for (size_t j = n; j < n + 3; ++j) REQUIRE(got[j] == 7.0f);
      }
  }
  ::munmap(map, 2 * page);
}

TEST_CASE("im2col_row gives every position its pixel or the padding value, at every level", "[kernels]") {
  testing::SettingsGuard guard;
  std::mt19937 rng(5);
  for (Isa isa : testing::available_isas()) {
    set_active_isa(isa);
    for (size_t in_h : {1, 3, 8})
      for (size_t in_w : {1, 5, 9, 23})
        for (size_t sy : {1, 2})
          for (size_t sx : {1, 2, 3})
            for (ptrdiff_t off_y : {-2, 0, 1})
              for (ptrdiff_t off_x : {-3, -1, 0, 2}) {
                std::vector<float> x(in_h * in_w);
                for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) + 0.25f;
                // Output sizes past the image on both sides: padding columns and lines.
                const size_t out_w = in_w / sx + 2, out_h = in_h / sy + 2;
                size_t lo = out_w, hi = 0;  // the columns inside, from the definition
                for (size_t ox = 0; ox < out_w; ++ox) {
                  const ptrdiff_t ix = static_cast<ptrdiff_t>(ox * sx) + off_x;
                  if (ix >= 0 && ix < static_cast<ptrdiff_t>(in_w)) lo = std::min(lo, ox), hi = std::max(hi, ox + 1);
                }
                if (lo > hi) lo = hi = 0;
                const Im2colRow r{x.data(), in_h, in_w, out_w, sy, sx, off_y, off_x, lo, hi, -7.5f};
                const size_t total = out_h * out_w;
                std::uniform_int_distribution<size_t> at(0, total);
                for (int trial = 0; trial < 3; ++trial) {
                  size_t j0 = trial == 0 ? 0 : at(rng), j1 = trial == 0 ? total : at(rng);
                  if (j0 > j1) std::swap(j0, j1);
                  INFO(isa_name(isa) << " in " << in_h << "x" << in_w << " stride " << sy << "," << sx << " off " << off_y
                                     << "," << off_x << " positions " << j0 << ".." << j1);
                  std::vector<float> got(j1 - j0 + 2, 99.0f);
                  im2col_row(r, j0, j1, got.data());
                  for (size_t j = j0; j < j1; ++j) {
                    const ptrdiff_t iy = static_cast<ptrdiff_t>(j / out_w * sy) + off_y;
                    const ptrdiff_t ix = static_cast<ptrdiff_t>(j % out_w * sx) + off_x;
                    const bool inside = iy >= 0 && iy < static_cast<ptrdiff_t>(in_h) && ix >= 0 &&
                                        ix < static_cast<ptrdiff_t>(in_w);
                    REQUIRE(got[j - j0] == (inside ? x[static_cast<size_t>(iy) * in_w + static_cast<size_t>(ix)] : -7.5f));
                  }
                  REQUIRE(got[j1 - j0] == 99.0f);
                  REQUIRE(got[j1 - j0 + 1] == 99.0f);
                }
              }
  }
}


TEST_CASE("transpose copies every element to its transposed place, at every level", "[kernels]") {
  // Shapes across the 8 x 8 blocks and 64 x 64 tiles, leading dimensions
  // wider than the matrices (the gaps left alone), NaN and -0 as bits.
  testing::SettingsGuard guard;
  for (Isa isa : testing::available_isas()) {
    set_active_isa(isa);
    for (size_t rows : {1, 7, 8, 9, 49, 64, 70, 130})
      for (size_t cols : {1, 8, 15, 16, 49, 65, 256}) {
        INFO(isa_name(isa) << " " << rows << " x " << cols);
        const size_t lda = cols + 3, ldb = rows + 5;
        std::vector<float> a(rows * lda), b(cols * ldb, 7.0f);
        for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.5f - 3.0f;
        a[0] = std::numeric_limits<float>::quiet_NaN();
        a[a.size() - 4] = -0.0f;
        transpose(a.data(), rows, cols, lda, b.data(), ldb);
        bool ok = true;
        for (size_t j = 0; j < cols; ++j)
          for (size_t i = 0; i < ldb; ++i) {
            const float want = i < rows ? a[i * lda + j] : 7.0f;
            ok = ok && std::memcmp(&b[j * ldb + i], &want, sizeof(float)) == 0;
          }
        REQUIRE(ok);
      }
  }
}

}  // namespace
}  // namespace bnorm::kernels
