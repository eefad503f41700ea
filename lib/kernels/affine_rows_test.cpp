// The bfloat16 rounding of the normalization loops, every way it can be
// done: AVX512-BF16's VCVTNEPS2BF16 and VCVTNE2PS2BF16 (where the CPU has
// them), Avx512's and the other levels' integer rounding, all against
// half.h's f32_to_bf16 of the float result (which rounds from double,
// another implementation). Every bf16 input, with scales and shifts whose
// products need rounding, fall into float subnormals (which the
// instructions flush to zero), tie, overflow, or are NaN; plain and
// non-temporal stores, in place, rows of every tail length.
#include "kernels/affine_rows.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "support/kernel_test_support.hpp"

namespace bnorm::kernels::detail {
namespace {

struct Way {
  Isa isa;
  bool bf16_instruction;
};

std::vector<Way> ways() {
  std::vector<Way> out;
  for (Isa isa : testing::available_isas()) out.push_back({isa, false});
  if (set_avx512_bf16(true)) out.push_back({Isa::Avx512, true});
  return out;
}

TEST_CASE("bfloat16 outputs round as f32_to_bf16 with and without AVX512-BF16") {
  testing::SettingsGuard guard;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // (a, b): y = fma(x, a, b) in float, then rounded to bfloat16.
  const std::vector<std::pair<float, float>> affine = {
      {1.0f + 0x1p-10f, 0.0f},  // products between bf16 values: ties and carries
      {0x1p-100f, 0.0f},        // small inputs into float subnormals
      {3.0f, -0.0f},
      {1.0f, 1e-40f},           // a subnormal shift
      {0x1p+100f, 1.0f},        // large inputs overflow to infinity
      {1.0f, nan},              // every output NaN
  };
  std::vector<bf16> x(65536 + 37);
  for (size_t i = 0; i < x.size(); ++i) x[i].bits = static_cast<uint16_t>(i * 40503u);
  for (const Way& way : ways()) {
    CAPTURE(isa_name(way.isa), way.bf16_instruction);
    set_active_isa(way.isa);
    REQUIRE(set_avx512_bf16(way.bf16_instruction) == way.bf16_instruction);
    for (const auto& [a, b] : affine) {
      CAPTURE(a, b);
      const RowOp<float> op{RowMode::Plain, 0, a, b, ActivationKind::None, 0, 0};
      for (bool stream : {false, true}) {
        for (bool in_place : {false, true}) {
          for (size_t len : {x.size(), size_t{1}, size_t{15}, size_t{17}, size_t{100}}) {
            std::vector<bf16> y(len, bf16{0x5555});
            if (in_place) std::copy(x.begin(), x.begin() + static_cast<long>(len), y.begin());
            affine_rows(in_place ? y.data() : x.data(), y.data(), 1, len, &op, stream);
            for (size_t i = 0; i < len; ++i) {
              const bf16 want = f32_to_bf16(std::fma(bf16_to_f32(x[i]), a, b));
              if (want.bits != y[i].bits) {
                CAPTURE(i, x[i].bits, want.bits, y[i].bits, stream, in_place, len);
                FAIL("bits differ");
              }
            }
          }
        }
      }
    }
  }
}

// Groups of 64 elements are rounded together (simd_avx512_bf16.h's Avx512Bf16): one
// zero result sends the group to a closer look, where only a vector holding
// a float subnormal takes the integer rounding. Zeros, signed zeros and a
// single subnormal at every position of a group, among ordinary values.
TEST_CASE("bfloat16 groups with zeros and a lone subnormal round as f32_to_bf16") {
  testing::SettingsGuard guard;
  const RowOp<float> op{RowMode::Plain, 0, 1.0f, 0.0f, ActivationKind::None, 0, 0};
  const uint16_t values[] = {0x0000, 0x8000, 0x3F80, 0xC040, 0x0001, 0x807F, 0x7FC1, 0xFF80};
  for (const Way& way : ways()) {
    CAPTURE(isa_name(way.isa), way.bf16_instruction);
    set_active_isa(way.isa);
    REQUIRE(set_avx512_bf16(way.bf16_instruction) == way.bf16_instruction);
    for (size_t special = 0; special < 8; ++special) {
      for (size_t at = 0; at < 64; at += 7) {
        std::vector<bf16> x(64 * 3 + 5, bf16{0x3F80});
        for (size_t i = 0; i < x.size(); i += 3) x[i].bits = values[(i / 3) % 4];  // zeros, ordinary
        x[64 + at].bits = values[special];
        for (bool stream : {false, true}) {
          std::vector<bf16> y(x.size(), bf16{0x5555});
          affine_rows(x.data(), y.data(), 1, x.size(), &op, stream);
          for (size_t i = 0; i < x.size(); ++i) {
            const bf16 want = f32_to_bf16(std::fma(bf16_to_f32(x[i]), 1.0f, 0.0f));
            CAPTURE(special, at, stream, i, x[i].bits);
            REQUIRE(y[i].bits == want.bits);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace bnorm::kernels::detail
