// The normalization family beyond BatchNormalization: registration and the
// helpers its files share. The ops (every one computes its statistics in
// float64 and rounds each output element once to its storage type):
//
//   LayerNormalization 17, RMSNormalization 23     rows.cpp
//   GroupNormalization 18 (scale/bias per group), 21 (per channel),
//   MeanVarianceNormalization 1 (experimental), 9, 13
//                                                  group.cpp
//   LpNormalization 1, 22; LRN 1, 13               local.cpp
//   InstanceNormalization 22                       op_instance_norm (batch_instance.cpp):
//       version 22 only adds bfloat16, which it computes as float16 (in
//       float, one rounding), with the semantics of versions 1 and 6.
//
// stash_type: the schemas say it selects stage one's precision. bnorm's
// stage one is float64 whatever the stash type, which is at least the
// precision of every type it can name (read as "at least"); it keeps its
// other meaning, the type of LayerNormalization's Mean and InvStdDev.
#include "eval/ops/nn/norm/family.h"

#include "model/attrs.h"
#include "eval/run/numeric.h"
#include "eval/ops/nn/norm/ops.h"

namespace bnorm::eval {

void require_same_type(const Tensor& t, const char* what, const Tensor& x) {
  if (t.dtype != x.dtype) {
    fail(ErrorKind::input, "input '{}' has type {}, expected X's type {}", what, dtype_name(t.dtype),
         dtype_name(x.dtype));
  }
}

std::vector<double> expand_to(const std::vector<double>& v, const std::vector<int64_t>& from, const char* what,
                              const std::vector<int64_t>& dims) {
  if (from.size() > dims.size() || broadcast_shapes(from, dims) != dims) {
    fail(ErrorKind::input, "input '{}' of shape {} does not broadcast to {}", what, shape_str(from),
         shape_str(dims));
  }
  const std::vector<int64_t> strides = broadcast_strides(from, dims);
  const int64_t n = product(dims);
  std::vector<double> out(static_cast<size_t>(n));
  std::vector<int64_t> idx(dims.size(), 0);
  int64_t at = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = v[static_cast<size_t>(at)];
    for (size_t d = dims.size(); d-- > 0;) {
      at += strides[d];
      if (++idx[d] < dims[d]) break;
      at -= strides[d] * dims[d];
      idx[d] = 0;
    }
  }
  return out;
}

DType read_stash_type(const onnx::NodeProto& node, const std::vector<DType>& allowed) {
  const int64_t v = attr_int(node, "stash_type", 1);
  for (DType t : allowed) {
    if (static_cast<int64_t>(t) == v) return t;
  }
  fail(ErrorKind::input, "stash_type {} is not a type this op allows", v);
}

void check_vector_param(const Tensor& p, const char* what, int64_t count) {
  int non_one = 0;
  for (int64_t d : p.dims) non_one += d != 1;
  if (p.numel() == count && non_one <= 1) return;
  fail(ErrorKind::input, "input '{}' has shape {}, expected [{}]", what, shape_str(p.dims), count);
}

}  // namespace bnorm::eval
