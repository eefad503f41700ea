// Rules of the image ops: GridSample (the grid's spatial dims), RoiAlign
// ([rois, C, output_height, output_width]), AffineGrid (from the size
// input's values), CenterCropPad (the shape input's values on `axes`),
// MaxUnpool (output_shape, or (in - 1) * stride + kernel - pads), DeformConv
// (Conv's formula: rules_nn.cpp's output for the offsets' dims).
#include "model/shape_infer/rules.h"

namespace bnorm::shape_infer {

namespace {

void grid_sample(NodeCtx& c) {
  const auto *x = c.shape(0), *g = c.shape(1);
  if (!x || !g || g->size() < 3 || x->size() != g->size()) {
    c.set(0, c.elem(0), x ? std::optional(std::vector<InferredDim>(x->size())) : std::nullopt);
    return;
  }
  std::vector<InferredDim> d{(*x)[0], (*x)[1]};
  d.insert(d.end(), g->begin() + 1, g->end() - 1);
  c.set(0, c.elem(0), d);
}

void roi_align(NodeCtx& c) {
  const auto *x = c.shape(0), *r = c.shape(1);
  c.set(0, c.elem(0),
        std::vector<InferredDim>{r && !r->empty() ? (*r)[0] : InferredDim{}, x && x->size() > 1 ? (*x)[1] : InferredDim{},
                                 InferredDim::of(attr_int(c.node, "output_height", 1)),
                                 InferredDim::of(attr_int(c.node, "output_width", 1))});
}

void affine_grid(NodeCtx& c) {
  const InferredValue* size = c.input(1);
  if (!size || !size->values || size->values->size() < 3) {
    c.set(0, c.elem(0), std::nullopt);
    return;
  }
  const auto& v = *size->values;  // [N, C, spatial...]
  std::vector<InferredDim> d{v[0]};
  d.insert(d.end(), v.begin() + 2, v.end());
  d.push_back(InferredDim::of(static_cast<int64_t>(v.size()) - 2));
  c.set(0, c.elem(0), d);
}

void center_crop_pad(NodeCtx& c) {
  const auto* x = c.input_shape_or_type();
  if (!x) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  std::vector<InferredDim> d = *x;
  std::vector<int64_t> axes;
  if (auto a = attr_ints(c.node, "axes"); a && !a->empty()) axes = *a;
  else
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  const InferredValue* shape = c.input(1);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = norm_axis(axes[i], rank);
    if (a < 0) return;
    d[static_cast<size_t>(a)] = shape && shape->values && i < shape->values->size() ? (*shape->values)[i] : InferredDim{};
  }
  c.set(0, c.elem(0), d);
}

void max_unpool(NodeCtx& c) {
  const auto* x = c.shape(0);
  if (!x || x->size() < 3) {
    c.set(0, c.elem(0), std::nullopt);
    return;
  }
  if (c.has_input(2)) {
    const InferredValue* s = c.input(2);
    c.set(0, c.elem(0), s && s->values ? std::optional(*s->values) : std::optional(std::vector<InferredDim>(x->size())));
    return;
  }
  const size_t n = x->size() - 2;
  const auto k = attr_ints(c.node, "kernel_shape");
  const auto strides = attr_ints(c.node, "strides").value_or(std::vector<int64_t>(n, 1));
  const auto pads = attr_ints(c.node, "pads").value_or(std::vector<int64_t>(2 * n, 0));
  std::vector<InferredDim> d{(*x)[0], (*x)[1]};
  for (size_t i = 0; i < n; ++i) {
    const InferredDim& in = (*x)[2 + i];
    if (!k || k->size() != n || strides.size() != n || pads.size() != 2 * n || !in.known()) d.emplace_back();
    else d.push_back(InferredDim::of((in.value - 1) * strides[i] + (*k)[i] - pads[i] - pads[i + n]));
  }
  c.set(0, c.elem(0), d);
}

}  // namespace

void add_image_rules(RuleTable& t) {
  t["GridSample"] = grid_sample;
  t["RoiAlign"] = roi_align;
  t["AffineGrid"] = affine_grid;
  t["CenterCropPad"] = center_crop_pad;
  t["MaxUnpool"] = max_unpool;
}

}  // namespace bnorm::shape_infer
