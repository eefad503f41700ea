// Dropout (1, 6, 7, 10, 12, 13, 22): in inference, the identity, with the
// mask all true (bool from 10, the input's type before). Training with a
// non-zero ratio is random: unsupported (docs/semantics.md).
#include <algorithm>

#include "core/error.h"
#include "eval/ops/nn/dropout/ops.h"
#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_dropout(const OpContext& ctx) {
  const Tensor& x = ctx.required(0, "data");
  if (ctx.version >= 12) {
    const Tensor* ratio = ctx.input(1);
    const Tensor* training = ctx.input(2);
    const bool train = training && training->numel() == 1 && training->to_f64()[0] != 0;
    const double r = ratio && ratio->numel() == 1 ? ratio->to_f64()[0] : 0.5;
    if (train && r != 0) fail(ErrorKind::unsupported, "Dropout in training mode (random) is not supported");
  }
  Tensors out{x};
  if (ctx.wants(1)) {
    if (ctx.version >= 10) {
      out.push_back(Tensor(DType::boolean, x.dims));
      std::fill(out[1].bytes.begin(), out[1].bytes.end(), uint8_t{1});
    } else {
      out.push_back(Tensor::from_f64(x.dtype, x.dims, std::vector<double>(static_cast<size_t>(x.numel()), 1.0)));
    }
  }
  return out;
}

}  // namespace bnorm::eval
