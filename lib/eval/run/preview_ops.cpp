#include "eval/run/preview_ops.h"

#include "eval/ops/attention/ops.h"

namespace bnorm::eval {

bool is_preview_domain(const std::string& domain) { return domain == kPreviewDomain; }

OpFn find_preview_op(const std::string& op_type) {
  if (op_type == "FlexAttention") return op_flex_attention;
  return nullptr;
}

}  // namespace bnorm::eval
