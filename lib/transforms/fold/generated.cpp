#include "transforms/fold/generated.h"

#include <fmt/format.h>

#include "core/error.h"
#include "model/node_label.h"
#include "model/tensor.h"
#include "model/tensor_proto.h"

namespace bnorm {

std::string generated_by(const GraphIndex& index, const GraphIndex::Constant& c) {
  const onnx::NodeProto* node = c.kind == GraphIndex::ConstKind::computed ? c.node : nullptr;
  // Identity chains are finite: GraphIndex::constant resolved this one.
  while (node && node->op_type() == "Identity" && node->input_size() == 1) {
    const auto inner = index.constant(index.scope_of(node), node->input(0));
    node = inner && inner->kind == GraphIndex::ConstKind::computed ? inner->node : nullptr;
  }
  if (!node || node->op_type() != "ConstantOfShape") return {};
  return fmt::format("ConstantOfShape '{}'", node->name().empty() ? node_label(*node) : node->name());
}

std::string first_generated(const GraphIndex& index, const std::vector<const GraphIndex::Constant*>& constants) {
  for (const auto* c : constants) {
    if (!c) continue;
    std::string g = generated_by(index, *c);
    if (!g.empty()) return g;
  }
  return {};
}

uint64_t stored_model_bytes(const Model& model) {
  uint64_t bytes = model.proto.ByteSizeLong();
  // for_each_tensor takes a mutable model; nothing is changed here.
  for_each_tensor(const_cast<onnx::ModelProto&>(model.proto), [&](onnx::TensorProto& t) {
    if (!is_external(t)) return;
    try {
      const std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
      bytes += static_cast<uint64_t>(checked_numel(dims)) * dtype_size(static_cast<DType>(t.data_type()));
    } catch (const Error&) {
      // An estimate: a tensor whose size cannot be told counts nothing.
    }
  });
  return bytes;
}

std::string size_text(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  const char* units[] = {"KB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  return fmt::format("{:.1f} {}", v, units[u]);
}

}  // namespace bnorm
