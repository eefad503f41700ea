// The contract between the executor and the op implementations.
//
// An op is a plain function from an OpContext to its outputs. Each family
// file registers its functions with the schema versions they implement
// (add_<family>_ops in ops.h): a row {op, first, last, fn} covers every
// schema version of op from `first` to `last` (both since-versions from
// model/op_versions.h). A node runs only when its resolved version falls in
// a row; any other version is refused, never run with a neighbour's meaning.
// The function reads attributes at ctx.version, reads its inputs by position
// (nullptr for an absent optional input) and returns one tensor per output
// position of the node (outputs the node does not name may be left empty).
// It throws bnorm::Error for anything wrong; the executor adds the node.
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

// One implementation: op_type at schema versions first..last (since-versions).
struct OpImpl {
  std::string op;
  int first = 0;
  int last = 0;
  OpFn fn = nullptr;
};

// What the family files register into (see add_*_ops in ops.h).
class OpRegistry {
 public:
  // Registers fn for op at every schema version from `first` to `last`.
  void add(const char* op, int first, int last, OpFn fn);
  std::vector<OpImpl>& rows() { return rows_; }

 private:
  std::vector<OpImpl> rows_;
};

// Every registered implementation, sorted by op then first version. Built
// once; a row whose bounds are not versions of its op, or that overlaps
// another, is a programming error caught by op_table_test.cpp.
const std::vector<OpImpl>& op_impls();

// The function for `op_type` (default domain) at schema `version`, or nullptr.
OpFn find_op(const std::string& op_type, int version);

// True when some version of `op_type` is implemented.
bool implements_op(const std::string& op_type);

// Why bnorm eval refuses `op_type` by design (random ops, string ops, ...),
// or nullptr.
const char* refusal_reason(const std::string& op_type);

// The implemented versions of `op_type`, for messages:
// "implemented: 12; the op's versions: 12, 28".
std::string implemented_versions(const std::string& op_type);

}  // namespace bnorm::eval
