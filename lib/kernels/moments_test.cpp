// normalize_and_moments against what it stands for: affine_rows (Centered)
// on one row and span_moments on the other, bit for bit, at every SIMD
// level, over lengths around the vector, block and chunk sizes, outputs at
// every alignment, plain and non-temporal stores, in place, with IEEE
// specials in either row, and with the next chunk prefetched or not
// (isa.h's chunk_prefetch_active()). (span_moments and affine_rows
// themselves are checked against the spec formula by the kernels' tests.)
#include "kernels/moments.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/affine_rows.h"
#include "support/kernel_test_support.hpp"

namespace bnorm::kernels::detail {
namespace {

using testing::bits_of;

struct Rows {
  std::vector<float> x, next, after;
};

Rows make_rows(size_t n, std::mt19937& rng, bool specials) {
  std::uniform_real_distribution<float> dist(-3.0f, 5.0f);
  Rows r{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
  for (size_t i = 0; i < n; ++i) {
    r.x[i] = dist(rng);
    r.next[i] = 1000.0f + dist(rng);  // far from zero: the two-pass formula matters
    r.after[i] = dist(rng);
  }
  if (specials && n > 2) {
    r.x[n / 2] = std::numeric_limits<float>::quiet_NaN();
    r.x[n - 1] = -std::numeric_limits<float>::infinity();
    r.next[n / 3] = std::numeric_limits<float>::infinity();
  }
  return r;
}

// The reference (affine_rows, span_moments) runs with the chunk prefetch
// on, normalize_and_moments with it as `prefetch` says.
void check(size_t n, size_t offset, bool stream, bool in_place, bool specials, bool prefetch,
           std::mt19937& rng) {
  CAPTURE(n, offset, stream, in_place, specials, prefetch);
  const Rows rows = make_rows(n, rng, specials);
  const RowOp<float> op{RowMode::Centered, 0.75f, 1.5f, -0.25f, ActivationKind::None, 0, 0};

  set_chunk_prefetch(true);
  std::vector<float> want(n + offset, -1.0f);
  affine_rows(rows.x.data(), want.data() + offset, 1, n, &op, false);
  const Moments want_m = span_moments(rows.next.data(), n, rows.after.data(), n);
  set_chunk_prefetch(prefetch);

  std::vector<float> buffer(n + offset, std::numeric_limits<float>::quiet_NaN());
  float* y = buffer.data() + offset;
  const float* x = rows.x.data();
  if (in_place) {
    std::copy(rows.x.begin(), rows.x.end(), y);
    x = y;
  }
  const Moments got_m =
      normalize_and_moments(x, y, op, stream, rows.next.data(), n, rows.after.data(), n);
  for (size_t i = 0; i < n; ++i) {
    CAPTURE(i);
    REQUIRE(bits_of(y[i]) == bits_of(want[offset + i]));
  }
  REQUIRE(got_m.count == want_m.count);
  REQUIRE(bits_of(got_m.sum) == bits_of(want_m.sum));
  REQUIRE(bits_of(got_m.m2) == bits_of(want_m.m2));
}

TEST_CASE("normalize_and_moments gives the bits of affine_rows and span_moments") {
  testing::SettingsGuard guard;
  std::mt19937 rng(11);
  for (Isa isa : testing::available_isas()) {
    CAPTURE(isa_name(isa));
    set_active_isa(isa);
    for (size_t n : {1, 3, 15, 16, 17, 31, 32, 33, 63, 100, 2047, 2048, 2049, 2048 + 1088,
                     3 * 2048 + 40, 12544}) {
      for (size_t offset : {0, 1, 5}) {
        for (bool stream : {false, true}) {
          for (bool in_place : {false, true}) {
            for (bool specials : {false, true}) {
              for (bool prefetch : {false, true}) {
                check(n, offset, stream, in_place, specials, prefetch, rng);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("normalize_and_moments of empty rows is empty") {
  const RowOp<float> op{RowMode::Centered, 0, 1, 0, ActivationKind::None, 0, 0};
  const Moments m = normalize_and_moments(nullptr, nullptr, op, true, nullptr, 0, nullptr, 0);
  REQUIRE(m.count == 0);
}

}  // namespace
}  // namespace bnorm::kernels::detail
