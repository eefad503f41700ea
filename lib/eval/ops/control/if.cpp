// If (1, 11, 13, 16, 19, 21, 23, 24, 25: the versions add types of the
// branch outputs): runs then_branch or else_branch on a one-value `cond`;
// the branches see the outer graph's values.
#include "core/error.h"
#include "eval/ops/control/ops.h"
#include "model/attrs.h"
#include "eval/run/op.h"

namespace bnorm::eval {

Tensors op_if(const OpContext& ctx) {
  const Tensor& cond = ctx.required(0, "cond");
  if (cond.numel() != 1) fail(ErrorKind::input, "input 'cond' must hold one value, has shape {}", shape_str(cond.dims));
  const bool take = cond.to_f64()[0] != 0;
  const auto& branch = attr_graph(*ctx.node, take ? "then_branch" : "else_branch");
  Tensors out = ctx.run_subgraph(branch);
  if (static_cast<int>(out.size()) < ctx.output_count()) {
    fail(ErrorKind::input, "the {} branch has {} outputs, the node {}", take ? "then" : "else", out.size(), ctx.output_count());
  }
  return out;
}

}  // namespace bnorm::eval
