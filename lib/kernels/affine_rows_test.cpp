// The bfloat16 rounding of the normalization loops, every way it can be
// done: AVX512-BF16's VCVTNEPS2BF16 (where the CPU has it), Avx512's and
// the other levels' integer rounding, all against half.h's f32_to_bf16 of
// the float result (which rounds from double, another implementation).
// Every bf16 input, with scales and shifts whose products need rounding,
// fall into float subnormals (which VCVTNEPS2BF16 flushes to zero), tie,
// overflow, or are NaN (which it encodes with the payload, half.h as
// 0x7FC0); plain and non-temporal stores, rows of every tail length.
#include "kernels/affine_rows.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/test_support.hpp"

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
        for (size_t len : {x.size(), size_t{1}, size_t{15}, size_t{17}, size_t{100}}) {
          std::vector<bf16> y(len, bf16{0x5555});
          affine_rows(x.data(), y.data(), 1, len, &op, stream);
          for (size_t i = 0; i < len; ++i) {
            const bf16 want = f32_to_bf16(std::fma(bf16_to_f32(x[i]), a, b));
            if (want.bits != y[i].bits) {
              CAPTURE(i, x[i].bits, want.bits, y[i].bits, stream, len);
              FAIL("bits differ");
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace bnorm::kernels::detail
