// remap (broadcast.h): the index maps of Pad, Resize's nearest modes,
// Slice and Transpose, for elements of 1, 2, 4 and 8 bytes (each copied as
// bits) and the fill for positions a map marks -1. Expected values are
// worked out by hand.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "eval/ops/elementwise/broadcast.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;

template <typename T>
void check_remap(DType type) {
  // x = [[1, 2, 3], [4, 5, 6]]; rows {1, -1, 0}, columns {2, 0, -1, 1}; fill 9.
  Tensor x(type, {2, 3});
  for (int i = 0; i < 6; ++i) x.data<T>()[i] = static_cast<T>(i + 1);
  const T nine = static_cast<T>(9);
  std::vector<uint8_t> fill(sizeof(T));
  std::memcpy(fill.data(), &nine, sizeof(T));
  const Tensor y = bnorm::eval::remap(x, {{1, -1, 0}, {2, 0, -1, 1}}, fill);
  REQUIRE(y.dims == std::vector<int64_t>{3, 4});
  const std::vector<T> want{6, 4, 9, 5, 9, 9, 9, 9, 3, 1, 9, 2};
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(y.data<T>()[i] == want[i]);
  }
  // Whole rows (the last map the identity) and no fill given: zeros.
  const Tensor z = bnorm::eval::remap(x, {{-1, 1}, {0, 1, 2}});
  const std::vector<T> want_z{0, 0, 0, 4, 5, 6};
  for (size_t i = 0; i < want_z.size(); ++i) CHECK(z.data<T>()[i] == want_z[i]);
}

}  // namespace

TEST_CASE("remap gathers elements of every size and fills the positions maps mark -1", "[eval][remap]") {
  check_remap<uint8_t>(DType::uint8);
  check_remap<int16_t>(DType::int16);
  check_remap<float>(DType::float32);
  check_remap<double>(DType::float64);
  check_remap<int64_t>(DType::int64);
}
