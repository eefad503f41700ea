// igemm.h at every SIMD level (and at Avx512 with and without AVX512-VNNI),
// for the four uint8/int8 pairings of A and B: sizes sweeping the tails of
// every level's tiles (rows past 12, 6, 4 and 2; columns past every panel
// width), depths past one block (KC: 256 to 512) and not a multiple of 4,
// zero points per tensor, per row of A and per column of B, extreme values,
// and a depth whose sums wrap int32. Expected values come from a plain int64
// loop, wrapped to int32 at the end.
#include "kernels/igemm.h"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cstdint>
#include <random>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels {
namespace {

struct Case {
  size_t m, n, k;
};

// Random bytes, with runs of the extremes (0, 255 as uint8; -128, 127 as
// int8) so that the largest products appear.
std::vector<uint8_t> bytes(size_t count, std::mt19937& rng, bool extremes) {
  std::uniform_int_distribution<int> u(0, 255), pick(0, 3);
  std::vector<uint8_t> v(count);
  for (uint8_t& x : v) {
    const int r = u(rng);
    x = static_cast<uint8_t>(extremes && pick(rng) == 0 ? (r & 1 ? 0x7F : 0x80) : r);
    if (extremes && pick(rng) == 1) x = r & 1 ? 0xFF : 0x00;
  }
  return v;
}

int64_t value(uint8_t bits, bool is_signed) {
  return is_signed ? static_cast<int64_t>(static_cast<int8_t>(bits)) : static_cast<int64_t>(bits);
}

struct Operands {
  bool a_signed, b_signed;
  size_t lda, ldb, ldc;
  std::vector<uint8_t> a, b;
  std::vector<int32_t> za, zb;  // per row, per column (or one)
};

Operands operands(const Case& s, bool as, bool bs, bool per_row, bool per_col, std::mt19937& rng, bool extremes) {
  Operands o{as, bs, s.k + 3, s.n + 5, s.n + 2, bytes(s.m * (s.k + 3), rng, extremes),
             bytes(s.k * (s.n + 5), rng, extremes), {}, {}};
  std::uniform_int_distribution<int> zu(0, 255), zs(-128, 127);
  o.za.resize(per_row ? s.m : 1);
  o.zb.resize(per_col ? s.n : 1);
  for (int32_t& z : o.za) z = as ? zs(rng) : zu(rng);
  for (int32_t& z : o.zb) z = bs ? zs(rng) : zu(rng);
  return o;
}

// C[i, j] = sum_p (A[i, p] - za) * (B[p, j] - zb), exact, then wrapped.
std::vector<int32_t> reference(const Operands& o, const Case& s) {
  std::vector<int32_t> c(s.m * o.ldc, -7);
  for (size_t i = 0; i < s.m; ++i)
    for (size_t j = 0; j < s.n; ++j) {
      const int64_t za = o.za[o.za.size() == 1 ? 0 : i], zb = o.zb[o.zb.size() == 1 ? 0 : j];
      int64_t sum = 0;
      for (size_t p = 0; p < s.k; ++p) {
        sum += (value(o.a[i * o.lda + p], o.a_signed) - za) * (value(o.b[p * o.ldb + j], o.b_signed) - zb);
      }
      c[i * o.ldc + j] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(sum)));
    }
  return c;
}

std::vector<int32_t> run(const Operands& o, const Case& s) {
  std::vector<int32_t> c(s.m * o.ldc, -7);
  const IgemmOperand a{o.a.data(), o.lda, o.a_signed, o.za.data(), o.za.size() == 1 ? size_t{0} : 1};
  const IgemmOperand b{o.b.data(), o.ldb, o.b_signed, o.zb.data(), o.zb.size() == 1 ? size_t{0} : 1};
  igemm(a, b, c.data(), o.ldc, s.m, s.n, s.k);
  return c;
}

std::vector<Case> sweep() {
  std::vector<Case> cases;
  for (size_t m : {1, 2, 3, 5, 6, 7, 12, 13, 17, 25})
    for (size_t n : {1, 3, 4, 15, 16, 17, 31, 33, 64, 65})
      for (size_t k : {1, 2, 3, 5, 8, 27}) cases.push_back({m, n, k});
  for (size_t k : {255, 256, 257, 511, 512, 513, 1030}) cases.push_back({13, 37, k});
  cases.push_back({30, 300, 600});  // several blocks of columns and of rows of B
  return cases;
}

// The levels to run: every SIMD level, and the Avx512 level once more
// without VNNI where the CPU has it.
struct Level {
  Isa isa;
  bool vnni;
};

std::vector<Level> levels() {
  std::vector<Level> out;
  for (Isa isa : testing::available_isas()) out.push_back({isa, false});
  if (detected_isa() == Isa::Avx512 && set_avx512_vnni(true)) out.push_back({Isa::Avx512, true});
  return out;
}

TEST_CASE("igemm equals the int64 sum of zero-point-shifted products at every level and type pairing",
          "[kernels][igemm]") {
  testing::SettingsGuard guard;
  std::mt19937 rng(11);
  for (const Level& level : levels()) {
    set_active_isa(level.isa);
    set_avx512_vnni(level.vnni);
    for (bool as : {false, true})
      for (bool bs : {false, true}) {
        size_t index = 0;
        for (const Case& s : sweep()) {
          const bool per_row = index % 3 == 1, per_col = index % 3 == 2, extremes = index % 2 == 0;
          ++index;
          const Operands o = operands(s, as, bs, per_row, per_col, rng, extremes);
          INFO("level " << isa_name(level.isa) << " vnni " << level.vnni << " A signed " << as << " B signed " << bs
                        << " m " << s.m << " n " << s.n << " k " << s.k << " per row " << per_row << " per column "
                        << per_col);
          REQUIRE(run(o, s) == reference(o, s));
        }
      }
  }
}

TEST_CASE("igemm of extreme operands wraps sums past int32 as the int64 sum taken modulo 2^32", "[kernels][igemm]") {
  testing::SettingsGuard guard;
  const Case s{3, 20, 40000};  // 40000 * 255 * 255 > 2^31
  for (const Level& level : levels()) {
    set_active_isa(level.isa);
    set_avx512_vnni(level.vnni);
    for (bool as : {false, true})
      for (bool bs : {false, true}) {
        Operands o{as, bs, s.k, s.n, s.n, {}, {}, {0}, {0}};
        // (A - za) and (B - zb) at +-255 (uint8 0 or 255 against 255 or 0, int8 -128 against 127).
        o.a.assign(s.m * s.k, as ? 0x80 : 0);
        o.b.assign(s.k * s.n, as == bs ? (bs ? 0x80 : 0) : (bs ? 0x7F : 0xFF));
        o.za[0] = as ? 127 : 255;
        o.zb[0] = bs ? (as == bs ? 127 : -128) : (as == bs ? 255 : 0);
        for (size_t j = 0; j < s.n; j += 3) o.b[7 * s.n + j] ^= 0x55;  // not all equal
        const std::vector<int32_t> want = reference(o, s);
        INFO("level " << isa_name(level.isa) << " vnni " << level.vnni << " A signed " << as << " B signed " << bs);
        REQUIRE(run(o, s) == want);
      }
  }
}

TEST_CASE("igemm gives the same integers on one thread and on several and with k = 0 writes zeros",
          "[kernels][igemm]") {
  testing::SettingsGuard guard;
  std::mt19937 rng(5);
  const Case s{37, 1000, 300};  // above the parallel threshold, columns split mid-panel
  const Operands o = operands(s, false, true, true, true, rng, false);
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<int32_t> one = run(o, s);
  omp_set_num_threads(3);
  const std::vector<int32_t> many = run(o, s);
  omp_set_num_threads(before);
  REQUIRE(one == reference(o, s));
  REQUIRE(many == one);
  std::vector<int32_t> c(6, 5);
  const IgemmOperand a{nullptr, 0, false, nullptr, 0}, b{nullptr, 3, true, nullptr, 0};
  igemm(a, b, c.data(), 3, 2, 3, 0);
  REQUIRE(c == std::vector<int32_t>(6, 0));
}

}  // namespace
}  // namespace bnorm::kernels
