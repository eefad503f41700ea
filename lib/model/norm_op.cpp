#include "model/norm_op.h"

#include <algorithm>

#include "core/error.h"
#include "model/node_label.h"
#include "model/attrs.h"

namespace bnorm {

namespace {



int64_t flag_attr(const onnx::AttributeProto& a) {
  const int64_t v = attr_int(a);
  if (v != 0 && v != 1) throw Error(ErrorKind::input, fmt::format("attribute '{}' must be 0 or 1, not {}", a.name(), v));
  return v;
}

void read_batch_norm_mode(NormNode& n) {
  if (n.version < 7) {
    n.training = !(n.is_test && *n.is_test == 1);
    n.mode_reason = n.is_test ? fmt::format("is_test = {}", *n.is_test) : "is_test absent (default 0: training)";
  } else if (n.version < 14) {
    n.training = n.outputs > 1;
    if (n.outputs == 1) n.mode_reason = "one output";
    else n.mode_reason = fmt::format("{} outputs (the training form)", n.outputs);
    if (n.outputs > 1 && n.outputs < 5) {
      n.warnings.push_back(fmt::format("{} outputs is not a valid count at version {} (1 or 5); read as training",
                                       n.outputs, n.version));
    }
  } else {
    n.training = n.training_mode.value_or(0) == 1;
    n.mode_reason = n.training_mode ? fmt::format("training_mode = {}", *n.training_mode)
                                    : "training_mode absent (default 0)";
    if (!n.training && n.outputs > 1) {
      n.warnings.push_back(fmt::format("{} outputs with training_mode = 0: extra outputs are invalid", n.outputs));
    }
  }
}

}  // namespace

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

bool is_norm_node(const onnx::NodeProto& node) {
  return is_default_domain(node.domain()) &&
         (node.op_type() == "BatchNormalization" || node.op_type() == "InstanceNormalization");
}

const std::vector<int>& norm_versions(NormKind kind) {
  static const std::vector<int> bn{1, 6, 7, 9, 14, 15};
  static const std::vector<int> in{1, 6};
  return kind == NormKind::batch_norm ? bn : in;
}

int norm_schema_version(const std::string& op, int64_t opset) {
  const std::vector<int>* versions = nullptr;
  if (op == "BatchNormalization") versions = &norm_versions(NormKind::batch_norm);
  if (op == "InstanceNormalization") versions = &norm_versions(NormKind::instance_norm);
  if (!versions) return 0;
  int found = 0;
  for (int v : *versions) {
    if (v <= opset) found = v;
  }
  return found;
}

std::string NormNode::op_name() const {
  return kind == NormKind::batch_norm ? "BatchNormalization" : "InstanceNormalization";
}

std::string NormNode::label() const { return fmt::format("{}-{}", op_name(), version); }

NormNode read_norm_node(const onnx::NodeProto& node, int64_t opset) {
  NormNode n;
  n.node = &node;
  n.kind = node.op_type() == "InstanceNormalization" ? NormKind::instance_norm : NormKind::batch_norm;
  n.version = norm_schema_version(node.op_type(), std::max<int64_t>(opset, 1));
  try {
    const bool bn = n.kind == NormKind::batch_norm;
    for (const auto& a : node.attribute()) {
      const std::string& name = a.name();
      if (name == "epsilon") {
        n.epsilon = attr_float(a);
        n.epsilon_given = true;
      } else if (bn && name == "momentum") {
        n.momentum = attr_float(a);
        n.momentum_given = true;
      } else if (bn && name == "is_test" && n.version < 7) {
        n.is_test = flag_attr(a);
      } else if (bn && name == "spatial" && n.version < 9) {
        n.spatial_attr = flag_attr(a);
        n.spatial = *n.spatial_attr == 1;
      } else if (bn && name == "training_mode" && n.version >= 14) {
        n.training_mode = flag_attr(a);
      } else if (name == "consumed_inputs" && n.version == 1) {
        n.consumed_inputs = std::vector<int64_t>(a.ints().begin(), a.ints().end());
      } else {
        n.warnings.push_back(fmt::format("attribute '{}' does not exist in {}-{}; ignored", name,
                                         node.op_type(), n.version));
      }
    }
    n.outputs = node.output_size();
    while (n.outputs > 0 && node.output(n.outputs - 1).empty()) --n.outputs;
    if (bn) {
      read_batch_norm_mode(n);
    } else {
      n.mode_reason = "statistics per instance and channel; no training form";
    }
  } catch (Error& e) {
    e.at_node(node_label(node), node.op_type(), n.version);
    throw;
  }
  return n;
}

}  // namespace bnorm
