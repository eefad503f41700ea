// Rules of the signal ops: DFT (axis attribute at 17, an input from 20;
// dft_length; onesided keeps floor(n / 2) + 1 bins; the last dim becomes 2:
// real and imaginary; inverse and onesided: a real signal, last dim 1), STFT ([batch, frames, bins, 2], frames =
// (signal - frame_length) / frame_step + 1), Col2Im ([N, C, image_shape...]
// from the image and block shapes' values).
#include "model/shape_infer/rules.h"

namespace bnorm::shape_infer {

namespace {

std::optional<int64_t> scalar(const NodeCtx& c, size_t i) {
  const auto v = c.ints(i);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

void dft(NodeCtx& c) {
  const auto* s = c.input_shape_or_type();
  if (!s) return;
  std::vector<InferredDim> d = *s;
  if (d.size() < 2) return;
  d.back() = InferredDim::of(2);
  int64_t axis = attr_int(c.node, "axis", 1);
  if (c.version >= 20) {
    axis = -2;
    if (c.has_input(2)) {
      const auto a = scalar(c, 2);
      if (!a) return;
      axis = *a;
    }
  }
  // The last dim holds the complex parts: axis counts among the others.
  const int64_t a = norm_axis(axis, static_cast<int64_t>(d.size()));
  if (a < 0 || a == static_cast<int64_t>(d.size()) - 1) return;
  InferredDim& n = d[static_cast<size_t>(a)];
  const bool onesided = attr_int(c.node, "onesided", 0) != 0, inverse = attr_int(c.node, "inverse", 0) != 0;
  InferredDim len;  // dft_length
  if (c.has_input(1)) {
    if (const auto l = scalar(c, 1)) len = InferredDim::of(*l);
    n = InferredDim{};
  }
  if (onesided && inverse) {
    // A one-sided spectrum back to its real signal: dft_length samples (else 2 * (bins - 1)).
    d.back() = InferredDim::of(1);
    n = len.known() ? len : n.known() ? InferredDim::of(2 * (n.value - 1)) : InferredDim{};
  } else {
    if (len.known()) n = len;
    if (onesided) n = n.known() ? InferredDim::of(n.value / 2 + 1) : InferredDim{};
  }
  c.set(0, c.elem(0), d);
}

void stft(NodeCtx& c) {
  const auto* s = c.input_shape_or_type();
  if (!s) return;
  if (s->size() != 3) return;
  std::optional<int64_t> frame = c.has_input(3) ? scalar(c, 3) : std::nullopt;
  if (!frame && c.has_input(2))
    if (const auto* w = c.shape(2); w && w->size() == 1 && (*w)[0].known()) frame = (*w)[0].value;
  const auto step = scalar(c, 1);
  InferredDim frames, bins;
  if (frame && step && *step > 0 && (*s)[1].known() && (*s)[1].value >= *frame)
    frames = InferredDim::of(((*s)[1].value - *frame) / *step + 1);
  if (frame) bins = InferredDim::of(attr_int(c.node, "onesided", 1) != 0 ? *frame / 2 + 1 : *frame);
  c.set(0, c.elem(0), std::vector<InferredDim>{(*s)[0], frames, bins, InferredDim::of(2)});
}

void col2im(NodeCtx& c) {
  const auto* s = c.input_shape_or_type();
  if (!s) return;
  const auto image = c.ints(1), block = c.ints(2);
  if (s->size() != 3 || !image || !block || image->size() != block->size()) return;
  int64_t per = 1;
  for (int64_t b : *block) per *= b;
  InferredDim channels = (*s)[1].known() && per > 0 && (*s)[1].value % per == 0 ? InferredDim::of((*s)[1].value / per) : InferredDim{};
  std::vector<InferredDim> d{(*s)[0], channels};
  for (int64_t x : *image) d.push_back(InferredDim::of(x));
  c.set(0, c.elem(0), d);
}

}  // namespace

void add_signal_rules(RuleTable& t) {
  t["DFT"] = dft;
  t["STFT"] = stft;
  t["Col2Im"] = col2im;
}

}  // namespace bnorm::shape_infer
