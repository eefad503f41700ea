// The element-type check of a node a step moves across changes that also
// added types (e.g. Less-9 added the integer types, Gather-13 bfloat16):
// every input and output whose type is known must exist in the schema of
// the target version (transforms/upgrade/schema.h). Error(unsupported) naming the node,
// the value and the type otherwise, before any rewrite.
#include "transforms/upgrade/steps/onnx_gaps.h"
#include "transforms/upgrade/schema.h"

namespace bnorm::steps {

void refuse_missing_types(const NormSite& s, int version) {
  const OpSchemaInfo* schema = schema_info(s.node.op_type(), version);
  if (!schema) return;
  const std::string p = type_problem(s.node, *schema, [&](const std::string& v) -> std::string {
    const auto t = s.type_of(v);
    return t ? tensor_type_name(static_cast<int32_t>(*t)) : "";
  });
  if (!p.empty()) refuse(s, p);
}

}  // namespace bnorm::steps
