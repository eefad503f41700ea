// Shared by the normalization family's files (eval/ops/nn/norm/): the
// helpers they
// share (internal to lib/eval).
#pragma once

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "eval/run/op.h"
#include "kernels/half.h"
#include "model/tensor.h"

namespace bnorm::eval {


// Calls f(float{}), f(double{}), f(kernels::f16{}) or f(kernels::bf16{}) by
// the storage type of `t`; bfloat16 only when `bf16_allowed` (the op's
// schema at this version has it). Any other type is Error(input): the
// schemas allow these four at most.
template <typename F>
auto with_storage(DType t, const char* what, bool bf16_allowed, F&& f) {
  switch (t) {
    case DType::float32: return f(float{});
    case DType::float64: return f(double{});
    case DType::float16: return f(kernels::f16{});
    case DType::bfloat16:
      if (bf16_allowed) return f(kernels::bf16{});
      break;
    default: break;
  }
  fail(ErrorKind::input, "{} has type {}, which this version of the op does not allow", what, dtype_name(t));
}

// Checks that the input `what` has X's type (the schema's single T).
void require_same_type(const Tensor& t, const char* what, const Tensor& x);

// Values `v` of shape `from` broadcast to `dims` (`from` must broadcast to
// it unidirectionally, else Error(input) naming `what`), row-major.
std::vector<double> expand_to(const std::vector<double>& v, const std::vector<int64_t>& from, const char* what,
                              const std::vector<int64_t>& dims);

// The stash_type attribute (default 1), checked to name a floating type of
// bnorm: float (1), float16 (10), double (11) or bfloat16 (16); `allowed`
// lists the values the op's schema allows.
DType read_stash_type(const onnx::NodeProto& node, const std::vector<DType>& allowed);

// A per-channel parameter of `count` elements: shape [count], or any shape
// with that element count and at most one dim other than 1.
void check_vector_param(const Tensor& p, const char* what, int64_t count);

}  // namespace bnorm::eval
