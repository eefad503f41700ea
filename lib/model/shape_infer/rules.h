// The contract between the shape-inference engine (engine.cpp) and its
// rules (rules_*.cpp): a rule reads one node's inputs (InferredValue, or
// nullptr for an absent or unknown input) and its attributes, and fills
// what it can of `out`, one entry per node output, left unknown otherwise.
// A rule may throw (an attribute of the wrong type, ...): the engine then
// leaves every output unknown. Helpers shared by the families live here.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/attrs.h"
#include "model/shape_infer/shape_infer.h"

namespace bnorm::shape_infer {

struct NodeCtx {
  const onnx::NodeProto& node;
  int version = 0;  // schema version in force (op table)
  std::vector<const InferredValue*> in;
  std::vector<InferredValue> out;
  // The output values of a subgraph attribute, inferred with this node's
  // scope as outer scope (empty when there is no such attribute).
  std::function<std::vector<InferredValue>(const std::string& attr)> subgraph_outputs;

  const InferredValue* input(size_t i) const { return i < in.size() ? in[i] : nullptr; }
  bool has_input(size_t i) const { return i < static_cast<size_t>(node.input_size()) && !node.input(static_cast<int>(i)).empty(); }
  // The input's shape when its rank is known.
  const std::vector<InferredDim>* shape(size_t i) const;
  // Input 0's shape; when its rank is unknown, output 0 gets input 0's
  // type alone and the result is nullptr (the rule has nothing more to say).
  const std::vector<InferredDim>* input_shape_or_type();
  // The input's elements as int64 when all are known sizes.
  std::optional<std::vector<int64_t>> ints(size_t i) const;
  // The input's elements as numbers: integers or floating constants.
  std::optional<std::vector<double>> reals(size_t i) const;
  int32_t elem(size_t i) const { return input(i) ? input(i)->elem : 0; }
  void set(size_t o, int32_t elem, std::optional<std::vector<InferredDim>> shape);
};

using Rule = std::function<void(NodeCtx&)>;
using RuleTable = std::unordered_map<std::string, Rule>;

// Each family adds its ops (rules_<family>.cpp).
void add_elementwise_rules(RuleTable& t);
void add_tensor_rules(RuleTable& t);
void add_shape_rules(RuleTable& t);
void add_nn_rules(RuleTable& t);
void add_reduce_rules(RuleTable& t);
void add_control_rules(RuleTable& t);
void add_rnn_rules(RuleTable& t);
void add_image_rules(RuleTable& t);
void add_math_rules(RuleTable& t);
void add_signal_rules(RuleTable& t);
const RuleTable& rules();
// The rules of the ai.onnx.preview domain (version 1, its only one).
const RuleTable& preview_rules();

// The largest rank a rule makes from a value (a shape input's length): a
// larger one is a strange model, left unknown.
inline constexpr int64_t kMaxRank = 1024;

// Dim helpers.
InferredDim broadcast_dim(const InferredDim& a, const InferredDim& b);
// Multidirectional (numpy) broadcasting; nullopt when a rank is unknown.
std::optional<std::vector<InferredDim>> broadcast(const std::vector<const std::vector<InferredDim>*>& shapes);
// `axis` in [-rank, rank) made non-negative; -1 when out of range.
int64_t norm_axis(int64_t axis, int64_t rank);
// Product of dims [from, to); -1 when one is not known.
int64_t known_product(const std::vector<InferredDim>& d, size_t from, size_t to);
std::vector<InferredDim> known_dims(const std::vector<int64_t>& v);
// Integer-typed (int32, int64, bool) and so eligible for data propagation.
bool is_index_type(int32_t elem);
// A small initializer or Constant tensor's values: integers in `values`,
// floating ones in `reals`.
void read_constant(const onnx::TensorProto& t, InferredValue& v);

}  // namespace bnorm::shape_infer
