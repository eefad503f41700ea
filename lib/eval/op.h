// The contract between the executor and the op implementations.
//
// An op is a plain function from an OpContext to its outputs, found by
// op_type in one table (op_table.cpp). It reads attributes at ctx.version
// (the schema version in force), reads its inputs by position (nullptr for
// an absent optional input) and returns one tensor per output position of
// the node (outputs the node does not name may be left empty). It throws
// bnorm::Error for anything wrong; the executor adds the node to it.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "model/tensor.h"

namespace bnorm::kernels {
struct Activation;
}

namespace bnorm::eval {

struct OpContext {
  const onnx::NodeProto* node = nullptr;
  int version = 0;    // schema version in force for this node
  int64_t opset = 0;  // the model's default-domain opset
  std::vector<const Tensor*> inputs;  // by position; nullptr: absent
  std::filesystem::path model_dir;    // for external data in Constant/If
  // An activation to apply to output 0 in the same pass (norm ops only).
  const kernels::Activation* fused = nullptr;
  // Runs a subgraph (If branches) with this node's scope as outer scope.
  std::function<std::vector<Tensor>(const onnx::GraphProto&)> run_subgraph;

  size_t input_count() const { return inputs.size(); }
  const Tensor* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // Input `i` or Error(input) "missing input 'what'".
  const Tensor& required(size_t i, const char* what) const;
  // Whether output `i` is named (so someone wants it).
  bool wants(int i) const;
  int output_count() const { return node->output_size(); }
};

using Tensors = std::vector<Tensor>;
using OpFn = Tensors (*)(const OpContext&);

// The function for `op_type` in the default domain, or nullptr.
OpFn find_op(const std::string& op_type);

}  // namespace bnorm::eval
