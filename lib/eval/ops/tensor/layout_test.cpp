// DepthToSpace, SpaceToDepth, CenterCropPad and Col2Im on hand-worked
// cases from the spec's reshape/transpose definitions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "support/test_graph.h"

namespace {

using bnorm::DType;
using bnorm::Tensor;
using namespace bnorm::test;

Attrs block(int64_t b, const std::string& mode = {}) {
  return [=](onnx::NodeProto& n) {
    set_attr(n, "blocksize", b);
    if (!mode.empty()) set_string(n, "mode", mode);
  };
}

}  // namespace

TEST_CASE("DepthToSpace DCR interleaves channel groups, CRD takes consecutive channels", "[eval][resample]") {
  const Tensor x = iota(DType::int32, {1, 8, 1, 1});
  const Tensor dcr = run_node1(13, "DepthToSpace", {x}, block(2));
  CHECK(dcr.dims == std::vector<int64_t>{1, 2, 2, 2});
  CHECK(dcr.dtype == DType::int32);
  CHECK(dcr.to_f64() == std::vector<double>{0, 2, 4, 6, 1, 3, 5, 7});
  CHECK(run_node1(1, "DepthToSpace", {x}, block(2)).to_f64() == dcr.to_f64());
  CHECK(run_node1(11, "DepthToSpace", {x}, block(2, "CRD")).to_f64() == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
  REQUIRE_THROWS_AS(run_node1(1, "DepthToSpace", {x}, block(2, "CRD")), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "DepthToSpace", {x}, block(3)), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "DepthToSpace", {x}), bnorm::Error);
  REQUIRE_THROWS_AS(run_node1(13, "DepthToSpace", {iota(DType::int32, {8, 1, 1})}, block(2)), bnorm::Error);
}

TEST_CASE("SpaceToDepth moves each block into channels, the inverse of DCR", "[eval][resample]") {
  const Tensor y = run_node1(13, "SpaceToDepth", {iota(DType::float32, {1, 2, 2, 2})}, block(2));
  CHECK(y.dims == std::vector<int64_t>{1, 8, 1, 1});
  CHECK(y.to_f64() == std::vector<double>{0, 4, 1, 5, 2, 6, 3, 7});
  REQUIRE_THROWS_AS(run_node1(1, "SpaceToDepth", {iota(DType::float32, {1, 1, 3, 2})}, block(2)), bnorm::Error);
}

TEST_CASE("CenterCropPad crops from floor((d - t) / 2) and pads the odd pixel after", "[eval][resample]") {
  CHECK(run_node1(18, "CenterCropPad", {iota(DType::float32, {5}), i64({1}, {2})}).to_f64() == std::vector<double>{1, 2});
  CHECK(run_node1(18, "CenterCropPad", {iota(DType::float32, {3}), i64({1}, {6})}).to_f64() ==
        std::vector<double>{0, 0, 1, 2, 0, 0});
  // Axis -1 only: rows kept, 4 columns cropped to 1 (start 1).
  const Tensor y = run_node1(18, "CenterCropPad", {iota(DType::int64, {2, 4}), i64({1}, {1})},
                       [](auto& n) { set_ints(n, "axes", {-1}); });
  CHECK(y.dims == std::vector<int64_t>{2, 1});
  CHECK(y.to_f64() == std::vector<double>{1, 5});
  REQUIRE_THROWS_AS(run_node1(18, "CenterCropPad", {iota(DType::float32, {2, 4}), i64({1}, {1})}), bnorm::Error);
}

TEST_CASE("Col2Im sums overlapping blocks back into the image", "[eval][resample]") {
  // Image 2 x 3, block 1 x 2: 2 x 2 locations; block element (0, 1) lands one column right.
  const std::vector<double> cols{1, 2, 3, 4, 10, 20, 30, 40};
  const std::vector<double> want{1, 12, 20, 3, 34, 40};
  for (const DType t : {DType::float32, DType::int32}) {
    const Tensor y = run_node1(18, "Col2Im", {Tensor::from_f64(t, {1, 2, 4}, cols), i64({2}, {2, 3}), i64({2}, {1, 2})});
    CHECK(y.dims == std::vector<int64_t>{1, 1, 2, 3});
    CHECK(y.to_f64() == want);
  }
  // Stride 2 along columns: one location per row, pads 1 at the start of the columns.
  const Tensor s = run_node1(18, "Col2Im", {Tensor::from_f64(DType::float64, {1, 2, 4}, cols), i64({2}, {2, 3}),
                                      i64({2}, {1, 2})},
                       [](auto& n) {
                         set_ints(n, "strides", {1, 2});
                         set_ints(n, "pads", {0, 1, 0, 0});
                       });
  // Columns padded to 4: locations at -1 and 1; element 0 of location -1 is dropped.
  CHECK(s.to_f64() == std::vector<double>{10, 2, 20, 30, 4, 40});
  REQUIRE_THROWS_AS(run_node1(18, "Col2Im", {Tensor::from_f64(DType::float32, {1, 2, 3}, {1, 2, 3, 4, 5, 6}),
                                       i64({2}, {2, 3}), i64({2}, {1, 2})}),
                    bnorm::Error);
}

TEST_CASE("Transpose: every permutation of a rank-4 tensor, elements of 1, 2, 4 and 8 bytes", "[eval][transpose]") {
  // Shapes whose swapped axes span several 32 x 32 blocks (NCHW -> NHWC)
  // and axes of size 1; expected values by index arithmetic.
  const std::vector<int64_t> dims = GENERATE(std::vector<int64_t>{2, 3, 4, 5}, std::vector<int64_t>{1, 70, 9, 5},
                                             std::vector<int64_t>{1, 1, 33, 40});
  const DType t = GENERATE(DType::uint8, DType::float16, DType::float32, DType::int64);
  if (t == DType::uint8 && bnorm::checked_numel(dims) > 256) return;  // iota's values must fit
  std::vector<int64_t> perm{0, 1, 2, 3};
  const Tensor x = iota(t, dims);
  const std::vector<double> xv = x.to_f64();
  do {
    INFO("dims " << bnorm::shape_str(dims) << " perm " << bnorm::shape_str(perm) << " " << bnorm::dtype_name(t));
    const Tensor y = run_node1(13, "Transpose", {x}, [&](onnx::NodeProto& n) { set_ints(n, "perm", perm); });
    std::vector<int64_t> out(4);
    for (size_t k = 0; k < 4; ++k) out[k] = dims[static_cast<size_t>(perm[k])];
    REQUIRE(y.dims == out);
    const std::vector<double> yv = y.to_f64();
    std::vector<int64_t> stride(4, 1);
    for (size_t k = 3; k-- > 0;) stride[k] = stride[k + 1] * dims[k + 1];
    size_t o = 0;
    bool all = true;
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t b = 0; b < out[1]; ++b)
        for (int64_t c = 0; c < out[2]; ++c)
          for (int64_t d = 0; d < out[3]; ++d, ++o) {
            const int64_t at[4] = {a, b, c, d};
            int64_t from = 0;
            for (size_t k = 0; k < 4; ++k) from += at[k] * stride[static_cast<size_t>(perm[k])];
            all = all && yv[o] == xv[static_cast<size_t>(from)];
          }
    CHECK(all);
  } while (std::next_permutation(perm.begin(), perm.end()));
}
