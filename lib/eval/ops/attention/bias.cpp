// AttentionBias: attn_mask, is_causal, nonpad_kv_seqlen and the window of
// Attention-25 as one additive bias per query row (bias.h has the contract).
#include "eval/ops/attention/bias.h"

#include <algorithm>
#include <limits>

#include "model/attrs.h"
#include "eval/run/numeric.h"

namespace bnorm::eval {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

int64_t window_attr(const onnx::NodeProto& n, const char* name) {
  const int64_t w = attr_int(n, name, -1);
  if (w < -1) fail(ErrorKind::input, "{} is {}; it must be -1 (unbounded) or at least 0", name, w);
  return w;
}

}  // namespace

AttentionBias::AttentionBias(const OpContext& ctx, const AttentionDims& d)
    : d_(d), offset_(static_cast<size_t>(d.batch), d.past), valid_(static_cast<size_t>(d.batch), d.total) {
  const onnx::NodeProto& n = *ctx.node;
  const int64_t causal = attr_int(n, "is_causal", 0);
  if (causal != 0 && causal != 1) fail(ErrorKind::input, "is_causal is {}, it must be 0 or 1", causal);
  causal_ = causal == 1;
  if (ctx.version >= 25) {
    left_ = window_attr(n, "left_window_size");
    right_ = window_attr(n, "right_window_size");
  }
  if (ctx.version >= 24 && ctx.input(6)) {
    // The spec says the external cache (nonpad_kv_seqlen) should not be used
    // with past_key: the offset would have two definitions, so it is refused.
    if (ctx.input(4)) {
      fail(ErrorKind::unsupported, "nonpad_kv_seqlen with past_key and past_value (the spec says not to use them "
                                   "together: the causal offset would have two meanings)");
    }
    read_nonpad(*ctx.input(6));
  }
  mask_len_ = d.total;
  if (ctx.input(3)) read_mask(*ctx.input(3), ctx.version);
}

void AttentionBias::read_nonpad(const Tensor& lengths) {
  if (lengths.dtype != DType::int64 || lengths.dims != std::vector<int64_t>{d_.batch}) {
    fail(ErrorKind::input, "nonpad_kv_seqlen must be int64 of shape ({}), not {} {}", d_.batch,
         dtype_name(lengths.dtype), shape_str(lengths.dims));
  }
  const std::vector<int64_t> v = load_values<int64_t>(lengths);
  for (int64_t b = 0; b < d_.batch; ++b) {
    if (v[b] < 0 || v[b] > d_.total) {
      fail(ErrorKind::input, "nonpad_kv_seqlen[{}] is {}; it must be 0 to the {} keys", b, v[b], d_.total);
    }
    valid_[b] = v[b];
    has_nonpad_ = true;
    offset_[b] = v[b] - d_.q_seq;
  }
}

void AttentionBias::read_mask(const Tensor& mask, int version) {
  std::vector<int64_t> full{d_.batch, d_.q_heads, d_.q_seq, d_.total};
  // From 24 on, a last dimension shorter than T is padded with -inf (one
  // still broadcasts); it must cover every valid key of nonpad_kv_seqlen.
  const int64_t last = mask.dims.empty() ? 1 : mask.dims.back();
  if (version >= 24 && last != 1 && last < d_.total) {
    const int64_t needed = has_nonpad_ ? *std::max_element(valid_.begin(), valid_.end()) : 0;
    if (last < needed) {
      fail(ErrorKind::input, "attn_mask covers {} keys, fewer than nonpad_kv_seqlen's {}", last, needed);
    }
    mask_len_ = last;
    full[3] = last;
  }
  if (mask.dims.size() > 4 || broadcast_shapes(mask.dims, full) != full) {
    fail(ErrorKind::input, "attn_mask {} does not broadcast to {}", shape_str(mask.dims), shape_str(full));
  }
  values_ = load_values<double>(mask);
  if (mask.dtype == DType::boolean) {
    for (double& x : values_) x = x != 0 ? 0.0 : kNegInf;
  }
  strides_ = broadcast_strides(mask.dims, full);
  has_mask_ = true;
}

bool AttentionBias::row(int64_t b, int64_t h, int64_t i, double* out) const {
  const int64_t p = offset_[b] + i;
  bool all_masked = true;
  for (int64_t j = 0; j < d_.total; ++j) {
    double x = 0;
    if (has_mask_) {
      x = j < mask_len_ ? values_[b * strides_[0] + h * strides_[1] + i * strides_[2] + j * strides_[3]] : kNegInf;
    }
    const bool hidden = j >= valid_[b] || (causal_ && j > p) || (left_ >= 0 && j < p - left_) ||
                        (right_ >= 0 && j > p + right_);
    if (hidden) x += kNegInf;
    out[j] = x;
    all_masked = all_masked && x == kNegInf;
  }
  return all_masked;
}

}  // namespace bnorm::eval
