// NonMaxSuppression (10, 11). 11 adds only the sentence that an IoU equal
// to the threshold does not suppress; 10 says the same in its description,
// so both versions run this one function.
//
// For each batch and class, in that order: the candidate boxes (all, or
// with score_threshold given, those scoring strictly above it) are visited
// by score, highest first, the lower box index first among equal scores; a
// box is selected unless its IoU with a box already selected for this class
// is strictly above iou_threshold; at most max_output_boxes_per_class are
// selected. The output is int64 [selected, 3] rows of [batch, class, box].
// boxes: float [batches, boxes, 4] as [y1, x1, y2, x2] (any two opposite
// corners; center_point_box = 0) or [x_center, y_center, width, height]
// (center_point_box = 1); scores: float [batches, classes, boxes].
// Optional scalars: max_output_boxes_per_class (int64, default 0: nothing
// selected, a negative value reads as 0), iou_threshold (float in [0, 1],
// default 0), score_threshold (float).
// Decisions: the spec says boxes scoring less than score_threshold are
// removed, which would keep a box scoring exactly the threshold; ONNX's
// reference and onnxruntime remove it too (score > threshold is kept), and
// bnorm follows them. A NaN score is never selected. IoU is computed in
// float, as the reference does: a box of zero area or no overlap never
// suppresses. An empty optional input reads as absent (reference).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/run/op.h"
#include "eval/ops/indexing/ops.h"

namespace bnorm::eval {

namespace {

struct Extent {
  float x_min, x_max, y_min, y_max;
};

Extent extent(const float* b, bool center) {
  if (center) {
    const float w = b[2] / 2, h = b[3] / 2;
    return {b[0] - w, b[0] + w, b[1] - h, b[1] + h};
  }
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

bool suppresses(const float* a, const float* b, bool center, float iou_threshold) {
  const Extent e1 = extent(a, center), e2 = extent(b, center);
  const float ix_min = std::max(e1.x_min, e2.x_min), ix_max = std::min(e1.x_max, e2.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(e1.y_min, e2.y_min), iy_max = std::min(e1.y_max, e2.y_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  if (inter <= 0) return false;
  const float area1 = (e1.x_max - e1.x_min) * (e1.y_max - e1.y_min);
  const float area2 = (e2.x_max - e2.x_min) * (e2.y_max - e2.y_min);
  const float uni = area1 + area2 - inter;
  if (area1 <= 0 || area2 <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

// The optional scalar input i of type t, or nullptr when absent or empty.
const Tensor* optional_scalar(const OpContext& ctx, size_t i, DType t, const char* what) {
  const Tensor* s = ctx.input(i);
  if (!s || s->numel() == 0) return nullptr;
  if (s->dtype != t || s->numel() != 1) fail(ErrorKind::input, "input '{}' must hold one {}", what, dtype_name(t));
  return s;
}

}  // namespace

Tensors op_non_max_suppression(const OpContext& ctx) {
  const Tensor& boxes = ctx.required(0, "boxes");
  const Tensor& scores = ctx.required(1, "scores");
  if (boxes.dtype != DType::float32 || scores.dtype != DType::float32) {
    fail(ErrorKind::input, "boxes and scores must be float");
  }
  if (boxes.dims.size() != 3 || boxes.dims[2] != 4 || scores.dims.size() != 3 || scores.dims[0] != boxes.dims[0] ||
      scores.dims[2] != boxes.dims[1]) {
    fail(ErrorKind::input, "boxes {} and scores {} are not [batches, boxes, 4] and [batches, classes, boxes]",
         shape_str(boxes.dims), shape_str(scores.dims));
  }
  const int64_t center_point_box = attr_int(*ctx.node, "center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1) {
    fail(ErrorKind::input, "center_point_box = {} must be 0 or 1", center_point_box);
  }
  int64_t max_out = 0;
  if (const Tensor* t = optional_scalar(ctx, 2, DType::int64, "max_output_boxes_per_class")) {
    max_out = std::max<int64_t>(t->data<int64_t>()[0], 0);
  }
  float iou = 0;
  if (const Tensor* t = optional_scalar(ctx, 3, DType::float32, "iou_threshold")) iou = t->data<float>()[0];
  if (!(iou >= 0 && iou <= 1)) fail(ErrorKind::input, "iou_threshold {} is not in [0, 1]", iou);
  const Tensor* score_threshold = optional_scalar(ctx, 4, DType::float32, "score_threshold");
  const int64_t batches = boxes.dims[0], n = boxes.dims[1], classes = scores.dims[1];
  std::vector<int64_t> rows;
  std::vector<int64_t> order;
  for (int64_t b = 0; b < batches; ++b) {
    const float* bx = boxes.data<float>() + b * n * 4;
    for (int64_t c = 0; c < classes; ++c) {
      const float* sc = scores.data<float>() + (b * classes + c) * n;
      order.clear();
      for (int64_t i = 0; i < n; ++i) {
        if (!std::isnan(sc[i]) && (!score_threshold || sc[i] > score_threshold->data<float>()[0])) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return sc[x] > sc[y]; });
      std::vector<int64_t> kept;
      for (size_t j = 0; j < order.size() && static_cast<int64_t>(kept.size()) < max_out; ++j) {
        const bool clear = std::none_of(kept.begin(), kept.end(), [&](int64_t k) {
          return suppresses(bx + order[j] * 4, bx + k * 4, center_point_box == 1, iou);
        });
        if (!clear) continue;
        kept.push_back(order[j]);
        rows.insert(rows.end(), {b, c, order[j]});
      }
    }
  }
  Tensor out(DType::int64, {static_cast<int64_t>(rows.size() / 3), 3});
  std::copy(rows.begin(), rows.end(), out.data<int64_t>());
  return one_tensor(std::move(out));
}


}  // namespace bnorm::eval
